"""Runs: an exhaustive check (with its preconditions, the engine of ``services.engines`` and
the liveness check after it), seeded random walks, and bounded model checking of a model's
symbolic twin; each returns the report ``isrlab check|simulate|bmc`` print and write, and
``isrlab.api`` returns, every counterexample explained (why its last state breaks the
invariant)."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from typing import Any

from isrlab.checker.bfs import CheckOptions
from isrlab.checker.liveness import LivenessResult, check_liveness, declared_liveness
from isrlab.checker.model import Model
from isrlab.checker.registry import ParamValue
from isrlab.checker.report import CheckResult, Violation, explained, explained_result
from isrlab.checker.simulate import SimulateOptions
from isrlab.checker.simulate import simulate as simulate_walks
from isrlab.checker.z3 import BmcResult
from isrlab.checker.z3 import bmc as bmc_search
from isrlab.services import InputError
from isrlab.services.engines import Engine, check_engine, explore_with
from isrlab.spec.symbolic import symbolic_for, symbolic_models
from isrlab.spec.symbolic.bridge import replay
from isrlab.spec.symbolic.state import KState


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


# ---------------------------------------------------------------------- bmc
def engine_name(solver: str) -> str:
    """The engine a report names: the solver that answered (``yices 2.6.5`` -> ``yices-bmc``,
    ``z3 4.13.0`` -> ``z3-bmc``); the formulas are Z3's either way."""
    kind = solver.split()[0].lower() if solver.strip() else "z3"
    return f"{kind}-bmc"


@dataclass(frozen=True)
class BmcRun:
    """A bounded model check: the solver's answer per depth and the report (its
    counterexample replayed through the explicit model, as ``check`` reports one)."""

    name: str
    depth: int
    search: BmcResult[KState]
    report: CheckResult

    def summary(self) -> str:
        """The run in one line: a shortest violation, the depth the solver gave up at, or
        no violation up to the bound."""
        result, engine = self.search, self.report.engine
        if result.trace is not None:
            return (
                f"{self.name} [{engine}]: VIOLATION of {result.violated} (trace of "
                f"{len(result.trace)} states); no trace of {len(result.trace) - 1} or fewer "
                f"states violates an invariant; {result.seconds:.1f} s ({result.solver})"
            )
        if result.proved_steps < self.depth:
            return (
                f"{self.name} [{engine}]: UNKNOWN at {result.proved_steps + 1} steps (solver "
                f"gave up); no violation in traces of up to {result.proved_steps + 1} states; "
                f"{result.seconds:.1f} s ({result.solver})"
            )
        return (
            f"{self.name} [{engine}]: no violation in any trace of up to {self.depth + 1} "
            f"states (bounded: deeper traces unchecked); {result.seconds:.1f} s "
            f"({result.solver})"
        )

    @property
    def gave_up(self) -> bool:
        """Whether the solver gave up (its timeout) before the depth was reached."""
        return self.search.proved_steps < self.depth


def bmc(
    model: Model[Any], name: str, values: Mapping[str, ParamValue], depth: int = 12,
    timeout_s: int = 0, solver: str = "auto",
) -> BmcRun:
    """Search the symbolic twin of registered model ``name`` (built as ``model`` with
    ``values``) for a shortest counterexample, one more step at a time up to ``depth``
    steps (``timeout_s`` per depth, 0: none); ``InputError`` for a model without a symbolic
    encoding, an invariant it does not encode, or a solver not installed.  A solver's
    failure (``SolverError``) and a trace the explicit model does not replay
    (``DriftError``) propagate: they are isrlab's bugs."""
    system = symbolic_for(name, values)
    if system is None:
        raise InputError(f"model {name!r} has no symbolic encoding "
                         f"(bmc supports: {', '.join(symbolic_models())})")
    wanted = [p.name for p in model.invariants()]
    known = {p.name for p in system.invariants()}
    unsupported = [n for n in wanted if n not in known]
    if unsupported:
        raise InputError(f"bmc cannot check {', '.join(unsupported)} "
                         f"(supported: {', '.join(sorted(known))})")
    if not wanted:
        raise InputError("no invariant to check (set -p invariants=...)")
    try:
        breaking = getattr(system, "symmetry_breaking", None)
        result = bmc_search(system, wanted, depth, timeout_s * 1000, logic="QF_LIA",
                            options=getattr(system, "solver_options", None), solver=solver,
                            **(breaking(wanted) if breaking is not None
                               else {"first_step": system.symmetric_first_step()}))
    except ValueError as error:  # the solver asked for is not installed
        raise InputError(str(error)) from error
    violation = None
    if result.trace is not None:
        trace = replay(model, result.trace, system.replicas, getattr(system, "concrete", None))
        violation = explained(Violation(result.violated or wanted[0], trace),
                              model.invariants())
    report = CheckResult(
        model=name, params=values, engine=engine_name(result.solver), distinct_states=0,
        generated_states=0, diameter=len(result.depths), elapsed_s=result.seconds,
        violation=violation, complete=False,
        extra={"bmc": {
            "depth": depth, "proved_steps": result.proved_steps, "solver": result.solver,
            "depths": [{"steps": d.steps, "verdict": d.verdict, "seconds": round(d.seconds, 3)}
                       for d in result.depths],
        }},
    )
    return BmcRun(name, depth, result, report)
