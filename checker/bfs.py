"""Breadth-first explicit-state model checking, in one process or several.

Entry point: ``explore(model, options) -> CheckResult``.

The search is *level-synchronous*: level 1 holds the initial states, level ``k + 1`` the new
states found by expanding level ``k``.  Each state is known by the 64-bit fingerprint of
``model.encode(c)`` where ``c`` is the state itself, or ``model.canonical(state)`` under
symmetry reduction (the frontier then holds the representatives ``c``).  Invariants and
``sometimes`` properties are evaluated on every new state, the initial ones included.

Exactness and determinism:

* every new state keeps ONE parent link, chosen order-independently: the smallest
  ``(parent fingerprint, label)`` among all its discoveries in the level that found it, so one
  process and N processes (states partitioned by fingerprint) build the same links;
* a violation found at level ``k`` lets level ``k`` finish (so counts do not depend on
  scheduling), then the reported violation is the smallest ``(level, property index,
  fingerprint)``; its trace walks the links back to an initial state and is replayed forward
  through ``model.next_states``, choosing at each step the smallest label among successors
  with the linked fingerprint.  Counts, diameter and traces are therefore identical across
  runs, worker counts and resumed runs.

Memory per distinct state: one fingerprint in the visited set (13 to 26 bytes in the
compiled ``isrlab.checker._fpset.FpSet``, about 80 in the Python set used when it is not
built) plus 16 bytes of links (two ``array('Q')`` per level); the frontier holds one level's
states.  With a run directory the states and links stay on disk instead (checker/diskbfs.py:
the fingerprints, and the links of the level being built, are all that is in memory).
"""

from __future__ import annotations

import contextlib
import gc
import multiprocessing
import multiprocessing.connection
import os
import shutil
import signal
import tempfile
import time
import traceback
from array import array
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Generic, Protocol, TypeVar

from isrlab.checker.diskbfs import make_worker  # the on-disk level store's worker
from isrlab.checker.fingerprint import (
    compiled_engine,
    fingerprint,
)
from isrlab.checker.level_worker import (  # the worker and the options, re-exported
    WORKER_GC_THRESHOLDS,
    CheckOptions,
    Progress,
    _least_per_property,
    _LevelReport,
    _Worker,
    merge_counts,
)
from isrlab.checker.model import EvaluationError, Model, state_layout
from isrlab.checker.report import (
    DEADLOCK,
    INIT_ACTION,
    ActionCoverage,
    CheckResult,
    SometimesResult,
    TraceStep,
    Violation,
    collision_probability,
)
from isrlab.checker.runstore import RunDirError, RunStore, parts_of

S = TypeVar("S")

__all__ = ["CheckOptions", "Progress", "RunDirError", "explore", "replay_path"]


class _Slots:
    """Per-worker live counters in shared memory (expanded, generated, new in level)."""

    def __init__(self, shared: Any) -> None:
        self.shared = shared

    def update(self, worker: int, expanded: int, generated: int, new: int) -> None:
        base = 3 * worker
        self.shared[base] = expanded
        self.shared[base + 1] = generated
        self.shared[base + 2] = new


# -- coordination -----------------------------------------------------------------------------


class _Driver(Generic[S]):
    """Runs the level steps on the workers: in this process, or in worker processes."""

    def start(self) -> list[_LevelReport]:
        raise NotImplementedError

    def resume(self, commit: Mapping[str, Any]) -> None:
        raise NotImplementedError

    def step(self, level: int, wait: Callable[[], None]) -> list[_LevelReport]:
        raise NotImplementedError

    def parent_of(self, level: int, fp: int) -> int:
        raise NotImplementedError

    def live(self) -> tuple[int, int, int]:
        """(expanded, generated, new) so far in the current level, summed over workers."""
        raise NotImplementedError

    def close(self) -> None:
        """Stop worker processes and remove the exchange directory."""


class _LocalSlots:
    def __init__(self) -> None:
        self.values = (0, 0, 0)
        self.hook: Callable[[], None] | None = None

    def update(self, worker: int, expanded: int, generated: int, new: int) -> None:
        self.values = (expanded, generated, new)
        if self.hook is not None:
            self.hook()


