"""KIP-966 in the ``kafka`` model: the controller's ELR and last-known ELR, the HW rule, the
election from the ELR, the unclean shutdown, unclean recovery, and ``unavailable_leader``.

Each test walks the model by the labels of its steps from the initial state (two brokers,
broker 0 leading, both in the ISR) and checks the fields KIP-966 names; the expected values
come from KIP-966's rules applied by hand.
"""

from __future__ import annotations

from typing import Any

import pytest

from isrlab.core.elr import LogEnd, PartitionRegistration
from isrlab.spec.kafka.config import KafkaConfig
from isrlab.spec.kafka.elr import elect
from isrlab.spec.kafka.model import KafkaModel
from isrlab.spec.kafka.state import F_UNCLEAN, NONE, KafkaState, members, to_plain
from tests.spec.walks import walk


def model(**kw: Any) -> KafkaModel:
    """The model with ``kw``; the walks below spell one-step ISR writes (a shrink is
    ``ShrinkIsr(0)`` alone), so ``isr_changes`` is ``zookeeper`` unless given (KIP-966 with
    AlterPartition's round trip: tests/spec/kafka/test_alter_partition.py).  The stories
    drop a follower at the leader's LEO after a ``Tick``, so ``kafka_7152`` is off unless
    given (Kafka 2.1+ keeps such a follower, KAFKA-7152; a follower one record behind
    leaves the same way with it on, at the cost of a longer walk)."""
    kw.setdefault("isr_changes", "zookeeper")
    kw.setdefault("kafka_7152", False)
    return KafkaModel(KafkaConfig(controller="zookeeper", **kw))


def labels(m: KafkaModel, state: KafkaState) -> list[str]:
    return [a for a, _ in m.next_states(state)]


COMMIT = ("Produce(0)", "Fetch(1)", "Fetch(1)")
"""m0 appended by broker 0, fetched by broker 1, and committed by broker 1's next fetch."""


@pytest.mark.parametrize("elr", [False, True])
def test_a_follower_leaving_an_isr_below_min_isr_joins_the_elr(elr: bool) -> None:
    s = walk(model(elr=elr, min_isr=2), "Tick", "ShrinkIsr(0)")
    assert members(s.controller.isr) == (0,)
    assert members(s.controller.elr) == ((1,) if elr else ())
    assert s.controller.last_known_elr == 0


def test_the_elr_empties_once_the_isr_is_back_at_min_isr() -> None:
    # PartitionChangeBuilder: a target ISR of min.insync.replicas members clears both lists.
    s = walk(model(elr=True, min_isr=2), "Tick", "ShrinkIsr(0)", "Fetch(1)")
    assert members(s.controller.isr) == (0, 1)
    assert s.controller.elr == 0 and s.controller.last_known_elr == 0


def test_no_elr_while_the_isr_stays_at_min_isr() -> None:
    s = walk(model(elr=True, min_isr=1), "Tick", "ShrinkIsr(0)")
    assert members(s.controller.isr) == (0,) and s.controller.elr == 0


@pytest.mark.parametrize(("elr", "hw"), [(False, 1), (True, 0)])
def test_the_hw_waits_while_the_isr_is_below_min_isr(elr: bool, hw: int) -> None:
    # acks=1 so that the write is appended with an ISR of one; KIP-966's
    # maybeIncrementLeaderHW does not move the HW under min.insync.replicas.
    s = walk(model(elr=elr, min_isr=2, acks="1"), "Tick", "ShrinkIsr(0)", "Produce(0)")
    assert s.brokers[0].log and s.brokers[0].high_watermark == hw


def test_an_elr_member_is_elected_cleanly_when_no_isr_member_is_alive() -> None:
    m = model(elr=True, min_isr=2)
    s = walk(m, *COMMIT, "Tick", "ShrinkIsr(0)", "Crash(0)", "ElectLeader")
    c = s.controller
    assert (c.leader, c.leader_epoch, members(c.isr)) == (1, 1, (1,))
    assert members(c.elr) == (0,)  # the fenced leader, clean, below min ISR
    assert not s.ghost.flags & F_UNCLEAN
    assert [r.leader for r in s.channels] == [1]  # LeaderAndIsr to broker 1, the live one
    s = walk_from(m, s, "Deliver(LeaderAndIsr(to=1,cepoch=0,leader=1,epoch=1,isr=(1,)))")
    assert s.brokers[1].leader == 1 and s.brokers[1].log == walk(m, *COMMIT).brokers[0].log


