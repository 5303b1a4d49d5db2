"""The log oracle on a KRaft controller's lines, judged with the brokers' (issue 31, item 4),
and the smaller readings: 0.8-1.x fetcher resets, ``yy/MM/dd`` dates, two clusters in one
input.

Each line is written from the format string of the Kafka version the test names (the
controller's ``PartitionRegistration.diff`` / ``toString``, ``ClusterControlManager``'s
replay lines, ``BrokerLifecycleManager``, ``ReplicaFetcherThread``); every rule of
``isrlab.spec.oracle.rules`` that reads a controller line is broken by one line, and the same
log without that line is accepted."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from isrlab.cli import cli

C = "INFO [QuorumController id=1]"
D = "DEBUG [QuorumController id=1]"
CREATED = (f"{C} Replayed PartitionRecord for new partition t-0 with topic ID W and "
           "PartitionRegistration(replicas=[1, 2, 3], directories=[A, B, C], isr=[1, 2, 3], "
           "removingReplicas=[], addingReplicas=[], elr=[], lastKnownElr=[], leader=1, "
           "leaderRecoveryState=RECOVERED, leaderEpoch=0, partitionEpoch=0). "
           "(org.apache.kafka.controller.ReplicationControlManager)")
FENCE_1 = (f"{C} Replayed BrokerRegistrationChangeRecord modifying the registration for broker "
           "1: BrokerRegistrationChangeRecord(brokerId=1, brokerEpoch=5, fenced=1, "
           "inControlledShutdown=0, logDirs=[]) "
           "(org.apache.kafka.controller.ClusterControlManager)")
UNFENCE_1 = FENCE_1.replace("fenced=1", "fenced=-1")
ELECT_2 = (f"{D} partition change for t-0 with topic ID W: isr: [1, 2, 3] -> [2, 3], leader: "
           "1 -> 2, leaderEpoch: 0 -> 1, partitionEpoch: 0 -> 1")
SHRINK = f"{D} partition change for t-0 with topic ID W: isr: [2, 3] -> [2], partitionEpoch: 1 -> 2"
LEADER_2 = ("INFO [Broker id=2] Leader t-0 with topic id Some(W) starts at leader epoch 1 from "
            "offset 10 with partition epoch 1, high watermark 10, ISR [2,3], adding replicas [] "
            "and removing replicas []. Previous leader epoch was 0. (state.change.logger)")


def write(path: Path, lines: list[str], start: int = 0) -> Path:
    """A log file of ``lines``, each stamped one second after the previous (from ``start``)."""
    path.write_text("".join(f"[2025-02-11 11:15:{start + i:02d},000] {line}\n"
                            for i, line in enumerate(lines)))
    return path


def judge(*paths: Path | str) -> tuple[int, dict[str, object]]:
    outcome = CliRunner().invoke(cli, ["validate", "--json", *map(str, paths)])
    return outcome.exit_code, json.loads(outcome.output)


def notes(report: dict[str, object]) -> list[str]:
    """The notes of a verdict."""
    found = report["notes"]
    assert isinstance(found, list)
    return [str(n) for n in found]


def where(report: dict[str, object]) -> str:
    """Where a rejection is (``FILE:LINE``)."""
    r = report["rejected"]
    assert isinstance(r, dict)
    return str(r["where"])


def rejected(report: dict[str, object]) -> tuple[object, object]:
    """The rule and line of a rejection."""
    r = report["rejected"]
    assert isinstance(r, dict), report
    return r["rule"], r["line"]


def breaks(report: dict[str, object]) -> tuple[object, object, object]:
    """The invariant, the rule and the line of a ``breaks-invariant`` verdict."""
    r = report["at"]
    assert isinstance(r, dict) and report["verdict"] == "breaks-invariant", report
    return report["invariant"], r["rule"], r["line"]


CLEAN = [CREATED, FENCE_1, ELECT_2, SHRINK]


def test_a_fencing_and_failover_as_the_controller_logs_it_is_accepted(tmp_path: Path) -> None:
    code, report = judge(write(tmp_path / "controller.log", CLEAN))
    assert (code, report["verdict"], report["observations"]) == (0, "accepted", 4)
    assert report["mode"] == "kraft"


@pytest.mark.parametrize(("change", "rule"), [
    # the partition epoch skips one (PartitionRegistration.merge: +1 per record)
    ((2, ELECT_2.replace("partitionEpoch: 0 -> 1", "partitionEpoch: 0 -> 2")),
     "partition-epoch-plus-one"),
    # a change that starts from an earlier partition epoch than this controller replayed
    ((3, SHRINK.replace("partitionEpoch: 1 -> 2", "partitionEpoch: 0 -> 1")),
     "partition-epoch-plus-one"),
    # a leader change without a new leader epoch / with a leap
    ((2, ELECT_2.replace(", leaderEpoch: 0 -> 1", "")), "leader-epoch-on-leader-change"),
    ((2, ELECT_2.replace("leaderEpoch: 0 -> 1", "leaderEpoch: 0 -> 2")),
     "leader-epoch-on-leader-change"),
    # the fenced broker elected, or added back to the ISR
    ((2, ELECT_2.replace("leader: 1 -> 2", "leader: 2 -> 1")), "elected-is-active"),
    ((3, SHRINK.replace("[2, 3] -> [2]", "[2, 3] -> [2, 3, 1]")), "fenced-not-added-to-isr"),
    # a clean (not UNCLEAN) change electing outside the ISR
    ((2, ELECT_2.replace("isr: [1, 2, 3] -> [2, 3], leader: 1 -> 2",
                         "isr: [1, 3] -> [3], leader: 1 -> 2")), "leader-from-isr"),
    # an ISR member outside the replicas
    ((3, SHRINK.replace("[2, 3] -> [2]", "[2, 3] -> [2, 4]")), "isr-subset-replicas"),
])
def test_each_controller_rule_is_broken_by_one_line(
        tmp_path: Path, change: tuple[int, str], rule: str) -> None:
    lines = list(CLEAN)
    index, line = change
    lines[index] = line
    code, report = judge(write(tmp_path / "controller.log", lines))
    assert code == 1, report
    assert rejected(report) == (rule, index + 1)


def test_an_unfenced_broker_may_be_elected_again(tmp_path: Path) -> None:
    back = (f"{D} partition change for t-0 with topic ID W: leader: 2 -> 1, leaderEpoch: 1 -> 2, "
            "partitionEpoch: 2 -> 3")
    code, report = judge(write(tmp_path / "c.log", [*CLEAN[:3], UNFENCE_1,
                                                    SHRINK.replace("[2, 3] -> [2]",
                                                                   "[2, 3] -> [2, 3, 1]"),
                                                    back]))
    assert (code, report["verdict"]) == (0, "accepted"), report
    code, report = judge(write(tmp_path / "d.log", [*CLEAN[:3], back.replace(
        "partitionEpoch: 2 -> 3", "partitionEpoch: 1 -> 2")]))
    assert rejected(report) == ("elected-is-active", 4)


def test_the_controller_and_a_broker_are_judged_together(tmp_path: Path) -> None:
    """One metadata log: the broker's transition at partition epoch 1 carries the state the
    controller's record gave it (``ReplicaManager.applyDelta``)."""
    controller = write(tmp_path / "controller.log", CLEAN[:3])
    broker = write(tmp_path / "state-change.log", [LEADER_2], start=10)
    assert judge(controller, broker)[1]["verdict"] == "accepted"
    for wrong in (LEADER_2.replace("ISR [2,3]", "ISR [2,3,1]"),
                  LEADER_2.replace("leader epoch 1 from", "leader epoch 2 from")):
        broker = write(tmp_path / "state-change.log", [wrong], start=10)
        code, report = judge(controller, broker)
        assert code == 1
        assert rejected(report) == ("one-state-per-partition-epoch", 1)
        assert where(report).endswith("state-change.log:1")
        assert judge(broker)[1]["verdict"] == "accepted"  # alone, nothing contradicts it
    # the broker's line first (the controller's record replayed later, from a snapshot)
    early = write(tmp_path / "early.log", [LEADER_2.replace("ISR [2,3]", "ISR [2,3,1]")])
    later = write(tmp_path / "later.log", CLEAN[:3], start=30)
    code, report = judge(early, later)
    assert rejected(report) == ("one-state-per-partition-epoch", 3)
    assert where(report).endswith("later.log:3")


