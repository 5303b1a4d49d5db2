"""isrlab.spec.symbolic.core_mechanisms against isrlab.core.alter_partition / isrlab.core.elr, and
their proofs."""

from __future__ import annotations

import itertools
from dataclasses import replace
from typing import cast

import z3
from hypothesis import given, settings
from hypothesis import strategies as st

from isrlab.core.alter_partition import (
    AlterPartitionRequest,
    ControllerView,
    HwIsr,
    IsrState,
    PendingIsrChange,
    alter_partition,
    committed_isr_state,
    leader_hw_with_isr_state,
    prepare_isr_expand,
)
from isrlab.core.elr import PartitionRegistration, hw_may_advance, populate_target_elr
from isrlab.core.errors import Errors
from isrlab.core.fencing import FetchFencing
from isrlab.core.fencing import fetch_decision as python_fetch_decision
from isrlab.core.log_recovery import (
    HwCheckpointFile,
    checkpoint_at_shutdown,
    checkpoints_after_power_loss,
    initial_high_watermark,
    read_high_watermark_checkpoint,
)
from isrlab.core.state import NO_LEADER, LeaderAndIsr, Partition, TopicPartition
from isrlab.proofs.mechanism_obligations import (
    induction_rows,
    mechanism_groups,
    shortest_violation,
)
from isrlab.proofs.obligations import Row
from isrlab.spec.symbolic import core_mechanisms as sym
from tests.core.helpers import append, fetch, leader_partition, ok

N = 3
REPLICAS = (0, 1, 2)


def _bits(members: frozenset[int] | tuple[int, ...]) -> tuple[z3.BoolRef, ...]:
    return tuple(z3.BoolVal(i in members) for i in range(N))


def _value(expr: z3.ExprRef) -> int | bool:
    simple = z3.simplify(expr)
    if z3.is_true(simple) or z3.is_false(simple):
        return bool(z3.is_true(simple))
    return int(cast(z3.IntNumRef, simple).as_long())


def _members(bits: tuple[z3.BoolRef, ...]) -> tuple[int, ...]:
    return tuple(i for i, b in enumerate(bits) if _value(b))


# ---------------------------------------------------------------------------------------
# Differential: the encoded functions compute what the Python computes
# ---------------------------------------------------------------------------------------


@st.composite
def leaders_with_isr_state(draw: st.DrawFn) -> tuple[Partition, IsrState]:
    """A leader of 3 replicas with followers at various LEOs and any well-formed ISR state."""
    p = append(leader_partition(REPLICAS), draw(st.integers(0, 4)))
    for j in (1, 2):
        if draw(st.booleans()):
            p = fetch(p, j, draw(st.integers(0, len(p.log))), 0)
    p = replace(p, high_watermark=draw(st.integers(0, len(p.log))))
    committed = frozenset({0} | {j for j in (1, 2) if draw(st.booleans())})
    kind = draw(st.sampled_from(["none", "expand", "shrink"]))
    outside = sorted(set(REPLICAS) - committed)
    pending = None
    if kind == "expand" and outside:
        pending = PendingIsrChange(committed | {draw(st.sampled_from(outside))}, True)
    elif kind == "shrink" and len(committed) > 1:
        pending = PendingIsrChange(frozenset({0}), False)
    return p, IsrState(committed, 0, pending)


@settings(max_examples=150, deadline=None)
@given(leaders_with_isr_state(), st.sampled_from(list(HwIsr)))
def test_the_hw_encoding_gives_the_python_hw_for_both_rules(
    case: tuple[Partition, IsrState], rule: HwIsr
) -> None:
    p, state = case
    remotes = {r.broker_id: r.log_end_offset for r in p.remotes}
    leos = (z3.IntVal(len(p.log)), *(z3.IntVal(remotes[j]) for j in (1, 2)))
    proposed = state.pending.proposed_isr if state.pending else frozenset()
    members = sym.hw_isr_members(_bits(state.isr), z3.BoolVal(state.pending is not None),
                                 z3.BoolVal(bool(state.pending and state.pending.expanding)),
                                 _bits(proposed), rule is HwIsr.MAXIMAL)
    encoded = _value(sym.raised_hw(z3.IntVal(p.high_watermark), leos, members))
    assert encoded == ok(leader_hw_with_isr_state(p, state, rule))


SUBSETS = [tuple(c) for k in range(N + 1) for c in itertools.combinations(REPLICAS, k)]


def _check_populate(isr: tuple[int, ...], elr: tuple[int, ...], lke: tuple[int, ...],
                    target: tuple[int, ...], unclean: tuple[int, ...], min_isr: int) -> None:
    reg = PartitionRegistration(REPLICAS, isr, NO_LEADER, elr=elr, last_known_elr=lke)
    python = populate_target_elr(reg, target, min_isr, frozenset(unclean))
    new_elr, new_lke = sym.populate_target_elr(_bits(isr), _bits(elr), _bits(lke),
                                               _bits(target), _bits(unclean),
                                               z3.IntVal(min_isr))
    assert (_members(new_elr), _members(new_lke)) == python


