"""The TLA+-faithful models: KafkaReplication's actions, run by one protocol variant.

A ``TlaModel`` is the base module KafkaReplication of hachikuji/kafka-specification with
the actions a ``isrlab.spec.variants.Variant`` replaces in its ``Next`` (one module of
``spec/variants/`` per protocol version: KafkaTruncateToHighWatermark, Kip101, Kip279,
Kip320, Kip320FirstTry).  The base actions every variant keeps are methods here; the
replaced ones live in the variant's module and use the helpers below.

Every action is one disjunct of the specification's Next, with the same name, the same
enabling conditions and the same effect; the docstrings say what each means in Kafka.  Each
existential binding that enables an action yields one successor, and so does each true
disjunct of an action's body, because that is how TLC counts *generated* states: the
KIP-279 truncation of an empty follower and KIP-320's ISR shrink of a replica that is both
off-epoch and lagging therefore yield the same successor twice.

States are ``bytes`` in the layout of ``isrlab.spec.tla.layout`` (read that module first); the
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
from types import MethodType
from typing import TYPE_CHECKING, Any

from isrlab.checker.fingerprint import pure_python_forced
from isrlab.checker.model import Property
from isrlab.core.partition import follower_high_watermark
from isrlab.core.truncation import Log
from isrlab.spec.tla.explain import explain_strong_isr, explain_weak_isr
from isrlab.spec.tla.layout import END, EPOCH, HW, ISR, LEADER, LOG, RQ, Layout

if TYPE_CHECKING:
    from isrlab.spec.variants import Variant

State = bytes
Out = list[tuple[str, State]]
Followers = tuple[tuple[int, int], ...]
Presumed = tuple[tuple[int, int, int, Followers], ...]
HeaderSteps = list[tuple[str, bytes]]
Action = Callable[[State, Out, Presumed], None]
TruncationRule = Callable[[Log, Log, int], int]
"""``(leader log, follower log, follower HW) -> truncation offset``."""

_BYTE = tuple(bytes((v,)) for v in range(256))

try:  # the compiled successor function (spec/tla/_native.c), optional
    from isrlab.spec.tla import _native as _compiled
except ImportError:  # not built: the pure Python below, identical results
    _compiled = None  # type: ignore[assignment]

NATIVE_BUILT = _compiled is not None
"""Whether the compiled module was built (and imported)."""


# The codes of the actions spec/tla/_native.c transcribes (its ``enum``).
N_ELECT, N_CSHRINK, N_BECOME_LEADER, N_EXPAND, N_SHRINK, N_WRITE, N_INC_HW = 1, 2, 3, 4, 5, 6, 7
N_REPLICATE, N_TRUNCATE = 8, 9
N_F_FETCH, N_F_INC_HW, N_F_SHRINK, N_F_EXPAND, N_F_TRUNCATE = 10, 11, 12, 13, 14
# Truncation rules the compiled module computes itself (its RULE_*; 0: the memo and the
# Python rule).
RULE_KIP279, RULE_TO_HW = 1, 2


@dataclass(frozen=True, slots=True)
class NativeAction:
    """How the compiled module runs one explicit action: its code, the action name and
    label shape of its labels (``TlaModel.labels``), and for a truncation its rule (the
    memo of ``TlaModel.truncated`` is shared), whether an empty follower counts twice and
    ``inline``: the rule's transcription in C (``RULE_*``; 0: call ``rule`` on a miss)."""

    code: int
    label_action: str
    shape: str
    rule: TruncationRule | None = None
    twice: bool = False
    inline: int = 0


NATIVE_ACTIONS: dict[Callable[..., None], NativeAction] = {}
"""The explicit actions (functions of ``isrlab.spec.variants``) the compiled module
transcribes; a variant's module registers its own with ``native_action``.  An action not
listed runs as Python inside the compiled ``next_states``."""


def native_action(fn: Callable[..., None], spec: NativeAction) -> None:
    """Declare that the compiled module runs ``fn`` as ``spec`` says."""
    NATIVE_ACTIONS[fn] = spec


