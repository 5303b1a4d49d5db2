r"""The liveness properties and fairness of Vanlightly's KRaft specifications, declared for
``tla-kraft-3.5`` and ``tla-kraft-kip966`` (``isrlab.spec.tla_kraft``).

Vanlightly/kafka-tlaplus, ``kafka_data_replication/kraft/v3.5/v3_5_properties.tla`` and
``kraft/kip-966/kip_966_properties.tla``, define the same seven liveness properties, and both
modules' ``Liveness`` is ``\A b \in Brokers`` weak fairness of eleven actions of ``b``
(``LivenessSpec == Init /\ [][Next]_vars /\ Liveness``).  ``KraftLiveness`` is a KRaft model
with a ``liveness()`` declaring them; ``V35`` and ``KIP966`` are its model entries:

    isrlab check --model isrlab.spec.kraft_liveness:V35 -p fence_broker_limit=1 --liveness

Their parameters are the ported models' without ``view``: the cfgs say to comment the VIEW
out for liveness checking, so states are whole.  ``unfair`` names actions whose weak
fairness is dropped (``-p unfair=UnfenceBroker``).  The port's labels are ``Action(b)``, so
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

from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

from isrlab.checker.model import (
    AlwaysEventually,
    AlwaysEventuallyImplies,
    Clause,
    Fairness,
    LeadsTo,
    Liveness,
    Property,
    TemporalProperty,
)
from isrlab.checker.registry import ModelEntry, Param, ParamValue
from isrlab.spec.tla_kraft import PARAMS_KIP966, PARAMS_V35, KraftModel, build_kip966, build_v35
from isrlab.spec.tla_kraft.model import (
    BROKER_MD_LOG,
    BROKER_STATE,
    CON_BROKER_REG,
    CON_LOG,
    CON_PM,
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
    VALUES,
    State,
)

FAIR_ACTIONS = (
    "BrokerStart", "ReceiveBrokerRegResponse", "ReceiveMetadataUpdate",
    "SendAlterPartitionRequest", "ReceiveAlterPartitionResponse", "SendFetchRequest",
    "ReceiveFetchRequest", "ReceiveFetchResponse", "ReceiveBrokerRegRequest",
    "ReceiveAlterPartitionRequest", "UnfenceBroker",
)
"""The actions of both modules' ``Liveness``, in its order (each weakly fair per broker)."""

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


def kraft_liveness(model: KraftModel, unfair: Iterable[str] = ()) -> Liveness[State]:
    """The seven properties and ``Liveness`` (without the weak fairness of ``unfair``)."""
    if any(s[CON_PM][7] for s in model.init_states()):
        raise ValueError("EventuallyReassignmentCompletes: an initial state is reassigning")
    brokers = model.brokers

    def per_broker(clause: Callable[[int], Clause[State]]) -> tuple[Clause[State], ...]:
        return tuple(clause(b) for b in brokers)

    properties = (
        per_broker(lambda b: LeadsTo(_status_is(b, STARTING), _runs_unfenced(b))),
        per_broker(lambda b: LeadsTo(_registration_is(b, FENCED),
                                     _registration_is(b, UNFENCED))),
        per_broker(lambda b: AlwaysEventuallyImplies(_ap_pending(b), _ap_reached_or_zero(b))),
        (AlwaysEventually(_all_converged(brokers)),),
        tuple(LeadsTo(_in(INV_SENT, v), _acked_or_rejected(v)) for v in VALUES),
        tuple(LeadsTo(_in(INV_POS_ACKED, v), _fully_replicated(v, brokers)) for v in VALUES),
        (LeadsTo(_removing, _no_reassignment),),
    )
    dropped = frozenset(unfair)
    unknown = dropped - frozenset(FAIR_ACTIONS)
    if unknown:
        raise ValueError(f"unfair: {', '.join(sorted(unknown))} not among the fair actions "
                         f"({', '.join(FAIR_ACTIONS)})")
    fair = [a for a in FAIR_ACTIONS if a not in dropped]
    return Liveness(
        tuple(TemporalProperty(name, clauses) for name, clauses
              in zip(PROPERTIES, properties, strict=True)),
        (Fairness.of("weak", *fair),) if fair else (),
    )


class KraftLiveness:
    """A ``tla-kraft-*`` model (without a view) that declares the specs' liveness."""

    def __init__(self, inner: KraftModel, unfair: Iterable[str] = ()) -> None:
        self.inner = inner
        self.name = inner.name
        self.identity_encoding = inner.identity_encoding
        self.has_boundary = inner.has_boundary
        self._liveness = kraft_liveness(inner, unfair)

    def init_states(self) -> Iterable[State]:
        """The port's Init."""
        return self.inner.init_states()

    def next_states(self, state: State) -> Iterable[tuple[str, State]]:
        """The port's Next (labels ``Action(b)``)."""
        return self.inner.next_states(state)

    def invariants(self) -> Sequence[Property[State]]:
        """The port's invariants."""
        return self.inner.invariants()

    def sometimes(self) -> Sequence[Property[State]]:
        """The port's sometimes properties."""
        return self.inner.sometimes()

    def within_boundary(self, state: State) -> bool:
        """No boundary."""
        return True

    def canonical(self, state: State) -> State:
        """No symmetry."""
        return state

    def encode(self, state: State) -> bytes:
        """The port's encoding (the whole state: no view)."""
        return self.inner.encode(state)

    def decode(self, data: bytes) -> State:
        """The port's decoding."""
        return self.inner.decode(data)

    def variables(self, state: State) -> Mapping[str, Any]:
        """The spec's variables."""
        return self.inner.variables(state)

    def liveness(self) -> Liveness[State]:
        """The seven properties under ``Liveness``'s weak fairness."""
        return self._liveness


_UNFAIR = Param("unfair", str, "", "comma-separated actions of Liveness whose weak fairness is "
                "dropped (e.g. UnfenceBroker)")


def _entry(name: str, params: tuple[Param, ...],
           build: Callable[[Mapping[str, ParamValue]], KraftModel]) -> ModelEntry:
    def live(values: Mapping[str, ParamValue]) -> KraftLiveness:
        unfair = [a.strip() for a in str(values["unfair"]).split(",") if a.strip()]
        return KraftLiveness(build({**values, "view": "none"}), unfair)

    kept = tuple(p for p in params if p.name != "view")
    return ModelEntry(name, f"{name} with Vanlightly's seven liveness properties and Liveness "
                      "fairness (no view)", (*kept, _UNFAIR), live)


V35 = _entry("tla-kraft-3.5", PARAMS_V35, build_v35)
"""``tla-kraft-3.5`` declaring its liveness (``--model isrlab.spec.kraft_liveness:V35``)."""
KIP966 = _entry("tla-kraft-kip966", PARAMS_KIP966, build_kip966)
"""``tla-kraft-kip966`` declaring its liveness."""
