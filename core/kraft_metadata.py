"""KRaft's metadata log and a broker's metadata image (Kafka 3.x-4.x).

In KRaft the active controller writes every decision as a record of the ``__cluster_metadata``
log; each broker replays the committed records in log order, at its own pace, into its
``MetadataImage``, and acts on the *change* between two images.  Kafka's names:

* the records -- ``PartitionRecord`` (a partition is created), ``PartitionChangeRecord`` (any
  later change: ISR, leader, ELR, leader recovery state), ``RegisterBrokerRecord`` (a broker
  incarnation and its broker epoch), ``BrokerRegistrationChangeRecord`` (fence / unfence /
  controlled shutdown, 3.3+; the older ``FenceBrokerRecord`` / ``UnfenceBrokerRecord`` carry the
  same change) -- here frozen dataclasses of the same names;
* ``PartitionRegistration.merge(PartitionChangeRecord)`` -- ``merge``: the partition epoch goes up
  on every record, the leader epoch only when the record sets the leader field;
* ``MetadataDelta.replay`` then ``MetadataDelta.apply`` -- ``replay``;
* ``MetadataLoader.handleCommit`` -- ``apply_commit``: every record of one commit handed to the
  loader is replayed into ONE delta, published once (3.5: ``loadLogDelta`` then one
  ``delta.apply``; 3.6+: ``MetadataBatchLoader.loadBatch`` per batch, one
  ``maybeFlushBatches``);
* ``TopicDelta.localChanges`` -- ``local_changes``: which partitions a broker must make leader,
  make follower or delete;
* ``Partition.makeLeader`` as KRaft's ``ReplicaManager.applyLocalLeadersDelta`` calls it (3.x) --
  ``make_leader_flags`` / ``make_leader_kraft``.

Modelling shortcuts: one log offset per record (Kafka's batches are only the unit of a commit,
which ``apply_commit`` receives whole); topic ids are dropped (a ``TopicPartition`` names a
partition); reassignment fields (adding/removing replicas) and directories are not modelled;
``UnregisterBrokerRecord``, topic deletion and snapshots are left out.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, replace
from enum import Enum, unique

from returns.result import Failure, Result, Success

from isrlab.core.elr import LeaderRecoveryState, PartitionRegistration, check_registration
from isrlab.core.errors import InvalidInput, Problem, reject
from isrlab.core.partition import raise_leader_hw
from isrlab.core.state import (
    UNKNOWN_OFFSET,
    Partition,
    RemoteReplica,
    TopicPartition,
    check_partition,
    is_leader,
)

NO_LEADER_CHANGE = -2
"""``LeaderConstants.NO_LEADER_CHANGE``: a ``PartitionChangeRecord`` that leaves the leader (and
the leader epoch) as they are."""


@dataclass(frozen=True, slots=True)
class PartitionRecord:
    """``PartitionRecord``: a new partition's first registration (epochs 0)."""

    tp: TopicPartition
    registration: PartitionRegistration


@dataclass(frozen=True, slots=True)
class PartitionChangeRecord:
    """``PartitionChangeRecord``: the fields a change sets; ``None`` / ``NO_LEADER_CHANGE`` leave
    a field as it is (Kafka's null fields and ``LeaderRecoveryState.NO_CHANGE``)."""

    tp: TopicPartition
    isr: tuple[int, ...] | None = None
    leader: int = NO_LEADER_CHANGE
    elr: tuple[int, ...] | None = None
    last_known_elr: tuple[int, ...] | None = None
    leader_recovery_state: LeaderRecoveryState | None = None


@dataclass(frozen=True, slots=True)
class RegisterBrokerRecord:
    """``RegisterBrokerRecord``: a broker incarnation, its broker epoch and its initial state.

    ``incarnation_id`` stands for Kafka's random ``Uuid`` chosen at each broker start; a new
    incarnation is fenced until it heartbeats its way out (``BrokerHeartbeatManager``).
    """

    broker_id: int
    incarnation_id: int
    broker_epoch: int
    fenced: bool = True
    in_controlled_shutdown: bool = False


@unique
class FencingChange(Enum):
    """``BrokerRegistrationFencingChange`` (Kafka's values)."""

    FENCE = 1
    NONE = 0
    UNFENCE = -1


