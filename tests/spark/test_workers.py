"""The executors' Python workers import the driver's own isrlab (checkout, worktree or wheel);
under spark-submit, its settings are the ones the engine runs with."""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import Any

import pytest

import isrlab
from isrlab.spark_explore.session import SparkOptions, context_of, isrlab_import_root, spark_conf
from tests.spark.conftest import needs_java
from tests.spark.processes import PREEXEC, ROOT, SPARK_HOME, jvm_options, spark_env

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


def test_under_spark_submit_its_master_wins() -> None:
    # isrlab's own default master is local[*] (ISRLAB_SPARK_MASTER unset): spark-submit's
    # --master local[1] must be the one the engine runs on.
    env = {**spark_env(), "JDK_JAVA_OPTIONS": jvm_options()}
    env.pop("ISRLAB_SPARK_MASTER", None)
    done = subprocess.run(
        [str(SPARK_HOME / "bin" / "spark-submit"), "--master", "local[1]",
         str(ROOT / "isrlab" / "__main__.py"), "check", "--model", "toy-counter", "-p",
         "limit=2", "--engine", "spark", "--progress"],
        env=env, cwd=ROOT, capture_output=True, text=True, timeout=300, preexec_fn=PREEXEC,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    # spark-submit's PythonRunner sends the script's stderr (our progress) to its stdout.
    assert "spark: master local[1], 1 cores" in done.stdout
    assert "3 distinct / 5 generated states" in done.stdout


def test_the_jvms_get_the_quick_compiler_unless_the_user_says_otherwise() -> None:
    conf = spark_conf(SparkOptions(master="local[2]"))
    assert conf["spark.driver.extraJavaOptions"] == "-XX:TieredStopAtLevel=1 -XX:+UseSerialGC"
    mine = spark_conf(SparkOptions(conf={"spark.driver.extraJavaOptions": "-Xss4m"}))
    assert mine["spark.driver.extraJavaOptions"] == "-Xss4m"
