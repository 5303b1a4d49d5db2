"""The Kafka steps the KRaft TLA+ ports lack, as extra abstract steps of the refinement
check (``isrlab.spec.kafka.kraft_refinement``); docs/kafka-model.md ("Refinement to the
KRaft TLA+ level") argues each from Kafka's code and the specification's text.

Each gap step is a function of a port state and the (1-based) broker of the ``kafka`` step
it accompanies, returning the port states it leads to; ``GAPS`` says which ``kafka``
actions may use it.  The port itself is unchanged (its TLC conformance stands)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from isrlab.spec.kafka.kraft_refinement_history import last_leader
from isrlab.spec.tla_kraft import layout as kl
from isrlab.spec.tla_kraft.model import KraftModel, SpecError

Abstract = tuple[Any, ...]
GapStep = Callable[[KraftModel, Abstract, int], list[Abstract]]


def leader_inc_hw_on_write(tla: KraftModel, s: Abstract, b: int) -> list[Abstract]:
    """LeaderIncHwOnWrite: leader ``b`` raises its HW over its log as it now is.

    Kafka's ``Partition.appendRecordsToLeader`` calls ``maybeIncrementLeaderHW`` after the
    append: the HW becomes the least LEO of the maximal ISR, the leader's own new LEO when
    the ISR is the leader alone.  The spec's ``WriteRecordToLeader`` computes the HW with
    ``CommitOffsetOnWrite``, whose ``GetCommitOffset`` answers 0 when ``LeoOf(b) = 1``: the
    leader's log *before* the write, so a leader alone in its ISR does not commit the first
    record of an empty log until a later fetch or partition change.  The step: the HW of a
    running leader recomputed over its maximal ISR (``CommitOffsetOnUpdate``), as the
    spec's own partition-change path does."""
    if s[kl.BROKER_STATE][b - 1][0] != kl.RUNNING or s[kl.P_STATUS][b - 1] != kl.LEADER:
        return []
    d = list(s)
    tla._update_hwm_on_partition_change(s, d, b, s[kl.P_MD][b - 1])
    t = tuple(d)
    return [t] if t != s else []


def leader_appends_where_the_spec_stops(tla: KraftModel, s: Abstract,
                                        b: int) -> list[Abstract]:
    """LeaderAppendsWhereTheSpecStops: leader ``b`` appends a record that commits at once,
    the append alone (``LeaderIncHwOnWrite`` then raises the HW).

    With more than one value the spec's ``WriteRecordToLeader`` has no step where the
    append commits its own record (a leader alone in its maximal ISR, min ISR 1, writing
    to a non-empty log): it passes the new HW to ``UpdateHwmInvariantVars``, whose
    ``SubSeq(LogOf(b), inv_true_hwm, new_hwm - 1)`` reads the log *before* the append, one
    record short, and TLC stops with an evaluation error (the port raises ``SpecError``;
    the cfgs' ``Values = {A}`` never reach it: ``GetCommitOffset`` answers 0 for an empty
    log).  Kafka's ``Partition.appendRecordsToLeader`` appends and then
    ``maybeIncrementLeaderHW`` commits the record (the HW is the least LEO of the maximal
    ISR, the leader's own).  The step, only where the spec's write stops: the spec's
    append of each value not yet written with the HW unchanged."""
    try:
        tla.write_record_to_leader(s, b)
        return []
    except SpecError:
        pass
    md = s[kl.P_MD][b - 1]
    log, hwm, leo = s[kl.P_DATA][b - 1]
    out: list[Abstract] = []
    for v in tla.values:
        if s[kl.INV_SENT] & 1 << (v - 1):
            continue
        d = list(s)
        d[kl.P_DATA] = _put(s[kl.P_DATA], b, ((*log, (md[4], leo, v)), hwm, leo + 1))
        d[kl.INV_SENT] = s[kl.INV_SENT] | 1 << (v - 1)
        if s[kl.AUX_FLO][b - 1] == kl.INT_MAX:
            d[kl.AUX_FLO] = _put(s[kl.AUX_FLO], b, leo)
        out.append(tuple(d))
    return out


def leader_awaits_metadata_on_fenced_error(tla: KraftModel, s: Abstract,
                                           b: int) -> list[Abstract]:
    """LeaderAwaitsMetadataOnFencedError: leader ``b`` takes a FENCED_LEADER_EPOCH answer to
    its pending AlterPartition and keeps the proposal pending.

    Kafka's ``Partition.handleAlterPartitionError`` (3.5 through 4.0) resets the partition
    state to the last committed one only for INELIGIBLE_REPLICA and
    OPERATION_NOT_ATTEMPTED, where the controller says the request was not applied; for
    FENCED_LEADER_EPOCH and INVALID_UPDATE_VERSION it changes nothing ("awaiting new the
    latest metadata"): the maximal ISR stays, and no new AlterPartition is sent until a
    metadata delta installs the controller's state.  The spec's
    ``ReceiveAlterPartitionResponse`` rolls the maximal ISR back to the ISR on every error
    and ends the pending request.  The step: the answer is consumed, the broker's partition
    metadata and pending request unchanged."""
    if (s[kl.BROKER_STATE][b - 1][0] != kl.RUNNING or s[kl.P_STATUS][b - 1] != kl.LEADER
            or not KraftModel._pending(s, b)):
        return []
    request = s[kl.P_PENDING_AP][b - 1][1]
    out = []
    for m in s[kl.MESSAGES]:
        if (m[0] == kl.AP_RESP and m[1] == kl.ERR_FENCED_LEADER_EPOCH and m[3] == b
                and m[2] == request):
            d = list(s)
            KraftModel._discard(s, d, m)
            out.append(tuple(d))
    return out


