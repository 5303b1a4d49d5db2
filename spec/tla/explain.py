"""Why a state of the TLA+-faithful models breaks ``WeakIsr`` or ``StrongIsr``, in Kafka's
words: the ``Property.explain`` of those invariants, read from the specification's variables
(``TlaModel.variables``: ``replicaLog``, ``replicaState``, ``quorumState``)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

Vars = Mapping[str, Any]


def _record(rec: Mapping[str, Any]) -> str:
    return f"m{rec['id']}@{rec['epoch']}"


def _log_text(log: Sequence[Mapping[str, Any]]) -> str:
    return "[" + ", ".join(_record(r) for r in log) + "]" if log else "[] (empty)"


def _set_text(names: Iterable[str]) -> str:
    return "{" + ", ".join(sorted(names)) + "}"


def _at(log: Sequence[Mapping[str, Any]], o: int) -> str:
    return _record(log[o]) if o < len(log) else f"nothing (its log ends at offset {len(log)})"


def _explain_isr(v: Vars, quorum: bool) -> str:
    """Which presumed leader's records below its HW a member of an ISR (the quorum's, or the
    leader's own) lacks or holds differently."""
    logs: Mapping[str, Sequence[Mapping[str, Any]]] = v["replicaLog"]
    out = []
    for r, st in sorted(v["replicaState"].items()):
        if st["leader"] != r or st["hw"] == 0:
            continue
        hw, log = st["hw"], logs[r]
        isr = v["quorumState"]["isr"] if quorum else st["isr"]
        whose = "the quorum's (ZooKeeper's) ISR" if quorum else f"the ISR {r} believes in"
        if len(log) < hw:
            out.append(f"{r} leads epoch {st['leaderEpoch']} with high watermark {hw} above "
                       f"its own log end offset {len(log)} (log {_log_text(log)})")
            continue
        for m in sorted(isr):
            other = logs[m]
            o = next((i for i in range(hw) if i >= len(other) or other[i] != log[i]), hw)
            if o == hw:
                continue
            out.append(f"{r} leads epoch {st['leaderEpoch']} with high watermark {hw}, so "
                       f"{_log_text(log[:hw])} is committed; {m}, in {whose} "
                       f"{_set_text(isr)}, has {_at(other, o)} at offset {o} where the "
                       f"leader has {_record(log[o])}: electing {m} would lose it")
    return "; ".join(out)


def explain_weak_isr(v: Vars) -> str:
    """``WeakIsr``'s explanation: the committed record a member of the leader's ISR lacks."""
    return _explain_isr(v, quorum=False)


def explain_strong_isr(v: Vars) -> str:
    """``StrongIsr``'s explanation: the committed record a quorum ISR member lacks."""
    return _explain_isr(v, quorum=True)
