"""``isrlab check`` (exhaustive breadth-first search) and ``isrlab simulate`` (random walks)."""

from __future__ import annotations

import json
import re
import sys
import textwrap
import time
from pathlib import Path
from typing import Any

import click

from isrlab.api import describe
from isrlab.checker.bfs import CheckOptions, Progress
from isrlab.checker.model import Model
from isrlab.checker.report import CheckResult
from isrlab.checker.simulate import SimulateOptions
from isrlab.checker.trace import result_text
from isrlab.cli_support import (
    CONFIG_OPTION,
    DOT_OPTIONS,
    EVALUATION_FAILED,
    INCOMPLETE,
    ITF_OPTION,
    JSON_OPTION,
    MODEL_HELP,
    SVG_OPTION,
    BadInput,
    Seconds,
    check_outputs,
    resolve_model,
    say_not_written,
    with_run_metadata,
    write_run_outputs,
    write_text_atomically,
)
from isrlab.cli_support import PARAM_HELP as _PARAM_HELP
from isrlab.models import registry
from isrlab.services import runs
from isrlab.services.engines import ENGINES, Engine
from isrlab.services.reading import known_finding, renumbering_note
from isrlab.services.rendering import (
    write_dot,
    write_lasso_itf,
)

LOG_INTERVAL_S = 30.0
"""Seconds between progress lines when stderr is not a terminal (a CI log)."""

_PROGRESS_HELP = ("progress on stderr (default: on; rewritten in place on a terminal, else one "
                  "line per --progress-interval)")
_INTERVAL_HELP = (f"seconds between progress updates (default: 1 on a terminal, "
                  f"{LOG_INTERVAL_S:.0f} in a log)")


class _Display:
    """Progress on stderr: one line rewritten in place (``\\r``) on a terminal, else a plain
    ``progress: ...`` line per update, which a CI log keeps readable."""

    def __init__(self, progress: bool | None, interval_s: float | None) -> None:
        self.enabled = progress is not False
        self.in_place = sys.stderr.isatty()
        default = 1.0 if self.in_place else LOG_INTERVAL_S
        self.interval_s = default if interval_s is None else interval_s
        self.width = 0

    def show(self, text: str) -> None:
        if not self.enabled:
            return
        if not self.in_place:
            sys.stderr.write(f"progress: {text}\n")
            sys.stderr.flush()
            return
        self.width = max(self.width, len(text))
        sys.stderr.write("\r" + text.ljust(self.width))
        sys.stderr.flush()

    def bfs(self, p: Progress) -> None:
        rate = p.generated / p.elapsed_s if p.elapsed_s > 0 else 0.0
        # with several workers a level's new states are counted only once merged, so an
        # expanded level's queue is empty while the merge runs: say so, not "queue 0"
        queue = f"queue {p.queue:,}" if p.queue else "merging the level's new states"
        self.show(
            f"depth {p.level}  distinct {p.distinct:,}  generated {p.generated:,}  "
            f"{queue}  {rate:,.0f} states/s  {p.elapsed_s:,.0f} s"
        )

    def done(self) -> None:
        if self.enabled and self.in_place and self.width:
            sys.stderr.write("\r" + " " * self.width + "\r")
            sys.stderr.flush()


def _report(
    result: CheckResult, json_path: Path | None, itf_path: Path | None,
    fail_on_incomplete: bool = False, svg_path: Path | None = None,
    model: Model[Any] | None = None, coverage: bool = False,
) -> None:
    """Print the summary (and trace, with why its last state breaks the property), write the
    requested files (also when the reader of the output stopped reading: ``isrlab check
    ... --svg t.svg | head``), exit 0, 1, 3 (the model's evaluation error) or 4."""
    try:
        click.echo(result_text(result))
        for note in (renumbering_note(result.violation), known_finding(result)):
            if note:
                click.echo(note)
        if coverage:
            text = runs.coverage_text(result, model)
            if text:
                click.echo(text)
    except BrokenPipeError:
        write_run_outputs(result, model, json_path, itf_path, svg_path)
        raise
    write_run_outputs(result, model, json_path, itf_path, svg_path)
    if result.evaluation_error:
        sys.exit(EVALUATION_FAILED)
    if not result.ok:
        sys.exit(1)
    sys.exit(INCOMPLETE if fail_on_incomplete and not result.complete else 0)


@click.command()
@CONFIG_OPTION
@click.option("--model", "model_name", required=True, help=MODEL_HELP)
@click.option("-p", "--param", "params", multiple=True, help=_PARAM_HELP)
@click.option("--symmetry", is_flag=True, help="reduce by the model's symmetry")
@click.option("--workers", type=click.IntRange(1, 64), default=1, show_default=True,
              help="worker processes (states partitioned by fingerprint)")
