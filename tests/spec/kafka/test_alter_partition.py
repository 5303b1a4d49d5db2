"""KIP-497's asynchronous ISR changes in the ``kafka`` model (``isr_changes=alter-partition``,
the default): the leader proposes, the controller answers in its own step, the leader
commits the answer; the maximal ISR holds the HW meanwhile (``hw_isr``); KIP-841 refuses
a proposal holding a down broker (``fence_ineligible``)."""

from __future__ import annotations

from typing import Any

from isrlab.checker.bfs import CheckOptions, explore
from isrlab.spec.kafka.config import KafkaConfig
from isrlab.spec.kafka.model import KafkaModel
from isrlab.spec.kafka.state import (
    ALTER_ACCEPTED,
    ALTER_FENCED,
    ALTER_INELIGIBLE,
    ALTER_NONE,
    ALTER_SENT,
)
from tests.spec.walks import walk


def model(**kw: Any) -> KafkaModel:
    return KafkaModel(KafkaConfig(controller="zookeeper", **kw))


def test_an_expansion_is_proposed_accepted_and_then_committed_by_the_leader() -> None:
    m = model(initial_isr=1)
    s = walk(m, "Fetch(1)")
    leader = s.brokers[0]
    # PendingExpandIsr: the committed ISR and ZooKeeper's stay {0} until the answer
    assert (leader.in_sync_replica_ids, leader.pending_isr) == (0b01, 0b11)
    assert leader.alter_partition == ALTER_SENT and s.controller.isr == 0b01
    s = walk(m, "Fetch(1)", "AlterPartition(0)")
    assert s.controller.isr == 0b11 and s.controller.leader_epoch == 0  # same leader epoch
    assert s.brokers[0].alter_partition == ALTER_ACCEPTED
    assert s.brokers[0].in_sync_replica_ids == 0b01
    s = walk(m, "Fetch(1)", "AlterPartition(0)", "AlterPartitionResponse(0)")
    assert (s.brokers[0].in_sync_replica_ids, s.brokers[0].pending_isr) == (0b11, 0)
    assert s.brokers[0].alter_partition == ALTER_NONE


def test_no_second_proposal_while_one_is_in_flight() -> None:
    m = model(brokers=3, initial_isr=1, max_records=0)
    s = walk(m, "Fetch(1)")
    assert s.brokers[0].pending_isr == 0b011
    after = walk(m, "Fetch(1)", "Fetch(2)")  # broker 2 is caught up too, but must wait
    assert after.brokers[0].pending_isr == 0b011
    assert after.brokers[0].in_sync_replica_ids == 0b001


def test_the_maximal_isr_holds_the_hw_for_a_pending_joiner() -> None:
    # The follower fetched (a proposal is pending), then stopped being caught up (Tick):
    # with the maximal ISR the HW waits for it, with the committed ISR it does not.
    steps = ("Fetch(1)", "Tick", "Produce(0)")
    assert walk(model(initial_isr=1), *steps).brokers[0].high_watermark == 0
    assert walk(model(initial_isr=1, hw_isr="committed"), *steps).brokers[0].high_watermark == 1


def test_the_committed_isr_rule_breaks_strong_isr_in_five_states_and_loses_data_in_eight() -> None:
    # Counted by hand (initial ISR {0}): Fetch(1) proposes {0,1}; Tick (broker 1 no longer
    # counts as caught up for KAFKA-4485's HW rule); AlterPartition(0) commits {0,1} in
    # ZooKeeper; Produce(0) raises the HW to 1 over the committed ISR {0} alone: a
    # ZooKeeper ISR member lacks a record below the HW (5 states, none shorter: the
    # proposal, its acceptance, the Tick and the record are each needed).  Then Crash(0),
    # ElectLeader (broker 1, in the ISR), and its LeaderAndIsr: the acknowledged m0 is gone.
    bug: dict[str, Any] = {"initial_isr": 1, "hw_isr": "committed"}
    strong = explore(model(**bug), CheckOptions())
    assert strong.violation is not None and strong.violation.invariant == "StrongIsr"
    assert [t.action for t in strong.violation.trace] == [
        "Init", "Fetch(1)", "Tick", "AlterPartition(0)", "Produce(0)"]
    loss = explore(KafkaModel(KafkaConfig(controller="zookeeper", **bug),
                              ["NoCommittedRecordLost"]), CheckOptions())
    assert loss.violation is not None and len(loss.violation.trace) == 8
    assert loss.violation.trace[-3].action == "Crash(0)"


