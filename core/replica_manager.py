"""``ReplicaManager``: one broker's partitions and its handling of LeaderAndIsr.

``ReplicaManager`` is the broker-wide state: the controller epoch it last accepted, its
hosted partitions (online ones as ``Partition`` values, offline ones by name), the
fetchers it runs, whether the HW checkpoint thread runs, and its ISR-change bookkeeping.
``become_leader_or_follower`` handles a whole LeaderAndIsr request; the other functions
lift ``isrlab.core.isr``/``isrlab.core.propagation`` steps to the broker and record ISR changes.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, replace

from returns.result import Failure, Result, Success

from isrlab.core.errors import Errors, InvalidInput, Problem, reject
from isrlab.core.isr import IsrUpdate, LogReadResult, maybe_shrink_isr, update_follower_fetch
from isrlab.core.metadata_cache import (
    MetadataSnapshot,
    UpdateMetadataRequest,
    alive_broker_ids,
    update_metadata,
)
from isrlab.core.partition import (
    TruncationRule,
    create_log_if_not_exists,
    make_follower_unchecked,
    make_leader_unchecked,
    truncate_to_high_watermark,
)
from isrlab.core.propagation import IsrChangeState, maybe_propagate_isr_changes, record_isr_change
from isrlab.core.state import (
    Partition,
    PartitionState,
    TopicPartition,
    partition_problem,
    partition_state_problem,
)
from isrlab.core.truncation import Log

NO_ISR_CHANGES = IsrChangeState()
"""The ISR-change bookkeeping of a broker started at time 0."""

HW_CHECKPOINT_INTERVAL_MS = 5000
"""``replica.high.watermark.checkpoint.interval.ms``: the HW checkpoint thread's period."""


@dataclass(frozen=True, slots=True, order=True)
class FetcherEntry:
    """One partition a replica fetcher follows: from which leader, from which offset."""

    tp: TopicPartition
    leader: int
    fetch_offset: int


@dataclass(frozen=True, slots=True)
class ReplicaManager:
    """One broker's replica manager (the parts docs/protocol.md describes).

    ``partitions`` holds the Online partitions sorted by ``tp``; ``offline`` the partitions
    whose log directory failed (``HostedPartition.Offline``); ``fetchers`` the
    ``ReplicaFetcherManager``'s assignments, sorted.
    """

    local_broker_id: int
    controller_epoch: int = 0
    partitions: tuple[Partition, ...] = ()
    offline: frozenset[TopicPartition] = frozenset()
    fetchers: tuple[FetcherEntry, ...] = ()
    hw_checkpoint_thread_started: bool = False
    shutting_down: bool = False
    isr_changes: IsrChangeState = NO_ISR_CHANGES


@dataclass(frozen=True, slots=True)
class LeaderAndIsrRequest:
    """A LeaderAndIsr request: controller id and epoch, and one state per partition."""

    controller_id: int
    controller_epoch: int
    partition_states: tuple[tuple[TopicPartition, PartitionState], ...]


@dataclass(frozen=True, slots=True)
class LeaderAndIsrResponse:
    """The response: a top-level error and one error per partition (sorted by partition)."""

    error: Errors
    partition_errors: tuple[tuple[TopicPartition, Errors], ...]

    def error_of(self, tp: TopicPartition) -> Errors | None:
        """The error answered for ``tp``, ``None`` if it is not in the response."""
        return next((e for k, e in self.partition_errors if k == tp), None)


@dataclass(frozen=True, slots=True)
class BecomeLeaderOrFollowerResult:
    """Outcome of ``become_leader_or_follower``.

    ``became_leaders``/``became_followers`` are what ``onLeadershipChange`` receives (the
    partitions whose role really changed); the coordinator uses them for
    ``__consumer_offsets`` (``isrlab.core.coordinator``).
    """

    manager: ReplicaManager
    response: LeaderAndIsrResponse
    became_leaders: tuple[TopicPartition, ...]
    became_followers: tuple[TopicPartition, ...]


LeaderLogs = Callable[[TopicPartition, int], Log]
"""The leader's log for a partition, for epoch-based truncation: ``(tp, leader) -> log``."""


def _no_leader_logs(tp: TopicPartition, leader: int) -> Log:
    return ()


