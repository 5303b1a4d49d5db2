"""The ``kafka`` cluster model family: one partition on a few brokers, composed of ``core``.

``register(reg)`` adds the model ``kafka``; every feature and protocol version is a
parameter (``PARAMS``), so a researcher keeps the state space as small as the question.
The defaults are the newest behaviour the model covers: the broker rules of Kafka 2.1 and
later (KIP-279 truncation with KAFKA-7415, KIP-320's final fencing, KAFKA-7128's ISR rule,
KAFKA-4485's lag rules, KAFKA-7414's out-of-range truncation; unchanged through 4.0), the
fetcher's truncation only once a down leader answers (0.11+) and KIP-966's ELR (Kafka 4.0),
with clean elections and acks=all, on two brokers;
each known bug of ``docs/scenarios.md`` is found by turning one of them back to an older
version.  Each version parameter's help names the Kafka versions of each of its values.
The model itself is ``isrlab.spec.kafka.model``; its properties are ``isrlab.spec.invariants``.
"""

from __future__ import annotations

from collections.abc import Mapping

from isrlab.checker.registry import ModelEntry, Param, ParamValue, Registry
from isrlab.spec.invariants import INVARIANT_NAMES
from isrlab.spec.kafka import truncation_versions
from isrlab.spec.kafka.config import KafkaConfig
from isrlab.spec.kafka.model import KafkaModel

