"""Differential tests of isrlab.spec.symbolic.core_isr against core's Python functions, and
proofs."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace

import z3
from hypothesis import given, settings
from hypothesis import strategies as st

from isrlab.core.isr import leader_epoch_start_offset, maybe_expand_isr, maybe_shrink_isr
from isrlab.core.partition import maybe_increment_leader_hw
from isrlab.core.state import Partition
from isrlab.spec.symbolic.core_isr import (
    LeaderState,
    expand_isr,
    increment_leader_hw,
    leader_state,
    shrink_isr,
    well_formed,
)
from tests.core.helpers import append, err, fetch, leader_partition, ok
from tests.z3.conftest import check_alone

Concrete = tuple[int, int, tuple[bool, ...], tuple[int, ...], tuple[int, ...]]
Relation = Callable[[LeaderState, LeaderState], z3.BoolRef]


@st.composite
def partitions(draw: st.DrawFn) -> Partition:
    """A leader (broker 0) of n ≤ 3 replicas driven by appends, fetches and ISR shrinks.

    Finally its HW may be lowered (still well formed): the encodings cover every
    well-formed state, not only those core's steps reach (where the HW is already maximal).
    """
    n = draw(st.integers(1, 3))
    p = leader_partition(tuple(range(n)))
    for _ in range(draw(st.integers(0, 6))):
        kind = draw(st.sampled_from(["append", "fetch", "shrink"]))
        now = draw(st.integers(0, 4))
        if kind == "append" and len(p.log) < 4:
            p = append(p, 1, len(p.log))
        elif kind == "fetch" and n > 1:
            p = fetch(p, draw(st.integers(1, n - 1)), draw(st.integers(0, len(p.log))), now)
        elif kind == "shrink":
            p = ok(maybe_shrink_isr(p, now, draw(st.integers(0, 2)))).partition
    return replace(p, high_watermark=draw(st.integers(0, p.high_watermark)))


def concrete(p: Partition) -> Concrete:
    """The encoded fields of a core leader partition (remotes by broker id)."""
    n = len(p.assigned_replicas)
    remotes = {r.broker_id: r for r in p.remotes}
    return (
        len(p.log), p.high_watermark, tuple(i in p.isr for i in range(n)),
        tuple(remotes[i].log_end_offset if i else 0 for i in range(n)),
        tuple(remotes[i].last_caught_up_time_ms if i else 0 for i in range(n)),
    )


def equals(s: LeaderState, c: Concrete) -> z3.BoolRef:
    """``s`` is the concrete state ``c``."""
    leo, hw, isr, rleo, caught = c
    eqs = [s.leo == leo, s.hw == hw] + [s.isr[i] == isr[i] for i in range(s.n)]
    eqs += [s.rleo[i] == rleo[i] for i in range(1, s.n)]
    eqs += [s.caught[i] == caught[i] for i in range(1, s.n)]
    return z3.And(eqs)


def value(s: LeaderState, model: z3.ModelRef) -> Concrete:
    """The concrete state ``s`` takes in ``model``."""
    def num(x: z3.ArithRef) -> int:
        return int(str(model.eval(x, model_completion=True)))

    return (
        num(s.leo), num(s.hw),
        tuple(z3.is_true(model.eval(b, model_completion=True)) for b in s.isr),
        tuple(num(x) if i else 0 for i, x in enumerate(s.rleo)),
        tuple(num(x) if i else 0 for i, x in enumerate(s.caught)),
    )


def admitted(relation: Relation, before: Concrete, n: int, limit: int = 5) -> set[Concrete]:
    """Every successor the relation admits for ``before`` (blocking-clause enumeration)."""
    s, t = leader_state(n, "s"), leader_state(n, "t")
    solver = z3.Solver()
    solver.add(equals(s, before), relation(s, t))
    found: set[Concrete] = set()
    while len(found) < limit and solver.check() == z3.sat:
        after = value(t, solver.model())
        found.add(after)
        solver.add(z3.Not(equals(t, after)))
    return found


def check_agrees(relation: Relation, p: Partition, python_after: Partition | None) -> None:
    n = len(p.assigned_replicas)
    expected = set() if python_after is None else {concrete(python_after)}
    assert admitted(relation, concrete(p), n) == expected


FAST = settings(max_examples=40, deadline=None)


@FAST
@given(partitions())
def test_the_hw_raise_relation_admits_exactly_the_python_successor(p: Partition) -> None:
    check_agrees(increment_leader_hw, p, ok(maybe_increment_leader_hw(p)).partition)


@FAST
@given(partitions(), st.integers(0, 6), st.integers(0, 3), st.booleans(), st.booleans())
def test_the_shrink_relation_admits_exactly_the_python_successor(
    p: Partition, now: int, lag: int, kafka_4485: bool, kafka_7152: bool
) -> None:
    def relation(s: LeaderState, t: LeaderState) -> z3.BoolRef:
        return shrink_isr(s, t, z3.IntVal(now), z3.IntVal(lag), kafka_4485, kafka_7152)

    check_agrees(relation, p,
                 ok(maybe_shrink_isr(p, now, lag, kafka_4485, kafka_7152)).partition)


def test_kafka_7152_keeps_a_late_follower_at_the_leaders_leo_in_python_and_z3() -> None:
    # Follower 1 fetched up to the leader's LEO 2 at time 0, follower 2 only to offset 1:
    # at time 5 with a lag of 1 both are late; Kafka <= 2.0 drops both, 2.1+ only follower 2.
    p = append(leader_partition((0, 1, 2)), 2)
    p = fetch(fetch(p, 1, 2, 0), 2, 1, 0)
    for kafka_7152, isr in ((False, frozenset({0})), (True, frozenset({0, 1}))):
        after = ok(maybe_shrink_isr(p, 5, 1, kafka_7152=kafka_7152)).partition
        assert after.isr == isr

        def relation(s: LeaderState, t: LeaderState, on: bool = kafka_7152) -> z3.BoolRef:
            return shrink_isr(s, t, z3.IntVal(5), z3.IntVal(1), kafka_7152=on)

        check_agrees(relation, p, after)


@FAST
@given(partitions(), st.integers(1, 2), st.sampled_from(["pre-2.1", "epoch-start", "near"]),
       st.integers(-1, 1))
def test_the_expand_relation_admits_exactly_the_python_successor(
    p: Partition, j: int, rule: str, delta: int
) -> None:
    # "near": an epoch start next to follower j's LEO, where the >= boundary matters.
    near = max(0, concrete(p)[3][j] + delta) if j < len(p.assigned_replicas) else 0
    starts = {"pre-2.1": None, "epoch-start": leader_epoch_start_offset(p), "near": near}
    start = starts[rule]
    n = len(p.assigned_replicas)
    result = maybe_expand_isr(p, j, start)
    python_after = ok(result).partition if j < n else None

    def relation(s: LeaderState, t: LeaderState) -> z3.BoolRef:
        return expand_isr(s, t, j, None if start is None else z3.IntVal(start))

    check_agrees(relation, p, python_after)


def test_a_negative_lag_has_no_successor_as_the_python_rejects_it() -> None:
    p = leader_partition((0, 1))
    err(maybe_shrink_isr(p, 0, -1))

    def relation(s: LeaderState, t: LeaderState) -> z3.BoolRef:
        return shrink_isr(s, t, z3.IntVal(0), z3.IntVal(-1))

    assert admitted(relation, concrete(p), 2) == set()


def test_the_epoch_start_rule_keeps_out_a_follower_the_pre_2_1_rule_admits() -> None:
    # Follower 1 at LEO 1 = HW, epoch starting at 2: KAFKA-7128 keeps it out (and the
    # leader alone in the ISR then raises the HW to its LEO).
    before: Concrete = (3, 1, (True, False), (0, 1), (0, 0))
    old = admitted(lambda s, t: expand_isr(s, t, 1), before, 2)
    new = admitted(lambda s, t: expand_isr(s, t, 1, z3.IntVal(2)), before, 2)
    assert old == {(3, 1, (True, True), (0, 1), (0, 0))}
    assert new == {(3, 3, (True, False), (0, 1), (0, 0))}


def _wrong_hw_raise(s: LeaderState, t: LeaderState) -> z3.BoolRef:
    """A mutant: the HW becomes the leader's LEO, ignoring the followers."""
    return z3.And(increment_leader_hw(s, s), t.leo == s.leo, t.hw == s.leo,
                  *[t.isr[i] == s.isr[i] for i in range(s.n)],
                  *[t.rleo[i] == s.rleo[i] for i in range(1, s.n)],
                  *[t.caught[i] == s.caught[i] for i in range(1, s.n)])


