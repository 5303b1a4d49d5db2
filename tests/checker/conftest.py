"""Shared helpers for the checker's tests."""

from __future__ import annotations

from typing import Any

from isrlab.checker.bfs import CheckOptions, explore
from isrlab.checker.model import Model
from isrlab.checker.report import CheckResult


def run(model: Model[Any], **options: Any) -> CheckResult:
    """Explore ``model`` with ``CheckOptions(**options)``."""
    return explore(model, CheckOptions(**options))
