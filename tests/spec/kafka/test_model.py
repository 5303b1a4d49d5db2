"""The ``kafka`` model's steps on hand-built runs, its encoding, and its parameters."""

from __future__ import annotations

from typing import Any

from click.testing import CliRunner

from isrlab.cli import cli
from isrlab.core.isr import leader_epoch_start_offset
from isrlab.core.state import Partition, records
from isrlab.spec.kafka.config import TP, KafkaConfig
from isrlab.spec.kafka.model import KafkaModel
from isrlab.spec.kafka.state import KafkaState

State = KafkaState


def model(**kw: Any) -> KafkaModel:
    return KafkaModel(KafkaConfig(controller="zookeeper", **kw))


def init(m: KafkaModel) -> State:
    return next(iter(m.init_states()))


def step(m: KafkaModel, s: State, label: str) -> State:
    found = [t for lab, t in m.next_states(s) if lab == label]
    assert found, f"{label} not enabled; enabled: {[lab for lab, _ in m.next_states(s)]}"
    return found[0]


def test_the_initial_state_is_a_new_topic_led_by_broker_0_with_everyone_in_sync() -> None:
    s = init(model(brokers=3))
    assert s.brokers[0].leader == 0 and s.brokers[1].leader == 0 and s.brokers[2].leader == 0
    assert s.controller.isr == 0b111 and s.brokers[0].in_sync_replica_ids == 0b111
    assert all(br.log == () and br.leader_epoch == 0 for br in s.brokers)


def test_initial_isr_leaves_the_last_brokers_out_of_sync() -> None:
    s = init(model(brokers=3, initial_isr=2))
    assert s.controller.isr == 0b011


def test_a_follower_learns_the_hw_one_fetch_after_the_leader_raised_it() -> None:
    m = model()
    s = step(m, init(m), "Produce(0)")
    s = step(m, s, "Fetch(1)")  # the follower has m0; the leader saw offset 0
    assert s.brokers[0].high_watermark == 0 and s.brokers[1].log == s.brokers[0].log
    s = step(m, s, "Fetch(1)")  # the leader sees offset 1: HW 1, m0 committed and acked
    assert s.brokers[0].high_watermark == 1 and s.brokers[1].high_watermark == 0
    assert s.ghost.committed[0] == 0 and s.ghost.acked[0] == 0
    s = step(m, s, "Tick")
    s = step(m, s, "Fetch(1)")  # the response now carries HW 1
    assert s.brokers[1].high_watermark == 1


def test_acks_all_with_min_isr_refuses_a_write_to_a_shrunk_isr() -> None:
    m = model(min_isr=2, isr_changes="zookeeper")
    s = step(m, init(m), "Tick")
    s = step(m, s, "ShrinkIsr(0)")
    assert s.brokers[0].in_sync_replica_ids == 0b01 and s.controller.isr == 0b01
    assert not any(lab.startswith("Produce") for lab, _ in m.next_states(s))


def test_with_alter_partition_writes_are_refused_only_once_the_shrink_is_committed() -> None:
    # Kafka 2.7+: the shrink is a proposal; appendRecordsToLeader counts the committed ISR,
    # which stays {0, 1} until the controller's answer reaches the leader.
    m = model(min_isr=2)
    s = step(m, init(m), "Tick")
    s = step(m, s, "ShrinkIsr(0)")
    assert (s.brokers[0].in_sync_replica_ids, s.brokers[0].pending_isr) == (0b11, 0b01)
    assert s.controller.isr == 0b11
    assert "Produce(0)" in [lab for lab, _ in m.next_states(s)]
    s = step(m, s, "AlterPartition(0)")
    assert s.controller.isr == 0b01 and s.brokers[0].in_sync_replica_ids == 0b11
    assert "Produce(0)" in [lab for lab, _ in m.next_states(s)]
    s = step(m, s, "AlterPartitionResponse(0)")
    assert (s.brokers[0].in_sync_replica_ids, s.brokers[0].pending_isr) == (0b01, 0)
    assert not any(lab.startswith("Produce") for lab, _ in m.next_states(s))


def test_acks_1_is_acknowledged_on_append() -> None:
    m = model(acks="1")
    s = step(m, init(m), "Produce(0)")
    assert s.ghost.acked[0] == 0 and s.ghost.committed[0] == -1


def test_fencing_refuses_a_fetch_from_a_follower_in_another_epoch() -> None:
    # Hand-built: broker 0 leads epoch 1, broker 1 still follows it in epoch 0 (a zombie
    # that missed the LeaderAndIsr of epoch 1).
    # KIP-320's first design compares record epochs, not leader epochs: served.
    for fencing, enabled in (("final", False), ("none", True), ("first-design", True)):
        m = model(fetch_fencing=fencing)
        s = step(m, init(m), "Produce(0)")
        s = s._replace(brokers=(s.brokers[0]._replace(leader_epoch=1), *s.brokers[1:]))
        assert ("Fetch(1)" in [lab for lab, _ in m.next_states(s)]) is enabled


