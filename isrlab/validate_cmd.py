"""``isrlab validate``: check that a trace (JSON Lines, ITF, or a Kafka broker log) is a
behaviour of a model, by constrained breadth-first search (``isrlab.checker.validate``).

Exit status: 0 the trace is accepted (a behaviour of the model, every invariant holds),
1 it is rejected (no behaviour of the model matches), 3 it is a behaviour of the model and
every behaviour matching it breaks an invariant, 2 bad input (unreadable trace, not a log,
unknown format, action or variable, ill-typed value, unknown model or parameter,
contradictory ``--brokers``): one line, never a traceback.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from isrlab.checker.model import Model
from isrlab.checker.trace import itf_value, violation_text, write_itf
from isrlab.checker.validate import (
    Observation,
    TraceFormatError,
    ValidateOptions,
    ValidationResult,
    action_name,
    check_observation,
    discover_action_names,
    observation_of_json,
    parse_itf_observations,
    parse_jsonl,
    validate,
)
from isrlab.cli_support import (
    MODEL_HELP,
    BadInput,
    check_outputs,
    resolve_model,
    write_text_atomically,
)
from isrlab.render_cmd import SVG_OPTION, write_svg, write_violation_svg

if TYPE_CHECKING:
    from isrlab.spec.kafka_log import KafkaLogTrace

_PARAM_HELP = "model parameter key=value (repeatable); see `isrlab models`"
FORMATS = ("auto", "jsonl", "itf", "kafka-log")
EXIT_ACCEPTED, EXIT_REJECTED, EXIT_BAD_INPUT, EXIT_BREAKS_INVARIANT = 0, 1, 2, 3
"""The exit statuses of ``isrlab validate`` (documented in docs/oracle.md)."""


def detect_format(text: str) -> str:
    """``itf`` for one JSON document with a ``states`` array; ``kafka-log`` when one of the
    first lines carries a timestamp followed by a level, whatever precedes it (a log4j or
    logback pattern, a docker-compose prefix); else ``jsonl``."""
    from isrlab.spec.kafka_log import looks_like_kafka_log

    stripped = text.lstrip()
    first = stripped.split("\n", 1)[0]
    if looks_like_kafka_log(text):
        return "kafka-log"
    if stripped.startswith("{"):
        try:
            json.loads(first)
        except (json.JSONDecodeError, RecursionError):
            return "itf"  # the first line is no whole JSON object: one multi-line document
        return "itf" if '"states"' in first else "jsonl"
    if stripped and not stripped.startswith(("{", "#", "[")) and not _is_json(first):
        raise TraceFormatError("line 1", "not a trace: neither JSON (JSON Lines, ITF) nor a "
                               "log whose lines start with a timestamp and a level")
    return "jsonl"


def _is_json(text: str) -> bool:
    try:
        json.loads(text)
    except (json.JSONDecodeError, RecursionError):
        return False
    return True


def read_observations(
    text: str, fmt: str, partition: str | None, brokers: str | None, hidden: int | None,
    emit: Path | None, *, model: Model[Any] | None = None, level: str | None = None,
    more: Sequence[tuple[str, str]] = (), name: str = "log",
) -> list[Observation]:
    """The observations of a trace file's text in format ``fmt`` (``TraceFormatError``);
    ``hidden`` raises every step's allowance of unobserved steps before it.  A Kafka log
    may come with ``more`` files (``(name, text)``), merged by timestamp; with the ``kafka``
    ``model`` its hidden steps are restricted to those the logs would not show."""
    if not text.strip():
        raise TraceFormatError("line 1", "the trace file is empty")
    if fmt == "auto":
        fmt = detect_format(text)
    if fmt == "kafka-log":
        trace = _kafka_trace([(name, text), *more], partition, brokers, hidden, level)
        return kafka_log_observations(trace, emit, model)
    if more:
        raise TraceFormatError("arguments", "several trace files are read only as Kafka logs")
    observations = parse_jsonl(text) if fmt == "jsonl" else _read_itf(text)
    if hidden is None:
        return observations
    return [o if o.initial else replace(o, hidden=max(o.hidden, hidden)) for o in observations]


def _read_itf(text: str) -> list[Observation]:
    """One ITF document's observations."""
    try:
        document = json.loads(text)
    except json.JSONDecodeError as error:
        raise TraceFormatError(f"line {error.lineno}", f"malformed JSON: {error.msg}") from error
    except RecursionError:
        raise TraceFormatError("line 1", "malformed JSON: nested too deeply") from None
    return parse_itf_observations(document)


