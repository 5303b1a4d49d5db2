"""Shared helpers for the Z3 tests: explicit tla-* models and their symbolic twins."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from checker.model import Model
from isrlab.models import registry
from spec.symbolic import symbolic_for
from spec.symbolic.tla import TlaSystem


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
