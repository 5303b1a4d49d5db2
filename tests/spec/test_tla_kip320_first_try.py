"""``tla-kip320-first-try`` against TLC's figures for module Kip320FirstTry.

Golden numbers: TLC 2.15 on hachikuji/kafka-specification's Kip320FirstTry.tla,
breadth-first with one worker (``java -cp tla2tools.jar tlc2.TLC -deadlock -workers 1``),
constants ``Replicas``, ``LogSize``, ``MaxRecords``, ``MaxLeaderEpoch``:

* configuration A (Replicas = {r1, r2}, LogSize 2, MaxRecords 2, MaxLeaderEpoch 2),
  INVARIANTS WeakIsr StrongIsr: 8,429 distinct states, 19,387 generated, depth 18, no error;
* configuration B (Replicas = {r1, r2, r3}, LogSize 2, MaxRecords 2, MaxLeaderEpoch 3),
  INVARIANT StrongIsr: violated, the error trace has 13 states.
"""

from __future__ import annotations

from click.testing import CliRunner

from isrlab.cli import cli


def test_config_a_matches_tlc_and_both_invariants_hold() -> None:
    result = CliRunner().invoke(cli, [
        "check", "--model", "tla-kip320-first-try", "--no-progress", "-p", "replicas=2",
        "-p", "log_size=2", "-p", "max_records=2", "-p", "max_leader_epoch=2",
        "-p", "invariants=WeakIsr,StrongIsr",
    ])
    assert result.exit_code == 0, result.output
    assert "8,429 distinct" in result.output and "19,387 generated" in result.output
    assert "diameter 18" in result.output


def test_config_b_strong_isr_is_violated_by_a_thirteen_state_trace() -> None:
    result = CliRunner().invoke(cli, [
        "check", "--model", "tla-kip320-first-try", "--no-progress", "-p", "replicas=3",
        "-p", "log_size=2", "-p", "max_records=2", "-p", "max_leader_epoch=3",
        "-p", "invariants=StrongIsr",
    ])
    assert result.exit_code == 1, result.output
    assert "StrongIsr" in result.output and "13 states" in result.output
