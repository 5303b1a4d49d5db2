"""KRaft broker registration, heartbeats, fencing and controlled shutdown (3.x-4.x).

The controller side: ``ClusterControlManager.registerBroker`` (incarnations, broker epochs,
KIP-966's unclean-shutdown detection), ``BrokerHeartbeatManager`` (sessions on a clock, the
next ``BrokerControlState`` of a heartbeat, stale brokers to fence) and
``ReplicationControlManager.processBrokerHeartbeat``.  The broker side:
``BrokerLifecycleManager`` (STARTING -> RECOVERY -> RUNNING -> PENDING_CONTROLLED_SHUTDOWN ->
SHUTTING_DOWN) and the clean-shutdown file that keeps the broker epoch across a clean restart
(``CleanShutdownFileHandler``, 3.7+).

Modelling shortcuts: time is a logical clock in milliseconds (Kafka uses nanoseconds); a
session is valid while ``last_contact + session_timeout >= now``; the heartbeat manager's
sorted sets are recomputed from the per-broker states (same answers); directories (JBOD),
features and listeners are not modelled; ``incarnation_id`` is an int (Kafka's random Uuid).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, replace
from enum import Enum, unique

from returns.result import Result, Success

from isrlab.core.errors import InvalidInput, Problem, reject
from isrlab.core.kraft_metadata import BrokerRegistration, RegisterBrokerRecord

NO_OFFSET = -1
"""``-1``: no metadata offset known / not in controlled shutdown."""


# ---------------------------------------------------------------------------------------
# Registration (ClusterControlManager.registerBroker)
# ---------------------------------------------------------------------------------------


@unique
class UncleanDetection(Enum):
    """How the controller decides, at registration, that the broker shut down uncleanly.

    ``NONE``: 3.7 and earlier -- 3.7.0 computes the KIP-966 condition but only logs it (a
    ``TODO(KIP-966)``).  ``PREVIOUS_EPOCH``: 3.8 (KAFKA-15586) -- unclean when the request is
    below version 2, the broker has no registration, or the request's ``previousBrokerEpoch``
    (kept on disk by a clean shutdown) is not the registered epoch.  ``NEW_INCARNATION``: 3.9+
    (KAFKA-16952) -- every new incarnation is treated as an unclean shutdown, whatever the
    previous epoch.  In all three, what an unclean shutdown does (``handleBrokerUncleanShutdown``:
    out of every ISR and ELR) happens only when the metadata version supports ELR.
    """

    NONE = "3.7-"
    PREVIOUS_EPOCH = "3.8"
    NEW_INCARNATION = "3.9+"


@dataclass(frozen=True, slots=True)
class BrokerRegistrationRequest:
    """``BrokerRegistrationRequest``: the broker, its incarnation, the previous broker epoch read
    from the clean-shutdown file (-1: none; KIP-966).  The field exists from request version 3
    (a v2 request carries the default -1), though 3.8's check reads ``version < 2``."""

    broker_id: int
    incarnation_id: int
    previous_broker_epoch: int = NO_OFFSET
    version: int = 3


@unique
class RegistrationError(Enum):
    """Why a registration is refused (Kafka's exceptions, as values)."""

    DUPLICATE_BROKER_REGISTRATION = "DuplicateBrokerRegistrationException"


@dataclass(frozen=True, slots=True)
class RegistrationOutcome:
    """``registerBroker``'s outcome: the record to write and whether the broker is treated as
    having shut down uncleanly (then the caller writes ``handleBrokerUncleanShutdown``'s
    partition changes first), or the refusal."""

    record: RegisterBrokerRecord | None
    unclean_shutdown: bool = False
    error: RegistrationError | None = None


def _is_unclean(existing: BrokerRegistration | None, request: BrokerRegistrationRequest,
                detection: UncleanDetection) -> bool:
    if detection is UncleanDetection.NONE:
        return False
    if detection is UncleanDetection.PREVIOUS_EPOCH:
        return (request.version < 2 or existing is None
                or request.previous_broker_epoch != existing.epoch)
    return existing is None or existing.incarnation_id != request.incarnation_id


