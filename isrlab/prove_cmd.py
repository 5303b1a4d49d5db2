"""``isrlab prove``: re-run the inductive proof obligations; write the outcomes to a directory
of one's own (``--out``, by default a fresh one) or, with ``--update``, over the recorded
proofs/results.json and proofs/RESULTS.md (``isrlab.services.proofs``)."""

from __future__ import annotations

import sys
from collections.abc import Sequence
from pathlib import Path

import click

from isrlab.proofs.obligations import Group, GroupResult, Row, load
from isrlab.services.proofs import check_destination, prove, selected_groups, write_results


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
    selected = selected_groups(model_name)
    check_destination(out, update)
    old = load()
    progress = _Progress(old)
    _announce(selected, old)
    run = prove(selected, timeout_s, progress, old)
    for line in run.lost:
        click.echo(f"REGRESSION: {line}")
    total = [r for g in run.results for r in g.rows]
    same = ("every outcome as recorded" if not progress.differing else
            f"{progress.differing} outcome(s) differ from the recorded ones (listed above)")
    click.echo(f"{len(total)} obligations: {_counts(total)}; {same}")
    tail = f"; {len(run.lost)} regression(s)" if run.lost else ""
    target = write_results(run, out, update)
    if target is None:
        click.echo("proofs/results.json and proofs/RESULTS.md updated" + tail)
    else:
        click.echo(f"results written to {target}/ (the recorded ones are unchanged; "
                   f"--update replaces them){tail}")
    sys.exit(1 if run.lost else 0)
