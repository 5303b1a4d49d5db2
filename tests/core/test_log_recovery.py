"""The replica lifecycle across a restart: flush, recovery, the HW checkpoint, dead leaders."""

from __future__ import annotations

from isrlab.core.errors import Problem
from isrlab.core.log_recovery import (
    CrashLoss,
    DurableLog,
    HwCheckpointFile,
    UnavailableLeader,
    append_unflushed,
    checkpoint_at_shutdown,
    checkpoints_after_power_loss,
    flush,
    follow_unavailable_leader,
    host_recovered_partition,
    initial_high_watermark,
    read_high_watermark_checkpoint,
    recover_log,
    surviving_lengths,
)
from isrlab.core.state import Partition, TopicPartition, records
from tests.core.helpers import TP, err, ok, state

LOG = records((10, 11, 12, 13), 1)


def test_a_clean_shutdown_keeps_the_log_and_an_unclean_one_may_lose_the_unflushed_tail() -> None:
    durable = ok(flush(DurableLog(LOG), 2))
    assert durable.flushed == 2
    assert surviving_lengths(durable, clean_shutdown=True) == (4,)
    assert surviving_lengths(durable, False) == (2, 3, 4)
    assert surviving_lengths(durable, False, CrashLoss.ALL_UNFLUSHED) == (2,)
    assert surviving_lengths(durable, False, CrashLoss.NONE) == (4,)
    assert ok(recover_log(durable, clean_shutdown=True)) == DurableLog(LOG, 4)
    assert ok(recover_log(durable, False)) == DurableLog(LOG[:2], 2)
    assert ok(recover_log(durable, False, survived=3)) == DurableLog(LOG[:3], 3)
    assert err(recover_log(durable, False, survived=1)).problem is Problem.OFFSET_OUT_OF_LOG


def test_the_flushed_offset_never_moves_back_and_follows_truncation() -> None:
    durable = ok(flush(DurableLog(LOG, 3), 1))
    assert durable.flushed == 3
    assert ok(flush(durable, 99)).flushed == 4
    assert append_unflushed(durable, LOG[:2]) == DurableLog(LOG[:2], 2)
    assert append_unflushed(durable, LOG + records((14,), 2)).flushed == 3
    assert err(flush(durable, -1)).problem is Problem.NEGATIVE_VALUE
    assert err(flush(DurableLog(LOG, 5), 1)).problem is Problem.OFFSET_OUT_OF_LOG


def test_a_partition_missing_from_the_checkpoint_restarts_with_hw_zero() -> None:
    other = TopicPartition("orders", 1)
    checkpoint = ((other, 3), (TP, 4))
    assert read_high_watermark_checkpoint(checkpoint, TP) == 4
    assert read_high_watermark_checkpoint(((other, 3),), TP) == 0


def test_the_checkpointed_hw_is_clamped_to_the_recovered_log() -> None:
    assert initial_high_watermark(4, 0, 2) == 2
    assert initial_high_watermark(0, 1, 3) == 1
    lost_tail = DurableLog(LOG[:2], 2)
    p = ok(host_recovered_partition(TP, 1, lost_tail, ((TP, 4),)))
    assert (p.log, p.high_watermark, p.leader, p.log_created) == (LOG[:2], 2, None, True)
    assert ok(host_recovered_partition(TP, 1, lost_tail, ())).high_watermark == 0
    assert err(host_recovered_partition(TP, 1, DurableLog((), 1), ())).problem is (
        Problem.OFFSET_OUT_OF_LOG)


def test_a_clean_shutdown_rewrites_the_file_in_every_release() -> None:
    # ReplicaManager.shutdown(checkpointHW = true), 0.8.0 to 4.0: the file now holds the
    # final HWs of the dir's hosted partitions, whatever the thread wrote last.
    other = TopicPartition("orders", 1)
    last_periodic = ((TP, 1), (other, 3))
    final = ((TP, 2), (other, 5))
    for version in (HwCheckpointFile.FSYNC, HwCheckpointFile.NO_FSYNC):
        assert checkpoint_at_shutdown(last_periodic, final, version) == final
        # a dir with no hosted log is not written (e.g. before the first LeaderAndIsr)
        assert checkpoint_at_shutdown(last_periodic, None, version) == last_periodic
        # a partition without a local log is gone from the rewritten file (KAFKA-1647)
        shut = checkpoint_at_shutdown(last_periodic, ((other, 5),), version)
        assert read_high_watermark_checkpoint(shut, TP) == 0
    # shutdown(checkpointHW = false), Kafka's unit tests only: the last periodic write
    assert checkpoint_at_shutdown(last_periodic, final, HwCheckpointFile.PERIODIC) == (
        last_periodic)


def test_a_power_loss_may_empty_the_file_only_before_0_8_2() -> None:
    written = ((TP, 2),)
    assert checkpoints_after_power_loss(written) == (written,)
    assert checkpoints_after_power_loss(written, HwCheckpointFile.PERIODIC) == (written,)
    # 0.8.0/0.8.1 renamed the temporary file without an fsync (KAFKA-1539): it may be
    # empty, and an empty file reads as no partition at all
    after = checkpoints_after_power_loss(written, HwCheckpointFile.NO_FSYNC)
    assert after == (written, ())
    assert [read_high_watermark_checkpoint(f, TP) for f in after] == [2, 0]
    assert checkpoints_after_power_loss((), HwCheckpointFile.NO_FSYNC) == ((),)


def test_following_a_dead_leader_by_version() -> None:
    fresh = Partition(TP, 1)
    request = state(leader=0, isr=(0,), leader_epoch=5)
    skipped = follow_unavailable_leader(fresh, request, UnavailableLeader.SKIP)
    assert skipped.partition == fresh and not skipped.start_fetcher
    created = follow_unavailable_leader(fresh, request, UnavailableLeader.CREATE_LOG)
    assert created.partition.log_created and created.partition.leader_epoch == fresh.leader_epoch
    followed = follow_unavailable_leader(fresh, request, UnavailableLeader.MAKE_FOLLOWER)
    assert (followed.partition.leader, followed.partition.leader_epoch) == (0, 5)
    assert followed.partition.log_created and not followed.start_fetcher
