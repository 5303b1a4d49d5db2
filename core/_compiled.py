"""Which build of ``core``'s modules runs: mypyc's or the Python source.

setup.py compiles ``COMPILED`` with mypyc into extension modules that sit next to their
``.py`` files (the shared code in ``isrlab.core._core__mypyc``), a group of its own: the
compiled ``kafka`` model (``isrlab.spec._compiled``) calls ``core`` as it calls any Python
module, so either build of one runs with either build of the other.  The build records, in
``SOURCES_FILE``, the SHA-256 of each source it compiled.  Python's importer prefers an
extension module to a ``.py`` file of the same name, so ``install`` (run by
``isrlab.core``'s ``__init__``, before any of these modules is imported) puts a finder
first on ``sys.meta_path`` that loads the ``.py`` files instead, all of them or none (the
compiled modules call each other natively), when ``ISRLAB_PURE_PYTHON=1``, when any of
them or the record is missing, or when a source no longer has the digest it was compiled
from.  The Python source is the reference (tests/core runs it, with coverage); the compiled
build gives identical results (tests/spec/kafka/test_compiled.py compares whole searches).
Standard library only: ``core`` imports nothing of isrlab's other layers.

A frozen dataclass compiled by mypyc is a native class, which pickle's default (and
``copy``'s) cannot fill in field by field: its frozen ``__setattr__`` refuses.  So the
dataclasses of each compiled module are registered with ``copyreg`` as it is imported, to be
rebuilt from their field values in order by their constructor.
"""

from __future__ import annotations

import copyreg
import dataclasses
import functools
import hashlib
import importlib
import importlib.abc
import importlib.machinery
import importlib.util
import json
import os
import sys
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from types import ModuleType
from typing import Any

HERE = Path(__file__).parent
"""The directory of ``isrlab.core`` (core/ in a checkout)."""

MODULES = (
    "alter_partition", "broker_heartbeat", "coordinator", "elr", "errors", "fencing",
    "invariants", "isr", "kraft_alter_partition", "kraft_metadata", "log_recovery",
    "metadata_cache", "partition", "partition_change_builder", "produce", "propagation",
    "replica_manager", "replication_control", "selectors", "state", "truncation",
)
"""The modules of ``core`` setup.py compiles (all but ``__init__`` and this one)."""

COMPILED = {f"isrlab.core.{name}": f"{name}.py" for name in MODULES}
"""Each compiled module's name and its source relative to ``HERE``."""

SHARED = "isrlab.core._core"
"""mypyc's group name: the shared extension is ``isrlab.core._core__mypyc``."""

SOURCES_FILE = "_core_sources.json"
"""In ``HERE``, written by a build that compiled every module: module name to the SHA-256 of
the source it was compiled from."""

PURE_PYTHON_ENV = "ISRLAB_PURE_PYTHON"
"""``isrlab.checker.fingerprint.PURE_PYTHON_ENV``, named again here (``core`` does not import
the checker): set to ``1``, every compiled module of isrlab is ignored."""


def pure_python_forced() -> bool:
    """Whether ``ISRLAB_PURE_PYTHON`` turns the compiled modules off."""
    return os.environ.get(PURE_PYTHON_ENV, "") in ("1", "true", "yes")


def digest(path: Path) -> str:
    """The SHA-256 of a file's bytes, in hex."""
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _extension_beside(source: Path) -> bool:
    """Whether an extension module of the same name sits next to ``source``."""
    return any(source.with_suffix(suffix).exists()
               for suffix in importlib.machinery.EXTENSION_SUFFIXES)


def recorded_build_current(here: Path, compiled: Mapping[str, str], sources_file: str) -> bool:
    """Whether a group's compiled build is to be used: ``ISRLAB_PURE_PYTHON`` is not set, the
    build's record ``here / sources_file`` gives every module of ``compiled`` (module name to
    its source relative to ``here``) the SHA-256 of its source as it is now, and each
    module's extension sits beside its source.  (``isrlab.spec._compiled`` asks it for the
    ``kafka`` model's group.)"""
    if pure_python_forced():
        return False
    try:
        recorded = json.loads((here / sources_file).read_text())
    except (OSError, ValueError):
        return False
    if not isinstance(recorded, dict):
        return False
    for name, relative in compiled.items():
        source = here / relative
        if not _extension_beside(source) or recorded.get(name) != digest(source):
            return False
    return True


