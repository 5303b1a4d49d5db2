"""``__consumer_offsets`` leadership changes: group immigration and emigration.

When a broker becomes leader of a ``__consumer_offsets`` partition, its group coordinator
loads groups and offsets from the log, reading from the log start offset **up to the
high watermark only**; when it stops leading, it unloads the partition's groups: they go
Dead and members waiting for a join or sync answer get ``NOT_COORDINATOR``.

Shortcut: the log's records stand for offset commits (a record's ``id`` is the committed
value); group metadata records, tombstones and the asynchronous scheduler are not modelled.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from enum import Enum, unique

from returns.result import Result, Success

from isrlab.core.errors import Errors, InvalidInput, Problem, reject
from isrlab.core.truncation import Log

GROUP_METADATA_TOPIC_NAME = "__consumer_offsets"


@unique
class GroupState(Enum):
    """``GroupMetadata`` states."""

    EMPTY = "Empty"
    PREPARING_REBALANCE = "PreparingRebalance"
    AWAITING_SYNC = "AwaitingSync"
    STABLE = "Stable"
    DEAD = "Dead"


@dataclass(frozen=True, slots=True)
class Group:
    """A consumer group: id, the offsets partition it lives in, state, waiting members."""

    group_id: str
    partition: int
    state: GroupState
    waiting_members: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class GroupCoordinatorState:
    """``GroupMetadataManager``'s ownership and cache.

    ``owned_partitions``: offsets partitions this broker coordinates; ``loaded``: per
    partition, the records it loaded; ``groups``: the cached groups (sorted by id).
    """

    owned_partitions: frozenset[int] = frozenset()
    loaded: tuple[tuple[int, Log], ...] = ()
    groups: tuple[Group, ...] = ()


def load_groups_and_offsets(log: Log, log_start_offset: int, high_watermark: int) -> Log:
    """``GroupMetadataManager.loadGroupsAndOffsets``: the records read, ``[start, HW)``.

    The loop reads ``while currOffset < highWaterMark``: nothing at or above the HW is
    loaded (it may still be truncated away).  A non-leader's HW is -1: nothing is loaded.
    Total (bounds are clamped to the log).
    """
    start = max(0, log_start_offset)
    end = min(len(log), high_watermark)
    return log[start:end] if end > start else ()


def handle_group_immigration(
    state: GroupCoordinatorState, partition: int, log: Log, log_start_offset: int,
    high_watermark: int,
) -> Result[GroupCoordinatorState, InvalidInput]:
    """``GroupCoordinator.handleGroupImmigration``: become coordinator for ``partition``.

    Loads ``load_groups_and_offsets`` (replacing anything loaded before) and adds the
    partition to the owned set.  Shortcut: the load is synchronous.
    """
    if partition < 0:
        return reject(Problem.NEGATIVE_VALUE, f"offsets partition {partition}")
    records = load_groups_and_offsets(log, log_start_offset, high_watermark)
    loaded = dict(state.loaded)
    loaded[partition] = records
    return Success(
        replace(
            state,
            owned_partitions=state.owned_partitions | {partition},
            loaded=tuple(sorted(loaded.items())),
        )
    )


@dataclass(frozen=True, slots=True)
class Emigration:
    """Outcome of ``handle_group_emigration``: new state, unloaded groups, error answers."""

    state: GroupCoordinatorState
    unloaded: tuple[Group, ...]
    answers: tuple[tuple[str, Errors], ...]


_ANSWERING = (GroupState.PREPARING_REBALANCE, GroupState.AWAITING_SYNC, GroupState.STABLE)


def handle_group_emigration(state: GroupCoordinatorState, partition: int) -> Emigration:
    """``GroupCoordinator.handleGroupEmigration`` / ``removeGroupsForPartition``.

    Drops ownership and the loaded records of ``partition``; each of its groups goes Dead
    (``onGroupUnloaded``) and leaves the cache; members waiting in PreparingRebalance,
    AwaitingSync or Stable are answered ``NOT_COORDINATOR`` so they rediscover the
    coordinator.  Total.
    """
    leaving = tuple(g for g in state.groups if g.partition == partition)
    staying = tuple(g for g in state.groups if g.partition != partition)
    answers = tuple(
        (member, Errors.NOT_COORDINATOR)
        for g in leaving
        if g.state in _ANSWERING
        for member in g.waiting_members
    )
    dead = tuple(replace(g, state=GroupState.DEAD, waiting_members=()) for g in leaving)
    new = GroupCoordinatorState(
        state.owned_partitions - {partition},
        tuple((p, log) for p, log in state.loaded if p != partition),
        staying,
    )
    return Emigration(new, dead, answers)
