"""Runs: an exhaustive check (with its preconditions, the engine of ``services.engines`` and
the liveness check after it) and seeded random walks; each returns the report ``isrlab
check|simulate`` print and write, and ``isrlab.api`` returns, every counterexample
explained (why its last state breaks the invariant).  Bounded model checking is
``services.bmc``."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from typing import Any

from isrlab.checker.bfs import CheckOptions, explore
from isrlab.checker.liveness import LivenessResult, check_liveness, declared_liveness
from isrlab.checker.model import Delegating, EvaluationError, Model, Property
from isrlab.checker.report import EVALUATION_ERROR, CheckResult, explained_result
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
    by ``engine`` (default: the local BFS); the shortest counterexample explained.  When
    the model raises its own ``EvaluationError`` (the spec's next step undefined), the
    report is that error with a shortest trace to the state it was raised in, as TLC
    reports an evaluation error: the local engine raises it and the search is rerun
    (``evaluation_error_result``); the Spark engine makes the same report itself."""
    try:
        explored = explore_with(model, options, engine or Engine())
    except EvaluationError:
        return evaluation_error_result(model, options)
    return explained_result(explored, model.invariants())


class _Evaluating(Delegating[Any]):
    """``model`` with one pseudo-invariant, ``EvaluationError``: the next step of every
    state within its boundary can be evaluated.  Checking it when a state is generated
    (before any state of its level is expanded) stops the search at a shortest path to
    the first state whose expansion raises; it evaluates ``next_states`` twice per state,
    a cost paid only by the rerun after an error."""

    def __init__(self, base: Model[Any]) -> None:
        self.base = base
        self.name = base.name
        self.errors: list[tuple[Mapping[str, Any], EvaluationError]] = []

    def __getattr__(self, name: str) -> Any:  # optional members: view, symmetry, layout
        return getattr(self.base, name)

    def native_successors(self) -> None:
        """No compiled successors: the pseudo-invariant is Python."""
        return None

    def evaluates(self, state: Any) -> bool:
        """Whether ``state``'s next step can be evaluated (when not, the error is kept with
        the state's variables)."""
        if not self.base.within_boundary(state):
            return True
        try:
            self.base.next_states(state)
        except EvaluationError as error:
            self.errors.append((self.base.variables(state), error))
            return False
        return True

    def invariants(self) -> Sequence[Property[Any]]:
        """The one pseudo-invariant: ``evaluates``."""
        return (Property(EVALUATION_ERROR, self.evaluates),)

    def sometimes(self) -> Sequence[Property[Any]]:
        """None: the rerun looks only for the error."""
        return ()


def evaluation_error_result(model: Model[Any], options: CheckOptions) -> CheckResult:
    """The report of a check that stopped at ``model``'s ``EvaluationError``: the search
    rerun in this process, one worker, no run directory, until the first state whose next
    step cannot be evaluated (the same state the first run failed in: every state of its
    level is generated before any is expanded); the violation is ``EVALUATION_ERROR``, its
    explanation the error (action: message), its trace a shortest path to that state."""
    checked = _Evaluating(model)
    result = explore(checked, replace(options, workers=1, run_dir=None, stop_at_first=True,
                                      check_deadlock=False))
    last = None if result.violation is None else result.violation.trace[-1].state
    errors = [str(error) for state, error in checked.errors if state == last]
    if result.violation is None or not errors:
        raise RuntimeError("the model's EvaluationError did not recur when the search was rerun")
    violation = replace(result.violation, explanation=errors[0])
    return replace(result, violation=violation, violations=())


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