def test_without_elr_a_replica_outside_the_isr_is_not_elected() -> None:
    m = model(elr=False, min_isr=2)
    s = walk(m, *COMMIT, "Tick", "ShrinkIsr(0)", "Crash(0)")
    assert "ElectLeader" not in labels(m, s)


def walk_from(m: KafkaModel, state: KafkaState, *steps: str) -> KafkaState:
    for label in steps:
        (state,) = [s for a, s in m.next_states(state) if a == label]
    return state


@pytest.mark.parametrize(("loss", "elr_after", "lke_after"),
                         [("Crash(1)", (1,), ()), ("PowerLoss(1)", (), (1,))])
def test_a_replica_back_from_a_power_loss_leaves_the_elr(
    loss: str, elr_after: tuple[int, ...], lke_after: tuple[int, ...]
) -> None:
    m = model(elr=True, min_isr=2, crashes="unclean")
    s = walk(m, *COMMIT, "Tick", "ShrinkIsr(0)")
    assert members(s.controller.elr) == (1,)
    s = walk_from(m, s, loss)
    assert members(s.controller.elr) == (1,)  # the controller learns at re-registration
    s = walk_from(m, s, "Restart(1)")
    assert members(s.controller.elr) == elr_after
    assert members(s.controller.last_known_elr) == lke_after
    assert s.brokers[1].unclean_shutdown == 0


def test_the_last_isr_member_back_from_a_power_loss_is_not_elected_again() -> None:
    # docs/scenarios.md #11 with ELR: broker 0 returns without m0; handleBrokerUncleanShutdown
    # takes it out of the ISR and the ELR, the partition stays offline, and broker 1 (still
    # in the ISR, with m0) leads once it is back.
    m = model(elr=True, min_isr=2, crashes="unclean", max_leader_epoch=1)
    s = walk(m, *COMMIT, "Crash(1)", "PowerLoss(0)")
    assert s.brokers[0].unclean_shutdown == 1
    s = walk_from(m, s, "Restart(0)")
    c = s.controller
    assert (c.leader, members(c.isr), c.elr, members(c.last_known_elr)) == (NONE, (1,), 0, (0,))
    assert s.channels == ()
    s = walk_from(m, s, "Restart(1)", "ElectLeader")
    assert (s.controller.leader, s.controller.leader_epoch) == (1, 1)
    assert not s.ghost.flags & F_UNCLEAN


def test_without_elr_the_last_isr_member_is_elected_again_without_its_records() -> None:
    m = model(elr=False, min_isr=2, crashes="unclean", max_leader_epoch=1)
    s = walk(m, *COMMIT, "Crash(1)", "PowerLoss(0)", "Restart(0)")
    assert (s.controller.leader, s.controller.leader_epoch) == (0, 1)
    assert s.brokers[0].log == () and not s.ghost.flags & F_UNCLEAN


def test_an_isr_follower_back_from_a_power_loss_leaves_the_isr() -> None:
    # handleBrokerUncleanShutdown also removes a follower from the ISR: here before
    # RemoveDeadFromIsr ran; the controller write bumps the leader epoch (zkVersion).
    m = model(elr=True, min_isr=2, crashes="unclean")
    s = walk(m, *COMMIT, "PowerLoss(1)", "Restart(1)")
    c = s.controller
    assert (c.leader, c.leader_epoch, members(c.isr)) == (0, 1, (0,))
    assert c.elr == 0 and members(c.last_known_elr) == (1,)


REG = PartitionRegistration(replicas=(0, 1, 2), isr=(), leader=-1, elr=(),
                            last_known_elr=(0, 1))
ENDS = {0: LogEnd(0, 1), 1: LogEnd(1, 1), 2: LogEnd(0, 3)}


