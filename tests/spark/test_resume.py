"""A run whose driver is killed resumes from its last completed level with the same answers."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from isrlab.checker import toys
from isrlab.checker.bfs import CheckOptions
from isrlab.checker.bfs import explore as explore_locally
from isrlab.checker.runstore import RunDirError
from isrlab.cli_support import resolve_model
from isrlab.spark_explore import SparkOptions, explore
from isrlab.spark_explore.engine import level_files
from isrlab.spark_explore.tasks import side_dir
from tests.spark.conftest import comparable, needs_java
from tests.spark.processes import start_driver

pytestmark = [pytest.mark.spark, pytest.mark.slow, needs_java]


def test_a_killed_driver_resumes_from_the_last_level_with_the_same_trace(
    tmp_path: Path, spark_context: Any
) -> None:
    run_dir = tmp_path / "run"
    driver = start_driver([
        "--model", "tla-truncate-to-hw", "--master", "local[2]", "--run-dir", str(run_dir),
        "--buckets", "3",
    ])
    try:
        driver.wait_for_line("spark: level 4:", timeout=400)
    finally:
        driver.kill()
    commit = json.loads((run_dir / "commit.json").read_text())
    assert 4 <= commit["level"] < 9  # killed mid-run: the violation is at level 9
    assert commit["buckets"] == 3  # --buckets
    _, params, model = resolve_model("tla-truncate-to-hw", [])
    options = CheckOptions(run_dir=run_dir, params=params)
    resumed = explore(model, options, SparkOptions(), spark_context)
    local = explore_locally(resolve_model("tla-truncate-to-hw", [])[2], CheckOptions(params=params))
    assert resumed.violation is not None
    assert (resumed.violation.invariant, resumed.violation.length) == ("WeakIsr", 9)  # TLC
    assert comparable(resumed) == comparable(local)
    assert len(level_files(run_dir)) == 9
    # The resumed levels kept the run's 3 buckets (SparkOptions() alone would give 4 per core).
    assert len(list(side_dir(run_dir, 9).glob("bucket-*.fp"))) == 3


def test_a_run_directory_of_another_check_is_refused(tmp_path: Path, spark_context: Any) -> None:

    run_dir = tmp_path / "run"
    explore(toys.Counter(2), CheckOptions(run_dir=run_dir), SparkOptions(), spark_context)
    with pytest.raises(RunDirError, match="belongs to another check"):
        explore(toys.Graph(), CheckOptions(run_dir=run_dir), SparkOptions(), spark_context)
