"""The state of the ``kafka`` cluster model: named tuples (``KafkaState`` and the classes
below) whose leaves are ints and tuples of ints, so states hash and compare as tuples.

``Layout.plain`` / ``Layout.from_plain`` convert to and from the compact positional layout
described here, which ``KafkaModel.encode`` writes with ``marshal`` version 2 (no
back-references: byte-for-byte deterministic; ``marshal`` refuses tuple subclasses).  Which
field is encoded under which configuration is one table, ``LAYOUT_TABLE``; ``Layout``
derives the rest from it.  Only this module indexes a state by position.  The layout:
``(ctrl, brokers, msgs, ghost)``.

Each class below documents its fields, and ``LAYOUT_TABLE`` says which of them each
configuration encodes; in every layout a broker's log is a tuple of record ints (``id *
EPOCHS + epoch``, ``EpochCodec``), masks are ints over broker ids, ``remotes`` (while a
broker leads) holds one view per broker id (its own entry unused), ``metadata_cache`` and
``fetch_in_flight`` are ``()`` when absent, and ``msgs`` is by default the concatenation of
the channels, one per ``(controller_epoch, dest)`` sorted by that key, each in FIFO order
(a sorted set with ``reorder_requests``).  docs/kafka-model.md, "State", describes them.
The KRaft part of the controller tuple, ``KRaftState``, is ``isrlab.spec.kafka.kraft_state``'s;
``EpochCodec``, ``members`` and ``mask_of`` (records and broker sets as ints) are
``isrlab.spec.kafka.codes``'s, re-exported here.
"""

from __future__ import annotations

import hashlib
import marshal
from typing import Any, Final, NamedTuple, TypeVar

from isrlab.spec.kafka.codes import EpochCodec as EpochCodec
from isrlab.spec.kafka.codes import mask_of as mask_of
from isrlab.spec.kafka.codes import members as members
from isrlab.spec.kafka.kraft_state import KRaftState
from isrlab.spec.kafka.memo import FRONT_SLOTS, Interner, remember


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
    only in KRaft mode (by ``isrlab.spec.kafka.kraft_model``)."""


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
    its way back (``ALTER_ACCEPTED`` or an error, ``ALTER_FENCED``, ``ALTER_INELIGIBLE``, or
    KRaft's ``ALTER_NEW_EPOCH``);
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


def kafka_state(controller: ZkPartitionState, brokers: tuple[BrokerPartition, ...],
                channels: tuple[Request, ...], ghost: Ghost) -> KafkaState:
    """``KafkaState(controller, brokers, channels, ghost)`` built by ``tuple.__new__`` in C:
    calling the class runs the named tuple's ``__new__``, which is Python code (interpreted
    even when the model is compiled).  The model's steps build their successors with it."""
    return _new(_KAFKA_STATE, (controller, brokers, channels, ghost))


_KAFKA_STATE: Final = KafkaState
"""The class, held in a native global (mypyc reads a class's module-level name from the
module's dict at each use)."""


_T = TypeVar("_T", bound=tuple[Any, ...])


def built(cls: type[_T], *values: object, **named: object) -> _T:
    """``cls(*values, **named)`` for one of the named tuple classes above, built by
    ``tuple.__new__`` in C (see ``kafka_state``): the fields not given take the class's
    defaults.  The model's steps build the requests and broker tuples they make with it."""
    named_tuple: Any = cls  # a NamedTuple class: its _fields and _field_defaults
    fields: tuple[str, ...] = named_tuple._fields
    if len(values) == len(fields) and not named:
        return _new(cls, values)
    defaults: dict[str, object] = named_tuple._field_defaults
    items = [*values, *[defaults[name] for name in fields[len(values):]]]
    for name, item in named.items():
        items[fields.index(name)] = item
    return _new(cls, items)


