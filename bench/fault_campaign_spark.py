"""The Spark engine killed at random points of one run, then resumed (issue 34, item 7).

    python bench/fault_campaign_spark.py [--points 20] [--seed 34] [--kinds driver,worker]
                                          [--out results.json]

One run: ``isrlab check --model tla-kip320`` (configuration A, TLC's count: 5,973 distinct
states) on ``--master local[2,4]`` (two cores; a failed task is retried up to 4 times, as a
cluster would) with a run directory.  Each fault point is drawn from ``--seed``: a level
``k`` (1..18) and a delay (0..0.5 s) after the driver prints that level's progress line,
i.e. anywhere from just after a commit to the middle of level ``k + 1``'s Spark job.

* ``driver``: the driver's whole process group (the Python driver, its JVM, which in local
  mode is also the executor, and the Python workers) gets SIGKILL; then the same command is
  run again on the same run directory, which resumes from the last committed level.
* ``worker``: one Python worker process (a child of a ``pyspark.daemon``, drawn from the
  seed) gets SIGKILL; the run goes on (Spark retries the lost task); if it fails instead, it
  is resumed as above.

Every finished run's JSON report must equal the local checker's report of the same model
(counts, diameter, coverage, ``sometimes``; engine, time and worker count aside), whose
distinct count must be TLC's 5,973.  Prints one line per point and a summary; exit 1 if any
point gave other answers.  CPU heavy (a JVM per run): run it by hand, not in the suite.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from isrlab.checker.bfs import CheckOptions  # noqa: E402  # after the path set-up
from isrlab.checker.bfs import explore as explore_locally  # noqa: E402
from isrlab.cli_support import resolve_model  # noqa: E402
from tests.spark.processes import ISRLAB, PREEXEC, spark_env  # noqa: E402

MODEL = "tla-kip320"
TLC_DISTINCT = 5_973
"""TLC's distinct-state count for configuration A (docs/api.md, docs/conformance.md)."""
LEVELS = 18
UNCOMPARED = ("engine", "elapsed_s", "workers", "isrlab_version", "command", "timestamp")


def reference() -> dict[str, Any]:
    """The local checker's report of the model (engine-specific fields removed)."""
    _, params, model = resolve_model(MODEL, [])
    report = explore_locally(model, CheckOptions(params=params)).to_json()
    assert report["distinct_states"] == TLC_DISTINCT, report["distinct_states"]
    return {k: v for k, v in report.items() if k not in UNCOMPARED}


def command(run_dir: Path, report: Path) -> list[str]:
    """The campaign's ``isrlab check`` command line."""
    return [*ISRLAB, "check", "--model", MODEL, "--master", "local[2,4]",
            "--run-dir", str(run_dir), "--json", str(report), "--progress"]


def start(run_dir: Path, report: Path) -> subprocess.Popen[str]:
    """The driver in its own process group, its progress lines piped."""
    return subprocess.Popen(
        command(run_dir, report), env=spark_env(), text=True, cwd=ROOT,
        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, start_new_session=True,
        preexec_fn=PREEXEC,
    )


def wait_for_level(driver: subprocess.Popen[str], level: int) -> bool:
    """Read the driver's progress until level ``level``'s line; False if it ended first."""
    assert driver.stderr is not None
    return any(line.startswith(f"spark: level {level}:") for line in driver.stderr)


def descendants(pid: int) -> list[int]:
    """Every process below ``pid``."""
    children: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                stat = (entry / "stat").read_text()
            except OSError:
                continue
            children.setdefault(int(stat.rsplit(")", 1)[1].split()[1]), []).append(
                int(entry.name))
    found, todo = [], [pid]
    while todo:
        for child in children.get(todo.pop(), []):
            found.append(child)
            todo.append(child)
    return found


def python_workers(driver: subprocess.Popen[str]) -> list[int]:
    """The Python worker processes of the driver's JVM: the processes a ``pyspark.daemon``
    forked (they share its command line; the daemon itself is the JVM's child)."""
    daemons: set[int] = set()
    below = descendants(driver.pid)
    for pid in below:
        try:
            cmdline = Path(f"/proc/{pid}/cmdline").read_bytes()
        except OSError:
            continue
        if b"pyspark.daemon" in cmdline:
            daemons.add(pid)
    forked = {w for d in daemons for w in descendants(d)}
    return sorted(forked)


def finish(driver: subprocess.Popen[str], timeout: float = 900) -> int:
    """Wait for the driver; its exit code."""
    driver.communicate(timeout=timeout)
    return driver.returncode


