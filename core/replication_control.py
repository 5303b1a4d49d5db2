"""The KRaft controller's broker-lifecycle and election handlers (``ReplicationControlManager``).

What the active controller writes when a broker asks to shut down, when it is fenced, and when
an operator (``kafka-leader-election.sh``, the ``ElectLeaders`` API) or the controller's own
leader rebalance asks for a preferred election.  Each function returns the records of one
controller event (``QuorumController`` commits them as one batch) and never edits an image:
the caller replays them (``isrlab.core.kraft_metadata.replay``).  Kafka's names (trunk of
2024-10, the 3.9/4.0 line; the same code from 3.3 on where not said):

* ``ReplicationControlManager.processBrokerHeartbeat`` -- ``heartbeat_records``: the
  transition ``BrokerHeartbeatManager.calculateNextBrokerState`` computes
  (``isrlab.core.broker_heartbeat``) decides the records: FENCED / SHUTDOWN_NOW ->
  ``handleBrokerFenced``, UNFENCED -> ``handleBrokerUnfenced``, CONTROLLED_SHUTDOWN ->
  ``handleBrokerInControlledShutdown``;
* ``handleBrokerInControlledShutdown`` -- ``handle_broker_in_controlled_shutdown``: a
  ``BrokerRegistrationChangeRecord`` with ``InControlledShutdown`` (metadata versions
  3.3-IV3+, unless already in controlled shutdown), then the broker leaves every ISR and
  gives up every leadership (``generateLeaderAndIsrUpdates`` with ``brokerToRemove``);
* ``handleBrokerFenced`` -- ``handle_broker_fenced``: the broker leaves every ISR, then the
  fence record;
* ``electLeader`` (``ElectLeaders``) and ``maybeBalancePartitionLeaders``'s preferred
  elections -- ``elect_leader``: ``ELECTION_NOT_NEEDED`` when the preferred replica already
  leads (PREFERRED) or a leader exists (UNCLEAN); else ``PartitionChangeBuilder`` with
  ``Election.PREFERRED`` / ``UNCLEAN`` and the current ISR as target; no record ->
  ``PREFERRED_LEADER_NOT_AVAILABLE`` / ``ELIGIBLE_LEADERS_NOT_AVAILABLE``.

Shortcuts: one partition per call (Kafka iterates ``brokersToIsrs`` over every partition);
metadata versions before 3.3-IV3 (``FenceBrokerRecord``, no controlled-shutdown record) are
not modelled.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from enum import Enum, unique

from returns.result import Result, Success

from isrlab.core.broker_heartbeat import BrokerControlState
from isrlab.core.elr import PartitionRegistration
from isrlab.core.errors import Errors, InvalidInput, Problem, reject
from isrlab.core.kraft_metadata import (
    BrokerRegistrationChangeRecord,
    FencingChange,
    MetadataImage,
    MetadataRecord,
    active_brokers,
    broker,
    partition,
)
from isrlab.core.partition_change_builder import (
    BuilderConfig,
    ChangeResult,
    Election,
    build,
    generate_leader_and_isr_update,
)
from isrlab.core.state import TopicPartition


def _registration(image: MetadataImage, tp: TopicPartition, broker_id: int
                  ) -> Result[tuple[PartitionRegistration, int], InvalidInput]:
    """The partition's registration and ``broker_id``'s registered epoch (bad input when
    either is missing: Kafka throws on an unregistered broker)."""
    reg = partition(image, tp)
    registered = broker(image, broker_id)
    if reg is None:
        return reject(Problem.NOT_A_REPLICA, f"unknown partition {tp}")
    if registered is None:
        return reject(Problem.WRONG_ROLE, f"broker {broker_id} is not registered")
    return Success((reg, registered.epoch))


def _leave_isr(image: MetadataImage, tp: TopicPartition, reg: PartitionRegistration,
               broker_id: int, config: BuilderConfig
               ) -> Result[tuple[MetadataRecord, ...], InvalidInput]:
    """``generateLeaderAndIsrUpdates(brokerToRemove = broker_id)`` over
    ``brokersToIsrs.partitionsWithBrokerInIsr(broker_id)``: nothing when the broker is not in
    the ISR."""
    if broker_id not in reg.isr:
        return Success(())
    return generate_leader_and_isr_update(
        reg, tp, active_brokers(image), config, broker_to_remove=broker_id).map(
        lambda change: () if change.record is None else (change.record,))


def handle_broker_in_controlled_shutdown(image: MetadataImage, tp: TopicPartition,
                                         broker_id: int, config: BuilderConfig
                                         ) -> Result[tuple[MetadataRecord, ...], InvalidInput]:
    """``ReplicationControlManager.handleBrokerInControlledShutdown`` (3.3-IV3+ records).

    First the ``BrokerRegistrationChangeRecord`` marking the broker in controlled shutdown
    (left out when its registration already says so: ``clusterControl.inControlledShutdown``),
    then the broker leaves the ISR of ``tp``; where it led, ``PartitionChangeBuilder`` elects
    another leader among the active ISR members (it is no longer acceptable; the record is
    built against the controller's state before the change record is replayed, and the
    broker is excluded as ``brokerToRemove`` anyway).  Bad input: an unknown partition or
    broker.
    """
    def records(found: tuple[PartitionRegistration, int]
                ) -> Result[tuple[MetadataRecord, ...], InvalidInput]:
        reg, epoch = found
        registered = broker(image, broker_id)
        mark: tuple[MetadataRecord, ...] = ()
        if registered is not None and not registered.in_controlled_shutdown:
            mark = (BrokerRegistrationChangeRecord(broker_id, epoch,
                                                   in_controlled_shutdown=True),)
        return _leave_isr(image, tp, reg, broker_id, config).map(lambda rest: mark + rest)
    return _registration(image, tp, broker_id).bind(records)


def handle_broker_fenced(image: MetadataImage, tp: TopicPartition, broker_id: int,
                         config: BuilderConfig
                         ) -> Result[tuple[MetadataRecord, ...], InvalidInput]:
    """``ReplicationControlManager.handleBrokerFenced``: the broker leaves the ISR of ``tp``
    (a new leader where it led), then the fence record with its registered epoch.  Written on
    a session timeout (``maybeFenceOneStaleBroker``) and when a heartbeat moves the broker to
    FENCED or SHUTDOWN_NOW.  Bad input: an unknown partition or broker."""
    def records(found: tuple[PartitionRegistration, int]
                ) -> Result[tuple[MetadataRecord, ...], InvalidInput]:
        reg, epoch = found
        fence = BrokerRegistrationChangeRecord(broker_id, epoch, FencingChange.FENCE)
        return _leave_isr(image, tp, reg, broker_id, config).map(lambda rest: (*rest, fence))
    return _registration(image, tp, broker_id).bind(records)


def handle_broker_unfenced(image: MetadataImage, tp: TopicPartition, broker_id: int,
                           config: BuilderConfig
                           ) -> Result[tuple[MetadataRecord, ...], InvalidInput]:
    """``ReplicationControlManager.handleBrokerUnfenced``: the unfence record, then a leader
    for ``tp`` if it has none (``generateLeaderAndIsrUpdates(brokerToAdd = broker_id)`` over
    ``partitionsWithNoLeader``).  Bad input: an unknown partition or broker."""
    def records(found: tuple[PartitionRegistration, int]
                ) -> Result[tuple[MetadataRecord, ...], InvalidInput]:
        reg, epoch = found
        unfence: MetadataRecord = BrokerRegistrationChangeRecord(broker_id, epoch,
                                                                 FencingChange.UNFENCE)
        if reg.leader >= 0:
            return Success((unfence,))
        return generate_leader_and_isr_update(
            reg, tp, active_brokers(image), config, broker_to_add=broker_id).map(
            lambda change: (unfence,) if change.record is None else (unfence, change.record))
    return _registration(image, tp, broker_id).bind(records)


def heartbeat_records(image: MetadataImage, tp: TopicPartition, broker_id: int,
                      previous: BrokerControlState, following: BrokerControlState,
                      config: BuilderConfig
                      ) -> Result[tuple[MetadataRecord, ...], InvalidInput]:
    """``ReplicationControlManager.processBrokerHeartbeat``'s records for the transition
    ``previous`` -> ``following`` (``calculate_next_broker_state``'s answer): none when the
    state does not change; FENCED and SHUTDOWN_NOW -> ``handle_broker_fenced``; UNFENCED ->
    ``handle_broker_unfenced``; CONTROLLED_SHUTDOWN -> ``handle_broker_in_controlled_shutdown``.
    Bad input: an unknown partition or broker."""
    if previous is following:
        return Success(())
    if following is BrokerControlState.UNFENCED:
        return handle_broker_unfenced(image, tp, broker_id, config)
    if following is BrokerControlState.CONTROLLED_SHUTDOWN:
        return handle_broker_in_controlled_shutdown(image, tp, broker_id, config)
    return handle_broker_fenced(image, tp, broker_id, config)


@unique
class ElectionType(Enum):
    """``org.apache.kafka.common.ElectionType`` (the ``ElectLeaders`` request's)."""

    PREFERRED = 0
    UNCLEAN = 1


@dataclass(frozen=True, slots=True)
class ElectLeaderOutcome:
    """``electLeader``'s answer for one partition: the error (``NONE``: a record was
    written), the record and the registration after it (the current one without a record)."""

    error: Errors
    registration: PartitionRegistration
    record: MetadataRecord | None = None


def has_preferred_leader(reg: PartitionRegistration) -> bool:
    """``PartitionRegistration.hasPreferredLeader``: the first replica leads. Total."""
    return bool(reg.replicas) and reg.leader == reg.replicas[0]


def elect_leader(image: MetadataImage, tp: TopicPartition, election_type: ElectionType,
                 config: BuilderConfig) -> Result[ElectLeaderOutcome, InvalidInput]:
    """``ReplicationControlManager.electLeader`` (3.3+; the same builder call as the
    controller's own ``maybeBalancePartitionLeaders`` for PREFERRED).

    ``ELECTION_NOT_NEEDED`` when the preferred replica already leads (PREFERRED) or the
    partition has a leader (UNCLEAN).  Else ``PartitionChangeBuilder`` with the current ISR as
    target, ``Election.PREFERRED`` (the first replica if it is in the ISR and active, else the
    current leader if it still is, else another active ISR member: only the first changes
    anything) or ``Election.UNCLEAN``, with the topic's min ISR and ELR settings of
    ``config``; no record -> ``PREFERRED_LEADER_NOT_AVAILABLE`` (PREFERRED: a preferred
    election never falls back to an unclean one, ``testPreferredElectionDoesNotTrigger
    UncleanElection``) or ``ELIGIBLE_LEADERS_NOT_AVAILABLE``.  Active = registered, unfenced,
    not in controlled shutdown (``LeaderAcceptor``).  Bad input: an unknown partition or a
    malformed registration.
    """
    reg = partition(image, tp)
    if reg is None:
        return reject(Problem.NOT_A_REPLICA, f"unknown partition {tp}")
    preferred = election_type is ElectionType.PREFERRED
    if (has_preferred_leader(reg) if preferred else reg.leader >= 0):
        return Success(ElectLeaderOutcome(Errors.ELECTION_NOT_NEEDED, reg))
    election = Election.PREFERRED if preferred else Election.UNCLEAN
    built = build(reg, tp, active_brokers(image), replace(config, election=election))

    def answer(change: ChangeResult) -> ElectLeaderOutcome:
        record = change.record
        if record is None:
            error = (Errors.PREFERRED_LEADER_NOT_AVAILABLE if preferred
                     else Errors.ELIGIBLE_LEADERS_NOT_AVAILABLE)
            return ElectLeaderOutcome(error, reg)
        return ElectLeaderOutcome(Errors.NONE, change.registration, record)
    return built.map(answer)
