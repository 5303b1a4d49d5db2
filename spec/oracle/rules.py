"""The rules of Kafka's code the log oracle judges a broker log by (docs/oracle.md).

Each rule is one statement every reachable state of the protocol satisfies, or one
transition Kafka's code allows, named by the Kafka method that enforces it and the
versions that run that method.  A rejection names the rule, the line and the values.

Two kinds of rule.  Most are steps Kafka's code takes (a check, a computation, a record the
controller writes): a line breaking one is not what Kafka's code does, and the log is
rejected.  A few (``Rule.invariant`` set) are safety properties Kafka intends but no one
method enforces: they follow from the steps only while the code has no bug, and a real
cluster breaks them through one (docs/findings/kraft-equal-epoch-delta.md): a line breaking
one is evidence of that, and the verdict is the invariant broken, in the model's name.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Rule:
    """One rule: a short id, the Kafka method(s) it comes from, the versions, the statement;
    ``invariant``: the model's invariant (``isrlab.spec.invariants``) the rule is a case of,
    when the rule is a safety property a bug of Kafka's code can break (empty: a step of the
    code)."""

    id: str
    method: str
    versions: str
    statement: str
    invariant: str = ""

    def cite(self) -> str:
        """``method (versions): statement``, as a rejection prints it."""
        return f"{self.method} ({self.versions}): {self.statement}"


_ALL = (
    Rule("hw-le-isr-leo", "Partition.maybeIncrementLeaderHW", "0.9-4.x",
         "the leader's high watermark is at most the log end offset of every member of the "
         "(maximal) ISR: it is raised only to their minimum, and a replica leaves the ISR only "
         "by the shrink that names it"),
    Rule("hw-le-leo", "UnifiedLog.updateHighWatermark / Log.highWatermark_=", "0.9-4.x",
         "a replica's high watermark is at most its own log end offset"),
    Rule("hw-monotonic", "Partition.maybeIncrementLeaderHW", "0.9-4.x",
         "a leader's high watermark never decreases while it leads one leader epoch (it is "
         "only ever raised)"),
    Rule("fetch-le-leader-leo", "ReplicaManager.readFromLocalLog / "
         "Partition.updateFollowerFetchState", "0.9-4.x",
         "a follower's log end offset as the leader records it (its fetch offset) is at most "
         "the leader's own log end offset (a fetch past it is OFFSET_OUT_OF_RANGE)"),
    Rule("one-leader-per-epoch", "KafkaController.electLeaderForPartitions / "
         "PartitionChangeBuilder.build", "0.9-4.x (ZooKeeper and KRaft)",
         "a leader epoch has one leader: every election writes leader epoch + 1 by a "
         "conditional ZooKeeper write or one metadata record"),
    Rule("new-epoch-higher", "Partition.makeLeader / ReplicaManager.becomeLeaderOrFollower",
         "0.11-4.x",
         "a broker starts a leader epoch only when it is higher than the one it held (a "
         "request with a lower or equal epoch is ignored)"),
    Rule("epoch-monotonic", "ReplicaManager.becomeLeaderOrFollower / ReplicaManager.applyDelta",
         "0.9-4.x",
         "the leader epochs a broker applies never decrease: the controller only issues "
         "higher ones"),
    Rule("isr-subset-replicas", "Partition.maybeExpandIsr / PartitionChangeBuilder", "0.9-4.x",
         "the ISR holds only assigned replicas: the leader tracks the fetch state of its "
         "assignment only, and the controller validates AlterPartition against it"),
    Rule("isr-change-from-current", "Partition.maybeShrinkIsr / Partition.maybeExpandIsr",
         "0.9-4.x",
         "an ISR change starts from the leader's current ISR (a refused or failed ZooKeeper "
         "write or AlterPartition leaves it unchanged)"),
    Rule("leader-from-isr", "PartitionLeaderElectionAlgorithms.offlinePartitionLeaderElection / "
         "PartitionChangeBuilder.electLeader", "0.11-4.x",
         "with unclean.leader.election.enable=false a new leader is a member of the ISR (or, "
         "KRaft 4.x, of the ELR)"),
    Rule("elected-has-committed", "Partition.maybeIncrementLeaderHW with "
         "AbstractFetcherThread's truncation by leader epoch (KIP-279 with KAFKA-7415)",
         "2.1-4.x",
         "a leader elected from the ISR starts its epoch at or above every high watermark of "
         "the earlier epochs (committed records are on every ISR member, and truncation by "
         "leader epoch never removes them)",
         "NoCommittedRecordLost"),
    Rule("leader-no-truncate", "Partition.makeLeader / AbstractFetcherThread", "0.9-4.x",
         "a leader's log is not truncated while it leads: only the follower's fetcher "
         "truncates, and becoming leader removes the partition from the fetcher"),
    Rule("leader-no-truncate-below-hw", "AbstractFetcherThread.truncate / "
         "Partition.maybeIncrementLeaderHW", "0.9-4.x",
         "a replica never truncates below a high watermark it held: the records below it are "
         "on every ISR member, so on every leader elected cleanly, and a replica truncates "
         "only where its log differs from its leader's (or, before KIP-101, to its own HW)",
         "NoCommittedRecordLost"),
    Rule("isr-member-no-truncate-below-hw", "AbstractFetcherThread.truncate (KIP-279 with "
         "KAFKA-7415)", "2.1-4.x",
         "a follower in the leader's ISR never truncates below the leader's high watermark: "
         "its log agrees with the leader's below it, and it truncates only where they differ",
         "WeakIsr"),
    Rule("log-shrinks-by-truncation", "UnifiedLog.truncateTo / Log.truncateTo", "0.9-4.x",
         "a replica's log end offset decreases only by a truncation, which the broker logs "
         "at INFO ('Truncating to offset')"),
    Rule("partition-epoch-monotonic", "Partition.updateIsr / AlterPartitionManager", "0.9-4.x",
         "the ZooKeeper version (partition epoch) a broker logs for a partition never "
         "decreases"),
    Rule("partition-epoch-plus-one", "PartitionRegistration.merge / "
         "ReplicationControlManager.replay(PartitionChangeRecord)", "KRaft 3.3-4.x",
         "every partition change record raises the partition epoch by exactly one, from the "
         "latest one: a controller replays the metadata log in order, and (at DEBUG) logs every "
         "change it replays"),
    Rule("leader-epoch-on-leader-change", "PartitionRegistration.merge / "
         "PartitionChangeBuilder.build", "KRaft 3.3-4.x",
         "a change of leader raises the leader epoch by exactly one; any other change keeps it "
         "or raises it by one (an ISR shrink before metadata version 3.6, a reassignment), "
         "never more, never down"),
    Rule("elected-is-active", "PartitionChangeBuilder.electLeader with "
         "ReplicationControlManager's isAcceptableLeader (ClusterControlManager.isActive)",
         "KRaft 3.3-4.x",
         "the controller never elects, cleanly or not, a broker that is fenced or in controlled "
         "shutdown (a broker being unfenced is unfenced by a record before the elections it "
         "allows)"),
    Rule("fenced-not-added-to-isr", "ReplicationControlManager.alterPartition / "
         "PartitionChangeBuilder (KIP-841: INELIGIBLE_REPLICA)", "KRaft 3.3-4.x",
         "no ISR change adds a broker that is fenced or in controlled shutdown (the last ISR "
         "member of a fenced broker's partition stays in it; it is never added)"),
    Rule("broker-epoch-increases", "ClusterControlManager.registerBroker / "
         "replayRegistrationChange; BrokerLifecycleManager (KIP-903 fences stale ones)",
         "KRaft 3.0-4.x",
         "a broker's new incarnation gets a broker epoch above every earlier one (the offset of "
         "its RegisterBrokerRecord), a re-registration of the same incarnation keeps or raises "
         "it, and a fence, unfence or controlled-shutdown record names the registration's "
         "current epoch (replay refuses any other)"),
    Rule("one-state-per-partition-epoch", "ReplicationControlManager.replay / "
         "ReplicaManager.applyDelta", "KRaft 3.3-4.x",
         "a partition epoch names one partition state (leader, leader epoch, ISR): every "
         "controller replays, and every broker applies, the same metadata log"),
    Rule("fatal-truncation", "ReplicaFetcherThread.handleOffsetOutOfRange", "0.8-2.0",
         "a follower whose log end offset is past its leader's exits (FatalExitError) "
         "instead of truncating when unclean.leader.election.enable=false; 2.1+ truncates "
         "(KAFKA-7414)"),
)

RULES: dict[str, Rule] = {rule.id: rule for rule in _ALL}
"""Every rule by id."""

INVARIANT_RULES: tuple[str, ...] = tuple(rule.id for rule in _ALL if rule.invariant)
"""The rules that are safety properties (a line breaking one: ``BREAKS`` the invariant)."""