def _kafka_trace(
    files: Sequence[tuple[str, str]], partition: str | None, brokers: str | None,
    hidden: int | None, level: str | None,
) -> KafkaLogTrace:
    """The steps of one partition in a cluster's Kafka logs (``isrlab.spec.kafka_log``)."""
    from isrlab.spec.kafka_log import DEFAULT_HIDDEN, read_broker_logs  # Kafka-specific: on demand

    for name, text in files:
        if not text.strip():
            raise TraceFormatError(name, "the log file is empty")
    return read_broker_logs(files, partition=partition, brokers=brokers, level=level,
                            hidden=DEFAULT_HIDDEN if hidden is None else hidden)


def kafka_log_observations(
    trace: KafkaLogTrace, emit: Path | None, model: Model[Any] | None,
) -> list[Observation]:
    """The observations of a Kafka log's steps (written to ``emit`` as JSON Lines if
    given); with the ``kafka`` model each step's hidden steps follow ``hidden_rule``."""
    from isrlab.spec.kafka_log import hidden_rule

    steps = trace.steps
    lines = [json.dumps(step) for step in steps]
    if emit is not None:
        write_text_atomically(emit, "\n".join(lines) + "\n")
    out = []
    for index, step in enumerate(steps):
        where = str(step["#file"]) if "#file" in step else None
        obs = observation_of_json(step, int(step.get("#line", index + 1)), first=index == 0,
                                  text=str(step.get("#log", lines[index])),
                                  where=where)
        if where:
            obs = replace(obs, place=where)
        if model is not None and model.name == "kafka" and not obs.initial:
            obs = replace(obs, hidden_ok=hidden_rule(model.variables, trace.covered[index],
                                                     trace.family, trace.ids))
        out.append(obs)
    return out


def check_against_model(model: Model[Any], observations: list[Observation]) -> set[str]:
    """Reject unknown variables and ill-typed values (``TraceFormatError``); return the
    action names the trace uses that a bounded search of the model did not meet."""
    reference = model.variables(next(iter(model.init_states())))
    checked: dict[tuple[str, int], Any] = {}
    for obs in observations:
        check_observation(obs, reference, obs.where, checked)
    used = {obs.action for obs in observations if obs.action is not None}
    used |= {action_name(obs.label) for obs in observations
             if obs.label is not None and "*" not in obs.label and "?" not in obs.label}
    if not used:
        return set()
    known = discover_action_names(model, max_states=2_000)
    return used - known


def _unknown_action(model: Model[Any], obs: Observation, suspects: set[str]) -> None:
    """A rejection at an action no search of the model has met is bad input (exit 2)."""
    name = obs.action if obs.action is not None else (
        action_name(obs.label) if obs.label is not None else None)
    if name is None or name not in suspects:
        return
    known = discover_action_names(model, max_states=50_000)
    if name not in known:
        raise BadInput(f"{obs.where}: unknown action {name!r} "
                       f"(actions of the model: {', '.join(sorted(known))})")


def _show_value(value: Any) -> str:
    return json.dumps(itf_value(value)) if not isinstance(value, str) else repr(value)


