"""The ``kafka`` model's leaves as ints: records (``EpochCodec``) and sets of brokers (bit
masks over broker ids, ``members`` / ``mask_of``).

A state's leaves are ints and tuples of ints (``isrlab.spec.kafka.state``), so that states
hash, compare and encode as tuples; this module is how a record and a set of brokers become
ints.  ``isrlab.spec.kafka.state`` re-exports its names.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Final, NamedTuple


class EpochCodec(NamedTuple):
    """Records as ints: ``id * epochs + epoch`` (``epochs`` = max leader epoch + 1)."""

    epochs: int

    def code(self, record_id: int, epoch: int) -> int:
        """The int of record ``record_id`` written in ``epoch``."""
        return record_id * self.epochs + epoch

    def record_id(self, code: int) -> int:
        """The producer-visible id of a record."""
        return code // self.epochs

    def epoch(self, code: int) -> int:
        """The leader epoch a record was written in."""
        return code % self.epochs


def members(mask: int) -> tuple[int, ...]:
    """The broker ids of a bit mask, ascending."""
    if 0 <= mask < len(_MEMBERS):
        return _MEMBERS[mask]
    return _members(mask)


def _members(mask: int) -> tuple[int, ...]:
    out = []
    i = 0
    while mask:
        if mask & 1:
            out.append(i)
        mask >>= 1
        i += 1
    return tuple(out)


_MEMBERS: Final = tuple(_members(mask) for mask in range(1 << 6))
"""``members`` of every mask of the model's at most 6 brokers, computed once."""


def mask_of(ids: Iterable[int]) -> int:
    """The bit mask of an iterable of broker ids."""
    m = 0
    for i in ids:
        m |= 1 << i
    return m
