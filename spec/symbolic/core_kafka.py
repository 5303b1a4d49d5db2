"""Z3 encodings of the ``core`` functions the ``kafka`` model calls, one broker's partition.

Each function here is a relation ``T(s, s')`` (a Z3 formula) between two ``BrokerState``s —
the encoded fields of one ``isrlab.core.state.Partition`` — or, for the controller's leader
selectors, between two ``ZkState``s (the ZooKeeper ``LeaderAndIsr``).  A call the Python
rejects with a ``Failure`` has no successor; a call it answers with a protocol error and the
partition unchanged (not the leader, not enough replicas, …) has ``s' = s``.

State of one broker (``n`` replicas, broker ids ``0 … n-1``, **broker 0 the local one**,
every broker assigned: AR = ``{0 … n-1}``, so ISR ⊆ AR holds by construction), all
unbounded Z3 Ints / Bools / arrays Int → Int:

* ``leader`` (``-1``: none), ``epoch`` (leader epoch), ``cepoch`` (controller epoch), ``zk``;
* ``isr[i]``; ``created`` (``log_created``);
* the local log: ``end`` (LEO) and arrays ``rid``, ``rep`` (record id and epoch per offset;
  cells at or past ``end`` are meaningless), ``hw``, ``start`` (log start offset);
* per follower ``i ≥ 1`` the leader's ``RemoteReplica``: ``rleo``, ``rstart``, ``caught``
  (``last_caught_up_time_ms``), ``lfleo``, ``lftime`` (the ``last_fetch_*`` fields).  A
  non-leader tracks no remotes: its remote fields are pinned to ``RemoteReplica``'s defaults.

Shortcuts: the AR order, open transactions and the ``is_new_leader`` / ``hw_incremented`` /
``isr_changed`` flags are not state; KAFKA-4485's rules (the ``kafka`` model's
``kafka_4485``, on by default) are the optional ``previous_fetch`` / ``hw_lag`` arguments
(``core``'s ``since_previous_fetch`` / ``hw_lag_ms``), off by default as in ``core``;
``read_from_local_log`` has no ``max_records``; a leader-epoch truncation reads the leader's
log as a parameter (``SymLog``), as ``core`` does.  Quantifiers over offsets (KIP-101's
"first offset of a larger epoch", KIP-279's "last offset where both logs agree", the start
of the leader's epoch) are ``ForAll`` with an existential witness from ``Witness`` when
``bound`` is ``None`` (proofs), and finite conjunctions over offsets ``< bound`` otherwise
(the bounded twin, exact for logs of at most ``bound`` records, used by the tests).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, fields, replace
from typing import Protocol, TypeAlias

import z3

from isrlab.spec.kafka.truncation_versions import TRUNCATION_VERSIONS
from isrlab.spec.symbolic.core_isr import (
    CaughtUp,
    LeaderState,
    counts_for_hw,
    expand_isr,
    increment_leader_hw,
    shrink_isr,
)

Int: TypeAlias = z3.ArithRef
Bool: TypeAlias = z3.BoolRef
Arr: TypeAlias = z3.ArrayRef

NO_LEADER = -1
ACKS = (0, 1, -1)
REMOTE_DEFAULTS = {"rleo": -1, "rstart": -1, "caught": 0, "lfleo": 0, "lftime": 0}
"""``RemoteReplica(broker_id)``'s field values: what a non-leader's remote fields hold."""


class Witness(Protocol):
    """A source of existentially quantified integers (``isrlab.checker.z3.Fresh`` is one)."""

    def int(self, name: str) -> z3.ArithRef: ...


@dataclass(frozen=True, slots=True)
class SymLog:
    """A log: its end offset and the record id and epoch at each offset."""

    end: Int
    rid: Arr
    rep: Arr


@dataclass(frozen=True, slots=True)
class BrokerState:
    """One broker's symbolic ``Partition`` (see the module docstring for each field).

    Remote fields are tuples indexed by broker id; index 0 (the local broker) is unused.
    """

    leader: Int
    epoch: Int
    cepoch: Int
    zk: Int
    hw: Int
    start: Int
    end: Int
    created: Bool
    rid: Arr
    rep: Arr
    isr: tuple[Bool, ...]
    rleo: tuple[Int, ...]
    rstart: tuple[Int, ...]
    caught: tuple[Int, ...]
    lfleo: tuple[Int, ...]
    lftime: tuple[Int, ...]

    @property
    def n(self) -> int:
        """The number of replicas."""
        return len(self.isr)

    @property
    def log(self) -> SymLog:
        """The local log."""
        return SymLog(self.end, self.rid, self.rep)


SCALARS = ("leader", "epoch", "cepoch", "zk", "hw", "start", "end")
REMOTES = ("rleo", "rstart", "caught", "lfleo", "lftime")


def broker_signature(n: int, prefix: str = "") -> list[tuple[str, z3.SortRef]]:
    """The names and sorts of a ``BrokerState``'s variables for ``n`` replicas."""
    ints, arr = z3.IntSort(), z3.ArraySort(z3.IntSort(), z3.IntSort())
    sig: list[tuple[str, z3.SortRef]] = [(prefix + f, ints) for f in SCALARS]
    sig += [(prefix + "created", z3.BoolSort()), (prefix + "rid", arr), (prefix + "rep", arr)]
    sig += [(f"{prefix}isr.{i}", z3.BoolSort()) for i in range(n)]
    sig += [(f"{prefix}{f}.{i}", ints) for f in REMOTES for i in range(1, n)]
    return sig


