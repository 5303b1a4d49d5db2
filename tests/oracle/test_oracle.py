"""The log oracle (``isrlab validate`` on Kafka logs, ``isrlab.spec.oracle``): issue 31's named
cases, each rule broken by one line, the verdicts and their exit statuses, the cluster size
it assumes, ``--partition all``, the API, and the corpus of real logs with the verdict each
SOURCE.md argues (tests/fixtures/oracle/real/*/expected.json).

The log lines are written from Kafka's format strings (the version is in each test); the
figures of the ISR-flap line are the published ones (issue 31)."""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from pathlib import Path

import pytest
from click.testing import CliRunner

from isrlab import api
from isrlab.cli import cli
from isrlab.spec.oracle.run import LogFile, Verdict

REAL = Path(__file__).parent.parent / "fixtures" / "oracle" / "real"


def log(tmp_path: Path, *lines: str, name: str = "server.log") -> Path:
    """A log file of ``lines``, each stamped one second after the previous."""
    path = tmp_path / name
    path.write_text("".join(f"[2024-05-01 10:00:{i:02d},000] {line}\n"
                            for i, line in enumerate(lines)))
    return path


def run(*args: str | Path) -> tuple[int, str]:
    outcome = CliRunner().invoke(cli, ["validate", *map(str, args)])
    return outcome.exit_code, outcome.output


def verdict(*args: str | Path) -> tuple[int, dict[str, object]]:
    code, output = run("--json", *args)
    return code, json.loads(output)


def rule_of(report: dict[str, object]) -> object:
    """The rule of a rejection, or of the line breaking an invariant (``at``)."""
    rejected = report.get("rejected", report.get("at"))
    return rejected.get("rule") if isinstance(rejected, dict) else None


P = "INFO [Partition t-0 broker=1]"
TID = "with topic id Some(q3ZbN0d-TJ6l3lBQcrpLaw)"


def test_the_isr_flap_is_rejected_at_line_1_by_the_hw_rule(tmp_path: Path) -> None:
    """Leader HW 884,213 above the LEO 883,740 of the ISR member it removes: impossible in
    every release (``Partition.maybeIncrementLeaderHW``), whatever the offsets' size."""
    path = log(tmp_path,
               "INFO [Partition topic-0 broker=1] Shrinking ISR from 1,2,3 to 1,2. Leader: "
               "(highWatermark: 884213, endOffset: 884221). Out of sync replicas: (brokerId: 3, "
               "endOffset: 883740, lastCaughtUpTimeMs: 1719669700912). (kafka.cluster.Partition)",
               "INFO [Partition topic-0 broker=1] ISR updated to 1,2 and version updated to 47")
    code, report = verdict(path)
    assert code == 1
    rejected = report["rejected"]
    assert isinstance(rejected, dict)
    assert (rejected["line"], rejected["rule"]) == (1, "hw-le-isr-leo")
    assert rejected["method"] == "Partition.maybeIncrementLeaderHW"
    assert "884,213" in str(rejected["detail"]) and "883,740" in str(rejected["detail"])
    code, text = run(path)
    assert "Partition.maybeIncrementLeaderHW" in text and "breaks hw-le-isr-leo" in text
    # the same line with the HW at the removed member's LEO is a shrink like any other
    path.write_text(path.read_text().replace("884213", "883740"))
    assert run(path)[0] == 0


def test_a_leaders_hw_rising_as_followers_fetch_is_accepted_at_any_offset(
        tmp_path: Path) -> None:
    """Kafka 4.1 at TRACE: HW 88 -> 89 -> 90 as the followers' LEOs reach it."""
    seg = "segment=[16:76938]"
    path = log(tmp_path,
               f"TRACE [Partition t-0 broker=1] Skipping update high watermark since new hw "
               f"(offset=88, {seg}) is not larger than old value. All current LEOs are "
               f"Set(replica 2: (offset=88, {seg}), replica 3: (offset=88, {seg}), replica 1: "
               f"(offset=89, {seg}))",
               f"DEBUG [Partition t-0 broker=1] High watermark updated from (offset=88, {seg}) "
               f"to (offset=89, {seg})",
               f"DEBUG [Partition t-0 broker=1] High watermark updated from (offset=89, {seg}) "
               f"to (offset=90, {seg})")
    code, report = verdict(path)
    assert code == 0, report
    assert report["observations"] == 3 and report["brokers"] == 3
    # the HW going back on the leader is not
    path.write_text(path.read_text().replace("from (offset=89", "from (offset=91"))
    code, report = verdict(path)
    assert (code, rule_of(report)) == (1, "hw-monotonic")


FAILOVER = (
    f"INFO [Broker id=2] Follower t-0 {TID} starts at leader epoch 5 from offset 700 with "
    "partition epoch 9 and high watermark 690. Current leader is 1. Previous leader Some(3) and "
    "previous leader epoch was 4. (state.change.logger)",
    f"INFO [Broker id=2] Leader t-0 {TID} starts at leader epoch 6 from offset 760 with "
    "partition epoch 11, high watermark 750, ISR [2,3], adding replicas [] and removing "
    "replicas [] . Previous leader Some(1) and previous leader epoch was 5. "
    "(state.change.logger)",
)


def test_a_mid_history_failover_seen_from_one_broker_of_three_is_accepted(
        tmp_path: Path) -> None:
    code, report = verdict(log(tmp_path, *FAILOVER))
    assert code == 0, report
    assert (report["observations"], report["brokers"]) == (2, 3)
    assert "1,2,3" in str(report["brokers_from"])


def test_a_new_leader_without_a_committed_record_breaks_no_committed_record_lost(
        tmp_path: Path) -> None:
    """Broker 2 saw HW 690 in epoch 5; leading epoch 6 from offset 600 means a cleanly
    elected leader lacks committed records: the cluster lost them (exit 3), offsets 600 to
    689."""
    lines = (FAILOVER[0], FAILOVER[1].replace("from offset 760", "from offset 600")
             .replace("high watermark 750", "high watermark 600"))
    code, report = verdict(log(tmp_path, *lines))
    assert (code, report["verdict"], report["invariant"], rule_of(report)) == (
        3, "breaks-invariant", "NoCommittedRecordLost", "elected-has-committed"), report
    at = report["at"]
    assert isinstance(at, dict) and "offsets 600 to 689 (90 records)" in at["detail"]
    # with unclean election on, it is a possible (unclean) history
    code, report = verdict("-p", "unclean_election=true", log(tmp_path, *lines))
    assert code == 0, report


