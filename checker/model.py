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

Labels are plain strings such as ``"BecomeLeader(r1)"``; coverage groups them by the part
before the first ``(``.  Models should build their labels once, not per step.

Two optional class attributes let the breadth-first checker take shortcuts (same results):
``identity_encoding = True`` says states are ``bytes`` and ``encode``/``decode`` are the
identity (the checker then never calls them, and uses its compiled loops when built);
``has_boundary = False`` says ``within_boundary`` is always true.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Generic, Protocol, TypeVar

S = TypeVar("S")


@dataclass(frozen=True, slots=True)
class Property(Generic[S]):
    """A named state predicate: an invariant (must always hold) or a ``sometimes`` property."""

    name: str
    holds: Callable[[S], bool]
    doc: str = ""


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


def state_layout(model: object) -> dict[str, str]:
    """What a run directory records of a model's state encoding: ``{"state_layout": v}``
    when the model has a ``state_layout`` string (the version of its ``encode``), so that
    a run is never resumed under another encoding; nothing for a model without one."""
    layout = getattr(model, "state_layout", None)
    return {"state_layout": layout} if isinstance(layout, str) else {}