def leader_resends_refused_alter_partition(tla: KraftModel, s: Abstract,
                                           b: int) -> list[Abstract]:
    """LeaderResendsRefusedAlterPartition: leader ``b`` sends an AlterPartition identical
    to one the controller already refused.

    Kafka's leader proposes whenever ``Partition.maybeExpandIsr`` / ``maybeShrinkIsr``
    find the ISR should change and no proposal is pending; after INELIGIBLE_REPLICA it is
    back at its committed state, and a follower still caught up and eligible in the
    leader's own metadata image (``isReplicaIsrEligible``: its image may not have the
    fencing yet) is proposed again on its next fetch, the same request.  The spec's
    ``SendAlterPartitionRequest`` has ``__AvoidCycle``: a request previously sent may be
    sent again only if the controller would now accept it, a bound on the state space, not
    a rule of Kafka's.  The step: ``SendAlterPartitionRequest`` without that conjunct (for
    the spec's proposal, and for those of ``LeaderExpandsIsrByOne`` and
    ``LeaderShrinksIsrOnly``), where the conjunct blocks it."""
    if not _may_propose(s, b):
        return []
    free = list(s)
    free[kl.MESSAGES_DISCARD] = ()
    out = []
    for t in tla.send_alter_partition_request(tuple(free), b):
        d = list(t)
        d[kl.MESSAGES_DISCARD] = s[kl.MESSAGES_DISCARD]
        out.append(tuple(d))
    # and the proposals of Kafka's own expansion and shrink (the two steps below), resent
    kafka_own = [*_by_one(tla, s, b), *_shrunk(s, b)]
    out += [t for isr in kafka_own for t in _propose(tla, s, b, isr, avoid_cycle=False)]
    sent = {*tla.send_alter_partition_request(s, b),
            *(t for isr in kafka_own for t in _propose(tla, s, b, isr))}
    return [t for t in dict.fromkeys(out) if t not in sent]


def _propose(tla: KraftModel, s: Abstract, b: int, proposed: int,
             avoid_cycle: bool = True) -> list[Abstract]:
    """Leader ``b`` sends an AlterPartition for ``proposed`` as the spec's
    ``SendAlterPartitionRequest`` sends one: KIP-903's broker epochs from its follower
    states, ``__AvoidCycle`` (a request sent before only if the controller would accept it
    now; ``leader_resends_refused_alter_partition`` is the step without it), the maximal
    ISR applied eagerly, the request pending."""
    md = s[kl.P_MD][b - 1]
    curr = md[1]
    epochs = tuple(
        (b1, s[kl.BROKER_STATE][b - 1][1] if b1 == b else 0 if curr >> (b1 - 1) & 1
         else s[kl.P_REPLICA_STATE][b - 1][b1 - 1][1])
        for b1 in tla.brokers if proposed >> (b1 - 1) & 1)
    request = (kl.AP_REQ, proposed, epochs, b, md[4], md[5], s[kl.BROKER_STATE][b - 1][1], b)
    if avoid_cycle and ((request in s[kl.MESSAGES] or request in s[kl.MESSAGES_DISCARD])
            and tla._validate_alter_partition(s, b, request) != kl.ERR_NONE):
        return []
    d = list(s)
    d[kl.MESSAGES] = tuple(sorted({*s[kl.MESSAGES], request}))
    d[kl.P_MD] = _put(s[kl.P_MD], b, (md[0], md[1], proposed | curr, *md[3:]))
    d[kl.P_PENDING_AP] = _put(s[kl.P_PENDING_AP], b, (md[5] + 1, request))
    return [tuple(d)]


def _put(t: tuple[Any, ...], b: int, value: Any) -> tuple[Any, ...]:
    return (*t[:b - 1], value, *t[b:])


def _may_propose(s: Abstract, b: int) -> bool:
    """``SendAlterPartitionRequest``'s enabling conditions: ``b`` runs, leads and has no
    request pending."""
    return (s[kl.BROKER_STATE][b - 1][0] == kl.RUNNING and s[kl.P_STATUS][b - 1] == kl.LEADER
            and not KraftModel._pending(s, b))


