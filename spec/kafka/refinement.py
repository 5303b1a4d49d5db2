"""Refinement of the ``kafka`` model to the TLA+ level (``tla-kip279``, ``tla-kip320``).

``project`` is the one mapping from a ``kafka`` state to the specification's variables, as
a partial observation ``Obs`` (the variables both levels have); ``observe`` reads the same
observation off a ``tla-*`` state.  ``check_refinement`` walks every transition of the
complete ``kafka`` state space and ``random_walks`` walks seeded random behaviours: each
``kafka`` step must be matched by 0..k steps of the ``tla-*`` model (stuttering and hidden
abstract steps, as ``isrlab.checker.validate``'s hidden steps), the abstract state being tracked as
the set of ``tla-*`` states consistent with the behaviour so far (a forward simulation).

The mapping (docs/kafka-model.md, "Refinement to the TLA+ level"):

* ``nextRecordId`` = the ghost ``next_id``; a record ``m@e`` = the spec's ``[id, epoch]``;
* ``quorumState`` = ZooKeeper's partition state (leader, leader epoch, ISR), so
  ``nextLeaderEpoch`` = ZooKeeper's epoch + 1;
* ``replicaLog[b]``, ``replicaState[b].hw / leaderEpoch / leader`` = broker ``b``'s
  ``Partition``; ``replicaState[b].isr`` only while ``b`` presumes leadership (a Kafka
  follower keeps no ISR, the spec's follower copies the request's: unobserved);
* ``leaderAndIsrRequests`` below the current epoch are history no broker keeps: unobserved
  (the tracked ``tla-*`` states carry them).

Modelling shortcut: the check is exhaustive over ``kafka``'s transitions but the hidden
abstract steps are searched breadth-first up to ``k`` per concrete step (not unbounded).
"""

from __future__ import annotations

import random
from collections.abc import Callable, Hashable, Iterable
from dataclasses import dataclass, field
from typing import Any, TypeVar

from isrlab.spec.kafka.config import KafkaConfig
from isrlab.spec.kafka.model import KafkaModel
from isrlab.spec.kafka.state import NONE, KafkaState
from isrlab.spec.tla import layout as tl
from isrlab.spec.tla.model import TlaModel
from isrlab.spec.variants import get as variant_named

Replica = tuple[int, int, int, int, tuple[int, ...]]
"""One replica's observation: (hw, leader epoch, leader, ISR mask or -1, log records)."""
Obs = tuple[int, int, int, int, tuple[Replica, ...]]
"""(nextRecordId, nextLeaderEpoch, quorum leader, quorum ISR mask, replicas); leaders and
records as plain ints: a broker id or -1 (None), ``id * (E + 1) + epoch``."""

Ball = tuple[int, list[bytes], frozenset[str]]
"""Fewest steps to an observation, the ``tla-*`` states there, the gap steps used."""

BALL_CACHE = 4096
"""How many ``tla-*`` states' 0..k-step neighbourhoods are kept (cleared when full)."""

TLA_OF_TRUNCATION = {("kip279", "none"): "tla-kip279", ("kip279", "final"): "tla-kip320"}


S = TypeVar("S", bound=Hashable)
Ob = TypeVar("Ob", bound=Hashable)


def bounded_ball(start: S, k: int, observe_of: Callable[[S], Ob],
                 successors: Callable[[S], Iterable[tuple[str, S]]],
                 ) -> dict[Ob, tuple[int, list[S], frozenset[str]]]:
    """The abstract states within ``k`` steps of ``start``, breadth first, by observation:
    observation -> (fewest steps, the states, the named steps on the first path found to
    the first of them).  ``successors`` gives (name, state) pairs, name ``""`` for the
    specification's own steps and a gap step's name otherwise.  Shared by the ZooKeeper-mode
    and the KRaft refinement checks."""
    out: dict[Ob, tuple[int, list[S], frozenset[str]]] = {}
    used: dict[S, frozenset[str]] = {start: frozenset()}
    frontier = [start]
    for depth in range(k + 1):
        nxt = []
        for u in frontier:
            o = observe_of(u)
            entry = out.get(o)
            if entry is None:
                out[o] = (depth, [u], used[u])
            else:
                entry[1].append(u)
            if depth < k:
                for name, v in successors(u):
                    if v not in used:
                        used[v] = used[u] | {name} if name else used[u]
                        nxt.append(v)
        frontier = nxt
    return out


