"""Stable state fingerprints: a 64-bit xxh3 digest of a model's canonical byte encoding.

The same bytes give the same fingerprint in every process, on every run and on every
machine (unlike Python's ``hash()``, which is salted per process), so fingerprints can
partition states across workers and Spark executors and be written to disk.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from typing import Any, Protocol

import xxhash

try:  # the compiled fingerprint set and successor loop (checker/_fpset.c), optional
    from isrlab.checker._fpset import FpSet as _FpSet
    from isrlab.checker._fpset import columns as _columns
    from isrlab.checker._fpset import expand as _expand
    from isrlab.checker._fpset import merge as _merge
    from isrlab.checker._fpset import scan as _scan
    from isrlab.checker._fpset import split as _split
except ImportError:  # not built: a Python set and bfs.py's own loops, the same answers
    _FpSet = None  # type: ignore[assignment, misc]
    _scan = _split = _merge = _expand = _columns = None  # type: ignore[assignment]

try:  # the search's levels in C on several threads (checker/_engine.c), optional
    from isrlab.checker._engine import Engine as _Engine
except ImportError:  # not built: bfs.py's own levels, the same answers
    _Engine = None  # type: ignore[assignment, misc]

COMPILED_SET = _FpSet
"""The compiled fingerprint set's class, or None when it is not built."""
COMPILED_SCAN = _scan
"""The compiled per-successor loop of the checker (``bfs._Worker.expand``), or None."""

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


def compiled_engine() -> Any:
    """The compiled level engine's class (checker/_engine.c) when built and not turned off,
    else None."""
    return None if pure_python_forced() else _Engine