@dataclass(frozen=True, slots=True)
class BrokerRegistrationChangeRecord:
    """``BrokerRegistrationChangeRecord`` (3.3+): fence, unfence, enter controlled shutdown.

    Replayed only when ``broker_epoch`` is the registered one (``ClusterControlManager
    .replay`` throws otherwise; here the record is ignored, see ``replay``).
    """

    broker_id: int
    broker_epoch: int
    fenced: FencingChange = FencingChange.NONE
    in_controlled_shutdown: bool = False


MetadataRecord = (PartitionRecord | PartitionChangeRecord | RegisterBrokerRecord
                  | BrokerRegistrationChangeRecord)
"""A record of the ``__cluster_metadata`` log."""


@dataclass(frozen=True, slots=True)
class BrokerRegistration:
    """``BrokerRegistration``: what the metadata says of one broker."""

    broker_id: int
    incarnation_id: int
    epoch: int
    fenced: bool = True
    in_controlled_shutdown: bool = False


@dataclass(frozen=True, slots=True)
class MetadataImage:
    """``MetadataImage``: the brokers and partitions after the records up to ``offset``.

    ``offset`` is the last record applied (-1: none); ``brokers`` and ``partitions`` are kept
    sorted by broker id and by partition, so equal images are equal values.
    """

    offset: int = -1
    brokers: tuple[BrokerRegistration, ...] = ()
    partitions: tuple[tuple[TopicPartition, PartitionRegistration], ...] = ()


def broker(image: MetadataImage, broker_id: int) -> BrokerRegistration | None:
    """``ClusterImage.broker(id)``: the broker's registration, if any. Total."""
    return next((b for b in image.brokers if b.broker_id == broker_id), None)


def partition(image: MetadataImage, tp: TopicPartition) -> PartitionRegistration | None:
    """``TopicsImage.getPartition``: the partition's registration, if any. Total."""
    return next((reg for t, reg in image.partitions if t == tp), None)


def is_active(image: MetadataImage, broker_id: int) -> bool:
    """``ClusterControlManager.isActive``: registered, unfenced and not in controlled shutdown.

    The controller's "acceptable leader" test (``LeaderAcceptor``, without JBOD's online-directory
    check). Total.
    """
    reg = broker(image, broker_id)
    return reg is not None and not reg.fenced and not reg.in_controlled_shutdown


def active_brokers(image: MetadataImage) -> frozenset[int]:
    """Every broker ``is_active`` holds for. Total."""
    return frozenset(b.broker_id for b in image.brokers if is_active(image, b.broker_id))


# ---------------------------------------------------------------------------------------
# Replaying records
# ---------------------------------------------------------------------------------------


def merge(reg: PartitionRegistration, record: PartitionChangeRecord) -> PartitionRegistration:
    """``PartitionRegistration.merge``: a registration after one ``PartitionChangeRecord``.

    Every field the record sets replaces the old one; the partition epoch always goes up by one;
    the leader epoch goes up by one exactly when the record sets the leader field -- even to the
    same leader (that is how the controller asks for a leader epoch bump without a leader
    change: ``triggerLeaderEpochBump*``).  Total; the caller checks the result
    (``replay`` does).
    """
    bump = record.leader != NO_LEADER_CHANGE
    return replace(
        reg,
        isr=reg.isr if record.isr is None else record.isr,
        leader=record.leader if bump else reg.leader,
        leader_epoch=reg.leader_epoch + 1 if bump else reg.leader_epoch,
        partition_epoch=reg.partition_epoch + 1,
        elr=reg.elr if record.elr is None else record.elr,
        last_known_elr=reg.last_known_elr if record.last_known_elr is None
        else record.last_known_elr,
        leader_recovery_state=reg.leader_recovery_state if record.leader_recovery_state is None
        else record.leader_recovery_state,
    )


def _with_partition(image: MetadataImage, tp: TopicPartition, reg: PartitionRegistration
                    ) -> MetadataImage:
    rest = tuple(item for item in image.partitions if item[0] != tp)
    return replace(image, partitions=tuple(sorted((*rest, (tp, reg)), key=lambda i: i[0])))


