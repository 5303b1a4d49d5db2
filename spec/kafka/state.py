"""The state of the ``kafka`` cluster model: named tuples (``KafkaState`` and the classes
below) whose leaves are ints and tuples of ints, so states hash and compare as tuples.

``to_plain`` / ``from_plain`` convert to and from the compact positional layout described
here, which ``KafkaModel.encode`` writes with ``marshal`` version 2 (no back-references:
byte-for-byte deterministic; ``marshal`` refuses tuple subclasses).  Only this module
indexes a state by position.  The layout: ``(ctrl, brokers, msgs, ghost)``.

* ``ctrl = (controller_epoch, zk_leader, zk_epoch, zk_isr, ar, isr_changes, elr,
  last_known_elr)``: the controller's epoch and the ZooKeeper partition state node (leader,
  leader epoch, ISR as a bit mask over broker ids); ``ar`` the assigned replicas in
  preference order; ``isr_changes`` the mask of brokers with an ISR change not yet
  propagated (``isrChangeSet`` non-empty); with ``elr`` (KIP-966) the ELR and last-known
  ELR masks (0 otherwise).
* ``brokers[b] = (alive, log, hw, ckpt, flushed, epoch, leader, cepoch, isr, remotes, meta,
  fetch, unclean, truncating, idle, pending_isr, alter)``:
  the broker's ``Partition`` (leader epoch, leader or -1, known controller epoch, ISR mask
  when it leads), its log (each record one int: ``id * EPOCHS + epoch``), high watermark, the
  checkpointed HW, the flushed prefix length (only with unclean crashes), and while it leads
  ``remotes``: one ``(leo, age)`` per broker id (its own entry unused), ``age`` being the
  logical ticks since the follower last caught up, saturated at ``lag_ticks + 1``; with
  ``kafka_4485`` also the follower's previous fetch, ``(leo, age, lf_leo, lf_age)``: the
  leader's LEO then and the ticks since (``lf_age`` saturated likewise, ``lf_leo`` 0 once
  saturated or unknown, since such a fetch can no longer date a catch-up); ``meta`` its
  MetadataCache as ``(alive_mask, leader, epoch, isr)`` (``()`` when metadata is not modelled);
  ``fetch`` the follower's fetch response in flight with ``fetch=split``, ``()`` when none
  (always with ``fetch=atomic``): ``(leader, leader_epoch, fetch_offset, leader_leo, hw,
  records)``, ``records`` a tuple of record ints, then ``error`` (1: KIP-320's first-design
  epoch mismatch) only with ``fetch_fencing=first-design``; ``unclean`` 1 while down after a power
  loss with ``elr``, ``truncating`` 1 while its fetcher waits for a down leader to answer
  with ``unavailable_leader=fetcher``, ``idle`` 1 from a restart to its first LeaderAndIsr
  with ``unavailable_leader=skip`` (all 0 otherwise, and encoded only with these);
  ``pending_isr`` the ISR mask of a leader's AlterPartition proposal awaiting the controller
  and ``alter`` its round trip (``ALTER_*``), with ``isr_changes=alter-partition`` (0
  otherwise, and encoded only then).
* ``msgs``: the in-flight controller requests, a tuple of ``(dest, kind, controller_epoch,
  leader, epoch, isr, ar)``; ``kind`` 0 is LeaderAndIsr, 1 is UpdateMetadata.  By default
  it is the concatenation of the channels, one per ``(controller_epoch, dest)`` (the queue
  of that controller's ``ControllerChannelManager`` for that broker), sorted by that key,
  each channel in FIFO order: only a channel's first request can be handled next.  With
  ``reorder_requests`` it is a set instead (sorted, no duplicates: any may go next).
* ``ghost = (next_id, origin, committed, acked, consumed, pending, flags, epoch_leader)``:
  variables no broker has, kept only for the properties: how many records were produced,
  the offset each record id was appended at, the leader epoch in which each record was
  first below a leader's HW / acknowledged to its producer / read by a consumer (-1: not
  yet), the acks=all requests waiting as ``(id, broker)`` pairs, event flags, and the broker
  that first led each epoch.
"""

from __future__ import annotations

