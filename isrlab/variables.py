"""What a user's invariant may read: each model's variables (``Model.variables``), with their
meaning in Kafka's words (``isrlab models --vars MODEL``).

The names and example values come from the model itself: its first reachable states (a
breadth-first sample, ``SAMPLE_STATES``) with the given parameters, so a variable that only
some parameters add (``-p metadata=true``) is listed when they are given.  The meanings come
from the tables below, one per model family; a path a table does not describe (a user's own
model) is listed with its example value only.

A path names a value as an invariant reads it: ``brokerN.hw`` is ``v["broker0"]["hw"]``,
``v["broker1"]["hw"]``, ...; ``replicaState.R.hw`` is ``v["replicaState"]["r1"]["hw"]``, ...
"""

from __future__ import annotations

import re
from collections import deque
from collections.abc import Mapping
from typing import Any

from isrlab.checker.chart import plain_text
from isrlab.checker.model import Model

SAMPLE_STATES = 3_000
"""States explored (breadth-first) to find every variable the parameters give."""

KAFKA = {
    "controller_epoch": "the controller's epoch (ZooKeeper's /controller_epoch): bumped by "
                        "each controller failover",
    "zk.leader": "the partition's leader as ZooKeeper records it (/brokers/topics/T/"
                 "partitions/0/state; KRaft: the PartitionRegistration), a broker id or -1",
    "zk.leader_epoch": "the partition's leader epoch as ZooKeeper records it",
    "zk.isr": "the ISR as ZooKeeper records it (broker ids): the committed ISR",
    "zk.replicas": "the assigned replicas in preference order (the first is the preferred "
                   "leader)",
    "zk.elr": "KIP-966's Eligible Leader Replicas (with -p elr=true): replicas that left the "
              "ISR below min.insync.replicas yet hold every committed record",
    "zk.last_known_elr": "KIP-966's last-known ELR: ELR members that went down",
    "brokerN.metadata_applied": "KRaft: how many batches of metadata_log broker N has "
                                "published (MetadataLoader), counted from metadata_log's "
                                "start: a batch every live broker published leaves the log, "
                                "so the count drops by as many (a shortcut of the model)",
    "brokerN.broker_epoch": "KRaft: the broker epoch of broker N's running incarnation (its "
                            "registration), as a rank among broker N's epochs the state "
                            "holds (0, 1, ...; Kafka's is the registration record's offset: "
                            "only order and equality matter), so it may drop when an older "
                            "epoch is forgotten",
    "brokerN.partition_epoch": "KRaft: the partition epoch broker N knows (from its metadata "
                               "image or its AlterPartition answer), relative to the one "
                               "every live broker has published (0; -1: older), so it drops "
                               "when that one rises",
    "controller.leader": "KRaft: the active controller's PartitionRegistration.leader, a "
                         "broker id or -1",
    "controller.leader_epoch": "KRaft: the registration's leader epoch",
    "controller.isr": "KRaft: the registration's ISR (broker ids): the committed ISR",
    "controller.replicas": "KRaft: the assigned replicas in preference order",
    "controller.elr": "KRaft, KIP-966 (elr=true): the Eligible Leader Replicas",
    "controller.last_known_elr": "KRaft, KIP-966: the last-known ELR",
    "controller.partition_epoch": "KRaft: the registration's partition epoch, relative as "
                                  "the brokers' partition_epoch is",
    "controller.leader_recovery_state": "KRaft: the registration's LeaderRecoveryState "
                                        "(RECOVERING after an unclean election)",
    "controller.brokers": "KRaft: each broker's registration with the controller: its "
                          "epoch (a rank, as broker_epoch), fenced, and controlled_shutdown "
                          "while in controlled shutdown",
    "controller": "KRaft: the active controller's PartitionRegistration and each broker's "
                  "registration",
    "metadata_log": "KRaft: the suffix of the controller's committed metadata log that some "
                    "live broker has not published yet, one batch per commit (the prefix "
                    "every live broker published is folded into their images)",
    "brokerN.alive": "whether broker N is up (False after Crash/PowerLoss, until Restart)",
    "brokerN.log": "broker N's log of the partition, oldest first, each record as "
                   "mID@EPOCH (record id, the leader epoch it was appended in)",
    "brokerN.hw": "broker N's high watermark (an offset: records below it are committed "
                  "as broker N knows)",
    "brokerN.leader": "the leader broker N last learned of (LeaderAndIsr), a broker id or -1",
    "brokerN.leader_epoch": "the leader epoch broker N last accepted",
    "brokerN.isr": "while broker N leads: its ISR (Partition.inSyncReplicaIds)",
    "brokerN.pending_isr": "while broker N leads, with isr_changes=alter-partition: the ISR "
                           "of its AlterPartition proposal awaiting the controller",
    "brokerN.alter_partition": "the AlterPartition round trip in flight (sent, then the "
                               "controller's answer on its way back)",
    "brokerN.remote_leo": "while broker N leads: each follower's log end offset as the "
                          "leader knows it (-1: unknown)",
    "brokerN.remote_age": "while broker N leads: ticks since each follower was last caught "
                          "up (replica.lag.time.max.ms in ticks)",
    "brokerN.remote_last_fetch": "while broker N leads (KAFKA-4485): the leader's LEO at "
                                 "each follower's previous fetch, and its age",
    "brokerN.hw_checkpoint": "the HW in broker N's replication-offset-checkpoint file "
                             "(with hw_checkpoint=true)",
    "brokerN.hw_checkpoint_thread": "False from a restart to the first LeaderAndIsr: no "
                                    "HW checkpoint thread yet (unavailable_leader=skip)",
    "brokerN.flushed": "how many records of broker N's log are fsynced (crashes=unclean): "
                       "a power loss keeps only these",
    "brokerN.unclean_shutdown": "True while broker N is down after a power loss (elr)",
    "brokerN.truncating": "True while broker N's fetcher waits to truncate against a "
                          "leader that was down (unavailable_leader=fetcher)",
    "brokerN.metadata": "broker N's MetadataCache entry (metadata=true): alive brokers "
                        "(a bit mask), leader, leader epoch, ISR (a bit mask)",
    "brokerN.fetch_response": "broker N's fetch response in flight (fetch=split), or None",
    "requests": "controller requests in flight (LeaderAndIsr, UpdateMetadata), as text",
    "produced": "how many records producers have written (the next record id)",
    "committed": "record id -> the leader epoch in which it was first committed (below an "
                 "acting leader's HW); a ghost variable, for properties only",
    "acknowledged": "record id -> the epoch in which the producer got its acknowledgement "
                    "(ghost)",
    "consumed": "record id -> the epoch in which a consumer read it (consumers=true; ghost)",
    "pending_acks": "acks=all produce requests waiting for the ISR, as mID@bLEADER (ghost)",
    "unclean_election_happened": "whether an unclean leader election happened (ghost)",
    "broker_halted": "whether a broker exited with FatalExitError (kafka_7414=false; ghost)",
    "hw_checkpoint_lost": "whether a checkpoint file was written without the partition "
                          "(unavailable_leader=skip, KAFKA-1647; ghost)",
}

