"""Proof obligations of the ``core`` functions the ``kafka`` model calls (``kafka-core``).

The system is ``isrlab.spec.symbolic.core_system.CoreKafkaSystem`` (3 replicas; offsets, epochs,
record ids, times unbounded; every argument of every function existential).  Groups:

* ``structural`` — the per-state invariants of the system (HW ≤ LEO with the log start
  below, leader ∈ ISR so the ISR is non-empty, remote LEOs ≥ -1, a non-leader tracks no
  remotes, ZooKeeper's leader ∈ its ISR, type bounds) proved inductive together: IndInit
  and IndNext for every function;
* ``epochs`` — "epochs never decrease" (the broker's leader and controller epochs,
  ZooKeeper's leader epoch) for every function, under the structural invariants.  Expected
  and recorded: refuted for the bare ``make_leader`` / ``make_follower`` (they adopt any
  request: the fencing is ``become_leader_or_follower``'s), proved with the fencing;
* ``pair`` — ``isrlab.spec.symbolic.core_pair.PairSystem``: a leader and follower 1's log within
  one tenure; the follower's log is a prefix of the leader's, its HW is at most the
  leader's, and an ISR follower holds every committed record — inductive together;
* ``hw-monotone`` — "the HW never decreases" per function.  Expected and recorded:
  refuted where core lowers it on purpose — a follower's leader-epoch truncation
  (KIP-101/279) below its HW, and ``process_partition_data`` (HW := min(leader HW, LEO), as
  the old fetcher did); the CTIs say which inputs do it;
* ``async-isr-*``, ``elr``, ``no-elr``, ``elr-ungated`` — KIP-497's maximal ISR and
  KIP-966's ELR (``isrlab.proofs.mechanism_obligations``): proved for Kafka's rules, refuted with
  the shortest trace for the committed-ISR rule, no ELR, and ELR without the HW gate.
"""

from __future__ import annotations

from collections.abc import Sequence

import z3

from isrlab.checker.z3 import (
    Fresh,
    Outcome,
    StepProperty,
    families,
    family_relation,
    make_frame,
    step_obligation,
)
from isrlab.proofs.group import Group, Row, inductive_rows, outcome_row
from isrlab.proofs.kraft_obligations import kraft_groups
from isrlab.proofs.mechanism_obligations import mechanism_groups
from isrlab.proofs.stale_leo_obligations import stale_leo_groups
from isrlab.spec.symbolic.core_pair import PairSystem
from isrlab.spec.symbolic.core_system import CoreKafkaSystem, CoreState, describe

CORE_MODEL = "kafka-core"
REPLICAS = 3


def _system(group: Group) -> CoreKafkaSystem:
    return CoreKafkaSystem(group.replicas)


def _row(outcome: Outcome[CoreState], kind: str) -> Row:
    return outcome_row(outcome, kind, describe)


def _formulas(system: CoreKafkaSystem, steps: Sequence[StepProperty]) -> list[z3.ExprRef]:
    s = make_frame(system.signature(), 0, "d")
    t = make_frame(system.signature(), 1, "d")
    out: list[z3.ExprRef] = [system.init(s)]
    out += [family_relation(system, fam, s, t, Fresh(f"p@{fam}")) for fam in families(system)]
    out += [p.holds(s) for p in system.invariants()]
    out += [p.holds(s, t) for p in steps]
    return out


def _structural_rows(group: Group, timeout_ms: int) -> tuple[Row, ...]:
    system = _system(group)
    return inductive_rows(system, system.invariants(), timeout_ms, system.magnitudes, describe)


def _pair_rows(group: Group, timeout_ms: int) -> tuple[Row, ...]:
    system = PairSystem(group.replicas)
    return inductive_rows(system, system.invariants(), timeout_ms, system.magnitudes, str)


def _pair_formulas(group: Group) -> list[z3.ExprRef]:
    system = PairSystem(group.replicas)
    s = make_frame(system.signature(), 0, "d")
    t = make_frame(system.signature(), 1, "d")
    out: list[z3.ExprRef] = [system.init(s)]
    out += [family_relation(system, fam, s, t, Fresh(f"p@{fam}")) for fam in families(system)]
    return out + [p.holds(s) for p in system.invariants()]


def _step(name: str) -> StepProperty:
    return next(p for p in CoreKafkaSystem(REPLICAS).step_properties() if p.name == name)


def core_groups() -> list[Group]:
    """The ``kafka-core`` groups, in a fixed order."""
    def structural_formulas(g: Group) -> list[z3.ExprRef]:
        return _formulas(_system(g), [])

    def step_group(key: str, name: str, title: str) -> Group:
        def formulas(g: Group) -> list[z3.ExprRef]:
            return _formulas(_system(g), [_step(name)])

        def run(g: Group, timeout_ms: int) -> tuple[Row, ...]:
            system = _system(g)
            prop = next(p for p in system.step_properties() if p.name == name)
            return tuple(_row(step_obligation(system, prop, system.invariants(), fam,
                                              timeout_ms, system.magnitudes), "Step")
                         for fam in families(system))

        return Group(CORE_MODEL, key, REPLICAS, title, run, formulas)

    def conditional_formulas(g: Group) -> list[z3.ExprRef]:
        system = CoreKafkaSystem(g.replicas, leader_holds_committed_prefix=True)
        s = make_frame(system.signature(), 0, "d")
        return [*_formulas(system, [_step("HwNeverDecreases")]),
                system.log_epochs_sorted().holds(s)]

    def conditional_rows(g: Group, timeout_ms: int) -> tuple[Row, ...]:
        system = CoreKafkaSystem(g.replicas, leader_holds_committed_prefix=True)
        prop = next(p for p in system.step_properties() if p.name == "HwNeverDecreases")
        hypotheses = [*system.invariants(), system.log_epochs_sorted()]
        return tuple(_row(step_obligation(system, prop, hypotheses, fam, timeout_ms,
                                          system.magnitudes), "Step")
                     for fam in families(system) if "Follower[" in fam)

    return [
        Group(CORE_MODEL, "structural", REPLICAS,
              "core's functions (broker 0's partition, ZooKeeper's LeaderAndIsr): the "
              "per-state invariants, inductive together", _structural_rows,
              structural_formulas),
        step_group("epochs", "EpochsNeverDecrease",
                   "Epochs never decrease, per core function (under the structural "
                   "invariants); the bare make_leader/make_follower trust their caller's "
                   "fencing"),
        step_group("hw-monotone", "HwNeverDecreases",
                   "The broker's HW never decreases, per core function (under the structural "
                   "invariants); follower truncation and fetch lower it by design"),
        Group(CORE_MODEL, "pair", REPLICAS,
              "A leader and follower 1's log within one tenure (the kafka model's atomic "
              "fetch and the leader's steps): prefix, HW and committed-on-ISR invariants, "
              "inductive together", _pair_rows, _pair_formulas),
        Group(CORE_MODEL, "hw-monotone-given-prefix", REPLICAS,
              "The HW never decreases on a follower's truncation, assuming the leader's log "
              "holds the follower's records below its HW and the follower's record epochs "
              "are sorted (cross-broker facts, assumed not proved here)",
              conditional_rows, conditional_formulas),
        *mechanism_groups(),
        *kraft_groups(),
        *stale_leo_groups(),
    ]