def leader_expands_isr_by_one(tla: KraftModel, s: Abstract, b: int) -> list[Abstract]:
    """LeaderExpandsIsrByOne: leader ``b`` proposes its ISR plus one caught-up follower.

    Kafka's ``Partition.maybeExpandIsr`` runs for the follower whose fetch it is handling
    (``updateFollowerFetchState``) and proposes ``prepareIsrExpand(currentState,
    followerReplica.brokerId)``: the ISR plus that one follower, even when another
    follower is caught up too (it joins on its own next fetch, once this proposal is
    answered).  The spec's ``SendAlterPartitionRequest`` proposes the ISR members not
    timed out plus *every* caught-up replica (``FollowerIsCaughtUp``) at once, so with
    three brokers it cannot add one of two caught-up followers.  The step: the proposal of
    the ISR plus one follower the spec's own ``FollowerIsCaughtUp`` accepts."""
    if not _may_propose(s, b):
        return []
    out = [t for isr in _by_one(tla, s, b) for t in _propose(tla, s, b, isr)]
    return [t for t in out if t not in tla.send_alter_partition_request(s, b)]


def _by_one(tla: KraftModel, s: Abstract, b: int) -> list[int]:
    """Leader ``b``'s ISR plus one follower ``FollowerIsCaughtUp`` accepts, each."""
    curr = s[kl.P_MD][b - 1][1]
    return [curr | 1 << (f - 1) for f in tla.brokers
            if f != b and not curr >> (f - 1) & 1 and tla._caught_up(s, b, f, curr, 0)]


def _shrunk(s: Abstract, b: int) -> list[int]:
    """Leader ``b``'s ISR less each non-empty set of its other members."""
    curr = s[kl.P_MD][b - 1][1]
    others = curr & ~(1 << (b - 1))
    out, sub = [], others
    while sub:
        out.append(curr & ~sub)
        sub = (sub - 1) & others
    return out


def leader_shrinks_isr_only(tla: KraftModel, s: Abstract, b: int) -> list[Abstract]:
    """LeaderShrinksIsrOnly: leader ``b`` proposes its ISR less some followers, adding none.

    Kafka's ``Partition.maybeShrinkIsr`` (the ``isr-expiration`` task) proposes
    ``prepareIsrShrink(outOfSyncReplicaIds)``: the ISR less the members that have not
    caught up for ``replica.lag.time.max.ms``; a caught-up replica outside the ISR is not
    added (only ``maybeExpandIsr``, on that replica's fetch, adds it).  The spec's
    ``SendAlterPartitionRequest`` adds every caught-up replica to the proposal that times
    members out, so with three brokers a shrink with a caught-up non-member has no
    counterpart.  The step: the ISR less a non-empty set of members other than ``b``."""
    if not _may_propose(s, b):
        return []
    out = [t for isr in _shrunk(s, b) for t in _propose(tla, s, b, isr)]
    return [t for t in out if t not in tla.send_alter_partition_request(s, b)]


def broker_stops_before_fencing(tla: KraftModel, s: Abstract, b: int) -> list[Abstract]:
    """BrokerStopsBeforeFencing: broker ``b`` stops cleanly; the controller does not know yet.

    A Kafka broker that stops without a controlled shutdown (the ``kafka`` model's
    ``Crash``: a clean stop, its log flushed and its clean-shutdown file written) simply
    stops heartbeating; the active controller fences it only once its session expires
    (``BrokerHeartbeatManager``, ``broker.session.timeout.ms``, then
    ``QuorumController.maybeFenceOneStaleBroker``): a separate ``FenceBroker`` step, and
    until then the broker stays unfenced and in the ISR.  The spec's ``CleanShutdown`` /
    ``NoDataLossShutdown`` fences the broker (``HandleBrokerFenced``) in the same step.
    The step: that shutdown's broker side alone (fetch sessions dropped, follower states
    and pending request cleared, pending writes failed, the broker epoch kept on disk with
    KIP-966), the controller unchanged."""
    epoch = s[kl.BROKER_STATE][b - 1][1] if tla.config.kip966 else 0
    return _stopped(tla, s, b, kl.OFFLINE_CLEAN, epoch, False)


def broker_loses_power_before_fencing(tla: KraftModel, s: Abstract,
                                      b: int) -> list[Abstract]:
    """BrokerLosesPowerBeforeFencing: broker ``b`` loses power; the controller does not know
    yet.

    A power loss (the ``kafka`` model's ``PowerLoss``, ``crashes=unclean``) stops the broker
    with neither its unflushed tail nor a clean-shutdown file (``LogManager`` writes
    ``.kafka_cleanshutdown`` only in ``shutdown``; without it ``LogLoader`` recovers the
    segments and the broker registers with no previous broker epoch, KIP-966's unclean
    shutdown).  As for ``BrokerStopsBeforeFencing``, the controller fences it only when its
    session expires.  With one record the log is lost whole or kept whole (flushed), the two
    broker sides the spec's shutdowns have: ``UncleanShutdown`` / ``DataLossShutdown`` (log
    emptied, ``OFFLINE_DIRTY``, epoch 0 on disk) and, with KIP-966, ``NoDataLossShutdown``
    with ``is_clean_shutdown = FALSE`` (log kept, epoch 0 on disk: the spec's own "no data
    loss but unclean" case; ``tla-kraft-3.5`` keeps no epoch, so its ``CleanShutdown``).
    The step: either broker side alone, the controller unchanged (v3.5's
    ``AvoidLastReplicaStanding`` is a bound of the spec's search, not a rule of Kafka's,
    so the last ISR member may lose power too; with more records,
    ``BrokerLosesUnflushedTailBeforeFencing``)."""
    return [*_stopped(tla, s, b, kl.OFFLINE_DIRTY, 0, True),
            *_stopped(tla, s, b, kl.OFFLINE_CLEAN, 0, False)]


