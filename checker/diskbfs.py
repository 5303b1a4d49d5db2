"""The breadth-first search with a run directory: every state on disk, fingerprints in memory.

``explore`` (checker/bfs.py) uses ``DiskWorker`` instead of its in-memory worker whenever
the check has a run directory (checker/runstore.py).  What each level costs in memory:

* the fingerprints of every state seen (the compact set of checker/_fpset.c: 13 to 26 bytes
  a state);
* for the level being built, each new state's fingerprint and link in a ``LinkTable``
  (28 to 44 bytes a state of that level); the state itself goes to the run directory as
  soon as it is found (``build-*`` record files, one per owning worker);
* the level being expanded is streamed from its record file one block (about 1 MiB) at a
  time; the trace's links are read back from the run directory when a trace is built.

The search is the in-memory one's, state for state: the same new states, the same link for
each (the smallest ``(parent, label)``; under a view the first state found in TLC's order,
with its link), the same violations, counts and traces, with one or several workers, and a
run resumed with another worker count reads the committed level's files as they are.

Several workers: each writes the new states it finds into one record file per owning
worker (``fp % workers``) and, at the end of its expansion, its links of them; each owner
then merges what the workers sent it: without a view, the smallest link over all of them
and the first record of each state; under a view, the records of all senders merged by
discovery key (each sender's file is in key order), the first of each state kept.
"""

from __future__ import annotations

import heapq
from array import array
from collections import _count_elements as count_labels  # type: ignore[attr-defined]  # C helper behind Counter.update
from collections.abc import Iterator, Mapping
from itertools import chain
from operator import itemgetter
from pathlib import Path
from typing import Any, TypeVar

from isrlab.checker.fingerprint import LinkTableLike, link_table
from isrlab.checker.fingerprint import xxh3_64 as _xxh3
from isrlab.checker.level_worker import (
    KEY_BYTES,
    ORBIT_CACHE_LIMIT,
    CheckOptions,
    _least_per_property,
    _LevelReport,
    _Worker,
)
from isrlab.checker.model import Model
from isrlab.checker.report import INIT_ACTION
from isrlab.checker.runstore import Record, RecordWriter, RunStore, parts_of

S = TypeVar("S")

_key = itemgetter(3)


