"""Per-step reachability lemmas for ``bmc`` (forward frames), found by Houdini.  Knows nothing
of Kafka.

For a symbolic system, ``ReachFrames`` computes for each step ``k`` a conjunction ``F_k`` of
simple *candidate* predicates over one state (an integer variable against a constant, two
integer variables against each other, a Boolean variable or its negation) that every state
reachable in exactly ``k`` steps satisfies, given that the invariants held in the earlier
states:

* ``F_0`` keeps the candidates that ``Init(s)`` implies;
* ``F_(k+1)`` keeps those that ``F_k(s) ∧ Inv(s) ∧ Next(s, t)`` implies of ``t``.

Each is Houdini's fixpoint: ask the solver for a state that breaks the conjunction of the
candidates still kept, drop every candidate that state breaks, repeat until the solver answers
``unsat`` — that last answer is the proof that ``F_k`` holds (by induction on ``k``).  Once
``F_(k+1)`` equals ``F_k`` it is inductive relative to the invariants and every deeper step
has the same set, so no further query is asked.

``bmc`` asserts ``F_k`` on frame ``k`` of its unrolling.  The lemmas remove only states that
no trace whose earlier states satisfy the invariants reaches in ``k`` steps, so every depth's
verdict is unchanged (a depth is asked only once every shorter one is refuted, so a shortest
violating trace satisfies the invariants before its last state); they give the solver facts
about the deep frames that it would otherwise rediscover in every refutation.

Modelling shortcut: candidates are non-relational bounds over the given ``constants`` and
the pairwise order of integer variables, so ``F_k`` is coarse (an over-approximation of the
states reachable in ``k`` steps); it is a hint of known truth, never part of the question.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Generic

import z3

from isrlab.checker.z3.system import C, Frame, Fresh, SymbolicSystem, check, make_frame

Candidate = tuple[str, str, str | int]
"""``("le", v, c)`` v ≤ c, ``("ge", v, c)`` v ≥ c, ``("lev", v, w)`` v ≤ w, ``("is", b, 1)``
b, ``("is", b, 0)`` ¬b."""


def candidates(signature: Sequence[tuple[str, z3.SortRef]],
               constants: Sequence[int]) -> list[Candidate]:
    """Every candidate predicate over the state variables of ``signature`` (module docstring),
    in a fixed order."""
    ints = [name for name, sort in signature if sort == z3.IntSort()]
    bools = [name for name, sort in signature if sort == z3.BoolSort()]
    found: list[Candidate] = []
    for name in ints:
        found += [(op, name, c) for c in constants for op in ("le", "ge")]
    found += [("lev", a, b) for a, b in itertools.permutations(ints, 2)]
    found += [("is", name, value) for name in bools for value in (1, 0)]
    return found


def formula(candidate: Candidate, s: Frame) -> z3.BoolRef:
    """The candidate as a formula over frame ``s``."""
    op, name, other = candidate
    v = s[name]
    result: z3.BoolRef
    if op == "le":
        result = v <= other
    elif op == "ge":
        result = v >= other
    elif op == "lev":
        result = v <= s[str(other)]
    else:
        result = v if other else z3.Not(v)
    return result


def holds_in(candidate: Candidate, values: dict[str, int | bool]) -> bool:
    """Whether the candidate holds of a concrete assignment of the state variables."""
    op, name, other = candidate
    v = values[name]
    if op == "le":
        return v <= int(other)
    if op == "ge":
        return v >= int(other)
    if op == "lev":
        return v <= values[str(other)]
    return bool(v) == bool(other)


@dataclass(slots=True)
class ReachFrames(Generic[C]):
    """The frames ``F_0, F_1, …`` of a system, computed on demand (module docstring)."""

    system: SymbolicSystem[C]
    invariant: Callable[[Frame], z3.BoolRef]  # the chosen invariants' conjunction
    constants: Sequence[int]
    frames: list[list[Candidate]] = field(default_factory=list)
    stable: bool = False
    queries: int = 0
    _terms: dict[Candidate, tuple[z3.BoolRef, z3.BoolRef]] = field(default_factory=dict)
    """Each candidate over Houdini's frames ``s`` and ``t``, built once."""

    def lemma(self, k: int, s: Frame) -> z3.BoolRef:
        """``F_k`` over frame ``s`` (computing ``F_0 … F_k`` first if needed)."""
        while len(self.frames) <= k:
            self._next()
        return z3.And([formula(c, s) for c in self.frames[min(k, len(self.frames) - 1)]])

    def _next(self) -> None:
        sig = self.system.signature()
        s, t = make_frame(sig, 0, "houdini"), make_frame(sig, 1, "houdini")
        if self.stable:
            self.frames.append(self.frames[-1])
            return
        if not self._terms:
            self._terms = {c: (formula(c, s), formula(c, t))
                           for c in candidates(sig, self.constants)}
        solver = z3.Solver()
        if not self.frames:
            solver.add(self.system.init(t))
        else:
            fresh = Fresh("houdini")
            solver.add(z3.And([self._terms[c][0] for c in self.frames[-1]]))
            solver.add(self.invariant(s))
            solver.add(z3.Or([a.relation(s, t, fresh) for a in self.system.actions()]))
        kept = self._houdini(solver, t, list(self._terms))
        self.stable = bool(self.frames) and kept == self.frames[-1]
        self.frames.append(kept)

    def _houdini(self, solver: z3.Solver, t: Frame, kept: list[Candidate]) -> list[Candidate]:
        """The candidates that every model of ``solver`` satisfies on frame ``t``."""
        names = [name for name, _ in self.system.signature()]
        while kept:
            solver.push()
            solver.add(z3.Not(z3.And([self._terms[c][1] for c in kept])))
            self.queries += 1
            verdict = check(solver)
            if verdict == z3.unsat:
                solver.pop()
                return kept
            if verdict != z3.sat:
                raise RuntimeError("houdini: the solver gave up on a one-step query")
            model = solver.model()
            values = {n: _value(model.eval(t[n], model_completion=True)) for n in names}
            solver.pop()
            kept = [c for c in kept if holds_in(c, values)]
        return kept


def _value(term: z3.ExprRef) -> int | bool:
    if z3.is_true(term) or z3.is_false(term):
        return bool(z3.is_true(term))
    value: int = term.as_long()
    return value
