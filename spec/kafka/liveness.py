r"""The ``kafka`` model's liveness properties and fairness, in Kafka's terms.

``KafkaModel.liveness()`` (both controller modes) returns ``kafka_liveness(model, unfair)``;
``isrlab check --model kafka -p controller=zookeeper --liveness`` (or ``controller=kraft``)
checks them (docs/kafka-model.md, "Liveness").

**Fairness** (weak, ``WF_vars(A(b))`` per label, i.e. per broker or per request): the steps
of Kafka's own threads and periodic tasks, which run again and again for as long as the
broker (or the controller) runs, so a step of theirs that stays possible is eventually
taken:

* the follower's ``ReplicaFetcherThread`` (``AbstractFetcherThread.doWork`` loops:
  ``maybeTruncate`` then ``maybeFetch``): ``Fetch``, ``FetchRequest``, ``FetchResponse``,
  ``FencedFetch``, ``FetchError``, ``Truncate``;
* the leader's ``isr-expiration`` task (``ReplicaManager.startup`` schedules
  ``maybeShrinkIsr`` every ``replica.lag.time.max.ms / 2``) and the clock it reads:
  ``ShrinkIsr``, ``Tick``; the ``isr-change-propagation`` task: ``PropagateIsrChanges``;
  the ``highwatermark-checkpoint`` task: ``CheckpointHw``;
* the AlterPartition round trip (``AlterPartitionManager``'s send thread, the controller's
  handler, the leader's callback): ``AlterPartition``, ``AlterPartitionResponse``;
* ZooKeeper mode's controller event thread and ``RequestSendThread`` per broker:
  ``ElectLeader`` (``onBrokerFailure`` → ``OfflinePartitionLeaderSelector``),
  ``RemoveDeadFromIsr`` (``OfflineReplica``), ``Deliver`` (the head of a channel is sent and
  handled);
* KRaft: each broker's ``MetadataLoader`` (``HandleCommit(b)`` and ``HandleCommit(b,j)``
  are one fair action per broker: the loader publishes whatever the Raft client handed
  it), the active controller's ``BrokerHeartbeatManager`` (``FenceBroker``: a session
  that expired is fenced by ``maybeFenceOneStaleBroker``, scheduled every
  ``broker.session.timeout.ms``; ``UnfenceBroker``: the broker's ``BrokerLifecycleManager``
  heartbeats every ``broker.heartbeat.interval.ms`` and is unfenced once caught up).

**Finitely often**: failures and operator actions may happen, each any finite number of
times, and a property must hold under every such history (``Liveness.finitely_often``:
TLA+'s ``<>[][~Fault]_vars`` as an assumption): ``Crash``, ``PowerLoss``, ``Restart``,
``RegisterBroker`` (a broker coming back is the operator's or the environment's doing, not
a thread's), ``ReplaceDisk``, ``ControlledShutdown``, ``PreferredElection``, ``Reassign``,
``ControllerFailover``, and the faults ``Lose``, ``DeliverCopy``, ``LoseFetchResponse``;
with ``heartbeat_loss`` also ``FenceBroker``, which then fences live brokers too and is not
fair.  Infinitely many of them can stop any progress (a follower that crashes and restarts
forever never catches up), which Kafka does not promise to survive.

**Neither fair nor restricted**: ``Produce`` and ``Consume`` (clients: ``max_records``
bounds the records) and ``Flush`` (``log.flush.interval.*``, unset by default: the OS
decides).

``unfair`` (the model parameter ``unfair``) drops the fairness of the named actions, to see
what each one is needed for (tests/spec/kafka/test_liveness.py).

Modelling shortcuts: a broker is *live* when it runs (``alive``); the partition is
*offline* when the controller names no leader or a leader that is down (between a leader's
crash and the election, or for good when no eligible replica is alive); "the ISR" is the
controller's (ZooKeeper's ISR, KRaft's ``PartitionRegistration.isr``), the one an election
reads.  Where the model is stuck at its ``max_leader_epoch`` bound (an election or an
epoch-bumping ISR change it does not offer), every goal counts as met (``_bounded``).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from typing import Protocol

from isrlab.checker.model import (
    AlwaysEventually,
    Clause,
    Fairness,
    LeadsTo,
    Liveness,
    TemporalProperty,
    action_name,
)
from isrlab.spec.kafka.kraft_state import Image, replayed
from isrlab.spec.kafka.state import (
    ALTER_NONE,
    ALTER_SENT,
    NONE,
    EpochCodec,
    KafkaState,
)

Predicate = Callable[[KafkaState], bool]

FETCHER = ("Fetch", "FetchRequest", "FetchResponse", "FencedFetch", "FetchError", "Truncate")
"""The follower's fetcher thread."""

