"""KIP-966 (Eligible Leader Replicas) and unclean recovery in the ``kafka`` model's controller.

The ``kafka`` model's controller writes a ZooKeeper-style partition state; with ``elr``
(Kafka 3.7+ with the ``eligible.leader.replicas`` feature, KRaft only) it also keeps the
ELR and the last-known ELR of KRaft's ``PartitionRegistration`` and elects as
``PartitionChangeBuilder`` does.  This module translates between the model's bit masks
and ``isrlab.core.elr``'s ``PartitionRegistration`` and composes ``isrlab.core.elr``'s functions
into the
controller's steps; the model (``isrlab.spec.kafka.model``) calls it.  Kafka's names:

* ``populate`` -- ``PartitionChangeBuilder.maybePopulateTargetElr`` after any ISR write
  (``isrlab.core.elr.populate_target_elr``);
* ``fence_and_elect`` -- ``ReplicationControlManager.handleBrokerFenced`` /
  ``handleBrokerUncleanShutdown`` followed by ``PartitionChangeBuilder.electLeader``
  (ISR, then ELR, then unclean: ``isrlab.core.elr.fence_broker``, ``isrlab.core.elr.elect_leader``),
  or,
  with ``unclean_recovery``, KIP-966's unclean recovery
  (``isrlab.core.elr.unclean_recovery_leader``);
* ``unclean_shutdown_change`` -- ``ReplicationControlManager.handleBrokerUncleanShutdown``
  for a replica that is not the partition's leader: it leaves the ISR and the ELR.

Shortcuts: a registration's partition epoch is not kept (the model's ZooKeeper leader
epoch plays ``zkVersion``'s part); replicas are ordered by the assignment.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping
from dataclasses import replace
from enum import StrEnum
from typing import NamedTuple

from returns.result import Success

from isrlab.core.elr import (
    ElectionResult,
    LogEnd,
    PartitionRegistration,
    UncleanRecoveryStrategy,
    elect_leader,
    fence_broker,
    populate_target_elr,
    unclean_recovery_leader,
)
from isrlab.core.state import NO_LEADER
from isrlab.spec.kafka.state import NONE, ZkPartitionState, mask_of


class UncleanRecovery(StrEnum):
    """The ``unclean_recovery`` parameter's values: today's unclean election (the first live
    replica in assignment order) or KIP-966's two waiting strategies."""

    FIRST_ALIVE = "first-alive"
    BALANCED = "balanced"
    AGGRESSIVE = "aggressive"


_STRATEGY = {UncleanRecovery.BALANCED: UncleanRecoveryStrategy.BALANCED,
             UncleanRecovery.AGGRESSIVE: UncleanRecoveryStrategy.AGGRESSIVE}


def _ordered(ar: tuple[int, ...], mask: int) -> tuple[int, ...]:
    return tuple(r for r in ar if mask >> r & 1)


def registration(ctrl: ZkPartitionState) -> PartitionRegistration:
    """The controller's state as KRaft's ``PartitionRegistration`` (partition epoch 0)."""
    ar = ctrl.assigned_replicas
    return PartitionRegistration(
        replicas=ar, isr=_ordered(ar, ctrl.isr),
        leader=NO_LEADER if ctrl.leader == NONE else ctrl.leader,
        leader_epoch=ctrl.leader_epoch, elr=_ordered(ar, ctrl.elr),
        last_known_elr=_ordered(ar, ctrl.last_known_elr))


@functools.lru_cache(maxsize=1 << 16)
def populate(old: ZkPartitionState, new_isr: int, min_isr: int,
             unclean: int = 0) -> tuple[int, int]:
    """``maybePopulateTargetElr`` for an ISR write from ``old`` to the mask ``new_isr``:
    the new ``(elr, last_known_elr)`` masks (replicas in ``unclean`` shut down uncleanly;
    memoised: a pure function of few distinct values)."""
    target = _ordered(old.assigned_replicas, new_isr)
    elr, lke = populate_target_elr(registration(old), target, min_isr,
                                   frozenset(_ordered(old.assigned_replicas, unclean)))
    return mask_of(elr), mask_of(lke)


class Elected(NamedTuple):
    """A controller change: the new registration as masks, and whether it was unclean.

    ``leader`` is ``NONE`` when no replica could be elected (the partition is offline)."""

    leader: int
    isr: int
    elr: int
    last_known_elr: int
    unclean: bool


def _elected(result: ElectionResult) -> Elected:
    r = result.registration
    return Elected(r.leader, mask_of(r.isr), mask_of(r.elr), mask_of(r.last_known_elr),
                   result.unclean)


def elect(reg: PartitionRegistration, acceptable: frozenset[int], min_isr: int,
          unclean_election: bool, recovery: str,
          log_ends: Mapping[int, LogEnd]) -> Elected | None:
    """``PartitionChangeBuilder.electLeader`` with ELR: the first acceptable ISR member,
    else the first acceptable ELR member (clean), else, with ``unclean_election``, the
    first acceptable replica (``recovery="first-alive"``, Kafka's unclean election) or
    KIP-966's unclean recovery (``balanced`` / ``aggressive``: the longest log among the
    acceptable replicas, which report ``log_ends``).  ``None``: nobody may lead yet."""
    first_alive = unclean_election and recovery == UncleanRecovery.FIRST_ALIVE
    result = elect_leader(reg, acceptable, True, first_alive, min_isr)
    if isinstance(result, Success):
        return _elected(result.unwrap())
    if not unclean_election or recovery == UncleanRecovery.FIRST_ALIVE:
        return None
    strategy = _STRATEGY[UncleanRecovery(recovery)]
    leader = unclean_recovery_leader(
        reg, {r: log_ends[r] for r in acceptable if r in log_ends}, strategy)
    if leader is None:
        return None
    return _elected(ElectionResult(replace(reg, leader=leader, isr=(leader,), elr=(),
                                           last_known_elr=()), True))


def fence_and_elect(
    ctrl: ZkPartitionState, fenced: int, dirty: bool, passes: tuple[frozenset[int], ...],
    min_isr: int, unclean_election: bool, recovery: str, log_ends: Mapping[int, LogEnd],
) -> Elected:
    """The dead leader ``fenced`` leaves the ISR (``handleBrokerFenced``: into the ELR if
    the ISR drops below ``min_isr``; with ``dirty``, ``handleBrokerUncleanShutdown``: out of
    the ELR too), then ``elect`` with each acceptable set of ``passes`` in turn (the
    controller's event order: the failure before the broker's return).  When no pass
    elects, the partition is left without a leader (``Elected.leader`` is ``NONE``)."""
    reg = registration(ctrl)
    if fenced != NONE:
        reg = fence_broker(reg, fenced, min_isr, dirty, True).unwrap()
    for acceptable in passes:
        elected = elect(reg, acceptable, min_isr, unclean_election, recovery, log_ends)
        if elected is not None:
            return elected
    return Elected(NONE, mask_of(reg.isr), mask_of(reg.elr), mask_of(reg.last_known_elr),
                   False)


def unclean_shutdown_change(ctrl: ZkPartitionState, broker: int,
                            min_isr: int) -> tuple[int, int, int]:
    """``handleBrokerUncleanShutdown`` for a replica that does not lead: the new ``(isr,
    elr, last_known_elr)`` masks without ``broker`` in the ISR or the ELR (it goes to the
    last-known ELR while the ISR is below ``min_isr``)."""
    isr = ctrl.isr & ~(1 << broker)
    elr, lke = populate(ctrl, isr, min_isr, 1 << broker)
    return isr, elr, lke
