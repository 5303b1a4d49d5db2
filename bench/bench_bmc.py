"""Benchmark Z3 bounded model checking against breadth-first search on docs/conformance.md's
counterexamples (TLC's shortest lengths: configuration A truncate-to-hw 9 and Kip101 12
states; configuration B truncate-to-hw 9, Kip101 11, Kip279 11 and Kip320FirstTry 13 states).

    .venv/bin/python bench/bench_bmc.py [--only NAME] [--solvers z3,yices] [--symmetry MODE]
                                        [--methods frames,plain]

For each case: BFS (``isrlab.checker.bfs.explore``, one worker, stop at the first violation) and BMC
(``isrlab.checker.z3.bmc`` on the bounded symbolic twin) with each solver in turn, the trace
lengths found, wall and CPU times (the solver's child process included), per-depth times, and
the ratios BMC / BFS and Z3 / Yices.  ``--methods`` runs each solver with the forward
frame lemmas (``frames``: ``bmc``'s ``frame_constants``, the default of ``isrlab bmc``) and
without them (``plain``), one after the other, and prints the ratio.  A script, not a timed
test.
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
from isrlab.checker.z3 import bmc  # noqa: E402
from isrlab.cli_support import resolve_model  # noqa: E402
from isrlab.spec.symbolic import symbolic_for  # noqa: E402

A = ("-p", "replicas=2", "-p", "log_size=2", "-p", "max_records=2", "-p", "max_leader_epoch=2")
B = ("-p", "replicas=3", "-p", "log_size=2", "-p", "max_records=2", "-p", "max_leader_epoch=3")

CASES = (
    ("A truncate-to-hw", "tla-truncate-to-hw", A, "WeakIsr,StrongIsr", 9),
    ("A kip101", "tla-kip101", A, "WeakIsr,StrongIsr", 12),
    ("B truncate-to-hw", "tla-truncate-to-hw", B, "StrongIsr", 9),
    ("B kip101", "tla-kip101", B, "StrongIsr", 11),
    ("B kip279", "tla-kip279", B, "StrongIsr", 11),
    ("B kip320-first-try", "tla-kip320-first-try", B, "StrongIsr", 13),
)


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
    parser.add_argument("--methods", default="frames,plain",
                        help="comma-separated: frames (forward frame lemmas) and/or plain")
    args = parser.parse_args()
    for label, name, params, invariants, tlc in CASES:
        if (args.only and args.only not in label) or (args.skip and args.skip in label):
            continue
        flat = [params[i + 1] for i in range(0, len(params), 2)]
        _, values, model = resolve_model(name, [*flat, f"invariants={invariants}"])
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
            result = bmc(system, names, tlc, logic="QF_LIA", options=system.solver_options,
                         solver=solver, frame_constants=constants, **breaking)
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
            if f"{solver} frames" in cpus and f"{solver} plain" in cpus:
                print(f"  {solver} CPU plain / frames: "
                      f"{cpus[f'{solver} plain'] / cpus[f'{solver} frames']:.2f}", flush=True)


if __name__ == "__main__":
    main()
