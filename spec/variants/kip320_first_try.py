"""``tla-kip320-first-try``: module Kip320FirstTry, the first attempt at KIP-320.

Followers fetch with the epoch of their last record and truncate only when the leader
answers that it does not match (a LOG_TRUNCATION error), instead of truncating upon
becoming follower.  The leader checks record epochs (not the follower's leader epoch) before
advancing its high watermark or changing the ISR.  TLC finds StrongIsr violated: a leader
can advance its HW on a follower that is still in an older epoch and later truncates the
committed record.  Five of KafkaReplication's actions are replaced (FollowerReplicate by
two: FollowerFetch and FollowerTruncate).  Truncation offsets are KIP-279's
(``FirstNonMatchingOffsetFromTail``).
"""

from __future__ import annotations

from collections.abc import Callable

import z3

from isrlab.checker.z3 import Frame, Fresh
from isrlab.checker.z3.bmc import ARITH_OPTIONS
from isrlab.spec.symbolic.tla import Family, TlaSystem
from isrlab.spec.tla.layout import END, EPOCH, HW, ISR, LEADER, LOG
from isrlab.spec.tla.model import Out, Presumed, State, TlaModel
from isrlab.spec.variants import Action, Variant
from isrlab.spec.variants.kip279 import first_non_matching_offset_from_tail


def _caught_up_to_epoch(m: TlaModel, s: State, a: int, b: int, offset: int) -> bool:
    """IsFollowerCaughtUpToLeaderEpoch at ``offset`` for the presumed leader at block ``a``
    and a replica following it at ``b``: at offset 0 trivially, else both have the record
    before ``offset`` and the two records carry the same epoch (their ids may differ)."""
    if offset == 0:
        return True
    last = offset - 1
    return (last < s[a + END] and last < s[b + END]
            and m.epoch_of[s[a + LOG + last]] == m.epoch_of[s[b + LOG + last]])


def leader_expand_isr_better_fencing(m: TlaModel, s: State, out: Out, pres: Presumed) -> None:
    """LeaderExpandIsrBetterFencing: the true leader adds a replica following it whose
    record below the leader's HW has the leader's epoch for that offset, once the HW has
    reached the leader's current epoch (at the log end or at a record of its epoch)."""
    bases = m.bases
    labels = m.labels("LeaderExpandIsrBetterFencing", "rr")
    for i, a, code, _ in m.true_leaders(s, pres):
        if not m.hw_reached_current_epoch(s, a):
            continue
        hw = s[a + HW]
        isr = s[a + ISR]
        mask = isr - m.ib
        for j, b in enumerate(bases):
            if mask >> j & 1 or s[b + LEADER] != code:
                continue
            if _caught_up_to_epoch(m, s, a, b, hw):
                out.append((labels[i][j], m.set_isr(s, a, isr + (1 << j))))


def leader_shrink_isr_better_fencing(m: TlaModel, s: State, out: Out, pres: Presumed) -> None:
    """LeaderShrinkIsrBetterFencing: the true leader drops an ISR member that does not
    follow it, or lacks the leader's last record, or holds a record of another epoch there
    (one condition, negated: one successor)."""
    bases = m.bases
    labels = m.labels("LeaderShrinkIsrBetterFencing", "rr")
    for i, a, code, _ in m.true_leaders(s, pres):
        isr, end = s[a + ISR], s[a + END]
        for j in m.members_of[isr]:
            b = bases[j]
            if j != i and (s[b + LEADER] != code or not _caught_up_to_epoch(m, s, a, b, end)):
                out.append((labels[i][j], m.set_isr(s, a, isr - (1 << j))))


def improved_leader_inc_high_watermark(
    m: TlaModel, s: State, out: Out, pres: Presumed,
) -> None:
    """ImprovedLeaderIncHighWatermark: a presumed leader with a record at its HW advances the
    HW when every member of its local ISR follows it and holds a record of the same epoch
    at that offset (the leader sees the epoch in the fetch; the follower's own leader epoch
    is not checked)."""
    bases, labels = m.bases, m.labels("ImprovedLeaderIncHighWatermark", "r")
    for i, a, code, _ in pres:
        hw = s[a + HW]
        if hw >= s[a + END]:
            continue
        for f in m.members_of[s[a + ISR]]:
            b = bases[f]
            if s[b + LEADER] != code or not _caught_up_to_epoch(m, s, a, b, hw + 1):
                break
        else:
            out.append((labels[i], m.inc_hw(s, a)))


