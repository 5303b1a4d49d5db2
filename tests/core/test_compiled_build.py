"""Which build of ``core`` runs (``isrlab.core._compiled``), on fabricated directories.

The compiled build's results are compared with the source's by whole searches in
tests/spec/kafka/test_compiled.py; here: the finder's decision, setup.py and the finder
naming the same modules, and the pickling of compiled dataclasses as their field values.
"""

from __future__ import annotations

import ast
import copyreg
import importlib.machinery
import pickle
import types
from dataclasses import dataclass
from pathlib import Path

import pytest

from isrlab.checker.fingerprint import PURE_PYTHON_ENV
from isrlab.core import _compiled
from tests import compiled_groups

ROOT = Path(__file__).resolve().parents[2]


def fabricate(root: Path, *, built: bool, record: bool) -> None:
    compiled_groups.fabricate(_compiled, root, built=built, record=record)


def decide(root: Path, monkeypatch: pytest.MonkeyPatch) -> bool:
    return compiled_groups.decide(_compiled, root, monkeypatch)


def test_a_complete_fresh_build_is_used(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(PURE_PYTHON_ENV, raising=False)
    fabricate(tmp_path, built=True, record=True)
    assert decide(tmp_path, monkeypatch)


def test_the_source_runs_when_asked_or_when_the_build_is_stale_partial_or_unrecorded(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(PURE_PYTHON_ENV, raising=False)
    fabricate(tmp_path, built=True, record=True)
    monkeypatch.setenv(PURE_PYTHON_ENV, "1")
    assert not decide(tmp_path, monkeypatch)
    monkeypatch.delenv(PURE_PYTHON_ENV)
    state = tmp_path / _compiled.COMPILED["isrlab.core.state"]
    state.write_text(state.read_text() + "# edited after the build\n")
    assert not decide(tmp_path, monkeypatch)
    for name, kwargs in {"unbuilt": {"built": False, "record": False},
                         "unrecorded": {"built": True, "record": False}}.items():
        (tmp_path / name).mkdir()
        fabricate(tmp_path / name, **kwargs)
        assert not decide(tmp_path / name, monkeypatch)
    for name, text in {"corrupt": "[1, 2", "not a table": "[1, 2]"}.items():
        (tmp_path / name).mkdir()
        fabricate(tmp_path / name, built=True, record=True)
        (tmp_path / name / _compiled.SOURCES_FILE).write_text(text)
        assert not decide(tmp_path / name, monkeypatch)


def test_a_finder_without_a_wrap_leaves_a_compiled_group_to_the_ordinary_finders() -> None:
    """The ``kafka`` model's group (``isrlab.spec._compiled``) has no loader of its own: when
    its build is used, the extension module is found by Python's own finders."""
    group = {"isrlab.spec.kafka.model": "kafka/model.py"}
    finder = _compiled.SourceFinder(Path("spec"), group, lambda: True)
    assert finder.find_spec("isrlab.spec.kafka.model", None) is None
    source = _compiled.SourceFinder(Path("spec"), group, lambda: False).find_spec(
        "isrlab.spec.kafka.model", None)
    assert source is not None and str(source.origin).endswith("kafka/model.py")


def test_the_finder_serves_the_source_or_the_extension_through_its_loader(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    assert _compiled.finder().find_spec("isrlab.spec.kafka.model", None) is None  # not core's
    monkeypatch.setattr(_compiled, "use_compiled", lambda: False)
    source = _compiled.finder().find_spec("isrlab.core.state", None)
    assert source is not None and str(source.origin).endswith("state.py")
    monkeypatch.setattr(_compiled, "use_compiled", lambda: True)
    extension = importlib.machinery.ModuleSpec(
        "isrlab.core.state", importlib.machinery.ExtensionFileLoader(
            "isrlab.core.state", str(tmp_path / "state.so")))
    monkeypatch.setattr(importlib.machinery.PathFinder, "find_spec",
                        lambda name, path=None: extension)
    found = _compiled.finder().find_spec("isrlab.core.state", None)
    assert found is extension and isinstance(found.loader, _compiled._CompiledLoader)


@dataclass(frozen=True, slots=True)
class _Point:
    x: int
    y: tuple[int, ...] = ()


def test_a_compiled_modules_dataclasses_pickle_as_their_field_values(
        monkeypatch: pytest.MonkeyPatch) -> None:
    module = types.ModuleType(__name__)
    module._Point = _Point  # type: ignore[attr-defined]  # a module's attribute, set here
    module.imported = Path  # type: ignore[attr-defined]  # not a dataclass: left alone
    monkeypatch.setattr(copyreg, "dispatch_table", dict(copyreg.dispatch_table))
    _compiled.register_pickling(module)
    assert copyreg.dispatch_table[_Point] is _compiled._fields_of
    assert Path not in copyreg.dispatch_table
    assert _compiled._fields_of(_Point(1, (2,))) == (_Point, (1, (2,)))
    assert pickle.loads(pickle.dumps(_Point(1, (2,)))) == _Point(1, (2,))


def test_the_loader_registers_every_compiled_module_once(
        monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[str] = []

    class Loader:
        def create_module(self, spec: object) -> None:
            calls.append("create")

        def exec_module(self, module: types.ModuleType) -> None:
            calls.append("exec")

    monkeypatch.setattr(_compiled, "_REGISTERED", [])
    monkeypatch.setattr(_compiled, "register_pickling",
                        lambda module: calls.append(module.__name__))
    loader = _compiled._CompiledLoader(Loader())  # type: ignore[arg-type]  # a stand-in
    assert loader.create_module(importlib.machinery.ModuleSpec("m", None)) is None
    loader.exec_module(types.ModuleType("m"))
    loader.exec_module(types.ModuleType("m"))
    assert calls == ["create", "exec", *_compiled.COMPILED, "exec"]


def test_setup_py_compiles_the_modules_the_finder_knows() -> None:
    tree = ast.parse((ROOT / "setup.py").read_text())
    constants = {target.id: ast.literal_eval(node.value) for node in tree.body
                 if isinstance(node, ast.Assign) and isinstance(node.value, ast.Constant | ast.Dict)
                 for target in node.targets
                 if isinstance(target, ast.Name) and target.id.startswith("CORE_")}
    assert constants["CORE_COMPILED"] == {
        name: f"core/{relative}" for name, relative in _compiled.COMPILED.items()}
    assert constants["CORE_GROUP"] == _compiled.SHARED
    assert constants["CORE_SOURCES_FILE"] == _compiled.SOURCES_FILE
    every = {p.stem for p in (ROOT / "core").glob("*.py")} - {"__init__", "_compiled"}
    assert set(_compiled.MODULES) == every


def test_the_switch_is_the_checkers() -> None:
    assert _compiled.PURE_PYTHON_ENV == PURE_PYTHON_ENV
