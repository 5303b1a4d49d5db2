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

from isrlab.proofs.group import Group
from isrlab.proofs.mechanism_obligations import system_group
from isrlab.spec.symbolic.leader_state_reset import stale_leo_system

REPLICAS = 3


def _group(key: str, reset_on_epoch: bool, title: str) -> Group:
    return system_group(key, lambda: stale_leo_system(REPLICAS, reset_on_epoch), REPLICAS,
                        title)


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
