"""The ``kafka`` model compiled by mypyc (setup.py) against its Python source, the reference.

Each search runs twice: here, on the compiled modules, and in a child process with
``ISRLAB_PURE_PYTHON=1``, on the ``.py`` files; the two reports (counts, diameter, per-action
coverage, witnesses, every violated invariant with its shortest trace as the model's named
variables, each invariant's text) must be identical.  Also: which build
``isrlab.spec._compiled`` picks, on fabricated directories.
"""

from __future__ import annotations

import ast
import importlib.machinery
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from isrlab.checker.bfs import CheckOptions, explore
from isrlab.checker.fingerprint import PURE_PYTHON_ENV
from isrlab.spec import _compiled
from isrlab.spec.kafka import model as kafka_model
from isrlab.spec.kafka.config import KafkaConfig
from isrlab.spec.kafka.model import KafkaModel
from tests import compiled_groups

ROOT = Path(__file__).resolve().parents[3]

CONFIGS: dict[str, dict[str, Any]] = {
    "default": {},
    "zookeeper, 2.1": {"isr_changes": "zookeeper", "elr": False,
                       "unavailable_leader": "follow", "kafka_4485": False,
                       "max_records": 1},
    "split, first design, metadata": {"fetch": "split", "fetch_fencing": "first-design",
                                      "metadata": True, "max_records": 1,
                                      "max_leader_epoch": 1, "isr_shrink": False},
    "unclean, checkpoints, skip": {"crashes": "unclean", "hw_checkpoint": True,
                                   "unavailable_leader": "skip", "elr": False,
                                   "max_records": 1, "max_leader_epoch": 1},
    "three brokers": {"brokers": 3, "max_records": 1, "max_leader_epoch": 1,
                      "isr_shrink": False},
    "0.8.1 (violations)": {"max_records": 1, "max_leader_epoch": 1, "isr_shrink": False,
                           "truncation": "hw", "fetch_fencing": "none", "expand_rule": "hw",
                           "kafka_4485": False, "kafka_7414": False, "elr": False,
                           "unavailable_leader": "skip", "isr_changes": "zookeeper",
                           "crashes": "unclean"},
}
"""Small spaces of every encoding layout, three brokers, and one with violations."""


def report(params: dict[str, Any]) -> dict[str, Any]:
    """The search of ``params`` as plain data, with which build ran it."""
    model = KafkaModel(KafkaConfig(controller="zookeeper", **params))
    r = explore(model, CheckOptions(stop_at_first=False))
    return {
        "compiled": _compiled.running_compiled(kafka_model),
        "counts": [r.distinct_states, r.generated_states, r.diameter],
        "coverage": [[c.action, c.generated, c.distinct] for c in r.coverage],
        "sometimes": [[s.name, s.reached, s.level] for s in r.sometimes],
        "violations": [[v.invariant, [[t.action, repr(dict(t.state))] for t in v.trace]]
                       for v in r.violations],
        "invariants": [[p.name, p.doc] for p in model.invariants()],
    }


@pytest.fixture(scope="module")
def pure_reports() -> dict[str, dict[str, Any]]:
    """``report`` of every configuration, in one child process running the Python source."""
    code = ("import json\n"
            "from tests.spec.kafka.test_compiled import CONFIGS, report\n"
            "print(json.dumps({name: report(p) for name, p in CONFIGS.items()}))\n")
    done = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True,
        env={**os.environ, PURE_PYTHON_ENV: "1"}, timeout=600, check=False)
    assert done.returncode == 0, done.stderr
    reports: dict[str, dict[str, Any]] = json.loads(done.stdout)
    return reports


built = pytest.mark.skipif(not _compiled.use_compiled(),
                           reason="the kafka model's mypyc build is not here (setup.py)")


@built
@pytest.mark.same_worker("kafka-pure-reports")
@pytest.mark.parametrize("name", CONFIGS)
def test_the_compiled_model_reports_what_the_source_reports(
        name: str, pure_reports: dict[str, dict[str, Any]]) -> None:
    compiled = report(CONFIGS[name])
    pure = dict(pure_reports[name])
    assert compiled.pop("compiled") is True and pure.pop("compiled") is False
    assert compiled == pure


@built
def test_the_configuration_with_violations_has_some() -> None:
    # the differential test above compares traces only if there are some to compare
    assert report(CONFIGS["0.8.1 (violations)"])["violations"]


# -- which build runs ---------------------------------------------------------------------------

def fabricate(root: Path, *, built: bool, record: bool) -> None:
    compiled_groups.fabricate(_compiled, root, built=built, record=record)


def decide(root: Path, monkeypatch: pytest.MonkeyPatch) -> bool:
    return compiled_groups.decide(_compiled, root, monkeypatch)


def test_a_complete_fresh_build_is_used(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(PURE_PYTHON_ENV, raising=False)
    fabricate(tmp_path, built=True, record=True)
    assert decide(tmp_path, monkeypatch)


def test_the_source_runs_when_asked_or_when_the_build_is_stale_or_partial(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(PURE_PYTHON_ENV, raising=False)
    fabricate(tmp_path, built=True, record=True)
    monkeypatch.setenv(PURE_PYTHON_ENV, "1")
    assert not decide(tmp_path, monkeypatch)
    monkeypatch.delenv(PURE_PYTHON_ENV)
    model = tmp_path / _compiled.COMPILED["isrlab.spec.kafka.model"]
    model.write_text(model.read_text() + "# edited after the build\n")
    assert not decide(tmp_path, monkeypatch)

    partial = tmp_path / "partial"
    fabricate(partial, built=True, record=True)
    suffix = importlib.machinery.EXTENSION_SUFFIXES[0]
    (partial / _compiled.COMPILED["isrlab.spec.invariants"]).with_suffix(suffix).unlink()
    assert not decide(partial, monkeypatch)

    for name, kwargs in {"unbuilt": {"built": False, "record": False},
                         "unrecorded": {"built": True, "record": False}}.items():
        fabricate(tmp_path / name, **kwargs)
        assert not decide(tmp_path / name, monkeypatch)
    corrupt = tmp_path / "corrupt"
    fabricate(corrupt, built=True, record=True)
    (corrupt / _compiled.SOURCES_FILE).write_text("[1, 2")
    assert not decide(corrupt, monkeypatch)


def test_setup_py_compiles_the_modules_the_finder_knows() -> None:
    tree = ast.parse((ROOT / "setup.py").read_text())
    constants = {target.id: ast.literal_eval(node.value) for node in tree.body
                 if isinstance(node, ast.AnnAssign | ast.Assign) and node.value is not None
                 for target in ([node.target] if isinstance(node, ast.AnnAssign)
                                else node.targets)
                 if isinstance(target, ast.Name) and target.id.isupper()
                 and isinstance(node.value, ast.Constant | ast.Dict)}
    assert constants["KAFKA_COMPILED"] == {
        name: f"spec/{relative}" for name, relative in _compiled.COMPILED.items()}
    assert constants["KAFKA_GROUP"] == _compiled.SHARED
    assert constants["SOURCES_FILE"] == _compiled.SOURCES_FILE
