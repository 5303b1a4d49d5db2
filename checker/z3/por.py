"""Partial-order reduction in the unrolling: each trace only in a lexicographic normal form.
Knows nothing of Kafka.

An action instance ``x`` *moves left past* ``z`` when every execution ``s →z u →x t`` has a
twin ``s →x u' →z t`` (same parameters, same end states).  Then rewriting a factor ``z x``
of a trace as ``x z`` gives a trace of the same length, from the same initial state, to the
same final state.  The relation is derived from the relations themselves (``left_movers``),
so no model declares it and none can declare it wrongly, in two ways:

* **footprints** (``footprint``): ``writes(a)`` are the variables ``v`` for which
  ``T_a(s, t) ∧ t.v ≠ s.v`` is satisfiable (one query per variable; one the solver does not
  settle counts ``v`` as written); ``reads(a)`` the variables of ``s`` occurring in ``T_a``
  once ``t.v`` is replaced by ``s.v`` for every ``v`` not written and the result simplified.
  So ``T_a(s, t) ≡ φ_a(s|reads, t|writes, p) ∧ ⋀_{v ∉ writes} t.v = s.v``, and when neither of
  ``a``, ``b`` writes what the other reads or writes (*independent*), each moves left past
  the other: from ``s →a u →b t``, ``φ_b`` holds from ``s`` (``b`` reads nothing ``a``
  writes), ``φ_a`` holds from ``u' = s[writes(b) := t]`` (``a`` reads nothing ``b`` writes),
  and the write sets are disjoint, so the end state is ``t``;
* **one validity query** for every other pair: ``T_z(s, u) ∧ T_x(u, t) ⇒ T_x(s, u') ∧
  T_z(u', t)`` with ``u' = s[writes(x) := t]`` and the same parameters.  This finds the
  one-way movers footprints miss: a step reading an older request moves right past the
  controller writing a newer one, but not the other way round.

**The constraint** (``PartialOrder``, ``bmc(partial_order=True)``): labels are ordered as in
``actions()``; a step taking ``x`` may not follow a stretch ``a_j … a_k`` of steps that ``x``
moves left past, in which some ``a_i`` comes after ``x`` in that order: no factor ``b w x``
with ``x < b`` and ``x`` moving left past ``b`` and every letter of ``w`` (the lexicographic
normal form of Mazurkiewicz traces, Anisimov and Knuth, here with a one-way relation).  One
Boolean per step and action, ``late[k][x]`` = "``x`` taken at step ``k+1`` could move back
before a later label", by ``late[k][x] = (x moves left past a_k) ∧ (a_k > x ∨
late[k-1][x])``; step ``k+1`` taking ``x`` requires ``¬late[k][x]``.

**Why each depth's verdict is unchanged** (every refuted depth still refutes every trace of
that length, so the lemmas asserted on earlier frames stay valid, and the shortest length
is the same).  By induction on the depth: assume no violating execution has fewer than
``k`` steps, and let ``τ`` be one of ``k`` steps.  Every execution obtained from ``τ`` by
such rewritings has ``k`` steps, starts in ``Init`` and ends in ``τ``'s last state; its
intermediate states are reached in fewer than ``k`` steps, so they satisfy the invariants
and every lemma asserted on an earlier frame.  Take the set ``S`` of executions reachable
from ``τ`` by these rewritings *and* by the renamings of ``bmc``'s other symmetry breaking
(each maps executions to executions of the same length and verdicts), restricted, when a
``violation`` predicate is given, to those whose last state satisfies it (rewritings keep
the last state; the renamings kept by ``symmetries`` are the caller's to show keep it).
The member of ``S`` whose label sequence is lexicographically least satisfies this
constraint (a forbidden factor ``b w x`` could be rewritten ``x b w``, a smaller member), the
lex-leader constraint of ``symmetries`` (its images are members) and ``first_step`` when
the least first label over such a set is one of ``first_step``'s (the caller's claim, as
for ``first_step`` itself: true when each ``first_step`` label is the least of its orbit
under the renamings).  So a depth is satisfiable with the constraint exactly when it is
without.  Nothing here assumes the actions are deterministic.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import z3

from isrlab.checker.z3.system import ActionInstance, C, Frame, Fresh, SymbolicSystem, make_frame


@dataclass(frozen=True, slots=True)
class Footprint:
    """The state variables one action instance may read and may write (see the module)."""

    reads: frozenset[str]
    writes: frozenset[str]


def _constants(term: z3.ExprRef) -> set[str]:
    """The names of the uninterpreted constants occurring in ``term`` (shared subterms once)."""
    seen: set[int] = set()
    found: set[str] = set()
    stack = [term]
    while stack:
        node = stack.pop()
        key = node.get_id()
        if key in seen:
            continue
        seen.add(key)
        if z3.is_const(node) and node.decl().kind() == z3.Z3_OP_UNINTERPRETED:
            found.add(node.decl().name())
        elif z3.is_quantifier(node):
            stack.append(node.body())
        elif z3.is_app(node):
            stack.extend(node.children())
    return found


def footprint(system: SymbolicSystem[C], action: ActionInstance,
              timeout_ms: int = 10_000) -> Footprint:
    """The variables ``action`` may read and write, derived from its relation (module
    docstring): writes by one satisfiability query per variable, reads syntactically after
    the unwritten next-state variables are replaced by their current values."""
    signature = system.signature()
    s = make_frame(signature, 0, "por")
    t = make_frame(signature, 1, "por")
    by_const = {s[name].decl().name(): name for name, _ in signature}
    if action.factored is not None:  # writes: the factored W (a superset of the real ones)
        update, written = action.factored(s, t, Fresh("p@por"))
        return Footprint(frozenset(by_const[c] for c in _constants(update) if c in by_const),
                         written)
    relation = action.relation(s, t, Fresh("p@por"))
    solver = z3.Solver()
    solver.set("timeout", timeout_ms)
    solver.add(relation)
    writes = set()
    for name, _ in signature:
        solver.push()
        solver.add(t[name] != s[name])
        if solver.check() != z3.unsat:
            writes.add(name)
        solver.pop()
    kept = [(t[name], s[name]) for name, _ in signature if name not in writes]
    reduced = z3.simplify(z3.substitute(relation, *kept) if kept else relation)
    reads = {by_const[c] for c in _constants(reduced) if c in by_const}
    return Footprint(frozenset(reads), frozenset(writes))


def independent(a: Footprint, b: Footprint) -> bool:
    """Neither writes what the other reads or writes (so adjacent steps of the two commute)."""
    return not (a.writes & (b.writes | b.reads) or b.writes & a.reads)


def left_movers(system: SymbolicSystem[C], timeout_ms: int = 10_000
                ) -> list[frozenset[int]]:
    """For each action instance ``x`` (by index in ``actions()``), the instances ``z`` that
    ``x`` can always move left past: every execution ``s →z u →x t`` has ``s →x u' →z t``
    with the same parameters, where ``u'`` is ``s`` with ``x``'s written variables taken
    from ``t``.  Independent instances (footprints) are such pairs without a query; for the
    others one validity query decides, and one the solver does not settle counts as no."""
    actions = system.actions()
    prints = [footprint(system, a, timeout_ms) for a in actions]
    signature = system.signature()
    s, u, t, m = (make_frame(signature, k, "por") for k in range(4))
    first = [a.relation(s, u, Fresh("p@por.z")) for a in actions]
    second = [a.relation(u, t, Fresh("p@por.x")) for a in actions]
    from_m = [a.relation(m, t, Fresh("p@por.z")) for a in actions]
    moved = [{name: t[name] if name in p.writes else s[name] for name, _ in signature}
             for p in prints]
    early = [a.relation(s, Frame(3, moved[i]), Fresh("p@por.x")) for i, a in enumerate(actions)]
    movers: list[set[int]] = [set() for _ in actions]
    for j in range(len(actions)):
        solver = z3.Solver()
        solver.set("timeout", timeout_ms)
        solver.add(first[j])
        for i in range(len(actions)):
            if i == j:
                continue
            if independent(prints[i], prints[j]):
                movers[i].add(j)
                continue
            late = z3.substitute(from_m[j], *[(m[name], moved[i][name]) for name, _ in signature])
            solver.push()
            solver.add(second[i], z3.Not(z3.And(early[i], late)))
            if solver.check() == z3.unsat:
                movers[i].add(j)
            solver.pop()
    return [frozenset(found) for found in movers]


@dataclass(slots=True)
class PartialOrder:
    """The lexicographic-normal-form constraint of the module docstring, one step at a time.

    ``movers[x]`` are the actions ``x`` moves left past (``left_movers``); ``step`` is called
    with each step's selector in order and returns the constraints that step adds."""

    movers: Sequence[frozenset[int]]
    tag: str = "u"
    late: list[z3.BoolRef] | None = field(default=None)

    def step(self, selector: z3.ArithRef, step: int) -> list[z3.BoolRef]:
        """Constraints on ``selector`` (the action of step ``step``) and the new ``late``."""
        parts: list[z3.BoolRef] = []
        if self.late is not None:
            parts += [z3.Implies(selector == x, z3.Not(late))
                      for x, late in enumerate(self.late) if not z3.is_false(late)]
        previous = self.late
        current: list[z3.BoolRef] = []
        for x, others in enumerate(self.movers):
            after = sorted(a for a in others if a > x)
            before = sorted(a for a in others if a < x)
            now_late = [selector == a for a in after]
            if previous is not None and not z3.is_false(previous[x]) and before:
                now_late.append(z3.And(previous[x], z3.Or([selector == a for a in before])))
            if not now_late:
                current.append(z3.BoolVal(False))
                continue
            flag = z3.Bool(f"late@{self.tag}.{step}.{x}")
            parts.append(flag == z3.Or(now_late))
            current.append(flag)
        self.late = current
        return parts
