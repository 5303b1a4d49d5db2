"""The ``kafka`` model's configuration (``KafkaConfig``) and the flags derived from it.

``KafkaSetup`` is the base of the model's component classes (``isrlab.spec.kafka.model``):
it checks a configuration, derives the flags every component reads (the truncation rule,
KIP-320's fencing, KIP-497's AlterPartition, KAFKA-4485's lag rules, the encoder's
layout) and holds the caches of the memoised helpers (``isrlab.spec.kafka.memo``).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, fields
from typing import Any

from isrlab.core.alter_partition import HwIsr
from isrlab.core.fencing import FetchFencing
from isrlab.core.log_recovery import CrashLoss, HwCheckpointFile
from isrlab.core.partition import TruncationRule
from isrlab.core.produce import ACKS_ALL, ACKS_LEADER, ACKS_NONE
from isrlab.core.state import TopicPartition
from isrlab.core.truncation import Log
from isrlab.spec.kafka.elr import UncleanRecovery
from isrlab.spec.kafka.memo import IdCache, IdCache2, Interner
from isrlab.spec.kafka.params import (
    PARAM,
    Acks,
    Controller,
    Crashes,
    EqualEpochDelta,
    ExpandRule,
    FetchMode,
    IsrChanges,
    Kind,
    KRaftEpochBump,
    LastKnownLeaderParam,
    LeaderStateReset,
    ParamInfo,
    UnavailableLeader,
    UncleanDetectionParam,
    declare,
)
from isrlab.spec.kafka.state import (
    Encoder,
    EpochCodec,
    KafkaState,
    Layout,
    kafka_state,
    layout_flags,
)
from isrlab.spec.kafka.truncation_versions import BY_PARAM, TRUNCATION_VERSIONS, parameter_help

State = KafkaState
Out = list[tuple[str, State]]

TP = TopicPartition("t", 0)
NO_FETCH: tuple[()] = ()


_ACKS = {Acks.NONE: ACKS_NONE, Acks.LEADER: ACKS_LEADER, Acks.ALL: ACKS_ALL}
"""``core``'s acks value of each ``acks`` choice."""