def compiled_available() -> bool:
    """Whether the compiled successor function is built and not turned off."""
    return _compiled is not None and not pure_python_forced()


INVARIANT_NAMES = ("WeakIsr", "StrongIsr", "LeaderInIsr", "TypeOk")


def _r(i: int) -> str:
    return f"r{i + 1}"


class TlaModel:
    """One protocol version of the specification for given constants (see module doc)."""

    identity_encoding = True
    """States are ``bytes`` and their own encoding: the checker skips ``encode``/``decode``."""
    has_boundary = False
    """``within_boundary`` is always true (no CONSTRAINT): the checker need not ask."""

    def __init__(
        self, variant: Variant, replicas: int, log_size: int, max_records: int,
        max_leader_epoch: int, invariants: Sequence[str] = ("WeakIsr", "StrongIsr"),
        compiled: bool | None = None,
    ) -> None:
        for name in invariants:
            if name not in INVARIANT_NAMES:
                raise ValueError(
                    f"unknown invariant {name!r} (known: {', '.join(INVARIANT_NAMES)})"
                )
        self.variant = variant
        self.name = variant.name
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
        self.members_of = self._members  # ISR code -> replica indices
        self.epoch_of = self._epoch_of  # record code -> its leader epoch (0 -> Nil = -1)
        self._zeros = tuple(bytes(k) for k in range(log_size + 1))
        self._follow_memos: dict[TruncationRule, dict[bytes, bytes]] = {}
        self._label_tables: dict[tuple[str, str], Any] = {}
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
        self.compiled = compiled_available() if compiled is None else compiled
        self._attach_native()

    def _attach_native(self) -> None:
        """Run ``next_states`` and the ISR invariants compiled when ``self.compiled``: the
        compiled methods shadow the pure Python ones on this instance."""
        self._native: _compiled.Native | None = None
        if not self.compiled:
            return
        if _compiled is None:
            raise RuntimeError("the compiled module isrlab.spec.tla._native is not built")
        self._native = native = _compiled.Native(
            (self.n, self.L, self.R, self.E, self.layout.header, self.block, self.layout.size,
             self.lb, self.none, self.ib),
            self.bases,
            b"".join(b"".join(row) for row in self._fetched_hw),
            self.truncated, self._presuming, self._native_actions(),
            self.layout.permutations, self.layout.perm_tables,
        )
        self.next_states = native.next_states  # type: ignore[method-assign, assignment]
        self.weak_isr = native.weak_isr  # type: ignore[method-assign, assignment]
        self.strong_isr = native.strong_isr  # type: ignore[method-assign, assignment]
        self.canonical = native.canonical  # type: ignore[method-assign, assignment]

    def native_successors(self) -> tuple[Any, tuple[str, ...]] | None:
        """The compiled Next, canonical form and invariants for the checker's C interface
        (checker/_successors.h) and every label it can emit, or None when not compiled or
        when some disjunct or truncation rule of this variant runs in Python."""
        if self._native is None:
            return None
        codes = {"WeakIsr": 0, "StrongIsr": 1}
        chosen = (tuple(codes[name] for name in self.invariant_names)
                  if all(name in codes for name in self.invariant_names) else None)
        capsule = self._native.successors(chosen)
        if capsule is None:
            return None
        labels: list[str] = []

        def leaves(table: Any) -> None:
            if isinstance(table, str):
                labels.append(table)
            elif isinstance(table, tuple):
                for item in table:
                    leaves(item)

        for entry in self._native_actions():
            leaves(entry[1])
        return capsule, tuple(labels)

    def _native_actions(self) -> list[tuple[int, Any, Any, Any, Any, bool, int]]:
        """The compiled module's action entries, in Next's order (see _native.c)."""
        base = {
            TlaModel.controller_elect_leader: (N_ELECT, self.l_elect),
            TlaModel.controller_shrink_isr: (N_CSHRINK, self.l_cshrink),
            TlaModel.become_leader: (N_BECOME_LEADER, self.l_become_leader),
            TlaModel.leader_expand_isr: (N_EXPAND, self.labels("LeaderExpandIsr", "rr")),
            TlaModel.leader_shrink_isr: (N_SHRINK, self.labels("LeaderShrinkIsr", "rr")),
            TlaModel.leader_write: (N_WRITE, self.l_write),
            TlaModel.leader_inc_high_watermark: (
                N_INC_HW, self.labels("LeaderIncHighWatermark", "r")),
            TlaModel.follower_replicate: (
                N_REPLICATE, self.labels("FollowerReplicate", "from")),
        }
        entries: list[tuple[int, Any, Any, Any, Any, bool, int]] = []
        for action in self.actions:
            fn = action.__func__  # type: ignore[attr-defined]  # a MethodType
            if fn in base:
                code, labels = base[fn]
                entries.append((code, labels, None, None, None, False, 0))
            elif fn in NATIVE_ACTIONS:
                spec = NATIVE_ACTIONS[fn]
                memo = (self._follow_memos.setdefault(spec.rule, {})
                        if spec.rule is not None else None)
                entries.append((spec.code, self.labels(spec.label_action, spec.shape), memo,
                                spec.rule, None, spec.twice, spec.inline))
            else:
                entries.append((0, None, None, None, action, False, 0))
        return entries

    def __getstate__(self) -> dict[str, Any]:
        """Pickled without the compiled object (rebuilt on unpickling)."""
        state = dict(self.__dict__)
        for name in ("_native", "next_states", "weak_isr", "strong_isr", "canonical"):
            state.pop(name, None)
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        self.compiled = self.compiled and compiled_available()
        self._attach_native()

    # -- construction helpers ----------
    def _labels(self) -> None:
        """The labels of the base actions every variant keeps, built once."""
        rs, eps = range(self.n), range(self.E + 1)
        self.l_elect = tuple(f"ControllerElectLeader({_r(i)})" for i in rs)
        self.l_cshrink = tuple(f"ControllerShrinkIsr({_r(i)})" for i in rs)
        self.l_become_leader = tuple(
            tuple(f"BecomeLeader({_r(i)}, epoch {e})" for i in rs) for e in eps
        )
        self.l_write = tuple(f"LeaderWrite({_r(i)})" for i in rs)

    def labels(self, action: str, shape: str) -> Any:
        """The labels of ``action`` for every binding, built once: ``shape`` ``"r"`` gives
        ``[i]`` → ``Action(ri)``, ``"rr"`` ``[i][j]`` → ``Action(ri, rj)``, ``"from"``
        ``[i][j]`` → ``Action(rj from ri)``, ``"follows"`` ``[e][i][j]`` →
        ``Action(rj follows ri, epoch e)``."""
        found = self._label_tables.get((action, shape))
        if found is None:
            rs = range(self.n)
            if shape == "r":
                found = tuple(f"{action}({_r(i)})" for i in rs)
            elif shape == "rr":
                found = tuple(tuple(f"{action}({_r(i)}, {_r(j)})" for j in rs) for i in rs)
            elif shape == "from":
                found = tuple(tuple(f"{action}({_r(j)} from {_r(i)})" for j in rs) for i in rs)
            else:
                found = tuple(
                    tuple(tuple(f"{action}({_r(j)} follows {_r(i)}, epoch {e})" for j in rs)
                          for i in rs)
                    for e in range(self.E + 1)
                )
            self._label_tables[(action, shape)] = found
        return found

    def _select_actions(self) -> tuple[Action, ...]:
        """The disjuncts of the variant's Next, in the module's order: the base actions it
        keeps (methods of this class) and the actions it replaces them with."""
        own = self.variant.actions()
        base: dict[str, Callable[..., None]] = {
            "ControllerElectLeader": TlaModel.controller_elect_leader,
            "ControllerShrinkIsr": TlaModel.controller_shrink_isr,
            "BecomeLeader": TlaModel.become_leader,
            "LeaderExpandIsr": TlaModel.leader_expand_isr,
            "LeaderShrinkIsr": TlaModel.leader_shrink_isr,
            "LeaderWrite": TlaModel.leader_write,
            "LeaderIncHighWatermark": TlaModel.leader_inc_high_watermark,
            "FollowerReplicate": TlaModel.follower_replicate,
        }
        actions = []
        for name in self.variant.next_actions():
            fn = own[name].explicit if name in own else base.get(name)
            if fn is None:
                raise ValueError(f"{self.name}: base action {name} must be replaced")
            actions.append(MethodType(fn, self))
        return tuple(actions)

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
            "WeakIsr": Property("WeakIsr", self.weak_isr, TlaModel.weak_isr.__doc__ or "",
                                explain_weak_isr),
            "StrongIsr": Property(
                "StrongIsr", self.strong_isr, TlaModel.strong_isr.__doc__ or "",
                explain_strong_isr),
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
        """The first ``end`` record bytes of a log as ``isrlab.core.truncation`` records."""
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
        bases, labels = self.bases, self.labels("LeaderIncHighWatermark", "r")
        for i, a, code, _ in pres:
            hw = s[a + HW]
            if hw >= self.L:
                continue
            for f in self._members[s[a + ISR]]:
                b = bases[f]
                if s[b + LEADER] != code or s[b + END] <= hw:
                    break
            else:
                out.append((labels[i], self._inc_hw(s, a)))

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
        bases = self.bases
        labels = self.labels("LeaderShrinkIsr", "rr")
        for i, a, code, _ in self.true_leaders(s, pres):
            isr, end = s[a + ISR], s[a + END]
            for j in self._members[isr]:
                if j != i and not self._caught_up(s, a, bases[j], code, end):
                    out.append((labels[i][j], self._set_isr(s, a, isr - (1 << j))))

    def leader_expand_isr(self, s: State, out: Out, pres: Presumed) -> None:
        """LeaderExpandIsr (before KIP-320): the true leader adds a replica that follows it and
        has the record below the leader's HW."""
        bases = self.bases
        labels = self.labels("LeaderExpandIsr", "rr")
        for i, a, code, _ in self.true_leaders(s, pres):
            isr, hw = s[a + ISR], s[a + HW]
            mask = isr - self.ib
            for j, b in enumerate(bases):
                if not mask >> j & 1 and self._caught_up(s, a, b, code, hw):
                    out.append((labels[i][j], self._set_isr(s, a, isr + (1 << j))))

    # -- followers ----------
    def truncated(self, rule: TruncationRule, key: bytes) -> bytes:
        """For ``key`` = the leader's log slots + the follower's replica block + the request's
        (epoch + 1, leader, ISR) bytes: the follower's new replica block after truncating by
        ``rule`` (a ``isrlab.core.truncation`` function: the request's epoch, leader and ISR;
        HW = min(offset, HW); the log cut at the offset, Nil above), or ``b""`` when the
        truncation offset lies beyond the follower's log end (TruncateTo's guard disables
        the step).  Memoised: the rule is computed once per pair of logs."""
        memo = self._follow_memos.setdefault(rule, {})
        found = memo.get(key)
        if found is not None:
            return found
        L, B = self.L, self.block
        block = key[L:L + B]
        end, hw = block[END], block[HW]
        offset = rule(
            self._records(key[:L], L - key[:L].count(0)), self._records(block[LOG:], end), hw,
        )
        result = b""
        if offset <= end:
            result = b"".join((
                _BYTE[min(offset, hw)], key[L + B:], _BYTE[offset], block[LOG:LOG + offset],
                self._zeros[L - offset],
            ))
        memo[key] = result
        return result

    def become_follower_and_truncate(
        self, s: State, out: Out, rule: TruncationRule, action: str, twice: bool = False,
    ) -> None:
        """BecomeFollowerAndTruncateTo with a version's truncation ``rule``, as ``action``: a
        replica other than the request's leader takes a request of a higher epoch than its
        own and truncates at the rule's offset; the step is disabled when that offset lies
        beyond its log end (TruncateTo's guard).  Requests naming no leader (None) are never
        acted on: the spec binds the leader to Replicas.  ``twice``: the version lists the
        empty follower in two disjuncts (one successor, counted twice)."""
        bases, L, block = self.bases, self.L, self.block
        labels = self.labels(action, "follows")
        memo = self._follow_memos.setdefault(rule, {})
        for e, leader, request in self.led_requests(s):
            a = bases[leader] + LOG
            leader_log = s[a:a + L]
            for j, b in enumerate(bases):
                if j == leader or e + 1 <= s[b + EPOCH]:
                    continue
                key = leader_log + s[b:b + block] + request
                new = memo.get(key)
                if new is None:
                    new = self.truncated(rule, key)
                if not new:
                    continue
                succ = s[:b] + new + s[b + block:]
                out.append((labels[e][leader][j], succ))
                if twice and s[b + END] == 0:
                    out.append((labels[e][leader][j], succ))

    def follower_replicate(self, s: State, out: Out, pres: Presumed) -> None:
        """FollowerReplicate (before KIP-320): a replica following a presumed leader copies the
        leader's record at its end offset, in any epoch (no fencing), and takes
        HW = min(leader's HW, its new end offset)."""
        labels = self.labels("FollowerReplicate", "from")
        for i, a, _, followers in pres:
            for j, b in followers:
                self.fetch(s, out, labels[i][j], a, b)

    def fetch(self, s: State, out: Out, label: str, a: int, b: int) -> None:
        """ReplicateTo from the replica at block ``a`` to the one at ``b``, plus the follower's
        HW update (``isrlab.core.partition.follower_high_watermark``, tabulated), when the leader
        has
        a record at the follower's end offset."""
        end = s[b + END]
        if end >= s[a + END] or end >= self.L:
            return
        succ = b"".join((
            s[:b], self._fetched_hw[s[a + HW]][end + 1], s[b + 1:b + END], _BYTE[end + 1],
            s[b + END + 1:b + LOG + end], _BYTE[s[a + LOG + end]], s[b + LOG + end + 1:],
        ))
        out.append((label, succ))

    def set_isr(self, s: State, a: int, isr_code: int) -> State:
        """QuorumUpdateLeaderAndIsr's effect: the quorum ISR and the leader's ISR both change."""
        return self._set_isr(s, a, isr_code)

    def inc_hw(self, s: State, a: int) -> State:
        """The replica at block ``a`` with its high watermark one higher."""
        return self._inc_hw(s, a)

    def quorum_leader(self, s: State) -> int:
        """quorumState.leader as a leader code (the newest request's leader, or None)."""
        return self._quorum_leader(s)

    def led_requests(self, s: State) -> list[tuple[int, int, bytes]]:
        """The LeaderAndIsr requests naming a leader, as ``(epoch, leader index, the
        replica-block bytes it sets: epoch + 1, leader code, ISR code)``; requests naming
        None are never acted on (every action binds the leader to Replicas)."""
        none, lb = self.none, self.lb
        return [(e, s[k] - lb, _BYTE[e + 1] + s[k:k + 2])
                for e, k in enumerate(range(RQ, RQ + 2 * s[1], 2)) if s[k] != none]

    def true_leaders(self, s: State, pres: Presumed) -> Presumed:
        """IsTrueLeader: the presumed leaders the quorum names, in the quorum's epoch (at
        most one), as ``pres`` entries."""
        qleader, epoch = self._quorum_leader(s), s[1]
        return tuple(p for p in pres if p[2] == qleader and s[p[1] + EPOCH] == epoch)

    def hw_reached_current_epoch(self, s: State, a: int) -> bool:
        """HasHighWatermarkReachedCurrentEpoch of the replica at block ``a``: its HW is at its
        log end or at a record of its own epoch."""
        hw, end = s[a + HW], s[a + END]
        return hw == end or (hw < end and self._epoch_of[s[a + LOG + hw]] == s[a + EPOCH] - 1)

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
