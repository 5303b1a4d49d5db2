"""The run files of the known bugs: ``scenarios/KEY.toml``, one per scenario of
``isrlab.spec.kafka.scenarios``, written from that declaration and never by hand.

``isrlab check --config scenarios/kip101-1.toml`` is the scenario's buggy run (the
parameters of ``Scenario.params(False)``: its bounds, every ``PINNED`` parameter, the buggy
version and its invariant); the fix is the same file with the fixing version's ``-p`` flags,
which override the file's values (each scenario's fix names the same parameters as its
bug).  ``python -m isrlab.scenario_files`` (re)writes the files and the part of
docs/scenarios.md that shows them; tests/test_scenario_files.py fails while either differs
from what the declaration gives, so an edit of ``SCENARIOS`` or ``PINNED`` shows up there
with this command as its remedy.
"""

from __future__ import annotations

import re
import sys
from functools import cache
from pathlib import Path

from isrlab.spec.kafka.scenarios import PINNED, SCENARIOS, Scenario

FOLDER = "scenarios"
"""The run files' folder, at the repository's root."""
DOC = Path("docs") / "scenarios.md"
BEGIN, END = "<!-- run files: begin -->", "<!-- run files: end -->"
"""The markers around the part of ``DOC`` this module writes."""
SHOWN = "kip101-1"
"""The scenario whose run file docs/scenarios.md shows in full."""
_INT = re.compile(r"-?\d+")


def path_of(scenario: Scenario) -> str:
    """The run file's path from the repository's root (``scenarios/kip101-1.toml``)."""
    return f"{FOLDER}/{scenario.key}.toml"


@cache
def _aliases() -> dict[str, dict[str, str]]:
    """Each ``kafka`` parameter's older spellings -> the choice each stands for."""
    from isrlab.models import registry

    return {p.name: dict(p.aliases) for p in registry().entries["kafka"].params}


def current(assignment: str) -> str:
    """``key=value`` with an older spelling of the value (``fetch_fencing=true``) written as
    the choice it stands for (``fetch_fencing=final``): a run file teaches no deprecated
    value."""
    key, _, value = assignment.partition("=")
    return f"{key}={_aliases().get(key, {}).get(value, value)}"


def fix_flags(scenario: Scenario) -> str:
    """The ``-p`` flags that turn the run file's buggy run into the fixing one."""
    return " ".join(f"-p {current(p)}" for p in scenario.fix)


def _toml_value(text: str) -> str:
    """A ``-p`` value as TOML: a number or a boolean bare, anything else a string."""
    if _INT.fullmatch(text) or text in ("true", "false"):
        return text
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


def _group(title: str, keys: list[str], values: dict[str, str], done: set[str]) -> list[str]:
    """``keys`` (those not yet written) as ``key = value`` lines under a comment."""
    lines = [f"{k} = {_toml_value(values[k])}" for k in dict.fromkeys(keys) if k not in done]
    done.update(keys)
    return [f"# {title}", *lines] if lines else []


def _keys(assignments: tuple[str, ...]) -> list[str]:
    return [p.split("=", 1)[0] for p in assignments]


def run_file(number: int, scenario: Scenario) -> str:
    """The text of scenario ``number``'s run file (numbered as in docs/scenarios.md): the
    values of ``Scenario.params(False)`` (the last of a key wins, as with ``-p``), grouped."""
    values = dict(current(p).split("=", 1) for p in scenario.params(False))
    values.pop("invariants", None)
    done: set[str] = set()
    groups = [
        *_group("the buggy version", _keys(scenario.bug), values, done),
        *_group("the bounds and protocol rules of both runs", _keys(scenario.bounds), values,
                done),
        *_group("every other parameter of PINNED, at its pinned value (Kafka 2.1's)",
                [k for k in PINNED if k in values], values, done),
        *_group("the rest", list(values), values, done),
    ]
    path = path_of(scenario)
    return "\n".join([
        f"# Scenario {number} of docs/scenarios.md: {scenario.title}",
        "#",
        f"# The bug:  isrlab check --config {path}",
        f"#           (the shortest counterexample of {scenario.invariant})",
        f"# The fix:  isrlab check --config {path} {fix_flags(scenario)}",
        "#           (no violation in the same bounds)",
        "#",
        "# Written by `python -m isrlab.scenario_files` from spec/kafka/scenarios.py; edit",
        "# the scenario there, not this file (tests/test_scenario_files.py compares them).",
        "",
        'model = "kafka"',
        f'invariants = ["{scenario.invariant}"]',
        "",
        "[params]",
        *groups,
        "",
    ])


def run_files() -> dict[str, str]:
    """Every scenario's run file: its path -> its text."""
    return {path_of(s): run_file(n, s) for n, s in enumerate(SCENARIOS, 1)}


def doc_section() -> str:
    """The part of docs/scenarios.md between ``BEGIN`` and ``END``: a table of the run
    files with each fix's flags, then scenario ``SHOWN``'s file in full."""
    rows = ["| # | run file (`isrlab check --config FILE`) | the fix: add |", "|---|---|---|"]
    for n, s in enumerate(SCENARIOS, 1):
        rows.append(f"| {n} | `{path_of(s)}` | `{fix_flags(s)}` |")
    shown = next((n, s) for n, s in enumerate(SCENARIOS, 1) if s.key == SHOWN)
    return "\n".join([
        *rows,
        "",
        f"`{path_of(shown[1])}`, for example:",
        "",
        "```toml",
        run_file(*shown).rstrip("\n"),
        "```",
    ])


def with_doc_section(text: str) -> str:
    """``text`` (docs/scenarios.md) with its run-file part replaced by ``doc_section()``;
    ``ValueError`` when the markers are missing."""
    start, end = text.index(BEGIN) + len(BEGIN), text.index(END)
    return text[:start] + "\n" + doc_section() + "\n" + text[end:]


def write(root: Path) -> list[Path]:
    """Write every run file under ``root`` and the doc's part; the paths that changed."""
    changed = []
    folder = root / FOLDER
    folder.mkdir(exist_ok=True)
    wanted = run_files()
    for stale in sorted(folder.glob("*.toml")):
        if f"{FOLDER}/{stale.name}" not in wanted:
            stale.unlink()
            changed.append(stale)
    for rel, text in [*wanted.items(), (str(DOC), None)]:
        path = root / rel
        old = path.read_text(encoding="utf-8") if path.exists() else None
        new = text if text is not None else with_doc_section(old or "")
        if new != old:
            path.write_text(new, encoding="utf-8")
            changed.append(path)
    return changed


def main() -> int:
    """Write the run files and the doc's part in the repository this module sits in."""
    root = Path(__file__).resolve().parent.parent
    if not (root / "spec" / "kafka" / "scenarios.py").is_file() or not (root / DOC).is_file():
        print(f"isrlab: error: {root} is not an isrlab checkout (the run files live in the "
              "repository)", file=sys.stderr)
        return 2
    for path in write(root):
        print(f"wrote {path.relative_to(root)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
