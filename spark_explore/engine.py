"""Level-synchronous breadth-first exploration on Spark, with the local checker's answers.

Entry point: ``explore(model, options, spark) -> CheckResult`` (``isrlab.checker.report``), the very
type ``isrlab.checker.bfs.explore`` returns, with the same counts, diameter, coverage, ``sometimes``
levels and shortest traces.

Level ``k`` is one Spark job of one task per core (``tasks.share_task``), each doing the work
of its share of the buckets (a fixed number per run) in turn.  Spark schedules the tasks and
retries the lost ones; the states never pass through the JVM.  The work of a bucket reads the
candidates the previous level sent to it (a fingerprint's bucket is the fingerprint modulo
the number of buckets: our stable 64-bit digest, never Python's salted ``hash()``), settles
them (one row per fingerprint, the smallest ``(parent, label)`` link), drops the fingerprints
of its own visited side files, checks the new states and expands them, sends each successor
to its bucket's folder for level ``k + 1``, and writes its states, fingerprints and counters,
all as files of the run directory (``tasks``: the layout).  The driver sums the buckets'
counters and writes ``commit.json`` last, then deletes the candidates level ``k`` read.  A run
whose driver dies resumes from the last committed level.

The driver only ever holds counters, per-action coverage and file names: no level is
collected.  A violation's trace is rebuilt by looking up one ``parent`` per level in the
state files, then replayed forward through the model (``isrlab.checker.bfs.replay_path``),
exactly as the local checker does, so the trace is the same.
"""

from __future__ import annotations

import shutil
import tempfile
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, TypeVar

import numpy as np
import pyarrow.compute as pc

from isrlab.checker.bfs import (
    CheckOptions,
    check_result,
    exception_line,
    replay_path,
    stop_verdict,
)
from isrlab.checker.level_worker import merge_counts
from isrlab.checker.model import EvaluationError, Model, state_layout
from isrlab.checker.report import (
    DEADLOCK,
    EVALUATION_ERROR,
    INIT_ACTION,
    CheckResult,
    TraceStep,
    Violation,
)
from isrlab.checker.runstore import RunStore
from isrlab.spark_explore.session import (
    SparkOptions,
    context_of,
    default_parallelism,
    start_session,
    ui_url,
)
from isrlab.spark_explore.tasks import (
    CANDIDATES,
    LEVELS,
    VISITED,
    LevelPlan,
    ModelRef,
    bits,
    bucket_of,
    candidates_dir,
    from_key,
    read_summary,
    read_table,
    share_task,
    side_dir,
    states_file,
    to_key,
    write_initial,
)

S = TypeVar("S")

ENGINE = "spark"
LAYOUT = 3
"""The run directory's layout (3: Arrow files per bucket, candidates sent between buckets by
file; 2, Parquet levels written by Spark, is not read)."""
_BUCKETS_PER_CORE = 4


@dataclass(slots=True)
class Totals:
    """Counters after the last completed level (what ``commit.json`` records)."""

    level: int = 0
    deepest: int = 0
    distinct: int = 0
    generated: int = 0
    frontier: int = 0
    buckets: int = 0
    cov_generated: dict[str, int] = field(default_factory=dict)
    cov_distinct: dict[str, int] = field(default_factory=dict)
    violations: dict[str, list[int]] = field(default_factory=dict)  # prop -> [level, fp]
    sometimes: dict[str, int] = field(default_factory=dict)  # prop index -> level
    elapsed: float = 0.0

    def record(self) -> dict[str, Any]:
        """The JSON record of these counters."""
        return {
            "engine": ENGINE, "level": self.level, "deepest": self.deepest,
            "distinct": self.distinct, "generated": self.generated,
            "frontier": self.frontier, "buckets": self.buckets,
            "cov_generated": self.cov_generated,
            "cov_distinct": self.cov_distinct, "violations": self.violations,
            "sometimes": self.sometimes, "elapsed": self.elapsed,
        }

    @staticmethod
    def load(record: Mapping[str, Any]) -> Totals:
        """Counters from a ``commit.json`` record."""
        return Totals(
            level=int(record["level"]), deepest=int(record["deepest"]),
            distinct=int(record["distinct"]), generated=int(record["generated"]),
            frontier=int(record["frontier"]), buckets=int(record["buckets"]),
            cov_generated=dict(record["cov_generated"]),
            cov_distinct=dict(record["cov_distinct"]),
            violations={k: list(v) for k, v in record["violations"].items()},
            sometimes=dict(record["sometimes"]), elapsed=float(record["elapsed"]),
        )


