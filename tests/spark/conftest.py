"""Shared fixtures of the Spark engine's tests: one local Spark session, answer comparison.

Every test here needs a JVM; without Java they are skipped with that reason.  The session is
``local[2]`` and shared by the whole test session (starting a JVM costs seconds); its JVM, like
every other one the tests start, gets ``processes.TEST_JVM_OPTIONS``.
"""

from __future__ import annotations

import shutil
import warnings
from collections.abc import Iterator
from typing import Any

import pytest

from isrlab.checker.report import CheckResult

HAVE_JAVA = shutil.which("java") is not None

needs_java = pytest.mark.skipif(not HAVE_JAVA, reason="Java 17 is not installed: no JVM for Spark")


def comparable(result: CheckResult) -> dict[str, Any]:
    """A result's JSON report without what legitimately differs between engines."""
    report = result.to_json()
    for key in ("engine", "elapsed_s", "workers"):
        report.pop(key)
    return report


@pytest.fixture(scope="session")
def spark_context() -> Iterator[Any]:
    """A ``local[2]`` Spark context for the whole test run (the engine's ``session``)."""
    if not HAVE_JAVA:
        pytest.skip("Java 17 is not installed: no JVM for Spark")
    from isrlab.spark_explore.command import quiet_pyspark_warnings
    from isrlab.spark_explore.session import SparkOptions, start_session

    quiet_pyspark_warnings()
    warnings.filterwarnings("ignore", category=FutureWarning, module="pyspark")
    from tests.spark.processes import jvm_options

    with pytest.MonkeyPatch.context() as patch:  # read once, when the driver's JVM starts
        patch.setenv("JDK_JAVA_OPTIONS", jvm_options())
        session, created = start_session(SparkOptions(master="local[2]", driver_memory="1g"))
    yield session
    if created:
        session.stop()
