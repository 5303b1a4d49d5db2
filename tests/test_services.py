"""isrlab.services through ``isrlab.api``: the API runs, renders and validates what the
commands do, through the same services, so its reports and files are the commands' own
(``isrlab/services/``, docs/api.md)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from isrlab import api
from isrlab.checker.validate import ValidationResult
from isrlab.cli import cli

FIXTURES = Path(__file__).parent / "fixtures" / "oracle"

CONFIG_A_KIP320 = (5_973, 11_839, 18)
"""TLC 2.15: tla-kip320 in configuration A: distinct, generated, diameter (docs/conformance.md)."""


def _invoke(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(cli, list(args))
    return result.exit_code, result.stdout, result.stderr


def _counts(result: api.CheckResult) -> tuple[int, int, int]:
    return result.distinct_states, result.generated_states, result.diameter


def test_a_check_with_a_run_directory_resumes_to_tlcs_counts(tmp_path: Path) -> None:
    run_dir = tmp_path / "run"
    first = api.check("tla-kip320", run_dir=run_dir)
    assert _counts(first) == CONFIG_A_KIP320
    assert (run_dir / "commit.json").exists()
    again = api.check("tla-kip320", run_dir=str(run_dir))  # the finished run, read back
    assert _counts(again) == CONFIG_A_KIP320 and again.ok and again.complete


def test_the_api_refuses_what_the_command_refuses() -> None:
    with pytest.raises(api.InputError, match=r"--buckets applies to the Spark engine"):
        api.check("toy-counter", buckets=3)
    with pytest.raises(api.InputError, match=r"no symmetry to reduce by"):
        api.check("toy-clock", symmetry=True)
    with pytest.raises(api.InputError, match=r"declares no liveness properties"):
        api.check_liveness("tla-kip320")
    with pytest.raises(api.InputError, match=r"has a view"):
        api.check_liveness("tla-kraft-3.5")
    with pytest.raises(api.InputError, match=r"has no symbolic encoding"):
        api.bmc("toy-counter")
    code, _, err = _invoke("check", "--model", "toy-counter", "--buckets", "3")
    assert (code, err) == (2, "isrlab: error: --buckets applies to the Spark engine "
                              "(--engine spark)\n")


def test_the_liveness_check_is_the_commands() -> None:
    params: dict[str, api.ParamValue] = {"view": "none", "fence_broker_limit": 1}
    result, live = api.check_liveness("tla-kraft-3.5", params)
    assert result.ok and live is not None and live.ok
    code, out, _ = _invoke("check", "--model", "tla-kraft-3.5", "-p", "view=none",
                           "-p", "fence_broker_limit=1", "--liveness", "--no-progress")
    assert code == 0
    first, second = out.splitlines()[:2]
    assert first.split(", diameter")[0] == result.summary_line().split(", diameter")[0]
    assert second.split("; graph of")[0] == live.text().split("; graph of")[0]


def test_the_charts_and_traces_are_the_commands(tmp_path: Path) -> None:
    params = {"invariants": "StrongIsr"}
    result = api.check("tla-kip101", params)
    assert result.violation is not None and len(result.violation.trace) == 12
    code, _, _ = _invoke("check", "--model", "tla-kip101", "-p", "invariants=StrongIsr",
                         "--no-progress", "--svg", str(tmp_path / "cli.svg"),
                         "--itf", str(tmp_path / "cli.itf.json"))
    assert code == 1
    assert api.write_svg(tmp_path / "api.svg", result, "tla-kip101", params)
    assert (tmp_path / "api.svg").read_bytes() == (tmp_path / "cli.svg").read_bytes()
    assert api.write_itf(tmp_path / "api.itf.json", result)
    assert (tmp_path / "api.itf.json").read_bytes() == (tmp_path / "cli.itf.json").read_bytes()
    assert api.render(tmp_path / "api.itf.json", tmp_path / "rendered.svg") == 12
    assert _invoke("render", str(tmp_path / "cli.itf.json"), "-o",
                   str(tmp_path / "cli-rendered.svg"))[0] == 0
    assert (tmp_path / "rendered.svg").read_bytes() == (
        tmp_path / "cli-rendered.svg").read_bytes()
    clean = api.check("toy-counter")
    assert not api.write_svg(tmp_path / "none.svg", clean)  # no counterexample, no file
    assert not api.write_itf(tmp_path / "none.itf.json", clean)
    assert not (tmp_path / "none.svg").exists() and not (tmp_path / "none.itf.json").exists()


def test_the_state_graph_is_the_commands(tmp_path: Path) -> None:
    api.write_dot(tmp_path / "api.dot", "toy-counter", {"limit": 3})
    assert _invoke("check", "--model", "toy-counter", "-p", "limit=3", "--no-progress",
                   "--dot", str(tmp_path / "cli.dot"))[0] == 0
    assert (tmp_path / "api.dot").read_text() == (tmp_path / "cli.dot").read_text()
    with pytest.raises(api.InputError, match=r"more than 2 states"):
        api.write_dot(tmp_path / "big.dot", "toy-counter", limit=2)


def test_the_api_reads_a_kafka_log_as_a_trace_of_the_kafka_model() -> None:
    log = FIXTURES / "broker-orders-0.log"
    result = api.validate("kafka", log, engine="model", partition="orders-0")
    assert isinstance(result, ValidationResult)
    assert result.accepted
    code, out, _ = _invoke("validate", "--engine", "model", "--partition", "orders-0",
                           "--json", str(log))
    assert code == 0
    assert result.to_json("kafka") == json.loads(out)
    oracle = api.validate("kafka", log, partition="orders-0")
    assert isinstance(oracle, api.Verdict)


def test_the_api_bmc_is_the_commands() -> None:
    pytest.importorskip("z3")
    run = api.bmc("tla-kip320", depth=3)
    assert run.report.ok and not run.gave_up
    assert run.report.extra["bmc"]["proved_steps"] == 3
    code, out, _ = _invoke("bmc", "--model", "tla-kip320", "--depth", "3")
    assert code == 0
    assert out.split(";")[0] == run.summary().split(";")[0]


def test_the_api_proves_into_a_directory_of_its_own(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import isrlab.services.proofs as prove_service
    from isrlab.proofs.obligations import RESULTS_JSON, load

    kip101 = [g for g in load() if g.model == "tla-kip101"]
    monkeypatch.setattr(prove_service, "run_all", lambda *_: kip101)  # Z3's runs: tests/z3
    before = RESULTS_JSON.read_bytes()
    run = api.prove("tla-kip101", out=tmp_path / "out")
    assert kip101 and run.lost == [] and run.results == kip101
    assert RESULTS_JSON.read_bytes() == before  # the recorded outcomes are left alone
    written = json.loads((tmp_path / "out" / "results.json").read_text())
    assert {g["model"] for g in written["groups"]} == {"tla-kip101"}
    with pytest.raises(api.InputError, match=r"no proof obligations for model 'toy-counter'"):
        api.prove("toy-counter")
    with pytest.raises(api.InputError, match=r"takes no --out"):
        api.prove("tla-kip101", out=tmp_path, update=True)
