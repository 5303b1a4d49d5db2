"""The KRaft controller's AlterPartition: ``ReplicationControlManager.alterPartition`` (3.x-4.x).

A leader proposes a new ISR against the partition epoch it knows; the controller validates the
proposal against its ``PartitionRegistration`` and the broker registrations, and, if valid,
writes the ``PartitionChangeRecord`` that ``PartitionChangeBuilder`` derives.  Kafka's names:

* ``ClusterControlManager.checkBrokerEpoch`` -- the sender's broker epoch, for the whole
  request: ``STALE_BROKER_EPOCH``;
* ``validateAlterPartitionData`` -- ``validate_alter_partition_data``: ``NOT_CONTROLLER`` for
  epochs above the controller's, ``FENCED_LEADER_EPOCH``, ``INVALID_REQUEST`` (not the leader, an
  ISR outside the replicas or without the leader, KIP-704 violations),
  ``INVALID_UPDATE_VERSION`` (partition epoch), ``INELIGIBLE_REPLICA`` /
  ``OPERATION_NOT_ATTEMPTED``;
* ``ineligibleReplicasForIsr`` -- ``ineligible_replicas``: KIP-841 (3.3+: not registered,
  in controlled shutdown, fenced) and KIP-903 (3.5+: the broker epoch the leader saw in the
  member's fetches is not the registered one -- the member restarted, perhaps with an empty
  disk: KAFKA-14139);
* after the record, ``NEW_LEADER_ELECTED`` (request version > 1; ``FENCED_LEADER_EPOCH`` below)
  when the change elected another leader than the sender -- the record is written all the same;
* ``Partition.isReplicaIsrEligible`` -- ``is_replica_isr_eligible``: the leader's own KIP-841 /
  KIP-903 test before it proposes a follower.

Shortcuts: one partition per request; request versions are an int (``< 3``: the ISR carries no
broker epochs, ``-1`` for each, as ``newIsrToSimpleNewIsrWithBrokerEpochs`` does); unknown topics
are the caller's.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from returns.result import Failure, Result, Success

from isrlab.core.elr import LeaderRecoveryState, PartitionRegistration, check_registration
from isrlab.core.errors import Errors, InvalidInput, Problem, reject
from isrlab.core.kraft_metadata import (
    NO_LEADER_CHANGE,
    MetadataImage,
    PartitionChangeRecord,
    active_brokers,
    broker,
)
from isrlab.core.partition_change_builder import BuilderConfig, build
from isrlab.core.state import TopicPartition

NO_BROKER_EPOCH = -1
"""A ``BrokerState`` epoch of -1: "do not check" (requests below version 3, KIP-903)."""


@dataclass(frozen=True, slots=True)
class BrokerState:
    """``AlterPartitionRequestData.BrokerState``: a proposed ISR member and the broker epoch the
    leader last saw in its fetches (KIP-903)."""

    broker_id: int
    broker_epoch: int = NO_BROKER_EPOCH


@dataclass(frozen=True, slots=True)
class KRaftAlterPartitionRequest:
    """One partition of an AlterPartition request as KRaft receives it."""

    broker_id: int
    broker_epoch: int
    leader_epoch: int
    partition_epoch: int
    new_isr: tuple[BrokerState, ...]
    leader_recovery_state: LeaderRecoveryState = LeaderRecoveryState.RECOVERED
    version: int = 3


@dataclass(frozen=True, slots=True)
class AlterPartitionConfig:
    """Version parameters of the controller's checks.

    ``kip841``: Kafka 3.3+ refuses fenced / shutting-down / unregistered ISR members (before:
    accepted).  ``kip903``: Kafka 3.5+ also refuses members whose broker epoch is stale (3.3-3.4
    do not compare it).  ``builder``: the ``PartitionChangeBuilder`` settings of the topic.
    """

    kip841: bool = True
    kip903: bool = True
    builder: BuilderConfig = field(default_factory=BuilderConfig)


@dataclass(frozen=True, slots=True)
class KRaftAlterPartitionResponse:
    """The controller's answer and what it wrote.

    ``error`` is the partition's error (``NONE``: accepted); ``registration`` the state returned
    to the leader on ``NONE`` (leader, ISR, leader epoch, partition epoch, recovery state);
    ``record`` the ``PartitionChangeRecord`` written (also with ``NEW_LEADER_ELECTED``), if any.
    """

    error: Errors
    registration: PartitionRegistration | None = None
    record: PartitionChangeRecord | None = None


def ineligible_replicas(new_isr: tuple[BrokerState, ...], image: MetadataImage, kip903: bool
                        ) -> tuple[tuple[int, str], ...]:
    """``ReplicationControlManager.ineligibleReplicasForIsr``: ``(broker, reason)`` per member
    that is not registered, in controlled shutdown, fenced, or (``kip903``) has a broker epoch
    other than -1 that differs from its registered epoch -- in that order of reasons. Total."""
    out = []
    for state in new_isr:
        reg = broker(image, state.broker_id)
        if reg is None:
            out.append((state.broker_id, "not registered"))
        elif reg.in_controlled_shutdown:
            out.append((state.broker_id, "shutting down"))
        elif reg.fenced:
            out.append((state.broker_id, "fenced"))
        elif kip903 and state.broker_epoch not in (NO_BROKER_EPOCH, reg.epoch):
            out.append((state.broker_id, "broker epoch mismatch"))
    return tuple(out)


def _epoch_error(reg: PartitionRegistration, request: KRaftAlterPartitionRequest) -> Errors:
    if (request.leader_epoch > reg.leader_epoch
            or request.partition_epoch > reg.partition_epoch):
        return Errors.NOT_CONTROLLER
    if request.leader_epoch < reg.leader_epoch:
        return Errors.FENCED_LEADER_EPOCH
    if request.broker_id != reg.leader:
        return Errors.INVALID_REQUEST
    if request.partition_epoch < reg.partition_epoch:
        return Errors.INVALID_UPDATE_VERSION
    return Errors.NONE


def _isr_error(reg: PartitionRegistration, request: KRaftAlterPartitionRequest) -> Errors:
    ids = [s.broker_id for s in request.new_isr]
    if len(set(ids)) != len(ids) or not set(ids) <= set(reg.replicas):
        return Errors.INVALID_REQUEST  # Replicas.validateIsr
    if reg.leader not in ids:
        return Errors.INVALID_REQUEST
    recovering = request.leader_recovery_state is LeaderRecoveryState.RECOVERING
    if recovering and len(ids) > 1:
        return Errors.INVALID_REQUEST
    if recovering and reg.leader_recovery_state is LeaderRecoveryState.RECOVERED:
        return Errors.INVALID_REQUEST
    return Errors.NONE


def validate_alter_partition_data(reg: PartitionRegistration,
                                  request: KRaftAlterPartitionRequest, image: MetadataImage,
                                  config: AlterPartitionConfig) -> Errors:
    """``ReplicationControlManager.validateAlterPartitionData`` (3.5.0-trunk 2024-10), in order:

    a leader epoch or partition epoch above the controller's -> ``NOT_CONTROLLER``; an older
    leader epoch -> ``FENCED_LEADER_EPOCH``; a sender that is not the leader ->
    ``INVALID_REQUEST``; an older partition epoch -> ``INVALID_UPDATE_VERSION``; an ISR with
    duplicates, outside the replicas or without the leader -> ``INVALID_REQUEST``; RECOVERING
    with more than one member, or RECOVERED -> RECOVERING -> ``INVALID_REQUEST`` (KIP-704); with
    ``kip841`` an ineligible member (``ineligible_replicas``) -> ``INELIGIBLE_REPLICA`` for
    request versions > 1, ``OPERATION_NOT_ATTEMPTED`` for versions 0-1.  Else ``NONE``. Total.
    """
    for error in (_epoch_error(reg, request), _isr_error(reg, request)):
        if error is not Errors.NONE:
            return error
    if config.kip841 and ineligible_replicas(request.new_isr, image, config.kip903):
        return Errors.INELIGIBLE_REPLICA if request.version > 1 else Errors.OPERATION_NOT_ATTEMPTED
    return Errors.NONE


def check_broker_epoch(image: MetadataImage, broker_id: int, broker_epoch: int) -> Errors:
    """``ClusterControlManager.checkBrokerEpoch``: ``STALE_BROKER_EPOCH`` unless registered with
    exactly that epoch (Kafka throws ``StaleBrokerEpochException``: the whole request fails).
    Total."""
    reg = broker(image, broker_id)
    ok = reg is not None and reg.epoch == broker_epoch
    return Errors.NONE if ok else Errors.STALE_BROKER_EPOCH


def _request_for_version(request: KRaftAlterPartitionRequest) -> KRaftAlterPartitionRequest:
    if request.version >= 3:
        return request
    # requestVersion < 3: newIsrToSimpleNewIsrWithBrokerEpochs, every epoch -1
    simple = tuple(BrokerState(s.broker_id) for s in request.new_isr)
    return KRaftAlterPartitionRequest(request.broker_id, request.broker_epoch,
                                      request.leader_epoch, request.partition_epoch, simple,
                                      request.leader_recovery_state, request.version)


def alter_partition(tp: TopicPartition, reg: PartitionRegistration, image: MetadataImage,
                    request: KRaftAlterPartitionRequest, config: AlterPartitionConfig
                    ) -> Result[KRaftAlterPartitionResponse, InvalidInput]:
    """``ReplicationControlManager.alterPartition`` for one partition.

    ``check_broker_epoch`` of the sender, then ``validate_alter_partition_data``; a valid request
    goes to ``PartitionChangeBuilder.build`` with the proposed ISR as target, the request's
    leader recovery state, and the active brokers as acceptable leaders.  If the record elects
    another leader than the sender -> ``NEW_LEADER_ELECTED`` (versions > 1, else
    ``FENCED_LEADER_EPOCH``) with the record written; else ``NONE`` and the new registration --
    the current one when no record is needed (the ISR is already the proposed one).  Bad input:
    a malformed registration or negative epochs.
    """
    if min(request.leader_epoch, request.partition_epoch, request.version) < 0:
        return reject(Problem.NEGATIVE_VALUE, f"epochs / version in {request}")
    bad = check_registration(reg)
    if not isinstance(bad, Success):
        return Failure(bad.failure())
    stale = check_broker_epoch(image, request.broker_id, request.broker_epoch)
    if stale is not Errors.NONE:
        return Success(KRaftAlterPartitionResponse(stale))
    req = _request_for_version(request)
    error = validate_alter_partition_data(reg, req, image, config)
    if error is not Errors.NONE:
        return Success(KRaftAlterPartitionResponse(error))
    target = tuple(s.broker_id for s in req.new_isr)
    return build(reg, tp, active_brokers(image), config.builder, target,
                 target_recovery=req.leader_recovery_state).map(
        lambda change: _answer(change.record, change.registration, req))


def _answer(record: PartitionChangeRecord | None, after: PartitionRegistration,
            request: KRaftAlterPartitionRequest) -> KRaftAlterPartitionResponse:
    if (record is not None and record.leader != NO_LEADER_CHANGE
            and record.leader != request.broker_id):
        error = Errors.NEW_LEADER_ELECTED if request.version > 1 else Errors.FENCED_LEADER_EPOCH
        return KRaftAlterPartitionResponse(error, None, record)
    return KRaftAlterPartitionResponse(Errors.NONE, after, record)


def is_replica_isr_eligible(image: MetadataImage, follower: int,
                            fetch_broker_epoch: int | None, kip903: bool = True) -> bool:
    """``Partition.isReplicaIsrEligible`` in KRaft (3.5+): may the leader propose ``follower``?

    The leader's metadata image must show it unfenced and not shutting down; with ``kip903`` the
    broker epoch its last fetch carried (``fetch_broker_epoch``; ``None``: no fetch recorded)
    must be -1 or the image's epoch for it (``isBrokerEpochIsrEligible``).  3.3-3.4
    (``kip903=False``): fenced and shutting-down only.  Total.
    """
    reg = broker(image, follower)
    if reg is None or reg.fenced or reg.in_controlled_shutdown:
        return False
    if not kip903:
        return True
    return fetch_broker_epoch is not None and fetch_broker_epoch in (NO_BROKER_EPOCH, reg.epoch)

