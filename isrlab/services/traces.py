"""Traces and their formats: the service below ``isrlab validate`` and ``isrlab.api.validate``.

A trace file is an ITF document, JSON Lines, or a Kafka broker log (``detect_format``).  The
first two become observations of ``isrlab.checker.validate`` against any model
(``read_observations``); a Kafka log is judged by the log oracle (``judge_kafka_logs``,
``isrlab.spec.oracle``), or, on request, turned into a partial trace of the bounded
``kafka`` model (``kafka_trace`` and ``kafka_log_observations``: the model's search).
``follow_kafka_logs`` judges logs as a running cluster writes them; ``validate_observations``
checks observations against a model.  No printing, no exit statuses: errors are
``TraceFormatError`` (a trace that cannot be read) and ``InputError`` (a trace naming an
action the model does not have, an ITF file that is no JSON object).
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from isrlab.checker.atomic import write_text_atomically
from isrlab.checker.model import Model
from isrlab.checker.report import explained
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
from isrlab.services import InputError

if TYPE_CHECKING:
    from isrlab.spec.kafka_log import Entry, KafkaLogTrace
    from isrlab.spec.oracle.run import Prefix, Verdict

FORMATS = ("auto", "jsonl", "itf", "kafka-log")
"""The trace formats (``auto``: detected)."""


# ---------------------------------------------------------------------------- formats
def detect_format(text: str) -> str:
    """``itf`` for one JSON document with a ``states`` array; ``kafka-log`` when one of the
    first lines carries a timestamp followed by a level, whatever precedes it (a log4j or
    logback pattern, a docker-compose prefix), or, without timestamps, a line of Kafka's
    own (a logger ``kafka.`` / ``org.apache.kafka``, or a replication phrase of its format
    strings), even when the first opens with ``[`` (a logIdent such as ``[ReplicaFetcher
    replicaId=2, ...]``, not JSON); else ``jsonl``."""
    from isrlab.spec.kafka_log import looks_like_kafka_log  # Kafka-specific: on demand

    stripped = text.lstrip()
    first = stripped.split("\n", 1)[0]
    if looks_like_kafka_log(text):
        return "kafka-log"
    if stripped.startswith("[") and not _is_json(first) and _kafka_phrases(text):
        return "kafka-log"  # pasted lines opening with a logIdent: "[ReplicaFetcher ...]"
    if stripped.startswith("{"):
        try:
            json.loads(first)
        except (json.JSONDecodeError, RecursionError):
            return "itf"  # the first line is no whole JSON object: one multi-line document
        return "itf" if '"states"' in first else "jsonl"
    if stripped and not stripped.startswith(("{", "#", "[")) and not _is_json(first):
        if _kafka_phrases(text):
            return "kafka-log"
        raise TraceFormatError("line 1", "not a trace: neither JSON (JSON Lines, ITF) nor a "
                               "log whose lines start with a timestamp and a level")
    return "jsonl"


def _kafka_phrases(text: str) -> bool:
    """Whether a text without timestamps is lines pasted from a Kafka log."""
    from isrlab.spec.oracle.run import _EVIDENCE

    head = text.splitlines()[:50]
    return any("(kafka." in ln or "org.apache.kafka" in ln or _EVIDENCE.search(ln)
               for ln in head)


def _is_json(text: str) -> bool:
    try:
        json.loads(text)
    except (json.JSONDecodeError, RecursionError):
        return False
    return True


def read_text(path: Path) -> str:
    """A trace file's text (``TraceFormatError`` when it cannot be read)."""
    from isrlab.spec.kafka_log import open_text  # Kafka-specific: on demand

    try:
        with open_text(path) as handle:  # a gzip'd log is read decompressed
            return handle.read()
    except (OSError, EOFError, UnicodeDecodeError) as error:
        raise TraceFormatError(str(path), f"cannot read it: {error}") from error


# ---------------------------------------------------------------------------- JSON Lines, ITF
def read_observations(
    text: str, fmt: str, partition: str | None, brokers: str | None, hidden: int | None,
    emit: Path | None, *, model: Model[Any] | None = None, level: str | None = None,
    more: Sequence[tuple[str, str]] = (), name: str = "log",
) -> list[Observation]:
    """The observations of a trace file's text in format ``fmt`` (``TraceFormatError``);
    ``hidden`` raises every step's allowance of unobserved steps before it.  A Kafka log
    (the bounded model's search, not the oracle) may come with ``more`` files, merged by
    timestamp; with the ``kafka`` ``model`` its hidden steps are those the logs would not
    show."""
    if not text.strip():
        raise TraceFormatError("line 1", "the trace file is empty")
    if fmt == "auto":
        fmt = detect_format(text)
    if fmt == "kafka-log":
        trace = kafka_trace([(name, text), *more], partition, brokers, hidden, level)
        return kafka_log_observations(trace, emit, model)
    if more:
        raise TraceFormatError("arguments", "several trace files are read only as Kafka logs")
    observations = parse_jsonl(text) if fmt == "jsonl" else read_itf(text)
    if hidden is None:
        return observations
    return [o if o.initial else replace(o, hidden=max(o.hidden, hidden)) for o in observations]


def read_itf(text: str) -> list[Observation]:
    """One ITF document's observations."""
    try:
        document = json.loads(text)
    except json.JSONDecodeError as error:
        raise TraceFormatError(f"line {error.lineno}", f"malformed JSON: {error.msg}") from error
    except RecursionError:
        raise TraceFormatError("line 1", "malformed JSON: nested too deeply") from None
    return parse_itf_observations(document)


def model_of(
    text: str, fmt: str, model_name: str | None, params: tuple[str, ...],
) -> tuple[str, tuple[str, ...]]:
    """The model and parameters to validate against: as given; for an ITF trace written by
    isrlab, the model its ``#meta`` names, and its parameters when no ``-p`` is given; for
    a Kafka log, ``kafka``."""
    meta: dict[str, Any] = {}
    if fmt == "itf":
        try:
            document = json.loads(text)
        except (json.JSONDecodeError, RecursionError):
            document = {}
        if isinstance(document, dict) and isinstance(document.get("#meta"), dict):
            meta = document["#meta"]
    named = meta.get("model")
    if model_name is None and fmt == "kafka-log":
        return "kafka", params
    if model_name is None:
        if not isinstance(named, str) or not named:
            raise TraceFormatError("--model", "is required (the trace does not name its model)")
        model_name = named
    recorded = meta.get("parameters")
    if not params and named == model_name and isinstance(recorded, dict):
        params = recorded_assignments(recorded)
    return model_name, params


def recorded_assignments(recorded: Mapping[str, Any]) -> tuple[str, ...]:
    """The parameters an ITF trace records (``#meta.parameters``) as ``key=value`` strings,
    as ``-p`` takes them (a flag as ``true``/``false``)."""
    return tuple(f"{k}={str(v).lower() if isinstance(v, bool) else v}"
                 for k, v in recorded.items())


def recorded_params(document: Any, model_name: str | None) -> tuple[str | None, list[str]]:
    """The model an ITF document written by isrlab names (``#meta.model``) and, when it is
    ``model_name`` (or no model was given), the parameters recorded with it as ``key=value``
    strings: what ``isrlab explore --trace`` rebuilds the model from (``-p`` after them)."""
    meta = document.get("#meta") if isinstance(document, dict) else None
    if not isinstance(meta, dict):
        return model_name, []
    named = meta.get("model")
    named = named if isinstance(named, str) and named else None
    recorded = meta.get("parameters")
    if named is None or (model_name is not None and model_name != named) or not isinstance(
            recorded, dict):
        return model_name or named, []
    return named, list(recorded_assignments(recorded))


def read_itf_document(path: Path) -> dict[str, Any]:
    """The JSON object of an ITF trace file (``InputError`` naming the file otherwise)."""
    try:
        document = json.loads(path.read_text(encoding="utf-8-sig"))
    except RecursionError:
        raise InputError(f"{path}: not an ITF trace (malformed JSON: nested too deeply)") from None
    except (OSError, UnicodeDecodeError, ValueError) as error:
        raise InputError(f"{path}: not an ITF trace ({error})") from error
    if not isinstance(document, dict):
        raise InputError(f"{path}: not an ITF trace (a JSON {type(document).__name__}, "
                         "not an object)")
    return document


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


def unknown_action(model: Model[Any], obs: Observation, suspects: set[str]) -> str | None:
    """Why a rejection at ``obs`` is bad input rather than a verdict: its action is no
    action of the model (``suspects``: those ``check_against_model`` did not meet in a
    small search, confirmed here by a larger one); ``None`` when the action is known."""
    name = obs.action if obs.action is not None else (
        action_name(obs.label) if obs.label is not None else None)
    if name is None or name not in suspects:
        return None
    known = discover_action_names(model, max_states=50_000)
    if name in known:
        return None
    return (f"{obs.where}: unknown action {name!r} "
            f"(actions of the model: {', '.join(sorted(known))})")


def validate_observations(
    model: Model[Any], observations: list[Observation], options: ValidateOptions,
) -> ValidationResult:
    """Whether ``observations`` are a behaviour of ``model``: unknown variables and
    ill-typed values are a ``TraceFormatError``, a rejection at an action the model does
    not have an ``InputError``; a behaviour breaking an invariant says why its last state
    breaks it."""
    suspects = check_against_model(model, observations)
    result = validate(model, observations, options)
    if result.violation is not None:  # say why its last state breaks the invariant
        result = replace(result, violation=explained(result.violation, model.invariants()))
    if result.verdict == "rejected" and result.failed is not None:
        problem = unknown_action(model, result.failed, suspects)
        if problem is not None:
            raise InputError(problem)
    return result


# ------------------------------------------------------------------ Kafka logs: the model
def kafka_model_params(
    log: KafkaLogTrace, model_name: str, params: Sequence[str],
) -> tuple[str, ...]:
    """The ``kafka`` model's parameters for a Kafka log read as its trace: those given,
    then, unless given, as many brokers as the log names, ``controller=zookeeper`` and
    ``isr_changes=zookeeper``.  A broker log shows an ISR change as one change (the
    leader's line, then AlterIsr's 'ISR updated' from 2.7); the controller's side of the
    round trip is in the controller log, which is not read: one step, as the leader's own
    ZooKeeper write (docs/oracle.md)."""
    out = tuple(params)
    if model_name != "kafka":
        return out
    if not any(p.startswith("brokers=") for p in out):
        out = (*out, f"brokers={max(len(log.ids), 1)}")
    if not any(p.startswith("controller=") for p in out):
        # The log's lines are matched against ZooKeeper mode's steps (LeaderAndIsr
        # handling, the leader's ISR changes), whichever mode the cluster ran in
        # (docs/oracle.md); the model's default is KRaft.
        out = (*out, "controller=zookeeper")
    if not any(p.startswith("isr_changes=") for p in out):
        out = (*out, "isr_changes=zookeeper")
    return out


def kafka_trace(
    files: Sequence[tuple[str, str]], partition: str | None, brokers: str | None,
    hidden: int | None, level: str | None,
) -> KafkaLogTrace:
    """The steps of one partition in a cluster's Kafka logs as a partial trace of the
    bounded ``kafka`` model (``isrlab.spec.kafka_log``; logs from topic creation only)."""
    from isrlab.spec.kafka_log import DEFAULT_HIDDEN, read_broker_logs  # Kafka-specific

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


def kafka_log_verdict(trace: KafkaLogTrace, result: ValidationResult) -> ValidationResult:
    """The model's search's verdict on a Kafka log, or "not covered" when it would rest on
    controller lines the search does not read (``KafkaLogTrace.controller_lines``): every
    verdict but a rejection (or an invariant broken) at a step logged before the first of
    them."""
    if not trace.controller_lines:
        return result
    first = trace.controller_lines[0]
    index = (result.failed_index if result.verdict == "rejected"
             else result.violation_index if result.verdict == "breaks-invariant" else None)
    if index is not None and index < len(trace.steps) and \
            str(trace.steps[index].get("#time", "")) < first.time:
        return result
    where = f"{first.source}:{first.line}" if first.source else f"line {first.line}"
    return replace(result, accepted=False, not_covered=(
        f"{where}: a controller line, which the model's search does not read "
        f"({len(trace.controller_lines)} controller line(s) of this partition: the "
        f"controller's records, fencing, registrations, partition states); the search "
        f"alone: {result.verdict}; the log oracle (without --engine model) reads them"))


# ------------------------------------------------------------------ Kafka logs: the oracle
ORACLE_PARAMS = ("unclean_election", "truncation", "crashes")
"""The ``kafka`` model's parameters the log oracle judges by (and ``brokers`` when given)."""


def oracle_params(values: Mapping[str, Any], brokers_given: bool) -> dict[str, Any]:
    """The oracle's parameters out of the ``kafka`` model's parsed ``values``: its rules'
    parameters, and the number of brokers only when the user gave it."""
    given = {key: values[key] for key in ORACLE_PARAMS}
    if brokers_given:
        given["brokers"] = values["brokers"]
    return given


def judge_kafka_logs(
    files: Sequence[tuple[str, str | Path]], *, partition: str | None = None,
    brokers: str | None = None, params: Mapping[str, Any] | None = None,
) -> list[Verdict]:
    """The log oracle's verdict on each chosen partition (``partition``: a name, ``None``
    for the only one, ``"all"``) of a cluster's Kafka logs, with the ``kafka`` model's
    parameters ``params`` (``unclean_election``, ``truncation``, ``crashes``, ``brokers``)."""
    from isrlab.spec.oracle.run import OracleOptions, judge_logs

    for name, src in files:
        if isinstance(src, str) and not src.strip():
            raise TraceFormatError(name, "the log file is empty")
        if isinstance(src, Path) and src.stat().st_size == 0:
            raise TraceFormatError(name, "the log file is empty")
    return judge_logs(files, OracleOptions(partition, brokers, dict(params or {})))


@dataclass
class _Tail:
    """One followed file: where it was read up to, the incomplete last line, the entry
    still open to continuation lines, and where the entries handed on end (the prefix a
    judge of the whole file so far reads)."""

    path: Path
    index: int
    offset: int = 0
    partial: bytes = b""
    number: int = 0
    held: Entry | None = None
    held_start: int = 0
    done: int = 0
    """The file's bytes up to here are in entries handed on (or lines no entry holds)."""
    entries: list[Entry] = field(default_factory=list)
    stamped: bool = False
    """Whether a line with a timestamp was seen (else each line is an entry)."""


def _read_new(tail: _Tail, flush: bool) -> bool:
    """Append the entries of the lines written to ``tail.path`` since the last read;
    whether anything was written."""
    from isrlab.spec.oracle.run import file_entries

    try:
        with tail.path.open("rb") as handle:
            if handle.seek(0, 2) < tail.offset:  # rotated or truncated: read it anew
                tail.offset, tail.partial, tail.done, tail.held = 0, b"", 0, None
                tail.number = 0
            handle.seek(tail.offset)
            data = handle.read()
            if tail.offset == 0 and data.startswith(b"\x1f\x8b"):
                raise TraceFormatError(str(tail.path), "a gzip'd file is not a live log: "
                                       "--follow reads files a running broker writes")
    except OSError as error:
        raise TraceFormatError(str(tail.path), f"cannot read it: {error}") from error
    start = tail.offset - len(tail.partial)
    tail.offset += len(data)
    lines = (tail.partial + data).split(b"\n")
    tail.partial = lines.pop()
    for chunk in lines:
        at, start = start, start + len(chunk) + 1
        raw = chunk.decode("utf-8", errors="replace")
        tail.number += 1
        stamped = list(file_entries(str(tail.path), raw + "\n"))
        if stamped:
            tail.stamped = True
        elif not tail.stamped and raw.strip() and not (
                tail.held is not None and raw[:1].isspace()):
            # a log written without dates: each line an entry, as the batch mode reads it
            stamped = list(file_entries(str(tail.path), raw + "\n", timestamps=False))
        for entry in stamped:
            entry.line = tail.number
            if tail.held is not None:
                tail.entries.append(tail.held)
            tail.held, tail.held_start = entry, at
            break
        else:
            if tail.held is not None and raw.strip():
                tail.held.text += " " + raw.strip()
                tail.held.last = tail.number
        tail.done = tail.held_start if tail.held is not None else start
    if flush and not data and tail.held is not None:  # quiet for a poll: the entry is whole
        tail.entries.append(tail.held)
        tail.held, tail.done = None, start
    return bool(data)


def _prefix(tail: _Tail) -> tuple[str, Prefix]:
    """The file as far as its entries were handed on: its name and its first bytes."""
    from isrlab.spec.oracle.run import Prefix

    return str(tail.path), Prefix(tail.path, tail.done)


class LogFollower:
    """Kafka logs judged as they grow (``isrlab validate --follow``): each ``poll`` reads
    the lines written since the last one and gives every partition's verdict, the one
    ``judge_kafka_logs`` gives the files as far as their entries are complete (``prefixes``).

    New lines are judged after the others while what the logs say as a whole (the mode, the
    logging era, which sources are at DEBUG, each source's brokers and levels, the
    partitions) stays the same and they come after the lines judged in timestamp order;
    otherwise the files so far are judged again from their first line (re-read, not kept:
    memory stays flat)."""

    def __init__(self, paths: Sequence[Path], *, partition: str | None = None,
                 brokers: str | None = None, params: Mapping[str, Any] | None = None) -> None:
        from isrlab.spec.oracle.run import Oracle, OracleOptions, Survey, survey_signature

        self.options = OracleOptions(partition, brokers, dict(params or {}))
        self.survey = Survey()
        self.oracle = Oracle(self.survey, [], self.options)
        self.signature = survey_signature(self.survey, partition)
        self.last: tuple[str, int, int] | None = None
        self.tails = [_Tail(path, index) for index, path in enumerate(paths)]

    def prefixes(self) -> list[tuple[str, Prefix]]:
        """Each file's name and its first bytes, up to the end of the entries judged."""
        return [_prefix(tail) for tail in self.tails]

    def poll(self, flush: bool) -> tuple[bool, list[Verdict]]:
        """Read and judge what was written since the last poll (``flush``: the logs were
        quiet for a poll, so each file's last entry is whole); whether anything was written,
        and the verdict of every partition judged."""
        from isrlab.spec.oracle.run import judge_prefix, survey_signature, verdict_of

        written = [_read_new(tail, flush) for tail in self.tails]
        keyed = sorted(((e.time, t.index, e.line), e) for t in self.tails for e in t.entries)
        for tail in self.tails:
            tail.entries.clear()
        if keyed:
            for _, entry in keyed:
                self.survey.add(entry)
            now = survey_signature(self.survey, self.options.partition)
            if now != self.signature or (self.last is not None and keyed[0][0] < self.last):
                self.survey, self.oracle = judge_prefix(self.prefixes(), self.options)
                now = survey_signature(self.survey, self.options.partition)
            else:
                for _, entry in keyed:
                    self.oracle.feed(entry)
            self.signature = now
            self.last = max(keyed[-1][0], self.last or keyed[-1][0])
        verdicts = []
        for _, judge in sorted(self.oracle.judges.items()):
            count, how = self.oracle.brokers_of(judge)
            verdicts.append(verdict_of(judge, count, how))
        return any(written) or bool(keyed), verdicts


def follow_kafka_logs(
    paths: Sequence[Path], on_change: Callable[[Verdict], None], *,
    partition: str | None = None, brokers: str | None = None,
    params: Mapping[str, Any] | None = None, poll: float = 0.2, idle: float | None = None,
    sleep: Callable[[float], None] = time.sleep,
) -> list[Verdict]:
    """Judge Kafka logs as they grow (``LogFollower``): every ``poll`` seconds the lines
    written since are judged, ``on_change`` gets every partition's verdict when it changes
    (once it rests on a line), and the run ends at the first rejection, or when no line was
    written for ``idle`` seconds (``None``: never).  Returns the last verdicts."""
    follower = LogFollower(paths, partition=partition, brokers=brokers, params=params)
    shown: dict[str, str] = {}
    quiet = 0.0
    while True:
        written, verdicts = follower.poll(flush=quiet > 0)
        quiet = 0.0 if written else quiet + poll
        for verdict in verdicts:
            if verdict.observations and shown.get(verdict.partition) != verdict.verdict:
                shown[verdict.partition] = verdict.verdict
                on_change(verdict)
        if any(v.verdict == "rejected" for v in verdicts):
            return verdicts
        if idle is not None and quiet >= idle:
            return verdicts
        sleep(poll)

