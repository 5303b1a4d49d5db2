"""The ``kafka`` model in KRaft mode (``controller=kraft``): the checker's ``Model`` over the
components of ``isrlab.spec.kafka.quorum_controller``.

``KRaftModel`` is the top of the model's single inheritance chain in KRaft mode, as
``isrlab.spec.kafka.model.KafkaModel`` is in ZooKeeper mode: the initial state (the
ZooKeeper mode's, on a cluster whose brokers registered and published the partition's first
registration), ``next_states`` (the broker components' steps, each broker's metadata loader
and the active controller's), the invariant catalogue with KRaft's own
(``isrlab.spec.kafka.kraft_invariants``), and the encoding of the KRaft part of the state
after the ZooKeeper-mode bytes.
"""

from __future__ import annotations

import marshal
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from isrlab.checker.model import Property
from isrlab.spec.kafka.config import KafkaConfig, Out, State
from isrlab.spec.kafka.kraft_invariants import kraft_invariants
from isrlab.spec.kafka.kraft_state import (
    CHG,
    FENCED,
    REG,
    SHUTTING_DOWN,
    initial,
    replayed,
)
from isrlab.spec.kafka.memo import remember
from isrlab.spec.kafka.quorum_controller import ControllerOperations
from isrlab.spec.kafka.state import ZkPartitionState, kafka_state, members, with_fields


class KRaftModel(ControllerOperations):
    """The ``kafka`` model with ``controller=kraft``: the broker components of the
    ZooKeeper-mode model, their metadata from the KRaft metadata log."""

    def __init__(self, config: KafkaConfig, invariants: Sequence[str] | None = None,
                 unfair: Sequence[str] = ()) -> None:
        super().__init__(config, invariants, unfair)
        self._kraft_bytes: dict[int, tuple[object, bytes]] = {}
        """The bytes of each KRaft part, by the address of its object in the interner (the
        entry holds it)."""
        self._size_prefixes: dict[int, bytes] = {}
        """The four bytes of each length of the ZooKeeper-mode bytes ``encode`` met."""
        self._interner.register(self._kraft_bytes)
        self._last_kraft: object = None
        """The KRaft part ``encode`` wrote last (found by identity first, as the
        ``Encoder``'s components), and its bytes."""
        self._last_kraft_bytes = b""
        self.state_layout = f"kafka-kraft-state 1 {self.layout.version}"

    def _catalogue(self) -> list[Property[State]]:
        """The catalogue's invariants and KRaft's (``isrlab.spec.kafka.kraft_invariants``)."""
        return [*super()._catalogue(), *kraft_invariants(self)]

    def init_states(self) -> Iterable[State]:
        """The ZooKeeper mode's initial state (the topic just created, broker 0 leading epoch
        0) on a cluster whose brokers registered with broker epoch 0, unfenced, and
        published the partition's first registration (partition epoch 0)."""
        (zk,) = tuple(super().init_states())
        lead = self.cfg.initial_leader
        if lead:
            zk = self._led_by(zk, lead)
        k = initial(self.n, zk.controller.isr, self.cfg.controlled_shutdown, lead)
        return (self._interned_state(self._with_kraft(zk, k)),)

    def _led_by(self, zk: State, lead: int) -> State:
        """The initial state ``zk`` with broker ``lead`` leading epoch 0 instead of broker 0
        (``initial_leader``): its ``Partition`` holds the ISR and the remote replicas, the
        others follow it."""
        leader = zk.brokers[0]
        brokers = tuple(with_fields(br, leader=lead, in_sync_replica_ids=leader.in_sync_replica_ids
                                    if b == lead else 0,
                                    remotes=leader.remotes if b == lead else ())
                        for b, br in enumerate(zk.brokers))
        ghost = with_fields(zk.ghost, epoch_leader=(lead, *zk.ghost.epoch_leader[1:]))
        return kafka_state(with_fields(zk.controller, leader=lead), brokers, zk.channels, ghost)

    def next_states(self, state: State) -> Iterable[tuple[str, State]]:
        """Every enabled step: the brokers' (produce, fetch and truncation, ISR expiration,
        AlterPartition's answers, crash, flush, consume), each broker's metadata loader,
        and the active controller's; the successors' components interned (``_interned``)."""
        cfg = self.cfg
        self._expand_kraft(state)
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
        # KAFKA-15021's HW rule follows only broker steps (``HW_EVENTS``)
        out: Out = ([(label, self._eligible_hw(state, label, self._upkeep(state, s)))
                     for label, s in steps] if self.eligible_hw
                    else [(label, self._upkeep(state, s)) for label, s in steps])
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
        if cfg.controlled_shutdown:
            self._a_kraft_controlled_shutdown(state, out)
            self._a_shutdown_now(state, out)
        if cfg.preferred_election:
            self._a_kraft_preferred_election(state, out)
        if cfg.controller_failover:
            self._a_kraft_failover(state, out)
        return self._interned(state, out)

    def encode(self, state: State) -> bytes:
        """The ZooKeeper-mode bytes of the state (``isrlab.spec.kafka.state.Encoder``, which
        leaves the KRaft part out), prefixed by their length, then ``marshal`` version 2 of
        the KRaft part as plain tuples."""
        zk = self._encoder(state)
        k = self._kraft(state)
        if k is self._last_kraft:
            kb = self._last_kraft_bytes
        else:
            found = self._kraft_bytes.get(id(k))
            if found is not None and found[0] is k:
                kb = found[1]
            else:
                canonical = self._interner.canon(k)
                found = self._kraft_bytes.get(id(canonical))
                if found is not None and found[0] is canonical:
                    kb = found[1]
                else:
                    kb = marshal.dumps(self.layout.plain_kraft(k), 2)
                    remember(self._kraft_bytes, id(canonical), (canonical, kb))
            self._last_kraft, self._last_kraft_bytes = k, kb
        size = len(zk)
        prefix = self._size_prefixes.get(size)
        if prefix is None:
            prefix = self._size_prefixes[size] = size.to_bytes(4, "little")
        return b"".join((prefix, zk, kb))

    def decode(self, data: bytes) -> State:
        """The inverse of ``encode``."""
        size = int.from_bytes(data[:4], "little")
        s = self.layout.from_plain(marshal.loads(data[4:4 + size]))
        kraft = self.layout.kraft_from_plain(marshal.loads(data[4 + size:]))
        ctrl: ZkPartitionState = with_fields(s.controller, kraft=kraft)
        return kafka_state(ctrl, s.brokers, s.channels, s.ghost)

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
        zk["brokers"] = {b: {"epoch": e, "fenced": bool(f & FENCED)}
                         | ({"controlled_shutdown": True} if f & SHUTTING_DOWN else {})
                         for b, (e, f) in enumerate(regs) if e >= 0}
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
        if r[0] == CHG and len(r) > 4 and r[4]:
            return f"[ControlledShutdown b{r[1]} epoch {r[2]}]"
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