def broker_state(terms: Callable[[str], z3.ExprRef], n: int, prefix: str = "") -> BrokerState:
    """The ``BrokerState`` whose variables are ``terms(name)`` (names of ``broker_signature``)."""
    zero = z3.IntVal(0)

    def remote(f: str) -> tuple[Int, ...]:
        return (zero, *(_int(terms(f"{prefix}{f}.{i}")) for i in range(1, n)))

    def num(f: str) -> Int:
        return _int(terms(prefix + f))

    return BrokerState(
        num("leader"), num("epoch"), num("cepoch"), num("zk"), num("hw"), num("start"),
        num("end"), _bool(terms(prefix + "created")), _arr(terms(prefix + "rid")),
        _arr(terms(prefix + "rep")), tuple(_bool(terms(f"{prefix}isr.{i}")) for i in range(n)),
        remote("rleo"), remote("rstart"), remote("caught"), remote("lfleo"), remote("lftime"),
    )


def fresh_broker(n: int, name: str) -> BrokerState:
    """A ``BrokerState`` of fresh constants ``name.<field>``."""
    sorts = dict(broker_signature(n))
    return broker_state(lambda v: z3.Const(f"{name}.{v}", sorts[v]), n)


def _int(e: z3.ExprRef) -> Int:
    assert isinstance(e, z3.ArithRef)
    return e


def _bool(e: z3.ExprRef) -> Bool:
    assert isinstance(e, z3.BoolRef)
    return e


def _arr(e: z3.ExprRef) -> Arr:
    assert isinstance(e, z3.ArrayRef)
    return e


# ---------------------------------------------------------------------------------------
# Frames, well-formedness and small helpers
# ---------------------------------------------------------------------------------------


def unchanged(s: BrokerState, t: BrokerState, *changed: str) -> Bool:
    """Every field of ``t`` not named in ``changed`` equals the one of ``s``."""
    eqs: list[Bool] = []
    for f in fields(BrokerState):
        if f.name in changed:
            continue
        a, b = getattr(s, f.name), getattr(t, f.name)
        if isinstance(a, tuple):
            first = 1 if f.name in REMOTES else 0
            eqs += [a[i] == b[i] for i in range(first, len(a))]
        else:
            eqs.append(a == b)
    return z3.And(eqs)


def remotes_default(s: BrokerState) -> Bool:
    """Every remote field holds ``RemoteReplica``'s default (no remote is tracked)."""
    return z3.And([getattr(s, f)[i] == REMOTE_DEFAULTS[f]
                   for f in REMOTES for i in range(1, s.n)])


def is_leader(s: BrokerState) -> Bool:
    """``isrlab.core.state.is_leader``: the local broker (0) leads."""
    return s.leader == 0


def well_formed(s: BrokerState) -> Bool:
    """``isrlab.core.state.check_partition`` on the encoded fields.

    ``0 ≤ log start ≤ HW ≤ LEO``, controller epoch ≥ 0; a leader is in its ISR and its
    remote LEOs are ≥ -1; a non-leader tracks no remotes.
    """
    return z3.And(
        s.hw >= 0, s.start >= 0, s.cepoch >= 0, s.start <= s.hw, s.hw <= s.end,
        z3.If(is_leader(s),
              z3.And(s.isr[0], *[s.rleo[i] >= -1 for i in range(1, s.n)]),
              remotes_default(s)),
    )