class _InProcess(_Driver[S]):
    def __init__(self, model: Model[S], options: CheckOptions, store: RunStore | None) -> None:
        self.slots = _LocalSlots()

        self.worker = make_worker(model, options, 0, 1, None, store, self.slots)

    def start(self) -> list[_LevelReport]:
        self.worker.start()
        return [self.worker.merge(1)]

    def resume(self, commit: Mapping[str, Any]) -> None:
        self.worker.resume(commit)

    def step(self, level: int, wait: Callable[[], None]) -> list[_LevelReport]:
        self.slots.values = (0, 0, 0)
        self.slots.hook = wait
        self.worker.expand(level)
        return [self.worker.merge(level + 1)]

    def parent_of(self, level: int, fp: int) -> int:
        parent = self.worker.parent_of(level, fp)
        assert parent is not None
        return parent

    def live(self) -> tuple[int, int, int]:
        return self.slots.values


def _serve(
    connection: multiprocessing.connection.Connection, model: Model[Any], options: CheckOptions,
    index: int, workers: int, exchange: Path, store: RunStore | None, shared: Any,
    inherited: Sequence[multiprocessing.connection.Connection], parent: int,
) -> None:
    """A worker process: obey the coordinator's commands until told to stop.

    Ctrl-C is the coordinator's to handle; a worker whose coordinator died exits.
    """
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    gc.set_threshold(*WORKER_GC_THRESHOLDS)
    for end in inherited:
        end.close()

    worker = make_worker(model, options, index, workers, exchange, store, _Slots(shared))
    with contextlib.suppress(OSError, EOFError):  # the coordinator is gone: just exit
        while True:
            while not connection.poll(1.0):
                if os.getppid() != parent:
                    return
            command, argument = connection.recv()
            if command == "stop":
                return
            try:
                connection.send(("ok", _obey(worker, command, argument)))
            except (OSError, EOFError):
                raise
            except RunDirError as error:  # a damaged run directory or a full disk: one line
                connection.send(("run-dir", str(error)))
            except EvaluationError as error:  # the model's own error: the coordinator reruns
                connection.send(("evaluation", (str(error.args[0]), error.action)))
            except Exception:
                connection.send(("error", traceback.format_exc()))


def _obey(worker: _Worker[Any], command: str, argument: Any) -> Any:
    """Run one coordinator command on a worker; its answer."""
    if command == "start":
        worker.start()
        return None
    if command == "resume":
        worker.resume(argument)
        return None
    if command == "expand":
        worker.expand(argument)
        return None
    if command == "merge":
        return worker.merge(argument)
    if command == "parent":
        return worker.parent_of(*argument)
    raise ValueError(f"unknown command {command!r}")


def exception_line(traceback_text: str) -> str:
    """The exception line (``Type: message``) that ends a formatted Python traceback."""
    lines = [line.strip() for line in traceback_text.splitlines() if line.strip()]
    return lines[-1] if lines else traceback_text


class WorkerError(RuntimeError):
    """A worker process failed: the message is its exception line, a note its traceback."""


