"""Toy models whose state counts are known by hand: the checker's own test bed.

* ``toy-counter``: ``x`` in ``0..limit``; ``Inc`` (``x < limit``) and ``Reset`` (``x > 0``).
  ``limit + 1`` distinct states, ``2·limit + 1`` generated (the initial state included),
  diameter ``limit + 1``.  Invariant ``BelowBad``: ``x != bad`` (``bad = -1``: never broken).
  ``bound`` (TLC's CONSTRAINT): states with ``x >= bound`` are checked but neither expanded
  nor counted as distinct (as TLC).
* ``toy-clock``: ``hours × minutes`` positions; ``Tick`` advances one minute, with carry and
  wrap-around: ``hours·minutes`` distinct, that many plus one generated, the diameter equals
  the distinct count.
* ``toy-graph``: a fixed directed graph a→b, a→c, b→d, c→d, d→e, e→a (plus d→g, a dead end,
  when ``dead_end`` is set); ``Move(u,v)`` follows an edge.  Invariant ``NotAtE``.
* ``toy-symmetric``: ``procs`` interchangeable processes, each with a value in
  ``0..values-1``; ``Inc(i)`` increments process ``i``'s value modulo ``values``.
  ``values^procs`` states; under symmetry (permuting processes) the orbits are the multisets:
  ``C(procs + values - 1, procs)``.  Each state has ``procs`` successors.  Invariant
  ``SumIsNot``: the sum of the values differs from ``bad_sum`` (``-1``: never broken).

Each toy is deliberately tiny and obvious; the Kafka models live in ``spec``.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from isrlab.checker.model import Property
from isrlab.checker.registry import ModelEntry, Param, ParamValue, Registry


@dataclass(frozen=True, slots=True)
class Counter:
    """A bounded counter with a reset."""

    limit: int
    bad: int = -1
    bound: int = -1
    name: str = "toy-counter"

    def init_states(self) -> Iterable[int]:
        """Only ``x = 0``."""
        return (0,)

    def next_states(self, state: int) -> Iterable[tuple[str, int]]:
        """``Inc`` below the limit, ``Reset`` above zero."""
        steps = []
        if state < self.limit:
            steps.append(("Inc", state + 1))
        if state > 0:
            steps.append(("Reset", 0))
        return steps

    def invariants(self) -> Sequence[Property[int]]:
        """``BelowBad``: the counter never equals ``bad``."""
        return (Property("BelowBad", lambda x: x != self.bad),)

    def sometimes(self) -> Sequence[Property[int]]:
        """``AtLimit`` is reachable; ``Overflow`` never is (a vacuity example)."""
        return (
            Property("AtLimit", lambda x: x == self.limit),
            Property("Overflow", lambda x: x > self.limit),
        )

    def within_boundary(self, state: int) -> bool:
        """States at or above ``bound`` are not expanded (no bound when negative)."""
        return self.bound < 0 or state < self.bound

    def canonical(self, state: int) -> int:
        """No symmetry: every state is its own representative."""
        return state

    def encode(self, state: int) -> bytes:
        """Four little-endian bytes."""
        return state.to_bytes(4, "little")

    def decode(self, data: bytes) -> int:
        """The inverse of ``encode``."""
        return int.from_bytes(data, "little")

    def variables(self, state: int) -> Mapping[str, Any]:
        """The single variable ``x``."""
        return {"x": state}


@dataclass(frozen=True, slots=True)
class Clock:
    """An hours-and-minutes clock that ticks one minute at a time."""

    hours: int
    minutes: int
    name: str = "toy-clock"

    def init_states(self) -> Iterable[tuple[int, int]]:
        """Midnight."""
        return ((0, 0),)

    def next_states(self, state: tuple[int, int]) -> Iterable[tuple[str, tuple[int, int]]]:
        """``Tick``: one minute later, carrying into the hour and wrapping at the day's end."""
        hour, minute = state
        minute += 1
        if minute == self.minutes:
            minute, hour = 0, (hour + 1) % self.hours
        return (("Tick", (hour, minute)),)

    def invariants(self) -> Sequence[Property[tuple[int, int]]]:
        """``InRange``: both hands stay on the dial."""
        return (
            Property(
                "InRange", lambda s: 0 <= s[0] < self.hours and 0 <= s[1] < self.minutes
            ),
        )

    def sometimes(self) -> Sequence[Property[tuple[int, int]]]:
        """``LastMinute``: the last minute of the day is reached."""
        return (Property("LastMinute", lambda s: s == (self.hours - 1, self.minutes - 1)),)

    def within_boundary(self, state: tuple[int, int]) -> bool:
        """No boundary."""
        return True

    def canonical(self, state: tuple[int, int]) -> tuple[int, int]:
        """No symmetry."""
        return state

    def encode(self, state: tuple[int, int]) -> bytes:
        """Two 16-bit numbers."""
        return state[0].to_bytes(2, "little") + state[1].to_bytes(2, "little")

    def decode(self, data: bytes) -> tuple[int, int]:
        """The inverse of ``encode``."""
        return int.from_bytes(data[:2], "little"), int.from_bytes(data[2:], "little")

    def variables(self, state: tuple[int, int]) -> Mapping[str, Any]:
        """``hour`` and ``minute``."""
        return {"hour": state[0], "minute": state[1]}