def with_fields(value: _T, **changes: object) -> _T:
    """``value._replace(**changes)`` built by ``tuple.__new__`` in C (a named tuple's
    ``_replace`` is Python code, interpreted even when the model is compiled); the model's
    steps change a field of a component with it."""
    cls = type(value)
    named_tuple: Any = cls  # a NamedTuple class: its _fields
    fields: tuple[str, ...] = named_tuple._fields
    items = list(value)
    for name, item in changes.items():
        items[fields.index(name)] = item
    return _new(cls, items)


LEADER_AND_ISR: Final = 0
UPDATE_METADATA: Final = 1


# ---- the encoding, from one table ---------------------------------------------------
ALWAYS = 0
"""A field encoded in every layout."""
PREVIOUS_FETCH = 1
"""Layout flag: ``kafka_4485`` (a remote's previous fetch)."""
EXTENDED = 2
"""Layout flag: ``elr`` or ``unavailable_leader`` ``fetcher`` / ``skip``."""
ALTER = 4
"""Layout flag: ``isr_changes=alter-partition``."""
FETCH_ERROR = 8
"""Layout flag: ``fetch_fencing=first-design`` (a fetch response's error)."""
KRAFT_SHUTDOWN = 32
"""Layout flag: ``controller=kraft`` with ``controlled_shutdown`` (the heartbeat manager's
controlled-shutdown offsets)."""
KRAFT = 16
"""Layout flag of ``controller=kraft``'s part of the controller tuple, never set by
``layout_flags``: the KRaft mode encodes that part itself (``isrlab.spec.kafka.
kraft_model.KRaftModel.encode``) after the ZooKeeper-mode layout."""

LAYOUT_TABLE: dict[str, tuple[tuple[str, int], ...]] = {
    "ZkPartitionState": (
        ("controller_epoch", ALWAYS), ("leader", ALWAYS), ("leader_epoch", ALWAYS),
        ("isr", ALWAYS), ("assigned_replicas", ALWAYS), ("isr_change_set", ALWAYS),
        ("elr", EXTENDED), ("last_known_elr", EXTENDED), ("kraft", KRAFT)),
    "BrokerPartition": (
        ("alive", ALWAYS), ("log", ALWAYS), ("high_watermark", ALWAYS),
        ("hw_checkpoint", ALWAYS), ("flushed", ALWAYS), ("leader_epoch", ALWAYS),
        ("leader", ALWAYS), ("controller_epoch", ALWAYS), ("in_sync_replica_ids", ALWAYS),
        ("remotes", ALWAYS), ("metadata_cache", ALWAYS), ("fetch_in_flight", ALWAYS),
        ("unclean_shutdown", EXTENDED | ALTER), ("truncating", EXTENDED | ALTER),
        ("awaiting_first_leader_and_isr", EXTENDED | ALTER),
        ("pending_isr", ALTER), ("alter_partition", ALTER)),
    "RemoteReplicaView": (
        ("log_end_offset", ALWAYS), ("age", ALWAYS),
        ("last_fetch_leader_leo", PREVIOUS_FETCH), ("last_fetch_age", PREVIOUS_FETCH)),
    "MetadataView": (
        ("alive_brokers", ALWAYS), ("leader", ALWAYS), ("leader_epoch", ALWAYS),
        ("isr", ALWAYS)),
    "FetchResponse": (
        ("leader", ALWAYS), ("leader_epoch", ALWAYS), ("fetch_offset", ALWAYS),
        ("leader_leo", ALWAYS), ("high_watermark", ALWAYS), ("records", ALWAYS),
        ("error", FETCH_ERROR)),
    "Request": (
        ("dest", ALWAYS), ("kind", ALWAYS), ("controller_epoch", ALWAYS), ("leader", ALWAYS),
        ("leader_epoch", ALWAYS), ("isr", ALWAYS), ("assigned_replicas", ALWAYS),
        ("leader_alive", EXTENDED)),
    "Ghost": tuple((name, ALWAYS) for name in Ghost._fields),
    "KRaftState": (
        ("batches", ALWAYS), ("base", ALWAYS), ("applied", ALWAYS),
        ("partition_epoch", ALWAYS), ("alter_epoch", ALWAYS), ("fetch_epochs", ALWAYS),
        ("alter_isr_epochs", ALWAYS), ("broker_epoch", ALWAYS),
        ("shutdown_offset", KRAFT_SHUTDOWN)),
}
"""The state's encoding: for each tuple class, each field in order with the layout flags
under which it is encoded (``ALWAYS``: in every layout; otherwise when any of its flags is
the layout's).  A field left out decodes as its class's default.  ``Layout`` derives the
encoded width of each class from it; the encoded fields of a class are always a prefix of
its fields (``Layout`` checks), so encoding slices and decoding pads with the defaults.  A
new field is one entry here, with the flag of the parameter that uses it."""

