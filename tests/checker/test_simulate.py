"""Seeded random walks: every invariant checked, the same seed replays the same walks."""

from __future__ import annotations

from isrlab.checker.simulate import SimulateOptions, simulate
from isrlab.checker.toys import Counter, Symmetric


def test_a_seeded_walk_finds_a_reachable_violation() -> None:
    result = simulate(Symmetric(3, 3, bad_sum=5), SimulateOptions(seed=1, walks=50, depth=30))
    assert result.violation is not None
    assert sum(result.violation.trace[-1].state["value"].values()) == 5
    assert result.violation.trace[0].action == "Init"


def test_the_same_seed_reproduces_the_counterexample_exactly() -> None:
    options = SimulateOptions(seed=42, walks=50, depth=30)
    first = simulate(Symmetric(4, 3, bad_sum=6), options)
    second = simulate(Symmetric(4, 3, bad_sum=6), options)
    assert first.violation is not None
    assert first.violation == second.violation
    assert first.extra["violating_walk"] == second.extra["violating_walk"]


def test_walks_are_bounded_by_the_depth_in_states() -> None:
    result = simulate(Counter(100), SimulateOptions(seed=0, walks=5, depth=7))
    assert result.ok
    assert result.diameter == 7
    assert result.generated_states == 35


def test_a_walk_stops_at_a_state_outside_the_boundary() -> None:
    result = simulate(Counter(100, bound=1), SimulateOptions(seed=0, walks=3, depth=50))
    assert result.diameter == 2
