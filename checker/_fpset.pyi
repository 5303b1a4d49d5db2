"""Types of the compiled fingerprint set (checker/_fpset.c)."""

from collections.abc import Callable, Iterable
from typing import Any

class FpSet:
    """A set of 64-bit fingerprints: ``fp in s``, ``s.update(array('Q'))``, ``len(s)``."""

    def __init__(self) -> None: ...
    def __contains__(self, fp: object, /) -> bool: ...
    def __len__(self) -> int: ...
    def update(self, fps: Iterable[int], /) -> None: ...

class LinkTable:
    """Fingerprint -> (parent fingerprint, label code), compactly (see checker/_fpset.c)."""

    def __init__(self, names: list[str], keep_first: bool, /) -> None: ...
    def offer(self, fp: int, parent: int, code: int, /) -> bool: ...
    def offer_columns(self, fps: bytes, parents: bytes, codes: bytes, /) -> None: ...
    def claim(self, fp: int, /) -> tuple[int, int] | None: ...
    def columns(self) -> tuple[bytes, bytes, bytes]: ...
    def __len__(self) -> int: ...

def scan(
    successors: list[tuple[str, Any]], pfp: int, seen: Any, links: dict[int, tuple[int, str]],
    candidates: list[Any], digest: Callable[[bytes], int] | None,
    orbit_of: dict[int, int] | None, canonical: Callable[[Any], Any] | None,
    encode: Callable[[Any], bytes] | None, encodings: list[bytes] | None, /,
) -> None: ...

def split(
    links: dict[int, tuple[int, str]], candidates: list[Any], workers: int, me: int, /,
) -> tuple[
    dict[int, tuple[int, str]], list[Any], list[tuple[bytes, bytes, list[str], list[Any]] | None],
    bytes,
]: ...
def merge(
    links: dict[int, tuple[int, str]], states: list[Any], fps: bytes, parents: bytes,
    labels: list[str], received: list[Any], /,
) -> None: ...

def expand(
    fps: list[int], states: list[Any], next_states: Callable[[Any], Any], cov: dict[str, int],
    seen: Any, links: dict[int, tuple[int, str]], candidates: list[Any],
    digest: Callable[[bytes], int] | None, orbit_of: dict[int, int] | None,
    canonical: Callable[[Any], Any] | None, encode: Callable[[Any], bytes] | None,
    encodings: list[bytes] | None, /,
) -> tuple[int, list[int]]: ...

def columns(
    parents: bytes, states: list[Any], next_states: Callable[[Any], Any],
    digest: Callable[[bytes], int] | None, orbit_of: dict[int, int] | None,
    canonical: Callable[[bytes], bytes] | None, /,
) -> tuple[bytes, bytes, bytes, list[str], bytes, bytes, bytes, bytes]: ...

def xxh3_64(data: bytes, /) -> int: ...

def failures(
    states: list[Any], predicates: tuple[Callable[[Any], object], ...], /,
) -> list[tuple[int, int]]: ...

def link_columns(
    links: dict[int, tuple[int, str]], cov: dict[str, int], inside: list[bool] | None, /,
) -> tuple[bytes, bytes, list[int]]: ...
