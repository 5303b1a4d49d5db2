"""Memory per stored state of a search with a run directory: this checkout's on-disk level
store beside another checkout (the reference: a commit whose checker held each level in
memory, or wrote its record files uncompressed), the same check to the same depth, in one
run.

    .venv/bin/python bench/bench_disk_levels.py --reference /path/to/other/checkout \\
        --levels 16 [--workers 1] -- --model tla-kraft-3.5 -p brokers=3 ...

Each side is ``python -m isrlab check ARGS --max-depth LEVELS --run-dir (fresh) --workers W
--no-progress --json FILE`` started in that checkout (so it imports that checkout's
checker), one after the other; the peak RSS is ``wait4``'s ``ru_maxrss`` of the check and
its worker processes (the largest single process; with several workers also the sum
sampled every half second), beside the RSS of the same command stopped after level 1 (the
interpreter, the model and the checker with nothing stored).  Bytes per stored state are
``(peak - baseline) / distinct``.  The disk a stored state takes is the last committed
level's ``frontier-*`` record files over that level's states (the record files are what
grows with a level; the ``links-*`` files are 16 bytes a state of every level).  It prints
each side's counts (which must agree), wall and CPU seconds, run directory size and those
figures, and the ratios.  A script, not a timed test.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _tree_rss(pid: int) -> int:
    """Summed VmRSS (KiB) of ``pid`` and its children."""
    total = 0
    pids = [pid]
    with contextlib.suppress(OSError):
        pids += [int(c) for c in Path(f"/proc/{pid}/task/{pid}/children").read_text().split()]
    for each in pids:
        try:
            for line in Path(f"/proc/{each}/status").read_text().splitlines():
                if line.startswith("VmRSS:"):
                    total += int(line.split()[1])
        except OSError:
            continue
    return total


def run(tree: Path, args: list[str], levels: int, workers: int) -> dict[str, float]:
    """One check in ``tree``; its counts and costs."""
    with tempfile.TemporaryDirectory() as scratch:
        run_dir, report = Path(scratch) / "run", Path(scratch) / "report.json"
        command = [sys.executable, "-m", "isrlab", "check", *args, "--max-depth", str(levels),
                   "--run-dir", str(run_dir), "--workers", str(workers), "--no-progress",
                   "--json", str(report)]
        started = time.monotonic()
        process = subprocess.Popen(command, cwd=tree, stdout=subprocess.DEVNULL)
        summed = 0
        while True:
            pid, status, usage = os.wait4(process.pid, os.WNOHANG)
            if pid:
                break
            summed = max(summed, _tree_rss(process.pid))
            time.sleep(0.5)
        wall = time.monotonic() - started
        result = json.loads(report.read_text())
        disk = sum(f.stat().st_size for f in run_dir.rglob("*") if f.is_file())
        records = sum(f.stat().st_size for f in run_dir.glob("frontier-*.bin"))
        frontier = json.loads((run_dir / "commit.json").read_text())["frontier"]
        return {
            "distinct": result["distinct_states"], "generated": result["generated_states"],
            "diameter": result["diameter"], "wall": wall,
            "cpu": usage.ru_utime + usage.ru_stime, "peak_kib": usage.ru_maxrss,
            "summed_kib": summed, "disk_mib": disk / 2**20, "status": status,
            "record_bytes": records / max(frontier, 1), "frontier": frontier,
        }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--reference", type=Path, required=True)
    parser.add_argument("--levels", type=int, required=True)
    parser.add_argument("--workers", type=int, default=1)
    parser.add_argument("check", nargs=argparse.REMAINDER)
    args = parser.parse_args()
    check = [a for a in args.check if a != "--"]
    print(f"load average {os.getloadavg()[0]:.1f}; check {' '.join(check)}; "
          f"{args.levels} levels, {args.workers} worker(s)", flush=True)
    rows = {}
    for name, tree in (("reference", args.reference), ("this", ROOT)):
        base = run(tree, check, 1, args.workers)
        full = run(tree, check, args.levels, args.workers)
        peak = full["peak_kib"] if args.workers == 1 else full["summed_kib"]
        per_state = (peak - base["peak_kib"]) * 1024 / full["distinct"]
        rows[name] = (full, per_state)
        print(f"{name:9s} {tree}: {full['distinct']:,} distinct / {full['generated']:,} "
              f"generated, depth {full['diameter']}; {full['wall']:.0f} s wall, "
              f"{full['cpu']:.0f} s CPU; run dir {full['disk_mib']:.0f} MiB, last level's "
              f"record files {full['record_bytes']:,.1f} bytes a state of its "
              f"{full['frontier']:,}; peak RSS "
              f"{full['peak_kib'] / 1024:,.0f} MiB (summed {full['summed_kib'] / 1024:,.0f}), "
              f"{base['peak_kib'] / 1024:,.0f} MiB after level 1: {per_state:,.0f} bytes a "
              f"stored state; load average {os.getloadavg()[0]:.1f}", flush=True)
    (ref, ref_state), (this, this_state) = rows["reference"], rows["this"]
    same = all(ref[k] == this[k] for k in ("distinct", "generated", "diameter"))
    print(f"same counts: {same}; bytes a stored state {ref_state:,.0f} -> {this_state:,.0f} "
          f"({ref_state / this_state:.1f} times less); CPU {ref['cpu']:.0f} -> "
          f"{this['cpu']:.0f} s ({this['cpu'] / ref['cpu']:.2f} times); record file bytes a "
          f"state {ref['record_bytes']:,.1f} -> {this['record_bytes']:,.1f} "
          f"({ref['record_bytes'] / this['record_bytes']:.1f} times less)", flush=True)


if __name__ == "__main__":
    main()
