"""Child processes of the Spark tests: a standalone cluster on 127.0.0.1 and CLI drivers.

Every process here is started by the test that owns it and stopped by its id (never by
name): the cluster by its master and worker process ids, a driver by its process group.
On Linux each also gets SIGTERM when the pytest process that started it dies, so a pytest
killed before its clean-up (SIGKILL, or SIGTERM from a CI timeout) leaves no JVM behind.
"""

from __future__ import annotations

import ctypes
import json
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import pyspark

SPARK_HOME = Path(pyspark.__file__).resolve().parent
SPARK_CLASS = SPARK_HOME / "bin" / "spark-class"
ROOT = Path(__file__).resolve().parent.parent.parent
ISRLAB = [sys.executable, "-m", "isrlab"]
"""The command line of this checkout's isrlab: run from ROOT, ``-m`` imports ROOT/isrlab (the
venv's ``isrlab`` script would import the checkout the venv was installed from)."""
HOST = "127.0.0.1"
PR_SET_PDEATHSIG = 1  # linux/prctl.h
_PRCTL = ctypes.CDLL(None, use_errno=True).prctl if sys.platform == "linux" else None
"""libc's prctl, looked up here in the parent: a forked child of a process with threads
must not call dlopen/dlsym (a lock another thread held at the fork may never be freed)."""


def _die_with_parent() -> None:
    """In the child, before exec: ask Linux to send it SIGTERM when its parent dies."""
    assert _PRCTL is not None
    _PRCTL(PR_SET_PDEATHSIG, signal.SIGTERM)


PREEXEC = _die_with_parent if _PRCTL is not None else None
"""``preexec_fn`` of every child started here (no such request outside Linux)."""


def free_port() -> int:
    """A TCP port on 127.0.0.1 nobody listens on right now."""
    with socket.socket() as probe:
        probe.bind((HOST, 0))
        port: int = probe.getsockname()[1]
        return port


TEST_JVM_OPTIONS = "-XX:TieredStopAtLevel=1 -XX:+UseSerialGC"
"""Options of every JVM the Spark tests start, passed in ``JDK_JAVA_OPTIONS`` (read by the
``java`` launcher since Java 9): only the quick C1 compiler, and the serial collector.  The
tests' JVMs live for seconds to a minute, where C2's compilations and the parallel
collector's threads cost more CPU than they save: tests/spark used 285 CPU-s instead of 467
on the idle 2-core machine (docs/testing.md).  Speed only: what the JVMs compute is the same."""


def jvm_options() -> str:
    """``JDK_JAVA_OPTIONS`` for a test's JVM: the caller's own options, then ours."""
    return " ".join(filter(None, [os.environ.get("JDK_JAVA_OPTIONS"), TEST_JVM_OPTIONS]))


def spark_env() -> dict[str, str]:
    """The environment for Spark daemons and drivers: loopback only, this Python, the tests'
    JVM options."""
    env = dict(os.environ)
    env.update({
        "JDK_JAVA_OPTIONS": jvm_options(),
        "SPARK_HOME": str(SPARK_HOME), "SPARK_LOCAL_IP": HOST, "PYSPARK_PYTHON": sys.executable,
        "PYTHONHASHSEED": "0", "ISRLAB_SPARK_DRIVER_MEMORY": "1g",
        "ISRLAB_SPARK_EXECUTOR_MEMORY": "1g",
    })
    return env


@dataclass
class Cluster:
    """A running standalone master and worker."""

    master_url: str
    master: subprocess.Popen[bytes]
    worker: subprocess.Popen[bytes]
    work_dir: Path

    def executor_pids(self) -> list[int]:
        """The executor JVMs the worker launched (descendants of the worker process)."""
        children: dict[int, list[int]] = {}
        for entry in Path("/proc").iterdir():
            if not entry.name.isdigit():
                continue
            try:
                stat = (entry / "stat").read_text()
            except OSError:
                continue
            ppid = int(stat.rsplit(")", 1)[1].split()[1])
            children.setdefault(ppid, []).append(int(entry.name))
        found, todo = [], [self.worker.pid]
        while todo:
            pid = todo.pop()
            for child in children.get(pid, []):
                todo.append(child)
                try:
                    cmdline = Path(f"/proc/{child}/cmdline").read_bytes()
                except OSError:
                    continue
                if b"CoarseGrainedExecutorBackend" in cmdline and b"java" in cmdline:
                    found.append(child)
        return found

    def executor_dirs(self) -> list[Path]:
        """One directory per executor the worker ever launched (``app-*/<executor id>``)."""
        return sorted(p for p in self.work_dir.glob("app-*/*") if p.is_dir())


