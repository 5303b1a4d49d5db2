"""Z3 encodings of the ``tla-*`` models: KafkaTruncateToHighWatermark, Kip101, Kip279, Kip320.

One ``TlaSystem`` per (variant, number of replicas, bounds) is a
``isrlab.checker.z3.SymbolicSystem``
whose actions are the disjuncts of the specification's Next, one instance per choice of
replicas, and whose invariants are WeakIsr, StrongIsr and the structural facts the proofs use.

State variables (replica ``i`` and ``j`` range over ``0 … n-1``; ``-1`` is None / Nil):

* ``end.i`` (Int), ``rid.i`` and ``rep.i`` (arrays Int → Int): replica ``i``'s end offset and
  the id and leader epoch of the record at each offset below it;
* ``hw.i``, ``epoch.i``, ``leader.i`` (Int) and ``isr.i.j`` (Bool): replicaState[i];
* ``nextRecordId``, ``nextLeaderEpoch`` (Int);
* ``reqLeader`` (Int → Int) and ``reqIsr.j`` (Int → Bool): the LeaderAndIsr request of each
  epoch below ``nextLeaderEpoch`` (see ``isrlab.spec.symbolic.state`` for why this is exact);
* ``qEpoch``, ``qLeader`` (Int) and ``qIsr.j`` (Bool): quorumState.

``Bounds`` gives the explicit models' constants (LogSize, MaxRecords, MaxLeaderEpoch); they
enter only as guards (a full log cannot append, the id and epoch sequences stop), so every
bounded behaviour is a behaviour of the unbounded system (``bounds=None``), where offsets,
record ids and epochs are unbounded integers and the proofs are stated.  Set comprehension
(``Min``/``Max`` of offsets) becomes a fresh witness plus a universally quantified "nothing
smaller/larger" condition, expanded to a finite conjunction over ``0 … LogSize-1`` when bounded.

Modelling shortcuts: array cells at and beyond ``end.i`` (and requests at and beyond
``nextLeaderEpoch``) are unconstrained garbage, never read by any action or invariant;
``FollowerReplicate``/``FencedFollowerFetch`` are instantiated for follower ≠ leader only, as
replicating from oneself is disabled in the specification (the end offset is never an entry).
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property, partial
from itertools import permutations
from typing import TypeAlias, TypedDict

import z3

from isrlab.checker.z3 import ActionInstance, Frame, Fresh, SymbolicProperty
from isrlab.spec.symbolic.state import (
    NONE_REPLICA,
    KState,
    QuorumState,
    ReplicaState,
    replica_name,
)
from isrlab.spec.variants import get, of_base

Rel: TypeAlias = Callable[[Frame, Frame, Fresh], z3.BoolRef]
Family: TypeAlias = list[tuple[tuple[int, ...], Rel]]


def variant_keys() -> tuple[str, ...]:
    """The variants with a Z3 encoding of KafkaReplication (``isrlab.spec.variants``), as keys
    without ``tla-``."""
    return tuple(v.key for v in of_base().values()
                 if all(a.symbolic is not None for a in v.actions().values()))

Int: TypeAlias = z3.ArithRef
Bool: TypeAlias = z3.BoolRef


class SymmetryBreaking(TypedDict):
    """The symmetry-breaking keyword arguments of ``isrlab.checker.z3.bmc``."""

    first_step: tuple[str, ...] | None
    symmetries: list[dict[str, str]]
    violation: Callable[[Frame], Bool] | None


@dataclass(frozen=True, slots=True)
class Bounds:
    """The explicit models' constants: offsets 0..log_size-1, ids 0..max_records-1, epochs
    0..max_leader_epoch."""

    log_size: int
    max_records: int
    max_leader_epoch: int


def _min(a: Int, b: Int) -> Int:
    result: Int = z3.If(a <= b, a, b)
    return result


@dataclass(frozen=True)
class TlaSystem:
    """The symbolic ``tla-<variant>`` model for ``replicas`` replicas (see module docstring)."""

    variant: str
    replicas: int
    bounds: Bounds | None = None
    name: str = field(default="")

    def __post_init__(self) -> None:
        known = variant_keys()
        if self.variant not in known:
            raise ValueError(f"unknown variant {self.variant!r} (known: {', '.join(known)})")
        if not self.name:
            object.__setattr__(self, "name", f"tla-{self.variant}")

    # ----------------------------------------------------------------- signature, init

    @property
    def ids(self) -> range:
        """Replica indices."""
        return range(self.replicas)

    def signature(self) -> Sequence[tuple[str, z3.SortRef]]:
        """State variables and their sorts (see the module docstring)."""
        return self._signature

    @cached_property
    def _signature(self) -> list[tuple[str, z3.SortRef]]:
        ints = z3.IntSort()
        sig: list[tuple[str, z3.SortRef]] = []

        def table(base: str, sort: z3.SortRef, size: int) -> list[tuple[str, z3.SortRef]]:
            if self.bounds is None:
                return [(base, z3.ArraySort(z3.IntSort(), sort))]
            return [(f"{base}[{k}]", sort) for k in range(size)]

        logs = self.bounds.log_size if self.bounds else 0
        epochs = self.bounds.max_leader_epoch + 1 if self.bounds else 0
        for i in self.ids:
            sig += [(f"end.{i}", ints)]
            sig += table(f"rid.{i}", ints, logs) + table(f"rep.{i}", ints, logs)
            sig += [(f"hw.{i}", ints), (f"epoch.{i}", ints), (f"leader.{i}", ints)]
            sig += [(f"isr.{i}.{j}", z3.BoolSort()) for j in self.ids]
        sig += [("nextRecordId", ints), ("nextLeaderEpoch", ints)]
        sig += table("reqLeader", ints, epochs)
        for j in self.ids:
            sig += table(f"reqIsr.{j}", z3.BoolSort(), epochs)
        sig += [("qEpoch", ints), ("qLeader", ints)]
        sig += [(f"qIsr.{j}", z3.BoolSort()) for j in self.ids]
        return sig

    def init(self, s: Frame) -> Bool:
        """Init: empty logs, hw 0, no leader or epoch anywhere, the quorum ISR is every replica."""
        parts: list[Bool] = [s["nextRecordId"] == 0, s["nextLeaderEpoch"] == 0]
        for i in self.ids:
            parts += [s[f"end.{i}"] == 0, s[f"hw.{i}"] == 0, s[f"epoch.{i}"] == -1]
            parts += [s[f"leader.{i}"] == NONE_REPLICA]
            parts += [z3.Not(s[f"isr.{i}.{j}"]) for j in self.ids]
        parts += [s["qEpoch"] == -1, s["qLeader"] == NONE_REPLICA]
        parts += [s[f"qIsr.{j}"] for j in self.ids]
        return z3.And(parts)

    # ----------------------------------------------------------------- tables

    def _table_size(self, base: str) -> int:
        assert self.bounds is not None
        if base.startswith("req"):
            return self.bounds.max_leader_epoch + 1
        return self.bounds.log_size

    def table_vars(self, base: str) -> set[str]:
        """The state variables of table ``base`` (``rid.i``, ``rep.i``, ``reqLeader``,
        ``reqIsr.j``): one array unbounded, one scalar per index when bounded."""
        if self.bounds is None:
            return {base}
        return {f"{base}[{k}]" for k in range(self._table_size(base))}

    def cell(self, s: Frame, base: str, index: Int | int) -> z3.ExprRef:
        """Table ``base`` at ``index``: an array read, or an if-chain over the scalars when
        bounded (an out-of-range index reads the last cell: callers guard their indices)."""
        if self.bounds is None:
            return z3.Select(s[base], index)
        size = self._table_size(base)
        if not isinstance(index, int) and z3.is_int_value(index):
            index = index.as_long()
        if isinstance(index, int):
            return s[f"{base}[{min(max(index, 0), size - 1)}]"]
        result = s[f"{base}[{size - 1}]"]
        for k in reversed(range(size - 1)):
            result = z3.If(index == k, s[f"{base}[{k}]"], result)
        return result

    def store(self, s: Frame, t: Frame, base: str, index: Int, value: z3.ExprRef | int
              ) -> list[Bool]:
        """``t``'s table ``base`` is ``s``'s with ``value`` written at ``index``."""
        if self.bounds is None:
            return [t[base] == z3.Store(s[base], index, value)]
        return [t[f"{base}[{k}]"] == z3.If(index == k, value, s[f"{base}[{k}]"])
                for k in range(self._table_size(base))]

    # ----------------------------------------------------------------- helpers

    def _ranged(self, lo: Int | int, hi: Int, body: Callable[[Int], Bool]) -> Bool:
        """∀ o ∈ lo..hi-1 : body(o) over offsets."""
        return self.forall("offset", lo, hi, body)

    def forall(self, kind: str, lo: Int | int, hi: Int | int, body: Callable[[Int], Bool],
               name: str = "o") -> Bool:
        """∀ k ∈ lo..hi-1 : body(k), over offsets (``kind="offset"``) or epochs (``"epoch"``):
        a ``ForAll`` when unbounded, a conjunction over the bounded domain otherwise."""
        if self.bounds is not None:
            size = self.bounds.log_size if kind == "offset" else self.bounds.max_leader_epoch + 1
            return z3.And([z3.Implies(z3.And(lo <= k, hi > k), body(z3.IntVal(k)))
                           for k in range(size)])
        k = z3.Int(name)
        return z3.ForAll([k], z3.Implies(z3.And(lo <= k, k < hi), body(k)))

    @staticmethod
    def _same(s: Frame, t: Frame, changed: set[str]) -> list[Bool]:
        return [t[v] == s[v] for v in s if v not in changed]

    def _log_vars(self, i: int) -> set[str]:
        return {f"end.{i}"} | self.table_vars(f"rid.{i}") | self.table_vars(f"rep.{i}")

    def _rs_vars(self, i: int) -> set[str]:
        return {f"hw.{i}", f"epoch.{i}", f"leader.{i}"} | {f"isr.{i}.{j}" for j in self.ids}

    def _quorum_vars(self) -> set[str]:
        names = {"qEpoch", "qLeader", "nextLeaderEpoch"} | self.table_vars("reqLeader")
        for j in self.ids:
            names |= {f"qIsr.{j}"} | self.table_vars(f"reqIsr.{j}")
        return names

    def _same_entry(self, s: Frame, i: int, j: int, o: Int) -> Bool:
        """Replicas i and j hold the same record at offset o (both have an entry there)."""
        return z3.And(
            o < s[f"end.{i}"], o < s[f"end.{j}"],
            self.cell(s, f"rid.{i}", o) == self.cell(s, f"rid.{j}", o),
            self.cell(s, f"rep.{i}", o) == self.cell(s, f"rep.{j}", o),
        )

    def _presumes(self, s: Frame, i: int) -> Bool:
        return s[f"leader.{i}"] == i

    def _in(self, s: Frame, prefix: str, who: Int) -> Bool:
        """``who`` is a member of the Bool-vector set ``prefix.j``."""
        return z3.Or([z3.And(who == j, s[f"{prefix}{j}"]) for j in self.ids])

    # ----------------------------------------------------------------- controller

    def _update_isr(self, s: Frame, t: Frame, leader: Int, isr: Sequence[Bool]) -> list[Bool]:
        """ControllerUpdateIsr: the next epoch, a new quorum state and a new request."""
        e = s["nextLeaderEpoch"]
        parts = [t["nextLeaderEpoch"] == e + 1, t["qEpoch"] == e, t["qLeader"] == leader]
        if self.bounds is not None:
            parts.append(e <= self.bounds.max_leader_epoch)
        parts += self.store(s, t, "reqLeader", e, leader)
        for j in self.ids:
            parts += [t[f"qIsr.{j}"] == isr[j], *self.store(s, t, f"reqIsr.{j}", e, isr[j])]
        parts += self._same(s, t, self._quorum_vars())
        return parts

    def _controller_shrink_isr(self, r: int) -> Callable[[Frame, Frame, Fresh], Bool]:
        def rel(s: Frame, t: Frame, fresh: Fresh) -> Bool:
            q_isr = [s[f"qIsr.{j}"] for j in self.ids]
            without = [z3.BoolVal(False) if j == r else q_isr[j] for j in self.ids]
            only_r = z3.And([q_isr[j] if j == r else z3.Not(q_isr[j]) for j in self.ids])
            none = z3.IntVal(NONE_REPLICA)
            return z3.Or(
                z3.And(s["qLeader"] == r, only_r, *self._update_isr(s, t, none, q_isr)),
                z3.And(s["qLeader"] == r, z3.Not(only_r), *self._update_isr(s, t, none, without)),
                z3.And(s["qLeader"] != r, q_isr[r],
                       *self._update_isr(s, t, s["qLeader"], without)),
            )
        return rel

    def _controller_elect_leader(self, r: int) -> Callable[[Frame, Frame, Fresh], Bool]:
        def rel(s: Frame, t: Frame, fresh: Fresh) -> Bool:
            q_isr = [s[f"qIsr.{j}"] for j in self.ids]
            return z3.And(s[f"qIsr.{r}"], s["qLeader"] != r,
                          *self._update_isr(s, t, z3.IntVal(r), q_isr))
        return rel

    # ----------------------------------------------------------------- requests

    def _request_guard(self, s: Frame, e: Int, leader: int) -> Bool:
        return z3.And(e >= 0, e < s["nextLeaderEpoch"], self.cell(s, "reqLeader", e) == leader)

    def _adopt(self, s: Frame, t: Frame, i: int, e: Int, leader: int, hw: Int) -> list[Bool]:
        """replicaState[i] becomes request e's epoch, leader and ISR with high watermark hw."""
        parts = [t[f"epoch.{i}"] == e, t[f"leader.{i}"] == leader, t[f"hw.{i}"] == hw]
        parts += [t[f"isr.{i}.{j}"] == self.cell(s, f"reqIsr.{j}", e) for j in self.ids]
        return parts

    def _become_leader(self, i: int) -> Callable[[Frame, Frame, Fresh], Bool]:
        def rel(s: Frame, t: Frame, fresh: Fresh) -> Bool:
            e = fresh.int("req")
            return z3.And(
                self._request_guard(s, e, i), e > s[f"epoch.{i}"],
                *self._adopt(s, t, i, e, i, s[f"hw.{i}"]),
                *self._same(s, t, self._rs_vars(i)),
            )
        return rel

    # ----------------------------------------------------------------- leader side

    def _leader_write(self, i: int) -> Callable[[Frame, Frame, Fresh], Bool]:
        def rel(s: Frame, t: Frame, fresh: Fresh) -> Bool:
            end, rid = s[f"end.{i}"], s["nextRecordId"]
            parts = [self._presumes(s, i), t["nextRecordId"] == rid + 1,
                     t[f"end.{i}"] == end + 1,
                     *self.store(s, t, f"rid.{i}", end, rid),
                     *self.store(s, t, f"rep.{i}", end, s[f"epoch.{i}"])]
            if self.bounds is not None:
                parts += [rid <= self.bounds.max_records - 1, end < self.bounds.log_size]
            parts += self._same(s, t, self._log_vars(i) | {"nextRecordId"})
            return z3.And(parts)
        return rel

    def _quorum_update(self, s: Frame, t: Frame, i: int, isr: Sequence[Bool]) -> list[Bool]:
        """QuorumUpdateLeaderAndIsr: only the true leader rewrites the quorum's and its ISR."""
        parts = [s["qLeader"] == i, self._presumes(s, i), s[f"epoch.{i}"] == s["qEpoch"]]
        for j in self.ids:
            parts += [t[f"qIsr.{j}"] == isr[j], t[f"isr.{i}.{j}"] == isr[j]]
        changed = {f"qIsr.{j}" for j in self.ids} | {f"isr.{i}.{j}" for j in self.ids}
        return parts + self._same(s, t, changed)

    def _caught_up(self, s: Frame, leader: int, follower: int, end: Int) -> Bool:
        """IsFollowerCaughtUp: the follower follows and holds offset end-1 (the leader too)."""
        last = end - 1
        return z3.And(
            s[f"leader.{follower}"] == leader,
            z3.Or(end == 0, z3.And(end > 0, last < s[f"end.{leader}"],
                                   last < s[f"end.{follower}"])),
        )

    def _following_epoch(self, s: Frame, leader: int, follower: int) -> Bool:
        """IsFollowingLeaderEpoch (KIP-320): same leader and same epoch as a presumed leader."""
        return z3.And(self._presumes(s, leader), s[f"leader.{follower}"] == leader,
                      s[f"epoch.{follower}"] == s[f"epoch.{leader}"])

    def _isr_with(self, s: Frame, i: int, j: int, member: bool) -> list[Bool]:
        return [z3.BoolVal(member) if k == j else s[f"isr.{i}.{k}"] for k in self.ids]

    def _leader_shrink_isr(self, i: int, j: int, fenced: bool) -> Rel:
        def rel(s: Frame, t: Frame, fresh: Fresh) -> Bool:
            if fenced:
                lagging = z3.Or(z3.Not(self._following_epoch(s, i, j)),
                                s[f"end.{j}"] < s[f"end.{i}"])
            else:
                lagging = z3.Not(self._caught_up(s, i, j, s[f"end.{i}"]))
            return z3.And(s[f"isr.{i}.{j}"], lagging,
                          *self._quorum_update(s, t, i, self._isr_with(s, i, j, False)))
        return rel

    def _leader_expand_isr(self, i: int, j: int, fenced: bool) -> Rel:
        def rel(s: Frame, t: Frame, fresh: Fresh) -> Bool:
            hw = s[f"hw.{i}"]
            if fenced:
                reached_hw = z3.Or(hw == 0, z3.And(hw > 0, hw - 1 < s[f"end.{j}"]))
                hw_in_epoch = z3.Or(
                    hw == s[f"end.{i}"],
                    z3.And(hw < s[f"end.{i}"], hw >= 0,
                           self.cell(s, f"rep.{i}", hw) == s[f"epoch.{i}"]),
                )
                eligible = z3.And(self._following_epoch(s, i, j), reached_hw, hw_in_epoch)
            else:
                eligible = self._caught_up(s, i, j, hw)
            return z3.And(z3.Not(s[f"isr.{i}.{j}"]), eligible,
                          *self._quorum_update(s, t, i, self._isr_with(s, i, j, True)))
        return rel

    def _leader_inc_hw(self, i: int, fenced: bool) -> Rel:
        def rel(s: Frame, t: Frame, fresh: Fresh) -> Bool:
            hw = s[f"hw.{i}"]
            parts: list[Bool] = [t[f"hw.{i}"] == hw + 1]
            if fenced:
                parts.append(hw < s[f"end.{i}"])
                parts += [z3.Implies(s[f"isr.{i}.{j}"], z3.And(
                    self._following_epoch(s, i, j), hw < s[f"end.{j}"])) for j in self.ids]
            else:
                parts += [self._presumes(s, i), hw >= 0]
                if self.bounds is not None:
                    parts.append(hw <= self.bounds.log_size - 1)
                parts += [z3.Implies(s[f"isr.{i}.{j}"], z3.And(
                    s[f"leader.{j}"] == i, hw < s[f"end.{j}"])) for j in self.ids]
            parts += self._same(s, t, {f"hw.{i}"})
            return z3.And(parts)
        return rel

    # ----------------------------------------------------------------- follower side

    def _replicate(self, s: Frame, t: Frame, leader: int, follower: int) -> list[Bool]:
        """ReplicateTo(leader, follower) and the follower's new high watermark."""
        end = s[f"end.{follower}"]
        parts = [end < s[f"end.{leader}"], t[f"end.{follower}"] == end + 1,
                 *self.store(s, t, f"rid.{follower}", end, self.cell(s, f"rid.{leader}", end)),
                 *self.store(s, t, f"rep.{follower}", end, self.cell(s, f"rep.{leader}", end)),
                 t[f"hw.{follower}"] == _min(s[f"hw.{leader}"], end + 1)]
        if self.bounds is not None:
            parts.append(end < self.bounds.log_size)
        parts += self._same(s, t, self._log_vars(follower) | {f"hw.{follower}"})
        return parts

    def _follower_replicate(self, f: int, leader: int, fenced: bool) -> Rel:
        def rel(s: Frame, t: Frame, fresh: Fresh) -> Bool:
            if fenced:
                guard = self._following_epoch(s, leader, f)
            else:
                guard = z3.And(self._presumes(s, leader), s[f"leader.{f}"] == leader)
            return z3.And(guard, *self._replicate(s, t, leader, f))
        return rel

    def _truncate(self, s: Frame, t: Frame, i: int, to: Int) -> list[Bool]:
        """TruncateTo(i, to): the end offset drops to ``to`` (never rises)."""
        return [to <= s[f"end.{i}"], t[f"end.{i}"] == to,
                *[t[v] == s[v] for v in
                  sorted(self.table_vars(f"rid.{i}") | self.table_vars(f"rep.{i}"))]]

    def _become_follower(self, s: Frame, t: Frame, fresh: Fresh, leader: int, i: int,
                         to: Int) -> list[Bool]:
        """BecomeFollowerAndTruncateTo(leader, i, to) with a leader that is a replica."""
        e = fresh.int("req")
        return [self._request_guard(s, e, leader), e > s[f"epoch.{i}"],
                *self._truncate(s, t, i, to),
                *self._adopt(s, t, i, e, leader, _min(to, s[f"hw.{i}"])),
                *self._same(s, t, self._log_vars(i) | self._rs_vars(i))]

    def _min_offset_with_larger_epoch(self, s: Frame, fresh: Fresh, leader: int,
                                      epoch: Int, otherwise: Int) -> tuple[Int, Bool]:
        """Kip101's Min(OffsetsWithLargerEpochs(leader, epoch)), or ``otherwise`` if empty."""
        m = fresh.int("min")
        end = s[f"end.{leader}"]

        def larger(o: Int) -> Bool:
            result: Bool = self.cell(s, f"rep.{leader}", o) > epoch
            return result

        def not_larger(o: Int) -> Bool:
            return z3.Not(larger(o))

        empty = self._ranged(0, end, not_larger)
        least = z3.And(m >= 0, m < end, larger(m), self._ranged(0, m, not_larger))
        result = fresh.int("lookup")
        return result, z3.Or(z3.And(empty, result == otherwise), z3.And(least, result == m))

    def _lookup_offset_for_epoch(self, s: Frame, fresh: Fresh, leader: int, follower: int,
                                 epoch: Int) -> tuple[Int, Bool]:
        """Kip101's LookupOffsetForEpoch(leader, follower, epoch): a witness and its definition."""
        end = s[f"end.{leader}"]
        latest = self.cell(s, f"rep.{leader}", end - 1)
        hw = s[f"hw.{follower}"]
        larger, larger_def = self._min_offset_with_larger_epoch(s, fresh, leader, epoch, hw)
        result = fresh.int("offset")
        return result, z3.Or(
            z3.And(end == 0, result == hw),
            z3.And(end > 0, latest == epoch, result == end),
            z3.And(end > 0, latest != epoch, larger_def, result == larger),
        )

    def _first_non_matching_from_tail(self, s: Frame, fresh: Fresh, leader: int,
                                      follower: int) -> tuple[Int, Bool]:
        """Kip279's FirstNonMatchingOffsetFromTail(leader, follower): one past the largest
        offset where the follower's record is also the leader's, 0 if none."""
        m, result = fresh.int("max"), fresh.int("offset")
        end_f = s[f"end.{follower}"]

        def differs(o: Int) -> Bool:
            return z3.Not(self._same_entry(s, follower, leader, o))

        none = self._ranged(0, end_f, differs)
        largest = z3.And(m >= 0, m < end_f, self._same_entry(s, follower, leader, m),
                         self._ranged(m + 1, end_f, differs))
        return result, z3.Or(
            z3.And(s[f"end.{leader}"] == 0, result == 0),
            z3.And(s[f"end.{leader}"] > 0, none, result == 0),
            z3.And(s[f"end.{leader}"] > 0, largest, result == m + 1),
        )

    def become_follower_family(self, rule: str) -> Family:
        """BecomeFollowerAndTruncateTo with a version's truncation ``rule`` (``"hw"``,
        ``"kip101"``, ``"kip279"`` or ``"kip320"``: KIP-279's offset, fenced), one instance
        per (leader, follower ≠ leader)."""
        return [((leader, i), self._become_follower_rule(rule, leader, i))
                for leader in self.ids for i in self.ids if leader != i]

    def _become_follower_rule(self, rule: str, leader: int, i: int) -> Rel:
        def rel(s: Frame, t: Frame, fresh: Fresh) -> Bool:
            end = s[f"end.{i}"]
            if rule == "hw":
                return z3.And(self._become_follower(s, t, fresh, leader, i, s[f"hw.{i}"]))
            empty = z3.And(end == 0, *self._become_follower(s, t, fresh, leader, i,
                                                            z3.IntVal(0)))
            if rule == "kip101":
                latest_epoch = self.cell(s, f"rep.{i}", end - 1)
                to, to_def = self._lookup_offset_for_epoch(s, fresh, leader, i, latest_epoch)
                return z3.Or(empty, z3.And(end > 0, to_def,
                                           *self._become_follower(s, t, fresh, leader, i, to)))
            to, to_def = self._first_non_matching_from_tail(s, fresh, leader, i)
            if rule == "kip279":
                return z3.Or(empty, z3.And(to_def,
                                           *self._become_follower(s, t, fresh, leader, i, to)))
            # kip320: fenced; the leader must already be in the request's epoch.
            e = fresh.int("req")
            return z3.And(
                self._request_guard(s, e, leader), e > s[f"epoch.{i}"],
                self._presumes(s, leader), s[f"epoch.{leader}"] == e, to_def,
                *self._truncate(s, t, i, to),
                *self._adopt(s, t, i, e, leader, _min(to, s[f"hw.{i}"])),
                *self._same(s, t, self._log_vars(i) | self._rs_vars(i)),
            )
        return rel

    # ----------------------------------------------------------------- actions

    def expand_family(self, fenced: bool) -> Family:
        """(Fenced)LeaderExpandIsr, one instance per (leader, replica)."""
        return [((i, j), self._leader_expand_isr(i, j, fenced)) for i in self.ids
                for j in self.ids]

    def shrink_family(self, fenced: bool) -> Family:
        """(Fenced)LeaderShrinkIsr, one instance per (leader, replica ≠ leader)."""
        return [((i, j), self._leader_shrink_isr(i, j, fenced)) for i in self.ids
                for j in self.ids if i != j]

    def inc_hw_family(self, fenced: bool) -> Family:
        """(Fenced)LeaderIncHighWatermark, one instance per replica."""
        return [((r,), self._leader_inc_hw(r, fenced)) for r in self.ids]

    def fetch_family(self, fenced: bool) -> Family:
        """FollowerReplicate / FencedFollowerFetch, one instance per (follower, leader ≠
        follower)."""
        return [((f, leader), self._follower_replicate(f, leader, fenced)) for f in self.ids
                for leader in self.ids if f != leader]

    def _base_family(self, name: str) -> Family:
        """A KafkaReplication action nobody replaced."""
        ids = self.ids
        table: dict[str, Callable[[], Family]] = {
            "ControllerElectLeader":
                lambda: [((r,), self._controller_elect_leader(r)) for r in ids],
            "ControllerShrinkIsr": lambda: [((r,), self._controller_shrink_isr(r)) for r in ids],
            "BecomeLeader": lambda: [((r,), self._become_leader(r)) for r in ids],
            "LeaderExpandIsr": lambda: self.expand_family(False),
            "LeaderShrinkIsr": lambda: self.shrink_family(False),
            "LeaderWrite": lambda: [((r,), self._leader_write(r)) for r in ids],
            "LeaderIncHighWatermark": lambda: self.inc_hw_family(False),
            "FollowerReplicate": lambda: self.fetch_family(False),
        }
        return table[name]()

    def actions(self) -> Sequence[ActionInstance]:
        """Next's disjuncts in the specification's order, one instance per replica choice."""
        return self._actions

    @cached_property
    def _instances(self) -> list[tuple[str, tuple[int, ...], Rel]]:
        """(family, replica arguments, relation) of each instance, in Next's order."""
        variant = get(f"tla-{self.variant}")
        own = variant.actions()
        found: list[tuple[str, tuple[int, ...], Rel]] = []
        for family in variant.next_actions():
            encode = own[family].symbolic if family in own else None
            instances = encode(self) if encode is not None else self._base_family(family)
            found += [(family, args, rel) for args, rel in instances]
        return found

    @staticmethod
    def _label(family: str, args: Sequence[int]) -> str:
        return f"{family}({', '.join(replica_name(a) for a in args)})"

    @cached_property
    def _actions(self) -> list[ActionInstance]:
        return [ActionInstance(family, self._label(family, args), rel)
                for family, args, rel in self._instances]

    @property
    def solver_options(self) -> Mapping[str, bool | int]:
        """The variant's Z3 parameters for bounded model checking (``Variant.z3_options``)."""
        return get(f"tla-{self.variant}").z3_options

    @property
    def partial_order(self) -> bool:
        """Whether BMC uses the partial-order reduction (``Variant.bmc_partial_order``)."""
        return get(f"tla-{self.variant}").bmc_partial_order

    @property
    def frame_constants(self) -> tuple[int, ...] | None:
        """The constants of ``bmc``'s forward frame lemmas (``frame_constants``): ``-1`` (None,
        Nil) up to one past the largest bound, so that every variable's bounds at each step
        (offsets, record ids, epochs) can be stated; ``None`` when unbounded."""
        if self.bounds is None:
            return None
        top = max(self.bounds.log_size, self.bounds.max_records, self.bounds.max_leader_epoch)
        return tuple(range(-1, top + 2))

    def symmetric_first_step(self) -> tuple[str, ...]:
        """Symmetry breaking for BMC: the first step may be taken to involve ``r1``.

        Init, Next, WeakIsr and StrongIsr are symmetric under renaming the replicas, and in
        Init only ControllerElectLeader(r) and ControllerShrinkIsr(r) are enabled; renaming
        ``r`` to ``r1`` maps any trace to one of the same length and verdicts that starts
        with ControllerElectLeader(r1) or ControllerShrinkIsr(r1)."""
        first = replica_name(0)
        return (f"ControllerElectLeader({first})", f"ControllerShrinkIsr({first})")

    def label_symmetries(self, fixing: int = 1) -> list[dict[str, str]]:
        """Symmetry breaking for BMC beyond the first step: every renaming of the replicas
        that fixes ``r1`` … ``r<fixing>``, as a map of action labels (``bmc``'s lex-leader
        ``symmetries``).

        Init, Next, WeakIsr and StrongIsr are symmetric under any renaming of the replicas, so
        the image of a trace under one is a trace of the same length and verdicts; renamings
        that fix ``r1`` fix ``symmetric_first_step``'s labels, and those that fix ``r1`` and
        ``r2`` keep ``symmetric_violation``, so together they keep, of each class of renamed
        traces, the ones whose labels come first (docs/z3.md argues it)."""
        fixed = tuple(range(min(fixing, self.replicas)))
        renamings = [(*fixed, *rest) for rest in permutations(range(len(fixed),
                                                                    self.replicas))][1:]
        return [{self._label(family, args): self._label(family, [perm[a] for a in args])
                 for family, args, _ in self._instances}
                for perm in renamings]

    def symmetric_violation(self, names: Collection[str]) -> Callable[[Frame], Bool]:
        """Symmetry breaking for BMC on the last state: one of the invariants ``names``
        (WeakIsr, StrongIsr) fails for leader ``r1`` and member ``r2`` (or ``r1`` itself).

        A state that breaks either invariant has a presumed leader ``i`` and a member ``j``
        of its (or the quorum's) ISR lacking a record below ``i``'s HW; renaming ``i`` to
        ``r1`` and, if ``j ≠ i``, ``j`` to ``r2`` maps the trace to one of the same length
        (Init and Next are symmetric) whose last state breaks the same invariant for ``r1``
        and ``r2`` (or ``r1``).  It uses every renaming, so it replaces
        ``symmetric_first_step`` and ``label_symmetries``."""
        member: dict[str, Callable[[Frame, int], Bool]] = {
            "WeakIsr": lambda s, j: s[f"isr.0.{j}"], "StrongIsr": lambda s, j: s[f"qIsr.{j}"]}
        unknown = sorted(set(names) - set(member))
        if unknown or self.replicas < 2:
            raise ValueError(f"no symmetric violation for {unknown or 'one replica'}")

        def fails(s: Frame) -> Bool:
            hw = s["hw.0"]
            lacking = [z3.And(member[n](s, j),
                              z3.Not(self._ranged(0, hw, partial(self._same_entry, s, 0, j))))
                       for n in names for j in (0, 1)]
            return z3.And(self._presumes(s, 0), hw != 0, z3.Or(lacking))
        return fails

    def symmetry_breaking(self, names: Collection[str]) -> SymmetryBreaking:
        """``bmc``'s symmetry-breaking arguments for the invariants ``names``: with 3 or more
        replicas the violation pinned to ``r1`` and ``r2`` (``symmetric_violation``) and the
        lex-leader constraint for the renamings of the other replicas; with 2, the first
        step (docs/z3.md measures both)."""
        if self.replicas >= 3:
            return {"first_step": None, "symmetries": self.label_symmetries(fixing=2),
                    "violation": self.symmetric_violation(names)}
        return {"first_step": self.symmetric_first_step(), "symmetries": [],
                "violation": None}

    # ----------------------------------------------------------------- invariants

    def _isr_property(self, s: Frame, isr_of: Callable[[int, int], Bool]) -> Bool:
        """Every presumed leader's records below its hw are on every member of ``isr_of``."""
        parts = []
        for i in self.ids:
            hw = s[f"hw.{i}"]
            members = z3.And([
                z3.Implies(isr_of(i, j), self._ranged(0, hw, partial(self._same_entry, s, i, j)))
                for j in self.ids
            ])
            parts.append(z3.Or(z3.Not(self._presumes(s, i)), hw == 0, members))
        return z3.And(parts)

    def weak_isr(self, s: Frame) -> Bool:
        """WeakIsr: a presumed leader's committed records are on every member of *its* ISR."""
        return self._isr_property(s, lambda i, j: s[f"isr.{i}.{j}"])

    def strong_isr(self, s: Frame) -> Bool:
        """StrongIsr: a presumed leader's committed records are on every member of the
        *quorum's* ISR (so any clean election keeps them)."""
        return self._isr_property(s, lambda i, j: s[f"qIsr.{j}"])

    def invariants(self) -> Sequence[SymbolicProperty]:
        """WeakIsr and StrongIsr, the specification's two invariants."""
        return [
            SymbolicProperty("WeakIsr", self.weak_isr, "committed data is on the leader's ISR"),
            SymbolicProperty("StrongIsr", self.strong_isr, "committed data is on the quorum ISR"),
        ]

    # ----------------------------------------------------------------- concrete states

    def magnitudes(self, s: Frame) -> list[Int]:
        """The integer terms a small counterexample should keep small (for readable CTIs):
        counters, end offsets, high watermarks, epochs and the records at the first offsets."""
        terms = [s["nextRecordId"], s["nextLeaderEpoch"], s["qEpoch"]]
        for i in self.ids:
            terms += [s[f"end.{i}"], s[f"hw.{i}"], s[f"epoch.{i}"]]
            terms += [self.cell(s, f"{a}.{i}", k) for a in ("rid", "rep") for k in range(8)]
        return terms

    def decode(self, model: z3.ModelRef, s: Frame) -> KState:
        """The concrete state a Z3 model gives frame ``s`` (reads only cells below the ends)."""

        def val(term: z3.ExprRef) -> int:
            v: int = model.eval(term, model_completion=True).as_long()
            return v

        def flag(term: z3.ExprRef) -> bool:
            return bool(z3.is_true(model.eval(term, model_completion=True)))

        logs = []
        states = []
        for i in self.ids:
            end = val(s[f"end.{i}"])
            logs.append(tuple((val(self.cell(s, f"rid.{i}", k)), val(self.cell(s, f"rep.{i}", k)))
                              for k in range(end)))
            isr = frozenset(j for j in self.ids if flag(s[f"isr.{i}.{j}"]))
            states.append(ReplicaState(val(s[f"hw.{i}"]), val(s[f"epoch.{i}"]),
                                       val(s[f"leader.{i}"]), isr))
        requests = tuple(
            QuorumState(e, val(self.cell(s, "reqLeader", e)),
                        frozenset(j for j in self.ids if flag(self.cell(s, f"reqIsr.{j}", e))))
            for e in range(val(s["nextLeaderEpoch"]))
        )
        quorum = QuorumState(val(s["qEpoch"]), val(s["qLeader"]),
                             frozenset(j for j in self.ids if flag(s[f"qIsr.{j}"])))
        return KState(tuple(logs), tuple(states), val(s["nextRecordId"]),
                      val(s["nextLeaderEpoch"]), requests, quorum)

    def pin(self, s: Frame, state: KState) -> Bool:
        """Frame ``s`` is ``state`` (on exactly what ``decode`` reads)."""
        if state.replicas != self.replicas:
            raise ValueError(f"state has {state.replicas} replicas, system {self.replicas}")
        parts: list[Bool] = [s["nextRecordId"] == state.next_record_id,
                             s["nextLeaderEpoch"] == state.next_leader_epoch]
        for i, (log, st) in enumerate(zip(state.logs, state.replica_state, strict=True)):
            parts.append(s[f"end.{i}"] == len(log))
            for k, (rid, rep) in enumerate(log):
                parts += [self.cell(s, f"rid.{i}", k) == rid, self.cell(s, f"rep.{i}", k) == rep]
            parts += [s[f"hw.{i}"] == st.hw, s[f"epoch.{i}"] == st.leader_epoch,
                      s[f"leader.{i}"] == st.leader]
            parts += [s[f"isr.{i}.{j}"] == (j in st.isr) for j in self.ids]
        for e, req in enumerate(state.requests):
            parts.append(self.cell(s, "reqLeader", e) == req.leader)
            parts += [self.cell(s, f"reqIsr.{j}", e) == (j in req.isr) for j in self.ids]
        q = state.quorum
        parts += [s["qEpoch"] == q.leader_epoch, s["qLeader"] == q.leader]
        parts += [s[f"qIsr.{j}"] == (j in q.isr) for j in self.ids]
        return z3.And(parts)
