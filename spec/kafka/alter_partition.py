"""KIP-497's AlterPartition round trip, both sides (``AlterPartitionManager`` and the controller).

With ``isr_changes=alter-partition`` (Kafka 2.7+, the default) a leader proposes ISR
changes instead of writing ZooKeeper: ``Fetch`` (an expansion) and ``ShrinkIsr`` propose
(one proposal in flight), ``AlterPartition`` is the controller's answer and
``AlterPartitionResponse`` the leader's commit; the HW counts the ISR of ``hw_isr``
(Kafka's maximal ISR; ``committed`` is the fault KIP-497 rejected; the bridge,
``isrlab.spec.kafka.partition``, applies it when it builds a leader's ``Partition``).
Shortcut: the partition epoch is not state (see ``_a_alter_partition``).
"""

from __future__ import annotations

from dataclasses import replace
from typing import cast

from isrlab.core.alter_partition import (
    AlterPartitionRequest,
    AlterPartitionResponse,
    ControllerView,
    alter_partition,
    handle_alter_partition_response,
    hw_isr,
    prepare_isr_expand,
    prepare_isr_shrink,
)
from isrlab.core.errors import Errors
from isrlab.core.isr import maybe_shrink_isr
from isrlab.core.partition import raise_leader_hw
from isrlab.core.state import LeaderAndIsr, Partition
from isrlab.spec.kafka import elr as kip966
from isrlab.spec.kafka.config import KafkaConfig, Out, State
from isrlab.spec.kafka.controller import KafkaController
from isrlab.spec.kafka.labels import broker_step
from isrlab.spec.kafka.memo import MISSING, IdCache, memoised
from isrlab.spec.kafka.state import (
    ALTER_ACCEPTED,
    ALTER_FENCED,
    ALTER_INELIGIBLE,
    ALTER_NEW_EPOCH,
    ALTER_NONE,
    ALTER_SENT,
    BrokerPartition,
    ZkPartitionState,
    kafka_state,
    mask_of,
    members,
    with_fields,
)

ALTER_TEXT = {ALTER_SENT: "sent", ALTER_ACCEPTED: "accepted",
              ALTER_FENCED: "FENCED_LEADER_EPOCH", ALTER_INELIGIBLE: "INELIGIBLE_REPLICA",
              ALTER_NEW_EPOCH: "accepted, leader epoch bumped"}
"""How a trace shows a leader's AlterPartition round trip."""


