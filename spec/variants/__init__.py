"""Protocol variants as values: one module per variant, every table derived from here.

In the public TLA+ specification (hachikuji/kafka-specification) a protocol version is a
module that EXTENDS a base module and replaces some of its actions in ``Next``.  A
``Variant`` says exactly that: its name, its base, and for each base action it replaces the
actions that take its place, each with its executable form (``TlaModel`` steps) and its Z3
form (``TlaSystem`` relations) under the same TLA+ action name, plus the group of proof
obligations it gets.  Every module of this package defines one ``VARIANT``; ``variants()``
finds them all, so adding a protocol version is one new module here (and its conformance
test): the registry of ``isrlab`` models, ``isrlab.spec.tla.VERSIONS``, the symbolic models of
``isrlab.spec.symbolic`` and the proof catalogue of ``isrlab.proofs.obligations`` are derived from
it.  (A variant that is a module of its own, with proof groups of its own, is listed in
``isrlab.proofs.obligations.OWN_GROUPS``: the proofs import the specification, never the
other way.)
"""

from __future__ import annotations

import importlib
import pkgutil
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from functools import cache
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from isrlab.checker.registry import Param, ParamValue

KAFKA_REPLICATION = "KafkaReplication"

BASE_NEXT = {
    KAFKA_REPLICATION: (
        "ControllerElectLeader", "ControllerShrinkIsr", "BecomeLeader", "LeaderExpandIsr",
        "LeaderShrinkIsr", "LeaderWrite", "LeaderIncHighWatermark", "BecomeFollower",
        "FollowerReplicate",
    ),
}
"""The disjuncts of each base module's ``Next``, in order.  ``BecomeFollower`` stands for
``BecomeFollowerAndTruncateTo``, which the base leaves open (every version says where the
follower truncates); a base action nobody replaces keeps its base form."""

ExplicitAction = Callable[..., None]
"""An explicit step function ``(model, state, out, presumed) -> None`` appending
``(label, successor)`` pairs (see ``isrlab.spec.tla.model``)."""

SymbolicFamily = Callable[[Any], list[tuple[tuple[int, ...], Any]]]
"""A Z3 action family: ``system -> [(replica arguments, relation)]`` (see
``isrlab.spec.symbolic.tla``)."""


@dataclass(frozen=True, slots=True)
class Action:
    """One TLA+ action of a variant: its name and its two forms."""

    name: str
    explicit: ExplicitAction
    symbolic: SymbolicFamily | None = None


@dataclass(frozen=True)
class Variant:
    """A protocol version: a module of the specification that replaces base actions.

    ``replaces`` maps each replaced base action to the actions taking its place in ``Next``
    (in the module's order); ``proofs`` names the proof group it gets
    (``"strengthened"``: the invariants are proved inductive with the strengthening lemmas,
    ``"strengthening-fails"``: bounded model checking shows the lemmas fail, ``None``: no
    proof obligations).  ``model`` builds a model of its own when the variant is a whole
    module with other constants (its ``params``); ``None`` means a ``TlaModel`` of
    KafkaReplication's constants.
    """

    name: str
    module: str
    doc: str
    order: int
    base: str = KAFKA_REPLICATION
    replaces: Mapping[str, tuple[Action, ...]] = field(default_factory=dict)
    proofs: str | None = None
    params: tuple[Param, ...] | None = None
    model: Callable[[Mapping[str, ParamValue]], Any] | None = None
    symbolic: Callable[[Mapping[str, ParamValue]], Any] | None = None
    symmetric: bool = True
    z3_options: Mapping[str, bool | int] = field(default_factory=dict)
    """Z3 solver parameters for bounded model checking of its encoding: how fast, never what
    the answer is (``isrlab.checker.z3.bmc.bmc``'s ``options``; docs/z3.md has the measurements)."""
    bmc_partial_order: bool = False
    """Whether ``isrlab bmc`` unrolls its encoding with the partial-order reduction
    (``isrlab.checker.z3.bmc.bmc``'s ``partial_order``): how fast, never what the answer is
    (docs/z3.md has the measurements)."""

    def next_actions(self) -> tuple[str, ...]:
        """The names of ``Next``'s disjuncts: the base's, each replaced one expanded."""
        names: list[str] = []
        for base_action in BASE_NEXT.get(self.base, ()):
            replacement = self.replaces.get(base_action)
            names += [a.name for a in replacement] if replacement else [base_action]
        return tuple(names)

    def actions(self) -> dict[str, Action]:
        """The variant's own actions by name."""
        return {a.name: a for group in self.replaces.values() for a in group}

    @property
    def key(self) -> str:
        """The name without ``tla-`` (the symbolic encodings' variant key)."""
        return self.name.removeprefix("tla-")


@cache
def variants() -> dict[str, Variant]:
    """Every variant of this package, by name, in ``order``."""
    found = []
    for info in pkgutil.iter_modules(__path__):
        module = importlib.import_module(f"{__name__}.{info.name}")
        variant = getattr(module, "VARIANT", None)
        if isinstance(variant, Variant):
            found.append(variant)
    return {v.name: v for v in sorted(found, key=lambda v: (v.order, v.name))}


def of_base(base: str = KAFKA_REPLICATION) -> dict[str, Variant]:
    """The variants of one base module."""
    return {name: v for name, v in variants().items() if v.base == base and v.model is None}


def get(name: str) -> Variant:
    """The variant called ``name`` (KeyError when unknown)."""
    return variants()[name]
