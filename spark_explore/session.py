"""Starting (or joining) the Spark context the exploration runs in.

Defaults suit the embedded ``local[*]`` mode on a small machine: a 4 GiB driver JVM (in local
mode it is also the only executor), no console progress bar, and Spark bound to 127.0.0.1.
``--master URL`` submits to any cluster instead (standalone ``spark://``, YARN, Kubernetes);
when the script runs under ``spark-submit`` (or in a notebook) the context already there is
joined.

Partitioning never depends on Python's salted ``hash()``: the executors get
``PYTHONHASHSEED=0`` and a state's bucket is its stable fingerprint modulo the bucket count.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

LOOPBACK = "127.0.0.1"
JVM_OPTIONS = "-XX:TieredStopAtLevel=1 -XX:+UseSerialGC"
"""The Spark JVMs' options: only the quick C1 compiler and the serial collector.  The JVMs
only schedule tasks and carry their one-number results (the states never pass through
them), so C2's compilation and the parallel collector's threads were CPU spent for nothing:
configuration B on ``local[2]`` took 53 CPU-s with these against 60-69 without, the
symmetric one 32 against 44 (``bench/bench_spark.py``).  ``SparkOptions.conf`` (or
spark-submit's ``--conf``) overrides them."""


@dataclass(frozen=True, slots=True)
class SparkOptions:
    """Where and how to run on Spark.

    ``master`` is a Spark master URL (``local[*]``, ``local[2]``, ``spark://host:7077`` ...);
    ``partitions`` fixes the number of fingerprint buckets (one task each) of every level
    of a new run (default: 4 per core; ``isrlab check --buckets``); ``conf`` adds raw Spark
    settings; ``progress`` receives one line per completed level and the Spark UI address
    (``None``: silent).
    """

    master: str = "local[*]"
    driver_memory: str = "4g"
    executor_memory: str | None = None
    partitions: int | None = None
    app_name: str = "isrlab-spark-bfs"
    log_level: str = "ERROR"
    conf: Mapping[str, str] = field(default_factory=dict)
    progress: Any = None  # Callable[[str], None] | None; Any keeps the dataclass picklable


def isrlab_import_root() -> str:
    """The directory this process imported the ``isrlab`` package from.

    Local executors' Python workers get it on their PYTHONPATH (ahead of site-packages), so
    that they unpickle the model's functions from the driver's own code even when the
    driver's working directory is not its checkout (a bench script, a notebook): the
    checkout or git worktree it imported (whose isrlab/core, isrlab/spec ... link to its own
    folders), not whichever checkout the virtualenv was installed from; from a wheel it is
    site-packages.  (The package is this module's own top-level one, already imported: it is
    looked up, not imported, so that the engine imports nothing of the application layer.)
    """
    package = sys.modules[__name__.partition(".")[0]]
    return str(Path(str(package.__file__)).resolve().parent.parent)


def spark_conf(options: SparkOptions) -> dict[str, str]:
    """The Spark settings an exploration session is started with."""
    conf = {
        "spark.master": options.master,
        "spark.app.name": options.app_name,
        "spark.driver.memory": options.driver_memory,
        "spark.executorEnv.PYTHONHASHSEED": "0",
        "spark.ui.showConsoleProgress": "false",
        # A task reads and writes its buckets' files: a task that runs twice (speculation)
        # would only redo the same work.
        "spark.speculation": "false",
        "spark.driver.extraJavaOptions": JVM_OPTIONS,
        "spark.executor.extraJavaOptions": JVM_OPTIONS,
    }
    if options.executor_memory is not None:
        conf["spark.executor.memory"] = options.executor_memory
    if options.master.startswith("local") or LOOPBACK in options.master or (
        "localhost" in options.master
    ):
        conf["spark.driver.host"] = LOOPBACK
        conf["spark.driver.bindAddress"] = LOOPBACK
        conf["spark.executorEnv.PYTHONPATH"] = isrlab_import_root()
    conf.update(options.conf)
    return conf


def start_session(options: SparkOptions) -> tuple[Any, bool]:
    """The Spark context to use and whether this call created it (and must stop it).

    An already active context (``spark-submit``, a notebook's session, a test fixture) is
    joined as is.  A new one is a plain ``SparkContext``: the engine uses no SQL, and a
    ``SparkSession`` took about 2.5 s longer to start (4.2 s against 6.6-7.4 s, measured
    in ``local[2]``).
    """
    from pyspark import SparkConf, SparkContext

    active = SparkContext._active_spark_context
    if active is not None:
        return active, False
    # PySpark names the executors' Python from the driver's environment: use this one.
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    os.environ.setdefault("PYTHONHASHSEED", "0")
    if os.environ.get("PYSPARK_GATEWAY_PORT"):
        # Under spark-submit its JVM is already running: its settings (--master, memory,
        # --conf) win, ours only fill in what it left unset.
        SparkContext._ensure_initialized()
        conf = SparkConf()  # spark-submit's settings, read from that JVM
        for key, value in spark_conf(options).items():
            conf.setIfMissing(key, value)
    else:
        conf = SparkConf().setAll(list(spark_conf(options).items()))
    context = SparkContext(conf=conf)
    context.setLogLevel(options.log_level)
    return context, True


def context_of(session: Any) -> Any:
    """The ``SparkContext`` of ``session`` (a ``SparkSession`` or a context itself)."""
    return getattr(session, "sparkContext", session)


def default_parallelism(session: Any) -> int:
    """The number of cores Spark schedules tasks on (at least 1)."""
    return max(1, int(context_of(session).defaultParallelism))


def ui_url(session: Any) -> str | None:
    """The Spark UI address of the session, if the UI is enabled."""
    url = context_of(session).uiWebUrl
    return str(url) if url else None