def matching_config(version: str, brokers: int, max_records: int,
                    max_leader_epoch: int) -> KafkaConfig:
    """The ``kafka`` parameters matching the specification's assumptions for ``version``:
    no crashes (the spec never loses a record, a crash is only ``ControllerShrinkIsr``),
    the controller never fails over, requests in order and never lost or duplicated, no
    metadata caches, no consumers, atomic fetches; new epochs come from reassignment (the
    controller naming another ISR member, the spec's ``ControllerElectLeader``) and
    KIP-279 truncation, with KIP-320 fencing for ``tla-kip320``; the leader writes its ISR
    to ZooKeeper itself, as these versions do (the spec's ``LeaderShrinkIsr`` /
    ``LeaderExpandIsr`` change the ISR in one step); a follower truncates in the step that
    makes it a follower (``unavailable_leader=follow``: the spec's become-follower step
    truncates at once, with KIP-320 only once the leader is in the new epoch; with the
    default ``fetcher`` the follower takes the request first and its fetcher truncates
    later, a state the spec has no counterpart for)."""
    if version not in ("tla-kip279", "tla-kip320"):
        raise ValueError(f"no refinement mapping for {version!r}")
    return KafkaConfig(
        brokers=brokers, max_records=max_records, max_leader_epoch=max_leader_epoch,
        truncation="kip279", fetch_fencing="final" if version == "tla-kip320" else "none",
        expand_rule="epoch-start" if version == "tla-kip320" else "hw",
        crashes="none", reassignment=True, metadata=False, consumers=False,
        max_controller_epoch=0, reorder_requests=False, lost_requests=False,
        duplicate_requests=False, fetch="atomic", isr_shrink=True, lag_ticks=0,
        isr_changes="zookeeper",  # Kafka 2.0/2.1: the leader writes its ISR to ZooKeeper
        unavailable_leader="follow",  # truncation in the become-follower step, as the spec
        controller="zookeeper",
    )


def tla_for(kafka: KafkaModel) -> TlaModel:
    """The ``tla-*`` model with the constants of ``kafka``'s configuration."""
    cfg = kafka.cfg
    name = TLA_OF_TRUNCATION[(cfg.truncation, cfg.fetch_fencing)]
    return TlaModel(variant_named(name), cfg.brokers, max(1, cfg.max_records),
                    max(1, cfg.max_records), cfg.max_leader_epoch)


def project(model: KafkaModel, state: KafkaState) -> Obs:
    """The ``kafka`` state as the specification's variables (see the module doc)."""
    zk = state.controller
    replicas = []
    for b, br in enumerate(state.brokers):
        leader = br.leader
        isr = br.in_sync_replica_ids if leader == b else -1
        replicas.append((br.high_watermark, br.leader_epoch, leader, isr, tuple(br.log)))
    return (state.ghost.next_id, zk.leader_epoch + 1, zk.leader, zk.isr, tuple(replicas))


def observe(tla: TlaModel, s: bytes) -> Obs:
    """The same observation read off a ``tla-*`` state."""
    lay = tla.layout
    replicas = []
    for i, a in enumerate(lay.bases):
        code = s[a + tl.LEADER]
        leader = NONE if code == lay.none else code - lay.leader_base
        isr = s[a + tl.ISR] - lay.isr_base if leader == i else -1
        end = s[a + tl.END]
        log = tuple(c - 1 for c in s[a + tl.LOG:a + tl.LOG + end])
        replicas.append((s[a + tl.HW], s[a + tl.EPOCH] - 1, leader, isr, log))
    nle = s[1]
    qcode = s[tl.RQ + 2 * nle - 2] if nle else lay.none
    qleader = NONE if qcode == lay.none else qcode - lay.leader_base
    return (s[0], nle, qleader, s[2] - lay.isr_base, tuple(replicas))