@click.option("--max-depth", type=click.IntRange(1), default=None,
              help="explore at most this many BFS levels (initial states = level 1)")
@click.option("--max-states", type=click.IntRange(1), default=None,
              help="stop after the level in which this many distinct states are reached")
@click.option("--continue", "keep_going", is_flag=True,
              help="go on after a violation; report one shortest trace per property")
@click.option("--deadlock", is_flag=True, help="report states without successors")
@click.option("--liveness", is_flag=True,
              help="then check the model's temporal properties under its fairness "
                   "(docs/checker.md, Liveness)")
@JSON_OPTION
@ITF_OPTION
@click.option("--run-dir", type=click.Path(file_okay=False, path_type=Path),
              help="persist each BFS level here; rerun with it to resume")
@click.option("--progress/--no-progress", default=None, help=_PROGRESS_HELP)
@click.option("--progress-interval", "interval_s", type=Seconds(0, min_open=True),
              default=None, help=_INTERVAL_HELP)
@click.option("--fail-on-incomplete", is_flag=True,
              help="exit 4 when --max-states or --max-depth stopped the search before it "
                   "covered every reachable state (for CI)")
@SVG_OPTION
@DOT_OPTIONS[0]
@DOT_OPTIONS[1]
@DOT_OPTIONS[2]
# -- spark_explore's options (owned by the Spark engine) --
@click.option("--engine", type=click.Choice(ENGINES), default="bfs",
              show_default=True, help="bfs: this machine; spark: level-synchronous BFS on Spark")
@click.option("--master", default=None,
              help="Spark master URL, e.g. spark://host:7077 (implies --engine spark; "
                   "default local[*])")
@click.option("--buckets", type=click.IntRange(1, 100_000), default=None,
              help="Spark engine: fingerprint buckets (Spark partitions) of every level "
                   "(default 4 per core); raise it when one bucket's share of a level does "
                   "not fit a Python worker's memory; a resumed run keeps its first number")
def check(
    model_name: str, params: tuple[str, ...], symmetry: bool, workers: int,
    max_depth: int | None, max_states: int | None, keep_going: bool, deadlock: bool,
    liveness: bool, json_path: Path | None, itf_path: Path | None, run_dir: Path | None,
    progress: bool | None, interval_s: float | None, fail_on_incomplete: bool, engine: str,
    master: str | None, buckets: int | None, svg_path: Path | None, dot_path: Path | None,
    dot_limit: int, dot_labels: str,
) -> None:
    """Explore a model breadth-first and check every invariant on every reachable state.

    Exit status: 0 when every invariant (and with --liveness every temporal property)
    holds, 1 on a violation, 2 on bad input, 3 when the model cannot evaluate a reachable
    state's next step (the spec's own error, as TLC's evaluation error: reported with the
    trace reaching that state), 4 with --fail-on-incomplete when a bound stopped the search
    without a violation, 130 on Ctrl-C.
    """
    check_outputs({"--json": json_path, "--itf": itf_path, "--svg": svg_path,
                   "--dot": dot_path})
    entry, values, model = resolve_model(model_name, params)
    display = _Display(progress, interval_s)
    options = CheckOptions(
        symmetry=symmetry, workers=workers, max_depth=max_depth, max_states=max_states,
        stop_at_first=not keep_going, check_deadlock=deadlock, run_dir=run_dir,
        params=values, progress=display.bfs, progress_interval_s=display.interval_s,
    )
    chosen = Engine(engine, master, buckets, progress is not False)
    runs.check_preconditions(model, model_name, entry.symmetric, options, chosen, liveness)
    if dot_path is not None:
        write_dot(dot_path, model, dot_limit, options, dot_labels == "full")
    try:
        result = runs.check(model, options, chosen)
    finally:
        display.done()
    if liveness and result.ok:
        _report_liveness(result, model, display, json_path, itf_path)
    if liveness:
        click.echo("--liveness: temporal properties not checked (the plain check failed)",
                   err=True)
    _report(result, json_path, itf_path, fail_on_incomplete, svg_path, model, coverage=True)


def _report_liveness(
    result: CheckResult, model: Model[Any], display: _Display, json_path: Path | None,
    itf_path: Path | None,
) -> None:
    """Check the temporal properties after a clean safety check; print both results, write
    the files (the first lasso as ITF with its loop) and exit 0 or 1."""
    def shown(states: int, steps: int, seconds: float) -> None:
        display.show(f"liveness graph: {states:,} states  {steps:,} steps  {seconds:,.0f} s")

    try:
        live = runs.liveness(model, progress=shown)
    finally:
        display.done()
    click.echo(result_text(result))
    click.echo(live.text())
    if json_path is not None:
        with_run_metadata(runs.with_liveness(result, live)).write_json(json_path)
    if itf_path is not None:
        say_not_written(itf_path, write_lasso_itf(itf_path, result, live))
    sys.exit(0 if live.ok else 1)


