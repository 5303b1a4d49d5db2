"""tools/real_cluster without Java or Kafka: the proxy's reading of Kafka's framing and its
hold rules, and the configuration the cluster script writes."""

from __future__ import annotations

import struct
from pathlib import Path

import pytest

from tools.real_cluster import cluster, kafka_proxy
from tools.real_cluster.kafka_proxy import FrameBuffer, FramingError, HoldRule, RequestHeader


def request(api_key: int, version: int, correlation: int, client: str | None) -> bytes:
    """A request as Kafka's ``RequestHeader`` v1 writes it, with a body of four bytes."""
    if client is None:
        client_id = struct.pack(">h", -1)
    else:
        raw = client.encode()
        client_id = struct.pack(">h", len(raw)) + raw
    return struct.pack(">hhi", api_key, version, correlation) + client_id + b"body"


def test_a_request_header_gives_api_key_version_correlation_and_client() -> None:
    frame = request(1, 17, 84, "raft-client-0")
    assert kafka_proxy.parse_request_header(frame) == RequestHeader(1, 17, 84, "raft-client-0")
    assert kafka_proxy.parse_request_header(request(56, 3, 2, None)).client_id is None


def test_controlled_shutdown_v0_has_no_client_id() -> None:
    # header v0: the bytes after the correlation id are the body, not a string length
    frame = struct.pack(">hhi", 7, 0, 5) + struct.pack(">i", 1)
    assert kafka_proxy.parse_request_header(frame) == RequestHeader(7, 0, 5, None)


def test_a_truncated_header_is_a_framing_error() -> None:
    with pytest.raises(FramingError, match="shorter than a header"):
        kafka_proxy.parse_request_header(b"\x00\x01\x00")
    with pytest.raises(FramingError, match="client id of 40 bytes"):
        kafka_proxy.parse_request_header(struct.pack(">hhih", 1, 17, 1, 40) + b"abc")


def test_frames_are_cut_at_their_size_whatever_the_chunks() -> None:
    frames = [request(1, 17, n, "broker-1-fetcher-0") for n in range(3)]
    stream = b"".join(kafka_proxy.frame_bytes(f) for f in frames)
    for cut in (1, 3, 7, len(stream)):
        buffer = FrameBuffer()
        seen: list[bytes] = []
        for start in range(0, len(stream), cut):
            seen += buffer.feed(stream[start : start + cut])
        assert seen == frames
        assert buffer.pending == 0


def test_a_size_kafka_never_sends_is_a_framing_error() -> None:
    with pytest.raises(FramingError, match="frame size -1"):
        FrameBuffer().feed(struct.pack(">i", -1))


def test_a_response_gives_its_correlation_id() -> None:
    assert kafka_proxy.parse_response_correlation(struct.pack(">i", 90) + b"\x00") == 90


def test_rules_hold_by_api_key_and_client_prefix() -> None:
    rules = kafka_proxy.parse_rules("# broker 0\nhold 1 raft-client-0\n\nhold 56 *  # any client\n")
    assert rules == [HoldRule(1, "raft-client-0"), HoldRule(56, "")]
    assert rules[0].matches(RequestHeader(1, 17, 1, "raft-client-0"))
    assert not rules[0].matches(RequestHeader(1, 17, 1, "raft-client-1"))
    assert not rules[0].matches(RequestHeader(63, 1, 1, "raft-client-0"))
    assert rules[1].matches(RequestHeader(56, 3, 1, None))


def test_a_bad_rule_names_its_line() -> None:
    with pytest.raises(ValueError, match="rules line 2"):
        kafka_proxy.parse_rules("hold 1 x\ndrop 1 x\n")


def test_a_route_is_listen_port_to_host_and_port() -> None:
    assert kafka_proxy.parse_route("29193=localhost:29093") == (29193, ("localhost", 29093))
    with pytest.raises(ValueError, match="LISTEN_PORT=HOST:PORT"):
        kafka_proxy.parse_route("29193:localhost")


def parse(text: str) -> dict[str, str]:
    return dict(line.split("=", 1) for line in text.splitlines())


def test_the_controller_and_brokers_are_configured_for_kraft(tmp_path: Path) -> None:
    layout = cluster.Layout(lag_ms=3000, session_ms=9000)
    controller = parse(cluster.properties(layout, cluster.CONTROLLER, tmp_path))
    assert controller["process.roles"] == "controller"
    assert controller["controller.quorum.voters"] == "3@localhost:29093"
    assert controller["broker.session.timeout.ms"] == "9000"
    ports = set()
    for broker in cluster.BROKERS:
        props = parse(cluster.properties(layout, broker, tmp_path))
        assert props["process.roles"] == "broker"
        assert props["node.id"] == str(broker)
        assert props["controller.quorum.voters"] == "3@localhost:29093"
        assert props["replica.lag.time.max.ms"] == "3000"
        assert props["unclean.leader.election.enable"] == "false"
        assert props["log.dirs"] == str(tmp_path / "data" / str(broker))
        ports.add(props["listeners"])
    assert len(ports) == 3


def test_with_the_proxy_every_node_reaches_the_controller_through_it(tmp_path: Path) -> None:
    layout = cluster.Layout(proxy=True)
    controller = parse(cluster.properties(layout, cluster.CONTROLLER, tmp_path))
    assert controller["listeners"] == "CONTROLLER://localhost:29093"
    assert controller["advertised.listeners"] == "CONTROLLER://localhost:29193"
    brokers = [parse(cluster.properties(layout, b, tmp_path)) for b in cluster.BROKERS]
    assert {b["controller.quorum.voters"] for b in brokers} == {"3@localhost:29193"}
    assert brokers[0]["advertised.listeners"] == "PLAINTEXT://localhost:29100"
    assert brokers[0]["listeners"] == "PLAINTEXT://localhost:29000"
    assert brokers[1]["advertised.listeners"] == "PLAINTEXT://localhost:29001"


def test_configure_writes_every_node_and_its_log4j2(tmp_path: Path) -> None:
    home = tmp_path / "kafka"
    work = tmp_path / "work"
    cluster.Cluster(home, work).configure(cluster.Layout(lag_ms=1234))
    for node in cluster.NODES:
        assert (work / "config" / f"node-{node}.properties").is_file()
        log4j2 = (work / "config" / f"log4j2-{node}.yaml").read_text()
        assert f"{work / 'logs' / str(node)}/state-change.log" in log4j2
        assert "name: kafka.cluster.Partition\n        level: DEBUG" in log4j2
    assert cluster.Cluster(home, work).layout() == cluster.Layout(lag_ms=1234)


def test_the_cli_refuses_a_directory_that_is_not_kafka(tmp_path: Path,
                                                       capsys: pytest.CaptureFixture[str]) -> None:
    code = cluster.main(["--kafka-home", str(tmp_path), "--work", str(tmp_path / "w"), "status"])
    assert code == 2
    assert "not a Kafka distribution" in capsys.readouterr().err


def test_isr_of_reads_kafka_topics_describe() -> None:
    out = ("Topic: t\tTopicId: x\tPartitionCount: 1\n"
           "\tTopic: t\tPartition: 0\tLeader: 1\tReplicas: 0,1,2\tIsr: 2,1\tElr: \n")
    assert cluster.isr_of(out) == "2,1"
