"""Shared helpers for the Z3 tests: explicit tla-* models and their symbolic twins."""

from __future__ import annotations

import os
from collections.abc import Iterator
from typing import Any

import pytest
import z3

from isrlab.checker.model import Model
from isrlab.models import registry
from isrlab.spec.symbolic import symbolic_for
from isrlab.spec.symbolic.tla import TlaSystem

# The minutes-long BMC and proof runs (about 7 min in all on an idle 2-core machine) are part
# of the whole suite, so CI checks TLC's lengths on every change; ISRLAB_SKIP_HEAVY=1 skips
# them for a quick local run.
heavy = pytest.mark.skipif(bool(os.environ.get("ISRLAB_SKIP_HEAVY")),
                           reason="minutes-long Z3 run skipped: ISRLAB_SKIP_HEAVY is set")

def build_pair(name: str, **params: int | str) -> tuple[Model[Any], TlaSystem]:
    """The explicit model ``name`` and its bounded symbolic twin for the same parameters."""
    entry = registry().get(name).unwrap()
    assignments = [f"{k}={v}" for k, v in params.items()]
    values = registry().parse_params(entry, assignments).unwrap()
    model = entry.build(values)
    system = symbolic_for(name, values)
    assert system is not None
    return model, system


def bfs_states(model: Model[Any], limit: int) -> Iterator[Any]:
    """The first ``limit`` distinct states of ``model`` in breadth-first order."""
    seen: set[bytes] = set()
    frontier = list(model.init_states())
    for state in frontier:
        seen.add(model.encode(state))
    index = 0
    while index < len(frontier) and index < limit:
        state = frontier[index]
        index += 1
        yield state
        for _, succ in model.next_states(state):
            key = model.encode(succ)
            if key not in seen:
                seen.add(key)
                frontier.append(succ)


def add_pigeonhole(solver: Any, holes: int) -> None:
    """Assert that ``holes + 1`` pigeons sit in ``holes`` holes, at most one per hole: an
    unsatisfiable Boolean formula whose refutation grows exponentially with ``holes``."""
    pigeons = holes + 1
    at = [[z3.Bool(f"p{p}h{h}") for h in range(holes)] for p in range(pigeons)]
    for p in range(pigeons):
        solver.add(z3.Or(at[p]))
    for h in range(holes):
        for p in range(pigeons):
            for q in range(p + 1, pigeons):
                solver.add(z3.Not(z3.And(at[p][h], at[q][h])))


def check_alone(*formulas: z3.BoolRef, timeout_ms: int = 60_000) -> z3.CheckSatResult:
    """Whether ``formulas`` are satisfiable, checked in a Z3 context of their own.

    Z3's search can depend on the terms created before in the same process (their ids
    follow creation order), so an unpinned query that takes milliseconds alone may run for
    minutes in a test worker that ran other Z3 tests first (seen once, 2026-11-25).
    Translated into a new context the query depends on itself alone; the timeout makes a
    slow run an ``unknown`` (a failed assertion) instead of a hang.
    """
    context = z3.Context()
    solver = z3.Solver(ctx=context)
    solver.set(timeout=timeout_ms)
    solver.add(*[f.translate(context) for f in formulas])
    return solver.check()
