"""The ``kafka`` model's liveness properties (``isrlab.spec.kafka.liveness``): small spaces where
every property holds under Kafka's fairness, and lassos argued by hand when one fairness
condition is dropped (``-p unfair=...``).  Every configuration names its ``controller``."""

from __future__ import annotations

from collections.abc import Mapping

import pytest
from click.testing import CliRunner

from isrlab.checker.liveness import LivenessResult, check_liveness
from isrlab.checker.model import Liveness
from isrlab.checker.registry import ParamValue
from isrlab.cli import cli
from isrlab.spec.kafka.liveness import (
    COMMON_PROPERTIES,
    FINITELY_OFTEN,
    KRAFT_PROPERTIES,
    kafka_liveness,
)
from isrlab.spec.kafka.model import KafkaModel
from isrlab.spec.kafka.registration import build
from tests.spec.walks import walk

ZK_QUIET: dict[str, ParamValue] = {
    "controller": "zookeeper", "crashes": "none", "max_records": 2, "invariants": "none"}
"""Two brokers, two records, no crash: the leader never changes; followers fall out of
the ISR (Tick, ShrinkIsr) and come back."""

KRAFT_QUIET: dict[str, ParamValue] = {
    "controller": "kraft", "crashes": "none", "max_records": 1,
    "kraft_epoch_bump": "isr-shrink", "invariants": "none"}
"""The same in KRaft mode, with 3.0-3.5's epoch bump on a shrink."""

KRAFT_RESTARTS: dict[str, ParamValue] = {
    "controller": "kraft", "max_records": 0, "max_leader_epoch": 2,
    "kraft_epoch_bump": "isr-shrink", "invariants": "none"}
"""KRaft, clean crashes and restarts, no record: fencing, registration, unfencing."""


def model_of(params: Mapping[str, ParamValue]) -> KafkaModel:
    return build(params)


def verdicts(result: LivenessResult) -> dict[str, bool]:
    broken = {v.property for v in result.violations}
    return {p: p not in broken for p in result.properties}


def test_zookeeper_mode_every_property_holds_without_crashes() -> None:
    result = check_liveness(model_of(ZK_QUIET))
    assert result.properties == COMMON_PROPERTIES
    assert result.ok, result.text()


def test_kraft_mode_every_property_holds_without_crashes() -> None:
    result = check_liveness(model_of(KRAFT_QUIET))
    assert result.properties == COMMON_PROPERTIES + KRAFT_PROPERTIES
    assert result.ok, result.text()


def test_without_a_fair_fetcher_an_acks_1_record_stays_on_the_leader() -> None:
    # By hand: acks=1 acknowledges m0 as it is appended (Produce(0)).  Without WF(Fetch)
    # broker 1 may never fetch; the fair steps still run to quiescence: one Tick ages it
    # past lag_ticks=0 (then Tick saturates), ShrinkIsr(0) proposes {0}, AlterPartition(0)
    # commits it, AlterPartitionResponse(0) installs it.  No fair step is then enabled, so
    # stopping there is fair, with m0 on broker 0 only: six states, then stuttering, the
    # shortest such behaviour (each of the five steps is needed before the stop).
    params = {**ZK_QUIET, "acks": "1", "max_records": 1}
    assert check_liveness(model_of(params)).ok
    result = check_liveness(model_of({**params, "unfair": "Fetch"}))
    assert not verdicts(result)["AckedRecordFullyReplicated"]
    (violation,) = [v for v in result.violations if v.property == "AckedRecordFullyReplicated"]
    lasso = violation.lasso
    assert lasso.stutters and len(lasso.trace) == 6
    assert sorted(step.action for step in lasso.trace[1:]) == sorted(
        ["Produce(0)", "Tick", "ShrinkIsr(0)", "AlterPartition(0)", "AlterPartitionResponse(0)"])
    last = lasso.trace[-1].state
    assert last["broker0"]["log"] == ("m0@0",) and last["broker1"]["log"] == ()