def test_a_crashed_broker_loses_its_partition_state_but_keeps_its_log() -> None:
    m = model()
    s = step(m, init(m), "Produce(0)")
    s = step(m, s, "Crash(0)")
    assert s.brokers[0].log != () and s.brokers[0].leader == -1 and s.brokers[0].leader_epoch == -1


def test_a_power_loss_drops_the_unflushed_tail() -> None:
    m = model(crashes="unclean")
    s = step(m, init(m), "Produce(0)")
    assert step(m, s, "PowerLoss(0)").brokers[0].log == ()
    s = step(m, s, "Flush(0)")
    assert "PowerLoss(0)" not in [lab for lab, _ in m.next_states(s)]


def test_the_epoch_start_offset_is_the_first_record_of_the_leaders_epoch() -> None:
    p = Partition(TP, 0, leader=0, leader_epoch=2, log=records((1, 2), 0) + records((3,), 2))
    assert leader_epoch_start_offset(p) == 2
    assert leader_epoch_start_offset(Partition(TP, 0, leader=0, leader_epoch=3,
                                        log=records((1,), 0))) == 1


def test_states_round_trip_through_their_bytes() -> None:
    m = model(metadata=True, hw_checkpoint=True, crashes="unclean")
    frontier = [init(m)]
    for _ in range(4):
        frontier = [t for s in frontier for _, t in m.next_states(s)][:200]
        for s in frontier:
            assert m.decode(m.encode(s)) == s


def test_bad_parameters_are_one_line_errors_with_exit_2() -> None:
    runner = CliRunner()
    result = runner.invoke(cli, ["check", "--model", "kafka", "-p", "min_isr=3"])
    assert result.exit_code == 2
    assert "min_isr 3 exceeds the 2 replicas" in result.output
    assert "Traceback" not in result.output
    result = runner.invoke(cli, ["check", "--model", "kafka", "-p", "invariants=Nope"])
    assert result.exit_code == 2 and "unknown invariant 'Nope'" in result.output


def test_the_cli_prints_a_counterexample_and_exits_1_for_acks_1() -> None:
    result = CliRunner().invoke(cli, [
        "check", "--model", "kafka", "-p", "acks=1", "-p", "max_records=1",
        "-p", "max_leader_epoch=1", "-p", "invariants=AcknowledgedWritesDurable",
    ])
    assert result.exit_code == 1
    assert "AcknowledgedWritesDurable" in result.output and "Crash(0)" in result.output


def labels(m: KafkaModel, s: State) -> list[str]:
    return [lab for lab, _ in m.next_states(s)]


def test_the_default_fetch_is_one_atomic_step() -> None:
    m = model()
    s = step(m, init(m), "Produce(0)")
    assert "Fetch(1)" in labels(m, s)
    assert not any(lab.startswith(("FetchRequest", "FetchResponse")) for lab in labels(m, s))
    assert all(br.fetch_in_flight == () for br in step(m, s, "Fetch(1)")[1])


def test_a_split_fetch_updates_the_leader_on_the_request_and_the_follower_on_the_response() -> None:
    m = model(fetch="split", lost_requests=False)
    s = step(m, init(m), "Produce(0)")
    s = step(m, s, "FetchRequest(1)")
    # m0 is in flight to broker 1
    assert s.brokers[1].log == () and s.brokers[1].fetch_in_flight != ()
    assert "FetchRequest(1)" not in labels(m, s)  # one fetch in flight per follower
    s = step(m, s, "FetchResponse(1)")
    assert s.brokers[1].log == s.brokers[0].log and s.brokers[1].fetch_in_flight == ()
    s = step(m, s, "FetchRequest(1)")  # the leader sees offset 1: HW 1 at once
    assert s.brokers[0].high_watermark == 1 and s.ghost.committed[0] == 0
    assert s.brokers[1].high_watermark == 0


def test_a_lost_fetch_response_changes_nothing_on_the_follower() -> None:
    m = model(fetch="split", lost_requests=True)
    s = step(m, init(m), "Produce(0)")
    s = step(m, s, "FetchRequest(1)")
    lost = step(m, s, "LoseFetchResponse(1)")
    assert lost.brokers[1] == init(m).brokers[1]
    assert "FetchRequest(1)" in labels(m, lost)


def test_a_fetch_response_dies_with_its_leader() -> None:
    m = model(fetch="split", lost_requests=False)
    s = step(m, init(m), "Produce(0)")
    s = step(m, s, "FetchRequest(1)")
    s = step(m, s, "Crash(0)")
    assert s.brokers[1].fetch_in_flight == () and s.brokers[1].log == ()


