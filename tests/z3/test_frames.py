"""The forward frame lemmas of ``bmc`` (``isrlab.checker.z3.frames``): on the two-counter toy,
whose reachable states per step are counted by hand (tests/z3/toys.py), and on TLC's
configuration-A trace of KafkaTruncateToHighWatermark."""

from __future__ import annotations

import pytest
import z3

from isrlab.checker.z3 import bmc
from isrlab.checker.z3.frames import ReachFrames, candidates, holds_in
from isrlab.checker.z3.system import make_frame
from isrlab.spec.symbolic.bridge import replay
from tests.z3.conftest import build_pair
from tests.z3.toys import Counters

CONSTANTS = (0, 1, 2, 3, 4)


def frames_of(system: Counters, steps: int) -> ReachFrames[tuple[int, int]]:
    frames = ReachFrames(system, lambda s: z3.BoolVal(True), CONSTANTS)
    frames.lemma(steps, make_frame(system.signature(), steps))
    return frames


def successors(x: int, y: int) -> list[tuple[int, int]]:
    """The toy's steps, by hand: IncX while x < 3, IncY while y < x."""
    return [(x + 1, y)] * (x < 3) + [(x, y + 1)] * (y < x)


def test_each_frame_keeps_exactly_the_candidates_its_successors_satisfy() -> None:
    # An independent run of the same abstract iteration over the toy's states in 0..4:
    # F_0 is what (0, 0) satisfies; F_(k+1) what every successor of every state of F_k
    # satisfies.  F_2 = {1 <= x <= 2, 0 <= y <= 1, y <= x} admits (1, 0), reachable only in
    # one step, so F_3 is coarser than the states reachable in exactly 3 steps.
    frames = frames_of(Counters(), 6)
    every = candidates(Counters().signature(), CONSTANTS)
    grid = [(x, y) for x in range(5) for y in range(5)]

    def kept(states: list[tuple[int, int]]) -> list[tuple[str, str, str | int]]:
        return [c for c in every if all(holds_in(c, {"x": x, "y": y}) for x, y in states)]

    expected = kept([(0, 0)])
    for k in range(7):
        assert frames.frames[k] == expected, k
        inside = [p for p in grid if all(holds_in(c, {"x": p[0], "y": p[1]}) for c in expected)]
        expected = kept([q for p in inside for q in successors(*p)])
    assert ("ge", "x", 1) in frames.frames[3] and ("le", "y", 2) in frames.frames[3]


def test_the_frames_stop_asking_once_a_step_adds_nothing() -> None:
    # y rises by at most one a step, so the frames change until y can reach 3; once two
    # steps agree no query is asked and every deeper step has the same lemmas.
    frames = frames_of(Counters(jumps=True), 12)
    assert frames.stable
    asked = frames.queries
    frames.lemma(20, make_frame(Counters().signature(), 20))
    assert frames.queries == asked
    assert frames.frames[20] == frames.frames[12]


@pytest.mark.parametrize("solver", ["z3", "yices"])
def test_frame_lemmas_change_no_verdict(solver: str) -> None:
    for system, invariants, depth in ((Counters(), ["SumBelow5"], 8),
                                      (Counters(jumps=True), ["SumBelow5"], 8),
                                      (Counters(), ["YAtMostX", "XAtMost3"], 7)):
        plain = bmc(system, invariants, depth, logic="QF_LIA", solver=solver)
        framed = bmc(system, invariants, depth, logic="QF_LIA", solver=solver,
                     frame_constants=CONSTANTS)
        assert [d.verdict for d in framed.depths] == [d.verdict for d in plain.depths]
        assert framed.proved_steps == plain.proved_steps
        assert (len(framed.trace) if framed.trace else None) == (
            len(plain.trace) if plain.trace else None)


def test_frame_lemmas_keep_tlc_s_length_on_truncate_to_hw_configuration_a() -> None:
    # docs/conformance.md, configuration A: KafkaTruncateToHighWatermark, WeakIsr, 9 states
    # (TLC 2.15), every shorter depth refuted, with F_k asserted on every frame.
    model, system = build_pair("tla-truncate-to-hw")
    result = bmc(system, ["WeakIsr"], 9, logic="QF_LIA", frame_constants=system.frame_constants,
                 **system.symmetry_breaking(["WeakIsr"]))
    assert result.trace is not None
    assert (len(result.trace), result.proved_steps) == (9, 7)
    replay(model, result.trace, system.replicas)  # a real trace of the explicit model
