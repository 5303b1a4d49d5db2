"""becomeLeaderOrFollower: every outcome docs/protocol.md lists; broker-level ISR steps."""

from __future__ import annotations

from dataclasses import replace

from isrlab.core.errors import Errors, Problem
from isrlab.core.isr import read_from_local_log
from isrlab.core.metadata_cache import Broker, MetadataSnapshot, UpdateMetadataRequest
from isrlab.core.partition import make_leader, truncate_by_leader_epoch_kip279
from isrlab.core.replica_manager import (
    FetcherEntry,
    LeaderAndIsrRequest,
    ReplicaManager,
    become_leader_or_follower,
    checkpoint_high_watermarks,
    get_partition,
    mark_partition_offline,
    maybe_propagate_isr_changes_of,
    maybe_shrink_isr_all,
    maybe_update_metadata_cache,
    put_partition,
    restart_replica_manager,
    update_follower_log_read_results,
)
from isrlab.core.state import Partition, PartitionState, RemoteReplica, TopicPartition, records
from isrlab.core.truncation import Log, Record
from tests.core.helpers import TP, err, ok, state

TP1 = TopicPartition("orders", 1)
ALIVE = MetadataSnapshot(alive_brokers=tuple(Broker(i, ()) for i in (0, 1, 2)))


def request(*states: tuple[TopicPartition, PartitionState], epoch: int = 1) -> LeaderAndIsrRequest:
    return LeaderAndIsrRequest(controller_id=9, controller_epoch=epoch, partition_states=states)


def handle(manager: ReplicaManager, req: LeaderAndIsrRequest, now_ms: int = 0,
           metadata: MetadataSnapshot = ALIVE, authorized: bool = True) -> tuple[
               ReplicaManager, dict[TopicPartition, Errors], Errors]:
    result = ok(become_leader_or_follower(manager, req, metadata, now_ms, authorized=authorized))
    return result.manager, dict(result.response.partition_errors), result.response.error


def test_an_unauthorised_request_fails_every_partition_with_cluster_authorization_failed() -> None:
    manager = ReplicaManager(0)
    after, errors, top = handle(manager, request((TP, state(0)), (TP1, state(1))),
                                authorized=False)
    assert top is Errors.CLUSTER_AUTHORIZATION_FAILED
    assert errors == {TP: Errors.CLUSTER_AUTHORIZATION_FAILED,
                      TP1: Errors.CLUSTER_AUTHORIZATION_FAILED}
    assert after is manager


def test_a_request_from_an_older_controller_is_rejected_whole_and_changes_nothing() -> None:
    manager = ReplicaManager(0, controller_epoch=5)
    after, errors, top = handle(manager, request((TP, state(0)), epoch=4))
    assert top is Errors.STALE_CONTROLLER_EPOCH
    assert errors == {}
    assert after is manager


def test_an_accepted_request_adopts_its_controller_epoch_and_starts_hw_checkpoints() -> None:
    after, errors, top = handle(ReplicaManager(0, controller_epoch=5),
                                request((TP, state(0)), epoch=6))
    assert top is Errors.NONE
    assert errors == {TP: Errors.NONE}
    assert after.controller_epoch == 6
    assert after.hw_checkpoint_thread_started


def test_a_partition_in_an_offline_log_dir_answers_kafka_storage_error() -> None:
    manager = ReplicaManager(0, offline=frozenset({TP}))
    after, errors, _ = handle(manager, request((TP, state(0)), (TP1, state(0))))
    assert errors == {TP: Errors.KAFKA_STORAGE_ERROR, TP1: Errors.NONE}
    assert get_partition(after, TP) is None
    assert get_partition(after, TP1) is not None


def test_a_stale_leader_epoch_is_ignored_with_stale_controller_epoch() -> None:
    manager, _, _ = handle(ReplicaManager(0), request((TP, state(0, leader_epoch=3))))
    after, errors, top = handle(manager, request((TP, state(1, (1, 0), leader_epoch=3))))
    assert top is Errors.NONE
    assert errors == {TP: Errors.STALE_CONTROLLER_EPOCH}
    assert get_partition(after, TP) == get_partition(manager, TP)