LAYOUT_VERSION = 1
"""The version of the encoding's scheme (``Layout.version`` adds the table's digest):
recorded in a run directory's metadata (``KafkaModel.state_layout``), so that a run is
never resumed, nor its states decoded, under another encoding."""

_CLASSES: dict[str, Any] = {
    "ZkPartitionState": ZkPartitionState, "BrokerPartition": BrokerPartition,
    "RemoteReplicaView": RemoteReplicaView, "MetadataView": MetadataView,
    "FetchResponse": FetchResponse, "Request": Request, "Ghost": Ghost,
    "KRaftState": KRaftState,
}
_REMOTES = BrokerPartition._fields.index("remotes")
_META = BrokerPartition._fields.index("metadata_cache")
_FETCH = BrokerPartition._fields.index("fetch_in_flight")
_TAIL = _FETCH + 1
"""The broker's nested fields (remotes, its metadata cache, its fetch response in flight),
encoded as tuples of their own layouts; the fields from ``_TAIL`` on are ints."""


def _width(name: str, flags: int) -> int:
    """How many leading fields of class ``name`` are encoded under ``flags`` (the encoded
    fields must be a prefix: ``ValueError`` otherwise)."""
    table = LAYOUT_TABLE[name]
    if tuple(field for field, _ in table) != _CLASSES[name]._fields:
        raise ValueError(f"the layout table of {name} does not list its fields in order")
    encoded = [when == ALWAYS or bool(when & flags) for _, when in table]
    width = encoded.index(False) if False in encoded else len(encoded)
    if any(encoded[width:]):
        raise ValueError(f"{name}'s encoded fields are not a prefix under flags {flags}")
    return width


def _pad(name: str, width: int) -> tuple[object, ...]:
    """The defaults of class ``name``'s fields from ``width`` on (what decoding appends)."""
    cls = _CLASSES[name]
    return tuple(cls._field_defaults[field] for field in cls._fields[width:])


