"""Every reader of user input fuzzed (issue 34, item 7; docs/reliability.md): JSON Lines
traces, ITF traces, Kafka broker logs, ``-p`` values and run files.

Each input goes through the command line in this process (``isrlab.cli.cli``, as the
``isrlab`` script runs it) or through the reader's own function.  What must hold: never a
traceback, never exit 70 (an escaped exception); bad input is ONE line on stderr starting
``isrlab: error:`` with exit 2; anything else is a verdict (validate: 0 accepted,
1 rejected, 3 breaks an invariant; check: 0 or 1).  A reader function either returns or
raises its one-line error type.

Hypothesis runs derandomized (a fixed seed: the same inputs on every run, in CI too); the
``max_examples`` of the tests add up to at least 10,000 inputs per reader (the table in
docs/reliability.md; ``ISRLAB_FUZZ_REPORT=1`` prints the inputs each reader actually got).
"""

from __future__ import annotations

import atexit
import json
import os
import random
import shutil
import string
import tempfile
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from isrlab import api
from isrlab.checker.report import TraceStep
from isrlab.checker.trace import itf_document
from isrlab.checker.validate import TraceFormatError, parse_itf_observations, parse_jsonl
from isrlab.cli import cli
from isrlab.services.traces import read_observations

ROOT = Path(__file__).resolve().parents[1]
FIXTURES = ROOT / "tests" / "fixtures" / "oracle"
SEEN: Counter[str] = Counter()
"""Inputs given to each reader in this run (printed with ISRLAB_FUZZ_REPORT=1)."""


def fuzz(examples: int) -> settings:
    """Derandomized settings: the same ``examples`` inputs on every run (``ISRLAB_FUZZ_SCALE``,
    default 1, multiplies them: 0.05 for a quick look, 10 for a longer hunt)."""
    scale = float(os.environ.get("ISRLAB_FUZZ_SCALE", "1"))
    return settings(
        max_examples=max(1, int(examples * scale)), derandomize=True, deadline=None, database=None,
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large,
                               HealthCheck.filter_too_much, HealthCheck.large_base_example],
    )


