"""Proof obligations of ``tla-async-isr`` (module AsyncIsr): ValidHighWatermark by induction.

The system is ``isrlab.spec.symbolic.async_isr.AsyncIsrSystem`` unbounded (3 replicas; offsets and
versions unbounded integers, the message sets arrays).  Groups:

* ``valid-hw-maximal`` — ValidHighWatermark with the high watermark over ``isr ∪
  pendingIsr`` (the module as written), proved inductive together with its strengthening
  (``AsyncIsrSystem.lemmas``): the controller's ISR lies within the leader's maximal ISR,
  since the controller accepts only a request made at its own version, which is then the
  leader's version, and the leader keeps every ISR it asked for at that version pending;
* ``valid-hw-current`` — the same conjunction with the high watermark over ``isr`` alone
  (message versions 0..3, see ``CTI_VERSIONS``): expected and recorded refuted, the
  counterexample to induction shown as a state pair.
"""

from __future__ import annotations

from typing import Any

import z3

from isrlab.checker.z3 import Fresh, families, family_relation, make_frame
from isrlab.proofs.group import Group, Row, inductive_rows
from isrlab.spec.symbolic.async_isr import AsyncIsrSystem

MODEL = "tla-async-isr"
REPLICAS = 3


CTI_VERSIONS = 3
"""For the refutation: messages of versions 0..3 only.  With the message sets as arrays the
lemmas are quantified over versions, and Z3 finds no model (a CTI) for them within minutes;
with finitely many message versions they are quantifier-free, and a CTI found there is a CTI
of the unbounded system (its states are states of it, its step a step of it)."""


def _system(maximal: bool) -> AsyncIsrSystem:
    if maximal:
        return AsyncIsrSystem(REPLICAS, True)
    return AsyncIsrSystem(REPLICAS, False, message_versions=CTI_VERSIONS)


def _conjuncts(system: AsyncIsrSystem) -> list[Any]:
    return [*system.lemmas(), *system.invariants()]


def describe(state: tuple[int, ...]) -> str:
    """One line per state: controller, leader (ISR, version, pending), offsets, messages."""
    n, width = REPLICAS, 1 << REPLICAS

    def isr(mask: int) -> str:
        return "{" + ",".join(f"r{j + 1}" for j in range(n) if mask >> j & 1) + "}"

    def msgs(bits: int) -> str:
        found, k = [], 0
        while bits:
            if bits & 1:
                found.append(f"{isr(k % width)}@v{k // width}")
            bits >>= 1
            k += 1
        return "[" + " ".join(found) + "]"

    c_isr, c_ver, l_isr, l_ver, p_isr, p_ver = state[:6]
    offsets = " ".join(f"r{j + 1}={state[6 + j]}" for j in range(n))
    return (f"controller isr {isr(c_isr)} v{c_ver}; leader isr {isr(l_isr)} v{l_ver} "
            f"pending {isr(p_isr)} v{p_ver}; offsets {offsets}; "
            f"requests {msgs(state[6 + n])}; updates {msgs(state[7 + n])}")


def _formulas(system: AsyncIsrSystem) -> list[z3.ExprRef]:
    s = make_frame(system.signature(), 0, "d")
    t = make_frame(system.signature(), 1, "d")
    out: list[z3.ExprRef] = [system.init(s)]
    out += [family_relation(system, fam, s, t, Fresh(f"p@{fam}")) for fam in families(system)]
    return out + [p.holds(s) for p in _conjuncts(system)]


def async_isr_groups() -> list[Group]:
    """The ``tla-async-isr`` groups, in a fixed order."""
    def group(maximal: bool) -> Group:
        key = "valid-hw-maximal" if maximal else "valid-hw-current"
        title = ("ValidHighWatermark, HW over isr ∪ pendingIsr (the module), with the "
                 "strengthening lemmas, inductive together" if maximal else
                 "ValidHighWatermark, HW over isr only, with the same lemmas (message "
                 "versions 0..3): the counterexample to induction")

        def run(g: Group, timeout_ms: int) -> tuple[Row, ...]:
            system = _system(maximal)
            return inductive_rows(system, _conjuncts(system), timeout_ms, system.magnitudes,
                                  describe)

        return Group(MODEL, key, REPLICAS, title, run, lambda g: _formulas(_system(maximal)))

    return [group(True), group(False)]
