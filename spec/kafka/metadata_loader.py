"""A KRaft broker's ``MetadataLoader`` and what its publisher does with a delta.

``controller=kraft`` only.

Each live broker replays the active controller's committed metadata log in order, at its
own pace: ``HandleCommit(b)`` publishes the next committed batch, ``HandleCommit(b,j)`` the
next ``j`` batches merged into ONE delta (``MetadataLoader.handleCommit`` replays every
batch the Raft client hands it into one ``MetadataDelta`` and publishes it once:
``isrlab.core.kraft_metadata.apply_commit``; 3.6+ ``MetadataBatchLoader`` likewise), so a
broker may go from leader epoch ``e`` to ``e + 2`` without seeing ``e + 1`` (issue 36).
``BrokerMetadataPublisher`` hands the delta to ``ReplicaManager.applyDelta``:
``TopicDelta.localChanges`` (``local_changes``) says whether the broker now leads or
follows, ``applyLocalLeadersDelta`` calls ``Partition.makeLeader``
(``make_leader_kraft``: remote replicas reset only when the broker was not leading
before, ``isNewLeader``; with ``leader_state_reset=on-epoch``, issue 36's fix in no release,
also when the leader epoch changes) and ``applyLocalFollowersDelta`` ``Partition.makeFollower`` and
restarts the fetcher in the new leader epoch, which truncates on the diverging epoch of
its first fetch response (the ``Truncate`` step of ``isrlab.spec.kafka.fetcher``, against
the leader in the same epoch).  Every broker acts only on its own published image.

Shortcuts: the publisher runs with the loader (one step); a partition state replaced by a
delta drops the leader's pending AlterPartition (its request, if still in flight, carries a
partition epoch the controller has moved past, so ``INVALID_UPDATE_VERSION`` would refuse
it, and its answer would be ignored: ``Partition.sendAlterPartitionRequest``'s callback
checks the partition state); ``makeFollower`` with no leader starts no fetcher.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from typing import Any, Final, cast

from isrlab.core.elr import PartitionRegistration
from isrlab.core.kraft_metadata import (
    MetadataImage,
    MetadataUpdate,
    local_changes,
    make_leader_kraft,
)
from isrlab.core.partition import raise_leader_hw
from isrlab.spec.kafka.config import NO_FETCH, KafkaConfig, Out, State
from isrlab.spec.kafka.kraft_state import (
    Image,
    KRaftState,
    compacted,
    core_image,
    kraft_state,
    put,
    replayed,
)
from isrlab.spec.kafka.labels import handle_commit
from isrlab.spec.kafka.memo import MISSING, IdCache, IdCache2, memoised, remember
from isrlab.spec.kafka.model import KafkaModel
from isrlab.spec.kafka.state import (
    ALTER_NONE,
    NONE,
    BrokerPartition,
    ZkPartitionState,
    kafka_state,
    mask_of,
    members,
    with_fields,
)

UNCHANGED: Final = 0
LEADS: Final = 1
FOLLOWS: Final = 2
"""``MetadataLoader._local_change``'s kinds: the delta leaves the broker's partition as it
was, makes it lead (``applyLocalLeadersDelta``) or follow (``applyLocalFollowersDelta``)."""


class MetadataLoader(KafkaModel):
    """Each broker's ``MetadataLoader`` and ``ReplicaManager.applyDelta``."""

    def __init__(self, config: KafkaConfig, invariants: Sequence[str] | None = None,
                 unfair: Sequence[str] = ()) -> None:
        super().__init__(config, invariants, unfair)
        self._kraft_by_key: dict[tuple[object, ...], KRaftState] = {}
        """Each interned KRaft part by its key (``_canonical_kraft``), emptied with the
        interner."""
        self._interner.register(self._kraft_by_key)
        self._source: dict[int, tuple[KRaftState, tuple[object, ...], list[object]]] = {}
        """Under 0, while ``next_states`` expands a state: its interned KRaft part, that
        part's nested fields (the metadata log, the base image, the two tables of broker
        epochs), and its images by count of batches (``_image``, ``None``: not asked yet);
        emptied with the interner (every object it names is then the interner's)."""
        self._interner.register(self._source)
        self._sources: dict[int, tuple[KRaftState, tuple[object, ...], list[object]]] = {}
        """``_source``'s entry of each interned KRaft part met, by its address (the entry
        holds it): a state's images are then found among those of the states expanded
        before it with the same part; emptied with the interner."""
        self._interner.register(self._sources)
        self._images: dict[int, tuple[KRaftState, object]] = {}
        """``_image_object``'s cache: by the address of the interned KRaft part and the
        count of batches (below 256), each entry holding the part; emptied with the
        interner."""
        self._interner.register(self._images)
        self._raises_hw: dict[str, bool] = {}
        """``BrokerLifecycleManager._eligible_hw``: whether a step of each label runs
        ``maybeIncrementLeaderHW`` (its name in ``HW_EVENTS``)."""
        self._cache_fetch_epoch = IdCache(self._interner)
        """``BrokerLifecycleManager._fetch``'s cache (KIP-903's fetch epochs): by the
        controller tuple, the leader and the follower."""
        self._cache_upkept = IdCache(self._interner)
        """``BrokerLifecycleManager._upkeep``'s cache: by the controller tuple and the
        brokers' events."""
        self._cache_controller_steps = IdCache(self._interner)
        """The controller's FenceBroker, UnfenceBroker and RegisterBroker steps together
        (``QuorumController._kraft_steps``): by the controller tuple and the brokers' flags
        they read."""
        self._steps_of: object = None
        """The state ``_kraft_steps`` answered last (held, so that no other state takes its
        address), and its answer (``_steps``)."""
        self._steps: object = ()
        self._cache_alter_partition = IdCache2(self._interner)
        """``QuorumController._a_kraft_alter_partition``'s cache: by the controller and
        leader tuples and the leader."""
        self._cache_published = IdCache2(self._interner)
        """``_published``'s cache: by the controller and broker tuples, the broker, the
        count of batches and whether it is a first publication."""
        self._deltas: dict[int, tuple[object, object, object, object, int, object]] = {}
        """``_delta_of``'s cache: ``_apply_delta``'s result by the addresses of the broker
        tuple, the two images and the fetch epochs, and the ints (each entry holds them)."""
        self._interner.register(self._deltas)
        self._publishers: dict[int, tuple[object, object, int, object]] = {}
        """``_publisher_controller``'s cache: by the addresses of the controller tuple and
        the broker's new fetch epochs, and the ints (each entry holds them)."""
        self._interner.register(self._publishers)
        self._changes: dict[int, tuple[object, object, int, object]] = {}
        """``_local_change``'s cache: by the addresses of the two images and the broker
        (each entry holds the images)."""
        self._interner.register(self._changes)

    def _expand_kraft(self, state: State) -> None:
        """Note the KRaft part of the state ``next_states`` expands (``_source``, its entry
        kept per part in ``_sources``): the successors' parts are built from its fields, and
        its images are asked for often."""
        k = self._kraft(state)
        found = self._source.get(0)
        if found is not None and found[0] is k:
            return
        found = self._sources.get(id(k))
        if found is not None and found[0] is k:
            self._source[0] = found
            return
        interner = self._interner
        k = interner.canon(k)
        found = self._sources.get(id(k))
        if found is None or found[0] is not k:
            raw: Any = k  # untyped: the compiled model would copy a fixed-length tuple field
            nested = (interner.canon(raw[0]), interner.canon(raw[1]), interner.canon(raw[5]),
                      interner.canon(raw[6]))
            images: list[object] = [None] * (len(k.batches) + 1)
            found = remember(self._sources, id(k), (k, nested, images))
        self._source[0] = found

    def _canonical_kraft(self, k: KRaftState) -> KRaftState:
        """The interner's object equal to the KRaft part ``k``, found by a key of its fields
        rather than by hashing the whole part: its flat fields (tuples of a few ints) as
        they are, its nested ones (the metadata log, the base image, the tables of broker
        epochs) by the address of their interner objects.  A step builds its successor's
        part from the fields of the part of the state expanded (``_source``) and changes
        one or two, so the nested ones are mostly found by identity there; the whole part
        is hashed and compared only the first time it is met.  The fields are read
        untyped (``raw``): the compiled model holds a value of a fixed-length tuple type
        (the base image) unboxed, and boxes a new tuple when it is used as an object, so
        its address would not be the interner's."""
        source = self._source.get(0)
        if source is not None and k is source[0]:
            return k
        interner = self._interner
        if interner.by_id.get(id(k)) is k:
            return k
        raw: Any = k
        batches, base, fetch, alter = raw[0], raw[1], raw[5], raw[6]
        if source is None:
            batches, base = interner.canon(batches), interner.canon(base)
            fetch, alter = interner.canon(fetch), interner.canon(alter)
        else:
            nested = source[1]
            if batches is not nested[0]:
                batches = interner.canon(batches)
            if base is not nested[1]:
                base = interner.canon(base)
            if fetch is not nested[2]:
                fetch = interner.canon(fetch)
            if alter is not nested[3]:
                alter = interner.canon(alter)
        key = (id(batches), id(base), k.applied, k.partition_epoch, k.alter_epoch, id(fetch),
               id(alter), k.broker_epoch, k.shutdown_offset)
        found = self._kraft_by_key.get(key)
        if found is None:
            part: KRaftState = tuple.__new__(KRaftState, [
                batches, base, k.applied, k.partition_epoch, k.alter_epoch, fetch, alter,
                k.broker_epoch, k.shutdown_offset])
            found = remember(self._kraft_by_key, key, interner.canon(part))
        return found

    def published_part(self, k: KRaftState, upto: int) -> object:
        """The partition's registration (leader, leader epoch, partition epoch, ISR, ELR,
        last-known ELR, recovery state) in the image a broker publishes after ``base`` and
        the first ``upto`` batches of the KRaft part ``k`` (``kraft_state.replayed``), kept
        per interned part (``_image``); untyped: the interner's tuple, not a copy.  The
        KRaft invariants read it."""
        raw: Any = self._image_object(k, upto)
        part: object = raw[0]
        return part

    def _image(self, k: KRaftState, upto: int) -> Image:
        """The image of ``base`` and the first ``upto`` batches of ``k`` (``replayed``),
        kept per interned KRaft part and ``upto`` (``_image_object``)."""
        return cast(Image, self._image_object(k, upto))

    def _image_object(self, k: KRaftState, upto: int) -> object:
        """``_image`` as the interner's object (untyped: the compiled model holds a value of
        the image's fixed-length tuple type unboxed, and would box a new tuple for a
        memoised method's key), kept per interned KRaft part and ``upto`` (``_images``),
        and for the state ``next_states`` expands and those expanded before it with the
        same part in ``_source`` and ``_sources``."""
        source = self._source.get(0)
        if source is None or k is not source[0]:
            source = self._sources.get(id(k))
        if source is not None and k is source[0] and upto < len(source[2]):
            images = source[2]
            known = images[upto]
            if known is None:
                known = images[upto] = self._image_of(k, upto)
            return known
        return self._image_of(self._canonical_kraft(k), upto)

    def _image_of(self, k: KRaftState, upto: int) -> object:
        """``_image_object`` of the interned KRaft part ``k``."""
        key = id(k) << 8 | upto
        found = self._images.get(key)
        if found is not None and found[0] is k:
            return found[1]
        image: object = replayed(k.base, k.batches[:upto], self.n)
        image = self._interner.canon(image)
        remember(self._images, key, (k, image))
        return image

    def _kraft(self, state: State) -> KRaftState:
        """The KRaft part of ``state``."""
        return cast(KRaftState, state.controller.kraft)

    def _controller_view(self, k: KRaftState) -> Image:
        """The active controller's plain image of ``k`` (``controller_image``), kept for the
        last ``k`` asked: the controller's steps from one state each ask for it."""
        if k is not self._view_of:
            self._view = self._image(k, len(k.batches))
            self._view_of = k
        return cast(Image, self._view)

    def _with_kraft(self, state: State, k: KRaftState) -> State:
        """``state`` with KRaft part ``k`` (compacted: ``kraft_state.compacted``) and the
        controller fields mirroring the active controller's ``PartitionRegistration``."""
        old = state.controller
        ctrl = self._kraft_controller(old.controller_epoch, old.assigned_replicas,
                                      old.isr_change_set, k)
        return kafka_state(ctrl, state.brokers, state.channels, state.ghost)

    def _with_part(self, ctrl: ZkPartitionState, k: KRaftState) -> ZkPartitionState:
        """``ctrl`` with KRaft part ``k`` (``_with_kraft``'s controller tuple)."""
        return self._kraft_controller(ctrl.controller_epoch, ctrl.assigned_replicas,
                                      ctrl.isr_change_set, k)

    def _kraft_controller(self, controller_epoch: int, assigned_replicas: tuple[int, ...],
                          isr_change_set: int, k: KRaftState) -> ZkPartitionState:
        """``_kraft_controller_computed``, cached (``memo.IdCache2``) when the two ints fit
        its small int (always, within the parameters' bounds)."""
        small = controller_epoch << 12 | isr_change_set
        if controller_epoch >> 7 or isr_change_set >> 12:
            return self._kraft_controller_computed(controller_epoch, assigned_replicas,
                                                   isr_change_set, k)
        k = self._canonical_kraft(k)
        cache = self._cache_kraft_controller
        found = cache.find(k, assigned_replicas, small)
        if found is MISSING:
            found = cache.keep(k, assigned_replicas, small, self._kraft_controller_computed(
                controller_epoch, assigned_replicas, isr_change_set, k))
        return cast(ZkPartitionState, found)

    def _kraft_controller_computed(self, controller_epoch: int,
                                   assigned_replicas: tuple[int, ...], isr_change_set: int,
                                   k: KRaftState) -> ZkPartitionState:
        """``_with_kraft``'s controller tuple (memoised on the fields it keeps and ``k``, not
        on the KRaft part it replaces)."""
        k = self._canonical_kraft(compacted(k, self.n))
        leader, le, _, isr, elr, lke, _ = self._image(k, len(k.batches))[0]
        return ZkPartitionState(controller_epoch, leader, le, isr, assigned_replicas,
                                isr_change_set, elr, lke, k)

    def _a_handle_commit(self, state: State, out: Out) -> None:
        """``HandleCommit(b)`` / ``HandleCommit(b,j)``: live broker ``b`` publishes the next
        ``j`` committed batches of the metadata log as one delta (the module docstring)."""
        k = self._kraft(state)
        total = len(k.batches)
        for b in range(self.n):
            a = k.applied[b]
            if a < 0 or a >= total or not state.brokers[b].alive:
                continue
            for j in range(a + 1, total + 1):
                out.append((handle_commit(b, j - a), self._published(state, b, j)))

    def _published(self, state: State, b: int, upto: int, fresh: bool = False) -> State:
        """``state`` once broker ``b`` published the batches up to ``upto`` as one delta
        (``fresh``: its first publication after a start, a delta from the empty image)."""
        br = state.brokers[b]
        ctrl = state.controller
        # the broker below the count of batches (brokers <= 6): the fields never overlap
        small = (upto << 4 | b) << 1 | int(fresh)
        found: object
        if upto >> 14:
            found = self._interner.canon_result(
                self._delta_applied(ctrl, br, b, upto, fresh))
        else:
            cache = self._cache_published
            found = cache.find(ctrl, br, small)
            if found is MISSING:
                found = cache.keep(ctrl, br, small,
                                   self._delta_applied(ctrl, br, b, upto, fresh))
        raw: Any = found  # untyped: its items are the interner's objects
        newbr: BrokerPartition = raw[0]
        brokers = state.brokers
        s = kafka_state(raw[1], (*brokers[:b], newbr, *brokers[b + 1:]), state.channels,
                        state.ghost)
        if newbr.leader == b and (br.leader != b or newbr.leader_epoch != br.leader_epoch):
            s = self._note_epoch_leader(s, newbr.leader_epoch, b)
        if br.leader == b and newbr.leader != b:
            s = self._drop_pending(s, b)
        if newbr.leader == b:
            s = self._after_leader_step(s, b)
        return s

    def _delta_applied(self, ctrl: ZkPartitionState, br: BrokerPartition, b: int, upto: int,
                       fresh: bool) -> tuple[BrokerPartition, ZkPartitionState]:
        """``_published``'s broker and controller tuples, from the controller tuple (its
        KRaft part) and the broker's alone (kept by ``_published`` per pair of objects)."""
        k = cast(KRaftState, ctrl.kraft)
        before = None if fresh else self._image_object(k, k.applied[b])
        after = self._image_object(k, upto)
        ineligible = self._hw_ineligible(k, cast(Image, after), b) if self.eligible_hw else 0
        raw: Any = self._delta_of(br, b, before, after, k.partition_epoch[b],
                                  k.fetch_epochs[b], ineligible)  # untyped: the interner's
        newbr: BrokerPartition = raw[0]
        pe: int = raw[1]
        row: tuple[int, ...] = raw[2]
        dropped = newbr.alter_partition == ALTER_NONE and br.alter_partition != ALTER_NONE
        return newbr, self._publisher_controller(ctrl, b, upto, pe, row, dropped)

    def _delta_of(self, br: BrokerPartition, b: int, before: object, after: object, pe: int,
                  row: tuple[int, ...], ineligible: int) -> object:
        """``_apply_delta``'s result, found first by the addresses of its object arguments
        (the broker tuple, the two images, the fetch epochs: ``_deltas``) and the ints,
        without building the memoised wrapper's tuple of keys; else through the wrapper."""
        if ineligible >> 8 or b >> 4:  # the ints' fields would overlap (brokers <= 6)
            return self._apply_delta(br, b, cast("Image | None", before),
                                     cast("Image | None", after), pe, row, ineligible)
        small = (pe << 8 | ineligible) << 4 | b
        key = (((id(br) << 48 | id(before)) << 48 | id(after)) << 48 | id(row)) << 24 | (
            small & 0xFFFFFF)
        entry = self._deltas.get(key)
        if (entry is not None and entry[0] is br and entry[1] is before
                and entry[2] is after and entry[3] is row and entry[4] == small):
            return entry[5]
        result: object = self._apply_delta(br, b, cast("Image | None", before),
                                           cast("Image | None", after), pe, row, ineligible)
        remember(self._deltas, key, (br, before, after, row, small, result))
        return result

    def _publisher_controller(self, ctrl: ZkPartitionState, b: int, upto: int, pe: int,
                              row: tuple[int, ...], dropped: bool) -> ZkPartitionState:
        """``_delta_applied``'s controller tuple: broker ``b`` published up to ``upto`` with
        partition epoch ``pe`` and fetch epochs ``row`` (``dropped``: its pending
        AlterPartition dropped); kept by the addresses of ``ctrl`` and ``row`` and the ints
        (``_publishers``)."""
        if upto >> 8 or b >> 4:  # the ints' fields would overlap
            return self._publisher_controller_computed(ctrl, b, upto, pe, row, dropped)
        small = ((pe << 1 | int(dropped)) << 8 | upto) << 4 | b
        key = (id(ctrl) << 48 | id(row)) << 24 | (small & 0xFFFFFF)
        entry = self._publishers.get(key)
        if (entry is not None and entry[0] is ctrl and entry[1] is row
                and entry[2] == small):
            return cast(ZkPartitionState, entry[3])
        found = self._publisher_controller_computed(ctrl, b, upto, pe, row, dropped)
        remember(self._publishers, key, (ctrl, row, small, found))
        return found

    def _publisher_controller_computed(self, ctrl: ZkPartitionState, b: int, upto: int,
                                       pe: int, row: tuple[int, ...], dropped: bool,
                                       ) -> ZkPartitionState:
        """``_publisher_controller`` computed."""
        k = cast(KRaftState, ctrl.kraft)
        k = kraft_state(
            batches=k.batches, base=k.base, applied=put(k.applied, b, upto),
            partition_epoch=put(k.partition_epoch, b, pe), alter_epoch=k.alter_epoch,
            fetch_epochs=put(k.fetch_epochs, b, row),
            alter_isr_epochs=put(k.alter_isr_epochs, b, ()) if dropped else k.alter_isr_epochs,
            broker_epoch=k.broker_epoch, shutdown_offset=k.shutdown_offset)
        return self._kraft_controller(ctrl.controller_epoch, ctrl.assigned_replicas,
                                      ctrl.isr_change_set, k)

    def _hw_ineligible(self, k: KRaftState, image: Image, b: int) -> int:
        """The followers of leader ``b`` that ``Partition.isReplicaIsrEligible`` (3.6) turns
        down in ``image``, as a mask (KAFKA-15021's HW rule, ``eligible_hw``): not
        registered, fenced, or (``kip903``) the broker epoch ``b`` recorded from the
        follower's last fetch (``Replica.brokerEpoch``, ``fetch_epochs``; none: -1) is not
        the image's (``isBrokerEpochIsrEligible``).  A broker that crashed stays eligible
        until it is fenced, as in Kafka.  With ``fence_ineligible=false`` none."""
        if not self.cfg.fence_ineligible:
            return 0
        row = k.fetch_epochs[b]
        mask = 0
        for f in range(self.n):
            epoch, fenced = image[1][f]
            stored = row[f] if row else -1
            if f != b and (epoch < 0 or fenced or (self.cfg.kip903 and stored != epoch)):
                mask |= 1 << f
        return mask

    @memoised
    def _apply_delta(self, br: BrokerPartition, b: int, before: Image | None,
                     after: Image | None, pe: int, row: tuple[int, ...], ineligible: int = 0,
                     ) -> tuple[BrokerPartition, int, tuple[int, ...]]:
        """Broker ``b`` holding ``br`` (partition epoch ``pe``, KIP-903 fetch epochs ``row``)
        after its publisher applied the delta from image ``before`` to ``after``: its new
        tuple, partition epoch and fetch epochs (``before`` ``None``: the empty image;
        ``ineligible``: the followers ``after`` makes not ISR eligible, with
        ``eligible_hw``; memoised; ``after`` is never ``None``: typed so that the compiled
        model passes the image object itself, the key of its memoised result)."""
        # ``after`` not narrowed to ``Image`` here: the compiled model would box a new tuple
        change: Any = self._local_change(before, after, b)  # untyped: a kept tuple
        kind: int = change[0]
        if kind == UNCHANGED:
            return br, pe, row
        reg: PartitionRegistration = change[1]
        if kind == LEADS:
            return self._make_leader(br, b, reg, pe, row, ineligible)
        if kind == FOLLOWS:
            if reg.partition_epoch - 1 < pe:
                return br, pe, row  # makeFollower: an older partition epoch is ignored
            leader = reg.leader
            moved = leader != br.leader or reg.leader_epoch != br.leader_epoch
            newbr = with_fields(br, leader=leader, leader_epoch=reg.leader_epoch,
                                in_sync_replica_ids=0, remotes=(), pending_isr=0,
                                alter_partition=ALTER_NONE)
            if moved:
                newbr = with_fields(newbr, truncating=int(leader != NONE and bool(br.log)),
                                       fetch_in_flight=NO_FETCH)
            return newbr, reg.partition_epoch - 1, ()
        return br, pe, row

    def _local_change(self, before: object, after: object, b: int) -> object:
        """Broker ``b``'s part of the delta from image ``before`` (``None``: the empty
        image) to ``after`` (``TopicDelta.localChanges``: ``local_changes``), as a pair:
        ``LEADS`` or ``FOLLOWS`` and the partition's new registration, or ``UNCHANGED``
        and ``None``; kept by the images' addresses (``_changes``)."""
        key = (id(before) << 48 | id(after)) << 8 | (b & 0xFF)
        entry = self._changes.get(key)
        if entry is not None and entry[0] is before and entry[1] is after and entry[2] == b:
            return entry[3]
        n = self.n
        old = (MetadataImage() if before is None
               else core_image(cast(Image, before), n))
        changes = local_changes(MetadataUpdate(old, core_image(cast(Image, after), n)), b)
        change: tuple[int, PartitionRegistration | None] = (
            (LEADS, changes.leaders[0][1]) if changes.leaders
            else (FOLLOWS, changes.followers[0][1]) if changes.followers
            else (UNCHANGED, None))
        remember(self._changes, key, (before, after, b, change))
        return change

    def _make_leader(self, br: BrokerPartition, b: int, reg: PartitionRegistration, pe: int,
                     row: tuple[int, ...], ineligible: int = 0,
                     ) -> tuple[BrokerPartition, int, tuple[int, ...]]:
        """``applyLocalLeadersDelta``: ``Partition.makeLeader`` (``make_leader_kraft``) on
        the broker's committed partition state; its ``maybeIncrementLeaderHW`` leaves out
        the caught-up replicas in ``ineligible`` (KAFKA-15021, ``eligible_hw``)."""
        committed = with_fields(br, pending_isr=0, alter_partition=ALTER_NONE)
        p = replace(self.broker_partition(committed, b), zk_version=pe + 1)
        if (reg.partition_epoch - 1 == pe and br.leader == b
                and self.cfg.make_leader_equal_epoch == "skip"):
            return br, pe, row  # the candidate fix: the leader already has this epoch
        newp, flags = make_leader_kraft(p, reg, self.sat, self.reset_on_epoch).unwrap()
        if flags.skipped:
            return br, pe, row
        # maybeIncrementLeaderHW with KAFKA-4485's caught-up replicas (kafka_4485), which
        # make_leader_kraft's ISR-only raise leaves out: raised again from the old HW;
        # 3.6+ (eligible_hw) waits only for the ISR-eligible ones
        newp = raise_leader_hw(replace(newp, high_watermark=p.high_watermark), self.sat,
                               self.hw_lag, frozenset(members(ineligible))).partition
        # the ISR the controller registered (makeLeader installs a committed state)
        base = with_fields(committed, in_sync_replica_ids=mask_of(reg.isr)
                                  if br.leader == b else 0, truncating=0)
        newbr = with_fields(self._with_partition(base, newp),
            in_sync_replica_ids=mask_of(newp.isr), truncating=0, fetch_in_flight=NO_FETCH)
        if (flags.is_new_leader or not row
                or (self.reset_on_epoch and flags.is_new_leader_epoch)):
            row = (-1,) * self.n
        return newbr, reg.partition_epoch - 1, row

    def _leader_view(self, state: State, b: int) -> Image:
        """Broker ``b``'s published image."""
        k = self._kraft(state)
        return self._image(k, max(0, k.applied[b]))