@click.command("simulate")
@CONFIG_OPTION
@click.option("--model", "model_name", required=True, help=MODEL_HELP)
@click.option("-p", "--param", "params", multiple=True, help=_PARAM_HELP)
@click.option("--seed", type=int, default=0, show_default=True, help="random seed")
@click.option("--walks", type=click.IntRange(1), default=100, show_default=True,
              help="number of random walks")
@click.option("--depth", type=click.IntRange(1), default=100, show_default=True,
              help="at most this many states per walk")
@click.option("--deadlock", is_flag=True, help="report states without successors")
@JSON_OPTION
@ITF_OPTION
@click.option("--progress/--no-progress", default=None, help=_PROGRESS_HELP)
@click.option("--progress-interval", "interval_s", type=Seconds(0, min_open=True),
              default=None, help=_INTERVAL_HELP)
@SVG_OPTION
def simulate_command(
    model_name: str, params: tuple[str, ...], seed: int, walks: int, depth: int,
    deadlock: bool, json_path: Path | None, itf_path: Path | None, progress: bool | None,
    interval_s: float | None, svg_path: Path | None,
) -> None:
    """Check every invariant along seeded random walks; the same seed replays the same walks.

    Exit status: 0 when no walk broke an invariant, 1 on a violation, 2 on bad input, 3 when
    the model cannot evaluate a visited state's next step (the spec's own error).
    """
    check_outputs({"--json": json_path, "--itf": itf_path, "--svg": svg_path})
    _, values, model = resolve_model(model_name, params)
    display = _Display(progress, interval_s)
    started = time.monotonic()
    last = [started]

    def tick(done: int, visited: int) -> None:
        now = time.monotonic()
        if now - last[0] >= display.interval_s:
            last[0] = now
            display.show(f"walks {done:,}/{walks:,}  states {visited:,}  "
                         f"{visited / max(now - started, 1e-9):,.0f} states/s")

    options = SimulateOptions(
        seed=seed, walks=walks, depth=depth, check_deadlock=deadlock, params=values,
        progress=tick,
    )
    try:
        result = runs.simulate(model, options)
    finally:
        display.done()
    _report(result, json_path, itf_path, False, svg_path, model)


SHORT_DOC = 90
"""``isrlab models`` cuts a parameter's text to its first clause, at most this long."""

SHORT_LINE = 160
"""... and its whole line (name, choices, default and text) to at most this long."""


SHORT_CLAUSE = 24
"""... and a first clause shorter than this (less a leading ``with controller=kraft,``)
says too little alone ("KAFKA-7414", "with controller=kraft, KIP-903"): the next joins it."""

_QUALIFIER = re.compile(r"^(?:\[fault\] )?(?:with [^,:(]+[,:] )?")


def short_doc(doc: str, room: int = SHORT_DOC) -> str:
    """A parameter's text cut to its first clause (before `` (`` or ``: ``) that says
    something (``SHORT_CLAUSE``), at most ``room`` characters (``SHORT_DOC`` by default);
    ``isrlab models NAME`` prints it whole."""
    skip = _QUALIFIER.match(doc)
    start = skip.end() if skip else 0
    cuts = sorted({m.start() for m in re.finditer(r" \(|: ", doc)})
    cut = next((i for i in cuts if i - start >= SHORT_CLAUSE), len(doc))
    text = doc[:cut].rstrip(" ,;")
    if len(text) > room:
        text = text[:room - 3].rsplit(" ", 1)[0] + "..."
    return text + (" ..." if cut < len(doc) and not text.endswith("...") else "")


SHORT_DEFAULT = 40
"""A default longer than this (a list of invariants) is cut in ``isrlab models``' list."""


def _param_head(param: Any, full: bool = True) -> str:
    """``-p name=<type>`` (a choice: its values), ``[fault]`` and the default (cut to
    ``SHORT_DEFAULT`` characters unless ``full``)."""
    kind = "|".join(param.choices) if param.choices else f"<{param.type.__name__}>"
    fault = " [fault]" if param.fault else ""
    # as -p takes it: true/false, and an empty text as ""
    default = (str(param.default).lower() if isinstance(param.default, bool)
               else str(param.default) or '""')
    if not full and len(default) > SHORT_DEFAULT:
        default = default[:SHORT_DEFAULT].rsplit(",", 1)[0] + ",..."
    return f"-p {param.name}={kind}{fault} (default {default})"


