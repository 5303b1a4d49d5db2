"""The TLA+-faithful model family: one model per protocol module of the public TLA+
specification of Kafka replication (hachikuji/kafka-specification).

``register(reg)`` adds every variant of ``isrlab.spec.variants``: those of KafkaReplication with the
specification's constants as parameters (``replicas``, ``log_size``, ``max_records``,
``max_leader_epoch``; defaults: configuration A) and ``invariants``, the comma-separated
invariants to check (``none`` for none); a variant that is a module of its own with its own
parameters and builder.  ``VERSIONS`` is the table of KafkaReplication's variants by name.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from isrlab.checker.registry import ModelEntry, Param, ParamValue, Registry
from isrlab.spec.tla.layout import MAX_REPLICAS
from isrlab.spec.tla.model import INVARIANT_NAMES, TlaModel
from isrlab.spec.variants import Variant, of_base, variants

__all__ = ["INVARIANT_NAMES", "VERSIONS", "TlaModel", "build", "register"]

PARAMS = (
    # Maxima: the byte layout (isrlab.spec.tla.layout) holds at most 6 replicas and values below
    # 185 with 6 replicas; it also bounds max_records*(max_leader_epoch+1).
    Param("replicas", int, 2, "number of replicas (Replicas = {r1, ..., rn})", minimum=1,
          maximum=MAX_REPLICAS),
    Param("log_size", int, 2, "LogSize: offsets 0..log_size-1", minimum=1, maximum=180),
    Param("max_records", int, 2, "MaxRecords: record ids 0..max_records-1", minimum=1,
          maximum=180),
    Param("max_leader_epoch", int, 2, "MaxLeaderEpoch: epochs 0..max_leader_epoch", minimum=0,
          maximum=180),
    Param("invariants", str, "WeakIsr,StrongIsr",
          "comma-separated invariants among " + ", ".join(INVARIANT_NAMES) + "; or none"),
)


def parse_invariants(text: str) -> tuple[str, ...]:
    """The invariant names of a comma-separated list (``none`` or empty: no invariant)."""
    names = tuple(part.strip() for part in text.split(",") if part.strip())
    return () if names == ("none",) else names


def __getattr__(name: str) -> Any:
    """``VERSIONS``: KafkaReplication's variants by name, derived from ``isrlab.spec.variants``
    (computed on first use: the variant modules import this package's model)."""
    if name == "VERSIONS":
        return of_base()
    raise AttributeError(name)


def build(version: Variant, params: Mapping[str, ParamValue]) -> TlaModel:
    """The model of one protocol version for parsed parameters (ValueError when unusable)."""
    return TlaModel(
        version, int(params["replicas"]), int(params["log_size"]),
        int(params["max_records"]), int(params["max_leader_epoch"]),
        parse_invariants(str(params["invariants"])),
    )


def register(reg: Registry) -> None:
    """Add every ``tla-*`` variant of ``isrlab.spec.variants`` to the registry."""
    for variant in variants().values():
        builder = variant.model
        reg.register(ModelEntry(
            name=variant.name, doc=variant.doc, params=variant.params or PARAMS,
            build=(builder if builder is not None
                   else lambda params, v=variant: build(v, params)),  # type: ignore[misc]
            symmetric=variant.symmetric,
        ))
