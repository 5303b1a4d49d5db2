"""The Z3 encoding of the tla-kraft ports agrees with the explicit models, step for step.

For states of the explicit model (random walks drawn by hypothesis, and for every action
family the first breadth-first states where it is enabled): the successors Z3 admits,
enumerated with blocking clauses, are exactly the explicit model's successors (as
``KraftSystem.project`` sees them), and both sides agree on every invariant.  The
configurations enable every action of both modules: shutdowns of both kinds, fencing, the
leader's ISR shrink, reassignment, and the faults that remove a mechanism check.
"""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from isrlab.checker.model import Model
from isrlab.checker.z3 import bmc, families, initial_states, satisfies, successors
from isrlab.spec.symbolic.tla_kraft import Capacities, KraftSystem
from tests.z3.conftest import bfs_states, build_pair

CONFIGS: list[tuple[str, dict[str, Any]]] = [
    ("tla-kraft-3.5", {"unclean_shutdown_limit": 1, "fence_broker_limit": 1}),
    ("tla-kraft-3.5", {"clean_shutdown_limit": 1, "leader_shrink_isr_limit": 1,
                       "avoid_last_replica_standing": "false"}),
    ("tla-kraft-3.5", {"replication_factor": 1, "init_isr_size": 1,
                       "fence_broker_limit": 1, "reassignment_limit": 1}),
    ("tla-kraft-kip966", {"min_isr": 2, "data_loss_shutdown_limit": 1,
                          "no_data_loss_shutdown_limit": 1}),
    ("tla-kraft-kip966", {"fence_broker_limit": 1, "leader_shrink_isr_limit": 1,
                          "kip903_check": "false", "hw_min_isr_gate": "false"}),
    ("tla-kraft-kip966", {"replication_factor": 1, "init_isr_size": 1,
                          "fence_broker_limit": 1, "reassignment_limit": 1}),
]
IDS = [f"{name}-{'-'.join(params)}" for name, params in CONFIGS]


def kraft_pair(name: str, **params: Any) -> tuple[Model[Any], KraftSystem]:
    """The explicit port and its symbolic twin for the same parameters."""
    model, system = build_pair(name, **params)
    assert isinstance(system, KraftSystem)
    return model, system


def projected(model: Model[Any], system: KraftSystem, state: Any,
              family: str | None = None) -> set[Any]:
    return {system.explicit_view(model, succ) for label, succ in model.next_states(state)
            if family is None or label.split("(", 1)[0] == family}


def check_state(model: Model[Any], system: KraftSystem, state: Any) -> None:
    """Successors and invariants of one explicit state, both sides."""
    here = system.explicit_view(model, state)
    assert successors(system, here) == projected(model, system, state)
    for prop in model.invariants():
        assert satisfies(system, here, prop.name) == prop.holds(state), prop.name


def random_walk(model: Model[Any], choices: list[int]) -> Any:
    state = next(iter(model.init_states()))
    for choice in choices:
        succs = list(model.next_states(state))
        if not succs:
            break
        state = succs[choice % len(succs)][1]
    return state


@pytest.mark.parametrize(("name", "params"), CONFIGS, ids=IDS)
def test_initial_states_agree(name: str, params: dict[str, Any]) -> None:
    model, system = kraft_pair(name, **params)
    assert initial_states(system) == {system.explicit_view(model, s)
                                      for s in model.init_states()}


@pytest.mark.parametrize(("name", "params"), CONFIGS, ids=IDS)
@settings(max_examples=4, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(choices=st.lists(st.integers(min_value=0, max_value=10_000), max_size=24))
# Found by hypothesis on tla-kraft-kip966 (the min_isr and fence configurations): a state
# whose one registration (AlterPartition) message a frame could hold in every slot, so
# BrokerStart (SendAlterPartitionRequest) had an extra ovf successor.
@example(choices=[1, 0, 0])
@example(choices=[0, 1083, 2914, 0, 0])
def test_random_walk_states_agree(name: str, params: dict[str, Any],
                                  choices: list[int]) -> None:
    model, system = kraft_pair(name, **params)
    check_state(model, system, random_walk(model, choices))


@pytest.mark.parametrize("module", ["tla-kraft-3.5", "tla-kraft-kip966"])
def test_every_family_agrees_where_first_enabled(module: str) -> None:
    # Over the module's configurations, each family where it is first enabled (breadth-first)
    # until every family of Next has been compared at least once.
    unchecked: set[str] | None = None
    for name, params in CONFIGS:
        if name != module:
            continue
        model, system = kraft_pair(name, **params)
        wanted = set(families(system))
        unchecked = (set(wanted) if unchecked is None else unchecked) | {
            "PerformPartitionReassignment"}
        for state in bfs_states(model, 3000):
            enabled = {label.split("(", 1)[0] for label, _ in model.next_states(state)}
            for family in enabled & wanted:
                here = system.explicit_view(model, state)
                assert successors(system, here, family) == projected(model, system, state,
                                                                     family), family
            wanted -= enabled
            unchecked -= enabled
            if not wanted:
                break
    assert unchecked == set(), f"never enabled in the samples: {sorted(unchecked or ())}"


def test_a_trace_beyond_the_slots_is_reported_not_judged() -> None:
    # One metadata record slot: the first partition change (FenceBroker(2) shrinks the ISR)
    # needs a second, so the 2-state trace ends in an overflow, which bmc reports.
    _model, full = kraft_pair("tla-kraft-3.5", fence_broker_limit=1)
    system = KraftSystem(full.config, Capacities(metadata_log=1))
    result = bmc(system, None, 2, logic="QF_LIA")
    assert result.trace is not None and len(result.trace) == 2
    why = system.beyond_encoding(result.trace)
    assert why is not None and "no verdict" in why