def test_the_elr_encoding_agrees_with_the_python_on_every_isr_elr_and_target() -> None:
    for isr, elr, target in itertools.product(SUBSETS, SUBSETS, SUBSETS):
        if set(isr) & set(elr):
            continue
        for min_isr in (1, 2, 3):
            _check_populate(isr, elr, (), target, (), min_isr)


@settings(max_examples=200, deadline=None)
@given(st.sampled_from(SUBSETS), st.sampled_from(SUBSETS), st.sampled_from(SUBSETS),
       st.sampled_from(SUBSETS), st.sampled_from(SUBSETS), st.integers(1, 3))
def test_the_elr_encoding_agrees_with_unclean_shutdowns_and_last_known_elr(
    isr: tuple[int, ...], elr: tuple[int, ...], lke: tuple[int, ...],
    target: tuple[int, ...], unclean: tuple[int, ...], min_isr: int,
) -> None:
    elr = tuple(r for r in elr if r not in isr)
    lke = tuple(r for r in lke if r not in isr and r not in elr)
    _check_populate(isr, elr, lke, target, unclean, min_isr)


def test_the_hw_gate_encoding_agrees_with_the_python() -> None:
    for isr, min_isr, gated in itertools.product(SUBSETS, (1, 2, 3), (True, False)):
        assert _value(sym.hw_may_advance(_bits(isr), z3.IntVal(min_isr), gated)) == (
            hw_may_advance(len(isr), min_isr, gated))


EPOCH = st.integers(0, 2)


@settings(max_examples=300, deadline=None)
@given(st.integers(0, 2), EPOCH, EPOCH, st.lists(st.integers(-1, 1), min_size=N, max_size=N),
       st.sampled_from(SUBSETS), st.booleans(), st.integers(0, 2), EPOCH, EPOCH,
       st.sampled_from(SUBSETS), EPOCH)
def test_the_controller_decision_encoding_gives_the_python_error(
    leader: int, leader_epoch: int, version: int, registered: list[int],
    ineligible: tuple[int, ...], fence: bool, sender: int, sender_epoch: int,
    request_epoch: int, new_isr: tuple[int, ...], request_version: int,
) -> None:
    # registered[b] < 0: broker b is not registered; ineligible: fenced or shutting down
    view = ControllerView(tuple((b, e) for b, e in enumerate(registered) if e >= 0),
                          fenced=frozenset(ineligible), fence_ineligible=fence)
    request = AlterPartitionRequest(sender, sender_epoch, request_epoch, new_isr,
                                    request_version)
    current = LeaderAndIsr(leader, leader_epoch, (leader,), version)
    python = ok(alter_partition(current, REPLICAS, request, view)).error
    encoded = sym.alter_partition_error(
        z3.IntVal(leader), z3.IntVal(leader_epoch), z3.IntVal(version), _bits(REPLICAS),
        tuple(z3.IntVal(e) for e in registered), _bits(ineligible), fence, sender,
        z3.IntVal(sender_epoch), z3.IntVal(request_epoch), _bits(new_isr),
        z3.IntVal(request_version))
    assert _value(encoded) == python.value


def test_the_fetch_fencing_encoding_agrees_with_the_python_for_every_design() -> None:
    for fencing, leader_epoch, follower_epoch in itertools.product(
            FetchFencing, range(3), range(3)):
        python = python_fetch_decision(fencing, leader_epoch, follower_epoch)
        record, error, truncates = sym.fetch_decision(
            fencing.value, z3.IntVal(leader_epoch), z3.IntVal(follower_epoch))
        assert (_value(record), _value(error), _value(truncates)) == (
            python.record_fetch, python.error.value, python.follower_truncates)


def _restart_hw_python(behaviour: HwCheckpointFile, clean: bool, hosted: bool, hw_now: int,
                       in_file: bool, file_hw: int, empty: bool, log_start: int,
                       leo: int) -> int:
    """The same restart composed of ``isrlab.core.log_recovery``'s functions."""
    tp = TopicPartition("t", 0)
    previous = ((tp, file_hw),) if in_file else ()
    if clean:
        written = ((tp, hw_now),) if hosted else None
        checkpoint = checkpoint_at_shutdown(previous, written, behaviour)
    else:
        files = checkpoints_after_power_loss(previous, behaviour)
        checkpoint = files[1] if empty and len(files) > 1 else files[0]
    return initial_high_watermark(read_high_watermark_checkpoint(checkpoint, tp), log_start,
                                  leo)


