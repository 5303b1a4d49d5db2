"""The proof obligations of the ``tla-*`` models, their runner and their recorded outcomes.

For every model the catalogue holds these *groups* of obligations (Apalache's IndInit and
IndNext, one IndNext per action family and conjunct):

* ``structural`` — the structural lemmas of ``isrlab.proofs.lemmas`` (HW ≤ LEO, LeaderInIsr,
  a presumed leader is in its own ISR, every request's leader is in its ISR, …) proved
  inductive together, for 3 replicas and unbounded offsets, epochs and record ids;
* ``epochs`` — "epochs never decrease" (a step property) under the structural lemmas;
* ``weak-isr`` / ``strong-isr`` — the specification's invariant, relative to the structural
  lemmas, for 2 replicas: is it inductive as it stands?  (It is not, for any variant: the
  counterexamples to induction are recorded);
* ``strengthened`` (KIP-320 only) — StrongIsr and WeakIsr with the strengthening lemmas,
  proved inductive together for 2 replicas;
* ``strengthening-fails`` (the buggy variants) — bounded model checking of the same
  conjunction in configuration A: the shortest real trace that breaks one of its conjuncts,
  then the next one once that conjunct is set aside (three rounds, at most 8 steps),
  each trace replayed through the explicit model.

``run`` discharges a group; ``proofs/results.json`` records every outcome with a digest of the
group's inputs (the S-expressions of its formulas), and ``proofs/RESULTS.md`` is rendered from
it.  ``isrlab prove`` re-runs and flags regressions, writing to a directory of its own;
``isrlab prove --update`` merges the run into the recorded files and re-renders them.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import z3

from isrlab.checker.z3 import (
    PROVED,
    Fresh,
    Outcome,
    StepProperty,
    SymbolicProperty,
    bmc,
    families,
    family_relation,
    ind_init,
    ind_next,
    invariant_named,
    make_frame,
    step_obligation,
)
from isrlab.proofs import async_isr_obligations, lemmas
from isrlab.proofs.core_obligations import CORE_MODEL, core_groups
from isrlab.proofs.group import Group, GroupResult, Row, inductive_rows, outcome_row
from isrlab.spec.symbolic.bridge import replay
from isrlab.spec.symbolic.state import KState, describe
from isrlab.spec.symbolic.tla import Bounds, TlaSystem
from isrlab.spec.tla.model import TlaModel
from isrlab.spec.variants import of_base

__all__ = [
    "BUGGY", "MODELS", "OWN_GROUPS", "PROVE_MODELS", "RESULTS_JSON", "RESULTS_MD", "Group",
    "GroupResult", "Row", "groups", "inductive_rows", "load", "merge", "outcome_row",
    "regressions", "render", "run_all", "save",
]

HERE = Path(__file__).resolve().parent
RESULTS_JSON = HERE / "results.json"
RESULTS_MD = HERE / "RESULTS.md"

MODELS = {v.name: v.key for v in of_base().values() if v.proofs is not None}
"""The ``tla-*`` models with the KafkaReplication proof groups (from ``isrlab.spec.variants``)."""
BUGGY = tuple(v.name for v in of_base().values() if v.proofs == "strengthening-fails")
OWN_GROUPS: dict[str, Callable[[], list[Group]]] = {
    async_isr_obligations.MODEL: async_isr_obligations.async_isr_groups,
}
"""The variants that are modules of their own (``tla-async-isr``), with their own groups."""
PROVE_MODELS = (*MODELS, *OWN_GROUPS, CORE_MODEL)
"""Every model with obligations: the ``tla-*`` models and ``kafka-core`` (core's functions,
``isrlab.proofs.core_obligations``)."""

STRENGTHENING: tuple[Callable[[TlaSystem], SymbolicProperty], ...] = (
    lemmas.replica_follows_its_request,
    lemmas.record_ids_below_next,
    lemmas.record_epochs_within_replica_epoch,
    lemmas.log_epochs_monotone,
    lemmas.log_matching,
    lemmas.follower_log_is_leader_prefix,
    lemmas.follower_epoch_within_leader_epoch,
    lemmas.true_leader_isr_is_quorum_isr,
    lemmas.stale_leader_covers_or_blocked,
    lemmas.later_request_isr_within_leader_isr_or_blocked,
    lemmas.pending_request_covers_or_superseded,
    lemmas.pending_request_isr_has_leader_committed,
    lemmas.committed_on_quorum_isr,
)
CONFIG_A = Bounds(log_size=2, max_records=2, max_leader_epoch=2)
BMC_DEPTH = 8
BMC_ROUNDS = 3


def _system(group: Group, bounds: Bounds | None = None) -> TlaSystem:
    """The symbolic model a ``tla-*`` group speaks about."""
    return TlaSystem(MODELS[group.model], group.replicas, bounds)


def _conjunction(system: TlaSystem, with_strengthening: bool) -> list[SymbolicProperty]:
    props = lemmas.structural(system)
    if with_strengthening:
        props += [make(system) for make in STRENGTHENING]
        props += [invariant_named(system, "StrongIsr"), invariant_named(system, "WeakIsr")]
    return props


# ---------------------------------------------------------------- formulas (for digests)


def _transition_formulas(system: TlaSystem) -> list[z3.ExprRef]:
    s = make_frame(system.signature(), 0, "d")
    t = make_frame(system.signature(), 1, "d")
    out: list[z3.ExprRef] = [system.init(s)]
    out += [family_relation(system, fam, s, t, Fresh(f"p@{fam}")) for fam in families(system)]
    return out


def _property_formulas(system: TlaSystem, props: Sequence[SymbolicProperty]) -> list[z3.ExprRef]:
    s = make_frame(system.signature(), 0, "d")
    return [p.holds(s) for p in props]


# ---------------------------------------------------------------- rows


def _row(outcome: Outcome[KState], kind: str) -> Row:
    return outcome_row(outcome, kind, describe)


def _inductive_rows(system: TlaSystem, conjuncts: Sequence[SymbolicProperty],
                    timeout_ms: int) -> tuple[Row, ...]:
    return inductive_rows(system, conjuncts, timeout_ms, system.magnitudes, describe)


def _relative_rows(system: TlaSystem, target: SymbolicProperty, timeout_ms: int
                   ) -> tuple[Row, ...]:
    hypotheses = [*lemmas.structural(system), target]
    rows = [_row(ind_init(system, target, timeout_ms, system.magnitudes), "IndInit")]
    rows += [_row(ind_next(system, target, hypotheses, fam, timeout_ms, system.magnitudes),
                  "IndNext") for fam in families(system)]
    return tuple(rows)


def _step_rows(system: TlaSystem, prop: StepProperty, timeout_ms: int) -> tuple[Row, ...]:
    hypotheses = lemmas.structural(system)
    return tuple(_row(step_obligation(system, prop, hypotheses, fam, timeout_ms,
                                      system.magnitudes), "Step")
                 for fam in families(system))


@dataclass(frozen=True)
class _Checked:
    """A bounded system whose invariants are a chosen list of properties (for BMC)."""

    base: TlaSystem
    props: tuple[SymbolicProperty, ...]

    @property
    def name(self) -> str:
        return self.base.name

    def signature(self) -> Sequence[tuple[str, z3.SortRef]]:
        return self.base.signature()

    def init(self, s: Any) -> z3.BoolRef:
        return self.base.init(s)

    def actions(self) -> Any:
        return self.base.actions()

    def invariants(self) -> Sequence[SymbolicProperty]:
        return self.props

    def decode(self, model: z3.ModelRef, s: Any) -> KState:
        return self.base.decode(model, s)

    def pin(self, s: Any, state: KState) -> z3.BoolRef:
        return self.base.pin(s, state)


def _explicit_labels(model: str, system: TlaSystem, trace: Sequence[Any]) -> list[str]:
    """The explicit model's labels along a symbolic trace: replaying it proves the trace is a
    real behaviour of the executable model (``DriftError`` otherwise)."""
    assert system.bounds is not None
    b = system.bounds
    explicit = TlaModel(of_base()[model], system.replicas, b.log_size, b.max_records,
                        b.max_leader_epoch)
    return [step.action for step in replay(explicit, trace, system.replicas)[1:]]


def _bmc_rows(model: str, system: TlaSystem) -> tuple[Row, ...]:
    """Shortest real traces breaking the strengthened conjunction (no time limit: the
    bounded queries up to ``BMC_DEPTH`` steps are cheap), replayed through the explicit
    model."""
    props = _conjunction(system, with_strengthening=True)
    rows = []
    for _ in range(BMC_ROUNDS):
        started = time.perf_counter()
        # Z3, as when the outcomes were recorded: another solver may name another lemma first.
        result = bmc(_Checked(system, tuple(props)), None, BMC_DEPTH, 0, logic="QF_LIA",
                     solver="z3")
        seconds = round(time.perf_counter() - started, 3)
        if result.trace is None:
            complete = result.proved_steps >= BMC_DEPTH
            rows.append(Row("BMC", "(the rest)", f"≤ {result.proved_steps} steps",
                            "holds" if complete else "unknown", seconds,
                            f"no violation of the remaining {len(props)} conjuncts"))
            break
        labels = " → ".join(_explicit_labels(model, system, result.trace))
        rows.append(Row("BMC", result.violated or "?", f"{len(result.trace)} states",
                        "violated", seconds, f"{labels}; last state: "
                        f"{describe(result.trace[-1].state)}"))
        props = [p for p in props if p.name != result.violated]
    return tuple(rows)


# ---------------------------------------------------------------- catalogue


def _structural_group(model: str) -> Group:
    return Group(
        model, "structural", 3, "Structural lemmas, inductive together",
        lambda g, tmo: _inductive_rows(_system(g), lemmas.structural(_system(g)), tmo),
        lambda g: _transition_formulas(_system(g))
        + _property_formulas(_system(g), lemmas.structural(_system(g))),
    )


def _epochs_group(model: str) -> Group:
    def formulas(g: Group) -> list[z3.ExprRef]:
        system = _system(g)
        s = make_frame(system.signature(), 0, "d")
        t = make_frame(system.signature(), 1, "d")
        return [*_transition_formulas(system), lemmas.epochs_never_decrease(system).holds(s, t)]

    return Group(
        model, "epochs", 3, "Epochs never decrease (step property, under the structural lemmas)",
        lambda g, tmo: _step_rows(_system(g), lemmas.epochs_never_decrease(_system(g)), tmo),
        formulas,
    )


def _relative_group(model: str, invariant: str) -> Group:
    key = "weak-isr" if invariant == "WeakIsr" else "strong-isr"
    return Group(
        model, key, 2, f"{invariant} relative to the structural lemmas (is it inductive alone?)",
        lambda g, tmo: _relative_rows(_system(g), invariant_named(_system(g), invariant), tmo),
        lambda g: _transition_formulas(_system(g)) + _property_formulas(
            _system(g), [*lemmas.structural(_system(g)), invariant_named(_system(g), invariant)]),
    )


def _strengthened_group(model: str) -> Group:
    return Group(
        model, "strengthened", 2, "StrongIsr and WeakIsr with the strengthening lemmas",
        lambda g, tmo: _inductive_rows(_system(g), _conjunction(_system(g), True), tmo),
        lambda g: _transition_formulas(_system(g))
        + _property_formulas(_system(g), _conjunction(_system(g), True)),
    )


def _strengthening_fails_group(model: str) -> Group:
    return Group(
        model, "strengthening-fails", 2,
        "The KIP-320 strengthening on this variant: shortest real traces breaking it "
        "(configuration A, bounded model checking)",
        lambda g, tmo: _bmc_rows(g.model, _system(g, CONFIG_A)),
        lambda g: _transition_formulas(_system(g, CONFIG_A))
        + _property_formulas(_system(g, CONFIG_A), _conjunction(_system(g, CONFIG_A), True)),
    )


def groups(model: str | None = None) -> list[Group]:
    """The catalogue, for one model or all of them (``PROVE_MODELS``), in a fixed order."""
    out = []
    for name in MODELS:
        if model is not None and name != model:
            continue
        out += [_structural_group(name), _epochs_group(name),
                _relative_group(name, "WeakIsr"), _relative_group(name, "StrongIsr")]
        if name in BUGGY:
            out.append(_strengthening_fails_group(name))
        else:
            out.append(_strengthened_group(name))
    for name, make in OWN_GROUPS.items():
        if model is None or model == name:
            out += make()
    if model is None or model == CORE_MODEL:
        out += core_groups()
    return out


# ---------------------------------------------------------------- recording


def load(path: Path = RESULTS_JSON) -> list[GroupResult]:
    """The recorded results (empty when none were recorded)."""
    if not path.exists():
        return []
    data = json.loads(path.read_text(encoding="utf-8"))
    return [GroupResult.from_json(g) for g in data["groups"]]


def merge(old: Sequence[GroupResult], new: Sequence[GroupResult]) -> list[GroupResult]:
    """``old`` with every group re-run in ``new`` replaced, in catalogue order."""
    by_key = {(g.model, g.group): g for g in old}
    by_key.update({(g.model, g.group): g for g in new})
    order = {(g.model, g.key): i for i, g in enumerate(groups())}
    return sorted(by_key.values(), key=lambda g: order.get((g.model, g.group), len(order)))


def regressions(old: Sequence[GroupResult], new: Sequence[GroupResult]) -> list[str]:
    """Obligations recorded as proved in ``old`` that ``new`` no longer proves."""
    before = {(g.model, g.group, r.kind, r.target, r.action): r.status
              for g in old for r in g.rows}
    lost = []
    for g in new:
        for r in g.rows:
            key = (g.model, g.group, r.kind, r.target, r.action)
            if before.get(key) == PROVED and r.status != PROVED:
                lost.append(f"{g.model} {g.group}: {r.kind} {r.target} / {r.action} "
                            f"is now {r.status}")
    return lost


def save(results: Sequence[GroupResult], json_path: Path = RESULTS_JSON,
         md_path: Path = RESULTS_MD) -> None:
    """Write ``results.json`` and the rendered ``RESULTS.md``."""
    data = {"z3": z3.get_version_string(), "groups": [g.to_json() for g in results]}
    json_path.write_text(json.dumps(data, indent=1, ensure_ascii=False) + "\n",
                         encoding="utf-8")
    md_path.write_text(render(results), encoding="utf-8")


def _summary(group: GroupResult) -> str:
    counts: dict[str, int] = {}
    for r in group.rows:
        counts[r.status] = counts.get(r.status, 0) + 1
    return ", ".join(f"{n} {status}" for status, n in sorted(counts.items()))


def render(results: Sequence[GroupResult]) -> str:
    """``RESULTS.md``: a summary table, then each group's obligations (CTIs in full)."""
    titles = {(g.model, g.key): g.title for g in groups()}
    lines = [
        "# Proof obligations of the tla-* models and of core's functions (kafka-core)",
        "",
        "Generated by `isrlab prove --update` from `proofs/results.json`; do not edit by hand.",
        "Step: (invariants of the group's model) ∧ action ⇒ P(s, s′) for a two-state P.",
        "IndInit: Init ⇒ C. IndNext: (conjunction of the group) ∧ action ⇒ C′.",
        "Offsets, epochs and record ids are unbounded integers; replicas as listed.",
        "A CTI (counterexample to induction) need not be reachable; a BMC trace is.",
        "",
        "| model | group | replicas | outcome | seconds |",
        "|---|---|---|---|---|",
    ]
    for g in results:
        seconds = sum(r.seconds for r in g.rows)
        lines.append(f"| {g.model} | {g.group} | {g.replicas} | {_summary(g)} | "
                     f"{seconds:.1f} |")
    for g in results:
        lines += ["", f"## {g.model} — {g.group}", "",
                  titles.get((g.model, g.group), ""), "",
                  f"Inputs digest `{g.digest[:16]}`.", "",
                  "| kind | conjunct | action | outcome | s |", "|---|---|---|---|---|"]
        details = []
        for r in g.rows:
            lines.append(f"| {r.kind} | {r.target} | {r.action} | {r.status} | "
                         f"{r.seconds:.2f} |")
            if r.status not in (PROVED, "holds") and r.detail:
                details.append(f"- **{r.kind} {r.target} / {r.action}** ({r.status}): "
                               f"{r.detail}")
        if details:
            lines += ["", *details]
    return "\n".join(lines) + "\n"


def run_all(selected: Sequence[Group], timeout_ms: int,
            progress: Callable[[Group, GroupResult], None] | None = None) -> list[GroupResult]:
    """Run the selected groups in order."""
    out = []
    for group in selected:
        result = group.run(timeout_ms)
        if progress is not None:
            progress(group, result)
        out.append(result)
    return out