class _MultiProcess(_Driver[S]):
    def __init__(
        self, model: Model[S], options: CheckOptions, store: RunStore | None, workers: int
    ) -> None:
        context = multiprocessing.get_context("fork")
        base = "/dev/shm" if os.path.isdir("/dev/shm") else None
        self.exchange = Path(tempfile.mkdtemp(prefix="isrlab-bfs-", dir=base))
        self.shared = context.Array("q", 3 * workers, lock=False)
        self.connections: list[multiprocessing.connection.Connection] = []
        self.processes: list[Any] = []
        for index in range(workers):
            mine, theirs = context.Pipe()
            process = context.Process(
                target=_serve,
                args=(theirs, model, options, index, workers, self.exchange, store, self.shared,
                      [*self.connections, mine], os.getpid()),
                daemon=True,
            )
            process.start()
            theirs.close()
            self.connections.append(mine)
            self.processes.append(process)

    def _all(self, command: str, argument: Any, wait: Callable[[], None] | None) -> list[Any]:
        for each in self.connections:
            each.send((command, argument))
        answers: list[Any] = [None] * len(self.connections)
        pending = set(range(len(self.connections)))
        while pending:
            ready = multiprocessing.connection.wait(
                [self.connections[i] for i in pending], timeout=0.25
            )
            for index in [i for i in pending if self.connections[i] in ready]:
                answers[index] = self._answer(index)
                pending.discard(index)
            if wait is not None:
                wait()
        return answers

    def _answer(self, index: int) -> Any:
        try:
            status, value = self.connections[index].recv()
        except EOFError as error:
            raise WorkerError(f"worker {index} died") from error
        if status == "run-dir":
            raise RunDirError(str(value))
        if status == "evaluation":
            raise EvaluationError(*value)
        if status == "error":
            failure = WorkerError(f"worker {index} failed: {exception_line(str(value))}")
            failure.add_note(f"worker {index}'s traceback:\n{str(value).rstrip()}")
            raise failure
        return value

    def start(self) -> list[_LevelReport]:
        self._all("start", None, None)
        return self._all("merge", 1, None)

    def resume(self, commit: Mapping[str, Any]) -> None:
        self._all("resume", dict(commit), None)

    def step(self, level: int, wait: Callable[[], None]) -> list[_LevelReport]:
        for i in range(len(self.shared)):
            self.shared[i] = 0
        self._all("expand", level, wait)
        return self._all("merge", level + 1, wait)

    def parent_of(self, level: int, fp: int) -> int:
        for parent in self._all("parent", (level, fp), None):
            if parent is not None:
                return int(parent)
        raise RuntimeError(f"no worker holds the link of {fp:#x} at level {level}")

    def live(self) -> tuple[int, int, int]:
        """(expanded, generated, 0): a worker's count of new candidates includes states that
        another worker found too (and owns), so their sum overcounts until the level's merge
        de-duplicates them; summing it made the displayed distinct count go backwards at
        each level's end.  Only counts that are exact when read are reported."""
        values = list(self.shared)
        return sum(values[0::3]), sum(values[1::3]), 0

    def close(self) -> None:
        for connection in self.connections:
            with contextlib.suppress(OSError):
                connection.send(("stop", None))
        for process in self.processes:
            process.join(timeout=5)
            if process.is_alive():
                process.kill()
        shutil.rmtree(self.exchange, ignore_errors=True)


ENGINE_SLICE = 1 << 18
"""Frontier states per call of the compiled engine's ``expand`` (progress is shown between)."""


def _engine_for(model: Model[S], options: CheckOptions, workers: int) -> Any:
    """The compiled level engine (checker/_engine.c) for this search, or None when it does
    not apply: not built or turned off, a model without a compiled successor function
    (``native_successors``), a run directory, a view or a state constraint."""
    engine_class = compiled_engine()
    offer = getattr(model, "native_successors", None)
    if (engine_class is None or offer is None or options.run_dir is not None
            or getattr(model, "view", None) is not None
            or getattr(model, "has_boundary", True)
            or not getattr(model, "identity_encoding", False)):
        return None
    native = offer()
    if native is None:
        return None
    capsule, labels = native
    try:
        return engine_class(capsule, labels, workers, options.symmetry)
    except ValueError:  # states too large for it, or no canonical form: the Python levels
        return None