def test_refused_zookeeper_isr_writes_leave_the_isr_unchanged(tmp_path: Path) -> None:
    """KAFKA-7165 (1.1): each shrink's "from" is the ISR the refused write left."""
    refused = f"{P} Cached zkVersion [0] not equal to that in zookeeper, skip updating ISR"
    lines = [f"{P} Shrinking ISR from 1,3,4,2 to 1,4,2", refused,
             f"{P} Shrinking ISR from 1,3,4,2 to 1", refused]
    code, report = verdict(log(tmp_path, *lines))
    assert code == 0, report
    assert report["brokers"] == 4
    # had the first write been applied, the second shrink would start from 1,4,2
    lines[2] = f"{P} Shrinking ISR from 1,4,2 to 1"
    code, report = verdict(log(tmp_path, *lines))
    assert (code, rule_of(report)) == (1, "isr-change-from-current")
    # ... and an applied write (no refusal, ZooKeeper mode: the write is synchronous) makes
    # "from 1,3,4,2" the wrong one
    started = "INFO [KafkaServer id=1] started (kafka.server.KafkaServer)"
    code, report = verdict(log(tmp_path, started, lines[0],
                               f"{P} Shrinking ISR from 1,3,4,2 to 1"))
    assert (code, rule_of(report)) == (1, "isr-change-from-current")


def test_an_exception_in_the_zookeeper_write_leaves_the_isr_unchanged(tmp_path: Path) -> None:
    path = tmp_path / "server.log"
    path.write_text(
        f"[2018-07-14 04:38:25,954] {P} Shrinking ISR from 1,3,4,2 to 1,4,2\n"
        "[2018-07-14 04:38:26,559] ERROR Uncaught exception in scheduled task 'isr-expiration' "
        "(kafka.utils.KafkaScheduler)\n"
        "org.apache.zookeeper.KeeperException$SessionExpiredException: KeeperErrorCode = "
        "Session expired\n"
        f"[2018-07-14 04:38:45,938] {P} Shrinking ISR from 1,3,4,2 to 1\n")
    assert run(path)[0] == 0


def test_the_3_6_wording_is_read_and_two_leaders_of_one_epoch_are_rejected(
        tmp_path: Path) -> None:
    """Kafka 3.6+: 'Previous leader None and previous leader epoch was -1.'"""
    leader = (f"INFO [Broker id={{b}}] Leader t-0 {TID} starts at leader epoch 0 from offset 0 "
              "with partition epoch 0, high watermark 0, ISR [1,2], adding replicas [] and "
              "removing replicas [] . Previous leader None and previous leader epoch was -1. "
              "(state.change.logger)")
    code, report = verdict(log(tmp_path, leader.format(b=1)))
    assert code == 0 and report["observations"] == 1, report
    code, report = verdict(log(tmp_path, leader.format(b=1), leader.format(b=2)))
    assert (code, rule_of(report)) == (1, "one-leader-per-epoch")
    assert report["rejected"]["line"] == 2  # type: ignore[index]  # JSON object


def test_a_non_replica_in_the_isr_is_rejected(tmp_path: Path) -> None:
    request = ("TRACE [Broker id=1] Received LeaderAndIsr request LeaderAndIsrPartitionState("
               "topicName='t', partitionIndex=0, controllerEpoch=1, leader=1, leaderEpoch=0, "
               "isr={isr}, zkVersion=0, replicas=[1, 2], addingReplicas=[], removingReplicas=[], "
               "isNew=true) correlation id 1 from controller 1 epoch 1 (state.change.logger)")
    code, report = verdict(log(tmp_path, request.format(isr="[1, 2, 3]")))
    assert (code, rule_of(report)) == (1, "isr-subset-replicas")
    code, report = verdict(log(tmp_path, request.format(isr="[1]"),
                               f"{P} Expanding ISR from 1 to 1,3"))
    assert (code, rule_of(report)) == (1, "isr-subset-replicas")
    assert report["rejected"]["line"] == 2  # type: ignore[index]  # JSON object
    code, report = verdict(log(tmp_path, request.format(isr="[1]"),
                               f"{P} Expanding ISR from 1 to 1,2"))
    assert code == 0 and report["brokers"] == 2, report


def test_the_fatal_truncation_exit_breaks_no_fatal_exit(tmp_path: Path) -> None:
    """1.0: a follower past its leader's LEO exits rather than truncate (FatalExitError)."""
    lines = ("INFO Truncating t-0 to 2391 has no effect as the largest offset in the log is "
             "2390. (kafka.log.Log)",
             "FATAL [ReplicaFetcher replicaId=2, leaderId=1, fetcherId=0] Exiting because log "
             "truncation is not allowed for partition t-0, current leader's latest offset 2051 "
             "is less than replica's latest offset 2391 (kafka.server.ReplicaFetcherThread)")
    path = log(tmp_path, *lines)
    code, report = verdict(path)
    assert code == 3, report
    assert report["verdict"] == "breaks-invariant" and report["invariant"] == "NoFatalExit"
    assert report["at"]["line"] == 2  # type: ignore[index]  # JSON object
    code, text = run(path)
    assert "BREAKS NoFatalExit" in text and "handleOffsetOutOfRange" in text
    # a broker with unclean election enabled truncates instead
    code, report = verdict("-p", "unclean_election=true", path)
    assert (code, rule_of(report)) == (1, "fatal-truncation")


def test_truncation_lines_are_read(tmp_path: Path) -> None:
    fetcher = "INFO [ReplicaFetcher replicaId=2, leaderId=1, fetcherId=0]"
    lines = ["INFO [Broker id=2] Follower t-0 starts at leader epoch 3 from offset 10 with "
             "high watermark 8. Previous leader epoch was 2. (state.change.logger)",
             f"{fetcher} Truncating partition t-0 to local high watermark 8",
             f"{fetcher} Truncating partition t-0 with TruncationState(offset=9, completed=true) "
             "due to leader epoch and offset EpochEndOffset(errorCode=0, partition=0, "
             "leaderEpoch=3, endOffset=9)"]
    code, report = verdict(log(tmp_path, *lines))
    assert code == 0 and report["observations"] == 3, report
    # truncating below the HW the replica held: its committed records lost
    lines[2] = lines[2].replace("offset=9", "offset=7")
    code, report = verdict(log(tmp_path, *lines))
    assert (code, report["invariant"], rule_of(report)) == (
        3, "NoCommittedRecordLost", "leader-no-truncate-below-hw"), report
    at = report["at"]
    assert isinstance(at, dict)
    assert "the committed record at offset 7 is gone from broker 2" in at["detail"]


