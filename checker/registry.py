"""Models registered by name, with typed parameters parsed from ``key=value`` strings.

The registry is generic: the Kafka models register themselves from ``spec``; the checker's
own toy models from ``isrlab.checker.toys``.  Parsing errors are values (``returns.Result``) so that
the CLI can turn them into one-line messages and exit code 2.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from returns.result import Failure, Result, Success

from isrlab.checker.model import Model

ParamValue = int | bool | str

USER_MODULE_PREFIX = "isrlab_user_"
"""The start of the private module name a user's model file is imported under
(``isrlab.api``): no other process can import such a module, so the Spark engine ships it by
value."""

MAX_DIGITS = 18
"""The longest integer parameter accepted (digits): every bound of a finite model is far
smaller, and a longer one could only be a typing slip."""


@dataclass(frozen=True, slots=True)
class Param:
    """One model parameter: its name, type (int, bool or str), default and meaning; an int
    parameter may have a ``minimum`` and a ``maximum`` (both inclusive)."""

    name: str
    type: type[int] | type[bool] | type[str]
    default: ParamValue
    doc: str
    minimum: int | None = None
    choices: tuple[str, ...] | None = None
    maximum: int | None = None
    fault: bool = False
    """A freedom beyond what the modelled system's code allows (a fault injected for
    research), off by default; ``isrlab models`` marks it."""
    aliases: tuple[tuple[str, str], ...] = ()
    """For a choice parameter: older spellings accepted in ``key=value`` text, each as
    ``(alias, choice)`` (e.g. ``true`` for a boolean that became a choice); parsing
    returns the choice."""


@dataclass(frozen=True, slots=True)
class ModelEntry:
    """A registered model: how to build it from parsed parameters."""

    name: str
    doc: str
    params: tuple[Param, ...]
    build: Callable[[Mapping[str, ParamValue]], Model[Any]]
    symmetric: bool = False  # whether ``canonical`` does a real symmetry reduction


def _parse_value(param: Param, text: str) -> Result[ParamValue, str]:
    if param.type is bool:
        lowered = text.strip().lower()
        if lowered in ("true", "yes", "on", "1"):
            return Success(True)
        if lowered in ("false", "no", "off", "0"):
            return Success(False)
        return Failure(f"parameter {param.name!r} expects true or false, got {text!r}")
    if param.type is int:
        digits = text.strip()
        if len(digits) > MAX_DIGITS:
            return Failure(f"parameter {param.name!r} expects an integer of at most "
                           f"{MAX_DIGITS} digits, got {len(digits)} characters")
        try:
            value = int(digits)
        except ValueError:
            return Failure(f"parameter {param.name!r} expects an integer, got {text!r}")
        if param.minimum is not None and value < param.minimum:
            return Failure(f"parameter {param.name!r} must be >= {param.minimum}, got {value}")
        if param.maximum is not None and value > param.maximum:
            return Failure(f"parameter {param.name!r} must be <= {param.maximum}, got {value}")
        return Success(value)
    text = dict(param.aliases).get(text, text)
    if param.choices is not None and text not in param.choices:
        allowed = ", ".join(param.choices)
        also = "".join(f", {alias} (= {choice})" for alias, choice in param.aliases)
        return Failure(f"parameter {param.name!r} must be one of {allowed}{also}, got {text!r}")
    return Success(text)


@dataclass(slots=True)
class Registry:
    """A name → ``ModelEntry`` table."""

    entries: dict[str, ModelEntry] = field(default_factory=dict)

    def register(self, entry: ModelEntry) -> None:
        """Add a model; registering one name twice is a programming error."""
        if entry.name in self.entries:
            raise ValueError(f"model {entry.name!r} is registered twice")
        self.entries[entry.name] = entry

    def names(self) -> list[str]:
        """The registered model names, sorted."""
        return sorted(self.entries)

    def get(self, name: str) -> Result[ModelEntry, str]:
        """The entry for ``name``, or a message listing the known names."""
        entry = self.entries.get(name)
        if entry is None:
            known = ", ".join(self.names())
            return Failure(f"unknown model {name!r} (known models: {known})")
        return Success(entry)

    def parse_params(
        self, entry: ModelEntry, assignments: Iterable[str]
    ) -> Result[dict[str, ParamValue], str]:
        """Defaults overridden by ``key=value`` strings; unknown or ill-typed ones fail."""
        by_name = {p.name: p for p in entry.params}
        values: dict[str, ParamValue] = {p.name: p.default for p in entry.params}
        for text in assignments:
            key, sep, raw = text.partition("=")
            key = key.strip()
            if not sep or not key:
                return Failure(f"parameter {text!r} is not of the form key=value")
            param = by_name.get(key)
            if param is None:
                known = ", ".join(sorted(by_name)) or "none"
                return Failure(
                    f"model {entry.name!r} has no parameter {key!r} (parameters: {known})"
                )
            parsed = _parse_value(param, raw)
            if isinstance(parsed, Failure):
                return parsed
            values[key] = parsed.unwrap()
        return Success(values)
