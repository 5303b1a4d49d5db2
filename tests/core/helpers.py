"""Builders shared by the core tests: partitions driven into shape through core's own steps."""

from __future__ import annotations

from typing import TypeVar

from returns.pipeline import is_successful
from returns.result import Result

from isrlab.core.isr import read_from_local_log, update_follower_fetch
from isrlab.core.partition import make_leader
from isrlab.core.produce import ACKS_LEADER, append_records_to_leader
from isrlab.core.state import Partition, PartitionState, TopicPartition

TP = TopicPartition("orders", 0)
T = TypeVar("T")
E = TypeVar("E")


def ok(result: Result[T, E]) -> T:
    """The success value; fails the test, showing the error value, otherwise."""
    assert is_successful(result), f"unexpected failure: {result}"
    return result.unwrap()


def err(result: Result[T, E]) -> E:
    """The failure value; fails the test if the call succeeded."""
    assert not is_successful(result), f"unexpected success: {result}"
    return result.failure()


def state(
    leader: int = 0,
    isr: tuple[int, ...] = (0, 1, 2),
    replicas: tuple[int, ...] = (0, 1, 2),
    leader_epoch: int = 1,
    controller_epoch: int = 1,
    zk_version: int = 1,
) -> PartitionState:
    """A LeaderAndIsr partition state."""
    return PartitionState(controller_epoch, leader, leader_epoch, isr, zk_version, replicas)


def leader_partition(
    replicas: tuple[int, ...] = (0, 1, 2), now_ms: int = 0, local: int = 0
) -> Partition:
    """Broker ``local`` just became leader of a new partition with ISR = AR."""
    return ok(make_leader(Partition(TP, local), state(local, replicas, replicas), now_ms)).partition


def append(partition: Partition, count: int, first_id: int = 0) -> Partition:
    """The leader with ``count`` more records (acks=1)."""
    ids = tuple(range(first_id, first_id + count))
    return ok(append_records_to_leader(partition, ids, ACKS_LEADER)).partition


def fetch(
    partition: Partition, follower: int, offset: int, now_ms: int, max_records: int | None = None
) -> Partition:
    """Follower ``follower`` fetches from ``offset`` at ``now_ms``; the leader records it."""
    read = ok(read_from_local_log(partition, offset, 0, now_ms, max_records))
    return ok(update_follower_fetch(partition, follower, read)).partition


def in_sync_leader(leo: int, replicas: tuple[int, ...] = (0, 1, 2), now_ms: int = 0) -> Partition:
    """A leader with ``leo`` records whose followers all fetched up to it (HW = LEO)."""
    partition = append(leader_partition(replicas, now_ms), leo)
    for follower in replicas[1:]:
        partition = fetch(partition, follower, leo, now_ms)
    return partition
