"""The ``kafka`` model's follower truncation rules as values: one registry, every table derived.

Where a follower truncates when it learns of a new leader changed four times in Kafka's
history (``ReplicaManager.makeFollowers`` to Kafka 0.10.2, then
``ReplicaFetcherThread.maybeTruncate`` with OffsetsForLeaderEpoch: KIP-101 in 0.11,
KIP-279 in 2.0, KAFKA-7415 in 2.1).  A ``TruncationVersion`` is one of them: the value of the
``kafka`` model's ``truncation`` parameter, the rule's name (used by ``core``'s tests, the Z3
encodings' action labels ``MakeFollower[name]`` and the recorded proofs), the Kafka versions
that run it, and the pure ``isrlab.core.partition`` function the explicit model calls; its Z3
relation is ``isrlab.spec.symbolic.core_kafka.RULES[name]`` (that module imports this one, never
the reverse).  ``TRUNCATION_VERSIONS`` is the one list; the parameter's choices and help
(``isrlab.spec.kafka.config.KafkaConfig``), the model's dispatch (``isrlab.spec.kafka.config``),
``TRUNCATION_RULES`` and the symbolic ``RULES`` are derived from it, so a new rule is its two
functions plus one entry here (and its name in ``core_kafka``'s table).
"""

from __future__ import annotations

from dataclasses import dataclass

from isrlab.core.partition import (
    TruncationRule,
    truncate_by_leader_epoch_kip101,
    truncate_by_leader_epoch_kip279,
    truncate_by_leader_epoch_kip279_2_0,
    truncate_to_high_watermark,
)


@dataclass(frozen=True, slots=True)
class TruncationVersion:
    """One follower truncation rule of the ``kafka`` model.

    ``param`` is the ``truncation`` parameter's value, ``name`` the rule's name elsewhere
    (``core`` tests, Z3 action labels, proofs, and the key of its Z3 form in
    ``isrlab.spec.symbolic.core_kafka.RULES``); ``help`` says what it does and which Kafka
    versions run it; ``explicit`` is the ``isrlab.core.partition`` rule.
    """

    param: str
    name: str
    help: str
    explicit: TruncationRule


TRUNCATION_VERSIONS: tuple[TruncationVersion, ...] = (
    TruncationVersion("hw", "truncate-to-hw", "to its own HW: Kafka <= 0.10.2",
                      truncate_to_high_watermark),
    TruncationVersion("kip101", "kip101",
                      "OffsetsForLeaderEpoch v0, HW when UNDEFINED: 0.11-1.1",
                      truncate_by_leader_epoch_kip101),
    TruncationVersion("kip279-2.0", "kip279-2.0", "KIP-279, HW when UNDEFINED: 2.0",
                      truncate_by_leader_epoch_kip279_2_0),
    TruncationVersion("kip279", "kip279",
                      "to the last offset both logs agree on: KIP-279 with KAFKA-7415, 2.1+",
                      truncate_by_leader_epoch_kip279),
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
