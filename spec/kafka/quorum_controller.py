"""The ``kafka`` model in KRaft mode (``controller=kraft``): the active ``QuorumController``.

The controller never talks to a broker's ``Partition``: every decision is a batch of
records appended to the ``__cluster_metadata`` log (``QuorumController`` commits the records
of one operation as one batch), which each broker replays at its own pace
(``isrlab.spec.kafka.metadata_loader``).  There is no controller epoch and no controller
channel.  The controller's steps, each ``ReplicationControlManager`` /
``ClusterControlManager`` code computing the records with ``isrlab.core`` functions:

* ``FenceBroker(b)``: ``BrokerHeartbeatManager`` finds ``b``'s session expired (no heartbeat
  for ``broker.session.timeout.ms``: ``b`` is down, or with the ``heartbeat_loss`` fault
  cut off) and ``QuorumController.maybeFenceOneStaleBroker`` calls
  ``ReplicationControlManager.handleBrokerFenced``: ``b`` leaves every ISR, a new leader
  is elected where it led (``generate_leader_and_isr_update`` with ``broker_to_remove``,
  ``PartitionChangeBuilder``), then the fence record;
* ``RegisterBroker(b)``, the restart of a down broker: ``BrokerLifecycleManager`` sends
  ``BrokerRegistrationRequest`` (a new incarnation; the previous broker epoch from the
  clean-shutdown file, -1 after a power loss or with an empty disk) and
  ``ClusterControlManager.registerBroker`` (``register_broker``) writes a
  ``RegisterBrokerRecord`` with a new, larger broker epoch, the broker fenced; with
  ``elr`` and ``unclean_detection`` KIP-966's unclean-shutdown detection first removes it
  from the ISR and the ELR (``handleBrokerUncleanShutdown``).  Then the broker catches up
  with the metadata log and publishes its first image (``initialCatchUpFuture``), as one
  delta from an empty image;
* ``UnfenceBroker(b)``: ``b``'s heartbeat reports a metadata offset at or past its own
  registration record (``BrokerHeartbeatManager.calculateNextBrokerState``): the unfence
  record, then ``handleBrokerUnfenced`` elects a leader for a leaderless partition;
* ``AlterPartition(b)``: ``ReplicationControlManager.alterPartition``
  (``isrlab.core.kraft_alter_partition``): the sender's broker epoch, the leader epoch
  (FENCED_LEADER_EPOCH), the partition epoch (INVALID_UPDATE_VERSION), KIP-841's and
  KIP-903's eligibility (INELIGIBLE_REPLICA), and NEW_LEADER_ELECTED when the change
  elects another leader; an accepted ISR bumps the partition epoch and, with
  ``kraft_epoch_bump=isr-shrink`` (3.0-3.5), a shrink bumps the leader epoch too.

Bounds: a batch is written only while every live broker lags fewer than
``max_metadata_lag`` batches, and no record takes the leader epoch past
``max_leader_epoch`` (the step is then not taken).  Shortcuts: a batch is committed when
written (Kafka's active controller applies its records before they commit, but answers and
brokers see only committed ones, and a failover drops the rest: ``ControllerOperations``'
``ControllerFailover`` models what remains observable, docs/kafka-model.md "Controller
failover"); a new incarnation may register only once the old one's session expired and it
was fenced (a registration with a live session is refused,
``DuplicateBrokerRegistrationException``, and retried until then); without
``controlled_shutdown`` ``Crash`` is the only stop (a clean one without controlled
shutdown); the unclean election of ``unclean_election`` happens where
``PartitionChangeBuilder`` runs with ``Election.UNCLEAN`` (fencing, unfencing).

``ControllerOperations`` (``controlled_shutdown``, ``preferred_election``,
``controller_failover``): a running broker's heartbeat asking to shut down
(``ControlledShutdown(b)``: ``handleBrokerInControlledShutdown``, or SHUTDOWN_NOW at once
when it leads nothing) and the one that is granted the shutdown (``ShutdownNow(b)``, once
every active broker published the batch), ``ElectLeaders`` with PREFERRED
(``PreferredElection``), and the active controller's resignation (``ControllerFailover``).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, cast

from isrlab.core.broker_heartbeat import (
    BrokerControlState,
    BrokerHeartbeatRequest,
    BrokerHeartbeatState,
    BrokerRegistrationRequest,
    UncleanDetection,
    calculate_next_broker_state,
    register_broker,
)
from isrlab.core.elr import LeaderRecoveryState, PartitionRegistration
from isrlab.core.errors import Errors
from isrlab.core.kraft_alter_partition import (
    AlterPartitionConfig,
    BrokerState,
    KRaftAlterPartitionRequest,
    alter_partition,
)
from isrlab.core.kraft_metadata import (
    NO_LEADER_CHANGE,
    BrokerRegistrationChangeRecord,
    MetadataRecord,
    PartitionChangeRecord,
    active_brokers,
    broker,
)
from isrlab.core.partition_change_builder import (
    BuilderConfig,
    ChangeResult,
    Election,
    LastKnownLeaderCheck,
    LeaderEpochBump,
    generate_leader_and_isr_update,
)
from isrlab.core.replication_control import ElectionType, elect_leader, heartbeat_records
from isrlab.core.state import NO_LEADER
from isrlab.spec.kafka.broker_lifecycle import BrokerLifecycleManager
from isrlab.spec.kafka.config import Out, State
from isrlab.spec.kafka.kraft_state import (
    CHG,
    FENCED,
    REG,
    TP,
    Batch,
    Image,
    KRaftState,
    Record,
    broker_record_of,
    core_image,
    kraft_state,
    next_broker_epoch,
    put,
    record_of,
)
from isrlab.spec.kafka.labels import CONTROLLER_FAILOVER, PREFERRED_ELECTION, broker_step
from isrlab.spec.kafka.memo import MISSING, memoised
from isrlab.spec.kafka.state import (
    ALTER_ACCEPTED,
    ALTER_FENCED,
    ALTER_INELIGIBLE,
    ALTER_NEW_EPOCH,
    ALTER_NONE,
    ALTER_SENT,
    F_UNCLEAN,
    NONE,
    BrokerPartition,
    ZkPartitionState,
    kafka_state,
    members,
    with_fields,
)

ControllerSteps = tuple[tuple[int, ZkPartitionState, bool], ...]
"""A controller step per broker: the broker, the new controller tuple, whether the step
elects a leader uncleanly."""

DETECTIONS = {"none": UncleanDetection.NONE, "previous-epoch": UncleanDetection.PREVIOUS_EPOCH,
              "new-incarnation": UncleanDetection.NEW_INCARNATION}
"""``unclean_detection``'s values as ``isrlab.core.broker_heartbeat.UncleanDetection``."""