def broker_loses_unflushed_tail_before_fencing(tla: KraftModel, s: Abstract,
                                               b: int) -> list[Abstract]:
    """BrokerLosesUnflushedTailBeforeFencing: broker ``b`` loses power with part of its log
    flushed; the controller does not know yet.

    With more than one record a power loss (``BrokerLosesPowerBeforeFencing``) keeps what
    was flushed (``UnifiedLog.flush`` up to the recovery point; ``LogLoader`` recovers the
    segments and truncates the torn tail) and loses the rest: a broker side between the
    spec's two shutdowns, which lose the whole log (``UncleanShutdown`` /
    ``DataLossShutdown``) or none of it.  The step: the data-loss shutdown's broker side
    (``OFFLINE_DIRTY``, epoch 0 on disk) with the log cut to a non-empty proper prefix
    instead of emptied, the HW at most its end; the controller unchanged."""
    return [t for keep in range(1, tla._leo(s, b) - 1)
            for t in _stopped(tla, s, b, kl.OFFLINE_DIRTY, 0, True, keep)]


def disk_replaced_while_down(tla: KraftModel, s: Abstract, b: int) -> list[Abstract]:
    """DiskReplacedWhileDown: down broker ``b`` comes back with an empty log directory.

    The ``kafka`` model's ``ReplaceDisk(b)`` (``empty_disk``, KAFKA-14139's precondition): a
    broker that is down gets a new, empty disk under its old broker id: no log, no HW
    checkpoint, no ``.kafka_cleanshutdown`` file, so it registers with no previous broker
    epoch (KIP-966: an unclean shutdown).  The spec loses a log only as a broker stops
    (``UncleanShutdown`` / ``DataLossShutdown``), not while it is down.  The step: a down
    broker's state as that data-loss shutdown leaves it (log emptied, ``OFFLINE_DIRTY``,
    broker epoch 0 on disk)."""
    status = s[kl.BROKER_STATE][b - 1][0]
    if status not in (kl.OFFLINE_CLEAN, kl.OFFLINE_DIRTY):
        return []
    d = list(s)
    d[kl.BROKER_STATE] = _put(s[kl.BROKER_STATE], b, (kl.OFFLINE_DIRTY, 0, 0, False))
    d[kl.P_DATA] = _put(s[kl.P_DATA], b, ((), 1, 1))
    d[kl.P_LESO] = _put(s[kl.P_LESO], b, kl.NIL)
    t = tuple(d)
    return [t] if t != s else []


def _stopped(tla: KraftModel, s: Abstract, b: int, status: int, epoch: int,
             lose_data: bool, keep: int = 0) -> list[Abstract]:
    """The broker side of the spec's ``Shutdown`` (``_shutdown``) for a running or starting
    broker ``b``: its status and the broker epoch on disk, fetch sessions dropped, role,
    follower states and pending request cleared, pending writes failed, with
    ``lose_data`` its log cut to its first ``keep`` records (the spec's: emptied) and the
    HW to at most the new log end; the controller unchanged."""
    if s[kl.BROKER_STATE][b - 1][0] in (kl.OFFLINE_CLEAN, kl.OFFLINE_DIRTY):
        return []
    d = list(s)
    d[kl.BROKER_STATE] = _put(s[kl.BROKER_STATE], b, (status, epoch, 0, False))
    tla._drop_fetch_sessions(s, d, b)
    d[kl.P_STATUS] = _put(s[kl.P_STATUS], b, kl.ROLE_NIL)
    if lose_data:
        log, hwm, _leo = s[kl.P_DATA][b - 1]
        d[kl.P_DATA] = _put(s[kl.P_DATA], b, (log[:keep], min(hwm, keep + 1), keep + 1))
        d[kl.P_LESO] = _put(s[kl.P_LESO], b, kl.NIL)
    d[kl.P_REPLICA_STATE] = _put(s[kl.P_REPLICA_STATE], b, tla._blank_replica_states())
    d[kl.P_PENDING_AP] = _put(s[kl.P_PENDING_AP], b, (0, ()))
    if s[kl.P_STATUS][b - 1] == kl.LEADER and tla._hwm(s, b) < tla._leo(s, b):
        tla._fail_pending_writes(s, d, b)
    d[kl.AUX_FLO] = _put(s[kl.AUX_FLO], b, kl.INT_MAX)
    return [tuple(d)]


