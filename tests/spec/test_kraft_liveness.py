"""Vanlightly's seven KRaft liveness properties, declared by ``tla-kraft-3.5`` and
``tla-kraft-kip966`` (``isrlab.spec.tla_kraft.liveness``), against TLC's public liveness rows
of issue 33: kraft/v3.5 without the view, 2 brokers, replication factor 2, min ISR 1, ISR 2
(TLC 2.15: all seven hold in 19 distinct / 21 generated states, depth 11; with
FenceBrokerLimit 1, all seven hold in 14,613 states; the same without the weak fairness of
UnfenceBroker, a violation whose lasso has 10 states and then stutters), and rows measured
for this repository with TLC 2.15 (``SPECIFICATION LivenessSpec``, the seven properties as
PROPERTY, no VIEW, ``-workers 1 -deadlock -lncheck final``).  docs/conformance.md has the
rows with their cfg and command.
"""

from __future__ import annotations

from typing import Any

import pytest
from click.testing import CliRunner

from isrlab import api
from isrlab.checker.bfs import CheckOptions, explore
from isrlab.checker.liveness import check_liveness
from isrlab.cli import cli
from isrlab.models import registry
from isrlab.spec.tla_kraft.liveness import PROPERTIES


def _model(*assignments: str, name: str = "tla-kraft-3.5") -> Any:
    entry = registry().get(name).unwrap()
    return api.build(entry, api.parse(entry, ["view=none", *assignments]))


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
    actions = [s.action for s in violation.lasso.trace]
    assert actions.count("FenceBroker(1)") + actions.count("FenceBroker(2)") == 1


def test_an_unknown_unfair_action_is_refused() -> None:
    with pytest.raises(api.ModelError, match="not among the fair actions"):
        _model("unfair=Bogus")


def test_the_cli_checks_them_without_the_view_and_refuses_the_published_view() -> None:
    run = CliRunner().invoke(cli, ["check", "--model", "tla-kraft-kip966", "-p", "view=none",
                                   "--liveness", "--no-progress"])
    assert run.exit_code == 0, run.output
    assert "EventuallyAcknowledgedValueFullyReplicated holds" in run.output
    refused = CliRunner().invoke(cli, ["check", "--model", "tla-kraft-3.5", "--liveness",
                                       "--no-progress"])
    assert refused.exit_code == 2
    assert refused.output.strip().splitlines() == [
        "isrlab: error: --liveness needs whole states: model 'tla-kraft-3.5' has a view (as "
        "TLC's VIEW, to be left out for liveness checking)"]


def test_kip966_all_seven_hold_with_one_fencing() -> None:
    """TLC 2.15 on kip-966, FenceBrokerLimit 1: no error, 14,613 distinct / 35,234
    generated."""
    model = _model("fence_broker_limit=1", name="tla-kraft-kip966")
    result = check_liveness(model)
    assert result.ok and result.states == 14_613 and result.edges == 35_234 - 1


def test_without_fair_fetching_a_write_is_never_answered() -> None:
    """TLC 2.15 on v3.5 without WF_vars(SendFetchRequest(b)): temporal properties violated,
    a lasso (5 states) ending in stuttering with A sent and neither acknowledged nor
    rejected; ours is the shortest such lasso."""
    result = check_liveness(_model("unfair=SendFetchRequest"))
    (violation,) = result.violations
    assert violation.property == "EventuallyWriteIsAcceptedOrRejected"
    assert violation.lasso.stutters and len(violation.lasso.trace) <= 5
    last = violation.lasso.trace[-1].state
    assert last["inv_sent"] == ["A"] and last["inv_pos_acked"] == last["inv_neg_acked"] == []


def test_all_seven_hold_with_one_clean_shutdown() -> None:
    """TLC 2.15 on v3.5, CleanShutdownLimit 1: no error, 13,348 distinct / 28,673
    generated."""
    result = check_liveness(_model("clean_shutdown_limit=1"))
    assert result.ok and result.states == 13_348 and result.edges == 28_673 - 1
