"""The leader's follower bookkeeping: fetches, ISR expansion and ISR shrink.

Mirrors ``ReplicaManager.readFromLocalLog`` / ``updateFollowerLogReadResults``,
``Replica.updateLogReadResult``, ``Partition.maybeExpandIsr``,
``Partition.getOutOfSyncReplicas`` and ``Partition.maybeShrinkIsr``.

Every ISR change bumps the partition's ``zk_version`` and reports the ``LeaderAndIsr`` it
writes to ZooKeeper in ``IsrUpdate.zk_write``.  Shortcut: the conditional ZooKeeper write
is assumed to succeed; a model that wants it to fail (the controller moved the node on)
compares ``zk_write.zk_version - 1`` with the node's version and keeps the old partition.
"""

from __future__ import annotations

from dataclasses import dataclass

from returns.result import Failure, Result, Success

from isrlab.core.errors import Errors, InvalidInput, Problem, reject
from isrlab.core.partition import raise_leader_hw
from isrlab.core.state import (
    UNKNOWN_OFFSET,
    LeaderAndIsr,
    Partition,
    RemoteReplica,
    is_leader,
    log_end_offset,
    partition_problem,
    with_isr,
    with_remotes,
)
from isrlab.core.truncation import Log

ISR_SHRINK_HALF_PERIOD = True
"""Kafka >= 0.10.2 (KAFKA-4485) schedules ``isr-expiration`` every ``replicaLagTimeMaxMs / 2``."""


@dataclass(frozen=True, slots=True)
class LogReadResult:
    """What a follower's fetch read from the leader (Kafka's ``LogReadResult``).

    ``fetch_offset`` is where the read began (the follower's LEO); ``leader_log_end_offset``
    the leader's LEO when the read began; ``records`` what was read; ``high_watermark``
    the leader HW sent back; ``error`` is ``NONE``, ``NOT_LEADER_FOR_PARTITION`` or
    ``OFFSET_OUT_OF_RANGE``.
    """

    fetch_offset: int
    follower_log_start_offset: int
    leader_log_end_offset: int
    high_watermark: int
    leader_log_start_offset: int
    records: Log
    fetch_time_ms: int
    error: Errors = Errors.NONE

    @property
    def is_read_from_log_end(self) -> bool:
        """The read reached the leader's LEO as it was when the read began."""
        return self.fetch_offset >= self.leader_log_end_offset


@dataclass(frozen=True, slots=True)
class IsrUpdate:
    """Outcome of a leader-side step: the partition, what changed, and any protocol error.

    ``isr_changed`` means the caller must ``record_isr_change``; ``zk_write`` is the state
    written to ZooKeeper when it did; ``hw_incremented`` means delayed produce/fetch
    requests should be re-checked (``tryCompleteDelayedRequests``).
    """

    partition: Partition
    isr_changed: bool = False
    hw_incremented: bool = False
    zk_write: LeaderAndIsr | None = None
    error: Errors = Errors.NONE


def zk_leader_and_isr(partition: Partition) -> LeaderAndIsr:
    """The ``LeaderAndIsr`` a leader writes to its ZooKeeper partition state node."""
    leader = partition.leader if partition.leader is not None else -1
    return LeaderAndIsr(leader, partition.leader_epoch, tuple(sorted(partition.isr)),
                        partition.zk_version)


def partition_state_znode(partition: Partition) -> dict[str, object]:
    """The JSON of ``/brokers/topics/<t>/partitions/<p>/state`` for this partition.

    ``{"controller_epoch", "leader", "version": 1, "leader_epoch", "isr"}``; ``version``
    is the format version, always 1 (the node's zkVersion lives in ZooKeeper's stat).
    """
    return {
        "controller_epoch": partition.controller_epoch,
        "leader": partition.leader if partition.leader is not None else -1,
        "version": 1,
        "leader_epoch": partition.leader_epoch,
        "isr": sorted(partition.isr),
    }


