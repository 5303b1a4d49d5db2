"""The executors' Python workers import the driver's own isrlab (checkout, worktree or wheel)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

import isrlab
from isrlab.spark_explore.session import SparkOptions, context_of, isrlab_import_root, spark_conf
from tests.spark.conftest import needs_java

pytestmark = [pytest.mark.spark, needs_java]


def _worker_core_file(_: int) -> str:
    """Where a worker finds isrlab.core (runs on the executor)."""
    import isrlab.core

    return str(Path(isrlab.core.__file__).resolve())


def test_a_local_session_puts_the_drivers_isrlab_on_the_workers_path() -> None:
    conf = spark_conf(SparkOptions(master="local[2]"))
    assert conf["spark.executorEnv.PYTHONPATH"] == isrlab_import_root()
    assert Path(isrlab_import_root()) / "isrlab" == Path(isrlab.__file__).resolve().parent


def test_workers_import_the_same_isrlab_core_as_the_driver(spark_context: Any) -> None:
    import isrlab.core

    found = context_of(spark_context).parallelize([0, 1], 2).map(_worker_core_file).collect()
    assert found == [str(Path(isrlab.core.__file__).resolve())] * 2
