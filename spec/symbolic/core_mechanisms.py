"""Z3 encodings of ``isrlab.core.alter_partition`` (KIP-497) and ``isrlab.core.elr`` (KIP-966), and
the
two small transition systems their obligations speak about.

Encoded functions (differentially tested against the Python in
``tests/z3/test_core_mechanisms_encoding.py``):

* ``hw_isr_members`` / ``raised_hw`` -- ``isrlab.core.alter_partition.hw_isr`` and
  ``leader_hw_with_isr_state``: the leader's new HW over the committed or maximal ISR;
* ``populate_target_elr`` -- ``isrlab.core.elr.populate_target_elr``;
* ``hw_may_advance`` -- ``isrlab.core.elr.hw_may_advance``;
* ``alter_partition_error`` -- ``isrlab.core.alter_partition.alter_partition``'s decision;
* ``fetch_decision`` -- ``isrlab.core.fencing.fetch_decision`` for each design.

Systems (``n`` replicas, broker ``0`` the leader in ``AsyncIsr``; offsets unbounded Ints):

* ``AsyncIsr`` -- the leader's committed ISR and version, its pending proposal, the
  controller's ISR and version, the LEOs; steps: propose an expansion (of a follower whose
  LEO reached the HW) or a shrink, the controller accepts at the proposal's version or
  refuses (back to committed), the leader applies the answer, the leader raises its HW
  (over the ISR of ``rule``), appends, a follower fetches.  Target: every member of the
  *controller's* ISR has an LEO ≥ HW (the TLA+ AsyncIsr module's ValidHighWatermark);
* ``Elr`` -- ISR, ELR, LEOs, HW, ``min.insync.replicas``; steps: an LEO grows, the HW
  rises (gated by ``hw_may_advance`` when ``gated``), a replica leaves the ISR (with ELR:
  ``populate_target_elr``; without: the last member stays), a caught-up replica rejoins, a
  replica out of the ISR (or, without ELR, the fenced last member) restarts after an
  unclean shutdown and loses an unflushed tail (with ELR it leaves the ELR), a clean
  election from the ELR when the ISR is empty.  Target: every replica a clean election
  may pick (ISR ∪ ELR) has an LEO ≥ HW.

Shortcuts: logs are their lengths (which records they hold is the ``pair`` group's
business); time and the out-of-sync predicate are abstracted into "any follower may be
proposed for removal"; one request at a time (Kafka's at most one in flight).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TypeAlias, cast

import z3

Int: TypeAlias = z3.ArithRef
Bool: TypeAlias = z3.BoolRef


# ---------------------------------------------------------------------------------------
# Encoded functions
# ---------------------------------------------------------------------------------------


def hw_isr_members(committed: tuple[Bool, ...], pending: Bool, expanding: Bool,
                   proposed: tuple[Bool, ...], maximal: bool) -> tuple[Bool, ...]:
    """``hw_isr``: committed ∪ a pending addition (``maximal``) or the committed ISR."""
    if not maximal:
        return committed
    grow = z3.And(pending, expanding)
    return tuple(z3.Or(c, z3.And(grow, p)) for c, p in zip(committed, proposed, strict=True))


def raised_hw(hw: Int, leos: tuple[Int, ...], members: tuple[Bool, ...]) -> Int:
    """``max(hw, min LEO over members)``; member 0 (the leader) seeds the minimum."""
    low: Int = leos[0]
    for leo, member in zip(leos[1:], members[1:], strict=True):
        low = z3.If(z3.And(member, leo < low), leo, low)
    return z3.If(low > hw, low, hw)


def _count(bits: tuple[Bool, ...]) -> Int:
    total: Int = z3.IntVal(0)
    for b in bits:
        total = total + z3.If(b, 1, 0)
    return total


def populate_target_elr(
    isr: tuple[Bool, ...], elr: tuple[Bool, ...], last_known: tuple[Bool, ...],
    target: tuple[Bool, ...], unclean: tuple[Bool, ...], min_isr: Int,
) -> tuple[tuple[Bool, ...], tuple[Bool, ...]]:
    """``populate_target_elr`` (enabled): the new ELR and last-known ELR, bit per replica."""
    clear = _count(target) >= min_isr
    cand = tuple(z3.Or(i, e) for i, e in zip(isr, elr, strict=True))
    new_elr = tuple(z3.And(z3.Not(clear), c, z3.Not(t), z3.Not(u))
                    for c, t, u in zip(cand, target, unclean, strict=True))
    new_lke = tuple(z3.And(z3.Not(clear), z3.Or(c, k), z3.Not(t), z3.Not(e))
                    for c, k, t, e in zip(cand, last_known, target, new_elr, strict=True))
    return new_elr, new_lke


def hw_may_advance(isr: tuple[Bool, ...], min_isr: Int, gated: bool) -> Bool:
    """``hw_may_advance``: |ISR| ≥ min.insync.replicas when gated, else true."""
    return _count(isr) >= min_isr if gated else z3.BoolVal(True)


def alter_partition_error(
    leader: Int, leader_epoch: Int, version: Int, replicas: tuple[Bool, ...],
    registered_epoch: tuple[Int, ...], ineligible: tuple[Bool, ...], fence_ineligible: bool,
    sender: int, sender_epoch: Int, request_leader_epoch: Int, new_isr: tuple[Bool, ...],
    request_version: Int,
) -> Int:
    """``alter_partition``'s error code (Kafka's numbers; 0 = accepted) for a sender id.

    ``registered_epoch[b]`` is broker ``b``'s registered epoch (< 0: unregistered);
    ``ineligible[b]``: fenced, offline or shutting down.  Negative epochs are the Python's
    rejected input and are not encoded.
    """
    n = len(replicas)
    subset = z3.And(*[z3.Implies(i, r) for i, r in zip(new_isr, replicas, strict=True)])
    has_leader = z3.Or(*[z3.And(new_isr[b], leader == b) for b in range(n)])
    bad = z3.Or(*[z3.And(new_isr[b], z3.Or(ineligible[b], registered_epoch[b] < 0))
                  for b in range(n)])
    ahead = z3.Or(request_leader_epoch > leader_epoch, request_version > version)
    return z3.If(z3.Or(registered_epoch[sender] < 0, registered_epoch[sender] != sender_epoch),
                 77, z3.If(ahead, 41, z3.If(request_leader_epoch < leader_epoch, 74,
                 z3.If(leader != sender, 42, z3.If(request_version < version, 95,
                 z3.If(z3.Not(z3.And(subset, has_leader)), 42,
                 z3.If(z3.And(z3.BoolVal(fence_ineligible), bad), 107, 0)))))))


def fetch_decision(fencing: str, leader_epoch: Int, follower_epoch: Int
                   ) -> tuple[Bool, Int, Bool]:
    """``isrlab.core.fencing.fetch_decision``: (record the fetch, error code, follower
    truncates)."""
    error = z3.If(follower_epoch == leader_epoch, 0,
                  z3.If(follower_epoch < leader_epoch, 74, 75))
    if fencing == "none":
        return z3.BoolVal(True), z3.IntVal(0), z3.BoolVal(False)
    if fencing == "first-design":
        return z3.BoolVal(True), error, error != 0
    return error == 0, error, z3.BoolVal(False)


def restart_hw(behaviour: str, clean: Bool, hosted: Bool, hw_now: Int, in_file: Bool,
               file_hw: Int, empty: Bool, log_start: Int, leo: Int) -> Int:
    """The HW one partition of one log dir starts with after a restart, by
    ``isrlab.core.log_recovery``: a clean shutdown (``checkpoint_at_shutdown``: the file
    rewritten with ``hw_now`` when the dir hosts the partition's log, unless ``periodic``) or
    a power loss (``checkpoints_after_power_loss``: the last write, or with ``no-fsync`` the
    empty file when ``empty`` chooses it), then ``read_high_watermark_checkpoint`` (0 when
    missing) and ``initial_high_watermark`` (clamped to ``[log_start, leo]``)."""
    kept = z3.If(in_file, file_hw, 0)
    after_clean = kept if behaviour == "periodic" else z3.If(hosted, hw_now, kept)
    after_loss = z3.If(empty, 0, kept) if behaviour == "no-fsync" else kept
    checkpointed = z3.If(clean, after_clean, after_loss)
    floor = z3.If(checkpointed > log_start, checkpointed, log_start)
    return z3.If(floor < leo, floor, leo)


# ---------------------------------------------------------------------------------------
# A tiny transition-system kit (states are dicts of named Z3 constants)
# ---------------------------------------------------------------------------------------

State: TypeAlias = dict[str, z3.ExprRef]
Action: TypeAlias = Callable[[State, State], Bool]


def _bits(s: State, name: str, n: int) -> tuple[Bool, ...]:
    return tuple(cast(Bool, s[f"{name}{i}"]) for i in range(n))


def _ints(s: State, name: str, n: int) -> tuple[Int, ...]:
    return tuple(cast(Int, s[f"{name}{i}"]) for i in range(n))


def _int(s: State, name: str) -> Int:
    return cast(Int, s[name])


def _bool(s: State, name: str) -> Bool:
    return cast(Bool, s[name])


def _same(s: State, t: State, keep: tuple[str, ...]) -> Bool:
    return z3.And(*[s[k] == t[k] for k in keep]) if keep else z3.BoolVal(True)


@dataclass(frozen=True)
class System:
    """A symbolic system: variable names and sorts, init, named actions, named invariants."""

    name: str
    variables: tuple[tuple[str, str], ...]  # (name, "int" | "bool")
    init: Callable[[State], Bool]
    actions: tuple[tuple[str, Action], ...]
    invariants: tuple[tuple[str, Callable[[State], Bool]], ...]
    target: str

    def frame(self, tag: str) -> State:
        """Fresh constants ``<name>@<tag>``."""
        return {v: (z3.Int(f"{v}@{tag}") if sort == "int" else z3.Bool(f"{v}@{tag}"))
                for v, sort in self.variables}

    def invariant(self, name: str) -> Callable[[State], Bool]:
        """The invariant called ``name``."""
        return dict(self.invariants)[name]

    def show(self, model: z3.ModelRef, s: State) -> str:
        """A state as ``name=value`` pairs."""
        return " ".join(f"{v}={model.eval(s[v], model_completion=True)}"
                        for v, _ in self.variables)


# ---------------------------------------------------------------------------------------
# AsyncIsr: KIP-497's pending ISR and the maximal-ISR rule
# ---------------------------------------------------------------------------------------

_ASYNC_SCALARS = ("hw", "cver", "lver", "pending", "expanding")


def _async_vars(n: int) -> tuple[tuple[str, str], ...]:
    out = [("hw", "int"), ("cver", "int"), ("lver", "int"), ("pending", "bool"),
           ("expanding", "bool")]
    for i in range(n):
        out += [(f"leo{i}", "int"), (f"cisr{i}", "bool"), (f"lisr{i}", "bool"),
                (f"pisr{i}", "bool")]
    return tuple(out)


def _keep_async(n: int, *changed: str) -> tuple[str, ...]:
    names = [v for v, _ in _async_vars(n)]
    return tuple(v for v in names if v not in changed and v.rstrip("0123456789") not in changed)


def async_isr_system(n: int, maximal: bool) -> System:
    """``AsyncIsr`` for ``n`` replicas; ``maximal``: Kafka's HW rule, else committed-only."""
    def leos(s: State) -> tuple[Int, ...]:
        return _ints(s, "leo", n)

    def init(s: State) -> Bool:
        return z3.And(_int(s, "hw") == 0, _int(s, "cver") == 0, _int(s, "lver") == 0,
                      z3.Not(_bool(s, "pending")), _bits(s, "lisr", n)[0],
                      *[x == 0 for x in leos(s)],
                      *[c == lb for c, lb in zip(_bits(s, "cisr", n), _bits(s, "lisr", n),
                                                 strict=True)])

    def propose_expand(j: int) -> Action:
        def act(s: State, t: State) -> Bool:
            lisr, pisr = _bits(s, "lisr", n), _bits(t, "pisr", n)
            return z3.And(z3.Not(_bool(s, "pending")), z3.Not(lisr[j]), leos(s)[j] >= _int(s, "hw"),
                          _bool(t, "pending"), _bool(t, "expanding"),
                          *[pisr[i] == (z3.BoolVal(True) if i == j else lisr[i])
                            for i in range(n)],
                          _same(s, t, _keep_async(n, "pending", "expanding", "pisr")))
        return act

    def propose_shrink(s: State, t: State) -> Bool:
        lisr, pisr = _bits(s, "lisr", n), _bits(t, "pisr", n)
        return z3.And(z3.Not(_bool(s, "pending")), _bool(t, "pending"),
                      z3.Not(_bool(t, "expanding")), pisr[0],
                      *[z3.Implies(p, lb) for p, lb in zip(pisr, lisr, strict=True)],
                      z3.Or(*[z3.And(lb, z3.Not(p)) for p, lb in zip(pisr, lisr, strict=True)]),
                      _same(s, t, _keep_async(n, "pending", "expanding", "pisr")))

    def accept(s: State, t: State) -> Bool:
        return z3.And(_bool(s, "pending"), _int(s, "cver") == _int(s, "lver"),
                      _int(t, "cver") == _int(s, "cver") + 1,
                      *[c == p for c, p in zip(_bits(t, "cisr", n), _bits(s, "pisr", n),
                                               strict=True)],
                      _same(s, t, _keep_async(n, "cver", "cisr")))

    def refuse(s: State, t: State) -> Bool:
        return z3.And(_bool(s, "pending"), _int(s, "cver") == _int(s, "lver"),
                      z3.Not(_bool(t, "pending")), _same(s, t, _keep_async(n, "pending")))

    def apply_answer(s: State, t: State) -> Bool:
        return z3.And(_bool(s, "pending"), _int(s, "cver") == _int(s, "lver") + 1,
                      z3.Not(_bool(t, "pending")), _int(t, "lver") == _int(s, "cver"),
                      *[lb == c for lb, c in zip(_bits(t, "lisr", n), _bits(s, "cisr", n),
                                                 strict=True)],
                      _same(s, t, _keep_async(n, "pending", "lver", "lisr")))

    def raise_hw(s: State, t: State) -> Bool:
        members = hw_isr_members(_bits(s, "lisr", n), _bool(s, "pending"),
                                 _bool(s, "expanding"), _bits(s, "pisr", n), maximal)
        return z3.And(_int(t, "hw") == raised_hw(_int(s, "hw"), leos(s), members),
                      _same(s, t, _keep_async(n, "hw")))

    def grow(i: int) -> Action:
        def act(s: State, t: State) -> Bool:
            new, old = leos(t)[i], leos(s)[i]
            bound = [new <= leos(s)[0]] if i else []
            return z3.And(new > old, *bound, _same(s, t, _keep_async(n, f"leo{i}")))
        return act

    def member_ok(s: State, bits: str) -> Bool:
        return z3.And(*[z3.Implies(b, x >= _int(s, "hw"))
                        for b, x in zip(_bits(s, bits, n), leos(s), strict=True)])

    def valid_hw(s: State) -> Bool:
        return member_ok(s, "cisr")

    def leader_committed_ok(s: State) -> Bool:
        return member_ok(s, "lisr")

    def pending_ok(s: State) -> Bool:
        pend, exp = _bool(s, "pending"), _bool(s, "expanding")
        pisr, lisr = _bits(s, "pisr", n), _bits(s, "lisr", n)
        return z3.And(z3.Implies(z3.And(pend, exp), member_ok(s, "pisr")),
                      z3.Implies(z3.And(pend, z3.Not(exp)),
                                 z3.And(*[z3.Implies(p, lb) for p, lb in zip(pisr, lisr,
                                                                             strict=True)])))

    def versions(s: State) -> Bool:
        cver, lver = _int(s, "cver"), _int(s, "lver")
        cisr, lisr, pisr = _bits(s, "cisr", n), _bits(s, "lisr", n), _bits(s, "pisr", n)
        return z3.And(
            z3.Implies(cver == lver, z3.And(*[c == lb for c, lb in zip(cisr, lisr, strict=True)])),
            z3.Implies(cver != lver, z3.And(cver == lver + 1, _bool(s, "pending"),
                                            *[c == p for c, p in zip(cisr, pisr, strict=True)])))

    def shape(s: State) -> Bool:
        x = leos(s)
        pending_leader = z3.Implies(_bool(s, "pending"), _bits(s, "pisr", n)[0])
        return z3.And(_bits(s, "lisr", n)[0], _bits(s, "cisr", n)[0], pending_leader,
                      _int(s, "hw") >= 0, x[0] >= _int(s, "hw"),
                      *[x[i] <= x[0] for i in range(1, n)])

    actions: list[tuple[str, Action]] = [(f"ProposeExpand[{j}]", propose_expand(j))
                                         for j in range(1, n)]
    actions += [("ProposeShrink", propose_shrink), ("ControllerAccept", accept),
                ("ControllerRefuse", refuse), ("LeaderApplyAnswer", apply_answer),
                ("RaiseHw", raise_hw)]
    actions += [(f"Leo[{i}]", grow(i)) for i in range(n)]
    rule = "maximal" if maximal else "committed"
    return System(f"async-isr-{rule}", _async_vars(n), init, tuple(actions),
                  (("ValidHighWatermark", valid_hw), ("LeaderIsrCovered", leader_committed_ok),
                   ("PendingCovered", pending_ok), ("Versions", versions), ("Shape", shape)),
                  "ValidHighWatermark")


# ---------------------------------------------------------------------------------------
# Elr: KIP-966
# ---------------------------------------------------------------------------------------


def _elr_vars(n: int) -> tuple[tuple[str, str], ...]:
    out = [("hw", "int"), ("min", "int")]
    for i in range(n):
        out += [(f"leo{i}", "int"), (f"isr{i}", "bool"), (f"elr{i}", "bool")]
    return tuple(out)


def _keep_elr(n: int, *changed: str) -> tuple[str, ...]:
    return tuple(v for v, _ in _elr_vars(n) if v not in changed
                 and v.rstrip("0123456789") not in changed)


def elr_system(n: int, enabled: bool, gated: bool) -> System:
    """``Elr`` for ``n`` replicas: ``enabled`` is KIP-966's ELR, ``gated`` its HW rule."""
    none = tuple(z3.BoolVal(False) for _ in range(n))

    def init(s: State) -> Bool:
        return z3.And(_int(s, "hw") == 0, _int(s, "min") >= 1, _int(s, "min") <= n,
                      *[x == 0 for x in _ints(s, "leo", n)],
                      *[z3.Not(e) for e in _bits(s, "elr", n)], z3.Or(*_bits(s, "isr", n)))

    def with_isr(s: State, t: State, target: tuple[Bool, ...]) -> Bool:
        isr, elr = _bits(s, "isr", n), _bits(s, "elr", n)
        if enabled:
            new_elr, _ = populate_target_elr(isr, elr, none, target, none, _int(s, "min"))
        else:
            new_elr = elr
        return z3.And(*[a == b for a, b in zip(_bits(t, "isr", n), target, strict=True)],
                      *[a == b for a, b in zip(_bits(t, "elr", n), new_elr, strict=True)],
                      _same(s, t, _keep_elr(n, "isr", "elr")))

    def leave(j: int) -> Action:
        def act(s: State, t: State) -> Bool:
            isr = _bits(s, "isr", n)
            target = tuple(z3.BoolVal(False) if i == j else b for i, b in enumerate(isr))
            last = z3.And(isr[j], *[z3.Not(b) for i, b in enumerate(isr) if i != j])
            if enabled:
                return z3.And(isr[j], with_isr(s, t, target))
            return z3.And(isr[j], z3.Not(last), with_isr(s, t, target))
        return act

    def rejoin(j: int) -> Action:
        def act(s: State, t: State) -> Bool:
            isr = _bits(s, "isr", n)
            target = tuple(z3.BoolVal(True) if i == j else b for i, b in enumerate(isr))
            return z3.And(z3.Not(isr[j]), z3.Or(*isr), _ints(s, "leo", n)[j] >= _int(s, "hw"),
                          with_isr(s, t, target))
        return act

    def unclean_restart(j: int) -> Action:
        def act(s: State, t: State) -> Bool:
            isr, leo = _bits(s, "isr", n), _ints(s, "leo", n)
            fenced_last = z3.And(isr[j], *[z3.Not(b) for i, b in enumerate(isr) if i != j])
            may = z3.Or(z3.Not(isr[j]), fenced_last) if not enabled else z3.Not(isr[j])
            elr_after = z3.Not(_bits(t, "elr", n)[j]) if enabled else (
                _bits(t, "elr", n)[j] == _bits(s, "elr", n)[j])
            new = _ints(t, "leo", n)[j]
            return z3.And(may, new >= 0, new <= leo[j], elr_after,
                          _same(s, t, _keep_elr(n, f"leo{j}", f"elr{j}")))
        return act

    def grow(i: int) -> Action:
        def act(s: State, t: State) -> Bool:
            return z3.And(_ints(t, "leo", n)[i] > _ints(s, "leo", n)[i],
                          _same(s, t, _keep_elr(n, f"leo{i}")))
        return act

    def raise_hw(s: State, t: State) -> Bool:
        isr, leo = _bits(s, "isr", n), _ints(s, "leo", n)
        new = _int(t, "hw")
        return z3.And(z3.Or(*isr), hw_may_advance(isr, _int(s, "min"), gated),
                      new > _int(s, "hw"),
                      *[z3.Implies(b, new <= x) for b, x in zip(isr, leo, strict=True)],
                      _same(s, t, _keep_elr(n, "hw")))

    def elect_from_elr(j: int) -> Action:
        def act(s: State, t: State) -> Bool:
            isr, elr = _bits(s, "isr", n), _bits(s, "elr", n)
            target = tuple(z3.BoolVal(i == j) for i in range(n))
            return z3.And(*[z3.Not(b) for b in isr], elr[j], with_isr(s, t, target))
        return act

    def electable_complete(s: State) -> Bool:
        return z3.And(*[z3.Implies(z3.Or(b, e), x >= _int(s, "hw"))
                        for b, e, x in zip(_bits(s, "isr", n), _bits(s, "elr", n),
                                           _ints(s, "leo", n), strict=True)])

    def elr_only_below_min(s: State) -> Bool:
        big = _count(_bits(s, "isr", n)) >= _int(s, "min")
        return z3.Implies(big, z3.And(*[z3.Not(e) for e in _bits(s, "elr", n)]))

    def shape(s: State) -> Bool:
        return z3.And(_int(s, "hw") >= 0, _int(s, "min") >= 1,
                      *[z3.Not(z3.And(b, e)) for b, e in zip(_bits(s, "isr", n),
                                                             _bits(s, "elr", n), strict=True)])

    actions: list[tuple[str, Action]] = [("RaiseHw", raise_hw)]
    for j in range(n):
        actions += [(f"Leo[{j}]", grow(j)), (f"LeaveIsr[{j}]", leave(j)),
                    (f"RejoinIsr[{j}]", rejoin(j)), (f"UncleanRestart[{j}]", unclean_restart(j))]
        if enabled:
            actions.append((f"ElectFromElr[{j}]", elect_from_elr(j)))
    invariants: list[tuple[str, Callable[[State], Bool]]] = [
        ("ElectableComplete", electable_complete), ("Shape", shape)]
    if enabled:
        invariants.append(("ElrOnlyBelowMinIsr", elr_only_below_min))
    else:
        invariants.append(("ElrEmpty", lambda s: z3.Not(z3.Or(*_bits(s, "elr", n)))))
    name = "elr" if enabled else "no-elr"
    return System(name if gated else f"{name}-ungated", _elr_vars(n), init, tuple(actions),
                  tuple(invariants), "ElectableComplete")
