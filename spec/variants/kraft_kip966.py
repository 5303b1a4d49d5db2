"""``tla-kraft-kip966``: Vanlightly/kafka-tlaplus ``kafka_data_replication/kraft/kip-966``
(module kafka_replication_kip_966), the KRaft spec with KIP-966's Eligible Leader Replicas;
the model is ``isrlab.spec.tla_kraft`` (docs/tla-models.md)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from isrlab.checker.registry import ParamValue
from isrlab.spec.tla_kraft import PARAMS_KIP966, build_kip966
from isrlab.spec.variants import Variant

VARIANT = Variant(
    name="tla-kraft-kip966", module="kafka_replication_kip_966", order=61,
    base="kafka_replication_kip_966",
    doc="Vanlightly's KRaft spec with KIP-966 (ELR, last-known ELR, broker epoch on disk, "
        "HW gate at min ISR)",
    params=PARAMS_KIP966, model=build_kip966, proofs=None, symmetric=False,
    symbolic=lambda params: _symbolic(params),
)


def _symbolic(params: Mapping[str, ParamValue]) -> Any:
    """The Z3 twin (``isrlab.spec.symbolic.tla_kraft``, imported on use: it loads Z3)."""
    from isrlab.spec.symbolic.tla_kraft import symbolic

    return symbolic(True, params)
