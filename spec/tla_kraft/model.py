"""The KRaft-era replication specifications of Vanlightly/kafka-tlaplus, state for state.

Modules ported: ``kafka_replication_v3_5`` (Kafka 3.5 with a KRaft controller) and
``kafka_replication_kip_966`` (the same with KIP-966's Eligible Leader Replicas), at the
commit named in docs/tla-models.md.  Every disjunct of ``Next`` is a method below with the
spec's action name; TLC's successor semantics are kept exactly (one successor per binding of
every ``\\E`` and per true disjunct of an action-level ``\\/``; the first true arm of an
action-level CASE), so that distinct and generated counts agree with TLC 2.15.

A state is a tuple of the spec's 23 variables (index constants below), each of plain
immutable values: broker sets are bit masks (broker ``b`` is bit ``b - 1``), per-broker
functions are tuples indexed ``b - 1``, the message bag is a sorted tuple of message tuples,
records are tuples.  Modelling shortcut: ``broker_metadata_log[b]`` is kept as its length,
since a broker's copy is always a prefix of the controller's log (it only ever copies
``SubSeq(con_metadata_log, 1, k)``), so the length determines it.  The actions and
invariants work on these tuples; the checker holds states packed into ``bytes``
(``KraftModel.pack``: a pickle, protocol 2, written without its memo, so with no
back-references and equal states pack equal; small ints take 2 bytes), their own encoding.

TLC's ``VIEW view`` (both cfgs) is ``view``: every variable but ``messages_discard``,
``aux_broker_epoch``, ``aux_ctrs`` and ``aux_flo``.
"""

from __future__ import annotations

from bisect import insort
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pickle import loads as _loads
from typing import Any

from isrlab.checker.model import EvaluationError, Liveness, Property
from isrlab.spec.tla_kraft.layout import (
    _REST_PART,
    _VIEW_PART,
    AP_REQ,
    AP_RESP,
    AUX_BROKER_EPOCH,
    AUX_CTRS,
    AUX_FLO,
    BLANK_FETCH,
    BLANK_MD,
    BLANK_REPLICA_STATE,
    BROKER_FETCHERS,
    BROKER_MD_LOG,
    BROKER_STATE,
    C_CLEAN,
    C_FENCE,
    C_INCARN,
    C_REASSIGN,
    C_SHRINK,
    C_UNCLEAN,
    CON_BROKER_REG,
    CON_LOG,
    CON_PM,
    CON_UNFENCED,
    ERR_FENCED_LEADER_EPOCH,
    ERR_INELIGIBLE_REPLICA,
    ERR_NONE,
    ERR_NOT_LEADER_OR_FOLLOWER,
    ERR_UNKNOWN_LEADER_EPOCH,
    FAIR_ACTIONS,
    FENCED,
    FETCH_REQ,
    FETCH_RESP,
    FOLLOWER,
    INT_MAX,
    INV_CONSUMED,
    INV_NEG_ACKED,
    INV_POS_ACKED,
    INV_SENT,
    INV_TRUE_HWM,
    INVARIANTS_KIP966,
    INVARIANTS_V35,
    LEADER,
    MESSAGES,
    MESSAGES_DISCARD,
    NIL,
    NO_LEADER,
    OFFLINE_CLEAN,
    OFFLINE_DIRTY,
    P_DATA,
    P_LESO,
    P_MD,
    P_PENDING_AP,
    P_REPLICA_STATE,
    P_STATUS,
    REG_REQ,
    REG_RESP,
    ROLE_NAMES,
    ROLE_NIL,
    RUNNING,
    STARTING,
    STATUS_NAMES,
    UNFENCED,
    VALUE_NAMES,
    VARIABLES,
    Draft,
    Packed,
    State,
    _dumps,
)
from isrlab.spec.tla_kraft.liveness import kraft_liveness


class SpecError(EvaluationError):
    """An evaluation TLC would reject (an index outside a sequence, Nil compared with a
    number): the spec's own "this should not happen" cases.  ``next_states`` names the
    action it was raised in; the checker reports it as TLC does, with the trace."""


def _bit(b: int) -> int:
    return 1 << (b - 1)


def _has(mask: int, b: int) -> bool:
    return b > 0 and bool(mask >> (b - 1) & 1)


def _card(mask: int) -> int:
    return bin(mask).count("1")


def _set(t: tuple[Any, ...], b: int, value: Any) -> tuple[Any, ...]:
    """``[t EXCEPT ![b] = value]`` for a per-broker tuple."""
    return (*t[:b - 1], value, *t[b:])


def _sub_seq(seq: tuple[Any, ...], m: int, n: int) -> tuple[Any, ...]:
    """``SubSeq(seq, m, n)`` with TLC's bounds check."""
    if m > n:
        return ()
    if m < 1 or n > len(seq):
        raise SpecError(f"SubSeq({len(seq)} elements, {m}, {n}) out of range")
    return seq[m - 1:n]


def _add_msg(msgs: tuple[Any, ...], m: Any) -> tuple[Any, ...]:
    if m in msgs:
        return msgs
    out = list(msgs)
    insort(out, m)
    return tuple(out)


def _remove_msg(msgs: tuple[Any, ...], m: Any) -> tuple[Any, ...]:
    return tuple(x for x in msgs if x != m)


@dataclass(frozen=True, slots=True)
class KraftConfig:
    """The constants of either module, the invariants checked, the CHECK switches and VIEW.

    ``clean_limit`` / ``unclean_limit`` are CleanShutdownLimit / UncleanShutdownLimit (v3.5)
    or NoDataLossShutdownLimit / DataLossShutdownLimit (kip-966).  Each ``*_check`` (and
    ``hw_min_isr_gate``) is one mechanism of the spec marked ``\\* CHECK`` (or, for the
    gate, KIP-966's SafeToAdvanceHwm); ``False`` removes it, a fault for research.
    ``unfair`` names actions of ``FAIR_ACTIONS`` whose weak fairness ``liveness()`` drops.
    ``values`` is the size of the constant ``Values``: the values 1..``values`` (A, B, ...),
    each written once by ``WriteRecordToLeader``; the cfgs' ``Values = {A}`` is 1.
    """

    kip966: bool
    brokers: int = 2
    replication_factor: int = 2
    min_isr: int = 1
    init_isr_size: int = 2
    clean_limit: int = 0
    unclean_limit: int = 0
    fence_broker_limit: int = 0
    leader_shrink_isr_limit: int = 0
    reassignment_limit: int = 0
    avoid_last_replica_standing: bool = True
    invariants: tuple[str, ...] = INVARIANTS_V35
    view: bool = True
    incarnation_check: bool = True
    fetcher_epoch_check: bool = True
    reset_follower_state: bool = True
    isr_fetched_check: bool = True
    isr_hwm_check: bool = True
    isr_leso_check: bool = True
    fetch_response_check: bool = True
    kip903_check: bool = True
    partition_epoch_check: bool = True
    hw_min_isr_gate: bool = True
    unfair: tuple[str, ...] = ()
    values: int = 1