PARAMS = (
    Param("brokers", int, 2, "brokers, all replicas of the one partition (1..6)", minimum=1),
    Param("max_records", int, 2, "records producers may write in total", minimum=0),
    Param("max_leader_epoch", int, 2, "leader epochs 0..max_leader_epoch (bounds elections)",
          minimum=0),
    Param("truncation", str, "kip279", truncation_versions.parameter_help(),
          choices=tuple(truncation_versions.BY_PARAM)),
    Param("fetch_fencing", str, "final",
          "leader-epoch fencing of follower fetches: none (Kafka <= 2.0: a fetch carries no "
          "epoch; the follower truncates when it becomes follower), first-design (KIP-320's "
          "first design, never released: no truncation on becoming follower; a fetch carries "
          "the epoch of the follower's last record, the leader records it for the HW and the "
          "ISR, then answers a mismatch with its record at that offset with an error, on "
          "which the follower truncates), final (KIP-320 as released, "
          "Kafka 2.1+: fetches and truncation carry the leader epoch, a leader in another "
          "epoch refuses them and records the follower's LEO as unknown); true and false "
          "are the older spellings of final and none",
          choices=("none", "first-design", "final"),
          aliases=(("true", "final"), ("false", "none"))),
    Param("expand_rule", str, "epoch-start",
          "ISR expansion: hw (follower LEO >= HW, Kafka <= 2.0) or epoch-start (also >= the "
          "start offset of the leader's epoch, KAFKA-7128: 2.1+)",
          choices=("hw", "epoch-start")),
    Param("kafka_4485", bool, True,
          "KAFKA-4485's lag rules together (Kafka 0.10.2+): a fetch reaching the leader's LEO "
          "of the previous fetch counts as caught up then, and the HW waits for replicas "
          "caught up within lag_ticks as well as the ISR; off: Kafka <= 0.10.1 (the ISR "
          "only, caught up only at the current LEO)"),
    Param("kafka_7414", bool, True,
          "KAFKA-7414: a follower past its leader's LEO truncates to it (Kafka 2.1+); off: "
          "Kafka 0.10.2-2.0, whose broker then exits (FatalExitError, flag broker_halted, "
          "invariant NoFatalExit) unless unclean election is enabled"),
    Param("unclean_election", bool, False, "unclean.leader.election.enable"),
    Param("min_isr", int, 1, "min.insync.replicas (acks=all only)", minimum=1),
    Param("acks", str, "all", "producer acks", choices=("0", "1", "all")),
    Param("lag_ticks", int, 0,
          "replica.lag.time.max.ms in logical ticks: a follower leaves the ISR once it has "
          "not caught up for more ticks than this", minimum=0),
    Param("isr_shrink", bool, True, "the isr-expiration task (Tick and ShrinkIsr steps)"),
    Param("crashes", str, "clean",
          "broker crash/restart: none, clean (log kept), unclean (unflushed tail lost, "
          "Flush steps)", choices=("none", "clean", "unclean")),
    Param("hw_checkpoint", bool, False,
          "HW checkpoint file written by its own step (restart reloads it; see "
          "hw_checkpoint_file); off: the HW survives a restart as it was, exact for a clean "
          "shutdown (every release writes the file then), a shortcut for a power loss"),
    Param("reorder_requests", bool, False,
          "controller requests to a broker may be handled in any order (off: in queue "
          "order per controller epoch and broker, as ControllerChannelManager's one "
          "RequestSendThread per broker sends them)", fault=True),
    Param("lost_requests", bool, False,
          "any one controller request may be lost while its connection lives (off: only "
          "a broker crash or a controller failover loses requests); with fetch=split, "
          "fetch responses too", fault=True),
    Param("duplicate_requests", bool, False,
          "a controller request may be handled twice", fault=True),
    Param("controlled_shutdown", bool, False,
          "ControlledShutdown steps (ControlledShutdownLeaderSelector)"),
    Param("preferred_election", bool, False,
          "PreferredElection steps (PreferredReplicaPartitionLeaderSelector)"),
    Param("reassignment", bool, False,
          "Reassign steps: new preference order, ReassignedPartitionLeaderSelector"),
    Param("remove_dead_from_isr", bool, True,
          "the controller removes dead followers from the ISR (OfflineReplica)"),
    Param("max_controller_epoch", int, 0,
          "controller failovers allowed (stale controller epochs)", minimum=0),
    Param("metadata", bool, False,
          "MetadataCache per broker, UpdateMetadata requests, ISR change propagation"),
    Param("consumers", bool, False, "Consume steps (reads below a leader's HW)"),
    Param("initial_isr", int, 0,
          "brokers 0..k-1 form the initial ISR (0: every broker)", minimum=0),
    Param("fetch", str, "atomic",
          "follower fetches: atomic (one round-trip step) or split (FetchRequest handled "
          "by the leader, then FetchResponse on the follower, which may be lost or stale)",
          choices=("atomic", "split")),
    Param("invariants", str, "all",
          "comma-separated invariants to check (see isrlab.spec.invariants), all, or none"),
    Param("elr", bool, True,
          "KIP-966 Eligible Leader Replicas (Kafka 3.7+ with the eligible.leader.replicas "
          "feature, KRaft; 4.0+): the controller keeps an ELR and a last-known ELR, a "
          "replica leaving an ISR below min_isr joins the ELR, one back from a power loss "
          "leaves it, the ISR may empty and an ELR member is elected cleanly, and the HW "
          "waits while the ISR is below min_isr; off: Kafka <= 3.6 and ZooKeeper mode"),
    Param("unclean_recovery", str, "first-alive",
          "which replica an unclean election picks (with unclean_election): first-alive "
          "(the first live replica in assignment order: every Kafka release, ZooKeeper's "
          "OfflinePartitionLeaderSelector and KRaft's PartitionChangeBuilder), or KIP-966's "
          "unclean recovery, the longest log (last epoch, LEO) among the live replicas once "
          "balanced (every last-known ELR member back, else a majority) or aggressive (any "
          "one) replicas reported: designed in KIP-966, not in a release the model covers",
          choices=("first-alive", "balanced", "aggressive")),
    Param("unavailable_leader", str, "fetcher",
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
          choices=("follow", "fetcher", "create-log", "skip")),
    Param("crash_loss", str, "all-unflushed",
          "what a power loss (crashes=unclean) leaves of the unflushed tail: all-unflushed "
          "(nothing of it: the worst case) or tail (any prefix of it, as the OS wrote an "
          "unknown part; LogLoader.load, Kafka 3.0+, and Log.recoverLog before, recover "
          "what is there; keeping all of it is a process kill, still an unclean shutdown)",
          choices=("all-unflushed", "tail")),
    Param("isr_changes", str, "alter-partition",
          "how a leader changes the ISR: zookeeper (it writes ZooKeeper itself, a write "
          "conditional on its epoch: Kafka <= 2.6, and 2.7+ below inter.broker.protocol "
          "2.7-IV2) or alter-partition (KIP-497: it proposes the change to the controller, "
          "one at a time, and commits it when the answer comes back: AlterIsr, Kafka 2.7+, "
          "AlterPartition 3.2+, every KRaft release)",
          choices=("zookeeper", "alter-partition")),
    Param("hw_isr", str, "maximal",
          "with isr_changes=alter-partition, the ISR a leader with a pending change counts "
          "for the HW and acks=all: maximal (the committed ISR plus a pending joiner, Kafka "
          "2.7+) or committed (the committed ISR only: the rule KIP-497 rejected, in no "
          "release)", choices=("maximal", "committed"), fault=True),
    Param("fence_ineligible", bool, True,
          "with isr_changes=alter-partition, KIP-841 (Kafka 3.3+): the controller refuses "
          "a proposed ISR holding a broker that is down (INELIGIBLE_REPLICA) and the leader "
          "goes back to its committed ISR; off: Kafka 2.7-3.2 accept it"),
    Param("hw_checkpoint_file", str, "fsync",
          "the HW checkpoint file (replication-offset-checkpoint), with hw_checkpoint: fsync "
          "(Kafka 0.8.2 through 4.0: written by the checkpoint thread and by a clean "
          "shutdown, ReplicaManager.shutdown(checkpointHW = true), so Crash keeps the HW; "
          "fsynced before its rename, KAFKA-1539, so a power loss leaves the thread's last "
          "write), no-fsync (0.8.0-0.8.1: the same writes without the fsync: a power loss "
          "may also leave the file empty, every HW reading back 0: PowerLoss(b,empty-hw-file)) "
          "or periodic (no release: only the thread writes it, a clean shutdown leaves its "
          "last write, as Kafka's shutdown(checkpointHW = false) in its unit tests; the "
          "model before this parameter)",
          choices=("fsync", "no-fsync", "periodic"), fault=True),
    Param("leader_state_reset", str, "on-leadership",
          "when makeLeader resets the remote replicas' state (LEO, log start, last fetch) to "
          "unknown: on-leadership (every release, 0.8 through 4.x: only when the broker did "
          "not already lead, isNewLeader; a leader that skipped an epoch keeps LEOs from "
          "before it, docs/findings/stale-leo-failover.md) or on-epoch (a fix in no "
          "release: also when the leader epoch changes)",
          choices=("on-leadership", "on-epoch")),
)


def build(params: Mapping[str, ParamValue]) -> KafkaModel:
    """The ``kafka`` model for parsed parameters (``ValueError`` when unusable)."""

    values = {p.name: params.get(p.name, p.default) for p in PARAMS}
    text = str(values.pop("invariants"))
    names: tuple[str, ...] | None = tuple(
        part.strip() for part in text.split(",") if part.strip()
    )
    if names == ("all",):
        names = INVARIANT_NAMES
    elif names == ("none",):
        names = ()
    config = KafkaConfig(**values)  # type: ignore[arg-type]  # PARAMS mirror KafkaConfig
    return KafkaModel(config, names)


def register(reg: Registry) -> None:
    """Add the ``kafka`` model to the registry."""
    reg.register(ModelEntry(
        name="kafka",
        doc="Kafka cluster at the broker-code level: controller, brokers, producers, consumers "
            "(composed of core/); protocol versions and features are parameters",
        params=PARAMS, build=build,
    ))
