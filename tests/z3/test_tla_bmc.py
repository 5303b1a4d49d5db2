"""Bounded model checking of the tla-* models finds TLC's counterexamples at TLC's lengths.

Golden lengths come from docs/conformance.md (TLC 2.15 on the public TLA+ specification): a trace
of N states is N-1 steps, and every depth below is refuted, so no shorter trace exists.
Runs of several minutes are marked ``heavy``; ISRLAB_SKIP_HEAVY=1 skips them.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest
import z3
from click.testing import CliRunner

from isrlab.checker.trace import read_itf
from isrlab.checker.z3 import bmc
from isrlab.checker.z3.bmc import ARITH_OPTIONS, Unrolling
from isrlab.checker.z3.system import make_frame
from isrlab.cli import cli
from isrlab.spec.symbolic.bridge import concrete, replay
from isrlab.spec.symbolic.state import KState, from_variables
from tests.z3.conftest import build_pair, heavy

CONFIG_B = {"replicas": 3, "max_leader_epoch": 3}


def shortest(name: str, invariants: list[str], depth: int,
             params: Mapping[str, int] | None = None, solver: str = "auto") -> tuple[int, int]:
    """(states in the shortest counterexample, steps proved violation-free)."""
    model, system = build_pair(name, **(params or {}))
    result = bmc(system, invariants, depth, logic="QF_LIA",
                 options=system.solver_options, solver=solver,
                 partial_order=system.partial_order, **system.symmetry_breaking(invariants))
    assert result.trace is not None
    replay(model, result.trace, system.replicas)  # a real trace of the explicit model
    return len(result.trace), result.proved_steps


def test_cli_bmc_finds_the_truncate_to_hw_weak_isr_trace_of_9_states(tmp_path: Path) -> None:
    # docs/conformance.md, configuration A: KafkaTruncateToHighWatermark, WeakIsr, 9 states.
    report, itf = tmp_path / "r.json", tmp_path / "t.itf.json"
    result = CliRunner().invoke(cli, ["bmc", "--model", "tla-truncate-to-hw", "--depth", "10",
                                      "--json", str(report), "--itf", str(itf)])
    assert result.exit_code == 1, result.output
    assert "VIOLATION of WeakIsr (trace of 9 states)" in result.output
    data = json.loads(report.read_text())
    assert data["engine"] == data["bmc"]["solver"].split()[0] + "-bmc"  # who answered
    assert data["violation"]["length"] == 9
    assert data["bmc"]["proved_steps"] == 7
    assert [d["verdict"] for d in data["bmc"]["depths"]] == ["unsat"] * 8 + ["sat"]
    steps = read_itf(itf)
    assert len(steps) == 9
    # The trace is the explicit model's: each state is a successor of the previous one.
    model, _ = build_pair("tla-truncate-to-hw")
    state = next(iter(model.init_states()))
    assert dict(model.variables(state)) == dict(steps[0].state)
    for step in steps[1:]:
        state = next(s for label, s in model.next_states(state)
                     if label == step.action and concrete(model, s, 2)
                     == concrete_view(step.state))
    assert not model.invariants()[0].holds(state)


def concrete_view(view: Mapping[str, Any]) -> KState:
    """The KState of an ITF-read variables view of a 2-replica model."""
    return from_variables(view, ["r1", "r2"])


def test_cli_bmc_reports_absence_within_a_small_depth() -> None:
    result = CliRunner().invoke(cli, ["bmc", "--model", "tla-kip320", "--depth", "4"])
    assert result.exit_code == 0, result.output
    assert "no violation in any trace of up to 5 states" in result.output


def test_cli_bmc_rejects_a_model_without_an_encoding() -> None:
    result = CliRunner().invoke(cli, ["bmc", "--model", "toy-counter"])
    assert result.exit_code == 2
    assert "no symbolic encoding" in result.output


def test_cli_bmc_rejects_an_invariant_it_cannot_encode() -> None:
    result = CliRunner().invoke(cli, ["bmc", "--model", "tla-kip320",
                                      "-p", "invariants=TypeOk"])
    assert result.exit_code == 2
    assert "cannot check TypeOk" in result.output


@pytest.mark.heavy
@heavy
def test_truncate_to_hw_strong_isr_needs_9_states_in_configuration_b() -> None:
    assert shortest("tla-truncate-to-hw", ["StrongIsr"], 9, CONFIG_B) == (9, 7)


@pytest.mark.start_first(5)
@pytest.mark.heavy
@heavy
def test_kip101_breaks_an_isr_invariant_in_12_states_in_configuration_a() -> None:
    assert shortest("tla-kip101", ["WeakIsr", "StrongIsr"], 12) == (12, 10)


@pytest.mark.start_first(1)  # 73 s alone with Yices on an idle 2-core machine
@pytest.mark.heavy
@heavy
def test_kip101_strong_isr_needs_11_states_in_configuration_b() -> None:
    assert shortest("tla-kip101", ["StrongIsr"], 11, CONFIG_B) == (11, 9)


@pytest.mark.start_first(2)  # 51 s
@pytest.mark.heavy
@heavy
def test_kip279_strong_isr_needs_11_states_in_configuration_b() -> None:
    assert shortest("tla-kip279", ["StrongIsr"], 11, CONFIG_B) == (11, 9)


@pytest.mark.start_first(0)  # about 95-110 CPU-s: the longest test, handed out first
@pytest.mark.heavy
@heavy
def test_kip320_first_try_strong_isr_needs_13_states_in_configuration_b() -> None:
    # TLC 2.15 on Kip320FirstTry.tla, configuration B, StrongIsr: a 13-state trace (see
    # tests/spec/test_tla_kip320_first_try.py).  With the violation pinned to r1 and r2,
    # Yices and the partial-order reduction (the defaults) about 95-110 CPU-s (docs/z3.md).
    assert shortest("tla-kip320-first-try", ["StrongIsr"], 13, CONFIG_B) == (13, 11)


def test_cli_bmc_exits_3_when_z3_gives_up_before_the_depth() -> None:
    result = CliRunner().invoke(cli, ["bmc", "--model", "tla-kip101", "--depth", "30",
                                      "--timeout", "1", "-p", "invariants=StrongIsr"])
    assert result.exit_code == 3, result.output
    assert "UNKNOWN" in result.output


def test_solver_options_change_the_speed_not_the_answer() -> None:
    # docs/conformance.md, configuration A: KafkaTruncateToHighWatermark, WeakIsr, 9 states,
    # with and without the arithmetic options Kip320FirstTry's variant asks for (Z3's options:
    # Z3 answers here).
    _, system = build_pair("tla-truncate-to-hw")
    assert system.solver_options == {}
    _, first_try = build_pair("tla-kip320-first-try")
    assert first_try.solver_options == ARITH_OPTIONS
    answers = []
    for options in (None, ARITH_OPTIONS):
        result = bmc(system, ["WeakIsr"], 9, logic="QF_LIA",
                     first_step=system.symmetric_first_step(), options=options, solver="z3")
        assert result.solver.startswith("z3 ")
        assert result.trace is not None
        answers.append((len(result.trace), result.proved_steps, result.violated))
    assert answers == [(9, 7, "WeakIsr")] * 2


def test_label_symmetries_rename_the_replicas_other_than_r1() -> None:
    _, system = build_pair("tla-kip320-first-try", **CONFIG_B)
    (swap,) = system.label_symmetries()  # 3 replicas: only r2 <-> r3 fixes r1
    assert swap["BecomeFollower(r1, r3)"] == "BecomeFollower(r1, r2)"
    assert swap["FollowerFetch(r3, r2)"] == "FollowerFetch(r2, r3)"
    assert all(swap[label] == label for label in system.symmetric_first_step())
    _, two = build_pair("tla-kip320-first-try")
    assert two.label_symmetries() == []


@pytest.mark.parametrize("symmetric", [False, True])
def test_lex_leader_keeps_r2_before_r3_until_the_symmetry_is_broken(symmetric: bool) -> None:
    # After ControllerElectLeader(r1) (the state still symmetric in r2, r3), r2 or r3 may
    # become r1's follower; with the lex-leader constraint only r2's is left, and r3's again
    # once r2's has broken the symmetry.
    _, system = build_pair("tla-kip320-first-try", **CONFIG_B)
    labels = [a.label for a in system.actions()]

    def possible(*steps: str) -> bool:
        solver = z3.Solver()
        unrolling = Unrolling(system, solver, first_step=system.symmetric_first_step(),
                              symmetries=system.label_symmetries() if symmetric else ())
        unrolling.start()
        for _ in steps:
            unrolling.extend()
        solver.add([sel == labels.index(step)
                    for sel, step in zip(unrolling.selectors, steps, strict=True)])
        return bool(solver.check() == z3.sat)

    elect = "ControllerElectLeader(r1)"
    assert possible(elect, "BecomeFollower(r1, r2)")
    assert possible(elect, "BecomeFollower(r1, r3)") is not symmetric
    assert possible(elect, "BecomeLeader(r1)", "BecomeFollower(r1, r3)") is not symmetric
    assert possible(elect, "BecomeFollower(r1, r2)", "BecomeFollower(r1, r3)")


def test_the_symmetric_violation_is_one_of_the_invariants_violations() -> None:
    _, system = build_pair("tla-kip320-first-try", **CONFIG_B)
    s = make_frame(system.signature(), 0)
    pinned = system.symmetric_violation(["StrongIsr"])(s)
    # It implies that StrongIsr fails ...
    assert z3.Solver().check(pinned, system.strong_isr(s)) == z3.unsat
    # ... but not every failure is pinned: leader r2 missing its record on r3 is not.
    other = z3.And(s["leader.1"] == 1, s["leader.0"] != 0, s["hw.1"] == 1, s["end.1"] == 1,
                   s["qIsr.2"], s["end.2"] == 0)
    assert z3.Solver().check(other, z3.Not(system.strong_isr(s))) == z3.sat
    assert z3.Solver().check(other, pinned) == z3.unsat
    with pytest.raises(ValueError, match="TypeOk"):
        system.symmetric_violation(["TypeOk"])
    breaking = system.symmetry_breaking(["StrongIsr"])
    assert breaking["first_step"] is None and breaking["symmetries"] == []
    _, two = build_pair("tla-kip320-first-try")
    assert two.symmetry_breaking(["StrongIsr"])["violation"] is None