class KraftModel:
    """Vanlightly's kafka_replication_v3_5 or kafka_replication_kip_966 module."""

    identity_encoding = True
    """States are packed ``bytes``, their own encoding (``pack`` / ``unpack``)."""
    has_boundary = False

    def __init__(self, config: KraftConfig) -> None:
        c = config
        if not 1 <= c.brokers <= 8:
            raise ValueError(f"brokers must be 1 to 8, got {c.brokers}")
        if not c.replication_factor <= c.brokers:
            raise ValueError("ASSUME InitReplicationFactor <= BrokerCount fails")
        if not c.min_isr <= c.init_isr_size <= c.replication_factor:
            raise ValueError("ASSUME MinISR <= InitIsrSize <= InitReplicationFactor fails")
        if c.init_isr_size < 1:
            raise ValueError("init_isr_size must be at least 1 (broker 1 leads the ISR)")
        if not 1 <= c.values <= len(VALUE_NAMES):
            raise ValueError(f"values must be 1 to {len(VALUE_NAMES)}, got {c.values}")
        self.config = c
        self.name = "tla-kraft-kip966" if c.kip966 else "tla-kraft-3.5"
        self.n = c.brokers
        self.all = (1 << c.brokers) - 1
        self.brokers = tuple(range(1, c.brokers + 1))
        self.values = tuple(range(1, c.values + 1))
        known = INVARIANTS_KIP966 if c.kip966 else INVARIANTS_V35
        extra = ("ValidControllerIsrAndElr",) if c.kip966 else ()
        allowed = (*known, *extra)
        for name in c.invariants:
            if name not in allowed:
                raise ValueError(f"unknown invariant {name!r} (known: {', '.join(allowed)})")
        unknown = sorted(set(c.unfair) - set(FAIR_ACTIONS))
        if unknown:
            raise ValueError(f"unfair: {', '.join(unknown)} not among the fair actions "
                             f"({', '.join(FAIR_ACTIONS)})")
        self._last_packed: Packed = b""
        self._last_state: State = ()
        self._invariants = tuple(
            Property(name, self._on_packed(getattr(self, "inv_" + name)))
            for name in c.invariants)
        if not c.view:
            self.view = None  # type: ignore[assignment]  # no VIEW: states are themselves
        self._subsets = [m for m in range(1 << c.brokers)]
        self.actions = self._action_table()
        self._steps = tuple((f"{name}({b})", action, b) for b in self.brokers
                            for name, action in self.actions)

    def _on_packed(self, predicate: Callable[[State], bool]) -> Callable[[Packed], bool]:
        """A predicate of state tuples as one of packed states."""
        unpack = self.unpack
        return lambda data: predicate(unpack(data))

    # -- the Model protocol -------------------------------------------------------------------
    def pack(self, state: State) -> Packed:
        """A state as the checker stores it: a 4-byte length, the memo-less pickle of the
        view's variables, then that of the four outside the view."""
        inside = _dumps(_VIEW_PART(state))
        return len(inside).to_bytes(4, "big") + inside + _dumps(_REST_PART(state))

    def unpack(self, data: Packed) -> State:
        """The state tuple of a packed state (the last one unpacked is kept: the checker
        asks every invariant, and ``--liveness`` every predicate, of one state in turn)."""
        if data is self._last_packed:
            return self._last_state
        size = int.from_bytes(data[:4], "big")
        view = memoryview(data)
        inside: State = _loads(view[4:4 + size])
        outside: State = _loads(view[4 + size:])
        state = inside[:MESSAGES_DISCARD] + outside + inside[MESSAGES_DISCARD:]
        self._last_packed, self._last_state = data, state
        return state

    def init_states(self) -> Iterable[Packed]:
        """Init: broker 1 leads; replicas {1..RF}, ISR {1..InitIsrSize} (TLC's CHOOSE picks
        the first subset in its enumeration order, the lowest broker ids)."""
        c, n = self.config, self.n
        replicas = (1 << c.replication_factor) - 1
        isr = (1 << c.init_isr_size) - 1
        part_epoch = 1 if c.init_isr_size == c.replication_factor else 2
        record = (replicas, isr, 0, 0, 1, 1, part_epoch, -1, -1)
        unfenced = self.all & ~(replicas & ~isr)
        state: list[Any] = [None] * len(VARIABLES)
        state[CON_UNFENCED] = unfenced
        state[CON_BROKER_REG] = tuple(
            (UNFENCED if _has(unfenced, b) else FENCED, b, b) for b in self.brokers)
        state[CON_LOG] = (record,)
        state[CON_PM] = (replicas, isr, 0, 0, 1, 1, part_epoch, 0, 0)
        state[BROKER_STATE] = tuple((RUNNING, b, b, True) for b in self.brokers)
        state[BROKER_FETCHERS] = tuple(
            tuple(((1, 0, False), False) if b != 1 and b1 == 1 else BLANK_FETCH
                  for b1 in self.brokers) for b in self.brokers)
        state[BROKER_MD_LOG] = tuple(1 if _has(unfenced, b) else 0 for b in self.brokers)
        state[P_STATUS] = tuple(LEADER if b == 1 else FOLLOWER if _has(replicas, b) else ROLE_NIL
                                for b in self.brokers)
        state[P_MD] = tuple(
            BLANK_MD if not _has(replicas, b)
            else (replicas, isr, isr, 1, 1, part_epoch) if _has(isr, b)
            else (replicas, replicas, replicas, 1, 1, 1)
            for b in self.brokers)
        state[P_DATA] = tuple(((), 1, 1) for _ in self.brokers)
        state[P_LESO] = tuple(1 if b == 1 else NIL for b in self.brokers)
        state[P_REPLICA_STATE] = tuple(
            tuple(BLANK_REPLICA_STATE for _ in self.brokers) for _ in self.brokers)
        state[P_PENDING_AP] = tuple((0, ()) for _ in self.brokers)
        state[MESSAGES] = ()
        state[MESSAGES_DISCARD] = ()
        state[AUX_BROKER_EPOCH] = n
        state[AUX_CTRS] = (n + 1, 0, 0, 0, 0, 0)
        state[AUX_FLO] = tuple(INT_MAX for _ in self.brokers)
        state[INV_SENT] = state[INV_POS_ACKED] = state[INV_NEG_ACKED] = 0
        state[INV_TRUE_HWM] = 1
        state[INV_CONSUMED] = ()
        return [self.pack(tuple(state))]

    def next_states(self, state: Packed) -> list[tuple[str, Packed]]:
        """Next: for each broker b in 1..BrokerCount every broker and controller action in
        the module's order, then PerformPartitionReassignment."""
        s, pack = self.unpack(state), self.pack
        out: list[tuple[str, Packed]] = []
        label = "PerformPartitionReassignment"
        try:
            for label, action, b in self._steps:
                out.extend((label, pack(t)) for t in action(s, b))
            label = "PerformPartitionReassignment"
            out.extend((label, pack(t)) for t in self.perform_partition_reassignment(s))
        except SpecError as error:
            raise SpecError(str(error), label) from None
        return out

    def invariants(self) -> Sequence[Property[Packed]]:
        return self._invariants

    def sometimes(self) -> Sequence[Property[Packed]]:
        return ()

    def within_boundary(self, state: Packed) -> bool:
        return True

    def liveness(self) -> Liveness[Packed]:
        """The spec's seven liveness properties under its ``Liveness`` (weak fairness of
        ``FAIR_ACTIONS`` per broker), less the fairness of ``config.unfair``
        (``isrlab.spec.tla_kraft.liveness``)."""
        return kraft_liveness(self, self.config.unfair)

    def canonical(self, state: Packed) -> Packed:
        return state

    def encode(self, state: Packed) -> bytes:
        """States are their own encoding."""
        return state

    def decode(self, data: bytes) -> Packed:
        """States are their own encoding."""
        return bytes(data)

    def view(self, state: Packed) -> bytes:
        """TLC's VIEW ``view``: the state without messages_discard and the aux variables
        (the packed state's first part)."""
        return state[4:4 + int.from_bytes(state[:4], "big")]

    def variables(self, state: Packed) -> Mapping[str, Any]:
        """The spec's variables with sets as sorted lists of broker ids."""
        return {name: _plain(i, value, self) for i, (name, value)
                in enumerate(zip(VARIABLES, self.unpack(state), strict=True))}

    def members(self, mask: int) -> list[int]:
        return [b for b in self.brokers if mask >> (b - 1) & 1]

    def _action_table(self) -> tuple[tuple[str, Callable[[State, int], list[State]]], ...]:
        kip = self.config.kip966
        return (
            ("BrokerStart", self.broker_start),
            ("ReceiveBrokerRegResponse", self.receive_broker_reg_response),
            ("ReceiveMetadataUpdate", self.receive_metadata_update),
            ("SendAlterPartitionRequest", self.send_alter_partition_request),
            ("ReceiveAlterPartitionResponse", self.receive_alter_partition_response),
            ("SendFetchRequest", self.send_fetch_request),
            ("ReceiveFetchRequest", self.receive_fetch_request),
            ("ReceiveFetchResponse", self.receive_fetch_response),
            ("WriteRecordToLeader", self.write_record_to_leader),
            ("DataLossShutdown" if kip else "UncleanShutdown", self.unclean_shutdown),
            ("NoDataLossShutdown" if kip else "CleanShutdown", self.clean_shutdown),
            ("ReceiveBrokerRegRequest", self.receive_broker_reg_request),
            ("ReceiveAlterPartitionRequest", self.receive_alter_partition_request),
            ("FenceBroker", self.fence_broker),
            ("UnfenceBroker", self.unfence_broker),
        )

    # -- helpers of the functions module --------------------------------------------------------
    @staticmethod
    def _log(s: State, b: int) -> tuple[Any, ...]:
        log: tuple[Any, ...] = s[P_DATA][b - 1][0]
        return log

    @staticmethod
    def _hwm(s: State, b: int) -> int:
        hwm: int = s[P_DATA][b - 1][1]
        return hwm

    @staticmethod
    def _leo(s: State, b: int) -> int:
        leo: int = s[P_DATA][b - 1][2]
        return leo

    @staticmethod
    def _entry(s: State, b: int, offset: int) -> tuple[int, int, int]:
        log = s[P_DATA][b - 1][0]
        if not 1 <= offset <= len(log):
            raise SpecError(f"partition_data[{b}].log[{offset}] is outside the log")
        entry: tuple[int, int, int] = log[offset - 1]
        return entry

    @staticmethod
    def _pending(s: State, b: int) -> bool:
        """PendingAlterPartitionResponse(b)."""
        return bool(s[P_PENDING_AP][b - 1][0] > s[P_MD][b - 1][5])

    @staticmethod
    def _reassignment_in_progress(s: State) -> bool:
        return bool(s[CON_PM][7] or s[CON_PM][8])

    def _committed(self, b: int, maximal_isr: int, replica_state: tuple[Any, ...],
                   offset: int) -> bool:
        """IsCommitted."""
        for b1 in self.members(maximal_isr):
            if b1 == b:
                continue
            leo = replica_state[b1 - 1][0]
            if leo == NIL or not leo > offset:
                return False
        return True

    def _commit_offset(self, s: State, b: int, maximal_isr: int, leo: int,
                       replica_state: tuple[Any, ...]) -> int:
        """GetCommitOffset: 0 when b's log is empty, else the highest offset below ``leo``
        replicated to the maximal ISR (0 when none)."""
        if self._leo(s, b) == 1:
            return 0
        best = 0
        for offset in range(1, leo):
            if self._committed(b, maximal_isr, replica_state, offset):
                best = offset
        return best

    def _send_acks_for(self, s: State, d: Draft, b: int, lower: int, higher: int,
                       positive: bool) -> None:
        """SendAcksFor: acknowledge the sent, unacknowledged values at offsets
        ``lower..higher`` of b's log written in b's unbroken leadership."""
        values = 0
        flo = s[AUX_FLO][b - 1]
        for v in self.values:
            bit = 1 << (v - 1)
            if not s[INV_SENT] & bit or s[INV_POS_ACKED] & bit or s[INV_NEG_ACKED] & bit:
                continue
            for offset in range(lower, higher + 1):
                if self._entry(s, b, offset)[2] == v and offset >= flo:
                    values |= bit
                    break
        if positive:
            d[INV_POS_ACKED] = s[INV_POS_ACKED] | values
        else:
            d[INV_NEG_ACKED] = s[INV_NEG_ACKED] | values

    def _update_hwm_invariant_vars(self, s: State, d: Draft, b: int, old_hwm: int,
                                   new_hwm: int, positive: bool) -> None:
        """UpdateHwmInvariantVars (reads b's log before the step)."""
        if positive:
            self._send_acks_for(s, d, b, old_hwm, new_hwm - 1, True)
        else:
            self._send_acks_for(s, d, b, old_hwm, self._leo(s, b) - 1, False)
        true_hwm = s[INV_TRUE_HWM]
        d[INV_TRUE_HWM] = new_hwm if new_hwm > true_hwm else true_hwm
        if new_hwm > true_hwm:
            d[INV_CONSUMED] = s[INV_CONSUMED] + _sub_seq(self._log(s, b), true_hwm, new_hwm - 1)

    def _can_advance_hwm(self, isr: int, old_hwm: int, new_hwm: int) -> bool:
        """v3.5: new > old; KIP-966's CanAdvanceHwm adds SafeToAdvanceHwm (ISR >= MinISR)."""
        if not new_hwm > old_hwm:
            return False
        if self.config.kip966 and self.config.hw_min_isr_gate:
            return _card(isr) >= self.config.min_isr
        return True

    def _maybe_advance_hwm(self, s: State, d: Draft, b: int, isr: int, old_hwm: int,
                           new_hwm: int, positive: bool) -> None:
        """MaybeAdvanceHighWatermark."""
        if self._can_advance_hwm(isr, old_hwm, new_hwm):
            log, _hwm, leo = s[P_DATA][b - 1]
            d[P_DATA] = _set(s[P_DATA], b, (log, new_hwm, leo))
            self._update_hwm_invariant_vars(s, d, b, old_hwm, new_hwm, positive)

    def _update_hwm_on_partition_change(self, s: State, d: Draft, b: int,
                                        md: tuple[Any, ...]) -> None:
        """MaybeUpdateHwmAndAckOnPartitionChange."""
        new_hwm = self._commit_offset(s, b, md[2], self._leo(s, b), s[P_REPLICA_STATE][b - 1]) + 1
        positive = _card(md[2]) >= self.config.min_isr
        self._maybe_advance_hwm(s, d, b, md[1], self._hwm(s, b), new_hwm, positive)

    def _fail_pending_writes(self, s: State, d: Draft, b: int) -> None:
        self._send_acks_for(s, d, b, self._hwm(s, b), self._leo(s, b) - 1, False)

    def _maybe_fail_pending_writes(self, s: State, d: Draft, b: int,
                                   md: tuple[Any, ...]) -> None:
        if self._hwm(s, b) < self._leo(s, b) and (
                _card(md[1]) < self.config.min_isr or b != md[3]):
            self._fail_pending_writes(s, d, b)

    def _apply_partition_change(self, s: State, d: Draft, replicas: int, leader: int,
                                isr: int, elr: int, leader_epoch: int, part_epoch: int,
                                adding: int, removing: int) -> None:
        """ApplyPartitionChange: new controller metadata and a PartitionChangeRecord
        (KIP-966: last-known ELR emptied at ISR >= MinISR, else grown by removed ELR
        members that are still replicas)."""
        con = s[CON_PM]
        if not self.config.kip966 or _card(isr) >= self.config.min_isr:
            last_known = 0
        else:
            last_known = con[3] | (replicas & (con[2] & ~elr))
        record = (replicas, isr, elr, last_known, leader, leader_epoch, part_epoch, adding,
                  removing)
        d[CON_PM] = record
        d[CON_LOG] = (*s[CON_LOG], record)

    def _update_elr(self, s: State, proposed_isr: int, replicas: int) -> int:
        """UpdateElrOnIsrOrReplicaChange (KIP-966); always {} in v3.5."""
        if not self.config.kip966:
            return 0
        con = s[CON_PM]
        if _card(proposed_isr) >= self.config.min_isr:
            return 0
        elr: int = (con[2] & replicas) | ((con[1] & replicas) & ~proposed_isr)
        return elr

    def _on_broker_change(self, s: State, d: Draft, new_isr: int, new_elr: int,
                          new_unfenced: int) -> list[Draft]:
        """MaybeUpdatePartitionOnBrokerChange: the first true CASE arm; one draft per
        candidate leader where the arm chooses one."""
        con = s[CON_PM]
        replicas, isr, elr, leader, le, pe = con[0], con[1], con[2], con[4], con[5], con[6]
        adding, removing = con[7], con[8]
        out: list[Draft] = []
        if not self.config.kip966:
            candidates = new_isr & new_unfenced
            no_change = ((leader == NO_LEADER and not candidates)
                         or (_has(new_isr, leader) and _has(new_unfenced, leader)))
            if no_change and new_isr == isr:
                return [d]
            if no_change:
                self._apply_partition_change(s, d, replicas, leader, new_isr, 0, le, pe + 1,
                                             adding, removing)
                return [d]
            if candidates:
                for cand in self.members(new_isr):
                    if _has(new_unfenced, cand):
                        e = list(d)
                        self._apply_partition_change(s, e, replicas, cand, new_isr, 0, le + 1,
                                                     pe + 1, adding, removing)
                        out.append(e)
                return out
            self._apply_partition_change(s, d, replicas, NO_LEADER, new_isr, 0, le + 1, pe + 1,
                                         adding, removing)
            return [d]
        no_change = ((leader == NO_LEADER and new_isr == 0 and not new_elr & new_unfenced)
                     or _has(new_isr, leader))
        if no_change and new_isr == isr and new_elr == elr:
            return [d]
        if no_change:
            self._apply_partition_change(s, d, replicas, leader, new_isr, new_elr, le, pe + 1,
                                         adding, removing)
            return [d]
        if new_isr:
            for cand in self.members(new_isr):
                e = list(d)
                self._apply_partition_change(s, e, replicas, cand, new_isr, new_elr, le + 1,
                                             pe + 1, adding, removing)
                out.append(e)
            return out
        if new_elr & new_unfenced:
            for cand in self.members(new_elr):
                if _has(new_unfenced, cand):
                    e = list(d)
                    self._apply_partition_change(s, e, replicas, cand, new_isr | _bit(cand),
                                                 new_elr & ~_bit(cand), le + 1, pe + 1,
                                                 adding, removing)
                    out.append(e)
            return out
        self._apply_partition_change(s, d, replicas, NO_LEADER, new_isr, new_elr, le + 1,
                                     pe + 1, adding, removing)
        return [d]

    def _handle_broker_fenced(self, s: State, d: Draft, b: int) -> list[Draft]:
        """HandleBrokerFenced: b leaves the unfenced set and the ISR (v3.5: never the last
        ISR member; KIP-966: the ISR may empty, the ELR is updated)."""
        con = s[CON_PM]
        if self.config.kip966:
            new_isr = con[1] & ~_bit(b)
            new_elr = self._update_elr(s, new_isr, con[0])
        else:
            new_isr = con[1] if _card(con[1]) == 1 else con[1] & ~_bit(b)
            new_elr = 0
        new_unfenced = s[CON_UNFENCED] & ~_bit(b)
        drafts = self._on_broker_change(s, d, new_isr, new_elr, new_unfenced)
        for e in drafts:
            e[CON_UNFENCED] = new_unfenced
        return drafts

    def _handle_broker_unfenced(self, s: State, d: Draft, b: int) -> list[Draft]:
        """HandleBrokerUnfenced: b joins the unfenced set; a leaderless partition may elect."""
        con = s[CON_PM]
        new_unfenced = s[CON_UNFENCED] | _bit(b)
        drafts = (self._on_broker_change(s, d, con[1], con[2], new_unfenced)
                  if con[4] == NO_LEADER else [d])
        for e in drafts:
            e[CON_UNFENCED] = new_unfenced
        return drafts

    def _process_unclean_broker(self, s: State, d: Draft, b: int) -> list[Draft]:
        """ProcessUncleanBroker (KIP-966): b leaves the ISR and the ELR and is unfenced."""
        con = s[CON_PM]
        new_unfenced = s[CON_UNFENCED] | _bit(b)
        drafts = self._on_broker_change(s, d, con[1] & ~_bit(b), con[2] & ~_bit(b),
                                        new_unfenced)
        for e in drafts:
            e[CON_UNFENCED] = new_unfenced
        return drafts

    def _last_offset_for_epoch(self, s: State, b: int, req_epoch: int,
                               is_leader: bool) -> tuple[int, int]:
        """LastOffsetForEpoch: (epoch, exclusive end offset); offset NIL where the spec
        returns Nil ("should not happen")."""
        log = self._log(s, b)
        md_epoch = s[P_MD][b - 1][4]
        if not log or req_epoch == log[-1][0] or (is_leader and md_epoch == req_epoch):
            return (req_epoch, self._leo(s, b))
        epochs = [entry[0] for entry in log]
        higher = NIL
        for i, epoch in enumerate(epochs):
            if epoch > req_epoch and not any(
                    req_epoch < e2 < epoch for e2 in epochs[:i]):
                higher = i + 1
                break
        else:
            if is_leader and md_epoch > req_epoch:
                higher = self._leo(s, b)
        floors = [e for e in epochs if e <= req_epoch]
        if floors:
            return (max(floors), higher)
        return (req_epoch, higher)

    def _drop_fetch_sessions(self, s: State, d: Draft, b: int) -> None:
        """DropFetchSessions: b's in-flight fetches dropped; its fetchers blank; peers'
        pending fetches to b fail (delayed)."""
        dropped = tuple(m for m in s[MESSAGES]
                        if m[0] in (FETCH_REQ, FETCH_RESP) and (m[1] == b or m[2] == b))
        d[MESSAGES] = tuple(m for m in s[MESSAGES] if m not in dropped)
        discard = s[MESSAGES_DISCARD]
        for m in dropped:
            discard = _add_msg(discard, m)
        d[MESSAGES_DISCARD] = discard
        fetchers = []
        for b1 in self.brokers:
            row = s[BROKER_FETCHERS][b1 - 1]
            if b1 == b:
                row = tuple(BLANK_FETCH for _ in self.brokers)
            else:
                partition, pending = row[b - 1]
                if pending and partition != ():
                    row = _set(row, b, ((partition[0], partition[1], True), False))
                elif pending:
                    row = _set(row, b, ((), False))
            fetchers.append(row)
        d[BROKER_FETCHERS] = tuple(fetchers)

    def _validate_alter_partition(self, s: State, b: int, m: tuple[Any, ...]) -> int:
        """ValidateAlterPartitionRequest: ERR_NONE, IneligibleReplica or FencedLeaderEpoch."""
        c, con, reg = self.config, s[CON_PM], s[CON_BROKER_REG]
        _t, _isr, isr_and_epochs, _leader, _le, part_epoch, broker_epoch, _src = m
        if not (b == con[4] and broker_epoch == reg[b - 1][1]
                and (not c.partition_epoch_check or part_epoch == con[6])):
            return ERR_FENCED_LEADER_EPOCH
        for b1, epoch in isr_and_epochs:
            status, reg_epoch, _ = reg[b1 - 1]
            if status != UNFENCED:
                return ERR_INELIGIBLE_REPLICA
            if c.kip903_check and not (epoch == 0 or reg_epoch == epoch):
                return ERR_INELIGIBLE_REPLICA
        return ERR_NONE

    def _converged(self, s: State, leader: int, follower: int) -> bool:
        data = s[P_DATA]
        rs = s[P_REPLICA_STATE][leader - 1][follower - 1]
        return bool(data[leader - 1][2] == data[follower - 1][2]
                    and data[leader - 1][1] == data[follower - 1][1]
                    and rs[0] == data[follower - 1][2]
                    and rs[1] == s[BROKER_STATE][follower - 1][1])

    @staticmethod
    def _discard(s: State, d: Draft, m: Any) -> None:
        d[MESSAGES] = _remove_msg(s[MESSAGES], m)
        d[MESSAGES_DISCARD] = _add_msg(s[MESSAGES_DISCARD], m)

    @staticmethod
    def _reply(s: State, d: Draft, m: Any, response: Any) -> None:
        d[MESSAGES] = _add_msg(_remove_msg(s[MESSAGES], m), response)
        d[MESSAGES_DISCARD] = _add_msg(s[MESSAGES_DISCARD], m)

    @staticmethod
    def _reset_pending_ap(s: State, d: Draft, b: int) -> None:
        d[P_PENDING_AP] = _set(s[P_PENDING_AP], b, (0, ()))

    def _blank_replica_states(self) -> tuple[Any, ...]:
        return tuple(BLANK_REPLICA_STATE for _ in self.brokers)

    def _remove_partition_from_fetchers(self, s: State, d: Draft, b: int) -> None:
        row = s[BROKER_FETCHERS][b - 1]
        d[BROKER_FETCHERS] = _set(s[BROKER_FETCHERS], b,
                                  tuple(((), pending) for _p, pending in row))

    # -- actions ------------------------------------------------------------------------------
    def broker_start(self, s: State, b: int) -> list[State]:
        """BrokerStart: an offline broker starts and sends a registration with a new
        incarnation id (KIP-966: and the broker epoch on disk)."""
        status, epoch, _incarn, _reg = s[BROKER_STATE][b - 1]
        if status not in (OFFLINE_CLEAN, OFFLINE_DIRTY):
            return []
        ctrs = s[AUX_CTRS]
        incarn = ctrs[C_INCARN]
        kept_epoch = epoch if self.config.kip966 else 0
        d = list(s)
        d[BROKER_STATE] = _set(s[BROKER_STATE], b, (STARTING, kept_epoch, incarn, False))
        d[P_STATUS] = _set(s[P_STATUS], b, ROLE_NIL)
        request = (REG_REQ, b, incarn, epoch if self.config.kip966 else NIL)
        d[MESSAGES] = _add_msg(s[MESSAGES], request)
        d[AUX_CTRS] = (incarn + 1, *ctrs[1:])
        return [tuple(d)]

    def receive_broker_reg_request(self, s: State, b: int) -> list[State]:
        """ReceiveBrokerRegRequest: the controller registers b with a new broker epoch and
        unfences it (KIP-966: a request with broker epoch 0 is an unclean broker)."""
        out: list[State] = []
        reg = s[CON_BROKER_REG][b - 1]
        for m in s[MESSAGES]:
            if m[0] != REG_REQ or m[1] != b:
                continue
            if not (reg[0] == FENCED or reg[2] == m[2]):
                continue
            epoch = s[AUX_BROKER_EPOCH] + 1
            d = list(s)
            d[CON_BROKER_REG] = _set(s[CON_BROKER_REG], b, (UNFENCED, epoch, m[2]))
            if self.config.kip966 and m[3] == 0:
                drafts = self._process_unclean_broker(s, d, b)
            else:
                drafts = self._handle_broker_unfenced(s, d, b)
            response = (REG_RESP, epoch, m[2], len(s[CON_LOG]), b)
            for e in drafts:
                self._reply(s, e, m, response)
                e[AUX_BROKER_EPOCH] = s[AUX_BROKER_EPOCH] + 1
                out.append(tuple(e))
        return out

    def receive_broker_reg_response(self, s: State, b: int) -> list[State]:
        """ReceiveBrokerRegResponse: b runs, catches up to the metadata log minus one record."""
        out: list[State] = []
        status, _epoch, incarn, registered = s[BROKER_STATE][b - 1]
        for m in s[MESSAGES]:
            if m[0] != REG_RESP or m[4] != b:
                continue
            if status != STARTING or registered:
                continue
            if self.config.incarnation_check and incarn != m[2]:
                continue
            d = list(s)
            d[BROKER_STATE] = _set(s[BROKER_STATE], b, (RUNNING, m[1], incarn, True))
            d[BROKER_MD_LOG] = _set(s[BROKER_MD_LOG], b, 0 if m[3] <= 1 else m[3] - 1)
            d[P_MD] = _set(s[P_MD], b, BLANK_MD)
            self._discard(s, d, m)
            out.append(tuple(d))
        return out

    def unfence_broker(self, s: State, b: int) -> list[State]:
        """UnfenceBroker: the controller unfences a fenced, running broker (a heartbeat)."""
        if s[CON_BROKER_REG][b - 1][0] != FENCED or s[BROKER_STATE][b - 1][0] != RUNNING:
            return []
        out = []
        for e in self._handle_broker_unfenced(s, list(s), b):
            _st, epoch, incarn = s[CON_BROKER_REG][b - 1]
            e[CON_BROKER_REG] = _set(s[CON_BROKER_REG], b, (UNFENCED, epoch, incarn))
            out.append(tuple(e))
        return out

    def fence_broker(self, s: State, b: int) -> list[State]:
        """FenceBroker: the controller fences an unfenced broker (missed heartbeats)."""
        ctrs = s[AUX_CTRS]
        if not ctrs[C_FENCE] < self.config.fence_broker_limit:
            return []
        if s[CON_BROKER_REG][b - 1][0] != UNFENCED:
            return []
        out = []
        for e in self._handle_broker_fenced(s, list(s), b):
            _st, epoch, incarn = s[CON_BROKER_REG][b - 1]
            e[CON_BROKER_REG] = _set(s[CON_BROKER_REG], b, (FENCED, epoch, incarn))
            e[AUX_CTRS] = _set(ctrs, C_FENCE + 1, ctrs[C_FENCE] + 1)
            out.append(tuple(e))
        return out

    def _needs_action(self, s: State, b: int, md_offset: int) -> int:
        """PartitionNeedsAction, as TLC evaluates it at action level: the number of its
        true disjuncts (each one a successor)."""
        md = s[P_MD][b - 1]
        record = s[CON_LOG][md_offset - 1]
        leader = int(s[P_STATUS][b - 1] == LEADER)
        if _has(md[0], b):
            return leader + int(record[5] > md[4])
        return leader + int(_has(record[0], b))

    def receive_metadata_update(self, s: State, b: int) -> list[State]:
        """ReceiveMetadataUpdate: b replays the metadata log up to a record that concerns its
        replica, then acts on it (delete, remain leader, become leader, remain follower,
        become follower, wait for a leader)."""
        status, _epoch, _incarn, registered = s[BROKER_STATE][b - 1]
        if status in (OFFLINE_CLEAN, OFFLINE_DIRTY) or not registered:
            return []
        out: list[State] = []
        for md_offset in range(s[BROKER_MD_LOG][b - 1] + 1, len(s[CON_LOG]) + 1):
            copies = self._needs_action(s, b, md_offset)
            if not copies:
                continue
            record = s[CON_LOG][md_offset - 1]
            curr = s[P_MD][b - 1]
            new = (record[0], record[1], record[1], record[4], record[5], record[6])
            is_new_leader = s[P_STATUS][b - 1] != LEADER and record[4] == b
            d = list(s)
            d[BROKER_MD_LOG] = _set(s[BROKER_MD_LOG], b, md_offset)
            if not new[5] > curr[5]:
                out += [tuple(d)] * copies  # MetadataNoOp
                continue
            d[P_MD] = _set(s[P_MD], b, new if _has(new[0], b) else BLANK_MD)
            if _has(curr[0], b) and not _has(new[0], b):
                self._delete_partition(s, d, b, new)
            elif curr[3] == b and record[4] == b:
                if curr[4] == new[4]:
                    self._remain_leader(s, d, b, new)
                else:
                    self._become_leader_in_new_epoch(s, d, b, new, is_new_leader)
            elif curr[3] != b and record[4] == b:
                self._become_leader_in_new_epoch(s, d, b, new, is_new_leader)
            elif _has(new[0], b) and record[4] != NO_LEADER:
                if not (new[4] == curr[4] and curr[3] != b and new[3] != b):
                    self._become_follower_in_new_epoch(s, d, b, new)
                # else RemainFollower: nothing more
            else:
                if not _has(new[0], b):
                    continue
                self._wait_for_leader_change(s, d, b, new)
            out += [tuple(d)] * copies
        return out

    def _ensure_leadership_renounced(self, s: State, d: Draft, b: int,
                                     new: tuple[Any, ...]) -> None:
        self._maybe_fail_pending_writes(s, d, b, new)
        d[P_REPLICA_STATE] = _set(s[P_REPLICA_STATE], b, self._blank_replica_states())
        self._reset_pending_ap(s, d, b)
        d[AUX_FLO] = _set(s[AUX_FLO], b, INT_MAX)

    def _remain_leader(self, s: State, d: Draft, b: int, new: tuple[Any, ...]) -> None:
        self._update_hwm_on_partition_change(s, d, b, new)
        if new[5] >= s[P_PENDING_AP][b - 1][0]:
            self._reset_pending_ap(s, d, b)

    def _become_leader_in_new_epoch(self, s: State, d: Draft, b: int, new: tuple[Any, ...],
                                    is_new_leader: bool) -> None:
        d[P_STATUS] = _set(s[P_STATUS], b, LEADER)
        self._update_hwm_on_partition_change(s, d, b, new)
        d[P_LESO] = _set(s[P_LESO], b, self._leo(s, b))
        if is_new_leader:
            d[P_REPLICA_STATE] = _set(s[P_REPLICA_STATE], b, self._blank_replica_states())
        elif self.config.reset_follower_state:
            row = s[P_REPLICA_STATE][b - 1]
            d[P_REPLICA_STATE] = _set(s[P_REPLICA_STATE], b, tuple(
                row[b1 - 1] if _has(new[1], b1) else BLANK_REPLICA_STATE
                for b1 in self.brokers))
        self._reset_pending_ap(s, d, b)
        self._remove_partition_from_fetchers(s, d, b)

    def _become_follower_in_new_epoch(self, s: State, d: Draft, b: int,
                                      new: tuple[Any, ...]) -> None:
        d[P_STATUS] = _set(s[P_STATUS], b, FOLLOWER)
        leader, leader_epoch = new[3], new[4]
        row = s[BROKER_FETCHERS][b - 1]
        if ((self.config.fetcher_epoch_check and leader_epoch > s[P_MD][b - 1][4])
                or row[leader - 1][0] == ()):
            log = self._log(s, b)
            added = (self._leo(s, b), log[-1][0] if log else 0, False)
            d[BROKER_FETCHERS] = _set(s[BROKER_FETCHERS], b, tuple(
                (added if peer == leader else (), row[peer - 1][1]) for peer in self.brokers))
        d[P_LESO] = _set(s[P_LESO], b, NIL)
        self._ensure_leadership_renounced(s, d, b, new)

    def _wait_for_leader_change(self, s: State, d: Draft, b: int,
                                new: tuple[Any, ...]) -> None:
        d[P_STATUS] = _set(s[P_STATUS], b, ROLE_NIL)
        self._remove_partition_from_fetchers(s, d, b)
        d[P_LESO] = _set(s[P_LESO], b, NIL)
        self._ensure_leadership_renounced(s, d, b, new)

    def _delete_partition(self, s: State, d: Draft, b: int, new: tuple[Any, ...]) -> None:
        d[P_STATUS] = _set(s[P_STATUS], b, ROLE_NIL)
        self._remove_partition_from_fetchers(s, d, b)
        d[P_LESO] = _set(s[P_LESO], b, NIL)
        d[P_DATA] = _set(s[P_DATA], b, ((), 1, 1))
        self._ensure_leadership_renounced(s, d, b, new)

    def _caught_up(self, s: State, b: int, follower: int, curr_isr: int,
                   timed_out: int) -> bool:
        """FollowerIsCaughtUp."""
        c = self.config
        if _has(curr_isr, follower):
            return not _has(timed_out, follower)
        leo = s[P_REPLICA_STATE][b - 1][follower - 1][0]
        if c.isr_fetched_check and leo == NIL:
            return False
        if c.isr_hwm_check and not leo >= self._hwm(s, b):
            return False
        if c.isr_leso_check:
            leso = s[P_LESO][b - 1]
            if leso == NIL:
                raise SpecError(f"partition_leso[{b}] is Nil in FollowerIsCaughtUp")
            if not leo >= leso:
                return False
        return True

    def send_alter_partition_request(self, s: State, b: int) -> list[State]:
        """SendAlterPartitionRequest: the leader proposes the ISR of its caught-up replicas
        (a nondeterministic subset of the ISR timed out while LeaderShrinkIsrLimit allows)
        and eagerly applies the maximal ISR."""
        if (s[BROKER_STATE][b - 1][0] != RUNNING or self._pending(s, b)
                or s[P_STATUS][b - 1] != LEADER):
            return []
        ctrs = s[AUX_CTRS]
        if ctrs[C_SHRINK] < self.config.leader_shrink_isr_limit:
            isr = s[P_MD][b - 1][1]
            out: list[State] = []
            for timed_out in self._subsets:
                if timed_out & ~isr or _has(timed_out, b):
                    continue
                out += self._do_send_alter_partition(s, b, timed_out)
            return out
        return self._do_send_alter_partition(s, b, 0)

    def _do_send_alter_partition(self, s: State, b: int, timed_out: int) -> list[State]:
        md = s[P_MD][b - 1]
        curr_isr = md[1]
        proposed = 0
        for b1 in self.members(md[0]):
            if b1 == b or self._caught_up(s, b, b1, curr_isr, timed_out):
                proposed |= _bit(b1)
        if proposed == curr_isr:
            return []
        epochs = tuple(
            (b1, s[BROKER_STATE][b - 1][1] if b1 == b else 0 if _has(curr_isr, b1)
             else s[P_REPLICA_STATE][b - 1][b1 - 1][1])
            for b1 in self.members(proposed))
        request = (AP_REQ, proposed, epochs, b, md[4], md[5], s[BROKER_STATE][b - 1][1], b)
        in_msgs, in_discard = request in s[MESSAGES], request in s[MESSAGES_DISCARD]
        # __AvoidCycle: \/ ~PreviouslySent \/ (PreviouslySent /\ valid); PreviouslySent is
        # itself a disjunction at action level, so each of its true disjuncts is a successor.
        if not (in_msgs or in_discard):
            copies = 1
        elif self._validate_alter_partition(s, b, request) == ERR_NONE:
            copies = int(in_msgs) + int(in_discard)
        else:
            copies = 0
        if not copies:
            return []
        d = list(s)
        d[MESSAGES] = _add_msg(s[MESSAGES], request)
        d[P_MD] = _set(s[P_MD], b, (md[0], md[1], proposed | curr_isr, *md[3:]))
        d[P_PENDING_AP] = _set(s[P_PENDING_AP], b, (md[5] + 1, request))
        ctrs = s[AUX_CTRS]
        if curr_isr & ~proposed:
            d[AUX_CTRS] = _set(ctrs, C_SHRINK + 1, ctrs[C_SHRINK] + 1)
        state = tuple(d)
        return [state] * copies

    def receive_alter_partition_request(self, s: State, b: int) -> list[State]:
        """ReceiveAlterPartitionRequest: the controller validates (leader, broker epoch,
        partition epoch, KIP-903 broker epochs of added replicas), commits the ISR (maybe
        completing a reassignment) and replies."""
        out: list[State] = []
        for m in s[MESSAGES]:
            if m[0] != AP_REQ or m[7] != b:
                continue
            error = self._validate_alter_partition(s, b, m)
            if error != ERR_NONE:
                d = list(s)
                self._reply(s, d, m, (AP_RESP, error, m, b))
                out.append(tuple(d))
                continue
            con = s[CON_PM]
            replicas, leader, le, pe, adding, removing = (con[0], con[4], con[5], con[6],
                                                          con[7], con[8])
            final_replicas = replicas & ~removing
            final_isr = m[1] & ~removing
            complete = (self._reassignment_in_progress(s) and not adding & ~final_isr
                        and _card(final_isr) >= self.config.min_isr)
            if complete:
                new = (final_replicas, final_isr, self._update_elr(s, final_isr, final_replicas),
                       le + 1, pe + 1, 0, 0)
            else:
                new = (replicas, m[1], self._update_elr(s, m[1], replicas), le, pe + 1,
                       adding, removing)
            for new_leader in self.members(new[1]):
                if _has(new[1], leader) and new_leader != leader:
                    continue
                d = list(s)
                self._apply_partition_change(s, d, new[0], new_leader, new[1], new[2], new[3],
                                             new[4], new[5], new[6])
                self._reply(s, d, m, (AP_RESP, ERR_NONE, new[0], new[1], new_leader, new[3],
                                      new[4], m, b))
                out.append(tuple(d))
        return out

    def receive_alter_partition_response(self, s: State, b: int) -> list[State]:
        """ReceiveAlterPartitionResponse: the leader commits the new partition state or
        rolls its maximal ISR back to the ISR."""
        if (s[BROKER_STATE][b - 1][0] != RUNNING or s[P_STATUS][b - 1] != LEADER
                or not self._pending(s, b)):
            return []
        out: list[State] = []
        md = s[P_MD][b - 1]
        pending_request = s[P_PENDING_AP][b - 1][1]
        for m in s[MESSAGES]:
            if m[0] != AP_RESP:
                continue
            ok = m[1] == ERR_NONE
            if (m[8] if ok else m[3]) != b or (m[7] if ok else m[2]) != pending_request:
                continue
            if ok and not (m[6] > md[5] and m[5] == md[4]):
                continue
            part = (m[2], m[3], m[3], m[4], m[5], m[6]) if ok else (md[0], md[1], md[1], *md[3:])
            d = list(s)
            d[P_MD] = _set(s[P_MD], b, part)
            self._update_hwm_on_partition_change(s, d, b, part)
            self._reset_pending_ap(s, d, b)
            self._discard(s, d, m)
            out.append(tuple(d))
        return out

    def perform_partition_reassignment(self, s: State) -> list[State]:
        """PerformPartitionReassignment: an operator reassigns replicas (adding, removing)."""
        ctrs = s[AUX_CTRS]
        if not ctrs[C_REASSIGN] < self.config.reassignment_limit:
            return []
        if self._reassignment_in_progress(s):
            return []
        con = s[CON_PM]
        replicas, isr, leader, le, pe = con[0], con[1], con[4], con[5], con[6]
        min_isr = self.config.min_isr
        out: list[State] = []
        for adding in self._subsets:
            for removing in self._subsets:
                # ValidReassignment's first conjunct is an action-level disjunction: one
                # successor per true disjunct.
                copies = int(_card(adding) >= 1) + int(_card(removing) >= 1)
                if not copies:
                    continue
                if not _card(replicas) + _card(adding) - _card(removing) >= min_isr:
                    continue
                if adding & replicas or removing & ~replicas:
                    continue
                grow = replicas | adding
                final_replicas = grow & ~removing
                final_isr = isr & ~removing
                complete = (not adding & ~final_isr and _card(final_isr) >= min_isr
                            and _card(final_replicas) > 0)
                if complete:
                    new = (final_replicas, final_isr,
                           self._update_elr(s, final_isr, final_replicas), le + 1, pe + 1, 0, 0)
                else:
                    new = (grow, isr, con[2], le, pe + 1, adding, removing)
                for new_leader in self.members(new[1]):
                    if _has(new[1], leader) and new_leader != leader:
                        continue
                    d = list(s)
                    self._apply_partition_change(s, d, new[0], new_leader, new[1], new[2],
                                                 new[3], new[4], new[5], new[6])
                    d[AUX_CTRS] = _set(ctrs, C_REASSIGN + 1, ctrs[C_REASSIGN] + 1)
                    out += [tuple(d)] * copies
        return out

    def send_fetch_request(self, s: State, b: int) -> list[State]:
        """SendFetchRequest: a follower fetches from the broker it believes leads, unless the
        two have converged."""
        if s[BROKER_STATE][b - 1][0] != RUNNING:
            return []
        out: list[State] = []
        row = s[BROKER_FETCHERS][b - 1]
        md = s[P_MD][b - 1]
        for to in self.brokers:
            partition, pending = row[to - 1]
            if to == b or partition == () or pending or md[3] != to:
                continue
            if self._converged(s, to, b):
                continue
            d = list(s)
            d[MESSAGES] = _add_msg(s[MESSAGES], (FETCH_REQ, to, b, s[BROKER_STATE][b - 1][1],
                                                  md[4], partition[0], partition[1]))
            d[BROKER_FETCHERS] = _set(s[BROKER_FETCHERS], b, _set(
                row, to, ((partition[0], partition[1], False), True)))
            out.append(tuple(d))
        return out

    def receive_fetch_request(self, s: State, b: int) -> list[State]:
        """ReceiveFetchRequest: the leader answers with an error, a diverging epoch, or the
        next record, advancing its HW from the follower's fetch offset."""
        if s[BROKER_STATE][b - 1][0] != RUNNING:
            return []
        out: list[State] = []
        md = s[P_MD][b - 1]
        for m in s[MESSAGES]:
            if m[0] != FETCH_REQ or m[1] != b:
                continue
            _t, _dest, source, broker_epoch, leader_epoch, fetch_offset, last_fetched = m
            d = list(s)
            hwm = self._hwm(s, b)
            if s[P_STATUS][b - 1] != LEADER or md[4] != leader_epoch:
                error = (ERR_UNKNOWN_LEADER_EPOCH if md[4] < leader_epoch
                         else ERR_FENCED_LEADER_EPOCH if md[4] > leader_epoch
                         else ERR_NOT_LEADER_OR_FOLLOWER)
                self._reply(s, d, m, (FETCH_RESP, source, b, error, md[4], fetch_offset, hwm,
                                      (), ()))
                out.append(tuple(d))
                continue
            last = self._last_offset_for_epoch(s, b, last_fetched, True)
            diverging = last[0] < last_fetched
            if not diverging:
                if last[1] == NIL:
                    raise SpecError("LastOffsetForEpoch returned Nil")
                diverging = last[1] < fetch_offset
            if diverging:
                self._reply(s, d, m, (FETCH_RESP, source, b, ERR_NONE, md[4], fetch_offset, hwm,
                                      last, ()))
                out.append(tuple(d))
                continue
            updated = _set(s[P_REPLICA_STATE][b - 1], source, (fetch_offset, broker_epoch))
            committed = self._commit_offset(s, b, md[2], self._leo(s, b), updated) + 1
            if self.config.kip966:
                new_hwm = committed if self._can_advance_hwm(md[1], hwm, committed) else hwm
            else:
                new_hwm = committed
            self._maybe_advance_hwm(s, d, b, md[1], hwm, new_hwm, True)
            d[P_REPLICA_STATE] = _set(s[P_REPLICA_STATE], b, updated)
            records = ((self._entry(s, b, fetch_offset),)
                       if fetch_offset < self._leo(s, b) else ())
            self._reply(s, d, m, (FETCH_RESP, source, b, ERR_NONE, md[4], fetch_offset,
                                  new_hwm if new_hwm > hwm else hwm, (), records))
            out.append(tuple(d))
        return out

    def _truncate_to_safe_point(self, s: State, b: int,
                                diverging: tuple[int, int]) -> tuple[Any, ...]:
        local = self._last_offset_for_epoch(s, b, diverging[0], False)
        if local[1] == NIL:
            raise SpecError("LastOffsetForEpoch returned Nil")
        if local[0] != diverging[0] or local[1] < diverging[1]:
            truncate_to = local[1]
        else:
            truncate_to = diverging[1]
        hwm = self._hwm(s, b)
        if truncate_to > 1:
            log = self._log(s, b)
            if truncate_to - 1 > len(log):
                raise SpecError("truncation beyond the log")
            return (log[:truncate_to - 1], hwm, truncate_to)
        return ((), hwm, 1)

    def receive_fetch_response(self, s: State, b: int) -> list[State]:
        """ReceiveFetchResponse: a follower ignores a stale response, delays after an error,
        truncates on a diverging epoch, or appends the record and takes the leader's HW."""
        if s[BROKER_STATE][b - 1][0] != RUNNING:
            return []
        out: list[State] = []
        row = s[BROKER_FETCHERS][b - 1]
        for m in s[MESSAGES]:
            if m[0] != FETCH_RESP or m[1] != b:
                continue
            _t, _dest, source, error, leader_epoch, fetch_offset, hwm, diverging, records = m
            partition, pending = row[source - 1]
            if not pending:
                continue
            d = list(s)
            if partition == () or (self.config.fetch_response_check and (
                    partition[0] != fetch_offset or s[P_MD][b - 1][4] != leader_epoch)):
                fetcher = (partition, False)
            elif error != ERR_NONE:
                fetcher = ((partition[0], partition[1], True), False)
            elif diverging != ():
                after = self._truncate_to_safe_point(s, b, diverging)
                d[P_DATA] = _set(s[P_DATA], b, after)
                fetcher = ((after[2], after[0][-1][0] if after[0] else 0, False), False)
            else:
                log = self._log(s, b)
                new_leo = len(log) + len(records) + 1
                last_fetched = records[-1][0] if records else partition[1]
                d[P_DATA] = _set(s[P_DATA], b, (
                    log + records, hwm if hwm <= new_leo else self._hwm(s, b), new_leo))
                fetcher = ((new_leo, last_fetched, False), False)
            d[BROKER_FETCHERS] = _set(s[BROKER_FETCHERS], b, _set(row, source, fetcher))
            self._discard(s, d, m)
            out.append(tuple(d))
        return out

    def write_record_to_leader(self, s: State, b: int) -> list[State]:
        """WriteRecordToLeader: a leader whose maximal ISR has MinISR members appends a value
        not written before (each of ``Values`` once: with the cfgs' ``{A}`` one write in all)."""
        md = s[P_MD][b - 1]
        if (s[BROKER_STATE][b - 1][0] != RUNNING or s[P_STATUS][b - 1] != LEADER
                or not _card(md[2]) >= self.config.min_isr):
            return []
        out: list[State] = []
        for v in self.values:
            if s[INV_SENT] & (1 << (v - 1)):
                continue
            log, old_hwm, leo = s[P_DATA][b - 1]
            new_leo = leo + 1
            committed = self._commit_offset(s, b, md[2], new_leo, s[P_REPLICA_STATE][b - 1]) + 1
            if self.config.kip966:
                new_hwm = committed if self._can_advance_hwm(md[1], old_hwm, committed) else old_hwm
            else:
                new_hwm = committed
            d = list(s)
            d[P_DATA] = _set(s[P_DATA], b, ((*log, (md[4], leo, v)),
                                            new_hwm if new_hwm > old_hwm else old_hwm, new_leo))
            if new_hwm > old_hwm:
                self._update_hwm_invariant_vars(s, d, b, old_hwm, new_hwm, True)
            d[INV_SENT] = s[INV_SENT] | (1 << (v - 1))
            if s[AUX_FLO][b - 1] == INT_MAX:
                d[AUX_FLO] = _set(s[AUX_FLO], b, leo)
            out.append(tuple(d))
        return out

    def _shutdown(self, s: State, b: int, status: int, epoch: int, lose_data: bool,
                  counter: int) -> list[State]:
        """What UncleanShutdown / CleanShutdown (DataLoss / NoDataLoss) share."""
        d = list(s)
        d[BROKER_STATE] = _set(s[BROKER_STATE], b, (status, epoch, 0, False))
        self._drop_fetch_sessions(s, d, b)
        d[P_STATUS] = _set(s[P_STATUS], b, ROLE_NIL)
        if lose_data:
            d[P_DATA] = _set(s[P_DATA], b, ((), 1, 1))
            d[P_LESO] = _set(s[P_LESO], b, NIL)
        d[P_REPLICA_STATE] = _set(s[P_REPLICA_STATE], b, self._blank_replica_states())
        self._reset_pending_ap(s, d, b)
        ctrs = s[AUX_CTRS]
        d[AUX_CTRS] = _set(ctrs, counter + 1, ctrs[counter] + 1)
        if s[P_STATUS][b - 1] == LEADER and self._hwm(s, b) < self._leo(s, b):
            self._fail_pending_writes(s, d, b)
        out = []
        for e in self._handle_broker_fenced(s, d, b):
            _st, reg_epoch, incarn = s[CON_BROKER_REG][b - 1]
            e[CON_BROKER_REG] = _set(s[CON_BROKER_REG], b, (FENCED, reg_epoch, incarn))
            e[AUX_FLO] = _set(s[AUX_FLO], b, INT_MAX)
            out.append(tuple(e))
        return out

    def unclean_shutdown(self, s: State, b: int) -> list[State]:
        """UncleanShutdown (v3.5) / DataLossShutdown (KIP-966): b stops and loses its log;
        the controller fences it.  v3.5 with AvoidLastReplicaStanding: never the last ISR
        member."""
        c = self.config
        if not s[AUX_CTRS][C_UNCLEAN] < c.unclean_limit:
            return []
        if s[BROKER_STATE][b - 1][0] in (OFFLINE_CLEAN, OFFLINE_DIRTY):
            return []
        isr = s[CON_PM][1]
        if (not c.kip966 and c.avoid_last_replica_standing and _has(isr, b)
                and _card(isr) == 1):
            return []
        return self._shutdown(s, b, OFFLINE_DIRTY, 0, True, C_UNCLEAN)

    def clean_shutdown(self, s: State, b: int) -> list[State]:
        """CleanShutdown (v3.5) / NoDataLossShutdown (KIP-966, for is_clean_shutdown in
        {FALSE, TRUE}: the broker epoch written to disk when clean): b stops, its log
        kept; the controller fences it."""
        if not s[AUX_CTRS][C_CLEAN] < self.config.clean_limit:
            return []
        if s[BROKER_STATE][b - 1][0] in (OFFLINE_CLEAN, OFFLINE_DIRTY):
            return []
        if not self.config.kip966:
            return self._shutdown(s, b, OFFLINE_CLEAN, 0, False, C_CLEAN)
        epoch = s[BROKER_STATE][b - 1][1]
        return [*self._shutdown(s, b, OFFLINE_CLEAN, 0, False, C_CLEAN),
                *self._shutdown(s, b, OFFLINE_CLEAN, epoch, False, C_CLEAN)]

    # -- invariants (the properties module) -----------------------------------------------------
    def _values_in_log(self, s: State, b: int) -> int:
        return sum(1 << (e[2] - 1) for e in set(self._log(s, b)))

    def inv_LeaderCompletenessProperty(self, s: State) -> bool:
        """The controller's (running) leader has every committed record and every
        positively acknowledged value."""
        if not s[INV_TRUE_HWM] > 1:
            return True
        leader = s[CON_PM][4]
        if leader == NO_LEADER or s[BROKER_STATE][leader - 1][0] != RUNNING:
            return True
        return bool(self._leo(s, leader) >= s[INV_TRUE_HWM]
                    and not s[INV_POS_ACKED] & ~self._values_in_log(s, leader))

    def inv_LeaderCandidateCompletenessProperty(self, s: State) -> bool:
        """No running ISR (KIP-966: or ELR) member misses a committed record."""
        true_hwm = s[INV_TRUE_HWM]
        if not true_hwm > 1:
            return True
        con = s[CON_PM]
        pool = con[1] | con[2] if self.config.kip966 else con[1]
        return not any(self._leo(s, b) < true_hwm and s[BROKER_STATE][b - 1][0] == RUNNING
                       for b in self.members(pool))

    def _non_stale_leader(self, s: State, b: int) -> bool:
        return bool(s[P_STATUS][b - 1] == LEADER and s[P_MD][b - 1][4] == s[CON_PM][5])

    def inv_ReplicationQuorumSupersetProperty(self, s: State) -> bool:
        """A non-stale leader's maximal ISR covers the controller's ISR (KIP-966: ISR and
        ELR, when the leader's ISR has MinISR members) and equals its ISR when no
        AlterPartition is pending."""
        con = s[CON_PM]
        for b in self.brokers:
            if not self._non_stale_leader(s, b):
                continue
            md = s[P_MD][b - 1]
            if not self._pending(s, b) and md[2] != md[1]:
                return False
            if self.config.kip966:
                if _card(md[1]) >= self.config.min_isr and (con[1] | con[2]) & ~md[2]:
                    return False
            elif con[1] & ~md[2]:
                return False
        return True

    def inv_LogMatchingProperty(self, s: State) -> bool:
        """Below both HWs, every two replicas hold the same value at each offset."""
        for offset in range(1, len(self.values) + 1):
            held = [self._entry(s, b, offset)[2] for b in self.brokers
                    if self._leo(s, b) > offset and self._hwm(s, b) > offset]
            if len(set(held)) > 1:
                return False
        return True

    def inv_MetadataLogMatchingProperty(self, s: State) -> bool:
        """Every broker's metadata log is a prefix of the controller's (by construction:
        the broker's copy is stored as its length)."""
        return all(n <= len(s[CON_LOG]) for n in s[BROKER_MD_LOG])

    def inv_ConsistentReadProperty(self, s: State) -> bool:
        """A non-stale leader's log holds every consumed record at its offset."""
        consumed = s[INV_CONSUMED]
        for b in self.brokers:
            if self._non_stale_leader(s, b):
                log = self._log(s, b)
                if len(log) < len(consumed) or log[:len(consumed)] != consumed:
                    return False
        return True

    def inv_NoCommittedRecordLostGlobally(self, s: State) -> bool:
        """Every positively acknowledged value is in some replica's log."""
        held = 0
        for b in self.brokers:
            held |= self._values_in_log(s, b)
        return not s[INV_POS_ACKED] & ~held

    def inv_MinIsrRecoveryQuorum(self, s: State) -> bool:
        """KIP-966: with ISR and ELR empty, the last-known ELR has MinISR members."""
        con = s[CON_PM]
        if con[1] == 0 and con[2] == 0:
            return _card(con[3]) == self.config.min_isr
        return True

    def inv_ValidControllerIsrAndElr(self, s: State) -> bool:
        """KIP-966: ISR and ELR are disjoint replica subsets; ELR empty at ISR >= MinISR."""
        con = s[CON_PM]
        if con[1] & ~con[0] or con[2] & ~con[0] or con[1] & con[2]:
            return False
        return not (_card(con[1]) >= self.config.min_isr and con[2])