def registers_fenced(tla: KraftModel, s: Abstract, b: int) -> list[Abstract]:
    """RegistersFenced: the controller registers broker ``b`` with a new broker epoch and
    leaves it fenced.

    Kafka's ``ClusterControlManager.registerBroker`` writes a ``RegisterBrokerRecord`` with
    ``fenced = true``; the broker is unfenced only later, when its heartbeat reports a
    metadata offset at or past that record (``BrokerHeartbeatManager``'s
    ``calculateNextBrokerState``: ``UnfenceBroker``).  With KIP-966 an unclean registration
    first takes the broker out of the ISR and the ELR (``handleBrokerUncleanShutdown``).
    The spec's ``ReceiveBrokerRegRequest`` registers and unfences in one step
    (``HandleBrokerUnfenced``, which may elect a leader).  The step: the registration and
    its answer, the broker fenced (KIP-966: an unclean one out of the ISR and the ELR, no
    election)."""
    out: list[Abstract] = []
    reg = s[kl.CON_BROKER_REG][b - 1]
    for m in s[kl.MESSAGES]:
        if m[0] != kl.REG_REQ or m[1] != b or not (reg[0] == kl.FENCED or reg[2] == m[2]):
            continue
        epoch = s[kl.AUX_BROKER_EPOCH] + 1
        d = list(s)
        d[kl.CON_BROKER_REG] = _put(s[kl.CON_BROKER_REG], b, (kl.FENCED, epoch, m[2]))
        d[kl.CON_UNFENCED] = s[kl.CON_UNFENCED] & ~(1 << (b - 1))
        drafts = [d]
        if tla.config.kip966 and m[3] == 0:
            con = s[kl.CON_PM]
            bit = 1 << (b - 1)
            drafts = tla._on_broker_change(s, d, con[1] & ~bit, con[2] & ~bit,
                                           d[kl.CON_UNFENCED])
        response = (kl.REG_RESP, epoch, m[2], len(s[kl.CON_LOG]), b)
        for e in drafts:
            KraftModel._reply(s, e, m, response)
            e[kl.AUX_BROKER_EPOCH] = epoch
            out.append(tuple(e))
    return out


def last_known_leader_election(tla: KraftModel, s: Abstract, b: int) -> list[Abstract]:
    """LastKnownLeaderElection: broker ``b``'s unclean registration empties the ELR of a
    partition with an empty ISR, and the controller elects the partition's last-known
    leader in the same record.

    Kafka (3.7.0, KAFKA-15584 "Leader election with ELR", through trunk 2024-10), with the
    ELR on: ``ReplicationControlManager.handleBrokerUncleanShutdown`` runs
    ``PartitionChangeBuilder`` with ``b`` out of the ISR and the ELR; ``electAnyLeader``
    finds no ISR or ELR member and then ``canElectLastKnownLeader`` holds (ISR and ELR
    empty, ``lastKnownElr`` the one leader recorded when the ISR emptied,
    ``maybeUpdateLastKnownLeader``), so ``tryElection`` makes that replica leader as an
    unclean election: ISR = [it], the ELR emptied (``maybeUpdateRecordElr``), RECOVERING.
    ``canElectLastKnownLeader`` does not test ``isAcceptableLeader`` (it only logs when the
    replica *is* acceptable), so the replica may be fenced, down, or ``b`` itself, just
    registered with an empty disk.  No Kafka release with ELR elections lacks it (3.7.0
    added both in one commit) and no controller path calls
    ``setUseLastKnownLeaderInBalancedRecovery(false)``: the ``kafka`` model's default
    ``last_known_leader=unchecked`` (the only value this step maps; KAFKA-19522's check is
    ``acceptable``).  The spec's ``MaybeUpdatePartitionOnBrokerChange`` elects only from
    the ISR or an unfenced ELR member and otherwise leaves the partition leaderless, and
    its ``last_known_elr`` holds the members that left the ELR, not the last leader: the
    check keeps that leader as a history variable
    (``isrlab.spec.kafka.kraft_refinement_history``).  The step: ``RegistersFenced``'s
    registration where its record leaves no leader, ISR or ELR, rewritten to elect the
    last-known leader (one record: leader epoch bumped once, ISR = [it], ELR emptied); the
    recovery state is not in the spec.  Reached only with replaced disks or power losses
    (the ELR empties only by unclean registrations; fencing the last ISR member puts it in
    the ELR)."""
    leader = last_leader(s)
    if not tla.config.kip966 or leader == kl.NIL:
        return []
    out: list[Abstract] = []
    for t in registers_fenced(tla, s, b):
        con = t[kl.CON_PM]
        if (len(t[kl.CON_LOG]) == len(s[kl.CON_LOG]) or con[4] != kl.NO_LEADER
                or con[1] or con[2]):
            continue
        base = list(t)
        base[kl.CON_LOG] = t[kl.CON_LOG][:-1]
        base[kl.CON_PM] = s[kl.CON_PM]
        d = list(t)
        tla._apply_partition_change(tuple(base), d, con[0], leader, 1 << (leader - 1), 0,
                                    s[kl.CON_PM][5] + 1, con[6], con[7], con[8])
        out.append(tuple(d))
    return out


