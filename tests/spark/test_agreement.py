"""The Spark engine gives the local checker's answers: counts, diameter, coverage, traces.

Golden figures come from hand counting (the toys' docstrings) and from TLC
(docs/conformance.md, configuration A); everything else is compared with ``isrlab.checker.bfs``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from isrlab.checker import toys
from isrlab.checker.bfs import CheckOptions
from isrlab.checker.bfs import explore as explore_locally
from isrlab.checker.model import Model
from isrlab.cli_support import resolve_model
from isrlab.spark_explore import SparkOptions, explore
from isrlab.spark_explore.engine import SparkTaskFailed
from tests.spark.conftest import comparable, needs_java
from tests.test_api import _doc_files
from tests.test_cli_rough_edges import _FAILING_MODEL

pytestmark = [pytest.mark.spark, needs_java]


def _both(model: Model[Any], session: Any, **options: Any) -> tuple[Any, Any]:
    chosen = CheckOptions(**options)
    return explore_locally(model, chosen), explore(model, chosen, SparkOptions(), session)


MATRIX = [
    pytest.param(toys.Counter(4), {}, id="counter-holds"),
    pytest.param(toys.Counter(6, bound=3), {}, id="counter-boundary"),
    pytest.param(toys.Graph(), {}, id="graph-violated"),
    pytest.param(toys.Graph(dead_end=True), {"check_deadlock": True}, id="graph-deadlock"),
    pytest.param(toys.Graph(dead_end=True), {"check_deadlock": True, "stop_at_first": False},
                 id="graph-continue"),
    pytest.param(toys.Symmetric(3, 3, bad_sum=4), {"symmetry": True}, id="symmetric-violated"),
    pytest.param(toys.Symmetric(3, 3), {"max_depth": 4}, id="symmetric-depth-bound"),
]


@pytest.mark.parametrize(("model", "options"), MATRIX)
def test_spark_and_the_local_checker_give_the_same_report(
    model: Model[Any], options: dict[str, Any], spark_context: Any
) -> None:
    local, spark = _both(model, spark_context, **options)
    assert spark.engine == "spark"
    assert comparable(spark) == comparable(local)


def test_a_walk_to_e_is_found_with_the_hand_counted_shortest_trace(spark_context: Any) -> None:
    result = explore(toys.Graph(), CheckOptions(), SparkOptions(), spark_context)
    assert result.violation is not None
    assert result.violation.invariant == "NotAtE"
    # a -> b -> d -> e (b before c: the smallest label among equally short paths)
    assert [step.state["node"] for step in result.violation.trace] == ["a", "b", "d", "e"]


def test_symmetric_processes_reduce_to_multisets(spark_context: Any) -> None:
    result = explore(toys.Symmetric(3, 3), CheckOptions(symmetry=True), SparkOptions(),
                     spark_context)
    assert result.distinct_states == 10  # C(3 + 3 - 1, 3) multisets, counted by hand
    assert result.ok


def test_kip320_configuration_a_matches_tlc(spark_context: Any) -> None:
    _, params, model = resolve_model("tla-kip320", [])
    local, spark = _both(model, spark_context, params=params)
    assert (spark.distinct_states, spark.generated_states, spark.diameter) == (5973, 11839, 18)
    assert spark.ok
    assert comparable(spark) == comparable(local)


def test_truncation_to_the_high_watermark_breaks_weak_isr_in_nine_states(
    spark_context: Any,
) -> None:
    _, params, model = resolve_model("tla-truncate-to-hw", [])
    local, spark = _both(model, spark_context, params=params)
    assert spark.violation is not None
    assert (spark.violation.invariant, spark.violation.length) == ("WeakIsr", 9)
    assert comparable(spark) == comparable(local)


def test_async_isr_with_its_constraint_matches_tlc(spark_context: Any) -> None:
    # TLC 2.15, AsyncIsr.tla, 3 replicas, MaxOffset 2, MaxVersion 3, one worker (see
    # tests/spec/test_tla_async_isr.py): states outside the CONSTRAINT are generated and
    # checked, but neither distinct nor expanded.
    _, params, model = resolve_model("tla-async-isr", [])
    local, spark = _both(model, spark_context, params=params)
    assert (spark.distinct_states, spark.generated_states, spark.diameter) == (
        22_456, 134_129, 21)
    assert spark.ok
    assert comparable(spark) == comparable(local)


def test_a_model_from_a_users_file_runs_on_spark(tmp_path: Path, spark_context: Any) -> None:
    # docs/api.md's tiny.py, loaded as `--model tiny.py:LOST_UPDATE` loads it: under a private
    # module name no Python worker can import (the model is shipped by value).
    path = tmp_path / "tiny.py"
    path.write_text(_doc_files()["tiny.py"], encoding="utf-8")
    _, params, model = resolve_model(f"{path}:LOST_UPDATE", [])
    local, spark = _both(model, spark_context, params=params)
    assert spark.violation is not None and len(spark.violation.trace) == 5  # docs/api.md
    assert comparable(spark) == comparable(local)


def test_an_exception_in_the_model_is_reported_with_its_own_line_and_traceback(
    tmp_path: Path, spark_context: Any,
) -> None:
    path = tmp_path / "failing.py"
    path.write_text(_FAILING_MODEL, encoding="utf-8")
    _, params, model = resolve_model(f"{path}:FAILING", [])
    with pytest.raises(SparkTaskFailed) as caught:
        explore(model, CheckOptions(params=params), SparkOptions(), spark_context)
    assert str(caught.value) == (
        "a Spark task failed: ZeroDivisionError: the model divided by zero at 2")
    note = "\n".join(caught.value.__notes__)
    assert f'File "{path}", line' in note and "Py4J" not in note and "\tat " not in note
