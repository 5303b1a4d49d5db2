"""Partition.makeLeader and Partition.makeFollower, and the leader's HW."""

from __future__ import annotations

from dataclasses import replace

from isrlab.core import truncation
from isrlab.core.errors import Problem
from isrlab.core.isr import read_from_local_log, update_follower_fetch
from isrlab.core.partition import (
    create_log_if_not_exists,
    make_follower,
    make_leader,
    maybe_increment_leader_hw,
    truncate_by_leader_epoch_kip101,
    truncate_by_leader_epoch_kip279,
    truncate_local_log,
    truncate_to_high_watermark,
)
from isrlab.core.state import UNKNOWN_OFFSET, Partition, RemoteReplica, records, remote
from isrlab.core.truncation import Record
from isrlab.spec.kafka.truncation_versions import TRUNCATION_RULES
from tests.core.helpers import TP, append, err, fetch, in_sync_leader, leader_partition, ok, state

LAG_MS = 10_000


def test_make_leader_on_a_fresh_partition_is_a_new_leader_adopting_the_request() -> None:
    result = ok(make_leader(Partition(TP, 0), state(0, (0, 1), (0, 1, 2), 4, 7, 9), 100))
    p = result.partition
    assert result.is_new_leader
    assert (p.leader, p.leader_epoch, p.controller_epoch, p.zk_version) == (0, 4, 7, 9)
    assert p.assigned_replicas == (0, 1, 2)
    assert p.isr == {0, 1}
    assert p.log_created


def test_make_leader_sets_last_caught_up_to_now_for_isr_members_and_zero_otherwise() -> None:
    p = ok(make_leader(Partition(TP, 0), state(0, (0, 1), (0, 1, 2)), 1234)).partition
    # resetLastCaughtUpTime, then the new leader's updateLogReadResult(UnknownLogReadResult)
    assert remote(p, 1) == RemoteReplica(1, UNKNOWN_OFFSET, UNKNOWN_OFFSET, 1234, -1, -1)
    assert remote(p, 2) == RemoteReplica(2, UNKNOWN_OFFSET, UNKNOWN_OFFSET, 0, -1, -1)


def test_a_leader_kept_in_a_new_epoch_resets_the_previous_fetch_to_its_leo_and_now() -> None:
    p = in_sync_leader(5, now_ms=10)
    again = ok(make_leader(p, state(0, (0, 1), (0, 1, 2), leader_epoch=2), 700))
    assert not again.is_new_leader
    kept = remote(again.partition, 1)
    assert kept == RemoteReplica(1, 5, 0, 700, 5, 700)  # LEO kept, previous fetch reset
    assert remote(again.partition, 2) == RemoteReplica(2, 5, 0, 0, 5, 700)


def test_kafka_0_10_2_hw_waits_for_a_caught_up_follower_outside_the_isr() -> None:
    p = replace(in_sync_leader(4, now_ms=0), isr=frozenset({0, 1}))
    p = append(p, 2, first_id=10)  # LEO 6; follower 1 fetches up to it, 2 (outside) does not
    read = ok(read_from_local_log(p, 6, 0, 100))
    older = ok(update_follower_fetch(p, 1, read)).partition
    assert older.high_watermark == 6  # ISR {0, 1} only: the HW runs ahead of follower 2
    newer = ok(update_follower_fetch(p, 1, read, hw_lag_ms=LAG_MS)).partition
    assert newer.high_watermark == 4  # follower 2 caught up at t=0, within the lag: waits
    late = ok(maybe_increment_leader_hw(newer, LAG_MS + 1, LAG_MS)).partition
    assert late.high_watermark == 6  # no longer caught up within the lag: not waited for


def test_kafka_3_6_hw_does_not_wait_for_an_ineligible_caught_up_follower() -> None:
    # PartitionTest.testHighWatermarkIncreasesWithFencedOrShutdownFollower (3.6, KAFKA-15021):
    # 10 records, follower 1 fetches up to them (HW 10), 10 more appended, the ISR shrinks to
    # the leader while follower 1 is still caught up within the lag.
    p = in_sync_leader(10, replicas=(0, 1), now_ms=0)
    assert p.high_watermark == 10
    shrunk = replace(append(p, 10, first_id=10), isr=frozenset({0}))
    unfenced = ok(maybe_increment_leader_hw(shrunk, 0, LAG_MS)).partition
    assert unfenced.high_watermark == 10  # a caught-up eligible follower holds the HW
    fenced = ok(maybe_increment_leader_hw(shrunk, 0, LAG_MS, frozenset({1}))).partition
    assert fenced.high_watermark == 20  # fenced or shutting down: not waited for