def get_partition(manager: ReplicaManager, tp: TopicPartition) -> Partition | None:
    """``ReplicaManager.getPartition`` for an Online partition, ``None`` otherwise."""
    return next((p for p in manager.partitions if p.tp == tp), None)


def _with_partitions(m: ReplicaManager, partitions: tuple[Partition, ...]) -> ReplicaManager:
    # replace(m, partitions=partitions) as one constructor call (the fields' order)
    return ReplicaManager(m.local_broker_id, m.controller_epoch, partitions, m.offline,
                          m.fetchers, m.hw_checkpoint_thread_started, m.shutting_down,
                          m.isr_changes)


def _with_fetchers(m: ReplicaManager, fetchers: tuple[FetcherEntry, ...]) -> ReplicaManager:
    # replace(m, fetchers=fetchers) as one constructor call (the fields' order)
    return ReplicaManager(m.local_broker_id, m.controller_epoch, m.partitions, m.offline,
                          fetchers, m.hw_checkpoint_thread_started, m.shutting_down,
                          m.isr_changes)


def _partition_tp(p: Partition) -> TopicPartition:
    return p.tp


def put_partition(manager: ReplicaManager, partition: Partition) -> ReplicaManager:
    """The manager with ``partition`` added or replaced (kept sorted by ``tp``). Total."""
    others = [p for p in manager.partitions if p.tp != partition.tp]
    return _with_partitions(manager, tuple(sorted([*others, partition], key=_partition_tp)))


def mark_partition_offline(manager: ReplicaManager, tp: TopicPartition) -> ReplicaManager:
    """``ReplicaManager.markPartitionOffline``: the partition's log directory failed.

    The partition leaves the Online set (its state is dropped) and joins ``offline``; its
    fetcher stops.  Later LeaderAndIsr requests answer ``KAFKA_STORAGE_ERROR`` for it.
    Total (marking an unknown partition just records it as offline).
    """
    online = tuple(p for p in manager.partitions if p.tp != tp)
    fetchers = tuple(f for f in manager.fetchers if f.tp != tp)
    return replace(manager, partitions=online, offline=manager.offline | {tp}, fetchers=fetchers)


def _request_problem(
    manager: ReplicaManager, request: LeaderAndIsrRequest, now_ms: int
) -> InvalidInput | None:
    """What ``become_leader_or_follower`` rejects in its arguments (``None``: nothing):
    ``make_leader``'s and ``make_follower``'s checks for every partition at once."""
    if min(request.controller_epoch, now_ms) < 0:
        return InvalidInput(Problem.NEGATIVE_VALUE,
                            f"controller epoch {request.controller_epoch}")
    keys = [tp for tp, _ in request.partition_states]
    if len(set(keys)) != len(keys):
        return InvalidInput(Problem.DUPLICATE_PARTITION, "in the LeaderAndIsr request")
    for _, state in request.partition_states:
        problem = partition_state_problem(state)
        if problem is not None:
            return problem
    for partition in manager.partitions:
        problem = partition_problem(partition)
        if problem is not None:
            return problem
    return None


@dataclass(slots=True)
class _Step:
    """The mutable scratch pad of one request (local to ``become_leader_or_follower``)."""

    manager: ReplicaManager
    errors: dict[TopicPartition, Errors]
    leaders: list[TopicPartition]
    followers: list[TopicPartition]


def _set_fetcher(manager: ReplicaManager, tp: TopicPartition, entry: FetcherEntry | None
                 ) -> ReplicaManager:
    kept = [f for f in manager.fetchers if f.tp != tp]
    if entry is not None:
        kept.append(entry)
    return _with_fetchers(manager, tuple(sorted(kept)))


def _become_leader(
    step: _Step, p: Partition, state: PartitionState, now_ms: int, hw_lag_ms: int | None,
    reset_on_epoch: bool,
) -> None:
    # what make_leader checks, the caller has (_request_problem, _accepted_states)
    result = make_leader_unchecked(p, state, now_ms, hw_lag_ms, reset_on_epoch)
    step.manager = _set_fetcher(put_partition(step.manager, result.partition), p.tp, None)
    if result.is_new_leader:
        step.leaders.append(p.tp)


