"""isrlab.spec.symbolic.core_kraft against the KRaft core functions, and their obligations."""

from __future__ import annotations

import itertools
from typing import cast

import z3
from hypothesis import example, given, settings
from hypothesis import strategies as st

from isrlab.core.broker_heartbeat import (
    BrokerRegistrationRequest,
    UncleanDetection,
    register_broker,
)
from isrlab.core.elr import LeaderRecoveryState, PartitionRegistration
from isrlab.core.kraft_alter_partition import (
    AlterPartitionConfig,
    BrokerState,
    KRaftAlterPartitionRequest,
    alter_partition,
    ineligible_replicas,
)
from isrlab.core.kraft_metadata import BrokerRegistration, MetadataImage
from isrlab.core.partition_change_builder import BuilderConfig, build
from isrlab.core.state import NO_LEADER, TopicPartition
from isrlab.proofs.kraft_obligations import (
    alter_partition_claims,
    claim_row,
    elr_claims,
    kip903_claims,
    kraft_groups,
    unclean_detection_claims,
)
from isrlab.proofs.mechanism_obligations import induction_rows, shortest_violation
from isrlab.spec.symbolic import core_kraft as sym
from tests.core.helpers import ok

N = 3
REPLICAS = (0, 1, 2)
TP = TopicPartition("t", 0)
SUBSETS = [tuple(c) for k in range(N + 1) for c in itertools.combinations(REPLICAS, k)]
RECOVERING, RECOVERED = LeaderRecoveryState.RECOVERING, LeaderRecoveryState.RECOVERED


def _bits(members: tuple[int, ...] | frozenset[int]) -> tuple[z3.BoolRef, ...]:
    return tuple(z3.BoolVal(i in members) for i in range(N))


def _value(expr: z3.ExprRef) -> int | bool:
    simple = z3.simplify(expr)
    if z3.is_true(simple) or z3.is_false(simple):
        return bool(z3.is_true(simple))
    return int(cast(z3.IntNumRef, simple).as_long())


def _members(bits: tuple[z3.BoolRef, ...]) -> tuple[int, ...]:
    return tuple(i for i, b in enumerate(bits) if _value(b))


def _ints(values: tuple[int, ...] | list[int]) -> tuple[z3.ArithRef, ...]:
    return tuple(z3.IntVal(v) for v in values)


# ---------------------------------------------------------------------------------------
# AlterPartition validation and KIP-903 eligibility
# ---------------------------------------------------------------------------------------

BROKER = st.tuples(st.booleans(), st.booleans(), st.booleans(), st.integers(0, 2))
EPOCH = st.integers(0, 2)


@settings(max_examples=400, deadline=None)
# The leader in controlled shutdown, KIP-841 off: the request is valid, the builder elects
# another leader (none here) and the answer is FENCED_LEADER_EPOCH (version 0); the
# encoding once answered NONE (a hypothesis find).
@example(0, 1, 0, False, [(True, False, True, 0), (False, False, False, 0),
                          (False, False, False, 0)], 0, 1, 0, (0,), [0, 0, 0], False, 0,
         False, False)
@given(st.sampled_from(REPLICAS), EPOCH, EPOCH, st.booleans(),
       st.lists(BROKER, min_size=N, max_size=N), EPOCH, EPOCH, EPOCH,
       st.sampled_from(SUBSETS), st.lists(st.integers(-1, 2), min_size=N, max_size=N),
       st.booleans(), st.integers(0, 3), st.booleans(), st.booleans())
