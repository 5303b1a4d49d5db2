"""The properties Kafka engineers expect, as predicates; and the old protocol breaking them."""

from __future__ import annotations

from dataclasses import replace

from isrlab.core.invariants import (
    acknowledged_records_present,
    committed_records_on_isr,
    consumer_read_survives,
    epochs_did_not_decrease,
    logs_agree_below_high_watermarks,
    partition_violations,
)
from isrlab.core.partition import make_follower, make_leader, truncate_to_high_watermark
from isrlab.core.produce import append_records_to_leader
from isrlab.core.state import Partition, PartitionState, records
from isrlab.core.truncation import Record
from tests.core.helpers import TP, fetch, in_sync_leader, ok


def test_a_well_formed_leader_breaks_no_partition_property() -> None:
    assert partition_violations(in_sync_leader(3)) == ()


def test_each_broken_partition_property_is_named() -> None:
    p = in_sync_leader(3)
    assert partition_violations(replace(p, high_watermark=4)) == ("HW <= LEO",)
    assert partition_violations(replace(p, isr=frozenset({1, 2}))) == ("leader ∈ ISR",)
    assert partition_violations(replace(p, isr=frozenset({0, 9}))) == ("ISR ⊆ AR",)
    follower = Partition(TP, 1, leader=0, assigned_replicas=(0, 1), log=records((1, 2, 3), 1),
                         log_created=True, high_watermark=2, log_start_offset=3)
    assert partition_violations(follower) == ("LW <= HW",)


def test_epochs_did_not_decrease_compares_leader_and_controller_epochs() -> None:
    p = in_sync_leader(1)
    assert epochs_did_not_decrease(p, replace(p, leader_epoch=p.leader_epoch + 1))
    assert not epochs_did_not_decrease(p, replace(p, controller_epoch=p.controller_epoch - 1))


def test_truncate_to_hw_then_a_leader_change_loses_a_committed_record() -> None:
    # KIP-101 scenario 1, driven through core: A (0) leads, B (1) has both records but its
    # HW is 1; B restarts as follower and truncates to its HW; then A dies and B leads.
    a = fetch(fetch(in_sync_leader(1, replicas=(0, 1)), 1, 1, 0), 1, 1, 0)
    a = ok(make_leader(a, PartitionState(1, 0, 1, (0, 1), 1, (0, 1)), 0)).partition
    a = ok(append_records_to_leader(a, (7,), 1)).partition
    a = fetch(a, 1, 2, 5)  # B has 2 records; A's HW becomes 2
    assert a.high_watermark == 2
    b = Partition(TP, 1, log=a.log, log_created=True, high_watermark=1)
    assert committed_records_on_isr(a, {0: a.log, 1: b.log})
    restarted = ok(make_follower(b, PartitionState(1, 0, 2, (0, 1), 2, (0, 1)),
                                 truncate_to_high_watermark)).partition
    assert len(restarted.log) == 1
    assert not committed_records_on_isr(a, {0: a.log, 1: restarted.log})
    b_leads = ok(make_leader(restarted, PartitionState(1, 1, 3, (1,), 3, (0, 1)), 9)).partition
    assert not acknowledged_records_present((7,), b_leads.log)
    assert not consumer_read_survives(a.log[:2], b_leads.log)


def test_logs_that_diverge_below_their_high_watermarks_are_detected() -> None:
    x = Partition(TP, 0, log=(Record(1, 1), Record(2, 1)), log_created=True, high_watermark=2)
    y = Partition(TP, 1, log=(Record(1, 1), Record(3, 2)), log_created=True, high_watermark=2)
    z = replace(y, high_watermark=1)
    assert not logs_agree_below_high_watermarks([x, y])
    assert logs_agree_below_high_watermarks([x, z])
    assert acknowledged_records_present((1, 2), x.log)
    assert consumer_read_survives(records((1,), 1), x.log)
