"""A broker's lifecycle: crash, power loss, flush, HW checkpoint, controlled shutdown, restart.

A crashed broker forgets its in-memory state (partition state, remotes, fetchers,
metadata); its log survives whole (``Crash``, a clean shutdown) or up to the last
``Flush`` (``PowerLoss``, with ``crashes=unclean``); its HW comes back from the
checkpoint file (``hw_checkpoint``, ``hw_checkpoint_file``) or unchanged.  Requests in
flight to a broker that crashes are dropped with its connection; a restarted broker
receives the current state, as the controller's ``onBrokerStartup`` sends it.
"""

from __future__ import annotations

from typing import cast

from returns.result import Failure

from isrlab.core.log_recovery import (
    CrashLoss,
    DurableLog,
    HwCheckpointFile,
    checkpoint_at_shutdown,
    checkpoints_after_power_loss,
    initial_high_watermark,
    read_high_watermark_checkpoint,
    surviving_lengths,
)
from isrlab.core.selectors import controlled_shutdown_leader_selector
from isrlab.spec.kafka.alter_partition import AlterPartitionManager
from isrlab.spec.kafka.config import NO_FETCH, TP, KafkaConfig, Out, State
from isrlab.spec.kafka.labels import broker_step, power_loss
from isrlab.spec.kafka.memo import MISSING, IdCache
from isrlab.spec.kafka.state import (
    F_CHECKPOINT_LOST,
    LEADER_AND_ISR,
    NONE,
    BrokerPartition,
    Ghost,
    MetadataView,
    Request,
    built,
    kafka_state,
    members,
    with_fields,
)


