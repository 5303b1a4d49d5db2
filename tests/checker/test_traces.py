"""Shortest counterexamples, their replay, and the trace formats."""

from __future__ import annotations

import itertools
import json
from pathlib import Path

import pytest

from isrlab.checker.report import DEADLOCK, TraceStep
from isrlab.checker.toys import Counter, Graph, Symmetric
from isrlab.checker.trace import itf_document, read_itf, text_trace, write_itf
from tests.checker.conftest import run


def test_a_violation_trace_counts_the_initial_state() -> None:
    result = run(Counter(5, bad=3))
    assert result.violation is not None
    assert result.violation.invariant == "BelowBad"
    assert [s.action for s in result.violation.trace] == ["Init", "Inc", "Inc", "Inc"]
    assert [s.state["x"] for s in result.violation.trace] == [0, 1, 2, 3]


def test_the_graph_counterexample_is_a_shortest_path_to_e() -> None:
    result = run(Graph())
    assert result.violation is not None
    nodes = [s.state["node"] for s in result.violation.trace]
    assert nodes[0] == "a" and nodes[-1] == "e" and len(nodes) == 4
    assert nodes[2] == "d"


def test_a_dead_end_is_reported_as_a_deadlock_when_asked() -> None:
    result = run(Graph(dead_end=True), check_deadlock=True, stop_at_first=False)
    names = {v.invariant: v.length for v in result.violations}
    assert names == {"NotAtE": 4, DEADLOCK: 4}


def test_continuing_finds_one_shortest_trace_per_violated_invariant() -> None:
    result = run(Counter(5, bad=2), stop_at_first=False)
    assert result.complete
    assert [v.length for v in result.violations] == [3]
    assert result.distinct_states == 6


def test_a_trace_under_symmetry_is_a_real_run_of_the_model() -> None:
    model = Symmetric(3, 3, bad_sum=4)
    result = run(model, symmetry=True)
    assert result.violation is not None
    trace = result.violation.trace
    assert len(trace) == 5
    for before, after in itertools.pairwise(trace):
        old, new = before.state["value"], after.state["value"]
        moved = [p for p in old if old[p] != new[p]]
        assert after.action == f"Inc({moved[0]})"
        assert len(moved) == 1
    assert sum(trace[-1].state["value"].values()) == 4


def test_itf_round_trips_every_value_type(tmp_path: Path) -> None:
    state = {
        "n": 7, "big": 2**70, "flag": True, "name": "r1", "none": None,
        "tup": (1, "a"), "seq": [1, 2], "set": frozenset({3, 1}),
        "map": {"r1": 0, "r2": frozenset()}, "tupkeys": {(1, 2): "x"},
    }
    trace = (TraceStep("Init", state), TraceStep("Step(r1)", {**state, "n": 8}))
    path = tmp_path / "trace.itf.json"
    write_itf(path, trace, source="toy")
    assert read_itf(path) == trace


def test_itf_uses_the_adr_015_encodings() -> None:
    document = itf_document(
        (TraceStep("Init", {"x": 1, "s": frozenset({2}), "t": (3,), "m": {"a": 4}}),)
    )
    assert document["vars"] == ["x", "s", "t", "m"]
    state = document["states"][0]
    assert state["#meta"] == {"index": 0, "action": "Init"}
    assert state["x"] == {"#bigint": "1"}
    assert state["s"] == {"#set": [{"#bigint": "2"}]}
    assert state["t"] == {"#tup": [{"#bigint": "3"}]}
    assert state["m"] == {"#map": [["a", {"#bigint": "4"}]]}
    assert document["#meta"]["format"] == "ITF"


