"""A toy symbolic system for testing the generic Z3 machinery: two counters.

``x`` counts up to 3 (``IncX``, and with ``jumps`` also ``Add(d)`` for d ∈ {1, 2}); ``y``
counts up but never past ``x`` (``IncY``).  Every figure the tests assert is counted by hand.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import z3

from isrlab.checker.z3 import ActionInstance, Frame, Fresh, SymbolicProperty

Pair = tuple[int, int]
LIMIT = 3


def _inc_x(s: Frame, t: Frame, fresh: Fresh) -> z3.BoolRef:
    return z3.And(s["x"] < LIMIT, t["x"] == s["x"] + 1, t["y"] == s["y"])


def _add(s: Frame, t: Frame, fresh: Fresh) -> z3.BoolRef:
    d = fresh.int("d")
    return z3.And(d >= 1, d <= 2, s["x"] + d <= LIMIT, t["x"] == s["x"] + d, t["y"] == s["y"])


def _inc_y(s: Frame, t: Frame, fresh: Fresh) -> z3.BoolRef:
    return z3.And(s["y"] < s["x"], t["y"] == s["y"] + 1, t["x"] == s["x"])


def _inc_x_update(s: Frame, t: Frame, fresh: Fresh) -> tuple[z3.BoolRef, frozenset[str]]:
    return z3.And(s["x"] < LIMIT, t["x"] == s["x"] + 1), frozenset({"x"})


def _add_update(s: Frame, t: Frame, fresh: Fresh) -> tuple[z3.BoolRef, frozenset[str]]:
    d = fresh.int("d")
    return z3.And(d >= 1, d <= 2, s["x"] + d <= LIMIT, t["x"] == s["x"] + d), frozenset({"x"})


def _inc_y_update(s: Frame, t: Frame, fresh: Fresh) -> tuple[z3.BoolRef, frozenset[str]]:
    return z3.And(s["y"] < s["x"], t["y"] == s["y"] + 1), frozenset({"y"})


@dataclass(frozen=True)
class Counters:
    """The two-counter system; ``jumps`` adds the parameterised ``Add`` action; ``factored``
    gives each action its ``factored`` form (the update without the frame condition)."""

    jumps: bool = False
    name: str = "counters"
    factored: bool = False

    def signature(self) -> Sequence[tuple[str, z3.SortRef]]:
        return [("x", z3.IntSort()), ("y", z3.IntSort())]

    def init(self, s: Frame) -> z3.BoolRef:
        return z3.And(s["x"] == 0, s["y"] == 0)

    def actions(self) -> Sequence[ActionInstance]:
        f = self.factored
        acts = [ActionInstance("IncX", "IncX", _inc_x, _inc_x_update if f else None),
                ActionInstance("IncY", "IncY", _inc_y, _inc_y_update if f else None)]
        if self.jumps:
            acts.append(ActionInstance("Add", "Add", _add, _add_update if f else None))
        return acts

    def invariants(self) -> Sequence[SymbolicProperty]:
        return [
            SymbolicProperty("SumBelow5", lambda s: s["x"] + s["y"] < 5),
            SymbolicProperty("YAtMost3", lambda s: s["y"] <= LIMIT),
            SymbolicProperty("YAtMostX", lambda s: s["y"] <= s["x"]),
            SymbolicProperty("XAtMost3", lambda s: s["x"] <= LIMIT),
            SymbolicProperty("XNonNegative", lambda s: s["x"] >= 0),
        ]

    def decode(self, model: z3.ModelRef, s: Frame) -> Pair:
        x = model.eval(s["x"], model_completion=True).as_long()
        y = model.eval(s["y"], model_completion=True).as_long()
        return (x, y)

    def pin(self, s: Frame, state: Pair) -> z3.BoolRef:
        return z3.And(s["x"] == state[0], s["y"] == state[1])
