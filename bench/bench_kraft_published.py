"""Per-level growth of a `tla-kraft-*` configuration, level by level through a run directory,
optionally beside TLC for the same wall time.

    .venv/bin/python bench/bench_kraft_published.py --model tla-kraft-3.5 \\
        -p brokers=3 -p replication_factor=3 -p min_isr=2 -p init_isr_size=2 \\
        -p unclean_shutdown_limit=1 -p fence_broker_limit=1 --run-dir RUN --budget 600 \\
        [--tlc-jar JAR --tlc-dir DIR --tlc-module kafka_replication_v3_5]
    .venv/bin/python bench/bench_kraft_published.py --model tla-kraft-3.5 -p ... \
        --one-search --run-dir RUN [--workers 2]

Each level is one ``explore`` with ``max_depth`` one more than the last, resumed from
``--run-dir``; it prints, per level, the new and total distinct states, the generated
states, the seconds the level took, the run directory's size and this process's peak RSS,
and stops after the level that ends past ``--budget`` seconds (rerun to go on).  With
``--tlc-jar`` and ``--tlc-dir`` (a directory holding the module, the modules it extends
and a cfg of the same name: never committed here) it then runs ``java -cp JAR tlc2.TLC
-workers 1 -deadlock`` there for the same wall time and prints TLC's last progress line:
the two rates side by side.

With ``--levels N`` it runs one ``explore`` to ``N`` levels (in memory, or through a fresh
``--run-dir`` when given, where the checker keeps the states on disk instead) and
prints the counts, wall and CPU seconds, states per CPU second, peak RSS, and the bytes one
stored state takes: ``sys.getsizeof`` of a ``bytes`` state, or for a tuple state the deep
size of its objects counted once (what a state decoded from a run directory takes; states
found in one run share unchanged parts with their parent), averaged over the first 2,000
states of level ``N``'s breadth-first walk.
With ``--one-search`` (and ``--run-dir``, ``--workers``) it runs one resumable ``explore``
through the run directory (what ``isrlab check --run-dir`` does: rerun to resume) and prints
a row each time a level is committed: the counts from the run directory's commit, the
level's wall seconds, the run directory's size and the summed RSS of this process and its
worker processes (now and the peak of the samples, taken every half second while a level
is built; levels shorter than that share a row, whose "new" counts them all).
A script, not a timed test.
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import os
import re
import resource
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from isrlab.checker.bfs import CheckOptions, Progress, explore  # noqa: E402
from isrlab.cli_support import resolve_model  # noqa: E402


def _disk(path: Path) -> int:
    return sum(f.stat().st_size for f in path.rglob("*") if f.is_file())


def ours(model_name: str, params: list[str], run_dir: Path, budget: float) -> float:
    """Grow the search one level at a time; returns the wall seconds spent."""
    _, parsed, model = resolve_model(model_name, params)
    started = time.monotonic()
    depth, last = 0, (0, 0)
    print("level  new distinct  total distinct  generated  seconds  disk MiB  peak RSS MiB")
    while time.monotonic() - started < budget:
        depth += 1
        before = time.monotonic()
        result = explore(model, CheckOptions(params=parsed, run_dir=run_dir,
                                             max_depth=depth))
        rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
        print(f"{depth:5d}  {result.distinct_states - last[0]:12,d}  "
              f"{result.distinct_states:14,d}  {result.generated_states:9,d}  "
              f"{time.monotonic() - before:7.1f}  {_disk(run_dir) / 2**20:8.1f}  {rss:12.0f}",
              flush=True)
        if result.complete or result.violation is not None:
            print(f"finished: {result.distinct_states:,d} distinct / "
                  f"{result.generated_states:,d} generated, diameter {result.diameter}; "
                  f"violation {result.violation.invariant if result.violation else None}")
            break
        last = (result.distinct_states, result.generated_states)
    return time.monotonic() - started


def _rss_mib(pids: list[int]) -> float:
    """The summed resident set of ``pids`` (``/proc/PID/status``), MiB."""
    total = 0
    for pid in pids:
        try:
            with open(f"/proc/{pid}/status", encoding="ascii") as status:
                total += next((int(line.split()[1]) for line in status
                               if line.startswith("VmRSS:")), 0)
        except OSError:
            continue
    return total / 1024


def one_search(model_name: str, params: list[str], run_dir: Path, workers: int) -> None:
    """One resumable ``explore`` through ``run_dir``: a row per committed level."""
    _, parsed, model = resolve_model(model_name, params)
    commit_file = run_dir / "commit.json"
    seen: dict[str, float] = {"level": -1.0, "distinct": 0.0, "elapsed": 0.0, "peak": 0.0}
    print("level  new distinct  total distinct  generated  seconds  disk MiB  "
          "RSS MiB  peak RSS MiB", flush=True)

    def sample(_: Progress | None = None) -> None:
        pids = [os.getpid(), *(c.pid for c in multiprocessing.active_children() if c.pid)]
        rss = _rss_mib(pids)
        seen["peak"] = max(seen["peak"], rss)
        try:
            commit = json.loads(commit_file.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return
        if commit["level"] == seen["level"]:
            return
        print(f"{commit['level']:5d}  {commit['distinct'] - seen['distinct']:12,.0f}  "
              f"{commit['distinct']:14,d}  {commit['generated']:9,d}  "
              f"{commit['elapsed'] - seen['elapsed']:7.1f}  "
              f"{_disk(run_dir) / 2**20:8.1f}  {rss:7.0f}  {seen['peak']:12.0f}",
              flush=True)
        seen.update(level=commit["level"], distinct=commit["distinct"],
                    elapsed=commit["elapsed"])

    result = explore(model, CheckOptions(params=parsed, run_dir=run_dir, workers=workers,
                                         progress=sample, progress_interval_s=0.5))
    sample()
    print(f"{'finished' if result.complete else 'stopped'}: {result.distinct_states:,d} "
          f"distinct / {result.generated_states:,d} generated, diameter {result.diameter}; "
          f"violation {result.violation.invariant if result.violation else None}; "
          f"peak summed RSS {seen['peak']:,.0f} MiB", flush=True)


def _deep(obj: object, counted: set[int]) -> int:
    if id(obj) in counted:
        return 0
    counted.add(id(obj))
    size = sys.getsizeof(obj)
    if isinstance(obj, tuple):
        size += sum(_deep(item, counted) for item in obj)
    return size


def stored_bytes(model: object, levels: int, sample: int = 2_000) -> float:
    """The mean bytes of a stored state over ``sample`` states ``levels - 1`` steps deep."""
    frontier = list(model.init_states())  # type: ignore[attr-defined]  # a registry model
    for _ in range(levels - 1):
        frontier = [t for s in frontier[:sample]
                    for _, t in model.next_states(s)]  # type: ignore[attr-defined]
    chosen = frontier[:sample]
    small = set(range(-5, 257))  # CPython's cached small ints are shared by every state
    return sum(_deep(s, {id(i) for i in small}) for s in chosen) / len(chosen)


def in_memory(model_name: str, params: list[str], levels: int, run_dir: Path | None) -> None:
    """One ``explore`` to ``levels`` levels (through ``run_dir`` when given): counts, times,
    rate, peak RSS, state size."""
    _, parsed, model = resolve_model(model_name, params)
    wall, cpu = time.monotonic(), time.process_time()
    result = explore(model, CheckOptions(params=parsed, max_depth=levels, run_dir=run_dir))
    wall, cpu = time.monotonic() - wall, time.process_time() - cpu
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"{result.distinct_states:,d} distinct / {result.generated_states:,d} generated, "
          f"diameter {result.diameter}, complete {result.complete}; {wall:.1f} s wall, "
          f"{cpu:.1f} s CPU, {result.distinct_states / cpu:,.0f} distinct states per CPU s; "
          f"peak RSS {rss:,.0f} MiB; {stored_bytes(model, levels):,.0f} bytes per stored "
          f"state", flush=True)


def tlc(jar: str, directory: Path, module: str, seconds: float) -> None:
    """TLC on the same configuration for ``seconds`` of wall time; its last progress line."""
    command = ["java", "-XX:+UseParallelGC", "-cp", jar, "tlc2.TLC", "-workers", "1",
               "-deadlock", "-config", f"{module}.cfg", f"{module}.tla"]
    try:
        out = subprocess.run(command, cwd=directory, capture_output=True, text=True,
                             timeout=seconds).stdout
    except subprocess.TimeoutExpired as stopped:
        raw = stopped.stdout or b""
        out = raw.decode() if isinstance(raw, bytes) else raw
    lines = [line for line in out.splitlines() if re.match(r"Progress\(|\d[\d,]* states gen", line)]
    print(f"TLC after {seconds:.0f} s: {lines[-1] if lines else 'no progress line'}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", required=True)
    parser.add_argument("-p", dest="params", action="append", default=[])
    parser.add_argument("--run-dir", type=Path)
    parser.add_argument("--levels", type=int)
    parser.add_argument("--budget", type=float, default=600.0)
    parser.add_argument("--tlc-jar")
    parser.add_argument("--tlc-dir", type=Path)
    parser.add_argument("--tlc-module")
    parser.add_argument("--one-search", action="store_true")
    parser.add_argument("--workers", type=int, default=1)
    args = parser.parse_args()
    if args.one_search:
        if args.run_dir is None:
            parser.error("--one-search needs --run-dir")
        one_search(args.model, args.params, args.run_dir, args.workers)
        return
    if args.levels is not None:
        in_memory(args.model, args.params, args.levels, args.run_dir)
        return
    if args.run_dir is None:
        parser.error("--run-dir or --levels is required")
    spent = ours(args.model, args.params, args.run_dir, args.budget)
    if args.tlc_jar and args.tlc_dir and args.tlc_module:
        tlc(args.tlc_jar, args.tlc_dir, args.tlc_module, spent)


if __name__ == "__main__":
    main()