@click.command("models")
@click.argument("name", required=False)
@click.option("--json", "json_path", metavar="FILE", default=None, is_flag=False,
              flag_value="-", type=click.Path(dir_okay=False, allow_dash=True, path_type=Path),
              help="write a JSON list to FILE: each model's parameters (type, default, "
                   "bounds), invariants and sometimes properties; '-' (or --json last): "
                   "print it instead of the text")
@click.option("--vars", "vars_of", metavar="MODEL", default=None,
              help="list the variables of MODEL a user's invariant may read "
                   "(v[\"name\"]...), with an example value and their meaning")
@click.option("-p", "--param", "params", multiple=True,
              help="with --vars: " + _PARAM_HELP)
def models_command(name: str | None, json_path: Path | None, vars_of: str | None,
                   params: tuple[str, ...]) -> None:
    """List the registered models: parameters (in short), invariants, sometimes properties.

    With NAME: that model's parameters and properties in full.
    """
    if vars_of is not None:
        if json_path is not None:
            raise BadInput("--json lists the models; --vars MODEL prints text only")
        _print_variables(vars_of, params)
        return
    if params:
        raise BadInput("-p applies to --vars MODEL")
    name, json_path = _models_json_target(name, json_path)
    check_outputs({"--json": None if json_path == STDOUT else json_path})
    names = registry().names()
    if name is not None:
        if name not in registry().entries:
            raise BadInput(f"unknown model {name!r} (models: {', '.join(names)})")
        names = [name]
    if json_path is not None:
        text = json.dumps([describe(registry().entries[n]) for n in names], indent=1)
        if json_path == STDOUT:
            click.echo(text)
            return
        try:
            write_text_atomically(json_path, text + "\n")
        except OSError as error:
            raise BadInput(f"--json: cannot write {str(json_path)!r}: {error}") from error
    for each in names:
        _print_model(each, full=name is not None)
    if name is None:
        click.echo("\n`isrlab models NAME`: a model's texts in full; `isrlab models --vars "
                   "NAME`: the variables your own invariants read")


STDOUT = Path("-")
"""``models --json -``: the JSON list printed instead of the text."""


def _models_json_target(name: str | None, json_path: Path | None
                        ) -> tuple[str | None, Path | None]:
    """NAME and ``--json FILE``.  ``--json`` was a flag, so ``models --json tla-kip320``
    (the flag, then NAME) still prints that model's JSON: a FILE spelled as a registered
    model's name, with no NAME given, is the NAME (``--json ./kafka`` writes a file)."""
    if (name is None and json_path is not None and json_path != STDOUT
            and str(json_path) in registry().entries):
        return str(json_path), STDOUT
    return name, json_path


def _print_model(name: str, full: bool) -> None:
    """One model: its line, its parameters (each cut to one clause unless ``full``), its
    invariants and ``sometimes`` properties (with their texts when ``full``)."""
    entry = registry().entries[name]
    described = describe(entry)
    symmetric = " (symmetric)" if entry.symmetric else ""
    click.echo(f"{name}{symmetric}: {entry.doc}")
    for param in entry.params:
        head = f"    {_param_head(param, full)}: "
        room = max(30, min(SHORT_DOC, SHORT_LINE - len(head) - 4))
        doc = param.doc.removeprefix("[fault] ") if param.fault else param.doc  # in the head
        click.echo(head + (doc if full else short_doc(doc, room)))
    for kind in ("invariants", "sometimes"):
        props = described[kind]
        if not props:
            continue
        if full:
            click.echo(f"    {kind}:")
            for prop in props:
                words = " ".join(str(prop["doc"]).split()).removeprefix(f"{prop['name']}:")
                click.echo(f"      {prop['name']}: {words.strip()}")
        else:
            click.echo(textwrap.fill(", ".join(str(p["name"]) for p in props), width=100,
                                     initial_indent=f"    {kind}: ",
                                     subsequent_indent="        ", break_on_hyphens=False))


def _print_variables(spec: str, params: tuple[str, ...]) -> None:
    """``models --vars``: each variable path, how an invariant reads it, an example value
    (from the first reachable states) and its meaning."""
    from isrlab.variables import access, variable_rows

    entry, _, model = resolve_model(spec, params)
    shown = " ".join(f"-p {p}" for p in params)
    click.echo(f"Variables of {entry.name}{' ' + shown if shown else ''}: a user invariant "
               "takes them as its argument v (see docs/api.md); broker0, r1 and p0 stand for "
               "every broker, replica and process")
    for path, example, meaning in variable_rows(entry.name, model):
        click.echo(f"  {access(path)}  e.g. {example}")
        if meaning:
            click.echo(f"      {meaning}")
