"""TLC's VIEW on the Spark engine: the state found first in TLC's order is kept, as locally.

Golden figures: the hand counts of ``tests/checker/test_view.py`` and TLC 2.15's row of
``tla-kraft-3.5`` (docs/conformance.md: 2 brokers, RF 2, min ISR 1, ISR 2,
FenceBrokerLimit 1, VIEW view: 1,260 distinct / 3,436 generated / diameter 21).
"""

from __future__ import annotations

from typing import Any

import pytest

from isrlab.checker.bfs import CheckOptions
from isrlab.cli_support import resolve_model
from isrlab.spark_explore import SparkOptions, explore
from tests.checker.test_view import COUSINS, SIBLINGS, Tagged
from tests.spark.conftest import needs_java

pytestmark = [pytest.mark.spark, needs_java]


def test_the_first_state_found_for_a_view_is_kept(spark_context: Any) -> None:
    siblings = explore(Tagged(SIBLINGS), CheckOptions(), SparkOptions(), spark_context)
    cousins = explore(Tagged(COUSINS), CheckOptions(), SparkOptions(), spark_context)
    assert (siblings.distinct_states, siblings.generated_states, siblings.diameter) == (3, 4, 3)
    assert (cousins.distinct_states, cousins.generated_states, cousins.diameter) == (4, 5, 3)


def test_kraft_v35_under_its_view_matches_tlc(spark_context: Any) -> None:
    _, params, model = resolve_model("tla-kraft-3.5", ["fence_broker_limit=1"])
    result = explore(model, CheckOptions(params=params), SparkOptions(), spark_context)
    assert (result.distinct_states, result.generated_states, result.diameter) == (
        1_260, 3_436, 21)
