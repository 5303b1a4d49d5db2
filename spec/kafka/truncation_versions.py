"""The ``kafka`` model's follower truncation rules as values: one registry, every table derived.

Where a follower truncates when it learns of a new leader changed four times in Kafka's
history (``ReplicaManager.makeFollowers`` to Kafka 0.10.2, then
``ReplicaFetcherThread.maybeTruncate`` with OffsetsForLeaderEpoch: KIP-101 in 0.11,
KIP-279 in 2.0, KAFKA-7415 in 2.1).  A ``TruncationVersion`` is one of them: the value of the
``kafka`` model's ``truncation`` parameter, the rule's name (used by ``core``'s tests, the Z3
encodings' action labels ``MakeFollower[name]`` and the recorded proofs), the Kafka versions
that run it, and its two forms: the pure ``isrlab.core.partition`` function the explicit model calls
and the Z3 relation of ``isrlab.spec.symbolic.core_kafka``.  ``TRUNCATION_VERSIONS`` is the one
list;
the parameter's choices and help (``isrlab.spec.kafka.PARAMS``), the model's dispatch
(``isrlab.spec.kafka.model``), ``TRUNCATION_RULES`` and the symbolic ``RULES`` are derived from it,
so a new rule is its two functions plus one entry here.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from types import ModuleType
from typing import Any

from isrlab.core.partition import (
    TruncationRule,
    truncate_by_leader_epoch_kip101,
    truncate_by_leader_epoch_kip279,
    truncate_by_leader_epoch_kip279_2_0,
    truncate_to_high_watermark,
)


def _z3() -> ModuleType:
    """``isrlab.spec.symbolic.core_kafka``, imported only when a symbolic rule is asked for (it
    imports Z3, which the explicit model never needs)."""
    import isrlab.spec.symbolic.core_kafka as module

    return module


@dataclass(frozen=True, slots=True)
class TruncationVersion:
    """One follower truncation rule of the ``kafka`` model.

    ``param`` is the ``truncation`` parameter's value, ``name`` the rule's name elsewhere
    (``core`` tests, Z3 action labels, proofs); ``help`` says what it does and which Kafka
    versions run it; ``explicit`` is the ``isrlab.core.partition`` rule and ``symbolic`` returns the
    ``isrlab.spec.symbolic.core_kafka`` rule (a thunk: the Z3 module is imported on demand).
    """

    param: str
    name: str
    help: str
    explicit: TruncationRule
    symbolic: Callable[[], Any]


TRUNCATION_VERSIONS: tuple[TruncationVersion, ...] = (
    TruncationVersion("hw", "truncate-to-hw", "to its own HW: Kafka <= 0.10.2",
                      truncate_to_high_watermark, lambda: _z3().truncate_to_hw_rule),
    TruncationVersion("kip101", "kip101",
                      "OffsetsForLeaderEpoch v0, HW when UNDEFINED: 0.11-1.1",
                      truncate_by_leader_epoch_kip101, lambda: _z3().kip101_rule),
    TruncationVersion("kip279-2.0", "kip279-2.0", "KIP-279, HW when UNDEFINED: 2.0",
                      truncate_by_leader_epoch_kip279_2_0, lambda: _z3().kip279_2_0_rule),
    TruncationVersion("kip279", "kip279",
                      "to the last offset both logs agree on: KIP-279 with KAFKA-7415, 2.1+",
                      truncate_by_leader_epoch_kip279, lambda: _z3().kip279_rule),
)
"""Every truncation rule, oldest first (the parameter lists its choices in this order)."""

BY_PARAM: dict[str, TruncationVersion] = {t.param: t for t in TRUNCATION_VERSIONS}
"""The rules by the ``truncation`` parameter's value."""

TRUNCATION_RULES: dict[str, TruncationRule] = {t.name: t.explicit for t in TRUNCATION_VERSIONS}
"""The explicit rules by name, for models, tests and ``isrlab demo``."""


def parameter_help() -> str:
    """The ``truncation`` parameter's help: each choice with what it does and its versions."""
    choices = ", ".join(f"{t.param} ({t.help})" for t in TRUNCATION_VERSIONS)
    return f"follower truncation on a leader change: {choices}"