@dataclass(frozen=True, slots=True)
class KafkaConfig:
    """Every parameter of the ``kafka`` model, each declared once here: its type, default
    and ``ParamInfo`` (help, Kafka versions, choices, bounds, ``[fault]``).  ``PARAMS``
    (``isrlab.spec.kafka``), ``problems``, ``isrlab models`` and docs/kafka-model.md's
    parameter table (``parameter_table``) are derived from these fields."""

    brokers: int = field(default=2, metadata=declare(
        "brokers, all replicas of the one partition", Kind.BOUND,
        minimum=1, maximum=6))
    max_records: int = field(default=2, metadata=declare(
        "records producers may write in total", Kind.BOUND,
        minimum=0, maximum=30))
    max_leader_epoch: int = field(default=2, metadata=declare(
        "leader epochs 0..max_leader_epoch (bounds elections)", Kind.BOUND,
        minimum=0, maximum=60))
    truncation: str = field(default="kip279", metadata=declare(
        parameter_help(), Kind.VERSION, kafka="2.1+",
        choices=tuple(t.param for t in TRUNCATION_VERSIONS)))
    fetch_fencing: str = field(default=FetchFencing.FINAL.value, metadata=declare(
        "leader-epoch fencing of follower fetches: none (Kafka <= 2.0: a fetch carries no "
        "epoch; the follower truncates when it becomes follower), first-design (KIP-320's "
        "first design, never released: no truncation on becoming follower; a fetch carries "
        "the epoch of the follower's last record, the leader records it for the HW and the "
        "ISR, then answers a mismatch with its record at that offset with an error, on "
        "which the follower truncates), final (KIP-320 as released, "
        "Kafka 2.1+: fetches and truncation carry the leader epoch, a leader in another "
        "epoch refuses them and records the follower's LEO as unknown); true and false "
        "are the older spellings of final and none", Kind.VERSION, kafka="2.1+",
        choices=(FetchFencing.NONE.value, FetchFencing.FIRST_DESIGN.value,
                 FetchFencing.FINAL.value),
        aliases=(("true", "final"), ("false", "none"))))
    expand_rule: str = field(default=ExpandRule.EPOCH_START.value, metadata=declare(
        "ISR expansion: hw (follower LEO >= HW, Kafka <= 2.0) or epoch-start (also >= the "
        "start offset of the leader's epoch, KAFKA-7128: 2.1+)", Kind.VERSION, kafka="2.1+",
        choices=ExpandRule))
    kafka_4485: bool = field(default=True, metadata=declare(
        "KAFKA-4485's lag rules together (Kafka 0.10.2+): a fetch reaching the leader's LEO "
        "of the previous fetch counts as caught up then, and the HW waits for replicas "
        "caught up within lag_ticks as well as the ISR; off: Kafka <= 0.10.1 (the ISR "
        "only, caught up only at the current LEO)", Kind.VERSION, kafka="0.10.2+"))
    kafka_7414: bool = field(default=True, metadata=declare(
        "KAFKA-7414: a follower past its leader's LEO truncates to it (Kafka 2.1+); off: "
        "Kafka 0.10.2-2.0, whose broker then exits (FatalExitError, flag broker_halted, "
        "invariant NoFatalExit) unless unclean election is enabled", Kind.VERSION,
        kafka="2.1+"))
    kafka_7152: bool = field(default=True, metadata=declare(
        "KAFKA-7152: the isr-expiration task keeps a follower whose LEO is the leader's, "
        "however long ago it last fetched (Kafka 2.1+); off: Kafka <= 2.0, which shrinks on "
        "lag time alone, so an idle follower leaves the ISR and rejoins on its next fetch",
        Kind.VERSION, kafka="2.1+"))
    unclean_election: bool = field(default=False, metadata=declare(
        "unclean.leader.election.enable",
        Kind.CONFIGURATION))
    min_isr: int = field(default=1, metadata=declare(
        "min.insync.replicas (acks=all only)", Kind.CONFIGURATION,
        minimum=1))
    acks: str = field(default=Acks.ALL.value, metadata=declare(
        "producer acks", Kind.CONFIGURATION, choices=Acks))
    lag_ticks: int = field(default=0, metadata=declare(
        "replica.lag.time.max.ms in logical ticks: a follower leaves the ISR once it has "
        "not caught up for more ticks than this", Kind.CONFIGURATION, minimum=0))
    isr_shrink: bool = field(default=True, metadata=declare(
        "the isr-expiration task (Tick and ShrinkIsr steps)",
        Kind.DETAIL))
    crashes: str = field(default=Crashes.CLEAN.value, metadata=declare(
        "broker crash/restart: none, clean (log kept), unclean (unflushed tail lost, "
        "Flush steps)", Kind.FAILURE, choices=Crashes))
    hw_checkpoint: bool = field(default=False, metadata=declare(
        "HW checkpoint file written by its own step (restart reloads it; see "
        "hw_checkpoint_file); off: the HW survives a restart as it was, exact for a clean "
        "shutdown (every release writes the file then), a shortcut for a power loss",
        Kind.DETAIL))
    reorder_requests: bool = field(default=False, metadata=declare(
        "controller requests to a broker may be handled in any order (off: in queue "
        "order per controller epoch and broker, as ControllerChannelManager's one "
        "RequestSendThread per broker sends them)", Kind.FAULT, fault=True))
    lost_requests: bool = field(default=False, metadata=declare(
        "any one controller request may be lost while its connection lives (off: only "
        "a broker crash or a controller failover loses requests); with fetch=split, "
        "fetch responses too", Kind.FAULT, fault=True))
    duplicate_requests: bool = field(default=False, metadata=declare(
        "a controller request may be handled twice",
        Kind.FAULT, fault=True))
    controlled_shutdown: bool = field(default=False, metadata=declare(
        "ControlledShutdown steps (ControlledShutdownLeaderSelector); with "
        "controller=kraft through heartbeats: ControlledShutdown(b) asks (wantShutDown), the "
        "controller moves leadership and ISR membership off b "
        "(handleBrokerInControlledShutdown), ShutdownNow(b) once every active broker "
        "replayed that batch, and b stops", Kind.DETAIL))
    preferred_election: bool = field(default=False, metadata=declare(
        "PreferredElection steps (PreferredReplicaPartitionLeaderSelector; with "
        "controller=kraft ReplicationControlManager.electLeader with PREFERRED: the first "
        "replica if it is in the ISR and active)",
        Kind.DETAIL))
    reassignment: bool = field(default=False, metadata=declare(
        "Reassign steps: new preference order, ReassignedPartitionLeaderSelector",
        Kind.DETAIL))
    remove_dead_from_isr: bool = field(default=True, metadata=declare(
        "the controller removes dead followers from the ISR (OfflineReplica)",
        Kind.DETAIL))
    max_controller_epoch: int = field(default=0, metadata=declare(
        "controller failovers allowed (stale controller epochs)", Kind.BOUND, minimum=0))
    metadata: bool = field(default=False, metadata=declare(
        "MetadataCache per broker, UpdateMetadata requests, ISR change propagation",
        Kind.DETAIL))
    consumers: bool = field(default=False, metadata=declare(
        "Consume steps (reads below a leader's HW)", Kind.DETAIL))
    initial_isr: int = field(default=0, metadata=declare(
        "brokers 0..k-1 form the initial ISR (0: every broker)", Kind.BOUND, minimum=0))
    fetch: str = field(default=FetchMode.ATOMIC.value, metadata=declare(
        "follower fetches: atomic (one round-trip step) or split (FetchRequest handled "
        "by the leader, then FetchResponse on the follower, which may be lost or stale)",
        Kind.DETAIL, choices=FetchMode))
    elr: bool = field(default=True, metadata=declare(
        "KIP-966 Eligible Leader Replicas (Kafka 3.7+ with the eligible.leader.replicas "
        "feature, KRaft; 4.0+): the controller keeps an ELR and a last-known ELR, a "
        "replica leaving an ISR below min_isr joins the ELR, one back from a power loss "
        "leaves it, the ISR may empty and an ELR member is elected cleanly, and the HW "
        "waits while the ISR is below min_isr; off: Kafka <= 3.6 and ZooKeeper mode",
        Kind.VERSION, kafka="4.0+"))
    unclean_recovery: str = field(default=UncleanRecovery.FIRST_ALIVE.value, metadata=declare(
        "which replica an unclean election picks (with unclean_election): first-alive "
        "(the first live replica in assignment order: every Kafka release, ZooKeeper's "
        "OfflinePartitionLeaderSelector and KRaft's PartitionChangeBuilder), or KIP-966's "
        "unclean recovery, the longest log (last epoch, LEO) among the live replicas once "
        "balanced (every last-known ELR member back, else a majority) or aggressive (any "
        "one) replicas reported: designed in KIP-966, not in a release the model covers",
        Kind.VERSION, kafka="every release", choices=UncleanRecovery))
    unavailable_leader: str = field(default=UnavailableLeader.FETCHER.value, metadata=declare(
        "a follower told to follow a leader that is down when it handles the "
        "LeaderAndIsr (without metadata): follow (the model's shortcut: it truncates at "
        "once against the down leader's log), fetcher (Kafka 0.11+: makeFollower, and "
        "the fetcher truncates only once that leader is back and answers "
        "OffsetsForLeaderEpoch: a Truncate step; with truncation=hw as follow, since "
        "<= 0.10 truncate to the HW at once), create-log (makeFollowers when its "
        "cache already knows the leader is down, 0.8.2+, KAFKA-1647, and KRaft's "
        "applyLocalFollowersDelta: only the log is created, the partition state is not "
        "changed), or skip (before 0.8.2: not even the log is created, so the HW "
        "checkpoint thread, started by that first request, writes a file without the "
        "partition: KAFKA-1647, flag hw_checkpoint_lost, invariant NoHwCheckpointLost)",
        Kind.VERSION, kafka="0.11+", choices=UnavailableLeader))
    crash_loss: str = field(default=CrashLoss.ALL_UNFLUSHED.value, metadata=declare(
        "what a power loss (crashes=unclean) leaves of the unflushed tail: all-unflushed "
        "(nothing of it: the worst case) or tail (any prefix of it, as the OS wrote an "
        "unknown part; LogLoader.load, Kafka 3.0+, and Log.recoverLog before, recover "
        "what is there; keeping all of it is a process kill, still an unclean shutdown)",
        Kind.FAILURE, choices=(CrashLoss.ALL_UNFLUSHED.value, CrashLoss.TAIL.value)))
    isr_changes: str = field(default=IsrChanges.ALTER_PARTITION.value, metadata=declare(
        "how a leader changes the ISR: zookeeper (it writes ZooKeeper itself, a write "
        "conditional on its epoch: Kafka <= 2.6, and 2.7+ below inter.broker.protocol "
        "2.7-IV2) or alter-partition (KIP-497: it proposes the change to the controller, "
        "one at a time, and commits it when the answer comes back: AlterIsr, Kafka 2.7+, "
        "AlterPartition 3.2+, every KRaft release)", Kind.VERSION, kafka="2.7+",
        choices=IsrChanges))
    hw_isr: str = field(default=HwIsr.MAXIMAL.value, metadata=declare(
        "with isr_changes=alter-partition, the ISR a leader with a pending change counts "
        "for the HW and acks=all: maximal (the committed ISR plus a pending joiner, Kafka "
        "2.7+) or committed (the committed ISR only: the rule KIP-497 rejected, in no "
        "release)", Kind.VERSION, kafka="2.7+",
        choices=(HwIsr.MAXIMAL.value, HwIsr.COMMITTED.value), fault=True))
    fence_ineligible: bool = field(default=True, metadata=declare(
        "with isr_changes=alter-partition, KIP-841 (Kafka 3.3+): the controller refuses "
        "a proposed ISR holding a broker that is down (INELIGIBLE_REPLICA) and the leader "
        "goes back to its committed ISR; off: Kafka 2.7-3.2 accept it", Kind.VERSION,
        kafka="3.3+"))
    hw_checkpoint_file: str = field(default=HwCheckpointFile.FSYNC.value, metadata=declare(
        "the HW checkpoint file (replication-offset-checkpoint), with hw_checkpoint: fsync "
        "(Kafka 0.8.2 through 4.0: written by the checkpoint thread and by a clean "
        "shutdown, ReplicaManager.shutdown(checkpointHW = true), so Crash keeps the HW; "
        "fsynced before its rename, KAFKA-1539, so a power loss leaves the thread's last "
        "write), no-fsync (0.8.0-0.8.1: the same writes without the fsync: a power loss "
        "may also leave the file empty, every HW reading back 0: PowerLoss(b,empty-hw-file)) "
        "or periodic (no release: only the thread writes it, a clean shutdown leaves its "
        "last write, as Kafka's shutdown(checkpointHW = false) in its unit tests; the "
        "model before this parameter)", Kind.VERSION, kafka="0.8.2+",
        choices=HwCheckpointFile, fault=True))
    controller: str = field(default=Controller.KRAFT.value, metadata=declare(
        "the controller: zookeeper (KafkaController: controller epochs, LeaderAndIsr "
        "requests through ControllerChannelManager; Kafka up to 3.x in ZooKeeper mode) or "
        "kraft (the QuorumController's __cluster_metadata log, replayed by each broker's "
        "MetadataLoader at its own pace; broker registration, broker epochs, fencing; "
        "Kafka 3.3+ KRaft, the only mode from 4.0)", Kind.VERSION, kafka="3.3+ (KRaft)",
        choices=Controller))
    kip903: bool = field(default=True, metadata=declare(
        "with controller=kraft, KIP-903 (Kafka 3.5+): fetches carry the follower's broker "
        "epoch, the leader sends it in AlterPartition's NewIsrWithEpochs and the controller "
        "refuses a member whose broker epoch is not its registered one (INELIGIBLE_REPLICA); "
        "off: Kafka 3.3-3.4 (KAFKA-14139)", Kind.VERSION, kafka="3.5+"))
    unclean_detection: str = field(default=UncleanDetectionParam.NEW_INCARNATION.value,
                                   metadata=declare(
        "with controller=kraft and elr, KIP-966's unclean-shutdown detection at broker "
        "registration (ClusterControlManager.registerBroker): none (3.7 and earlier: "
        "computed, only logged), previous-epoch (3.8, KAFKA-15586: the previous broker "
        "epoch from the clean-shutdown file must be the registered one) or new-incarnation "
        "(3.9+, KAFKA-16952: every new incarnation); an unclean registration leaves the ISR "
        "and the ELR (handleBrokerUncleanShutdown)", Kind.VERSION, kafka="3.9+",
        choices=UncleanDetectionParam))
    last_known_leader: str = field(default=LastKnownLeaderParam.UNCHECKED.value,
                                   metadata=declare(
        "with controller=kraft and elr, what KIP-966's last-known-leader election "
        "(PartitionChangeBuilder.canElectLastKnownLeader: ISR and ELR empty) asks of that "
        "replica: unchecked (KAFKA-15584, 3.7.0 through trunk 2024-10: nothing, so a fenced "
        "broker or one just registered with an empty disk is elected), acceptable "
        "(KAFKA-19522, trunk 2025-07: an acceptable leader, unfenced and not the broker "
        "registering uncleanly) or forget-unclean (no release, a candidate fix: acceptable, "
        "and an unclean registration forgets the broker as the last-known leader); "
        "docs/findings/last-known-leader-empty-disk.md", Kind.VERSION, kafka="3.7+",
        choices=LastKnownLeaderParam))
    kraft_epoch_bump: str = field(default=KRaftEpochBump.LEADER_CHANGE.value, metadata=declare(
        "with controller=kraft, when a PartitionChangeRecord bumps the leader epoch: "
        "isr-shrink (Kafka 3.0-3.5, and metadata versions below 3.6-IV0: also on every ISR "
        "shrink) or leader-change (3.6+, KAFKA-15021: only when the leader changes, and "
        "the same commit's HW rule: a leader's HW waits for a caught-up replica outside "
        "the ISR only if it is ISR eligible, not fenced or shutting down)",
        Kind.VERSION, kafka="3.6+", choices=KRaftEpochBump))
    make_leader_equal_epoch: str = field(default=EqualEpochDelta.APPLY.value,
                                         metadata=declare(
        "with controller=kraft, what Partition.makeLeader does with a metadata delta whose "
        "partition epoch equals the leader's own (learnt from its AlterPartition answer): "
        "apply (every KRaft release, 3.3-4.0: only an older epoch is skipped, so the "
        "leader's pending ISR change is replaced by the record's committed ISR) or skip "
        "(no release: a candidate fix, the state is already that epoch's)", Kind.VERSION,
        kafka="3.3+", choices=EqualEpochDelta))
    max_metadata_lag: int = field(default=2, metadata=declare(
        "with controller=kraft: the committed metadata batches the slowest live broker may "
        "lag behind the active controller (the controller writes a new batch only below "
        "it); a bound of the search, not Kafka's", Kind.BOUND, minimum=1, maximum=6))
    heartbeat_loss: bool = field(default=False, metadata=declare(
        "with controller=kraft, a live broker's heartbeats may stop reaching the active "
        "controller past broker.session.timeout.ms, so it is fenced while it runs (off: only "
        "a broker that is down stops heartbeating)", Kind.FAULT, fault=True))
    empty_disk: bool = field(default=False, metadata=declare(
        "with controller=kraft, a broker that is down may come back with an empty log "
        "directory (a replaced disk: no log, no clean-shutdown file) under its old broker "
        "id: KAFKA-14139's precondition", Kind.FAULT, fault=True))
    initial_leader: int = field(default=0, metadata=declare(
        "with controller=kraft: the broker leading the partition in the initial state "
        "(epoch 0, every broker caught up with the metadata log); the assignment is "
        "0..brokers-1 in order, so broker 0 is the preferred replica: another value starts "
        "from a cluster whose preferred replica lost leadership and is back in the ISR "
        "(after its restart), before the next preferred election", Kind.BOUND, minimum=0))
    controller_failover: bool = field(default=False, metadata=declare(
        "with controller=kraft, ControllerFailover steps: the active controller resigns "
        "(QuorumController.renounce) and another continues from the committed metadata log; "
        "the answers it had not delivered are lost (NOT_CONTROLLER or a disconnect) and "
        "the brokers resend their AlterPartition requests to the new controller, whose "
        "heartbeat manager starts without controlled-shutdown offsets",
        Kind.FAILURE))
    leader_state_reset: str = field(default=LeaderStateReset.ON_LEADERSHIP.value,
                                    metadata=declare(
        "when makeLeader resets the remote replicas' state (LEO, log start, last fetch) to "
        "unknown: on-leadership (every release, 0.8 through 4.x: only when the broker did "
        "not already lead, isNewLeader; a leader that skipped an epoch keeps LEOs from "
        "before it, docs/findings/stale-leo-failover.md) or on-epoch (a fix in no "
        "release: also when the leader epoch changes)", Kind.VERSION, kafka="0.8+",
        choices=LeaderStateReset))

    def __reduce__(self) -> tuple[type[KafkaConfig], tuple[object, ...]]:
        """Pickled as its field values in order: the class compiled by mypyc (setup.py) is
        a native frozen class, which pickle's default cannot fill in field by field."""
        return (KafkaConfig, tuple(getattr(self, f.name) for f in fields(self)))

    def problems(self) -> list[str]:
        """Why this configuration is unusable (empty when it is fine): each field against
        its declaration (choices, bounds), then the bounds between fields."""
        out = []
        for f in fields(self):
            info: ParamInfo = f.metadata[PARAM]
            value = getattr(self, f.name)
            if info.choices is not None and value not in info.choices:
                out.append(f"{f.name} must be one of {', '.join(info.choices)}")
            elif isinstance(value, bool):
                continue
            elif isinstance(value, int) and not (
                    (info.minimum is None or value >= info.minimum)
                    and (info.maximum is None or value <= info.maximum)):
                low = "" if info.minimum is None else info.minimum
                high = "" if info.maximum is None else info.maximum
                out.append(f"{f.name} must be in {low}..{high}, got {value}")
        if self.initial_isr > self.brokers:
            out.append(f"initial_isr {self.initial_isr} exceeds the {self.brokers} replicas")
        if self.min_isr > self.brokers:
            out.append(f"min_isr {self.min_isr} exceeds the {self.brokers} replicas")
        if self.controller == Controller.KRAFT.value:
            out.extend(self._kraft_problems())
        else:
            if self.controller_failover:
                out.append("controller_failover is a KRaft-mode parameter (controller=kraft; "
                           "ZooKeeper mode's failovers are max_controller_epoch)")
            if self.initial_leader:
                out.append("initial_leader is a KRaft-mode parameter (controller=kraft)")
        if self.initial_leader >= max(1, self.initial_isr or self.brokers):
            out.append(f"initial_leader {self.initial_leader} is not in the initial ISR "
                       f"(brokers 0..{(self.initial_isr or self.brokers) - 1})")
        return out

    def _kraft_problems(self) -> list[str]:
        """Why a ``controller=kraft`` configuration is unusable: ZooKeeper-mode parameters
        set, or broker rules older than any KRaft release."""
        out = []
        if self.isr_changes != IsrChanges.ALTER_PARTITION.value:
            out.append("controller=kraft needs isr_changes=alter-partition (every KRaft "
                       "leader proposes ISR changes through AlterPartition)")
        for name in ("metadata", "reorder_requests", "lost_requests", "duplicate_requests",
                     "reassignment"):
            if getattr(self, name):
                out.append(f"{name} is a ZooKeeper-mode parameter (controller=zookeeper)")
        if self.max_controller_epoch:
            out.append("max_controller_epoch is a ZooKeeper-mode parameter")
        if self.fetch != FetchMode.ATOMIC.value or self.fetch_fencing != "final":
            out.append("controller=kraft needs fetch=atomic and fetch_fencing=final")
        if self.unavailable_leader != UnavailableLeader.FETCHER.value:
            out.append("controller=kraft needs unavailable_leader=fetcher")
        return out

    @property
    def fencing(self) -> FetchFencing:
        """``fetch_fencing`` as ``isrlab.core.fencing.FetchFencing`` (a valid value only)."""
        return FetchFencing(self.fetch_fencing)