def kill_group(driver: subprocess.Popen[str]) -> None:
    """SIGKILL the driver's process group (the driver, its JVM and Python workers)."""
    if driver.poll() is None:
        os.killpg(driver.pid, signal.SIGKILL)
    driver.wait(timeout=60)
    deadline = time.monotonic() + 30  # the Python workers notice their JVM's death
    while time.monotonic() < deadline:
        try:
            os.killpg(driver.pid, 0)
        except ProcessLookupError:
            return
        time.sleep(0.2)


def committed(run_dir: Path) -> int:
    """The level the run directory's ``commit.json`` names (0: none yet)."""
    try:
        return int(json.loads((run_dir / "commit.json").read_text())["level"])
    except (OSError, ValueError, KeyError):
        return 0


def answers(report: Path) -> dict[str, Any]:
    """A finished run's report without the engine-specific fields."""
    found = json.loads(report.read_text())
    return {k: v for k, v in found.items() if k not in UNCOMPARED}


def one_point(kind: str, level: int, delay: float, pick: int, base: Path,
              expected: dict[str, Any]) -> dict[str, Any]:
    """Inject one fault; resume if the run died; compare the final report."""
    run_dir, report = base / "run", base / "report.json"
    shutil.rmtree(run_dir, ignore_errors=True)
    report.unlink(missing_ok=True)
    started = time.monotonic()
    driver = start(run_dir, report)
    outcome: dict[str, Any] = {"kind": kind, "level": level, "delay_s": round(delay, 3)}
    try:
        if not wait_for_level(driver, level):
            outcome["note"] = "the run ended before the fault"
        time.sleep(delay)
        if kind == "driver":
            kill_group(driver)
            outcome["committed_level_at_fault"] = committed(run_dir)
            code = None
        else:
            workers = python_workers(driver)
            outcome["python_workers"] = len(workers)
            if workers:
                victim = workers[pick % len(workers)]
                os.kill(victim, signal.SIGKILL)
            outcome["committed_level_at_fault"] = committed(run_dir)
            _, rest = driver.communicate(timeout=900)
            code = driver.returncode
            # Spark logs a lost task at ERROR (the engine's log level): did the kill hit one?
            outcome["task_errors_logged"] = sum(
                any(word in line for word in ("Exception in task", "Lost task", "crashed"))
                for line in rest.splitlines())
    finally:
        if driver.poll() is None:
            kill_group(driver)
    outcome["run_exit"] = code
    resumes = 0
    while code not in (0, 1) and resumes < 3:  # killed, or the job failed: resume it
        resumes += 1
        resumed = start(run_dir, report)
        try:
            code = finish(resumed)
        finally:
            if resumed.poll() is None:
                kill_group(resumed)
    outcome["resumes"] = resumes
    outcome["exit"] = code
    outcome["seconds"] = round(time.monotonic() - started, 1)
    got = answers(report) if report.exists() else None
    outcome["same_answers"] = got == expected
    if got is not None:
        outcome["distinct"] = got["distinct_states"]
        outcome["generated"] = got["generated_states"]
        outcome["diameter"] = got["diameter"]
    return outcome


def main() -> int:
    """Run the campaign; exit 1 if any point gave other answers."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--points", type=int, default=20)
    parser.add_argument("--seed", type=int, default=34)
    parser.add_argument("--kinds", default="driver,worker")
    parser.add_argument("--out", type=Path, default=None)
    args = parser.parse_args()
    expected = reference()
    print(f"reference (local checker; TLC's distinct count {TLC_DISTINCT:,}): "
          f"{expected['distinct_states']:,} distinct / {expected['generated_states']:,} "
          f"generated, diameter {expected['diameter']}", flush=True)
    results = []
    base = Path(tempfile.mkdtemp(prefix="isrlab-faults-"))
    try:
        for kind in args.kinds.split(","):
            chooser = random.Random(f"{args.seed}-{kind}")
            for index in range(args.points):
                level = chooser.randint(1, LEVELS)
                delay = chooser.uniform(0, 0.5)
                pick = chooser.randrange(1 << 30)
                outcome = one_point(kind, level, delay, pick, base, expected)
                outcome["point"] = index + 1
                results.append(outcome)
                print(json.dumps(outcome, sort_keys=True), flush=True)
    finally:
        shutil.rmtree(base, ignore_errors=True)
    bad = [r for r in results if not r["same_answers"]]
    for kind in args.kinds.split(","):
        mine = [r for r in results if r["kind"] == kind]
        print(f"{kind}: {len(mine)} faults, {sum(r['resumes'] > 0 for r in mine)} runs resumed, "
              f"{sum(r['same_answers'] for r in mine)} with the reference answers", flush=True)
    if args.out is not None:
        args.out.write_text(json.dumps(results, indent=1, sort_keys=True) + "\n")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
