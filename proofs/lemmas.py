"""Lemmas about the ``tla-*`` models, stated over the unbounded symbolic encoding.

Each lemma is a ``SymbolicProperty`` over one frame of a ``TlaSystem``; offsets, epochs and
record ids are unbounded integers (quantified with ``ForAll`` where a lemma speaks of every
offset or every epoch).  The *structural* lemmas below hold for every variant and are proved
inductive together (``isrlab.proofs.obligations``); the *strengthening* lemmas are the extra
conjuncts that make StrongIsr inductive for KIP-320.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from typing import TypeAlias

import z3

from isrlab.checker.z3 import Frame, StepProperty, SymbolicProperty
from isrlab.spec.symbolic.tla import TlaSystem

Bool: TypeAlias = z3.BoolRef
Int: TypeAlias = z3.ArithRef
NONE = -1


def _forall(system: TlaSystem, lo: Int | int, hi: Int | int, body: Callable[[Int], Bool],
            name: str = "o") -> Bool:
    """∀ offset k ∈ lo..hi-1 (over epochs when ``name`` is ``"e"``)."""
    return system.forall("epoch" if name in ("e", "f") else "offset", lo, hi, body, name)


def _replica_or_none(system: TlaSystem, v: Int) -> Bool:
    return z3.And(v >= NONE, v < system.replicas)


def _member(system: TlaSystem, vector: Callable[[int], Bool], who: Int) -> Bool:
    return z3.Or([z3.And(who == j, vector(j)) for j in system.ids])


# ---------------------------------------------------------------- structural lemmas


def type_ok(system: TlaSystem) -> SymbolicProperty:
    """The numeric part of TypeOk: counters are naturals, the quorum epoch is the last one
    handed out, every replica's epoch is an epoch already handed out (or Nil), leaders are
    replicas or None."""

    def holds(s: Frame) -> Bool:
        nle = s["nextLeaderEpoch"]
        parts = [nle >= 0, s["nextRecordId"] >= 0, s["qEpoch"] == nle - 1,
                 _replica_or_none(system, s["qLeader"])]
        for i in system.ids:
            parts += [s[f"end.{i}"] >= 0, s[f"epoch.{i}"] >= -1, s[f"epoch.{i}"] < nle,
                      _replica_or_none(system, s[f"leader.{i}"])]
        return z3.And(parts)

    return SymbolicProperty("TypeOk", holds, "counters are naturals; epochs below the next one")


def quorum_is_latest_request(system: TlaSystem) -> SymbolicProperty:
    """The quorum's leader is the leader of the latest request (its ISR may have moved on)."""

    def holds(s: Frame) -> Bool:
        nle = s["nextLeaderEpoch"]
        fresh = z3.And(s["qLeader"] == NONE, *[s[f"qIsr.{j}"] for j in system.ids])
        return z3.If(nle == 0, fresh, s["qLeader"] == system.cell(s, "reqLeader", nle - 1))

    return SymbolicProperty("QuorumIsLatestRequest", holds, "quorum leader = last request's")


def leader_in_isr(system: TlaSystem) -> SymbolicProperty:
    """LeaderInIsr, read with None allowed: the quorum's leader, if any, is in the quorum ISR.

    (The specification states ``quorumState.leader \\in quorumState.isr`` as a theorem of
    Kip320, but it is false in Init and after the leader's controlled shutdown, where the
    leader is None; this is the reading that holds.)"""

    def holds(s: Frame) -> Bool:
        q = s["qLeader"]
        return z3.Or(q == NONE, _member(system, lambda j: s[f"qIsr.{j}"], q))

    return SymbolicProperty("LeaderInIsr", holds, "quorum leader ∈ quorum ISR (or None)")


def request_leader_in_isr(system: TlaSystem) -> SymbolicProperty:
    """Every LeaderAndIsr request names a leader (a replica) in its own ISR, or None."""

    def holds(s: Frame) -> Bool:
        def one(e: Int) -> Bool:
            leader = system.cell(s, "reqLeader", e)
            inside = _member(system, lambda j: system.cell(s, f"reqIsr.{j}", e), leader)
            return z3.And(_replica_or_none(system, leader), z3.Or(leader == NONE, inside))

        return _forall(system, 0, s["nextLeaderEpoch"], one, "e")

    return SymbolicProperty("RequestLeaderInIsr", holds, "each request's leader ∈ its ISR")


def presumed_leader_in_own_isr(system: TlaSystem) -> SymbolicProperty:
    """A replica that presumes leadership is in its own cached ISR (ISR ⊆ AR holds by type)."""

    def holds(s: Frame) -> Bool:
        return z3.And([z3.Implies(s[f"leader.{i}"] == i, s[f"isr.{i}.{i}"]) for i in system.ids])

    return SymbolicProperty("PresumedLeaderInOwnIsr", holds, "leader ∈ its own ISR")


