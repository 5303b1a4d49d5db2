"""KRaft broker registration, heartbeats, fencing and controlled shutdown.

Expected values: ``BrokerHeartbeatManagerTest.testCalculateNextBrokerState`` (3.7.0) for the
state machine, ``ClusterControlManager.registerBroker`` at 3.7.0 / 3.8.0 / 3.9.0-rc3 for the
unclean-shutdown verdicts (code cited in ``isrlab.core.broker_heartbeat``), and
``BrokerLifecycleManager`` (3.7.0 lines 486-531) for the broker side.
"""

from __future__ import annotations

from dataclasses import replace

from isrlab.core.broker_heartbeat import (
    NO_OFFSET,
    BrokerControlState,
    BrokerHeartbeatReply,
    BrokerHeartbeatRequest,
    BrokerHeartbeatState,
    BrokerLifecycle,
    BrokerRegistrationRequest,
    BrokerState,
    RegistrationError,
    UncleanDetection,
    begin_controlled_shutdown,
    calculate_next_broker_state,
    clean_shutdown_file,
    current_broker_state,
    enter_controlled_shutdown,
    find_stale_brokers,
    find_state,
    handle_heartbeat_response,
    has_valid_session,
    heartbeat_request,
    lowest_active_offset,
    process_broker_heartbeat,
    register_broker,
    register_session,
    registered,
    registration_request,
    set_ready_to_unfence,
    start,
)
from isrlab.core.errors import Problem
from isrlab.core.kraft_metadata import BrokerRegistration, RegisterBrokerRecord
from tests.core.helpers import err, ok

FENCED, UNFENCED = BrokerControlState.FENCED, BrokerControlState.UNFENCED
SHUTDOWN, NOW = BrokerControlState.CONTROLLED_SHUTDOWN, BrokerControlState.SHUTDOWN_NOW


def _hb(broker: int = 0, offset: int = 0, fence: bool = False, shut: bool = False
        ) -> BrokerHeartbeatRequest:
    return BrokerHeartbeatRequest(broker, 0, offset, fence, shut)


def _states() -> tuple[BrokerHeartbeatState, ...]:
    # testCalculateNextBrokerState: 0 fenced at 100, 1 at 98, 2 and 3 at 100, 4 fenced,
    # 5 at 99 in controlled shutdown from offset 99.
    return (BrokerHeartbeatState(0, 0, True, 100), BrokerHeartbeatState(1, 0, False, 98),
            BrokerHeartbeatState(2, 0, False, 100), BrokerHeartbeatState(3, 0, False, 100),
            BrokerHeartbeatState(4, 0, True, 100), BrokerHeartbeatState(5, 0, False, 99, 99))


def test_calculate_next_broker_state_as_brokerheartbeatmanagertest() -> None:
    states = _states()
    low = lowest_active_offset(states)
    assert low == 98
    b0, b1, b5 = states[0], states[1], states[5]

    def nxt(state: BrokerHeartbeatState, request: BrokerHeartbeatRequest, leads: bool,
            lowest: int | None = low) -> BrokerControlState:
        return calculate_next_broker_state(state, request, 100, leads, lowest)

    assert nxt(b0, _hb(shut=True), False) is NOW
    assert nxt(b0, _hb(offset=100), False) is UNFENCED
    assert nxt(b0, _hb(offset=50), False) is FENCED
    assert nxt(b0, _hb(fence=True), False) is FENCED
    assert nxt(b1, _hb(shut=True), True) is SHUTDOWN
    assert nxt(b1, _hb(shut=True), False) is NOW
    assert nxt(b1, _hb(), False) is UNFENCED
    assert nxt(b1, _hb(fence=True), False) is FENCED
    assert nxt(b1, _hb(fence=True, shut=True), True) is NOW
    assert current_broker_state(b5) is SHUTDOWN
    assert nxt(b5, _hb(shut=True), True) is SHUTDOWN
    assert nxt(b5, _hb(shut=True), False) is SHUTDOWN  # broker 1 (98) is behind 99
    fenced_1 = (b0, replace(b1, fenced=True), *states[2:])
    assert lowest_active_offset(fenced_1) == 100
    assert nxt(b5, _hb(shut=True), False, lowest_active_offset(fenced_1)) is NOW
    assert nxt(b5, _hb(shut=True), True, lowest_active_offset(fenced_1)) is SHUTDOWN
    assert nxt(b5, _hb(shut=True), False, None) is NOW
    assert lowest_active_offset(()) is None


