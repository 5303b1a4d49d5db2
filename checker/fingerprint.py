"""Stable state fingerprints: a 64-bit xxh3 digest of a model's canonical byte encoding.

The same bytes give the same fingerprint in every process, on every run and on every
machine (unlike Python's ``hash()``, which is salted per process), so fingerprints can
partition states across workers and Spark executors and be written to disk.
"""

from __future__ import annotations

import xxhash

_xxh3_64 = xxhash.xxh3_64_intdigest


def fingerprint(data: bytes) -> int:
    """The unsigned 64-bit fingerprint of a canonical state encoding."""
    return _xxh3_64(data)


xxh3_64 = _xxh3_64
"""``fingerprint`` without the Python call around it, for the checker's hot loops."""
