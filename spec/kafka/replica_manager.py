"""The broker's ``ReplicaManager`` side of controller requests: LeaderAndIsr and UpdateMetadata.

``become_leader_or_follower`` (``isrlab.core.replica_manager``: controller- and
leader-epoch fencing, ``makeLeader`` / ``makeFollowers`` with the configured truncation
rule) for LeaderAndIsr, ``MetadataCache.updateMetadata`` for UpdateMetadata.  With
``unavailable_leader=fetcher`` a follower whose new leader is down waits in ``Truncating``
(the fetcher, ``isrlab.spec.kafka.fetcher``, truncates once the leader answers);
``unavailable_leader`` says what a follower told to follow a down leader does (truncate at
once, the shortcut ``follow``; wait for it, ``fetcher``; only create the log,
``create-log``; not even that, ``skip``).
"""

from __future__ import annotations

from dataclasses import replace
from typing import cast

from isrlab.core.metadata_cache import (
    MetadataSnapshot,
    UpdateMetadataPartitionState,
    UpdateMetadataRequest,
    update_metadata,
)
from isrlab.core.replica_manager import (
    LeaderAndIsrRequest,
    ReplicaManager,
    become_leader_or_follower,
)
from isrlab.core.state import Partition, PartitionState, TopicPartition
from isrlab.core.truncation import Log
from isrlab.spec.kafka.config import NO_FETCH, TP, KafkaConfig, State
from isrlab.spec.kafka.ghost import GhostHistory
from isrlab.spec.kafka.memo import MISSING, IdCache3
from isrlab.spec.kafka.params import UnavailableLeader
from isrlab.spec.kafka.partition import _snapshot
from isrlab.spec.kafka.state import (
    F_EPOCH_REGRESSED,
    F_TRUNCATED,
    NONE,
    UPDATE_METADATA,
    BrokerPartition,
    MetadataView,
    Request,
    mask_of,
    members,
    with_fields,
)


