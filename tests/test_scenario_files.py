"""The scenarios' run files (issue 34, item 4): ``scenarios/KEY.toml`` and the part of
docs/scenarios.md that shows them are what ``isrlab.scenario_files`` writes from the one
declaration, ``isrlab.spec.kafka.scenarios``; each file, run with ``isrlab check
--config``, is the scenario's buggy run, and with its fix's flags the fixing run."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from isrlab import scenario_files
from isrlab.cli import cli
from isrlab.spec.kafka.scenarios import BY_KEY, SCENARIOS, Scenario

ROOT = Path(__file__).resolve().parent.parent
REMEDY = "run `python -m isrlab.scenario_files` to rewrite it from spec/kafka/scenarios.py"


def test_each_run_file_is_what_the_declaration_gives() -> None:
    wanted = scenario_files.run_files()
    on_disk = {f"scenarios/{p.name}": p.read_text(encoding="utf-8")
               for p in sorted((ROOT / "scenarios").glob("*.toml"))}
    assert sorted(on_disk) == sorted(wanted), REMEDY
    for path, text in wanted.items():
        assert on_disk[path] == text, f"{path} differs: {REMEDY}"


def test_docs_scenarios_shows_the_run_files() -> None:
    text = (ROOT / "docs" / "scenarios.md").read_text(encoding="utf-8")
    assert scenario_files.with_doc_section(text) == text, f"docs/scenarios.md: {REMEDY}"
    for s in SCENARIOS:
        assert f"`{scenario_files.path_of(s)}`" in text


def test_write_rewrites_a_stale_file_and_removes_an_unknown_one(tmp_path: Path) -> None:
    (tmp_path / "docs").mkdir()
    doc = f"intro\n{scenario_files.BEGIN}\nold\n{scenario_files.END}\nrest\n"
    (tmp_path / "docs" / "scenarios.md").write_text(doc, encoding="utf-8")
    (tmp_path / "scenarios").mkdir()
    (tmp_path / "scenarios" / "gone.toml").write_text("x = 1\n", encoding="utf-8")
    changed = scenario_files.write(tmp_path)
    assert tmp_path / "scenarios" / "gone.toml" in changed
    assert len(list((tmp_path / "scenarios").glob("*.toml"))) == len(SCENARIOS)
    new_doc = (tmp_path / "docs" / "scenarios.md").read_text(encoding="utf-8")
    assert new_doc.startswith("intro\n") and new_doc.endswith("rest\n") and "old" not in new_doc
    assert scenario_files.write(tmp_path) == []  # a second run changes nothing


def test_each_fix_names_the_parameters_of_its_bug() -> None:
    # the fix is the run file plus the fix's -p flags: every buggy value must be overridden
    for s in SCENARIOS:
        assert {p.split("=")[0] for p in s.bug} == {p.split("=")[0] for p in s.fix}, s.key


def _params(*args: str, tmp_path: Path) -> object:
    """The parameters a one-level check reports (its JSON report's ``params``)."""
    out = tmp_path / "r.json"
    out.unlink(missing_ok=True)
    result = CliRunner().invoke(cli, ["check", *args, "--max-depth", "1", "--no-progress",
                                      "--json", str(out)])
    assert result.exit_code in (0, 1), (result.stdout, result.stderr)
    return json.loads(out.read_text(encoding="utf-8"))["params"]


@pytest.mark.parametrize("fixed", [False, True], ids=["bug", "fix"])
@pytest.mark.parametrize("scenario", SCENARIOS, ids=[s.key for s in SCENARIOS])
def test_a_run_file_is_the_scenarios_command(scenario: Scenario, fixed: bool,
                                             tmp_path: Path) -> None:
    path = ROOT / scenario_files.path_of(scenario)
    flags = [w for p in scenario.fix for w in ("-p", p)] if fixed else []
    from_file = _params("--config", str(path), *flags, tmp_path=tmp_path)
    command = [w for p in scenario.params(fixed) for w in ("-p", p)]
    assert from_file == _params("--model", "kafka", *command, tmp_path=tmp_path)


def test_the_acks1_run_file_finds_the_bug_and_its_fix_holds() -> None:
    path = str(ROOT / scenario_files.path_of(BY_KEY["acks1"]))
    bug = CliRunner().invoke(cli, ["check", "--config", path, "--no-progress"])
    assert bug.exit_code == 1, bug.stderr
    assert "VIOLATION of AcknowledgedWritesDurable (trace of 5 states)" in bug.stdout
    fix = CliRunner().invoke(cli, ["check", "--config", path, "-p", "acks=all",
                                   "--no-progress"])
    assert fix.exit_code == 0, fix.stderr
    assert "OK: every invariant holds" in fix.stdout


def test_no_run_file_teaches_an_older_spelling() -> None:
    # fetch_fencing=true/false are older spellings of final/none (the parameter's aliases)
    import tomllib

    from isrlab.models import registry

    older = {p.name: {a for a, _ in p.aliases} for p in registry().entries["kafka"].params}
    for s in SCENARIOS:
        path = ROOT / scenario_files.path_of(s)
        params = tomllib.loads(path.read_text(encoding="utf-8"))["params"]
        for key, value in params.items():
            text = str(value).lower() if isinstance(value, bool) else str(value)
            assert text not in older.get(key, set()), f"{path.name}: {key} = {value}"
        assert all(p.split("=")[1] not in older.get(p.split("=")[0], set())
                   for p in scenario_files.fix_flags(s).replace("-p ", "").split())
