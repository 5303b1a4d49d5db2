"""The KRaft part of the ``kafka`` model's state (``controller=kraft``) and its metadata images.

In KRaft mode ``ZkPartitionState.kraft`` holds a ``KRaftState``; the other fields of
``ZkPartitionState`` mirror the active controller's ``PartitionRegistration`` (leader, leader
epoch, ISR, ELR, last-known ELR: what the invariants read as "the controller's"), and
``controller_epoch`` stays 0: KRaft has no controller epoch.

``KRaftState`` (plain nested tuples of ints under one named tuple):

* ``batches``: the suffix of the ``__cluster_metadata`` log that some live broker has not
  applied yet, as the batches the active controller committed (one per controller event:
  ``QuorumController`` appends the records of one operation as one batch); each record a
  plain tuple (``PCR`` / ``REG`` / ``CHG`` below);
* ``base``: the image every live broker has applied (the log up to the start of
  ``batches``): ``(partition, brokers)``, ``partition`` = ``(leader, leader_epoch,
  partition_epoch, isr, elr, last_known_elr, recovering)`` (masks over broker ids),
  ``brokers[b]`` = ``(broker_epoch, fenced)`` (epoch -1: never registered);
* ``applied[b]``: how many of ``batches`` broker ``b``'s ``MetadataLoader`` has published
  (-1 while ``b`` is down: a restarted broker catches up before it publishes anything);
* ``partition_epoch[b]``: the partition epoch of ``b``'s ``Partition`` (its last
  ``makeLeader`` / ``makeFollower`` or accepted AlterPartition);
* ``alter_epoch[b]``: the partition epoch ``b``'s AlterPartition in flight carries, or the
  one the controller's accepted answer returns;
* ``fetch_epochs[b]``: while ``b`` leads, the broker epoch each follower's last fetch
  carried (KIP-903's ``Replica.brokerEpoch``; -1 unknown), else ``()``;
* ``alter_isr_epochs[b]``: the broker epochs of the proposed ISR members of ``b``'s
  AlterPartition in flight (KIP-903's ``NewIsrWithEpochs``; -1 not sent), else ``()``;
* ``broker_epoch[b]``: the broker epoch ``b``'s running incarnation registered with (-1
  while down).

Shortcuts (each order-preserving, so no behaviour changes):

* the log prefix every live broker has applied is folded into ``base`` (Kafka keeps it and
  snapshots it; a broker that restarts catches up before it publishes, so no live broker
  ever reads below ``base``), and ``max_metadata_lag`` bounds ``batches``;
* partition epochs are kept relative to ``base``'s (``base`` at 0; a request older than
  ``base`` is -1: only their order matters to ``validateAlterPartitionData`` and
  ``makeLeader``); the core functions receive them plus one;
* broker epochs are per broker ranks (0, 1, ...) among the epochs of that broker the state
  holds: Kafka's epochs are the offsets of the ``RegisterBrokerRecord``s, compared only for
  equality and order with epochs of the same broker; an incarnation id is its epoch (every
  start is a new incarnation: a fresh ``Uuid``).
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any, NamedTuple

from returns.result import Success

from isrlab.core.elr import LeaderRecoveryState, PartitionRegistration
from isrlab.core.kraft_metadata import (
    NO_LEADER_CHANGE,
    BrokerRegistration,
    BrokerRegistrationChangeRecord,
    FencingChange,
    MetadataImage,
    MetadataRecord,
    PartitionChangeRecord,
    RegisterBrokerRecord,
    apply_commit,
)
from isrlab.core.state import NO_LEADER, TopicPartition
from isrlab.spec.kafka.codes import mask_of, members

# ---- the KRaft part of the state --------------------------------------------------------
Record = tuple[int, ...]
"""A metadata record as plain ints (``PCR`` / ``REG`` / ``CHG`` below say which)."""
Batch = tuple[Record, ...]
PartitionView = tuple[int, int, int, int, int, int, int]
BrokerView = tuple[tuple[int, int], ...]
Image = tuple[PartitionView, BrokerView]


class KRaftState(NamedTuple):
    """The KRaft part of the state (``controller=kraft``), as ``ZkPartitionState.kraft``;
    the module docstring describes each field and its shortcuts."""

    batches: tuple[Batch, ...]
    """The committed metadata batches some live broker has not published yet."""
    base: Image
    """The image every live broker has published."""
    applied: tuple[int, ...]
    """Per broker: how many of ``batches`` it published (-1 while down)."""
    partition_epoch: tuple[int, ...]
    """Per broker: its ``Partition``'s partition epoch (relative to ``base``)."""
    alter_epoch: tuple[int, ...]
    """Per broker: the partition epoch of its AlterPartition in flight or of its answer."""
    fetch_epochs: tuple[tuple[int, ...], ...]
    """Per leader: the broker epoch each follower's last fetch carried (KIP-903)."""
    alter_isr_epochs: tuple[tuple[int, ...], ...]
    """Per broker: the broker epochs of its proposed ISR members (KIP-903)."""
    broker_epoch: tuple[int, ...]
    """Per broker: the broker epoch of its running incarnation (-1 while down)."""
    shutdown_offset: tuple[int, ...] = ()
    """With ``controlled_shutdown``: per broker, the active controller's
    ``BrokerHeartbeatState.controlledShutdownOffset`` as a count of ``batches`` (the batch
    that moved it into controlled shutdown and every one before it; 0 once every live broker
    published it), -1 when the controller's heartbeat manager has none; ``()`` otherwise
    (not encoded)."""