def _plain(index: int, value: Any, model: KraftModel) -> Any:
    """A variable's value for traces: broker sets as sorted lists."""
    members = model.members
    if index == CON_UNFENCED:
        return members(value)
    if index in (CON_PM,):
        return _md_record(value, members)
    if index == CON_LOG:
        return [_md_record(r, members) for r in value]
    if index == P_MD:
        return [{"replicas": members(m[0]), "isr": members(m[1]),
                 "maximal_isr": members(m[2]), "leader": m[3], "leader_epoch": m[4],
                 "partition_epoch": m[5]} for m in value]
    if index == BROKER_STATE:
        return [{"status": STATUS_NAMES[v[0]], "broker_epoch": v[1], "incarnation_id": v[2],
                 "registered": v[3]} for v in value]
    if index == CON_BROKER_REG:
        return [{"status": "UNFENCED" if v[0] else "FENCED", "broker_epoch": v[1],
                 "incarnation_id": v[2]} for v in value]
    if index == P_STATUS:
        return [ROLE_NAMES[v] for v in value]
    if index in (INV_SENT, INV_POS_ACKED, INV_NEG_ACKED):
        return [name for v, name in enumerate(VALUE_NAMES, 1) if value >> (v - 1) & 1]
    if index == BROKER_MD_LOG:
        return [f"con_metadata_log[1..{n}]" for n in value]
    return value


def _md_record(r: tuple[Any, ...], members: Callable[[int], list[int]]) -> dict[str, Any]:
    record = {"replicas": members(r[0]), "isr": members(r[1]), "elr": members(r[2]),
              "last_known_elr": members(r[3]), "leader": r[4], "leader_epoch": r[5],
              "partition_epoch": r[6]}
    if r[7] >= 0:
        record["adding"] = members(r[7])
        record["removing"] = members(r[8])
    return record