def test_sessions_expire_and_stale_brokers_are_fenced_oldest_first() -> None:
    states = (BrokerHeartbeatState(0, 10, False), BrokerHeartbeatState(1, 5, False),
              BrokerHeartbeatState(2, 0, True), BrokerHeartbeatState(3, 30, False))
    assert has_valid_session(states[0], 19, 9) and not has_valid_session(states[0], 20, 9)
    assert not has_valid_session(states[2], 0, 9)  # a fenced broker has no session
    assert find_stale_brokers(states, 20, 9) == (1, 0)
    assert find_stale_brokers(states, 14, 9) == ()  # 5 + 9 >= 14: still valid
    assert find_stale_brokers(states, 15, 9) == (1,)
    assert find_stale_brokers(states, 14, 100) == ()


def test_register_session_starts_now_and_keeps_the_offset_only_across_a_fence_change() -> None:
    states = register_session((), 1, True, 7, new_incarnation=True)
    assert states == (BrokerHeartbeatState(1, 7, True, NO_OFFSET),)
    touched = (replace(states[0], metadata_offset=40),)
    flipped = register_session(touched, 1, False, 9, new_incarnation=False)
    assert find_state(flipped, 1) == BrokerHeartbeatState(1, 9, False, 40)
    same = register_session(touched, 1, True, 9, new_incarnation=False)
    assert find_state(same, 1) == BrokerHeartbeatState(1, 9, True, NO_OFFSET)
    assert find_state(same, 2) is None


def test_process_broker_heartbeat_unfences_a_caught_up_broker() -> None:
    reg = BrokerRegistration(0, 9, 100)
    state = BrokerHeartbeatState(0, 0, True)
    behind = ok(process_broker_heartbeat(state, reg, BrokerHeartbeatRequest(0, 100, 4, False,
                                                                            False), 5, False,
                                         None, 3))
    assert not behind.changed and behind.reply == BrokerHeartbeatReply(False, True, False, False)
    caught = ok(process_broker_heartbeat(behind.state, reg,
                                         BrokerHeartbeatRequest(0, 100, 5, False, False), 5,
                                         False, None, 6))
    assert caught.changed and (caught.previous, caught.next) == (FENCED, UNFENCED)
    assert caught.reply == BrokerHeartbeatReply(True, False, False, False)
    assert caught.state == BrokerHeartbeatState(0, 6, False, 5)


def test_controlled_shutdown_through_heartbeats() -> None:
    reg = BrokerRegistration(0, 9, 100)
    state = BrokerHeartbeatState(0, 0, False, 20)
    want = BrokerHeartbeatRequest(0, 100, 20, False, True)
    first = ok(process_broker_heartbeat(state, reg, want, 5, True, 20, 1))
    assert (first.next, first.reply.in_controlled_shutdown) == (SHUTDOWN, True)
    shutting = ok(enter_controlled_shutdown(first.state, 25))
    assert ok(enter_controlled_shutdown(shutting, 30)).controlled_shutdown_offset == 25
    moved = ok(process_broker_heartbeat(shutting, reg, want, 5, False, 24, 2))
    assert moved.next is SHUTDOWN  # the others have not replayed offset 25 yet
    done = ok(process_broker_heartbeat(shutting, reg, want, 5, False, 25, 3))
    assert done.next is NOW and done.reply.should_shut_down and done.state.fenced
    assert done.state.controlled_shutdown_offset == NO_OFFSET


def test_heartbeat_and_shutdown_bad_input() -> None:
    reg = BrokerRegistration(0, 9, 100)
    state = BrokerHeartbeatState(0, 5, True)
    assert err(process_broker_heartbeat(state, reg, BrokerHeartbeatRequest(0, 99, 0, False,
                                                                           False), 0, False,
                                        None, 6)).problem is Problem.WRONG_ROLE
    assert err(process_broker_heartbeat(state, reg, BrokerHeartbeatRequest(0, 100, 0, False,
                                                                           False), 0, False,
                                        None, 4)).problem is Problem.NEGATIVE_VALUE
    assert err(enter_controlled_shutdown(state, 3)).problem is Problem.WRONG_ROLE
    assert err(enter_controlled_shutdown(replace(state, fenced=False), -1)).problem is (
        Problem.NEGATIVE_VALUE)


# ---------------------------------------------------------------------------------------
# Registration and KIP-966 unclean-shutdown detection
# ---------------------------------------------------------------------------------------

OLD = BrokerRegistration(1, 7, 50, fenced=False)


def _register(request: BrokerRegistrationRequest, detection: UncleanDetection,
              existing: BrokerRegistration | None = OLD, session: bool = False
              ) -> tuple[RegisterBrokerRecord | None, bool]:
    outcome = ok(register_broker(existing, session, request, 80, detection))
    return outcome.record, outcome.unclean_shutdown