_new = tuple.__new__


def kraft_state(batches: tuple[Batch, ...], base: Image, applied: tuple[int, ...],
                partition_epoch: tuple[int, ...], alter_epoch: tuple[int, ...],
                fetch_epochs: tuple[tuple[int, ...], ...],
                alter_isr_epochs: tuple[tuple[int, ...], ...], broker_epoch: tuple[int, ...],
                shutdown_offset: tuple[int, ...]) -> KRaftState:
    """``KRaftState(...)`` built by ``tuple.__new__`` in C: the named tuple's ``__new__`` and
    ``_replace`` are Python code (interpreted even when the model is compiled); the model's
    steps that change the KRaft part of every successor build it with this."""
    return _new(KRaftState, (batches, base, applied, partition_epoch, alter_epoch, fetch_epochs,
                             alter_isr_epochs, broker_epoch, shutdown_offset))


TP = TopicPartition("t", 0)
"""The model's one partition (the same as ``isrlab.spec.kafka.config.TP``)."""

PCR, REG, CHG = 0, 1, 2
"""Record kinds: ``PartitionChangeRecord`` ``(PCR, isr, leader, elr, lke, recovering)``
(-1 masks / recovering: field not set; leader ``NO_LEADER_CHANGE`` -2: not set);
``RegisterBrokerRecord`` ``(REG, broker, epoch)`` (a new incarnation, fenced);
``BrokerRegistrationChangeRecord`` ``(CHG, broker, epoch, fencing)`` (``FencingChange``'s
value: 1 fence, -1 unfence, 0 none) or ``(CHG, broker, epoch, 0, 1)`` (it enters controlled
shutdown, ``InControlledShutdown``)."""

FENCED, SHUTTING_DOWN = 1, 2
"""The bits of a broker's flags in a plain image (``BrokerView``'s second int): fenced, and
in controlled shutdown (``BrokerRegistration.inControlledShutdown``); a state without any
controlled shutdown has the same ints as before the second bit existed."""


def initial(n: int, isr: int, shutdown: bool = False, leader: int = 0) -> KRaftState:
    """The topic just created on a cluster whose brokers all registered (epoch 0) and were
    unfenced, every broker caught up: ``leader`` (broker 0 unless said) leads leader epoch 0,
    partition epoch 0 (``shutdown``: with the heartbeat manager's controlled-shutdown
    offsets, none set)."""
    base: Image = ((leader, 0, 0, isr, 0, 0, 0), tuple((0, 0) for _ in range(n)))
    fetch_epochs = tuple((-1,) * n if b == leader else () for b in range(n))
    return KRaftState((), base, (0,) * n, (0,) * n, (0,) * n, fetch_epochs, ((),) * n,
                      (0,) * n, (-1,) * n if shutdown else ())


