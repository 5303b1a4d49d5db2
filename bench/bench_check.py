"""Benchmark the breadth-first checker on a registered model, optionally side by side with TLC.

    .venv/bin/python bench/bench_check.py --model tla-kip320 \\
        -p replicas=3 -p log_size=2 -p max_records=2 -p max_leader_epoch=3 --workers 2 \\
        [--symmetry] [--tlc-jar JAR [--tlc-jar JAR2] --spec-dir DIR]

Prints distinct and generated states, the diameter, wall time, generated states per second,
the peak RSS (this process plus its worker processes) and which compiled modules ran.  With
``--tlc-jar`` and ``--spec-dir`` (a checkout of the public TLA+ spec, never committed here)
it writes a TLC model for the same configuration into a temporary directory, runs
``java -XX:+UseParallelGC -cp JAR tlc2.TLC -workers N -deadlock`` on it in the same run, and
prints TLC's figures and the time ratio.  A script, not a timed test.
"""

from __future__ import annotations

import argparse
import os
import re
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from isrlab.checker.bfs import CheckOptions, explore  # noqa: E402
from isrlab.cli_support import BadInput, resolve_model  # noqa: E402

TLC_MODULES = {
    "tla-kip320": "Kip320",
    "tla-kip279": "Kip279",
    "tla-kip101": "Kip101",
    "tla-truncate-to-hw": "KafkaTruncateToHighWatermark",
}


def peak_rss_mib() -> tuple[float, float]:
    """Peak resident memory of this process and of its largest finished child, in MiB."""
    own = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    children = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    return own / 1024.0, children / 1024.0


def cpu_seconds() -> float:
    """User + system CPU time of this process and its finished children so far."""
    own = resource.getrusage(resource.RUSAGE_SELF)
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


def compiled_paths(model: object) -> str:
    """Which compiled modules this run used (ISRLAB_PURE_PYTHON=1 or an unbuilt checkout
    runs the pure Python: identical results, other times)."""
    from isrlab.checker.fingerprint import compiled_engine, compiled_expand, fingerprint_set
    from isrlab.spec._compiled import running_compiled
    from isrlab.spec.kafka import model as kafka_model

    native = getattr(model, "_native", None) is not None
    offer = getattr(model, "native_successors", None)
    engine = compiled_engine() is not None and offer is not None and offer() is not None
    fpset = not isinstance(fingerprint_set(), set)
    mypyc = running_compiled(kafka_model)
    return (f"model (isrlab.spec.tla._native) {'yes' if native else 'no'}, "
            f"kafka model (mypyc) {'yes' if mypyc else 'no'}, "
            f"checker (isrlab.checker._fpset) {'yes' if fpset and compiled_expand() else 'no'}, "
            f"level engine (isrlab.checker._engine) {'yes' if engine else 'no'}")


def load() -> str:
    """The 1, 5 and 15 minute load averages."""
    return " ".join(f"{x:.2f}" for x in os.getloadavg())


def tlc_model(module: str, params: dict[str, object], symmetry: bool) -> tuple[str, str]:
    """The MC.tla and MC.cfg texts for TLC on the same configuration."""
    replicas = int(str(params["replicas"]))
    names = ", ".join(f"r{i}" for i in range(1, replicas + 1))
    invariants = str(params.get("invariants", "WeakIsr,StrongIsr"))
    chosen = [] if invariants == "none" else [n for n in invariants.split(",") if n]
    tla = (
        "---- MODULE MC ----\n"
        f"EXTENDS {module}, TLC\n"
        "Symm == Permutations(Replicas)\n"
        "====\n"
    )
    cfg = [
        "CONSTANTS",
        f"    Replicas = {{{names}}}",
        f"    LogSize = {params['log_size']}",
        f"    MaxRecords = {params['max_records']}",
        f"    MaxLeaderEpoch = {params['max_leader_epoch']}",
        "INIT Init",
        "NEXT Next",
    ]
    cfg += [f"INVARIANT {name}" for name in chosen]
    if symmetry:
        cfg.append("SYMMETRY Symm")
    return tla, "\n".join(cfg) + "\n"


