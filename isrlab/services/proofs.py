"""Proofs: re-run the inductive proof obligations (``isrlab.proofs``), compare the outcomes
with the recorded ones (proofs/results.json) and write them, to a directory of one's own or
over the recorded files; ``isrlab prove`` prints what this returns, ``isrlab.api.prove``
returns it."""

from __future__ import annotations

import os
import tempfile
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from isrlab.checker.atomic import atomic_output
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
from isrlab.services import InputError


@dataclass(frozen=True)
class ProveRun:
    """One run of proof obligations: the recorded outcomes before it, its own, and each
    obligation recorded as proved that it no longer proves (``lost``)."""

    recorded: list[GroupResult]
    results: list[GroupResult]
    lost: list[str]


def selected_groups(model: str | None) -> list[Group]:
    """The obligation groups of ``model`` (every model's when ``None``); ``InputError`` for
    a model without obligations."""
    if model is not None and model not in PROVE_MODELS:
        raise InputError(f"no proof obligations for model {model!r} "
                         f"(known: {', '.join(PROVE_MODELS)})")
    return groups(model)


def check_destination(out: Path | None, update: bool) -> None:
    """Before any work: ``update`` rewrites the recorded files and takes no ``out``; ``out``
    must be a directory or a new one in an existing directory (the temporary directory,
    for the default fresh one).  ``InputError`` otherwise."""
    if update and out is not None:
        raise InputError("--update rewrites the recorded results; it takes no --out")
    if update:
        return
    parent = Path(tempfile.gettempdir()) if out is None else out.parent
    if out is not None and out.exists() and not out.is_dir():
        raise InputError(f"--out: {str(out)!r} is not a directory")
    if not parent.is_dir() or not os.access(parent, os.W_OK | os.X_OK):
        raise InputError(f"--out: cannot create a directory in {str(parent)!r}")


def prove(
    selected: Sequence[Group], timeout_s: int,
    progress: Callable[[Group, GroupResult], None] | None = None,
    recorded: list[GroupResult] | None = None,
) -> ProveRun:
    """Discharge every obligation of ``selected`` (``timeout_s`` per attempt at one
    obligation), ``progress`` after each group, against the ``recorded`` outcomes
    (proofs/results.json when ``None``)."""
    old = load() if recorded is None else recorded
    new = run_all(selected, timeout_s * 1000, progress)
    return ProveRun(old, new, regressions(old, new))


def _out_dir(out: Path | None) -> Path:
    """``out`` (created if new), else a fresh ``isrlab-prove-*`` directory in the system's
    temporary directory (never the current one); made only once the run is over, so an
    interrupted run leaves nothing behind."""
    if out is None:
        return Path(tempfile.mkdtemp(prefix="isrlab-prove-"))
    out.mkdir(exist_ok=True)
    return out


def write_results(run: ProveRun, out: Path | None, update: bool) -> Path | None:
    """With ``update``, merge the run into the recorded proofs/results.json and regenerate
    proofs/RESULTS.md (returns ``None``); else write the run's results.json and RESULTS.md
    to ``out`` or a fresh directory, and return it.  Each file is replaced atomically."""
    if update:
        with atomic_output(RESULTS_JSON) as json_path, atomic_output(RESULTS_MD) as md_path:
            save(merge(run.recorded, run.results), json_path, md_path)
        return None
    target = _out_dir(out)
    with atomic_output(target / "results.json") as json_path, \
            atomic_output(target / "RESULTS.md") as md_path:
        save(run.results, json_path, md_path)
    return target
