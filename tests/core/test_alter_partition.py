"""KIP-497 AlterIsr / AlterPartition: the leader proposes, the controller decides."""

from __future__ import annotations

from dataclasses import replace

from isrlab.core.alter_partition import (
    AlterPartitionRequest,
    AlterPartitionResponse,
    ControllerView,
    HwIsr,
    IsrState,
    PendingIsrChange,
    alter_partition,
    apply_isr_state,
    committed_isr_state,
    enough_replicas_reach_offset,
    handle_alter_partition_response,
    hw_isr,
    leader_hw_with_isr_state,
    maximal_isr,
    maybe_shrink_isr_async,
    prepare_isr_expand,
    prepare_isr_shrink,
    update_follower_fetch_async,
)
from isrlab.core.errors import Errors, Problem
from isrlab.core.isr import read_from_local_log
from isrlab.core.produce import AcksCheck
from isrlab.core.state import LeaderAndIsr, Partition
from tests.core.helpers import append, err, fetch, in_sync_leader, leader_partition, ok

VIEW = ControllerView(((0, 10), (1, 11), (2, 12)))
CURRENT = LeaderAndIsr(0, 1, (0, 1), 5)


def _leader_with_isr(isr: frozenset[int]) -> tuple[Partition, IsrState]:
    p = leader_partition((0, 1, 2))
    return replace(p, isr=isr), committed_isr_state(isr, p.zk_version)


def test_an_expansion_is_proposed_once_and_keeps_the_committed_isr_and_version() -> None:
    p, state = _leader_with_isr(frozenset({0, 1}))
    proposal = ok(prepare_isr_expand(p, state, 2, broker_epoch=10))
    assert proposal.state.isr == frozenset({0, 1})
    assert proposal.state.pending == PendingIsrChange(frozenset({0, 1, 2}), True)
    assert proposal.request == AlterPartitionRequest(0, 10, p.leader_epoch, (0, 1, 2),
                                                     p.zk_version)
    # at most one in flight: a second proposal sends nothing and changes nothing
    again = ok(prepare_isr_shrink(p, proposal.state, frozenset({1})))
    assert again == type(again)(proposal.state, None)


def test_expanding_a_member_or_a_stranger_sends_nothing_or_is_rejected() -> None:
    p, state = _leader_with_isr(frozenset({0, 1}))
    assert ok(prepare_isr_expand(p, state, 1)).request is None
    assert err(prepare_isr_expand(p, state, 7)).problem is Problem.NOT_A_REPLICA
    assert err(prepare_isr_expand(p, state, 0)).problem is Problem.NOT_A_REPLICA


def test_a_shrink_is_pending_and_the_maximal_isr_stays_the_committed_one() -> None:
    p, state = _leader_with_isr(frozenset({0, 1, 2}))
    proposal = ok(prepare_isr_shrink(p, state, frozenset({2})))
    assert proposal.request is not None and proposal.request.new_isr == (0, 1)
    assert maximal_isr(proposal.state) == frozenset({0, 1, 2})
    assert hw_isr(proposal.state, HwIsr.COMMITTED) == frozenset({0, 1, 2})
    assert ok(prepare_isr_shrink(p, state, frozenset())).request is None
    assert err(prepare_isr_shrink(p, state, frozenset({0}))).problem is Problem.LEADER_NOT_IN_ISR


def test_bad_leader_states_are_rejected() -> None:
    p, state = _leader_with_isr(frozenset({0, 1}))
    follower = replace(p, leader=1)
    assert err(prepare_isr_expand(follower, state, 2)).problem is Problem.WRONG_ROLE
    outside = replace(state, pending=PendingIsrChange(frozenset({0, 9}), True))
    assert err(leader_hw_with_isr_state(p, outside)).problem is Problem.ISR_NOT_SUBSET_OF_AR
    no_leader = committed_isr_state({1}, 0)
    assert err(leader_hw_with_isr_state(p, no_leader)).problem is Problem.LEADER_NOT_IN_ISR
    negative = committed_isr_state({0}, -1)
    assert err(leader_hw_with_isr_state(p, negative)).problem is Problem.NEGATIVE_VALUE


def test_the_maximal_isr_holds_the_hw_at_a_pending_joiner_but_the_committed_one_does_not() -> None:
    # Leader at LEO 3, follower 1 at 3 (ISR), follower 2 at 1 proposed to join.
    p = append(leader_partition((0, 1, 2)), 3)
    p = fetch(fetch(p, 1, 3, 0), 2, 1, 0)
    p = replace(p, isr=frozenset({0, 1}), high_watermark=1)
    state = ok(prepare_isr_expand(p, committed_isr_state({0, 1}, 0), 2)).state
    assert ok(leader_hw_with_isr_state(p, state, HwIsr.MAXIMAL)) == 1
    assert ok(leader_hw_with_isr_state(p, state, HwIsr.COMMITTED)) == 3