def _with_broker(image: MetadataImage, reg: BrokerRegistration) -> MetadataImage:
    rest = tuple(b for b in image.brokers if b.broker_id != reg.broker_id)
    return replace(image, brokers=tuple(sorted((*rest, reg), key=lambda b: b.broker_id)))


def _replay_partition_change(image: MetadataImage, record: PartitionChangeRecord
                             ) -> Result[MetadataImage, InvalidInput]:
    reg = partition(image, record.tp)
    if reg is None:
        return reject(Problem.NOT_A_REPLICA, f"change of unknown partition {record.tp}")
    return check_registration(merge(reg, record)).map(
        lambda merged: _with_partition(image, record.tp, merged))


def _replay_broker_change(image: MetadataImage, record: BrokerRegistrationChangeRecord
                          ) -> MetadataImage:
    reg = broker(image, record.broker_id)
    if reg is None or reg.epoch != record.broker_epoch:
        return image
    fenced = {FencingChange.FENCE: True, FencingChange.UNFENCE: False}.get(record.fenced,
                                                                           reg.fenced)
    shutting_down = reg.in_controlled_shutdown or record.in_controlled_shutdown
    return _with_broker(image, replace(reg, fenced=fenced, in_controlled_shutdown=shutting_down))


def _replay_one(image: MetadataImage, record: MetadataRecord
                ) -> Result[MetadataImage, InvalidInput]:
    if isinstance(record, PartitionRecord):
        return check_registration(record.registration).map(
            lambda reg: _with_partition(image, record.tp, reg))
    if isinstance(record, PartitionChangeRecord):
        return _replay_partition_change(image, record)
    if isinstance(record, RegisterBrokerRecord):
        if min(record.broker_id, record.broker_epoch) < 0:
            return reject(Problem.NEGATIVE_VALUE, f"broker id / epoch in {record}")
        return Success(_with_broker(image, BrokerRegistration(
            record.broker_id, record.incarnation_id, record.broker_epoch, record.fenced,
            record.in_controlled_shutdown)))
    return Success(_replay_broker_change(image, record))


def replay(image: MetadataImage, record: MetadataRecord) -> Result[MetadataImage, InvalidInput]:
    """``MetadataDelta.replay`` + ``apply`` for one record; the image's offset goes up by one.

    A ``PartitionRecord`` (re)creates the partition; a ``PartitionChangeRecord`` is ``merge``d
    (a change of an unknown partition is rejected); a ``RegisterBrokerRecord`` replaces the
    broker's registration (a new incarnation, a new epoch); a ``BrokerRegistrationChangeRecord``
    for another broker epoch than the registered one is ignored (Kafka's ``replay`` throws; the
    controller never writes one, so a model never needs it).  Leaving controlled shutdown is
    only possible through a new registration, as in Kafka.  Bad records (negative ids, an ISR
    outside the replicas, ...) come back as ``Failure``.
    """
    return _replay_one(image, record).map(lambda img: replace(img, offset=image.offset + 1))


@dataclass(frozen=True, slots=True)
class MetadataUpdate:
    """One published delta: the image before and after (``MetadataPublisher.onMetadataUpdate``)."""

    before: MetadataImage
    after: MetadataImage


def apply_commit(image: MetadataImage, records: Iterable[MetadataRecord]
                 ) -> Result[MetadataUpdate, InvalidInput]:
    """``MetadataLoader.handleCommit``: replay every record of a commit into ONE delta.

    The broker's publishers (``BrokerMetadataPublisher`` -> ``ReplicaManager.applyDelta``) see
    only the image before and the image after: several ``PartitionChangeRecord``s of one
    partition in one commit are merged, so the broker may go from leader epoch ``e`` to
    ``e + 2`` without ever seeing ``e + 1`` (3.5.0 ``MetadataLoader.handleCommit`` /
    ``loadLogDelta``, lines 316-344: one ``MetadataDelta``, every batch's records replayed into
    it, one ``delta.apply``; 3.7.0 lines 356-365 with ``MetadataBatchLoader.loadBatch`` and one
    ``maybeFlushBatches``).  Shortcut: metadata transactions (KIP-868, which hold a delta back
    until the transaction ends) are not modelled.  An empty commit is the identity.
    """
    after = image
    for record in records:
        replayed = replay(after, record)
        if isinstance(replayed, Failure):
            return replayed
        after = replayed.unwrap()
    return Success(MetadataUpdate(image, after))


