"""Benchmark the Spark engine against the local checker (and TLC) on the same configuration.

    nice .venv/bin/python bench/bench_spark.py            # configuration B of docs/conformance.md
    .venv/bin/python bench/bench_spark.py -p replicas=2   # a smaller configuration
        [--model tla-kip320] [--workers 2] [--cores 1,2] [--tlc-jar JAR --spec-dir DIR]

Each engine runs in its own child process (so each peak memory is its own): the local
checker (``isrlab.checker.bfs``, ``--workers`` processes), then Spark ``local[c]`` for each ``c`` of
``--cores``, then TLC when ``--tlc-jar`` and ``--spec-dir`` are given (``bench_check.run_tlc``:
the same TLC invocation as ``bench/bench_check.py``).  Printed: distinct / generated states,
diameter, wall time, generated states per second, peak RSS of the child's whole process tree
(Python driver, JVM and Python workers, sampled every 0.2 s), the time ratios Spark / local
and Spark / TLC, CPU seconds of the tree (and CPUs busy on average: CPU / wall), and the
parallel efficiency ``T(local[1]) / (2 · T(local[2]))``.  Spark ``local[1]`` runs one task at a
time, but its JVM threads (scheduling, GC) may still use the other CPU;
``--pin`` confines each ``local[c]`` to ``c`` CPUs for a one-CPU baseline.
Defaults: ``tla-kip320`` with configuration B (replicas=3 log_size=2 max_records=2
max_leader_epoch=3: 9,985,570 distinct states; a long run: start it niced).
A script, not a timed test.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

CONFIG_B = ["replicas=3", "log_size=2", "max_records=2", "max_leader_epoch=3"]


def tree_usage(root: int) -> tuple[float, float]:
    """The resident memory (MiB) and CPU time (s) of process ``root`` and its descendants.

    CPU time is user + system of every live process of the tree plus what each has reaped
    from its own exited children (``cutime``/``cstime``), so a sample is a lower bound that
    only grows while the tree runs.
    """
    children: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                stat = (entry / "stat").read_text()
            except OSError:
                continue
            children.setdefault(int(stat.rsplit(")", 1)[1].split()[1]), []).append(
                int(entry.name)
            )
    rss_kib, ticks, todo = 0, 0, [root]
    while todo:
        pid = todo.pop()
        todo.extend(children.get(pid, []))
        try:
            fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
            ticks += sum(int(f) for f in fields[11:15])  # utime stime cutime cstime
            for line in Path(f"/proc/{pid}/status").read_text().splitlines():
                if line.startswith("VmRSS:"):
                    rss_kib += int(line.split()[1])
        except OSError:
            continue
    return rss_kib / 1024.0, ticks / os.sysconf("SC_CLK_TCK")


def run_child(args: list[str]) -> tuple[dict[str, Any], float]:
    """Run this script in child mode; its JSON result (with the tree's CPU seconds added as
    ``cpu_s``) and the peak RSS of its tree."""
    process = subprocess.Popen(
        [sys.executable, __file__, *args], stdout=subprocess.PIPE, text=True,
    )
    peak, cpu = [0.0], [0.0]

    def sample() -> None:
        while process.poll() is None:
            rss, seconds = tree_usage(process.pid)
            peak[0], cpu[0] = max(peak[0], rss), max(cpu[0], seconds)
            time.sleep(0.2)

    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    out, _ = process.communicate()
    sampler.join()
    lines = [line for line in out.splitlines() if line.startswith("{")]
    if process.returncode not in (0, 1) or not lines:
        raise SystemExit(f"bench: child {args} failed (exit {process.returncode})")
    figures: dict[str, Any] = json.loads(lines[-1])
    figures["cpu_s"] = cpu[0]
    return figures, peak[0]


def child(engine: str, model_name: str, params: list[str], symmetry: bool, workers: int,
          cores: int, conf: dict[str, str], pin: bool) -> int:
    """Child mode: run one engine and print its figures as one JSON line."""
    from isrlab.checker.bfs import CheckOptions, explore
    from isrlab.cli_support import resolve_model

    _, values, model = resolve_model(model_name, params)
    options = CheckOptions(symmetry=symmetry, workers=workers, params=values)
    started = time.monotonic()
    if engine == "local":
        result = explore(model, options)
    else:
        from isrlab.spark_explore.command import quiet_pyspark_warnings
        from isrlab.spark_explore.engine import explore as explore_on_spark
        from isrlab.spark_explore.session import SparkOptions

        quiet_pyspark_warnings()
        if pin:  # before the JVM starts: it, its threads and the Python workers inherit it
            os.sched_setaffinity(0, set(sorted(os.sched_getaffinity(0))[:cores]))
        spark = SparkOptions(
            master=f"local[{cores}]",
            driver_memory=os.environ.get("ISRLAB_SPARK_DRIVER_MEMORY", "6g"),
            progress=lambda line: print(line, file=sys.stderr, flush=True),
            conf=conf,
        )
        result = explore_on_spark(model, options, spark)
    wall = time.monotonic() - started
    print(json.dumps({
        "distinct": result.distinct_states, "generated": result.generated_states,
        "diameter": result.diameter, "elapsed_s": result.elapsed_s, "wall_s": wall,
        "ok": result.ok,
    }), flush=True)
    return 0


def _line(name: str, figures: dict[str, Any], peak: float) -> str:
    rate = figures["generated"] / max(figures["wall_s"], 1e-9)
    return (f"{name:<14} distinct {figures['distinct']:>11,}  generated "
            f"{figures['generated']:>11,}  diameter {figures['diameter']:>3}  "
            f"{figures['wall_s']:8.1f} s  {rate:>9,.0f} generated/s  peak RSS {peak:,.0f} MiB  "
            f"CPU {figures['cpu_s']:,.0f} s ({figures['cpu_s'] / figures['wall_s']:.2f} busy)")


def main() -> int:
    """Parse the options, run every engine in turn, print the comparison."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--model", default="tla-kip320")
    parser.add_argument("-p", "--param", action="append", default=None)
    parser.add_argument("--symmetry", action="store_true")
    parser.add_argument("--workers", type=int, default=2, help="local checker processes")
    parser.add_argument("--cores", default="1,2", help="Spark local[c] runs, comma-separated")
    parser.add_argument("--skip-local", action="store_true")
    parser.add_argument("--tlc-jar", type=Path)
    parser.add_argument("--spec-dir", type=Path)
    parser.add_argument("--tlc-workers", type=int, default=2)
    parser.add_argument("--conf", action="append", default=[], metavar="KEY=VALUE",
                        help="an extra Spark setting for the Spark runs (repeatable), for A/B runs")
    parser.add_argument("--pin", action="store_true",
                        help="run each Spark local[c] on c CPUs only (sched_setaffinity), so "
                             "local[1]'s JVM threads cannot use the second CPU")
    parser.add_argument("--child", choices=["local", "spark"], help=argparse.SUPPRESS)
    args = parser.parse_args()
    params = args.param if args.param is not None else list(CONFIG_B)
    cores = [int(c) for c in args.cores.split(",") if c]
    if any("=" not in item for item in args.conf):
        parser.error("--conf takes KEY=VALUE")
    conf = dict(item.split("=", 1) for item in args.conf)
    if args.child is not None:
        return child(args.child, args.model, params, args.symmetry, args.workers,
                     cores[0] if cores else 2, conf, args.pin)
    common = ["--model", args.model, *[f"-p{p}" for p in params]]
    if args.symmetry:
        common.append("--symmetry")
    print(f"bench_spark: {args.model} {' '.join(params)}"
          f"{' (symmetry)' if args.symmetry else ''}"
          f"{''.join(f' --conf {item}' for item in args.conf)}{' --pin' if args.pin else ''}")
    results: dict[str, tuple[dict[str, Any], float]] = {}
    if not args.skip_local:
        results["local"] = run_child(
            [*common, "--child", "local", "--workers", str(args.workers)])
        print(_line(f"local x{args.workers}", *results["local"]), flush=True)
    for c in cores:
        results[f"spark{c}"] = run_child([*common, "--child", "spark", "--cores", str(c),
                                          *[f"--conf={item}" for item in args.conf],
                                          *(["--pin"] if args.pin else [])])
        print(_line(f"spark local[{c}]", *results[f"spark{c}"]), flush=True)
    tlc_time: float | None = None
    if args.tlc_jar is not None and args.spec_dir is not None:
        from bench_check import TLC_MODULES, run_tlc

        from isrlab.cli_support import resolve_model

        module = TLC_MODULES.get(args.model)
        if module is None:
            print(f"bench: no TLC module known for {args.model!r}", file=sys.stderr)
            return 2
        _, values, _ = resolve_model(args.model, params)
        tlc = run_tlc(args.tlc_jar, args.spec_dir, module, dict(values), args.symmetry,
                      args.tlc_workers)
        tlc_time = float(str(tlc["elapsed_s"]))  # run_tlc's values are typed object
        print(f"{'TLC x' + str(args.tlc_workers):<14} distinct {tlc['distinct']}  generated "
              f"{tlc['generated']}  diameter {tlc['diameter']}  {tlc_time:8.1f} s")
    best = max(cores) if cores else None
    if best is not None:
        spark_time = results[f"spark{best}"][0]["wall_s"]
        if "local" in results:
            print(f"ratio spark local[{best}] / local checker = "
                  f"{spark_time / results['local'][0]['wall_s']:.2f}")
        if tlc_time:
            print(f"ratio spark local[{best}] / TLC = {spark_time / tlc_time:.2f}")
    if 1 in cores and 2 in cores:
        efficiency = results["spark1"][0]["wall_s"] / (2 * results["spark2"][0]["wall_s"])
        print(f"parallel efficiency 1 -> 2 cores = T1 / (2 T2) = {efficiency:.2f}"
              f"{' (local[c] pinned to c CPUs)' if args.pin else ''}")
    counts = {(r[0]["distinct"], r[0]["generated"], r[0]["diameter"]) for r in results.values()}
    print(f"same counts on every engine: {len(counts) == 1}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
