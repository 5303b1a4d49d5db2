"""``tla-kip320``: module Kip320 (Kafka 2.1).

KIP-279's truncation plus epoch fencing: the fetch, the truncation, the high-watermark
increment and the ISR changes all check that the follower is in the leader's epoch.  The
module replaces five of KafkaReplication's actions.
"""

from __future__ import annotations

from isrlab.spec.tla.layout import END, EPOCH, HW, ISR, LEADER, LOG, RQ
from isrlab.spec.tla.model import (
    N_F_EXPAND,
    N_F_FETCH,
    N_F_INC_HW,
    N_F_SHRINK,
    N_F_TRUNCATE,
    RULE_KIP279,
    NativeAction,
    Out,
    Presumed,
    State,
    TlaModel,
    native_action,
)
from isrlab.spec.variants import Action, Variant
from isrlab.spec.variants.kip279 import first_non_matching_offset_from_tail


def fenced_follower_fetch(m: TlaModel, s: State, out: Out, pres: Presumed) -> None:
    """FencedFollowerFetch: FollowerReplicate restricted to followers in the leader's epoch
    (IsFollowingLeaderEpoch; KIP-320: the fetch carries the epoch and the leader rejects
    a stale one)."""
    labels = m.labels("FencedFollowerFetch", "from")
    for i, a, _, followers in pres:
        epoch = s[a + EPOCH]
        for j, b in followers:
            if s[b + EPOCH] == epoch:
                m.fetch(s, out, labels[i][j], a, b)


def fenced_leader_inc_high_watermark(m: TlaModel, s: State, out: Out, pres: Presumed) -> None:
    """FencedLeaderIncHighWatermark: the HW advances past a record the replica has when
    every member of its local ISR follows it in its epoch (IsFollowingLeaderEpoch, which
    also asks that it presume leadership) and has that record.  With an empty local ISR
    the condition holds vacuously, leader or not, as in the spec."""
    bases, lb, labels = m.bases, m.lb, m.labels("FencedLeaderIncHighWatermark", "r")
    for i, a in enumerate(bases):
        hw = s[a + HW]
        if hw >= s[a + END]:
            continue
        code, epoch = lb + i, s[a + EPOCH]
        members = m.members_of[s[a + ISR]]
        if members and s[a + LEADER] != code:
            continue
        for f in members:
            b = bases[f]
            if s[b + LEADER] != code or s[b + EPOCH] != epoch or s[b + END] <= hw:
                break
        else:
            out.append((labels[i], m.inc_hw(s, a)))


def fenced_leader_shrink_isr(m: TlaModel, s: State, out: Out, pres: Presumed) -> None:
    """FencedLeaderShrinkIsr: the true leader drops an ISR member that is off its epoch or
    has a smaller end offset.  The two reasons are two disjuncts: a member for which both
    hold yields the same successor twice (as TLC counts)."""
    bases = m.bases
    labels = m.labels("FencedLeaderShrinkIsr", "rr")
    for i, a, code, _ in m.true_leaders(s, pres):
        epoch = s[a + EPOCH]
        isr, end = s[a + ISR], s[a + END]
        for j in m.members_of[isr]:
            if j == i:
                continue
            b = bases[j]
            off_epoch = s[b + LEADER] != code or s[b + EPOCH] != epoch
            reasons = off_epoch + (s[b + END] < end)
            if reasons:
                succ = m.set_isr(s, a, isr - (1 << j))
                out.extend([(labels[i][j], succ)] * reasons)


