"""Producing with acks 0/1/all and min.insync.replicas; follower appends; LSO and lag."""

from __future__ import annotations

from dataclasses import replace

from isrlab.core.errors import Errors, Problem
from isrlab.core.isr import maybe_shrink_isr
from isrlab.core.partition import make_leader
from isrlab.core.produce import (
    ACKS_ALL,
    ACKS_LEADER,
    ACKS_NONE,
    append_records_to_leader,
    check_enough_replicas_reach_offset,
    end_transaction,
    handle_offset_out_of_range,
    process_partition_data,
)
from isrlab.core.state import Partition, consumer_lag, last_stable_offset, low_watermark, records
from isrlab.core.truncation import Record
from tests.core.helpers import TP, err, fetch, in_sync_leader, leader_partition, ok, state


def test_acks_0_and_1_complete_as_soon_as_the_leader_has_the_records() -> None:
    p = in_sync_leader(2)
    for acks in (ACKS_NONE, ACKS_LEADER):
        result = ok(append_records_to_leader(p, (7, 8), acks))
        assert result.completed
        assert result.error is Errors.NONE
        assert (result.first_offset, result.last_offset) == (2, 3)
        assert result.partition.log[2:] == (Record(7, 1), Record(8, 1))


def test_acks_all_waits_until_the_hw_passes_the_record() -> None:
    p = in_sync_leader(2, replicas=(0, 1))
    result = ok(append_records_to_leader(p, (7,), ACKS_ALL, min_insync_replicas=2))
    assert not result.completed
    assert result.required_offset == 3
    assert check_enough_replicas_reach_offset(result.partition, 3, 2).done is False
    caught_up = fetch(result.partition, 1, 3, now_ms=1)
    answer = check_enough_replicas_reach_offset(caught_up, 3, 2)
    assert answer.done
    assert answer.error is Errors.NONE


def test_acks_all_is_refused_when_the_isr_is_smaller_than_min_insync_replicas() -> None:
    p = replace(in_sync_leader(1, replicas=(0, 1)), isr=frozenset({0}))
    result = ok(append_records_to_leader(p, (7,), ACKS_ALL, min_insync_replicas=2))
    assert result.error is Errors.NOT_ENOUGH_REPLICAS
    assert result.partition.log == p.log


def test_acks_all_answers_not_enough_replicas_after_append_if_the_isr_shrank() -> None:
    p = in_sync_leader(1, replicas=(0, 1), now_ms=0)
    pending = ok(append_records_to_leader(p, (7,), ACKS_ALL, min_insync_replicas=2))
    shrunk = ok(maybe_shrink_isr(pending.partition, 20_000, 10_000)).partition
    assert shrunk.high_watermark == 2
    answer = check_enough_replicas_reach_offset(shrunk, pending.required_offset, 2)
    assert (answer.done, answer.error) == (True, Errors.NOT_ENOUGH_REPLICAS_AFTER_APPEND)


def test_a_leader_alone_in_the_isr_commits_on_append() -> None:
    p = replace(in_sync_leader(1, replicas=(0, 1)), isr=frozenset({0}))
    result = ok(append_records_to_leader(p, (7,), ACKS_ALL))
    assert result.hw_incremented
    assert result.partition.high_watermark == 2


def test_producing_to_a_follower_answers_not_leader() -> None:
    follower = Partition(TP, 1, leader=0, assigned_replicas=(0, 1), log_created=True)
    assert ok(append_records_to_leader(follower, (1,), ACKS_LEADER)).error is (
        Errors.NOT_LEADER_FOR_PARTITION
    )
    assert check_enough_replicas_reach_offset(follower, 0, 1).error is (
        Errors.NOT_LEADER_FOR_PARTITION
    )


def test_bad_acks_and_min_isr_are_rejected() -> None:
    p = in_sync_leader(1)
    assert err(append_records_to_leader(p, (1,), 2)).problem is Problem.BAD_ACKS
    assert err(append_records_to_leader(p, (1,), ACKS_ALL, 0)).problem is Problem.BAD_CONFIG