def test_a_follower_that_changes_leader_drops_its_fetch_response() -> None:
    m = model(brokers=3, fetch="split", lost_requests=False, reassignment=True)
    s = step(m, init(m), "Produce(0)")
    s = step(m, s, "FetchRequest(2)")
    s = step(m, s, "Reassign(102)")
    s = step(m, s, "Deliver(LeaderAndIsr(to=1,cepoch=0,leader=1,epoch=1,isr=(0, 1, 2)))")
    s = step(m, s, "Deliver(LeaderAndIsr(to=2,cepoch=0,leader=1,epoch=1,isr=(0, 1, 2)))")
    assert s.brokers[2].leader == 1 and s.brokers[2].fetch_in_flight == ()
    assert s.brokers[2].log == ()


def step_to(m: KafkaModel, s: State, prefix: str) -> State:
    found = [t for lab, t in m.next_states(s) if lab.startswith(prefix)]
    assert found, f"{prefix} not enabled; enabled: {[lab for lab, _ in m.next_states(s)]}"
    return found[0]


def follower_past_its_leader(**kw: Any) -> tuple[KafkaModel, State]:
    """Broker 1 keeps m0 (its HW) while broker 0, cleanly re-elected alone, lost it.
    A ZooKeeper-era story (``elr=False``): with KIP-966 broker 0, back from a power loss,
    leaves the ISR and is not elected."""
    m = model(truncation="hw", fetch_fencing="none", expand_rule="hw", crashes="unclean",
              max_records=1, isr_shrink=False, lost_requests=False, elr=False, **kw)
    s = step(m, init(m), "Produce(0)")
    for _ in range(3):  # the leader's HW reaches 1 at the second fetch, 1 learns it at the third
        s = step(m, s, "Fetch(1)")
    s = step(m, step(m, s, "Crash(1)"), "RemoveDeadFromIsr")
    s = step(m, step(m, s, "PowerLoss(0)"), "Restart(0)")  # elected again: ISR {0}
    s = step_to(m, s, "Deliver(LeaderAndIsr(to=0")
    s = step_to(m, step(m, s, "Restart(1)"), "Deliver(LeaderAndIsr(to=1")
    assert s.brokers[0].log == () and s.brokers[1].log != () and s.brokers[1].leader == 0
    return m, s


def test_kafka_2_1_truncates_a_follower_past_its_leaders_leo() -> None:
    m, s = follower_past_its_leader()
    s = step(m, s, "Fetch(1)")
    assert s.brokers[1].log == () and s.brokers[1].alive
    assert s.brokers[0].remotes[1].log_end_offset == -1  # the leader recorded the failed read
    assert "broker_halted" not in m.variables(s)


def test_before_kafka_2_1_that_follower_halts_its_broker() -> None:
    m, before = follower_past_its_leader(kafka_7414=False)
    s = step(m, before, "Fetch(1)")
    assert not s.brokers[1].alive and s.brokers[1].log != ()  # FatalExitError: nothing truncated
    assert m.variables(s)["broker_halted"]
    fatal = next(p for p in m.invariants() if p.name == "NoFatalExit")
    assert fatal.holds(before) and not fatal.holds(s)
    m, s = follower_past_its_leader(kafka_7414=False, unclean_election=True)
    s = step(m, s, "Fetch(1)")  # unclean election enabled: truncate, as 2.1 always does
    assert s.brokers[1].log == () and s.brokers[1].alive and not m.variables(s)["broker_halted"]


def test_kafka_0_10_2_counts_a_fetch_reaching_the_previous_fetch_leo_as_caught_up() -> None:
    for kafka_4485, age in ((True, 0), (False, 1)):
        m = model(max_records=2, kafka_4485=kafka_4485, crashes="none")
        s = step(m, step(m, init(m), "Produce(0)"), "Tick")  # follower 1 is one tick behind
        s = step(m, s, "Fetch(1)")  # reads m0 from 0: not at the LEO (1), so not caught up
        assert s.brokers[0].remotes[1].age == 1
        s = step(m, s, "Produce(0)")  # the leader's LEO is now 2
        s = step(m, s, "Fetch(1)")  # from 1: the leader LEO its previous fetch saw
        assert s.brokers[0].remotes[1].age == age, kafka_4485


def test_a_fenced_fetch_makes_the_followers_leo_unknown_on_the_leader() -> None:
    m = model(brokers=3, max_records=1, isr_shrink=False, lost_requests=False)
    s = step(m, step(m, init(m), "Produce(0)"), "Fetch(2)")
    assert s.brokers[0].remotes[2].log_end_offset == 0  # the fetch offset: known
    s = step(m, step(m, s, "Crash(1)"), "RemoveDeadFromIsr")
    s = step_to(m, s, "Deliver(LeaderAndIsr(to=0")  # 0 leads epoch 1, 2 is still in epoch 0
    assert "Fetch(2)" not in [lab for lab, _ in m.next_states(s)]
    s = step(m, s, "FencedFetch(2)")  # FENCED_LEADER_EPOCH: readFromLocalLog failed
    assert s.brokers[0].remotes[2].log_end_offset == -1 and s.brokers[2].log == s.brokers[0].log
    assert "FencedFetch(2)" not in [lab for lab, _ in m.next_states(s)]  # nothing more to do
