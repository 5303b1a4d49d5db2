"""The fault campaign on every reader (issue 34, item 7; docs/reliability.md): ITF traces,
JSON Lines traces, Kafka broker logs, ``-p`` values and run files, fuzzed with hypothesis.
Whatever the input, the command ends with its own exit status (never 70: no traceback), and
bad input is one line on stderr with exit 2.

Each test draws ``ISRLAB_FUZZ_EXAMPLES`` inputs (default 150; 2,000 for the recorded campaign,
docs/reliability.md), derandomized: the same inputs on every run (a fixed seed in CI)."""

from __future__ import annotations

import json
import os
import string
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from isrlab.cli import cli

ROOT = Path(__file__).resolve().parents[1]
EXAMPLES = int(os.environ.get("ISRLAB_FUZZ_EXAMPLES", "150"))
FUZZ = settings(max_examples=EXAMPLES, deadline=None, derandomize=True,
                suppress_health_check=[HealthCheck.function_scoped_fixture,
                                       HealthCheck.too_slow, HealthCheck.data_too_large])
LOG = (ROOT / "tests" / "fixtures" / "oracle" / "broker-orders-0.log").read_text().splitlines()


@pytest.fixture(autouse=True, scope="module")
def _in_a_scratch_directory(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    """Run files name outputs (``json = "x"``) relative to the current directory: keep
    whatever a fuzzed input writes out of the checkout."""
    with pytest.MonkeyPatch.context() as patch:
        patch.chdir(tmp_path_factory.mktemp("cwd"))
        yield


def _ends_well(args: list[str], allowed: set[int]) -> None:
    """The command's exit status is one of ``allowed`` (2 included), never a traceback; on
    exit 2 stderr is one ``isrlab: error:`` line."""
    result = CliRunner().invoke(cli, args)
    if result.exception is not None and not isinstance(result.exception, SystemExit):
        raise AssertionError(f"{type(result.exception).__name__}: {result.exception}")
    assert result.exit_code in allowed | {2}, (result.exit_code, result.output)
    assert "Traceback" not in result.stderr
    if result.exit_code == 2:
        lines = result.stderr.strip().splitlines()
        assert len(lines) == 1 and lines[0].startswith("isrlab: error: "), result.stderr


JSON = st.recursive(
    st.none() | st.booleans() | st.integers(-3, 10**20) | st.floats(allow_nan=True)
    | st.text(max_size=12),
    lambda inner: st.lists(inner, max_size=4)
    | st.dictionaries(st.sampled_from(["states", "vars", "#meta", "x", "#tup", "#set", "#map",
                                       "#bigint", "action", "model", "parameters"]) | st.text(
        max_size=6), inner, max_size=4),
    max_leaves=12)


def _itf_like(draw: Any) -> Any:
    """A document near an ITF trace of toy-counter: states whose values are fuzzed."""
    states = draw(st.lists(st.dictionaries(st.sampled_from(["x", "#meta", "y"]), JSON,
                                           max_size=3), max_size=4))
    meta = draw(st.one_of(st.none(), JSON, st.just({"model": "toy-counter",
                                                    "description": "BelowBad violated"})))
    document: dict[str, Any] = {"states": states, "vars": ["x"]}
    if meta is not None:
        document["#meta"] = meta
    return document


@FUZZ
@given(data=st.data(), raw=st.booleans(), bom=st.booleans())
def test_render_reads_any_itf_like_input(tmp_path_factory: pytest.TempPathFactory,
                                         data: st.DataObject, raw: bool, bom: bool) -> None:
    folder = tmp_path_factory.mktemp("itf")
    trace = folder / "t.itf.json"
    text = data.draw(st.text(max_size=80)) if raw else json.dumps(
        data.draw(st.builds(lambda: None).flatmap(lambda _: st.composite(
            lambda draw: _itf_like(draw))())), allow_nan=True)
    trace.write_bytes((b"\xef\xbb\xbf" if bom else b"") + text.encode("utf-8", "surrogatepass"))
    _ends_well(["render", str(trace), "-o", str(folder / "o.svg")], {0})


JSONL_LINE = st.one_of(
    st.dictionaries(st.sampled_from(["x", "action", "y", "#meta"]), JSON, max_size=3).map(
        json.dumps),
    st.text(alphabet=string.printable, max_size=30))


@FUZZ
@given(lines=st.lists(JSONL_LINE, max_size=5))
def test_validate_reads_any_json_lines(tmp_path_factory: pytest.TempPathFactory,
                                       lines: list[str]) -> None:
    trace = tmp_path_factory.mktemp("jsonl") / "t.jsonl"
    trace.write_text("\n".join(lines) + "\n", encoding="utf-8", errors="surrogatepass")
    _ends_well(["validate", "--model", "toy-counter", str(trace)], {0, 1, 3})


@FUZZ
@given(picks=st.lists(st.integers(0, len(LOG) - 1), min_size=1, max_size=6),
       cut=st.integers(0, 200), noise=st.text(max_size=40))
def test_validate_reads_any_kafka_log(tmp_path_factory: pytest.TempPathFactory,
                                      picks: list[int], cut: int, noise: str) -> None:
    """Lines of a real broker log, shuffled, one cut short, one replaced by noise."""
    lines = [LOG[i] for i in picks]
    lines[0] = lines[0][:cut]
    lines.append(lines[-1][:1] + noise)
    log = tmp_path_factory.mktemp("log") / "server.log"
    log.write_text("\n".join(lines) + "\n", encoding="utf-8", errors="surrogatepass")
    _ends_well(["validate", "--model", "kafka", str(log)], {0, 1, 3, 4})


PARAM_NAMES = st.sampled_from(["replicas", "log_size", "max_records", "max_leader_epoch",
                               "invariants", "nosuch", ""])


@FUZZ
@given(assignments=st.lists(st.tuples(PARAM_NAMES, st.text(max_size=12),
                                      st.sampled_from(["=", "", "=="])), max_size=3))
def test_check_reads_any_parameter_values(assignments: list[tuple[str, str, str]]) -> None:
    args = ["check", "--model", "tla-kip101", "--max-depth", "1", "--no-progress"]
    for name, value, sep in assignments:
        args += ["-p", f"{name}{sep}{value}"]
    _ends_well(args, {0, 1, 4})


TOML_KEYS = st.sampled_from(["model", "params", "invariants", "max-depth", "max_states",
                             "workers", "engine", "symmetry", "walks", "check", "simulate",
                             "json", "frobnicate", "replicas"])
TOML_VALUES = st.one_of(
    st.integers(-2, 10**12).map(str), st.booleans().map(lambda b: str(b).lower()),
    st.text(alphabet=string.ascii_letters + "-_ ,", max_size=10).map(json.dumps),
    st.just('"toy-counter"'), st.just("[]"), st.just('["BelowBad"]'), st.just("{}"),
    st.just("{ limit = 3 }"), st.text(max_size=8))


@FUZZ
@given(entries=st.lists(st.tuples(st.booleans(), TOML_KEYS, TOML_VALUES), max_size=5))
def test_check_reads_any_run_file(tmp_path_factory: pytest.TempPathFactory,
                                  entries: list[tuple[bool, str, str]]) -> None:
    lines = ['model = "toy-counter"']
    for table, key, value in entries:
        lines.append(f"[{key}]" if table else f"{key} = {value}")
    run = tmp_path_factory.mktemp("toml") / "run.toml"
    run.write_text("\n".join(lines) + "\n", encoding="utf-8", errors="surrogatepass")
    _ends_well(["check", "--config", str(run), "--max-depth", "2", "--no-progress"],
               {0, 1, 4})