def _update_isr(partition: Partition, new_isr: frozenset[int]) -> Partition:
    return with_isr(partition, new_isr, partition.zk_version + 1)


# ---------------------------------------------------------------------------------------
# Fetch from a follower
# ---------------------------------------------------------------------------------------


def read_from_local_log(
    partition: Partition, fetch_offset: int, follower_log_start_offset: int, now_ms: int,
    max_records: int | None = None,
) -> Result[LogReadResult, InvalidInput]:
    """``ReplicaManager.readFromLocalLog`` on the leader for one follower fetch.

    Reads ``log[fetch_offset:]`` (at most ``max_records``) and snapshots the leader's LEO,
    HW and log start.  A non-leader answers ``NOT_LEADER_FOR_PARTITION`` and an offset
    outside ``[log start, LEO]`` ``OFFSET_OUT_OF_RANGE``, both with no records.
    Shortcut: sizes are counted in records, not bytes.
    """
    if min(fetch_offset, now_ms) < 0 or (max_records is not None and max_records < 0):
        return reject(Problem.NEGATIVE_VALUE, f"fetch offset {fetch_offset}, now {now_ms}")
    problem = partition_problem(partition)
    if problem is not None:
        return Failure(problem)
    return Success(_read(partition, fetch_offset, follower_log_start_offset, now_ms, max_records))


def _read(
    p: Partition, fetch_offset: int, follower_start: int, now_ms: int, max_records: int | None
) -> LogReadResult:
    leo = len(p.log)
    error = Errors.NONE
    if not is_leader(p):
        error = Errors.NOT_LEADER_FOR_PARTITION
    elif not p.log_start_offset <= fetch_offset <= leo:
        error = Errors.OFFSET_OUT_OF_RANGE
    end = leo if max_records is None else min(leo, fetch_offset + max_records)
    read = p.log[fetch_offset:end] if error is Errors.NONE else ()
    return LogReadResult(
        fetch_offset, follower_start, leo, p.high_watermark, p.log_start_offset, read, now_ms,
        error,
    )


def update_log_read_result(
    replica: RemoteReplica, read: LogReadResult, since_previous_fetch: bool = False
) -> RemoteReplica:
    """``Replica.updateLogReadResult``: record one follower fetch on the leader.

    The follower's LEO becomes the fetch offset.  If the read reached the leader's LEO as
    of the read's start, ``last_caught_up_time_ms`` = the fetch time: the rule of
    Kafka <= 0.10.1, the default.  With ``since_previous_fetch`` (KAFKA-4485, Kafka
    0.10.2+), a follower that reached the LEO the leader had at its previous fetch counts
    as caught up at that previous fetch time, so a follower steadily one fetch behind a
    busy leader stays in the ISR.  ``last_fetch_*`` are recorded either way, and the
    caught-up time never goes backwards.  A failed read (``read.error``) is Kafka's
    ``UnknownLogReadResult``-like answer: the follower's LEO, log start and previous fetch
    become unknown (-1) and its caught-up time stays.  Total on any replica and read.
    """
    if read.error is not Errors.NONE:
        return RemoteReplica(replica.broker_id, UNKNOWN_OFFSET, UNKNOWN_OFFSET,
                             replica.last_caught_up_time_ms, UNKNOWN_OFFSET, -1)
    caught_up = replica.last_caught_up_time_ms
    if read.is_read_from_log_end:
        caught_up = max(caught_up, read.fetch_time_ms)
    elif since_previous_fetch and read.fetch_offset >= replica.last_fetch_leader_log_end_offset:
        caught_up = max(caught_up, replica.last_fetch_time_ms)
    return RemoteReplica(
        broker_id=replica.broker_id,
        log_end_offset=read.fetch_offset,
        log_start_offset=read.follower_log_start_offset,
        last_caught_up_time_ms=caught_up,
        last_fetch_leader_log_end_offset=read.leader_log_end_offset,
        last_fetch_time_ms=read.fetch_time_ms,
    )