def _become_follower(
    step: _Step, p: Partition, state: PartitionState, alive: frozenset[int],
    rule: TruncationRule, leader_logs: LeaderLogs,
) -> None:
    if state.leader < 0 or state.leader not in alive:
        # KAFKA-1647: create the log so its HW is checkpointed, but do not follow.
        step.manager = put_partition(step.manager, create_log_if_not_exists(p))
        return
    # what make_follower checks, the caller has (_request_problem, _accepted_states); a
    # leader that is not NO_LEADER is in the ISR, hence in the replicas
    result = make_follower_unchecked(p, state, rule, leader_logs(p.tp, state.leader))
    step.manager = put_partition(step.manager, result.partition)
    if not result.leader_changed:
        return
    step.followers.append(p.tp)
    fetcher = None
    if not step.manager.shutting_down:
        fetcher = FetcherEntry(p.tp, state.leader, result.fetch_offset)
    step.manager = _set_fetcher(step.manager, p.tp, fetcher)


def _accepted_states(
    step: _Step, request: LeaderAndIsrRequest
) -> list[tuple[Partition, PartitionState]]:
    accepted: list[tuple[Partition, PartitionState]] = []
    local = step.manager.local_broker_id
    for tp, state in request.partition_states:
        if tp in step.manager.offline:
            step.errors[tp] = Errors.KAFKA_STORAGE_ERROR
            continue
        partition = get_partition(step.manager, tp)
        if partition is None:
            partition = Partition(tp, local)
            step.manager = put_partition(step.manager, partition)
        if partition.leader_epoch >= state.leader_epoch:
            step.errors[tp] = Errors.STALE_CONTROLLER_EPOCH
        elif local not in state.replicas:
            step.errors[tp] = Errors.UNKNOWN_TOPIC_OR_PARTITION
        else:
            step.errors[tp] = Errors.NONE
            accepted.append((partition, state))
    return accepted


def _response(error: Errors, errors: dict[TopicPartition, Errors]) -> LeaderAndIsrResponse:
    return LeaderAndIsrResponse(error, tuple(sorted(errors.items())))


def become_leader_or_follower(
    manager: ReplicaManager,
    request: LeaderAndIsrRequest,
    metadata: MetadataSnapshot,
    now_ms: int,
    rule: TruncationRule = truncate_to_high_watermark,
    leader_logs: LeaderLogs = _no_leader_logs,
    authorized: bool = True,
    hw_lag_ms: int | None = None,
    reset_on_epoch: bool = False,
) -> Result[BecomeLeaderOrFollowerResult, InvalidInput]:
    """``KafkaApis.handleLeaderAndIsrRequest`` + ``ReplicaManager.becomeLeaderOrFollower``.

    Outcomes, all as values: not ``authorized`` for ClusterAction -> every partition
    ``CLUSTER_AUTHORIZATION_FAILED``; a request controller epoch below the broker's -> the
    whole request ``STALE_CONTROLLER_EPOCH``, nothing changes.  Otherwise the broker adopts
    the request's controller epoch and, per partition: offline log dir ->
    ``KAFKA_STORAGE_ERROR``; unknown partition -> created; leader epoch not newer ->
    ignored, ``STALE_CONTROLLER_EPOCH`` (the older code's answer); broker not in the
    replicas -> ``UNKNOWN_TOPIC_OR_PARTITION``; else ``NONE`` and ``make_leader`` or
    ``make_follower`` (a follower of a leader that is not alive in ``metadata`` only gets
    its log created).  Leaders' fetchers are removed; changed followers fetch from the
    new leader at ``fetch_offset`` (not when shutting down).  The HW checkpoint thread is
    started.  Shortcuts: ``authorized`` is the ACL check's result; local logs never turn
    out missing (the markPartitionOffline step); leader-epoch truncation reads
    ``leader_logs`` atomically.  ``hw_lag_ms`` is ``make_leader``'s (KAFKA-4485's HW rule),
    ``reset_on_epoch`` too (a fix no release has: reset the remotes on an epoch change).
    """
    if hw_lag_ms is not None and hw_lag_ms < 0:
        return reject(Problem.NEGATIVE_VALUE, f"lag {hw_lag_ms}")
    problem = _request_problem(manager, request, now_ms)
    if problem is not None:
        return Failure(problem)
    if not authorized:
        denied = {tp: Errors.CLUSTER_AUTHORIZATION_FAILED for tp, _ in request.partition_states}
        response = _response(Errors.CLUSTER_AUTHORIZATION_FAILED, denied)
        return Success(BecomeLeaderOrFollowerResult(manager, response, (), ()))
    if request.controller_epoch < manager.controller_epoch:
        response = _response(Errors.STALE_CONTROLLER_EPOCH, {})
        return Success(BecomeLeaderOrFollowerResult(manager, response, (), ()))
    adopted = ReplicaManager(manager.local_broker_id, request.controller_epoch,
                             manager.partitions, manager.offline, manager.fetchers,
                             manager.hw_checkpoint_thread_started, manager.shutting_down,
                             manager.isr_changes)  # replace(manager, controller_epoch=...)
    step = _Step(adopted, {}, [], [])
    accepted = _accepted_states(step, request)
    alive = alive_broker_ids(metadata)
    local = manager.local_broker_id
    for partition, state in accepted:
        if state.leader == local:
            _become_leader(step, partition, state, now_ms, hw_lag_ms, reset_on_epoch)
    for partition, state in accepted:
        if state.leader != local:
            _become_follower(step, partition, state, alive, rule, leader_logs)
    m = step.manager
    final = ReplicaManager(m.local_broker_id, m.controller_epoch, m.partitions, m.offline,
                           m.fetchers, True, m.shutting_down,
                           m.isr_changes)  # replace(m, hw_checkpoint_thread_started=True)
    return Success(
        BecomeLeaderOrFollowerResult(
            final, _response(Errors.NONE, step.errors), tuple(step.leaders),
            tuple(step.followers),
        )
    )


