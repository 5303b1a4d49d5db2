"""The ``kafka`` model in KRaft mode (``controller=kraft``): controlled shutdown through
heartbeats, preferred elections and the active controller's failover, each step enabled or
disabled as Kafka's code has it; and issue 36's stale-LEO loss in KRaft.

Walks name the steps (``tests.spec.walks.walk``); the Kafka code each test argues from is in
its comment, and expected records are those of ReplicationControlManagerTest where one
exists.
"""

from __future__ import annotations

import marshal

from isrlab.spec.kafka.config import KafkaConfig
from isrlab.spec.kafka.kraft_model import KRaftModel
from isrlab.spec.kafka.kraft_state import FENCED, SHUTTING_DOWN, controller_image
from isrlab.spec.kafka.state import ALTER_ACCEPTED, ALTER_FENCED, ALTER_SENT, KafkaState
from tests.spec.kafka.kraft_support import kraft, labels, model
from tests.spec.walks import walk


def broker_flags(m: KRaftModel, s: KafkaState, b: int) -> int:
    """Broker ``b``'s fenced / controlled-shutdown bits in the controller's image."""
    return controller_image(kraft(s), m.n)[1][b][1]


THREE = {"brokers": 3, "max_records": 1, "isr_shrink": False, "controlled_shutdown": True}


def test_controlled_shutdown_moves_leadership_then_waits_for_the_active_brokers() -> None:
    # testProcessBrokerHeartbeatInControlledShutdown: broker 0 leads [0, 1, 2] and heartbeats
    # with wantShutDown; the batch is the in-controlled-shutdown record, then ISR [1, 2] with
    # leader 1.  calculateNextBrokerState grants SHUTDOWN_NOW only once every active broker
    # (1 and 2) reports a metadata offset past that batch (controlledShutdownOffset <=
    # lowestActiveOffset); then handleBrokerFenced fences 0, and 0 stops.
    m = model(**THREE)
    s = walk(m, "ControlledShutdown(0)")
    (batch,) = kraft(s).batches
    assert batch == ((2, 0, 0, 0, 1), (0, 0b110, 1, -1, -1, -1))
    assert (s.controller.leader, s.controller.leader_epoch, s.controller.isr) == (1, 1, 0b110)
    assert s.brokers[0].alive and kraft(s).shutdown_offset == (1, -1, -1)
    assert broker_flags(m, s, 0) == SHUTTING_DOWN
    assert "ShutdownNow(0)" not in labels(m, walk(m, "ControlledShutdown(0)", "HandleCommit(1)"))
    s = walk(m, "ControlledShutdown(0)", "HandleCommit(1)", "HandleCommit(2)")
    assert "ShutdownNow(0)" in labels(m, s)
    s = walk(m, "ControlledShutdown(0)", "HandleCommit(1)", "HandleCommit(2)", "ShutdownNow(0)")
    assert not s.brokers[0].alive and kraft(s).shutdown_offset == (-1, -1, -1)
    assert broker_flags(m, s, 0) == FENCED | SHUTTING_DOWN
    # a new incarnation registers out of controlled shutdown (RegisterBrokerRecord)
    s = walk(m, "ControlledShutdown(0)", "HandleCommit(1)", "HandleCommit(2)",
             "ShutdownNow(0)", "RegisterBroker(0)")
    assert broker_flags(m, s, 0) == FENCED


def test_a_broker_shutting_down_is_neither_leader_nor_isr_candidate() -> None:
    # LeaderAcceptor (isActive: not in controlled shutdown) and Partition.isReplicaIsrEligible
    # (!isBrokerShuttingDown, KIP-841): fencing leader 1 cannot elect broker 0, which is in
    # controlled shutdown; the leader never proposes 0 for the ISR again.
    m = model(**THREE)
    s = walk(m, "ControlledShutdown(0)", "HandleCommit(1)", "HandleCommit(2)", "Crash(1)",
             "FenceBroker(1)")
    assert s.controller.leader == 2
    s = walk(m, "ControlledShutdown(0)", "HandleCommit(0)", "HandleCommit(1)", "Fetch(0)")
    assert s.brokers[1].pending_isr == 0 and s.controller.isr == 0b110


