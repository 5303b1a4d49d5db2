"""The level search's worker, shared by the in-memory search (``bfs``) and the on-disk
level store (``diskbfs``): a partition of the states, its successor loop, its visited set
and its links; and the options and per-level report they exchange."""

from __future__ import annotations

import os
import pickle
from array import array
from collections import _count_elements as count_labels  # type: ignore[attr-defined]  # C helper behind Counter.update
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from itertools import compress, repeat
from operator import itemgetter
from pathlib import Path
from typing import Any, Generic, TypeVar

from isrlab.checker.fingerprint import (
    FingerprintSet,
    compiled_exchange,
    compiled_expand,
    compiled_failures,
    compiled_link_columns,
    compiled_scan,
    fingerprint,
    fingerprint_set,
)
from isrlab.checker.fingerprint import xxh3_64 as _xxh3
from isrlab.checker.model import Model
from isrlab.checker.report import (
    INIT_ACTION,
)
from isrlab.checker.runstore import RunStore

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
        self.holds = tuple(p.holds for p in invariants)
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
    def _own_initial_states(self) -> Iterator[tuple[int, int, S, bytes]]:
        """This worker's share of the initial states, in ``init_states()``' order
        (duplicates included): ``(number, fingerprint, state, encoding)`` for each whose
        fingerprint (its view's under a view) it owns, the state its representative under
        symmetry, ``number`` its place among all initial states (its discovery key under a
        view).  Worker 0 counts every initial state as generated in ``self.report``."""
        report = self.report
        symmetry, model, view = self.options.symmetry, self.model, self.view
        for number, state in enumerate(model.init_states()):
            if self.index == 0:
                report.generated += 1
                report.cov_generated[INIT_ACTION] = report.cov_generated.get(INIT_ACTION, 0) + 1
            canonical = model.canonical(state) if symmetry else state
            encoding = model.encode(canonical)
            fp = fingerprint(encoding if view is None else view(canonical))
            if fp % self.workers == self.index:
                yield number, fp, canonical, encoding

    def start(self) -> None:
        """Collect this worker's share of the initial states (partitioned by fingerprint)."""
        self.report = _LevelReport()
        for number, fp, canonical, encoding in self._own_initial_states():
            if fp in self.links:
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
        # The compiled loops (checker/_fpset.c: expand, scan) do what the loop below and
        # _scan_python do, for every model without a view: ``encode`` None for a model
        # whose states are their own encoding, the digest None for their own XXH3-64.
        scan = compiled_scan() if self.view is None else None
        encode = None if identity else model.encode
        encodings = self.candidate_enc if self.keep_encodings else None
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
                    seen, links, candidates, None, orbit, canonical, encode, encodings)
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
                scan(successors, pfp, seen, links, candidates, None, orbit, canonical, encode,
                     encodings)
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
        does the same for every model without a view): fingerprint each successor's
        encoding (its representative's under symmetry), skip it when seen, else link it
        (the smallest link wins) and, when new in this level, make it a candidate (with its
        encoding when ``add_encoding`` is given)."""
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
            self._write_part(level, other, payload)

    def _write_part(self, level: int, other: int, payload: Any) -> None:
        """Hand ``other`` its part of ``level`` (written whole, then renamed into place),
        removing this worker's part for it of the level before."""
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
        """Check and link this worker's new states, persist them, make them the frontier.

        No Python loop runs per state: every new state is checked (the compiled
        ``failures`` of checker/_fpset.c, state by state; else each invariant over every
        state with ``map``), and those within the boundary (``within_boundary``; all of
        them when ``has_boundary`` is false) are counted and become the frontier."""
        report = self.report
        inside = (list(map(self.model.within_boundary, states))
                  if getattr(self.model, "has_boundary", True) else None)
        fps, parents, frontier_fps = self._link_columns(links, inside)
        violations = report.violations
        failures = compiled_failures()
        if failures is not None:
            violations.extend((level, index, fps[at])
                              for index, at in failures(states, self.holds))
        else:
            for index, holds in self.invariants:
                if not all(map(holds, states)):
                    violations.extend((level, index, fp) for fp, ok in zip(
                        fps, map(holds, states), strict=True) if not ok)
        for state in states:
            if not self.pending_sometimes:
                break
            self._check_sometimes(level, state)
        frontier, frontier_keys = states, list(keys)
        if inside is not None and not all(inside):
            frontier = list(compress(states, inside))
            frontier_keys = list(compress(frontier_keys, inside))
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

    def _link_columns(
        self, links: dict[int, tuple[int, str]], inside: list[bool] | None,
    ) -> tuple[array[int], array[int], list[int]]:
        """A level's links as columns: the fingerprints and the parents, and the
        fingerprints of the states within the boundary (``inside``; None: all of them),
        whose labels are counted in the report's distinct coverage (the compiled
        ``link_columns`` of checker/_fpset.c in one pass, or the same in Python)."""
        fps, parents = array("Q"), array("Q")
        columns = compiled_link_columns()
        if columns is not None:
            fps_bytes, parents_bytes, frontier_fps = columns(
                links, self.report.cov_distinct, inside)
            fps.frombytes(fps_bytes)
            parents.frombytes(parents_bytes)
            return fps, parents, frontier_fps
        fps.extend(links.keys())
        parents.extend(map(_first, links.values()))
        labels: Iterable[str] = map(_second, links.values())
        frontier_fps = list(links)
        if inside is not None:
            labels = compress(labels, inside)
            frontier_fps = list(compress(frontier_fps, inside))
        count_labels(self.report.cov_distinct, labels)
        return fps, parents, frontier_fps

    def parent_of(self, level: int, fp: int) -> int | None:
        """The linked parent of a state of ``level`` if this worker holds its link."""
        fps, parents = self.levels[level - 1]
        try:
            return parents[fps.index(fp)]
        except ValueError:
            return None