BELOW_HW = ["INFO [Broker id=2] Follower t-0 starts at leader epoch 3 from offset 10 with high "
            "watermark 8. Previous leader epoch was 2. (state.change.logger)",
            "INFO [ReplicaFetcher replicaId=2, leaderId=1, fetcherId=0] Truncating partition t-0 "
            "with TruncationState(offset=5, completed=true) due to leader epoch and offset "
            "EpochEndOffset(errorCode=0, partition=0, leaderEpoch=3, endOffset=5)"]
"""Broker 2 holds HW 8 and truncates to 5: committed records at offsets 5 to 7 lost."""


def test_a_breach_is_judged_past_and_a_later_step_broken_still_rejects(tmp_path: Path) -> None:
    """After a line breaking an invariant the oracle judges on: a later line breaking a step
    of Kafka's code makes the verdict REJECTED, with a note naming the breach."""
    code, report = verdict(log(tmp_path, *BELOW_HW))
    assert (code, report["verdict"], report["invariant"]) == (
        3, "breaks-invariant", "NoCommittedRecordLost"), report
    at = report["at"]
    assert isinstance(at, dict) and at["line"] == 2
    assert "offsets 5 to 7 (3 records) are gone from broker 2" in at["detail"]
    down = ("INFO [Broker id=2] Follower t-0 starts at leader epoch 2 from offset 5 with high "
            "watermark 5. Previous leader epoch was 3. (state.change.logger)")
    code, report = verdict(log(tmp_path, *BELOW_HW, down))
    assert (code, report["verdict"], rule_of(report)) == (1, "rejected", "epoch-monotonic")
    notes = report["notes"]
    assert isinstance(notes, list)
    assert any("server.log:2 broke NoCommittedRecordLost" in n for n in notes), report


def test_the_worst_of_several_partitions_ranks_rejected_above_breaks(tmp_path: Path) -> None:
    """``--partition all``: a partition that lost records and one accepted give BREAKS (exit
    3); one rejected besides gives REJECTED (exit 1): the oracle's account of Kafka failed."""
    other = "INFO [Partition t-1 broker=1] Expanding ISR from 1 to 1,2"
    code, report = verdict("--partition", "all", log(tmp_path, *BELOW_HW, other))
    rows = report["partitions"]
    assert isinstance(rows, list)
    assert (code, report["verdict"], [r["verdict"] for r in rows]) == (
        3, "breaks-invariant", ["breaks-invariant", "accepted"]), report
    wrong = "INFO [Partition t-1 broker=1] Shrinking ISR from 1,3 to 1"  # 3 not in {1,2}
    code, report = verdict("--partition", "all", log(tmp_path, *BELOW_HW, other, wrong))
    assert (code, report["verdict"]) == (1, "rejected"), report


def test_a_log_without_replication_lines_is_not_covered(tmp_path: Path) -> None:
    path = log(tmp_path, "INFO [KafkaServer id=1] started (kafka.server.KafkaServer)",
               "INFO [GroupCoordinator 1]: Preparing to rebalance group g (kafka.coordinator)")
    code, text = run(path)
    assert code == 4, text
    assert "NOT COVERED" in text and "0 observations" in text


def test_a_replication_line_the_oracle_cannot_read_makes_the_rest_not_covered(
        tmp_path: Path) -> None:
    path = log(tmp_path, f"{P} Expanding ISR from 1 to 1,2",
               f"{P} Shrinking ISR for a reason no release writes: 1,2 -> 1")
    code, report = verdict(path)
    assert code == 4, report
    assert "server.log:2" in str(report["reason"])


def test_partition_all_prints_one_row_each_and_exits_with_the_worst(tmp_path: Path) -> None:
    path = log(tmp_path, f"{P} Expanding ISR from 1 to 1,2",
               "INFO [Partition u-0 broker=1] Shrinking ISR from 1,2 to 1. Leader: "
               "(highWatermark: 9, endOffset: 9). Out of sync replicas: (brokerId: 2, "
               "endOffset: 5).")
    code, text = run("--partition", "all", path)
    assert code == 1, text
    rows = [ln for ln in text.splitlines() if ln.startswith("kafka: ")]
    assert [r.split(":")[1].strip() for r in rows] == ["t-0", "u-0"]
    assert "ACCEPTED" in rows[0] and "REJECTED" in rows[1]
    code, text = run(path)  # two partitions, none chosen
    assert code == 2 and "choose one, or all" in text


def test_the_cluster_size_comes_from_the_replicas_else_the_parameters(tmp_path: Path) -> None:
    path = log(tmp_path, f"{P} Expanding ISR from 1 to 1,2")
    assert verdict(path)[1]["brokers"] == 2
    code, report = verdict("-p", "brokers=5", path)
    assert (code, report["brokers"], report["brokers_from"]) == (0, 5, "-p brokers=5")
    code, report = verdict("--brokers", "1,2,3", path)
    assert (code, report["brokers"]) == (0, 3)
    code, text = run("-p", "brokers=1", path)
    assert code == 2 and "names 2 brokers" in text
    code, text = run("--brokers", "1", path)
    assert code == 2 and "not in --brokers" in text


def test_the_api_judges_a_kafka_log(tmp_path: Path) -> None:
    path = log(tmp_path, *FAILOVER)
    result = api.validate("kafka", path)
    assert result.accepted and result.verdict == "accepted"
    flap = log(tmp_path, "INFO [Partition t-0 broker=1] Shrinking ISR from 1,2 to 1. Leader: "
               "(highWatermark: 9, endOffset: 9). Out of sync replicas: (brokerId: 2, "
               "endOffset: 5).", name="flap.log")
    assert [v.verdict for v in api.judge_logs([flap, path], partition="all")] == ["rejected"]
    with pytest.raises(api.ModelError):
        api.judge_logs([path], "tla-kip320")


