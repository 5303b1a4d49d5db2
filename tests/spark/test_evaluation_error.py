"""A model's own evaluation error on the Spark engine: ``check`` reports it as the local
engines do (docs/checker.md, exit status 3), with the shortest trace to the state whose next
step raised, never as a failed Spark task."""

from __future__ import annotations

from typing import Any

import pytest

from isrlab.checker.bfs import CheckOptions
from isrlab.checker.model import EvaluationError
from isrlab.checker.report import EVALUATION_ERROR
from isrlab.services import runs
from isrlab.services.engines import Engine
from isrlab.spark_explore import SparkOptions, explore
from tests.checker.test_evaluation_error import _Undefined
from tests.spark.conftest import needs_java

pytestmark = [pytest.mark.spark, needs_java]


def test_the_engine_raises_the_models_own_error(spark_context: Any) -> None:
    with pytest.raises(EvaluationError) as caught:
        explore(_Undefined(limit=6), CheckOptions(), SparkOptions(), spark_context)
    assert str(caught.value) == "Inc: x[4] is outside the sequence"
    assert caught.value.action == "Inc"


def test_check_on_spark_reports_the_error_with_a_shortest_trace(spark_context: Any) -> None:
    engine = Engine("spark", master="local[2]", progress=False)  # joins the fixture's context
    result = runs.check(_Undefined(limit=6), CheckOptions(), engine)
    assert result.evaluation_error and not result.ok
    assert result.violation is not None
    assert result.violation.invariant == EVALUATION_ERROR
    assert result.violation.explanation == "Inc: x[4] is outside the sequence"
    assert [(s.action, s.state["x"]) for s in result.violation.trace] == [
        ("Init", 0), ("Inc", 1), ("Inc", 2), ("Inc", 3)]
