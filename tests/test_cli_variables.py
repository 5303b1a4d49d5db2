"""``isrlab models --vars MODEL``: the variables a user's invariant may read, each with its
meaning (issue 34, item 2)."""

from __future__ import annotations

import re
from typing import Any

import pytest
from click.testing import CliRunner

from isrlab.checker.model import Model
from isrlab.cli import cli
from isrlab.models import registry
from isrlab.variables import access, variable_rows

ZK = "controller=zookeeper"
KAFKA_PARAMS = [
    [], [ZK], [ZK, "metadata=true", "hw_checkpoint=true", "consumers=true"],
    [ZK, "crashes=unclean", "fetch=split"], [ZK, "unavailable_leader=skip", "kafka_7414=false"],
    [ZK, "unavailable_leader=fetcher", "elr=true", "crashes=unclean", "min_isr=2"],
    ["crashes=unclean", "min_isr=2", "empty_disk=true"],
]
"""The KRaft defaults, ZooKeeper mode's defaults and variants, and a KRaft variant."""


def _model(name: str, params: list[str]) -> Model[Any]:
    entry = registry().entries[name]
    return entry.build(registry().parse_params(entry, params).unwrap())


@pytest.mark.parametrize("name", sorted(registry().names()))
def test_every_variable_of_every_model_has_a_meaning(name: str) -> None:
    rows = variable_rows(name, _model(name, []))
    assert rows
    assert [path for path, _, meaning in rows if not meaning] == []


@pytest.mark.parametrize("params", KAFKA_PARAMS, ids=lambda p: ",".join(p) or "defaults")
def test_every_variable_the_kafka_parameters_add_has_a_meaning(params: list[str]) -> None:
    rows = variable_rows("kafka", _model("kafka", params))
    assert [path for path, _, meaning in rows if not meaning] == []


def test_the_listed_access_reads_the_variable() -> None:
    model = _model("kafka", [ZK, "metadata=true"])
    state = next(iter(model.init_states()))
    v = model.variables(state)
    for path, _, _ in variable_rows("kafka", model):
        expression = access(path)
        if expression.startswith('v["broker0"]') and path.split(".")[-1] not in v["broker0"]:
            continue  # a field only some states have (isr: while it leads)
        eval(expression, {"v": v})  # the printed expression is valid Python on v


def test_models_vars_prints_paths_examples_and_meanings() -> None:
    result = CliRunner().invoke(cli, ["models", "--vars", "tla-kip320", "-p", "replicas=3"])
    assert result.exit_code == 0, result.output
    out = result.stdout
    assert 'v["replicaState"]["r1"]' in out and "high watermark" in out
    assert 'v["quorumState"]["leader"]' in out
    result = CliRunner().invoke(cli, ["models", "--vars", "kafka"])
    assert re.search(r'^  v\["broker0"\]\["hw"\]  e\.g\. \d+$', result.stdout, re.MULTILINE)
    assert "high watermark" in result.stdout


def test_models_vars_of_an_unknown_model_is_one_line() -> None:
    result = CliRunner().invoke(cli, ["models", "--vars", "no-such-model"])
    assert result.exit_code == 2 and result.stderr.count("\n") == 1


# -- isrlab models: short parameter texts, every model's properties (issue 34, finding 8) -----

def test_models_lists_every_models_invariants_and_short_parameter_texts() -> None:
    result = CliRunner().invoke(cli, ["models"])
    assert result.exit_code == 0, result.output
    out = result.stdout
    blocks = re.split(r"^(?=\S)", out, flags=re.MULTILINE)
    kafka = next(b for b in blocks if b.startswith("kafka:"))
    invariants = re.search(r"invariants: (.*?)(?=\n    \S|\Z)", kafka, re.DOTALL)
    assert invariants is not None
    built = _model("kafka", [])
    assert [n.strip() for n in invariants.group(1).replace("\n", " ").split(",")] == [
        p.name for p in built.invariants()]
    for line in out.splitlines():
        if line.startswith("    -p "):
            assert len(line) <= 160, line  # a parameter's text: one clause, not ten lines


def test_models_name_prints_the_full_texts() -> None:
    result = CliRunner().invoke(cli, ["models", "kafka"])
    assert result.exit_code == 0, result.output
    entry = registry().entries["kafka"]
    truncation = next(p for p in entry.params if p.name == "truncation")
    assert truncation.doc in result.stdout
    assert "NoCommittedRecordLost: " in result.stdout
    bad = CliRunner().invoke(cli, ["models", "nosuch"])
    assert bad.exit_code == 2 and bad.stderr.count("\n") == 1


def test_kraft_variables_say_what_each_entry_is_and_that_the_model_renumbers_them() -> None:
    """The KRaft default's trace shows broker_epoch 1 -> 0 and metadata_applied 2 -> 0 at a
    HandleCommit (the published prefix folded away, epochs renumbered): the meanings say
    so, and each entry of the controller has its own (they were one text, nine times)."""
    rows = {path: meaning for path, _, meaning in variable_rows("kafka", _model("kafka", []))}
    controller = [meaning for path, meaning in rows.items() if path.startswith("controller.")]
    assert len(controller) == len(set(controller)) > 5
    assert "drops" in rows["brokerN.metadata_applied"]
    assert "rank" in rows["brokerN.broker_epoch"] and "relative" in rows["brokerN.partition_epoch"]
