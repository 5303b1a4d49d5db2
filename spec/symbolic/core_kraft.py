"""Z3 encodings of the KRaft-era core functions (issue 32, item 5).

Encoded functions, each differentially tested against the Python in
``tests/z3/test_core_kraft_encoding.py``:

* ``ineligible`` -- ``isrlab.core.kraft_alter_partition.ineligible_replicas`` per broker: not
  registered, in controlled shutdown, fenced, or (KIP-903) a broker epoch other than -1 that
  is not the registered one;
* ``alter_partition_error`` -- ``isrlab.core.kraft_alter_partition.alter_partition``'s error code
  (Kafka's numbers, 0 = accepted): the sender's broker epoch, then
  ``validate_alter_partition_data`` (partition-epoch validation, KIP-704, KIP-841/903);
* ``elr_update`` -- ``isrlab.core.partition_change_builder.build`` with ELR on and an ONLINE
  election: the new ISR, ELR and leader, and whether the election was unclean (only the
  last-known-leader election can be, without UNCLEAN);
* ``unclean_detected`` -- ``isrlab.core.broker_heartbeat.register_broker``'s
  ``unclean_shutdown`` verdict for each ``UncleanDetection`` version.

Shortcuts: ``n`` brokers ``0..n-1``, all replicas, in assignment order ``0..n-1``; sets are one
Bool per broker (so no duplicates); ``NO_LEADER`` is -1; epochs are unbounded Ints.
"""

from __future__ import annotations

from typing import TypeAlias

import z3

from isrlab.spec.symbolic.core_mechanisms import populate_target_elr

Int: TypeAlias = z3.ArithRef
Bool: TypeAlias = z3.BoolRef

NONE, NOT_CONTROLLER, INVALID_REQUEST = 0, 41, 42
OPERATION_NOT_ATTEMPTED, FENCED_LEADER_EPOCH, STALE_BROKER_EPOCH = 55, 74, 77
INVALID_UPDATE_VERSION, INELIGIBLE_REPLICA = 95, 107


def _count(bits: tuple[Bool, ...]) -> Int:
    total: Int = z3.IntVal(0)
    for b in bits:
        total = total + z3.If(b, 1, 0)
    return total


def _any(bits: tuple[Bool, ...]) -> Bool:
    return z3.Or(*bits) if bits else z3.BoolVal(False)


def ineligible(registered: Bool, fenced: Bool, shutting_down: Bool, registered_epoch: Int,
               proposed_epoch: Int, kip903: bool) -> Bool:
    """One proposed ISR member is ineligible (``ineligibleReplicasForIsr``)."""
    stale = z3.And(proposed_epoch != -1, proposed_epoch != registered_epoch)
    bad = z3.Or(z3.Not(registered), shutting_down, fenced)
    return z3.Or(bad, stale) if kip903 else bad


def alter_partition_error(
    leader: Int, leader_epoch: Int, partition_epoch: Int, recovering: Bool,
    registered: tuple[Bool, ...], fenced: tuple[Bool, ...], shutting_down: tuple[Bool, ...],
    registered_epoch: tuple[Int, ...], sender: int, sender_epoch: Int, request_leader_epoch: Int,
    request_partition_epoch: Int, new_isr: tuple[Bool, ...], member_epoch: tuple[Int, ...],
    request_recovering: Bool, version: int, kip841: bool, kip903: bool,
) -> Int:
    """``alter_partition``'s error for a request from broker ``sender`` (request ``version``;
    below 3 the members' epochs are -1, as the Python rewrites them)."""
    n = len(new_isr)
    epochs = member_epoch if version >= 3 else tuple(z3.IntVal(-1) for _ in range(n))
    has_leader = _any(tuple(z3.And(new_isr[b], leader == b) for b in range(n)))
    bad_member = _any(tuple(z3.And(new_isr[b], ineligible(
        registered[b], fenced[b], shutting_down[b], registered_epoch[b], epochs[b], kip903))
        for b in range(n)))
    ineligible_code = INELIGIBLE_REPLICA if version > 1 else OPERATION_NOT_ATTEMPTED
    stale = z3.Or(z3.Not(registered[sender]), registered_epoch[sender] != sender_epoch)
    ahead = z3.Or(request_leader_epoch > leader_epoch, request_partition_epoch > partition_epoch)
    bad_recovery = z3.And(request_recovering, z3.Or(_count(new_isr) > 1, z3.Not(recovering)))
    return z3.If(stale, STALE_BROKER_EPOCH,
           z3.If(ahead, NOT_CONTROLLER,
           z3.If(request_leader_epoch < leader_epoch, FENCED_LEADER_EPOCH,
           z3.If(leader != sender, INVALID_REQUEST,
           z3.If(request_partition_epoch < partition_epoch, INVALID_UPDATE_VERSION,
           z3.If(z3.Or(z3.Not(has_leader), bad_recovery), INVALID_REQUEST,
           z3.If(z3.And(z3.BoolVal(kip841), bad_member), ineligible_code, NONE)))))))