def real_cases() -> list[Path]:
    return sorted(p.parent for p in REAL.rglob("expected.json")) if REAL.is_dir() else []


@pytest.mark.skipif(not real_cases(), reason="the corpus of real logs is not in this checkout")
@pytest.mark.parametrize("case", real_cases(), ids=lambda p: p.name)
def test_each_real_log_gets_the_verdict_its_source_argues(case: Path) -> None:
    """Every excerpt of tests/fixtures/oracle/real: the verdict, and for a rejection its
    line and rule, as expected.json (argued in SOURCE.md) says; ACCEPTED with a FATAL exit
    is this oracle's BREAKS NoFatalExit."""
    expected = json.loads((case / "expected.json").read_text())
    logs = sorted(case.rglob("*.log"))
    outcome = CliRunner().invoke(cli, ["validate", "--json", "--format", "kafka-log",
                                       *map(str, logs)])
    report = json.loads(outcome.output)
    want = expected["verdict"]
    if expected.get("breaks"):
        assert (report["verdict"], report.get("invariant")) == ("breaks-invariant",
                                                                 expected["breaks"]), report
        assert report["at"]["line"] == expected["breaks_line"]
        if expected.get("rule"):  # a rule that is an invariant (not the FATAL exit)
            assert report["at"]["rule"] == expected["rule"], report
        return
    assert report["verdict"] == want, report
    if want == "rejected":
        assert (report["rejected"]["line"], report["rejected"]["rule"]) == (
            expected["line"], expected["rule"]), report
        if expected.get("file"):
            assert report["rejected"]["where"].endswith(f"{expected['file']}:{expected['line']}")
    if want != "not-covered":
        assert report["observations"] > 0


def test_follow_reads_a_growing_log_and_exits_at_the_first_rejection(tmp_path: Path) -> None:
    """``--follow``: lines appended while it runs are judged; each verdict change is
    printed; the first rejection ends it (exit 1)."""
    from isrlab.services import traces

    path = tmp_path / "server.log"
    path.write_text("[2024-05-01 10:00:00,000] INFO [Partition t-0 broker=1] Expanding ISR "
                    "from 1 to 1,2 (kafka.cluster.Partition)\n")
    appended = [
        # a line in two writes: the oracle waits for its end
        "[2024-05-01 10:00:01,000] INFO [Partition t-0 broker=1] Shrinking ISR from 1,2 to 1. "
        "Leader: (highWatermark: 9, endOffset: 9). ",
        "Out of sync replicas: (brokerId: 2, endOffset: 9). (kafka.cluster.Partition)\n",
        "[2024-05-01 10:00:02,000] INFO [Partition t-0 broker=1] Expanding ISR from 1 to 1,2 "
        "(kafka.cluster.Partition)\n",
        "[2024-05-01 10:00:03,000] INFO [Partition t-0 broker=1] Shrinking ISR from 1,2 to 1. "
        "Leader: (highWatermark: 12, endOffset: 12). Out of sync replicas: (brokerId: 2, "
        "endOffset: 10). (kafka.cluster.Partition)\n",
        "[2024-05-01 10:00:04,000] INFO [Partition t-0 broker=1] Expanding ISR from 1 to 1,2 "
        "(kafka.cluster.Partition)\n",
        "[2024-05-01 10:00:05,000] INFO [Partition t-0 broker=1] Shrinking ISR from 1,2 to 1 "
        "(kafka.cluster.Partition)\n",
    ]
    seen: list[tuple[str, int]] = []
    polls = 0

    def sleep(_: float) -> None:  # the cluster writes one chunk between two polls
        nonlocal polls
        polls += 1
        if appended:
            with path.open("a") as handle:
                handle.write(appended.pop(0))

    verdicts = traces.follow_kafka_logs(
        [path], lambda v: seen.append((v.verdict, v.observations)), poll=0.0, sleep=sleep,
        idle=5.0)
    assert seen == [("accepted", 1), ("rejected", 4)]
    assert verdicts[0].rejection is not None and verdicts[0].rejection.line == 4
    # an entry is judged once the next one starts (a stack trace may continue it): the
    # rejection at line 4 is seen when line 5 is written, and nothing after is read
    assert len(appended) == 1 and "10:00:05" in appended[0]


def test_follow_goes_on_after_a_breach(tmp_path: Path) -> None:
    """``--follow``: a line breaking an invariant (committed records lost) is printed as it is
    judged and does not end the run; a later rejection does (exit 1)."""
    from isrlab.services import traces

    path = tmp_path / "server.log"
    stamps = iter(f"[2024-05-01 10:00:0{i},000] " for i in range(10))
    path.write_text(next(stamps) + BELOW_HW[0] + "\n")
    appended = [next(stamps) + BELOW_HW[1] + "\n",
                next(stamps) + "INFO [Broker id=2] Follower t-0 starts at leader epoch 4 from "
                "offset 5 with high watermark 5. Previous leader epoch was 3. "
                "(state.change.logger)\n",
                next(stamps) + "INFO [Broker id=2] Follower t-0 starts at leader epoch 2 from "
                "offset 5 with high watermark 5. Previous leader epoch was 4. "
                "(state.change.logger)\n",
                next(stamps) + "INFO [Partition t-0 broker=2] Expanding ISR from 1 to 1,2\n"]
    seen: list[tuple[str, int]] = []

    def sleep(_: float) -> None:
        if appended:
            with path.open("a") as handle:
                handle.write(appended.pop(0))

    traces.follow_kafka_logs([path], lambda v: seen.append((v.verdict, v.observations)),
                             poll=0.0, sleep=sleep, idle=5.0)
    assert seen == [("accepted", 1), ("breaks-invariant", 2), ("rejected", 4)]


def test_follow_on_the_command_line(tmp_path: Path) -> None:
    """The command prints each verdict change and exits with the last verdict when the log
    stops growing (``--idle-exit``)."""
    path = log(tmp_path, f"{P} Expanding ISR from 1 to 1,2")
    code, text = run("--follow", "--idle-exit", "0.5", path)
    assert code == 0, text
    assert text.count("ACCEPTED") == 1


WRITTEN = Path(__file__).parent.parent / "fixtures" / "oracle"


