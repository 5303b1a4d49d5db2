"""Benchmark the refinement of ``kafka -p controller=kraft`` to ``tla-kraft-3.5`` and
``tla-kraft-kip966``.

    .venv/bin/python bench/bench_kraft_refinement.py [--walks 2000] [--length 30]
        [--seed 1] [--brokers 3] [--max-leader-epoch 2] [--max-metadata-lag 2] [-k 5]
        [--skip-complete] [--group all|base|operations|records]
        [--version tla-kraft-3.5|tla-kraft-kip966]

For each version (both, or those ``--version`` names; repeatable), group ``base``: the
complete state space of three small configurations (2 brokers, epochs 0..1 with metadata lag
1, epochs 0..2 with lag 2, and epochs 0..1 with lag 1 and clean crashes; every transition
checked), then ``--walks`` seeded random walks of ``--length`` steps on ``--brokers``
brokers without and with clean crashes. Group ``operations``: the complete spaces (2
brokers, lag 1, epochs 0..1, 0..2 for preferred elections) with each of controlled shutdown,
preferred elections, controller failover, unclean elections, power losses
(``crashes=unclean``) and replaced disks (``empty_disk`` with clean crashes), then the walks
with all four controller operations, without crashes and with power losses and replaced
disks. Group ``records``: two records (``max_records=2`` against the port with ``Values =
{A, B}``): the complete space (2 brokers, epochs 0..1, lag 1), then the walks without
crashes and with power losses. Each ``kafka`` step is matched by 0..k port steps with every
gap step available (``isrlab.spec.kafka.kraft_refinement``). ``tla-kraft-kip966`` runs with
min ISR 2 (so that the ELR and the HW gate act). Prints, per run, the walks, the steps
checked, the steps that needed a gap step (per gap step), the failures, and wall and CPU
time (the machine may be shared). Exits 1 if any step fails to refine.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import Any

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
    ap.add_argument("--group", choices=("all", "base", "operations", "records"),
                    default="all")
    ap.add_argument("--version", choices=VERSIONS, action="append",
                    help="the port(s) to run (default: both)")
    a = ap.parse_args()
    ok = True
    for version in a.version or VERSIONS:
        print(version)
        if a.group in ("all", "base"):
            ok &= _base(version, a)
        if a.group in ("all", "operations"):
            ok &= _operations(version, a)
        if a.group in ("all", "records"):
            ok &= _records(version, a)
    return 0 if ok else 1


OPERATIONS: dict[str, dict[str, Any]] = {
    "controlled_shutdown": {"controlled_shutdown": True},
    "preferred_election": {"preferred_election": True},
    "controller_failover": {"controller_failover": True},
    "unclean_election": {"unclean_election": True},
    "power loss": {"crashes": "unclean"},
    "replaced disk": {"crashes": "clean", "empty_disk": True},
}
"""The complete spaces of group ``operations``: the ``kafka`` parameters of each."""
ALL_OPERATIONS = {"controlled_shutdown": True, "preferred_election": True,
                  "controller_failover": True, "unclean_election": True}


def _operations(version: str, a: argparse.Namespace) -> bool:
    """Group ``operations`` for ``version`` (the module doc)."""
    ok = True
    min_isr = MIN_ISR[version]
    if not a.skip_complete:
        for name, changes in OPERATIONS.items():
            epochs = 2 if "preferred_election" in changes else 1
            m = KRaftModel(matching_config(version, 2, epochs, 1, min_isr, **changes), ())
            ok &= _timed(
                f"complete space ({name}) brokers=2 max_leader_epoch={epochs} "
                f"max_metadata_lag=1 min_isr={min_isr} {_text(changes)}",
                partial(check_refinement, m, tla_for(m), k=a.k, gaps=GAP_STEPS))
    for crashes in ({"crashes": "none"}, {"crashes": "unclean", "empty_disk": True}):
        changes = {**ALL_OPERATIONS, **crashes}
        big = KRaftModel(matching_config(version, a.brokers, a.max_leader_epoch,
                                         a.max_metadata_lag, min_isr, **changes), ())
        ok &= _timed(
            f"walks of {a.length} steps, seed {a.seed}, brokers={a.brokers} "
            f"max_leader_epoch={a.max_leader_epoch} max_metadata_lag={a.max_metadata_lag} "
            f"min_isr={min_isr} {_text(changes)}",
            partial(random_walks, big, tla_for(big), a.walks, a.length, a.seed, k=a.k,
                    gaps=GAP_STEPS))
    return ok


def _records(version: str, a: argparse.Namespace) -> bool:
    """Group ``records`` for ``version`` (the module doc)."""
    ok = True
    min_isr = MIN_ISR[version]
    if not a.skip_complete:
        m = KRaftModel(matching_config(version, 2, 1, 1, min_isr, max_records=2), ())
        ok &= _timed(
            f"complete space brokers=2 max_leader_epoch=1 max_metadata_lag=1 "
            f"min_isr={min_isr} max_records=2",
            partial(check_refinement, m, tla_for(m), k=a.k, gaps=GAP_STEPS))
    for crashes in ("none", "unclean"):
        big = KRaftModel(matching_config(version, a.brokers, a.max_leader_epoch,
                                         a.max_metadata_lag, min_isr, max_records=2,
                                         crashes=crashes), ())
        ok &= _timed(
            f"walks of {a.length} steps, seed {a.seed}, brokers={a.brokers} "
            f"max_leader_epoch={a.max_leader_epoch} max_metadata_lag={a.max_metadata_lag} "
            f"min_isr={min_isr} max_records=2 crashes={crashes}",
            partial(random_walks, big, tla_for(big), a.walks, a.length, a.seed, k=a.k,
                    gaps=GAP_STEPS))
    return ok


def _text(changes: dict[str, Any]) -> str:
    return " ".join(f"{k}={str(v).lower() if isinstance(v, bool) else v}"
                    for k, v in changes.items())


def _base(version: str, a: argparse.Namespace) -> bool:
    """Group ``base`` for ``version`` (the module doc)."""
    ok = True
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
    return ok


if __name__ == "__main__":
    sys.exit(main())