TLA = {
    "replicaLog.R": "replica R's log, oldest first: records {id, epoch}",
    "replicaState.R": "replica R's state: hw (its high watermark), leaderEpoch and leader "
                      "(the LeaderAndIsr it last accepted; None: no leader), isr (its ISR "
                      "while it leads, else {})",
    "nextRecordId": "the id of the next record a producer writes",
    "nextLeaderEpoch": "the leader epoch the next election assigns",
    "leaderAndIsrRequests": "LeaderAndIsr requests sent by the controller (a set: any may be "
                            "delivered, any number of times)",
    "quorumState.leader": "the leader the controller elected (ZooKeeper), None when none",
    "quorumState.leaderEpoch": "the leader epoch the controller recorded",
    "quorumState.isr": "the ISR the controller recorded",
}

TLA_ASYNC_ISR = {
    "controllerState.isr": "the ISR the controller recorded",
    "controllerState.version": "its version (the partition epoch)",
    "leaderState.isr": "the leader's committed ISR",
    "leaderState.version": "the version of the leader's committed ISR",
    "leaderState.pendingIsr": "the ISR of the leader's request in flight ({}: none)",
    "leaderState.pendingVersion": "the version it expects (-1: none)",
    "leaderState.offsets": "each replica's log end offset as the leader knows it",
    "requests": "AlterIsr requests from the leader to the controller",
    "updates": "the controller's answers (ISR updates) on their way to the leader",
}

