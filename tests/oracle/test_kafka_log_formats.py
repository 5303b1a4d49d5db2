"""Every line format of ``isrlab.spec.kafka_log.FORMATS`` parsed from a line written by hand from
Kafka's format string (the version and the figures it carries), and log entries read as
they are written to disk (prefixes, continuation lines, several files merged)."""

from __future__ import annotations

from typing import Any

import pytest

from isrlab.spec.kafka_log import (
    FORMATS,
    category_of,
    looks_like_kafka_log,
    merge_entries,
    parse_line,
    split_entries,
    writer_of,
)

TID = "Some(q3ZbN0d-TJ6l3lBQcrpLaw)"

# (version the line follows, line, kind, writer, partition, fields it must carry)
SAMPLES: list[tuple[str, str, str, int, str | None, dict[str, Any]]] = [
    ("0.10", "Partition [t,0] on broker 1: Shrinking ISR for partition [t,0] from 1,2,3 to 1,3",
     "shrink", 1, "t-0", {"old": (1, 2, 3), "new": (1, 3)}),
    ("0.10", "Partition [t,0] on broker 1: Expanding ISR for partition [t,0] from 1 to 1,2",
     "expand", 1, "t-0", {"old": (1,), "new": (1, 2)}),
    ("0.11", "Partition [t,0] on broker 1: Shrinking ISR from 1,2 to 1",
     "shrink", 1, "t-0", {"old": (1, 2), "new": (1,)}),
    ("2.4", "[Partition t-0 broker=1] Shrinking ISR from 1,2 to 1. Leader: (highWatermark: 3, "
     "endOffset: 5). Out of sync replicas: (brokerId: 2, endOffset: 3). (kafka.cluster.Partition)",
     "shrink", 1, "t-0", {"old": (1, 2), "new": (1,), "hw": 3, "leo": 5,
                          "out_of_sync": ((2, 3),)}),
    ("4.0", "[Partition t-0 broker=1] Shrinking ISR from 1,2,3 to 1. Leader: (highWatermark: 3, "
     "endOffset: 5). Out of sync replicas: (brokerId: 2, endOffset: 3, lastCaughtUpTimeMs: 17) "
     "(brokerId: 3, endOffset: unknown, lastCaughtUpTimeMs: unknown).",
     "shrink", 1, "t-0", {"hw": 3, "leo": 5, "out_of_sync": ((2, 3), (3, None))}),
    ("2.7", "[Partition t-0 broker=2] Expanding ISR from 2 to 2,1", "expand", 2, "t-0",
     {"old": (2,), "new": (2, 1)}),
    ("0.10", "Partition [t,0] on broker 1: ISR updated to [1,2] and zkVersion updated to [7]",
     "isr_updated", 1, "t-0", {"isr": (1, 2), "version": 7}),
    ("2.7", "[Partition t-0 broker=1] ISR updated from AlterIsr to 1,2 and version updated to [8]",
     "isr_updated", 1, "t-0", {"isr": (1, 2), "version": 8}),
    ("3.0", "[Partition t-0 broker=1] ISR updated to 1 and version updated to [9]",
     "isr_updated", 1, "t-0", {"isr": (1,), "version": 9}),
    ("3.5", "[Partition t-0 broker=1] ISR updated to 1 (under-min-isr) and version updated to 10",
     "isr_updated", 1, "t-0", {"isr": (1,), "version": 10}),
    ("0.11", "Partition [t,0] on broker 1: t-0 starts at Leader Epoch 2 from offset 7. Previous "
     "Leader Epoch was: 1", "leader_start", 1, "t-0", {"epoch": 2, "offset": 7, "prev": 1}),
    ("2.0", "[Partition t-0 broker=3] t-0 starts at Leader Epoch 0 from offset 0. Previous "
     "Leader Epoch was: -1", "leader_start", 3, "t-0", {"epoch": 0, "offset": 0, "prev": -1}),
    ("2.7", "[Broker id=1] Leader t-0 starts at leader epoch 4 from offset 9 with high watermark "
     "8 ISR [1,2] addingReplicas [] removingReplicas []. Previous leader epoch was 3.",
     "leader_start", 1, "t-0", {"epoch": 4, "offset": 9, "hw": 8, "isr": (1, 2), "prev": 3}),
    ("3.3", f"[Broker id=1001] Leader t-0 with topic id {TID} starts at leader epoch 0 from offset "
     "0 with partition epoch 0, high watermark 0, ISR [1001], adding replicas [] and removing "
     "replicas []. Previous leader epoch was -1. (state.change.logger)", "leader_start", 1001,
     "t-0", {"epoch": 0, "offset": 0, "version": 0, "hw": 0, "isr": (1001,), "prev": -1}),
    ("2.7", "[Broker id=2] Follower t-0 starts at leader epoch 4 from offset 9 with high "
     "watermark 8. Previous leader epoch was 3.", "follower_start", 2, "t-0",
     {"epoch": 4, "offset": 9, "hw": 8, "prev": 3}),
    ("4.0", "[Broker id=2] Follower t-0 starts at leader epoch 4 from offset 9 with partition "
     "epoch 6 and high watermark 8. Current leader is 1. Previous leader Some(1) and previous "
     "leader epoch was 3.", "follower_start", 2, "t-0",
     {"epoch": 4, "offset": 9, "version": 6, "hw": 8, "leader": 1, "prev": 3}),
    ("0.10", "Broker 2 received LeaderAndIsr request PartitionState(controllerEpoch=1, leader=2, "
     "leaderEpoch=1, isr=[2], zkVersion=1, replicas=[1, 2]) correlation id 7 from controller 1 "
     "epoch 1 for partition [t,0]", "leader_and_isr", 2, "t-0",
     {"leader": 2, "leaderEpoch": 1, "isr": (2,), "zkVersion": 1, "cid": 7}),
    ("2.4", "[Broker id=2] Received LeaderAndIsr request LeaderAndIsrPartitionState(topicName='t',"
     " partitionIndex=0, controllerEpoch=1, leader=1, leaderEpoch=3, isr=[1, 2], zkVersion=5, "
     "replicas=[1, 2], addingReplicas=[], removingReplicas=[], isNew=false) correlation id 9 from "
     "controller 1 epoch 1", "leader_and_isr", 2, "t-0",
     {"leader": 1, "leaderEpoch": 3, "isr": (1, 2), "cid": 9}),
    ("0.10", "Broker 2 completed LeaderAndIsr request correlationId 7 from controller 1 epoch 1 "
     "for the become-leader transition for partition [t,0]", "completed", 2, "t-0",
     {"cid": 7, "role": "leader"}),
    ("0.10", "Broker 2 ignoring LeaderAndIsr request from controller 1 with correlation id 8 epoch"
     " 1 for partition [t,0] since its associated leader epoch 1 is not higher than the current "
     "leader epoch 1", "ignoring", 2, "[t,0]", {"cid": 8}),
    ("0.10", "Partition [t,0] on broker 1: High watermark for partition [t,0] updated to 3 "
     "[0 : 210]", "hw", 1, "t-0", {"hw": 3}),
    ("2.4", "[Partition t-0 broker=1] High watermark updated from (offset=2 segment=[0:140]) to "
     "(offset=3 segment=[0:210])", "hw", 1, "t-0", {"hw": 3}),
    ("2.4", "[Partition t-0 broker=1] Log loaded for partition t-0 with initial high watermark 4",
     "log_loaded", 1, "t-0", {"hw": 4}),
    ("0.10", "Partition [t,0] on broker 1: No checkpointed highwatermark is found for partition "
     "t-0", "no_checkpoint", 1, "t-0", {}),
    ("0.10", "Truncating log t-0 to offset 2.", "truncate", -1, "t-0", {"offset": 2}),
    ("3.0", "[Log partition=t-0, dir=/var/kafka] Truncating to offset 2", "truncate", -1, "t-0",
     {"offset": 2}),
    ("2.4", "[ReplicaFetcher replicaId=2, leaderId=1, fetcherId=0] Truncating t-0 to offset 1 "
     "below high watermark 3", "truncate", 2, "t-0", {"offset": 1, "hw": 3}),
    ("1.1", "[Partition t-0 broker=1] Cached zkVersion [5] not equal to that in zookeeper, skip "
     "updating ISR (kafka.cluster.Partition)", "zk_refused", 1, "t-0", {"version": 5}),
    ("0.10", "Partition [t,0] on broker 1: Cached zkVersion [5] not equal to that in zookeeper, "
     "skip updating ISR", "zk_refused", 1, "t-0", {"version": 5}),
    ("3.6", f"[Broker id=1] Leader t-0 with topic id {TID} starts at leader epoch 1 from offset 5 "
     "with partition epoch 2, high watermark 5, ISR [1,2], adding replicas [] and removing "
     "replicas [] . Previous leader None and previous leader epoch was -1.", "leader_start", 1,
     "t-0", {"epoch": 1, "offset": 5, "prev": -1, "hw": 5, "version": 2, "isr": (1, 2)}),
    ("3.6", f"[Broker id=1] Leader t-0 with topic id {TID} starts at leader epoch 3 from offset 5 "
     "with partition epoch 4, high watermark 5, ISR [1,2], adding replicas [] and removing "
     "replicas [] . Previous leader Some(2) and previous leader epoch was 2.", "leader_start", 1,
     "t-0", {"epoch": 3, "prev": 2, "prevleader": 2}),
    ("1.0", "[ReplicaFetcher replicaId=2, leaderId=1, fetcherId=0] Exiting because log truncation "
     "is not allowed for partition t-0, current leader 1's latest offset 5 is less than replica "
     "2's latest offset 7", "fatal_truncation", 2, "t-0", {"leader": 1, "leaderleo": 5, "leo": 7}),
    ("2.2", "[ReplicaFetcher replicaId=2, leaderId=1, fetcherId=0] Truncating partition t-0 to "
     "local high watermark 4", "truncate", 2, "t-0", {"offset": 4}),
    ("4.1", "[ReplicaFetcher replicaId=1, leaderId=3, fetcherId=0] Truncating partition t-0 with "
     "TruncationState(offset=768982, completed=true) due to leader epoch and offset "
     "EpochEndOffset(errorCode=0, partition=1, leaderEpoch=5, endOffset=768982)", "truncate", 1,
     "t-0", {"offset": 768982}),
    ("4.1", "[UnifiedLog partition=t-0, dir=/tmp/kafka-logs-1] Truncating to 768982 has no effect "
     "as the largest offset in the log is 768981", "truncate_noop", -1, "t-0",
     {"offset": 768982, "last": 768981}),
    ("3.7", "[QuorumController id=1] Replayed PartitionRecord for new partition t-0 with topic ID "
     "W and PartitionRegistration(replicas=[1, 2, 3], directories=[A, B, C], isr=[1, 2, 3], "
     "removingReplicas=[], addingReplicas=[], elr=[], lastKnownElr=[], leader=1, "
     "leaderRecoveryState=RECOVERED, leaderEpoch=0, partitionEpoch=0).", "ctl_partition", -1,
     "t-0", {"controller": 1, "created": True,
             "record": {"replicas": (1, 2, 3), "directories": (), "isr": (1, 2, 3),
                        "removingReplicas": (), "addingReplicas": (), "elr": (),
                        "lastKnownElr": (), "leader": 1, "leaderRecoveryState": "RECOVERED",
                        "leaderEpoch": 0, "partitionEpoch": 0}}),
    ("3.3", "[Controller 1] Created partition t-0 with topic ID W and PartitionRegistration("
     "replicas=[1, 2], isr=[2], removingReplicas=[], addingReplicas=[], leader=2, "
     "leaderRecoveryState=RECOVERED, leaderEpoch=0, partitionEpoch=0).", "ctl_partition", -1,
     "t-0", {"controller": 1, "created": True}),
    ("3.5", "[KRaftMigrationDriver id=3000] PartitionRecord(partitionId=48, topicId=W, "
     "replicas=[0, 1, 2], isr=[2], removingReplicas=[], addingReplicas=[], leader=2, "
     "leaderRecoveryState=0, leaderEpoch=4, partitionEpoch=4)", "registration", -1, None,
     {"replicas": (0, 1, 2), "isr": (2,), "leader": 2, "leaderEpoch": 4}),
    ("3.7", "[QuorumController id=1] UNCLEAN partition change for t-0 with topic ID W: isr: [1] "
     "-> [2], leader: 1 -> 2, leaderRecoveryState: RECOVERED -> RECOVERING, leaderEpoch: 2 -> 3, "
     "partitionEpoch: 5 -> 6 (org.apache.kafka.controller.ReplicationControlManager)",
     "ctl_change", -1, "t-0",
     {"controller": 1, "unclean": True,
      "diff": {"isr": ((1,), (2,)), "leader": (1, 2),
               "leaderRecoveryState": ("RECOVERED", "RECOVERING"), "leaderEpoch": (2, 3),
               "partitionEpoch": (5, 6)}}),
    ("3.3", "[Controller 0] partition change for t-0 with topic ID W: isr: [1, 2, 3] -> [1, 3], "
     "partitionEpoch: 7 -> 8", "ctl_change", -1, "t-0",
     {"controller": 0, "unclean": False, "diff": {"isr": ((1, 2, 3), (1, 3)),
                                                   "partitionEpoch": (7, 8)}}),
    ("3.6", "[QuorumController id=3000] Replayed partition change PartitionChangeRecord("
     "partitionId=0, topicId=W, isr=[1, 2], leader=-2, replicas=null, removingReplicas=null, "
     "addingReplicas=null, leaderRecoveryState=-1) for topic t", "ctl_record", -1, "t-0",
     {"record": {"partitionId": 0, "topicId": "W", "isr": (1, 2), "leader": -2,
                 "replicas": None, "removingReplicas": None, "addingReplicas": None,
                 "leaderRecoveryState": -1}}),
    ("3.3", "[Controller 1] Node 2 has altered ISR for t-0 to [2, 3].", "ctl_altered", 2, "t-0",
     {"isr": (2, 3), "controller": 1}),
    ("3.6", "[QuorumController id=1] Rejecting AlterPartition request from node 2 for t-0 because "
     "it specified ineligible replicas [3] in the new ISR [2, 3].", "ctl_alter_rejected", 2,
     "t-0", {"controller": 1,
             "why": "it specified ineligible replicas [3] in the new ISR [2, 3]."}),
    ("3.3", "[Controller 0] Fencing broker 1 because its session has timed out.", "ctl_fencing",
     1, None, {"controller": 0}),
    ("4.1", "[QuorumController id=1000] Fencing broker 0 at epoch 9 because its session has timed "
     "out.", "ctl_fencing", 0, None, {"controller": 1000, "bepoch": 9}),
    ("3.6", "[QuorumController id=3000] Replayed BrokerRegistrationChangeRecord modifying the "
     "registration for broker 0: BrokerRegistrationChangeRecord(brokerId=0, brokerEpoch=3, "
     "fenced=-1, inControlledShutdown=0)", "ctl_broker", 0, None,
     {"controller": 3000, "bepoch": 3, "fenced": -1, "shutdown": False}),
    ("3.6", "[QuorumController id=1] Replayed FenceBrokerRecord modifying the registration for "
     "broker 2: FenceBrokerRecord(id=2, epoch=17)", "ctl_broker", 2, None,
     {"bepoch": 17, "fenced": 1}),
    ("3.9", "[QuorumController id=1] Replayed RegisterBrokerRecord establishing a new incarnation "
     "of broker 2: RegisterBrokerRecord(brokerId=2, isMigratingZkBroker=false, incarnationId=Y, "
     "brokerEpoch=90486, endPoints=[BrokerEndpoint(name='PLAINTEXT', host='h', port=9093, "
     "securityProtocol=0)], features=[BrokerFeature(name='kraft.version', minSupportedVersion=0, "
     "maxSupportedVersion=1)], rack=null, fenced=true, inControlledShutdown=false, logDirs=[X])",
     "ctl_register", 2, None, {"controller": 1, "bepoch": 90486, "initial": False,
                               "incarnation": True, "fenced": 1, "shutdown": False}),
    ("3.3", "[Controller 1] Registered new broker: RegisterBrokerRecord(brokerId=3, "
     "incarnationId=Z, brokerEpoch=12, endPoints=[], features=[], rack=null, fenced=true)",
     "ctl_register", 3, None, {"bepoch": 12, "initial": True, "fenced": 1}),
    ("3.3", "[Controller 1] Unfenced broker: 3", "ctl_fenced", 3, None, {"fenced": -1}),
    ("3.3", "[Controller 1] The request from broker 3 to unfence has been granted because it has "
     "caught up with the offset of it's register broker record 12.", "ctl_unfence_granted", 3,
     None, {"controller": 1}),
    ("3.6", "[QuorumController id=1] Unfenced broker 2 has requested and been granted a "
     "controlled shutdown.", "ctl_shutdown_granted", 2, None, {"controller": 1}),
    # BrokerHeartbeatManager.calculateNextBrokerState (3.0-4.x, 1eb7644 l. 544-606): the
    # grants that fence a broker (SHUTDOWN_NOW / FENCED -> handleBrokerFenced) ...
    ("3.9", "[QuorumController id=3] The request from broker 2 to shut down has been granted "
     "since the lowest active offset 9223372036854775807 is now greater than the broker's "
     "controlled shutdown offset 93620.", "ctl_shutdown_now", 2, None, {"controller": 3}),
    ("3.0", "[Controller 1] The request from broker 2 to shut down has been granted since the "
     "lowest active offset 40 is now greater than the broker's shutdown offset 38.",
     "ctl_shutdown_now", 2, None, {"controller": 1}),
    ("4.0", "[QuorumController id=1] Fenced broker 4 has requested and been granted an "
     "immediate shutdown.", "ctl_shutdown_now", 4, None, {"controller": 1}),
    ("4.0", "[QuorumController id=1] Unfenced broker 4 has requested and been granted an "
     "immediate shutdown.", "ctl_shutdown_now", 4, None, {"controller": 1}),
    ("4.0", "[QuorumController id=1] Unfenced broker 4 has requested and been granted fencing",
     "ctl_shutdown_now", 4, None, {"controller": 1}),
    # ... and the DEBUG lines of a request not granted yet: still fenced, still shutting down
    ("4.0", "[QuorumController id=1] The request from broker 4 to unfence cannot yet be granted "
     "because it has not caught up with the offset of its register broker record 17. It is "
     "still at offset 9.", "ctl_still_fenced", 4, None, {"controller": 1}),
    ("4.0", "[QuorumController id=1] The request from broker 4 to shut down can not yet be "
     "granted because the lowest active offset 10 is not greater than the broker's shutdown "
     "offset 12.", "ctl_in_shutdown", 4, None, {"controller": 1}),
    # EventHandlerExceptionInfo.failureMessage (3.9 and 1eb7644 l. 179; 3.3.1's wording in a
    # StackOverflow question of 2023-01, "in 1913 us"): the active controller renounces
    ("3.9", "[QuorumController id=3] writeNoOpRecord: event failed with NotLeaderException "
     "(treated as NotControllerException) at epoch 3056 in 1358 microseconds. Renouncing "
     "leadership and reverting to the last committed offset 93644. Exception message: Append "
     "failed because the replica is not the current leader", "ctl_renounce", -1, None,
     {"controller": 3, "offset": 93644}),
    ("3.3", "[Controller 3] maybeFenceReplicas: failed with unknown server exception "
     "NotLeaderException at epoch 2641 in 1913 us. Renouncing leadership and reverting to the "
     "last committed offset 9986340.", "ctl_renounce", -1, None,
     {"controller": 3, "offset": 9986340}),
    ("4.0", "[QuorumController id=1] Broker 4 is in controlled shutdown state, but can not shut "
     "down because more leaders still need to be moved.", "ctl_in_shutdown", 4, None,
     {"controller": 1}),
    ("4.3", "[QuorumController id=1] UNCLEAN partition change for t-0: isr: [1] -> [2], leader: "
     "1 -> 2, leaderEpoch: 2 -> 3, partitionEpoch: 5 -> 6", "ctl_change", -1, "t-0",
     {"diff": {"isr": ((1,), (2,)), "leader": (1, 2), "leaderEpoch": (2, 3),
               "partitionEpoch": (5, 6)}}),
    ("4.3", "[Broker id=1] Follower t-0 starts at leader epoch 3 from offset 58000 with partition "
     "epoch 6 and high watermark 58000. Current leader is 2.", "follower_start", 1, "t-0",
     {"epoch": 3, "offset": 58000, "version": 6, "hw": 58000, "leader": 2}),
    ("3.x", "Truncating t-0 to offset 31000 below high watermark 58000", "truncate", -1, "t-0",
     {"offset": 31000, "hw": 58000}),
    ("0.9", "[ReplicaFetcherThread-0-1], Replica 2 for partition [t,0] reset its fetch offset "
     "from 20 to current leader 1's latest offset 10", "reset_offset", 2, "t-0",
     {"from": 20, "leader": 1, "which": "latest", "offset": 10}),
    ("0.11", "[ReplicaFetcherThread-0-1]: Replica 2 for partition t-0 reset its fetch offset from "
     "3 to current leader 1's start offset 40", "reset_offset", 2, "t-0",
     {"from": 3, "which": "start", "offset": 40}),
    ("2.1", "[ReplicaFetcher replicaId=2, leaderId=1, fetcherId=0] Reset fetch offset for "
     "partition t-0 from 20 to current leader's latest offset 12", "reset_offset", 2, "t-0",
     {"from": 20, "leader": 1, "which": "latest", "offset": 12}),
    ("1.0", "[ReplicaFetcher replicaId=2, leaderId=1, fetcherId=0] Based on follower's leader "
     "epoch, leader replied with an offset 30 >= the follower's log end offset 25 in t-0. No "
     "truncation needed.", "epoch_no_truncation", 2, "t-0", {"offset": 30, "leo": 25}),
    ("3.3", "[BrokerLifecycleManager id=4] Successfully registered broker 4 with broker epoch 56",
     "lifecycle_registered", 4, None, {"bepoch": 56}),
    ("3.3", "[BrokerLifecycleManager id=4] The broker has been unfenced. Transitioning from "
     "RECOVERY to RUNNING.", "lifecycle_unfenced", 4, None, {}),
    ("3.2", "[Controller id=1 epoch=1] Sending become-leader LeaderAndIsr request "
     "LeaderAndIsrPartitionState(topicName='t', partitionIndex=0, controllerEpoch=1, leader=1, "
     "leaderEpoch=0, isr=[1], zkVersion=0, replicas=[1], addingReplicas=[], removingReplicas=[], "
     "isNew=true) to broker 1 for partition t-0", "registration", -1, "t-0",
     {"replicas": (1,), "isr": (1,), "leader": 1, "leaderEpoch": 0}),
    ("3.9", "[Broker id=1] Skipped the become-follower state change for t-0 with topic id "
     f"{TID} and partition state LeaderAndIsrPartitionState(topicName='t', partitionIndex=0, "
     "controllerEpoch=-1, leader=3, leaderEpoch=134, isr=[3, 2], partitionEpoch=259, "
     "replicas=[1, 2, 3], addingReplicas=[], removingReplicas=[], isNew=false, "
     "leaderRecoveryState=0) since it is already a follower with leader epoch 134.",
     "registration", 1, "t-0", {"replicas": (1, 2, 3), "isr": (3, 2), "leader": 3}),
    ("2.8", "[Controller id=1 epoch=4] Changed partition t-0 from NewPartition to OnlinePartition "
     "with state LeaderAndIsr(leader=1, leaderEpoch=0, isr=List(1, 0, 2), zkVersion=0)",
     "registration", -1, "t-0", {"leader": 1, "leaderEpoch": 0, "isr": (1, 0, 2)}),
    ("2.4", "[Controller id=1 epoch=9] Partition t-0 state changed to (Leader:-1,ISR:3,"
     "LeaderEpoch:1,ControllerEpoch:9) after removing replica 3 from the ISR as part of "
     "transition to OfflineReplica", "registration", -1, "t-0",
     {"leader": -1, "isr": (3,), "epoch": 1}),
    ("2.8", "[Controller id=1 epoch=4] Changed partition t-0 state from NonExistentPartition to "
     "NewPartition with assigned replicas 1,0,2", "registration", -1, "t-0",
     {"replicas": (1, 0, 2)}),
    ("0.11", "Broker 2 received LeaderAndIsr request PartitionState(controllerEpoch=1, leader=2, "
     "leaderEpoch=0, isr=2,1, zkVersion=0, replicas=2,1) correlation id 7 from controller 1 "
     "epoch 1 for partition [t,8]", "leader_and_isr", 2, "t-8",
     {"isr": (2, 1), "replicas": (2, 1)}),
    ("2.4", "Deleted log for partition t-0 in /var/kafka/t-0.8f3a-delete.", "log_deleted", -1,
     "t-0", {}),
    ("1.0", "Truncating t-0 to 2391 has no effect as the largest offset in the log is 2390.",
     "truncate_noop", -1, "t-0", {"offset": 2391, "last": 2390}),
    ("4.1", "[Partition t-0 broker=1] Skipping update high watermark since new hw (offset=88, "
     "segment=[16:76938]) is not larger than old value. All current LEOs are Set(replica 2: "
     "(offset=88, segment=[16:76938]), replica 1: (offset=89, segment=[16:78032]))", "leos", 1,
     "t-0", {"leos": ((2, 88), (1, 89))}),
    ("4.1", "[Partition t-0 broker=2] Recorded replica 1 log end offset (LEO) position 771005 and "
     "log start offset 0.", "leos", 2, "t-0", {"leos": ((1, 771005),)}),
    ("0.10", "[Kafka Server 3], started (kafka.server.KafkaServer)", "started", 3, None, {}),
    ("2.0", "[KafkaServer id=3] started (kafka.server.KafkaServer)", "started", 3, None, {}),
    ("3.7", "[BrokerServer id=3] Transition from STARTING to STARTED", "started", 3, None, {}),
]


