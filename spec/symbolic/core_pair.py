"""A leader and one follower's log within one leader tenure: the ``kafka`` model's atomic fetch.

``PairSystem(n)`` is a ``isrlab.checker.z3.SymbolicSystem`` over the leader's ``BrokerState``
(broker 0, leading) and the log and HW of follower 1 (``f.end``, arrays ``f.rid``/``f.rep``,
``f.hw``).  Its action families are the leader's own steps (append with acks 1 and all,
HW raise, ISR shrink, ISR expansion of either follower, a fetch by follower 2 whose log is
not tracked) and ``Fetch(1)``: the ``kafka`` model's atomic fetch (``fetch=atomic``) — the
leader reads from the follower's LEO and records it (``follower_fetch_on_leader``, either
expansion rule), the follower appends everything read and takes ``min(leader HW before
the fetch, its LEO)`` (``process_partition_data``).  A read outside ``[log start, LEO]``
changes nothing.

What it is for: the cross-broker invariants one broker's state cannot express —
*the follower's log is a prefix of the leader's* (so the two logs match below the smaller
HW), *the follower's HW is at most the leader's*, and *an ISR follower holds every
committed record* (``isr[1] ⇒ leader HW ≤ follower LEO``).  Shortcut: one tenure, no
leader change (``make_leader``/``make_follower`` and truncation are the one-broker
relations of ``core_kafka``); ``Init`` is any tenure start satisfying the invariants.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import NamedTuple

import z3

from isrlab.checker.z3 import ActionInstance, Frame, Fresh, SymbolicProperty
from isrlab.spec.symbolic.core_kafka import (
    BrokerState,
    SymLog,
    append_as_leader,
    broker_signature,
    broker_state,
    epoch_start_is,
    expand,
    follower_fetch_on_leader,
    increment_hw,
    shrink,
    well_formed,
)
from isrlab.spec.symbolic.core_system import BrokerView, decode_broker, pin_broker, pin_log

FOLLOWER = 1


class PairView(NamedTuple):
    """A concrete pair: the leader's broker view, follower 1's log and HW."""

    leader: BrokerView
    follower_log: tuple[tuple[int, int], ...]
    follower_hw: int


def _int(e: z3.ExprRef) -> z3.ArithRef:
    assert isinstance(e, z3.ArithRef)
    return e


def _arr(e: z3.ExprRef) -> z3.ArrayRef:
    assert isinstance(e, z3.ArrayRef)
    return e


def follower_log(s: Frame) -> SymLog:
    """Follower 1's log in frame ``s``."""
    return SymLog(_int(s["f.end"]), _arr(s["f.rid"]), _arr(s["f.rep"]))


def follower_hw(s: Frame) -> z3.ArithRef:
    """Follower 1's HW in frame ``s``."""
    return _int(s["f.hw"])


def is_prefix(short: SymLog, long: SymLog) -> z3.BoolRef:
    """``short`` is a prefix of ``long`` (same record at every offset of ``short``)."""
    o = z3.Int("prefix!o")
    return z3.And(short.end <= long.end, z3.ForAll([o], z3.Implies(
        z3.And(o >= 0, o < short.end),
        z3.And(short.rid[o] == long.rid[o], short.rep[o] == long.rep[o]))))


def fetched_into(f: SymLog, leader: BrokerState, g: SymLog) -> z3.BoolRef:
    """``g`` is ``f`` followed by the leader's records from ``f.end`` to its LEO."""
    o = z3.Int("fetch!o")
    return z3.And(
        g.end == leader.end,
        g.rid == z3.Lambda([o], z3.If(o < f.end, f.rid[o], leader.rid[o])),
        g.rep == z3.Lambda([o], z3.If(o < f.end, f.rep[o], leader.rep[o])),
    )


def atomic_fetch(s: BrokerState, t: BrokerState, f: SymLog, g: SymLog, fhw: z3.ArithRef,
                 ghw: z3.ArithRef, now: z3.ArithRef, epoch_start: z3.ArithRef | None) -> z3.BoolRef:
    """The ``kafka`` model's ``Fetch(1)`` (atomic): leader side, then the follower's append.

    The read starts at the follower's LEO; outside ``[log start, LEO]`` nothing changes.
    """
    offset = f.end
    readable = z3.And(s.start <= offset, offset <= s.end)
    leader_side = follower_fetch_on_leader(s, t, FOLLOWER, offset, z3.IntVal(0), now,
                                           epoch_start)
    follower_side = z3.And(fetched_into(f, s, g), ghw == z3.If(s.hw <= g.end, s.hw, g.end))
    unchanged_follower = z3.And(g.end == f.end, g.rid == f.rid, g.rep == f.rep, ghw == fhw)
    return z3.And(leader_side, z3.If(readable, follower_side, unchanged_follower))