def declarations() -> tuple[tuple[str, type, object, ParamInfo], ...]:
    """Each ``KafkaConfig`` field in order as (name, type, default, declaration)."""
    types: dict[object, type] = {"int": int, "bool": bool, "str": str, int: int, bool: bool,
                                 str: str}
    return tuple((f.name, types[f.type], f.default, f.metadata[PARAM])
                 for f in fields(KafkaConfig))


def config_of(values: Mapping[str, object]) -> KafkaConfig:
    """The configuration of parameter values by name (a missing one takes its default);
    ``ValueError`` naming the first value of the wrong type or unknown name."""
    unknown = sorted(set(values) - {name for name, *_ in declarations()})
    if unknown:
        raise ValueError(f"unknown kafka parameter {unknown[0]!r}")
    checked: dict[str, Any] = {}
    for name, kind, default, _ in declarations():
        value = values.get(name, default)
        if type(value) is not kind:
            raise ValueError(f"{name} must be of type {kind.__name__}, got {value!r}")
        checked[name] = value
    return KafkaConfig(**checked)


def parameter_table() -> str:
    """docs/kafka-model.md's parameter table (Markdown), from the declarations."""
    rows = ["| parameter | type | default | choices | Kafka (default) | kind | meaning |",
            "|---|---|---|---|---|---|---|"]
    for name, kind, default, info in declarations():
        shown = str(default).lower() if kind is bool else str(default)
        choices = ", ".join(f"`{c}`" for c in info.choices) if info.choices else ""
        if info.minimum is not None or info.maximum is not None:
            low = "" if info.minimum is None else info.minimum
            high = "" if info.maximum is None else info.maximum
            choices = f"{low}..{high}"
        marker = f"{info.kind} [fault]" if info.fault else str(info.kind)
        text = info.help.replace("|", "\\|")
        rows.append(f"| `{name}` | {kind.__name__} | `{shown}` | {choices} | {info.kafka} "
                    f"| {marker} | {text} |")
    return "\n".join(rows) + "\n"


