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
import pickle
import shutil
import signal
import tempfile
import time
import traceback
from array import array
from collections import _count_elements as count_labels  # type: ignore[attr-defined]  # C helper behind Counter.update
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from itertools import compress, repeat
from operator import itemgetter
from pathlib import Path
from typing import Any, Generic, Protocol, TypeVar

from isrlab.checker.fingerprint import (
    FingerprintSet,
    compiled_engine,
    compiled_exchange,
    compiled_expand,
    compiled_scan,
    fingerprint,
    fingerprint_set,
)
from isrlab.checker.fingerprint import xxh3_64 as _xxh3
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

ORBIT_CACHE_LIMIT = 20_000_000
"""Entries of the symmetry orbit cache (about 100 bytes each) before it is emptied."""
WORKER_GC_THRESHOLDS = (100_000, 50, 100)
"""The cyclic collector's thresholds in a worker process (and in the calling process
during a one-worker search): states are acyclic tuples freed by
reference counting, but a model's tuple subclasses (named fields) stay tracked, and with
CPython's defaults (700, 10, 10) the collector rescans every stored state over and over."""

_first, _second = itemgetter(0), itemgetter(1)

KEY_BYTES = 4
"""Under a view: the bytes of one successor index in a discovery key."""


__all__ = ["CheckOptions", "Progress", "RunDirError", "explore", "replay_path"]


@dataclass(frozen=True, slots=True)
class Progress:
    """A live snapshot for progress displays; every count is exact and never decreases.

    ``distinct`` counts the states of the completed levels, plus, with one worker, the new
    states found so far in the level being built (with several workers those are counted
    when the level's merge has de-duplicated them).  ``generated`` counts every successor
    generated so far; ``queue`` the states of the current level still to be expanded (plus,
    with one worker, the new ones found)."""

    level: int
    distinct: int
    generated: int
    queue: int
    elapsed_s: float


@dataclass(frozen=True, slots=True)
class CheckOptions:
    """How to explore.

    ``max_depth`` bounds the number of BFS levels (the initial states are level 1);
    ``max_states`` stops after the level in which the distinct count reaches it.
    ``stop_at_first`` stops after the level of the first violation; otherwise the search
    goes on and reports one shortest trace per violated property.  ``params`` only labels
    the report and identifies the run directory.
    """

    symmetry: bool = False
    workers: int = 1
    max_depth: int | None = None
    max_states: int | None = None
    stop_at_first: bool = True
    check_deadlock: bool = False
    run_dir: Path | None = None
    params: Mapping[str, Any] = field(default_factory=dict)
    progress: Callable[[Progress], None] | None = None
    progress_interval_s: float = 1.0


@dataclass(slots=True)
class _LevelReport:
    """What one worker found while building one level (sent to the coordinator)."""

    new: int = 0
    frontier: int = 0
    generated: int = 0
    cov_generated: dict[str, int] = field(default_factory=dict)
    cov_distinct: dict[str, int] = field(default_factory=dict)
    violations: list[tuple[int, int, int]] = field(default_factory=list)  # (level, prop, fp)
    sometimes: list[int] = field(default_factory=list)


def _least_per_property(found: Sequence[tuple[int, int, int]]) -> list[tuple[int, int, int]]:
    """Per property only the smallest ``(level, fingerprint)``: the one a trace is built for."""
    best: dict[int, tuple[int, int, int]] = {}
    for level, prop, fp in found:
        old = best.get(prop)
        if old is None or (level, fp) < (old[0], old[2]):
            best[prop] = (level, prop, fp)
    return sorted(best.values())


def merge_counts(into: dict[str, int], other: Mapping[str, int]) -> None:
    """Add the per-label counts ``other`` into ``into`` (coverage tallies of both engines)."""
    for key, value in other.items():
        into[key] = into.get(key, 0) + value


