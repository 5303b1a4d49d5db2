"""Eligible Leader Replicas: KIP-966 (Kafka 3.7 preview, 4.0+ with ``eligible.leader.replicas``).

Without ELR, a replica that leaves the ISR is forgotten, so when the last ISR member is
fenced the controller keeps it as the ISR (KRaft) and may elect it again even if it lost
its unflushed tail in an unclean shutdown -- committed data is lost.  KIP-966 keeps, next
to the ISR, the *eligible leader replicas*: replicas removed from the ISR while it was below
``min.insync.replicas``, known to hold everything up to the HW because the HW only moves
while the ISR has ``min.insync.replicas`` members.  Kafka's names:

* ``PartitionRegistration.elr`` / ``lastKnownElr`` -- ``PartitionRegistration`` here;
* ``PartitionChangeBuilder.maybePopulateTargetElr`` -- ``populate_target_elr``;
* ``PartitionChangeBuilder.electLeader`` (ISR first, then ELR, then unclean) --
  ``elect_leader``;
* the unclean recovery of KIP-966 (``unclean.recovery.strategy`` Balanced / Aggressive,
  the ``UncleanRecoveryManager`` asking replicas for their log end) --
  ``unclean_recovery_leader``;
* the HW rule of KIP-966 (``Partition.maybeIncrementLeaderHW`` with ELR on) --
  ``hw_may_advance``.

Shortcuts: replica order is the assignment order; "acceptable leader" is "live and
unfenced", a set the caller passes; KIP-966's "last known leader" option of balanced
recovery (a one-member last-known ELR) is left out; a replica's log is summarised by
(last epoch, LEO).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace
from enum import Enum, unique

from returns.result import Failure, Result, Success

from isrlab.core.errors import ElectionError, ElectionFailed, InvalidInput, Problem, reject
from isrlab.core.state import NO_LEADER


@unique
class LeaderRecoveryState(Enum):
    """KIP-704's ``LeaderRecoveryState`` (Kafka 3.2+); the values are Kafka's record values."""

    RECOVERED = 0
    RECOVERING = 1


@dataclass(frozen=True, slots=True)
class PartitionRegistration:
    """The controller's record of one partition (KRaft ``PartitionRegistration``).

    ``isr``, ``elr`` and ``last_known_elr`` are in assignment order; ``partition_epoch``
    counts every change, ``leader_epoch`` every leader change.  ``leader`` is
    ``NO_LEADER`` when no replica leads.  ``leader_recovery_state`` is RECOVERING after an
    unclean election until the leader reports it recovered (KIP-704).
    """

    replicas: tuple[int, ...]
    isr: tuple[int, ...]
    leader: int
    leader_epoch: int = 0
    partition_epoch: int = 0
    elr: tuple[int, ...] = ()
    last_known_elr: tuple[int, ...] = ()
    leader_recovery_state: LeaderRecoveryState = LeaderRecoveryState.RECOVERED


def _ordered(replicas: tuple[int, ...], members: frozenset[int]) -> tuple[int, ...]:
    return tuple(r for r in replicas if r in members)


def check_registration(reg: PartitionRegistration) -> Result[PartitionRegistration, InvalidInput]:
    """ISR, ELR and last-known ELR within the replicas, ISR and ELR disjoint; epochs ≥ 0.

    The last-known ELR may overlap the ELR: with ``useLastKnownLeaderInBalancedRecovery``
    (every KRaft controller path, 3.7+) it holds the last leader, which is in the ELR when the
    ISR emptied below min ISR (``PartitionChangeBuilderTest.testEligibleLeaderReplicas
    _IsrCanShrinkToZero``: ELR [1, 2, 3, 4], last-known ELR [1]).
    """
    assigned = frozenset(reg.replicas)
    isr, elr, lke = frozenset(reg.isr), frozenset(reg.elr), frozenset(reg.last_known_elr)
    if min(reg.leader_epoch, reg.partition_epoch) < 0 or any(r < 0 for r in reg.replicas):
        return reject(Problem.NEGATIVE_VALUE, f"epochs or ids in {reg}")
    if len(assigned) != len(reg.replicas):
        return reject(Problem.DUPLICATE_REPLICA, f"replicas {list(reg.replicas)}")
    if not (isr | elr | lke) <= assigned:
        return reject(Problem.ISR_NOT_SUBSET_OF_AR, f"ISR/ELR outside {list(reg.replicas)}")
    if isr & elr:
        return reject(Problem.DUPLICATE_REPLICA, f"ISR {reg.isr}, ELR {reg.elr}, "
                      f"last known ELR {reg.last_known_elr} overlap")
    if reg.leader != NO_LEADER and reg.leader not in isr:
        return reject(Problem.LEADER_NOT_IN_ISR, f"leader {reg.leader}, ISR {list(reg.isr)}")
    return Success(reg)


def populate_target_elr(
    reg: PartitionRegistration, target_isr: tuple[int, ...], min_insync_replicas: int,
    unclean_shutdown: frozenset[int] = frozenset(), enabled: bool = True,
) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """``PartitionChangeBuilder.maybePopulateTargetElr`` (3.7+): the ELR after an ISR change.

    Disabled: both stay as they are (empty, in a cluster that never enabled ELR).  A
    target ISR of at least ``min_insync_replicas`` members clears both.  Otherwise the ELR
    is (old ELR ∪ old ISR) minus the target ISR and minus replicas that shut down
    uncleanly; the last-known ELR collects the rest of (old ELR ∪ old ISR ∪ old last-known
    ELR) that is in neither the target ISR nor the ELR.  Returns ``(elr, last_known_elr)``
    in assignment order.  Total.
    """
    if not enabled:
        return reg.elr, reg.last_known_elr
    if len(target_isr) >= min_insync_replicas:
        return (), ()
    target = frozenset(target_isr)
    candidates = frozenset(reg.elr) | frozenset(reg.isr)
    elr = candidates - target - unclean_shutdown
    last_known = (candidates | frozenset(reg.last_known_elr)) - target - elr
    return _ordered(reg.replicas, elr), _ordered(reg.replicas, last_known)


def change_isr(
    reg: PartitionRegistration, target_isr: tuple[int, ...], min_insync_replicas: int,
    unclean_shutdown: frozenset[int] = frozenset(), enabled: bool = True,
) -> Result[PartitionRegistration, InvalidInput]:
    """``PartitionChangeBuilder.build`` for an ISR change that keeps the leader.

    The accepted AlterPartition or a fenced broker's removal (``ReplicationControlManager
    .handleBrokerFenced``): the new ISR, the ELR from ``populate_target_elr`` and the
    partition epoch plus one.  With ELR on the ISR may become empty (the leader then is
    ``NO_LEADER``); without it the leader must stay in the ISR.  Shortcut: a change that
    changes nothing still bumps the epoch (Kafka skips the record).
    """
    if min_insync_replicas < 1:
        return reject(Problem.BAD_CONFIG, f"min.insync.replicas {min_insync_replicas}")
    if not frozenset(target_isr) <= frozenset(reg.replicas):
        return reject(Problem.ISR_NOT_SUBSET_OF_AR, f"target ISR {list(target_isr)}")
    isr = _ordered(reg.replicas, frozenset(target_isr))
    leader = reg.leader if reg.leader in isr else NO_LEADER

    def build(r: PartitionRegistration) -> PartitionRegistration:
        elr, last_known = populate_target_elr(r, isr, min_insync_replicas, unclean_shutdown,
                                              enabled)
        epoch = r.leader_epoch + (1 if leader != r.leader else 0)
        return replace(r, isr=isr, leader=leader, leader_epoch=epoch,
                       partition_epoch=r.partition_epoch + 1, elr=elr,
                       last_known_elr=last_known)

    return check_registration(reg).map(build)


def fence_broker(
    reg: PartitionRegistration, broker: int, min_insync_replicas: int,
    unclean_shutdown: bool = False, enabled: bool = True,
) -> Result[PartitionRegistration, InvalidInput]:
    """``ReplicationControlManager.handleBrokerFenced`` / ``handleBrokerUncleanShutdown``.

    The broker leaves the ISR; with ELR off the last ISR member stays (KRaft keeps a
    one-member ISR with no leader, the pre-KIP-966 behaviour behind its data loss).  A
    broker that comes back after an unclean shutdown (``unclean_shutdown``) is also taken
    out of the ELR (to the last-known ELR).  Leader election is the caller's next step.
    """
    last_member = reg.isr == (broker,)
    target = reg.isr if last_member and not enabled else tuple(r for r in reg.isr if r != broker)
    dirty = frozenset({broker}) if unclean_shutdown else frozenset()
    changed = change_isr(reg, target, min_insync_replicas, dirty, enabled)
    if last_member and not enabled:
        return changed.map(lambda r: replace(r, leader=NO_LEADER,
                                             leader_epoch=reg.leader_epoch + 1))
    return changed


@dataclass(frozen=True, slots=True)
class ElectionResult:
    """``PartitionChangeBuilder.ElectionResult``: the new registration, and whether unclean."""

    registration: PartitionRegistration
    unclean: bool


def elect_leader(
    reg: PartitionRegistration, acceptable: frozenset[int], elr_enabled: bool = True,
    unclean_leader_election_enable: bool = False, min_insync_replicas: int = 1,
) -> Result[ElectionResult, ElectionFailed | InvalidInput]:
    """``PartitionChangeBuilder.electLeader``: ISR first, then ELR (clean), then unclean.

    The first replica (assignment order) in the ISR that is acceptable (live, unfenced)
    leads.  Else, with ELR on, the first acceptable ELR member: a clean election, it leads
    with ISR = {it}, and ``populate_target_elr`` runs on that ISR (it leaves the ELR; a
    one-member ISR at ``min_insync_replicas`` clears the ELR, as ``build`` does).  Else,
    with unclean election, the first acceptable replica leads alone and the ELR is
    cleared.  Else ``NoReplicaOnline``.  The leader epoch and partition epoch go up by one.
    Shortcut: KIP-966's unclean recovery (longest log) is ``unclean_recovery_leader``;
    this is the plain unclean election.
    """
    checked = check_registration(reg)
    if isinstance(checked, Failure):
        return checked

    def pick(members: tuple[int, ...]) -> int | None:
        return next((r for r in reg.replicas if r in members and r in acceptable), None)

    def elected(leader: int, isr: tuple[int, ...], elr: tuple[int, ...],
                last_known: tuple[int, ...], unclean: bool) -> ElectionResult:
        return ElectionResult(replace(reg, leader=leader, isr=isr, elr=elr,
                                      last_known_elr=last_known,
                                      leader_epoch=reg.leader_epoch + 1,
                                      partition_epoch=reg.partition_epoch + 1), unclean)

    leader = pick(reg.isr)
    if leader is not None:
        return Success(elected(leader, reg.isr, reg.elr, reg.last_known_elr, False))
    leader = pick(reg.elr) if elr_enabled else None
    if leader is not None:
        elr, last_known = populate_target_elr(reg, (leader,), min_insync_replicas)
        return Success(elected(leader, (leader,), elr, last_known, False))
    leader = pick(reg.replicas) if unclean_leader_election_enable else None
    if leader is not None:
        return Success(elected(leader, (leader,), (), (), True))
    return Failure(ElectionFailed(ElectionError.NO_REPLICA_ONLINE,
                                  f"no acceptable replica in ISR {list(reg.isr)} or ELR "
                                  f"{list(reg.elr)}"))


def hw_may_advance(isr_size: int, min_insync_replicas: int, elr_enabled: bool = True) -> bool:
    """KIP-966's HW rule: the HW moves only while |ISR| ≥ min.insync.replicas.

    ``Partition.maybeIncrementLeaderHW`` returns early when ``isUnderMinIsr`` (Kafka 4.x,
    with KIP-966); before, the HW moved with any ISR (``elr_enabled=False``).  This is what
    makes an ELR member complete: it left the ISR when the ISR dropped below
    ``min.insync.replicas`` and the HW has not moved since.  Total.
    """
    return not elr_enabled or isr_size >= min_insync_replicas


@unique
class UncleanRecoveryStrategy(Enum):
    """KIP-966's ``unclean.recovery.strategy``: when the controller stops waiting."""

    NONE = "none"
    BALANCED = "balanced"
    AGGRESSIVE = "aggressive"


