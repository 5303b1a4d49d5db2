"""The invariants of the KRaft era, checked beside the catalogue's with ``controller=kraft``.

Each is a predicate over the ``kafka`` state in KRaft mode (``isrlab.spec.kafka.kraft_state``),
named as Vanlightly/kafka-tlaplus's ``kraft`` specifications name their properties where
one exists; the docstring says what a violation means in a running cluster.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from typing import TYPE_CHECKING, Any, cast

from isrlab.checker.model import Property
from isrlab.spec._compiled import summary_of
from isrlab.spec.kafka.kraft_state import KRaftState
from isrlab.spec.kafka.metadata_loader import MetadataLoader
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
    # read untyped: the compiled model would copy each image into a fixed-length tuple
    assert isinstance(model, MetadataLoader)  # KRaftModel binds the KRaft invariants
    k = _k(s)
    total = len(k.batches)
    controller: Any = model.published_part(k, total)
    for b, br in enumerate(s.brokers):
        a = k.applied[b]
        if not br.alive:
            if a != -1:
                return False
            continue
        if not 0 <= a <= total:
            return False
        part: Any = model.published_part(k, a)
        if br.leader != part[0] or br.leader_epoch != part[1]:
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


def consistent_read(model: PartitionBridge, s: State) -> bool:
    """ConsistentRead: a live broker that leads in the active controller's current leader
    epoch holds, at its offset, every record that was ever below a leader's HW (the
    records a consumer may have read), as long as every election was clean.

    The KRaft specifications' ConsistentReadProperty: their ``inv_consumed`` is the log
    below the highest HW any leader reached (every such record readable), and a
    "non-stale" leader is one whose partition metadata has the controller's leader epoch;
    here ``ghost.committed`` marks the records once below a leader's HW (a record id is
    unique, so the id at its original offset is the spec's whole entry), and the leader
    is judged by its own ``Partition`` (it serves fetches in its own epoch) against the
    controller's ``PartitionRegistration``.  Kafka's reasoning: consumers fetch from the
    leader up to its HW (``Partition.fetchRecords``, ``FetchIsolation.HIGH_WATERMARK``), a
    record below a HW was on every member of the leader's maximal ISR
    (``maybeIncrementLeaderHW``), and the controller elects only from the ISR
    (``PartitionChangeBuilder.electLeader``; with KIP-966 the ELR, whose members left an
    ISR already below min ISR while the HW could not move), so the current leader serves
    the same records at the same offsets.  Unlike ``LeaderCompleteness`` it judges the
    broker that acts as the current leader, not the broker the controller named (the two
    differ while the new leader's loader lags); unlike ``NoCommittedRecordLost`` it does
    not excuse a leader of a newer epoch that the controller has since replaced, nor
    judge a stale one.  Violated: a consumer reading from the current leader finds a
    record it read before gone or replaced (KIP-966's "last replica standing": the last
    ISR member lost its unflushed tail in a power loss and was elected cleanly).
    """
    if s.ghost.flags & F_UNCLEAN:
        return True
    ctrl = s.controller
    for b, br in enumerate(s.brokers):
        if (br.alive and br.leader == b and br.leader_epoch == ctrl.leader_epoch
                and not _holds_committed(model, s, b)):
            return False
    return True


KRAFT_INVARIANTS: dict[str, Callable[[PartitionBridge, State], bool]] = {
    "MetadataLogMatching": metadata_log_matching,
    "ReplicationQuorumSuperset": replication_quorum_superset,
    "LeaderCompleteness": leader_completeness,
    "MinIsrRecoveryQuorum": min_isr_recovery_quorum,
    "ConsistentRead": consistent_read,
}
"""The KRaft-era invariants in the order the checker tests them (after the catalogue's)."""


def explain_metadata_log_matching(v: Mapping[str, Any]) -> str:
    """The live brokers' published metadata beside the active controller's."""
    c = v["controller"]
    views = []
    for b in _broker_ids(v):
        br = v[f"broker{b}"]
        if br.get("alive"):
            views.append(f"broker{b} published offset {br.get('metadata_applied', -1)} and "
                         f"acts on leader {br['leader']} epoch {br['leader_epoch']}"
                         f" (partition epoch {br.get('partition_epoch', -1)})")
    return (f"a live broker acts on metadata the active controller's committed log does not "
            f"give it at its published offset: the controller says leader {c['leader']} "
            f"epoch {c['leader_epoch']} (partition epoch {c.get('partition_epoch', -1)}); "
            + "; ".join(views))


def explain_replication_quorum_superset(v: Mapping[str, Any]) -> str:
    """Which member of the controller's ISR the leader does not count."""
    c = v["controller"]
    lead = c["leader"]
    br = v[f"broker{lead}"]
    counted = set(br.get("isr", ())) | set(br.get("pending_isr", ()))
    missing = [m for m in c["isr"] if m not in counted]
    pending = br.get("pending_isr", ())
    change = (f"an ISR change to {_ids(pending)} pending" if pending
              else "no ISR change pending")
    return (f"the controller's ISR {_ids(c['isr'])} has {_ids(missing)}, which the leader "
            f"broker{lead} (epoch {br['leader_epoch']}) does not count for its HW (its ISR "
            f"{_ids(br.get('isr', ()))}, {change}): the HW can rise past records a replica "
            "the controller may elect lacks")


def _lacking(v: Mapping[str, Any], b: int) -> list[str]:
    """The committed records broker ``b``'s log lacks."""
    held = {entry.split("@", 1)[0] for entry in v[f"broker{b}"]["log"]}
    return [rid for rid in v.get("committed", {}) if rid not in held]


def explain_leader_completeness(v: Mapping[str, Any]) -> str:
    """Which committed records the elected leader lacks."""
    lead = v["controller"]["leader"]
    br = v[f"broker{lead}"]
    return (f"the controller elected broker{lead} leader (epoch "
            f"{v['controller']['leader_epoch']}) though its log {list(br['log'])} lacks "
            f"committed record(s) {', '.join(_lacking(v, lead))}")


def explain_min_isr_recovery_quorum(v: Mapping[str, Any]) -> str:
    """Which ISR or ELR member lacks which committed records."""
    c = v["controller"]
    out = []
    for b in sorted(set(c["isr"]) | set(c.get("elr", ()))):
        lost = _lacking(v, b)
        br = v[f"broker{b}"]
        if lost and not (not br.get("alive") and br.get("unclean_shutdown")):
            out.append(f"broker{b} (in the controller's ISR {_ids(c['isr'])} or ELR "
                       f"{_ids(c.get('elr', ()))}) lacks committed record(s) "
                       f"{', '.join(lost)} (log {list(br['log'])})")
    return "; ".join(out)


def _broker_ids(v: Mapping[str, Any]) -> list[int]:
    return sorted(int(k[6:]) for k in v if k.startswith("broker") and k[6:].isdigit())


def _ids(ids: Iterable[int]) -> str:
    return "{" + ", ".join(f"broker{i}" for i in sorted(ids)) + "}"


def explain_consistent_read(v: Mapping[str, Any]) -> str:
    """Which broker leading in the controller's epoch lacks which committed records."""
    epoch = v["controller"]["leader_epoch"]
    out = []
    for b in _broker_ids(v):
        br = v[f"broker{b}"]
        if br.get("alive") and br["leader"] == b and br["leader_epoch"] == epoch:
            lost = _lacking(v, b)
            if lost:
                out.append(f"broker{b} leads in the controller's leader epoch {epoch} but its "
                           f"log {list(br['log'])} lacks record(s) {', '.join(lost)}, once "
                           "below a leader's HW (a consumer may have read them)")
    return "; ".join(out)


KRAFT_EXPLAIN: dict[str, Callable[[Mapping[str, Any]], str]] = {
    "MetadataLogMatching": explain_metadata_log_matching,
    "ReplicationQuorumSuperset": explain_replication_quorum_superset,
    "LeaderCompleteness": explain_leader_completeness,
    "MinIsrRecoveryQuorum": explain_min_isr_recovery_quorum,
    "ConsistentRead": explain_consistent_read,
}
"""Each KRaft invariant's ``Property.explain`` over the state's variables."""


def kraft_invariants(model: PartitionBridge) -> list[Property[State]]:
    """The KRaft invariants bound to ``model``."""
    out: list[Property[State]] = []
    for name, f in KRAFT_INVARIANTS.items():
        doc = summary_of(f)

        def bound(s: State, f: Callable[[PartitionBridge, State], bool] = f) -> bool:
            return f(model, s)

        out.append(Property(name, bound, doc, KRAFT_EXPLAIN[name]))
    return out
