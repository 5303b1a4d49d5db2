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
``max_leader_epoch`` (the step is then not taken).  Shortcuts: one active controller that
never fails over (its log is the committed log: a controller failover in KRaft continues
from it, and uncommitted records are not modelled); a new incarnation may register only
once the old one's session expired and it was fenced (a registration with a live session
is refused, ``DuplicateBrokerRegistrationException``, and retried until then); controlled
shutdown is not modelled (``Crash`` is a clean stop without it); the unclean election of
``unclean_election`` happens where ``PartitionChangeBuilder`` runs with ``Election.UNCLEAN``
(fencing, unfencing).
"""

from __future__ import annotations

import marshal
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from isrlab.checker.model import Property
from isrlab.core.broker_heartbeat import (
    BrokerRegistrationRequest,
    UncleanDetection,
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
from isrlab.core.kraft_metadata import NO_LEADER_CHANGE, active_brokers, broker, is_active
from isrlab.core.partition_change_builder import (
    BuilderConfig,
    ChangeResult,
    Election,
    LeaderEpochBump,
    generate_leader_and_isr_update,
)
from isrlab.core.state import NO_LEADER
from isrlab.spec.kafka.broker_lifecycle import BrokerLifecycleManager
from isrlab.spec.kafka.config import KafkaConfig, Out, State
from isrlab.spec.kafka.kraft_invariants import kraft_invariants
from isrlab.spec.kafka.kraft_state import (
    CHG,
    REG,
    TP,
    Batch,
    Image,
    KRaftState,
    core_image,
    initial,
    next_broker_epoch,
    put,
    record_of,
    replayed,
)
from isrlab.spec.kafka.labels import broker_step
from isrlab.spec.kafka.memo import memoised, remember
from isrlab.spec.kafka.state import (
    ALTER_ACCEPTED,
    ALTER_FENCED,
    ALTER_INELIGIBLE,
    ALTER_SENT,
    F_UNCLEAN,
    NONE,
    KafkaState,
    ZkPartitionState,
    members,
)

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
                        else LeaderEpochBump.LEADER_CHANGE_ONLY))

    def _write(self, state: State, batch: Batch, unclean: bool = False) -> State | None:
        """``state`` once the controller committed ``batch``; ``None`` when the bounds forbid
        it (a live broker ``max_metadata_lag`` batches behind, or a leader epoch past
        ``max_leader_epoch``)."""
        k = self._kraft(state)
        if len(k.batches) >= self.cfg.max_metadata_lag:
            return None
        k = k._replace(batches=(*k.batches, batch))
        if replayed(k.base, k.batches, self.n)[0][1] > self.cfg.max_leader_epoch:
            return None
        s = self._with_kraft(state, k)
        return self._flag(s, F_UNCLEAN) if unclean else s

    def _change(self, state: State, remove: int = NO_LEADER, add: int = NO_LEADER,
                unclean: int = NO_LEADER) -> ChangeResult:
        """``generateLeaderAndIsrUpdates`` for the partition in the controller's image
        (``broker_to_remove``, ``broker_to_add``, ``broker_with_unclean_shutdown``)."""
        k = self._kraft(state)
        return self._change_of(replayed(k.base, k.batches, self.n), remove, add, unclean)

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
        k = self._kraft(state)
        image = core_image(replayed(k.base, k.batches, self.n), self.n)
        reg = image.partitions[0][1]
        for b in range(self.n):
            if not is_active(image, b):
                continue
            if state.brokers[b].alive and not self.cfg.heartbeat_loss:
                continue
            registered = broker(image, b)
            assert registered is not None
            epoch = registered.epoch
            records: list[tuple[int, ...]] = []
            unclean = False
            if b in reg.isr:
                change = self._change(state, remove=b)
                if change.record is not None:
                    records.append(record_of(change.record))
                    unclean = self._unclean(reg, change)
            records.append((CHG, b, epoch, 1))
            s = self._write(state, tuple(records), unclean)
            if s is not None:
                out.append((broker_step("FenceBroker", b), s))

    def _a_unfence(self, state: State, out: Out) -> None:
        """``UnfenceBroker(b)`` (see the module docstring)."""
        k = self._kraft(state)
        image = core_image(replayed(k.base, k.batches, self.n), self.n)
        reg = image.partitions[0][1]
        for b in range(self.n):
            registered = broker(image, b)
            if (registered is None or not registered.fenced or not state.brokers[b].alive
                    or registered.epoch != k.broker_epoch[b]):
                continue
            if self._leader_view(state, b)[1][b][0] != registered.epoch:
                continue  # not caught up with its own registration record yet
            records: list[tuple[int, ...]] = [(CHG, b, registered.epoch, -1)]
            unclean = False
            if reg.leader == NO_LEADER:
                change = self._change(state, add=b)
                if change.record is not None:
                    records.append(record_of(change.record))
                    unclean = self._unclean(reg, change)
            s = self._write(state, tuple(records), unclean)
            if s is not None:
                out.append((broker_step("UnfenceBroker", b), s))

    def _a_register(self, state: State, out: Out) -> None:
        """``RegisterBroker(b)``: down broker ``b`` starts, registers and catches up (see the
        module docstring)."""
        k = self._kraft(state)
        image = core_image(replayed(k.base, k.batches, self.n), self.n)
        reg = image.partitions[0][1]
        for b in range(self.n):
            br = state.brokers[b]
            existing = broker(image, b)
            if br.alive or (existing is not None and not existing.fenced):
                continue
            epoch = next_broker_epoch(k, b)
            clean = not br.unclean_shutdown and existing is not None
            request = BrokerRegistrationRequest(
                b, epoch, existing.epoch if clean and existing is not None else -1)
            outcome = register_broker(existing, False, request, epoch,
                                      DETECTIONS[self.cfg.unclean_detection]).unwrap()
            assert outcome.record is not None
            records: list[tuple[int, ...]] = []
            unclean = False
            if outcome.unclean_shutdown and self.cfg.elr and (b in reg.isr or b in reg.elr):
                change = self._change(state, unclean=b)
                if change.record is not None:
                    records.append(record_of(change.record))
                    unclean = self._unclean(reg, change)
            records.append((REG, b, epoch))
            up = br._replace(alive=1, leader=NONE, leader_epoch=NONE, in_sync_replica_ids=0,
                             remotes=(), unclean_shutdown=0, truncating=0, pending_isr=0,
                             alter_partition=0)
            s = self._set_broker(state, b, up)
            k2 = self._kraft(s)._replace(broker_epoch=put(k.broker_epoch, b, epoch))
            written = self._write(self._with_kraft(s, k2), tuple(records), unclean)
            if written is None:
                continue
            k3 = self._kraft(written)
            k3 = k3._replace(applied=put(k3.applied, b, 0),
                             partition_epoch=put(k3.partition_epoch, b, -1))
            s = self._published(self._with_kraft(written, k3), b, len(k3.batches), fresh=True)
            out.append((broker_step("RegisterBroker", b), s))

    def _a_kraft_alter_partition(self, state: State, out: Out) -> None:
        """``AlterPartition(b)``: the controller handles leader ``b``'s request (see the
        module docstring) and its answer is on its way back."""
        k = self._kraft(state)
        image = core_image(replayed(k.base, k.batches, self.n), self.n)
        reg = image.partitions[0][1]
        for b in range(self.n):
            br = state.brokers[b]
            if br.alter_partition != ALTER_SENT or not br.alive:
                continue
            epochs = k.alter_isr_epochs[b] or (-1,) * self.n
            request = KRaftAlterPartitionRequest(
                b, k.broker_epoch[b], br.leader_epoch, k.alter_epoch[b] + 1,
                tuple(BrokerState(m, epochs[m]) for m in members(br.pending_isr)),
                version=3 if self.cfg.kip903 else 2)
            config = AlterPartitionConfig(kip841=self.cfg.fence_ineligible,
                                          kip903=self.cfg.kip903, builder=self._builder())
            response = alter_partition(TP, reg, image, request, config).unwrap()
            if response.error is Errors.NONE:
                answer = ALTER_ACCEPTED
            elif response.error in (Errors.INELIGIBLE_REPLICA, Errors.OPERATION_NOT_ATTEMPTED):
                answer = ALTER_INELIGIBLE
            else:
                answer = ALTER_FENCED
            s: State | None = self._set_broker(state, b, br._replace(alter_partition=answer))
            if s is not None and response.record is not None:
                s = self._write(s, (record_of(response.record),))
            if s is None:
                continue  # the controller's write waits (max_metadata_lag)
            if response.registration is not None:
                # the answer carries the partition epoch after the change (relative to the
                # state's base, which the write may have moved)
                k2 = self._kraft(s)
                s = self._with_kraft(s, k2._replace(alter_epoch=put(
                    k2.alter_epoch, b, self._controller_pe(s))))
            out.append((broker_step("AlterPartition", b), s))

    def _controller_pe(self, state: State) -> int:
        """The controller's partition epoch, relative to the state's base."""
        k = self._kraft(state)
        return replayed(k.base, k.batches, self.n)[0][2]


class KRaftModel(QuorumController):
    """The ``kafka`` model with ``controller=kraft``: the broker components of the
    ZooKeeper-mode model, their metadata from the KRaft metadata log."""

    def __init__(self, config: KafkaConfig, invariants: Sequence[str] | None = None,
                 unfair: Sequence[str] = ()) -> None:
        super().__init__(config, (), unfair)
        self._selected = None if invariants is None else tuple(invariants)
        self._kraft_bytes: dict[KRaftState, bytes] = {}
        self.state_layout = f"kafka-kraft-state 1 {self.layout.version}"
        from isrlab.spec.invariants import kafka_invariants
        known = [*kafka_invariants(self), *kraft_invariants(self)]
        if invariants is None:
            self._invariants = tuple(known)
        else:
            by_name = {p.name: p for p in known}
            unknown = [i for i in invariants if i not in by_name]
            if unknown:
                raise ValueError(
                    f"unknown invariant {unknown[0]!r} (known: {', '.join(by_name)})")
            self._invariants = tuple(by_name[i] for i in invariants)

    def init_states(self) -> Iterable[State]:
        """The ZooKeeper mode's initial state (the topic just created, broker 0 leading epoch
        0) on a cluster whose brokers registered with broker epoch 0, unfenced, and
        published the partition's first registration (partition epoch 0)."""
        (zk,) = tuple(super().init_states())
        k = initial(self.n, zk.controller.isr)
        return (self._with_kraft(zk, k),)

    def next_states(self, state: State) -> Iterable[tuple[str, State]]:
        """Every enabled step: the brokers' (produce, fetch and truncation, ISR expiration,
        AlterPartition's answers, crash, flush, consume), each broker's metadata loader,
        and the active controller's."""
        cfg = self.cfg
        steps: Out = []
        self._a_produce(state, steps)
        self._a_fetch(state, steps)
        if cfg.isr_shrink:
            self._a_tick(state, steps)
            self._a_shrink_isr(state, steps)
        self._a_alter_partition_response(state, steps)
        if cfg.crashes != "none":
            self._a_crash(state, steps)
            if cfg.crashes == "unclean":
                self._a_flush(state, steps)
        if cfg.hw_checkpoint:
            self._a_checkpoint(state, steps)
        if cfg.consumers:
            self._a_consume(state, steps)
        out: Out = [(label, self._upkeep(state, s)) for label, s in steps]
        self._a_handle_commit(state, out)
        self._a_kraft_alter_partition(state, out)
        self._a_fence(state, out)
        if cfg.crashes != "none":
            self._a_register(state, out)
            self._a_unfence(state, out)
            if cfg.empty_disk:
                self._a_replace_disk(state, out)
        elif cfg.heartbeat_loss:
            self._a_unfence(state, out)
        if self.eligible_hw:
            return [(label, self._eligible_hw(state, label, s)) for label, s in out]
        return out

    def invariants(self) -> Sequence[Property[State]]:
        """The selected invariants: the catalogue's and KRaft's
        (``isrlab.spec.kafka.kraft_invariants``)."""
        return self._invariants

    def __reduce__(self) -> tuple[type[KRaftModel], tuple[KafkaConfig, tuple[str, ...] | None,
                                                          tuple[str, ...]]]:
        """The model as pickled: the arguments it was built from."""
        return (KRaftModel, (self.cfg, self._selected, self._unfair))

    def encode(self, state: State) -> bytes:
        """The ZooKeeper-mode bytes of the state (``isrlab.spec.kafka.state.Encoder``, which
        leaves the KRaft part out), prefixed by their length, then ``marshal`` version 2 of
        the KRaft part as plain tuples."""
        zk = self._encoder(state)
        k = self._kraft(state)
        kb = self._kraft_bytes.get(k)
        if kb is None:
            kb = remember(self._kraft_bytes, k, marshal.dumps(tuple(k), 2))
        return len(zk).to_bytes(4, "little") + zk + kb

    def decode(self, data: bytes) -> State:
        """The inverse of ``encode``."""
        size = int.from_bytes(data[:4], "little")
        s = self.layout.from_plain(marshal.loads(data[4:4 + size]))
        kraft = KRaftState(*marshal.loads(data[4 + size:]))
        ctrl: ZkPartitionState = s.controller._replace(kraft=kraft)
        return KafkaState(ctrl, s.brokers, s.channels, s.ghost)

    def variables(self, state: State) -> Mapping[str, Any]:
        """The state as named variables: the brokers as in ZooKeeper mode, the active
        controller's registration and metadata log, each broker's published offset, broker
        epoch and partition epoch."""
        out = dict(super().variables(state))
        out.pop("controller_epoch", None)
        zk = out.pop("zk")
        k = self._kraft(state)
        part, regs = replayed(k.base, k.batches, self.n)
        zk["partition_epoch"] = part[2]
        if part[6]:
            zk["leader_recovery_state"] = "RECOVERING"
        zk["brokers"] = {b: {"epoch": e, "fenced": bool(f)} for b, (e, f) in enumerate(regs)
                         if e >= 0}
        out["controller"] = zk
        out["metadata_log"] = tuple(" ".join(self._record_text(r) for r in batch)
                                    for batch in k.batches)
        for b in range(self.n):
            view = out[f"broker{b}"]
            if k.applied[b] >= 0:
                view["metadata_applied"] = k.applied[b]
                view["broker_epoch"] = k.broker_epoch[b]
                view["partition_epoch"] = k.partition_epoch[b]
        out.pop("requests", None)
        return out

    @staticmethod
    def _record_text(r: tuple[int, ...]) -> str:
        if r[0] == REG:
            return f"[Register b{r[1]} epoch {r[2]}]"
        if r[0] == CHG:
            return f"[{'Fence' if r[3] == 1 else 'Unfence'} b{r[1]} epoch {r[2]}]"
        _, isr, leader, elr, lke, rec = r
        parts = []
        if leader != -2:
            parts.append(f"leader {leader}")
        if isr >= 0:
            parts.append(f"isr {list(members(isr))}")
        if elr >= 0:
            parts.append(f"elr {list(members(elr))}")
        if lke >= 0:
            parts.append(f"last_known_elr {list(members(lke))}")
        if rec >= 0:
            parts.append("RECOVERING" if rec else "RECOVERED")
        return "[PartitionChange " + ", ".join(parts) + "]"

