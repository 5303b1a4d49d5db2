"""What CI needs from ``isrlab check`` (issue 18, item 4): --fail-on-incomplete, progress
lines in a log, exact and monotone progress counts, and a self-describing JSON report."""

from __future__ import annotations

import json
import subprocess
import sys
from datetime import UTC, datetime
from pathlib import Path

import pytest
from click.testing import CliRunner

from isrlab import __version__
from isrlab.checker.bfs import CheckOptions, Progress, explore
from isrlab.checker.toys import Symmetric
from isrlab.cli import cli

ROOT = Path(__file__).resolve().parents[2]


def _invoke(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(cli, list(args))
    return result.exit_code, result.stdout, result.stderr


# -- --fail-on-incomplete -------------------------------------------------------------------

def test_a_run_cut_by_max_depth_exits_4_with_fail_on_incomplete() -> None:
    code, out, _ = _invoke("check", "--model", "toy-counter", "-p", "limit=9",
                           "--max-depth", "3", "--fail-on-incomplete")
    assert code == 4
    assert "INCOMPLETE" in out


def test_a_run_cut_by_max_states_exits_4_with_fail_on_incomplete() -> None:
    code, _, _ = _invoke("check", "--model", "toy-counter", "-p", "limit=9",
                         "--max-states", "2", "--fail-on-incomplete")
    assert code == 4


def test_without_the_flag_an_incomplete_run_still_exits_0() -> None:
    code, _, _ = _invoke("check", "--model", "toy-counter", "-p", "limit=9", "--max-depth", "3")
    assert code == 0


def test_a_complete_run_or_a_violation_keeps_its_exit_status() -> None:
    assert _invoke("check", "--model", "toy-counter", "--fail-on-incomplete")[0] == 0
    assert _invoke("check", "--model", "toy-counter", "-p", "bad=2",
                   "--fail-on-incomplete")[0] == 1


def test_the_help_names_exit_status_4() -> None:
    code, out, _ = _invoke("check", "--help")
    assert code == 0
    assert "--fail-on-incomplete" in out
    assert "4" in " ".join(out.split()).split("Exit status:")[1]


# -- progress -------------------------------------------------------------------------------

@pytest.mark.parametrize("workers", [1, 2, 3])
def test_progress_counts_never_go_backwards_and_never_exceed_the_truth(workers: int) -> None:
    seen: list[Progress] = []
    model = Symmetric(6, 6, -1)  # 6^6 = 46,656 states, many found by several workers
    result = explore(model, CheckOptions(workers=workers, progress=seen.append,
                                         progress_interval_s=0.0))
    assert result.distinct_states == 6 ** 6
    assert len(seen) > 5
    distinct = [p.distinct for p in seen]
    generated = [p.generated for p in seen]
    assert distinct == sorted(distinct)
    assert generated == sorted(generated)
    assert distinct[-1] <= result.distinct_states
    assert generated[-1] <= result.generated_states


def test_progress_in_a_log_is_one_plain_line_per_interval(tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "isrlab", "check", "--model", "toy-symmetric", "-p", "procs=7",
         "-p", "values=5", "--progress-interval", "0.2"],
        cwd=ROOT, capture_output=True, text=True, timeout=600, check=False,
    )
    assert done.returncode == 0, done.stderr
    assert "\r" not in done.stderr
    lines = done.stderr.splitlines()
    assert len(lines) >= 2, done.stderr
    assert all(line.startswith("progress: depth ") for line in lines), lines
    counts = [int(line.split("distinct ")[1].split()[0].replace(",", "")) for line in lines]
    assert counts == sorted(counts)


def test_no_progress_silences_the_log() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "isrlab", "check", "--model", "toy-symmetric", "-p", "procs=7",
         "-p", "values=5", "--progress-interval", "0.2", "--no-progress"],
        cwd=ROOT, capture_output=True, text=True, timeout=600, check=False,
    )
    assert done.returncode == 0
    assert done.stderr == ""


# -- the JSON report ------------------------------------------------------------------------

def test_the_json_report_names_version_command_parameters_and_time(tmp_path: Path) -> None:
    report = tmp_path / "r.json"
    before = datetime.now(UTC).replace(microsecond=0)
    code, _, _ = _invoke("check", "--model", "toy-counter", "-p", "limit=4",
                         "--json", str(report))
    assert code == 0
    data = json.loads(report.read_text())
    assert data["isrlab_version"] == __version__
    assert data["command"][-4:] == ["-p", "limit=4", "--json", str(report)]
    assert data["params"] == {"limit": 4, "bad": -1, "bound": -1}
    assert data["timestamp"].endswith("Z")
    stamp = datetime.fromisoformat(data["timestamp"].replace("Z", "+00:00"))
    assert before <= stamp <= datetime.now(UTC)


def test_the_bmc_report_is_self_describing_too(tmp_path: Path) -> None:
    report = tmp_path / "r.json"
    code, _, _ = _invoke("bmc", "--model", "tla-kip101", "--depth", "2",
                         "--json", str(report))
    assert code == 0
    data = json.loads(report.read_text())
    assert data["isrlab_version"] == __version__
    assert "bmc" in data["command"]
    assert data["params"]["replicas"] == 2