class QuorumController(BrokerLifecycleManager):
    """The active controller's handling of fencing, registration and AlterPartition."""

    def _builder(self) -> BuilderConfig:
        """The topic's ``PartitionChangeBuilder`` settings."""
        cfg = self.cfg
        return BuilderConfig(
            min_isr=cfg.min_isr, elr_enabled=cfg.elr,
            election=Election.UNCLEAN if cfg.unclean_election else Election.ONLINE,
            epoch_bump=(LeaderEpochBump.ON_ISR_SHRINK if cfg.kraft_epoch_bump == "isr-shrink"
                        else LeaderEpochBump.LEADER_CHANGE_ONLY),
            last_known_leader_check=LastKnownLeaderCheck(cfg.last_known_leader))

    def _write(self, state: State, batch: Batch, unclean: bool = False) -> State | None:
        """``state`` once the controller committed ``batch``; ``None`` when the bounds forbid
        it (a live broker ``max_metadata_lag`` batches behind, or a leader epoch past
        ``max_leader_epoch``)."""
        ctrl = self._written(state.controller, batch)
        if ctrl is None:
            return None
        s = kafka_state(ctrl, state.brokers, state.channels, state.ghost)
        return self._flag(s, F_UNCLEAN) if unclean else s

    def _written(self, ctrl: ZkPartitionState, batch: Batch) -> ZkPartitionState | None:
        """``_write``'s controller tuple: ``ctrl`` once the controller committed ``batch``, or
        ``None``."""
        k = cast(KRaftState, ctrl.kraft)
        if len(k.batches) >= self.cfg.max_metadata_lag:
            return None
        k = kraft_state(
            batches=(*k.batches, batch), base=k.base, applied=k.applied,
            partition_epoch=k.partition_epoch, alter_epoch=k.alter_epoch,
            fetch_epochs=k.fetch_epochs, alter_isr_epochs=k.alter_isr_epochs,
            broker_epoch=k.broker_epoch, shutdown_offset=k.shutdown_offset)
        if self._image(k, len(k.batches))[0][1] > self.cfg.max_leader_epoch:
            return None
        return self._with_part(ctrl, k)

    def _kraft_steps(self, state: State) -> object:
        """FenceBroker's, UnfenceBroker's and RegisterBroker's steps from ``state`` (those
        the configuration never takes: none), kept together per controller tuple and the
        masks of the running brokers and of those down after a power loss (one
        ``memo.IdCache`` look-up per expanded state rather than one per kind), and for the
        state answered last."""
        if state is self._steps_of:
            return self._steps
        alive = self._alive_mask(state)
        small = alive
        for b, br in enumerate(state.brokers):
            if br.unclean_shutdown:
                small |= 1 << (self.n + b)
        ctrl = state.controller
        cache = self._cache_controller_steps
        found = cache.find(ctrl, small)
        if found is MISSING:
            crashes = self.cfg.crashes != "none"
            empty: ControllerSteps = ()
            found = cache.keep(ctrl, small, (
                self._fence_steps(ctrl, alive),
                self._unfence_steps(ctrl, alive) if crashes or self.cfg.heartbeat_loss
                else empty,
                self._register_steps(ctrl, small) if crashes else ()))
        self._steps_of = state
        self._steps = found
        return found

    def _emit_steps(self, state: State, out: Out, name: str, found: object) -> None:
        """The controller's steps ``name(b)`` in ``found`` (``_kraft_steps``: each broker, a
        new controller tuple and whether it elects uncleanly) from ``state``, appended to
        ``out``."""
        raw: Any = found  # untyped: the controller tuples are the interner's objects
        for step in raw:
            s = kafka_state(step[1], state.brokers, state.channels, state.ghost)
            out.append((broker_step(name, step[0]), self._flag(s, F_UNCLEAN) if step[2] else s))

    def _change(self, state: State, remove: int = NO_LEADER, add: int = NO_LEADER,
                unclean: int = NO_LEADER) -> ChangeResult:
        """``generateLeaderAndIsrUpdates`` for the partition in the controller's image
        (``broker_to_remove``, ``broker_to_add``, ``broker_with_unclean_shutdown``)."""
        k = self._kraft(state)
        return self._change_of(self._controller_view(k), remove, add, unclean)

    @memoised
    def _change_of(self, image: Image, remove: int, add: int, unclean: int) -> ChangeResult:
        """``_change`` for the controller's plain image (memoised)."""
        core = core_image(image, self.n)
        reg = core.partitions[0][1]
        return generate_leader_and_isr_update(
            reg, TP, active_brokers(core), self._builder(), broker_to_remove=remove,
            broker_to_add=add, broker_with_unclean_shutdown=unclean).unwrap()

    @staticmethod
    def _unclean(before: PartitionRegistration, change: ChangeResult) -> bool:
        """Whether ``change`` is an unclean election: ``PartitionChangeBuilder.tryElection``
        marks one by putting the partition in KIP-704's RECOVERING state (an unclean
        leader, or KIP-966's last-known leader, which it elects without checking it)."""
        record = change.record
        return (record is not None and record.leader not in (NO_LEADER_CHANGE, NO_LEADER)
                and record.leader_recovery_state is LeaderRecoveryState.RECOVERING)

    def _a_fence(self, state: State, out: Out) -> None:
        """``FenceBroker(b)`` (see the module docstring)."""
        raw: Any = self._kraft_steps(state)
        self._emit_steps(state, out, "FenceBroker", raw[0])

    def _fence_steps(self, ctrl: ZkPartitionState, alive: int) -> ControllerSteps:
        """``_a_fence``'s steps from controller tuple ``ctrl`` with the brokers of mask
        ``alive`` running."""
        k = cast(KRaftState, ctrl.kraft)
        image = core_image(self._controller_view(k), self.n)
        reg = image.partitions[0][1]
        steps: list[tuple[int, ZkPartitionState, bool]] = []
        for b in range(self.n):
            registered = broker(image, b)
            # BrokerHeartbeatManager.findOneStaleBroker: any unfenced broker (one in
            # controlled shutdown too) whose session expired
            if registered is None or registered.fenced:
                continue
            if alive >> b & 1 and not self.cfg.heartbeat_loss:
                continue
            epoch = registered.epoch
            records: list[tuple[int, ...]] = []
            unclean = False
            if b in reg.isr:
                change = self._change_of(self._controller_view(k), b, NO_LEADER, NO_LEADER)
                if change.record is not None:
                    records.append(record_of(change.record))
                    unclean = self._unclean(reg, change)
            records.append((CHG, b, epoch, 1))
            c = self._written(ctrl, tuple(records))
            if c is not None and k.shutdown_offset and k.shutdown_offset[b] >= 0:
                # BrokerHeartbeatManager.touch(fenced): a fenced broker leaves controlled
                # shutdown (a live one, with heartbeat_loss: its next heartbeat stops it)
                c = self._with_part(c, with_fields(cast(KRaftState, c.kraft),
                    shutdown_offset=put(k.shutdown_offset, b, -1)))
            if c is not None:
                steps.append((b, c, unclean))
        return tuple(steps)

    def _a_unfence(self, state: State, out: Out) -> None:
        """``UnfenceBroker(b)`` (see the module docstring)."""
        raw: Any = self._kraft_steps(state)
        self._emit_steps(state, out, "UnfenceBroker", raw[1])

    def _unfence_steps(self, ctrl: ZkPartitionState, alive: int) -> ControllerSteps:
        """``_a_unfence``'s steps from controller tuple ``ctrl`` with the brokers of mask
        ``alive`` running."""
        k = cast(KRaftState, ctrl.kraft)
        image = core_image(self._controller_view(k), self.n)
        reg = image.partitions[0][1]
        steps: list[tuple[int, ZkPartitionState, bool]] = []
        for b in range(self.n):
            registered = broker(image, b)
            if (registered is None or not registered.fenced or not alive >> b & 1
                    or registered.epoch != k.broker_epoch[b]):
                continue
            if registered.in_controlled_shutdown:
                # this incarnation asked to shut down (BrokerLifecycleManager's heartbeats
                # carry wantShutDown from then on): calculateNextBrokerState answers a fenced
                # broker's wantShutDown with SHUTDOWN_NOW, never UNFENCED
                continue
            if self._image(k, max(0, k.applied[b]))[1][b][0] != registered.epoch:
                continue  # not caught up with its own registration record yet
            records: list[tuple[int, ...]] = [(CHG, b, registered.epoch, -1)]
            unclean = False
            if reg.leader == NO_LEADER:
                change = self._change_of(self._controller_view(k), NO_LEADER, b, NO_LEADER)
                if change.record is not None:
                    records.append(record_of(change.record))
                    unclean = self._unclean(reg, change)
            c = self._written(ctrl, tuple(records))
            if c is not None:
                steps.append((b, c, unclean))
        return tuple(steps)

    def _forgets(self, reg: PartitionRegistration, b: int) -> bool:
        """With ``last_known_leader=forget-unclean`` (a candidate fix),
        ``handleBrokerUncleanShutdown`` also visits a partition whose last-known leader is
        ``b``, to clear it."""
        return (self.cfg.last_known_leader == "forget-unclean"
                and reg.last_known_elr == (b,))

    def _a_register(self, state: State, out: Out) -> None:
        """``RegisterBroker(b)``: down broker ``b`` starts, registers and catches up (see the
        module docstring)."""
        steps: Any = self._kraft_steps(state)
        raw: Any = steps[2]  # untyped: the controller tuples are the interner's objects
        for step in raw:
            b = step[0]
            br = state.brokers[b]
            up = with_fields(br, alive=1, leader=NONE, leader_epoch=NONE, in_sync_replica_ids=0,
                             remotes=(), unclean_shutdown=0, truncating=0, pending_isr=0,
                             alter_partition=0)
            s = self._set_broker(state, b, up)
            s = kafka_state(step[1], s.brokers, s.channels, s.ghost)
            if step[2]:
                s = self._flag(s, F_UNCLEAN)
            s = self._published(s, b, step[3], fresh=True)
            out.append((broker_step("RegisterBroker", b), s))

    def _register_steps(self, ctrl: ZkPartitionState, flags: int
                        ) -> tuple[tuple[int, ZkPartitionState, bool, int], ...]:
        """``_a_register``'s steps from controller tuple ``ctrl``, ``flags`` the mask of the
        running brokers and, above it, of those down after a power loss: each broker, the
        controller tuple once it registered (before it publishes), whether that elects
        uncleanly, and the count of batches it then publishes."""
        n = self.n
        k = cast(KRaftState, ctrl.kraft)
        image = core_image(self._controller_view(k), n)
        reg = image.partitions[0][1]
        steps: list[tuple[int, ZkPartitionState, bool, int]] = []
        for b in range(n):
            existing = broker(image, b)
            if flags >> b & 1 or (existing is not None and not existing.fenced):
                continue
            epoch = next_broker_epoch(k, b)
            records: list[tuple[int, ...]] = []
            unclean = False
            if (self.cfg.elr and (b in reg.isr or b in reg.elr or self._forgets(reg, b))
                    and self._registers_unclean(
                        self._controller_view(k), b, flags >> (n + b) & 1, epoch)):
                change = self._change_of(self._controller_view(k), NO_LEADER, NO_LEADER, b)
                if change.record is not None:
                    records.append(record_of(change.record))
                    unclean = self._unclean(reg, change)
            records.append((REG, b, epoch))
            c = self._with_part(ctrl, with_fields(k, broker_epoch=put(k.broker_epoch, b, epoch)))
            written = self._written(c, tuple(records))
            if written is None:
                continue
            k3 = cast(KRaftState, written.kraft)
            k3 = with_fields(k3, applied=put(k3.applied, b, 0),
                             partition_epoch=put(k3.partition_epoch, b, -1))
            steps.append((b, self._with_part(written, k3), unclean, len(k3.batches)))
        return tuple(steps)

    @memoised
    def _registers_unclean(self, image: Image, b: int, unclean_shutdown: int,
                           epoch: int) -> bool:
        """``ClusterControlManager.registerBroker`` (``register_broker``) of broker ``b``'s new
        incarnation with broker epoch ``epoch`` in the controller's plain ``image``: whether
        KIP-966's detection finds an unclean shutdown (the previous broker epoch comes from
        the clean-shutdown file: none after a power loss, ``unclean_shutdown``; memoised)."""
        existing = broker(core_image(image, self.n), b)
        clean = not unclean_shutdown and existing is not None
        request = BrokerRegistrationRequest(
            b, epoch, existing.epoch if clean and existing is not None else -1)
        outcome = register_broker(existing, False, request, epoch,
                                  DETECTIONS[self.cfg.unclean_detection]).unwrap()
        assert outcome.record is not None
        return outcome.unclean_shutdown

    def _a_kraft_alter_partition(self, state: State, out: Out) -> None:
        """``AlterPartition(b)``: the controller handles leader ``b``'s request (see the
        module docstring) and its answer is on its way back; kept per controller tuple and
        leader's tuple (``_alter_partition_step``)."""
        ctrl = state.controller
        cache = self._cache_alter_partition
        for b in range(self.n):
            br = state.brokers[b]
            if br.alter_partition != ALTER_SENT or not br.alive:
                continue
            found = cache.find(ctrl, br, b)
            if found is MISSING:
                found = cache.keep(ctrl, br, b, self._alter_partition_step(ctrl, br, b))
            if found is None:
                continue  # the controller's write waits (max_metadata_lag)
            raw: Any = found  # untyped: its items are the interner's objects
            s = self._set_broker(state, b, raw[0])
            out.append((broker_step("AlterPartition", b),
                        kafka_state(raw[1], s.brokers, s.channels, s.ghost)))

    def _alter_partition_step(self, ctrl: ZkPartitionState, br: BrokerPartition, b: int
                              ) -> tuple[BrokerPartition, ZkPartitionState] | None:
        """``_a_kraft_alter_partition``'s leader and controller tuples from ``ctrl`` and
        leader ``b``'s ``br``, or ``None`` while the controller's write waits."""
        k = cast(KRaftState, ctrl.kraft)
        answer, record, registered = self._alter_partition_answer(
            self._controller_view(k), b, k.broker_epoch[b], br.leader_epoch, k.alter_epoch[b],
            br.pending_isr, k.alter_isr_epochs[b])
        c: ZkPartitionState | None = ctrl
        if record is not None:
            c = self._written(ctrl, (record,))
        if c is None:
            return None
        if registered:
            # the answer carries the partition epoch after the change (relative to the
            # state's base, which the write may have moved)
            k2 = cast(KRaftState, c.kraft)
            c = self._with_part(c, with_fields(k2, alter_epoch=put(
                k2.alter_epoch, b, self._image(k2, len(k2.batches))[0][2])))
        return with_fields(br, alter_partition=answer), c

    @memoised
    def _alter_partition_answer(self, image: Image, b: int, broker_epoch: int,
                                leader_epoch: int, alter_epoch: int, pending_isr: int,
                                isr_epochs: tuple[int, ...],
                                ) -> tuple[int, Record | None, bool]:
        """``ReplicationControlManager.alterPartition`` (``alter_partition``) on leader ``b``'s
        request (its broker epoch, leader epoch, the partition epoch ``alter_epoch`` it
        carries, the proposed ISR and, KIP-903, its members' broker epochs) in the
        controller's plain ``image``: the answer (``ALTER_*``), the record written, and
        whether the answer carries the new registration (memoised)."""
        core = core_image(image, self.n)
        reg = core.partitions[0][1]
        epochs = isr_epochs or (-1,) * self.n
        request = KRaftAlterPartitionRequest(
            b, broker_epoch, leader_epoch, alter_epoch + 1,
            tuple(BrokerState(m, epochs[m]) for m in members(pending_isr)),
            version=3 if self.cfg.kip903 else 2)
        config = AlterPartitionConfig(kip841=self.cfg.fence_ineligible,
                                      kip903=self.cfg.kip903, builder=self._builder())
        response = alter_partition(TP, reg, core, request, config).unwrap()
        if response.error is Errors.NONE:
            # the answer carries the registration after the change: with isr-shrink (3.0-3.5)
            # a shrink's record bumped the leader epoch, and the leader ignores the answer
            assert response.registration is not None
            bumped = response.registration.leader_epoch != leader_epoch
            answer = ALTER_NEW_EPOCH if bumped else ALTER_ACCEPTED
        elif response.error in (Errors.INELIGIBLE_REPLICA, Errors.OPERATION_NOT_ATTEMPTED):
            answer = ALTER_INELIGIBLE
        else:
            answer = ALTER_FENCED
        record = None if response.record is None else record_of(response.record)
        return answer, record, response.registration is not None

    def _controller_pe(self, state: State) -> int:
        """The controller's partition epoch, relative to the state's base."""
        k = self._kraft(state)
        return self._image(k, len(k.batches))[0][2]


