"""The symbolic encodings of the tla-* models cannot drift from the executable models.

For concrete states of the explicit model (breadth-first, and random walks drawn by
hypothesis) and every action:

(a) each Python successor satisfies the symbolic transition relation T(s, s′) of its action;
(b) the successors Z3 admits, enumerated with blocking clauses, are exactly the Python
    successors — per action family and for all of Next;

and both sides agree on the initial states and on WeakIsr and StrongIsr.
"""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from isrlab.checker.model import Model
from isrlab.checker.z3 import admits, families, initial_states, satisfies, successors
from isrlab.spec.symbolic.bridge import concrete
from isrlab.spec.symbolic.state import KState
from isrlab.spec.symbolic.tla import TlaSystem, variant_keys
from tests.z3.conftest import bfs_states, build_pair

MODELS = tuple(f"tla-{key}" for key in variant_keys())  # every variant with a Z3 encoding
PER_FAMILY = 2  # concrete states per action family in the breadth-first sample
SAMPLE = 600  # breadth-first states scanned for them


def family_of(label: str) -> str:
    """The action family of an explicit label: the part before ``(``."""
    return label.split("(", 1)[0]


def python_successors(model: Model[Any], state: Any, replicas: int,
                      family: str | None = None) -> set[KState]:
    return {concrete(model, succ, replicas) for label, succ in model.next_states(state)
            if family is None or family_of(label) == family}


def check_state(model: Model[Any], system: TlaSystem, state: Any) -> None:
    """(a) and (b) for one concrete state, every family, plus the invariants."""
    n = system.replicas
    here = concrete(model, state, n)
    for label, succ in model.next_states(state):
        assert admits(system, here, concrete(model, succ, n), family_of(label)), label
    assert successors(system, here) == python_successors(model, state, n)
    invariants = {p.name: p.holds(state) for p in model.invariants()}
    for name, holds in invariants.items():
        assert satisfies(system, here, name) == holds, name


def sample_by_family(model: Model[Any], system: TlaSystem) -> dict[str, list[Any]]:
    """For every action family, the first states (breadth-first) where it is enabled."""
    chosen: dict[str, list[Any]] = {fam: [] for fam in families(system)}
    for state in bfs_states(model, SAMPLE):
        enabled = {family_of(label) for label, _ in model.next_states(state)}
        for fam in enabled:
            if len(chosen[fam]) < PER_FAMILY:
                chosen[fam].append(state)
        if all(len(v) >= PER_FAMILY for v in chosen.values()):
            break
    return chosen


@pytest.mark.parametrize("name", MODELS)
def test_both_encodings_have_the_same_initial_state(name: str) -> None:
    model, system = build_pair(name)
    expected = {concrete(model, s, system.replicas) for s in model.init_states()}
    assert initial_states(system) == expected


@pytest.mark.parametrize("name", MODELS)
def test_every_action_family_agrees_on_states_where_it_is_enabled(name: str) -> None:
    model, system = build_pair(name)
    chosen = sample_by_family(model, system)
    missing = [fam for fam, states in chosen.items() if not states]
    assert not missing, f"never enabled in the sample: {missing}"
    n = system.replicas
    for fam, states in chosen.items():
        for state in states:
            here = concrete(model, state, n)
            assert successors(system, here, fam) == python_successors(model, state, n, fam)
            check_state(model, system, state)


@pytest.mark.parametrize("name", ["tla-truncate-to-hw", "tla-kip320"])
def test_three_replica_states_agree(name: str) -> None:
    model, system = build_pair(name, replicas=3, max_leader_epoch=3)
    for state in list(bfs_states(model, 120))[::10]:
        check_state(model, system, state)


def random_walk(model: Model[Any], choices: list[int]) -> Any:
    """The state reached by following ``choices`` (indices into the successor lists)."""
    state = next(iter(model.init_states()))
    for choice in choices:
        succs = list(model.next_states(state))
        if not succs:
            break
        state = succs[choice % len(succs)][1]
    return state


@pytest.mark.parametrize("name", MODELS)
@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(choices=st.lists(st.integers(min_value=0, max_value=10_000), max_size=16))
def test_random_walk_states_agree(name: str, choices: list[int]) -> None:
    model, system = build_pair(name)
    check_state(model, system, random_walk(model, choices))


def test_a_wrong_successor_is_rejected() -> None:
    model, system = build_pair("tla-kip320")
    state = next(iter(model.init_states()))
    label, succ = next(iter(model.next_states(state)))
    here, there = concrete(model, state, 2), concrete(model, succ, 2)
    assert admits(system, here, there, family_of(label))
    assert not admits(system, there, here)  # a step never undoes a controller election
    assert not admits(system, here, there, "LeaderWrite")
