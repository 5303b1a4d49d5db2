"""Obligations of the KRaft-era core functions (``kafka-core`` groups, issue 32 item 5).

Each obligation is a claim about one encoded function of ``isrlab.spec.symbolic.core_kraft``
for every input (3 brokers; epochs and offsets unbounded): Z3 searches for an input where the
function's result breaks the claim.  ``proved``: none exists; ``refuted``: the row shows one.
Rows are of kind ``Valid`` (premise ⇒ claim, one step, no induction).  Groups:

* ``kraft-alter-partition`` -- ``ReplicationControlManager.alterPartition`` (3.5+, request
  version 3): an accepted request carries the controller's leader and partition epochs, comes
  from the leader with its registered broker epoch, and proposes only registered, unfenced,
  not-shutting-down members (KIP-841);
* ``kraft-kip903`` -- no proposed member whose broker epoch (as the leader saw it in its
  fetches) differs from its registered epoch is accepted: proved with KIP-903 (3.5+) at request
  version 3; refuted for 3.3-3.4 and for request versions below 3 (the epochs are -1) -- the
  KAFKA-14139 precondition;
* ``kraft-kip903-system`` / ``kraft-no-kip903-system`` -- ``isrlab.spec.symbolic.core_kraft
  .kip903_system``: a follower restarts with an empty disk (new broker epoch) while the
  leader's AlterPartition adding it, built on the follower's old incarnation, is in flight.
  With KIP-903 "every ISR member's log reaches the HW" is inductive (IndInit / IndNext per
  action, with its supporting conjuncts); without it the controller admits the empty replica
  and the BMC finds the 5-step KAFKA-14139 trace;
* ``kraft-elr-update`` -- ``PartitionChangeBuilder.build`` with ELR on (ONLINE election), from
  a registration with ISR and ELR disjoint, the leader in the ISR, the last-known ELR empty while
  a leader exists (trunk clears it in every record of a led partition) and the callers' contract
  (a target ISR without the leader makes the leader unacceptable): ISR and ELR stay disjoint,
  the leader is in the ISR, a clean change below min ISR keeps every old ISR/ELR member that
  did not shut down uncleanly in ISR ∪ ELR, no unclean-shutdown replica is in the ELR --
  proved; "a newly elected leader is acceptable" -- refuted: ``canElectLastKnownLeader``
  elects the last known leader without checking it (trunk 2024-10);
* ``kraft-unclean-detection`` -- ``ClusterControlManager.registerBroker``: a restart after a
  crash (no clean-shutdown epoch) is detected -- refuted for 3.7 (only logged), proved for 3.8
  and 3.9+; a clean restart is not flagged -- proved for 3.7 and 3.8, refuted for 3.9+
  (KAFKA-16952 treats every new incarnation as unclean: safe, but it costs the ELR).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass

import z3

from isrlab.proofs.group import Group, Row
from isrlab.proofs.mechanism_obligations import bmc_row, induction_rows
from isrlab.spec.symbolic import core_kraft as sym
from isrlab.spec.symbolic.core_mechanisms import System

CORE_MODEL = "kafka-core"
N = 3


@dataclass(frozen=True)
class Claim:
    """One obligation: ``premise ⇒ goal`` for every input; ``shown`` names what a
    counterexample prints."""

    target: str
    action: str
    premise: z3.BoolRef
    goal: z3.BoolRef
    shown: tuple[tuple[str, z3.ExprRef], ...]

    def violation(self) -> z3.BoolRef:
        """The query: an input satisfying the premise and breaking the goal."""
        return z3.And(self.premise, z3.Not(self.goal))


def claim_row(claim: Claim, timeout_ms: int) -> Row:
    """Discharge ``claim``: proved (unsat), refuted with the input (sat) or unknown."""
    solver = z3.Solver()
    solver.set("timeout", timeout_ms)
    solver.add(claim.violation())
    start = time.perf_counter()
    result = solver.check()
    seconds = round(time.perf_counter() - start, 3)
    if result == z3.unsat:
        return Row("Valid", claim.target, claim.action, "proved", seconds)
    if result == z3.sat:
        model = solver.model()
        detail = " ".join(f"{name}={model.eval(e, model_completion=True)}"
                          for name, e in claim.shown)
        return Row("Valid", claim.target, claim.action, "refuted", seconds, detail)
    return Row("Valid", claim.target, claim.action, "unknown", seconds)


def _bits(name: str) -> tuple[z3.BoolRef, ...]:
    return tuple(z3.Bool(f"{name}{b}") for b in range(N))


def _ints(name: str) -> tuple[z3.ArithRef, ...]:
    return tuple(z3.Int(f"{name}{b}") for b in range(N))


def _members(bits: tuple[z3.BoolRef, ...]) -> z3.ExprRef:
    """A readable set in a counterexample: the bits as an int mask."""
    mask: z3.ArithRef = z3.IntVal(0)
    for b, bit in enumerate(bits):
        mask = mask + z3.If(bit, 1 << b, 0)
    return mask


# ---------------------------------------------------------------------------------------
# AlterPartition and KIP-903
# ---------------------------------------------------------------------------------------


@dataclass(frozen=True)
class _AlterInputs:
    leader: z3.ArithRef
    leader_epoch: z3.ArithRef
    partition_epoch: z3.ArithRef
    recovering: z3.BoolRef
    registered: tuple[z3.BoolRef, ...]
    fenced: tuple[z3.BoolRef, ...]
    shutting: tuple[z3.BoolRef, ...]
    reg_epoch: tuple[z3.ArithRef, ...]
    sender_epoch: z3.ArithRef
    req_leader_epoch: z3.ArithRef
    req_partition_epoch: z3.ArithRef
    new_isr: tuple[z3.BoolRef, ...]
    member_epoch: tuple[z3.ArithRef, ...]
    req_recovering: z3.BoolRef


def _alter_inputs() -> _AlterInputs:
    return _AlterInputs(z3.Int("leader"), z3.Int("leaderEpoch"), z3.Int("partitionEpoch"),
                        z3.Bool("recovering"), _bits("registered"), _bits("fenced"),
                        _bits("shuttingDown"), _ints("registeredEpoch"), z3.Int("senderEpoch"),
                        z3.Int("reqLeaderEpoch"), z3.Int("reqPartitionEpoch"), _bits("newIsr"),
                        _ints("memberEpoch"), z3.Bool("reqRecovering"))


SENDER = 0
"""The sender is broker 0 (the brokers are symmetric; the leader is any of them)."""


def _error(i: _AlterInputs, version: int, kip841: bool, kip903: bool) -> z3.ArithRef:
    return sym.alter_partition_error(
        i.leader, i.leader_epoch, i.partition_epoch, i.recovering, i.registered, i.fenced,
        i.shutting, i.reg_epoch, SENDER, i.sender_epoch, i.req_leader_epoch,
        i.req_partition_epoch, i.new_isr, i.member_epoch, i.req_recovering, version, kip841,
        kip903)


def _well_formed(i: _AlterInputs) -> z3.BoolRef:
    return z3.And(i.leader >= 0, i.leader < N, i.leader_epoch >= 0, i.partition_epoch >= 0,
                  i.req_leader_epoch >= 0, i.req_partition_epoch >= 0)


def _alter_shown(i: _AlterInputs) -> tuple[tuple[str, z3.ExprRef], ...]:
    return (("leader", i.leader), ("newIsrMask", _members(i.new_isr)),
            *((f"registeredEpoch{b}", i.reg_epoch[b]) for b in range(N)),
            *((f"memberEpoch{b}", i.member_epoch[b]) for b in range(N)),
            ("fencedMask", _members(i.fenced)), ("shuttingDownMask", _members(i.shutting)))


def alter_partition_claims() -> list[Claim]:
    """``kraft-alter-partition``: what an accepted request (3.5+, version 3) implies."""
    i = _alter_inputs()
    accepted = z3.And(_well_formed(i), _error(i, 3, True, True) == sym.NONE)
    epochs = z3.And(i.req_leader_epoch == i.leader_epoch,
                    i.req_partition_epoch == i.partition_epoch, i.leader == SENDER,
                    i.registered[SENDER], i.reg_epoch[SENDER] == i.sender_epoch)
    leader_in = z3.Or(*[z3.And(i.leader == b, i.new_isr[b]) for b in range(N)])
    eligible = z3.And(*[z3.Implies(i.new_isr[b], z3.And(i.registered[b], z3.Not(i.fenced[b]),
                                                        z3.Not(i.shutting[b])))
                        for b in range(N)])
    action = "alter_partition (3.5+, v3)"
    shown = _alter_shown(i)
    return [Claim("AcceptedAtCurrentEpochsFromLeader", action, accepted, epochs, shown),
            Claim("AcceptedIsrHoldsLeader", action, accepted, leader_in, shown),
            Claim("AcceptedMembersEligible", action, accepted, eligible, shown)]


def kip903_claims() -> list[Claim]:
    """``kraft-kip903``: no stale-epoch member accepted -- by version and request version."""
    i = _alter_inputs()
    # what the leader saw is a real epoch (a fetch carried it), not -1
    seen = z3.And(*[i.member_epoch[b] >= 0 for b in range(N)])
    stale_free = z3.And(*[z3.Implies(i.new_isr[b], i.member_epoch[b] == i.reg_epoch[b])
                          for b in range(N)])
    out = []
    for label, version, kip903 in (("3.5+ (KIP-903), v3", 3, True),
                                   ("3.3-3.4 (no KIP-903), v3", 3, False),
                                   ("3.5+ (KIP-903), v2 request", 2, True)):
        accepted = z3.And(_well_formed(i), seen, _error(i, version, True, kip903) == sym.NONE)
        out.append(Claim("NoStaleEpochMemberAccepted", label, accepted, stale_free,
                         _alter_shown(i)))
    return out


# ---------------------------------------------------------------------------------------
# The ELR update of PartitionChangeBuilder
# ---------------------------------------------------------------------------------------


def elr_claims() -> list[Claim]:
    """``kraft-elr-update``: ``build`` with ELR on, over every well-formed input."""
    isr, elr, lke = _bits("isr"), _bits("elr"), _bits("lastKnownElr")
    target, unclean, acceptable = _bits("target"), _bits("uncleanShutdown"), _bits("acceptable")
    leader, min_isr = z3.Int("leader"), z3.Int("minIsr")
    new_isr, new_elr, elected, was_unclean = sym.elr_update(isr, elr, lke, leader, target,
                                                            unclean, acceptable, min_isr)
    leader_ok = z3.Or(leader == -1, *[z3.And(leader == b, isr[b]) for b in range(N)])
    # callers' contract: a target ISR without the leader makes the leader unacceptable
    contract = z3.And(*[z3.Implies(z3.And(leader == b, z3.Not(target[b])),
                                   z3.Not(acceptable[b])) for b in range(N)])
    # trunk's maybeUpdateLastKnownLeader clears the last-known ELR in any record of a
    # partition that has (or gets) a leader: it is empty while a leader exists
    lke_only_leaderless = z3.Or(leader == -1, z3.Not(z3.Or(*lke)))
    premise = z3.And(min_isr >= 1, leader_ok, contract, lke_only_leaderless,
                     *[z3.Not(z3.And(a, e)) for a, e in zip(isr, elr, strict=True)])
    below_min = sum((z3.If(t, 1, 0) for t in target), z3.IntVal(0)) < min_isr
    keeps = z3.And(*[z3.Implies(z3.And(z3.Or(isr[b], elr[b]), z3.Not(unclean[b])),
                                z3.Or(new_isr[b], new_elr[b])) for b in range(N)])
    elected_ok = z3.Or(elected == leader, elected == -1,
                       *[z3.And(elected == b, acceptable[b]) for b in range(N)])
    shown = (("isrMask", _members(isr)), ("elrMask", _members(elr)),
             ("lastKnownElrMask", _members(lke)), ("leader", leader),
             ("targetMask", _members(target)), ("acceptableMask", _members(acceptable)),
             ("minIsr", min_isr), ("newLeader", elected), ("newIsrMask", _members(new_isr)),
             ("newElrMask", _members(new_elr)))
    action = "build (ELR on, ONLINE)"
    return [
        Claim("IsrElrDisjoint", action, premise,
              z3.And(*[z3.Not(z3.And(a, e)) for a, e in zip(new_isr, new_elr, strict=True)]),
              shown),
        Claim("LeaderInIsr", action, premise,
              z3.Or(elected == -1, *[z3.And(elected == b, new_isr[b]) for b in range(N)]),
              shown),
        Claim("CleanChangeBelowMinIsrKeepsElectable", action,
              z3.And(premise, below_min, z3.Not(was_unclean)), keeps, shown),
        Claim("NoUncleanShutdownInElr", action, premise,
              z3.And(*[z3.Implies(u, z3.Not(e)) for u, e in zip(unclean, new_elr,
                                                                   strict=True)]), shown),
        Claim("ElectedLeaderAcceptable", action, premise, elected_ok, shown),
    ]


# ---------------------------------------------------------------------------------------
# Unclean-shutdown detection at registration
# ---------------------------------------------------------------------------------------


def unclean_detection_claims() -> list[Claim]:
    """``kraft-unclean-detection``: crash restarts detected, clean restarts not flagged."""
    existing, same = z3.Bool("existing"), z3.Bool("sameIncarnation")
    existing_epoch, previous, version = z3.Int("existingEpoch"), z3.Int("previousEpoch"), \
        z3.Int("requestVersion")
    shown = (("existing", existing), ("existingEpoch", existing_epoch),
             ("previousEpoch", previous), ("sameIncarnation", same), ("version", version))
    restart = z3.And(existing, z3.Not(same), existing_epoch >= 0, version >= 2)
    crash = z3.And(restart, previous == -1)
    clean = z3.And(restart, previous == existing_epoch)
    out = []
    for label, detection in (("3.7", "3.7-"), ("3.8", "3.8"), ("3.9+", "3.9+")):
        detected = sym.unclean_detected(detection, existing, existing_epoch, same, previous,
                                        version)
        out.append(Claim("CrashRestartDetected", label, crash, detected, shown))
        out.append(Claim("CleanRestartNotFlagged", label, clean, z3.Not(detected), shown))
    return out


# ---------------------------------------------------------------------------------------
# Catalogue
# ---------------------------------------------------------------------------------------


def _group(key: str, make: Callable[[], list[Claim]], title: str) -> Group:
    def run(group: Group, timeout_ms: int) -> tuple[Row, ...]:
        return tuple(claim_row(c, timeout_ms) for c in make())

    def formulas(group: Group) -> list[z3.ExprRef]:
        return [c.violation() for c in make()]

    return Group(CORE_MODEL, key, N, title, run, formulas)


def _system_group(key: str, make: Callable[[], System], title: str) -> Group:
    def run(group: Group, timeout_ms: int) -> tuple[Row, ...]:
        system = make()
        return (*induction_rows(system, timeout_ms), bmc_row(system, timeout_ms))

    def formulas(group: Group) -> list[z3.ExprRef]:
        system = make()
        s, t = system.frame("s"), system.frame("t")
        return [system.init(s), *[a(s, t) for _, a in system.actions],
                *[inv(s) for _, inv in system.invariants]]

    return Group(CORE_MODEL, key, N, title, run, formulas)


def kraft_groups() -> list[Group]:
    """The KRaft groups, in a fixed order."""
    return [
        _group("kraft-alter-partition", alter_partition_claims,
               "KRaft AlterPartition (3.5+, v3): an accepted request is at the controller's "
               "leader and partition epochs, from the leader, with eligible members"),
        _group("kraft-kip903", kip903_claims,
               "KIP-903: no ISR member with a stale broker epoch is accepted -- 3.5+ at v3 "
               "(expected proved), 3.3-3.4 and v2 requests (expected refuted: KAFKA-14139)"),
        _system_group("kraft-kip903-system", lambda: sym.kip903_system(N, kip903=True),
                      "KIP-903 (3.5+) as a system: a follower restarted with an empty disk while "
                      "an AlterPartition adding it is in flight; every ISR member's log reaches "
                      "the HW, inductive (expected proved)"),
        _system_group("kraft-no-kip903-system", lambda: sym.kip903_system(N, kip903=False),
                      "The same without KIP-903 (3.3-3.4): the shortest trace to an ISR member "
                      "below the HW (KAFKA-14139, expected violated)"),
        _group("kraft-elr-update", elr_claims,
               "PartitionChangeBuilder with ELR on: disjoint ISR/ELR, leader in ISR, a clean "
               "change below min ISR keeps the electable replicas; the last known leader is "
               "elected unchecked (expected refuted)"),
        _group("kraft-unclean-detection", unclean_detection_claims,
               "KIP-966 unclean-shutdown detection at registration: 3.7 misses crashes, 3.8 "
               "uses the clean-shutdown epoch, 3.9+ flags every new incarnation"),
    ]