@dataclass(slots=True)
class LevelStats:
    """What one level added: its own states' counters and the expansion that found them."""

    new: int = 0
    frontier: int = 0
    cov_distinct: dict[str, int] = field(default_factory=dict)
    violations: dict[int, int] = field(default_factory=dict)  # prop -> smallest key
    reached: int = 0
    generated: int = 0  # successors of the previous level (this level's share of TLC's count)
    cov_generated: dict[str, int] = field(default_factory=dict)
    deadlock: int | None = None  # smallest deadlocked key of the previous level
    evaluation: tuple[int, EvaluationError] | None = None  # this level's, smallest key


class _Run:
    """One exploration: the session, the run directory and the level files."""

    def __init__(
        self, model: Model[Any], options: CheckOptions, spark: SparkOptions, session: Any,
        root: Path,
    ) -> None:
        self.model = model
        self.options = options
        self.spark = spark
        self.session = session
        self.root = root
        self.cores = default_parallelism(session)
        self.props = [p.name for p in model.invariants()]
        if len(self.props) > 63 or len(model.sometimes()) > 63:
            raise ValueError("the Spark engine supports at most 63 invariants and 63 sometimes")
        self.ref: ModelRef[Any] = ModelRef.share(session, model)

    def level_dir(self, level: int) -> Path:
        """Where level ``level``'s state files live."""
        return self.root / LEVELS / f"level-{level:04d}"

    def default_buckets(self) -> int:
        """The number of fingerprint buckets (Spark partitions) of every level of a new run."""
        if self.spark.partitions is not None:
            return max(1, self.spark.partitions)
        return self.cores * _BUCKETS_PER_CORE

    def build(self, level: int, totals: Totals) -> LevelStats:
        """Settle, check, write and expand level ``level``; return what it added.

        One Spark job of one task per core (``tasks.share_task``); level 1's candidates
        (the initial states) are first written by the driver.
        """
        options = self.options
        pending = 0
        for index in range(len(self.model.sometimes())):
            if str(index) not in totals.sometimes:
                pending |= 1 << index
        buckets = totals.buckets
        if level == 1:
            shutil.rmtree(candidates_dir(self.root, 1), ignore_errors=True)
            write_initial(self.model, self.root, options.symmetry, buckets)
        plan = LevelPlan(
            root=str(self.root), level=level, buckets=buckets, pending_sometimes=pending,
            expand=options.max_depth is None or level < options.max_depth,
            symmetry=options.symmetry, check_deadlock=options.check_deadlock,
        )
        for stale in (self.level_dir(level), side_dir(self.root, level),
                      candidates_dir(self.root, level + 1)):
            shutil.rmtree(stale, ignore_errors=True)
        context = context_of(self.session)
        tasks = min(buckets, self.cores)
        job = context.parallelize(range(tasks), tasks).map(share_task(self.ref, plan, tasks))
        try:
            job.collect()
        except Exception as error:  # py4j's Py4JJavaError: a task failed on every attempt
            raise task_failure(error) from None
        return self.stats(level, buckets)

    def forget_inputs(self, level: int) -> None:
        """Delete what level ``level`` read and nobody reads again (once it is committed):
        its candidates and the visited keys of level ``level - 1`` (level ``level``'s own
        ``.seen`` files hold them too)."""
        shutil.rmtree(candidates_dir(self.root, level), ignore_errors=True)
        for path in side_dir(self.root, level - 1).glob("bucket-*.seen"):
            path.unlink()

    def stats(self, level: int, buckets: int) -> LevelStats:
        """The counters of a written level, from its buckets' summaries (no Spark job)."""
        stats = LevelStats()
        if level == 1:
            generated = sum(1 for _ in self.model.init_states())
            stats.generated = generated
            stats.cov_generated = {INIT_ACTION: generated} if generated else {}
        for bucket in range(buckets):
            own = read_summary(self.root, level, bucket)
            stats.new += int(own["new"])
            stats.frontier += int(own["frontier"])
            merge_counts(stats.cov_distinct, own["cov_distinct"])
            for prop, key in own["violations"].items():
                old = stats.violations.get(int(prop))
                stats.violations[int(prop)] = key if old is None else min(old, key)
            stats.reached |= int(own["reached"])
            found = own["evaluation"]
            if found is not None and (stats.evaluation is None or found[0] < stats.evaluation[0]):
                key, message, action = found
                stats.evaluation = (int(key), EvaluationError(str(message), action))
            if level > 1:
                before = read_summary(self.root, level - 1, bucket)
                stats.generated += int(before["generated"])
                merge_counts(stats.cov_generated, before["cov_generated"])
                dead = before["deadlock"]
                if dead is not None and (stats.deadlock is None or dead < stats.deadlock):
                    stats.deadlock = int(dead)
        return stats

    def parent_of(self, level: int, key: int, buckets: int) -> int:
        """The stored parent key of the state ``key`` of level ``level``."""
        bucket = int(bucket_of(np.array([key], np.int64), buckets)[0])
        path = states_file(self.root, level, bucket)
        rows = read_table(path).filter(pc.equal(pc.field("fp"), key)) if path.exists() else None
        if rows is None or rows.num_rows == 0:
            raise RuntimeError(f"run directory is missing level {level}'s link of a trace state")
        return int(rows.column("parent")[0].as_py())

    def remove_levels_after(self, level: int) -> None:
        """Forget the files of levels that were being written when a former run stopped (the
        candidates of level ``level + 1``, sent by committed tasks, stay)."""
        for folder, after in ((self.root / LEVELS, level), (self.root / VISITED, level),
                              (self.root / CANDIDATES, level + 1)):
            if not folder.exists():
                continue
            for path in folder.iterdir():
                if path.name.startswith("level-") and int(path.name[6:]) > after:
                    shutil.rmtree(path, ignore_errors=True)


