"""Inductive proof obligations, Apalache style.  Knows nothing of Kafka.

For a candidate inductive invariant ``Ind = C1 ∧ … ∧ Cn`` (the invariant of interest plus any
strengthening lemmas) the obligations are

* IndInit(Ci):      Init(s) ⇒ Ci(s)                      for each conjunct,
* IndNext(Ci, a):   Ind(s) ∧ T_a(s, s') ⇒ Ci(s')         for each conjunct and action family a.

Each is discharged by asking Z3 for a model of its negation: ``unsat`` proves it, a model is a
counterexample to induction (CTI) — a state (pair) decoded to concrete values — and a
timeout or an incomplete quantifier instantiation is ``unknown``.  When every obligation is
proved, ``Ind`` holds in every reachable state, for every value of the unbounded variables.

Modelling shortcut: a CTI's pre-state satisfies ``Ind`` but need not be reachable; it shows
that the *proof* fails, not that the invariant does.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Generic

import z3

from isrlab.checker.z3.system import (
    C,
    Frame,
    Fresh,
    SymbolicProperty,
    SymbolicSystem,
    check,
    families,
    family_relation,
    make_frame,
)

PROVED = "proved"
REFUTED = "refuted"
UNKNOWN = "unknown"


@dataclass(frozen=True, slots=True)
class Obligation:
    """One proof obligation: ``IndInit(target)`` when ``action`` is None, else ``IndNext``."""

    target: str
    action: str | None
    hypotheses: tuple[str, ...]

    @property
    def kind(self) -> str:
        """``"IndInit"`` or ``"IndNext"``."""
        return "IndInit" if self.action is None else "IndNext"


@dataclass(frozen=True, slots=True)
class Outcome(Generic[C]):
    """The verdict on one obligation, with its counterexample when refuted."""

    obligation: Obligation
    status: str
    seconds: float
    pre: C | None = None
    post: C | None = None
    reason: str = ""


def _solver(timeout_ms: int) -> z3.Solver:
    solver = z3.Solver()
    if timeout_ms:
        solver.set("timeout", timeout_ms)
    return solver


Magnitudes = Callable[[Frame], Sequence[z3.ArithRef]]
SMALL_BOUNDS = (2, 4, 8, 16, 64)


def _shrink(solver: z3.Solver, frames: Sequence[Frame], magnitudes: Magnitudes | None) -> None:
    """After a ``sat`` answer, look for a *small* counterexample: bound every magnitude the
    system names (offsets, epochs, ids) by 2, 4, 8, … and keep the first bound that is still
    satisfiable, so that CTIs print as readable states.  The solver is left satisfiable."""
    if magnitudes is None:
        return
    terms = [m for f in frames for m in magnitudes(f)]
    for bound in SMALL_BOUNDS:
        solver.push()
        solver.add([z3.And(m >= -1, m <= bound) for m in terms])
        if check(solver) == z3.sat:
            return  # keep the bounded frame: solver.model() is the small one
        solver.pop()
    check(solver)


def _verdict(solver: z3.Solver) -> tuple[str, str]:
    answer = check(solver)
    if answer == z3.unsat:
        return PROVED, ""
    if answer == z3.sat:
        return REFUTED, ""
    return UNKNOWN, solver.reason_unknown()


def ind_init(
    system: SymbolicSystem[C],
    target: SymbolicProperty,
    timeout_ms: int = 60_000,
    magnitudes: Magnitudes | None = None,
) -> Outcome[C]:
    """Discharge ``Init ⇒ target``; a refutation carries an initial state breaking it."""
    obligation = Obligation(target.name, None, ())
    s = make_frame(system.signature(), 0, "init")
    solver = _solver(timeout_ms)
    solver.add(system.init(s), z3.Not(target.holds(s)))
    started = time.perf_counter()
    status, reason = _verdict(solver)
    seconds = time.perf_counter() - started
    if status == REFUTED:
        _shrink(solver, [s], magnitudes)
        return Outcome(obligation, status, seconds, post=system.decode(solver.model(), s))
    return Outcome(obligation, status, seconds, reason=reason)


@dataclass(frozen=True, slots=True)
class _Attempt:
    """One way of asking Z3: with which hypotheses, for how long, with or without MBQI."""

    only_target: bool
    timeout_ms: int
    mbqi: bool


def _attempts(timeout_ms: int) -> tuple[_Attempt, ...]:
    """Cheapest first: the target alone as hypothesis (settles frame conditions at once),
    then every hypothesis, then every hypothesis with e-matching only (no MBQI), which often
    closes quantified obligations that model-based instantiation wanders on.  A proof with
    fewer hypotheses is a proof of the obligation; only the complete, MBQI-checked attempt
    may refute it."""
    quick = min(timeout_ms, 5_000) if timeout_ms else 5_000
    return (_Attempt(True, quick, True), _Attempt(False, timeout_ms, True),
            _Attempt(False, timeout_ms, False))


def _discharge(
    system: SymbolicSystem[C],
    obligation: Obligation,
    target_hypotheses: Sequence[SymbolicProperty],
    hypotheses: Sequence[SymbolicProperty],
    family: str,
    goal: Callable[[Frame, Frame], z3.BoolRef],
    timeout_ms: int,
    magnitudes: Magnitudes | None,
) -> Outcome[C]:
    """Ask Z3 for ``Hyp(s) ∧ T_family(s, s') ∧ ¬goal(s, s')`` by the attempts above."""
    s = make_frame(system.signature(), 0, "ind")
    t = make_frame(system.signature(), 1, "ind")
    relation = family_relation(system, family, s, t, Fresh("p@ind"))
    negated = z3.Not(goal(s, t))
    started = time.perf_counter()
    reason = ""
    for attempt in _attempts(timeout_ms):
        chosen = target_hypotheses if attempt.only_target else hypotheses
        solver = _solver(attempt.timeout_ms)
        if not attempt.mbqi:
            solver.set("smt.mbqi", False)
        solver.add([h.holds(s) for h in chosen])
        solver.add(relation, negated)
        status, why = _verdict(solver)
        if status == PROVED:
            return Outcome(obligation, status, time.perf_counter() - started)
        if status == REFUTED and not attempt.only_target and attempt.mbqi:
            _shrink(solver, [s, t], magnitudes)
            model = solver.model()
            return Outcome(obligation, status, time.perf_counter() - started,
                           system.decode(model, s), system.decode(model, t))
        reason = why or reason
    return Outcome(obligation, UNKNOWN, time.perf_counter() - started, reason=reason)


def ind_next(
    system: SymbolicSystem[C],
    target: SymbolicProperty,
    hypotheses: Sequence[SymbolicProperty],
    family: str,
    timeout_ms: int = 60_000,
    magnitudes: Magnitudes | None = None,
) -> Outcome[C]:
    """Discharge ``Hyp(s) ∧ T_family(s, s') ⇒ target(s')``; a refutation is a CTI pair."""
    obligation = Obligation(target.name, family, tuple(h.name for h in hypotheses))
    return _discharge(system, obligation, [target], hypotheses, family,
                      lambda s, t: target.holds(t), timeout_ms, magnitudes)


StepPredicate = Callable[[Frame, Frame], z3.BoolRef]


@dataclass(frozen=True, slots=True)
class StepProperty:
    """A named predicate over a step ``(s, s')``, e.g. "epochs never decrease"."""

    name: str
    holds: StepPredicate
    doc: str = ""


def step_obligation(
    system: SymbolicSystem[C],
    prop: StepProperty,
    hypotheses: Sequence[SymbolicProperty],
    family: str,
    timeout_ms: int = 60_000,
    magnitudes: Magnitudes | None = None,
) -> Outcome[C]:
    """Discharge ``Hyp(s) ∧ T_family(s, s') ⇒ P(s, s')`` for a step property ``P``.

    The hypotheses should be proved inductive invariants, so that ``Hyp(s)`` covers every
    reachable ``s``; then a proof shows ``P`` holds on every reachable step.
    """
    obligation = Obligation(prop.name, family, tuple(h.name for h in hypotheses))
    return _discharge(system, obligation, [], hypotheses, family, prop.holds, timeout_ms,
                      magnitudes)


def prove_inductive(
    system: SymbolicSystem[C],
    conjuncts: Sequence[SymbolicProperty],
    timeout_ms: int = 60_000,
    magnitudes: Magnitudes | None = None,
) -> list[Outcome[C]]:
    """Every IndInit and IndNext obligation of ``conjuncts`` as one candidate invariant."""
    outcomes = [ind_init(system, c, timeout_ms, magnitudes) for c in conjuncts]
    for family in families(system):
        outcomes.extend(
            ind_next(system, c, conjuncts, family, timeout_ms, magnitudes) for c in conjuncts
        )
    return outcomes


def all_proved(outcomes: Sequence[Outcome[C]]) -> bool:
    """Whether every obligation was proved (so the conjunction is an inductive invariant)."""
    return all(o.status == PROVED for o in outcomes)
