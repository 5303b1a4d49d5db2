"""KRaft's ``PartitionChangeBuilder``: every change the controller makes to a partition (3.x-4.x).

``ReplicationControlManager`` never edits a ``PartitionRegistration``: it asks a
``PartitionChangeBuilder`` for the ``PartitionChangeRecord`` that takes the partition to a target
ISR (an accepted AlterPartition, a fenced or shutting-down broker removed, an unfenced broker
added back as a possible leader, an unclean shutdown detected at registration), and the record
is what is written to the metadata log.  ``build`` follows ``PartitionChangeBuilder.build``
step by step, as on trunk of 2024-10 (the 3.9/4.0 line; the differences at 3.5 and 3.7 are
named where they matter):

1. ``maybePopulateTargetElr`` (KIP-966, ELR on): ``isrlab.core.elr.populate_target_elr``;
2. ``tryElection``: ``elect_leader`` (PREFERRED / ONLINE / UNCLEAN); a leader from the ELR takes
   ISR = [it] and leaves the ELR; an unclean leader takes ISR = [it] and the partition becomes
   RECOVERING (KIP-704);
3. the leader epoch bump: the record sets the leader field exactly when the leader changes --
   or, with ``LeaderEpochBump.ON_ISR_SHRINK`` (3.0-3.5, and metadata versions below 3.6-IV0),
   also when the ISR shrinks (KAFKA-15021 removed that in 3.6);
4. ``maybeUpdateRecordElr``: ELR and last-known ELR cleared after an unclean election or with
   ELR off;
5. the ISR field, set when the target differs (with ELR on the ISR may become empty);
6. ``maybeUpdateLastKnownLeader`` (ELR on, ``useLastKnownLeaderInBalancedRecovery``, which no
   controller code turns off): the last-known ELR holds the last leader once the ISR empties;
7. the leader recovery state asked for (AlterPartition's), then "no-op records are not written".

The registration after the record is ``isrlab.core.kraft_metadata.merge`` of it: partition
epoch + 1 on every record, leader epoch + 1 when the record sets the leader.

Shortcuts: reassignment (target replicas, adding/removing replicas) and directories are not
modelled, so the replica set never changes; replica lists are kept in assignment order, so
Kafka's list comparisons are set comparisons here; "acceptable leader" is a set the caller
passes (``LeaderAcceptor``: active = registered, unfenced, not in controlled shutdown).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from enum import Enum, unique

from returns.result import Failure, Result, Success

from isrlab.core.elr import (
    LeaderRecoveryState,
    PartitionRegistration,
    check_registration,
    populate_target_elr,
)
from isrlab.core.errors import InvalidInput, Problem, reject
from isrlab.core.kraft_metadata import NO_LEADER_CHANGE, PartitionChangeRecord, merge
from isrlab.core.state import NO_LEADER, TopicPartition


@unique
class Election(Enum):
    """``PartitionChangeBuilder.Election``."""

    PREFERRED = "preferred"
    ONLINE = "online"
    UNCLEAN = "unclean"


@unique
class LeaderEpochBump(Enum):
    """When a record that keeps the leader still bumps the leader epoch (a version parameter).

    ``ON_ISR_SHRINK``: Kafka 3.0-3.5 (and metadata.version < 3.6-IV0 later): an ISR shrink bumps
    it, because the 3.x brokers' ``ReplicaManager`` needed it (KAFKA-15021).
    ``LEADER_CHANGE_ONLY``: 3.6+ with metadata.version 3.6-IV0+: only a leader change does.
    """

    ON_ISR_SHRINK = "3.0-3.5"
    LEADER_CHANGE_ONLY = "3.6+"


@unique
class LastKnownLeaderCheck(Enum):
    """What ``canElectLastKnownLeader`` asks of the last-known leader (a version parameter).

    ``UNCHECKED``: KAFKA-15584 (3.7.0, commit 505e5b3) through trunk of 2024-10: nothing (it
    only logs, when the replica *is* acceptable), so a fenced broker, or the very broker whose
    unclean registration emptied the ELR, is elected.  ``ACCEPTABLE``: KAFKA-19522 (apache/kafka
    PR #20200, trunk 2025-07): it must be an acceptable leader (``isAcceptableLeader``: active,
    not the broker being fenced or registering uncleanly).  ``FORGET_UNCLEAN``: in no release,
    a candidate fix: acceptable, and a broker's unclean registration also forgets it as the
    last-known leader (``handleBrokerUncleanShutdown`` visits the partitions it is the
    last-known leader of and clears ``lastKnownElr``): a replaced disk no longer leads later,
    once it is unfenced.
    """

    UNCHECKED = "unchecked"
    ACCEPTABLE = "acceptable"
    FORGET_UNCLEAN = "forget-unclean"


@dataclass(frozen=True, slots=True)
class BuilderConfig:
    """The builder's settings: ``getTopicEffectiveMinIsr``, ``isElrEnabled()``, the topic's
    unclean election flag (``Election.UNCLEAN``), the leader-epoch bump version, whether
    KIP-704's RECOVERING state is supported (metadata.version 3.2-IV0+), and
    ``useLastKnownLeaderInBalancedRecovery`` (true in every controller path) and what it asks
    of the last-known leader (``LastKnownLeaderCheck``)."""

    min_isr: int = 1
    elr_enabled: bool = False
    election: Election = Election.ONLINE
    epoch_bump: LeaderEpochBump = LeaderEpochBump.LEADER_CHANGE_ONLY
    leader_recovery_supported: bool = True
    last_known_leader: bool = True
    last_known_leader_check: LastKnownLeaderCheck = LastKnownLeaderCheck.UNCHECKED


@dataclass(frozen=True, slots=True)
class ElectionResult:
    """``PartitionChangeBuilder.ElectionResult``: the node (``NO_LEADER``: none) and unclean."""

    node: int
    unclean: bool


@dataclass(frozen=True, slots=True)
class ChangeResult:
    """``build``'s outcome: the record (``None``: nothing to write) and the registration after it
    (the old one when nothing is written)."""

    record: PartitionChangeRecord | None
    registration: PartitionRegistration


def _valid_new_leader(replica: int, target_isr: tuple[int, ...], target_elr: tuple[int, ...],
                      acceptable: frozenset[int]) -> bool:
    in_isr = replica in target_isr or (not target_isr and replica in target_elr)
    return in_isr and replica in acceptable


def _can_elect_last_known_leader(reg: PartitionRegistration, target_isr: tuple[int, ...],
                                 target_elr: tuple[int, ...], acceptable: frozenset[int],
                                 config: BuilderConfig) -> bool:
    # canElectLastKnownLeader: UNCHECKED does not test the replica's acceptability (trunk
    # 2024-10 only logs when it IS acceptable); mirrored as written.
    checked = config.last_known_leader_check is not LastKnownLeaderCheck.UNCHECKED
    return (config.elr_enabled and config.last_known_leader and not target_isr
            and not target_elr and len(reg.last_known_elr) == 1
            and (not checked or reg.last_known_elr[0] in acceptable))


def elect_leader(reg: PartitionRegistration, target_isr: tuple[int, ...],
                 target_elr: tuple[int, ...], acceptable: frozenset[int],
                 config: BuilderConfig) -> ElectionResult:
    """``PartitionChangeBuilder.electLeader`` (3.7+; 3.5 without the ELR and last-known parts).

    A valid new leader is in the target ISR -- or, when the target ISR is empty, in the target
    ELR -- and acceptable.  PREFERRED: the first replica if valid, else the current leader if
    valid, else the first valid among the others.  ONLINE / UNCLEAN: the current leader if valid,
    else the first valid replica in assignment order.  Then, with ELR on and both ISR and ELR
    empty, the single last-known-ELR member, as an unclean election (``canElectLastKnownLeader``,
    which checks that member's acceptability only from KAFKA-19522: ``LastKnownLeaderCheck``).
    Then, for UNCLEAN only, the first acceptable replica (unclean).  Else ``NO_LEADER``.  Total.
    """
    def valid(r: int) -> bool:
        return _valid_new_leader(r, target_isr, target_elr, acceptable)

    order = reg.replicas
    if config.election is Election.PREFERRED and order and valid(order[0]):
        return ElectionResult(order[0], False)
    if valid(reg.leader):
        return ElectionResult(reg.leader, False)
    found = next((r for r in order if valid(r)), None)
    if found is not None:
        return ElectionResult(found, False)
    if _can_elect_last_known_leader(reg, target_isr, target_elr, acceptable, config):
        return ElectionResult(reg.last_known_elr[0], True)
    if config.election is Election.UNCLEAN:
        unclean = next((r for r in order if r in acceptable), None)
        if unclean is not None:
            return ElectionResult(unclean, True)
    return ElectionResult(NO_LEADER, False)


@dataclass(frozen=True, slots=True)
class _Draft:
    """The builder's mutable targets and the record's fields, as one value passed along."""

    isr: tuple[int, ...]
    elr: tuple[int, ...]
    last_known: tuple[int, ...]
    record: PartitionChangeRecord


def _try_election(reg: PartitionRegistration, draft: _Draft, acceptable: frozenset[int],
                  config: BuilderConfig) -> _Draft:
    result = elect_leader(reg, draft.isr, draft.elr, acceptable, config)
    if result.node == reg.leader:
        return draft
    isr, elr = draft.isr, draft.elr
    if result.node in elr:
        isr, elr = (result.node,), tuple(r for r in elr if r != result.node)
    record = replace(draft.record, leader=result.node)
    if result.unclean:
        recovering = (reg.leader_recovery_state is not LeaderRecoveryState.RECOVERING
                      and config.leader_recovery_supported)
        record = replace(record, isr=(result.node,),
                         leader_recovery_state=LeaderRecoveryState.RECOVERING if recovering
                         else record.leader_recovery_state)
    return replace(draft, isr=isr, elr=elr, record=record)


def _bump_on_isr_shrink(reg: PartitionRegistration, draft: _Draft,
                        config: BuilderConfig) -> _Draft:
    # 3.5.0 triggerLeaderEpochBumpIfNeeded: !Replicas.contains(targetIsr, partition.isr)
    shrinks = not frozenset(reg.isr) <= frozenset(draft.isr)
    if (config.epoch_bump is LeaderEpochBump.ON_ISR_SHRINK
            and draft.record.leader == NO_LEADER_CHANGE and shrinks):
        return replace(draft, record=replace(draft.record, leader=reg.leader))
    return draft


def _update_record_elr(reg: PartitionRegistration, draft: _Draft,
                       config: BuilderConfig) -> _Draft:
    clean = draft.record.isr is None
    elr, last_known = draft.elr, draft.last_known
    if not clean or not config.elr_enabled:
        elr, last_known = (), ()
    record = draft.record
    if frozenset(elr) != frozenset(reg.elr):
        record = replace(record, elr=elr)
    leaderless = (record.leader == NO_LEADER
                  or (record.leader == NO_LEADER_CHANGE and reg.leader == NO_LEADER))
    if config.last_known_leader and len(reg.last_known_elr) == 1 and leaderless:
        last_known = reg.last_known_elr
    if not config.last_known_leader and frozenset(last_known) != frozenset(reg.last_known_elr):
        record = replace(record, last_known_elr=last_known)
    return replace(draft, elr=elr, last_known=last_known, record=record)


def _set_isr(reg: PartitionRegistration, draft: _Draft, config: BuilderConfig) -> _Draft:
    if (draft.record.isr is None and (draft.isr or config.elr_enabled)
            and frozenset(draft.isr) != frozenset(reg.isr)):
        return replace(draft, record=replace(draft.record, isr=draft.isr))
    return draft


def _update_last_known_leader(reg: PartitionRegistration, draft: _Draft,
                              config: BuilderConfig) -> _Draft:
    if not (config.last_known_leader and config.elr_enabled):
        return draft
    record = draft.record
    if (record.isr is not None and not record.isr and reg.leader != NO_LEADER
            and reg.last_known_elr != (reg.leader,)):
        return replace(draft, record=replace(record, last_known_elr=(reg.leader,)))
    has_leader = record.leader >= 0 or (reg.leader != NO_LEADER and record.leader != NO_LEADER)
    if has_leader and reg.last_known_elr:
        return replace(draft, record=replace(record, last_known_elr=()))
    return draft


def is_no_op(record: PartitionChangeRecord) -> bool:
    """``PartitionChangeBuilder.changeRecordIsNoOp``: the record sets no field. Total."""
    return (record.isr is None and record.elr is None and record.last_known_elr is None
            and record.leader == NO_LEADER_CHANGE and record.leader_recovery_state is None)


def _ordered(replicas: tuple[int, ...], members: frozenset[int]) -> tuple[int, ...]:
    return tuple(r for r in replicas if r in members)


def _build(reg: PartitionRegistration, tp: TopicPartition, target_isr: tuple[int, ...],
           acceptable: frozenset[int], config: BuilderConfig, unclean_shutdown: frozenset[int],
           target_recovery: LeaderRecoveryState | None) -> ChangeResult:
    forget = (config.last_known_leader_check is LastKnownLeaderCheck.FORGET_UNCLEAN
              and len(reg.last_known_elr) == 1 and reg.last_known_elr[0] in unclean_shutdown)
    stored = reg
    if forget:  # the candidate fix: the last-known leader registered uncleanly is forgotten
        reg = replace(reg, last_known_elr=())
    isr = _ordered(reg.replicas, frozenset(target_isr))
    elr, last_known = reg.elr, reg.last_known_elr
    if config.elr_enabled:
        elr, last_known = populate_target_elr(reg, isr, config.min_isr, unclean_shutdown)
    draft = _Draft(isr, elr, last_known, PartitionChangeRecord(tp))
    draft = _try_election(reg, draft, acceptable, config)
    if config.epoch_bump is LeaderEpochBump.ON_ISR_SHRINK:
        draft = _bump_on_isr_shrink(reg, draft, config)
    draft = _update_record_elr(reg, draft, config)
    draft = _set_isr(reg, draft, config)
    draft = _update_last_known_leader(reg, draft, config)
    record = draft.record
    if forget and record.last_known_elr is None:
        record = replace(record, last_known_elr=())
    if target_recovery is not None and target_recovery is not reg.leader_recovery_state:
        record = replace(record, leader_recovery_state=target_recovery)
    if is_no_op(record):
        return ChangeResult(None, stored)
    return ChangeResult(record, merge(stored, record))


def build(reg: PartitionRegistration, tp: TopicPartition, acceptable: frozenset[int],
          config: BuilderConfig, target_isr: tuple[int, ...] | None = None,
          unclean_shutdown: frozenset[int] = frozenset(),
          target_recovery: LeaderRecoveryState | None = None,
          ) -> Result[ChangeResult, InvalidInput]:
    """``PartitionChangeBuilder.build``: the record taking ``reg`` to ``target_isr`` (default:
    the current ISR), electing a leader as needed, and the registration after it.

    ``acceptable`` are the brokers that may lead (``LeaderAcceptor``); ``unclean_shutdown`` the
    replicas ``setUncleanShutdownReplicas`` names (kept out of the new ELR, KIP-966);
    ``target_recovery`` the leader recovery state an AlterPartition asks for.  The steps and
    versions are the module docstring's.  ``None`` record: Kafka writes nothing (the partition
    epoch does not move).  Shortcut: the last-known-ELR update is trunk's (2024-10):
    with ``last_known_leader`` the field holds only the last leader; 3.7.0 also wrote the
    computed last-known ELR, and that variant is ``last_known_leader=False`` (the
    "real last-known ELR" of KIP-966's text).  A target ISR without the current leader while
    that leader stays acceptable is outside the callers' contract (AlterPartition's ISR holds
    the sender; ``generateLeaderAndIsrUpdates`` removes only a broker it makes unacceptable);
    when Kafka's builder would then keep that leader outside the ISR (an unclean election
    re-picking it, or an empty ISR with it in the ELR) the call is refused as bad input.  One
    guard is added: an ISR emptied while the
    partition is already leaderless does not record ``NO_LEADER`` as the last leader (Kafka
    would write ``[-1]``; a registration here holds replica ids only).  Bad input: a target ISR
    outside the replicas, a ``min_isr`` below 1, or a malformed registration.
    """
    if config.min_isr < 1:
        return reject(Problem.BAD_CONFIG, f"min.insync.replicas {config.min_isr}")
    target = reg.isr if target_isr is None else target_isr
    if not frozenset(target) <= frozenset(reg.replicas):
        return reject(Problem.ISR_NOT_SUBSET_OF_AR,
                      f"target ISR {list(target)} vs replicas {list(reg.replicas)}")
    checked = check_registration(reg)
    if isinstance(checked, Failure):
        return checked
    change = _build(reg, tp, target, acceptable, config, unclean_shutdown, target_recovery)
    after = change.registration
    if after.leader != NO_LEADER and after.leader not in after.isr:
        return reject(Problem.LEADER_NOT_IN_ISR,
                      f"target ISR {list(target)} drops leader {reg.leader}, which stays "
                      "acceptable and is kept")
    return Success(change)


def generate_leader_and_isr_update(
    reg: PartitionRegistration, tp: TopicPartition, active: frozenset[int],
    config: BuilderConfig, broker_to_remove: int = NO_LEADER, broker_to_add: int = NO_LEADER,
    broker_with_unclean_shutdown: int = NO_LEADER,
) -> Result[ChangeResult, InvalidInput]:
    """``ReplicationControlManager.generateLeaderAndIsrUpdates`` for one partition.

    The acceptable leaders are ``active`` brokers, plus ``broker_to_add`` (being unfenced: still
    fenced in the controller's view), minus ``broker_to_remove`` and
    ``broker_with_unclean_shutdown``; the target ISR is the ISR without those two; the unclean
    one is also named to ``setUncleanShutdownReplicas`` (trunk 2024-10 lines 1881-1949).  The
    callers: ``handleBrokerFenced`` and ``handleBrokerInControlledShutdown`` (``broker_to_remove``,
    for partitions with the broker in the ISR), ``handleBrokerUnfenced`` (``broker_to_add``, for
    leaderless partitions), ``handleBrokerUncleanShutdown`` (3.8+, for partitions with the broker
    in the ISR, then in the ELR).  With ELR off, removing the last ISR member leaves it in the
    ISR (a record cannot set an empty ISR then) and the partition leaderless.
    """
    acceptable = frozenset(r for r in reg.replicas
                           if r not in (broker_to_remove, broker_with_unclean_shutdown)
                           and (r == broker_to_add or r in active))
    target = tuple(r for r in reg.isr if r not in (broker_to_remove, broker_with_unclean_shutdown))
    unclean = (frozenset({broker_with_unclean_shutdown})
               if broker_with_unclean_shutdown != NO_LEADER else frozenset())
    return build(reg, tp, acceptable, config, target, unclean)
