"""Stable state fingerprints: a 64-bit xxh3 digest of a model's canonical byte encoding.

The same bytes give the same fingerprint in every process, on every run and on every
machine (unlike Python's ``hash()``, which is salted per process), so fingerprints can
partition states across workers and Spark executors and be written to disk.
"""

from __future__ import annotations

import os
from array import array
from collections.abc import Iterable
from typing import Any, Protocol

import xxhash

try:  # the compiled fingerprint set and successor loop (checker/_fpset.c), optional
    from isrlab.checker._fpset import FpSet as _FpSet
    from isrlab.checker._fpset import LinkTable as _LinkTable
    from isrlab.checker._fpset import columns as _columns
    from isrlab.checker._fpset import expand as _expand
    from isrlab.checker._fpset import failures as _failures
    from isrlab.checker._fpset import link_columns as _link_columns
    from isrlab.checker._fpset import merge as _merge
    from isrlab.checker._fpset import scan as _scan
    from isrlab.checker._fpset import split as _split
except ImportError:  # not built: a Python set and bfs.py's own loops, the same answers
    _FpSet = None  # type: ignore[assignment, misc]
    _LinkTable = None  # type: ignore[assignment, misc]
    _scan = _split = _merge = _expand = _columns = None  # type: ignore[assignment]
    _failures = _link_columns = None  # type: ignore[assignment]

try:  # the search's levels in C on several threads (checker/_engine.c), optional
    from isrlab.checker._engine import Engine as _Engine
except ImportError:  # not built: bfs.py's own levels, the same answers
    _Engine = None  # type: ignore[assignment, misc]

COMPILED_SET = _FpSet
"""The compiled fingerprint set's class, or None when it is not built."""
COMPILED_SCAN = _scan
"""The compiled per-successor loop of the checker (``level_worker._Worker.expand``), or None."""

PURE_PYTHON_ENV = "ISRLAB_PURE_PYTHON"
"""Set to ``1`` to ignore every compiled module (spec/tla/_native.c, checker/_fpset.c): the
pure Python is the reference and gives identical results."""


def pure_python_forced() -> bool:
    """Whether ``ISRLAB_PURE_PYTHON`` turns the compiled modules off."""
    return os.environ.get(PURE_PYTHON_ENV, "") in ("1", "true", "yes")

_xxh3_64 = xxhash.xxh3_64_intdigest


def fingerprint(data: bytes) -> int:
    """The unsigned 64-bit fingerprint of a canonical state encoding."""
    return _xxh3_64(data)


xxh3_64 = _xxh3_64
"""``fingerprint`` without the Python call around it, for the checker's hot loops."""


class FingerprintSet(Protocol):
    """What the checker uses of a set of fingerprints."""

    def __contains__(self, fp: object, /) -> bool: ...

    def __len__(self) -> int: ...

    def update(self, fps: Iterable[int], /) -> None: ...


def fingerprint_set() -> FingerprintSet:
    """An empty set of fingerprints: the compiled one (8 bytes a slot) when built, else a
    Python set."""
    if _FpSet is not None and not pure_python_forced():
        return _FpSet()
    return set()


def compiled_scan() -> Any:
    """The compiled per-successor loop when built and not turned off, else None."""
    return None if pure_python_forced() else COMPILED_SCAN


def compiled_exchange() -> Any:
    """The compiled ``(split, merge)`` of the several-worker exchange when built and not
    turned off, else None."""
    if pure_python_forced() or _split is None:
        return None
    return (_split, _merge)


def compiled_columns() -> Any:
    """The compiled expansion of a Spark bucket into columns when built and not turned off,
    else None."""
    return None if pure_python_forced() else _columns


def compiled_expand() -> Any:
    """The compiled loop over a frontier slice (next_states, coverage, scan) when built and
    not turned off, else None."""
    return None if pure_python_forced() else _expand


def compiled_failures() -> Any:
    """The compiled check of a level's new states (every predicate on every state, state
    by state) when built and not turned off, else None."""
    return None if pure_python_forced() else _failures


def compiled_link_columns() -> Any:
    """The compiled columns of a level's links (fingerprints, parents, the frontier's
    fingerprints, labels counted) when built and not turned off, else None."""
    return None if pure_python_forced() else _link_columns


def compiled_engine() -> Any:
    """The compiled level engine's class (checker/_engine.c) when built and not turned off,
    else None."""
    return None if pure_python_forced() else _Engine


class LinkTableLike(Protocol):
    """What the on-disk level store (checker/diskbfs.py) uses of a table of links."""

    def offer(self, fp: int, parent: int, code: int, /) -> bool: ...

    def offer_columns(self, fps: bytes, parents: bytes, codes: bytes, /) -> None: ...

    def claim(self, fp: int, /) -> tuple[int, int] | None: ...

    def columns(self) -> tuple[bytes, bytes, bytes]: ...

    def __len__(self) -> int: ...


class PyLinkTable:
    """The Python version of ``checker/_fpset.c``'s ``LinkTable`` (used when it is not built):
    fingerprint -> (parent fingerprint, label code), in insertion order.  With
    ``keep_first`` a link never changes, otherwise the smallest (parent, label) wins, labels
    compared as the strings ``names[code]``; ``claim`` hands a row's link out once."""

    def __init__(self, names: list[str], keep_first: bool) -> None:
        self.names = names
        self.keep_first = keep_first
        self.rows: dict[int, list[int]] = {}  # fp -> [parent, code, claimed]

    def offer(self, fp: int, parent: int, code: int, /) -> bool:
        """Add ``fp``'s link, or improve it: whether ``fp`` is new."""
        row = self.rows.get(fp)
        if row is None:
            self.rows[fp] = [parent, code, 0]
            return True
        if not self.keep_first and (parent, self.names[code]) < (row[0], self.names[row[1]]):
            row[0], row[1] = parent, code
        return False

    def offer_columns(self, fps: bytes, parents: bytes, codes: bytes, /) -> None:
        """``offer`` every row of native uint64, uint64 and uint32 columns."""
        f, p, c = array("Q"), array("Q"), array("I")
        f.frombytes(fps)
        p.frombytes(parents)
        c.frombytes(codes)
        for row in zip(f, p, c, strict=True):
            self.offer(*row)

    def claim(self, fp: int, /) -> tuple[int, int] | None:
        """``fp``'s (parent, code) the first time it is asked for, else None."""
        row = self.rows.get(fp)
        if row is None or row[2]:
            return None
        row[2] = 1
        return row[0], row[1]

    def columns(self) -> tuple[bytes, bytes, bytes]:
        """(fingerprints, parents, codes) as native bytes, in insertion order."""
        return (array("Q", self.rows).tobytes(),
                array("Q", (r[0] for r in self.rows.values())).tobytes(),
                array("I", (r[1] for r in self.rows.values())).tobytes())

    def __len__(self) -> int:
        return len(self.rows)


def link_table(names: list[str], keep_first: bool) -> LinkTableLike:
    """An empty table of links (28 to 44 bytes a row when compiled, about 250 in Python)."""
    if _LinkTable is not None and not pure_python_forced():
        table: LinkTableLike = _LinkTable(names, keep_first)
        return table
    return PyLinkTable(names, keep_first)
