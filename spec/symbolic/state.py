"""The concrete state of the ``tla-*`` models as the symbolic encodings see it.

``KState`` is a hashable snapshot of the six variables of the TLA+ specification
(replicaLog, replicaState, nextRecordId, nextLeaderEpoch, leaderAndIsrRequests,
quorumState) with replicas numbered ``0 … n-1`` (named ``r1 … rn``), ``None`` encoded as
``-1`` (``NONE_REPLICA``) and the ``Nil`` epoch as ``-1`` (``NIL_EPOCH``).

Modelling shortcuts, both exact for every reachable state of the specification:

* a log is its records below the end offset: the slots at and beyond the end offset are
  always ``Nil`` (``Init`` clears them, ``Append`` fills the end slot, ``TruncateTo`` clears
  the tail), so they carry no information;
* ``leaderAndIsrRequests`` is a *sequence indexed by leader epoch*: every request is added by
  the controller together with a fresh epoch from the ``nextLeaderEpoch`` sequence, so the
  set always holds exactly one request per epoch ``0 … nextLeaderEpoch-1``.
  ``from_variables`` rejects a view that breaks this.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

NONE_REPLICA = -1
NIL_EPOCH = -1

Record = tuple[int, int]  # (record id, leader epoch)


@dataclass(frozen=True, slots=True)
class ReplicaState:
    """One replica's cached quorum state and local high watermark."""

    hw: int
    leader_epoch: int
    leader: int
    isr: frozenset[int]


@dataclass(frozen=True, slots=True)
class QuorumState:
    """The controller's (ZooKeeper's) leader, epoch and ISR; also the shape of a request."""

    leader_epoch: int
    leader: int
    isr: frozenset[int]


@dataclass(frozen=True, slots=True)
class KState:
    """A hashable snapshot of the specification's variables (see the module docstring)."""

    logs: tuple[tuple[Record, ...], ...]
    replica_state: tuple[ReplicaState, ...]
    next_record_id: int
    next_leader_epoch: int
    requests: tuple[QuorumState, ...]
    quorum: QuorumState

    @property
    def replicas(self) -> int:
        """The number of replicas."""
        return len(self.logs)


def replica_name(index: int) -> str:
    """The TLA+ model value of replica ``index``: ``r1``, ``r2``, …"""
    return f"r{index + 1}"


class ViewError(ValueError):
    """A variables view that does not have the shape of the specification's state."""


def _replica_index(value: Any, names: Sequence[str]) -> int:
    if value is None or value == "NONE":
        return NONE_REPLICA
    if isinstance(value, str) and value in names:
        return names.index(value)
    raise ViewError(f"not a replica: {value!r}")


def _epoch(value: Any) -> int:
    if value is None:
        return NIL_EPOCH
    return int(value)


def _isr(value: Any, names: Sequence[str]) -> frozenset[int]:
    return frozenset(_replica_index(v, names) for v in value)


def _field(record: Any, *keys: str) -> Any:
    for key in keys:
        if key in record:
            return record[key]
    raise ViewError(f"record {record!r} has none of the fields {keys}")


def _quorum(record: Mapping[str, Any], names: Sequence[str]) -> QuorumState:
    return QuorumState(
        _epoch(_field(record, "leaderEpoch", "leader_epoch")),
        _replica_index(record["leader"], names),
        _isr(record["isr"], names),
    )


def _log(log: Any) -> tuple[Record, ...]:
    """Accept ``{"endOffset": n, "records": [...]}`` or a plain sequence of records."""
    if isinstance(log, Mapping):
        end = int(_field(log, "endOffset", "end_offset"))
        records = list(log["records"])[:end]
    else:
        records = list(log)
    return tuple((int(r["id"]), int(r["epoch"])) for r in records)


def from_variables(view: Mapping[str, Any], names: Sequence[str]) -> KState:
    """The ``KState`` of a model's ``variables()`` view (TLA+ variable names).

    ``names`` lists the replicas in index order.  Functions over replicas may be given as
    mappings keyed by replica name or as sequences in index order.
    """

    def per_replica(value: Any) -> list[Any]:
        if isinstance(value, Mapping):
            return [value[n] for n in names]
        return list(value)

    logs = tuple(_log(log) for log in per_replica(view["replicaLog"]))
    states = tuple(
        ReplicaState(
            int(st["hw"]),
            _epoch(_field(st, "leaderEpoch", "leader_epoch")),
            _replica_index(st["leader"], names),
            _isr(st["isr"], names),
        )
        for st in per_replica(view["replicaState"])
    )
    requests = sorted((_quorum(r, names) for r in view["leaderAndIsrRequests"]),
                      key=lambda q: q.leader_epoch)
    next_epoch = int(view["nextLeaderEpoch"])
    if [q.leader_epoch for q in requests] != list(range(next_epoch)):
        raise ViewError(
            f"requests do not carry exactly the epochs 0..{next_epoch - 1}: "
            f"{[q.leader_epoch for q in requests]}"
        )
    return KState(
        logs, states, int(view["nextRecordId"]), next_epoch, tuple(requests),
        _quorum(view["quorumState"], names),
    )


def describe(state: KState) -> str:
    """A compact one-line rendering: each replica's log (``id@epoch``), hw, epoch, leader and
    ISR, then the quorum state and the requests (epoch → leader, ISR)."""

    def who(index: int) -> str:
        return "-" if index == NONE_REPLICA else replica_name(index)

    def isr(members: frozenset[int]) -> str:
        return "{" + ",".join(replica_name(i) for i in sorted(members)) + "}"

    replicas = []
    for index, (log, st) in enumerate(zip(state.logs, state.replica_state, strict=True)):
        records = " ".join(f"{rid}@{rep}" for rid, rep in log)
        replicas.append(
            f"{replica_name(index)}: log [{records}] hw {st.hw} epoch {st.leader_epoch} "
            f"leader {who(st.leader)} isr {isr(st.isr)}"
        )
    q = state.quorum
    requests = ", ".join(f"{r.leader_epoch}→{who(r.leader)}{isr(r.isr)}" for r in state.requests)
    return (
        "; ".join(replicas)
        + f"; quorum epoch {q.leader_epoch} leader {who(q.leader)} isr {isr(q.isr)}"
        + f"; requests [{requests}]; nextRecordId {state.next_record_id}"
    )