def test_kafkas_maximal_isr_holds_in_the_same_bounds() -> None:
    result = explore(model(initial_isr=1, max_records=1), CheckOptions())
    assert result.violation is None and result.distinct_states > 1_000


def test_kip_841_refuses_a_proposal_holding_a_down_broker() -> None:
    steps = ("Fetch(1)", "Crash(1)", "AlterPartition(0)")
    s = walk(model(initial_isr=1, max_records=0), *steps)
    assert s.brokers[0].alter_partition == ALTER_INELIGIBLE and s.controller.isr == 0b01
    s = walk(model(initial_isr=1, max_records=0), *steps, "AlterPartitionResponse(0)")
    # INELIGIBLE_REPLICA: back to the committed ISR, free to propose again
    assert (s.brokers[0].in_sync_replica_ids, s.brokers[0].pending_isr) == (0b01, 0)
    # Kafka 2.7-3.2: accepted, a down broker joins ZooKeeper's ISR
    s = walk(model(initial_isr=1, max_records=0, fence_ineligible=False), *steps)
    assert s.brokers[0].alter_partition == ALTER_ACCEPTED and s.controller.isr == 0b11


def test_a_proposal_of_a_stale_epoch_is_fenced_and_a_leader_and_isr_resets_it() -> None:
    m = model(max_records=0)
    # broker 0 proposes the shrink of {0,1}; broker 1 dies, the controller removes it in
    # a new leader epoch before it reads the proposal
    s = walk(m, "Tick", "ShrinkIsr(0)", "Crash(1)", "RemoveDeadFromIsr", "AlterPartition(0)")
    assert s.brokers[0].alter_partition == ALTER_FENCED and s.controller.leader_epoch == 1
    s = walk(m, "Tick", "ShrinkIsr(0)", "Crash(1)", "RemoveDeadFromIsr", "AlterPartition(0)",
             "AlterPartitionResponse(0)")
    assert s.brokers[0].pending_isr == 0b01  # FENCED_LEADER_EPOCH: still pending
    deliver = [a for a, _ in m.next_states(s) if a.startswith("Deliver(LeaderAndIsr(to=0")]
    s = walk(m, "Tick", "ShrinkIsr(0)", "Crash(1)", "RemoveDeadFromIsr", "AlterPartition(0)",
             "AlterPartitionResponse(0)", *deliver)
    assert s.brokers[0].leader_epoch == 1 and s.brokers[0].pending_isr == 0
    assert s.brokers[0].in_sync_replica_ids == 0b01


def test_with_elr_a_committed_shrink_below_min_isr_fills_the_elr() -> None:
    # KIP-966 with AlterPartition, as in KRaft: the ELR changes when the controller takes
    # the shrink, not when the leader proposes it
    m = model(min_isr=2)
    s = walk(m, "Tick", "ShrinkIsr(0)")
    assert (s.controller.isr, s.controller.elr) == (0b11, 0)
    s = walk(m, "Tick", "ShrinkIsr(0)", "AlterPartition(0)")
    assert (s.controller.isr, s.controller.elr) == (0b01, 0b10)


def test_the_alter_partition_fields_survive_encoding_and_are_encoded_only_when_used() -> None:
    m = model(initial_isr=1)
    s = walk(m, "Fetch(1)")
    assert m.decode(m.encode(s)) == s
    zk = model(initial_isr=1, isr_changes="zookeeper")
    t = walk(zk, "Fetch(1)")
    assert zk.decode(zk.encode(t)) == t
    assert len(zk.encode(t)) < len(m.encode(t))