@dataclass
class RefinementResult:
    """What a refinement check saw: concrete transitions checked, concrete states and
    (concrete, abstract) pairs tracked, the most abstract steps one concrete step needed,
    the transitions that needed a step the specification lacks (``gap_steps``, per
    ``kafka`` action, and ``gap_kinds`` per gap step), and the first failures (no match
    even with gap steps)."""

    transitions: int = 0
    states: int = 0
    pairs: int = 0
    max_steps: int = 0
    steps_histogram: dict[int, int] = field(default_factory=dict)
    gap_transitions: dict[str, int] = field(default_factory=dict)
    gap_kinds: dict[str, int] = field(default_factory=dict)
    failures: list[str] = field(default_factory=list)
    failed: int = 0
    failed_kinds: dict[str, int] = field(default_factory=dict)

    @property
    def ok(self) -> bool:
        """No concrete step without a matching abstract one."""
        return not self.failed

    def summary(self) -> str:
        """One line of figures."""
        gaps = sum(self.gap_transitions.values())
        return (f"{self.transitions:,} transitions checked, {self.states:,} kafka states "
                f"(complete checks), "
                f"{self.pairs:,} (kafka, tla) pairs, max {self.max_steps} abstract steps "
                f"per step {dict(sorted(self.steps_histogram.items()))}, {gaps:,} needed a "
                f"step the spec lacks {dict(sorted(self.gap_transitions.items()))} "
                f"{dict(sorted(self.gap_kinds.items()))}, "
                f"{self.failed} failed {dict(sorted(self.failed_kinds.items()))}")


GAP_STEPS = ("FollowerLearnHw", "LeaderShrinkIsrIdle", "LeaderIncHwOnRememberedLeo",
             "FollowerTruncateToLeaderEnd", "LeaderExpandIsrAtEpochStart")
"""The Kafka steps the specification has no action for (``_gap_steps``)."""


def _learn_hw(tla: TlaModel, s: bytes, i: int, a: int, fenced: bool) -> list[bytes]:
    """FollowerLearnHw: an empty fetch response raises a follower's HW to
    ``min(leader HW, own end)`` (KIP-320: only in the leader's epoch)."""
    out, code = [], tla.layout.leader_base + i
    for b in tla.layout.bases:
        if b == a or s[b + tl.LEADER] != code:
            continue
        if fenced and s[b + tl.EPOCH] != s[a + tl.EPOCH]:
            continue
        hw = min(s[a + tl.HW], s[b + tl.END])
        if hw != s[b + tl.HW]:
            out.append(s[:b + tl.HW] + bytes((hw,)) + s[b + tl.HW + 1:])
    return out


def _shrink_idle(tla: TlaModel, s: bytes, i: int, a: int) -> list[bytes]:
    """LeaderShrinkIsrIdle: the true leader drops any other ISR member, as Kafka's
    time-based ``maybeShrinkIsr`` drops a caught-up follower that stopped fetching."""
    lay, nle = tla.layout, s[1]
    qcode = s[tl.RQ + 2 * nle - 2] if nle else lay.none
    if lay.leader_base + i != qcode or s[a + tl.EPOCH] != nle:
        return []
    isr = s[a + tl.ISR]
    return [tla._set_isr(s, a, isr - (1 << j)) for j in range(lay.n)
            if j != i and (isr - lay.isr_base) >> j & 1]


