"""The ``kafka`` model in KRaft mode (``controller=kraft``): each mechanism a step that must be
enabled or disabled as Kafka's code has it, and the KRaft scenarios' stories.

Walks name the steps (``tests.spec.walks.walk``); the Kafka code each test argues from is in
its comment.
"""

from __future__ import annotations

from functools import cache

from isrlab.checker.report import CheckResult
from isrlab.spec.kafka.config import KafkaConfig
from isrlab.spec.kafka.model import KafkaModel
from isrlab.spec.kafka.scenarios import BY_KEY
from isrlab.spec.kafka.scenarios import run as run_scenario
from isrlab.spec.kafka.state import (
    ALTER_ACCEPTED,
    ALTER_FENCED,
    ALTER_INELIGIBLE,
    ALTER_SENT,
)
from tests.spec.kafka.kraft_support import kraft, labels, model
from tests.spec.walks import walk


@cache
def scenario(key: str, fixed: bool) -> CheckResult:
    return run_scenario(BY_KEY[key], fixed)


def test_no_controller_channel_and_no_controller_epoch() -> None:
    # KRaft brokers learn everything from the metadata log: no LeaderAndIsr, no
    # UpdateMetadata, no controller epoch (QuorumController has none; the broker's
    # Partition.controllerEpoch stays at its initial value).
    m = model(max_records=1)
    (s,) = m.init_states()
    frontier, visited = [s], {s}
    while frontier and len(visited) < 3000:
        state = frontier.pop()
        assert state.channels == () and state.controller.controller_epoch == 0
        assert all(br.controller_epoch == 0 for br in state.brokers)
        for _, nxt in m.next_states(state):
            if nxt not in visited:
                visited.add(nxt)
                frontier.append(nxt)
    assert len(visited) >= 3000  # the last state's successors may pass the 3,000


def test_a_broker_acts_on_its_own_published_image() -> None:
    # ReplicaManager.applyDelta is the only way a KRaft broker changes role: after the
    # controller fenced broker 0 and elected broker 1, broker 1 still follows 0 in epoch 0
    # until its MetadataLoader publishes the batch (handleCommit).
    m = model(max_records=1)
    s = walk(m, "Crash(0)", "FenceBroker(0)")
    assert (s.controller.leader, s.controller.leader_epoch) == (1, 1)
    assert (s.brokers[1].leader, s.brokers[1].leader_epoch) == (0, 0)
    assert "Produce(1)" not in labels(m, s)
    s = walk(m, "Crash(0)", "FenceBroker(0)", "HandleCommit(1)")
    assert (s.brokers[1].leader, s.brokers[1].leader_epoch) == (1, 1)
    assert "Produce(1)" in labels(m, s)


def test_one_delta_per_commit_may_skip_a_leader_epoch() -> None:
    # MetadataLoader.handleCommit replays every batch it is handed into one MetadataDelta
    # (issue 36): broker 2 goes from leader epoch 0 straight to 2, leading, without ever
    # seeing epoch 1 (broker 1's).
    m = model(brokers=3, max_records=0, isr_shrink=False)
    steps = ("Crash(0)", "FenceBroker(0)", "Crash(1)", "FenceBroker(1)")
    s = walk(m, *steps)
    assert len(kraft(s).batches) == 2 and s.controller.leader == 2
    assert "HandleCommit(2)" in labels(m, s) and "HandleCommit(2,2)" in labels(m, s)
    s = walk(m, *steps, "HandleCommit(2,2)")
    assert (s.brokers[2].leader, s.brokers[2].leader_epoch) == (2, 2)
    assert s.ghost.epoch_leader[1] == -1  # nobody ever led epoch 1


def test_the_controller_waits_while_a_live_broker_lags_max_metadata_lag_batches() -> None:
    m = model(brokers=3, max_records=0, isr_shrink=False, max_metadata_lag=1)
    s = walk(m, "Crash(0)", "FenceBroker(0)")
    assert "FenceBroker(1)" not in labels(m, walk(m, "Crash(0)", "FenceBroker(0)", "Crash(2)"))
    assert len(kraft(s).batches) == 1


