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

Modelling shortcuts (each is a choice a researcher can see in the state):

* one partition; brokers ``0..n-1`` are all assigned replicas; the initial state is the
  topic just created: broker 0 leads epoch 0 with every broker in the ISR and every broker
  has already received that first LeaderAndIsr;
* ZooKeeper writes are atomic; a leader's ISR write is conditional on the leader's epoch
  being ZooKeeper's (Kafka's ``zkVersion`` check: every controller write bumps the epoch);
  ``zkVersion`` itself is not stored (it would grow without bound);
* by default (``fetch=atomic``) a fetch is one atomic round trip (request, leader update,
  response, follower append); with ``fetch=split`` the request (leader side) and the
  response (follower side) are two steps, one fetch in flight per follower, and the
  response may be lost (``lost_requests``) or discarded as stale (the follower changed
  leader or epoch, or the leader died: its connection is gone); either way the response
  carries the HW the leader had before the fetch (``readFromLocalLog`` runs first), so
  followers learn a new HW one fetch late, as in Kafka;
* time is a logical clock: ``Tick`` ages every follower of every leader by one tick;
  a follower whose read reached the leader's LEO has age 0; ``maybe_shrink_isr`` drops ISR
  followers older than ``lag_ticks``; with ``kafka_4485`` (Kafka 0.10.2+, the default) a
  read reaching the leader's LEO of the follower's previous fetch takes that fetch's age,
  and the HW waits for followers of age <= ``lag_ticks`` as well as the ISR (every step
  runs at "now" = ``lag_ticks + 1``);
* a crashed broker forgets its in-memory state (partition state, remotes, fetchers,
  metadata); its log survives whole (clean) or only up to the last ``Flush`` (unclean); its
  HW comes back from the checkpoint (``hw_checkpoint``) or unchanged;
* the controller learns of crashes and restarts at once (ZooKeeper sessions are not
  modelled) but acts on them in separate steps; requests in flight to a broker that crashes
  are dropped with its connection; a restarted broker receives the current state, as
  ``onBrokerStartup`` sends it;
* controller requests travel in channels, one per (controller epoch, destination) as
  ``ControllerChannelManager`` keeps one queue and one ``RequestSendThread`` per broker: a
  broker handles a channel's requests in queue order; a crash drops its channels; after a
  ``ControllerFailover`` the old controller's channels may still deliver, in order (what a
  request never delivered leaves is the queue ``onControllerResignation`` cleared);
  reordering, loss and duplicates are the faults ``reorder_requests``, ``lost_requests``,
  ``duplicate_requests`` (docs/kafka-model.md, the audit table);
* reassignment is modelled as a new preference order of the same replicas, electing with
  ``ReassignedPartitionLeaderSelector`` (moving replicas to new brokers is not modelled);
