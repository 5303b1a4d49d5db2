"""A run stopped at any moment resumes from its last completed level with identical results."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from functools import cache
from pathlib import Path

import pytest

from isrlab.checker.bfs import CheckOptions, explore
from isrlab.checker.report import CheckResult
from isrlab.checker.runstore import RunDirError
from isrlab.checker.toys import Counter, Symmetric
from tests.checker.conftest import run

ROOT = Path(__file__).resolve().parents[2]


def _start_check(run_dir: Path, workers: int, report: Path) -> subprocess.Popen[bytes]:
    command = [
        sys.executable, "-m", "isrlab", "check", "--model", "toy-symmetric",
        "-p", "procs=6", "-p", "values=7", "-p", "bad_sum=34",
        "--workers", str(workers), "--run-dir", str(run_dir), "--json", str(report),
        "--no-progress",
    ]
    return subprocess.Popen(command, cwd=ROOT, stdout=subprocess.DEVNULL)


def _committed_level(run_dir: Path) -> int:
    try:
        return int(json.loads((run_dir / "commit.json").read_text())["level"])
    except (OSError, ValueError, KeyError):
        return 0


def _kill_at_level(process: subprocess.Popen[bytes], run_dir: Path, level: int) -> int:
    deadline = time.monotonic() + 120
    while _committed_level(run_dir) < level and time.monotonic() < deadline:
        if process.poll() is not None:
            pytest.fail("the run finished before it could be killed")
        time.sleep(0.02)
    os.kill(process.pid, signal.SIGKILL)
    process.wait()
    return _committed_level(run_dir)


def _assert_no_orphans(marker: str) -> None:
    """Worker processes notice their coordinator died and exit within a few seconds."""
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        alive = []
        for entry in Path("/proc").iterdir():
            if entry.name.isdigit():
                try:
                    if marker in (entry / "cmdline").read_bytes().decode(errors="replace"):
                        alive.append(entry.name)
                except OSError:
                    continue
        if not alive:
            return
        time.sleep(0.2)
    pytest.fail(f"worker processes outlived their coordinator: {alive}")


@cache
def _expected() -> CheckResult:
    return run(Symmetric(6, 7, bad_sum=34))


@pytest.mark.same_worker("resume-expected-result")
@pytest.mark.parametrize(("first_workers", "second_workers"), [(1, 1), (2, 1), (1, 2)])
def test_a_killed_run_resumes_to_the_same_result(
    tmp_path: Path, first_workers: int, second_workers: int
) -> None:
    run_dir, report = tmp_path / "run", tmp_path / "report.json"
    process = _start_check(run_dir, first_workers, report)
    killed_at = _kill_at_level(process, run_dir, 12)
    _assert_no_orphans(str(run_dir))
    assert 12 <= killed_at < 35
    assert not report.exists()
    resumed = _start_check(run_dir, second_workers, report)
    assert resumed.wait(timeout=300) == 1
    expected = _expected()
    got = json.loads(report.read_text())
    assert got["distinct_states"] == expected.distinct_states
    assert got["generated_states"] == expected.generated_states
    assert got["diameter"] == expected.diameter == 35
    assert expected.violation is not None
    assert [s["action"] for s in got["violation"]["trace"]] == [
        s.action for s in expected.violation.trace
    ]


def test_a_finished_run_directory_reports_the_same_result_again(tmp_path: Path) -> None:
    options = CheckOptions(run_dir=tmp_path / "run", params={"procs": 4})
    first = explore(Symmetric(4, 3, bad_sum=5), options)
    again = explore(Symmetric(4, 3, bad_sum=5), options)
    assert (again.distinct_states, again.generated_states, again.violation) == (
        first.distinct_states, first.generated_states, first.violation)


def test_a_run_directory_of_another_model_is_refused_and_left_alone(tmp_path: Path) -> None:
    run_dir = tmp_path / "run"
    explore(Counter(3), CheckOptions(run_dir=run_dir, params={"limit": 3}))
    before = sorted(p.name for p in run_dir.iterdir())
    with pytest.raises(RunDirError, match="belongs to another check"):
        explore(Counter(4), CheckOptions(run_dir=run_dir, params={"limit": 4}))
    assert sorted(p.name for p in run_dir.iterdir()) == before


def test_a_foreign_non_empty_directory_is_refused(tmp_path: Path) -> None:
    (tmp_path / "notes.txt").write_text("mine")
    with pytest.raises(RunDirError, match="not an isrlab run"):
        explore(Counter(3), CheckOptions(run_dir=tmp_path))
    assert (tmp_path / "notes.txt").read_text() == "mine"
