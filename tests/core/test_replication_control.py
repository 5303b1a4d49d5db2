"""The KRaft controller's controlled shutdown, fencing and preferred elections, against
ReplicationControlManagerTest (apache/kafka 1eb7644, October 2024).

Each test names the Kafka test whose scenario and expected records or errors it reproduces:
``testProcessBrokerHeartbeatInControlledShutdown``, ``testElectPreferredLeaders``,
``testPreferredElectionDoesNotTriggerUncleanElection``, ``testFenceMultipleBrokers``.  Broker
epochs follow that test context (``defaultBrokerEpoch(id) = 100 + id``).  A test context's
``createTestTopic`` puts every active replica in the ISR and makes the first of them leader.
"""

from __future__ import annotations

from dataclasses import replace

from isrlab.core.broker_heartbeat import (
    BrokerControlState,
    BrokerHeartbeatRequest,
    BrokerHeartbeatState,
    calculate_next_broker_state,
)
from isrlab.core.elr import LeaderRecoveryState, PartitionRegistration
from isrlab.core.errors import Errors, Problem
from isrlab.core.kraft_metadata import (
    BrokerRegistration,
    BrokerRegistrationChangeRecord,
    FencingChange,
    MetadataImage,
    MetadataRecord,
    PartitionChangeRecord,
    RegisterBrokerRecord,
    apply_commit,
    is_active,
    partition,
)
from isrlab.core.partition_change_builder import BuilderConfig, Election
from isrlab.core.replication_control import (
    ElectionType,
    elect_leader,
    handle_broker_fenced,
    handle_broker_in_controlled_shutdown,
    handle_broker_unfenced,
    has_preferred_leader,
    heartbeat_records,
)
from isrlab.core.state import NO_LEADER, TopicPartition
from tests.core.helpers import err, ok

FOO0, FOO1, FOO2 = (TopicPartition("foo", i) for i in range(3))
CONFIG = BuilderConfig()


def _brokers(registered: tuple[int, ...], unfenced: tuple[int, ...],
             shutting_down: tuple[int, ...] = ()) -> tuple[BrokerRegistration, ...]:
    return tuple(BrokerRegistration(b, b, 100 + b, b not in unfenced, b in shutting_down)
                 for b in registered)


def _topic(brokers: tuple[BrokerRegistration, ...], *assignments: tuple[int, ...]
           ) -> MetadataImage:
    """``createTestTopic``: each partition's ISR is its active replicas, the first leads."""
    image = MetadataImage(brokers=brokers)
    parts = []
    for i, replicas in enumerate(assignments):
        isr = tuple(r for r in replicas if is_active(image, r))
        parts.append((TopicPartition("foo", i), PartitionRegistration(replicas, isr, isr[0])))
    return replace(image, partitions=tuple(parts))


def _replayed(image: MetadataImage, records: tuple[MetadataRecord, ...]) -> MetadataImage:
    return ok(apply_commit(image, records)).after


def test_process_broker_heartbeat_in_controlled_shutdown() -> None:
    # testProcessBrokerHeartbeatInControlledShutdown (3.3-IV3): broker 0 leads foo-0
    # [0, 1, 2] and heartbeats with wantShutDown: CONTROLLED_SHUTDOWN, and the records are
    # the in-controlled-shutdown change, then ISR [1, 2] with leader 1.
    image = _topic(_brokers((0, 1, 2), (0, 1, 2)), (0, 1, 2))
    state = BrokerHeartbeatState(0, 0, fenced=False)
    request = BrokerHeartbeatRequest(0, 100, 0, want_fence=False, want_shut_down=True)
    nxt = calculate_next_broker_state(state, request, 0, True, None)
    assert nxt is BrokerControlState.CONTROLLED_SHUTDOWN
    records = ok(heartbeat_records(image, FOO0, 0, BrokerControlState.UNFENCED, nxt, CONFIG))
    assert records == (
        BrokerRegistrationChangeRecord(0, 100, in_controlled_shutdown=True),
        PartitionChangeRecord(FOO0, isr=(1, 2), leader=1))
    after = _replayed(image, records)
    assert not is_active(after, 0)
    # Asked again (a new active controller forgot the shutdown offset), nothing is left to
    # write: the registration already says so and broker 0 is in no ISR.
    assert ok(handle_broker_in_controlled_shutdown(after, FOO0, 0, CONFIG)) == ()
    # No leadership left: the next heartbeat is granted SHUTDOWN_NOW once the active brokers
    # passed the controlled-shutdown offset, and handleBrokerFenced writes the fence record.
    shutting = replace(state, controlled_shutdown_offset=5)
    assert calculate_next_broker_state(shutting, request, 0, False, 4) is (
        BrokerControlState.CONTROLLED_SHUTDOWN)
    now = calculate_next_broker_state(shutting, request, 0, False, 5)
    assert now is BrokerControlState.SHUTDOWN_NOW
    assert ok(heartbeat_records(after, FOO0, 0, BrokerControlState.CONTROLLED_SHUTDOWN, now,
                                CONFIG)) == (
        BrokerRegistrationChangeRecord(0, 100, FencingChange.FENCE),)


