"""Ill-formed arguments are rejected with a clear error value, never an exception."""

from __future__ import annotations

from dataclasses import replace

import pytest

from isrlab.core.errors import Errors, InvalidInput, Problem
from isrlab.core.isr import maybe_shrink_isr, read_from_local_log
from isrlab.core.partition import make_follower, make_leader, maybe_increment_leader_hw
from isrlab.core.produce import ACKS_LEADER, append_records_to_leader
from isrlab.core.propagation import start_isr_change_state
from isrlab.core.replica_manager import LeaderAndIsrResponse
from isrlab.core.state import (
    NO_LEADER,
    Partition,
    PartitionState,
    RemoteReplica,
    check_partition,
    check_partition_state,
    log_end_offset,
    records,
)
from tests.core.helpers import TP, err, in_sync_leader, ok

LEADER = in_sync_leader(3)

BROKEN_PARTITIONS = [
    ("negative HW", replace(LEADER, high_watermark=-1), Problem.NEGATIVE_VALUE),
    ("HW above LEO", replace(LEADER, high_watermark=4), Problem.HW_ABOVE_LEO),
    ("log start above HW", replace(LEADER, log_start_offset=3, high_watermark=2),
     Problem.LOG_START_ABOVE_HW),
    ("ISR outside AR", replace(LEADER, isr=frozenset({0, 7})), Problem.ISR_NOT_SUBSET_OF_AR),
    ("duplicate AR", replace(LEADER, assigned_replicas=(0, 1, 1)), Problem.DUPLICATE_REPLICA),
    ("negative replica", replace(LEADER, assigned_replicas=(0, -1)), Problem.NEGATIVE_VALUE),
    ("empty ISR", replace(LEADER, isr=frozenset()), Problem.EMPTY_ISR),
    ("leader outside ISR", replace(LEADER, isr=frozenset({1})), Problem.LEADER_NOT_IN_ISR),
    ("open txn past LEO", replace(LEADER, open_txn_first_offsets=frozenset({3})),
     Problem.OFFSET_OUT_OF_LOG),
    ("remotes not AR", replace(LEADER, remotes=LEADER.remotes[:1]), Problem.BAD_REMOTE_REPLICAS),
    ("remote LEO below -1", replace(LEADER, remotes=(RemoteReplica(1, -2), LEADER.remotes[1])),
     Problem.NEGATIVE_VALUE),
    ("follower with remotes", replace(LEADER, leader=1), Problem.BAD_REMOTE_REPLICAS),
    ("hosted outside AR", replace(LEADER, local_broker_id=9, leader=1, remotes=()),
     Problem.NOT_A_REPLICA),
]


@pytest.mark.parametrize(("name", "partition", "problem"), BROKEN_PARTITIONS,
                         ids=[b[0] for b in BROKEN_PARTITIONS])
def test_a_broken_partition_is_rejected_by_every_transition(
    name: str, partition: Partition, problem: Problem
) -> None:
    assert err(check_partition(partition)).problem is problem
    assert err(maybe_increment_leader_hw(partition)).problem is problem
    assert err(maybe_shrink_isr(partition, 0, 100)).problem is problem
    assert err(read_from_local_log(partition, 0, 0, 0)).problem is problem
    assert err(append_records_to_leader(partition, (7,), ACKS_LEADER)).problem is problem


BROKEN_STATES = [
    ("negative epoch", PartitionState(1, 0, -1, (0,), 0, (0,)), Problem.NEGATIVE_VALUE),
    ("ISR outside AR", PartitionState(1, 0, 1, (0, 2), 0, (0, 1)), Problem.ISR_NOT_SUBSET_OF_AR),
    ("duplicate ISR", PartitionState(1, 0, 1, (0, 0), 0, (0, 1)), Problem.DUPLICATE_REPLICA),
    ("empty ISR", PartitionState(1, 0, 1, (), 0, (0, 1)), Problem.EMPTY_ISR),
    ("negative replica", PartitionState(1, 0, 1, (0,), 0, (0, -1)), Problem.NEGATIVE_VALUE),
    ("duplicate AR", PartitionState(1, 0, 1, (0,), 0, (0, 1, 0)), Problem.DUPLICATE_REPLICA),
    ("leader outside ISR", PartitionState(1, 0, 1, (1,), 0, (0, 1)), Problem.LEADER_NOT_IN_ISR),
]


@pytest.mark.parametrize(("name", "bad", "problem"), BROKEN_STATES,
                         ids=[b[0] for b in BROKEN_STATES])
def test_a_broken_leader_and_isr_state_is_rejected(
    name: str, bad: PartitionState, problem: Problem
) -> None:
    assert err(check_partition_state(bad)).problem is problem
    assert err(make_leader(Partition(TP, 0), bad, 0)).problem is problem


def test_a_leaderless_state_is_well_formed_but_cannot_be_followed() -> None:
    leaderless = PartitionState(1, NO_LEADER, 1, (), 0, (0, 1))
    assert ok(check_partition_state(leaderless)) == leaderless
    assert err(make_follower(Partition(TP, 0), leaderless)).problem is Problem.NOT_A_REPLICA


def test_error_values_print_as_one_line() -> None:
    failure = err(check_partition(replace(LEADER, high_watermark=4)))
    assert isinstance(failure, InvalidInput)
    assert str(failure) == "high watermark above log end offset: HW 4 > LEO 3 in orders-0"
    assert "\n" not in str(failure)


def test_negative_start_times_are_rejected() -> None:
    assert err(start_isr_change_state(-1)).problem is Problem.NEGATIVE_VALUE
    assert ok(start_isr_change_state(5)).last_isr_propagation_ms == 5


def test_small_readers_answer_plainly() -> None:
    assert log_end_offset(replace(LEADER, log=records((1, 2), 0))) == 2
    response = LeaderAndIsrResponse(Errors.NONE, ((TP, Errors.KAFKA_STORAGE_ERROR),))
    assert response.error_of(TP) is Errors.KAFKA_STORAGE_ERROR
    assert response.error_of(replace(TP, partition=9)) is None
