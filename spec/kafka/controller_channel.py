"""The controller's ``ControllerChannelManager``: request queues per broker, delivery, loss.

Controller requests travel in channels, one per (controller epoch, destination), as
``ControllerChannelManager`` keeps one queue and one ``RequestSendThread`` per broker: a
broker handles a channel's requests in queue order; a crash drops its channel; after a
``ControllerFailover`` the old controller's channels may still deliver, in order.
Reordering, loss and duplicates are the faults ``reorder_requests``, ``lost_requests``
and ``duplicate_requests`` (docs/kafka-model.md, the audit table).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import cast

from isrlab.spec.kafka.config import KafkaConfig, Out, State
from isrlab.spec.kafka.labels import request_step, request_text
from isrlab.spec.kafka.memo import MISSING, IdCache, IdCache2
from isrlab.spec.kafka.replica_manager import ReplicaManagerSteps
from isrlab.spec.kafka.state import (
    LEADER_AND_ISR,
    NONE,
    UPDATE_METADATA,
    Request,
    ZkPartitionState,
    built,
    kafka_state,
    members,
    with_fields,
)


class ControllerChannelManager(ReplicaManagerSteps):
    """Queues controller requests and delivers them (``Deliver``, ``Lose``, ``DeliverCopy``)."""

    def __init__(self, config: KafkaConfig) -> None:
        super().__init__(config)
        self._cache_enqueued = IdCache2(self._interner)
        """``_enqueued``'s cache."""
        self._cache_deliver_label = IdCache(self._interner)
        """``_deliver_label``'s cache."""

    @staticmethod
    def _msg_text(m: Request) -> str:
        """A request as labels and traces show it (``isrlab.spec.kafka.labels``)."""
        return request_text(m.kind, m.dest, m.controller_epoch, m.leader, m.leader_epoch,
                            members(m.isr))

    def _update_metadata_for_all(
        self, ctrl: ZkPartitionState, leader: int, leader_epoch: int, isr: int,
        assigned: tuple[int, ...],
    ) -> list[Request]:
        """One UpdateMetadata request per broker, in broker order, with the controller's epoch
        (``ControllerBrokerRequestBatch.addUpdateMetadataRequestForBrokers``, which Kafka
        sends to the live or shutting-down brokers; here one per broker, and ``_enqueue``
        drops those to dead brokers)."""
        return [built(Request, d, UPDATE_METADATA, ctrl.controller_epoch, leader, leader_epoch, isr,
                        assigned) for d in range(self.n)]

    def _enqueue(self, state: State, new: Iterable[Request]) -> tuple[Request, ...]:
        """The requests in flight of ``state`` with the requests ``new`` queued, in order;
        a request to a dead broker is dropped (``sendRequest`` finds no channel to it).

        Default: each request goes to the tail of its channel, the queue of the controller
        epoch's ``ControllerChannelManager`` for its destination (``sendRequest`` puts it in
        the broker's ``messageQueue``); channels are kept sorted by ``(controller epoch,
        destination)``, a stable sort keeping each channel's FIFO order.  An UpdateMetadata
        queued behind another UpdateMetadata of the same channel replaces it (the bound that
        keeps ISR changes from growing the queue without end; docs/kafka-model.md).  With
        ``reorder_requests`` the requests form a set (sorted, duplicates merged).  A
        LeaderAndIsr naming no leader (an offline partition, ``elr`` only) is not sent:
        the broker would have nothing to do with it."""
        canon = self._interner.canon
        # the new requests the interner's objects before their tuple is a key of
        # ``_enqueued`` (the interner keeps that tuple, which may be its result too)
        return self._enqueued(state.channels, canon(tuple([canon(m) for m in new])),
                              self._alive_mask(state))

    def _enqueued(self, channels: tuple[Request, ...], new: tuple[Request, ...],
                  alive: int) -> tuple[Request, ...]:
        """``_enqueued_computed``, cached (``memo.IdCache2`` on ``channels`` and ``new``)."""
        cache = self._cache_enqueued
        found = cache.find(channels, new, alive)
        if found is MISSING:
            found = cache.keep(channels, new, alive,
                               self._enqueued_computed(channels, new, alive))
        return cast(tuple[Request, ...], found)

    def _enqueued_computed(self, channels: tuple[Request, ...], new: tuple[Request, ...],
                           alive: int) -> tuple[Request, ...]:
        """``_enqueue`` on the requests in flight ``channels`` with the brokers of the mask
        ``alive`` alive (memoised)."""
        new = tuple(m for m in new if alive >> m.dest & 1
                    and (m.leader != NONE or m.kind != LEADER_AND_ISR))
        if self.skip:
            new = tuple(with_fields(m, leader_alive=int(m.leader != NONE and alive >> m.leader & 1))
                        for m in new)
        canon = self._interner.canon
        if self.cfg.reorder_requests:
            return canon(tuple([canon(m) for m in sorted(set(channels).union(new))]))
        out = list(channels)
        for m in new:
            key = (m.controller_epoch, m.dest)
            last = max((i for i, x in enumerate(out) if (x.controller_epoch, x.dest) == key),
                       default=None)
            if (last is not None and m.kind == UPDATE_METADATA
                    and out[last].kind == UPDATE_METADATA):
                out[last] = m
            elif last is None or out[last] != m:
                out.append(m)
        out.sort(key=lambda x: (x.controller_epoch, x.dest))
        # the tuple and each request the interner's objects, so that the successor holds
        # them and the memoised calls taking a request find it by its address
        return canon(tuple([canon(m) for m in out]))

    def _deliverable(self, msgs: tuple[Request, ...]) -> Iterable[int]:
        """The indices of the requests that may be handled next: the head of every channel
        (one ``RequestSendThread`` per broker sends one request at a time, in queue order,
        and retries it until it succeeds), or every request with ``reorder_requests``."""
        if self.cfg.reorder_requests:
            return range(len(msgs))
        return self._heads(msgs)

    def _heads(self, msgs: tuple[Request, ...]) -> tuple[int, ...]:
        """``_heads_computed``, cached (``memo.IdCache``)."""
        small = 0
        cache = self._cache_heads
        found = cache.find(msgs, small)
        if found is MISSING:
            found = cache.keep(msgs, small, self._heads_computed(msgs))
        return cast(tuple[int, ...], found)

    def _heads_computed(self, msgs: tuple[Request, ...]) -> tuple[int, ...]:
        """The index of every channel's first request (``_deliverable``; memoised)."""
        heads = []
        prev = None
        for i, m in enumerate(msgs):
            key = (m.controller_epoch, m.dest)
            if key != prev:
                heads.append(i)
                prev = key
        return tuple(heads)

    def _a_deliver(self, state: State, out: Out) -> None:
        """``Deliver(m)``: a live broker handles the request at the head of one of its
        channels (any in-flight request with ``reorder_requests``).  Faults, off by
        default: ``Lose(m)`` (``lost_requests``) drops any one request while its
        connection lives; ``DeliverCopy(m)`` (``duplicate_requests``) handles it and keeps
        it queued, to be handled again."""
        msgs = state.channels
        if self.cfg.lost_requests:
            for i, m in enumerate(msgs):
                out.append((request_step("Lose", self._msg_text(m)),
                            kafka_state(state.controller, state.brokers,
                                        self._without_index(msgs, i), state.ghost)))
        for i in self._deliverable(msgs):
            m = msgs[i]
            if not state.brokers[m.dest].alive:
                continue
            s = self._handle(state, m)
            if s is None:
                continue
            out.append((self._deliver_label(m),
                        kafka_state(s.controller, s.brokers, self._without_index(msgs, i),
                                    s.ghost)))
            if self.cfg.duplicate_requests:
                out.append((request_step("DeliverCopy", self._msg_text(m)), s))

    def _deliver_label(self, m: Request) -> str:
        """``Deliver(request text)``, cached (``memo.IdCache`` on ``m``)."""
        cache = self._cache_deliver_label
        found = cache.find(m, 0)
        if found is MISSING:
            found = cache.keep(m, 0, request_step("Deliver", self._msg_text(m)))
        return cast(str, found)

    def _without_index(self, msgs: tuple[Request, ...], i: int) -> tuple[Request, ...]:
        """``_without_index_computed``, cached (``memo.IdCache``)."""
        small = i
        cache = self._cache_without_index
        found = cache.find(msgs, small)
        if found is MISSING:
            found = cache.keep(msgs, small, self._without_index_computed(msgs, i))
        return cast(tuple[Request, ...], found)

    def _without_index_computed(self, msgs: tuple[Request, ...], i: int) -> tuple[Request, ...]:
        """The requests in flight but the ``i``-th (memoised: the result is the interner's
        object, which the successor then holds)."""
        return self._interner.canon(msgs[:i] + msgs[i + 1:])

    def _without_dest(self, channels: tuple[Request, ...], b: int) -> tuple[Request, ...]:
        """``_without_dest_computed``, cached (``memo.IdCache``)."""
        small = b
        cache = self._cache_without_dest
        found = cache.find(channels, small)
        if found is MISSING:
            found = cache.keep(channels, small, self._without_dest_computed(channels, b))
        return cast(tuple[Request, ...], found)

    def _without_dest_computed(self, channels: tuple[Request, ...], b: int) -> tuple[Request, ...]:
        """The requests in flight but those to ``b`` (memoised; the interner's object)."""
        return self._interner.canon(tuple([m for m in channels if m.dest != b]))