def test_a_broker_not_in_the_replicas_answers_unknown_topic_or_partition() -> None:
    after, errors, _ = handle(ReplicaManager(5), request((TP, state(0))))
    assert errors == {TP: Errors.UNKNOWN_TOPIC_OR_PARTITION}
    created = get_partition(after, TP)
    assert created is not None and not created.log_created  # created, never initialised


def test_a_follower_whose_leader_is_not_alive_creates_its_log_but_does_not_follow() -> None:
    metadata = MetadataSnapshot(alive_brokers=(Broker(0, ()),))
    after, errors, _ = handle(ReplicaManager(0), request((TP, state(1, (1, 0)))),
                              metadata=metadata)
    assert errors == {TP: Errors.NONE}
    partition = get_partition(after, TP)
    assert partition is not None and partition.log_created
    assert partition.leader is None
    assert after.fetchers == ()


def test_leaders_and_followers_are_made_and_fetchers_follow_new_leaders() -> None:
    req = request((TP, state(0)), (TP1, state(1, (1, 0, 2))))
    result = ok(become_leader_or_follower(ReplicaManager(0), req, ALIVE, 0))
    assert result.became_leaders == (TP,)
    assert result.became_followers == (TP1,)
    assert result.manager.fetchers == (FetcherEntry(TP1, 1, 0),)
    led = get_partition(result.manager, TP)
    assert led is not None and led.leader == 0 and led.isr == {0, 1, 2}


def test_becoming_leader_stops_fetching_that_partition() -> None:
    follower, _, _ = handle(ReplicaManager(0), request((TP, state(1, (1, 0)))))
    assert follower.fetchers == (FetcherEntry(TP, 1, 0),)
    leader, _, _ = handle(follower, request((TP, state(0, (0, 1), leader_epoch=2))))
    assert leader.fetchers == ()


def test_a_shutting_down_broker_becomes_follower_without_starting_a_fetcher() -> None:
    after, _, _ = handle(ReplicaManager(0, shutting_down=True), request((TP, state(1, (1, 0)))))
    assert after.fetchers == ()
    partition = get_partition(after, TP)
    assert partition is not None and partition.leader == 1


def test_a_follower_request_for_an_unchanged_leader_reports_no_role_change() -> None:
    manager, _, _ = handle(ReplicaManager(0), request((TP, state(1, (1, 0)))))
    result = ok(become_leader_or_follower(
        manager, request((TP, state(1, (1, 0), leader_epoch=2))), ALIVE, 0))
    assert result.became_followers == ()
    partition = get_partition(result.manager, TP)
    assert partition is not None and partition.leader_epoch == 2


def leader_with(log: Log) -> Partition:
    """Broker 0 leads TP (replicas 0, 1) with ``log`` and HW 0 (follower 1 never fetched)."""
    made = make_leader(Partition(TP, 0, log=log, log_created=True), state(0, (0, 1), (0, 1)), 0)
    return ok(made).partition


def test_the_truncation_rule_and_leader_logs_reach_make_follower() -> None:
    mine: Log = (Record(1, 1), Record(2, 1), Record(3, 1))
    leader_log: Log = (Record(1, 1), Record(7, 2))
    base = put_partition(ReplicaManager(0), leader_with(mine))
    result = ok(become_leader_or_follower(
        base, request((TP, state(1, (1, 0), (0, 1), leader_epoch=2))), ALIVE, 0,
        rule=truncate_by_leader_epoch_kip279, leader_logs=lambda tp, leader: leader_log))
    partition = get_partition(result.manager, TP)
    assert partition is not None and partition.log == mine[:1]
    assert result.manager.fetchers == (FetcherEntry(TP, 1, 1),)


def test_the_default_rule_truncates_a_demoted_leader_to_its_high_watermark() -> None:
    base = put_partition(ReplicaManager(0), leader_with(records((1, 2, 3), 1)))
    result = ok(become_leader_or_follower(
        base, request((TP, state(1, (1, 0), (0, 1), leader_epoch=2))), ALIVE, 0))
    partition = get_partition(result.manager, TP)
    assert partition is not None and partition.log == ()


