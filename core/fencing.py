"""Leader-epoch fencing of follower fetches: none, KIP-320's first design, KIP-320 (2.1).

A fetch from a follower that still believes in an older (or a newer) leader epoch is the
root of several divergence and data-loss stories.  Three behaviours:

* ``NONE`` (before 2.1): the fetch carries no epoch; the leader serves it and counts the
  fetch offset for the HW and the ISR whatever the follower believes;
* ``FIRST_DESIGN`` (the first design discussed for KIP-320): the follower sends the epoch
  it expects; the leader records the fetch (it counts for the HW and the ISR) *before*
  comparing epochs, then answers a mismatch with an error and no records; the follower
  truncates lazily, on that error (an OffsetsForLeaderEpoch round trip);
* ``FINAL`` (KIP-320 as shipped, Kafka 2.1; ``Partition.checkCurrentLeaderEpoch`` /
  ``localLogWithEpochOrException``): the leader validates ``current_leader_epoch`` first --
  older: ``FENCED_LEADER_EPOCH``, newer: ``UNKNOWN_LEADER_EPOCH`` -- and a refused fetch
  changes nothing on the leader; the follower truncated when it became follower.

Shortcut: the decision is separate from the read and the bookkeeping (``isrlab.core.isr``), so a
model composes them: ``fetch_decision`` says what the leader does, ``fenced_read`` turns
a read into the refused one.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from enum import Enum, unique

from returns.result import Result

from isrlab.core.errors import Errors, InvalidInput
from isrlab.core.isr import IsrUpdate, LogReadResult, update_follower_fetch
from isrlab.core.state import Partition


@unique
class FetchFencing(Enum):
    """Which fetch-fencing design a leader and its followers follow (see the module)."""

    NONE = "none"
    FIRST_DESIGN = "first-design"
    FINAL = "final"


def check_current_leader_epoch(leader_epoch: int, requested_epoch: int | None) -> Errors:
    """``Partition.checkCurrentLeaderEpoch`` (2.1+): the request's epoch against the leader's.

    ``None`` (an older client that sends no epoch) passes; an older epoch is
    ``FENCED_LEADER_EPOCH``, a newer one ``UNKNOWN_LEADER_EPOCH``.  Total.
    """
    if requested_epoch is None or requested_epoch == leader_epoch:
        return Errors.NONE
    if requested_epoch < leader_epoch:
        return Errors.FENCED_LEADER_EPOCH
    return Errors.UNKNOWN_LEADER_EPOCH


@dataclass(frozen=True, slots=True)
class FetchDecision:
    """What the leader does with one follower fetch.

    ``record_fetch``: the fetch offset updates the follower's state on the leader (counts
    for the HW and the ISR); ``error``: the answer's error (``NONE``: records are served);
    ``follower_truncates``: the follower answers the error by truncating (KIP-320's first
    design) rather than waiting for a LeaderAndIsr / metadata update.
    """

    record_fetch: bool
    error: Errors
    follower_truncates: bool


def fetch_decision(
    fencing: FetchFencing, leader_epoch: int, follower_epoch: int
) -> FetchDecision:
    """The leader's decision on a fetch from a follower in ``follower_epoch``.  Total.

    ``NONE``: always served and recorded.  ``FIRST_DESIGN``: always recorded; a mismatch
    answered with the error and the follower truncates.  ``FINAL``: a mismatch is refused
    before anything is recorded.
    """
    if fencing is FetchFencing.NONE:
        return FetchDecision(True, Errors.NONE, False)
    error = check_current_leader_epoch(leader_epoch, follower_epoch)
    if fencing is FetchFencing.FIRST_DESIGN:
        return FetchDecision(True, error, error is not Errors.NONE)
    return FetchDecision(error is Errors.NONE, error, False)


def fenced_read(read: LogReadResult, decision: FetchDecision) -> LogReadResult:
    """The read the follower receives: no records and the error when the fetch is refused.

    Total; an accepted fetch is returned unchanged.  (Feeding a refused read to
    ``isrlab.core.isr.update_follower_fetch`` records nothing, which is ``FINAL``'s rule; for
    ``FIRST_DESIGN`` record the original read, then answer with this one.)
    """
    if decision.error is Errors.NONE:
        return read
    return replace(read, records=(), error=decision.error)


@dataclass(frozen=True, slots=True)
class FencedFetch:
    """Outcome of ``update_follower_fetch_fenced``: the leader's step, the answer, and
    whether the follower truncates on it."""

    update: IsrUpdate
    response: LogReadResult
    follower_truncates: bool


def update_follower_fetch_fenced(
    partition: Partition, replica_id: int, read: LogReadResult, follower_epoch: int,
    fencing: FetchFencing,
) -> Result[FencedFetch, InvalidInput]:
    """A follower fetch on the leader under ``fencing``: ``fetch_decision`` composed with
    ``isrlab.core.isr.update_follower_fetch``.

    A recorded fetch goes through ``update_follower_fetch`` (ISR expansion, HW); a refused
    one (``FINAL``) is fed to it as the failed read, which records nothing.  The follower
    receives ``fenced_read``.  Shortcut: the leader's epoch is ``partition.leader_epoch``
    (Kafka reads it under the same lock).
    """
    decision = fetch_decision(fencing, partition.leader_epoch, follower_epoch)
    answer = fenced_read(read, decision)
    recorded = read if decision.record_fetch else answer
    return update_follower_fetch(partition, replica_id, recorded).map(
        lambda update: FencedFetch(update, answer, decision.follower_truncates))
