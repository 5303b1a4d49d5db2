"""Z3 encodings of ``core``'s leader-side ISR/HW steps for one partition (issue #5, part).

Encodes ``isrlab.core.isr.maybe_shrink_isr`` (Kafka <= 2.0's time rule, ``core``'s default,
and KAFKA-7152's: a follower at the leader's LEO stays), ``isrlab.core.isr.maybe_expand_isr``
(the pre-2.1 rule and KAFKA-7128's epoch-start rule) and
``isrlab.core.partition.maybe_increment_leader_hw`` as relations ``T(s, s')`` over a
``LeaderState`` of unbounded Z3 Ints/Bools, each with the HW over the ISR (Kafka <= 0.10.1,
``core``'s default) or, given ``caught_up = (now, lag)``, KAFKA-4485's HW over the ISR and
the followers caught up within ``lag`` (0.10.2+).

State (``n`` replicas, broker ids ``0 … n-1``, broker ``0`` the local leader):

* ``leo`` — the leader's LEO (``len(log)``); ``hw`` — its high watermark;
* ``isr[i]`` — whether broker ``i`` is in the ISR (``isr[0]`` is the leader itself);
* ``rleo[i]`` (``i ≥ 1``) — follower ``i``'s LEO as the leader knows it (``-1`` = unknown);
* ``caught[i]`` (``i ≥ 1``) — follower ``i``'s ``last_caught_up_time_ms``.

Shortcuts: the log's contents, ``zk_version``, the ZooKeeper write and the ``isr_changed`` /
``hw_incremented`` flags are not state; only a leader is encoded (on a non-leader the Python
returns the partition unchanged with ``NOT_LEADER_FOR_PARTITION``, which is outside this
state space); ``check_partition``'s rejection is the guard ``well_formed`` restricted to the
encoded fields (0 ≤ HW ≤ LEO, leader ∈ ISR): a rejected input has no successor.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TypeAlias

import z3

Int: TypeAlias = z3.ArithRef
Bool: TypeAlias = z3.BoolRef


@dataclass(frozen=True, slots=True)
class LeaderState:
    """One symbolic leader-side partition state (index 0 of ``rleo``/``caught`` is unused)."""

    leo: Int
    hw: Int
    isr: tuple[Bool, ...]
    rleo: tuple[Int, ...]
    caught: tuple[Int, ...]

    @property
    def n(self) -> int:
        """The number of replicas."""
        return len(self.isr)

    def variables(self) -> list[z3.ExprRef]:
        """Every Z3 constant of the state (for blocking clauses and quantifiers)."""
        return [self.leo, self.hw, *self.isr, *self.rleo[1:], *self.caught[1:]]


def leader_state(n: int, prefix: str) -> LeaderState:
    """Fresh Z3 constants named ``<prefix>.<field>[.i]`` for ``n`` replicas."""
    zero = z3.IntVal(0)
    return LeaderState(
        z3.Int(f"{prefix}.leo"),
        z3.Int(f"{prefix}.hw"),
        tuple(z3.Bool(f"{prefix}.isr.{i}") for i in range(n)),
        (zero, *(z3.Int(f"{prefix}.rleo.{i}") for i in range(1, n))),
        (zero, *(z3.Int(f"{prefix}.caught.{i}") for i in range(1, n))),
    )


def well_formed(s: LeaderState) -> Bool:
    """The part of ``isrlab.core.state.check_partition`` on the encoded fields.

    ``0 ≤ HW ≤ LEO`` and the leader is in its (hence non-empty) ISR.
    """
    return z3.And(s.hw >= 0, s.hw <= s.leo, s.isr[0])


def _isr_leo(s: LeaderState, i: int) -> Int:
    return s.leo if i == 0 else s.rleo[i]


CaughtUp: TypeAlias = "tuple[Int, Int] | None"
"""KAFKA-4485's ``(now_ms, hw_lag_ms)`` of ``isrlab.core.partition.raise_leader_hw`` (``None``:
the ISR only)."""


def counts_for_hw(isr: Bool, caught: Int, caught_up: CaughtUp) -> Bool:
    """Whether a follower's LEO enters the HW minimum: in the ISR, or (KAFKA-4485) caught
    up within the lag (``now - caught <= lag``)."""
    if caught_up is None:
        return isr
    now, lag = caught_up
    return z3.Or(isr, now - caught <= lag)


def _raised_hw(s: LeaderState, isr: tuple[Bool, ...], caught_up: CaughtUp = None) -> Int:
    """``raise_leader_hw``'s new HW: ``max(HW, min LEO over isr)`` (isr contains the leader).

    The minimum is a nested ``If`` over the members (with ``caught_up``, also the caught-up
    followers); the leader's LEO starts it because a well-formed leader is in ``isr``.
    """
    low: Int = s.leo
    for i in range(1, s.n):
        member = counts_for_hw(isr[i], s.caught[i], caught_up)
        low = z3.If(z3.And(member, s.rleo[i] < low), s.rleo[i], low)
    return z3.If(low > s.hw, low, s.hw)


def _frame(s: LeaderState, t: LeaderState) -> Bool:
    """LEO, follower LEOs and caught-up times unchanged."""
    same = [t.leo == s.leo]
    same += [t.rleo[i] == s.rleo[i] for i in range(1, s.n)]
    same += [t.caught[i] == s.caught[i] for i in range(1, s.n)]
    return z3.And(same)


def _isr_is(t: LeaderState, isr: tuple[Bool, ...]) -> Bool:
    return z3.And([t.isr[i] == isr[i] for i in range(t.n)])


def increment_leader_hw(s: LeaderState, t: LeaderState, caught_up: CaughtUp = None) -> Bool:
    """``isrlab.core.partition.maybe_increment_leader_hw`` on a leader.

    The HW becomes the smallest LEO in the ISR (unknown follower LEOs are ``-1``) if that
    is larger, else stays; nothing else changes.  Shortcut: ``hw_incremented`` is
    ``t.hw > s.hw``, not a state field.
    """
    return z3.And(well_formed(s), _frame(s, t), _isr_is(t, s.isr),
                  t.hw == _raised_hw(s, s.isr, caught_up))


def out_of_sync(s: LeaderState, i: int, now_ms: Int, lag_ms: Int,
                kafka_7152: bool = False) -> Bool:
    """``get_out_of_sync_replicas``' test for follower ``i``: in ISR, ``now - caught > lag``
    and, with ``kafka_7152`` (KAFKA-7152, Kafka 2.1+), its LEO not the leader's (a follower
    at the leader's LEO is in sync however long ago it last fetched; an unknown LEO, ``-1``,
    never is the leader's)."""
    late = z3.And(s.isr[i], now_ms - s.caught[i] > lag_ms)
    return z3.And(late, s.rleo[i] != s.leo) if kafka_7152 else late