class _InEngine(_Driver[S]):
    """The search's levels in C on ``workers`` threads of this process (checker/_engine.c).

    Level 1 is built by a ``_Worker`` as in every other search; from then on the engine
    expands each level and keeps the visited set and the frontier, and this driver keeps the
    links and checks in Python what the engine cannot (invariants without a C version,
    ``sometimes`` properties).  The counts, links and violations are those of the Python
    levels: a state is new or not, its link is the smallest, the smallest violation is
    reported."""

    def __init__(self, model: Model[S], options: CheckOptions, engine: Any) -> None:
        self.slots = _LocalSlots()
        self.first = _Worker(model, options, 0, 1, None, None, self.slots)
        self.engine = engine
        self.options = options
        self.levels: list[tuple[array[int], array[int]]] = []
        self.invariants = self.first.invariants
        self.deadlock_index = len(self.first.prop_names)
        in_c = engine.compiled_invariants()
        self.invariants_in_c = in_c == len(self.invariants)

    def start(self) -> list[_LevelReport]:
        first = self.first
        first.start()
        report = first.merge(1)
        self.levels = first.levels
        self.engine.set_frontier(array("Q", first.frontier_fps).tobytes(),
                                 b"".join(first.frontier))  # type: ignore[arg-type]  # identity: S is bytes
        first.frontier_fps, first.frontier = [], []
        return [report]

    def resume(self, commit: Mapping[str, Any]) -> None:
        raise RuntimeError("the compiled engine never runs with a run directory")

    def step(self, level: int, wait: Callable[[], None]) -> list[_LevelReport]:
        engine, report = self.engine, _LevelReport()
        self.slots.values = (0, 0, 0)
        size = engine.frontier_size()
        for start in range(0, size, ENGINE_SLICE):
            stop = min(size, start + ENGINE_SLICE)
            generated = engine.expand(start, stop)
            self.slots.values = (stop, generated, 0)
            wait()
        (report.generated, report.cov_generated, deadlocked, fps_bytes, parents_bytes,
         report.cov_distinct, violations) = engine.finish()
        fps, parents = array("Q"), array("Q")
        fps.frombytes(fps_bytes)
        parents.frombytes(parents_bytes)
        self.levels.append((fps, parents))
        if self.options.check_deadlock and deadlocked:
            dead = array("Q")
            dead.frombytes(deadlocked)
            report.violations.extend((level, self.deadlock_index, fp) for fp in dead)
        found = report.violations
        if self.invariants_in_c:
            found.extend((level + 1, index, fp) for index, fp in violations)
        first = self.first
        if (not self.invariants_in_c and self.invariants) or first.pending_sometimes:
            states = engine.states()
            if not self.invariants_in_c:
                for index, holds in self.invariants:
                    if not all(map(holds, states)):
                        found.extend((level + 1, index, fp) for fp, ok in zip(
                            fps, map(holds, states), strict=True) if not ok)
            first.report = report
            for state in states:
                if not first.pending_sometimes:
                    break
                first._check_sometimes(level + 1, state)
        report.violations = _least_per_property(found)
        report.new = report.frontier = len(fps)
        return [report]

    def parent_of(self, level: int, fp: int) -> int:
        fps, parents = self.levels[level - 1]
        return parents[fps.index(fp)]

    def live(self) -> tuple[int, int, int]:
        return self.slots.values


# -- traces -----------------------------------------------------------------------------------


def _key_of(model: Model[S], symmetry: bool) -> Callable[[S], int]:
    view: Callable[[S], bytes] | None = getattr(model, "view", None)

    def key(state: S) -> int:
        chosen = model.canonical(state) if symmetry else state
        return fingerprint(model.encode(chosen) if view is None else view(chosen))

    return key


def replay_path(
    model: Model[S], path: Sequence[int], *, symmetry: bool = False
) -> tuple[TraceStep, ...]:
    """The concrete trace through fingerprints ``path`` (level 1 first), replayed forward.

    At each step the successor with the next fingerprint and the smallest label is chosen.
    """
    key = _key_of(model, symmetry)
    first = getattr(model, "view", None) is not None
    current = next(s for s in model.init_states() if key(s) == path[0])
    steps = [TraceStep(INIT_ACTION, model.variables(current))]
    for target in path[1:]:
        best: tuple[str, S] | None = None
        for label, successor in model.next_states(current):
            if (best is None or label < best[0]) and key(successor) == target:
                best = (label, successor)
                if first:  # under a view: the state kept is the first one found
                    break
        if best is None:
            raise RuntimeError("trace replay failed: next_states is not deterministic")
        current = best[1]
        steps.append(TraceStep(best[0], model.variables(current)))
    return tuple(steps)


# -- the search -------------------------------------------------------------------------------


def _identity(model: Model[S], options: CheckOptions) -> dict[str, Any]:
    return {
        "model": model.name,
        "params": {k: options.params[k] for k in sorted(options.params)},
        "symmetry": options.symmetry,
        "check_deadlock": options.check_deadlock,
        **state_layout(model),
    }


