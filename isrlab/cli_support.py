"""Helpers every ``isrlab`` command shares: one-line errors, Ctrl-C, output paths checked
before a run, atomic writes, and model look-up.

``OneLineErrors`` is the click group class: any usage error (unknown option, ill-typed value),
``BadInput`` raised by a command or ``InputError`` raised by a service (``isrlab.services``)
prints ONE line, ``isrlab: error: ...``, and exits 2 — never a traceback, never a usage
dump.  Ctrl-C anywhere prints ``isrlab: interrupted`` and exits 130 (128 + SIGINT, the
shell's convention); standard output closed by its reader (``| head``) exits 141 (128 +
SIGPIPE) without a word.  A bare ``isrlab`` prints its help.

Every command calls ``check_outputs`` with its output options before it starts working, so a
missing directory or an output naming an input fails at once, and writes its files with
``write_text_atomically`` / ``atomic_output`` (``isrlab.checker.atomic``), so an interrupted command
leaves no partial file.
"""

from __future__ import annotations

import contextlib
import ctypes
import difflib
import math
import os
import re
import sys
import traceback
from collections.abc import Mapping, Sequence
from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, NoReturn

import click

from isrlab import __version__, api
from isrlab.checker.atomic import (
    OutputError,
    atomic_output,
    descriptor_of,
    writable_problem,
    write_text_atomically,
)
from isrlab.checker.graph import DOT_LIMIT
from isrlab.checker.model import Model
from isrlab.checker.registry import ModelEntry, ParamValue
from isrlab.checker.report import CheckResult
from isrlab.services import InputError
from isrlab.services.rendering import write_result_itf, write_result_svg

__all__ = [
    "BROKEN_PIPE", "CONFIG_OPTION", "DOT_OPTIONS", "EVALUATION_FAILED", "INCOMPLETE",
    "INTERRUPTED", "ITF_OPTION", "JSON_OPTION", "MODEL_HELP", "PARAM_HELP", "SVG_OPTION",
    "BadInput", "OneLineErrors",
    "Seconds",
    "atomic_output", "check_outputs", "config_params", "load_run_file", "params_text",
    "resolve_model", "run_metadata", "say_not_written", "with_run_metadata",
    "write_run_outputs", "write_text_atomically",
]

MODEL_HELP = ("a registered model (see `isrlab models`), path/to/file.py:NAME or "
              "package.module:NAME (see docs/api.md)")
"""The help of every command's ``--model`` option."""

PARAM_HELP = "model parameter key=value (repeatable); see `isrlab models`"
"""The help of every command's ``-p`` option."""

JSON_OPTION = click.option(
    "--json", "json_path", type=click.Path(dir_okay=False, path_type=Path),
    help="write the JSON report here")
"""The ``--json`` report option of ``check``, ``simulate`` and ``bmc``."""

ITF_OPTION = click.option(
    "--itf", "itf_path", type=click.Path(dir_okay=False, path_type=Path),
    help="write the counterexample as an ITF trace here")
"""The ``--itf`` counterexample option of ``check``, ``simulate`` and ``bmc``."""

SVG_OPTION = click.option(
    "--svg", "svg_path", type=click.Path(dir_okay=False, path_type=Path),
    help="draw the counterexample as a message sequence chart (SVG) here")
"""The ``--svg`` option of ``check``, ``simulate``, ``bmc`` and ``validate``."""

DOT_OPTIONS = (
    click.option("--dot", "dot_path", type=click.Path(dir_okay=False, path_type=Path),
                 help="write the explored state graph as Graphviz DOT here (small runs only: "
                      "see --dot-limit), like TLC's -dump dot"),
    click.option("--dot-limit", type=click.IntRange(1), default=DOT_LIMIT, show_default=True,
                 help="--dot refuses (exit 2) a state graph with more states than this"),
    click.option("--dot-labels", type=click.Choice(["changed", "full"]), default="changed",
                 show_default=True,
                 help="--dot: label each state with what changed from the state it was "
                      "first reached from (initial states whole), or with every variable"),
)
"""The ``--dot``, ``--dot-limit`` and ``--dot-labels`` options of ``check``."""

INTERRUPTED = 130
"""The exit status after Ctrl-C (128 + SIGINT)."""

EVALUATION_FAILED = 3
"""Exit status of a check or simulation stopped by the model's own evaluation error (the
spec's next step undefined; TLC's evaluation error), distinct from a violation's 1."""
INCOMPLETE = 4
"""The exit status of ``check --fail-on-incomplete`` when a bound stopped the search."""

