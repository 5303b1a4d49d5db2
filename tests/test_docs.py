"""The docs stand alone and stay true: nothing cites a file outside the repository or a
machine's path, the README lists every ``--scenario`` and points to the docs, docs/conformance.md
carries every TLC figure the conformance tests use, the default ``kafka`` space's counts are
written in one doc and match their pin, docs/architecture.md states the layers
tests/test_layers.py enforces, and the reference docs tell what is, not past work."""

from __future__ import annotations

import importlib
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


def _docs() -> list[Path]:
    return [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]


def _pinned_default_space() -> tuple[int, int, int]:
    """ZooKeeper mode's default ``kafka`` space's distinct / generated / diameter as the
    golden test pins them (``PINNED_SPACES["zookeeper-defaults"]``), wherever under tests/
    that test lives."""
    for path in sorted((ROOT / "tests").rglob("test_*.py")):
        text = path.read_text(encoding="utf-8")
        if "PINNED_SPACES" in text and "def test_the_zookeeper_mode_spaces_are_pinned" in text:
            module = ".".join(path.relative_to(ROOT).with_suffix("").parts)
            pinned = importlib.import_module(module).PINNED_SPACES
            figures = tuple(int(n) for n in pinned["zookeeper-defaults"][1])
            assert len(figures) == 3
            return figures[0], figures[1], figures[2]
    raise AssertionError("no test pins ZooKeeper mode's default kafka space")


def test_the_default_kafka_spaces_counts_are_written_in_one_doc_which_matches_the_pin() -> None:
    # Each figure written once: every other doc points to docs/kafka-model.md.  The space is
    # ZooKeeper mode's defaults (-p controller=zookeeper).
    distinct, generated, diameter = _pinned_default_space()
    holding = [path.name for path in _docs()
               if f"{distinct:,}" in path.read_text(encoding="utf-8")
               or f"{generated:,}" in path.read_text(encoding="utf-8")]
    assert holding == ["kafka-model.md"]
    text = " ".join((ROOT / "docs" / "kafka-model.md").read_text(encoding="utf-8").split())
    assert f"{distinct:,} distinct / {generated:,} generated, diameter {diameter}" in text


def test_docs_architecture_states_the_layers_tests_test_layers_enforces() -> None:
    from tests.test_layers import ALLOWED, APP, LAYERS

    text = (ROOT / "docs" / "architecture.md").read_text(encoding="utf-8")
    section = text.split("## The layers", 1)[1].split("\n## ", 1)[0]
    rows = [line.split("|")[1:-1] for line in section.splitlines()
            if line.startswith("| ") and not line.startswith("| layer ")]
    stated = {cells[0].strip(): {w.strip() for w in cells[-1].split(",")} for cells in rows}
    assert APP == "application"
    assert stated == {layer: set(ALLOWED[layer]) for layer in LAYERS}


def test_the_readme_is_a_front_door_pointing_to_the_docs() -> None:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    for command in ("./run demo", "./run test"):
        assert f"\n{command} " in text
    for doc in ("docs/architecture.md", "docs/testing.md"):
        assert f"]({doc})" in text
    # the test-timing history lives in docs/testing.md, not here
    assert not re.search(r"\b\d{1,2}:\d\d\b", text), "a wall-clock time in the README"


HISTORY = re.compile(r"\b([Ss]ince|[Bb]efore|[Uu]ntil) (commit|issue)\b|\bused to\b"
                     r"|\(issues? \d|\bpre-issue\b")
"""Phrases that tell the history of past work instead of what is."""

HISTORY_KEPT = {"testing.md": "the suite's and the models' measurements, kept with their commits"}


def test_reference_docs_describe_what_is_not_the_history_of_past_work() -> None:
    found = [f"{path.name}: {m.group(0)!r}" for path in _docs()
             if path.name not in HISTORY_KEPT
             for m in HISTORY.finditer(path.read_text(encoding="utf-8"))]
    assert found == []
