"""``tla-kip101``: module Kip101 (Kafka 0.11).

A replica becoming follower truncates at the leader's end offset of the follower's latest
epoch (OffsetForLeaderEpoch; ``isrlab.core.truncation.kip101_truncation_offset``).
"""

from __future__ import annotations

from isrlab.core.truncation import kip101_truncation_offset
from isrlab.spec.tla.model import (
    N_TRUNCATE,
    NativeAction,
    Out,
    Presumed,
    State,
    TlaModel,
    native_action,
)
from isrlab.spec.variants import Action, Variant

NAME = "BecomeFollowerTruncateKip101"


def become_follower(model: TlaModel, s: State, out: Out, pres: Presumed) -> None:
    """BecomeFollowerTruncateKip101: take a newer request, truncate by OffsetForLeaderEpoch."""
    model.become_follower_and_truncate(s, out, kip101_truncation_offset, NAME)


# The compiled module (spec/tla/_native.c) runs this truncation, calling the rule on a miss.
native_action(become_follower,
              NativeAction(N_TRUNCATE, NAME, "follows", rule=kip101_truncation_offset))

VARIANT = Variant(
    name="tla-kip101", module="Kip101", order=20,
    doc="TLA+ Kip101: truncation by OffsetForLeaderEpoch (Kafka 0.11)",
    replaces={"BecomeFollower": (
        Action(NAME, become_follower, lambda system: system.become_follower_family("kip101")),
    )},
    proofs="strengthening-fails",
    bmc_partial_order=True,
)