BROKEN_PIPE = 141
"""The exit status when whatever read the standard output stopped reading (``isrlab check |
head``): 128 + SIGPIPE, what the shell reports for a command that signal stopped, silently;
never 1, which says an invariant was violated (click's own choice)."""

CRASHED = 70
"""The exit status when an exception escapes a command: a bug in the model being checked
(your own model's code) or in isrlab (``EX_SOFTWARE`` of sysexits.h), never 1, which says
an invariant was violated."""


class Seconds(click.FloatRange):
    """A duration option: ``click.FloatRange`` that also refuses ``nan``, which its bounds
    let through (every comparison with ``nan`` is false)."""

    def convert(self, value: Any, param: click.Parameter | None,
                ctx: click.Context | None) -> Any:
        seconds = super().convert(value, param, ctx)
        if math.isnan(seconds):
            self.fail(f"{value!r} is not a number of seconds", param, ctx)
        return seconds


class BadInput(click.ClickException):
    """Bad user input: a one-line message and exit code 2."""

    exit_code = 2


DEBUG_FLAG = "--debug"
"""Anywhere on the command line: print the traceback of a user's property that raised."""


def user_error(error: BaseException) -> str | None:
    """The one line of a user's property that raised (``api.UserPropertyError``), directly
    or reported from a worker process or a Spark task by its exception line, else ``None``."""
    if isinstance(error, api.UserPropertyError):
        return str(error)
    marker = f"{api.UserPropertyError.__name__}: "
    text = str(error)
    return text.split(marker, 1)[1].strip() if marker in text else None


class OneLineErrors(click.Group):
    """A click group whose errors are one line on stderr with exit code 2."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        # shown in the help only: main() takes --debug off the command line wherever it is
        self.params.append(click.Option(
            [DEBUG_FLAG], is_flag=True, expose_value=False,
            help="print the traceback when an invariant of your own raises (anywhere on "
                 "the command line)"))

    def invoke(self, ctx: click.Context) -> Any:
        """Run the command; standard output closed by its reader ends it with
        ``BROKEN_PIPE`` and no message (what it would still print goes nowhere)."""
        try:
            return super().invoke(ctx)
        except BrokenPipeError:
            devnull = os.open(os.devnull, os.O_WRONLY)
            with contextlib.suppress(OSError, ValueError):
                os.dup2(devnull, sys.stdout.fileno())  # the buffered rest is flushed there
            os.close(devnull)
            ctx.exit(BROKEN_PIPE)

    def make_context(
        self, info_name: str | None, args: list[str], parent: click.Context | None = None,
        **extra: Any,
    ) -> click.Context:
        """The root context, remembering the command line and when it started (UTC) for
        ``run_metadata``."""
        argv, started = ["isrlab", *args], datetime.now(UTC)
        ctx = super().make_context(info_name, args, parent, **extra)
        ctx.meta[_ARGV] = argv
        ctx.meta[_STARTED] = started
        return ctx

    def main(
        self, args: Sequence[str] | None = None, prog_name: str | None = None,
        complete_var: str | None = None, standalone_mode: bool = True, **extra: Any,
    ) -> Any:
        """Run the command line; in standalone mode turn click's errors into one line."""
        words = list(sys.argv[1:] if args is None else args)
        debug = DEBUG_FLAG in words[:words.index("--")] if "--" in words else (
            DEBUG_FLAG in words)
        if debug:
            words.remove(DEBUG_FLAG)
        if not standalone_mode:
            return super().main(words, prog_name, complete_var, False, **extra)
        try:
            code = super().main(words, prog_name, complete_var, False, **extra)
        except click.exceptions.NoArgsIsHelpError as error:
            click.echo(error.ctx.get_help())
            sys.exit(0)
        except click.ClickException as error:
            message = " ".join(error.format_message().split())
            click.echo(f"isrlab: error: {message}", err=True)
            sys.exit(2 if isinstance(error, click.UsageError) else error.exit_code)
        except (OutputError, InputError) as error:  # the user's path, option or model
            click.echo(f"isrlab: error: {' '.join(str(error).split())}", err=True)
            sys.exit(2)
        except (click.Abort, KeyboardInterrupt):
            _say_interrupted()
        except Exception as error:
            if _interrupt_in_foreign_call(error):
                _say_interrupted()
            yours = user_error(error)
            if yours is not None:  # the user's own invariant raised: their bug, one line
                if debug:
                    traceback.print_exc()
                hint = "" if debug else f" ({DEBUG_FLAG} prints its traceback)"
                click.echo(f"isrlab: error: {yours}{hint}", err=True)
                sys.exit(2)
            # a model's (or isrlab's) bug: not a violation, not bad input
            traceback.print_exc()
            summary = " ".join(f"{type(error).__name__}: {error}".split())
            click.echo(f"isrlab: error: {summary[:500]} (raised while running: a bug in the "
                       "model or in isrlab; its traceback is above)", err=True)
            sys.exit(CRASHED)
        sys.exit(code if isinstance(code, int) else 0)