def leader_answers_with_hw_before_update(tla: KraftModel, s: Abstract,
                                         b: int) -> list[Abstract]:
    """LeaderAnswersWithHwBeforeUpdate: leader ``b`` handles a fetch and its response
    carries the HW it had before the fetch raised it.

    Kafka's ``Partition.fetchRecords`` (3.5 through 4.0) reads the log under the lock
    (``readFromLocalLog``: the ``LogReadInfo`` holds the HW as it is then) and only after
    that calls ``updateFollowerFetchState``, whose ``maybeIncrementLeaderHW`` may raise the
    HW: the response carries the HW from before this fetch's update, and the follower's
    ``UnifiedLog.updateHighWatermark`` takes it even when it is below its own (the HW is
    bounded by the log start and end offsets only).  The spec's ``ReceiveFetchRequest``
    answers with the HW after its update.  Usually the spec's response left in flight stands
    for Kafka's (the follower's HW unchanged until the next fetch); but when the follower's
    HW is above the leader's (an old leader following a newly elected one that has not
    learnt the HW yet, as a preferred election leaves it) Kafka's follower goes down to the
    leader's old HW, which no spec response carries; and with two records a response
    carrying the second record, which the follower must take, carries the HW the first
    one's fetch offset just raised in the spec, not the one Kafka's carries.  The step:
    ``ReceiveFetchRequest`` of leader ``b`` with the response's HW set to ``b``'s HW before
    the step, where that differs."""
    old = tla._hwm(s, b)
    out: list[Abstract] = []
    for t in tla.receive_fetch_request(s, b):
        msgs = list(t[kl.MESSAGES])
        for i, m in enumerate(msgs):
            if (m[0] == kl.FETCH_RESP and m[2] == b and m not in s[kl.MESSAGES]
                    and m[3] == kl.ERR_NONE and m[7] == () and m[6] != old):
                msgs[i] = (*m[:6], old, *m[7:])
                d = list(t)
                d[kl.MESSAGES] = tuple(sorted(msgs))
                out.append(tuple(d))
                break
    return out


def leader_answers_with_every_record(tla: KraftModel, s: Abstract, b: int) -> list[Abstract]:
    """LeaderAnswersWithEveryRecord: leader ``b`` handles a fetch and its response carries
    every record from the fetch offset to its log end.

    Kafka's ``Partition.fetchRecords`` reads a follower's fetch with ``readFromLocalLog``:
    ``UnifiedLog.read`` from the fetch offset up to the log end (``FetchIsolation.LOG_END``),
    as many records as ``replica.fetch.max.bytes`` (1 MiB by default; the ``kafka`` model's
    few records always fit) allows, so one round trip brings a follower up to the leader's
    log end.  The spec's ``ReceiveFetchRequest`` answers with the one record at the fetch
    offset (its ``Values = {A}`` cfgs never hold more), so a follower two records behind
    needs two round trips, and the second request, carrying the first record's offset,
    lets the leader raise its HW before the follower has both: no sequence of the spec's
    steps leaves the follower with both records and the leader's HW where Kafka's is.
    The step: ``ReceiveFetchRequest`` of leader ``b`` with the response Kafka's: the records
    from the fetch offset to ``b``'s log end, where that is more than one (the follower's
    ``ReceiveFetchResponse`` appends every record of a response), and the HW ``b`` had
    before the step (``LeaderAnswersWithHwBeforeUpdate``)."""
    out: list[Abstract] = []
    leo, old = tla._leo(s, b), tla._hwm(s, b)
    for t in tla.receive_fetch_request(s, b):
        msgs = list(t[kl.MESSAGES])
        for i, m in enumerate(msgs):
            if (m[0] == kl.FETCH_RESP and m[2] == b and m not in s[kl.MESSAGES]
                    and m[3] == kl.ERR_NONE and m[7] == () and len(m[8]) == 1
                    and m[5] + 1 < leo):
                records = tuple(tla._entry(s, b, offset) for offset in range(m[5], leo))
                msgs[i] = (*m[:6], old, m[7], records, *m[9:])
                d = list(t)
                d[kl.MESSAGES] = tuple(sorted(msgs))
                out.append(tuple(d))
                break
    return out


def preferred_leader_election(tla: KraftModel, s: Abstract, _b: int) -> list[Abstract]:
    """PreferredLeaderElection: the controller makes the preferred replica leader.

    Kafka's ``ReplicationControlManager.electLeader`` with ``ElectionType.PREFERRED`` (an
    ``ElectLeaders`` request, or the controller's own ``maybeBalancePartitionLeaders`` with
    ``auto.leader.rebalance.enable``, on by default) runs ``PartitionChangeBuilder`` with
    ``Election.PREFERRED``: when the first replica of the assignment is in the ISR and
    active and does not lead, the record makes it leader (a new leader epoch and partition
    epoch, the ISR and the ELR unchanged); otherwise nothing is written.  The spec elects a
    leader only in ``MaybeUpdatePartitionOnBrokerChange``, when the leader leaves the ISR or
    is fenced, or the partition has none: no action moves leadership away from a live,
    unfenced ISR leader.  The new leader is one the spec's own elections could pick (an
    unfenced ISR member), so the step adds no state the spec's invariants were not meant
    for.  The step: ``ApplyPartitionChange`` with the preferred replica (broker 1, the
    first of ``0..n-1`` in the ``kafka`` model's assignment) as leader, leader and partition
    epochs bumped, the ISR and the ELR kept."""
    con = s[kl.CON_PM]
    replicas, isr, elr, leader, le, pe, adding, removing = (
        con[0], con[1], con[2], con[4], con[5], con[6], con[7], con[8])
    if leader == 1 or not isr & 1 or not s[kl.CON_UNFENCED] & 1:
        return []
    d = list(s)
    tla._apply_partition_change(s, d, replicas, 1, isr, elr, le + 1, pe + 1, adding, removing)
    return [tuple(d)]