def register_broker(existing: BrokerRegistration | None, session_valid: bool,
                    request: BrokerRegistrationRequest, new_broker_epoch: int,
                    detection: UncleanDetection = UncleanDetection.NEW_INCARNATION,
                    ) -> Result[RegistrationOutcome, InvalidInput]:
    """``ClusterControlManager.registerBroker`` (3.8 / 3.9+ as ``detection`` selects).

    A registration with another incarnation while the old one still has a valid session is
    refused (``DuplicateBrokerRegistrationException``).  A new incarnation gets
    ``new_broker_epoch`` (Kafka: the offset the record will have, so epochs only grow) and starts
    fenced; the same incarnation re-registering keeps its fenced / controlled-shutdown state and
    -- 3.9+ (KAFKA-16952) -- its epoch (3.8 gave it the new epoch; ``PREVIOUS_EPOCH`` selects
    that too).  ``unclean_shutdown`` is ``UncleanDetection``'s verdict.  Bad input: a negative id,
    or a new epoch not above the existing one.
    """
    if min(request.broker_id, new_broker_epoch) < 0:
        return reject(Problem.NEGATIVE_VALUE, f"broker {request.broker_id}, epoch "
                                              f"{new_broker_epoch}")
    if existing is not None and new_broker_epoch <= existing.epoch:
        return reject(Problem.BAD_CONFIG, f"new broker epoch {new_broker_epoch} not above "
                                          f"{existing.epoch}")
    same = existing is not None and existing.incarnation_id == request.incarnation_id
    if existing is not None and session_valid and not same:
        return Success(RegistrationOutcome(
            None, error=RegistrationError.DUPLICATE_BROKER_REGISTRATION))
    unclean = _is_unclean(existing, request, detection)
    if existing is not None and same:
        keep_epoch = detection is UncleanDetection.NEW_INCARNATION
        epoch = existing.epoch if keep_epoch else new_broker_epoch
        return Success(RegistrationOutcome(RegisterBrokerRecord(
            request.broker_id, request.incarnation_id, epoch, existing.fenced,
            existing.in_controlled_shutdown), unclean))
    return Success(RegistrationOutcome(RegisterBrokerRecord(
        request.broker_id, request.incarnation_id, new_broker_epoch), unclean))


# ---------------------------------------------------------------------------------------
# Heartbeats (BrokerHeartbeatManager)
# ---------------------------------------------------------------------------------------


@unique
class BrokerControlState(Enum):
    """``BrokerControlState``: the controller's view of one broker's lifecycle."""

    FENCED = "fenced"
    UNFENCED = "unfenced"
    CONTROLLED_SHUTDOWN = "controlled_shutdown"
    SHUTDOWN_NOW = "shutdown_now"

    @property
    def fenced(self) -> bool:
        """``fenced()``: FENCED and SHUTDOWN_NOW."""
        return self in (BrokerControlState.FENCED, BrokerControlState.SHUTDOWN_NOW)

    @property
    def should_shut_down(self) -> bool:
        """``shouldShutDown()``: SHUTDOWN_NOW only."""
        return self is BrokerControlState.SHUTDOWN_NOW


@dataclass(frozen=True, slots=True)
class BrokerHeartbeatState:
    """``BrokerHeartbeatManager.BrokerHeartbeatState``: last contact, fenced, the metadata offset
    the broker last reported, and its controlled-shutdown offset (-1: not shutting down)."""

    broker_id: int
    last_contact_ms: int
    fenced: bool = True
    metadata_offset: int = NO_OFFSET
    controlled_shutdown_offset: int = NO_OFFSET

    @property
    def shutting_down(self) -> bool:
        """``shuttingDown()``: a controlled-shutdown offset was recorded."""
        return self.controlled_shutdown_offset >= 0


@dataclass(frozen=True, slots=True)
class BrokerHeartbeatRequest:
    """``BrokerHeartbeatRequest``: what the broker says of itself."""

    broker_id: int
    broker_epoch: int
    current_metadata_offset: int
    want_fence: bool
    want_shut_down: bool


@dataclass(frozen=True, slots=True)
class BrokerHeartbeatReply:
    """``BrokerHeartbeatReply``: caught up with its registration, fenced, in controlled shutdown,
    should shut down."""

    is_caught_up: bool
    is_fenced: bool
    in_controlled_shutdown: bool
    should_shut_down: bool


def register_session(states: tuple[BrokerHeartbeatState, ...], broker_id: int, fenced: bool,
                     now_ms: int, new_incarnation: bool) -> tuple[BrokerHeartbeatState, ...]:
    """``BrokerHeartbeatManager.remove`` (a new incarnation) then ``register(brokerId, fenced)``:
    the session starts now; the metadata offset is kept only across a change of the fenced flag
    of a known session, as ``register`` does. Total."""
    old = None if new_incarnation else find_state(states, broker_id)
    offset = old.metadata_offset if old is not None and old.fenced != fenced else NO_OFFSET
    return _put(states, BrokerHeartbeatState(broker_id, now_ms, fenced, offset))


