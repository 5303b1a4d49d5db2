"""The known Kafka bugs (docs/scenarios.md): each buggy version breaks a general invariant of
the catalogue, and the fixing version finds nothing in the same bounds.

Trace lengths are asserted only where the minimal story can be counted by hand from
docs/scenarios.md, step by step (see the comments); elsewhere only the invariant is asserted.
"""

from __future__ import annotations

import os
from functools import cache

import pytest

from isrlab.checker.registry import Param, ParamValue
from isrlab.checker.report import CheckResult
from isrlab.spec.kafka.scenarios import BY_KEY, PINNED, SCENARIOS, Scenario
from isrlab.spec.kafka.scenarios import run as run_scenario


@cache
def run(scenario: Scenario, fixed: bool) -> CheckResult:
    """Each scenario run once per session (the story tests reuse the bug runs)."""
    return run_scenario(scenario, fixed)


VERY_HEAVY = {"stale-leo-failover"}
"""Scenarios whose runs explore millions of states (2.1 and 6.2 million: minutes even
compiled), run only with ``ISRLAB_VERY_HEAVY=1``; tests/spec/kafka/test_stale_leo.py replays
the scenario's trace step by step in every run."""


def _explored() -> list[object]:
    heavy = [pytest.mark.slow, pytest.mark.skipif(not os.environ.get("ISRLAB_VERY_HEAVY"),
                                                  reason="millions of states: "
                                                         "ISRLAB_VERY_HEAVY=1 runs it")]
    return [pytest.param(s, id=s.key, marks=heavy if s.key in VERY_HEAVY else ())
            for s in SCENARIOS]


@pytest.mark.same_worker("kafka-scenario-bug-runs")
@pytest.mark.parametrize("scenario", _explored())
def test_the_buggy_version_breaks_the_scenarios_invariant(scenario: object) -> None:
    assert isinstance(scenario, Scenario)
    result = run(scenario, fixed=False)
    assert result.violation is not None
    assert result.violation.invariant == scenario.invariant


@pytest.mark.parametrize("scenario", _explored())
def test_the_fixing_version_finds_nothing_in_the_same_bounds(scenario: object) -> None:
    assert isinstance(scenario, Scenario)
    result = run(scenario, fixed=True)
    assert result.violation is None
    assert result.complete


@pytest.mark.same_worker("kafka-scenario-bug-runs")
def test_kip101_scenario_1_is_the_ten_state_story() -> None:
    # docs/scenarios.md #1 with one record, counted by hand (each step is needed):
    #  1 Init (leader B=0, follower A=1, ISR {0,1})   2 Produce m0 on B
    #  3 A fetches m0 (B's HW still 0)                4 A fetches again: B's HW 1, m0 committed
    #  5 A crashes   6 A restarts (LeaderAndIsr epoch 0 queued to A)
    #  7 A gets LeaderAndIsr, makeFollower truncates to its HW 0
    #  8 B crashes   9 the controller elects A (still in the ISR; ElectLeader, or B's
    #    restart, which handles the pending failure first)
    # 10 A learns it leads, without m0.
    # Steps 7 to 9 also come as 7 B crashes, 8 B's restart elects A (epoch 1 queued behind
    # epoch 0 on A's channel), 9 A handles epoch 0 and truncates: the order the checker
    # prints under the Kafka 2.1 defaults (kafka_4485); recounted by hand from that printed
    # trace, still 10 states.
    result = run(BY_KEY["kip101-1"], fixed=False)
    assert result.violation is not None
    assert len(result.violation.trace) == 10
    actions = [step.action.split("(")[0] for step in result.violation.trace]
    assert actions.count("Crash") == 2 and actions.count("Fetch") == 2


