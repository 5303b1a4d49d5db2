"""Each action of the tla-* models on hand-built states, against the TLA+ specification's
semantics (read from KafkaReplication, Kip101, Kip279 and Kip320).  Replicas are indices
0, 1, 2 (r1, r2, r3); ``rec(id, epoch)`` is a record."""

from __future__ import annotations

from collections.abc import Sequence

from isrlab.core.truncation import Record
from isrlab.spec.tla import VERSIONS, TlaModel
from isrlab.spec.tla.layout import ReplicaView, StateView

rec = Record
NOBODY = ReplicaView(0, -1, None, frozenset(), ())


def model(name: str, replicas: int = 2, max_epoch: int = 2) -> TlaModel:
    return TlaModel(VERSIONS[name], replicas, 2, 2, max_epoch, ("WeakIsr", "StrongIsr"))


def replica(
    hw: int, epoch: int, leader: int | None, isr: Sequence[int], log: Sequence[Record]
) -> ReplicaView:
    return ReplicaView(hw, epoch, leader, frozenset(isr), tuple(log))


def state(
    m: TlaModel, replicas: Sequence[ReplicaView], requests: Sequence[tuple[int | None, set[int]]],
    quorum_isr: set[int], next_record_id: int = 0,
) -> bytes:
    return m.layout.pack(StateView(
        tuple(replicas), next_record_id, len(requests),
        tuple((leader, frozenset(isr)) for leader, isr in requests), frozenset(quorum_isr),
    ))


def steps(m: TlaModel, s: bytes, action: str) -> list[StateView]:
    """The successors of ``s`` by the actions whose label starts with ``action``."""
    return [m.layout.unpack(t) for label, t in m.next_states(s) if label.split("(")[0] == action]


def test_init_has_no_leader_and_the_quorum_isr_holds_every_replica() -> None:
    m = model("tla-kip320", replicas=3)
    (s,) = m.init_states()
    view = m.layout.unpack(s)
    assert view.quorum_leader is None and view.quorum_epoch == -1
    assert view.quorum_isr == {0, 1, 2}
    assert all(r == NOBODY for r in view.replicas)


def test_controller_elect_leader_takes_a_fresh_epoch_and_sends_a_request() -> None:
    m = model("tla-kip320")
    (s,) = m.init_states()
    elected = steps(m, s, "ControllerElectLeader")
    assert sorted(v.quorum_leader for v in elected if v.quorum_leader is not None) == [0, 1]
    for v in elected:
        assert v.next_leader_epoch == 1 and v.quorum_epoch == 0
        assert v.requests == ((v.quorum_leader, frozenset({0, 1})),)


def test_controller_stops_once_every_epoch_is_used() -> None:
    m = model("tla-kip320", max_epoch=1)
    s = state(m, [NOBODY, NOBODY], [(0, {0, 1}), (1, {0, 1})], {0, 1})
    assert steps(m, s, "ControllerElectLeader") == []
    assert steps(m, s, "ControllerShrinkIsr") == []


def test_controller_shrink_isr_distinguishes_its_three_cases() -> None:
    m = model("tla-kip320", replicas=3, max_epoch=3)
    # leader r1 alone in the ISR: the leader becomes None, the ISR is kept
    alone = state(m, [NOBODY] * 3, [(0, {0})], {0})
    (v,) = steps(m, alone, "ControllerShrinkIsr")
    assert v.requests[-1] == (None, frozenset({0})) and v.quorum_isr == {0}
    # leader r1 with r2: r1 leaves and the leader becomes None; r2 leaves and r1 stays leader
    shared = state(m, [NOBODY] * 3, [(0, {0, 1})], {0, 1})
    outcomes = {v.requests[-1] for v in steps(m, shared, "ControllerShrinkIsr")}
    assert outcomes == {(None, frozenset({1})), (0, frozenset({0}))}
    # r3 is not in the ISR: it cannot be removed
    assert len(steps(m, shared, "ControllerShrinkIsr")) == 2


def test_become_leader_takes_epoch_and_isr_but_keeps_its_high_watermark() -> None:
    m = model("tla-kip101")
    r1 = replica(1, 0, 1, [0, 1], [rec(0, 0)])
    r2 = replica(1, 0, 1, [0, 1], [rec(0, 0)])  # already leader of epoch 0
    s = state(m, [r1, r2], [(1, {0, 1}), (0, {0})], {0})
    (v,) = steps(m, s, "BecomeLeader")
    assert v.replicas[0] == replica(1, 1, 0, [0], [rec(0, 0)])


