"""Refinement of the ``kafka`` model in KRaft mode to the KRaft TLA+ level (``tla-kraft-3.5``,
``tla-kraft-kip966``).

``project`` maps a ``kafka -p controller=kraft`` state to a partial observation ``Obs`` of
the variables both levels have; ``observe`` reads the same observation off a
``tla-kraft-*`` state (``isrlab.spec.tla_kraft``).  ``check_refinement`` walks every
transition of the complete ``kafka`` state space and ``random_walks`` seeded random
behaviours: each ``kafka`` step must be matched by 0..k steps of the port (stuttering and
hidden steps), the abstract side tracked as the set of port states consistent with the
behaviour so far (a forward simulation), as ``isrlab.spec.kafka.refinement`` does for the
ZooKeeper mode.  docs/kafka-model.md ("Refinement to the KRaft TLA+ level") states the
mapping, the assumptions and every gap step.

The observation (``Obs``), broker ids 0-based, leader epochs 0-based (the spec starts at
1), offsets 0-based (the spec's are 1-based), no leader ``-1``:

* the controller's partition (``con_partition_metadata``: leader, leader epoch, ISR, ELR)
  and its unfenced brokers (``con_unfenced``; Kafka: the brokers its image has unfenced
  and not in controlled shutdown, the ones ``isActive`` accepts as leader and KIP-841 as
  ISR member: see ``CONTROLLED_SHUTDOWN``);
* records produced (``inv_sent``), and the fetch requests in flight (none in Kafka, whose
  fetch is one round trip);
* the controller's last-known leader (``lastKnownElr`` with KIP-966; the port's, a history
  variable of the check: ``isrlab.spec.kafka.kraft_refinement_history``);
* per broker: whether it runs, the leader and leader epoch its ``Partition`` acts on
  (``partition_metadata[b]``), its log as (epoch, record id) pairs (the port's value
  ``v``, A, B, ..., is record ``v - 1``), its HW, and while it leads its committed and
  maximal ISR (Kafka: ``in_sync_replica_ids`` and that plus the pending proposal's), the
  partition epochs it is behind the controller, the partition change records it has not
  read, and its AlterPartition round trip (none, sent, accepted, refused).

Not observed, carried by the tracked port states: partition and broker epochs themselves,
the metadata log and the brokers' offsets in it, fetch sessions and fetch responses in
flight, the leaders' follower states.

Modelling shortcuts: the abstract steps one ``kafka`` step may take are drawn from a set of
port actions that depends on the step (``ALPHABET``; a fetch round trip is the spec's
request, its handling, its response and the leader's AlterPartition it may trigger), up
to ``k`` of them, with the gap steps of ``isrlab.spec.kafka.kraft_refinement_gaps`` only
when those find no match (a step of ``FORCED`` only by its gap step); the tracked port
states are normalised (``normalised``), a bisimulation of the port's steps used here; and
each ``kafka`` state is expanded once (``check_refinement``).
"""

from __future__ import annotations

import random
from collections.abc import Callable, Iterable
from dataclasses import dataclass, replace
from typing import Any

from isrlab.spec.kafka.config import KafkaConfig
from isrlab.spec.kafka.kraft_model import KRaftModel
from isrlab.spec.kafka.kraft_refinement_gaps import gap_steps
from isrlab.spec.kafka.kraft_refinement_history import observed, stepped, with_history
from isrlab.spec.kafka.kraft_refinement_normal import normalised
from isrlab.spec.kafka.kraft_state import (
    FENCED,
    PCR,
    SHUTTING_DOWN,
    KRaftState,
    controller_image,
)
from isrlab.spec.kafka.labels import parse
from isrlab.spec.kafka.refinement import RefinementResult, bounded_ball
from isrlab.spec.kafka.state import (
    ALTER_ACCEPTED,
    ALTER_FENCED,
    ALTER_INELIGIBLE,
    ALTER_NEW_EPOCH,
    ALTER_NONE,
    ALTER_SENT,
    KafkaState,
)
from isrlab.spec.tla_kraft import layout as kl
from isrlab.spec.tla_kraft.model import KraftConfig, KraftModel, SpecError

