"""The replica lifecycle across a restart: flushes, log recovery, the HW checkpoint file.

What survives a broker's crash decides whether a replica that comes back may be elected
with less than it acknowledged.  Kafka's pieces, as pure functions:

* ``Log.flush`` / the recovery point (``LogManager`` checkpoints it in
  ``recovery-point-offset-checkpoint``): records below the flushed offset are on disk;
* ``LogLoader.load`` (3.0+; ``Log.loadSegments`` / ``recoverLog`` before): after a clean
  shutdown (the ``.kafka_cleanshutdown`` marker) the whole log is there; after an unclean
  one the segments past the recovery point are re-read and whatever the OS had not
  written is gone -- some suffix of the unflushed tail;
* ``Partition.createLog`` reading ``replication-offset-checkpoint``
  (``highWatermarkCheckpoints``): the HW of a partition missing from the file is 0, and the
  value is clamped to ``[log start, LEO]``;
* ``ReplicaManager.checkpointHighWatermarks`` writing that file: by the checkpoint thread
  and by a clean shutdown (``ReplicaManager.shutdown(checkpointHW = true)``), in every
  version; what a power loss leaves of it, by version (``HwCheckpointFile``);
* ``ReplicaManager.makeFollowers`` when the new leader is not alive: the three behaviours
  of ``UnavailableLeader``.

Shortcuts: a log is ``isrlab.core.truncation.Log``; "flushed" is one offset (Kafka tracks the
recovery point per log and the page cache per segment); a torn or corrupt record is
counted as lost with everything after it (recovery truncates at the first bad batch).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, replace
from enum import Enum, unique

from returns.result import Result, Success

from isrlab.core.errors import InvalidInput, Problem, reject
from isrlab.core.state import Partition, PartitionState, TopicPartition
from isrlab.core.truncation import Log


@dataclass(frozen=True, slots=True)
class DurableLog:
    """A log and how much of it is on disk: ``log[:flushed]`` survives any crash."""

    log: Log
    flushed: int = 0


def check_durable_log(durable: DurableLog) -> Result[DurableLog, InvalidInput]:
    """``0 ≤ flushed ≤ LEO``."""
    if not 0 <= durable.flushed <= len(durable.log):
        return reject(Problem.OFFSET_OUT_OF_LOG,
                      f"flushed {durable.flushed} outside [0, {len(durable.log)}]")
    return Success(durable)


def flush(durable: DurableLog, offset: int) -> Result[DurableLog, InvalidInput]:
    """``Log.flush(offset)``: everything below ``offset`` (capped at the LEO) is on disk.

    Kafka flushes on ``log.flush.interval.messages`` / ``.ms`` (by default it leaves it to
    the OS) and on a clean shutdown; the recovery point moves with it.  The flushed offset
    never moves back.
    """
    if offset < 0:
        return reject(Problem.NEGATIVE_VALUE, f"flush offset {offset}")
    return check_durable_log(durable).map(
        lambda d: replace(d, flushed=max(d.flushed, min(offset, len(d.log)))))


def append_unflushed(durable: DurableLog, log: Log) -> DurableLog:
    """The log after an append or a truncation: the flushed offset is capped at the new LEO.

    Truncation (``Log.truncateTo``) also lowers the recovery point in Kafka.  Total.
    """
    return DurableLog(log, min(durable.flushed, len(log)))


@unique
class CrashLoss(Enum):
    """What an unclean shutdown takes from a log: the ``crashes`` parameter of a model.

    ``NONE``: nothing (the page cache survives: a process crash, or the model's old
    shortcut); ``TAIL``: any suffix of the unflushed tail (a machine crash; the OS wrote an
    unknown part); ``ALL_UNFLUSHED``: exactly the unflushed tail (the worst case).
    """

    NONE = "none"
    TAIL = "tail"
    ALL_UNFLUSHED = "all-unflushed"


def surviving_lengths(durable: DurableLog, clean_shutdown: bool,
                      loss: CrashLoss = CrashLoss.TAIL) -> tuple[int, ...]:
    """The LEOs a log may have after the restart, smallest first (for a model's choice).

    A clean shutdown flushes everything (``LogManager.shutdown``): only the LEO.
    Otherwise by ``loss``.  Total (a flushed offset past the LEO counts as the LEO).
    """
    leo = len(durable.log)
    flushed = min(max(durable.flushed, 0), leo)
    if clean_shutdown or loss is CrashLoss.NONE:
        return (leo,)
    if loss is CrashLoss.ALL_UNFLUSHED:
        return (flushed,)
    return tuple(range(flushed, leo + 1))


def recover_log(
    durable: DurableLog, clean_shutdown: bool, survived: int | None = None
) -> Result[DurableLog, InvalidInput]:
    """``LogLoader.load`` / ``Log.recoverLog``: the log a restarted broker finds.

    Clean shutdown: the whole log, all of it flushed.  Unclean: the first ``survived``
    records (default: the flushed prefix, the worst case), which must lie in
    ``[flushed, LEO]`` (``surviving_lengths``); what remains is all on disk now.
    """
    def load(d: DurableLog) -> Result[DurableLog, InvalidInput]:
        leo = len(d.log)
        keep = leo if clean_shutdown else (d.flushed if survived is None else survived)
        if not d.flushed <= keep <= leo:
            return reject(Problem.OFFSET_OUT_OF_LOG,
                          f"{keep} records survive, outside [{d.flushed}, {leo}]")
        return Success(DurableLog(d.log[:keep], keep))

    return check_durable_log(durable).bind(load)


def read_high_watermark_checkpoint(
    checkpoint: Iterable[tuple[TopicPartition, int]], tp: TopicPartition
) -> int:
    """``OffsetCheckpointFile.read().getOrElse(tp, 0)``: a partition missing from the file is 0.

    ``Partition.createLog`` (2.4+, through ``LazyOffsetCheckpoints``, read once per
    LeaderAndIsr; ``getOrCreateReplica`` in 0.8.0-2.3) reads it when the partition is
    first hosted after the restart.  Total.
    """
    return next((hw for t, hw in checkpoint if t == tp), 0)


Checkpoint = tuple[tuple[TopicPartition, int], ...]
"""The content of one log dir's ``replication-offset-checkpoint``: (partition, HW) pairs."""


@unique
class HwCheckpointFile(Enum):
    """When the HW checkpoint file is written and what a power loss leaves of it, by version.

    In every Kafka version (0.8.0 to 4.0) ``ReplicaManager.checkpointHighWatermarks`` runs on
    the checkpoint thread (every ``replica.high.watermark.checkpoint.interval.ms``, from the
    first LeaderAndIsr or metadata publish on) and once more in
    ``ReplicaManager.shutdown(checkpointHW = true)``, which ``KafkaServer.shutdown`` /
    ``BrokerServer.shutdown`` call after the request handlers and the scheduler have
    stopped: a clean shutdown leaves the file with the final HWs.

    ``FSYNC`` (0.8.2 onwards, KAFKA-1539): ``OffsetCheckpoint.write`` fsyncs the temporary
    file before renaming it over the old one, so a power loss leaves the last write whole.
    ``NO_FSYNC`` (0.8.0, 0.8.1): no fsync before the rename, so after a power loss the
    renamed file may be empty (the rename reached the disk, the data did not), and
    ``OffsetCheckpoint.read`` returns no partitions for an empty file: every HW reads back
    as 0.  ``PERIODIC`` is no release: only the thread writes the file, as with Kafka's
    ``shutdown(checkpointHW = false)``, which only its unit tests call (or a shutdown whose
    write failed: 1.0+ logs the ``KafkaStorageException`` and goes on).
    """

    FSYNC = "fsync"
    NO_FSYNC = "no-fsync"
    PERIODIC = "periodic"


def checkpoint_at_shutdown(previous: Iterable[tuple[TopicPartition, int]],
                           written: Iterable[tuple[TopicPartition, int]] | None,
                           behaviour: HwCheckpointFile = HwCheckpointFile.FSYNC) -> Checkpoint:
    """``ReplicaManager.shutdown(checkpointHW)``: one log dir's file after a clean shutdown.

    ``written`` is what ``checkpointHighWatermarks`` writes to this dir now: the dir's
    partitions that have a local log, with their HWs (``None`` when the dir has none:
    Kafka groups the hosted logs by dir and writes only the dirs it found, so that file is
    left as it was).  The file is replaced whole, so a partition not in ``written`` is gone
    from it (KAFKA-1647 before 0.8.2).  With ``PERIODIC`` the shutdown writes nothing.
    Total.
    """
    if behaviour is HwCheckpointFile.PERIODIC or written is None:
        return tuple(previous)
    return tuple(written)


def checkpoints_after_power_loss(last_written: Iterable[tuple[TopicPartition, int]],
                                 behaviour: HwCheckpointFile = HwCheckpointFile.FSYNC
                                 ) -> tuple[Checkpoint, ...]:
    """The files a restart may find after an unclean shutdown (for a model's choice).

    The last write, and with ``NO_FSYNC`` (before 0.8.2, KAFKA-1539) also the empty file.
    Shortcut: whether the OS had written the file's data is not tracked, so any write may
    be the unlucky one (0.8.x rewrites the file as a new one every 5 s by default, well
    within the OS's usual writeback delay); a torn file (``OffsetCheckpoint.read`` throws
    on a malformed line or a short count) is not among the outcomes.  Total.
    """
    last = tuple(last_written)
    if behaviour is HwCheckpointFile.NO_FSYNC and last:
        return (last, ())
    return (last,)


def initial_high_watermark(checkpointed: int, log_start_offset: int, log_end_offset: int) -> int:
    """The HW a recovered log starts with: the checkpoint clamped to ``[log start, LEO]``.

    ``Partition.createLog`` calls ``Log.updateHighWatermark`` (2.4+), which clamps to
    ``[logStartOffset, LEO]``; 0.8.0-2.3's ``getOrCreateReplica`` took
    ``math.min(checkpointed, log.logEndOffset)``, the same for a log starting at 0.  A
    checkpoint above a tail a power loss cut off is capped at the recovered LEO.  Total.
    """
    return min(max(checkpointed, log_start_offset), log_end_offset)


def host_recovered_partition(
    tp: TopicPartition, local_broker_id: int, recovered: DurableLog,
    checkpoint: Iterable[tuple[TopicPartition, int]],
) -> Result[Partition, InvalidInput]:
    """``ReplicaManager.getOrCreatePartition`` + ``Partition.createLogIfNotExists`` at the
    first LeaderAndIsr after a restart.

    A partition does not exist on a broker until its first LeaderAndIsr (or metadata
    record) names it: the logs ``LogManager`` loaded are only attached then, and the HW is
    read from the checkpoint file *then* -- so a file rewritten in between (it holds only
    hosted partitions) may no longer hold it (HW 0).  The result has the log and HW but no
    role; ``make_leader`` / ``make_follower`` follow.
    """
    return check_durable_log(recovered).map(lambda d: Partition(
        tp, local_broker_id, log=d.log, log_created=True,
        high_watermark=initial_high_watermark(
            read_high_watermark_checkpoint(checkpoint, tp), 0, len(d.log))))


@unique
class UnavailableLeader(Enum):
    """What ``makeFollowers`` does when the new leader is not alive, by Kafka version.

    ``SKIP`` (before 0.8.2): nothing; no log is created, so the partition's HW is not in
    the next checkpoint (KAFKA-1647).  ``CREATE_LOG`` (0.8.2 onwards: ``makeFollowers`` in
    ZooKeeper mode, ``applyLocalFollowersDelta`` in KRaft): the log is created so its HW is
    checkpointed, the partition's state is not updated and no fetcher starts.
    ``MAKE_FOLLOWER`` is no Kafka version: the follower state is adopted anyway (a fault
    for a model to name, e.g. to see what the not-updated epoch protects).
    """

    SKIP = "skip"
    CREATE_LOG = "create-log"
    MAKE_FOLLOWER = "make-follower"


@dataclass(frozen=True, slots=True)
class FollowOutcome:
    """Outcome of ``follow_unavailable_leader``: the partition, whether to fetch."""

    partition: Partition
    start_fetcher: bool


def follow_unavailable_leader(
    partition: Partition, state: PartitionState, behaviour: UnavailableLeader
) -> FollowOutcome:
    """``ReplicaManager.makeFollowers`` for a partition whose leader is not alive.

    By ``behaviour`` (see ``UnavailableLeader``).  Shortcut for ``MAKE_FOLLOWER``: the
    fields ``makeFollower`` adopts are set without truncation (the fetcher, once the leader
    is known, truncates through ``isrlab.core.partition.make_follower``).  No fetcher starts in
    any case.  Total.
    """
    if behaviour is UnavailableLeader.SKIP:
        return FollowOutcome(partition, False)
    created = replace(partition, log_created=True)
    if behaviour is UnavailableLeader.CREATE_LOG:
        return FollowOutcome(created, False)
    followed = replace(created, controller_epoch=state.controller_epoch, leader=state.leader,
                       leader_epoch=state.leader_epoch, zk_version=state.zk_version,
                       assigned_replicas=state.replicas, isr=frozenset(), remotes=())
    return FollowOutcome(followed, False)