# ---------------------------------------------------------------------------------------
# What a broker does with a delta
# ---------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class LocalReplicaChanges:
    """``LocalReplicaChanges``: the partitions a broker must delete, lead or follow."""

    deletes: tuple[TopicPartition, ...] = ()
    leaders: tuple[tuple[TopicPartition, PartitionRegistration], ...] = ()
    followers: tuple[tuple[TopicPartition, PartitionRegistration], ...] = ()


def local_changes(update: MetadataUpdate, broker_id: int) -> LocalReplicaChanges:
    """``TopicDelta.localChanges(brokerId)`` over every partition the delta changed.

    A partition whose registration changed (partition epoch differs, or new) and that names
    ``broker_id`` as leader goes to ``leaders`` -- whatever the leader was before the delta: a
    broker that leads before and after a delta in which the leader epoch moved on is told to
    ``makeLeader`` again (3.7.0 ``TopicDelta.localChanges``: ``entry.getValue().leader ==
    brokerId`` and ``prevPartition.partitionEpoch != entry.getValue().partitionEpoch``, lines
    143-145; 3.5.0 lines 140-142, trunk 2024-10 152-154; the previous leader is not
    consulted).  A changed partition that lists the broker as a replica but not as leader goes
    to ``followers``; one that no longer lists it (but did) to ``deletes``.  Total.
    """
    deletes: list[TopicPartition] = []
    leaders: list[tuple[TopicPartition, PartitionRegistration]] = []
    followers: list[tuple[TopicPartition, PartitionRegistration]] = []
    for tp, reg in update.after.partitions:
        prev = partition(update.before, tp)
        if broker_id not in reg.replicas:
            if prev is not None and broker_id in prev.replicas:
                deletes.append(tp)
            continue
        if prev is not None and prev.partition_epoch == reg.partition_epoch:
            continue
        (leaders if reg.leader == broker_id else followers).append((tp, reg))
    return LocalReplicaChanges(tuple(deletes), tuple(leaders), tuple(followers))


@dataclass(frozen=True, slots=True)
class MakeLeaderFlags:
    """``Partition.makeLeader``'s two decisions (3.x): ``isNewLeader`` and ``isNewLeaderEpoch``.

    ``skipped`` says whether the request is older than what the broker has (then nothing
    happens); ``resets_remote_state`` whether the remote replicas' LEOs become unknown.
    """

    skipped: bool
    is_new_leader: bool
    is_new_leader_epoch: bool

    @property
    def resets_remote_state(self) -> bool:
        """``resetReplicaState`` with ``isNewLeader = true``: only then are remote LEOs reset."""
        return not self.skipped and self.is_new_leader_epoch and self.is_new_leader


def make_leader_flags(local: Partition, reg: PartitionRegistration) -> MakeLeaderFlags:
    """``Partition.makeLeader``'s flags for a registration the broker is told to lead (3.x).

    ``skipped`` when ``reg``'s partition epoch is below the broker's (3.7.0 Partition.scala
    ``if (partitionState.partitionEpoch < partitionEpoch) ... return false``);
    ``is_new_leader = !isLeader`` -- the broker's own ``Partition`` object decides, so a broker
    that still believes it leads (it never applied the intermediate epoch) is NOT a new leader;
    ``is_new_leader_epoch = partitionState.leaderEpoch > leaderEpoch``, with ``isLeader =
    leaderReplicaIdOpt.contains(localBrokerId)``.  (Partition.scala 3.5.0 lines 523, 682-683,
    718, 740; 3.7.0 lines 543, 719-720, 755, 777; trunk 2024-10 lines 563, 743-744;
    Replica.scala 3.7.0 line 163 ``if (isNewLeader)`` guards the LEO reset.)  The partition
    epoch is ``local.zk_version`` (one int plays both).  Total.
    """
    return MakeLeaderFlags(reg.partition_epoch < local.zk_version, not is_leader(local),
                           reg.leader_epoch > local.leader_epoch)