def test_become_leader_ignores_requests_of_older_epochs_and_without_leader() -> None:
    m = model("tla-kip101")
    r1 = replica(0, 1, 0, [0], [])
    s = state(m, [r1, NOBODY], [(0, {0, 1}), (0, {0})], {0})
    assert steps(m, s, "BecomeLeader") == []
    s = state(m, [NOBODY, NOBODY], [(None, {0, 1})], {0, 1})
    assert steps(m, s, "BecomeLeader") == []


def test_leader_write_appends_a_fresh_record_in_the_leaders_epoch_even_for_a_zombie() -> None:
    m = model("tla-kip320")
    zombie = replica(0, 0, 0, [0, 1], [])
    leader = replica(0, 1, 1, [1], [])
    s = state(m, [zombie, leader], [(0, {0, 1}), (1, {1})], {1}, next_record_id=1)
    writes = steps(m, s, "LeaderWrite")
    assert {v.replicas[0].log for v in writes} == {(rec(1, 0),), ()}
    assert {v.replicas[1].log for v in writes} == {(rec(1, 1),), ()}
    assert all(v.next_record_id == 2 for v in writes)


def test_leader_write_stops_at_max_records_and_at_a_full_log() -> None:
    m = model("tla-kip320")
    leader = replica(0, 0, 0, [0], [])
    s = state(m, [leader, NOBODY], [(0, {0})], {0}, next_record_id=2)
    assert steps(m, s, "LeaderWrite") == []
    full = replica(0, 0, 0, [0], [rec(0, 0), rec(1, 0)])
    s = state(m, [full, NOBODY], [(0, {0})], {0}, next_record_id=1)
    assert steps(m, s, "LeaderWrite") == []


def test_high_watermark_before_kip320_ignores_the_followers_epoch() -> None:
    leader = replica(0, 1, 0, [0, 1], [rec(0, 1)])
    stale = replica(0, 0, 0, [0, 1], [rec(0, 1)])  # follows r1 in epoch 0
    plain = model("tla-kip279")
    s = state(plain, [leader, stale], [(0, {0, 1}), (0, {0, 1})], {0, 1}, 1)
    (v,) = steps(plain, s, "LeaderIncHighWatermark")
    assert v.replicas[0].hw == 1
    fenced = model("tla-kip320")
    s = state(fenced, [leader, stale], [(0, {0, 1}), (0, {0, 1})], {0, 1}, 1)
    assert steps(fenced, s, "FencedLeaderIncHighWatermark") == []


def test_follower_replicate_copies_the_next_record_and_takes_the_smaller_hw() -> None:
    m = model("tla-kip101")
    leader = replica(2, 0, 0, [0, 1], [rec(0, 0), rec(1, 0)])
    follower = replica(0, 0, 0, [0, 1], [])
    s = state(m, [leader, follower], [(0, {0, 1})], {0, 1}, 2)
    (v,) = steps(m, s, "FollowerReplicate")
    assert v.replicas[1].log == (rec(0, 0),) and v.replicas[1].hw == 1


def test_truncate_to_hw_cuts_the_follower_log_at_its_high_watermark() -> None:
    m = model("tla-truncate-to-hw")
    follower = replica(1, 0, 0, [0, 1], [rec(0, 0), rec(1, 0)])
    leader = replica(1, 1, 1, [1], [rec(0, 0), rec(1, 0)])
    s = state(m, [follower, leader], [(0, {0, 1}), (1, {1})], {1}, 2)
    (v,) = steps(m, s, "BecomeFollowerTruncateToHighWatermark")
    assert v.replicas[0] == replica(1, 1, 1, [1], [rec(0, 0)])


def test_kip101_truncation_is_disabled_past_the_follower_log_end() -> None:
    # The follower's latest epoch (0) is the leader's latest: the leader answers its end offset
    # 2, beyond the follower's end 1, so TruncateTo's guard disables the step.
    m = model("tla-kip101")
    follower = replica(0, 0, 0, [0, 1], [rec(0, 0)])
    leader = replica(0, 1, 1, [1], [rec(0, 0), rec(1, 0)])
    s = state(m, [follower, leader], [(0, {0, 1}), (1, {1})], {1}, 2)
    assert steps(m, s, "BecomeFollowerTruncateKip101") == []


def test_kip101_truncates_at_the_start_of_the_first_larger_epoch() -> None:
    m = model("tla-kip101")
    follower = replica(0, 0, 0, [0, 1], [rec(0, 0), rec(1, 0)])
    leader = replica(0, 2, 1, [1], [rec(0, 0), rec(2, 1)])
    s = state(m, [follower, leader], [(0, {0, 1}), (1, {1}), (1, {1})], {1}, 2)
    follows = steps(m, s, "BecomeFollowerTruncateKip101")
    assert {v.replicas[0].log for v in follows} == {(rec(0, 0),)}
    assert len(follows) == 2  # epochs 1 and 2 both name r2 and exceed r1's epoch 0


