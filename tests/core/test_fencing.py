"""Fetch fencing by leader epoch: none, KIP-320's first design, KIP-320 as shipped (2.1)."""

from __future__ import annotations

from isrlab.core.errors import Errors
from isrlab.core.fencing import (
    FetchDecision,
    FetchFencing,
    check_current_leader_epoch,
    fenced_read,
    fetch_decision,
    update_follower_fetch_fenced,
)
from isrlab.core.isr import LogReadResult, read_from_local_log, update_follower_fetch
from isrlab.core.state import records, remote
from tests.core.helpers import append, leader_partition, ok


def test_the_leader_compares_the_requested_epoch_with_its_own() -> None:
    assert check_current_leader_epoch(3, None) is Errors.NONE
    assert check_current_leader_epoch(3, 3) is Errors.NONE
    assert check_current_leader_epoch(3, 2) is Errors.FENCED_LEADER_EPOCH
    assert check_current_leader_epoch(3, 4) is Errors.UNKNOWN_LEADER_EPOCH


def test_the_three_designs_differ_in_what_a_stale_fetch_counts_for() -> None:
    assert fetch_decision(FetchFencing.NONE, 3, 2) == FetchDecision(True, Errors.NONE, False)
    assert fetch_decision(FetchFencing.FIRST_DESIGN, 3, 2) == FetchDecision(
        True, Errors.FENCED_LEADER_EPOCH, True)
    assert fetch_decision(FetchFencing.FINAL, 3, 2) == FetchDecision(
        False, Errors.FENCED_LEADER_EPOCH, False)
    for fencing in FetchFencing:
        assert fetch_decision(fencing, 3, 3) == FetchDecision(True, Errors.NONE, False)


def test_a_refused_read_carries_no_records_and_records_nothing_on_the_leader() -> None:
    read = LogReadResult(0, 0, 2, 0, 0, records((1, 2), 1), 5)
    refused = fetch_decision(FetchFencing.FINAL, 3, 2)
    empty = fenced_read(read, refused)
    assert (empty.records, empty.error) == ((), Errors.FENCED_LEADER_EPOCH)
    assert fenced_read(read, fetch_decision(FetchFencing.FINAL, 3, 3)) is read
    leader = append(leader_partition((0, 1)), 2)
    after = ok(update_follower_fetch(leader, 1, empty)).partition
    assert remote(after, 1) == remote(leader, 1)


def test_a_stale_follower_counts_for_the_hw_under_the_first_design_but_not_the_final_one() -> None:
    # Leader 0 in epoch 1 (leader_partition's request) with 2 records; follower 1 still
    # believes in epoch 0 and fetches at offset 2.
    leader = append(leader_partition((0, 1)), 2)
    read = ok(read_from_local_log(leader, 2, 0, 5))
    stale = leader.leader_epoch - 1
    first = ok(update_follower_fetch_fenced(leader, 1, read, stale, FetchFencing.FIRST_DESIGN))
    final = ok(update_follower_fetch_fenced(leader, 1, read, stale, FetchFencing.FINAL))
    none = ok(update_follower_fetch_fenced(leader, 1, read, stale, FetchFencing.NONE))
    assert first.update.partition.high_watermark == 2 and first.follower_truncates
    assert first.response.error is Errors.FENCED_LEADER_EPOCH
    assert final.update.partition.high_watermark == 0 and not final.follower_truncates
    assert (none.update.partition.high_watermark, none.response) == (2, read)