def test_heartbeat_records_of_the_other_transitions() -> None:
    # processBrokerHeartbeat writes nothing when the state stays; FENCED fences through
    # handleBrokerFenced; UNFENCED through handleBrokerUnfenced.
    image = _topic(_brokers((0, 1, 2), (0, 1, 2)), (0, 1, 2))
    same = BrokerControlState.UNFENCED
    assert ok(heartbeat_records(image, FOO0, 1, same, same, CONFIG)) == ()
    fenced = ok(heartbeat_records(image, FOO0, 1, same, BrokerControlState.FENCED, CONFIG))
    assert fenced == (PartitionChangeRecord(FOO0, isr=(0, 2)),
                      BrokerRegistrationChangeRecord(1, 101, FencingChange.FENCE))
    back = _replayed(image, fenced)
    assert ok(heartbeat_records(back, FOO0, 1, BrokerControlState.FENCED, same, CONFIG)) == (
        BrokerRegistrationChangeRecord(1, 101, FencingChange.UNFENCE),)


def test_fence_multiple_brokers() -> None:
    # testFenceMultipleBrokers: foo-0 [1, 2, 3], foo-1 [2, 3, 4], foo-2 [0, 2, 1]; fencing
    # brokers 2 and 3 leaves ISR [1] led by 1, ISR [4] led by 4, ISR [0, 1] not led by 2.
    image = _topic(_brokers((0, 1, 2, 3, 4), (0, 1, 2, 3, 4)), (1, 2, 3), (2, 3, 4), (0, 2, 1))
    for b in (2, 3):
        for tp in (FOO0, FOO1, FOO2):
            image = _replayed(image, ok(handle_broker_fenced(image, tp, b, CONFIG)))
    p0, p1, p2 = (partition(image, tp) for tp in (FOO0, FOO1, FOO2))
    assert p0 is not None and (p0.isr, p0.leader) == ((1,), 1)
    assert p1 is not None and (p1.isr, p1.leader) == ((4,), 4)
    assert p2 is not None and p2.isr == (0, 1) and p2.leader != 2


def test_elect_preferred_leaders() -> None:
    # testElectPreferredLeaders: brokers 0-4 registered, 1-4 unfenced, 1 in controlled
    # shutdown; foo-0 [1, 2, 3], foo-1 [2, 3, 4], foo-2 [0, 2, 1].
    brokers = _brokers((0, 1, 2, 3, 4), (1, 2, 3, 4), shutting_down=(1,))
    image = _topic(brokers, (1, 2, 3), (2, 3, 4), (0, 2, 1))
    first = [ok(elect_leader(image, tp, ElectionType.PREFERRED, CONFIG))
             for tp in (FOO0, FOO1, FOO2)]
    assert [o.error for o in first] == [Errors.PREFERRED_LEADER_NOT_AVAILABLE,
                                        Errors.ELECTION_NOT_NEEDED,
                                        Errors.PREFERRED_LEADER_NOT_AVAILABLE]
    assert all(o.record is None for o in first)  # "assertEquals(emptyList(), records())"
    # Broker 1 registers again (out of controlled shutdown), 0 and 1 are unfenced, and
    # leader 2's AlterPartition puts them back in the ISRs ([1, 2, 3], [0, 2, 1]).
    image = _replayed(image, (
        RegisterBrokerRecord(1, 11, 111),
        BrokerRegistrationChangeRecord(0, 100, FencingChange.UNFENCE),
        BrokerRegistrationChangeRecord(1, 111, FencingChange.UNFENCE),
        PartitionChangeRecord(FOO0, isr=(1, 2, 3)), PartitionChangeRecord(FOO2, isr=(0, 2, 1))))
    second = [ok(elect_leader(image, tp, ElectionType.PREFERRED, CONFIG))
              for tp in (FOO0, FOO1, FOO2)]
    assert [o.error for o in second] == [Errors.NONE, Errors.ELECTION_NOT_NEEDED, Errors.NONE]
    assert [o.record for o in second] == [PartitionChangeRecord(FOO0, leader=1), None,
                                          PartitionChangeRecord(FOO2, leader=0)]
    assert second[0].registration.leader_epoch == 1 and has_preferred_leader(
        second[0].registration)