@pytest.mark.same_worker("kafka-scenario-bug-runs")
def test_jepsen_loss_is_the_seven_state_story() -> None:
    # docs/scenarios.md #5, counted by hand: 1 Init  2 time passes without n2 fetching
    # 3 n1 shrinks the ISR to {n1}  4 an acks=all write on n1: the HW passes it at once
    # (ISR of one, min_isr=1), it is acknowledged  5 n1 dies  6 unclean election of n2
    # (ElectLeader, or n1's restart handling the failure first)  7 n2 leads without it.
    # (The write may also come first and wait until the shrink: same length.)  Recounted
    # by hand from the trace the checker prints under the Kafka 2.1 defaults: 7 states.
    result = run(BY_KEY["jepsen"], fixed=False)
    assert result.violation is not None
    assert len(result.violation.trace) == 7


@pytest.mark.same_worker("kafka-scenario-bug-runs")
def test_acks1_loss_is_the_five_state_story() -> None:
    # docs/scenarios.md #6: 1 Init  2 the leader appends and acknowledges m (acks=1)
    # 3 it dies before any fetch  4 clean election of the follower  5 it leads without m.
    result = run(BY_KEY["acks1"], fixed=False)
    assert result.violation is not None
    assert len(result.violation.trace) == 5


@pytest.mark.same_worker("kafka-scenario-bug-runs")
def test_kafka7128_is_the_eleven_state_story() -> None:
    # docs/scenarios.md #7 with A=0, B=1, C=2 (ISR {0,1}, C outside, empty), counted by hand:
    #  1 Init   2 Produce m0 on A   3 B's fetch request: A sends m0 (HW 0)
    #  4 B's fetch response: B appends m0, learns HW 0
    #  5 B's next fetch request: A's HW 1, m0 committed (the response, HW 0, never matters)
    #  6 leadership moves to B (reassignment: the ISR {0,1} stays, so B's HW stays 0 while
    #    A's LEO is unknown to it; an offline election would leave B alone in the ISR and
    #    raise its HW at once)   7 B handles its LeaderAndIsr: leader of epoch 1, HW 0
    #  (5 and 6 in either order: under the Kafka 2.1 defaults (kafka_4485) the checker
    #  prints the reassignment first, B's fetch still served by A in epoch 0; recounted by
    #  hand from that printed trace, still 11 states)
    #  8 C handles its LeaderAndIsr: it follows B
    #  9 C's fetch request at offset 0 >= B's HW 0: C joins the ISR (the response with m0
    #    is still in flight)
    # 10 leadership moves to C, in the ISR (clean)   11 C leads epoch 2 without m0.
    # (A and B dying before C's election, as in the story, takes more steps.)
    result = run(BY_KEY["kafka7128"], fixed=False)
    assert result.violation is not None
    assert len(result.violation.trace) == 11
    actions = [step.action.split("(")[0] for step in result.violation.trace]
    assert actions.count("FetchRequest") == 3 and actions.count("FetchResponse") == 1


def test_kip279_is_the_twelve_state_failover_story() -> None:
    # docs/scenarios.md #3, counted by hand from the trace the checker prints under the
    # Kafka 2.1 defaults (kafka_4485; the order differs from the one printed before, the
    # length does not): 1 Init  2 Reassign: broker 1 leads epoch 1 (queued to both)
    # 3 broker 1 handles epoch 1  4 Produce m0 on broker 0 (still leading epoch 0)
    # 5 Reassign: broker 0 leads epoch 2 (queued behind epoch 1 on broker 0's channel)
    # 6 Produce m1 on broker 1 (epoch 1, offset 0)
    # 7 ControllerFailover: the old queue to broker 0 (epoch 1 first) is never delivered
    # 8 broker 0 handles the new controller's epoch 2 (never having heard of epoch 1)
    # 9 Produce m2 on broker 0 after m0
    # 10 broker 1 handles the new controller's epoch 2 (follower of 0; KIP-101's answer,
    #    the start of epoch 2, offset 1, keeps m1)  11 broker 1 fetches m2 (broker 0's HW 1)
    # 12 broker 1 fetches again: its HW 1, over a different record at offset 0.
    # Without the failover one queue per broker makes broker 0 handle epoch 1 first.
    result = run(BY_KEY["kip279"], fixed=False)
    assert result.violation is not None
    assert len(result.violation.trace) == 12
    actions = [step.action.split("(")[0] for step in result.violation.trace]
    assert actions.count("ControllerFailover") == 1 and actions.count("Produce") == 3