def run_tlc(
    jar: Path, spec_dir: Path, module: str, params: dict[str, object], symmetry: bool,
    workers: int,
) -> dict[str, object]:
    """Run TLC in a temporary copy of the spec; its counts and wall time."""
    work = Path(tempfile.mkdtemp(prefix="isrlab-tlc-"))
    try:
        for source in spec_dir.glob("*.tla"):
            shutil.copy(source, work / source.name)
        tla, cfg = tlc_model(module, params, symmetry)
        (work / "MC.tla").write_text(tla)
        (work / "MC.cfg").write_text(cfg)
        command = [
            "java", "-XX:+UseParallelGC", "-cp", str(jar), "tlc2.TLC", "-workers",
            str(workers), "-deadlock", "-cleanup", "-metadir", str(work / "states"),
            "-config", "MC.cfg", "MC.tla",
        ]
        started, cpu_before = time.monotonic(), cpu_seconds()
        done = subprocess.run(command, cwd=work, capture_output=True, text=True, check=False)
        elapsed, cpu = time.monotonic() - started, cpu_seconds() - cpu_before
        out = done.stdout
        found = re.findall(
            r"([\d,]+) states generated, ([\d,]+) distinct states found", out
        )
        depth = re.search(r"depth of the complete state graph search is (\d+)", out)
        trace = re.findall(r"^State (\d+):", out, flags=re.MULTILINE)
        return {
            "elapsed_s": elapsed,
            "cpu_s": cpu,
            "generated": int(found[-1][0].replace(",", "")) if found else None,
            "distinct": int(found[-1][1].replace(",", "")) if found else None,
            "diameter": int(depth.group(1)) if depth else None,
            "violation": "is violated" in out,
            "trace_states": int(trace[-1]) if trace else None,
            "exit_code": done.returncode,
            "tail": out.strip().splitlines()[-3:],
        }
    finally:
        shutil.rmtree(work, ignore_errors=True)


def main() -> int:
    """Parse the options, run the checker (and TLC), print the comparison."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--model", required=True)
    parser.add_argument("-p", "--param", action="append", default=[])
    parser.add_argument("--symmetry", action="store_true")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--max-depth", type=int, default=None)
    parser.add_argument("--tlc-jar", type=Path, action="append", default=[],
                        help="TLC's jar (repeat for several builds, run one after another)")
    parser.add_argument("--spec-dir", type=Path)
    parser.add_argument("--tlc-workers", type=int, default=2)
    parser.add_argument("--tlc-first", action="store_true", help="run TLC before ours")
    args = parser.parse_args()
    try:
        _, params, model = resolve_model(args.model, args.param)
    except BadInput as error:
        print(f"bench: {error.format_message()}", file=sys.stderr)
        return 2
    want_tlc = bool(args.tlc_jar) and args.spec_dir is not None
    module = TLC_MODULES.get(args.model)
    if want_tlc and module is None:
        print(f"bench: no TLC module known for {args.model!r}", file=sys.stderr)
        return 2
    runs: list[tuple[Path, dict[str, object]]] = []

    def run_all_tlc() -> None:
        assert module is not None
        for jar in args.tlc_jar:
            before = load()
            runs.append((jar, run_tlc(jar, args.spec_dir, module, dict(params), args.symmetry,
                                      args.tlc_workers)))
            print(f"TLC {jar}: load average {before} before, {load()} after", flush=True)

    if want_tlc and args.tlc_first:
        run_all_tlc()
    options = CheckOptions(symmetry=args.symmetry, workers=args.workers,
                           max_depth=args.max_depth, params=params)
    before = load()
    cpu_before = cpu_seconds()
    result = explore(model, options)
    our_cpu = cpu_seconds() - cpu_before
    own_rss, worker_rss = peak_rss_mib()
    if not result.engine.endswith("proc"):  # one process (threads): no worker processes
        worker_rss = 0.0
    total_rss = own_rss + worker_rss * args.workers
    print(result.summary_line())
    print(f"ours: distinct {result.distinct_states:,}  generated {result.generated_states:,}  "
          f"diameter {result.diameter}  {result.elapsed_s:.1f} s wall  {our_cpu:.1f} s CPU  "
          f"{result.generated_states / max(result.elapsed_s, 1e-9):,.0f} generated/s  "
          f"{result.distinct_states / max(result.elapsed_s, 1e-9):,.0f} distinct/s  "
          f"peak RSS {own_rss:,.0f} MiB coordinator + {worker_rss:,.0f} MiB largest worker "
          f"(<= {total_rss:,.0f} MiB in all)  workers {args.workers} ({result.engine})")
    print(f"ours: load average {before} before, {load()} after")
    print(f"compiled: {compiled_paths(model)}", flush=True)
    if want_tlc and not args.tlc_first:
        run_all_tlc()
    for jar, tlc in runs:
        tlc_time = float(str(tlc["elapsed_s"]))
        print(f"TLC ({jar.name}):  distinct {tlc['distinct']}  generated {tlc['generated']}  "
              f"diameter {tlc['diameter']}  {tlc_time:.1f} s wall  "
              f"{float(str(tlc['cpu_s'])):.1f} s CPU  workers {args.tlc_workers}  "
              f"violation {tlc['violation']} (trace {tlc['trace_states']} states)")
        if tlc["distinct"] is None:
            print("TLC output tail: " + " | ".join(map(str, tlc["tail"])))  # type: ignore[call-overload]  # list[str] stored as object
        ratio = result.elapsed_s / tlc_time if tlc_time else float("nan")
        same = (tlc["distinct"], tlc["generated"]) == (
            result.distinct_states, result.generated_states)
        cpu_ratio = our_cpu / max(float(str(tlc["cpu_s"])), 1e-9)
        print(f"ratio ours/TLC ({jar.name}) = {ratio:.4f} wall (TLC is {1 / ratio:.1f}x our "
              f"time), {cpu_ratio:.4f} CPU;  same counts: {same}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
