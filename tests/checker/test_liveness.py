"""Liveness checking (``isrlab.checker.liveness``): hand-checked toy graphs, a brute-force
reference on random small graphs, the lasso's ITF and the CLI's exit codes.

The reference (``_reference_violated``) knows nothing of components or refinement: it
enumerates every set of steps of a graph, keeps those that form a strongly connected
closed walk (or a single stuttering state), judges fairness on that set straight from the
definitions of WF and SF, and looks for a prefix by plain reachability.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from itertools import combinations
from pathlib import Path
from typing import Any, Literal

import pytest
from click.testing import CliRunner
from hypothesis import given, settings
from hypothesis import strategies as st

from isrlab.checker import liveness as liveness_module
from isrlab.checker.liveness import STUTTERING, Lasso, LivenessResult, check_liveness
from isrlab.checker.model import (
    AlwaysEventually,
    AlwaysEventuallyImplies,
    Clause,
    Eventually,
    EventuallyAlways,
    Fairness,
    LeadsTo,
    Liveness,
    Property,
    TemporalProperty,
    action_name,
)
from isrlab.checker.trace import read_lasso
from isrlab.cli import cli

Edge = tuple[int, str, int]


@dataclass(frozen=True)
class GraphModel:
    """A walk on an explicit graph: states are node numbers, ``edges`` its labelled steps."""

    edges: tuple[Edge, ...]
    init: tuple[int, ...]
    live: Liveness[int]
    name: str = "toy-live"
    outside: frozenset[int] = frozenset()  # nodes outside the boundary

    def init_states(self) -> Iterable[int]:
        return self.init

    def next_states(self, state: int) -> Iterable[tuple[str, int]]:
        return [(label, v) for u, label, v in self.edges if u == state]

    def invariants(self) -> Sequence[Property[int]]:
        return ()

    def sometimes(self) -> Sequence[Property[int]]:
        return ()

    def within_boundary(self, state: int) -> bool:
        return state not in self.outside

    def canonical(self, state: int) -> int:
        return state

    def encode(self, state: int) -> bytes:
        return bytes([state])

    def decode(self, data: bytes) -> int:
        return data[0]

    def variables(self, state: int) -> Mapping[str, Any]:
        return {"node": state}

    def liveness(self) -> Liveness[int]:
        return self.live


def at(*nodes: int) -> Callable[[int], bool]:
    """The predicate "the walk is at one of ``nodes``"."""
    chosen = frozenset(nodes)
    return lambda s: s in chosen


def one(name: str, clause: Clause[int], *fairness: Fairness) -> Liveness[int]:
    return Liveness((TemporalProperty(name, (clause,)),), fairness)


def check(edges: Sequence[Edge], live: Liveness[int], init: Sequence[int] = (0,),
          outside: Iterable[int] = ()) -> LivenessResult:
    return check_liveness(GraphModel(tuple(edges), tuple(init), live, outside=frozenset(outside)))


def nodes_of(lasso: Lasso) -> list[int]:
    return [step.state["node"] for step in lasso.trace]


def WF(*actions: str) -> Fairness:
    return Fairness.of("weak", *actions)


def SF(*actions: str) -> Fairness:
    return Fairness.of("strong", *actions)


# -- hand-checked graphs ------------------------------------------------------------------------

RING = [(0, "Inc", 1), (1, "Inc", 2), (2, "Inc", 0)]


def test_without_fairness_a_behaviour_may_stutter_in_its_initial_state() -> None:
    result = check(RING, one("ReturnsToZero", AlwaysEventually(at(1))))
    (violation,) = result.violations
    assert nodes_of(violation.lasso) == [0] and violation.lasso.stutters
    assert violation.lasso.loop == 0


def test_weak_fairness_of_the_only_action_makes_the_ring_turn() -> None:
    for clause in (AlwaysEventually(at(1)), Eventually(at(2)), LeadsTo(at(1), at(0))):
        assert check(RING, one("P", clause, WF("Inc"))).ok


def test_eventually_always_fails_on_a_fair_ring_with_a_cycle_through_the_bad_state() -> None:
    result = check(RING, one("StaysAtZero", EventuallyAlways(at(0)), WF("Inc")))
    (violation,) = result.violations
    assert nodes_of(violation.lasso) == [0, 1, 2]
    assert violation.lasso.loop == 0 and violation.lasso.loop_action == "Inc"


# a: A -> goal, B -> b; b: B -> a.  A is disabled in b, so weak fairness lets a <-> b go on.
CHOICE = [(0, "A", 2), (0, "B", 1), (1, "B", 0)]


def test_weak_fairness_allows_the_cycle_that_disables_the_action() -> None:
    result = check(CHOICE, one("ReachesGoal", Eventually(at(2)), WF("A"), WF("B")))
    (violation,) = result.violations
    assert nodes_of(violation.lasso) == [0, 1]
    assert violation.lasso.loop == 0 and violation.lasso.loop_action == "B"


def test_strong_fairness_forces_the_action_enabled_infinitely_often() -> None:
    assert check(CHOICE, one("ReachesGoal", Eventually(at(2)), SF("A"), WF("B"))).ok


def test_strong_fairness_alone_still_lets_the_walk_stutter_where_it_is_disabled() -> None:
    result = check(CHOICE, one("ReachesGoal", Eventually(at(2)), SF("A")))
    (violation,) = result.violations
    assert nodes_of(violation.lasso) == [0, 1] and violation.lasso.stutters


# idle -Request-> requested -Grant-> granted -Release-> idle
REQUESTS = [(0, "Request", 1), (1, "Grant", 2), (2, "Release", 0)]


def test_leads_to_needs_the_granting_action_to_be_fair() -> None:
    granted = one("EventuallyGranted", LeadsTo(at(1), at(2)), WF("Request"), WF("Release"))
    (violation,) = check(REQUESTS, granted).violations
    assert nodes_of(violation.lasso) == [0, 1] and violation.lasso.stutters
    fair = one("EventuallyGranted", LeadsTo(at(1), at(2)), WF("Request", "Grant", "Release"))
    assert check(REQUESTS, fair).ok


def test_a_deadlock_stutters_forever_even_under_fairness() -> None:
    edges = [(0, "Go", 1), (0, "Stay", 2), (2, "Back", 0)]
    result = check(edges, one("BackToZero", AlwaysEventually(at(0)), WF("Go", "Stay", "Back")))
    (violation,) = result.violations
    assert nodes_of(violation.lasso) == [0, 1] and violation.lasso.stutters


def test_a_self_loop_neither_enables_nor_takes_an_action() -> None:
    # Spin(0) leaves node 0 unchanged: weak fairness of Spin does not stop stuttering there.
    edges = [(0, "Spin", 0), (0, "Go", 1)]
    (violation,) = check(edges, one("Leaves", Eventually(at(1)), WF("Spin"))).violations
    assert nodes_of(violation.lasso) == [0] and violation.lasso.stutters
    assert check(edges, one("Leaves", Eventually(at(1)), WF("Go"))).ok


def test_per_label_fairness_is_stronger_than_per_action_fairness() -> None:
    # 0 -Move(a)-> 1 -Move(b)-> 0, and Move(c) from 0 to 3.  The cycle takes Move, so
    # fairness of Move as one action is met by it; Move(c) is disabled in 1, so only strong
    # fairness of each label forces it.
    edges = [(0, "Move(a)", 1), (1, "Move(b)", 0), (0, "Move(c)", 3)]
    reach = Eventually(at(3))
    assert not check(edges, one("Reach3", reach, Fairness.of("weak", "Move", per="action"))).ok
    assert not check(edges, one("Reach3", reach, Fairness.of("weak", "Move"))).ok
    assert check(edges, one("Reach3", reach, Fairness.of("strong", "Move"))).ok
    assert not check(edges, one("Reach3", reach, Fairness.of("strong", "Move", per="action"))).ok


def test_infinitely_often_implies_infinitely_often() -> None:
    # 0 <-> 1 (premise at 1) and 0 -> 2 -> 2 ... (goal at 2 never comes back to 1).
    edges = [(0, "A", 1), (1, "A", 0), (0, "B", 2)]
    prop = AlwaysEventuallyImplies(at(1), at(2))
    (violation,) = check(edges, one("P", prop, WF("A"))).violations
    assert set(nodes_of(violation.lasso)) == {0, 1} and not violation.lasso.stutters
    assert check(edges, one("P", prop, SF("B"), WF("A"))).ok


def test_a_property_fails_when_one_of_its_clauses_fails() -> None:
    clauses: tuple[Clause[int], ...] = (AlwaysEventually(at(0)), AlwaysEventually(at(7)))
    live = Liveness((TemporalProperty("Both", clauses),), (WF("Inc"),))
    (violation,) = check(RING, live).violations
    assert violation.clause == 1 and violation.formula == "[]<>P"


def test_states_outside_the_boundary_are_not_part_of_any_behaviour() -> None:
    # 0 -> 1 -> 2 with 2 outside the boundary: the step into 2 is not followed, yet it keeps
    # Inc enabled in 1, so under WF(Inc) no behaviour may stop in 1 either: there is no fair
    # behaviour past 1 and so no counterexample; without fairness one stops in 0.
    edges = [(0, "Inc", 1), (1, "Inc", 2)]
    result = check(edges, one("Reaches2", Eventually(at(2)), WF("Inc")), outside=[2])
    assert result.ok and result.states == 2
    (violation,) = check(edges, one("Reaches2", Eventually(at(2))), outside=[2]).violations
    assert nodes_of(violation.lasso) == [0] and violation.lasso.stutters


def test_the_lasso_is_shortest_for_the_stuttering_case() -> None:
    # Two routes to a dead end 5: 0-1-2-5 and 0-3-5; the shorter is reported.
    edges = [(0, "A", 1), (1, "A", 2), (2, "A", 5), (0, "B", 3), (3, "B", 5)]
    (violation,) = check(edges, one("P", AlwaysEventually(at(0)), WF("A", "B"))).violations
    assert nodes_of(violation.lasso) == [0, 3, 5]


def test_finitely_often_actions_never_close_the_cycle() -> None:
    # Work (0 -> 1) is what the property waits for; Fault (0 -> 2) and the fair Repair
    # (2 -> 0) can alternate forever: Work is disabled at 2, so that cycle is weakly fair
    # to Work and violates <>(at 1).  With Fault taken only finitely often the cycle is
    # gone: stuttering at 0 leaves Work enabled, at 2 Repair, so every fair behaviour that
    # stops faulting reaches 1.
    edges = [(0, "Work", 1), (0, "Fault", 2), (2, "Repair", 0)]
    prop = TemporalProperty("Works", (Eventually(at(1)),))
    fair = WF("Work", "Repair")
    (violation,) = check(edges, Liveness((prop,), (fair,))).violations
    assert nodes_of(violation.lasso) == [0, 2] and violation.lasso.loop_action == "Repair"
    result = check(edges, Liveness((prop,), (fair,), finitely_often=("Fault",)))
    assert result.ok and result.finitely_often == ("Fault",)
    assert "Fault finitely often" in result.summary_line()


def test_finitely_often_actions_may_still_lead_to_a_fair_stop() -> None:
    # A Fault into a state with no fair action enabled: stopping there forever takes one
    # Fault only, so <>(at 1) is still violated (a crash that is never repaired).
    edges = [(0, "Work", 1), (0, "Fault", 2)]
    prop = TemporalProperty("Works", (Eventually(at(1)),))
    result = check(edges, Liveness((prop,), (WF("Work"),), finitely_often=("Fault",)))
    (violation,) = result.violations
    assert nodes_of(violation.lasso) == [0, 2] and violation.lasso.stutters


# -- against a brute-force reference on random small graphs --------------------------------------

Kind = Literal["weak", "strong"]


def _reachable(edges: Sequence[Edge], sources: Iterable[int], allowed: Callable[[int], bool]
               ) -> set[int]:
    seen = {s for s in sources if allowed(s)}
    todo = list(seen)
    while todo:
        u = todo.pop()
        for a, _, b in edges:
            if a == u and allowed(b) and b not in seen:
                seen.add(b)
                todo.append(b)
    return seen


def _strongly_connected(nodes: set[int], steps: Sequence[Edge]) -> bool:
    first = next(iter(nodes))
    forward = _reachable(steps, [first], lambda _: True)
    backward = _reachable([(b, x, a) for a, x, b in steps], [first], lambda _: True)
    return nodes <= forward and nodes <= backward


def _fair_cycles(edges: Sequence[Edge], nodes: set[int], fairness: Sequence[Fairness],
                 finite: frozenset[str] = frozenset()) -> list[tuple[set[int], list[Edge]]]:
    """Every (states, steps) of a fair infinite tail inside ``nodes``, by enumeration (a
    tail takes no step of an action of ``finite``)."""
    moves = [e for e in edges if e[0] != e[2] and e[0] in nodes and e[2] in nodes
             and action_name(e[1]) not in finite]
    tails: list[tuple[set[int], list[Edge]]] = [({v}, []) for v in nodes]  # stuttering
    for size in range(1, len(moves) + 1):
        for chosen in combinations(moves, size):
            states = {a for a, _, _ in chosen} | {b for _, _, b in chosen}
            if _strongly_connected(states, chosen):
                tails.append((states, list(chosen)))

    return [(states, steps) for states, steps in tails
            if _is_fair(edges, states, steps, fairness)]


def _is_fair(edges: Sequence[Edge], states: set[int], steps: Sequence[Edge],
             fairness: Sequence[Fairness]) -> bool:
    """WF and SF on an infinite tail visiting exactly ``states`` and taking ``steps``."""
    def keys(label: str) -> set[tuple[int, str]]:
        return {(i, k) for i, f in enumerate(fairness) if (k := f.instance(label)) is not None}

    def enabled(v: int) -> set[tuple[int, str]]:
        return set().union(*(keys(x) for a, x, b in edges if a == v and b != v))

    taken = set().union(*(keys(x) for a, x, b in steps if a != b))
    for k in set().union(*(enabled(v) for v in states)):
        everywhere = all(k in enabled(v) for v in states)
        if (fairness[k[0]].kind == "strong" or everywhere) and k not in taken:
            return False
    return True


def _reference_violated(edges: Sequence[Edge], init: Sequence[int], clause: Clause[int],
                        fairness: Sequence[Fairness], finite: frozenset[str] = frozenset()
                        ) -> bool:
    everything = {u for u, _, _ in edges} | {v for _, _, v in edges} | set(init)
    reach = _reachable(edges, init, lambda _: True)
    if isinstance(clause, Eventually):
        region = {v for v in everything if not clause.holds(v)}
        starts = _reachable(edges, init, lambda v: v in region)
        need: Callable[[set[int]], bool] = lambda s: s <= region  # noqa: E731
    elif isinstance(clause, AlwaysEventually):
        region = {v for v in everything if not clause.holds(v)}
        starts, need = reach, (lambda s: s <= region)
    elif isinstance(clause, EventuallyAlways):
        starts, need = reach, (lambda s: any(not clause.holds(v) for v in s))
    elif isinstance(clause, LeadsTo):
        region = {v for v in everything if not clause.goal(v)}
        triggers = {v for v in reach if clause.premise(v) and v in region}
        starts = _reachable(edges, triggers, lambda v: v in region)
        need = lambda s: s <= region  # noqa: E731
    else:
        region = {v for v in everything if not clause.goal(v)}
        starts = reach
        need = lambda s: s <= region and any(clause.premise(v) for v in s)  # noqa: E731
    return any(need(states) for states, _ in _fair_cycles(edges, starts, fairness, finite)
               if states <= starts)


def _valid_lasso(edges: Sequence[Edge], init: Sequence[int], clause: Clause[int],
                 fairness: Sequence[Fairness], lasso: Lasso,
                 finite: frozenset[str] = frozenset()) -> bool:
    """The lasso is a behaviour of the graph, its tail is fair and it violates the clause."""
    nodes = nodes_of(lasso)
    steps = [step.action for step in lasso.trace]
    if nodes[0] not in init:
        return False
    for u, label, v in zip(nodes, steps[1:], nodes[1:], strict=False):
        if (u, label, v) not in edges:
            return False
    cycle_nodes = set(nodes[lasso.loop:])
    tail = list(zip(nodes[lasso.loop:], steps[lasso.loop + 1:], nodes[lasso.loop + 1:],
                    strict=False))
    if lasso.stutters:
        if lasso.loop != len(nodes) - 1:
            return False
    else:
        closing = (nodes[-1], lasso.loop_action, nodes[lasso.loop])
        if closing not in edges:
            return False
        tail.append(closing)
    if any(action_name(label) in finite for _, label, _ in tail):
        return False
    if not _is_fair(edges, cycle_nodes, tail, fairness):
        return False
    return _lasso_violates(nodes, lasso.loop, clause)


def _lasso_violates(nodes: list[int], loop: int, clause: Clause[int]) -> bool:
    cycle = nodes[loop:]
    if isinstance(clause, Eventually):
        return not any(clause.holds(v) for v in nodes)
    if isinstance(clause, AlwaysEventually):
        return not any(clause.holds(v) for v in cycle)
    if isinstance(clause, EventuallyAlways):
        return any(not clause.holds(v) for v in cycle)
    if isinstance(clause, LeadsTo):
        return any(clause.premise(nodes[i]) and not any(clause.goal(v) for v in nodes[i:])
                   for i in range(len(nodes)))
    return (any(clause.premise(v) for v in cycle)
            and not any(clause.goal(v) for v in cycle))


Case = tuple[list[Edge], list[int], Clause[int], list[Fairness], frozenset[str]]


@st.composite
def random_case(draw: st.DrawFn) -> Case:
    n = draw(st.integers(2, 5))
    node = st.integers(0, n - 1)
    label = st.sampled_from(["A(0)", "A(1)", "B(0)", "C(0)"])
    edges = draw(st.lists(st.tuples(node, label, node), min_size=1, max_size=8, unique=True))
    init = sorted(draw(st.sets(node, min_size=1, max_size=2)))
    p = frozenset(draw(st.sets(node, max_size=n)))
    q = frozenset(draw(st.sets(node, max_size=n)))
    form = draw(st.sampled_from(["[]<>", "<>[]", "<>", "~>", "=>"]))
    forms: dict[str, Clause[int]] = {
        "[]<>": AlwaysEventually(p.__contains__), "<>[]": EventuallyAlways(p.__contains__),
        "<>": Eventually(p.__contains__), "~>": LeadsTo(p.__contains__, q.__contains__),
        "=>": AlwaysEventuallyImplies(p.__contains__, q.__contains__),
    }
    clause = forms[form]
    fairness = []
    every_action_fair = draw(st.booleans())  # then only deadlocks stutter: cycles matter
    kinds: list[Kind | None] = ["weak", "strong"] if every_action_fair else [None, "weak",
                                                                          "strong"]
    for action in ("A", "B", "C"):
        kind = draw(st.sampled_from(kinds))
        if kind is not None:
            per: Literal["label", "action"] = draw(st.sampled_from(["label", "action"]))
            fairness.append(Fairness.of(kind, action, per=per))
    finite = frozenset(draw(st.sets(st.sampled_from(["A", "B", "C"]), max_size=1)))
    return edges, init, clause, fairness, finite


@settings(max_examples=400, deadline=None)
@given(random_case())
def test_agrees_with_the_brute_force_reference(case: Case) -> None:
    edges, init, clause, fairness, finite = case
    live = Liveness((TemporalProperty("P", (clause,)),), tuple(fairness), tuple(sorted(finite)))
    result = check(edges, live, init)
    assert (not result.ok) == _reference_violated(edges, init, clause, fairness, finite)
    for violation in result.violations:
        assert _valid_lasso(edges, init, clause, fairness, violation.lasso, finite)
    # Tarjan's numbers in dictionaries instead of arrays: the very same lassos
    saved = liveness_module.DENSE_ROOTS
    liveness_module.DENSE_ROOTS = 0
    try:
        assert check(edges, live, init).violations == result.violations
    finally:
        liveness_module.DENSE_ROOTS = saved


def test_action_name_is_the_label_up_to_its_first_parenthesis() -> None:
    assert action_name("UnfenceBroker(b1)") == "UnfenceBroker" and action_name("Tick") == "Tick"


# -- ITF and the command line -------------------------------------------------------------------

CLI_REQUESTS = GraphModel(tuple(REQUESTS), (0,), one(
    "EventuallyGranted", LeadsTo(at(1), at(2)), WF("Request"), WF("Release")), name="requests")
CLI_FAIR = GraphModel(tuple(REQUESTS), (0,), one(
    "EventuallyGranted", LeadsTo(at(1), at(2)), WF("Request", "Grant", "Release")), name="fair")



@dataclass(frozen=True)
class WithView(GraphModel):
    """A graph model with TLC's VIEW (every state seen as its parity)."""

    def view(self, state: int) -> bytes:
        return bytes([state % 2])


