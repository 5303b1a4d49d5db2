"""Producing to the leader (acks 0/1/all, min.insync.replicas) and appending on a follower.

Mirrors ``Partition.appendRecordsToLeader``, ``Partition.checkEnoughReplicasReachOffset``
(the ``DelayedProduce`` completion test) and ``ReplicaFetcherThread.processPartitionData``.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from returns.result import Failure, Result, Success

from isrlab.core.errors import Errors, InvalidInput, Problem, reject
from isrlab.core.partition import follower_high_watermark, raise_leader_hw, truncate_local_log
from isrlab.core.state import Partition, check_partition, is_leader, partition_problem, with_log
from isrlab.core.truncation import Log, Record

ACKS_NONE = 0
ACKS_LEADER = 1
ACKS_ALL = -1


@dataclass(frozen=True, slots=True)
class AppendResult:
    """Outcome of ``append_records_to_leader``.

    ``first_offset``/``last_offset`` locate the batch (``-1`` when nothing was appended);
    ``required_offset`` is the HW an acks=all request waits for (``last_offset + 1``);
    ``completed`` says whether the produce request is answered now (acks 0/1, or an error);
    ``hw_incremented`` whether the append itself raised the HW (an ISR of one).
    """

    partition: Partition
    error: Errors
    first_offset: int
    last_offset: int
    completed: bool
    hw_incremented: bool

    @property
    def required_offset(self) -> int:
        """The HW at which an acks=all request is satisfied."""
        return self.last_offset + 1


def _append(
    p: Partition, ids: tuple[int, ...], acks: int, min_isr: int, transactional: bool,
    now_ms: int, hw_lag_ms: int | None,
) -> AppendResult:
    if not is_leader(p):
        return AppendResult(p, Errors.NOT_LEADER_FOR_PARTITION, -1, -1, True, False)
    if acks == ACKS_ALL and len(p.isr) < min_isr:
        return AppendResult(p, Errors.NOT_ENOUGH_REPLICAS, -1, -1, True, False)
    first = len(p.log)
    appended = p.log + tuple(Record(i, p.leader_epoch) for i in ids)
    opened = p.open_txn_first_offsets | {first} if transactional and ids else None
    grown = with_log(p, appended, p.high_watermark, p.log_start_offset,
                     opened or p.open_txn_first_offsets)
    hw = raise_leader_hw(grown, now_ms, hw_lag_ms)
    return AppendResult(
        hw.partition, Errors.NONE, first, len(appended) - 1, acks != ACKS_ALL, hw.incremented
    )


def append_records_to_leader(
    partition: Partition,
    ids: tuple[int, ...],
    acks: int,
    min_insync_replicas: int = 1,
    transactional: bool = False,
    now_ms: int = 0,
    hw_lag_ms: int | None = None,
) -> Result[AppendResult, InvalidInput]:
    """``Partition.appendRecordsToLeader``: append a batch in the current leader epoch.

    Not the leader: ``NOT_LEADER_FOR_PARTITION``.  acks=all with fewer than
    ``min_insync_replicas`` in the ISR: ``NOT_ENOUGH_REPLICAS``, nothing appended.
    Otherwise the records get the leader's epoch and ``maybe_increment_leader_hw`` runs.
    acks 0 and 1 complete at once (acks 0 sends no answer: the caller drops it); acks=all
    waits until ``check_enough_replicas_reach_offset``.  ``transactional`` opens a
    transaction at the batch's first offset (LSO shortcut: see ``last_stable_offset``).
    ``now_ms`` and ``hw_lag_ms`` are for KAFKA-4485's HW rule (``maybe_increment_leader_hw``).
    """
    if now_ms < 0 or (hw_lag_ms is not None and hw_lag_ms < 0):
        return reject(Problem.NEGATIVE_VALUE, f"now {now_ms}, lag {hw_lag_ms}")
    if acks not in (ACKS_NONE, ACKS_LEADER, ACKS_ALL):
        return reject(Problem.BAD_ACKS, f"acks={acks}")
    if min_insync_replicas < 1:
        return reject(Problem.BAD_CONFIG, f"min.insync.replicas={min_insync_replicas} (< 1)")
    problem = partition_problem(partition)
    if problem is not None:
        return Failure(problem)
    return Success(_append(partition, ids, acks, min_insync_replicas, transactional, now_ms,
                           hw_lag_ms))


@dataclass(frozen=True, slots=True)
class AcksCheck:
    """``checkEnoughReplicasReachOffset``'s answer: is the request done, and with what."""

    done: bool
    error: Errors


def check_enough_replicas_reach_offset(
    partition: Partition, required_offset: int, min_insync_replicas: int
) -> AcksCheck:
    """``Partition.checkEnoughReplicasReachOffset``: may a waiting acks=all request answer?

    Done once the leader's HW >= ``required_offset``: ``NONE`` if the ISR still has at
    least ``min_insync_replicas`` members, else ``NOT_ENOUGH_REPLICAS_AFTER_APPEND``.  A
    broker that is no longer the leader answers ``NOT_LEADER_FOR_PARTITION``.  Total.
    """
    if not is_leader(partition):
        return AcksCheck(True, Errors.NOT_LEADER_FOR_PARTITION)
    if partition.high_watermark < required_offset:
        return AcksCheck(False, Errors.NONE)
    if len(partition.isr) >= min_insync_replicas:
        return AcksCheck(True, Errors.NONE)
    return AcksCheck(True, Errors.NOT_ENOUGH_REPLICAS_AFTER_APPEND)


