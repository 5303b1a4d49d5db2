"""Example adapters for ``isrlab.checker.differential``: a small, independently written, mutable
implementation of the TLA+ replication protocol, in a correct and a deliberately faulty
version, wrapped so that the oracle can compare it with the ``tla-*`` models step by step.

``MiniReplication`` keeps its state the way a simulator would (dictionaries and lists,
mutated in place) and applies the steps named by the model's labels (``LeaderWrite(r1)``,
``BecomeFollowerTruncateKip279(r2 follows r1, epoch 0)``, ...).  Its truncation rule on
becoming a follower is a parameter:

* ``"kip279"``: cut right after the last offset at which the follower's and the leader's
  logs hold the same record (KIP-279, Kafka 2.0) -- agrees with ``tla-kip279`` and
  ``tla-kip320``;
* ``"hw"``: cut at the follower's own high watermark, as Kafka did before 0.11 -- the
  faulty implementation: against ``tla-kip279`` it loses records the model keeps, and the
  oracle finds a short walk showing it.

``correct_adapter()`` and ``faulty_adapter()`` are the two ``Adapter``s.  Modelling shortcut:
the implementation trusts the model to choose only enabled steps (it checks no guard); it
computes every effect itself, without calling ``core``.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from isrlab.checker.differential import Adapter

Record = tuple[int, int]  # (id, epoch)

_LABEL = re.compile(r"(?P<name>\w+)\((?P<args>.*)\)")
_REPLICA = re.compile(r"r\d+")
_EPOCH = re.compile(r"epoch (\d+)")


@dataclass(slots=True)
class Replica:
    """One replica's mutable state: its log and what it believes about the partition."""

    log: list[Record] = field(default_factory=list)
    hw: int = 0
    leader_epoch: int = -1
    leader: str | None = None
    isr: set[str] = field(default_factory=set)


