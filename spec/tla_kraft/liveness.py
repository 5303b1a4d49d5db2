r"""The liveness properties and fairness of Vanlightly's KRaft specifications, declared for
``tla-kraft-3.5`` and ``tla-kraft-kip966`` (``isrlab.spec.tla_kraft``).

Vanlightly/kafka-tlaplus, ``kafka_data_replication/kraft/v3.5/v3_5_properties.tla`` and
``kraft/kip-966/kip_966_properties.tla``, define the same seven liveness properties, and both
modules' ``Liveness`` is ``\A b \in Brokers`` weak fairness of eleven actions of ``b``
(``LivenessSpec == Init /\ [][Next]_vars /\ Liveness``).  ``KraftModel.liveness()`` declares
them through ``kraft_liveness``:

    isrlab check --model tla-kraft-3.5 -p view=none -p fence_broker_limit=1 --liveness

The cfgs say to comment the VIEW out for liveness checking, so ``--liveness`` wants
``view=none`` (states whole).  The parameter ``unfair`` names actions whose weak fairness is
dropped (``-p unfair=UnfenceBroker``).  The port's labels are ``Action(b)``, so
``Fairness.of("weak", ..., per="label")`` is exactly ``\A b : WF_vars(Action(b))``.

How each property is declared (docs/checker.md, "Vanlightly's KRaft properties in these
terms"): ``\A b`` or ``\A v`` outside a temporal operator is one clause per broker or value;
``AlterPartitionEpochEventuallyReachedOrZero``, ``[]<>(\A b : P_b ~> Q_b)``, is per broker
``[]<>P_b => []<>Q_b``; ``EventuallyMetadataConverges`` is one ``[]<>`` of the conjunction
over brokers; ``EventuallyReassignmentCompletes`` parses as
``adding # {} \/ (removing # {} ~> adding = {} /\ removing = {})``, whose first disjunct is
false in the initial state (checked when the declaration is built), so it is that leads-to.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from typing import Protocol

from isrlab.checker.model import (
    AlwaysEventually,
    AlwaysEventuallyImplies,
    Clause,
    Fairness,
    LeadsTo,
    Liveness,
    TemporalProperty,
)
from isrlab.spec.tla_kraft.layout import (
    BROKER_MD_LOG,
    BROKER_STATE,
    CON_BROKER_REG,
    CON_LOG,
    CON_PM,
    FAIR_ACTIONS,
    FENCED,
    FOLLOWER,
    INV_NEG_ACKED,
    INV_POS_ACKED,
    INV_SENT,
    LEADER,
    P_DATA,
    P_MD,
    P_PENDING_AP,
    P_STATUS,
    ROLE_NIL,
    RUNNING,
    STARTING,
    UNFENCED,
    Packed,
    State,
)


class KraftLike(Protocol):
    """What the declarations read of a ``tla-kraft-*`` model (``model.KraftModel``)."""

    @property
    def brokers(self) -> Sequence[int]: ...

    @property
    def values(self) -> Sequence[int]: ...

    def unpack(self, packed: Packed) -> State: ...

    def init_states(self) -> Iterable[Packed]: ...

PROPERTIES = (
    "EventuallyRuns", "EventuallyUnfenced", "AlterPartitionEpochEventuallyReachedOrZero",
    "EventuallyMetadataConverges", "EventuallyWriteIsAcceptedOrRejected",
    "EventuallyAcknowledgedValueFullyReplicated", "EventuallyReassignmentCompletes",
)
"""The seven liveness properties, in the properties modules' order."""

Predicate = Callable[[State], bool]


def _has(mask: int, b: int) -> bool:
    return bool(mask >> (b - 1) & 1)


def _value_bit(v: int) -> int:
    return 1 << (v - 1)


# -- the properties' state predicates (v3_5_properties.tla / kip_966_properties.tla) ----------


def _status_is(b: int, status: int) -> Predicate:
    return lambda s: bool(s[BROKER_STATE][b - 1][0] == status)


def _registration_is(b: int, status: int) -> Predicate:
    return lambda s: bool(s[CON_BROKER_REG][b - 1][0] == status)


def _runs_unfenced(b: int) -> Predicate:
    return lambda s: bool(s[BROKER_STATE][b - 1][0] == RUNNING
                          and s[CON_BROKER_REG][b - 1][0] == UNFENCED)


def _ap_pending(b: int) -> Predicate:
    return lambda s: bool(s[P_PENDING_AP][b - 1][0] > 0)


