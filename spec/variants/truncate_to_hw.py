"""``tla-truncate-to-hw``: module KafkaTruncateToHighWatermark (Kafka before 0.11).

A replica becoming follower truncates its log to its own high watermark
(``isrlab.core.truncation.truncate_to_high_watermark_offset``).
"""

from __future__ import annotations

from isrlab.core.truncation import Log, truncate_to_high_watermark_offset
from isrlab.spec.tla.model import (
    N_TRUNCATE,
    RULE_TO_HW,
    NativeAction,
    Out,
    Presumed,
    State,
    TlaModel,
    native_action,
)
from isrlab.spec.variants import Action, Variant

NAME = "BecomeFollowerTruncateToHighWatermark"


def to_high_watermark(leader_log: Log, follower_log: Log, follower_hw: int) -> int:
    """The follower's own high watermark, whatever the logs hold."""
    return truncate_to_high_watermark_offset(follower_hw)


def become_follower(model: TlaModel, s: State, out: Out, pres: Presumed) -> None:
    """BecomeFollowerTruncateToHighWatermark: take a newer request, truncate to the own HW."""
    model.become_follower_and_truncate(s, out, to_high_watermark, NAME)


# The compiled module (spec/tla/_native.c) runs this truncation, calling the rule on a miss.
native_action(become_follower, NativeAction(N_TRUNCATE, NAME, "follows", rule=to_high_watermark,
                                            inline=RULE_TO_HW))

VARIANT = Variant(
    name="tla-truncate-to-hw", module="KafkaTruncateToHighWatermark", order=10,
    doc="TLA+ KafkaTruncateToHighWatermark: followers truncate to their own HW (Kafka < 0.11)",
    replaces={"BecomeFollower": (
        Action(NAME, become_follower, lambda system: system.become_follower_family("hw")),
    )},
    proofs="strengthening-fails",
)