@pytest.mark.parametrize(("name", "code", "rule"), [
    ("broker-orders-0.log", 0, None), ("kafka-2.0", 0, None), ("kafka-2.4", 0, None),
    ("kafka-2.7", 0, None), ("kafka-3.4-zk-compose", 0, None), ("kafka-4.0-kraft", 0, None),
    ("scenarios/acks1-loss", 0, None), ("unclean-election", 1, "leader-from-isr"),
    ("scenarios/kip101", 3, "isr-member-no-truncate-below-hw"),
])
def test_the_written_corpus_as_docs_oracle_md_says(name: str, code: int,
                                                   rule: str | None) -> None:
    path = WRITTEN / name
    logs = [path] if path.is_file() else sorted(path.rglob("*.log"))
    outcome = CliRunner().invoke(cli, ["validate", "--json", "--partition", "all",
                                       *map(str, logs)])
    assert outcome.exit_code == code, outcome.output
    report = json.loads(outcome.output)
    rows = report.get("partitions", [report])
    assert all(row["observations"] > 0 for row in rows)
    if rule is not None:
        assert rule_of(report) == rule


def test_docs_oracle_md_lists_every_rule_with_its_method() -> None:
    from isrlab.spec.oracle.rules import RULES

    text = (Path(__file__).parents[2] / "docs" / "oracle.md").read_text(encoding="utf-8")
    for rule in RULES.values():
        kind = f"BREAKS {rule.invariant}" if rule.invariant else "REJECTED"
        assert (f"| `{rule.id}` | `{rule.method}` | {rule.versions} | {rule.statement} | "
                f"{kind} |") in text, rule.id


def test_the_rules_that_are_invariants_name_one_of_the_models() -> None:
    """A rule that is a safety property names an invariant of the model's catalogue (the
    name a BREAKS verdict prints); the three are the truncation and election rules."""
    from isrlab.spec.invariants import INVARIANT_NAMES
    from isrlab.spec.oracle.rules import INVARIANT_RULES, RULES

    assert set(INVARIANT_RULES) == {"leader-no-truncate-below-hw", "elected-has-committed",
                                    "isr-member-no-truncate-below-hw"}
    assert all(RULES[r].invariant in INVARIANT_NAMES for r in INVARIANT_RULES)


def test_lines_pasted_without_timestamps_are_judged_in_file_order(tmp_path: Path) -> None:
    path = tmp_path / "pasted.txt"
    path.write_text(
        "INFO [Partition t-0 broker=1] Expanding ISR from 1 to 1,2 (kafka.cluster.Partition)\n"
        "INFO [Partition t-0 broker=1] Shrinking ISR from 1,3 to 1 (kafka.cluster.Partition)\n")
    code, report = verdict(path)
    assert (code, rule_of(report)) == (1, "isr-change-from-current")
    assert report["rejected"]["line"] == 2  # type: ignore[index]  # JSON object


def test_a_topic_deleted_and_created_again_starts_afresh(tmp_path: Path) -> None:
    leader = (f"INFO [Broker id=1] Leader t-0 {TID} starts at leader epoch {{epoch}} from offset "
              "{offset} with partition epoch {epoch}, high watermark {offset}, ISR [1,2], adding "
              "replicas [] and removing replicas [] . Previous leader None and previous leader "
              "epoch was -1. (state.change.logger)")
    lines = [leader.format(epoch=3, offset=500),
             "INFO Deleted log for partition t-0 in /var/kafka/t-0.8f3a-delete. "
             "(kafka.log.LogManager)",
             leader.format(epoch=0, offset=0)]
    code, report = verdict(log(tmp_path, *lines))
    assert code == 0, report
    del lines[1]  # without the deletion, epoch 0 after epoch 3 and offset 0 after 500
    code, report = verdict(log(tmp_path, *lines))
    assert code == 1, report


def test_an_election_after_unseen_epochs_is_not_judged_against_an_old_isr(
        tmp_path: Path) -> None:
    """Broker 1's log alone: it leads epoch 5 with ISR {1,2} and crashes (kill -9 writes
    nothing).  Broker 2 may lead epoch 6 and add 3 to the ISR unseen, so broker 3 may lead
    epoch 7; leading epoch 6 directly, it would have to be in {1,2}."""
    lead = (f"INFO [Broker id=1] Leader t-0 {TID} starts at leader epoch 5 from offset 100 "
            "with partition epoch 9, high watermark 100, ISR [1,2], adding replicas [] and "
            "removing replicas [] . Previous leader Some(2) and previous leader epoch was 4. "
            "(state.change.logger)")
    follow = (f"INFO [Broker id=1] Follower t-0 {TID} starts at leader epoch {{epoch}} from "
              "offset 100 with partition epoch 12 and high watermark 100. Current leader is 3. "
              "Previous leader None and previous leader epoch was -1. (state.change.logger)")
    started = "INFO [KafkaServer id=1] started (kafka.server.KafkaServer)"
    code, report = verdict(log(tmp_path, lead, started, follow.format(epoch=7)))
    assert code == 0, report
    code, report = verdict(log(tmp_path, lead, started, follow.format(epoch=6)))
    assert (code, rule_of(report)) == (1, "leader-from-isr")


def test_power_loss_lets_an_isr_member_fall_below_the_hw(tmp_path: Path) -> None:
    """With ``-p crashes=unclean`` a follower may lose fetched records and rejoin below the
    HW while still in the ISR: the flap line is then possible."""
    path = log(tmp_path, "INFO [Partition t-0 broker=1] Shrinking ISR from 1,2 to 1. Leader: "
               "(highWatermark: 9, endOffset: 9). Out of sync replicas: (brokerId: 2, "
               "endOffset: 5).")
    assert run(path)[0] == 1
    assert run("-p", "crashes=unclean", path)[0] == 0