def test_unclean_and_elr_elections_as_the_controller_logs_them(tmp_path: Path) -> None:
    """``UNCLEAN partition change`` (``electionWasClean`` false): an unclean election Kafka
    made; the old leader's truncation below its HW is then no contradiction.  A leader from
    the ELR (KIP-966) is logged UNCLEAN too (the ISR was empty) and is clean."""
    unclean = ("INFO [QuorumController id=1] UNCLEAN partition change for t-0 with topic ID W: "
               "isr: [1] -> [2], leader: 1 -> 2, leaderRecoveryState: RECOVERED -> RECOVERING, "
               "leaderEpoch: 2 -> 3, partitionEpoch: 5 -> 6")
    follower = ("INFO [Broker id=1] Follower t-0 starts at leader epoch 3 from offset 58000 with "
                "partition epoch 6 and high watermark 58000. Current leader is 2. Previous "
                "leader epoch was 2. (state.change.logger)")
    truncate = ("INFO [ReplicaFetcher replicaId=1, leaderId=2, fetcherId=0] Truncating partition "
                "t-0 with TruncationState(offset=31000, completed=true) due to leader epoch and "
                "offset EpochEndOffset(errorCode=0, partition=0, leaderEpoch=3, endOffset=31000)")
    code, report = judge(write(tmp_path / "all.log", [unclean, follower, truncate]))
    assert (code, report["verdict"]) == (0, "accepted")
    assert any("unclean election of broker 2" in n for n in notes(report))
    code, report = judge(write(tmp_path / "brokers.log", [follower, truncate]))
    assert code == 3 and breaks(report) == (
        "NoCommittedRecordLost", "leader-no-truncate-below-hw", 2), report
    elr = unclean.replace("isr: [1] -> [2]", "isr: [] -> [2], elr: [2] -> []")
    code, report = judge(write(tmp_path / "elr.log", [elr]))
    assert (code, report["verdict"]) == (0, "accepted")
    assert any("from the ELR" in n for n in notes(report))


