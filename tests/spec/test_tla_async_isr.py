"""``tla-async-isr`` against TLC's figures for module AsyncIsr.

Golden numbers: TLC 2.15 on hachikuji/kafka-specification's AsyncIsr.tla, breadth-first with
one worker (``java -cp tla2tools.jar tlc2.TLC -workers 1``), through a wrapper module
``EXTENDS AsyncIsr`` with ``Replicas = {r1, r2, r3}``, ``Leader = r1``, ``MaxOffset = 2``,
``MaxVersion = 3``, ``CONSTRAINT \\A r \\in Replicas : leaderState.offsets[r] <= MaxOffset
/\\ controllerState.version <= MaxVersion`` and ``INVARIANT ValidHighWatermark``:

* the module as written (HighWatermark over ``isr \\union pendingIsr``): 22,456 distinct
  states, 134,129 generated, depth 21, no error;
* HighWatermark over ``isr`` only: ValidHighWatermark violated, the trace has 7 states.

TLC counts a successor outside the CONSTRAINT as generated and checks it, but does not put
it in its fingerprint set (``tlc2.tool.ModelChecker.doNext``): it is neither distinct nor
expanded.  Counting it as distinct would give 62,428 here, and depth 22.
"""

from __future__ import annotations

from click.testing import CliRunner

from isrlab.cli import cli

CONSTANTS = ["-p", "replicas=3", "-p", "max_offset=2", "-p", "max_version=3"]


def test_maximal_isr_matches_tlc_and_valid_high_watermark_holds() -> None:
    result = CliRunner().invoke(cli, [
        "check", "--model", "tla-async-isr", "--no-progress", *CONSTANTS, "-p", "hw_isr=maximal",
    ])
    assert result.exit_code == 0, result.output
    assert "22,456 distinct / 134,129 generated" in result.output
    assert "diameter 21" in result.output


def test_current_isr_breaks_valid_high_watermark_in_seven_states() -> None:
    result = CliRunner().invoke(cli, [
        "check", "--model", "tla-async-isr", "--no-progress", *CONSTANTS, "-p", "hw_isr=current",
    ])
    assert result.exit_code == 1, result.output
    assert "ValidHighWatermark" in result.output and "trace of 7 states" in result.output


def test_an_unknown_hw_isr_is_one_line_and_exit_2() -> None:
    result = CliRunner().invoke(cli, [
        "check", "--model", "tla-async-isr", "--no-progress", "-p", "hw_isr=minimal",
    ])
    assert result.exit_code == 2
    assert "hw_isr" in result.output and "Traceback" not in result.output
