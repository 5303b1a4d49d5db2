"""proofs/ for core's functions (kafka-core): what is recorded, and that it still holds."""

from __future__ import annotations

from collections.abc import Callable

import pytest
import z3

from isrlab.checker.z3 import (
    PROVED,
    REFUTED,
    Frame,
    Fresh,
    family_relation,
    make_frame,
    step_obligation,
)
from isrlab.proofs.core_obligations import CORE_MODEL
from isrlab.proofs.obligations import Group, GroupResult, groups, load
from isrlab.spec.symbolic import core_pair
from isrlab.spec.symbolic.core_kafka import BrokerState, SymLog
from isrlab.spec.symbolic.core_pair import PairSystem, PairView, follower_log
from isrlab.spec.symbolic.core_system import BrokerView, CoreKafkaSystem
from tests.z3.conftest import check_alone

ATOMIC_FETCH = core_pair.atomic_fetch

UNFENCED = {"MakeLeader", "MakeLeader[kafka-4485]", "MakeFollower[truncate-to-hw]",
            "MakeFollower[kip101]", "MakeFollower[kip279-2.0]", "MakeFollower[kip279]"}
LOWERS_HW = {"MakeFollower[kip101]", "MakeFollower[kip279-2.0]", "MakeFollower[kip279]",
             "BecomeFollower[kip101]", "BecomeFollower[kip279-2.0]", "BecomeFollower[kip279]",
             "ProcessPartitionData"}


def recorded(group: str) -> GroupResult:
    return next(g for g in load() if g.model == CORE_MODEL and g.group == group)


def test_the_structural_invariants_of_core_s_functions_are_still_inductive() -> None:
    group = next(g for g in groups(CORE_MODEL) if g.key == "structural")
    rows = group.run(timeout_ms=20_000).rows
    assert rows and all(r.status == PROVED for r in rows)
    assert {r.target for r in rows} >= {"HwWithinLog", "LeaderInIsr", "ZkLeaderInIsr"}
    assert [(r.kind, r.target, r.action) for r in rows] == [
        (r.kind, r.target, r.action) for r in recorded("structural").rows]


def test_only_the_unfenced_role_changes_may_lower_an_epoch() -> None:
    refuted = {r.action for r in recorded("epochs").rows if r.status == REFUTED}
    assert refuted == UNFENCED
    assert all(r.status == PROVED for r in recorded("epochs").rows if r.action not in UNFENCED)


def test_only_leader_epoch_truncation_and_the_follower_fetch_lower_the_hw() -> None:
    rows = recorded("hw-monotone").rows
    assert {r.action for r in rows if r.status == REFUTED} == LOWERS_HW
    assert all(r.status == PROVED for r in rows if r.action not in LOWERS_HW)


def test_truncation_keeps_the_hw_when_the_leader_holds_the_committed_prefix() -> None:
    rows = recorded("hw-monotone-given-prefix").rows
    assert len(rows) == 8 and all(r.status == PROVED for r in rows)


def _kip101_truncation(with_sorted_epochs: bool) -> str:
    system = CoreKafkaSystem(3, leader_holds_committed_prefix=True)
    prop = next(p for p in system.step_properties() if p.name == "HwNeverDecreases")
    hypotheses = system.invariants() + ([system.log_epochs_sorted()] if with_sorted_epochs
                                        else [])
    return step_obligation(system, prop, hypotheses, "BecomeFollower[kip101]", 20_000,
                           system.magnitudes).status


def test_kip101_needs_sorted_epochs_to_keep_the_hw() -> None:
    # Without the sorted-epochs hypothesis an unsorted follower log lets the leader's first
    # larger epoch sit below the HW: the lemma is needed, not decoration.
    assert _kip101_truncation(with_sorted_epochs=False) == REFUTED
    assert _kip101_truncation(with_sorted_epochs=True) == PROVED


