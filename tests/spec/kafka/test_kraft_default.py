"""The ``kafka`` model's defaults are KRaft's (issue 32), and what they find.

The default (``controller=kraft``, ``make_leader_equal_epoch=apply``) does what Kafka's code
does, and ``isrlab check --model kafka`` then reports ``ReplicationQuorumSuperset`` violated:
docs/findings/kraft-equal-epoch-delta.md.  No state count of the KRaft spaces is pinned (no
independent source has them); the tests assert verdicts, and the traces are argued from
Kafka's code step by step in their comments and walked by their labels.
"""

from __future__ import annotations

from typing import Any

from click.testing import CliRunner

from isrlab.checker.bfs import CheckOptions, explore
from isrlab.cli import cli
from isrlab.spec.kafka.config import KafkaConfig
from isrlab.spec.kafka.kraft_model import KRaftModel
from isrlab.spec.kafka.registration import build
from isrlab.spec.kafka.state import KafkaState
from tests.spec.walks import walk

SUPERSET = "ReplicationQuorumSuperset"

# The shortest violation of ReplicationQuorumSuperset, argued from Kafka's code (line numbers
# of core/src/main/scala/kafka/cluster/Partition.scala at 3.8.0).  Initially the controller and
# the leader, broker 0, agree on ISR {0, 1}.  For the controller's ISR to hold a broker the
# leader does not count, the leader must first learn a smaller ISR by its own AlterPartition
# (only then does it know the partition epoch before its MetadataLoader publishes the
# record): replica.lag.time.max.ms passes (Tick), the isr-expiration task proposes {0}
# (ShrinkIsr(0), maybeShrinkIsr l. 1243), the controller accepts it, partition epoch 1
# (AlterPartition(0)), and the answer commits it with partitionEpoch = 1
# (AlterPartitionResponse(0), handleAlterPartitionUpdate l. 1972-1973).  Then the ISR must
# grow again at the controller: broker 1 catches up and the leader proposes {0, 1}
# (Fetch(1), maybeExpandIsr l. 1022, prepareIsrExpand), the controller accepts it, partition
# epoch 2 (AlterPartition(0)).  Last, the leader must stop counting broker 1 while the
# controller still has it: its MetadataLoader publishes the epoch-1 record alone
# (HandleCommit(0)); 1 is not below 1, so makeLeader (l. 724) does not skip it and
# updateAssignmentAndIsr (l. 1005) installs CommittedPartitionState({0}) over the pending
# expansion.  Seven steps, none removable; the breadth-first search finds them in this order.
SHORTEST = ("Tick", "ShrinkIsr(0)", "AlterPartition(0)", "AlterPartitionResponse(0)",
            "Fetch(1)", "AlterPartition(0)", "HandleCommit(0)")

# With a leader crash, acknowledged data is lost: the seven steps above with the tick that
# makes broker 1 no longer caught up (so maybeIncrementLeaderHW, l. 1166-1190, does not
# wait for it: shouldWaitForReplicaToJoinIsr is false), broker 1 publishing both records
# (HandleCommit(1,2): max_metadata_lag=2 lets the controller write the next batch only then),
# a produce whose HW rises over ISR {0} (m0 committed and acknowledged), the leader's
# crash, its fencing (the controller elects broker 1 from its ISR {0, 1}) and broker 1
# leading without m0.
LOSS = ("Tick", "ShrinkIsr(0)", "AlterPartition(0)", "AlterPartitionResponse(0)", "Fetch(1)",
        "AlterPartition(0)", "Tick", "HandleCommit(1,2)", "HandleCommit(0)", "Produce(0)",
        "Crash(0)", "FenceBroker(0)", "HandleCommit(1)")


def kraft(**kw: Any) -> KRaftModel:
    return KRaftModel(KafkaConfig(**kw))


def holds(m: KRaftModel, name: str, s: KafkaState) -> bool:
    (prop,) = [p for p in m.invariants() if p.name == name]
    return prop.holds(s)


def test_the_defaults_are_kraft_with_kafkas_own_make_leader() -> None:
    config = KafkaConfig()
    assert (config.controller, config.make_leader_equal_epoch) == ("kraft", "apply")
    assert config.problems() == []
    assert isinstance(build({}), KRaftModel)
    assert not isinstance(build({"controller": "zookeeper"}), KRaftModel)


def test_the_default_check_finds_the_equal_epoch_delta_in_eight_states() -> None:
    result = explore(kraft(), CheckOptions())
    assert result.violation is not None and result.violation.invariant == SUPERSET
    assert tuple(step.action for step in result.violation.trace) == ("Init", *SHORTEST)