def test_acks_all_counts_the_isr_of_the_rule() -> None:
    pending = IsrState(frozenset({0}), 3, PendingIsrChange(frozenset({0, 1}), True))
    assert enough_replicas_reach_offset(pending, 2, 3, 2) == AcksCheck(False, Errors.NONE)
    assert enough_replicas_reach_offset(pending, 3, 3, 2) == AcksCheck(True, Errors.NONE)
    assert enough_replicas_reach_offset(pending, 3, 3, 2, HwIsr.COMMITTED) == AcksCheck(
        True, Errors.NOT_ENOUGH_REPLICAS_AFTER_APPEND)


def _request(broker_id: int = 0, broker_epoch: int = 10, leader_epoch: int = 1,
             new_isr: tuple[int, ...] = (0, 1, 2), partition_epoch: int = 5,
             ) -> AlterPartitionRequest:
    return AlterPartitionRequest(broker_id, broker_epoch, leader_epoch, new_isr, partition_epoch)


def test_the_controller_accepts_a_current_proposal_with_the_next_version() -> None:
    response = ok(alter_partition(CURRENT, (0, 1, 2), _request(), VIEW))
    assert response == AlterPartitionResponse(Errors.NONE, LeaderAndIsr(0, 1, (0, 1, 2), 6))
    # the ISR is already the proposed one: the current state, no new version
    same = ok(alter_partition(CURRENT, (0, 1, 2), _request(new_isr=(1, 0)), VIEW))
    assert same == AlterPartitionResponse(Errors.NONE, CURRENT)


def test_the_controller_refuses_stale_fenced_and_ineligible_proposals() -> None:
    replicas = (0, 1, 2)

    def error(request: AlterPartitionRequest, view: ControllerView = VIEW) -> Errors:
        return ok(alter_partition(CURRENT, replicas, request, view)).error

    assert error(_request(broker_epoch=9)) is Errors.STALE_BROKER_EPOCH
    assert error(_request(leader_epoch=0)) is Errors.FENCED_LEADER_EPOCH
    assert error(_request(leader_epoch=2)) is Errors.NOT_CONTROLLER
    assert error(_request(partition_epoch=6)) is Errors.NOT_CONTROLLER
    assert error(_request(broker_id=1, broker_epoch=11)) is Errors.INVALID_REQUEST
    assert error(_request(partition_epoch=4)) is Errors.INVALID_UPDATE_VERSION
    assert error(_request(new_isr=(1, 2))) is Errors.INVALID_REQUEST
    assert error(_request(new_isr=(0, 3))) is Errors.INVALID_REQUEST
    fenced = replace(VIEW, fenced=frozenset({2}))
    assert error(_request(), fenced) is Errors.INELIGIBLE_REPLICA
    down = replace(VIEW, shutting_down=frozenset({2}))
    assert error(_request(), down) is Errors.INELIGIBLE_REPLICA
    unregistered = ControllerView(((0, 10), (1, 11)))
    assert error(_request(), unregistered) is Errors.INELIGIBLE_REPLICA
    # before KIP-841 (3.3) the offline broker is taken into the ISR
    assert error(_request(), replace(fenced, fence_ineligible=False)) is Errors.NONE
    assert err(alter_partition(CURRENT, replicas, _request(partition_epoch=-1), VIEW)
               ).problem is Problem.NEGATIVE_VALUE


def test_the_leader_commits_the_controllers_answer_only_for_its_own_pending_proposal() -> None:
    p, state = _leader_with_isr(frozenset({0, 1}))
    proposal = ok(prepare_isr_expand(p, state, 2))
    pending = proposal.state
    epoch = p.leader_epoch
    answer = LeaderAndIsr(0, epoch, (0, 1, 2), state.partition_epoch + 1)
    done = handle_alter_partition_response(pending, epoch, pending,
                                           AlterPartitionResponse(Errors.NONE, answer))
    assert done.state == committed_isr_state({0, 1, 2}, state.partition_epoch + 1)
    assert not done.retry
    # a response to a proposal the leader moved on from, or with no pending change: ignored
    other = IsrState(frozenset({0}), 9)
    assert handle_alter_partition_response(other, epoch, pending, AlterPartitionResponse(
        Errors.NONE, answer)).state == other
    # another leader epoch or an older version: still pending
    for stale in (replace(answer, leader_epoch=epoch + 1), replace(answer, zk_version=-1)):
        out = handle_alter_partition_response(pending, epoch, pending,
                                              AlterPartitionResponse(Errors.NONE, stale))
        assert out.state == pending


