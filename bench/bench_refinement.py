"""Benchmark the refinement of ``kafka`` to ``tla-kip279`` and ``tla-kip320``.

    .venv/bin/python bench/bench_refinement.py [--walks 10000] [--length 30]
        [--seed 1] [--brokers 3] [--max-records 2] [--max-leader-epoch 2] [-k 6]

For each version: the complete state space of the small configuration (2 brokers, 1 record,
epochs 0..1; every transition checked), the complete space of a medium one (2 brokers,
2 records, epochs 0..2), then ``--walks`` seeded random walks of ``--length`` steps on the
larger configuration (default 3 brokers, 2 records, epochs 0..2), each kafka step matched by
0..k steps of the ``tla-*`` model (``isrlab.spec.kafka.refinement``).  Prints the figures and the
wall and CPU time (the machine may be shared).  Exits 1 if any step fails to refine.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Callable
from functools import partial
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from isrlab.spec.kafka.model import KafkaModel  # noqa: E402
from isrlab.spec.kafka.refinement import (  # noqa: E402
    RefinementResult,
    check_refinement,
    matching_config,
    random_walks,
    tla_for,
)


def _timed(what: str, run: Callable[[], RefinementResult]) -> bool:
    wall, cpu = time.perf_counter(), time.process_time()
    result = run()
    print(f"  {what}: {result.summary()}; {time.perf_counter() - wall:.1f} s wall, "
          f"{time.process_time() - cpu:.1f} s CPU", flush=True)
    for failure in result.failures:
        print(f"    FAIL {failure[:400]}")
    return result.ok


def main() -> int:
    """Run the benchmark (see the module doc)."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--walks", type=int, default=10_000)
    ap.add_argument("--length", type=int, default=30)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--brokers", type=int, default=3)
    ap.add_argument("--max-records", type=int, default=2)
    ap.add_argument("--max-leader-epoch", type=int, default=2)
    ap.add_argument("-k", type=int, default=6)
    a = ap.parse_args()
    ok = True
    for version in ("tla-kip279", "tla-kip320"):
        print(version)
        for b, r, e in ((2, 1, 1), (2, 2, 2)):
            m = KafkaModel(matching_config(version, b, r, e))
            ok &= _timed(f"complete space brokers={b} max_records={r} max_leader_epoch={e}",
                         partial(check_refinement, m, tla_for(m), k=a.k))
        big = KafkaModel(matching_config(version, a.brokers, a.max_records,
                                         a.max_leader_epoch))
        ok &= _timed(
            f"{a.walks:,} walks of {a.length} steps, seed {a.seed}, brokers={a.brokers} "
            f"max_records={a.max_records} max_leader_epoch={a.max_leader_epoch}",
            partial(random_walks, big, tla_for(big), a.walks, a.length, a.seed, k=a.k))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