def test_bad_requests_are_rejected_as_values() -> None:
    bad_isr = PartitionState(1, 0, 1, (0, 7), 1, (0, 1))
    assert err(become_leader_or_follower(ReplicaManager(0), request((TP, bad_isr)), ALIVE, 0)
               ).problem is Problem.ISR_NOT_SUBSET_OF_AR
    twice = request((TP, state(0)), (TP, state(0)))
    assert err(become_leader_or_follower(ReplicaManager(0), twice, ALIVE, 0)
               ).problem is Problem.DUPLICATE_PARTITION
    assert err(become_leader_or_follower(ReplicaManager(0), request(epoch=-1), ALIVE, 0)
               ).problem is Problem.NEGATIVE_VALUE
    broken = put_partition(ReplicaManager(0), replace(leader_with(()), high_watermark=9))
    assert err(become_leader_or_follower(broken, request(), ALIVE, 0)
               ).problem is Problem.HW_ABOVE_LEO


def test_a_follower_fetch_that_expands_the_isr_is_recorded_for_propagation() -> None:
    leader = replace(leader_with(records((1, 2), 1)), isr=frozenset({0}))
    manager = put_partition(ReplicaManager(0), leader)
    read = ok(read_from_local_log(leader, 2, 0, 100))
    update = ok(update_follower_log_read_results(manager, TP, 1, read, 100))
    assert update.update.isr_changed
    assert update.manager.isr_changes.isr_change_set == {TP}
    assert update.manager.isr_changes.last_isr_change_ms == 100
    assert err(update_follower_log_read_results(manager, TP1, 1, read, 100)
               ).problem is Problem.NOT_A_REPLICA


def test_the_isr_expiration_task_shrinks_every_led_partition_and_records_it() -> None:
    manager, _, _ = handle(ReplicaManager(0), request((TP, state(0)), (TP1, state(1, (1, 0)))))
    after = ok(maybe_shrink_isr_all(manager, 20_000, 10_000))
    led = get_partition(after, TP)
    assert led is not None and led.isr == {0}
    assert after.isr_changes.isr_change_set == {TP}
    assert err(maybe_shrink_isr_all(manager, -5, 10_000)).problem is Problem.NEGATIVE_VALUE
    propagated, note = maybe_propagate_isr_changes_of(after, 25_001)
    assert note == frozenset({TP})
    assert propagated.isr_changes.isr_change_set == frozenset()
    assert maybe_propagate_isr_changes_of(after, 20_001)[1] is None


def test_the_hw_checkpoint_covers_partitions_with_a_local_log() -> None:
    manager, _, _ = handle(ReplicaManager(5), request((TP, state(0))))  # created, no log
    manager = put_partition(manager, replace(leader_with(records((1,), 1)), tp=TP1))
    assert checkpoint_high_watermarks(manager) == ((TP1, 0),)


def test_a_failed_log_dir_takes_the_partition_offline_and_later_requests_fail() -> None:
    manager, _, _ = handle(ReplicaManager(0), request((TP, state(1, (1, 0)))))
    offline = mark_partition_offline(manager, TP)
    assert get_partition(offline, TP) is None
    assert offline.fetchers == ()
    _, errors, _ = handle(offline, request((TP, state(0, leader_epoch=2))))
    assert errors == {TP: Errors.KAFKA_STORAGE_ERROR}


def test_a_restarted_broker_keeps_its_logs_and_checkpointed_hws_but_no_roles() -> None:
    log = records((1, 2, 3), 1)
    manager = ok(restart_replica_manager(1, [(TP, log, 2), (TP1, log, 9)]))
    p0, p1 = manager.partitions
    assert (p0.log, p0.high_watermark, p0.leader, p0.leader_epoch) == (log, 2, None, -1)
    assert p1.high_watermark == 3  # a checkpoint past the recovered LEO is capped
    assert manager.controller_epoch == 0 and manager.fetchers == ()
    follows, errors, _ = handle(manager, request((TP, state(0, (0, 1), (0, 1)))))
    assert errors == {TP: Errors.NONE}
    followed = get_partition(follows, TP)
    assert followed is not None and followed.log == log[:2]  # truncated to the checkpointed HW
    assert err(restart_replica_manager(1, [(TP, log, -1)])).problem is Problem.NEGATIVE_VALUE
    assert err(restart_replica_manager(1, [(TP, log, 1), (TP, log, 1)])
               ).problem is Problem.DUPLICATE_PARTITION


