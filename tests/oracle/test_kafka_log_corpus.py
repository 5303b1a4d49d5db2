"""The corpus of Kafka logs (tests/fixtures/oracle): each version's and mode's clean run is
accepted; a log with a step missing that its brokers would have logged is rejected, naming
that step; the bugs of docs/scenarios.md a log can show are rejected under the fixed
protocol and flagged with their invariant under the buggy one; bad input is one line."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from isrlab.cli import cli
from isrlab.services.traces import detect_format

CORPUS = Path(__file__).parent.parent / "fixtures" / "oracle"
VERSIONS = {  # directory -> steps, counted by hand from the files (see each file's header)
    "kafka-2.0": 6,   # creation, shrink, expand, B leads, A starts, B expands
    "kafka-2.4": 8,   # + the shrink's figures, A follows B (TRACE); expansions confirmed
    "kafka-2.7": 8,   # the same through AlterIsr; A follows B (INFO)
    "kafka-3.4-zk-compose": 8,
    "kafka-4.0-kraft": 8,
}


def files(name: str) -> list[Path]:
    return sorted(p for p in (CORPUS / name).rglob("*.log"))


def run(*args: str | Path) -> tuple[int, str]:
    outcome = CliRunner().invoke(cli, ["validate", "--engine", "model", *map(str, args)])
    return outcome.exit_code, outcome.output


@pytest.mark.parametrize(("name", "steps"), sorted(VERSIONS.items()))
def test_each_versions_clean_run_is_accepted(name: str, steps: int) -> None:
    paths = files(name)
    assert all(detect_format(p.read_text()) == "kafka-log" for p in paths)
    code, output = run("--model", "kafka", *paths)
    assert code == 0, output
    assert f"ACCEPTED: {steps} steps" in output


@pytest.mark.parametrize("name", sorted(VERSIONS))
def test_a_missing_isr_expansion_is_rejected_where_it_was_needed(
    tmp_path: Path, name: str
) -> None:
    """Without the first expansion, B never rejoined A's ISR: it cannot lead epoch 1 unless
    an expansion the leader's log would show happened."""
    copies = []
    for path in files(name):
        lines = path.read_text().splitlines()
        kept = [ln for ln in lines if not ("10:00:40" in ln or "T10:00:40" in ln)]
        copy = tmp_path / path.relative_to(CORPUS / name).as_posix().replace("/", "_")
        copy.write_text("\n".join(kept) + "\n")
        copies.append(copy)
    code, output = run("--model", "kafka", *copies)
    assert code == 1, output
    assert "would have logged 'Expanding ISR" in output
    assert "10:01:00" in output  # rejected at B's leader line


@pytest.mark.parametrize("name", ["kafka-2.4", "kafka-2.7", "kafka-3.4-zk-compose",
                                  "kafka-4.0-kraft"])
def test_a_wrong_high_watermark_in_a_shrink_line_is_rejected_at_that_line(
    tmp_path: Path, name: str
) -> None:
    copies = []
    for path in files(name):
        copy = tmp_path / path.relative_to(CORPUS / name).as_posix().replace("/", "_")
        copy.write_text(path.read_text().replace("(highWatermark: 1,", "(highWatermark: 2,"))
        copies.append(copy)
    code, output = run("--model", "kafka", "--json", *copies)
    assert code == 1, output
    report = json.loads(output)
    assert report["verdict"] == "rejected"
    assert "Shrinking ISR" in report["rejected"]["text"]
    assert any("hw: observed 2, model has 1" in m
               for near in report["rejected"]["closest"] for m in near["mismatches"])


# The unclean-election fixture's shrink drops broker 6 at the leader's end offset (endOffset
# 0 of 0), which Kafka 2.1+ never does (KAFKA-7152; the log is hand-written): its runs take
# the older shrink rule, kafka_7152=false.
def test_the_issues_unclean_election_is_rejected_naming_the_step_broker_5_would_log() -> None:
    code, output = run("--model", "kafka", "-p", "kafka_7152=false", *files("unclean-election"))
    assert code == 1, output
    assert "REJECTED at step 4 (" in output and "broker-6.log:7)" in output
    assert ("Fetch(1): broker 5 (model broker 0) would have logged 'Expanding ISR from 5 to "
            "5,6' at INFO") in output