def _ap_reached_or_zero(b: int) -> Predicate:
    def holds(s: State) -> bool:
        epoch = s[P_PENDING_AP][b - 1][0]
        return bool(epoch == s[P_MD][b - 1][5] or epoch == 0)
    return holds


def _needs_action(s: State, b: int, md_offset: int) -> bool:
    """PartitionNeedsAction(b, md_offset) of the functions module."""
    md, record = s[P_MD][b - 1], s[CON_LOG][md_offset - 1]
    if s[P_STATUS][b - 1] == LEADER:
        return True
    if _has(md[0], b):
        return bool(record[5] > md[4])  # IsLeaderEpochBump
    return _has(record[0], b)


def _converged(s: State, b: int) -> bool:
    """EventuallyMetadataConverges' condition for broker ``b``."""
    md, con = s[P_MD][b - 1], s[CON_PM]
    if md[1] == con[1] and md[3] == con[4] and md[4] == con[5] and md[5] == con[6]:
        return True
    status = s[P_STATUS][b - 1]
    if status == FOLLOWER:
        unreplicated = range(s[BROKER_MD_LOG][b - 1] + 1, len(s[CON_LOG]) + 1)
        return not any(_needs_action(s, b, offset) for offset in unreplicated)
    return bool(status == ROLE_NIL and not _has(con[0], b))


def _all_converged(brokers: Sequence[int]) -> Predicate:
    return lambda s: all(_converged(s, b) for b in brokers)


def _in(variable: int, v: int) -> Predicate:
    return lambda s: bool(s[variable] & _value_bit(v))


def _acked_or_rejected(v: int) -> Predicate:
    return lambda s: bool((s[INV_POS_ACKED] | s[INV_NEG_ACKED]) & _value_bit(v))


def _fully_replicated(v: int, brokers: Sequence[int]) -> Predicate:
    def holds(s: State) -> bool:
        replicas = s[CON_PM][0]
        return all(any(entry[2] == v for entry in s[P_DATA][b - 1][0])
                   for b in brokers if _has(replicas, b))
    return holds


def _removing(s: State) -> bool:
    return bool(s[CON_PM][8])


def _no_reassignment(s: State) -> bool:
    return not s[CON_PM][7] and not s[CON_PM][8]


def kraft_liveness(model: KraftLike, unfair: Iterable[str] = ()) -> Liveness[Packed]:
    """The seven properties and ``Liveness`` (without the weak fairness of ``unfair``), over
    the model's packed states."""
    if any(model.unpack(s)[CON_PM][7] for s in model.init_states()):
        raise ValueError("EventuallyReassignmentCompletes: an initial state is reassigning")
    brokers, unpack = model.brokers, model.unpack

    def on_packed(predicate: Predicate) -> Callable[[Packed], bool]:
        return lambda data: predicate(unpack(data))

    def packed(clause: Clause[State]) -> Clause[Packed]:
        if isinstance(clause, LeadsTo):
            return LeadsTo(on_packed(clause.premise), on_packed(clause.goal))
        if isinstance(clause, AlwaysEventuallyImplies):
            return AlwaysEventuallyImplies(on_packed(clause.premise), on_packed(clause.goal))
        assert isinstance(clause, AlwaysEventually)
        return AlwaysEventually(on_packed(clause.holds))

    def per_broker(clause: Callable[[int], Clause[State]]) -> tuple[Clause[State], ...]:
        return tuple(clause(b) for b in brokers)

    properties: tuple[tuple[Clause[State], ...], ...] = (
        per_broker(lambda b: LeadsTo(_status_is(b, STARTING), _runs_unfenced(b))),
        per_broker(lambda b: LeadsTo(_registration_is(b, FENCED),
                                     _registration_is(b, UNFENCED))),
        per_broker(lambda b: AlwaysEventuallyImplies(_ap_pending(b), _ap_reached_or_zero(b))),
        (AlwaysEventually(_all_converged(brokers)),),
        tuple(LeadsTo(_in(INV_SENT, v), _acked_or_rejected(v)) for v in model.values),
        tuple(LeadsTo(_in(INV_POS_ACKED, v), _fully_replicated(v, brokers))
              for v in model.values),
        (LeadsTo(_removing, _no_reassignment),),
    )
    dropped = frozenset(unfair)
    fair = [a for a in FAIR_ACTIONS if a not in dropped]
    return Liveness(
        tuple(TemporalProperty(name, tuple(map(packed, clauses))) for name, clauses
              in zip(PROPERTIES, properties, strict=True)),
        (Fairness.of("weak", *fair),) if fair else (),
    )
