"""``tla-async-isr`` with Z3: bounded model checking at TLC's length, and the induction proof.

Golden length: TLC 2.15 on AsyncIsr.tla (3 replicas, Leader r1, MaxOffset 2, MaxVersion 3,
CONSTRAINT on offsets and the controller's version; see tests/spec/test_tla_async_isr.py):
with the high watermark over ``isr`` only, ValidHighWatermark is violated by a trace of 7
states.  A trace of N states is N - 1 steps; every shorter depth is refuted.
"""

from __future__ import annotations

from click.testing import CliRunner

from isrlab.cli import cli
from isrlab.proofs.async_isr_obligations import async_isr_groups
from isrlab.proofs.obligations import PROVE_MODELS

CONSTANTS = ["-p", "replicas=3", "-p", "max_offset=2", "-p", "max_version=3"]


def test_cli_bmc_finds_the_current_isr_violation_at_seven_states() -> None:
    result = CliRunner().invoke(cli, [
        "bmc", "--model", "tla-async-isr", *CONSTANTS, "-p", "hw_isr=current", "--depth", "8",
    ])
    assert result.exit_code == 1, result.output
    assert "trace of 7 states" in result.output
    assert "no trace of 6 or fewer states violates an invariant" in result.output
    assert "LeaderWrite" in result.output  # the explicit model's labels (replayed)


def test_cli_bmc_finds_no_maximal_isr_violation_in_six_steps() -> None:
    result = CliRunner().invoke(cli, [
        "bmc", "--model", "tla-async-isr", *CONSTANTS, "--depth", "6",
    ])
    assert result.exit_code == 0, result.output
    assert "no violation in any trace of up to 7 states" in result.output


def test_valid_high_watermark_with_maximal_isr_is_inductive_with_its_lemmas() -> None:
    maximal = async_isr_groups()[0].run(60_000)
    assert maximal.rows and all(r.status == "proved" for r in maximal.rows)
    assert {r.target for r in maximal.rows} >= {"ValidHighWatermark",
                                                "ControllerIsrWithinMaximalIsr"}


def test_valid_high_watermark_with_current_isr_has_a_counterexample_to_induction() -> None:
    current = async_isr_groups()[1].run(60_000)
    refuted = [r for r in current.rows if r.status == "refuted"]
    assert refuted and all(r.target == "ValidHighWatermark" for r in refuted)
    write = next(r for r in refuted if r.action == "LeaderWrite")
    assert write.detail.startswith("from: controller isr") and "  to: " in write.detail


def test_prove_knows_the_async_isr_model() -> None:
    assert "tla-async-isr" in PROVE_MODELS
