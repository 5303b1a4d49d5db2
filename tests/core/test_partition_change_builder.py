"""KRaft's PartitionChangeBuilder, checked against the cases of Kafka's own tests.

Expected values are those of ``metadata/src/test/java/org/apache/kafka/controller/
PartitionChangeBuilderTest.java`` (3.7.0) and ``ReplicationControlManagerTest.java`` (3.7.0),
whose method names each test cites; Kafka's registrations FOO, BAZ, OFFLINE_* are rebuilt here.
"""

from __future__ import annotations

import itertools
from dataclasses import replace
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from isrlab.core.elr import LeaderRecoveryState, PartitionRegistration, check_registration
from isrlab.core.errors import InvalidInput, Problem
from isrlab.core.kraft_metadata import NO_LEADER_CHANGE, PartitionChangeRecord, merge
from isrlab.core.partition_change_builder import (
    BuilderConfig,
    Election,
    ElectionResult,
    LastKnownLeaderCheck,
    LeaderEpochBump,
    build,
    elect_leader,
    generate_leader_and_isr_update,
    is_no_op,
)
from isrlab.core.state import NO_LEADER, TopicPartition
from tests.core.helpers import err, ok

TP = TopicPartition("foo", 0)
RECOVERING = LeaderRecoveryState.RECOVERING
# PartitionChangeBuilderTest's FOO: replicas [2, 1, 3], ISR [2, 1, 3], leader 1, epochs 100/200;
# its builder accepts every replica but 3 and has min ISR 2.
FOO = PartitionRegistration((2, 1, 3), (2, 1, 3), 1, 100, 200)
NOT_3 = frozenset({1, 2, 4})
BAZ = PartitionRegistration((2, 1, 3), (1, 3), 3, 100, 200)
ALL = frozenset({1, 2, 3, 4})
OFFLINE_WITH_ELR = PartitionRegistration((2, 1, 3), (), NO_LEADER, 100, 200, elr=(3,),
                                         last_known_elr=(2,))
OFFLINE_WITHOUT_ELR = PartitionRegistration((2, 1, 3), (3,), NO_LEADER, 100, 200)
ELR_ON = BuilderConfig(min_isr=2, elr_enabled=True)


def _record(**fields: Any) -> PartitionChangeRecord:
    return PartitionChangeRecord(TP, **fields)


def _build(reg: PartitionRegistration, acceptable: frozenset[int], config: BuilderConfig,
           target: tuple[int, ...] | None = None, unclean: frozenset[int] = frozenset()
           ) -> PartitionChangeRecord | None:
    return ok(build(reg, TP, acceptable, config, target, unclean)).record


def _elect(reg: PartitionRegistration, acceptable: frozenset[int], election: Election,
           target: tuple[int, ...] | None = None) -> tuple[int, bool]:
    isr = reg.isr if target is None else target
    result = elect_leader(reg, isr, reg.elr, acceptable, BuilderConfig(2, election=election))
    return result.node, result.unclean


def test_elect_leader_as_partition_change_builder_test_test_elect_leader() -> None:
    # testElectLeader, FOO and BAZ cases (the one with a fourth replica is reassignment).
    assert _elect(FOO, NOT_3, Election.PREFERRED) == (2, False)
    assert _elect(FOO, NOT_3, Election.ONLINE) == (1, False)
    assert _elect(FOO, NOT_3, Election.UNCLEAN) == (1, False)
    assert _elect(FOO, NOT_3, Election.ONLINE, (1, 3)) == (1, False)
    assert _elect(FOO, NOT_3, Election.UNCLEAN, (1, 3)) == (1, False)
    assert _elect(FOO, NOT_3, Election.ONLINE, (3,)) == (NO_LEADER, False)
    assert _elect(FOO, NOT_3, Election.UNCLEAN, (3,)) == (2, True)
    for election in Election:
        assert _elect(BAZ, ALL, election) == (3, False)


def test_no_change_writes_no_record_as_in_test_no_change() -> None:
    assert _build(FOO, NOT_3, BuilderConfig(2)) is None
    assert _build(FOO, NOT_3, BuilderConfig(2, election=Election.UNCLEAN)) is None
    assert _build(BAZ, ALL, BuilderConfig(2, election=Election.PREFERRED)) is None
    assert ok(build(FOO, TP, NOT_3, BuilderConfig(2))).registration == FOO


