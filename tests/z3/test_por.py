"""Partial-order reduction in the unrolling (``isrlab.checker.z3.por``): the footprints and
left movers it derives, the traces its constraint keeps, and that it never changes a
verdict or a shortest length.  Toy figures are counted by hand; the tla-* lengths are TLC's
(docs/conformance.md)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import pytest
import z3
from click.testing import CliRunner

from isrlab.checker.z3 import (
    ActionInstance,
    Frame,
    Fresh,
    SymbolicProperty,
    SymbolicSystem,
    Unrolling,
    bmc,
)
from isrlab.checker.z3.por import PartialOrder, footprint, independent, left_movers
from isrlab.checker.z3.solvers import yices_path
from isrlab.cli import cli
from isrlab.services import bmc as bmc_service
from isrlab.spec.symbolic.bridge import replay
from tests.z3.conftest import build_pair, heavy
from tests.z3.toys import Counters

Triple = tuple[int, int, int]


def _bump(name: str, limit: int) -> ActionInstance:
    def rel(s: Frame, t: Frame, fresh: Fresh) -> z3.BoolRef:
        others = [t[v] == s[v] for v in ("a", "b", "c") if v != name]
        return z3.And(s[name] < limit, t[name] == s[name] + 1, *others)
    return ActionInstance(f"Bump{name.upper()}", f"Bump{name.upper()}", rel)


def _copy(s: Frame, t: Frame, fresh: Fresh) -> z3.BoolRef:
    # c := a, but only when it changes something: reads a and c, writes c.
    return z3.And(s["c"] != s["a"], t["c"] == s["a"], t["a"] == s["a"], t["b"] == s["b"])


def _either(s: Frame, t: Frame, fresh: Fresh) -> z3.BoolRef:
    # Writes b (b := 0) in one branch only: still a write.
    return z3.Or(z3.And(t["a"] == s["a"], t["b"] == s["b"], t["c"] == s["c"]),
                 z3.And(t["a"] == s["a"], t["b"] == 0, t["c"] == s["c"]))


@dataclass(frozen=True)
class ThreeCounters:
    """a and b count up to 2 independently; Copy sets c to a; Either may reset b to 0."""

    name: str = "three"

    def signature(self) -> Sequence[tuple[str, z3.SortRef]]:
        return [(v, z3.IntSort()) for v in ("a", "b", "c")]

    def init(self, s: Frame) -> z3.BoolRef:
        return z3.And(s["a"] == 0, s["b"] == 0, s["c"] == 0)

    def actions(self) -> Sequence[ActionInstance]:
        return [_bump("a", 2), _bump("b", 2), ActionInstance("Copy", "Copy", _copy),
                ActionInstance("Either", "Either", _either)]

    def invariants(self) -> Sequence[SymbolicProperty]:
        return [SymbolicProperty("SumBelow4", lambda s: s["a"] + s["b"] < 4),
                SymbolicProperty("CBelow2", lambda s: s["c"] < 2)]

    def decode(self, model: z3.ModelRef, s: Frame) -> Triple:
        a, b, c = (model.eval(s[v], model_completion=True).as_long() for v in ("a", "b", "c"))
        return (a, b, c)

    def pin(self, s: Frame, state: Triple) -> z3.BoolRef:
        return z3.And(s["a"] == state[0], s["b"] == state[1], s["c"] == state[2])


def test_footprints_are_derived_from_the_relations() -> None:
    system = ThreeCounters()
    bump_a, bump_b, copy, either = (footprint(system, a) for a in system.actions())
    assert (bump_a.reads, bump_a.writes) == (frozenset("a"), frozenset("a"))
    assert (bump_b.reads, bump_b.writes) == (frozenset("b"), frozenset("b"))
    assert (copy.reads, copy.writes) == (frozenset("ac"), frozenset("c"))
    # b := 0 in one branch only is a write; the other branch reads b (t.b = s.b).
    assert (either.reads, either.writes) == (frozenset("b"), frozenset("b"))
    assert independent(bump_a, bump_b)
    assert not independent(bump_a, copy)  # Copy reads a
    assert independent(bump_b, copy)
    assert not independent(bump_b, either)  # both write b


def test_a_one_way_mover_is_found_by_its_query() -> None:
    # Counters: IncY needs y < x.  IncY then IncX can always be reordered IncX then IncY,
    # but not the other way round (from (0, 0), IncX then IncY has no IncY first).
    system = Counters()
    inc_x, inc_y = 0, 1
    movers = left_movers(system)
    assert inc_y in movers[inc_x]
    assert inc_x not in movers[inc_y]
    assert not independent(*(footprint(system, a) for a in system.actions()))


def possible(system: SymbolicSystem[Any], labels: Sequence[str],
             movers: Sequence[frozenset[int]]) -> bool:
    """Whether the unrolling with the partial-order constraint admits these labels."""
    solver = z3.Solver()
    unrolling = Unrolling(system, solver, partial_order=PartialOrder(movers))
    unrolling.start()
    for _ in labels:
        unrolling.extend()
    names = [a.label for a in system.actions()]
    solver.add([sel == names.index(label)
                for sel, label in zip(unrolling.selectors, labels, strict=True)])
    return bool(solver.check() == z3.sat)


def test_only_the_lexicographic_normal_form_of_commuting_steps_is_kept() -> None:
    system = ThreeCounters()
    movers = left_movers(system)
    assert possible(system, ["BumpA", "BumpB"], movers)
    assert not possible(system, ["BumpB", "BumpA"], movers)  # BumpA BumpB instead
    # Across a stretch: in BumpA Either BumpB Copy, Copy moves left past BumpB (which comes
    # first: no reason to) and past Either (which comes after Copy): the same trace is
    # BumpA Copy Either BumpB, which is kept.  Adjacent pairs alone would keep both.
    assert not possible(system, ["BumpA", "Either", "BumpB", "Copy"], movers)
    assert possible(system, ["BumpA", "Copy", "Either", "BumpB"], movers)
    # Copy does not move left past BumpA (it reads a): BumpA BumpB Copy BumpA is kept.
    assert possible(system, ["BumpA", "BumpB", "Copy", "BumpA"], movers)
    # Without the constraint every order is a trace.
    assert possible(system, ["BumpA", "Either", "BumpB", "Copy"], [frozenset()] * 4)
    assert possible(system, ["BumpB", "BumpA"], [frozenset()] * 4)


@pytest.mark.parametrize("solver", [
    "z3",
    pytest.param("yices", marks=pytest.mark.skipif(yices_path() is None,
                                                   reason="yices-smt2 not installed")),
])
def test_the_shortest_lengths_are_unchanged_on_the_toys(solver: str) -> None:
    # ThreeCounters: a + b = 4 first after 4 bumps (5 states); c = 2 after BumpA twice and
    # Copy (4 states).  Counters: x + y = 5 after 5 steps (6 states), with Add 4 steps.
    cases: list[tuple[SymbolicSystem[Any], list[str], int]] = [
        (ThreeCounters(), ["SumBelow4"], 5), (ThreeCounters(), ["CBelow2"], 4),
             (Counters(), ["SumBelow5"], 6), (Counters(jumps=True), ["SumBelow5"], 5)]
    for system, invariants, states in cases:
        for partial_order in (False, True):
            result = bmc(system, invariants, 8, logic="QF_LIA", solver=solver,
                         partial_order=partial_order)
            assert result.trace is not None
            assert (len(result.trace), result.proved_steps) == (states, states - 2)


def shortest_with_por(name: str, invariants: list[str], depth: int,
                      **params: int) -> tuple[int, int]:
    """(states, refuted steps) of ``isrlab``'s symmetry breaking plus the reduction."""
    model, system = build_pair(name, **params)
    result = bmc(system, invariants, depth, logic="QF_LIA", options=system.solver_options,
                 partial_order=True, **system.symmetry_breaking(invariants))
    assert result.trace is not None
    replay(model, result.trace, system.replicas)  # a real trace of the explicit model
    return len(result.trace), result.proved_steps


