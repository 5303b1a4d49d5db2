"""The immutable values of replica management: one partition as one broker sees it.

Kafka keeps this state in mutable objects (``Partition``, ``Replica``, ``Log``) guarded by
locks; here each is a frozen, slotted dataclass holding only ints, tuples and frozensets,
so states are hashable, cheap to compare and safe to share between model-checker states.

Modelling shortcuts, shared by every function of ``core``:

* a log is ``isrlab.core.truncation.Log``: a tuple of ``Record(id, epoch)``, offset ``o`` being
  ``log[o]``; deleted segments stay in the tuple and ``log_start_offset`` only says where
  reads may begin (so offsets and tuple indices coincide);
* offsets are plain ints (Kafka's ``LogOffsetMetadata`` segment positions are dropped);
  ``UNKNOWN_OFFSET`` (-1) is Kafka's ``LogOffsetMetadata.UnknownOffsetMetadata``;
* the local replica's log is inlined in ``Partition`` (``log``, ``high_watermark``,
  ``log_start_offset``, ``open_txn_first_offsets``); ``log_created`` says whether
  ``createLogIfNotExists`` has run;
* the leader's view of each follower is a ``RemoteReplica`` in ``remotes`` (Kafka's
  ``remoteReplicas``), kept only while this broker leads.
"""

from __future__ import annotations

from dataclasses import dataclass

from returns.result import Failure, Result, Success

from isrlab.core.errors import InvalidInput, Problem
from isrlab.core.truncation import Log, Record

UNKNOWN_OFFSET = -1
"""Kafka's ``UnknownOffsetMetadata``: a remote replica whose LEO the leader does not know."""

NO_LEADER = -1
"""``LeaderAndIsr.NoLeader``: no replica leads the partition."""

LEADER_DURING_DELETE = -2
"""``LeaderAndIsr.LeaderDuringDelete``: the UpdateMetadata marker of a partition being deleted."""

INITIAL_LEADER_EPOCH = 0
"""``LeaderAndIsr.initialLeaderEpoch``: the epoch of the first leader of a new partition."""

INITIAL_ZK_VERSION = 0
"""``LeaderAndIsr.initialZKVersion``: the version of a freshly created partition state node."""


@dataclass(frozen=True, slots=True, order=True)
class TopicPartition:
    """Kafka's ``TopicPartition``: a topic name and a partition index (ordered, hashable)."""

    topic: str
    partition: int

    def __str__(self) -> str:
        return f"{self.topic}-{self.partition}"


@dataclass(frozen=True, slots=True)
class LeaderAndIsr:
    """Kafka's ``LeaderAndIsr``: the controller's decision for one partition.

    ``isr`` is a tuple because Kafka keeps it as a list (its order decides which replica a
    selector picks); ``Partition.isr`` on a broker is a set.
    """

    leader: int
    leader_epoch: int
    isr: tuple[int, ...]
    zk_version: int


@dataclass(frozen=True, slots=True)
class PartitionState:
    """One partition of a LeaderAndIsr request (Kafka's ``PartitionState``)."""

    controller_epoch: int
    leader: int
    leader_epoch: int
    isr: tuple[int, ...]
    zk_version: int
    replicas: tuple[int, ...]


@dataclass(frozen=True, slots=True)
class RemoteReplica:
    """The leader's record of one follower (Kafka's ``Replica`` for a remote broker).

    ``log_end_offset`` is the offset the follower last fetched from (``UNKNOWN_OFFSET``
    until it fetches after this broker became leader); ``last_caught_up_time_ms`` is the
    last time it was known to have read up to the leader's LEO; the two ``last_fetch_*``
    fields remember the previous fetch (Kafka's ``lastFetchLeaderLogEndOffset`` and
    ``lastFetchTimeMs``).
    """

    broker_id: int
    log_end_offset: int = UNKNOWN_OFFSET
    log_start_offset: int = UNKNOWN_OFFSET
    last_caught_up_time_ms: int = 0
    last_fetch_leader_log_end_offset: int = 0
    last_fetch_time_ms: int = 0


