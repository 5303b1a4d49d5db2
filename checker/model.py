"""The model interface the checker explores.  It knows nothing of Kafka.

A model is a finite (or bounded) transition system:

* ``init_states()`` -- the initial states;
* ``next_states(s)`` -- every enabled step from ``s`` as ``(label, successor)`` pairs.  Each
  pair counts as one *generated* state, exactly as TLC counts one per enabled disjunct and
  binding of its existential quantifiers (duplicates included);
* ``invariants()`` -- named predicates that must hold in every reachable state;
* ``sometimes()`` -- named predicates that must hold in *some* reachable state (reachability
  examples: a model in which none of them is reachable is probably vacuous);
* ``within_boundary(s)`` -- TLC's CONSTRAINT: a state outside it counts as generated and is
  checked, but is neither expanded nor counted as a distinct state (nor in the diameter),
  as in TLC, which keeps such states out of its fingerprint set;
* ``canonical(s)`` -- a representative of ``s``'s symmetry orbit, used only when symmetry
  reduction is asked for;
* ``encode(s)`` -- a canonical, injective byte encoding of a state; the checker's fingerprint
  is a stable 64-bit digest of it (never Python's salted ``hash()``);
* ``decode(b)`` -- the inverse of ``encode`` (states travel between processes and to disk as
  these bytes);
* ``variables(s)`` -- the state as named variables of plain values (``int``, ``bool``, ``str``,
  ``None``, ``tuple``/``list``, ``frozenset``, ``dict``), for traces and reports.

* ``view(s)`` -- optional: TLC's VIEW, a byte string identifying ``s`` for the search.
  When a model has it (and it is not ``None``), fingerprints are the view's, the full state
  is kept for expansion and traces, and of the states sharing a view the one found first in
  TLC's one-worker breadth-first order is the one expanded (in every engine and with any
  number of workers: states carry their discovery order).

Labels are plain strings such as ``"BecomeLeader(r1)"``; coverage groups them by the part
before the first ``(``.  Models should build their labels once, not per step.

Two optional class attributes let the breadth-first checker take shortcuts (same results):
``identity_encoding = True`` says states are ``bytes`` and ``encode``/``decode`` are the
identity (the checker then never calls them, and uses its compiled loops when built);
``has_boundary = False`` says ``within_boundary`` is always true.  A model with both may
also offer ``native_successors()``: ``None``, or a capsule of the C interface of
checker/_successors.h (its compiled ``next_states``, ``canonical`` and invariants, in the
order of ``invariants()``) with every label it can emit; the checker then runs each level
in C on several threads (checker/_engine.c), with the same results.

Liveness (optional): a model that also has ``liveness() -> Liveness[S]`` declares temporal
properties (``AlwaysEventually`` ``[]<>P``, ``EventuallyAlways`` ``<>[]P``, ``Eventually``
``<>P``, ``LeadsTo`` ``P ~> Q``, ``AlwaysEventuallyImplies`` ``[]<>P => []<>Q``, each a
conjunction of such clauses under one name, as TLA+'s ``\\A b : P(b) ~> Q(b)``) and the
weak or strong fairness of its actions (``Fairness``: which labels form which fair action).
``isrlab check --liveness`` checks them (``isrlab.checker.liveness``); ``HasLiveness`` is the
protocol such a model satisfies.

A model that wraps another (adds properties, checks something more) subclasses ``Delegating``:
every member above is its ``base``'s, the optional ones are not passed on.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Generic, Literal, Protocol, TypeVar, runtime_checkable

S = TypeVar("S")


@dataclass(frozen=True, slots=True)
class Property(Generic[S]):
    """A named state predicate: an invariant (must always hold) or a ``sometimes`` property.

    ``explain`` (optional) says, for a state's *variables* (``Model.variables``) in which the
    predicate is false, why: in the model's own words, naming the values.  The checker only
    prints what it returns (under a counterexample, in the JSON report, the ITF ``#meta``);
    ``""`` means it has nothing to add."""

    name: str
    holds: Callable[[S], bool]
    doc: str = ""
    explain: Callable[[Mapping[str, Any]], str] | None = None


class Model(Protocol[S]):
    """What the checker needs from a model; see the module docstring for each member."""

    @property
    def name(self) -> str:
        """The model's registered name (a plain attribute satisfies this too)."""
        ...

    def init_states(self) -> Iterable[S]: ...

    def next_states(self, state: S) -> Iterable[tuple[str, S]]: ...

    def invariants(self) -> Sequence[Property[S]]: ...

    def sometimes(self) -> Sequence[Property[S]]: ...

    def within_boundary(self, state: S) -> bool: ...

    def canonical(self, state: S) -> S: ...

    def encode(self, state: S) -> bytes: ...

    def decode(self, data: bytes) -> S: ...

    def variables(self, state: S) -> Mapping[str, Any]: ...


class Delegating(Generic[S]):
    """A model that is another model, ``base``, in every member ``Model`` names but its
    ``name``: the steps, states, properties and encoding are ``base``'s.  A wrapper
    subclasses it and overrides what it changes (its properties, say) and sets ``base``
    and ``name``.  The optional members (``view``, ``identity_encoding``,
    ``has_boundary``, ``native_successors``, ``state_layout``, ``liveness``, ...) are not
    passed on: the checker detects them by presence (``getattr(model, "view", None)``), so
    a wrapper that keeps them says so itself (a ``__getattr__`` reaching ``base``)."""

    base: Model[S]

    def init_states(self) -> Iterable[S]:
        """The base model's initial states."""
        return self.base.init_states()

    def next_states(self, state: S) -> Iterable[tuple[str, S]]:
        """The base model's steps."""
        return self.base.next_states(state)

    def invariants(self) -> Sequence[Property[S]]:
        """The base model's invariants."""
        return self.base.invariants()

    def sometimes(self) -> Sequence[Property[S]]:
        """The base model's ``sometimes`` properties."""
        return self.base.sometimes()

    def within_boundary(self, state: S) -> bool:
        """The base model's boundary."""
        return self.base.within_boundary(state)

    def canonical(self, state: S) -> S:
        """The base model's symmetry representative."""
        return self.base.canonical(state)

    def encode(self, state: S) -> bytes:
        """The base model's encoding."""
        return self.base.encode(state)

    def decode(self, data: bytes) -> S:
        """The base model's decoding."""
        return self.base.decode(data)

    def variables(self, state: S) -> Mapping[str, Any]:
        """The base model's variables."""
        return self.base.variables(state)


class EvaluationError(Exception):
    """A model's own evaluation error, raised by ``next_states``: the spec's next step is
    undefined in this state (TLC stops with "Error: evaluating ..."; e.g. an index outside
    a sequence).  Not a bug of the checker nor a violation: ``isrlab check`` and
    ``simulate`` report it with the trace that reached the state (exit 3).  ``action``
    names the step being evaluated (its label) when the model knows it."""

    def __init__(self, message: str, action: str | None = None) -> None:
        super().__init__(message)
        self.action = action

    def __str__(self) -> str:
        message = super().__str__()
        return f"{self.action}: {message}" if self.action else message


# -- liveness declarations (optional) ----------------------------------------------------------


@dataclass(frozen=True, slots=True)
class AlwaysEventually(Generic[S]):
    """``[]<>P``: ``holds`` is true infinitely often (violated by a fair behaviour that ends
    in states where it is false)."""

    holds: Callable[[S], bool]


@dataclass(frozen=True, slots=True)
class EventuallyAlways(Generic[S]):
    """``<>[]P``: from some point on ``holds`` stays true (violated by a fair behaviour in
    which it is false infinitely often)."""

    holds: Callable[[S], bool]


@dataclass(frozen=True, slots=True)
class Eventually(Generic[S]):
    """``<>P``: every fair behaviour reaches a state where ``holds`` is true."""

    holds: Callable[[S], bool]


@dataclass(frozen=True, slots=True)
class LeadsTo(Generic[S]):
    """``P ~> Q``: whenever ``premise`` is true, ``goal`` is then or later true."""

    premise: Callable[[S], bool]
    goal: Callable[[S], bool]


@dataclass(frozen=True, slots=True)
class AlwaysEventuallyImplies(Generic[S]):
    """``[]<>P => []<>Q`` (the same as ``[]<>(P ~> Q)``): if ``premise`` is true infinitely
    often, so is ``goal``."""

    premise: Callable[[S], bool]
    goal: Callable[[S], bool]


Clause = (
    AlwaysEventually[S] | EventuallyAlways[S] | Eventually[S] | LeadsTo[S]
    | AlwaysEventuallyImplies[S]
)
"""One temporal formula over state predicates."""


@dataclass(frozen=True, slots=True)
class TemporalProperty(Generic[S]):
    """A named temporal property: the conjunction of its ``clauses`` (one per parameter
    value for a TLA+ ``\\A b \\in Brokers : ...``); violated when one clause is."""

    name: str
    clauses: tuple[Clause[S], ...]
    doc: str = ""


def action_name(label: str) -> str:
    """A label's action: the part before its first ``(`` (``UnfenceBroker(b1)`` ->
    ``UnfenceBroker``)."""
    return label.split("(", 1)[0]


@dataclass(frozen=True, slots=True)
class Fairness:
    """Weak (``WF_vars(A)``) or strong (``SF_vars(A)``) fairness of a family of actions.

    ``instance(label)`` names the fair action a step with this label belongs to, or
    ``None`` when the label is not covered: every distinct name is one fair action.  A step
    that leaves the state unchanged never counts as taking (or enabling) an action, as
    ``<<A>>_vars`` in TLA+.  ``Fairness.of`` builds the usual forms."""

    kind: Literal["weak", "strong"]
    name: str
    instance: Callable[[str], str | None]

    @staticmethod
    def of(
        kind: Literal["weak", "strong"], *actions: str, per: Literal["label", "action"] = "label",
    ) -> Fairness:
        """Fairness of the named actions: ``per="label"`` makes each label its own fair
        action (TLA+'s ``\\A b : WF_vars(A(b))`` when labels are ``A(b)``), ``per="action"``
        one fair action per name (``WF_vars(\\E b : A(b))``)."""
        wanted = frozenset(actions)

        def instance(label: str) -> str | None:
            action = action_name(label)
            if action not in wanted:
                return None
            return label if per == "label" else action

        return Fairness(kind, f"{kind[0].upper()}F({', '.join(actions)})", instance)


@dataclass(frozen=True, slots=True)
class Liveness(Generic[S]):
    """What ``--liveness`` checks: ``properties`` under the conjunction of ``fairness``,
    over the behaviours that take the actions of ``finitely_often`` (names as
    ``action_name`` gives them) only finitely often: TLA+'s ``<>[][~(A1 \\/ ...)]_vars``
    as an assumption of every property, e.g. faults a property should survive any finite
    number of (a lasso's cycle takes none of them; its prefix any number)."""

    properties: tuple[TemporalProperty[S], ...]
    fairness: tuple[Fairness, ...] = ()
    finitely_often: tuple[str, ...] = ()


@runtime_checkable
class HasLiveness(Protocol[S]):
    """A model that declares liveness properties (the optional extension of ``Model``)."""

    def liveness(self) -> Liveness[S]: ...


def state_layout(model: object) -> dict[str, str]:
    """What a run directory records of a model's state encoding: ``{"state_layout": v}``
    when the model has a ``state_layout`` string (the version of its ``encode``), so that
    a run is never resumed under another encoding; nothing for a model without one."""
    layout = getattr(model, "state_layout", None)
    return {"state_layout": layout} if isinstance(layout, str) else {}
