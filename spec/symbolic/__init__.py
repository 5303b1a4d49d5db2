"""Z3 encodings of the Kafka models, for ``checker.z3``'s BMC, proofs and differential tests.

``symbolic_for(name, params)`` gives the symbolic twin of a registered explicit model (with
the same bounds, so that bounded model checking and breadth-first search explore the same
behaviours), or ``None`` when the model has no encoding.
"""

from __future__ import annotations

from collections.abc import Mapping

from checker.registry import ParamValue
from spec.symbolic.tla import VARIANTS, Bounds, TlaSystem

SYMBOLIC_MODELS = tuple(f"tla-{v}" for v in VARIANTS)


def symbolic_for(name: str, params: Mapping[str, ParamValue]) -> TlaSystem | None:
    """The bounded symbolic system of model ``name`` with parsed ``params``, if it has one."""
    if name not in SYMBOLIC_MODELS:
        return None
    bounds = Bounds(int(params["log_size"]), int(params["max_records"]),
                    int(params["max_leader_epoch"]))
    return TlaSystem(name.removeprefix("tla-"), int(params["replicas"]), bounds)