@dataclass(frozen=True, slots=True)
class Partition:
    """One partition as the broker ``local_broker_id`` holds it (Kafka's ``Partition``).

    Initial values follow Kafka's constructor: ``leader_epoch`` and ``zk_version`` start one
    below the first values a controller sends, so any first LeaderAndIsr is newer.
    ``isr`` is meaningful only on the leader (``make_follower`` clears it).
    """

    tp: TopicPartition
    local_broker_id: int
    controller_epoch: int = 0
    leader: int | None = None
    leader_epoch: int = INITIAL_LEADER_EPOCH - 1
    zk_version: int = INITIAL_ZK_VERSION - 1
    assigned_replicas: tuple[int, ...] = ()
    isr: frozenset[int] = frozenset()
    log: Log = ()
    log_created: bool = False
    high_watermark: int = 0
    log_start_offset: int = 0
    open_txn_first_offsets: frozenset[int] = frozenset()
    remotes: tuple[RemoteReplica, ...] = ()


# ---------------------------------------------------------------------------------------
# A partition with some fields changed
#
# Each is ``dataclasses.replace(p, ...)`` of the fields it names, built by one constructor
# call in the fields' order: replace looks the fields up by name on every call and costs
# about twice as much, and these run on each step of a model that is not in its caches.
# ---------------------------------------------------------------------------------------


def with_high_watermark(p: Partition, high_watermark: int) -> Partition:
    """``replace(p, high_watermark=high_watermark)``."""
    return Partition(p.tp, p.local_broker_id, p.controller_epoch, p.leader, p.leader_epoch,
                     p.zk_version, p.assigned_replicas, p.isr, p.log, p.log_created,
                     high_watermark, p.log_start_offset, p.open_txn_first_offsets, p.remotes)


def with_remotes(p: Partition, remotes: tuple[RemoteReplica, ...]) -> Partition:
    """``replace(p, remotes=remotes)``."""
    return Partition(p.tp, p.local_broker_id, p.controller_epoch, p.leader, p.leader_epoch,
                     p.zk_version, p.assigned_replicas, p.isr, p.log, p.log_created,
                     p.high_watermark, p.log_start_offset, p.open_txn_first_offsets, remotes)


def with_isr(p: Partition, isr: frozenset[int], zk_version: int) -> Partition:
    """``replace(p, isr=isr, zk_version=zk_version)``."""
    return Partition(p.tp, p.local_broker_id, p.controller_epoch, p.leader, p.leader_epoch,
                     zk_version, p.assigned_replicas, isr, p.log, p.log_created,
                     p.high_watermark, p.log_start_offset, p.open_txn_first_offsets, p.remotes)


def with_log(p: Partition, log: Log, high_watermark: int, log_start_offset: int,
             open_txn_first_offsets: frozenset[int]) -> Partition:
    """``replace(p, log=..., high_watermark=..., log_start_offset=...,
    open_txn_first_offsets=...)``: the local log and the offsets that follow it."""
    return Partition(p.tp, p.local_broker_id, p.controller_epoch, p.leader, p.leader_epoch,
                     p.zk_version, p.assigned_replicas, p.isr, log, p.log_created,
                     high_watermark, log_start_offset, open_txn_first_offsets, p.remotes)


def with_role(p: Partition, state: PartitionState, leader: int, isr: frozenset[int],
              remotes: tuple[RemoteReplica, ...]) -> Partition:
    """``replace(p, controller_epoch=state.controller_epoch, leader=leader,
    leader_epoch=state.leader_epoch, zk_version=state.zk_version,
    assigned_replicas=state.replicas, isr=isr, log_created=True, remotes=remotes)``: a
    LeaderAndIsr state adopted (``make_leader``, ``make_follower``)."""
    return Partition(p.tp, p.local_broker_id, state.controller_epoch, leader,
                     state.leader_epoch, state.zk_version, state.replicas, isr, p.log, True,
                     p.high_watermark, p.log_start_offset, p.open_txn_first_offsets, remotes)


# ---------------------------------------------------------------------------------------
# Derived quantities
# ---------------------------------------------------------------------------------------


def log_end_offset(partition: Partition) -> int:
    """The local LEO (``Log.logEndOffset``): the offset the next appended record gets."""
    return len(partition.log)


def is_leader(partition: Partition) -> bool:
    """Whether this broker leads the partition (Kafka's ``leaderReplicaIfLocal.isDefined``)."""
    return partition.leader == partition.local_broker_id


