"""The history variable of the KRaft refinement check (``isrlab.spec.kafka.kraft_refinement``):
the partition's last-known leader, kept beside each tracked ``tla-kraft-*`` state.

Kafka's controller (3.7.0 through trunk 2024-10, whenever the ELR is on) remembers the
leader a partition had when its ISR emptied and may elect it again
(``PartitionChangeBuilder.maybeUpdateLastKnownLeader`` and ``canElectLastKnownLeader``;
the gap step ``LastKnownLeaderElection`` of ``isrlab.spec.kafka.kraft_refinement_gaps``).
The port keeps no such field (its ``last_known_elr`` collects the ELR members that left the
ELR, ``ApplyPartitionChange``), so the check extends each port state with one more
component, ``LAST_LEADER``, computed from the port's own steps and read by no port step: a
history variable (Abadi and Lamport), which adds no behaviour to the port and removes
none.  The observation compares it with the ``kafka`` controller's last-known ELR at every
step, so the rule below is checked against Kafka's, not assumed."""

from __future__ import annotations

from typing import Any

from isrlab.spec.tla_kraft import layout as kl

Abstract = tuple[Any, ...]

LAST_LEADER = len(kl.VARIABLES)
"""The index of the history variable in a tracked port state: the 1-based broker id of the
partition's last-known leader, or ``kl.NIL``."""


def with_history(s: Abstract) -> Abstract:
    """Port state ``s`` (the spec's 23 variables) with no last-known leader, as in every
    initial state (Kafka's ``lastKnownElr`` starts empty)."""
    return (*s, kl.NIL)


def last_leader(s: Abstract) -> int:
    """The last-known leader a tracked port state carries (``kl.NIL``: none)."""
    return int(s[LAST_LEADER])


def stepped(u: Abstract, v: Abstract) -> Abstract:
    """``v``, reached from ``u`` by one port step (or gap step), with the last-known leader
    ``PartitionChangeBuilder`` (trunk 2024-10, ``useLastKnownLeaderInBalancedRecovery``, true
    in every controller path) would keep for the record the step wrote:

    * the record leaves the partition with a leader: cleared (``maybeUpdateLastKnownLeader``
      clears ``lastKnownElr`` when the partition will have, or keeps, a valid leader);
    * the record empties the ISR of a partition that had a leader: that leader
      (``maybeUpdateLastKnownLeader``: ``record.isr()`` empty sets ``lastKnownElr`` to
      ``[partition.leader]``);
    * otherwise unchanged (a leaderless partition keeps it: ``maybeUpdateRecordElr``).

    Only with KIP-966 (the ELR on); ``tla-kraft-3.5`` never empties the ISR, so the rule
    never fires there.  Kafka's guard against recording no leader (an ISR emptied while the
    partition is already leaderless writes ``[-1]``) is ``isrlab.core.partition_change_builder``'s:
    nothing is recorded."""
    before, after = u[kl.CON_PM], v[kl.CON_PM]
    h = v[LAST_LEADER]
    if after[4] != kl.NO_LEADER:
        h = kl.NIL
    elif before[1] and not after[1] and before[4] != kl.NO_LEADER:
        h = before[4]
    return v if h == v[LAST_LEADER] else (*v[:LAST_LEADER], h)


def observed(s: Abstract) -> int:
    """The last-known leader as the observation shows it: a mask over 0-based broker ids,
    as the ``kafka`` controller's last-known ELR."""
    h = last_leader(s)
    return 0 if h == kl.NIL else 1 << (h - 1)