def end_transaction(partition: Partition, first_offset: int) -> Partition:
    """Commit or abort the transaction that began at ``first_offset`` (LSO may advance).

    Shortcut: no control records are written; the transaction is just forgotten.  Total.
    """
    remaining = partition.open_txn_first_offsets - {first_offset}
    return replace(partition, open_txn_first_offsets=remaining)


def _process(p: Partition, fetched: Log, leader_hw: int, leader_start: int) -> Partition:
    log = p.log + fetched
    hw = follower_high_watermark(leader_hw, len(log))
    start = min(max(p.log_start_offset, leader_start), hw)
    return with_log(p, log, hw, start, p.open_txn_first_offsets)


def process_partition_data(
    partition: Partition, fetch_offset: int, fetched: Log, leader_high_watermark: int,
    leader_log_start_offset: int = 0,
) -> Result[Partition, InvalidInput]:
    """``ReplicaFetcherThread.processPartitionData``: a follower appends what it fetched.

    The records must continue the local log (``fetch_offset`` = local LEO, else the
    response is stale and rejected).  Then HW := min(leader HW, own LEO) and the log
    start offset follows the leader's (capped by the HW).
    """
    if min(leader_high_watermark, leader_log_start_offset) < 0:
        return reject(Problem.NEGATIVE_VALUE, f"leader HW {leader_high_watermark}")

    def append(p: Partition) -> Result[Partition, InvalidInput]:
        """Append on a checked partition: followers only, at the local LEO."""
        if is_leader(p):
            return reject(Problem.WRONG_ROLE, f"broker {p.local_broker_id} leads {p.tp}")
        if fetch_offset != len(p.log):
            return reject(
                Problem.OFFSET_OUT_OF_LOG, f"fetch offset {fetch_offset} != LEO {len(p.log)}"
            )
        return Success(_process(p, fetched, leader_high_watermark, leader_log_start_offset))

    return check_partition(partition).bind(append)


@dataclass(frozen=True, slots=True)
class OutOfRangeResult:
    """Outcome of ``handle_offset_out_of_range``.

    ``fatal`` means the broker exits (Kafka < 2.1: ``FatalExitError``, ``System.exit(1)``
    in 0.10.2) and ``partition`` is unchanged; otherwise ``partition`` is the follower after
    any truncation and ``fetch_offset`` where its fetcher resumes.
    """

    partition: Partition
    fetch_offset: int
    fatal: bool


def _out_of_range(
    p: Partition, leader_end: int, leader_start: int, unclean: bool, fatal_rule: bool
) -> Result[OutOfRangeResult, InvalidInput]:
    leo = len(p.log)
    if leader_end < leo:
        if fatal_rule and not unclean:
            return Success(OutOfRangeResult(p, leo, True))
        return Success(OutOfRangeResult(truncate_local_log(p, leader_end), leader_end, False))
    if leader_start > leo:
        return reject(Problem.OFFSET_OUT_OF_LOG,
                      f"leader log start {leader_start} past the follower's LEO {leo}")
    return Success(OutOfRangeResult(p, leo, False))


def handle_offset_out_of_range(
    partition: Partition, leader_log_end_offset: int, leader_log_start_offset: int = 0,
    unclean_leader_election: bool = False, fatal_when_unclean_disabled: bool = False,
) -> Result[OutOfRangeResult, InvalidInput]:
    """``ReplicaFetcherThread.handleOffsetOutOfRange``: a fetch answered OFFSET_OUT_OF_RANGE.

    The follower asks the leader for its LEO.  If that is below the follower's own LEO
    (an unclean or unflushed leader), the follower truncates to it and fetches from there:
    Kafka 2.1+ (KAFKA-7414), the default.  Kafka 0.10.2 to 2.0 instead exit the broker when
    ``unclean.leader.election.enable`` is off (``fatal_when_unclean_disabled``): ``fatal``,
    nothing truncated.  Otherwise the follower keeps its log and fetches from its LEO.
    Shortcut: a leader whose log start is past the follower's LEO (Kafka's
    ``truncateFullyAndStartAt``) is not modelled (offsets are tuple indices): rejected.
    Only a follower may call this (``WRONG_ROLE``).
    """
    if min(leader_log_end_offset, leader_log_start_offset) < 0:
        return reject(Problem.NEGATIVE_VALUE, f"leader LEO {leader_log_end_offset}")

    def handle(p: Partition) -> Result[OutOfRangeResult, InvalidInput]:
        """The follower side, on a checked partition."""
        if is_leader(p):
            return reject(Problem.WRONG_ROLE, f"broker {p.local_broker_id} leads {p.tp}")
        return _out_of_range(p, leader_log_end_offset, leader_log_start_offset,
                             unclean_leader_election, fatal_when_unclean_disabled)

    return check_partition(partition).bind(handle)