def shrink_isr(s: LeaderState, t: LeaderState, now_ms: Int, lag_ms: Int,
               kafka_4485: bool = False, kafka_7152: bool = False) -> Bool:
    """``isrlab.core.isr.maybe_shrink_isr(p, now_ms, lag_ms, kafka_4485, kafka_7152)`` on a
    leader.

    Negative ``now``/``lag`` or a malformed state: no successor (the Python's ``Failure``).
    With no out-of-sync follower (``out_of_sync``) nothing changes (the HW is not even
    re-raised, as in ``_shrink``); otherwise they leave the ISR and the HW is raised over
    the smaller ISR.
    """
    out = [z3.BoolVal(False)] + [out_of_sync(s, i, now_ms, lag_ms, kafka_7152)
                                 for i in range(1, s.n)]
    new_isr = tuple(z3.And(s.isr[i], z3.Not(out[i])) for i in range(s.n))
    any_out = z3.Or(out)
    return z3.And(
        now_ms >= 0, lag_ms >= 0, well_formed(s), _frame(s, t), _isr_is(t, new_isr),
        t.hw == z3.If(any_out,
                      _raised_hw(s, new_isr, (now_ms, lag_ms) if kafka_4485 else None), s.hw),
    )


def may_join_isr(s: LeaderState, j: int, epoch_start: Int | None) -> Bool:
    """``isrlab.core.isr.may_join_isr`` for follower ``j``: LEO ≥ HW (and ≥ the epoch start).

    ``epoch_start=None`` is the pre-2.1 rule; an Int is KAFKA-7128's
    ``leader_epoch_start_offset``, passed in because the log is not state (shortcut).
    """
    reached_hw = s.rleo[j] >= s.hw
    return reached_hw if epoch_start is None else z3.And(reached_hw, s.rleo[j] >= epoch_start)


def expand_isr(s: LeaderState, t: LeaderState, j: int, epoch_start: Int | None = None,
               caught_up: CaughtUp = None) -> Bool:
    """``isrlab.core.isr.maybe_expand_isr(p, j, epoch_start)`` on a leader, follower ``1 ≤ j < n``.

    ``j`` outside the followers (``NOT_A_REPLICA``) or a malformed state: no successor.
    Follower ``j`` joins if not in the ISR and ``may_join_isr``; then the HW is raised
    over the (possibly larger) ISR regardless.
    """
    if not 1 <= j < s.n:
        return z3.BoolVal(False)
    joins = z3.And(z3.Not(s.isr[j]), may_join_isr(s, j, epoch_start))
    new_isr = tuple(z3.Or(s.isr[i], joins) if i == j else s.isr[i] for i in range(s.n))
    return z3.And(
        well_formed(s), _frame(s, t), _isr_is(t, new_isr),
        t.hw == _raised_hw(s, new_isr, caught_up),
    )
