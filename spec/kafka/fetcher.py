"""The follower's fetcher (``ReplicaFetcherThread``) and the leader's side of a fetch.

Fetch, KIP-320's leader-epoch fencing (``fetch_fencing``), truncation (the
``truncation`` rule, ``Truncate`` once a down leader is back), KAFKA-7414's out-of-range
handling and, with ``fetch=split``, the request and the response as two steps.  By default
(``fetch=atomic``) a fetch is one atomic round trip; with ``fetch=split`` one fetch is in
flight per follower, and its response may be lost (``lost_requests``) or discarded as
stale; either way it carries the HW the leader had before the fetch, so followers learn a
new HW one fetch late, as in Kafka.

With ``fetch_fencing=final`` (KIP-320, the default) a fetch or a leader-epoch truncation
against a leader in another epoch is refused (the follower retries later); the refused
fetch still makes the follower's LEO unknown on the leader (``FencedFetch``), as Kafka
2.1's ``readFromLocalLog`` / ``updateFollowerLogReadResults`` do; with ``first-design``
(KIP-320's first design, never released) ``make_follower`` truncates nothing, a fetch
carries the epoch of the follower's last record, the leader records it (HW, ISR) before
comparing that epoch with its own record's at that offset, and answers a mismatch with an
error on which the follower truncates against the leader's log (``FetchError``; with
``fetch=split`` on its ``FetchResponse``); ``none`` is Kafka <= 2.0.
"""

from __future__ import annotations

from dataclasses import replace
from typing import cast

from isrlab.core.errors import Errors
from isrlab.core.fencing import FetchDecision, FetchFencing, fenced_read, fetch_decision
from isrlab.core.isr import (
    LogReadResult,
    leader_epoch_start_offset,
    read_from_local_log,
    update_follower_fetch,
)
from isrlab.core.partition import raise_leader_hw, truncate_local_log
from isrlab.core.produce import handle_offset_out_of_range, process_partition_data
from isrlab.core.state import Partition
from isrlab.spec.kafka.config import NO_FETCH, KafkaConfig, Out, State
from isrlab.spec.kafka.labels import broker_step
from isrlab.spec.kafka.lifecycle import BrokerLifecycle
from isrlab.spec.kafka.memo import MISSING, IdCache, IdCache2, memoised
from isrlab.spec.kafka.params import ExpandRule
from isrlab.spec.kafka.state import (
    F_HALTED,
    F_TRUNCATED,
    NONE,
    BrokerPartition,
    FetchResponse,
    with_fields,
)


