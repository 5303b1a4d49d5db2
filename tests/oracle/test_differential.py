"""Differential testing: hypothesis walks over a model drive a user's implementation through
an adapter; a divergence is found and shrunk, a faithful implementation passes."""

from __future__ import annotations

from isrlab.checker.differential import Adapter, differential_test
from isrlab.spec.oracle_examples import MiniReplication, correct_adapter, faulty_adapter
from tests.oracle.helpers import model

# By hand: for truncate-to-HW to lose a record KIP-279 keeps, some replica must hold a
# record above its HW that the leader it follows also holds.  The record needs a leader
# (ControllerElectLeader, BecomeLeader, LeaderWrite: 3 steps), a second replica must follow
# it and copy the record (BecomeFollower, FollowerReplicate: 2), and one of the two must then
# take a newer epoch as a follower (a controller step and a BecomeFollower: 2).  So no
# divergence is shorter than 7 steps.
SHORTEST_TRUNCATION_DIVERGENCE = 7


def test_the_faulty_implementation_is_caught_with_a_short_walk() -> None:
    result = differential_test(model("tla-kip279", "invariants=none"), faulty_adapter(),
                               walks=1000, depth=12, seed=0)
    assert not result.ok
    divergence = result.divergence
    assert divergence is not None
    assert SHORTEST_TRUNCATION_DIVERGENCE <= divergence.step <= 10
    assert divergence.label.startswith("BecomeFollowerTruncateKip279(")
    assert divergence.mismatches[0].path.startswith("replicaLog.")
    assert len(divergence.walk) == divergence.step + 1
    assert "diverges after step" in divergence.text()


def test_the_correct_implementation_passes_1000_walks() -> None:
    result = differential_test(model("tla-kip279", "invariants=none"), correct_adapter(),
                               walks=1000, depth=10, seed=0)
    assert result.ok, result.divergence and result.divergence.text()
    assert result.walks == 1000
    assert result.steps > 3000


def test_the_correct_implementation_agrees_with_the_fenced_model_too() -> None:
    result = differential_test(model("tla-kip320", "replicas=3", "invariants=none"),
                               correct_adapter(), walks=200, depth=12, seed=1)
    assert result.ok, result.divergence and result.divergence.text()


def test_truncating_to_the_hw_is_exactly_what_the_pre_0_11_model_does() -> None:
    result = differential_test(model("tla-truncate-to-hw", "invariants=none"),
                               faulty_adapter(), walks=300, depth=12, seed=2)
    assert result.ok, result.divergence and result.divergence.text()


def _refusing_writes() -> Adapter[MiniReplication]:
    base = correct_adapter()

    def step(impl: MiniReplication, label: str) -> MiniReplication:
        if label.startswith("LeaderWrite"):
            raise RuntimeError("disk full")
        return base.step(impl, label)

    return Adapter("refuses writes", base.init, step, base.view)


def test_an_implementation_that_raises_diverges_at_the_first_write() -> None:
    # By hand: a write needs a leader: ControllerElectLeader, BecomeLeader, LeaderWrite.
    result = differential_test(model("tla-kip279", "invariants=none"), _refusing_writes(),
                               walks=300, depth=8, seed=3)
    divergence = result.divergence
    assert divergence is not None
    assert divergence.step == 3
    assert divergence.error == "RuntimeError: disk full"
    assert [s.action.split("(")[0] for s in divergence.walk] == [
        "Init", "ControllerElectLeader", "BecomeLeader", "LeaderWrite",
    ]


def test_the_same_seed_finds_the_same_minimal_walk() -> None:
    m = model("tla-kip279", "invariants=none")
    first = differential_test(m, faulty_adapter(), walks=1000, depth=12, seed=5)
    again = differential_test(m, faulty_adapter(), walks=1000, depth=12, seed=5)
    assert first.divergence is not None and again.divergence is not None
    assert [s.action for s in first.divergence.walk] == [s.action for s in again.divergence.walk]