@pytest.mark.parametrize(("version", "line", "kind", "writer", "partition", "fields"), SAMPLES,
                         ids=[f"{s[0]}-{s[2]}-{i}" for i, s in enumerate(SAMPLES)])
def test_each_line_format_is_parsed_with_every_figure_it_carries(
    version: str, line: str, kind: str, writer: int, partition: str | None,
    fields: dict[str, Any],
) -> None:
    event = parse_line(1, f"[2024-01-01 00:00:00,000] INFO {line}")
    assert event is not None, line
    assert (event.kind, event.broker) == (kind, writer)
    if partition != "[t,0]":
        assert event.partition == partition
    for key, value in fields.items():
        assert event.fields[key] == value, key


def test_every_format_has_a_sample() -> None:
    matched = set()
    for _, line, *_ in SAMPLES:
        for index, fmt in enumerate(FORMATS):
            if fmt.pattern.search(line):
                matched.add(index)
                break
    assert matched == set(range(len(FORMATS)))


def test_unrelated_lines_are_skipped() -> None:
    assert parse_line(1, "[2026-11-20 09:00:03,400] INFO [ReplicaFetcherThread-0-1]: "
                         "Starting (kafka.server.ReplicaFetcherThread)") is None


@pytest.mark.parametrize("line", [
    "kafka1  | [2023-05-02 10:00:30,000] INFO [Partition t-0 broker=1001] Expanding ISR from "
    "1001 to 1001,1002 (kafka.cluster.Partition)",
    "2025-03-18T10:00:30.000Z INFO  [data-plane-kafka-request-handler-4] kafka.cluster.Partition "
    "- [Partition t-0 broker=1001] Expanding ISR from 1001 to 1001,1002",
    "10:00:30 host kafka[311]: 2023-05-02 10:00:30,000 INFO [Partition t-0 broker=1001] "
    "Expanding ISR from 1001 to 1001,1002",
])
def test_an_entry_is_found_after_any_prefix(line: str) -> None:
    entries = split_entries(line, "f")
    assert len(entries) == 1 and entries[0].level == "INFO"
    assert entries[0].time.endswith("10:00:30.000")
    event = parse_line(1, entries[0].text, entries[0])
    assert event is not None and event.kind == "expand" and event.broker == 1001
    assert looks_like_kafka_log(line)


