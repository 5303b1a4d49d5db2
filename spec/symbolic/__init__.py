"""Z3 encodings of the Kafka models, for ``isrlab.checker.z3``'s BMC, proofs and differential tests.

``symbolic_for(name, params)`` gives the symbolic twin of a registered explicit model (with
the same bounds, so that bounded model checking and breadth-first search explore the same
behaviours), or ``None`` when the model has no encoding.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from isrlab.checker.registry import ParamValue
from isrlab.spec.symbolic.tla import Bounds, TlaSystem, variant_keys
from isrlab.spec.variants import variants


def symbolic_models() -> tuple[str, ...]:
    """The models with a Z3 encoding (derived from ``isrlab.spec.variants``)."""
    own = tuple(v.name for v in variants().values() if v.symbolic is not None)
    return (*(f"tla-{k}" for k in variant_keys()), *own)


def symbolic_for(name: str, params: Mapping[str, ParamValue]) -> Any:
    """The bounded symbolic system of model ``name`` with parsed ``params``, if it has one."""
    variant = variants().get(name)
    if variant is not None and variant.symbolic is not None:
        return variant.symbolic(params)
    if name not in symbolic_models():
        return None
    bounds = Bounds(int(params["log_size"]), int(params["max_records"]),
                    int(params["max_leader_epoch"]))
    return TlaSystem(name.removeprefix("tla-"), int(params["replicas"]), bounds)