def test_kafka7414_is_the_ten_state_power_loss_story() -> None:
    # docs/scenarios.md #8 (Kafka 2.0: no fencing), counted by hand:
    #  1 Init (0 leads, 1 follows, ISR {0,1})   2 Produce m0 on 0   3 1 fetches m0 (HW 0)
    #  4 0 crashes   5 0 restarts: the controller handles the failure first and elects 1
    #    (epoch 1, ISR {1})   6 0 handles epoch 1: a follower of 1 (both logs hold m0)
    #  7 1 loses power: m0 was never flushed, its log is empty (its epoch-1 request, never
    #    handled, goes with the connection)   8 1 restarts: the only ISR member, it is
    #    elected again (epoch 2)   9 1 handles epoch 2: it leads with an empty log
    # 10 0, still following 1 (without KIP-320 it fetches from epoch 1), fetches at offset
    #    1 > 1's LEO 0 and its broker exits.
    # Shorter is not possible: the leader must lose a record its follower holds after the
    # follower last truncated against it, which only a power loss of a re-elected leader does.
    result = run(BY_KEY["kafka7414"], fixed=False)
    assert result.violation is not None
    assert len(result.violation.trace) == 10
    actions = [step.action.split("(")[0] for step in result.violation.trace]
    assert actions.count("PowerLoss") == 1 and actions[-1] == "Fetch"


def test_kip101_halt_is_scenario_1_and_two_steps() -> None:
    # docs/scenarios.md #9: scenario 1's 10 states (test above) leave broker 1 (A) leading
    # epoch 1 without m0, while broker 0 (B), restarted, holds m0 with HW 1; then
    # 11 B handles epoch 1: a follower of A, truncating to its HW 1 keeps m0
    # 12 B fetches at offset 1 > A's LEO 0: its broker exits (unclean election disabled).
    # (B may handle epoch 1 before A does: same length.)
    result = run(BY_KEY["kip101-halt"], fixed=False)
    assert result.violation is not None
    assert len(result.violation.trace) == 12
    actions = [step.action.split("(")[0] for step in result.violation.trace]
    assert actions.count("Crash") == 2 and actions[-1] == "Fetch"


def test_kafka7415_is_the_thirteen_state_story() -> None:
    # docs/scenarios.md #10, counted by hand (each step is needed):
    #  1 Init   2 Produce m0 on 0 (epoch 0)   3 1 fetches m0   4 1 fetches again: 0's HW 1,
    #    m0 committed   5 Reassign: 1 leads epoch 1   6 1 handles it   7 Produce m1 on 1
    #    (epoch 1, offset 1: 1's latest epoch is now 1)   8 Reassign: 0 leads epoch 2
    #  9 0 handles epoch 1 (queued first on its channel)   10 0 handles epoch 2: leader, no
    #    record in epoch 2 (steps 7 to 9 in any order)
    # 11 1 handles epoch 2: it asks 0 for the end of epoch 1; 0's records are all of epoch 0
    #    and 2.0's leader answers UNDEFINED, so 1 truncates to its HW 0 and drops m0 and m1
    # 12 Reassign: 1 leads epoch 3 (in the ISR: clean)   13 1 leads without m0.
    result = run(BY_KEY["kafka7415"], fixed=False)
    assert result.violation is not None
    assert len(result.violation.trace) == 13
    actions = [step.action.split("(")[0] for step in result.violation.trace]
    assert actions.count("Reassign") == 3 and actions.count("Produce") == 2


