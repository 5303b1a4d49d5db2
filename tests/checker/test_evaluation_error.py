"""A model's own evaluation error (``checker.model.EvaluationError``, TLC's "Error:
evaluating ..."): ``check`` (one worker or several) and ``simulate`` report it with the trace
to the state whose next step raised, never as a traceback, and the CLI exits 3."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

import pytest
from click.testing import CliRunner

from isrlab.checker.bfs import CheckOptions
from isrlab.checker.model import EvaluationError
from isrlab.checker.report import EVALUATION_ERROR
from isrlab.checker.simulate import SimulateOptions
from isrlab.checker.toys import Counter
from isrlab.cli import cli
from isrlab.services import runs


@dataclass(frozen=True, slots=True)
class _Undefined(Counter):
    """The counter whose next step is undefined at ``x = 3`` (as a spec's ``SubSeq`` out of
    range): Init 0, Inc 1, Inc 2, Inc 3 is the shortest way there, four states."""

    def next_states(self, state: int) -> Iterable[tuple[str, int]]:
        if state == 3:
            raise EvaluationError("x[4] is outside the sequence", "Inc")
        return Counter.next_states(self, state)


@pytest.mark.parametrize("workers", [1, 2])
def test_check_reports_the_error_with_a_shortest_trace(workers: int) -> None:
    result = runs.check(_Undefined(limit=6), CheckOptions(workers=workers))
    assert result.evaluation_error and not result.ok
    assert result.violation is not None
    assert result.violation.invariant == EVALUATION_ERROR
    assert result.violation.explanation == "Inc: x[4] is outside the sequence"
    assert [(s.action, s.state["x"]) for s in result.violation.trace] == [
        ("Init", 0), ("Inc", 1), ("Inc", 2), ("Inc", 3)]
    assert "ERROR: the spec's next step cannot be evaluated: Inc: x[4]" in result.summary_line()


def test_simulate_reports_the_error_on_its_walk() -> None:
    result = runs.simulate(_Undefined(limit=6), SimulateOptions(seed=1, walks=200, depth=50))
    assert result.evaluation_error and result.violation is not None
    assert result.violation.trace[-1].state["x"] == 3
    assert result.violation.explanation == "Inc: x[4] is outside the sequence"


def test_cli_tla_kraft_spec_error_exits_3_with_its_trace() -> None:
    """With two values the TLA+ spec's WriteRecordToLeader reads the log before its append
    (docs/tla-models.md, ``values``): the port's ``SpecError``, reported as TLC would."""
    args = ["--model", "tla-kraft-3.5", "-p", "values=2", "-p", "min_isr=1",
            "-p", "leader_shrink_isr_limit=1", "--no-progress"]
    for command in ("check", "simulate"):
        out = CliRunner().invoke(cli, [command, *args])
        assert out.exit_code == 3, out.output
        assert "Traceback" not in out.output
        first = out.stdout.splitlines()[0]
        assert "ERROR: the spec's next step cannot be evaluated: WriteRecordToLeader(1): " \
               "SubSeq(" in first
        steps = [line for line in out.stdout.splitlines() if line.startswith("State ")]
        assert steps[0] == "State 1: Init"
        assert steps[-1].endswith("WriteRecordToLeader(1)")  # the next write reads it short


def test_explorer_shows_the_error_instead_of_enabled_actions() -> None:
    from isrlab.explorer import Session

    session = Session(_Undefined(limit=6), "undefined")
    session.bounded_check(6)  # from x = 0: the check stops at x = 3 with the error
    assert session.check["violation"] == EVALUATION_ERROR
    assert session.check["steps"] == ["Inc", "Inc", "Inc"]
    session.append_counterexample()
    session.goto(3)
    view = session.view()
    assert view["enabled"] == []
    assert view["evaluation_error"] == "Inc: x[4] is outside the sequence"
    session.goto(2)
    assert session.view()["evaluation_error"] == ""
