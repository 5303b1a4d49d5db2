"""KRaft's metadata log and image: replay, one delta per commit, localChanges, makeLeader's flags.

The expected values come from Kafka's code as cited: ``PartitionRegistration.merge`` (epochs),
``MetadataLoader.handleCommit`` (one delta per commit), ``TopicDelta.localChanges`` (3.7.0) and
``Partition.makeLeader`` / ``Replica.resetReplicaState`` (3.7.0) -- the last two settle issue 36's
KRaft question: a broker that leads before and after a delta that skipped a leader epoch is
sent to ``makeLeader`` with ``isNewLeader`` false, and keeps its followers' LEOs.
"""

from __future__ import annotations

from dataclasses import replace

from isrlab.core.elr import LeaderRecoveryState, PartitionRegistration
from isrlab.core.errors import Problem
from isrlab.core.kraft_metadata import (
    BrokerRegistration,
    BrokerRegistrationChangeRecord,
    FencingChange,
    MetadataImage,
    MetadataRecord,
    MetadataUpdate,
    PartitionChangeRecord,
    PartitionRecord,
    RegisterBrokerRecord,
    active_brokers,
    apply_commit,
    broker,
    is_active,
    local_changes,
    make_leader_flags,
    make_leader_kraft,
    merge,
    partition,
    replay,
    skipped_leader_epochs,
)
from isrlab.core.partition_change_builder import (
    BuilderConfig,
    Election,
    build,
    generate_leader_and_isr_update,
)
from isrlab.core.state import (
    NO_LEADER,
    UNKNOWN_OFFSET,
    Partition,
    TopicPartition,
    records,
    remote,
)
from isrlab.core.truncation import kip279_truncation_offset
from tests.core.helpers import TP, append, err, fetch, leader_partition, ok

OTHER = TopicPartition("orders", 1)
REG = PartitionRegistration((0, 1, 2), (0, 1, 2), 0, leader_epoch=5, partition_epoch=9)


def _image(*records: MetadataRecord) -> MetadataImage:
    image = MetadataImage()
    for record in records:
        image = ok(replay(image, record))
    return image


BROKERS = tuple(RegisterBrokerRecord(b, 100 + b, 10 + b, fenced=False) for b in (0, 1, 2))


def test_merge_bumps_the_partition_epoch_always_and_the_leader_epoch_with_the_leader_field(
) -> None:
    isr_only = merge(REG, PartitionChangeRecord(TP, isr=(0, 1)))
    assert (isr_only.isr, isr_only.leader_epoch, isr_only.partition_epoch) == ((0, 1), 5, 10)
    same_leader = merge(REG, PartitionChangeRecord(TP, leader=0))
    assert (same_leader.leader, same_leader.leader_epoch, same_leader.partition_epoch) == (
        0, 6, 10)
    offline = merge(REG, PartitionChangeRecord(
        TP, leader=NO_LEADER, elr=(1,), last_known_elr=(0,),
        leader_recovery_state=LeaderRecoveryState.RECOVERING))
    assert (offline.leader, offline.leader_epoch, offline.elr, offline.last_known_elr,
            offline.leader_recovery_state) == (NO_LEADER, 6, (1,), (0,),
                                               LeaderRecoveryState.RECOVERING)


def test_replay_registers_fences_and_unfences_brokers() -> None:
    image = _image(*BROKERS, PartitionRecord(TP, REG))
    assert image.offset == 3 and active_brokers(image) == frozenset({0, 1, 2})
    fenced = ok(replay(image, BrokerRegistrationChangeRecord(1, 11, FencingChange.FENCE)))
    assert not is_active(fenced, 1) and fenced.offset == 4
    # a change for another broker epoch is not applied (the controller never writes one)
    stale = ok(replay(fenced, BrokerRegistrationChangeRecord(1, 99, FencingChange.UNFENCE)))
    assert not is_active(stale, 1)
    back = ok(replay(fenced, BrokerRegistrationChangeRecord(1, 11, FencingChange.UNFENCE)))
    assert is_active(back, 1)
    shutting = ok(replay(back, BrokerRegistrationChangeRecord(2, 12, in_controlled_shutdown=True)))
    reg2 = broker(shutting, 2)
    assert reg2 is not None and reg2.in_controlled_shutdown and not reg2.fenced
    assert not is_active(shutting, 2) and not is_active(shutting, 7)
    # a new incarnation replaces the registration, fenced, with its new epoch
    again = ok(replay(shutting, RegisterBrokerRecord(2, 202, 40)))
    assert broker(again, 2) == BrokerRegistration(2, 202, 40, True, False)


def test_replay_rejects_bad_records() -> None:
    image = _image(*BROKERS)
    assert err(replay(image, PartitionChangeRecord(TP, isr=(0,)))).problem is (
        Problem.NOT_A_REPLICA)
    with_tp = ok(replay(image, PartitionRecord(TP, REG)))
    assert err(replay(with_tp, PartitionChangeRecord(TP, isr=(0, 7)))).problem is (
        Problem.ISR_NOT_SUBSET_OF_AR)
    assert err(replay(image, RegisterBrokerRecord(-1, 1, 1))).problem is Problem.NEGATIVE_VALUE
    assert err(apply_commit(image, [PartitionChangeRecord(TP, leader=1)])).problem is (
        Problem.NOT_A_REPLICA)