class ReplicaFetcher(BrokerLifecycle):
    """Follower fetches, fencing and truncation."""

    def __init__(self, config: KafkaConfig) -> None:
        super().__init__(config)
        self._cache_fetch_at_leader = IdCache(self._interner)
        """``_fetch_at_leader_cached``'s cache."""
        self._cache_response_applied = IdCache2(self._interner)
        """``_response_applied_cached``'s cache."""
        self._cache_fenced_at_leader = IdCache(self._interner)
        """``_fenced_at_leader``'s cache."""

    def _a_fetch(self, state: State, out: Out) -> None:
        """``Fetch(f)``: follower ``f`` fetches from the leader it believes in, one round trip
        (``fetch=atomic``), or ``FetchRequest(f)``: its request is handled by the leader and
        the response queued (``fetch=split``; one fetch in flight per follower).

        The leader reads from ``f``'s LEO (``read_from_local_log``), records the fetch and
        maybe expands the ISR and raises its HW (``update_follower_fetch``; with
        ``expand_rule=epoch-start`` a follower joins only from the leader epoch's start
        offset; the ISR write fails when the leader's epoch is not ZooKeeper's); the follower
        appends the records and takes ``min(leader HW, own LEO)`` (``_apply_response``).
        A fetch at an offset past the leader's LEO fails (OFFSET_OUT_OF_RANGE): the leader
        records the follower's LEO as unknown (``updateFollowerLogReadResults`` passes
        failed reads on) and the follower runs ``handle_offset_out_of_range``: it truncates
        to the leader's LEO (Kafka 2.1+, KAFKA-7414) or, with ``kafka_7414=false`` and
        unclean election disabled, its broker exits (``FatalExitError``, Kafka 0.10.2-2.0).
        With ``fetch_fencing=final`` (KIP-320, 2.1+) the fetch carries the follower's
        leader epoch and a leader in another epoch refuses it (FENCED_LEADER_EPOCH /
        UNKNOWN_LEADER_EPOCH), recording the follower's LEO as unknown (``FencedFetch``).
        With ``fetch_fencing=first-design`` (KIP-320's first design, never released) the
        fetch carries the epoch of the follower's last record; the leader records it first
        (the fetch counts for the HW and the ISR), then compares that epoch with the epoch
        of its own record at the same offset, and on a mismatch answers an error with no
        records, on which the follower truncates (``FetchError``, ``_first_design``).  A
        fetch that would change nothing is not a step.
        """
        brokers = state.brokers
        for f in range(self.n):
            fb = brokers[f]
            lid = fb.leader
            if not fb.alive or lid in (NONE, f) or not brokers[lid].alive or fb.fetch_in_flight:
                continue
            lb = brokers[lid]
            if lb.leader != lid:
                continue  # NOT_LEADER_FOR_PARTITION: nothing changes
            if fb.truncating:
                if not self.fenced or lb.leader_epoch == fb.leader_epoch:
                    out.append((broker_step("Truncate", f), self._truncate(state, f, lid)))
                continue
            if self.fenced and lb.leader_epoch != fb.leader_epoch:
                fenced = self._fenced_fetch(state, f, lid, lb.leader_epoch > fb.leader_epoch)
                if fenced != state:
                    out.append((broker_step("FencedFetch", f), fenced))
                continue
            decision = self._first_design(fb.log, lb.log) if self.first_design else None
            s = self._fetch(state, f, lid, decision)
            if s is not None and s != state:
                label = ("FetchRequest" if self.split
                         else "FetchError" if decision is not None
                         and decision.error is not Errors.NONE else "Fetch")
                out.append((broker_step(label, f), s))

    def _isr_eligible(self, state: State, lid: int, f: int) -> bool:
        """Whether leader ``lid`` may propose follower ``f`` for its ISR (a hook: always in
        ZooKeeper mode; KRaft's ``Partition.isReplicaIsrEligible`` in
        ``isrlab.spec.kafka.broker_lifecycle``)."""
        return True

    def _first_design(self, log: tuple[int, ...], leader_log: tuple[int, ...]
                      ) -> FetchDecision | None:
        """KIP-320's first design: the leader's decision on a fetch from a follower with
        ``log`` (``isrlab.core.fencing.fetch_decision``).  The fetch carries the epoch the
        follower expects at its fetch offset, the epoch of its last record (the first
        draft's "epoch of the last fetch"); the leader compares it with the epoch of its
        own record just below that offset (what its leader-epoch cache says of it), in
        either direction, as the TLA+ ``Kip320FirstTry``'s FollowerFetch / FollowerTruncate
        do.  ``None`` when there is nothing to compare: an empty follower log (no expected
        epoch, like the sentinel -1) or a fetch offset past the leader's LEO (answered
        OFFSET_OUT_OF_RANGE as before).  Shortcut: the mismatch is core's
        FENCED_LEADER_EPOCH / UNKNOWN_LEADER_EPOCH; the draft named it LOG_TRUNCATION, and
        the error is not kept in the state."""
        offset = len(log)
        if offset == 0 or offset > len(leader_log):
            return None
        c = self.codec
        return fetch_decision(FetchFencing.FIRST_DESIGN, c.epoch(leader_log[offset - 1]),
                              c.epoch(log[-1]))

    def _truncate(self, state: State, f: int, lid: int) -> State:
        """``Truncate(f)`` (``unavailable_leader=fetcher``): the leader ``lid`` is back and
        answers ``OffsetsForLeaderEpoch`` (with KIP-320 only in ``f``'s epoch), and ``f``'s
        fetcher truncates by the configured rule (``AbstractFetcherThread.maybeTruncate``),
        then fetches as usual.  Also the follower's side of ``FetchError(f)``
        (``fetch_fencing=first-design``): the same truncation, on the fetch error."""
        fb = state.brokers[f]
        newbr = self._truncated(fb, f, state.brokers[lid].log)
        s = self._set_broker(state, f, newbr)
        return self._flag(s, F_TRUNCATED) if len(newbr.log) < len(fb.log) else s

    @memoised
    def _truncated(self, fb: BrokerPartition, f: int,
                   leader_codes: tuple[int, ...]) -> BrokerPartition:
        """Follower ``f`` holding ``fb`` truncated by the configured rule against the leader's
        log ``leader_codes`` (``_truncate``; memoised)."""
        p = self.broker_partition(fb, f)
        leader_log = self.log_records(leader_codes)
        offset = min(max(0, self.rule(p.log, p.high_watermark, leader_log)), len(p.log))
        newp = truncate_local_log(p, offset)
        return with_fields(self._with_partition(fb, newp), truncating=0)

    def _fenced_fetch(self, state: State, f: int, lid: int, follower_older: bool) -> State:
        """A fetch the leader refuses for its epoch (KIP-320): Kafka 2.1's ``readFromLocalLog``
        answers FENCED_LEADER_EPOCH (the follower is in an older epoch) or
        UNKNOWN_LEADER_EPOCH (a newer one) and the leader records the failed read (the
        follower's LEO unknown); the follower changes nothing and fetches again later."""
        newlb = self._fenced_at_leader(state.brokers[lid], lid, f, len(state.brokers[f].log),
                                       follower_older)
        return state if newlb is None else self._set_broker(state, lid, newlb)

    def _fenced_at_leader(self, lb: BrokerPartition, lid: int, f: int, offset: int,
                          follower_older: bool) -> BrokerPartition | None:
        """``_fenced_at_leader_computed``, cached (``memo.IdCache`` on ``lb`` and the rest as
        one int)."""
        if offset >= 1 << 13:
            return self._fenced_at_leader_computed(lb, lid, f, offset, follower_older)
        small = lid | f << 3 | int(follower_older) << 6 | offset << 7
        cache = self._cache_fenced_at_leader
        found = cache.find(lb, small)
        if found is MISSING:
            found = cache.keep(lb, small, self._fenced_at_leader_computed(
                lb, lid, f, offset, follower_older))
        return cast(BrokerPartition | None, found)

    def _fenced_at_leader_computed(self, lb: BrokerPartition, lid: int, f: int, offset: int,
                                   follower_older: bool) -> BrokerPartition | None:
        """Leader ``lid`` holding ``lb`` after it refused ``f``'s fetch at ``offset`` for its
        epoch, ``None`` when nothing changes (``_fenced_fetch``)."""
        leader = self.broker_partition(lb, lid)
        error = Errors.FENCED_LEADER_EPOCH if follower_older else Errors.UNKNOWN_LEADER_EPOCH
        read = LogReadResult(offset, 0, len(leader.log), leader.high_watermark,
                             0, (), self.sat, error)
        update = update_follower_fetch(leader, f, read).unwrap()
        if update.partition == leader:
            return None
        return self._with_partition(lb, update.partition)

    def _fetch(self, state: State, f: int, lid: int,
               decision: FetchDecision | None = None) -> State | None:
        """The leader side of a fetch, then the response: applied at once (atomic), or put
        in flight on ``f`` (split; ``None`` when it would change nothing).

        ``decision`` (``fetch_fencing=first-design``, ``_first_design``): the leader records
        the fetch as any other (LEO, ISR expansion, HW) and, on a mismatch, answers the
        error with no records (``isrlab.core.fencing.fenced_read``); the follower then
        truncates lazily, on that error: the OffsetsForLeaderEpoch round trip that follows
        it is folded into the step, so ``f`` truncates by the configured ``truncation``
        rule against the leader's log as the fetch left it (``_truncate``; with the default
        kip279, after the largest offset both logs agree on, as the TLA+ FollowerTruncate's
        FirstNonMatchingOffsetFromTail), and takes no HW from the answer."""
        fb, lb = state.brokers[f], state.brokers[lid]
        at_leader = self._fetch_at_leader_cached(lb, lid, f, len(fb.log), decision,
                                                 self._may_join(state, lid),
                                                 self._isr_eligible(state, lid, f))
        if at_leader is None:
            return None
        newlb, written, upkeep, response = at_leader
        s = self._set_broker(state, lid, newlb)
        if written is not None:
            s = self._write_isr(s, lid, written)
        if upkeep:
            s = self._after_leader_step(s, lid)
        if response.error and not self.split:
            # first design: the error, no records; the follower truncates on it
            return self._truncate(s, f, lid)
        if not self.split:
            return self._apply_response(s, f, response)
        if s == state and self._apply_response(state, f, response) == state:
            return None  # an idle fetch: nothing would change on either side
        return self._set_broker(s, f, with_fields(s.brokers[f], fetch_in_flight=response))

    def _fetch_at_leader_cached(
        self, lb: BrokerPartition, lid: int, f: int, offset: int,
        decision: FetchDecision | None, may_join: bool, eligible: bool,
    ) -> tuple[BrokerPartition, Partition | None, bool, FetchResponse] | None:
        """``_fetch_at_leader``, without a first-design decision cached
        (``memo.IdCache`` on ``lb`` and one int of the rest); with one, memoised."""
        if decision is not None or offset >= 1 << 12:
            return self._fetch_at_leader(lb, lid, f, offset, decision, may_join, eligible)
        small = lid | f << 3 | int(may_join) << 6 | int(eligible) << 7 | offset << 8
        cache = self._cache_fetch_at_leader
        found = cache.find(lb, small)
        if found is MISSING:
            found = cache.keep(lb, small, self._fetch_at_leader(lb, lid, f, offset, None,
                                                                 may_join, eligible))
        return cast(tuple[BrokerPartition, Partition | None, bool, FetchResponse] | None, found)

    @memoised
    def _fetch_at_leader(
        self, lb: BrokerPartition, lid: int, f: int, offset: int,
        decision: FetchDecision | None, may_join: bool, eligible: bool = True,
    ) -> tuple[BrokerPartition, Partition | None, bool, FetchResponse] | None:
        """The leader's side of ``f``'s fetch at ``offset`` from leader ``lid`` holding
        ``lb`` (``_fetch``; ``may_join``: ``_may_join``): the leader's new tuple, the
        ``Partition`` whose ISR is written to ZooKeeper (``None``: no write), whether the
        ghost upkeep of a leader step follows, and the response; ``None`` when the fetch
        fails (memoised)."""
        leader = self.broker_partition(lb, lid)
        leader_leo = len(leader.log)
        read = read_from_local_log(leader, offset, 0, self.sat).unwrap()
        if read.error is Errors.OFFSET_OUT_OF_RANGE:
            # The leader records the failed read (the follower's LEO becomes unknown).
            failed = update_follower_fetch(leader, f, read).unwrap().partition
            return (self._with_partition(lb, failed), None, False,
                    FetchResponse(lid, leader.leader_epoch, offset, leader_leo,
                                  leader.high_watermark, ()))
        start = (leader_epoch_start_offset(leader)
                 if self.cfg.expand_rule == ExpandRule.EPOCH_START else None)
        answer = read if decision is None else fenced_read(read, decision)
        recorded = read if decision is None or decision.record_fetch else answer
        update = update_follower_fetch(
            leader, f, recorded, since_previous_fetch=self.previous_fetch,
            leader_epoch_start=start, hw_lag_ms=self.hw_lag,
        ).unwrap()
        if update.error is not Errors.NONE:
            return None
        new_leader = update.partition
        written: Partition | None = None
        if update.isr_changed and self.alter and eligible:
            newlb = self._proposed_expand(lb, lid, leader, new_leader, f)
        else:
            if update.isr_changed and (self.alter or not may_join):
                # The conditional ZooKeeper write failed, or (KRaft) the leader may not
                # propose the follower (``_isr_eligible``): the ISR stays, the fetch counts.
                new_leader = raise_leader_hw(
                    replace(leader, remotes=new_leader.remotes), self.sat, self.hw_lag
                ).partition
            elif update.isr_changed:
                written = new_leader
            newlb = self._with_partition(lb, new_leader)
        if answer.error is not Errors.NONE:
            response = FetchResponse(lid, leader.leader_epoch, offset, leader_leo,
                                     read.high_watermark, (), 1)
        else:
            response = FetchResponse(lid, leader.leader_epoch, offset, leader_leo,
                                     read.high_watermark, lb.log[offset:])
        return newlb, written, True, response

    def _apply_response(self, state: State, f: int, r: FetchResponse) -> State:
        """The follower side of a fetch: append and take the HW (``process_partition_data``),
        or, for an offset past the leader's LEO, ``handle_offset_out_of_range``: truncate to
        that LEO, or exit the broker (``kafka_7414=false``, unclean election disabled).
        KIP-320's first-design error (``fetch=split``): the follower asks the leader
        (``OffsetsForLeaderEpoch``) and truncates by the ``truncation`` rule against its
        log as it is now (``_truncate``); if that broker no longer leads, it is answered
        NOT_LEADER and changes nothing (it fetches again)."""
        if r.error:
            lb = state.brokers[r.leader]
            if not (lb.alive and lb.leader == r.leader):
                return state
            return self._truncate(state, f, r.leader)
        newfb = self._response_applied_cached(state.brokers[f], f, r)
        if newfb is None:
            return self._flag(self._crashed(state, f, False), F_HALTED)
        s = self._set_broker(state, f, newfb)
        return self._flag(s, F_TRUNCATED) if r.fetch_offset > r.leader_leo else s

    def _response_applied_cached(self, fb: BrokerPartition, f: int,
                                 r: FetchResponse) -> BrokerPartition | None:
        """``_response_applied``, cached (``memo.IdCache2`` on ``fb`` and ``r``)."""
        cache = self._cache_response_applied
        found = cache.find(fb, r, f)
        if found is MISSING:
            found = cache.keep(fb, r, f, self._response_applied(fb, f, r))
        return cast(BrokerPartition | None, found)

    @memoised
    def _response_applied(self, fb: BrokerPartition, f: int,
                          r: FetchResponse) -> BrokerPartition | None:
        """Follower ``f`` holding ``fb`` after it handled the (error-free) response ``r``;
        ``None`` when its broker exits (``_apply_response``; memoised)."""
        follower = self.broker_partition(fb, f)
        cut = r.leader_leo
        if r.fetch_offset > cut:
            out = handle_offset_out_of_range(
                follower, cut, 0, self.cfg.unclean_election, not self.cfg.kafka_7414
            ).unwrap()
            if out.fatal:
                return None
            return self._with_partition(fb, out.partition)
        follower = process_partition_data(
            follower, r.fetch_offset, self.log_records(r.records), r.high_watermark
        ).unwrap()
        return self._with_partition(fb, follower)

    def _a_fetch_response(self, state: State, out: Out) -> None:
        """``FetchResponse(f)`` (``fetch=split``): follower ``f`` handles its fetch response;
        a stale one (``f`` now follows another leader or epoch, or its LEO moved) is
        discarded, as the fetcher thread does.  ``LoseFetchResponse(f)`` with
        ``lost_requests``: the response never arrives (``f`` will fetch again)."""
        for f in range(self.n):
            fb = state.brokers[f]
            r = fb.fetch_in_flight
            if not r or not fb.alive:
                continue
            cleared = self._set_broker(state, f, with_fields(fb, fetch_in_flight=NO_FETCH))
            if self.cfg.lost_requests:
                out.append((broker_step("LoseFetchResponse", f), cleared))
            stale = (fb.leader != r.leader or fb.leader_epoch != r.leader_epoch
                     or len(fb.log) != r.fetch_offset)
            s = cleared if stale else self._apply_response(cleared, f, r)
            if not (stale and self.cfg.lost_requests):
                out.append((broker_step("FetchResponse", f), s))

