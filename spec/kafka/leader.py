"""The partition leader's own steps: produce, the clock tick, the ISR shrink.

Time is a logical clock: ``Tick`` ages every follower of every leader by one tick; a
follower whose read reached the leader's LEO has age 0; ``maybe_shrink_isr`` drops ISR
followers older than ``lag_ticks`` (with ``kafka_7152``, Kafka 2.1+, the default: unless
the follower's LEO is the leader's); with ``kafka_4485`` (Kafka 0.10.2+, the default) a
read reaching the leader's LEO of the follower's previous fetch takes that fetch's age,
and the HW waits for followers of age <= ``lag_ticks`` as well as the ISR (every step runs
at "now" = ``lag_ticks + 1``).
"""

from __future__ import annotations

from dataclasses import replace
from typing import cast

from isrlab.core.errors import Errors
from isrlab.core.isr import maybe_shrink_isr
from isrlab.core.produce import ACKS_ALL, ACKS_LEADER, append_records_to_leader
from isrlab.core.state import Partition
from isrlab.spec.kafka.config import Out, State
from isrlab.spec.kafka.fetcher import ReplicaFetcher
from isrlab.spec.kafka.labels import TICK, broker_step
from isrlab.spec.kafka.memo import MISSING, memoised
from isrlab.spec.kafka.state import (
    BrokerPartition,
    Ghost,
    RemoteReplicaView,
    kafka_state,
    members,
    with_fields,
)


