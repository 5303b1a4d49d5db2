"""Which build of the ``kafka`` model's hot modules runs: mypyc's or the Python source.

setup.py compiles ``COMPILED`` with mypyc into extension modules that sit next to their
``.py`` files (the shared code in ``isrlab.spec._kafka__mypyc``) and records, in
``SOURCES_FILE``, the SHA-256 of each source it compiled.  Python's importer prefers an
extension module to a ``.py`` file of the same name, so without care an edited
``model.py`` in a checkout would not run until rebuilt, and ``ISRLAB_PURE_PYTHON=1`` could
not reach the source.  ``install`` puts a finder first on ``sys.meta_path`` that loads the
``.py`` files instead, all of them or none (the compiled modules call each other natively),
when ``ISRLAB_PURE_PYTHON=1``, when any of them or the record is missing, or when a source
no longer has the digest it was compiled from.  The Python source is the reference; the
compiled build gives identical results (tests/spec/kafka/test_compiled.py).
"""

from __future__ import annotations

import ast
import functools
import importlib.abc
import importlib.machinery
import importlib.util
from pathlib import Path
from types import ModuleType

from isrlab.core._compiled import SourceFinder, install_finder, recorded_build_current
from isrlab.core._compiled import digest as digest  # the tests' digests of sources

HERE = Path(__file__).parent
"""The directory of ``isrlab.spec`` (spec/ in a checkout)."""

COMPILED = {
    "isrlab.spec.kafka.config": "kafka/config.py",
    "isrlab.spec.kafka.partition": "kafka/partition.py",
    "isrlab.spec.kafka.ghost": "kafka/ghost.py",
    "isrlab.spec.kafka.replica_manager": "kafka/replica_manager.py",
    "isrlab.spec.kafka.controller_channel": "kafka/controller_channel.py",
    "isrlab.spec.kafka.controller": "kafka/controller.py",
    "isrlab.spec.kafka.alter_partition": "kafka/alter_partition.py",
    "isrlab.spec.kafka.lifecycle": "kafka/lifecycle.py",
    "isrlab.spec.kafka.fetcher": "kafka/fetcher.py",
    "isrlab.spec.kafka.leader": "kafka/leader.py",
    "isrlab.spec.kafka.labels": "kafka/labels.py",
    "isrlab.spec.kafka.model": "kafka/model.py",
    "isrlab.spec.kafka.state": "kafka/state.py",
    "isrlab.spec.kafka.codes": "kafka/codes.py",
    "isrlab.spec.kafka.memo": "kafka/memo.py",
    "isrlab.spec.kafka.kraft_state": "kafka/kraft_state.py",
    "isrlab.spec.kafka.kraft_invariants": "kafka/kraft_invariants.py",
    "isrlab.spec.kafka.metadata_loader": "kafka/metadata_loader.py",
    "isrlab.spec.kafka.broker_lifecycle": "kafka/broker_lifecycle.py",
    "isrlab.spec.kafka.quorum_controller": "kafka/quorum_controller.py",
    "isrlab.spec.kafka.kraft_model": "kafka/kraft_model.py",
    "isrlab.spec.invariants": "invariants.py",
}
"""The modules setup.py compiles, each with its source relative to ``HERE``."""

SHARED = "isrlab.spec._kafka"
"""mypyc's group name: the shared extension is ``isrlab.spec._kafka__mypyc``."""

SOURCES_FILE = "_kafka_sources.json"
"""In ``HERE``, written by a build that compiled every module: module name to the SHA-256 of
the source it was compiled from."""


@functools.cache
def use_compiled() -> bool:
    """Whether the compiled modules are to be imported (decided once per process)."""
    return recorded_build_current(HERE, COMPILED, SOURCES_FILE)


def running_compiled(module: ModuleType) -> bool:
    """Whether ``module`` was loaded from an extension module (for the benchmark's report)."""
    return str(getattr(module, "__file__", "")).endswith(
        tuple(importlib.machinery.EXTENSION_SUFFIXES))


def install() -> None:
    """Put the finder of the ``kafka`` model's group first on ``sys.meta_path`` (once)."""
    install_finder(SourceFinder(HERE, COMPILED, use_compiled))


def summary_of(f: object) -> str:
    """The first paragraph of a function's docstring, on one line (runs of spaces as one).
    A function mypyc compiled carries no docstring: it is read from its module's source."""
    text = getattr(f, "__doc__", None) or _source_docstrings(
        str(getattr(f, "__module__", ""))).get(str(getattr(f, "__name__", "")), "")
    return " ".join(text.split("\n\n")[0].split())


@functools.cache
def _source_docstrings(module: str) -> dict[str, str]:
    """Every top-level function's docstring in the source of ``module``, one of ``COMPILED``
    (nothing for another module)."""
    if module not in COMPILED:
        return {}
    tree = ast.parse((HERE / COMPILED[module]).read_text(encoding="utf-8"))
    return {node.name: ast.get_docstring(node) or "" for node in tree.body
            if isinstance(node, ast.FunctionDef)}
