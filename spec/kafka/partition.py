"""The bridge between a broker's ``BrokerPartition`` (state) and ``core``'s ``Partition``.

Every broker-side step of the model is a ``core`` function applied to a ``Partition``
(Kafka's ``Partition``: the local replica's log, HW, leader epoch, ISR and the leader's
view of its remote replicas); ``broker_partition`` rebuilds it from the compact tuple the
state holds and ``_with_partition`` writes a step's result back.  Shortcut: remote
replicas' times are kept as ages (ticks since), saturating just past ``lag_ticks``.
"""

from __future__ import annotations

from functools import cache
from typing import Any, cast

from isrlab.core.alter_partition import IsrState, PendingIsrChange, hw_isr
from isrlab.core.elr import hw_may_advance
from isrlab.core.metadata_cache import Broker, MetadataSnapshot
from isrlab.core.state import Partition, RemoteReplica, last_stable_offset
from isrlab.core.truncation import Log, Record
from isrlab.spec.kafka.config import TP, KafkaSetup, State
from isrlab.spec.kafka.memo import MISSING, memoised
from isrlab.spec.kafka.state import (
    NONE,
    BrokerPartition,
    RemoteReplicaView,
    built,
    kafka_state,
    mask_of,
    members,
)


@cache
def _snapshot(alive_mask: int) -> MetadataSnapshot:
    """A MetadataSnapshot listing the brokers of ``alive_mask`` as alive (memoised)."""
    return MetadataSnapshot(alive_brokers=tuple(Broker(i, ()) for i in members(alive_mask)))


