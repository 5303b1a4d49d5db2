"""Types of the compiled successor function of the tla-* models (spec/tla/_native.c)."""

from collections.abc import Callable, Sequence
from typing import Any

ABI: int

class Native:
    """The compiled Next of one TlaModel."""

    def __init__(
        self, constants: tuple[int, int, int, int, int, int, int, int, int, int],
        bases: tuple[int, ...], fetched_hw: bytes, truncated: Callable[[Any, bytes], bytes],
        presuming: Callable[[bytes], Any],
        actions: Sequence[tuple[int, Any, Any, Any, Any, bool, int]],
        permutations: tuple[tuple[int, ...], ...], tables: tuple[bytes, ...],
    ) -> None: ...
    def next_states(self, state: bytes, /) -> list[tuple[str, bytes]]: ...
    def weak_isr(self, state: bytes, /) -> bool: ...
    def strong_isr(self, state: bytes, /) -> bool: ...
    def canonical(self, state: bytes, /) -> bytes: ...
    def successors(self, invariants: tuple[int, ...] | None, /) -> object | None: ...
