"""The TLA+-faithful model family: one model per protocol version of the public TLA+
specification of Kafka replication (hachikuji/kafka-specification).

``register(reg)`` adds ``tla-truncate-to-hw``, ``tla-kip101``, ``tla-kip279`` and
``tla-kip320`` with the specification's constants as parameters (``replicas``, ``log_size``,
``max_records``, ``max_leader_epoch``; defaults: configuration A of docs/conformance.md) and
``invariants``, the comma-separated invariants to check (``none`` for none).
"""

from __future__ import annotations

from collections.abc import Mapping

from checker.registry import ModelEntry, Param, ParamValue, Registry
from spec.tla.layout import MAX_REPLICAS
from spec.tla.model import INVARIANT_NAMES, VERSIONS, TlaModel, Version

__all__ = ["INVARIANT_NAMES", "VERSIONS", "TlaModel", "build", "register"]

PARAMS = (
    # Maxima: the byte layout (spec.tla.layout) holds at most 6 replicas and values below
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


def build(version: Version, params: Mapping[str, ParamValue]) -> TlaModel:
    """The model of one protocol version for parsed parameters (ValueError when unusable)."""
    return TlaModel(
        version, int(params["replicas"]), int(params["log_size"]),
        int(params["max_records"]), int(params["max_leader_epoch"]),
        parse_invariants(str(params["invariants"])),
    )


def register(reg: Registry) -> None:
    """Add the four ``tla-*`` models to the registry."""
    for version in VERSIONS.values():
        reg.register(ModelEntry(
            name=version.name, doc=version.doc, params=PARAMS,
            build=lambda params, v=version: build(v, params),  # type: ignore[misc]
            symmetric=True,
        ))