def test_without_broker_5s_log_the_expansion_may_hide() -> None:
    code, output = run("--model", "kafka", CORPUS / "unclean-election" / "broker-6.log")
    assert code == 0, output


def test_with_unclean_election_on_the_log_is_flagged_with_its_invariant() -> None:
    """docs/scenarios.md #5 (Jepsen): an unclean election may lose acknowledged writes."""
    code, output = run("--model", "kafka", "-p", "unclean_election=true", "-p",
                       "kafka_7152=false", *files("unclean-election"))
    assert code == 0, output
    assert "some matching behaviours break AcknowledgedWritesDurable" in output


def test_kip101_truncation_to_the_hw_is_rejected_by_the_fixed_protocol() -> None:
    """docs/scenarios.md #1: the follower's 'Truncating log t-0 to offset 0.' (m0 was
    committed, HW 1 on the leader) is no behaviour of KIP-279 truncation."""
    code, output = run("--model", "kafka", *files("scenarios/kip101"))
    assert code == 1, output
    assert "Truncating log t-0 to offset 0." in output
    assert "broker1.log length: observed 0, model has 1" in output


def test_kip101_truncation_to_the_hw_is_flagged_by_the_buggy_protocol() -> None:
    code, output = run("--model", "kafka", "-p", "max_records=1", "-p", "max_leader_epoch=1",
                       "-p", "isr_shrink=false", "-p", "lost_requests=false",
                       "-p", "fetch_fencing=false", "-p", "expand_rule=hw",
                       "-p", "truncation=hw", *files("scenarios/kip101"))
    assert code == 0, output
    assert "NoCommittedRecordLost from step 6" in output


def test_an_acks_1_loss_is_legal_at_acks_all_and_breaks_durability_at_acks_1() -> None:
    """docs/scenarios.md #6."""
    paths = files("scenarios/acks1-loss")
    code, output = run("--model", "kafka", *paths)
    assert code == 0, output
    # At acks=1 m0 was acknowledged when appended, and broker 2 leads epoch 1 without it: the
    # behaviours break AcknowledgedWritesDurable, except those where broker 2 (and then broker
    # 1) crash after the last line: a crash writes nothing, so the logs cannot exclude it and
    # the verdict is "accepted, flagged" (exit 0), not "breaks an invariant" (exit 3).
    code, output = run("--model", "kafka", "-p", "acks=1", "--json", *paths)
    assert code == 0, output
    report = json.loads(output)
    assert report["verdict"] == "accepted"
    assert report["matched_steps"] == 5
    assert "AcknowledgedWritesDurable" in report["possible_violations"]


def test_logs_said_to_be_at_debug_must_show_every_leader_hw_change() -> None:
    """The 3.4 logs hold no 'High watermark updated' line: read as written at DEBUG, the
    leader could never have raised its HW to the 1 its shrink line shows."""
    paths = files("kafka-3.4-zk-compose")
    code, output = run("--model", "kafka", "--log-level", "INFO", *paths)
    assert code == 0, output
    code, output = run("--model", "kafka", "--log-level", "DEBUG", "--hidden", "6", *paths)
    assert code == 1, output
    assert "Shrinking ISR from 1001,1002 to 1001" in output
    assert "would have logged 'High watermark updated to 1' at DEBUG" in output


@pytest.mark.parametrize(("args", "message"), [
    (("--brokers", "1,1"), "--brokers: expects distinct broker ids"),
    (("--brokers", "7,8"), "the log names broker(s) 1,2, not in --brokers 7,8"),
    (("--brokers", "2,1"), "broker 1 leads leader epoch 0"),
    (("--format", "xml"), "Invalid value for '--format'"),
    (("--partition", "x-9"), "no line of partition 'x-9'"),
])
def test_bad_arguments_are_one_line_and_exit_2(args: tuple[str, ...], message: str) -> None:
    code, output = run("--model", "kafka", *args, *files("kafka-2.0"))
    assert code == 2, output
    assert len(output.strip().splitlines()) == 1, output
    assert message in output


