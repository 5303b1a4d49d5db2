"""Bounded model checking with shortest-first deepening.  Knows nothing of Kafka.

``bmc`` unrolls the transition relation one step at a time on one incremental solver:

    Init(s0) ∧ T(s0, s1) ∧ … ∧ T(s(k-1), sk) ∧ ¬(Inv1(sk) ∧ Inv2(sk) ∧ …)

and asks the solver for a model at ``k = 0, 1, 2, …, depth`` (the formulas are Z3 terms; the
solver is Z3 or Yices, see ``solvers.py``).  Because every shorter depth was
unsatisfiable first, the first model found is a *shortest* counterexample (``k + 1`` states,
like TLC's breadth-first traces), and each unsatisfiable depth proves that no trace of that
many steps violates an invariant.  Once depth ``k`` is refuted, ``Inv(sk)`` is asserted as a
(valid) lemma for the deeper queries.

Each step carries an integer selector that says which ``ActionInstance`` fired, so the trace
comes back labelled.

Symmetry breaking on labels (``symmetries``): for each given permutation π of the action
labels under which the system is symmetric, the sequence of labels must be lexicographically
no greater than its image under π (labels ordered as in ``actions()``).  While every step so
far took a label that π fixes, the next step may not take a label whose image comes earlier.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Generic

import z3

from isrlab.checker.z3.frames import ReachFrames
from isrlab.checker.z3.por import PartialOrder, left_movers
from isrlab.checker.z3.solvers import IncrementalSolver, open_solver
from isrlab.checker.z3.system import (
    ActionInstance,
    C,
    Frame,
    Fresh,
    SymbolicProperty,
    SymbolicSystem,
    Transition,
    make_frame,
)

ARITH_OPTIONS: dict[str, bool | int] = {"arith.solver": 2, "arith.propagate_eqs": False}
"""Z3 options for the bounded ``tla-*`` unrollings: the older simplex-based arithmetic solver
without equality propagation between arithmetic terms (docs/z3.md has the measurements)."""


@dataclass(frozen=True, slots=True)
class DepthOutcome:
    """What one depth's query said: ``sat`` (a violation), ``unsat`` or ``unknown``."""

    steps: int
    verdict: str
    seconds: float


@dataclass(frozen=True, slots=True)
class BmcResult(Generic[C]):
    """The outcome of ``bmc``: a shortest violating trace, or how deep absence was proved.

    ``trace`` starts with the initial state (label ``"Init"``); ``violated`` names the first
    invariant (in the system's order) that the trace's last state breaks.  ``proved_steps`` is
    the largest ``k`` such that no trace of ``k`` or fewer steps violates any invariant
    (``-1`` when not even the initial states were refuted).
    """

    system: str
    invariants: tuple[str, ...]
    trace: tuple[Transition[C], ...] | None
    violated: str | None
    proved_steps: int
    depths: tuple[DepthOutcome, ...] = field(default=())
    seconds: float = 0.0
    solver: str = ""

    @property
    def found(self) -> bool:
        """Whether a counterexample was found."""
        return self.trace is not None


