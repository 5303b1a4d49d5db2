"""Z3 encoding of Vanlightly's KRaft specifications (``tla-kraft-3.5``, ``tla-kraft-kip966``).

``KraftSystem`` is an ``isrlab.checker.z3.SymbolicSystem`` whose actions are the disjuncts of
the modules' ``Next`` (kafka-tlaplus ``kraft/v3.5`` and ``kraft/kip-966``), one instance per
broker (``BrokerStart(1)``, ...) plus ``PerformPartitionReassignment``, and whose invariants
are the modules' INVARIANTs by their names.  It is encoded from the specifications' actions
(``kafka_replication_v3_5.tla`` / ``kafka_replication_kip_966.tla`` and their functions
modules), mirroring ``isrlab.spec.tla_kraft.model`` step for step, without calling it.

Encoding (``n`` brokers ``1..n``; a broker set is one Bool per broker; ``Values = {A}``):

* every per-broker variable is one Z3 constant per broker (``bs.<b>.st``, ``md.<b>.isr.<j>``,
  ...), every integer an unbounded Int; ``Nil`` is -1, ``NoLeader`` 0, as in the port;
* a partition log holds at most ``|Values| = 1`` record (one value is ever written, and a
  follower only copies the leader's records), so a log is its length (0 or 1) and the
  leader epoch of its record; the log end offset is the length + 1, the record's offset 1;
* the controller's metadata log is a length and ``capacities.metadata_log`` record slots
  holding the fields brokers read (replicas, ISR, leader, leader epoch, partition epoch);
* ``messages`` (a set) is three groups of slots: one slot per (follower, leader) pair for
  the fetch request or response in flight between them, ``capacities.registrations`` slots
  for registration requests and responses, ``capacities.alter_partition`` slots for
  AlterPartition requests and responses.  Sending a message already present changes
  nothing; otherwise it takes the first free slot of its group;
* ``messages_discard`` keeps only the AlterPartition requests (``capacities.discarded``
  slots): no action reads the other discarded messages (``SendAlterPartitionRequest``'s
  ``__AvoidCycle`` is the only reader);
* ``ovf`` (Bool): a step needed more slots than the encoding has (a group full, a log beyond
  one record, a metadata log beyond its slots).  Every invariant is conjoined with ``¬ovf``,
  so a bounded search meets an overflow no later than the first trace of that length, and
  ``isrlab bmc`` reports it as an error instead of a verdict (never a silent cut).

A concrete state (``decode``/``pin``) is the port's state tuple projected by ``project``:
``messages_discard`` reduced to AlterPartition requests, metadata-log records to the fields
brokers read, and ``ovf`` appended.  Nothing dropped is read by an action or an invariant, so
the projection is a bisimulation: traces (and shortest violations) have the same lengths.

TLC's ``VIEW view`` plays no part: BMC searches traces of the state machine itself (every
variable); a shortest violating trace is a shortest one of the breadth-first search without
the view (``-p view=none``), which on the rows of docs/z3.md has TLC's length (with the
view).

Modelling shortcuts: cells of empty slots, of an absent record and of fields a message kind
does not have are unconstrained garbage that nothing reads; TLC's "should not happen" cases
(``SpecError`` in the port: an index outside a log) are not encoded.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from functools import cached_property, partial
from typing import Any, TypeAlias

import z3

from isrlab.checker.model import Model
from isrlab.checker.registry import ParamValue
from isrlab.checker.report import INIT_ACTION, TraceStep
from isrlab.checker.z3 import ActionInstance, Frame, Fresh, SymbolicProperty, Transition
from isrlab.spec.symbolic.bridge import DriftError
from isrlab.spec.tla_kraft.layout import (
    AP_REQ,
    AP_RESP,
    AUX_BROKER_EPOCH,
    AUX_CTRS,
    AUX_FLO,
    BLANK_MD,
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
    ROLE_NIL,
    RUNNING,
    STARTING,
    VALUE_A,
)
from isrlab.spec.tla_kraft.model import KraftConfig
from isrlab.spec.tla_kraft.params import kraft_config

Term: TypeAlias = Any  # a Z3 expression or a Python int/bool it coerces
Bool: TypeAlias = z3.BoolRef
Int: TypeAlias = z3.ArithRef
Vals: TypeAlias = dict[str, Any]
"""A draft of a state: variable name -> Z3 term (or Python constant)."""
Alt: TypeAlias = tuple[Any, Vals]
"""One successor of an action: its guard and its draft."""
Msg: TypeAlias = dict[str, Any]
"""A message as slot fields: field name -> term."""
ProjState: TypeAlias = tuple[Any, ...]

OVF = "ovf"
FRESH = "@fresh"
"""The key of a draft under which an action finds its step's ``Fresh`` parameters."""
FETCH_FIELDS = ("kind", "bep", "le", "off", "lfe", "err", "hw", "div", "dive", "divo", "rec",
                "rece")
_BOOL_FIELDS = ("div", "rec")
REG_FIELDS = ("kind", "b", "inc", "ep", "len")


def symbolic(kip966: bool, params: Mapping[str, ParamValue]) -> KraftSystem:
    """The symbolic ``tla-kraft-kip966`` (``tla-kraft-3.5``) for parsed registry parameters:
    the same constants, limits and mechanism checks as the explicit model."""
    return KraftSystem(kraft_config(kip966, params))


@dataclass(frozen=True, slots=True)
class Capacities:
    """Slots of the encoding's bounded structures (module docstring); ``ovf`` when short."""

    metadata_log: int = 8
    registrations: int = 2
    alter_partition: int = 3
    discarded: int = 3


def _and(parts: Sequence[Any]) -> Any:
    return z3.And(*parts) if parts else z3.BoolVal(True)


def _or(parts: Sequence[Any]) -> Any:
    return z3.Or(*parts) if parts else z3.BoolVal(False)


def _count(bits: Sequence[Any]) -> Any:
    return z3.Sum([z3.If(b, 1, 0) for b in bits]) if bits else z3.IntVal(0)


def _mask(bits: Sequence[bool]) -> int:
    return sum(1 << k for k, bit in enumerate(bits) if bit)


def _is_const(term: Any, value: Any) -> bool:
    """Whether ``term`` is syntactically the Python/Z3 constant ``value``."""
    if isinstance(term, bool | int):
        return bool(term == value) and type(term) is type(value)
    if isinstance(value, bool):
        return bool(z3.is_true(term) if value else z3.is_false(term))
    return False