def hw_within_log(system: TlaSystem) -> SymbolicProperty:
    """HW ≤ LEO: every replica's high watermark is between 0 and its log end offset."""

    def holds(s: Frame) -> Bool:
        return z3.And([z3.And(s[f"hw.{i}"] >= 0, s[f"hw.{i}"] <= s[f"end.{i}"])
                       for i in system.ids])

    return SymbolicProperty("HwWithinLog", holds, "0 ≤ hw ≤ endOffset on every replica")


def structural(system: TlaSystem) -> list[SymbolicProperty]:
    """The structural lemmas, proved inductive together for every variant."""
    return [type_ok(system), quorum_is_latest_request(system), leader_in_isr(system),
            request_leader_in_isr(system), presumed_leader_in_own_isr(system),
            hw_within_log(system)]


def epochs_never_decrease(system: TlaSystem) -> StepProperty:
    """No step lowers a replica's epoch, the quorum's epoch or the next epoch to hand out."""

    def holds(s: Frame, t: Frame) -> Bool:
        parts = [t["nextLeaderEpoch"] >= s["nextLeaderEpoch"], t["qEpoch"] >= s["qEpoch"]]
        parts += [t[f"epoch.{i}"] >= s[f"epoch.{i}"] for i in system.ids]
        return z3.And(parts)

    return StepProperty("EpochsNeverDecrease", holds, "replica, quorum and next epochs")


# ---------------------------------------------------------------- strengthening (KIP-320)


def _entry(system: TlaSystem, s: Frame, i: int, o: Int) -> tuple[Int, Int]:
    return system.cell(s, f"rid.{i}", o), system.cell(s, f"rep.{i}", o)


def _same_entry(system: TlaSystem, s: Frame, i: int, j: int, o: Int) -> Bool:
    (a, b), (c, d) = _entry(system, s, i, o), _entry(system, s, j, o)
    return z3.And(o >= 0, o < s[f"end.{i}"], o < s[f"end.{j}"], a == c, b == d)


def _following_epoch(s: Frame, leader: int, follower: int) -> Bool:
    return z3.And(s[f"leader.{leader}"] == leader, s[f"leader.{follower}"] == leader,
                  s[f"epoch.{follower}"] == s[f"epoch.{leader}"])


def _isr_member(s: Frame, i: int, j: int) -> Bool:
    return s[f"isr.{i}.{j}"]


def replica_follows_its_request(system: TlaSystem) -> SymbolicProperty:
    """A replica's (leader, epoch) is Nil/None until it adopts a request, then it is that
    request's epoch and leader, and its ISR holds that leader; a replica that never adopted
    one has an empty log."""

    def holds(s: Frame) -> Bool:
        parts = []
        for i in system.ids:
            e, leader = s[f"epoch.{i}"], s[f"leader.{i}"]
            fresh = z3.And(e == -1, leader == NONE, s[f"end.{i}"] == 0, s[f"hw.{i}"] == 0,
                           *[z3.Not(s[f"isr.{i}.{j}"]) for j in system.ids])
            adopted = z3.And(e >= 0, leader != NONE, leader == system.cell(s, "reqLeader", e),
                             _member(system, partial(_isr_member, s, i), leader))
            parts.append(z3.Or(fresh, adopted))
        return z3.And(parts)

    return SymbolicProperty("ReplicaFollowsItsRequest", holds, "(leader, epoch) from a request")


def record_ids_below_next(system: TlaSystem) -> SymbolicProperty:
    """Every stored record id was handed out already: 0 ≤ id < nextRecordId."""

    def holds(s: Frame) -> Bool:
        def ok(i: int, o: Int) -> Bool:
            rid = _entry(system, s, i, o)[0]
            return z3.And(rid >= 0, rid < s["nextRecordId"])

        return z3.And([_forall(system, 0, s[f"end.{i}"], partial(ok, i), "o") for i in system.ids])

    return SymbolicProperty("RecordIdsBelowNext", holds, "ids are below nextRecordId")


def record_epochs_within_replica_epoch(system: TlaSystem) -> SymbolicProperty:
    """KIP-320: every record a replica stores has an epoch between 0 and the replica's epoch."""

    def holds(s: Frame) -> Bool:
        def ok(i: int, o: Int) -> Bool:
            rep = _entry(system, s, i, o)[1]
            return z3.And(rep >= 0, rep <= s[f"epoch.{i}"])

        return z3.And([_forall(system, 0, s[f"end.{i}"], partial(ok, i), "o") for i in system.ids])

    return SymbolicProperty("RecordEpochsWithinReplicaEpoch", holds, "record epoch ≤ epoch")


