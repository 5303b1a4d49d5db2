"""Z3 encodings of the KRaft-era core functions (issue 32, item 5).

Encoded functions, each differentially tested against the Python in
``tests/z3/test_core_kraft_encoding.py``:

* ``ineligible`` -- ``isrlab.core.kraft_alter_partition.ineligible_replicas`` per broker: not
  registered, in controlled shutdown, fenced, or (KIP-903) a broker epoch other than -1 that
  is not the registered one;
* ``alter_partition_error`` -- ``isrlab.core.kraft_alter_partition.alter_partition``'s error code
  (Kafka's numbers, 0 = accepted): the sender's broker epoch, then
  ``validate_alter_partition_data`` (partition-epoch validation, KIP-704, KIP-841/903), then
  the election a leader no longer active causes (``NEW_LEADER_ELECTED``);
* ``elr_update`` -- ``isrlab.core.partition_change_builder.build`` with ELR on and an ONLINE
  election: the new ISR, ELR and leader, and whether the election was unclean (only the
  last-known-leader election can be, without UNCLEAN);
* ``unclean_detected`` -- ``isrlab.core.broker_heartbeat.register_broker``'s
  ``unclean_shutdown`` verdict for each ``UncleanDetection`` version;
* ``accepts_proposal`` -- when ``alter_partition`` accepts a leader's expansion (partition epoch,
  KIP-903), the guard of ``kip903_system``'s ``Accept``.

System: ``kip903_system`` -- KAFKA-14139 (a follower restarted with an empty disk while an
AlterPartition adding it is in flight), with or without KIP-903's broker-epoch check.

Shortcuts: ``n`` brokers ``0..n-1``, all replicas, in assignment order ``0..n-1``; sets are one
Bool per broker (so no duplicates); ``NO_LEADER`` is -1; epochs are unbounded Ints.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeAlias, cast

import z3

from isrlab.spec.symbolic.core_mechanisms import System, populate_target_elr

Int: TypeAlias = z3.ArithRef
Bool: TypeAlias = z3.BoolRef

NONE, NOT_CONTROLLER, INVALID_REQUEST = 0, 41, 42
OPERATION_NOT_ATTEMPTED, FENCED_LEADER_EPOCH, STALE_BROKER_EPOCH = 55, 74, 77
INVALID_UPDATE_VERSION, INELIGIBLE_REPLICA, NEW_LEADER_ELECTED = 95, 107, 108


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
    # A valid request from a leader the controller no longer finds acceptable (fenced or in
    # controlled shutdown): PartitionChangeBuilder elects another leader (or none), the record
    # is written and the answer is NEW_LEADER_ELECTED (FENCED_LEADER_EPOCH below version 2).
    inactive_sender = z3.Or(fenced[sender], shutting_down[sender])
    elected_code = NEW_LEADER_ELECTED if version > 1 else FENCED_LEADER_EPOCH
    return z3.If(stale, STALE_BROKER_EPOCH,
           z3.If(ahead, NOT_CONTROLLER,
           z3.If(request_leader_epoch < leader_epoch, FENCED_LEADER_EPOCH,
           z3.If(leader != sender, INVALID_REQUEST,
           z3.If(request_partition_epoch < partition_epoch, INVALID_UPDATE_VERSION,
           z3.If(z3.Or(z3.Not(has_leader), bad_recovery), INVALID_REQUEST,
           z3.If(z3.And(z3.BoolVal(kip841), bad_member), ineligible_code,
           z3.If(inactive_sender, elected_code, NONE))))))))


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


# ---------------------------------------------------------------------------------------
# Kip903: a follower restarted with an empty disk and an AlterPartition in flight
# ---------------------------------------------------------------------------------------

State: TypeAlias = dict[str, z3.ExprRef]


def accepts_proposal(proposal_version: Int, version: Int, proposed: tuple[Bool, ...],
                     carried_epoch: tuple[Int, ...], registered_epoch: tuple[Int, ...],
                     kip903: bool) -> Bool:
    """The controller accepts the leader's expansion: ``alter_partition`` answers ``NONE`` for
    a request at the current leader epoch from the leader, every member registered and
    unfenced, as ``kip903_system``'s ``Accept`` assumes -- the partition epoch matches and, with
    ``kip903``, every carried broker epoch is the registered one."""
    fresh = z3.And(*[z3.Implies(p, c == r) for p, c, r in zip(proposed, carried_epoch,
                                                              registered_epoch, strict=True)])
    return z3.And(proposal_version == version, fresh if kip903 else z3.BoolVal(True))


def _kip903_vars(n: int) -> tuple[tuple[str, str], ...]:
    out = [("hw", "int"), ("ver", "int"), ("pver", "int"), ("pending", "bool")]
    for i in range(n):
        out += [(f"leo{i}", "int"), (f"kleo{i}", "int"), (f"isr{i}", "bool"),
                (f"epoch{i}", "int"), (f"seen{i}", "int"), (f"prop{i}", "bool"),
                (f"pseen{i}", "int")]
    return tuple(out)


def _v(s: State, name: str) -> z3.ExprRef:
    return s[name]


def _i(s: State, name: str) -> Int:
    return cast(Int, s[name])


def _b(s: State, name: str) -> Bool:
    return cast(Bool, s[name])


def kip903_system(n: int, kip903: bool) -> System:
    """KAFKA-14139 as a transition system over ``n`` replicas, broker 0 the leader.

    Per follower ``i``: its log end ``leo``, the leader's view of it ``kleo`` (set by a fetch),
    the registered broker epoch ``epoch``, the epoch its last fetch carried ``seen``; the
    controller's ISR (the leader's committed one) and partition epoch ``ver``; at most one
    AlterPartition in flight: the proposed ISR ``prop``, the epochs it carries ``pseen`` and the
    partition epoch it was built on ``pver``.  Steps: a follower fetches (its log grows up to
    the leader's, the leader records its LEO and epoch); the leader raises its HW over the
    maximal ISR (committed ∪ proposed, by ``kleo``); the leader proposes a follower it sees
    caught up (``kleo >= hw``); the controller accepts at the current partition epoch -- with
    ``kip903`` only if every proposed member's carried epoch is its registered one
    (``ineligible``) -- or refuses; a follower restarts with an empty disk: a new broker epoch,
    an empty log, and, if it was in the ISR, fenced out of it (a partition epoch bump).  The
    leader's log is ``leo0``; appends are left out (a log grows only by fetches).  Target:
    every ISR member's log reaches the HW (``IsrHoldsHw``).
    """
    names = [v for v, _ in _kip903_vars(n)]

    def same(s: State, t: State, *changed: str) -> Bool:
        return z3.And(*[_v(s, v) == _v(t, v) for v in names if v not in changed])

    def init(s: State) -> Bool:
        return z3.And(_i(s, "hw") == 0, _i(s, "ver") == 0, _i(s, "pver") == 0,
                      z3.Not(_b(s, "pending")), _i(s, "leo0") >= 0, _b(s, "isr0"),
                      *[z3.And(_i(s, f"epoch{i}") == 0, _i(s, f"seen{i}") == 0,
                               _i(s, f"pseen{i}") == 0, z3.Not(_b(s, f"prop{i}")))
                        for i in range(n)],
                      *[z3.And(_i(s, f"leo{i}") == 0, _i(s, f"kleo{i}") == 0,
                               z3.Not(_b(s, f"isr{i}"))) for i in range(1, n)])

    def fetch(i: int) -> Callable[[State, State], Bool]:
        def act(s: State, t: State) -> Bool:
            new = _i(t, f"leo{i}")
            return z3.And(new >= _i(s, f"leo{i}"), new <= _i(s, "leo0"),
                          _i(t, f"kleo{i}") == new, _i(t, f"seen{i}") == _i(s, f"epoch{i}"),
                          same(s, t, f"leo{i}", f"kleo{i}", f"seen{i}"))
        return act

    def members(s: State, i: int) -> Bool:
        return z3.Or(_b(s, f"isr{i}"), z3.And(_b(s, "pending"), _b(s, f"prop{i}")))

    def raise_hw(s: State, t: State) -> Bool:
        low: Int = _i(s, "leo0")
        for i in range(1, n):
            low = z3.If(z3.And(members(s, i), _i(s, f"kleo{i}") < low), _i(s, f"kleo{i}"), low)
        hw = _i(s, "hw")
        return z3.And(_i(t, "hw") == z3.If(low > hw, low, hw), same(s, t, "hw"))

    def propose(j: int) -> Callable[[State, State], Bool]:
        def act(s: State, t: State) -> Bool:
            props = [f"prop{i}" for i in range(n)] + [f"pseen{i}" for i in range(n)]
            return z3.And(z3.Not(_b(s, "pending")), z3.Not(_b(s, f"isr{j}")),
                          _i(s, f"kleo{j}") >= _i(s, "hw"), _b(t, "pending"),
                          _i(t, "pver") == _i(s, "ver"),
                          *[_b(t, f"prop{i}") == (z3.BoolVal(True) if i == j
                                                  else _b(s, f"isr{i}")) for i in range(n)],
                          *[_i(t, f"pseen{i}") == _i(s, f"seen{i}") for i in range(n)],
                          same(s, t, "pending", "pver", *props))
        return act

    def acceptable(s: State) -> Bool:
        return accepts_proposal(_i(s, "pver"), _i(s, "ver"),
                                tuple(_b(s, f"prop{i}") for i in range(n)),
                                tuple(_i(s, f"pseen{i}") for i in range(n)),
                                tuple(_i(s, f"epoch{i}") for i in range(n)), kip903)

    def accept(s: State, t: State) -> Bool:
        isr = [f"isr{i}" for i in range(n)]
        return z3.And(_b(s, "pending"), acceptable(s), z3.Not(_b(t, "pending")),
                      _i(t, "ver") == _i(s, "ver") + 1,
                      *[_b(t, f"isr{i}") == _b(s, f"prop{i}") for i in range(n)],
                      same(s, t, "pending", "ver", *isr))

    def refuse(s: State, t: State) -> Bool:
        return z3.And(_b(s, "pending"), z3.Not(acceptable(s)), z3.Not(_b(t, "pending")),
                      same(s, t, "pending"))

    def restart(j: int) -> Callable[[State, State], Bool]:
        def act(s: State, t: State) -> Bool:
            was = _b(s, f"isr{j}")
            return z3.And(_i(t, f"leo{j}") == 0, _i(t, f"epoch{j}") == _i(s, f"epoch{j}") + 1,
                          z3.Not(_b(t, f"isr{j}")),
                          _i(t, "ver") == _i(s, "ver") + z3.If(was, 1, 0),
                          same(s, t, f"leo{j}", f"epoch{j}", f"isr{j}", "ver"))
        return act

    def isr_holds_hw(s: State) -> Bool:
        return z3.And(*[z3.Implies(_b(s, f"isr{i}"), _i(s, f"leo{i}") >= _i(s, "hw"))
                        for i in range(n)])

    def current(s: State, i: int) -> Bool:
        """The leader's view of ``i`` is of its current incarnation and within its log."""
        return z3.Implies(_i(s, f"seen{i}") == _i(s, f"epoch{i}"),
                          _i(s, f"kleo{i}") <= _i(s, f"leo{i}"))

    def views(s: State) -> Bool:
        return z3.And(*[z3.And(current(s, i), _i(s, f"seen{i}") <= _i(s, f"epoch{i}"),
                               _i(s, f"leo{i}") >= 0, _i(s, f"leo{i}") <= _i(s, "leo0"))
                        for i in range(1, n)])

    def isr_views(s: State) -> Bool:
        return z3.And(*[z3.Implies(_b(s, f"isr{i}"), z3.And(
            _i(s, f"seen{i}") == _i(s, f"epoch{i}"), _i(s, f"kleo{i}") >= _i(s, "hw")))
            for i in range(1, n)])

    def pending_views(s: State) -> Bool:
        return z3.Implies(_b(s, "pending"), z3.And(_b(s, "prop0"), _i(s, "pver") <= _i(s, "ver"),
            *[z3.Implies(_b(s, f"prop{i}"), z3.And(
                _i(s, f"pseen{i}") <= _i(s, f"seen{i}"),
                z3.Implies(_i(s, f"pseen{i}") == _i(s, f"epoch{i}"),
                           _i(s, f"kleo{i}") >= _i(s, "hw"))))
              for i in range(1, n)],
            # a proposal built on the current partition epoch names exactly the ISR plus one
            z3.Implies(_i(s, "pver") == _i(s, "ver"),
                       z3.And(*[z3.Implies(_b(s, f"isr{i}"), _b(s, f"prop{i}"))
                                for i in range(n)]))))

    def shape(s: State) -> Bool:
        return z3.And(_b(s, "isr0"), _i(s, "hw") >= 0, _i(s, "hw") <= _i(s, "leo0"))

    actions: list[tuple[str, Callable[[State, State], Bool]]] = [("RaiseHw", raise_hw),
                                                                  ("Accept", accept),
                                                                  ("Refuse", refuse)]
    for j in range(1, n):
        actions += [(f"Fetch[{j}]", fetch(j)), (f"Propose[{j}]", propose(j)),
                    (f"RestartEmptyDisk[{j}]", restart(j))]
    return System("kip903" if kip903 else "no-kip903", _kip903_vars(n), init, tuple(actions),
                  (("IsrHoldsHw", isr_holds_hw), ("Views", views), ("IsrViews", isr_views),
                   ("PendingViews", pending_views), ("Shape", shape)), "IsrHoldsHw")
