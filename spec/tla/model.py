"""The TLA+-faithful models: KafkaReplication's actions and its four protocol versions.

One ``TlaModel`` per protocol version of hachikuji/kafka-specification:

* ``tla-truncate-to-hw`` (module KafkaTruncateToHighWatermark): a replica becoming follower
  truncates to its own high watermark (Kafka before 0.11);
* ``tla-kip101`` (Kip101): truncation at the leader's end offset of the follower's latest
  epoch (OffsetForLeaderEpoch, Kafka 0.11);
* ``tla-kip279`` (Kip279): truncation after the largest offset both logs agree on (Kafka 2.0);
* ``tla-kip320`` (Kip320): KIP-279 truncation plus epoch fencing of fetches, of the
  truncation, of the high-watermark increment and of ISR changes (Kafka 2.1).

Every action below is one disjunct of the specification's Next, with the same name, the same
enabling conditions and the same effect; the docstrings say what each means in Kafka.  Each
existential binding that enables an action yields one successor, and so does each true
disjunct of an action's body, because that is how TLC counts *generated* states: the
KIP-279 truncation of an empty follower and KIP-320's ISR shrink of a replica that is both
off-epoch and lagging therefore yield the same successor twice.

States are ``bytes`` in the layout of ``spec.tla.layout`` (read that module first); the
action functions read the fields by position and glue successors from slices.  The readable
view (``variables``, ``Layout.unpack``) gives the specification's variables back.

Modelling shortcuts (all the specification's own): the controller has no state of its own
and writes the quorum state (ZooKeeper) atomically; a follower reads the leader's log
directly; a record is never lost by a crash.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from operator import itemgetter
from typing import Any

from checker.model import Property
from core.partition import follower_high_watermark
from core.truncation import (
    Log,
    kip101_truncation_offset,
    kip279_truncation_offset,
    truncate_to_high_watermark_offset,
)
from spec.tla.layout import END, EPOCH, HW, ISR, LEADER, LOG, RQ, Layout

State = bytes
Out = list[tuple[str, State]]
Followers = tuple[tuple[int, int], ...]
Presumed = tuple[tuple[int, int, int, Followers], ...]
HeaderSteps = list[tuple[str, bytes]]
Action = Callable[[State, Out, Presumed], None]

_BYTE = tuple(bytes((v,)) for v in range(256))


@dataclass(frozen=True, slots=True)
class Version:
    """What a protocol version replaces in the base module KafkaReplication."""

    name: str
    module: str
    truncation: str  # "hw", "kip101", "kip279"
    fenced: bool  # KIP-320's Fenced* actions
    doc: str


VERSIONS = {
    v.name: v for v in (
        Version("tla-truncate-to-hw", "KafkaTruncateToHighWatermark", "hw", False,
                "TLA+ KafkaTruncateToHighWatermark: followers truncate to their own HW "
                "(Kafka < 0.11)"),
        Version("tla-kip101", "Kip101", "kip101", False,
                "TLA+ Kip101: truncation by OffsetForLeaderEpoch (Kafka 0.11)"),
        Version("tla-kip279", "Kip279", "kip279", False,
                "TLA+ Kip279: truncation after the largest matching offset (Kafka 2.0)"),
        Version("tla-kip320", "Kip320", "kip279", True,
                "TLA+ Kip320: KIP-279 truncation plus epoch fencing (Kafka 2.1)"),
    )
}

INVARIANT_NAMES = ("WeakIsr", "StrongIsr", "LeaderInIsr", "TypeOk")


def _r(i: int) -> str:
    return f"r{i + 1}"


class TlaModel:
    """One protocol version of the specification for given constants (see module doc)."""

    def __init__(
        self, version: Version, replicas: int, log_size: int, max_records: int,
        max_leader_epoch: int, invariants: Sequence[str] = ("WeakIsr", "StrongIsr"),
    ) -> None:
        for name in invariants:
            if name not in INVARIANT_NAMES:
                raise ValueError(
                    f"unknown invariant {name!r} (known: {', '.join(INVARIANT_NAMES)})"
                )
        self.version = version
        self.name = version.name
        self.layout = lay = Layout(replicas, log_size, max_records, max_leader_epoch)
        self.n, self.L, self.R, self.E = replicas, log_size, max_records, max_leader_epoch
        self.invariant_names = tuple(invariants)
        self._members = tuple(
            tuple(i for i in range(replicas) if (code - lay.isr_base) >> i & 1)
            if code >= lay.isr_base else ()
            for code in range(256)
        )
        self._epoch_of = tuple(
            (code - 1) % (max_leader_epoch + 1) if code else -1 for code in range(256)
        )
        self._zeros = tuple(bytes(k) for k in range(log_size + 1))
        self._follow_memo: dict[bytes, bytes] = {}
        self.bases, self.lb, self.none = lay.bases, lay.leader_base, lay.none
        self.block, self.ib = lay.block, lay.isr_base
        self._presumed_memo: dict[tuple[int, ...], Presumed] = {}
        self._elect_memo: dict[bytes, HeaderSteps] = {}
        self._shrink_memo: dict[bytes, HeaderSteps] = {}
        positions = [b + LEADER for b in lay.bases]
        self._leader_bytes: Callable[[State], tuple[int, ...]] = (
            itemgetter(*positions) if replicas > 1 else lambda s: (s[positions[0]],)
        )
        self._fetched_hw = tuple(
            tuple(_BYTE[follower_high_watermark(hw, end)] for end in range(log_size + 1))
            for hw in range(log_size + 1)
        )
        self._labels()
        self.actions = self._select_actions()

    # -- construction helpers ----------
    def _labels(self) -> None:
        """Every action label, built once."""
        rs, eps = range(self.n), range(self.E + 1)
        follow = {"hw": "BecomeFollowerTruncateToHighWatermark",
                  "kip101": "BecomeFollowerTruncateKip101",
                  "kip279": "BecomeFollowerTruncateKip279"}[self.version.truncation]
        if self.version.fenced:
            follow = "FencedBecomeFollowerAndTruncate"
        prefix = "Fenced" if self.version.fenced else ""
        fetch = "FencedFollowerFetch" if self.version.fenced else "FollowerReplicate"
        self.l_elect = tuple(f"ControllerElectLeader({_r(i)})" for i in rs)
        self.l_cshrink = tuple(f"ControllerShrinkIsr({_r(i)})" for i in rs)
        self.l_become_leader = tuple(
            tuple(f"BecomeLeader({_r(i)}, epoch {e})" for i in rs) for e in eps
        )
        self.l_write = tuple(f"LeaderWrite({_r(i)})" for i in rs)
        self.l_inc_hw = tuple(f"{prefix}LeaderIncHighWatermark({_r(i)})" for i in rs)
        self.l_shrink = tuple(
            tuple(f"{prefix}LeaderShrinkIsr({_r(i)}, {_r(j)})" for j in rs) for i in rs
        )
        self.l_expand = tuple(
            tuple(f"{prefix}LeaderExpandIsr({_r(i)}, {_r(j)})" for j in rs) for i in rs
        )
        self.l_follow = tuple(
            tuple(tuple(f"{follow}({_r(j)} follows {_r(i)}, epoch {e})" for j in rs) for i in rs)
            for e in eps
        )
        self.l_fetch = tuple(
            tuple(f"{fetch}({_r(j)} from {_r(i)})" for j in rs) for i in rs
        )

    def _select_actions(self) -> tuple[Action, ...]:
        """The disjuncts of Next for this version, in the module's order."""
        if self.version.fenced:
            return (
                self.controller_elect_leader, self.controller_shrink_isr, self.become_leader,
                self.fenced_leader_expand_isr, self.fenced_leader_shrink_isr,
                self.leader_write, self.fenced_leader_inc_high_watermark,
                self.fenced_become_follower_and_truncate, self.fenced_follower_fetch,
            )
        return (
            self.controller_elect_leader, self.controller_shrink_isr, self.become_leader,
            self.leader_expand_isr, self.leader_shrink_isr, self.leader_write,
            self.leader_inc_high_watermark, self.become_follower_and_truncate,
            self.follower_replicate,
        )

    # -- the Model protocol ----------
    def init_states(self) -> Iterable[State]:
        """Init: empty logs, HW 0, Nil epochs, no leader anywhere, quorum ISR = Replicas."""
        return (self.layout.initial(),)

    def next_states(self, state: State) -> Iterable[tuple[str, State]]:
        """Every enabled (action, binding, disjunct) of Next, duplicates included (as TLC)."""
        out: Out = []
        pres = self._presuming(state)
        for action in self.actions:
            action(state, out, pres)
        return out

    def invariants(self) -> Sequence[Property[State]]:
        """The invariants asked for (default WeakIsr and StrongIsr)."""
        table = {
            "WeakIsr": Property("WeakIsr", self.weak_isr, self.weak_isr.__doc__ or ""),
            "StrongIsr": Property("StrongIsr", self.strong_isr, self.strong_isr.__doc__ or ""),
            "LeaderInIsr": Property(
                "LeaderInIsr", self.leader_in_isr, self.leader_in_isr.__doc__ or ""),
            "TypeOk": Property("TypeOk", self.type_ok, self.type_ok.__doc__ or ""),
        }
        return tuple(table[name] for name in self.invariant_names)

    def sometimes(self) -> Sequence[Property[State]]:
        """Reachability witnesses: a record below a leader's HW, a second leader epoch."""
        return (
            Property("CommittedRecord", self.has_committed_record,
                     "some leader has a high watermark above 0"),
            Property("SecondLeaderEpoch", lambda s: s[1] >= 2,
                     "the controller has issued two leader epochs"),
        )

    def within_boundary(self, state: State) -> bool:
        """No CONSTRAINT: the constants bound the space by themselves."""
        return True

    def canonical(self, state: State) -> State:
        """The orbit representative under renaming of the replicas (SYMMETRY Replicas)."""
        return self.layout.canonical(state)

    def encode(self, state: State) -> bytes:
        """States are their own encoding."""
        return state

    def decode(self, data: bytes) -> State:
        """States are their own encoding."""
        return bytes(data)

    def variables(self, state: State) -> Mapping[str, Any]:
        """The specification's six variables, replicas named r1..rn, None/Nil as None/-1."""
        view = self.layout.unpack(state)

        def name(i: int | None) -> str | None:
            return None if i is None else _r(i)

        def names(isr: frozenset[int]) -> frozenset[str]:
            return frozenset(_r(i) for i in isr)

        return {
            "replicaLog": {
                _r(i): [{"id": rec.id, "epoch": rec.epoch} for rec in r.log]
                for i, r in enumerate(view.replicas)
            },
            "replicaState": {
                _r(i): {"hw": r.hw, "leaderEpoch": r.leader_epoch, "leader": name(r.leader),
                        "isr": names(r.isr)}
                for i, r in enumerate(view.replicas)
            },
            "nextRecordId": view.next_record_id,
            "nextLeaderEpoch": view.next_leader_epoch,
            "leaderAndIsrRequests": [
                {"leaderEpoch": e, "leader": name(leader), "isr": names(isr)}
                for e, (leader, isr) in enumerate(view.requests)
            ],
            "quorumState": {"leaderEpoch": view.quorum_epoch,
                            "leader": name(view.quorum_leader),
                            "isr": names(view.quorum_isr)},
        }

    # -- small readers ----------
    def _quorum_leader(self, s: State) -> int:
        """quorumState.leader as a leader code (the newest request's leader, or None)."""
        nle = s[1]
        return s[RQ + 2 * nle - 2] if nle else self.none

    def _presuming(self, s: State) -> Presumed:
        """The replicas presuming leadership (``replicaState[r].leader = r``) as
        ``(index, block position, leader code, followers)``, where ``followers`` lists the
        other replicas following it as ``(index, block position)``: read once per state from
        the replicas' leader bytes, memoised on them."""
        codes = self._leader_bytes(s)
        found = self._presumed_memo.get(codes)
        if found is None:
            lb, bases = self.lb, self.bases
            found = tuple(
                (i, bases[i], lb + i,
                 tuple((j, bases[j]) for j, d in enumerate(codes) if d == c and j != i))
                for i, c in enumerate(codes) if c == lb + i
            )
            self._presumed_memo[codes] = found
        return found

    def _header_steps(
        self, s: State, out: Out, memo: dict[bytes, HeaderSteps],
        compute: Callable[[State], HeaderSteps],
    ) -> None:
        """Emit the steps of an action that reads and writes only the header (counters,
        quorum ISR, requests), memoised on the header: ``compute`` gives each step's label
        and new header bytes after byte 0 (nextRecordId, which such actions never touch)."""
        header = self.layout.header
        steps = memo.get(s[1:header])
        if steps is None:
            steps = memo[s[1:header]] = compute(s)
        if steps:
            first, rest = s[:1], s[header:]
            out.extend([(label, first + new + rest) for label, new in steps])

    def _records(self, log: bytes, end: int) -> Log:
        """The first ``end`` record bytes of a log as ``core.truncation`` records."""
        record_of = self.layout.record_of
        return tuple(record_of(c) for c in log[:end])

    # -- the controller ----------
    def _update_isr(self, s: State, leader_code: int, isr_code: int) -> State:
        """ControllerUpdateIsr: a new epoch, a new quorum state, one more LeaderAndIsr request."""
        nle = s[1]
        k = RQ + 2 * nle
        return b"".join((
            s[:1], _BYTE[nle + 1], _BYTE[isr_code], s[3:k], bytes((leader_code, isr_code)),
            s[k + 2:],
        ))

    def controller_elect_leader(self, s: State, out: Out, pres: Presumed) -> None:
        """ControllerElectLeader: the controller picks any other ISR member as leader (clean
        election), bumping the epoch.  Disabled once every epoch is used."""
        self._header_steps(s, out, self._elect_memo, self._elect_leader_steps)

    def _elect_leader_steps(self, s: State) -> HeaderSteps:
        """ControllerElectLeader's steps from the header of ``s`` (see ``_header_steps``)."""
        if s[1] > self.E:
            return []
        qisr, qleader, lb, h = s[2], self._quorum_leader(s), self.lb, self.layout.header
        return [
            (self.l_elect[i], self._update_isr(s, lb + i, qisr)[1:h])
            for i in self._members[qisr] if lb + i != qleader
        ]

    def controller_shrink_isr(self, s: State, out: Out, pres: Presumed) -> None:
        """ControllerShrinkIsr: a broker fails (or shuts down).  Three cases: the leader alone
        in the ISR (leader becomes None, ISR kept), the leader with others (leader None, removed
        from the ISR), a non-leader ISR member (removed, leader kept)."""
        self._header_steps(s, out, self._shrink_memo, self._shrink_isr_steps)

    def _shrink_isr_steps(self, s: State) -> HeaderSteps:
        """ControllerShrinkIsr's steps from the header of ``s`` (see ``_header_steps``)."""
        if s[1] > self.E:
            return []
        qisr, qleader, lb, ib = s[2], self._quorum_leader(s), self.lb, self.ib
        h = self.layout.header
        mask = qisr - ib
        steps = []
        for i in range(self.n):
            bit = 1 << i
            if qleader == lb + i:
                new_isr = qisr if mask == bit else ib + (mask & ~bit)
                steps.append((self.l_cshrink[i], self._update_isr(s, self.none, new_isr)[1:h]))
            elif mask & bit:
                new_isr = ib + (mask & ~bit)
                steps.append((self.l_cshrink[i], self._update_isr(s, qleader, new_isr)[1:h]))
        return steps

    # -- leaders ----------
    def become_leader(self, s: State, out: Out, pres: Presumed) -> None:
        """BecomeLeader: a replica named leader by a request of a higher epoch than its own
        takes the request's epoch and ISR and keeps its (possibly stale) high watermark."""
        none, lb, bases = self.none, self.lb, self.bases
        for e in range(s[1]):
            code = s[RQ + 2 * e]
            if code == none:
                continue
            i = code - lb
            a = bases[i]
            if e + 1 > s[a + EPOCH]:
                succ = s[:a + EPOCH] + bytes((e + 1, code, s[RQ + 2 * e + 1])) + s[a + END:]
                out.append((self.l_become_leader[e][i], succ))

    def leader_write(self, s: State, out: Out, pres: Presumed) -> None:
        """LeaderWrite: any replica presuming leadership appends a fresh record stamped with
        its epoch (zombies too: only replication fencing can stop them)."""
        rid = s[0]
        if rid >= self.R:
            return
        first = rid * (self.E + 1)  # record code - epoch - 1 of the record with id ``rid``
        for i, a, _, _ in pres:
            end = s[a + END]
            if end >= self.L:
                continue
            succ = b"".join((
                _BYTE[rid + 1], s[1:a + END], _BYTE[end + 1], s[a + END + 1:a + LOG + end],
                _BYTE[first + s[a + EPOCH]], s[a + LOG + end + 1:],
            ))
            out.append((self.l_write[i], succ))

    def _set_isr(self, s: State, a: int, isr_code: int) -> State:
        """QuorumUpdateLeaderAndIsr's effect: the quorum ISR and the leader's ISR both change."""
        return b"".join((s[:2], _BYTE[isr_code], s[3:a + ISR], _BYTE[isr_code], s[a + ISR + 1:]))

    def _inc_hw(self, s: State, a: int) -> State:
        return s[:a] + _BYTE[s[a + HW] + 1] + s[a + 1:]

    def leader_inc_high_watermark(self, s: State, out: Out, pres: Presumed) -> None:
        """LeaderIncHighWatermark (before KIP-320): a presumed leader advances its HW by one
        when every member of its local ISR follows it (any epoch) and has that offset."""
        bases = self.bases
        for i, a, code, _ in pres:
            hw = s[a + HW]
            if hw >= self.L:
                continue
            for f in self._members[s[a + ISR]]:
                b = bases[f]
                if s[b + LEADER] != code or s[b + END] <= hw:
                    break
            else:
                out.append((self.l_inc_hw[i], self._inc_hw(s, a)))

    def _caught_up(self, s: State, a: int, b: int, code: int, offset: int) -> bool:
        """IsFollowerCaughtUp: the follower follows the leader and has the record before
        ``offset`` (which the leader has too); trivially true at offset 0."""
        if s[b + LEADER] != code:
            return False
        return offset == 0 or (offset - 1 < s[a + END] and offset - 1 < s[b + END])

    def leader_shrink_isr(self, s: State, out: Out, pres: Presumed) -> None:
        """LeaderShrinkIsr (before KIP-320): the true leader (IsTrueLeader: the quorum names
        it, in the quorum's epoch) drops an ISR member that does not follow it or lacks the
        leader's last record."""
        qleader, bases = self._quorum_leader(s), self.bases
        for i, a, code, _ in pres:
            if code != qleader or s[a + EPOCH] != s[1]:
                continue
            isr, end = s[a + ISR], s[a + END]
            for j in self._members[isr]:
                if j != i and not self._caught_up(s, a, bases[j], code, end):
                    out.append((self.l_shrink[i][j], self._set_isr(s, a, isr - (1 << j))))

    def leader_expand_isr(self, s: State, out: Out, pres: Presumed) -> None:
        """LeaderExpandIsr (before KIP-320): the true leader adds a replica that follows it and
        has the record below the leader's HW."""
        qleader, bases = self._quorum_leader(s), self.bases
        for i, a, code, _ in pres:
            if code != qleader or s[a + EPOCH] != s[1]:
                continue
            isr, hw = s[a + ISR], s[a + HW]
            mask = isr - self.ib
            for j, b in enumerate(bases):
                if not mask >> j & 1 and self._caught_up(s, a, b, code, hw):
                    out.append((self.l_expand[i][j], self._set_isr(s, a, isr + (1 << j))))

    # -- followers ----------
    def _truncation_offset(self, leader_log: Log, follower_log: Log, follower_hw: int) -> int:
        """The version's truncation offset: a call of the ``core.truncation`` rule."""
        rule = self.version.truncation
        if rule == "hw":
            return truncate_to_high_watermark_offset(follower_hw)
        if rule == "kip101":
            return kip101_truncation_offset(leader_log, follower_log, follower_hw)
        return kip279_truncation_offset(leader_log, follower_log)

    def _truncated(self, key: bytes) -> bytes:
        """For ``key`` = the leader's log slots + the follower's replica block + the request's
        (epoch + 1, leader, ISR) bytes: the follower's new replica block (the request's epoch,
        leader and ISR; HW = min(offset, HW); the log cut at the offset, Nil above), or
        ``b""`` when the truncation offset lies beyond the follower's log end (TruncateTo's
        guard disables the step).  Memoised: the rule is computed once per pair of logs."""
        found = self._follow_memo.get(key)
        if found is not None:
            return found
        L, B = self.L, self.block
        block = key[L:L + B]
        end, hw = block[END], block[HW]
        offset = self._truncation_offset(
            self._records(key[:L], L - key[:L].count(0)),
            self._records(block[LOG:], end), hw,
        )
        result = b""
        if offset <= end:
            result = b"".join((
                _BYTE[min(offset, hw)], key[L + B:], _BYTE[offset], block[LOG:LOG + offset],
                self._zeros[L - offset],
            ))
        self._follow_memo[key] = result
        return result

    def become_follower_and_truncate(self, s: State, out: Out, pres: Presumed) -> None:
        """BecomeFollowerTruncate* (before KIP-320): a replica other than the request's leader
        takes a request of a higher epoch than its own and truncates by the version's rule; the
        step is disabled when that offset lies beyond its log end (TruncateTo's guard).
        Requests naming no leader (None) are never acted on: the spec binds the leader to
        Replicas.  KIP-279 lists the empty follower twice (one successor, counted twice)."""
        bases, none, lb, L, block = self.bases, self.none, self.lb, self.L, self.block
        twice = self.version.truncation == "kip279"
        truncated = self._truncated
        for e in range(s[1]):
            k = RQ + 2 * e
            code = s[k]
            if code == none:
                continue
            leader = code - lb
            a = bases[leader] + LOG
            leader_log = s[a:a + L]
            request = _BYTE[e + 1] + s[k:k + 2]
            for j, b in enumerate(bases):
                if j == leader or e + 1 <= s[b + EPOCH]:
                    continue
                new = truncated(leader_log + s[b:b + block] + request)
                if not new:
                    continue
                succ = s[:b] + new + s[b + block:]
                out.append((self.l_follow[e][leader][j], succ))
                if twice and s[b + END] == 0:
                    out.append((self.l_follow[e][leader][j], succ))

    def follower_replicate(self, s: State, out: Out, pres: Presumed) -> None:
        """FollowerReplicate (before KIP-320): a replica following a presumed leader copies the
        leader's record at its end offset, in any epoch (no fencing), and takes
        HW = min(leader's HW, its new end offset)."""
        for i, a, _, followers in pres:
            for j, b in followers:
                self._fetch(s, out, i, a, j, b)

    def _fetch(self, s: State, out: Out, i: int, a: int, j: int, b: int) -> None:
        """ReplicateTo plus the follower's HW update (``core.partition.follower_high_watermark``,
        tabulated), when the leader has a record at the follower's end offset."""
        end = s[b + END]
        if end >= s[a + END] or end >= self.L:
            return
        succ = b"".join((
            s[:b], self._fetched_hw[s[a + HW]][end + 1], s[b + 1:b + END], _BYTE[end + 1],
            s[b + END + 1:b + LOG + end], _BYTE[s[a + LOG + end]], s[b + LOG + end + 1:],
        ))
        out.append((self.l_fetch[i][j], succ))

    # -- KIP-320 ----------
    def fenced_follower_fetch(self, s: State, out: Out, pres: Presumed) -> None:
        """FencedFollowerFetch: FollowerReplicate restricted to followers in the leader's epoch
        (IsFollowingLeaderEpoch; KIP-320: the fetch carries the epoch and the leader rejects
        a stale one)."""
        for i, a, _, followers in pres:
            epoch = s[a + EPOCH]
            for j, b in followers:
                if s[b + EPOCH] == epoch:
                    self._fetch(s, out, i, a, j, b)

    def fenced_leader_inc_high_watermark(self, s: State, out: Out, pres: Presumed) -> None:
        """FencedLeaderIncHighWatermark: the HW advances past a record the replica has when
        every member of its local ISR follows it in its epoch (IsFollowingLeaderEpoch, which
        also asks that it presume leadership) and has that record.  With an empty local ISR
        the condition holds vacuously, leader or not, as in the spec."""
        bases, lb = self.bases, self.lb
        for i, a in enumerate(bases):
            hw = s[a + HW]
            if hw >= s[a + END]:
                continue
            code, epoch = lb + i, s[a + EPOCH]
            members = self._members[s[a + ISR]]
            if members and s[a + LEADER] != code:
                continue
            for f in members:
                b = bases[f]
                if s[b + LEADER] != code or s[b + EPOCH] != epoch or s[b + END] <= hw:
                    break
            else:
                out.append((self.l_inc_hw[i], self._inc_hw(s, a)))

    def fenced_leader_shrink_isr(self, s: State, out: Out, pres: Presumed) -> None:
        """FencedLeaderShrinkIsr: the true leader drops an ISR member that is off its epoch or
        has a smaller end offset.  The two reasons are two disjuncts: a member for which both
        hold yields the same successor twice (as TLC counts)."""
        qleader, bases = self._quorum_leader(s), self.bases
        for i, a, code, _ in pres:
            epoch = s[a + EPOCH]
            if code != qleader or epoch != s[1]:
                continue
            isr, end = s[a + ISR], s[a + END]
            for j in self._members[isr]:
                if j == i:
                    continue
                b = bases[j]
                off_epoch = s[b + LEADER] != code or s[b + EPOCH] != epoch
                reasons = off_epoch + (s[b + END] < end)
                if reasons:
                    succ = self._set_isr(s, a, isr - (1 << j))
                    out.extend([(self.l_shrink[i][j], succ)] * reasons)

    def fenced_leader_expand_isr(self, s: State, out: Out, pres: Presumed) -> None:
        """FencedLeaderExpandIsr: the true leader adds a replica following its epoch that has
        the record below the leader's HW, once that HW has reached the leader's own epoch (the
        HW is at the log end or at a record of the leader's epoch), so that a new member holds
        everything the previous leader may have committed."""
        qleader, bases = self._quorum_leader(s), self.bases
        for i, a, code, _ in pres:
            epoch = s[a + EPOCH]
            if code != qleader or epoch != s[1]:
                continue
            hw, end = s[a + HW], s[a + END]
            if not (hw == end or (hw < end and self._epoch_of[s[a + LOG + hw]] == epoch - 1)):
                continue
            isr = s[a + ISR]
            mask = isr - self.ib
            for j, b in enumerate(bases):
                if mask >> j & 1 or s[b + LEADER] != code or s[b + EPOCH] != epoch:
                    continue
                if hw == 0 or hw - 1 < s[b + END]:
                    out.append((self.l_expand[i][j], self._set_isr(s, a, isr + (1 << j))))

    def fenced_become_follower_and_truncate(self, s: State, out: Out, pres: Presumed) -> None:
        """FencedBecomeFollowerAndTruncate: as KIP-279's truncation, but only once the new
        leader has itself taken the request's epoch (the OffsetForLeaderEpoch request carries
        the epoch and a leader still in an older one rejects it).  Only the request of a
        leader's own current epoch can qualify, so the loop runs over presumed leaders."""
        bases, L, block = self.bases, self.L, self.block
        nle = s[1]
        for i, a, code, _ in pres:
            epoch = s[a + EPOCH]
            k = RQ + 2 * epoch - 2
            if not 0 < epoch <= nle or s[k] != code:
                continue
            leader_log = s[a + LOG:a + LOG + L]
            request = _BYTE[epoch] + s[k:k + 2]
            for j, b in enumerate(bases):
                if j == i or epoch <= s[b + EPOCH]:
                    continue
                new = self._truncated(leader_log + s[b:b + block] + request)
                # KIP-279 never truncates past the follower's end: ``new`` is never empty
                out.append((self.l_follow[epoch - 1][i][j], s[:b] + new + s[b + block:]))

    # -- invariants ----------
    def _replicated_below_hw(self, s: State, quorum: bool) -> bool:
        """Every presumed leader's records below its HW are present, identical, in the logs of
        every member of an ISR: the quorum's (``quorum``) or the leader's own."""
        bases = self.bases
        for _, a, _, _ in self._presuming(s):
            hw = s[a + HW]
            if hw == 0:
                continue
            members = self._members[s[2] if quorum else s[a + ISR]]
            if not members:
                continue
            if s[a + END] < hw:
                return False
            prefix = s[a + LOG:a + LOG + hw]
            for j in members:
                b = bases[j] + LOG
                if s[b:b + hw] != prefix:
                    return False
        return True

    def weak_isr(self, s: State) -> bool:
        """WeakIsr: every record below a presumed leader's HW is in the logs of all members of
        the ISR that leader believes in.  Violated: a consumer read a record that a replica the
        leader counts as in sync does not have."""
        return self._replicated_below_hw(s, quorum=False)

    def strong_isr(self, s: State) -> bool:
        """StrongIsr: every record below a presumed leader's HW is in the logs of all members of
        the quorum's (ZooKeeper's) ISR.  Violated: a consumer-visible record can be lost, since
        any quorum ISR member may be elected next."""
        return self._replicated_below_hw(s, quorum=True)

    def leader_in_isr(self, s: State) -> bool:
        """LeaderInIsr: the quorum's leader is in the quorum's ISR.  The spec states it as a
        theorem, yet it fails in Init and whenever the leader is None (None is no member)."""
        code = self._quorum_leader(s)
        if code == self.layout.none:
            return False
        return (s[2] - self.layout.isr_base) >> (code - self.layout.leader_base) & 1 == 1

    def type_ok(self, s: State) -> bool:
        """TypeOk: every variable lies in its type (ids, epochs, offsets in range; log slots
        are records below the end offset and Nil above)."""
        lay, L = self.layout, self.L
        if len(s) != lay.size or s[0] > self.R or s[1] > self.E + 1:
            return False
        if s[2] < lay.isr_base:
            return False
        for e in range(self.E + 1):
            leader, isr = s[RQ + 2 * e], s[RQ + 2 * e + 1]
            if e < s[1] and not (lay.leader_base <= leader <= lay.none and isr >= lay.isr_base):
                return False
            if e >= s[1] and (leader or isr):
                return False
        top = self.R * (self.E + 1)
        for a in lay.bases:
            end = s[a + END]
            if s[a + HW] > L or s[a + EPOCH] > self.E + 1 or end > L:
                return False
            if not lay.leader_base <= s[a + LEADER] <= lay.none or s[a + ISR] < lay.isr_base:
                return False
            log = s[a + LOG:a + LOG + L]
            if any(not 1 <= c <= top for c in log[:end]) or any(log[end:]):
                return False
        return True

    def has_committed_record(self, s: State) -> bool:
        """Some replica presuming leadership has a high watermark above 0."""
        lay = self.layout
        return any(
            s[a + LEADER] == lay.leader_base + i and s[a + HW] > 0
            for i, a in enumerate(lay.bases)
        )