def test_the_differential_check_rejects_a_wrong_hw_relation() -> None:
    # Leader at LEO 2, follower 1 in the ISR at LEO 0: the real HW stays 0.
    p = append(leader_partition((0, 1)), 2)
    python_after = ok(maybe_increment_leader_hw(p)).partition
    assert python_after.high_watermark == 0
    try:
        check_agrees(_wrong_hw_raise, p, python_after)
    except AssertionError:
        return
    raise AssertionError("the mutant relation was not caught")


# ---------------------------------------------------------------------------------------
# Preservation proofs over unbounded Ints: Inv(s) ∧ T(s, s') ⇒ Inv(s') ∧ HW' ≥ HW
# ---------------------------------------------------------------------------------------


def _preserves(relation: Relation, n: int) -> bool:
    s, t = leader_state(n, "s"), leader_state(n, "t")
    holds = z3.And(well_formed(t), z3.Or(t.isr), t.hw >= s.hw)
    return bool(check_alone(well_formed(s), relation(s, t), z3.Not(holds)) == z3.unsat)


NOW, LAG, START = z3.Int("now"), z3.Int("lag"), z3.Int("epoch_start")


def _expand_with(j: int, start: z3.ArithRef | None) -> Relation:
    def relation(s: LeaderState, t: LeaderState) -> z3.BoolRef:
        return expand_isr(s, t, j, start)

    return relation