def test_fencing_ends_a_controlled_shutdown() -> None:
    # BrokerHeartbeatManager.touch(fenced = true) clears the controlled-shutdown offset; a
    # fenced broker that asks to shut down is told SHUTDOWN_NOW at once, which the model
    # leaves to Crash(b): neither heartbeat step is offered any more.
    m = model(**THREE, heartbeat_loss=True)
    s = walk(m, "ControlledShutdown(0)", "FenceBroker(0)")
    assert s.brokers[0].alive and kraft(s).shutdown_offset == (-1, -1, -1)
    assert broker_flags(m, s, 0) == FENCED | SHUTTING_DOWN
    steps = labels(m, s)
    assert "ShutdownNow(0)" not in steps and "ControlledShutdown(0)" not in steps
    # nor is it unfenced: its heartbeats still carry wantShutDown (SHUTDOWN_NOW, not UNFENCED)
    caught_up = walk(m, "ControlledShutdown(0)", "FenceBroker(0)", "HandleCommit(0,2)",
                     "HandleCommit(1,2)", "HandleCommit(2,2)")
    assert "UnfenceBroker(0)" not in labels(m, caught_up)
    assert "Crash(0)" in steps
    # a broker that crashes in controlled shutdown stops heartbeating: its session expires
    # (findOneStaleBroker looks at every unfenced broker) and it is fenced
    m = model(**THREE)
    s = walk(m, "ControlledShutdown(0)", "HandleCommit(1)", "Crash(0)", "FenceBroker(0)")
    assert broker_flags(m, s, 0) == FENCED | SHUTTING_DOWN


def test_a_broker_leading_nothing_shuts_down_at_once() -> None:
    # calculateNextBrokerState, UNFENCED + wantShutDown without leaderships: SHUTDOWN_NOW,
    # and processBrokerHeartbeat writes handleBrokerFenced's records (out of the ISR, fenced).
    m = model(**THREE)
    s = walk(m, "ControlledShutdown(2)")
    assert not s.brokers[2].alive and s.controller.isr == 0b011
    assert broker_flags(m, s, 2) == FENCED and kraft(s).shutdown_offset == (-1, -1, -1)


def test_preferred_election_elects_the_first_replica_only_when_in_isr_and_active() -> None:
    # ReplicationControlManager.electLeader(PREFERRED): ELECTION_NOT_NEEDED while broker 0
    # leads; PREFERRED_LEADER_NOT_AVAILABLE while 0 is down or out of the ISR; once 0 is
    # back, unfenced and in the ISR, the record sets leader 0 (a new leader epoch).
    m = model(brokers=2, max_records=1, isr_shrink=False, preferred_election=True)
    assert "PreferredElection" not in labels(m, walk(m))
    back = ("Crash(0)", "FenceBroker(0)", "HandleCommit(1)", "RegisterBroker(0)",
            "UnfenceBroker(0)", "HandleCommit(1,2)")
    assert "PreferredElection" not in labels(m, walk(m, *back))
    s = walk(m, *back, "Fetch(0)", "AlterPartition(1)", "HandleCommit(0,2)",
             "PreferredElection")
    assert (s.controller.leader, s.controller.leader_epoch, s.controller.isr) == (0, 2, 0b11)
    assert kraft(s).batches[-1] == ((0, -1, 0, -1, -1, -1),)


def test_controller_failover_resends_the_alter_partition_whose_answer_it_lost() -> None:
    # QuorumController.renounce fails every answer not given (NOT_CONTROLLER); the leader's
    # NodeToControllerChannelManager puts the same request back first in its queue.  The
    # shrink was committed, so the new controller refuses the resent request's partition
    # epoch: INVALID_UPDATE_VERSION, and the leader stays pending until its metadata loader
    # publishes the committed ISR.
    m = model(brokers=2, max_records=0, controller_failover=True)
    assert "ControllerFailover" not in labels(m, walk(m))  # nothing to lose: no step
    steps = ("Tick", "ShrinkIsr(0)", "AlterPartition(0)")
    s = walk(m, *steps)
    assert s.brokers[0].alter_partition == ALTER_ACCEPTED and s.controller.isr == 0b01
    s = walk(m, *steps, "ControllerFailover")
    assert s.brokers[0].alter_partition == ALTER_SENT and s.controller.isr == 0b01
    s = walk(m, *steps, "ControllerFailover", "AlterPartition(0)")
    assert s.brokers[0].alter_partition == ALTER_FENCED and s.controller.isr == 0b01
    s = walk(m, *steps, "ControllerFailover", "AlterPartition(0)", "AlterPartitionResponse(0)",
             "HandleCommit(0)")
    assert (s.brokers[0].in_sync_replica_ids, s.brokers[0].pending_isr) == (0b01, 0)


def test_controller_failover_forgets_controlled_shutdown_offsets() -> None:
    # ClusterControlManager.activate starts a new BrokerHeartbeatManager (no controlled-
    # shutdown offset); broker 0, no longer leading, asks again and is told SHUTDOWN_NOW at
    # once, without waiting for brokers 1 and 2 to publish the leadership change.
    m = model(**THREE, controller_failover=True)
    s = walk(m, "ControlledShutdown(0)", "ControllerFailover")
    assert kraft(s).shutdown_offset == (-1, -1, -1)
    s = walk(m, "ControlledShutdown(0)", "ControllerFailover", "ControlledShutdown(0)")
    assert not s.brokers[0].alive and kraft(s).applied[1:] == (0, 0)


