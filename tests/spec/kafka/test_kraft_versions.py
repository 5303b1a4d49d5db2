"""The KRaft version parameters (``kraft_epoch_bump``, ``kip903``, ``unclean_detection``) away
from their defaults: what each release's code does, walked step by step, and the shortest
loss of a release without unclean-shutdown detection, whose length is argued by hand.

docs/kafka-model.md ("The version parameters, checked") has the complete searches; their
state counts are the model's own output and are not pinned here.  Line numbers are of
apache/kafka at the tag named in each comment.
"""

from __future__ import annotations

from typing import Any

from isrlab.checker.bfs import CheckOptions, explore
from isrlab.spec.kafka.config import KafkaConfig
from isrlab.spec.kafka.kraft_model import KRaftModel
from isrlab.spec.kafka.state import (
    ALTER_INELIGIBLE,
    ALTER_NEW_EPOCH,
    F_UNCLEAN,
    KafkaState,
    members,
)
from tests.spec.kafka.kraft_support import kraft, model
from tests.spec.walks import walk

LOSS = "NoCommittedRecordLost"


def holds(m: KRaftModel, name: str, s: KafkaState) -> bool:
    (prop,) = [p for p in m.invariants() if p.name == name]
    return prop.holds(s)


def checking(names: tuple[str, ...], **kw: Any) -> KRaftModel:
    """The KRaft model with the parameters ``kw``, checking only ``names``."""
    return KRaftModel(KafkaConfig(controller="kraft", **kw), names)


# --- kraft_epoch_bump=isr-shrink (3.0-3.5) -------------------------------------------------

SHRINK = ("Tick", "ShrinkIsr(0)", "AlterPartition(0)")


def test_a_shrink_answer_in_a_bumped_leader_epoch_is_ignored() -> None:
    # 3.5.0: the controller's shrink record sets the leader to the current one
    # (PartitionChangeBuilder.triggerLeaderEpochBumpIfNeeded l. 264-270), so the merged
    # registration has leader epoch 1, and alterPartition answers with it
    # (ReplicationControlManager l. 997 merges the record, l. 1044 setLeaderEpoch).  The
    # leader, still in epoch 0, ignores the answer ("stale leader epoch",
    # Partition.handleAlterPartitionUpdate l. 1855-1858): its proposal stays pending and its
    # partition epoch stays 0 until its MetadataLoader publishes the record, whose epoch 1
    # makeLeader applies (l. 671: only an older partition epoch is skipped).
    m = model(kraft_epoch_bump="isr-shrink", make_leader_equal_epoch="skip")
    s = walk(m, *SHRINK)
    assert s.brokers[0].alter_partition == ALTER_NEW_EPOCH
    assert (s.controller.leader_epoch, s.controller.isr) == (1, 0b01)
    s = walk(m, *SHRINK, "AlterPartitionResponse(0)")
    br = s.brokers[0]
    assert (br.leader_epoch, br.in_sync_replica_ids, br.pending_isr) == (0, 0b11, 0b01)
    assert kraft(s).partition_epoch[0] == 0
    assert "ShrinkIsr(0)" not in [a for a, _ in m.next_states(s)]  # still pending
    s = walk(m, *SHRINK, "AlterPartitionResponse(0)", "HandleCommit(0)")
    br = s.brokers[0]
    assert (br.leader_epoch, br.in_sync_replica_ids, br.pending_isr) == (1, 0b01, 0)
    assert holds(m, "MetadataLogMatching", s)


def test_a_shrink_answer_without_a_bump_commits_the_isr() -> None:
    # 3.6+ (leader-change): the record keeps the leader epoch, the answer carries 0 and the
    # leader commits ISR {0} and partition epoch 1 from it (l. 1869-1870 at 3.5.0's lines).
    m = model(make_leader_equal_epoch="skip")
    s = walk(m, *SHRINK, "AlterPartitionResponse(0)")
    br = s.brokers[0]
    assert (br.leader_epoch, br.in_sync_replica_ids, br.pending_isr) == (0, 0b01, 0)
    assert kraft(s).partition_epoch[0] == 1


# --- kip903=false under KIP-966's detection: still KAFKA-14139 -----------------------------

# The defaults (ELR, new-incarnation detection) with kip903=false and a replaced disk: the
# kafka14139 scenario's story (docs/scenarios.md #14) from the default ISR {0, 1}, so the
# leader first shrinks broker 1 out (Tick, ShrinkIsr, AlterPartition) and publishes it
# (HandleCommit(0)) before m0 commits on broker 0 alone.  Broker 1 then fetches m0 twice and
# the leader proposes ISR {0, 1}; broker 1 crashes, its disk is replaced, it is fenced and
# registers again: a new incarnation, so 3.9+ runs handleBrokerUncleanShutdown, which finds
# broker 1 in neither the ISR nor the ELR and writes nothing.  The stale proposal then
# passes 3.4.0's ineligibleReplicasForIsr (l. 1148: registered, unfenced; no broker epoch)
# and broker 1, empty, is elected when broker 0 fails.
KAFKA14139 = ("Tick", "ShrinkIsr(0)", "AlterPartition(0)", "Produce(0)", "Fetch(1)",
              "HandleCommit(0)", "Fetch(1)", "Crash(1)", "ReplaceDisk(1)", "FenceBroker(1)",
              "RegisterBroker(1)", "HandleCommit(0,2)", "UnfenceBroker(1)",
              "AlterPartition(0)", "Crash(0)", "HandleCommit(1,2)", "FenceBroker(0)",
              "HandleCommit(1)")


