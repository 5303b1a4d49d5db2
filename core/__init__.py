"""Pure, immutable transition functions of Kafka's partition replica management.

A guide to the modules (each function's docstring names the Kafka method it mirrors):

* ``isrlab.core.state`` -- the values: ``Partition`` (one broker's view), ``RemoteReplica``,
  ``LeaderAndIsr``, ``PartitionState``, ``TopicPartition``; derived LEO, LSO, LW, lag;
  ``check_partition`` / ``partition_problem`` (the structural invariants);
* ``isrlab.core.partition`` -- ``make_leader``, ``make_follower`` (with a ``TruncationRule``),
  ``maybe_increment_leader_hw``, ``follower_high_watermark``;
* ``isrlab.core.truncation`` -- the truncation rules on logs (truncate to HW, KIP-101, KIP-279);
* ``isrlab.core.isr`` -- ``read_from_local_log``, ``update_follower_fetch``, ``maybe_expand_isr``,
  ``get_out_of_sync_replicas``, ``maybe_shrink_isr``, the isr-expiration schedule;
* ``isrlab.core.produce`` -- ``append_records_to_leader`` (acks, min.insync.replicas),
  ``check_enough_replicas_reach_offset``, ``process_partition_data`` (follower side);
* ``isrlab.core.propagation`` -- ``record_isr_change``, ``maybe_propagate_isr_changes``;
* ``isrlab.core.selectors`` -- the offline / reassigned / controlled-shutdown / preferred / no-op
  leader selectors;
* ``isrlab.core.metadata_cache`` -- ``MetadataSnapshot``, ``update_metadata`` and its readers;
* ``isrlab.core.replica_manager`` -- ``ReplicaManager``, ``become_leader_or_follower`` and the
  broker-level ISR steps, HW checkpoints, restart;
* ``isrlab.core.coordinator`` -- ``__consumer_offsets`` immigration (load below HW) and emigration;
* ``isrlab.core.alter_partition`` -- KIP-497 AlterIsr/AlterPartition: pending ISR, maximal ISR,
  the controller's ``alter_partition``, the leader's response handling (2.7+);
* ``isrlab.core.elr`` -- KIP-966 Eligible Leader Replicas (3.7+/4.0): ELR bookkeeping, election,
  the HW gate, unclean recovery;
* ``isrlab.core.kraft_metadata`` -- KRaft's metadata log records, ``merge`` (partition and leader
  epochs), a broker's ``MetadataImage``, ``apply_commit`` (one delta per commit),
  ``local_changes`` and KRaft's ``make_leader_kraft`` (3.5+);
* ``isrlab.core.partition_change_builder`` -- KRaft's ``PartitionChangeBuilder.build``: election
  (ISR, ELR, last known leader, unclean), ISR/ELR updates, leader-epoch bump versions, KIP-704;
* ``isrlab.core.kraft_alter_partition`` -- the KRaft controller's AlterPartition validation
  (partition epoch, KIP-841, KIP-903) and the leader's ISR eligibility;
* ``isrlab.core.broker_heartbeat`` -- broker registration (incarnations, broker epochs, KIP-966
  unclean-shutdown detection), heartbeats, fencing, controlled shutdown, the broker lifecycle;
* ``isrlab.core.replication_control`` -- the KRaft controller's records for a heartbeat's
  transition (controlled shutdown, fencing, unfencing) and ``ElectLeaders`` (PREFERRED,
  UNCLEAN);
* ``isrlab.core.log_recovery`` -- flushes, log recovery after clean/unclean shutdown, the HW
  checkpoint read back, following a leader that is not alive;
* ``isrlab.core.fencing`` -- fetch fencing by leader epoch: none, KIP-320's first design, final;
* ``isrlab.core.invariants`` -- the expected properties as predicates;
* ``isrlab.core.errors`` -- ``Errors`` (Kafka codes), ``InvalidInput``, ``ElectionFailed``.

Bad input comes back as ``Failure(InvalidInput)``; protocol outcomes are fields of the
success value.  Nothing here does I/O, keeps global state or reads a clock.
"""

from isrlab.core import _compiled

_compiled.install()  # before any compiled module is imported: isrlab.core._compiled