@dataclass(slots=True)
class Unrolling(Generic[C]):
    """Frames ``s0 … sk`` of ``system`` asserted into ``solver``, with per-step selectors."""

    system: SymbolicSystem[C]
    solver: IncrementalSolver | z3.Solver
    tag: str = "u"
    first_step: Collection[str] | None = None
    symmetries: Sequence[Mapping[str, str]] = ()
    partial_order: PartialOrder | None = None
    factored: bool = True
    frames: list[Frame] = field(default_factory=list)
    selectors: list[z3.ArithRef] = field(default_factory=list)
    unbroken: list[z3.BoolRef] = field(default_factory=list)

    def start(self) -> Frame:
        """Create ``s0`` and assert ``Init(s0)``."""
        s0 = make_frame(self.system.signature(), 0, self.tag)
        self.frames = [s0]
        self.solver.add(self.system.init(s0))
        return s0

    def extend(self) -> Frame:
        """Create the next frame and assert one step of ``Next`` into it."""
        s = self.frames[-1]
        t = make_frame(self.system.signature(), len(self.frames), self.tag)
        selector = z3.Int(f"action@{self.tag}.{t.step}")
        fresh = Fresh(f"p@{self.tag}.{t.step}")
        restrict = self.first_step if t.step == 1 else None
        chosen = [(index, action) for index, action in enumerate(self.system.actions())
                  if restrict is None or action.label in restrict]
        if self.factored and all(action.factored is not None for _, action in chosen):
            self.solver.add(self._factored_step(s, t, selector, fresh, chosen))
        else:
            self.solver.add(z3.Or([z3.And(selector == index, action.relation(s, t, fresh))
                                   for index, action in chosen]))
        self._break_symmetries(selector, t.step)
        if self.partial_order is not None:
            for part in self.partial_order.step(selector, t.step):
                self.solver.add(part)
        self.frames.append(t)
        self.selectors.append(selector)
        return t

    @staticmethod
    def _factored_step(s: Frame, t: Frame, selector: z3.ArithRef, fresh: Fresh,
                       chosen: Sequence[tuple[int, ActionInstance]]) -> z3.BoolRef:
        """One step from the actions' ``factored`` forms: the selected action's ``U`` and, for
        each variable, ``t.v = s.v`` unless the selected action is one that may write ``v``.
        Equivalent to the disjunction of the full relations (the selector takes exactly one
        value), with each frame condition stated once per step instead of once per action."""
        writers: dict[str, list[int]] = {}
        disjuncts = []
        for index, action in chosen:
            assert action.factored is not None  # checked by the caller
            update, writes = action.factored(s, t, fresh)
            disjuncts.append(z3.And(selector == index, update))
            for name in writes:
                writers.setdefault(name, []).append(index)
        frame = [z3.Or(t[name] == s[name], *[selector == i for i in writers.get(name, ())])
                 for name in s]
        return z3.And(z3.Or(disjuncts), *frame)

    def _break_symmetries(self, selector: z3.ArithRef, step: int) -> None:
        """The lex-leader constraint of each permutation in ``symmetries`` for this step:
        while π fixed every earlier label (``unbroken``), this step's label is not one whose
        image under π comes earlier in ``actions()``."""
        labels = [a.label for a in self.system.actions()]
        index = {label: k for k, label in enumerate(labels)}
        if not self.unbroken:
            self.unbroken = [z3.BoolVal(True) for _ in self.symmetries]
        for p, perm in enumerate(self.symmetries):
            image = [index[perm.get(label, label)] for label in labels]
            later = [k for k in range(len(labels)) if image[k] < k]
            fixed = [k for k in range(len(labels)) if image[k] == k]
            still = z3.Bool(f"unbroken@{self.tag}.{p}.{step}")
            self.solver.add(z3.Implies(self.unbroken[p],
                                       z3.And([selector != k for k in later])))
            self.solver.add(still == z3.And(self.unbroken[p],
                                            z3.Or([selector == k for k in fixed])))
            self.unbroken[p] = still

    def trace(self, model: z3.ModelRef) -> tuple[Transition[C], ...]:
        """The labelled concrete trace that ``model`` assigns to the frames."""
        actions = self.system.actions()
        steps = [Transition("Init", self.system.decode(model, self.frames[0]))]
        for frame, selector in zip(self.frames[1:], self.selectors, strict=True):
            index = model.eval(selector, model_completion=True).as_long()
            steps.append(Transition(actions[index].label, self.system.decode(model, frame)))
        return tuple(steps)