def _say_interrupted() -> NoReturn:
    """Say ``isrlab: interrupted`` and exit 130, with finalisers' errors silenced from now on.
    Ctrl-C can land inside a library object's constructor (z3's ``AstRef`` before it sets
    ``ctx``); when the interrupted frames are freed, that half-built object's ``__del__``
    fails, and Python would print the failure as an ignored exception with its traceback
    after our one line.  The process is ending on the user's request: nothing a finaliser
    says then is news."""
    sys.unraisablehook = _ignore_unraisable
    click.echo("isrlab: interrupted", err=True)
    sys.exit(INTERRUPTED)


def _ignore_unraisable(_unraisable: Any) -> None:
    """``sys.unraisablehook`` once the run is interrupted: drop the report."""


def _interrupt_in_foreign_call(error: Exception) -> bool:
    """Whether ``error`` is Ctrl-C arriving while ctypes converted a foreign call's argument
    (a Z3 call of ``bmc`` or ``prove``): ctypes replaces the KeyboardInterrupt by an
    ``ArgumentError`` that only names it ("argument 1: KeyboardInterrupt: ")."""
    return (isinstance(error, ctypes.ArgumentError)
            and re.match(r"argument \d+: KeyboardInterrupt\b", str(error)) is not None)


_ARGV, _STARTED = "isrlab.argv", "isrlab.started"


def run_metadata() -> dict[str, Any]:
    """What makes a JSON report self-describing: the isrlab version, the command line (a list
    of words) and when the command started (UTC, ISO 8601, whole seconds)."""
    ctx = click.get_current_context(silent=True)
    meta = ctx.find_root().meta if ctx is not None else {}
    started = meta.get(_STARTED) or datetime.now(UTC)
    return {
        "isrlab_version": __version__,
        "command": list(meta.get(_ARGV, ["isrlab", *sys.argv[1:]])),
        "timestamp": started.replace(microsecond=0).strftime("%Y-%m-%dT%H:%M:%SZ"),
    }


def with_run_metadata(result: CheckResult) -> CheckResult:
    """``result`` whose JSON report also carries ``run_metadata()``."""
    return replace(result, extra={**run_metadata(), **result.extra})


def resolve_model(
    name: str, assignments: Sequence[str]
) -> tuple[ModelEntry, dict[str, ParamValue], Model[Any]]:
    """The model ``name`` names (a registered name, ``path/to/file.py:NAME`` or
    ``package.module:NAME``, see ``isrlab.api``) built with ``key=value`` parameters (after
    those of a ``--config`` run file, which they override), or ``BadInput``."""
    from_file = config_params()
    try:
        found = api.entry(name)
    except api.ModelError as error:
        raise BadInput(str(error)) from error
    if from_file:
        try:
            api.parse(found, from_file)
        except api.ModelError as error:  # the run file's parameters: name the file
            raise BadInput(f"{_config_path()}: {_shorter(str(error), found)}") from error
    try:
        values = api.parse(found, [*from_file, *assignments])
        return found, values, api.build(found, values)
    except api.ModelError as error:
        raise BadInput(_shorter(str(error), found)) from error


_NO_PARAMETER = re.compile(r"^(model '[^']*' has no parameter '([^']*)') \(parameters: .*\)$")


def _shorter(message: str, entry: ModelEntry) -> str:
    """An unknown parameter's message with the closest names instead of all of them (the
    kafka model's are 49, one line of 700 characters)."""
    match = _NO_PARAMETER.match(message)
    if match is None:
        return message
    names = [p.name for p in entry.params]
    close = difflib.get_close_matches(match.group(2), names, n=3, cutoff=0.6)
    hint = f"; did you mean {' or '.join(close)}?" if close else ""
    return (f"{match.group(1)}{hint} (`isrlab models {entry.name}` lists its "
            f"{len(names)} parameters)")


# -- run files (--config run.toml) ----------------------------------------------------------

