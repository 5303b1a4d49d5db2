"""``isrlab prove``: re-run the inductive proof obligations; write the outcomes to a directory
of one's own (``--out``, by default a fresh one) or, with ``--update``, over the recorded
proofs/results.json and proofs/RESULTS.md."""

from __future__ import annotations

import os
import sys
import tempfile
from pathlib import Path

import click

from isrlab.cli_support import BadInput, atomic_output
from isrlab.proofs.obligations import (
    PROVE_MODELS,
    RESULTS_JSON,
    RESULTS_MD,
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


def _check_out(out: Path | None) -> None:
    """Before any work: ``--out`` must be a directory or a new one in an existing directory
    (the current directory, for the default fresh one)."""
    parent = Path(".") if out is None else out.parent
    if out is not None and out.exists() and not out.is_dir():
        raise BadInput(f"--out: {str(out)!r} is not a directory")
    if not parent.is_dir() or not os.access(parent, os.W_OK | os.X_OK):
        raise BadInput(f"--out: cannot create a directory in {str(parent)!r}")


def _out_dir(out: Path | None) -> Path:
    """``--out`` (created if new), else a fresh ``isrlab-prove-*`` directory here; made only
    once the run is over, so an interrupted run leaves nothing behind."""
    if out is None:
        return Path(tempfile.mkdtemp(prefix="isrlab-prove-", dir="."))
    out.mkdir(exist_ok=True)
    return out


@click.command("prove")
@click.option("--model", "model_name", default=None,
              help="only this model's obligations (default: every tla-* model and kafka-core)")
@click.option("--timeout", "timeout_s", type=click.IntRange(1), default=20, show_default=True,
              help="seconds Z3 may spend on one attempt at one obligation")
@click.option("--out", type=click.Path(path_type=Path), default=None,
              help="write results.json and RESULTS.md of this run here "
                   "(default: a fresh directory isrlab-prove-* in the current one)")
@click.option("--update", is_flag=True,
              help="instead, merge this run into the recorded proofs/results.json and "
                   "regenerate proofs/RESULTS.md")
def prove_command(model_name: str | None, timeout_s: int, out: Path | None,
                  update: bool) -> None:
    """Discharge every proof obligation (IndInit, IndNext per action) and compare the
    outcomes with the recorded ones (proofs/results.json).

    The outcomes go to --out (by default a fresh directory); only --update rewrites the
    recorded proofs/results.json and proofs/RESULTS.md.  Exit status: 0, or 1 if an obligation
    recorded as proved no longer is, 2 on bad input, 130 on Ctrl-C.
    """
    if model_name is not None and model_name not in PROVE_MODELS:
        raise BadInput(f"no proof obligations for model {model_name!r} "
                       f"(known: {', '.join(PROVE_MODELS)})")
    if update and out is not None:
        raise BadInput("--update rewrites the recorded results; it takes no --out")
    if not update:
        _check_out(out)
    old = load()
    new = run_all(groups(model_name), timeout_s * 1000, _progress)
    lost = regressions(old, new)
    for line in lost:
        click.echo(f"REGRESSION: {line}")
    tail = f"; {len(lost)} regression(s)" if lost else ""
    if update:
        with atomic_output(RESULTS_JSON) as json_path, atomic_output(RESULTS_MD) as md_path:
            save(merge(old, new), json_path, md_path)
        click.echo("proofs/results.json and proofs/RESULTS.md updated" + tail)
    else:
        target = _out_dir(out)
        with atomic_output(target / "results.json") as json_path, \
                atomic_output(target / "RESULTS.md") as md_path:
            save(new, json_path, md_path)
        click.echo(f"results written to {target}/ (the recorded ones are unchanged; "
                   f"--update replaces them){tail}")
    sys.exit(1 if lost else 0)