Broker = tuple[int, int, int, tuple[tuple[int, int], ...], int, int, int, int, int, int]
"""(running, leader, leader epoch, records as (epoch, record id), HW, ISR or -1, maximal ISR or -1,
partition epochs behind the controller's or -1, partition change records not yet read or
-1, AlterPartition round trip); the -1 fields are observed only while the broker leads."""
Obs = tuple[int, int, int, int, int, int, int, tuple[Broker, ...], int]
"""(leader, leader epoch, ISR, ELR, unfenced, records produced, fetch requests in flight,
brokers, last-known leader)."""
Abstract = tuple[Any, ...]
"""A tracked port state: the spec's 23 variables as ``KraftModel.unpack`` gives them, and
the history variable ``kraft_refinement_history.LAST_LEADER``."""

UNLIMITED = 1 << 20
"""The port's counted limits (FenceBroker, LeaderShrinkIsr) set out of reach."""

VERSIONS = ("tla-kraft-3.5", "tla-kraft-kip966")


def matching_config(version: str, brokers: int, max_leader_epoch: int = 2,
                    max_metadata_lag: int = 2, min_isr: int = 1,
                    **changes: Any) -> KafkaConfig:
    """The ``kafka`` parameters closest to the port's modelling choices (docs/kafka-model.md,
    "Refinement to the KRaft TLA+ level", lists them as the refinement's assumptions):
    ``controller=kraft``; one record (``max_records=1``, the cfgs' ``Values = {A}``;
    ``max_records=2`` in ``changes`` is checked too, against ``Values = {A, B}``); no crashes
    (``crashes="clean"`` in ``changes`` is checked too: a clean stop and restart) and a
    live broker's heartbeats may stop (``heartbeat_loss``: the spec's ``FenceBroker`` fences
    any unfenced broker, ``UnfenceBroker`` unfences it); the leader epoch bumped only on a
    leader change (``kraft_epoch_bump=leader-change``: the spec's ISR changes keep the
    leader epoch); ``make_leader_equal_epoch=skip`` (the spec's ``MetadataNoOp`` for a
    partition epoch that is not newer); Kafka <= 0.10.1's lag rules (``kafka_4485=false``:
    the spec's HW and ISR read only the followers' last fetch offsets); every replica in
    the initial ISR; no consumers; ELR off for ``tla-kraft-3.5`` and on (with unclean
    detection by the broker epoch on disk, 3.8's ``previous-epoch``, the spec's rule) for
    ``tla-kraft-kip966``.  ``changes`` replaces any of them (``crashes``, or to show that a
    gap appears without an assumption)."""
    if version not in VERSIONS:
        raise ValueError(f"no KRaft refinement mapping for {version!r}")
    kip966 = version == "tla-kraft-kip966"
    return replace(KafkaConfig(
        brokers=brokers, max_records=1, max_leader_epoch=max_leader_epoch,
        controller="kraft", crashes="none", heartbeat_loss=True, elr=kip966,
        kraft_epoch_bump="leader-change", make_leader_equal_epoch="skip",
        kafka_4485=False, lag_ticks=0, consumers=False, min_isr=min_isr, initial_isr=0,
        max_metadata_lag=max_metadata_lag, kip903=True,
        unclean_detection="previous-epoch" if kip966 else "none",
    ), **changes)


def tla_for(kafka: KRaftModel) -> KraftModel:
    """The port with the constants of ``kafka``'s configuration: the same brokers, every
    one a replica and in the initial ISR, the same min ISR, ``Values`` with as many values
    as ``max_records`` (A, B, ...: record ``i`` is value ``i + 1``), the spec's KIP-903
    check (``kip903_check``) as ``kip903``, no reassignment (``kafka`` has
    none in KRaft mode), the counted limits (shutdowns too) out of reach, no invariants and
    no VIEW (the refinement compares states, not views).  The spec's clean shutdown is a
    controlled shutdown's last step (``CONTROLLED_SHUTDOWN``); a Kafka crash or power loss
    is a gap step (``BrokerStopsBeforeFencing``): the alphabet decides which is tried."""
    cfg = kafka.cfg
    if not 1 <= cfg.max_records <= len(kl.VALUE_NAMES):
        raise ValueError(f"max_records={cfg.max_records}: the ports write at most "
                         f"{len(kl.VALUE_NAMES)} values; no refinement mapping for more")
    n = cfg.brokers
    return KraftModel(KraftConfig(
        kip966=cfg.elr, brokers=n, replication_factor=n, min_isr=cfg.min_isr,
        init_isr_size=n, fence_broker_limit=UNLIMITED, leader_shrink_isr_limit=UNLIMITED,
        clean_limit=UNLIMITED, reassignment_limit=0, invariants=(), view=False,
        values=cfg.max_records, kip903_check=cfg.kip903))