import marshal
from collections.abc import Iterable
from typing import Any, NamedTuple

from isrlab.spec.kafka.memo import remember


# ---- the state, as Kafka names it ----------------------------------------------------
class ZkPartitionState(NamedTuple):
    """The controller's view: its epoch and the partition's ZooKeeper state node."""

    controller_epoch: int
    """The controller's epoch (``KafkaController.epoch``)."""
    leader: int
    """ZooKeeper's leader (``LeaderAndIsr.leader``), ``NONE`` when offline."""
    leader_epoch: int
    """ZooKeeper's leader epoch (``LeaderAndIsr.leaderEpoch``)."""
    isr: int
    """ZooKeeper's ISR, a bit mask over broker ids."""
    assigned_replicas: tuple[int, ...]
    """The assigned replicas in preference order (``partitionReplicaAssignment``)."""
    isr_change_set: int
    """The brokers with an ISR change not yet propagated (``ReplicaManager.isrChangeSet``)."""
    elr: int = 0
    """KIP-966's eligible leader replicas (``PartitionRegistration.elr``), a bit mask; 0
    unless ``elr``."""
    last_known_elr: int = 0
    """KIP-966's last-known ELR (``PartitionRegistration.lastKnownElr``), a bit mask; 0
    unless ``elr``."""
    kraft: tuple[Any, ...] = ()
    """With ``controller=kraft``: the quorum's part of the state as plain nested tuples of
    ints (the active controller's metadata log, each broker's metadata loader and
    registration: ``isrlab.spec.kafka.kraft_state``), and the fields above then mirror the
    active controller's ``PartitionRegistration``; ``()`` in ZooKeeper mode, and encoded
    only in KRaft mode (by ``isrlab.spec.kafka.quorum_controller``)."""


ControllerView = ZkPartitionState
"""The controller's part of the state (the same tuple as ``ZkPartitionState``)."""


class RemoteReplicaView(NamedTuple):
    """A leader's view of one follower (``Replica`` of a remote broker in ``Partition``)."""

    log_end_offset: int
    """The follower's LEO as last fetched (``logEndOffset``)."""
    age: int
    """Logical ticks since it last caught up (``lastCaughtUpTimeMs``), saturated."""
    last_fetch_leader_leo: int = 0
    """The leader's LEO at its previous fetch (``lastFetchLeaderLogEndOffset``; kafka_4485)."""
    last_fetch_age: int = 0
    """Ticks since that fetch (``lastFetchTimeMs``; kafka_4485), saturated."""


class MetadataView(NamedTuple):
    """A broker's ``MetadataCache`` entry for the partition, with the live brokers."""

    alive_brokers: int
    """The brokers it lists as alive, a bit mask."""
    leader: int
    leader_epoch: int
    isr: int
    """A bit mask over broker ids."""


class FetchResponse(NamedTuple):
    """A follower's fetch response in flight (``fetch=split``)."""

    leader: int
    leader_epoch: int
    fetch_offset: int
    leader_leo: int
    high_watermark: int
    records: tuple[int, ...]
    """Record ints (``EpochCodec``)."""
    error: int = 0
    """1 when the answer is KIP-320's first-design epoch-mismatch error (no records: the
    follower truncates on it); 0 otherwise, and always 0 (not encoded) unless
    ``fetch_fencing=first-design``."""


