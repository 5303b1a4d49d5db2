"""Every rule of the PartitionLeaderSelector family (and the preferred-replica one)."""

from __future__ import annotations

from isrlab.core.errors import ElectionError, ElectionFailed, InvalidInput, Problem
from isrlab.core.selectors import (
    Election,
    controlled_shutdown_leader_selector,
    no_op_leader_selector,
    offline_partition_leader_selector,
    preferred_replica_partition_leader_selector,
    reassigned_partition_leader_selector,
)
from isrlab.core.state import LeaderAndIsr
from tests.core.helpers import err, ok

CURRENT = LeaderAndIsr(leader=1, leader_epoch=4, isr=(1, 2, 3), zk_version=10)
AR = (3, 2, 1, 4)


def election_error(failure: ElectionFailed | InvalidInput) -> ElectionError:
    assert isinstance(failure, ElectionFailed)
    return failure.error


def test_offline_selector_elects_from_the_live_isr_and_keeps_the_live_isr() -> None:
    election = ok(offline_partition_leader_selector(CURRENT, AR, frozenset({2, 3, 4})))
    assert election == Election(LeaderAndIsr(3, 5, (2, 3), 11), (3, 2, 4))


def test_offline_selector_without_unclean_election_fails_when_no_isr_member_lives() -> None:
    failure = err(offline_partition_leader_selector(CURRENT, AR, frozenset({4})))
    assert election_error(failure) is ElectionError.NO_REPLICA_ONLINE


def test_offline_selector_with_unclean_election_lets_a_live_replica_lead_alone() -> None:
    election = ok(offline_partition_leader_selector(CURRENT, AR, frozenset({4}), True))
    assert election == Election(LeaderAndIsr(4, 5, (4,), 11), (4,))


def test_offline_selector_with_unclean_election_fails_when_no_replica_lives() -> None:
    failure = err(offline_partition_leader_selector(CURRENT, AR, frozenset({9}), True))
    assert election_error(failure) is ElectionError.NO_REPLICA_ONLINE


def test_reassigned_selector_elects_a_live_in_sync_reassigned_replica_and_keeps_the_isr() -> None:
    election = ok(reassigned_partition_leader_selector(CURRENT, (5, 2, 3), frozenset({2, 3, 5})))
    assert election == Election(LeaderAndIsr(2, 5, (1, 2, 3), 11), (5, 2, 3))


def test_reassigned_selector_fails_when_no_reassigned_replica_is_live_and_in_sync() -> None:
    failure = err(reassigned_partition_leader_selector(CURRENT, (5, 6), frozenset({5, 6})))
    assert election_error(failure) is ElectionError.NO_REPLICA_ONLINE
    empty = err(reassigned_partition_leader_selector(CURRENT, (), frozenset({1})))
    assert isinstance(empty, ElectionFailed) and "empty" in empty.reason


def test_controlled_shutdown_selector_moves_leadership_off_the_shutting_down_broker() -> None:
    election = ok(controlled_shutdown_leader_selector(
        CURRENT, AR, live_or_shutting_down_brokers=frozenset({1, 2, 3}),
        shutting_down_brokers=frozenset({1}),
    ))
    assert election == Election(LeaderAndIsr(3, 5, (2, 3), 11), (3, 2, 1))


def test_controlled_shutdown_selector_fails_when_only_shutting_down_brokers_are_in_sync() -> None:
    current = LeaderAndIsr(1, 4, (1,), 10)
    failure = err(controlled_shutdown_leader_selector(
        current, AR, frozenset({1, 2, 3}), frozenset({1})))
    assert election_error(failure) is ElectionError.STATE_CHANGE_FAILED


def test_preferred_selector_gives_leadership_back_to_the_first_assigned_replica() -> None:
    election = ok(preferred_replica_partition_leader_selector(CURRENT, AR, frozenset({1, 2, 3})))
    assert election == Election(LeaderAndIsr(3, 5, (1, 2, 3), 11), AR)


def test_preferred_selector_refuses_when_preferred_already_leads_or_cannot() -> None:
    leading = LeaderAndIsr(3, 4, (1, 2, 3), 10)
    failure = err(preferred_replica_partition_leader_selector(leading, AR, frozenset({3})))
    assert election_error(failure) is ElectionError.LEADER_ELECTION_NOT_NEEDED
    dead = err(preferred_replica_partition_leader_selector(CURRENT, AR, frozenset({1, 2})))
    assert election_error(dead) is ElectionError.STATE_CHANGE_FAILED
    none = err(preferred_replica_partition_leader_selector(CURRENT, (), frozenset({1, 2})))
    assert isinstance(none, InvalidInput)  # an ISR cannot be a subset of no replicas
    unassigned = LeaderAndIsr(-1, 4, (), 10)
    nobody = err(preferred_replica_partition_leader_selector(unassigned, (), frozenset({1})))
    assert election_error(nobody) is ElectionError.NO_REPLICA_ONLINE


def test_no_op_selector_returns_the_current_decision_unchanged() -> None:
    assert ok(no_op_leader_selector(CURRENT, AR)) == Election(CURRENT, AR)


def test_selectors_reject_an_isr_outside_the_assigned_replicas() -> None:
    failure = err(offline_partition_leader_selector(CURRENT, (1, 2), frozenset({1})))
    assert isinstance(failure, InvalidInput)
    assert failure.problem is Problem.ISR_NOT_SUBSET_OF_AR
    bad_epoch = LeaderAndIsr(1, -1, (1,), 0)
    negative = err(controlled_shutdown_leader_selector(bad_epoch, (1,), frozenset(), frozenset()))
    assert isinstance(negative, InvalidInput)
    assert negative.problem is Problem.NEGATIVE_VALUE
    assert isinstance(
        err(reassigned_partition_leader_selector(bad_epoch, (1,), frozenset({1}))), InvalidInput
    )


def test_every_real_election_bumps_the_leader_epoch_and_zk_version_by_one() -> None:
    elections = [
        ok(offline_partition_leader_selector(CURRENT, AR, frozenset(AR))),
        ok(reassigned_partition_leader_selector(CURRENT, AR, frozenset(AR))),
        ok(controlled_shutdown_leader_selector(CURRENT, AR, frozenset(AR), frozenset())),
        ok(preferred_replica_partition_leader_selector(CURRENT, AR, frozenset(AR))),
    ]
    for election in elections:
        assert election.leader_and_isr.leader_epoch == CURRENT.leader_epoch + 1
        assert election.leader_and_isr.zk_version == CURRENT.zk_version + 1
        assert election.leader_and_isr.leader in election.leader_and_isr.isr
