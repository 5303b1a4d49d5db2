"""The ``kafka`` cluster model: one partition replicated on a few brokers, at the broker-code level.

Every broker-side step is a ``core`` function applied to the broker's ``Partition``
(rebuilt from its ``BrokerPartition``, see ``isrlab.spec.kafka.state``): LeaderAndIsr handling is
``isrlab.core.replica_manager.become_leader_or_follower`` (controller-epoch and leader-epoch
fencing, ``make_leader`` / ``make_follower`` with the configured truncation rule), a produce
is ``append_records_to_leader`` and ``check_enough_replicas_reach_offset``, a follower fetch
is ``read_from_local_log`` + ``update_follower_fetch`` (ISR expansion, HW) on the leader and
``process_partition_data`` on the follower, the ISR shrink is ``maybe_shrink_isr``, and the
controller elects with the ``isrlab.core.selectors`` leader selectors.  The properties live in
``isrlab.spec.invariants``.

The model is composed of Kafka's components, one module each, each owning its actions and
the helpers they need (docs/kafka-model.md, "Components"); each module's docstring states
the modelling shortcuts its component takes.  A component is a class that extends the one
below it, so that mypyc compiles the whole model as one native class (single inheritance:
every call between components stays a native method call) and a module imports only the
modules below it:

====================  ==============================  =========================================
module                class                           Kafka
====================  ==============================  =========================================
config                ``KafkaSetup``                  configuration, derived flags
partition             ``PartitionBridge``             ``Partition`` <-> the broker's state
ghost                 ``GhostHistory``                (clients' view: acks, commits, flags)
replica_manager       ``ReplicaManagerSteps``         ``ReplicaManager``: LeaderAndIsr,
                                                      UpdateMetadata (``MetadataCache``)
controller_channel    ``ControllerChannelManager``    ``ControllerChannelManager``
controller            ``KafkaController``             ``KafkaController``, elections,
                                                      ZooKeeper writes, KIP-966 elections
alter_partition       ``AlterPartitionManager``       ``AlterPartitionManager`` and the
                                                      controller's ``alterPartition``
lifecycle             ``BrokerLifecycle``             crash, power loss, flush, HW checkpoint,
                                                      controlled shutdown, restart
fetcher               ``ReplicaFetcher``              ``ReplicaFetcherThread``, fencing,
                                                      truncation, the leader's side of a fetch
leader                ``PartitionLeader``             produce, ``Tick``, ISR shrink
model                 ``KafkaModel``                  the checker's ``Model``: initial state,
                                                      ``next_states``, encoding, variables
====================  ==============================  =========================================

Modelling shortcuts common to every component:

* one partition; brokers ``0..n-1`` are all assigned replicas; the initial state is the
  topic just created: broker 0 leads epoch 0 with every broker in the ISR and every broker
  has already received that first LeaderAndIsr;
* the defaults are the newest behaviour covered (Kafka 2.1's broker rules, unchanged
  through 4.0, with ``unavailable_leader=fetcher`` and KIP-966's ``elr``); the version
  parameters (``truncation``, ``fetch_fencing``, ``expand_rule``, ``kafka_4485``,
  ``kafka_7414``, ``elr``, ``unavailable_leader``, ``isr_changes``, ``fence_ineligible``)
  select older versions, and docs/protocol-map.md lists what remains different from
  Kafka's Scala;
* with ``elr`` (KIP-966) the controller keeps KRaft's ELR and last-known ELR beside
  ZooKeeper's ISR and elects as ``PartitionChangeBuilder`` does (``isrlab.spec.kafka.elr``);
  a leaderless partition names no leader and is sent nothing; ``Crash`` is a clean
  shutdown, ``PowerLoss`` an unclean one.
"""

from __future__ import annotations

import marshal
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from isrlab.checker.model import Liveness, Property
from isrlab.core.state import UNKNOWN_OFFSET
from isrlab.spec.invariants import kafka_invariants, kafka_sometimes
from isrlab.spec.kafka.alter_partition import ALTER_TEXT
from isrlab.spec.kafka.config import NO_FETCH, KafkaConfig, Out, State
from isrlab.spec.kafka.leader import PartitionLeader
from isrlab.spec.kafka.state import (
    F_CHECKPOINT_LOST,
    F_HALTED,
    F_UNCLEAN,
    NONE,
    BrokerPartition,
    FetchResponse,
    Ghost,
    MetadataView,
    RemoteReplicaView,
    ZkPartitionState,
    kafka_state,
    members,
)


