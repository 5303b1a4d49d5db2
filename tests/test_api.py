"""isrlab's Python API, ``--model FILE:NAME`` / ``module:NAME``, model plugins, ``models
--json`` and the pytest plugin (issue 18, items 3 and 4) — running docs/api.md as written."""

from __future__ import annotations

import json
import os
import re
import shlex
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from click.testing import CliRunner

from isrlab import api
from isrlab.cli import cli

ROOT = Path(__file__).resolve().parents[1]
API_DOC = ROOT / "docs" / "api.md"

CONFIG_A_KIP320 = (5_973, 11_839, 18)
"""TLC 2.15: tla-kip320 in configuration A: distinct, generated, diameter (docs/conformance.md)."""


def _doc_files() -> dict[str, str]:
    """Every ``<!-- file: NAME -->`` code block of docs/api.md."""
    text = API_DOC.read_text(encoding="utf-8")
    blocks = re.findall(r"<!-- file: (\S+) -->\n```python\n(.*?)```", text, re.DOTALL)
    return dict(blocks)


def _doc_commands() -> list[tuple[list[str], int]]:
    """Every command of a ``<!-- commands -->`` block with the exit status it states."""
    text = API_DOC.read_text(encoding="utf-8")
    found = []
    for block in re.findall(r"<!-- commands -->\n```sh\n(.*?)```", text, re.DOTALL):
        for line in block.splitlines():
            command, _, comment = line.partition("#")
            words = shlex.split(command)
            assert words[0] == "isrlab"
            status = re.search(r"exit (\d)", comment)
            assert status is not None, line
            found.append((words[1:], int(status.group(1))))
    return found


