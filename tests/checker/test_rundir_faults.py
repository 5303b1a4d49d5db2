"""Faults in a run directory (issue 34, item 7; docs/reliability.md): damaged files found at
resume, two runs on one directory at once, and the disk filling up mid-run.

The reference counts are closed forms, not our own output: ``toy-symmetric`` with ``procs``
processes of ``values`` values reaches every vector, ``values ** procs`` states; each has
``procs`` successors, so ``1 + procs * values ** procs`` are generated (the initial state
counts as generated); the farthest state is ``procs * (values - 1)`` steps away, so the
diameter (in levels, the initial state being level 1) is one more.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from click.testing import CliRunner
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from isrlab.checker.bfs import CheckOptions, Progress, explore
from isrlab.checker.report import CheckResult
from isrlab.checker.runstore import RunDirError, RunStore
from isrlab.checker.toys import Symmetric
from isrlab.cli import cli

ROOT = Path(__file__).resolve().parents[2]


def _golden(procs: int, values: int) -> tuple[int, int, int]:
    """(distinct, generated, diameter) of ``Symmetric(procs, values)``: see the docstring."""
    return values**procs, 1 + procs * values**procs, procs * (values - 1) + 1


def _counts(result: CheckResult) -> tuple[int, int, int]:
    return result.distinct_states, result.generated_states, result.diameter


def _options(
    run_dir: Path, procs: int, values: int, *, max_depth: int | None = None, workers: int = 1,
    progress: Callable[[Progress], None] | None = None,
) -> CheckOptions:
    return CheckOptions(run_dir=run_dir, params={"procs": procs, "values": values},
                        max_depth=max_depth, workers=workers, progress=progress,
                        progress_interval_s=0.0)


def _stopped_run(run_dir: Path, procs: int, values: int, depth: int, workers: int = 1) -> None:
    """A run stopped after level ``depth`` (as if killed after that level's commit)."""
    explore(Symmetric(procs, values), _options(run_dir, procs, values, max_depth=depth,
                                               workers=workers))


def _one_line_exit_2(args: list[str], *words: str) -> str:
    result = CliRunner().invoke(cli, args)
    assert result.exit_code == 2, (result.exit_code, result.output)
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("isrlab: error: "), result.stderr
    assert "Traceback" not in result.stderr
    for word in words:
        assert word in lines[0], (word, lines[0])
    return lines[0]


# -- damaged files at resume: one line, never a wrong count --------------------------------------

PROCS, VALUES, DEPTH = 3, 5, 7
"""The fuzzed run: 125 states in 13 levels, stopped after level 7."""


@pytest.fixture(scope="module")
def stopped(tmp_path_factory: pytest.TempPathFactory) -> Path:
    run_dir = tmp_path_factory.mktemp("stopped") / "run"
    _stopped_run(run_dir, PROCS, VALUES, DEPTH)
    return run_dir


def _damage(path: Path, how: str, at: float) -> None:
    data = path.read_bytes()
    offset = min(int(at * len(data)), max(len(data) - 1, 0))
    if how == "truncate":
        path.write_bytes(data[:offset])
    elif how == "flip":
        if data:
            path.write_bytes(data[:offset] + bytes([data[offset] ^ 0x5A]) + data[offset + 1:])
    elif how == "zero":
        path.write_bytes(bytes(len(data)))
    else:
        path.unlink()


@settings(max_examples=300, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(pick=st.integers(0, 10**6), how=st.sampled_from(["truncate", "flip", "zero", "delete"]),
       at=st.floats(0, 1))
def test_a_damaged_file_at_resume_is_one_line_or_the_exact_counts(
    stopped: Path, tmp_path: Path, pick: int, how: str, at: float
) -> None:
    """Any one file of a stopped run truncated, flipped, zeroed or deleted: the resumed run
    refuses in one line (``RunDirError``) or, when the damage is harmless (a file the resume
    does not read), gives the golden counts; never other counts."""
    run_dir = tmp_path / f"run-{pick}-{how}"
    shutil.copytree(stopped, run_dir)
    files = sorted(p for p in run_dir.iterdir() if p.name != "lock")
    target = files[pick % len(files)]
    _damage(target, how, at)
    try:
        result = explore(Symmetric(PROCS, VALUES), _options(run_dir, PROCS, VALUES))
    except RunDirError as error:
        message = str(error)
        assert "\n" not in message
        assert str(run_dir) in message
        return
    finally:
        shutil.rmtree(run_dir, ignore_errors=True)
    assert _counts(result) == _golden(PROCS, VALUES), (target.name, how, at)


@pytest.mark.parametrize("name", ["links-0003-0.bin", "frontier-0004-1.bin", "commit.json"])
def test_a_damaged_file_stops_a_two_worker_resume_in_one_line(tmp_path: Path, name: str) -> None:
    run_dir = tmp_path / "run"
    _stopped_run(run_dir, 3, 4, 4, workers=2)
    path = run_dir / name
    path.write_bytes(path.read_bytes()[:-3])
    with pytest.raises(RunDirError, match=f"{name} is truncated or corrupted"):
        explore(Symmetric(3, 4), _options(run_dir, 3, 4, workers=2))


def test_the_cli_reports_a_corrupted_state_file_in_one_line_and_exit_2(tmp_path: Path) -> None:
    run_dir = tmp_path / "run"
    args = ["check", "--model", "toy-symmetric", "-p", "procs=3", "-p", "values=4",
            "--run-dir", str(run_dir), "--no-progress"]
    assert CliRunner().invoke(cli, [*args, "--max-depth", "5"]).exit_code == 0
    path = run_dir / "frontier-0005-0.bin"
    data = bytearray(path.read_bytes())
    data[len(data) // 2] ^= 1
    path.write_bytes(bytes(data))
    _one_line_exit_2(args, "frontier-0005-0.bin", "checksum mismatch")


def test_an_intact_stopped_run_resumes_to_the_golden_counts(tmp_path: Path) -> None:
    run_dir = tmp_path / "run"
    _stopped_run(run_dir, 4, 4, 6, workers=2)
    resumed = explore(Symmetric(4, 4), _options(run_dir, 4, 4))
    assert _counts(resumed) == _golden(4, 4) == (256, 1025, 13)


# -- two runs on one directory: the second refuses; a dead holder's lock is taken over ---------

_HOLDER = """
import sys, time
from pathlib import Path
from isrlab.checker.runstore import RunStore
from isrlab.checker.bfs import _identity, CheckOptions
from isrlab.checker.toys import Symmetric
store = RunStore(Path(sys.argv[1]))
store.open(_identity(Symmetric(3, 4), CheckOptions(params={"procs": 3, "values": 4})))
print("locked", flush=True)
time.sleep(120)
"""


def test_a_second_run_on_a_locked_directory_refuses_and_a_dead_holders_lock_is_taken_over(
    tmp_path: Path,
) -> None:
    run_dir = tmp_path / "run"
    holder = subprocess.Popen([sys.executable, "-c", _HOLDER, str(run_dir)], cwd=ROOT,
                              stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout is not None and holder.stdout.readline() == "locked\n"
        line = _one_line_exit_2(
            ["check", "--model", "toy-symmetric", "-p", "procs=3", "-p", "values=4",
             "--run-dir", str(run_dir), "--no-progress"],
            f"in use by another run (process {holder.pid}", "refusing")
        assert "lock" in line
        with pytest.raises(RunDirError, match=f"process {holder.pid}"):
            explore(Symmetric(3, 4), _options(run_dir, 3, 4))
    finally:
        holder.kill()
        holder.wait()
    # The holder died (SIGKILL) leaving its pid in the lock file: the next run takes it over.
    assert (run_dir / "lock").read_text().strip() == str(holder.pid)
    seen: list[str] = []
    options = _options(run_dir, 3, 4, progress=lambda _: seen.append(
        (run_dir / "lock").read_text().strip()))
    assert _counts(explore(Symmetric(3, 4), options)) == _golden(3, 4)
    assert seen and set(seen) == {str(os.getpid())}  # the lock named this process meanwhile
    assert (run_dir / "lock").read_text() == ""  # released at the end
    again = explore(Symmetric(3, 4), _options(run_dir, 3, 4))  # and is free for the next run
    assert _counts(again) == _golden(3, 4)


_FORKING_HOLDER = _HOLDER.replace('print("locked", flush=True)', """import os
child = os.fork()
if child == 0:
    time.sleep(120)  # a worker process: it inherited the lock
    os._exit(0)
print(child, flush=True)""")


def test_a_dead_runs_lingering_workers_are_named_and_then_the_lock_is_taken_over(
    tmp_path: Path,
) -> None:
    run_dir = tmp_path / "run"
    holder = subprocess.Popen([sys.executable, "-c", _FORKING_HOLDER, str(run_dir)], cwd=ROOT,
                              stdout=subprocess.PIPE, text=True)
    assert holder.stdout is not None
    worker = int(holder.stdout.readline())
    try:
        holder.kill()  # the coordinator dies; its worker still holds the lock
        holder.wait()
        with pytest.raises(RunDirError, match=f"worker processes of a run that died \\(process "
                                              f"{holder.pid}.*try again"):
            explore(Symmetric(3, 4), _options(run_dir, 3, 4))
    finally:
        os.kill(worker, signal.SIGKILL)
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:  # the worker is reaped by init
        try:
            os.kill(worker, 0)
        except ProcessLookupError:
            break
        time.sleep(0.05)
    assert _counts(explore(Symmetric(3, 4), _options(run_dir, 3, 4))) == _golden(3, 4)


def test_a_lock_is_released_when_the_run_is_refused(tmp_path: Path) -> None:
    run_dir = tmp_path / "run"
    explore(Symmetric(2, 3), _options(run_dir, 2, 3))
    with pytest.raises(RunDirError, match="belongs to another check"):
        explore(Symmetric(2, 4), _options(run_dir, 2, 4))
    again = explore(Symmetric(2, 3), _options(run_dir, 2, 3))  # not left locked
    assert _counts(again) == _golden(2, 3)


# -- the disk filling up mid-run ---------------------------------------------------------------

@pytest.fixture
def small_disk(tmp_path: Path) -> Iterator[Path]:
    """A 64 KiB tmpfs (root only: skipped where mount is not permitted)."""
    mount = tmp_path / "disk"
    mount.mkdir()
    done = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=64k", "tmpfs", str(mount)],
                          capture_output=True, check=False)
    if done.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {done.stderr.decode().strip()}")
    try:
        yield mount
    finally:
        subprocess.run(["umount", "-l", str(mount)], check=False)


def _verify_committed(run_dir: Path) -> int:
    """Every file the last commit names reads back with its checksum; the committed level."""
    store = RunStore(run_dir)
    commit = store.commit()
    assert commit is not None
    level = int(commit["level"])
    for lv in range(1, level + 1):
        store.read_links(lv, 0)
    sum(1 for _ in store.frontier_records(level, 0, keyed=False))
    return level


def test_a_full_disk_stops_the_run_in_one_line_and_it_resumes_when_space_is_freed(
    small_disk: Path,
) -> None:
    run_dir = small_disk / "run"
    args = ["check", "--model", "toy-symmetric", "-p", "procs=5", "-p", "values=5",
            "--run-dir", str(run_dir), "--no-progress"]
    _one_line_exit_2(args, "No space left on device", "resume")
    level = _verify_committed(run_dir)
    assert 1 <= level < 21  # stopped mid-run, after some committed level
    assert not list(run_dir.glob("*.tmp"))  # no half-written file left behind
    subprocess.run(["mount", "-o", "remount,size=8m", str(small_disk)], check=True)
    result = CliRunner().invoke(cli, [*args, "--json", str(small_disk / "report.json")])
    assert result.exit_code == 0, result.output
    report = json.loads((small_disk / "report.json").read_text())
    counts = (report["distinct_states"], report["generated_states"], report["diameter"])
    assert counts == _golden(5, 5) == (3125, 15626, 21)