def _keep_log(follower_log: Log, follower_hw: int, leader_log: Log) -> int:
    """The ``TruncationRule`` of ``make_follower`` under KIP-320's first design: truncate
    nothing (the follower truncates later, on a fetch error: ``KafkaModel._fetch``)."""
    return len(follower_log)


class KafkaSetup:
    """The model's configuration with the flags derived from it, and the caches of its
    memoised helpers (``isrlab.spec.kafka.memo``): the base of the component classes
    (``isrlab.spec.kafka.model`` says how they stack)."""

    def __init__(self, config: KafkaConfig) -> None:
        problems = config.problems()
        if problems:
            raise ValueError("; ".join(problems))
        self.name = "kafka"
        self.cfg = config
        self.n = config.brokers
        self.codec = EpochCodec(config.max_leader_epoch + 1)
        self.sat = config.lag_ticks + 1
        self.rule: TruncationRule = BY_PARAM[config.truncation].explicit
        self.acks = _ACKS[Acks(config.acks)]
        self.all_mask = (1 << self.n) - 1
        self.split = config.fetch == FetchMode.SPLIT
        # KIP-320: final (2.1+) fences fetches and truncation by leader epoch; the first
        # design records a fetch first and truncates lazily, never in make_follower
        self.fenced = config.fencing is FetchFencing.FINAL
        self.first_design = config.fencing is FetchFencing.FIRST_DESIGN
        self.follow_rule: TruncationRule = _keep_log if self.first_design else self.rule
        # the fetcher's pending truncation when a follower's leader is down (0.11+ rules)
        self.deferred_truncation = (config.unavailable_leader == UnavailableLeader.FETCHER
                                    and config.truncation != "hw" and not self.first_design)
        self.extended = config.elr or config.unavailable_leader in (
            UnavailableLeader.FETCHER, UnavailableLeader.SKIP)
        self.skip = config.unavailable_leader == UnavailableLeader.SKIP
        # KIP-497: the leader proposes ISR changes to the controller (AlterPartition)
        self.alter = config.isr_changes == IsrChanges.ALTER_PARTITION
        # crashes: any (Crash, Restart steps); power losses too (PowerLoss, Flush, flushed)
        self.crash_steps = config.crashes != Crashes.NONE
        self.power_loss = config.crashes == Crashes.UNCLEAN
        self.hw_rule = HwIsr(config.hw_isr)
        # KAFKA-4485 (0.10.2+): caught-up replicas count for the HW, within lag_ticks
        self.hw_lag: int | None = config.lag_ticks if config.kafka_4485 else None
        self.previous_fetch = config.kafka_4485
        # KAFKA-15021's second half (3.6+, the commit of the leader-change epoch rule, which
        # the controller may only use once every broker has it): in KRaft mode the HW waits
        # for a caught-up replica outside the ISR only if it is ISR eligible
        self.eligible_hw = (config.controller == Controller.KRAFT.value
                            and config.kraft_epoch_bump == KRaftEpochBump.LEADER_CHANGE.value
                            and self.hw_lag is not None)
        # makeLeader resets the remotes on an epoch change too (a fix in no release)
        self.reset_on_epoch = config.leader_state_reset == LeaderStateReset.ON_EPOCH.value
        # a remote's previous fetch, unknown (a new leader's UnknownLogReadResult)
        self.no_fetch: tuple[int, ...] = (0, self.sat) if config.kafka_4485 else ()
        self.layout = Layout(layout_flags(
            self.previous_fetch, self.extended, self.alter, self.first_design,
            config.controller == Controller.KRAFT.value and config.controlled_shutdown))
        self.state_layout = f"kafka-state {self.layout.version}"
        """The state encoding's version, recorded in a run directory's metadata."""
        self._interner = Interner()
        """Equal components made one object (``isrlab.spec.kafka.memo.Interner``): the
        successors' components, the memoised methods' arguments, the encoder's keys."""
        self._encoder = Encoder(self.layout, self._interner)
        self._memo: dict[str, dict[object, object]] = {}  # memoised methods' caches
        self._interner.register(self._memo)
        # the caches of the memoised methods the compiled model calls most (``IdCache``)
        self._cache_broker_lso_le_hw = IdCache(self._interner)
        self._cache_broker_partition = IdCache(self._interner)
        self._cache_down = IdCache(self._interner)
        self._cache_without_dest = IdCache(self._interner)
        self._cache_without_index = IdCache(self._interner)
        self._cache_heads = IdCache(self._interner)
        self._cache_ticked = IdCache(self._interner)
        self._cache_shrink_proposal = IdCache(self._interner)
        self._cache_ghost_after_leader_step = IdCache2(self._interner)
        self._cache_kraft_controller = IdCache2(self._interner)
        self._view_of: object = None
        """KRaft mode: the KRaft part ``MetadataLoader._controller_view`` answered for last
        (held, so its address is not reused while it is compared by identity)."""
        self._view: Any = None
        """And its answer."""

    def _interned(self, state: State, out: Out) -> Out:
        """``out``, the successors of ``state``, each component (the controller, each
        broker, the requests, the ghost) replaced by the interner's object equal to it, so
        that the states a search keeps share their equal components and the caches keyed
        on addresses find them (``isrlab.spec.kafka.memo.Interner``).  A component a step
        left as it was in ``state`` is taken as it is; the interner is emptied here, between
        two expansions, when it is full."""
        interner = self._interner
        if interner.limit_reached():
            interner.clear()
        canon = interner.canon
        ctrl0, brokers0, msgs0, ghost0 = state
        for i, (label, s) in enumerate(out):
            ctrl, brokers, msgs, ghost = s
            changed = False
            if ctrl is not ctrl0:
                c = canon(ctrl)
                changed = c is not ctrl
                ctrl = c
            if brokers is not brokers0:
                if len(brokers) == len(brokers0):
                    fresh = [br if br is brokers0[b] else canon(br)
                             for b, br in enumerate(brokers)]
                else:
                    fresh = [canon(br) for br in brokers]
                for b, br in enumerate(fresh):
                    if br is not brokers[b]:
                        brokers = tuple(fresh)
                        changed = True
                        break
            if msgs is not msgs0:
                m = canon(msgs)
                changed = changed or m is not msgs
                msgs = m
            if ghost is not ghost0:
                g = canon(ghost)
                changed = changed or g is not ghost
                ghost = g
            if changed:
                out[i] = (label, kafka_state(ctrl, brokers, msgs, ghost))
        return out

    def _interned_state(self, state: State) -> State:
        """``state`` with each component the interner's object equal to it (the initial
        states, which ``_interned`` then takes as the first successors' reference)."""
        canon = self._interner.canon
        ctrl, brokers, msgs, ghost = state
        return kafka_state(canon(ctrl), tuple([canon(br) for br in brokers]), canon(msgs),
                           canon(ghost))

