"""The findings' reproduction logs (tests/fixtures/oracle/findings/): each is judged by the log
oracle as its expected.json says: ``breaks-invariant`` (exit 3) with the invariant and the
rule, at the line (docs/findings/stale-leo-failover.md: the new leader of epoch 3 starts below
the HW broker 0 reached in epoch 2, BREAKS NoCommittedRecordLost), or ``rejected`` (exit 1)
at the line, by the rule.  Needs the
rule-based log oracle (``isrlab.spec.oracle``, branch ``oracle``); skipped without it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from isrlab.cli import cli

FINDINGS = Path(__file__).resolve().parents[1] / "fixtures" / "oracle" / "findings"
CASES = sorted(p.parent for p in FINDINGS.glob("*/expected.json"))


@pytest.mark.parametrize("case", CASES, ids=lambda p: p.name)
def test_a_findings_log_is_judged_as_expected(case: Path) -> None:
    pytest.importorskip("isrlab.spec.oracle")
    expected = json.loads((case / "expected.json").read_text(encoding="utf-8"))
    logs = sorted(str(p) for p in case.glob("*.log"))
    outcome = CliRunner().invoke(cli, ["validate", *logs])
    where = f"{case / expected['file']}:{expected['line']}"
    if expected["verdict"] == "breaks-invariant":
        assert outcome.exit_code == 3, outcome.output
        assert f"BREAKS {expected['invariant']} at {where}: " in outcome.output, outcome.output
        assert f"; breaks {expected['rule']}, a safety property" in outcome.output
    else:
        assert expected["verdict"] == "rejected"
        assert outcome.exit_code == 1, outcome.output
        assert f"{where}: breaks {expected['rule']}" in outcome.output, outcome.output
    assert f"assumed: {expected['brokers']} brokers" in outcome.output
