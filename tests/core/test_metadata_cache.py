"""MetadataCache.updateMetadata and its readers."""

from __future__ import annotations

from isrlab.core.errors import Problem
from isrlab.core.metadata_cache import (
    Broker,
    EndPoint,
    MetadataSnapshot,
    UpdateMetadataPartitionState,
    UpdateMetadataRequest,
    alive_broker_ids,
    alive_nodes,
    contains,
    get_all_topics,
    get_partition_info,
    get_partition_replica_endpoints,
    update_metadata,
)
from isrlab.core.state import LEADER_DURING_DELETE, TopicPartition
from tests.core.helpers import err, ok

A0 = TopicPartition("a", 0)
A1 = TopicPartition("a", 1)
B0 = TopicPartition("b", 0)
PLAIN = (EndPoint("PLAINTEXT", "h", 9092),)


def broker(i: int, endpoints: tuple[EndPoint, ...] = PLAIN) -> Broker:
    return Broker(i, tuple(EndPoint(e.listener, f"host{i}", e.port) for e in endpoints))


def pstate(leader: int, epoch: int = 1) -> UpdateMetadataPartitionState:
    return UpdateMetadataPartitionState(1, leader, epoch, (0, 1), 1, (0, 1))


def req(*states: tuple[TopicPartition, UpdateMetadataPartitionState], controller: int = 7,
        brokers: tuple[Broker, ...] = (broker(0), broker(1))) -> UpdateMetadataRequest:
    return UpdateMetadataRequest(controller, 3, states, brokers)


def test_update_metadata_replaces_the_snapshot_with_the_request_contents() -> None:
    result = ok(update_metadata(MetadataSnapshot(), req((A0, pstate(0)), (B0, pstate(1))), 0))
    snap = result.snapshot
    assert snap.controller_id == 7
    assert alive_broker_ids(snap) == {0, 1}
    assert get_partition_info(snap, A0) == pstate(0)
    assert contains(snap, B0) and not contains(snap, A1)
    assert get_all_topics(snap) == {"a", "b"}
    assert result.deleted_partitions == ()
    assert not result.listeners_mismatch


def test_a_request_without_partition_states_keeps_the_old_ones_but_new_brokers() -> None:
    first = ok(update_metadata(MetadataSnapshot(), req((A0, pstate(0))), 0)).snapshot
    second = ok(update_metadata(first, req(brokers=(broker(0),)), 0)).snapshot
    assert second.partition_states == first.partition_states
    assert alive_broker_ids(second) == {0}


def test_the_leader_during_delete_marker_removes_the_partition_and_reports_it() -> None:
    first = ok(update_metadata(MetadataSnapshot(), req((A0, pstate(0)), (A1, pstate(1))), 0))
    result = ok(update_metadata(first.snapshot, req((A0, pstate(LEADER_DURING_DELETE)),
                                                    (A1, pstate(0, 2))), 0))
    assert result.deleted_partitions == (A0,)
    assert not contains(result.snapshot, A0)
    assert get_partition_info(result.snapshot, A1) == pstate(0, 2)


def test_a_negative_controller_id_means_no_controller() -> None:
    snap = ok(update_metadata(MetadataSnapshot(), req(controller=-1), 0)).snapshot
    assert snap.controller_id is None


def test_brokers_with_different_listeners_are_reported() -> None:
    ssl = (EndPoint("SSL", "h", 9093),)
    result = ok(update_metadata(MetadataSnapshot(), req(brokers=(broker(0), broker(1, ssl))), 0))
    assert result.listeners_mismatch
    # a broker that is not itself in the live list does not check
    assert not ok(update_metadata(MetadataSnapshot(), req(brokers=(broker(1, ssl),)), 0)
                  ).listeners_mismatch


def test_replica_endpoints_skip_dead_brokers_and_missing_listeners() -> None:
    snap = ok(update_metadata(MetadataSnapshot(), req((A0, pstate(0)), brokers=(broker(0),)), 0)
              ).snapshot
    assert get_partition_replica_endpoints(snap, A0, "PLAINTEXT") == {
        0: EndPoint("PLAINTEXT", "host0", 9092)}
    assert get_partition_replica_endpoints(snap, A0, "SSL") == {}
    assert get_partition_replica_endpoints(snap, B0, "PLAINTEXT") == {}
    assert alive_nodes(snap) == {0: {"PLAINTEXT": EndPoint("PLAINTEXT", "host0", 9092)}}


def test_malformed_update_metadata_requests_are_rejected() -> None:
    twice = req((A0, pstate(0)), (A0, pstate(1)))
    assert err(update_metadata(MetadataSnapshot(), twice, 0)).problem is Problem.DUPLICATE_PARTITION
    dup_brokers = req(brokers=(broker(0), broker(0)))
    assert err(update_metadata(MetadataSnapshot(), dup_brokers, 0)
               ).problem is Problem.DUPLICATE_REPLICA
    negative = req(brokers=(broker(0), Broker(-1, ())))
    assert err(update_metadata(MetadataSnapshot(), negative, 0)).problem is Problem.NEGATIVE_VALUE
    bad_isr = UpdateMetadataPartitionState(1, 0, 1, (0, 5), 1, (0, 1))
    assert err(update_metadata(MetadataSnapshot(), req((A0, bad_isr)), 0)
               ).problem is Problem.ISR_NOT_SUBSET_OF_AR
