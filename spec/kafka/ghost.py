"""The ghost history: what clients were told and what the invariants check against.

Not Kafka state: the records produced, acknowledged, committed and consumed (with the
leader epoch of each), acks=all requests waiting (``DelayedProduce``), the leader of each
epoch, and flags recording events (an unclean election, a truncation, a broker exit).
"""

from __future__ import annotations

from typing import cast

from isrlab.core.errors import Errors
from isrlab.core.produce import check_enough_replicas_reach_offset
from isrlab.core.state import Partition
from isrlab.spec.kafka.config import Out, State
from isrlab.spec.kafka.labels import broker_step
from isrlab.spec.kafka.memo import MISSING
from isrlab.spec.kafka.partition import PartitionBridge
from isrlab.spec.kafka.state import (
    F_TWO_LEADERS,
    NONE,
    BrokerPartition,
    Ghost,
    kafka_state,
    with_fields,
)


class GhostHistory(PartitionBridge):
    """Ghost upkeep after steps, and ``Consume`` (a consumer reading below a leader's HW)."""

    def _after_leader_step(self, state: State, b: int) -> State:
        """Ghost upkeep after a step of leader ``b``: newly committed records, and
        waiting acks=all produce requests re-checked (``tryCompleteDelayedRequests``)."""
        ghost = self._ghost_after_leader_step(state.brokers[b], b, state.ghost)
        if ghost is None:
            return state
        return kafka_state(state.controller, state.brokers, state.channels, ghost)

    def _ghost_after_leader_step(self, br: BrokerPartition, b: int,
                                 ghost: Ghost) -> Ghost | None:
        """``_ghost_after_leader_step_computed``, cached (``memo.IdCache2``)."""
        cache = self._cache_ghost_after_leader_step
        found = cache.find(br, ghost, b)
        if found is MISSING:
            found = cache.keep(br, ghost, b, self._ghost_after_leader_step_computed(br, b, ghost))
        return cast(Ghost | None, found)

    def _ghost_after_leader_step_computed(self, br: BrokerPartition, b: int,
                                          ghost: Ghost) -> Ghost | None:
        """The ghost after a step of leader ``b`` holding ``br`` (``_after_leader_step``;
        ``None`` when nothing changes; memoised)."""
        committed = ghost.committed
        if br.leader == b and br.alive:
            c = self.codec
            new = list(committed)
            changed = False
            for x in br.log[:br.high_watermark]:
                rid = x // c.epochs
                if new[rid] == NONE:
                    new[rid] = br.leader_epoch
                    changed = True
            if changed:
                committed = tuple(new)
        pending = ghost.pending
        acked = ghost.acked
        if pending:
            keep = []
            acked_l = list(acked)
            p: Partition | None = None
            for rid, pb in pending:
                if pb != b:
                    keep.append((rid, pb))
                    continue
                if p is None:
                    p = self.broker_partition(br, b)
                check = check_enough_replicas_reach_offset(
                    p, ghost.origin[rid] + 1, self.cfg.min_isr
                )
                if not check.done:
                    keep.append((rid, pb))
                elif check.error is Errors.NONE:
                    acked_l[rid] = br.leader_epoch
            pending = tuple(keep)
            acked = tuple(acked_l)
        if committed is ghost.committed and pending is ghost.pending:
            return None
        return Ghost(ghost.next_id, ghost.origin, committed, acked, ghost.consumed, pending,
                     ghost.flags, ghost.epoch_leader)

    def _flag(self, state: State, flag: int) -> State:
        ghost = state.ghost
        if ghost.flags & flag:
            return state
        ghost = Ghost(ghost.next_id, ghost.origin, ghost.committed, ghost.acked, ghost.consumed,
                      ghost.pending, ghost.flags | flag, ghost.epoch_leader)
        return kafka_state(state.controller, state.brokers, state.channels, ghost)

    def _note_epoch_leader(self, state: State, epoch: int, b: int) -> State:
        ghost = state.ghost
        table = ghost.epoch_leader
        if table[epoch] == b:
            return state
        if table[epoch] != NONE:
            return self._flag(state, F_TWO_LEADERS)
        ghost = with_fields(ghost, epoch_leader=self._set(table, epoch, b))
        return kafka_state(state.controller, state.brokers, state.channels, ghost)

    def _drop_pending(self, state: State, b: int) -> State:
        """Waiting acks=all requests of ``b`` fail (it stopped leading or crashed)."""
        ghost = state.ghost
        if not ghost.pending:
            return state
        pending = tuple([x for x in ghost.pending if x[1] != b])  # (record id, broker)
        if pending == ghost.pending:
            return state
        return kafka_state(state.controller, state.brokers, state.channels,
                          with_fields(ghost, pending=pending))

    def _a_consume(self, state: State, out: Out) -> None:
        """``Consume(b)``: a consumer reads every record below the HW of broker ``b``, which
        it takes for the leader (read_uncommitted: offsets ``[0, HW)``)."""
        ghost = state.ghost
        c = self.codec
        for b in range(self.n):
            br = state.brokers[b]
            if not self._is_acting_leader(state, b):
                continue
            consumed = list(ghost.consumed)
            for x in br.log[:br.high_watermark]:
                if consumed[x // c.epochs] == NONE:
                    consumed[x // c.epochs] = br.leader_epoch
            new = tuple(consumed)
            if new != ghost.consumed:
                g = with_fields(ghost, consumed=new)
                out.append((broker_step("Consume", b),
                            kafka_state(state.controller, state.brokers, state.channels, g)))