def _reset_remote(old: RemoteReplica | None, broker_id: int, in_isr: bool, leader_leo: int,
                  now_ms: int, is_new_leader: bool) -> RemoteReplica:
    caught_up = now_ms if in_isr else 0
    if is_new_leader or old is None:
        return RemoteReplica(broker_id, UNKNOWN_OFFSET, UNKNOWN_OFFSET, caught_up,
                             UNKNOWN_OFFSET, 0)
    return replace(old, last_caught_up_time_ms=caught_up,
                   last_fetch_leader_log_end_offset=leader_leo, last_fetch_time_ms=caught_up)


def make_leader_kraft(local: Partition, reg: PartitionRegistration, now_ms: int,
                      reset_on_epoch: bool = False,
                      ) -> Result[tuple[Partition, MakeLeaderFlags], InvalidInput]:
    """``Partition.makeLeader`` as ``applyLocalLeadersDelta`` calls it in KRaft (3.5-3.9).

    Skipped (unchanged) when ``make_leader_flags`` says so.  Otherwise the assignment, ISR and
    partition epoch are adopted; and only when the leader epoch is new: the remote replicas are
    reset by ``Replica.resetReplicaState`` -- with ``isNewLeader`` every remote LEO, log start and
    last fetch become unknown; without it (a broker that leads before and after the delta) the
    remote LEOs and log starts are KEPT and only ``lastFetchLeaderLogEndOffset`` (:= the leader's
    LEO), ``lastFetchTimeMs`` and ``lastCaughtUpTimeMs`` (:= now if in the ISR, else 0) are reset
    -- then the leader epoch is adopted.  Then the HW may rise (``maybeIncrementLeaderHW`` over
    the new ISR).  Shortcuts: the leader-epoch cache entry (``maybeAssignEpochStartOffset``) is
    the caller's; KIP-704's RECOVERING state is logged and treated as RECOVERED, as Kafka's
    broker does; pending AlterPartition state is the caller's (``committed_isr_state``).
    ``reset_on_epoch`` is issue 36's fix, in no release (docs/findings/stale-leo-failover.md):
    ``resetReplicaState`` with ``isNewLeader = true`` whenever the leader epoch is new, so a
    leader that skipped an epoch forgets the LEOs it recorded before it.
    """
    if now_ms < 0:
        return reject(Problem.NEGATIVE_VALUE, f"now_ms {now_ms}")
    if reg.leader != local.local_broker_id or local.local_broker_id not in reg.replicas:
        return reject(Problem.WRONG_ROLE, f"make_leader_kraft on broker {local.local_broker_id} "
                                          f"for leader {reg.leader}")
    checked = check_registration(reg).bind(lambda _: check_partition(local))
    if isinstance(checked, Failure):
        return checked
    flags = make_leader_flags(local, reg)
    if flags.skipped:
        return Success((local, flags))
    adopted = replace(local, leader=local.local_broker_id, assigned_replicas=reg.replicas,
                      isr=frozenset(reg.isr), zk_version=reg.partition_epoch, log_created=True)
    if flags.is_new_leader_epoch:
        old = {r.broker_id: r for r in local.remotes}
        remotes = tuple(_reset_remote(old.get(b), b, b in reg.isr, len(local.log), now_ms,
                                      flags.is_new_leader or reset_on_epoch)
                        for b in sorted(reg.replicas) if b != local.local_broker_id)
        adopted = replace(adopted, remotes=remotes, leader_epoch=reg.leader_epoch)
    else:
        old = {r.broker_id: r for r in local.remotes}
        adopted = replace(adopted, remotes=tuple(
            old.get(b, RemoteReplica(b)) for b in sorted(reg.replicas)
            if b != local.local_broker_id))
    return Success((raise_leader_hw(adopted).partition, flags))


def skipped_leader_epochs(update: MetadataUpdate, tp: TopicPartition) -> int:
    """How many leader epochs of ``tp`` a broker applying ``update`` never sees (0 when the
    delta moves the leader epoch by at most one, or does not touch the partition). Total."""
    before, after = partition(update.before, tp), partition(update.after, tp)
    if before is None or after is None:
        return 0
    return max(0, after.leader_epoch - before.leader_epoch - 1)