def test_broker_epochs_and_a_controller_replaying_from_its_snapshot(tmp_path: Path) -> None:
    """A new incarnation's epoch is above the old one; a registration change names the current
    epoch; an 'initial' registration of a broker the controller knew is a restarted
    controller replaying, not an epoch going back (``ClusterControlManager.replay``)."""
    def reg(how: str, epoch: int) -> str:
        return (f"{C} Replayed {how} broker 1: RegisterBrokerRecord(brokerId=1, "
                f"isMigratingZkBroker=false, incarnationId=X, brokerEpoch={epoch}, endPoints=[], "
                "features=[], rack=null, fenced=true, inControlledShutdown=false, logDirs=[]) "
                "(org.apache.kafka.controller.ClusterControlManager)")
    initial = reg("initial RegisterBrokerRecord for", 5)
    again = reg("RegisterBrokerRecord establishing a new incarnation of", 9)
    unfence = UNFENCE_1.replace("brokerEpoch=5", "brokerEpoch=9")
    code, report = judge(write(tmp_path / "c.log", [initial, again, unfence, initial, again]))
    assert (code, report["partition"], report["verdict"]) == (0, "-", "accepted"), report
    code, report = judge(write(tmp_path / "c.log", [initial, again, UNFENCE_1]))
    assert rejected(report) == ("broker-epoch-increases", 3)
    lower = initial.replace("initial RegisterBrokerRecord for",
                            "RegisterBrokerRecord establishing a new incarnation of")
    code, report = judge(write(tmp_path / "c.log", [again, lower]))
    assert rejected(report) == ("broker-epoch-increases", 2)
    mine = "INFO [BrokerLifecycleManager id=1] Successfully registered broker 1 with broker epoch"
    code, report = judge(write(tmp_path / "b.log", [f"{mine} 9", f"{mine} 5"]))
    assert rejected(report) == ("broker-epoch-increases", 2)


