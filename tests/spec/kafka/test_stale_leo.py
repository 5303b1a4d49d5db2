"""docs/scenarios.md #13 and docs/findings/stale-leo-failover.md: a leader re-elected across a
controller failover skips a leader epoch and counts a follower's LEO from before it.

The walk below is the story written against Kafka's code (the findings' step table), not
the checker's output: each label must be enabled in turn, NoCommittedRecordLost must hold
until the last state and fail there; with ``leader_state_reset=on-epoch`` the same walk
commits nothing.  The breadth-first runs (shortest trace, complete fix run) are the
scenario tests of tests/spec/kafka/test_scenarios.py (slow: 2.1 and 6.2 million states).
"""

from __future__ import annotations

from typing import Any

from isrlab.checker.model import Model
from isrlab.spec.kafka.scenarios import BY_KEY

SCENARIO = BY_KEY["stale-leo-failover"]


def _lai(to: int, cepoch: int, leader: int, epoch: int, isr: tuple[int, ...]) -> str:
    return f"Deliver(LeaderAndIsr(to={to},cepoch={cepoch},leader={leader},epoch={epoch},isr={isr}))"


STORY = (
    "Produce(0)",                      # 2  m0 on broker 0, leader of epoch 0, ISR {0, 1}
    "Fetch(2)",                        # 3  broker 2 fetches m0 and joins the ISR {0, 1, 2}
    "Reassign(102)",                   # 4  Kafka: the preferred election of [1, 0, 2] (epoch 1)
    _lai(1, 0, 1, 1, (0, 1, 2)),       # 5  broker 1 leads epoch 1 without m0
    "Fetch(2)",                        # 6  broker 2, still in epoch 0: broker 0 records LEO 1
    _lai(2, 0, 1, 1, (0, 1, 2)),       # 7  broker 2 follows broker 1 and truncates m0
    "ControlledShutdown(1)",           # 8  epoch 2: leader 0, ISR {0, 2}, queued behind epoch 1
    "ControllerFailover",              # 9  the old queues are dropped; epoch 2 resent
    _lai(0, 1, 0, 2, (0, 2)),          # 10 broker 0: epoch 0 -> 2 without isNewLeader: HW 1
    _lai(2, 1, 0, 2, (0, 2)),          # 11 broker 2 follows broker 0 (nothing fetched yet)
    "ControlledShutdown(0)",           # 12 epoch 3: leader 2, ISR {2}
    _lai(2, 1, 2, 3, (2,)),            # 13 broker 2 leads epoch 3 without the committed m0
)
"""The 12 steps after Init, each a ZooKeeper-mode Kafka step (docs/findings/
stale-leo-failover.md, "The trace in Kafka's terms")."""


def _model(fixed: bool) -> Model[Any]:
    from isrlab.models import registry

    reg = registry()
    entry = reg.get("kafka").unwrap()
    return entry.build(reg.parse_params(entry, SCENARIO.params(fixed)).unwrap())


def _walk(model: Model[Any]) -> list[Any]:
    states = [next(iter(model.init_states()))]
    for label in STORY:
        found = [s for lab, s in model.next_states(states[-1]) if lab == label]
        assert found, f"{label} is not enabled after {len(states)} states"
        states.append(found[0])
    return states


def _holds(model: Model[Any], state: Any) -> bool:
    (prop,) = [p for p in model.invariants() if p.name == SCENARIO.invariant]
    return prop.holds(state)


def test_the_story_is_a_walk_of_the_model_that_loses_a_committed_record() -> None:
    model = _model(fixed=False)
    states = _walk(model)
    assert len(states) == 13
    assert [_holds(model, s) for s in states] == [True] * 12 + [False]
    leader = model.variables(states[9])["broker0"]
    assert (leader["hw"], leader["leader_epoch"]) == (1, 2)  # the stale LEO counted


def test_with_the_fix_the_same_walk_commits_nothing() -> None:
    model = _model(fixed=True)
    states = _walk(model)
    assert all(_holds(model, s) for s in states)
    assert model.variables(states[9])["broker0"]["hw"] == 0  # broker 2's LEO reset: unknown
    assert model.variables(states[-1])["committed"] == {}