class Layout:
    """The encoding of one model configuration, derived from ``LAYOUT_TABLE``: each class's
    encoded width and what decoding pads it with."""

    def __init__(self, flags: int) -> None:
        self.flags = flags
        self.ctrl = _width("ZkPartitionState", flags)
        self.broker = _width("BrokerPartition", flags)
        self.remote = _width("RemoteReplicaView", flags)
        self.fetch = _width("FetchResponse", flags)
        self.request = _width("Request", flags)
        self.kraft = _width("KRaftState", flags)
        if (_width("MetadataView", flags) != len(MetadataView._fields)
                or _width("Ghost", flags) != len(Ghost._fields) or self.broker < _TAIL):
            raise ValueError("the metadata cache, the ghost and a broker's nested fields "
                             "are encoded whole")
        self.ctrl_pad = _pad("ZkPartitionState", self.ctrl)
        self.broker_pad = _pad("BrokerPartition", self.broker)
        self.remote_pad = _pad("RemoteReplicaView", self.remote)
        self.fetch_pad = _pad("FetchResponse", self.fetch)
        self.request_pad = _pad("Request", self.request)
        self.kraft_pad = _pad("KRaftState", self.kraft)

    @property
    def version(self) -> str:
        """``LAYOUT_VERSION`` and a digest of ``LAYOUT_TABLE`` (a changed table is another
        layout even if the version was not bumped)."""
        digest = hashlib.sha256(repr(sorted(LAYOUT_TABLE.items())).encode()).hexdigest()
        return f"{LAYOUT_VERSION}:{digest[:12]}"

    def plain_kraft(self, k: KRaftState) -> tuple[Any, ...]:
        """The KRaft part's plain form (``KRaftModel.encode`` writes it after the rest)."""
        return tuple(k[:self.kraft])

    def kraft_from_plain(self, value: tuple[Any, ...]) -> KRaftState:
        """The inverse of ``plain_kraft``."""
        return _new(KRaftState, (*value, *self.kraft_pad))

    def plain_ctrl(self, ctrl: ZkPartitionState) -> tuple[object, ...]:
        """The controller's plain form."""
        return tuple(ctrl[:self.ctrl])

    def plain_msgs(self, msgs: tuple[Request, ...]) -> tuple[object, ...]:
        """The requests' plain form."""
        width = self.request
        return tuple([tuple(m[:width]) for m in msgs])

    def plain_broker(self, br: BrokerPartition) -> tuple[object, ...]:
        """A broker's plain form: its fields, its remotes, cache and fetch response as
        plain tuples of their own widths."""
        width = self.remote
        rem = tuple([tuple(r[:width]) for r in br.remotes])
        fetch = tuple(br.fetch_in_flight[:self.fetch])
        return (*br[:_REMOTES], rem, tuple(br.metadata_cache), fetch, *br[_TAIL:self.broker])

    def plain(self, state: KafkaState) -> tuple[object, ...]:
        """The state as plain nested tuples of ints (what ``marshal`` accepts)."""
        ctrl, brokers, msgs, ghost = state
        return (self.plain_ctrl(ctrl), tuple([self.plain_broker(br) for br in brokers]),
                self.plain_msgs(msgs), tuple(ghost))

    def from_plain(self, value: tuple[Any, ...]) -> KafkaState:
        """The inverse of ``plain``: the named tuples, each left-out field its default."""
        ctrl, brokers, msgs, ghost = value
        remote_pad, fetch_pad, broker_pad = self.remote_pad, self.fetch_pad, self.broker_pad
        out = []
        for br in brokers:
            meta, fetch = br[_META], br[_FETCH]
            out.append(_new(BrokerPartition, (
                *br[:_REMOTES],
                tuple([_new(RemoteReplicaView, (*r, *remote_pad)) for r in br[_REMOTES]]),
                _new(MetadataView, meta) if meta else (),
                _new(FetchResponse, (*fetch, *fetch_pad)) if fetch else (),
                *br[_TAIL:], *broker_pad,
            )))
        request_pad = self.request_pad
        return _new(KafkaState, (_new(ZkPartitionState, (*ctrl, *self.ctrl_pad)), tuple(out),
                                 tuple([_new(Request, (*m, *request_pad)) for m in msgs]),
                                 _new(Ghost, ghost)))


def layout_flags(previous_fetch: bool, extended: bool = False, alter: bool = False,
                 fetch_error: bool = False, kraft_shutdown: bool = False) -> int:
    """The layout flags of a configuration's derived flags."""
    return ((PREVIOUS_FETCH if previous_fetch else 0) | (EXTENDED if extended else 0)
            | (ALTER if alter else 0) | (FETCH_ERROR if fetch_error else 0)
            | (KRAFT_SHUTDOWN if kraft_shutdown else 0))


def to_plain(state: KafkaState, previous_fetch: bool,
             extended: bool = False, alter: bool = False,
             fetch_error: bool = False) -> tuple[object, ...]:
    """The state as plain nested tuples under the layout of these flags (``Layout.plain``)."""
    return Layout(layout_flags(previous_fetch, extended, alter, fetch_error)).plain(state)


