"""``make_leader``'s ``reset_on_epoch`` (docs/findings/stale-leo-failover.md): Kafka resets the
remote replicas only for a new leader (``isNewLeader``); the fix also resets them when a
broker that already led is told of a new leader epoch."""

from __future__ import annotations

from isrlab.core.partition import make_leader
from isrlab.core.state import UNKNOWN_OFFSET, RemoteReplica, remote
from tests.core.helpers import in_sync_leader, ok, state


def test_kafka_keeps_the_followers_leos_of_a_leader_that_skipped_an_epoch() -> None:
    # broker 0 led epoch 0 with both followers at LEO 4; it is told of epoch 2 directly
    p = in_sync_leader(4)
    again = ok(make_leader(p, state(0, (0, 1, 2), leader_epoch=3), 50))
    assert not again.is_new_leader
    assert [r.log_end_offset for r in again.partition.remotes] == [4, 4]


def test_the_fix_resets_them_on_the_epoch_change_and_the_hw_waits_for_fresh_fetches() -> None:
    p = in_sync_leader(4)
    fixed = ok(make_leader(p, state(0, (0, 1, 2), leader_epoch=3), 50, reset_on_epoch=True))
    assert not fixed.is_new_leader  # Kafka's notion is unchanged; only the reset moves
    assert remote(fixed.partition, 1) == RemoteReplica(
        1, UNKNOWN_OFFSET, UNKNOWN_OFFSET, 50, UNKNOWN_OFFSET, -1)
    assert not fixed.hw_incremented


def test_the_fix_changes_nothing_for_a_retried_request_of_the_same_epoch() -> None:
    p = in_sync_leader(4)
    same = p.leader_epoch
    retried = ok(make_leader(p, state(0, (0, 1, 2), leader_epoch=same), 9, reset_on_epoch=True))
    assert [r.log_end_offset for r in retried.partition.remotes] == [4, 4]