def test_update_metadata_from_an_older_controller_is_refused_as_stale() -> None:
    umr = UpdateMetadataRequest(9, 3, (), (Broker(0, ()),))
    fresh = ok(maybe_update_metadata_cache(ReplicaManager(0, controller_epoch=2),
                                           MetadataSnapshot(), umr))
    assert fresh.error is Errors.NONE
    assert fresh.manager.controller_epoch == 3
    assert fresh.snapshot.controller_id == 9
    stale = ok(maybe_update_metadata_cache(ReplicaManager(0, controller_epoch=4),
                                           MetadataSnapshot(), umr))
    assert stale.error is Errors.STALE_CONTROLLER_EPOCH
    assert stale.snapshot == MetadataSnapshot()
    negative = replace(umr, controller_epoch=-1)
    assert err(maybe_update_metadata_cache(ReplicaManager(0), MetadataSnapshot(), negative)
               ).problem is Problem.NEGATIVE_VALUE


def test_a_leaderless_state_only_creates_the_log_even_if_metadata_lists_broker_minus_one() -> None:
    leaderless = PartitionState(1, -1, 1, (), 1, (0, 1))
    odd = MetadataSnapshot(alive_brokers=(Broker(-1, ()), Broker(0, ())))
    after, errors, _ = handle(ReplicaManager(0), request((TP, leaderless)), metadata=odd)
    assert errors == {TP: Errors.NONE}
    partition = get_partition(after, TP)
    assert partition is not None and partition.log_created and partition.leader is None


def test_the_hw_lag_reaches_make_leader_and_a_negative_one_is_rejected() -> None:
    # a partition kept by its leader in a new epoch: follower 1 (out of the new ISR) was
    # caught up at t=0, its LEO still unknown; within the lag it holds the HW back (KAFKA-4485)
    led = replace(leader_with(records((1, 2), 1)), high_watermark=0)
    base = put_partition(ReplicaManager(0), led)
    req = request((TP, state(0, (0,), (0, 1), leader_epoch=2)))
    older = get_partition(ok(become_leader_or_follower(base, req, ALIVE, 5)).manager, TP)
    assert older is not None and older.high_watermark == 2
    held = ok(become_leader_or_follower(base, req, ALIVE, 5, hw_lag_ms=10))
    newer = get_partition(held.manager, TP)
    assert newer is not None and newer.high_watermark == 0
    assert err(become_leader_or_follower(base, req, ALIVE, 5, hw_lag_ms=-1)).problem is (
        Problem.NEGATIVE_VALUE)


def test_the_broker_level_isr_steps_pass_kafka_4485s_rules_on() -> None:
    from tests.core.helpers import append, in_sync_leader

    # follower 2 left the ISR but caught up at t=0; follower 1 fetches the new record
    led = append(replace(in_sync_leader(2, now_ms=0), isr=frozenset({0, 1})), 1, first_id=7)
    manager = put_partition(ReplicaManager(0), led)
    read = ok(read_from_local_log(led, 3, 0, 5))
    hw = {}
    for lag in (None, 10):
        done = ok(update_follower_log_read_results(manager, TP, 1, read, 5, hw_lag_ms=lag))
        hw[lag] = done.update.partition.high_watermark
    assert hw == {None: 3, 10: 2}  # within the lag, follower 2 (LEO 2) holds the HW at 2
    # four replicas, LEO 3: follower 1 at 3 (caught up at 5); follower 2 (ISR, LEO 2) last
    # caught up at 0; follower 3 (outside the ISR, LEO 2) caught up at 4 by the previous-
    # fetch rule, still below the HW it needs to join
    four = append(in_sync_leader(2, replicas=(0, 1, 2, 3), now_ms=0), 1, first_id=9)
    four = replace(four, isr=frozenset({0, 1, 2}), remotes=(
        RemoteReplica(1, 3, 0, 5, 3, 5), RemoteReplica(2, 2, 0, 0, 2, 0),
        RemoteReplica(3, 2, 0, 4, 2, 4)))
    base = put_partition(ReplicaManager(0), four)
    after = {}
    for kafka_4485 in (False, True):
        shrunk = get_partition(ok(maybe_shrink_isr_all(base, 11, 10, kafka_4485)), TP)
        assert shrunk is not None and shrunk.isr == {0, 1}
        after[kafka_4485] = shrunk.high_watermark
    assert after == {False: 3, True: 2}  # follower 3, caught up at 4, holds the HW at 2
