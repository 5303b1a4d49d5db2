"""``ConsistentRead`` of the ``kafka`` model in KRaft mode (``controller=kraft``): the KRaft
specifications' ConsistentReadProperty over Kafka's state (``isrlab.spec.kafka.kraft_invariants``).
"""

from __future__ import annotations

from typing import Any

from isrlab.checker.bfs import CheckOptions, explore
from isrlab.checker.report import CheckResult
from isrlab.spec.kafka.config import KafkaConfig
from isrlab.spec.kafka.kraft_invariants import consistent_read
from isrlab.spec.kafka.kraft_model import KRaftModel
from isrlab.spec.kafka.state import F_UNCLEAN, KafkaState
from tests.spec.walks import walk

# The last-replica-standing scenario's parameters (docs/scenarios.md), buggy: KRaft <= 3.6.
LAST_REPLICA = dict(controller="kraft", kip903=True, kraft_epoch_bump="leader-change",
                    make_leader_equal_epoch="apply", crashes="unclean", initial_isr=1,
                    max_records=1, max_leader_epoch=2, isr_shrink=False)


def check(**kw: Any) -> CheckResult:
    m = KRaftModel(KafkaConfig(**kw), ("ConsistentRead",))
    return explore(m, CheckOptions())


def test_a_clean_election_of_the_replica_that_lost_its_tail_is_caught() -> None:
    # KIP-966's motivating case: the last ISR member loses the committed m0 in a power loss
    # and, without ELR and unclean detection, is elected again; once it leads in the
    # controller's epoch a consumer reading from it no longer finds m0.
    bug = check(**LAST_REPLICA, elr=False, unclean_detection="none")
    assert bug.violation is not None and bug.violation.invariant == "ConsistentRead"
    assert "PowerLoss(0)" in [step.action for step in bug.violation.trace]
    fixed = check(**LAST_REPLICA, elr=True, unclean_detection="previous-epoch")
    assert fixed.violation is None and fixed.complete


def test_the_equal_epoch_delta_breaks_it_and_the_candidate_fix_holds() -> None:
    # The equal-epoch-delta scenario's parameters: makeLeader re-installs an older ISR, the
    # HW rises over it and broker 1, elected cleanly, leads without m0.
    base = dict(controller="kraft", kip903=True, kraft_epoch_bump="leader-change", elr=True,
                unclean_detection="new-incarnation", max_records=1, max_leader_epoch=1)
    bug = check(**base, make_leader_equal_epoch="apply")
    assert bug.violation is not None
    fixed = check(**base, make_leader_equal_epoch="skip")
    assert fixed.violation is None and fixed.complete


def committed_state() -> tuple[KRaftModel, KafkaState]:
    """m0 produced and committed on both brokers (broker 0 leads epoch 0)."""
    m = KRaftModel(KafkaConfig(controller="kraft", max_records=1, crashes="none"), ())
    s = walk(m, "Produce(0)", "Fetch(1)", "Fetch(1)")
    assert s.ghost.committed[0] == 0 and s.brokers[0].high_watermark == 1
    return m, s


def test_it_judges_the_broker_leading_in_the_controllers_epoch() -> None:
    m, s = committed_state()
    assert consistent_read(m, s)
    emptied = s._replace(brokers=(s.brokers[0]._replace(log=()), s.brokers[1]))
    assert not consistent_read(m, emptied)
    # a leader of an older epoch than the controller's serves no consistent read: not judged
    stale = emptied._replace(controller=emptied.controller._replace(leader_epoch=1))
    assert consistent_read(m, stale)
    # a broker that is down serves nothing
    down = emptied._replace(brokers=(emptied.brokers[0]._replace(alive=0), s.brokers[1]))
    assert consistent_read(m, down)
    # after an unclean election the loss is by design (unclean.leader.election.enable)
    flagged = emptied._replace(ghost=emptied.ghost._replace(flags=F_UNCLEAN))
    assert consistent_read(m, flagged)


def test_it_is_registered_with_the_other_kraft_invariants() -> None:
    m = KRaftModel(KafkaConfig(controller="kraft"))
    names = [p.name for p in m.invariants()]
    assert names[-5:] == ["MetadataLogMatching", "ReplicationQuorumSuperset",
                          "LeaderCompleteness", "MinIsrRecoveryQuorum", "ConsistentRead"]
