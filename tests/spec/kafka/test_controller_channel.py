"""The controller-to-broker channels of the ``kafka`` model: FIFO per controller epoch and
broker by default (Kafka's ``ControllerChannelManager``: one queue and one
``RequestSendThread`` per broker), loss only with the connection; ``reorder_requests``,
``lost_requests`` and ``duplicate_requests`` are faults, off by default."""

from __future__ import annotations

import os
from typing import Any

import pytest

from isrlab.checker.bfs import CheckOptions, explore
from isrlab.spec.kafka.config import KafkaConfig
from isrlab.spec.kafka.model import KafkaModel
from isrlab.spec.kafka.state import LEADER_AND_ISR, KafkaState

State = KafkaState


def model(**kw: Any) -> KafkaModel:
    return KafkaModel(KafkaConfig(controller="zookeeper", **kw))


def init(m: KafkaModel) -> State:
    return next(iter(m.init_states()))


def labels(m: KafkaModel, s: State) -> list[str]:
    return [lab for lab, _ in m.next_states(s)]


def step(m: KafkaModel, s: State, label: str) -> State:
    found = [t for lab, t in m.next_states(s) if lab == label]
    assert found, f"{label} not enabled; enabled: {labels(m, s)}"
    return found[0]


E1_TO_0 = "Deliver(LeaderAndIsr(to=0,cepoch=0,leader=1,epoch=1,isr=(0, 1)))"
E2_TO_0 = "Deliver(LeaderAndIsr(to=0,cepoch=0,leader=0,epoch=2,isr=(0, 1)))"


E1_TO_1 = "Deliver(LeaderAndIsr(to=1,cepoch=0,leader=1,epoch=1,isr=(0, 1)))"


def two_moves(m: KafkaModel) -> State:
    """Leadership to broker 1 (epoch 1), then back to broker 0 (epoch 2), by reassignment;
    broker 1 has handled epoch 1 (so broker 0's fetcher may truncate against it at once),
    broker 0 neither request."""
    s = step(m, init(m), "Reassign(10)")
    s = step(m, s, "Reassign(01)")
    return step(m, s, E1_TO_1)


def test_a_broker_handles_one_controllers_requests_in_the_order_they_were_queued() -> None:
    m = model(reassignment=True, crashes="none")
    s = two_moves(m)
    assert E2_TO_0 not in labels(m, s)  # epoch 2 is queued behind epoch 1
    assert E1_TO_0 in labels(m, s)


def test_reorder_requests_lets_a_later_request_overtake_an_earlier_one() -> None:
    m = model(reassignment=True, crashes="none", reorder_requests=True)
    s = step(m, two_moves(m), E2_TO_0)
    assert s.brokers[0].leader_epoch == 2 and s.brokers[0].leader == 0
    assert E1_TO_0 in labels(m, s)  # still in flight, to be refused as stale


E2_TO_1 = "Deliver(LeaderAndIsr(to=1,cepoch=0,leader=0,epoch=2,isr=(0, 1)))"


def test_a_stale_request_is_refused_at_once_whatever_its_leader_is_doing() -> None:
    # Both brokers are in epoch 2 when the overtaken epoch-1 request to broker 0 arrives:
    # becomeLeaderOrFollower answers STALE_CONTROLLER_EPOCH (its leader epoch is not newer)
    # and changes nothing.  Its leader, broker 1, has left epoch 1, so the request used to
    # wait for it for ever (KIP-320's wait is for a request the broker takes, not one it
    # refuses).
    m = model(reassignment=True, crashes="none", reorder_requests=True)
    s = step(m, step(m, two_moves(m), E2_TO_0), E2_TO_1)
    assert (s.brokers[1].leader, s.brokers[1].leader_epoch) == (0, 2)
    refused = step(m, s, E1_TO_0)
    assert refused.brokers == s.brokers and refused.controller == s.controller
    assert len(refused.channels) == len(s.channels) - 1


def test_no_request_is_lost_or_duplicated_by_default() -> None:
    m = model(reassignment=True, crashes="none")
    enabled = labels(m, two_moves(m))
    assert not any(lab.startswith(("Lose(", "DeliverCopy(")) for lab in enabled)


def test_lost_and_duplicate_requests_are_faults_that_can_be_turned_on() -> None:
    m = model(reassignment=True, crashes="none", lost_requests=True, duplicate_requests=True)
    enabled = labels(m, two_moves(m))
    assert "Lose(LeaderAndIsr(to=0,cepoch=0,leader=0,epoch=2,isr=(0, 1)))" in enabled
    assert "DeliverCopy(LeaderAndIsr(to=0,cepoch=0,leader=1,epoch=1,isr=(0, 1)))" in enabled
    assert "Lose(LeaderAndIsr(to=1,cepoch=0,leader=0,epoch=2,isr=(0, 1)))" in enabled


