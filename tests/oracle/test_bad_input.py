"""Bad traces give one line naming the problem and its line, exit status 2, no traceback."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from isrlab.cli import cli

GOOD = '{"action": "ControllerElectLeader", "args": ["r1"]}'

CASES = {
    "malformed JSON": (GOOD + "\n" + '{"action": "LeaderWrite"', "line 2: malformed JSON"),
    "unknown action": (GOOD + "\n" + '{"action": "ElectLeaderNow"}',
                       "line 2: unknown action 'ElectLeaderNow'"),
    "args without action": ('{"args": ["r1"]}', "line 1: 'args' given without 'action'"),
    "a step observing nothing": (GOOD + "\n\n" + "{}", "line 3: the step observes nothing"),
    "an action of the wrong type": ('{"action": 7}', "line 1: 'action' must be a non-empty "
                                    "string, got a number"),
    "a variable of the wrong type": (GOOD + "\n" + '{"nextLeaderEpoch": "one"}',
                                     "line 2: nextLeaderEpoch must be an integer, got a string"),
    "a nested value of the wrong type": ('{"quorumState": {"leaderEpoch": [0]}}',
                                         "line 1: quorumState.leaderEpoch must be an integer"),
    "hidden of the wrong type": (GOOD + "\n" + '{"action": "LeaderWrite", "hidden": -1}',
                                 "line 2: 'hidden' must be a non-negative integer"),
    "an unknown variable": (GOOD + "\n" + '{"leaderLog": []}',
                            "line 2: unknown variable 'leaderLog'"),
    "a step that is not an object": ("[1, 2]", "line 1: a step must be a JSON object"),
    "Init after the first step": (GOOD + "\n" + '{"action": "Init"}',
                                  "line 2: 'Init' may only be the first step"),
    "an empty file": ("", "line 1: the trace file is empty"),
    "only blank lines": ("\n  \n", "line 1: the trace file is empty"),
    "an ITF document without states": ('{"vars": [], "states": 3}',
                                       "an ITF trace is an object with a 'states' array"),
    "an ITF state that is not an object": ('{"states": [1]}', "ITF state 0: a state must be"),
    "an ITF state with an unknown variable": (
        '{"states": [{"#meta": {"action": "Init"}, "x": 1}]}',
        "ITF state 0: unknown variable 'x'"),
}


def run(tmp_path: Path, text: str, *extra: str) -> tuple[int, str]:
    path = tmp_path / "trace.jsonl"
    path.write_text(text, encoding="utf-8")
    outcome = CliRunner().invoke(
        cli, ["validate", "--model", "tla-kip320", *extra, str(path)]
    )
    return outcome.exit_code, outcome.output


@pytest.mark.parametrize("case", sorted(CASES))
def test_bad_traces_are_one_line_errors_with_exit_status_2(tmp_path: Path, case: str) -> None:
    text, message = CASES[case]
    code, output = run(tmp_path, text)
    assert code == 2, output
    lines = output.strip().splitlines()
    assert len(lines) == 1, output
    assert lines[0].startswith("isrlab: error: ")
    assert message in lines[0]
    assert "Traceback" not in output


def test_a_missing_trace_file_is_a_one_line_error(tmp_path: Path) -> None:
    outcome = CliRunner().invoke(cli, ["validate", "--model", "tla-kip320",
                                       str(tmp_path / "absent.jsonl")])
    assert outcome.exit_code == 2
    assert len(outcome.output.strip().splitlines()) == 1


def test_an_unknown_model_is_a_one_line_error(tmp_path: Path) -> None:
    path = tmp_path / "t.jsonl"
    path.write_text(GOOD + "\n", encoding="utf-8")
    outcome = CliRunner().invoke(cli, ["validate", "--model", "tla-kip999", str(path)])
    assert outcome.exit_code == 2
    assert "unknown model 'tla-kip999'" in outcome.output


def test_a_known_action_with_impossible_arguments_is_a_rejection_not_bad_input(
    tmp_path: Path,
) -> None:
    code, output = run(tmp_path, '{"action": "BecomeLeader", "args": ["r1", "epoch 0"]}')
    assert code == 1, output
    assert "REJECTED at step 1 (line 1)" in output
    assert "ControllerElectLeader(r1)" in output  # the closest states allowed there


def test_a_good_trace_is_accepted_with_a_one_line_summary(tmp_path: Path) -> None:
    text = "\n".join([
        '{"action": "Init", "nextLeaderEpoch": 0}',
        GOOD,
        '{"action": "BecomeLeader", "replicaState": {"r1": {"leader": "r1"}}}',
        '# a comment line',
        '{"label": "LeaderWrite(r1)", "nextRecordId": 1, "replicaLog": {"r1": '
        '[{"id": 0, "epoch": 0}]}}',
        '{"label": "*Follow*(r2 follows r1, epoch 0)", "hidden": 0}',
        '{"quorumState": {"leader": "r1", "isr": ["r1", "r2"]}}',
    ])
    code, output = run(tmp_path, text)
    assert code == 0, output
    assert len(output.strip().splitlines()) == 1
    assert "ACCEPTED: 6 steps" in output
