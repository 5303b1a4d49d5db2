"""Engines: which breadth-first search explores a check, the local one
(``isrlab.checker.bfs``, in this process or ``workers`` processes) or Spark's
(``isrlab.spark_explore``), with its options; and the run directory either one persists its
levels in (``CheckOptions.run_dir``: a rerun with it resumes).  ``isrlab check --engine`` and
``isrlab.api.check(engine=...)`` both choose here."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from isrlab.checker.bfs import CheckOptions, RunDirError, WorkerError, explore
from isrlab.checker.model import Model
from isrlab.checker.report import CheckResult
from isrlab.services import InputError

ENGINES = ("bfs", "spark")
"""bfs: this machine; spark: level-synchronous BFS on Spark."""


@dataclass(frozen=True, slots=True)
class Engine:
    """The engine of a check and its own options: ``master`` (a Spark master URL) implies
    Spark; ``buckets`` is the Spark run's number of fingerprint buckets (default 4 per
    core); ``progress`` prints Spark's line per level on stderr."""

    name: str = "bfs"
    master: str | None = None
    buckets: int | None = None
    progress: bool = True

    @property
    def spark(self) -> bool:
        """Whether the check runs on Spark."""
        return self.name == "spark" or self.master is not None


def check_engine(engine: Engine) -> None:
    """``InputError`` for an unknown engine or an option of another engine."""
    if engine.name not in ENGINES:
        raise InputError(f"unknown engine {engine.name!r} (engines: {', '.join(ENGINES)})")
    if engine.buckets is not None and not engine.spark:
        raise InputError("--buckets applies to the Spark engine (--engine spark)")


def explore_with(model: Model[Any], options: CheckOptions, engine: Engine) -> CheckResult:
    """``model`` explored breadth-first by ``engine`` (both give the same report); a run
    directory that cannot be used or written (``options.run_dir``: another model's, the
    disk full) is an ``InputError``."""
    try:
        if engine.spark:
            from isrlab.spark_explore.command import run_check  # starts a JVM: on demand

            return run_check(model, options, engine.master, engine.progress, engine.buckets)
        return explore(model, options)
    except RunDirError as error:
        raise InputError(str(error)) from error
    except WorkerError as error:  # a worker's run-directory write failed (the disk full)
        marker = f"{RunDirError.__name__}: "
        if marker not in str(error):
            raise
        raise InputError(str(error).split(marker, 1)[1]) from error