def test_an_isr_shrink_bumps_the_partition_epoch_only_from_3_6() -> None:
    # testIsrChangeDoesntBumpLeaderEpoch and testTriggerLeaderEpochBumpIfNeeded (KAFKA-15021):
    # with metadata.version 3.5-IV2 the shrink sets the leader field to the same leader.
    new = ok(build(FOO, TP, NOT_3, BuilderConfig(2), (2, 1)))
    assert new.record == _record(isr=(2, 1))
    assert (new.registration.leader_epoch, new.registration.partition_epoch) == (100, 201)
    old = ok(build(FOO, TP, NOT_3, BuilderConfig(2, epoch_bump=LeaderEpochBump.ON_ISR_SHRINK),
                   (2, 1)))
    assert old.record == _record(isr=(2, 1), leader=1)
    assert (old.registration.leader, old.registration.leader_epoch,
            old.registration.partition_epoch) == (1, 101, 201)


def test_an_isr_expansion_never_bumps_the_leader_epoch() -> None:
    shrunk = replace(FOO, isr=(2, 1))
    for bump in LeaderEpochBump:
        grown = ok(build(shrunk, TP, NOT_3, BuilderConfig(2, epoch_bump=bump), (2, 1, 3)))
        assert grown.record == _record(isr=(2, 1, 3))
        assert grown.registration.leader_epoch == 100


def test_isr_change_and_leader_change() -> None:
    # testIsrChangeAndLeaderChange: ISR [2, 3] drops the leader 1; 2 is elected (3 is not
    # acceptable); the leader epoch goes up once.
    change = ok(build(FOO, TP, NOT_3, BuilderConfig(2), (2, 3)))
    assert change.record == _record(isr=(2, 3), leader=2)
    assert (change.registration.leader_epoch, change.registration.partition_epoch) == (101, 201)


def test_unclean_election_sets_recovering_as_in_test_unclean_leader_election() -> None:
    unclean = BuilderConfig(2, election=Election.UNCLEAN)
    assert _build(FOO, NOT_3, unclean, (3,)) == _record(isr=(2,), leader=2,
                                                        leader_recovery_state=RECOVERING)
    only_1 = frozenset({1})
    assert _build(OFFLINE_WITHOUT_ELR, only_1, unclean) == _record(
        isr=(1,), leader=1, leader_recovery_state=RECOVERING)
    expected = _record(isr=(1,), leader=1, leader_recovery_state=RECOVERING, elr=(),
                       last_known_elr=())
    with_elr = replace(unclean, elr_enabled=True)
    assert _build(OFFLINE_WITH_ELR, only_1, with_elr) == expected
    assert _build(OFFLINE_WITH_ELR, only_1, with_elr, (2,)) == expected
    # without KIP-704 support (metadata.version < 3.2) the state is not set
    assert _build(FOO, NOT_3, replace(unclean, leader_recovery_supported=False), (3,)) == (
        _record(isr=(2,), leader=2))


def test_a_change_of_leadership_keeps_recovering() -> None:
    # testChangeInLeadershipDoesNotChangeRecoveryState (ELR off): the last ISR member goes
    # offline (leader -1, ISR kept), comes back, and the partition stays RECOVERING.
    reg = PartitionRegistration((1, 2, 3), (1,), 1, 100, 200, leader_recovery_state=RECOVERING)
    offline = ok(build(reg, TP, frozenset(), BuilderConfig(2), ()))
    assert offline.record == _record(leader=NO_LEADER)
    assert (offline.registration.leader, offline.registration.isr,
            offline.registration.leader_recovery_state) == (NO_LEADER, (1,), RECOVERING)
    online = ok(build(offline.registration, TP, frozenset({1, 2, 3}), BuilderConfig(2)))
    assert online.record == _record(leader=1)
    assert (online.registration.leader, online.registration.leader_recovery_state) == (
        1, RECOVERING)


REG4 = PartitionRegistration((1, 2, 3, 4), (1, 2, 3, 4), 1, 100, 200)
ELR3 = BuilderConfig(3, elr_enabled=True, election=Election.PREFERRED, last_known_leader=False)


def test_elr_isr_shrink_below_min_isr() -> None:
    # testEligibleLeaderReplicas_IsrShrinkBelowMinISR
    change = ok(build(REG4, TP, frozenset({1, 2, 4}), ELR3, (1, 2)))
    assert change.record == _record(isr=(1, 2), elr=(3, 4))
    assert (change.registration.elr, change.registration.last_known_elr) == ((3, 4), ())


