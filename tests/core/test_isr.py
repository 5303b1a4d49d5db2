"""Follower fetches, maybeExpandIsr and maybeShrinkIsr on the leader."""

from __future__ import annotations

from dataclasses import replace

from isrlab.core.errors import Errors, Problem
from isrlab.core.isr import (
    get_out_of_sync_replicas,
    leader_epoch_start_offset,
    may_join_isr,
    maybe_expand_isr,
    maybe_shrink_isr,
    read_from_local_log,
    update_follower_fetch,
    update_log_read_result,
    zk_leader_and_isr,
)
from isrlab.core.partition import make_leader
from isrlab.core.state import LeaderAndIsr, Partition, RemoteReplica, records, remote
from tests.core.helpers import (
    TP,
    append,
    err,
    fetch,
    in_sync_leader,
    leader_partition,
    ok,
    state,
)

LAG = 10_000


def follower_view(p: Partition, broker: int) -> RemoteReplica:
    found = remote(p, broker)
    assert found is not None
    return found


def test_a_fetch_records_the_fetch_offset_as_the_follower_leo() -> None:
    p = fetch(append(leader_partition(), 5), 1, 3, now_ms=7)
    assert follower_view(p, 1).log_end_offset == 3


def test_a_fetch_reaching_the_leader_leo_stamps_last_caught_up_time() -> None:
    p = fetch(append(leader_partition(now_ms=0), 5), 1, 5, now_ms=700)
    assert follower_view(p, 1).last_caught_up_time_ms == 700


def test_a_fetch_behind_the_leader_leo_does_not_stamp_last_caught_up_time() -> None:
    p = append(leader_partition(now_ms=0), 5)
    p = fetch(p, 1, 2, now_ms=700)
    # the follower had not reached the LEO of the previous fetch (5 at t=0) either
    assert follower_view(p, 1).last_caught_up_time_ms == 0


def one_fetch_behind(since_previous_fetch: bool) -> Partition:
    p = append(leader_partition(now_ms=0), 2)
    p = fetch(p, 1, 0, now_ms=100)  # leader LEO 2 at this fetch
    p = append(p, 3, first_id=2)
    read = ok(read_from_local_log(p, 2, 0, 900))  # reached 2 (the LEO at t=100), not 5
    return ok(update_follower_fetch(p, 1, read, since_previous_fetch)).partition


def test_before_kafka_0_10_2_only_reaching_the_current_leo_counts_as_caught_up() -> None:
    assert follower_view(one_fetch_behind(False), 1).last_caught_up_time_ms == 0


def test_kafka_0_10_2_dates_catch_up_to_the_previous_fetch_whose_leo_was_reached() -> None:
    assert follower_view(one_fetch_behind(True), 1).last_caught_up_time_ms == 100


def test_update_log_read_result_never_moves_caught_up_time_back() -> None:
    replica = RemoteReplica(1, 5, 0, 1000, 5, 1000)
    p = append(leader_partition(), 5)
    read = ok(read_from_local_log(p, 5, 0, 400))
    assert update_log_read_result(replica, read).last_caught_up_time_ms == 1000


def test_a_follower_out_of_the_isr_rejoins_once_its_leo_reaches_the_hw() -> None:
    p = in_sync_leader(4, replicas=(0, 1))
    p = replace(p, isr=frozenset({0}))
    behind = ok(update_follower_fetch(p, 1, ok(read_from_local_log(p, 3, 0, 10))))
    assert not behind.isr_changed
    joined = ok(update_follower_fetch(behind.partition, 1,
                                      ok(read_from_local_log(behind.partition, 4, 0, 20))))
    assert joined.isr_changed
    assert joined.partition.isr == {0, 1}
    assert joined.partition.zk_version == p.zk_version + 1
    assert joined.zk_write == LeaderAndIsr(0, p.leader_epoch, (0, 1), p.zk_version + 1)


def test_maybe_expand_isr_does_nothing_for_a_follower_already_in_the_isr() -> None:
    p = in_sync_leader(2)
    update = ok(maybe_expand_isr(p, 1))
    assert not update.isr_changed
    assert update.zk_write is None


def test_maybe_expand_isr_on_a_non_leader_answers_not_leader() -> None:
    follower = Partition(TP, 1, leader=0, assigned_replicas=(0, 1), log_created=True)
    assert ok(maybe_expand_isr(follower, 0)).error is Errors.NOT_LEADER_FOR_PARTITION


