"""Fabricated builds of a compiled group (``isrlab.core._compiled``, ``isrlab.spec._compiled``),
shared by the tests of which build each group's finder picks."""

from __future__ import annotations

import importlib.machinery
import json
from pathlib import Path
from types import ModuleType

import pytest


def fabricate(group: ModuleType, root: Path, *, built: bool, record: bool) -> None:
    """The sources of ``group.COMPILED`` under ``root``, with extension modules beside them
    when ``built`` and the build's record (``group.SOURCES_FILE``) when ``record``."""
    suffix = importlib.machinery.EXTENSION_SUFFIXES[0]
    digests = {}
    for name, relative in group.COMPILED.items():
        source = root / relative
        source.parent.mkdir(parents=True, exist_ok=True)
        source.write_text(f"# {name}\n")
        digests[name] = group.digest(source)
        if built:
            source.with_suffix(suffix).write_bytes(b"")
    if record:
        (root / group.SOURCES_FILE).write_text(json.dumps(digests))


def decide(group: ModuleType, root: Path, monkeypatch: pytest.MonkeyPatch) -> bool:
    """Whether ``group``'s finder would import the compiled build found under ``root``."""
    monkeypatch.setattr(group, "HERE", root)
    decided: bool = group.use_compiled.__wrapped__()
    return decided
