"""ISR change propagation: ``ReplicaManager.recordIsrChange`` and ``maybePropagateIsrChanges``.

Each ISR shrink or expand records its partition and stamps ``last_isr_change_ms``.  A
task running every 2500 ms writes one sequential node under ``/isr_change_notification``
when there are changes and either no change happened in the last 5 s (the blackout) or
the last propagation is more than 60 s old.  The controller then sends
UpdateMetadata to every broker, so brokers' metadata lags the true ISR for a bounded time.
"""

from __future__ import annotations

from dataclasses import dataclass

from returns.result import Result, Success

from isrlab.core.errors import InvalidInput, Problem, reject
from isrlab.core.state import TopicPartition

ISR_CHANGE_PROPAGATION_PERIOD_MS = 2500
"""The ``isr-change-propagation`` task's period."""

ISR_CHANGE_PROPAGATION_BLACKOUT_MS = 5000
"""``ReplicaManager.IsrChangePropagationBlackOut``: wait for 5 s without ISR changes."""

ISR_CHANGE_PROPAGATION_INTERVAL_MS = 60000
"""``ReplicaManager.IsrChangePropagationInterval``: but never wait more than 60 s."""


@dataclass(frozen=True, slots=True)
class IsrChangeState:
    """``isrChangeSet``, ``lastIsrChangeMs`` and ``lastIsrPropagationMs`` of one broker.

    Kafka initialises both timestamps to the broker's start time; so does ``start_ms``.
    """

    isr_change_set: frozenset[TopicPartition] = frozenset()
    last_isr_change_ms: int = 0
    last_isr_propagation_ms: int = 0


@dataclass(frozen=True, slots=True)
class Propagation:
    """Outcome of ``maybe_propagate_isr_changes``: the new state and the node written.

    ``notification`` is the set of partitions written to one
    ``/isr_change_notification/isr_change_<seq>`` node, or ``None`` when nothing was.
    """

    state: IsrChangeState
    notification: frozenset[TopicPartition] | None


def start_isr_change_state(start_ms: int) -> Result[IsrChangeState, InvalidInput]:
    """The bookkeeping of a broker that started at ``start_ms`` (both stamps = start)."""
    if start_ms < 0:
        return reject(Problem.NEGATIVE_VALUE, f"start_ms {start_ms}")
    return Success(IsrChangeState(frozenset(), start_ms, start_ms))


def record_isr_change(
    state: IsrChangeState, tp: TopicPartition, now_ms: int
) -> IsrChangeState:
    """``ReplicaManager.recordIsrChange``: add the partition, stamp ``last_isr_change_ms``.

    Total; time is whatever the caller says (no monotonicity check: a model may pass a
    logical clock).
    """
    return IsrChangeState(state.isr_change_set | {tp}, now_ms, state.last_isr_propagation_ms)


def should_propagate(state: IsrChangeState, now_ms: int) -> bool:
    """The propagation condition: changes pending and (blackout over or interval exceeded)."""
    return bool(state.isr_change_set) and (
        state.last_isr_change_ms + ISR_CHANGE_PROPAGATION_BLACKOUT_MS < now_ms
        or state.last_isr_propagation_ms + ISR_CHANGE_PROPAGATION_INTERVAL_MS < now_ms
    )


def maybe_propagate_isr_changes(state: IsrChangeState, now_ms: int) -> Propagation:
    """``ReplicaManager.maybePropagateIsrChanges``: one poll of the 2500 ms task.

    If ``should_propagate``: the pending set becomes one notification, the set is cleared
    and ``last_isr_propagation_ms`` = now.  Otherwise nothing changes.  Shortcut: the
    ZooKeeper write always succeeds.  Total.
    """
    if not should_propagate(state, now_ms):
        return Propagation(state, None)
    cleared = IsrChangeState(frozenset(), state.last_isr_change_ms, now_ms)
    return Propagation(cleared, state.isr_change_set)


def propagation_poll_times(start_ms: int, until_ms: int) -> tuple[int, ...]:
    """The times the 2500 ms task runs in ``(start_ms, until_ms]`` (Kafka's fixed-rate task)."""
    first = start_ms + ISR_CHANGE_PROPAGATION_PERIOD_MS
    return tuple(range(first, until_ms + 1, ISR_CHANGE_PROPAGATION_PERIOD_MS))