def last_stable_offset(partition: Partition) -> int:
    """The LSO: the first offset of the oldest open transaction, else the high watermark.

    Kafka's ``Log.lastStableOffset`` (``firstUnstableOffset`` capped by HW).  Shortcut: a
    transaction is just the first offset it wrote; markers and aborted-transaction indexes
    are not modelled.
    """
    if not partition.open_txn_first_offsets:
        return partition.high_watermark
    return min(min(partition.open_txn_first_offsets), partition.high_watermark)


def low_watermark(partition: Partition) -> int:
    """The LW: the smallest log start offset over the assigned replicas, as the leader knows.

    Kafka's ``Partition.lowWatermarkIfLeader``; remotes whose log start is still unknown
    are skipped (Kafka skips replicas with an unknown LEO).  On a follower it is the local
    log start offset.
    """
    known = [r.log_start_offset for r in partition.remotes if r.log_start_offset >= 0]
    return min([partition.log_start_offset, *known])


def remote(partition: Partition, broker_id: int) -> RemoteReplica | None:
    """The leader's record of follower ``broker_id`` (Kafka's ``getReplica``), if any."""
    for replica in partition.remotes:
        if replica.broker_id == broker_id:
            return replica
    return None


def consumer_lag(partition: Partition, committed_offset: int, read_committed: bool) -> int:
    """Consumer lag: HW - committed (read_uncommitted) or LSO - committed (read_committed).

    Kafka's lag formula; the result may be negative if the committed offset is past the
    bound (a consumer that read ahead of a truncation), which Kafka reports as is.
    """
    bound = last_stable_offset(partition) if read_committed else partition.high_watermark
    return bound - committed_offset


def records(ids: tuple[int, ...], epoch: int) -> Log:
    """Records with the given ids, all written in leader epoch ``epoch``."""
    return tuple(Record(i, epoch) for i in ids)


# ---------------------------------------------------------------------------------------
# Validation: every public function rejects ill-formed arguments with these
# ---------------------------------------------------------------------------------------


def replica_set_problem(
    replicas: tuple[int, ...], isr: tuple[int, ...] | frozenset[int]
) -> InvalidInput | None:
    """The plain-value form of ``check_replica_set``: what is wrong, ``None`` if nothing."""
    if any(r < 0 for r in replicas):
        return InvalidInput(Problem.NEGATIVE_VALUE,
                            f"replica ids {list(replicas)} contain a negative")
    if len(set(replicas)) != len(replicas):
        return InvalidInput(Problem.DUPLICATE_REPLICA, f"assigned replicas {list(replicas)}")
    isr_list = sorted(isr) if isinstance(isr, frozenset) else list(isr)
    if len(set(isr_list)) != len(isr_list):
        return InvalidInput(Problem.DUPLICATE_REPLICA, f"ISR {isr_list}")
    if not set(isr_list) <= set(replicas):
        return InvalidInput(
            Problem.ISR_NOT_SUBSET_OF_AR, f"ISR {isr_list} vs assigned {list(replicas)}"
        )
    return None


def check_replica_set(
    replicas: tuple[int, ...], isr: tuple[int, ...] | frozenset[int]
) -> Result[None, InvalidInput]:
    """Replica ids are non-negative and unique, and the ISR is a subset of them."""
    problem = replica_set_problem(replicas, isr)
    return Success(None) if problem is None else Failure(problem)


def partition_state_problem(state: PartitionState) -> InvalidInput | None:
    """The plain-value form of ``check_partition_state``: what is wrong, ``None`` if
    nothing (no ``Result`` allocation, for hot loops)."""
    if min(state.controller_epoch, state.leader_epoch, state.zk_version) < 0:
        return InvalidInput(Problem.NEGATIVE_VALUE, f"epochs/version in {state}")
    problem = replica_set_problem(state.replicas, state.isr)
    if problem is None and state.leader != NO_LEADER:
        if not state.isr:
            return InvalidInput(Problem.EMPTY_ISR, f"leader {state.leader} with an empty ISR")
        if state.leader not in state.isr:
            return InvalidInput(
                Problem.LEADER_NOT_IN_ISR, f"leader {state.leader}, ISR {list(state.isr)}"
            )
    return problem