@pytest.mark.parametrize("scenario", SCENARIOS, ids=lambda s: s.key)
def test_every_run_names_each_pinned_parameter_once(scenario: object) -> None:
    assert isinstance(scenario, Scenario)
    for fixed in (False, True):
        names = [p.split("=", 1)[0] for p in scenario.params(fixed)]
        assert [k for k in PINNED if names.count(k) != 1] == []
        assert len(names) == len(set(names))


@pytest.mark.parametrize("scenario", SCENARIOS, ids=lambda s: s.key)
def test_the_bug_and_the_fix_differ_only_in_their_own_parameters(scenario: object) -> None:
    assert isinstance(scenario, Scenario)
    bug, fix = set(scenario.params(False)), set(scenario.params(True))
    assert bug - fix == set(scenario.bug) and fix - bug == set(scenario.fix)
    assert {p.split("=")[0] for p in scenario.bug} == {p.split("=")[0] for p in scenario.fix}


def test_a_change_of_the_models_defaults_changes_no_scenario() -> None:
    # The kafka model with every PINNED parameter's default moved to another value (as
    # when the defaults become a newer Kafka): each scenario run parses to the same values.
    from dataclasses import replace

    from isrlab.models import registry

    reg = registry()
    entry = reg.get("kafka").unwrap()

    def other(param: Param) -> ParamValue:
        if param.type is bool:
            return not param.default
        assert param.choices is not None
        return next(c for c in param.choices if c != param.default)

    moved = replace(entry, params=tuple(
        replace(p, default=other(p)) if p.name in PINNED else p for p in entry.params
    ))
    assert [p.default for p in moved.params] != [p.default for p in entry.params]
    for scenario in SCENARIOS:
        for fixed in (False, True):
            params = scenario.params(fixed)
            assert (reg.parse_params(moved, params).unwrap()
                    == reg.parse_params(entry, params).unwrap()), scenario.key


def test_kip966_is_the_eight_state_story() -> None:
    # docs/scenarios.md #11, counted by hand (min_isr=2, two brokers, broker 0 leads):
    #  1 Init   2 Produce m0 on 0   3 broker 1 fetches m0 (HW 0)
    #  4 broker 1 fetches again: HW 1 with both in the ISR, m0 committed and acknowledged
    #  5 broker 1 crashes (still in ZooKeeper's ISR: RemoveDeadFromIsr has not run)
    #  6 broker 0 loses power before flushing: its log is empty
    #  7 broker 0 restarts: no other live ISR member, so it is elected again (epoch 1)
    #  8 broker 0 handles its LeaderAndIsr: leader of epoch 1 without m0.
    # Fewer is impossible: three steps to acknowledge with two replicas, one to keep
    # broker 1 from being elected, three for the loss, restart and leadership.
    # Step 5 may as well be a power loss of broker 1 (the printed trace's choice since the
    # requests carry a ninth field with unavailable_leader=fetcher): same length.
    result = run(BY_KEY["kip966"], fixed=False)
    assert result.violation is not None
    assert len(result.violation.trace) == 8
    actions = [step.action for step in result.violation.trace]
    assert actions[4] in ("Crash(1)", "PowerLoss(1)")
    assert actions[5:7] == ["PowerLoss(0)", "Restart(0)"]
    assert [a.split("(")[0] for a in actions].count("Fetch") == 2