def test_a_failed_write_is_the_latest_proposals_and_settles_the_others(tmp_path: Path) -> None:
    """ZooKeeper mode before 2.7: the isr-expiration task shrinks u-0 (written), then t-0,
    whose write throws; a broker's next line comes after its write."""
    path = tmp_path / "server.log"
    path.write_text(
        "[2018-07-14 04:38:25,000] INFO [KafkaServer id=1] started (kafka.server.KafkaServer)\n"
        "[2018-07-14 04:38:25,954] INFO [Partition u-0 broker=1] Shrinking ISR from 1,2 to 1\n"
        f"[2018-07-14 04:38:25,955] {P} Shrinking ISR from 1,3,4,2 to 1,4,2\n"
        "[2018-07-14 04:38:26,559] ERROR Uncaught exception in scheduled task 'isr-expiration' "
        "(kafka.utils.KafkaScheduler)\n"
        f"[2018-07-14 04:38:45,938] {P} Shrinking ISR from 1,3,4,2 to 1\n"
        "[2018-07-14 04:38:45,939] INFO [Partition u-0 broker=1] Shrinking ISR from 1,2 to 1\n")
    code, text = run("--partition", "all", path)
    assert code == 1, text
    rows = [ln for ln in text.splitlines() if ln.startswith("kafka: ")]
    assert "ACCEPTED" in rows[0] and "t-0" in rows[0]
    assert "REJECTED" in rows[1] and "isr-change-from-current" in rows[1] and ":6:" in rows[1]


def test_a_truncation_naming_no_broker_in_a_shared_file_forgets_the_leos(
        tmp_path: Path) -> None:
    """0.10's ``Truncating log t-0 to offset 2.`` names no broker: in a file of two brokers
    it may be either's, so neither's LEO is known after it (no verdict rests on it)."""
    lines = ["INFO Partition [t,0] on broker 1: Shrinking ISR for partition [t,0] from 1,2 to 1 "
             "(kafka.cluster.Partition)",
             "INFO Partition [t,0] on broker 2: Expanding ISR for partition [t,0] from 2 to 2,1 "
             "(kafka.cluster.Partition)",
             "INFO Truncating log t-0 to offset 2. (kafka.log.Log)"]
    code, report = verdict(log(tmp_path, *lines))
    assert code == 0 and report["observations"] == 2, report
    code, report = verdict(log(tmp_path, lines[2]))
    assert code == 4, report  # the only line: 0 observations


def test_a_leader_does_not_truncate_while_it_leads(tmp_path: Path) -> None:
    """2.7+: becoming a follower is logged (state-change, INFO); without that line a leader
    truncating its log (above its HW) is impossible; after it, the follower may."""
    lead = (f"INFO [Broker id=1] Leader t-0 {TID} starts at leader epoch 3 from offset 20 with "
            "partition epoch 3, high watermark 5, ISR [1,2], adding replicas [] and removing "
            "replicas [] . Previous leader Some(2) and previous leader epoch was 2. "
            "(state.change.logger)")
    follow = (f"INFO [Broker id=1] Follower t-0 {TID} starts at leader epoch 4 from offset 20 "
              "with partition epoch 4 and high watermark 5. Current leader is 2. Previous "
              "leader Some(1) and previous leader epoch was 3. (state.change.logger)")
    truncate = ("INFO [UnifiedLog partition=t-0, dir=/var/kafka] Truncating to offset 10 "
                "(kafka.log.UnifiedLog)")
    code, report = verdict(log(tmp_path, lead, truncate))
    assert (code, rule_of(report)) == (1, "leader-no-truncate")
    code, report = verdict(log(tmp_path, lead, follow, truncate))
    assert code == 0, report


def test_model_only_options_with_the_oracle_are_bad_input(tmp_path: Path) -> None:
    path = log(tmp_path, f"{P} Expanding ISR from 1 to 1,2")
    code, text = run("--hidden", "3", path)
    assert code == 2 and "--hidden" in text and "--engine model" in text
    code, text = run("--witness", str(tmp_path / "w.json"), path)
    assert code == 2 and not (tmp_path / "w.json").exists()


WRAPPED = ("[ReplicaFetcher replicaId=2, leaderId=3] Truncating partition seq-acks1-1-0 with\n"
           "  TruncationState(offset=578385, completed=true) due to leader epoch and offset\n"
           "  EpochEndOffset(errorCode=0, partition=0, leaderEpoch=0, endOffset=578385)\n"
           "[UnifiedLog partition=seq-acks1-1-0] Truncating to offset 578385\n")


def test_pasted_lines_starting_with_a_bracket_are_a_kafka_log_not_malformed_json(
        tmp_path: Path) -> None:
    """Lines pasted without timestamps whose first one starts with Kafka's ``[logIdent]``
    (``[ReplicaFetcher replicaId=2, ...]``) are a Kafka log: detected as one, never
    "malformed JSON" (tests/fixtures/oracle/real/unifiedlog-3.x-wrapped-acks1-truncation)."""
    from isrlab.services.traces import detect_format

    path = tmp_path / "broker-2.log"
    path.write_text(WRAPPED)
    assert detect_format(WRAPPED) == "kafka-log"
    code, report = verdict(path)
    assert code == 0, report


def test_indented_lines_of_a_log_without_timestamps_continue_the_line_above(
        tmp_path: Path) -> None:
    """A fetcher line wrapped over three lines by the page it was pasted from is one entry:
    the indented lines (no level of their own) continue it, so its truncation is read,
    not reported as a line the oracle does not read."""
    path = tmp_path / "broker-2.log"
    path.write_text(WRAPPED)
    code, report = verdict("--format", "kafka-log", path)
    assert (code, report["verdict"]) == (0, "accepted"), report
    assert report["observations"] == 2


def test_a_gzipped_log_is_read_as_the_log_it_holds(tmp_path: Path) -> None:
    """A rotated log compressed by logrotate (``server.log.1.gz``) gets the verdict of its
    text, never a decoding error."""
    import gzip

    plain = log(tmp_path, f"{P} Shrinking ISR from 1,2 to 1. Leader: (highWatermark: 9, "
                "endOffset: 9). Out of sync replicas: (brokerId: 2, endOffset: 5).")
    packed = tmp_path / "server.log.1.gz"
    packed.write_bytes(gzip.compress(plain.read_bytes()))
    assert verdict(packed)[1]["verdict"] == verdict(plain)[1]["verdict"] == "rejected"