def bmc(
    system: SymbolicSystem[C],
    invariants: Sequence[str] | None = None,
    depth: int = 10,
    timeout_ms: int = 0,
    logic: str | None = None,
    first_step: Collection[str] | None = None,
    options: Mapping[str, bool | int] | None = None,
    solver: str = "auto",
    symmetries: Sequence[Mapping[str, str]] = (),
    violation: Callable[[Frame], z3.BoolRef] | None = None,
    frame_constants: Sequence[int] | None = None,
    partial_order: bool = False,
    on_depth: Callable[[DepthOutcome], None] | None = None,
    factored: bool = True,
) -> BmcResult[C]:
    """Search for a shortest trace of at most ``depth`` steps that violates an invariant.

    ``invariants`` selects invariants by name (all of them when ``None``).  With ``timeout_ms``
    each depth's query is bounded; an ``unknown`` verdict stops the deepening.  ``logic``
    (e.g. ``"QF_LIA"`` for a quantifier-free bounded system) picks a specialised Z3 solver.

    ``first_step`` is symmetry breaking: it restricts the first step to the actions with these
    labels.  It is sound only if every trace has a symmetric image (same length, same
    invariant verdicts) whose first step is one of them — the caller's claim to make.
    ``symmetries`` are label permutations for the lex-leader constraint (module docstring):
    sound when each is induced by a renaming under which Init, Next and the invariants are
    symmetric and which fixes every label of ``first_step`` — again the caller's claim.
    ``violation`` replaces "some chosen invariant fails" in each depth's query by a stronger
    predicate of the last state (symmetry breaking on the violation): sound only if every
    violating trace has an image of the same length whose last state satisfies it, and it
    implies that a chosen invariant fails — the caller's claim; it does not combine with
    symmetry breaking on the steps unless the caller argues that too.

    ``options`` are Z3 solver parameters (e.g. ``ARITH_OPTIONS``): they change how fast the
    answer comes, never the answer.  ``solver`` (``solvers.SOLVERS``) picks who answers the
    queries: ``auto`` is Yices for ``QF_LIA`` when ``yices-smt2`` is installed and Z3
    otherwise; the result's ``solver`` names the one used.

    ``frame_constants`` turns on the forward frame lemmas of ``frames.py``: each frame ``k``
    of the unrolling also carries ``F_k``, the candidate bounds (against these constants) and
    orderings that Houdini proved of every state reachable in ``k`` steps.  Like ``options``
    they change how fast the answer comes, never the answer.

    ``partial_order`` keeps each trace only in its lexicographic normal form under the
    commutation of independent steps (``por.py``, where the footprints are derived from the
    relations and the soundness is argued, with the symmetry breaking above): it changes
    how fast the answer comes, never the answer.

    ``factored`` (the default) unrolls a step from the actions' ``factored`` forms when every
    action has one (``Unrolling._factored_step``: each variable's frame condition once per
    step); ``False`` always uses the full relations.  Both formulas are equivalent: it changes
    how fast the answer comes, never the answer.

    ``on_depth`` is called with each depth's outcome as soon as the solver has answered
    (progress reports, per-depth measurements).
    """
    chosen = [p for p in system.invariants() if invariants is None or p.name in invariants]
    missing = set(invariants or ()) - {p.name for p in chosen}
    if missing:
        raise ValueError(f"system {system.name!r} has no invariant(s) {sorted(missing)}")
    backend = open_solver(solver, logic, options, timeout_ms)
    try:
        order = PartialOrder(left_movers(system)) if partial_order else None
        unrolling = Unrolling(system, backend, first_step=first_step, symmetries=symmetries,
                              partial_order=order, factored=factored)
        frames = None if frame_constants is None else ReachFrames(
            system, lambda s: z3.And([p.holds(s) for p in chosen]), frame_constants)
        return _deepen(system, chosen, depth, unrolling, backend, violation, frames, on_depth)
    finally:
        backend.close()


def _deepen(system: SymbolicSystem[C], chosen: Sequence[SymbolicProperty], depth: int,
            unrolling: Unrolling[C], solver: IncrementalSolver,
            violation: Callable[[Frame], z3.BoolRef] | None = None,
            frames: ReachFrames[C] | None = None,
            on_depth: Callable[[DepthOutcome], None] | None = None) -> BmcResult[C]:
    """``bmc``'s loop: one more step per depth, each depth's negated invariants in a scope."""
    names = tuple(p.name for p in chosen)
    frame = unrolling.start()
    outcomes: list[DepthOutcome] = []
    begin = time.perf_counter()

    def result(trace: tuple[Transition[C], ...] | None, violated: str | None,
               proved: int) -> BmcResult[C]:
        return BmcResult(system.name, names, trace, violated, proved, tuple(outcomes),
                         time.perf_counter() - begin, solver.name)

    for k in range(depth + 1):
        if k > 0:
            frame = unrolling.extend()
        if frames is not None:
            solver.add(frames.lemma(k, frame))
        holds = [p.holds(frame) for p in chosen]
        solver.push()
        solver.add(z3.Not(z3.And(holds)) if violation is None else violation(frame))
        started = time.perf_counter()
        verdict = solver.check()
        outcomes.append(DepthOutcome(k, str(verdict), time.perf_counter() - started))
        if on_depth is not None:
            on_depth(outcomes[-1])
        if verdict == z3.sat:
            model = solver.model()
            violated = next((
                p.name
                for p, h in zip(chosen, holds, strict=True)
                if z3.is_false(model.eval(h, model_completion=True))
            ), names[0])
            return result(unrolling.trace(model), violated, k - 1)
        if verdict != z3.unsat:  # a solver that gave up may be stopped: no pop
            return result(None, None, k - 1)
        solver.pop()
        solver.add(z3.And(holds))
    return result(None, None, depth)