def report_rejection(result: ValidationResult) -> None:
    """Print where the trace left the model and the closest states it allowed there."""
    obs = result.failed
    if result.matched and result.violation is not None:
        step = result.violation_step
        where = f" ({step.where}: {step.text})" if step is not None and step.text else ""
        click.echo(f"{result.violation.invariant} is broken at step "
                   f"{(result.violation_index or 0) + 1}{where} by every matching behaviour; "
                   f"one of them:")
        click.echo(violation_text(result.violation))
        return
    if obs is None:
        return
    click.echo(f"{obs.where}: {obs.text}" if obs.text else obs.where)
    click.echo(f"observed: {obs.describe()}")
    if result.blocked:
        click.echo(f"a behaviour would match only with a hidden step the logs would show: "
                   f"{result.blocked}")
    if not result.closest:
        click.echo("the model allows no step there (every behaviour has ended)")
        return
    click.echo(f"closest states the model allowed there ({len(result.closest)} of "
               f"{result.candidates:,} candidate states):")
    for rank, near in enumerate(result.closest, start=1):
        count = len(near.mismatches)
        click.echo(f"  {rank}. {near.label}: {count} mismatch{'es' if count != 1 else ''}")
        for mismatch in near.mismatches:
            click.echo(f"       {mismatch.text()}")


def _write_svg(path: Path, result: ValidationResult, model: Model[Any], trace: Path) -> None:
    """``--svg``: the chart of the behaviour breaking an invariant, else of the witness."""
    if result.violation is not None:
        write_violation_svg(path, result.violation, model.name, model, "validate")
    elif result.witness:
        write_svg(path, result.witness, f"{model.name}: a behaviour matching {trace.name}",
                  model)
    else:
        click.echo(f"no behaviour to draw: {path} not written")


@click.command("validate")
@click.option("--model", "model_name", default=None,
              help=MODEL_HELP + " (default: the model an isrlab ITF trace names)")
@click.option("-p", "--param", "params", multiple=True, help=_PARAM_HELP)
@click.option("--format", "fmt", type=click.Choice(FORMATS), default="auto", show_default=True,
              help="trace format (auto: ITF document, JSON Lines, else a Kafka broker log)")
@click.option("--hidden", type=click.IntRange(0), default=None,
              help="allow up to N unobserved model steps before every step (default: as the "
                   "trace says; Kafka logs: 4, of the kinds the logs would not show)")
@click.option("--closest", type=click.IntRange(1), default=3, show_default=True,
              help="closest model states shown on rejection")
@click.option("--max-frontier", type=click.IntRange(0), default=0,
              help="give up when more than N states match (0: no limit)")
@click.option("--witness", "witness_path", type=click.Path(dir_okay=False, path_type=Path),
              help="write a full behaviour of the model matching the trace (ITF)")
@click.option("--json", "as_json", is_flag=True,
              help="print the verdict as one JSON object (verdict, matched length, the "
                   "step and line of a rejection, the invariant broken)")
@click.option("--partition", default=None,
              help="Kafka log: the topic partition, e.g. orders-0 (default: the only one)")
@click.option("--brokers", default=None,
              help="Kafka log: broker ids in model order, e.g. 1,2,3 (default: the first "
                   "leader first, then ascending)")
@click.option("--log-level", type=click.Choice(("TRACE", "DEBUG", "INFO")), default=None,
              help="Kafka log: the level the logs were written at (default: the most verbose "
                   "level of each file's lines)")
@click.option("--emit-jsonl", type=click.Path(dir_okay=False, path_type=Path),
              help="Kafka log: also write the JSON Lines trace derived from it")
@SVG_OPTION
@click.argument("traces", nargs=-1, required=True,
                type=click.Path(exists=True, dir_okay=False, path_type=Path))
