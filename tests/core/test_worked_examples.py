"""Every worked example of docs/protocol.md, driven through core's functions.

The golden numbers are the examples' own (docs/protocol.md, "Worked examples"): HW 6
then 7 with LEOs 9/7/6; HW 4 then 5 in the two-message sync example; 1.5 ×
replicaLagTimeMaxMs; 2500 ms polls, 5 s blackout and 60 s interval.
"""

from __future__ import annotations

from dataclasses import replace

from isrlab.core.isr import (
    isr_expiration_period_ms,
    max_time_in_isr_without_catching_up_ms,
    maybe_shrink_isr,
    partition_state_znode,
)
from isrlab.core.partition import follower_high_watermark
from isrlab.core.produce import process_partition_data
from isrlab.core.propagation import (
    IsrChangeState,
    maybe_propagate_isr_changes,
    propagation_poll_times,
    record_isr_change,
)
from isrlab.core.state import Partition, TopicPartition, last_stable_offset
from tests.core.helpers import TP, append, fetch, in_sync_leader, leader_partition, ok

LAG_MS = 10_000


def leader_with_leos_9_7_6() -> Partition:
    """Leader LEO 9, follower 1 at LEO 7 (caught up at 5 s), follower 2 at 6 (at 0 s)."""
    partition = append(leader_partition((0, 1, 2), now_ms=0), 6)
    partition = fetch(partition, 2, 6, now_ms=0)  # follower 2 reaches LEO 6 at t = 0
    partition = append(partition, 1, first_id=6)
    partition = fetch(partition, 1, 7, now_ms=5_000)  # follower 1 reaches LEO 7 at t = 5 s
    return append(partition, 2, first_id=7)


def test_hw_is_the_smallest_leo_in_the_isr() -> None:
    partition = leader_with_leos_9_7_6()
    assert len(partition.log) == 9
    assert [r.log_end_offset for r in partition.remotes] == [7, 6]
    assert partition.isr == {0, 1, 2}
    assert partition.high_watermark == 6


def test_dropping_the_slowest_follower_raises_the_hw_to_the_next_smallest_leo() -> None:
    partition = leader_with_leos_9_7_6()
    update = ok(maybe_shrink_isr(partition, LAG_MS + 1, LAG_MS))
    assert update.isr_changed
    assert update.partition.isr == {0, 1}
    assert update.partition.high_watermark == 7
    assert update.hw_incremented


def test_two_messages_sync_example_hw_is_4_until_the_slow_follower_catches_up() -> None:
    partition = in_sync_leader(3)
    assert partition.high_watermark == 3
    partition = append(partition, 2, first_id=3)  # messages 3 and 4 land on the leader
    assert len(partition.log) == 5
    assert partition.high_watermark == 3
    # follower 1 copies both, follower 2 only message 3
    partition = fetch(partition, 1, 3, now_ms=10)
    partition = fetch(partition, 2, 3, now_ms=10, max_records=1)
    partition = fetch(partition, 1, 5, now_ms=20)
    partition = fetch(partition, 2, 4, now_ms=20)
    assert partition.high_watermark == 4  # consumers may read offsets 0-3
    assert last_stable_offset(partition) == 4
    partition = fetch(partition, 2, 5, now_ms=30)
    assert partition.high_watermark == 5  # all have 3 and 4: offset 4 is visible


def test_follower_hw_is_the_min_of_the_leader_hw_and_its_own_leo() -> None:
    assert follower_high_watermark(4, 5) == 4
    assert follower_high_watermark(5, 4) == 4
    follower = Partition(TP, 2, leader=0, log=(), log_created=True)
    leader = append(leader_partition(), 5)
    grown = ok(process_partition_data(follower, 0, leader.log[:4], leader_high_watermark=5))
    assert grown.high_watermark == 4


def removal_time(caught_up_at: int, period: int, lag: int) -> int:
    """When the scheduled maybeShrinkIsr first removes a follower caught up at ``caught_up_at``."""
    partition = fetch(append(leader_partition((0, 1)), 1), 1, 1, now_ms=caught_up_at)
    check = period
    while True:
        if check >= caught_up_at:
            update = ok(maybe_shrink_isr(partition, check, lag))
            if update.isr_changed:
                return check
        check += period


def test_half_period_schedule_keeps_a_stuck_follower_up_to_one_and_a_half_lags() -> None:
    period = isr_expiration_period_ms(LAG_MS)
    assert period == LAG_MS // 2
    stays = [removal_time(c, period, LAG_MS) - c for c in range(0, 3 * LAG_MS, 250)]
    assert max(stays) == 15_000 == 3 * LAG_MS // 2
    assert min(stays) > LAG_MS
    assert max(stays) == max_time_in_isr_without_catching_up_ms(LAG_MS)


def test_full_period_schedule_of_older_kafka_keeps_it_up_to_two_lags() -> None:
    period = isr_expiration_period_ms(LAG_MS, half_period=False)
    stays = [removal_time(c, period, LAG_MS) - c for c in range(0, 3 * LAG_MS, 500)]
    assert max(stays) == 2 * LAG_MS == max_time_in_isr_without_catching_up_ms(LAG_MS, False)


def propagated_at(changes_ms: list[int], until_ms: int) -> list[int]:
    """Times at which the 2500 ms task writes a notification, for ISR changes at ``changes_ms``."""
    tp = TopicPartition("t", 0)
    state = IsrChangeState()
    pending = sorted(changes_ms)
    written = []
    events = sorted({*changes_ms, *propagation_poll_times(0, until_ms)})
    for now in events:
        while pending and pending[0] == now:
            state = record_isr_change(state, tp, now)
            pending.pop(0)
        if now % 2500 == 0 and now > 0:
            outcome = maybe_propagate_isr_changes(state, now)
            state = outcome.state
            if outcome.notification is not None:
                assert outcome.notification == {tp}
                written.append(now)
    return written


def test_an_isr_change_is_propagated_at_the_first_poll_after_five_quiet_seconds() -> None:
    assert propagated_at([1_000], 20_000) == [7_500]
    assert propagated_at([0], 20_000) == [7_500]  # 0 + 5000 < 5000 is false at t = 5000
    assert propagated_at([2_600], 20_000) == [10_000]


def test_continuous_isr_changes_are_still_propagated_after_sixty_seconds() -> None:
    every_second = list(range(1_000, 200_001, 1_000))
    written = propagated_at(every_second, 200_000)
    assert written[0] == 62_500  # the first poll with lastIsrPropagationMs + 60000 < now
    assert written[1] == 62_500 + 60_000 + 2_500


def test_no_isr_change_means_no_notification() -> None:
    assert propagated_at([], 200_000) == []


def test_the_poll_runs_every_2500_ms() -> None:
    assert propagation_poll_times(0, 10_000) == (2_500, 5_000, 7_500, 10_000)


def test_the_partition_state_znode_has_the_seed_fields() -> None:
    partition = replace(leader_partition((0, 1)), controller_epoch=26, leader_epoch=2)
    assert partition_state_znode(partition) == {
        "controller_epoch": 26, "leader": 0, "version": 1, "leader_epoch": 2, "isr": [0, 1],
    }
