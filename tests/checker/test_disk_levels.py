"""The on-disk level store (checker/diskbfs.py): a run killed in the middle of a level
resumes to the same result, with one or two workers, with or without a view; a format-2
run directory is upgraded; the compiled link table agrees with its Python version.

Reference figures are closed forms or TLC's: ``toy-symmetric`` with ``procs`` processes of
``values`` values reaches ``values ** procs`` states, ``1 + procs * values ** procs``
generated, diameter ``procs * (values - 1) + 1``, and its shortest trace to the sum ``s``
has ``s`` increments (``s + 1`` states); ``tla-kraft-3.5`` with 2 brokers, RF 2, min ISR 1,
ISR 2 and one fencing has 1,260 distinct / 3,436 generated states, depth 21, under the
published view (TLC 2.15, docs/conformance.md).
"""

from __future__ import annotations

import json
import os
import pickle
import random
import signal
import subprocess
import sys
import time
from array import array
from pathlib import Path

import pytest

from isrlab.checker.bfs import CheckOptions, explore
from isrlab.checker.fingerprint import (
    COMPILED_SET,
    PyLinkTable,
    link_table,
    pure_python_forced,
)
from isrlab.checker.runstore import MAGIC, RunStore, _digest
from isrlab.checker.toys import Symmetric
from isrlab.cli_support import resolve_model

ROOT = Path(__file__).resolve().parents[2]


def _check(run_dir: Path, workers: int, report: Path, *extra: str) -> subprocess.Popen[bytes]:
    command = [
        sys.executable, "-m", "isrlab", "check", "--model", "toy-symmetric",
        "-p", "procs=6", "-p", "values=7", "-p", "bad_sum=34", "--workers", str(workers),
        "--run-dir", str(run_dir), "--json", str(report), "--no-progress", *extra,
    ]
    return subprocess.Popen(command, cwd=ROOT, stdout=subprocess.DEVNULL)


def _committed(run_dir: Path) -> int:
    try:
        return int(json.loads((run_dir / "commit.json").read_text())["level"])
    except (OSError, ValueError, KeyError):
        return 0


def _kill_mid_level(process: subprocess.Popen[bytes], run_dir: Path, after: int) -> int:
    """SIGKILL once a level past ``after`` is being built (its build files exist)."""
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        if process.poll() is not None:
            pytest.fail("the run finished before it could be killed")
        level = _committed(run_dir)
        if level >= after and any(run_dir.glob(f"build-{level + 1:04d}-*")):
            os.kill(process.pid, signal.SIGKILL)
            process.wait()
            return level
        time.sleep(0.005)
    pytest.fail("no level was being built in time")


@pytest.mark.parametrize(("first", "second"), [(1, 2), (2, 1)])
def test_a_run_killed_mid_level_resumes_to_the_same_counts_and_trace(
    tmp_path: Path, first: int, second: int
) -> None:
    run_dir, report = tmp_path / "run", tmp_path / "report.json"
    killed_at = _kill_mid_level(_check(run_dir, first, report), run_dir, 10)
    assert 10 <= killed_at < 35 and not report.exists()
    assert any(run_dir.glob("build-*"))  # the level being built was left half written
    assert _check(run_dir, second, report).wait(timeout=300) == 1  # the violation: exit 1
    assert not any(run_dir.glob("build-*"))
    in_memory = explore(Symmetric(6, 7, bad_sum=34), CheckOptions())
    got = json.loads(report.read_text())
    assert (got["distinct_states"], got["generated_states"]) == (
        in_memory.distinct_states, in_memory.generated_states)
    assert got["diameter"] == 35
    assert in_memory.violation is not None
    trace = got["violation"]["trace"]
    assert len(trace) == 35
    assert [s["action"] for s in trace] == [s.action for s in in_memory.violation.trace]


@pytest.mark.parametrize(("first", "second"), [(2, 1), (1, 2)])
def test_a_view_search_resumed_with_another_worker_count_matches_tlc(
    tmp_path: Path, first: int, second: int
) -> None:
    _entry, values, model = resolve_model("tla-kraft-3.5", [
        "brokers=2", "replication_factor=2", "min_isr=1", "init_isr_size=2",
        "fence_broker_limit=1"])
    options = CheckOptions(run_dir=tmp_path / "run", params=values, workers=first, max_depth=9)
    stopped = explore(model, options)
    assert not stopped.complete
    done = explore(model, CheckOptions(run_dir=tmp_path / "run", params=values, workers=second))
    assert (done.distinct_states, done.generated_states, done.diameter, done.complete) == (
        1260, 3436, 21, True)


