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