def check_partition_state(state: PartitionState) -> Result[PartitionState, InvalidInput]:
    """A LeaderAndIsr partition state is well formed (epochs >= 0, ISR ⊆ AR, leader ∈ ISR).

    The leader may be ``NO_LEADER`` (a partition whose replicas are all down); then the ISR
    may be anything within AR.  Otherwise the leader must be in a non-empty ISR.
    """
    problem = partition_state_problem(state)
    return Success(state) if problem is None else Failure(problem)


def _replica_problem(p: Partition) -> InvalidInput | None:
    replicas = p.assigned_replicas
    assigned = frozenset(replicas)
    if any(r < 0 for r in replicas):
        return InvalidInput(Problem.NEGATIVE_VALUE, f"replica ids {list(replicas)} of {p.tp}")
    if len(assigned) != len(replicas):
        return InvalidInput(Problem.DUPLICATE_REPLICA, f"assigned replicas {list(replicas)}")
    if not p.isr <= assigned:
        return InvalidInput(
            Problem.ISR_NOT_SUBSET_OF_AR, f"ISR {sorted(p.isr)} vs assigned {list(replicas)}"
        )
    return None


def _offset_problem(p: Partition) -> InvalidInput | None:
    leo = len(p.log)
    hw = p.high_watermark
    if hw < 0 or p.log_start_offset < 0 or p.controller_epoch < 0:
        return InvalidInput(Problem.NEGATIVE_VALUE, f"offsets/epochs of partition {p.tp}")
    if hw > leo:
        return InvalidInput(Problem.HW_ABOVE_LEO, f"HW {hw} > LEO {leo} in {p.tp}")
    if p.log_start_offset > hw:
        return InvalidInput(
            Problem.LOG_START_ABOVE_HW, f"log start {p.log_start_offset} > HW {hw} in {p.tp}"
        )
    if p.open_txn_first_offsets and any(not 0 <= o < leo for o in p.open_txn_first_offsets):
        return InvalidInput(Problem.OFFSET_OUT_OF_LOG, f"open transaction offsets in {p.tp}")
    return None


def _role_problem(p: Partition) -> InvalidInput | None:
    local = p.local_broker_id
    if p.log_created and p.assigned_replicas and local not in p.assigned_replicas:
        return InvalidInput(Problem.NOT_A_REPLICA, f"broker {local} hosts {p.tp}")
    if p.leader != local:
        if p.remotes:
            return InvalidInput(Problem.BAD_REMOTE_REPLICAS, f"follower of {p.tp} tracks remotes")
        return None
    if not p.isr:
        return InvalidInput(Problem.EMPTY_ISR, f"leader of {p.tp}")
    if local not in p.isr:
        return InvalidInput(Problem.LEADER_NOT_IN_ISR, f"leader {local} of {p.tp}")
    expected = sorted(r for r in p.assigned_replicas if r != local)
    if [r.broker_id for r in p.remotes] != expected:
        return InvalidInput(Problem.BAD_REMOTE_REPLICAS, f"{p.tp}: expected remotes {expected}")
    if any(r.log_end_offset < UNKNOWN_OFFSET for r in p.remotes):
        return InvalidInput(Problem.NEGATIVE_VALUE, f"a remote LEO below -1 in {p.tp}")
    return None


def partition_problem(partition: Partition) -> InvalidInput | None:
    """The first structural invariant ``partition`` breaks, ``None`` if it is well formed.

    The plain-value form of ``check_partition`` for hot loops (no ``Result`` allocation).
    """
    return (
        _replica_problem(partition) or _offset_problem(partition) or _role_problem(partition)
    )


def check_partition(partition: Partition) -> Result[Partition, InvalidInput]:
    """The partition satisfies every structural invariant ``core`` relies on.

    Offsets non-negative; log start <= HW <= LEO (hence LSO <= HW); ISR ⊆ AR with unique
    ids; a leader is in its non-empty ISR and tracks exactly the other assigned replicas;
    a follower tracks none.  Every transition of ``core`` checks its partition argument
    with this first and preserves it.
    """
    problem = partition_problem(partition)
    return Success(partition) if problem is None else Failure(problem)