def leader_epoch_start_offset(leader: Partition) -> int:
    """The start offset of the leader's current epoch (Kafka's ``leaderEpochStartOffsetOpt``).

    Kafka (>= 2.1, KAFKA-7128) records the leader's LEO when ``makeLeader`` adopts the
    epoch.  Shortcut: ``Partition`` does not store it; it is recomputed from the log as the
    offset of the first record of the current epoch or later, else the LEO (nothing
    written in the epoch yet).  Both agree because epochs only grow and a leader never
    truncates its own log while it leads.  Total (on a follower: its LEO, unused).
    """
    epoch = leader.leader_epoch
    for offset, record in enumerate(leader.log):
        if record.epoch >= epoch:
            return offset
    return len(leader.log)


def may_join_isr(
    replica: RemoteReplica, high_watermark: int, leader_epoch_start: int | None = None
) -> bool:
    """The ISR expansion predicate for a follower not yet in the ISR.

    Before Kafka 2.1: its LEO (the fetch offset) has reached the leader's HW.  With
    ``leader_epoch_start`` (KAFKA-7128's fix, Kafka 2.1): also the start offset of the
    leader's current epoch, since a new leader's HW may lag the true (committed) HW of the
    previous epoch.  ``None`` means the pre-2.1 rule (not Kafka's "not leader").
    """
    leo = replica.log_end_offset
    if leo < high_watermark:
        return False
    return leader_epoch_start is None or leo >= leader_epoch_start


def _expand(
    p: Partition, replica_id: int, leader_epoch_start: int | None, now_ms: int,
    hw_lag_ms: int | None,
) -> IsrUpdate:
    replica = next(r for r in p.remotes if r.broker_id == replica_id)
    changed = replica_id not in p.isr and may_join_isr(
        replica, p.high_watermark, leader_epoch_start
    )
    expanded = _update_isr(p, p.isr | {replica_id}) if changed else p
    hw = raise_leader_hw(expanded, now_ms, hw_lag_ms)
    write = zk_leader_and_isr(hw.partition) if changed else None
    return IsrUpdate(hw.partition, changed, hw.incremented, write)


def _follower_problem(partition: Partition, replica_id: int) -> InvalidInput | None:
    """``partition_problem``, then whether ``replica_id`` is not a follower of it."""
    problem = partition_problem(partition)
    if problem is None and (replica_id == partition.local_broker_id
                            or replica_id not in partition.assigned_replicas):
        return InvalidInput(Problem.NOT_A_REPLICA, f"follower {replica_id} of {partition.tp}")
    return problem


def maybe_expand_isr(
    partition: Partition, replica_id: int, leader_epoch_start: int | None = None,
    now_ms: int = 0, hw_lag_ms: int | None = None,
) -> Result[IsrUpdate, InvalidInput]:
    """``Partition.maybeExpandIsr``: add a caught-up follower to the ISR, then raise the HW.

    The follower joins if it is assigned, not yet in the ISR, and its LEO >= the leader's
    HW (``may_join_isr``); with ``leader_epoch_start`` (Kafka >= 2.1, KAFKA-7128: pass
    ``leader_epoch_start_offset(partition)``) its LEO must also have reached the start
    offset of the leader's epoch.  The default ``None`` is the pre-2.1 rule.  A join is
    written to ZooKeeper and must be recorded.  Then ``maybe_increment_leader_hw``
    regardless (at ``now_ms``, the fetch time; ``hw_lag_ms``: KAFKA-4485's rule, see
    ``isrlab.core.partition.isr_log_end_offsets``).  On a non-leader:
    ``NOT_LEADER_FOR_PARTITION`` and nothing changes (Kafka: ``case None => false``).
    """
    if now_ms < 0 or (hw_lag_ms is not None and hw_lag_ms < 0):
        return reject(Problem.NEGATIVE_VALUE, f"now {now_ms}, lag {hw_lag_ms}")
    problem = _follower_problem(partition, replica_id)
    if problem is not None:
        return Failure(problem)
    if not is_leader(partition):
        return Success(IsrUpdate(partition, error=Errors.NOT_LEADER_FOR_PARTITION))
    return Success(_expand(partition, replica_id, leader_epoch_start, now_ms, hw_lag_ms))