def test_one_commit_is_one_delta_and_may_skip_leader_epochs() -> None:
    # Two leader changes in one commit: 0 -> 1 (epoch 6), 1 -> 0 (epoch 7).  The broker's
    # publishers see only the image before (epoch 5) and after (epoch 7).
    image = _image(*BROKERS, PartitionRecord(TP, REG))
    update = ok(apply_commit(image, [PartitionChangeRecord(TP, leader=1, isr=(1, 2)),
                                     PartitionChangeRecord(TP, leader=0, isr=(0, 1, 2))]))
    after = partition(update.after, TP)
    assert after is not None and (after.leader, after.leader_epoch) == (0, 7)
    assert update.after.offset == image.offset + 2
    assert skipped_leader_epochs(update, TP) == 1
    assert skipped_leader_epochs(update, OTHER) == 0
    assert ok(apply_commit(image, [])) == MetadataUpdate(image, image)


def test_local_changes_sends_a_broker_that_leads_before_and_after_to_make_leader() -> None:
    # TopicDelta.localChanges (3.7.0): leader == brokerId and the partition epoch changed.
    image = _image(*BROKERS, PartitionRecord(TP, REG), PartitionRecord(
        OTHER, PartitionRegistration((1, 2), (1, 2), 1)))
    update = ok(apply_commit(image, [PartitionChangeRecord(TP, leader=1),
                                     PartitionChangeRecord(TP, leader=0)]))
    changes = local_changes(update, 0)
    assert [tp for tp, _ in changes.leaders] == [TP]
    assert changes.followers == () and changes.deletes == ()
    assert [tp for tp, _ in local_changes(update, 1).followers] == [TP]
    # OTHER did not change: no entry for broker 1 or 2
    assert all(tp != OTHER for tp, _ in local_changes(update, 1).leaders)


def test_local_changes_deletes_a_partition_that_no_longer_lists_the_broker() -> None:
    image = _image(*BROKERS, PartitionRecord(TP, REG))
    recreated = ok(apply_commit(image, [PartitionRecord(
        TP, PartitionRegistration((1, 2), (1, 2), 1, 6, 10))]))
    assert local_changes(recreated, 0).deletes == (TP,)
    assert local_changes(recreated, 2).followers[0][0] == TP
    fresh = ok(apply_commit(MetadataImage(), [PartitionRecord(TP, REG)]))
    assert [tp for tp, _ in local_changes(fresh, 0).leaders] == [TP]
    assert local_changes(fresh, 5) == local_changes(fresh, 6)


def _leader_with_followers() -> Partition:
    """Broker 0 leads (epoch 1, partition epoch 1); follower 1 fetched to 3, follower 2 to 1."""
    p = append(leader_partition(), 3)
    return fetch(fetch(p, 1, 3, 10), 2, 1, 10)


def test_make_leader_with_a_skipped_epoch_keeps_the_followers_leos() -> None:
    # Issue 36 in KRaft: Partition.makeLeader computes isNewLeader = !isLeader -- false for a
    # broker whose Partition still says it leads -- and isNewLeaderEpoch = true; then
    # Replica.resetReplicaState(isNewLeader = false) keeps logEndOffsetMetadata.
    p = _leader_with_followers()
    reg = PartitionRegistration((0, 1, 2), (0, 1, 2), 0, leader_epoch=3, partition_epoch=3)
    flags = make_leader_flags(p, reg)
    assert (flags.skipped, flags.is_new_leader, flags.is_new_leader_epoch) == (
        False, False, True)
    assert not flags.resets_remote_state
    led, _ = ok(make_leader_kraft(p, reg, 50))
    follower_1 = remote(led, 1)
    assert follower_1 is not None
    assert (follower_1.log_end_offset, follower_1.last_fetch_leader_log_end_offset,
            follower_1.last_fetch_time_ms, follower_1.last_caught_up_time_ms) == (3, 3, 50, 50)
    assert (led.leader_epoch, led.zk_version) == (3, 3)


def test_make_leader_after_following_resets_the_followers_leos() -> None:
    # The same epoch reached one record at a time: the broker followed broker 1 in between
    # (its Partition no longer says it leads), so isNewLeader is true and every LEO is unknown.
    p = replace(_leader_with_followers(), leader=1, remotes=())
    reg = PartitionRegistration((0, 1, 2), (0, 1, 2), 0, leader_epoch=3, partition_epoch=3)
    flags = make_leader_flags(p, reg)
    assert flags.is_new_leader and flags.resets_remote_state
    led, _ = ok(make_leader_kraft(p, reg, 50))
    assert {r.log_end_offset for r in led.remotes} == {UNKNOWN_OFFSET}
    assert {r.last_caught_up_time_ms for r in led.remotes} == {50}