def test_the_restart_hw_encoding_agrees_with_the_python_for_every_file_version() -> None:
    flags = (False, True)
    for behaviour, clean, hosted, hw_now, in_file, file_hw, empty, start, leo in (
            itertools.product(HwCheckpointFile, flags, flags, range(3), flags, range(3), flags,
                              range(2), range(3))):
        python = _restart_hw_python(behaviour, clean, hosted, hw_now, in_file, file_hw, empty,
                                    start, leo)
        encoded = sym.restart_hw(behaviour.value, z3.BoolVal(clean), z3.BoolVal(hosted),
                                 z3.IntVal(hw_now), z3.BoolVal(in_file), z3.IntVal(file_hw),
                                 z3.BoolVal(empty), z3.IntVal(start), z3.IntVal(leo))
        assert _value(encoded) == python, (behaviour, clean, hosted, hw_now, in_file,
                                           file_hw, empty, start, leo)


# ---------------------------------------------------------------------------------------
# The committed-ISR counterexample, replayed through core's Python functions
# ---------------------------------------------------------------------------------------


def test_the_committed_isr_rule_lets_the_controller_count_a_follower_below_the_hw() -> None:
    # The BMC trace of async-isr-committed: the leader alone in the ISR appends; follower
    # 2 (LEO 0 = HW) is proposed; the leader raises its HW; the controller accepts.
    p = replace(append(leader_partition(REPLICAS), 1), isr=frozenset({0}), high_watermark=0)
    p = fetch(p, 2, 0, 0)
    state = committed_isr_state({0}, 5)
    proposal = ok(prepare_isr_expand(p, state, 2))
    assert proposal.request is not None
    committed_hw = ok(leader_hw_with_isr_state(p, proposal.state, HwIsr.COMMITTED))
    maximal_hw = ok(leader_hw_with_isr_state(p, proposal.state, HwIsr.MAXIMAL))
    current = LeaderAndIsr(0, p.leader_epoch, (0,), 5)
    view = ControllerView(((0, 0), (1, 0), (2, 0)))
    answer = ok(alter_partition(current, REPLICAS, proposal.request, view))
    assert answer.error is Errors.NONE and answer.leader_and_isr is not None
    assert 2 in answer.leader_and_isr.isr
    follower_2 = next(r for r in p.remotes if r.broker_id == 2)
    assert (committed_hw, maximal_hw, follower_2.log_end_offset) == (1, 0, 0)


# ---------------------------------------------------------------------------------------
# The obligations: proved where Kafka's rule holds, refuted (with a trace) where it does not
# ---------------------------------------------------------------------------------------


def _statuses(rows: list[Row]) -> set[str]:
    return {r.status for r in rows}


def test_kafka_s_maximal_isr_rule_is_inductive_and_the_committed_rule_is_not() -> None:
    assert _statuses(induction_rows(sym.async_isr_system(N, maximal=True), 20_000)) == {
        "proved"}
    refuted = {(r.target, r.action) for r in
               induction_rows(sym.async_isr_system(N, maximal=False), 20_000)
               if r.status != "proved"}
    assert ("ValidHighWatermark", "RaiseHw") in refuted
    assert {action for _, action in refuted} == {"RaiseHw"}


def test_elr_with_the_hw_gate_keeps_every_electable_replica_complete() -> None:
    assert _statuses(induction_rows(sym.elr_system(N, True, True), 20_000)) == {"proved"}
    without = induction_rows(sym.elr_system(N, False, False), 20_000)
    assert {r.action for r in without if r.status != "proved"} == {
        f"UncleanRestart[{j}]" for j in range(N)}


def test_the_shortest_violations_have_the_hand_counted_lengths() -> None:
    # Hand counts: committed ISR -- propose, append, raise the HW, accept (4); no ELR --
    # append, raise, the fenced last ISR member restarts uncleanly (3); ELR without the HW
    # gate -- a replica leaves below min ISR, append, raise (3).
    cases = [(sym.async_isr_system(N, maximal=False), 4), (sym.elr_system(N, False, False), 3),
             (sym.elr_system(N, True, False), 3)]
    for system, length in cases:
        found = shortest_violation(system, 5, 20_000)
        assert found is not None and found[0] == length, system.name
    for system in (sym.async_isr_system(N, maximal=True), sym.elr_system(N, True, True)):
        assert shortest_violation(system, 4, 20_000) is None, system.name


def test_the_groups_are_catalogued_under_kafka_core() -> None:
    keys = [g.key for g in mechanism_groups()]
    assert keys == ["async-isr-maximal", "async-isr-committed", "elr", "no-elr",
                    "elr-ungated"]
    assert all(g.model == "kafka-core" for g in mechanism_groups())