def test_fencing_removes_the_broker_from_the_isr_and_leadership() -> None:
    # handleBrokerFenced: generateLeaderAndIsrUpdates with brokerToRemove, then the fence
    # record; only a broker whose session expired (down, without heartbeat_loss).
    m = model(max_records=0)
    (s,) = m.init_states()
    assert not [a for a in labels(m, s) if a.startswith("FenceBroker")]
    s = walk(m, "Crash(1)", "FenceBroker(1)")
    assert s.controller.isr == 0b01 and s.controller.leader == 0
    assert s.controller.leader_epoch == 0  # 3.6+: an ISR shrink keeps the leader epoch
    s = walk(model(max_records=0, kraft_epoch_bump="isr-shrink"), "Crash(1)", "FenceBroker(1)")
    assert s.controller.leader_epoch == 1  # 3.0-3.5: it bumps it (KAFKA-15021)
    live = walk(model(max_records=0, heartbeat_loss=True), "FenceBroker(1)")
    assert live.brokers[1].alive and live.controller.isr == 0b01


def test_registration_gives_a_larger_broker_epoch_and_starts_fenced() -> None:
    # ClusterControlManager.registerBroker: a new incarnation gets a new broker epoch and is
    # fenced; it may register only once its old session expired (fenced); it is unfenced by
    # a heartbeat once its metadata offset reaches its registration record.
    m = model(max_records=0, max_metadata_lag=3)
    down = walk(m, "Crash(1)")
    assert "RegisterBroker(1)" not in labels(m, down)  # old registration still unfenced
    s = walk(m, "Crash(1)", "FenceBroker(1)", "RegisterBroker(1)")
    k = kraft(s)
    # broker 0 has not replayed the fence yet, so the old registration (epoch 0) is still
    # in the state beside the new one (epochs are ranks per broker: kraft_state)
    assert k.base[1][1][0] == 0 and k.broker_epoch[1] == 1
    assert m.variables(s)["controller"]["brokers"][1] == {"epoch": k.broker_epoch[1],
                                                          "fenced": True}
    assert "UnfenceBroker(1)" in labels(m, s)
    s = walk(m, "Crash(1)", "FenceBroker(1)", "RegisterBroker(1)", "UnfenceBroker(1)")
    assert m.variables(s)["controller"]["brokers"][1]["fenced"] is False


def test_alter_partition_is_refused_for_a_stale_partition_epoch() -> None:
    # validateAlterPartitionData: the leader proposes against partition epoch 0 while the
    # controller's is 1 (broker 1 fenced out of the ISR, not yet replayed by the leader):
    # INVALID_UPDATE_VERSION; the leader keeps its pending state until its next delta.
    m = model(brokers=3, initial_isr=2, max_records=0, isr_shrink=False)
    s = walk(m, "Fetch(2)")
    assert s.brokers[0].alter_partition == ALTER_SENT
    s = walk(m, "Fetch(2)", "Crash(1)", "FenceBroker(1)", "AlterPartition(0)")
    assert s.brokers[0].alter_partition == ALTER_FENCED and s.controller.isr == 0b001
    ok = walk(m, "Fetch(2)", "AlterPartition(0)")
    assert ok.brokers[0].alter_partition == ALTER_ACCEPTED and ok.controller.isr == 0b111


def test_alter_partition_is_refused_for_a_stale_leader_epoch() -> None:
    # FENCED_LEADER_EPOCH: broker 0, cut off from the controller (heartbeat_loss), was
    # fenced and broker 1 elected in epoch 1; its proposal of epoch 0 is refused.
    m = model(initial_isr=1, max_records=0, heartbeat_loss=True, isr_shrink=False)
    s = walk(m, "Fetch(1)", "AlterPartition(0)", "AlterPartitionResponse(0)",
             "HandleCommit(0)", "HandleCommit(1)")
    assert s.controller.isr == 0b11
    # no proposal is pending now; fence broker 0 while it still leads in its own view
    s = walk(m, "Fetch(1)", "AlterPartition(0)", "AlterPartitionResponse(0)",
             "HandleCommit(0)", "HandleCommit(1)", "FenceBroker(0)")
    assert (s.controller.leader, s.controller.leader_epoch) == (1, 1)
    assert s.brokers[0].leader == 0


