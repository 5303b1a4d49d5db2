"""The ``kafka`` model's configuration (``KafkaConfig``) and the flags derived from it.

``KafkaSetup`` is the base of the model's component classes (``isrlab.spec.kafka.model``):
it checks a configuration, derives the flags every component reads (the truncation rule,
KIP-320's fencing, KIP-497's AlterPartition, KAFKA-4485's lag rules, the encoder's
layout) and holds the caches of the memoised helpers (``isrlab.spec.kafka.memo``).
"""

from __future__ import annotations

from dataclasses import dataclass, fields
from functools import cache

from isrlab.core.alter_partition import HwIsr
from isrlab.core.fencing import FetchFencing
from isrlab.core.log_recovery import HwCheckpointFile
from isrlab.core.partition import TruncationRule
from isrlab.core.produce import ACKS_ALL, ACKS_LEADER, ACKS_NONE
from isrlab.core.state import TopicPartition
from isrlab.core.truncation import Log
from isrlab.spec.kafka.elr import UNCLEAN_RECOVERIES
from isrlab.spec.kafka.state import Encoder, EpochCodec, KafkaState
from isrlab.spec.kafka.truncation_versions import BY_PARAM

State = KafkaState
Out = list[tuple[str, State]]

TP = TopicPartition("t", 0)
TRUNCATIONS = BY_PARAM
ACKS = {"0": ACKS_NONE, "1": ACKS_LEADER, "all": ACKS_ALL}
CRASHES = ("none", "clean", "unclean")
EXPAND_RULES = ("hw", "epoch-start")
FETCH_MODES = ("atomic", "split")
UNAVAILABLE_LEADERS = ("follow", "fetcher", "create-log", "skip")
CRASH_LOSSES = ("all-unflushed", "tail")
ISR_CHANGES = ("zookeeper", "alter-partition")
HW_ISRS = ("maximal", "committed")
LEADER_STATE_RESETS = ("on-leadership", "on-epoch")
HW_CHECKPOINT_FILES = tuple(f.value for f in HwCheckpointFile)
FETCH_FENCINGS = {f.value: f for f in FetchFencing}
"""``fetch_fencing``'s values (``none``, ``first-design``, ``final``)."""
NO_FETCH: tuple[()] = ()


@dataclass(frozen=True, slots=True)
class KafkaConfig:
    """Every parameter of the ``kafka`` model (see ``isrlab.spec.kafka.PARAMS`` for their
    meaning)."""

    brokers: int = 2
    max_records: int = 2
    max_leader_epoch: int = 2
    truncation: str = "kip279"
    fetch_fencing: str = "final"
    expand_rule: str = "epoch-start"
    unclean_election: bool = False
    min_isr: int = 1
    acks: str = "all"
    lag_ticks: int = 0
    isr_shrink: bool = True
    crashes: str = "clean"
    hw_checkpoint: bool = False
    reorder_requests: bool = False
    lost_requests: bool = False
    duplicate_requests: bool = False
    controlled_shutdown: bool = False
    preferred_election: bool = False
    reassignment: bool = False
    remove_dead_from_isr: bool = True
    max_controller_epoch: int = 0
    metadata: bool = False
    consumers: bool = False
    initial_isr: int = 0
    fetch: str = "atomic"
    kafka_4485: bool = True
    kafka_7414: bool = True
    elr: bool = True
    unclean_recovery: str = "first-alive"
    unavailable_leader: str = "fetcher"
    crash_loss: str = "all-unflushed"
    isr_changes: str = "alter-partition"
    hw_isr: str = "maximal"
    fence_ineligible: bool = True
    hw_checkpoint_file: str = "fsync"
    leader_state_reset: str = "on-leadership"

    def __reduce__(self) -> tuple[type[KafkaConfig], tuple[object, ...]]:
        """Pickled as its field values in order: the class compiled by mypyc (setup.py) is
        a native frozen class, which pickle's default cannot fill in field by field."""
        return (KafkaConfig, tuple(getattr(self, f.name) for f in fields(self)))

    def problems(self) -> list[str]:
        """Why this configuration is unusable (empty when it is fine)."""
        out = []
        if not 1 <= self.brokers <= 6:
            out.append(f"brokers must be in 1..6, got {self.brokers}")
        if self.truncation not in TRUNCATIONS:
            out.append(f"truncation must be one of {', '.join(TRUNCATIONS)}")
        if self.acks not in ACKS:
            out.append(f"acks must be one of {', '.join(ACKS)}")
        if self.crashes not in CRASHES:
            out.append(f"crashes must be one of {', '.join(CRASHES)}")
        if self.expand_rule not in EXPAND_RULES:
            out.append(f"expand_rule must be one of {', '.join(EXPAND_RULES)}")
        for name, value, allowed in (
            ("unclean_recovery", self.unclean_recovery, UNCLEAN_RECOVERIES),
            ("unavailable_leader", self.unavailable_leader, UNAVAILABLE_LEADERS),
            ("crash_loss", self.crash_loss, CRASH_LOSSES),
            ("isr_changes", self.isr_changes, ISR_CHANGES),
            ("hw_isr", self.hw_isr, HW_ISRS),
            ("hw_checkpoint_file", self.hw_checkpoint_file, HW_CHECKPOINT_FILES),
            ("leader_state_reset", self.leader_state_reset, LEADER_STATE_RESETS),
        ):
            if value not in allowed:
                out.append(f"{name} must be one of {', '.join(allowed)}")
        if self.fetch not in FETCH_MODES:
            out.append(f"fetch must be one of {', '.join(FETCH_MODES)}")
        if self.fetch_fencing not in FETCH_FENCINGS:
            out.append(f"fetch_fencing must be one of {', '.join(FETCH_FENCINGS)}")
        if self.initial_isr > self.brokers:
            out.append(f"initial_isr {self.initial_isr} exceeds the {self.brokers} replicas")
        if self.min_isr > self.brokers:
            out.append(f"min_isr {self.min_isr} exceeds the {self.brokers} replicas")
        if self.max_leader_epoch > 60 or self.max_records > 30:
            out.append("max_leader_epoch <= 60 and max_records <= 30, please")
        return out

    @property
    def fencing(self) -> FetchFencing:
        """``fetch_fencing`` as ``isrlab.core.fencing.FetchFencing`` (a valid value only)."""
        return FETCH_FENCINGS[self.fetch_fencing]