def log_epochs_monotone(system: TlaSystem) -> SymbolicProperty:
    """Record epochs never decrease along a log (the leader-epoch cache is sorted)."""

    def holds(s: Frame) -> Bool:
        parts = []
        for i in system.ids:
            def sorted_below(i: int, b: Int) -> Bool:
                return _forall(system, 0, b, lambda a: _entry(system, s, i, a)[1]
                               <= _entry(system, s, i, b)[1], "a")

            parts.append(_forall(system, 0, s[f"end.{i}"], partial(sorted_below, i), "b"))
        return z3.And(parts)

    return SymbolicProperty("LogEpochsMonotone", holds, "epochs sorted along each log")


def log_matching(system: TlaSystem) -> SymbolicProperty:
    """Log matching: two replicas holding the same record at an offset agree below it."""

    def holds(s: Frame) -> Bool:
        parts = []
        for i in system.ids:
            for j in system.ids:
                if i < j:
                    def agree_below(i: int, j: int, a: Int) -> Bool:
                        return z3.Implies(_same_entry(system, s, i, j, a), _forall(
                            system, 0, a, partial(_same_entry, system, s, i, j), "b"))

                    parts.append(_forall(system, 0, s[f"end.{i}"],
                                         partial(agree_below, i, j), "a"))
        return z3.And(parts)

    return SymbolicProperty("LogMatching", holds, "same record at o ⇒ same records below o")


def follower_log_is_leader_prefix(system: TlaSystem) -> SymbolicProperty:
    """KIP-320: a follower in its leader's epoch holds a prefix of the leader's log."""

    def holds(s: Frame) -> Bool:
        parts = []
        for f in system.ids:
            for leader in system.ids:
                if f != leader:
                    parts.append(z3.Implies(_following_epoch(s, leader, f), z3.And(
                        s[f"end.{f}"] <= s[f"end.{leader}"],
                        _forall(system, 0, s[f"end.{f}"],
                                partial(_same_entry, system, s, f, leader), "o"))))
        return z3.And(parts)

    return SymbolicProperty("FollowerLogIsLeaderPrefix", holds, "follower ⊑ leader in epoch")


def follower_epoch_within_leader_epoch(system: TlaSystem) -> SymbolicProperty:
    """KIP-320: a follower never runs ahead of the epoch of the leader it follows."""

    def holds(s: Frame) -> Bool:
        return z3.And([z3.Implies(s[f"leader.{f}"] == leader,
                                  s[f"epoch.{f}"] <= s[f"epoch.{leader}"])
                       for f in system.ids for leader in system.ids if f != leader])

    return SymbolicProperty("FollowerEpochWithinLeaderEpoch", holds, "follower epoch ≤ leader's")


def true_leader_isr_is_quorum_isr(system: TlaSystem) -> SymbolicProperty:
    """The true leader's cached ISR is the quorum's ISR; with no true leader yet in the
    latest epoch, the quorum's ISR is still the latest request's."""

    def holds(s: Frame) -> Bool:
        parts = []
        some_true = []
        for leader in system.ids:
            true = z3.And(s[f"leader.{leader}"] == leader, s["qLeader"] == leader,
                          s[f"epoch.{leader}"] == s["qEpoch"])
            some_true.append(true)
            parts.append(z3.Implies(true, z3.And(
                [s[f"isr.{leader}.{j}"] == s[f"qIsr.{j}"] for j in system.ids])))
        last = s["nextLeaderEpoch"] - 1
        parts.append(z3.Implies(z3.And(last >= 0, z3.Not(z3.Or(some_true))), z3.And(
            [s[f"qIsr.{j}"] == system.cell(s, f"reqIsr.{j}", last) for j in system.ids])))
        return z3.And(parts)

    return SymbolicProperty("TrueLeaderIsrIsQuorumIsr", holds, "true leader's ISR = quorum ISR")


def stale_leader_covers_or_blocked(system: TlaSystem) -> SymbolicProperty:
    """KIP-320: a presumed leader's ISR covers the quorum ISR, or one of its ISR members has
    moved to a later epoch, which blocks its high watermark for good."""

    def holds(s: Frame) -> Bool:
        parts = []
        for leader in system.ids:
            covers = z3.And([z3.Implies(s[f"qIsr.{j}"], s[f"isr.{leader}.{j}"])
                             for j in system.ids])
            blocked = z3.Or([z3.And(s[f"isr.{leader}.{k}"],
                                    s[f"epoch.{k}"] > s[f"epoch.{leader}"])
                             for k in system.ids])
            parts.append(z3.Implies(s[f"leader.{leader}"] == leader, z3.Or(covers, blocked)))
        return z3.And(parts)

    return SymbolicProperty("StaleLeaderCoversOrBlocked", holds, "ISR ⊇ quorum ISR or blocked")