def become_follower(m: TlaModel, s: State, out: Out, pres: Presumed) -> None:
    """BecomeFollower: a replica other than the request's leader takes a request of a higher
    epoch than its own (epoch, leader, ISR; HW kept) and truncates nothing.  Requests naming
    no leader are never acted on (the leader is bound to Replicas)."""
    bases, labels = m.bases, m.labels("BecomeFollower", "follows")
    for e, leader, request in m.led_requests(s):
        for j, b in enumerate(bases):
            if j != leader and e + 1 > s[b + EPOCH]:
                out.append((labels[e][leader][j], s[:b + EPOCH] + request + s[b + END:]))


def follower_fetch(m: TlaModel, s: State, out: Out, pres: Presumed) -> None:
    """FollowerFetch: a replica following a presumed leader copies the leader's record at
    its end offset when its last record has the leader's epoch for that offset (the fetch
    carries that epoch), in any leader epoch; HW = min(leader's HW, new end offset)."""
    labels = m.labels("FollowerFetch", "from")
    for i, a, _, followers in pres:
        for j, b in followers:
            if _caught_up_to_epoch(m, s, a, b, s[b + END]):
                m.fetch(s, out, labels[i][j], a, b)


def follower_truncate(m: TlaModel, s: State, out: Out, pres: Presumed) -> None:
    """FollowerTruncate: a replica following a presumed leader whose log is longer than the
    leader's, or whose last record's epoch differs from the leader's record at that offset
    (FollowerNeedsTruncation), truncates after the largest offset both logs agree on;
    HW = min(offset, HW).  Epoch, leader and ISR are kept."""
    L, block = m.L, m.block
    labels = m.labels("FollowerTruncate", "from")
    for i, a, _, followers in pres:
        end_l = s[a + END]
        leader_log = s[a + LOG:a + LOG + L]
        for j, b in followers:
            end = s[b + END]
            needs = end > end_l or (
                end > 0 and m.epoch_of[s[a + LOG + end - 1]] != m.epoch_of[s[b + LOG + end - 1]]
            )
            if not needs:
                continue
            key = leader_log + s[b:b + block] + s[b + EPOCH:b + END]
            new = m.truncated(first_non_matching_offset_from_tail, key)
            # the offset never exceeds the follower's end: ``new`` is never empty
            out.append((labels[i][j], s[:b] + new + s[b + block:]))


# -- the Z3 encodings (``isrlab.spec.symbolic.tla``), same names
# ------------------------------------


def _z_caught_up_to_epoch(z: TlaSystem, s: Frame, leader: int, f: int, offset: z3.ArithRef
                          ) -> z3.BoolRef:
    """IsFollowerCaughtUpToLeaderEpoch: presumed leader, follower following it, and at
    ``offset`` 0 or the records before ``offset`` of the same epoch on both."""
    last = offset - 1
    return z3.And(
        z._presumes(s, leader), s[f"leader.{f}"] == leader,
        z3.Or(offset == 0, z3.And(offset > 0, last < s[f"end.{leader}"], last < s[f"end.{f}"],
                                  z.cell(s, f"rep.{leader}", last) == z.cell(s, f"rep.{f}", last))),
    )


def z_leader_expand_isr_better_fencing(z: TlaSystem) -> Family:
    """LeaderExpandIsrBetterFencing, one instance per (leader, replica)."""
    def make(i: int, j: int) -> Callable[[Frame, Frame, Fresh], z3.BoolRef]:
        def rel(s: Frame, t: Frame, fresh: Fresh) -> z3.BoolRef:
            hw, end = s[f"hw.{i}"], s[f"end.{i}"]
            reached = z3.Or(hw == end, z3.And(hw < end, hw >= 0,
                                              z.cell(s, f"rep.{i}", hw) == s[f"epoch.{i}"]))
            return z3.And(z3.Not(s[f"isr.{i}.{j}"]), _z_caught_up_to_epoch(z, s, i, j, hw),
                          reached, *z._quorum_update(s, t, i, z._isr_with(s, i, j, True)))
        return rel
    return [((i, j), make(i, j)) for i in z.ids for j in z.ids]


def z_leader_shrink_isr_better_fencing(z: TlaSystem) -> Family:
    """LeaderShrinkIsrBetterFencing, one instance per (leader, replica ≠ leader)."""
    def make(i: int, j: int) -> Callable[[Frame, Frame, Fresh], z3.BoolRef]:
        def rel(s: Frame, t: Frame, fresh: Fresh) -> z3.BoolRef:
            lagging = z3.Not(_z_caught_up_to_epoch(z, s, i, j, s[f"end.{i}"]))
            return z3.And(s[f"isr.{i}.{j}"], lagging,
                          *z._quorum_update(s, t, i, z._isr_with(s, i, j, False)))
        return rel
    return [((i, j), make(i, j)) for i in z.ids for j in z.ids if i != j]


