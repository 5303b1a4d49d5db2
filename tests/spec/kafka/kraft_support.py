"""Building and reading the ``kafka`` model in KRaft mode (shared by its KRaft tests)."""

from __future__ import annotations

from typing import Any

from isrlab.spec.kafka.config import KafkaConfig
from isrlab.spec.kafka.kraft_model import KRaftModel
from isrlab.spec.kafka.kraft_state import KRaftState
from isrlab.spec.kafka.state import KafkaState


def model(**kw: Any) -> KRaftModel:
    """The model with ``controller=kraft`` and the parameters ``kw``."""
    return KRaftModel(KafkaConfig(controller="kraft", **kw))


def kraft(s: KafkaState) -> KRaftState:
    """The KRaft part of a state."""
    k = s.controller.kraft
    assert isinstance(k, KRaftState)
    return k


def labels(m: KRaftModel, s: KafkaState) -> list[str]:
    """The labels of the steps enabled in ``s``."""
    return [a for a, _ in m.next_states(s)]
