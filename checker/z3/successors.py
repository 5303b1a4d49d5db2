"""Concrete queries on a symbolic system: does a step satisfy T, and what successors does T admit.

These are the two halves of the differential check between an explicit model and its
symbolic encoding:

* ``admits(system, s, t, family)``: is ``T_family(pin s, pin t)`` satisfiable, i.e. does the
  symbolic relation allow the explicit model's step ``s → t``;
* ``successors(system, s, family)``: every ``t`` with ``T_family(pin s, t)``, enumerated by
  asking Z3 for a model, decoding it, adding the blocking clause ``¬pin(t, decoded)`` and
  asking again until unsatisfiable.

Modelling shortcut: enumeration terminates only when the system's successors are finitely
many *as seen through* ``pin`` (bounded systems); ``limit`` guards against the others.
"""

from __future__ import annotations

import z3

from isrlab.checker.z3.system import (
    C,
    Frame,
    Fresh,
    SymbolicProperty,
    SymbolicSystem,
    family_relation,
    make_frame,
)


def admits(system: SymbolicSystem[C], state: C, successor: C, family: str | None = None) -> bool:
    """Whether T (of ``family``, or all of Next) allows the step ``state → successor``."""
    s = make_frame(system.signature(), 0, "adm")
    t = make_frame(system.signature(), 1, "adm")
    solver = z3.Solver()
    solver.add(system.pin(s, state), system.pin(t, successor))
    solver.add(family_relation(system, family, s, t, Fresh("p@adm")))
    answer = solver.check()
    if answer == z3.unknown:
        reason = solver.reason_unknown()
        raise RuntimeError(f"Z3 could not decide a step of {system.name}: {reason}")
    return bool(answer == z3.sat)


def satisfies(system: SymbolicSystem[C], state: C, name: str) -> bool:
    """Whether the concrete ``state`` satisfies the symbolic invariant ``name``."""
    return property_holds(system, state, next(p for p in system.invariants() if p.name == name))


def property_holds(system: SymbolicSystem[C], state: C, prop: SymbolicProperty) -> bool:
    """Whether the concrete ``state`` satisfies the state predicate ``prop`` (any lemma)."""
    name = prop.name
    s = make_frame(system.signature(), 0, "sat")
    solver = z3.Solver()
    solver.add(system.pin(s, state), z3.Not(prop.holds(s)))
    answer = solver.check()
    if answer == z3.unknown:
        raise RuntimeError(f"Z3 could not evaluate {name}: {solver.reason_unknown()}")
    return bool(answer == z3.unsat)


def successors(
    system: SymbolicSystem[C], state: C, family: str | None = None, limit: int = 100_000
) -> set[C]:
    """Every successor of ``state`` that the symbolic relation admits, by blocking clauses."""
    s = make_frame(system.signature(), 0, "enum")
    t = make_frame(system.signature(), 1, "enum")
    solver = z3.Solver()
    solver.add(system.pin(s, state))
    solver.add(family_relation(system, family, s, t, Fresh("p@enum")))
    return _enumerate(system, solver, t, limit, "successors; is the system bounded?")


def initial_states(system: SymbolicSystem[C], limit: int = 100_000) -> set[C]:
    """Every initial state the symbolic ``Init`` admits, by blocking clauses."""
    s = make_frame(system.signature(), 0, "init-enum")
    solver = z3.Solver()
    solver.add(system.init(s))
    return _enumerate(system, solver, s, limit, "initial states")


def _enumerate(
    system: SymbolicSystem[C], solver: z3.Solver, frame: Frame, limit: int, what: str
) -> set[C]:
    """Every state of ``frame`` that ``solver``'s constraints admit: ask for a model, decode
    it, block it with ``¬pin(frame, decoded)``, ask again until unsatisfiable.  A state
    decoded twice (``pin`` does not block what ``decode`` reads) or more than ``limit``
    states (``what`` names them) is a ``RuntimeError``."""
    found: set[C] = set()
    while len(found) <= limit:
        answer = solver.check()
        if answer == z3.unsat:
            return found
        if answer != z3.sat:
            raise RuntimeError(f"Z3 could not enumerate {system.name}: {solver.reason_unknown()}")
        decoded = system.decode(solver.model(), frame)
        if decoded in found:
            raise RuntimeError(
                f"{system.name}: pin() does not block what decode() reads ({decoded!r})"
            )
        found.add(decoded)
        solver.add(z3.Not(system.pin(frame, decoded)))
    raise RuntimeError(f"{system.name}: more than {limit} {what}")