def test_without_the_new_parameters_the_kraft_encoding_is_unchanged() -> None:
    # The heartbeat manager's offsets are encoded only with controlled_shutdown
    # (LAYOUT_TABLE's KRAFT_SHUTDOWN): the default KRaft space keeps its bytes.
    m = model(max_records=1)
    s = walk(m, "Produce(0)", "Crash(1)", "FenceBroker(1)")
    k = kraft(s)
    assert k.shutdown_offset == ()
    assert m.encode(s).endswith(marshal.dumps(tuple(k)[:8], 2))
    shut = model(**THREE)
    t = walk(shut, "ControlledShutdown(0)")
    assert shut.decode(shut.encode(t)) == t
    assert KafkaConfig(controller="zookeeper", controller_failover=True).problems() == [
        "controller_failover is a KRaft-mode parameter (controller=kraft; ZooKeeper mode's "
        "failovers are max_controller_epoch)"]


STALE_LEO_KRAFT = (
    "Crash(0)", "FenceBroker(0)", "HandleCommit(1)", "HandleCommit(2)", "RegisterBroker(0)",
    "UnfenceBroker(0)", "HandleCommit(1,2)", "HandleCommit(2,2)", "Fetch(0)",
    "AlterPartition(1)", "AlterPartitionResponse(1)", "HandleCommit(0,2)", "HandleCommit(1)",
    "Produce(1)", "Fetch(2)", "Fetch(2)", "PreferredElection", "HandleCommit(0)",
    "HandleCommit(2,2)", "Truncate(2)", "ControlledShutdown(0)", "HandleCommit(1,2)",
    "Crash(1)", "FenceBroker(1)", "HandleCommit(2,2)")
"""Issue 36 in KRaft, written out by hand from the story (docs/findings/stale-leo-failover.md,
"KRaft"): broker 1 leads epoch 1 with 0 back in its ISR, appends m0 and records broker 2's
LEO 1; the preferred election (epoch 2, leader 0) and 0's controlled shutdown (epoch 3,
leader 1, ISR {1, 2}) reach broker 1 in one delta, so makeLeader keeps broker 2's LEO from
before 2 truncated against 0; the HW rises over m0, and 2 is elected cleanly without it."""
STALE_LEO_CONFIG = {"brokers": 3, "max_records": 1, "max_leader_epoch": 4, "isr_shrink": False,
                    "controlled_shutdown": True, "preferred_election": True}


def test_the_stale_leo_loss_is_reachable_in_kraft() -> None:
    m = model(**STALE_LEO_CONFIG)
    s = walk(m, *STALE_LEO_KRAFT[:-4])
    assert (s.brokers[1].leader_epoch, s.brokers[1].high_watermark) == (1, 0)
    s = walk(m, *STALE_LEO_KRAFT[:-3])  # HandleCommit(1,2): epoch 1 -> 3, isNewLeader false
    assert (s.brokers[1].leader_epoch, s.brokers[1].high_watermark) == (3, 1)
    assert s.brokers[2].log == ()  # the ISR member 2 lacks the committed m0
    broken = {p.name for p in m.invariants() if not p.holds(s)}
    assert {"WeakIsr", "StrongIsr"} <= broken and "NoCommittedRecordLost" not in broken
    s = walk(m, *STALE_LEO_KRAFT)
    assert (s.brokers[2].leader, s.brokers[2].leader_epoch, s.brokers[2].log) == (2, 4, ())
    assert "NoCommittedRecordLost" in {p.name for p in m.invariants() if not p.holds(s)}


def test_the_fix_holds_on_the_same_walk() -> None:
    # leader_state_reset=on-epoch: the skipped epoch resets broker 2's LEO, the HW stays 0,
    # m0 is never committed and every invariant holds along the whole walk.
    m = model(**STALE_LEO_CONFIG, leader_state_reset="on-epoch")
    (s,) = m.init_states()
    for label in STALE_LEO_KRAFT:
        (s,) = [t for a, t in m.next_states(s) if a == label]
        assert all(p.holds(s) for p in m.invariants()), label
    assert s.brokers[1].high_watermark == 0


