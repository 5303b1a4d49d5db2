"""The invariants of the KRaft era, checked beside the catalogue's with ``controller=kraft``.

Each is a predicate over the ``kafka`` state in KRaft mode (``isrlab.spec.kafka.kraft_state``),
named as Vanlightly/kafka-tlaplus's ``kraft`` specifications name their properties where
one exists; the docstring says what a violation means in a running cluster.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, cast

from isrlab.checker.model import Property
from isrlab.spec.kafka.kraft_state import KRaftState, replayed
from isrlab.spec.kafka.state import F_UNCLEAN, NONE, KafkaState, members

if TYPE_CHECKING:
    from isrlab.spec.kafka.partition import PartitionBridge

State = KafkaState


def _k(s: State) -> KRaftState:
    return cast(KRaftState, s.controller.kraft)


def metadata_log_matching(model: PartitionBridge, s: State) -> bool:
    """MetadataLogMatching: every live broker has published a prefix of the active
    controller's committed metadata log, and its ``Partition`` is what that prefix says
    (leader, leader epoch, a partition epoch no later than the controller's).

    Kafka's reasoning: a broker learns of partition changes only through
    ``MetadataLoader.handleCommit`` of committed batches, in log order
    (``RaftClient.Listener.handleCommit``), and ``ReplicaManager.applyDelta`` installs what
    the new image says (``makeLeader`` / ``makeFollower``); no broker may act on metadata the
    controller did not commit, nor skip back.  Violated: a broker leads or follows in an
    epoch the metadata log never gave it (a split brain the quorum exists to prevent).
    """
    k = _k(s)
    n = model.n
    total = len(k.batches)
    controller = replayed(k.base, k.batches, n)[0]
    for b, br in enumerate(s.brokers):
        a = k.applied[b]
        if not br.alive:
            if a != -1:
                return False
            continue
        if not 0 <= a <= total:
            return False
        part = replayed(k.base, k.batches[:a], n)[0]
        if (br.leader, br.leader_epoch) != (part[0], part[1]):
            return False
        if k.partition_epoch[b] > controller[2] or br.leader_epoch > controller[1]:
            return False
    return True


def replication_quorum_superset(model: PartitionBridge, s: State) -> bool:
    """ReplicationQuorumSuperset: a live leader in the controller's current leader epoch
    counts, for its HW and acks=all, an ISR (its maximal ISR: the committed one plus a
    pending joiner) that covers the controller's ISR.

    Kafka's reasoning: KIP-497 lets only the leader grow the ISR (its AlterPartition, whose
    joiner it counts before the controller answers: ``PendingExpandIsr.maximalIsr``), while
    the controller may shrink it (``handleBrokerFenced``) before the leader knows; so the
    leader's HW is never computed over fewer replicas than the controller may elect from.
    Violated: the HW rises over replicas the controller does not consider in sync while one
    it does lacks the records: a clean election then loses committed records.
    """
    ctrl = s.controller
    lead = ctrl.leader
    if lead == NONE:
        return True
    br = s.brokers[lead]
    if not br.alive or br.leader != lead or br.leader_epoch != ctrl.leader_epoch:
        return True
    maximal = br.in_sync_replica_ids | br.pending_isr
    return not ctrl.isr & ~maximal


def _holds_committed(model: PartitionBridge, s: State, b: int) -> bool:
    br = s.brokers[b]
    origin, per = s.ghost.origin, model.codec.epochs
    for rid, e in enumerate(s.ghost.committed):
        o = origin[rid]
        if e != NONE and (o >= len(br.log) or br.log[o] // per != rid):
            return False
    return True


def leader_completeness(model: PartitionBridge, s: State) -> bool:
    """LeaderCompleteness: the leader the active controller registered, while it runs,
    holds every committed record at its offset, as long as every election was clean.

    Kafka's reasoning: ``PartitionChangeBuilder.electLeader`` picks a clean leader from the
    ISR (every member has the records below the HW: the HW is the minimum LEO of the
    leader's maximal ISR) or, with KIP-966, from the ELR (members that left an ISR already
    below min ISR, while the HW could not move).  Violated: the controller hands leadership
    to a replica without a record consumers read, which it will then truncate from every
    follower (checked at the election, before ``NoCommittedRecordLost`` sees the new
    leader act).
    """
    if s.ghost.flags & F_UNCLEAN:
        return True
    lead = s.controller.leader
    if lead == NONE or not s.brokers[lead].alive:
        return True
    return _holds_committed(model, s, lead)


def min_isr_recovery_quorum(model: PartitionBridge, s: State) -> bool:
    """MinIsrRecoveryQuorum: with KIP-966's ELR, every member of the controller's ISR and
    ELR holds every committed record, except a member down after a power loss (the
    controller takes it out of both when it registers again), as long as every election was
    clean.

    Kafka's reasoning: with ELR the HW moves only while the ISR has min.insync.replicas
    members (``Partition.maybeIncrementLeaderHW``), a replica leaving an ISR below that size
    joins the ELR (``maybePopulateTargetElr``) and one that shut down uncleanly leaves both
    (``handleBrokerUncleanShutdown``, 3.8+): so ISR ∪ ELR is always a quorum that can recover
    every committed record.  Violated: the recovery set the controller elects from has lost
    committed data (KIP-966's "last replica standing").  Vacuous without ``elr``.
    """
    ctrl = s.controller
    if not model.cfg.elr or s.ghost.flags & F_UNCLEAN:
        return True
    for b in members(ctrl.isr | ctrl.elr):
        br = s.brokers[b]
        if not br.alive and br.unclean_shutdown:
            continue
        if not _holds_committed(model, s, b):
            return False
    return True


KRAFT_INVARIANTS: dict[str, Callable[[PartitionBridge, State], bool]] = {
    "MetadataLogMatching": metadata_log_matching,
    "ReplicationQuorumSuperset": replication_quorum_superset,
    "LeaderCompleteness": leader_completeness,
    "MinIsrRecoveryQuorum": min_isr_recovery_quorum,
}
"""The KRaft-era invariants in the order the checker tests them (after the catalogue's)."""


def kraft_invariants(model: PartitionBridge) -> list[Property[State]]:
    """The KRaft invariants bound to ``model``."""
    out: list[Property[State]] = []
    for name, f in KRAFT_INVARIANTS.items():
        doc = (f.__doc__ or "").strip().split("\n\n")[0]

        def bound(s: State, f: Callable[[PartitionBridge, State], bool] = f) -> bool:
            return f(model, s)

        out.append(Property(name, bound, doc))
    return out