def test_a_fetch_from_an_unassigned_replica_is_rejected() -> None:
    p = in_sync_leader(1)
    read = ok(read_from_local_log(p, 0, 0, 1))
    assert err(update_follower_fetch(p, 9, read)).problem is Problem.NOT_A_REPLICA
    assert err(maybe_expand_isr(p, 0)).problem is Problem.NOT_A_REPLICA


def test_a_stuck_follower_is_out_of_sync_after_the_lag() -> None:
    p = in_sync_leader(3, now_ms=0)
    assert get_out_of_sync_replicas(p, LAG, LAG) == frozenset()
    assert get_out_of_sync_replicas(p, LAG + 1, LAG) == {1, 2}


def test_a_slow_follower_that_fetches_but_never_reaches_the_leo_is_out_of_sync() -> None:
    p = in_sync_leader(3, replicas=(0, 1), now_ms=0)
    offset = 3
    for t in range(1_000, 12_001, 1_000):
        p = append(p, 2, first_id=t)  # the leader grows by 2 per second ...
        offset += 1
        read = ok(read_from_local_log(p, offset, 0, t))  # ... the follower copies 1 per second
        p = ok(update_follower_fetch(p, 1, read, since_previous_fetch=True)).partition
    assert follower_view(p, 1).last_caught_up_time_ms == 1_000  # even by the newer rule
    assert get_out_of_sync_replicas(p, 11_000, LAG) == frozenset()
    assert get_out_of_sync_replicas(p, 12_001, LAG) == {1}
    update = ok(maybe_shrink_isr(p, 12_001, LAG))
    assert update.partition.isr == {0}
    assert update.partition.high_watermark == len(p.log)


def test_maybe_shrink_isr_with_nobody_lagging_changes_nothing() -> None:
    p = in_sync_leader(2, now_ms=0)
    update = ok(maybe_shrink_isr(p, 5, LAG))
    assert update.partition is p
    assert not update.isr_changed


def test_maybe_shrink_isr_on_a_follower_does_nothing() -> None:
    follower = Partition(TP, 1, leader=0, assigned_replicas=(0, 1), log_created=True)
    update = ok(maybe_shrink_isr(follower, 10**9, LAG))
    assert update.error is Errors.NOT_LEADER_FOR_PARTITION
    assert update.partition is follower
    assert get_out_of_sync_replicas(follower, 10**9, LAG) == frozenset()


def test_the_non_empty_isr_assertion_is_a_rejected_partition_value() -> None:
    p = in_sync_leader(2)
    without_leader = replace(p, isr=frozenset({1, 2}))
    assert err(maybe_shrink_isr(without_leader, 0, LAG)).problem is Problem.LEADER_NOT_IN_ISR
    empty = replace(p, isr=frozenset())
    assert err(maybe_shrink_isr(empty, 0, LAG)).problem is Problem.EMPTY_ISR


def test_read_from_local_log_answers_not_leader_and_out_of_range_as_values() -> None:
    follower = Partition(TP, 1, leader=0, assigned_replicas=(0, 1), log=records((1,), 0),
                         log_created=True)
    assert ok(read_from_local_log(follower, 0, 0, 0)).error is Errors.NOT_LEADER_FOR_PARTITION
    p = in_sync_leader(2)
    beyond = ok(read_from_local_log(p, 3, 0, 0))
    assert beyond.error is Errors.OFFSET_OUT_OF_RANGE
    assert beyond.records == ()
    failed = ok(update_follower_fetch(p, 1, beyond))
    assert failed.error is Errors.OFFSET_OUT_OF_RANGE
    assert (failed.isr_changed, failed.hw_incremented) == (False, False)
    assert failed.partition.high_watermark == p.high_watermark


def test_a_failed_read_makes_the_follower_leo_unknown_as_kafka_0_10_2_to_2_1_do() -> None:
    p = in_sync_leader(2, now_ms=50)
    beyond = ok(read_from_local_log(p, 3, 0, 900))
    view = follower_view(ok(update_follower_fetch(p, 1, beyond)).partition, 1)
    # updateLogReadResult(LogReadResult(UnknownOffsetMetadata, ..., fetchTimeMs = -1))
    assert (view.log_end_offset, view.log_start_offset) == (-1, -1)
    assert (view.last_fetch_leader_log_end_offset, view.last_fetch_time_ms) == (-1, -1)
    assert view.last_caught_up_time_ms == follower_view(p, 1).last_caught_up_time_ms


