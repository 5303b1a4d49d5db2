"""``Partition.makeLeader``, ``Partition.makeFollower`` and the leader's high watermark.

Each function takes a ``Partition`` (one broker's view) and returns a new one inside a
``Result``: ``Failure(InvalidInput)`` for ill-formed arguments, ``Success`` of a small
outcome record otherwise.  Protocol outcomes (not the leader, leader unchanged, HW did not
move) are fields of the outcome, never failures.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Protocol

from returns.result import Result

from isrlab.core import truncation
from isrlab.core.errors import InvalidInput, Problem, reject
from isrlab.core.state import (
    UNKNOWN_OFFSET,
    Partition,
    PartitionState,
    RemoteReplica,
    check_partition,
    check_partition_state,
    is_leader,
    with_high_watermark,
    with_log,
    with_role,
)
from isrlab.core.truncation import Log


class TruncationRule(Protocol):
    """Where a new follower truncates: ``(follower_log, follower_hw, leader_log) -> offset``.

    The result is the new log end offset asked for; ``make_follower`` clamps it to the
    local log (Kafka's ``truncateTo`` past the end is a no-op).  Shortcut: the leader's log
    is an argument, so the OffsetForLeaderEpoch round trip of KIP-101/279 is atomic (as in
    the TLA+ specification).
    """

    def __call__(self, follower_log: Log, follower_hw: int, leader_log: Log) -> int: ...


def truncate_to_high_watermark(follower_log: Log, follower_hw: int, leader_log: Log) -> int:
    """The pre-0.11 rule (before KIP-101): ``logManager.truncateTo(replica.highWatermark)``."""
    return truncation.truncate_to_high_watermark_offset(follower_hw)


def truncate_by_leader_epoch_kip101(follower_log: Log, follower_hw: int, leader_log: Log) -> int:
    """KIP-101 as Kafka 0.11 to 1.1 run it: the leader's end offset of the follower's epoch.

    ``LeaderEpochFileCache.endOffsetFor`` answers ``UNDEFINED_EPOCH_OFFSET`` for an epoch
    the leader has no larger one after, or one older than its first epoch, and
    ``ReplicaFetcherThread.maybeTruncate`` then truncates to the follower's HW.  (The TLA+
    module's variant, truncating to 0 before the leader's first epoch, is
    ``isrlab.core.truncation.kip101_truncation_offset``'s default.)
    """
    return truncation.kip101_truncation_offset(
        leader_log, follower_log, follower_hw, undefined_before_first_epoch=True
    )


def truncate_by_leader_epoch_kip279(follower_log: Log, follower_hw: int, leader_log: Log) -> int:
    """KIP-279 as Kafka 2.1 runs it: one past the last offset where both logs agree.

    The fixed point of the KIP-279 exchange (Kafka 2.0) once KAFKA-7415 (2.1) has the
    leader record its own epoch at ``makeLeader`` and answer an epoch older than its first
    with that epoch's start offset: no ``UNDEFINED_EPOCH_OFFSET`` answer remains for a
    follower with records.  Kafka 2.0 still answers ``UNDEFINED_EPOCH_OFFSET`` when the
    follower's latest epoch is older than the leader's first or newer than the leader's
    latest record (the follower then truncates to its HW): ``"kip279-2.0"``.
    """
    return truncation.kip279_truncation_offset(leader_log, follower_log)


def truncate_by_leader_epoch_kip279_2_0(
    follower_log: Log, follower_hw: int, leader_log: Log
) -> int:
    """KIP-279 as Kafka 2.0 runs it: the HW when the leader answers ``UNDEFINED_EPOCH_OFFSET``.

    ``isrlab.core.truncation.kip279_2_0_truncation_offset``: a follower whose latest epoch the
    leader's records do not span (older than its first, newer than its latest, or an empty
    leader) truncates to its HW; KAFKA-7415 (2.1) removed those answers.
    """
    return truncation.kip279_2_0_truncation_offset(leader_log, follower_log, follower_hw)


@dataclass(frozen=True, slots=True)
class HwUpdate:
    """Result of ``maybe_increment_leader_hw``: the partition and whether its HW rose."""

    partition: Partition
    incremented: bool


@dataclass(frozen=True, slots=True)
class MakeLeaderResult:
    """Result of ``make_leader``: the partition, ``is_new_leader`` and whether HW rose."""

    partition: Partition
    is_new_leader: bool
    hw_incremented: bool


@dataclass(frozen=True, slots=True)
class MakeFollowerResult:
    """Result of ``make_follower``.

    ``leader_changed`` is Kafka's return value; ``truncated_to`` the new LEO when the log
    was truncated (``None`` when the leader did not change and nothing was truncated);
    ``fetch_offset`` where the fetcher starts (the local LEO, as pre-KIP-101 Kafka).
    """

    partition: Partition
    leader_changed: bool
    truncated_to: int | None
    fetch_offset: int


# ---------------------------------------------------------------------------------------
# High watermark
# ---------------------------------------------------------------------------------------


def isr_log_end_offsets(
    partition: Partition, now_ms: int = 0, hw_lag_ms: int | None = None,
    ineligible: frozenset[int] = frozenset(),
) -> tuple[int, ...]:
    """The LEOs the leader's HW is the minimum of (unknown remotes count as -1).

    The ISR members' LEOs (the pre-0.10.2 rule); with ``hw_lag_ms`` (KAFKA-4485, Kafka
    0.10.2+: ``replicaLagTimeMaxMs``) also those of the assigned replicas caught up within
    that lag at ``now_ms`` (``now_ms - last_caught_up_time_ms <= hw_lag_ms``), so a
    follower catching up outside the ISR holds the HW back until it reaches it and can join.
    A caught-up replica outside the ISR in ``ineligible`` does not count (KAFKA-15021, Kafka
    3.6+: ``shouldWaitForReplicaToJoinIsr`` also asks ``isReplicaIsrEligible``, so a fenced
    or shutting-down broker, which will not join, no longer holds the HW); the caller
    decides who is ineligible (the metadata image is not partition state).
    """
    local = partition.local_broker_id
    leos = [len(partition.log)] if local in partition.isr else []
    leos.extend(
        r.log_end_offset
        for r in partition.remotes
        if r.broker_id in partition.isr
        or (hw_lag_ms is not None and r.broker_id not in ineligible
            and now_ms - r.last_caught_up_time_ms <= hw_lag_ms)
    )
    return tuple(leos)


def raise_leader_hw(
    partition: Partition, now_ms: int = 0, hw_lag_ms: int | None = None,
    ineligible: frozenset[int] = frozenset(),
) -> HwUpdate:
    """The unchecked core of ``maybe_increment_leader_hw`` for an already-checked leader.

    For callers inside ``core`` (and hot model loops) that have validated the partition.
    """
    leos = isr_log_end_offsets(partition, now_ms, hw_lag_ms, ineligible)
    new_hw = min(leos) if leos else partition.high_watermark
    if new_hw > partition.high_watermark:
        return HwUpdate(with_high_watermark(partition, new_hw), True)
    return HwUpdate(partition, False)


def maybe_increment_leader_hw(
    partition: Partition, now_ms: int = 0, hw_lag_ms: int | None = None,
    ineligible: frozenset[int] = frozenset(),
) -> Result[HwUpdate, InvalidInput]:
    """``Partition.maybeIncrementLeaderHW``: HW := min LEO over the ISR, if that is larger.

    The high watermark only moves forward: a smaller minimum (a follower just added with
    an unknown LEO) leaves it unchanged.  By default only ISR members count (Kafka
    <= 0.10.1); with ``hw_lag_ms`` (KAFKA-4485, Kafka 0.10.2 to 2.x)
    the assigned replicas caught up within ``hw_lag_ms`` at ``now_ms`` count too
    (``isr_log_end_offsets``), except those in ``ineligible`` (KAFKA-15021, 3.6+: not ISR
    eligible).  On a non-leader nothing changes.
    """
    if now_ms < 0 or (hw_lag_ms is not None and hw_lag_ms < 0):
        return reject(Problem.NEGATIVE_VALUE, f"now {now_ms}, lag {hw_lag_ms}")
    return check_partition(partition).map(
        lambda p: raise_leader_hw(p, now_ms, hw_lag_ms, ineligible)
        if is_leader(p) else HwUpdate(p, False)
    )


def follower_high_watermark(leader_high_watermark: int, follower_log_end_offset: int) -> int:
    """A follower's HW: ``min(leader HW it last saw, its own LEO)``.

    ``ReplicaFetcherThread.processPartitionData``; shortcut: the result is not forced to
    be monotonic, exactly as in the old code (a follower that truncated may lower its HW).
    """
    return min(leader_high_watermark, follower_log_end_offset)


# ---------------------------------------------------------------------------------------
# makeLeader
# ---------------------------------------------------------------------------------------


def _check_role_change(
    partition: Partition, state: PartitionState, to_leader: bool
) -> Result[Partition, InvalidInput]:
    local = partition.local_broker_id
    if local not in state.replicas:
        return reject(Problem.NOT_A_REPLICA, f"broker {local} not in {list(state.replicas)}")
    if to_leader != (state.leader == local):
        role = "make_leader" if to_leader else "make_follower"
        return reject(Problem.WRONG_ROLE, f"{role} on broker {local} for leader {state.leader}")
    if not to_leader and state.leader not in state.replicas:
        return reject(Problem.NOT_A_REPLICA, f"leader {state.leader} not in the replicas")
    return check_partition(partition)


def _reset_remote(
    old: RemoteReplica | None, broker_id: int, in_isr: bool, leader_leo: int, now_ms: int,
    reset: bool,
) -> RemoteReplica:
    if reset:
        # resetLastCaughtUpTime, then updateLogReadResult(UnknownLogReadResult): every
        # remote LEO, log start and last fetch become unknown (-1).
        return RemoteReplica(broker_id, UNKNOWN_OFFSET, UNKNOWN_OFFSET,
                             now_ms if in_isr else 0, UNKNOWN_OFFSET, -1)
    if old is None:
        return RemoteReplica(broker_id, UNKNOWN_OFFSET, UNKNOWN_OFFSET, now_ms if in_isr else 0,
                             leader_leo, now_ms)
    return RemoteReplica(old.broker_id, old.log_end_offset, old.log_start_offset,
                         now_ms if in_isr else 0, leader_leo, now_ms)


def make_leader_unchecked(
    p: Partition, state: PartitionState, now_ms: int, hw_lag_ms: int | None,
    reset_on_epoch: bool,
) -> MakeLeaderResult:
    """The unchecked core of ``make_leader``, for arguments ``make_leader`` would accept.

    For callers inside ``core`` that have checked them already
    (``isrlab.core.replica_manager.become_leader_or_follower`` checks a whole request first).
    """
    local = p.local_broker_id
    is_new_leader = p.leader != local
    reset = is_new_leader or (reset_on_epoch and p.leader_epoch != state.leader_epoch)
    old = {r.broker_id: r for r in p.remotes}
    leo = len(p.log)
    remotes = tuple(
        _reset_remote(old.get(b), b, b in state.isr, leo, now_ms, reset)
        for b in sorted(state.replicas)
        if b != local
    )
    led = with_role(p, state, local, frozenset(state.isr), remotes)
    hw = raise_leader_hw(led, now_ms, hw_lag_ms)
    return MakeLeaderResult(hw.partition, is_new_leader, hw.incremented)


def make_leader(
    partition: Partition, state: PartitionState, now_ms: int, hw_lag_ms: int | None = None,
    reset_on_epoch: bool = False,
) -> Result[MakeLeaderResult, InvalidInput]:
    """``Partition.makeLeader``: adopt the controller's decision with this broker as leader.

    Adopts controllerEpoch, AR (new remotes created, removed ones dropped), ISR,
    leaderEpoch and zkVersion; ``is_new_leader`` is whether this broker was not already the
    leader.  Every other assigned replica gets ``last_caught_up_time_ms = now`` if in the
    ISR, else 0, and its previous fetch is set to (leader LEO, now)
    (``resetLastCaughtUpTime``, Kafka 0.10.2+).  A new leader then resets every remote
    LEO, log start and previous fetch to unknown (-1: ``UnknownLogReadResult``), so a
    follower counts for the HW only after it fetches again and its first fetch cannot
    count as caught up by the previous-fetch rule.  Then ``maybe_increment_leader_hw``
    (``hw_lag_ms``: KAFKA-4485's caught-up replicas count too).  Shortcuts: no
    ``LogOffsetMetadata`` conversion (Kafka's ``convertHWToLocalOffsetMetadata`` of an HW
    above the LEO, possible after a truncation, cannot happen: see ``truncate_local_log``);
    the caller completes delayed requests when ``hw_incremented``.

    ``reset_on_epoch`` is a fix no release has (docs/findings/stale-leo-failover.md): the
    remote replicas are also reset when this broker already led but the leader epoch
    changed, so that a leader that skipped an epoch (a LeaderAndIsr lost across a
    controller failover) never counts a follower LEO recorded in an earlier epoch; Kafka
    (``isNewLeader`` at 2.1, ``resetReplicaState(..., isNewLeader, ...)`` at 3.x) resets
    only on a leadership change (``reset_on_epoch=False``).  ``is_new_leader`` stays
    Kafka's either way.
    """
    if now_ms < 0 or (hw_lag_ms is not None and hw_lag_ms < 0):
        return reject(Problem.NEGATIVE_VALUE, f"now_ms {now_ms}, lag {hw_lag_ms}")
    return (
        check_partition_state(state)
        .bind(lambda s: _check_role_change(partition, s, to_leader=True))
        .map(lambda p: make_leader_unchecked(p, state, now_ms, hw_lag_ms, reset_on_epoch))
    )


# ---------------------------------------------------------------------------------------
# makeFollower
# ---------------------------------------------------------------------------------------


def truncate_local_log(partition: Partition, offset: int) -> Partition:
    """``Log.truncateTo(offset)``: cut the log; HW, log start and open transactions follow.

    Past the end it is a no-op (as in Kafka).  The HW is capped at the new LEO, the log
    start offset too (Kafka's ``truncateFullyAndStartAt`` below the start is folded into
    this), and transactions that began at or after the cut are forgotten.  Shortcut: Kafka
    0.10.2 to 2.1 keep the follower's HW in ``Replica``, which ``Log.truncateTo`` does not
    touch, so the HW stays above the new LEO until the next fetch response sets it to
    ``min(leader HW, LEO)``; here it is capped at once (``HW <= LEO`` is an invariant of
    ``Partition``).  The two differ only until that response, and only where the old HW is
    read: the HW checkpoint (Kafka caps it at the LEO on restart, as here) and a
    ``makeLeader`` in between (Kafka's ``convertHWToLocalOffsetMetadata`` then makes the HW
    unknown until the followers fetch, here it is the capped value).
    """
    offset = max(0, offset)
    if offset >= len(partition.log):
        return partition
    return with_log(
        partition,
        truncation.truncate_to(partition.log, offset),
        min(partition.high_watermark, offset),
        min(partition.log_start_offset, offset),
        frozenset(o for o in partition.open_txn_first_offsets if o < offset),
    )


def make_follower_unchecked(
    p: Partition, state: PartitionState, rule: TruncationRule, leader_log: Log
) -> MakeFollowerResult:
    """The unchecked core of ``make_follower``, for arguments ``make_follower`` would accept.

    For callers inside ``core`` that have checked them already
    (``isrlab.core.replica_manager.become_leader_or_follower`` checks a whole request first).
    """
    leader_changed = p.leader != state.leader
    follower = with_role(p, state, state.leader, frozenset(), ())
    if not leader_changed:
        return MakeFollowerResult(follower, False, None, len(follower.log))
    offset = min(max(0, rule(p.log, p.high_watermark, leader_log)), len(p.log))
    truncated = truncate_local_log(follower, offset)
    return MakeFollowerResult(truncated, True, offset, len(truncated.log))


def make_follower(
    partition: Partition,
    state: PartitionState,
    rule: TruncationRule = truncate_to_high_watermark,
    leader_log: Log = (),
) -> Result[MakeFollowerResult, InvalidInput]:
    """``Partition.makeFollower`` plus ``makeFollowers``' truncation for a changed leader.

    Adopts controllerEpoch, AR, leaderEpoch, zkVersion, clears the ISR (only leaders track
    it) and the remote replicas, and sets the leader; ``leader_changed`` is Kafka's return
    value.  When the leader changed the local log is truncated by ``rule``: Kafka 0.10's
    older code truncates to the local HW (``truncate_to_high_watermark``), KIP-101/279 by
    leader epoch against ``leader_log``.  Shortcut: the truncation happens here, at once,
    rather than in the fetcher thread's first round.
    """
    return (
        check_partition_state(state)
        .bind(lambda s: _check_role_change(partition, s, to_leader=False))
        .map(lambda p: make_follower_unchecked(p, state, rule, leader_log))
    )


def create_log_if_not_exists(partition: Partition) -> Partition:
    """``Partition.createLogIfNotExists`` / ``getOrCreateReplica``: the local log exists.

    Used when a follower's new leader is not alive: the log is created (so its HW is
    checkpointed, KAFKA-1647) but nothing else changes.  Total: no precondition.
    """
    return partition if partition.log_created else replace(partition, log_created=True)