TLA_KRAFT = {
    "con_unfenced": "the controller's unfenced brokers (BrokerHeartbeatManager)",
    "con_broker_reg": "the controller's broker registrations: each broker's incarnation, "
                      "broker epoch and status (ClusterControlManager)",
    "con_partition_metadata": "the controller's PartitionRegistration: replicas, ISR, leader, "
                              "leader epoch, partition epoch (and with KIP-966 the ELR and "
                              "last-known ELR), adding and removing replicas",
    "con_metadata_log": "the controller's committed metadata log: one partition record per "
                        "partition change",
    "broker_state": "each broker's state: status (RUNNING, STARTING, OFFLINE_CLEAN, "
                    "OFFLINE_DIRTY), broker epoch, incarnation, registered, the clean-shutdown "
                    "broker epoch on disk (KIP-966)",
    "broker_fetchers": "each broker's fetcher: the fetch in flight to each leader (partition, "
                       "fetch offset, last fetched epoch) and whether a response is pending",
    "broker_metadata_log": "each broker's copy of the metadata log: a prefix of the "
                           "controller's, as far as it has replayed",
    "partition_status": "each broker's role for the partition: Leader, Follower or Nil",
    "partition_metadata": "each broker's view of the partition (from its metadata log and "
                          "AlterPartition responses): replicas, ISR, maximal ISR, leader, "
                          "leader epoch, partition epoch",
    "partition_data": "each broker's log of the partition: its records (value, leader epoch), "
                      "log end offset and high watermark",
    "partition_leso": "each broker's leader epoch start offset (-1 if none)",
    "partition_replica_state": "while a broker leads: each follower's fetch offset and broker "
                               "epoch as the leader knows them (Replica state)",
    "partition_pending_ap": "each leader's AlterPartition request in flight (a request id and "
                            "the proposed ISR with broker epochs)",
    "messages": "the requests and responses in flight (registration, AlterPartition, fetch), "
                "as a bag",
    "messages_discard": "messages already processed (kept so that a message is consumed once; "
                        "outside the published view)",
    "aux_broker_epoch": "the next broker epoch the controller hands out",
    "aux_ctrs": "counters bounding the search: incarnations, clean and unclean shutdowns, "
                "fencings, leader ISR shrinks, reassignments",
    "aux_flo": "each broker's first offset written in its current leadership (10000: none "
               "yet); only records from there on are acknowledged by it",
    "inv_sent": "the values the producer sent",
    "inv_pos_acked": "the values acknowledged to the producer (committed with acks=all)",
    "inv_neg_acked": "the values refused to the producer",
    "inv_true_hwm": "the true high watermark: the offset below which every record is on "
                    "every ISR member, for the properties",
    "inv_consumed": "what consumers read: (broker, offset, value) records, for "
                    "ConsistentReadProperty",
}

TOYS = {
    "x": "the counter", "hour": "the hour", "minute": "the minute",
    "node": "the current node of the graph", "value.P": "process P's value",
}

FAMILIES: tuple[tuple[str, Mapping[str, str]], ...] = (
    ("kafka", KAFKA), ("tla-async-isr", TLA_ASYNC_ISR), ("tla-kraft-", TLA_KRAFT),
    ("tla-", TLA), ("toy-", TOYS),
)


def _generic(name: str) -> str:
    """A variable path with broker ids, replica names and process names made generic."""
    name = re.sub(r"^broker\d+", "brokerN", name)
    name = re.sub(r"^(replicaLog|replicaState)\.r\d+", r"\1.R", name)
    return re.sub(r"^value\.p\d+", "value.P", name)


def _paths(variables: Mapping[str, Any]) -> dict[str, Any]:
    """Each variable, and each entry of a variable that is a mapping, by its path."""
    out: dict[str, Any] = {}
    for name, value in variables.items():
        if isinstance(value, Mapping) and value and name not in ("committed", "acknowledged",
                                                                 "consumed"):
            for key, inner in value.items():
                out.setdefault(_generic(f"{name}.{plain_text(key)}"), inner)
        else:
            out.setdefault(_generic(name), value)
    return out


def sample_paths(model: Model[Any], limit: int = SAMPLE_STATES) -> dict[str, Any]:
    """Every variable path seen in the first ``limit`` states breadth-first, with the first
    value seen (a non-empty one where one turned up)."""
    seen: set[bytes] = set()
    queue = deque(model.init_states())
    found: dict[str, Any] = {}
    count = 0
    while queue and count < limit:
        state = queue.popleft()
        count += 1
        for path, value in _paths(model.variables(state)).items():
            if path not in found or (not found[path] and value):
                found[path] = value
        for _, successor in model.next_states(state):
            code = model.encode(successor)
            if code not in seen:
                seen.add(code)
                queue.append(successor)
    return found


def meanings_for(name: str) -> Mapping[str, str]:
    """The meanings table of the family a model name belongs to (an extended model,
    ``tla-kip320+custom``, reads its base's), else none."""
    for prefix, table in FAMILIES:
        if name.startswith(prefix):
            return table
    return {}


def variable_rows(name: str, model: Model[Any]) -> list[tuple[str, str, str]]:
    """(path, example value as Python writes it, meaning) of every variable of ``model``:
    sampled paths in the model's order; a path its table lacks has meaning ``""``."""
    table = meanings_for(name)
    rows = []
    for path, value in sample_paths(model).items():
        meaning = table.get(path, "")
        if not meaning and "." in path:  # a family describes the whole of a mapping
            meaning = table.get(path.split(".")[0], "")
        rows.append((path, repr(value), meaning))
    return rows


def access(path: str) -> str:
    """How an invariant reads ``path``: ``brokerN.hw`` -> ``v["broker0"]["hw"]``."""
    parts = path.split(".")
    concrete = [{"brokerN": "broker0", "R": "r1", "P": "p0"}.get(p, p) for p in parts]
    return "v" + "".join(f"[{p!r}]" for p in concrete).replace("'", '"')
