"""Kafka broker logs of one partition: Kafka 0.10/0.11's line formats (and the newer ones) read as a
partial trace of the ``kafka`` model; a consistent log is accepted, an inconsistent one
rejected at its line, a log naming several partitions needs --partition."""

from __future__ import annotations

from pathlib import Path

from click.testing import CliRunner

from isrlab.cli import cli
from isrlab.spec.kafka_log import parse_line, read_broker_log

FIXTURE = Path(__file__).parent.parent / "fixtures" / "oracle" / "broker-orders-0.log"


def validate_log(path: Path, *extra: str) -> tuple[int, str]:
    outcome = CliRunner().invoke(
        cli, ["validate", "--model", "kafka", "--engine", "model", "--partition", "orders-0",
              *extra, str(path)]
    )
    return outcome.exit_code, outcome.output


def test_the_seeds_shrink_format_names_broker_partition_and_both_isrs() -> None:
    event = parse_line(3, "[2026-11-20 09:00:12,000] INFO Partition [orders,0] on broker 1: "
                          "Shrinking ISR for partition [orders,0] from 1,2,3 to 1,3 "
                          "(kafka.cluster.Partition)")
    assert event is not None
    assert (event.kind, event.broker, event.partition) == ("shrink", 1, "orders-0")
    assert event.fields == {"old": (1, 2, 3), "new": (1, 3)}


def test_the_newer_expand_format_is_read_too() -> None:
    event = parse_line(1, "[2023-02-01 10:00:00,000] INFO [Partition orders-0 broker=2] "
                          "Expanding ISR from 2 to 2,1. Adding Replicas: 1 "
                          "(kafka.cluster.Partition)")
    assert event is not None
    assert (event.kind, event.broker, event.partition) == ("expand", 2, "orders-0")
    assert event.fields == {"old": (2,), "new": (2, 1)}


def test_a_received_leader_and_isr_request_gives_leader_epoch_and_isr() -> None:
    event = parse_line(9, "TRACE Broker 2 received LeaderAndIsr request PartitionState("
                          "controllerEpoch=1, leader=2, leaderEpoch=1, isr=[2], zkVersion=1, "
                          "replicas=[1, 2]) correlation id 7 from controller 1 epoch 1 for "
                          "partition [orders,0] (state.change.logger)")
    assert event is not None
    assert (event.kind, event.broker, event.partition) == ("leader_and_isr", 2, "orders-0")
    assert event.fields["leader"] == 2 and event.fields["leaderEpoch"] == 1
    assert event.fields["isr"] == (2,) and event.fields["replicas"] == (1, 2)


def test_unrelated_lines_are_skipped() -> None:
    assert parse_line(1, "[2026-11-20 09:00:03,400] INFO [ReplicaFetcherThread-0-1]: "
                         "Starting (kafka.server.ReplicaFetcherThread)") is None


def test_the_fixture_becomes_six_steps_with_brokers_renamed_from_the_first_leader() -> None:
    steps = read_broker_log(FIXTURE.read_text(), partition="orders-0")
    assert [s.get("action") or s.get("label", "")[:9] for s in steps] == [
        "Init", "ShrinkIsr", "Fetch*(1)", "Deliver(L", "Restart", "Deliver(L", "Fetch*(0)",
    ]
    assert steps[0]["zk"] == {"leader": 0, "leader_epoch": 0, "isr": [0, 1]}
    assert steps[1]["broker0"] == {"leader": 0, "isr": [0]}
    assert steps[1]["before"] == {"broker0": {"isr": [0, 1]}}  # the "from" ISR
    assert steps[3]["broker1"] == {"leader": 1, "leader_epoch": 1}  # broker 2 became leader
    assert steps[4]["args"] == [0]  # broker 1 started again
    assert steps[5]["broker0"] == {"leader": 1, "leader_epoch": 1}  # broker 1 follows it
    assert [s["#line"] for s in steps] == [1, 6, 7, 9, 11, 12, 14]


def test_the_fixture_log_is_accepted_by_the_kafka_model() -> None:
    code, output = validate_log(FIXTURE)
    assert code == 0, output
    assert "ACCEPTED: 7 steps" in output


def test_a_new_leader_with_a_dead_broker_in_its_isr_is_rejected_at_its_line(
    tmp_path: Path,
) -> None:
    lines = FIXTURE.read_text().splitlines()
    lines[8] = lines[8].replace("isr=[2]", "isr=[1, 2]")  # line 9
    bad = tmp_path / "bad.log"
    bad.write_text("\n".join(lines) + "\n")
    code, output = validate_log(bad)
    assert code == 1, output
    assert "REJECTED at step 4 (line 9)" in output
    assert "Deliver(LeaderAndIsr(to=1,cepoch=0,leader=1,epoch=1,isr=(1,)))" in output


def test_an_expansion_by_a_broker_that_does_not_lead_is_rejected_at_its_line(
    tmp_path: Path,
) -> None:
    lines = FIXTURE.read_text().splitlines()
    lines[6] = lines[6].replace("on broker 1:", "on broker 2:")
    bad = tmp_path / "bad.log"
    bad.write_text("\n".join(lines) + "\n")
    code, output = validate_log(bad)
    assert code == 1, output
    assert "(line 7)" in output


def test_a_log_of_several_partitions_needs_one_chosen(tmp_path: Path) -> None:
    outcome = CliRunner().invoke(cli, ["validate", "--model", "kafka", str(FIXTURE)])
    assert outcome.exit_code == 2
    assert "several partitions (orders-0, payments-3)" in outcome.output
    outcome = CliRunner().invoke(cli, ["validate", "--model", "kafka", "--partition", "x-1",
                                       str(FIXTURE)])
    assert outcome.exit_code == 2
    assert "no line of partition 'x-1'" in outcome.output


def test_the_derived_json_lines_trace_can_be_written_and_validated_again(
    tmp_path: Path,
) -> None:
    derived = tmp_path / "derived.jsonl"
    code, _ = validate_log(FIXTURE, "--emit-jsonl", str(derived))
    assert code == 0
    # a log is read in ZooKeeper mode with isr_changes=zookeeper (one step per ISR change);
    # its derived trace is validated with the same parameters
    outcome = CliRunner().invoke(cli, ["validate", "--model", "kafka", "-p",
                                       "controller=zookeeper", "-p", "isr_changes=zookeeper",
                                       str(derived)])
    assert outcome.exit_code == 0, outcome.output


def test_an_ignored_stale_request_is_a_step_that_may_be_nothing(tmp_path: Path) -> None:
    lines = FIXTURE.read_text().splitlines()
    lines.insert(13, "[2026-11-20 09:02:15,500] WARN Broker 1 ignoring LeaderAndIsr request from "
                     "controller 1 with correlation id 3 epoch 1 for partition [orders,0] since "
                     "its associated leader epoch 0 is not higher than the current leader epoch 1"
                     " (state.change.logger)")
    log = tmp_path / "ignoring.log"
    log.write_text("\n".join(lines) + "\n")
    steps = read_broker_log(log.read_text(), partition="orders-0")
    assert steps[6]["label"] == "Deliver*(LeaderAndIsr(to=0,*" and steps[6]["stutter"] is True
    code, output = validate_log(log)
    assert code == 0, output
    assert "ACCEPTED: 8 steps" in output