class SparkTaskFailed(RuntimeError):
    """A task of a level failed on every attempt Spark made (an exception in the model's
    code, or in isrlab's): the message is the task's Python exception line; a note holds
    the task's Python traceback."""


def task_failure(error: Exception) -> Exception:
    """``SparkTaskFailed`` for the Python exception a failed Spark job reports inside
    ``error`` (its Java message holds the worker's traceback); ``error`` itself when it
    holds no traceback."""
    text = str(error)
    start = text.find("Traceback (most recent call last):")
    if start < 0:
        return error
    python = text[start:]
    for end in ("\n SQLSTATE", "\n\tat "):  # where the JVM's part of the message resumes
        if end in python:
            python = python[:python.index(end)]
    line = exception_line(python)
    failure = SparkTaskFailed(f"a Spark task failed: {line}")
    failure.add_note(f"the task's Python traceback:\n{python.rstrip()}")
    return failure


def explore(
    model: Model[S], options: CheckOptions | None = None, spark: SparkOptions | None = None,
    session: Any = None,
) -> CheckResult:
    """Explore ``model`` breadth-first on Spark; the same answers as ``isrlab.checker.bfs.explore``.

    ``options`` are the local checker's (``workers`` is ignored: Spark's cores are the
    workers); ``spark`` says where to run; ``session`` joins an existing Spark session (or context).
    Without ``options.run_dir`` the levels go to a temporary directory removed at the end
    (with a real cluster, give a run directory every executor can reach).  Raises
    ``isrlab.checker.runstore.RunDirError`` when the run directory belongs to another check.
    When the model raises its own ``EvaluationError`` in the expansion of a level the local
    engine would expand, the report is the one ``isrlab.services.runs`` makes for the local
    engine: the error (``evaluation_error_result``), with the shortest trace to the state of
    smallest fingerprint of that level whose next step raises, and that level is not
    committed (a resumed run meets the error again).
    States outside ``within_boundary`` are treated as TLC and the local checker treat states
    outside a CONSTRAINT: generated and checked, neither expanded nor counted as distinct.
    """
    options = options or CheckOptions()
    spark = spark or SparkOptions()
    started = time.monotonic()
    temporary = options.run_dir is None
    root = Path(tempfile.mkdtemp(prefix="isrlab-spark-")) if temporary else Path(
        str(options.run_dir)
    ).resolve()
    store = RunStore(root)
    store.open(_identity(model, options))
    created = False
    try:
        if session is None:
            session, created = start_session(spark)
        run = _Run(model, options, spark, session, root)
        return _search(run, store, started)
    finally:
        store.close()
        if created:
            session.stop()
        if temporary:
            shutil.rmtree(root, ignore_errors=True)


def _identity(model: Model[Any], options: CheckOptions) -> dict[str, Any]:
    return {
        "engine": ENGINE,
        "layout": LAYOUT,
        "model": model.name,
        "params": {k: options.params[k] for k in sorted(options.params)},
        "symmetry": options.symmetry,
        "check_deadlock": options.check_deadlock,
        **state_layout(model),
    }


def _say(spark: SparkOptions, line: str) -> None:
    progress: Callable[[str], None] | None = spark.progress
    if progress is not None:
        progress(line)


def _search(run: _Run, store: RunStore, started: float) -> CheckResult:
    options, spark, model = run.options, run.spark, run.model
    url = ui_url(run.session)
    _say(spark, f"spark: master {context_of(run.session).master}, {run.cores} cores, "
                f"UI {url or 'disabled'}, run directory {run.root}")
    commit = store.commit()
    deadlock_prop = len(run.props)
    evaluation: tuple[int, EvaluationError] | None = None
    if commit is not None:
        totals = Totals.load(commit)
        run.remove_levels_after(totals.level)
        run.forget_inputs(totals.level)  # in case the former run stopped right after a commit
        _say(spark, f"spark: resuming after level {totals.level} "
                    f"({totals.distinct:,} states so far)")
    else:
        totals = Totals(buckets=run.default_buckets())
        run.remove_levels_after(0)
        evaluation = _step(run, store, totals, 1, started, deadlock_prop)
    while (complete := stop_verdict(options, totals.level, totals.distinct, totals.frontier,
                                     bool(totals.violations))) is None:
        if evaluation is not None:
            return evaluation_error_result(run, totals, *evaluation)
        evaluation = _step(run, store, totals, totals.level + 1, started, deadlock_prop)
    violations = _violations(run, totals)
    return check_result(
        model, options, totals, engine=ENGINE, workers=run.cores, elapsed_s=totals.elapsed,
        violations=violations, complete=complete,
    )