def test_unclean_detection_does_not_stop_kafka14139_without_kip903() -> None:
    m = model(kip903=False, empty_disk=True, max_records=1, make_leader_equal_epoch="skip")
    at_registration = walk(m, *KAFKA14139[:11])
    assert at_registration.controller.isr == 0b01 and at_registration.controller.elr == 0
    s = walk(m, *KAFKA14139)
    assert (s.brokers[1].leader, s.brokers[1].log) == (1, ())
    assert not holds(m, LOSS, s)


def test_a_power_loss_is_the_same_story_one_step_shorter() -> None:
    # KIP-903's other case: broker 1 loses its unflushed m0 to a power loss (one step for
    # Crash(1) and ReplaceDisk(1)); its registration without the clean-shutdown file is
    # unclean, and again it is in neither the ISR nor the ELR.
    steps = tuple(step for step in KAFKA14139 if step != "ReplaceDisk(1)")
    steps = tuple("PowerLoss(1)" if step == "Crash(1)" else step for step in steps)
    m = model(kip903=False, crashes="unclean", max_records=1, make_leader_equal_epoch="skip")
    s = walk(m, *steps)
    assert (s.brokers[1].leader, s.brokers[1].log) == (1, ())
    assert not holds(m, LOSS, s)


def test_kip903_refuses_the_stale_proposal_under_the_defaults() -> None:
    # 3.5.0 ineligibleReplicasForIsr l. 1180: the proposal carries broker 1's epoch from its
    # last fetch, the registration holds the new incarnation's: INELIGIBLE_REPLICA.
    m = model(empty_disk=True, max_records=1, make_leader_equal_epoch="skip")
    s = walk(m, *KAFKA14139[:14])
    assert s.brokers[0].alter_partition == ALTER_INELIGIBLE
    assert members(s.controller.isr) == (0,)


# --- unclean_detection with ELR and power losses ------------------------------------------

# The shortest clean election losing m0 with ELR but no detection (3.7 with the ELR
# metadata version: ClusterControlManager.registerBroker l. 340-341 at 3.7.0 only logs,
# "TODO(KIP-966)"), counted by hand: 1 Init (ISR {0, 1})  2 broker 1 crashes  3 it is
# fenced, ISR {0}  4 m0 is produced  5 broker 0 publishes ISR {0}: the HW rises, m0
# committed (not flushed)  6 broker 0 loses power: m0 gone  7 it is fenced: the ISR empties
# into the ELR {0}  8 it registers, not detected  9 it is unfenced and elected from the
# ELR, cleanly  10 it publishes: it leads epoch 2 without m0.  Broker 1 must leave the ISR
# before m0 commits on broker 0 alone, and two steps (crash, fence) are the fewest with the
# ISR shrink off; the rest is the last-replica-standing story (docs/scenarios.md #15).
ELR_LOSS = ("Crash(1)", "FenceBroker(1)", "Produce(0)", "HandleCommit(0)", "PowerLoss(0)",
            "FenceBroker(0)", "RegisterBroker(0)", "UnfenceBroker(0)", "HandleCommit(0)")
POWER = {"crashes": "unclean", "max_records": 1, "isr_shrink": False,
         "make_leader_equal_epoch": "skip"}


def test_elr_without_unclean_detection_loses_a_committed_record_in_ten_states() -> None:
    result = explore(checking((LOSS,), unclean_detection="none", **POWER), CheckOptions())
    assert result.violation is not None and result.violation.invariant == LOSS
    assert tuple(step.action for step in result.violation.trace) == ("Init", *ELR_LOSS)


def test_unclean_detection_makes_that_election_unclean() -> None:
    # 3.8 (previous-epoch) and 3.9+ (new-incarnation): registering without the clean-shutdown
    # epoch takes broker 0 out of the ELR (handleBrokerUncleanShutdown); ISR and ELR are
    # empty with broker 0 the one last-known ELR member, so PartitionChangeBuilder's
    # canElectLastKnownLeader (trunk l. 291-319, which only logs the leader's acceptability)
    # elects it at once as an unclean election (RECOVERING): no clean election loses m0.
    for detection in ("previous-epoch", "new-incarnation"):
        m = model(unclean_detection=detection, **POWER)
        s = walk(m, *ELR_LOSS[:7])
        assert (s.controller.leader, s.controller.isr, s.controller.elr) == (0, 0b01, 0)
        assert s.ghost.flags & F_UNCLEAN  # an unclean election: NoCommittedRecordLost waived
        assert holds(m, LOSS, s)


def test_without_elr_the_same_steps_are_the_last_replica_standing_of_3_4() -> None:
    # 3.3-3.4 (no ELR, no detection, the epoch bumped on a shrink): fencing the last ISR
    # member keeps it in the ISR of the leaderless partition (generateLeaderAndIsrUpdates),
    # so UnfenceBroker(0) elects it from the ISR, cleanly; each fence bumps the epoch, so
    # the story needs epochs 0..3.
    m = model(kip903=False, kraft_epoch_bump="isr-shrink", elr=False,
              unclean_detection="none", max_leader_epoch=3, **POWER)
    s = walk(m, *ELR_LOSS[:6])
    assert (s.controller.leader, s.controller.isr, s.controller.elr) == (-1, 0b01, 0)
    s = walk(m, *ELR_LOSS)
    assert (s.brokers[0].leader, s.brokers[0].log) == (0, ())
    assert not s.ghost.flags & F_UNCLEAN and not holds(m, LOSS, s)