@pytest.fixture(scope="module", autouse=True)
def _report(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    # in a scratch directory: a fuzzed run file may name outputs and run directories
    # relative to the current directory, which must not land in the checkout
    with pytest.MonkeyPatch.context() as patch:
        patch.chdir(tmp_path_factory.mktemp("cwd"))
        yield
    if os.environ.get("ISRLAB_FUZZ_REPORT"):
        print("\nfuzzed inputs per reader:", dict(sorted(SEEN.items())))


_WORK = Path(tempfile.mkdtemp(prefix="isrlab-fuzz-"))
atexit.register(shutil.rmtree, _WORK, True)  # the inputs' files: gone with the process


def _file(name: str, data: bytes) -> Path:
    path = _WORK / name
    path.write_bytes(data)
    return path


def _run(args: list[str]) -> tuple[int, str, str]:
    result = CliRunner().invoke(cli, args)
    return result.exit_code, result.stdout, result.stderr


def _one_line_or_verdict(code: int, out: str, err: str, verdicts: tuple[int, ...]) -> None:
    """Bad input is one line and exit 2; otherwise one of ``verdicts``; never a traceback."""
    assert "Traceback" not in err and "Traceback" not in out, err[-2000:]
    if code == 2:
        lines = err.strip().splitlines()
        assert len(lines) == 1 and lines[0].startswith("isrlab: error: "), err[-2000:]
        return
    assert code in verdicts, (code, out[-1000:], err[-2000:])


def _reader_error(error: TraceFormatError) -> None:
    assert "\n" not in str(error), str(error)


# -- batches: a drawn seed makes BATCH inputs (Python's random: cheap, so that each reader
# gets thousands of inputs in seconds); the seed is what hypothesis reports on a failure.

BATCH = 40
_ITF_TAGS = ("#bigint", "#tup", "#set", "#map", "tag", "value", "#meta", "states", "vars")
_STEP_KEYS = ("action", "args", "label", "hidden", "before", "stutter", "report", "x", "#c")


def random_json(rng: random.Random, depth: int = 3) -> Any:
    """A random JSON value, biased to the keys and shapes the trace readers look for."""
    kind = rng.randrange(10 if depth > 0 else 6)
    if kind == 0:
        if rng.random() < 0.02:  # a value nested far deeper than any state
            return json.loads("[" * 150 + "]" * 150)
        return None
    if kind == 1:
        return rng.random() < 0.5
    if kind == 2:
        return rng.choice([0, 1, -1, 2**63, -(2**64), rng.randrange(-9, 99)])
    if kind == 3:
        return rng.choice([0.5, -1e308, 1e-9, float("inf"), float("-inf")])
    if kind in (4, 5):
        return rng.choice(["", "Inc", "Init", "Reset", "Inc(1)", "x", "*", "None", "42",
                           "\u0000", "é" * rng.randrange(3), "-5"])
    if kind == 6:
        return [random_json(rng, depth - 1) for _ in range(rng.randrange(4))]
    if kind == 7:
        tag = rng.choice(_ITF_TAGS)
        return {tag: random_json(rng, depth - 1)}
    if kind == 8:
        return {rng.choice(_STEP_KEYS): random_json(rng, depth - 1)
                for _ in range(rng.randrange(4))}
    return {"#map": [[random_json(rng, depth - 1), random_json(rng, depth - 1)]
                     for _ in range(rng.randrange(3))]}


def mutate(rng: random.Random, seed: bytes) -> bytes:
    """``seed`` with up to six bytes flipped, inserted or deleted, a cut, or a line repeated."""
    data = bytearray(seed)
    for _ in range(rng.randrange(1, 7)):
        kind, at = rng.randrange(5), rng.randrange(len(data) + 1)
        if kind == 0 and data:
            data[at % len(data)] ^= 1 << rng.randrange(8)
        elif kind == 1:
            data.insert(at, rng.randrange(256))
        elif kind == 2 and data:
            del data[at % len(data)]
        elif kind == 3:
            del data[at:]
        else:
            lines = bytes(data).split(b"\n")
            lines.insert(at % len(lines), lines[rng.randrange(len(lines))])
            data = bytearray(b"\n".join(lines))
    return bytes(data)


def _read(text: str, fmt: str, **more: Any) -> None:
    """``validate``'s own reading of a trace's text (no model): observations or one line."""
    try:
        read_observations(text, fmt, more.get("partition"), more.get("brokers"), None, None)
    except TraceFormatError as error:
        _reader_error(error)


# -- the crashes the fuzzing found (each exited 70 with a traceback before its fix) ------------

_DEEP = "[" * 900 + "]" * 900
_VERY_DEEP = "[" * 5_000 + "]" * 5_000


@pytest.mark.parametrize(("text", "words"), [
    ('{"states": [{"x": {"#bigint": Infinity}}]}', "'#bigint' must be a decimal string"),
    ('{"states": [{"x": {"#bigint": true}}]}', "'#bigint' must be a decimal string"),
    ('{"states": [{"x": ' + _DEEP + "}]}", "nests deeper than 100 levels"),
    ('{"states": [{"x": ' + '{"#tup": [' * 400 + "]}" * 400 + "}]}", "nests deeper than"),
    ('{"states": [{"x": ' + _VERY_DEEP + "}]}", "nested too deeply"),
    ('{"x": ' + _DEEP + "}", "nests deeper than 100 levels"),
    ('{"x": ' + _VERY_DEEP + "}", "nested too deeply"),
])
def test_what_the_fuzzing_found_is_one_line_and_exit_2(text: str, words: str) -> None:
    trace = _file("found.json", text.encode())
    code, out, err = _run(["validate", "--model", "toy-counter", str(trace)])
    assert code == 2, (code, out, err[-500:])
    _one_line_or_verdict(code, out, err, ())
    assert words in err


def test_explore_refuses_a_too_deeply_nested_itf_trace_in_one_line() -> None:
    trace = _file("deep.itf.json", ('{"states": [{"x": ' + _VERY_DEEP + "}]}").encode())
    code, out, err = _run(["explore", "--model", "toy-counter", "--trace", str(trace)])
    assert code == 2, (code, out, err[-500:])
    _one_line_or_verdict(code, out, err, ())
    assert "nested too deeply" in err


# -- JSON values ------------------------------------------------------------------------------

_scalars = (st.none() | st.booleans() | st.integers(-(2**70), 2**70)
            | st.floats(allow_nan=False) | st.text(max_size=8))
_itf_keys = st.sampled_from(["#bigint", "#tup", "#set", "#map", "tag", "value", "x", "#meta"])


def _itf_like(children: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    """JSON containers, and objects with the ITF encodings' keys holding anything."""
    return (st.lists(children, max_size=4)
            | st.dictionaries(_itf_keys | st.text(max_size=4), children, max_size=3)
            | st.builds(lambda v: {"#bigint": v}, _scalars | children)
            | st.builds(lambda v: {"#map": v}, st.lists(st.lists(children, max_size=3),
                                                         max_size=3) | children))


json_values = st.recursive(_scalars, _itf_like, max_leaves=12)
_step_keys = st.sampled_from(
    ["action", "args", "label", "hidden", "before", "stutter", "report", "x", "#c", "y"])
json_steps = st.dictionaries(_step_keys | st.text(max_size=4), json_values, max_size=5)


# -- JSON Lines traces: 4,000 + 3,000 + 3,000 inputs --------------------------------------------

@fuzz(300)
@given(st.lists(json_steps | json_values, min_size=0, max_size=5))
def test_parse_jsonl_returns_observations_or_one_line_error(steps: list[Any]) -> None:
    SEEN["jsonl"] += 1
    text = "\n".join(json.dumps(step) for step in steps)
    try:
        parse_jsonl(text)
    except TraceFormatError as error:
        _reader_error(error)


_JSONL_SEED = b'{"action": "Init", "x": 0}\n{"action": "Inc", "x": 1}\n{"label": "Inc", "x": 2}\n'


@fuzz(230)
@given(st.integers(0, 2**32))
def test_a_batch_of_random_and_mutated_json_lines_reads_or_fails_in_one_line(seed: int) -> None:
    rng = random.Random(seed)
    for _ in range(BATCH):
        SEEN["jsonl"] += 1
        if rng.random() < 0.5:
            steps = [random_json(rng) for _ in range(rng.randrange(1, 5))]
            text = "\n".join(json.dumps(step) for step in steps)
        else:
            text = mutate(rng, _JSONL_SEED).decode("utf-8", "replace")
        _read(text, rng.choice(["auto", "jsonl"]))


_counter_steps = st.lists(
    st.fixed_dictionaries({}, optional={
        "x": st.integers(-3, 5) | json_values, "action": st.sampled_from(
            ["Inc", "Reset", "Init", "Nope", ""]) | json_values,
        "args": json_values, "hidden": st.integers(-1, 3) | json_values,
        "label": st.text(max_size=6), "before": json_values | st.fixed_dictionaries(
            {"x": st.integers(0, 3)}), "stutter": json_values, "report": st.booleans(),
    }), min_size=1, max_size=5)


@fuzz(300)
@given(_counter_steps, st.sampled_from(["auto", "jsonl"]))
def test_validate_reads_fuzzed_json_lines_in_one_line_or_a_verdict(
    steps: list[dict[str, Any]], fmt: str
) -> None:
    SEEN["jsonl"] += 1
    trace = _file("trace.jsonl", "\n".join(json.dumps(s) for s in steps).encode())
    code, out, err = _run(["validate", "--model", "toy-counter", "-p", "limit=3",
                           "--format", fmt, str(trace)])
    _one_line_or_verdict(code, out, err, (0, 1, 3))


def _mutations(seed: bytes) -> st.SearchStrategy[bytes]:
    """``seed`` with bytes flipped, inserted, deleted, truncated or lines repeated."""
    def mutate(edits: list[tuple[int, int, int]]) -> bytes:
        data = bytearray(seed)
        for kind, where, value in edits:
            at = where % (len(data) + 1)
            if kind == 0 and data:
                data[at % len(data)] ^= value or 1
            elif kind == 1:
                data.insert(at, value)
            elif kind == 2 and data:
                del data[at % len(data)]
            elif kind == 3:
                del data[at:]
            else:
                lines = bytes(data).split(b"\n")
                line = lines[at % len(lines)]
                lines.insert(at % len(lines), line)
                data = bytearray(b"\n".join(lines))
        return bytes(data)

    edit = st.tuples(st.integers(0, 4), st.integers(0, 10**6), st.integers(0, 255))
    return st.lists(edit, min_size=1, max_size=6).map(mutate)


@fuzz(200)
@given(_mutations(_JSONL_SEED) | st.binary(max_size=200))
def test_validate_reads_mutated_bytes_as_a_trace_in_one_line_or_a_verdict(data: bytes) -> None:
    SEEN["jsonl"] += 1
    trace = _file("mutated.jsonl", data)
    code, out, err = _run(["validate", "--model", "toy-counter", "-p", "limit=3", str(trace)])
    _one_line_or_verdict(code, out, err, (0, 1, 3))


# -- ITF traces: 4,000 + 3,000 + 3,000 inputs ---------------------------------------------------

@fuzz(300)
@given(json_values | st.fixed_dictionaries(
    {"states": st.lists(st.dictionaries(_itf_keys | st.sampled_from(["x"]), json_values,
                                        max_size=3) | json_values, max_size=4)},
    optional={"#meta": json_values, "vars": json_values}))
def test_parse_itf_returns_observations_or_one_line_error(document: Any) -> None:
    SEEN["itf"] += 1
    try:
        parse_itf_observations(document)
    except TraceFormatError as error:
        _reader_error(error)


@fuzz(300)
@given(st.fixed_dictionaries(
    {"states": st.lists(st.fixed_dictionaries({}, optional={
        "#meta": json_values | st.fixed_dictionaries(
            {"action": st.sampled_from(["Init", "Inc", "Reset"]) | json_values}),
        "x": json_values | st.builds(lambda n: {"#bigint": str(n)}, st.integers(-1, 4)),
    }), max_size=4)},
    optional={"#meta": st.fixed_dictionaries({}, optional={
        "model": st.sampled_from(["toy-counter", "no-such", ""]) | json_values,
        "parameters": json_values | st.fixed_dictionaries(
            {"limit": json_values | st.integers(-2, 4)})})}))
def test_validate_reads_fuzzed_itf_documents_in_one_line_or_a_verdict(document: Any) -> None:
    SEEN["itf"] += 1
    trace = _file("trace.itf.json", json.dumps(document).encode())
    args = ["validate", "--format", "itf", str(trace)]
    code, out, err = _run(args)
    _one_line_or_verdict(code, out, err, (0, 1, 3))


_ITF_SEED = json.dumps(itf_document(
    [TraceStep("Init", {"x": 0}), TraceStep("Inc", {"x": 1}), TraceStep("Inc", {"x": 2})],
    source="toy-counter", parameters={"limit": 3}), indent=1).encode()


@fuzz(230)
@given(st.integers(0, 2**32))
def test_a_batch_of_random_and_mutated_itf_documents_reads_or_fails_in_one_line(
    seed: int,
) -> None:
    rng = random.Random(seed)
    for _ in range(BATCH):
        SEEN["itf"] += 1
        if rng.random() < 0.5:
            states = [random_json(rng) if rng.random() < 0.2 else {
                rng.choice(("x", "#meta", "y")): random_json(rng)
                for _ in range(rng.randrange(3))} for _ in range(rng.randrange(4))]
            document: Any = {"states": states} if rng.random() < 0.8 else random_json(rng)
            text = json.dumps(document)
        else:
            text = mutate(rng, _ITF_SEED).decode("utf-8", "replace")
        _read(text, rng.choice(["auto", "itf"]))


@fuzz(200)
@given(_mutations(_ITF_SEED))
def test_validate_reads_mutated_itf_bytes_in_one_line_or_a_verdict(data: bytes) -> None:
    SEEN["itf"] += 1
    trace = _file("mutated.itf.json", data)
    code, out, err = _run(["validate", str(trace)])
    _one_line_or_verdict(code, out, err, (0, 1, 3))


# -- Kafka broker logs: 2,000 + 3,000 + 5,000 inputs --------------------------------------------

def _small_logs() -> list[bytes]:
    logs = sorted(p for p in FIXTURES.rglob("*.log") if p.stat().st_size <= 1_500)
    assert logs, f"no Kafka log under {FIXTURES}"
    return [p.read_bytes() for p in logs[:12]]


_LOGS = _small_logs()
KAFKA_VERDICTS = (0, 1, 3, 4)
"""validate's verdicts on a Kafka log: accepted, rejected, breaks an invariant, and (the
log oracle's) not covered."""


@pytest.mark.slow
@fuzz(40)
@given(st.sampled_from(range(len(_LOGS))).flatmap(lambda i: _mutations(_LOGS[i])))
def test_validate_kafka_reads_mutated_real_logs_in_one_line_or_a_verdict(data: bytes) -> None:
    SEEN["kafka-log"] += 1
    log = _file("server.log", data)
    code, out, err = _run(["validate", "--model", "kafka", "--format", "kafka-log", str(log)])
    _one_line_or_verdict(code, out, err, KAFKA_VERDICTS)


_LOG_WORDS = (
    "[Partition orders-0 broker=1]", "ISR updated to 1,2", "Shrinking ISR from 1,2,3 to 1",
    "Expanding ISR from 1 to 1,2", "Truncating to offset 5", "leader epoch",
    "(kafka.cluster.Partition)", "(state.change.logger)", "[Broker id=1]",
    "[Controller id=0 epoch=3]", "isr=[1,2]", "replicas=[1,2,3]", "-1", "9" * 25,
    "orders-0", "to", "from", "epoch 4", "HW", "LEO", ",", "]", "[", "=")


def _random_log(rng: random.Random) -> str:
    lines = []
    for _ in range(rng.randrange(1, 7)):
        stamp = rng.choice(["[2024-01-02 03:04:05,678]", "2024-01-02T03:04:05.678Z",
                            "[2024-13-45 99:99:99,999]", "[2024-01-02 03:04:05]"])
        level = rng.choice(["INFO", "DEBUG", "TRACE", "WARN", "ERROR", ""])
        words = " ".join(rng.choice(_LOG_WORDS) for _ in range(rng.randrange(8)))
        lines.append(f"{stamp} {level} {words}")
    return "\n".join(lines)


@fuzz(240)
@given(st.integers(0, 2**32))
def test_a_batch_of_mutated_and_random_kafka_logs_reads_or_fails_in_one_line(seed: int) -> None:
    rng = random.Random(seed)
    for _ in range(BATCH):
        SEEN["kafka-log"] += 1
        if rng.random() < 0.6:
            text = mutate(rng, rng.choice(_LOGS)).decode("utf-8", "replace")
        else:
            text = _random_log(rng)
        more = rng.choice([{}, {"partition": "orders-0"}, {"brokers": "1,2,3"},
                           {"brokers": rng.choice(["x", "1,1", "", "-1", "1,,2"])}])
        _read(text, rng.choice(["auto", "kafka-log"]), **more)


_levels = st.sampled_from(["INFO", "DEBUG", "TRACE", "WARN", "ERROR", "info", ""])
_stamps = st.sampled_from(["[2024-01-02 03:04:05,678]", "2024-01-02T03:04:05.678Z",
                           "[2024-13-45 99:99:99,999]", "[2024-01-02 03:04:05]"])
_words = st.sampled_from([
    "[Partition orders-0 broker=1]", "ISR updated to 1,2", "Shrinking ISR from 1,2,3 to 1",
    "Expanding ISR from 1 to 1,2", "[ReplicaFetcher replicaId=2, leaderId=1, fetcherId=0]",
    "Truncating to offset 5", "leader epoch", "(kafka.cluster.Partition)",
    "(state.change.logger)", "[Broker id=1]", "Leader", "epoch", "-1", "9" * 30, "orders-0",
    "[Controller id=0 epoch=3]", "LeaderAndIsr", "isr=[1,2]", "high watermark", "HW",
    "replicas=[1,2,3]", "partition orders-0", "log end offset", "to 7", "from", "with"])
_log_lines = st.builds(
    lambda stamp, level, words: f"{stamp} {level} {' '.join(words)}", _stamps, _levels,
    st.lists(_words | st.text(string.printable, max_size=6), max_size=8))


@fuzz(160)
@given(st.lists(_log_lines, min_size=1, max_size=6),
       st.sampled_from([[], ["--partition", "orders-0"], ["--brokers", "1,2,3"],
                        ["--brokers", "x"], ["--log-level", "TRACE"]]))
def test_validate_kafka_reads_log_like_lines_in_one_line_or_a_verdict(
    lines: list[str], more: list[str]
) -> None:
    SEEN["kafka-log"] += 1
    log = _file("broker.log", "\n".join(lines).encode())
    code, out, err = _run(["validate", "--model", "kafka", *more, str(log)])
    _one_line_or_verdict(code, out, err, KAFKA_VERDICTS)


@fuzz(200)
@given(st.binary(max_size=300) | st.text(max_size=200).map(str.encode))
def test_validate_kafka_reads_random_bytes_in_one_line_or_a_verdict(data: bytes) -> None:
    SEEN["kafka-log"] += 1
    log = _file("random.log", data)
    code, out, err = _run(["validate", "--model", "kafka", str(log)])
    _one_line_or_verdict(code, out, err, KAFKA_VERDICTS)


# -- -p values: 5,000 + 3,000 + 2,000 inputs ----------------------------------------------------

_ENTRIES = {name: api.entry(name) for name in ("toy-counter", "kafka", "tla-kip320")}
_names = st.sampled_from(sorted({p.name for e in _ENTRIES.values() for p in e.params}
                                | {"", "nope", "limit "}))
_values = (st.integers(-(2**64), 2**64).map(str) | st.sampled_from(
    ["true", "false", "final", "zookeeper", "kraft", "", " ", "1e3", "0x10", "3.5", "None",
     "1,2", "∞", "١٢"]) | st.text(max_size=8))
assignments = (st.builds(lambda k, sep, v: f"{k}{sep}{v}", _names,
                         st.sampled_from(["=", "==", " = ", ":", ""]), _values)
               | st.text(max_size=12))


_RAW_VALUES = ("true", "false", "final", "zookeeper", "kraft", "", " ", "1e3", "0x10", "3.5",
               "None", "1,2", "∞", "١٢", "-0", "+3", "3_0", "99999999999999999999999", "=")


@fuzz(230)
@given(st.integers(0, 2**32))
def test_a_batch_of_random_parameter_assignments_parses_or_fails_in_one_line(seed: int) -> None:
    rng = random.Random(seed)
    names = sorted({p.name for e in _ENTRIES.values() for p in e.params})
    for _ in range(BATCH):
        SEEN["-p"] += 1
        given_values = [
            rng.choice([*names, "", "x"]) + rng.choice(["=", "=", ":", "", "=="])
            + (rng.choice(_RAW_VALUES) if rng.random() < 0.6 else str(rng.randrange(-9, 99)))
            for _ in range(rng.randrange(1, 4))]
        try:
            api.parse(_ENTRIES[rng.choice(sorted(_ENTRIES))], given_values)
        except api.ModelError as error:
            assert "\n" not in str(error), str(error)


@fuzz(300)
@given(st.sampled_from(sorted(_ENTRIES)), st.lists(assignments, max_size=4))
def test_parameter_parsing_returns_values_or_a_model_error(
    name: str, given_values: list[str]
) -> None:
    SEEN["-p"] += 1
    try:
        api.parse(_ENTRIES[name], given_values)
    except api.ModelError as error:
        assert "\n" not in str(error), str(error)


@fuzz(300)
@given(st.lists(assignments, min_size=1, max_size=3))
def test_check_reads_fuzzed_parameters_in_one_line_or_a_verdict(given_values: list[str]) -> None:
    SEEN["-p"] += 1
    args = [a for value in given_values for a in ("-p", value)]
    code, out, err = _run(["check", "--model", "toy-counter", *args, "--max-depth", "2",
                           "--no-progress"])
    _one_line_or_verdict(code, out, err, (0, 1))


@fuzz(200)
@given(st.lists(assignments, min_size=1, max_size=3))
def test_model_building_takes_fuzzed_parameters_or_refuses_in_one_line(
    given_values: list[str]
) -> None:
    SEEN["-p"] += 1
    args = [a for value in given_values for a in ("-p", value)]
    code, out, err = _run(["simulate", "--model", "tla-kip320", *args, "--walks", "1",
                           "--depth", "2", "--no-progress"])
    _one_line_or_verdict(code, out, err, (0, 1))


# -- run files (``--config run.toml``): 5,000 + 5,000 inputs, where the option exists -----------

def _has_config() -> bool:
    return any(p.name == "config" for p in cli.commands["check"].params)


needs_config = pytest.mark.skipif(not _has_config(), reason="no --config run files yet")
_toml_keys = st.sampled_from(["model", "params", "invariants", "engine", "max-depth",
                              "max_depth", "workers", "check", "simulate", "seed", "limit",
                              "symmetry", "json", "run-dir", "x"])
_toml_values = st.sampled_from(['"toy-counter"', '"kafka"', "3", "-1", "true", '["Nope"]',
                                "{limit = 2}", "{limit = \"x\"}", "1.5", '"spark"', "[1, 2]",
                                '"/proc/x"', "2024-01-01", "[[]]", "{}", "'''x'''"])
_toml_lines = (st.builds(lambda k, v: f"{k} = {v}", _toml_keys, _toml_values)
               | st.builds(lambda k: f"[{k}]", _toml_keys) | st.text(max_size=10))


@needs_config
@fuzz(300)
@given(st.lists(_toml_lines, max_size=6))
def test_run_files_are_read_in_one_line_or_a_verdict(lines: list[str]) -> None:
    SEEN["run-file"] += 1
    config = _file("run.toml", "\n".join(['model = "toy-counter"', *lines]).encode())
    code, out, err = _run(["check", "--config", str(config), "--max-depth", "2",
                           "--no-progress"])
    _one_line_or_verdict(code, out, err, (0, 1))


_TOML_SEED = b'model = "toy-counter"\ninvariants = ["BelowBad"]\n[params]\nlimit = 3\n'


@needs_config
@fuzz(200)
@given(_mutations(_TOML_SEED) | st.binary(max_size=120))
def test_mutated_run_files_are_read_in_one_line_or_a_verdict(data: bytes) -> None:
    SEEN["run-file"] += 1
    config = _file("mutated.toml", data)
    code, out, err = _run(["check", "--config", str(config), "--max-depth", "2",
                           "--no-progress"])
    _one_line_or_verdict(code, out, err, (0, 1))


_TOML_KEYS = ("model", "params", "invariants", "engine", "max-depth", "max_depth", "workers",
              "seed", "walks", "depth", "symmetry", "json", "run-dir", "x", "limit")
_TOML_VALUES = ('"toy-counter"', '"kafka"', "3", "-1", "true", '["Nope"]', "{limit = 2}",
                '{limit = "x"}', "1.5", '"spark"', "[1, 2]", '"/proc/x"', "2024-01-01", "[[]]",
                "{}", "'x'", "nan", "inf", "0x10", '"\\u0000"', "1979-05-27T07:32:00Z")


def _random_toml(rng: random.Random) -> bytes:
    if rng.random() < 0.5:
        return mutate(rng, _TOML_SEED)
    lines = ['model = "toy-counter"'] if rng.random() < 0.7 else []
    for _ in range(rng.randrange(6)):
        if rng.random() < 0.2:
            lines.append(f"[{rng.choice((*_TOML_KEYS, 'check', 'simulate', 'bmc'))}]")
        else:
            lines.append(f"{rng.choice(_TOML_KEYS)} = {rng.choice(_TOML_VALUES)}")
    return "\n".join(lines).encode()


@needs_config
@fuzz(240)
@given(st.integers(0, 2**32))
def test_a_batch_of_random_and_mutated_run_files_loads_or_fails_in_one_line(seed: int) -> None:
    import click

    from isrlab import cli_support
    from isrlab.cli_support import BadInput

    load = getattr(cli_support, "load_run_file")  # noqa: B009  # absent until run files merge
    rng = random.Random(seed)
    for _ in range(BATCH):
        SEEN["run-file"] += 1
        config = _file("batch.toml", _random_toml(rng))
        command = cli.commands[rng.choice(["check", "simulate", "bmc", "explore"])]
        ctx = click.Context(command, parent=click.Context(cli, info_name="isrlab"))
        try:
            load(ctx, config)
        except BadInput as error:
            assert "\n" not in error.format_message(), error.format_message()


def test_render_refuses_json_too_deep_to_parse_as_the_other_readers_do() -> None:
    """``render`` of JSON nested past Python's parser: one line, exit 2, in the words
    ``validate`` and ``explore`` use (it said ``RecursionError: maximum recursion depth
    exceeded while decoding ...``)."""
    trace = _file("deep-render.itf.json", ('{"states": [{"x": ' + _VERY_DEEP + "}]}").encode())
    code, out, err = _run(["render", str(trace), "-o", str(trace.with_suffix(".svg"))])
    assert code == 2, (code, out, err[-500:])
    _one_line_or_verdict(code, out, err, ())
    assert "not an ITF trace (malformed JSON: nested too deeply)" in err
    assert "RecursionError" not in err


@pytest.mark.parametrize("value", ["inf", "-inf", "nan", "1e400"])
def test_a_run_files_infinite_worker_count_is_one_line_and_exit_2(value: str) -> None:
    """``workers = inf`` (TOML's infinity) once gave click's ``OverflowError``, exit 70."""
    run = _file(f"run-{value}.toml", f'model = "toy-counter"\nworkers = {value}\n'.encode())
    code, out, err = _run(["check", "--config", str(run)])
    assert code == 2, (code, out, err[-500:])
    _one_line_or_verdict(code, out, err, ())
    assert "workers" in err