* with ``fetch_fencing=final`` (KIP-320, the default) a fetch or a leader-epoch
  truncation against a leader in another epoch is refused (the follower retries later);
  the refused fetch still makes the follower's LEO unknown on the leader
  (``FencedFetch``), as Kafka 2.1's ``readFromLocalLog`` / ``updateFollowerLogReadResults``
  do; with ``first-design`` (KIP-320's first design, never released) ``make_follower``
  truncates nothing, a fetch carries the epoch of the follower's last record, the leader
  records it (HW, ISR) before comparing that epoch with its own record's at that offset,
  and answers a mismatch with an error on which the follower truncates against the
  leader's log (``FetchError``; with ``fetch=split`` on its ``FetchResponse``); ``none``
  is Kafka <= 2.0;
* the defaults are the newest behaviour covered (Kafka 2.1's broker rules, unchanged
  through 4.0, with ``unavailable_leader=fetcher`` and KIP-966's ``elr``); the version
  parameters (``truncation``, ``fetch_fencing``, ``expand_rule``, ``kafka_4485``,
  ``kafka_7414``, ``elr``, ``unavailable_leader``, ``isr_changes``, ``fence_ineligible``)
  select older versions, and
  docs/protocol-map.md lists what remains different from Kafka's Scala;
* with ``elr`` (KIP-966) the controller keeps KRaft's ELR and last-known ELR beside
  ZooKeeper's ISR and elects as ``PartitionChangeBuilder`` does (``isrlab.spec.kafka.elr``); a
  leaderless partition names no leader and is sent nothing; ``Crash`` is a clean shutdown,
  ``PowerLoss`` an unclean one; ``unavailable_leader`` says what a follower told to follow
  a down leader does (truncate at once, the default shortcut; wait for it, ``fetcher``;
  ignore the request, ``create-log``);
* with ``isr_changes=alter-partition`` (KIP-497, Kafka 2.7+, the default) a leader proposes
  ISR changes to the controller instead of writing ZooKeeper: ``ShrinkIsr`` / ``Fetch``
  propose (one proposal in flight), ``AlterPartition`` is the controller's answer and
  ``AlterPartitionResponse`` the leader's commit; the HW counts the ISR of ``hw_isr``
  (Kafka's maximal ISR; ``committed`` is the fault KIP-497 rejected); the partition epoch
  is not state (see ``_a_alter_partition``).
"""

from __future__ import annotations

import marshal
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, fields, replace
from functools import cache
from typing import Any

from returns.result import Failure, Success

from isrlab.checker.model import Property
from isrlab.core.alter_partition import (
    AlterPartitionRequest,
    AlterPartitionResponse,
    ControllerView,
    HwIsr,
    IsrState,
    PendingIsrChange,
    alter_partition,
    handle_alter_partition_response,
    hw_isr,
    prepare_isr_expand,
    prepare_isr_shrink,
)
from isrlab.core.elr import LogEnd, hw_may_advance
from isrlab.core.errors import ElectionError, ElectionFailed, Errors
from isrlab.core.fencing import FetchDecision, FetchFencing, fenced_read, fetch_decision
from isrlab.core.isr import (
    LogReadResult,
    leader_epoch_start_offset,
    maybe_shrink_isr,
    read_from_local_log,
    update_follower_fetch,
)
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
from isrlab.core.metadata_cache import (
    Broker,
    MetadataSnapshot,
    UpdateMetadataPartitionState,
    UpdateMetadataRequest,
    update_metadata,
)
from isrlab.core.partition import TruncationRule, raise_leader_hw, truncate_local_log
from isrlab.core.produce import (
    ACKS_ALL,
    ACKS_LEADER,
    ACKS_NONE,
    append_records_to_leader,
    check_enough_replicas_reach_offset,
    handle_offset_out_of_range,
    process_partition_data,
)
from isrlab.core.replica_manager import (
    LeaderAndIsrRequest,
    ReplicaManager,
    become_leader_or_follower,
)
from isrlab.core.selectors import (
    Election,
    Selection,
    controlled_shutdown_leader_selector,
    offline_partition_leader_selector,
    preferred_replica_partition_leader_selector,
    reassigned_partition_leader_selector,
)
from isrlab.core.state import (
    NO_LEADER,
    UNKNOWN_OFFSET,
    LeaderAndIsr,
    Partition,
    PartitionState,
    RemoteReplica,
    TopicPartition,
    last_stable_offset,
)
from isrlab.core.truncation import Log, Record
from isrlab.spec.kafka import elr as kip966
from isrlab.spec.kafka.elr import UNCLEAN_RECOVERIES
from isrlab.spec.kafka.memo import memoised
from isrlab.spec.kafka.state import (
    ALTER_ACCEPTED,
    ALTER_FENCED,
    ALTER_INELIGIBLE,
    ALTER_NONE,
    ALTER_SENT,
    F_CHECKPOINT_LOST,
    F_EPOCH_REGRESSED,
    F_HALTED,
    F_TRUNCATED,
    F_TWO_LEADERS,
    F_UNCLEAN,
    LEADER_AND_ISR,
    NONE,
    UPDATE_METADATA,
    BrokerPartition,
    Encoder,
    EpochCodec,
    FetchResponse,
    Ghost,
    KafkaState,
    MetadataView,
    RemoteReplicaView,
    Request,
    ZkPartitionState,
    from_plain,
    mask_of,
    members,
)
from isrlab.spec.kafka.truncation_versions import BY_PARAM

State = KafkaState
Out = list[tuple[str, State]]

TP = TopicPartition("t", 0)
TRUNCATIONS = BY_PARAM
ACKS = {"0": ACKS_NONE, "1": ACKS_LEADER, "all": ACKS_ALL}
CRASHES = ("none", "clean", "unclean")
EXPAND_RULES = ("hw", "epoch-start")
FETCH_MODES = ("atomic", "split")
UNAVAILABLE_LEADERS = ("follow", "fetcher", "create-log", "skip")
CRASH_LOSSES = ("all-unflushed", "tail")
ISR_CHANGES = ("zookeeper", "alter-partition")
HW_ISRS = ("maximal", "committed")
HW_CHECKPOINT_FILES = tuple(f.value for f in HwCheckpointFile)
FETCH_FENCINGS = {f.value: f for f in FetchFencing}
"""``fetch_fencing``'s values (``none``, ``first-design``, ``final``)."""
NO_FETCH: tuple[()] = ()
ALTER_TEXT = {ALTER_SENT: "sent", ALTER_ACCEPTED: "accepted",
              ALTER_FENCED: "FENCED_LEADER_EPOCH", ALTER_INELIGIBLE: "INELIGIBLE_REPLICA"}
"""How a trace shows a leader's AlterPartition round trip."""


@dataclass(frozen=True, slots=True)
class KafkaConfig:
    """Every parameter of the ``kafka`` model (see ``isrlab.spec.kafka.PARAMS`` for their
    meaning)."""

    brokers: int = 2
    max_records: int = 2
    max_leader_epoch: int = 2
    truncation: str = "kip279"
    fetch_fencing: str = "final"
    expand_rule: str = "epoch-start"
    unclean_election: bool = False
    min_isr: int = 1
    acks: str = "all"
    lag_ticks: int = 0
    isr_shrink: bool = True
    crashes: str = "clean"
    hw_checkpoint: bool = False
    reorder_requests: bool = False
    lost_requests: bool = False
    duplicate_requests: bool = False
    controlled_shutdown: bool = False
    preferred_election: bool = False
    reassignment: bool = False
    remove_dead_from_isr: bool = True
    max_controller_epoch: int = 0
    metadata: bool = False
    consumers: bool = False
    initial_isr: int = 0
    fetch: str = "atomic"
    kafka_4485: bool = True
    kafka_7414: bool = True
    elr: bool = True
    unclean_recovery: str = "first-alive"
    unavailable_leader: str = "fetcher"
    crash_loss: str = "all-unflushed"
    isr_changes: str = "alter-partition"
    hw_isr: str = "maximal"
    fence_ineligible: bool = True
    hw_checkpoint_file: str = "fsync"

    def __reduce__(self) -> tuple[type[KafkaConfig], tuple[object, ...]]:
        """Pickled as its field values in order: the class compiled by mypyc (setup.py) is
        a native frozen class, which pickle's default cannot fill in field by field."""
        return (KafkaConfig, tuple(getattr(self, f.name) for f in fields(self)))

    def problems(self) -> list[str]:
        """Why this configuration is unusable (empty when it is fine)."""
        out = []
        if not 1 <= self.brokers <= 6:
            out.append(f"brokers must be in 1..6, got {self.brokers}")
        if self.truncation not in TRUNCATIONS:
            out.append(f"truncation must be one of {', '.join(TRUNCATIONS)}")
        if self.acks not in ACKS:
            out.append(f"acks must be one of {', '.join(ACKS)}")
        if self.crashes not in CRASHES:
            out.append(f"crashes must be one of {', '.join(CRASHES)}")
        if self.expand_rule not in EXPAND_RULES:
            out.append(f"expand_rule must be one of {', '.join(EXPAND_RULES)}")
        for name, value, allowed in (
            ("unclean_recovery", self.unclean_recovery, UNCLEAN_RECOVERIES),
            ("unavailable_leader", self.unavailable_leader, UNAVAILABLE_LEADERS),
            ("crash_loss", self.crash_loss, CRASH_LOSSES),
            ("isr_changes", self.isr_changes, ISR_CHANGES),
            ("hw_isr", self.hw_isr, HW_ISRS),
            ("hw_checkpoint_file", self.hw_checkpoint_file, HW_CHECKPOINT_FILES),
        ):
            if value not in allowed:
                out.append(f"{name} must be one of {', '.join(allowed)}")
        if self.fetch not in FETCH_MODES:
            out.append(f"fetch must be one of {', '.join(FETCH_MODES)}")
        if self.fetch_fencing not in FETCH_FENCINGS:
            out.append(f"fetch_fencing must be one of {', '.join(FETCH_FENCINGS)}")
        if self.initial_isr > self.brokers:
            out.append(f"initial_isr {self.initial_isr} exceeds the {self.brokers} replicas")
        if self.min_isr > self.brokers:
            out.append(f"min_isr {self.min_isr} exceeds the {self.brokers} replicas")
        if self.max_leader_epoch > 60 or self.max_records > 30:
            out.append("max_leader_epoch <= 60 and max_records <= 30, please")
        return out

    @property
    def fencing(self) -> FetchFencing:
        """``fetch_fencing`` as ``isrlab.core.fencing.FetchFencing`` (a valid value only)."""
        return FETCH_FENCINGS[self.fetch_fencing]


def _keep_log(follower_log: Log, follower_hw: int, leader_log: Log) -> int:
    """The ``TruncationRule`` of ``make_follower`` under KIP-320's first design: truncate
    nothing (the follower truncates later, on a fetch error: ``KafkaModel._fetch``)."""
    return len(follower_log)


@cache
def _snapshot(alive_mask: int) -> MetadataSnapshot:
    """A MetadataSnapshot listing the brokers of ``alive_mask`` as alive (memoised)."""
    return MetadataSnapshot(alive_brokers=tuple(Broker(i, ()) for i in members(alive_mask)))


class KafkaModel:
    """The ``kafka`` model for one configuration (see the module docstring)."""

    def __init__(self, config: KafkaConfig, invariants: Sequence[str] | None = None) -> None:
        from isrlab.spec import invariants as catalogue  # the catalogue imports this package

        problems = config.problems()
        if problems:
            raise ValueError("; ".join(problems))
        self.name = "kafka"
        self.cfg = config
        self.n = config.brokers
        self.codec = EpochCodec(config.max_leader_epoch + 1)
        self.sat = config.lag_ticks + 1
        self.rule: TruncationRule = TRUNCATIONS[config.truncation].explicit
        self.acks = ACKS[config.acks]
        self.all_mask = (1 << self.n) - 1
        self.split = config.fetch == "split"
        # KIP-320: final (2.1+) fences fetches and truncation by leader epoch; the first
        # design records a fetch first and truncates lazily, never in make_follower
        self.fenced = config.fencing is FetchFencing.FINAL
        self.first_design = config.fencing is FetchFencing.FIRST_DESIGN
        self.follow_rule: TruncationRule = _keep_log if self.first_design else self.rule
        # the fetcher's pending truncation when a follower's leader is down (0.11+ rules)
        self.deferred_truncation = (config.unavailable_leader == "fetcher"
                                    and config.truncation != "hw" and not self.first_design)
        self.extended = config.elr or config.unavailable_leader in ("fetcher", "skip")
        self.skip = config.unavailable_leader == "skip"
        # KIP-497: the leader proposes ISR changes to the controller (AlterPartition)
        self.alter = config.isr_changes == "alter-partition"
        self.hw_rule = HwIsr(config.hw_isr)
        # KAFKA-4485 (0.10.2+): caught-up replicas count for the HW, within lag_ticks
        self.hw_lag: int | None = config.lag_ticks if config.kafka_4485 else None
        self.previous_fetch = config.kafka_4485
        # a remote's previous fetch, unknown (a new leader's UnknownLogReadResult)
        self.no_fetch: tuple[int, ...] = (0, self.sat) if config.kafka_4485 else ()
        self._encoder = Encoder(self.previous_fetch, self.extended, self.alter,
                                self.first_design)
        self._memo: dict[str, dict[object, object]] = {}  # memoised methods' caches
        self._selected = None if invariants is None else tuple(invariants)
        known = catalogue.kafka_invariants(self)
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
        self._sometimes = tuple(catalogue.kafka_sometimes(self))

    # ------------------------------------------------------------------ protocol
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
        return (KafkaState(ctrl, tuple(brokers), (), ghost),)

    def next_states(self, state: State) -> Iterable[tuple[str, State]]:
        """Every enabled step (see the docstrings of the ``_a_*`` methods)."""
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
        if cfg.crashes != "none":
            self._a_crash(state, out)
            self._a_restart(state, out)
            if cfg.crashes == "unclean":
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
        return out

    def invariants(self) -> Sequence[Property[State]]:
        """The selected invariants of ``isrlab.spec.invariants`` (all by default)."""
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

    def __reduce__(self) -> tuple[type[KafkaModel], tuple[KafkaConfig, tuple[str, ...] | None]]:
        """The model as pickled (Spark's broadcast, worker processes): the arguments it was
        built from, so each copy rebuilds its memoised results and encoder for itself."""
        return (KafkaModel, (self.cfg, self._selected))

    def encode(self, state: State) -> bytes:
        """``marshal`` version 2 of the state as plain tuples (``to_plain``: ``marshal``
        refuses tuple subclasses; version 2 writes no back-references, so the bytes are
        deterministic); ``isrlab.spec.kafka.state.Encoder`` assembles the same bytes from
        memoised per-component bytes."""
        return self._encoder(state)

    def decode(self, data: bytes) -> State:
        """The inverse of ``encode``."""
        value = marshal.loads(data)
        assert isinstance(value, tuple)
        return from_plain(value)

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
            if self.cfg.crashes == "unclean":
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

    @staticmethod
    def _msg_text(m: Request) -> str:
        dest, kind, cep, leader, epoch, isr, *_ = m
        name = "LeaderAndIsr" if kind == LEADER_AND_ISR else "UpdateMetadata"
        return f"{name}(to={dest},cepoch={cep},leader={leader},epoch={epoch},isr={members(isr)})"

    # ------------------------------------------------------------------ conversions
    @memoised
    def log_records(self, codes: tuple[int, ...]) -> Log:
        """The ``core`` log of a state's log (records as ``Record(id, epoch)``; memoised)."""
        c = self.codec
        return tuple(Record(x // c.epochs, x % c.epochs) for x in codes)

    def partition(self, state: State, b: int) -> Partition:
        """Broker ``b``'s ``isrlab.core.state.Partition``, rebuilt from its ``BrokerPartition``."""
        return self.broker_partition(state.brokers[b], b)

    @memoised
    def broker_lso_le_hw(self, br: BrokerPartition, b: int) -> bool:
        """``isrlab.spec.invariants.lso_le_hw`` for broker ``b`` holding ``br``: its
        ``core`` last stable offset is at most its HW (memoised)."""
        return last_stable_offset(self.broker_partition(br, b)) <= br.high_watermark

    @memoised
    def broker_partition(self, br: BrokerPartition, b: int) -> Partition:
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
        log = tuple(r.id * c.epochs + r.epoch for r in p.log)
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
        if self.cfg.crashes == "unclean":
            flushed = min(flushed, len(log))
        ckpt = br.hw_checkpoint if self.cfg.hw_checkpoint else 0
        hw = p.high_watermark
        if (self.cfg.elr and leader == b
                and not hw_may_advance(isr.bit_count(), self.cfg.min_isr)):
            # KIP-966: maybeIncrementLeaderHW returns early while the ISR is below
            # min.insync.replicas (the HW may still drop with the log).
            hw = min(hw, br.high_watermark)
        return BrokerPartition(br.alive, log, hw, ckpt, flushed, p.leader_epoch,
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
        return KafkaState(state.controller, (*brokers[:b], br, *brokers[b + 1:]),
                          state.channels, state.ghost)

    @staticmethod
    def _set(t: tuple[Any, ...], i: int, v: Any) -> tuple[Any, ...]:
        return (*t[:i], v, *t[i + 1:])

    def _is_acting_leader(self, state: State, b: int) -> bool:
        br = state.brokers[b]
        return bool(br.alive) and br.leader == b

    # ------------------------------------------------------------------ ghost upkeep
    def _after_leader_step(self, state: State, b: int) -> State:
        """Ghost upkeep after a step of leader ``b``: newly committed records, and
        waiting acks=all produce requests re-checked (``tryCompleteDelayedRequests``)."""
        ghost = self._ghost_after_leader_step(state.brokers[b], b, state.ghost)
        if ghost is None:
            return state
        return KafkaState(state.controller, state.brokers, state.channels, ghost)

    @memoised
    def _ghost_after_leader_step(self, br: BrokerPartition, b: int,
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
        return KafkaState(state.controller, state.brokers, state.channels, ghost)

    # ------------------------------------------------------------------ producers
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
            s = self._after_leader_step(KafkaState(s.controller, s.brokers, s.channels, g), b)
            out.append((self._label("Produce", b), s))

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

    # ------------------------------------------------------------------ fetch
    def _a_fetch(self, state: State, out: Out) -> None:
        """``Fetch(f)``: follower ``f`` fetches from the leader it believes in, one round trip
        (``fetch=atomic``), or ``FetchRequest(f)``: its request is handled by the leader and
        the response queued (``fetch=split``; one fetch in flight per follower).

        The leader reads from ``f``'s LEO (``read_from_local_log``), records the fetch and
        maybe expands the ISR and raises its HW (``update_follower_fetch``; with
        ``expand_rule=epoch-start`` a follower joins only from the leader epoch's start
        offset; the ISR write fails when the leader's epoch is not ZooKeeper's); the follower
        appends the records and takes ``min(leader HW, own LEO)`` (``_apply_response``).
        A fetch at an offset past the leader's LEO fails (OFFSET_OUT_OF_RANGE): the leader
        records the follower's LEO as unknown (``updateFollowerLogReadResults`` passes
        failed reads on) and the follower runs ``handle_offset_out_of_range``: it truncates
        to the leader's LEO (Kafka 2.1+, KAFKA-7414) or, with ``kafka_7414=false`` and
        unclean election disabled, its broker exits (``FatalExitError``, Kafka 0.10.2-2.0).
        With ``fetch_fencing=final`` (KIP-320, 2.1+) the fetch carries the follower's
        leader epoch and a leader in another epoch refuses it (FENCED_LEADER_EPOCH /
        UNKNOWN_LEADER_EPOCH), recording the follower's LEO as unknown (``FencedFetch``).
        With ``fetch_fencing=first-design`` (KIP-320's first design, never released) the
        fetch carries the epoch of the follower's last record; the leader records it first
        (the fetch counts for the HW and the ISR), then compares that epoch with the epoch
        of its own record at the same offset, and on a mismatch answers an error with no
        records, on which the follower truncates (``FetchError``, ``_first_design``).  A
        fetch that would change nothing is not a step.
        """
        brokers = state.brokers
        for f in range(self.n):
            fb = brokers[f]
            lid = fb.leader
            if not fb.alive or lid in (NONE, f) or not brokers[lid].alive or fb.fetch_in_flight:
                continue
            lb = brokers[lid]
            if lb.leader != lid:
                continue  # NOT_LEADER_FOR_PARTITION: nothing changes
            if fb.truncating:
                if not self.fenced or lb.leader_epoch == fb.leader_epoch:
                    out.append((self._label("Truncate", f), self._truncate(state, f, lid)))
                continue
            if self.fenced and lb.leader_epoch != fb.leader_epoch:
                fenced = self._fenced_fetch(state, f, lid, lb.leader_epoch > fb.leader_epoch)
                if fenced != state:
                    out.append((self._label("FencedFetch", f), fenced))
                continue
            decision = self._first_design(fb.log, lb.log) if self.first_design else None
            s = self._fetch(state, f, lid, decision)
            if s is not None and s != state:
                label = ("FetchRequest" if self.split
                         else "FetchError" if decision is not None
                         and decision.error is not Errors.NONE else "Fetch")
                out.append((self._label(label, f), s))

    def _first_design(self, log: tuple[int, ...], leader_log: tuple[int, ...]
                      ) -> FetchDecision | None:
        """KIP-320's first design: the leader's decision on a fetch from a follower with
        ``log`` (``isrlab.core.fencing.fetch_decision``).  The fetch carries the epoch the
        follower expects at its fetch offset, the epoch of its last record (the first
        draft's "epoch of the last fetch"); the leader compares it with the epoch of its
        own record just below that offset (what its leader-epoch cache says of it), in
        either direction, as the TLA+ ``Kip320FirstTry``'s FollowerFetch / FollowerTruncate
        do.  ``None`` when there is nothing to compare: an empty follower log (no expected
        epoch, like the sentinel -1) or a fetch offset past the leader's LEO (answered
        OFFSET_OUT_OF_RANGE as before).  Shortcut: the mismatch is core's
        FENCED_LEADER_EPOCH / UNKNOWN_LEADER_EPOCH; the draft named it LOG_TRUNCATION, and
        the error is not kept in the state."""
        offset = len(log)
        if offset == 0 or offset > len(leader_log):
            return None
        c = self.codec
        return fetch_decision(FetchFencing.FIRST_DESIGN, c.epoch(leader_log[offset - 1]),
                              c.epoch(log[-1]))

    def _truncate(self, state: State, f: int, lid: int) -> State:
        """``Truncate(f)`` (``unavailable_leader=fetcher``): the leader ``lid`` is back and
        answers ``OffsetsForLeaderEpoch`` (with KIP-320 only in ``f``'s epoch), and ``f``'s
        fetcher truncates by the configured rule (``AbstractFetcherThread.maybeTruncate``),
        then fetches as usual.  Also the follower's side of ``FetchError(f)``
        (``fetch_fencing=first-design``): the same truncation, on the fetch error."""
        fb = state.brokers[f]
        newbr = self._truncated(fb, f, state.brokers[lid].log)
        s = self._set_broker(state, f, newbr)
        return self._flag(s, F_TRUNCATED) if len(newbr.log) < len(fb.log) else s

    @memoised
    def _truncated(self, fb: BrokerPartition, f: int,
                   leader_codes: tuple[int, ...]) -> BrokerPartition:
        """Follower ``f`` holding ``fb`` truncated by the configured rule against the leader's
        log ``leader_codes`` (``_truncate``; memoised)."""
        p = self.broker_partition(fb, f)
        leader_log = self.log_records(leader_codes)
        offset = min(max(0, self.rule(p.log, p.high_watermark, leader_log)), len(p.log))
        newp = truncate_local_log(p, offset)
        return self._with_partition(fb, newp)._replace(truncating=0)

    def _fenced_fetch(self, state: State, f: int, lid: int, follower_older: bool) -> State:
        """A fetch the leader refuses for its epoch (KIP-320): Kafka 2.1's ``readFromLocalLog``
        answers FENCED_LEADER_EPOCH (the follower is in an older epoch) or
        UNKNOWN_LEADER_EPOCH (a newer one) and the leader records the failed read (the
        follower's LEO unknown); the follower changes nothing and fetches again later."""
        newlb = self._fenced_at_leader(state.brokers[lid], lid, f, len(state.brokers[f].log),
                                       follower_older)
        return state if newlb is None else self._set_broker(state, lid, newlb)

    @memoised
    def _fenced_at_leader(self, lb: BrokerPartition, lid: int, f: int, offset: int,
                          follower_older: bool) -> BrokerPartition | None:
        """Leader ``lid`` holding ``lb`` after it refused ``f``'s fetch at ``offset`` for its
        epoch, ``None`` when nothing changes (``_fenced_fetch``; memoised)."""
        leader = self.broker_partition(lb, lid)
        error = Errors.FENCED_LEADER_EPOCH if follower_older else Errors.UNKNOWN_LEADER_EPOCH
        read = LogReadResult(offset, 0, len(leader.log), leader.high_watermark,
                             0, (), self.sat, error)
        update = update_follower_fetch(leader, f, read).unwrap()
        if update.partition == leader:
            return None
        return self._with_partition(lb, update.partition)

    def _fetch(self, state: State, f: int, lid: int,
               decision: FetchDecision | None = None) -> State | None:
        """The leader side of a fetch, then the response: applied at once (atomic), or put
        in flight on ``f`` (split; ``None`` when it would change nothing).

        ``decision`` (``fetch_fencing=first-design``, ``_first_design``): the leader records
        the fetch as any other (LEO, ISR expansion, HW) and, on a mismatch, answers the
        error with no records (``isrlab.core.fencing.fenced_read``); the follower then
        truncates lazily, on that error: the OffsetsForLeaderEpoch round trip that follows
        it is folded into the step, so ``f`` truncates by the configured ``truncation``
        rule against the leader's log as the fetch left it (``_truncate``; with the default
        kip279, after the largest offset both logs agree on, as the TLA+ FollowerTruncate's
        FirstNonMatchingOffsetFromTail), and takes no HW from the answer."""
        fb, lb = state.brokers[f], state.brokers[lid]
        at_leader = self._fetch_at_leader(lb, lid, f, len(fb.log), decision,
                                          self._may_join(state, lid))
        if at_leader is None:
            return None
        newlb, written, upkeep, response = at_leader
        s = self._set_broker(state, lid, newlb)
        if written is not None:
            s = self._write_isr(s, lid, written)
        if upkeep:
            s = self._after_leader_step(s, lid)
        if response.error and not self.split:
            # first design: the error, no records; the follower truncates on it
            return self._truncate(s, f, lid)
        if not self.split:
            return self._apply_response(s, f, response)
        if s == state and self._apply_response(state, f, response) == state:
            return None  # an idle fetch: nothing would change on either side
        return self._set_broker(s, f, s.brokers[f]._replace(fetch_in_flight=response))

    @memoised
    def _fetch_at_leader(
        self, lb: BrokerPartition, lid: int, f: int, offset: int,
        decision: FetchDecision | None, may_join: bool,
    ) -> tuple[BrokerPartition, Partition | None, bool, FetchResponse] | None:
        """The leader's side of ``f``'s fetch at ``offset`` from leader ``lid`` holding
        ``lb`` (``_fetch``; ``may_join``: ``_may_join``): the leader's new tuple, the
        ``Partition`` whose ISR is written to ZooKeeper (``None``: no write), whether the
        ghost upkeep of a leader step follows, and the response; ``None`` when the fetch
        fails (memoised)."""
        leader = self.broker_partition(lb, lid)
        leader_leo = len(leader.log)
        read = read_from_local_log(leader, offset, 0, self.sat).unwrap()
        if read.error is Errors.OFFSET_OUT_OF_RANGE:
            # The leader records the failed read (the follower's LEO becomes unknown).
            failed = update_follower_fetch(leader, f, read).unwrap().partition
            return (self._with_partition(lb, failed), None, False,
                    FetchResponse(lid, leader.leader_epoch, offset, leader_leo,
                                  leader.high_watermark, ()))
        start = (leader_epoch_start_offset(leader)
                 if self.cfg.expand_rule == "epoch-start" else None)
        answer = read if decision is None else fenced_read(read, decision)
        recorded = read if decision is None or decision.record_fetch else answer
        update = update_follower_fetch(
            leader, f, recorded, since_previous_fetch=self.previous_fetch,
            leader_epoch_start=start, hw_lag_ms=self.hw_lag,
        ).unwrap()
        if update.error is not Errors.NONE:
            return None
        new_leader = update.partition
        written: Partition | None = None
        if update.isr_changed and self.alter:
            newlb = self._proposed_expand(lb, lid, leader, new_leader, f)
        else:
            if update.isr_changed and not may_join:
                # The conditional ZooKeeper write failed: the ISR stays, the fetch counts.
                new_leader = raise_leader_hw(
                    replace(leader, remotes=new_leader.remotes), self.sat, self.hw_lag
                ).partition
            elif update.isr_changed:
                written = new_leader
            newlb = self._with_partition(lb, new_leader)
        if answer.error is not Errors.NONE:
            response = FetchResponse(lid, leader.leader_epoch, offset, leader_leo,
                                     read.high_watermark, (), 1)
        else:
            response = FetchResponse(lid, leader.leader_epoch, offset, leader_leo,
                                     read.high_watermark, lb.log[offset:])
        return newlb, written, True, response

    def _apply_response(self, state: State, f: int, r: FetchResponse) -> State:
        """The follower side of a fetch: append and take the HW (``process_partition_data``),
        or, for an offset past the leader's LEO, ``handle_offset_out_of_range``: truncate to
        that LEO, or exit the broker (``kafka_7414=false``, unclean election disabled).
        KIP-320's first-design error (``fetch=split``): the follower asks the leader
        (``OffsetsForLeaderEpoch``) and truncates by the ``truncation`` rule against its
        log as it is now (``_truncate``); if that broker no longer leads, it is answered
        NOT_LEADER and changes nothing (it fetches again)."""
        if r.error:
            lb = state.brokers[r.leader]
            if not (lb.alive and lb.leader == r.leader):
                return state
            return self._truncate(state, f, r.leader)
        newfb = self._response_applied(state.brokers[f], f, r)
        if newfb is None:
            return self._flag(self._crashed(state, f, False), F_HALTED)
        s = self._set_broker(state, f, newfb)
        return self._flag(s, F_TRUNCATED) if r.fetch_offset > r.leader_leo else s

    @memoised
    def _response_applied(self, fb: BrokerPartition, f: int,
                          r: FetchResponse) -> BrokerPartition | None:
        """Follower ``f`` holding ``fb`` after it handled the (error-free) response ``r``;
        ``None`` when its broker exits (``_apply_response``; memoised)."""
        follower = self.broker_partition(fb, f)
        cut = r.leader_leo
        if r.fetch_offset > cut:
            out = handle_offset_out_of_range(
                follower, cut, 0, self.cfg.unclean_election, not self.cfg.kafka_7414
            ).unwrap()
            if out.fatal:
                return None
            return self._with_partition(fb, out.partition)
        follower = process_partition_data(
            follower, r.fetch_offset, self.log_records(r.records), r.high_watermark
        ).unwrap()
        return self._with_partition(fb, follower)

    def _a_fetch_response(self, state: State, out: Out) -> None:
        """``FetchResponse(f)`` (``fetch=split``): follower ``f`` handles its fetch response;
        a stale one (``f`` now follows another leader or epoch, or its LEO moved) is
        discarded, as the fetcher thread does.  ``LoseFetchResponse(f)`` with
        ``lost_requests``: the response never arrives (``f`` will fetch again)."""
        for f in range(self.n):
            fb = state.brokers[f]
            r = fb.fetch_in_flight
            if not r or not fb.alive:
                continue
            cleared = self._set_broker(state, f, fb._replace(fetch_in_flight=NO_FETCH))
            if self.cfg.lost_requests:
                out.append((self._label("LoseFetchResponse", f), cleared))
            stale = (fb.leader != r.leader or fb.leader_epoch != r.leader_epoch
                     or len(fb.log) != r.fetch_offset)
            s = cleared if stale else self._apply_response(cleared, f, r)
            if not (stale and self.cfg.lost_requests):
                out.append((self._label("FetchResponse", f), s))

    def _may_join(self, state: State, lid: int) -> bool:
        """Whether an ISR expansion ``core`` decided may be written: the conditional
        ZooKeeper write needs the leader's epoch to be ZooKeeper's (``zkVersion``)."""
        return bool(state.controller.leader_epoch == state.brokers[lid].leader_epoch)

    def _proposed_expand(self, br: BrokerPartition, lid: int, leader: Partition,
                         fetched: Partition, f: int) -> BrokerPartition:
        """``isr_changes=alter-partition`` (KIP-497, Kafka 2.7+): follower ``f`` may join
        the ISR, so the leader proposes it (``prepare_isr_expand``: nothing while a change
        is in flight) instead of writing ZooKeeper; the fetch counts and the HW rises over
        the ISR of the ``hw_isr`` rule of the new ISR state (the maximal ISR holds it at
        the joiner's LEO, the committed one does not): leader ``lid``'s new tuple."""
        committed = replace(leader, isr=frozenset(members(br.in_sync_replica_ids)))
        proposal = prepare_isr_expand(committed, self._isr_state(br), f).unwrap()
        view = replace(leader, remotes=fetched.remotes,
                       isr=hw_isr(proposal.state, self.hw_rule))
        raised = raise_leader_hw(view, self.sat, self.hw_lag).partition
        newbr = self._with_partition(br, raised)
        if proposal.request is not None:
            newbr = newbr._replace(pending_isr=mask_of(proposal.request.new_isr),
                                   alter_partition=ALTER_SENT)
        return newbr

    def _write_isr(self, state: State, lid: int, p: Partition) -> State:
        """The leader's ISR written to ZooKeeper and recorded as an ISR change."""
        ctrl = state.controller
        ctrl = ctrl._replace(isr=mask_of(p.isr))
        if self.cfg.elr:
            elr, lke = kip966.populate(state.controller, ctrl.isr, self.cfg.min_isr)
            ctrl = ctrl._replace(elr=elr, last_known_elr=lke)
        if self.cfg.metadata:
            ctrl = ctrl._replace(isr_change_set=ctrl.isr_change_set | 1 << lid)
        return KafkaState(ctrl, state.brokers, state.channels, state.ghost)

    # ------------------------------------------------------------------ ISR shrink
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
            out.append(("Tick", KafkaState(state.controller, tuple(aged), state.channels,
                                           state.ghost)))

    @memoised
    def _ticked(self, br: BrokerPartition, b: int) -> BrokerPartition | None:
        """Leader ``b`` holding ``br`` one tick later, ``None`` when none of its followers
        ages (``_a_tick``; memoised)."""
        rem = tuple(self._aged(r, self.sat, self.previous_fetch) if i != b else r
                    for i, r in enumerate(br.remotes))
        return br._replace(remotes=rem) if rem != br.remotes else None

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
        ISR followers not caught up for more than ``lag_ticks`` leave the ISR, written to
        ZooKeeper if the leader's epoch is current (else nothing happens).  With
        ``isr_changes=alter-partition`` the leader proposes the shrink instead
        (``_propose_shrink``)."""
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
            out.append((self._label("ShrinkIsr", b), s))

    @memoised
    def _shrunk(self, br: BrokerPartition, b: int) -> tuple[BrokerPartition, Partition] | None:
        """Leader ``b`` holding ``br`` after ``maybe_shrink_isr`` (its tuple and its
        ``Partition``), ``None`` when the ISR stays (memoised)."""
        update = maybe_shrink_isr(
            self.broker_partition(br, b), self.sat, self.cfg.lag_ticks, self.cfg.kafka_4485
        ).unwrap()
        if not update.isr_changed:
            return None
        return self._with_partition(br, update.partition), update.partition

    def _propose_shrink(self, state: State, b: int, out: Out) -> None:
        """``ShrinkIsr(b)`` with ``isr_changes=alter-partition`` (Kafka 2.7+): the
        isr-expiration task finds the ISR followers out of sync (``maybe_shrink_isr``'s
        rule) and proposes the ISR without them (``prepare_isr_shrink``: nothing while a
        change is in flight), whatever its epoch: the controller answers.  The committed
        ISR and the HW stay until then (a pending shrink's maximal ISR is the committed
        one)."""
        newbr = self._shrink_proposal(state.brokers[b], b)
        if newbr is not None:
            out.append((self._label("ShrinkIsr", b), self._set_broker(state, b, newbr)))

    @memoised
    def _shrink_proposal(self, br: BrokerPartition, b: int) -> BrokerPartition | None:
        """Leader ``b`` holding ``br`` once it proposed its ISR shrink, ``None`` when it
        proposes nothing (``_propose_shrink``; memoised)."""
        p = self.broker_partition(br, b)
        update = maybe_shrink_isr(p, self.sat, self.cfg.lag_ticks, self.cfg.kafka_4485).unwrap()
        if not update.isr_changed:
            return None
        proposal = prepare_isr_shrink(p, self._isr_state(br),
                                      p.isr - update.partition.isr).unwrap()
        if proposal.request is None:
            return None
        return br._replace(pending_isr=mask_of(proposal.request.new_isr),
                           alter_partition=ALTER_SENT)

    def _a_alter_partition(self, state: State, out: Out) -> None:
        """``AlterPartition(b)``: the controller handles leader ``b``'s proposal
        (``isrlab.core.alter_partition.alter_partition``: ``KafkaController.processAlterIsr``
        in ZooKeeper mode from 2.7, ``ReplicationControlManager.alterPartition`` in KRaft)
        and sends its answer back.  An accepted ISR is written with the same leader epoch
        (the next partition epoch), with ``elr`` the ELR follows it, and with ``metadata``
        every broker is sent UpdateMetadata.  Refused: FENCED_LEADER_EPOCH (``b``'s epoch
        is stale), and with ``fence_ineligible`` (KIP-841, 3.3+) INELIGIBLE_REPLICA for a
        proposed ISR holding a broker that is down.  Shortcut: the partition epoch
        (``zkVersion``) is not state; the leader's version is current exactly when its
        committed ISR is ZooKeeper's in its own epoch, since within a leader epoch only the
        leader's accepted proposals change the ISR and it has one in flight at a time
        (every controller-side ISR change bumps the leader epoch in this model)."""
        for b in range(self.n):
            br = state.brokers[b]
            if br.alter_partition != ALTER_SENT or not br.alive:
                continue
            ctrl = state.controller
            answer = self._alter_answer(ctrl, b, br.leader_epoch, br.in_sync_replica_ids,
                                        br.pending_isr, self._alive_mask(state))
            s = self._set_broker(state, b, br._replace(alter_partition=answer))
            if answer == ALTER_ACCEPTED and br.pending_isr != ctrl.isr:
                s = self._commit_alter_partition(s, br.pending_isr)
            out.append((self._label("AlterPartition", b), s))

    @memoised
    def _alter_answer(self, ctrl: ZkPartitionState, b: int, leader_epoch: int,
                      committed_isr: int, pending_isr: int, alive: int) -> int:
        """The controller's answer (``ALTER_*``) to leader ``b``'s proposal ``pending_isr``
        made in ``leader_epoch`` over its committed ISR, with the brokers of the mask
        ``alive`` alive (``alter_partition``; memoised)."""
        current = LeaderAndIsr(ctrl.leader, ctrl.leader_epoch, members(ctrl.isr), 1)
        version = int(committed_isr == ctrl.isr)
        request = AlterPartitionRequest(b, 0, leader_epoch, members(pending_isr), version)
        view = ControllerView(tuple((i, 0) for i in members(alive)),
                              frozenset(members(self.all_mask & ~alive)),
                              fence_ineligible=self.cfg.fence_ineligible)
        response = alter_partition(current, ctrl.assigned_replicas, request, view).unwrap()
        if response.error is Errors.NONE:
            return ALTER_ACCEPTED
        if response.error is Errors.INELIGIBLE_REPLICA:
            return ALTER_INELIGIBLE
        return ALTER_FENCED

    def _commit_alter_partition(self, state: State, isr: int) -> State:
        """The controller's write of an accepted ISR: ZooKeeper's ISR (same leader epoch),
        the ELR with ``elr``, UpdateMetadata to every broker with ``metadata``."""
        ctrl = state.controller._replace(isr=isr)
        if self.cfg.elr:
            elr, lke = kip966.populate(state.controller, isr, self.cfg.min_isr)
            ctrl = ctrl._replace(elr=elr, last_known_elr=lke)
        msgs = state.channels
        if self.cfg.metadata:
            msgs = self._enqueue(state, self._update_metadata_for_all(
                ctrl, ctrl.leader, ctrl.leader_epoch, isr, ctrl.assigned_replicas))
        return KafkaState(ctrl, state.brokers, msgs, state.ghost)

    def _a_alter_partition_response(self, state: State, out: Out) -> None:
        """``AlterPartitionResponse(b)``: leader ``b`` handles the controller's answer
        (``handle_alter_partition_response``): accepted, the proposed ISR is committed and
        the HW may rise (Kafka 3.0+, KAFKA-13091; 2.7-2.8 waited for the next fetch);
        INELIGIBLE_REPLICA, back to the committed ISR; FENCED_LEADER_EPOCH, the proposal
        stays pending until a LeaderAndIsr installs the controller's ISR."""
        for b in range(self.n):
            br = state.brokers[b]
            if br.alter_partition in (ALTER_NONE, ALTER_SENT) or not br.alive:
                continue
            s = self._set_broker(state, b, self._alter_response_handled(br, b))
            out.append((self._label("AlterPartitionResponse", b), self._after_leader_step(s, b)))

    @memoised
    def _alter_response_handled(self, br: BrokerPartition, b: int) -> BrokerPartition:
        """Leader ``b`` holding ``br`` after it handled the controller's answer and raised
        its HW (``_a_alter_partition_response``; memoised)."""
        before = self._isr_state(br)
        if br.alter_partition == ALTER_ACCEPTED:
            lai = LeaderAndIsr(b, br.leader_epoch, members(br.pending_isr), 1)
            response = AlterPartitionResponse(Errors.NONE, lai)
        elif br.alter_partition == ALTER_INELIGIBLE:
            response = AlterPartitionResponse(Errors.INELIGIBLE_REPLICA)
        else:
            response = AlterPartitionResponse(Errors.FENCED_LEADER_EPOCH)
        after = handle_alter_partition_response(before, br.leader_epoch, before,
                                                response).state
        pending = mask_of(after.pending.proposed_isr) if after.pending else 0
        newbr = br._replace(in_sync_replica_ids=mask_of(after.isr), pending_isr=pending,
                            alter_partition=ALTER_NONE)
        raised = raise_leader_hw(self.broker_partition(newbr, b), self.sat,
                                 self.hw_lag).partition
        return self._with_partition(newbr, raised)

    # ------------------------------------------------------------------ controller
    def _alive_mask(self, state: State) -> int:
        mask = 0
        for b, br in enumerate(state.brokers):
            if br.alive:
                mask |= 1 << b
        return mask

    def _current(self, state: State) -> LeaderAndIsr:
        ctrl = state.controller
        return LeaderAndIsr(ctrl.leader, ctrl.leader_epoch, members(ctrl.isr), 0)

    def _apply_election(
        self, state: State, selection: Selection, label: str, out: Out
    ) -> None:
        """A selector's election written to ZooKeeper, with LeaderAndIsr to its receivers."""
        if isinstance(selection, Failure):
            return
        election = selection.unwrap()
        s = self._write_zk(state, election.leader_and_isr, election.receivers)
        if s is not None:
            out.append((label, s))

    def _write_zk(
        self, state: State, lai: LeaderAndIsr, receivers: Iterable[int],
        ar: tuple[int, ...] | None = None, elected: kip966.Elected | None = None,
    ) -> State | None:
        """ZooKeeper takes ``lai`` (bounded by ``max_leader_epoch``); requests are queued.
        With ``elr`` the ELR follows the ISR (``maybePopulateTargetElr``), or is the one of
        ``elected``, a KRaft election, whose ``unclean`` also decides the unclean flag."""
        if lai.leader_epoch > self.cfg.max_leader_epoch:
            return None
        old = ctrl = state.controller
        old_live_isr = [r for r in members(ctrl.isr) if state.brokers[r].alive]
        ar = ctrl.assigned_replicas if ar is None else ar
        ctrl = ZkPartitionState(ctrl.controller_epoch, lai.leader, lai.leader_epoch,
                                mask_of(lai.isr), ar, ctrl.isr_change_set)
        if elected is not None:
            ctrl = ctrl._replace(elr=elected.elr, last_known_elr=elected.last_known_elr)
        elif self.cfg.elr:
            elr, lke = kip966.populate(old, ctrl.isr, self.cfg.min_isr)
            ctrl = ctrl._replace(elr=elr, last_known_elr=lke)
        # ControllerBrokerRequestBatch.sendRequestsToBrokers: the LeaderAndIsr requests
        # first, then UpdateMetadata to every broker (when some LeaderAndIsr was added).
        receivers = sorted(set(receivers))
        new = [Request(r, LEADER_AND_ISR, ctrl.controller_epoch, lai.leader, lai.leader_epoch,
                       ctrl.isr, ar) for r in receivers]
        if self.cfg.metadata and receivers:
            new += self._update_metadata_for_all(ctrl, lai.leader, lai.leader_epoch, ctrl.isr, ar)
        s = KafkaState(ctrl, state.brokers, self._enqueue(state, new), state.ghost)
        if elected.unclean if elected is not None else lai.leader not in old_live_isr:
            s = self._flag(s, F_UNCLEAN)
        return s

    def _a_elect(self, state: State, out: Out) -> None:
        """``ElectLeader``: the leader in ZooKeeper is dead: ``OfflinePartitionLeaderSelector``
        (clean from the live ISR, else unclean if enabled) elects in a new epoch."""
        ctrl = state.controller
        zl = ctrl.leader
        if zl != NONE and state.brokers[zl].alive:
            return
        alive = frozenset(members(self._alive_mask(state)))
        if self.cfg.elr:
            s = self._kraft_election(state, zl, False, (alive,))
            if s is not None and s != state:
                out.append(("ElectLeader", s))
            return
        selection = offline_partition_leader_selector(
            self._current(state), ctrl.assigned_replicas, alive, self.cfg.unclean_election
        )
        self._apply_election(state, self._recover(state, selection), "ElectLeader", out)

    def _log_ends(self, state: State) -> dict[int, LogEnd]:
        """What each live replica reports to KIP-966's unclean recovery (``GetReplicaLogInfo``):
        the epoch of its last record and its LEO."""
        c = self.codec
        return {b: LogEnd(c.epoch(br.log[-1]) if br.log else NONE, len(br.log))
                for b, br in enumerate(state.brokers) if br.alive}

    def _recover(self, state: State, selection: Selection) -> Selection:
        """With ``unclean_recovery`` other than ``first-alive``, an unclean election of
        ``OfflinePartitionLeaderSelector`` (the first live replica) is replaced by KIP-966's
        unclean recovery (the longest log, once enough replicas reported), or dropped while
        it would still wait."""
        if self.cfg.unclean_recovery == "first-alive" or isinstance(selection, Failure):
            return selection
        chosen = selection.unwrap()
        ctrl = state.controller
        if chosen.leader_and_isr.leader in [r for r in members(ctrl.isr)
                                            if state.brokers[r].alive]:
            return selection
        reg = kip966.registration(ctrl)
        reg = replace(reg, leader=NO_LEADER, isr=(), elr=())
        elected = kip966.elect(reg, frozenset(self._log_ends(state)),
                               self.cfg.min_isr, True, self.cfg.unclean_recovery,
                               self._log_ends(state))
        if elected is None:
            return Failure(ElectionFailed(ElectionError.NO_REPLICA_ONLINE,
                                          "unclean recovery waits for more replicas"))
        lai = chosen.leader_and_isr
        return Success(replace(chosen, leader_and_isr=LeaderAndIsr(
            elected.leader, lai.leader_epoch, (elected.leader,), lai.zk_version)))

    def _kraft_election(self, state: State, fenced: int, dirty: bool,
                        passes: tuple[frozenset[int], ...]) -> State | None:
        """With ``elr``: the controller fences the dead leader ``fenced`` and elects as
        KRaft's ``ReplicationControlManager.handleBrokerFenced`` and
        ``PartitionChangeBuilder.electLeader`` do with KIP-966 (``isrlab.spec.kafka.elr``): ISR,
        then ELR, then unclean; ``dirty``: ``fenced`` shut down uncleanly
        (``handleBrokerUncleanShutdown``: it leaves the ELR).  The live replicas are sent
        the outcome.  When nobody may lead, the partition stays offline: ZooKeeper's state
        then names no leader (``NONE``, same epoch: no broker is told), so that the next
        live replica's return elects.  ``None`` past ``max_leader_epoch``."""
        ctrl = state.controller
        # (the replicas' log ends matter only to KIP-966's unclean recovery)
        log_ends = (() if self.cfg.unclean_recovery == "first-alive"
                    else tuple(self._log_ends(state).items()))
        elected = self._fence_and_elect(ctrl, fenced, dirty, passes, log_ends)
        if elected.leader == NONE:
            ctrl = ctrl._replace(leader=NONE, isr=elected.isr, elr=elected.elr,
                                 last_known_elr=elected.last_known_elr)
            return KafkaState(ctrl, state.brokers, state.channels, state.ghost)
        lai = LeaderAndIsr(elected.leader, ctrl.leader_epoch + 1, members(elected.isr), 0)
        return self._write_zk(state, lai, members(self._alive_mask(state)), None, elected)

    @memoised
    def _fence_and_elect(self, ctrl: ZkPartitionState, fenced: int, dirty: bool,
                         passes: tuple[frozenset[int], ...],
                         log_ends: tuple[tuple[int, LogEnd], ...]) -> kip966.Elected:
        """``isrlab.spec.kafka.elr.fence_and_elect`` with this model's configuration
        (memoised; ``log_ends`` as ``(broker, LogEnd)`` pairs)."""
        cfg = self.cfg
        return kip966.fence_and_elect(ctrl, fenced, dirty, passes, cfg.min_isr,
                                      cfg.unclean_election, cfg.unclean_recovery,
                                      dict(log_ends))

    def _a_remove_dead_from_isr(self, state: State, out: Out) -> None:
        """``RemoveDeadFromIsr``: the controller moves dead followers to OfflineReplica and
        removes them from the ISR in ZooKeeper (new epoch), telling the live replicas."""
        ctrl = state.controller
        zl = ctrl.leader
        if zl == NONE or not state.brokers[zl].alive:
            return
        dead = [r for r in members(ctrl.isr) if r != zl and not state.brokers[r].alive]
        if not dead:
            return
        isr = tuple(r for r in members(ctrl.isr) if r not in dead)
        lai = LeaderAndIsr(zl, ctrl.leader_epoch + 1, isr, 0)
        live = [r for r in ctrl.assigned_replicas if state.brokers[r].alive]
        s = self._write_zk(state, lai, live)
        if s is not None:
            out.append(("RemoveDeadFromIsr", s))

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
                out.append((self._label("ControlledShutdown", b), self._crashed(s, b, False)))

    def _a_preferred_election(self, state: State, out: Out) -> None:
        """``PreferredElection``: ``PreferredReplicaPartitionLeaderSelector`` gives leadership
        back to the first assigned replica when it is alive and in the ISR."""
        ctrl = state.controller
        alive = frozenset(members(self._alive_mask(state)))
        selection = preferred_replica_partition_leader_selector(
            self._current(state), ctrl.assigned_replicas, alive
        )
        self._apply_election(state, selection, "PreferredElection", out)

    def _a_reassign(self, state: State, out: Out) -> None:
        """``Reassign(order)``: a new preference order of the same replicas, whose leader is
        elected by ``ReassignedPartitionLeaderSelector`` when it differs from the current."""
        ctrl = state.controller
        for order, election in self._reassignments(
                self._current(state), ctrl.assigned_replicas, self._alive_mask(state)):
            s = self._write_zk(state, election.leader_and_isr, election.receivers, order)
            if s is not None:
                out.append((self._label("Reassign", "".join(map(str, order))), s))

    @memoised
    def _reassignments(self, current: LeaderAndIsr, assigned_replicas: tuple[int, ...],
                       alive_mask: int) -> tuple[tuple[tuple[int, ...], Election], ...]:
        """Each new preference order with the election that changes the leader, in
        ``_permutations`` order (``_a_reassign``; memoised: the selector is a pure function
        of the controller's LeaderAndIsr, the order and the live brokers)."""
        alive = frozenset(members(alive_mask))
        found = []
        for order in _permutations(self.n):
            if order == assigned_replicas:
                continue
            selection = reassigned_partition_leader_selector(current, order, alive)
            if isinstance(selection, Success):
                election = selection.unwrap()
                if election.leader_and_isr.leader != current.leader:
                    found.append((order, election))
        return tuple(found)

    def _a_controller_failover(self, state: State, out: Out) -> None:
        """``ControllerFailover``: a new controller (epoch + 1) resends the ZooKeeper state to
        every live replica; requests of the old controller still in flight are now stale."""
        ctrl = state.controller
        if ctrl.controller_epoch >= self.cfg.max_controller_epoch:
            return
        ctrl = ctrl._replace(controller_epoch=ctrl.controller_epoch + 1)
        new = [Request(r, LEADER_AND_ISR, ctrl.controller_epoch, ctrl.leader, ctrl.leader_epoch,
                       ctrl.isr, ctrl.assigned_replicas)
               for r in ctrl.assigned_replicas if state.brokers[r].alive]
        msgs = self._enqueue(state, new)
        out.append(("ControllerFailover", KafkaState(ctrl, state.brokers, msgs, state.ghost)))

    def _a_propagate_isr_changes(self, state: State, out: Out) -> None:
        """``PropagateIsrChanges``: the ISR change notification reaches the controller, which
        sends UpdateMetadata with the ZooKeeper state to every broker."""
        ctrl = state.controller
        if not ctrl.isr_change_set:
            return
        msgs = self._enqueue(state, self._update_metadata_for_all(
            ctrl, ctrl.leader, ctrl.leader_epoch, ctrl.isr, ctrl.assigned_replicas))
        ctrl = ctrl._replace(isr_change_set=0)
        out.append(("PropagateIsrChanges", KafkaState(ctrl, state.brokers, msgs, state.ghost)))

    # ------------------------------------------------------------------ requests
    def _update_metadata_for_all(
        self, ctrl: ZkPartitionState, leader: int, leader_epoch: int, isr: int,
        assigned: tuple[int, ...],
    ) -> list[Request]:
        """One UpdateMetadata request per broker, in broker order, with the controller's epoch
        (``ControllerBrokerRequestBatch.addUpdateMetadataRequestForBrokers``, which Kafka
        sends to the live or shutting-down brokers; here one per broker, and ``_enqueue``
        drops those to dead brokers)."""
        return [Request(d, UPDATE_METADATA, ctrl.controller_epoch, leader, leader_epoch, isr,
                        assigned) for d in range(self.n)]

    def _enqueue(self, state: State, new: Iterable[Request]) -> tuple[Request, ...]:
        """The requests in flight of ``state`` with the requests ``new`` queued, in order;
        a request to a dead broker is dropped (``sendRequest`` finds no channel to it).

        Default: each request goes to the tail of its channel, the queue of the controller
        epoch's ``ControllerChannelManager`` for its destination (``sendRequest`` puts it in
        the broker's ``messageQueue``); channels are kept sorted by ``(controller epoch,
        destination)``, a stable sort keeping each channel's FIFO order.  An UpdateMetadata
        queued behind another UpdateMetadata of the same channel replaces it (the bound that
        keeps ISR changes from growing the queue without end; docs/kafka-model.md).  With
        ``reorder_requests`` the requests form a set (sorted, duplicates merged).  A
        LeaderAndIsr naming no leader (an offline partition, ``elr`` only) is not sent:
        the broker would have nothing to do with it."""
        return self._enqueued(state.channels, tuple(new), self._alive_mask(state))

    @memoised
    def _enqueued(self, channels: tuple[Request, ...], new: tuple[Request, ...],
                  alive: int) -> tuple[Request, ...]:
        """``_enqueue`` on the requests in flight ``channels`` with the brokers of the mask
        ``alive`` alive (memoised)."""
        new = tuple(m for m in new if alive >> m.dest & 1
                    and (m.leader != NONE or m.kind != LEADER_AND_ISR))
        if self.skip:
            new = tuple(m._replace(leader_alive=int(m.leader != NONE and alive >> m.leader & 1))
                        for m in new)
        if self.cfg.reorder_requests:
            return tuple(sorted(set(channels).union(new)))
        out = list(channels)
        for m in new:
            key = (m.controller_epoch, m.dest)
            last = max((i for i, x in enumerate(out) if (x.controller_epoch, x.dest) == key),
                       default=None)
            if (last is not None and m.kind == UPDATE_METADATA
                    and out[last].kind == UPDATE_METADATA):
                out[last] = m
            elif last is None or out[last] != m:
                out.append(m)
        out.sort(key=lambda x: (x.controller_epoch, x.dest))
        return tuple(out)

    def _deliverable(self, msgs: tuple[Request, ...]) -> Iterable[int]:
        """The indices of the requests that may be handled next: the head of every channel
        (one ``RequestSendThread`` per broker sends one request at a time, in queue order,
        and retries it until it succeeds), or every request with ``reorder_requests``."""
        if self.cfg.reorder_requests:
            return range(len(msgs))
        return self._heads(msgs)

    @memoised
    def _heads(self, msgs: tuple[Request, ...]) -> tuple[int, ...]:
        """The index of every channel's first request (``_deliverable``; memoised)."""
        heads = []
        prev = None
        for i, m in enumerate(msgs):
            key = (m.controller_epoch, m.dest)
            if key != prev:
                heads.append(i)
                prev = key
        return tuple(heads)

    def _a_deliver(self, state: State, out: Out) -> None:
        """``Deliver(m)``: a live broker handles the request at the head of one of its
        channels (any in-flight request with ``reorder_requests``).  Faults, off by
        default: ``Lose(m)`` (``lost_requests``) drops any one request while its
        connection lives; ``DeliverCopy(m)`` (``duplicate_requests``) handles it and keeps
        it queued, to be handled again."""
        msgs = state.channels
        if self.cfg.lost_requests:
            for i, m in enumerate(msgs):
                out.append((self._label("Lose", self._msg_text(m)),
                            KafkaState(state.controller, state.brokers, msgs[:i] + msgs[i + 1:],
                                       state.ghost)))
        for i in self._deliverable(msgs):
            m = msgs[i]
            if not state.brokers[m.dest].alive:
                continue
            s = self._handle(state, m)
            if s is None:
                continue
            out.append((self._request_label("Deliver", m),
                        KafkaState(s.controller, s.brokers, msgs[:i] + msgs[i + 1:], s.ghost)))
            if self.cfg.duplicate_requests:
                out.append((self._label("DeliverCopy", self._msg_text(m)), s))

    @memoised
    def _request_label(self, action: str, m: Request) -> str:
        """``action(request text)`` (memoised)."""
        return self._label(action, self._msg_text(m))

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
        if self.cfg.unavailable_leader == "create-log":
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
        is not enabled (KIP-320: the new leader is not yet in the request's epoch)."""
        dest, _, _, leader, epoch, *_ = m
        br = state.brokers[dest]
        if leader == NONE:
            return None
        lb = state.brokers[leader]
        if (self.fenced and leader != dest and lb.alive
                and (lb.leader_epoch != epoch or lb.leader != leader)):
            return None
        p = self.partition(state, dest)
        newbr, newp = self._leader_and_isr(m, br, bool(lb.alive), lb.log,
                                           self._request_alive(state, m))
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

    @memoised
    def _leader_and_isr(self, m: Request, br: BrokerPartition, leader_alive: bool,
                        leader_codes: tuple[int, ...], alive: int
                        ) -> tuple[BrokerPartition, Partition]:
        """Broker ``m.dest``'s side of LeaderAndIsr ``m``: its new ``BrokerPartition`` and
        ``Partition`` (``become_leader_or_follower``), from its tuple ``br``, whether the
        named leader is alive, the leader's log and the brokers ``makeFollowers`` takes for
        alive (memoised: these repeat across states)."""
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
        ).unwrap()
        mgr = result.manager
        newp = mgr.partitions[0]
        newp = replace(newp, controller_epoch=mgr.controller_epoch)
        truncating = 0
        if self.deferred_truncation and newp.leader == leader != dest:
            if newp.leader != p.leader and not leader_alive:
                # The fetcher starts Truncating; the down leader cannot answer
                # OffsetsForLeaderEpoch, so the log stays as it was for now.
                newp = replace(newp, log=p.log, high_watermark=p.high_watermark)
                truncating = 1
            elif newp.leader == p.leader:
                truncating = br.truncating  # same leader: the fetcher goes on as it was
        newbr = self._with_partition(br, newp)._replace(truncating=truncating)
        # (_with_partition leaves awaiting_first_leader_and_isr at 0: the HW checkpoint
        # thread starts with the first LeaderAndIsr, hwThreadInitialized)
        if newbr.fetch_in_flight and (newp.leader != p.leader
                                      or newp.leader_epoch != p.leader_epoch):
            # the fetcher restarts: the response in flight is dropped
            newbr = newbr._replace(fetch_in_flight=NO_FETCH)
        return newbr, newp

    def _note_epoch_leader(self, state: State, epoch: int, b: int) -> State:
        ghost = state.ghost
        table = ghost.epoch_leader
        if table[epoch] == b:
            return state
        if table[epoch] != NONE:
            return self._flag(state, F_TWO_LEADERS)
        ghost = ghost._replace(epoch_leader=self._set(table, epoch, b))
        return KafkaState(state.controller, state.brokers, state.channels, ghost)

    def _drop_pending(self, state: State, b: int) -> State:
        """Waiting acks=all requests of ``b`` fail (it stopped leading or crashed)."""
        ghost = state.ghost
        if not ghost.pending:
            return state
        pending = tuple([x for x in ghost.pending if x[1] != b])  # (record id, broker)
        if pending == ghost.pending:
            return state
        return KafkaState(state.controller, state.brokers, state.channels,
                          ghost._replace(pending=pending))

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
        return self._set_broker(state, dest, br._replace(metadata_cache=meta))

    # ------------------------------------------------------------------ crashes
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
        s = self._set_broker(state, b, new)
        if lost:
            s = self._flag(s, F_CHECKPOINT_LOST)
        if self.split:
            # Fetch responses b had not sent yet die with its connections.
            for f, fb in enumerate(s.brokers):
                if fb.fetch_in_flight and fb.fetch_in_flight.leader == b:
                    s = self._set_broker(s, f, fb._replace(fetch_in_flight=NO_FETCH))
        # The controller's channel to b dies with b: requests in flight to it are dropped.
        msgs = self._without_dest(s.channels, b)
        return self._drop_pending(KafkaState(s.controller, s.brokers, msgs, s.ghost), b)

    @memoised
    def _without_dest(self, channels: tuple[Request, ...], b: int) -> tuple[Request, ...]:
        """The requests in flight but those to ``b`` (memoised)."""
        return tuple(m for m in channels if m.dest != b)

    @memoised
    def _down(self, br: BrokerPartition, unclean: bool, keep: int | None,
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
        flushed = len(log) if self.cfg.crashes == "unclean" else 0
        new = BrokerPartition(0, log, hw, ckpt, flushed, NONE, NONE, 0, 0, (), meta, NO_FETCH,
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
            out.append((self._label("Crash", b), clean))
            if self.cfg.crashes != "unclean":
                continue
            all_flushed = br.flushed >= len(br.log)
            if all_flushed and not writes:
                continue
            keeps: tuple[int | None, ...] = (None,)
            if self.cfg.crash_loss != "all-unflushed":
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
                    arg = str(b) if keep is None else f"{b},{keep}"
                    if empty:
                        arg += ",empty-hw-file"
                    out.append((self._label("PowerLoss", arg), s))

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
            meta = (
                MetadataView(self._alive_mask(state) | 1 << b, NONE, NONE, 0)
                if self.cfg.metadata else ()
            )
            up = BrokerPartition(1, br.log, br.high_watermark, br.hw_checkpoint, br.flushed,
                                 br.leader_epoch, br.leader, br.controller_epoch,
                                 br.in_sync_replica_ids, br.remotes, meta, NO_FETCH,
                                 awaiting_first_leader_and_isr=int(self.skip))
            s = self._set_broker(state, b, up)
            if ctrl.leader == b:
                # The partition is offline (its last leader was b): elect, or, when no
                # election is possible (within max_leader_epoch), leave it offline; b must
                # never resume leading its old epoch.
                elected = self._restart_election(state, s, bool(br.unclean_shutdown))
                if elected is None and self.cfg.elr:
                    continue  # KRaft's change past max_leader_epoch: not in the bounds
                out.append((self._label("Restart", b), s if elected is None else elected))
                continue
            if br.unclean_shutdown:
                after = self._unclean_shutdown(s, b)
                if after is None:
                    continue  # the ISR change would pass max_leader_epoch
                s = after
            c = s.controller
            if c.leader == NONE:
                # KIP-966: an offline partition; ElectLeader runs next (handleBrokerUnfenced)
                out.append((self._label("Restart", b), s))
                continue
            msg = Request(b, LEADER_AND_ISR, c.controller_epoch, c.leader, c.leader_epoch, c.isr,
                          c.assigned_replicas)
            msgs = self._enqueue(s, [msg])
            out.append((self._label("Restart", b),
                        KafkaState(s.controller, s.brokers, msgs, s.ghost)))

    def _restart_election(self, before: State, after: State,
                          dirty: bool = False) -> State | None:
        """The offline election of a restart: without the restarted broker, else with it;
        the restarted broker is sent the outcome like every live replica.  With ``elr``
        the KRaft election (``_kraft_election``), ``dirty`` when the broker comes back
        from an unclean shutdown."""
        if self.cfg.elr:
            passes = tuple(frozenset(members(self._alive_mask(v))) for v in (before, after))
            return self._kraft_election(after, before.controller.leader, dirty, passes)
        for view in (before, after):
            alive = frozenset(members(self._alive_mask(view)))
            selection = offline_partition_leader_selector(
                self._current(view), view.controller.assigned_replicas, alive,
                self.cfg.unclean_election,
            )
            if isinstance(selection, Failure):
                continue
            e = selection.unwrap()
            receivers = set(e.receivers) | set(members(self._alive_mask(after)))
            return self._write_zk(after, e.leader_and_isr, sorted(receivers))
        return None

    def _unclean_shutdown(self, state: State, b: int) -> State | None:
        """KIP-966's ``ReplicationControlManager.handleBrokerUncleanShutdown`` when ``b``,
        which does not lead, re-registers after a power loss (``elr`` only): it leaves the
        ISR and the ELR, whose log may have lost acknowledged records.  An ISR change under
        a live leader is a controller write (new leader epoch, sent to the live replicas,
        as ``RemoveDeadFromIsr``); otherwise only the controller's state changes.  ``None``
        past ``max_leader_epoch``."""
        ctrl = state.controller
        if not (ctrl.isr | ctrl.elr) >> b & 1:
            return state
        isr, elr, lke = kip966.unclean_shutdown_change(ctrl, b, self.cfg.min_isr)
        zl = ctrl.leader
        if isr != ctrl.isr and zl != NONE and state.brokers[zl].alive:
            lai = LeaderAndIsr(zl, ctrl.leader_epoch + 1, members(isr), 0)
            elected = kip966.Elected(zl, isr, elr, lke, False)
            return self._write_zk(state, lai, members(self._alive_mask(state)), None, elected)
        ctrl = ctrl._replace(isr=isr, elr=elr, last_known_elr=lke)
        return KafkaState(ctrl, state.brokers, state.channels, state.ghost)

    def _a_flush(self, state: State, out: Out) -> None:
        """``Flush(b)``: the log is fsynced (only with ``crashes=unclean``)."""
        for b in range(self.n):
            br = state.brokers[b]
            if br.alive and br.flushed < len(br.log):
                out.append((self._label("Flush", b),
                            self._set_broker(state, b, br._replace(flushed=len(br.log)))))

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
                new = br._replace(hw_checkpoint=hw)
                if follows and self.skip and br.leader_epoch == NONE:  # not hosted
                    new = new._replace(high_watermark=initial_high_watermark(hw, 0, len(br.log)))
                s = self._set_broker(state, b, new)
                if lost:
                    s = self._flag(s, F_CHECKPOINT_LOST)
                out.append((self._label("CheckpointHw", b), s))

    # ------------------------------------------------------------------ consumers
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
                g = ghost._replace(consumed=new)
                out.append((self._label("Consume", b),
                            KafkaState(state.controller, state.brokers, state.channels, g)))

    # ------------------------------------------------------------------ labels
    @staticmethod
    @cache
    def _label(action: str, arg: object) -> str:
        return f"{action}({arg})"


@cache
def _permutations(n: int) -> tuple[tuple[int, ...], ...]:
    from itertools import permutations

    return tuple(permutations(range(n)))
