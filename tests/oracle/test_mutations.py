"""Traces of the checker and of random walks are accepted; every single-step mutation of them
(a changed offset, a dropped step, a swapped leader) is rejected at the mutated step."""

from __future__ import annotations

import copy
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from isrlab.checker.model import Model
from isrlab.checker.report import TraceStep
from isrlab.checker.trace import read_itf, write_itf
from isrlab.checker.validate import observations_of_trace, validate
from isrlab.cli import cli
from tests.oracle.helpers import model, walk

Trace = tuple[TraceStep, ...]
Mutation = Callable[[Trace, int], Trace | None]

TLA = ("tla-truncate-to-hw", "tla-kip101", "tla-kip279", "tla-kip320")


def _replace_state(trace: Trace, k: int, state: dict[str, Any]) -> Trace:
    return (*trace[:k], TraceStep(trace[k].action, state), *trace[k + 1:])


def changed_offset(trace: Trace, k: int) -> Trace | None:
    """One replica's high watermark (an offset) one higher at step ``k``."""
    state = copy.deepcopy(dict(trace[k].state))
    if "replicaState" in state:
        first = sorted(state["replicaState"])[0]
        state["replicaState"][first]["hw"] += 1
    else:
        state["broker0"]["hw"] += 1
    return _replace_state(trace, k, state)


def dropped_step(trace: Trace, k: int) -> Trace | None:
    """Step ``k`` left out (not the last: a prefix of a behaviour is a behaviour)."""
    if k == len(trace) - 1 or trace[k - 1].state == trace[k].state:
        return None
    return trace[:k] + trace[k + 1:]


def swapped_leader(trace: Trace, k: int) -> Trace | None:
    """The quorum's (ZooKeeper's) leader replaced by another replica at step ``k``."""
    state = copy.deepcopy(dict(trace[k].state))
    if "quorumState" in state:
        names = sorted(state["replicaState"])
        leader = state["quorumState"]["leader"]
        state["quorumState"]["leader"] = names[1] if leader == names[0] else names[0]
    else:
        state["zk"]["leader"] = 1 if state["zk"]["leader"] == 0 else 0
    return _replace_state(trace, k, state)


MUTATIONS: tuple[Mutation, ...] = (changed_offset, dropped_step, swapped_leader)


def check_cli_itf(tmp: Path, name: str, *params: str) -> Trace:
    """The counterexample ``isrlab check --itf`` writes for a model."""
    path = tmp / f"{name}.itf.json"
    args = ["check", "--model", name, "--itf", str(path)]
    for p in params:
        args += ["-p", p]
    outcome = CliRunner().invoke(cli, args)
    assert outcome.exit_code == 1, outcome.output
    return read_itf(path)


def behaviour_prefix(m: Model[Any], trace: Trace) -> int:
    """How many states of ``trace`` form a behaviour of ``m`` (the reference the validator is
    held to, by plain replay: exact labels, exact variables, every matching state kept)."""
    states = [s for s in m.init_states() if m.variables(s) == trace[0].state]
    for k in range(1, len(trace)):
        step = trace[k]
        states = [t for s in states for label, t in m.next_states(s)
                  if label == step.action and m.variables(t) == step.state]
        if not states:
            return k
    return len(trace) if states else 0


def assert_mutations_rejected_at_their_step(m: Model[Any], trace: Trace) -> int:
    """Every mutation of every step that leaves the model is rejected exactly where it does
    (the mutated step, by replay); the few that are still behaviours (e.g. a dropped step
    whose effect the next step overwrites) are accepted.  Returns how many were rejected."""
    assert behaviour_prefix(m, trace) == len(trace)
    assert validate(m, observations_of_trace(trace)).accepted
    rejected = still_behaviours = 0
    for k in range(1, len(trace)):
        for mutate in MUTATIONS:
            mutated = mutate(trace, k)
            if mutated is None:
                continue
            result = validate(m, observations_of_trace(mutated))
            if behaviour_prefix(m, mutated) == len(mutated):
                still_behaviours += 1
                assert result.accepted, f"{mutate.__name__} at step {k}: a behaviour rejected"
                continue
            rejected += 1
            assert not result.accepted, f"{mutate.__name__} at step {k} accepted"
            assert result.failed_index == k, (
                f"{mutate.__name__} at step {k} rejected at {result.failed_index}"
            )
    assert still_behaviours <= rejected // 10
    return rejected


