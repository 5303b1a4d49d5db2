"""``isrlab validate``: check that a trace (JSON Lines, ITF) is a behaviour of a model, by
constrained breadth-first search (``isrlab.checker.validate``), or judge a Kafka cluster's
broker logs with the log oracle (``isrlab.spec.oracle``); the reading is
``isrlab.services.traces``'s.

Exit status: 0 the trace is accepted (a behaviour of the model, every invariant holds),
1 it is rejected (no behaviour of the model matches; a log line breaks a rule of Kafka's
code), 3 it is a behaviour of the model and every behaviour matching it breaks an invariant,
4 not covered (a Kafka log the oracle cannot judge: lines it does not read, no line about a
partition's replication), 2 bad input (unreadable trace, not a log, unknown format, action
or variable, ill-typed value, unknown model or parameter, contradictory ``--brokers``): one
line, never a traceback.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from isrlab.checker.model import Model
from isrlab.checker.trace import violation_text, write_itf
from isrlab.checker.validate import TraceFormatError, ValidateOptions, ValidationResult
from isrlab.cli_support import (
    MODEL_HELP,
    SVG_OPTION,
    BadInput,
    Seconds,
    check_outputs,
    resolve_model,
    run_metadata,
    write_text_atomically,
)
from isrlab.services import InputError
from isrlab.services.rendering import write_svg, write_violation_svg
from isrlab.services.traces import (
    FORMATS,
    detect_format,
    follow_kafka_logs,
    judge_kafka_logs,
    kafka_log_observations,
    kafka_log_verdict,
    kafka_model_params,
    kafka_trace,
    model_of,
    oracle_params,
    read_observations,
    validate_observations,
)

if TYPE_CHECKING:
    from isrlab.spec.kafka_log import KafkaLogTrace
    from isrlab.spec.oracle.run import Verdict

_PARAM_HELP = "model parameter key=value (repeatable); see `isrlab models`"
EXIT_ACCEPTED, EXIT_REJECTED, EXIT_BAD_INPUT, EXIT_BREAKS_INVARIANT = 0, 1, 2, 3
EXIT_NOT_COVERED = 4
"""The exit statuses of ``isrlab validate`` (documented in docs/oracle.md)."""

__all__ = ["EXIT_NOT_COVERED", "FORMATS", "detect_format", "validate_command"]


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
    click.echo(f"observed: {result.observed_text()}")
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
              help=MODEL_HELP + " (default: the model an isrlab ITF trace names; kafka for a "
                   "Kafka log)")
@click.option("-p", "--param", "params", multiple=True, help=_PARAM_HELP)
@click.option("--format", "fmt", type=click.Choice(FORMATS), default="auto", show_default=True,
              help="trace format (auto: ITF document, JSON Lines, else a Kafka broker log)")
@click.option("--engine", type=click.Choice(("oracle", "model")), default="oracle",
              show_default=True,
              help="Kafka log: judged by the log oracle (the rules of Kafka's code, any offset "
                   "and epoch, logs from mid-history), or as a trace of the bounded kafka "
                   "model from topic creation (model)")
@click.option("--hidden", type=click.IntRange(0), default=None,
              help="allow up to N unobserved model steps before every step (default: as the "
                   "trace says; Kafka logs with --engine model: 4, of the kinds the logs would "
                   "not show)")
@click.option("--closest", type=click.IntRange(1), default=3, show_default=True,
              help="closest model states shown on rejection")
@click.option("--max-frontier", type=click.IntRange(0), default=0,
              help="give up when more than N states match (0: no limit)")
@click.option("--witness", "witness_path", type=click.Path(dir_okay=False, path_type=Path),
              help="write a full behaviour of the model matching the trace (ITF)")
@click.option("--json", "json_path", metavar="FILE", default=None, is_flag=False,
              flag_value="-", type=click.Path(dir_okay=False, allow_dash=True, path_type=Path),
              help="write the verdict as one JSON object (verdict, matched length, the step "
                   "and line of a rejection, the invariant broken) to FILE, as check's --json "
                   "does; '-' (or --json last): print it instead of the text")
@click.option("--partition", default=None,
              help="Kafka log: the topic partition, e.g. orders-0, or all (one verdict each; "
                   "default: the only one)")
@click.option("--brokers", default=None,
              help="Kafka log: the cluster's broker ids, e.g. 1,2,3 (with --engine model, in "
                   "model order; default: the replicas the log names)")
@click.option("--log-level", type=click.Choice(("TRACE", "DEBUG", "INFO")), default=None,
              help="Kafka log, --engine model: the level the logs were written at (default: "
                   "the most verbose level of each file's lines)")
@click.option("--emit-jsonl", type=click.Path(dir_okay=False, path_type=Path),
              help="Kafka log, --engine model: also write the JSON Lines trace derived from it")
@click.option("--follow", is_flag=True,
              help="Kafka log: keep reading the files as the cluster writes them, print each "
                   "verdict change, exit at the first rejection")
@click.option("--idle-exit", type=Seconds(0), default=None,
              help="with --follow: exit when no line was written for this many seconds")
@SVG_OPTION
@click.argument("traces", nargs=-1, required=False,
                type=click.Path(exists=True, dir_okay=False, path_type=Path))
def validate_command(
    model_name: str | None, params: tuple[str, ...], fmt: str, engine: str, hidden: int | None,
    closest: int, max_frontier: int, witness_path: Path | None, json_path: Path | None,
    partition: str | None, brokers: str | None, log_level: str | None,
    emit_jsonl: Path | None, follow: bool, idle_exit: float | None, svg_path: Path | None,
    traces: tuple[Path, ...],
) -> None:
    """Check that TRACES are a behaviour of the model (unobserved values may be anything),
    or judge a Kafka cluster's logs by the rules of Kafka's code.

    Several TRACES are the Kafka logs of one cluster (server.log, state-change.log, one or
    more per broker), merged by timestamp.  Exit status: 0 accepted, 1 rejected, 3 a
    behaviour that breaks an invariant, 4 not covered (a Kafka log the oracle cannot
    judge), 2 bad input.
    """
    json_path, traces = _json_target(json_path, traces)
    as_json = json_path == STDOUT
    json_file = None if json_path in (None, STDOUT) else json_path
    check_outputs({"--witness": witness_path, "--emit-jsonl": emit_jsonl, "--svg": svg_path,
                   "--json": json_file}, {f"TRACE {path}": path for path in traces})
    trace = traces[0]
    text = _read(trace, head=True)
    if not text.strip() and not _read(trace).strip():
        # before asking for the --model an empty file cannot name
        empty = [p for p in traces if p == trace or not _read(p).strip()]
        if len(empty) == len(traces):
            what = "log" if fmt == "kafka-log" else "trace"
            raise BadInput(f"{trace}: line 1: the {what} file is empty")
    try:
        if fmt == "auto" and len(traces) > 1:
            fmt = "kafka-log"  # several files are only ever a cluster's Kafka logs
        elif fmt == "auto" and text.strip():
            fmt = detect_format(text)
        if fmt != "kafka-log" or engine == "model":
            text = _read(trace)
        model_name, params = model_of(text, fmt, model_name, params)
        if fmt != "kafka-log" and len(traces) > 1:
            raise TraceFormatError("arguments", "several trace files are read only as Kafka "
                                   "logs")
        if fmt != "kafka-log" and follow:
            raise TraceFormatError("--follow", "follows Kafka logs only")
    except TraceFormatError as error:
        raise BadInput(f"{trace}: {error}") from error
    if fmt == "kafka-log" and model_name == "kafka" and engine == "oracle":
        model_only = {"--witness": witness_path, "--emit-jsonl": emit_jsonl, "--svg": svg_path,
                      "--log-level": log_level, "--hidden": hidden}
        for option, value in model_only.items():
            if value is not None:
                raise BadInput(f"{option}: a Kafka log judged by the oracle has no model "
                               f"behaviour or hidden steps; use --engine model")
        _judge(traces, params, partition, brokers, json_path, follow, idle_exit)
        return
    texts = [(path, text if path == trace else _read(path)) for path in traces]
    log: KafkaLogTrace | None = None
    try:
        if fmt == "kafka-log":
            log = kafka_trace([(str(p), t) for p, t in texts], partition, brokers, hidden,
                              log_level)
            params = kafka_model_params(log, model_name, params)
    except TraceFormatError as error:
        raise BadInput(_named(traces, error)) from error
    _, values, model = resolve_model(model_name, params)
    try:
        if log is not None:
            observations = kafka_log_observations(log, emit_jsonl, model)
        else:
            observations = read_observations(text, fmt, partition, brokers, hidden, emit_jsonl)
        result = validate_observations(
            model, observations, ValidateOptions(closest=closest, max_frontier=max_frontier))
        if log is not None:
            result = kafka_log_verdict(log, result)
    except (TraceFormatError, InputError) as error:
        raise BadInput(f"{trace}: {error}") from error
    if as_json:
        click.echo(json.dumps(result.to_json(model.name), sort_keys=True))
    else:
        click.echo(result.summary_line(model.name))
    if json_file is not None:
        _write_json(json_file, result.to_json(model.name))
    if witness_path is not None and result.witness:
        write_itf(witness_path, result.witness, source=model.name, parameters=values,
                  description=f"a behaviour matching {trace.name}")
    if svg_path is not None:
        _write_svg(svg_path, result, model, trace)
    if result.verdict == "not-covered":
        raise SystemExit(EXIT_NOT_COVERED)
    if result.verdict == "rejected":
        if not as_json:
            report_rejection(result)
        raise SystemExit(EXIT_REJECTED)
    if result.verdict == "breaks-invariant":
        if not as_json:
            report_rejection(result)
        raise SystemExit(EXIT_BREAKS_INVARIANT)


def _named(paths: Sequence[Path], error: Exception) -> str:
    """The error prefixed with the first file's name, unless it names one of ``paths``
    itself (a Kafka log's reader says which of several files: not "a.log: a.log: ...")."""
    text = str(error)
    if any(text.startswith(f"{p}:") for p in paths):
        return text
    return f"{paths[0]}: {text}"


def _judge(
    paths: Sequence[Path], params: tuple[str, ...], partition: str | None,
    brokers: str | None, json_path: Path | None, follow: bool, idle_exit: float | None,
) -> None:
    """A Kafka log judged by the oracle: one verdict per partition, exit the worst's."""
    from isrlab.spec.oracle.run import worst

    as_json = json_path == STDOUT
    _, values, _ = resolve_model("kafka", params)
    given = oracle_params(values, any(p.startswith("brokers=") for p in params))
    try:
        if follow:
            verdicts = follow_kafka_logs(paths, lambda v: _show(v, as_json),
                                         partition=partition, brokers=brokers, params=given,
                                         idle=idle_exit)
        else:
            verdicts = judge_kafka_logs([(str(p), p) for p in paths], partition=partition,
                                        brokers=brokers, params=given)
    except TraceFormatError as error:
        raise BadInput(_named(paths, error)) from error
    if not verdicts:
        click.echo("kafka: NOT COVERED: no line about a partition's replication was written")
        raise SystemExit(EXIT_NOT_COVERED)
    if json_path not in (None, STDOUT):
        _write_json(json_path, verdicts[0].to_json() if len(verdicts) == 1 else {
            "verdict": worst(verdicts).verdict, "partitions": [v.to_json() for v in verdicts]})
    if not follow:
        if as_json and len(verdicts) > 1:
            click.echo(json.dumps({"verdict": worst(verdicts).verdict,
                                   "partitions": [v.to_json() for v in verdicts]},
                                  sort_keys=True))
        else:
            for verdict in verdicts:
                _show(verdict, as_json)
    code = worst(verdicts).exit_code
    if code:
        raise SystemExit(code)


STDOUT = Path("-")
"""``--json -``: the verdict printed as JSON instead of the text."""
_REPORT_SIZE = 1 << 20
"""A verdict report is smaller than this; a larger file is read as a trace."""


def _is_report(path: Path) -> bool:
    """Whether regular file ``path`` is empty or holds a JSON verdict of ``validate --json``
    (an object with a ``verdict``), so that writing the next verdict loses nothing."""
    try:
        if path.stat().st_size > _REPORT_SIZE:
            return False
        text = path.read_text(encoding="utf-8-sig")
        return not text.strip() or "verdict" in json.loads(text)
    except (OSError, UnicodeDecodeError, ValueError, TypeError):
        return False


def _json_target(json_path: Path | None, traces: tuple[Path, ...]
                 ) -> tuple[Path | None, tuple[Path, ...]]:
    """``--json FILE`` and the TRACES.  The former flag ``--json`` took no file, so
    ``--json trace.jsonl`` (the flag, then a trace) still reads the trace and prints the JSON
    verdict: a FILE that exists as a regular file and is not a verdict report (an input, a
    log) is read as the first trace, never overwritten.  ``BadInput`` without a trace."""
    if (json_path not in (None, STDOUT) and json_path.is_file()
            and not _is_report(json_path)):
        json_path, traces = STDOUT, (json_path, *traces)
    if not traces:
        raise BadInput("missing argument TRACES: the trace file(s) to validate")
    return json_path, traces


def _write_json(path: Path, document: dict[str, Any]) -> None:
    """``--json FILE``: the verdict and ``run_metadata()``, written atomically."""
    text = json.dumps({**run_metadata(), **document}, indent=1, sort_keys=True) + "\n"
    try:
        write_text_atomically(path, text)
    except OSError as error:
        raise BadInput(f"--json: cannot write {path}: {error}") from error


def _show(verdict: Verdict, as_json: bool) -> None:
    """Print one partition's verdict: its summary line and its report, or JSON."""
    if as_json:
        click.echo(json.dumps(verdict.to_json(), sort_keys=True))
        return
    click.echo(verdict.summary())
    for line in verdict.report():
        click.echo(f"  {line}")


_HEAD = 1 << 20
"""How much of a trace file format detection reads."""


def _read(path: Path, *, head: bool = False) -> str:
    """A trace file's text (its first ``_HEAD`` characters with ``head``), else bad input."""
    from isrlab.spec.kafka_log import open_text  # Kafka-specific: on demand

    try:
        with open_text(path) as handle:  # a gzip'd log is read decompressed
            return handle.read(_HEAD) if head else handle.read()
    except (OSError, EOFError, UnicodeDecodeError) as error:
        raise BadInput(f"cannot read {path}: {error}") from error