BROKER_TASKS = ("Tick", "ShrinkIsr", "PropagateIsrChanges", "CheckpointHw", "AlterPartition",
                "AlterPartitionResponse")
"""The leader's periodic tasks and the AlterPartition round trip."""

ZK_CONTROLLER = ("ElectLeader", "RemoveDeadFromIsr", "Deliver")
"""ZooKeeper mode's controller event thread and request send threads."""

KRAFT_CONTROLLER = ("HandleCommit", "FenceBroker", "UnfenceBroker")
"""KRaft's metadata loaders and the active controller's heartbeat manager."""

FAIR_ACTIONS = (*FETCHER, *BROKER_TASKS, *ZK_CONTROLLER, *KRAFT_CONTROLLER)
"""Every action that may be weakly fair (the ones a mode lacks never occur)."""

FINITELY_OFTEN = ("Crash", "PowerLoss", "Restart", "RegisterBroker", "ReplaceDisk",
                  "ControlledShutdown", "PreferredElection", "Reassign", "ControllerFailover",
                  "Lose", "DeliverCopy", "LoseFetchResponse")
"""Failures, operator actions and faults: any finite number of them."""

COMMON_PROPERTIES = (
    "AckedRecordReachesLiveIsr", "AckedRecordFullyReplicated", "CaughtUpFollowerRejoinsIsr",
    "OutOfSyncFollowerRejoinsIsr", "HighWatermarkReachesLeo", "AlterPartitionAnswered",
    "PendingIsrResolved", "OfflinePartitionElected",
)
"""The properties of both modes, in declaration order."""

KRAFT_PROPERTIES = ("FencedBrokerUnfenced", "MetadataConverges")
"""The properties of KRaft mode only."""


class KafkaLike(Protocol):
    """What the declarations read of a ``kafka`` model (``isrlab.spec.kafka.model``)."""

    @property
    def n(self) -> int: ...

    @property
    def codec(self) -> EpochCodec: ...


# -- the state predicates -----------------------------------------------------------------------


def _offline(s: KafkaState) -> bool:
    """The controller names no leader, or one that is down."""
    leader = s.controller.leader
    return leader == NONE or not s.brokers[leader].alive


def _in_isr(s: KafkaState, b: int) -> bool:
    return bool(s.controller.isr >> b & 1)


def _holder(codec: EpochCodec, r: int) -> Callable[[KafkaState, int], bool]:
    """Whether broker ``b``'s log holds record ``r`` (any epoch)."""
    def holds(s: KafkaState, b: int) -> bool:
        return any(codec.record_id(x) == r for x in s.brokers[b].log)
    return holds


def _acked(r: int) -> Predicate:
    return lambda s: s.ghost.acked[r] != NONE


def _lost(has: Callable[[KafkaState, int], bool]) -> Predicate:
    """The live leader's log lacks the record: lost (acks=1 before it was replicated, an
    unclean election); never with acks=all and clean elections (the invariants)."""
    def holds(s: KafkaState) -> bool:
        return not _offline(s) and not has(s, s.controller.leader)
    return holds


def _reaches_isr_member(model: KafkaLike, r: int, f: int) -> Predicate:
    has = _holder(model.codec, r)
    lost = _lost(has)

    def holds(s: KafkaState) -> bool:
        return (has(s, f) or not s.brokers[f].alive or not _in_isr(s, f) or _offline(s)
                or lost(s))
    return holds


def _fully_replicated(model: KafkaLike, r: int) -> Predicate:
    has = _holder(model.codec, r)
    lost = _lost(has)
    brokers = range(model.n)

    def holds(s: KafkaState) -> bool:
        return (all(has(s, b) for b in brokers if s.brokers[b].alive) or _offline(s)
                or lost(s))
    return holds


