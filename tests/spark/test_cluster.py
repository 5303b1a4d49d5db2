"""On a real Spark standalone cluster (master and worker on 127.0.0.1, started with pyspark's
own ``bin/spark-class``): the same answers, even when the worker's executor is killed."""

from __future__ import annotations

import json
import os
import signal
from collections.abc import Iterator
from pathlib import Path

import pytest

from isrlab.checker.bfs import CheckOptions
from isrlab.checker.bfs import explore as explore_locally
from isrlab.checker.report import explained_result
from isrlab.cli_support import resolve_model
from tests.spark.conftest import needs_java
from tests.spark.processes import Cluster, standalone_cluster, start_driver

pytestmark = [pytest.mark.spark, pytest.mark.slow, needs_java]


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Cluster]:
    """A standalone master and worker for this module, always stopped afterwards."""
    with standalone_cluster(tmp_path_factory.mktemp("cluster")) as running:
        yield running


def _local_report(model_name: str, assignments: list[str]) -> dict[str, object]:
    _, params, model = resolve_model(model_name, assignments)
    # as `isrlab check` reports it: with why the last state breaks the invariant
    report = explained_result(explore_locally(model, CheckOptions(params=params)),
                              model.invariants()).to_json()
    for key in ("engine", "elapsed_s", "workers"):
        report.pop(key)
    return report


def _spark_report(path: Path) -> dict[str, object]:
    report: dict[str, object] = json.loads(path.read_text())
    assert report.pop("engine") == "spark"
    for key in ("elapsed_s", "workers"):
        report.pop(key)
    # the run's own metadata (isrlab version, command line, start time) is not an answer
    assert report.pop("isrlab_version") and report.pop("command") and report.pop("timestamp")
    return report


def test_a_standalone_cluster_counts_the_symmetric_toy_as_the_local_checker(
    cluster: Cluster, tmp_path: Path
) -> None:
    out = tmp_path / "report.json"
    driver = start_driver([
        "--model", "toy-symmetric", "-p", "procs=3", "-p", "values=3",
        "--master", cluster.master_url, "--run-dir", str(tmp_path / "run"), "--json", str(out),
    ])
    code, log = driver.finish(timeout=600)
    assert code == 0, log
    report = _spark_report(out)
    assert report["distinct_states"] == 27  # 3 processes x 3 values: 3^3, counted by hand
    assert report == _local_report("toy-symmetric", ["procs=3", "values=3"])


def test_killing_the_executor_mid_run_changes_nothing(cluster: Cluster, tmp_path: Path) -> None:
    out = tmp_path / "report.json"
    before = len(cluster.executor_dirs())
    driver = start_driver([
        "--model", "tla-truncate-to-hw", "--master", cluster.master_url,
        "--run-dir", str(tmp_path / "run"), "--json", str(out),
    ])
    try:
        driver.wait_for_line("spark: level 4:", timeout=600)
        victims = cluster.executor_pids()
        assert victims, "no executor JVM under the worker"
        for pid in victims:
            os.kill(pid, signal.SIGKILL)
        code, log = driver.finish(timeout=900)
    finally:
        driver.kill()
    assert code == 1, log  # the violation, found all the same
    assert len(cluster.executor_dirs()) >= before + 2  # the master launched a new executor
    report = _spark_report(out)
    assert report["violation"]["invariant"] == "WeakIsr"  # type: ignore[index]  # JSON
    assert report["violation"]["length"] == 9  # type: ignore[index]  # TLC's trace length
    assert report == _local_report("tla-truncate-to-hw", [])
