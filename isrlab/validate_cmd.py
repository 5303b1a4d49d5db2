"""``isrlab validate``: check that a trace (JSON Lines, ITF, or a Kafka broker log) is a
behaviour of a model, by constrained breadth-first search (``checker.validate``).

Exit status: 0 the trace is accepted, 1 it is rejected (no behaviour matches, or every
matching behaviour breaks an invariant), 2 bad input (unreadable trace, unknown action or
variable, ill-typed value, unknown model or parameter): one line, never a traceback.
"""

from __future__ import annotations

import json
import re
from dataclasses import replace
from pathlib import Path
from typing import Any

import click

from checker.model import Model
from checker.trace import itf_value, violation_text, write_itf
from checker.validate import (
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

_PARAM_HELP = "model parameter key=value (repeatable); see `isrlab models`"
FORMATS = ("auto", "jsonl", "itf", "kafka-log")
_LOG_LINE = re.compile(r"\[?\d{4}-\d\d-\d\d[ T]\d")


def detect_format(text: str) -> str:
    """``itf`` for one JSON document with a ``states`` array; ``kafka-log`` when the first
    non-blank line starts like a log4j line (``[2024-01-31 ...``) or names an ISR change;
    else ``jsonl``."""
    stripped = text.lstrip()
    first = stripped.split("\n", 1)[0]
    if _LOG_LINE.match(first) or ("ISR" in first and not first.startswith("{")):
        return "kafka-log"
    if stripped.startswith("{"):
        try:
            json.loads(first)
        except json.JSONDecodeError:
            return "itf"  # the first line is no whole JSON object: one multi-line document
        return "itf" if '"states"' in first else "jsonl"
    return "jsonl"


def read_observations(
    text: str, fmt: str, partition: str | None, brokers: str | None, hidden: int | None,
    emit: Path | None,
) -> list[Observation]:
    """The observations of a trace file's text in format ``fmt`` (``TraceFormatError``);
    ``hidden`` raises every step's allowance of unobserved steps before it."""
    if not text.strip():
        raise TraceFormatError("line 1", "the trace file is empty")
    if fmt == "auto":
        fmt = detect_format(text)
    if fmt == "kafka-log":
        return _read_kafka_log(text, partition, brokers, hidden, emit)
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
    return parse_itf_observations(document)


def _read_kafka_log(
    text: str, partition: str | None, brokers: str | None, hidden: int | None,
    emit: Path | None,
) -> list[Observation]:
    """A Kafka broker log turned into JSON Lines steps by ``spec.kafka_log`` (written to
    ``emit`` if given), then read as such."""
    from spec.kafka_log import DEFAULT_HIDDEN, read_broker_log  # Kafka-specific: on demand

    steps = read_broker_log(text, partition=partition, brokers=brokers,
                            hidden=DEFAULT_HIDDEN if hidden is None else hidden)
    if not steps:
        raise TraceFormatError("line 1", "no ISR or LeaderAndIsr line of this partition")
    lines = [json.dumps(step) for step in steps]
    if emit is not None:
        write_text_atomically(emit, "\n".join(lines) + "\n")
    return [
        observation_of_json(step, int(step.get("#line", index + 1)), first=index == 0,
                            text=str(step.get("#log", lines[index])))
        for index, step in enumerate(steps)
    ]


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
    if result.violation is not None:
        click.echo(f"every behaviour matching the trace up to step {result.steps} breaks an "
                   f"invariant; one of them:")
        click.echo(violation_text(result.violation))
        return
    if obs is None:
        return
    click.echo(f"{obs.where}: {obs.text}" if obs.text else obs.where)
    click.echo(f"observed: {obs.describe()}")
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


@click.command("validate")
@click.option("--model", "model_name", required=True, help=MODEL_HELP)
@click.option("-p", "--param", "params", multiple=True, help=_PARAM_HELP)
@click.option("--format", "fmt", type=click.Choice(FORMATS), default="auto", show_default=True,
              help="trace format (auto: ITF document, JSON Lines, else a Kafka broker log)")
@click.option("--hidden", type=click.IntRange(0), default=None,
              help="allow up to N unobserved model steps before every step (default: as the "
                   "trace says; Kafka logs: 4)")
@click.option("--closest", type=click.IntRange(1), default=3, show_default=True,
              help="closest model states shown on rejection")
@click.option("--max-frontier", type=click.IntRange(0), default=0,
              help="give up when more than N states match (0: no limit)")
@click.option("--witness", "witness_path", type=click.Path(dir_okay=False, path_type=Path),
              help="write a full behaviour of the model matching the trace (ITF)")
@click.option("--partition", default=None,
              help="Kafka log: the topic partition, e.g. orders-0 (default: the only one)")
@click.option("--brokers", default=None,
              help="Kafka log: broker ids in model order, e.g. 1,2,3 (default: the first "
                   "leader first, then ascending)")
@click.option("--emit-jsonl", type=click.Path(dir_okay=False, path_type=Path),
              help="Kafka log: also write the JSON Lines trace derived from it")
@click.argument("trace", type=click.Path(exists=True, dir_okay=False, path_type=Path))
def validate_command(
    model_name: str, params: tuple[str, ...], fmt: str, hidden: int | None, closest: int,
    max_frontier: int, witness_path: Path | None, partition: str | None,
    brokers: str | None, emit_jsonl: Path | None, trace: Path,
) -> None:
    """Check that TRACE is a behaviour of the model (unobserved values may be anything).

    Exit status: 0 accepted, 1 rejected, 2 bad input.
    """
    check_outputs({"--witness": witness_path, "--emit-jsonl": emit_jsonl}, {"TRACE": trace})
    _, _, model = resolve_model(model_name, params)
    try:
        text = trace.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as error:
        raise BadInput(f"cannot read {trace}: {error}") from error
    try:
        observations = read_observations(text, fmt, partition, brokers, hidden, emit_jsonl)
        suspects = check_against_model(model, observations)
    except TraceFormatError as error:
        raise BadInput(f"{trace}: {error}") from error
    result = validate(model, observations,
                      ValidateOptions(closest=closest, max_frontier=max_frontier))
    if not result.accepted and result.violation is None and result.failed is not None:
        _unknown_action(model, result.failed, suspects)
    click.echo(result.summary_line(model.name))
    if witness_path is not None and result.witness:
        write_itf(witness_path, result.witness, source=model.name,
                  description=f"a behaviour matching {trace.name}")
    if not result.accepted:
        report_rejection(result)
        raise SystemExit(1)