def test_formats_older_than_kraft_say_zookeeper_mode(tmp_path: Path) -> None:
    """``Partition [t,0] on broker 1:`` (0.10-0.11) and ``starts at Leader Epoch`` (0.11-2.6)
    were written only by brokers older than KRaft (2.8): the mode is ZooKeeper."""
    old = log(tmp_path, "INFO Partition [t,0] on broker 1: Expanding ISR from 1 to 1,0 "
              "(kafka.cluster.Partition)", name="old.log")
    epoch = log(tmp_path, "INFO [Partition t-0 broker=1] t-0 starts at Leader Epoch 1 from "
                "offset 0. Previous Leader Epoch was: 0 (kafka.cluster.Partition)",
                name="epoch.log")
    assert verdict(old)[1]["mode"] == verdict(epoch)[1]["mode"] == "zookeeper"


def test_follow_refuses_a_gzipped_file_in_one_line(tmp_path: Path) -> None:
    """``--follow`` reads files a broker is writing; a gzip'd one is bad input (exit 2, one
    line), not a log without replication lines."""
    import gzip

    packed = tmp_path / "server.log.gz"
    packed.write_bytes(gzip.compress(b"[2024-05-01 10:00:00,000] INFO [Partition t-0 broker=1] "
                                     b"Expanding ISR from 1 to 1,2 (kafka.cluster.Partition)\n"))
    code, output = run("--follow", "--idle-exit", "0.3", packed)
    assert code == 2 and "gzip" in output and len(output.strip().splitlines()) == 1, output


def test_a_file_not_in_time_order_is_said_so(tmp_path: Path) -> None:
    """log4j writes a file in time order; one whose line is dated more than a second before
    the line above it (lines pasted in reverse, a bad merge) is judged in file order, and
    the verdict says where the file goes back in time."""
    path = tmp_path / "server.log"
    path.write_text(f"[2024-05-01 10:00:09,000] {P} Expanding ISR from 1,0 to 1,0,2\n"
                    f"[2024-05-01 10:00:01,000] {P} Expanding ISR from 1 to 1,0\n")
    _, report = verdict(path)
    notes = report["notes"]
    assert isinstance(notes, list)
    assert any("server.log:2" in n and "not in time order" in n for n in notes), report


def test_a_fatal_naming_only_its_topic_says_so_and_one_broker_is_singular(
        tmp_path: Path) -> None:
    """0.8.2-0.9's FATAL names the topic, not the partition (KAFKA-3997): the verdict is
    BREAKS NoFatalExit, noting that the partition is not known; a one-broker cluster is
    "1 broker"."""
    fatal = log(tmp_path, "FATAL [ReplicaFetcherThread-0-1], Halting because log truncation is "
                "not allowed for topic test, Current leader 1's latest offset 0 is less than "
                "replica 2's latest offset 151 (kafka.server.ReplicaFetcherThread)")
    code, report = verdict(fatal)
    assert (code, report["verdict"]) == (3, "breaks-invariant")
    notes = report["notes"]
    assert isinstance(notes, list)
    assert any("topic test" in n and "partition" in n for n in notes), report
    single = log(tmp_path, f"{P} t-0 starts at Leader Epoch 0 from offset 0. Previous Leader "
                 "Epoch was: -1 (kafka.cluster.Partition)", name="single.log")
    assert "assumed: 1 broker," in run(single)[1]


def test_a_replica_back_from_a_restart_with_a_shorter_log_is_not_covered(
        tmp_path: Path) -> None:
    """A broker whose transition after a restart ("Previous leader epoch was -1": a new
    Partition object) starts below the log end offset it had, with no truncation, lost the
    data on its disk (a wiped /tmp, a power failure without fsync): storage loss, not a
    step of Kafka's protocol; NOT COVERED naming the line, not REJECTED
    (tests/fixtures/oracle/real/zk-2.8-two-brokers-shared-logs-dir)."""
    path = log(tmp_path,
               "INFO [Broker id=1] Leader t-0 starts at leader epoch 4 from offset 51 with high "
               "watermark 51 ISR [1] addingReplicas [] removingReplicas []. Previous leader "
               "epoch was 3. (state.change.logger)",
               "INFO [Broker id=1] Leader t-0 starts at leader epoch 9 from offset 0 with high "
               "watermark 0 ISR [1] addingReplicas [] removingReplicas []. Previous leader "
               "epoch was -1. (state.change.logger)")
    code, report = verdict(path)
    assert (code, report["verdict"]) == (4, "not-covered"), report
    assert "server.log:2" in str(report["reason"]) and "disk" in str(report["reason"])
    code, report = verdict("-p", "crashes=unclean", path)
    assert report["verdict"] != "not-covered", report


def test_follow_reads_a_log_whose_lines_have_no_timestamps(tmp_path: Path) -> None:
    """``--follow`` on a log written without dates (a layout without ``%d``, as under a
    journal that adds its own) judges its lines as the batch mode does, in file order."""
    path = tmp_path / "b2.log"
    path.write_text("INFO [ReplicaFetcher replicaId=2, leaderId=3, fetcherId=0] Truncating "
                    "partition w21-acks1-0 with TruncationState(offset=100, completed=true)\n"
                    "INFO [UnifiedLog partition=w21-acks1-0, dir=/tmp/kafka-logs] Truncating to "
                    "offset 100\n")
    code, output = run("--follow", "--idle-exit", "0.5", path)
    assert code == 0 and "ACCEPTED" in output and "w21-acks1-0" in output, output


def _grow(paths: list[Path], chunks: list[list[str]], per_poll: int) -> Callable[[float], None]:
    """A ``sleep`` for ``follow_kafka_logs``: between two polls the cluster writes the next
    ``per_poll`` lines of each file (``chunks[i]``: file ``i``'s lines, in order)."""
    def sleep(_: float) -> None:
        for path, lines in zip(paths, chunks, strict=True):
            if lines:
                with path.open("a") as handle:
                    handle.write("".join(lines[:per_poll]))
                del lines[:per_poll]
    return sleep


