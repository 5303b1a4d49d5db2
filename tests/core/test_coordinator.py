"""__consumer_offsets leadership changes: immigration reads below HW only; emigration."""

from __future__ import annotations

from isrlab.core.coordinator import (
    Group,
    GroupCoordinatorState,
    GroupState,
    handle_group_emigration,
    handle_group_immigration,
    load_groups_and_offsets,
)
from isrlab.core.errors import Errors, Problem
from isrlab.core.state import records
from tests.core.helpers import err, ok

LOG = records((10, 11, 12, 13, 14), 1)


def test_a_new_coordinator_loads_only_records_below_the_high_watermark() -> None:
    assert load_groups_and_offsets(LOG, 0, 3) == LOG[:3]
    assert load_groups_and_offsets(LOG, 1, 3) == LOG[1:3]
    assert load_groups_and_offsets(LOG, 0, -1) == ()  # not the leader: HW -1, nothing loaded
    assert load_groups_and_offsets(LOG, 0, 99) == LOG


def test_immigration_owns_the_partition_and_keeps_what_it_loaded() -> None:
    state = ok(handle_group_immigration(GroupCoordinatorState(), 4, LOG, 0, 2))
    assert state.owned_partitions == {4}
    assert state.loaded == ((4, LOG[:2]),)
    reloaded = ok(handle_group_immigration(state, 4, LOG, 0, 4))
    assert reloaded.loaded == ((4, LOG[:4]),)
    assert err(handle_group_immigration(state, -1, LOG, 0, 1)).problem is Problem.NEGATIVE_VALUE


def test_emigration_kills_the_groups_and_answers_waiting_members_not_coordinator() -> None:
    groups = (
        Group("g-stable", 4, GroupState.STABLE, ("m1",)),
        Group("g-empty", 4, GroupState.EMPTY, ("m2",)),
        Group("g-other", 5, GroupState.STABLE, ("m3",)),
        Group("g-rebalancing", 4, GroupState.PREPARING_REBALANCE, ("m4", "m5")),
    )
    state = ok(handle_group_immigration(GroupCoordinatorState(groups=groups), 4, LOG, 0, 2))
    out = handle_group_emigration(state, 4)
    assert out.state.owned_partitions == frozenset()
    assert out.state.loaded == ()
    assert [g.group_id for g in out.state.groups] == ["g-other"]
    assert all(g.state is GroupState.DEAD for g in out.unloaded)
    assert out.answers == (("m1", Errors.NOT_COORDINATOR), ("m4", Errors.NOT_COORDINATOR),
                           ("m5", Errors.NOT_COORDINATOR))