class PartitionBridge(KafkaSetup):
    """The ``Partition`` <-> ``BrokerPartition`` conversions and the state's small accessors."""

    @memoised
    def log_records(self, codes: tuple[int, ...]) -> Log:
        """The ``core`` log of a state's log (records as ``Record(id, epoch)``; memoised)."""
        c = self.codec
        return tuple(Record(x // c.epochs, x % c.epochs) for x in codes)

    def partition(self, state: State, b: int) -> Partition:
        """Broker ``b``'s ``isrlab.core.state.Partition``, rebuilt from its ``BrokerPartition``."""
        return self.broker_partition(state.brokers[b], b)

    def broker_lso_le_hw(self, br: BrokerPartition, b: int) -> bool:
        """``broker_lso_le_hw_computed``, cached (``memo.IdCache``)."""
        small = b
        cache = self._cache_broker_lso_le_hw
        found = cache.find(br, small)
        if found is MISSING:
            found = cache.keep(br, small, self.broker_lso_le_hw_computed(br, b))
        return cast(bool, found)

    def broker_lso_le_hw_computed(self, br: BrokerPartition, b: int) -> bool:
        """``isrlab.spec.invariants.lso_le_hw`` for broker ``b`` holding ``br``: its
        ``core`` last stable offset is at most its HW (memoised)."""
        return last_stable_offset(self.broker_partition(br, b)) <= br.high_watermark

    def broker_partition(self, br: BrokerPartition, b: int) -> Partition:
        """``broker_partition_computed``, cached (``memo.IdCache``)."""
        small = b
        cache = self._cache_broker_partition
        found = cache.find(br, small)
        if found is MISSING:
            found = cache.keep(br, small, self.broker_partition_computed(br, b))
        return cast(Partition, found)

    def broker_partition_computed(self, br: BrokerPartition, b: int) -> Partition:
        """The ``isrlab.core.state.Partition`` of broker ``b`` holding ``br`` (memoised: a
        broker's tuple takes few values over a search)."""
        leader = br.leader
        remotes: tuple[RemoteReplica, ...] = ()
        if leader == b:
            sat = self.sat
            if self.previous_fetch:
                remotes = tuple(
                    RemoteReplica(i, r.log_end_offset, 0, sat - r.age, r.last_fetch_leader_leo,
                                  sat - r.last_fetch_age)
                    for i, r in enumerate(br.remotes) if i != b
                )
            else:
                remotes = tuple(
                    RemoteReplica(i, r.log_end_offset, 0, sat - r.age, 1 << 30, 0)
                    for i, r in enumerate(br.remotes) if i != b
                )
        return Partition(
            TP, b, controller_epoch=br.controller_epoch, leader=None if leader == NONE else leader,
            leader_epoch=br.leader_epoch, zk_version=0, assigned_replicas=tuple(range(self.n)),
            isr=frozenset(members(self._leader_isr(br))), log=self.log_records(br.log),
            log_created=True,
            high_watermark=br.high_watermark, remotes=remotes,
        )

    def _leader_isr(self, br: BrokerPartition) -> int:
        """The ISR a leader's HW and acks=all count (a mask): its ISR, or with a pending
        AlterPartition proposal the ISR of the ``hw_isr`` rule (``isrlab.core.alter_partition.
        hw_isr``: Kafka 2.7+'s ``maximalIsr`` adds a pending joiner)."""
        if not br.pending_isr:
            return br.in_sync_replica_ids
        return mask_of(hw_isr(self._isr_state(br), self.hw_rule))

    @staticmethod
    def _isr_state(br: BrokerPartition) -> IsrState:
        """A leader's ``IsrState``: the committed ISR and any pending proposal.  The
        partition epoch is not kept (see ``_a_alter_partition``): 0 stands for the leader's
        committed version."""
        committed = frozenset(members(br.in_sync_replica_ids))
        if not br.pending_isr:
            return IsrState(committed, 0)
        expanding = bool(br.pending_isr & ~br.in_sync_replica_ids)
        return IsrState(committed, 0,
                        PendingIsrChange(frozenset(members(br.pending_isr)), expanding))

    def _with_partition(self, br: BrokerPartition, p: Partition) -> BrokerPartition:
        """Broker tuple ``br`` with the partition fields taken from ``p``.  With
        ``isr_changes=alter-partition`` a leader staying in its epoch keeps its committed
        ISR and its pending proposal (``p.isr`` is the ISR its HW counts; only the
        controller's answer commits an ISR change); a new epoch or role drops them, as
        ``makeLeader`` / ``makeFollower`` install the controller's ISR."""
        b = p.local_broker_id
        c = self.codec
        # the interner's log object, so that the memoised calls taking a log find it by
        # its address
        log = self._interner.canon(tuple([r.id * c.epochs + r.epoch for r in p.log]))
        leader = NONE if p.leader is None else p.leader
        remotes: tuple[RemoteReplicaView, ...] = ()
        if leader == b:
            sat = self.sat
            by_id = {r.broker_id: r for r in p.remotes}
            remotes = tuple(
                RemoteReplicaView(by_id[i].log_end_offset,
                                  min(sat, sat - by_id[i].last_caught_up_time_ms),
                                  *self._last_fetch(by_id[i]))
                if i in by_id else RemoteReplicaView(0, 0, *self.no_fetch)
                for i in range(self.n)
            )
        isr = mask_of(p.isr) if leader == b else 0
        pending = alter = 0
        if (self.alter and leader == b == br.leader
                and p.leader_epoch == br.leader_epoch and br.alive):
            isr, pending, alter = br.in_sync_replica_ids, br.pending_isr, br.alter_partition
        flushed = br.flushed
        if self.power_loss:
            flushed = min(flushed, len(log))
        ckpt = br.hw_checkpoint if self.cfg.hw_checkpoint else 0
        hw = p.high_watermark
        if (self.cfg.elr and leader == b
                and not hw_may_advance(isr.bit_count(), self.cfg.min_isr)):
            # KIP-966: maybeIncrementLeaderHW returns early while the ISR is below
            # min.insync.replicas (the HW may still drop with the log).
            hw = min(hw, br.high_watermark)
        return built(BrokerPartition, br.alive, log, hw, ckpt, flushed, p.leader_epoch,
                     leader, p.controller_epoch, isr, remotes, br.metadata_cache,
                     br.fetch_in_flight, pending_isr=pending, alter_partition=alter)

    def _last_fetch(self, r: RemoteReplica) -> tuple[int, ...]:
        """A remote's previous fetch as ``(lf_leo, lf_age)`` (kafka_4485; else nothing): a
        saturated or unknown fetch time can no longer date a catch-up, so its LEO is 0."""
        if not self.previous_fetch:
            return ()
        sat = self.sat
        age = min(sat, sat - r.last_fetch_time_ms)
        return (r.last_fetch_leader_log_end_offset if age < sat else 0, age)

    @staticmethod
    def _set_broker(state: State, b: int, br: BrokerPartition) -> State:
        brokers = state.brokers
        return kafka_state(state.controller, (*brokers[:b], br, *brokers[b + 1:]),
                          state.channels, state.ghost)

    @staticmethod
    def _set(t: tuple[Any, ...], i: int, v: Any) -> tuple[Any, ...]:
        return (*t[:i], v, *t[i + 1:])

    def _is_acting_leader(self, state: State, b: int) -> bool:
        br = state.brokers[b]
        return bool(br.alive) and br.leader == b

    def _alive_mask(self, state: State) -> int:
        mask = 0
        for b, br in enumerate(state.brokers):
            if br.alive:
                mask |= 1 << b
        return mask