@functools.cache
def use_compiled() -> bool:
    """Whether ``core``'s compiled modules are to be imported (decided once per process)."""
    return recorded_build_current(HERE, COMPILED, SOURCES_FILE)


def _fields_of(value: Any) -> tuple[type[Any], tuple[object, ...]]:
    """``copyreg``'s reduction of a compiled dataclass: its class and its field values."""
    return type(value), tuple(getattr(value, f.name) for f in dataclasses.fields(value))


def register_pickling(module: ModuleType) -> None:
    """Register ``_fields_of`` for every dataclass ``module`` defines (each field is an
    argument of its constructor in ``core``: no ``init=False``)."""
    for value in vars(module).values():
        if (isinstance(value, type) and dataclasses.is_dataclass(value)
                and value.__module__ == module.__name__):
            copyreg.pickle(value, _fields_of)


class _CompiledLoader(importlib.abc.Loader):
    """The extension module's own loader; then, the first time, every module of
    ``COMPILED`` imported and ``register_pickling`` of each.  (A compiled module imports
    the others of its group natively, past ``sys.meta_path``, so this loader sees only the
    first one imported.)"""

    def __init__(self, loader: importlib.machinery.ExtensionFileLoader) -> None:
        self._loader = loader

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> ModuleType | None:
        return self._loader.create_module(spec)

    def exec_module(self, module: ModuleType) -> None:
        self._loader.exec_module(module)
        _register_every_module()


_REGISTERED: list[str] = []
"""The modules ``_register_every_module`` has registered (it runs once: a module it imports
comes back to it through ``_CompiledLoader``)."""


def _register_every_module() -> None:
    if _REGISTERED:
        return
    _REGISTERED.append("started")
    for name in COMPILED:
        register_pickling(importlib.import_module(name))
        _REGISTERED.append(name)


class SourceFinder(importlib.abc.MetaPathFinder):
    """For the modules of one compiled group (``compiled``: module name to its source
    relative to ``here``): loads their ``.py`` files when ``use_compiled()`` is false;
    otherwise leaves them to the ordinary finders (the extension module), through the
    loader ``wrap`` makes of the extension's loader when ``wrap`` is given."""

    def __init__(self, here: Path, compiled: Mapping[str, str], use_compiled: Callable[[], bool],
                 wrap: Callable[[importlib.machinery.ExtensionFileLoader],
                                importlib.abc.Loader] | None = None) -> None:
        self.here = here
        self.compiled = compiled
        self._use_compiled = use_compiled
        self._wrap = wrap

    def find_spec(self, fullname: str, path: Sequence[str] | None,
                  target: ModuleType | None = None) -> importlib.machinery.ModuleSpec | None:
        relative = self.compiled.get(fullname)
        if relative is None:
            return None
        if not self._use_compiled():
            return importlib.util.spec_from_file_location(fullname, self.here / relative)
        if self._wrap is None:
            return None  # the ordinary finders: the extension module
        spec = importlib.machinery.PathFinder.find_spec(fullname, path)
        if spec is not None and isinstance(spec.loader, importlib.machinery.ExtensionFileLoader):
            spec.loader = self._wrap(spec.loader)
        return spec


def install_finder(finder: SourceFinder) -> None:
    """Put ``finder`` first on ``sys.meta_path``, unless one for its group is there already."""
    if not any(isinstance(f, SourceFinder) and f.compiled is finder.compiled
               for f in sys.meta_path):
        sys.meta_path.insert(0, finder)


def finder() -> SourceFinder:
    """``core``'s finder: the extension modules through ``_CompiledLoader``."""
    return SourceFinder(HERE, COMPILED, use_compiled, _CompiledLoader)


def install() -> None:
    """Put ``core``'s finder first on ``sys.meta_path`` (once)."""
    install_finder(finder())