def test_a_clean_restart_is_clean_only_with_3_8_s_previous_epoch_check() -> None:
    clean = BrokerRegistrationRequest(1, 8, previous_broker_epoch=50)
    record, unclean = _register(clean, UncleanDetection.PREVIOUS_EPOCH)
    assert record == RegisterBrokerRecord(1, 8, 80) and not unclean
    # 3.9+ (KAFKA-16952): any new incarnation counts as an unclean shutdown
    assert _register(clean, UncleanDetection.NEW_INCARNATION) == (
        RegisterBrokerRecord(1, 8, 80), True)
    # 3.7: the condition is only logged
    assert _register(clean, UncleanDetection.NONE)[1] is False


def test_a_crash_restart_is_unclean_from_3_8() -> None:
    crashed = BrokerRegistrationRequest(1, 8)  # no clean-shutdown file: -1
    assert _register(crashed, UncleanDetection.PREVIOUS_EPOCH)[1]
    assert _register(crashed, UncleanDetection.NEW_INCARNATION)[1]
    assert not _register(crashed, UncleanDetection.NONE)[1]
    old_version = BrokerRegistrationRequest(1, 8, previous_broker_epoch=50, version=1)
    assert _register(old_version, UncleanDetection.PREVIOUS_EPOCH)[1]
    assert _register(crashed, UncleanDetection.PREVIOUS_EPOCH, existing=None)[1]


def test_the_same_incarnation_re_registering_keeps_its_state() -> None:
    again = BrokerRegistrationRequest(1, 7, previous_broker_epoch=50)
    assert _register(again, UncleanDetection.NEW_INCARNATION, session=True) == (
        RegisterBrokerRecord(1, 7, 50, fenced=False), False)
    # 3.8 bumped the epoch even for the same incarnation (fixed by KAFKA-16952)
    assert _register(again, UncleanDetection.PREVIOUS_EPOCH, session=True) == (
        RegisterBrokerRecord(1, 7, 80, fenced=False), False)


def test_another_incarnation_with_a_live_session_is_a_duplicate() -> None:
    outcome = ok(register_broker(OLD, True, BrokerRegistrationRequest(1, 8), 80))
    assert outcome.record is None
    assert outcome.error is RegistrationError.DUPLICATE_BROKER_REGISTRATION


def test_registration_bad_input() -> None:
    assert err(register_broker(OLD, False, BrokerRegistrationRequest(1, 8), 50)).problem is (
        Problem.BAD_CONFIG)
    assert err(register_broker(None, False, BrokerRegistrationRequest(-1, 8), 5)).problem is (
        Problem.NEGATIVE_VALUE)


# ---------------------------------------------------------------------------------------
# The broker side
# ---------------------------------------------------------------------------------------


def test_broker_lifecycle_from_start_to_running_and_back_to_shutdown() -> None:
    life = start(1, 8, clean_shutdown_epoch=50)
    assert registration_request(life) == BrokerRegistrationRequest(1, 8, 50)
    life = registered(life, 80)
    assert heartbeat_request(life, 3) == BrokerHeartbeatRequest(1, 80, 3, True, False)
    life = handle_heartbeat_response(life, BrokerHeartbeatReply(False, True, False, False))
    assert life.state is BrokerState.STARTING
    life = handle_heartbeat_response(life, BrokerHeartbeatReply(True, True, False, False))
    assert life.state is BrokerState.RECOVERY
    life = handle_heartbeat_response(life, BrokerHeartbeatReply(True, True, False, False))
    assert life.state is BrokerState.RECOVERY
    life = set_ready_to_unfence(life)
    assert not heartbeat_request(life, 9).want_fence
    life = handle_heartbeat_response(life, BrokerHeartbeatReply(True, False, False, False))
    assert life.state is BrokerState.RUNNING
    life = begin_controlled_shutdown(life)
    assert life.state is BrokerState.PENDING_CONTROLLED_SHUTDOWN
    assert heartbeat_request(life, 9).want_shut_down
    assert begin_controlled_shutdown(life) == life
    life = handle_heartbeat_response(life, BrokerHeartbeatReply(True, False, True, False))
    assert life.state is BrokerState.PENDING_CONTROLLED_SHUTDOWN
    life = handle_heartbeat_response(life, BrokerHeartbeatReply(True, True, False, True))
    assert life.state is BrokerState.SHUTTING_DOWN
    assert clean_shutdown_file(life, clean=True) == 80
    assert clean_shutdown_file(life, clean=False) is None


def test_a_broker_that_never_ran_shuts_down_at_once_and_a_crash_leaves_no_epoch() -> None:
    life = start(2, 9, clean_shutdown_epoch=None)
    assert life.previous_broker_epoch == NO_OFFSET
    assert begin_controlled_shutdown(life).state is BrokerState.SHUTTING_DOWN
    assert clean_shutdown_file(BrokerLifecycle(2, 9), clean=True) is None