class BrokerPartition(NamedTuple):
    """One broker's ``Partition`` and log, and what it keeps about the partition."""

    alive: int
    """1 while the broker runs, 0 while crashed."""
    log: tuple[int, ...]
    """The log, each record an int (``EpochCodec``)."""
    high_watermark: int
    hw_checkpoint: int
    """The HW in ``replication-offset-checkpoint`` (0 unless ``hw_checkpoint``)."""
    flushed: int
    """The fsynced prefix length (0 unless ``crashes=unclean``)."""
    leader_epoch: int
    leader: int
    """The leader it believes in, ``NONE`` when it knows none."""
    controller_epoch: int
    """The controller epoch it last accepted (``ReplicaManager.controllerEpoch``)."""
    in_sync_replica_ids: int
    """Its ISR while it leads (``inSyncReplicaIds``), a bit mask; 0 otherwise."""
    remotes: tuple[RemoteReplicaView, ...]
    """While it leads: one view per broker id (its own entry unused); else ``()``."""
    metadata_cache: MetadataView | tuple[()]
    """Its ``MetadataCache`` (``()`` when metadata is not modelled)."""
    fetch_in_flight: FetchResponse | tuple[()]
    """Its fetch response in flight (``()``: none)."""
    unclean_shutdown: int = 0
    """1 while it is down after a ``PowerLoss`` (no ``.kafka_cleanshutdown`` marker: it
    re-registers with ``previousBrokerEpoch`` -1); 0 otherwise, and always 0 unless ``elr``."""
    truncating: int = 0
    """1 while its fetcher waits to truncate (``PartitionFetchState`` ``Truncating``): it
    follows a leader that was down when told to, and truncates once that leader answers
    ``OffsetsForLeaderEpoch`` (``unavailable_leader=fetcher`` only; 0 otherwise)."""
    awaiting_first_leader_and_isr: int = 0
    """1 from a restart until its first LeaderAndIsr: ``ReplicaManager.hwThreadInitialized``
    is false, no HW checkpoint is written yet (``unavailable_leader=skip`` only; 0
    otherwise)."""
    pending_isr: int = 0
    """While it leads with ``isr_changes=alter-partition`` (KIP-497): the ISR of its
    proposal awaiting the controller's answer, a bit mask (``PendingExpandIsr`` /
    ``PendingShrinkIsr``: a superset or a subset of ``in_sync_replica_ids``, which stays
    the committed ISR); 0 when the ISR state is committed (``CommittedIsr``)."""
    alter_partition: int = 0
    """Its AlterPartition round trip (``isr_changes=alter-partition``): ``ALTER_NONE``, the
    request on its way to the controller (``ALTER_SENT``), or the controller's answer on
    its way back (``ALTER_ACCEPTED`` or an error, ``ALTER_FENCED``, ``ALTER_INELIGIBLE``);
    one at a time, as ``AlterPartitionManager`` keeps one request per partition."""


class Request(NamedTuple):
    """A controller request in flight (LeaderAndIsr or UpdateMetadata)."""

    dest: int
    kind: int
    """``LEADER_AND_ISR`` or ``UPDATE_METADATA``."""
    controller_epoch: int
    leader: int
    leader_epoch: int
    isr: int
    """A bit mask over broker ids."""
    assigned_replicas: tuple[int, ...]
    leader_alive: int = 1
    """0.8.x's ``leaders`` field: 1 when the leader it names was alive when the controller
    sent it (``unavailable_leader=skip`` only; always 1 otherwise, and not encoded)."""


class Ghost(NamedTuple):
    """History variables no broker has, kept only for the properties."""

    next_id: int
    """How many records were produced."""
    origin: tuple[int, ...]
    """The offset each record id was appended at."""
    committed: tuple[int, ...]
    """Per record id: the leader epoch it was first below a leader's HW (``NONE``: not yet)."""
    acked: tuple[int, ...]
    """Per record id: the leader epoch it was acknowledged to its producer in."""
    consumed: tuple[int, ...]
    """Per record id: the leader epoch a consumer read it in."""
    pending: tuple[tuple[int, int], ...]
    """The acks=all requests waiting, as ``(record id, broker)`` pairs."""
    flags: int
    """Event flags (``F_*``)."""
    epoch_leader: tuple[int, ...]
    """Per leader epoch: the broker that first led it (``NONE``: none yet)."""


class KafkaState(NamedTuple):
    """A state of the ``kafka`` model."""

    controller: ZkPartitionState
    brokers: tuple[BrokerPartition, ...]
    channels: tuple[Request, ...]
    """The controller requests in flight (see the module docstring for their order)."""
    ghost: Ghost


LEADER_AND_ISR, UPDATE_METADATA = 0, 1


