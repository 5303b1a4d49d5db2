"""The docs' quoted outputs are the tool's real output (issue 34, what to build 6):
every block of docs/oracle.md that starts with ``$ isrlab ...`` is run as written and its
lines compared with what the command prints; so is the buggy run of every scenario of
docs/scenarios.md (its counterexample as the checker prints it), but the two runs of
millions of states (``VERY_HEAVY``, only with ``ISRLAB_VERY_HEAVY=1``).

In a quoted block a line ``...`` (alone, indented or not) stands for any number of lines
the doc leaves out, a line ending in ``...`` for any line that starts with the text before
it, and a time (``0.00 s``) for any time.  The inputs the commands name are the doc's own
example (``trace.jsonl``: the JSON block before the command), its rejected variant
(``bad.jsonl``: the example's first two lines and the line the quoted output names) and
the fixtures under tests/fixtures/oracle/ (``isr-flap.log`` is the real log of
``isr-flap-hw-above-removed-leo``).
"""

from __future__ import annotations

import os
import re
import shlex
from pathlib import Path

import pytest
from click.testing import CliRunner

from isrlab.cli import cli
from tests.spec.kafka.test_scenarios import VERY_HEAVY  # runs of millions of states

ROOT = Path(__file__).resolve().parent.parent
DOC = ROOT / "docs" / "oracle.md"
FENCE = re.compile(r"^```[a-z]*\n(.*?)^```", re.M | re.S)
TIME = re.compile(r"\d+(?:\.\d+)? s\b|\([\d,]+ generated/s\)")


def _blocks(doc: Path = DOC) -> list[str]:
    return [m.group(1) for m in FENCE.finditer(doc.read_text(encoding="utf-8"))]


def _quoted() -> list[tuple[str, list[str]]]:
    """Each ``$ isrlab`` block: its command and its quoted lines."""
    out = []
    for block in _blocks():
        lines = block.rstrip("\n").split("\n")
        if lines[0].startswith("$ isrlab "):
            out.append((lines[0][2:], lines[1:]))
    return out


def _inputs(folder: Path) -> None:
    """The files the doc's commands name, in ``folder`` (the commands' directory)."""
    example = next(b for b in _blocks() if b.startswith('{"action": "Init"'))
    (folder / "trace.jsonl").write_text(example, encoding="utf-8")
    rejected = next(q for c, q in _quoted() if "bad.jsonl" in c)
    line3 = next(x for x in rejected if x.startswith("line 3: ")).removeprefix("line 3: ")
    first_two = "".join(example.splitlines(keepends=True)[:2])
    (folder / "bad.jsonl").write_text(first_two + line3 + "\n", encoding="utf-8")
    real = ROOT / "tests" / "fixtures" / "oracle" / "real" / "isr-flap-hw-above-removed-leo"
    (folder / "isr-flap.log").write_bytes((real / "broker-1.log").read_bytes())
    (folder / "tests").symlink_to(ROOT / "tests")


def matches(quoted: list[str], printed: list[str]) -> str | None:
    """``None`` when ``printed`` is what ``quoted`` shows (with its elisions), else the
    first quoted line that is not there."""
    at = 0
    skipping = False
    for want in quoted:
        if want.strip() == "...":
            skipping = True
            continue
        pattern = TIME.sub("TIME", want)
        prefix = pattern.removesuffix("...") if pattern.endswith("...") else None
        while at < len(printed):
            got = TIME.sub("TIME", printed[at])
            at += 1
            if got == pattern or (prefix is not None and got.startswith(prefix)):
                break
            if not skipping:
                return want
        else:
            return want
        skipping = False
    return None


@pytest.mark.parametrize(("command", "quoted"), _quoted(), ids=[c for c, _ in _quoted()])
def test_a_quoted_output_of_docs_oracle_md_is_what_the_command_prints(
    command: str, quoted: list[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
) -> None:
    _inputs(tmp_path)
    monkeypatch.chdir(tmp_path)
    result = CliRunner().invoke(cli, shlex.split(command)[1:])
    printed = result.output.splitlines()
    missing = matches(quoted, printed)
    assert missing is None, f"{command}\nquoted line not printed: {missing}\n" + result.output


def test_the_doc_quotes_five_commands() -> None:
    assert len(_quoted()) == 5  # a block whose first line changed would escape the test


def test_the_comparison_sees_a_changed_figure() -> None:
    assert matches(["a", "...", "c 3 of 82"], ["a", "b", "c 3 of 147"]) == "c 3 of 82"
    assert matches(["a", "...", "c"], ["a", "b", "b", "c"]) is None
    assert matches(["a (0.00 s)", "rule x: ..."], ["a (1.25 s)", "rule x: y z"]) is None
    assert matches(["3 distinct, 0.0 s (26,330 generated/s)"],
                   ["3 distinct, 0.1 s (9,603 generated/s)"]) is None
    assert matches(["a", "c"], ["a", "b", "c"]) == "c"  # no elision: no line skipped


def _segments(doc: Path) -> dict[str, list[str]]:
    """Each ``$ isrlab`` command of ``doc``'s blocks -> the lines quoted under it (up to the
    next command or the block's end)."""
    out: dict[str, list[str]] = {}
    for block in _blocks(doc):
        command = None
        for line in block.rstrip("\n").split("\n"):
            if line.startswith("$ isrlab "):
                command = line[2:]
                out[command] = []
            elif command is not None:
                out[command].append(line)
    return out


def _bug_runs() -> list[object]:
    """The scenarios whose section quotes the buggy run's output (the KRaft ones quote
    their two commands only)."""
    from isrlab.spec.kafka.scenarios import SCENARIOS

    quoted = _segments(ROOT / "docs" / "scenarios.md")
    heavy = pytest.mark.skipif(not os.environ.get("ISRLAB_VERY_HEAVY"),
                               reason="millions of states: ISRLAB_VERY_HEAVY=1 runs it")
    return [pytest.param(s.command(False), id=s.key,
                         marks=(pytest.mark.slow, heavy) if s.key in VERY_HEAVY else ())
            for s in SCENARIOS if quoted.get(s.command(False))]




@pytest.mark.parametrize("command", _bug_runs())
def test_a_scenarios_quoted_counterexample_is_what_check_prints(command: str) -> None:
    quoted = _segments(ROOT / "docs" / "scenarios.md")[command]
    result = CliRunner().invoke(cli, [*shlex.split(command)[1:], "--no-progress"])
    assert result.exit_code == 1, result.output
    missing = matches(quoted, result.stdout.splitlines())
    assert missing is None, f"{command}\nquoted line not printed: {missing}\n" + result.stdout


def test_most_scenarios_quote_their_counterexample() -> None:
    assert len(_bug_runs()) >= 13  # a command whose spelling changed would escape the test
