"""Vanlightly's KRaft-era Kafka replication specifications (Vanlightly/kafka-tlaplus,
``kafka_data_replication/kraft/v3.5`` and ``kraft/kip-966``) as explicit-state models.

``KraftModel`` is one model for both modules: ``KraftConfig.kip966`` switches on the
KIP-966 changes (ELR, last-known ELR, the broker epoch on disk, the HW gate at min ISR).
``PARAMS_V35`` / ``PARAMS_KIP966`` are the registry parameters (the specs' constants, their
invariants, the mechanism checks that can be removed, and TLC's VIEW); ``build_v35`` /
``build_kip966`` build a model from parsed parameters; a model's ``liveness()`` declares the
specs' seven liveness properties and fairness (``liveness``).  docs/tla-models.md describes
them.
"""

from __future__ import annotations

from isrlab.spec.tla_kraft.layout import INVARIANTS_KIP966, INVARIANTS_V35
from isrlab.spec.tla_kraft.model import (
    KraftConfig,
    KraftModel,
)
from isrlab.spec.tla_kraft.params import PARAMS_KIP966, PARAMS_V35, build_kip966, build_v35

__all__ = [
    "INVARIANTS_KIP966", "INVARIANTS_V35", "PARAMS_KIP966", "PARAMS_V35", "KraftConfig",
    "KraftModel", "build_kip966", "build_v35",
]
