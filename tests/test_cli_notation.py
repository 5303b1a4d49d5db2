"""One notation for states (issue 34, finding 8): what ``isrlab check`` prints is what
docs/glossary.md quotes and what the explorer's state table shows."""

from __future__ import annotations

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
    "committed = {'m0': 0}",
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
