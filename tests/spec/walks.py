"""Walking the ``kafka`` model by the labels of its steps (shared by the model's tests)."""

from __future__ import annotations

from isrlab.spec.kafka.model import KafkaModel
from isrlab.spec.kafka.state import KafkaState


def walk(m: KafkaModel, *labels: str) -> KafkaState:
    """The state after the steps ``labels`` from the initial state (each must be enabled,
    with one outcome)."""
    (state,) = m.init_states()
    for label in labels:
        nexts = [s for a, s in m.next_states(state) if a == label]
        assert len(nexts) == 1, (label, [a for a, _ in m.next_states(state)])
        state = nexts[0]
    return state


def space(m: KafkaModel, limit: int) -> list[KafkaState]:
    """Up to ``limit`` states of ``m`` in breadth-first order (distinct by ``encode``)."""
    states = list(m.init_states())
    seen = {m.encode(s) for s in states}
    index = 0
    while index < len(states) and len(states) < limit:
        for _, t in m.next_states(states[index]):
            e = m.encode(t)
            if e not in seen:
                seen.add(e)
                states.append(t)
        index += 1
    return states