def raised_hw(leo: Int, hw: Int, isr: Sequence[Bool], rleo: Sequence[Int],
              caught: Sequence[Int] = (), caught_up: CaughtUp = None) -> Int:
    """``raise_leader_hw``'s HW: ``max(hw, min LEO over isr)``, the leader (in isr) at ``leo``;
    with ``caught_up = (now, lag)`` (KAFKA-4485) also over the followers whose ``caught``
    time is within ``lag`` of ``now``."""
    low: Int = leo
    for i in range(1, len(isr)):
        member = isr[i] if caught_up is None else counts_for_hw(isr[i], caught[i], caught_up)
        low = z3.If(z3.And(member, rleo[i] < low), rleo[i], low)
    return z3.If(low > hw, low, hw)


def _caught_up(now: Int | None, hw_lag: Int | None) -> CaughtUp:
    return None if hw_lag is None or now is None else (now, hw_lag)


def forall_below(lo: Int, hi: Int, body: Callable[[Int], Bool], bound: int | None,
                 name: str = "o") -> Bool:
    """``∀ o ∈ [lo, hi): body(o)``: a quantifier, or a conjunction over ``o < bound``.

    The bounded form also demands ``hi ≤ bound`` so that it never claims more than it checks.
    """
    if bound is None:
        o = z3.Int(f"{name}!q")
        return z3.ForAll([o], z3.Implies(z3.And(lo <= o, o < hi), body(o)))
    cases = [z3.Implies(z3.And(lo <= k, k < hi), body(z3.IntVal(k))) for k in range(bound)]
    return z3.And(hi <= bound, *cases)


def _min(a: Int, b: Int) -> Int:
    return z3.If(a <= b, a, b)


def _max(a: Int, b: Int) -> Int:
    return z3.If(a >= b, a, b)


def count(bools: Sequence[Bool]) -> Int:
    """How many of ``bools`` are true."""
    return z3.Sum([z3.If(b, 1, 0) for b in bools])


# ---------------------------------------------------------------------------------------
# makeLeader / makeFollower and their truncation rules
# ---------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Request:
    """The fields of a LeaderAndIsr ``PartitionState`` (AR is every broker; leader apart)."""

    cepoch: Int
    epoch: Int
    isr: tuple[Bool, ...]
    zk: Int


def request_well_formed(req: Request, leader: int) -> Bool:
    """``check_partition_state`` for a request naming broker ``leader`` (not ``NO_LEADER``)."""
    return z3.And(req.cepoch >= 0, req.epoch >= 0, req.zk >= 0, req.isr[leader])


def fenced(s: BrokerState, req: Request) -> Bool:
    """``become_leader_or_follower``'s acceptance of a request for this partition.

    The leader epoch must be newer than the partition's (``_accepted_states``) and the
    controller epoch not older (``become_leader_or_follower`` compares it with the broker's
    controller epoch, which is at least the partition's: this projection accepts a superset
    of what the broker accepts, so a property proved with it holds for the broker).
    """
    return z3.And(req.epoch > s.epoch, req.cepoch >= s.cepoch)


def become_leader(s: BrokerState, t: BrokerState, req: Request, now: Int,
                  hw_lag: Int | None = None) -> Bool:
    """``become_leader_or_follower`` with one partition state naming broker 0 the leader.

    Malformed request or state, negative ``now``: no successor.  A request not accepted
    (``fenced``): the partition is unchanged.  Else ``make_leader``.
    """
    return z3.And(now >= 0, request_well_formed(req, 0), well_formed(s),
                  z3.If(fenced(s, req), make_leader(s, t, req, now, hw_lag), unchanged(s, t)))


def make_leader(s: BrokerState, t: BrokerState, req: Request, now: Int,
                hw_lag: Int | None = None) -> Bool:
    """``isrlab.core.partition.make_leader(p, state(leader=0), now)``.

    Adopts the request's epochs, ISR; every remote's caught-up time is ``now`` if in the
    ISR else 0, its last fetch (LEO, ``now``); a new leader (``leader ≠ 0`` before) forgets
    every remote LEO, log start and last fetch (-1, ``UnknownLogReadResult``).  Then the
    HW is raised over the new ISR (with ``hw_lag``, KAFKA-4485: and the followers caught
    up within it).  No fencing (the caller's, see ``fenced``).
    """
    new = z3.Not(is_leader(s))
    rleo = tuple(z3.If(new, z3.IntVal(-1), s.rleo[i]) if i else s.rleo[0] for i in range(s.n))
    rstart = tuple(z3.If(new, z3.IntVal(-1), s.rstart[i]) if i else s.rstart[0]
                   for i in range(s.n))
    caught = tuple(z3.If(req.isr[i], now, 0) if i else s.caught[0] for i in range(s.n))
    remotes = [z3.And(t.rleo[i] == rleo[i], t.rstart[i] == rstart[i],
                      t.caught[i] == caught[i],
                      t.lfleo[i] == z3.If(new, -1, s.end),
                      t.lftime[i] == z3.If(new, -1, now)) for i in range(1, s.n)]
    return z3.And(
        now >= 0, request_well_formed(req, 0), well_formed(s),
        unchanged(s, t, "leader", "epoch", "cepoch", "zk", "isr", "created", "hw", *REMOTES),
        t.leader == 0, t.epoch == req.epoch, t.cepoch == req.cepoch, t.zk == req.zk,
        z3.And([t.isr[i] == req.isr[i] for i in range(s.n)]), t.created, *remotes,
        t.hw == raised_hw(s.end, s.hw, req.isr, rleo, caught, _caught_up(now, hw_lag)),
        *([] if hw_lag is None else [hw_lag >= 0]),
    )