def test_an_open_transaction_holds_the_lso_below_the_hw_until_it_ends() -> None:
    p = replace(in_sync_leader(2, replicas=(0, 1)), isr=frozenset({0}))
    result = ok(append_records_to_leader(p, (5, 6), ACKS_LEADER, transactional=True))
    q = result.partition
    assert q.high_watermark == 4
    assert last_stable_offset(q) == 2
    assert consumer_lag(q, 1, read_committed=True) == 1
    assert consumer_lag(q, 1, read_committed=False) == 3
    assert last_stable_offset(end_transaction(q, 2)) == 4


def test_a_follower_appends_fetched_records_and_takes_min_of_leader_hw_and_leo() -> None:
    follower = Partition(TP, 1, leader=0, assigned_replicas=(0, 1), log_created=True)
    grown = ok(process_partition_data(follower, 0, records((1, 2, 3), 1), 2, 1))
    assert len(grown.log) == 3
    assert grown.high_watermark == 2
    assert grown.log_start_offset == 1


def test_a_stale_fetch_response_is_rejected_by_the_follower() -> None:
    follower = Partition(TP, 1, leader=0, assigned_replicas=(0, 1), log_created=True)
    assert err(process_partition_data(follower, 3, (), 0)).problem is Problem.OFFSET_OUT_OF_LOG
    leader = leader_partition()
    assert err(process_partition_data(leader, 0, (), 0)).problem is Problem.WRONG_ROLE
    assert err(process_partition_data(follower, 0, (), -1)).problem is Problem.NEGATIVE_VALUE


def test_the_low_watermark_is_the_smallest_known_log_start_offset() -> None:
    p = in_sync_leader(3)
    p = replace(p, log_start_offset=2, high_watermark=3,
                remotes=tuple(replace(r, log_start_offset=1 + r.broker_id) for r in p.remotes))
    assert low_watermark(p) == 2
    assert low_watermark(replace(p, remotes=(replace(p.remotes[0], log_start_offset=0),
                                             p.remotes[1]))) == 0


def follower_ahead() -> Partition:
    """Broker 1 follows broker 0 with 3 records, more than the leader's 1."""
    return Partition(TP, 1, leader=0, leader_epoch=1, assigned_replicas=(0, 1),
                     log=records((1, 2, 3), 0), log_created=True, high_watermark=2)


def test_a_follower_past_the_leader_leo_truncates_to_it_since_kafka_2_1() -> None:
    out = ok(handle_offset_out_of_range(follower_ahead(), 1))
    assert (out.fatal, out.fetch_offset, len(out.partition.log)) == (False, 1, 1)
    assert out.partition.high_watermark == 1


def test_before_kafka_2_1_a_follower_past_the_leader_leo_halts_unless_unclean() -> None:
    p = follower_ahead()
    halted = ok(handle_offset_out_of_range(p, 1, fatal_when_unclean_disabled=True))
    assert halted.fatal
    assert halted.partition is p
    unclean = ok(handle_offset_out_of_range(p, 1, unclean_leader_election=True,
                                            fatal_when_unclean_disabled=True))
    assert (unclean.fatal, unclean.fetch_offset) == (False, 1)


def test_a_follower_behind_the_leader_keeps_its_log_or_is_rejected_past_the_log_start() -> None:
    p = follower_ahead()
    behind = ok(handle_offset_out_of_range(p, 5, 0))
    assert (behind.partition, behind.fetch_offset, behind.fatal) == (p, 3, False)
    assert err(handle_offset_out_of_range(p, 9, 4)).problem is Problem.OFFSET_OUT_OF_LOG
    assert err(handle_offset_out_of_range(p, -1)).problem is Problem.NEGATIVE_VALUE
    leader = ok(make_leader(Partition(TP, 0), state(0, (0,), (0,)), 0)).partition
    assert err(handle_offset_out_of_range(leader, 0)).problem is Problem.WRONG_ROLE


def test_an_append_raises_the_hw_over_caught_up_followers_only_with_kafka_0_10_2() -> None:
    p = replace(in_sync_leader(2, now_ms=0), isr=frozenset({0}))  # followers caught up at 0
    assert ok(append_records_to_leader(p, (5,), ACKS_LEADER)).partition.high_watermark == 3
    held = ok(append_records_to_leader(p, (5,), ACKS_LEADER, now_ms=10, hw_lag_ms=100))
    assert held.partition.high_watermark == 2  # waits for the caught-up followers
    assert err(append_records_to_leader(p, (5,), ACKS_LEADER, now_ms=-1)).problem is (
        Problem.NEGATIVE_VALUE)
