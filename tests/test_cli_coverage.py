"""Action coverage at the end of every check, as TLC prints it (issue 34, item 5): each
action's generated and new states, and the actions a model declares but never enabled."""

from __future__ import annotations

import json
import re
from pathlib import Path

from click.testing import CliRunner

from isrlab.cli import cli

_LINE = re.compile(r"^  (\w+) +([\d,]+) +([\d,]+)( +never enabled)?$")


def _coverage(stdout: str) -> dict[str, tuple[int, int, bool]]:
    lines = stdout.splitlines()
    start = lines.index("coverage (action: generated states, new states):")
    out = {}
    for line in lines[start + 1:]:
        match = _LINE.match(line)
        assert match, line
        out[match.group(1)] = (int(match.group(2).replace(",", "")),
                               int(match.group(3).replace(",", "")), bool(match.group(4)))
    return out


def test_check_prints_each_actions_generated_and_new_states(tmp_path: Path) -> None:
    report = tmp_path / "r.json"
    result = CliRunner().invoke(cli, ["check", "--model", "tla-kip101", "--no-progress",
                                      "--json", str(report)])
    assert result.exit_code == 1, result.output
    printed = _coverage(result.stdout)
    written = json.loads(report.read_text())
    assert printed == {c["action"]: (c["generated"], c["distinct"], False)
                       for c in written["coverage"]}
    # every generated state comes from one action, every distinct state is new from one
    assert sum(g for g, _, _ in printed.values()) == written["generated_states"]
    assert sum(n for _, n, _ in printed.values()) == written["distinct_states"]
    # the module's Next, in its order (Init first)
    assert list(printed)[:3] == ["Init", "ControllerElectLeader", "ControllerShrinkIsr"]


_TWO_ACTIONS = '''
from isrlab.api import ModelEntry, Property


class UpOnly:
    """Counts up to 3; declares a Down action its guard never enables."""

    name = "up-only"

    def action_names(self):
        return ("Up", "Down")

    def init_states(self):
        return [0]

    def next_states(self, state):
        return [("Up", state + 1)] if state < 3 else []

    def invariants(self):
        return [Property("Small", lambda s: s <= 3, "")]

    def sometimes(self):
        return []

    def within_boundary(self, state):
        return True

    def canonical(self, state):
        return state

    def encode(self, state):
        return bytes([state])

    def decode(self, data):
        return data[0]

    def variables(self, state):
        return {"x": state}


UP_ONLY = ModelEntry("up-only", "counts up", (), lambda params: UpOnly())
'''


def test_an_action_never_enabled_is_flagged(tmp_path: Path) -> None:
    model = tmp_path / "up_only.py"
    model.write_text(_TWO_ACTIONS, encoding="utf-8")
    result = CliRunner().invoke(cli, ["check", "--model", f"{model}:UP_ONLY",
                                      "--no-progress"])
    assert result.exit_code == 0, result.output
    assert _coverage(result.stdout) == {"Init": (1, 1, False), "Up": (3, 3, False),
                                        "Down": (0, 0, True)}