TruncationRule = Callable[[BrokerState, SymLog, Witness, int | None], tuple[Int, Bool]]
"""A symbolic truncation rule: ``(follower, leader log, witness, bound) -> (offset, side)``.

``offset`` is the rule's answer before clamping; ``side`` constrains the witnesses it uses.
"""


def truncate_to_hw_rule(s: BrokerState, leader_log: SymLog, w: Witness,
                        bound: int | None) -> tuple[Int, Bool]:
    """``isrlab.core.partition.truncate_to_high_watermark``: the follower's own HW."""
    return s.hw, z3.BoolVal(True)


def kip101_rule(s: BrokerState, leader_log: SymLog, w: Witness,
                bound: int | None) -> tuple[Int, Bool]:
    """``isrlab.core.partition.truncate_by_leader_epoch_kip101`` (Kafka 0.11's
    OffsetForLeaderEpoch).

    Empty follower: 0.  Else with ``e`` its last record's epoch: the leader's LEO if the
    leader's last epoch is ``e``, else the first leader offset of an epoch ``> e`` (witness
    ``first``), else (empty leader, no larger epoch, or ``e`` older than the leader's first
    epoch: ``UNDEFINED_EPOCH_OFFSET``) the follower's HW.
    """
    e = s.rep[s.end - 1]
    lead = leader_log
    first = w.int("kip101.first")
    none = forall_below(z3.IntVal(0), lead.end, lambda o: lead.rep[o] <= e, bound)
    found = z3.And(first >= 0, first < lead.end, lead.rep[first] > e,
                   forall_below(z3.IntVal(0), first, lambda o: lead.rep[o] <= e, bound))
    answer = z3.If(s.end == 0, 0, z3.If(lead.end == 0, s.hw, z3.If(
        lead.rep[lead.end - 1] == e, lead.end, z3.If(
            z3.Or(none, e < lead.rep[0]), s.hw, first))))
    return answer, z3.Implies(z3.Not(none), found)


def kip279_rule(s: BrokerState, leader_log: SymLog, w: Witness,
                bound: int | None) -> tuple[Int, Bool]:
    """``isrlab.core.truncation.kip279_truncation_offset``: one past the last offset both logs
    agree.

    The witness ``k`` is that offset + 1 (0 if none): ``k - 1`` agrees (or ``k = 0``) and no
    offset in ``[k, min(LEOs))`` does.  An empty leader: 0.
    """
    lead = leader_log
    k = w.int("kip279.k")
    m = _min(lead.end, s.end)

    def agree(o: Int) -> Bool:
        return z3.And(lead.rid[o] == s.rid[o], lead.rep[o] == s.rep[o])

    side = z3.And(k >= 0, k <= m, z3.Or(k == 0, agree(k - 1)),
                  forall_below(k, m, lambda o: z3.Not(agree(o)), bound))
    return z3.If(lead.end == 0, 0, k), side


def kip279_2_0_rule(s: BrokerState, leader_log: SymLog, w: Witness,
                    bound: int | None) -> tuple[Int, Bool]:
    """``isrlab.core.partition.truncate_by_leader_epoch_kip279_2_0``: Kafka 2.0's KIP-279.

    Empty follower: 0.  An empty leader, or the follower's last epoch ``e`` outside the
    leader's ``[first epoch, last epoch]`` (``UNDEFINED_EPOCH_OFFSET``): the follower's HW.
    Else ``kip279_rule``.
    """
    e = s.rep[s.end - 1]
    lead = leader_log
    answer, side = kip279_rule(s, leader_log, w, bound)
    undefined = z3.Or(lead.end == 0, e < lead.rep[0], e > lead.rep[lead.end - 1])
    return z3.If(s.end == 0, 0, z3.If(undefined, s.hw, answer)), side


