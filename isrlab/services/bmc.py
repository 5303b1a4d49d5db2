"""Bounded model checking of a registered model's symbolic twin (Z3 formulas, answered by
Yices or Z3): the run ``isrlab bmc`` prints and writes and ``isrlab.api.bmc`` returns, its
counterexample replayed through the explicit model and explained, as a check reports one."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from isrlab.checker.model import Model
from isrlab.checker.registry import ParamValue
from isrlab.checker.report import CheckResult, Violation, explained
from isrlab.checker.z3 import BmcResult
from isrlab.checker.z3 import bmc as bmc_search
from isrlab.services import InputError
from isrlab.spec.symbolic import symbolic_for, symbolic_models
from isrlab.spec.symbolic.bridge import replay


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
    search: BmcResult[Any]
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
    timeout_s: int = 0, solver: str = "auto", partial_order: bool | None = None,
) -> BmcRun:
    """Search the symbolic twin of registered model ``name`` (built as ``model`` with
    ``values``) for a shortest counterexample, one more step at a time up to ``depth``
    steps (``timeout_s`` per depth, 0: none), with the partial-order reduction where
    ``partial_order`` says (``None``: where the encoding declares it); ``InputError`` for a
    model without a symbolic encoding, parameters its encoding does not take, an invariant
    it does not encode, or a solver not installed.  A solver's failure (``SolverError``)
    and a trace the explicit model does not replay (``DriftError``) propagate: they are
    isrlab's bugs."""
    try:
        system = symbolic_for(name, values)
    except ValueError as error:  # parameters the encoding does not take (e.g. values=2)
        raise InputError(f"model {name!r}: {error}") from error
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
                            partial_order=(getattr(system, "partial_order", False)
                                           if partial_order is None else partial_order),
                            **(breaking(wanted) if breaking is not None
                               else {"first_step": system.symmetric_first_step()}))
    except ValueError as error:  # the solver asked for is not installed
        raise InputError(str(error)) from error
    violation = None
    beyond = getattr(system, "beyond_encoding", None)  # a bounded encoding's own limits
    why = beyond(result.trace) if result.trace is not None and beyond is not None else None
    if why:
        raise InputError(why)
    if result.trace is not None:
        own_replay = getattr(system, "replay", None)
        trace = (own_replay(model, result.trace) if own_replay is not None
                 else replay(model, result.trace, system.replicas,
                             getattr(system, "concrete", None)))
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