def test_maybe_increment_leader_hw_rejects_a_negative_time_or_lag() -> None:
    p = in_sync_leader(1)
    assert err(maybe_increment_leader_hw(p, -1)).problem is Problem.NEGATIVE_VALUE
    assert err(maybe_increment_leader_hw(p, 0, -1)).problem is Problem.NEGATIVE_VALUE
    assert err(make_leader(p, state(0, (0,), (0, 1, 2), 1), 0, -1)).problem is (
        Problem.NEGATIVE_VALUE)


def test_a_new_leader_resets_remote_leos_to_unknown_so_followers_must_fetch_again() -> None:
    old = in_sync_leader(5)
    follower = ok(make_follower(old, state(1, (1, 0, 2), leader_epoch=2))).partition
    again = ok(make_leader(follower, state(0, (0, 1, 2), leader_epoch=3), 50))
    assert again.is_new_leader
    assert all(r.log_end_offset == UNKNOWN_OFFSET for r in again.partition.remotes)
    assert again.partition.high_watermark == 5  # HW never moves back


def test_a_retried_make_leader_for_the_same_leader_is_not_a_new_leader_and_keeps_leos() -> None:
    p = in_sync_leader(4)
    retried = ok(make_leader(p, state(0, (0, 1, 2), leader_epoch=1), 99))
    assert not retried.is_new_leader
    assert [r.log_end_offset for r in retried.partition.remotes] == [4, 4]
    assert retried.partition.log == p.log
    assert retried.partition.high_watermark == p.high_watermark


def test_make_leader_raises_the_hw_when_it_leads_alone() -> None:
    follower = Partition(TP, 0, leader=1, leader_epoch=1, assigned_replicas=(0, 1),
                         log=records((1, 2, 3), 1), log_created=True, high_watermark=1)
    result = ok(make_leader(follower, state(0, (0,), (0, 1), leader_epoch=2), 0))
    assert result.hw_incremented
    assert result.partition.high_watermark == 3


def test_make_leader_drops_removed_replicas_and_adds_new_ones() -> None:
    p = in_sync_leader(2, replicas=(0, 1, 2))
    moved = ok(make_leader(p, state(0, (0, 1), (0, 1, 3), leader_epoch=2), 10)).partition
    assert [r.broker_id for r in moved.remotes] == [1, 3]
    assert [r.log_end_offset for r in moved.remotes] == [2, UNKNOWN_OFFSET]


def test_make_follower_clears_the_isr_and_reports_a_leader_change() -> None:
    p = in_sync_leader(3)
    result = ok(make_follower(p, state(1, (1, 2), leader_epoch=2)))
    assert result.leader_changed
    assert result.partition.isr == frozenset()
    assert result.partition.remotes == ()
    assert result.partition.leader == 1
    assert result.fetch_offset == 3


def test_make_follower_with_the_same_leader_reports_no_change_and_does_not_truncate() -> None:
    p = Partition(TP, 2, leader=1, leader_epoch=1, assigned_replicas=(0, 1, 2),
                  log=records((1, 2, 3), 1), log_created=True, high_watermark=1)
    result = ok(make_follower(p, state(1, (1, 2), leader_epoch=2)))
    assert not result.leader_changed
    assert result.truncated_to is None
    assert len(result.partition.log) == 3
    assert result.partition.leader_epoch == 2


def test_old_make_follower_truncates_the_log_to_its_own_high_watermark() -> None:
    p = Partition(TP, 2, leader=1, leader_epoch=1, assigned_replicas=(0, 1, 2),
                  log=records((1, 2, 3, 4), 1), log_created=True, high_watermark=2)
    result = ok(make_follower(p, state(0, (0, 2), leader_epoch=2), truncate_to_high_watermark))
    assert result.truncated_to == 2
    assert result.partition.log == records((1, 2), 1)
    assert result.fetch_offset == 2


def test_kip101_truncation_keeps_records_the_leader_has_in_the_same_epoch() -> None:
    mine = records((1, 2, 3, 4), 1)
    leader_log = records((1, 2, 3, 4, 5), 1)
    p = Partition(TP, 2, leader=1, leader_epoch=1, assigned_replicas=(0, 1, 2),
                  log=mine, log_created=True, high_watermark=2)
    result = ok(make_follower(p, state(0, (0, 2), leader_epoch=2),
                              truncate_by_leader_epoch_kip101, leader_log))
    assert result.partition.log == mine  # the answer (5) is past the LEO: no truncation
    assert result.truncated_to == 4


def test_kip279_truncation_cuts_after_the_last_record_both_logs_share() -> None:
    mine = (Record(1, 1), Record(2, 1), Record(3, 2))
    leader_log = (Record(1, 1), Record(2, 1), Record(9, 3))
    p = Partition(TP, 2, leader=1, leader_epoch=2, assigned_replicas=(0, 1, 2),
                  log=mine, log_created=True, high_watermark=1)
    result = ok(make_follower(p, state(0, (0, 2), leader_epoch=3),
                              truncate_by_leader_epoch_kip279, leader_log))
    assert result.partition.log == mine[:2]
    assert result.partition.high_watermark == 1