@pytest.fixture
def user_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A user's directory holding the files of docs/api.md, made the working directory."""
    for name, source in _doc_files().items():
        (tmp_path / name).write_text(source, encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    return tmp_path


def _invoke(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(cli, list(args))
    return result.exit_code, result.stdout, result.stderr


def test_the_doc_has_the_files_and_commands_this_test_runs() -> None:
    assert set(_doc_files()) == {"my_checks.py", "test_my_checks.py", "tiny.py"}
    assert len(_doc_commands()) == 5


@pytest.mark.parametrize(("args", "status"), _doc_commands(),
                         ids=lambda value: " ".join(value) if isinstance(value, list) else "")
def test_the_doc_commands_exit_as_the_doc_says(
    user_dir: Path, args: list[str], status: int
) -> None:
    code, out, err = _invoke(*args)
    assert code == status, (out, err)


def test_a_custom_invariant_that_holds_keeps_tlcs_state_count(user_dir: Path) -> None:
    code, out, _ = _invoke("check", "--model", "my_checks.py:KIP320_HW")
    assert code == 0
    distinct, generated, diameter = CONFIG_A_KIP320
    assert f"{distinct:,} distinct / {generated:,} generated states, diameter {diameter}" in out
    assert "never reached" not in out  # the added sometimes property is reached


def test_a_custom_invariant_that_fails_prints_its_trace(user_dir: Path) -> None:
    code, out, _ = _invoke("check", "--model", "my_checks.py:LEADER_HW")
    assert code == 1
    assert "kip320-leader-hw [bfs]: VIOLATION of LeaderHwIsMax" in out
    assert "BecomeLeader(" in out


def test_a_model_of_ones_own_finds_the_lost_update_in_five_states(user_dir: Path) -> None:
    # Hand count: Init, Read(p0), Read(p1), Write(p0), Write(p1).
    code, out, _ = _invoke("check", "--model", "tiny.py:LOST_UPDATE")
    assert code == 1
    assert "VIOLATION of NoLostUpdate (trace of 5 states)" in out


def test_an_extended_model_keeps_its_bases_view() -> None:
    """TLC's VIEW decides which states are one: an extended tla-kraft-3.5 (whose VIEW merges
    states that differ only outside it) reaches the base's states, not more."""
    base = api.check("tla-kraft-3.5")
    extended = api.check(api.extend("tla-kraft-3.5", invariants={"True": lambda v: True}))
    unviewed = api.check("tla-kraft-3.5", {"view": "none"})
    assert unviewed.distinct_states > base.distinct_states  # the view merges some states
    assert (extended.distinct_states, extended.generated_states) == (
        base.distinct_states, base.generated_states)


def test_package_module_name_specs_work(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    package = tmp_path / "myorg_models"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "counters.py").write_text(textwrap.dedent('''
        from isrlab.api import extend
        SMALL = extend("toy-counter", invariants={"BelowThree": lambda v: v["x"] < 3})
    '''))
    monkeypatch.syspath_prepend(str(tmp_path))
    code, out, _ = _invoke("check", "--model", "myorg_models.counters:SMALL")
    assert code == 1
    assert "VIOLATION of BelowThree (trace of 4 states)" in out  # x = 0, 1, 2, 3


@pytest.mark.parametrize(
    ("spec", "words"),
    [
        ("nowhere.py:X", ("nowhere.py", "does not exist")),
        ("my_checks.py:NOPE", ("no 'NOPE'", "KIP320_HW")),
        ("my_checks.py:hw_within_log", ("function", "not a ModelEntry")),
        ("no_such_package_xyz.mod:X", ("cannot import",)),
        ("broken.py:X", ("cannot load", "ZeroDivisionError")),
        ("my_checks.py:", ("not of the form",)),
    ],
)
def test_bad_model_specs_are_one_line_errors(
    user_dir: Path, spec: str, words: tuple[str, ...]
) -> None:
    (user_dir / "broken.py").write_text("X = 1 / 0\n")
    code, out, err = _invoke("check", "--model", spec)
    assert code == 2
    assert out == ""
    assert len(err.strip().splitlines()) == 1, err
    assert "Traceback" not in err
    for word in words:
        assert word in err


def test_parameters_of_a_wrapped_model_are_checked(user_dir: Path) -> None:
    code, _, err = _invoke("check", "--model", "my_checks.py:KIP320_HW", "-p", "replicas=9")
    assert code == 2
    assert "'replicas' must be <= 6" in err


def test_the_api_checks_simulates_and_validates(user_dir: Path, tmp_path: Path) -> None:
    sys.path.insert(0, str(user_dir))
    try:
        from my_checks import KIP320_HW, LEADER_HW  # type: ignore[import-not-found]  # written by the fixture
    finally:
        sys.path.remove(str(user_dir))
    result = api.check(KIP320_HW)
    assert (result.distinct_states, result.generated_states, result.diameter) == CONFIG_A_KIP320
    assert [p.name for p in api.model(KIP320_HW).invariants()] == [
        "WeakIsr", "StrongIsr", "HwWithinLog"]
    assert api.simulate(KIP320_HW, seed=3, walks=20, depth=20).ok
    failing = api.check(LEADER_HW)
    assert failing.violation is not None
    trace = tmp_path / "t.itf.json"
    from isrlab.checker.trace import write_itf
    write_itf(trace, failing.violation.trace)
    assert api.validate("tla-kip320", trace).accepted  # the counterexample is a behaviour
    with pytest.raises(api.ModelError, match="must be <= 6"):
        api.model("tla-kip320", replicas=7)


# -- isrlab models --json -------------------------------------------------------------------

def test_models_json_lists_models_parameters_and_invariants() -> None:
    code, out, _ = _invoke("models", "--json")
    assert code == 0
    models = {m["name"]: m for m in json.loads(out)}
    assert {"kafka", "tla-kip101", "tla-kip320", "toy-counter"} <= set(models)
    kip101 = models["tla-kip101"]
    params = {p["name"]: p for p in kip101["params"]}
    assert params["replicas"] == {
        "name": "replicas", "type": "int", "default": 2, "minimum": 1, "maximum": 6,
        "choices": None, "doc": params["replicas"]["doc"]}
    assert [i["name"] for i in kip101["invariants"]] == ["WeakIsr", "StrongIsr"]
    assert kip101["symmetric"] is True
    assert [i["name"] for i in models["toy-counter"]["invariants"]] == ["BelowBad"]


def test_models_json_takes_a_file_as_every_other_command(tmp_path: Path) -> None:
    """``--json FILE`` as check, simulate, bmc and validate take it: the JSON list written
    to FILE (the text listing still printed); ``--json -`` (or ``--json`` last) prints it."""
    printed = _invoke("models", "--json", "-")
    assert printed[0] == 0 and printed[1] == _invoke("models", "--json")[1]
    out = tmp_path / "models.json"
    code, stdout, stderr = _invoke("models", "--json", str(out))
    assert (code, stderr) == (0, "")
    assert json.loads(out.read_text()) == json.loads(printed[1])
    assert stdout.startswith("kafka") and "`isrlab models NAME`" in stdout  # the text too
    one = tmp_path / "kip320.json"
    assert _invoke("models", "tla-kip320", "--json", str(one))[0] == 0
    assert [m["name"] for m in json.loads(one.read_text())] == ["tla-kip320"]
    # the former flag before NAME: still the JSON of that model, no file named like it
    code, stdout, _ = _invoke("models", "--json", "tla-kip320")
    assert code == 0 and [m["name"] for m in json.loads(stdout)] == ["tla-kip320"]
    assert not Path("tla-kip320").exists()
    # an output that cannot be written: one line, exit 2, before anything is printed
    code, stdout, stderr = _invoke("models", "--json", "/proc/nope.json")
    assert (code, stdout) == (2, "") and stderr.count("\n") == 1 and "--json" in stderr


# -- model plugins through entry points -----------------------------------------------------

def _plugin_env(tmp_path: Path, target: str) -> dict[str, str]:
    """An installed distribution (a dist-info on the path) whose entry point in the
    ``isrlab.models`` group names ``target``."""
    site = tmp_path / "site"
    (site / "acme_models").mkdir(parents=True)
    (site / "acme_models" / "__init__.py").write_text(textwrap.dedent('''
        from isrlab.api import extend

        def register(registry):
            registry.register(extend("toy-counter", name="acme-counter",
                                     invariants={"BelowFour": lambda v: v["x"] < 4}))
    '''))
    info = site / "acme_models-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: acme-models\nVersion: 1.0\n")
    (info / "entry_points.txt").write_text(f"[isrlab.models]\nacme = {target}\n")
    return {**os.environ, "PYTHONPATH": f"{ROOT}{os.pathsep}{site}"}


def test_an_installed_package_registers_models_through_an_entry_point(tmp_path: Path) -> None:
    env = _plugin_env(tmp_path, "acme_models:register")
    listed = subprocess.run([sys.executable, "-m", "isrlab", "models", "--json"], env=env,
                            cwd=tmp_path, capture_output=True, text=True, check=False)
    assert listed.returncode == 0, listed.stderr
    assert "acme-counter" in [m["name"] for m in json.loads(listed.stdout)]
    checked = subprocess.run([sys.executable, "-m", "isrlab", "check", "--model", "acme-counter"],
                             env=env, cwd=tmp_path, capture_output=True, text=True, check=False)
    assert checked.returncode == 1
    assert "VIOLATION of BelowFour (trace of 5 states)" in checked.stdout  # x = 0..4


def test_a_broken_plugin_is_one_warning_and_the_rest_still_works(tmp_path: Path) -> None:
    env = _plugin_env(tmp_path, "acme_models:nonexistent")
    done = subprocess.run([sys.executable, "-m", "isrlab", "check", "--model", "toy-counter"],
                          env=env, cwd=tmp_path, capture_output=True, text=True, check=False)
    assert done.returncode == 0
    assert done.stderr.startswith("isrlab: warning: model plugin 'acme'")
    assert len(done.stderr.strip().splitlines()) == 1


# -- the pytest plugin ----------------------------------------------------------------------

def test_the_pytest_plugin_is_declared_as_a_pytest11_entry_point() -> None:
    import tomllib

    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    assert project["entry-points"]["pytest11"] == {"isrlab": "isrlab.pytest_plugin"}


def test_the_doc_pytest_file_passes_and_fails_as_the_doc_says(user_dir: Path) -> None:
    env = {**os.environ, "PYTHONPATH": str(ROOT), "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1"}
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "isrlab.pytest_plugin", "-p", "no:cacheprovider",
         "-q", "--strict-markers", "test_my_checks.py"],
        cwd=user_dir, env=env, capture_output=True, text=True, timeout=600, check=False,
    )
    assert done.returncode == 1, done.stdout + done.stderr
    assert "1 failed, 2 passed" in done.stdout
    failure = done.stdout.split("test_the_leader_hw_belief", 1)[1]
    assert "kip320-leader-hw [bfs]: VIOLATION of LeaderHwIsMax" in failure
    assert "State 1: Init" in failure
    assert "Traceback" not in failure and "def test_" not in failure  # the trace, not code
