"""Vanlightly's seven KRaft liveness properties (``isrlab.spec.kraft_liveness``) against TLC's
public liveness rows of issue 33: kraft/v3.5 without the view, 2 brokers, replication factor
2, min ISR 1, ISR 2 (TLC 2.15: all seven hold in 19 distinct / 21 generated states, depth
11; with FenceBrokerLimit 1, all seven hold in 14,613 states; the same without the weak
fairness of UnfenceBroker, a violation whose lasso has 10 states and then stutters).

Needs the ``tla-kraft-*`` port (``isrlab.spec.tla_kraft``), skipped without it.
"""

from __future__ import annotations

from typing import Any

import pytest

pytest.importorskip("isrlab.spec.tla_kraft")

from isrlab import api
from isrlab.checker.bfs import CheckOptions, explore
from isrlab.checker.liveness import check_liveness
from isrlab.spec.kraft_liveness import PROPERTIES, V35


def _model(*assignments: str) -> Any:
    return api.build(V35, api.parse(V35, assignments))


def test_all_seven_hold_on_the_smallest_configuration() -> None:
    model = _model()
    plain = explore(model, CheckOptions())
    assert (plain.distinct_states, plain.generated_states, plain.diameter) == (19, 21, 11)
    result = check_liveness(model)
    assert result.properties == PROPERTIES and result.ok and result.states == 19


def test_all_seven_hold_with_one_fencing() -> None:
    result = check_liveness(_model("fence_broker_limit=1"))
    assert result.ok and result.states == 14_613


def test_without_fair_unfencing_a_fenced_broker_stays_fenced_after_ten_states() -> None:
    result = check_liveness(_model("fence_broker_limit=1", "unfair=UnfenceBroker"))
    (violation,) = result.violations
    assert violation.property == "EventuallyUnfenced"
    assert len(violation.lasso.trace) == 10 and violation.lasso.stutters
    last = violation.lasso.trace[-1].state
    assert any(r["status"] == "FENCED" for r in last["con_broker_reg"])
    assert [s.action for s in violation.lasso.trace].count("FenceBroker(1)") + [
        s.action for s in violation.lasso.trace].count("FenceBroker(2)") == 1


def test_an_unknown_unfair_action_is_refused() -> None:
    with pytest.raises(api.ModelError, match="not among the fair actions"):
        _model("unfair=Bogus")