def _step(
    run: _Run, store: RunStore, totals: Totals, level: int, started: float, deadlock_prop: int,
) -> tuple[int, EvaluationError] | None:
    """Build one level, fold it into the totals, commit it and print its progress line.  A
    level whose expansion met the model's own ``EvaluationError`` is not committed (its
    successors are incomplete): its smallest such key and the error are returned."""
    before = time.monotonic()
    elapsed_before = totals.elapsed
    stats = run.build(level, totals)
    totals.level = level
    if stats.new:
        totals.deepest = level
    totals.distinct += stats.new
    totals.generated += stats.generated
    totals.frontier = stats.frontier
    merge_counts(totals.cov_generated, stats.cov_generated)
    merge_counts(totals.cov_distinct, stats.cov_distinct)
    found = [(prop, level, key) for prop, key in stats.violations.items()]
    if stats.deadlock is not None:
        # A deadlock is found while expanding the previous level: it belongs to that level.
        found.append((deadlock_prop, level - 1, stats.deadlock))
    for prop, at, key in sorted(found):
        old = totals.violations.get(str(prop))
        if old is None or (at, key) < (old[0], old[1]):
            totals.violations[str(prop)] = [at, key]
    for index in bits(stats.reached):
        totals.sometimes.setdefault(str(index), level)
    now = time.monotonic()
    totals.elapsed = elapsed_before + (now - before)
    if stats.evaluation is None:
        store.write_commit(totals.record())
        run.forget_inputs(level)
    seconds = now - before
    rate = stats.new / seconds if seconds > 0 else 0.0
    _say(run.spark, f"spark: level {level}: {stats.new:,} new states, {totals.distinct:,} total, "
                    f"{stats.generated:,} generated, {rate:,.0f} states/s "
                    f"({seconds:.1f} s, {totals.elapsed:.1f} s in all)")
    return stats.evaluation


def _violations(run: _Run, totals: Totals) -> list[Violation]:
    """One shortest trace per violated property, ordered by (level, property, fingerprint)."""
    names = [*run.props, DEADLOCK]
    ordered = sorted(
        ((int(prop), level, key) for prop, (level, key) in totals.violations.items()),
        key=lambda item: (item[1], item[0], from_key(item[2])),
    )
    if run.options.stop_at_first:
        ordered = ordered[:1]
    return [Violation(names[prop], _trace(run, totals, level, key))
            for prop, level, key in ordered]


def _trace(run: _Run, totals: Totals, level: int, key: int) -> tuple[TraceStep, ...]:
    """The shortest trace to the state ``key`` of level ``level``: its links looked up level
    by level, then replayed through the model."""
    path = [key]
    for lv in range(level, 1, -1):
        path.append(run.parent_of(lv, path[-1], totals.buckets))
    path.reverse()
    fingerprints = [from_key(k) for k in path]
    return replay_path(run.model, fingerprints, symmetry=run.options.symmetry)


def evaluation_error_result(
    run: _Run, totals: Totals, key: int, error: EvaluationError,
) -> CheckResult:
    """The report of a search stopped at the model's own ``error``, raised by the next step
    of the state ``key`` of the last level built: the report the local engine makes of it
    (``isrlab.services.runs.evaluation_error_result``): the violation ``EVALUATION_ERROR``
    explained by the error, with the shortest trace to that state, the counts of the levels
    built, no other violation and no ``sometimes`` verdicts (the search stopped short)."""
    violation = Violation(EVALUATION_ERROR, _trace(run, totals, totals.level, key), str(error))
    result = check_result(
        run.model, replace(run.options, stop_at_first=True), totals, engine=ENGINE,
        workers=run.cores, elapsed_s=totals.elapsed, violations=[violation],
        complete=totals.frontier == 0)
    return replace(result, sometimes=())


def level_files(root: Path) -> Sequence[Path]:
    """The level directories of a run directory, in level order."""
    levels = root / LEVELS
    return sorted(levels.glob("level-*")) if levels.exists() else []


__all__ = [
    "ENGINE", "LevelStats", "SparkTaskFailed", "Totals", "explore", "level_files", "to_key",
]