def unclean_leader_election(tla: KraftModel, s: Abstract, b: int) -> list[Abstract]:
    """UncleanLeaderElection: the controller elects a replica outside the ISR.

    With ``unclean.leader.election.enable`` Kafka's ``PartitionChangeBuilder.electLeader``
    (``Election.UNCLEAN``), when no ISR member (nor, with KIP-966, ELR member) is an
    acceptable leader, takes the first acceptable replica of the assignment (active:
    unfenced, not in controlled shutdown); ``tryElection`` then sets the ISR to that replica
    alone and the leader recovery state to RECOVERING (KIP-704), and
    ``maybeUpdateRecordElr`` empties the ELR and the last-known ELR.  It runs wherever the
    builder does, in the same record: fencing a broker (``handleBrokerFenced``), unfencing
    one (``handleBrokerUnfenced``), a controlled shutdown.  The spec has no unclean election
    (``MaybeUpdatePartitionOnBrokerChange`` elects only from the ISR, or the ELR, and
    otherwise leaves the partition leaderless with a new leader epoch); the unclean
    election is the flaw the spec's v3.5 ``AvoidLastReplicaStanding`` and KIP-966 are
    about.  The step, where the partition is left leaderless with no unfenced ISR or ELR
    member: the first unfenced replica made leader and sole ISR member, the ELR emptied;
    either as the record of broker ``b``'s fencing or shutdown (the spec's record
    rewritten: one leader epoch, as Kafka's one record) or, for an unfencing that elects
    nobody in the spec, as a record of its own (leader and partition epochs bumped).  The
    recovery state is not in the spec."""
    out = _elected_uncleanly(tla, s, s[kl.CON_PM], s)
    shutdown = tla.clean_shutdown(s, b) if tla.config.clean_limit else []
    for t in (*tla.fence_broker(s, b), *shutdown):
        if len(t[kl.CON_LOG]) > len(s[kl.CON_LOG]):
            base = list(t)
            base[kl.CON_LOG] = t[kl.CON_LOG][:-1]
            base[kl.CON_PM] = s[kl.CON_PM]
            out += _elected_uncleanly(tla, tuple(base), t[kl.CON_PM], t)
    return out


def _elected_uncleanly(tla: KraftModel, base: Abstract, con: tuple[Any, ...],
                       t: Abstract) -> list[Abstract]:
    """``t`` with the partition metadata ``con`` (a leaderless one, written by ``t``'s step
    when ``base`` is ``t`` before that record, else to be bumped) replaced by an unclean
    election's, appended to ``base``'s metadata log; none if ``con`` has a leader or an
    unfenced ISR or ELR member, or no replica is unfenced."""
    replicas, isr, elr, leader, le, pe, adding, removing = (
        con[0], con[1], con[2], con[4], con[5], con[6], con[7], con[8])
    unfenced = t[kl.CON_UNFENCED]
    if leader != kl.NO_LEADER or (isr | elr) & unfenced:
        return []
    first = next((c for c in tla.brokers
                  if replicas >> (c - 1) & 1 and unfenced >> (c - 1) & 1), None)
    if first is None:
        return []
    bump = int(base is t)
    d = list(t)
    tla._apply_partition_change(base, d, replicas, first, 1 << (first - 1), 0, le + bump,
                                pe + bump, adding, removing)
    return [tuple(d)]


def follower_truncation_caps_hw(tla: KraftModel, s: Abstract, b: int) -> list[Abstract]:
    """FollowerTruncationCapsHw: follower ``b``, truncated below its HW, lowers the HW to its
    new log end.

    Kafka's ``UnifiedLog.truncateTo`` (3.5 through 4.0), after cutting the log, calls
    ``updateHighWatermark(logEndOffsetMetadata)`` when the HW is at or past the new log end:
    a HW never exceeds the LEO.  The spec's ``TruncateToSafePoint`` keeps the HW as it was.
    In the spec's own behaviours a follower is never cut below its HW (only committed
    records would be lost); an unclean election (``UncleanLeaderElection``) elects a leader
    without them, and the old ISR members, following it, truncate their committed records.
    The step: a running broker's HW above its log end set to its log end."""
    if s[kl.BROKER_STATE][b - 1][0] != kl.RUNNING:
        return []
    log, hwm, leo = s[kl.P_DATA][b - 1]
    if hwm <= leo:
        return []
    d = list(s)
    d[kl.P_DATA] = _put(s[kl.P_DATA], b, (log, leo, leo))
    return [tuple(d)]


