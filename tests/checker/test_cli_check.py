"""``isrlab check`` / ``simulate``: exit codes 0, 1, 2 and one-line messages for bad input."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from isrlab.checker.trace import read_itf
from isrlab.cli import cli


def _invoke(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(cli, list(args))
    return result.exit_code, result.stdout, result.stderr


def test_check_exits_zero_when_every_invariant_holds() -> None:
    code, out, _ = _invoke("check", "--model", "toy-counter", "-p", "limit=5")
    assert code == 0
    assert "6 distinct / 11 generated states, diameter 6" in out


def test_check_exits_one_and_prints_the_trace_on_a_violation(tmp_path: Path) -> None:
    itf, report = tmp_path / "t.itf.json", tmp_path / "r.json"
    code, out, _ = _invoke(
        "check", "--model", "toy-counter", "-p", "bad=2", "--itf", str(itf), "--json", str(report)
    )
    assert code == 1
    assert "VIOLATION of BelowBad (trace of 3 states)" in out
    assert [s.state["x"] for s in read_itf(itf)] == [0, 1, 2]
    assert json.loads(report.read_text())["params"] == {"limit": 5, "bad": 2, "bound": -1}


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["check", "--model", "nope"], "unknown model 'nope'"),
        (["check", "--model", "toy-counter", "-p", "limit=x"], "expects an integer"),
        (["check", "--model", "toy-counter", "-p", "colour=red"], "has no parameter 'colour'"),
        (["check", "--model", "toy-counter", "-p", "limit"], "not of the form key=value"),
        (["check", "--model", "toy-counter", "--workers", "0"], "--workers"),
        (["check", "--model", "toy-counter", "--symmetry"], "no symmetry"),
        (["check", "--model", "toy-counter", "--bogus"], "--bogus"),
        (["simulate", "--model", "nope"], "unknown model"),
    ],
)
def test_bad_input_is_one_line_on_stderr_with_exit_code_two(
    args: list[str], message: str
) -> None:
    code, out, err = _invoke(*args)
    assert code == 2
    assert out == ""
    assert len(err.strip().splitlines()) == 1
    assert err.startswith("isrlab: error: ") and message in err


def test_a_foreign_run_directory_is_bad_input(tmp_path: Path) -> None:
    assert _invoke("check", "--model", "toy-counter", "--run-dir", str(tmp_path))[0] == 0
    code, _, err = _invoke(
        "check", "--model", "toy-counter", "-p", "limit=3", "--run-dir", str(tmp_path)
    )
    assert code == 2 and "belongs to another check" in err


def test_simulate_replays_the_same_counterexample_for_the_same_seed() -> None:
    args = ("simulate", "--model", "toy-symmetric", "-p", "bad_sum=5", "--seed", "7",
            "--walks", "20", "--depth", "20")
    first, second = _invoke(*args), _invoke(*args)
    assert first[0] == 1
    assert first[1].split("\n", 1)[1] == second[1].split("\n", 1)[1]


def test_models_lists_the_toys() -> None:
    code, out, _ = _invoke("models")
    assert code == 0 and "toy-counter" in out and "-p limit=<int>" in out