def test_a_format_2_run_directory_is_read_and_upgraded(tmp_path: Path) -> None:
    run_dir = tmp_path / "run"
    model, params = Symmetric(4, 3), {"procs": 4, "values": 3}
    explore(model, CheckOptions(run_dir=run_dir, params=params, max_depth=5))
    # Rewrite it as format 2 wrote it: the frontier one sealed pickle, no ``parts``.
    store = RunStore(run_dir)
    records = list(store.frontier_records(5, 0, keyed=False))
    payload = pickle.dumps((b"".join(r[0].to_bytes(8, sys.byteorder) for r in records),
                            [r[4] for r in records]), protocol=5)
    (run_dir / "frontier-0005-0.bin").write_bytes(payload + MAGIC + _digest(payload))
    meta = json.loads((run_dir / "meta.json").read_text())
    (run_dir / "meta.json").write_text(json.dumps({**meta, "format": 2}))
    commit = store.commit()
    assert commit is not None
    del commit["parts"]
    store.write_commit(commit)
    done = explore(model, CheckOptions(run_dir=run_dir, params=params))
    assert (done.distinct_states, done.generated_states, done.diameter) == (
        3**4, 1 + 4 * 3**4, 4 * 2 + 1)
    assert json.loads((run_dir / "meta.json").read_text())["format"] == 4


def test_a_format_2_directory_written_by_two_then_one_worker_keeps_every_state(
    tmp_path: Path,
) -> None:
    # Format 2's commit names only its last run's worker count: levels 1-4 written by two
    # workers (two links files each), level 5 by one.  The upgrade counts the files, so no
    # state of worker 1 is missing from the visited set (else it is found again as new).
    run_dir = tmp_path / "run"
    model, params = Symmetric(4, 3), {"procs": 4, "values": 3}
    explore(model, CheckOptions(run_dir=run_dir, params=params, workers=2, max_depth=4))
    explore(model, CheckOptions(run_dir=run_dir, params=params, workers=1, max_depth=5))
    store = RunStore(run_dir)
    commit = store.commit()
    assert commit is not None and commit["parts"] == [2, 2, 2, 2, 1]
    del commit["parts"]
    commit["workers"] = 1
    store.write_commit(commit)
    meta = json.loads((run_dir / "meta.json").read_text())
    (run_dir / "meta.json").write_text(json.dumps({**meta, "format": 2}))
    done = explore(model, CheckOptions(run_dir=run_dir, params=params))
    assert (done.distinct_states, done.generated_states, done.diameter) == (
        3**4, 1 + 4 * 3**4, 4 * 2 + 1)


@pytest.mark.skipif(COMPILED_SET is None or pure_python_forced(),
                    reason="checker/_fpset.c is not built or turned off")
@pytest.mark.parametrize("keep_first", [False, True])
def test_the_compiled_link_table_agrees_with_the_python_one(keep_first: bool) -> None:
    rng = random.Random(7)
    names = ["b", "a", "Init", "c(1)"]
    compiled, python = link_table(names, keep_first), PyLinkTable(names, keep_first)
    assert type(compiled) is not PyLinkTable
    offers = [(rng.randrange(3000), rng.randrange(5), rng.randrange(4)) for _ in range(20000)]
    for fp, parent, code in offers:
        assert compiled.offer(fp, parent, code) == python.offer(fp, parent, code)
    assert compiled.columns() == python.columns()
    more = (array_bytes("Q", [f for f, _, _ in offers[:500]]),
            array_bytes("Q", [p for _, p, _ in offers[500:1000]]),
            array_bytes("I", [c for _, _, c in offers[1000:1500]]))
    compiled.offer_columns(*more)
    python.offer_columns(*more)
    for fp in range(0, 3100, 7):
        assert compiled.claim(fp) == python.claim(fp)
        assert compiled.claim(fp) is python.claim(fp) is None
    assert compiled.columns() == python.columns() and len(compiled) == len(python)


def array_bytes(kind: str, values: list[int]) -> bytes:
    return array(kind, values).tobytes()
