"""``isrlab prove``: re-run the inductive proof obligations; write the outcomes to a directory
of one's own (``--out``, by default a fresh one) or, with ``--update``, over the recorded
proofs/results.json and proofs/RESULTS.md."""

from __future__ import annotations

import os
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path

import click

from isrlab.cli_support import BadInput, atomic_output
from isrlab.proofs.obligations import (
    PROVE_MODELS,
    RESULTS_JSON,
    RESULTS_MD,
    Group,
    GroupResult,
    Row,
    groups,
    load,
    merge,
    regressions,
    run_all,
    save,
)


def _counts(rows: Sequence[Row]) -> str:
    counts: dict[str, int] = {}
    for row in rows:
        counts[row.status] = counts.get(row.status, 0) + 1
    return ", ".join(f"{n} {status}" for status, n in sorted(counts.items()))


def _key(model: str, group: str, row: Row) -> tuple[str, str, str, str, str]:
    return (model, group, row.kind, row.target, row.action)


class _Progress:
    """One line per group as it finishes: its outcomes, and whether they are the recorded
    ones (proofs/results.json), naming each obligation whose outcome differs."""

    def __init__(self, recorded: Sequence[GroupResult]) -> None:
        self.recorded = {_key(g.model, g.group, r): r.status for g in recorded for r in g.rows}
        self.differing = 0

    def __call__(self, group: Group, result: GroupResult) -> None:
        seconds = sum(r.seconds for r in result.rows)
        changes = []
        for row in result.rows:
            was = self.recorded.get(_key(group.model, group.key, row))
            if was != row.status:
                changes.append(f"{row.kind} {row.target} / {row.action} {row.status} "
                               f"(recorded: {was or 'not recorded'})")
        self.differing += len(changes)
        verdict = "as recorded" if not changes else f"{len(changes)} differ from the recorded: "
        click.echo(f"{group.model} {group.key} ({group.replicas} replicas): "
                   f"{_counts(result.rows)}; {seconds:.1f} s; {verdict}{'; '.join(changes)}")


def _announce(selected: Sequence[Group], recorded: Sequence[GroupResult]) -> None:
    """Before the solver starts: what runs and how long the recorded run took."""
    names = {(g.model, g.key) for g in selected}
    took = sum(r.seconds for g in recorded if (g.model, g.group) in names for r in g.rows)
    models = sorted({g.model for g in selected})
    click.echo(f"proving {len(selected)} groups of obligations ({', '.join(models)}); the "
               f"recorded run took {took:.0f} s of solver time; each group prints as it ends")


def _check_out(out: Path | None) -> None:
    """Before any work: ``--out`` must be a directory or a new one in an existing directory
    (the temporary directory, for the default fresh one)."""
    parent = Path(tempfile.gettempdir()) if out is None else out.parent
    if out is not None and out.exists() and not out.is_dir():
        raise BadInput(f"--out: {str(out)!r} is not a directory")
    if not parent.is_dir() or not os.access(parent, os.W_OK | os.X_OK):
        raise BadInput(f"--out: cannot create a directory in {str(parent)!r}")


def _out_dir(out: Path | None) -> Path:
    """``--out`` (created if new), else a fresh ``isrlab-prove-*`` directory in the system's
    temporary directory (never the current one); made only once the run is over, so an
    interrupted run leaves nothing behind."""
    if out is None:
        return Path(tempfile.mkdtemp(prefix="isrlab-prove-"))
    out.mkdir(exist_ok=True)
    return out


@click.command("prove")
@click.option("--model", "model_name", default=None,
              help="only this model's obligations (default: every tla-* model and kafka-core)")
@click.option("--timeout", "timeout_s", type=click.IntRange(1), default=20, show_default=True,
              help="seconds Z3 may spend on one attempt at one obligation")
@click.option("--out", type=click.Path(path_type=Path), default=None,
              help="write results.json and RESULTS.md of this run here "
                   "(default: a fresh directory isrlab-prove-* in the temporary directory)")
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
    selected = groups(model_name)
    progress = _Progress(old)
    _announce(selected, old)
    new = run_all(selected, timeout_s * 1000, progress)
    lost = regressions(old, new)
    for line in lost:
        click.echo(f"REGRESSION: {line}")
    total = [r for g in new for r in g.rows]
    same = ("every outcome as recorded" if not progress.differing else
            f"{progress.differing} outcome(s) differ from the recorded ones (listed above)")
    click.echo(f"{len(total)} obligations: {_counts(total)}; {same}")
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