def validate_command(
    model_name: str | None, params: tuple[str, ...], fmt: str, hidden: int | None,
    closest: int, max_frontier: int, witness_path: Path | None, as_json: bool,
    partition: str | None, brokers: str | None, log_level: str | None,
    emit_jsonl: Path | None, svg_path: Path | None, traces: tuple[Path, ...],
) -> None:
    """Check that TRACES are a behaviour of the model (unobserved values may be anything).

    Several TRACES are the Kafka logs of one cluster (server.log, state-change.log, one or
    more per broker), merged by timestamp.  Exit status: 0 accepted, 1 rejected, 3 a
    behaviour of the model that breaks an invariant, 2 bad input.
    """
    check_outputs({"--witness": witness_path, "--emit-jsonl": emit_jsonl, "--svg": svg_path},
                  {f"TRACE {path}": path for path in traces})
    texts = [(path, _read(path)) for path in traces]
    trace = traces[0]
    text = texts[0][1]
    try:
        if fmt == "auto" and text.strip():
            fmt = detect_format(text)
        model_name, params = _model_of(text, fmt, model_name, params, trace)
        log: KafkaLogTrace | None = None
        if fmt == "kafka-log":
            log = _kafka_trace([(str(p), t) for p, t in texts], partition, brokers, hidden,
                               log_level)
            if model_name == "kafka" and not any(p.startswith("brokers=") for p in params):
                params = (*params, f"brokers={max(len(log.ids), 1)}")
            if model_name == "kafka" and not any(p.startswith("isr_changes=")
                                                 for p in params):
                # A broker log shows an ISR change as one change (the leader's line, then
                # AlterIsr's 'ISR updated' from 2.7); the controller's side of the round
                # trip is in the controller log, which is not read: one step, as the
                # leader's own ZooKeeper write (docs/oracle.md).
                params = (*params, "isr_changes=zookeeper")
        elif len(texts) > 1:
            raise TraceFormatError("arguments", "several trace files are read only as Kafka "
                                   "logs")
    except TraceFormatError as error:
        raise BadInput(f"{trace}: {error}") from error
    _, values, model = resolve_model(model_name, params)
    try:
        if log is not None:
            observations = kafka_log_observations(log, emit_jsonl, model)
        else:
            observations = read_observations(text, fmt, partition, brokers, hidden, emit_jsonl)
        suspects = check_against_model(model, observations)
    except TraceFormatError as error:
        raise BadInput(f"{trace}: {error}") from error
    result = validate(model, observations,
                      ValidateOptions(closest=closest, max_frontier=max_frontier))
    if result.verdict == "rejected" and result.failed is not None:
        _unknown_action(model, result.failed, suspects)
    if as_json:
        click.echo(json.dumps(result.to_json(model.name), sort_keys=True))
    else:
        click.echo(result.summary_line(model.name))
    if witness_path is not None and result.witness:
        write_itf(witness_path, result.witness, source=model.name, parameters=values,
                  description=f"a behaviour matching {trace.name}")
    if svg_path is not None:
        _write_svg(svg_path, result, model, trace)
    if result.verdict == "rejected":
        if not as_json:
            report_rejection(result)
        raise SystemExit(EXIT_REJECTED)
    if result.verdict == "breaks-invariant":
        if not as_json:
            report_rejection(result)
        raise SystemExit(EXIT_BREAKS_INVARIANT)


def _read(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as error:
        raise BadInput(f"cannot read {path}: {error}") from error


def _model_of(
    text: str, fmt: str, model_name: str | None, params: tuple[str, ...], trace: Path,
) -> tuple[str, tuple[str, ...]]:
    """The model and parameters to validate against: as given; for an ITF trace written by
    isrlab, the model its ``#meta`` names, and its parameters when no ``-p`` is given."""
    meta: dict[str, Any] = {}
    if fmt == "itf":
        try:
            document = json.loads(text)
        except (json.JSONDecodeError, RecursionError):
            document = {}
        if isinstance(document, dict) and isinstance(document.get("#meta"), dict):
            meta = document["#meta"]
    named = meta.get("model")
    if model_name is None:
        if not isinstance(named, str) or not named:
            raise TraceFormatError("--model", "is required (the trace does not name its model)")
        model_name = named
    recorded = meta.get("parameters")
    if not params and named == model_name and isinstance(recorded, dict):
        params = tuple(f"{k}={str(v).lower() if isinstance(v, bool) else v}"
                       for k, v in recorded.items())
    return model_name, params