def test_follow_rejects_a_skipped_partition_epoch_as_the_batch_does(tmp_path: Path) -> None:
    """``--follow`` holds a KRaft controller's changes to ``partition-epoch-plus-one`` as the
    batch does: its partition change lines at DEBUG show every change it replays, so a change
    that starts from partition epoch 2 after one that ended at 1 skips a record.  The
    controller's first line (the creation, at INFO) is written before any DEBUG line."""
    from isrlab.services import traces

    c, d = "INFO [QuorumController id=1]", "DEBUG [QuorumController id=1]"
    lines = [
        f"{c} Replayed PartitionRecord for new partition t-0 with topic ID W and "
        "PartitionRegistration(replicas=[1, 2, 3], directories=[A, B, C], isr=[1, 2, 3], "
        "removingReplicas=[], addingReplicas=[], elr=[], lastKnownElr=[], leader=1, "
        "leaderRecoveryState=RECOVERED, leaderEpoch=0, partitionEpoch=0). "
        "(org.apache.kafka.controller.ReplicationControlManager)",
        f"{d} partition change for t-0 with topic ID W: isr: [1, 2, 3] -> [1, 2], "
        "partitionEpoch: 0 -> 1 (org.apache.kafka.metadata.PartitionRegistration)",
        f"{d} partition change for t-0 with topic ID W: isr: [1, 2] -> [1], "
        "partitionEpoch: 2 -> 3 (org.apache.kafka.metadata.PartitionRegistration)",
        f"{d} partition change for t-0 with topic ID W: isr: [1] -> [1, 2], "
        "partitionEpoch: 3 -> 4 (org.apache.kafka.metadata.PartitionRegistration)",
    ]
    stamped = [f"[2025-02-11 11:15:{i:02d},000] {line}\n" for i, line in enumerate(lines)]
    path = tmp_path / "controller.log"
    path.write_text(stamped[0])
    seen: list[tuple[str, int]] = []
    verdicts = traces.follow_kafka_logs(
        [path], lambda v: seen.append((v.verdict, v.observations)), poll=0.5,
        sleep=_grow([path], [stamped[1:]], 1), idle=1.0)
    assert [v for v, _ in seen] == ["accepted", "rejected"], seen
    rejection = verdicts[0].rejection
    assert rejection is not None
    assert (rejection.line, rejection.rule.id) == (3, "partition-epoch-plus-one")
    assert "DEBUG" in rejection.detail
    batch = api.judge_logs([path], partition="all")
    assert [v.to_json() for v in batch] == [v.to_json() for v in verdicts]


def _batch_of(files: Sequence[LogFile]) -> list[dict[str, object]]:
    """The batch verdicts of ``files`` (name, text) as ``--follow`` shows them: none for
    logs without a line about a partition."""
    from isrlab.checker.validate import TraceFormatError
    from isrlab.spec.oracle.run import OracleOptions, judge_logs

    try:
        verdicts = judge_logs(files, OracleOptions("all"))
    except TraceFormatError:  # no line written yet
        return []
    return [v.to_json() for v in verdicts
            if not (v.partition == "-" and v.reason.startswith("none of the"))]


@pytest.mark.skipif(not real_cases(), reason="the corpus of real logs is not in this checkout")
@pytest.mark.parametrize("case", real_cases(), ids=lambda p: p.name)
def test_follow_gives_every_corpus_log_the_batch_verdict(case: Path, tmp_path: Path) -> None:
    """Each excerpt of tests/fixtures/oracle/real, written three lines of each file at a
    time while ``--follow``'s reader polls it, gets at every poll the verdicts the batch
    gives the same entries (each file up to its last complete entry), until the first
    rejection or the end of the files: the same lines judged, for the same reason."""
    from isrlab.services.traces import LogFollower

    logs = sorted(case.rglob("*.log"))
    paths = [tmp_path / f"{i}-{p.name}" for i, p in enumerate(logs)]
    chunks = [p.read_text(errors="replace").splitlines(keepends=True) for p in logs]
    for path in paths:
        path.write_text("")
    grow = _grow(paths, chunks, 3)
    follower = LogFollower(paths, partition="all")
    quiet, polls = 0, 0
    verdicts: list[Verdict] = []
    while quiet < 2:
        written, verdicts = follower.poll(flush=quiet > 0)
        polls += 1
        live = [v.to_json() for v in verdicts if v.observations]
        assert live == [v for v in _batch_of(follower.prefixes()) if v["observations"]], polls
        if any(v.verdict == "rejected" for v in verdicts):
            break
        quiet = 0 if written else quiet + 1
        grow(0.0)
    if not any(v.verdict == "rejected" for v in verdicts):  # read to the end, and quiet
        assert not any(chunks)
        whole = [(str(p), p.read_text(errors="replace")) for p in paths]
        assert [v.to_json() for v in verdicts if v.observations] == [
            v for v in _batch_of(whole) if v["observations"]]


def test_a_rejected_log_line_wrapped_over_several_lines_names_all_of_them() -> None:
    """A log line pasted wrapped over three lines is one entry: its rejection's ``line`` is
    the first, and ``where`` names the span, so the mutated third line is in it
    (tests/fixtures/oracle/real/mutated/kraft-unclean-drill-partition-epoch-skips)."""
    case = REAL / "mutated" / "kraft-unclean-drill-partition-epoch-skips"
    code, report = verdict(*sorted(case.glob("*.log")))
    rejected = report["rejected"]
    assert isinstance(rejected, dict) and code == 1
    assert rejected["line"] == 1 and str(rejected["where"]).endswith("drill.log:1-3")
    assert "partitionEpoch: 5 -> 7" in str(rejected["text"])


@pytest.mark.parametrize("transition", [
    f"Leader t-0 {TID} starts at leader epoch 0 from offset 0 with partition epoch 0, high "
    "watermark 0, ISR [1,x], adding replicas [] and removing replicas []. Previous leader "
    "epoch was -1.",
    "Follower t-0 starts at leader epoch 1 from offset zero with partition epoch 1 and high "
    "watermark 0. Current leader is 2. Previous leader epoch was 0.",
])
def test_a_transition_line_the_oracle_cannot_read_leaves_its_own_partition_not_covered(
        tmp_path: Path, transition: str) -> None:
    """A 2.7+ state-change line the oracle cannot read (a figure that is no number) names
    its partition in ``Leader t-0`` / ``Follower t-0``: that partition is not covered from
    there on, not one called ``epoch`` read from the line's ``partition epoch 0``."""
    path = log(tmp_path, "INFO [KafkaServer id=1] started (kafka.server.KafkaServer)",
               f"INFO [Broker id=1] {transition} (state.change.logger)")
    code, report = verdict(path)
    assert (code, report["verdict"], report["partition"]) == (4, "not-covered", "t-0"), report
    assert "server.log:2" in str(report["reason"])