def test_initial_leader_is_the_state_after_the_preferred_replica_came_back() -> None:
    # initial_leader=1 starts where STALE_LEO_KRAFT's first 13 steps (and one more replay)
    # arrive: broker 1 leads, the preferred replica 0 is back in the ISR, every broker
    # follows 1 and has published everything, nothing is in flight, the logs are empty.
    long = model(**STALE_LEO_CONFIG)
    s = walk(long, *STALE_LEO_KRAFT[:13], "HandleCommit(2)")
    short = model(**STALE_LEO_CONFIG, initial_leader=1)
    (t,) = short.init_states()
    for state in (s, t):
        assert (state.controller.leader, state.controller.isr) == (1, 0b111)
        assert kraft(state).batches == ()
        assert [(br.alive, br.log, br.leader, br.in_sync_replica_ids, br.pending_isr)
                for br in state.brokers] == [(1, (), 1, 0, 0), (1, (), 1, 0b111, 0),
                                             (1, (), 1, 0, 0)]
    assert t.ghost.epoch_leader[0] == 1 and kraft(t).fetch_epochs[1] == (-1, -1, -1)
    assert KafkaConfig(controller="kraft", initial_leader=1, initial_isr=1).problems() == [
        "initial_leader 1 is not in the initial ISR (brokers 0..0)"]
    assert "initial_leader is a KRaft-mode parameter (controller=kraft)" in KafkaConfig(
        controller="zookeeper", initial_leader=1).problems()


STALE_LEO_SHORT = (
    "PreferredElection", "Produce(1)", "ControlledShutdown(0)", "Fetch(2)", "Fetch(2)",
    "HandleCommit(1,2)", "HandleCommit(0)", "HandleCommit(2)", "Truncate(2)",
    "ControlledShutdown(1)", "HandleCommit(2,2)")
"""The same loss from ``initial_leader=1`` (docs/scenarios.md #17, the scenario's shortest
trace), counted by hand, every step needed: 1 Init (broker 1 leads epoch 0, ISR {0, 1, 2},
broker 0 the preferred replica)  2 the preferred election (epoch 1, leader 0), which no
broker publishes yet  3 m0 on broker 1  4 broker 0's controlled shutdown (epoch 2, leader 1,
ISR {1, 2})  5-6 broker 2 fetches m0, then fetches again: broker 1 records its LEO 1
7 broker 1 publishes both records as one delta: makeLeader with isNewLeader false keeps
broker 2's LEO, the HW rises to 1 (broker 2 holds m0: committed, acknowledged)  8 broker 0
publishes epoch 1 only and leads it  9 broker 2 publishes epoch 1 only and follows 0
10 its first fetch from 0 finds the diverging epoch and truncates m0  11 broker 1's
controlled shutdown: leader 2, epoch 3  12 broker 2 publishes it and leads without m0."""
SHORT_CONFIG = {**STALE_LEO_CONFIG, "max_leader_epoch": 3, "initial_leader": 1,
                "make_leader_equal_epoch": "skip"}


def test_the_stale_leo_kraft_scenario_is_the_twelve_state_story() -> None:
    m = model(**SHORT_CONFIG)
    s = walk(m, *STALE_LEO_SHORT[:6])
    assert (s.brokers[1].leader_epoch, s.brokers[1].high_watermark) == (2, 1)
    assert s.ghost.acked[0] == 2  # m0 acknowledged in epoch 2
    s = walk(m, *STALE_LEO_SHORT[:9])
    assert s.brokers[2].log == () and s.controller.isr == 0b110  # in the ISR, without m0
    s = walk(m, *STALE_LEO_SHORT)
    assert (s.brokers[2].leader, s.brokers[2].leader_epoch, s.brokers[2].log) == (2, 3, ())
    assert not next(p for p in m.invariants() if p.name == "NoCommittedRecordLost").holds(s)
    fixed = model(**SHORT_CONFIG, leader_state_reset="on-epoch")
    assert walk(fixed, *STALE_LEO_SHORT[:6]).brokers[1].high_watermark == 0


STALE_LEO_SHORT_ORDER_13 = (
    "Produce(1)", "Fetch(2)", "Fetch(2)", "PreferredElection", "HandleCommit(0)",
    "HandleCommit(2)", "Truncate(2)", "ControlledShutdown(0)", "HandleCommit(1,2)", "Crash(1)",
    "FenceBroker(1)", "HandleCommit(2,2)")
"""Scenario 13's order from ``initial_leader=1`` (the follower truncates against the
preferred leader before the leader skips its epoch; docs/findings/stale-leo-failover.md,
"KRaft"): 13 states."""


def test_scenario_13_s_order_is_reachable_from_initial_leader_too() -> None:
    m = model(**SHORT_CONFIG)
    s = walk(m, *STALE_LEO_SHORT_ORDER_13[:9])
    assert (s.brokers[1].leader_epoch, s.brokers[1].high_watermark, s.brokers[2].log) == (
        2, 1, ())
    broken = {p.name for p in m.invariants() if not p.holds(s)}
    assert {"WeakIsr", "StrongIsr"} <= broken and "NoCommittedRecordLost" not in broken
    s = walk(m, *STALE_LEO_SHORT_ORDER_13)
    assert not next(p for p in m.invariants() if p.name == "NoCommittedRecordLost").holds(s)
