"""``isrlab.core.truncation``: the three follower truncation rules on hand-worked logs.

``rec(id, epoch)`` is a record; offsets are positions in the tuple.
"""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from isrlab.core.truncation import (
    NO_EPOCH,
    Log,
    Record,
    kip101_truncation_offset,
    kip279_truncation_offset,
    largest_epoch_at_most,
    latest_epoch,
    offset_for_leader_epoch,
    truncate_to,
    truncate_to_high_watermark_offset,
)

rec = Record


def test_old_kafka_truncates_to_the_followers_own_high_watermark() -> None:
    assert truncate_to_high_watermark_offset(1) == 1


def test_truncate_to_past_the_end_keeps_the_whole_log() -> None:
    log = (rec(0, 0), rec(1, 0))
    assert truncate_to(log, 1) == (rec(0, 0),)
    assert truncate_to(log, 5) == log


def test_latest_epoch_of_an_empty_log_is_nil() -> None:
    assert latest_epoch(()) == NO_EPOCH
    assert latest_epoch((rec(0, 0), rec(1, 2))) == 2


def test_offset_for_leader_epoch_is_the_leo_for_the_leaders_latest_epoch() -> None:
    assert offset_for_leader_epoch((rec(0, 0), rec(1, 0)), 0) == 2


def test_offset_for_leader_epoch_is_the_start_of_the_next_larger_epoch() -> None:
    leader = (rec(0, 0), rec(2, 1), rec(3, 3))
    assert offset_for_leader_epoch(leader, 0) == 1
    assert offset_for_leader_epoch(leader, 2) == 2


def test_offset_for_leader_epoch_is_undefined_for_unknown_epochs_or_empty_logs() -> None:
    assert offset_for_leader_epoch((), 0) is None
    assert offset_for_leader_epoch((rec(0, 0),), 1) is None


def test_kip101_scenario_one_keeps_the_committed_record() -> None:
    # KIP-101 scenario 1: the follower has [m0, m1] with HW 1 and the leader has the same log.
    # Truncating to the HW would drop m1; the epoch lookup keeps it.
    log = (rec(0, 0), rec(1, 0))
    assert kip101_truncation_offset(log, log, follower_hw=1) == 2


def test_kip101_falls_back_to_the_high_watermark_when_the_answer_is_undefined() -> None:
    assert kip101_truncation_offset((rec(0, 0),), (rec(1, 1),), follower_hw=0) == 0
    assert kip101_truncation_offset((), (rec(1, 1),), follower_hw=1) == 1
    assert kip101_truncation_offset((rec(0, 0),), (), follower_hw=1) == 0


def test_kip101_misses_divergence_within_one_epoch_that_kip279_catches() -> None:
    # Fast leader fail-over (KIP-279): both logs end in epoch 1 but differ at offset 1.
    leader = (rec(0, 0), rec(2, 1))
    follower = (rec(0, 0), rec(1, 1))
    assert kip101_truncation_offset(leader, follower, follower_hw=0) == 2
    assert kip279_truncation_offset(leader, follower) == 1


def test_kip279_truncates_everything_when_nothing_matches() -> None:
    assert kip279_truncation_offset((rec(0, 0),), (rec(1, 0),)) == 0
    assert kip279_truncation_offset((), (rec(1, 0),)) == 0


def test_largest_epoch_at_most_answers_with_that_epochs_end_offset() -> None:
    leader = (rec(0, 0), rec(1, 0), rec(2, 2))
    assert largest_epoch_at_most(leader, 1) == (0, 2)
    assert largest_epoch_at_most(leader, 5) == (2, 3)
    assert largest_epoch_at_most((rec(0, 3),), 1) == (NO_EPOCH, 0)


logs = st.lists(st.builds(Record, st.integers(0, 3), st.integers(0, 3)), max_size=4).map(tuple)


@given(logs, logs)
def test_kip279_offset_is_within_both_logs_and_the_logs_agree_just_below_it(
    leader: Log, follower: Log
) -> None:
    offset = kip279_truncation_offset(leader, follower)
    assert 0 <= offset <= min(len(leader), len(follower))
    if offset > 0:
        assert leader[offset - 1] == follower[offset - 1]
    assert all(leader[o] != follower[o] for o in range(offset, min(len(leader), len(follower))))