def test_after_a_failed_read_the_hw_waits_for_the_follower_to_fetch_again() -> None:
    p = append(in_sync_leader(2), 1, first_id=9)  # LEO 3, HW 2: follower 1 still at 2
    failed = ok(update_follower_fetch(p, 1, ok(read_from_local_log(p, 4, 0, 0)),
                                      hw_lag_ms=LAG)).partition
    other = ok(update_follower_fetch(failed, 2, ok(read_from_local_log(failed, 3, 0, 1)),
                                     hw_lag_ms=LAG)).partition
    assert other.high_watermark == 2  # follower 1's LEO is unknown
    again = ok(update_follower_fetch(other, 1, ok(read_from_local_log(other, 3, 0, 2)),
                                     hw_lag_ms=LAG)).partition
    assert again.high_watermark == 3


def test_a_fetch_to_a_former_leader_changes_nothing() -> None:
    p = in_sync_leader(2)
    read = ok(read_from_local_log(p, 2, 0, 0))
    follower = Partition(TP, 0, leader=1, assigned_replicas=(0, 1, 2), log=p.log,
                         log_created=True, high_watermark=2)
    assert ok(update_follower_fetch(follower, 1, read)).error is Errors.NOT_LEADER_FOR_PARTITION


def test_read_from_local_log_honours_max_records() -> None:
    p = append(leader_partition(), 5)
    read = ok(read_from_local_log(p, 1, 0, 0, max_records=2))
    assert [r.id for r in read.records] == [1, 2]
    assert not read.is_read_from_log_end


def test_the_zookeeper_leader_and_isr_of_a_leader_is_sorted() -> None:
    p = in_sync_leader(1)
    assert zk_leader_and_isr(p) == LeaderAndIsr(0, 1, (0, 1, 2), p.zk_version)


def test_isr_functions_reject_negative_times_and_offsets() -> None:
    p = in_sync_leader(1)
    assert err(maybe_shrink_isr(p, -1, LAG)).problem is Problem.NEGATIVE_VALUE
    assert err(read_from_local_log(p, -1, 0, 0)).problem is Problem.NEGATIVE_VALUE
    bogus = replace(ok(read_from_local_log(p, 1, 0, 0)), fetch_offset=5)
    assert err(update_follower_fetch(p, 1, bogus)).problem is Problem.OFFSET_OUT_OF_LOG


def test_the_leader_has_no_record_of_a_broker_outside_the_assignment() -> None:
    assert remote(in_sync_leader(1), 9) is None


def lagging_new_leader() -> Partition:
    """KAFKA-7128's broker B: it fetched m@0 from the old leader, learnt no HW (0), and now
    leads epoch 1 with ISR {0, 1}; broker 2 is outside the ISR with an empty log."""
    follower = Partition(TP, 1, leader=0, leader_epoch=0, assigned_replicas=(0, 1, 2),
                         log=records((0,), 0), log_created=True)
    return ok(make_leader(follower, state(1, (0, 1), (0, 1, 2), leader_epoch=1), 0)).partition


def test_a_new_leader_keeps_its_lagging_hw_while_an_isr_member_has_not_fetched() -> None:
    # makeLeader (0.9.0+) resets a new leader's remote LEOs to unknown: the min over the ISR is
    # unknown, so maybeIncrementLeaderHW leaves the HW where the follower had it.
    p = lagging_new_leader()
    assert p.high_watermark == 0
    assert follower_view(p, 0).log_end_offset == -1


def test_before_kafka_2_1_a_follower_joins_at_the_lagging_hw_without_the_record() -> None:
    p = lagging_new_leader()
    update = ok(update_follower_fetch(p, 2, ok(read_from_local_log(p, 0, 0, 1))))
    assert update.isr_changed and update.partition.isr == {0, 1, 2}


def test_the_epoch_start_offset_is_the_leo_when_the_epoch_began() -> None:
    p = lagging_new_leader()
    assert leader_epoch_start_offset(p) == 1
    p = append(p, 2, first_id=1)  # written in epoch 1, at offsets 1 and 2
    assert leader_epoch_start_offset(p) == 1