def test_errors_revert_wait_or_retry_as_kafka_3_x_does() -> None:
    p, state = _leader_with_isr(frozenset({0, 1}))
    pending = ok(prepare_isr_expand(p, state, 2)).state

    def outcome(error: Errors) -> tuple[IsrState, bool]:
        out = handle_alter_partition_response(pending, 1, pending, AlterPartitionResponse(error))
        return out.state, out.retry

    assert outcome(Errors.INELIGIBLE_REPLICA) == (state, False)
    assert outcome(Errors.OPERATION_NOT_ATTEMPTED) == (state, False)
    assert outcome(Errors.FENCED_LEADER_EPOCH) == (pending, False)
    assert outcome(Errors.INVALID_UPDATE_VERSION) == (pending, False)
    assert outcome(Errors.STALE_BROKER_EPOCH) == (pending, True)


def test_a_leader_and_isr_replaces_a_pending_change() -> None:
    fresh = committed_isr_state((2, 0), 7)
    assert fresh == IsrState(frozenset({0, 2}), 7)
    assert not fresh.is_inflight


def test_a_fetch_in_alter_partition_mode_proposes_the_joiner_and_holds_the_hw_for_it() -> None:
    # Leader 0 alone in the committed ISR at LEO 2, HW 0; follower 2 fetches from 0.
    p = replace(append(leader_partition((0, 1, 2)), 2), isr=frozenset({0, 1}))
    p = fetch(p, 1, 2, 0)
    p = replace(p, isr=frozenset({0}), high_watermark=0)
    state = committed_isr_state({0}, p.zk_version)
    read = ok(read_from_local_log(p, 0, 0, 1))
    step = ok(update_follower_fetch_async(p, state, 2, read))
    assert step.request is not None and step.request.new_isr == (0, 2)
    assert step.state.is_inflight and step.partition.isr == frozenset({0})
    assert step.partition.high_watermark == 0  # follower 2 at LEO 0 is in the maximal ISR
    naive = ok(update_follower_fetch_async(p, state, 2, read, HwIsr.COMMITTED))
    assert naive.partition.high_watermark == 2
    # the controller accepts; the leader applies the answer and commits {0, 2}
    answer = LeaderAndIsr(0, p.leader_epoch, (0, 2), state.partition_epoch + 1)
    done = handle_alter_partition_response(step.state, p.leader_epoch, step.state,
                                           AlterPartitionResponse(Errors.NONE, answer))
    applied = apply_isr_state(step.partition, done.state)
    assert (applied.partition.isr, applied.partition.zk_version) == (
        frozenset({0, 2}), state.partition_epoch + 1)


def test_async_fetch_errors_and_members() -> None:
    p = append(leader_partition((0, 1, 2)), 1)
    state = committed_isr_state({0, 1, 2}, p.zk_version)
    read = ok(read_from_local_log(p, 1, 0, 1))
    member = ok(update_follower_fetch_async(p, state, 1, read))
    assert member.request is None and member.state == state
    failed = replace(read, error=Errors.NOT_LEADER_FOR_PARTITION)
    assert ok(update_follower_fetch_async(p, state, 1, failed)).error is (
        Errors.NOT_LEADER_FOR_PARTITION)
    follower = replace(p, leader=1)
    assert ok(update_follower_fetch_async(follower, state, 2, read)).error is (
        Errors.NOT_LEADER_FOR_PARTITION)
    assert err(update_follower_fetch_async(p, state, 9, read)).problem is Problem.NOT_A_REPLICA


def test_the_isr_expiration_in_alter_partition_mode_proposes_a_shrink() -> None:
    p = leader_partition((0, 1, 2))
    state = committed_isr_state({0, 1, 2}, p.zk_version)
    step = ok(maybe_shrink_isr_async(p, state, 100, 10))
    assert step.request is not None and step.request.new_isr == (0,)
    assert maximal_isr(step.state) == frozenset({0, 1, 2})
    assert ok(maybe_shrink_isr_async(p, state, 5, 10)).request is None
    assert err(maybe_shrink_isr_async(p, state, -1, 10)).problem is Problem.NEGATIVE_VALUE


def test_the_isr_expiration_in_alter_partition_mode_keeps_a_follower_at_the_leader_leo() -> None:
    # AlterPartition is 2.7+, so KAFKA-7152 (2.1+) applies: follower 1 fetched up to the
    # leader's LEO 20 and stays however long ago that was; follower 2, one behind, goes.
    p = fetch(append(leader_partition((0, 1, 2), now_ms=0), 20), 1, 20, 0)
    p = fetch(p, 2, 19, 0)
    state = committed_isr_state({0, 1, 2}, p.zk_version)
    step = ok(maybe_shrink_isr_async(p, state, 150, 100))
    assert step.request is not None and step.request.new_isr == (0, 1)
    idle = in_sync_leader(20, now_ms=0)
    assert ok(maybe_shrink_isr_async(idle, committed_isr_state({0, 1, 2}, idle.zk_version),
                                     150, 100)).request is None
