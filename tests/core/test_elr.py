"""KIP-966 Eligible Leader Replicas: the controller's ELR bookkeeping, elections, recovery."""

from __future__ import annotations

import itertools
from dataclasses import replace

from isrlab.core.elr import (
    LogEnd,
    PartitionRegistration,
    UncleanRecoveryStrategy,
    change_isr,
    check_registration,
    elect_leader,
    fence_broker,
    hw_may_advance,
    populate_target_elr,
    unclean_recovery_leader,
)
from isrlab.core.errors import ElectionError, ElectionFailed, InvalidInput, Problem
from isrlab.core.log_recovery import DurableLog, recover_log
from isrlab.core.state import NO_LEADER, records
from tests.core.helpers import err, ok

REG = PartitionRegistration((0, 1, 2), (0, 1, 2), 0, 3, 7)


def test_shrinking_below_min_isr_moves_the_removed_replicas_into_the_elr() -> None:
    shrunk = ok(change_isr(REG, (0, 1), 2))
    assert (shrunk.isr, shrunk.elr, shrunk.partition_epoch) == ((0, 1), (), 8)
    below = ok(change_isr(shrunk, (0,), 2))
    assert (below.isr, below.elr, below.last_known_elr) == ((0,), (1,), ())
    # rejoining the ISR up to min ISR clears ELR and last-known ELR
    back = ok(change_isr(below, (0, 1), 2))
    assert (back.elr, back.last_known_elr) == ((), ())


def test_an_unclean_shutdown_keeps_a_replica_out_of_the_elr_but_in_the_last_known_elr() -> None:
    base = replace(REG, isr=(0, 1), elr=(2,))
    elr, last_known = populate_target_elr(base, (0,), 3, frozenset({2}))
    assert (elr, last_known) == ((1,), (2,))
    assert populate_target_elr(base, (0,), 3, enabled=False) == ((2,), ())


def test_isr_and_elr_together_keep_every_replica_that_left_below_min_isr() -> None:
    # Brute force over every registration of 3 replicas and every target ISR: the rule
    # keeps ISR ∪ ELR ∪ last-known ELR ⊇ old ISR ∪ old ELR when below min ISR, and
    # clears the ELR otherwise.  Independent of the code's formulation.
    replicas = (0, 1, 2)
    subsets = [tuple(c) for k in range(4) for c in itertools.combinations(replicas, k)]
    for isr, elr, target in itertools.product(subsets, subsets, subsets):
        if set(isr) & set(elr):
            continue
        reg = PartitionRegistration(replicas, isr, NO_LEADER, elr=elr)
        for min_isr in (1, 2, 3):
            new_elr, lke = populate_target_elr(reg, target, min_isr)
            if len(target) >= min_isr:
                assert (new_elr, lke) == ((), ())
            else:
                assert set(new_elr) == (set(isr) | set(elr)) - set(target)
                assert not set(new_elr) & set(target)


def test_without_elr_the_last_isr_member_stays_in_the_isr_with_no_leader() -> None:
    alone = replace(REG, isr=(0,))
    fenced = ok(fence_broker(alone, 0, 2, enabled=False))
    assert (fenced.isr, fenced.leader, fenced.leader_epoch) == ((0,), NO_LEADER, 4)
    with_elr = ok(fence_broker(alone, 0, 2))
    assert (with_elr.isr, with_elr.elr, with_elr.leader) == ((), (0,), NO_LEADER)
    dirty = ok(fence_broker(alone, 0, 2, unclean_shutdown=True))
    assert (dirty.isr, dirty.elr, dirty.last_known_elr) == ((), (), (0,))


def test_fencing_a_follower_keeps_the_leader_and_epoch() -> None:
    fenced = ok(fence_broker(REG, 2, 2))
    assert (fenced.isr, fenced.leader, fenced.leader_epoch) == ((0, 1), 0, 3)


def test_a_clean_election_takes_the_isr_first_then_the_elr() -> None:
    reg = PartitionRegistration((0, 1, 2), (), NO_LEADER, 3, 7, elr=(1, 2))
    from_elr = ok(elect_leader(reg, frozenset({2}), min_insync_replicas=2))
    assert not from_elr.unclean
    assert (from_elr.registration.leader, from_elr.registration.isr,
            from_elr.registration.elr) == (2, (2,), (1,))
    assert from_elr.registration.leader_epoch == 4
    # one replica meets min.insync.replicas = 1: the ELR is cleared into nothing
    at_min = ok(elect_leader(reg, frozenset({1}), min_insync_replicas=1)).registration
    assert (at_min.isr, at_min.elr, at_min.last_known_elr) == ((1,), (), ())
    isr_first = ok(elect_leader(replace(REG, leader=NO_LEADER), frozenset({1, 2})))
    assert isr_first.registration.leader == 1 and isr_first.registration.isr == (0, 1, 2)