def z_improved_leader_inc_high_watermark(z: TlaSystem) -> Family:
    """ImprovedLeaderIncHighWatermark, one instance per replica."""
    def make(i: int) -> Callable[[Frame, Frame, Fresh], z3.BoolRef]:
        def rel(s: Frame, t: Frame, fresh: Fresh) -> z3.BoolRef:
            hw = s[f"hw.{i}"]
            return z3.And(
                z._presumes(s, i), hw >= 0, hw < s[f"end.{i}"], t[f"hw.{i}"] == hw + 1,
                *[z3.Implies(s[f"isr.{i}.{j}"], _z_caught_up_to_epoch(z, s, i, j, hw + 1))
                  for j in z.ids],
                *z._same(s, t, {f"hw.{i}"}))
        return rel
    return [((i,), make(i)) for i in z.ids]


def z_become_follower(z: TlaSystem) -> Family:
    """BecomeFollower, one instance per (leader, replica ≠ leader): no truncation."""
    def make(leader: int, i: int) -> Callable[[Frame, Frame, Fresh], z3.BoolRef]:
        def rel(s: Frame, t: Frame, fresh: Fresh) -> z3.BoolRef:
            e = fresh.int("req")
            return z3.And(z._request_guard(s, e, leader), e > s[f"epoch.{i}"],
                          *z._adopt(s, t, i, e, leader, s[f"hw.{i}"]),
                          *z._same(s, t, z._rs_vars(i)))
        return rel
    return [((leader, i), make(leader, i)) for leader in z.ids for i in z.ids if leader != i]


def z_follower_fetch(z: TlaSystem) -> Family:
    """FollowerFetch, one instance per (follower, leader ≠ follower)."""
    def make(f: int, leader: int) -> Callable[[Frame, Frame, Fresh], z3.BoolRef]:
        def rel(s: Frame, t: Frame, fresh: Fresh) -> z3.BoolRef:
            return z3.And(_z_caught_up_to_epoch(z, s, leader, f, s[f"end.{f}"]),
                          *z._replicate(s, t, leader, f))
        return rel
    return [((f, leader), make(f, leader)) for f in z.ids for leader in z.ids if f != leader]


def z_follower_truncate(z: TlaSystem) -> Family:
    """FollowerTruncate, one instance per (leader, follower ≠ leader)."""
    def make(leader: int, f: int) -> Callable[[Frame, Frame, Fresh], z3.BoolRef]:
        def rel(s: Frame, t: Frame, fresh: Fresh) -> z3.BoolRef:
            end, end_l = s[f"end.{f}"], s[f"end.{leader}"]
            needs = z3.Or(end > end_l, z3.And(
                end > 0, end - 1 < end_l,
                z.cell(s, f"rep.{f}", end - 1) != z.cell(s, f"rep.{leader}", end - 1)))
            to, to_def = z._first_non_matching_from_tail(s, fresh, leader, f)
            return z3.And(z._presumes(s, leader), s[f"leader.{f}"] == leader, needs, to_def,
                          *z._truncate(s, t, f, to),
                          t[f"hw.{f}"] == z3.If(to <= s[f"hw.{f}"], to, s[f"hw.{f}"]),
                          *z._same(s, t, z._log_vars(f) | {f"hw.{f}"}))
        return rel
    return [((leader, f), make(leader, f)) for leader in z.ids for f in z.ids if leader != f]


VARIANT = Variant(
    name="tla-kip320-first-try", module="Kip320FirstTry", order=35,
    doc="TLA+ Kip320FirstTry: fetch-time truncation on epoch mismatch, the first KIP-320 "
        "attempt (StrongIsr holds at the defaults, fails in configuration B: "
        "docs/tla-models.md)",
    replaces={
        "LeaderExpandIsr": (Action("LeaderExpandIsrBetterFencing",
                                   leader_expand_isr_better_fencing,
                                   z_leader_expand_isr_better_fencing),),
        "LeaderShrinkIsr": (Action("LeaderShrinkIsrBetterFencing",
                                   leader_shrink_isr_better_fencing,
                                   z_leader_shrink_isr_better_fencing),),
        "LeaderIncHighWatermark": (Action("ImprovedLeaderIncHighWatermark",
                                          improved_leader_inc_high_watermark,
                                          z_improved_leader_inc_high_watermark),),
        "BecomeFollower": (Action("BecomeFollower", become_follower, z_become_follower),),
        "FollowerReplicate": (Action("FollowerFetch", follower_fetch, z_follower_fetch),
                              Action("FollowerTruncate", follower_truncate,
                                     z_follower_truncate)),
    },
    z3_options=ARITH_OPTIONS,
    bmc_partial_order=True,
)
