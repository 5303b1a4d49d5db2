"""Differential tests of isrlab.spec.symbolic.core_kafka against core's Python functions.

For every encoded function and hypothesis-drawn concrete arguments (partitions of broker 0
built with core's own steps, n ≤ 3, logs of at most 4 records), the set of successors Z3
admits (blocking-clause enumeration over the bounded twin) equals the Python's: the
singleton of its result (so the Python successor satisfies T), or nothing when it returns a
``Failure``.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Sequence
from dataclasses import replace
from itertools import permutations

import z3
from hypothesis import assume, given, settings
from hypothesis import strategies as st
from returns.pipeline import is_successful
from returns.result import Result

from isrlab.checker.z3 import Fresh
from isrlab.core.isr import (
    leader_epoch_start_offset,
    maybe_expand_isr,
    maybe_shrink_isr,
    read_from_local_log,
    update_follower_fetch,
)
from isrlab.core.metadata_cache import Broker, MetadataSnapshot
from isrlab.core.partition import make_follower, make_leader, maybe_increment_leader_hw
from isrlab.core.produce import ACKS_LEADER, append_records_to_leader, process_partition_data
from isrlab.core.replica_manager import (
    LeaderAndIsrRequest,
    ReplicaManager,
    become_leader_or_follower,
)
from isrlab.core.selectors import (
    Selection,
    controlled_shutdown_leader_selector,
    offline_partition_leader_selector,
    preferred_replica_partition_leader_selector,
    reassigned_partition_leader_selector,
)
from isrlab.core.state import LeaderAndIsr, Partition, PartitionState
from isrlab.core.truncation import Log, Record
from isrlab.spec.kafka.truncation_versions import TRUNCATION_RULES
from isrlab.spec.symbolic import core_kafka as ck
from isrlab.spec.symbolic.core_system import (
    BrokerView,
    ZkView,
    broker_view,
    decode_broker,
    decode_zk,
    pin_broker,
    pin_log,
    pin_zk,
    zk_view,
)
from tests.core.helpers import TP, ok

RULE_NAMES = ("truncate-to-hw", "kip101", "kip279-2.0", "kip279")
BOUND = 8  # offsets the bounded twin checks: every log here has at most 4 + 2 records
FAST = settings(max_examples=60, deadline=None)
BrokerRel = Callable[[ck.BrokerState, ck.BrokerState, Fresh], z3.BoolRef]


def admitted(rel: BrokerRel, before: BrokerView, n: int, limit: int = 4) -> set[BrokerView]:
    """Every broker successor ``rel`` admits for ``before`` (blocking clauses)."""
    s, t = ck.fresh_broker(n, "s"), ck.fresh_broker(n, "t")
    solver = z3.Solver()
    solver.add(pin_broker(s, before), rel(s, t, Fresh("w")))
    found: set[BrokerView] = set()
    while len(found) < limit:
        answer = solver.check()
        assert answer != z3.unknown, solver.reason_unknown()
        if answer == z3.unsat:
            break
        after = decode_broker(solver.model(), t)
        assert after not in found
        found.add(after)
        solver.add(z3.Not(pin_broker(t, after)))
    return found


def only_successor(rel: BrokerRel, before: BrokerView, after: BrokerView, n: int) -> bool:
    """``rel`` admits ``before → after`` and no other successor (no decoding: with the
    quantified, unbounded form Z3's models may not evaluate to numerals)."""
    s, t = ck.fresh_broker(n, "s"), ck.fresh_broker(n, "t")
    solver = z3.Solver()
    solver.add(pin_broker(s, before), rel(s, t, Fresh("w")))
    solver.push()
    solver.add(pin_broker(t, after))
    admits = solver.check() == z3.sat
    solver.pop()
    solver.add(z3.Not(pin_broker(t, after)))
    return admits and bool(solver.check() == z3.unsat)


def expected(result: Result[Partition, object], n: int) -> set[BrokerView]:
    """The Python's successor set: its result, or nothing on a ``Failure``."""
    return {broker_view(result.unwrap(), n)} if is_successful(result) else set()


def n_of(p: Partition) -> int:
    return len(p.assigned_replicas) if p.assigned_replicas else 3


def request(leader: int, isr: Sequence[int], n: int, epoch: int, cepoch: int = 1,
            zk: int = 1) -> PartitionState:
    return PartitionState(cepoch, leader, epoch, tuple(isr), zk, tuple(range(n)))


def sym_request(state: PartitionState, n: int) -> ck.Request:
    return ck.Request(z3.IntVal(state.controller_epoch), z3.IntVal(state.leader_epoch),
                      tuple(z3.BoolVal(i in state.isr) for i in range(n)),
                      z3.IntVal(state.zk_version))


def sym_log(log: Log, name: str) -> tuple[ck.SymLog, z3.BoolRef]:
    sym = ck.SymLog(z3.Int(f"{name}.end"), z3.Array(f"{name}.rid", z3.IntSort(), z3.IntSort()),
                    z3.Array(f"{name}.rep", z3.IntSort(), z3.IntSort()))
    return sym, pin_log(sym, [(r.id, r.epoch) for r in log])


# ---------------------------------------------------------------------------------------
# Concrete partitions of broker 0, driven by core's own steps
# ---------------------------------------------------------------------------------------

logs = st.lists(st.builds(Record, st.integers(0, 3), st.integers(0, 3)), max_size=4).map(
    lambda rs: tuple(sorted(rs, key=lambda r: r.epoch)))
"""A leader's log: epochs never decrease along a Kafka log (LeaderEpochFileCache.assign
refuses a smaller epoch), so the KIP-101/279 lookups are compared on such logs only."""


@st.composite
def subsets_with(draw: st.DrawFn, n: int, member: int) -> tuple[int, ...]:
    """An ISR of ``n`` replicas containing ``member``, in a random order."""
    others = draw(st.lists(st.sampled_from(range(n)), unique=True, max_size=n))
    isr = [member, *(i for i in others if i != member)]
    return tuple(draw(st.permutations(isr)))


@st.composite
def partitions(draw: st.DrawFn, n: int | None = None) -> Partition:
    """Broker 0's partition (n ≤ 3 replicas) after a few LeaderAndIsr, produce and fetch
    steps of core; finally its HW may be lowered (still well formed), so the encodings are
    checked beyond the states core's steps reach."""
    n = draw(st.integers(1, 3)) if n is None else n
    p = Partition(TP, 0)
    kinds = draw(st.lists(st.sampled_from(["append", "data", "fetch", "append", "data",
                                           "fetch", "lead", "follow", "shrink"]),
                          min_size=3, max_size=8))
    kinds[0] = draw(st.sampled_from(["lead", "lead", "follow"]))
    for kind in kinds:
        p = _step(draw, p, n, kind)
    if p.high_watermark > p.log_start_offset and draw(st.booleans()):
        p = replace(p, high_watermark=draw(st.integers(p.log_start_offset, p.high_watermark)))
    return p


def _step(draw: st.DrawFn, p: Partition, n: int, kind: str) -> Partition:
    now = draw(st.integers(0, 4))
    epoch = p.leader_epoch + draw(st.integers(1, 2))
    result: Result[Partition, object]
    if kind == "lead":
        req = request(0, draw(subsets_with(n, 0)), n, epoch)
        result = make_leader(p, req, now).map(lambda r: r.partition)
    elif kind == "follow" and n > 1:
        leader = draw(st.integers(1, n - 1))
        req = request(leader, draw(subsets_with(n, leader)), n, epoch)
        rule = TRUNCATION_RULES[draw(st.sampled_from(sorted(TRUNCATION_RULES)))]
        result = make_follower(p, req, rule, draw(logs)).map(lambda r: r.partition)
    elif kind == "append" and len(p.log) < 4:
        ids = tuple(draw(st.lists(st.integers(0, 3), min_size=1, max_size=2)))
        result = append_records_to_leader(p, ids, ACKS_LEADER).map(lambda r: r.partition)
    elif kind == "fetch" and n > 1 and p.assigned_replicas:
        offset = draw(st.integers(0, len(p.log)))
        read = read_from_local_log(p, offset, 0, now)
        j = draw(st.integers(1, n - 1))
        result = read.bind(lambda r: update_follower_fetch(p, j, r)).map(lambda u: u.partition)
    elif kind == "data" and len(p.log) < 4:
        fetched = tuple(Record(i, draw(st.integers(0, 3)))
                        for i in draw(st.lists(st.integers(0, 3), max_size=2)))
        result = process_partition_data(p, len(p.log), fetched, draw(st.integers(0, 5)))
    elif kind == "shrink":
        result = maybe_shrink_isr(p, now, draw(st.integers(0, 2))).map(lambda u: u.partition)
    else:
        return p
    return result.unwrap() if is_successful(result) else p


# ---------------------------------------------------------------------------------------
# makeLeader / makeFollower
# ---------------------------------------------------------------------------------------


@FAST
@given(st.data())
def test_make_leader_admits_exactly_the_python_successor(data: st.DataObject) -> None:
    p = data.draw(partitions())
    n = n_of(p)
    isr = data.draw(subsets_with(n, data.draw(st.integers(0, n - 1))))  # leader 0 may be out
    req = request(0, isr, n, data.draw(st.integers(0, 3)), data.draw(st.integers(0, 2)))
    now = data.draw(st.integers(-1, 5))
    lag = data.draw(st.one_of(st.none(), st.integers(-1, 3)))  # KAFKA-4485's HW rule
    python = make_leader(p, req, now, lag).map(lambda r: r.partition)

    def rel(s: ck.BrokerState, t: ck.BrokerState, w: Fresh) -> z3.BoolRef:
        return ck.make_leader(s, t, sym_request(req, n), z3.IntVal(now),
                              None if lag is None else z3.IntVal(lag))

    assert admitted(rel, broker_view(p, n), n) == expected(python, n)


@FAST
@given(st.data(), st.sampled_from(sorted(TRUNCATION_RULES)))
def test_make_follower_admits_exactly_the_python_successor_for_each_rule(
    data: st.DataObject, rule: str
) -> None:
    p = data.draw(partitions(n=data.draw(st.integers(2, 3))))
    # As for the leader's log (``logs``): epochs never decrease along a Kafka log; the
    # generator's follow steps can give the follower a log that breaks it (epoch 2, then 1),
    # on which the KIP-101/279 lookups of the encoding and the Python may differ.
    assume(all(a.epoch <= b.epoch for a, b in itertools.pairwise(p.log)))
    n = n_of(p)
    leader = data.draw(st.integers(0, n - 1))  # 0: not a follower, rejected
    req = request(leader, data.draw(subsets_with(n, leader)), n, data.draw(st.integers(0, 3)))
    leader_log = data.draw(st.one_of(logs, st.just(p.log[: data.draw(st.integers(0, 4))])))
    python = make_follower(p, req, TRUNCATION_RULES[rule], leader_log).map(
        lambda r: r.partition)
    sym, pinned = sym_log(leader_log, "L")

    def rel(s: ck.BrokerState, t: ck.BrokerState, w: Fresh) -> z3.BoolRef:
        return z3.And(pinned, ck.make_follower(s, t, sym_request(req, n), leader, rule, sym,
                                               w, BOUND))

    assert admitted(rel, broker_view(p, n), n) == expected(python, n)


ALIVE = MetadataSnapshot(alive_brokers=tuple(Broker(i, ()) for i in range(3)))


def become(p: Partition, req: PartitionState, cepoch: int, now: int, rule: str,
           leader_log: Log) -> Result[Partition, object]:
    """``become_leader_or_follower`` on a broker hosting ``p`` (its controller epoch the
    partition's), with every broker alive; the hosted partition afterwards."""
    manager = ReplicaManager(0, p.controller_epoch, (p,))
    request = LeaderAndIsrRequest(9, cepoch, ((TP, req),))
    result = become_leader_or_follower(manager, request, ALIVE, now, TRUNCATION_RULES[rule],
                                       lambda tp, leader: leader_log)
    return result.map(lambda r: next(q for q in r.manager.partitions if q.tp == TP))


@FAST
@given(st.data(), st.sampled_from(RULE_NAMES))
def test_become_leader_or_follower_admits_exactly_the_python_successor(
    data: st.DataObject, rule: str
) -> None:
    p = data.draw(partitions().filter(lambda q: bool(q.assigned_replicas)))
    n = n_of(p)
    leader = data.draw(st.integers(0, n - 1))
    cepoch = p.controller_epoch + data.draw(st.integers(-1, 1))
    epoch = p.leader_epoch + data.draw(st.integers(-1, 1))
    req = request(leader, data.draw(subsets_with(n, leader)), n, epoch, cepoch)
    now = data.draw(st.integers(-1, 3))
    leader_log = data.draw(logs)
    python = become(p, req, cepoch, now, rule, leader_log)
    sym, pinned = sym_log(leader_log, "L")

    def rel(s: ck.BrokerState, t: ck.BrokerState, w: Fresh) -> z3.BoolRef:
        if leader == 0:
            return ck.become_leader(s, t, sym_request(req, n), z3.IntVal(now))
        return z3.And(pinned, ck.become_follower(s, t, sym_request(req, n), leader, rule, sym,
                                                 w, z3.IntVal(now), BOUND))

    assert admitted(rel, broker_view(p, n), n) == expected(python, n)


def test_each_rule_truncates_a_diverged_follower_where_core_does() -> None:
    # Follower log [(1,0),(2,1),(3,1)] with HW 1; the leader holds [(1,0),(5,2)].
    # truncate-to-hw: 1; KIP-101 (epoch 1 ends where epoch 2 starts): 1; KIP-279: 1 ...
    # and with leader [(1,0),(2,1),(4,2)]: KIP-101 gives 2 (end of epoch 1), KIP-279 gives 2.
    follower = replace(Partition(TP, 0), leader=None, assigned_replicas=(0, 1),
                       log=((Record(1, 0), Record(2, 1), Record(3, 1))), high_watermark=1,
                       log_created=True)
    # ... and with leader [(1,0),(2,1)] (same last epoch, shorter): KIP-101 gives the
    # leader's LEO 2, KIP-279 the agreement 2.  Kafka 2.0's KIP-279 agrees with KIP-279
    # while the follower's epoch 1 lies within the leader's epochs; against [(7,2)] (epoch 1
    # older than the leader's first) Kafka 0.11 and 2.0 answer UNDEFINED (HW 1), 2.1 cuts to 0.
    for leader_log, cuts in (((Record(1, 0), Record(5, 2)), (1, 1, 1, 1)),
                             ((Record(1, 0), Record(2, 1), Record(4, 2)), (1, 2, 2, 2)),
                             ((Record(1, 0), Record(2, 1)), (1, 2, 2, 2)),
                             ((Record(7, 2),), (1, 1, 1, 0))):
        for rule, cut in zip(RULE_NAMES, cuts, strict=True):
            req = request(1, (1,), 2, 1)
            after = ok(make_follower(follower, req, TRUNCATION_RULES[rule], leader_log))
            assert len(after.partition.log) == cut
            sym, pinned = sym_log(leader_log, "L")

            def rel(s: ck.BrokerState, t: ck.BrokerState, w: Fresh, r: str = rule,
                    sl: ck.SymLog = sym, pl: z3.BoolRef = pinned,
                    rq: PartitionState = req) -> z3.BoolRef:
                return z3.And(pl, ck.make_follower(s, t, sym_request(rq, 2), 1, r, sl, w,
                                                   None))

            # The unbounded (quantified) form, as the proofs use it, agrees too.
            assert only_successor(rel, broker_view(follower, 2),
                                  broker_view(after.partition, 2), 2)


# ---------------------------------------------------------------------------------------
# Produce and fetch
# ---------------------------------------------------------------------------------------


@FAST
@given(st.data(), st.sampled_from([0, 1, -1, -1, -1, 2]))
def test_append_as_leader_admits_exactly_the_python_successor(data: st.DataObject,
                                                              acks: int) -> None:
    p = data.draw(partitions())
    n = n_of(p)
    ids = tuple(data.draw(st.lists(st.integers(0, 3), min_size=1, max_size=2)))
    min_isr = len(p.isr) + data.draw(st.integers(-1, 1))  # around the acks=all boundary
    lag = data.draw(st.one_of(st.none(), st.integers(-1, 3)))  # KAFKA-4485's HW rule
    now = 0 if lag is None else data.draw(st.integers(-1, 5))
    python = append_records_to_leader(p, ids, acks, min_isr, now_ms=now, hw_lag_ms=lag).map(
        lambda r: r.partition)

    def rel(s: ck.BrokerState, t: ck.BrokerState, w: Fresh) -> z3.BoolRef:
        timing = (None, None) if lag is None else (z3.IntVal(now), z3.IntVal(lag))
        return ck.append_as_leader(s, t, [z3.IntVal(i) for i in ids], acks, z3.IntVal(min_isr),
                                   *timing)

    assert admitted(rel, broker_view(p, n), n) == expected(python, n)


@FAST
@given(st.data(), st.sampled_from(["pre-2.1", "epoch-start", "near"]))
def test_a_fetch_on_the_leader_admits_exactly_the_python_successor(data: st.DataObject,
                                                                   rule: str) -> None:
    p = data.draw(partitions(n=data.draw(st.integers(2, 3))).filter(
        lambda q: bool(q.assigned_replicas)))
    n = n_of(p)
    j = data.draw(st.integers(0, n - 1))  # 0: not a follower, rejected
    offset = data.draw(st.integers(-1, len(p.log) + 1))
    now = data.draw(st.integers(0, 5))
    fstart = data.draw(st.integers(0, 1))
    start = {"pre-2.1": None, "epoch-start": leader_epoch_start_offset(p),
             "near": max(0, offset + data.draw(st.integers(-1, 1)))}[rule]
    previous = data.draw(st.booleans())  # KAFKA-4485's caught-up rule ...
    lag = data.draw(st.one_of(st.none(), st.integers(0, 3)))  # ... and its HW rule
    python = read_from_local_log(p, offset, fstart, now).bind(
        lambda r: update_follower_fetch(p, j, r, since_previous_fetch=previous,
                                        leader_epoch_start=start, hw_lag_ms=lag)).map(
        lambda u: u.partition)

    def rel(s: ck.BrokerState, t: ck.BrokerState, w: Fresh) -> z3.BoolRef:
        es = None if start is None else z3.IntVal(start)
        return ck.follower_fetch_on_leader(s, t, j, z3.IntVal(offset), z3.IntVal(fstart),
                                           z3.IntVal(now), es, previous,
                                           None if lag is None else z3.IntVal(lag))

    assert admitted(rel, broker_view(p, n), n) == expected(python, n)


@FAST
@given(partitions())
def test_the_epoch_start_formula_has_exactly_core_s_leader_epoch_start_offset(
    p: Partition
) -> None:
    n = n_of(p)
    s = ck.fresh_broker(n, "s")
    x = z3.Int("x")
    solver = z3.Solver()
    solver.add(pin_broker(s, broker_view(p, n)), ck.epoch_start_is(s, x, BOUND))
    assert solver.check() == z3.sat
    assert solver.model().eval(x).as_long() == leader_epoch_start_offset(p)
    solver.add(x != leader_epoch_start_offset(p))
    assert solver.check() == z3.unsat


@FAST
@given(st.data())
def test_process_partition_data_admits_exactly_the_python_successor(
    data: st.DataObject
) -> None:
    p = data.draw(partitions().filter(lambda q: q.leader != 0))
    n = n_of(p)
    offset = len(p.log) + data.draw(st.sampled_from([0, 0, 0, -1, 1]))
    fetched = tuple(Record(i, e) for i, e in data.draw(
        st.lists(st.tuples(st.integers(0, 3), st.integers(0, 3)), max_size=2)))
    lhw, lstart = data.draw(st.integers(-1, 6)), data.draw(st.integers(0, 3))
    python = process_partition_data(p, offset, fetched, lhw, lstart)

    def rel(s: ck.BrokerState, t: ck.BrokerState, w: Fresh) -> z3.BoolRef:
        return ck.process_partition_data(
            s, t, z3.IntVal(offset), [z3.IntVal(r.id) for r in fetched],
            [z3.IntVal(r.epoch) for r in fetched], z3.IntVal(lhw), z3.IntVal(lstart))

    assert admitted(rel, broker_view(p, n), n) == expected(python, n)


def test_a_fetch_below_the_log_start_changes_nothing_on_the_leader() -> None:
    # A follower takes log start 1 from its leader, then leads: a fetch from 0 is
    # OFFSET_OUT_OF_RANGE (recorded as an unknown LEO, which a new leader's remote already
    # has: nothing changes), a fetch from 1 is recorded.
    p = ok(make_follower(Partition(TP, 0), request(1, (0, 1), 2, 0), TRUNCATION_RULES["kip279"],
                         ())).partition
    p = ok(process_partition_data(p, 0, (Record(7, 0), Record(8, 0)), 2, 1))
    assert (p.log_start_offset, p.high_watermark) == (1, 2)
    p = ok(make_leader(p, request(0, (0, 1), 2, 1), 0)).partition
    for offset, recorded in ((0, False), (1, True)):
        python = read_from_local_log(p, offset, 0, 3).bind(
            lambda r: update_follower_fetch(p, 1, r)).map(lambda u: u.partition)
        assert (python.unwrap() != p) == recorded

        def rel(s: ck.BrokerState, t: ck.BrokerState, w: Fresh, o: int = offset) -> z3.BoolRef:
            return ck.follower_fetch_on_leader(s, t, 1, z3.IntVal(o), z3.IntVal(0),
                                               z3.IntVal(3))

        assert admitted(rel, broker_view(p, 2), 2) == expected(python, 2)


# ---------------------------------------------------------------------------------------
# The leader-side ISR steps on broker states (leader or not)
# ---------------------------------------------------------------------------------------


@FAST
@given(st.data())
def test_the_isr_steps_admit_exactly_the_python_successor_on_any_broker(
    data: st.DataObject
) -> None:
    p = data.draw(partitions().filter(lambda q: bool(q.assigned_replicas)))
    n = n_of(p)
    now, lag = data.draw(st.integers(-1, 6)), data.draw(st.integers(0, 3))
    j = data.draw(st.integers(1, 2))
    start = data.draw(st.sampled_from([None, leader_epoch_start_offset(p)]))
    view = broker_view(p, n)
    es = None if start is None else z3.IntVal(start)
    assert admitted(lambda s, t, w: ck.increment_hw(s, t), view, n) == expected(
        maybe_increment_leader_hw(p).map(lambda u: u.partition), n)
    kafka_4485 = data.draw(st.booleans())  # the HW also over followers caught up within lag
    kafka_7152 = data.draw(st.booleans())  # a follower at the leader's LEO stays
    assert admitted(lambda s, t, w: ck.shrink(s, t, z3.IntVal(now), z3.IntVal(lag),
                                              kafka_4485, kafka_7152),
                    view, n) == expected(maybe_shrink_isr(p, now, lag, kafka_4485,
                                                          kafka_7152).map(
                        lambda u: u.partition), n)
    assert admitted(lambda s, t, w: ck.expand(s, t, j, es), view, n) == expected(
        maybe_expand_isr(p, j, start).map(lambda u: u.partition), n)
    sn, sl = z3.IntVal(now), z3.IntVal(lag)
    assert admitted(lambda s, t, w: ck.increment_hw(s, t, sn, sl), view, n) == expected(
        maybe_increment_leader_hw(p, now, lag).map(lambda u: u.partition), n)
    assert admitted(lambda s, t, w: ck.expand(s, t, j, es, sn, sl), view, n) == expected(
        maybe_expand_isr(p, j, start, now, lag).map(lambda u: u.partition), n)


# ---------------------------------------------------------------------------------------
# Leader selectors
# ---------------------------------------------------------------------------------------

ZkRel = Callable[[ck.ZkState, ck.ZkState], z3.BoolRef]


def zk_admitted(rel: ZkRel, before: ZkView, n: int) -> set[ZkView]:
    """Every ZooKeeper successor ``rel`` admits for ``before``."""
    c, d = ck.fresh_zk(n, "c"), ck.fresh_zk(n, "d")
    solver = z3.Solver()
    solver.add(pin_zk(c, before), rel(c, d))
    found: set[ZkView] = set()
    while len(found) < 3 and solver.check() == z3.sat:
        after = decode_zk(solver.model(), d)
        found.add(after)
        solver.add(z3.Not(pin_zk(d, after)))
    return found


def zk_expected(selection: Selection, n: int) -> set[ZkView]:
    return {zk_view(selection.unwrap().leader_and_isr, n)} if is_successful(selection) else set()


@st.composite
def zk_cases(draw: st.DrawFn) -> tuple[int, LeaderAndIsr, tuple[int, ...], frozenset[int],
                                       frozenset[int]]:
    n = draw(st.integers(1, 3))
    isr = tuple(draw(st.permutations(draw(st.lists(st.sampled_from(range(n)), unique=True)))))
    current = LeaderAndIsr(draw(st.integers(-1, n - 1)), draw(st.integers(-1, 3)), isr,
                           draw(st.integers(0, 3)))
    ar = tuple(draw(st.permutations(range(n))))
    live = frozenset(draw(st.lists(st.sampled_from(range(n)), unique=True)))
    other = frozenset(draw(st.lists(st.sampled_from(range(n)), unique=True)))
    return n, current, ar, live, other


def _flags(xs: frozenset[int], n: int) -> tuple[z3.BoolRef, ...]:
    return tuple(z3.BoolVal(i in xs) for i in range(n))


@settings(max_examples=60, deadline=None)
@given(zk_cases())
def test_every_leader_selector_admits_exactly_the_python_election(
    case: tuple[int, LeaderAndIsr, tuple[int, ...], frozenset[int], frozenset[int]]
) -> None:
    n, cur, ar, live, other = case
    view = zk_view(cur, n)
    lv, ot = _flags(live, n), _flags(other, n)
    for unclean in (False, True):
        def offline(c: ck.ZkState, d: ck.ZkState, u: bool = unclean) -> z3.BoolRef:
            return ck.offline_selector(c, d, ar, lv, u)

        assert zk_admitted(offline, view, n) == zk_expected(
            offline_partition_leader_selector(cur, ar, live, unclean), n)
    assert zk_admitted(lambda c, d: ck.reassigned_selector(c, d, ar, lv), view, n) \
        == zk_expected(reassigned_partition_leader_selector(cur, ar, live), n)
    assert zk_admitted(lambda c, d: ck.controlled_shutdown_selector(c, d, ar, lv, ot), view,
                       n) == zk_expected(
        controlled_shutdown_leader_selector(cur, ar, live, other), n)
    assert zk_admitted(lambda c, d: ck.preferred_selector(c, d, ar, lv), view, n) \
        == zk_expected(preferred_replica_partition_leader_selector(cur, ar, live), n)


def test_selectors_pick_the_first_replica_in_assignment_order() -> None:
    # ISR {1, 2} alive, AR order (2, 0, 1): the offline selector elects 2, as core does.
    cur = LeaderAndIsr(0, 3, (1, 2), 5)
    for ar in permutations(range(3)):
        python = offline_partition_leader_selector(cur, ar, frozenset({1, 2}))
        def rel(c: ck.ZkState, d: ck.ZkState, o: tuple[int, ...] = ar) -> z3.BoolRef:
            return ck.offline_selector(c, d, o, _flags(frozenset({1, 2}), 3), False)

        got = zk_admitted(rel, zk_view(cur, 3), 3)
        assert got == zk_expected(python, 3)
        assert next(iter(got)).leader == next(r for r in ar if r in (1, 2))


# ---------------------------------------------------------------------------------------
# The check can fail
# ---------------------------------------------------------------------------------------


def test_the_differential_check_catches_a_make_follower_that_keeps_the_hw() -> None:
    # A follower at HW 2 truncated to 1 by KIP-279: a mutant that keeps the HW is caught.
    follower = replace(Partition(TP, 0), leader=None, assigned_replicas=(0, 1),
                       log=(Record(1, 0), Record(2, 0)), high_watermark=2, log_created=True)
    leader_log = (Record(1, 0), Record(7, 1))
    req = request(1, (1,), 2, 1)
    python = ok(make_follower(follower, req, TRUNCATION_RULES["kip279"], leader_log))
    assert python.partition.high_watermark == 1
    sym, pinned = sym_log(leader_log, "L")

    def mutant(s: ck.BrokerState, t: ck.BrokerState, w: Fresh) -> z3.BoolRef:
        u = ck.fresh_broker(2, "u")
        real = ck.make_follower(s, u, sym_request(req, 2), 1, "kip279", sym, w, BOUND)
        return z3.And(pinned, real, ck.unchanged(u, t, "hw"), t.hw == s.hw)

    good = admitted(lambda s, t, w: z3.And(pinned, ck.make_follower(
        s, t, sym_request(req, 2), 1, "kip279", sym, w, BOUND)), broker_view(follower, 2), 2)
    assert good == {broker_view(python.partition, 2)}
    assert admitted(mutant, broker_view(follower, 2), 2) != good


def test_the_previous_fetch_rule_dates_the_catch_up_as_core_does() -> None:
    # KAFKA-4485: follower 1 read up to 2 (the LEO then) at t=1; at t=3 it reads from 2
    # while the LEO is 3, so core dates its catch-up to t=1 (not reached by the older rule)
    p = ok(make_leader(Partition(TP, 0), request(0, (0, 1), 2, 0), 0)).partition
    p = ok(append_records_to_leader(p, (1, 2), ACKS_LEADER)).partition
    p = ok(read_from_local_log(p, 0, 0, 1).bind(lambda r: update_follower_fetch(p, 1, r))
           ).partition
    p = ok(append_records_to_leader(p, (3,), ACKS_LEADER)).partition
    read = ok(read_from_local_log(p, 2, 0, 3))
    for previous, caught in ((True, 1), (False, 0)):
        python = update_follower_fetch(p, 1, read, since_previous_fetch=previous).map(
            lambda u: u.partition)
        assert python.unwrap().remotes[0].last_caught_up_time_ms == caught

        def rel(s: ck.BrokerState, t: ck.BrokerState, w: Fresh,
                prev: bool = previous) -> z3.BoolRef:
            return ck.follower_fetch_on_leader(s, t, 1, z3.IntVal(2), z3.IntVal(0),
                                               z3.IntVal(3), None, prev)

        assert admitted(rel, broker_view(p, 2), 2) == expected(python, 2)