def test_fetcher_resets_of_0_8_to_3_x(tmp_path: Path) -> None:
    """0.8-0.11 ``Replica N for partition [t,0] reset its fetch offset from A to current
    leader L's latest offset B`` (a truncation Kafka made only with unclean election on:
    noted); 1.0+ ``Reset fetch offset ...`` below the HW held loses committed records."""
    old = ("WARN [ReplicaFetcherThread-0-1], Replica 2 for partition [t,0] reset its fetch "
           "offset from 20 to current leader 1's latest offset 10 "
           "(kafka.server.ReplicaFetcherThread)")
    hw = ("INFO Partition [t,0] on broker 2: Expanding ISR for partition [t,0] from 2 to 2,1 "
          "(kafka.cluster.Partition)")
    code, report = judge(write(tmp_path / "old.log", [hw, old]))
    assert (code, report["verdict"]) == (0, "accepted"), report
    assert any("unclean.leader.election.enable=true" in n for n in notes(report))
    held = ("INFO [Broker id=2] Follower t-0 starts at leader epoch 3 from offset 20 with high "
            "watermark 15. Current leader is 1. Previous leader epoch was 2. (state.change.logger)")
    new = ("WARN [ReplicaFetcher replicaId=2, leaderId=1, fetcherId=0] Reset fetch offset for "
           "partition t-0 from 20 to current leader's latest offset 12")
    code, report = judge(write(tmp_path / "new.log", [held, new]))
    assert code == 3 and breaks(report) == (
        "NoCommittedRecordLost", "leader-no-truncate-below-hw", 2), report
    code, report = judge(write(tmp_path / "ok.log", [held, new.replace("offset 12", "offset 17")]))
    assert (code, report["verdict"]) == (0, "accepted"), report


def test_yy_mm_dd_dates_are_timestamps(tmp_path: Path) -> None:
    """``%d{yy/MM/dd HH:mm:ss}`` (Spark's log4j pattern): the lines are merged by time with
    another file's ``[yyyy-MM-dd ...]`` lines."""
    lead = ("INFO [Broker id=1] Leader t-0 starts at leader epoch {} from offset 10 with high "
            "watermark 10 ISR [1]. Previous leader epoch was {}.")
    spark = tmp_path / "spark.log"
    spark.write_text(">>> 24/05/01 10:00:02 INFO state.change.logger: " + lead.format(4, 3) + "\n")
    other = tmp_path / "state-change.log"
    other.write_text("[2024-05-01 10:00:01,000] " + lead.format(5, 4) + "\n")
    code, report = judge(spark, other)
    assert code == 1  # epoch 4 (10:00:02) comes after epoch 5 (10:00:01)
    assert rejected(report) == ("epoch-monotonic", 1)
    assert where(report).endswith("spark.log:1")


def test_two_clusters_in_one_input_is_bad_input(tmp_path: Path) -> None:
    a = write(tmp_path / "a.log", ["INFO [KafkaServer id=1] Cluster ID = AAAA",
                                   "INFO [Partition t-0 broker=1] Expanding ISR from 1 to 1,2"])
    b = write(tmp_path / "b.log", ["INFO [BrokerLifecycleManager id=2] Incarnation X of broker "
                                   "2 in cluster BBBB is now STARTING.",
                                   "INFO [Partition t-0 broker=2] Expanding ISR from 2 to 2,1"])
    outcome = CliRunner().invoke(cli, ["validate", str(a), str(b)])
    assert outcome.exit_code == 2
    assert outcome.output.count("\n") == 1
    assert "two clusters' logs in one input: cluster ID BBBB" in outcome.output
    assert CliRunner().invoke(cli, ["validate", str(a)]).exit_code == 0