def find_state(states: Iterable[BrokerHeartbeatState], broker_id: int
               ) -> BrokerHeartbeatState | None:
    """The heartbeat state of ``broker_id``, if it has a session. Total."""
    return next((s for s in states if s.broker_id == broker_id), None)


def _put(states: tuple[BrokerHeartbeatState, ...], state: BrokerHeartbeatState
         ) -> tuple[BrokerHeartbeatState, ...]:
    rest = tuple(s for s in states if s.broker_id != state.broker_id)
    return tuple(sorted((*rest, state), key=lambda s: s.broker_id))


def has_valid_session(state: BrokerHeartbeatState, now_ms: int, session_timeout_ms: int) -> bool:
    """``hasValidSession``: a fenced broker has none; else ``last contact + timeout >= now``.

    Kafka: ``broker.fenced() ? false : lastContactNs + sessionTimeoutNs >= time.nanoseconds()``
    (3.7.0 BrokerHeartbeatManager lines 349-353). Total.
    """
    return not state.fenced and state.last_contact_ms + session_timeout_ms >= now_ms


def find_stale_brokers(states: Iterable[BrokerHeartbeatState], now_ms: int,
                       session_timeout_ms: int) -> tuple[int, ...]:
    """The unfenced brokers whose session expired, oldest contact first.

    ``findOneStaleBroker`` returns the first of these; ``QuorumController`` fences it
    (``fenceStaleBroker`` -> ``handleBrokerFenced``) and asks again, so all of them are fenced
    one by one. Total.
    """
    stale = [s for s in states if not s.fenced and not has_valid_session(s, now_ms,
                                                                         session_timeout_ms)]
    return tuple(s.broker_id for s in sorted(stale, key=lambda s: (s.last_contact_ms,
                                                                   s.broker_id)))


def lowest_active_offset(states: Iterable[BrokerHeartbeatState]) -> int | None:
    """``lowestActiveOffset``: the smallest metadata offset of the active brokers (unfenced, not
    shutting down); ``None`` for Kafka's ``Long.MAX_VALUE`` when there is none. Total."""
    offsets = [s.metadata_offset for s in states if not s.fenced and not s.shutting_down]
    return min(offsets) if offsets else None


def current_broker_state(state: BrokerHeartbeatState) -> BrokerControlState:
    """``currentBrokerState``: CONTROLLED_SHUTDOWN if shutting down, else FENCED / UNFENCED."""
    if state.shutting_down:
        return BrokerControlState.CONTROLLED_SHUTDOWN
    return BrokerControlState.FENCED if state.fenced else BrokerControlState.UNFENCED


def calculate_next_broker_state(
    state: BrokerHeartbeatState, request: BrokerHeartbeatRequest,
    register_broker_record_offset: int, has_leaderships: bool, lowest_active: int | None,
) -> BrokerControlState:
    """``BrokerHeartbeatManager.calculateNextBrokerState`` (3.3-trunk 2024-10).

    FENCED: wants to shut down -> SHUTDOWN_NOW; does not want to stay fenced and has replayed
    up to its own ``RegisterBrokerRecord`` (``currentMetadataOffset >=
    registerBrokerRecordOffset``) -> UNFENCED; else FENCED.  UNFENCED: wants fencing ->
    SHUTDOWN_NOW if it also wants to shut down, else FENCED; wants to shut down ->
    CONTROLLED_SHUTDOWN while it still leads partitions, else SHUTDOWN_NOW.
    CONTROLLED_SHUTDOWN: still leading -> stays; else SHUTDOWN_NOW once every active broker has
    replayed past its controlled-shutdown offset (``controlledShutdownOffset <=
    lowestActiveOffset``).  Total.
    """
    current = current_broker_state(state)
    if current is BrokerControlState.FENCED:
        if request.want_shut_down:
            return BrokerControlState.SHUTDOWN_NOW
        caught_up = request.current_metadata_offset >= register_broker_record_offset
        if not request.want_fence and caught_up:
            return BrokerControlState.UNFENCED
        return BrokerControlState.FENCED
    if current is BrokerControlState.UNFENCED:
        if request.want_fence:
            return (BrokerControlState.SHUTDOWN_NOW if request.want_shut_down
                    else BrokerControlState.FENCED)
        if request.want_shut_down:
            return (BrokerControlState.CONTROLLED_SHUTDOWN if has_leaderships
                    else BrokerControlState.SHUTDOWN_NOW)
        return BrokerControlState.UNFENCED
    if has_leaderships:
        return BrokerControlState.CONTROLLED_SHUTDOWN
    done = lowest_active is None or state.controlled_shutdown_offset <= lowest_active
    return BrokerControlState.SHUTDOWN_NOW if done else BrokerControlState.CONTROLLED_SHUTDOWN


