"""Rendering: a trace as a message sequence chart (SVG), the explored state graph as
Graphviz DOT, a run's counterexample as an ITF trace; shared by ``isrlab render``, the
``--svg``/``--dot``/``--itf`` options of the other commands, the explorer and ``isrlab.api``.

Every writer replaces its file atomically (``isrlab.checker.atomic``); a writer of a
counterexample returns whether there was one to write (the commands then say so)."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from returns.result import Failure

from isrlab.checker.atomic import write_text_atomically
from isrlab.checker.bfs import CheckOptions
from isrlab.checker.chart import render_svg
from isrlab.checker.graph import GraphTooLarge, dot_text, state_graph
from isrlab.checker.liveness import LivenessResult, lasso_itf_meta
from isrlab.checker.model import Model
from isrlab.checker.report import (
    EVALUATION_ERROR,
    CheckResult,
    TraceStep,
    Violation,
    explanation_of,
)
from isrlab.checker.trace import parse_itf, write_itf
from isrlab.models import registry
from isrlab.services import InputError
from isrlab.spec.charts import chart_for


# ---------------------------------------------------------------------- the words of a chart
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


# ---------------------------------------------------------------------- sequence charts
EVALUATION_WORDS = ("the model cannot evaluate the next step of this state (as TLC's "
                    "evaluation error), so the search stopped here")
"""The chart's words under an ``EvaluationError`` (the model's own error, not a violation)."""


def trace_svg(
    trace: Sequence[TraceStep], title: str, model: Model[Any] | None = None,
    invariant: str | None = None, current: int | None = None, width: float | None = None,
    error: str = "",
) -> str:
    """The SVG chart of ``trace``; the last state is marked violating ``invariant`` if
    given (``EvaluationError``: the model's ``error`` there, its action and message);
    state ``current`` (1-based) is shaded if given; its lifelines share ``width`` px if
    given and their natural layout is wider (``render_svg``)."""
    violation = None
    if invariant == EVALUATION_ERROR:
        violation = (invariant, f"{EVALUATION_WORDS}: {error}" if error else EVALUATION_WORDS)
    elif invariant is not None:
        state = trace[-1].state if trace else {}
        violation = (invariant, note_words(model, invariant, state))
    return render_svg(chart_for(trace, title, violation), current, width)


def write_svg(
    path: Path, trace: Sequence[TraceStep], title: str, model: Model[Any] | None = None,
    invariant: str | None = None, error: str = "",
) -> None:
    """Write ``trace_svg`` to ``path``."""
    write_text_atomically(path, trace_svg(trace, title, model, invariant, error=error))


def _write_svg_or_say(
    path: Path, trace: Sequence[TraceStep], title: str, model: Model[Any] | None,
    invariant: str | None, error: str = "",
) -> None:
    """``write_svg``; ``InputError`` naming ``path`` when it cannot be written."""
    try:
        write_svg(path, trace, title, model, invariant, error)
    except OSError as error_:
        raise InputError(f"cannot write {path}: {error_}") from error_


def _headline(violation: Violation, engine: str) -> str:
    """``NAME violated (engine)``, or for the model's own error ``EvaluationError (engine):
    ...`` (no invariant was violated)."""
    if violation.invariant == EVALUATION_ERROR:
        return f"{EVALUATION_ERROR} ({engine}): the next step of the last state cannot be evaluated"
    return f"{violation.invariant} violated ({engine})"


def write_violation_svg(
    path: Path, violation: Violation | None, source: str, model: Model[Any] | None,
    engine: str,
) -> bool:
    """The chart of a counterexample, titled with its model ``source`` and ``engine``;
    ``False`` (nothing written) when there is none."""
    if violation is None:
        return False
    title = f"{source}: {_headline(violation, engine)}"
    _write_svg_or_say(path, violation.trace, title, model, violation.invariant,
                      violation.explanation)
    return True


def write_result_svg(path: Path, result: CheckResult, model: Model[Any] | None) -> bool:
    """``--svg`` of a run: the chart of its counterexample (``False`` when it has none)."""
    return write_violation_svg(path, result.violation, result.model, model, result.engine)


def model_named(name: str, invariant: str | None) -> Model[Any] | None:
    """The registered model ``name`` with default parameters (checking ``invariant`` if the
    model takes an ``invariants`` parameter), or ``None`` when no model has that name.
    ``InputError`` when ``invariant`` is no property of that model."""
    entry = registry().entries.get(name)
    if entry is None:
        return None
    assignments = [f"invariants={invariant}"] if invariant and any(
        p.name == "invariants" for p in entry.params) else []
    parsed = registry().parse_params(entry, assignments)
    if isinstance(parsed, Failure):
        raise InputError(f"--invariant {invariant!r}, model {name!r}: {parsed.failure()}")
    try:
        model = entry.build(parsed.unwrap())
    except ValueError as error:
        if assignments:  # the model refuses the invariant's name (kafka: an unknown name)
            raise InputError(f"--invariant {invariant!r}, model {name!r}: {error}") from error
        return None
    except Exception:  # a model that cannot be built with defaults: no words, still a chart
        return None
    known = [p.name for p in (*model.invariants(), *model.sometimes())]
    if invariant is not None and invariant not in known:
        raise InputError(f"--invariant {invariant!r} is no property of model {name!r} "
                         f"(its properties: {', '.join(known) or 'none'})")
    return model


def render_itf(trace: Path, out: Path, invariant: str | None = None) -> int:
    """Draw the ITF trace in file ``trace`` (as ``isrlab check --itf`` writes it) as a
    sequence chart in ``out``; the property marked violated on its last state is
    ``invariant``, else the one its description names (``NAME violated (...)``), and its
    words come from the registered model the trace names.  Returns the number of states;
    ``InputError`` for a file that is no ITF trace."""
    from isrlab.services.traces import read_itf_document

    document = read_itf_document(trace)  # as explore reads it: a BOM is no error
    try:
        steps = parse_itf(document)
    except ValueError as e:  # parse_itf says what is wrong, and where
        raise InputError(f"{trace}: {e}") from e
    if not steps:
        raise InputError(f"{trace}: the trace has no states")
    meta = document.get("#meta", {}) if isinstance(document, dict) else {}
    source = str(meta.get("source", "")) if isinstance(meta, dict) else ""
    description = str(meta.get("description", "")) if isinstance(meta, dict) else ""
    if invariant is None:
        match = re.match(r"^(\w+) violated\b", description)
        invariant = match.group(1) if match else None
        if description.startswith(EVALUATION_ERROR):  # the model's error: no invariant
            invariant = EVALUATION_ERROR
    error = ""
    if invariant == EVALUATION_ERROR:
        error = str(meta.get("explanation", "")) if isinstance(meta, dict) else ""
        model = model_named(source, None)
    else:
        model = model_named(source, invariant)
    title = f"{source or trace.name}: {description}" if description else (source or trace.name)
    _write_svg_or_say(out, steps, title, model, invariant, error)
    return len(steps)


# ---------------------------------------------------------------------- state graphs
def write_dot(
    path: Path, model: Model[Any], limit: int, options: CheckOptions, full: bool = False,
) -> None:
    """The state graph a check explores (its depth, state bound, symmetry and stop at the
    first violation) as Graphviz DOT in ``path``, each state labelled with what changed
    from the state it was first reached from (``full``: with every variable);
    ``InputError`` above ``limit`` states."""
    try:
        graph = state_graph(model, limit, options.max_depth, options.symmetry,
                            options.stop_at_first, options.max_states)
    except GraphTooLarge as error:
        raise InputError(f"--dot: the state graph has {error}; draw a smaller model or raise "
                         f"--dot-limit") from error
    try:
        write_text_atomically(path, dot_text(graph, model.name, full))
    except OSError as error:
        raise InputError(f"cannot write {path}: {error}") from error


# ---------------------------------------------------------------------- ITF counterexamples
def write_result_itf(path: Path, result: CheckResult) -> bool:
    """A run's counterexample as an ITF trace (its model, parameters, engine and why its
    last state breaks the invariant in ``#meta``); ``False`` when it has none."""
    if result.violation is None:
        return False
    write_itf(path, result.violation.trace, source=result.model, parameters=result.params,
              description=_headline(result.violation, result.engine),
              explanation=result.violation.explanation)
    return True


def write_lasso_itf(path: Path, result: CheckResult, live: LivenessResult) -> bool:
    """The first lasso of a liveness check as an ITF trace with its loop; ``False`` when
    every temporal property holds."""
    if live.ok:
        return False
    first = live.violations[0]
    write_itf(path, first.lasso.trace, source=result.model, parameters=result.params,
              loop=first.lasso.loop, loop_meta=lasso_itf_meta(first),
              description=f"{first.property} violated (liveness lasso)")
    return True