def test_kip903_refuses_a_member_with_a_stale_broker_epoch() -> None:
    # KIP-903 (3.5+): broker 1's fetch carried broker epoch 0; it restarted (epoch 1) before
    # the controller handled the leader's proposal: INELIGIBLE_REPLICA.  3.3-3.4 accept it.
    steps = ("Fetch(1)", "Crash(1)", "FenceBroker(1)", "RegisterBroker(1)",
             "HandleCommit(0)", "UnfenceBroker(1)", "AlterPartition(0)")
    s = walk(model(initial_isr=1, max_records=0, isr_shrink=False, max_metadata_lag=3),
             *steps)
    assert s.brokers[0].alter_partition == ALTER_INELIGIBLE and s.controller.isr == 0b01
    s = walk(model(initial_isr=1, max_records=0, isr_shrink=False, max_metadata_lag=3,
                   kip903=False), *steps)
    assert s.brokers[0].alter_partition == ALTER_ACCEPTED and s.controller.isr == 0b11


def test_unclean_detection_takes_a_powered_off_broker_out_of_the_elr() -> None:
    # handleBrokerUncleanShutdown (3.8+, with ELR): broker 0 lost power as the last ISR
    # member (fenced into the ELR); registering without the clean-shutdown epoch takes it
    # out of the ELR; 3.7 only logs it.
    steps = ("Produce(0)", "PowerLoss(0)", "Crash(1)", "FenceBroker(0)")
    for detection, elr in (("previous-epoch", 0b00), ("none", 0b01)):
        m = model(crashes="unclean", initial_isr=1, max_records=1, isr_shrink=False,
                  unclean_detection=detection)
        s = walk(m, *steps)
        assert (s.controller.isr, s.controller.elr) == (0, 0b01)
        s = walk(m, *steps, "RegisterBroker(0)")
        assert s.controller.elr == elr


def test_kafka14139_is_the_fifteen_state_story() -> None:
    # docs/scenarios.md (KAFKA-14139), counted by hand: 1 Init (ISR {0})  2 Produce m0,
    # committed  3-4 broker 1 fetches twice (its LEO reaches the HW): the leader proposes
    # ISR {0,1}, carrying broker 1's epoch only with KIP-903  5 broker 1 crashes
    # 6 its session expires (FenceBroker)  7 its disk is replaced  8 it registers (new
    # epoch) and catches up  9 the leader replays both batches (the metadata lag bound)
    # 10 broker 1 is unfenced  11 the controller accepts the stale proposal (3.3-3.4)
    # 12 broker 1 replays  13 broker 0 crashes  14 it is fenced: broker 1, in the ISR, is
    # elected cleanly  15 broker 1 leads epoch 1 with an empty log.  The order of 12-13
    # varies; fewer steps cannot make the empty replica leader.
    bug = scenario("kafka14139", False)
    assert bug.violation is not None and len(bug.violation.trace) == 15
    actions = [step.action for step in bug.violation.trace]
    assert "ReplaceDisk(1)" in actions and "AlterPartition(0)" in actions
    assert actions.index("RegisterBroker(1)") < actions.index("AlterPartition(0)")
    fix = scenario("kafka14139", True)
    assert fix.violation is None and fix.complete


def test_last_replica_standing_is_the_eight_state_story() -> None:
    # KIP-966's motivating case, counted by hand: 1 Init (ISR {0})  2 Produce m0, committed
    # (not flushed)  3 broker 0 loses power: m0 gone  4 broker 1 crashes (or replays: the
    # metadata lag bound needs one of the two before the third batch)  5 broker 0 is fenced:
    # without ELR the last ISR member stays in the ISR, the partition leaderless  6 it
    # registers (3.6 and earlier do not detect the unclean shutdown)  7 it is unfenced and
    # elected from the ISR, cleanly  8 it leads epoch 2 without m0.
    bug = scenario("last-replica-standing", False)
    assert bug.violation is not None and len(bug.violation.trace) == 8
    actions = [step.action for step in bug.violation.trace]
    assert actions[2] == "PowerLoss(0)" and actions[-2:] == ["UnfenceBroker(0)",
                                                             "HandleCommit(0)"]
    fix = scenario("last-replica-standing", True)
    assert fix.violation is None and fix.complete