class DiskWorker(_Worker[S]):
    """One partition of a search whose levels live in a run directory."""

    def __init__(
        self, model: Model[S], options: CheckOptions, index: int, workers: int,
        exchange: Path | None, store: RunStore, slots: Any,
    ) -> None:
        super().__init__(model, options, index, workers, exchange, None, slots)
        self.disk = store
        self.names: list[str] = []  # label by code (this worker's codes)
        self.codes: dict[str, int] = {}
        self.table: LinkTableLike | None = None  # the level being built (this worker's finds)
        self.writers: list[RecordWriter] = []
        self.seen_through = 0  # the last level whose states are all in ``seen``
        self.source: tuple[int, int] | None = None  # after a resume: (level, its workers)

    def _code(self, label: str) -> int:
        code = self.codes.get(label)
        if code is None:
            code = self.codes[label] = len(self.names)
            self.names.append(label)
        return code

    def _open_level(self, level: int) -> None:
        self.table = link_table(self.names, self.view is not None)
        self.writers = [RecordWriter(self.disk.build_path(level, self.index, owner))
                        for owner in range(self.workers)]

    def _close_level(self, level: int) -> None:
        """Seal this worker's finds of ``level``; with several workers, hand each owner the
        links of its states (the table is then no longer needed)."""
        for writer in self.writers:
            writer.close()
        self.writers = []
        if self.workers == 1:
            return
        assert self.table is not None
        fps_bytes, parents_bytes, codes_bytes = self.table.columns()
        self.table = None
        fps, parents, codes = array("Q"), array("Q"), array("I")
        fps.frombytes(fps_bytes)
        parents.frombytes(parents_bytes)
        codes.frombytes(codes_bytes)
        owners = [fp % self.workers for fp in fps]
        for owner in range(self.workers):
            mine = [o == owner for o in owners]
            part = (
                array("Q", (f for f, m in zip(fps, mine, strict=True) if m)).tobytes(),
                array("Q", (p for p, m in zip(parents, mine, strict=True) if m)).tobytes(),
                array("I", (c for c, m in zip(codes, mine, strict=True) if m)).tobytes(),
                self.names,
            )
            self.disk.write_pickle(self.disk.build_path(level, self.index, owner, "links"), part)

    # -- level 1 -------------------------------------------------------------------------------
    def start(self) -> None:
        """This worker's share of the initial states, written to the level being built."""
        self.report = _LevelReport()
        keyed = self.view is not None
        self._open_level(1)
        table = self.table
        assert table is not None
        code = self._code(INIT_ACTION)
        for number, fp, _state, encoding in self._own_initial_states():
            if table.offer(fp, 0, code):
                key = number.to_bytes(KEY_BYTES, "big") if keyed else b""
                self.writers[self.index].add(fp, 0, code, key, encoding)
        self._close_level(1)
        self.seen_through = 0

    def resume(self, commit: Mapping[str, Any]) -> None:
        """Load the fingerprints of the committed levels (written by any number of workers);
        the last level's states are read from its files when it is expanded."""
        level = int(commit["level"])
        parts = parts_of(commit)
        for lv in range(1, level + 1):
            for w in range(parts[lv - 1]):
                self.seen.update(self.disk.read_links(lv, w)[0])
        self.seen_through = level
        self.source = (level, parts[level - 1])
        self.pending_sometimes = [
            (i, h) for i, h in self.pending_sometimes if str(i) not in commit["sometimes"]
        ]

    # -- level k -> k + 1 ----------------------------------------------------------------------
    def _frontier(self, level: int) -> Iterator[tuple[int, bytes, S]]:
        """This worker's states of ``level`` in order (key order under a view): (fingerprint,
        discovery key, state), streamed from the run directory."""
        keyed = self.view is not None
        if self.source is not None and self.source[1] == self.workers:
            self.source = None  # written by as many workers: this worker's own file
        if self.source is None:
            records: Iterator[Record] = self.disk.frontier_records(level, self.index, keyed=keyed)
        else:
            former = self.source[1]
            workers, me = self.workers, self.index
            streams = [
                (r for r in self.disk.frontier_records(level, w, keyed=keyed)
                 if r[0] % workers == me)
                for w in range(former)
            ]
            records = heapq.merge(*streams, key=_key) if keyed and former > 1 else chain(*streams)
            self.source = None
        decode = None if self.identity else self.model.decode
        for fp, _parent, _code, key, encoding in records:
            yield fp, key, (encoding if decode is None else decode(encoding))  # type: ignore[misc]  # identity: S is bytes

    def _see(self, level: int) -> None:
        """Add the other workers' new states of ``level`` to ``seen`` (this worker's own were
        added when it merged them)."""
        if self.seen_through >= level:
            return
        for w in range(self.workers):
            if w != self.index:
                self.seen.update(self.disk.read_links(level, w)[0])
        self.seen_through = level

    def expand(self, level: int) -> None:
        """Expand this worker's states of ``level``: every successor not seen before is
        linked in the table and, the first time, written to its owner's build file."""
        self.report = report = _LevelReport()
        self._see(level)
        model, options, view = self.model, self.options, self.view
        next_states, encode = model.next_states, model.encode
        canonical = model.canonical if options.symmetry else None
        if len(self.orbit_of) > ORBIT_CACHE_LIMIT:
            self.orbit_of.clear()
        orbit_of, seen, identity = self.orbit_of, self.seen, self.identity
        self._open_level(level + 1)
        table, writers, workers = self.table, self.writers, self.workers
        assert table is not None
        offer, codes, code_of = table.offer, self.codes, self._code
        cov = report.cov_generated
        first = itemgetter(0)
        deadlock, dead_prop = options.check_deadlock, len(self.prop_names)
        slots, me = self.slots, self.index
        generated = tick = 0
        for pfp, pkey, state in self._frontier(level):
            successors = next_states(state)
            if not isinstance(successors, list):
                successors = list(successors)
            count_labels(cov, map(first, successors))
            generated += len(successors)
            if not successors and deadlock:
                report.violations.append((level, dead_prop, pfp))
            for index, (label, successor) in enumerate(successors):
                encoding: bytes | None = None
                if view is not None:
                    chosen = canonical(successor) if canonical is not None else successor
                    fp = _xxh3(view(chosen))
                elif canonical is None:
                    chosen = successor
                    encoding = successor if identity else encode(successor)
                    fp = _xxh3(encoding)
                else:
                    # The orbit cache maps a raw successor's fingerprint to its
                    # representative's: a hit is a state already seen or linked.
                    raw = _xxh3(successor if identity else encode(successor))
                    known = orbit_of.get(raw)
                    chosen = successor
                    if known is None:
                        chosen = canonical(successor)
                        encoding = chosen if identity else encode(chosen)  # type: ignore[assignment]  # identity: S is bytes
                        fp = orbit_of[raw] = _xxh3(encoding)  # type: ignore[arg-type]  # just assigned
                    else:
                        fp = known
                if fp in seen:
                    continue
                code = codes.get(label)
                if code is None:
                    code = code_of(label)
                if offer(fp, pfp, code):
                    if encoding is None:
                        if canonical is not None and chosen is successor and view is None:
                            chosen = canonical(successor)
                        encoding = chosen if identity else encode(chosen)  # type: ignore[assignment]  # identity: S is bytes
                    key = pkey + index.to_bytes(KEY_BYTES, "big") if view is not None else b""
                    writers[fp % workers].add(fp, pfp, code, key, encoding)  # type: ignore[arg-type]
            tick += 1
            if tick & 1023 == 0 and slots is not None:
                slots.update(me, tick, generated, len(table))
        report.generated = generated
        if slots is not None:
            slots.update(me, tick, generated, len(table))
        self._close_level(level + 1)

    # -- the merge -----------------------------------------------------------------------------
    def merge(self, level: int) -> _LevelReport:
        """Gather this worker's new states of ``level`` from every sender's build file (the
        smallest link wins; under a view the state of smallest key), check them and write
        them as this worker's part of the level."""
        disk, me = self.disk, self.index
        if self.workers == 1:
            table = self.table
            assert table is not None
            found: Iterator[Record] = self._claimed(
                table, disk.records(disk.build_path(level, 0, 0)))
        else:
            senders = range(self.workers)
            links = [disk.read_pickle(disk.build_path(level, s, me, "links")) for s in senders]
            maps = [array("I", map(self._code, names)) for *_cols, names in links]
            streams = [disk.records(disk.build_path(level, s, me)) for s in senders]
            if self.view is None:
                table = link_table(self.names, False)
                for (fps, parents, codes, _names), mapping in zip(links, maps, strict=True):
                    own = array("I")
                    own.frombytes(codes)
                    table.offer_columns(fps, parents,
                                        array("I", map(mapping.__getitem__, own)).tobytes())
                found = self._claimed(table, chain(*streams))
            else:
                table = link_table(self.names, True)
                tagged = [_recoded(stream, mapping)
                          for stream, mapping in zip(streams, maps, strict=True)]
                found = (r for r in heapq.merge(*tagged, key=_key) if table.offer(r[0], 0, 0))
        report = self._finish(level, found)
        self.table = None
        for path in disk.root.glob(f"build-{level:04d}-*-{me}.*"):
            path.unlink(missing_ok=True)
        return report

    @staticmethod
    def _claimed(table: LinkTableLike, records: Iterator[Record]) -> Iterator[Record]:
        """The records of states not handed out yet, each with its link from ``table``."""
        claim = table.claim
        for fp, _parent, _code, key, encoding in records:
            link = claim(fp)
            if link is not None:
                yield fp, link[0], link[1], key, encoding

    def _finish(self, level: int, found: Iterator[Record]) -> _LevelReport:
        """Check each new state, write its link and (within the boundary) the state to the
        level's frontier file; add the states to ``seen``."""
        report, disk = self.report, self.disk
        fps, parents = array("Q"), array("Q")
        distinct, names = report.cov_distinct, self.names
        within = self.model.within_boundary
        invariants, violations = self.invariants, report.violations
        decode = None if self.identity else self.model.decode
        writer = RecordWriter(disk.frontier_path(level, self.index))
        kept = 0
        try:
            for fp, parent, code, key, encoding in found:
                fps.append(fp)
                parents.append(parent)
                state: S = encoding if decode is None else decode(encoding)  # type: ignore[assignment]  # identity: S is bytes
                for index, holds in invariants:
                    if not holds(state):
                        violations.append((level, index, fp))
                if self.pending_sometimes:
                    self._check_sometimes(level, state)
                if within(state):
                    label = names[code]
                    distinct[label] = distinct.get(label, 0) + 1
                    writer.add(fp, 0, 0, key, encoding)
                    kept += 1
            self.seen.update(fps)
            disk.write_links(level, self.index, fps, parents)
            writer.close()
        except BaseException:
            writer.abort()  # a full disk included: no temporary file left behind
            raise
        report.new = report.frontier = kept
        report.violations = _least_per_property(violations)
        return report

    def parent_of(self, level: int, fp: int) -> int | None:
        raise RuntimeError("a run directory's links are read from the run directory")


def _recoded(records: Iterator[Record], mapping: array[int]) -> Iterator[Record]:
    """A sender's records with its label codes translated to this worker's."""
    for fp, parent, code, key, encoding in records:
        yield fp, parent, mapping[code], key, encoding


def make_worker(
    model: Model[S], options: CheckOptions, index: int, workers: int, exchange: Path | None,
    store: RunStore | None, slots: Any,
) -> _Worker[S]:
    """The worker of a search: on disk with a run directory, else in memory."""
    if store is None:
        return _Worker(model, options, index, workers, exchange, None, slots)
    return DiskWorker(model, options, index, workers, exchange, store, slots)