class ControllerOperations(QuorumController):
    """The active controller's operations on a running broker's request: controlled shutdown
    through heartbeats, preferred elections, and the controller's own failover
    (``controlled_shutdown``, ``preferred_election``, ``controller_failover``)."""

    def _plain_records(self, records: Sequence[MetadataRecord]) -> Batch:
        """Core records as the state's plain records (partition and broker changes only:
        what these operations write)."""
        out: list[Record] = []
        for r in records:
            if isinstance(r, PartitionChangeRecord):
                out.append(record_of(r))
            else:
                assert isinstance(r, BrokerRegistrationChangeRecord), r
                out.append(broker_record_of(r))
        return tuple(out)

    @staticmethod
    def _elects_unclean(records: Batch) -> bool:
        """Whether a batch elects a leader uncleanly (KIP-704's RECOVERING state set with a
        leader: ``_unclean``'s test on plain records)."""
        return any(r[0] not in (REG, CHG) and r[2] not in (NO_LEADER_CHANGE, NO_LEADER)
                   and r[5] == LeaderRecoveryState.RECOVERING.value for r in records)

    def _with_shutdown_offset(self, state: State, b: int, offset: int) -> State:
        """``state`` with the heartbeat manager's controlled-shutdown offset of ``b``."""
        k = self._kraft(state)
        return self._with_kraft(state, with_fields(k,
            shutdown_offset=put(k.shutdown_offset, b, offset)))

    def _lowest_active_offset(self, state: State, image: Image, b: int) -> int | None:
        """``BrokerHeartbeatManager.lowestActiveOffset`` as ``b``'s shutdown sees it: the
        smallest published offset of the other registered brokers that are unfenced and
        not shutting down in the heartbeat manager (``None``: none, Kafka's
        ``Long.MAX_VALUE``).  A down broker the controller has not fenced yet reported an
        offset before it stopped, which the model does not keep: it counts as -1 (the
        shutdown waits for its fencing; an under-approximation of the offsets it may have
        reported)."""
        k = self._kraft(state)
        lowest: int | None = None
        for x, (epoch, flags) in enumerate(image[1]):
            if x == b or epoch < 0 or flags & FENCED or k.shutdown_offset[x] >= 0:
                continue
            offset = k.applied[x] if state.brokers[x].alive else -1
            lowest = offset if lowest is None else min(lowest, offset)
        return lowest

    def _heartbeat(self, state: State, b: int, current: BrokerControlState
                   ) -> tuple[BrokerControlState, BrokerControlState, Batch]:
        """Broker ``b``'s heartbeat asking to shut down (``BrokerLifecycleManager`` in
        PENDING_CONTROLLED_SHUTDOWN: ``wantShutDown``) as ``processBrokerHeartbeat`` handles
        it: the transition from ``current`` (``calculate_next_broker_state``) and its records
        (``heartbeat_records``)."""
        k = self._kraft(state)
        plain = self._controller_view(k)
        image = core_image(plain, self.n)
        registered = broker(image, b)
        assert registered is not None
        offset = k.shutdown_offset[b]
        hb = BrokerHeartbeatState(b, 0, False, k.applied[b], offset)
        request = BrokerHeartbeatRequest(b, registered.epoch, k.applied[b], False, True)
        lowest = self._lowest_active_offset(state, plain, b)
        nxt = calculate_next_broker_state(hb, request, 0, plain[0][0] == b, lowest)
        records = heartbeat_records(image, TP, b, current, nxt, self._builder()).unwrap()
        return current, nxt, self._plain_records(records)

    def _a_kraft_controlled_shutdown(self, state: State, out: Out) -> None:
        """``ControlledShutdown(b)``: a running, unfenced broker ``b`` whose controller has no
        controlled-shutdown offset for it heartbeats with ``wantShutDown``; leading, it goes
        to CONTROLLED_SHUTDOWN (``handleBrokerInControlledShutdown``: the
        in-controlled-shutdown record, ``b`` out of the ISR, a new leader; the heartbeat
        manager records the batch's end offset), else to SHUTDOWN_NOW
        (``handleBrokerFenced``) and ``b`` stops."""
        k = self._kraft(state)
        regs = self._controller_view(k)[1]
        for b in range(self.n):
            epoch, flags = regs[b]
            if (not state.brokers[b].alive or epoch < 0 or flags & FENCED
                    or epoch != k.broker_epoch[b] or k.shutdown_offset[b] >= 0):
                continue
            _, nxt, batch = self._heartbeat(state, b, BrokerControlState.UNFENCED)
            s = self._write(state, batch, self._elects_unclean(batch)) if batch else state
            if s is None:
                continue
            if nxt is BrokerControlState.SHUTDOWN_NOW:
                s = self._upkeep(state, self._crashed(s, b, False))
            else:
                s = self._with_shutdown_offset(s, b, len(self._kraft(s).batches))
            out.append((broker_step("ControlledShutdown", b), s))

    def _a_shutdown_now(self, state: State, out: Out) -> None:
        """``ShutdownNow(b)``: broker ``b`` in controlled shutdown heartbeats again; once it
        leads nothing and every active broker has published the batch that moved it into
        controlled shutdown (``controlledShutdownOffset <= lowestActiveOffset``) the
        controller answers SHUTDOWN_NOW (``handleBrokerFenced``: the fence record) and ``b``
        stops cleanly (``BrokerServer.shutdown``)."""
        k = self._kraft(state)
        for b in range(self.n):
            if k.shutdown_offset[b] < 0 or not state.brokers[b].alive:
                continue
            _, nxt, batch = self._heartbeat(state, b, BrokerControlState.CONTROLLED_SHUTDOWN)
            if nxt is not BrokerControlState.SHUTDOWN_NOW:
                continue
            s = self._write(state, batch, self._elects_unclean(batch))
            if s is None:
                continue
            s = self._upkeep(state, self._crashed(s, b, False))
            out.append((broker_step("ShutdownNow", b), s))

    def _a_kraft_preferred_election(self, state: State, out: Out) -> None:
        """``PreferredElection``: ``ElectLeaders`` with PREFERRED (an operator, or the
        controller's own ``maybeBalancePartitionLeaders``): ``electLeader`` writes a record
        electing the first replica when it is in the ISR and active and does not lead
        (ELECTION_NOT_NEEDED, PREFERRED_LEADER_NOT_AVAILABLE: nothing written)."""
        k = self._kraft(state)
        record = self._preferred_of(self._controller_view(k))
        if record is None:
            return
        s = self._write(state, (record,))
        if s is not None:
            out.append((PREFERRED_ELECTION, s))

    @memoised
    def _preferred_of(self, image: Image) -> Record | None:
        """``_a_kraft_preferred_election``'s record for the controller's plain image
        (``elect_leader``; memoised)."""
        outcome = elect_leader(core_image(image, self.n), TP, ElectionType.PREFERRED,
                               self._builder()).unwrap()
        if outcome.error is not Errors.NONE or outcome.record is None:
            return None
        assert isinstance(outcome.record, PartitionChangeRecord)
        return record_of(outcome.record)

    def _a_kraft_failover(self, state: State, out: Out) -> None:
        """``ControllerFailover`` (``controller_failover``): the active controller resigns
        (``QuorumController.renounce``: its uncommitted records are reverted,
        ``OffsetControlManager.deactivate``, and every answer not yet given fails with
        NOT_CONTROLLER, ``deferredEventQueue.failAll``) and another voter continues from
        the committed log (``claim``; ``ClusterControlManager.activate`` starts a new
        ``BrokerHeartbeatManager``, with no controlled-shutdown offset).  In the model
        every record is committed when written, so what the failover changes is what it
        loses: each AlterPartition answer still on its way to a leader (the leader's
        ``NodeToControllerChannelManager`` sees NOT_CONTROLLER or a disconnect and puts
        the same request back at the head of its queue, ``requestQueue.putFirst``: the
        request is in flight again, with the partition epoch it had) and the controlled-
        shutdown offsets.  Only steps that change the state are offered."""
        k = self._kraft(state)
        s = state
        alter_epoch = k.alter_epoch
        for b in range(self.n):
            br = s.brokers[b]
            if br.alive and br.alter_partition not in (ALTER_NONE, ALTER_SENT):
                s = self._set_broker(s, b, with_fields(br, alter_partition=ALTER_SENT))
                alter_epoch = put(alter_epoch, b, k.partition_epoch[b])
        offsets = tuple(-1 for _ in k.shutdown_offset)
        if s is state and offsets == k.shutdown_offset:
            return
        out.append((CONTROLLER_FAILOVER, self._with_kraft(
            s, with_fields(k, alter_epoch=alter_epoch, shutdown_offset=offsets))))