def test_a_crash_drops_the_channel_to_the_broker() -> None:
    m = model(reassignment=True)
    s = step(m, two_moves(m), "Crash(0)")
    assert [msg.dest for msg in s.channels] == [1]  # epoch 2 to broker 1 only
    s = step(m, step(m, s, "Crash(1)"), "Restart(1)")
    # The new channel to broker 1 carries the current state, sent by onBrokerStartup.
    assert [(r.dest, r.kind, r.controller_epoch, r.leader, r.leader_epoch) for r in s.channels] == [
        (1, LEADER_AND_ISR, 0, 0, 2)
    ]


def test_after_a_failover_the_old_channel_stays_in_order_beside_the_new_one() -> None:
    m = model(reassignment=True, crashes="none", max_controller_epoch=1)
    s = step(m, two_moves(m), "ControllerFailover")
    enabled = labels(m, s)
    # The old controller's channel: epoch 1 first, epoch 2 behind it; the new
    # controller's channel (another connection) carries the current state, epoch 2.
    assert E1_TO_0 in enabled and E2_TO_0 not in enabled
    new = "Deliver(LeaderAndIsr(to=0,cepoch=1,leader=0,epoch=2,isr=(0, 1)))"
    s = step(m, s, new)
    # broker 0 skipped epoch 1: the old queue never got through
    assert s.brokers[0].leader_epoch == 2


ISSUE_14 = dict(brokers=3, reassignment=True, max_records=1, max_leader_epoch=2,
                isr_shrink=False, crashes="none", lost_requests=False)


def test_the_twelve_state_weak_isr_violation_needed_reordering() -> None:
    # Issue 14's command: its 12-state trace has broker 0 handle the epoch-2 LeaderAndIsr
    # before the epoch-1 one of the same controller, which one queue per broker forbids.
    faithful = explore(model(**ISSUE_14), CheckOptions())
    assert faithful.violation is None and faithful.complete
    reordered = explore(model(**ISSUE_14, reorder_requests=True), CheckOptions())
    assert reordered.violation is not None
    assert reordered.violation.invariant in ("WeakIsr", "StrongIsr")
    assert len(reordered.violation.trace) == 12


def test_isrlab_models_marks_every_fault_parameter_and_each_is_off_by_default() -> None:
    from click.testing import CliRunner

    from isrlab.cli import cli
    from isrlab.spec.kafka.registration import PARAMS

    faults = {p.name for p in PARAMS if p.fault}
    assert faults == {"reorder_requests", "lost_requests", "duplicate_requests", "hw_isr",
                      "hw_checkpoint_file", "heartbeat_loss", "empty_disk"}
    # a fault is off by default: a bool is false, a choice is a real release's behaviour
    # (its fault value: hw_isr=committed, hw_checkpoint_file=periodic)
    assert all(p.default is False for p in PARAMS if p.fault and p.type is bool)
    assert {p.name: p.default for p in PARAMS if p.fault and p.type is str} == {
        "hw_isr": "maximal", "hw_checkpoint_file": "fsync"}
    out = CliRunner().invoke(cli, ["models"]).output
    marked = {line.split("=")[0].split()[-1] for line in out.splitlines() if "[fault]" in line}
    assert faults <= marked


SKIPPED_EPOCH: dict[str, Any] = dict(
    brokers=3, initial_isr=2, reassignment=True, controlled_shutdown=True, crashes="none",
    isr_shrink=False, max_records=1, max_leader_epoch=3, isr_changes="zookeeper")
"""Scenario 7's bounds (Kafka 2.1: the leader writes its ISR to ZooKeeper)."""


@pytest.mark.start_first(4)  # 28-42 s
@pytest.mark.skipif(bool(os.environ.get("ISRLAB_SKIP_HEAVY")), reason="about 40-90 s")
def test_scenario_7s_skipped_epoch_loss_is_gone_with_a_lagging_metadata_cache() -> None:
    # docs/scenarios.md §7: the loss needed broker 0 to take makeFollowers' "new leader
    # unavailable" branch on a LeaderAndIsr queued before the leader's shutdown; with
    # metadata=false the cache now lists every broker, as Kafka's would at that point.
    m = KafkaModel(KafkaConfig(controller="zookeeper", **SKIPPED_EPOCH), ("NoCommittedRecordLost",))
    result = explore(m, CheckOptions())
    assert result.violation is None and result.complete