@pytest.mark.parametrize("name", ["tla-truncate-to-hw", "tla-kip101"])
def test_check_counterexamples_are_accepted_and_every_mutation_rejected(
    tmp_path: Path, name: str
) -> None:
    trace = check_cli_itf(tmp_path, name)
    m = model(name, "invariants=none")
    tried = assert_mutations_rejected_at_their_step(m, trace)
    assert tried >= 2 * (len(trace) - 1)


@pytest.mark.parametrize("name", ["tla-truncate-to-hw", "tla-kip101"])
def test_a_counterexample_is_a_certain_violation_of_its_invariant(
    tmp_path: Path, name: str
) -> None:
    trace = check_cli_itf(tmp_path, name)
    result = validate(model(name), observations_of_trace(trace))
    assert result.violation is not None
    assert result.violation_index == len(trace) - 1
    assert [s.state for s in result.violation.trace] == [s.state for s in trace]


@pytest.mark.parametrize("name", TLA)
@pytest.mark.parametrize("seed", [1, 2])
def test_random_walks_of_the_tla_models_are_accepted_and_every_mutation_rejected(
    name: str, seed: int
) -> None:
    m = model(name, "replicas=3", "invariants=none")
    trace = walk(m, 40, seed)
    assert len(trace) > 10
    assert_mutations_rejected_at_their_step(m, trace)


def test_random_walks_of_the_kafka_model_are_accepted_and_every_mutation_rejected() -> None:
    m = model("kafka", "controller=zookeeper", "invariants=none")
    trace = walk(m, 25, 5)
    assert_mutations_rejected_at_their_step(m, trace)


def test_a_mutated_itf_file_is_rejected_by_the_cli_at_its_state(tmp_path: Path) -> None:
    trace = check_cli_itf(tmp_path, "tla-truncate-to-hw")
    mutated = swapped_leader(trace, 4)
    assert mutated is not None
    path = tmp_path / "mutated.itf.json"
    write_itf(path, mutated)
    outcome = CliRunner().invoke(cli, ["validate", "--model", "tla-truncate-to-hw",
                                       "-p", "invariants=none", str(path)])
    assert outcome.exit_code == 1, outcome.output
    assert "REJECTED at step 5 (ITF state 4)" in outcome.output
    assert "quorumState.leader" in outcome.output
    assert "closest states the model allowed there" in outcome.output


def test_the_witness_of_a_partial_trace_is_a_full_behaviour_matching_it(tmp_path: Path) -> None:
    m = model("tla-kip320", "invariants=none")
    trace = walk(m, 30, 3)
    partial = observations_of_trace(trace, labels=False, variables=["quorumState"])
    result = validate(m, partial)
    assert result.accepted
    assert len(result.witness) == len(trace)
    assert [s.state["quorumState"] for s in result.witness] == [
        s.state["quorumState"] for s in trace
    ]


def test_a_random_walk_counterexample_of_isrlab_simulate_is_accepted(tmp_path: Path) -> None:
    path = tmp_path / "walk.itf.json"
    outcome = CliRunner().invoke(cli, ["simulate", "--model", "tla-truncate-to-hw",
                                       "--seed", "1", "--walks", "2000", "--depth", "30",
                                       "--itf", str(path)])
    assert outcome.exit_code == 1, outcome.output
    trace = read_itf(path)
    assert_mutations_rejected_at_their_step(model("tla-truncate-to-hw", "invariants=none"),
                                            trace)
    validated = CliRunner().invoke(cli, ["validate", "--model", "tla-truncate-to-hw",
                                         str(path)])
    assert validated.exit_code == 3  # a behaviour, and every match breaks the invariant found
    assert "BREAKS" in validated.output