# ---------------------------------------------------------------------------------------
# Broker-level ISR steps
# ---------------------------------------------------------------------------------------


def _apply_isr_update(
    manager: ReplicaManager, update: IsrUpdate, now_ms: int
) -> ReplicaManager:
    updated = put_partition(manager, update.partition)
    if not update.isr_changed:
        return updated
    changes = record_isr_change(manager.isr_changes, update.partition.tp, now_ms)
    return replace(updated, isr_changes=changes)


@dataclass(frozen=True, slots=True)
class ManagerUpdate:
    """A broker-level step's outcome: the new manager and the partition-level update."""

    manager: ReplicaManager
    update: IsrUpdate


def _partition_or_reject(
    manager: ReplicaManager, tp: TopicPartition
) -> Result[Partition, InvalidInput]:
    partition = get_partition(manager, tp)
    if partition is None:
        return reject(Problem.NOT_A_REPLICA, f"broker {manager.local_broker_id} hosts no {tp}")
    return Success(partition)


def update_follower_log_read_results(
    manager: ReplicaManager, tp: TopicPartition, replica_id: int, read: LogReadResult,
    now_ms: int, since_previous_fetch: bool = False, hw_lag_ms: int | None = None,
) -> Result[ManagerUpdate, InvalidInput]:
    """``ReplicaManager.updateFollowerLogReadResults`` for one partition of a fetch.

    ``isrlab.core.isr.update_follower_fetch`` on the hosted partition, recording an ISR expansion
    in the broker's ISR-change set at ``now_ms`` (``since_previous_fetch`` and ``hw_lag_ms``:
    KAFKA-4485's rules, Kafka 0.10.2+).  An unknown partition is rejected
    (Kafka only logs a warning; a model should not send such a fetch).
    """
    return (
        _partition_or_reject(manager, tp)
        .bind(lambda p: update_follower_fetch(p, replica_id, read, since_previous_fetch,
                                              hw_lag_ms=hw_lag_ms))
        .map(lambda u: ManagerUpdate(_apply_isr_update(manager, u, now_ms), u))
    )


def maybe_shrink_isr_all(
    manager: ReplicaManager, now_ms: int, replica_lag_time_max_ms: int, kafka_4485: bool = False,
    kafka_7152: bool = False,
) -> Result[ReplicaManager, InvalidInput]:
    """``ReplicaManager.maybeShrinkIsr``: run ``Partition.maybeShrinkIsr`` on every partition.

    Each shrink is recorded in the ISR-change set at ``now_ms``.  Non-leaders are skipped.
    ``kafka_4485``: the HW after a shrink also waits for caught-up followers (0.10.2+);
    ``kafka_7152``: a follower at the leader's LEO stays (2.1+).
    """
    current = manager
    for partition in manager.partitions:
        shrunk = maybe_shrink_isr(partition, now_ms, replica_lag_time_max_ms, kafka_4485,
                                  kafka_7152)
        if isinstance(shrunk, Failure):
            return Failure(shrunk.failure())
        current = _apply_isr_update(current, shrunk.unwrap(), now_ms)
    return Success(current)