_BY_NAME: dict[str, TruncationRule] = {
    "truncate-to-hw": truncate_to_hw_rule, "kip101": kip101_rule,
    "kip279-2.0": kip279_2_0_rule, "kip279": kip279_rule,
}
RULES: dict[str, TruncationRule] = {t.name: _BY_NAME[t.name] for t in TRUNCATION_VERSIONS}
"""The symbolic truncation rules by name, one per entry of
``isrlab.spec.kafka.truncation_versions.TRUNCATION_VERSIONS`` (in its order; a version
without its rule above fails at import)."""


def make_follower(s: BrokerState, t: BrokerState, req: Request, leader: int, rule: str,
                  leader_log: SymLog, w: Witness, bound: int | None = None) -> Bool:
    """``isrlab.core.partition.make_follower(p, state(leader), RULES[rule], leader_log)``, leader ≥
    1.

    Adopts the epochs and the leader, clears the ISR and the remotes.  When the leader
    changed the log is cut at the rule's offset clamped to ``[0, LEO]``; the HW and log
    start are capped by it.  ``leader`` not another broker: no successor.
    """
    if not 1 <= leader < s.n:
        return z3.BoolVal(False)
    offset, side = RULES[rule](s, leader_log, w, bound)
    cut = _min(_max(offset, z3.IntVal(0)), s.end)
    changed = s.leader != leader
    new_end = z3.If(changed, cut, s.end)
    return z3.And(
        request_well_formed(req, leader), well_formed(s), side,
        unchanged(s, t, "leader", "epoch", "cepoch", "zk", "isr", "created", "end", "hw",
                  "start", *REMOTES),
        t.leader == leader, t.epoch == req.epoch, t.cepoch == req.cepoch, t.zk == req.zk,
        z3.And([z3.Not(b) for b in t.isr]), t.created, remotes_default(t),
        t.end == new_end, t.hw == _min(s.hw, new_end), t.start == _min(s.start, new_end),
    )


def become_follower(s: BrokerState, t: BrokerState, req: Request, leader: int, rule: str,
                    leader_log: SymLog, w: Witness, now: Int, bound: int | None = None
                    ) -> Bool:
    """``become_leader_or_follower`` with one partition state naming ``leader ≥ 1`` (alive).

    As ``become_leader``, with ``make_follower`` for an accepted request.  Shortcut: the
    new leader is alive (a dead one only gets the log created).
    """
    if not 1 <= leader < s.n:
        return z3.BoolVal(False)
    step = make_follower(s, t, req, leader, rule, leader_log, w, bound)
    return z3.And(now >= 0, request_well_formed(req, leader), well_formed(s),
                  z3.If(fenced(s, req), step, unchanged(s, t)))


def committed_prefix(s: BrokerState, leader_log: SymLog, bound: int | None) -> Bool:
    """The leader's log holds the follower's records below the follower's HW (the
    follower's committed prefix): ``LEO_L ≥ HW`` and the same record at every offset
    ``< HW``.  A cross-broker fact (log matching below the HW), not a state invariant of
    one broker."""
    def same(o: Int) -> Bool:
        return z3.And(leader_log.rid[o] == s.rid[o], leader_log.rep[o] == s.rep[o])

    return z3.And(leader_log.end >= s.hw,
                  forall_below(z3.IntVal(0), s.hw, same, bound, "prefix"))


def leader_log_well_formed(log: SymLog) -> Bool:
    """A leader's log as a parameter: a non-negative end (its cells are arbitrary)."""
    return log.end >= 0


# ---------------------------------------------------------------------------------------
# Produce and fetch
# ---------------------------------------------------------------------------------------


def _appended(s: BrokerState, ids: Sequence[Int], epochs: Sequence[Int]
              ) -> tuple[Int, Arr, Arr]:
    rid, rep = s.rid, s.rep
    for k, (i, e) in enumerate(zip(ids, epochs, strict=True)):
        rid, rep = z3.Store(rid, s.end + k, i), z3.Store(rep, s.end + k, e)
    return s.end + len(ids), rid, rep