def test_the_alter_partition_encoding_gives_the_python_error(
    leader: int, leader_epoch: int, partition_epoch: int, recovering: bool,
    brokers: list[tuple[bool, bool, bool, int]], sender_epoch: int, req_leader_epoch: int,
    req_partition_epoch: int, new_isr: tuple[int, ...], member_epochs: list[int],
    req_recovering: bool, version: int, kip841: bool, kip903: bool,
) -> None:
    # brokers[b] = (registered, fenced, shutting down, registered epoch); the sender is 0
    image = MetadataImage(brokers=tuple(
        BrokerRegistration(b, b, e, fenced, shutting)
        for b, (registered, fenced, shutting, e) in enumerate(brokers) if registered))
    reg = PartitionRegistration(REPLICAS, (leader,), leader, leader_epoch, partition_epoch,
                                leader_recovery_state=RECOVERING if recovering else RECOVERED)
    request = KRaftAlterPartitionRequest(
        0, sender_epoch, req_leader_epoch, req_partition_epoch,
        tuple(BrokerState(b, member_epochs[b]) for b in new_isr),
        RECOVERING if req_recovering else RECOVERED, version)
    config = AlterPartitionConfig(kip841, kip903)
    python = ok(alter_partition(TP, reg, image, request, config)).error
    encoded = sym.alter_partition_error(
        z3.IntVal(leader), z3.IntVal(leader_epoch), z3.IntVal(partition_epoch),
        z3.BoolVal(recovering), tuple(z3.BoolVal(b[0]) for b in brokers),
        tuple(z3.BoolVal(b[1]) for b in brokers), tuple(z3.BoolVal(b[2]) for b in brokers),
        _ints([b[3] for b in brokers]), 0, z3.IntVal(sender_epoch), z3.IntVal(req_leader_epoch),
        z3.IntVal(req_partition_epoch), _bits(new_isr), _ints(member_epochs),
        z3.BoolVal(req_recovering), version, kip841, kip903)
    assert _value(encoded) == python.value


def test_the_eligibility_encoding_agrees_with_the_python_on_every_broker_state() -> None:
    for registered, fenced, shutting, proposed, kip903 in itertools.product(
            (False, True), (False, True), (False, True), (-1, 0, 1), (False, True)):
        image = MetadataImage(brokers=(BrokerRegistration(0, 0, 0, fenced, shutting),)
                              if registered else ())
        python = bool(ineligible_replicas((BrokerState(0, proposed),), image, kip903))
        encoded = sym.ineligible(z3.BoolVal(registered), z3.BoolVal(fenced),
                                 z3.BoolVal(shutting), z3.IntVal(0), z3.IntVal(proposed), kip903)
        assert _value(encoded) == python


# ---------------------------------------------------------------------------------------
# The ELR update
# ---------------------------------------------------------------------------------------


def _elr_case(isr: tuple[int, ...], elr: tuple[int, ...], lke: tuple[int, ...], leader: int,
              target: tuple[int, ...], unclean: tuple[int, ...], acceptable: tuple[int, ...],
              min_isr: int) -> None:
    reg = PartitionRegistration(REPLICAS, isr, leader, elr=elr, last_known_elr=lke)
    config = BuilderConfig(min_isr, elr_enabled=True)
    after = ok(build(reg, TP, frozenset(acceptable), config, target,
                     frozenset(unclean))).registration
    new_isr, new_elr, elected, unclean_election = sym.elr_update(
        _bits(isr), _bits(elr), _bits(lke), z3.IntVal(leader), _bits(target), _bits(unclean),
        _bits(acceptable), z3.IntVal(min_isr))
    assert (_members(new_isr), _members(new_elr), _value(elected)) == (
        after.isr, after.elr, after.leader), (reg, target, unclean, acceptable, min_isr)
    assert _value(unclean_election) == (after.leader_recovery_state is RECOVERING)


def _within_contract(leader: int, target: tuple[int, ...], acceptable: tuple[int, ...]
                     ) -> tuple[int, ...]:
    """Kafka's callers: a target ISR without the leader makes the leader unacceptable."""
    if leader != NO_LEADER and leader not in target:
        return tuple(r for r in acceptable if r != leader)
    return acceptable


def test_the_elr_update_encoding_agrees_with_build_on_every_isr_elr_and_target() -> None:
    # every ISR/ELR/target over 3 replicas (ISR and ELR disjoint), the first ISR member (or
    # nobody) leading, everybody else acceptable, min ISR 1..3
    for isr, elr_raw, target in itertools.product(SUBSETS, SUBSETS, SUBSETS):
        elr = tuple(r for r in elr_raw if r not in isr)
        leader = isr[0] if isr else NO_LEADER
        acceptable = _within_contract(leader, target, REPLICAS)
        for min_isr in (1, 2, 3):
            _elr_case(isr, elr, (), leader, target, (), acceptable, min_isr)


@settings(max_examples=500, deadline=None)
@given(st.sampled_from(SUBSETS), st.sampled_from(SUBSETS), st.sampled_from(SUBSETS),
       st.sampled_from(SUBSETS), st.sampled_from(SUBSETS), st.sampled_from(SUBSETS),
       st.integers(1, 3), st.data())
