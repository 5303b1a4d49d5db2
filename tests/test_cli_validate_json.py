"""``isrlab validate --json FILE`` (issue 34, point 8): the verdict written to a file as every
other command's ``--json`` writes its report; ``--json -`` (or ``--json`` last) prints it
instead of the text, as the former flag did; the former ``--json TRACE`` still reads TRACE,
and no file the user gave is overwritten by a verdict."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from isrlab.cli import cli

TRACE = """{"action": "Init", "nextLeaderEpoch": 0}
{"action": "ControllerElectLeader", "args": ["r1"]}
{"action": "BecomeLeader", "replicaState": {"r1": {"leader": "r1"}}}
"""
ACCEPTED = "tla-kip320: ACCEPTED: 3 steps match a behaviour of the model"


@pytest.fixture
def trace(tmp_path: Path) -> Path:
    path = tmp_path / "trace.jsonl"
    path.write_text(TRACE, encoding="utf-8")
    return path


def _validate(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(cli, ["validate", "--model", "tla-kip320", *args])
    return result.exit_code, result.stdout, result.stderr


def test_json_file_gets_the_verdict_and_the_text_is_printed(trace: Path,
                                                            tmp_path: Path) -> None:
    out = tmp_path / "verdict.json"
    code, stdout, err = _validate("--json", str(out), str(trace))
    assert code == 0, err
    assert stdout.startswith(ACCEPTED)
    report = json.loads(out.read_text(encoding="utf-8"))
    assert report["verdict"] == "accepted" and report["matched_steps"] == 3
    assert report["command"][:2] == ["isrlab", "validate"] and "isrlab_version" in report


def test_json_file_replaces_a_previous_verdict(trace: Path, tmp_path: Path) -> None:
    out = tmp_path / "verdict.json"
    out.write_text('{"verdict": "rejected"}\n', encoding="utf-8")
    code, stdout, _ = _validate("--json", str(out), str(trace))
    assert code == 0 and stdout.startswith(ACCEPTED)
    assert json.loads(out.read_text(encoding="utf-8"))["verdict"] == "accepted"


@pytest.mark.parametrize("where", ["dash", "last"])
def test_json_dash_or_last_prints_the_verdict_as_json(trace: Path, where: str) -> None:
    args = ["--json", "-", str(trace)] if where == "dash" else [str(trace), "--json"]
    code, stdout, _ = _validate(*args)
    assert code == 0
    assert json.loads(stdout)["verdict"] == "accepted"


def test_the_former_flag_before_a_trace_still_reads_the_trace(trace: Path) -> None:
    code, stdout, _ = _validate("--json", str(trace))
    assert code == 0
    assert json.loads(stdout)["verdict"] == "accepted"
    assert trace.read_text(encoding="utf-8") == TRACE  # read, never overwritten


def test_the_former_flag_before_two_logs_overwrites_neither(tmp_path: Path) -> None:
    # `validate --json server.log state-change.log` meant the flag and two logs
    first, second = tmp_path / "server.log", tmp_path / "state-change.log"
    for path in (first, second):
        path.write_text("not a log line\n", encoding="utf-8")
    CliRunner().invoke(cli, ["validate", "--json", str(first), str(second)])
    assert first.read_text(encoding="utf-8") == "not a log line\n"
    assert second.read_text(encoding="utf-8") == "not a log line\n"


def test_an_unwritable_json_file_is_one_line_and_exit_2_before_any_work(trace: Path) -> None:
    code, stdout, err = _validate("--json", "/proc/nope.json", str(trace))
    assert code == 2 and stdout == ""
    assert err.count("\n") == 1 and "--json" in err and "/proc/nope.json" in err


def test_no_trace_is_one_line_and_exit_2(tmp_path: Path) -> None:
    code, stdout, err = _validate("--json", str(tmp_path / "new.json"))
    assert code == 2 and stdout == ""
    assert err.startswith("isrlab: error: missing argument TRACES") and err.count("\n") == 1
    assert not (tmp_path / "new.json").exists()


@pytest.mark.parametrize("args", [[], ["--model", "kafka"], ["--format", "kafka-log"]])
def test_an_empty_file_is_named_as_empty_once(args: list[str], tmp_path: Path) -> None:
    """Without --model it was '--model: is required (the trace does not name its model)';
    as a Kafka log the file was named twice ('e.log: e.log: the log file is empty')."""
    empty = tmp_path / "e.log"
    empty.write_text("\n \n")
    result = CliRunner().invoke(cli, ["validate", *args, str(empty)])
    assert result.exit_code == 2 and result.stderr.count("\n") == 1
    assert result.stderr.count(str(empty)) == 1 and "file is empty" in result.stderr
