"""The three verdicts of ``isrlab validate``: the checker's own counterexample is a behaviour
that breaks its invariant (exit 3, invariant and step named), its prefix without the last
step is accepted (exit 0); the ITF file records the model and its parameters, which validate
uses when given no ``--model`` / ``-p``; ``--json`` writes the verdict."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner

from isrlab.cli import cli

ACKS_1 = ("-p", "max_records=1", "-p", "max_leader_epoch=2", "-p", "lost_requests=false",
          "-p", "acks=1", "-p", "invariants=AcknowledgedWritesDurable")
"""docs/scenarios.md #6 (acks=1 loss): a counterexample of 5 states."""


def counterexample(tmp_path: Path) -> Path:
    path = tmp_path / "cex.itf.json"
    outcome = CliRunner().invoke(cli, ["check", "--model", "kafka", *ACKS_1, "--itf", str(path)])
    assert outcome.exit_code == 1, outcome.output
    return path


def test_the_itf_file_records_the_model_and_its_parameters(tmp_path: Path) -> None:
    meta = json.loads(counterexample(tmp_path).read_text())["#meta"]
    assert meta["model"] == "kafka"
    assert meta["parameters"]["acks"] == "1"
    assert meta["parameters"]["max_records"] == 1
    assert meta["parameters"]["lost_requests"] is False


def test_the_checkers_counterexample_breaks_its_invariant(tmp_path: Path) -> None:
    path = counterexample(tmp_path)
    states = len(json.loads(path.read_text())["states"])
    outcome = CliRunner().invoke(cli, ["validate", str(path)])  # model and -p from #meta
    assert outcome.exit_code == 3, outcome.output
    assert outcome.output.startswith(
        f"kafka: BREAKS AcknowledgedWritesDurable: the {states} steps match a behaviour")
    assert f"(at step {states}: " in outcome.output
    outcome = CliRunner().invoke(cli, ["validate", "--json", str(path)])
    report = json.loads(outcome.output)
    assert report["verdict"] == "breaks-invariant"
    assert report["matched_steps"] == states == report["matched_behaviour_length"]
    assert report["invariant"]["name"] == "AcknowledgedWritesDurable"
    assert report["invariant"]["step"] == states


def test_its_prefix_without_the_last_step_is_accepted(tmp_path: Path) -> None:
    path = counterexample(tmp_path)
    document = json.loads(path.read_text())
    document["states"] = document["states"][:-1]
    prefix = tmp_path / "prefix.itf.json"
    prefix.write_text(json.dumps(document))
    outcome = CliRunner().invoke(cli, ["validate", str(prefix)])
    assert outcome.exit_code == 0, outcome.output
    assert "ACCEPTED" in outcome.output
    outcome = CliRunner().invoke(cli, ["validate", "--json", str(prefix)])
    assert json.loads(outcome.output)["verdict"] == "accepted"


def test_given_parameters_override_the_recorded_ones(tmp_path: Path) -> None:
    """With acks=all the counterexample's produce is not acknowledged at once: the recorded
    acknowledged values are then no behaviour of the model."""
    path = counterexample(tmp_path)
    outcome = CliRunner().invoke(cli, ["validate", "--model", "kafka", "-p", "max_records=1",
                                       "-p", "lost_requests=false", str(path)])
    assert outcome.exit_code == 1, outcome.output
    assert "REJECTED at step 2" in outcome.output


def test_a_trace_naming_no_model_needs_one(tmp_path: Path) -> None:
    trace = tmp_path / "t.jsonl"
    trace.write_text('{"action": "Init"}\n')
    outcome = CliRunner().invoke(cli, ["validate", str(trace)])
    assert outcome.exit_code == 2
    assert "--model: is required" in outcome.output


def test_json_of_a_rejection_names_step_and_line(tmp_path: Path) -> None:
    trace = tmp_path / "t.jsonl"
    trace.write_text('{"action": "Init"}\n{"action": "ShrinkIsr", "args": ["1"]}\n')
    outcome = CliRunner().invoke(cli, ["validate", "--model", "kafka", "--json", str(trace)])
    assert outcome.exit_code == 1, outcome.output
    report = json.loads(outcome.output)
    assert report["verdict"] == "rejected"
    assert (report["rejected"]["step"], report["rejected"]["line"]) == (2, 2)
    assert report["matched_steps"] == 1


def test_the_witness_of_a_log_records_its_model_and_validates_again(tmp_path: Path) -> None:
    logs = sorted((Path(__file__).parent.parent / "fixtures" / "oracle" / "kafka-2.0").glob("*"))
    witness = tmp_path / "w.itf.json"
    outcome = CliRunner().invoke(cli, ["validate", "--model", "kafka", "--engine", "model",
                                       "--witness", str(witness), *map(str, logs)])
    assert outcome.exit_code == 0, outcome.output
    meta = json.loads(witness.read_text())["#meta"]
    assert (meta["model"], meta["parameters"]["brokers"]) == ("kafka", 2)
    again = CliRunner().invoke(cli, ["validate", str(witness)])
    assert again.exit_code == 0, again.output
