"""The generic Z3 machinery on a two-counter toy whose figures are counted by hand."""

from __future__ import annotations

from dataclasses import dataclass, field

import pytest
import z3

from isrlab.checker.z3 import (
    PROVED,
    REFUTED,
    Frame,
    Unrolling,
    admits,
    all_proved,
    bmc,
    ind_init,
    ind_next,
    initial_states,
    invariant_named,
    prove_inductive,
    satisfies,
    successors,
)
from isrlab.checker.z3.solvers import yices_path
from tests.z3.toys import Counters

# The hand-counted BMC figures hold for either solver (the toy is QF_LIA).
SOLVERS = pytest.mark.parametrize("solver", [
    "z3",
    pytest.param("yices", marks=pytest.mark.skipif(yices_path() is None,
                                                   reason="yices-smt2 not installed")),
])


@SOLVERS
def test_bmc_finds_the_shortest_violation_of_five_steps(solver: str) -> None:
    # x + y >= 5 first holds at (3, 2): 3 IncX and 2 IncY, 5 steps, 6 states.
    result = bmc(Counters(), ["SumBelow5"], depth=8, logic="QF_LIA", solver=solver)
    assert result.trace is not None
    assert len(result.trace) == 6
    assert result.trace[0].state == (0, 0)
    assert result.trace[-1].state[0] + result.trace[-1].state[1] == 5
    assert result.violated == "SumBelow5"
    assert result.proved_steps == 4


@SOLVERS
def test_bmc_labels_each_step_with_the_action_that_fired(solver: str) -> None:
    result = bmc(Counters(), ["SumBelow5"], depth=8, logic="QF_LIA", solver=solver)
    assert result.trace is not None
    for before, after in zip(result.trace, result.trace[1:], strict=False):
        dx = after.state[0] - before.state[0]
        assert after.label == ("IncX" if dx == 1 else "IncY")
    assert result.trace[0].label == "Init"


@SOLVERS
def test_bmc_with_a_parameterised_action_finds_a_four_step_violation(solver: str) -> None:
    # Add(2) then IncX reach x = 3 in 2 steps; 2 IncY make the sum 5: 4 steps, 5 states.
    result = bmc(Counters(jumps=True), ["SumBelow5"], depth=8, logic="QF_LIA", solver=solver)
    assert result.trace is not None
    assert len(result.trace) == 5


@SOLVERS
def test_bmc_reports_absence_up_to_the_depth_for_a_true_invariant(solver: str) -> None:
    result = bmc(Counters(), ["YAtMostX", "XAtMost3"], depth=7, logic="QF_LIA", solver=solver)
    assert result.trace is None
    assert result.proved_steps == 7
    assert [d.verdict for d in result.depths] == ["unsat"] * 8


def test_bmc_rejects_an_unknown_invariant_name() -> None:
    with pytest.raises(ValueError, match="no invariant"):
        bmc(Counters(), ["Nope"], depth=1)


def test_init_implies_y_at_most_3() -> None:
    system = Counters()
    assert ind_init(system, invariant_named(system, "YAtMost3")).status == PROVED


def test_y_at_most_3_alone_is_not_inductive_under_inc_y() -> None:
    system = Counters()
    inv = invariant_named(system, "YAtMost3")
    outcome = ind_next(system, inv, [inv], "IncY")
    assert outcome.status == REFUTED
    assert outcome.pre is not None and outcome.post is not None
    x, y = outcome.pre
    assert y == 3 and x > 3  # the CTI: y = 3 < x, unreachable because x <= 3
    assert outcome.post == (x, 4)
    assert ind_next(system, inv, [inv], "IncX").status == PROVED


def test_y_at_most_3_becomes_inductive_with_y_at_most_x_and_x_at_most_3() -> None:
    system = Counters(jumps=True)
    conjuncts = [invariant_named(system, n) for n in ("YAtMost3", "YAtMostX", "XAtMost3")]
    outcomes = prove_inductive(system, conjuncts)
    assert len(outcomes) == 3 + 3 * 3  # IndInit per conjunct, IndNext per conjunct and action
    assert all_proved(outcomes)


def test_successors_are_enumerated_with_blocking_clauses() -> None:
    assert successors(Counters(), (1, 0)) == {(2, 0), (1, 1)}
    assert successors(Counters(jumps=True), (1, 0)) == {(2, 0), (3, 0), (1, 1)}
    assert successors(Counters(jumps=True), (1, 0), "Add") == {(2, 0), (3, 0)}
    assert successors(Counters(), (3, 3)) == set()


def test_the_only_initial_state_is_the_origin() -> None:
    assert initial_states(Counters()) == {(0, 0)}