def test_the_elr_update_encoding_agrees_with_any_acceptable_set_and_unclean_shutdowns(
    isr: tuple[int, ...], elr: tuple[int, ...], lke: tuple[int, ...], target: tuple[int, ...],
    unclean: tuple[int, ...], acceptable: tuple[int, ...], min_isr: int, data: st.DataObject,
) -> None:
    elr = tuple(r for r in elr if r not in isr)
    leader = data.draw(st.sampled_from((NO_LEADER, *isr)))
    lke = lke if leader == NO_LEADER else ()
    _elr_case(isr, elr, lke, leader, target, unclean, _within_contract(leader, target,
                                                                       acceptable), min_isr)


# ---------------------------------------------------------------------------------------
# Unclean-shutdown detection
# ---------------------------------------------------------------------------------------


def test_the_unclean_detection_encoding_agrees_with_register_broker() -> None:
    for detection, existing, same, previous, version in itertools.product(
            UncleanDetection, (False, True), (False, True), (-1, 4, 5), (1, 2, 3)):
        current = BrokerRegistration(1, 7, 5) if existing else None
        request = BrokerRegistrationRequest(1, 7 if same else 8, previous, version)
        python = ok(register_broker(current, False, request, 9, detection)).unclean_shutdown
        encoded = sym.unclean_detected(detection.value, z3.BoolVal(existing), z3.IntVal(5),
                                       z3.BoolVal(same), z3.IntVal(previous), z3.IntVal(version))
        assert _value(encoded) == python, (detection, existing, same, previous, version)


# ---------------------------------------------------------------------------------------
# The obligations, and their counterexamples replayed through the Python
# ---------------------------------------------------------------------------------------


def test_accepted_alter_partitions_are_proved_at_the_current_epochs() -> None:
    assert {r.status for r in (claim_row(c, 20_000) for c in alter_partition_claims())} == {
        "proved"}


def test_kip903_is_proved_only_with_the_epoch_check_and_version_3() -> None:
    rows = [claim_row(c, 20_000) for c in kip903_claims()]
    assert [(r.action, r.status) for r in rows] == [
        ("3.5+ (KIP-903), v3", "proved"), ("3.3-3.4 (no KIP-903), v3", "refuted"),
        ("3.5+ (KIP-903), v2 request", "refuted")]


def test_a_stale_member_accepted_without_kip903_replayed_through_the_python() -> None:
    # KAFKA-14139's shape: broker 2 re-registered (epoch 1 -> 2) after the leader saw epoch 1.
    image = MetadataImage(brokers=(BrokerRegistration(0, 0, 0, False),
                                   BrokerRegistration(1, 1, 1, False),
                                   BrokerRegistration(2, 22, 2, False)))
    reg = PartitionRegistration(REPLICAS, (0, 1), 0)
    request = KRaftAlterPartitionRequest(0, 0, 0, 0, (BrokerState(0, 0), BrokerState(1, 1),
                                                      BrokerState(2, 1)))
    assert ok(alter_partition(TP, reg, image, request, AlterPartitionConfig(kip903=False))
              ).error.value == sym.NONE
    assert ok(alter_partition(TP, reg, image, request, AlterPartitionConfig())
              ).error.value == sym.INELIGIBLE_REPLICA


def test_the_elr_update_claims_hold_except_the_unchecked_last_known_leader() -> None:
    rows = [claim_row(c, 20_000) for c in elr_claims()]
    assert {r.target: r.status for r in rows} == {
        "IsrElrDisjoint": "proved", "LeaderInIsr": "proved",
        "CleanChangeBelowMinIsrKeepsElectable": "proved", "NoUncleanShutdownInElr": "proved",
        "ElectedLeaderAcceptable": "refuted"}


def test_the_unchecked_last_known_leader_replayed_through_the_python() -> None:
    # The refutation's shape: leaderless, ISR and ELR empty, last-known ELR [0], broker 0
    # fenced: build elects 0, unclean (RECOVERING), though 0 is not acceptable.
    reg = PartitionRegistration(REPLICAS, (), NO_LEADER, last_known_elr=(0,))
    after = ok(build(reg, TP, frozenset({1, 2}), BuilderConfig(1, elr_enabled=True))
               ).registration
    assert (after.leader, after.isr, after.leader_recovery_state) == (0, (0,), RECOVERING)