# ---- the observation ------------------------------------------------------------------
def project(model: KRaftModel, state: KafkaState) -> Obs:
    """The ``kafka`` state as the observation (the module docstring)."""
    ctrl = state.controller
    k = ctrl.kraft
    assert isinstance(k, KRaftState)
    part, regs = controller_image(k, model.n)
    unfenced = sum(1 << b for b, (epoch, flags) in enumerate(regs)
                   if epoch >= 0 and not flags & (FENCED | SHUTTING_DOWN))
    per = model.codec.epochs
    brokers = []
    for b, br in enumerate(state.brokers):
        leads = br.alive and br.leader == b
        if not br.alive:
            brokers.append((0, -1, -1, _records(br.log, per), br.high_watermark,
                            -1, -1, -1, -1, 0))
            continue
        brokers.append((
            br.alive, br.leader, br.leader_epoch, _records(br.log, per),
            br.high_watermark, br.in_sync_replica_ids if leads else -1,
            br.in_sync_replica_ids | br.pending_isr if leads else -1,
            part[2] - k.partition_epoch[b] if leads else -1,
            _unread(k, b) if leads else -1,
            _KAFKA_PHASE[br.alter_partition] if br.alive else 0))
    return (ctrl.leader, ctrl.leader_epoch, ctrl.isr, ctrl.elr, unfenced,
            state.ghost.next_id, 0, tuple(brokers), part[5])