def plain(k: KRaftState) -> tuple[Any, ...]:
    """``k`` as plain tuples (what ``marshal`` accepts)."""
    return tuple(k)


def from_plain(value: tuple[Any, ...]) -> KRaftState:
    """The inverse of ``plain``."""
    return KRaftState(*value)


# ---- records and images as core values ------------------------------------------------
def _core_record(r: Record, replicas: tuple[int, ...]) -> MetadataRecord:
    if r[0] == PCR:
        _, isr, leader, elr, lke, rec = r
        return PartitionChangeRecord(
            TP, None if isr < 0 else members(isr), leader,
            None if elr < 0 else members(elr), None if lke < 0 else members(lke),
            None if rec < 0 else LeaderRecoveryState(rec))
    if r[0] == REG:
        return RegisterBrokerRecord(r[1], r[2], r[2])
    return BrokerRegistrationChangeRecord(r[1], r[2], FencingChange(r[3]),
                                          len(r) > 4 and bool(r[4]))


def broker_record_of(change: BrokerRegistrationChangeRecord) -> Record:
    """A core ``BrokerRegistrationChangeRecord`` as the state's plain record."""
    if change.in_controlled_shutdown:
        return (CHG, change.broker_id, change.broker_epoch, change.fenced.value, 1)
    return (CHG, change.broker_id, change.broker_epoch, change.fenced.value)


def record_of(change: PartitionChangeRecord) -> Record:
    """A core ``PartitionChangeRecord`` as the state's plain record."""
    return (PCR, -1 if change.isr is None else mask_of(change.isr), change.leader,
            -1 if change.elr is None else mask_of(change.elr),
            -1 if change.last_known_elr is None else mask_of(change.last_known_elr),
            -1 if change.leader_recovery_state is None else change.leader_recovery_state.value)


@lru_cache(maxsize=1 << 14)
def core_image(image: Image, n: int) -> MetadataImage:
    """The plain ``image`` as core's ``MetadataImage`` (partition epochs plus one)."""
    (leader, le, pe, isr, elr, lke, rec), brokers = image
    reg = PartitionRegistration(tuple(range(n)), members(isr), leader, le, pe + 1,
                                members(elr), members(lke), LeaderRecoveryState(rec))
    regs = tuple(BrokerRegistration(b, e, e, bool(f & FENCED), bool(f & SHUTTING_DOWN))
                 for b, (e, f) in enumerate(brokers) if e >= 0)
    return MetadataImage(0, regs, ((TP, reg),))


def registration(image: MetadataImage) -> PartitionRegistration:
    """The one partition's registration of a core image."""
    return image.partitions[0][1]


def plain_image(image: MetadataImage, n: int) -> Image:
    """The inverse of ``core_image``."""
    reg = registration(image)
    brokers = [(-1, 1)] * n
    for b in image.brokers:
        brokers[b.broker_id] = (b.epoch, int(b.fenced) * FENCED
                                | int(b.in_controlled_shutdown) * SHUTTING_DOWN)
    part = (reg.leader, reg.leader_epoch, reg.partition_epoch - 1, mask_of(reg.isr),
            mask_of(reg.elr), mask_of(reg.last_known_elr), reg.leader_recovery_state.value)
    return part, tuple(brokers)


@lru_cache(maxsize=1 << 16)
def replayed(image: Image, batches: tuple[Batch, ...], n: int) -> Image:
    """``image`` after every record of ``batches`` (``isrlab.core.kraft_metadata.apply_commit``:
    ``MetadataDelta.replay`` of each record, then ``apply``); memoised."""
    if not batches:
        return image
    replicas = tuple(range(n))
    records = [_core_record(r, replicas) for batch in batches for r in batch]
    update = apply_commit(core_image(image, n), records)
    assert isinstance(update, Success), update
    return plain_image(update.unwrap().after, n)


