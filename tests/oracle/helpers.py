"""Shared helpers of the oracle tests: models by name, seeded walks, counterexamples."""

from __future__ import annotations

import random
from typing import Any

from isrlab.checker.bfs import CheckOptions, explore
from isrlab.checker.model import Model
from isrlab.checker.report import INIT_ACTION, TraceStep
from isrlab.cli_support import resolve_model


def model(name: str, *params: str) -> Model[Any]:
    """A registered model built with ``key=value`` parameters."""
    return resolve_model(name, list(params))[2]


def walk(m: Model[Any], steps: int, seed: int) -> tuple[TraceStep, ...]:
    """A seeded uniform random walk of at most ``steps`` steps (ends at a deadlock)."""
    rng = random.Random(seed)
    state = next(iter(m.init_states()))
    trace = [TraceStep(INIT_ACTION, m.variables(state))]
    for _ in range(steps):
        successors = list(m.next_states(state))
        if not successors:
            break
        label, state = successors[rng.randrange(len(successors))]
        trace.append(TraceStep(label, m.variables(state)))
    return tuple(trace)


def counterexample(name: str, *params: str) -> tuple[TraceStep, ...]:
    """The shortest counterexample ``isrlab check`` finds for a model (it must have one)."""
    result = explore(model(name, *params), CheckOptions())
    assert result.violation is not None, f"{name} {params} has no counterexample"
    return result.violation.trace
