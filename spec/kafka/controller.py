"""The controller: elections, ZooKeeper writes, failover, broker start-up elections.

``KafkaController`` in ZooKeeper mode (``PartitionStateMachine`` with the leader selectors of
``isrlab.core.selectors``) and, with ``elr``, KRaft's ``PartitionChangeBuilder`` election with
KIP-966's ELR (``isrlab.spec.kafka.elr``).  Shortcuts: ZooKeeper writes are atomic; a
leader's ISR write is conditional on its epoch being ZooKeeper's (``zkVersion`` itself is
not stored); the controller learns of crashes and restarts at once (ZooKeeper sessions are
not modelled) but acts on them in separate steps; reassignment is a new preference order
of the same replicas (``ReassignedPartitionLeaderSelector``; moving replicas to new
brokers is not modelled).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import replace
from functools import cache
from itertools import permutations
from typing import cast

from returns.result import Failure, Success

from isrlab.core.elr import LogEnd
from isrlab.core.errors import ElectionError, ElectionFailed
from isrlab.core.selectors import (
    Election,
    Selection,
    offline_partition_leader_selector,
    preferred_replica_partition_leader_selector,
    reassigned_partition_leader_selector,
)
from isrlab.core.state import NO_LEADER, LeaderAndIsr, Partition
from isrlab.spec.kafka import elr as kip966
from isrlab.spec.kafka.config import KafkaConfig, Out, State
from isrlab.spec.kafka.controller_channel import ControllerChannelManager
from isrlab.spec.kafka.elr import UncleanRecovery
from isrlab.spec.kafka.labels import (
    CONTROLLER_FAILOVER,
    ELECT_LEADER,
    PREFERRED_ELECTION,
    PROPAGATE_ISR_CHANGES,
    REMOVE_DEAD_FROM_ISR,
    reassign,
)
from isrlab.spec.kafka.memo import MISSING, IdCache, memoised
from isrlab.spec.kafka.state import (
    F_UNCLEAN,
    LEADER_AND_ISR,
    NONE,
    Request,
    ZkPartitionState,
    built,
    kafka_state,
    mask_of,
    members,
    with_fields,
)


class KafkaController(ControllerChannelManager):
    """ZooKeeper's partition state, the controller's elections and its writes."""

    def __init__(self, config: KafkaConfig) -> None:
        super().__init__(config)
        self._cache_fence_and_elect = IdCache(self._interner)
        """``_fence_and_elect_first_alive``'s cache."""

    def _current(self, state: State) -> LeaderAndIsr:
        ctrl = state.controller
        return LeaderAndIsr(ctrl.leader, ctrl.leader_epoch, members(ctrl.isr), 0)

    def _apply_election(
        self, state: State, selection: Selection, label: str, out: Out
    ) -> None:
        """A selector's election written to ZooKeeper, with LeaderAndIsr to its receivers."""
        if isinstance(selection, Failure):
            return
        election = selection.unwrap()
        s = self._write_zk(state, election.leader_and_isr, election.receivers)
        if s is not None:
            out.append((label, s))

    def _write_zk(
        self, state: State, lai: LeaderAndIsr, receivers: Iterable[int],
        ar: tuple[int, ...] | None = None, elected: kip966.Elected | None = None,
    ) -> State | None:
        """ZooKeeper takes ``lai`` (bounded by ``max_leader_epoch``); requests are queued.
        With ``elr`` the ELR follows the ISR (``maybePopulateTargetElr``), or is the one of
        ``elected``, a KRaft election, whose ``unclean`` also decides the unclean flag."""
        if lai.leader_epoch > self.cfg.max_leader_epoch:
            return None
        old = ctrl = state.controller
        old_live_isr = [r for r in members(ctrl.isr) if state.brokers[r].alive]
        ar = ctrl.assigned_replicas if ar is None else ar
        ctrl = ZkPartitionState(ctrl.controller_epoch, lai.leader, lai.leader_epoch,
                                mask_of(lai.isr), ar, ctrl.isr_change_set)
        if elected is not None:
            ctrl = with_fields(ctrl, elr=elected.elr, last_known_elr=elected.last_known_elr)
        elif self.cfg.elr:
            elr, lke = kip966.populate(old, ctrl.isr, self.cfg.min_isr)
            ctrl = with_fields(ctrl, elr=elr, last_known_elr=lke)
        # ControllerBrokerRequestBatch.sendRequestsToBrokers: the LeaderAndIsr requests
        # first, then UpdateMetadata to every broker (when some LeaderAndIsr was added).
        receivers = sorted(set(receivers))
        new = [built(Request, r, LEADER_AND_ISR, ctrl.controller_epoch, lai.leader,
                     lai.leader_epoch, ctrl.isr, ar) for r in receivers]
        if self.cfg.metadata and receivers:
            new += self._update_metadata_for_all(ctrl, lai.leader, lai.leader_epoch, ctrl.isr, ar)
        s = kafka_state(ctrl, state.brokers, self._enqueue(state, new), state.ghost)
        if elected.unclean if elected is not None else lai.leader not in old_live_isr:
            s = self._flag(s, F_UNCLEAN)
        return s

    def _write_isr(self, state: State, lid: int, p: Partition) -> State:
        """The leader's ISR written to ZooKeeper and recorded as an ISR change."""
        ctrl = state.controller
        ctrl = with_fields(ctrl, isr=mask_of(p.isr))
        if self.cfg.elr:
            elr, lke = kip966.populate(state.controller, ctrl.isr, self.cfg.min_isr)
            ctrl = with_fields(ctrl, elr=elr, last_known_elr=lke)
        if self.cfg.metadata:
            ctrl = with_fields(ctrl, isr_change_set=ctrl.isr_change_set | 1 << lid)
        return kafka_state(ctrl, state.brokers, state.channels, state.ghost)

    def _may_join(self, state: State, lid: int) -> bool:
        """Whether an ISR expansion ``core`` decided may be written: the conditional
        ZooKeeper write needs the leader's epoch to be ZooKeeper's (``zkVersion``)."""
        return bool(state.controller.leader_epoch == state.brokers[lid].leader_epoch)

    def _a_elect(self, state: State, out: Out) -> None:
        """``ElectLeader``: the leader in ZooKeeper is dead: ``OfflinePartitionLeaderSelector``
        (clean from the live ISR, else unclean if enabled) elects in a new epoch."""
        ctrl = state.controller
        zl = ctrl.leader
        if zl != NONE and state.brokers[zl].alive:
            return
        if self.cfg.elr:
            s = self._kraft_election(state, zl, False, (self._alive_mask(state),))
            if s is not None and s != state:
                out.append((ELECT_LEADER, s))
            return
        alive = frozenset(members(self._alive_mask(state)))
        selection = offline_partition_leader_selector(
            self._current(state), ctrl.assigned_replicas, alive, self.cfg.unclean_election
        )
        self._apply_election(state, self._recover(state, selection), ELECT_LEADER, out)

    def _log_ends(self, state: State) -> dict[int, LogEnd]:
        """What each live replica reports to KIP-966's unclean recovery (``GetReplicaLogInfo``):
        the epoch of its last record and its LEO."""
        c = self.codec
        return {b: LogEnd(c.epoch(br.log[-1]) if br.log else NONE, len(br.log))
                for b, br in enumerate(state.brokers) if br.alive}

    def _recover(self, state: State, selection: Selection) -> Selection:
        """With ``unclean_recovery`` other than ``first-alive``, an unclean election of
        ``OfflinePartitionLeaderSelector`` (the first live replica) is replaced by KIP-966's
        unclean recovery (the longest log, once enough replicas reported), or dropped while
        it would still wait."""
        if (self.cfg.unclean_recovery == UncleanRecovery.FIRST_ALIVE
                or isinstance(selection, Failure)):
            return selection
        chosen = selection.unwrap()
        ctrl = state.controller
        if chosen.leader_and_isr.leader in [r for r in members(ctrl.isr)
                                            if state.brokers[r].alive]:
            return selection
        reg = kip966.registration(ctrl)
        reg = replace(reg, leader=NO_LEADER, isr=(), elr=())
        elected = kip966.elect(reg, frozenset(self._log_ends(state)),
                               self.cfg.min_isr, True, self.cfg.unclean_recovery,
                               self._log_ends(state))
        if elected is None:
            return Failure(ElectionFailed(ElectionError.NO_REPLICA_ONLINE,
                                          "unclean recovery waits for more replicas"))
        lai = chosen.leader_and_isr
        return Success(replace(chosen, leader_and_isr=LeaderAndIsr(
            elected.leader, lai.leader_epoch, (elected.leader,), lai.zk_version)))

    def _kraft_election(self, state: State, fenced: int, dirty: bool,
                        passes: tuple[int, ...]) -> State | None:
        """With ``elr``: the controller fences the dead leader ``fenced`` and elects as
        KRaft's ``ReplicationControlManager.handleBrokerFenced`` and
        ``PartitionChangeBuilder.electLeader`` do with KIP-966 (``isrlab.spec.kafka.elr``): ISR,
        then ELR, then unclean; ``dirty``: ``fenced`` shut down uncleanly
        (``handleBrokerUncleanShutdown``: it leaves the ELR).  The live replicas are sent
        the outcome.  When nobody may lead, the partition stays offline: ZooKeeper's state
        then names no leader (``NONE``, same epoch: no broker is told), so that the next
        live replica's return elects.  ``passes``: the masks of the brokers each pass may
        elect.  ``None`` past ``max_leader_epoch``."""
        ctrl = state.controller
        if self.cfg.unclean_recovery == UncleanRecovery.FIRST_ALIVE and len(passes) <= 2:
            elected = self._fence_and_elect_first_alive(ctrl, fenced, dirty, passes)
        else:
            # (the replicas' log ends matter only to KIP-966's unclean recovery)
            log_ends = (() if self.cfg.unclean_recovery == UncleanRecovery.FIRST_ALIVE
                        else tuple(self._log_ends(state).items()))
            elected = self._fence_and_elect(
                ctrl, fenced, dirty, tuple([frozenset(members(p)) for p in passes]), log_ends)
        if elected.leader == NONE:
            ctrl = with_fields(ctrl, leader=NONE, isr=elected.isr, elr=elected.elr,
                                 last_known_elr=elected.last_known_elr)
            return kafka_state(ctrl, state.brokers, state.channels, state.ghost)
        lai = LeaderAndIsr(elected.leader, ctrl.leader_epoch + 1, members(elected.isr), 0)
        return self._write_zk(state, lai, members(self._alive_mask(state)), None, elected)

    def _fence_and_elect_first_alive(self, ctrl: ZkPartitionState, fenced: int, dirty: bool,
                                     passes: tuple[int, ...]) -> kip966.Elected:
        """``_fence_and_elect`` with the unclean recovery ``first-alive`` (no log ends) and at
        most two passes, given as masks, cached (``memo.IdCache`` on the controller and one
        int of the rest)."""
        small = ((fenced + 1) | int(dirty) << 3 | len(passes) << 4
                 | (passes[0] if passes else 0) << 6 | (passes[1] if len(passes) > 1 else 0) << 12)
        cache = self._cache_fence_and_elect
        found = cache.find(ctrl, small)
        if found is MISSING:
            found = cache.keep(ctrl, small, self._fence_and_elect(
                ctrl, fenced, dirty, tuple([frozenset(members(p)) for p in passes]), ()))
        return cast(kip966.Elected, found)

    @memoised
    def _fence_and_elect(self, ctrl: ZkPartitionState, fenced: int, dirty: bool,
                         passes: tuple[frozenset[int], ...],
                         log_ends: tuple[tuple[int, LogEnd], ...]) -> kip966.Elected:
        """``isrlab.spec.kafka.elr.fence_and_elect`` with this model's configuration
        (memoised; ``log_ends`` as ``(broker, LogEnd)`` pairs)."""
        cfg = self.cfg
        return kip966.fence_and_elect(ctrl, fenced, dirty, passes, cfg.min_isr,
                                      cfg.unclean_election, cfg.unclean_recovery,
                                      dict(log_ends))

    def _restart_election(self, before: State, after: State,
                          dirty: bool = False) -> State | None:
        """The offline election of a restart: without the restarted broker, else with it;
        the restarted broker is sent the outcome like every live replica.  With ``elr``
        the KRaft election (``_kraft_election``), ``dirty`` when the broker comes back
        from an unclean shutdown."""
        if self.cfg.elr:
            passes = (self._alive_mask(before), self._alive_mask(after))
            return self._kraft_election(after, before.controller.leader, dirty, passes)
        for view in (before, after):
            alive = frozenset(members(self._alive_mask(view)))
            selection = offline_partition_leader_selector(
                self._current(view), view.controller.assigned_replicas, alive,
                self.cfg.unclean_election,
            )
            if isinstance(selection, Failure):
                continue
            e = selection.unwrap()
            receivers = set(e.receivers) | set(members(self._alive_mask(after)))
            return self._write_zk(after, e.leader_and_isr, sorted(receivers))
        return None

    def _unclean_shutdown(self, state: State, b: int) -> State | None:
        """KIP-966's ``ReplicationControlManager.handleBrokerUncleanShutdown`` when ``b``,
        which does not lead, re-registers after a power loss (``elr`` only): it leaves the
        ISR and the ELR, whose log may have lost acknowledged records.  An ISR change under
        a live leader is a controller write (new leader epoch, sent to the live replicas,
        as ``RemoveDeadFromIsr``); otherwise only the controller's state changes.  ``None``
        past ``max_leader_epoch``."""
        ctrl = state.controller
        if not (ctrl.isr | ctrl.elr) >> b & 1:
            return state
        isr, elr, lke = kip966.unclean_shutdown_change(ctrl, b, self.cfg.min_isr)
        zl = ctrl.leader
        if isr != ctrl.isr and zl != NONE and state.brokers[zl].alive:
            lai = LeaderAndIsr(zl, ctrl.leader_epoch + 1, members(isr), 0)
            elected = kip966.Elected(zl, isr, elr, lke, False)
            return self._write_zk(state, lai, members(self._alive_mask(state)), None, elected)
        ctrl = with_fields(ctrl, isr=isr, elr=elr, last_known_elr=lke)
        return kafka_state(ctrl, state.brokers, state.channels, state.ghost)

    def _a_remove_dead_from_isr(self, state: State, out: Out) -> None:
        """``RemoveDeadFromIsr``: the controller moves dead followers to OfflineReplica and
        removes them from the ISR in ZooKeeper (new epoch), telling the live replicas."""
        ctrl = state.controller
        zl = ctrl.leader
        if zl == NONE or not state.brokers[zl].alive:
            return
        dead = [r for r in members(ctrl.isr) if r != zl and not state.brokers[r].alive]
        if not dead:
            return
        isr = tuple(r for r in members(ctrl.isr) if r not in dead)
        lai = LeaderAndIsr(zl, ctrl.leader_epoch + 1, isr, 0)
        live = [r for r in ctrl.assigned_replicas if state.brokers[r].alive]
        s = self._write_zk(state, lai, live)
        if s is not None:
            out.append((REMOVE_DEAD_FROM_ISR, s))

    def _a_preferred_election(self, state: State, out: Out) -> None:
        """``PreferredElection``: ``PreferredReplicaPartitionLeaderSelector`` gives leadership
        back to the first assigned replica when it is alive and in the ISR."""
        ctrl = state.controller
        alive = frozenset(members(self._alive_mask(state)))
        selection = preferred_replica_partition_leader_selector(
            self._current(state), ctrl.assigned_replicas, alive
        )
        self._apply_election(state, selection, PREFERRED_ELECTION, out)

    def _a_reassign(self, state: State, out: Out) -> None:
        """``Reassign(order)``: a new preference order of the same replicas, whose leader is
        elected by ``ReassignedPartitionLeaderSelector`` when it differs from the current."""
        ctrl = state.controller
        for order, election in self._reassignments(
                self._current(state), ctrl.assigned_replicas, self._alive_mask(state)):
            s = self._write_zk(state, election.leader_and_isr, election.receivers, order)
            if s is not None:
                out.append((reassign(order), s))

    @memoised
    def _reassignments(self, current: LeaderAndIsr, assigned_replicas: tuple[int, ...],
                       alive_mask: int) -> tuple[tuple[tuple[int, ...], Election], ...]:
        """Each new preference order with the election that changes the leader, in
        ``_permutations`` order (``_a_reassign``; memoised: the selector is a pure function
        of the controller's LeaderAndIsr, the order and the live brokers)."""
        alive = frozenset(members(alive_mask))
        found = []
        for order in _permutations(self.n):
            if order == assigned_replicas:
                continue
            selection = reassigned_partition_leader_selector(current, order, alive)
            if isinstance(selection, Success):
                election = selection.unwrap()
                if election.leader_and_isr.leader != current.leader:
                    found.append((order, election))
        return tuple(found)

    def _a_controller_failover(self, state: State, out: Out) -> None:
        """``ControllerFailover``: a new controller (epoch + 1) resends the ZooKeeper state to
        every live replica; requests of the old controller still in flight are now stale."""
        ctrl = state.controller
        if ctrl.controller_epoch >= self.cfg.max_controller_epoch:
            return
        ctrl = with_fields(ctrl, controller_epoch=ctrl.controller_epoch + 1)
        new = [built(Request, r, LEADER_AND_ISR, ctrl.controller_epoch, ctrl.leader,
                     ctrl.leader_epoch, ctrl.isr, ctrl.assigned_replicas)
               for r in ctrl.assigned_replicas if state.brokers[r].alive]
        msgs = self._enqueue(state, new)
        out.append((CONTROLLER_FAILOVER, kafka_state(ctrl, state.brokers, msgs, state.ghost)))

    def _a_propagate_isr_changes(self, state: State, out: Out) -> None:
        """``PropagateIsrChanges``: the ISR change notification reaches the controller, which
        sends UpdateMetadata with the ZooKeeper state to every broker."""
        ctrl = state.controller
        if not ctrl.isr_change_set:
            return
        msgs = self._enqueue(state, self._update_metadata_for_all(
            ctrl, ctrl.leader, ctrl.leader_epoch, ctrl.isr, ctrl.assigned_replicas))
        ctrl = with_fields(ctrl, isr_change_set=0)
        out.append((PROPAGATE_ISR_CHANGES, kafka_state(ctrl, state.brokers, msgs, state.ghost)))


@cache
def _permutations(n: int) -> tuple[tuple[int, ...], ...]:
    return tuple(permutations(range(n)))
