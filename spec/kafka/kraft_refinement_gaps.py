"""The Kafka steps the KRaft TLA+ ports lack, as extra abstract steps of the refinement
check (``isrlab.spec.kafka.kraft_refinement``); docs/kafka-model.md ("Refinement to the
KRaft TLA+ level") argues each from Kafka's code and the specification's text.

Each gap step is a function of a port state and the (1-based) broker of the ``kafka`` step
it accompanies, returning the port states it leads to; ``GAPS`` says which ``kafka``
actions may use it.  The port itself is unchanged (its TLC conformance stands)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from isrlab.spec.tla_kraft import layout as kl
from isrlab.spec.tla_kraft.model import KraftModel

Abstract = tuple[Any, ...]
GapStep = Callable[[KraftModel, Abstract, int], list[Abstract]]


def leader_inc_hw_on_write(tla: KraftModel, s: Abstract, b: int) -> list[Abstract]:
    """LeaderIncHwOnWrite: leader ``b`` raises its HW over its log as it now is.

    Kafka's ``Partition.appendRecordsToLeader`` calls ``maybeIncrementLeaderHW`` after the
    append: the HW becomes the least LEO of the maximal ISR, the leader's own new LEO when
    the ISR is the leader alone.  The spec's ``WriteRecordToLeader`` computes the HW with
    ``CommitOffsetOnWrite``, whose ``GetCommitOffset`` answers 0 when ``LeoOf(b) = 1``: the
    leader's log *before* the write, so a leader alone in its ISR does not commit the first
    record of an empty log until a later fetch or partition change.  The step: the HW of a
    running leader recomputed over its maximal ISR (``CommitOffsetOnUpdate``), as the
    spec's own partition-change path does."""
    if s[kl.BROKER_STATE][b - 1][0] != kl.RUNNING or s[kl.P_STATUS][b - 1] != kl.LEADER:
        return []
    d = list(s)
    tla._update_hwm_on_partition_change(s, d, b, s[kl.P_MD][b - 1])
    t = tuple(d)
    return [t] if t != s else []


def leader_awaits_metadata_on_fenced_error(tla: KraftModel, s: Abstract,
                                           b: int) -> list[Abstract]:
    """LeaderAwaitsMetadataOnFencedError: leader ``b`` takes a FENCED_LEADER_EPOCH answer to
    its pending AlterPartition and keeps the proposal pending.

    Kafka's ``Partition.handleAlterPartitionError`` (3.5 through 4.0) resets the partition
    state to the last committed one only for INELIGIBLE_REPLICA and
    OPERATION_NOT_ATTEMPTED, where the controller says the request was not applied; for
    FENCED_LEADER_EPOCH and INVALID_UPDATE_VERSION it changes nothing ("awaiting new the
    latest metadata"): the maximal ISR stays, and no new AlterPartition is sent until a
    metadata delta installs the controller's state.  The spec's
    ``ReceiveAlterPartitionResponse`` rolls the maximal ISR back to the ISR on every error
    and ends the pending request.  The step: the answer is consumed, the broker's partition
    metadata and pending request unchanged."""
    if (s[kl.BROKER_STATE][b - 1][0] != kl.RUNNING or s[kl.P_STATUS][b - 1] != kl.LEADER
            or not KraftModel._pending(s, b)):
        return []
    request = s[kl.P_PENDING_AP][b - 1][1]
    out = []
    for m in s[kl.MESSAGES]:
        if (m[0] == kl.AP_RESP and m[1] == kl.ERR_FENCED_LEADER_EPOCH and m[3] == b
                and m[2] == request):
            d = list(s)
            KraftModel._discard(s, d, m)
            out.append(tuple(d))
    return out


def leader_resends_refused_alter_partition(tla: KraftModel, s: Abstract,
                                           b: int) -> list[Abstract]:
    """LeaderResendsRefusedAlterPartition: leader ``b`` sends an AlterPartition identical
    to one the controller already refused.

    Kafka's leader proposes whenever ``Partition.maybeExpandIsr`` / ``maybeShrinkIsr``
    find the ISR should change and no proposal is pending; after INELIGIBLE_REPLICA it is
    back at its committed state, and a follower still caught up and eligible in the
    leader's own metadata image (``isReplicaIsrEligible``: its image may not have the
    fencing yet) is proposed again on its next fetch, the same request.  The spec's
    ``SendAlterPartitionRequest`` has ``__AvoidCycle``: a request previously sent may be
    sent again only if the controller would now accept it, a bound on the state space, not
    a rule of Kafka's.  The step: ``SendAlterPartitionRequest`` without that conjunct."""
    free = list(s)
    free[kl.MESSAGES_DISCARD] = ()
    out = []
    for t in tla.send_alter_partition_request(tuple(free), b):
        d = list(t)
        d[kl.MESSAGES_DISCARD] = s[kl.MESSAGES_DISCARD]
        out.append(tuple(d))
    return [t for t in out if t not in tla.send_alter_partition_request(s, b)]


_PROPOSING = ("Fetch", "ShrinkIsr", "AlterPartitionResponse", "HandleCommit")
"""The ``kafka`` steps in which a leader may send an AlterPartition."""

GAPS: dict[str, tuple[tuple[str, ...], GapStep]] = {
    "LeaderIncHwOnWrite": (("Produce",), leader_inc_hw_on_write),
    "LeaderAwaitsMetadataOnFencedError": (("AlterPartitionResponse",),
                                          leader_awaits_metadata_on_fenced_error),
    "LeaderResendsRefusedAlterPartition": (_PROPOSING, leader_resends_refused_alter_partition),
}
"""Each gap step: the ``kafka`` actions it may accompany, and the step."""

GAP_STEPS = tuple(GAPS)
"""Every gap step, by name."""


def gap_steps(tla: KraftModel, s: Abstract, action: str, broker: int,
              enabled: Sequence[str]) -> list[tuple[str, Abstract]]:
    """The gap steps among ``enabled`` that the ``kafka`` step ``action`` of ``broker``
    (1-based) may take from ``s``, with their names."""
    out: list[tuple[str, Abstract]] = []
    # a fetch is the follower's step, but the leader's AlterPartition may come with it
    brokers = tla.brokers if action == "Fetch" else (broker,) if broker > 0 else ()
    for name in enabled:
        actions, step = GAPS[name]
        if action in actions:
            out += [(name, t) for b in brokers for t in step(tla, s, b)]
    return out
