"""The ``kafka`` model's KRaft parameters: ``controller`` and the versions of KRaft's mechanisms.

Each is a field of ``isrlab.spec.kafka.config.KafkaConfig``; ``controller=zookeeper`` (the
default while the KRaft mode is young) ignores all of them.  The KRaft mode itself is
``isrlab.spec.kafka.quorum_controller``.
"""

from __future__ import annotations

from isrlab.checker.registry import Param

KRAFT_PARAMS = (
    Param("controller", str, "zookeeper",
          "the controller: zookeeper (KafkaController, controller epochs, LeaderAndIsr "
          "requests through ControllerChannelManager: Kafka <= 3.x in ZooKeeper mode) or "
          "kraft (the QuorumController's __cluster_metadata log, replayed by each broker's "
          "MetadataLoader at its own pace; broker registration, broker epochs, fencing: "
          "Kafka 3.3+ production KRaft, the only mode from 4.0)",
          choices=("zookeeper", "kraft")),
    Param("kip903", bool, True,
          "with controller=kraft, KIP-903 (Kafka 3.5+): fetches carry the follower's broker "
          "epoch, the leader proposes it in AlterPartition's NewIsrWithEpochs and the "
          "controller refuses a member whose broker epoch is not its registered one "
          "(INELIGIBLE_REPLICA); off: Kafka 3.3-3.4 (KAFKA-14139)"),
    Param("unclean_detection", str, "new-incarnation",
          "with controller=kraft and elr, KIP-966's unclean-shutdown detection at broker "
          "registration (ClusterControlManager.registerBroker): none (3.7 and earlier: "
          "computed, only logged), previous-epoch (3.8, KAFKA-15586: the previous broker "
          "epoch from the clean-shutdown file must be the registered one) or "
          "new-incarnation (3.9+, KAFKA-16952: every new incarnation); an unclean "
          "registration leaves the ISR and the ELR (handleBrokerUncleanShutdown)",
          choices=("none", "previous-epoch", "new-incarnation")),
    Param("kraft_epoch_bump", str, "leader-change",
          "with controller=kraft, when a PartitionChangeRecord bumps the leader epoch: "
          "isr-shrink (Kafka 3.0-3.5, and metadata versions below 3.6-IV0: also on every "
          "ISR shrink) or leader-change (3.6+, KAFKA-15021: only when the leader changes)",
          choices=("isr-shrink", "leader-change")),
    Param("max_metadata_lag", int, 2,
          "with controller=kraft, a bound (not Kafka's): the metadata batches the slowest "
          "live broker may lag behind the active controller; the controller writes a new "
          "batch only below it (1..6)", minimum=1),
    Param("heartbeat_loss", bool, False,
          "with controller=kraft, a live broker's heartbeats may stop reaching the active "
          "controller past broker.session.timeout.ms, so it is fenced while it runs (off: "
          "only a broker that is down stops heartbeating)", fault=True),
    Param("empty_disk", bool, False,
          "with controller=kraft, a broker that is down may come back with an empty log "
          "directory (a replaced disk: no log, no clean-shutdown file), under its old broker "
          "id: KAFKA-14139's precondition", fault=True),
)
"""The KRaft parameters, appended to ``isrlab.spec.kafka.PARAMS``."""
