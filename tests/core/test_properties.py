"""Hypothesis properties over generated partition states and operation sequences.

Every transition of ``core``, on every well-formed partition and argument it accepts:
keeps HW <= LEO, LSO <= HW, log start <= HW, leader ∈ ISR ⊆ AR with a non-empty ISR on
a leader; never lowers an epoch; leaves its input untouched; gives the same answer twice.
On a leader, the fetch/ISR/append steps never lower the high watermark.
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from dataclasses import replace
from functools import partial
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st
from returns.pipeline import is_successful
from returns.result import Result

from isrlab.core.errors import InvalidInput
from isrlab.core.invariants import epochs_did_not_decrease, partition_violations
from isrlab.core.isr import (
    maybe_expand_isr,
    maybe_shrink_isr,
    read_from_local_log,
    update_follower_fetch,
)
from isrlab.core.metadata_cache import Broker, MetadataSnapshot
from isrlab.core.partition import (
    make_follower,
    make_leader,
    maybe_increment_leader_hw,
)
from isrlab.core.produce import append_records_to_leader, end_transaction, process_partition_data
from isrlab.core.replica_manager import (
    LeaderAndIsrRequest,
    ReplicaManager,
    become_leader_or_follower,
    get_partition,
)
from isrlab.core.state import (
    Partition,
    PartitionState,
    RemoteReplica,
    check_partition,
    is_leader,
    last_stable_offset,
    with_high_watermark,
    with_isr,
    with_log,
    with_remotes,
    with_role,
)
from isrlab.core.truncation import Log, Record
from isrlab.spec.kafka.truncation_versions import TRUNCATION_RULES
from tests.core.helpers import TP

TIMES = st.integers(0, 40_000)


@st.composite
def logs(draw: st.DrawFn, max_epoch: int = 5) -> Log:
    """A log whose record epochs never decrease (as a leader writes them)."""
    epochs = sorted(draw(st.lists(st.integers(0, max_epoch), max_size=8)))
    return tuple(Record(100 + i, e) for i, e in enumerate(epochs))


@st.composite
def partitions(draw: st.DrawFn) -> Partition:
    """A well-formed partition: a leader, a follower, or not yet initialised."""
    size = draw(st.integers(1, 4))
    replicas = tuple(draw(st.permutations(range(size))))
    local = draw(st.sampled_from(replicas))
    epoch = draw(st.integers(0, 5))
    log = draw(logs(epoch))
    leo = len(log)
    hw = draw(st.integers(0, leo))
    start = draw(st.integers(0, hw))
    txns = draw(st.frozensets(st.integers(0, leo - 1), max_size=2)) if leo else frozenset()
    role = draw(st.sampled_from(["leader", "follower", "fresh"]))
    base = Partition(TP, local, draw(st.integers(0, 3)), None, epoch, draw(st.integers(0, 9)),
                     replicas, frozenset(), log, True, hw, start, txns, ())
    others = [r for r in replicas if r != local]
    if role == "leader":
        isr = frozenset({local}) | draw(st.frozensets(st.sampled_from(replicas)))
        remotes = tuple(
            RemoteReplica(b, draw(st.integers(-1, leo)), draw(st.integers(-1, start)),
                          draw(TIMES), draw(st.integers(0, leo)), draw(TIMES))
            for b in sorted(others)
        )
        return Partition(TP, local, base.controller_epoch, local, epoch, base.zk_version,
                         replicas, isr, log, True, hw, start, txns, remotes)
    if role == "follower" and others:
        leader = draw(st.sampled_from(others))
        return Partition(TP, local, base.controller_epoch, leader, epoch, base.zk_version,
                         replicas, frozenset(), log, True, hw, start, txns, ())
    return Partition(TP, local)


def invariant_violations(p: Partition) -> list[str]:
    """Each expected property that ``p`` breaks (empty: all hold)."""
    problems = []
    leo = len(p.log)
    if not p.high_watermark <= leo:
        problems.append("HW <= LEO")
    if not last_stable_offset(p) <= p.high_watermark:
        problems.append("LSO <= HW")
    if not p.log_start_offset <= p.high_watermark:
        problems.append("LW/log start <= HW")
    if not p.isr <= set(p.assigned_replicas):
        problems.append("ISR ⊆ AR")
    if is_leader(p) and (not p.isr or p.local_broker_id not in p.isr):
        problems.append("leader ∈ ISR, ISR non-empty")
    if not is_successful(check_partition(p)):
        problems.append(f"check_partition: {check_partition(p)}")
    problems.extend(partition_violations(p))
    return problems


def run_twice(call: Callable[[], Result[Any, Any]], *inputs: object) -> Result[Any, Any]:
    """Call twice: inputs must be untouched and both answers equal."""
    before = copy.deepcopy(inputs)
    first = call()
    assert inputs == before, "the call mutated its input"
    assert call() == first, "the call is not deterministic"
    return first


def partition_of(outcome: object) -> Partition:
    found = outcome if isinstance(outcome, Partition) else getattr(outcome, "partition")  # noqa: B009
    assert isinstance(found, Partition)
    return found


def assert_preserved(before: Partition, result: Result[Any, InvalidInput],
                     epoch_may_rise: bool = False) -> None:
    if not is_successful(result):
        return
    after = partition_of(result.unwrap())
    assert invariant_violations(after) == []
    if epoch_may_rise:
        assert epochs_did_not_decrease(before, after)
    else:
        assert (after.leader_epoch, after.controller_epoch) == (
            before.leader_epoch, before.controller_epoch)


@settings(max_examples=150, deadline=None)
@given(partitions())
def test_generated_partitions_are_well_formed(p: Partition) -> None:
    assert invariant_violations(p) == []


@settings(max_examples=100, deadline=None)
@given(partitions(), partitions(), st.builds(PartitionState), st.integers(-1, 5))
def test_each_with_function_is_replace_of_the_fields_it_names(
    p: Partition, other: Partition, state: PartitionState, leader: int
) -> None:
    assert with_high_watermark(p, other.high_watermark) == replace(
        p, high_watermark=other.high_watermark)
    assert with_remotes(p, other.remotes) == replace(p, remotes=other.remotes)
    assert with_isr(p, other.isr, other.zk_version) == replace(
        p, isr=other.isr, zk_version=other.zk_version)
    assert with_log(p, other.log, other.high_watermark, other.log_start_offset,
                    other.open_txn_first_offsets) == replace(
        p, log=other.log, high_watermark=other.high_watermark,
        log_start_offset=other.log_start_offset,
        open_txn_first_offsets=other.open_txn_first_offsets)
    assert with_role(p, state, leader, other.isr, other.remotes) == replace(
        p, controller_epoch=state.controller_epoch, leader=leader,
        leader_epoch=state.leader_epoch, zk_version=state.zk_version,
        assigned_replicas=state.replicas, isr=other.isr, log_created=True,
        remotes=other.remotes)


@settings(max_examples=150, deadline=None)
@given(partitions(), st.integers(0, 4), st.integers(0, 10), TIMES, st.integers(0, 3))
def test_a_follower_fetch_preserves_the_invariants_and_never_lowers_the_hw(
    p: Partition, follower: int, offset: int, now: int, max_records: int
) -> None:
    read = run_twice(lambda: read_from_local_log(p, offset, 0, now, max_records), p)
    if not is_successful(read):
        return
    result = run_twice(lambda: update_follower_fetch(p, follower, read.unwrap()), p)
    assert_preserved(p, result)
    if is_successful(result):
        assert result.unwrap().partition.high_watermark >= p.high_watermark


@settings(max_examples=150, deadline=None)
@given(partitions(), TIMES, st.integers(0, 20_000), st.integers(0, 4))
def test_isr_shrink_expand_and_hw_preserve_the_invariants(
    p: Partition, now: int, lag: int, replica: int
) -> None:
    for result in (
        run_twice(lambda: maybe_shrink_isr(p, now, lag), p),
        run_twice(lambda: maybe_expand_isr(p, replica), p),
        run_twice(lambda: maybe_increment_leader_hw(p), p),
    ):
        assert_preserved(p, result)
        if is_successful(result):
            assert result.unwrap().partition.high_watermark >= p.high_watermark


@settings(max_examples=150, deadline=None)
@given(partitions(), st.lists(st.integers(0, 9), max_size=3), st.sampled_from([0, 1, -1]),
       st.integers(1, 3), st.booleans())
def test_appends_preserve_the_invariants(
    p: Partition, ids: list[int], acks: int, min_isr: int, txn: bool
) -> None:
    result = run_twice(lambda: append_records_to_leader(p, tuple(ids), acks, min_isr, txn), p)
    assert_preserved(p, result)
    if is_successful(result):
        appended = result.unwrap().partition
        assert appended.high_watermark >= p.high_watermark
        assert appended.log[: len(p.log)] == p.log
        for offset in p.open_txn_first_offsets:
            assert invariant_violations(end_transaction(appended, offset)) == []


@settings(max_examples=150, deadline=None)
@given(partitions(), logs(), st.integers(0, 10), st.integers(0, 10))
def test_follower_appends_preserve_the_invariants(
    p: Partition, fetched: Log, leader_hw: int, leader_start: int
) -> None:
    result = run_twice(
        lambda: process_partition_data(p, len(p.log), fetched, leader_hw, leader_start), p
    )
    assert_preserved(p, result)


@st.composite
def newer_states(draw: st.DrawFn, p: Partition) -> PartitionState:
    """A LeaderAndIsr state newer than ``p``'s (higher leader epoch) that includes ``p``."""
    replicas = tuple(sorted({p.local_broker_id} | draw(st.frozensets(st.integers(0, 4)))))
    leader = draw(st.sampled_from(replicas))
    isr = tuple(sorted({leader} | draw(st.frozensets(st.sampled_from(replicas)))))
    return PartitionState(
        p.controller_epoch + draw(st.integers(0, 1)), leader,
        p.leader_epoch + draw(st.integers(1, 2)), isr, p.zk_version + 1, replicas,
    )


