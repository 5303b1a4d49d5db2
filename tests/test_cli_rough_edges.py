"""The command line's rough edges (issue 18, item 5): output paths checked before the run,
Ctrl-C, ``prove --out``, inputs never overwritten, parameter maxima, bare ``isrlab``, and
every run-time import a run-time dependency."""

from __future__ import annotations

import ast
import json
import os
import re
import signal
import subprocess
import sys
import time
import tomllib
from importlib.metadata import packages_distributions
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from isrlab.cli import cli

ROOT = Path(__file__).resolve().parents[1]
TRACE = ROOT / "tests" / "fixtures" / "oracle"


def _invoke(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(cli, list(args))
    return result.exit_code, result.stdout, result.stderr


def _one_line_error(code: int, out: str, err: str, *words: str) -> None:
    assert code == 2, (code, out, err)
    assert out == "", out  # nothing ran: no summary line
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    assert lines[0].startswith("isrlab: error: ")
    assert "Traceback" not in err
    for word in words:
        assert word in lines[0], (word, lines[0])


def _accepted_trace(tmp_path: Path) -> Path:
    """A trace of ``toy-counter`` (x counts 0, 1, 2) that ``validate`` accepts."""
    trace = tmp_path / "trace.jsonl"
    trace.write_text("".join(json.dumps({"x": x}) + "\n" for x in range(3)), encoding="utf-8")
    return trace


# -- output paths: checked before the run, one line, exit 2 ------------------------------------

@pytest.mark.parametrize("option", ["--json", "--itf"])
@pytest.mark.parametrize("command", ["check", "simulate"])
def test_an_output_into_a_missing_directory_is_refused_before_the_run(
    tmp_path: Path, command: str, option: str
) -> None:
    target = tmp_path / "missing" / "out.json"
    code, out, err = _invoke(command, "--model", "toy-counter", "-p", "bad=2",
                             option, str(target))
    _one_line_error(code, out, err, str(tmp_path / "missing"), option)
    assert not target.exists()


def test_bmc_checks_its_output_paths_before_z3_starts(tmp_path: Path) -> None:
    target = tmp_path / "missing" / "report.json"
    code, out, err = _invoke("bmc", "--model", "tla-kip101", "--json", str(target))
    _one_line_error(code, out, err, "--json")


@pytest.mark.parametrize("option", ["--witness", "--emit-jsonl"])
def test_validate_checks_its_output_paths_before_reading_the_trace(
    tmp_path: Path, option: str
) -> None:
    trace = _accepted_trace(tmp_path)
    target = tmp_path / "missing" / "w.json"
    code, out, err = _invoke("validate", "--model", "toy-counter", option, str(target),
                             str(trace))
    _one_line_error(code, out, err, option)


def test_an_output_that_is_a_directory_is_refused(tmp_path: Path) -> None:
    code, out, err = _invoke("check", "--model", "toy-counter", "--json", str(tmp_path))
    _one_line_error(code, out, err, "--json", "directory")


def test_json_and_itf_on_one_path_are_refused(tmp_path: Path) -> None:
    same = tmp_path / "out.json"
    code, out, err = _invoke("check", "--model", "toy-counter", "-p", "bad=2",
                             "--json", str(same), "--itf", str(same))
    _one_line_error(code, out, err, "--json", "--itf")
    assert not same.exists()


def test_the_witness_may_not_overwrite_the_input_trace(tmp_path: Path) -> None:
    trace = _accepted_trace(tmp_path)
    before = trace.read_bytes()
    code, out, err = _invoke("validate", "--model", "toy-counter", "--witness", str(trace),
                             str(trace))
    _one_line_error(code, out, err, "--witness", "input")
    assert trace.read_bytes() == before


@pytest.mark.parametrize("command", ["check", "simulate", "bmc"])
@pytest.mark.parametrize("option", ["--json", "--itf"])
def test_an_output_may_not_overwrite_the_run_file(
    tmp_path: Path, command: str, option: str
) -> None:
    run = tmp_path / "run.toml"
    run.write_text('model = "toy-counter"\n[params]\nbad = 2\n', encoding="utf-8")
    before = run.read_bytes()
    code, out, err = _invoke(command, "--config", str(run), option, str(run))
    _one_line_error(code, out, err, option, "--config")
    assert run.read_bytes() == before


def test_an_output_may_not_overwrite_the_models_own_file(tmp_path: Path) -> None:
    model = tmp_path / "mine.py"
    model.write_text('from isrlab.api import extend\nMINE = extend("toy-counter")\n',
                     encoding="utf-8")
    before = model.read_bytes()
    code, out, err = _invoke("check", "--model", f"{model}:MINE", "--json", str(model))
    _one_line_error(code, out, err, "--json", "--model")
    assert model.read_bytes() == before


@pytest.mark.parametrize("args", [
    ["check", "--model", "toy-counter", "--json", "-"],
    ["check", "--model", "toy-counter", "-p", "bad=2", "--itf", "-"],
    ["simulate", "--model", "toy-counter", "--json", "-"],
    ["bmc", "--model", "tla-kip101", "--json", "-"],
    ["render", "TRACE", "-o", "-"],
])
def test_a_dash_output_is_refused_where_it_would_be_a_file_named_dash(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, args: list[str]
) -> None:
    """``models --json -`` and ``validate --json -`` print to standard output; elsewhere
    ``-`` made a file named ``-`` in the working directory."""
    trace = tmp_path / "t.itf.json"
    trace.write_text('{"states": [{"x": 1}]}', encoding="utf-8")
    work = tmp_path / "work"
    work.mkdir()
    monkeypatch.chdir(work)
    code, out, err = _invoke(*[str(trace) if a == "TRACE" else a for a in args])
    _one_line_error(code, out, err, f"{args[-2]} -", "name a file")
    assert list(work.iterdir()) == []


def test_outputs_are_still_written_where_asked(tmp_path: Path) -> None:
    report, itf = tmp_path / "r.json", tmp_path / "t.itf.json"
    code, _, _ = _invoke("check", "--model", "toy-counter", "-p", "bad=2",
                         "--json", str(report), "--itf", str(itf))
    assert code == 1
    assert json.loads(report.read_text())["violation"]["length"] == 3
    assert len(json.loads(itf.read_text())["states"]) == 3
    assert sorted(p.name for p in tmp_path.iterdir()) == ["r.json", "t.itf.json"]  # no temp


# -- render and explore: a file that is no ITF trace ---------------------------------------

_NO_ITF = [
    (b"not json", "not an ITF trace (Expecting value"),
    (b"{}", "an ITF trace is an object with a 'states' array"),
    (b"[1, 2]", "not an ITF trace (a JSON list, not an object)"),
    (b'{"states": [1]}', "ITF state 0: a state must be an object"),
    (b'{"states": [{"x": 0}, {"x": {"#map": [1]}}]}', "ITF state 1: variable 'x': not an ITF"),
    (b'{"states": [{"x": {"#bigint": "z"}}]}', "ITF state 0: variable 'x': not an ITF value"),
]
_PYTHON_ERROR = re.compile(r"\b(KeyError|TypeError|AttributeError|ValueError|JSONDecodeError)\b")


@pytest.mark.parametrize(("content", "words"), _NO_ITF)
def test_render_says_what_makes_a_file_no_itf_trace(
    tmp_path: Path, content: bytes, words: str
) -> None:
    """One line naming the file and the problem, not a Python exception's class and text
    (``not an ITF trace (KeyError: 'states')``); nothing written."""
    trace, out = tmp_path / "t.itf.json", tmp_path / "t.svg"
    trace.write_bytes(content)
    code, stdout, err = _invoke("render", str(trace), "-o", str(out))
    _one_line_error(code, stdout, err, f"{trace}: {words}")
    assert not _PYTHON_ERROR.search(err), err
    assert not out.exists()
    assert trace.read_bytes() == content


@pytest.mark.parametrize(("content", "words"), _NO_ITF)
def test_explore_says_what_makes_its_trace_no_itf_trace(
    tmp_path: Path, content: bytes, words: str
) -> None:
    trace = tmp_path / "t.itf.json"
    trace.write_bytes(content)
    code, stdout, err = _invoke("explore", "--model", "toy-counter", "--trace", str(trace))
    _one_line_error(code, stdout, err, f"{trace}: {words}")
    assert not _PYTHON_ERROR.search(err), err


def test_render_counts_one_state_in_the_singular(tmp_path: Path) -> None:
    trace, out = tmp_path / "t.itf.json", tmp_path / "t.svg"
    trace.write_text('{"states": [{"x": 1}]}', encoding="utf-8")
    code, stdout, _ = _invoke("render", str(trace), "-o", str(out))
    assert (code, stdout.strip()) == (0, f"wrote {out} (1 state)")
    assert out.read_text(encoding="utf-8").startswith("<svg")


# -- parameters ---------------------------------------------------------------------------------

@pytest.mark.parametrize(
    ("param", "words"),
    [
        ("replicas=100000", ("'replicas'", "<= 6", "100000")),
        ("replicas=64", ("'replicas'", "<= 6", "64")),
        ("replicas=7", ("'replicas'", "<= 6")),
    ],
)
def test_too_large_parameters_get_one_clear_line(param: str, words: tuple[str, ...]) -> None:
    code, out, err = _invoke("check", "--model", "tla-kip101", "-p", param)
    _one_line_error(code, out, err, *words)
    assert "digits" not in err
    assert not re.search(r"-\d", err), err  # no negative bound


def test_a_too_large_product_of_constants_names_a_positive_bound() -> None:
    code, out, err = _invoke("check", "--model", "tla-kip101", "-p", "replicas=6",
                             "-p", "max_records=60", "-p", "max_leader_epoch=60")
    _one_line_error(code, out, err, "max_records", "max_leader_epoch")
    assert not re.search(r"-\d", err), err


# -- a model file that exits -------------------------------------------------------------

@pytest.mark.parametrize("code", ["3", "0", "'bye'"])
def test_a_model_file_that_calls_sys_exit_is_bad_input(tmp_path: Path, code: str) -> None:
    """Its exit status is not isrlab's (``3``: bmc gave up; ``0``: every invariant holds)."""
    model = tmp_path / "exits.py"
    model.write_text(f"import sys\nsys.exit({code})\n", encoding="utf-8")
    result = CliRunner().invoke(cli, ["check", "--model", f"{model}:X"], standalone_mode=True)
    _one_line_error(result.exit_code, result.stdout, result.stderr, str(model), "SystemExit")


# -- durations ------------------------------------------------------------------------------

@pytest.mark.parametrize("args", [
    ["check", "--model", "toy-counter", "--progress-interval", "nan"],
    ["simulate", "--model", "toy-counter", "--progress-interval", "NaN"],
    ["validate", "--follow", "--idle-exit", "nan", str(ROOT / "README.md")],
])
def test_a_duration_of_nan_is_bad_input(args: list[str]) -> None:
    """``nan`` passes click's bounds (every comparison with it is false): ``check`` then
    printed progress at every level, ``validate --follow`` had no idle limit it could keep."""
    code, out, err = _invoke(*args)
    option = "--idle-exit" if args[0] == "validate" else "--progress-interval"
    _one_line_error(code, out, err, option, "not a number of seconds")


# -- bare isrlab ------------------------------------------------------------------------------

def test_bare_isrlab_prints_its_help() -> None:
    result = subprocess.run([sys.executable, "-m", "isrlab"], cwd=ROOT, capture_output=True,
                            text=True, timeout=120, check=False)
    assert result.returncode == 0, result.stderr
    assert "error" not in result.stderr
    assert "Commands:" in result.stdout
    assert len(result.stdout.splitlines()) > 10
    assert re.search(r"^\s+check\s", result.stdout, re.MULTILINE)


# -- standard output closed by its reader (isrlab check | head) ------------------------------

@pytest.mark.parametrize("args", [
    ["models"],
    ["check", "--model", "toy-counter", "--no-progress"],  # holds: exit 0 otherwise
    ["check", "--model", "toy-counter", "-p", "bad=2", "--no-progress"],  # 1 otherwise
])
def test_a_closed_standard_output_exits_141_silently(args: list[str]) -> None:
    """The reader of standard output gone before isrlab writes (its read end closed before
    the child starts, so the first write fails: no timing): exit 141 (128 + SIGPIPE) and
    nothing on stderr, not click's exit 1, which says an invariant was violated."""
    read, write = os.pipe()
    os.close(read)
    try:
        done = subprocess.run([sys.executable, "-m", "isrlab", *args], cwd=ROOT,
                              stdout=write, stderr=subprocess.PIPE, text=True, timeout=120,
                              check=False)
    finally:
        os.close(write)
    assert (done.returncode, done.stderr) == (141, ""), done.stderr


def test_a_closed_standard_output_still_gets_the_files_written(tmp_path: Path) -> None:
    """``isrlab check ... --svg t.svg --itf t.json | head -1``: the files were lost (the
    broken pipe ended the command before it wrote them)."""
    svg, itf = tmp_path / "t.svg", tmp_path / "t.json"
    read, write = os.pipe()
    os.close(read)
    try:
        done = subprocess.run([sys.executable, "-m", "isrlab", "check", "--model", "toy-counter",
                               "-p", "bad=2", "--no-progress", "--svg", str(svg), "--itf",
                               str(itf)], cwd=ROOT, stdout=write, stderr=subprocess.PIPE,
                              text=True, timeout=120, check=False)
    finally:
        os.close(write)
    assert (done.returncode, done.stderr) == (141, ""), done.stderr
    assert svg.read_text().startswith("<svg") and '"#meta"' in itf.read_text()


@pytest.mark.parametrize(("closed", "args", "status"), [
    (1, ["models"], 0),
    (1, ["check", "--model", "toy-counter", "--no-progress"], 0),
    (2, ["check", "--model", "toy-counter", "-p", "x=1"], 2),
])
def test_a_closed_standard_stream_is_no_crash(closed: int, args: list[str],
                                              status: int) -> None:
    """``isrlab ... >&-`` (Python's ``sys.stdout`` is then ``None``): the command's own
    status, no traceback."""
    # the child closes the stream after subprocess set it up, just before exec
    done = subprocess.run([sys.executable, "-m", "isrlab", *args], cwd=ROOT,
                          stdin=subprocess.DEVNULL, capture_output=True, timeout=120,
                          check=False, preexec_fn=lambda: os.close(closed))
    shown = done.stderr if closed == 1 else done.stdout
    assert done.returncode == status, shown
    assert b"Traceback" not in shown


# -- Ctrl-C ---------------------------------------------------------------------------------

def _as_from_a_terminal() -> None:
    """In the child before exec: SIGINT's default action, unblocked, as an interactive shell
    starts a command.  A suite started in the background of a non-interactive shell (``cmd &``
    without job control) inherits an ignored SIGINT, which exec keeps and Python honours."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)
    signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT})


def _interrupt_after(command: list[str], seconds: float) -> subprocess.CompletedProcess[str]:
    """Run ``command``, press Ctrl-C (SIGINT to its process group, as a terminal does) after
    ``seconds``, and wait for it."""
    process = subprocess.Popen([sys.executable, "-m", "isrlab", *command], cwd=ROOT,
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                               start_new_session=True, preexec_fn=_as_from_a_terminal)
    try:
        time.sleep(seconds)
        assert process.poll() is None, "the command finished before it could be interrupted"
        os.killpg(process.pid, signal.SIGINT)
        out, err = process.communicate(timeout=120)
    finally:
        if process.poll() is None:  # never leave a run behind (it would load the machine)
            os.killpg(process.pid, signal.SIGKILL)
            process.communicate()
    return subprocess.CompletedProcess(command, process.returncode, out, err)


def test_ctrl_c_on_bmc_exits_130_and_writes_no_report(tmp_path: Path) -> None:
    report = tmp_path / "r.json"
    done = _interrupt_after(["bmc", "--model", "tla-kip320", "-p", "replicas=3",
                             "--depth", "60", "--json", str(report)], 8.0)
    assert done.returncode == 130, (done.stdout, done.stderr)
    assert "interrupted" in done.stderr
    assert "gave up" not in done.stdout
    assert "Traceback" not in done.stderr
    assert list(tmp_path.iterdir()) == []


def test_ctrl_c_while_isrlab_is_still_starting_exits_130_in_one_line(tmp_path: Path) -> None:
    """Ctrl-C before the command runs (isrlab's modules still importing, a second or more
    on a loaded machine) is the same one line and exit 130, not a KeyboardInterrupt
    traceback out of an import and exit -2."""
    # The Ctrl-C lands at a known moment, not after a sleep that races the machine's speed:
    # the child presses it itself when isrlab.cli starts importing isrlab.cli_support.
    report = tmp_path / "r.json"
    child = "\n".join([
        "import builtins, os, runpy, signal, sys",
        "real = builtins.__import__",
        "def interrupting(name, *args, **kwargs):",
        "    if name == 'isrlab.cli_support':",
        "        os.kill(os.getpid(), signal.SIGINT)",
        "    return real(name, *args, **kwargs)",
        "builtins.__import__ = interrupting",
        "sys.argv = ['isrlab', 'check', '--model', 'toy-symmetric', '--json', sys.argv[1]]",
        "runpy.run_module('isrlab', run_name='__main__', alter_sys=True)",
    ])
    done = subprocess.run([sys.executable, "-c", child, str(report)], cwd=ROOT,
                          capture_output=True, text=True, timeout=120,
                          preexec_fn=_as_from_a_terminal)
    assert done.returncode == 130, (done.stdout, done.stderr)
    assert done.stderr.strip().splitlines() == ["isrlab: interrupted"]
    assert list(tmp_path.iterdir()) == []


# Where the child presses Ctrl-C itself as a run ends: while the report is renamed into place;
# on the command's exit and again while that first Ctrl-C is reported; in the last ``atexit``
# callback (registered first, so run last); in a ``__del__`` of an object only the
# interpreter's teardown frees, where Python has given SIGINT its default action back (killed,
# status -2, not a word); and as a one-line error exits.
_PRESS = "os.kill(os.getpid(), signal.SIGINT)"
_ON_EXIT = ["real = sys.exit",
            "def exiting(*args):",
            f"    {_PRESS}",
            "    real(*args)",
            "sys.exit = exiting"]
_MOMENTS = {
    "report": ["real = os.replace",
               "def replacing(*args, **kwargs):",
               f"    {_PRESS}",
               "    return real(*args, **kwargs)",
               "os.replace = replacing"],
    "twice": _ON_EXIT,
    "atexit": [f"atexit.register(lambda: {_PRESS})"],
    "teardown": ["class Pressing:",
                 "    def __del__(self):",
                 "        sys.stderr.write('teardown\\n')",
                 f"        {_PRESS}",
                 "builtins.left_for_teardown = Pressing()"],
}


def _pressing(moment: list[str], *args: str) -> subprocess.CompletedProcess[str]:
    """``isrlab ARGS`` in a child that presses Ctrl-C itself at ``moment`` (code run first)."""
    child = "\n".join([
        "import atexit, builtins, os, runpy, signal, sys",
        *moment,
        f"sys.argv = ['isrlab', *{list(args)!r}]",
        "runpy.run_module('isrlab', run_name='__main__', alter_sys=True)",
    ])
    return subprocess.run([sys.executable, "-c", child], cwd=ROOT, capture_output=True,
                          text=True, timeout=120, preexec_fn=_as_from_a_terminal)


@pytest.mark.parametrize("moment", list(_MOMENTS))
def test_ctrl_c_as_a_run_ends_exits_130_in_one_line(tmp_path: Path, moment: str) -> None:
    """Ctrl-C in the last moments of ``check`` (the report written, the process exiting) is
    the same one line and exit 130 as anywhere else, never a traceback, an "Exception
    ignored" or a silent death by SIGINT; the teardown, where Python could only die of it,
    is not reached."""
    report = tmp_path / "r.json"
    done = _pressing(_MOMENTS[moment], "check", "--model", "toy-counter", "--json", str(report))
    assert "OK: every invariant holds" in done.stdout  # the run itself finished
    if moment == "teardown":
        assert (done.returncode, done.stderr) == (0, ""), done.stderr
        assert json.loads(report.read_text())["ok"] is True
        return
    assert done.returncode == 130, (done.stdout, done.stderr)
    assert done.stderr.strip().splitlines() == ["isrlab: interrupted"]
    written = moment != "report"
    assert [p.name for p in tmp_path.iterdir()] == (["r.json"] if written else [])


def test_ctrl_c_as_a_one_line_error_exits_is_one_more_line_and_130() -> None:
    done = _pressing(_ON_EXIT, "check", "--model", "toy-counter", "-p", "limit=x")
    assert done.returncode == 130, (done.stdout, done.stderr)
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 2, done.stderr
    assert lines[0].startswith("isrlab: error: ") and "limit" in lines[0]
    assert lines[1] == "isrlab: interrupted"


@pytest.mark.parametrize("workers", [1, 2])
def test_ctrl_c_on_check_exits_130_and_writes_no_report(tmp_path: Path, workers: int) -> None:
    report = tmp_path / "r.json"
    done = _interrupt_after(["check", "--model", "toy-symmetric", "-p", "procs=7",
                             "-p", "values=7", "--workers", str(workers), "--no-progress",
                             "--json", str(report)], 4.0)
    assert done.returncode == 130, (done.stdout, done.stderr)
    assert done.stderr.strip().splitlines()[-1] == "isrlab: interrupted"
    assert "Traceback" not in done.stderr
    assert list(tmp_path.iterdir()) == []


def test_ctrl_c_on_simulate_exits_130_and_writes_no_report(tmp_path: Path) -> None:
    report = tmp_path / "r.json"
    done = _interrupt_after(["simulate", "--model", "tla-kip320", "-p", "replicas=3",
                             "--walks", "100000000", "--depth", "60", "--no-progress",
                             "--json", str(report)], 4.0)
    assert done.returncode == 130, (done.stdout, done.stderr)
    assert done.stderr.strip().splitlines()[-1] == "isrlab: interrupted"
    assert list(tmp_path.iterdir()) == []


def test_ctrl_c_on_prove_exits_130_and_leaves_no_directory(tmp_path: Path) -> None:
    out = tmp_path / "proofs-out"
    # every model's obligations: minutes in all (tla-kip320's alone end within 6 s on an
    # idle machine), so the interrupt always lands mid-run
    done = _interrupt_after(["prove", "--out", str(out)], 6.0)
    assert done.returncode == 130, (done.stdout, done.stderr)
    assert "interrupted" in done.stderr
    assert "Traceback" not in done.stderr
    assert list(tmp_path.iterdir()) == []


def test_an_interrupted_write_leaves_the_old_file_whole(tmp_path: Path) -> None:
    from isrlab.cli_support import atomic_output

    target = tmp_path / "r.json"
    target.write_text("old\n")
    with pytest.raises(KeyboardInterrupt), atomic_output(target) as temporary:
        temporary.write_text("half a rep")
        raise KeyboardInterrupt
    assert target.read_text() == "old\n"
    assert [p.name for p in tmp_path.iterdir()] == ["r.json"]


# -- prove --out / --update ------------------------------------------------------------------

def test_prove_writes_to_out_and_leaves_the_recorded_results_alone(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import isrlab.services.proofs as prove_service
    from isrlab.proofs.obligations import RESULTS_JSON, RESULTS_MD, load

    recorded = [g for g in load() if g.model == "tla-kip101"]
    assert recorded
    # The Z3 runs themselves are tested in tests/z3; here only where the outcomes go.
    monkeypatch.setattr(prove_service, "run_all", lambda selected, timeout, progress: recorded)
    before = (RESULTS_JSON.read_bytes(), RESULTS_MD.read_bytes())
    out = tmp_path / "proofs-out"
    code, stdout, err = _invoke("prove", "--model", "tla-kip101", "--out", str(out))
    assert code == 0, (stdout, err)
    assert (RESULTS_JSON.read_bytes(), RESULTS_MD.read_bytes()) == before
    written = json.loads((out / "results.json").read_text())
    assert {g["model"] for g in written["groups"]} == {"tla-kip101"}
    assert "tla-kip101" in (out / "RESULTS.md").read_text()
    assert str(out) in stdout


def test_prove_defaults_to_a_fresh_directory_outside_the_current_one(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import shutil
    import tempfile

    import isrlab.services.proofs as prove_service
    from isrlab.proofs.obligations import load

    recorded = [g for g in load() if g.model == "tla-kip101"]
    monkeypatch.setattr(prove_service, "run_all", lambda selected, timeout, progress: recorded)
    monkeypatch.chdir(tmp_path)
    first = _invoke("prove", "--model", "tla-kip101")
    second = _invoke("prove", "--model", "tla-kip101")
    assert first[0] == second[0] == 0
    assert list(tmp_path.iterdir()) == []  # nothing left in the current directory
    found = [re.search(r"results written to (\S+)/ ", out) for _, out, _ in (first, second)]
    made = [Path(m.group(1)) for m in found if m is not None]
    try:
        assert len(set(made)) == 2
        for directory in made:
            assert directory.parent == Path(tempfile.gettempdir())
            assert (directory / "results.json").exists()
            assert (directory / "RESULTS.md").exists()
    finally:
        for directory in made:
            shutil.rmtree(directory, ignore_errors=True)


def test_prove_says_whether_each_outcome_is_the_recorded_one(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from dataclasses import replace

    import isrlab.services.proofs as prove_service
    from isrlab.proofs.obligations import load

    recorded = [g for g in load() if g.model == "tla-kip101"]
    assert len(recorded) >= 2
    first_row = recorded[1].rows[0]
    other = "unknown" if first_row.status != "unknown" else "proved"
    changed = replace(recorded[1], rows=(replace(first_row, status=other),
                                         *recorded[1].rows[1:]))

    def run_all(selected: list[Any], timeout: int, progress: Any) -> list[Any]:
        outcomes = [recorded[0], changed, *recorded[2:]]
        for group, outcome in zip(selected, outcomes, strict=True):
            progress(group, outcome)
        return outcomes

    monkeypatch.setattr(prove_service, "run_all", run_all)
    code, out, err = _invoke("prove", "--model", "tla-kip101", "--out", str(tmp_path / "o"))
    lines = out.splitlines()
    assert lines[0].startswith("proving ") and "recorded run took" in lines[0]
    assert lines[1].endswith("; as recorded")
    assert f"{first_row.action} {other} (recorded: {first_row.status})" in lines[2]
    assert "1 outcome(s) differ from the recorded ones" in out
    assert code == (1 if first_row.status == "proved" else 0), (out, err)


def test_prove_refuses_update_with_out(tmp_path: Path) -> None:
    code, out, err = _invoke("prove", "--update", "--out", str(tmp_path / "x"))
    _one_line_error(code, out, err, "--update", "--out")


# -- dependencies ---------------------------------------------------------------------------

LOADED_BY_THEIR_TOOL = {ROOT / "isrlab" / "pytest_plugin.py"}
"""Modules only their tool imports: pytest loads the plugin (entry point pytest11), so
pytest is there whenever the plugin's ``import pytest`` runs."""


def _runtime_imports() -> set[str]:
    """Top-level modules imported by the installed packages (not tests/ or bench/)."""
    found: set[str] = set()
    for package in ("core", "spec", "checker", "spark_explore", "proofs", "isrlab"):
        for path in sorted(set((ROOT / package).rglob("*.py")) - LOADED_BY_THEIR_TOOL):
            for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
                if isinstance(node, ast.Import):
                    found.update(a.name.split(".")[0] for a in node.names)
                elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
                    found.add(node.module.split(".")[0])
    return found


def test_every_runtime_import_is_a_runtime_dependency() -> None:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    declared = {re.split(r"[<>=\[; ]", d)[0].lower().replace("_", "-")
                for d in project["dependencies"]}
    ours = {"core", "spec", "checker", "spark_explore", "proofs", "isrlab"}
    distributions = packages_distributions()
    missing = []
    for module in sorted(_runtime_imports() - ours - set(sys.stdlib_module_names)):
        names = {d.lower().replace("_", "-") for d in distributions.get(module, [module])}
        if not names & declared:
            missing.append(f"{module} ({', '.join(sorted(names))})")
    assert missing == []


def test_buckets_without_the_spark_engine_is_refused() -> None:
    code, out, err = _invoke("check", "--model", "toy-counter", "--buckets", "3")
    _one_line_error(code, out, err, "--buckets", "--engine spark")


# -- an exception inside a model: its traceback, one summary line, exit 70 (not 1) ------------

_FAILING_MODEL = '''
from isrlab.api import ModelEntry, Property


class Failing:
    name = "failing"

    def init_states(self):
        return [0]

    def next_states(self, state):
        if state == 2:
            raise ZeroDivisionError("the model divided by zero at 2")
        return [("Inc", state + 1)]

    def invariants(self):
        return [Property("Small", lambda s: s < 10, "")]

    def sometimes(self):
        return []

    def within_boundary(self, state):
        return True

    def canonical(self, state):
        return state

    def encode(self, state):
        return state.to_bytes(2, "little")

    def decode(self, data):
        return int.from_bytes(data, "little")

    def variables(self, state):
        return {"x": state}


FAILING = ModelEntry("failing", "raises at 2", (), lambda params: Failing())
'''


@pytest.mark.parametrize("workers", ["1", "2"])
def test_a_model_that_raises_exits_70_with_its_traceback_not_as_a_violation(
    tmp_path: Path, workers: str,
) -> None:
    model = tmp_path / "failing.py"
    model.write_text(_FAILING_MODEL, encoding="utf-8")
    code, out, err = _invoke("check", "--model", f"{model}:FAILING", "--no-progress",
                             "--workers", workers)
    assert code == 70, (code, out, err)  # 1 would say an invariant was violated
    assert "VIOLATION" not in out
    assert f'File "{model}"' in err  # the traceback points into the model's own code
    last = err.strip().splitlines()[-1]
    assert last.startswith("isrlab: error: ")  # with workers: "WorkerError: worker 0 failed: "
    assert "ZeroDivisionError: the model divided by zero at 2 (raised while running" in last


# -- a user's invariant that raises: the user's error, one line, exit 2 (issue 34, finding 4) -

_RAISING_INVARIANT = '''from isrlab.api import extend


def hw_of_leader(v):
    """Reads a variable the model does not have."""
    return v["no_such_variable"] >= 0


CHECKS = extend("toy-counter", invariants={"LeaderHw": hw_of_leader})
'''


@pytest.mark.parametrize("command", [["check", "--workers", "1"], ["check", "--workers", "2"],
                                     ["simulate"]])
def test_a_user_invariant_that_raises_is_the_users_error_in_one_line(
    tmp_path: Path, command: list[str],
) -> None:
    checks = tmp_path / "my_checks.py"
    checks.write_text(_RAISING_INVARIANT, encoding="utf-8")
    code, out, err = _invoke(*command, "--model", f"{checks}:CHECKS", "--no-progress")
    assert code == 2, (code, out, err)
    assert "Traceback" not in err
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    assert lines[0].startswith("isrlab: error: your invariant 'LeaderHw' raised KeyError: "
                               "'no_such_variable'"), lines[0]
    assert f"({checks}, line 6)" in lines[0]
    assert "--debug" in lines[0]


def test_debug_prints_the_traceback_of_a_user_invariant(tmp_path: Path) -> None:
    checks = tmp_path / "my_checks.py"
    checks.write_text(_RAISING_INVARIANT, encoding="utf-8")
    code, out, err = _invoke("check", "--model", f"{checks}:CHECKS", "--no-progress",
                             "--debug")
    assert code == 2, (code, out, err)
    assert "Traceback" in err and f'File "{checks}", line 6' in err
    assert err.strip().splitlines()[-1].startswith("isrlab: error: your invariant 'LeaderHw'")


def test_the_docs_name_exactly_the_models_bmc_takes() -> None:
    """docs/api.md's limits say which models ``bmc`` takes; bmc's own refusal lists them."""
    code, _, err = _invoke("bmc", "--model", "kafka")
    assert code == 2 and "no symbolic encoding" in err
    supported = err.split("bmc supports: ", 1)[1].rstrip(")\n").split(", ")
    limits = (ROOT / "docs" / "api.md").read_text(encoding="utf-8").split("## Limits", 1)[1]
    bullet = next(b for b in limits.split("\n* ") if "isrlab bmc" in b)
    assert all(name.startswith("tla-") for name in supported)
    assert "registered `tla-*` models" in bullet
    assert "not `kafka`" in bullet


def test_progress_of_a_two_worker_run_never_shows_an_empty_queue_mid_run() -> None:
    """With two workers an expanded level's queue is empty while its new states are merged:
    the progress line says so instead of ``queue 0`` (issue 34, finding 8)."""
    done = subprocess.run(
        [sys.executable, "-m", "isrlab", "check", "--model", "toy-symmetric", "-p", "procs=6",
         "-p", "values=6", "--workers", "2", "--progress", "--progress-interval", "0.02"],
        cwd=ROOT, capture_output=True, text=True, timeout=300, check=False)
    assert done.returncode == 0, done.stderr
    lines = [line for line in done.stderr.splitlines() if line.startswith("progress: ")]
    assert len(lines) >= 3, done.stderr
    assert not [line for line in lines if "queue 0 " in line]
    assert any("merging the level's new states" in line for line in lines)


@pytest.mark.parametrize("solver", ["z3", "yices"])
def test_bmc_names_the_solver_that_answered(tmp_path: Path, solver: str) -> None:
    from isrlab.checker.z3.solvers import SOLVERS

    assert solver in SOLVERS
    report = tmp_path / "r.json"
    code, out, err = _invoke("bmc", "--model", "tla-kip101", "--depth", "3", "--solver",
                             solver, "--json", str(report))
    if code == 2 and "not installed" in err:
        pytest.skip(f"{solver} is not installed")
    assert code == 0, (out, err)
    assert f"[{solver}-bmc]" in out.splitlines()[0]
    assert json.loads(report.read_text())["engine"] == f"{solver}-bmc"


def test_models_claims_no_failure_the_defaults_do_not_show() -> None:
    """``isrlab models`` said tla-kip320-first-try's StrongIsr fails; at the defaults it
    holds (TLC's configuration B, 3 replicas, is where it fails: docs/tla-models.md)."""
    code, out, _ = _invoke("check", "--model", "tla-kip320-first-try", "--no-progress")
    assert code == 0 and "OK: every invariant holds" in out
    _, listing, _ = _invoke("models")
    line = next(x for x in listing.splitlines() if x.startswith("tla-kip320-first-try"))
    assert "(StrongIsr fails)" not in line
    assert "holds at the defaults" in line and "configuration B" in line



def test_an_unknown_action_names_the_trace_file(tmp_path: Path) -> None:
    """Every bad input of validate is ``FILE: where: why``; the unknown action alone gave
    ``line 2: ...`` without the file (issue 34, finding 8)."""
    trace = tmp_path / "t.jsonl"
    trace.write_text('{"action": "Init"}\n{"action": "Frobnicate"}\n', encoding="utf-8")
    code, out, err = _invoke("validate", "--model", "tla-kip320", str(trace))
    _one_line_error(code, out, err, f"{trace}: line 2: unknown action 'Frobnicate'")


def test_ctrl_c_inside_a_z3_call_is_an_interrupt_not_a_crash() -> None:
    # Ctrl-C while ctypes converts a Z3 call's argument reaches isrlab as an ArgumentError
    # naming the KeyboardInterrupt (seen under load in the bmc Ctrl-C test: exit 70)
    import ctypes

    from isrlab.cli_support import _interrupt_in_foreign_call
    assert _interrupt_in_foreign_call(ctypes.ArgumentError("argument 1: KeyboardInterrupt: "))
    assert not _interrupt_in_foreign_call(ctypes.ArgumentError("argument 1: TypeError: x"))
    assert not _interrupt_in_foreign_call(ValueError("argument 1: KeyboardInterrupt: "))


def test_bmc_without_the_partial_order_reduction_finds_tlc_s_length() -> None:
    # tla-kip101's encoding turns the reduction on; --no-partial-order searches every order
    # of the steps and must find the same shortest trace: TLC's 12 states (configuration A)
    code, out, err = _invoke("bmc", "--model", "tla-kip101", "--depth", "11",
                             "--no-partial-order")
    assert code == 1, (out, err)
    assert "(trace of 12 states); no trace of 11 or fewer" in out.splitlines()[0]


def test_a_finaliser_failing_after_ctrl_c_adds_no_traceback() -> None:
    """Ctrl-C inside a library constructor (z3's ``AstRef`` before it sets ``ctx``, seen in
    CI on ``isrlab prove``) leaves a half-built object whose ``__del__`` fails when the
    interrupted frames are freed: still the one line and exit 130."""
    child = "\n".join([
        "import click",
        "from isrlab.cli_support import OneLineErrors",
        "class HalfBuilt:",
        "    def __init__(self) -> None:",
        "        raise KeyboardInterrupt",
        "    def __del__(self) -> None:",
        "        self.ctx.ref()",
        "@click.group(cls=OneLineErrors)",
        "def cli() -> None: ...",
        "@cli.command()",
        "def run() -> None:",
        "    HalfBuilt()",
        "cli.main(['run'])",
    ])
    done = subprocess.run([sys.executable, "-c", child], cwd=ROOT, capture_output=True,
                          text=True, timeout=60)
    assert (done.returncode, done.stderr.strip()) == (130, "isrlab: interrupted")