@dataclass(frozen=True)
class Broken(GraphModel):
    """A graph model whose invariant fails in node 1."""

    def invariants(self) -> Sequence[Property[int]]:
        return (Property("NotAtOne", lambda s: s != 1),)


CLI_VIEW = WithView(tuple(REQUESTS), (0,), CLI_FAIR.live, name="view")
CLI_BROKEN = Broken(tuple(REQUESTS), (0,), CLI_FAIR.live, name="broken")
CLI_CHOICE = GraphModel(tuple(CHOICE), (0,), one(
    "ReachesGoal", Eventually(at(2)), WF("A"), WF("B")), name="choice")


def _invoke(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(cli, list(args))
    return result.exit_code, result.stdout, result.stderr


def _spec(name: str) -> str:
    return f"{Path(__file__)}:{name}"


def test_cli_exits_zero_when_every_temporal_property_holds() -> None:
    code, out, _ = _invoke("check", "--model", _spec("CLI_FAIR"), "--liveness")
    assert code == 0
    assert "OK: every temporal property holds (EventuallyGranted holds)" in out


def test_cli_exits_one_and_writes_a_stuttering_lasso_as_itf(tmp_path: Path) -> None:
    itf, report = tmp_path / "lasso.itf.json", tmp_path / "r.json"
    code, out, _ = _invoke("check", "--model", _spec("CLI_REQUESTS"), "--liveness",
                           "--itf", str(itf), "--json", str(report))
    assert code == 1
    assert "EventuallyGranted is violated (clause 1: P ~> Q); lasso of 2 states" in out
    assert "State 3: Stuttering" in out
    trace, loop, action = read_lasso(itf)
    assert [s.state["node"] for s in trace] == [0, 1] and loop == 1 and action == STUTTERING
    assert json.loads(itf.read_text())["loop"] == 1
    live = json.loads(report.read_text())["liveness"]
    assert live["ok"] is False and live["violations"][0]["loop_action"] == STUTTERING


def test_cli_writes_a_cycle_with_its_loop_index(tmp_path: Path) -> None:
    itf = tmp_path / "lasso.itf.json"
    code, out, _ = _invoke("check", "--model", _spec("CLI_CHOICE"), "--liveness",
                           "--itf", str(itf))
    assert code == 1 and "Back to state 1: B" in out
    trace, loop, action = read_lasso(itf)
    assert [s.action for s in trace] == ["Init", "B"] and loop == 0 and action == "B"


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--model", "toy-counter"], "declares no liveness properties"),
        (["--model", _spec("CLI_FAIR"), "--max-depth", "2"], "needs every reachable state"),
        (["--model", _spec("CLI_FAIR"), "--symmetry"], "cannot be combined with --symmetry"),
        (["--model", _spec("CLI_VIEW")], "has a view"),
    ],
)
def test_cli_liveness_bad_input_is_one_line_with_exit_code_two(
    args: list[str], message: str
) -> None:
    code, out, err = _invoke("check", *args, "--liveness")
    assert code == 2 and out == ""
    assert len(err.strip().splitlines()) == 1 and message in err


def test_cli_liveness_after_a_failed_plain_check_says_it_was_not_run() -> None:
    code, out, err = _invoke("check", "--model", _spec("CLI_BROKEN"), "--liveness")
    assert code == 1 and "VIOLATION of NotAtOne" in out and "[liveness]" not in out
    assert "temporal properties not checked" in err