def _alive_workers(webui: int) -> int:
    try:
        with urllib.request.urlopen(f"http://{HOST}:{webui}/json/", timeout=5) as answer:
            status = json.load(answer)
    except OSError:
        return 0
    return int(status.get("aliveworkers", 0))


def _stop(process: subprocess.Popen[bytes]) -> None:
    if process.poll() is None:
        process.terminate()
        try:
            process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(timeout=20)


@contextmanager
def standalone_cluster(base: Path, cores: int = 2) -> Iterator[Cluster]:
    """A Spark standalone master and one worker on 127.0.0.1, stopped on exit (always)."""
    port, webui, worker_ui = free_port(), free_port(), free_port()
    work_dir = base / "worker"
    work_dir.mkdir(parents=True)
    env = spark_env()
    master = subprocess.Popen(
        [str(SPARK_CLASS), "org.apache.spark.deploy.master.Master", "--host", HOST,
         "--port", str(port), "--webui-port", str(webui)],
        env=env, stdout=open(base / "master.log", "wb"), stderr=subprocess.STDOUT,  # noqa: SIM115
        preexec_fn=PREEXEC,
    )
    worker: subprocess.Popen[bytes] | None = None
    try:
        url = f"spark://{HOST}:{port}"
        worker = subprocess.Popen(
            [str(SPARK_CLASS), "org.apache.spark.deploy.worker.Worker", url, "--host", HOST,
             "--cores", str(cores), "--memory", "2g", "--webui-port", str(worker_ui),
             "--work-dir", str(work_dir)],
            env=env, stdout=open(base / "worker.log", "wb"),  # noqa: SIM115
            stderr=subprocess.STDOUT, preexec_fn=PREEXEC,
        )
        deadline = time.monotonic() + 180
        while _alive_workers(webui) < 1:
            dead = master.poll() is not None or worker.poll() is not None
            if dead or time.monotonic() > deadline:
                logs = (base / "master.log").read_text(errors="replace")[-2000:]
                raise RuntimeError(f"the standalone cluster did not come up:\n{logs}")
            time.sleep(1)
        yield Cluster(url, master, worker, work_dir)
    finally:
        if worker is not None:
            _stop(worker)
        _stop(master)


@dataclass
class Driver:
    """An ``isrlab check`` process; its stderr lines are read as they come."""

    process: subprocess.Popen[str]

    def wait_for_line(self, needle: str, timeout: float) -> list[str]:
        """Read stderr until a line contains ``needle``; the lines read so far."""
        assert self.process.stderr is not None
        lines: list[str] = []
        deadline = time.monotonic() + timeout
        for line in self.process.stderr:
            lines.append(line)
            if needle in line:
                return lines
            if time.monotonic() > deadline:
                break
        raise AssertionError(f"no line with {needle!r} in the driver's output:\n{''.join(lines)}")

    def finish(self, timeout: float) -> tuple[int, str]:
        """Wait for the driver to exit: its exit code and the rest of its stderr."""
        _, rest = self.process.communicate(timeout=timeout)
        return self.process.returncode, rest

    def kill(self) -> None:
        """Kill the driver and its JVM (its own process group) at once."""
        if self.process.poll() is None:
            os.killpg(self.process.pid, signal.SIGKILL)
        self.process.wait(timeout=60)


def start_driver(args: list[str]) -> Driver:
    """``isrlab check ARGS --progress`` in its own process group, stderr piped."""
    process = subprocess.Popen(
        [*ISRLAB, "check", *args, "--progress"], env=spark_env(), text=True, cwd=ROOT,
        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, start_new_session=True,
        preexec_fn=PREEXEC,
    )
    return Driver(process)