def test_the_walk_leaves_the_leader_counting_less_than_the_controllers_isr() -> None:
    m = kraft()
    before = walk(m, *SHORTEST[:-1])
    leader = before.brokers[0]
    assert (leader.in_sync_replica_ids, leader.pending_isr | leader.in_sync_replica_ids) == (
        0b01, 0b11)  # committed {0}, the expansion to {0, 1} pending
    assert before.controller.isr == 0b11 and holds(m, SUPERSET, before)
    after = walk(m, *SHORTEST)
    assert after.brokers[0].in_sync_replica_ids | after.brokers[0].pending_isr == 0b01
    assert after.controller.isr == 0b11 and not holds(m, SUPERSET, after)
    # the candidate fix skips the delta of the leader's own partition epoch: the same walk
    # keeps the pending expansion
    fixed = kraft(make_leader_equal_epoch="skip")
    kept = walk(fixed, *SHORTEST)
    assert kept.brokers[0].in_sync_replica_ids | kept.brokers[0].pending_isr == 0b11
    assert holds(fixed, SUPERSET, kept)


def test_with_a_leader_crash_the_acknowledged_record_is_lost() -> None:
    m = kraft()
    lost = walk(m, *LOSS)
    assert lost.brokers[1].leader == 1 and lost.brokers[1].log == ()
    for name in ("NoCommittedRecordLost", "AcknowledgedWritesDurable",
                 "AckedAllSurvivesCleanElection"):
        assert not holds(m, name, lost), name
    # under the fix the produce finds broker 1 still counted (pending expansion): the HW
    # stays 0 and nothing is acknowledged
    assert walk(m, *LOSS[:10]).brokers[0].high_watermark == 1
    fixed = kraft(make_leader_equal_epoch="skip")
    produced = walk(fixed, *LOSS[:10])
    assert produced.brokers[0].high_watermark == 0 and produced.ghost.pending == ((0, 0),)


def test_the_command_reports_the_violation_with_its_explanation_and_exit_1() -> None:
    result = CliRunner().invoke(cli, ["check", "--model", "kafka", "--no-progress"])
    assert result.exit_code == 1, result.output
    assert f"VIOLATION of {SUPERSET} (trace of 8 states)" in result.output
    assert f"Why State 8 breaks {SUPERSET}: the controller's ISR {{broker0, broker1}} has " \
           "{broker1}, which the leader broker0" in result.output


def test_the_candidate_fix_holds_every_invariant_in_small_bounds() -> None:
    bounds = {"max_records": 1, "max_leader_epoch": 1}
    assert explore(kraft(**bounds), CheckOptions()).violation is not None
    result = explore(kraft(make_leader_equal_epoch="skip", **bounds), CheckOptions())
    assert result.violation is None and result.complete
    assert {s.name for s in result.sometimes if s.reached} == {
        "SomeRecordCommitted", "SomeWriteAcknowledged", "LeaderChanged", "SomeTruncation"}


def test_before_3_6_two_expansions_on_three_brokers_break_it_too() -> None:
    # Kafka 3.3-3.5 (kraft_epoch_bump=isr-shrink) bump the leader epoch on an ISR shrink, so
    # the shrink's AlterPartition answer carries another leader epoch and is ignored
    # (handleAlterPartitionUpdate, 3.5.0 l. 1855): the leader never learns a shrink's
    # partition epoch first.  An expansion keeps the leader epoch, so two expansions do it:
    # broker 2 joins (Fetch(2), accepted, answered: partition epoch 1), broker 1 joins
    # (Fetch(1), accepted: epoch 2), and the leader publishes the epoch-1 record {0, 2}.
    bounds: dict[str, Any] = {"kraft_epoch_bump": "isr-shrink", "brokers": 3,
                              "initial_isr": 1, "max_records": 0, "max_leader_epoch": 0,
                              "crashes": "none"}
    result = explore(KRaftModel(KafkaConfig(**bounds), [SUPERSET]), CheckOptions())
    assert result.violation is not None
    assert tuple(step.action for step in result.violation.trace) == (
        "Init", "Fetch(2)", "AlterPartition(0)", "AlterPartitionResponse(0)", "Fetch(1)",
        "AlterPartition(0)", "HandleCommit(0)")
    fixed = explore(KRaftModel(KafkaConfig(make_leader_equal_epoch="skip", **bounds)),
                    CheckOptions())
    assert fixed.violation is None and fixed.complete


def test_every_invariant_of_the_default_model_has_its_words() -> None:
    """``isrlab models kafka`` printed the KRaft invariants without a description: compiled by
    mypyc they carry no docstring, and their words now come from the module's source, as the
    catalogue's do."""
    model = build({})
    for prop in (*model.invariants(), *model.sometimes()):
        assert prop.doc, prop.name