def committed_on_quorum_isr(system: TlaSystem) -> SymbolicProperty:
    """StrongIsr for every replica, leader or not: the records below any replica's high
    watermark are on every member of the quorum ISR."""

    def holds(s: Frame) -> Bool:
        return z3.And([
            z3.Implies(s[f"qIsr.{j}"],
                       _forall(system, 0, s[f"hw.{i}"], partial(_same_entry, system, s, i, j), "o"))
            for i in system.ids for j in system.ids
        ])

    return SymbolicProperty("CommittedOnQuorumIsr", holds, "every hw prefix is on the quorum ISR")


def pending_request_covers_or_superseded(system: TlaSystem) -> SymbolicProperty:
    """KIP-320: a request its leader has not adopted yet has an ISR covering the quorum's
    and every later request's, or one of its ISR members has moved past its epoch (so its
    leader will be blocked once it adopts it)."""

    def holds(s: Frame) -> Bool:
        def one(e: Int) -> Bool:
            leader = system.cell(s, "reqLeader", e)
            pending = z3.Or([z3.And(leader == i, s[f"epoch.{i}"] < e) for i in system.ids])
            covers = z3.And([z3.Implies(s[f"qIsr.{j}"], system.cell(s, f"reqIsr.{j}", e))
                             for j in system.ids])
            superseded = z3.Or([z3.And(system.cell(s, f"reqIsr.{k}", e), s[f"epoch.{k}"] > e)
                                for k in system.ids])

            def later_within(later: Int) -> Bool:
                return z3.Implies(later > e, z3.And(
                    [z3.Implies(system.cell(s, f"reqIsr.{j}", later),
                                system.cell(s, f"reqIsr.{j}", e)) for j in system.ids]))

            dominates = _forall(system, 0, s["nextLeaderEpoch"], later_within, "f")
            return z3.Implies(pending, z3.Or(z3.And(covers, dominates), superseded))

        return _forall(system, 0, s["nextLeaderEpoch"], one, "e")

    return SymbolicProperty("PendingRequestCoversOrSuperseded", holds,
                            "unadopted request's ISR ⊇ quorum ISR, or superseded")


def pending_request_isr_has_leader_committed(system: TlaSystem) -> SymbolicProperty:
    """KIP-320: the ISR of a request its leader has not adopted yet holds that leader's
    records below the leader's high watermark (so WeakIsr holds once it adopts it)."""

    def holds(s: Frame) -> Bool:
        def one(e: Int) -> Bool:
            leader = system.cell(s, "reqLeader", e)
            return z3.And([
                z3.Implies(z3.And(leader == i, s[f"epoch.{i}"] < e,
                                  system.cell(s, f"reqIsr.{j}", e)),
                           _forall(system, 0, s[f"hw.{i}"], partial(_same_entry, system, s, i, j)))
                for i in system.ids for j in system.ids
            ])

        return _forall(system, 0, s["nextLeaderEpoch"], one, "e")

    return SymbolicProperty("PendingRequestIsrHasLeaderCommitted", holds,
                            "unadopted request's ISR holds its leader's committed records")


def later_request_isr_within_leader_isr_or_blocked(system: TlaSystem) -> SymbolicProperty:
    """KIP-320: every request newer than a presumed leader's epoch has an ISR inside the
    leader's cached ISR, or the leader is blocked (an ISR member has moved past its epoch)."""

    def holds(s: Frame) -> Bool:
        parts = []
        for leader in system.ids:
            blocked = z3.Or([z3.And(s[f"isr.{leader}.{k}"],
                                    s[f"epoch.{k}"] > s[f"epoch.{leader}"])
                             for k in system.ids])

            def within(e: Int, leader: int = leader) -> Bool:
                return z3.Implies(e > s[f"epoch.{leader}"], z3.And(
                    [z3.Implies(system.cell(s, f"reqIsr.{j}", e), s[f"isr.{leader}.{j}"])
                     for j in system.ids]))

            parts.append(z3.Implies(s[f"leader.{leader}"] == leader, z3.Or(
                blocked, _forall(system, 0, s["nextLeaderEpoch"], within, "e"))))
        return z3.And(parts)

    return SymbolicProperty("LaterRequestIsrWithinLeaderIsrOrBlocked", holds,
                            "newer requests' ISR ⊆ leader's ISR, or blocked")