class _Worker(Generic[S]):
    """One partition of the search: the states whose fingerprint ``% workers == index``."""

    def __init__(
        self, model: Model[S], options: CheckOptions, index: int, workers: int,
        exchange: Path | None, store: RunStore | None, slots: Any,
    ) -> None:
        self.model = model
        self.options = options
        self.index = index
        self.workers = workers
        self.exchange = exchange
        self.store = store
        self.slots = slots
        self.seen = fingerprint_set()  # every worker's states of the completed levels
        self.orbit_of: dict[int, int] = {}  # symmetry: raw fingerprint -> representative's
        self.levels: list[tuple[array[int], array[int]]] = []  # this worker's links per level
        self.frontier_fps: list[int] = []
        self.frontier: list[S] = []
        # The level being built: candidate links in discovery order, and their states.
        self.links: dict[int, tuple[int, str]] = {}
        self.candidates: list[S] = []
        self.candidate_enc: list[bytes] = []  # only with a run directory or several workers
        # A model whose states are their own encoding (``identity_encoding``: bytes states,
        # encode and decode the identity) is never asked to encode or decode, and its
        # candidates double as their encodings.
        self.identity = bool(getattr(model, "identity_encoding", False))
        # TLC's VIEW: a model's optional ``view(state) -> bytes`` identifies states (the
        # fingerprint is the view's); the state kept for a view is the first one found.
        self.view: Callable[[S], bytes] | None = getattr(model, "view", None)
        # Under a view, each frontier state and candidate carries its discovery key: its
        # parent's key followed by its index among the parent's successors (4 bytes), so
        # that keys order states as TLC's one-worker FIFO queue does, and the state kept for
        # a view is the one of smallest key, whatever the partitioning into workers.
        self.frontier_keys: list[bytes] = []
        self.candidate_keys: list[bytes] = []
        self.candidate_at: dict[int, int] = {}  # view: fingerprint -> index in candidates
        self._pkey = b""  # view: the key of the state being expanded
        self.keep_encodings = workers > 1 and not self.identity
        self._owners: list[int] = []  # each candidate's owner, from _publish to merge
        # The compiled split and merge of the exchange (checker/_fpset.c), for models whose
        # states are their own encoding; this worker's own links and candidates, from
        # _publish to merge.
        self._exchange = compiled_exchange() if self.identity and self.view is None else None
        self._own: tuple[dict[int, tuple[int, str]], list[S], bytes] | None = None
        self.report = _LevelReport()
        invariants = list(model.invariants())
        self.prop_names = [p.name for p in invariants]
        self.invariants = [(i, p.holds) for i, p in enumerate(invariants)]
        self.pending_sometimes = list(enumerate(p.holds for p in model.sometimes()))

    def _check_sometimes(self, level: int, state: S) -> None:
        """Evaluate the ``sometimes`` properties not reached yet on a new state."""
        reached = [i for i, holds in self.pending_sometimes if holds(state)]
        if reached:
            self.report.sometimes.extend(reached)
            self.pending_sometimes = [
                (i, h) for i, h in self.pending_sometimes if i not in reached
            ]

    # -- level 1 -------------------------------------------------------------------------------
    def start(self) -> None:
        """Collect this worker's share of the initial states (partitioned by fingerprint)."""
        self.report = report = _LevelReport()
        symmetry, model = self.options.symmetry, self.model
        for number, state in enumerate(model.init_states()):
            if self.index == 0:
                report.generated += 1
                report.cov_generated[INIT_ACTION] = report.cov_generated.get(INIT_ACTION, 0) + 1
            canonical = model.canonical(state) if symmetry else state
            encoding = model.encode(canonical)
            fp = fingerprint(encoding if self.view is None else self.view(canonical))
            if fp % self.workers != self.index or fp in self.links:
                continue
            self.links[fp] = (0, INIT_ACTION)
            self.candidates.append(canonical)
            if self.view is not None:
                self.candidate_at[fp] = len(self.candidate_keys)
                self.candidate_keys.append(number.to_bytes(KEY_BYTES, "big"))
            if self.keep_encodings:
                self.candidate_enc.append(encoding)
        self._publish(1)

    def resume(self, commit: Mapping[str, Any]) -> None:
        """Only a search with a run directory resumes (``diskbfs.DiskWorker``)."""
        raise RuntimeError("an in-memory search has nothing to resume")

    # -- level k -> k + 1 ----------------------------------------------------------------------
    def expand(self, level: int) -> None:
        """Expand this worker's frontier (level ``level``), collecting candidate new states."""
        self.report = report = _LevelReport()
        model, options = self.model, self.options
        next_states = model.next_states
        canonical = model.canonical if options.symmetry else None
        seen, links = self.seen, self.links
        if len(self.orbit_of) > ORBIT_CACHE_LIMIT:
            self.orbit_of.clear()
        orbit_of = self.orbit_of
        add_candidate = self.candidates.append
        add_encoding = self.candidate_enc.append if self.keep_encodings else None
        identity = self.identity
        # The compiled loop (checker/_fpset.c: scan) does what _scan_python does, for
        # models whose states are their own encoding.
        scan = compiled_scan() if identity and self.view is None else None
        candidates = self.candidates
        orbit = orbit_of if canonical is not None else None
        cov = report.cov_generated
        first = itemgetter(0)
        deadlock = options.check_deadlock
        generated = 0
        slots, tick, me = self.slots, 0, self.index
        expand_slice = compiled_expand() if scan is not None else None
        if expand_slice is not None:
            # The loop below over slices of 1024 states, compiled (checker/_fpset.c: expand).
            fps, frontier, step = self.frontier_fps, self.frontier, 1024
            for start in range(0, len(frontier), step):
                count, deadlocked = expand_slice(
                    fps[start:start + step], frontier[start:start + step], next_states, cov,
                    seen, links, candidates, _xxh3, orbit, canonical)
                generated += count
                if deadlock:
                    report.violations.extend(
                        (level, len(self.prop_names), pfp) for pfp in deadlocked)
                tick = min(start + step, len(frontier))
                if slots is not None:
                    slots.update(me, tick, generated, len(links))
            self.frontier_fps, self.frontier = [], []
        keys = self.frontier_keys if self.view is not None else repeat(b"")
        for pfp, state, pkey in zip(self.frontier_fps, self.frontier, keys, strict=False):
            self._pkey = pkey
            successors = next_states(state)
            if not isinstance(successors, list):
                successors = list(successors)
            count_labels(cov, map(first, successors))
            count = len(successors)
            if scan is not None:
                scan(successors, pfp, seen, links, candidates, _xxh3, orbit, canonical)
            else:
                self._scan_python(successors, pfp, seen, links, orbit_of, canonical,
                                  add_candidate, add_encoding)
            generated += count
            if count == 0 and deadlock:
                report.violations.append((level, len(self.prop_names), pfp))
            tick += 1
            if tick & 1023 == 0 and slots is not None:
                slots.update(me, tick, generated, len(links))
        report.generated = generated
        if slots is not None:
            slots.update(me, tick, generated, len(links))
        self.frontier_fps, self.frontier, self.frontier_keys = [], [], []
        self._publish(level + 1)

    def _scan_python(
        self, successors: list[tuple[str, S]], pfp: int, seen: FingerprintSet,
        links: dict[int, tuple[int, str]], orbit_of: dict[int, int],
        canonical: Callable[[S], S] | None, add_candidate: Callable[[S], None],
        add_encoding: Callable[[bytes], None] | None,
    ) -> None:
        """The per-successor loop of ``expand`` (the compiled ``scan`` of checker/_fpset.c
        does the same for models whose states are their own encoding): fingerprint each
        successor (its representative's under symmetry), skip it when seen, else link it
        (the smallest link wins) and, when new in this level, make it a candidate."""
        identity, encode = self.identity, self.model.encode
        if self.view is not None:
            self._scan_view(successors, pfp, seen, links, canonical, add_candidate,
                            add_encoding)
            return
        for label, successor in successors:
            encoding: bytes = successor if identity else encode(successor)  # type: ignore[assignment]  # identity: S is bytes
            if canonical is None:
                fp = _xxh3(encoding)
            else:
                # The orbit cache maps a raw successor's fingerprint to its
                # representative's: a hit is a state already seen or linked.
                raw = _xxh3(encoding)
                known = orbit_of.get(raw)
                if known is None:
                    successor = canonical(successor)
                    encoding = successor if identity else encode(successor)  # type: ignore[assignment]  # identity: S is bytes
                    fp = orbit_of[raw] = _xxh3(encoding)
                else:
                    fp = known
            if fp in seen:
                continue
            old = links.get(fp)
            if old is not None:
                if (pfp, label) < old:
                    links[fp] = (pfp, label)
                continue
            links[fp] = (pfp, label)
            add_candidate(successor)
            if add_encoding is not None:
                add_encoding(encoding)

    def _scan_view(
        self, successors: list[tuple[str, S]], pfp: int, seen: FingerprintSet,
        links: dict[int, tuple[int, str]], canonical: Callable[[S], S] | None,
        add_candidate: Callable[[S], None], add_encoding: Callable[[bytes], None] | None,
    ) -> None:
        """``_scan_python`` for a model with a view: the fingerprint is the view's (of the
        representative under symmetry); the first successor found for a view is the state
        kept (TLC's VIEW), its link is the smallest as for every state."""
        view, encode, identity = self.view, self.model.encode, self.identity
        assert view is not None
        pkey, at, keys = self._pkey, self.candidate_at, self.candidate_keys
        candidates, encodings = self.candidates, self.candidate_enc
        for index, (label, successor) in enumerate(successors):
            if canonical is not None:
                successor = canonical(successor)
            fp = _xxh3(view(successor))
            if fp in seen:
                continue
            key = pkey + index.to_bytes(KEY_BYTES, "big")
            where = at.get(fp)
            if where is not None:
                if key < keys[where]:  # found earlier in TLC's order: this state is kept
                    links[fp] = (pfp, label)
                    keys[where] = key
                    candidates[where] = successor
                    if add_encoding is not None:
                        encodings[where] = successor if identity else encode(successor)  # type: ignore[assignment]  # identity: S is bytes
                continue
            links[fp] = (pfp, label)
            at[fp] = len(keys)
            keys.append(key)
            add_candidate(successor)
            if add_encoding is not None:
                add_encoding(successor if identity else encode(successor))  # type: ignore[arg-type]  # identity: S is bytes

    def _publish(self, level: int) -> None:
        """Send each other worker the candidates it owns (``fp % workers``) and every
        candidate's fingerprint (all of them are new states, whoever owns them).

        Column by column: the owned fingerprints and parents as ``array('Q')`` bytes, the
        labels and encodings as lists (pickle shares repeated label strings), so that
        nothing is built per candidate but the owner test."""
        if self.workers == 1:
            return
        assert self.exchange is not None
        workers, me = self.workers, self.index
        if self._exchange is not None:
            self._publish_compiled(level)
            return
        keys = array("Q", self.links)
        every = keys.tobytes()
        owners = [fp % workers for fp in keys]
        self._owners = owners
        links = list(self.links.values())
        encodings = self.candidates if self.identity else self.candidate_enc
        for other in range(workers):
            if other == me:
                continue
            chosen = [owner == other for owner in owners]
            picked = list(compress(links, chosen))
            payload = (
                array("Q", compress(keys, chosen)).tobytes(),
                array("Q", map(_first, picked)).tobytes(),
                list(map(_second, picked)),
                list(compress(encodings, chosen)),
                every,
                list(compress(self.candidate_keys, chosen)) if self.view is not None else [],
            )
            (self.exchange / f"{level - 1}-{me}-{other}.bin").unlink(missing_ok=True)
            temporary = self.exchange / f"{level}-{me}-{other}.tmp"
            temporary.write_bytes(pickle.dumps(payload, protocol=5))
            os.replace(temporary, self.exchange / f"{level}-{me}-{other}.bin")

    def _write_part(self, level: int, other: int, payload: Any) -> None:
        me = self.index
        assert self.exchange is not None
        (self.exchange / f"{level - 1}-{me}-{other}.bin").unlink(missing_ok=True)
        temporary = self.exchange / f"{level}-{me}-{other}.tmp"
        temporary.write_bytes(pickle.dumps(payload, protocol=5))
        os.replace(temporary, self.exchange / f"{level}-{me}-{other}.bin")

    def _publish_compiled(self, level: int) -> None:
        """``_publish`` with the compiled split (the same parts, in one pass)."""
        assert self._exchange is not None
        split = self._exchange[0]
        own_links, own, parts, every = split(
            self.links, self.candidates, self.workers, self.index)
        self._own = (own_links, own, every)
        for other, part in enumerate(parts):
            if part is not None:
                self._write_part(level, other, (*part, every))

    def merge(self, level: int) -> _LevelReport:
        """Gather the candidates this worker owns (the smallest link wins) and finish."""
        if self.workers == 1:
            return self._finish_level(
                level, self.links, self.candidates,
                self.candidates if self.identity else self.candidate_enc,  # type: ignore[arg-type]  # identity: S is bytes
                [], self.candidate_keys)
        assert self.exchange is not None
        workers, me, decode = self.workers, self.index, self.model.decode
        if self._own is not None:
            return self._merge_compiled(level)
        if self.view is not None:
            return self._merge_view(level)
        mine = [owner == me for owner in self._owners]
        links: dict[int, tuple[int, str]] = dict(compress(self.links.items(), mine))
        states: list[S] = list(compress(self.candidates, mine))
        encodings: list[bytes] = (
            states if self.identity  # type: ignore[assignment]  # S is bytes here
            else list(compress(self.candidate_enc, mine))
        )
        others = [array("Q", self.links.keys())]
        for other in range(workers):
            if other == me:
                continue
            fps_bytes, parents_bytes, labels, received, every, _keys = pickle.loads(
                (self.exchange / f"{level}-{other}-{me}.bin").read_bytes()
            )
            fps, parents, all_fps = array("Q"), array("Q"), array("Q")
            fps.frombytes(fps_bytes)
            parents.frombytes(parents_bytes)
            all_fps.frombytes(every)
            others.append(all_fps)
            incoming = dict(zip(fps, zip(parents, labels, strict=True), strict=True))
            common = incoming.keys() & links.keys()
            for fp in common:  # found by both: the smallest link wins, the state is kept
                if incoming[fp] < links[fp]:
                    links[fp] = incoming[fp]
            fresh = [fp not in common for fp in fps] if common else None
            if fresh is None:
                links.update(incoming)
            else:
                links.update(compress(incoming.items(), fresh))
                received = list(compress(received, fresh))
            if self.identity:
                states.extend(received)
            else:
                states.extend(map(decode, received))
                encodings.extend(received)
        return self._finish_level(level, links, states, encodings, others)

    def _merge_view(self, level: int) -> _LevelReport:
        """``merge`` under a view: for a fingerprint found by several workers the state of
        smallest discovery key is kept, with its link; the new states in key order."""
        assert self.exchange is not None
        me, decode = self.index, self.model.decode
        mine = [owner == me for owner in self._owners]
        # A model whose states are their own encoding kept no encodings beside them.
        own_encodings = self.candidates if self.identity else self.candidate_enc
        found: dict[int, tuple[bytes, tuple[int, str], Any, bytes]] = {
            fp: (key, link, state, encoding) for fp, link, state, encoding, key, own in zip(
                self.links.keys(), self.links.values(), self.candidates, own_encodings,
                self.candidate_keys, mine, strict=True) if own}
        others = [array("Q", self.links.keys())]
        for other in range(self.workers):
            if other == me:
                continue
            fps_bytes, parents_bytes, labels, received, every, keys = pickle.loads(
                (self.exchange / f"{level}-{other}-{me}.bin").read_bytes())
            fps, parents, all_fps = array("Q"), array("Q"), array("Q")
            fps.frombytes(fps_bytes)
            parents.frombytes(parents_bytes)
            all_fps.frombytes(every)
            others.append(all_fps)
            for fp, parent, label, encoding, key in zip(
                    fps, parents, labels, received, keys, strict=True):
                known = found.get(fp)
                if known is None or key < known[0]:
                    found[fp] = (key, (parent, label), None, encoding)
        ordered = sorted(found.items(), key=lambda item: item[1][0])
        links = {fp: link for fp, (_key, link, _state, _enc) in ordered}
        states = [decode(enc) if state is None else state
                  for _fp, (_key, _link, state, enc) in ordered]
        encodings = [enc for _fp, (_key, _link, _state, enc) in ordered]
        keys = [key for _fp, (key, _link, _state, _enc) in ordered]
        return self._finish_level(level, links, states, encodings, others, keys)

    def _merge_compiled(self, level: int) -> _LevelReport:
        """``merge`` with the compiled intake of the other workers' parts."""
        assert self.exchange is not None and self._exchange is not None and self._own
        merge_part = self._exchange[1]
        links, states, every = self._own
        self._own = None
        mine = array("Q")
        mine.frombytes(every)
        others = [mine]
        for other in range(self.workers):
            if other == self.index:
                continue
            fps_bytes, parents_bytes, labels, received, every, *_keys = pickle.loads(
                (self.exchange / f"{level}-{other}-{self.index}.bin").read_bytes()
            )
            all_fps = array("Q")
            all_fps.frombytes(every)
            others.append(all_fps)
            merge_part(links, states, fps_bytes, parents_bytes, labels, received)
        return self._finish_level(
            level, links, states, states,  # type: ignore[arg-type]  # identity: S is bytes
            others)

    def _finish_level(
        self, level: int, links: dict[int, tuple[int, str]], states: list[S],
        encodings: list[bytes], others: Sequence[array[int]], keys: Sequence[bytes] = (),
    ) -> _LevelReport:
        """Check and link this worker's new states, persist them, make them the frontier."""
        report = self.report
        fps, parents = array("Q"), array("Q")
        distinct = report.cov_distinct
        within = self.model.within_boundary
        invariants, violations = self.invariants, report.violations
        frontier_fps: list[int] = []
        frontier: list[S] = []
        if not getattr(self.model, "has_boundary", True):
            # Every state lies within the boundary: the loop below, column by column.
            fps.extend(links.keys())
            parents.extend(map(_first, links.values()))
            for index, holds in invariants:
                if not all(map(holds, states)):
                    violations.extend((level, index, fp) for fp, ok in zip(
                        fps, map(holds, states), strict=True) if not ok)
            for state in states:
                if not self.pending_sometimes:
                    break
                self._check_sometimes(level, state)
            count_labels(distinct, map(_second, links.values()))
            frontier_fps, frontier = list(links), states
            frontier_keys = list(keys)
            links = {}  # the loop below has nothing left to do
        else:
            frontier_keys = []
        for (fp, (parent, label)), state, key in zip(
            links.items(), states, keys or repeat(b""), strict=False
        ):
            fps.append(fp)
            parents.append(parent)
            for index, holds in invariants:
                if not holds(state):
                    violations.append((level, index, fp))
            if self.pending_sometimes:
                self._check_sometimes(level, state)
            if within(state):
                distinct[label] = distinct.get(label, 0) + 1
                frontier_fps.append(fp)
                frontier.append(state)
                frontier_keys.append(key)
        self.levels.append((fps, parents))
        if not others:  # several workers: ``others`` holds every new state, these included
            self.seen.update(fps)
        for other in others:
            self.seen.update(other)
        report.new = len(frontier_fps)  # TLC's distinct count: states within the CONSTRAINT
        report.violations = _least_per_property(report.violations)
        self.links, self.candidates, self.candidate_enc = {}, [], []
        self.candidate_keys, self.candidate_at = [], {}
        self.frontier_fps, self.frontier = frontier_fps, frontier
        self.frontier_keys = frontier_keys if self.view is not None else []
        report.frontier = len(frontier)
        return report

    def parent_of(self, level: int, fp: int) -> int | None:
        """The linked parent of a state of ``level`` if this worker holds its link."""
        fps, parents = self.levels[level - 1]
        try:
            return parents[fps.index(fp)]
        except ValueError:
            return None


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
        from isrlab.checker.diskbfs import make_worker  # diskbfs extends this module

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
    from isrlab.checker.diskbfs import make_worker  # diskbfs extends this module

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
