"""``isrlab demo`` runs docs/protocol.md's worked examples through core; each matches."""

from __future__ import annotations

from click.testing import CliRunner

from isrlab.cli import cli
from isrlab.demo import run_worked_examples


def test_every_worked_example_matches_its_expected_figures() -> None:
    examples = run_worked_examples()
    assert len(examples) == 7
    assert [e.title for e in examples if not e.matches_seed] == []


def test_isrlab_demo_prints_each_example_and_exits_zero() -> None:
    result = CliRunner().invoke(cli, ["demo"])
    assert result.exit_code == 0, result.output
    assert "HW 6" in result.output and "HW 7" in result.output
    assert "7/7 worked examples match docs/protocol.md" in result.output


def test_isrlab_demo_finds_the_kip101_bug_and_shows_the_fix_holding() -> None:
    result = CliRunner().invoke(cli, ["demo"])
    assert result.exit_code == 0, result.output
    assert "VIOLATION of NoCommittedRecordLost" in result.output
    assert "-p truncation=kip101" in result.output
    assert "OK: every invariant holds" in result.output


def test_isrlab_demo_rejects_an_unknown_scenario_with_exit_2() -> None:
    result = CliRunner().invoke(cli, ["demo", "--scenario", "no-such-bug"])
    assert result.exit_code == 2
    assert "no-such-bug" in result.output


def test_isrlab_demo_scenario_list_prints_every_name_with_its_title() -> None:
    from isrlab.spec.kafka.scenarios import SCENARIOS

    result = CliRunner().invoke(cli, ["demo", "--scenario", "list"])
    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    assert len(lines) == len(SCENARIOS)
    for line, s in zip(lines, SCENARIOS, strict=True):
        assert line.split()[0] == s.key and line.endswith(s.title)


def test_isrlab_demo_shows_the_kafka7414_exit_then_the_fix_holding() -> None:
    result = CliRunner().invoke(cli, ["demo", "--scenario", "kafka7414"])
    assert result.exit_code == 0, result.output
    bug, _, fix = result.output.partition("== the fixing version, same bounds")
    assert "VIOLATION of NoFatalExit (trace of 10 states)" in bug
    assert "broker_halted = True" in bug
    assert "-p kafka_7414=true" in fix and "OK: every invariant holds" in fix
