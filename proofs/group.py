"""A group of proof obligations and its recorded outcome: the shapes every obligation module
shares (``isrlab.proofs.obligations`` holds the catalogue, the runner and the recording).

A ``Group`` names its model, its key and its replica count, and carries two functions: one
discharges its obligations (a ``Row`` each), the other gives the formulas whose S-expressions
make its digest, so that a recorded outcome is re-used only while its inputs are unchanged.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Iterable, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any, TypeVar

import z3

from isrlab.checker.z3 import (
    REFUTED,
    Magnitudes,
    Outcome,
    SymbolicProperty,
    SymbolicSystem,
    prove_inductive,
)

C = TypeVar("C")


@dataclass(frozen=True, slots=True)
class Row:
    """One obligation's outcome, as recorded."""

    kind: str  # IndInit, IndNext, Step or BMC
    target: str
    action: str
    status: str  # proved, refuted, unknown, violated, holds
    seconds: float
    detail: str = ""


@dataclass(frozen=True, slots=True)
class GroupResult:
    """The recorded outcomes of one group of obligations."""

    model: str
    group: str
    replicas: int
    digest: str
    rows: tuple[Row, ...]

    def to_json(self) -> dict[str, Any]:
        """Plain JSON."""
        return {**asdict(self), "rows": [asdict(r) for r in self.rows]}

    @staticmethod
    def from_json(data: dict[str, Any]) -> GroupResult:
        """The inverse of ``to_json``."""
        rows = tuple(Row(**r) for r in data["rows"])
        return GroupResult(data["model"], data["group"], data["replicas"], data["digest"], rows)


@dataclass(frozen=True)
class Group:
    """A group of obligations for one model (see the module docstring)."""

    model: str
    key: str
    replicas: int
    title: str
    run_group: Callable[[Group, int], tuple[Row, ...]] = field(repr=False)
    formulas: Callable[[Group], Iterable[z3.ExprRef]] = field(repr=False)

    def digest(self) -> str:
        """SHA-256 of the group's identity and of the S-expressions of all its formulas."""
        h = hashlib.sha256(f"{self.model}/{self.key}/{self.replicas}".encode())
        for formula in self.formulas(self):
            h.update(formula.sexpr().encode())
        return h.hexdigest()

    def run(self, timeout_ms: int) -> GroupResult:
        """Discharge every obligation of the group."""
        return GroupResult(self.model, self.key, self.replicas, self.digest(),
                           self.run_group(self, timeout_ms))


def outcome_row(outcome: Outcome[C], kind: str, show: Callable[[C], str]) -> Row:
    """One recorded row; a refuted obligation shows its counterexample (to induction) as
    ``from: <state>  to: <state>``, each state rendered by ``show``."""
    detail = outcome.reason
    if outcome.status == REFUTED:
        pre = "" if outcome.pre is None else f"from: {show(outcome.pre)}  "
        post = "" if outcome.post is None else f"to: {show(outcome.post)}"
        detail = pre + post
    return Row(kind, outcome.obligation.target, outcome.obligation.action or "Init",
               outcome.status, round(outcome.seconds, 3), detail)


def inductive_rows(
    system: SymbolicSystem[C], conjuncts: Sequence[SymbolicProperty], timeout_ms: int,
    magnitudes: Magnitudes | None, show: Callable[[C], str],
) -> tuple[Row, ...]:
    """The rows of ``conjuncts`` taken together as one candidate inductive invariant:
    IndInit of each, then IndNext of each under all of them, action family by family."""
    return tuple(outcome_row(o, o.obligation.kind, show)
                 for o in prove_inductive(system, conjuncts, timeout_ms, magnitudes))
