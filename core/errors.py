"""Outcomes as values: Kafka's response codes, bad input, and failed leader elections.

Nothing in ``core`` raises for a protocol outcome or for bad input.  Three kinds of value
stand in for Kafka's exceptions and error codes:

* ``Errors`` -- the subset of ``org.apache.kafka.common.protocol.Errors`` this protocol uses; it
  travels inside normal results (a LeaderAndIsr response, a produce answer);
* ``InvalidInput`` -- the arguments break a precondition (an ISR that is not a subset of
  the assigned replicas, a negative offset, ...); returned as ``Failure(InvalidInput)``;
* ``ElectionFailed`` -- a leader selector found no eligible replica (Kafka's
  ``NoReplicaOnlineException`` / ``StateChangeFailedException``).
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum, unique

from returns.result import Failure


@unique
class Errors(Enum):
    """Kafka's wire error codes (the numbers are Kafka's)."""

    NONE = 0
    OFFSET_OUT_OF_RANGE = 1
    UNKNOWN_TOPIC_OR_PARTITION = 3
    NOT_LEADER_FOR_PARTITION = 6
    STALE_CONTROLLER_EPOCH = 11
    NOT_COORDINATOR = 16
    NOT_ENOUGH_REPLICAS = 19
    NOT_ENOUGH_REPLICAS_AFTER_APPEND = 20
    CLUSTER_AUTHORIZATION_FAILED = 31
    NOT_CONTROLLER = 41
    INVALID_REQUEST = 42
    OPERATION_NOT_ATTEMPTED = 55
    STALE_BROKER_EPOCH = 77
    PREFERRED_LEADER_NOT_AVAILABLE = 80
    ELIGIBLE_LEADERS_NOT_AVAILABLE = 83
    ELECTION_NOT_NEEDED = 84
    INVALID_UPDATE_VERSION = 95
    INELIGIBLE_REPLICA = 107
    NEW_LEADER_ELECTED = 108
    KAFKA_STORAGE_ERROR = 56
    FENCED_LEADER_EPOCH = 74
    UNKNOWN_LEADER_EPOCH = 75


@unique
class Problem(Enum):
    """What is wrong with an argument; one member per precondition ``core`` checks."""

    NEGATIVE_VALUE = "negative value"
    HW_ABOVE_LEO = "high watermark above log end offset"
    LOG_START_ABOVE_HW = "log start offset above high watermark"
    ISR_NOT_SUBSET_OF_AR = "ISR is not a subset of the assigned replicas"
    EMPTY_ISR = "ISR is empty"
    LEADER_NOT_IN_ISR = "leader is not in the ISR"
    DUPLICATE_REPLICA = "a replica id appears twice"
    NOT_A_REPLICA = "broker is not an assigned replica"
    WRONG_ROLE = "broker has the wrong role for this call"
    OFFSET_OUT_OF_LOG = "offset outside the log"
    BAD_REMOTE_REPLICAS = "remote replica entries do not match the assigned replicas"
    BAD_ACKS = "acks must be 0, 1 or -1"
    DUPLICATE_PARTITION = "a partition appears twice"
    BAD_CONFIG = "configuration value out of range"


@dataclass(frozen=True, slots=True)
class InvalidInput:
    """A rejected argument: which precondition failed and a one-line human explanation."""

    problem: Problem
    detail: str

    def __str__(self) -> str:
        return f"{self.problem.value}: {self.detail}"


@unique
class ElectionError(Enum):
    """Why a leader selector could not elect (Kafka's exception class, as a value)."""

    NO_REPLICA_ONLINE = "NoReplicaOnlineException"
    STATE_CHANGE_FAILED = "StateChangeFailedException"
    LEADER_ELECTION_NOT_NEEDED = "LeaderElectionNotNeededException"


@dataclass(frozen=True, slots=True)
class ElectionFailed:
    """A failed election: the error kind and the reason Kafka's message would give."""

    error: ElectionError
    reason: str


def reject(problem: Problem, detail: str) -> Failure[InvalidInput]:
    """``Failure(InvalidInput(problem, detail))``: a rejected argument, as a value."""
    return Failure(InvalidInput(problem, detail))
