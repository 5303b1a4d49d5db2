"""Asynchronous ISR changes: KIP-497 AlterIsr (Kafka 2.7+), later AlterPartition (3.2+).

Before 2.7 a leader wrote its new ISR to ZooKeeper itself (``isrlab.core.isr``).  From 2.7 the
leader *proposes* the change to the controller and keeps it pending until the answer
comes back; at most one proposal per partition is in flight.  Kafka's names:

* the leader's ISR state (``Partition.isrState`` in 2.7-3.1, ``partitionState`` in 3.2+):
  ``CommittedIsr`` / ``CommittedPartitionState``, ``PendingExpandIsr``,
  ``PendingShrinkIsr`` -- here ``IsrState`` with an optional ``PendingIsrChange``;
* ``maximalIsr``: the committed ISR plus a pending addition (a pending shrink keeps the
  committed, larger set) -- the ISR Kafka uses for the high watermark and acks=all, so
  that no replica the controller may already count as in sync is behind the HW;
* the request (``AlterIsrManager`` / ``AlterPartitionManager``), the controller's answer
  (``KafkaController.processAlterIsr`` in ZooKeeper mode 2.7-3.x,
  ``ReplicationControlManager.alterPartition`` in KRaft) and the leader's handling of it
  (``Partition.handleAlterIsrResponse`` / ``handleAlterPartitionResponse``).

Shortcuts: one partition per request (Kafka batches them); the partition epoch is
ZooKeeper's ``zkVersion`` in ZooKeeper mode and KRaft's ``partitionEpoch``, one int here;
the leader recovery state (KIP-704) is not modelled; "the broker is fenced or offline"
and "it is shutting down" are sets the caller passes in.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, replace
from enum import Enum, unique

from returns.result import Result, Success

from isrlab.core.errors import Errors, InvalidInput, Problem, reject
from isrlab.core.isr import (
    LogReadResult,
    get_out_of_sync_replicas,
    may_join_isr,
    update_log_read_result,
)
from isrlab.core.produce import AcksCheck
from isrlab.core.state import LeaderAndIsr, Partition, is_leader


@unique
class HwIsr(Enum):
    """Which ISR a leader with a pending change uses for its HW and for acks=all.

    ``MAXIMAL`` is Kafka (2.7+: ``isrState.maximalIsr``); ``COMMITTED`` is the committed
    ISR only, the naive rule KIP-497's design rejected (checkable as a fault).
    """

    COMMITTED = "committed"
    MAXIMAL = "maximal"


@dataclass(frozen=True, slots=True)
class PendingIsrChange:
    """A proposal in flight: ``PendingExpandIsr`` (one replica) or ``PendingShrinkIsr``.

    ``proposed_isr`` is the ISR sent; ``expanding`` whether it adds a replica (then
    ``proposed_isr`` is the committed ISR plus one), else it removes some.
    """

    proposed_isr: frozenset[int]
    expanding: bool


@dataclass(frozen=True, slots=True)
class IsrState:
    """The leader's ISR state: the committed ISR, its partition epoch, and any pending change.

    ``partition_epoch`` is the version the committed ISR was read at (``zkVersion`` /
    ``partitionEpoch``); a pending change was proposed against it.
    """

    isr: frozenset[int]
    partition_epoch: int
    pending: PendingIsrChange | None = None

    @property
    def is_inflight(self) -> bool:
        """Kafka's ``isInflight``: a proposal awaits the controller's answer."""
        return self.pending is not None


@dataclass(frozen=True, slots=True)
class AlterPartitionRequest:
    """One partition of an AlterIsr / AlterPartition request (``AlterPartitionRequestData``).

    ``broker_id`` / ``broker_epoch`` identify the sending leader; ``partition_epoch`` is the
    version its proposal was based on.
    """

    broker_id: int
    broker_epoch: int
    leader_epoch: int
    new_isr: tuple[int, ...]
    partition_epoch: int


@dataclass(frozen=True, slots=True)
class AlterPartitionResponse:
    """The controller's answer: an error, or ``NONE`` and the partition's new state."""

    error: Errors
    leader_and_isr: LeaderAndIsr | None = None


@dataclass(frozen=True, slots=True)
class IsrProposal:
    """Outcome of ``prepare_isr_expand`` / ``prepare_isr_shrink``: the new state, the request.

    ``request`` is ``None`` when nothing is sent (a change already in flight, or nothing
    to change).
    """

    state: IsrState
    request: AlterPartitionRequest | None


@dataclass(frozen=True, slots=True)
class ResponseOutcome:
    """Outcome of ``handle_alter_partition_response``: the new state and whether to retry."""

    state: IsrState
    retry: bool = False


def committed_isr_state(isr: Iterable[int], partition_epoch: int) -> IsrState:
    """``CommittedIsr(isr)``: the state a LeaderAndIsr (or a metadata update) installs.

    ``Partition.makeLeader`` (2.7+) replaces any pending change with the controller's ISR
    and version.  Total.
    """
    return IsrState(frozenset(isr), partition_epoch)


def maximal_isr(state: IsrState) -> frozenset[int]:
    """``IsrState.maximalIsr``: committed ∪ a pending addition; a pending shrink keeps all.

    2.7: ``PendingExpandIsr.maximalIsr = isr + newInSyncReplicaId``, ``PendingShrinkIsr
    .maximalIsr = isr`` (the committed, larger set).  Total.
    """
    if state.pending is not None and state.pending.expanding:
        return state.isr | state.pending.proposed_isr
    return state.isr


def hw_isr(state: IsrState, rule: HwIsr = HwIsr.MAXIMAL) -> frozenset[int]:
    """The ISR the leader uses for its HW and for acks=all under ``rule``. Total."""
    return maximal_isr(state) if rule is HwIsr.MAXIMAL else state.isr


def _check_leader_state(
    partition: Partition, state: IsrState
) -> Result[Partition, InvalidInput]:
    if not is_leader(partition):
        return reject(Problem.WRONG_ROLE, f"broker {partition.local_broker_id} does not lead")
    assigned = frozenset(partition.assigned_replicas)
    proposed = state.pending.proposed_isr if state.pending else frozenset()
    if not (state.isr | proposed) <= assigned:
        return reject(Problem.ISR_NOT_SUBSET_OF_AR,
                      f"ISR {sorted(state.isr | proposed)} vs {list(assigned)}")
    if partition.local_broker_id not in state.isr:
        return reject(Problem.LEADER_NOT_IN_ISR, f"ISR {sorted(state.isr)}")
    if state.partition_epoch < 0:
        return reject(Problem.NEGATIVE_VALUE, f"partition epoch {state.partition_epoch}")
    return Success(partition)


def leader_hw_with_isr_state(
    partition: Partition, state: IsrState, rule: HwIsr = HwIsr.MAXIMAL
) -> Result[int, InvalidInput]:
    """``Partition.maybeIncrementLeaderHW`` (2.7+): HW over ``hw_isr(state, rule)``.

    The new HW is the smallest LEO over the chosen ISR (the leader's own LEO and the
    remotes' as it knows them; an unknown remote LEO counts as -1), and it never moves
    back.  Kafka 2.7+ uses the maximal ISR.  Shortcut: the 2.8+ rule that also counts
    caught-up replicas outside the ISR is left out (as in ``isrlab.core.partition``).
    """
    def hw(p: Partition) -> int:
        members = hw_isr(state, rule)
        leos = [len(p.log)] + [r.log_end_offset for r in p.remotes if r.broker_id in members]
        return max(p.high_watermark, min(leos))

    return _check_leader_state(partition, state).map(hw)


def enough_replicas_reach_offset(
    state: IsrState, high_watermark: int, required_offset: int, min_insync_replicas: int,
    rule: HwIsr = HwIsr.MAXIMAL,
) -> AcksCheck:
    """``Partition.checkEnoughReplicasReachOffset`` (2.7+): is an acks=all write done?

    Done once the HW has passed ``required_offset``; then ``NONE`` if the ISR of ``rule``
    (Kafka: ``maximalIsr``) still has ``min_insync_replicas`` members, else
    ``NOT_ENOUGH_REPLICAS_AFTER_APPEND``.  Not done: ``AcksCheck(False, NONE)``.  Total.
    """
    if high_watermark < required_offset:
        return AcksCheck(False, Errors.NONE)
    if len(hw_isr(state, rule)) >= min_insync_replicas:
        return AcksCheck(True, Errors.NONE)
    return AcksCheck(True, Errors.NOT_ENOUGH_REPLICAS_AFTER_APPEND)


def _request(partition: Partition, state: IsrState, new_isr: frozenset[int],
             broker_epoch: int) -> AlterPartitionRequest:
    return AlterPartitionRequest(partition.local_broker_id, broker_epoch,
                                 partition.leader_epoch, tuple(sorted(new_isr)),
                                 state.partition_epoch)


def prepare_isr_expand(
    partition: Partition, state: IsrState, replica_id: int, broker_epoch: int = 0
) -> Result[IsrProposal, InvalidInput]:
    """``Partition.maybeExpandIsr`` → ``prepareIsrExpand`` (2.7+): propose adding a follower.

    Nothing is sent while a change is in flight (``needsExpandIsr`` checks
    ``!isInflight``) or when the follower is already in the ISR; the caller decides that it
    is caught up (``isrlab.core.isr.may_join_isr``).  Otherwise the state becomes
    ``PendingExpandIsr`` and the request carries committed ∪ {follower} and the committed
    version.  A follower outside the assignment is rejected.
    """
    if replica_id not in partition.assigned_replicas or replica_id == partition.local_broker_id:
        return reject(Problem.NOT_A_REPLICA, f"follower {replica_id} of {partition.tp}")

    def expand(p: Partition) -> IsrProposal:
        if state.is_inflight or replica_id in state.isr:
            return IsrProposal(state, None)
        proposed = state.isr | {replica_id}
        pending = replace(state, pending=PendingIsrChange(proposed, True))
        return IsrProposal(pending, _request(p, state, proposed, broker_epoch))

    return _check_leader_state(partition, state).map(expand)


def prepare_isr_shrink(
    partition: Partition, state: IsrState, out_of_sync: frozenset[int], broker_epoch: int = 0
) -> Result[IsrProposal, InvalidInput]:
    """``Partition.maybeShrinkIsr`` → ``prepareIsrShrink`` (2.7+): propose removing followers.

    Nothing is sent while a change is in flight or when no ISR member is out of sync
    (``isrlab.core.isr.get_out_of_sync_replicas`` decides who is).  Otherwise the state becomes
    ``PendingShrinkIsr``: the committed ISR stays the HW's ISR until the controller
    answers.  Removing the leader itself is rejected (Kafka's assertion).
    """
    if partition.local_broker_id in out_of_sync:
        return reject(Problem.LEADER_NOT_IN_ISR, "the leader cannot shrink itself out")

    def shrink(p: Partition) -> IsrProposal:
        removed = out_of_sync & state.isr
        if state.is_inflight or not removed:
            return IsrProposal(state, None)
        proposed = state.isr - removed
        pending = replace(state, pending=PendingIsrChange(proposed, False))
        return IsrProposal(pending, _request(p, state, proposed, broker_epoch))

    return _check_leader_state(partition, state).map(shrink)


@dataclass(frozen=True, slots=True)
class ControllerView:
    """What the controller knows when it handles an AlterPartition request.

    ``broker_epochs`` maps each registered live broker to its epoch; ``fenced`` are
    fenced (KRaft) or offline (ZooKeeper) brokers, ``shutting_down`` those in controlled
    shutdown.  ``fence_ineligible`` is KIP-841 (3.3+): a proposed ISR holding such a
    broker is refused with ``INELIGIBLE_REPLICA``; before 3.3 it was accepted.  Shortcut:
    KIP-903's broker epochs of the ISR members (3.5+) are not checked.
    """

    broker_epochs: tuple[tuple[int, int], ...]
    fenced: frozenset[int] = frozenset()
    shutting_down: frozenset[int] = frozenset()
    fence_ineligible: bool = True


def _controller_error(current: LeaderAndIsr, replicas: tuple[int, ...],
                      view: ControllerView, request: AlterPartitionRequest) -> Errors:
    epochs = dict(view.broker_epochs)
    if epochs.get(request.broker_id) != request.broker_epoch:
        return Errors.STALE_BROKER_EPOCH
    if request.leader_epoch > current.leader_epoch or request.partition_epoch > current.zk_version:
        return Errors.NOT_CONTROLLER
    if request.leader_epoch < current.leader_epoch:
        return Errors.FENCED_LEADER_EPOCH
    if request.broker_id != current.leader:
        return Errors.INVALID_REQUEST
    if request.partition_epoch < current.zk_version:
        return Errors.INVALID_UPDATE_VERSION
    new_isr = set(request.new_isr)
    if not new_isr <= set(replicas) or current.leader not in new_isr:
        return Errors.INVALID_REQUEST
    ineligible = new_isr & (view.fenced | view.shutting_down | (new_isr - set(epochs)))
    if view.fence_ineligible and ineligible:
        return Errors.INELIGIBLE_REPLICA
    return Errors.NONE


def alter_partition(
    current: LeaderAndIsr, replicas: tuple[int, ...], request: AlterPartitionRequest,
    view: ControllerView,
) -> Result[AlterPartitionResponse, InvalidInput]:
    """The controller's handling of one AlterIsr/AlterPartition partition.

    ``ReplicationControlManager.alterPartition`` / ``validateAlterPartitionData`` (KRaft),
    in its order: a sender whose broker epoch is not the registered one →
    ``STALE_BROKER_EPOCH``; a leader or partition epoch *above* the controller's →
    ``NOT_CONTROLLER`` (this controller is stale); an older leader epoch →
    ``FENCED_LEADER_EPOCH``; a sender that is not the leader → ``INVALID_REQUEST``; an
    older partition epoch → ``INVALID_UPDATE_VERSION``; an ISR outside the replicas or
    without the leader → ``INVALID_REQUEST``; with KIP-841 (``view.fence_ineligible``, 3.3+)
    an ISR holding a fenced, shutting-down or unregistered broker → ``INELIGIBLE_REPLICA``.
    Accepted: the same leader and epoch, the proposed ISR and the version plus one -- or,
    when the ISR is already the proposed one, the current state unchanged (no record
    written).  Shortcuts: ``KafkaController.processAlterIsr`` (ZooKeeper mode, 2.7-3.x)
    checks the same conditions, taken here in KRaft's order; request versions ≤ 1 get
    ``OPERATION_NOT_ATTEMPTED`` instead of ``INELIGIBLE_REPLICA`` (not modelled).
    """
    if min(current.leader_epoch, current.zk_version, request.partition_epoch) < 0:
        return reject(Problem.NEGATIVE_VALUE, f"epochs in {current} / {request}")
    error = _controller_error(current, replicas, view, request)
    if error is not Errors.NONE:
        return Success(AlterPartitionResponse(error))
    if set(request.new_isr) == set(current.isr):
        return Success(AlterPartitionResponse(Errors.NONE, current))
    accepted = LeaderAndIsr(current.leader, current.leader_epoch, request.new_isr,
                            current.zk_version + 1)
    return Success(AlterPartitionResponse(Errors.NONE, accepted))


_REVERT = frozenset({Errors.OPERATION_NOT_ATTEMPTED, Errors.INELIGIBLE_REPLICA})
_GIVE_UP = frozenset({Errors.FENCED_LEADER_EPOCH, Errors.INVALID_UPDATE_VERSION,
                      Errors.UNKNOWN_TOPIC_OR_PARTITION, Errors.INVALID_REQUEST,
                      Errors.NEW_LEADER_ELECTED})


def handle_alter_partition_response(
    state: IsrState, leader_epoch: int, proposed: IsrState, response: AlterPartitionResponse,
) -> ResponseOutcome:
    """``Partition.handleAlterPartitionResponse`` (3.2+; ``handleAlterIsrResponse`` 2.7-3.1).

    A response to a proposal the leader has moved on from (``state != proposed``) is
    ignored.  ``NONE``: the controller's ISR and version are committed, unless it carries
    another leader epoch or an older version (then ignored, still pending).
    ``OPERATION_NOT_ATTEMPTED`` / ``INELIGIBLE_REPLICA``: back to the committed state (the
    request certainly was not applied).  Fencing and version errors: stay pending until
    the next LeaderAndIsr / metadata update resets the state.  Anything else (e.g.
    ``STALE_BROKER_EPOCH``): ``retry``.  Total.
    """
    if state != proposed or not state.is_inflight:
        return ResponseOutcome(state)
    if response.error is Errors.NONE and response.leader_and_isr is not None:
        answer = response.leader_and_isr
        if answer.leader_epoch != leader_epoch or answer.zk_version < state.partition_epoch:
            return ResponseOutcome(state)
        return ResponseOutcome(committed_isr_state(answer.isr, answer.zk_version))
    if response.error in _REVERT:
        return ResponseOutcome(replace(state, pending=None))
    if response.error in _GIVE_UP:
        return ResponseOutcome(state)
    return ResponseOutcome(state, retry=True)


# ---------------------------------------------------------------------------------------
# The leader's steps with asynchronous ISR changes (for a model: one call per step)
# ---------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class AsyncIsrStep:
    """Outcome of a leader step in AlterPartition mode.

    ``partition`` carries the committed ISR in ``isr`` / ``zk_version`` and the new HW;
    ``state`` the ISR state (maybe pending now); ``request`` what to send, if anything.
    """

    partition: Partition
    state: IsrState
    request: AlterPartitionRequest | None = None
    error: Errors = Errors.NONE


def _with_hw(partition: Partition, state: IsrState, rule: HwIsr,
             request: AlterPartitionRequest | None) -> AsyncIsrStep:
    hw = leader_hw_with_isr_state(partition, state, rule).value_or(partition.high_watermark)
    return AsyncIsrStep(replace(partition, high_watermark=hw), state, request)


def update_follower_fetch_async(
    partition: Partition, state: IsrState, replica_id: int, read: LogReadResult,
    rule: HwIsr = HwIsr.MAXIMAL, leader_epoch_start: int | None = None, broker_epoch: int = 0,
) -> Result[AsyncIsrStep, InvalidInput]:
    """``Partition.updateFollowerFetchState`` (2.7+): record the fetch, maybe propose an
    expansion, raise the HW over the ISR of ``rule``.

    The fetch is recorded (``isrlab.core.isr.update_log_read_result``); a follower outside the
    ISR that may join (``isrlab.core.isr.may_join_isr``, with KAFKA-7128's ``leader_epoch_start``
    when given) is proposed (``prepare_isr_expand``: nothing while a change is in flight);
    then the HW.  A failed read or a non-leader changes nothing and reports the error.
    """
    def step(p: Partition) -> Result[AsyncIsrStep, InvalidInput]:
        if read.error is not Errors.NONE:
            return Success(AsyncIsrStep(p, state, error=read.error))
        remotes = tuple(update_log_read_result(r, read) if r.broker_id == replica_id else r
                        for r in p.remotes)
        fetched = replace(p, remotes=remotes)
        follower = next(r for r in remotes if r.broker_id == replica_id)
        joins = replica_id not in state.isr and may_join_isr(
            follower, fetched.high_watermark, leader_epoch_start)
        if not joins:
            return Success(_with_hw(fetched, state, rule, None))
        return prepare_isr_expand(fetched, state, replica_id, broker_epoch).map(
            lambda proposal: _with_hw(fetched, proposal.state, rule, proposal.request))

    if not is_leader(partition):
        return Success(AsyncIsrStep(partition, state, error=Errors.NOT_LEADER_FOR_PARTITION))
    if replica_id not in partition.assigned_replicas or replica_id == partition.local_broker_id:
        return reject(Problem.NOT_A_REPLICA, f"follower {replica_id} of {partition.tp}")
    return _check_leader_state(partition, state).bind(step)


def maybe_shrink_isr_async(
    partition: Partition, state: IsrState, now_ms: int, replica_lag_time_max_ms: int,
    broker_epoch: int = 0,
) -> Result[AsyncIsrStep, InvalidInput]:
    """``Partition.maybeShrinkIsr`` (2.7+): propose removing the out-of-sync followers.

    Out of sync is ``isrlab.core.isr.get_out_of_sync_replicas`` over the committed ISR (Kafka:
    ``partitionState.isr``), with KAFKA-7152's rule (2.1+, so in every AlterPartition
    release: a follower at the leader's LEO stays); nothing while a change is in flight.
    The HW does not move: a pending shrink keeps the committed ISR as the maximal one.
    """
    if min(now_ms, replica_lag_time_max_ms) < 0:
        return reject(Problem.NEGATIVE_VALUE, f"now {now_ms}, lag {replica_lag_time_max_ms}")
    committed = replace(partition, isr=state.isr)
    out = get_out_of_sync_replicas(committed, now_ms, replica_lag_time_max_ms, kafka_7152=True)
    return prepare_isr_shrink(committed, state, out, broker_epoch).map(
        lambda proposal: AsyncIsrStep(committed, proposal.state, proposal.request))


def apply_isr_state(partition: Partition, state: IsrState, rule: HwIsr = HwIsr.MAXIMAL
                    ) -> AsyncIsrStep:
    """The partition after ``handle_alter_partition_response`` (or a new LeaderAndIsr):
    ``isr`` and ``zk_version`` become the committed ones, then the HW is raised (Kafka's
    ``maybeIncrementLeaderHW`` after a committed change).  Total on a leader state the
    other functions produced; an inconsistent one keeps the old HW.
    """
    committed = replace(partition, isr=state.isr, zk_version=state.partition_epoch)
    return _with_hw(committed, state, rule, None)