def controller_failover_resends(tla: KraftModel, s: Abstract, _b: int) -> list[Abstract]:
    """ControllerFailoverResends: a new active controller; the answers the old one had not
    delivered are lost and the leaders' requests go again.

    ``QuorumController.renounce`` fails every pending answer (NOT_CONTROLLER,
    ``deferredEventQueue.failAll``; a connection to a resigned controller breaks), and a
    leader's ``NodeToControllerChannelManager`` puts the AlterPartition it is waiting on back
    first in its queue (``requestQueue.putFirst``) for the new controller, which continues
    from the committed metadata log (``claim``).  The ``kafka`` model's
    ``ControllerFailover`` turns each answer on its way back into the same request in
    flight.  The spec has one controller that never fails: an AlterPartition answer, once
    sent, arrives.  The step: for every leader whose pending AlterPartition has its answer
    in flight, the answer replaced by the request (the controller's state unchanged: its
    records were committed); none such, no step."""
    msgs = s[kl.MESSAGES]
    changed = False
    for b in tla.brokers:
        request = s[kl.P_PENDING_AP][b - 1][1]
        if not request or not KraftModel._pending(s, b):
            continue
        for m in msgs:
            if m[0] == kl.AP_RESP and (m[7] if m[1] == kl.ERR_NONE else m[2]) == request:
                msgs = tuple(sorted((*(x for x in msgs if x != m), request)))
                changed = True
                break
    if not changed:
        return []
    d = list(s)
    d[kl.MESSAGES] = msgs
    return [tuple(d)]


_ELECTING = ("FenceBroker", "UnfenceBroker", "ControlledShutdown", "ShutdownNow")
"""The ``kafka`` steps whose ``PartitionChangeBuilder`` run may elect uncleanly."""

_PROPOSING = ("Fetch", "ShrinkIsr", "AlterPartitionResponse", "HandleCommit")
"""The ``kafka`` steps in which a leader may send an AlterPartition."""

GAPS: dict[str, tuple[tuple[str, ...], GapStep]] = {
    "LeaderIncHwOnWrite": (("Produce",), leader_inc_hw_on_write),
    "LeaderAppendsWhereTheSpecStops": (("Produce",), leader_appends_where_the_spec_stops),
    "LeaderAwaitsMetadataOnFencedError": (("AlterPartitionResponse",),
                                          leader_awaits_metadata_on_fenced_error),
    "LeaderResendsRefusedAlterPartition": (_PROPOSING, leader_resends_refused_alter_partition),
    "LeaderExpandsIsrByOne": (("Fetch",), leader_expands_isr_by_one),
    "LeaderAnswersWithHwBeforeUpdate": (("Fetch",), leader_answers_with_hw_before_update),
    "LeaderAnswersWithEveryRecord": (("Fetch",), leader_answers_with_every_record),
    "LeaderShrinksIsrOnly": (("ShrinkIsr",), leader_shrinks_isr_only),
    "BrokerStopsBeforeFencing": (("Crash",), broker_stops_before_fencing),
    "BrokerLosesPowerBeforeFencing": (("PowerLoss",), broker_loses_power_before_fencing),
    "BrokerLosesUnflushedTailBeforeFencing": (("PowerLoss",),
                                              broker_loses_unflushed_tail_before_fencing),
    "RegistersFenced": (("RegisterBroker",), registers_fenced),
    "LastKnownLeaderElection": (("RegisterBroker",), last_known_leader_election),
    "DiskReplacedWhileDown": (("ReplaceDisk",), disk_replaced_while_down),
    "PreferredLeaderElection": (("PreferredElection",), preferred_leader_election),
    "UncleanLeaderElection": (_ELECTING, unclean_leader_election),
    "FollowerTruncationCapsHw": (("Truncate",), follower_truncation_caps_hw),
    "ControllerFailoverResends": (("ControllerFailover",), controller_failover_resends),
}
"""Each gap step: the ``kafka`` actions it may accompany, and the step."""

GAP_STEPS = tuple(GAPS)
"""Every gap step, by name."""


def gap_steps(tla: KraftModel, s: Abstract, action: str, broker: int,
              enabled: Sequence[str]) -> list[tuple[str, Abstract]]:
    """The gap steps among ``enabled`` that the ``kafka`` step ``action`` of ``broker``
    (1-based) may take from ``s``, with their names."""
    out: list[tuple[str, Abstract]] = []
    # a fetch is the follower's step, but the leader's AlterPartition may come with it; a
    # controller's step (no broker) passes 0
    brokers = tla.brokers if action == "Fetch" else (broker,) if broker > 0 else (0,)
    for name in enabled:
        actions, step = GAPS[name]
        if action in actions:
            out += [(name, t) for b in brokers for t in step(tla, s, b)]
    return out