_EDGES = (("a", "b"), ("a", "c"), ("b", "d"), ("c", "d"), ("d", "e"), ("e", "a"))


@dataclass(frozen=True, slots=True)
class Graph:
    """A walk on a small fixed directed graph, starting at ``a``."""

    dead_end: bool = False
    name: str = "toy-graph"

    def _edges(self) -> tuple[tuple[str, str], ...]:
        return (*_EDGES, ("d", "g")) if self.dead_end else _EDGES

    def init_states(self) -> Iterable[str]:
        """Node ``a``."""
        return ("a",)

    def next_states(self, state: str) -> Iterable[tuple[str, str]]:
        """``Move(u,v)`` for each edge leaving the current node."""
        return [(f"Move({u},{v})", v) for u, v in self._edges() if u == state]

    def invariants(self) -> Sequence[Property[str]]:
        """``NotAtE``: the walk never reaches ``e`` (it does, in four states)."""
        return (Property("NotAtE", lambda node: node != "e"),)

    def sometimes(self) -> Sequence[Property[str]]:
        """``AtD``: node ``d`` is reachable."""
        return (Property("AtD", lambda node: node == "d"),)

    def within_boundary(self, state: str) -> bool:
        """No boundary."""
        return True

    def canonical(self, state: str) -> str:
        """No symmetry."""
        return state

    def encode(self, state: str) -> bytes:
        """The node's name."""
        return state.encode()

    def decode(self, data: bytes) -> str:
        """The inverse of ``encode``."""
        return data.decode()

    def variables(self, state: str) -> Mapping[str, Any]:
        """The current ``node``."""
        return {"node": state}


@dataclass(frozen=True, slots=True)
class Symmetric:
    """Interchangeable processes, each incrementing its own value modulo ``values``."""

    procs: int
    values: int
    bad_sum: int = -1
    name: str = "toy-symmetric"

    def init_states(self) -> Iterable[tuple[int, ...]]:
        """Every value zero."""
        return ((0,) * self.procs,)

    def next_states(self, state: tuple[int, ...]) -> Iterable[tuple[str, tuple[int, ...]]]:
        """``Inc(p<i>)`` for each process ``i``."""
        steps = []
        for i, value in enumerate(state):
            successor = (*state[:i], (value + 1) % self.values, *state[i + 1 :])
            steps.append((f"Inc(p{i})", successor))
        return steps

    def invariants(self) -> Sequence[Property[tuple[int, ...]]]:
        """``SumIsNot``: the values never add up to ``bad_sum``."""
        return (Property("SumIsNot", lambda s: sum(s) != self.bad_sum),)

    def sometimes(self) -> Sequence[Property[tuple[int, ...]]]:
        """``AllMax``: every process at its largest value."""
        return (Property("AllMax", lambda s: all(v == self.values - 1 for v in s)),)

    def within_boundary(self, state: tuple[int, ...]) -> bool:
        """No boundary."""
        return True

    def canonical(self, state: tuple[int, ...]) -> tuple[int, ...]:
        """The sorted values: one representative per permutation orbit."""
        return tuple(sorted(state))

    def encode(self, state: tuple[int, ...]) -> bytes:
        """One byte per process (values below 256)."""
        return bytes(state)

    def decode(self, data: bytes) -> tuple[int, ...]:
        """The inverse of ``encode``."""
        return tuple(data)

    def variables(self, state: tuple[int, ...]) -> Mapping[str, Any]:
        """``value``: process name → value."""
        return {"value": {f"p{i}": v for i, v in enumerate(state)}}


def _int(params: Mapping[str, ParamValue], key: str) -> int:
    value = params[key]
    assert isinstance(value, int)
    return value


def register(reg: Registry) -> None:
    """Register the toy models (names start with ``toy-``)."""
    reg.register(ModelEntry(
        "toy-counter", "a counter 0..limit with Inc and Reset",
        (
            Param("limit", int, 5, "largest value", minimum=0),
            Param("bad", int, -1, "the value the invariant forbids (-1: none)", minimum=-1),
            Param("bound", int, -1, "states >= bound are not expanded (-1: none)", minimum=-1),
        ),
        lambda p: Counter(_int(p, "limit"), _int(p, "bad"), _int(p, "bound")),
    ))
    reg.register(ModelEntry(
        "toy-clock", "an hours:minutes clock",
        (
            Param("hours", int, 24, "hours per day", minimum=1),
            Param("minutes", int, 60, "minutes per hour", minimum=1),
        ),
        lambda p: Clock(_int(p, "hours"), _int(p, "minutes")),
    ))
    reg.register(ModelEntry(
        "toy-graph", "a walk on a six-node graph",
        (Param("dead_end", bool, False, "add the dead-end edge d->g"),),
        lambda p: Graph(bool(p["dead_end"])),
    ))
    reg.register(ModelEntry(
        "toy-symmetric", "interchangeable processes incrementing their values",
        (
            Param("procs", int, 3, "number of processes", minimum=1),
            Param("values", int, 3, "values per process (0..values-1)", minimum=1),
            Param("bad_sum", int, -1, "the sum the invariant forbids (-1: none)", minimum=-1),
        ),
        lambda p: Symmetric(_int(p, "procs"), _int(p, "values"), _int(p, "bad_sum")),
        symmetric=True,
    ))
