"""Z3 encoding of ``tla-async-isr`` (module AsyncIsr), for BMC and the induction proof.

State variables (``n`` replicas, ``r1`` = index 0 is the leader; ``S`` ranges over the
``2^n`` subsets of the replicas as bit masks):

* ``cIsr.j`` (Bool), ``cVer`` (Int): controllerState;
* ``lIsr.j``, ``pIsr.j`` (Bool), ``lVer``, ``pVer`` (Int), ``off.j`` (Int): leaderState;
* ``req.S`` and ``upd.S``: the versions ``v`` with the message ``[isr |-> S, version |-> v]``
  in ``requests`` / ``updates`` — an array Int → Bool when unbounded, one Bool ``req.S.v``
  per version ``0 … max_version + 1`` when bounded.

Bounded (``max_offset``/``max_version`` given), every action also requires the pre-state to
lie within TLC's CONSTRAINT, so that the unrolled behaviours are exactly the explicit
model's (a state outside it is reached and checked, never left).  Unbounded, offsets and
versions are unbounded integers (the proofs).  ``HighWatermark ≥ x`` is encoded as "some
member of the HW's ISR has an offset ≤ x" (TLA+'s Min over a set that always holds the
leader).  ``decode`` gives the explicit model's state tuple (message versions read up to
the controller's version + 1).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from functools import cached_property
from typing import Any, TypeAlias

import z3

from isrlab.checker.registry import ParamValue
from isrlab.checker.z3 import ActionInstance, Frame, Fresh, SymbolicProperty

Bool: TypeAlias = z3.BoolRef
Int: TypeAlias = z3.ArithRef
State = tuple[int, ...]


def _r(i: int) -> str:
    return f"r{i + 1}"


@dataclass(frozen=True)
class AsyncIsrSystem:
    """The symbolic AsyncIsr for ``replicas`` replicas (see the module docstring)."""

    replicas: int
    maximal: bool = True
    max_offset: int | None = None
    max_version: int | None = None
    message_versions: int | None = None
    name: str = "tla-async-isr"

    @property
    def ids(self) -> range:
        """Replica indices."""
        return range(self.replicas)

    @property
    def subsets(self) -> range:
        """Every subset of the replicas as a bit mask."""
        return range(1 << self.replicas)

    @property
    def bounded(self) -> bool:
        """Whether the CONSTRAINT bounds apply."""
        return self.max_version is not None

    @property
    def finite(self) -> bool:
        """Whether the message sets are finite Boolean vectors (bounded, or
        ``message_versions`` given: messages of versions ``0 … message_versions`` only)."""
        return self.bounded or self.message_versions is not None

    @property
    def versions(self) -> range:
        """The message versions of a finite encoding."""
        if self.max_version is not None:
            return range(self.max_version + 2)
        assert self.message_versions is not None
        return range(self.message_versions + 1)

    def signature(self) -> Sequence[tuple[str, z3.SortRef]]:
        """State variables and their sorts."""
        return self._signature

    @cached_property
    def _signature(self) -> list[tuple[str, z3.SortRef]]:
        ints, bools = z3.IntSort(), z3.BoolSort()
        sig: list[tuple[str, z3.SortRef]] = [("cVer", ints), ("lVer", ints), ("pVer", ints)]
        for j in self.ids:
            sig += [(f"cIsr.{j}", bools), (f"lIsr.{j}", bools), (f"pIsr.{j}", bools),
                    (f"off.{j}", ints)]
        for kind in ("req", "upd"):
            for m in self.subsets:
                if self.finite:
                    sig += [(f"{kind}.{m}.{v}", bools) for v in self.versions]
                else:
                    sig.append((f"{kind}.{m}", z3.ArraySort(ints, bools)))
        return sig

    # ------------------------------------------------------------------ helpers

    def has(self, s: Frame, kind: str, m: int, version: Int | int) -> Bool:
        """The message ``[isr |-> m, version |-> version]`` is in ``kind`` (req/upd)."""
        if not self.finite:
            result: Bool = z3.Select(s[f"{kind}.{m}"], version)
            return result
        if isinstance(version, int):
            return s[f"{kind}.{m}.{version}"] if version in self.versions else z3.BoolVal(False)
        return z3.Or([z3.And(version == v, s[f"{kind}.{m}.{v}"]) for v in self.versions])

    def _vars(self, kind: str) -> set[str]:
        if self.finite:
            return {f"{kind}.{m}.{v}" for m in self.subsets for v in self.versions}
        return {f"{kind}.{m}" for m in self.subsets}

    def _send(self, s: Frame, t: Frame, kind: str, isr: Sequence[Bool], version: Int
              ) -> list[Bool]:
        """``t``'s ``kind`` set is ``s``'s plus ``[isr, version]``."""
        parts: list[Bool] = []
        for m in self.subsets:
            match = z3.And([isr[j] if m >> j & 1 else z3.Not(isr[j]) for j in self.ids])
            if self.finite:
                parts += [t[f"{kind}.{m}.{v}"] == z3.Or(s[f"{kind}.{m}.{v}"],
                                                       z3.And(match, version == v))
                          for v in self.versions]
            else:
                parts.append(t[f"{kind}.{m}"] == z3.If(
                    match, z3.Store(s[f"{kind}.{m}"], version, z3.BoolVal(True)),
                    s[f"{kind}.{m}"]))
        if self.finite:
            parts.append(z3.And(version >= 0, version <= self.versions[-1]))
        return parts

    @staticmethod
    def _same(s: Frame, t: Frame, changed: set[str]) -> list[Bool]:
        return [t[v] == s[v] for v in s if v not in changed]

    def _isr(self, s: Frame, prefix: str) -> list[Bool]:
        return [s[f"{prefix}.{j}"] for j in self.ids]

    def _set(self, t: Frame, prefix: str, isr: Sequence[Bool]) -> list[Bool]:
        return [t[f"{prefix}.{j}"] == isr[j] for j in self.ids]

    def _named(self, prefix: str) -> set[str]:
        return {f"{prefix}.{j}" for j in self.ids}

    def hw_isr(self, s: Frame) -> list[Bool]:
        """The ISR HighWatermark ranges over: ``isr ∪ pendingIsr`` (maximal) or ``isr``."""
        if self.maximal:
            return [z3.Or(s[f"lIsr.{j}"], s[f"pIsr.{j}"]) for j in self.ids]
        return self._isr(s, "lIsr")

    def at_least_hw(self, s: Frame, offset: Int) -> Bool:
        """``offset ≥ HighWatermark``: some member of the HW's ISR has an offset ≤ it."""
        isr = self.hw_isr(s)
        return z3.Or([z3.And(isr[j], s[f"off.{j}"] <= offset) for j in self.ids])

    def within(self, s: Frame) -> Bool:
        """TLC's CONSTRAINT (true when unbounded)."""
        if not self.bounded:
            return z3.BoolVal(True)
        assert self.max_offset is not None
        return z3.And(s["cVer"] <= self.max_version,
                      *[s[f"off.{j}"] <= self.max_offset for j in self.ids])

    # ------------------------------------------------------------------ Init, actions

    def init(self, s: Frame) -> Bool:
        """Init: both ISRs are every replica, version 0, nothing pending, no message."""
        parts = [s["cVer"] == 0, s["lVer"] == 0, s["pVer"] == -1]
        for j in self.ids:
            parts += [s[f"cIsr.{j}"], s[f"lIsr.{j}"], z3.Not(s[f"pIsr.{j}"]),
                      s[f"off.{j}"] == 0]
        for kind in ("req", "upd"):
            for m in self.subsets:
                if self.finite:
                    parts += [z3.Not(s[f"{kind}.{m}.{v}"]) for v in self.versions]
                else:
                    parts.append(s[f"{kind}.{m}"] == z3.K(z3.IntSort(), z3.BoolVal(False)))
        return z3.And(parts)

    def _controller_shrink_isr(self, r: int) -> Callable[[Frame, Frame, Fresh], Bool]:
        def rel(s: Frame, t: Frame, fresh: Fresh) -> Bool:
            isr = [z3.BoolVal(False) if j == r else s[f"cIsr.{j}"] for j in self.ids]
            version = s["cVer"] + 1
            return z3.And(s[f"cIsr.{r}"], t["cVer"] == version, *self._set(t, "cIsr", isr),
                          *self._send(s, t, "upd", isr, version),
                          *self._same(s, t, {"cVer"} | self._named("cIsr") | self._vars("upd")))
        return rel

    def _controller_handle_request(self, m: int) -> Callable[[Frame, Frame, Fresh], Bool]:
        def rel(s: Frame, t: Frame, fresh: Fresh) -> Bool:
            isr = [z3.BoolVal(bool(m >> j & 1)) for j in self.ids]
            version = s["cVer"] + 1
            return z3.And(self.has(s, "req", m, s["cVer"]), t["cVer"] == version,
                          *self._set(t, "cIsr", isr), *self._send(s, t, "upd", isr, version),
                          *self._same(s, t, {"cVer"} | self._named("cIsr") | self._vars("upd")))
        return rel

    def _request(self, s: Frame, t: Frame, isr: Sequence[Bool]) -> list[Bool]:
        pending = [z3.Or(s[f"pIsr.{j}"], isr[j]) for j in self.ids]
        return [*self._send(s, t, "req", isr, s["lVer"]), *self._set(t, "pIsr", pending),
                t["pVer"] == s["lVer"],
                *self._same(s, t, self._vars("req") | self._named("pIsr") | {"pVer"})]

    def _leader_request_shrink_isr(self, r: int) -> Callable[[Frame, Frame, Fresh], Bool]:
        def rel(s: Frame, t: Frame, fresh: Fresh) -> Bool:
            isr = [z3.BoolVal(False) if j == r else s[f"lIsr.{j}"] for j in self.ids]
            return z3.And(s[f"lIsr.{r}"], *self._request(s, t, isr))
        return rel

    def _leader_request_expand_isr(self, r: int) -> Callable[[Frame, Frame, Fresh], Bool]:
        def rel(s: Frame, t: Frame, fresh: Fresh) -> Bool:
            isr = [z3.BoolVal(True) if j == r else s[f"lIsr.{j}"] for j in self.ids]
            return z3.And(z3.Not(s[f"lIsr.{r}"]), self.at_least_hw(s, s[f"off.{r}"]),
                          *self._request(s, t, isr))
        return rel

    def _leader_write(self, s: Frame, t: Frame, fresh: Fresh) -> Bool:
        return z3.And(t["off.0"] == s["off.0"] + 1, *self._same(s, t, {"off.0"}))

    def _leader_handle_update(self, m: int) -> Callable[[Frame, Frame, Fresh], Bool]:
        def rel(s: Frame, t: Frame, fresh: Fresh) -> Bool:
            v = fresh.int("version")
            isr = [z3.BoolVal(bool(m >> j & 1)) for j in self.ids]
            nothing = [z3.BoolVal(False) for _ in self.ids]
            return z3.And(self.has(s, "upd", m, v), v > s["lVer"], t["lVer"] == v,
                          t["pVer"] == -1, *self._set(t, "lIsr", isr),
                          *self._set(t, "pIsr", nothing),
                          *self._same(s, t, {"lVer", "pVer"} | self._named("lIsr")
                                      | self._named("pIsr")))
        return rel

    def _follower_replicate(self, r: int) -> Callable[[Frame, Frame, Fresh], Bool]:
        def rel(s: Frame, t: Frame, fresh: Fresh) -> Bool:
            return z3.And(s[f"off.{r}"] < s["off.0"], t[f"off.{r}"] == s[f"off.{r}"] + 1,
                          *self._same(s, t, {f"off.{r}"}))
        return rel

    def _isr_name(self, m: int) -> str:
        return "{" + ", ".join(_r(j) for j in self.ids if m >> j & 1) + "}"

    def actions(self) -> Sequence[ActionInstance]:
        """Next's disjuncts in the module's order, one instance per binding."""
        return self._actions

    @cached_property
    def _actions(self) -> list[ActionInstance]:
        acts: list[ActionInstance] = []

        def add(family: str, label: str, rel: Callable[[Frame, Frame, Fresh], Bool]) -> None:
            def guarded(s: Frame, t: Frame, fresh: Fresh) -> Bool:
                return z3.And(self.within(s), rel(s, t, fresh))
            acts.append(ActionInstance(family, label, guarded if self.bounded else rel))

        followers = range(1, self.replicas)
        for r in followers:
            add("ControllerShrinkIsr", f"ControllerShrinkIsr({_r(r)})",
                self._controller_shrink_isr(r))
        for m in self.subsets:
            add("ControllerHandleRequest", f"ControllerHandleRequest({self._isr_name(m)})",
                self._controller_handle_request(m))
        for r in followers:
            add("LeaderRequestShrinkIsr", f"LeaderRequestShrinkIsr({_r(r)})",
                self._leader_request_shrink_isr(r))
        for r in self.ids:
            add("LeaderRequestExpandIsr", f"LeaderRequestExpandIsr({_r(r)})",
                self._leader_request_expand_isr(r))
        add("LeaderWrite", "LeaderWrite", self._leader_write)
        for m in self.subsets:
            add("LeaderHandleUpdate", f"LeaderHandleUpdate({self._isr_name(m)})",
                self._leader_handle_update(m))
        for r in followers:
            add("FollowerReplicate", f"FollowerReplicate({_r(r)})", self._follower_replicate(r))
        return acts

    def symmetric_first_step(self) -> tuple[str, ...]:
        """Symmetry breaking for BMC: the followers r2..rn are interchangeable (Init, Next and
        ValidHighWatermark are symmetric under renaming them), and in Init only
        ControllerShrinkIsr(r), LeaderRequestShrinkIsr(r) (r a follower) and LeaderWrite are
        enabled, so some shortest trace starts with r2's or with LeaderWrite."""
        if self.replicas < 2:
            return ("LeaderWrite",)
        return ("ControllerShrinkIsr(r2)", "LeaderRequestShrinkIsr(r2)", "LeaderWrite")

    # ------------------------------------------------------------------ invariants, lemmas

    def valid_high_watermark(self, s: Frame) -> Bool:
        """ValidHighWatermark: every member of the controller's ISR is at or above the HW."""
        return z3.And([z3.Implies(s[f"cIsr.{j}"], self.at_least_hw(s, s[f"off.{j}"]))
                       for j in self.ids])

    def invariants(self) -> Sequence[SymbolicProperty]:
        """ValidHighWatermark."""
        return [SymbolicProperty("ValidHighWatermark", self.valid_high_watermark,
                                 "every controller ISR member is at or above the HW")]

    def _all_messages(self, s: Frame, kind: str, body: Callable[[int, Int], Bool]) -> Bool:
        """∀ v, S: [S, v] ∈ kind ⇒ body(S, v)."""
        if self.finite:
            return z3.And([z3.Implies(self.has(s, kind, m, v), body(m, z3.IntVal(v)))
                           for m in self.subsets for v in self.versions])
        v = z3.Int("v")
        return z3.And([z3.ForAll([v], z3.Implies(self.has(s, kind, m, v), body(m, v)))
                       for m in self.subsets])

    def _subset(self, m: int, isr: Sequence[Bool]) -> Bool:
        return z3.And([isr[j] for j in self.ids if m >> j & 1])

    def lemmas(self) -> list[SymbolicProperty]:
        """The strengthening of ValidHighWatermark (maximal): the controller's ISR lies within
        the leader's maximal ISR, because the controller accepts only requests made at its
        own version, which is then the leader's, and whose ISR is pending."""
        def props() -> list[tuple[str, Callable[[Frame], Bool], str]]:
            return [
                ("LeaderVersionBehindController", lambda s: s["lVer"] <= s["cVer"],
                 "leaderState.version ≤ controllerState.version"),
                ("RequestsAtMostLeaderVersion",
                 lambda s: self._all_messages(s, "req", lambda m, v: v <= s["lVer"]),
                 "every request's version ≤ the leader's version"),
                ("CurrentRequestsPending", lambda s: z3.And([
                    z3.Implies(self.has(s, "req", m, s["lVer"]),
                               self._subset(m, self._isr(s, "pIsr"))) for m in self.subsets]),
                 "a request at the leader's version asks for a subset of pendingIsr"),
                ("UpdatesAtMostControllerVersion",
                 lambda s: self._all_messages(s, "upd", lambda m, v: v <= s["cVer"]),
                 "every update's version ≤ the controller's version"),
                ("NewerUpdatesCoverControllerIsr", lambda s: self._all_messages(
                    s, "upd", lambda m, v: z3.Implies(v > s["lVer"], z3.And([
                        z3.Implies(s[f"cIsr.{j}"], z3.BoolVal(bool(m >> j & 1)))
                        for j in self.ids]))),
                 "the controller's ISR lies within every update newer than the leader"),
                ("ControllerIsrWithinMaximalIsr", lambda s: z3.And([
                    z3.Implies(s[f"cIsr.{j}"], z3.Or(s[f"lIsr.{j}"], s[f"pIsr.{j}"]))
                    for j in self.ids]),
                 "controllerState.isr ⊆ leaderState.isr ∪ leaderState.pendingIsr"),
            ]

        return [SymbolicProperty(name, holds, doc) for name, holds, doc in props()]

    # ------------------------------------------------------------------ concrete states

    def magnitudes(self, s: Frame) -> list[Int]:
        """Terms a readable counterexample keeps small: versions and offsets."""
        return [s["cVer"], s["lVer"], s["pVer"], *[s[f"off.{j}"] for j in self.ids]]

    def decode(self, model: z3.ModelRef, s: Frame) -> State:
        """The explicit model's state tuple for frame ``s`` (messages of versions 0 …
        controller version + 1)."""
        def val(term: z3.ExprRef) -> int:
            v: int = model.eval(term, model_completion=True).as_long()
            return v

        def flag(term: z3.ExprRef) -> bool:
            return bool(z3.is_true(model.eval(term, model_completion=True)))

        def mask(prefix: str) -> int:
            return sum(1 << j for j in self.ids if flag(s[f"{prefix}.{j}"]))

        top = min(max(val(s["cVer"]), val(s["lVer"]), 0) + 1, 62)
        width = 1 << self.replicas

        def messages(kind: str) -> int:
            return sum(1 << (v * width + m) for m in self.subsets for v in range(top + 1)
                       if flag(self.has(s, kind, m, v)))

        return (mask("cIsr"), val(s["cVer"]), mask("lIsr"), val(s["lVer"]), mask("pIsr"),
                val(s["pVer"]), *[val(s[f"off.{j}"]) for j in self.ids],
                messages("req"), messages("upd"))

    def pin(self, s: Frame, state: State) -> Bool:
        """Frame ``s`` is ``state`` (on what ``decode`` reads)."""
        n, width = self.replicas, 1 << self.replicas
        c_isr, c_ver, l_isr, l_ver, p_isr, p_ver = state[:6]
        parts = [s["cVer"] == c_ver, s["lVer"] == l_ver, s["pVer"] == p_ver]
        for j in self.ids:
            parts += [s[f"cIsr.{j}"] == bool(c_isr >> j & 1),
                      s[f"lIsr.{j}"] == bool(l_isr >> j & 1),
                      s[f"pIsr.{j}"] == bool(p_isr >> j & 1), s[f"off.{j}"] == state[6 + j]]
        top = min(max(c_ver, l_ver, 0) + 1, 62)
        for k, kind in enumerate(("req", "upd")):
            bits = state[6 + n + k]
            parts += [self.has(s, kind, m, v) == bool(bits >> (v * width + m) & 1)
                      for m in self.subsets for v in range(top + 1)]
        return z3.And(parts)

    def concrete(self, variables: Mapping[str, Any]) -> State:
        """The state tuple of the explicit model's variables view (to replay BMC traces)."""
        names = [_r(j) for j in self.ids]

        def mask(isr: Any) -> int:
            return sum(1 << j for j, name in enumerate(names) if name in isr)

        width = 1 << self.replicas

        def messages(ms: Any) -> int:
            return sum(1 << (m["version"] * width + mask(m["isr"])) for m in ms)

        c, ls = variables["controllerState"], variables["leaderState"]
        return (mask(c["isr"]), c["version"], mask(ls["isr"]), ls["version"],
                mask(ls["pendingIsr"]), ls["pendingVersion"],
                *[ls["offsets"][name] for name in names],
                messages(variables["requests"]), messages(variables["updates"]))


def symbolic(params: Mapping[str, ParamValue]) -> AsyncIsrSystem:
    """The bounded system of parsed ``tla-async-isr`` parameters."""
    return AsyncIsrSystem(int(params["replicas"]), params["hw_isr"] == "maximal",
                          int(params["max_offset"]), int(params["max_version"]))