def test_preferred_election_does_not_trigger_unclean_election() -> None:
    # testPreferredElectionDoesNotTriggerUncleanElection: foo [1, 2, 3] leaderless with
    # ISR [1] (brokers 1 and 3 fenced, 2 unfenced), unclean election enabled for the topic:
    # PREFERRED writes nothing and answers PREFERRED_LEADER_NOT_AVAILABLE.
    brokers = _brokers((1, 2, 3, 4), (2, 4))
    reg = PartitionRegistration((1, 2, 3), (1,), NO_LEADER, 2, 3)
    image = MetadataImage(brokers=brokers, partitions=((FOO0, reg),))
    unclean = BuilderConfig(election=Election.UNCLEAN)
    outcome = ok(elect_leader(image, FOO0, ElectionType.PREFERRED, unclean))
    assert (outcome.error, outcome.record, outcome.registration) == (
        Errors.PREFERRED_LEADER_NOT_AVAILABLE, None, reg)
    # The UNCLEAN election type does elect (the first active replica, RECOVERING: KIP-704),
    # and is not needed where a leader exists.
    forced = ok(elect_leader(image, FOO0, ElectionType.UNCLEAN, CONFIG))
    assert forced.error is Errors.NONE and forced.record == PartitionChangeRecord(
        FOO0, isr=(2,), leader=2, leader_recovery_state=LeaderRecoveryState.RECOVERING)
    led = replace(image, partitions=((FOO0, forced.registration),))
    assert ok(elect_leader(led, FOO0, ElectionType.UNCLEAN, CONFIG)).error is (
        Errors.ELECTION_NOT_NEEDED)
    nobody = MetadataImage(brokers=_brokers((1, 2, 3), ()), partitions=((FOO0, reg),))
    assert ok(elect_leader(nobody, FOO0, ElectionType.UNCLEAN, CONFIG)).error is (
        Errors.ELIGIBLE_LEADERS_NOT_AVAILABLE)


def test_unfencing_elects_a_leader_for_a_leaderless_partition() -> None:
    # handleBrokerUnfenced: the unfence record, then brokerToAdd may lead a leaderless
    # partition it is in the ISR of.
    reg = PartitionRegistration((1, 2), (1,), NO_LEADER, 1, 2)
    image = MetadataImage(brokers=_brokers((1, 2), (2,)), partitions=((FOO0, reg),))
    assert ok(handle_broker_unfenced(image, FOO0, 1, CONFIG)) == (
        BrokerRegistrationChangeRecord(1, 101, FencingChange.UNFENCE),
        PartitionChangeRecord(FOO0, leader=1))
    assert ok(handle_broker_unfenced(image, FOO0, 2, CONFIG)) == (
        BrokerRegistrationChangeRecord(2, 102, FencingChange.UNFENCE),)


def test_bad_input() -> None:
    image = _topic(_brokers((0, 1), (0, 1)), (0, 1))
    assert err(handle_broker_fenced(image, FOO1, 0, CONFIG)).problem is Problem.NOT_A_REPLICA
    assert err(handle_broker_in_controlled_shutdown(image, FOO0, 7, CONFIG)).problem is (
        Problem.WRONG_ROLE)
    assert err(elect_leader(image, FOO1, ElectionType.PREFERRED, CONFIG)).problem is (
        Problem.NOT_A_REPLICA)
