"""Obligations of the leader-side reset of issue 36 (``kafka-core`` groups).

The ``StaleLeo`` system of ``isrlab.spec.symbolic.leader_state_reset`` (docs/findings/
stale-leo-failover.md): a leader that learns a newer leader epoch while it still leads,
possibly having skipped epochs, and its followers' recorded LEOs.  Each group records
IndInit / IndNext per conjunct and action, and a bounded search (BMC) for the shortest
trace from Init to a HW rise that counts an LEO recorded in an earlier epoch:

* ``stale-leo-on-epoch`` -- the fix (``leader_state_reset=on-epoch``): ``makeLeader`` also
  resets the remote replicas when the leader epoch changes; expected proved;
* ``stale-leo-on-leadership`` -- every release's reset (only when ``isNewLeader``):
  expected refuted at ``LeaderEpoch``, with the reachable 4-step trace.
"""

from __future__ import annotations

from collections.abc import Callable

import z3

from isrlab.proofs.group import Group, Row
from isrlab.proofs.mechanism_obligations import CORE_MODEL, bmc_row, induction_rows
from isrlab.spec.symbolic.core_mechanisms import System
from isrlab.spec.symbolic.leader_state_reset import stale_leo_system

REPLICAS = 3


def _formulas(make: Callable[[], System]) -> Callable[[Group], list[z3.ExprRef]]:
    def formulas(group: Group) -> list[z3.ExprRef]:
        system = make()
        s, t = system.frame("s"), system.frame("t")
        out: list[z3.ExprRef] = [system.init(s)]
        out += [a(s, t) for _, a in system.actions]
        return out + [i(s) for _, i in system.invariants]
    return formulas


def _group(key: str, reset_on_epoch: bool, title: str) -> Group:
    def make() -> System:
        return stale_leo_system(REPLICAS, reset_on_epoch)

    def run(group: Group, timeout_ms: int) -> tuple[Row, ...]:
        system = make()
        return (*induction_rows(system, timeout_ms), bmc_row(system, timeout_ms))

    return Group(CORE_MODEL, key, REPLICAS, title, run, _formulas(make))


def stale_leo_groups() -> list[Group]:
    """The two groups, fix first."""
    return [
        _group("stale-leo-on-epoch", True,
               "Issue 36's fix (no release): makeLeader resets the remote replicas on a new "
               "leader epoch too; the HW never counts an LEO recorded in an earlier epoch"),
        _group("stale-leo-on-leadership", False,
               "Every release (0.8 to 4.x): makeLeader resets the remote replicas only for "
               "a new leader; a leader that skipped an epoch counts a follower's LEO from "
               "before it (expected refuted)"),
    ]
