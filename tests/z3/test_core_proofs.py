"""proofs/ for core's functions (kafka-core): what is recorded, and that it still holds."""

from __future__ import annotations

import z3

from checker.z3 import PROVED, REFUTED, Fresh, family_relation, make_frame, step_obligation
from proofs.core_obligations import CORE_MODEL
from proofs.obligations import GroupResult, groups, load
from spec.symbolic.core_system import CoreKafkaSystem

UNFENCED = {"MakeLeader", "MakeFollower[truncate-to-hw]", "MakeFollower[kip101]",
            "MakeFollower[kip279]"}
LOWERS_HW = {"MakeFollower[kip101]", "MakeFollower[kip279]", "BecomeFollower[kip101]",
             "BecomeFollower[kip279]", "ProcessPartitionData"}


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
    assert len(rows) == 6 and all(r.status == PROVED for r in rows)


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
    solver = z3.Solver()
    solver.add(*[p.holds(s) for p in system.invariants()], system.log_epochs_sorted().holds(s))
    solver.add(family_relation(system, "BecomeFollower[kip101]", s, t, Fresh("p@v")))
    solver.add(system.broker(t).end < system.broker(s).end)
    assert solver.check() == z3.sat
