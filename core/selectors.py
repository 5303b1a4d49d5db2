"""The controller's ``PartitionLeaderSelector`` family, as pure functions.

Each selector takes the partition's current ``LeaderAndIsr`` (as read from ZooKeeper), the
controller's view of the cluster, and returns ``Success(Election)`` -- the new
``LeaderAndIsr`` and the replicas that must receive the LeaderAndIsr request -- or
``Failure(ElectionFailed)`` (Kafka's ``NoReplicaOnlineException`` and friends).

Every real election bumps ``leader_epoch`` and ``zk_version`` by one (the version the
conditional ZooKeeper write will produce); the no-op selector changes nothing.  "Picks a
replica" always means the first in assignment order, as Kafka's ``head`` does, so the
functions are deterministic.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from returns.result import Failure, Result, Success

from isrlab.core.errors import ElectionError, ElectionFailed, InvalidInput, Problem, reject
from isrlab.core.state import LeaderAndIsr, check_replica_set

Selection = Result["Election", ElectionFailed | InvalidInput]
"""What every selector returns: an election, a failed election, or rejected input."""


@dataclass(frozen=True, slots=True)
class Election:
    """A selector's answer: the new leader and ISR, and the LeaderAndIsr receivers."""

    leader_and_isr: LeaderAndIsr
    receivers: tuple[int, ...]


def _elect(current: LeaderAndIsr, leader: int, isr: Iterable[int]) -> LeaderAndIsr:
    return LeaderAndIsr(leader, current.leader_epoch + 1, tuple(isr), current.zk_version + 1)


def _fail(error: ElectionError, reason: str) -> Selection:
    return Failure(ElectionFailed(error, reason))


def _check(current: LeaderAndIsr, replicas: tuple[int, ...]) -> Result[None, InvalidInput]:
    if min(current.leader_epoch, current.zk_version) < 0:
        return reject(Problem.NEGATIVE_VALUE, f"epoch/version in {current}")
    return check_replica_set(replicas, current.isr)


def offline_partition_leader_selector(
    current: LeaderAndIsr,
    assigned_replicas: tuple[int, ...],
    live_brokers: frozenset[int],
    unclean_leader_election_enable: bool = False,
) -> Selection:
    """``OfflinePartitionLeaderSelector``: a new topic's partition, or its leader died.

    Live ISR non-empty: leader = the first live assigned replica in the live ISR, ISR =
    the live ISR.  Else without unclean election: ``NoReplicaOnline``.  Else the first live
    assigned replica leads alone (ISR = {it}; committed data may be lost); none alive:
    ``NoReplicaOnline``.  Receivers: the live assigned replicas.
    """
    checked = _check(current, assigned_replicas)
    if isinstance(checked, Failure):
        return checked
    live_assigned = tuple(r for r in assigned_replicas if r in live_brokers)
    live_isr = tuple(r for r in current.isr if r in live_brokers)
    if live_isr:
        leader = next(r for r in live_assigned if r in live_isr)
        return Success(Election(_elect(current, leader, live_isr), live_assigned))
    if not unclean_leader_election_enable:
        return _fail(
            ElectionError.NO_REPLICA_ONLINE,
            f"no broker in ISR {list(current.isr)} is alive and unclean election is disabled",
        )
    if not live_assigned:
        return _fail(
            ElectionError.NO_REPLICA_ONLINE,
            f"no assigned replica of {list(assigned_replicas)} is alive",
        )
    leader = live_assigned[0]
    return Success(Election(_elect(current, leader, (leader,)), live_assigned))


def reassigned_partition_leader_selector(
    current: LeaderAndIsr,
    reassigned_replicas: tuple[int, ...],
    live_brokers: frozenset[int],
) -> Selection:
    """``ReassignedPartitionLeaderSelector``: elect from the new assignment.

    Leader = the first reassigned replica that is alive and in the current ISR; the ISR is
    unchanged; receivers: the reassigned replicas.  None: ``NoReplicaOnline``.
    """
    checked = _check(current, tuple(sorted(set(current.isr))))
    if isinstance(checked, Failure):
        return checked
    candidates = [r for r in reassigned_replicas if r in live_brokers and r in current.isr]
    if not candidates:
        reason = (
            "the list of reassigned replicas is empty"
            if not reassigned_replicas
            else f"none of the reassigned replicas {list(reassigned_replicas)} is alive and in-sync"
        )
        return _fail(ElectionError.NO_REPLICA_ONLINE, reason)
    return Success(Election(_elect(current, candidates[0], current.isr), reassigned_replicas))


def controlled_shutdown_leader_selector(
    current: LeaderAndIsr,
    assigned_replicas: tuple[int, ...],
    live_or_shutting_down_brokers: frozenset[int],
    shutting_down_brokers: frozenset[int],
) -> Selection:
    """``ControlledShutdownLeaderSelector``: move leadership off brokers shutting down.

    New ISR = current ISR minus the shutting-down brokers; leader = the first live (or
    shutting-down) assigned replica in the new ISR; receivers: the live or shutting-down
    assigned replicas.  None: ``StateChangeFailed`` (Kafka's exception for this selector).
    """
    checked = _check(current, assigned_replicas)
    if isinstance(checked, Failure):
        return checked
    live_assigned = tuple(r for r in assigned_replicas if r in live_or_shutting_down_brokers)
    new_isr = tuple(r for r in current.isr if r not in shutting_down_brokers)
    leader = next((r for r in live_assigned if r in new_isr), None)
    if leader is None:
        return _fail(
            ElectionError.STATE_CHANGE_FAILED,
            f"no replica in ISR {list(current.isr)} is alive and not shutting down",
        )
    return Success(Election(_elect(current, leader, new_isr), live_assigned))


def preferred_replica_partition_leader_selector(
    current: LeaderAndIsr,
    assigned_replicas: tuple[int, ...],
    live_brokers: frozenset[int],
) -> Selection:
    """``PreferredReplicaPartitionLeaderSelector``: give leadership back to AR's first replica.

    Already the leader: ``LeaderElectionNotNeeded``.  Alive and in the ISR: it leads, ISR
    unchanged, receivers = the assigned replicas.  Otherwise ``StateChangeFailed``.
    """
    checked = _check(current, assigned_replicas)
    if isinstance(checked, Failure):
        return checked
    if not assigned_replicas:
        return _fail(ElectionError.NO_REPLICA_ONLINE, "the partition has no assigned replicas")
    preferred = assigned_replicas[0]
    if current.leader == preferred:
        return _fail(
            ElectionError.LEADER_ELECTION_NOT_NEEDED, f"preferred replica {preferred} leads"
        )
    if preferred in live_brokers and preferred in current.isr:
        return Success(Election(_elect(current, preferred, current.isr), assigned_replicas))
    return _fail(
        ElectionError.STATE_CHANGE_FAILED,
        f"preferred replica {preferred} is not alive or not in ISR {list(current.isr)}",
    )


def no_op_leader_selector(
    current: LeaderAndIsr, assigned_replicas: tuple[int, ...]
) -> Selection:
    """``NoOpLeaderSelector``: returns the current LeaderAndIsr and AR unchanged.

    Kafka logs a warning ("I should never have been asked to perform leader election");
    no epoch is bumped.  Always succeeds.
    """
    return Success(Election(current, assigned_replicas))
