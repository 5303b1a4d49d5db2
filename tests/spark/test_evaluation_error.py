"""A model's own evaluation error on the Spark engine: the engine reports it itself, from
what its tasks found (no second search), as the local engines do (docs/checker.md, exit
status 3): the same report, with the shortest trace to the state whose next step raised,
never as a failed Spark task."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from isrlab.checker.bfs import CheckOptions
from isrlab.checker.report import EVALUATION_ERROR
from isrlab.services import runs
from isrlab.services.engines import Engine
from isrlab.spark_explore import SparkOptions, explore
from tests.checker.test_evaluation_error import _Undefined
from tests.spark.conftest import comparable, needs_java

pytestmark = [pytest.mark.spark, needs_java]


def test_the_engine_reports_the_error_with_a_shortest_trace(spark_context: Any) -> None:
    result = explore(_Undefined(limit=6), CheckOptions(), SparkOptions(), spark_context)
    assert result.evaluation_error and not result.ok
    assert result.engine == "spark"
    assert result.violation is not None
    assert result.violation.invariant == EVALUATION_ERROR
    assert result.violation.explanation == "Inc: x[4] is outside the sequence"
    assert [(s.action, s.state["x"]) for s in result.violation.trace] == [
        ("Init", 0), ("Inc", 1), ("Inc", 2), ("Inc", 3)]
    assert (result.distinct_states, result.diameter) == (4, 4)  # x = 0..3, hand-counted


def test_check_on_spark_gives_the_local_engines_report(spark_context: Any) -> None:
    engine = Engine("spark", master="local[2]", progress=False)  # joins the fixture's context
    for options in (CheckOptions(), CheckOptions(stop_at_first=False)):
        spark = runs.check(_Undefined(limit=6), options, engine)
        local = runs.check(_Undefined(limit=6), options)
        assert spark.evaluation_error
        assert comparable(spark) == comparable(local)


def test_a_violation_the_local_engine_stops_at_first_is_reported_instead(
    spark_context: Any,
) -> None:
    """Spark checks and expands a level in one pass: an invariant violated at x = 3 stops
    the local search before x = 3 is expanded, so its evaluation error is never met."""
    engine = Engine("spark", master="local[2]", progress=False)
    model = _Undefined(limit=6, bad=3)
    spark, local = runs.check(model, CheckOptions(), engine), runs.check(model, CheckOptions())
    assert not local.evaluation_error and local.violation is not None
    assert comparable(spark) == comparable(local)


def test_a_tla_kraft_spec_error_gives_the_local_engines_report(spark_context: Any) -> None:
    """States that are their own encoding go through the compiled expansion, which cannot
    say which state raised: the task finds it again among its bucket's states."""
    from isrlab.api import model

    engine = Engine("spark", master="local[2]", progress=False)
    kraft = model("tla-kraft-3.5", values=2, min_isr=1, leader_shrink_isr_limit=1)
    spark, local = runs.check(kraft, CheckOptions(), engine), runs.check(kraft, CheckOptions())
    assert spark.evaluation_error and spark.violation is not None
    assert "WriteRecordToLeader(1): SubSeq(" in spark.violation.explanation
    assert comparable(spark) == comparable(local)


def test_the_level_of_the_error_is_not_committed(spark_context: Any, tmp_path: Path) -> None:
    """A rerun on the same run directory meets the error again, with the same report."""
    options = CheckOptions(run_dir=tmp_path / "run")
    first = explore(_Undefined(limit=6), options, SparkOptions(), spark_context)
    commit = json.loads((tmp_path / "run" / "commit.json").read_text())
    assert commit["level"] == 3  # x = 0, 1, 2: the level of x = 3 raised in its expansion
    again = explore(_Undefined(limit=6), options, SparkOptions(), spark_context)
    assert again.evaluation_error
    assert comparable(again) == comparable(first)