def test_elr_isr_expand_above_min_isr() -> None:
    # testEligibleLeaderReplicas_IsrExpandAboveMinISR
    reg = replace(REG4, isr=(1, 2), elr=(3,), last_known_elr=(4,))
    assert _build(reg, frozenset({1, 2, 4}), ELR3, (1, 2, 3)) == _record(
        isr=(1, 2, 3), elr=(), last_known_elr=())


def test_elr_isr_add_new_member_not_in_elr() -> None:
    # testEligibleLeaderReplicas_IsrAddNewMemberNotInELR: ELR and last-known ELR unchanged
    reg = replace(REG4, isr=(1,), elr=(3,), last_known_elr=(2,))
    change = ok(build(reg, TP, frozenset({1, 2, 4}), ELR3, (1, 4)))
    assert change.record == _record(isr=(1, 4))
    assert (change.registration.elr, change.registration.last_known_elr) == ((3,), (2,))


def test_elr_remove_unclean_shutdown_replicas() -> None:
    # testEligibleLeaderReplicas_RemoveUncleanShutdownReplicasFromElr
    reg = replace(REG4, isr=(1,), elr=(2, 3))
    assert _build(reg, frozenset({1, 2, 4}), ELR3, unclean=frozenset({3})) == _record(
        elr=(2,), last_known_elr=(3,))


def test_elr_can_be_elected() -> None:
    # testEligibleLeaderReplicas_ElrCanBeElected, both last-known-leader settings
    for last_known_leader, lke in ((True, ()), (False, (2,))):
        reg = replace(REG4, isr=(1,), elr=(3,), last_known_elr=lke)
        config = replace(ELR3, last_known_leader=last_known_leader)
        change = ok(build(reg, TP, frozenset({2, 3, 4}), config, ()))
        assert change.record == _record(isr=(3,), elr=(1,), leader=3)
        assert (change.registration.isr, change.registration.elr,
                change.registration.last_known_elr) == ((3,), (1,), lke)


def test_elr_isr_can_shrink_to_zero() -> None:
    # testEligibleLeaderReplicas_IsrCanShrinkToZero, both settings
    for last_known_leader in (True, False):
        config = replace(ELR3, last_known_leader=last_known_leader)
        change = ok(build(REG4, TP, frozenset(), config, ()))
        expected = _record(isr=(), leader=NO_LEADER, elr=(1, 2, 3, 4),
                           last_known_elr=(1,) if last_known_leader else None)
        assert change.record == expected
        if last_known_leader:
            after = ok(build(change.registration, TP, frozenset(), config,
                             unclean_shutdown=frozenset({2}))).record
            assert after is not None and after.last_known_elr is None


def test_elr_elect_last_known_leader() -> None:
    # testEligibleLeaderReplicas_ElectLastKnownLeader / ...ShouldFail
    reg = PartitionRegistration((1, 2, 3, 4), (), NO_LEADER, 100, 200, last_known_elr=(1,))
    config = replace(ELR3, last_known_leader=True)
    assert _build(reg, ALL, config, ()) == _record(isr=(1,), leader=1,
                                                   leader_recovery_state=RECOVERING,
                                                   last_known_elr=())
    blocked = replace(reg, elr=(3,))
    assert _build(blocked, frozenset({1, 2, 4}), config, ()) is None


def test_the_last_known_leader_is_elected_even_when_not_acceptable() -> None:
    # canElectLastKnownLeader does not test acceptability (trunk 2024-10): the fenced last
    # leader is elected, unclean, with an ONLINE election.
    reg = PartitionRegistration((1, 2, 3), (), NO_LEADER, 5, 9, last_known_elr=(1,))
    config = BuilderConfig(2, elr_enabled=True)
    assert elect_leader(reg, (), (), frozenset(), config) == ElectionResult(1, True)


def test_kafka_19522_elects_the_last_known_leader_only_when_acceptable() -> None:
    # KAFKA-19522 (PR #20200): canElectLastKnownLeader returns false when isAcceptableLeader
    # does; an acceptable last-known leader is still elected, unclean.
    reg = PartitionRegistration((1, 2, 3), (), NO_LEADER, 5, 9, last_known_elr=(1,))
    config = BuilderConfig(2, elr_enabled=True,
                           last_known_leader_check=LastKnownLeaderCheck.ACCEPTABLE)
    assert elect_leader(reg, (), (), frozenset({2, 3}), config) == ElectionResult(NO_LEADER, False)
    assert elect_leader(reg, (), (), frozenset({1}), config) == ElectionResult(1, True)


