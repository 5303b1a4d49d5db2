"""Run files (issue 34, item 4): ``isrlab check|simulate|bmc|explore --config run.toml`` takes
the model, parameters, invariants, bounds and engine from a TOML file; a flag on the command
line overrides the file; an unknown key is one line and exit 2."""

from __future__ import annotations

import json
import socket
from pathlib import Path

import pytest
from click.testing import CliRunner

from isrlab.cli import cli

RUN = '''# configuration A of docs/conformance.md, WeakIsr only, five levels
model = "tla-kip101"
invariants = ["WeakIsr"]
max-depth = 5
workers = 1

[params]
replicas = 2
max_leader_epoch = 2

[simulate]
walks = 7
depth = 9
seed = 3
'''


def _invoke(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(cli, list(args))
    return result.exit_code, result.stdout, result.stderr


def _report(*args: str, tmp_path: Path) -> dict[str, object]:
    out = tmp_path / "r.json"
    code, stdout, err = _invoke(*args, "--no-progress", "--json", str(out))
    assert code in (0, 1), (stdout, err)
    data: dict[str, object] = json.loads(out.read_text())
    return data


@pytest.fixture
def run_file(tmp_path: Path) -> Path:
    path = tmp_path / "run.toml"
    path.write_text(RUN, encoding="utf-8")
    return path


def _counts(data: dict[str, object]) -> tuple[object, ...]:
    return (data["distinct_states"], data["generated_states"], data["diameter"],
            data["params"], data["complete"])


def test_a_run_file_is_the_same_check_as_its_flags(run_file: Path, tmp_path: Path) -> None:
    from_file = _report("check", "--config", str(run_file), tmp_path=tmp_path)
    from_flags = _report("check", "--model", "tla-kip101", "-p", "replicas=2",
                         "-p", "max_leader_epoch=2", "-p", "invariants=WeakIsr",
                         "--max-depth", "5", tmp_path=tmp_path)
    assert _counts(from_file) == _counts(from_flags)
    assert from_file["complete"] is False  # --max-depth 5 cut it short


def test_a_flag_overrides_the_file(run_file: Path, tmp_path: Path) -> None:
    data = _report("check", "--config", str(run_file), "--max-depth", "30",
                   "-p", "max_leader_epoch=1", tmp_path=tmp_path)
    params = data["params"]
    assert isinstance(params, dict)
    assert params["max_leader_epoch"] == 1 and params["replicas"] == 2  # one key overridden
    reference = _report("check", "--model", "tla-kip101", "-p", "max_leader_epoch=1",
                        "-p", "invariants=WeakIsr", tmp_path=tmp_path)
    assert _counts(data) == _counts(reference)


def test_simulate_takes_its_own_table_and_skips_checks_keys(run_file: Path,
                                                           tmp_path: Path) -> None:
    from_file = _report("simulate", "--config", str(run_file), tmp_path=tmp_path)
    from_flags = _report("simulate", "--model", "tla-kip101", "-p", "replicas=2",
                         "-p", "max_leader_epoch=2", "-p", "invariants=WeakIsr",
                         "--walks", "7", "--depth", "9", "--seed", "3", tmp_path=tmp_path)
    assert _counts(from_file) == _counts(from_flags)


def test_bmc_takes_a_run_file(tmp_path: Path) -> None:
    path = tmp_path / "bmc.toml"
    path.write_text('model = "tla-kip101"\n[bmc]\ndepth = 3\n', encoding="utf-8")
    code, out, err = _invoke("bmc", "--config", str(path))
    assert code == 0, (out, err)
    assert "no violation in any trace of up to 4 states" in out


def test_explore_takes_a_run_file(tmp_path: Path) -> None:
    path = tmp_path / "explore.toml"
    with socket.socket() as busy:  # the model is built before the port: a busy port ends it
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        path.write_text(f'model = "toy-counter"\nport = {port}\n', encoding="utf-8")
        code, _, err = _invoke("explore", "--config", str(path))
    assert code == 2 and f"cannot listen on 127.0.0.1:{port}" in err


@pytest.mark.parametrize(("text", "words"), [
    ("frobnicate = 1\n", ["unknown key 'frobnicate'", "isrlab check", "max-depth"]),
    ('[check]\nwalks = 3\n', ["unknown key 'walks'"]),
    ('model = "tla-kip101\n', ["not a TOML run file"]),
    ('params = 3\n', ["params must be a table"]),
    ('check = 3\n', ["[check] must be a table"]),
    ('model = 3\n', ["model must be text", "got 3"]),  # was "unknown model '3'", no file
])
def test_a_bad_run_file_is_one_line_and_exit_2(tmp_path: Path, text: str,
                                               words: list[str]) -> None:
    path = tmp_path / "bad.toml"
    path.write_text(text, encoding="utf-8")
    code, out, err = _invoke("check", "--config", str(path))
    assert code == 2 and out == "", (out, err)
    assert err.count("\n") == 1 and err.startswith("isrlab: error: ")
    for word in [str(path), *words]:
        assert word in err, (word, err)


def test_the_docs_run_file_runs_as_the_docs_say(tmp_path: Path) -> None:
    doc = (Path(__file__).resolve().parents[1] / "docs" / "api.md").read_text(encoding="utf-8")
    text = doc.split("```toml\n", 1)[1].split("```", 1)[0]
    path = tmp_path / "run.toml"
    path.write_text(text, encoding="utf-8")
    from_file = _report("check", "--config", str(path), tmp_path=tmp_path)
    from_flags = _report("check", "--model", "tla-kip101", "-p", "replicas=2",
                         "-p", "max_leader_epoch=2", "-p", "invariants=WeakIsr",
                         "--max-depth", "20", tmp_path=tmp_path)
    assert _counts(from_file) == _counts(from_flags)
    code, out, _ = _invoke("simulate", "--config", str(path), "--no-progress")
    assert code in (0, 1) and "[simulate]" in out


def test_an_unknown_parameter_in_the_file_names_the_file(tmp_path: Path) -> None:
    path = tmp_path / "run.toml"
    path.write_text('model = "tla-kip101"\n[params]\nreplica = 2\n', encoding="utf-8")
    code, out, err = _invoke("check", "--config", str(path))
    assert code == 2 and out == "" and err.count("\n") == 1
    assert str(path) in err and "'replica'" in err


@pytest.mark.parametrize(("line", "words"), [
    ("json = 0", ["json = 0", "a path must be text"]),  # found by the fuzzer: exit 70 before
    ("symmetry = 0", ["symmetry = 0", "true or false"]),  # likewise
    ("max-depth = \"x\"", ["max-depth = 'x'"]),
    ("workers = [1]", ["workers = [1]"]),
])
def test_an_ill_typed_option_in_the_file_is_one_line(tmp_path: Path, line: str,
                                                     words: list[str]) -> None:
    path = tmp_path / "run.toml"
    path.write_text(f'model = "toy-counter"\n{line}\n', encoding="utf-8")
    code, out, err = _invoke("check", "--config", str(path))
    assert code == 2 and out == "" and err.count("\n") == 1, (out, err)
    for word in [str(path), *words]:
        assert word in err, (word, err)


def test_an_unknown_parameter_names_the_closest_not_all_fifty() -> None:
    code, _, err = _invoke("check", "--model", "kafka", "-p", "brokres=3")
    assert code == 2 and err.count("\n") == 1
    assert "has no parameter 'brokres'; did you mean brokers?" in err
    assert "`isrlab models kafka` lists its" in err and len(err) < 200