class KraftSystem:
    """The symbolic ``tla-kraft-3.5`` / ``tla-kraft-kip966`` model (module docstring)."""

    def __init__(self, config: KraftConfig, capacities: Capacities | None = None) -> None:
        if config.values != 1:
            raise ValueError("the KRaft encoding holds one value (Values = {A}): "
                             f"values={config.values}")
        self.config = config
        self.caps = capacities or self.default_capacities(config)
        self.kip = config.kip966
        self.name = "tla-kraft-kip966" if config.kip966 else "tla-kraft-3.5"
        self.n = config.brokers
        self.replicas = config.brokers
        self.B = tuple(range(1, config.brokers + 1))
        self.pairs = tuple((f, ldr) for f in self.B for ldr in self.B if f != ldr)

    @staticmethod
    def default_capacities(c: KraftConfig) -> Capacities:
        """A registration slot per possible broker start (each follows a shutdown), the
        class defaults for the rest (no trace of the rows of docs/z3.md needed more);
        ``ovf`` reports a trace that needs more: the metadata log's 8 slots, for instance,
        can overflow only past 7 steps (Init holds one record, a step adds at most one)."""
        return Capacities(registrations=max(1, c.clean_limit + c.unclean_limit))

    # ----------------------------------------------------------------- signature

    def signature(self) -> Sequence[tuple[str, z3.SortRef]]:
        """State variables and their sorts (module docstring)."""
        return self._signature

    @cached_property
    def _signature(self) -> list[tuple[str, z3.SortRef]]:
        I, Bo = z3.IntSort(), z3.BoolSort()  # noqa: E741  # the two sorts, short
        sig: list[tuple[str, z3.SortRef]] = []

        def bset(prefix: str) -> None:
            sig.extend((f"{prefix}.{j}", Bo) for j in self.B)

        bset("unf")
        for b in self.B:
            sig += [(f"reg.{b}.unf", Bo), (f"reg.{b}.ep", I), (f"reg.{b}.inc", I)]
        for f in ("rep", "isr", "elr", "lke", "add", "rem"):
            bset(f"pm.{f}")
        sig += [("pm.ldr", I), ("pm.le", I), ("pm.pe", I), ("lg.len", I)]
        for k in range(self.caps.metadata_log):
            bset(f"lg.{k}.rep")
            bset(f"lg.{k}.isr")
            sig += [(f"lg.{k}.ldr", I), (f"lg.{k}.le", I), (f"lg.{k}.pe", I)]
        for b in self.B:
            sig += [(f"bs.{b}.st", I), (f"bs.{b}.ep", I), (f"bs.{b}.inc", I),
                    (f"bs.{b}.reg", Bo)]
            for p in self.B:
                sig += [(f"bf.{b}.{p}.has", Bo), (f"bf.{b}.{p}.off", I),
                        (f"bf.{b}.{p}.lfe", I), (f"bf.{b}.{p}.dly", Bo),
                        (f"bf.{b}.{p}.pend", Bo)]
            sig += [(f"mdl.{b}", I), (f"ps.{b}", I)]
            for f in ("rep", "isr", "max"):
                bset(f"md.{b}.{f}")
            sig += [(f"md.{b}.ldr", I), (f"md.{b}.le", I), (f"md.{b}.pe", I)]
            sig += [(f"dn.{b}", I), (f"de.{b}", I), (f"hw.{b}", I), (f"leso.{b}", I)]
            for p in self.B:
                sig += [(f"rs.{b}.{p}.leo", I), (f"rs.{b}.{p}.ep", I)]
            sig += [(f"pap.{b}.at", I)]
            sig += self._request_sig(f"pap.{b}.")
        for fol, ldr in self.pairs:
            sig += [(f"fx.{fol}.{ldr}.{k}", Bo if k in _BOOL_FIELDS else I)
                    for k in FETCH_FIELDS]
        for k in range(self.caps.registrations):
            sig += [(f"rg.{k}.{x}", I) for x in REG_FIELDS]
        for k in range(self.caps.alter_partition):
            sig += self._request_sig(f"ap.{k}.")
            sig += [(f"ap.{k}.err", I), (f"ap.{k}.rldr", I), (f"ap.{k}.rle", I),
                    (f"ap.{k}.rpe", I)]
            bset(f"ap.{k}.rrep")
            bset(f"ap.{k}.risr")
        for k in range(self.caps.discarded):
            sig += self._request_sig(f"apd.{k}.")
        sig += [("abe", I)] + [(f"ctr.{k}", I) for k in range(6)]
        sig += [(f"flo.{b}", I) for b in self.B]
        sig += [("sent", Bo), ("pos", Bo), ("neg", Bo), ("thw", I), ("cons.n", I),
                ("cons.e", I)]
        sig += [(flag, Bo) for flag in self._overflow_flags]
        return sig

    @cached_property
    def _overflow_flags(self) -> list[str]:
        """``ovf`` split per action instance (``ovf.<index>``, the index in ``actions()``):
        each action sets only its own flag, so that ``ovf`` is no variable that every step
        writes (the partial-order reduction sees which steps commute); ``ovf`` is their
        disjunction."""
        return [f"{OVF}.{k}" for k in range(len(self._makers))]

    def overflowed(self, s: Mapping[str, Any]) -> Any:
        """``ovf``: some step needed more slots than the encoding has (any action's flag)."""
        return _or([s[flag] for flag in self._overflow_flags])

    def _request_sig(self, prefix: str) -> list[tuple[str, z3.SortRef]]:
        """An AlterPartition request (and the slot's kind) under ``prefix``."""
        sig: list[tuple[str, z3.SortRef]] = [(f"{prefix}kind", z3.IntSort())]
        sig += [(f"{prefix}prop.{j}", z3.BoolSort()) for j in self.B]
        sig += [(f"{prefix}eps.{j}", z3.IntSort()) for j in self.B]
        sig += [(f"{prefix}{x}", z3.IntSort()) for x in ("src", "le", "pe", "bep")]
        return sig

    # ----------------------------------------------------------------- small helpers

    def bset(self, s: Mapping[str, Any], prefix: str) -> list[Any]:
        """The broker set stored under ``prefix.<b>``."""
        return [s[f"{prefix}.{j}"] for j in self.B]

    def put_set(self, d: Vals, prefix: str, bits: Sequence[Any]) -> None:
        for j, bit in zip(self.B, bits, strict=True):
            d[f"{prefix}.{j}"] = bit

    def has(self, bits: Sequence[Any], who: Any) -> Any:
        """``who \\in set`` for a broker id (a Python int or an Int term; 0 is NoLeader)."""
        if isinstance(who, int):
            return bits[who - 1] if 1 <= who <= self.n else z3.BoolVal(False)
        return _or([z3.And(who == j, bits[j - 1]) for j in self.B])

    def pick(self, who: Any, value: Callable[[int], Any]) -> Any:
        """``value(who)`` for a broker id term (``value(n)`` when out of range)."""
        if isinstance(who, int):
            return value(who)
        result = value(self.n)
        for j in reversed(self.B[:-1]):
            result = z3.If(who == j, value(j), result)
        return result

    def bit(self, who: Any) -> list[Any]:
        return [who == j if not isinstance(who, int) else z3.BoolVal(who == j) for j in self.B]

    @staticmethod
    def minus(a: Sequence[Any], b: Sequence[Any]) -> list[Any]:
        return [z3.And(x, z3.Not(y)) for x, y in zip(a, b, strict=True)]

    @staticmethod
    def union(a: Sequence[Any], b: Sequence[Any]) -> list[Any]:
        return [z3.Or(x, y) for x, y in zip(a, b, strict=True)]

    @staticmethod
    def inter(a: Sequence[Any], b: Sequence[Any]) -> list[Any]:
        return [z3.And(x, y) for x, y in zip(a, b, strict=True)]

    @staticmethod
    def empty(a: Sequence[Any]) -> Any:
        return z3.Not(_or(list(a)))

    @staticmethod
    def subset(a: Sequence[Any], b: Sequence[Any]) -> Any:
        return _and([z3.Implies(x, y) for x, y in zip(a, b, strict=True)])

    @staticmethod
    def same_set(a: Sequence[Any], b: Sequence[Any]) -> Any:
        return _and([x == y for x, y in zip(a, b, strict=True)])

    @staticmethod
    def ite_set(c: Any, a: Sequence[Any], b: Sequence[Any]) -> list[Any]:
        return [z3.If(c, x, y) for x, y in zip(a, b, strict=True)]

    @staticmethod
    def when(c: Any, d: Vals, update: Callable[[Vals], None]) -> None:
        """Apply ``update`` to ``d`` under condition ``c`` (an IF inside an action)."""
        if _is_const(c, False):
            return
        e = dict(d)
        update(e)
        if _is_const(c, True):
            d.update(e)
            return
        for k, v in e.items():
            if v is not d[k]:
                d[k] = z3.If(c, v, d[k])

    def leo(self, s: Mapping[str, Any], b: int) -> Any:
        return s[f"dn.{b}"] + 1

    def running(self, s: Mapping[str, Any], b: int) -> Any:
        return s[f"bs.{b}.st"] == RUNNING

    def offline(self, s: Mapping[str, Any], b: int) -> Any:
        st = s[f"bs.{b}.st"]
        return z3.Or(st == OFFLINE_CLEAN, st == OFFLINE_DIRTY)

    def pending(self, s: Mapping[str, Any], b: int) -> Any:
        """PendingAlterPartitionResponse(b)."""
        return s[f"pap.{b}.at"] > s[f"md.{b}.pe"]

    # ----------------------------------------------------------------- message slots

    def _req_fields(self) -> list[str]:
        return ([f"prop.{j}" for j in self.B] + [f"eps.{j}" for j in self.B]
                + ["src", "le", "pe", "bep"])

    def _ap_fields(self) -> list[str]:
        return (["kind", *self._req_fields(), "err", "rldr", "rle", "rpe"]
                + [f"rrep.{j}" for j in self.B] + [f"risr.{j}" for j in self.B])

    @staticmethod
    def slot(s: Mapping[str, Any], prefix: str, fields: Sequence[str]) -> Msg:
        return {f: s[prefix + f] for f in fields}

    def req_eq(self, a: Msg, b: Msg) -> Any:
        """Two AlterPartition requests are equal (epochs compared for members only)."""
        parts = [a[x] == b[x] for x in ("src", "le", "pe", "bep")]
        for j in self.B:
            parts += [a[f"prop.{j}"] == b[f"prop.{j}"],
                      z3.Implies(a[f"prop.{j}"], a[f"eps.{j}"] == b[f"eps.{j}"])]
        return _and(parts)

    @staticmethod
    def _kinded(slot: Msg, m: Msg, arms: Mapping[int, Callable[[], list[Any]]]) -> Any:
        """``slot`` holds message ``m``: the same kind and the fields of that kind."""
        kind = m["kind"]
        if isinstance(kind, int):
            return _and([slot["kind"] == kind, *arms[kind]()])
        return _and([slot["kind"] == kind] + [z3.Implies(kind == k, _and(arm()))
                                              for k, arm in arms.items()])

    def fetch_eq(self, slot: Msg, m: Msg) -> Any:
        return self._kinded(slot, m, {
            1: lambda: [slot[x] == m[x] for x in ("bep", "le", "off", "lfe")],
            2: lambda: [slot[x] == m[x] for x in ("err", "le", "off", "hw", "div", "rec")]
            + [z3.Implies(m["div"], z3.And(slot["dive"] == m["dive"],
                                             slot["divo"] == m["divo"])),
               z3.Implies(m["rec"], slot["rece"] == m["rece"])],
        })

    def reg_eq(self, slot: Msg, m: Msg) -> Any:
        base = [slot[x] == m[x] for x in ("b", "inc", "ep")]
        return self._kinded(slot, m, {1: lambda: base,
                                      2: lambda: [*base, slot["len"] == m["len"]]})

    def ap_eq(self, slot: Msg, m: Msg) -> Any:
        def resp() -> list[Any]:
            return ([slot[x] == m[x] for x in ("rldr", "rle", "rpe")]
                    + [slot[f"{x}.{j}"] == m[f"{x}.{j}"] for x in ("rrep", "risr")
                       for j in self.B])
        req = self.req_eq(slot, m)
        return self._kinded(slot, m, {1: lambda: [req], 2: lambda: [req, *resp()],
                                      3: lambda: [req, slot["err"] == m["err"]]})

    def apd_eq(self, slot: Msg, m: Msg) -> Any:
        return self._kinded(slot, m, {1: lambda: [self.req_eq(slot, m)]})

    def groups(self) -> list[tuple[list[str], list[str], Callable[[Msg, Msg], Any]]]:
        """Every message slot group: (slot prefixes, fields, equality)."""
        out: list[tuple[list[str], list[str], Callable[[Msg, Msg], Any]]] = [
            ([f"fx.{f}.{ldr}."], list(FETCH_FIELDS), self.fetch_eq) for f, ldr in self.pairs]
        out.append(([f"rg.{k}." for k in range(self.caps.registrations)], list(REG_FIELDS),
                    self.reg_eq))
        out.append(([f"ap.{k}." for k in range(self.caps.alter_partition)], self._ap_fields(),
                    self.ap_eq))
        return out

    def discard_group(self) -> tuple[list[str], list[str], Callable[[Msg, Msg], Any]]:
        return ([f"apd.{k}." for k in range(self.caps.discarded)],
                ["kind", *self._req_fields()], self.apd_eq)

    def fetch_group(self, f: int, ldr: int) -> tuple[list[str], list[str],
                                                      Callable[[Msg, Msg], Any]]:
        return ([f"fx.{f}.{ldr}."], list(FETCH_FIELDS), self.fetch_eq)

    def reg_group(self) -> tuple[list[str], list[str], Callable[[Msg, Msg], Any]]:
        return self.groups()[-2]

    def ap_group(self) -> tuple[list[str], list[str], Callable[[Msg, Msg], Any]]:
        return self.groups()[-1]

    @staticmethod
    def receive(s: Vals, group: tuple[list[str], list[str], Any], tag: str) -> Msg:
        """``\\E m \\in messages`` over a slot group: the fields of the slot a fresh index
        picks (an index past the last picks the last), so one formula serves every slot."""
        prefixes, fields, _eq = group
        if len(prefixes) == 1:
            return KraftSystem.slot(s, prefixes[0], fields)
        fresh: Fresh = s[FRESH]
        k = fresh.int(f"slot.{tag}")
        m: Msg = {}
        for f in fields:
            chosen = s[prefixes[-1] + f]
            for i in reversed(range(len(prefixes) - 1)):
                chosen = z3.If(k == i, s[prefixes[i] + f], chosen)
            m[f] = chosen
        return m

    @staticmethod
    def present(d: Mapping[str, Any], group: tuple[list[str], list[str], Any], m: Msg) -> Any:
        prefixes, fields, eq = group
        return _or([z3.And(d[p + "kind"] != 0, eq(KraftSystem.slot(d, p, fields), m))
                    for p in prefixes])

    @staticmethod
    def remove(d: Vals, group: tuple[list[str], list[str], Any], m: Msg) -> None:
        """``messages \\ {m}``: every slot holding ``m`` becomes free."""
        prefixes, fields, eq = group
        for p in prefixes:
            holds = eq(KraftSystem.slot(d, p, fields), m)
            d[p + "kind"] = z3.If(holds, 0, d[p + "kind"])

    @staticmethod
    def add(d: Vals, group: tuple[list[str], list[str], Any], m: Msg) -> None:
        """``messages \\union {m}``: unchanged when present, else the first free slot; ``ovf``
        when none is free."""
        prefixes, _fields, _eq = group
        fresh = z3.Not(KraftSystem.present(d, group, m))
        full: Any = z3.BoolVal(True)
        for p in prefixes:
            free = d[p + "kind"] == 0
            put = z3.And(fresh, free, full)
            for f, v in m.items():
                d[p + f] = z3.If(put, v, d[p + f])
            full = z3.And(full, z3.Not(free))
        d[OVF] = z3.Or(d[OVF], z3.And(fresh, full))

    def reply(self, d: Vals, group: Any, m: Msg, response: Msg, out_group: Any = None) -> None:
        """Reply(response, m): ``m`` removed (AlterPartition requests also discarded),
        ``response`` sent."""
        self.remove(d, group, m)
        self.add(d, out_group or group, response)

    def discard_request(self, d: Vals, m: Msg) -> None:
        """``messages_discard \\union {m}`` for an AlterPartition request ``m``."""
        self.add(d, self.discard_group(), {"kind": 1, **{f: m[f] for f in self._req_fields()}})

    # ----------------------------------------------------------------- init

    def initial_state(self) -> ProjState:
        """Init (the specs' ``Init``): broker 1 leads; replicas 1..RF, ISR 1..InitIsrSize;
        brokers outside the ISR fenced, stale and without metadata; every broker running."""
        c, n = self.config, self.n
        allb = (1 << n) - 1
        replicas = (1 << c.replication_factor) - 1
        isr = (1 << c.init_isr_size) - 1
        part_epoch = 1 if c.init_isr_size == c.replication_factor else 2
        unfenced = allb & ~(replicas & ~isr)

        def has(mask: int, b: int) -> bool:
            return bool(mask >> (b - 1) & 1)

        state: list[Any] = [None] * 23
        state[CON_UNFENCED] = unfenced
        state[CON_BROKER_REG] = tuple((1 if has(unfenced, b) else 0, b, b) for b in self.B)
        state[CON_LOG] = ((replicas, isr, 1, 1, part_epoch),)
        state[CON_PM] = (replicas, isr, 0, 0, 1, 1, part_epoch, 0, 0)
        state[BROKER_STATE] = tuple((RUNNING, b, b, True) for b in self.B)
        state[BROKER_FETCHERS] = tuple(
            tuple(((1, 0, False), False) if b != 1 and p == 1 else ((), False) for p in self.B)
            for b in self.B)
        state[BROKER_MD_LOG] = tuple(1 if has(unfenced, b) else 0 for b in self.B)
        state[P_STATUS] = tuple(LEADER if b == 1 else FOLLOWER if has(replicas, b) else ROLE_NIL
                                for b in self.B)
        state[P_MD] = tuple(BLANK_MD if not has(replicas, b)
                            else (replicas, isr, isr, 1, 1, part_epoch) if has(isr, b)
                            else (replicas, replicas, replicas, 1, 1, 1) for b in self.B)
        state[P_DATA] = tuple(((), 1, 1) for _ in self.B)
        state[P_LESO] = tuple(1 if b == 1 else NIL for b in self.B)
        state[P_REPLICA_STATE] = tuple(tuple((NIL, 0) for _ in self.B) for _ in self.B)
        state[P_PENDING_AP] = tuple((0, ()) for _ in self.B)
        state[MESSAGES] = state[MESSAGES_DISCARD] = ()
        state[AUX_BROKER_EPOCH] = n
        state[AUX_CTRS] = (n + 1, 0, 0, 0, 0, 0)
        state[AUX_FLO] = tuple(INT_MAX for _ in self.B)
        state[INV_SENT] = state[INV_POS_ACKED] = state[INV_NEG_ACKED] = 0
        state[INV_TRUE_HWM] = 1
        state[INV_CONSUMED] = ()
        return (*state, False)

    def init(self, s: Frame) -> Bool:
        """Init: frame ``s`` is ``initial_state()``."""
        return self.pin(s, self.initial_state())

    # ----------------------------------------------------------------- spec functions

    def committed(self, b: int, max_isr: Sequence[Any], rs_leo: Sequence[Any],
                  offset: int) -> Any:
        """IsCommitted: every other maximal-ISR member's fetch offset is past ``offset``."""
        return _and([z3.Implies(max_isr[j - 1], z3.And(rs_leo[j - 1] != NIL,
                                                       rs_leo[j - 1] > offset))
                     for j in self.B if j != b])

    def commit_offset(self, s: Vals, b: int, max_isr: Sequence[Any], leo: Any,
                      rs_leo: Sequence[Any]) -> Any:
        """GetCommitOffset: 0 with an empty log, else the highest offset below ``leo``
        committed (0 when none); offsets are at most 2 (one record)."""
        best: Any = z3.IntVal(0)
        for offset in (1, 2):
            best = z3.If(z3.And(offset < leo, self.committed(b, max_isr, rs_leo, offset)),
                         offset, best)
        return z3.If(self.leo(s, b) == 1, 0, best)

    def send_acks(self, s: Vals, d: Vals, b: int, lower: Any, higher: Any,
                  positive: bool) -> None:
        """SendAcksFor: value A acknowledged when sent, not yet acknowledged, and at an
        offset in ``lower..higher`` of b's log at or after b's first leader offset."""
        value = _and([s["sent"], z3.Not(s["pos"]), z3.Not(s["neg"]), lower <= 1, higher >= 1,
                      s[f"dn.{b}"] >= 1, s[f"flo.{b}"] <= 1])
        if positive:
            d["pos"] = z3.Or(s["pos"], value)
        else:
            d["neg"] = z3.Or(s["neg"], value)

    def update_hwm_inv_vars(self, s: Vals, d: Vals, b: int, old: Any, new: Any,
                            positive: Any) -> None:
        """UpdateHwmInvariantVars: acknowledgements, the true HW and the consumed records."""
        if isinstance(positive, bool):
            self.send_acks(s, d, b, old, new - 1 if positive else self.leo(s, b) - 1,
                           positive)
        else:
            self.when(positive, d, lambda e: self.send_acks(s, e, b, old, new - 1, True))
            self.when(z3.Not(positive), d,
                      lambda e: self.send_acks(s, e, b, old, self.leo(s, b) - 1, False))
        thw = s["thw"]
        d["thw"] = z3.If(new > thw, new, thw)
        grows = z3.And(new > thw, thw <= 1, new - 1 >= 1, s[f"dn.{b}"] >= 1)
        d["cons.n"] = z3.If(grows, s["cons.n"] + 1, s["cons.n"])
        d["cons.e"] = z3.If(z3.And(grows, s["cons.n"] == 0), s[f"de.{b}"], s["cons.e"])
        d[OVF] = z3.Or(d[OVF], z3.And(grows, s["cons.n"] >= 1))

    def can_advance(self, isr: Sequence[Any], old: Any, new: Any) -> Any:
        """v3.5: new > old; KIP-966's CanAdvanceHwm adds SafeToAdvanceHwm (ISR >= MinISR)."""
        if self.kip and self.config.hw_min_isr_gate:
            return z3.And(new > old, _count(isr) >= self.config.min_isr)
        return new > old

    def maybe_advance_hwm(self, s: Vals, d: Vals, b: int, isr: Sequence[Any], old: Any,
                          new: Any, positive: Any) -> None:
        def advance(e: Vals) -> None:
            e[f"hw.{b}"] = new
            self.update_hwm_inv_vars(s, e, b, old, new, positive)
        self.when(self.can_advance(isr, old, new), d, advance)

    def update_hwm_on_partition_change(self, s: Vals, d: Vals, b: int, md: Msg) -> None:
        """MaybeUpdateHwmAndAckOnPartitionChange."""
        rs_leo = [s[f"rs.{b}.{j}.leo"] for j in self.B]
        new = self.commit_offset(s, b, md["max"], self.leo(s, b), rs_leo) + 1
        positive = _count(md["max"]) >= self.config.min_isr
        self.maybe_advance_hwm(s, d, b, md["isr"], s[f"hw.{b}"], new, positive)

    def fail_pending_writes(self, s: Vals, d: Vals, b: int) -> None:
        self.send_acks(s, d, b, s[f"hw.{b}"], self.leo(s, b) - 1, False)

    def append_record(self, d: Vals, rec: Mapping[str, Any]) -> None:
        """``con_metadata_log`` grows by one record (``ovf`` beyond its slots)."""
        length = d["lg.len"]
        for k in range(self.caps.metadata_log):
            here = length == k
            for f in ("rep", "isr"):
                for j in self.B:
                    d[f"lg.{k}.{f}.{j}"] = z3.If(here, rec[f][j - 1], d[f"lg.{k}.{f}.{j}"])
            for f in ("ldr", "le", "pe"):
                d[f"lg.{k}.{f}"] = z3.If(here, rec[f], d[f"lg.{k}.{f}"])
        d["lg.len"] = length + 1
        d[OVF] = z3.Or(d[OVF], length >= self.caps.metadata_log)

    def apply_partition_change(self, s: Vals, d: Vals, replicas: Sequence[Any], leader: Any,
                               isr: Sequence[Any], elr: Sequence[Any], le: Any, pe: Any,
                               adding: Sequence[Any], removing: Sequence[Any]) -> None:
        """ApplyPartitionChange: new controller metadata and a PartitionChangeRecord (KIP-966:
        last-known ELR emptied at ISR >= MinISR, else grown by ELR members removed that are
        still replicas)."""
        if not self.kip:
            lke: list[Any] = [z3.BoolVal(False)] * self.n
        else:
            old_elr, old_lke = self.bset(s, "pm.elr"), self.bset(s, "pm.lke")
            grown = self.union(old_lke, self.inter(replicas, self.minus(old_elr, elr)))
            lke = self.ite_set(_count(isr) >= self.config.min_isr,
                               [z3.BoolVal(False)] * self.n, grown)
        for name, bits in (("rep", replicas), ("isr", isr), ("elr", elr), ("lke", lke),
                           ("add", adding), ("rem", removing)):
            self.put_set(d, f"pm.{name}", bits)
        d["pm.ldr"], d["pm.le"], d["pm.pe"] = leader, le, pe
        self.append_record(d, {"rep": replicas, "isr": isr, "ldr": leader, "le": le, "pe": pe})

    def update_elr(self, s: Vals, proposed: Sequence[Any], replicas: Sequence[Any]) -> list[Any]:
        """UpdateElrOnIsrOrReplicaChange (KIP-966); always {} in v3.5."""
        none = [z3.BoolVal(False)] * self.n
        if not self.kip:
            return none
        elr = self.union(self.inter(self.bset(s, "pm.elr"), replicas),
                         self.minus(self.inter(self.bset(s, "pm.isr"), replicas), proposed))
        return self.ite_set(_count(proposed) >= self.config.min_isr, none, elr)

    def on_broker_change(self, s: Vals, d: Vals, new_isr: Sequence[Any],
                         new_elr: Sequence[Any], new_unf: Sequence[Any]) -> list[Alt]:
        """MaybeUpdatePartitionOnBrokerChange: its CASE arms as guarded successors, one per
        candidate leader where an arm chooses one."""
        rep, isr, elr = self.bset(s, "pm.rep"), self.bset(s, "pm.isr"), self.bset(s, "pm.elr")
        ldr, le, pe = s["pm.ldr"], s["pm.le"], s["pm.pe"]
        add, rem = self.bset(s, "pm.add"), self.bset(s, "pm.rem")
        out: list[Alt] = []

        def change(guard: Any, leader: Any, i: Sequence[Any], e: Sequence[Any], new_le: Any
                   ) -> None:
            x = dict(d)
            self.apply_partition_change(s, x, rep, leader, i, e, new_le, pe + 1, add, rem)
            out.append((guard, x))

        if not self.kip:
            none = [z3.BoolVal(False)] * self.n
            candidates = self.inter(new_isr, new_unf)
            no_change = z3.Or(z3.And(ldr == NO_LEADER, self.empty(candidates)),
                              z3.And(self.has(new_isr, ldr), self.has(new_unf, ldr)))
            x = dict(d)
            self.when(z3.Not(self.same_set(new_isr, isr)), x, lambda e: self.apply_partition_change(
                s, e, rep, ldr, new_isr, none, le, pe + 1, add, rem))
            out.append((no_change, x))
            for cand in self.B:
                change(z3.And(z3.Not(no_change), candidates[cand - 1]), z3.IntVal(cand),
                       new_isr, none, le + 1)
            change(z3.And(z3.Not(no_change), self.empty(candidates)), z3.IntVal(NO_LEADER),
                   new_isr, none, le + 1)
            return out
        elr_unf = self.inter(new_elr, new_unf)
        no_change = z3.Or(z3.And(ldr == NO_LEADER, self.empty(new_isr), self.empty(elr_unf)),
                          self.has(new_isr, ldr))
        x = dict(d)
        self.when(z3.Not(z3.And(self.same_set(new_isr, isr), self.same_set(new_elr, elr))), x,
                  lambda e: self.apply_partition_change(s, e, rep, ldr, new_isr, new_elr, le,
                                                        pe + 1, add, rem))
        out.append((no_change, x))
        for cand in self.B:
            change(z3.And(z3.Not(no_change), new_isr[cand - 1]), z3.IntVal(cand), new_isr,
                   new_elr, le + 1)
        for cand in self.B:
            one = self.bit(cand)
            change(z3.And(z3.Not(no_change), self.empty(new_isr), elr_unf[cand - 1]),
                   z3.IntVal(cand), self.union(new_isr, one), self.minus(new_elr, one), le + 1)
        change(z3.And(z3.Not(no_change), self.empty(new_isr), self.empty(elr_unf)),
               z3.IntVal(NO_LEADER), new_isr, new_elr, le + 1)
        return out

    def _with_unfenced(self, alts: list[Alt], new_unf: Sequence[Any]) -> list[Alt]:
        for _g, x in alts:
            self.put_set(x, "unf", new_unf)
        return alts

    def handle_broker_fenced(self, s: Vals, d: Vals, b: int) -> list[Alt]:
        """HandleBrokerFenced: b leaves the unfenced set and the ISR (v3.5: never the last
        ISR member; KIP-966: the ISR may empty, the ELR is updated)."""
        isr, one = self.bset(s, "pm.isr"), self.bit(b)
        if self.kip:
            new_isr = self.minus(isr, one)
            new_elr = self.update_elr(s, new_isr, self.bset(s, "pm.rep"))
        else:
            new_isr = self.ite_set(_count(isr) == 1, isr, self.minus(isr, one))
            new_elr = [z3.BoolVal(False)] * self.n
        new_unf = self.minus(self.bset(s, "unf"), one)
        return self._with_unfenced(self.on_broker_change(s, d, new_isr, new_elr, new_unf),
                                   new_unf)

    def handle_broker_unfenced(self, s: Vals, d: Vals, b: int) -> list[Alt]:
        """HandleBrokerUnfenced: b joins the unfenced set; a leaderless partition may elect."""
        new_unf = self.union(self.bset(s, "unf"), self.bit(b))
        leaderless = s["pm.ldr"] == NO_LEADER
        alts = [(z3.And(leaderless, g), x) for g, x in self.on_broker_change(
            s, d, self.bset(s, "pm.isr"), self.bset(s, "pm.elr"), new_unf)]
        return self._with_unfenced([(z3.Not(leaderless), dict(d)), *alts], new_unf)

    def process_unclean_broker(self, s: Vals, d: Vals, b: int) -> list[Alt]:
        """ProcessUncleanBroker (KIP-966): b leaves the ISR and the ELR and is unfenced."""
        one = self.bit(b)
        new_unf = self.union(self.bset(s, "unf"), one)
        return self._with_unfenced(self.on_broker_change(
            s, d, self.minus(self.bset(s, "pm.isr"), one), self.minus(self.bset(s, "pm.elr"), one),
            new_unf), new_unf)

    def last_offset_for_epoch(self, s: Vals, b: int, req: Any, is_leader: bool
                              ) -> tuple[Any, Any]:
        """LastOffsetForEpoch on a log of at most one record: (epoch, end offset or Nil)."""
        dn, de, md_le = s[f"dn.{b}"], s[f"de.{b}"], s[f"md.{b}.le"]
        simple = [dn == 0, req == de]
        if is_leader:
            simple.append(md_le == req)
        above = z3.And(is_leader, md_le > req) if is_leader else z3.BoolVal(False)
        epoch = z3.If(z3.Or(simple), req, z3.If(de < req, de, req))
        offset = z3.If(z3.Or(simple), self.leo(s, b),
                       z3.If(de > req, 1, z3.If(above, self.leo(s, b), NIL)))
        return epoch, offset

    def drop_fetch_sessions(self, s: Vals, d: Vals, b: int) -> None:
        """DropFetchSessions: b's in-flight fetches dropped, its fetchers blank; a peer's
        pending fetch to b fails (delayed)."""
        for f, ldr in self.pairs:
            if b in (f, ldr):
                d[f"fx.{f}.{ldr}.kind"] = z3.IntVal(0)
        for b1 in self.B:
            for p in self.B:
                q = f"bf.{b1}.{p}."
                if b1 == b:
                    d[q + "has"], d[q + "pend"] = z3.BoolVal(False), z3.BoolVal(False)
                elif p == b:
                    d[q + "dly"] = z3.Or(s[q + "dly"], z3.And(s[q + "pend"], s[q + "has"]))
                    d[q + "pend"] = z3.BoolVal(False)

    def validate_alter_partition(self, s: Vals, b: int, m: Msg) -> Any:
        """ValidateAlterPartitionRequest: NONE, IneligibleReplica or FencedLeaderEpoch."""
        c = self.config
        ok = [s["pm.ldr"] == b, m["bep"] == s[f"reg.{b}.ep"]]
        if c.partition_epoch_check:
            ok.append(m["pe"] == s["pm.pe"])
        bad = []
        for j in self.B:
            eligible = [s[f"reg.{j}.unf"]]
            if c.kip903_check:
                eligible.append(z3.Or(m[f"eps.{j}"] == 0, s[f"reg.{j}.ep"] == m[f"eps.{j}"]))
            bad.append(z3.And(m[f"prop.{j}"], z3.Not(_and(eligible))))
        return z3.If(z3.Not(_and(ok)), ERR_FENCED_LEADER_EPOCH,
                     z3.If(_or(bad), ERR_INELIGIBLE_REPLICA, ERR_NONE))

    def converged(self, s: Vals, ldr: int, f: int) -> Any:
        q = f"rs.{ldr}.{f}."
        return z3.And(s[f"dn.{ldr}"] == s[f"dn.{f}"], s[f"hw.{ldr}"] == s[f"hw.{f}"],
                      s[q + "leo"] == self.leo(s, f), s[q + "ep"] == s[f"bs.{f}.ep"])

    def reset_pending_ap(self, d: Vals, b: int) -> None:
        d[f"pap.{b}.at"], d[f"pap.{b}.kind"] = z3.IntVal(0), z3.IntVal(0)

    def blank_replica_states(self, d: Vals, b: int) -> None:
        for j in self.B:
            d[f"rs.{b}.{j}.leo"], d[f"rs.{b}.{j}.ep"] = z3.IntVal(NIL), z3.IntVal(0)

    def remove_partition_from_fetchers(self, d: Vals, b: int) -> None:
        for p in self.B:
            d[f"bf.{b}.{p}.has"] = z3.BoolVal(False)

    def md(self, s: Mapping[str, Any], b: int) -> Msg:
        return {"rep": self.bset(s, f"md.{b}.rep"), "isr": self.bset(s, f"md.{b}.isr"),
                "max": self.bset(s, f"md.{b}.max"), "ldr": s[f"md.{b}.ldr"],
                "le": s[f"md.{b}.le"], "pe": s[f"md.{b}.pe"]}

    def put_md(self, d: Vals, b: int, md: Msg) -> None:
        for f in ("rep", "isr", "max"):
            self.put_set(d, f"md.{b}.{f}", md[f])
        for f in ("ldr", "le", "pe"):
            d[f"md.{b}.{f}"] = md[f]

    def blank_md(self) -> Msg:
        none = [z3.BoolVal(False)] * self.n
        return {"rep": none, "isr": none, "max": none, "ldr": z3.IntVal(NO_LEADER),
                "le": z3.IntVal(0), "pe": z3.IntVal(0)}

    def ite_md(self, c: Any, a: Msg, b: Msg) -> Msg:
        return {k: self.ite_set(c, a[k], b[k]) if isinstance(a[k], list)
                else z3.If(c, a[k], b[k]) for k in a}

    # ----------------------------------------------------------------- actions: brokers

    def broker_start(self, s: Vals, b: int) -> list[Alt]:
        """BrokerStart: an offline broker starts and sends a registration with a new
        incarnation id (KIP-966: and the broker epoch on disk)."""
        d = dict(s)
        incarn = s[f"ctr.{C_INCARN}"]
        epoch = s[f"bs.{b}.ep"]
        d[f"bs.{b}.st"], d[f"bs.{b}.inc"], d[f"bs.{b}.reg"] = (
            z3.IntVal(STARTING), incarn, z3.BoolVal(False))
        d[f"bs.{b}.ep"] = epoch if self.kip else z3.IntVal(0)
        d[f"ps.{b}"] = z3.IntVal(ROLE_NIL)
        self.add(d, self.reg_group(), {"kind": 1, "b": z3.IntVal(b), "inc": incarn,
                                       "ep": epoch if self.kip else z3.IntVal(NIL)})
        d[f"ctr.{C_INCARN}"] = incarn + 1
        return [(self.offline(s, b), d)]

    def receive_broker_reg_response(self, s: Vals, b: int) -> list[Alt]:
        """ReceiveBrokerRegResponse: b runs and catches up to the metadata log minus one
        record."""
        out: list[Alt] = []
        prefixes, fields, _eq = self.reg_group()
        m = self.receive(s, (prefixes, fields, _eq), f"{prefixes[0]}{b}")
        guard = [m["kind"] == 2, m["b"] == b, s[f"bs.{b}.st"] == STARTING,
                 z3.Not(s[f"bs.{b}.reg"])]
        if self.config.incarnation_check:
            guard.append(s[f"bs.{b}.inc"] == m["inc"])
        d = dict(s)
        d[f"bs.{b}.st"], d[f"bs.{b}.ep"], d[f"bs.{b}.reg"] = (
            z3.IntVal(RUNNING), m["ep"], z3.BoolVal(True))
        d[f"mdl.{b}"] = z3.If(m["len"] <= 1, 0, m["len"] - 1)
        self.put_md(d, b, self.blank_md())
        self.remove(d, self.reg_group(), {**m, "kind": 2})
        out.append((_and(guard), d))
        return out

    def receive_metadata_update(self, s: Vals, b: int) -> list[Alt]:
        """ReceiveMetadataUpdate: b takes a record of the metadata log past its position that
        concerns its replica and acts on it (no-op, delete, remain or become leader, become
        follower, wait for a leader)."""
        out: list[Alt] = []
        ready = z3.And(z3.Not(self.offline(s, b)), s[f"bs.{b}.reg"])
        curr = self.md(s, b)
        is_leader = s[f"ps.{b}"] == LEADER
        fresh: Fresh = s[FRESH]
        off = fresh.int(f"md_offset.{b}")  # \E md_offset \in position+1..Len(log)

        def record(field: str) -> Any:
            chosen = s[f"lg.{self.caps.metadata_log - 1}.{field}"]
            for k in reversed(range(self.caps.metadata_log - 1)):
                chosen = z3.If(off == k + 1, s[f"lg.{k}.{field}"], chosen)
            return chosen

        rec_rep = [record(f"rep.{j}") for j in self.B]
        rec_isr = [record(f"isr.{j}") for j in self.B]
        rec_ldr, rec_le, rec_pe = record("ldr"), record("le"), record("pe")
        needs = z3.If(curr["rep"][b - 1], z3.Or(is_leader, rec_le > curr["le"]),
                      z3.Or(is_leader, rec_rep[b - 1]))
        # position + 1 >= 1, and no record past the slots is read (the if-chain's default)
        guard = z3.And(ready, s[f"mdl.{b}"] < off, off >= 1, off <= s["lg.len"],
                       off <= self.caps.metadata_log, needs)
        new = {"rep": rec_rep, "isr": rec_isr, "max": rec_isr, "ldr": rec_ldr,
               "le": rec_le, "pe": rec_pe}
        base = dict(s)
        base[f"mdl.{b}"] = off
        out.append((z3.And(guard, z3.Not(rec_pe > curr["pe"])), dict(base)))
        base = dict(base)
        self.put_md(base, b, self.ite_md(rec_rep[b - 1], new, self.blank_md()))
        newer = z3.And(guard, rec_pe > curr["pe"])
        in_new, was_in = rec_rep[b - 1], curr["rep"][b - 1]
        deleted = z3.And(was_in, z3.Not(in_new))
        leads = z3.And(z3.Not(deleted), rec_ldr == b)
        remain = z3.And(leads, curr["ldr"] == b, curr["le"] == rec_le)
        is_new_leader = z3.And(z3.Not(is_leader), rec_ldr == b)
        follows = z3.And(z3.Not(deleted), rec_ldr != b, in_new, rec_ldr != NO_LEADER)
        stays = z3.And(rec_le == curr["le"], curr["ldr"] != b, rec_ldr != b)
        waits = z3.And(z3.Not(deleted), rec_ldr != b, z3.Not(z3.And(in_new,
                                                                  rec_ldr != NO_LEADER)))
        arms = self._metadata_arms(s, b, new, is_new_leader, deleted, leads, remain,
                                   follows, stays, waits, in_new)
        for cond, act in arms:
            d = dict(base)
            act(d)
            out.append((z3.And(newer, cond), d))
        return out

    def _metadata_arms(self, s: Vals, b: int, new: Msg, is_new_leader: Any, deleted: Any,
                       leads: Any, remain: Any, follows: Any, stays: Any, waits: Any,
                       in_new: Any) -> list[tuple[Any, Callable[[Vals], None]]]:
        """ReceiveMetadataUpdate's reactions to a newer record, each with its condition:
        delete, remain leader, become leader, become or remain follower, wait for a leader."""
        return [
            (deleted, lambda d: self._delete_partition(s, d, b, new)),
            (remain, lambda d: self._remain_leader(s, d, b, new)),
            (z3.And(leads, z3.Not(remain)),
             lambda d: self._become_leader(s, d, b, new, is_new_leader)),
            (z3.And(follows, z3.Not(stays)), lambda d: self._become_follower(s, d, b, new)),
            (z3.And(follows, stays), lambda d: None),
            (z3.And(waits, in_new), lambda d: self._wait_for_leader(s, d, b, new)),
        ]

    def _renounce(self, s: Vals, d: Vals, b: int, new: Msg) -> None:
        """EnsureLeadershipRenounced (MaybeFailPendingWrites, replica states, pending AP)."""
        fail = z3.And(s[f"hw.{b}"] < self.leo(s, b),
                      z3.Or(_count(new["isr"]) < self.config.min_isr, new["ldr"] != b))
        self.when(fail, d, lambda e: self.fail_pending_writes(s, e, b))
        self.blank_replica_states(d, b)
        self.reset_pending_ap(d, b)
        d[f"flo.{b}"] = z3.IntVal(INT_MAX)

    def _remain_leader(self, s: Vals, d: Vals, b: int, new: Msg) -> None:
        self.update_hwm_on_partition_change(s, d, b, new)
        self.when(new["pe"] >= s[f"pap.{b}.at"], d, lambda e: self.reset_pending_ap(e, b))

    def _become_leader(self, s: Vals, d: Vals, b: int, new: Msg, is_new: Any) -> None:
        d[f"ps.{b}"] = z3.IntVal(LEADER)
        self.update_hwm_on_partition_change(s, d, b, new)
        d[f"leso.{b}"] = self.leo(s, b)
        for j in self.B:
            keep = (z3.And(z3.Not(is_new), new["isr"][j - 1])
                    if self.config.reset_follower_state else z3.Not(is_new))
            d[f"rs.{b}.{j}.leo"] = z3.If(keep, s[f"rs.{b}.{j}.leo"], NIL)
            d[f"rs.{b}.{j}.ep"] = z3.If(keep, s[f"rs.{b}.{j}.ep"], 0)
        self.reset_pending_ap(d, b)
        self.remove_partition_from_fetchers(d, b)

    def _become_follower(self, s: Vals, d: Vals, b: int, new: Msg) -> None:
        d[f"ps.{b}"] = z3.IntVal(FOLLOWER)
        leader = new["ldr"]
        blank = self.pick(leader, lambda p: z3.Not(s[f"bf.{b}.{p}.has"]))
        reset = z3.Or(new["le"] > s[f"md.{b}.le"], blank) if self.config.fetcher_epoch_check \
            else blank
        added = (self.leo(s, b), z3.If(s[f"dn.{b}"] >= 1, s[f"de.{b}"], 0))
        for p in self.B:
            q = f"bf.{b}.{p}."
            d[q + "has"] = z3.If(reset, leader == p, s[q + "has"])
            d[q + "off"] = z3.If(reset, added[0], s[q + "off"])
            d[q + "lfe"] = z3.If(reset, added[1], s[q + "lfe"])
            d[q + "dly"] = z3.If(reset, False, s[q + "dly"])
        d[f"leso.{b}"] = z3.IntVal(NIL)
        self._renounce(s, d, b, new)

    def _wait_for_leader(self, s: Vals, d: Vals, b: int, new: Msg) -> None:
        d[f"ps.{b}"] = z3.IntVal(ROLE_NIL)
        self.remove_partition_from_fetchers(d, b)
        d[f"leso.{b}"] = z3.IntVal(NIL)
        self._renounce(s, d, b, new)

    def _delete_partition(self, s: Vals, d: Vals, b: int, new: Msg) -> None:
        d[f"ps.{b}"] = z3.IntVal(ROLE_NIL)
        self.remove_partition_from_fetchers(d, b)
        d[f"leso.{b}"] = z3.IntVal(NIL)
        d[f"dn.{b}"], d[f"hw.{b}"] = z3.IntVal(0), z3.IntVal(1)
        self._renounce(s, d, b, new)

    def caught_up(self, s: Vals, b: int, f: int, curr_isr: Sequence[Any],
                  timed_out: int) -> Any:
        """FollowerIsCaughtUp."""
        c = self.config
        leo = s[f"rs.{b}.{f}.leo"]
        outside = []
        if c.isr_fetched_check:
            outside.append(leo != NIL)
        if c.isr_hwm_check:
            outside.append(leo >= s[f"hw.{b}"])
        if c.isr_leso_check:
            outside.append(leo >= s[f"leso.{b}"])
        member = z3.BoolVal(not bool(timed_out >> (f - 1) & 1))
        return z3.If(curr_isr[f - 1], member, _and(outside))

    def send_alter_partition_request(self, s: Vals, b: int) -> list[Alt]:
        """SendAlterPartitionRequest: the leader proposes the ISR of its caught-up replicas
        (a subset of the ISR timed out while LeaderShrinkIsrLimit allows) and eagerly applies
        the maximal ISR; a request sent before is sent again only if valid (__AvoidCycle)."""
        ready = _and([self.running(s, b), z3.Not(self.pending(s, b)), s[f"ps.{b}"] == LEADER])
        shrink = s[f"ctr.{C_SHRINK}"] < self.config.leader_shrink_isr_limit
        out: list[Alt] = [(z3.And(ready, z3.Not(shrink), g), d)
                          for g, d in self._do_send_alter_partition(s, b, 0)]
        if self.config.leader_shrink_isr_limit > 0:
            isr = self.bset(s, f"md.{b}.isr")
            for timed_out in range(1 << self.n):
                if timed_out >> (b - 1) & 1:
                    continue
                inside = _and([isr[j - 1] for j in self.B if timed_out >> (j - 1) & 1])
                out += [(z3.And(ready, shrink, inside, g), d)
                        for g, d in self._do_send_alter_partition(s, b, timed_out)]
        return out

    def _do_send_alter_partition(self, s: Vals, b: int, timed_out: int) -> list[Alt]:
        md = self.md(s, b)
        curr = md["isr"]
        proposed = [z3.And(md["rep"][j - 1], True if j == b
                           else self.caught_up(s, b, j, curr, timed_out)) for j in self.B]
        request: Msg = {"kind": 1, "src": z3.IntVal(b), "le": md["le"], "pe": md["pe"],
                        "bep": s[f"bs.{b}.ep"]}
        for j in self.B:
            request[f"prop.{j}"] = proposed[j - 1]
            request[f"eps.{j}"] = (s[f"bs.{b}.ep"] if j == b
                                   else z3.If(curr[j - 1], 0, s[f"rs.{b}.{j}.ep"]))
        sent_before = z3.Or(self.present(s, self.ap_group(), request),
                            self.present(s, self.discard_group(), request))
        avoid_cycle = z3.Or(z3.Not(sent_before),
                            self.validate_alter_partition(s, b, request) == ERR_NONE)
        d = dict(s)
        self.add(d, self.ap_group(), request)
        self.put_set(d, f"md.{b}.max", self.union(proposed, curr))
        d[f"pap.{b}.at"] = md["pe"] + 1
        for f, v in request.items():
            d[f"pap.{b}.{f}"] = v
        shrinks = z3.Or([z3.And(curr[j - 1], z3.Not(proposed[j - 1])) for j in self.B])
        d[f"ctr.{C_SHRINK}"] = z3.If(shrinks, s[f"ctr.{C_SHRINK}"] + 1, s[f"ctr.{C_SHRINK}"])
        return [(z3.And(z3.Not(self.same_set(proposed, curr)), avoid_cycle), d)]

    def receive_alter_partition_response(self, s: Vals, b: int) -> list[Alt]:
        """ReceiveAlterPartitionResponse: the leader commits the partition state of an
        accepted request, or rolls its maximal ISR back to its ISR after an error."""
        ready = _and([self.running(s, b), s[f"ps.{b}"] == LEADER, self.pending(s, b)])
        md = self.md(s, b)
        pend = self.slot(s, f"pap.{b}.", ["kind", *self._req_fields()])
        prefixes, fields, _eq = self.ap_group()
        out: list[Alt] = []
        m = self.receive(s, (prefixes, fields, _eq), f"{prefixes[0]}{b}")
        matches = _and([ready, m["src"] == b, pend["kind"] == 1, self.req_eq(m, pend)])
        ok_part = {"rep": [m[f"rrep.{j}"] for j in self.B],
                   "isr": [m[f"risr.{j}"] for j in self.B],
                   "max": [m[f"risr.{j}"] for j in self.B], "ldr": m["rldr"],
                   "le": m["rle"], "pe": m["rpe"]}
        rollback = {**md, "max": md["isr"]}
        for kind, part, extra in (
                (2, ok_part, z3.And(m["rpe"] > md["pe"], m["rle"] == md["le"])),
                (3, rollback, z3.BoolVal(True))):
            d = dict(s)
            self.put_md(d, b, part)
            self.update_hwm_on_partition_change(s, d, b, part)
            self.reset_pending_ap(d, b)
            self.remove(d, self.ap_group(), {**m, "kind": kind})
            out.append((_and([m["kind"] == kind, matches, extra]), d))
        return out

    def send_fetch_request(self, s: Vals, b: int) -> list[Alt]:
        """SendFetchRequest: a follower fetches from the broker it believes leads, unless
        the two have converged."""
        out: list[Alt] = []
        for to in self.B:
            if to == b:
                continue
            q = f"bf.{b}.{to}."
            guard = _and([self.running(s, b), s[q + "has"], z3.Not(s[q + "pend"]),
                          s[f"md.{b}.ldr"] == to, z3.Not(self.converged(s, to, b))])
            d = dict(s)
            self.add(d, self.fetch_group(b, to), {
                "kind": 1, "bep": s[f"bs.{b}.ep"], "le": s[f"md.{b}.le"], "off": s[q + "off"],
                "lfe": s[q + "lfe"]})
            d[q + "dly"], d[q + "pend"] = z3.BoolVal(False), z3.BoolVal(True)
            out.append((guard, d))
        return out

    def receive_fetch_request(self, s: Vals, b: int) -> list[Alt]:
        """ReceiveFetchRequest: the leader answers with an error, a diverging epoch, or the
        next record, advancing its HW from the follower's fetch offset."""
        out: list[Alt] = []
        md = self.md(s, b)
        hwm = s[f"hw.{b}"]
        for f in self.B:
            if f == b:
                continue
            group = self.fetch_group(f, b)
            m = self.slot(s, group[0][0], FETCH_FIELDS)
            here = _and([self.running(s, b), m["kind"] == 1])
            request = {**m, "kind": 1}
            resp: Msg = {"kind": 2, "le": md["le"], "off": m["off"], "hw": hwm,
                         "div": z3.BoolVal(False), "rec": z3.BoolVal(False),
                         "dive": z3.IntVal(0), "divo": z3.IntVal(0), "rece": z3.IntVal(0)}
            # an error
            bad = z3.Or(s[f"ps.{b}"] != LEADER, md["le"] != m["le"])
            d = dict(s)
            error = z3.If(md["le"] < m["le"], ERR_UNKNOWN_LEADER_EPOCH,
                          z3.If(md["le"] > m["le"], ERR_FENCED_LEADER_EPOCH,
                                ERR_NOT_LEADER_OR_FOLLOWER))
            self.reply(d, group, request, {**resp, "err": error})
            out.append((z3.And(here, bad), d))
            # a diverging epoch
            last_e, last_o = self.last_offset_for_epoch(s, b, m["lfe"], True)
            diverging = z3.Or(last_e < m["lfe"], last_o < m["off"])
            d = dict(s)
            self.reply(d, group, request, {**resp, "err": z3.IntVal(ERR_NONE),
                                           "div": z3.BoolVal(True), "dive": last_e,
                                           "divo": last_o})
            out.append((_and([here, z3.Not(bad), diverging]), d))
            # the next record
            rs_leo = [m["off"] if j == f else s[f"rs.{b}.{j}.leo"] for j in self.B]
            committed = self.commit_offset(s, b, md["max"], self.leo(s, b), rs_leo) + 1
            new_hwm = (z3.If(self.can_advance(md["isr"], hwm, committed), committed, hwm)
                       if self.kip else committed)
            d = dict(s)
            self.maybe_advance_hwm(s, d, b, md["isr"], hwm, new_hwm, True)
            d[f"rs.{b}.{f}.leo"], d[f"rs.{b}.{f}.ep"] = m["off"], m["bep"]
            has_record = m["off"] < self.leo(s, b)
            self.reply(d, group, request, {
                **resp, "err": z3.IntVal(ERR_NONE), "hw": z3.If(new_hwm > hwm, new_hwm, hwm),
                "rec": has_record, "rece": s[f"de.{b}"]})
            d[OVF] = z3.Or(d[OVF], z3.And(has_record, m["off"] != 1))
            out.append((_and([here, z3.Not(bad), z3.Not(diverging)]), d))
        return out

    def receive_fetch_response(self, s: Vals, b: int) -> list[Alt]:
        """ReceiveFetchResponse: a follower ignores a stale response, delays after an error,
        truncates on a diverging epoch, or appends the record and takes the leader's HW."""
        out: list[Alt] = []
        for src in self.B:
            if src == b:
                continue
            group = self.fetch_group(b, src)
            m = self.slot(s, group[0][0], FETCH_FIELDS)
            q = f"bf.{b}.{src}."
            here = _and([self.running(s, b), m["kind"] == 2, s[q + "pend"]])
            stale_parts = [z3.Not(s[q + "has"])]
            if self.config.fetch_response_check:
                stale_parts += [s[q + "off"] != m["off"], s[f"md.{b}.le"] != m["le"]]
            stale = _or(stale_parts)
            response = {**m, "kind": 2}
            finish = partial(self._fetched, q, group, response)

            out.append((z3.And(here, stale), finish(dict(s), s[q + "off"], s[q + "lfe"],
                                                    s[q + "dly"])))
            fresh = z3.And(here, z3.Not(stale))
            out.append((z3.And(fresh, m["err"] != ERR_NONE),
                        finish(dict(s), s[q + "off"], s[q + "lfe"], z3.BoolVal(True))))
            ok = z3.And(fresh, m["err"] == ERR_NONE)
            # truncation to the safe point
            local_e, local_o = self.last_offset_for_epoch(s, b, m["dive"], False)
            to = z3.If(z3.Or(local_e != m["dive"], local_o < m["divo"]), local_o, m["divo"])
            d = dict(s)
            dn = z3.If(to > 1, to - 1, 0)
            d[f"dn.{b}"] = dn
            d[OVF] = z3.Or(d[OVF], to - 1 > s[f"dn.{b}"])
            out.append((z3.And(ok, m["div"]), finish(
                d, dn + 1, z3.If(dn >= 1, s[f"de.{b}"], 0), z3.BoolVal(False))))
            # the next record appended
            d = dict(s)
            grown = s[f"dn.{b}"] + z3.If(m["rec"], 1, 0)
            d[f"dn.{b}"] = grown
            d[f"de.{b}"] = z3.If(z3.And(s[f"dn.{b}"] == 0, m["rec"]), m["rece"], s[f"de.{b}"])
            d[f"hw.{b}"] = z3.If(m["hw"] <= grown + 1, m["hw"], s[f"hw.{b}"])
            d[OVF] = z3.Or(d[OVF], grown > 1)
            out.append((z3.And(ok, z3.Not(m["div"])), finish(
                d, grown + 1, z3.If(m["rec"], m["rece"], s[q + "lfe"]), z3.BoolVal(False))))
        return out

    def _fetched(self, q: str, group: Any, response: Msg, d: Vals, off: Any, lfe: Any,
                 dly: Any) -> Vals:
        """The fetcher ``q`` after a response: ``(off, lfe, dly)``, not pending; the response
        consumed."""
        d[q + "off"], d[q + "lfe"], d[q + "dly"] = off, lfe, dly
        d[q + "pend"] = z3.BoolVal(False)
        self.remove(d, group, response)
        return d

    def write_record_to_leader(self, s: Vals, b: int) -> list[Alt]:
        """WriteRecordToLeader: a leader whose maximal ISR has MinISR members appends value
        A, not written before."""
        md = self.md(s, b)
        guard = _and([self.running(s, b), s[f"ps.{b}"] == LEADER,
                      _count(md["max"]) >= self.config.min_isr, z3.Not(s["sent"])])
        old, leo = s[f"hw.{b}"], self.leo(s, b)
        rs_leo = [s[f"rs.{b}.{j}.leo"] for j in self.B]
        committed = self.commit_offset(s, b, md["max"], leo + 1, rs_leo) + 1
        new = (z3.If(self.can_advance(md["isr"], old, committed), committed, old)
               if self.kip else committed)
        d = dict(s)
        d[f"dn.{b}"] = s[f"dn.{b}"] + 1
        d[f"de.{b}"] = z3.If(s[f"dn.{b}"] == 0, md["le"], s[f"de.{b}"])
        d[OVF] = z3.Or(s[OVF], s[f"dn.{b}"] >= 1)
        d[f"hw.{b}"] = z3.If(new > old, new, old)
        self.when(new > old, d, lambda e: self.update_hwm_inv_vars(s, e, b, old, new, True))
        d["sent"] = z3.BoolVal(True)
        d[f"flo.{b}"] = z3.If(s[f"flo.{b}"] == INT_MAX, leo, s[f"flo.{b}"])
        return [(guard, d)]

    def _shutdown(self, s: Vals, b: int, status: int, epoch: Any, lose_data: bool,
                  counter: int) -> list[Alt]:
        """What UncleanShutdown / CleanShutdown (DataLoss / NoDataLoss) share."""
        d = dict(s)
        d[f"bs.{b}.st"], d[f"bs.{b}.ep"] = z3.IntVal(status), epoch
        d[f"bs.{b}.inc"], d[f"bs.{b}.reg"] = z3.IntVal(0), z3.BoolVal(False)
        self.drop_fetch_sessions(s, d, b)
        d[f"ps.{b}"] = z3.IntVal(ROLE_NIL)
        if lose_data:
            d[f"dn.{b}"], d[f"hw.{b}"], d[f"leso.{b}"] = z3.IntVal(0), z3.IntVal(1), \
                z3.IntVal(NIL)
        self.blank_replica_states(d, b)
        self.reset_pending_ap(d, b)
        d[f"ctr.{counter}"] = s[f"ctr.{counter}"] + 1
        self.when(z3.And(s[f"ps.{b}"] == LEADER, s[f"hw.{b}"] < self.leo(s, b)), d,
                  lambda e: self.fail_pending_writes(s, e, b))
        alts = self.handle_broker_fenced(s, d, b)
        for _g, e in alts:
            e[f"reg.{b}.unf"] = z3.BoolVal(False)
            e[f"flo.{b}"] = z3.IntVal(INT_MAX)
        return alts

    def unclean_shutdown(self, s: Vals, b: int) -> list[Alt]:
        """UncleanShutdown (v3.5) / DataLossShutdown (KIP-966): b stops and loses its log;
        the controller fences it (v3.5 with AvoidLastReplicaStanding: never the last ISR
        member)."""
        c = self.config
        guard = [s[f"ctr.{C_UNCLEAN}"] < c.unclean_limit, z3.Not(self.offline(s, b))]
        if not self.kip and c.avoid_last_replica_standing:
            isr = self.bset(s, "pm.isr")
            guard.append(z3.Not(z3.And(isr[b - 1], _count(isr) == 1)))
        return [(z3.And(_and(guard), g), d)
                for g, d in self._shutdown(s, b, OFFLINE_DIRTY, z3.IntVal(0), True, C_UNCLEAN)]

    def clean_shutdown(self, s: Vals, b: int) -> list[Alt]:
        """CleanShutdown (v3.5) / NoDataLossShutdown (KIP-966, with or without the broker
        epoch written to disk): b stops with its log; the controller fences it."""
        guard = z3.And(s[f"ctr.{C_CLEAN}"] < self.config.clean_limit,
                       z3.Not(self.offline(s, b)))
        epochs = [z3.IntVal(0)] + ([s[f"bs.{b}.ep"]] if self.kip else [])
        return [(z3.And(guard, g), d) for e in epochs
                for g, d in self._shutdown(s, b, OFFLINE_CLEAN, e, False, C_CLEAN)]

    # ----------------------------------------------------------------- actions: controller

    def receive_broker_reg_request(self, s: Vals, b: int) -> list[Alt]:
        """ReceiveBrokerRegRequest: the controller registers b with a new broker epoch and
        unfences it (KIP-966: a request with broker epoch 0 is an unclean broker)."""
        out: list[Alt] = []
        prefixes, fields, _eq = self.reg_group()
        epoch = s["abe"] + 1
        m = self.receive(s, (prefixes, fields, _eq), f"{prefixes[0]}{b}")
        guard = _and([m["kind"] == 1, m["b"] == b,
                      z3.Or(z3.Not(s[f"reg.{b}.unf"]), s[f"reg.{b}.inc"] == m["inc"])])
        d = dict(s)
        d[f"reg.{b}.unf"], d[f"reg.{b}.ep"], d[f"reg.{b}.inc"] = (
            z3.BoolVal(True), epoch, m["inc"])
        branches: list[Alt] = []
        if self.kip:
            branches += [(z3.And(m["ep"] == 0, g), x)
                         for g, x in self.process_unclean_broker(s, d, b)]
            branches += [(z3.And(m["ep"] != 0, g), x)
                         for g, x in self.handle_broker_unfenced(s, d, b)]
        else:
            branches = self.handle_broker_unfenced(s, d, b)
        response = {"kind": z3.IntVal(2), "b": z3.IntVal(b), "inc": m["inc"], "ep": epoch,
                    "len": s["lg.len"]}
        for g, x in branches:
            self.reply(x, self.reg_group(), {**m, "kind": 1}, {**response, "kind": 2})
            x["abe"] = epoch
            out.append((z3.And(guard, g), x))
        return out

    def receive_alter_partition_request(self, s: Vals, b: int) -> list[Alt]:
        """ReceiveAlterPartitionRequest: the controller validates the request, commits the
        proposed ISR (completing a reassignment when it can) and replies."""
        out: list[Alt] = []
        prefixes, fields, _eq = self.ap_group()
        rep, ldr, le, pe = self.bset(s, "pm.rep"), s["pm.ldr"], s["pm.le"], s["pm.pe"]
        add, rem = self.bset(s, "pm.add"), self.bset(s, "pm.rem")
        none = [z3.BoolVal(False)] * self.n
        m = self.receive(s, (prefixes, fields, _eq), f"{prefixes[0]}{b}")
        request = {**{f: m[f] for f in self._req_fields()}, "kind": 1}
        here = z3.And(m["kind"] == 1, m["src"] == b)
        error = self.validate_alter_partition(s, b, m)
        d = dict(s)
        self.reply(d, self.ap_group(), request, {**request, "kind": 3, "err": error})
        self.discard_request(d, request)
        out.append((z3.And(here, error != ERR_NONE), d))
        prop = [m[f"prop.{j}"] for j in self.B]
        final_rep, final_isr = self.minus(rep, rem), self.minus(prop, rem)
        complete = _and([z3.Not(z3.And(self.empty(add), self.empty(rem))),
                         self.subset(add, final_isr),
                         _count(final_isr) >= self.config.min_isr])
        new_rep = self.ite_set(complete, final_rep, rep)
        new_isr = self.ite_set(complete, final_isr, prop)
        new_elr = self.ite_set(complete, self.update_elr(s, final_isr, final_rep),
                               self.update_elr(s, prop, rep))
        new_le = z3.If(complete, le + 1, le)
        new_add, new_rem = self.ite_set(complete, none, add), self.ite_set(complete, none, rem)
        for nl in self.B:
            guard = _and([here, error == ERR_NONE, new_isr[nl - 1],
                          z3.Or(z3.Not(self.has(new_isr, ldr)), ldr == nl)])
            d = dict(s)
            self.apply_partition_change(s, d, new_rep, z3.IntVal(nl), new_isr, new_elr,
                                        new_le, pe + 1, new_add, new_rem)
            resp = {**request, "kind": 2, "rldr": z3.IntVal(nl), "rle": new_le,
                    "rpe": pe + 1}
            for j in self.B:
                resp[f"rrep.{j}"], resp[f"risr.{j}"] = new_rep[j - 1], new_isr[j - 1]
            self.reply(d, self.ap_group(), request, resp)
            self.discard_request(d, request)
            out.append((guard, d))
        return out

    def fence_broker(self, s: Vals, b: int) -> list[Alt]:
        """FenceBroker: the controller fences an unfenced broker (missed heartbeats)."""
        guard = z3.And(s[f"ctr.{C_FENCE}"] < self.config.fence_broker_limit, s[f"reg.{b}.unf"])
        alts = self.handle_broker_fenced(s, dict(s), b)
        for _g, e in alts:
            e[f"reg.{b}.unf"] = z3.BoolVal(False)
            e[f"ctr.{C_FENCE}"] = s[f"ctr.{C_FENCE}"] + 1
        return [(z3.And(guard, g), e) for g, e in alts]

    def unfence_broker(self, s: Vals, b: int) -> list[Alt]:
        """UnfenceBroker: the controller unfences a fenced, running broker (a heartbeat)."""
        guard = z3.And(z3.Not(s[f"reg.{b}.unf"]), self.running(s, b))
        alts = self.handle_broker_unfenced(s, dict(s), b)
        for _g, e in alts:
            e[f"reg.{b}.unf"] = z3.BoolVal(True)
        return [(z3.And(guard, g), e) for g, e in alts]

    def perform_partition_reassignment(self, s: Vals) -> list[Alt]:
        """PerformPartitionReassignment: an operator reassigns the replicas (adding,
        removing), one successor per choice of the two sets and of the leader."""
        c = self.config
        if c.reassignment_limit <= 0:
            return []
        rep, isr, ldr = self.bset(s, "pm.rep"), self.bset(s, "pm.isr"), s["pm.ldr"]
        le, pe = s["pm.le"], s["pm.pe"]
        idle = z3.And(self.empty(self.bset(s, "pm.add")), self.empty(self.bset(s, "pm.rem")))
        ready = _and([s[f"ctr.{C_REASSIGN}"] < c.reassignment_limit, idle])
        none = [z3.BoolVal(False)] * self.n
        out: list[Alt] = []
        for adding in range(1 << self.n):
            for removing in range(1 << self.n):
                if not (adding or removing):
                    continue
                add = [z3.BoolVal(bool(adding >> (j - 1) & 1)) for j in self.B]
                rem = [z3.BoolVal(bool(removing >> (j - 1) & 1)) for j in self.B]
                valid = _and([_count(rep) + bin(adding).count("1") - bin(removing).count("1")
                              >= c.min_isr, self.empty(self.inter(add, rep)),
                              self.subset(rem, rep)])
                grow = self.union(rep, add)
                final_rep, final_isr = self.minus(grow, rem), self.minus(isr, rem)
                complete = _and([self.subset(add, final_isr),
                                 _count(final_isr) >= c.min_isr,
                                 _count(final_rep) > 0])
                new_rep = self.ite_set(complete, final_rep, grow)
                new_isr = self.ite_set(complete, final_isr, isr)
                new_elr = self.ite_set(complete, self.update_elr(s, final_isr, final_rep),
                                       self.bset(s, "pm.elr"))
                new_le = z3.If(complete, le + 1, le)
                new_add = self.ite_set(complete, none, add)
                new_rem = self.ite_set(complete, none, rem)
                for nl in self.B:
                    guard = _and([ready, valid, new_isr[nl - 1],
                                  z3.Or(z3.Not(self.has(new_isr, ldr)), ldr == nl)])
                    d = dict(s)
                    self.apply_partition_change(s, d, new_rep, z3.IntVal(nl), new_isr,
                                                new_elr, new_le, pe + 1, new_add, new_rem)
                    d[f"ctr.{C_REASSIGN}"] = s[f"ctr.{C_REASSIGN}"] + 1
                    out.append((guard, d))
        return out

    # ----------------------------------------------------------------- Next

    def _table(self) -> list[tuple[str, Callable[[Vals, int], list[Alt]]]]:
        kip = self.kip
        return [
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
        ]

    @cached_property
    def _names(self) -> list[str]:
        return [name for name, _sort in self.signature()]

    def _relation(self, make: Callable[[Vals], list[Alt]], flag: str
                  ) -> Callable[[Frame, Frame, Fresh], Bool]:
        cache: dict[tuple[str, str, str], Bool] = {}

        def rel(s: Frame, t: Frame, fresh: Fresh) -> Bool:
            # frames of the same names are the same constants: built once per pair of frames
            key = (str(s["abe"]), str(t["abe"]), fresh.prefix)
            if key not in cache:
                cache[key] = self._disjunction(s, t, self._drafts(make, flag, s, fresh))
            return cache[key]
        return rel

    @staticmethod
    def _drafts(make: Callable[[Vals], list[Alt]], flag: str, s: Frame, fresh: Fresh
                ) -> list[Alt]:
        """The successors ``make`` drafts from frame ``s``, the action's own overflow flag
        ``flag`` standing for ``ovf`` (read and set as ``ovf``)."""
        alts = make({**s.terms, FRESH: fresh, OVF: s[flag]})
        for _g, d in alts:
            if OVF in d:  # a draft listed twice is renamed once
                d[flag] = d.pop(OVF)
        return alts

    def _disjunction(self, s: Frame, t: Frame, alts: Sequence[Alt]) -> Bool:
        """One disjunct per successor: its guard and every variable of ``t`` equal to its
        draft.  (Measured on the public row with Yices: 40 s of solver CPU, against 79 s
        with one if-chain per variable over the alternatives of all of Next; docs/z3.md.)"""
        same = {v: t[v] == s[v] for v in self._names}
        return _or([z3.And(g, *[same[v] if d[v] is s[v] else t[v] == d[v]
                                for v in self._names])
                    for g, d in alts if not _is_const(g, False)])

    def _factored(self, make: Callable[[Vals], list[Alt]], flag: str) -> Callable[
            [Frame, Frame, Fresh], tuple[Bool, frozenset[str]]]:
        """The relation of ``_relation`` without its frame conditions (``ActionInstance``'s
        ``factored``): the variables some successor's draft changes, and one disjunct per
        successor equating only those."""
        cache: dict[tuple[str, str, str], tuple[Bool, frozenset[str]]] = {}

        def factored(s: Frame, t: Frame, fresh: Fresh) -> tuple[Bool, frozenset[str]]:
            key = (str(s["abe"]), str(t["abe"]), fresh.prefix)
            if key not in cache:
                alts = [(g, d) for g, d in self._drafts(make, flag, s, fresh)
                        if not _is_const(g, False)]
                writes = [v for v in self._names if any(d[v] is not s[v] for _g, d in alts)]
                update = _or([z3.And(g, *[t[v] == d[v] for v in writes]) for g, d in alts])
                cache[key] = (update, frozenset(writes))
            return cache[key]
        return factored

    @cached_property
    def _makers(self) -> list[tuple[str, str, Callable[[Vals], list[Alt]]]]:
        """(family, label, successors of a draft) of every instance, in ``actions()``'s
        order."""
        out: list[tuple[str, str, Callable[[Vals], list[Alt]]]] = [
            (name, f"{name}({b})", partial(self._at, act, b))
            for b in self.B for name, act in self._table()]
        if self.config.reassignment_limit > 0:
            out.append(("PerformPartitionReassignment", "PerformPartitionReassignment",
                        self.perform_partition_reassignment))
        return out

    def actions(self) -> Sequence[ActionInstance]:
        """Next: for each broker every action of the module in its order, then
        PerformPartitionReassignment (labelled as the port labels them)."""
        return self._actions

    @staticmethod
    def _at(act: Callable[[Vals, int], list[Alt]], b: int, s: Vals) -> list[Alt]:
        return act(s, b)

    @cached_property
    def _actions(self) -> list[ActionInstance]:
        return [ActionInstance(family, label, self._relation(make, flag),
                               self._factored(make, flag))
                for (family, label, make), flag in zip(self._makers, self._overflow_flags,
                                                       strict=True)]

    def symmetry_breaking(self, names: Sequence[str]) -> dict[str, Any]:
        """None: broker 1 leads initially, so the brokers are not interchangeable."""
        return {"first_step": None, "symmetries": [], "violation": None}

    # ----------------------------------------------------------------- invariants

    def _fits(self, s: Mapping[str, Any]) -> Any:
        return z3.Not(self.overflowed(s))

    def leader_completeness(self, s: Frame) -> Bool:
        """LeaderCompletenessProperty: the controller's running leader has every committed
        record and every positively acknowledged value."""
        thw, ldr = s["thw"], s["pm.ldr"]
        ok = [z3.Implies(ldr == b, z3.Or(z3.Not(self.running(s, b)), z3.And(
            self.leo(s, b) >= thw, z3.Implies(s["pos"], s[f"dn.{b}"] >= 1)))) for b in self.B]
        return z3.And(self._fits(s), z3.Or(thw <= 1, ldr == NO_LEADER, _and(ok)))

    def leader_candidate_completeness(self, s: Frame) -> Bool:
        """LeaderCandidateCompletenessProperty: no running ISR (KIP-966: or ELR) member
        misses a committed record."""
        thw = s["thw"]
        pool = self.bset(s, "pm.isr")
        if self.kip:
            pool = self.union(pool, self.bset(s, "pm.elr"))
        bad = [_and([pool[b - 1], self.leo(s, b) < thw, self.running(s, b)]) for b in self.B]
        return z3.And(self._fits(s), z3.Or(thw <= 1, z3.Not(_or(bad))))

    def replication_quorum_superset(self, s: Frame) -> Bool:
        """ReplicationQuorumSupersetProperty: a non-stale leader's maximal ISR covers the
        controller's ISR (KIP-966: ISR and ELR, when its ISR has MinISR members) and equals
        its ISR when no AlterPartition is pending."""
        parts = [self._fits(s)]
        con = self.bset(s, "pm.isr")
        if self.kip:
            con = self.union(con, self.bset(s, "pm.elr"))
        for b in self.B:
            md = self.md(s, b)
            non_stale = z3.And(s[f"ps.{b}"] == LEADER, md["le"] == s["pm.le"])
            ok = [z3.Or(self.pending(s, b), self.same_set(md["max"], md["isr"]))]
            covers = self.subset(con, md["max"])
            ok.append(z3.Implies(_count(md["isr"]) >= self.config.min_isr, covers)
                      if self.kip else covers)
            parts.append(z3.Implies(non_stale, _and(ok)))
        return _and(parts)

    def log_matching(self, s: Frame) -> Bool:
        """LogMatchingProperty: with one value (Values = {A}) every record below two HWs holds
        the same value, so only the encoding's bounds are checked."""
        return self._fits(s)

    def metadata_log_matching(self, s: Frame) -> Bool:
        """MetadataLogMatchingProperty: every broker's metadata log is a prefix of the
        controller's (kept as a length, as in the port)."""
        return z3.And(self._fits(s), _and([s[f"mdl.{b}"] <= s["lg.len"] for b in self.B]))

    def consistent_read(self, s: Frame) -> Bool:
        """ConsistentReadProperty: a non-stale leader's log holds every consumed record."""
        parts = [self._fits(s)]
        for b in self.B:
            non_stale = z3.And(s[f"ps.{b}"] == LEADER, s[f"md.{b}.le"] == s["pm.le"])
            holds = z3.And(s["cons.n"] <= s[f"dn.{b}"],
                           z3.Implies(s["cons.n"] >= 1, s[f"de.{b}"] == s["cons.e"]))
            parts.append(z3.Implies(non_stale, holds))
        return _and(parts)

    def no_committed_record_lost(self, s: Frame) -> Bool:
        """NoCommittedRecordLostGlobally: an acknowledged value is in some replica's log."""
        return z3.And(self._fits(s), z3.Implies(s["pos"], _or([s[f"dn.{b}"] >= 1
                                                                for b in self.B])))

    def min_isr_recovery_quorum(self, s: Frame) -> Bool:
        """MinIsrRecoveryQuorum (KIP-966): with ISR and ELR empty, the last-known ELR has
        MinISR members."""
        blank = z3.And(self.empty(self.bset(s, "pm.isr")), self.empty(self.bset(s, "pm.elr")))
        return z3.And(self._fits(s), z3.Implies(
            blank, _count(self.bset(s, "pm.lke")) == self.config.min_isr))

    def valid_controller_isr_and_elr(self, s: Frame) -> Bool:
        """ValidControllerIsrAndElr (KIP-966): ISR and ELR disjoint subsets of the replicas;
        the ELR empty at ISR >= MinISR."""
        rep, isr, elr = (self.bset(s, "pm.rep"), self.bset(s, "pm.isr"),
                         self.bset(s, "pm.elr"))
        return _and([self._fits(s), self.subset(isr, rep), self.subset(elr, rep),
                     self.empty(self.inter(isr, elr)),
                     z3.Not(z3.And(_count(isr) >= self.config.min_isr,
                                   z3.Not(self.empty(elr))))])

    def invariants(self) -> Sequence[SymbolicProperty]:
        """The module's INVARIANTs by their names (KIP-966: and ValidControllerIsrAndElr);
        each also says the trace fits the encoding (``ovf`` false)."""
        table = {
            "LeaderCompletenessProperty": self.leader_completeness,
            "LeaderCandidateCompletenessProperty": self.leader_candidate_completeness,
            "ReplicationQuorumSupersetProperty": self.replication_quorum_superset,
            "LogMatchingProperty": self.log_matching,
            "MetadataLogMatchingProperty": self.metadata_log_matching,
            "ConsistentReadProperty": self.consistent_read,
            "NoCommittedRecordLostGlobally": self.no_committed_record_lost,
            "MinIsrRecoveryQuorum": self.min_isr_recovery_quorum,
            "ValidControllerIsrAndElr": self.valid_controller_isr_and_elr,
        }
        names = (*INVARIANTS_KIP966, "ValidControllerIsrAndElr") if self.kip else INVARIANTS_V35
        return [SymbolicProperty(name, table[name]) for name in names]

    # ----------------------------------------------------------------- concrete states

    def project(self, state: Sequence[Any]) -> ProjState:
        """The port's state tuple as this encoding sees it (module docstring): AlterPartition
        requests only in ``messages_discard``, metadata records cut to the fields brokers
        read, ``ovf`` false appended."""
        out = list(state)
        out[MESSAGES_DISCARD] = tuple(m for m in state[MESSAGES_DISCARD] if m[0] == AP_REQ)
        out[CON_LOG] = tuple((r[0], r[1], r[4], r[5], r[6]) for r in state[CON_LOG])
        return (*out, False)

    def explicit_view(self, model: Model[Any], state: Any) -> ProjState:
        """``project`` of an explicit ``KraftModel`` state (packed)."""
        return self.project(model.unpack(state))  # type: ignore[attr-defined]  # KraftModel

    def beyond_encoding(self, trace: Sequence[Transition[ProjState]]) -> str | None:
        """Why a trace the search found is no verdict: its last state left the encoding's
        bounds (``ovf``: a slot group, a log or the metadata log full), or ``None``."""
        if not trace[-1].state[-1]:
            return None
        c = self.caps
        return (f"{self.name}: a trace of {len(trace)} states ({trace[-1].label} last) needs "
                f"more than the encoding's slots ({c.metadata_log} metadata records, "
                f"{c.registrations} registration and {c.alter_partition} AlterPartition "
                f"messages, {c.discarded} discarded requests, one fetch message per pair, "
                f"one record per log); no verdict at this depth")

    def replay(self, model: Model[Any], trace: Sequence[Transition[ProjState]]
               ) -> tuple[TraceStep, ...]:
        """The explicit model's own trace through the states of a symbolic trace (the two
        meet on ``project``); ``DriftError`` if the explicit model cannot take a step."""
        starts = [x for x in model.init_states()
                  if self.explicit_view(model, x) == trace[0].state]
        if not starts:
            raise DriftError("no initial state of the explicit model matches the symbolic one")
        current = starts[0]
        steps = [TraceStep(INIT_ACTION, model.variables(current))]
        for index, step in enumerate(trace[1:], start=1):
            chosen = next(((label, succ) for label, succ in model.next_states(current)
                           if label == step.label
                           and self.explicit_view(model, succ) == step.state), None)
            if chosen is None:
                raise DriftError(f"step {index} ({step.label}) of the symbolic trace is not "
                                 f"a step of the explicit model {model.name}")
            label, current = chosen
            steps.append(TraceStep(label, model.variables(current)))
        return tuple(steps)

    def decode(self, model: z3.ModelRef, s: Frame) -> ProjState:
        """The projected state a Z3 model gives frame ``s`` (reads only live cells)."""

        def val(name: str) -> int:
            v: int = model.eval(s[name], model_completion=True).as_long()
            return v

        def flag(name: str) -> bool:
            return bool(z3.is_true(model.eval(s[name], model_completion=True)))

        def mask(prefix: str) -> int:
            return _mask([flag(f"{prefix}.{j}") for j in self.B])

        B = self.B
        st: list[Any] = [None] * 23
        st[CON_UNFENCED] = mask("unf")
        st[CON_BROKER_REG] = tuple((int(flag(f"reg.{b}.unf")), val(f"reg.{b}.ep"),
                                    val(f"reg.{b}.inc")) for b in B)
        st[CON_PM] = (mask("pm.rep"), mask("pm.isr"), mask("pm.elr"), mask("pm.lke"),
                      val("pm.ldr"), val("pm.le"), val("pm.pe"), mask("pm.add"),
                      mask("pm.rem"))
        st[CON_LOG] = tuple((mask(f"lg.{k}.rep"), mask(f"lg.{k}.isr"), val(f"lg.{k}.ldr"),
                             val(f"lg.{k}.le"), val(f"lg.{k}.pe"))
                            for k in range(min(val("lg.len"), self.caps.metadata_log)))
        st[BROKER_STATE] = tuple((val(f"bs.{b}.st"), val(f"bs.{b}.ep"), val(f"bs.{b}.inc"),
                                  flag(f"bs.{b}.reg")) for b in B)

        def fetcher(q: str) -> Any:
            part = ((val(q + "off"), val(q + "lfe"), flag(q + "dly"))
                    if flag(q + "has") else ())
            return (part, flag(q + "pend"))

        st[BROKER_FETCHERS] = tuple(tuple(fetcher(f"bf.{b}.{p}.") for p in B) for b in B)
        st[BROKER_MD_LOG] = tuple(val(f"mdl.{b}") for b in B)
        st[P_STATUS] = tuple(val(f"ps.{b}") for b in B)
        st[P_MD] = tuple((mask(f"md.{b}.rep"), mask(f"md.{b}.isr"), mask(f"md.{b}.max"),
                          val(f"md.{b}.ldr"), val(f"md.{b}.le"), val(f"md.{b}.pe")) for b in B)
        st[P_DATA] = tuple((((val(f"de.{b}"), 1, VALUE_A),) * min(val(f"dn.{b}"), 1),
                            val(f"hw.{b}"), val(f"dn.{b}") + 1) for b in B)
        st[P_LESO] = tuple(val(f"leso.{b}") for b in B)
        st[P_REPLICA_STATE] = tuple(tuple((val(f"rs.{b}.{p}.leo"), val(f"rs.{b}.{p}.ep"))
                                          for p in B) for b in B)

        def request(p: str) -> tuple[Any, ...]:
            prop = [j for j in B if flag(f"{p}prop.{j}")]
            src = val(p + "src")
            return (AP_REQ, _mask([j in prop for j in B]),
                    tuple((j, val(f"{p}eps.{j}")) for j in prop), src, val(p + "le"),
                    val(p + "pe"), val(p + "bep"), src)

        st[P_PENDING_AP] = tuple((val(f"pap.{b}.at"), request(f"pap.{b}.")
                                  if val(f"pap.{b}.kind") == 1 else ()) for b in B)
        msgs: set[tuple[Any, ...]] = set()
        for f, ldr in self.pairs:
            p = f"fx.{f}.{ldr}."
            kind = val(p + "kind")
            if kind == 1:
                msgs.add((FETCH_REQ, ldr, f, val(p + "bep"), val(p + "le"), val(p + "off"),
                          val(p + "lfe")))
            elif kind == 2:
                div = (val(p + "dive"), val(p + "divo")) if flag(p + "div") else ()
                recs = ((val(p + "rece"), 1, VALUE_A),) if flag(p + "rec") else ()
                msgs.add((FETCH_RESP, f, ldr, val(p + "err"), val(p + "le"), val(p + "off"),
                          val(p + "hw"), div, recs))
        for k in range(self.caps.registrations):
            p = f"rg.{k}."
            kind = val(p + "kind")
            if kind == 1:
                msgs.add((REG_REQ, val(p + "b"), val(p + "inc"), val(p + "ep")))
            elif kind == 2:
                msgs.add((REG_RESP, val(p + "ep"), val(p + "inc"), val(p + "len"), val(p + "b")))
        for k in range(self.caps.alter_partition):
            p = f"ap.{k}."
            kind = val(p + "kind")
            if kind == 1:
                msgs.add(request(p))
            elif kind == 2:
                msgs.add((AP_RESP, ERR_NONE, mask(p + "rrep"), mask(p + "risr"),
                          val(p + "rldr"), val(p + "rle"), val(p + "rpe"), request(p),
                          val(p + "src")))
            elif kind == 3:
                msgs.add((AP_RESP, val(p + "err"), request(p), val(p + "src")))
        st[MESSAGES] = tuple(sorted(msgs))
        st[MESSAGES_DISCARD] = tuple(sorted({request(f"apd.{k}.")
                                             for k in range(self.caps.discarded)
                                             if val(f"apd.{k}.kind") == 1}))
        st[AUX_BROKER_EPOCH] = val("abe")
        st[AUX_CTRS] = tuple(val(f"ctr.{k}") for k in range(6))
        st[AUX_FLO] = tuple(val(f"flo.{b}") for b in B)
        st[INV_SENT], st[INV_POS_ACKED], st[INV_NEG_ACKED] = (
            int(flag("sent")), int(flag("pos")), int(flag("neg")))
        st[INV_TRUE_HWM] = val("thw")
        st[INV_CONSUMED] = ((val("cons.e"), 1, VALUE_A),) * min(val("cons.n"), 1)
        return (*st, any(flag(name) for name in self._overflow_flags))

    # -- pin ------------------------------------------------------------------------------------

    def _request_fields(self, m: Sequence[Any]) -> Msg:
        """An AP_REQ tuple as request fields (``ValueError`` if it is not one)."""
        _t, proposed, epochs, src, le, pe, bep, dest = m
        if src != dest:
            raise ValueError(f"AlterPartition request {m!r}: sender and source differ")
        fields: Msg = {"kind": 1, "src": src, "le": le, "pe": pe, "bep": bep}
        eps = dict(epochs)
        for j in self.B:
            fields[f"prop.{j}"] = bool(proposed >> (j - 1) & 1)
            fields[f"eps.{j}"] = eps.get(j, 0)
        return fields

    def _message_fields(self, m: Sequence[Any]) -> tuple[Any, Msg]:
        """The group and fields of a message tuple of the port."""
        kind = m[0]
        if kind == FETCH_REQ:
            _t, to, frm, bep, le, off, lfe = m
            return self.fetch_group(frm, to), {"kind": 1, "bep": bep, "le": le, "off": off,
                                               "lfe": lfe}
        if kind == FETCH_RESP:
            _t, dest, src, err, le, off, hw, div, recs = m
            if len(recs) > 1 or any(r[1] != 1 for r in recs):
                raise ValueError(f"fetch response {m!r} outside the encoding")
            return self.fetch_group(dest, src), {
                "kind": 2, "err": err, "le": le, "off": off, "hw": hw, "div": bool(div),
                "dive": div[0] if div else 0, "divo": div[1] if div else 0,
                "rec": bool(recs), "rece": recs[0][0] if recs else 0}
        if kind == REG_REQ:
            return self.reg_group(), {"kind": 1, "b": m[1], "inc": m[2], "ep": m[3], "len": 0}
        if kind == REG_RESP:
            return self.reg_group(), {"kind": 2, "ep": m[1], "inc": m[2], "len": m[3],
                                      "b": m[4]}
        if kind == AP_REQ:
            return self.ap_group(), self._request_fields(m)
        if m[1] == ERR_NONE:
            _t, _e, rep, isr, ldr, le, pe, req, _b = m
            fields = {**self._request_fields(req), "kind": 2, "rldr": ldr, "rle": le,
                      "rpe": pe}
            for j in self.B:
                fields[f"rrep.{j}"] = bool(rep >> (j - 1) & 1)
                fields[f"risr.{j}"] = bool(isr >> (j - 1) & 1)
            return self.ap_group(), fields
        _t, err, req, _b = m
        return self.ap_group(), {**self._request_fields(req), "kind": 3, "err": err}

    def _pin_group(self, s: Frame, group: Any, messages: Sequence[Msg]) -> list[Any]:
        """The group's slots hold exactly ``messages`` (as a set), each message in one slot:
        ``add`` and ``remove`` never put a message in two slots, and a frame that did would
        have a full group where the state has room (an ``ovf`` step no state has)."""
        prefixes, fields, eq = group
        slots = [self.slot(s, p, fields) for p in prefixes]
        parts = [_or([eq(x, m) for x in slots]) for m in messages]
        parts += [z3.Or(x["kind"] == 0, _or([eq(x, m) for m in messages])) for x in slots]
        parts += [z3.Or(x["kind"] == 0, y["kind"] == 0, z3.Not(eq(x, y)))
                  for i, x in enumerate(slots) for y in slots[i + 1:]]
        return parts

    def pin(self, s: Frame, state: ProjState) -> Bool:
        """Frame ``s`` is the projected ``state`` (on exactly what ``decode`` reads)."""
        B = self.B
        parts: list[Any] = [self.overflowed(s) == bool(state[-1])]

        def bits(prefix: str, value: int) -> None:
            parts.extend(s[f"{prefix}.{j}"] == bool(value >> (j - 1) & 1) for j in B)

        bits("unf", state[CON_UNFENCED])
        for b, (st, ep, inc) in zip(B, state[CON_BROKER_REG], strict=True):
            parts += [s[f"reg.{b}.unf"] == bool(st), s[f"reg.{b}.ep"] == ep,
                      s[f"reg.{b}.inc"] == inc]
        pm = state[CON_PM]
        for name, value in zip(("rep", "isr", "elr", "lke"), pm[:4], strict=True):
            bits(f"pm.{name}", value)
        parts += [s["pm.ldr"] == pm[4], s["pm.le"] == pm[5], s["pm.pe"] == pm[6]]
        bits("pm.add", pm[7])
        bits("pm.rem", pm[8])
        log = state[CON_LOG]
        if len(log) > self.caps.metadata_log:
            raise ValueError(f"metadata log of {len(log)} records outside the encoding")
        parts.append(s["lg.len"] == len(log))
        for k, (rep, isr, ldr, le, pe) in enumerate(log):
            bits(f"lg.{k}.rep", rep)
            bits(f"lg.{k}.isr", isr)
            parts += [s[f"lg.{k}.ldr"] == ldr, s[f"lg.{k}.le"] == le, s[f"lg.{k}.pe"] == pe]
        for b in B:
            st, ep, inc, reg = state[BROKER_STATE][b - 1]
            parts += [s[f"bs.{b}.st"] == st, s[f"bs.{b}.ep"] == ep, s[f"bs.{b}.inc"] == inc,
                      s[f"bs.{b}.reg"] == reg]
            for p in B:
                part, pend = state[BROKER_FETCHERS][b - 1][p - 1]
                q = f"bf.{b}.{p}."
                parts += [s[q + "has"] == (part != ()), s[q + "pend"] == pend]
                if part != ():
                    parts += [s[q + "off"] == part[0], s[q + "lfe"] == part[1],
                              s[q + "dly"] == part[2]]
            parts += [s[f"mdl.{b}"] == state[BROKER_MD_LOG][b - 1],
                      s[f"ps.{b}"] == state[P_STATUS][b - 1]]
            rep, isr, mx, ldr, le, pe = state[P_MD][b - 1]
            bits(f"md.{b}.rep", rep)
            bits(f"md.{b}.isr", isr)
            bits(f"md.{b}.max", mx)
            parts += [s[f"md.{b}.ldr"] == ldr, s[f"md.{b}.le"] == le, s[f"md.{b}.pe"] == pe]
            data, hw, leo = state[P_DATA][b - 1]
            if len(data) > 1 or leo != len(data) + 1 or any(e[1:] != (1, VALUE_A)
                                                             for e in data):
                raise ValueError(f"partition data {state[P_DATA][b - 1]!r} outside the encoding")
            parts += [s[f"dn.{b}"] == len(data), s[f"hw.{b}"] == hw,
                      s[f"leso.{b}"] == state[P_LESO][b - 1]]
            if data:
                parts.append(s[f"de.{b}"] == data[0][0])
            for p in B:
                leo_p, ep_p = state[P_REPLICA_STATE][b - 1][p - 1]
                parts += [s[f"rs.{b}.{p}.leo"] == leo_p, s[f"rs.{b}.{p}.ep"] == ep_p]
            pe_ap, req = state[P_PENDING_AP][b - 1]
            parts += [s[f"pap.{b}.at"] == pe_ap, s[f"pap.{b}.kind"] == (1 if req else 0)]
            if req:
                pend = self.slot(s, f"pap.{b}.", ["kind", *self._req_fields()])
                parts.append(self.req_eq(pend, self._request_fields(req)))
        grouped: dict[int, list[Msg]] = {}
        groups = self.groups()
        for m in state[MESSAGES]:
            group, fields = self._message_fields(m)
            grouped.setdefault(self._group_index(group), []).append(fields)
        for k, group in enumerate(groups):
            parts += self._pin_group(s, group, grouped.get(k, []))
        parts += self._pin_group(s, self.discard_group(),
                                 [self._request_fields(m) for m in state[MESSAGES_DISCARD]])
        parts += [s["abe"] == state[AUX_BROKER_EPOCH]]
        parts += [s[f"ctr.{k}"] == v for k, v in enumerate(state[AUX_CTRS])]
        parts += [s[f"flo.{b}"] == state[AUX_FLO][b - 1] for b in B]
        parts += [s["sent"] == bool(state[INV_SENT]), s["pos"] == bool(state[INV_POS_ACKED]),
                  s["neg"] == bool(state[INV_NEG_ACKED]), s["thw"] == state[INV_TRUE_HWM]]
        consumed = state[INV_CONSUMED]
        if len(consumed) > 1:
            raise ValueError("more than one consumed record: outside the encoding")
        parts.append(s["cons.n"] == len(consumed))
        if consumed:
            parts.append(s["cons.e"] == consumed[0][0])
        return _and(parts)

    def _group_index(self, group: Any) -> int:
        first = group[0][0]
        for k, g in enumerate(self.groups()):
            if g[0][0] == first:
                return k
        raise ValueError(f"no slot group {first!r}")