def test_forget_unclean_clears_the_last_known_leader_at_its_unclean_registration() -> None:
    # The candidate fix: broker 1 (the last-known leader, in neither ISR nor ELR) registers
    # uncleanly: the record clears lastKnownElr and elects nobody; unchecked keeps [1].
    reg = PartitionRegistration((1, 2, 3), (), NO_LEADER, 5, 9, last_known_elr=(1,))
    config = BuilderConfig(2, elr_enabled=True,
                           last_known_leader_check=LastKnownLeaderCheck.FORGET_UNCLEAN)
    change = ok(generate_leader_and_isr_update(reg, TP, frozenset({1, 2, 3}), config,
                                               broker_with_unclean_shutdown=1))
    assert change.record == _record(last_known_elr=())
    assert (change.registration.leader, change.registration.last_known_elr) == (NO_LEADER, ())
    unchecked = replace(config, last_known_leader_check=LastKnownLeaderCheck.UNCHECKED)
    elected = ok(generate_leader_and_isr_update(reg, TP, frozenset({1, 2, 3}), unchecked,
                                                broker_with_unclean_shutdown=1))
    assert elected.registration.leader == 1  # the released code: unclean broker 1 elected


def _fence(reg: PartitionRegistration, broker: int, active: frozenset[int],
           config: BuilderConfig) -> PartitionRegistration:
    return ok(generate_leader_and_isr_update(reg, TP, active - {broker}, config,
                                             broker_to_remove=broker)).registration


def test_fencing_brokers_fills_the_elr_as_in_replication_control_manager_test() -> None:
    # ReplicationControlManagerTest.testEligibleLeaderReplicas_BrokerFence (min ISR 3)
    config = BuilderConfig(3, elr_enabled=True)
    reg = PartitionRegistration((0, 1, 2, 3), (0, 1, 2, 3), 0)
    active = frozenset({0, 1, 2, 3})
    for broker in (2, 3):
        reg = _fence(reg, broker, active, config)
        active -= {broker}
    assert (reg.elr, reg.last_known_elr) == ((3,), ())
    reg = _fence(reg, 1, active, config)
    assert (reg.elr, reg.last_known_elr, reg.isr, reg.leader) == ((1, 3), (), (0,), 0)


def test_a_clean_election_from_the_elr_as_in_replication_control_manager_test() -> None:
    # ReplicationControlManagerTest.testEligibleLeaderReplicas_CleanElection
    config = BuilderConfig(3, elr_enabled=True)
    reg = PartitionRegistration((0, 1, 2, 3), (0, 1, 2, 3), 0)
    active = frozenset({0, 1, 2, 3})
    for broker in (1, 2, 3):
        reg = _fence(reg, broker, active, config)
        active -= {broker}
    assert reg.elr == (2, 3)
    active |= {2}  # unfenced: the partition has a leader, so no record
    unfence = ok(generate_leader_and_isr_update(reg, TP, active, config, broker_to_add=2))
    assert unfence.record is None
    reg = _fence(reg, 0, active, config)
    assert (reg.elr, reg.isr, reg.leader, reg.last_known_elr) == ((0, 3), (2,), 2, ())


def test_without_elr_the_fenced_last_isr_member_stays_in_the_isr() -> None:
    reg = PartitionRegistration((0, 1, 2), (0,), 0, 3, 7)
    after = _fence(reg, 0, frozenset({0, 1, 2}), BuilderConfig(2))
    assert (after.isr, after.leader, after.leader_epoch, after.partition_epoch) == (
        (0,), NO_LEADER, 4, 8)
    # the broker unfenced elects itself again (handleBrokerUnfenced, brokerToAdd)
    back = ok(generate_leader_and_isr_update(after, TP, frozenset({1, 2}), BuilderConfig(2),
                                             broker_to_add=0)).registration
    assert (back.leader, back.leader_epoch) == (0, 5)


