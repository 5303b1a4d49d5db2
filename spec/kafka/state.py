"""The state layout of the ``kafka`` cluster model: nested tuples of ints, nothing else.

A state is ``(ctrl, brokers, msgs, ghost)``; every field is a plain ``int`` or a tuple of
them, so states hash, compare and encode canonically (``marshal`` version 2, which writes
no back-references and is therefore byte-for-byte deterministic).

* ``ctrl = (controller_epoch, zk_leader, zk_epoch, zk_isr, ar, isr_changes)``: the
  controller's epoch and the ZooKeeper partition state node (leader, leader epoch, ISR as a
  bit mask over broker ids); ``ar`` the assigned replicas in preference order; ``isr_changes``
  the mask of brokers with an ISR change not yet propagated (``isrChangeSet`` non-empty).
* ``brokers[b] = (alive, log, hw, ckpt, flushed, epoch, leader, cepoch, isr, remotes, meta,
  fetch)``:
  the broker's ``Partition`` (leader epoch, leader or -1, known controller epoch, ISR mask
  when it leads), its log (each record one int: ``id * EPOCHS + epoch``), high watermark, the
  checkpointed HW, the flushed prefix length (only with unclean crashes), and while it leads
  ``remotes``: one ``(leo, age)`` per broker id (its own entry unused), ``age`` being the
  logical ticks since the follower last caught up, saturated at ``lag_ticks + 1``; with
  ``kafka_4485`` also the follower's previous fetch, ``(leo, age, lf_leo, lf_age)``: the
  leader's LEO then and the ticks since (``lf_age`` saturated likewise, ``lf_leo`` 0 once
  saturated or unknown, since such a fetch can no longer date a catch-up); ``meta`` its
  MetadataCache as ``(alive_mask, leader, epoch, isr)`` (``()`` when metadata is not modelled);
  ``fetch`` the follower's fetch response in flight with ``fetch=split``, ``()`` when none
  (always with ``fetch=atomic``): ``(leader, leader_epoch, fetch_offset, leader_leo, hw,
  records)``, ``records`` a tuple of record ints.
* ``msgs``: the in-flight controller requests, a tuple of ``(dest, kind, controller_epoch,
  leader, epoch, isr, ar)``; ``kind`` 0 is LeaderAndIsr, 1 is UpdateMetadata.  By default
  it is the concatenation of the channels, one per ``(controller_epoch, dest)`` (the queue
  of that controller's ``ControllerChannelManager`` for that broker), sorted by that key,
  each channel in FIFO order: only a channel's first request can be handled next.  With
  ``reorder_requests`` it is a set instead (sorted, no duplicates: any may go next).
* ``ghost = (next_id, origin, committed, acked, consumed, pending, flags, epoch_leader)``:
  variables no broker has, kept only for the properties: how many records were produced,
  the offset each record id was appended at, the leader epoch in which each record was
  first below a leader's HW / acknowledged to its producer / read by a consumer (-1: not
  yet), the acks=all requests waiting as ``(id, broker)`` pairs, event flags, and the broker
  that first led each epoch.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import NamedTuple

# ---- top level -------------------------------------------------------------------------
CTRL, BROKERS, MSGS, GHOST = 0, 1, 2, 3

# ---- ctrl ------------------------------------------------------------------------------
C_EPOCH, Z_LEADER, Z_EPOCH, Z_ISR, AR, ISR_CHANGES = 0, 1, 2, 3, 4, 5

# ---- broker ----------------------------------------------------------------------------
ALIVE, LOG, HW, CKPT, FLUSHED, EPOCH, LEADER, CEPOCH, ISR, REMOTES, META, FETCH = range(12)
LEO_, AGE, LF_LEO, LF_AGE = 0, 1, 2, 3  # fields of a remote entry (the last two: kafka_4485)
R_LEADER, R_EPOCH, R_OFFSET, R_LEADER_LEO, R_HW, R_RECORDS = range(6)  # fields of ``fetch``

# ---- message ---------------------------------------------------------------------------
M_DEST, M_KIND, M_CEPOCH, M_LEADER, M_EPOCH, M_ISR, M_AR = range(7)
LEADER_AND_ISR, UPDATE_METADATA = 0, 1

# ---- ghost -----------------------------------------------------------------------------
G_NEXT, G_ORIGIN, G_COMMITTED, G_ACKED, G_CONSUMED, G_PENDING, G_FLAGS, G_EPOCH_LEADER = (
    range(8)
)

# ghost flags
F_EPOCH_REGRESSED = 1
"""A broker adopted a smaller leader epoch than it had (without restarting)."""
F_TWO_LEADERS = 2
"""Two different brokers became leader in the same leader epoch."""
F_UNCLEAN = 4
"""An unclean leader election happened (a leader from outside the live ISR)."""
F_TRUNCATED = 8
"""A follower truncated records off its log (a ``sometimes`` witness)."""
F_HALTED = 16
"""A broker exited (``FatalExitError``): a follower past its leader's LEO with unclean
election disabled, before KAFKA-7414 (``kafka_7414=false``)."""

NONE = -1
"""No leader / not yet (ghost epochs) / unknown."""

class EpochCodec(NamedTuple):
    """Records as ints: ``id * epochs + epoch`` (``epochs`` = max leader epoch + 1)."""

    epochs: int

    def code(self, record_id: int, epoch: int) -> int:
        """The int of record ``record_id`` written in ``epoch``."""
        return record_id * self.epochs + epoch

    def record_id(self, code: int) -> int:
        """The producer-visible id of a record."""
        return code // self.epochs

    def epoch(self, code: int) -> int:
        """The leader epoch a record was written in."""
        return code % self.epochs


def members(mask: int) -> tuple[int, ...]:
    """The broker ids of a bit mask, ascending."""
    out = []
    i = 0
    while mask:
        if mask & 1:
            out.append(i)
        mask >>= 1
        i += 1
    return tuple(out)


def mask_of(ids: Iterable[int]) -> int:
    """The bit mask of an iterable of broker ids."""
    m = 0
    for i in ids:
        m |= 1 << i
    return m