def test_every_encoded_step_keeps_hw_within_leo_leader_in_isr_and_hw_monotone() -> None:
    for n in (1, 2, 3, 4):
        assert _preserves(increment_leader_hw, n)
        assert _preserves(lambda s, t: shrink_isr(s, t, NOW, LAG), n)
        assert _preserves(lambda s, t: shrink_isr(s, t, NOW, LAG, kafka_7152=True), n)
        for j in range(1, n):
            assert _preserves(_expand_with(j, None), n)
            assert _preserves(_expand_with(j, START), n)


def test_the_preservation_proof_fails_for_a_relation_that_lowers_the_hw() -> None:
    def lowers(s: LeaderState, t: LeaderState) -> z3.BoolRef:
        return z3.And(increment_leader_hw(s, s), t.leo == s.leo, t.hw == s.hw - 1,
                      *[t.isr[i] == s.isr[i] for i in range(s.n)])

    assert not _preserves(lowers, 2)


def test_a_follower_exactly_at_the_epoch_start_joins_in_both_python_and_z3() -> None:
    # Follower 1 leaves the ISR, the leader appends 3, the follower fetches from 2; with the
    # HW lowered to 2 its LEO equals both the HW and the epoch start: the >= boundary.
    p = ok(maybe_shrink_isr(leader_partition((0, 1)), 4, 0)).partition
    p = fetch(append(p, 3), 1, 2, 4)
    p = replace(p, high_watermark=2)
    after = ok(maybe_expand_isr(p, 1, 2)).partition
    assert after.isr == frozenset({0, 1})

    def relation(s: LeaderState, t: LeaderState) -> z3.BoolRef:
        return expand_isr(s, t, 1, z3.IntVal(2))

    check_agrees(relation, p, after)