class ReplicaManagerSteps(GhostHistory):
    """How a broker handles one controller request (``handle``), as ``ReplicaManager`` does."""

    def __init__(self, config: KafkaConfig) -> None:
        super().__init__(config)
        self._cache_leader_and_isr = IdCache3(self._interner)
        """``_leader_and_isr``'s cache."""

    def _handle(self, state: State, m: Request) -> State | None:
        if m.kind == UPDATE_METADATA:
            return self._handle_update_metadata(state, m)
        return self._handle_leader_and_isr(state, m)

    def _metadata_alive(self, state: State, b: int) -> int:
        """The brokers ``b``'s ``MetadataCache`` lists as alive (``makeFollowers`` becomes a
        follower only of a leader listed there).  With ``metadata`` the modelled cache;
        without, every broker: the controller names only a leader it believes alive, and
        the UpdateMetadata telling ``b`` of that leader's later death is queued behind the
        LeaderAndIsr on the same channel, so ``b`` handles the LeaderAndIsr first.  (A new
        controller resending a partition whose leader is dead is the exception; it is not
        modelled.)  With ``unavailable_leader=create-log`` and no modelled cache, the
        brokers alive now: ``makeFollowers`` (0.8.2+, KAFKA-1647; KRaft's
        ``applyLocalFollowersDelta``) then only creates the log of a partition whose leader
        is down (``isrlab.core.replica_manager``), where the default lets the follower truncate
        at once against the down leader's log, which Kafka's fetcher could not reach."""
        meta = state.brokers[b].metadata_cache
        if isinstance(meta, MetadataView):
            return meta.alive_brokers
        if self.cfg.unavailable_leader == UnavailableLeader.CREATE_LOG:
            return self._alive_mask(state)
        return self.all_mask

    def _request_alive(self, state: State, m: Request) -> int:
        """The brokers ``makeFollowers`` takes for alive: ``_metadata_alive``, except with
        ``unavailable_leader=skip`` (0.8.x), where the request's own ``leaders`` field
        says, as of its sending, whether the leader it names is alive."""
        if not self.skip or isinstance(state.brokers[m.dest].metadata_cache, MetadataView):
            return self._metadata_alive(state, m.dest)
        return self.all_mask if m.leader_alive else self.all_mask & ~(1 << m.leader)

    def _handle_leader_and_isr(self, state: State, m: Request) -> State | None:
        """``become_leader_or_follower`` for one LeaderAndIsr request; ``None`` when the step
        is not enabled.

        With KIP-320's fencing (``fetch_fencing=final``) a live leader answers the
        follower's ``OffsetsForLeaderEpoch`` only in the request's epoch.  A request the
        broker ignores (its controller epoch or leader epoch is not newer than the broker's:
        ``becomeLeaderOrFollower`` answers STALE_CONTROLLER_EPOCH) is handled at once and
        changes nothing.  With the fetcher's pending truncation (``unavailable_leader=
        fetcher``) a follower whose leader is not yet (or no longer) in the request's epoch
        becomes its follower at once and leaves the truncation to its fetcher (``Truncate(f)``
        once the leader is in that epoch), as Kafka's ``makeFollowers`` does: the fetcher,
        not the request, waits (``AbstractFetcherThread.maybeTruncateToEpochEndOffsets``
        retries on an error; FENCED_LEADER_EPOCH marks the partition failed until the next
        LeaderAndIsr).  Shortcut, without the fetcher's pending truncation (the modes
        that truncate in the request's step): the request waits until the leader is in its
        epoch."""
        dest, _, cepoch, leader, epoch, *_ = m
        br = state.brokers[dest]
        if leader == NONE:
            return None
        lb = state.brokers[leader]
        ready = not (self.fenced and leader != dest and lb.alive
                     and (lb.leader_epoch != epoch or lb.leader != leader))
        ignored = cepoch < br.controller_epoch or epoch <= br.leader_epoch
        if not (ready or ignored or self.deferred_truncation):
            return None
        p = self.partition(state, dest)
        newbr, newp = self._leader_and_isr(m, br, bool(lb.alive), lb.log,
                                           self._request_alive(state, m), ready)
        s = self._set_broker(state, dest, newbr)
        if len(newp.log) < len(p.log):
            s = self._flag(s, F_TRUNCATED)
        if 0 <= newp.leader_epoch < p.leader_epoch:
            s = self._flag(s, F_EPOCH_REGRESSED)
        if newp.leader == dest and newp.leader_epoch != p.leader_epoch:
            s = self._note_epoch_leader(s, newp.leader_epoch, dest)
        if p.leader == dest and newp.leader != dest:
            s = self._drop_pending(s, dest)
        if newp.leader == dest:
            s = self._after_leader_step(s, dest)
        return s

    def _leader_and_isr(self, m: Request, br: BrokerPartition, leader_alive: bool,
                        leader_codes: tuple[int, ...], alive: int, leader_ready: bool
                        ) -> tuple[BrokerPartition, Partition]:
        """``_leader_and_isr_computed``, cached (``memo.IdCache3`` on ``m``, ``br`` and the
        leader's log)."""
        small = alive << 2 | int(leader_ready) << 1 | int(leader_alive)
        cache = self._cache_leader_and_isr
        found = cache.find(m, br, leader_codes, small)
        if found is MISSING:
            found = cache.keep(m, br, leader_codes, small, self._leader_and_isr_computed(
                m, br, leader_alive, leader_codes, alive, leader_ready))
        return cast(tuple[BrokerPartition, Partition], found)

    def _leader_and_isr_computed(self, m: Request, br: BrokerPartition, leader_alive: bool,
                                 leader_codes: tuple[int, ...], alive: int,
                                 leader_ready: bool = True
                                 ) -> tuple[BrokerPartition, Partition]:
        """Broker ``m.dest``'s side of LeaderAndIsr ``m``: its new ``BrokerPartition`` and
        ``Partition`` (``become_leader_or_follower``), from its tuple ``br``, whether the
        named leader is alive, the leader's log, the brokers ``makeFollowers`` takes for
        alive and whether the leader would answer ``OffsetsForLeaderEpoch`` now
        (``leader_ready``: in the request's epoch, KIP-320; memoised: these repeat across
        states)."""
        dest, _, cepoch, leader, epoch, isr, *_ = m
        p = self.broker_partition(br, dest)
        manager = ReplicaManager(dest, br.controller_epoch, (p,))
        ps = PartitionState(cepoch, leader, epoch, members(isr), 0, tuple(range(self.n)))
        request = LeaderAndIsrRequest(0, cepoch, ((TP, ps),))
        leader_log = self.log_records(leader_codes)

        def leader_logs(tp: TopicPartition, lid: int) -> Log:
            return leader_log

        result = become_leader_or_follower(
            manager, request, _snapshot(alive), self.sat,
            self.follow_rule, leader_logs, hw_lag_ms=self.hw_lag,
            reset_on_epoch=self.reset_on_epoch,
        ).unwrap()
        mgr = result.manager
        newp = mgr.partitions[0]
        newp = replace(newp, controller_epoch=mgr.controller_epoch)
        truncating = 0
        if (self.deferred_truncation and newp.leader == leader != dest
                and newp.leader != p.leader and not (leader_alive and leader_ready)):
            # The fetcher starts Truncating; a down leader, or one not in the request's
            # epoch (KIP-320), does not answer OffsetsForLeaderEpoch, so the log stays as
            # it was for now.
            newp = replace(newp, log=p.log, high_watermark=p.high_watermark)
            truncating = 1
        elif newp.leader == p.leader:
            # same leader (or the request ignored): the fetcher goes on as it was
            truncating = br.truncating
        newbr = with_fields(self._with_partition(br, newp), truncating=truncating)
        # (_with_partition leaves awaiting_first_leader_and_isr at 0: the HW checkpoint
        # thread starts with the first LeaderAndIsr, hwThreadInitialized)
        if newbr.fetch_in_flight and (newp.leader != p.leader
                                      or newp.leader_epoch != p.leader_epoch):
            # the fetcher restarts: the response in flight is dropped
            newbr = with_fields(newbr, fetch_in_flight=NO_FETCH)
        return newbr, newp

    def _handle_update_metadata(self, state: State, m: Request) -> State | None:
        """``MetadataCache.updateMetadata`` with the request's partition state and the
        brokers alive at delivery (the controller's view is exact: see the module doc)."""
        dest, _, cepoch, leader, epoch, isr, ar, *_ = m
        br = state.brokers[dest]
        alive = self._alive_mask(state)
        ps = UpdateMetadataPartitionState(cepoch, leader, epoch, members(isr), 0, ar)
        request = UpdateMetadataRequest(
            0, cepoch, ((TP, ps),), _snapshot(alive).alive_brokers
        )
        result = update_metadata(MetadataSnapshot(), request, dest).unwrap()
        info = result.snapshot.partition_states[0][1]
        meta = MetadataView(alive, info.leader, info.leader_epoch, mask_of(info.isr))
        if meta == br.metadata_cache:
            return None
        return self._set_broker(state, dest, with_fields(br, metadata_cache=meta))

