"""A small cluster composed only of core functions, driven by hypothesis' state machine.

Three brokers host one partition.  A controller elects leaders with the offline selector
(clean or unclean) and its LeaderAndIsr requests may be lost; brokers handle them with
``become_leader_or_follower``; followers fetch; leaders shrink their ISR on a clock and
write ISR changes to "ZooKeeper" conditionally on ``zk_version``; brokers crash and
restart with their logs and checkpointed HWs.  In every reachable state each broker's
view satisfies the per-partition properties and no broker's epochs go backwards.

This checks that the functions compose (what the ``kafka`` cluster model does at scale);
it does not check the cross-replica properties, which the old protocols violate.
"""

from __future__ import annotations

from dataclasses import replace

from hypothesis import event, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, invariant, precondition, rule
from returns.pipeline import is_successful

from isrlab.core.errors import Errors
from isrlab.core.invariants import epochs_did_not_decrease, partition_violations
from isrlab.core.isr import maybe_shrink_isr, read_from_local_log, update_follower_fetch
from isrlab.core.metadata_cache import Broker, MetadataSnapshot
from isrlab.core.produce import ACKS_LEADER, append_records_to_leader, process_partition_data
from isrlab.core.replica_manager import (
    LeaderAndIsrRequest,
    ReplicaManager,
    become_leader_or_follower,
    checkpoint_high_watermarks,
    get_partition,
    put_partition,
    restart_replica_manager,
)
from isrlab.core.selectors import offline_partition_leader_selector
from isrlab.core.state import (
    LeaderAndIsr,
    Partition,
    PartitionState,
    TopicPartition,
    check_partition,
    is_leader,
)
from isrlab.core.truncation import Log
from isrlab.spec.kafka.truncation_versions import TRUNCATION_RULES
from tests.core.helpers import TP

BROKERS = (0, 1, 2)
LAG_MS = 1_000