class BrokerLifecycle(AlterPartitionManager):
    """Broker crashes and restarts, log flushes and the HW checkpoint thread."""

    def __init__(self, config: KafkaConfig) -> None:
        super().__init__(config)
        self._cache_ghost_down = IdCache(self._interner)
        """``_ghost_down``'s cache."""
        self._cache_up = IdCache(self._interner)
        """``_up``'s cache."""

    def _hw_file(self) -> HwCheckpointFile | None:
        """The ``hw_checkpoint_file`` behaviour, ``None`` without ``hw_checkpoint``."""
        if not self.cfg.hw_checkpoint:
            return None
        return HwCheckpointFile(self.cfg.hw_checkpoint_file)

    def _checkpoint_written(self, br: BrokerPartition) -> tuple[int | None, bool]:
        """What ``checkpointHighWatermarks`` writes to ``br``'s file for the partition now,
        and whether that loses a log's HW: ``None`` while no partition of the dir is hosted
        (``unavailable_leader=skip`` from a restart to the first LeaderAndIsr: the file is
        not written); the HW when the partition has a local replica; else the partition is
        left out (0.8.0-0.8.1: no replica for a partition whose leader was down, KAFKA-1647;
        the dir's other partitions are taken to be hosted, so the file is rewritten)."""
        if br.awaiting_first_leader_and_isr:
            return None, False
        if not self.skip or br.leader_epoch != NONE:
            return br.high_watermark, False
        return read_high_watermark_checkpoint((), TP), bool(br.log)

    def _crashed(self, state: State, b: int, unclean: bool, keep: int | None = None,
                 empty_hw_file: bool = False) -> State:
        """Broker ``b`` down: in-memory state lost; with ``unclean`` the unflushed tail too
        (all of it, or all but the first ``keep - flushed`` records of it).

        The HW it will have once hosted again is computed now, from the checkpoint file as
        the restart finds it (nothing writes the file while the partition is not hosted):
        after a clean shutdown (``unclean`` false) the file ``ReplicaManager.shutdown``
        wrote, holding the final HW (every release; ``hw_checkpoint_file=periodic``: the
        thread's last write); after a power loss the thread's last write, or, with
        ``empty_hw_file`` (``hw_checkpoint_file=no-fsync``), an empty file; capped at the
        recovered LEO (``initial_high_watermark``).  Shortcut: the stored file value is
        capped at the recovered LEO too (Kafka caps at each read; the two differ only when
        a second crash follows a power loss that cut the log below the checkpoint before
        the thread rewrote it)."""
        new, lost = self._down(state.brokers[b], unclean, keep, empty_hw_file)
        if not self.split:
            # one successor built from cached components (no fetch response in flight)
            brokers = state.brokers
            return kafka_state(state.controller, (*brokers[:b], new, *brokers[b + 1:]),
                               self._without_dest(state.channels, b),
                               self._ghost_down(state.ghost, b, lost))
        s = self._set_broker(state, b, new)
        if lost:
            s = self._flag(s, F_CHECKPOINT_LOST)
        if self.split:
            # Fetch responses b had not sent yet die with its connections.
            for f, fb in enumerate(s.brokers):
                if fb.fetch_in_flight and fb.fetch_in_flight.leader == b:
                    s = self._set_broker(s, f, with_fields(fb, fetch_in_flight=NO_FETCH))
        # The controller's channel to b dies with b: requests in flight to it are dropped.
        msgs = self._without_dest(s.channels, b)
        return self._drop_pending(kafka_state(s.controller, s.brokers, msgs, s.ghost), b)

    def _ghost_down(self, ghost: Ghost, b: int, lost: bool) -> Ghost:
        """``_ghost_down_computed``, cached (``memo.IdCache``)."""
        small = b | int(lost) << 3
        cache = self._cache_ghost_down
        found = cache.find(ghost, small)
        if found is MISSING:
            found = cache.keep(ghost, small, self._ghost_down_computed(ghost, b, lost))
        return cast(Ghost, found)

    def _ghost_down_computed(self, ghost: Ghost, b: int, lost: bool) -> Ghost:
        """The ghost once ``b`` is down (``_crashed``): flagged ``F_CHECKPOINT_LOST`` when
        its shutdown lost a checkpoint (``lost``), and ``b``'s waiting acks=all requests
        failed (``_drop_pending``)."""
        if lost and not ghost.flags & F_CHECKPOINT_LOST:
            ghost = with_fields(ghost, flags=ghost.flags | F_CHECKPOINT_LOST)
        if ghost.pending:
            pending = tuple([x for x in ghost.pending if x[1] != b])  # (record id, broker)
            if pending != ghost.pending:
                ghost = with_fields(ghost, pending=pending)
        return ghost

    def _down(self, br: BrokerPartition, unclean: bool, keep: int | None,
              empty_hw_file: bool) -> tuple[BrokerPartition, bool]:
        """``_down_computed``, cached (``memo.IdCache``)."""
        small = int(unclean) | int(empty_hw_file) << 1 | (0 if keep is None else keep + 1) << 2
        cache = self._cache_down
        found = cache.find(br, small)
        if found is MISSING:
            found = cache.keep(br, small, self._down_computed(br, unclean, keep, empty_hw_file))
        return cast(tuple[BrokerPartition, bool], found)

    def _down_computed(self, br: BrokerPartition, unclean: bool, keep: int | None,
              empty_hw_file: bool) -> tuple[BrokerPartition, bool]:
        """A broker holding ``br`` once down (``_crashed``'s arguments), and whether its
        shutdown wrote a checkpoint file losing the partition's HW (memoised)."""
        log = br.log[:br.flushed if keep is None else keep] if unclean else br.log
        behaviour = self._hw_file()
        lost = False
        if behaviour is None or behaviour is HwCheckpointFile.PERIODIC:
            hw = br.hw_checkpoint if self.cfg.hw_checkpoint else br.high_watermark
            hw = min(hw, len(log))
            ckpt = min(br.hw_checkpoint, len(log)) if self.cfg.hw_checkpoint else 0
        else:
            previous = ((TP, br.hw_checkpoint),) if br.hw_checkpoint else ()
            if unclean:
                files = checkpoints_after_power_loss(previous, behaviour)
                found = files[-1] if empty_hw_file else files[0]
            else:
                value, lost = self._checkpoint_written(br)
                found = checkpoint_at_shutdown(
                    previous, None if value is None else ((TP, value),), behaviour)
                lost = lost and br.hw_checkpoint != 0
            hw = initial_high_watermark(read_high_watermark_checkpoint(found, TP), 0, len(log))
            ckpt = hw
        meta: MetadataView | tuple[()] = (
            MetadataView(0, NONE, NONE, 0) if self.cfg.metadata else ()
        )
        flushed = len(log) if self.power_loss else 0
        new = built(BrokerPartition, 0, log, hw, ckpt, flushed, NONE, NONE, 0, 0, (), meta,
                    NO_FETCH,
                    int(unclean and self.cfg.elr))
        return new, lost

    def _a_crash(self, state: State, out: Out) -> None:
        """``Crash(b)`` (and ``PowerLoss(b)`` with ``crashes=unclean``: the unflushed tail of
        the log is lost; with ``crash_loss=tail`` ``PowerLoss(b,k)``: a power loss leaving
        the first ``k`` records, any ``k`` from the flushed prefix to the LEO, which is still
        an unclean shutdown to Kafka).  ``Crash(b)`` is a clean shutdown: it keeps the whole
        log (``LogManager.shutdown`` flushes) and, with ``hw_checkpoint``, writes the HW
        checkpoint (``ReplicaManager.shutdown(checkpointHW = true)``; not with
        ``hw_checkpoint_file=periodic``).  With ``hw_checkpoint_file=no-fsync`` (before 0.8.2)
        every power loss also comes as ``PowerLoss(b,empty-hw-file)`` /
        ``PowerLoss(b,k,empty-hw-file)``: the checkpoint file is found empty.  When the
        shutdown writes the file, a power loss of a fully flushed log is a step too if it
        leaves another HW than ``Crash(b)``."""
        behaviour = self._hw_file()
        writes = behaviour is not None and behaviour is not HwCheckpointFile.PERIODIC
        for b in range(self.n):
            br = state.brokers[b]
            if not br.alive:
                continue
            clean = self._crashed(state, b, False)
            out.append((broker_step("Crash", b), clean))
            if not self.power_loss:
                continue
            all_flushed = br.flushed >= len(br.log)
            if all_flushed and not writes:
                continue
            keeps: tuple[int | None, ...] = (None,)
            if self.cfg.crash_loss != CrashLoss.ALL_UNFLUSHED.value:
                # crash_loss=tail: the OS wrote an unknown part of the tail (LogLoader.load
                # recovers the surviving prefix: isrlab.core.log_recovery)
                durable = DurableLog(self.log_records(br.log), br.flushed)
                keeps = surviving_lengths(durable, False, CrashLoss.TAIL)
            files = 1
            if behaviour is not None and writes:
                last = ((TP, br.hw_checkpoint),) if br.hw_checkpoint else ()
                files = len(checkpoints_after_power_loss(last, behaviour))
            kept = clean.brokers[b]
            for keep in keeps:
                for empty in (False, True)[:files]:
                    s = self._crashed(state, b, True, keep, empty)
                    down = s.brokers[b]
                    if all_flushed and (down.high_watermark, down.hw_checkpoint) == (
                            kept.high_watermark, kept.hw_checkpoint):
                        continue  # the same restart as Crash(b)
                    out.append((power_loss(b, keep, empty), s))

    def _a_controlled_shutdown(self, state: State, out: Out) -> None:
        """``ControlledShutdown(b)``: ``ControlledShutdownLeaderSelector`` moves leadership
        and ISR membership off ``b`` (new epoch), then ``b`` stops cleanly."""
        ctrl = state.controller
        alive = frozenset(members(self._alive_mask(state)))
        for b in range(self.n):
            if not state.brokers[b].alive or b not in members(ctrl.isr):
                continue
            selection = controlled_shutdown_leader_selector(
                self._current(state), ctrl.assigned_replicas, alive, frozenset((b,))
            )
            if isinstance(selection, Failure):
                continue
            election = selection.unwrap()
            receivers = [r for r in election.receivers if r != b]
            s = self._write_zk(state, election.leader_and_isr, receivers)
            if s is not None:
                out.append((broker_step("ControlledShutdown", b), self._crashed(s, b, False)))

    def _a_restart(self, state: State, out: Out) -> None:
        """``Restart(b)``: ``b`` comes back; the controller (``onBrokerStartup``) sends it the
        ZooKeeper state.  When ``b`` is still ZooKeeper's leader, the controller first
        handles the pending failure event (``OfflinePartitionLeaderSelector`` without
        ``b``), and only if that fails elects again with ``b`` alive (its event queue keeps
        the failure before the startup); if neither can elect, nothing is sent.  The broker
        comes back with the log and the HW-to-be ``_crashed`` computed (the checkpoint file
        as the restart finds it, capped at the recovered LEO: what ``getOrCreateReplica`` /
        ``createLog`` read at the first LeaderAndIsr, the file being unchanged until then)."""
        ctrl = state.controller
        for b in range(self.n):
            br = state.brokers[b]
            if br.alive:
                continue
            alive = self._alive_mask(state) | 1 << b if self.cfg.metadata else 0
            s = self._set_broker(state, b, self._up(br, alive))
            if ctrl.leader == b:
                # The partition is offline (its last leader was b): elect, or, when no
                # election is possible (within max_leader_epoch), leave it offline; b must
                # never resume leading its old epoch.
                elected = self._restart_election(state, s, bool(br.unclean_shutdown))
                if elected is None and self.cfg.elr:
                    continue  # KRaft's change past max_leader_epoch: not in the bounds
                out.append((broker_step("Restart", b), s if elected is None else elected))
                continue
            if br.unclean_shutdown:
                after = self._unclean_shutdown(s, b)
                if after is None:
                    continue  # the ISR change would pass max_leader_epoch
                s = after
            c = s.controller
            if c.leader == NONE:
                # KIP-966: an offline partition; ElectLeader runs next (handleBrokerUnfenced)
                out.append((broker_step("Restart", b), s))
                continue
            msg = built(Request, b, LEADER_AND_ISR, c.controller_epoch, c.leader, c.leader_epoch,
                        c.isr, c.assigned_replicas)
            msgs = self._enqueue(s, [msg])
            out.append((broker_step("Restart", b),
                        kafka_state(s.controller, s.brokers, msgs, s.ghost)))

    def _up(self, br: BrokerPartition, alive: int) -> BrokerPartition:
        """``_up_computed``, cached (``memo.IdCache``)."""
        cache = self._cache_up
        found = cache.find(br, alive)
        if found is MISSING:
            found = cache.keep(br, alive, self._up_computed(br, alive))
        return cast(BrokerPartition, found)

    def _up_computed(self, br: BrokerPartition, alive: int) -> BrokerPartition:
        """Broker tuple ``br`` of a down broker once it runs again (``_a_restart``): its
        log and HW-to-be kept, its metadata cache listing the brokers of ``alive`` (with
        ``metadata``), no fetch in flight, and with ``unavailable_leader=skip`` no HW
        checkpoint thread until its first LeaderAndIsr."""
        meta = MetadataView(alive, NONE, NONE, 0) if self.cfg.metadata else ()
        return built(BrokerPartition, 1, br.log, br.high_watermark, br.hw_checkpoint,
                     br.flushed, br.leader_epoch, br.leader, br.controller_epoch,
                     br.in_sync_replica_ids, br.remotes, meta, NO_FETCH,
                     awaiting_first_leader_and_isr=int(self.skip))

    def _a_flush(self, state: State, out: Out) -> None:
        """``Flush(b)``: the log is fsynced (only with ``crashes=unclean``)."""
        for b in range(self.n):
            br = state.brokers[b]
            if br.alive and br.flushed < len(br.log):
                out.append((broker_step("Flush", b),
                            self._set_broker(state, b, with_fields(br, flushed=len(br.log)))))

    def _a_checkpoint(self, state: State, out: Out) -> None:
        """``CheckpointHw(b)``: the HW checkpoint thread writes ``b``'s HW to disk.

        With ``unavailable_leader=skip`` (before 0.8.2) the thread starts only with the
        broker's first LeaderAndIsr after a restart (``hwThreadInitialized``) and writes
        only partitions with a local replica (``ReplicaManager.checkpointHighWatermarks``):
        a restarted broker whose first LeaderAndIsr named a down leader never created the
        replica, so the file loses the partition, whose HW reads back as 0
        (``isrlab.core.log_recovery.read_high_watermark_checkpoint``): KAFKA-1647, flagged.
        Unless ``hw_checkpoint_file=periodic`` the broker's HW-to-be follows: the
        ``getOrCreateReplica`` of a later LeaderAndIsr reads that 0 (and truncates to it)."""
        follows = self._hw_file() is not HwCheckpointFile.PERIODIC
        for b in range(self.n):
            br = state.brokers[b]
            hw, lost = self._checkpoint_written(br)
            if not br.alive or hw is None:
                continue
            if br.hw_checkpoint != hw:
                new = with_fields(br, hw_checkpoint=hw)
                if follows and self.skip and br.leader_epoch == NONE:  # not hosted
                    new = with_fields(new, high_watermark=initial_high_watermark(
                        hw, 0, len(br.log)))
                s = self._set_broker(state, b, new)
                if lost:
                    s = self._flag(s, F_CHECKPOINT_LOST)
                out.append((broker_step("CheckpointHw", b), s))

