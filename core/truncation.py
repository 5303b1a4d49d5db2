"""Where a follower truncates its log when it starts following a new leader (or epoch).

Kafka changed this rule three times, and each change closed a way to lose or diverge
committed data.  Each rule here is a pure, total function on valid logs:

* a *log* is a tuple of ``Record``; offset ``o`` holds ``log[o]``, the log end offset (LEO)
  is ``len(log)``;
* a ``Record`` carries the producer-visible ``id`` of the write and the leader ``epoch`` in
  which the leader appended it (the ``partitionLeaderEpoch`` of Kafka's record batches).

The functions return the *truncation offset* (the new log end offset the follower asks for).
Whether an offset beyond the follower's LEO is clamped (Kafka: ``truncateTo`` is a no-op past
the end) or disables the step (the TLA+ specification's ``TruncateTo`` guard) is the
caller's business: ``truncate_to`` below clamps, the ``tla-*`` models check the guard.

Modelling shortcut common to all rules: the follower reads the leader's log directly (the
OffsetForLeaderEpoch round trip is atomic), as in the TLA+ specification.
"""

from __future__ import annotations

from typing import NamedTuple


class Record(NamedTuple):
    """One log entry: the write's unique ``id`` and the leader ``epoch`` it was written in."""

    id: int
    epoch: int


Log = tuple[Record, ...]

NO_EPOCH = -1
"""The epoch of a replica that has never received a LeaderAndIsr request (TLA+ ``Nil``)."""


def truncate_to(log: Log, offset: int) -> Log:
    """The log cut at ``offset`` (Kafka's ``Log.truncateTo``): offsets past the end are a no-op."""
    return log[:offset]


def latest_epoch(log: Log) -> int:
    """The epoch of the last record, ``NO_EPOCH`` if empty (``LeaderEpochCache.latestEpoch``)."""
    return log[-1].epoch if log else NO_EPOCH


def truncate_to_high_watermark_offset(follower_hw: int) -> int:
    """Pre-KIP-101 Kafka: a replica becoming follower truncates to its own high watermark.

    ``ReplicaManager.makeFollowers`` before 0.11 called ``truncateTo(hw)`` on every partition.
    The local HW may lag the leader's, so committed records above it are dropped here, and a
    quick re-election of this replica then loses them (KIP-101 scenario 1).
    """
    return follower_hw


def offset_for_leader_epoch(leader_log: Log, epoch: int) -> int | None:
    """KIP-101's OffsetForLeaderEpoch answer from the leader's log, ``None`` if undefined.

    The leader returns the end offset of ``epoch`` in its log: its LEO when ``epoch`` is its
    latest epoch, otherwise the start offset of the first epoch larger than ``epoch``.  With
    an empty log, or no larger epoch (the follower has an epoch the leader never saw), the
    answer is ``UNDEFINED_EPOCH_OFFSET``: ``None`` here.
    """
    if not leader_log:
        return None
    if leader_log[-1].epoch == epoch:
        return len(leader_log)
    for offset, record in enumerate(leader_log):
        if record.epoch > epoch:
            return offset
    return None


def before_first_epoch(leader_log: Log, epoch: int) -> bool:
    """Whether ``epoch`` is older than the leader's first epoch (its first record's)."""
    return bool(leader_log) and epoch < leader_log[0].epoch


def kip101_truncation_offset(
    leader_log: Log, follower_log: Log, follower_hw: int,
    undefined_before_first_epoch: bool = False,
) -> int:
    """KIP-101 (Kafka 0.11): truncate to the leader's end offset of the follower's latest epoch.

    An empty follower truncates to 0.  Otherwise the follower sends the epoch of its last
    record in an OffsetForLeaderEpoch request; when the leader's answer is undefined it falls
    back to the pre-KIP-101 rule (its own high watermark).  Note that the result may exceed
    the follower's LEO (the leader knows more of that epoch than the follower has).

    By default an epoch older than the leader's first one is answered with offset 0 (the
    start of the first larger epoch), as the public TLA+ module does.  Kafka 0.11 to 2.0's
    ``LeaderEpochFileCache.endOffsetFor`` answers ``UNDEFINED_EPOCH_OFFSET`` there
    (``requestedEpoch < epochs.head.epoch``) and ``ReplicaFetcherThread.maybeTruncate``
    falls back to the HW: ``undefined_before_first_epoch=True``.  (Kafka 2.1's KAFKA-7415
    answers the first epoch's start offset again.)
    """
    if not follower_log:
        return 0
    epoch = follower_log[-1].epoch
    if undefined_before_first_epoch and before_first_epoch(leader_log, epoch):
        return follower_hw
    answer = offset_for_leader_epoch(leader_log, epoch)
    return follower_hw if answer is None else answer


def largest_epoch_at_most(log: Log, epoch: int) -> tuple[int, int]:
    """KIP-279's OffsetForLeaderEpoch v1 answer: ``(largest epoch <= epoch, its end offset)``.

    The leader looks up the largest epoch in its log not above the requested one and returns
    it with that epoch's end offset, so a follower whose latest epoch the leader never had
    learns where their histories may still agree.  ``(NO_EPOCH, 0)`` when there is none.
    """
    best = NO_EPOCH
    end = 0
    for offset, record in enumerate(log):
        if record.epoch <= epoch:
            if record.epoch >= best:
                best = record.epoch
                end = offset + 1
        else:
            break
    return best, end


def kip279_2_0_truncation_offset(leader_log: Log, follower_log: Log, follower_hw: int) -> int:
    """KIP-279 as Kafka 2.0 runs it, before KAFKA-7415 (2.1).

    The leader's epoch cache holds only the epochs of its records, and
    ``LeaderEpochFileCache.endOffsetFor`` answers ``UNDEFINED_EPOCH_OFFSET`` for a follower
    epoch older than the leader's first or newer than its latest (no larger epoch), or for
    an empty leader; ``AbstractFetcherThread.getOffsetTruncationState`` then truncates to
    the initial fetch offset, the follower's HW.  Otherwise the KIP-279 exchange's fixed
    point, ``kip279_truncation_offset``.  An empty follower truncates to 0.
    """
    if not follower_log:
        return 0
    epoch = follower_log[-1].epoch
    if not leader_log or not leader_log[0].epoch <= epoch <= leader_log[-1].epoch:
        return follower_hw
    return kip279_truncation_offset(leader_log, follower_log)


def kip279_truncation_offset(leader_log: Log, follower_log: Log) -> int:
    """KIP-279 (Kafka 2.0): truncate right after the largest offset where both logs agree.

    Iterating the KIP-279 exchange (the follower asks with its latest epoch, the leader
    answers with the largest epoch <= it and that epoch's end offset, the follower retries
    with smaller epochs) ends at the last offset whose record (id and epoch) the two logs
    share.  The TLA+ specification states the fixed point directly: one past the largest
    offset present in both logs with the same record, 0 if none (or if the leader is
    empty).  This closes the divergence after fast consecutive leader changes.
    """
    if not leader_log:
        return 0
    for offset in range(min(len(leader_log), len(follower_log)) - 1, -1, -1):
        if leader_log[offset] == follower_log[offset]:
            return offset + 1
    return 0