def test_the_conditional_proof_is_not_vacuous() -> None:
    # Under every hypothesis, a KIP-101 truncation that really cuts the log exists.
    system = CoreKafkaSystem(3, leader_holds_committed_prefix=True)
    s = make_frame(system.signature(), 0, "v")
    t = make_frame(system.signature(), 1, "v")
    assert check_alone(  # 0.03 s alone; once over 10 minutes in a suite run (conftest)
        *[p.holds(s) for p in system.invariants()], system.log_epochs_sorted().holds(s),
        family_relation(system, "BecomeFollower[kip101]", s, t, Fresh("p@v")),
        system.broker(t).end < system.broker(s).end) == z3.sat


def _pair_group() -> Group:
    return next(g for g in groups(CORE_MODEL) if g.key == "pair")


def test_the_pair_invariants_are_still_inductive() -> None:
    rows = _pair_group().run(timeout_ms=20_000).rows
    assert rows and all(r.status == PROVED for r in rows)
    assert {r.target for r in rows} == {
        "LeaderWellFormed", "FollowerLogIsLeaderPrefix", "FollowerHwWithinLeaderHw",
        "RemoteLeoNotAhead", "IsrFollowerHoldsCommitted"}
    assert [(r.kind, r.target, r.action) for r in rows] == [
        (r.kind, r.target, r.action) for r in recorded("pair").rows]


# Leader (epoch 1) holds [(0, 1), (1, 1)] with HW 1; followers 1 and 2 in the ISR at LEO 1;
# follower 1 holds [(0, 1)] with HW 1: every pair invariant holds, one record is uncommitted.
_CAUGHT_UP = (1, 0, 0, 1, 0)
BEHIND_BY_ONE = PairView(
    BrokerView(0, 1, 1, 1, 1, 0, True, ((0, 1), (1, 1)), (True, True, True),
               (_CAUGHT_UP, _CAUGHT_UP)),
    ((0, 1),), 1)


def _fetch_from(view: PairView, *post: Callable[[Frame], z3.BoolRef]) -> z3.CheckSatResult:
    """Is there a Fetch(1) from the pinned ``view`` (checked against every pair invariant)
    to a state satisfying every ``post``?"""
    system = PairSystem(3)
    s = make_frame(system.signature(), 0, "m")
    t = make_frame(system.signature(), 1, "m")
    solver = z3.Solver()
    solver.set(timeout=20_000)
    solver.add(system.pin(s, view), *[p.holds(s) for p in system.invariants()])
    solver.add(family_relation(system, "Fetch", s, t, Fresh("p@m")), *[f(t) for f in post])
    return solver.check()


def test_the_pair_invariants_admit_a_real_fetch() -> None:
    # Not vacuous: the follower fetches the uncommitted record.
    assert _fetch_from(BEHIND_BY_ONE, lambda t: follower_log(t).end == 2) == z3.sat


def _mutant_fetch(s: BrokerState, t: BrokerState, f: SymLog, g: SymLog, fhw: z3.ArithRef,
                  ghw: z3.ArithRef, now: z3.ArithRef,
                  epoch_start: z3.ArithRef | None) -> z3.BoolRef:
    # The follower takes its own new LEO as its HW instead of min(leader HW, LEO).
    readable = z3.And(s.start <= f.end, f.end <= s.end)
    return z3.And(ATOMIC_FETCH(s, t, f, g, fhw, z3.FreshInt("ignored"), now, epoch_start),
                  ghw == z3.If(readable, g.end, fhw))


def _breaks_follower_hw(t: Frame) -> z3.BoolRef:
    system = PairSystem(3)
    target = next(p for p in system.invariants() if p.name == "FollowerHwWithinLeaderHw")
    return z3.Not(target.holds(t))


def test_a_follower_hw_past_the_leader_s_is_caught(monkeypatch: pytest.MonkeyPatch) -> None:
    assert _fetch_from(BEHIND_BY_ONE, _breaks_follower_hw) == z3.unsat
    monkeypatch.setattr(core_pair, "atomic_fetch", _mutant_fetch)
    assert _fetch_from(BEHIND_BY_ONE, _breaks_follower_hw) == z3.sat