def test_the_model_engine_reads_a_follower_line_cut_before_its_previous_epoch(
        tmp_path: Path) -> None:
    """``--engine model`` on a pasted follower line without 'Previous leader epoch was'."""
    lines = ["INFO [Broker id=1] Leader t-0 starts at leader epoch 0 from offset 0 with high "
             "watermark 0 ISR [1,2] addingReplicas [] removingReplicas []. Previous leader epoch "
             "was -1. (state.change.logger)",
             "INFO [Broker id=2] Follower t-0 starts at leader epoch 0 from offset 0 with high "
             "watermark 0. Current leader is 1."]
    outcome = CliRunner().invoke(cli, ["validate", "--engine", "model",
                                       str(write(tmp_path / "s.log", lines))])
    assert (outcome.exit_code, outcome.output.split(":")[1].strip()) == (0, "ACCEPTED"), \
        outcome.output


def test_a_stale_view_does_not_judge_a_change(tmp_path: Path) -> None:
    """Pasted controller lines (no levels): the ISR of the snapshot's record is not the one
    a change nine partition epochs later starts from; only the line's own "before" (or a view
    known to be current) judges the election."""
    path = tmp_path / "pasted.log"
    path.write_text(
        "[QuorumController id=1] Replayed PartitionRecord for new partition t-0 with topic ID W "
        "and PartitionRegistration(replicas=[1, 2, 3], isr=[1, 2], leader=1, leaderEpoch=4, "
        "partitionEpoch=0)\n"
        "[QuorumController id=1] partition change for t-0 with topic ID W: leader: 1 -> 3, "
        "leaderEpoch: 4 -> 5, partitionEpoch: 9 -> 10\n")
    code, report = judge(path)
    assert (code, report["verdict"]) == (0, "accepted"), report
    path.write_text(path.read_text().replace("partitionEpoch: 9 -> 10", "partitionEpoch: 0 -> 1"))
    assert rejected(judge(path)[1]) == ("leader-from-isr", 2)


def test_the_controller_refusing_or_applying_an_alter_partition(tmp_path: Path) -> None:
    """A KRaft leader's ``Expanding ISR`` is a proposal: the controller's ``Rejecting
    AlterPartition ... ineligible replicas`` (KIP-841) leaves the ISR as it was, so the
    leader's next change starts from the old ISR; ``Node N has altered ISR`` applies it."""
    lead = ("INFO [Broker id=2] Leader t-0 with topic id Some(W) starts at leader epoch 1 from "
            "offset 10 with partition epoch 1, high watermark 10, ISR [2,3], adding replicas [] "
            "and removing replicas []. Previous leader epoch was 0. (state.change.logger)")
    expand = ("INFO [Partition t-0 broker=2] Expanding ISR from 2,3 to 2,3,1 "
              "(kafka.cluster.Partition)")
    refused = (f"{C} Rejecting AlterPartition request from node 2 for t-0 because it specified "
               "ineligible replicas [1] in the new ISR [2, 3, 1].")
    applied = f"{D} Node 2 has altered ISR for t-0 to [2, 3, 1]."
    shrink_from_old = ("INFO [Partition t-0 broker=2] Shrinking ISR from 2,3 to 2 "
                       "(kafka.cluster.Partition)")
    shrink_from_new = shrink_from_old.replace("from 2,3 to 2", "from 2,3,1 to 2")
    # (after 'altered', a change from 2,3 is possible too: the controller may remove broker 1
    # again without a line in the broker's log)
    cases = ((refused, shrink_from_old, True), (refused, shrink_from_new, False),
             (applied, shrink_from_new, True))
    for answer, next_line, ok in cases:
        code, report = judge(write(tmp_path / "s.log", [lead, expand, answer, next_line]))
        if ok:
            assert (code, report["verdict"]) == (0, "accepted"), (answer, next_line, report)
        else:
            assert rejected(report) == ("isr-change-from-current", 4), (answer, next_line)


HB = "(org.apache.kafka.controller.BrokerHeartbeatManager)"