def to_plain(state: KafkaState, previous_fetch: bool,
             extended: bool = False, alter: bool = False,
             fetch_error: bool = False) -> tuple[object, ...]:
    """The state as plain nested tuples (what ``marshal`` accepts), the compact layout the
    module docstring describes: remotes are ``(leo, age)`` pairs unless ``previous_fetch``
    (kafka_4485); the ELR masks, the unclean-shutdown and truncating bits only when
    ``extended`` (``elr`` or ``unavailable_leader=fetcher``), the AlterPartition fields
    (``pending_isr``, ``alter_partition``) only when ``alter``; a fetch response's ``error``
    only when ``fetch_error`` (``fetch_fencing=first-design``).  Without them the bytes are
    the same as before the state was typed."""
    ctrl, brokers, msgs, ghost = state
    out = tuple([_plain_broker(br, previous_fetch, extended, alter, fetch_error)
                 for br in brokers])
    return (_plain_ctrl(ctrl, extended), out, _plain_msgs(msgs, extended), tuple(ghost))


def _plain_ctrl(ctrl: ZkPartitionState, extended: bool) -> tuple[object, ...]:
    return tuple(ctrl[:8]) if extended else tuple(ctrl[:6])


def _plain_msgs(msgs: tuple[Request, ...], extended: bool) -> tuple[object, ...]:
    return tuple(map(tuple, msgs)) if extended else tuple([tuple(m[:7]) for m in msgs])


def _plain_broker(br: BrokerPartition, previous_fetch: bool, extended: bool, alter: bool,
                  fetch_error: bool) -> tuple[object, ...]:
    rem: tuple[tuple[int, ...], ...] = br[9]
    if rem:
        rem = (tuple(map(tuple, rem)) if previous_fetch
               else tuple([(r[0], r[1]) for r in rem]))
    extra = br[12:] if alter else br[12:15] if extended else ()
    fetch = tuple(br[11]) if fetch_error else tuple(br[11][:6])
    return (*br[:9], rem, tuple(br[10]), fetch, *extra)


_FOUR = b"(" + (4).to_bytes(4, "little")
"""``marshal`` version 2's header of a tuple of four items."""


class Encoder:
    """``marshal.dumps(to_plain(state, ...), 2)``, the model's ``encode``, assembled from
    the bytes of each component (the controller, each broker, the requests, the ghost),
    memoised per component: a component takes few values over a search.

    Byte for byte the same: ``marshal`` version 2 writes no back-references, so a tuple's
    bytes are its header (``(`` and its length, four bytes little-endian) followed by the
    bytes of its items, each written alone.  The caches are dicts keyed on the component
    values (compared by equality); each is bounded by ``memo.remember``."""

    def __init__(self, previous_fetch: bool, extended: bool = False, alter: bool = False,
                 fetch_error: bool = False) -> None:
        self.flags = (previous_fetch, extended, alter, fetch_error)
        self._ctrl: dict[ZkPartitionState, bytes] = {}
        self._brokers: dict[BrokerPartition, bytes] = {}
        self._msgs: dict[tuple[Request, ...], bytes] = {}
        self._ghost: dict[Ghost, bytes] = {}

    def __call__(self, state: KafkaState) -> bytes:
        ctrl, brokers, msgs, ghost = state
        extended = self.flags[1]
        c = self._ctrl.get(ctrl)
        if c is None:
            c = self._store(self._ctrl, ctrl, _plain_ctrl(ctrl, extended))
        parts = [_FOUR, c, b"(" + len(brokers).to_bytes(4, "little")]
        cache = self._brokers
        for br in brokers:
            e = cache.get(br)
            if e is None:
                e = self._store(cache, br, _plain_broker(br, *self.flags))
            parts.append(e)
        m = self._msgs.get(msgs)
        if m is None:
            m = self._store(self._msgs, msgs, _plain_msgs(msgs, extended))
        g = self._ghost.get(ghost)
        if g is None:
            g = self._store(self._ghost, ghost, tuple(ghost))
        parts.append(m)
        parts.append(g)
        return b"".join(parts)

    @staticmethod
    def _store(cache: dict[Any, bytes], key: Any, plain: tuple[object, ...]) -> bytes:
        data = marshal.dumps(plain, 2)  # type: ignore[arg-type]  # nested tuples of ints, which typeshed cannot spell
        return remember(cache, key, data)


_new = tuple.__new__
"""``tuple.__new__(Cls, values)``: a NamedTuple built in C, without its Python ``__new__``
(decoding builds several per state on the checker's hot path)."""


