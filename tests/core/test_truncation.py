"""The leader-epoch lookups of ``isrlab.core.truncation`` (LeaderEpochFileCache, KIP-101/279)."""

from __future__ import annotations

from isrlab.core.truncation import (
    NO_EPOCH,
    Record,
    before_first_epoch,
    largest_epoch_at_most,
    latest_epoch,
    offset_for_leader_epoch,
)

LEADER = (Record(1, 0), Record(2, 0), Record(3, 2), Record(4, 2), Record(5, 4))


def test_the_latest_epoch_is_the_last_records_or_none_for_an_empty_log() -> None:
    assert latest_epoch(LEADER) == 4
    assert latest_epoch(()) == NO_EPOCH


def test_an_epoch_newer_than_every_leader_record_is_undefined() -> None:
    assert offset_for_leader_epoch(LEADER, 5) is None
    assert offset_for_leader_epoch(LEADER, 4) == 5  # the latest epoch: the LEO
    assert offset_for_leader_epoch(LEADER, 1) == 2  # the start of epoch 2


def test_kip279_answers_the_largest_epoch_not_above_the_request_and_its_end() -> None:
    assert largest_epoch_at_most(LEADER, 3) == (2, 4)
    assert largest_epoch_at_most(LEADER, 9) == (4, 5)
    assert largest_epoch_at_most(LEADER[2:], 1) == (NO_EPOCH, 0)


def test_an_epoch_is_before_the_first_only_against_a_non_empty_leader() -> None:
    assert before_first_epoch(LEADER[2:], 0)
    assert not before_first_epoch(LEADER, 0)
    assert not before_first_epoch((), 0)
