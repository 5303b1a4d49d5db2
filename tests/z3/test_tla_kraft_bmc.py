"""``isrlab bmc`` on the tla-kraft ports finds TLC's shortest counterexamples.

Golden lengths come from docs/conformance.md (TLC 2.15 on Vanlightly/kafka-tlaplus, the
KRaft section): a trace of N states is N-1 steps and every shorter depth is refuted.  BMC
searches every variable (no VIEW); the breadth-first search without the view gives the
same lengths on these rows (docs/z3.md).  The minutes-long runs are marked ``heavy``.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from isrlab.checker.trace import read_itf
from isrlab.cli import cli
from isrlab.services import bmc as bmc_service
from isrlab.spec.symbolic.tla_kraft import Capacities, KraftSystem
from isrlab.spec.tla_kraft.params import kraft_config
from tests.z3.conftest import heavy

PUBLIC_ROW = ["-p", "min_isr=2", "-p", "unclean_shutdown_limit=1", "-p", "fence_broker_limit=1",
              "-p", "avoid_last_replica_standing=false"]


def run_bmc(tmp_path: Path, model: str, params: list[str],
            depth: int) -> tuple[int, str, dict[str, Any]]:
    """Exit code, output and JSON report of ``isrlab bmc``."""
    report = tmp_path / "r.json"
    result = CliRunner().invoke(cli, ["bmc", "--model", model, *params, "--depth", str(depth),
                                      "--json", str(report), "--itf", str(tmp_path / "t.json")])
    data = json.loads(report.read_text()) if report.exists() else {}
    return result.exit_code, result.output, data


@heavy
def test_public_row_leader_completeness_in_8_states(tmp_path: Path) -> None:
    # docs/conformance.md, public row: v3.5, B 2, RF 2, MinISR 2, ISR0 2, UncleanShutdownLimit
    # 1, FenceBrokerLimit 1, AvoidLastReplicaStanding FALSE: TLC's trace has 8 states.
    code, output, data = run_bmc(tmp_path, "tla-kraft-3.5", PUBLIC_ROW, 8)
    assert code == 1, output
    assert "VIOLATION of LeaderCompletenessProperty (trace of 8 states)" in output
    assert [d["verdict"] for d in data["bmc"]["depths"]] == ["unsat"] * 7 + ["sat"]
    steps = read_itf(tmp_path / "t.json")  # the explicit model's own trace, replayed
    assert len(steps) == 8 and steps[0].action == "Init"


@heavy
def test_holding_default_configuration_refuted_to_9_states(tmp_path: Path) -> None:
    # docs/conformance.md: B 2, RF 2, MinISR 1, ISR0 2, every limit 0 holds (TLC: 14
    # distinct states, depth 8); no trace of up to 9 states violates an invariant.
    code, output, data = run_bmc(tmp_path, "tla-kraft-3.5", [], 8)
    assert code == 0, output
    assert "no violation in any trace of up to 9 states" in output
    assert data["bmc"]["proved_steps"] == 8


def test_a_short_refutation_of_the_public_row(tmp_path: Path) -> None:
    # The public row's shortest trace has 8 states: none of up to 4 violates an invariant.
    code, output, data = run_bmc(tmp_path, "tla-kraft-3.5", PUBLIC_ROW, 3)
    assert code == 0, output
    assert [d["verdict"] for d in data["bmc"]["depths"]] == ["unsat"] * 4


@heavy
def test_kip966_data_loss_row_has_the_breadth_first_length(tmp_path: Path) -> None:
    # kip-966 with MinISR 1, one data-loss shutdown and one fencing loses an acknowledged
    # record (NoCommittedRecordLostGlobally); not a TLC row, so the golden length is the
    # explicit breadth-first search's without the view, run here.
    params = ["-p", "data_loss_shutdown_limit=1", "-p", "fence_broker_limit=1"]
    report = tmp_path / "bfs.json"
    bfs = CliRunner().invoke(cli, ["check", "--model", "tla-kraft-kip966", *params,
                                   "-p", "view=none", "--json", str(report)])
    assert bfs.exit_code == 1, bfs.output
    expected = json.loads(report.read_text())["violation"]["length"]
    code, output, data = run_bmc(tmp_path, "tla-kraft-kip966", params, expected)
    assert code == 1, output
    assert f"VIOLATION of NoCommittedRecordLostGlobally (trace of {expected} states)" in output
    assert data["bmc"]["proved_steps"] == expected - 2


def test_a_short_refutation_of_the_kip966_data_loss_row(tmp_path: Path) -> None:
    # Its shortest trace has 5 states (above): none of up to 4 violates an invariant.
    code, output, data = run_bmc(tmp_path, "tla-kraft-kip966",
                                 ["-p", "data_loss_shutdown_limit=1", "-p",
                                  "fence_broker_limit=1"], 3)
    assert code == 0, output
    assert [d["verdict"] for d in data["bmc"]["depths"]] == ["unsat"] * 4


def test_a_trace_beyond_the_slots_is_an_error_not_a_verdict(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # With one metadata-record slot the first partition change (FenceBroker(2)) overflows:
    # bmc stops with a one-line error (exit 2) instead of a verdict.
    def one_slot(name: str, values: Mapping[str, Any]) -> KraftSystem:
        return KraftSystem(kraft_config(False, values), Capacities(metadata_log=1))

    monkeypatch.setattr(bmc_service, "symbolic_for", one_slot)
    code, output, _data = run_bmc(tmp_path, "tla-kraft-3.5", ["-p", "fence_broker_limit=1"], 2)
    assert code == 2, output
    assert "needs more than the encoding's slots" in output and "no verdict" in output