@settings(max_examples=200, deadline=None)
@given(st.data(), partitions(), TIMES, st.sampled_from(sorted(TRUNCATION_RULES)), logs())
def test_make_leader_and_make_follower_preserve_the_invariants_and_raise_epochs(
    data: st.DataObject, p: Partition, now: int, rule_name: str, leader_log: Log
) -> None:
    state = data.draw(newer_states(p))
    rule = TRUNCATION_RULES[rule_name]
    if state.leader == p.local_broker_id:
        result = run_twice(lambda: make_leader(p, state, now), p, state)
        assert is_successful(result)
        led = result.unwrap().partition
        assert led.high_watermark >= p.high_watermark
        assert led.log == p.log
    else:
        result = run_twice(lambda: make_follower(p, state, rule, leader_log), p, state)
        assert is_successful(result)
        followed = result.unwrap().partition
        assert followed.log == p.log[: len(followed.log)]  # only ever truncated
    assert_preserved(p, result, epoch_may_rise=True)


@st.composite
def requests(draw: st.DrawFn) -> LeaderAndIsrRequest:
    """A LeaderAndIsr request for TP from some controller epoch, possibly stale."""
    replicas = tuple(sorted(draw(st.frozensets(st.integers(0, 3), min_size=1))))
    leader = draw(st.sampled_from(replicas))
    isr = tuple(sorted({leader} | draw(st.frozensets(st.sampled_from(replicas)))))
    state = PartitionState(draw(st.integers(0, 3)), leader, draw(st.integers(0, 4)), isr,
                           draw(st.integers(0, 4)), replicas)
    return LeaderAndIsrRequest(9, state.controller_epoch, ((TP, state),))


