"""``tla-kraft-3.5``: Vanlightly/kafka-tlaplus ``kafka_data_replication/kraft/v3.5``
(module kafka_replication_v3_5), Kafka 3.5's replication with a KRaft controller; the model
is ``isrlab.spec.tla_kraft`` (docs/tla-models.md)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from isrlab.checker.registry import ParamValue
from isrlab.spec.tla_kraft import PARAMS_V35, build_v35
from isrlab.spec.variants import Variant

VARIANT = Variant(
    name="tla-kraft-3.5", module="kafka_replication_v3_5", order=60,
    base="kafka_replication_v3_5",
    doc="Vanlightly's KRaft spec of Kafka 3.5 replication (metadata log, broker epochs, "
        "fencing, AlterPartition with KIP-903, diverging-epoch fetch, reassignment)",
    params=PARAMS_V35, model=build_v35, proofs=None, symmetric=False,
    symbolic=lambda params: _symbolic(params),
)


def _symbolic(params: Mapping[str, ParamValue]) -> Any:
    """The Z3 twin (``isrlab.spec.symbolic.tla_kraft``, imported on use: it loads Z3)."""
    from isrlab.spec.symbolic.tla_kraft import symbolic

    return symbolic(False, params)