def test_kafka1647_is_the_ten_state_story() -> None:
    # docs/scenarios.md #12, counted by hand (broker 0 leads, both in the ISR; 0.8.1's file):
    #  1 Init   2 Produce m0 on 0   3 broker 1 fetches m0   4 again: 0's HW 1
    #  5 broker 0 shuts down cleanly: its file holds HW 1 (ReplicaManager.shutdown)
    #  6 broker 1 is elected (epoch 1, ISR {1})   7 broker 1 shuts down
    #  8 broker 0 restarts: "follow 1", which is down, is queued to it
    #  9 it handles the request: 0.8.1 creates no replica; the checkpoint thread starts
    # 10 the thread writes the file without the partition: HW 1 is lost.
    result = run(BY_KEY["kafka1647"], fixed=False)
    assert result.violation is not None
    assert len(result.violation.trace) == 10
    actions = [step.action.split("(")[0] for step in result.violation.trace]
    assert actions.count("CheckpointHw") == 1 and actions.count("Crash") == 2


@pytest.mark.slow
@pytest.mark.skipif(not os.environ.get("ISRLAB_VERY_HEAVY"),
                    reason="millions of states: ISRLAB_VERY_HEAVY=1 runs it")
def test_stale_leo_failover_is_the_thirteen_state_story() -> None:
    # docs/findings/stale-leo-failover.md, counted by hand against Kafka's code (the walk is
    # tests/spec/kafka/test_stale_leo.py's STORY): 1 Init  2 Produce m0 on broker 0
    # 3 broker 2 fetches m0 (joins the ISR)  4 preferred election of broker 1 (epoch 1)
    # 5 broker 1 leads epoch 1  6 broker 2 fetches again from broker 0 (LEO 1 recorded)
    # 7 broker 2 follows broker 1, truncates m0  8 broker 1's controlled shutdown: epoch 2,
    # leader 0, ISR {0, 2}  9 controller failover  10 broker 0 handles epoch 2 without
    # isNewLeader: HW 1 over broker 2's stale LEO  11 broker 2 follows broker 0
    # 12 leadership moves to broker 2 (epoch 3)  13 broker 2 leads without m0.
    result = run(BY_KEY["stale-leo-failover"], fixed=False)
    assert result.violation is not None
    assert len(result.violation.trace) == 13
    actions = [step.action.split("(")[0] for step in result.violation.trace]
    assert actions.count("ControllerFailover") == 1 and actions.count("Produce") == 1


@pytest.mark.same_worker("kafka-scenario-bug-runs")
def test_stale_leo_kraft_is_the_twelve_state_story() -> None:
    # docs/scenarios.md #17, counted by hand (tests/spec/kafka/test_kraft_operations.py's
    # STALE_LEO_SHORT, each of its 11 steps needed): the preferred election and broker 0's
    # controlled shutdown reach broker 1 as one delta, broker 1's HW counts broker 2's LEO
    # from epoch 0, broker 2 truncates against broker 0 in epoch 1 and is elected in epoch 3.
    from tests.spec.kafka.test_kraft_operations import STALE_LEO_SHORT
    result = run(BY_KEY["stale-leo-kraft"], fixed=False)
    assert result.violation is not None
    assert [step.action for step in result.violation.trace[1:]] == list(STALE_LEO_SHORT)


@pytest.mark.same_worker("kafka-scenario-bug-runs")
def test_last_known_leader_is_the_eleven_state_story() -> None:
    # docs/scenarios.md #18, counted by hand (each step is needed):
    #  1 Init (leader 0, ISR {0,1})  2 Produce m0  3-4 broker 1 fetches twice: m0 acked
    #  5-6 broker 1 stops, is fenced (ELR {1})  7-8 broker 0 stops, is fenced (ISR empty,
    #  ELR {0,1}, last-known leader 0)  9 broker 1 registers: a new incarnation leaves the ELR
    # 10 broker 0's disk is replaced  11 broker 0 registers: the ELR empties and it is elected.
    result = run(BY_KEY["last-known-leader"], fixed=False)
    assert result.violation is not None
    actions = [step.action.split("(")[0] for step in result.violation.trace]
    assert actions == ["Init", "Produce", "Fetch", "Fetch", "Crash", "FenceBroker", "Crash",
                       "FenceBroker", "RegisterBroker", "ReplaceDisk", "RegisterBroker"]