@dataclass(frozen=True, slots=True)
class LogEnd:
    """What a replica reports to the unclean recovery (``GetReplicaLogInfo``)."""

    last_epoch: int
    log_end_offset: int


def unclean_recovery_leader(
    reg: PartitionRegistration, reported: Mapping[int, LogEnd],
    strategy: UncleanRecoveryStrategy = UncleanRecoveryStrategy.BALANCED,
) -> int | None:
    """KIP-966 unclean recovery: the replica with the longest log, once enough reported.

    ``BALANCED`` waits until every last-known-ELR member reported, or (with none known) a
    majority of the replicas; ``AGGRESSIVE`` elects as soon as one replica reported;
    ``NONE`` never recovers.  Among the reports (replicas of the partition only) the
    largest (last epoch, LEO) wins, ties to assignment order.  ``None``: keep waiting.
    Total.
    """
    reports = {r: reported[r] for r in reg.replicas if r in reported}
    if strategy is UncleanRecoveryStrategy.NONE or not reports:
        return None
    if strategy is UncleanRecoveryStrategy.BALANCED:
        if reg.last_known_elr:
            enough = all(r in reports for r in reg.last_known_elr)
        else:
            enough = 2 * len(reports) > len(reg.replicas)
        if not enough:
            return None
    return max(reports, key=lambda r: (reports[r].last_epoch, reports[r].log_end_offset,
                                       -reg.replicas.index(r)))