@dataclass(frozen=True, slots=True)
class HeartbeatOutcome:
    """``processBrokerHeartbeat``'s outcome: the transition (``previous`` -> ``next``), the reply,
    and the heartbeat state after ``touch``.  The caller writes the records of the transition:
    FENCED / SHUTDOWN_NOW -> ``handleBrokerFenced``, UNFENCED -> ``handleBrokerUnfenced``,
    CONTROLLED_SHUTDOWN -> ``handleBrokerInControlledShutdown`` (then records the batch end
    offset with ``enter_controlled_shutdown``)."""

    previous: BrokerControlState
    next: BrokerControlState
    reply: BrokerHeartbeatReply
    state: BrokerHeartbeatState

    @property
    def changed(self) -> bool:
        """Whether records are written (``states.current() != states.next()``)."""
        return self.previous is not self.next


def process_broker_heartbeat(
    state: BrokerHeartbeatState, registered: BrokerRegistration, request: BrokerHeartbeatRequest,
    register_broker_record_offset: int, has_leaderships: bool, lowest_active: int | None,
    now_ms: int,
) -> Result[HeartbeatOutcome, InvalidInput]:
    """``ReplicationControlManager.processBrokerHeartbeat`` with ``BrokerHeartbeatManager.touch``.

    The request's broker epoch must be the registered one (``checkBrokerEpoch``; a stale one is
    refused as bad input here -- Kafka answers ``STALE_BROKER_EPOCH`` and the broker
    re-registers).  Then ``calculate_next_broker_state``; ``touch`` records the contact time,
    the new fenced flag and the reported offset (a fenced broker loses its controlled-shutdown
    offset); the reply says caught up (``current offset >= register record offset``), fenced,
    in controlled shutdown, should shut down.
    """
    if request.broker_id != registered.broker_id or request.broker_epoch != registered.epoch:
        return reject(Problem.WRONG_ROLE, f"heartbeat of broker {request.broker_id} epoch "
                                          f"{request.broker_epoch} vs {registered}")
    if now_ms < state.last_contact_ms:
        return reject(Problem.NEGATIVE_VALUE, f"clock went back: {now_ms} < "
                                              f"{state.last_contact_ms}")
    current = current_broker_state(state)
    nxt = calculate_next_broker_state(state, request, register_broker_record_offset,
                                      has_leaderships, lowest_active)
    touched = replace(state, last_contact_ms=now_ms, fenced=nxt.fenced,
                      metadata_offset=request.current_metadata_offset,
                      controlled_shutdown_offset=NO_OFFSET if nxt.fenced
                      else state.controlled_shutdown_offset)
    reply = BrokerHeartbeatReply(
        request.current_metadata_offset >= register_broker_record_offset, nxt.fenced,
        nxt is BrokerControlState.CONTROLLED_SHUTDOWN, nxt.should_shut_down)
    return Success(HeartbeatOutcome(current, nxt, reply, touched))


def enter_controlled_shutdown(state: BrokerHeartbeatState, batch_end_offset: int
                              ) -> Result[BrokerHeartbeatState, InvalidInput]:
    """``maybeUpdateControlledShutdownOffset``: the offset of the batch that moved the broker
    into controlled shutdown, recorded once (a later call keeps the first).  A fenced broker
    cannot enter controlled shutdown (Kafka throws): bad input."""
    if state.fenced:
        return reject(Problem.WRONG_ROLE, f"fenced broker {state.broker_id} cannot enter "
                                          "controlled shutdown")
    if batch_end_offset < 0:
        return reject(Problem.NEGATIVE_VALUE, f"offset {batch_end_offset}")
    if state.shutting_down:
        return Success(state)
    return Success(replace(state, controlled_shutdown_offset=batch_end_offset))


# ---------------------------------------------------------------------------------------
# The broker side (BrokerLifecycleManager) and the clean-shutdown file
# ---------------------------------------------------------------------------------------


@unique
class BrokerState(Enum):
    """``org.apache.kafka.metadata.BrokerState`` as ``BrokerLifecycleManager`` moves through it."""

    NOT_RUNNING = "not_running"
    STARTING = "starting"
    RECOVERY = "recovery"
    RUNNING = "running"
    PENDING_CONTROLLED_SHUTDOWN = "pending_controlled_shutdown"
    SHUTTING_DOWN = "shutting_down"