@dataclass(slots=True)
class MiniReplication:
    """A mutable replicated log with a controller (see the module docstring)."""

    truncation: str
    replicas: dict[str, Replica]
    next_record_id: int = 0
    next_leader_epoch: int = 0
    requests: list[tuple[str | None, frozenset[str]]] = field(default_factory=list)
    quorum_isr: set[str] = field(default_factory=set)

    # -- the controller ----------
    def quorum_leader(self) -> str | None:
        """The leader of the newest LeaderAndIsr request (None before the first)."""
        return self.requests[-1][0] if self.requests else None

    def update_isr(self, leader: str | None, isr: set[str]) -> None:
        """A new leader epoch: the quorum state and one more request."""
        self.requests.append((leader, frozenset(isr)))
        self.quorum_isr = set(isr)
        self.next_leader_epoch += 1

    def elect(self, r: str) -> None:
        """The controller makes ``r`` leader, keeping the ISR."""
        self.update_isr(r, self.quorum_isr)

    def controller_shrink(self, r: str) -> None:
        """``r`` failed: it leaves the ISR (unless it is the last member) and the leadership."""
        leader = self.quorum_leader()
        if leader == r:
            isr = self.quorum_isr if self.quorum_isr == {r} else self.quorum_isr - {r}
            self.update_isr(None, isr)
        else:
            self.update_isr(leader, self.quorum_isr - {r})

    # -- leaders ----------
    def become_leader(self, r: str, epoch: int) -> None:
        """``r`` takes the request of ``epoch`` naming it leader; its HW stays."""
        rep = self.replicas[r]
        rep.leader_epoch, rep.leader, rep.isr = epoch, r, set(self.requests[epoch][1])

    def write(self, r: str) -> None:
        """The leader appends a new record of its epoch."""
        rep = self.replicas[r]
        rep.log.append((self.next_record_id, rep.leader_epoch))
        self.next_record_id += 1

    def change_isr(self, leader: str, member: str, add: bool) -> None:
        """The leader adds or removes an ISR member, in its view and in the quorum's."""
        rep = self.replicas[leader]
        if add:
            rep.isr.add(member)
        else:
            rep.isr.discard(member)
        self.quorum_isr = set(rep.isr)

    # -- followers ----------
    def truncation_offset(self, follower: Replica, leader: Replica) -> int:
        """Where a new follower cuts its log, by this implementation's rule."""
        if self.truncation == "hw":
            return follower.hw
        common = 0
        for offset in range(min(len(follower.log), len(leader.log))):
            if follower.log[offset] == leader.log[offset]:
                common = offset + 1
        return common if leader.log else 0

    def become_follower(self, r: str, leader: str, epoch: int) -> None:
        """``r`` follows ``leader`` in ``epoch`` and truncates its log."""
        rep, lead = self.replicas[r], self.replicas[leader]
        offset = self.truncation_offset(rep, lead)
        del rep.log[offset:]
        rep.hw = min(rep.hw, offset)
        rep.leader_epoch, rep.leader, rep.isr = epoch, leader, set(self.requests[epoch][1])

    def fetch(self, follower: str, leader: str) -> None:
        """The follower copies the leader's next record and learns the leader's HW."""
        rep, lead = self.replicas[follower], self.replicas[leader]
        rep.log.append(lead.log[len(rep.log)])
        rep.hw = min(lead.hw, len(rep.log))

    # -- the adapter's three functions ----------
    def apply(self, label: str) -> MiniReplication:
        """Apply the step a model label names (``ValueError`` for an unknown label)."""
        m = _LABEL.fullmatch(label)
        if m is None:
            raise ValueError(f"cannot read label {label!r}")
        name, args = m["name"].removeprefix("Fenced"), m["args"]
        rs = _REPLICA.findall(args)
        epochs = [int(e) for e in _EPOCH.findall(args)]
        if name == "ControllerElectLeader":
            self.elect(rs[0])
        elif name == "ControllerShrinkIsr":
            self.controller_shrink(rs[0])
        elif name == "BecomeLeader":
            self.become_leader(rs[0], epochs[0])
        elif name == "LeaderWrite":
            self.write(rs[0])
        elif name == "LeaderIncHighWatermark":
            self.replicas[rs[0]].hw += 1
        elif name in ("LeaderShrinkIsr", "LeaderExpandIsr"):
            self.change_isr(rs[0], rs[1], add=name == "LeaderExpandIsr")
        elif name.startswith("BecomeFollower"):
            leader = rs[1] if len(rs) > 1 else self.requests[epochs[0]][0]
            if leader is None:
                raise ValueError(f"{label}: the request names no leader")
            self.become_follower(rs[0], leader, epochs[0])
        elif name in ("FollowerReplicate", "FollowerFetch"):
            self.fetch(rs[0], rs[1])
        else:
            raise ValueError(f"unknown step {label!r}")
        return self

    def view(self) -> Mapping[str, Any]:
        """The state as the ``tla-*`` models' variables."""
        reps = self.replicas
        return {
            "replicaLog": {r: [{"id": i, "epoch": e} for i, e in rep.log]
                           for r, rep in reps.items()},
            "replicaState": {r: {"hw": rep.hw, "leaderEpoch": rep.leader_epoch,
                                 "leader": rep.leader, "isr": sorted(rep.isr)}
                             for r, rep in reps.items()},
            "nextRecordId": self.next_record_id,
            "nextLeaderEpoch": self.next_leader_epoch,
            "leaderAndIsrRequests": [
                {"leaderEpoch": e, "leader": leader, "isr": sorted(isr)}
                for e, (leader, isr) in enumerate(self.requests)
            ],
            "quorumState": {"leaderEpoch": self.next_leader_epoch - 1,
                            "leader": self.quorum_leader(), "isr": sorted(self.quorum_isr)},
        }


def initial(truncation: str, variables: Mapping[str, Any]) -> MiniReplication:
    """A fresh implementation for the model's initial state (only the replica names and the
    quorum ISR are read from it)."""
    names = sorted(variables["replicaLog"])
    quorum = variables["quorumState"]["isr"]
    return MiniReplication(truncation, {r: Replica() for r in names}, quorum_isr=set(quorum))


def _adapter(truncation: str, name: str) -> Adapter[MiniReplication]:
    return Adapter(
        name=name,
        init=lambda variables: initial(truncation, variables),
        step=lambda impl, label: impl.apply(label),
        view=lambda impl: impl.view(),
    )


def correct_adapter() -> Adapter[MiniReplication]:
    """MiniReplication with KIP-279 truncation: agrees with ``tla-kip279``/``tla-kip320``."""
    return _adapter("kip279", "mini-replication (KIP-279 truncation)")


def faulty_adapter() -> Adapter[MiniReplication]:
    """MiniReplication truncating to its high watermark: diverges from ``tla-kip279``."""
    return _adapter("hw", "mini-replication (truncate to HW)")
