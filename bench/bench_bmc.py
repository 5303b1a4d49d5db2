"""Benchmark Z3 bounded model checking against breadth-first search on docs/conformance.md's
counterexamples (TLC's shortest lengths: configuration A truncate-to-hw 9 and Kip101 12
states; configuration B truncate-to-hw 9, Kip101 11, Kip279 11 and Kip320FirstTry 13 states;
``tla-kraft-3.5`` with ``kip903_check=false`` 14 states).

    .venv/bin/python bench/bench_bmc.py [--only NAME] [--solvers z3,yices] [--symmetry MODE]
                                        [--methods por,plain,frames] [--max-depth K]

For each case: BFS (``isrlab.checker.bfs.explore``, one worker, stop at the first violation) and BMC
(``isrlab.checker.z3.bmc`` on the bounded symbolic twin) with each solver in turn, the trace
lengths found, wall and CPU times (the solver's child process included), per-depth times, and
the ratios BMC / BFS and Z3 / Yices.  ``--methods`` runs each solver, one after the other,
with the partial-order reduction (``por``: ``bmc``'s ``partial_order``), with the forward
frame lemmas (``frames``: ``bmc``'s ``frame_constants``), from the actions' full relations
instead of their factored forms (``unfactored``: ``bmc``'s ``factored=False``; the same as
``plain`` for systems without factored forms) or with none of these (``plain``), and
prints each method's CPU against ``plain``'s; the CPU of each depth (this process and the
solver's child, read from /proc) is printed as it is answered.  ``--max-depth K`` stops
every case after depth K (refuted depths only, for the runs too long to finish).  A
script, not a timed test.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from isrlab.checker.bfs import CheckOptions, explore  # noqa: E402
from isrlab.checker.z3 import DepthOutcome, bmc  # noqa: E402
from isrlab.cli_support import resolve_model  # noqa: E402
from isrlab.spec.symbolic import symbolic_for  # noqa: E402
from isrlab.spec.tla_kraft.layout import INVARIANTS_V35  # noqa: E402

A = ("-p", "replicas=2", "-p", "log_size=2", "-p", "max_records=2", "-p", "max_leader_epoch=2")
B = ("-p", "replicas=3", "-p", "log_size=2", "-p", "max_records=2", "-p", "max_leader_epoch=3")

KRAFT_903 = ("-p", "unclean_shutdown_limit=1", "-p", "fence_broker_limit=1", "-p",
             "kip903_check=false")
"""docs/z3.md's ``tla-kraft-3.5`` row with ``kip903_check=false`` (2 brokers, RF 2, min ISR 1,
ISR 2): TLC's LeaderCandidateCompletenessProperty trace has 14 states."""

CASES = (
    ("A truncate-to-hw", "tla-truncate-to-hw", A, "WeakIsr,StrongIsr", 9),
    ("A kip101", "tla-kip101", A, "WeakIsr,StrongIsr", 12),
    ("B truncate-to-hw", "tla-truncate-to-hw", B, "StrongIsr", 9),
    ("B kip101", "tla-kip101", B, "StrongIsr", 11),
    ("B kip279", "tla-kip279", B, "StrongIsr", 11),
    ("B kip320-first-try", "tla-kip320-first-try", B, "StrongIsr", 13),
    ("kraft-3.5 kip903_check=false", "tla-kraft-3.5", KRAFT_903, ",".join(INVARIANTS_V35),
     14),
)


def cpu_seconds() -> float:
    """CPU seconds of this process and its live children (the Yices child), from /proc."""
    own = os.times()
    total = own[0] + own[1]
    tick = os.sysconf("SC_CLK_TCK")
    for pid in (p for p in os.listdir("/proc") if p.isdigit()):
        try:
            fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[1]) == os.getpid():
            total += (int(fields[11]) + int(fields[12])) / tick
    return total


