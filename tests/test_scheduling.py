"""The suite's scheduling (tests/conftest.py), on a small suite of its own run by pytest-xdist:
tests marked ``same_worker`` with one name run on one worker, and those marked
``start_first`` are collected first, in the order of their places."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent

SUITE = '''
import os
from pathlib import Path

import pytest


@pytest.mark.same_worker("shared")
@pytest.mark.parametrize("i", range(4))
def test_grouped(i: int) -> None:
    worker = os.environ.get("PYTEST_XDIST_WORKER", "none")
    (Path(__file__).parent / f"grouped-{i}.ran").write_text(worker)


@pytest.mark.parametrize("i", range(6))
def test_single(i: int) -> None:
    pass


@pytest.mark.start_first(2)
def test_second() -> None:
    pass


@pytest.mark.start_first(1)
def test_first() -> None:
    pass


@pytest.mark.spark
def test_spark() -> None:
    pass
'''


def _suite(tmp_path: Path) -> Path:
    (tmp_path / "conftest.py").write_text("from tests.conftest import *  # noqa: F403\n")
    (tmp_path / "pytest.ini").write_text(
        "[pytest]\nmarkers =\n    same_worker(name): one worker\n    start_first(place): first\n"
        "    spark: Spark\n")
    (tmp_path / "test_suite.py").write_text(SUITE)
    return tmp_path


def _pytest(where: Path, *args: str) -> str:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    done = subprocess.run([sys.executable, "-m", "pytest", "-p", "no:cacheprovider", *args],
                          cwd=where, env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stdout + done.stderr
    return done.stdout


def test_the_start_first_tests_are_collected_first_in_the_order_of_their_places(
        tmp_path: Path) -> None:
    out = _pytest(_suite(tmp_path), "-p", "no:xdist", "--collect-only", "-q")
    names = [line.split("::")[1] for line in out.splitlines() if "::" in line]
    # place 1, place 2, the Spark group (SPARK_PLACE), then the rest in collection order
    assert names[:3] == ["test_first", "test_second", "test_spark"]
    assert names[3:] == [*(f"test_grouped[{i}]" for i in range(4)),
                         *(f"test_single[{i}]" for i in range(6))]


@pytest.mark.slow
def test_the_tests_of_one_same_worker_name_run_on_one_worker(tmp_path: Path) -> None:
    out = _pytest(_suite(tmp_path), "-n", "2", "--dist", "loadgroup", "--no-loadscope-reorder",
                  "-v")
    workers = {path.read_text() for path in tmp_path.glob("grouped-*.ran")}
    assert len(list(tmp_path.glob("grouped-*.ran"))) == 4
    assert len(workers) == 1 and workers <= {"gw0", "gw1"}, out
    # both workers took part, so the group's one worker is not the only one there was
    assert set(re.findall(r"\[(gw\d)\] \[[ \d]+%\] PASSED", out)) == {"gw0", "gw1"}, out