def _inc_hw_remembered(tla: TlaModel, s: bytes, a: int, fenced: bool) -> list[bytes]:
    """LeaderIncHwOnRememberedLeo: a replica presuming leadership raises its HW by one (not
    past its log end).  Kafka's ``Partition.maybeIncrementLeaderHW`` takes the minimum of
    the LEOs the ISR members reported at their last fetch: a member that has since
    followed another leader, or truncated on taking a new epoch, still counts with what it
    last fetched here (the spec's LeaderIncHighWatermark demands that every member still
    follow this leader and have the record).  With KIP-320 fencing (``fenced``) a member
    following this leader in its epoch truncated before its first fetch in that epoch, so
    it must have the leader's log up to the new HW; without fencing it may have fetched in
    an older epoch and truncated since, and the current logs bound nothing."""
    lay, hw = tla.layout, s[a + tl.HW]
    if hw >= s[a + tl.END]:
        return []
    if not fenced:
        return [s[:a + tl.HW] + bytes((hw + 1,)) + s[a + tl.HW + 1:]]
    rec, code = s[a + tl.LOG + hw], s[a + tl.LEADER]
    for j in range(lay.n):
        b = lay.bases[j]
        if s[b + tl.LEADER] != code or s[b + tl.EPOCH] != s[a + tl.EPOCH]:
            continue
        member = b != a and (s[a + tl.ISR] - lay.isr_base) >> j & 1
        if member and (s[b + tl.END] <= hw or s[b + tl.LOG:b + tl.LOG + hw + 1]
                       != s[a + tl.LOG:a + tl.LOG + hw] + bytes((rec,))):
            return []
    return [s[:a + tl.HW] + bytes((hw + 1,)) + s[a + tl.HW + 1:]]


def _truncate_to_leader_end(tla: TlaModel, s: bytes, i: int, a: int) -> list[bytes]:
    """FollowerTruncateToLeaderEnd (no fencing): a follower whose log is longer than its
    leader's cuts it to the leader's end (``ReplicaFetcherThread.handleOffsetOutOfRange``
    since KAFKA-7414, Kafka 2.1), HW = min(HW, that end); the spec's follower stays
    diverged."""
    lay, out, code, cut = tla.layout, [], tla.layout.leader_base + i, s[a + tl.END]
    for b in lay.bases:
        if b != a and s[b + tl.LEADER] == code and s[b + tl.END] > cut:
            block = (bytes((min(s[b + tl.HW], cut),)) + s[b + 1:b + tl.END] + bytes((cut,))
                     + s[b + tl.LOG:b + tl.LOG + cut] + bytes(tla.L - cut))
            out.append(s[:b] + block + s[b + tl.LOG + tla.L:])
    return out


def _expand_at_epoch_start(tla: TlaModel, s: bytes, i: int, a: int) -> list[bytes]:
    """LeaderExpandIsrAtEpochStart (KIP-320): the true leader adds a follower in its epoch
    whose end reaches the leader's HW and its epoch's start offset (the records of earlier
    epochs in the leader's log), Kafka's ``Partition.maybeExpandIsr`` since KAFKA-7128; the
    spec's FencedLeaderExpandIsr also waits for the leader's HW to reach its epoch."""
    lay, nle = tla.layout, s[1]
    qcode = s[tl.RQ + 2 * nle - 2] if nle else lay.none
    code, epoch = lay.leader_base + i, s[a + tl.EPOCH]
    if code != qcode or epoch != nle:
        return []
    start = sum(1 for c in s[a + tl.LOG:a + tl.LOG + s[a + tl.END]]
                if tla.epoch_of[c] < epoch - 1)
    isr, hw = s[a + tl.ISR], s[a + tl.HW]
    out = []
    for j, b in enumerate(lay.bases):
        if (isr - lay.isr_base) >> j & 1 or s[b + tl.LEADER] != code or s[b + tl.EPOCH] != epoch:
            continue
        if s[b + tl.END] >= max(hw, start):
            out.append(tla._set_isr(s, a, isr + (1 << j)))
    return out


