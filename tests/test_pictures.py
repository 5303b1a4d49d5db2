"""``isrlab render``, ``--svg`` and ``--dot``: sequence charts and state graphs of traces."""

from __future__ import annotations

import itertools
import re
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from click.testing import CliRunner

from isrlab.checker.chart import FONT
from isrlab.checker.graph import GraphTooLarge, state_graph
from isrlab.checker.toys import Counter
from isrlab.cli import cli
from isrlab.spec.kafka.scenarios import BY_KEY

SVG = "{http://www.w3.org/2000/svg}"


def _invoke(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(cli, list(args))
    return result.exit_code, result.stdout, result.stderr


@pytest.fixture(scope="module")
def kip101_itf(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The KIP-101 scenario 1 counterexample (docs/scenarios.md) as written by check --itf."""
    path = tmp_path_factory.mktemp("kip101") / "t.json"
    args = [a for p in BY_KEY["kip101-1"].params(fixed=False) for a in ("-p", p)]
    code, out, _ = _invoke("check", "--model", "kafka", *args, "--itf", str(path))
    assert code == 1 and "NoCommittedRecordLost" in out
    return path


def _texts(root: ET.Element) -> list[tuple[float, float, float, float, str]]:
    """Every text element's box (x0, y0, x1, y1) from its position and length."""
    boxes = []
    for t in root.iter(f"{SVG}text"):
        text = t.text or ""
        x, y = float(t.get("x", "0")), float(t.get("y", "0"))
        size = 15 if t.get("class") == "title" else FONT
        width = len(text) * size * 0.6
        if t.get("text-anchor") == "middle":
            x -= width / 2
        boxes.append((x, y - size * 0.8, x + width, y, text))
    return boxes


def _overlap(a: tuple[float, float, float, float, object],
             b: tuple[float, float, float, float, object]) -> bool:
    return a[0] < b[2] - 0.5 and b[0] < a[2] - 0.5 and a[1] < b[3] - 0.5 and b[1] < a[3] - 0.5


def test_render_draws_the_kip101_counterexample(kip101_itf: Path, tmp_path: Path) -> None:
    out = tmp_path / "t.svg"
    code, stdout, _ = _invoke("render", str(kip101_itf), "-o", str(out))
    assert code == 0 and "10 states" in stdout
    root = ET.fromstring(out.read_text())
    texts = [t[4] for t in _texts(root)]
    for lifeline in ("client", "broker0", "broker1", "controller"):
        assert lifeline in texts
    # the story of KIP-101 scenario 1: broker1 restarts, broker0 crashes and comes back (the
    # controller elects broker1 for epoch 1); broker1 handles its queued epoch-0 LeaderAndIsr
    # first, truncating to its HW (0), then the epoch-1 one: it leads without m0
    assert "9. Deliver LeaderAndIsr to b1" in texts
    assert "TRUNCATED to LEO 0" in texts
    assert "LeaderAndIsr(leader b1, epoch 1, ISR {b1})" in texts
    assert "epoch 1: leader" in texts
    assert "VIOLATED in state 10: NoCommittedRecordLost" in texts
    assert any("a record once below a leader's HW is in every later leader's log" in t
               for t in texts)
    assert sum(1 for t in texts if re.match(r"^\d+\. ", t)) == 10  # one row per state


def test_chart_text_never_overlaps(kip101_itf: Path, tmp_path: Path) -> None:
    out = tmp_path / "t.svg"
    assert _invoke("render", str(kip101_itf), "-o", str(out))[0] == 0
    root = ET.fromstring(out.read_text())
    boxes = _texts(root)
    width = float(root.get("width", "0"))
    assert all(b[0] >= 0 and b[2] <= width for b in boxes)
    clashes = [(a[4], b[4]) for a, b in itertools.combinations(boxes, 2) if _overlap(a, b)]
    assert clashes == []
    notes = [
        (float(r.get("x", "0")), float(r.get("y", "0")),
         float(r.get("x", "0")) + float(r.get("width", "0")),
         float(r.get("y", "0")) + float(r.get("height", "0")), "")
        for r in root.iter(f"{SVG}rect") if r.get("rx") == "3"
    ]
    assert len(notes) > 10
    assert not any(_overlap(a, b) for a, b in itertools.combinations(notes, 2))


@pytest.mark.parametrize("args", [
    ["--model", "kafka", "-p", "controller=kraft"],
    ["--model", "tla-kraft-3.5", "-p", "values=2", "-p", "min_isr=1", "-p",
     "leader_shrink_isr_limit=1"],
])
def test_every_text_of_the_chart_is_inside_it(args: list[str], tmp_path: Path) -> None:
    """The legend's lines too: the AlterPartition line of the kafka default's chart ran
    past its right edge; the tla-kraft chart's values are named as the spec's cfg names
    them (value 2 is B, as its acknowledgement says)."""
    svg = tmp_path / "t.svg"
    code, _, _ = _invoke("check", *args, "--no-progress", "--svg", str(svg))
    assert code in (1, 3)
    root = ET.fromstring(svg.read_text())
    width = float(root.get("width", "0"))
    boxes = _texts(root)
    assert [b[4] for b in boxes if b[0] < 0 or b[2] > width] == []
    if "tla-kraft-3.5" in args:
        texts = [b[4] for b in boxes]
        assert "Produce B@1" in texts and not any("2@1" in t for t in texts)


def test_an_evaluation_error_trace_renders_as_the_models_error(tmp_path: Path) -> None:
    """``check --itf`` of the spec's own evaluation error (exit 3) wrote a trace that
    ``render`` refused ("unknown invariant 'EvaluationError'", exit 2); the chart said
    "EvaluationError violated".  Both now say the model cannot evaluate the next step."""
    itf, svg = tmp_path / "t.json", tmp_path / "t.svg"
    code, _, _ = _invoke("check", "--model", "tla-kraft-3.5", "-p", "values=2", "-p",
                         "min_isr=1", "-p", "leader_shrink_isr_limit=1", "--no-progress",
                         "--itf", str(itf))
    assert code == 3
    code, _, err = _invoke("render", str(itf), "-o", str(svg))
    assert code == 0, err
    texts = [t[4] for t in _texts(ET.fromstring(svg.read_text()))]
    assert not any("EvaluationError violated" in t for t in texts)
    assert any(t.startswith("the model cannot evaluate the next step of this state") for t in texts)
    assert any("WriteRecordToLeader(1)" in t for t in texts if "cannot evaluate" in t)


def test_tla_trace_has_leader_and_isr_and_fetch_arrows(tmp_path: Path) -> None:
    itf, svg = tmp_path / "t.json", tmp_path / "t.svg"
    code, _, _ = _invoke("check", "--model", "tla-truncate-to-hw", "--itf", str(itf),
                         "--svg", str(svg))
    assert code == 1
    texts = [t[4] for t in _texts(ET.fromstring(svg.read_text()))]
    assert {"r1", "r2", "controller"} <= set(texts)
    assert any(t.startswith("LeaderAndIsr(leader r") for t in texts)
    assert any(t.startswith("Fetch(offset 0)") for t in texts)
    assert any(t.startswith("VIOLATED in state ") for t in texts)


def test_alter_partition_round_trip_is_drawn_leader_to_controller_and_back(
    tmp_path: Path,
) -> None:
    # hw_isr=committed, initial_isr=1: Fetch(1) proposes {0,1}, AlterPartition(0) accepts
    svg = tmp_path / "t.svg"
    code, _, _ = _invoke("check", "--model", "kafka", "-p", "hw_isr=committed", "-p",
                         "initial_isr=1", "--svg", str(svg))
    assert code == 1
    texts = [t[4] for t in _texts(ET.fromstring(svg.read_text()))]
    assert "AlterPartition(ISR {b0, b1})" in texts and "answers b0: accepted" in texts
    assert "pending ISR {b0, b1}" in texts


def test_alter_partition_answer_is_drawn_where_the_leader_handles_it() -> None:
    """The kafka model's default counterexample (docs/findings/kraft-equal-epoch-delta.md):
    the controller accepts ISR {b0, b1} (AlterPartition(0)), but broker0 replays the older
    record before it handles that answer.  The answer's arrow belongs to the step the
    leader handles it, so there is none into broker0 at the controller's step, and the
    violating state says what the replay dropped."""
    from isrlab.checker.report import TraceStep
    from isrlab.spec.charts import chart_for

    trace = _walk("kafka", ["controller=kraft"], [
        "Tick", "ShrinkIsr(0)", "AlterPartition(0)", "AlterPartitionResponse(0)", "Fetch(1)",
        "AlterPartition(0)", "HandleCommit(0)"])
    chart = chart_for([t for t in trace if isinstance(t, TraceStep)], "t",
                      ("ReplicationQuorumSuperset", ""))
    arrows = [[(a.source, a.target, a.label) for a in row.arrows] for row in chart.rows]
    assert arrows[3] == [("broker0", "controller", "AlterPartition(ISR {b0})")]
    assert arrows[4] == [("controller", "broker0", "AlterPartitionResponse: accepted")]
    assert arrows[6] == [("broker0", "controller", "AlterPartition(ISR {b0, b1})")]
    notes = {n.lifeline: n.lines for n in chart.rows[6].notes}
    assert "answers b0: accepted" in notes["controller"] and "broker0" not in notes
    assert any("kept relative" in line for line in chart.glossary)  # KRaft's renumbering
    last = {n.lifeline: n.lines for n in chart.rows[7].notes}["broker0"]
    assert "no pending ISR (was {b0, b1})" in last
    assert "no AlterPartition in flight (was accepted)" in last


def test_generic_chart_for_a_toy_model(tmp_path: Path) -> None:
    svg = tmp_path / "t.svg"
    code, _, _ = _invoke("check", "--model", "toy-counter", "-p", "bad=2", "--svg", str(svg))
    assert code == 1
    texts = [t[4] for t in _texts(ET.fromstring(svg.read_text()))]
    assert [t for t in texts if t.startswith("x = ")] == ["x = 0", "x = 1", "x = 2"]
    assert "VIOLATED in state 3: BelowBad" in texts


def test_svg_is_not_written_without_a_counterexample(tmp_path: Path) -> None:
    svg = tmp_path / "t.svg"
    code, out, _ = _invoke("check", "--model", "toy-counter", "--svg", str(svg))
    assert code == 0 and "not written" in out and not svg.exists()


@pytest.mark.parametrize("content", ["not json", '{"states": 3}', '{"vars": []}'])
def test_render_rejects_a_corrupt_trace_in_one_line(tmp_path: Path, content: str) -> None:
    trace = tmp_path / "t.json"
    trace.write_text(content)
    code, _, err = _invoke("render", str(trace), "-o", str(tmp_path / "o.svg"))
    assert code == 2
    assert err.count("\n") == 1 and err.startswith("isrlab: error:")


def test_render_never_overwrites_its_input(kip101_itf: Path) -> None:
    before = kip101_itf.read_bytes()
    code, _, err = _invoke("render", str(kip101_itf), "-o", str(kip101_itf))
    assert code == 2 and "overwrite" in err
    assert kip101_itf.read_bytes() == before


def test_state_graph_of_the_counter_by_hand() -> None:
    # states 0..5; Inc from 0..4 and Reset from 1..5: 10 edges
    graph = state_graph(Counter(5))
    assert [s["x"] for s in graph.states] == [0, 1, 2, 3, 4, 5]
    assert sorted((a, label, b) for a, label, b in graph.edges) == sorted(
        [(i, "Inc", i + 1) for i in range(5)] + [(i, "Reset", 0) for i in range(1, 6)])
    assert graph.initial == frozenset({0})
    # a violation at x=2 stops after that level (x=0, 1, 2 explored, 2 not expanded)
    bad = state_graph(Counter(5, bad=2))
    assert len(bad.states) == 3 and bad.violated == {2: ("BelowBad",)}
    with pytest.raises(GraphTooLarge):
        state_graph(Counter(5), limit=5)


def test_dot_matches_the_checker_counts_and_refuses_large_graphs(tmp_path: Path) -> None:
    dot = tmp_path / "g.dot"
    code, out, _ = _invoke("check", "--model", "toy-counter", "--dot", str(dot))
    assert code == 0 and "6 distinct / 11 generated" in out
    text = dot.read_text()
    assert text.startswith('digraph "toy-counter"')
    assert len(re.findall(r"^  s\d+ \[", text, re.M)) == 6
    assert len(re.findall(r" -> ", text)) == 10  # generated minus the initial state
    code, _, err = _invoke("check", "--model", "toy-counter", "-p", "limit=50",
                           "--dot", str(tmp_path / "h.dot"), "--dot-limit", "20")
    assert code == 2 and err.count("\n") == 1 and "more than 20 states" in err
    assert not (tmp_path / "h.dot").exists()


def test_dot_draws_the_states_of_a_model_with_a_view_as_the_check_counts_them(
    tmp_path: Path,
) -> None:
    """tla-kraft-3.5 has TLC's VIEW: states sharing it are one state for the check, and one
    node in the graph (it drew 19 nodes and 20 edges for the check's 14 states)."""
    dot = tmp_path / "g.dot"
    code, out, _ = _invoke("check", "--model", "tla-kraft-3.5", "--dot", str(dot))
    distinct, generated = (int(n.replace(",", "")) for n in re.findall(
        r"([\d,]+) distinct / ([\d,]+) generated", out)[0])
    text = dot.read_text()
    assert code == 0 and len(re.findall(r"^  s\d+ \[", text, re.M)) == distinct
    assert len(re.findall(r" -> ", text)) == generated - 1  # one initial state


def test_dot_of_a_model_that_cannot_evaluate_a_step_draws_the_checks_states(
    tmp_path: Path,
) -> None:
    """The spec's own evaluation error (exit 3) stopped --dot with a traceback; the graph
    now stops where the check stops and marks the states whose next step fails."""
    dot = tmp_path / "g.dot"
    code, out, err = _invoke("check", "--model", "tla-kraft-3.5", "-p", "values=2", "-p",
                             "leader_shrink_isr_limit=1", "--dot", str(dot))
    distinct, generated = (int(n.replace(",", "")) for n in re.findall(
        r"([\d,]+) distinct / ([\d,]+) generated", out)[0])
    text = dot.read_text()
    assert code == 3 and err == ""
    assert len(re.findall(r"^  s\d+ \[", text, re.M)) == distinct
    assert len(re.findall(r" -> ", text)) == generated - 1
    assert 'xlabel="violates EvaluationError (WriteRecordToLeader(1): SubSeq' in text


def test_bmc_svg_marks_the_z3_counterexample(tmp_path: Path) -> None:
    svg = tmp_path / "b.svg"
    code, _, _ = _invoke("bmc", "--model", "tla-truncate-to-hw", "-p", "replicas=2",
                         "--depth", "8", "--svg", str(svg))
    assert code == 1
    texts = [t[4] for t in _texts(ET.fromstring(svg.read_text()))]
    assert "VIOLATED in state 9: WeakIsr" in texts  # TLC's 9-state counterexample length


def test_validate_svg_draws_the_violation_or_the_witness(kip101_itf: Path, tmp_path: Path) -> None:
    params = BY_KEY["kip101-1"].params(fixed=False)
    args = [a for p in params for a in ("-p", p)]
    bad, good = tmp_path / "bad.svg", tmp_path / "good.svg"
    code, _, _ = _invoke("validate", "--model", "kafka", *args, str(kip101_itf),
                         "--svg", str(bad))
    assert code == 3  # a behaviour of the model that breaks an invariant (docs/oracle.md)
    assert "VIOLATED in state 10: NoCommittedRecordLost" in bad.read_text()
    no_invariant = [a for p in params if not p.startswith("invariants=") for a in ("-p", p)]
    no_invariant += ["-p", "invariants=none"]
    code, _, _ = _invoke("validate", "--model", "kafka", *no_invariant, str(kip101_itf),
                         "--svg", str(good))
    assert code == 0
    texts = [t[4] for t in _texts(ET.fromstring(good.read_text()))]
    assert "TRUNCATED to LEO 0" in texts and not any("VIOLATED" in t for t in texts)


def test_kafka_adapter_split_fetch_and_a_lost_request() -> None:
    from isrlab.checker.chart import Arrow
    from isrlab.checker.report import TraceStep
    from isrlab.cli_support import resolve_model
    from isrlab.spec.charts import chart_for

    _, _, model = resolve_model("kafka", ["controller=zookeeper", "fetch=split", "max_records=1",
                                         "invariants=none", "lost_requests=true"])  # a fault
    state = next(iter(model.init_states()))
    trace = [TraceStep("Init", model.variables(state))]
    for prefix in ("Produce(0)", "FetchRequest(1)", "FetchResponse(1)", "Crash(1)",
                   "Restart(1)", "Lose(LeaderAndIsr"):
        label, state = next((lb, s) for lb, s in model.next_states(state)
                            if lb.startswith(prefix))
        trace.append(TraceStep(label, model.variables(state)))
    rows = chart_for(trace, "t").rows
    assert rows[1].arrows == (Arrow("client", "broker0", "Produce m0@0", "client"),)
    # the follower (LEO 0) asks from offset 0; the leader answers m0 with its HW, still 0
    assert rows[2].arrows == (Arrow("broker1", "broker0", "Fetch(offset 0, epoch 0)", "fetch"),)
    assert rows[3].arrows == (
        Arrow("broker0", "broker1", "FetchResponse([m0@0], HW 0)", "fetch"),)
    assert rows[4].down == frozenset({"broker1"})
    assert ("sends LeaderAndIsr -> b1",) in [n.lines for n in rows[5].notes]
    (lost,) = rows[6].arrows
    assert (lost.source, lost.target, lost.kind, lost.lost) == (
        "controller", "broker1", "leader_and_isr", True)


def test_simulate_svg(tmp_path: Path) -> None:
    svg = tmp_path / "s.svg"
    code, _, _ = _invoke("simulate", "--model", "toy-counter", "-p", "bad=1", "--svg", str(svg))
    assert code == 1
    assert "VIOLATED in state 2: BelowBad" in svg.read_text()  # 0 -> 1: the only way to 1


def test_dot_follows_the_checks_bounds(tmp_path: Path) -> None:
    def nodes(*args: str) -> tuple[int, str]:
        dot = tmp_path / "g.dot"
        _, out, _ = _invoke("check", "--model", "toy-counter", *args, "--dot", str(dot))
        return len(re.findall(r"^  s\d+ \[", dot.read_text(), re.M)), out

    assert nodes("--max-depth", "3")[0] == 3  # x = 0, 1, 2
    count, out = nodes("--max-states", "2")  # stops after the level reaching 2 states
    assert count == 2 and "2 distinct" in out
    assert nodes("-p", "bad=1", "--continue")[0] == 6  # goes on past the violation at x=1


@pytest.mark.parametrize("name", ["NoSuch", "TypeOk"])
def test_render_refuses_an_invariant_the_model_does_not_have(kip101_itf: Path, tmp_path: Path,
                                                             name: str) -> None:
    out = tmp_path / "o.svg"
    code, stdout, err = _invoke("render", str(kip101_itf), "-o", str(out), "--invariant", name)
    assert code == 2, (stdout, err)
    assert err.count("\n") == 1 and name in err and "kafka" in err
    assert not out.exists()


def test_render_marks_an_invariant_the_model_has(kip101_itf: Path, tmp_path: Path) -> None:
    out = tmp_path / "o.svg"
    code, _, err = _invoke("render", str(kip101_itf), "-o", str(out),
                           "--invariant", "NoCommittedRecordLost")
    assert code == 0, err
    assert "NoCommittedRecordLost" in out.read_text()


def test_a_byte_order_mark_does_not_make_a_trace_unreadable(kip101_itf: Path,
                                                            tmp_path: Path) -> None:
    """Editors on Windows save UTF-8 with a byte-order mark; the trace is still a trace."""
    from isrlab.checker.trace import read_itf

    marked = tmp_path / "bom.itf.json"
    marked.write_bytes(b"\xef\xbb\xbf" + kip101_itf.read_bytes())
    code, stdout, err = _invoke("render", str(marked), "-o", str(tmp_path / "o.svg"))
    assert code == 0 and "10 states" in stdout, err
    assert read_itf(marked) == read_itf(kip101_itf)


def test_kafka_adapter_draws_kraft_steps() -> None:
    from isrlab.checker.report import TraceStep
    from isrlab.cli_support import resolve_model
    from isrlab.spec.charts import chart_for

    _, _, model = resolve_model("kafka", ["controller=kraft", "max_records=1",
                                         "invariants=none"])
    state = next(iter(model.init_states()))
    trace = [TraceStep("Init", model.variables(state))]
    for label in ("Crash(1)", "FenceBroker(1)", "HandleCommit(0)"):
        state = dict(model.next_states(state))[label]
        trace.append(TraceStep(label, model.variables(state)))
    chart = chart_for(trace, "t")
    assert "metadata" in chart.kinds and "leader_and_isr" not in chart.kinds
    rows = chart.rows
    notes = {n.lifeline: n.lines for n in rows[2].notes}
    # the controller fences b1 itself: an ISR change with no AlterIsr arrow from b1
    assert "fences b1: its session expired" in notes["controller"]
    assert "    ISR {b0}" in notes["controller"] and rows[2].arrows == ()
    (commit,) = rows[3].arrows
    assert (commit.source, commit.target, commit.kind) == ("controller", "broker0", "metadata")
    assert "Fence b1" in commit.label


def _walk(model_name: str, params: list[str], labels: list[str]) -> list[object]:
    """The trace of ``labels`` from the model's first initial state (each label must be
    enabled: a KeyError otherwise)."""
    from isrlab.checker.report import TraceStep
    from isrlab.cli_support import resolve_model

    _, _, model = resolve_model(model_name, params)
    state = next(iter(model.init_states()))
    trace = [TraceStep("Init", model.variables(state))]
    for label in labels:
        state = dict(model.next_states(state))[label]
        trace.append(TraceStep(label, model.variables(state)))
    return list(trace)


@pytest.mark.parametrize(("model", "fetch", "shrink"), [
    ("tla-kip279", "FollowerReplicate(r1 from r2)", "LeaderShrinkIsr(r2, r1)"),
    ("tla-kip320", "FencedFollowerFetch(r1 from r2)", "FencedLeaderShrinkIsr(r2, r1)"),
])
def test_tla_kip279_and_kip320_charts_draw_fetches_and_isr_writes(
    model: str, fetch: str, shrink: str,
) -> None:
    from isrlab.checker.report import TraceStep
    from isrlab.spec.charts import chart_for

    follow = ("BecomeFollowerTruncateKip279(r1 follows r2, epoch 0)" if model == "tla-kip279"
              else "FencedBecomeFollowerAndTruncate(r1 follows r2, epoch 0)")
    raise_hw = "FencedLeaderIncHighWatermark(r2)" if model == "tla-kip320" else (
        "LeaderIncHighWatermark(r2)")
    trace = _walk(model, [], ["ControllerElectLeader(r2)", "BecomeLeader(r2, epoch 0)",
                              "LeaderWrite(r2)", shrink, raise_hw, follow, fetch])
    chart = chart_for([t for t in trace if isinstance(t, TraceStep)], "t")
    arrows = {row.action: [(a.source, a.target, a.label, a.kind) for a in row.arrows]
              for row in chart.rows}
    epoch = ", epoch 0" if model == "tla-kip320" else ""  # KIP-320's fetch names its epoch
    assert arrows[fetch] == [("r1", "r2", f"Fetch(offset 0{epoch})", "fetch"),
                             ("r2", "r1", "FetchResponse([m0@0], HW 1)", "fetch")]
    assert arrows[shrink] == [("r2", "controller", "write ISR {r2} to ZK", "isr_write")]


def test_tla_kip320_first_try_chart_draws_its_fetches_and_isr_writes() -> None:
    """tla-kip320-first-try names its fetch FollowerFetch and its shrink
    LeaderShrinkIsrBetterFencing: both are drawn (the chart of its configuration B
    counterexample had neither), and its notation names replicas r1, r2."""
    from isrlab.checker.report import TraceStep
    from isrlab.spec.charts import chart_for

    fetch, shrink = "FollowerFetch(r1 from r2)", "LeaderShrinkIsrBetterFencing(r2, r1)"
    trace = _walk("tla-kip320-first-try", [], [
        "ControllerElectLeader(r2)", "BecomeLeader(r2, epoch 0)", "LeaderWrite(r2)", shrink,
        "ImprovedLeaderIncHighWatermark(r2)", "BecomeFollower(r1 follows r2, epoch 0)", fetch])
    chart = chart_for([t for t in trace if isinstance(t, TraceStep)], "t")
    arrows = {row.action: [(a.source, a.target, a.label) for a in row.arrows]
              for row in chart.rows}
    assert arrows[fetch] == [("r1", "r2", "Fetch(offset 0)"),
                             ("r2", "r1", "FetchResponse([m0@0], HW 1)")]
    assert arrows[shrink] == [("r2", "controller", "write ISR {r2} to ZK")]
    assert "'follows rN' = it follows replica rN" in chart.glossary[0]


def test_tla_kraft_chart_draws_its_messages(tmp_path: Path) -> None:
    # docs/conformance.md's kip903_check=false row: LeaderCandidateCompletenessProperty
    # violated in 14 states (TLC); its trace fetches, drops a response at b2's unclean
    # shutdown, registers b2 again and sends an AlterPartition
    svg = tmp_path / "t.svg"
    code, out, _ = _invoke("check", "--model", "tla-kraft-3.5", "-p", "unclean_shutdown_limit=1",
                           "-p", "fence_broker_limit=1", "-p", "kip903_check=false",
                           "--no-progress", "--svg", str(svg))
    assert code == 1 and "(trace of 14 states)" in out
    texts = [t[4] for t in _texts(ET.fromstring(svg.read_text()))]
    assert {"client", "broker1", "broker2", "controller"} <= set(texts)
    assert "Produce A@1" in texts and "acked A" in texts
    assert "Fetch(offset 0, epoch 1, last fetched epoch 0)" in texts
    assert "FetchResponse([A@1], HW 0)" in texts
    assert "FetchResponse([], HW 1) (dropped)" in texts
    assert "metadata: leader b1, epoch 1, ISR {b1}" in texts
    assert "AlterPartition(ISR {b1, b2}, partition epoch 2)" in texts
    assert "BrokerRegistration(incarnation 3)" in texts
    assert "registered: broker epoch 3" in texts
    assert "DOWN, its log lost (unclean)" in texts
    assert not any(t.startswith(("partition_data", "messages")) for t in texts)  # not generic


@pytest.mark.parametrize(("model", "params"), [
    ("tla-kraft-3.5", ["unclean_shutdown_limit=1", "clean_shutdown_limit=1",
                       "fence_broker_limit=1", "leader_shrink_isr_limit=1",
                       "reassignment_limit=1", "brokers=3", "replication_factor=3"]),
    ("tla-kraft-kip966", ["data_loss_shutdown_limit=1", "no_data_loss_shutdown_limit=1",
                          "fence_broker_limit=1", "leader_shrink_isr_limit=1", "brokers=3",
                          "replication_factor=3"]),
])
def test_every_tla_kraft_step_gets_the_kraft_chart(model: str, params: list[str]) -> None:
    # chart_for falls back to the generic chart when an adapter fails: seeded random walks
    # through every action must keep the KRaft adapter (its legend, not a variable dump)
    import random

    from isrlab.checker.report import TraceStep
    from isrlab.cli_support import resolve_model
    from isrlab.spec.charts import KRAFT_TLA_KINDS, chart_for

    _, _, built = resolve_model(model, params)
    actions: set[str] = set()
    for seed in range(25):
        rng = random.Random(seed)
        state = next(iter(built.init_states()))
        trace = [TraceStep("Init", built.variables(state))]
        for _ in range(40):
            successors = list(built.next_states(state))
            if not successors:
                break
            label, state = rng.choice(successors)
            trace.append(TraceStep(label, built.variables(state)))
        chart = chart_for(trace, "t", ("X", "y"))
        assert chart.kinds is KRAFT_TLA_KINDS and chart.lifelines[0] == "client"
        actions |= {row.action.split("(")[0] for row in chart.rows}
    assert {"ReceiveAlterPartitionResponse", "ReceiveBrokerRegResponse", "FenceBroker",
            "ReceiveMetadataUpdate", "ReceiveFetchResponse"} <= actions


def test_kafka_chart_and_explorer_say_kafka_4485s_fields_in_words() -> None:
    # KAFKA-4485's remote_last_fetch was drawn as a Python dict, the widest line of a
    # leader's note: {1: {'leader_leo': 0, 'age': 1}}
    from isrlab.checker.report import TraceStep
    from isrlab.explorer import kafka_words
    from isrlab.spec.charts import chart_for

    trace = [t for t in _walk("kafka", ["controller=zookeeper", "metadata=true"],
                              ["Produce(0)", "Fetch(1)"]) if isinstance(t, TraceStep)]
    chart = chart_for(trace, "t")
    init = {n.lifeline: n.lines for n in chart.rows[0].notes}
    assert "b1 last fetch: leader LEO 0, 1 tick ago" in init["broker0"]
    assert "  alive {b0, b1}" in init["broker1"]  # the metadata cache's sets on lines of their own
    assert not any("'leader_leo'" in line for lines in init.values() for line in lines)
    fetch = {n.lifeline: n.lines for n in chart.rows[2].notes}
    assert "b1 last fetch: leader LEO 1, 0 ticks ago" in fetch["broker0"]
    words = kafka_words("broker0['remote_last_fetch']", trace[2].state["broker0"][
        "remote_last_fetch"])
    assert words == "broker 1: last fetched at leader LEO 1, 0 ticks ago"


def test_the_explorer_says_tla_krafts_nested_tuples_in_words() -> None:
    # partition_data, broker_fetchers and messages are the spec's nested tuples
    # (<<<<<<1, 0, False>>, True>> ...): the explorer's table adds their words
    from isrlab.checker.report import TraceStep
    from isrlab.explorer import state_rows

    trace = [t for t in _walk("tla-kraft-3.5", [], ["WriteRecordToLeader(1)",
                                                    "SendFetchRequest(2)",
                                                    "ReceiveFetchRequest(1)"])
             if isinstance(t, TraceStep)]
    words = {name: said for name, _, said in state_rows(trace[-1].state)}
    assert words["partition_data"] == ("broker 1: log [A@1], LEO 1, HW 0; "
                                       "broker 2: log [], LEO 0, HW 0")
    assert words["broker_fetchers"] == ("broker 2 fetches from broker 1 at offset 0 (last "
                                        "fetched epoch 0), a request in flight")
    assert words["messages"] == "FetchResponse([A@1], HW 0): broker1 -> broker2"


@pytest.mark.parametrize("width", [900, 1000, 1300])
def test_a_fitted_chart_of_six_brokers_keeps_within_its_width_without_overlaps(
    width: int,
) -> None:
    """The explorer's chart (``render_svg(..., width)``): 8 lifelines share ``width`` px
    (natural: over 2,000), the widest notes wrapped; no text or note overlaps another,
    nothing runs past the right edge, neighbouring lifelines keep a name's room."""
    from isrlab.explorer import Session
    from isrlab.models import registry

    entry = registry().entries["kafka"]
    model = entry.build(registry().parse_params(
        entry, ["controller=zookeeper", "brokers=6", "metadata=true"]).unwrap())
    session = Session(model, "kafka")
    for _ in range(6):
        session.take(0)
    natural = ET.fromstring(session.chart())
    assert float(natural.get("width", "0")) > 2000
    root = ET.fromstring(session.chart(width))
    assert float(root.get("width", "0")) <= width
    boxes = _texts(root)
    assert all(b[0] >= 0 and b[2] <= width for b in boxes)
    assert [(a[4], b[4]) for a, b in itertools.combinations(boxes, 2) if _overlap(a, b)] == []
    notes = [
        (float(r.get("x", "0")), float(r.get("y", "0")),
         float(r.get("x", "0")) + float(r.get("width", "0")),
         float(r.get("y", "0")) + float(r.get("height", "0")), "")
        for r in root.iter(f"{SVG}rect") if r.get("rx") == "3"
    ]
    assert len(notes) > 10
    assert not any(_overlap(a, b) for a, b in itertools.combinations(notes, 2))
    heads = [t for t in root.iter(f"{SVG}text") if t.get("text-anchor") == "middle"]
    assert [t.text for t in heads] == ["client", *(f"broker{b}" for b in range(6)),
                                       "controller"]
    lanes = sorted(float(t.get("x", "0")) for t in heads)
    assert all(b - a >= 92 for a, b in itertools.pairwise(lanes))  # a name's room each


@pytest.mark.parametrize(("name", "params"), [
    ("toy-counter", []), ("kafka", ["controller=zookeeper", "brokers=6", "metadata=true"])])
def test_a_chart_that_fits_its_width_is_drawn_as_render_draws_it(
    name: str, params: list[str],
) -> None:
    """Given room for its natural layout, the explorer's chart is ``render``'s, byte for
    byte (arrow labels' spans widened, at least 720 px)."""
    from isrlab.explorer import Session
    from isrlab.models import registry

    entry = registry().entries[name]
    session = Session(entry.build(registry().parse_params(entry, params).unwrap()), name)
    for _ in range(6):
        session.take(0)
    assert session.chart(5000) == session.chart()


def test_a_narrow_chart_breaks_lines_between_words_or_identifier_parts() -> None:
    """The explorer's chart in a narrow panel: captions and notes wrap at spaces, and a word
    longer than its line only where its parts meet (``AlterPartition`` / ``Response(0)``),
    never mid-word (``AlterPartitionRes`` / ``ponse``, ``partitio`` / ``n epoch``)."""
    from isrlab.checker.chart import _pieces
    from isrlab.explorer import Session
    from isrlab.models import registry

    entry = registry().entries["kafka"]
    session = Session(entry.build(registry().parse_params(entry, []).unwrap()), "kafka")
    session.restore(0, ["Tick", "ShrinkIsr(0)", "AlterPartition(0)", "AlterPartitionResponse(0)",
                        "Fetch(1)", "AlterPartition(0)", "HandleCommit(0)"], 7)

    def words(svg: str) -> set[str]:
        return {w for t in ET.fromstring(svg).iter(f"{SVG}text") for w in (t.text or "").split()}

    whole, narrow = words(session.chart()), words(session.chart(420))
    assert "Response(0)" in narrow and "AlterPartitionResponse(0)" not in narrow  # it wrapped
    assert {p for w in narrow for p in _pieces(w)} - {p for w in whole for p in _pieces(w)} == set()


def test_dot_labels_a_state_with_what_changed_from_the_state_it_was_reached_from(
    tmp_path: Path,
) -> None:
    """Counter: Inc from x = 1 gives x = 2 (s2, first reached from s1); kafka: a label names
    a variable (or entry) exactly when it differs from the parent's."""
    from isrlab.checker.graph import node_label
    from isrlab.models import registry

    dot = tmp_path / "g.dot"
    assert _invoke("check", "--model", "toy-counter", "--dot", str(dot))[0] == 0
    assert '  s0 [label="s0 (initial)\\lx = 0\\l", peripheries=2];' in dot.read_text()
    assert '  s2 [label="s2, from s1:\\lx = 2\\l"];' in dot.read_text()
    assert _invoke("check", "--model", "toy-counter", "--dot", str(dot),
                   "--dot-labels", "full")[0] == 0
    assert '  s2 [label="s2\\lx = 2\\l"];' in dot.read_text()
    entry = registry().entries["kafka"]
    graph = state_graph(entry.build(registry().parse_params(
        entry, ["controller=zookeeper", "max_records=1"]).unwrap()), max_depth=3)
    assert len(graph.parents) == len(graph.states) - len(graph.initial) > 10
    for i, parent in graph.parents.items():
        head, *lines = node_label(graph, i)
        assert head == f"s{i}, from s{parent}:"
        before, after = graph.states[parent], graph.states[i]
        named = {line.split("[")[0].split(" = ")[0] for line in lines}
        assert named == {k for k in after if before[k] != after[k]}