@dataclass(frozen=True)
class PairSystem:
    """Leader (broker 0) and follower 1's log, ``n ≥ 2`` replicas, one tenure, unbounded."""

    n: int = 3

    @property
    def name(self) -> str:
        """The system's name."""
        return f"kafka-core-pair(n={self.n})"

    def signature(self) -> list[tuple[str, z3.SortRef]]:
        """The leader's variables, then the follower's log and HW."""
        arr = z3.ArraySort(z3.IntSort(), z3.IntSort())
        return [*broker_signature(self.n), ("f.end", z3.IntSort()), ("f.rid", arr),
                ("f.rep", arr), ("f.hw", z3.IntSort())]

    def leader(self, s: Frame) -> BrokerState:
        """The leader's state in frame ``s``."""
        return broker_state(s.__getitem__, self.n)

    def init(self, s: Frame) -> z3.BoolRef:
        """A tenure start: broker 0 leads, every invariant holds (``IndInit`` is then
        trivial; the content is the step obligations)."""
        return z3.And([p.holds(s) for p in self.invariants()])

    def _leader_step(self, family: str, label: str, rel: object) -> ActionInstance:
        assert callable(rel)

        def relation(s: Frame, t: Frame, fresh: Fresh) -> z3.BoolRef:
            same = z3.And(follower_log(t).end == follower_log(s).end,
                          follower_log(t).rid == follower_log(s).rid,
                          follower_log(t).rep == follower_log(s).rep,
                          follower_hw(t) == follower_hw(s))
            step = rel(self.leader(s), self.leader(t), fresh)
            assert isinstance(step, z3.BoolRef)
            return z3.And(step, same)

        return ActionInstance(family, label, relation)

    def actions(self) -> list[ActionInstance]:
        """The leader's steps and follower 1's atomic fetch (see the module docstring)."""
        def fetch(epoch_start: bool) -> ActionInstance:
            def relation(s: Frame, t: Frame, fresh: Fresh) -> z3.BoolRef:
                es = fresh.int("estart") if epoch_start else None
                side = epoch_start_is(self.leader(s), es, None) if es is not None else True
                return z3.And(side, atomic_fetch(
                    self.leader(s), self.leader(t), follower_log(s), follower_log(t),
                    follower_hw(s), follower_hw(t), fresh.int("now"), es))
            suffix = "[epoch-start]" if epoch_start else ""
            return ActionInstance(f"Fetch{suffix}", f"Fetch{suffix}(1)", relation)

        out = [fetch(False), fetch(True)]
        for acks in (1, -1):
            out.append(self._leader_step(
                "AppendAsLeader", f"AppendAsLeader(acks={acks})",
                lambda a, b, f, k=acks: append_as_leader(a, b, (f.int("id"),), k,
                                                         f.int("minisr"))))
        out += [
            self._leader_step("IncrementHw", "IncrementHw", lambda a, b, f: increment_hw(a, b)),
            self._leader_step("ShrinkIsr", "ShrinkIsr",
                              lambda a, b, f: shrink(a, b, f.int("now"), f.int("lag"))),
        ]
        for j in range(1, self.n):
            out.append(self._leader_step("ExpandIsr", f"ExpandIsr({j})",
                                         lambda a, b, f, k=j: expand(a, b, k)))
        for j in range(2, self.n):
            out.append(self._leader_step(
                "FetchOnLeader(other)", f"FetchOnLeader({j})",
                lambda a, b, f, k=j: follower_fetch_on_leader(
                    a, b, k, f.int("offset"), z3.IntVal(0), f.int("now"))))
        return out

    def invariants(self) -> list[SymbolicProperty]:
        """The cross-broker invariants (and the leader's own well-formedness)."""
        def prop(name: str, doc: str, holds: object) -> SymbolicProperty:
            assert callable(holds)
            return SymbolicProperty(name, holds, doc)

        lead = self.leader
        return [
            prop("LeaderWellFormed", "broker 0 leads and its partition is well formed",
                 lambda s: z3.And(lead(s).leader == 0, well_formed(lead(s)))),
            prop("FollowerLogIsLeaderPrefix", "the follower's log is a prefix of the leader's",
                 lambda s: is_prefix(follower_log(s), lead(s).log)),
            prop("FollowerHwWithinLeaderHw", "0 ≤ follower HW ≤ min(follower LEO, leader HW)",
                 lambda s: z3.And(follower_hw(s) >= 0, follower_hw(s) <= follower_log(s).end,
                                  follower_hw(s) <= lead(s).hw)),
            prop("RemoteLeoNotAhead", "the leader's view of the follower's LEO is not ahead",
                 lambda s: lead(s).rleo[FOLLOWER] <= follower_log(s).end),
            prop("IsrFollowerHoldsCommitted", "in the ISR ⇒ leader HW ≤ follower LEO",
                 lambda s: z3.Implies(lead(s).isr[FOLLOWER],
                                      lead(s).hw <= follower_log(s).end)),
        ]

    def magnitudes(self, s: Frame) -> list[z3.ArithRef]:
        """The numbers a CTI should keep small."""
        b = self.leader(s)
        return [b.hw, b.end, b.start, b.epoch, follower_log(s).end, follower_hw(s),
                *b.rleo[1:], *b.caught[1:]]

    def decode(self, model: z3.ModelRef, s: Frame) -> PairView:
        """The concrete pair of frame ``s``."""
        f = follower_log(s)
        end = model.eval(f.end, model_completion=True)
        assert isinstance(end, z3.IntNumRef)

        def num(x: z3.ExprRef) -> int:
            v = model.eval(x, model_completion=True)
            assert isinstance(v, z3.IntNumRef)
            return int(v.as_long())

        cells = tuple((num(f.rid[o]), num(f.rep[o])) for o in range(end.as_long()))
        return PairView(decode_broker(model, self.leader(s)), cells, num(follower_hw(s)))

    def pin(self, s: Frame, state: PairView) -> z3.BoolRef:
        """Frame ``s`` is ``state``."""
        return z3.And(pin_broker(self.leader(s), state.leader),
                      pin_log(follower_log(s), state.follower_log),
                      follower_hw(s) == state.follower_hw)