def test_kafka_2_1_keeps_a_follower_out_until_it_reaches_the_epoch_start_offset() -> None:
    p = lagging_new_leader()
    start = leader_epoch_start_offset(p)
    early = ok(update_follower_fetch(p, 2, ok(read_from_local_log(p, 0, 0, 1)),
                                     leader_epoch_start=start))
    assert not early.isr_changed and early.zk_write is None
    late = ok(update_follower_fetch(early.partition, 2,
                                    ok(read_from_local_log(early.partition, 1, 0, 2)),
                                    leader_epoch_start=start))
    assert late.isr_changed and late.partition.isr == {0, 1, 2}


def test_maybe_expand_isr_applies_the_epoch_start_rule_only_when_given() -> None:
    p = lagging_new_leader()
    p = replace(p, remotes=tuple(replace(r, log_end_offset=0) if r.broker_id == 2 else r
                                 for r in p.remotes))
    assert ok(maybe_expand_isr(p, 2)).isr_changed
    assert not ok(maybe_expand_isr(p, 2, leader_epoch_start=1)).isr_changed
    assert ok(maybe_expand_isr(p, 2, leader_epoch_start=0)).isr_changed


def test_the_join_predicate_needs_both_the_hw_and_the_epoch_start() -> None:
    replica = RemoteReplica(2, 3)
    assert may_join_isr(replica, 3)
    assert not may_join_isr(replica, 4)
    assert not may_join_isr(replica, 3, leader_epoch_start=4)
    assert may_join_isr(replica, 2, leader_epoch_start=3)


def test_kafka_0_10_2_shrink_raises_the_hw_over_the_isr_and_caught_up_followers() -> None:
    p = in_sync_leader(2, now_ms=0)
    p = append(p, 2, first_id=5)  # LEO 4, HW 2
    p = fetch(p, 1, 4, now_ms=LAG + 1)  # follower 1 caught up late; follower 2 lags
    update = ok(maybe_shrink_isr(p, LAG + 1, LAG, kafka_4485=True))
    assert update.partition.isr == {0, 1}
    assert update.partition.high_watermark == 4


def test_maybe_expand_isr_rejects_a_negative_time_or_lag() -> None:
    p = in_sync_leader(1)
    assert err(maybe_expand_isr(p, 1, now_ms=-1)).problem is Problem.NEGATIVE_VALUE
    read = ok(read_from_local_log(p, 1, 0, 0))
    assert err(update_follower_fetch(p, 1, read, hw_lag_ms=-1)).problem is Problem.NEGATIVE_VALUE


# KAFKA-7152 (Kafka 2.1, ``IsrExpirationTest.testIsrExpirationForCaughtUpFollowers``): a lag
# of 100 ms, a leader LEO of 20, every follower fetched up to it, then 150 ms pass.
EXPIRATION_LAG_MS = 100
LEADER_LEO = 20


def test_a_follower_at_the_leader_leo_is_never_out_of_sync_with_kafka_7152() -> None:
    p = in_sync_leader(LEADER_LEO, now_ms=0)
    assert get_out_of_sync_replicas(p, 0, EXPIRATION_LAG_MS, kafka_7152=True) == frozenset()
    assert get_out_of_sync_replicas(p, 150, EXPIRATION_LAG_MS, kafka_7152=True) == frozenset()
    assert not ok(maybe_shrink_isr(p, 150, EXPIRATION_LAG_MS, kafka_7152=True)).isr_changed


def test_without_kafka_7152_an_idle_follower_at_the_leader_leo_is_shrunk() -> None:
    # Kafka <= 2.0: the time rule alone, so an idle partition's followers leave the ISR.
    p = in_sync_leader(LEADER_LEO, now_ms=0)
    assert get_out_of_sync_replicas(p, 150, EXPIRATION_LAG_MS) == {1, 2}
    assert ok(maybe_shrink_isr(p, 150, EXPIRATION_LAG_MS)).partition.isr == {0}


def test_with_kafka_7152_a_follower_one_behind_the_leader_leo_is_still_out_of_sync() -> None:
    # testIsrExpirationForSlowFollowers at 2.1: the followers at LEO - 1 leave after the lag.
    p = fetch(fetch(append(leader_partition(now_ms=0), LEADER_LEO), 1, LEADER_LEO - 1, 0),
              2, LEADER_LEO - 1, 0)
    assert get_out_of_sync_replicas(p, 150, EXPIRATION_LAG_MS, kafka_7152=True) == {1, 2}
    assert ok(maybe_shrink_isr(p, 150, EXPIRATION_LAG_MS, kafka_4485=True,
                               kafka_7152=True)).partition.isr == {0}