def test_without_elr_or_unclean_election_nobody_is_elected() -> None:
    reg = PartitionRegistration((0, 1, 2), (), NO_LEADER, 3, 7, elr=(1,))
    failure = err(elect_leader(reg, frozenset({1}), elr_enabled=False))
    assert isinstance(failure, ElectionFailed)
    assert failure.error is ElectionError.NO_REPLICA_ONLINE
    unclean = ok(elect_leader(reg, frozenset({2}), unclean_leader_election_enable=True))
    assert unclean.unclean and unclean.registration.isr == (2,)
    assert unclean.registration.elr == ()


def test_bad_registrations_and_arguments_are_rejected() -> None:
    def problem(reg: PartitionRegistration) -> Problem:
        failure = err(check_registration(reg))
        assert isinstance(failure, InvalidInput)
        return failure.problem

    assert problem(replace(REG, leader_epoch=-1)) is Problem.NEGATIVE_VALUE
    assert problem(replace(REG, replicas=(0, 0, 1, 2))) is Problem.DUPLICATE_REPLICA
    assert problem(replace(REG, elr=(5,))) is Problem.ISR_NOT_SUBSET_OF_AR
    assert problem(replace(REG, elr=(1,))) is Problem.DUPLICATE_REPLICA
    assert problem(replace(REG, isr=(1, 2))) is Problem.LEADER_NOT_IN_ISR
    assert err(change_isr(REG, (0,), 0)).problem is Problem.BAD_CONFIG
    assert err(change_isr(REG, (0, 5), 2)).problem is Problem.ISR_NOT_SUBSET_OF_AR
    assert isinstance(err(elect_leader(replace(REG, elr=(1,)), frozenset())), InvalidInput)


def test_the_hw_moves_only_with_min_isr_members_when_elr_is_on() -> None:
    assert not hw_may_advance(1, 2)
    assert hw_may_advance(2, 2)
    assert hw_may_advance(1, 2, elr_enabled=False)


def test_unclean_recovery_picks_the_longest_log_once_enough_replicas_reported() -> None:
    reg = PartitionRegistration((0, 1, 2), (), NO_LEADER, 3, 7, last_known_elr=(0, 1))
    reports = {1: LogEnd(3, 5), 2: LogEnd(3, 9)}
    assert unclean_recovery_leader(reg, reports) is None  # 0 of the last-known ELR missing
    reports[0] = LogEnd(2, 20)
    assert unclean_recovery_leader(reg, reports) == 2  # epoch first, then LEO
    assert unclean_recovery_leader(reg, {1: LogEnd(1, 1)},
                                   UncleanRecoveryStrategy.AGGRESSIVE) == 1
    assert unclean_recovery_leader(reg, reports, UncleanRecoveryStrategy.NONE) is None
    assert unclean_recovery_leader(reg, {9: LogEnd(9, 9)}) is None
    majority = replace(reg, last_known_elr=())
    assert unclean_recovery_leader(majority, {1: LogEnd(0, 1)}) is None
    assert unclean_recovery_leader(majority, {1: LogEnd(0, 1), 2: LogEnd(0, 1)}) == 1


def test_kip_966_story_without_elr_a_truncated_replica_is_elected_with_elr_it_is_not() -> None:
    # Replicas 0 (leader) and 1, min.insync.replicas 2.  Replica 1 falls out of the ISR;
    # the leader alone takes a write and (without KIP-966's gate) moves the HW to 1.  The
    # leader's broker then dies uncleanly: record 0 was never flushed.
    log = records((7,), 3)
    durable = DurableLog(log, flushed=0)
    recovered = ok(recover_log(durable, clean_shutdown=False)).log
    assert recovered == () and hw_may_advance(1, 2, elr_enabled=False)
    reg = PartitionRegistration((0, 1), (0,), 0, 3, 9)
    # Without ELR: the fenced last ISR member stays in the ISR; it comes back with an empty
    # log and is elected cleanly -- the acknowledged record is gone.
    kept = ok(fence_broker(reg, 0, 2, enabled=False))
    back = ok(elect_leader(kept, frozenset({0, 1}), elr_enabled=False)).registration
    assert (back.leader, back.isr) == (0, (0,))
    assert not ok(elect_leader(kept, frozenset({0}), elr_enabled=False)).unclean
    # With ELR: the HW could not have moved (|ISR| = 1 < 2), and the unclean shutdown takes
    # broker 0 out of the ELR: no clean election is possible, nothing is silently lost.
    assert not hw_may_advance(1, 2)
    fenced = ok(fence_broker(reg, 0, 2, unclean_shutdown=True))
    assert (fenced.isr, fenced.elr, fenced.last_known_elr) == ((), (), (0,))
    assert isinstance(err(elect_leader(fenced, frozenset({0, 1}))), ElectionFailed)
