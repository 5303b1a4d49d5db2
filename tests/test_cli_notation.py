"""One notation for states (issue 34, finding 8): what ``isrlab check`` prints is what
docs/glossary.md quotes and what the explorer's state table shows."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from click.testing import CliRunner

from isrlab.checker.trace import value_text
from isrlab.cli import cli
from isrlab.explorer import flatten
from isrlab.spec.kafka.scenarios import BY_KEY

ROOT = Path(__file__).resolve().parents[1]
GLOSSARY = (ROOT / "docs" / "glossary.md").read_text(encoding="utf-8")

QUOTED = [
    "State 1: Init",
    "  broker0['log'] = <<'m0@0'>>",
    "committed['m0'] = 0",
    "LeaderAndIsr(to=1,cepoch=0,leader=1,epoch=1,isr=(1,))",
    "'leader': None",
    "{'id': 0, 'epoch': 2}",
    "'remote_leo': {1: -1}",
    "m0@b0",
]
"""docs/glossary.md's quotations of real output (each also in the glossary, verbatim)."""


@pytest.fixture(scope="module")
def real_output() -> str:
    args = [a for p in BY_KEY["kip101-1"].params(fixed=False) for a in ("-p", p)]
    runs = [["check", "--model", "kafka", *args], ["check", "--model", "tla-kip101"],
            ["check", "--model", "kafka", "-p", "controller=zookeeper", "-p", "truncation=hw"]]
    outputs = []
    for run in runs:
        result = CliRunner().invoke(cli, [*run, "--no-progress"])
        assert result.exit_code == 1, result.output
        outputs.append(result.stdout)
    return "\n".join(outputs)


@pytest.mark.parametrize("quote", QUOTED)
def test_the_glossarys_quotations_are_what_check_prints(real_output: str, quote: str) -> None:
    assert quote in GLOSSARY
    assert quote in real_output


@pytest.mark.parametrize(("value", "written"), [
    ((0, 1), "<<0, 1>>"), ([0, 1], "[0, 1]"), (frozenset({"r2", "r1"}), "{'r1', 'r2'}"),
    ({"m0": 0}, "{'m0': 0}"), (None, "None"), ("m0@0", "'m0@0'"),
])
def test_the_glossarys_notation_rows_are_the_printers(value: object, written: str) -> None:
    assert value_text(value) == written
    kind = re.escape(written[:2] if written.startswith("<<") else written[:1])
    assert written in GLOSSARY or re.search(rf"`{kind}", GLOSSARY)


def test_the_explorer_table_writes_values_as_the_cli_does(real_output: str) -> None:
    rows = dict(flatten({"broker0": {"log": ("m0@0",), "isr": (0, 1)}, "produced": 1,
                         "committed": {"m0": 0}}))
    assert rows == {"broker0['log']": "<<'m0@0'>>", "broker0['isr']": "<<0, 1>>",
                    "produced": "1", "committed['m0']": "0"}
    assert "  broker0['log'] = <<'m0@0'>>" in real_output  # the CLI's line for that row


def test_an_empty_set_is_not_written_as_an_empty_dictionary(real_output: str) -> None:
    """``{}`` is an empty dictionary (``committed = {}``); the empty set is ``set()``, as
    Python writes it, in the text traces, the explorer's table and the charts' notes."""
    from isrlab.checker.chart import plain_text

    assert value_text({}) == "{}"
    assert value_text(frozenset()) == "set()" == plain_text(frozenset())
    assert value_text({"isr": frozenset()}) == "{'isr': set()}"
    rows = dict(flatten({"replicaState": {"r1": {"isr": frozenset()}}, "committed": {}}))
    assert rows == {"replicaState['r1']": "{'isr': set()}", "committed": "{}"}
    # tla-kip101's Init: no replica has an ISR yet (the TLA+ spec's {}), nothing committed
    assert "'leader': None, 'isr': set()}" in real_output
    assert "'isr': {}" not in real_output
    assert "`set()`" in GLOSSARY


# -- validate's mismatch lines and the differential test's divergence ------------------------

def test_validate_writes_its_mismatches_in_the_traces_notation(tmp_path: Path) -> None:
    """The JSON the user wrote (``[0]``) is written as the model's value is: a tuple
    ``<<0>>`` beside the model's ``<<0, 1>>``, not ``[0]`` beside ``[0, 1]``."""
    trace = tmp_path / "t.jsonl"
    trace.write_text('{"zk": {"isr": [0]}, "broker0": {"log": ["m0@0"]}}\n', encoding="utf-8")
    result = CliRunner().invoke(cli, ["validate", "--model", "kafka",
                                      "-p", "controller=zookeeper", str(trace)])
    assert result.exit_code == 1, result.output
    assert "       zk.isr: observed <<0>>, model has <<0, 1>>" in result.stdout
    assert "       broker0.log: observed <<'m0@0'>>, model has <<>>" in result.stdout
    assert "observed [0]" not in result.stdout


def test_validate_writes_the_observed_line_in_the_traces_notation(tmp_path: Path) -> None:
    """The ``observed:`` line above the mismatches writes the values as they do: the tuple
    ``<<0>>`` (in the notation of the closest candidate's state), not the JSON ``[0]``;
    the JSON report's ``observed`` is the same line."""
    trace = tmp_path / "t.jsonl"
    trace.write_text('{"zk": {"isr": [0]}, "broker0": {"log": ["m0@0"]}}\n', encoding="utf-8")
    args = ["validate", "--model", "kafka", "-p", "controller=zookeeper", str(trace)]
    result = CliRunner().invoke(cli, args)
    assert result.exit_code == 1, result.output
    observed = [line for line in result.stdout.splitlines() if line.startswith("observed: ")]
    assert observed == ["observed: zk = {'isr': <<0>>}, broker0 = {'log': <<'m0@0'>>}"]
    report = CliRunner().invoke(cli, [*args, "--json"])
    assert json.loads(report.stdout)["rejected"]["observed"] == observed[0][len("observed: "):]


@pytest.mark.parametrize(("observed", "actual", "written"), [
    ([2, 0], frozenset({0, 1}), "x: observed {0, 2}, model has {0, 1}"),
    ([], frozenset({"r1"}), "x: observed set(), model has {'r1'}"),
    ([[0, 1]], ((0, 2),), "x: observed <<<<0, 1>>>>, model has <<<<0, 2>>>>"),
    ([], [{"id": 0, "epoch": 0}], "x: observed [], model has [{'id': 0, 'epoch': 0}]"),
    ({"1": 0}, {1: -1}, "x: observed {1: 0}, model has {1: -1}"),
    ([1], 1, "x: observed [1], model has 1"),
    ("a", "(absent)", "x: observed 'a', model has '(absent)'"),
])
def test_a_mismatch_writes_both_values_in_the_models_notation(
    observed: object, actual: object, written: str
) -> None:
    from isrlab.checker.validate import Mismatch

    assert Mismatch("x", observed, actual).text() == written


def test_a_value_the_model_state_lacks_is_absent_not_a_string() -> None:
    from isrlab.checker.validate import mismatches

    assert [m.text() for m in mismatches({"x": [1], "y": {"z": 1}}, {"y": {}})] == [
        "x: observed [1], model has (absent)", "y.z: observed 1, model has (absent)"]


def test_a_divergence_writes_values_as_traces_do() -> None:
    from isrlab.checker.differential import Divergence
    from isrlab.checker.validate import Mismatch

    text = Divergence(3, "Fetch(1)", (Mismatch("isr", (0,), frozenset({0, 1})),), ()).text()
    assert text.splitlines()[-1] == "  isr: implementation has <<0>>, model has {0, 1}"
