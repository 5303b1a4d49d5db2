"""A KRaft broker's side of its lifecycle and of KIP-903 (``controller=kraft``).

``BrokerLifecycleManager`` registers each incarnation (the controller's side,
``QuorumController.registerBroker``, is ``isrlab.spec.kafka.quorum_controller``); what the
broker keeps of it here is the broker epoch its running incarnation registered with, which
its fetches carry (KIP-903, Kafka 3.5+: ``FetchRequest.ReplicaState.ReplicaEpoch``), and
which the leader records per follower (``Replica.brokerEpoch``) and sends in
AlterPartition's ``NewIsrWithEpochs``.  The leader's own test before it proposes a
follower is ``Partition.isReplicaIsrEligible`` (KIP-841, 3.3+: the follower is unfenced and
not shutting down in the leader's metadata image; KIP-903: its fetch's broker epoch is the
image's).

``ReplaceDisk(b)`` (the ``empty_disk`` fault): a broker that is down gets an empty log
directory, as an operator replacing a failed disk gives it: no log, no HW checkpoint, no
clean-shutdown file; it comes back under its old broker id (KAFKA-14139).

Shortcuts: a broker's own partition-level KRaft fields (its partition epoch, the epochs of
its proposal) are cleared when it goes down, and every start is a new incarnation.
"""

from __future__ import annotations

from typing import cast

from isrlab.core.fencing import FetchDecision
from isrlab.core.partition import raise_leader_hw
from isrlab.spec.kafka.config import Out, State
from isrlab.spec.kafka.kraft_state import KRaftState, kraft_state, put
from isrlab.spec.kafka.labels import broker_step
from isrlab.spec.kafka.memo import MISSING, SMALL_BITS, memoised
from isrlab.spec.kafka.metadata_loader import MetadataLoader
from isrlab.spec.kafka.state import (
    ALTER_ACCEPTED,
    ALTER_NONE,
    ALTER_SENT,
    BrokerPartition,
    ZkPartitionState,
    kafka_state,
    members,
    with_fields,
)

UPKEEP_DOWN, UPKEEP_PROPOSED, UPKEEP_ACCEPTED, UPKEEP_ANSWERED = 1, 2, 3, 4
"""A broker's event in ``BrokerLifecycleManager._upkeep``'s code: it went down, it sent an
AlterPartition proposal, it handled an accepted answer, or another answer."""

HW_EVENTS = frozenset({"Produce", "Fetch", "FetchRequest", "FencedFetch",
                       "AlterPartitionResponse"})
"""The steps whose leader side runs ``Partition.maybeIncrementLeaderHW`` (``_eligible_hw``)."""


