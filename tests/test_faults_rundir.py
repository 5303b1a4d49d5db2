"""The fault campaign on a run directory (issue 34, item 7; docs/reliability.md): a damaged
state file found at resume, two runs on one directory at once, and the disk filling up
mid-run.  Each ends in one line and exit 2, never a wrong count, and the run resumes."""

from __future__ import annotations

import fcntl
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from isrlab.cli import cli

ROOT = Path(__file__).resolve().parents[1]
MODEL = ["--model", "toy-symmetric", "-p", "procs=5", "-p", "values=6"]


def _check(run_dir: Path, *extra: str, workers: int = 1) -> tuple[int, str, str]:
    result = CliRunner().invoke(cli, ["check", *MODEL, "--no-progress", "--run-dir",
                                      str(run_dir), "--workers", str(workers), *extra])
    return result.exit_code, result.stdout, result.stderr


def _counts(out: str) -> str:
    """The summary line's counts (``N distinct / M generated states, diameter D``)."""
    first = out.splitlines()[0]
    return first.split("; ", 1)[1].split(", ", 2)[0] + ", " + first.split(", ")[1]


@pytest.fixture(scope="module")
def reference() -> str:
    result = CliRunner().invoke(cli, ["check", *MODEL, "--no-progress"])
    assert result.exit_code == 0, result.output
    return _counts(result.stdout)


def _one_line(code: int, err: str, *words: str) -> None:
    assert code == 2, err
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("isrlab: error: "), err
    assert "Traceback" not in err
    for word in words:
        assert word in lines[0], (word, lines[0])


# -- a damaged state file at resume -----------------------------------------------------------

@settings(max_examples=24, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(kind=st.sampled_from(["links", "frontier"]), cut=st.booleans(),
       where=st.floats(min_value=0, max_value=1, exclude_max=True),
       workers=st.sampled_from([1, 2]))
def test_a_damaged_state_file_is_found_at_resume(
    tmp_path_factory: pytest.TempPathFactory, reference: str, kind: str, cut: bool,
    where: float, workers: int,
) -> None:
    run_dir = tmp_path_factory.mktemp("run") / "r"
    code, out, err = _check(run_dir, "--max-depth", "4", workers=workers)
    assert code == 0, err
    level = json.loads((run_dir / "commit.json").read_text())["level"]
    files = sorted(run_dir.glob(f"{kind}-{level:04d}-*.bin"))
    assert files
    victim = files[0]
    data = bytearray(victim.read_bytes())
    at = int(where * len(data))
    if cut:
        victim.write_bytes(bytes(data[:at]))  # truncated
    else:
        data[at] ^= 0xFF  # one corrupted byte
        victim.write_bytes(bytes(data))
    code, out, err = _check(run_dir, workers=workers)
    if code == 0:  # never a wrong count
        assert _counts(out) == reference
    else:
        _one_line(code, err, str(run_dir), victim.name, "damaged")


# -- two runs on one directory ----------------------------------------------------------------

def test_a_second_run_on_a_directory_in_use_is_refused(tmp_path: Path, reference: str) -> None:
    run_dir = tmp_path / "r"
    first = subprocess.run([sys.executable, "-m", "isrlab", "check", *MODEL, "--no-progress",
                            "--run-dir", str(run_dir), "--max-depth", "3"],
                           cwd=ROOT, capture_output=True, text=True, timeout=300, check=False)
    assert first.returncode == 0, first.stderr  # (its own process: its lock ends with it)
    fd = os.open(run_dir / "lock", os.O_RDWR)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)  # another run holds it
        done = subprocess.run([sys.executable, "-m", "isrlab", "check", *MODEL,
                               "--no-progress", "--run-dir", str(run_dir)],
                              cwd=ROOT, capture_output=True, text=True, timeout=300,
                              check=False)
        _one_line(done.returncode, done.stderr, str(run_dir), "in use")
        assert done.stdout == ""
    finally:
        os.close(fd)
    done = subprocess.run([sys.executable, "-m", "isrlab", "check", *MODEL, "--no-progress",
                           "--run-dir", str(run_dir)],
                          cwd=ROOT, capture_output=True, text=True, timeout=300, check=False)
    assert done.returncode == 0, done.stderr
    assert _counts(done.stdout) == reference


# -- the disk full mid-run (a small tmpfs) ----------------------------------------------------

@pytest.fixture
def small_disk(tmp_path: Path) -> object:
    mount = tmp_path / "disk"
    mount.mkdir()
    if os.geteuid() != 0:
        pytest.skip("mounting a tmpfs needs root")
    made = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=96k", "tmpfs", str(mount)],
                          capture_output=True, text=True, check=False)
    if made.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {made.stderr.strip()}")
    try:
        yield mount
    finally:
        subprocess.run(["umount", str(mount)], check=False)


@pytest.mark.parametrize("workers", [1, 2])
def test_the_disk_filling_up_is_one_line_and_the_run_resumes(
    small_disk: Path, reference: str, workers: int,
) -> None:
    run_dir = small_disk / "r"
    done = subprocess.run([sys.executable, "-m", "isrlab", "check", *MODEL, "--no-progress",
                           "--run-dir", str(run_dir), "--workers", str(workers)],
                          cwd=ROOT, capture_output=True, text=True, timeout=300, check=False)
    _one_line(done.returncode, done.stderr, "No space left on device", "resume")
    committed = json.loads((run_dir / "commit.json").read_text())["level"]
    assert committed >= 1
    assert not list(run_dir.glob("*.tmp"))  # no half-written file left behind
    subprocess.run(["mount", "-o", "remount,size=64m", str(small_disk)], check=True)
    done = subprocess.run([sys.executable, "-m", "isrlab", "check", *MODEL, "--no-progress",
                           "--run-dir", str(run_dir), "--workers", str(workers)],
                          cwd=ROOT, capture_output=True, text=True, timeout=300, check=False)
    assert done.returncode == 0, done.stderr
    assert _counts(done.stdout) == reference  # resumed from the committed level, same counts