class DepthClock:
    """``bmc``'s ``on_depth``: prints each depth's wall and CPU seconds as it is answered."""

    def __init__(self) -> None:
        self.last = cpu_seconds()
        self.cpu: list[float] = []

    def __call__(self, outcome: DepthOutcome) -> None:
        now = cpu_seconds()
        self.cpu.append(now - self.last)
        self.last = now
        print(f"    depth {outcome.steps}: {outcome.verdict} {outcome.seconds:.1f} s wall, "
              f"{self.cpu[-1]:.1f} CPU-s (since the previous depth), load "
              f"{os.getloadavg()[0]:.1f}", flush=True)


def main() -> None:
    """Run the cases and print one line each."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--only", help="run only the case whose label contains this")
    parser.add_argument("--skip", help="skip the cases whose label contains this")
    parser.add_argument("--solvers", default="yices",
                        help="comma-separated bmc solvers to run, in this order")
    parser.add_argument("--symmetry", choices=("default", "first-step", "labels"),
                        default="default",
                        help="symmetry breaking: TlaSystem.symmetry_breaking (default), the "
                             "first step only, or the first step and the lex-leader labels")
    parser.add_argument("--methods", default="por,plain",
                        help="comma-separated: por (partial-order reduction), frames "
                             "(forward frame lemmas), unfactored (each action's full "
                             "relation, not its factored form) and/or plain")
    parser.add_argument("--max-depth", type=int, default=None,
                        help="stop each case after this many steps (default: TLC's length)")
    parser.add_argument("--no-bfs", action="store_true",
                        help="skip the breadth-first reference (BMC methods only)")
    args = parser.parse_args()
    for label, name, params, invariants, tlc in CASES:
        if (args.only and args.only not in label) or (args.skip and args.skip in label):
            continue
        flat = [params[i + 1] for i in range(0, len(params), 2)]
        _, values, model = resolve_model(name, [*flat, f"invariants={invariants}"])
        bfs_s = float("nan")
        if args.no_bfs:
            print(f"{label}: TLC {tlc} states", flush=True)
        else:
            started = time.perf_counter()
            found = explore(model, CheckOptions(params=values))
            bfs_s = time.perf_counter() - started
            bfs_len = found.violation.length if found.violation else None
            print(f"{label}: TLC {tlc} states; BFS {bfs_len} states in {bfs_s:.2f} s "
                  f"({found.distinct_states:,} distinct)", flush=True)
        system = symbolic_for(name, values)
        assert system is not None
        cpus: dict[str, float] = {}
        for solver, method in ((s, m) for s in args.solvers.split(",")
                               for m in args.methods.split(",")):
            before = os.times()
            names = invariants.split(",")
            breaking = (system.symmetry_breaking(names) if args.symmetry == "default" else
                        {"first_step": system.symmetric_first_step(), "symmetries":
                         system.label_symmetries() if args.symmetry == "labels" else [],
                         "violation": None})
            constants = system.frame_constants if method == "frames" else None
            depth = tlc if args.max_depth is None else min(tlc, args.max_depth)
            result = bmc(system, names, depth, logic="QF_LIA",
                         options=getattr(system, "solver_options", None),
                         solver=solver, frame_constants=constants,
                         partial_order=method == "por", factored=method != "unfactored",
                         on_depth=DepthClock(), **breaking)
            after = os.times()
            cpu = sum(after[:4]) - sum(before[:4])  # user + system, self and waited children
            cpus[f"{solver} {method}"] = cpu
            bmc_len = len(result.trace) if result.trace else None
            load = os.getloadavg()[0]
            ratio = result.seconds / max(bfs_s, 1e-9)
            print(f"  BMC ({result.solver}, {method}): {bmc_len} states in "
                  f"{result.seconds:.1f} s wall, {cpu:.1f} CPU-s, load {load:.1f} "
                  f"(BMC / BFS {ratio:,.0f}x); "
                  f"per depth: {' '.join(f'{d.seconds:.1f}' for d in result.depths)}",
                  flush=True)
        for solver in args.solvers.split(","):
            for method in ("frames", "por", "unfactored"):
                if f"{solver} {method}" in cpus and f"{solver} plain" in cpus:
                    print(f"  {solver} CPU plain / {method}: "
                          f"{cpus[f'{solver} plain'] / cpus[f'{solver} {method}']:.2f}",
                          flush=True)


if __name__ == "__main__":
    main()