def test_a_file_that_is_not_a_log_is_one_line_and_exit_2(tmp_path: Path) -> None:
    prose = tmp_path / "notes.txt"
    prose.write_text("The broker restarted twice.\nNothing else happened.\n")
    code, output = run("--model", "kafka", prose)
    assert code == 2 and len(output.strip().splitlines()) == 1, output
    assert "not a trace" in output
    code, output = run("--model", "kafka", "--format", "kafka-log", prose)
    assert code == 2 and len(output.strip().splitlines()) == 1, output
    assert "no line about a partition's replication" in output


def test_a_partition_epoch_going_back_on_one_broker_is_bad_input(tmp_path: Path) -> None:
    log = tmp_path / "compose.log"
    text = (CORPUS / "kafka-3.4-zk-compose" / "docker-compose.log").read_text()
    log.write_text(text.replace("1001,1002 and version updated to [2]",
                                "1001,1002 and version updated to [0]"))
    code, output = run("--model", "kafka", log)
    assert code == 2 and len(output.strip().splitlines()) == 1, output
    assert "broker 1001 logs partition epoch (ZooKeeper version) 0 after 1" in output


def test_outputs_never_overwrite_an_input(tmp_path: Path) -> None:
    log = tmp_path / "server.log"
    log.write_text((CORPUS / "kafka-2.0" / "server-1.log").read_text())
    before = log.read_text()
    code, output = run("--model", "kafka", "--emit-jsonl", log, log)
    assert code == 2 and "refusing to overwrite it" in output, output
    assert log.read_text() == before


def _controller_log(tmp_path: Path, time: str) -> Path:
    """The KRaft controller's replay of broker 1's AlterPartition (3.3-4.x
    ``PartitionRegistration`` diff, DEBUG) for the 4.0 corpus's partition, at ``time``."""
    path = tmp_path / "controller.log"
    path.write_text(f"{time} DEBUG [quorum-controller-1-event-handler] "
                    "org.apache.kafka.metadata.PartitionRegistration - [QuorumController id=3] "
                    "partition change for t-0 with topic ID q3ZbN0d-TJ6l3lBQcrpLaw: isr: [1, 2] "
                    "-> [1], partitionEpoch: 0 -> 1\n")
    return path


def test_controller_lines_the_search_does_not_read_make_it_not_covered(tmp_path: Path) -> None:
    """``--engine model`` reads no controller line: a verdict that would rest on one is NOT
    COVERED (exit 4) naming it, never ACCEPTED over lines ignored without a word; the
    oracle reads the same lines."""
    controller = _controller_log(tmp_path, "2025-03-18T10:00:30.012Z")
    code, output = run("--model", "kafka", *files("kafka-4.0-kraft"), controller)
    assert code == 4, output
    assert "NOT COVERED" in output and f"{controller}:1: a controller line" in output
    assert "the search alone: accepted" in output
    outcome = CliRunner().invoke(cli, ["validate", "--json", "--engine", "model",
                                       *map(str, files("kafka-4.0-kraft")), str(controller)])
    report = json.loads(outcome.output)
    assert (outcome.exit_code, report["verdict"]) == (4, "not-covered")
    oracle = CliRunner().invoke(cli, ["validate", *map(str, files("kafka-4.0-kraft")),
                                      str(controller)])
    assert oracle.exit_code == 0, oracle.output  # the controller's change: the leader's shrink


def test_a_rejection_before_the_first_controller_line_stands(tmp_path: Path) -> None:
    """A step the model rejects, logged before any controller line, is a verdict on the
    lines the search read: still REJECTED (the same missing expansion as above)."""
    copies = []
    for path in files("kafka-4.0-kraft"):
        kept = [ln for ln in path.read_text().splitlines() if "T10:00:40" not in ln]
        copy = tmp_path / path.name
        copy.write_text("\n".join(kept) + "\n")
        copies.append(copy)
    controller = _controller_log(tmp_path, "2025-03-18T10:05:00.000Z")
    code, output = run("--model", "kafka", *copies, controller)
    assert code == 1, output
    early = _controller_log(tmp_path, "2025-03-18T10:00:00.000Z")
    code, output = run("--model", "kafka", *copies, early)
    assert code == 4 and "the search alone: rejected" in output, output
