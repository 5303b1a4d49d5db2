"""proofs/: the recorded outcomes are current, and what they claim still holds.

``proofs/RESULTS.md`` is rendered from ``proofs/results.json``, which records every group's
digest of inputs (the S-expressions of its formulas).  A change to an encoding, a lemma or an
invariant changes a digest, and these tests fail until ``isrlab prove --update`` is re-run.
"""

from __future__ import annotations

import pytest
import z3
from click.testing import CliRunner

from isrlab.checker.z3 import PROVED, REFUTED, property_holds
from isrlab.cli import cli
from isrlab.proofs import lemmas
from isrlab.proofs.obligations import (
    BUGGY,
    MODELS,
    RESULTS_MD,
    STRENGTHENING,
    GroupResult,
    Row,
    groups,
    load,
    regressions,
    render,
)
from isrlab.spec.symbolic.bridge import concrete
from tests.z3.conftest import bfs_states, build_pair, heavy


def recorded(model: str, group: str) -> GroupResult:
    return next(g for g in load() if g.model == model and g.group == group)


def test_results_md_is_rendered_from_results_json() -> None:
    assert RESULTS_MD.read_text(encoding="utf-8") == render(load())


def test_every_group_of_the_catalogue_is_recorded_with_its_current_digest() -> None:
    stored = {(g.model, g.group): g.digest for g in load()}
    for group in groups():
        assert stored.get((group.model, group.key)) == group.digest(), (
            f"{group.model} {group.key} is stale: "
            f"run `isrlab prove --update --model {group.model}`")


@pytest.mark.parametrize("model", list(MODELS))
def test_the_structural_lemmas_are_still_inductive(model: str) -> None:
    group = next(g for g in groups(model) if g.key == "structural")
    rows = group.run(timeout_ms=20_000).rows
    assert [r.status for r in rows] == [PROVED] * len(rows)
    keys = [(r.kind, r.target, r.action) for r in rows]
    assert keys == [(r.kind, r.target, r.action) for r in recorded(model, "structural").rows]
    assert {r.target for r in rows} >= {"HwWithinLog", "LeaderInIsr", "PresumedLeaderInOwnIsr"}


@pytest.mark.parametrize("model", list(MODELS))
def test_epochs_never_decrease_is_recorded_as_proved(model: str) -> None:
    rows = recorded(model, "epochs").rows
    assert len(rows) == 9 and all(r.status == PROVED for r in rows)


@pytest.mark.parametrize("model", list(MODELS))
def test_strong_isr_alone_is_not_inductive_in_any_variant(model: str) -> None:
    rows = recorded(model, "strong-isr").rows
    assert rows[0].kind == "IndInit" and rows[0].status == PROVED
    assert any(r.status == REFUTED and "from:" in r.detail for r in rows)


def test_the_strengthening_makes_strong_isr_inductive_for_kip320() -> None:
    rows = recorded("tla-kip320", "strengthened").rows
    targets = {r.target for r in rows}
    assert {"StrongIsr", "WeakIsr"} <= targets
    assert len(targets) == len(lemmas.structural(build_pair("tla-kip320")[1])) + len(
        STRENGTHENING) + 2
    assert all(r.status == PROVED for r in rows)


@pytest.mark.parametrize("model", BUGGY)
def test_the_strengthening_breaks_on_a_real_trace_of_each_buggy_variant(model: str) -> None:
    rows = recorded(model, "strengthening-fails").rows
    assert rows[0].kind == "BMC" and rows[0].status == "violated"
    assert "→" in rows[0].detail


def test_the_strengthening_lemmas_hold_on_reachable_kip320_states() -> None:
    # Independent of the proof: evaluate every conjunct on explicit reachable states.
    model, system = build_pair("tla-kip320")
    conjuncts = lemmas.structural(system) + [make(system) for make in STRENGTHENING]
    for state in list(bfs_states(model, 3_000))[::60]:
        here = concrete(model, state, 2)
        for conjunct in conjuncts:
            assert property_holds(system, here, conjunct), (conjunct.name, here)


def test_a_lost_proof_is_a_regression() -> None:
    before = [GroupResult("m", "g", 2, "d", (Row("IndNext", "Inv", "Act", PROVED, 0.1),))]
    after = [GroupResult("m", "g", 2, "d", (Row("IndNext", "Inv", "Act", "unknown", 9.0),))]
    assert regressions(before, after) == ["m g: IndNext Inv / Act is now unknown"]
    assert regressions(after, before) == []


def test_cli_prove_rejects_an_unknown_model() -> None:
    result = CliRunner().invoke(cli, ["prove", "--model", "toy-counter"])
    assert result.exit_code == 2
    assert "no proof obligations" in result.output


@pytest.mark.heavy
@heavy
def test_the_kip320_strengthening_is_still_inductive() -> None:
    group = next(g for g in groups("tla-kip320") if g.key == "strengthened")
    assert all(r.status == PROVED for r in group.run(timeout_ms=30_000).rows)


def test_z3_is_the_version_the_results_were_recorded_with_or_newer() -> None:
    import json

    from isrlab.proofs.obligations import RESULTS_JSON
    recorded_version = json.loads(RESULTS_JSON.read_text())["z3"]
    assert tuple(map(int, z3.get_version_string().split(".")[:2])) >= tuple(
        map(int, recorded_version.split(".")[:2]))
