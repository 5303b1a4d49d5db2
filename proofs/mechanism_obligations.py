"""Obligations of KIP-497's maximal ISR and KIP-966's ELR (``kafka-core`` groups).

Systems from ``isrlab.spec.symbolic.core_mechanisms`` (unbounded Int offsets).  Each group
states a candidate inductive invariant (the target and its supporting conjuncts) and
records IndInit / IndNext per conjunct and action, plus a bounded search (BMC) for the
shortest trace from Init to a state breaking the target:

* ``async-isr-maximal`` -- Kafka's rule (HW over the maximal ISR): expected proved;
* ``async-isr-committed`` -- HW over the committed ISR only: expected refuted, with a
  reachable trace (a follower the controller already took into the ISR is below the HW);
* ``elr`` -- ELR with KIP-966's HW rule: "every replica a clean election may pick (ISR ∪
  ELR) holds the HW" expected proved;
* ``no-elr`` -- without ELR (the fenced last ISR member stays in the ISR and restarts with
  its unflushed tail lost): expected refuted, with a trace;
* ``elr-ungated`` -- ELR without the HW rule: expected refuted, with a trace.
"""

from __future__ import annotations

import time
from collections.abc import Callable

import z3

from isrlab.proofs.group import Group, Row
from isrlab.spec.symbolic.core_mechanisms import System, async_isr_system, elr_system

CORE_MODEL = "kafka-core"
BMC_DEPTH = 5


def _status(result: z3.CheckSatResult) -> str:
    if result == z3.unsat:
        return "proved"
    return "refuted" if result == z3.sat else "unknown"


def _solver(timeout_ms: int) -> z3.Solver:
    solver = z3.Solver()
    solver.set("timeout", timeout_ms)
    return solver


def induction_rows(system: System, timeout_ms: int) -> list[Row]:
    """IndInit and IndNext of every invariant of ``system``, per action."""
    rows = []
    s, t = system.frame("s"), system.frame("t")
    for name, inv in system.invariants:
        solver = _solver(timeout_ms)
        solver.add(system.init(s), z3.Not(inv(s)))
        start = time.perf_counter()
        result = solver.check()
        detail = system.show(solver.model(), s) if result == z3.sat else ""
        rows.append(Row("IndInit", name, "Init", _status(result),
                        round(time.perf_counter() - start, 3), detail))
    for action_name, action in system.actions:
        for name, inv in system.invariants:
            solver = _solver(timeout_ms)
            solver.add(*[i(s) for _, i in system.invariants], action(s, t), z3.Not(inv(t)))
            start = time.perf_counter()
            result = solver.check()
            detail = ""
            if result == z3.sat:
                model = solver.model()
                detail = f"from: {system.show(model, s)}  to: {system.show(model, t)}"
            rows.append(Row("IndNext", name, action_name, _status(result),
                            round(time.perf_counter() - start, 3), detail))
    return rows


def shortest_violation(system: System, depth: int, timeout_ms: int
                       ) -> tuple[int, list[str]] | None:
    """The shortest trace (length ≤ ``depth``) from Init to a state breaking the target:
    its length and its action names, or ``None`` when there is none that short."""
    target = system.invariant(system.target)
    frames = [system.frame("0")]
    solver = _solver(timeout_ms)
    solver.add(system.init(frames[0]))
    choices: list[list[z3.BoolRef]] = []
    for k in range(depth + 1):
        solver.push()
        solver.add(z3.Not(target(frames[k])))
        if solver.check() == z3.sat:
            return k, _first_trace(solver, system, choices)
        solver.pop()
        frames.append(system.frame(str(k + 1)))
        step = [z3.Bool(f"take@{k}.{n}") for n, _ in system.actions]
        solver.add(*[z3.Implies(c, a(frames[k], frames[k + 1]))
                     for c, (_, a) in zip(step, system.actions, strict=True)], z3.Or(*step))
        choices.append(step)
    return None


def _first_trace(solver: z3.Solver, system: System, choices: list[list[z3.BoolRef]]
                 ) -> list[str]:
    """The violating trace whose action names come first in catalogue order, step by step
    (so the recorded trace does not depend on Z3's model choice)."""
    fixed: list[z3.BoolRef] = []
    names = []
    for step in choices:
        for (name, _), take in zip(system.actions, step, strict=True):
            if solver.check(*fixed, take) == z3.sat:
                fixed.append(take)
                names.append(name)
                break
    return names


def bmc_row(system: System, timeout_ms: int) -> Row:
    """The BMC row: ``violated`` with the trace, or ``holds`` up to ``BMC_DEPTH`` steps."""
    start = time.perf_counter()
    found = shortest_violation(system, BMC_DEPTH, timeout_ms)
    seconds = round(time.perf_counter() - start, 3)
    if found is None:
        return Row("BMC", system.target, f"depth ≤ {BMC_DEPTH}", "holds", seconds)
    length, names = found
    return Row("BMC", system.target, f"depth ≤ {BMC_DEPTH}", "violated", seconds,
               f"{length} steps: " + " → ".join(names))


def _formulas(make: Callable[[], System]) -> Callable[[Group], list[z3.ExprRef]]:
    def formulas(group: Group) -> list[z3.ExprRef]:
        system = make()
        s, t = system.frame("s"), system.frame("t")
        out: list[z3.ExprRef] = [system.init(s)]
        out += [a(s, t) for _, a in system.actions]
        return out + [i(s) for _, i in system.invariants]
    return formulas


def system_group(key: str, make: Callable[[], System], replicas: int, title: str) -> Group:
    """A ``kafka-core`` group over one ``System``: its induction rows and one BMC row."""
    def run(group: Group, timeout_ms: int) -> tuple[Row, ...]:
        system = make()
        return (*induction_rows(system, timeout_ms), bmc_row(system, timeout_ms))

    return Group(CORE_MODEL, key, replicas, title, run, _formulas(make))


def mechanism_groups() -> list[Group]:
    """The KIP-497 and KIP-966 groups, in a fixed order."""
    return [
        system_group("async-isr-maximal", lambda: async_isr_system(3, maximal=True), 3,
               "KIP-497 (2.7+): with the HW over the maximal ISR (committed ∪ pending "
               "addition), every member of the controller's ISR has LEO ≥ HW"),
        system_group("async-isr-committed", lambda: async_isr_system(3, maximal=False), 3,
               "KIP-497 with the HW over the committed ISR only: the controller may count a "
               "follower whose LEO is below the HW (expected refuted)"),
        system_group("elr", lambda: elr_system(3, enabled=True, gated=True), 3,
               "KIP-966 (3.7+/4.0): with ELR and the HW moving only at ≥ min.insync.replicas, "
               "every replica a clean election may pick (ISR ∪ ELR) has LEO ≥ HW"),
        system_group("no-elr", lambda: elr_system(3, enabled=False, gated=False), 3,
               "Before KIP-966: the fenced last ISR member stays in the ISR; after an "
               "unclean restart it is electable without the HW (expected refuted)"),
        system_group("elr-ungated", lambda: elr_system(3, enabled=True, gated=False), 3,
               "ELR without KIP-966's HW rule: an ELR member may lag a HW the shrunken ISR "
               "advanced (expected refuted)"),
    ]