class PartitionLeader(ReplicaFetcher):
    """``Produce``, ``Tick`` and ``ShrinkIsr`` of a leader."""

    def _a_produce(self, state: State, out: Out) -> None:
        """``Produce(b)``: a producer sends the next record to broker ``b`` acting as leader
        (``append_records_to_leader`` with the configured acks and min.insync.replicas;
        with a pending AlterPartition joiner min.insync.replicas is checked against the
        committed ISR and the HW counts the maximal one, as Kafka 2.7+ does).
        acks=1 is acknowledged at once, acks=all waits for the HW, acks=0 never hears back."""
        ghost = state.ghost
        rid = ghost.next_id
        if rid >= self.cfg.max_records:
            return
        for b in range(self.n):
            if not self._is_acting_leader(state, b):
                continue
            produced = self._produced(state.brokers[b], b, rid)
            if produced is None:
                continue
            newbr, first_offset = produced
            s = self._set_broker(state, b, newbr)
            g = s.ghost
            origin = self._set(g.origin, rid, first_offset)
            acked, pending = g.acked, g.pending
            if self.acks == ACKS_LEADER:
                acked = self._set(acked, rid, newbr.leader_epoch)
            elif self.acks == ACKS_ALL:
                pending = tuple(sorted((*pending, (rid, b))))
            g = Ghost(rid + 1, origin, g.committed, acked, g.consumed, pending, g.flags,
                      g.epoch_leader)
            s = self._after_leader_step(kafka_state(s.controller, s.brokers, s.channels, g), b)
            out.append((broker_step("Produce", b), s))

    @memoised
    def _produced(self, br: BrokerPartition, b: int,
                  rid: int) -> tuple[BrokerPartition, int] | None:
        """Leader ``b`` holding ``br`` after it appended record ``rid``, and the record's
        offset; ``None`` when the append fails (``_a_produce``; memoised)."""
        p = self.broker_partition(br, b)
        if br.pending_isr & ~br.in_sync_replica_ids:
            # A pending joiner: appendRecordsToLeader checks min.insync.replicas against
            # the committed ISR (isrState.isr), the HW counts the maximal one.
            committed = replace(p, isr=frozenset(members(br.in_sync_replica_ids)))
            check = append_records_to_leader(committed, (rid,), self.acks, self.cfg.min_isr,
                                             now_ms=self.sat, hw_lag_ms=self.hw_lag).unwrap()
            if check.error is not Errors.NONE:
                return None
        res = append_records_to_leader(
            p, (rid,), self.acks, self.cfg.min_isr, now_ms=self.sat, hw_lag_ms=self.hw_lag,
        ).unwrap()
        if res.error is not Errors.NONE:
            return None
        return self._with_partition(br, res.partition), res.first_offset

    def _a_tick(self, state: State, out: Out) -> None:
        """``Tick``: the logical clock advances; every follower of every leader ages by one
        tick (saturating just past ``lag_ticks``, which is all ``maybe_shrink_isr`` can tell)."""
        brokers = state.brokers
        aged: list[BrokerPartition] | None = None
        for b, br in enumerate(brokers):
            if br.leader != b or not br.alive:
                continue
            older = self._ticked(br, b)
            if older is not None:
                if aged is None:
                    aged = list(brokers)
                aged[b] = older
        if aged is not None:
            out.append((TICK, kafka_state(state.controller, tuple(aged), state.channels,
                                           state.ghost)))

    def _ticked(self, br: BrokerPartition, b: int) -> BrokerPartition | None:
        """``_ticked_computed``, cached (``memo.IdCache``)."""
        small = b
        cache = self._cache_ticked
        found = cache.find(br, small)
        if found is MISSING:
            found = cache.keep(br, small, self._ticked_computed(br, b))
        return cast(BrokerPartition | None, found)

    def _ticked_computed(self, br: BrokerPartition, b: int) -> BrokerPartition | None:
        """Leader ``b`` holding ``br`` one tick later, ``None`` when none of its followers
        ages (``_a_tick``; memoised)."""
        rem = tuple(self._aged(r, self.sat, self.previous_fetch) if i != b else r
                    for i, r in enumerate(br.remotes))
        return with_fields(br, remotes=rem) if rem != br.remotes else None

    @staticmethod
    def _aged(r: RemoteReplicaView, sat: int, previous_fetch: bool) -> RemoteReplicaView:
        """A remote one tick older: its caught-up age and (kafka_4485) its previous fetch's."""
        age = r.age + 1 if r.age < sat else r.age
        if not previous_fetch:
            return RemoteReplicaView(r.log_end_offset, age)
        lf_age = r.last_fetch_age + 1 if r.last_fetch_age < sat else sat
        return RemoteReplicaView(r.log_end_offset, age,
                                 r.last_fetch_leader_leo if lf_age < sat else 0, lf_age)

    def _a_shrink_isr(self, state: State, out: Out) -> None:
        """``ShrinkIsr(b)``: leader ``b``'s ``isr-expiration`` task (``maybe_shrink_isr``):
        ISR followers not caught up for more than ``lag_ticks`` (with ``kafka_7152``, 2.1+,
        and not at the leader's LEO) leave the ISR, written to ZooKeeper if the leader's
        epoch is current (else nothing happens).  With ``isr_changes=alter-partition`` the
        leader proposes the shrink instead (``_propose_shrink``)."""
        for b in range(self.n):
            if self.alter:
                if self._is_acting_leader(state, b):
                    self._propose_shrink(state, b, out)
                continue
            if (not self._is_acting_leader(state, b)
                    or state.brokers[b].leader_epoch != state.controller.leader_epoch):
                continue
            shrunk = self._shrunk(state.brokers[b], b)
            if shrunk is None:
                continue
            newbr, p = shrunk
            s = self._set_broker(state, b, newbr)
            s = self._after_leader_step(self._write_isr(s, b, p), b)
            out.append((broker_step("ShrinkIsr", b), s))

    @memoised
    def _shrunk(self, br: BrokerPartition, b: int) -> tuple[BrokerPartition, Partition] | None:
        """Leader ``b`` holding ``br`` after ``maybe_shrink_isr`` (its tuple and its
        ``Partition``), ``None`` when the ISR stays (memoised)."""
        update = maybe_shrink_isr(
            self.broker_partition(br, b), self.sat, self.cfg.lag_ticks, self.cfg.kafka_4485,
            self.cfg.kafka_7152,
        ).unwrap()
        if not update.isr_changed:
            return None
        return self._with_partition(br, update.partition), update.partition

