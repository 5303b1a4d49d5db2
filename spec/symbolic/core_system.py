"""Concrete views of ``isrlab.spec.symbolic.core_kafka``'s states, and the ``CoreKafkaSystem``.

``BrokerView`` / ``ZkView`` are the hashable concrete values of a ``BrokerState`` /
``ZkState``; ``broker_view(partition, n)`` and ``zk_view(leader_and_isr, n)`` read them off
``core``'s own values, ``pin_*`` / ``decode_*`` move them in and out of Z3.

``CoreKafkaSystem(n)`` is a ``isrlab.checker.z3.SymbolicSystem`` whose state is one broker's
partition (broker 0) next to the ZooKeeper ``LeaderAndIsr`` the controller elects into, and
whose action families are the encoded ``core`` functions with every argument an existential
parameter (``Fresh``): ``isrlab prove`` discharges its obligations
(``isrlab.proofs.core_obligations``).
Modelling shortcut: the two halves never constrain each other (the broker does not read
ZooKeeper, the selectors do not read the broker) — each family is one ``core`` call, not a
model step; batches are of one record; the leader log of a truncation is any log.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from itertools import permutations
from typing import NamedTuple

import z3

from isrlab.checker.z3 import ActionInstance, Frame, Fresh, StepProperty, SymbolicProperty
from isrlab.core.state import LeaderAndIsr, Partition
from isrlab.spec.symbolic.core_kafka import (
    REMOTE_DEFAULTS,
    REMOTES,
    RULES,
    BrokerState,
    Request,
    SymLog,
    ZkState,
    append_as_leader,
    become_follower,
    become_leader,
    broker_signature,
    broker_state,
    committed_prefix,
    controlled_shutdown_selector,
    epoch_start_is,
    expand,
    follower_fetch_on_leader,
    increment_hw,
    leader_log_well_formed,
    make_follower,
    make_leader,
    offline_selector,
    preferred_selector,
    process_partition_data,
    reassigned_selector,
    remotes_default,
    shrink,
    unchanged,
    zk_signature,
    zk_state,
)

Remote = tuple[int, int, int, int, int]
DEFAULT_REMOTE: Remote = tuple(REMOTE_DEFAULTS[f] for f in REMOTES)  # type: ignore[assignment]  # five ints


class BrokerView(NamedTuple):
    """A concrete broker state: the encoded fields of a ``Partition`` on broker 0.

    ``log`` is ``(id, epoch)`` per offset; ``remotes`` the five remote fields of brokers
    ``1 … n-1`` (``DEFAULT_REMOTE`` on a non-leader); ``leader`` -1 for none.
    """

    leader: int
    epoch: int
    cepoch: int
    zk: int
    hw: int
    start: int
    created: bool
    log: tuple[tuple[int, int], ...]
    isr: tuple[bool, ...]
    remotes: tuple[Remote, ...]


class ZkView(NamedTuple):
    """A concrete ``LeaderAndIsr`` with the ISR as membership flags."""

    leader: int
    epoch: int
    isr: tuple[bool, ...]
    zk: int


def broker_view(p: Partition, n: int) -> BrokerView:
    """The encoded fields of ``p`` (broker 0's partition of ``n`` replicas)."""
    assert p.local_broker_id == 0 and not p.open_txn_first_offsets
    by_id = {r.broker_id: r for r in p.remotes}

    def remote(i: int) -> Remote:
        r = by_id.get(i)
        if r is None:
            return DEFAULT_REMOTE
        return (r.log_end_offset, r.log_start_offset, r.last_caught_up_time_ms,
                r.last_fetch_leader_log_end_offset, r.last_fetch_time_ms)

    return BrokerView(
        -1 if p.leader is None else p.leader, p.leader_epoch, p.controller_epoch, p.zk_version,
        p.high_watermark, p.log_start_offset, p.log_created,
        tuple((r.id, r.epoch) for r in p.log), tuple(i in p.isr for i in range(n)),
        tuple(remote(i) for i in range(1, n)),
    )


def zk_view(state: LeaderAndIsr, n: int) -> ZkView:
    """The encoded fields of a ``LeaderAndIsr``."""
    return ZkView(state.leader, state.leader_epoch, tuple(i in state.isr for i in range(n)),
                  state.zk_version)


def pin_log(log: SymLog, cells: Sequence[tuple[int, int]]) -> z3.BoolRef:
    """``log`` is exactly ``cells`` (the cells at or past its end are left free)."""
    eqs = [log.end == len(cells)]
    for o, (rid, rep) in enumerate(cells):
        eqs += [log.rid[o] == rid, log.rep[o] == rep]
    return z3.And(eqs)


def pin_broker(s: BrokerState, v: BrokerView) -> z3.BoolRef:
    """``s`` is the concrete ``v`` (constrains exactly what ``decode_broker`` reads)."""
    eqs = [s.leader == v.leader, s.epoch == v.epoch, s.cepoch == v.cepoch, s.zk == v.zk,
           s.hw == v.hw, s.start == v.start, s.created == v.created,
           pin_log(s.log, v.log)]
    eqs += [s.isr[i] == v.isr[i] for i in range(s.n)]
    for k, f in enumerate(REMOTES):
        eqs += [getattr(s, f)[i] == v.remotes[i - 1][k] for i in range(1, s.n)]
    return z3.And(eqs)


def pin_zk(z: ZkState, v: ZkView) -> z3.BoolRef:
    """``z`` is the concrete ``v``."""
    return z3.And(z.leader == v.leader, z.epoch == v.epoch, z.zk == v.zk,
                  *[z.isr[i] == v.isr[i] for i in range(len(z.isr))])


K4485 = "[kafka-4485]"
"""The suffix of the families taking KAFKA-4485's rules (Kafka 0.10.2+, the ``kafka``
model's default ``kafka_4485``): the previous-fetch catch-up and the HW over caught-up
followers, ``now`` and ``lag`` existential."""


def _num(model: z3.ModelRef, x: z3.ExprRef) -> int:
    value = model.eval(x, model_completion=True)
    if not isinstance(value, z3.IntNumRef):  # MBQI models may hold lambda terms
        value = z3.simplify(value)
    assert isinstance(value, z3.IntNumRef), f"{x} = {value} is not a numeral"
    return int(value.as_long())


def _flag(model: z3.ModelRef, x: z3.ExprRef) -> bool:
    return bool(z3.is_true(model.eval(x, model_completion=True)))


def decode_broker(model: z3.ModelRef, s: BrokerState) -> BrokerView:
    """The concrete broker state ``s`` takes in ``model``."""
    end = _num(model, s.end)
    log = tuple((_num(model, s.rid[o]), _num(model, s.rep[o])) for o in range(end))
    remotes = tuple(tuple(_num(model, getattr(s, f)[i]) for f in REMOTES)
                    for i in range(1, s.n))
    return BrokerView(
        _num(model, s.leader), _num(model, s.epoch), _num(model, s.cepoch), _num(model, s.zk),
        _num(model, s.hw), _num(model, s.start), _flag(model, s.created), log,
        tuple(_flag(model, b) for b in s.isr), remotes,  # type: ignore[arg-type]  # 5-tuples
    )


def decode_zk(model: z3.ModelRef, z: ZkState) -> ZkView:
    """The concrete ``LeaderAndIsr`` ``z`` takes in ``model``."""
    return ZkView(_num(model, z.leader), _num(model, z.epoch),
                  tuple(_flag(model, b) for b in z.isr), _num(model, z.zk))


def describe(state: tuple[BrokerView, ZkView]) -> str:
    """A one-line rendering of a (broker, ZooKeeper) state for CTIs."""
    b, z = state
    isr = [i for i, x in enumerate(b.isr) if x]
    zisr = [i for i, x in enumerate(z.isr) if x]
    remotes = "" if b.leader != 0 else " remotes(leo,start,caught,lfleo,lftime)=" + str(
        list(b.remotes))
    return (f"broker0: leader={b.leader} epoch={b.epoch} cepoch={b.cepoch} hw={b.hw} "
            f"start={b.start} log={list(b.log)} isr={isr}{remotes}; "
            f"zk: leader={z.leader} epoch={z.epoch} isr={zisr}")


# ---------------------------------------------------------------------------------------
# The symbolic system
# ---------------------------------------------------------------------------------------

CoreState = tuple[BrokerView, ZkView]
BrokerRel = Callable[[BrokerState, BrokerState, Fresh], z3.BoolRef]
ZkRel = Callable[[ZkState, ZkState, Fresh], z3.BoolRef]


def _request(fresh: Fresh, n: int) -> Request:
    return Request(fresh.int("cepoch"), fresh.int("epoch"),
                   tuple(_as_bool(fresh.const(f"isr{i}", z3.BoolSort())) for i in range(n)),
                   fresh.int("zk"))


def _as_bool(e: z3.ExprRef) -> z3.BoolRef:
    assert isinstance(e, z3.BoolRef)
    return e


def _as_array(e: z3.ExprRef) -> z3.ArrayRef:
    assert isinstance(e, z3.ArrayRef)
    return e


def _leader_log(fresh: Fresh) -> SymLog:
    arr = z3.ArraySort(z3.IntSort(), z3.IntSort())
    return SymLog(fresh.int("lend"), _as_array(fresh.const("lrid", arr)),
                  _as_array(fresh.const("lrep", arr)))


def _bools(fresh: Fresh, name: str, n: int) -> tuple[z3.BoolRef, ...]:
    return tuple(_as_bool(fresh.const(f"{name}{i}", z3.BoolSort())) for i in range(n))


def _offline(ar: tuple[int, ...], n: int, unclean: bool) -> ZkRel:
    def rel(c: ZkState, d: ZkState, f: Fresh) -> z3.BoolRef:
        return offline_selector(c, d, ar, _bools(f, "live", n), unclean)
    return rel


def _reassigned(ar: tuple[int, ...], n: int) -> ZkRel:
    def rel(c: ZkState, d: ZkState, f: Fresh) -> z3.BoolRef:
        return reassigned_selector(c, d, ar, _bools(f, "live", n))
    return rel


def _controlled_shutdown(ar: tuple[int, ...], n: int) -> ZkRel:
    def rel(c: ZkState, d: ZkState, f: Fresh) -> z3.BoolRef:
        return controlled_shutdown_selector(c, d, ar, _bools(f, "live", n), _bools(f, "sd", n))
    return rel


def _preferred(ar: tuple[int, ...], n: int) -> ZkRel:
    def rel(c: ZkState, d: ZkState, f: Fresh) -> z3.BoolRef:
        return preferred_selector(c, d, ar, _bools(f, "live", n))
    return rel


@dataclass(frozen=True)
class CoreKafkaSystem:
    """One broker's partition and the ZooKeeper LeaderAndIsr, ``n`` replicas, unbounded."""

    n: int = 3
    leader_holds_committed_prefix: bool = False
    """Assume of every truncation's leader log ``committed_prefix`` (a cross-broker fact
    this one-broker system cannot prove: see ``isrlab.proofs.core_obligations``)."""

    @property
    def name(self) -> str:
        """The system's name."""
        suffix = ", leader holds the committed prefix" if self.leader_holds_committed_prefix else ""
        return f"kafka-core(n={self.n}{suffix})"

    def signature(self) -> list[tuple[str, z3.SortRef]]:
        """Broker variables then ZooKeeper variables."""
        return broker_signature(self.n) + zk_signature(self.n)

    def broker(self, s: Frame) -> BrokerState:
        """The broker half of frame ``s``."""
        return broker_state(s.__getitem__, self.n)

    def zk(self, s: Frame) -> ZkState:
        """The ZooKeeper half of frame ``s``."""
        return zk_state(s.__getitem__, self.n)

    def init(self, s: Frame) -> z3.BoolRef:
        """``Partition(tp, 0)`` before any LeaderAndIsr; a new partition in ZooKeeper
        (no leader, epoch and version 0, every replica in the ISR)."""
        b, z = self.broker(s), self.zk(s)
        return z3.And(
            b.leader == -1, b.epoch == -1, b.cepoch == 0, b.zk == -1, b.hw == 0, b.start == 0,
            b.end == 0, z3.Not(b.created), *[z3.Not(x) for x in b.isr], remotes_default(b),
            z.leader == -1, z.epoch == 0, z.zk == 0, *z.isr,
        )

    def _broker_action(self, family: str, label: str, rel: BrokerRel) -> ActionInstance:
        def relation(s: Frame, t: Frame, fresh: Fresh) -> z3.BoolRef:
            zs, zt = self.zk(s), self.zk(t)
            same = z3.And(zs.leader == zt.leader, zs.epoch == zt.epoch, zs.zk == zt.zk,
                          *[zs.isr[i] == zt.isr[i] for i in range(self.n)])
            return z3.And(rel(self.broker(s), self.broker(t), fresh), same)

        return ActionInstance(family, label, relation)

    def _zk_action(self, family: str, label: str, rel: ZkRel) -> ActionInstance:
        def relation(s: Frame, t: Frame, fresh: Fresh) -> z3.BoolRef:
            bs, bt = self.broker(s), self.broker(t)
            return z3.And(rel(self.zk(s), self.zk(t), fresh), unchanged(bs, bt))

        return ActionInstance(family, label, relation)

    def actions(self) -> list[ActionInstance]:
        """Every encoded ``core`` function, arguments existential (see the module doc)."""
        return self._role_actions() + self._data_actions() + self._selector_actions()

    def _role_actions(self) -> list[ActionInstance]:
        n = self.n

        def leader(guard: bool, lagged: bool = False) -> BrokerRel:
            def rel(s: BrokerState, t: BrokerState, f: Fresh) -> z3.BoolRef:
                req, now = _request(f, n), f.int("now")
                lag = f.int("lag") if lagged else None
                return (become_leader(s, t, req, now, lag) if guard
                        else make_leader(s, t, req, now, lag))
            return rel

        def follower(j: int, rule: str, guard: bool) -> BrokerRel:
            def rel(s: BrokerState, t: BrokerState, f: Fresh) -> z3.BoolRef:
                req, log = _request(f, n), _leader_log(f)
                step = (become_follower(s, t, req, j, rule, log, f, f.int("now")) if guard
                        else make_follower(s, t, req, j, rule, log, f))
                assumed = (committed_prefix(s, log, None) if self.leader_holds_committed_prefix
                           else z3.BoolVal(True))
                return z3.And(leader_log_well_formed(log), assumed, step)
            return rel

        out = [self._broker_action("MakeLeader", "MakeLeader", leader(False)),
               self._broker_action("BecomeLeader", "BecomeLeader", leader(True)),
               self._broker_action(f"MakeLeader{K4485}", f"MakeLeader{K4485}",
                                   leader(False, True)),
               self._broker_action(f"BecomeLeader{K4485}", f"BecomeLeader{K4485}",
                                   leader(True, True))]
        for rule in RULES:
            for guard, kind in ((False, "MakeFollower"), (True, "BecomeFollower")):
                out += [self._broker_action(f"{kind}[{rule}]", f"{kind}[{rule}]({j})",
                                            follower(j, rule, guard)) for j in range(1, n)]
        return out

    def _data_actions(self) -> list[ActionInstance]:
        n = self.n

        def append(acks: int, lagged: bool = False) -> BrokerRel:
            def rel(s: BrokerState, t: BrokerState, f: Fresh) -> z3.BoolRef:
                timing = (f.int("now"), f.int("lag")) if lagged else (None, None)
                return append_as_leader(s, t, (f.int("id"),), acks, f.int("minisr"), *timing)
            return rel

        def fetch(j: int, epoch_start: bool, lagged: bool = False) -> BrokerRel:
            def rel(s: BrokerState, t: BrokerState, f: Fresh) -> z3.BoolRef:
                start = f.int("estart") if epoch_start else None
                side = epoch_start_is(s, start, None) if start is not None else z3.BoolVal(True)
                return z3.And(side, follower_fetch_on_leader(
                    s, t, j, f.int("offset"), f.int("fstart"), f.int("now"), start, lagged,
                    f.int("lag") if lagged else None))
            return rel

        def expand_with(j: int, epoch_start: bool, lagged: bool = False) -> BrokerRel:
            def rel(s: BrokerState, t: BrokerState, f: Fresh) -> z3.BoolRef:
                start = f.int("estart") if epoch_start else None
                side = epoch_start_is(s, start, None) if start is not None else z3.BoolVal(True)
                timing = (f.int("now"), f.int("lag")) if lagged else (None, None)
                return z3.And(side, expand(s, t, j, start, *timing))
            return rel

        def process(s: BrokerState, t: BrokerState, f: Fresh) -> z3.BoolRef:
            return process_partition_data(s, t, f.int("offset"), (f.int("id"),),
                                          (f.int("repoch"),), f.int("lhw"), f.int("lstart"))

        out = [self._broker_action("AppendAsLeader", f"AppendAsLeader(acks={a})", append(a))
               for a in (0, 1, -1)]
        out += [self._broker_action(f"AppendAsLeader{K4485}", f"AppendAsLeader{K4485}(acks={a})",
                                    append(a, True)) for a in (0, 1, -1)]
        for es, suffix in ((False, ""), (True, "[epoch-start]")):
            out += [self._broker_action(f"FetchOnLeader{suffix}", f"FetchOnLeader{suffix}({j})",
                                        fetch(j, es)) for j in range(1, n)]
            out += [self._broker_action(f"ExpandIsr{suffix}", f"ExpandIsr{suffix}({j})",
                                        expand_with(j, es)) for j in range(1, n)]
            out += [self._broker_action(f"FetchOnLeader{suffix}{K4485}",
                                        f"FetchOnLeader{suffix}{K4485}({j})",
                                        fetch(j, es, True)) for j in range(1, n)]
            out += [self._broker_action(f"ExpandIsr{suffix}{K4485}",
                                        f"ExpandIsr{suffix}{K4485}({j})",
                                        expand_with(j, es, True)) for j in range(1, n)]
        out += [
            self._broker_action("ProcessPartitionData", "ProcessPartitionData", process),
            self._broker_action("IncrementHw", "IncrementHw", lambda s, t, f: increment_hw(s, t)),
            self._broker_action(f"IncrementHw{K4485}", f"IncrementHw{K4485}",
                                lambda s, t, f: increment_hw(s, t, f.int("now"), f.int("lag"))),
            self._broker_action("ShrinkIsr", "ShrinkIsr",
                                lambda s, t, f: shrink(s, t, f.int("now"), f.int("lag"))),
            self._broker_action(f"ShrinkIsr{K4485}", f"ShrinkIsr{K4485}",
                                lambda s, t, f: shrink(s, t, f.int("now"), f.int("lag"), True)),
        ]
        return out

    def _selector_actions(self) -> list[ActionInstance]:
        n = self.n
        out: list[ActionInstance] = []
        for order in permutations(range(n)):
            label = "".join(map(str, order))

            out += [
                self._zk_action("OfflineSelector", f"Offline({label})",
                                _offline(order, n, unclean=False)),
                self._zk_action("OfflineSelector[unclean]", f"OfflineUnclean({label})",
                                _offline(order, n, unclean=True)),
                self._zk_action("ReassignedSelector", f"Reassigned({label})",
                                _reassigned(order, n)),
                self._zk_action("ControlledShutdownSelector", f"ControlledShutdown({label})",
                                _controlled_shutdown(order, n)),
                self._zk_action("PreferredSelector", f"Preferred({label})", _preferred(order, n)),
            ]
        return out

    def invariants(self) -> list[SymbolicProperty]:
        """The per-state invariants of the catalogue that make sense on this state."""
        n = self.n

        def prop(name: str, doc: str, f: Callable[[BrokerState, ZkState], z3.BoolRef]
                 ) -> SymbolicProperty:
            return SymbolicProperty(name, lambda s: f(self.broker(s), self.zk(s)), doc)

        return [
            prop("TypeOk", "epochs/versions ≥ -1, controller epoch ≥ 0, leader a replica or -1",
                 lambda b, z: z3.And(b.epoch >= -1, b.zk >= -1, b.cepoch >= 0,
                                     b.leader >= -1, b.leader < n)),
            prop("HwWithinLog", "0 ≤ log start ≤ HW ≤ LEO",
                 lambda b, z: z3.And(b.start >= 0, b.start <= b.hw, b.hw <= b.end)),
            prop("LeaderInIsr", "a leader is in its ISR (so the ISR is non-empty); ISR ⊆ AR "
                 "holds by construction", lambda b, z: z3.Implies(b.leader == 0, b.isr[0])),
            prop("RemoteLeoKnownOrUnknown", "a leader's remote LEOs are ≥ -1",
                 lambda b, z: z3.Implies(b.leader == 0,
                                         z3.And([b.rleo[i] >= -1 for i in range(1, n)]))),
            prop("FollowerTracksNoRemote", "a non-leader's remotes are the defaults",
                 lambda b, z: z3.Or(b.leader == 0, remotes_default(b))),
            prop("ZkTypeOk", "ZooKeeper epoch and version ≥ 0, leader a replica or -1",
                 lambda b, z: z3.And(z.epoch >= 0, z.zk >= 0, z.leader >= -1, z.leader < n)),
            prop("ZkLeaderInIsr", "ZooKeeper's leader (if any) is in its ISR",
                 lambda b, z: z3.And([z3.Implies(z.leader == i, z.isr[i]) for i in range(n)])),
        ]

    def log_epochs_sorted(self) -> SymbolicProperty:
        """The local log's record epochs never decrease with the offset (a lemma of the
        ``tla-*`` proofs; here an assumption: the fetched epochs come from another broker)."""
        def holds(s: Frame) -> z3.BoolRef:
            b = self.broker(s)
            o1, o2 = z3.Int("sorted!o1"), z3.Int("sorted!o2")
            return z3.ForAll([o1, o2], z3.Implies(z3.And(o1 >= 0, o1 <= o2, o2 < b.end),
                                                  b.rep[o1] <= b.rep[o2]))
        return SymbolicProperty("LogEpochsSorted", holds, "record epochs sorted by offset")

    def step_properties(self) -> list[StepProperty]:
        """Two-state properties: epochs never decrease; the HW never decreases."""
        def epochs(s: Frame, t: Frame) -> z3.BoolRef:
            a, b = self.broker(s), self.broker(t)
            return z3.And(b.epoch >= a.epoch, b.cepoch >= a.cepoch,
                          self.zk(t).epoch >= self.zk(s).epoch)

        def hw(s: Frame, t: Frame) -> z3.BoolRef:
            return self.broker(t).hw >= self.broker(s).hw

        return [StepProperty("EpochsNeverDecrease", epochs,
                             "leader and controller epochs of the broker, ZooKeeper's epoch"),
                StepProperty("HwNeverDecreases", hw, "the broker's high watermark")]

    def magnitudes(self, s: Frame) -> list[z3.ArithRef]:
        """The numbers a CTI should keep small."""
        b, z = self.broker(s), self.zk(s)
        return [b.hw, b.end, b.start, b.epoch, b.cepoch, b.zk, z.epoch, z.zk,
                *b.rleo[1:], *b.caught[1:], *b.lfleo[1:], *b.lftime[1:], *b.rstart[1:]]

    def decode(self, model: z3.ModelRef, s: Frame) -> CoreState:
        """The concrete state of frame ``s``."""
        return decode_broker(model, self.broker(s)), decode_zk(model, self.zk(s))

    def pin(self, s: Frame, state: CoreState) -> z3.BoolRef:
        """Frame ``s`` is ``state``."""
        return z3.And(pin_broker(self.broker(s), state[0]), pin_zk(self.zk(s), state[1]))