def append_as_leader(s: BrokerState, t: BrokerState, ids: Sequence[Int], acks: int,
                     min_isr: Int, now: Int | None = None, hw_lag: Int | None = None) -> Bool:
    """``isrlab.core.produce.append_records_to_leader(p, ids, acks, min_isr)`` (not transactional).

    Bad acks or ``min_isr < 1``: no successor.  Not the leader, or acks=all with fewer than
    ``min_isr`` in the ISR: unchanged.  Otherwise the records get the leader epoch and the
    HW is raised (an ISR of one commits at once; ``now``/``hw_lag``: KAFKA-4485's rule).
    """
    if acks not in ACKS:
        return z3.BoolVal(False)
    end, rid, rep = _appended(s, ids, [s.epoch] * len(ids))
    refused = z3.Not(is_leader(s))
    if acks == -1:
        refused = z3.Or(refused, count(s.isr) < min_isr)
    grows = z3.And(unchanged(s, t, "end", "rid", "rep", "hw"), t.end == end, t.rid == rid,
                   t.rep == rep, t.hw == raised_hw(end, s.hw, s.isr, s.rleo, s.caught,
                                                   _caught_up(now, hw_lag)))
    guard = [] if hw_lag is None or now is None else [now >= 0, hw_lag >= 0]
    return z3.And(min_isr >= 1, well_formed(s), *guard,
                  z3.If(refused, unchanged(s, t), grows))


def epoch_start_is(s: BrokerState, x: Int, bound: int | None) -> Bool:
    """``x`` is ``isrlab.core.isr.leader_epoch_start_offset(p)``: the first offset whose record's
    epoch is ≥ the leader epoch, else the LEO."""
    def before(o: Int) -> Bool:
        return s.rep[o] < s.epoch

    at = z3.And(x >= 0, x < s.end, s.rep[x] >= s.epoch)
    return z3.And(forall_below(z3.IntVal(0), x, before, bound, "es"),
                  z3.Or(at, z3.And(x == s.end, forall_below(z3.IntVal(0), s.end, before,
                                                             bound, "es2"))))


def _leader_state(s: BrokerState) -> LeaderState:
    return LeaderState(s.end, s.hw, s.isr, s.rleo, s.caught)


def follower_fetch_on_leader(s: BrokerState, t: BrokerState, j: int, fetch_offset: Int,
                             follower_start: Int, now: Int,
                             epoch_start: Int | None = None, previous_fetch: bool = False,
                             hw_lag: Int | None = None) -> Bool:
    """``read_from_local_log`` then ``update_follower_fetch`` for follower ``j``.

    Negative offset/time or ``j`` not a follower: no successor.  Not the leader: unchanged.
    Else the remote of ``j`` records the fetch (LEO := fetch offset, caught up at ``now`` if
    it reached the LEO) or, for an offset outside ``[log start, LEO]`` (a failed read), an
    unknown LEO, log start and last fetch (-1); then ``maybe_expand_isr(j, epoch_start)``
    and the HW raise — the ``core_isr`` relation.  ``previous_fetch`` (KAFKA-4485): a
    fetch reaching the LEO of the previous fetch dates the catch-up to that fetch;
    ``hw_lag``: the HW also waits for followers caught up within it (at ``now``, or at -1
    for a failed read, Kafka's ``fetchTimeMs``).
    """
    if not 1 <= j < s.n:
        return z3.BoolVal(False)
    ok = z3.And(s.start <= fetch_offset, fetch_offset <= s.end)
    caught = z3.If(z3.And(fetch_offset >= s.end, now > s.caught[j]), now, s.caught[j])
    if previous_fetch:
        caught = z3.If(z3.And(fetch_offset < s.end, fetch_offset >= s.lfleo[j]),
                       _max(s.caught[j], s.lftime[j]), caught)
    unknown = z3.IntVal(-1)
    mid = replace(s, rleo=_put(s.rleo, j, z3.If(ok, fetch_offset, unknown)),
                  rstart=_put(s.rstart, j, z3.If(ok, follower_start, unknown)),
                  caught=_put(s.caught, j, z3.If(ok, caught, s.caught[j])),
                  lfleo=_put(s.lfleo, j, z3.If(ok, s.end, unknown)),
                  lftime=_put(s.lftime, j, z3.If(ok, now, unknown)))
    at = z3.If(ok, now, z3.IntVal(-1))
    update = z3.And(
        expand_isr(_leader_state(mid), _leader_state(t), j, epoch_start, _caught_up(at, hw_lag)),
        unchanged(mid, t, "isr", "hw", "rleo", "caught", "zk"), zk_bumped(s, t),
    )
    guard = [] if hw_lag is None else [hw_lag >= 0]
    return z3.And(fetch_offset >= 0, now >= 0, well_formed(s), *guard,
                  z3.If(is_leader(s), update, unchanged(s, t)))