def test_kraft_a_broker_back_is_unfenced_only_under_fair_heartbeats() -> None:
    # By hand: a broker b crashes, FenceBroker(b) (its session expires), RegisterBroker(b)
    # (it comes back, registered fenced, caught up), HandleCommit of the other broker (its
    # loader is fair and the new batches wait).  Then b's fetcher and the clock run
    # forever, Fetch(b) and Tick alternating (a fenced broker may fetch; KIP-841 keeps it
    # out of the ISR), and without WF(UnfenceBroker) no heartbeat ever unfences it: five
    # states of prefix and a cycle of two, back to the sixth; no shorter behaviour stops
    # (Fetch(b) is fair and enabled once b runs).  With the fairness it is unfenced.
    assert check_liveness(model_of(KRAFT_RESTARTS)).ok
    result = check_liveness(model_of({**KRAFT_RESTARTS, "unfair": "UnfenceBroker"}))
    # ... and, fenced, it is never eligible for the ISR (KIP-841): it never rejoins either
    assert [v.property for v in result.violations] == [
        "CaughtUpFollowerRejoinsIsr", "OutOfSyncFollowerRejoinsIsr", "FencedBrokerUnfenced"]
    lasso = result.violations[-1].lasso
    actions = [step.action for step in lasso.trace]
    assert len(lasso.trace) == 7 and lasso.loop == 5
    assert [a.split("(")[0] for a in actions[1:5]] == [
        "Crash", "FenceBroker", "RegisterBroker", "HandleCommit"]
    b = int(actions[1][len("Crash("):-1])
    assert {actions[6], lasso.loop_action} == {"Tick", f"Fetch({b})"}
    last = lasso.trace[-1].state
    assert last["controller"]["brokers"][b]["fenced"] and last[f"broker{b}"]["alive"]


def test_crashes_are_finitely_often_and_never_fair() -> None:
    live = model_of(ZK_QUIET).liveness()
    assert set(FINITELY_OFTEN) <= set(live.finitely_often)
    (fairness,) = live.fairness
    for label in ("Crash(0)", "Restart(1)", "RegisterBroker(0)", "Produce(0)", "Consume(0)",
                  "Flush(1)"):
        assert fairness.instance(label) is None
    assert fairness.instance("HandleCommit(1,2)") == fairness.instance("HandleCommit(1)")
    assert fairness.instance("Fetch(1)") == "Fetch(1)"


def test_heartbeat_loss_makes_fencing_a_fault() -> None:
    model = model_of({**KRAFT_RESTARTS, "heartbeat_loss": True})
    live = model.liveness()
    (fairness,) = live.fairness
    assert fairness.instance("FenceBroker(0)") is None
    assert "FenceBroker" in live.finitely_often


def test_infinitely_many_restarts_keep_the_metadata_log_growing() -> None:
    # The declaration without its finitely-often assumption.  By hand: once a broker b is
    # fenced, each Crash(b), RegisterBroker(b) writes a RegisterBrokerRecord for its new
    # incarnation; the other broker's loader (fair) can apply one batch while the next is
    # written (max_metadata_lag 2), so it lags in every state of that cycle, which is fair
    # (b's fetcher and unfencing are disabled while it is down): MetadataConverges fails,
    # with Crash(b) on the cycle.  Under finitely many crashes it holds (first assertion
    # of the test above).
    model = model_of(KRAFT_RESTARTS)
    declared = model.liveness()
    result = check_liveness(model, Liveness(declared.properties, declared.fairness))
    assert [v.property for v in result.violations] == ["MetadataConverges"]
    lasso = result.violations[0].lasso
    cycle = [step.action for step in lasso.trace[lasso.loop + 1:]] + [lasso.loop_action]
    assert any(a.startswith("Crash(") for a in cycle)
    assert any(a.startswith("RegisterBroker(") for a in cycle)


def test_unknown_unfair_action_is_refused() -> None:
    with pytest.raises(ValueError, match="unfair: Crash not among the fair actions"):
        model_of({**ZK_QUIET, "unfair": "Crash"})
    with pytest.raises(ValueError):
        kafka_liveness(model_of(ZK_QUIET), kraft=False, records=1, min_isr=1, elr=True,
                       max_leader_epoch=2, heartbeat_loss=False, unfair=("Bogus",))


def test_cli_checks_the_kafka_model_liveness() -> None:
    args = ["check", "--model", "kafka"]
    for key, value in ZK_QUIET.items():
        args += ["-p", f"{key}={value}"]
    run = CliRunner().invoke(cli, [*args, "--liveness"])
    assert run.exit_code == 0, run.output
    assert "kafka [liveness]: OK: every temporal property holds" in run.output
    run = CliRunner().invoke(cli, [*args, "-p", "unfair=Bogus", "--liveness"])
    assert run.exit_code == 2 and "unfair: Bogus" in run.output



# -- what the lassos found (docs/kafka-model.md, Liveness, "Results and findings") ------------