class Cluster(RuleBasedStateMachine):
    """One partition on three brokers, composed from core."""

    def __init__(self) -> None:
        super().__init__()
        self.managers = {b: ReplicaManager(b) for b in BROKERS}
        self.alive = set(BROKERS)
        self.zk = LeaderAndIsr(-1, 0, BROKERS, 0)  # a new partition, no leader yet
        self.controller_epoch = 1
        self.now = 0
        self.next_id = 0
        self.rule = TRUNCATION_RULES["truncate-to-hw"]
        self.history: dict[int, Partition] = {}

    def partition(self, broker: int) -> Partition | None:
        return get_partition(self.managers[broker], TP)

    @rule(rule_name=st.sampled_from(sorted(TRUNCATION_RULES)))
    @precondition(lambda self: self.now == 0)
    def choose_truncation_rule(self, rule_name: str) -> None:
        self.rule = TRUNCATION_RULES[rule_name]

    @rule(unclean=st.booleans(), lost=st.frozensets(st.sampled_from(BROKERS), max_size=1))
    def elect(self, unclean: bool, lost: frozenset[int]) -> None:
        election = offline_partition_leader_selector(
            self.zk, BROKERS, frozenset(self.alive), unclean)
        if not is_successful(election):
            event("election failed")
            return
        event("elected")
        self.zk = election.unwrap().leader_and_isr
        state = PartitionState(self.controller_epoch, self.zk.leader, self.zk.leader_epoch,
                               self.zk.isr, self.zk.zk_version, BROKERS)
        metadata = MetadataSnapshot(alive_brokers=tuple(Broker(b, ()) for b in sorted(self.alive)))
        leader = self.partition(self.zk.leader)
        leader_log: Log = leader.log if leader is not None else ()

        def leader_logs(tp: TopicPartition, leader_id: int) -> Log:
            return leader_log

        for b in election.unwrap().receivers:
            if b in lost:
                continue  # the request is lost
            result = become_leader_or_follower(
                self.managers[b], LeaderAndIsrRequest(9, self.controller_epoch, ((TP, state),)),
                metadata, self.now, self.rule, leader_logs)
            assert is_successful(result), result
            self.managers[b] = result.unwrap().manager

    @rule(count=st.integers(1, 2))
    def produce(self, count: int) -> None:
        for b in self.alive:
            p = self.partition(b)
            if p is not None and is_leader(p):
                ids = tuple(range(self.next_id, self.next_id + count))
                self.next_id += count
                appended = append_records_to_leader(p, ids, ACKS_LEADER)
                assert is_successful(appended)
                self.managers[b] = put_partition(self.managers[b], appended.unwrap().partition)

    @rule(follower=st.sampled_from(BROKERS), limit=st.integers(1, 3))
    def fetch(self, follower: int, limit: int) -> None:
        f = self.partition(follower)
        if follower not in self.alive or f is None or f.leader is None or is_leader(f):
            return
        leader_id = f.leader
        leader = self.partition(leader_id)
        if leader_id not in self.alive or leader is None or not is_leader(leader):
            return
        read = read_from_local_log(leader, len(f.log), f.log_start_offset, self.now, limit)
        assert is_successful(read)
        if read.unwrap().error is not Errors.NONE:
            return
        data = read.unwrap()
        grown = process_partition_data(f, len(f.log), data.records, data.high_watermark,
                                       data.leader_log_start_offset)
        assert is_successful(grown)
        self.managers[follower] = put_partition(self.managers[follower], grown.unwrap())
        update = update_follower_fetch(leader, follower, data)
        assert is_successful(update)
        event(f"fetch (isr changed: {update.unwrap().isr_changed})")
        self.commit_isr(leader_id, leader, update.unwrap())

    def commit_isr(self, broker: int, before: Partition, update: object) -> None:
        new = getattr(update, "partition")  # noqa: B009
        write = getattr(update, "zk_write")  # noqa: B009
        if write is not None:
            if write.zk_version - 1 != self.zk.zk_version:
                event("conditional ZooKeeper write failed")
                return  # conditional write failed: Kafka keeps the old ISR
            self.zk = write
        self.managers[broker] = put_partition(self.managers[broker], new)

    @rule(ms=st.integers(1, 2 * LAG_MS))
    def tick_and_shrink(self, ms: int) -> None:
        self.now += ms
        for b in sorted(self.alive):
            p = self.partition(b)
            if p is not None and is_leader(p):
                update = maybe_shrink_isr(p, self.now, LAG_MS)
                assert is_successful(update)
                event(f"shrink (isr changed: {update.unwrap().isr_changed})")
                self.commit_isr(b, p, update.unwrap())

    @rule(broker=st.sampled_from(BROKERS))
    def crash(self, broker: int) -> None:
        self.alive.discard(broker)

    @rule(broker=st.sampled_from(BROKERS))
    def restart(self, broker: int) -> None:
        if broker in self.alive:
            return
        manager = self.managers[broker]
        hws = dict(checkpoint_high_watermarks(manager))
        hosted = [(p.tp, p.log, hws.get(p.tp, 0)) for p in manager.partitions if p.log_created]
        restarted = restart_replica_manager(broker, hosted)
        assert is_successful(restarted)
        self.managers[broker] = restarted.unwrap()
        self.history.pop(broker, None)  # a restarted broker forgets its epochs (Kafka too)
        self.alive.add(broker)

    @invariant()
    def every_broker_view_is_well_formed(self) -> None:
        for b in BROKERS:
            p = self.partition(b)
            if p is None:
                continue
            assert is_successful(check_partition(p)), check_partition(p)
            assert partition_violations(p) == ()

    @invariant()
    def no_broker_moves_its_epochs_back(self) -> None:
        for b in BROKERS:
            p = self.partition(b)
            if p is None:
                continue
            if b in self.history:
                assert epochs_did_not_decrease(self.history[b], p)
            self.history[b] = p

    @invariant()
    def the_zookeeper_isr_holds_the_zookeeper_leader(self) -> None:
        if self.zk.leader >= 0:
            assert self.zk.leader in self.zk.isr
            assert set(self.zk.isr) <= set(BROKERS)


Cluster.TestCase.settings = settings(max_examples=100, stateful_step_count=50, deadline=None)
test_a_cluster_composed_of_core_keeps_every_broker_view_well_formed = Cluster.TestCase


def test_a_restarted_broker_view_is_fresh_but_keeps_its_log() -> None:
    manager = put_partition(ReplicaManager(1), replace(Partition(TP, 1), log_created=True))
    restarted = restart_replica_manager(1, [(TP, (), 0)])
    assert is_successful(restarted)
    assert get_partition(restarted.unwrap(), TP) == get_partition(manager, TP)