def test_the_text_trace_shows_only_what_changed() -> None:
    trace = (
        TraceStep("Init", {"x": 0, "y": 0, "m": {"a": 1, "b": 2}}),
        TraceStep("IncX", {"x": 1, "y": 0, "m": {"a": 1, "b": 2}}),
        TraceStep("SetB", {"x": 1, "y": 0, "m": {"a": 1, "b": 5}}),
    )
    text = text_trace(trace)
    assert text.splitlines() == [
        "State 1: Init", "  x = 0", "  y = 0", "  m = {'a': 1, 'b': 2}",
        "State 2: IncX", "  x = 1",
        "State 3: SetB", "  m['b'] = 5",
    ]


def test_an_entry_added_or_removed_is_shown_as_the_change_not_the_whole_map() -> None:
    # A KRaft leader's ShrinkIsr adds pending_isr, its AlterPartition response removes it.
    broker = {"hw": 0, "isr": (0, 1)}
    trace = (
        TraceStep("Init", {"broker0": broker}),
        TraceStep("ShrinkIsr(0)", {"broker0": {**broker, "pending_isr": (0,)}}),
        TraceStep("AlterPartitionResponse(0)", {"broker0": {"hw": 0, "isr": (0,)}}),
    )
    assert text_trace(trace).splitlines()[2:] == [
        "State 2: ShrinkIsr(0)", "  broker0['pending_isr'] = <<0>> (added)",
        "State 3: AlterPartitionResponse(0)", "  broker0['isr'] = <<0>>",
        "  broker0['pending_isr'] removed (was <<0>>)",
    ]


def test_a_nested_dictionary_entry_is_printed_by_what_changed_in_it() -> None:
    """A leader's per-follower map (``remote_leo``) prints the follower whose entry moved,
    not the whole map; one level down only, so a follower's fetch record stays whole."""
    fetch = {"leader_leo": 1, "age": 0}
    trace = (
        TraceStep("Init", {"broker0": {"remote_leo": {1: 0, 2: -1}, "remote_last_fetch": {}}}),
        TraceStep("Fetch(2)", {"broker0": {"remote_leo": {1: 0, 2: 1},
                                            "remote_last_fetch": {2: fetch}}}),
        TraceStep("Tick", {"broker0": {"remote_leo": {1: 0, 2: 1},
                                        "remote_last_fetch": {2: {**fetch, "age": 1}}}}),
    )
    assert text_trace(trace).splitlines()[2:] == [
        "State 2: Fetch(2)", "  broker0['remote_leo'][2] = 1",
        "  broker0['remote_last_fetch'][2] = {'leader_leo': 1, 'age': 0} (added)",
        "State 3: Tick", "  broker0['remote_last_fetch'][2] = {'leader_leo': 1, 'age': 1}",
    ]


def test_the_json_report_has_the_documented_fields(tmp_path: Path) -> None:
    result = run(Counter(5, bad=3))
    path = tmp_path / "report.json"
    result.write_json(path)
    report = json.loads(path.read_text())
    for key in ("model", "params", "engine", "distinct_states", "generated_states",
                "diameter", "elapsed_s", "violation", "coverage", "collision_probability",
                "sometimes"):
        assert key in report
    assert report["violation"]["invariant"] == "BelowBad"
    assert [step["action"] for step in report["violation"]["trace"]] == ["Init"] + ["Inc"] * 3
    assert report["violation"]["trace"][-1]["state"] == {"x": 3}


@pytest.mark.parametrize("symmetry", [False, True])
def test_one_and_two_workers_give_the_same_counts_and_trace(symmetry: bool) -> None:
    model = Symmetric(5, 4, bad_sum=9)
    one = run(model, symmetry=symmetry, workers=1)
    two = run(model, symmetry=symmetry, workers=2)
    assert one.violation is not None and two.violation is not None
    assert one.violation.trace == two.violation.trace
    assert (one.distinct_states, one.generated_states, one.diameter) == (
        two.distinct_states, two.generated_states, two.diameter)
    assert one.coverage == two.coverage
    assert one.violation.length == 10


def test_repeated_runs_give_the_same_trace() -> None:
    model = Symmetric(4, 4, bad_sum=7)
    first, second = run(model), run(model)
    assert first.violation == second.violation