def _keep_log(follower_log: Log, follower_hw: int, leader_log: Log) -> int:
    """The ``TruncationRule`` of ``make_follower`` under KIP-320's first design: truncate
    nothing (the follower truncates later, on a fetch error: ``KafkaModel._fetch``)."""
    return len(follower_log)


class KafkaSetup:
    """The model's configuration with the flags derived from it, and the caches of its
    memoised helpers (``isrlab.spec.kafka.memo``): the base of the component classes
    (``isrlab.spec.kafka.model`` says how they stack)."""

    def __init__(self, config: KafkaConfig) -> None:
        problems = config.problems()
        if problems:
            raise ValueError("; ".join(problems))
        self.name = "kafka"
        self.cfg = config
        self.n = config.brokers
        self.codec = EpochCodec(config.max_leader_epoch + 1)
        self.sat = config.lag_ticks + 1
        self.rule: TruncationRule = TRUNCATIONS[config.truncation].explicit
        self.acks = ACKS[config.acks]
        self.all_mask = (1 << self.n) - 1
        self.split = config.fetch == "split"
        # KIP-320: final (2.1+) fences fetches and truncation by leader epoch; the first
        # design records a fetch first and truncates lazily, never in make_follower
        self.fenced = config.fencing is FetchFencing.FINAL
        self.first_design = config.fencing is FetchFencing.FIRST_DESIGN
        self.follow_rule: TruncationRule = _keep_log if self.first_design else self.rule
        # the fetcher's pending truncation when a follower's leader is down (0.11+ rules)
        self.deferred_truncation = (config.unavailable_leader == "fetcher"
                                    and config.truncation != "hw" and not self.first_design)
        self.extended = config.elr or config.unavailable_leader in ("fetcher", "skip")
        self.skip = config.unavailable_leader == "skip"
        # KIP-497: the leader proposes ISR changes to the controller (AlterPartition)
        self.alter = config.isr_changes == "alter-partition"
        self.hw_rule = HwIsr(config.hw_isr)
        # KAFKA-4485 (0.10.2+): caught-up replicas count for the HW, within lag_ticks
        self.hw_lag: int | None = config.lag_ticks if config.kafka_4485 else None
        self.previous_fetch = config.kafka_4485
        # makeLeader resets the remotes on an epoch change too (a fix in no release)
        self.reset_on_epoch = config.leader_state_reset == "on-epoch"
        # a remote's previous fetch, unknown (a new leader's UnknownLogReadResult)
        self.no_fetch: tuple[int, ...] = (0, self.sat) if config.kafka_4485 else ()
        self._encoder = Encoder(self.previous_fetch, self.extended, self.alter,
                                self.first_design)
        self._memo: dict[str, dict[object, object]] = {}  # memoised methods' caches

    @staticmethod
    @cache
    def _label(action: str, arg: object) -> str:
        return f"{action}({arg})"