def fenced_leader_expand_isr(m: TlaModel, s: State, out: Out, pres: Presumed) -> None:
    """FencedLeaderExpandIsr: the true leader adds a replica following its epoch that has
    the record below the leader's HW, once that HW has reached the leader's own epoch (the
    HW is at the log end or at a record of the leader's epoch), so that a new member holds
    everything the previous leader may have committed."""
    bases = m.bases
    labels = m.labels("FencedLeaderExpandIsr", "rr")
    for i, a, code, _ in m.true_leaders(s, pres):
        if not m.hw_reached_current_epoch(s, a):
            continue
        epoch, hw = s[a + EPOCH], s[a + HW]
        isr = s[a + ISR]
        mask = isr - m.ib
        for j, b in enumerate(bases):
            if mask >> j & 1 or s[b + LEADER] != code or s[b + EPOCH] != epoch:
                continue
            if hw == 0 or hw - 1 < s[b + END]:
                out.append((labels[i][j], m.set_isr(s, a, isr + (1 << j))))


def fenced_become_follower_and_truncate(
    m: TlaModel, s: State, out: Out, pres: Presumed,
) -> None:
    """FencedBecomeFollowerAndTruncate: as KIP-279's truncation, but only once the new
    leader has itself taken the request's epoch (the OffsetForLeaderEpoch request carries
    the epoch and a leader still in an older one rejects it).  Only the request of a
    leader's own current epoch can qualify, so the loop runs over presumed leaders."""
    bases, L, block = m.bases, m.L, m.block
    labels = m.labels("FencedBecomeFollowerAndTruncate", "follows")
    nle = s[1]
    for i, a, code, _ in pres:
        epoch = s[a + EPOCH]
        k = RQ + 2 * epoch - 2
        if not 0 < epoch <= nle or s[k] != code:
            continue
        leader_log = s[a + LOG:a + LOG + L]
        request = bytes((epoch,)) + s[k:k + 2]
        for j, b in enumerate(bases):
            if j == i or epoch <= s[b + EPOCH]:
                continue
            new = m.truncated(first_non_matching_offset_from_tail,
                              leader_log + s[b:b + block] + request)
            # KIP-279 never truncates past the follower's end: ``new`` is never empty
            out.append((labels[epoch - 1][i][j], s[:b] + new + s[b + block:]))


# The compiled module (spec/tla/_native.c) transcribes these five actions.
native_action(fenced_follower_fetch, NativeAction(N_F_FETCH, "FencedFollowerFetch", "from"))
native_action(fenced_leader_inc_high_watermark,
              NativeAction(N_F_INC_HW, "FencedLeaderIncHighWatermark", "r"))
native_action(fenced_leader_shrink_isr, NativeAction(N_F_SHRINK, "FencedLeaderShrinkIsr", "rr"))
native_action(fenced_leader_expand_isr, NativeAction(N_F_EXPAND, "FencedLeaderExpandIsr", "rr"))
native_action(fenced_become_follower_and_truncate, NativeAction(
    N_F_TRUNCATE, "FencedBecomeFollowerAndTruncate", "follows",
    rule=first_non_matching_offset_from_tail, inline=RULE_KIP279))

VARIANT = Variant(
    name="tla-kip320", module="Kip320", order=40,
    doc="TLA+ Kip320: KIP-279 truncation plus epoch fencing (Kafka 2.1)",
    replaces={
        "LeaderExpandIsr": (Action("FencedLeaderExpandIsr", fenced_leader_expand_isr,
                                   lambda system: system.expand_family(True)),),
        "LeaderShrinkIsr": (Action("FencedLeaderShrinkIsr", fenced_leader_shrink_isr,
                                   lambda system: system.shrink_family(True)),),
        "LeaderIncHighWatermark": (
            Action("FencedLeaderIncHighWatermark", fenced_leader_inc_high_watermark,
                   lambda system: system.inc_hw_family(True)),),
        "BecomeFollower": (
            Action("FencedBecomeFollowerAndTruncate", fenced_become_follower_and_truncate,
                   lambda system: system.become_follower_family("kip320")),),
        "FollowerReplicate": (Action("FencedFollowerFetch", fenced_follower_fetch,
                                     lambda system: system.fetch_family(True)),),
    },
    proofs="strengthened",
)

