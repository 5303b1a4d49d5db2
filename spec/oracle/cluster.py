"""The oracle's abstract replica and its "jump" steps, for comparison with the ``kafka`` model.

The judge (``isrlab.spec.oracle.judge``) keeps, per replica, what the protocol reads of its
log: the leader-epoch cache's ``(epoch, start offset)`` entries and the log end offset, as
unbounded integers.  Between two logged lines, unlogged steps may move these by any amount
a sequence of the model's steps could.  Those moves are the jumps below:

* ``produce(leader, epoch, n)``: ``n`` records appended by the leader of ``epoch`` (the
  model's ``Produce`` step, ``n`` times);
* ``catch_up(follower, leader, epoch, j, n)``: the leader appends ``j`` records, the follower
  fetches everything it has, the leader appends ``n - j`` more (``Produce`` ``j`` times,
  one ``Fetch``, ``Produce`` ``n - j`` times: the model's fetch returns the leader's whole
  log, so a follower ends at any offset the leader reached, never between its own old LEO
  and the leader's current one).

tests/oracle/test_jumps.py checks on small bounds that each jump's result is reached by the
model's own steps from every reachable state, and that every ``Produce`` and ``Fetch`` step
of the model is a jump; and that the judge's rules hold on every reachable state and step.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True, slots=True)
class Replica:
    """A replica's log as the protocol reads it: epoch-cache entries and LEO."""

    entries: tuple[tuple[int, int], ...]
    leo: int


def epoch_of(record: str) -> int:
    """The leader epoch of one of the ``kafka`` model's records (``m3@1``: epoch 1)."""
    return int(record.rsplit("@", 1)[1])


def replica_of(variables: Mapping[str, Any], broker: int) -> Replica:
    """Broker ``broker``'s replica in a state of the ``kafka`` model (its ``variables()``):
    the start offset of each epoch among its records, and its log's length."""
    log = variables[f"broker{broker}"]["log"]
    entries: list[tuple[int, int]] = []
    for offset, record in enumerate(log):
        epoch = epoch_of(record)
        if not entries or entries[-1][0] != epoch:
            entries.append((epoch, offset))
    return Replica(tuple(entries), len(log))


def produce(leader: Replica, epoch: int, n: int) -> Replica:
    """``n`` records appended by the leader of ``epoch`` (its cache gets ``(epoch, LEO)``
    unless its last entry is that epoch's)."""
    if n == 0:
        return leader
    entries = leader.entries
    if not entries or entries[-1][0] != epoch:
        entries = (*entries, (epoch, leader.leo))
    return Replica(entries, leader.leo + n)


def is_prefix(follower: Replica, leader: Replica) -> bool:
    """Whether the follower's log is a prefix of the leader's, as far as the caches tell
    (every entry of the follower's is the leader's, and its LEO within the leader's)."""
    if follower.leo > leader.leo:
        return False
    mine = [e for e in follower.entries]
    theirs = [e for e in leader.entries if e[1] < follower.leo]
    return mine == theirs


def catch_up(follower: Replica, leader: Replica, epoch: int, j: int,
             n: int) -> tuple[Replica, Replica]:
    """The leader appends ``j`` records, the follower (a prefix of it) fetches all of the
    leader's log, the leader appends ``n - j`` more: (follower, leader) after."""
    middle = produce(leader, epoch, j)
    fetched = Replica(middle.entries, middle.leo)
    return fetched, produce(middle, epoch, n - j)