def _gap_steps(tla: TlaModel, s: bytes, kinds: frozenset[str]) -> list[tuple[str, bytes]]:
    """The Kafka steps of ``kinds`` (names in ``GAP_STEPS``) the specification has no
    action for, from ``s`` (docs/kafka-model.md), with their names."""
    lay, out = tla.layout, []
    fenced = "FencedLeaderIncHighWatermark" in tla.variant.actions()
    for i, a in enumerate(lay.bases):
        if s[a + tl.LEADER] != lay.leader_base + i:
            continue
        found: list[tuple[str, list[bytes]]] = [
            ("FollowerLearnHw", _learn_hw(tla, s, i, a, fenced)),
            ("LeaderShrinkIsrIdle", _shrink_idle(tla, s, i, a)),
            ("LeaderIncHwOnRememberedLeo", _inc_hw_remembered(tla, s, a, fenced)),
            ("FollowerTruncateToLeaderEnd", [] if fenced else _truncate_to_leader_end(
                tla, s, i, a)),
            ("LeaderExpandIsrAtEpochStart", _expand_at_epoch_start(tla, s, i, a)
             if fenced else []),
        ]
        out += [(name, t) for name, ts in found if name in kinds for t in ts]
    return out


def _gap_kinds(gaps: bool | Iterable[str]) -> frozenset[str]:
    """``True``: every gap step; ``False``: none; else the named ones."""
    if isinstance(gaps, bool):
        return frozenset(GAP_STEPS if gaps else ())
    kinds = frozenset(gaps)
    unknown = kinds - set(GAP_STEPS)
    if unknown:
        raise ValueError(f"unknown gap steps {sorted(unknown)}")
    return kinds


class _Matcher:
    """The ``tla-*`` states reachable from a state in 0..k steps, indexed by observation
    (memoised per state); with ``gaps`` the steps of ``_gap_steps`` of those kinds count as
    steps too (the names of those used on the first path found are kept)."""

    def __init__(self, tla: TlaModel, k: int, gaps: frozenset[str]) -> None:
        self.tla, self.k, self.gaps = tla, k, gaps
        self._balls: dict[tuple[bytes, bool], dict[Obs, Ball]] = {}

    def _succ(self, u: bytes, gaps: bool) -> list[tuple[str, bytes]]:
        succ = [("", v) for _, v in self.tla.next_states(u)]
        return succ + _gap_steps(self.tla, u, self.gaps) if gaps else succ

    def ball(self, t: bytes, gaps: bool) -> dict[Obs, Ball]:
        """Observation -> (fewest steps, the states, gap steps used) within ``k`` steps of
        ``t``."""
        found = self._balls.get((t, gaps))
        if found is not None:
            return found
        if len(self._balls) >= BALL_CACHE:
            self._balls.clear()  # bounded memory on long random walks
        out = bounded_ball(t, self.k, lambda u: observe(self.tla, u),
                           lambda u: self._succ(u, gaps))
        self._balls[(t, gaps)] = out
        return out

    def match(self, ts: Iterable[bytes], target: Obs) -> tuple[int, set[bytes], frozenset[str]]:
        """The states matching ``target`` within ``k`` steps of any of ``ts``, the fewest
        steps needed (-1 when none), and the gap steps needed (empty when none)."""
        ts = list(ts)
        for gaps in ((False, True) if self.gaps else (False,)):
            best, found, names = -1, set(), frozenset[str]()
            for t in ts:
                entry = self.ball(t, gaps).get(target)
                if entry is None:
                    continue
                found.update(entry[1])
                if best < 0 or entry[0] < best:
                    best, names = entry[0], entry[2]
            if best >= 0:
                return best, found, names
        return -1, set(), frozenset()


def _record(result: RefinementResult, steps: int, gap: frozenset[str], label: str) -> None:
    result.transitions += 1
    if gap:
        action = label.split("(")[0]
        result.gap_transitions[action] = result.gap_transitions.get(action, 0) + 1
        for name in sorted(gap):
            result.gap_kinds[name] = result.gap_kinds.get(name, 0) + 1
    result.max_steps = max(result.max_steps, steps)
    result.steps_histogram[steps] = result.steps_histogram.get(steps, 0) + 1