ZK_CRASHES: dict[str, ParamValue] = {
    "controller": "zookeeper", "max_records": 1, "max_leader_epoch": 2, "invariants": "none"}
"""ZooKeeper mode, clean crashes and restarts, one record."""


def test_zookeeper_mode_followers_rejoin_and_replicate_after_crashes() -> None:
    # Finding 1, fixed: a superseded LeaderAndIsr no longer blocks its channel.
    holds = verdicts(check_liveness(model_of(ZK_CRASHES)))
    assert holds["OutOfSyncFollowerRejoinsIsr"] and holds["AckedRecordFullyReplicated"]


SUPERSEDED = "Deliver(LeaderAndIsr(to=1,cepoch=0,leader=0,epoch=0,isr=(0, 1)))"
NEWER = "Deliver(LeaderAndIsr(to=1,cepoch=0,leader=1,epoch=1,isr=(1,)))"


def test_finding_1_a_superseded_leader_and_isr_is_handled_and_the_fetcher_waits() -> None:
    # Broker 1 came back while leader 0 was down and was sent LeaderAndIsr(leader 0, epoch
    # 0); broker 0's restart elected 1 (epoch 1).  Broker 0, restarted, is in no epoch, so
    # it would never answer OffsetsForLeaderEpoch in epoch 0.  Kafka's makeFollowers
    # becomes 0's follower at once and its fetcher retries; the next request makes 1 the
    # leader of epoch 1.  Before, the request waited for 0 to reach epoch 0 for ever.
    m = model_of(ZK_CRASHES)
    restarted = walk(m, "Crash(0)", "Crash(1)", "Restart(1)", "Restart(0)")
    assert restarted.brokers[0].leader_epoch == -1
    follower = walk(m, "Crash(0)", "Crash(1)", "Restart(1)", "Restart(0)", SUPERSEDED)
    b1 = follower.brokers[1]
    assert (b1.leader, b1.leader_epoch, b1.truncating) == (0, 0, 1)
    assert "Truncate(1)" not in [a for a, _ in m.next_states(follower)]
    leader = walk(m, "Crash(0)", "Crash(1)", "Restart(1)", "Restart(0)", SUPERSEDED, NEWER)
    b1 = leader.brokers[1]
    assert (b1.leader, b1.leader_epoch, b1.truncating) == (1, 1, 0)


def test_without_the_leader_and_isr_wait_followers_rejoin_after_crashes() -> None:
    # fetch_fencing=none (Kafka <= 2.0) handles every LeaderAndIsr at once: the same
    # crashes no longer stop a follower from rejoining or a record from reaching it.
    holds = verdicts(check_liveness(model_of({**ZK_CRASHES, "fetch_fencing": "none"})))
    assert holds["OutOfSyncFollowerRejoinsIsr"] and holds["AckedRecordFullyReplicated"]


def test_kraft_metadata_settles_on_an_idle_partition() -> None:
    # Finding 3, fixed by KAFKA-7152 (kafka_7152, 2.1+): a follower at the leader's LEO stays
    # in the ISR, so an idle partition writes no PartitionChangeRecord for ever under 3.6+'s
    # epoch rule; without it the follower flaps in and out and the metadata log never settles.
    params = {**KRAFT_QUIET, "kraft_epoch_bump": "leader-change"}
    assert verdicts(check_liveness(model_of(params)))["MetadataConverges"]
    flapping = verdicts(check_liveness(model_of({**params, "kafka_7152": False})))
    assert not flapping["MetadataConverges"]


def test_finding_2_a_fenced_replica_no_longer_holds_the_hw() -> None:
    # KAFKA-15021's HW rule (3.6+, with kraft_epoch_bump=leader-change): m0 produced, broker
    # 1 (caught up when it died) crashes, the controller fences it and removes it from the
    # ISR without an epoch bump; the leader's makeLeader on that delta raises the HW over
    # its ISR {0} and no longer waits for broker 1, which is not ISR eligible (fenced).
    # Before, the HW stayed 0 and no later event raised it (finding 2's lasso).
    m = model_of({"controller": "kraft", "max_records": 1, "max_leader_epoch": 2,
                  "invariants": "none"})
    fenced = walk(m, "Produce(0)", "Crash(1)", "FenceBroker(1)")
    assert fenced.brokers[0].high_watermark == 0
    published = walk(m, "Produce(0)", "Crash(1)", "FenceBroker(1)", "HandleCommit(0)")
    assert published.brokers[0].in_sync_replica_ids == 0b01
    assert published.brokers[0].high_watermark == 1