def controller_image(k: KRaftState, n: int) -> Image:
    """The active controller's image: ``base`` and every committed batch."""
    return replayed(k.base, k.batches, n)


def broker_image(k: KRaftState, b: int, n: int) -> Image:
    """Broker ``b``'s published image (``base`` and the batches it applied)."""
    return replayed(k.base, k.batches[:max(0, k.applied[b])], n)


# ---- keeping the state small ------------------------------------------------------------
@lru_cache(maxsize=1 << 16)
def compacted(k: KRaftState, n: int) -> KRaftState:
    """``k`` with the batches every live broker applied folded into ``base``, partition
    epochs shifted so that ``base``'s is 0 (requests older than it at -1), and each broker's
    epochs renumbered by rank (the module docstring's shortcuts)."""
    live = [a for a in k.applied if a >= 0]
    m = min(live) if live else len(k.batches)
    if m:
        base = replayed(k.base, k.batches[:m], n)
        k = k._replace(batches=k.batches[m:], base=base,
                       applied=tuple(a - m if a >= 0 else a for a in k.applied))
    if m and k.shutdown_offset:
        k = k._replace(shutdown_offset=tuple(o if o < 0 else max(0, o - m)
                                             for o in k.shutdown_offset))
    shift = k.base[0][2]
    if shift:
        part = k.base[0]
        k = k._replace(
            base=((part[0], part[1], 0, part[3], part[4], part[5], part[6]), k.base[1]),
            partition_epoch=tuple(max(-1, p - shift) for p in k.partition_epoch),
            alter_epoch=tuple(max(-1, p - shift) for p in k.alter_epoch))
    return _renumbered(k, n)


def _epochs_of(k: KRaftState, b: int) -> set[int]:
    found = {k.base[1][b][0], k.broker_epoch[b]}
    for batch in k.batches:
        for r in batch:
            if r[0] != PCR and r[1] == b:
                found.add(r[2])
    for row in (*k.fetch_epochs, *k.alter_isr_epochs):
        if row:
            found.add(row[b])
    found.discard(-1)
    return found


def _renumbered(k: KRaftState, n: int) -> KRaftState:
    ranks = []
    changed = False
    for b in range(n):
        found = sorted(_epochs_of(k, b))
        rank = {e: i for i, e in enumerate(found)}
        changed = changed or any(e != i for e, i in rank.items())
        ranks.append(rank)
    if not changed:
        return k

    def ep(b: int, e: int) -> int:
        return -1 if e < 0 else ranks[b][e]

    def rec(r: Record) -> Record:
        return r if r[0] == PCR else (r[0], r[1], ep(r[1], r[2]), *r[3:])

    def row(t: tuple[int, ...]) -> tuple[int, ...]:
        return tuple(ep(b, e) for b, e in enumerate(t))

    return k._replace(
        batches=tuple(tuple(rec(r) for r in batch) for batch in k.batches),
        base=(k.base[0], tuple((ep(b, e), f) for b, (e, f) in enumerate(k.base[1]))),
        fetch_epochs=tuple(row(t) for t in k.fetch_epochs),
        alter_isr_epochs=tuple(row(t) for t in k.alter_isr_epochs),
        broker_epoch=row(k.broker_epoch))


def next_broker_epoch(k: KRaftState, b: int) -> int:
    """The epoch a new registration of ``b`` gets: above every epoch of ``b`` the state holds
    (Kafka: the offset of its ``RegisterBrokerRecord``, above every earlier one)."""
    return max(_epochs_of(k, b), default=-1) + 1


def put(t: tuple[Any, ...], i: int, v: Any) -> tuple[Any, ...]:
    """``t`` with item ``i`` replaced by ``v``."""
    return (*t[:i], v, *t[i + 1:])


NO_LEADER_VALUE = NO_LEADER
NO_CHANGE = NO_LEADER_CHANGE