def test_make_leader_applies_a_delta_of_its_own_partition_epoch() -> None:
    # Partition.makeLeader (3.5-trunk) skips only an OLDER partition epoch ("larger or equal
    # ... because the partition epoch is also updated by the AlterPartition response"), and
    # updateAssignmentAndIsr installs a CommittedPartitionState: the leader, at partition
    # epoch 1 from its shrink's answer and with an accepted expansion (epoch 2) in flight,
    # replays the epoch-1 record and falls back to ISR {0}; the expansion's answer is then
    # ignored (the partition state changed).  With the candidate fix it keeps its state.
    steps = ("Tick", "ShrinkIsr(0)", "AlterPartition(0)", "AlterPartitionResponse(0)",
             "Fetch(1)", "AlterPartition(0)", "HandleCommit(0)")
    s = walk(model(max_records=0), *steps)
    assert s.controller.isr == 0b11
    assert (s.brokers[0].in_sync_replica_ids, s.brokers[0].pending_isr) == (0b01, 0)
    assert s.brokers[0].alter_partition != ALTER_ACCEPTED
    fixed = walk(model(max_records=0, make_leader_equal_epoch="skip"), *steps)
    assert fixed.brokers[0].alter_partition == ALTER_ACCEPTED
    assert fixed.brokers[0].pending_isr == 0b11


def test_equal_epoch_delta_is_the_fourteen_state_story() -> None:
    # Counted from the printed trace: 1 Init  2 Tick  3 the leader proposes ISR {0}
    # 4 accepted (partition epoch 1)  5 the leader commits it from the answer (epoch 1)
    # 6 broker 1 fetches, caught up: the leader proposes {0,1}  7 accepted (epoch 2)
    # 8 m0 produced (the maximal ISR {0,1} holds the HW)  9 Tick: broker 1 no longer counts
    # as caught up  10 the leader replays epoch 1: ISR {0}, HW 1, m0 committed without
    # broker 1  11 broker 0 crashes  12 broker 1 replays epoch 1  13 broker 0 is fenced:
    # broker 1, in the controller's ISR {0,1}, elected cleanly  14 it leads without m0.
    bug = scenario("equal-epoch-delta", False)
    assert bug.violation is not None and len(bug.violation.trace) == 14
    actions = [step.action for step in bug.violation.trace]
    assert actions.count("AlterPartition(0)") == 2 and "FenceBroker(0)" in actions
    fix = scenario("equal-epoch-delta", True)
    assert fix.violation is None and fix.complete


def test_zookeeper_mode_parameters_are_refused_in_kraft_mode() -> None:
    assert KafkaConfig(controller="kraft").problems() == []
    for bad in ({"isr_changes": "zookeeper"}, {"metadata": True}, {"max_controller_epoch": 1},
                {"unavailable_leader": "follow"}, {"fetch": "split"}):
        problems = KafkaConfig(controller="kraft", **bad).problems()
        assert len(problems) == 1, (bad, problems)
    assert KafkaConfig().controller == "kraft"  # the default: KRaft, the newest behaviour
    (zk,) = KafkaModel(KafkaConfig(controller="zookeeper")).init_states()
    assert zk.controller.kraft == ()


def test_states_survive_encoding() -> None:
    m = model(max_records=1, max_metadata_lag=3)
    s = walk(m, "Produce(0)", "Fetch(1)", "Crash(1)", "FenceBroker(1)", "RegisterBroker(1)")
    for state in (s, *[n for _, n in m.next_states(s)]):
        assert m.decode(m.encode(state)) == state
        assert m.encode(m.decode(m.encode(state))) == m.encode(state)