_CONFIG_PARAMS, _CONFIG_PATH = "isrlab.config_params", "isrlab.config_path"
RUN_FILE_COMMANDS = ("check", "simulate", "bmc", "explore")
"""The commands taking ``--config``; a run file may hold a ``[name]`` table for each."""
_COMMON_KEYS = ("model", "params", "invariants")


def _config_path() -> str:
    ctx = click.get_current_context(silent=True)
    return str(ctx.meta.get(_CONFIG_PATH, "the run file")) if ctx is not None else ""


def config_params() -> list[str]:
    """The ``key=value`` parameters the current command's ``--config`` file sets (none
    without one); ``resolve_model`` puts them before the command line's ``-p``."""
    ctx = click.get_current_context(silent=True)
    return list(ctx.meta.get(_CONFIG_PARAMS, [])) if ctx is not None else []


def _value_text(value: Any) -> str:
    return str(value).lower() if isinstance(value, bool) else str(value)


def _option_keys(command: click.Command) -> dict[str, str]:
    """A run file's key for each option of ``command`` (``max-depth`` or ``max_depth``) ->
    the option's parameter name; not ``--config``, ``-p`` or ``--help``."""
    keys: dict[str, str] = {}
    for param in command.params:
        if not isinstance(param, click.Option) or param.name in (None, "params", "config"):
            continue
        for opt in param.opts:
            if opt.startswith("--"):
                keys[opt[2:]] = keys[opt[2:].replace("-", "_")] = param.name
    return keys