def elr_update(
    isr: tuple[Bool, ...], elr: tuple[Bool, ...], last_known: tuple[Bool, ...], leader: Int,
    target: tuple[Bool, ...], unclean: tuple[Bool, ...], acceptable: tuple[Bool, ...],
    min_isr: Int,
) -> tuple[tuple[Bool, ...], tuple[Bool, ...], Int, Bool]:
    """``build`` with ELR on, ONLINE election, last-known-leader mode: (ISR, ELR, leader, unclean).

    ``maybePopulateTargetElr``; ``electAnyLeader`` (the current leader if valid, else the first
    valid replica, else the single last-known-ELR member when ISR and ELR are empty -- unclean,
    unchecked); a leader from the ELR takes ISR = {it} and leaves the ELR; an unclean one takes
    ISR = {it} and clears the ELR.
    """
    n = len(isr)
    target_elr, _ = populate_target_elr(isr, elr, last_known, target, unclean, min_isr)
    empty_target = z3.Not(_any(target))
    valid = tuple(z3.And(z3.Or(target[b], z3.And(empty_target, target_elr[b])), acceptable[b])
                  for b in range(n))
    leader_valid = _any(tuple(z3.And(leader == b, valid[b]) for b in range(n)))
    first_valid: Int = z3.IntVal(-1)
    for b in reversed(range(n)):
        first_valid = z3.If(valid[b], z3.IntVal(b), first_valid)
    lkl_possible = z3.And(empty_target, z3.Not(_any(target_elr)), _count(last_known) == 1)
    lkl_member: Int = z3.IntVal(-1)
    for b in reversed(range(n)):
        lkl_member = z3.If(last_known[b], z3.IntVal(b), lkl_member)
    use_lkl = z3.And(z3.Not(leader_valid), first_valid == -1, lkl_possible)
    elected = z3.If(leader_valid, leader, z3.If(first_valid != -1, first_valid,
                                                z3.If(lkl_possible, lkl_member, z3.IntVal(-1))))
    changed = elected != leader
    from_elr = _any(tuple(z3.And(elected == b, target_elr[b]) for b in range(n)))
    solo = z3.And(changed, z3.Or(from_elr, use_lkl))
    new_isr = tuple(z3.If(solo, elected == b, target[b]) for b in range(n))
    new_elr = tuple(z3.And(z3.Not(use_lkl), target_elr[b],
                           z3.Not(z3.And(changed, from_elr, elected == b)))
                    for b in range(n))
    return new_isr, new_elr, elected, z3.And(use_lkl, changed)


def unclean_detected(detection: str, existing: Bool, existing_epoch: Int,
                     same_incarnation: Bool, previous_epoch: Int, version: Int) -> Bool:
    """``register_broker``'s ``unclean_shutdown`` for ``UncleanDetection`` ``detection`` (its
    value: ``"3.7-"``, ``"3.8"``, ``"3.9+"``); ``same_incarnation`` only means something when
    ``existing``."""
    if detection == "3.7-":
        return z3.BoolVal(False)
    if detection == "3.8":
        return z3.Or(version < 2, z3.Not(existing), previous_epoch != existing_epoch)
    return z3.Or(z3.Not(existing), z3.Not(same_incarnation))
