"""The docs stand alone (issue 18, item 7): nothing cites a file outside the repository or
a machine's path, the README lists every ``--scenario``, and docs/conformance.md carries
every TLC figure the conformance tests use."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest

from isrlab.spec.kafka.scenarios import SCENARIOS, Scenario, readme_table

ROOT = Path(__file__).resolve().parents[1]

# Spelled in pieces so that this file does not match itself.
FORBIDDEN = [
    "the " + "seeds", "seeds" + "'", "shared" + "/reference", "CONFORMANCE" + ".md",
    "SCENARIOS" + ".md", "PROTOCOL" + ".md", "/wo" + "rk/", "/ho" + "me/", "/Us" + "ers/",
]
"""Matched case-sensitively (the lower-case docs/conformance.md is fine), except the first
two, matched in any case."""


def _tracked_text_files() -> list[Path]:
    listed = subprocess.run(["git", "ls-files"], cwd=ROOT, capture_output=True, text=True,
                            check=True).stdout.split()
    wanted = (".py", ".md", ".toml", ".txt", ".cfg", ".sh", "run")
    return [ROOT / name for name in listed if name.endswith(wanted)]


def test_no_file_cites_a_path_or_a_document_outside_the_repository() -> None:
    files = _tracked_text_files()
    assert len(files) > 50
    hits = []
    for path in files:
        text = path.read_text(encoding="utf-8", errors="replace")
        for word in FORBIDDEN:
            found = word.lower() in text.lower() if "seeds" in word else word in text
            if found:
                hits.append(f"{path.relative_to(ROOT)}: {word!r}")
        if re.search(r"\[0\d\d(, ?0\d\d)*\]", text):
            hits.append(f"{path.relative_to(ROOT)}: a [00x] reference")
    assert hits == []


@pytest.mark.parametrize("key", [s.key for s in SCENARIOS])
def test_the_readme_lists_every_scenario(key: str) -> None:
    assert f"| `{key}`" in (ROOT / "README.md").read_text(encoding="utf-8")


def test_the_readmes_scenario_table_is_spec_kafka_scenarios_own() -> None:
    # Every --scenario name with its title, in SCENARIOS' order, nothing else: the README
    # cannot drift from isrlab.spec.kafka.scenarios (regenerate it with readme_table()).
    assert readme_table() in (ROOT / "README.md").read_text(encoding="utf-8")


@pytest.mark.parametrize("scenario", SCENARIOS, ids=lambda s: s.key)
def test_docs_scenarios_shows_both_commands_of_every_scenario(scenario: object) -> None:
    assert isinstance(scenario, Scenario)
    text = (ROOT / "docs" / "scenarios.md").read_text(encoding="utf-8")
    for fixed in (False, True):
        assert f"$ {scenario.command(fixed)}\n" in text


def test_every_tlc_count_of_the_conformance_tests_is_in_docs_conformance() -> None:
    tests = (ROOT / "tests" / "spec" / "test_tla_conformance.py").read_text(encoding="utf-8")
    doc = (ROOT / "docs" / "conformance.md").read_text(encoding="utf-8")
    rows = [line for line in tests.splitlines() if line.strip().startswith('("tla-')]
    counts = {int(n.replace("_", "")) for row in rows
              for n in re.findall(r"\b\d{1,3}(?:_\d{3})+\b", row)}
    assert len(counts) > 20
    assert sorted(c for c in counts if f"{c:,}" not in doc) == []


def test_every_doc_the_docs_link_exists() -> None:
    for path in [ROOT / "README.md", *(ROOT / "docs").glob("*.md")]:
        text = path.read_text(encoding="utf-8")
        for target in re.findall(r"\]\(([^)#]+\.md)\)", text):
            assert (path.parent / target).exists(), f"{path.name} links {target}"
        for target in re.findall(r"\bdocs/[a-z0-9-]+\.md\b", text):
            assert (ROOT / target).exists(), f"{path.name} names {target}"
