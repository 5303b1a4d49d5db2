"""Refinement of ``kafka`` to ``tla-kip279`` / ``tla-kip320`` on a small configuration."""

from __future__ import annotations

import os
from typing import Any

import pytest

from isrlab.spec.kafka.model import KafkaModel
from isrlab.spec.kafka.refinement import (
    GAP_STEPS,
    check_refinement,
    matching_config,
    observe,
    project,
    random_walks,
    tla_for,
)
from isrlab.spec.tla.model import TlaModel
from isrlab.spec.variants import get as variant_named

VERSIONS_CHECKED = ("tla-kip279", "tla-kip320")


def small(version: str) -> KafkaModel:
    return KafkaModel(matching_config(version, brokers=2, max_records=1, max_leader_epoch=1))


def transitions_by_plain_bfs(m: KafkaModel) -> tuple[int, int]:
    """The kafka state space walked independently of the refinement checker."""
    seen: set[Any] = set(m.init_states())
    queue = list(seen)
    edges = 0
    while queue:
        s = queue.pop()
        for _, t in m.next_states(s):
            edges += 1
            if t not in seen:
                seen.add(t)
                queue.append(t)
    return len(seen), edges


@pytest.mark.parametrize("version", VERSIONS_CHECKED)
def test_every_transition_refines_with_the_two_missing_spec_steps(version: str) -> None:
    m = small(version)
    result = check_refinement(m, tla_for(m), k=5)
    assert result.ok, result.failures
    states, edges = transitions_by_plain_bfs(m)
    assert (result.states, result.transitions) == (states, edges)
    assert result.max_steps >= 2  # a fetch is a copy plus a HW increment in the spec
    assert set(result.gap_transitions) == {"Fetch", "ShrinkIsr"}
    # Two brokers: only the two steps every version lacks are needed.
    assert set(result.gap_kinds) == {"FollowerLearnHw", "LeaderShrinkIsrIdle"}


@pytest.mark.parametrize("version", VERSIONS_CHECKED)
def test_the_spec_alone_lacks_empty_fetches_and_idle_shrinks(version: str) -> None:
    m = small(version)
    result = check_refinement(m, tla_for(m), k=5, gaps=False)
    assert not result.ok
    assert "ShrinkIsr" in result.failed_kinds  # a caught-up follower dropped by the clock


def test_an_unfenced_cluster_does_not_refine_kip320() -> None:
    m = small("tla-kip279")  # no KIP-320 fencing: fetches across epochs
    tla = TlaModel(variant_named("tla-kip320"), 2, 1, 1, 1)
    result = check_refinement(m, tla, k=5)
    assert not result.ok


def test_initial_state_is_the_topic_after_its_first_election() -> None:
    m = small("tla-kip279")
    tla = tla_for(m)
    s0 = next(iter(m.init_states()))
    t0 = next(iter(tla.init_states()))
    assert project(m, s0) != observe(tla, t0)  # the spec starts before the topic exists
    assert project(m, s0) == (0, 1, 0, 3, ((0, 0, 0, 3, ()), (0, 0, 0, -1, ())))


def test_random_walks_are_deterministic() -> None:
    m = small("tla-kip320")
    a = random_walks(m, tla_for(m), walks=20, length=10, seed=7, k=5)
    b = random_walks(m, tla_for(m), walks=20, length=10, seed=7, k=5)
    assert a.ok and a.summary() == b.summary()


def large(version: str) -> KafkaModel:
    return KafkaModel(matching_config(version, brokers=3, max_records=2, max_leader_epoch=2))


@pytest.mark.skipif(bool(os.environ.get("ISRLAB_SKIP_HEAVY")), reason="about 20-40 s")
@pytest.mark.parametrize("version", VERSIONS_CHECKED)
def test_three_broker_random_walks_refine(version: str) -> None:
    m = large(version)
    result = random_walks(m, tla_for(m), walks=150, length=30, seed=1, k=6)
    assert result.ok, result.failures
    assert result.transitions > 150 * 20  # most walks run their 30 steps
    assert {"FollowerLearnHw", "LeaderShrinkIsrIdle"} <= set(result.gap_kinds)


# One walk each (3 brokers, 2 records, epochs 0..2, 30 steps, the seed given) whose named
# Fetch step refines only with the named gap step: the failure without it, the match with it.
WITNESSES = [
    ("tla-kip279", 9, "FollowerTruncateToLeaderEnd", "OutOfRangeTruncation at Fetch(2)"),
    ("tla-kip279", 108, "LeaderIncHwOnRememberedLeo", "LeaderHwFromRememberedLeo at Fetch(1)"),
    ("tla-kip320", 42, "LeaderIncHwOnRememberedLeo", "LeaderHwFromRememberedLeo at Fetch(2)"),
    ("tla-kip320", 303, "LeaderExpandIsrAtEpochStart", "Fetch at Fetch(1)"),
]


@pytest.mark.parametrize(("version", "seed", "gap", "failing_step"), WITNESSES)
def test_each_three_broker_gap_step_is_needed(version: str, seed: int, gap: str,
                                              failing_step: str) -> None:
    m = large(version)
    tla = tla_for(m)
    without = random_walks(m, tla, walks=1, length=30, seed=seed, k=6,
                           gaps=set(GAP_STEPS) - {gap})
    assert without.failed == 1
    assert without.failures[0].startswith(failing_step + ": from ")
    with_it = random_walks(m, tla, walks=1, length=30, seed=seed, k=6)
    assert with_it.ok, with_it.failures
    assert with_it.gap_kinds.get(gap, 0) >= 1


def test_unknown_gap_step_is_refused() -> None:
    m = small("tla-kip279")
    with pytest.raises(ValueError, match="unknown gap steps"):
        check_refinement(m, tla_for(m), gaps={"NoSuchStep"})