def test_continuation_lines_join_their_entry_and_compose_services_are_sources() -> None:
    text = ("kafka1  | [2023-05-02 10:00:00,000] ERROR oops\n"
            "kafka1  | java.lang.IllegalStateException: bad\n"
            "kafka1  | \tat a.b.C.d(C.java:1)\n"
            "kafka2  | [2023-05-02 10:00:01,000] TRACE [Broker id=2] Received LeaderAndIsr\n"
            "kafka2  |   request LeaderAndIsrPartitionState(leader=1, leaderEpoch=1, isr=[1]) "
            "correlation id 3\n")
    entries = split_entries(text, "compose.log")
    assert [(e.source, e.line, e.level) for e in entries] == [
        ("compose.log:kafka1", 1, "ERROR"), ("compose.log:kafka2", 4, "TRACE")]
    assert "IllegalStateException" in entries[0].text
    event = parse_line(4, entries[1].text, entries[1])
    assert event is not None and event.kind == "leader_and_isr"
    assert event.fields["cid"] == 3 and event.fields["leaderEpoch"] == 1


def test_several_files_merge_by_timestamp() -> None:
    a = "[2024-01-01 10:00:02,000] INFO b\n[2024-01-01 10:00:00,000] INFO a\n"
    b = "2024-01-01 10:00:01.500 INFO c\n"
    assert [e.text[-1] for e in merge_entries([("a", a), ("b", b)])] == ["a", "c", "b"]