@settings(max_examples=100, deadline=None)
@given(st.lists(requests(), min_size=1, max_size=6), st.frozensets(st.integers(0, 3)),
       st.sampled_from(sorted(TRUNCATION_RULES)))
def test_a_broker_never_lets_its_controller_or_leader_epoch_go_backwards(
    reqs: list[LeaderAndIsrRequest], alive: frozenset[int], rule_name: str
) -> None:
    metadata = MetadataSnapshot(alive_brokers=tuple(Broker(b, ()) for b in sorted(alive)))
    manager = ReplicaManager(0)
    for now, req in enumerate(reqs):
        before = manager
        call = partial(become_leader_or_follower, before, req, metadata, now,
                       TRUNCATION_RULES[rule_name])
        result = run_twice(call, before, req)
        assert is_successful(result)
        manager = result.unwrap().manager
        assert manager.controller_epoch >= before.controller_epoch
        old, new = get_partition(before, TP), get_partition(manager, TP)
        if old is not None:
            assert new is not None and new.leader_epoch >= old.leader_epoch
        if new is not None:
            assert invariant_violations(new) == []


@settings(max_examples=150, deadline=None)
@given(partitions(), TIMES, st.integers(0, 20_000))
def test_a_shrink_removes_exactly_the_followers_that_lagged_too_long(
    p: Partition, now: int, lag: int
) -> None:
    result = maybe_shrink_isr(p, now, lag)
    if not is_successful(result) or not is_leader(p):
        return
    after = result.unwrap().partition
    lagging = {r.broker_id for r in p.remotes
               if r.broker_id in p.isr and now - r.last_caught_up_time_ms > lag}
    assert after.isr == p.isr - lagging
    assert result.unwrap().isr_changed == bool(lagging)
    if lagging:
        assert after.zk_version == p.zk_version + 1


@settings(max_examples=150, deadline=None)
@given(partitions(), st.integers(0, 4))
def test_an_expansion_admits_a_follower_exactly_when_its_leo_reaches_the_hw(
    p: Partition, follower: int
) -> None:
    result = maybe_expand_isr(p, follower)
    if not is_successful(result) or not is_leader(p):
        return
    leo = next(r.log_end_offset for r in p.remotes if r.broker_id == follower)
    joins = follower not in p.isr and leo >= p.high_watermark
    assert result.unwrap().partition.isr == (p.isr | {follower} if joins else p.isr)
    assert result.unwrap().isr_changed == joins


@settings(max_examples=150, deadline=None)
@given(partitions(), st.integers(0, 4), st.integers(0, 8))
def test_with_the_epoch_start_rule_a_follower_joins_only_from_the_epochs_start_offset(
    p: Partition, follower: int, epoch_start: int
) -> None:
    result = maybe_expand_isr(p, follower, leader_epoch_start=epoch_start)
    if not is_successful(result) or not is_leader(p):
        return
    leo = next(r.log_end_offset for r in p.remotes if r.broker_id == follower)
    joins = follower not in p.isr and leo >= p.high_watermark and leo >= epoch_start
    assert result.unwrap().partition.isr == (p.isr | {follower} if joins else p.isr)
    assert result.unwrap().isr_changed == joins