def _caught_up_outside_isr(f: int) -> Predicate:
    """``f`` runs outside the ISR, follows the live leader in its epoch, and has every
    record the leader has."""
    def holds(s: KafkaState) -> bool:
        if _offline(s) or _in_isr(s, f) or not s.brokers[f].alive:
            return False
        leader = s.controller.leader
        lb, fb = s.brokers[leader], s.brokers[f]
        return (leader != f and fb.leader == leader and fb.leader_epoch == lb.leader_epoch
                and len(fb.log) >= len(lb.log))
    return holds


def _outside_isr(f: int) -> Predicate:
    return lambda s: bool(s.brokers[f].alive) and not _in_isr(s, f) and not _offline(s)


def _in_isr_or_gone(f: int) -> Predicate:
    return lambda s: _in_isr(s, f) or not s.brokers[f].alive or _offline(s)


def _hw_reaches_leo(min_isr: int, gated: bool) -> Predicate:
    """The acting leader's HW is its LEO, or the partition is offline, or its leader has not
    yet taken over, or (``gated``: KIP-966) its ISR is below ``min_isr``, where Kafka 4.x
    holds the HW back."""
    def holds(s: KafkaState) -> bool:
        if _offline(s):
            return True
        leader = s.controller.leader
        lb = s.brokers[leader]
        if lb.leader != leader:
            return True
        if gated and bin(lb.in_sync_replica_ids).count("1") < min_isr:
            return True
        return lb.high_watermark >= len(lb.log)
    return holds


def _alter_in_flight(b: int) -> Predicate:
    return lambda s: s.brokers[b].alter_partition != ALTER_NONE


def _alter_done(b: int) -> Predicate:
    return lambda s: s.brokers[b].alter_partition == ALTER_NONE or not s.brokers[b].alive


def _pending_isr(b: int) -> Predicate:
    return lambda s: s.brokers[b].pending_isr != 0


def _pending_resolved(b: int) -> Predicate:
    return lambda s: s.brokers[b].pending_isr == 0 or not s.brokers[b].alive


def _electable(s: KafkaState) -> bool:
    """Offline with a live member of the ISR or (KIP-966) the ELR."""
    eligible = s.controller.isr | s.controller.elr
    return _offline(s) and any(br.alive for b, br in enumerate(s.brokers) if eligible >> b & 1)


def _not_electable(s: KafkaState) -> bool:
    """Online, or offline with no live ISR or ELR member left."""
    return not _electable(s)


def _image(s: KafkaState, n: int) -> Image:
    """The active controller's metadata image (``kraft_state.controller_image``)."""
    k = s.controller.kraft
    return replayed(k[1], k[0], n)


def _fenced_running(b: int, n: int) -> Predicate:
    def holds(s: KafkaState) -> bool:
        epoch, fenced = _image(s, n)[1][b]
        return bool(s.brokers[b].alive and epoch >= 0 and fenced)
    return holds


def _unfenced_or_down(b: int, n: int) -> Predicate:
    def holds(s: KafkaState) -> bool:
        return not s.brokers[b].alive or not _image(s, n)[1][b][1]
    return holds


def _metadata_converged(s: KafkaState) -> bool:
    """Every running broker published every committed batch."""
    k = s.controller.kraft
    total = len(k[0])
    return all(a == total for a, br in zip(k[2], s.brokers, strict=True) if br.alive)


# -- the declaration ----------------------------------------------------------------------------


def _fair_instance(dropped: frozenset[str]) -> Callable[[str], str | None]:
    """The fair action of a label: the label itself (one per broker or request), except
    ``HandleCommit(b,j)``, which is ``HandleCommit(b)``'s (one loader per broker)."""
    wanted = frozenset(FAIR_ACTIONS) - dropped

    def instance(label: str) -> str | None:
        action = action_name(label)
        if action not in wanted:
            return None
        if action == "HandleCommit":
            return label.split(",", 1)[0].rstrip(")") + ")"
        return label
    return instance