@dataclass(frozen=True)
class _PinBlocksNothing(Counters):
    """Counters whose ``pin`` blocks nothing (``¬False``): the decoded state stays admitted.
    ``decode`` keeps what it decoded and gives up after 50, so that an enumeration that
    does not notice the repeat fails instead of running forever."""

    decoded: list[tuple[int, int]] = field(default_factory=list, compare=False)

    def pin(self, s: Frame, state: tuple[int, int]) -> z3.BoolRef:
        return z3.BoolVal(False)

    def decode(self, model: z3.ModelRef, s: Frame) -> tuple[int, int]:
        self.decoded.append(super().decode(model, s))
        assert len(self.decoded) < 50, "the enumeration decoded one state over and over"
        return self.decoded[-1]


def test_an_initial_state_enumeration_whose_pin_blocks_nothing_stops_at_the_repeat() -> None:
    system = _PinBlocksNothing()
    with pytest.raises(RuntimeError, match=r"pin\(\) does not block what decode\(\) reads"):
        initial_states(system)
    assert system.decoded == [(0, 0), (0, 0)]


def test_admits_accepts_real_steps_and_rejects_others() -> None:
    system = Counters(jumps=True)
    assert admits(system, (0, 0), (2, 0))
    assert admits(system, (0, 0), (2, 0), "Add")
    assert not admits(system, (0, 0), (2, 0), "IncX")
    assert not admits(system, (0, 0), (0, 1))


def test_satisfies_evaluates_an_invariant_on_a_concrete_state() -> None:
    assert satisfies(Counters(), (3, 2), "YAtMostX")
    assert not satisfies(Counters(), (3, 2), "SumBelow5")


def test_a_step_property_is_proved_under_inductive_hypotheses() -> None:
    from isrlab.checker.z3 import StepProperty, step_obligation

    system = Counters(jumps=True)
    grows = StepProperty("XNeverDecreases", lambda s, t: t["x"] >= s["x"])
    shrinks = StepProperty("XStrictlyGrows", lambda s, t: t["x"] > s["x"])
    hyps = [invariant_named(system, "XNonNegative")]
    assert step_obligation(system, grows, hyps, "Add").status == PROVED
    assert step_obligation(system, grows, hyps, "IncY").status == PROVED
    refuted = step_obligation(system, shrinks, hyps, "IncY")
    assert refuted.status == REFUTED
    assert refuted.pre is not None and refuted.post is not None
    assert refuted.pre[0] == refuted.post[0]


@SOLVERS
def test_bmc_first_step_restriction_limits_the_first_step_only(solver: str) -> None:
    # With the first step forced to IncY (disabled at (0, 0)) no trace exists at all.
    assert bmc(Counters(), ["SumBelow5"], depth=8, first_step={"IncY"}, logic="QF_LIA",
               solver=solver).trace is None
    # Forcing IncX (the only enabled first step) changes nothing: still 6 states.
    result = bmc(Counters(), ["SumBelow5"], depth=8, first_step={"IncX"}, logic="QF_LIA",
                 solver=solver)
    assert result.trace is not None and len(result.trace) == 6


@SOLVERS
@pytest.mark.parametrize("jumps", [False, True])
def test_bmc_from_factored_actions_finds_the_same_shortest_violation(solver: str,
                                                                     jumps: bool) -> None:
    # The hand-counted lengths above (6 states without Add, 5 with it), from the actions'
    # factored forms (each variable's frame condition once per step).
    result = bmc(Counters(jumps=jumps, factored=True), ["SumBelow5"], depth=8,
                 logic="QF_LIA", solver=solver)
    assert result.trace is not None
    assert len(result.trace) == (5 if jumps else 6)
    assert result.proved_steps == (3 if jumps else 4)


def test_a_factored_step_is_the_disjunction_of_the_relations() -> None:
    # Unrolling._factored_step against the disjunction of the full relations, one step from
    # any state: equivalent (the negation is unsatisfiable).
    steps = []
    for factored in (True, False):
        solver = z3.Solver()
        unrolling = Unrolling(Counters(jumps=True, factored=True), solver, factored=factored)
        unrolling.start()
        unrolling.extend()
        steps.append(z3.And(solver.assertions()[1:]))
    assert z3.Solver().check(steps[0] != steps[1]) == z3.unsat


def test_a_factored_step_without_a_writer_keeps_the_variable() -> None:
    # Only IncX may write x and only IncY y: from (0, 0) a step selecting IncX cannot
    # change y, and it changes x.
    solver = z3.Solver()
    unrolling = Unrolling(Counters(factored=True), solver)
    s0 = unrolling.start()
    s1 = unrolling.extend()
    assert solver.check(unrolling.selectors[0] == 0, s1["y"] != s0["y"]) == z3.unsat
    assert solver.check(unrolling.selectors[0] == 0, s1["x"] != s0["x"]) == z3.sat