def maybe_propagate_isr_changes_of(
    manager: ReplicaManager, now_ms: int
) -> tuple[ReplicaManager, frozenset[TopicPartition] | None]:
    """``ReplicaManager.maybePropagateIsrChanges`` on this broker's bookkeeping.

    Returns the manager and the notification written (``None`` if none).  Total.
    """
    outcome = maybe_propagate_isr_changes(manager.isr_changes, now_ms)
    return replace(manager, isr_changes=outcome.state), outcome.notification


def restart_replica_manager(
    local_broker_id: int, hosted: Iterable[tuple[TopicPartition, Log, int]]
) -> Result[ReplicaManager, InvalidInput]:
    """A broker after a crash and restart: its logs and checkpointed HWs, nothing else.

    Kafka rebuilds ``allPartitions`` from LeaderAndIsr requests; until one arrives a
    partition has its recovered log and the HW from the checkpoint file (capped at the
    LEO) but no leader, epoch or ISR, and the broker knows no controller epoch.
    ``hosted`` lists ``(tp, log, checkpointed_hw)``.  Shortcut: the whole log survives the
    crash (no unflushed tail is lost).
    """
    partitions = []
    for tp, log, hw in hosted:
        if hw < 0:
            return reject(Problem.NEGATIVE_VALUE, f"checkpointed HW {hw} of {tp}")
        capped = min(hw, len(log))
        partitions.append(Partition(tp, local_broker_id, log=log, log_created=True,
                                    high_watermark=capped))
    if len({p.tp for p in partitions}) != len(partitions):
        return reject(Problem.DUPLICATE_PARTITION, "in the restarted broker's logs")
    return Success(ReplicaManager(local_broker_id, partitions=tuple(sorted(
        partitions, key=lambda p: p.tp))))


@dataclass(frozen=True, slots=True)
class MetadataUpdate:
    """Outcome of ``maybe_update_metadata_cache``: manager, snapshot, error, deletions."""

    manager: ReplicaManager
    snapshot: MetadataSnapshot
    error: Errors
    deleted_partitions: tuple[TopicPartition, ...] = ()


def maybe_update_metadata_cache(
    manager: ReplicaManager, snapshot: MetadataSnapshot, request: UpdateMetadataRequest
) -> Result[MetadataUpdate, InvalidInput]:
    """``ReplicaManager.maybeUpdateMetadataCache``: apply an UpdateMetadata unless stale.

    A request from an older controller epoch than the broker knows answers
    ``STALE_CONTROLLER_EPOCH`` and changes nothing; otherwise the broker adopts the epoch
    and ``update_metadata`` builds the next snapshot.  (Kafka has done
    this since UpdateMetadata exists, 0.8.0: ``KafkaApis.handleUpdateMetadataRequest``,
    from 0.8.2 in ``ReplicaManager.maybeUpdateMetadataCache``.)
    """
    if request.controller_epoch < 0:
        return reject(Problem.NEGATIVE_VALUE, f"controller epoch {request.controller_epoch}")
    if request.controller_epoch < manager.controller_epoch:
        return Success(MetadataUpdate(manager, snapshot, Errors.STALE_CONTROLLER_EPOCH))
    adopted = replace(manager, controller_epoch=request.controller_epoch)
    return update_metadata(snapshot, request, manager.local_broker_id).map(
        lambda r: MetadataUpdate(adopted, r.snapshot, Errors.NONE, r.deleted_partitions)
    )


def checkpoint_high_watermarks(manager: ReplicaManager) -> tuple[tuple[TopicPartition, int], ...]:
    """``checkpointHighWatermarks``: the (partition, HW) pairs written every 5 s.

    Only partitions with a local log; the caller decides when (``HW_CHECKPOINT_INTERVAL_MS``)
    and where to keep them.  Total.
    """
    return tuple((p.tp, p.high_watermark) for p in manager.partitions if p.log_created)