def _records(log: tuple[int, ...], per: int) -> tuple[tuple[int, int], ...]:
    """A ``kafka`` log as (epoch, record id) pairs (a record's code is ``id * per + epoch``,
    ``isrlab.spec.kafka.codes.EpochCodec``)."""
    return tuple((r % per, r // per) for r in log)


def _unread(k: KRaftState, b: int) -> int:
    """The partition change records of the metadata log broker ``b`` has not published."""
    return sum(1 for batch in k.batches[max(0, k.applied[b]):] for r in batch if r[0] == PCR)


_KAFKA_PHASE = {ALTER_NONE: 0, ALTER_SENT: 1, ALTER_ACCEPTED: 2, ALTER_NEW_EPOCH: 2,
                ALTER_FENCED: 3, ALTER_INELIGIBLE: 3}
"""A leader's AlterPartition round trip: none, sent, accepted (``ALTER_NEW_EPOCH``: accepted
with the leader epoch bumped, ``kraft_epoch_bump=isr-shrink`` only), refused."""


def _phase(s: Abstract, b: int) -> int:
    """Broker ``b``'s AlterPartition round trip in a port state: its pending request on its
    way (1), an answer to it on its way back (2 accepted, 3 refused), or none (0)."""
    request = s[kl.P_PENDING_AP][b - 1][1]
    if not request or not KraftModel._pending(s, b):
        return 0
    for m in s[kl.MESSAGES]:
        if m == request:
            return 1
        if m[0] == kl.AP_RESP and (m[7] if m[1] == kl.ERR_NONE else m[2]) == request:
            return 2 if m[1] == kl.ERR_NONE else 3
    return 0


def _entries(log: tuple[tuple[int, int, int], ...]) -> tuple[tuple[int, int], ...]:
    """A port log (entries ``(epoch, offset, value)``, 1-based) as (epoch, record id) pairs,
    0-based: value ``v`` (A, B, ...) is the ``kafka`` model's record ``v - 1``, the
    ``v``-th produced."""
    return tuple((entry[0] - 1, entry[2] - 1) for entry in log)


def observe(tla: KraftModel, s: Abstract) -> Obs:
    """The same observation read off a port state."""
    con = s[kl.CON_PM]
    brokers = []
    for b in tla.brokers:
        status = s[kl.BROKER_STATE][b - 1][0]
        md = s[kl.P_MD][b - 1]
        log, hwm, _leo = s[kl.P_DATA][b - 1]
        running = status == kl.RUNNING
        leads = running and s[kl.P_STATUS][b - 1] == kl.LEADER
        if not running:
            brokers.append((0, -1, -1, _entries(log), hwm - 1, -1, -1, -1, -1, 0))
            continue
        brokers.append((
            int(running), md[3] - 1, md[4] - 1, _entries(log), hwm - 1,
            md[1] if leads else -1, md[2] if leads else -1, con[6] - md[5] if leads else -1,
            len(s[kl.CON_LOG]) - s[kl.BROKER_MD_LOG][b - 1] if leads else -1,
            _phase(s, b) if running else 0))
    requests = sum(1 for m in s[kl.MESSAGES] if m[0] == kl.FETCH_REQ)
    return (con[4] - 1, con[5] - 1, con[1], con[2], s[kl.CON_UNFENCED],
            bin(s[kl.INV_SENT]).count("1"), requests, tuple(brokers), observed(s))


# ---- which port steps a kafka step may take ----------------------------------------------
FETCH = ("SendFetchRequest", "ReceiveFetchRequest", "ReceiveFetchResponse",
         "SendAlterPartitionRequest")
"""A fetch round trip: the follower's request, the leader's handling, the response, and
the AlterPartition the leader may send on it (Kafka's ``maybeExpandIsr`` runs in the fetch)."""

ALPHABET: dict[str, tuple[tuple[str, bool], ...]] = {
    # kafka action: (port action, whether it is the kafka step's broker's (True) or any's)
    "Produce": (("WriteRecordToLeader", True),),
    "Fetch": (("SendFetchRequest", True), ("ReceiveFetchRequest", False),
              ("ReceiveFetchResponse", True), ("SendAlterPartitionRequest", False)),
    "Truncate": (("SendFetchRequest", True), ("ReceiveFetchRequest", False),
                 ("ReceiveFetchResponse", True)),
    "FencedFetch": (("SendFetchRequest", True), ("ReceiveFetchRequest", False),
                    ("ReceiveFetchResponse", True)),
    "Tick": (),
    "ShrinkIsr": (("SendAlterPartitionRequest", True),),
    "AlterPartition": (("ReceiveAlterPartitionRequest", True),),
    "AlterPartitionResponse": (("ReceiveAlterPartitionResponse", True),
                               ("SendAlterPartitionRequest", True)),
    "HandleCommit": (("ReceiveMetadataUpdate", True), ("SendAlterPartitionRequest", True)),
    "FenceBroker": (("FenceBroker", True),),
    "UnfenceBroker": (("UnfenceBroker", True),),
    "Crash": (),
    "PowerLoss": (),
    "Flush": (),
    "RegisterBroker": (("BrokerStart", True), ("ReceiveBrokerRegRequest", True),
                       ("ReceiveBrokerRegResponse", True), ("ReceiveMetadataUpdate", True)),
    "ControlledShutdown": (("FenceBroker", True), ("CleanShutdown", True)),
    "ShutdownNow": (("CleanShutdown", True),),
    "PreferredElection": (),
    "ReplaceDisk": (),
    "ControllerFailover": (),
}
"""The port actions each ``kafka`` action may be matched by (any number, up to ``k``)."""

CONTROLLED_SHUTDOWN = ("ControlledShutdown", "ShutdownNow")
"""The ``kafka`` steps of a controlled shutdown (``controlled_shutdown``), matched by the
spec's own actions, no gap step:

* ``ControlledShutdown(b)`` of a broker that still leads: ``processBrokerHeartbeat`` with
  ``wantShutDown`` goes to CONTROLLED_SHUTDOWN and ``handleBrokerInControlledShutdown``
  writes the in-controlled-shutdown record and ``b``'s removal from the ISR, a new leader
  where it led (``generateLeaderAndIsrUpdates`` with ``brokerToRemove``, the same builder
  call as ``handleBrokerFenced``).  From then on ``b`` is neither a leader candidate
  (``ClusterControlManager.isActive``: unfenced and not in controlled shutdown) nor ISR
  eligible (KIP-841, ``Partition.isReplicaIsrEligible``: ``!isBrokerShuttingDown``), while
  it keeps running and following.  That is what the spec's ``FenceBroker(b)`` does
  (``HandleBrokerFenced``: ``b`` out of ``con_unfenced`` and the ISR, an election from
  the ISR's members in ``con_unfenced``; the broker itself unchanged), so the observation counts a
  broker in controlled shutdown as fenced, and the step is ``FenceBroker``.
* ``ControlledShutdown(b)`` of a broker leading nothing, and ``ShutdownNow(b)`` once every
  active broker has replayed the batch: SHUTDOWN_NOW, ``handleBrokerFenced``'s records,
  and ``b`` stops cleanly (``BrokerServer.shutdown``: logs flushed, the clean-shutdown
  file with its broker epoch written).  That is the spec's ``CleanShutdown`` /
  ``NoDataLossShutdown`` (``b`` stops with its log, ``HandleBrokerFenced`` in the same
  step; KIP-966: the broker epoch kept on disk, the ``is_clean_shutdown = TRUE`` branch).

``tests/spec/kafka/test_kraft_refinement.py`` shows both parts needed: without
``FenceBroker`` in the alphabet, or with a broker in controlled shutdown observed as
unfenced, ``ControlledShutdown`` steps fail."""

FORCED = {"ReplaceDisk": "DiskReplacedWhileDown"}
"""The ``kafka`` steps matched by exactly one step, their gap step: each changes what the
observation does not show (a replaced disk loses the clean-shutdown file, so the next
registration is unclean, even when the log was already empty), so a stutter would track
port states the ``kafka`` state has left."""

_SPELLING = {"CleanShutdown": "NoDataLossShutdown", "UncleanShutdown": "DataLossShutdown"}
"""``tla-kraft-kip966``'s names of ``tla-kraft-3.5``'s shutdown actions."""

Step = tuple[str, int, Callable[[Abstract, int], list[Abstract]]]


@dataclass
class KraftRefinementResult(RefinementResult):
    """``RefinementResult``'s figures, the abstract side being the port (``tla-kraft-*``),
    and the random walks taken (``random_walks``; 0 for a complete check)."""

    walks: int = 0

    def summary(self) -> str:
        """One line of figures."""
        gaps = sum(self.gap_transitions.values())
        seen = (f"{self.walks:,} walks" if self.walks
                else f"{self.states:,} kafka states, {self.pairs:,} (kafka, port) pairs")
        return (f"{self.transitions:,} transitions checked, {seen}, "
                f"max {self.max_steps} port steps per "
                f"step {dict(sorted(self.steps_histogram.items()))}, {gaps:,} needed a gap "
                f"step {dict(sorted(self.gap_transitions.items()))} "
                f"{dict(sorted(self.gap_kinds.items()))}, {self.failed} failed "
                f"{dict(sorted(self.failed_kinds.items()))}")


class Matcher:
    """The port states within ``k`` steps of a tracked one whose observation is a target,
    the steps drawn from the ``kafka`` step's ``ALPHABET`` (and, with ``gaps``, the gap
    steps of ``isrlab.spec.kafka.kraft_refinement_gaps``)."""

    def __init__(self, kafka: KRaftModel, tla: KraftModel, k: int,
                 gaps: Iterable[str] = ()) -> None:
        self.kafka, self.tla, self.k, self.gaps = kafka, tla, k, tuple(gaps)
        self._actions = dict(tla.actions)
        self._balls: dict[tuple[Abstract, str, int, bool],
                          dict[Obs, tuple[int, list[Abstract], frozenset[str]]]] = {}

    def steps(self, label: str) -> tuple[str, int, list[Step]]:
        """The port actions (name, broker, function) a ``kafka`` step may be matched by,
        with the step's action and (0-based) broker."""
        step = parse(label)
        action, broker = step.action, step.broker
        alphabet = ALPHABET.get(action)
        if alphabet is None:
            raise ValueError(f"no port counterpart declared for the kafka step {label!r}")
        out: list[Step] = []
        for name, own in alphabet:
            fn = self._actions[_SPELLING.get(name, name) if self.tla.config.kip966 else name]
            targets = [broker + 1] if own and broker is not None else list(self.tla.brokers)
            out += [(name, b, fn) for b in targets]
        return action, -1 if broker is None else broker, out

    def ball(self, t: Abstract, label: str, gaps: bool) -> dict[
            Obs, tuple[int, list[Abstract], frozenset[str]]]:
        """Observation -> (fewest steps, the normalised states, gap steps used) within
        ``k`` steps of ``t`` by ``label``'s alphabet, with the gap steps too when ``gaps``
        (memoised; cleared when large)."""
        action, broker, steps = self.steps(label)
        key = (t, action, broker, gaps)
        found = self._balls.get(key)
        if found is not None:
            return found
        if len(self._balls) >= 1 << 14:
            self._balls.clear()
        enabled = self.gaps if gaps else ()

        def successors(u: Abstract) -> list[tuple[str, Abstract]]:
            succ = [("", v) for _name, b, fn in steps for v in _port_step(fn, u, b)]
            succ += gap_steps(self.tla, u, action, broker + 1, enabled)
            return [(name, normalised(stepped(u, v))) for name, v in succ]

        out = bounded_ball(t, self.k, lambda u: observe(self.tla, u), successors)
        self._balls[key] = out
        return out

    def match(self, ts: Iterable[Abstract], label: str,
              target: Obs) -> tuple[int, set[Abstract], frozenset[str]]:
        """The states matching ``target`` from any of ``ts``, the fewest steps (-1: none),
        the gap steps of the shortest match; the port's own steps first, the gap steps
        only when those find no match; a step of ``FORCED`` only by its gap step, once."""
        ts = list(ts)
        forced = FORCED.get(label.split("(")[0])
        if forced is not None:
            return self._forced(ts, label, target, forced)
        for gaps in (False, True) if self.gaps else (False,):
            best, found, names = -1, set[Abstract](), frozenset[str]()
            for t in ts:
                entry = self.ball(t, label, gaps).get(target)
                if entry is None:
                    continue
                found.update(entry[1])
                if best < 0 or entry[0] < best or (entry[0] == best
                                                   and len(entry[2]) < len(names)):
                    best, names = entry[0], entry[2]
            if best >= 0:
                return best, found, names
        return -1, set(), frozenset()


    def _forced(self, ts: list[Abstract], label: str, target: Obs,
                name: str) -> tuple[int, set[Abstract], frozenset[str]]:
        """``match`` for a step of ``FORCED``: the states its gap step ``name`` leads to from
        ``ts`` whose observation is ``target``."""
        if name not in self.gaps:
            return -1, set(), frozenset()
        action, broker, _steps = self.steps(label)
        found = {normalised(u) for t in ts
                 for _, u in (
                     (n, stepped(t, v))
                     for n, v in gap_steps(self.tla, t, action, broker + 1, (name,)))
                 if observe(self.tla, u) == target}
        return (1, found, frozenset((name,))) if found else (-1, set(), frozenset())


def _port_step(fn: Callable[[Abstract, int], list[Abstract]], u: Abstract,
               b: int) -> list[Abstract]:
    """The port states action ``fn`` of broker ``b`` leads to from ``u``; none where the
    spec's step stops with an evaluation error TLC would report (``SpecError``: with more
    than one value, ``WriteRecordToLeader`` committing its own record; the gap step
    ``LeaderAppendsWhereTheSpecStops`` is Kafka's step there)."""
    try:
        return fn(u, b)
    except SpecError:
        return []


def _record(result: KraftRefinementResult, steps: int, gap: frozenset[str],
            label: str) -> None:
    result.transitions += 1
    result.max_steps = max(result.max_steps, steps)
    result.steps_histogram[steps] = result.steps_histogram.get(steps, 0) + 1
    if gap:
        action = label.split("(")[0]
        result.gap_transitions[action] = result.gap_transitions.get(action, 0) + 1
        for name in sorted(gap):
            result.gap_kinds[name] = result.gap_kinds.get(name, 0) + 1


def _fail(result: KraftRefinementResult, kafka: KRaftModel, s: KafkaState, label: str,
          t: KafkaState) -> None:
    result.failed += 1
    kind = label.split("(")[0]
    result.failed_kinds[kind] = result.failed_kinds.get(kind, 0) + 1
    if result.failed_kinds[kind] == 1:
        result.failures.append(f"{label}: from {project(kafka, s)} to {project(kafka, t)}")


def initial_pairs(kafka: KRaftModel, tla: KraftModel) -> list[tuple[KafkaState,
                                                                    set[Abstract]]]:
    """Each ``kafka`` initial state with the port's initial states of its observation."""
    inits = {normalised(with_history(tla.unpack(p))) for p in tla.init_states()}
    out = []
    for s0 in kafka.init_states():
        ts = {t for t in inits if observe(tla, t) == project(kafka, s0)}
        out.append((s0, ts))
    return out


def check_refinement(kafka: KRaftModel, tla: KraftModel, k: int = 5,
                     gaps: Iterable[str] = (),
                     max_states: int | None = None) -> KraftRefinementResult:
    """Every transition (s, s') of ``kafka``'s complete state space: ``project(s')`` is
    reached from a port state tracked for ``s`` in 0..k steps of the step's alphabet.
    Breadth-first over ``kafka`` states, each expanded once with the port states tracked
    for it by then: those matching every ``kafka`` behaviour that reaches it by a shortest
    path (all its predecessors one level up are expanded before it), and any found
    earlier on longer ones.  Modelling shortcut: port states that reach a ``kafka`` state
    only after its expansion are kept but not followed (following them does not end: the
    port's bag of messages in flight keeps finding new combinations), so a transition is
    checked from the behaviours of its source's shortest paths, not of every path."""
    matcher = Matcher(kafka, tla, k, gaps)
    result = KraftRefinementResult()
    pairs: dict[KafkaState, set[Abstract]] = {}
    queue: list[KafkaState] = []
    for s0, ts in initial_pairs(kafka, tla):
        if not ts:
            result.failures.append(f"Init: {project(kafka, s0)} is no port initial state")
            result.failed += 1
            continue
        pairs[s0] = set(ts)
        queue.append(s0)
    head = 0
    while head < len(queue):
        s = queue[head]
        head += 1
        if max_states is not None and head > max_states:
            break
        for label, s2 in kafka.next_states(s):
            steps, ts, gap = matcher.match(pairs[s], label, project(kafka, s2))
            if steps < 0:
                _fail(result, kafka, s, label, s2)
                continue
            _record(result, steps, gap, label)
            known = pairs.get(s2)
            if known is None:
                pairs[s2] = set(ts)
                queue.append(s2)
            else:
                known |= ts  # s2 is expanded once, with the port states known by then
    result.states = len(pairs)
    result.pairs = sum(len(v) for v in pairs.values())
    return result


def random_walks(kafka: KRaftModel, tla: KraftModel, walks: int, length: int, seed: int,
                 k: int = 5, gaps: Iterable[str] = ()) -> KraftRefinementResult:
    """``walks`` behaviours of up to ``length`` steps of ``kafka`` drawn from
    ``random.Random(seed)``, each step matched as in ``check_refinement``; a walk ends at
    its first step without a match."""
    matcher = Matcher(kafka, tla, k, gaps)
    rng = random.Random(seed)
    result = KraftRefinementResult()
    inits = initial_pairs(kafka, tla)
    for _ in range(walks):
        result.walks += 1
        s, ts = inits[rng.randrange(len(inits))]
        for _ in range(length):
            succ = list(kafka.next_states(s))
            if not succ:
                break
            label, s2 = succ[rng.randrange(len(succ))]
            steps, ts2, gap = matcher.match(ts, label, project(kafka, s2))
            if steps < 0:
                _fail(result, kafka, s, label, s2)
                break
            _record(result, steps, gap, label)
            s, ts = s2, ts2
    return result
