"""The ``kafka`` model's parameter vocabulary: the choices of its parameters (str enums whose
values are the ``-p`` spellings), the audit class of each parameter (``Kind``) and a
parameter's declaration (``ParamInfo``, made by ``declare``), which ``KafkaConfig``'s fields
carry as metadata (``isrlab.spec.kafka.config``)."""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum, StrEnum


class Kind(StrEnum):
    """What a parameter selects, as docs/kafka-model.md's audit classes it."""

    BOUND = "bound"
    """A bound of the search or the initial state."""
    VERSION = "version"
    """A protocol version: exact per version."""
    CONFIGURATION = "configuration"
    """A Kafka configuration: exact."""
    FAILURE = "failure"
    """Which real failures happen."""
    DETAIL = "detail"
    """Which behaviours are modelled (off removes behaviour or detail: an abstraction)."""
    FAULT = "fault"
    """A freedom beyond Kafka's code, off by default."""


class Acks(StrEnum):
    """The producer's ``acks``."""

    NONE = "0"
    LEADER = "1"
    ALL = "all"


class Crashes(StrEnum):
    """Broker crashes: none, clean shutdowns, or also power losses."""

    NONE = "none"
    CLEAN = "clean"
    UNCLEAN = "unclean"


class ExpandRule(StrEnum):
    """The ISR expansion rule (KAFKA-7128)."""

    HW = "hw"
    EPOCH_START = "epoch-start"


class FetchMode(StrEnum):
    """A follower fetch as one step or as request and response."""

    ATOMIC = "atomic"
    SPLIT = "split"


class UnavailableLeader(StrEnum):
    """What a follower told to follow a down leader does."""

    FOLLOW = "follow"
    FETCHER = "fetcher"
    CREATE_LOG = "create-log"
    SKIP = "skip"


class LeaderStateReset(StrEnum):
    """When ``makeLeader`` resets the remote replicas: on a leadership change (every
    release) or on every leader epoch change (issue 36's fix, no release)."""

    ON_LEADERSHIP = "on-leadership"
    ON_EPOCH = "on-epoch"


class IsrChanges(StrEnum):
    """How a leader changes the ISR: ZooKeeper writes or KIP-497's AlterPartition."""

    ZOOKEEPER = "zookeeper"
    ALTER_PARTITION = "alter-partition"


class Controller(StrEnum):
    """The controller: ZooKeeper mode's ``KafkaController`` or KRaft's ``QuorumController``."""

    ZOOKEEPER = "zookeeper"
    KRAFT = "kraft"


class UncleanDetectionParam(StrEnum):
    """KIP-966's unclean-shutdown detection at registration (``unclean_detection``)."""

    NONE = "none"
    PREVIOUS_EPOCH = "previous-epoch"
    NEW_INCARNATION = "new-incarnation"


class LastKnownLeaderParam(StrEnum):
    """What KIP-966's last-known-leader election asks of that replica (``last_known_leader``;
    ``isrlab.core.partition_change_builder.LastKnownLeaderCheck``)."""

    UNCHECKED = "unchecked"
    ACCEPTABLE = "acceptable"
    FORGET_UNCLEAN = "forget-unclean"


class EqualEpochDelta(StrEnum):
    """What ``makeLeader`` does with a delta of the leader's own partition epoch."""

    APPLY = "apply"
    SKIP = "skip"


class KRaftEpochBump(StrEnum):
    """When a KRaft ``PartitionChangeRecord`` bumps the leader epoch (``kraft_epoch_bump``)."""

    ISR_SHRINK = "isr-shrink"
    LEADER_CHANGE = "leader-change"


PARAM = "isrlab.param"
"""The key of a ``KafkaConfig`` field's ``ParamInfo`` in its metadata."""


Choices = type[Enum] | tuple[str, ...]


@dataclass(frozen=True, slots=True)
class ParamInfo:
    """A ``KafkaConfig`` field's declaration (its metadata): everything ``PARAMS``, validation,
    ``isrlab models`` and docs/kafka-model.md's table say of it besides name and default."""

    help: str
    kind: Kind
    kafka: str = ""
    """The Kafka versions of the default (``""``: not a version parameter)."""
    choices: tuple[str, ...] | None = None
    minimum: int | None = None
    maximum: int | None = None
    fault: bool = False
    aliases: tuple[tuple[str, str], ...] = ()


def declare(help: str, kind: Kind, *, kafka: str = "", choices: Choices | None = None,
            minimum: int | None = None, maximum: int | None = None, fault: bool = False,
            aliases: tuple[tuple[str, str], ...] = ()) -> dict[str, ParamInfo]:
    """A ``KafkaConfig`` field's metadata: its declaration (``ParamInfo``); ``choices`` an
    enum of strings (each member's value is a choice) or the choices themselves."""
    values = None if choices is None else (
        choices if isinstance(choices, tuple) else tuple(str(c.value) for c in choices))
    return {PARAM: ParamInfo(help, kind, kafka, values, minimum, maximum, fault, aliases)}