def test_make_leader_with_the_same_leader_epoch_only_adopts_the_isr() -> None:
    p = _leader_with_followers()
    reg = PartitionRegistration((0, 1, 2), (0, 1), 0, leader_epoch=1, partition_epoch=2)
    led, flags = ok(make_leader_kraft(p, reg, 50))
    assert not flags.is_new_leader_epoch
    assert led.isr == frozenset({0, 1}) and led.remotes == p.remotes and led.zk_version == 2
    # the HW rises over the smaller ISR: min(LEO 3, follower 1 at 3) = 3
    assert led.high_watermark == 3


def test_make_leader_skips_an_older_partition_epoch() -> None:
    p = replace(_leader_with_followers(), zk_version=7)
    reg = PartitionRegistration((0, 1, 2), (0, 1, 2), 0, leader_epoch=9, partition_epoch=6)
    led, flags = ok(make_leader_kraft(p, reg, 50))
    assert flags.skipped and led == p


def test_make_leader_kraft_rejects_bad_input() -> None:
    p = _leader_with_followers()
    assert err(make_leader_kraft(p, REG, -1)).problem is Problem.NEGATIVE_VALUE
    assert err(make_leader_kraft(p, replace(REG, leader=1), 0)).problem is Problem.WRONG_ROLE
    assert err(make_leader_kraft(p, replace(REG, isr=(1,)), 0)).problem is (
        Problem.LEADER_NOT_IN_ISR)


def test_the_stale_leo_precondition_in_kraft_at_the_core_level() -> None:
    # Issue 36 in KRaft, the core steps (not a model-checked trace).  Replicas [1, 0, 2]:
    # broker 0 (B) leads epoch 1 with records r0 r1 r2; follower 1 (C) has fetched r0 only,
    # follower 2 (F) all three, so B's HW is 1.  The controller elects the preferred C
    # (epoch 2: C has r0 and appends c0), F follows C and truncates to 1 (KIP-279's agreement
    # point); C dies and is fenced: B leads again (epoch 3, ISR {0, 2}).  B's metadata loader
    # gets both records in one commit.
    b = fetch(fetch(append(leader_partition((1, 0, 2)), 3), 1, 1, 10), 2, 3, 10)
    b = replace(b, isr=frozenset({0, 1, 2}))
    f_at_b = remote(b, 2)
    assert f_at_b is not None and (b.high_watermark, f_at_b.log_end_offset) == (1, 3)
    follower_log = records((0, 1, 2), 1)
    c_log = (*records((0,), 1), *records((90,), 2))
    f_log = (*follower_log[:kip279_truncation_offset(c_log, follower_log)], c_log[1])
    assert f_log == c_log
    reg = PartitionRegistration((1, 0, 2), (1, 0, 2), 0, leader_epoch=1, partition_epoch=1)
    image = _image(*BROKERS, PartitionRecord(TP, reg))
    # the controller's records: the preferred election, then C fenced
    elect_c = ok(build(reg, TP, frozenset({0, 1, 2}), BuilderConfig(election=Election.PREFERRED)))
    fence_c = ok(generate_leader_and_isr_update(elect_c.registration, TP, frozenset({0, 2}),
                                                BuilderConfig(), broker_to_remove=1))
    to_c, back_to_b = elect_c.record, fence_c.record
    assert to_c == PartitionChangeRecord(TP, leader=1)
    assert back_to_b == PartitionChangeRecord(TP, isr=(0, 2), leader=0)
    merged = ok(apply_commit(image, [to_c, back_to_b]))
    ((tp, after),) = local_changes(merged, 0).leaders
    led, flags = ok(make_leader_kraft(b, after, 20))
    assert (tp, after.leader_epoch, flags.is_new_leader) == (TP, 3, False)
    # B's HW counts F's pre-truncation LEO: r1 and r2 are committed, F (in the ISR, the
    # next clean leader) holds neither.
    assert led.high_watermark == 3
    committed = {r.id for r in led.log[:led.high_watermark]}
    assert committed - {r.id for r in f_log} == {1, 2}
    # Replayed one record per commit, B follows C in between and the LEOs are reset.
    first = ok(apply_commit(image, [to_c]))
    assert [t for t, _ in local_changes(first, 0).followers] == [TP]
    following = replace(b, leader=1, remotes=(), isr=frozenset())
    second = ok(apply_commit(first.after, [back_to_b]))
    ((_, reg3),) = local_changes(second, 0).leaders
    relead, flags3 = ok(make_leader_kraft(following, reg3, 20))
    assert flags3.is_new_leader and relead.high_watermark == 1
    # Issue 36's fix (leader_state_reset=on-epoch, in no release): the new leader epoch
    # resets F's LEO as a new leadership does, so the HW stays at 1 until F fetches again.
    fixed, fixed_flags = ok(make_leader_kraft(b, after, 20, reset_on_epoch=True))
    f_fixed = remote(fixed, 2)
    assert not fixed_flags.is_new_leader and fixed_flags.is_new_leader_epoch
    assert f_fixed is not None and f_fixed.log_end_offset == UNKNOWN_OFFSET
    assert fixed.high_watermark == 1
