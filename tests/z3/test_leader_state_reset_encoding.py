"""isrlab.spec.symbolic.leader_state_reset against isrlab.core.partition.make_leader, and the
StaleLeo obligations (docs/findings/stale-leo-failover.md)."""

from __future__ import annotations

import itertools
from dataclasses import replace

import z3

from isrlab.core.partition import make_leader
from isrlab.core.state import UNKNOWN_OFFSET
from isrlab.proofs.mechanism_obligations import induction_rows, shortest_violation
from isrlab.spec.symbolic.leader_state_reset import (
    TARGET,
    remote_leo_after_make_leader,
    stale_leo_system,
)
from tests.core.helpers import in_sync_leader, state


def test_the_encoded_reset_is_make_leaders_for_every_case() -> None:
    cases = itertools.product((False, True), (False, True), (False, True))
    for new_leader, epoch_changed, reset_on_epoch in cases:
        p = in_sync_leader(4)  # broker 0 leads, followers recorded at LEO 4
        epoch = p.leader_epoch + (1 if epoch_changed else 0)
        if new_leader:  # broker 0 follows broker 1: no remote state (makeFollower drops it)
            p = replace(p, leader=1, isr=frozenset(), remotes=())
        got = make_leader(p, state(0, (0, 1, 2), leader_epoch=epoch), 7,
                          reset_on_epoch=reset_on_epoch).unwrap().partition
        python = next(r.log_end_offset for r in got.remotes if r.broker_id == 1)
        encoded = z3.simplify(remote_leo_after_make_leader(
            z3.IntVal(4), z3.BoolVal(new_leader), z3.BoolVal(epoch_changed), reset_on_epoch))
        assert isinstance(encoded, z3.IntNumRef)
        assert encoded.as_long() == python, (new_leader, epoch_changed, reset_on_epoch)
        assert python in (4, UNKNOWN_OFFSET)


def test_with_the_fix_every_conjunct_is_inductive_and_no_trace_exists() -> None:
    system = stale_leo_system(3, reset_on_epoch=True)
    assert {r.status for r in induction_rows(system, 30000)} == {"proved"}
    assert shortest_violation(system, 6, 30000) is None


def test_kafkas_reset_breaks_it_at_make_leader_after_a_skipped_epoch() -> None:
    # Counted by hand: follower 1 fetches in epoch 0 (its LEO recorded, epoch 0), the
    # controller writes epoch 1, makeLeader tells the leader of epoch 1 while it still leads
    # (isNewLeader false: the record is kept), and the HW rises counting the epoch-0 record.
    system = stale_leo_system(3, reset_on_epoch=False)
    rows = induction_rows(system, 30000)
    broken = {(r.target, r.action) for r in rows if r.status != "proved"}
    assert broken == {("RecordedThisEpoch", "LeaderEpoch"), ("CountedLeoHeld", "LeaderEpoch")}
    found = shortest_violation(system, 6, 30000)
    assert found == (4, ["Fetch[1]", "Elect", "LeaderEpoch", "RaiseHw"])
    assert TARGET == "NoEarlierEpochLeoCounted"