@pytest.mark.parametrize("decision", [
    # BrokerHeartbeatManager.calculateNextBrokerState (3.0-4.x): SHUTDOWN_NOW and FENCED both
    # run ReplicationControlManager.handleBrokerFenced; the DEBUG lines of a request not yet
    # granted say the broker is still fenced / still in controlled shutdown
    f"{C} The request from broker 1 to shut down has been granted since the lowest active "
    f"offset 9223372036854775807 is now greater than the broker's controlled shutdown offset "
    f"93620. {HB}",
    f"{C} Unfenced broker 1 has requested and been granted an immediate shutdown. {HB}",
    f"{C} Unfenced broker 1 has requested and been granted fencing {HB}",
    f"{D} The request from broker 1 to unfence cannot yet be granted because it has not caught "
    f"up with the offset of its register broker record 17. It is still at offset 9. {HB}",
    f"{D} Broker 1 is in controlled shutdown state, but can not shut down because more leaders "
    f"still need to be moved. {HB}",
])
def test_a_heartbeat_decision_makes_the_broker_inactive_in_that_controllers_view(
        tmp_path: Path, decision: str) -> None:
    """The active controller's heartbeat decision about broker 1, in place of the replayed
    fencing record: the same controller electing broker 1 next breaks ``elected-is-active``;
    another controller (which fences only when it replays the record) may still replay an
    earlier election of it."""
    away = (f"{D} partition change for t-0 with topic ID W: leader: 1 -> 2, leaderEpoch: 0 -> 1, "
            "partitionEpoch: 0 -> 1")  # a preferred election: the ISR stays [1, 2, 3]
    back = (f"{D} partition change for t-0 with topic ID W: leader: 2 -> 1, leaderEpoch: 1 -> 2, "
            "partitionEpoch: 1 -> 2")
    code, report = judge(write(tmp_path / "c.log", [CREATED, away, decision, back]))
    assert code == 1 and rejected(report) == ("elected-is-active", 4), report
    other = back.replace("[QuorumController id=1]", "[QuorumController id=2]")
    code, report = judge(write(tmp_path / "d.log", [CREATED, away, decision, other]))
    assert (code, report["verdict"]) == (0, "accepted"), report
    code, report = judge(write(tmp_path / "e.log", [CREATED, away, back]))
    assert (code, report["verdict"]) == (0, "accepted"), report


def test_a_controller_renouncing_takes_back_what_it_had_not_committed(tmp_path: Path) -> None:
    """The active controller replays the records it writes before they are committed; when
    a write fails it renounces and reverts to its last committed offset
    (``EventHandlerExceptionInfo``: "Renouncing leadership and reverting to the last
    committed offset N", 3.3-4.x), and the next active controller may write another record
    at the same partition epoch.  After the renounce line the two records do not clash;
    without it they break ``one-leader-per-epoch``."""
    elect_2 = (f"{D} partition change for t-0 with topic ID W: leader: 1 -> 2, leaderEpoch: 0 -> "
               "1, partitionEpoch: 0 -> 1")
    renounce = (f"{C} writeNoOpRecord: event failed with NotLeaderException (treated as "
                "NotControllerException) at epoch 3056 in 1358 microseconds. Renouncing "
                "leadership and reverting to the last committed offset 93644. Exception message: "
                "Append failed because the replica is not the current leader "
                "(org.apache.kafka.controller.QuorumController)")
    elect_3 = elect_2.replace("leader: 1 -> 3", "").replace(
        "[QuorumController id=1]", "[QuorumController id=2]").replace("leader: 1 -> 2",
                                                                       "leader: 1 -> 3")
    replay_2 = CREATED.replace("[QuorumController id=1]", "[QuorumController id=2]")
    code, report = judge(write(tmp_path / "c.log", [CREATED, replay_2, elect_2, renounce,
                                                    elect_3]))
    assert (code, report["verdict"], report["observations"]) == (0, "accepted", 4), report
    code, report = judge(write(tmp_path / "d.log", [CREATED, replay_2, elect_2, elect_3]))
    assert code == 1 and rejected(report) == ("one-leader-per-epoch", 4), report
    # the renouncing controller's own view starts again: it may replay the new leader's record
    again = elect_3.replace("[QuorumController id=2]", "[QuorumController id=1]")
    code, report = judge(write(tmp_path / "e.log", [CREATED, replay_2, elect_2, renounce,
                                                    elect_3, again]))
    assert (code, report["verdict"]) == (0, "accepted"), report
