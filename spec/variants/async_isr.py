"""``tla-async-isr``: module AsyncIsr, asynchronous ISR changes through the controller.

The model behind KIP-497 (AlterIsr): the leader (``r1``, the constant ``Leader``) no longer
writes the ISR itself; it sends a request ``[isr, version]`` to the controller, which
accepts it only at its current version and answers with an update that the leader adopts.
Until then the ISR change is *pending*, and the leader computes its high watermark over
``isr ∪ pendingIsr`` (the "maximal ISR"), so that no replica the controller may already
count as in sync is behind the high watermark.  Variables,
as in the module:

* ``controllerState = [isr, version]``;
* ``leaderState = [isr, version, pendingIsr, pendingVersion, offsets]`` (``offsets[r]``:
  the log end offset of replica ``r`` as the leader knows it; ``pendingVersion`` Nil = -1);
* ``requests``, ``updates``: the sets of messages ``[isr, version]`` ever sent.

Parameters: ``replicas``; ``max_offset`` and ``max_version`` bound the space like TLC's
``CONSTRAINT ∀ r: offsets[r] ≤ MaxOffset ∧ controllerState.version ≤ MaxVersion`` (the module
itself is unbounded); ``hw_isr`` = ``maximal`` (the module as written) or ``current`` (the
high watermark over ``isr`` alone: the rule before KIP-497, which TLC shows unsafe).
Invariant ValidHighWatermark: every member of the controller's ISR has an offset at least
the high watermark.

A state is a tuple ``(cIsr, cVersion, lIsr, lVersion, pendingIsr, pendingVersion,
offsets..., requests, updates)``: ISRs are bit masks (bit ``i`` = replica ``r{i+1}``), a
message set is a bit mask with bit ``version · 2^n + isr`` for each message.  The replicas
other than the leader are interchangeable (symmetry).
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable, Mapping, Sequence
from functools import cached_property
from typing import Any

from isrlab.checker.model import Property
from isrlab.checker.registry import Param, ParamValue
from isrlab.spec.variants import Variant

State = tuple[int, ...]
C_ISR, C_VER, L_ISR, L_VER, P_ISR, P_VER, OFF = range(7)

PARAMS = (
    Param("replicas", int, 3, "number of replicas (Replicas = {r1, ..., rn}; Leader = r1)",
          minimum=1),
    Param("max_offset", int, 2, "CONSTRAINT offsets[r] <= max_offset", minimum=0),
    Param("max_version", int, 3, "CONSTRAINT controllerState.version <= max_version",
          minimum=0),
    Param("hw_isr", str, "maximal",
          "the ISR of HighWatermark: maximal = isr ∪ pendingIsr (the module), current = isr",
          choices=("maximal", "current")),
    Param("invariants", str, "ValidHighWatermark", "ValidHighWatermark or none",
          choices=("ValidHighWatermark", "none")),
)


def _r(i: int) -> str:
    return f"r{i + 1}"


class AsyncIsrModel:
    """AsyncIsr.tla for given constants (see the module docstring)."""

    def __init__(self, replicas: int, max_offset: int, max_version: int,
                 hw_isr: str = "maximal", invariants: Sequence[str] = ("ValidHighWatermark",),
                 ) -> None:
        if not 1 <= replicas <= 8 or max_offset > 10_000 or max_version > 10_000:
            raise ValueError("replicas must be 1 to 8, max_offset and max_version at most 10000")
        if hw_isr not in ("maximal", "current"):
            raise ValueError(f"hw_isr must be maximal or current, got {hw_isr!r}")
        self.name = "tla-async-isr"
        self.n, self.max_offset, self.max_version = replicas, max_offset, max_version
        self.maximal = hw_isr == "maximal"
        self.invariant_names = tuple(invariants)
        self.width = 1 << replicas
        self.end = OFF + replicas  # position of ``requests``; ``updates`` follows
        self.members = tuple(tuple(i for i in range(replicas) if m >> i & 1)
                             for m in range(self.width))
        self.isr_names = tuple("{" + ", ".join(_r(i) for i in ms) + "}" for ms in self.members)

    # -- helpers ----------
    def high_watermark(self, s: State) -> int:
        """HighWatermark: the least offset over ``isr ∪ pendingIsr`` (``current``: ``isr``)."""
        isr = s[L_ISR] | s[P_ISR] if self.maximal else s[L_ISR]
        return min(s[OFF + i] for i in self.members[isr])

    def messages(self, mask: int) -> Iterable[tuple[int, int]]:
        """The ``(isr, version)`` messages of a message set."""
        w, bit = self.width, 0
        while mask:
            if mask & 1:
                yield bit % w, bit // w
            mask >>= 1
            bit += 1

    def _message(self, isr: int, version: int) -> int:
        return 1 << (version * self.width + isr)


    # -- the Model protocol ----------
    def init_states(self) -> Iterable[State]:
        """Init: both ISRs are every replica, version 0, nothing pending, offsets 0, no
        message."""
        full = self.width - 1
        return ((full, 0, full, 0, 0, -1, *(0,) * self.n, 0, 0),)

    def next_states(self, s: State) -> Iterable[tuple[str, State]]:
        """Every enabled (action, binding) of Next, in the module's order."""
        out: list[tuple[str, State]] = []
        self.controller_shrink_isr(s, out)
        self.controller_handle_request(s, out)
        self.leader_request_shrink_isr(s, out)
        self.leader_request_expand_isr(s, out)
        self.leader_write(s, out)
        self.leader_handle_update(s, out)
        self.follower_replicate(s, out)
        return out

    def controller_shrink_isr(self, s: State, out: list[tuple[str, State]]) -> None:
        """ControllerShrinkIsr: the controller drops a non-leader member of its ISR (a broker
        failed), writes the next version and sends the leader an update."""
        cisr, version = s[C_ISR], s[C_VER] + 1
        for i in self.members[cisr]:
            if i:
                isr = cisr & ~(1 << i)
                out.append((f"ControllerShrinkIsr({_r(i)})", (
                    isr, version, *s[L_ISR:self.end], s[self.end],
                    s[self.end + 1] | self._message(isr, version))))

    def controller_handle_request(self, s: State, out: list[tuple[str, State]]) -> None:
        """ControllerHandleRequest: a request made at the controller's current version is
        accepted: its ISR is written with the next version and sent back as an update."""
        cver = s[C_VER]
        for isr, version in self.messages(s[self.end]):
            if version == cver:
                out.append((f"ControllerHandleRequest({self.isr_names[isr]}, version {version})", (
                    isr, cver + 1, *s[L_ISR:self.end], s[self.end],
                    s[self.end + 1] | self._message(isr, cver + 1))))

    def _request(self, s: State, isr: int) -> State:
        """A request ``[isr, leader's version]``; the pending ISR grows by ``isr``."""
        lver = s[L_VER]
        return (*s[:P_ISR], s[P_ISR] | isr, lver, *s[OFF:self.end],
                s[self.end] | self._message(isr, lver), s[self.end + 1])

    def leader_request_shrink_isr(self, s: State, out: list[tuple[str, State]]) -> None:
        """LeaderRequestShrinkIsr: the leader asks to drop a non-leader member of its ISR."""
        lisr = s[L_ISR]
        for i in self.members[lisr]:
            if i:
                out.append((f"LeaderRequestShrinkIsr({_r(i)})",
                            self._request(s, lisr & ~(1 << i))))

    def leader_request_expand_isr(self, s: State, out: list[tuple[str, State]]) -> None:
        """LeaderRequestExpandIsr: the leader asks to add a replica outside its ISR whose
        offset has reached the high watermark."""
        lisr, hw = s[L_ISR], self.high_watermark(s)
        for i in range(self.n):
            if not lisr >> i & 1 and s[OFF + i] >= hw:
                out.append((f"LeaderRequestExpandIsr({_r(i)})", self._request(s, lisr | 1 << i)))

    def leader_write(self, s: State, out: list[tuple[str, State]]) -> None:
        """LeaderWrite: the leader appends a record (its offset grows; always enabled)."""
        out.append(("LeaderWrite", (*s[:OFF], s[OFF] + 1, *s[OFF + 1:])))

    def leader_handle_update(self, s: State, out: list[tuple[str, State]]) -> None:
        """LeaderHandleUpdate: the leader adopts an update of a newer version than its own:
        its ISR and version become the update's, nothing is pending any more."""
        lver = s[L_VER]
        for isr, version in self.messages(s[self.end + 1]):
            if version > lver:
                out.append((f"LeaderHandleUpdate({self.isr_names[isr]}, version {version})",
                            (s[C_ISR], s[C_VER], isr, version, 0, -1, *s[OFF:])))

    def follower_replicate(self, s: State, out: list[tuple[str, State]]) -> None:
        """FollowerReplicate: a follower behind the leader fetches one record."""
        lead = s[OFF]
        for i in range(1, self.n):
            if s[OFF + i] < lead:
                out.append((f"FollowerReplicate({_r(i)})",
                            (*s[:OFF + i], s[OFF + i] + 1, *s[OFF + i + 1:])))

    def valid_high_watermark(self, s: State) -> bool:
        """ValidHighWatermark: every member of the controller's ISR has an offset at least the
        leader's high watermark (else electing it would lose committed records)."""
        hw = self.high_watermark(s)
        return all(s[OFF + i] >= hw for i in self.members[s[C_ISR]])

    def invariants(self) -> Sequence[Property[State]]:
        """ValidHighWatermark unless ``invariants=none``."""
        if "ValidHighWatermark" not in self.invariant_names:
            return ()
        return (Property("ValidHighWatermark", self.valid_high_watermark,
                         self.valid_high_watermark.__doc__ or "",
                         self.explain_valid_high_watermark),)

    def explain_valid_high_watermark(self, v: Mapping[str, Any]) -> str:
        """Why ``ValidHighWatermark`` fails in the variables ``v``: which member of the
        controller's ISR is behind the HW the leader computed over which replicas."""
        leader = v["leaderState"]
        counted = set(leader["isr"]) | (set(leader["pendingIsr"]) if self.maximal else set())
        offsets = leader["offsets"]
        hw = min(offsets[r] for r in counted)
        behind = ", ".join(f"{r} at offset {offsets[r]}"
                           for r in sorted(v["controllerState"]["isr"]) if offsets[r] < hw)
        over = "isr ∪ pendingIsr" if self.maximal else "isr"
        return (f"the leader's high watermark is {hw}, the least offset over its {over} "
                f"{{{', '.join(sorted(counted))}}}; the controller's ISR "
                f"{{{', '.join(sorted(v['controllerState']['isr']))}}} has {behind}: "
                "electing it would lose the records below the HW")

    def sometimes(self) -> Sequence[Property[State]]:
        """Reachability witnesses: an ISR change accepted by the controller and adopted by the
        leader; a committed record (high watermark above 0)."""
        return (
            Property("LeaderAdoptedUpdate", lambda s: s[L_VER] > 0,
                     "the leader adopted an update of the controller"),
            Property("CommittedRecord", lambda s: self.high_watermark(s) > 0,
                     "the high watermark is above 0"),
        )

    def within_boundary(self, s: State) -> bool:
        """TLC's CONSTRAINT: every offset ≤ max_offset and the controller's version ≤
        max_version."""
        return s[C_VER] <= self.max_version and max(s[OFF:self.end]) <= self.max_offset

    @cached_property
    def _permutations(self) -> tuple[tuple[int, ...], ...]:
        """Renamings of the replicas fixing the leader r1."""
        return tuple((0, *p) for p in itertools.permutations(range(1, self.n)))

    def _rename(self, s: State, perm: tuple[int, ...]) -> State:
        def isr(mask: int) -> int:
            return sum(1 << perm[i] for i in self.members[mask])

        def msgs(mask: int) -> int:
            return sum(self._message(isr(m), v) for m, v in self.messages(mask))

        offsets = [0] * self.n
        for i in range(self.n):
            offsets[perm[i]] = s[OFF + i]
        return (isr(s[C_ISR]), s[C_VER], isr(s[L_ISR]), s[L_VER], isr(s[P_ISR]), s[P_VER],
                *offsets, msgs(s[self.end]), msgs(s[self.end + 1]))

    def canonical(self, s: State) -> State:
        """The least renaming of the followers (the leader r1 is a constant)."""
        return min(self._rename(s, p) for p in self._permutations)

    def encode(self, s: State) -> bytes:
        """Injective: the fixed fields as 4-byte signed integers, then the two message sets
        with their byte lengths."""
        head = b"".join(v.to_bytes(4, "little", signed=True) for v in s[:self.end])
        req, upd = (m.to_bytes((m.bit_length() + 7) // 8, "little") for m in s[self.end:])
        return head + len(req).to_bytes(4, "little") + req + upd

    def decode(self, data: bytes) -> State:
        """The inverse of ``encode``."""
        k = 4 * self.end
        head = tuple(int.from_bytes(data[i:i + 4], "little", signed=True)
                     for i in range(0, k, 4))
        size = int.from_bytes(data[k:k + 4], "little")
        req = int.from_bytes(data[k + 4:k + 4 + size], "little")
        upd = int.from_bytes(data[k + 4 + size:], "little")
        return (*head, req, upd)

    def variables(self, s: State) -> Mapping[str, Any]:
        """The module's four variables, replicas named r1..rn, Nil as -1."""
        def names(mask: int) -> frozenset[str]:
            return frozenset(_r(i) for i in self.members[mask])

        def msgs(mask: int) -> list[dict[str, Any]]:
            return [{"isr": names(isr), "version": v} for isr, v in self.messages(mask)]

        return {
            "controllerState": {"isr": names(s[C_ISR]), "version": s[C_VER]},
            "leaderState": {
                "isr": names(s[L_ISR]), "version": s[L_VER], "pendingIsr": names(s[P_ISR]),
                "pendingVersion": s[P_VER],
                "offsets": {_r(i): s[OFF + i] for i in range(self.n)},
            },
            "requests": msgs(s[self.end]),
            "updates": msgs(s[self.end + 1]),
        }


def build(params: Mapping[str, ParamValue]) -> AsyncIsrModel:
    """The model for parsed parameters (ValueError when unusable)."""
    invariants = () if params["invariants"] == "none" else (str(params["invariants"]),)
    return AsyncIsrModel(int(params["replicas"]), int(params["max_offset"]),
                         int(params["max_version"]), str(params["hw_isr"]), invariants)


VARIANT = Variant(
    name="tla-async-isr", module="AsyncIsr", order=50, base="AsyncIsr",
    doc="TLA+ AsyncIsr: ISR changes requested from the controller, HW over the maximal ISR "
        "(KIP-497)",
    params=PARAMS, model=build, symbolic=lambda params: _symbolic(params), proofs=None,
)


def _symbolic(params: Mapping[str, ParamValue]) -> Any:
    """The Z3 twin (``isrlab.spec.symbolic.async_isr``, imported on use: it loads Z3)."""
    from isrlab.spec.symbolic.async_isr import symbolic

    return symbolic(params)
