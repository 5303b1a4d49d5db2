"""Runs: an exhaustive check (with its preconditions, the engine of ``services.engines`` and
the liveness check after it) and seeded random walks; each returns the report ``isrlab
check|simulate`` print and write, and ``isrlab.api`` returns, every counterexample
explained (why its last state breaks the invariant).  Bounded model checking is
``services.bmc``."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from typing import Any

from isrlab.checker.bfs import CheckOptions
from isrlab.checker.liveness import LivenessResult, check_liveness, declared_liveness
from isrlab.checker.model import Model
from isrlab.checker.report import CheckResult, explained_result
from isrlab.checker.simulate import SimulateOptions
from isrlab.checker.simulate import simulate as simulate_walks
from isrlab.services import InputError
from isrlab.services.engines import Engine, check_engine, explore_with


# ---------------------------------------------------------------------- check
def check_preconditions(
    model: Model[Any], name: str, symmetric: bool, options: CheckOptions, engine: Engine,
    liveness: bool = False,
) -> None:
    """``InputError`` unless the check can run as asked: liveness on a model declaring it
    over every whole state, symmetry on a symmetric model (``name`` as the user gave it),
    the engine's own options."""
    if liveness:
        liveness_preconditions(model, options.symmetry, options.max_depth, options.max_states)
    if options.symmetry and not symmetric:
        raise InputError(f"model {name!r} has no symmetry to reduce by")
    check_engine(engine)


def liveness_preconditions(
    model: Model[Any], symmetry: bool, max_depth: int | None, max_states: int | None
) -> None:
    """``InputError`` unless the model declares liveness and the search covers every state."""
    if declared_liveness(model) is None:
        raise InputError(f"model {model.name!r} declares no liveness properties (a liveness() "
                         "method: see docs/checker.md, Liveness)")
    if symmetry:
        raise InputError("--liveness cannot be combined with --symmetry (liveness under "
                         "symmetry reduction is unsound in general)")
    if getattr(model, "view", None) is not None:
        raise InputError(f"--liveness needs whole states: model {model.name!r} has a view "
                         "(as TLC's VIEW, to be left out for liveness checking)")
    if max_depth is not None or max_states is not None:
        raise InputError("--liveness needs every reachable state: drop --max-depth/--max-states")


def check(
    model: Model[Any], options: CheckOptions, engine: Engine | None = None,
) -> CheckResult:
    """Every invariant on every state ``model`` reaches within ``options``' bounds, explored
    by ``engine`` (default: the local BFS); the shortest counterexample explained."""
    explored = explore_with(model, options, engine or Engine())
    return explained_result(explored, model.invariants())


def liveness(
    model: Model[Any], progress: Callable[[int, int, float], None] | None = None,
) -> LivenessResult:
    """The model's temporal properties under its fairness, checked on its whole state graph
    (after a clean ``check``); ``progress(states, steps, seconds)`` while the graph grows."""
    return check_liveness(model, progress=progress)


def with_liveness(result: CheckResult, live: LivenessResult) -> CheckResult:
    """The check's report carrying the liveness check's (its JSON's ``liveness``)."""
    return replace(result, extra={**result.extra, "liveness": live.to_json()})


def declared_actions(model: Model[Any] | None) -> tuple[str, ...] | None:
    """The actions a model declares, in its order, so that coverage can flag those never
    enabled: a model's optional ``action_names()``, or a ``tla-*`` model's ``Next``
    disjuncts; through an extended model to its base.  ``None`` when it declares none (the
    ``kafka`` model: its actions depend on its parameters)."""
    seen = 0
    while model is not None and seen < 4:
        names = getattr(model, "action_names", None)
        if callable(names):
            return tuple(names())
        variant = getattr(model, "variant", None)
        if callable(getattr(variant, "next_actions", None)):
            return tuple(variant.next_actions())  # type: ignore[union-attr]  # checked above
        model, seen = getattr(model, "base", None), seen + 1
    return None


def coverage_text(result: CheckResult, model: Model[Any] | None) -> str:
    """The run's coverage table (every action's generated and new states), the actions the
    model declares but never enabled flagged."""
    return result.coverage_text(declared_actions(model))


# ---------------------------------------------------------------------- simulate
def simulate(model: Model[Any], options: SimulateOptions) -> CheckResult:
    """Every invariant along ``options``' seeded random walks; the counterexample explained."""
    return explained_result(simulate_walks(model, options), model.invariants())