def test_writers_and_categories_of_lines() -> None:
    assert writer_of("[ReplicaFetcher replicaId=4, leaderId=1, fetcherId=0] x") == 4
    assert writer_of("nothing here") is None
    assert category_of("[Broker id=1] Leader t-0 starts (state.change.logger)") == "state-change"
    assert category_of("[Partition t-0 broker=1] Expanding ISR") == "server"


def test_json_and_prose_are_not_logs() -> None:
    assert not looks_like_kafka_log('{"action": "Init"}\n')
    assert not looks_like_kafka_log("hello\nworld\n")


def test_a_start_line_joins_its_brokers_received_line_across_other_brokers_lines() -> None:
    from isrlab.spec.kafka_log import read_broker_logs

    def received(b: int, leader: int, epoch: int, isr: str, t: str) -> str:
        return (f"[2020-01-10 10:{t}] TRACE [Broker id={b}] Received LeaderAndIsr request "
                f"LeaderAndIsrPartitionState(topicName='t', partitionIndex=0, controllerEpoch=1, "
                f"leader={leader}, leaderEpoch={epoch}, isr=[{isr}], zkVersion=0, replicas=[1, 2]"
                f") correlation id 1 from controller 1 epoch 1 (state.change.logger)")

    state_change = "\n".join([
        received(1, 1, 0, "1, 2", "00:00,100"), received(2, 1, 0, "1, 2", "00:00,101"),
        received(2, 2, 1, "2", "01:00,090"), received(1, 2, 1, "2", "01:00,095")])
    server = ("[2020-01-10 10:01:00,100] INFO [Partition t-0 broker=2] t-0 starts at Leader "
              "Epoch 1 from offset 2. Previous Leader Epoch was: 0 (kafka.cluster.Partition)\n")
    trace = read_broker_logs([("sc", state_change), ("server", server)])
    steps = trace.steps
    assert [s.get("action", s.get("label", "")[:7]) for s in steps] == [
        "Init", "Deliver", "Deliver"]
    assert steps[1]["label"].startswith("Deliver(LeaderAndIsr(to=1,")  # broker 2 = model 1
    assert steps[1]["broker1"] == {"leader_epoch": 1, "leader": 1}
    assert steps[1]["before"] == {"broker1": {"leader_epoch": 0, "log": {"#len": 2}}}
    assert trace.family == "0.11+"


def test_lines_pasted_without_timestamps_keep_their_order() -> None:
    from isrlab.spec.kafka_log import read_broker_log

    steps = read_broker_log(
        "Partition [t,0] on broker 1: Shrinking ISR for partition [t,0] from 1,2 to 1\n"
        "Partition [t,0] on broker 1: Expanding ISR for partition [t,0] from 1 to 1,2\n")
    assert [s["label"] for s in steps] == ["ShrinkIsr(0)", "Fetch*(1)"]