class AlterPartitionManager(KafkaController):
    """The leader's proposals, the controller's ``alterPartition`` and the leader's commit."""

    def __init__(self, config: KafkaConfig) -> None:
        super().__init__(config)
        self._cache_alter_response_handled = IdCache(self._interner)
        """``_alter_response_handled``'s cache."""

    def _proposed_expand(self, br: BrokerPartition, lid: int, leader: Partition,
                         fetched: Partition, f: int) -> BrokerPartition:
        """``isr_changes=alter-partition`` (KIP-497, Kafka 2.7+): follower ``f`` may join
        the ISR, so the leader proposes it (``prepare_isr_expand``: nothing while a change
        is in flight) instead of writing ZooKeeper; the fetch counts and the HW rises over
        the ISR of the ``hw_isr`` rule of the new ISR state (the maximal ISR holds it at
        the joiner's LEO, the committed one does not): leader ``lid``'s new tuple."""
        committed = replace(leader, isr=frozenset(members(br.in_sync_replica_ids)))
        proposal = prepare_isr_expand(committed, self._isr_state(br), f).unwrap()
        view = replace(leader, remotes=fetched.remotes,
                       isr=hw_isr(proposal.state, self.hw_rule))
        raised = raise_leader_hw(view, self.sat, self.hw_lag).partition
        newbr = self._with_partition(br, raised)
        if proposal.request is not None:
            newbr = with_fields(newbr, pending_isr=mask_of(proposal.request.new_isr),
                                   alter_partition=ALTER_SENT)
        return newbr

    def _propose_shrink(self, state: State, b: int, out: Out) -> None:
        """``ShrinkIsr(b)`` with ``isr_changes=alter-partition`` (Kafka 2.7+): the
        isr-expiration task finds the ISR followers out of sync (``maybe_shrink_isr``'s
        rule) and proposes the ISR without them (``prepare_isr_shrink``: nothing while a
        change is in flight), whatever its epoch: the controller answers.  The committed
        ISR and the HW stay until then (a pending shrink's maximal ISR is the committed
        one)."""
        newbr = self._shrink_proposal(state.brokers[b], b)
        if newbr is not None:
            out.append((broker_step("ShrinkIsr", b), self._set_broker(state, b, newbr)))

    def _shrink_proposal(self, br: BrokerPartition, b: int) -> BrokerPartition | None:
        """``_shrink_proposal_computed``, cached (``memo.IdCache``)."""
        small = b
        cache = self._cache_shrink_proposal
        found = cache.find(br, small)
        if found is MISSING:
            found = cache.keep(br, small, self._shrink_proposal_computed(br, b))
        return cast(BrokerPartition | None, found)

    def _shrink_proposal_computed(self, br: BrokerPartition, b: int) -> BrokerPartition | None:
        """Leader ``b`` holding ``br`` once it proposed its ISR shrink, ``None`` when it
        proposes nothing (``_propose_shrink``; memoised)."""
        p = self.broker_partition(br, b)
        update = maybe_shrink_isr(p, self.sat, self.cfg.lag_ticks, self.cfg.kafka_4485,
                                  self.cfg.kafka_7152).unwrap()
        if not update.isr_changed:
            return None
        proposal = prepare_isr_shrink(p, self._isr_state(br),
                                      p.isr - update.partition.isr).unwrap()
        if proposal.request is None:
            return None
        return with_fields(br, pending_isr=mask_of(proposal.request.new_isr),
                           alter_partition=ALTER_SENT)

    def _a_alter_partition(self, state: State, out: Out) -> None:
        """``AlterPartition(b)``: the controller handles leader ``b``'s proposal
        (``isrlab.core.alter_partition.alter_partition``: ``KafkaController.processAlterIsr``
        in ZooKeeper mode from 2.7, ``ReplicationControlManager.alterPartition`` in KRaft)
        and sends its answer back.  An accepted ISR is written with the same leader epoch
        (the next partition epoch), with ``elr`` the ELR follows it, and with ``metadata``
        every broker is sent UpdateMetadata.  Refused: FENCED_LEADER_EPOCH (``b``'s epoch
        is stale), and with ``fence_ineligible`` (KIP-841, 3.3+) INELIGIBLE_REPLICA for a
        proposed ISR holding a broker that is down.  Shortcut: the partition epoch
        (``zkVersion``) is not state; the leader's version is current exactly when its
        committed ISR is ZooKeeper's in its own epoch, since within a leader epoch only the
        leader's accepted proposals change the ISR and it has one in flight at a time
        (every controller-side ISR change bumps the leader epoch in this model)."""
        for b in range(self.n):
            br = state.brokers[b]
            if br.alter_partition != ALTER_SENT or not br.alive:
                continue
            ctrl = state.controller
            answer = self._alter_answer(ctrl, b, br.leader_epoch, br.in_sync_replica_ids,
                                        br.pending_isr, self._alive_mask(state))
            s = self._set_broker(state, b, with_fields(br, alter_partition=answer))
            if answer == ALTER_ACCEPTED and br.pending_isr != ctrl.isr:
                s = self._commit_alter_partition(s, br.pending_isr)
            out.append((broker_step("AlterPartition", b), s))

    @memoised
    def _alter_answer(self, ctrl: ZkPartitionState, b: int, leader_epoch: int,
                      committed_isr: int, pending_isr: int, alive: int) -> int:
        """The controller's answer (``ALTER_*``) to leader ``b``'s proposal ``pending_isr``
        made in ``leader_epoch`` over its committed ISR, with the brokers of the mask
        ``alive`` alive (``alter_partition``; memoised)."""
        current = LeaderAndIsr(ctrl.leader, ctrl.leader_epoch, members(ctrl.isr), 1)
        version = int(committed_isr == ctrl.isr)
        request = AlterPartitionRequest(b, 0, leader_epoch, members(pending_isr), version)
        view = ControllerView(tuple((i, 0) for i in members(alive)),
                              frozenset(members(self.all_mask & ~alive)),
                              fence_ineligible=self.cfg.fence_ineligible)
        response = alter_partition(current, ctrl.assigned_replicas, request, view).unwrap()
        if response.error is Errors.NONE:
            return ALTER_ACCEPTED
        if response.error is Errors.INELIGIBLE_REPLICA:
            return ALTER_INELIGIBLE
        return ALTER_FENCED

    def _commit_alter_partition(self, state: State, isr: int) -> State:
        """The controller's write of an accepted ISR: ZooKeeper's ISR (same leader epoch),
        the ELR with ``elr``, UpdateMetadata to every broker with ``metadata``."""
        ctrl = with_fields(state.controller, isr=isr)
        if self.cfg.elr:
            elr, lke = kip966.populate(state.controller, isr, self.cfg.min_isr)
            ctrl = with_fields(ctrl, elr=elr, last_known_elr=lke)
        msgs = state.channels
        if self.cfg.metadata:
            msgs = self._enqueue(state, self._update_metadata_for_all(
                ctrl, ctrl.leader, ctrl.leader_epoch, isr, ctrl.assigned_replicas))
        return kafka_state(ctrl, state.brokers, msgs, state.ghost)

    def _a_alter_partition_response(self, state: State, out: Out) -> None:
        """``AlterPartitionResponse(b)``: leader ``b`` handles the controller's answer
        (``handle_alter_partition_response``): accepted, the proposed ISR is committed and
        the HW may rise (Kafka 3.0+, KAFKA-13091; 2.7-2.8 waited for the next fetch);
        INELIGIBLE_REPLICA, back to the committed ISR; FENCED_LEADER_EPOCH, the proposal
        stays pending until a LeaderAndIsr installs the controller's ISR; so does an accepted
        answer carrying another leader epoch (KRaft, ``kraft_epoch_bump=isr-shrink``:
        ``ALTER_NEW_EPOCH``), which ``handleAlterPartitionUpdate`` ignores."""
        for b in range(self.n):
            br = state.brokers[b]
            if br.alter_partition in (ALTER_NONE, ALTER_SENT) or not br.alive:
                continue
            s = self._set_broker(state, b, self._alter_response_handled(br, b))
            out.append((broker_step("AlterPartitionResponse", b), self._after_leader_step(s, b)))

    def _alter_response_handled(self, br: BrokerPartition, b: int) -> BrokerPartition:
        """``_alter_response_handled_computed``, cached (``memo.IdCache``)."""
        cache = self._cache_alter_response_handled
        found = cache.find(br, b)
        if found is MISSING:
            found = cache.keep(br, b, self._alter_response_handled_computed(br, b))
        return cast(BrokerPartition, found)

    def _alter_response_handled_computed(self, br: BrokerPartition, b: int) -> BrokerPartition:
        """Leader ``b`` holding ``br`` after it handled the controller's answer and raised
        its HW (``_a_alter_partition_response``; memoised)."""
        before = self._isr_state(br)
        if br.alter_partition in (ALTER_ACCEPTED, ALTER_NEW_EPOCH):
            # KRaft's ALTER_NEW_EPOCH: the answer carries the epoch the record bumped to
            epoch = br.leader_epoch + (br.alter_partition == ALTER_NEW_EPOCH)
            lai = LeaderAndIsr(b, epoch, members(br.pending_isr), 1)
            response = AlterPartitionResponse(Errors.NONE, lai)
        elif br.alter_partition == ALTER_INELIGIBLE:
            response = AlterPartitionResponse(Errors.INELIGIBLE_REPLICA)
        else:
            response = AlterPartitionResponse(Errors.FENCED_LEADER_EPOCH)
        after = handle_alter_partition_response(before, br.leader_epoch, before,
                                                response).state
        pending = mask_of(after.pending.proposed_isr) if after.pending else 0
        newbr = with_fields(br, in_sync_replica_ids=mask_of(after.isr), pending_isr=pending,
                            alter_partition=ALTER_NONE)
        raised = raise_leader_hw(self.broker_partition(newbr, b), self.sat,
                                 self.hw_lag).partition
        return self._with_partition(newbr, raised)