def test_kip279_counts_the_empty_follower_twice() -> None:
    m = model("tla-kip279")
    leader = replica(0, 0, 1, [1], [])
    s = state(m, [NOBODY, leader], [(1, {0, 1})], {0, 1})
    follows = steps(m, s, "BecomeFollowerTruncateKip279")
    assert len(follows) == 2 and follows[0] == follows[1]
    assert follows[0].replicas[0] == replica(0, 0, 1, [0, 1], [])


def test_kip279_truncates_after_the_last_matching_offset() -> None:
    m = model("tla-kip279")
    follower = replica(1, 0, 0, [0, 1], [rec(0, 0), rec(1, 0)])
    leader = replica(1, 1, 1, [1], [rec(0, 0), rec(2, 1)])
    s = state(m, [follower, leader], [(0, {0, 1}), (1, {1})], {1}, 3)
    (v,) = steps(m, s, "BecomeFollowerTruncateKip279")
    assert v.replicas[0].log == (rec(0, 0),) and v.replicas[0].hw == 1


def test_kip320_truncation_waits_for_the_leader_to_take_the_epoch() -> None:
    m = model("tla-kip320")
    follower = replica(0, 0, 0, [0, 1], [rec(0, 0)])
    late = replica(0, 0, 0, [0, 1], [])  # r2 still follows r1 in epoch 0
    s = state(m, [follower, late], [(0, {0, 1}), (1, {0, 1})], {0, 1}, 1)
    assert steps(m, s, "FencedBecomeFollowerAndTruncate") == []
    ready = replica(0, 1, 1, [0, 1], [])
    s = state(m, [follower, ready], [(0, {0, 1}), (1, {0, 1})], {0, 1}, 1)
    (v,) = steps(m, s, "FencedBecomeFollowerAndTruncate")
    assert v.replicas[0] == replica(0, 1, 1, [0, 1], [])


def test_kip320_shrink_counts_a_member_both_off_epoch_and_lagging_twice() -> None:
    m = model("tla-kip320")
    leader = replica(0, 1, 0, [0, 1], [rec(0, 1)])
    off_epoch = replica(0, 0, 0, [0, 1], [])
    s = state(m, [leader, off_epoch], [(0, {0, 1}), (0, {0, 1})], {0, 1}, 1)
    shrinks = steps(m, s, "FencedLeaderShrinkIsr")
    assert len(shrinks) == 2 and shrinks[0] == shrinks[1]
    assert shrinks[0].quorum_isr == {0} and shrinks[0].replicas[0].isr == {0}


def test_kip320_expand_waits_until_the_hw_reaches_the_leaders_epoch() -> None:
    m = model("tla-kip320")
    # r1 leads epoch 1 with HW 0 at a record of epoch 0: not yet in its own epoch
    leader = replica(0, 1, 0, [0], [rec(0, 0)])
    follower = replica(0, 1, 0, [0], [rec(0, 0)])
    s = state(m, [leader, follower], [(0, {0}), (0, {0})], {0}, 1)
    assert steps(m, s, "FencedLeaderExpandIsr") == []
    plain = model("tla-kip279")
    s = state(plain, [leader, follower], [(0, {0}), (0, {0})], {0}, 1)
    assert len(steps(plain, s, "LeaderExpandIsr")) == 1


def test_only_the_true_leader_changes_the_isr() -> None:
    m = model("tla-kip279")
    zombie = replica(0, 0, 0, [0, 1], [rec(0, 0)])
    follower = replica(0, 0, 0, [0, 1], [])
    s = state(m, [zombie, follower], [(0, {0, 1}), (1, {1})], {1}, 1)
    assert steps(m, s, "LeaderShrinkIsr") == []


def test_weak_isr_fails_when_a_local_isr_member_lacks_a_record_below_the_hw() -> None:
    m = model("tla-kip279")
    leader = replica(1, 0, 0, [0, 1], [rec(0, 0)])
    s = state(m, [leader, replica(0, 0, 0, [0, 1], [])], [(0, {0, 1})], {0}, 1)
    assert not m.weak_isr(s)
    assert m.strong_isr(s)  # the quorum ISR holds only the leader


def test_strong_isr_fails_when_a_quorum_isr_member_has_another_record() -> None:
    m = model("tla-kip279")
    leader = replica(1, 0, 0, [0], [rec(0, 0)])
    other = replica(0, 0, 0, [0], [rec(1, 0)])
    s = state(m, [leader, other], [(0, {0, 1})], {0, 1}, 2)
    assert m.weak_isr(s) and not m.strong_isr(s)


def test_leader_in_isr_fails_in_init_since_none_is_no_member() -> None:
    m = model("tla-kip320")
    (s,) = m.init_states()
    assert not m.leader_in_isr(s) and m.type_ok(s)