def from_plain(value: tuple[Any, ...]) -> KafkaState:
    """The inverse of ``to_plain`` (fields it left out come back as 0)."""
    ctrl, brokers, msgs, ghost = value
    if len(ctrl) < len(ZkPartitionState._fields):
        ctrl = (*ctrl, *(0,) * (8 - len(ctrl)), ())[:len(ZkPartitionState._fields)]
    width = len(BrokerPartition._fields)
    out = []
    for br in brokers:
        meta, fetch = br[10], br[11]
        out.append(_new(BrokerPartition, (
            *br[:9], tuple([_new(RemoteReplicaView, r if len(r) == 4 else (*r, 0, 0))
                            for r in br[9]]),
            _new(MetadataView, meta) if meta else (),
            _new(FetchResponse, fetch if len(fetch) == 7 else (*fetch, 0)) if fetch else (),
            *br[12:], *(0,) * (width - len(br)),
        )))
    return _new(KafkaState, (_new(ZkPartitionState, ctrl), tuple(out),
                             tuple([_new(Request, m if len(m) == 8 else (*m, 1))
                                    for m in msgs]), _new(Ghost, ghost)))


# ghost flags
F_EPOCH_REGRESSED = 1
"""A broker adopted a smaller leader epoch than it had (without restarting)."""
F_TWO_LEADERS = 2
"""Two different brokers became leader in the same leader epoch."""
F_UNCLEAN = 4
"""An unclean leader election happened (a leader from outside the live ISR)."""
F_TRUNCATED = 8
"""A follower truncated records off its log (a ``sometimes`` witness)."""
F_HALTED = 16
"""A broker exited (``FatalExitError``): a follower past its leader's LEO with unclean
election disabled, before KAFKA-7414 (``kafka_7414=false``)."""
F_CHECKPOINT_LOST = 32
"""A broker wrote its HW checkpoint file without a partition whose log it keeps
(KAFKA-1647, ``unavailable_leader=skip``)."""

NONE = -1
"""No leader / not yet (ghost epochs) / unknown."""

# BrokerPartition.alter_partition: the AlterPartition round trip (isr_changes=alter-partition)
ALTER_NONE = 0
"""No AlterPartition request or answer in flight."""
ALTER_SENT = 1
"""The leader's proposal is on its way to the controller."""
ALTER_ACCEPTED = 2
"""The controller took the proposal (``Errors.NONE``); the answer is on its way back."""
ALTER_FENCED = 3
"""The controller refused it, ``FENCED_LEADER_EPOCH`` (the leader's epoch is stale); the
leader keeps its pending state until a LeaderAndIsr resets it."""
ALTER_INELIGIBLE = 4
"""The controller refused it, ``INELIGIBLE_REPLICA`` (KIP-841: the proposed ISR holds a
fenced or offline broker); the leader goes back to its committed ISR."""

class EpochCodec(NamedTuple):
    """Records as ints: ``id * epochs + epoch`` (``epochs`` = max leader epoch + 1)."""

    epochs: int

    def code(self, record_id: int, epoch: int) -> int:
        """The int of record ``record_id`` written in ``epoch``."""
        return record_id * self.epochs + epoch

    def record_id(self, code: int) -> int:
        """The producer-visible id of a record."""
        return code // self.epochs

    def epoch(self, code: int) -> int:
        """The leader epoch a record was written in."""
        return code % self.epochs


def members(mask: int) -> tuple[int, ...]:
    """The broker ids of a bit mask, ascending."""
    if 0 <= mask < len(_MEMBERS):
        return _MEMBERS[mask]
    return _members(mask)


def _members(mask: int) -> tuple[int, ...]:
    out = []
    i = 0
    while mask:
        if mask & 1:
            out.append(i)
        mask >>= 1
        i += 1
    return tuple(out)


_MEMBERS = tuple(_members(mask) for mask in range(1 << 6))
"""``members`` of every mask of the model's at most 6 brokers, computed once."""


def mask_of(ids: Iterable[int]) -> int:
    """The bit mask of an iterable of broker ids."""
    m = 0
    for i in ids:
        m |= 1 << i
    return m