_FOUR: Final = b"(" + (4).to_bytes(4, "little")
"""``marshal`` version 2's header of a tuple of four items."""


_FRONT_MASK: Final = FRONT_SLOTS - 1

_CTRL: Final = 0
_BROKER: Final = 1
_MSGS: Final = 2
_GHOST: Final = 3
"""The kinds of component ``Encoder._store`` writes."""


class Encoder:
    """``marshal.dumps(layout.plain(state), 2)``, the model's ``encode``, assembled from
    the bytes of each component (the controller, each broker, the requests, the ghost),
    memoised per component: a component takes few values over a search.

    Byte for byte the same: ``marshal`` version 2 writes no back-references, so a tuple's
    bytes are its header (``(`` and its length, four bytes little-endian) followed by the
    bytes of its items, each written alone.  The caches are dicts keyed on the address of
    the component's object in the model's ``Interner`` (equal components are one object
    there: the model's successors hold those objects already, any other state's are
    looked up by value once), emptied with it; each is bounded by ``memo.remember``.

    Before a dict is asked, each position (the controller, broker ``b``, the requests, the
    ghost) remembers the component object it encoded last and its bytes: the successors
    of one state, encoded one after the other, share the objects of every component their
    step left alone, so most components are found by identity (``is``)."""

    def __init__(self, layout: Layout, interner: Interner) -> None:
        self.layout = layout
        self.interner = interner
        self._ctrl: dict[int, bytes] = {}
        self._brokers: dict[int, bytes] = {}
        self._msgs: dict[int, bytes] = {}
        self._ghost: dict[int, bytes] = {}
        for cache in (self._ctrl, self._brokers, self._msgs, self._ghost):
            interner.register(cache)
        self._last: list[object] = []
        """The component object last encoded at each position: the controller, the
        requests, the ghost, then one per broker."""
        self._last_bytes: list[bytes] = []
        """Its bytes."""
        self._brokers_header = b""
        """``marshal``'s header of the broker tuple (set with ``_last``'s length)."""
        self._fronts: list[list[tuple[object, bytes] | None]] = [
            [None] * FRONT_SLOTS for _ in range(4)]
        """Per kind (``_CTRL``...), the components met last and their bytes, by address
        (direct-mapped, each holding its component alive): asked before the dict."""
        for front in self._fronts:
            interner.fronts.append(front)

    def __call__(self, state: KafkaState) -> bytes:
        ctrl, brokers, msgs, ghost = state
        last, last_bytes = self._last, self._last_bytes
        if len(last) != 3 + len(brokers):
            self._last = last = [None] * (3 + len(brokers))
            self._last_bytes = last_bytes = [b""] * (3 + len(brokers))
            self._brokers_header = b"(" + len(brokers).to_bytes(4, "little")
        if ctrl is last[0]:
            c = last_bytes[0]
        else:
            c = self._bytes(self._ctrl, ctrl, _CTRL)
            last[0], last_bytes[0] = ctrl, c
        parts = [_FOUR, c, self._brokers_header]
        cache = self._brokers
        at = 3
        for br in brokers:
            if br is last[at]:
                e = last_bytes[at]
            else:
                e = self._bytes(cache, br, _BROKER)
                last[at], last_bytes[at] = br, e
            parts.append(e)
            at += 1
        if msgs is last[1]:
            m = last_bytes[1]
        else:
            m = self._bytes(self._msgs, msgs, _MSGS)
            last[1], last_bytes[1] = msgs, m
        if ghost is last[2]:
            g = last_bytes[2]
        else:
            g = self._bytes(self._ghost, ghost, _GHOST)
            last[2], last_bytes[2] = ghost, g
        parts.append(m)
        parts.append(g)
        return b"".join(parts)

    def _bytes(self, cache: dict[int, bytes], key: Any, kind: int) -> bytes:
        """The bytes of component ``key`` of ``kind``: from the kind's front, else from
        ``cache`` (keyed on the interner's objects, which it holds), else ``_store``."""
        slot = id(key) >> 4 & _FRONT_MASK
        front = self._fronts[kind]
        seen = front[slot]
        if seen is not None and seen[0] is key:
            return seen[1]
        found = cache.get(id(key))
        if found is None:
            found = self._store(cache, key, kind)
        front[slot] = (key, found)
        return found

    def _store(self, cache: dict[int, bytes], key: Any, kind: int) -> bytes:
        """The bytes of component ``key`` of ``kind`` (``_CTRL``, ``_BROKER``, ``_MSGS``,
        ``_GHOST``), remembered under the address of the interner's object equal to it (a
        hit when ``key`` was not that object but an equal one already encoded)."""
        canonical = self.interner.canon(key)
        found = cache.get(id(canonical))
        if found is not None:
            return found
        layout = self.layout
        plain: tuple[object, ...]
        if kind == _CTRL:
            plain = layout.plain_ctrl(key)
        elif kind == _BROKER:
            plain = layout.plain_broker(key)
        elif kind == _MSGS:
            plain = layout.plain_msgs(key)
        else:
            plain = tuple(key)
        data = marshal.dumps(plain, 2)  # type: ignore[arg-type]  # nested tuples of ints, which typeshed cannot spell
        return remember(cache, id(canonical), data)