def load_run_file(ctx: click.Context, path: Path) -> None:
    """Apply run file ``path`` to ``ctx``'s command: its options become the command's
    defaults (a flag on the command line overrides one), its ``params`` table and
    ``invariants`` the first ``-p`` values.  ``BadInput`` on TOML that is not a run file."""
    import tomllib

    try:
        data = tomllib.loads(path.read_text(encoding="utf-8-sig"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as error:
        raise BadInput(f"{path}: not a TOML run file ({error})") from error
    command = ctx.command
    keys = _option_keys(command)
    root = ctx.find_root().command
    siblings = [root.commands[n] for n in RUN_FILE_COMMANDS
                if isinstance(root, click.Group) and n in root.commands]
    elsewhere = {k for other in siblings for k in _option_keys(other)}
    # top-level keys: for every command that has them (another run command's are skipped);
    # a [command] table: for that command only
    entries = {k: v for k, v in data.items()
               if k not in RUN_FILE_COMMANDS and (k in keys or k not in elsewhere)}
    own = data.get(str(command.name), {})
    if not isinstance(own, dict):
        raise BadInput(f"{path}: [{command.name}] must be a table")
    entries.update(own)
    defaults: dict[str, Any] = {}
    assignments: list[str] = []
    for key, value in entries.items():
        if key == "params":
            if not isinstance(value, dict):
                raise BadInput(f"{path}: params must be a table of key = value")
            assignments += [f"{k}={_value_text(v)}" for k, v in value.items()]
        elif key == "invariants":
            names = value if isinstance(value, list) else [value]
            assignments.append("invariants=" + ",".join(str(n) for n in names))
        elif key == "model":
            if not isinstance(value, str):  # model = 3 read as "unknown model '3'"
                raise BadInput(f"{path}: model must be text, a model's name in quotes "
                               f"(got {value!r})")
            defaults["model_name"] = value
        elif key in keys:
            defaults[keys[key]] = _converted(path, key, value, command, ctx, keys[key])
        else:
            known = sorted({*_COMMON_KEYS, *(k for k in keys if "_" not in k or "-" in k)})
            raise BadInput(f"{path}: unknown key {key!r} for `isrlab {command.name}` "
                           f"(known: {', '.join(known)})")
    ctx.default_map = {**(ctx.default_map or {}), **defaults}
    ctx.meta[_CONFIG_PARAMS] = assignments
    ctx.meta[_CONFIG_PATH] = str(path)


def _converted(path: Path, key: str, value: Any, command: click.Command, ctx: click.Context,
               name: str) -> Any:
    """``value`` as option ``name`` of ``command`` takes it, or ``BadInput`` naming the file
    and the key (a number where a path belongs, text where a number does)."""
    param = next(p for p in command.params if p.name == name)
    try:
        if isinstance(value, dict | list):
            raise click.BadParameter(f"a {type(value).__name__} is not one value")
        if isinstance(param.type, click.Path) and not isinstance(value, str):
            raise click.BadParameter("a path must be text, in quotes")
        flag = isinstance(param, click.Option) and (param.is_flag or param.is_bool_flag)
        if flag and not isinstance(value, bool):
            raise click.BadParameter("a flag is true or false")
        return param.type.convert(value, param, ctx)
    except (click.BadParameter, TypeError, ValueError, OverflowError) as error:
        message = error.format_message() if isinstance(error, click.ClickException) else error
        raise BadInput(f"{path}: {key} = {value!r}: {message}") from error


def _config_callback(ctx: click.Context, _param: click.Parameter, value: Path | None) -> None:
    if value is not None:
        load_run_file(ctx, value)


CONFIG_OPTION = click.option(
    "--config", type=click.Path(exists=True, dir_okay=False, path_type=Path), is_eager=True,
    expose_value=False, callback=_config_callback,
    help="a TOML run file: model, params, invariants and this command's options (docs/api.md); "
         "a flag on the command line overrides it")
"""The ``--config run.toml`` option of ``check``, ``simulate``, ``bmc`` and ``explore``."""


def say_not_written(path: Path, wrote: bool, what: str = "no counterexample") -> None:
    """Say that an output was not written (a run without a counterexample) unless ``wrote``."""
    if not wrote:
        click.echo(f"{what}: {path} not written")


def write_run_outputs(
    result: CheckResult, model: Model[Any] | None, json_path: Path | None,
    itf_path: Path | None, svg_path: Path | None,
) -> None:
    """``--json`` (with ``run_metadata``), ``--itf`` and ``--svg`` of a run, each given; the
    counterexample's files say so when there is none."""
    if json_path is not None:
        with_run_metadata(result).write_json(json_path)
    if itf_path is not None:
        say_not_written(itf_path, write_result_itf(itf_path, result))
    if svg_path is not None:
        say_not_written(svg_path, write_result_svg(svg_path, result, model))


def params_text(params: Mapping[str, ParamValue]) -> str:
    """``key=value`` pairs, sorted, for messages."""
    return " ".join(f"{k}={v}" for k, v in sorted(params.items()))


def _same_file(a: Path, b: Path) -> bool:
    fd_a, fd_b = descriptor_of(a), descriptor_of(b)
    if fd_a is not None or fd_b is not None:
        return fd_a == fd_b
    if a.resolve() == b.resolve():
        return True
    try:
        return os.path.samefile(a, b)
    except OSError:
        return False


def _files_read() -> dict[str, Path]:
    """The files the current command reads besides its arguments: the ``--config`` run file
    and the model's own file (``--model path/to/file.py:NAME``)."""
    ctx = click.get_current_context(silent=True)
    if ctx is None:
        return {}
    found: dict[str, Path] = {}
    config = ctx.meta.get(_CONFIG_PATH)
    if config:
        found["--config"] = Path(config)
    model = ctx.params.get("model_name")
    target = model.rpartition(":")[0] if isinstance(model, str) else ""
    if target.endswith(".py"):
        found["--model"] = Path(target)
    return found


def check_outputs(
    outputs: Mapping[str, Path | None], inputs: Mapping[str, Path | None] | None = None
) -> None:
    """Refuse, before any work starts, outputs that could not be written or would destroy
    something: ``outputs`` and ``inputs`` map an option's name (``--json``, ``TRACE``) to its
    path (``None``: not given).  ``BadInput`` (one line, exit 2) when an output could not be
    written (its directory missing, read-only or not a real directory, as under /proc; the
    output a directory; a descriptor not open for writing: ``writable_problem``), an output
    is ``-`` (standard output to ``models --json`` and ``validate --json``, which handle it
    before; here it would be a file named ``-``), two outputs name one file, or an output
    names an input: one of ``inputs`` or a file the command reads anyway, its ``--config``
    run file and a ``--model path/to/file.py:NAME`` (``_files_read``)."""
    inputs = {**_files_read(), **(inputs or {})}
    given = [(option, path) for option, path in outputs.items() if path is not None]
    for option, path in given:
        if str(path) == "-":  # where another command's option means standard output
            raise BadInput(f"{option} -: this option writes a file, not the standard output; "
                           "name a file")
        problem = writable_problem(path)
        if problem is not None:
            raise BadInput(f"{option}: cannot write {str(path)!r}: {problem}")
    for index, (option, path) in enumerate(given):
        for other, other_path in given[index + 1:]:
            if _same_file(path, other_path):
                raise BadInput(f"{option} and {other} name the same file {str(path)!r}")
        for name, source in inputs.items():
            if source is not None and _same_file(path, source):
                raise BadInput(f"{option} {str(path)!r} is the input {name}; "
                               "refusing to overwrite it")