def _apply_fetch(
    p: Partition, replica_id: int, read: LogReadResult, since_previous_fetch: bool,
    leader_epoch_start: int | None, hw_lag_ms: int | None,
) -> IsrUpdate:
    if not is_leader(p):
        return IsrUpdate(p, error=Errors.NOT_LEADER_FOR_PARTITION)
    remotes = tuple(
        update_log_read_result(r, read, since_previous_fetch) if r.broker_id == replica_id else r
        for r in p.remotes
    )
    # A failed read carries fetchTimeMs = -1 in Kafka; its unknown LEO keeps the HW put.
    now_ms = read.fetch_time_ms if read.error is Errors.NONE else -1
    update = _expand(with_remotes(p, remotes), replica_id, leader_epoch_start, now_ms, hw_lag_ms)
    if read.error is Errors.NONE:
        return update
    return IsrUpdate(update.partition, update.isr_changed, update.hw_incremented,
                     update.zk_write, read.error)


def update_follower_fetch(
    partition: Partition, replica_id: int, read: LogReadResult, since_previous_fetch: bool = False,
    leader_epoch_start: int | None = None, hw_lag_ms: int | None = None,
) -> Result[IsrUpdate, InvalidInput]:
    """``Partition.updateReplicaLogReadResult`` (``updateFollowerFetchState``) on the leader.

    Records the fetch on the follower's ``RemoteReplica`` (``update_log_read_result``; the
    pre-1.1 caught-up rule unless ``since_previous_fetch``),
    then ``maybe_expand_isr`` (with KAFKA-7128's ``leader_epoch_start`` rule when given)
    and ``maybe_increment_leader_hw`` (``hw_lag_ms``: KAFKA-4485's rule).  A read that
    failed (``read.error``: out of range, or fenced by KIP-320) is recorded as Kafka 0.10.2
    to 2.1 do (``updateFollowerLogReadResults`` passes every result on): the follower's LEO
    becomes unknown, so it holds the HW back until it fetches again; the error is reported.
    A partition this broker no longer leads changes nothing (``NOT_LEADER_FOR_PARTITION``).
    The caller re-checks delayed acks=all produce requests
    (``isrlab.core.produce.check_enough_replicas_reach_offset``).
    """
    inconsistent = read.fetch_offset > read.leader_log_end_offset and read.error is Errors.NONE
    if inconsistent or read.fetch_offset < 0:
        return reject(Problem.OFFSET_OUT_OF_LOG, f"fetch offset {read.fetch_offset}")
    if hw_lag_ms is not None and hw_lag_ms < 0:
        return reject(Problem.NEGATIVE_VALUE, f"lag {hw_lag_ms}")
    problem = _follower_problem(partition, replica_id)
    if problem is not None:
        return Failure(problem)
    return Success(_apply_fetch(partition, replica_id, read, since_previous_fetch,
                                leader_epoch_start, hw_lag_ms))


# ---------------------------------------------------------------------------------------
# ISR shrink
# ---------------------------------------------------------------------------------------


def get_out_of_sync_replicas(
    partition: Partition, now_ms: int, replica_lag_time_max_ms: int, kafka_7152: bool = False
) -> frozenset[int]:
    """``Partition.getOutOfSyncReplicas``: ISR followers not caught up for too long.

    One rule covers stuck followers (no fetch at all) and slow ones (fetching but never
    reaching the LEO): ``now - last_caught_up_time_ms > replica_lag_time_max_ms``.  With
    ``kafka_7152`` (KAFKA-7152, Kafka 2.1+; later ``ReplicaState.isCaughtUp``) a follower
    whose LEO is the leader's is never out of sync, however long ago it last fetched; off:
    Kafka <= 2.0, the time rule alone.  The leader itself is never out of sync.  Total (an
    empty set on a follower).
    """
    if not is_leader(partition):
        return frozenset()
    leader_leo = log_end_offset(partition) if kafka_7152 else None
    return frozenset(
        r.broker_id
        for r in partition.remotes
        if r.broker_id in partition.isr
        and r.log_end_offset != leader_leo
        and now_ms - r.last_caught_up_time_ms > replica_lag_time_max_ms
    )