def test_truncate_to_hw_weak_isr_keeps_tlcs_9_states_with_the_reduction() -> None:
    # docs/conformance.md, configuration A: KafkaTruncateToHighWatermark, 9 states.
    assert shortest_with_por("tla-truncate-to-hw", ["WeakIsr", "StrongIsr"], 9) == (9, 7)


@pytest.mark.heavy
@heavy
def test_truncate_to_hw_keeps_tlcs_9_states_in_configuration_b_with_the_reduction() -> None:
    # Kip101, Kip279 and Kip320FirstTry use the reduction by default: tests/z3/test_tla_bmc.py
    # checks TLC's lengths for them with it.
    assert shortest_with_por("tla-truncate-to-hw", ["StrongIsr"], 9, replicas=3,
                             max_leader_epoch=3) == (9, 7)


@pytest.mark.parametrize("name, reduced", [("tla-kip320-first-try", True),
                                           ("tla-kip101", True), ("tla-kip279", True),
                                           ("tla-truncate-to-hw", False)])
def test_isrlab_bmc_reduces_where_the_variant_says(name: str, reduced: bool,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    # docs/z3.md: the reduction is the default of `isrlab bmc` on Kip101, Kip279 and
    # Kip320FirstTry, where it wins, and not on KafkaTruncateToHighWatermark, where deriving
    # the movers costs more than it saves.
    seen: list[bool] = []
    real = bmc

    def spy(*args: Any, **kwargs: Any) -> Any:
        seen.append(kwargs["partial_order"])
        return real(*args, **kwargs)

    monkeypatch.setattr(bmc_service, "bmc_search", spy)
    result = CliRunner().invoke(cli, ["bmc", "--model", name, "--depth", "2"])
    assert result.exit_code == 0, result.output
    assert "no violation in any trace of up to 3 states" in result.output
    assert seen == [reduced]