@pytest.mark.parametrize(("recovery", "acceptable", "leader"), [
    ("first-alive", {0, 1, 2}, 0),  # today's unclean election: assignment order
    ("aggressive", {0, 1, 2}, 1),  # the longest log: last epoch 1 beats LEO 3 in epoch 0
    ("aggressive", {0, 2}, 2),
    ("balanced", {0, 1, 2}, 1),
    ("balanced", {0, 2}, None),  # waits for broker 1, a last-known ELR member
])
def test_unclean_recovery_elects_the_longest_log(
    recovery: str, acceptable: set[int], leader: int | None
) -> None:
    elected = elect(REG, frozenset(acceptable), 2, True, recovery, ENDS)
    assert (elected.leader if elected else None) == leader
    if elected:
        assert elected.unclean and members(elected.isr) == (elected.leader,)
        assert elected.elr == 0 and elected.last_known_elr == 0


def test_no_unclean_recovery_without_unclean_election() -> None:
    assert elect(REG, frozenset({0, 1, 2}), 2, False, "aggressive", ENDS) is None


@pytest.mark.parametrize(("recovery", "elected"), [
    ("first-alive", True), ("aggressive", True), ("balanced", False)])
def test_unclean_recovery_in_the_model(recovery: str, elected: bool) -> None:
    # Jepsen's story (docs/scenarios.md #5): broker 1 alone is alive, outside the ISR.
    # Balanced recovery with no last-known ELR waits for a majority (both brokers).
    # Without ELR (ZooKeeper's ISR rules), as in that story.
    m = model(unclean_election=True, unclean_recovery=recovery, elr=False)
    s = walk(m, "Tick", "ShrinkIsr(0)", "Produce(0)", "Crash(0)")
    assert ("ElectLeader" in labels(m, s)) == elected
    if elected:
        s = walk_from(m, s, "ElectLeader")
        assert s.controller.leader == 1 and s.ghost.flags & F_UNCLEAN


@pytest.mark.parametrize(("behaviour", "log", "leader", "truncating"), [
    ("follow", 0, 0, 0), ("fetcher", 1, 0, 1), ("create-log", 1, NONE, 0)])
def test_a_follower_told_to_follow_a_down_leader(
    behaviour: str, log: int, leader: int, truncating: int
) -> None:
    # Broker 1 restarts (sent "follow 0 in epoch 0"), broker 0 loses m0 in a power loss,
    # then broker 1 handles the request.  follow: it truncates against broker 0's empty log
    # at once (the model's shortcut); fetcher: it follows broker 0 and keeps m0 until
    # broker 0 answers; create-log: makeFollowers leaves the partition alone.
    m = model(crashes="unclean", unavailable_leader=behaviour)
    s = walk(m, *COMMIT, "Crash(1)", "Restart(1)", "PowerLoss(0)",
             "Deliver(LeaderAndIsr(to=1,cepoch=0,leader=0,epoch=0,isr=(0, 1)))")
    b1 = s.brokers[1]
    assert (len(b1.log), b1.leader, b1.truncating) == (log, leader, truncating)


def test_the_fetcher_truncates_once_the_leader_answers_in_its_epoch() -> None:
    # Broker 1 starts outside the ISR.  It restarts (sent "follow 0 in epoch 0"), broker 0
    # crashes, broker 1 handles the request: Truncating.  Broker 0's restart elects it
    # again (epoch 1, no other ISR member); broker 1 may not fetch, nor truncate while
    # its epoch (0) is not broker 0's (KIP-320); after its epoch-1 request (same leader:
    # the fetcher keeps its state) it truncates, and only then fetches.
    m = model(initial_isr=1, unavailable_leader="fetcher")
    s = walk(m, "Crash(1)", "Restart(1)", "Crash(0)",
             "Deliver(LeaderAndIsr(to=1,cepoch=0,leader=0,epoch=0,isr=(0,)))", "Restart(0)",
             "Deliver(LeaderAndIsr(to=0,cepoch=0,leader=0,epoch=1,isr=(0,)))")
    assert s.brokers[1].truncating == 1
    assert not {"Fetch(1)", "Truncate(1)"} & set(labels(m, s))
    s = walk_from(m, s, "Deliver(LeaderAndIsr(to=1,cepoch=0,leader=0,epoch=1,isr=(0,)))")
    assert s.brokers[1].truncating == 1 and "Fetch(1)" not in labels(m, s)
    s = walk_from(m, s, "Truncate(1)")
    assert s.brokers[1].truncating == 0
    s = walk_from(m, s, "Produce(0)", "Fetch(1)")
    assert len(s.brokers[1].log) == 1