def _shrink(p: Partition, now_ms: int, lag_ms: int, kafka_4485: bool,
            kafka_7152: bool) -> IsrUpdate:
    out = get_out_of_sync_replicas(p, now_ms, lag_ms, kafka_7152)
    if not out:
        return IsrUpdate(p)
    # p.isr - out still holds the leader: check_partition asserted leader ∈ ISR, the
    # value-level form of Kafka's assert(newInSyncReplicas.size > 0).
    shrunk = _update_isr(p, p.isr - out)
    hw = raise_leader_hw(shrunk, now_ms, lag_ms if kafka_4485 else None)
    return IsrUpdate(hw.partition, True, hw.incremented, zk_leader_and_isr(hw.partition))


def maybe_shrink_isr(
    partition: Partition, now_ms: int, replica_lag_time_max_ms: int, kafka_4485: bool = False,
    kafka_7152: bool = False,
) -> Result[IsrUpdate, InvalidInput]:
    """``Partition.maybeShrinkIsr``: drop out-of-sync followers, then raise the HW.

    Only on the leader (elsewhere: nothing, ``NOT_LEADER_FOR_PARTITION``).  The new ISR is
    written to ZooKeeper, the change must be recorded, and a smaller ISR may raise the HW
    (with ``kafka_4485``, Kafka 0.10.2+: over the ISR and the replicas caught up within
    ``replica_lag_time_max_ms``, which a shrunk-away follower never is).  ``kafka_7152``
    (2.1+) keeps a follower at the leader's LEO (``get_out_of_sync_replicas``).
    Kafka's ``assert(newInSyncReplicas.size > 0)`` is the precondition that the leader is in
    its ISR: a partition breaking it is rejected (``LEADER_NOT_IN_ISR`` / ``EMPTY_ISR``).
    """
    if now_ms < 0 or replica_lag_time_max_ms < 0:
        return reject(Problem.NEGATIVE_VALUE, f"now {now_ms}, lag {replica_lag_time_max_ms}")
    problem = partition_problem(partition)
    if problem is not None:
        return Failure(problem)
    if not is_leader(partition):
        return Success(IsrUpdate(partition, error=Errors.NOT_LEADER_FOR_PARTITION))
    return Success(_shrink(partition, now_ms, replica_lag_time_max_ms, kafka_4485, kafka_7152))


def isr_expiration_period_ms(replica_lag_time_max_ms: int, half_period: bool = True) -> int:
    """The ``isr-expiration`` task's period: ``replicaLagTimeMaxMs / 2`` (older: the full lag).

    ``ReplicaManager.startup``: the half period since Kafka 0.10.2 (KAFKA-4485, together
    with the previous-fetch caught-up rule and the HW over caught-up replicas), the full
    lag in 0.10.1 and before.
    """
    return replica_lag_time_max_ms // 2 if half_period else replica_lag_time_max_ms


def max_time_in_isr_without_catching_up_ms(
    replica_lag_time_max_ms: int, half_period: bool = True
) -> int:
    """The longest a follower can stay in the ISR after it last caught up: lag + period.

    With the half-period schedule this is ``1.5 × replicaLagTimeMaxMs``: removal needs
    ``now - lastCaughtUp > lag``, and the check only runs once per period.  The tests check
    this bound against ``maybe_shrink_isr`` run on the schedule.
    """
    return replica_lag_time_max_ms + isr_expiration_period_ms(replica_lag_time_max_ms, half_period)
