"""The glue between ``isrlab check --engine spark [--master URL]`` and the Spark engine.

``run_check`` takes the same ``CheckOptions`` the local engine gets and returns the same
``CheckResult``, so the command prints and writes JSON/ITF exactly as for ``--engine bfs``.
Progress goes to stderr as one line per level, after a line naming the master and the
Spark UI address.
"""

from __future__ import annotations

import os
import re
import shutil
import sys
import warnings
from typing import Any

import click

from isrlab.checker.bfs import CheckOptions
from isrlab.checker.model import Model
from isrlab.checker.report import CheckResult
from isrlab.spark_explore.engine import explore
from isrlab.spark_explore.session import SparkOptions

DEFAULT_MASTER = "local[*]"

_MASTER = re.compile(
    r"local(\[(\*|\d+)(,\d+)?\])?|local-cluster\[\d+,\d+,\d+\]"
    r"|spark://[^\s/]+(,[^\s/]+)*|yarn|k8s://\S+|mesos://\S+"
)


class SparkUnavailable(click.ClickException):
    """The Spark engine cannot run (no Java, a malformed master URL): one line, exit 2."""

    exit_code = 2


def check_prerequisites(master: str) -> None:
    """Fail with one line when Java is missing or ``master`` is not a Spark master URL."""
    if not _MASTER.fullmatch(master):
        raise SparkUnavailable(
            f"--master {master!r} is not a Spark master URL "
            "(local[*], local[N], spark://HOST:PORT, yarn, k8s://...)"
        )
    java_home = os.environ.get("JAVA_HOME")
    if shutil.which("java") is None and not (java_home and os.path.isdir(java_home)):
        raise SparkUnavailable("the Spark engine needs Java 17 (no java on PATH, no JAVA_HOME)")


def _stderr_line(line: str) -> None:
    sys.stderr.write(line + "\n")
    sys.stderr.flush()


def quiet_pyspark_warnings() -> None:
    """Silence PySpark's advice about the pandas version: the engine never uses pandas."""
    warnings.filterwarnings(
        "ignore", message="PySpark does not yet fully support pandas", category=FutureWarning
    )


def spark_options(
    master: str | None, progress: bool, buckets: int | None = None,
) -> SparkOptions:
    """Spark settings from the command line and the environment.

    ``ISRLAB_SPARK_DRIVER_MEMORY`` overrides the 4 GiB driver (in ``local[*]`` mode the driver
    JVM is the executor too); ``ISRLAB_SPARK_EXECUTOR_MEMORY`` sets the executors' memory
    on a cluster.  ``buckets`` fixes the number of fingerprint buckets of a new run
    (``--buckets``; default 4 per core).
    """
    return SparkOptions(
        master=master or os.environ.get("ISRLAB_SPARK_MASTER", DEFAULT_MASTER),
        driver_memory=os.environ.get("ISRLAB_SPARK_DRIVER_MEMORY", "4g"),
        executor_memory=os.environ.get("ISRLAB_SPARK_EXECUTOR_MEMORY"),
        progress=_stderr_line if progress else None,
        partitions=buckets,
    )


def run_check(
    model: Model[Any], options: CheckOptions, master: str | None, progress: bool,
    buckets: int | None = None,
) -> CheckResult:
    """Explore ``model`` on Spark (``master``: a Spark master URL, default ``local[*]``;
    ``buckets``: the fingerprint buckets of a new run, default 4 per core)."""
    chosen = spark_options(master, progress, buckets)
    check_prerequisites(chosen.master)
    quiet_pyspark_warnings()
    return explore(model, options, chosen)
