"""``tla-kip279``: module Kip279 (Kafka 2.0).

A replica becoming follower truncates after the largest offset where its log and the
leader's hold the same record (``isrlab.core.truncation.kip279_truncation_offset``).  The module
lists an empty follower in two disjuncts, so that successor is generated twice (as TLC
counts).
"""

from __future__ import annotations

from isrlab.core.truncation import Log, kip279_truncation_offset
from isrlab.spec.tla.model import (
    N_TRUNCATE,
    RULE_KIP279,
    NativeAction,
    Out,
    Presumed,
    State,
    TlaModel,
    native_action,
)
from isrlab.spec.variants import Action, Variant

NAME = "BecomeFollowerTruncateKip279"


def first_non_matching_offset_from_tail(leader_log: Log, follower_log: Log, hw: int) -> int:
    """FirstNonMatchingOffsetFromTail(leader, follower) (the follower's HW is not used)."""
    return kip279_truncation_offset(leader_log, follower_log)


def become_follower(model: TlaModel, s: State, out: Out, pres: Presumed) -> None:
    """BecomeFollowerTruncateKip279: take a newer request, truncate after the last match."""
    model.become_follower_and_truncate(s, out, first_non_matching_offset_from_tail, NAME,
                                       twice=True)


# The compiled module (spec/tla/_native.c) runs this truncation, calling the rule on a miss.
native_action(become_follower, NativeAction(
    N_TRUNCATE, NAME, "follows", rule=first_non_matching_offset_from_tail, twice=True,
    inline=RULE_KIP279))

VARIANT = Variant(
    name="tla-kip279", module="Kip279", order=30,
    doc="TLA+ Kip279: truncation after the largest matching offset (Kafka 2.0)",
    replaces={"BecomeFollower": (
        Action(NAME, become_follower, lambda system: system.become_follower_family("kip279")),
    )},
    proofs="strengthening-fails",
    bmc_partial_order=True,
)