_new: Final = tuple.__new__
"""``tuple.__new__(Cls, values)``: a NamedTuple built in C, without its Python ``__new__``
(decoding builds several per state on the checker's hot path)."""


# ghost flags
F_EPOCH_REGRESSED: Final = 1
"""A broker adopted a smaller leader epoch than it had (without restarting)."""
F_TWO_LEADERS: Final = 2
"""Two different brokers became leader in the same leader epoch."""
F_UNCLEAN: Final = 4
"""An unclean leader election happened (a leader from outside the live ISR)."""
F_TRUNCATED: Final = 8
"""A follower truncated records off its log (a ``sometimes`` witness)."""
F_HALTED: Final = 16
"""A broker exited (``FatalExitError``): a follower past its leader's LEO with unclean
election disabled, before KAFKA-7414 (``kafka_7414=false``)."""
F_CHECKPOINT_LOST: Final = 32
"""A broker wrote its HW checkpoint file without a partition whose log it keeps
(KAFKA-1647, ``unavailable_leader=skip``)."""

NONE: Final = -1
"""No leader / not yet (ghost epochs) / unknown."""

# BrokerPartition.alter_partition: the AlterPartition round trip (isr_changes=alter-partition)
ALTER_NONE: Final = 0
"""No AlterPartition request or answer in flight."""
ALTER_SENT: Final = 1
"""The leader's proposal is on its way to the controller."""
ALTER_ACCEPTED: Final = 2
"""The controller took the proposal (``Errors.NONE``); the answer is on its way back."""
ALTER_FENCED: Final = 3
"""The controller refused it, ``FENCED_LEADER_EPOCH`` (the leader's epoch is stale); the
leader keeps its pending state until a LeaderAndIsr resets it."""
ALTER_INELIGIBLE: Final = 4
"""The controller refused it, ``INELIGIBLE_REPLICA`` (KIP-841: the proposed ISR holds a
fenced or offline broker); the leader goes back to its committed ISR."""
ALTER_NEW_EPOCH: Final = 5
"""KRaft, ``kraft_epoch_bump=isr-shrink`` (3.0-3.5): the controller took the proposal, but
its record bumped the leader epoch (an ISR shrink), so the answer carries a leader epoch
the leader, still in the old one, ignores (``Partition.handleAlterPartitionUpdate``: "stale
leader epoch"); the proposal stays pending until the leader publishes the record."""