def test_the_elr_fields_survive_encoding() -> None:
    m = model(elr=True, min_isr=2, crashes="unclean")
    s = walk(m, *COMMIT, "Tick", "ShrinkIsr(0)", "PowerLoss(1)")
    assert s.controller.elr and s.brokers[1].unclean_shutdown
    assert m.decode(m.encode(s)) == s


def test_without_elr_the_encoding_leaves_the_new_fields_out() -> None:
    m = model()
    (s,) = m.init_states()
    plain = to_plain(s, True)
    brokers = plain[1]
    assert isinstance(brokers, tuple)
    assert plain[0] == tuple(s.controller)[:6] and all(len(b) == 12 for b in brokers)
    assert m.decode(m.encode(s)) == s


def test_a_leader_back_from_a_power_loss_is_not_restarted_past_the_epoch_bound() -> None:
    # Broker 1 leads epoch 1 (= max_leader_epoch) and loses power.  Its return needs a
    # KRaft change in epoch 2 (fence it, elect broker 0 from the ELR): out of bounds, so
    # no Restart(1); restarting it without the change would let the controller forget the
    # unclean shutdown and keep the emptied broker 1 electable (ElrHoldsCommitted found it).
    m = model(elr=True, min_isr=2, crashes="unclean", max_leader_epoch=1)
    s = walk(m, *COMMIT, "Crash(0)", "Restart(0)")
    assert (s.controller.leader, members(s.controller.elr)) == (1, (0,))
    s = walk_from(m, s, "PowerLoss(1)")
    assert "Restart(1)" not in labels(m, s)
    wider = model(elr=True, min_isr=2, crashes="unclean", max_leader_epoch=2)
    s = walk(wider, *COMMIT, "Crash(0)", "Restart(0)", "PowerLoss(1)", "Restart(1)")
    c = s.controller
    assert (c.leader, c.leader_epoch, members(c.last_known_elr)) == (0, 2, (1,))


def test_a_power_loss_leaves_any_prefix_of_the_unflushed_tail_with_crash_loss_tail() -> None:
    # Two unflushed records on broker 0: all-unflushed loses both; tail may keep 0, 1 or 2
    # (isrlab.core.log_recovery.surviving_lengths), each an unclean shutdown for the ELR.
    kw: dict[str, Any] = {"crashes": "unclean", "elr": True, "acks": "1"}
    s = walk(model(**kw), "Produce(0)", "Produce(0)")
    worst = [x for a, x in model(**kw).next_states(s) if a.startswith("PowerLoss(0")]
    assert [len(x.brokers[0].log) for x in worst] == [0]
    m = model(crash_loss="tail", **kw)
    lost = {a: x for a, x in m.next_states(s) if a.startswith("PowerLoss(0")}
    assert sorted(lost) == ["PowerLoss(0,0)", "PowerLoss(0,1)", "PowerLoss(0,2)"]
    assert [len(lost[f"PowerLoss(0,{k})"].brokers[0].log) for k in range(3)] == [0, 1, 2]
    assert all(x.brokers[0].unclean_shutdown == 1 for x in lost.values())


def test_kip966s_own_story_on_three_replicas() -> None:
    # KIP-966's motivating case: three replicas, min.insync.replicas=2; m0 is committed on
    # all three, both followers fall out of the ISR (ISR {0} below min ISR: they join the
    # ELR), broker 0 loses m0 in a power loss.  The controller fences it into the ELR too
    # and elects broker 1 from the ELR, cleanly, with m0; broker 0 back from the power
    # loss leaves the ELR for the last-known ELR.
    m = model(elr=True, brokers=3, min_isr=2, crashes="unclean", unavailable_leader="fetcher")
    s = walk(m, "Produce(0)", "Fetch(1)", "Fetch(2)", "Fetch(1)", "Fetch(2)")
    assert s.brokers[0].high_watermark == 1
    s = walk_from(m, s, "Tick", "ShrinkIsr(0)")
    assert (members(s.controller.isr), members(s.controller.elr)) == ((0,), (1, 2))
    s = walk_from(m, s, "PowerLoss(0)", "ElectLeader")
    c = s.controller
    assert (c.leader, members(c.isr), members(c.elr)) == (1, (1,), (0, 2))
    assert not s.ghost.flags & F_UNCLEAN and s.brokers[1].log
    s = walk_from(m, s, "Restart(0)")
    assert (members(s.controller.elr), members(s.controller.last_known_elr)) == ((2,), (0,))
