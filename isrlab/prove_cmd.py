"""``isrlab prove``: re-run the inductive proof obligations and regenerate proofs/RESULTS.md."""

from __future__ import annotations

import sys

import click

from isrlab.cli_support import BadInput
from proofs.obligations import (
    PROVE_MODELS,
    Group,
    GroupResult,
    groups,
    load,
    merge,
    regressions,
    run_all,
    save,
)


def _progress(group: Group, result: GroupResult) -> None:
    counts: dict[str, int] = {}
    for row in result.rows:
        counts[row.status] = counts.get(row.status, 0) + 1
    seconds = sum(r.seconds for r in result.rows)
    summary = ", ".join(f"{n} {status}" for status, n in sorted(counts.items()))
    click.echo(f"{group.model} {group.key} ({group.replicas} replicas): {summary}; "
               f"{seconds:.1f} s")


@click.command("prove")
@click.option("--model", "model_name", default=None,
              help="only this model's obligations (default: every tla-* model and kafka-core)")
@click.option("--timeout", "timeout_s", type=click.IntRange(1), default=20, show_default=True,
              help="seconds Z3 may spend on one attempt at one obligation")
def prove_command(model_name: str | None, timeout_s: int) -> None:
    """Discharge every proof obligation (IndInit, IndNext per action) and record the outcomes
    in proofs/results.json and proofs/RESULTS.md.

    Exit status: 0, or 1 if an obligation recorded as proved no longer is, 2 on bad input.
    """
    if model_name is not None and model_name not in PROVE_MODELS:
        raise BadInput(f"no proof obligations for model {model_name!r} "
                       f"(known: {', '.join(PROVE_MODELS)})")
    old = load()
    new = run_all(groups(model_name), timeout_s * 1000, _progress)
    save(merge(old, new))
    lost = regressions(old, new)
    for line in lost:
        click.echo(f"REGRESSION: {line}")
    click.echo("proofs/RESULTS.md regenerated" + (f"; {len(lost)} regression(s)" if lost else ""))
    sys.exit(1 if lost else 0)