def _put(xs: tuple[Int, ...], j: int, x: Int) -> tuple[Int, ...]:
    return tuple(x if i == j else v for i, v in enumerate(xs))


def process_partition_data(s: BrokerState, t: BrokerState, fetch_offset: Int,
                           ids: Sequence[Int], epochs: Sequence[Int], leader_hw: Int,
                           leader_start: Int) -> Bool:
    """``isrlab.core.produce.process_partition_data``: a follower appends fetched records.

    Negative leader HW/start, a leader, or a fetch offset other than the LEO: no
    successor.  Else HW := min(leader HW, new LEO) — it may go *down* — and the log start
    follows the leader's, capped by the new HW.
    """
    end, rid, rep = _appended(s, ids, epochs)
    hw = _min(leader_hw, end)
    return z3.And(
        leader_hw >= 0, leader_start >= 0, well_formed(s), z3.Not(is_leader(s)),
        fetch_offset == s.end,
        unchanged(s, t, "end", "rid", "rep", "hw", "start"), t.end == end, t.rid == rid,
        t.rep == rep, t.hw == hw, t.start == _min(_max(s.start, leader_start), hw),
    )


# ---------------------------------------------------------------------------------------
# The leader-side ISR steps of core_isr, lifted to a broker state
# ---------------------------------------------------------------------------------------


def zk_bumped(s: BrokerState, t: BrokerState) -> Bool:
    """``_update_isr``'s conditional ZooKeeper write: the version grows by one iff the ISR
    changed."""
    changed = z3.Or([s.isr[i] != t.isr[i] for i in range(s.n)])
    return t.zk == s.zk + z3.If(changed, 1, 0)


def _on_leader(s: BrokerState, t: BrokerState, step: Bool) -> Bool:
    """A leader-side ``core_isr`` step; a non-leader answers NOT_LEADER, unchanged."""
    return z3.And(well_formed(s), z3.If(
        is_leader(s),
        z3.And(step, unchanged(s, t, "hw", "isr", "rleo", "caught", "zk"), zk_bumped(s, t)),
        unchanged(s, t)))


def _time_guard(now: Int | None, hw_lag: Int | None) -> list[Bool]:
    """``core``'s rejection of a negative time or lag, for the arguments given."""
    return [x >= 0 for x in (now, hw_lag) if x is not None]


def increment_hw(s: BrokerState, t: BrokerState, now: Int | None = None,
                 hw_lag: Int | None = None) -> Bool:
    """``isrlab.core.partition.maybe_increment_leader_hw(p, now, hw_lag)``
    (``core_isr.increment_leader_hw``)."""
    step = increment_leader_hw(_leader_state(s), _leader_state(t), _caught_up(now, hw_lag))
    return z3.And(*_time_guard(now, hw_lag), _on_leader(s, t, step))


def shrink(s: BrokerState, t: BrokerState, now: Int, lag: Int, kafka_4485: bool = False,
           kafka_7152: bool = False) -> Bool:
    """``isrlab.core.isr.maybe_shrink_isr(p, now, lag, kafka_4485, kafka_7152)``
    (``core_isr.shrink_isr``)."""
    return z3.And(now >= 0, lag >= 0, _on_leader(
        s, t, shrink_isr(_leader_state(s), _leader_state(t), now, lag, kafka_4485,
                         kafka_7152)))


def expand(s: BrokerState, t: BrokerState, j: int, epoch_start: Int | None = None,
           now: Int | None = None, hw_lag: Int | None = None) -> Bool:
    """``isrlab.core.isr.maybe_expand_isr(p, j, epoch_start, now, hw_lag)``
    (``core_isr.expand_isr``)."""
    if not 1 <= j < s.n:
        return z3.BoolVal(False)
    step = expand_isr(_leader_state(s), _leader_state(t), j, epoch_start,
                      _caught_up(now, hw_lag))
    return z3.And(*_time_guard(now, hw_lag), _on_leader(s, t, step))


# ---------------------------------------------------------------------------------------
# The controller's leader selectors, on the ZooKeeper LeaderAndIsr
# ---------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class ZkState:
    """A symbolic ``LeaderAndIsr`` (ISR as a set: its list order is not state)."""

    leader: Int
    epoch: Int
    isr: tuple[Bool, ...]
    zk: Int


