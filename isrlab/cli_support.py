"""Helpers every ``isrlab`` command shares: one-line errors and model look-up.

``OneLineErrors`` is the click group class: any usage error (unknown option, ill-typed value)
or ``BadInput`` raised by a command prints ONE line, ``isrlab: error: ...``, and exits 2 —
never a traceback, never a usage dump.
"""

from __future__ import annotations

import sys
from collections.abc import Mapping, Sequence
from typing import Any

import click
from returns.result import Failure

from checker.model import Model
from checker.registry import ModelEntry, ParamValue
from isrlab.models import registry


class BadInput(click.ClickException):
    """Bad user input: a one-line message and exit code 2."""

    exit_code = 2


class OneLineErrors(click.Group):
    """A click group whose errors are one line on stderr with exit code 2."""

    def main(
        self, args: Sequence[str] | None = None, prog_name: str | None = None,
        complete_var: str | None = None, standalone_mode: bool = True, **extra: Any,
    ) -> Any:
        """Run the command line; in standalone mode turn click's errors into one line."""
        if not standalone_mode:
            return super().main(args, prog_name, complete_var, False, **extra)
        try:
            code = super().main(args, prog_name, complete_var, False, **extra)
        except click.ClickException as error:
            message = " ".join(error.format_message().split())
            click.echo(f"isrlab: error: {message}", err=True)
            sys.exit(2 if isinstance(error, click.UsageError) else error.exit_code)
        except click.Abort:
            click.echo("isrlab: interrupted", err=True)
            sys.exit(130)
        sys.exit(code if isinstance(code, int) else 0)


def resolve_model(
    name: str, assignments: Sequence[str]
) -> tuple[ModelEntry, dict[str, ParamValue], Model[Any]]:
    """The registered model ``name`` built with ``key=value`` parameters, or ``BadInput``."""
    entry_result = registry().get(name)
    if isinstance(entry_result, Failure):
        raise BadInput(entry_result.failure())
    entry = entry_result.unwrap()
    params_result = registry().parse_params(entry, assignments)
    if isinstance(params_result, Failure):
        raise BadInput(params_result.failure())
    params = params_result.unwrap()
    try:
        model = entry.build(params)
    except ValueError as error:
        raise BadInput(f"model {name!r}: {error}") from error
    return entry, params, model


def params_text(params: Mapping[str, ParamValue]) -> str:
    """``key=value`` pairs, sorted, for messages."""
    return " ".join(f"{k}={v}" for k, v in sorted(params.items()))