def test_unclean_detection_outcomes_by_version() -> None:
    rows = [claim_row(c, 20_000) for c in unclean_detection_claims()]
    assert [(r.target, r.action, r.status) for r in rows] == [
        ("CrashRestartDetected", "3.7", "refuted"), ("CleanRestartNotFlagged", "3.7", "proved"),
        ("CrashRestartDetected", "3.8", "proved"), ("CleanRestartNotFlagged", "3.8", "proved"),
        ("CrashRestartDetected", "3.9+", "proved"),
        ("CleanRestartNotFlagged", "3.9+", "refuted")]


def test_kip903_keeps_every_isr_member_at_the_hw_and_its_absence_is_kafka_14139() -> None:
    assert {r.status for r in induction_rows(sym.kip903_system(N, kip903=True), 20_000)} == {
        "proved"}
    assert shortest_violation(sym.kip903_system(N, kip903=True), 6, 20_000) is None
    refuted = {(r.target, r.action) for r in induction_rows(sym.kip903_system(N, kip903=False),
                                                              20_000) if r.status != "proved"}
    assert {action for _, action in refuted} == {"Accept"}
    # Hand count: the leader raises its HW over its own log (ISR {0}), follower 1 fetches it
    # all, the leader proposes 1, 1 restarts with an empty disk (not in the ISR: no partition
    # epoch bump), the controller accepts the stale proposal.
    assert shortest_violation(sym.kip903_system(N, kip903=False), 6, 20_000) == (
        5, ["RaiseHw", "Fetch[1]", "Propose[1]", "RestartEmptyDisk[1]", "Accept"])


def test_the_accept_guard_of_the_kip903_system_is_alter_partition_s_answer() -> None:
    image = MetadataImage(brokers=tuple(BrokerRegistration(b, b, 5, False) for b in REPLICAS))
    for extra, carried, pver, kip903 in itertools.product(
            [s for s in SUBSETS if 0 not in s], itertools.product((4, 5), repeat=N), (3, 4),
            (False, True)):
        proposed = (0, *extra)
        reg = PartitionRegistration(REPLICAS, (0,), 0, 0, 4)
        request = KRaftAlterPartitionRequest(0, 5, 0, pver, tuple(
            BrokerState(b, carried[b]) for b in proposed))
        python = ok(alter_partition(TP, reg, image, request,
                                    AlterPartitionConfig(kip903=kip903))).error.value == 0
        encoded = sym.accepts_proposal(z3.IntVal(pver), z3.IntVal(4), _bits(proposed),
                                       _ints(list(carried)), _ints([5] * N), kip903)
        assert _value(encoded) == python, (proposed, carried, pver, kip903)


def test_a_restart_of_an_isr_member_voids_the_proposal_by_partition_epoch() -> None:
    # Why KAFKA-14139 needs a replica outside the ISR: fencing an ISR member writes a
    # PartitionChangeRecord, so an AlterPartition built before it fails INVALID_UPDATE_VERSION.
    image = MetadataImage(brokers=tuple(BrokerRegistration(b, b, b, False) for b in REPLICAS))
    reg = PartitionRegistration(REPLICAS, (0, 1), 0, partition_epoch=4)
    request = KRaftAlterPartitionRequest(0, 0, 0, 4, (BrokerState(0, 0), BrokerState(1, 1),
                                                      BrokerState(2, 2)))
    fenced_1 = PartitionRegistration(REPLICAS, (0,), 0, partition_epoch=5)
    answer = ok(alter_partition(TP, fenced_1, image, request, AlterPartitionConfig(kip903=False)))
    assert answer.error.value == sym.INVALID_UPDATE_VERSION
    assert ok(alter_partition(TP, reg, image, request, AlterPartitionConfig())).error.value == 0


def test_the_groups_are_catalogued_under_kafka_core() -> None:
    groups = kraft_groups()
    assert [g.key for g in groups] == ["kraft-alter-partition", "kraft-kip903",
                                       "kraft-kip903-system", "kraft-no-kip903-system",
                                       "kraft-elr-update", "kraft-unclean-detection"]
    assert all(g.model == "kafka-core" for g in groups)
    assert len({g.digest() for g in groups}) == len(groups)