def _stuck_at_bound(max_leader_epoch: int) -> Predicate:
    """The controller's leader epoch is at ``max_leader_epoch`` and it has something to do
    that needs a new epoch, which the model does not offer (its bound, not Kafka's): an
    election (the partition is offline), an ISR change a leader proposed (KRaft's
    ``kraft_epoch_bump=isr-shrink`` bumps the epoch), or removing a member that is down
    (ZooKeeper's ``RemoveDeadFromIsr``, KRaft's fencing with an election or a bump)."""
    def holds(s: KafkaState) -> bool:
        if s.controller.leader_epoch < max_leader_epoch:
            return False
        if _offline(s):
            return True
        brokers = s.brokers
        isr = s.controller.isr
        return any((br.alter_partition == ALTER_SENT and br.alive)
                   or (isr >> b & 1 and not br.alive) for b, br in enumerate(brokers))
    return holds


def _bounded(goal: Predicate, stuck: Predicate) -> Predicate:
    """``goal``, or the model is stuck at its leader-epoch bound (``_stuck_at_bound``): a
    behaviour that stays stuck there is cut short, as TLC's CONSTRAINT cuts one, and does
    not count against the property; one that gets going again must still meet the goal
    (for a premise that stays true, as ``acked``, the goal infinitely often)."""
    return lambda s: goal(s) or stuck(s)


def kafka_properties(model: KafkaLike, *, kraft: bool, records: int, min_isr: int,
                     elr: bool, max_leader_epoch: int
                     ) -> tuple[TemporalProperty[KafkaState], ...]:
    """The temporal properties of a ``kafka`` model with ``records`` records (their
    docstrings give the Kafka reasoning), each goal excused where the model is stuck at its
    leader-epoch bound (``_bounded``)."""
    props = _properties(model, kraft=kraft, records=records, min_isr=min_isr, elr=elr)
    stuck = _stuck_at_bound(max_leader_epoch)

    def cut(clause: Clause[KafkaState]) -> Clause[KafkaState]:
        if isinstance(clause, LeadsTo):
            return LeadsTo(clause.premise, _bounded(clause.goal, stuck))
        assert isinstance(clause, AlwaysEventually)
        return AlwaysEventually(_bounded(clause.holds, stuck))

    return tuple(TemporalProperty(p.name, tuple(map(cut, p.clauses)), p.doc) for p in props)