def test_an_unclean_shutdown_takes_the_broker_out_of_isr_and_elr() -> None:
    # handleBrokerUncleanShutdown (3.8+): out of the ISR and, for an ELR member, out of the ELR
    config = BuilderConfig(3, elr_enabled=True)
    reg = PartitionRegistration((0, 1, 2), (0,), 0, elr=(1, 2))
    change = ok(generate_leader_and_isr_update(reg, TP, frozenset({0, 1, 2}), config,
                                               broker_with_unclean_shutdown=2)).registration
    assert (change.isr, change.elr, change.leader) == ((0,), (1,), 0)


def test_bad_input_is_a_value() -> None:
    assert err(build(FOO, TP, ALL, BuilderConfig(0))).problem is Problem.BAD_CONFIG
    assert err(build(FOO, TP, ALL, BuilderConfig(2), (2, 9))).problem is (
        Problem.ISR_NOT_SUBSET_OF_AR)
    bad = replace(FOO, leader=9)
    assert isinstance(err(build(bad, TP, ALL, BuilderConfig(2))), InvalidInput)
    # an empty target ISR with the leader acceptable: Kafka would keep it leader of nothing
    lone = PartitionRegistration((0, 1, 2), (0,), 0)
    assert err(build(lone, TP, frozenset({0}), BuilderConfig(1, elr_enabled=True), ())
               ).problem is Problem.LEADER_NOT_IN_ISR


def test_is_no_op_only_for_an_empty_record() -> None:
    assert is_no_op(_record())
    for fields in ({"isr": ()}, {"leader": NO_LEADER}, {"elr": ()}, {"last_known_elr": ()},
                   {"leader_recovery_state": RECOVERING}):
        assert not is_no_op(_record(**fields))
    assert _record().leader == NO_LEADER_CHANGE


# ---------------------------------------------------------------------------------------
# Properties over every small registration (independent of the code's formulation)
# ---------------------------------------------------------------------------------------

REPLICAS = (0, 1, 2)
SUBSETS = [tuple(c) for k in range(4) for c in itertools.combinations(REPLICAS, k)]


@st.composite
def registrations(draw: st.DrawFn) -> PartitionRegistration:
    isr = draw(st.sampled_from(SUBSETS))
    elr = tuple(r for r in draw(st.sampled_from(SUBSETS)) if r not in isr)
    leader = draw(st.sampled_from((NO_LEADER, *isr)))
    return PartitionRegistration(REPLICAS, isr, leader, draw(st.integers(0, 3)),
                                 draw(st.integers(0, 3)), elr=elr)


@settings(max_examples=400, deadline=None)
@given(registrations(), st.sampled_from(SUBSETS), st.sampled_from(SUBSETS),
       st.sampled_from(SUBSETS), st.integers(1, 3), st.booleans(), st.sampled_from(Election),
       st.sampled_from(LeaderEpochBump))
def test_every_build_is_a_well_formed_registration_with_kafka_s_epoch_rules(
    reg: PartitionRegistration, target: tuple[int, ...], acceptable: tuple[int, ...],
    unclean: tuple[int, ...], min_isr: int, elr: bool, election: Election,
    bump: LeaderEpochBump,
) -> None:
    config = BuilderConfig(min_isr, elr, election, bump)
    if reg.leader not in target and reg.leader in acceptable:
        acceptable = tuple(r for r in acceptable if r != reg.leader)  # the callers' contract
    change = ok(build(reg, TP, frozenset(acceptable), config, target, frozenset(unclean)))
    after = change.registration
    assert isinstance(check_registration(after).unwrap(), PartitionRegistration)
    if change.record is None:
        assert after == reg
        return
    assert after == merge(reg, change.record)
    assert after.partition_epoch == reg.partition_epoch + 1
    leader_changed = after.leader != reg.leader
    assert after.leader_epoch == reg.leader_epoch + (1 if change.record.leader != NO_LEADER_CHANGE
                                                     else 0)
    if leader_changed:
        assert after.leader_epoch == reg.leader_epoch + 1
    if bump is LeaderEpochBump.LEADER_CHANGE_ONLY and not leader_changed:
        assert after.leader_epoch == reg.leader_epoch
    # a new leader is acceptable, unless it is the last known leader (not checked by Kafka)
    if leader_changed and after.leader != NO_LEADER:
        assert after.leader in acceptable or after.leader_recovery_state is RECOVERING
    if elr and after.leader_recovery_state is not RECOVERING:
        assert not set(unclean) & set(after.elr) - set(reg.elr)
