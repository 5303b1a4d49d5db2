"""``isrlab render``: a trace as a message sequence chart (SVG), and the ``--svg`` helper the
other commands share."""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import click
from returns.result import Failure

from isrlab.checker.bfs import CheckOptions
from isrlab.checker.chart import render_svg
from isrlab.checker.graph import DOT_LIMIT, GraphTooLarge, dot_text, state_graph
from isrlab.checker.model import Model
from isrlab.checker.report import TraceStep, Violation, explanation_of
from isrlab.checker.trace import parse_itf
from isrlab.cli_support import BadInput, check_outputs, write_text_atomically
from isrlab.models import registry
from isrlab.spec.charts import chart_for


def invariant_words(model: Model[Any] | None, name: str) -> str:
    """The first paragraph of the property's docstring (less a leading ``NAME:``)."""
    if model is None:
        return ""
    for prop in (*model.invariants(), *model.sometimes()):
        if prop.name == name:
            words = " ".join(prop.doc.split("\n\n")[0].split())
            return words.removeprefix(f"{name}:").strip()
    return ""


def explanation_words(model: Model[Any] | None, name: str, state: Mapping[str, Any]) -> str:
    """Why the variables ``state`` break the invariant ``name`` (its ``Property.explain``),
    ``""`` when the model has no such invariant or it does not explain itself."""
    if model is None:
        return ""
    for prop in model.invariants():
        if prop.name == name:
            return explanation_of(prop, state)
    return ""


def note_words(model: Model[Any] | None, name: str, state: Mapping[str, Any]) -> str:
    """The chart's VIOLATED note under its heading: the invariant's words, then (a paragraph
    of its own) why ``state`` breaks it."""
    words, why = invariant_words(model, name), explanation_words(model, name, state)
    return f"{words}\nWhy: {why}" if why else words


def _model_named(name: str, invariant: str | None) -> Model[Any] | None:
    """The registered model ``name`` with default parameters (checking ``invariant`` if the
    model takes an ``invariants`` parameter), or ``None`` when no model has that name.
    ``BadInput`` when ``invariant`` is no property of that model."""
    entry = registry().entries.get(name)
    if entry is None:
        return None
    assignments = [f"invariants={invariant}"] if invariant and any(
        p.name == "invariants" for p in entry.params) else []
    parsed = registry().parse_params(entry, assignments)
    if isinstance(parsed, Failure):
        raise BadInput(f"--invariant {invariant!r}, model {name!r}: {parsed.failure()}")
    try:
        model = entry.build(parsed.unwrap())
    except ValueError as error:
        if assignments:  # the model refuses the invariant's name (kafka: an unknown name)
            raise BadInput(f"--invariant {invariant!r}, model {name!r}: {error}") from error
        return None
    except Exception:  # a model that cannot be built with defaults: no words, still a chart
        return None
    known = [p.name for p in (*model.invariants(), *model.sometimes())]
    if invariant is not None and invariant not in known:
        raise BadInput(f"--invariant {invariant!r} is no property of model {name!r} "
                       f"(its properties: {', '.join(known) or 'none'})")
    return model


def trace_svg(
    trace: Sequence[TraceStep], title: str, model: Model[Any] | None = None,
    invariant: str | None = None, current: int | None = None,
) -> str:
    """The SVG chart of ``trace``; the last state is marked violating ``invariant`` if given."""
    violation = None
    if invariant is not None:
        state = trace[-1].state if trace else {}
        violation = (invariant, note_words(model, invariant, state))
    return render_svg(chart_for(trace, title, violation), current)


def write_svg(
    path: Path, trace: Sequence[TraceStep], title: str, model: Model[Any] | None = None,
    invariant: str | None = None,
) -> None:
    """Write ``trace_svg`` to ``path``."""
    write_text_atomically(path, trace_svg(trace, title, model, invariant))


SVG_OPTION = click.option(
    "--svg", "svg_path", type=click.Path(dir_okay=False, path_type=Path),
    help="draw the counterexample as a message sequence chart (SVG) here")
DOT_OPTIONS = (
    click.option("--dot", "dot_path", type=click.Path(dir_okay=False, path_type=Path),
                 help="write the explored state graph as Graphviz DOT here (small runs only: "
                      "see --dot-limit), like TLC's -dump dot"),
    click.option("--dot-limit", type=click.IntRange(1), default=DOT_LIMIT, show_default=True,
                 help="--dot refuses (exit 2) a state graph with more states than this"),
)


def write_violation_svg(
    path: Path, violation: Violation | None, source: str, model: Model[Any] | None,
    engine: str,
) -> None:
    """``--svg``: the chart of a counterexample, or a line saying there is none."""
    if violation is None:
        click.echo(f"no counterexample: {path} not written")
        return
    title = f"{source}: {violation.invariant} violated ({engine})"
    try:
        write_svg(path, violation.trace, title, model, violation.invariant)
    except OSError as error:
        raise BadInput(f"cannot write {path}: {error}") from error


def write_dot(
    path: Path, model: Model[Any], limit: int, options: CheckOptions
) -> None:
    """``--dot``: the state graph the check explores (its depth, state bound, symmetry and
    stop at the first violation) as DOT, or ``BadInput`` (exit 2) above ``limit`` states."""
    try:
        graph = state_graph(model, limit, options.max_depth, options.symmetry,
                            options.stop_at_first, options.max_states)
    except GraphTooLarge as error:
        raise BadInput(f"--dot: the state graph has {error}; draw a smaller model or raise "
                       f"--dot-limit") from error
    try:
        write_text_atomically(path, dot_text(graph, model.name))
    except OSError as error:
        raise BadInput(f"cannot write {path}: {error}") from error


@click.command("render")
@click.argument("trace", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.option("-o", "--output", "out", required=True,
              type=click.Path(dir_okay=False, path_type=Path), help="the SVG file to write")
@click.option("--invariant", default=None,
              help="the violated property to mark on the last state (default: the one the "
                   "trace's description names, 'NAME violated (...)')")
def render_command(trace: Path, out: Path, invariant: str | None) -> None:
    """Draw an ITF trace (from `isrlab check --itf`) as a message sequence chart in SVG.

    Brokers and the controller are lifelines; LeaderAndIsr, UpdateMetadata, fetches and ISR
    writes are arrows; each broker's log, LEO, HW, epoch and ISR are noted where they change.
    """
    check_outputs({"-o": out}, {"TRACE": trace})
    try:
        document = json.loads(trace.read_text(encoding="utf-8-sig"))  # a BOM is no error
        steps = parse_itf(document)
    except (OSError, UnicodeDecodeError, ValueError, KeyError, TypeError, AttributeError,
            RecursionError) as e:
        raise BadInput(f"{trace}: not an ITF trace ({type(e).__name__}: {e})") from e
    if not steps:
        raise BadInput(f"{trace}: the trace has no states")
    meta = document.get("#meta", {}) if isinstance(document, dict) else {}
    source = str(meta.get("source", "")) if isinstance(meta, dict) else ""
    description = str(meta.get("description", "")) if isinstance(meta, dict) else ""
    if invariant is None:
        match = re.match(r"^(\w+) violated\b", description)
        invariant = match.group(1) if match else None
    model = _model_named(source, invariant)
    title = f"{source or trace.name}: {description}" if description else (source or trace.name)
    try:
        write_svg(out, steps, title, model, invariant)
    except OSError as error:
        raise BadInput(f"cannot write {out}: {error}") from error
    click.echo(f"wrote {out} ({len(steps)} states)")