class BrokerLifecycleManager(MetadataLoader):
    """KIP-903's broker epochs on the broker side, ISR eligibility, and a broker going down."""

    def _isr_eligible(self, state: State, lid: int, f: int) -> bool:
        """``Partition.isReplicaIsrEligible`` (3.5+): in leader ``lid``'s published image
        ``f`` is registered and unfenced, and (``kip903``) the broker epoch of ``f``'s fetch,
        its running incarnation's, is the image's.  With ``fence_ineligible=false`` (3.2 and
        earlier leaders) any follower.  (KIP-704: ``makeLeader`` marks a RECOVERING
        partition RECOVERED at once, and its next AlterPartition tells the controller.)"""
        k = self._kraft(state)
        if not self.cfg.fence_ineligible:
            return True
        epoch, fenced = self._image(k, max(0, k.applied[lid]))[1][f]
        if epoch < 0 or fenced:
            return False
        return not self.cfg.kip903 or k.broker_epoch[f] == epoch

    def _eligible_hw(self, before: State, label: str, after: State) -> State:
        """KAFKA-15021's HW rule (``eligible_hw``: ``kraft_epoch_bump=leader-change``, 3.6+)
        after a step ``label`` from ``before``: a step whose leader side runs
        ``maybeIncrementLeaderHW`` (a produce, a fetch, an AlterPartition answer) and
        changed leader ``b``'s partition raises its HW again without the caught-up replicas
        outside the ISR that are not ISR eligible in ``b``'s image (``_hw_ineligible``:
        fenced, a stale broker epoch).  The step's own raise counted them, so this raise is
        Kafka's (the HW over fewer replicas is at least the one over more); other steps
        leave the HW, as Kafka's event-driven HW does (a published delta's ``makeLeader``
        applies the rule itself: ``_make_leader``).  Shortcut: a fetch that changes
        nothing on the leader does not recompute the HW."""
        raises = self._raises_hw.get(label)
        if raises is None:
            raises = self._raises_hw[label] = label[:label.find("(")] in HW_EVENTS
        if not raises:
            return after
        for b in range(self.n):
            br = after.brokers[b]
            old = before.brokers[b]
            if br is old or br == old or not self._is_acting_leader(after, b):
                continue
            k = self._kraft(after)
            ineligible = self._hw_ineligible(
                k, self._image(k, max(0, k.applied[b])), b)
            if not ineligible:
                continue
            raised = self._hw_without(br, b, ineligible)
            if raised is not None:
                after = self._after_leader_step(self._set_broker(after, b, raised), b)
        return after

    @memoised
    def _hw_without(self, br: BrokerPartition, b: int, ineligible: int) -> BrokerPartition | None:
        """Leader ``b`` holding ``br`` with its HW raised over all but the caught-up replicas
        in ``ineligible`` outside its ISR (``_eligible_hw``), ``None`` when it stays."""
        p = self.broker_partition(br, b)
        raised = raise_leader_hw(p, self.sat, self.hw_lag, frozenset(members(ineligible)))
        if not raised.incremented:
            return None
        newbr = self._with_partition(br, raised.partition)
        return newbr if newbr != br else None

    def _fetch(self, state: State, f: int, lid: int,
               decision: FetchDecision | None = None) -> State | None:
        """A fetch (``isrlab.spec.kafka.fetcher``), and with ``kip903`` the leader records the
        broker epoch it carries (``Replica.updateFetchStateOrThrow``'s ``brokerEpoch``)."""
        s = super()._fetch(state, f, lid, decision)
        if s is None or not self.cfg.kip903:
            return s
        k = self._kraft(s)
        row = k.fetch_epochs[lid]
        if not row or row[f] == k.broker_epoch[f]:
            return s
        ctrl = s.controller
        small = lid << 8 | f
        cache = self._cache_fetch_epoch
        found = cache.find(ctrl, small)
        if found is MISSING:
            found = cache.keep(ctrl, small, self._with_part(ctrl, kraft_state(
                batches=k.batches, base=k.base, applied=k.applied,
                partition_epoch=k.partition_epoch, alter_epoch=k.alter_epoch,
                fetch_epochs=put(k.fetch_epochs, lid, put(row, f, k.broker_epoch[f])),
                alter_isr_epochs=k.alter_isr_epochs, broker_epoch=k.broker_epoch,
                shutdown_offset=k.shutdown_offset)))
        return kafka_state(cast(ZkPartitionState, found), s.brokers, s.channels, s.ghost)

    def _upkeep(self, before: State, after: State) -> State:
        """The KRaft fields a reused broker step changes implicitly: a broker that went down
        forgets its partition epoch, proposal and fetch records and has no published image
        until it restarts; a new AlterPartition proposal carries the proposer's partition
        epoch and (``kip903``) the broker epochs it recorded (its own for itself, -1 for
        members it has no fetch from); an accepted answer, once handled, gives the leader
        the partition epoch the controller returned.  The new controller tuple is kept per
        controller tuple and the brokers' events (``_upkept``'s code)."""
        n = self.n
        code = 0
        for b in range(n):
            old, new = before.brokers[b], after.brokers[b]
            if old is new:
                continue
            if old.alive and not new.alive:
                event = UPKEEP_DOWN
            elif new.alter_partition == ALTER_SENT and old.alter_partition != ALTER_SENT:
                event = UPKEEP_PROPOSED | new.pending_isr << 3
            elif old.alter_partition != ALTER_NONE and new.alter_partition == ALTER_NONE:
                event = (UPKEEP_ACCEPTED if old.alter_partition == ALTER_ACCEPTED
                         else UPKEEP_ANSWERED)
            else:
                continue
            code |= event << b * (n + 3)
        if not code:
            return after
        ctrl = after.controller
        if code >> SMALL_BITS:
            upkept = self._upkept(ctrl, code)
        else:
            cache = self._cache_upkept
            found = cache.find(ctrl, code)
            if found is MISSING:
                found = cache.keep(ctrl, code, self._upkept(ctrl, code))
            upkept = cast(ZkPartitionState, found)
        return kafka_state(upkept, after.brokers, after.channels, after.ghost)

    def _upkept(self, ctrl: ZkPartitionState, code: int) -> ZkPartitionState:
        """``_upkeep``'s controller tuple: ``ctrl`` after each broker's event in ``code``
        (``n + 3`` bits per broker: ``UPKEEP_*`` and, for a proposal, its ISR's mask)."""
        n = self.n
        k = cast(KRaftState, ctrl.kraft)
        for b in range(n):
            event = code >> b * (n + 3) & ((1 << (n + 3)) - 1)
            kind = event & 7
            if kind == UPKEEP_DOWN:
                k = self._went_down(k, b)
            elif kind == UPKEEP_PROPOSED:
                k = self._proposed(k, b, event >> 3)
            elif kind:
                k = kraft_state(
                    batches=k.batches, base=k.base, applied=k.applied,
                    partition_epoch=put(k.partition_epoch, b, k.alter_epoch[b])
                    if kind == UPKEEP_ACCEPTED else k.partition_epoch,
                    alter_epoch=k.alter_epoch, fetch_epochs=k.fetch_epochs,
                    alter_isr_epochs=put(k.alter_isr_epochs, b, ()),
                    broker_epoch=k.broker_epoch, shutdown_offset=k.shutdown_offset)
        return self._with_part(ctrl, k)

    def _went_down(self, k: KRaftState, b: int) -> KRaftState:
        return kraft_state(
            batches=k.batches, base=k.base, applied=put(k.applied, b, -1),
            partition_epoch=put(k.partition_epoch, b, 0), alter_epoch=put(k.alter_epoch, b, 0),
            fetch_epochs=put(k.fetch_epochs, b, ()),
            alter_isr_epochs=put(k.alter_isr_epochs, b, ()),
            broker_epoch=put(k.broker_epoch, b, -1),
            shutdown_offset=put(k.shutdown_offset, b, -1) if k.shutdown_offset else ())

    def _proposed(self, k: KRaftState, b: int, isr: int) -> KRaftState:
        row = k.fetch_epochs[b] or (-1,) * self.n
        epochs = [-1] * self.n
        if self.cfg.kip903:
            for m in members(isr):
                epochs[m] = k.broker_epoch[b] if m == b else row[m]
        return kraft_state(
            batches=k.batches, base=k.base, applied=k.applied,
            partition_epoch=k.partition_epoch,
            alter_epoch=put(k.alter_epoch, b, k.partition_epoch[b]),
            fetch_epochs=k.fetch_epochs, alter_isr_epochs=put(k.alter_isr_epochs, b, tuple(epochs)),
            broker_epoch=k.broker_epoch, shutdown_offset=k.shutdown_offset)

    def _a_replace_disk(self, state: State, out: Out) -> None:
        """``ReplaceDisk(b)`` (``empty_disk``, a fault): broker ``b``, down, gets an empty log
        directory (no log, HW checkpoint or clean-shutdown file)."""
        for b in range(self.n):
            br = state.brokers[b]
            empty = with_fields(br, log=(), high_watermark=0, hw_checkpoint=0, flushed=0,
                                unclean_shutdown=int(self.cfg.elr))
            if br.alive or empty == br:
                continue
            out.append((broker_step("ReplaceDisk", b), self._set_broker(state, b, empty)))