@dataclass(frozen=True, slots=True)
class BrokerLifecycle:
    """``BrokerLifecycleManager``'s state: the broker state, its epoch (-1 before registration),
    ``readyToUnfence`` (log recovery done) and the previous broker epoch read at start-up."""

    broker_id: int
    incarnation_id: int
    state: BrokerState = BrokerState.NOT_RUNNING
    broker_epoch: int = NO_OFFSET
    ready_to_unfence: bool = False
    previous_broker_epoch: int = NO_OFFSET


def start(broker_id: int, incarnation_id: int, clean_shutdown_epoch: int | None
          ) -> BrokerLifecycle:
    """``BrokerLifecycleManager.start``: STARTING, with the previous broker epoch from the
    clean-shutdown file (``CleanShutdownFileHandler.read``; ``None``: no file, i.e. the last
    shutdown was not clean -> -1).  The caller deletes the file (Kafka does at start-up). Total."""
    previous = NO_OFFSET if clean_shutdown_epoch is None else clean_shutdown_epoch
    return BrokerLifecycle(broker_id, incarnation_id, BrokerState.STARTING,
                           previous_broker_epoch=previous)


def registration_request(lifecycle: BrokerLifecycle) -> BrokerRegistrationRequest:
    """``sendBrokerRegistration``: the request a starting broker sends. Total."""
    return BrokerRegistrationRequest(lifecycle.broker_id, lifecycle.incarnation_id,
                                     lifecycle.previous_broker_epoch)


def registered(lifecycle: BrokerLifecycle, broker_epoch: int) -> BrokerLifecycle:
    """``BrokerRegistrationResponseHandler``: the broker learns its broker epoch. Total."""
    return replace(lifecycle, broker_epoch=broker_epoch)


def heartbeat_request(lifecycle: BrokerLifecycle, current_metadata_offset: int
                      ) -> BrokerHeartbeatRequest:
    """``sendBrokerHeartbeat``: ``wantFence = !readyToUnfence``, ``wantShutDown`` in
    PENDING_CONTROLLED_SHUTDOWN, and the offset the broker's metadata has replayed. Total."""
    return BrokerHeartbeatRequest(
        lifecycle.broker_id, lifecycle.broker_epoch, current_metadata_offset,
        not lifecycle.ready_to_unfence,
        lifecycle.state is BrokerState.PENDING_CONTROLLED_SHUTDOWN)


def set_ready_to_unfence(lifecycle: BrokerLifecycle) -> BrokerLifecycle:
    """``setReadyToUnfence``: log recovery is over; the next heartbeats ask to be unfenced."""
    return replace(lifecycle, ready_to_unfence=True)


def begin_controlled_shutdown(lifecycle: BrokerLifecycle) -> BrokerLifecycle:
    """``beginControlledShutdown``: a RUNNING broker goes to PENDING_CONTROLLED_SHUTDOWN (and asks
    for it in its heartbeats); any other state goes straight to SHUTTING_DOWN (Kafka: not yet
    running, nothing to move). Total."""
    if lifecycle.state is BrokerState.PENDING_CONTROLLED_SHUTDOWN:
        return lifecycle
    nxt = (BrokerState.PENDING_CONTROLLED_SHUTDOWN if lifecycle.state is BrokerState.RUNNING
           else BrokerState.SHUTTING_DOWN)
    return replace(lifecycle, state=nxt)


def handle_heartbeat_response(lifecycle: BrokerLifecycle, reply: BrokerHeartbeatReply
                              ) -> BrokerLifecycle:
    """``BrokerHeartbeatResponseEvent`` (3.7.0 BrokerLifecycleManager lines 488-531).

    STARTING -> RECOVERY once caught up; RECOVERY -> RUNNING once unfenced; PENDING_CONTROLLED
    _SHUTDOWN -> SHUTTING_DOWN once told to shut down; other states stay. Total.
    """
    state = lifecycle.state
    if state is BrokerState.STARTING and reply.is_caught_up:
        state = BrokerState.RECOVERY
    elif state is BrokerState.RECOVERY and not reply.is_fenced:
        state = BrokerState.RUNNING
    elif state is BrokerState.PENDING_CONTROLLED_SHUTDOWN and reply.should_shut_down:
        state = BrokerState.SHUTTING_DOWN
    return replace(lifecycle, state=state)


def clean_shutdown_file(lifecycle: BrokerLifecycle, clean: bool) -> int | None:
    """What the clean-shutdown file holds after the broker stops (3.7+, KIP-966): its broker
    epoch after a clean shutdown (``CleanShutdownFileHandler.write`` in ``BrokerServer
    .shutdown``), nothing after a crash or power loss. Total."""
    return lifecycle.broker_epoch if clean and lifecycle.broker_epoch >= 0 else None