def _properties(model: KafkaLike, *, kraft: bool, records: int, min_isr: int,
                elr: bool) -> tuple[TemporalProperty[KafkaState], ...]:
    """The properties before ``_bounded``."""
    n = model.n
    brokers = range(n)
    produced = range(records)

    def per_broker(clause: Callable[[int], Clause[KafkaState]]) -> tuple[
            Clause[KafkaState], ...]:
        return tuple(clause(b) for b in brokers)

    props = [
        TemporalProperty("AckedRecordReachesLiveIsr", tuple(
            LeadsTo(_acked(r), _reaches_isr_member(model, r, f))
            for r in produced for f in brokers),
            "An acknowledged record eventually reaches every ISR member that stays alive "
            "(or the member leaves the ISR, the partition goes offline, or the record was "
            "lost, which acks=all with clean elections rules out).  With acks=all the "
            "leader acknowledges once every member of its ISR has the record "
            "(DelayedProduce, Partition.checkEnoughReplicasReachOffset) and a replica joins "
            "the ISR only at the HW (maybeExpandIsr), so it holds at once; with acks=1 the "
            "fetchers bring it."),
        TemporalProperty("AckedRecordFullyReplicated", tuple(
            LeadsTo(_acked(r), _fully_replicated(model, r)) for r in produced),
            "An acknowledged record eventually reaches every live replica, in the ISR or not "
            "(or the partition is offline, or the record was lost): every follower's fetcher "
            "keeps fetching from the leader (Vanlightly's "
            "EventuallyAcknowledgedValueFullyReplicated, for live replicas)."),
        TemporalProperty("CaughtUpFollowerRejoinsIsr", per_broker(
            lambda f: LeadsTo(_caught_up_outside_isr(f), _in_isr_or_gone(f))),
            "A live follower outside the ISR that has caught up with the live leader "
            "eventually is in the controller's ISR (or is down, or the partition offline): "
            "its next fetch reaches the leader's LEO, maybeExpandIsr proposes it "
            "(AlterPartition, or a ZooKeeper write) and the controller commits it."),
        TemporalProperty("OutOfSyncFollowerRejoinsIsr", per_broker(
            lambda f: LeadsTo(_outside_isr(f), _in_isr_or_gone(f))),
            "Any live follower outside the ISR eventually rejoins it while the partition is "
            "online: it fetches until caught up (the producers stop: max_records), then as "
            "CaughtUpFollowerRejoinsIsr."),
        TemporalProperty("HighWatermarkReachesLeo", (AlwaysEventually(
            _hw_reaches_leo(min_isr, elr)),),
            "Infinitely often the acting leader's HW is its LEO (or the partition is offline, "
            "or with KIP-966 its ISR is below min.insync.replicas): every record the leader "
            "has is eventually committed, as the ISR members fetch it or the isr-expiration "
            "task drops the ones that do not (maybeIncrementLeaderHW)."),
        TemporalProperty("AlterPartitionAnswered", per_broker(
            lambda b: LeadsTo(_alter_in_flight(b), _alter_done(b))),
            "An AlterPartition request a leader sent is eventually answered and the answer "
            "handled (or the leader goes down): AlterPartitionManager keeps one request in "
            "flight and retries until the controller answers."),
        TemporalProperty("PendingIsrResolved", per_broker(
            lambda b: LeadsTo(_pending_isr(b), _pending_resolved(b))),
            "A leader's pending ISR change (PendingExpandIsr / PendingShrinkIsr) is "
            "eventually resolved: committed, reverted, or replaced by the controller's next "
            "LeaderAndIsr / metadata delta (or the broker goes down)."),
        TemporalProperty("OfflinePartitionElected", (LeadsTo(_electable, _not_electable),),
                         "An offline partition with a live ISR (or KIP-966 ELR) member "
                         "eventually has a live leader, unless every such member goes down "
                         "too: the controller elects one (OfflinePartitionLeaderSelector, "
                         "PartitionChangeBuilder)."),
    ]
    if kraft:
        props += [
            TemporalProperty("FencedBrokerUnfenced", per_broker(
                lambda b: LeadsTo(_fenced_running(b, n), _unfenced_or_down(b, n))),
                "A fenced broker that runs (it came back and registered) is eventually "
                "unfenced: it catches up with the metadata log to its own registration "
                "record and the controller unfences it on its next heartbeat "
                "(BrokerHeartbeatManager.calculateNextBrokerState)."),
            TemporalProperty("MetadataConverges", (AlwaysEventually(_metadata_converged),),
                             "Infinitely often every running broker has published the whole "
                             "committed metadata log (MetadataLoader)."),
        ]
    return tuple(props)


def check_unfair(unfair: Iterable[str]) -> None:
    """``ValueError`` naming the first of ``unfair`` that is not a fair action."""
    unknown = sorted(set(unfair) - set(FAIR_ACTIONS))
    if unknown:
        raise ValueError(f"unfair: {', '.join(unknown)} not among the fair actions "
                         f"({', '.join(FAIR_ACTIONS)})")


def kafka_liveness(model: KafkaLike, *, kraft: bool, records: int, min_isr: int, elr: bool,
                   max_leader_epoch: int, heartbeat_loss: bool, unfair: Iterable[str] = ()
                   ) -> Liveness[KafkaState]:
    """The properties under weak fairness of ``FAIR_ACTIONS`` less ``unfair``, with the
    faults and operator actions of ``FINITELY_OFTEN`` taken finitely often (the module
    docstring says why each)."""
    dropped = frozenset(unfair)
    check_unfair(dropped)
    finite: Sequence[str] = FINITELY_OFTEN
    if heartbeat_loss:
        dropped |= {"FenceBroker"}
        finite = (*FINITELY_OFTEN, "FenceBroker")
    fair = [a for a in FAIR_ACTIONS if a not in dropped]
    fairness = Fairness("weak", f"WF({', '.join(fair)})", _fair_instance(dropped))
    return Liveness(
        kafka_properties(model, kraft=kraft, records=records, min_isr=min_isr, elr=elr,
                         max_leader_epoch=max_leader_epoch),
        (fairness,), tuple(finite))