def test_the_truncation_rules_are_registered_by_name() -> None:
    assert set(TRUNCATION_RULES) == {"truncate-to-hw", "kip101", "kip279-2.0", "kip279"}


def test_truncating_the_local_log_caps_hw_log_start_and_open_transactions() -> None:
    p = Partition(TP, 2, leader=1, assigned_replicas=(1, 2), log=records((1, 2, 3, 4), 1),
                  log_created=True, high_watermark=3, log_start_offset=3,
                  open_txn_first_offsets=frozenset({1, 3}))
    cut = truncate_local_log(p, 2)
    assert (len(cut.log), cut.high_watermark, cut.log_start_offset) == (2, 2, 2)
    assert cut.open_txn_first_offsets == {1}
    assert truncate_local_log(p, 10) is p


def test_create_log_if_not_exists_only_marks_the_log_created() -> None:
    fresh = Partition(TP, 0)
    assert create_log_if_not_exists(fresh) == replace(fresh, log_created=True)
    created = create_log_if_not_exists(fresh)
    assert create_log_if_not_exists(created) is created


def test_the_leader_hw_never_moves_back_when_a_follower_rejoins_behind() -> None:
    p = fetch(append(leader_partition((0, 1)), 4), 1, 4, now_ms=0)
    assert p.high_watermark == 4
    behind = replace(p, remotes=(replace(p.remotes[0], log_end_offset=1),))
    update = ok(maybe_increment_leader_hw(behind))
    assert not update.incremented
    assert update.partition.high_watermark == 4


def test_maybe_increment_leader_hw_does_nothing_on_a_follower() -> None:
    follower = Partition(TP, 1, leader=0, assigned_replicas=(0, 1), log=records((1,), 0),
                         log_created=True)
    assert not ok(maybe_increment_leader_hw(follower)).incremented


def test_make_leader_and_make_follower_refuse_the_wrong_role() -> None:
    assert err(make_leader(Partition(TP, 1), state(0), 0)).problem is Problem.WRONG_ROLE
    assert err(make_follower(Partition(TP, 0), state(0))).problem is Problem.WRONG_ROLE
    assert err(make_follower(Partition(TP, 5), state(0))).problem is Problem.NOT_A_REPLICA
    assert err(make_leader(Partition(TP, 5), state(5), 0)).problem is Problem.LEADER_NOT_IN_ISR
    assert err(make_leader(Partition(TP, 0), state(0), -1)).problem is Problem.NEGATIVE_VALUE


def test_kafka_0_11_truncates_to_the_hw_when_its_epoch_is_older_than_the_leaders_first() -> None:
    follower = (Record(1, 0), Record(2, 0), Record(3, 0))
    leader = (Record(7, 2), Record(8, 2))  # an unclean leader whose log starts in epoch 2
    # endOffsetFor(0): requestedEpoch < epochs.head.epoch -> UNDEFINED_EPOCH_OFFSET -> HW
    assert truncate_by_leader_epoch_kip101(follower, 2, leader) == 2
    # the TLA+ module (and Kafka 2.1's KAFKA-7415 answer) truncate to the first epoch's start
    assert truncation.kip101_truncation_offset(leader, follower, 2) == 0
    assert truncate_by_leader_epoch_kip279(follower, 2, leader) == 0
    # an epoch the leader has a larger one after is still answered
    assert truncate_by_leader_epoch_kip101(follower, 2, (Record(1, 0), Record(9, 3))) == 1


def test_kafka_2_0_kip279_truncates_to_the_hw_when_the_leader_answers_undefined() -> None:
    follower = (Record(1, 0), Record(2, 3))  # latest epoch 3, HW 1
    rule = TRUNCATION_RULES["kip279-2.0"]
    older = (Record(1, 0), Record(5, 1))  # epoch 3 newer than the leader's latest (1)
    assert rule(follower, 1, older) == 1  # UNDEFINED_EPOCH_OFFSET: the HW
    assert truncate_by_leader_epoch_kip279(follower, 1, older) == 1  # 2.1: the agreement
    assert rule(follower, 1, (Record(6, 4),)) == 1  # older than the leader's first epoch
    assert truncate_by_leader_epoch_kip279(follower, 1, (Record(6, 4),)) == 0
    assert rule(follower, 1, ()) == 1 and rule((), 0, older) == 0  # empty leader / follower
    within = (Record(1, 0), Record(7, 2), Record(8, 3))
    assert rule(follower, 1, within) == truncate_by_leader_epoch_kip279(follower, 1, within) == 1
