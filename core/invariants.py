"""The properties every Kafka engineer expects, as pure predicates.

Per partition (one broker's view): HW <= LEO, LSO <= HW, LW <= HW, leader ∈ ISR ⊆ AR with
a non-empty ISR, epochs never going backwards.  Across the replicas of one partition
(what a cluster model checks in every state): records below a leader's HW are on every
ISR member (nothing committed is lost), replicas' logs agree below their HWs, and an
acknowledged acks=all write is still in the leader's log.  Some of these fail in the
older protocol versions; the models exist to find those failures.

Each predicate is total and allocation-light, so a model checker can call it per state.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from isrlab.core.state import Partition, is_leader, low_watermark
from isrlab.core.truncation import Log


def partition_violations(partition: Partition) -> tuple[str, ...]:
    """The names of the per-partition properties ``partition`` breaks (empty: none).

    ``HW <= LEO``, ``LW <= HW``, ``ISR ⊆ AR`` and, on the leader, ``leader ∈ ISR`` (which
    implies a non-empty ISR).  ``LSO <= HW`` holds by construction: ``last_stable_offset``
    is capped at the HW, so there is nothing to check.
    """
    broken = []
    if partition.high_watermark > len(partition.log):
        broken.append("HW <= LEO")
    if low_watermark(partition) > partition.high_watermark:
        broken.append("LW <= HW")
    if not partition.isr <= frozenset(partition.assigned_replicas):
        broken.append("ISR ⊆ AR")
    if is_leader(partition) and partition.local_broker_id not in partition.isr:
        broken.append("leader ∈ ISR")
    return tuple(broken)


def epochs_did_not_decrease(before: Partition, after: Partition) -> bool:
    """A broker never moves a partition's leader epoch or controller epoch backwards."""
    return (
        after.leader_epoch >= before.leader_epoch
        and after.controller_epoch >= before.controller_epoch
    )


def committed_records_on_isr(leader: Partition, logs: Mapping[int, Log]) -> bool:
    """Every record below the leader's HW is, at the same offset, on every ISR member.

    ``logs`` maps broker id -> that broker's log; ISR members missing from it are taken
    as having lost everything (an empty log).  With clean election this must hold; with
    truncate-to-HW it can fail (KIP-101).
    """
    committed = leader.log[: leader.high_watermark]
    return all(logs.get(b, ())[: len(committed)] == committed for b in leader.isr)


def logs_agree_below_high_watermarks(replicas: Iterable[Partition]) -> bool:
    """Any two replicas' logs are equal below the smaller of their two HWs.

    Kafka's "replicas agree on the committed prefix"; divergence after fast leader
    changes breaks it (KIP-279).
    """
    views = [(p.high_watermark, p.log) for p in replicas]
    for i, (hw_a, log_a) in enumerate(views):
        for hw_b, log_b in views[i + 1 :]:
            bound = min(hw_a, hw_b)
            if log_a[:bound] != log_b[:bound]:
                return False
    return True


def acknowledged_records_present(acknowledged_ids: Iterable[int], log: Log) -> bool:
    """Every acknowledged acks=all write (by record id) is still in ``log``.

    The durability promise of acks=all with enough in-sync replicas under clean election.
    """
    present = {record.id for record in log}
    return all(i in present for i in acknowledged_ids)


def consumer_read_survives(consumed: Log, log: Log) -> bool:
    """What a consumer read (a prefix it saw below some HW) is still a prefix of ``log``.

    "Consumers never read a record that later disappears."
    """
    return log[: len(consumed)] == consumed