def failure_kind(model: KafkaModel, s: Any, label: str, t: Any) -> str:
    """A name for why a ``kafka`` step has no abstract counterpart: a log cut without a
    new LeaderAndIsr (the fetcher's out-of-range truncation), a leader HW raised on the
    follower LEOs the leader remembers, or another step (the action's name)."""
    before, after = project(model, s)[4], project(model, t)[4]
    if any(len(a[4]) < len(b[4]) and a[1] == b[1] for a, b in zip(after, before, strict=True)):
        return "OutOfRangeTruncation"
    if any(a[2] == i and a[0] > b[0] for i, (a, b) in enumerate(zip(after, before,
                                                                      strict=True))):
        return "LeaderHwFromRememberedLeo"
    return label.split("(")[0]


def _fail(result: RefinementResult, model: KafkaModel, s: Any, label: str, t: Any) -> None:
    result.failed += 1
    kind = failure_kind(model, s, label, t)
    result.failed_kinds[kind] = result.failed_kinds.get(kind, 0) + 1
    if result.failed_kinds[kind] == 1:
        result.failures.append(
            f"{kind} at {label}: from {project(model, s)} to {project(model, t)} "
            f"(kafka {model.variables(t)})"
        )


def check_refinement(kafka: KafkaModel, tla: TlaModel, k: int = 6,
                     max_states: int | None = None,
                     gaps: bool | Iterable[str] = True) -> RefinementResult:
    """Every transition (s, s') of ``kafka``'s complete state space: ``project(s')`` is
    reached from a ``tla-*`` state matching ``project(s)`` in 0..k steps; the initial state
    must match a state reached from ``tla``'s Init in 0..k steps (the spec starts before
    the topic exists).  Breadth-first over (kafka state, tla state) pairs."""
    matcher = _Matcher(tla, k, _gap_kinds(gaps))
    result = RefinementResult()
    init_tla = list(tla.init_states())
    pairs: dict[Any, set[bytes]] = {}
    queue: list[Any] = []
    for s0 in kafka.init_states():
        steps, ts, gap = matcher.match(init_tla, project(kafka, s0))
        if steps < 0:
            result.failures.append(f"Init: {project(kafka, s0)} not within {k} steps of Init")
            continue
        pairs[s0] = ts
        queue.append(s0)
    head = 0
    while head < len(queue):
        s = queue[head]
        head += 1
        if max_states is not None and head > max_states:
            break
        for label, s2 in kafka.next_states(s):
            steps, ts, gap = matcher.match(pairs[s], project(kafka, s2))
            if steps < 0:
                _fail(result, kafka, s, label, s2)
                continue
            _record(result, steps, gap, label)
            known = pairs.get(s2)
            if known is None:
                pairs[s2] = set(ts)
                queue.append(s2)
            elif not ts <= known:
                known.update(ts)
                queue.append(s2)  # new abstract states to follow from s2
    result.states = len(pairs)
    result.pairs = sum(len(v) for v in pairs.values())
    return result


def random_walks(kafka: KafkaModel, tla: TlaModel, walks: int, length: int, seed: int,
                 k: int = 6, gaps: bool | Iterable[str] = True) -> RefinementResult:
    """``walks`` seeded random behaviours of ``length`` steps of ``kafka`` (a deterministic
    ``random.Random(seed)``), each step matched as in ``check_refinement``."""
    matcher = _Matcher(tla, k, _gap_kinds(gaps))
    rng = random.Random(seed)
    result = RefinementResult()
    init_tla = list(tla.init_states())
    inits = list(kafka.init_states())
    for _ in range(walks):
        s = inits[rng.randrange(len(inits))]
        steps, ts, gap = matcher.match(init_tla, project(kafka, s))
        if steps < 0:
            result.failures.append(f"Init: {project(kafka, s)} not within {k} steps of Init")
            return result
        for _ in range(length):
            succ = list(kafka.next_states(s))
            if not succ:
                break
            label, s2 = succ[rng.randrange(len(succ))]
            steps, ts, gap = matcher.match(ts, project(kafka, s2))
            if steps < 0:
                _fail(result, kafka, s, label, s2)
                break
            _record(result, steps, gap, label)
            s = s2
    return result
