"""The broker's ``MetadataCache``: an immutable snapshot replaced whole on UpdateMetadata.

Kafka's ``MetadataSnapshot`` is already an immutable case class swapped under a lock;
here it is a frozen dataclass whose maps are sorted tuples of pairs (hashable, ordered).
Readers take the snapshot as it is and may act on stale metadata: that is the point.
"""

from __future__ import annotations

from dataclasses import dataclass

from returns.result import Result, Success

from isrlab.core.errors import InvalidInput, Problem, reject
from isrlab.core.state import LEADER_DURING_DELETE, TopicPartition, check_replica_set


@dataclass(frozen=True, slots=True, order=True)
class EndPoint:
    """One listener of a broker: listener name, host and port."""

    listener: str
    host: str
    port: int


@dataclass(frozen=True, slots=True, order=True)
class Broker:
    """A live broker as UpdateMetadata describes it: id, endpoints (by listener), rack."""

    id: int
    endpoints: tuple[EndPoint, ...]
    rack: str | None = None


@dataclass(frozen=True, slots=True)
class UpdateMetadataPartitionState:
    """Kafka's ``UpdateMetadataPartitionState`` (topic and index live in the map key)."""

    controller_epoch: int
    leader: int
    leader_epoch: int
    isr: tuple[int, ...]
    zk_version: int
    replicas: tuple[int, ...]
    offline_replicas: tuple[int, ...] = ()


@dataclass(frozen=True, slots=True)
class UpdateMetadataRequest:
    """An UpdateMetadata request: controller id and epoch, partition states, live brokers."""

    controller_id: int
    controller_epoch: int
    partition_states: tuple[tuple[TopicPartition, UpdateMetadataPartitionState], ...]
    live_brokers: tuple[Broker, ...]


@dataclass(frozen=True, slots=True)
class MetadataSnapshot:
    """``MetadataCache.MetadataSnapshot``: partition states, controller, live brokers.

    ``partition_states`` is sorted by partition; ``alive_brokers`` by id.  ``alive_nodes``
    (broker -> listener -> endpoint) is derived from ``alive_brokers`` by ``alive_nodes``.
    """

    partition_states: tuple[tuple[TopicPartition, UpdateMetadataPartitionState], ...] = ()
    controller_id: int | None = None
    alive_brokers: tuple[Broker, ...] = ()


@dataclass(frozen=True, slots=True)
class UpdateMetadataResult:
    """``update_metadata``'s outcome: the new snapshot, deleted partitions, listener check."""

    snapshot: MetadataSnapshot
    deleted_partitions: tuple[TopicPartition, ...]
    listeners_mismatch: bool


def alive_broker_ids(snapshot: MetadataSnapshot) -> frozenset[int]:
    """The ids of the live brokers (``getAliveBrokers.map(_.id)``)."""
    return frozenset(b.id for b in snapshot.alive_brokers)


def alive_nodes(snapshot: MetadataSnapshot) -> dict[int, dict[str, EndPoint]]:
    """``aliveNodes``: broker id -> listener name -> endpoint (a fresh dict each call)."""
    return {b.id: {e.listener: e for e in b.endpoints} for b in snapshot.alive_brokers}


def get_partition_info(
    snapshot: MetadataSnapshot, tp: TopicPartition
) -> UpdateMetadataPartitionState | None:
    """``MetadataCache.getPartitionInfo``: the cached state of ``tp``, if any."""
    for key, state in snapshot.partition_states:
        if key == tp:
            return state
    return None


def contains(snapshot: MetadataSnapshot, tp: TopicPartition) -> bool:
    """``MetadataCache.contains(tp)``."""
    return get_partition_info(snapshot, tp) is not None


def get_all_topics(snapshot: MetadataSnapshot) -> frozenset[str]:
    """``MetadataCache.getAllTopics``."""
    return frozenset(tp.topic for tp, _ in snapshot.partition_states)


def get_partition_replica_endpoints(
    snapshot: MetadataSnapshot, tp: TopicPartition, listener: str
) -> dict[int, EndPoint]:
    """``getPartitionReplicaEndpoints``: replica id -> endpoint on ``listener``, live only.

    Replicas whose broker is not alive or has no such listener are left out (Kafka's
    ``Node.noNode`` filtered away).  Unknown partition: empty.
    """
    info = get_partition_info(snapshot, tp)
    if info is None:
        return {}
    nodes = alive_nodes(snapshot)
    return {r: nodes[r][listener] for r in info.replicas if listener in nodes.get(r, {})}


def _check_request(request: UpdateMetadataRequest) -> Result[UpdateMetadataRequest, InvalidInput]:
    keys = [tp for tp, _ in request.partition_states]
    if len(set(keys)) != len(keys):
        return reject(Problem.DUPLICATE_PARTITION, "in the UpdateMetadata request")
    ids = [b.id for b in request.live_brokers]
    if any(i < 0 for i in ids):
        return reject(Problem.NEGATIVE_VALUE, f"live broker ids {ids}")
    if len(set(ids)) != len(ids):
        return reject(Problem.DUPLICATE_REPLICA, f"live broker ids {ids}")
    for tp, state in request.partition_states:
        checked = check_replica_set(state.replicas, state.isr)
        if not isinstance(checked, Success):
            return reject(Problem.ISR_NOT_SUBSET_OF_AR, f"{tp}: {checked.failure()}")
    return Success(request)


def _update(
    snapshot: MetadataSnapshot, request: UpdateMetadataRequest, broker_id: int
) -> UpdateMetadataResult:
    controller = request.controller_id if request.controller_id >= 0 else None
    brokers = tuple(sorted(request.live_brokers))
    nodes = {b.id: frozenset(e.listener for e in b.endpoints) for b in brokers}
    own = nodes.get(broker_id)
    mismatch = own is not None and any(ls != own for ls in nodes.values())
    if not request.partition_states:
        kept = MetadataSnapshot(snapshot.partition_states, controller, brokers)
        return UpdateMetadataResult(kept, (), mismatch)
    states = dict(snapshot.partition_states)
    deleted: list[TopicPartition] = []
    for tp, state in request.partition_states:
        if state.leader == LEADER_DURING_DELETE:
            states.pop(tp, None)
            deleted.append(tp)
        else:
            states[tp] = state
    new = MetadataSnapshot(tuple(sorted(states.items())), controller, brokers)
    return UpdateMetadataResult(new, tuple(deleted), mismatch)


def update_metadata(
    snapshot: MetadataSnapshot, request: UpdateMetadataRequest, broker_id: int
) -> Result[UpdateMetadataResult, InvalidInput]:
    """``MetadataCache.updateMetadata``: build the next snapshot from an UpdateMetadata.

    Live brokers and nodes are rebuilt from the request; a negative controller id means no
    controller; ``listeners_mismatch`` reports (Kafka: logs an error) when this broker's
    listeners differ from another live broker's.  With no partition states the old ones
    are kept; otherwise they are copied, partitions whose leader is ``LEADER_DURING_DELETE``
    (-2) are removed and returned as deleted, and the rest are added or replaced.
    Shortcut: no controller-epoch check here (Kafka does it in ``KafkaApis``).
    """
    return _check_request(request).map(lambda r: _update(snapshot, r, broker_id))