class KafkaModel(PartitionLeader):
    """The ``kafka`` model for one configuration: the components composed (see the module
    docstring), with the checker's ``Model`` protocol."""

    def __init__(self, config: KafkaConfig, invariants: Sequence[str] | None = None,
                 unfair: Sequence[str] = ()) -> None:
        super().__init__(config)
        self._selected = None if invariants is None else tuple(invariants)
        self._unfair = tuple(unfair)
        known = self._catalogue()
        if invariants is None:
            self._invariants = tuple(known)
        else:
            by_name = {p.name: p for p in known}
            unknown = [i for i in invariants if i not in by_name]
            if unknown:
                raise ValueError(
                    f"unknown invariant {unknown[0]!r} (known: {', '.join(by_name)})"
                )
            self._invariants = tuple(by_name[i] for i in invariants)
        self._sometimes = tuple(kafka_sometimes(self))

    def _catalogue(self) -> list[Property[State]]:
        """Every invariant this model can check, by which ``invariants`` selects
        (``isrlab.spec.invariants``)."""
        return kafka_invariants(self)

    def init_states(self) -> Iterable[State]:
        """The topic just created: broker 0 leads epoch 0, empty logs; the ISR is every
        broker, or brokers ``0..initial_isr-1`` (the others lag from the start)."""
        n, cfg = self.n, self.cfg
        ar = tuple(range(n))
        isr = (1 << (cfg.initial_isr or n)) - 1
        remotes = tuple(RemoteReplicaView(UNKNOWN_OFFSET, 0 if isr >> i & 1 else self.sat,
                                          *self.no_fetch) for i in range(n))
        meta: MetadataView | tuple[()] = (
            MetadataView(self.all_mask, 0, 0, isr) if cfg.metadata else ()
        )
        brokers = []
        for b in range(n):
            lead = b == 0
            brokers.append(BrokerPartition(1, (), 0, 0, 0, 0, 0, 0, isr if lead else 0,
                            remotes if lead else (), meta, NO_FETCH))
        epochs = cfg.max_leader_epoch + 1
        ghost = Ghost(0, (NONE,) * cfg.max_records, (NONE,) * cfg.max_records,
                 (NONE,) * cfg.max_records, (NONE,) * cfg.max_records, (), 0,
                 (0,) + (NONE,) * (epochs - 1))
        ctrl = ZkPartitionState(0, 0, 0, isr, ar, 0)
        return (self._interned_state(kafka_state(ctrl, tuple(brokers), (), ghost)),)

    def next_states(self, state: State) -> Iterable[tuple[str, State]]:
        """Every enabled step (see the docstrings of the ``_a_*`` methods), the successors'
        components interned (``_interned``)."""
        out: Out = []
        cfg = self.cfg
        self._a_produce(state, out)
        self._a_fetch(state, out)
        if self.split:
            self._a_fetch_response(state, out)
        if cfg.isr_shrink:
            self._a_tick(state, out)
            self._a_shrink_isr(state, out)
        self._a_elect(state, out)
        if cfg.remove_dead_from_isr:
            self._a_remove_dead_from_isr(state, out)
        if cfg.controlled_shutdown:
            self._a_controlled_shutdown(state, out)
        if cfg.preferred_election:
            self._a_preferred_election(state, out)
        if cfg.reassignment:
            self._a_reassign(state, out)
        self._a_deliver(state, out)
        if self.crash_steps:
            self._a_crash(state, out)
            self._a_restart(state, out)
            if self.power_loss:
                self._a_flush(state, out)
        if cfg.hw_checkpoint:
            self._a_checkpoint(state, out)
        if cfg.consumers:
            self._a_consume(state, out)
        if cfg.max_controller_epoch > 0:
            self._a_controller_failover(state, out)
        if cfg.metadata:
            self._a_propagate_isr_changes(state, out)
        if self.alter:
            self._a_alter_partition(state, out)
            self._a_alter_partition_response(state, out)
        return self._interned(state, out)

    def invariants(self) -> Sequence[Property[State]]:
        """The selected invariants of ``_catalogue`` (all by default)."""
        return self._invariants

    def sometimes(self) -> Sequence[Property[State]]:
        """The reachability witnesses of ``isrlab.spec.invariants``."""
        return self._sometimes

    def within_boundary(self, state: State) -> bool:
        """No boundary: every bound is built into the actions."""
        return True

    def canonical(self, state: State) -> State:
        """No symmetry: broker 0 is the first leader and the preference order matters."""
        return state

    def __reduce__(self) -> tuple[type[KafkaModel], tuple[KafkaConfig, tuple[str, ...] | None,
                                                          tuple[str, ...]]]:
        """The model as pickled (Spark's broadcast, worker processes): the arguments it was
        built from, so each copy rebuilds its memoised results and encoder for itself."""
        return (type(self), (self.cfg, self._selected, self._unfair))

    def liveness(self) -> Liveness[State]:
        """The temporal properties in Kafka's terms under weak fairness of Kafka's threads
        and tasks, failures finitely often, less the fairness of ``unfair``
        (``isrlab.spec.kafka.liveness``)."""
        from isrlab.spec.kafka.liveness import kafka_liveness
        cfg = self.cfg
        return kafka_liveness(self, kraft=cfg.controller == "kraft", records=cfg.max_records,
                              min_isr=cfg.min_isr, elr=cfg.elr,
                              max_leader_epoch=cfg.max_leader_epoch,
                              heartbeat_loss=cfg.heartbeat_loss, unfair=self._unfair)

    def encode(self, state: State) -> bytes:
        """``marshal`` version 2 of the state as plain tuples (``self.layout.plain``, from
        ``isrlab.spec.kafka.state.LAYOUT_TABLE``: ``marshal`` refuses tuple subclasses;
        version 2 writes no back-references, so the bytes are deterministic);
        ``isrlab.spec.kafka.state.Encoder`` assembles the same bytes from memoised
        per-component bytes.  The layout's version is ``state_layout``."""
        return self._encoder(state)

    def decode(self, data: bytes) -> State:
        """The inverse of ``encode``."""
        value = marshal.loads(data)
        assert isinstance(value, tuple)
        return self.layout.from_plain(value)

    def variables(self, state: State) -> Mapping[str, Any]:
        """The state as named variables (logs as ``id@epoch`` strings)."""
        ctrl, brokers, msgs, ghost = state
        c = self.codec

        def log(codes: tuple[int, ...]) -> tuple[str, ...]:
            return tuple(f"m{c.record_id(x)}@{c.epoch(x)}" for x in codes)

        out: dict[str, Any] = {
            "controller_epoch": ctrl.controller_epoch,
            "zk": {"leader": ctrl.leader, "leader_epoch": ctrl.leader_epoch,
                   "isr": members(ctrl.isr), "replicas": ctrl.assigned_replicas},
        }
        if self.cfg.elr:
            out["zk"]["elr"] = members(ctrl.elr)
            out["zk"]["last_known_elr"] = members(ctrl.last_known_elr)
        for b, br in enumerate(brokers):
            view: dict[str, Any] = {
                "alive": bool(br.alive), "log": log(br.log), "hw": br.high_watermark,
                "leader": br.leader, "leader_epoch": br.leader_epoch,
            }
            if self.cfg.hw_checkpoint:
                view["hw_checkpoint"] = br.hw_checkpoint
            if self.power_loss:
                view["flushed"] = br.flushed
            if self.cfg.elr and br.unclean_shutdown:
                view["unclean_shutdown"] = True
            if br.truncating:
                view["truncating"] = True
            if br.awaiting_first_leader_and_isr:
                view["hw_checkpoint_thread"] = False
            if br.leader == b:
                view["isr"] = members(br.in_sync_replica_ids)
                if br.pending_isr:
                    view["pending_isr"] = members(br.pending_isr)
                if br.alter_partition:
                    view["alter_partition"] = ALTER_TEXT[br.alter_partition]
                view["remote_leo"] = {
                    i: r.log_end_offset for i, r in enumerate(br.remotes) if i != b
                }
                if self.cfg.isr_shrink:
                    view["remote_age"] = {
                        i: r.age for i, r in enumerate(br.remotes) if i != b
                    }
                    if self.previous_fetch:
                        view["remote_last_fetch"] = {
                            i: {"leader_leo": r.last_fetch_leader_leo, "age": r.last_fetch_age}
                            for i, r in enumerate(br.remotes) if i != b
                        }
            if self.cfg.metadata:
                view["metadata"] = br.metadata_cache
            if self.split:
                view["fetch_response"] = self._fetch_text(br.fetch_in_flight)
            out[f"broker{b}"] = view
        out["requests"] = tuple(self._msg_text(m) for m in msgs)
        nid = ghost.next_id
        out["produced"] = nid
        out["committed"] = {f"m{i}": e for i, e in enumerate(ghost.committed) if e >= 0}
        out["acknowledged"] = {f"m{i}": e for i, e in enumerate(ghost.acked) if e >= 0}
        if self.cfg.consumers:
            out["consumed"] = {f"m{i}": e for i, e in enumerate(ghost.consumed) if e >= 0}
        out["pending_acks"] = tuple(f"m{i}@b{b}" for i, b in ghost.pending)
        out["unclean_election_happened"] = bool(ghost.flags & F_UNCLEAN)
        if not self.cfg.kafka_7414:
            out["broker_halted"] = bool(ghost.flags & F_HALTED)
        if self.skip:
            out["hw_checkpoint_lost"] = bool(ghost.flags & F_CHECKPOINT_LOST)
        return out

    def _fetch_text(self, r: FetchResponse | tuple[()]) -> str | None:
        """A follower's fetch response in flight, as text (``None``: no fetch in flight)."""
        if not r:
            return None
        c = self.codec
        recs = ", ".join(f"m{c.record_id(x)}@{c.epoch(x)}" for x in r.records)
        error = " error (epoch mismatch)" if r.error else ""
        return (f"from {r.leader} epoch {r.leader_epoch}: offset {r.fetch_offset} [{recs}] "
                f"hw {r.high_watermark}{error}")