@dataclass(slots=True)
class _Totals:
    level: int = 0
    deepest: int = 0  # the last level with at least one state: the diameter
    distinct: int = 0
    generated: int = 0
    frontier: int = 0
    cov_generated: dict[str, int] = field(default_factory=dict)
    cov_distinct: dict[str, int] = field(default_factory=dict)
    violations: list[tuple[int, int, int]] = field(default_factory=list)
    sometimes: dict[str, int] = field(default_factory=dict)  # property index -> level
    elapsed_before: float = 0.0
    parts: list[int] = field(default_factory=list)  # the workers that wrote each level

    def add(self, level: int, reports: Sequence[_LevelReport]) -> None:
        self.level = level
        self.frontier = 0
        if any(report.new for report in reports):
            self.deepest = level
        for report in reports:
            self.distinct += report.new
            self.generated += report.generated
            self.frontier += report.frontier
            merge_counts(self.cov_generated, report.cov_generated)
            merge_counts(self.cov_distinct, report.cov_distinct)
            self.violations = _least_per_property([*self.violations, *report.violations])
            for index in report.sometimes:
                self.sometimes.setdefault(str(index), level)

    def record(self, workers: int, elapsed: float) -> dict[str, Any]:
        return {
            "level": self.level, "deepest": self.deepest, "workers": workers,
            "distinct": self.distinct,
            "generated": self.generated, "frontier": self.frontier,
            "cov_generated": self.cov_generated, "cov_distinct": self.cov_distinct,
            "violations": sorted(self.violations), "sometimes": self.sometimes,
            "elapsed": self.elapsed_before + elapsed, "parts": self.parts,
        }

    @staticmethod
    def load(record: Mapping[str, Any]) -> _Totals:
        return _Totals(
            level=record["level"], deepest=record["deepest"], distinct=record["distinct"],
            generated=record["generated"],
            frontier=record["frontier"], cov_generated=dict(record["cov_generated"]),
            cov_distinct=dict(record["cov_distinct"]),
            violations=[(a, b, c) for a, b, c in record["violations"]],
            sometimes=dict(record["sometimes"]), elapsed_before=float(record["elapsed"]),
            parts=parts_of(record),
        )


class LevelTotals(Protocol):
    """The counters every level-synchronous engine keeps after each completed level."""

    deepest: int  # the last level with at least one state: the diameter
    distinct: int
    generated: int
    frontier: int
    cov_generated: dict[str, int]  # action label -> successors generated
    cov_distinct: dict[str, int]  # action label -> new states found
    sometimes: dict[str, int]  # sometimes-property index -> first level it held


def action_coverage(totals: LevelTotals) -> tuple[ActionCoverage, ...]:
    """Per-action coverage, folding labelled actions such as ``Fetch(1)`` into ``Fetch``."""
    generated: dict[str, int] = {}
    distinct: dict[str, int] = {}
    for label, count in totals.cov_generated.items():
        action = label.split("(", 1)[0]
        generated[action] = generated.get(action, 0) + count
    for label, count in totals.cov_distinct.items():
        action = label.split("(", 1)[0]
        distinct[action] = distinct.get(action, 0) + count
    return tuple(
        ActionCoverage(a, generated[a], distinct.get(a, 0)) for a in sorted(generated)
    )


def check_result(
    model: Model[S], options: CheckOptions, totals: LevelTotals, *, engine: str, workers: int,
    elapsed_s: float, violations: Sequence[Violation], complete: bool,
) -> CheckResult:
    """The report of a finished search, the same for every engine given the same counters
    and the same shortest traces (the first violation leads; all are kept unless the
    search stopped at the first)."""
    return CheckResult(
        model=model.name,
        params=dict(options.params),
        engine=engine,
        distinct_states=totals.distinct,
        generated_states=totals.generated,
        diameter=totals.deepest,
        elapsed_s=elapsed_s,
        violation=violations[0] if violations else None,
        violations=tuple(violations) if not options.stop_at_first else (),
        complete=complete,
        symmetry=options.symmetry,
        workers=workers,
        queue_left=totals.frontier,
        coverage=action_coverage(totals),
        sometimes=tuple(
            SometimesResult(p.name, str(i) in totals.sometimes, totals.sometimes.get(str(i)))
            for i, p in enumerate(model.sometimes())
        ),
        collision_probability=collision_probability(totals.distinct, totals.generated),
    )


def stop_verdict(
    options: CheckOptions, level: int, distinct: int, frontier: int, violated: bool
) -> bool | None:
    """Whether a level-synchronous search stops after ``level``: ``None`` to go on, else
    whether the finished search is complete (every engine shares this one rule)."""
    if violated and options.stop_at_first:
        return frontier == 0
    if frontier == 0:
        return True
    if options.max_depth is not None and level >= options.max_depth:
        return False
    if options.max_states is not None and distinct >= options.max_states:
        return False
    return None


