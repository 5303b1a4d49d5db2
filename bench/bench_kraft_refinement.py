"""Benchmark the refinement of ``kafka -p controller=kraft`` to ``tla-kraft-3.5`` and
``tla-kraft-kip966``.

    .venv/bin/python bench/bench_kraft_refinement.py [--walks 2000] [--length 30]
        [--seed 1] [--brokers 3] [--max-leader-epoch 2] [--max-metadata-lag 2] [-k 5]
        [--skip-complete]

For each version: the complete state space of three small configurations (2 brokers,
epochs 0..1 with metadata lag 1, epochs 0..2 with lag 2, and epochs 0..1 with lag 1 and
clean crashes; every transition checked), then ``--walks`` seeded random walks of
``--length`` steps on ``--brokers`` brokers without and with clean crashes, each
``kafka`` step matched by 0..k port steps with every gap step available
(``isrlab.spec.kafka.kraft_refinement``).  ``tla-kraft-kip966`` runs with min ISR 2 (so
that the ELR and the HW gate act).  Prints, per run, the walks, the steps checked, the
steps that needed a gap step (per gap step), the failures, and wall and CPU time (the
machine may be shared).  Exits 1 if any step fails to refine.
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

from isrlab.spec.kafka.kraft_model import KRaftModel  # noqa: E402
from isrlab.spec.kafka.kraft_refinement import (  # noqa: E402
    VERSIONS,
    KraftRefinementResult,
    check_refinement,
    matching_config,
    random_walks,
    tla_for,
)
from isrlab.spec.kafka.kraft_refinement_gaps import GAP_STEPS  # noqa: E402

MIN_ISR = {"tla-kraft-3.5": 1, "tla-kraft-kip966": 2}


def _timed(what: str, run: Callable[[], KraftRefinementResult]) -> bool:
    wall, cpu = time.perf_counter(), time.process_time()
    result = run()
    print(f"  {what}: {result.summary()}; {time.perf_counter() - wall:.1f} s wall, "
          f"{time.process_time() - cpu:.1f} s CPU", flush=True)
    for failure in result.failures:
        print(f"    FAIL {failure[:400]}")
    return result.ok


def main() -> int:
    """Run the benchmark (see the module doc)."""
    ap = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    ap.add_argument("--walks", type=int, default=2_000)
    ap.add_argument("--length", type=int, default=30)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--brokers", type=int, default=3)
    ap.add_argument("--max-leader-epoch", type=int, default=2)
    ap.add_argument("--max-metadata-lag", type=int, default=2)
    ap.add_argument("-k", type=int, default=5)
    ap.add_argument("--skip-complete", action="store_true")
    a = ap.parse_args()
    ok = True
    for version in VERSIONS:
        print(version)
        min_isr = MIN_ISR[version]
        if not a.skip_complete:
            for epochs, lag, crashes in ((1, 1, "none"), (2, 2, "none"), (1, 1, "clean")):
                m = KRaftModel(matching_config(version, 2, epochs, lag, min_isr,
                                               crashes=crashes), ())
                ok &= _timed(
                    f"complete space brokers=2 max_leader_epoch={epochs} "
                    f"max_metadata_lag={lag} min_isr={min_isr} crashes={crashes}",
                    partial(check_refinement, m, tla_for(m), k=a.k, gaps=GAP_STEPS))
        for crashes in ("none", "clean"):
            big = KRaftModel(matching_config(version, a.brokers, a.max_leader_epoch,
                                             a.max_metadata_lag, min_isr, crashes=crashes), ())
            ok &= _timed(
                f"walks of {a.length} steps, seed {a.seed}, brokers={a.brokers} "
                f"max_leader_epoch={a.max_leader_epoch} "
                f"max_metadata_lag={a.max_metadata_lag} min_isr={min_isr} crashes={crashes}",
                partial(random_walks, big, tla_for(big), a.walks, a.length, a.seed, k=a.k,
                        gaps=GAP_STEPS))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
