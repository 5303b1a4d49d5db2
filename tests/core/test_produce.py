"""Producing with acks 0/1/all and min.insync.replicas; follower appends; LSO and lag."""

from __future__ import annotations

from dataclasses import replace

from core.errors import Errors, Problem
from core.isr import maybe_shrink_isr
from core.produce import (
    ACKS_ALL,
    ACKS_LEADER,
    ACKS_NONE,
    append_records_to_leader,
    check_enough_replicas_reach_offset,
    end_transaction,
    process_partition_data,
)
from core.state import Partition, consumer_lag, last_stable_offset, low_watermark, records
from core.truncation import Record
from tests.core.helpers import TP, err, fetch, in_sync_leader, leader_partition, ok


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