def explore(model: Model[S], options: CheckOptions | None = None) -> CheckResult:
    """Explore ``model`` breadth-first and check every invariant on every reachable state.

    Raises ``RunDirError`` (a one-line message) when ``options.run_dir`` belongs to another
    check.  States outside ``model.within_boundary`` are treated as TLC treats states outside
    a CONSTRAINT (``tlc2.tool.ModelChecker.doNext``): they count as generated and their
    invariants are checked, but they are not expanded, not counted as distinct states and
    do not deepen the diameter (TLC never puts them in its fingerprint set).  They are kept
    as links only, so that a violation among them has a trace.
    """
    options = options or CheckOptions()
    started = time.monotonic()
    store: RunStore | None = None
    if options.run_dir is not None:
        store = RunStore(Path(options.run_dir))
        store.open(_identity(model, options))
    workers = max(1, options.workers)
    engine = _engine_for(model, options, workers)
    try:
        driver: _Driver[S] = (
            _InEngine(model, options, engine) if engine is not None
            else _InProcess(model, options, store) if workers == 1
            else _MultiProcess(model, options, store, workers)
        )
    except BaseException:
        if store is not None:
            store.close()
        raise
    # In this process too, the search's millions of tracked tuples (links) would make the
    # cyclic collector rescan them over and over: its worker thresholds, restored after.
    thresholds = gc.get_threshold()
    if workers == 1:
        gc.set_threshold(*WORKER_GC_THRESHOLDS)
    try:
        return _search(model, options, driver, store, workers, started,
                       threads=engine is not None)
    finally:
        gc.set_threshold(*thresholds)
        driver.close()
        if store is not None:
            store.close()


def _search(
    model: Model[S], options: CheckOptions, driver: _Driver[S], store: RunStore | None,
    workers: int, started: float, *, threads: bool = False,
) -> CheckResult:
    names = [p.name for p in model.invariants()] + [DEADLOCK]
    commit = store.commit() if store is not None else None
    if store is not None:
        store.clear_uncommitted(0 if commit is None else int(commit["level"]))
    if commit is not None:
        totals = _Totals.load(commit)
        driver.resume(commit)
    else:
        totals = _Totals()
        totals.add(1, driver.start())
        totals.parts.append(workers)
        if store is not None:
            store.write_commit(totals.record(workers, time.monotonic() - started))
    last_shown = [time.monotonic()]

    def show() -> None:
        if options.progress is None:
            return
        now = time.monotonic()
        if now - last_shown[0] < options.progress_interval_s:
            return
        last_shown[0] = now
        expanded, generated, new = driver.live()
        options.progress(Progress(
            level=totals.level, distinct=totals.distinct + new,
            generated=totals.generated + generated,
            queue=totals.frontier - expanded + new,
            elapsed_s=totals.elapsed_before + now - started,
        ))

    while (complete := stop_verdict(options, totals.level, totals.distinct, totals.frontier,
                                     bool(totals.violations))) is None:
        level = totals.level
        totals.add(level + 1, driver.step(level, show))
        totals.parts.append(workers)
        if store is not None:
            store.write_commit(totals.record(workers, time.monotonic() - started))
    parent_of = driver.parent_of
    if store is not None:
        disk, parts = store, totals.parts

        def parent_of(level: int, fp: int) -> int:
            return disk.parent_of(level, parts[level - 1], fp)

    violations = _violations(model, options, parent_of, totals, names)
    return check_result(
        model, options, totals,
        engine="bfs" if workers == 1 else f"bfs-{workers}{'thread' if threads else 'proc'}",
        workers=workers, elapsed_s=totals.elapsed_before + time.monotonic() - started,
        violations=violations, complete=complete,
    )


def _violations(
    model: Model[S], options: CheckOptions, parent_of: Callable[[int, int], int],
    totals: _Totals, names: Sequence[str],
) -> list[Violation]:
    """One shortest trace per violated property, first by (level, property, fingerprint)."""
    chosen: dict[int, tuple[int, int]] = {}
    for level, prop, fp in sorted(totals.violations):
        chosen.setdefault(prop, (level, fp))
    ordered = sorted(chosen.items(), key=lambda item: (item[1][0], item[0], item[1][1]))
    if options.stop_at_first:
        ordered = ordered[:1]
    result = []
    for prop, (level, fp) in ordered:
        path = [fp]
        for lv in range(level, 1, -1):
            path.append(parent_of(lv, path[-1]))
        path.reverse()
        result.append(Violation(names[prop], replay_path(model, path, symmetry=options.symmetry)))
    return result
