"""The invariant catalogue: what a Kafka user expects of replication, as named predicates.

Each ``kafka_*`` function below is one property of the ``kafka`` cluster model
(``isrlab.spec.kafka``), a pure predicate on its state tuples (layout: ``isrlab.spec.kafka.state``);
its
docstring says what a violation means to someone running Kafka.  ``kafka_invariants(model)``
lists them as ``isrlab.checker.model.Property`` values in catalogue order (``INVARIANT_NAMES``),
``kafka_sometimes(model)`` the reachability witnesses.

The TLA+-faithful family (``isrlab.spec.tla``) has its own state layout; its ``WeakIsr`` and
``StrongIsr`` are the methods ``TlaModel.weak_isr`` / ``strong_isr`` (re-exported here as
``tla_weak_isr`` / ``tla_strong_isr``).  The ``kafka`` versions below state the same
properties over the ``kafka`` layout.

Terms: an *acting leader* is a live broker whose partition state names itself leader (it
may be stale: its epoch can be older than ZooKeeper's).  Properties about lost data compare a
record's ghost epoch (the leader epoch in which it was first committed, acknowledged or
consumed) with the epochs of acting leaders: a leader of that epoch or a later one must hold
the record at the offset it was written at.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any, Final

from isrlab.checker.model import Property
from isrlab.spec._compiled import summary_of
from isrlab.spec.kafka.params import Acks
from isrlab.spec.kafka.partition import PartitionBridge
from isrlab.spec.kafka.state import (
    F_CHECKPOINT_LOST,
    F_EPOCH_REGRESSED,
    F_HALTED,
    F_TRUNCATED,
    F_TWO_LEADERS,
    F_UNCLEAN,
    NONE,
    KafkaState,
    mask_of,
    members,
)
from isrlab.spec.tla.model import TlaModel

State = KafkaState

tla_weak_isr = TlaModel.weak_isr
tla_strong_isr = TlaModel.strong_isr


_LAST_ACTING: Final[list[object]] = [None, ()]
"""The broker tuple ``_acting_leaders`` last saw and its answer: the invariants of one state
are evaluated one after another, and nine of them ask (held here, the tuple cannot be
freed and its address reused while it is compared by identity)."""


def _acting_leaders(s: State) -> tuple[int, ...]:
    brokers = s.brokers
    if brokers is _LAST_ACTING[0]:
        return _LAST_ACTING[1]  # type: ignore[return-value]  # stored just below
    leaders = tuple(b for b, br in enumerate(brokers) if br.alive and br.leader == b)
    _LAST_ACTING[0], _LAST_ACTING[1] = brokers, leaders
    return leaders


# ---------------------------------------------------------------------------------------
# Offsets
# ---------------------------------------------------------------------------------------


def hw_le_leo(s: State) -> bool:
    """HwLeLeo: every replica's high watermark is at most its log end offset.

    Violated: a consumer could be told a record is committed that the replica serving it
    does not even have (fetches at offsets up to HW would fail).
    """
    return all(br.high_watermark <= len(br.log) for br in s.brokers)


def lso_le_hw(model: PartitionBridge, s: State) -> bool:
    """LsoLeHw: the last stable offset (``isrlab.core.state.last_stable_offset``) is at most the HW.

    Violated: a read_committed consumer could read records that are not yet committed.
    (The model opens no transactions, so here LSO = HW; the check keeps ``core``'s
    definition honest on every reachable partition.)
    """
    return all(model.broker_lso_le_hw(br, b) for b, br in enumerate(s.brokers) if br.alive)


# ---------------------------------------------------------------------------------------
# Leaders, ISR, epochs
# ---------------------------------------------------------------------------------------


def leader_in_isr_subset_ar(s: State) -> bool:
    """LeaderInIsr: ZooKeeper's leader is in its ISR, the ISR within the assigned replicas;
    every acting leader is in the ISR it tracks.

    Violated: the controller or a leader keeps a replica set from which a clean election or
    the HW computation would be wrong (``kafka-topics --describe`` shows a leader outside
    its ISR).
    """
    ctrl = s.controller
    ar_mask = mask_of(ctrl.assigned_replicas)
    if ctrl.isr & ~ar_mask:
        return False
    if ctrl.leader != NONE and not ctrl.isr >> ctrl.leader & 1:
        return False
    return all(s.brokers[b].in_sync_replica_ids >> b & 1
               and not s.brokers[b].in_sync_replica_ids & ~ar_mask
               for b in _acting_leaders(s))


def isr_non_empty(s: State) -> bool:
    """IsrNonEmpty: ZooKeeper's ISR and every acting leader's ISR have a member.

    Violated: Kafka's ``assert(newInSyncReplicas.size > 0)`` fails; no clean election is
    possible any more.  (With KIP-966, ``elr``, an offline partition's ISR may be empty
    while its ELR or last-known ELR keeps the replicas it came from.)
    """
    ctrl = s.controller
    offline_elr = ctrl.leader == NONE and (ctrl.elr | ctrl.last_known_elr) != 0
    return (ctrl.isr != 0 or offline_elr) and all(
        s.brokers[b].in_sync_replica_ids != 0 for b in _acting_leaders(s)
    )


def epochs_never_decrease(s: State) -> bool:
    """EpochsNeverDecrease: no live broker ever adopts a smaller leader epoch than it had.

    Violated: a stale LeaderAndIsr request (lost, reordered, old controller) rolled a broker
    back to an old leader, which can then accept writes or serve fetches it must refuse.
    (Ghost: a flag the LeaderAndIsr handling sets; a restart legitimately forgets the epoch.)
    """
    return not s.ghost.flags & F_EPOCH_REGRESSED


def one_leader_per_epoch(s: State) -> bool:
    """OneLeaderPerEpoch: at most one broker ever leads a given leader epoch.

    Violated: two brokers accepted writes tagged with the same epoch, so epoch-based
    truncation (KIP-101) can no longer tell their histories apart.  (Ghost: the first
    leader of every epoch is remembered; also checked directly on acting leaders.)
    """
    return not s.ghost.flags & F_TWO_LEADERS and _acting_epochs_distinct(s)


def _acting_epochs_distinct(s: State) -> bool:
    """No two acting leaders of ``s`` lead the same epoch (``one_leader_per_epoch``'s check
    on the brokers alone)."""
    seen: set[int] = set()
    for b in _acting_leaders(s):
        e = s.brokers[b].leader_epoch
        if e in seen:
            return False
        seen.add(e)
    return True


# ---------------------------------------------------------------------------------------
# Replicated logs
# ---------------------------------------------------------------------------------------


def _replicated_below_hw(s: State, quorum: bool) -> bool:
    brokers = s.brokers
    for b in _acting_leaders(s):
        br = brokers[b]
        hw = br.high_watermark
        if hw == 0:
            continue
        prefix = br.log[:hw]
        mask = s.controller.isr if quorum else br.in_sync_replica_ids
        for m in members(mask):
            if brokers[m].log[:hw] != prefix:
                return False
    return True


def weak_isr(s: State) -> bool:
    """WeakIsr: every record below an acting leader's HW is, at the same offset, in the log
    of every member of the ISR that leader tracks (the TLA+ specification's WeakIsr).

    Violated: the leader let consumers read a record that a replica it counts as in sync
    does not have; electing that replica loses the record.
    """
    return _replicated_below_hw(s, quorum=False)


def strong_isr(s: State) -> bool:
    """StrongIsr: every record below an acting leader's HW is in the log of every member of
    ZooKeeper's ISR (the TLA+ specification's StrongIsr).

    Violated: any ZooKeeper ISR member may be elected next, cleanly, and a record consumers
    already read would then be gone.
    """
    return _replicated_below_hw(s, quorum=True)


def log_matching(s: State) -> bool:
    """LogMatching: any two live replicas that know a leader epoch hold the same records
    below the smaller of their HWs.

    Violated: the replicas' logs diverged at an offset both consider committed; consumers
    reading the same offset from different leaders see different records.  A dead replica,
    or one restarted and not yet told the current state, is left out: it has not yet had
    its chance to truncate (with ``crashes=unclean`` its HW may cover records it kept while
    the others lost them in the same power loss).
    """
    live = [br for br in s.brokers if br.alive and br.leader_epoch != NONE]
    n = len(live)
    for i in range(n):
        li, hi = live[i].log, live[i].high_watermark
        for j in range(i + 1, n):
            h = min(hi, live[j].high_watermark)
            if h and li[:h] != live[j].log[:h]:
                return False
    return True


def _held_by_later_leaders(model: PartitionBridge, s: State, epochs: tuple[int, ...]) -> bool:
    """Every record with a ghost epoch ``e >= 0`` is, at its original offset, in the log of
    every acting leader of epoch ``>= e``."""
    origin = s.ghost.origin
    epochs_per_record = model.codec.epochs
    for b in _acting_leaders(s):
        br = s.brokers[b]
        log, epoch = br.log, br.leader_epoch
        for rid, e in enumerate(epochs):
            if e == NONE or e > epoch:
                continue
            o = origin[rid]
            if o >= len(log) or log[o] // epochs_per_record != rid:
                return False
    return True


def no_committed_record_lost(model: PartitionBridge, s: State) -> bool:
    """NoCommittedRecordLost: a record once below a leader's HW is in every later leader's
    log, as long as every election was clean.

    Violated: a record consumers could read (it was committed) is gone after a clean leader
    change.  (Ghost: the epoch in which each record was first committed.  Unclean
    elections lose committed data by design, so after one the property holds vacuously;
    a power loss of every replica before a flush, ``crashes=unclean``, can also lose it:
    Kafka acknowledges before fsync.)
    """
    if s.ghost.flags & F_UNCLEAN:
        return True
    return _held_by_later_leaders(model, s, s.ghost.committed)


def consumed_records_stay(model: PartitionBridge, s: State) -> bool:
    """ConsumedRecordsStay: a record a consumer read never disappears from, or changes at its
    offset in, the log of the leader it reads from next (of the same or a later epoch).

    Violated: a consumer processed a record that the topic no longer contains (or contains
    a different record at that offset): downstream systems diverge from Kafka.  (Ghost: the
    epoch in which each record was first consumed.)
    """
    return _held_by_later_leaders(model, s, s.ghost.consumed)


def acked_all_survives_clean_election(model: PartitionBridge, s: State) -> bool:
    """AckedAllSurvivesCleanElection: an acks=all write, acknowledged while the ISR had at
    least min.insync.replicas members, is in every later leader's log as long as every
    election was clean.

    Violated: Kafka's central durability promise is broken: a producer using acks=all and
    min.insync.replicas was told "written" and the record is gone without any unclean
    election.  (Vacuous for acks 0/1 and after an unclean election.)
    """
    if model.cfg.acks != Acks.ALL or s.ghost.flags & F_UNCLEAN:
        return True
    return _held_by_later_leaders(model, s, s.ghost.acked)


def acknowledged_writes_durable(model: PartitionBridge, s: State) -> bool:
    """AcknowledgedWritesDurable: every write acknowledged to its producer (at the model's
    acks level: acks=1 on append, acks=all when the HW passed it with enough ISR members,
    acks=0 never) is in every later leader's log, whatever the elections were.

    Violated: a producer was told its write succeeded and the write is lost: with acks=1
    when the leader fails before replicating, with unclean election when an out-of-sync
    replica takes over.
    """
    return _held_by_later_leaders(model, s, s.ghost.acked)


def elr_holds_committed(model: PartitionBridge, s: State) -> bool:
    """ElrHoldsCommitted: every eligible leader replica (KIP-966's ELR, ``elr``) holds every
    committed record at its offset, unless it lost power since (the controller takes it out
    of the ELR when it re-registers) or an unclean election happened.

    Violated: the controller could elect a replica "cleanly" from the ELR that lacks a
    record consumers already read: after a clean failover the topic has lost it, the loss
    KIP-966 exists to prevent.  (Vacuous without ``elr``: the ELR is empty.)
    """
    elr = s.controller.elr
    if not elr or s.ghost.flags & F_UNCLEAN:
        return True
    origin, per = s.ghost.origin, model.codec.epochs
    for b in members(elr):
        br = s.brokers[b]
        if br.unclean_shutdown:
            continue
        for rid, e in enumerate(s.ghost.committed):
            o = origin[rid]
            if e != NONE and (o >= len(br.log) or br.log[o] // per != rid):
                return False
    return True


# ---------------------------------------------------------------------------------------
# Sometimes
# ---------------------------------------------------------------------------------------


def some_record_committed(s: State) -> bool:
    """SomeRecordCommitted: a record got below a leader's HW."""
    return any(e != NONE for e in s.ghost.committed)


def some_write_acknowledged(s: State) -> bool:
    """SomeWriteAcknowledged: a producer got a success answer."""
    return any(e != NONE for e in s.ghost.acked)


def leader_changed(s: State) -> bool:
    """LeaderChanged: a broker other than the first leader leads in ZooKeeper."""
    return s.controller.leader not in (0, NONE) and s.controller.leader_epoch > 0


def no_fatal_exit(s: State) -> bool:
    """NoFatalExit: no broker exited because a follower was past its leader's LEO.

    Violated: an operator finds a whole broker stopped ("Exiting because log truncation is
    not allowed") over one partition whose leader has less data than its follower: every
    partition on that broker loses a replica and those it led need a new leader.  Kafka
    0.10.2 to 2.0 (``kafka_7414=false``) exit the broker (``FatalExitError``) rather than
    truncate when unclean election is disabled; always true from 2.1 on.
    """
    return not s.ghost.flags & F_HALTED


def no_hw_checkpoint_lost(s: State) -> bool:
    """NoHwCheckpointLost: no broker wrote its ``replication-offset-checkpoint`` file without
    the high watermark of a partition whose log it keeps.

    Violated: after its next restart the broker starts that partition at HW 0; a Kafka 0.8
    follower then truncates its whole log to that HW when it follows a leader, and a
    consumer reading from it sees nothing committed (KAFKA-1647, fixed in 0.8.2:
    ``unavailable_leader=skip`` only).
    """
    return not s.ghost.flags & F_CHECKPOINT_LOST


def some_truncation(s: State) -> bool:
    """SomeTruncation: a follower truncated records off its log."""
    return bool(s.ghost.flags & F_TRUNCATED)


# ---------------------------------------------------------------------------------------
# Explanations: why a state's variables (``KafkaModel.variables``) break an invariant
# ---------------------------------------------------------------------------------------

Vars = Mapping[str, Any]


def _broker_ids(v: Vars) -> list[int]:
    """The broker ids of a state's variables (``broker0``, ``broker1``, ...)."""
    return sorted(int(k[6:]) for k in v if k.startswith("broker") and k[6:].isdigit())


def _broker(v: Vars, b: int) -> Mapping[str, Any]:
    view: Mapping[str, Any] = v[f"broker{b}"]
    return view


def controller_view(v: Vars) -> Mapping[str, Any]:
    """The controller's view of the partition: ``zk`` (ZooKeeper mode) or ``controller``
    (KRaft mode: the active controller's replayed metadata log)."""
    view: Mapping[str, Any] = v["zk"] if "zk" in v else v["controller"]
    return view


def controller_name(v: Vars) -> str:
    """Who keeps the partition's state: ``ZooKeeper`` or ``the controller`` (KRaft)."""
    return "ZooKeeper" if "zk" in v else "the controller"


def _log_text(log: Sequence[str]) -> str:
    return "[" + ", ".join(log) + "]" if log else "[] (empty)"


def _ids_text(ids: Iterable[int]) -> str:
    return "{" + ", ".join(f"broker{i}" for i in sorted(ids)) + "}"


def _leaders(v: Vars) -> list[int]:
    """The acting leaders: live brokers whose partition state names themselves leader."""
    return [b for b in _broker_ids(v)
            if _broker(v, b).get("alive") and _broker(v, b).get("leader") == b]


def _first_difference(a: Sequence[str], b: Sequence[str], upto: int) -> int:
    """The first offset below ``upto`` at which the two logs differ."""
    for o in range(upto):
        if o >= len(a) or o >= len(b) or a[o] != b[o]:
            return o
    return upto


def _at(log: Sequence[str], o: int) -> str:
    return log[o] if o < len(log) else "nothing (its log ends at offset " + str(len(log)) + ")"


def explain_hw_le_leo(v: Vars) -> str:
    """Which broker's high watermark is above its log end offset."""
    out = []
    for b in _broker_ids(v):
        br = _broker(v, b)
        log, hw = br["log"], br["hw"]
        if hw > len(log):
            out.append(f"broker{b}'s high watermark {hw} is above its log end offset "
                       f"{len(log)} (log {_log_text(log)}): it would serve offsets up to "
                       f"{hw} as committed without having the records from offset {len(log)}")
    return "; ".join(out)


def _explain_isr(v: Vars, quorum: bool) -> str:
    out = []
    for b in _leaders(v):
        br = _broker(v, b)
        hw, log = br["hw"], br["log"]
        if hw == 0:
            continue
        isr = controller_view(v)["isr"] if quorum else br.get("isr", ())
        whose = f"{controller_name(v)}'s ISR" if quorum else f"the ISR broker{b} tracks"
        for m in isr:
            other = _broker(v, m)["log"]
            if tuple(other[:hw]) == tuple(log[:hw]):
                continue
            o = _first_difference(log, other, hw)
            out.append(
                f"broker{b} leads epoch {br['leader_epoch']} with high watermark {hw}, so its "
                f"records {_log_text(log[:hw])} are committed; broker{m}, in {whose} "
                f"{_ids_text(isr)}, has {_at(other, o)} at offset {o} where the leader has "
                f"{_at(log, o)}: electing broker{m} would lose committed data")
    return "; ".join(out)


def explain_weak_isr(v: Vars) -> str:
    """Which leader's committed record a member of its own ISR lacks."""
    return _explain_isr(v, quorum=False)


def explain_strong_isr(v: Vars) -> str:
    """Which leader's committed record a member of ZooKeeper's ISR lacks."""
    return _explain_isr(v, quorum=True)


def explain_log_matching(v: Vars) -> str:
    """Which two replicas hold different records below both their HWs."""
    live = [b for b in _broker_ids(v)
            if _broker(v, b).get("alive") and _broker(v, b).get("leader_epoch") != NONE]
    for i, a in enumerate(live):
        for c in live[i + 1:]:
            la, lc = _broker(v, a)["log"], _broker(v, c)["log"]
            h = min(_broker(v, a)["hw"], _broker(v, c)["hw"])
            if h and tuple(la[:h]) != tuple(lc[:h]):
                o = _first_difference(la, lc, h)
                return (f"broker{a} and broker{c} both count offset {o} as committed (high "
                        f"watermarks {_broker(v, a)['hw']} and {_broker(v, c)['hw']}) but "
                        f"hold different records there: {_at(la, o)} and {_at(lc, o)}")
    return ""


def _where(v: Vars, rid: str) -> str:
    """Where record ``rid`` still is (``it is still on broker0 at offset 1, ...``), or that
    no broker has it any more."""
    spots = []
    for b in _broker_ids(v):
        for o, entry in enumerate(_broker(v, b)["log"]):
            if entry.split("@", 1)[0] == rid:
                spots.append(f"broker{b} at offset {o}")
    return "it is still on " + ", ".join(spots) if spots else "no broker has it any more"


def _explain_lost(v: Vars, ghost: str, what: str) -> str:
    """Which record of the ghost mapping ``ghost`` (record -> epoch) an acting leader of that
    epoch or a later one lacks."""
    records: Mapping[str, int] = v.get(ghost, {})
    out = []
    for b in _leaders(v):
        br = _broker(v, b)
        epoch, log = br["leader_epoch"], br["log"]
        held = {entry.split("@", 1)[0] for entry in log}
        for rid, e in records.items():
            if e > epoch:
                continue
            if rid in held:
                continue
            out.append(f"record {rid}, {what} in leader epoch {e}, is missing from the log "
                       f"of broker{b}, which leads epoch {epoch} (log {_log_text(log)}, "
                       f"high watermark {br['hw']}); {_where(v, rid)}")
    return "; ".join(out)


def explain_no_committed_record_lost(v: Vars) -> str:
    """Which committed record the leader lacks."""
    return _explain_lost(v, "committed", "committed")


def explain_consumed_records_stay(v: Vars) -> str:
    """Which consumed record the leader lacks."""
    return _explain_lost(v, "consumed", "read by a consumer")


def explain_acked_writes(v: Vars) -> str:
    """Which acknowledged write the leader lacks."""
    return _explain_lost(v, "acknowledged", "acknowledged to its producer")


def explain_leader_in_isr(v: Vars) -> str:
    """Which leader is outside which ISR, or which ISR member is not an assigned replica."""
    zk, out = controller_view(v), []
    isr, replicas = tuple(zk["isr"]), tuple(zk["replicas"])
    outside = [m for m in isr if m not in replicas]
    if outside:
        out.append(f"{controller_name(v)}'s ISR {_ids_text(isr)} has {_ids_text(outside)}, "
                   f"not among the assigned replicas {_ids_text(replicas)}")
    if zk["leader"] != NONE and zk["leader"] not in isr:
        out.append(f"{controller_name(v)} names broker{zk['leader']} leader (epoch "
                   f"{zk['leader_epoch']}) but its ISR is {_ids_text(isr)}")
    for b in _leaders(v):
        own = tuple(_broker(v, b).get("isr", ()))
        if b not in own:
            out.append(f"broker{b} acts as leader but its own ISR {_ids_text(own)} leaves "
                       "it out")
        elif any(m not in replicas for m in own):
            out.append(f"broker{b}'s ISR {_ids_text(own)} is not within the assigned "
                       f"replicas {_ids_text(replicas)}")
    return "; ".join(out)


def explain_isr_non_empty(v: Vars) -> str:
    """Whose ISR is empty."""
    out = []
    zk = controller_view(v)
    if not zk["isr"]:
        out.append(f"{controller_name(v)}'s ISR is empty (leader {zk['leader']}, epoch "
                   f"{zk['leader_epoch']})")
    out.extend(f"broker{b} acts as leader with an empty ISR" for b in _leaders(v)
               if not _broker(v, b).get("isr", ()))
    return "; ".join(out)


def explain_one_leader_per_epoch(v: Vars) -> str:
    """Which brokers lead the same epoch (or that two did, earlier in the trace)."""
    by_epoch: dict[int, list[int]] = {}
    for b in _leaders(v):
        by_epoch.setdefault(_broker(v, b)["leader_epoch"], []).append(b)
    both = [(e, bs) for e, bs in sorted(by_epoch.items()) if len(bs) > 1]
    if both:
        return "; ".join(f"{_ids_text(bs)} all act as leader of epoch {e}" for e, bs in both)
    return ("two brokers have led the same leader epoch during this trace (the model "
            "remembers each epoch's first leader); the last step gave it a second one")


def explain_elr_holds_committed(v: Vars) -> str:
    """Which ELR member lacks which committed record."""
    zk, out = controller_view(v), []
    committed: Mapping[str, int] = v.get("committed", {})
    for b in zk.get("elr", ()):
        br = _broker(v, b)
        if br.get("unclean_shutdown"):
            continue
        held = {entry.split("@", 1)[0] for entry in br["log"]}
        for rid in committed:
            if rid not in held:
                out.append(f"broker{b} is in the ELR {_ids_text(zk['elr'])} but lacks "
                           f"committed record {rid} (log {_log_text(br['log'])}); "
                           f"{_where(v, rid)}")
    return "; ".join(out)


def explain_epochs_never_decrease(v: Vars) -> str:
    """The leader epochs the live brokers now hold (the regression happened in the last
    step)."""
    epochs = ", ".join(f"broker{b} {_broker(v, b)['leader_epoch']}" for b in _broker_ids(v)
                       if _broker(v, b).get("alive"))
    return (f"in the last step a live broker adopted a smaller leader epoch than it had "
            f"(a stale LeaderAndIsr request); leader epochs now: {epochs}; the controller's "
            f"{controller_view(v)['leader_epoch']}")


def explain_no_fatal_exit(v: Vars) -> str:
    """The log end offsets when a follower found itself past its leader."""
    leos = ", ".join(f"broker{b} {len(_broker(v, b)['log'])}" for b in _broker_ids(v))
    return ("a follower found its log end offset above its leader's and exited its broker "
            f"(FatalExitError, 'Exiting because log truncation is not allowed'); log end "
            f"offsets: {leos}")


def explain_no_hw_checkpoint_lost(v: Vars) -> str:
    """Which live broker checkpointed HW 0 for a partition whose log holds committed
    records."""
    committed: Mapping[str, int] = v.get("committed", {})
    lost = []
    for b in _broker_ids(v):
        br = _broker(v, b)
        held = [e.split("@", 1)[0] for e in br["log"]]
        kept = [rid for rid in held if rid in committed]
        if br.get("alive") and br.get("hw_checkpoint") == 0 and kept:
            lost.append(f"broker{b} wrote its replication-offset-checkpoint file with HW 0 "
                        f"(in memory {br['hw']}) although its log {_log_text(br['log'])} "
                        f"holds committed record(s) {', '.join(kept)}")
    return "; ".join(lost or ["a broker wrote its replication-offset-checkpoint file "
                              "without this partition's high watermark"]) + (
        ": after its next restart it starts the partition at HW 0 (KAFKA-1647)")


def explain_lso_le_hw(v: Vars) -> str:
    """The HWs (the LSO equals the HW here: no transactions)."""
    hws = ", ".join(f"broker{b} {_broker(v, b)['hw']}" for b in _broker_ids(v))
    return f"a live replica's last stable offset is above its high watermark (HWs: {hws})"


EXPLAIN: dict[str, Callable[[Vars], str]] = {
    "HwLeLeo": explain_hw_le_leo,
    "LsoLeHw": explain_lso_le_hw,
    "LeaderInIsr": explain_leader_in_isr,
    "IsrNonEmpty": explain_isr_non_empty,
    "EpochsNeverDecrease": explain_epochs_never_decrease,
    "OneLeaderPerEpoch": explain_one_leader_per_epoch,
    "WeakIsr": explain_weak_isr,
    "StrongIsr": explain_strong_isr,
    "LogMatching": explain_log_matching,
    "NoCommittedRecordLost": explain_no_committed_record_lost,
    "ConsumedRecordsStay": explain_consumed_records_stay,
    "AckedAllSurvivesCleanElection": explain_acked_writes,
    "AcknowledgedWritesDurable": explain_acked_writes,
    "NoFatalExit": explain_no_fatal_exit,
    "ElrHoldsCommitted": explain_elr_holds_committed,
    "NoHwCheckpointLost": explain_no_hw_checkpoint_lost,
}
"""Each invariant's ``Property.explain``: why a state's variables break it, in Kafka's words."""


# ---------------------------------------------------------------------------------------
# Catalogue
# ---------------------------------------------------------------------------------------

_PLAIN: dict[str, Callable[[State], bool]] = {
    "HwLeLeo": hw_le_leo,
    "LeaderInIsr": leader_in_isr_subset_ar,
    "IsrNonEmpty": isr_non_empty,
    "EpochsNeverDecrease": epochs_never_decrease,
    "OneLeaderPerEpoch": one_leader_per_epoch,
    "WeakIsr": weak_isr,
    "StrongIsr": strong_isr,
    "LogMatching": log_matching,
    "NoFatalExit": no_fatal_exit,
    "NoHwCheckpointLost": no_hw_checkpoint_lost,
}
_WITH_MODEL: dict[str, Callable[[PartitionBridge, State], bool]] = {
    "LsoLeHw": lso_le_hw,
    "NoCommittedRecordLost": no_committed_record_lost,
    "ConsumedRecordsStay": consumed_records_stay,
    "AckedAllSurvivesCleanElection": acked_all_survives_clean_election,
    "AcknowledgedWritesDurable": acknowledged_writes_durable,
    "ElrHoldsCommitted": elr_holds_committed,
}

INVARIANT_NAMES = (
    "HwLeLeo", "LsoLeHw", "LeaderInIsr", "IsrNonEmpty", "EpochsNeverDecrease",
    "OneLeaderPerEpoch", "WeakIsr", "StrongIsr", "LogMatching", "NoCommittedRecordLost",
    "ConsumedRecordsStay", "AckedAllSurvivesCleanElection", "AcknowledgedWritesDurable",
    "NoFatalExit", "ElrHoldsCommitted", "NoHwCheckpointLost",
)
"""Every invariant of the ``kafka`` model, in the order the checker tests them."""

SOMETIMES: dict[str, Callable[[State], bool]] = {
    "SomeRecordCommitted": some_record_committed,
    "SomeWriteAcknowledged": some_write_acknowledged,
    "LeaderChanged": leader_changed,
    "SomeTruncation": some_truncation,
}


def kafka_invariants(model: PartitionBridge) -> list[Property[State]]:
    """Every invariant of the catalogue bound to ``model``, in ``INVARIANT_NAMES`` order,
    each answered from the state's ``Verdicts`` (the same verdicts as the functions above,
    each computed once per state)."""
    verdicts = Verdicts(model)
    out: list[Property[State]] = []
    for name in INVARIANT_NAMES:
        f: Callable[..., bool] = _PLAIN[name] if name in _PLAIN else _WITH_MODEL[name]
        holds = functools.partial(_holds, verdicts, BITS[name])
        out.append(Property(name, holds, summary_of(f), EXPLAIN[name]))
    return out


def _holds(verdicts: Verdicts, bit: int, s: State) -> bool:
    """Whether the invariant of mask ``bit`` holds in ``s`` (``Verdicts.fails``)."""
    return not verdicts.fails(s, bit)


_HW_LE_LEO: Final = 1
_LSO_LE_HW: Final = 2
_LEADER_IN_ISR: Final = 4
_ISR_NON_EMPTY: Final = 8
_EPOCHS_NEVER_DECREASE: Final = 16
_ONE_LEADER_PER_EPOCH: Final = 32
_WEAK_ISR: Final = 64
_STRONG_ISR: Final = 128
_LOG_MATCHING: Final = 256
_NO_COMMITTED_RECORD_LOST: Final = 512
_CONSUMED_RECORDS_STAY: Final = 1024
_ACKED_ALL: Final = 2048
_ACKED_DURABLE: Final = 4096
_NO_FATAL_EXIT: Final = 8192
_ELR_HOLDS: Final = 16384
_NO_HW_CHECKPOINT_LOST: Final = 32768
"""Each invariant's bit in a ``Verdicts`` mask: ``1 << i`` for the ``i``-th of
``INVARIANT_NAMES`` (``BITS`` names them)."""

BITS: Final = {
    "HwLeLeo": _HW_LE_LEO, "LsoLeHw": _LSO_LE_HW, "LeaderInIsr": _LEADER_IN_ISR,
    "IsrNonEmpty": _ISR_NON_EMPTY, "EpochsNeverDecrease": _EPOCHS_NEVER_DECREASE,
    "OneLeaderPerEpoch": _ONE_LEADER_PER_EPOCH, "WeakIsr": _WEAK_ISR,
    "StrongIsr": _STRONG_ISR, "LogMatching": _LOG_MATCHING,
    "NoCommittedRecordLost": _NO_COMMITTED_RECORD_LOST,
    "ConsumedRecordsStay": _CONSUMED_RECORDS_STAY,
    "AckedAllSurvivesCleanElection": _ACKED_ALL, "AcknowledgedWritesDurable": _ACKED_DURABLE,
    "NoFatalExit": _NO_FATAL_EXIT, "ElrHoldsCommitted": _ELR_HOLDS,
    "NoHwCheckpointLost": _NO_HW_CHECKPOINT_LOST,
}
"""Each invariant's bit in a ``Verdicts`` mask, by name."""


class Verdicts:
    """The catalogue's verdicts on a state as one mask (bit ``i`` set: invariant ``i`` of
    ``INVARIANT_NAMES`` is false), for the state last asked about: the compiled checker
    asks every invariant of one state before the next state (``failures``), so each
    state's mask is computed once, at its second question; the first question about a
    state is answered alone, so that a caller asking one invariant of every state before
    the next invariant (the checker's Python loop) computes each verdict once too.

    Each verdict is computed afresh: keeping the brokers-only ones per broker tuple (by
    the interned brokers' addresses) cost as much as it saved on the ZooKeeper-mode default
    and more on the 3-broker space, whose broker tuples rarely repeat close together."""

    def __init__(self, model: PartitionBridge) -> None:
        self.model = model
        self.last: object = None
        """The state last asked about (held, so that its address names it)."""
        self.last_failed = 0
        """Its mask (only ``last_asked``'s bit, until ``last_full``)."""
        self.last_asked = 0
        """The bit asked first about ``last``."""
        self.last_full = False
        """Whether ``last_failed`` holds every verdict."""

    def fails(self, s: State, bit: int) -> int:
        """``bit`` if the invariant of that bit is false in ``s``, else 0."""
        if s is self.last:
            if not self.last_full and bit != self.last_asked:
                self.last_failed = self.failed(s)
                self.last_full = True
            return self.last_failed & bit
        failed = self._one_failed(s, bit)
        self.last = s
        self.last_failed = failed
        self.last_asked = bit
        self.last_full = False
        return failed

    def _one_failed(self, s: State, bit: int) -> int:
        """``bit`` if the invariant of that bit is false in ``s``, else 0."""
        model = self.model
        if bit == _HW_LE_LEO:
            ok = hw_le_leo(s)
        elif bit == _LSO_LE_HW:
            ok = lso_le_hw(model, s)
        elif bit == _LEADER_IN_ISR:
            ok = leader_in_isr_subset_ar(s)
        elif bit == _ISR_NON_EMPTY:
            ok = isr_non_empty(s)
        elif bit == _EPOCHS_NEVER_DECREASE:
            ok = epochs_never_decrease(s)
        elif bit == _ONE_LEADER_PER_EPOCH:
            ok = one_leader_per_epoch(s)
        elif bit == _WEAK_ISR:
            ok = weak_isr(s)
        elif bit == _STRONG_ISR:
            ok = strong_isr(s)
        elif bit == _LOG_MATCHING:
            ok = log_matching(s)
        elif bit == _NO_COMMITTED_RECORD_LOST:
            ok = no_committed_record_lost(model, s)
        elif bit == _CONSUMED_RECORDS_STAY:
            ok = consumed_records_stay(model, s)
        elif bit == _ACKED_ALL:
            ok = acked_all_survives_clean_election(model, s)
        elif bit == _ACKED_DURABLE:
            ok = acknowledged_writes_durable(model, s)
        elif bit == _NO_FATAL_EXIT:
            ok = no_fatal_exit(s)
        elif bit == _ELR_HOLDS:
            ok = elr_holds_committed(model, s)
        else:
            ok = no_hw_checkpoint_lost(s)
        return 0 if ok else bit

    def failed(self, s: State) -> int:
        """The mask of the invariants false in ``s``."""
        model = self.model
        failed = self._brokers_failed(s)
        flags = s.ghost.flags
        if not leader_in_isr_subset_ar(s):
            failed |= _LEADER_IN_ISR
        if not isr_non_empty(s):
            failed |= _ISR_NON_EMPTY
        if flags & F_EPOCH_REGRESSED:
            failed |= _EPOCHS_NEVER_DECREASE
        if flags & F_TWO_LEADERS:
            failed |= _ONE_LEADER_PER_EPOCH
        if not strong_isr(s):
            failed |= _STRONG_ISR
        if not no_committed_record_lost(model, s):
            failed |= _NO_COMMITTED_RECORD_LOST
        if not consumed_records_stay(model, s):
            failed |= _CONSUMED_RECORDS_STAY
        durable = acknowledged_writes_durable(model, s)
        if not durable:
            failed |= _ACKED_DURABLE
            if not acked_all_survives_clean_election(model, s):
                failed |= _ACKED_ALL
        if flags & F_HALTED:
            failed |= _NO_FATAL_EXIT
        if not elr_holds_committed(model, s):
            failed |= _ELR_HOLDS
        if flags & F_CHECKPOINT_LOST:
            failed |= _NO_HW_CHECKPOINT_LOST
        return failed

    def _brokers_failed(self, s: State) -> int:
        """The mask of the invariants that read the brokers alone, false in ``s``."""
        failed = 0
        if not hw_le_leo(s):
            failed |= _HW_LE_LEO
        if not lso_le_hw(self.model, s):
            failed |= _LSO_LE_HW
        if not _acting_epochs_distinct(s):
            failed |= _ONE_LEADER_PER_EPOCH
        if not weak_isr(s):
            failed |= _WEAK_ISR
        if not log_matching(s):
            failed |= _LOG_MATCHING
        return failed


def kafka_sometimes(model: PartitionBridge) -> list[Property[State]]:
    """The ``sometimes`` witnesses (a committed write, an acknowledged write, a leader
    change, a truncation)."""
    return [Property(name, f, summary_of(f)) for name, f in SOMETIMES.items()]
