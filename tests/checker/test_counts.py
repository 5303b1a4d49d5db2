"""State counts of the toy models, counted by hand (see each toy's docstring)."""

from __future__ import annotations

from math import comb

import pytest

from isrlab.checker.toys import Clock, Counter, Graph, Symmetric
from tests.checker.conftest import run


@pytest.mark.parametrize("workers", [1, 2])
def test_a_counter_to_five_has_six_states_and_eleven_generated(workers: int) -> None:
    result = run(Counter(5), workers=workers)
    assert (result.distinct_states, result.generated_states, result.diameter) == (6, 11, 6)
    assert result.ok and result.complete


def test_a_clock_visits_every_minute_of_the_day_once() -> None:
    result = run(Clock(3, 4))
    assert (result.distinct_states, result.generated_states, result.diameter) == (12, 13, 12)


@pytest.mark.parametrize("workers", [1, 2])
def test_symmetric_processes_have_values_to_the_procs_states(workers: int) -> None:
    result = run(Symmetric(4, 3), workers=workers)
    assert result.distinct_states == 3**4
    assert result.generated_states == 1 + 4 * 3**4
    assert result.diameter == 4 * 2 + 1


@pytest.mark.parametrize("workers", [1, 2])
def test_symmetry_reduction_counts_one_state_per_multiset_of_values(workers: int) -> None:
    result = run(Symmetric(4, 3), symmetry=True, workers=workers)
    orbits = comb(4 + 3 - 1, 4)
    assert result.distinct_states == orbits == 15
    assert result.generated_states == 1 + 4 * orbits
    assert result.diameter == 9


def test_the_graph_walk_reaches_five_nodes_in_four_levels() -> None:
    result = run(Graph(), stop_at_first=False)
    assert (result.distinct_states, result.generated_states, result.diameter) == (5, 7, 4)


def test_a_boundary_checks_states_beyond_it_but_does_not_expand_them() -> None:
    # x = 0..5 are reached; x = 5 is outside the bound: generated but, as TLC does with a
    # CONSTRAINT (ModelChecker.doNext keeps it out of the fingerprint set), neither expanded
    # nor counted as distinct nor in the diameter.
    # generated = 1 initial + Inc from 0..4 (5) + Reset from 1..4 (4); distinct x = 0..4.
    result = run(Counter(10, bound=5))
    assert (result.distinct_states, result.generated_states, result.diameter) == (5, 10, 5)


def test_a_state_beyond_the_boundary_is_still_checked() -> None:
    # x = 5 is outside the bound and breaks BelowBad: the trace is x = 0, 1, ..., 5.
    result = run(Counter(10, bad=5, bound=5))
    assert result.violation is not None and result.violation.length == 6


def test_a_depth_bound_stops_after_that_many_levels_and_says_incomplete() -> None:
    result = run(Counter(10), max_depth=3)
    assert (result.distinct_states, result.diameter, result.complete) == (3, 3, False)
    assert result.queue_left == 1


def test_a_state_bound_stops_after_the_level_that_reaches_it() -> None:
    result = run(Counter(10), max_states=4)
    assert result.distinct_states == 4 and not result.complete


def test_coverage_counts_generated_and_new_states_per_action() -> None:
    coverage = {c.action: (c.generated, c.distinct) for c in run(Counter(5)).coverage}
    assert coverage == {"Init": (1, 1), "Inc": (5, 5), "Reset": (5, 0)}


def test_sometimes_properties_report_where_they_were_first_reached() -> None:
    sometimes = {s.name: (s.reached, s.level) for s in run(Counter(5)).sometimes}
    assert sometimes == {"AtLimit": (True, 6), "Overflow": (False, None)}


def test_the_collision_estimate_is_tlcs_optimistic_formula() -> None:
    result = run(Counter(5))
    assert result.collision_probability == pytest.approx(6 * 5 / 2.0**64)