def zk_signature(n: int, prefix: str = "z") -> list[tuple[str, z3.SortRef]]:
    """The names and sorts of a ``ZkState``'s variables."""
    ints = z3.IntSort()
    return ([(f"{prefix}.leader", ints), (f"{prefix}.epoch", ints), (f"{prefix}.zk", ints)]
            + [(f"{prefix}.isr.{i}", z3.BoolSort()) for i in range(n)])


def zk_state(terms: Callable[[str], z3.ExprRef], n: int, prefix: str = "z") -> ZkState:
    """The ``ZkState`` whose variables are ``terms(name)``."""
    return ZkState(_int(terms(f"{prefix}.leader")), _int(terms(f"{prefix}.epoch")),
                   tuple(_bool(terms(f"{prefix}.isr.{i}")) for i in range(n)),
                   _int(terms(f"{prefix}.zk")))


def fresh_zk(n: int, name: str) -> ZkState:
    """A ``ZkState`` of fresh constants."""
    sorts = dict(zk_signature(n))
    return zk_state(lambda v: z3.Const(f"{name}.{v}", sorts[v]), n)


def _first(order: Sequence[int], ok: Callable[[int], Bool]) -> tuple[Bool, Int]:
    """Whether some ``r`` in ``order`` has ``ok(r)``, and the first such ``r`` (Kafka's head)."""
    pick: Int = z3.IntVal(NO_LEADER)
    for r in reversed(order):
        pick = z3.If(ok(r), z3.IntVal(r), pick)
    return z3.Or([ok(r) for r in order]), pick


def _elect(cur: ZkState, new: ZkState, leader: Int, isr: Sequence[Bool]) -> Bool:
    return z3.And(new.leader == leader, new.epoch == cur.epoch + 1, new.zk == cur.zk + 1,
                  *[new.isr[i] == isr[i] for i in range(len(cur.isr))])


def _zk_checked(cur: ZkState) -> Bool:
    return z3.And(cur.epoch >= 0, cur.zk >= 0)


def offline_selector(cur: ZkState, new: ZkState, ar: Sequence[int], live: Sequence[Bool],
                     unclean: bool) -> Bool:
    """``isrlab.core.selectors.offline_partition_leader_selector`` (AR order ``ar``).

    Live ISR members: the first in AR order leads, ISR = the live ISR.  None: without
    unclean election no successor; with it the first live replica leads alone (none: no
    successor).
    """
    live_isr = [z3.And(cur.isr[i], live[i]) for i in range(len(cur.isr))]
    some, leader = _first(ar, lambda r: live_isr[r])
    clean = z3.And(some, _elect(cur, new, leader, live_isr))
    if not unclean:
        return z3.And(_zk_checked(cur), clean)
    any_live, first_live = _first(ar, lambda r: live[r])
    alone = [first_live == i for i in range(len(cur.isr))]
    return z3.And(_zk_checked(cur), z3.If(
        some, clean, z3.And(any_live, _elect(cur, new, first_live, alone))))


def reassigned_selector(cur: ZkState, new: ZkState, reassigned: Sequence[int],
                        live: Sequence[Bool]) -> Bool:
    """``isrlab.core.selectors.reassigned_partition_leader_selector``: the first reassigned replica
    alive and in the ISR leads, ISR unchanged; none: no successor."""
    some, leader = _first(reassigned, lambda r: z3.And(live[r], cur.isr[r]))
    return z3.And(_zk_checked(cur), some, _elect(cur, new, leader, cur.isr))


def controlled_shutdown_selector(cur: ZkState, new: ZkState, ar: Sequence[int],
                                 live_or_shutting: Sequence[Bool],
                                 shutting: Sequence[Bool]) -> Bool:
    """``isrlab.core.selectors.controlled_shutdown_leader_selector``: ISR minus the brokers shutting
    down; the first live (or shutting-down) replica of AR in it leads; none: no successor."""
    isr = [z3.And(cur.isr[i], z3.Not(shutting[i])) for i in range(len(cur.isr))]
    some, leader = _first(ar, lambda r: z3.And(live_or_shutting[r], isr[r]))
    return z3.And(_zk_checked(cur), some, _elect(cur, new, leader, isr))


def preferred_selector(cur: ZkState, new: ZkState, ar: Sequence[int],
                       live: Sequence[Bool]) -> Bool:
    """``isrlab.core.selectors.preferred_replica_partition_leader_selector``: AR's first replica
    leads (ISR unchanged) if it is alive, in the ISR and not already the leader."""
    p = ar[0]
    return z3.And(_zk_checked(cur), cur.leader != p, live[p], cur.isr[p],
                  _elect(cur, new, z3.IntVal(p), cur.isr))
