"""Every counterexample says why its last state breaks the invariant (``Property.explain``):
in the text ``isrlab check`` prints, the JSON report and the ITF ``#meta``; a property without
an ``explain`` prints as before."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner

from isrlab.checker.model import Property
from isrlab.checker.report import TraceStep, Violation, explained, violation_json
from isrlab.checker.trace import violation_text
from isrlab.cli import cli
from isrlab.explorer import Session
from isrlab.models import registry
from isrlab.spec.kafka.scenarios import BY_KEY, run

KIP101 = BY_KEY["kip101-1"]


def _args(params: tuple[str, ...]) -> list[str]:
    return [a for p in params for a in ("-p", p)]


def test_kip101_explanation_names_the_lost_record_and_the_brokers() -> None:
    # KIP-101 scenario 1: broker1 truncates to its HW (0) and is elected, so m0, committed
    # in epoch 0 while broker0 led, is gone from the new leader broker1 (epoch 1).
    result = run(KIP101, fixed=False)
    assert result.violation is not None
    assert result.violation.invariant == "NoCommittedRecordLost"
    why = result.violation.explanation
    assert "record m0" in why
    assert "committed in leader epoch 0" in why
    assert "broker1, which leads epoch 1" in why
    assert "broker0 at offset 0" in why
    text = violation_text(result.violation)
    assert text.splitlines()[-1].startswith(
        f"Why State {result.violation.length} breaks NoCommittedRecordLost: record m0")


def test_check_prints_and_writes_the_explanation(tmp_path: Path) -> None:
    json_path, itf_path = tmp_path / "r.json", tmp_path / "t.itf.json"
    out = CliRunner().invoke(cli, [
        "check", "--model", "kafka", *_args(KIP101.params(fixed=False)), "--no-progress",
        "--json", str(json_path), "--itf", str(itf_path)])
    assert out.exit_code == 1, out.output
    assert "breaks NoCommittedRecordLost: record m0" in out.output
    report = json.loads(json_path.read_text())
    assert "record m0" in report["violation"]["explanation"]
    itf = json.loads(itf_path.read_text())
    assert itf["#meta"]["explanation"] == report["violation"]["explanation"]


def test_tla_kip101_strong_isr_explanation() -> None:
    out = CliRunner().invoke(cli, [
        "check", "--model", "tla-kip101", "-p", "invariants=StrongIsr", "--no-progress"])
    assert out.exit_code == 1, out.output
    why = [line for line in out.output.splitlines() if line.startswith("Why State")]
    assert len(why) == 1
    assert "breaks StrongIsr:" in why[0]
    assert "the quorum's (ZooKeeper's) ISR" in why[0]
    assert "would lose it" in why[0]


def test_a_property_without_explain_prints_as_before() -> None:
    out = CliRunner().invoke(cli, [
        "check", "--model", "toy-counter", "-p", "bad=2", "--no-progress"])
    assert out.exit_code == 1, out.output
    assert "BelowBad is violated" in out.output
    assert "Why State" not in out.output
    v = Violation("BelowBad", (TraceStep("Init", {"x": 0}),))
    assert explained(v, [Property("BelowBad", bool)]) == v
    assert "explanation" not in violation_json(v)


def test_an_explain_that_raises_keeps_the_counterexample() -> None:
    def broken(state: object) -> str:
        raise KeyError("x")

    v = Violation("P", (TraceStep("Init", {}),))
    got = explained(v, [Property("P", bool, "", broken)])
    assert got.trace == v.trace
    assert got.explanation.startswith("(no explanation: P's explain raised KeyError")


def _kip101_session() -> Session:
    entry = registry().entries["kafka"]
    params = registry().parse_params(entry, list(KIP101.params(fixed=False))).unwrap()
    return Session(entry.build(params), "kafka")


def test_the_explorer_explains_its_check_result_and_the_violated_state() -> None:
    session = _kip101_session()
    session.bounded_check(10)
    assert session.check["violation"] == "NoCommittedRecordLost"
    assert "record m0" in session.check["explanation"]
    session.append_counterexample()
    session.goto(len(session.path) - 1)
    (violated,) = session.view()["violated"]
    assert violated["name"] == "NoCommittedRecordLost"
    assert "broker1, which leads epoch 1" in violated["why"]
    assert "Why: record m0" in session.chart()


def test_the_svg_note_says_why(tmp_path: Path) -> None:
    svg = tmp_path / "c.svg"
    out = CliRunner().invoke(cli, [
        "check", "--model", "kafka", *_args(KIP101.params(fixed=False)), "--no-progress",
        "--svg", str(svg)])
    assert out.exit_code == 1, out.output
    text = svg.read_text()
    assert "VIOLATED in state 10: NoCommittedRecordLost" in text
    assert "Why: record m0, committed in leader epoch 0" in text


def test_kraft_replication_quorum_superset_names_the_uncounted_replica() -> None:
    # docs/kafka-model.md: with controller=kraft and every other default,
    # ReplicationQuorumSuperset breaks in 8 states (the equal-epoch-delta finding).
    out = CliRunner().invoke(cli, [
        "check", "--model", "kafka", "-p", "controller=kraft", "--no-progress"])
    assert out.exit_code == 1, out.output
    (why,) = [line for line in out.output.splitlines() if line.startswith("Why State")]
    assert why.startswith("Why State 8 breaks ReplicationQuorumSuperset: the controller's ISR "
                          "{broker0, broker1} has {broker1}, which the leader broker0")
    # State 8's HandleCommit dropped the leader's pending change: said in words, not "{}".
    assert "(its ISR {broker0}, no ISR change pending)" in why


def test_kraft_replication_quorum_superset_names_a_pending_isr_change() -> None:
    from isrlab.spec.kafka.kraft_invariants import explain_replication_quorum_superset

    state = {"controller": {"leader": 0, "isr": (0, 1, 2)},
             "broker0": {"leader_epoch": 1, "isr": (0,), "pending_isr": (0, 1)}}
    assert "(its ISR {broker0}, an ISR change to {broker0, broker1} pending)" in (
        explain_replication_quorum_superset(state))


def test_validate_explains_the_invariant_a_trace_breaks(tmp_path: Path) -> None:
    itf_path = tmp_path / "t.itf.json"
    args = _args(KIP101.params(fixed=False))
    CliRunner().invoke(cli, ["check", "--model", "kafka", *args, "--no-progress",
                             "--itf", str(itf_path)])
    out = CliRunner().invoke(cli, ["validate", "--model", "kafka", *args, str(itf_path)])
    assert out.exit_code == 3, out.output  # validate: a behaviour that breaks an invariant
    assert "Why State 10 breaks NoCommittedRecordLost: record m0" in out.output


def test_async_isr_current_hw_names_the_replica_behind_the_hw() -> None:
    # HW over the current ISR only (not KIP-497's maximal ISR): the controller's ISR can hold
    # a replica below the HW.
    out = CliRunner().invoke(cli, [
        "check", "--model", "tla-async-isr", "-p", "hw_isr=current", "--no-progress"])
    assert out.exit_code == 1, out.output
    (why,) = [line for line in out.output.splitlines() if line.startswith("Why State")]
    assert "breaks ValidHighWatermark: the leader's high watermark is 1" in why
    assert "r3 at offset 0" in why


def test_bmc_explains_its_counterexample(tmp_path: Path) -> None:
    # docs/conformance.md, configuration A: KafkaTruncateToHighWatermark breaks WeakIsr in
    # 9 states.
    itf_path = tmp_path / "t.itf.json"
    out = CliRunner().invoke(cli, ["bmc", "--model", "tla-truncate-to-hw", "--depth", "10",
                                   "--itf", str(itf_path)])
    assert out.exit_code == 1, out.output
    (why,) = [line for line in out.output.splitlines() if line.startswith("Why State")]
    assert why.startswith("Why State 9 breaks WeakIsr: r")
    assert json.loads(itf_path.read_text())["#meta"]["explanation"] == why.split(": ", 1)[1]


def test_docs_scenarios_quotes_kip101s_explanation_as_printed() -> None:
    doc = (Path(__file__).resolve().parents[1] / "docs" / "scenarios.md").read_text("utf-8")
    block = doc.split(f"$ {KIP101.command(False)}\n", 1)[1].split("```", 1)[0]
    violation = run(KIP101, fixed=False).violation
    assert violation is not None
    assert block.endswith(violation_text(violation).splitlines()[-1] + "\n")
