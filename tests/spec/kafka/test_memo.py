"""The ``kafka`` model's caching layers (issue 19): ``isrlab.spec.kafka.memo.memoised`` and
``isrlab.spec.kafka.state.Encoder`` give what the uncached code gives.

The whole-space regression pins are tests/spec/kafka/test_golden.py; here: the encoder's
bytes against ``marshal.dumps(to_plain(...), 2)`` on every state of small spaces of each
encoding layout, a model whose caches are emptied at every call against a cached one
(every successor of every state), and the decorator's own rules.
"""

from __future__ import annotations

import marshal
from collections.abc import Callable
from typing import Any

import pytest

from isrlab.spec.kafka import memo
from isrlab.spec.kafka.config import KafkaConfig
from isrlab.spec.kafka.model import KafkaModel
from isrlab.spec.kafka.state import to_plain
from tests.spec.walks import space

LAYOUTS = {
    "default": {},
    "zookeeper, 2.1": {"isr_changes": "zookeeper", "elr": False,
                       "unavailable_leader": "follow", "kafka_4485": False},
    "split, first design, metadata": {"fetch": "split", "fetch_fencing": "first-design",
                                      "metadata": True, "max_records": 1},
    "unclean, checkpoints, skip": {"crashes": "unclean", "hw_checkpoint": True,
                                   "unavailable_leader": "skip", "elr": False,
                                   "max_records": 1},
    "3 brokers, reassignment, split": {"brokers": 3, "initial_isr": 2, "max_records": 1,
                                       "reassignment": True, "fetch": "split",
                                       "isr_shrink": False, "crashes": "none"},
}


@pytest.mark.parametrize("params", LAYOUTS.values(), ids=list(LAYOUTS))
def test_the_encoder_writes_the_bytes_of_marshal_on_the_plain_layout(
        params: dict[str, object]) -> None:
    model = KafkaModel(KafkaConfig(controller="zookeeper", **params))  # type: ignore[arg-type]  # the test's parameters
    for s in space(model, 3000):
        plain = to_plain(s, model.previous_fetch, model.extended, model.alter,
                         model.first_design)
        assert model.encode(s) == marshal.dumps(plain, 2)  # type: ignore[arg-type]  # nested tuples of ints
        assert model.decode(model.encode(s)) == s


@pytest.mark.parametrize("params", LAYOUTS.values(), ids=list(LAYOUTS))
def test_a_model_without_its_caches_gives_the_same_successors(
        params: dict[str, object], monkeypatch: pytest.MonkeyPatch) -> None:
    cached = KafkaModel(KafkaConfig(controller="zookeeper", **params))  # type: ignore[arg-type]  # the test's parameters
    states = space(cached, 1500)
    monkeypatch.setattr(memo, "CACHE_LIMIT", 0)  # every memoised call recomputes
    fresh = KafkaModel(KafkaConfig(controller="zookeeper", **params))  # type: ignore[arg-type]  # the test's parameters
    for s in states:
        assert fresh.next_states(s) == cached.next_states(s)
        assert [p.holds(s) for p in fresh.invariants()] == [
            p.holds(s) for p in cached.invariants()]


class _Counter:
    def __init__(self) -> None:
        self.calls = 0
        self._memo: dict[str, dict[object, object]] = {}
        self._interner = memo.Interner()

    @memo.memoised
    def double(self, x: int) -> int | None:
        self.calls += 1
        return None if x < 0 else 2 * x


def test_memoised_caches_per_instance_including_none() -> None:
    a, b = _Counter(), _Counter()
    assert [a.double(1), a.double(1), a.double(-1), a.double(-1)] == [2, 2, None, None]
    assert a.calls == 2
    assert b.double(1) == 2 and b.calls == 1


def test_memoised_empties_a_full_cache(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(memo, "CACHE_LIMIT", 2)
    a = _Counter()
    for x in (1, 2, 3, 1):
        a.double(x)
    assert a.calls == 4  # 3 emptied the cache holding 1 and 2


def test_a_pickled_model_leaves_its_caches_behind_and_explores_alike() -> None:
    import pickle

    from pyspark import cloudpickle  # how the Spark engine ships a model

    from isrlab.checker.bfs import CheckOptions, explore

    m = KafkaModel(KafkaConfig(controller="zookeeper", max_records=1, max_leader_epoch=1))
    before = explore(m, CheckOptions())
    assert any(m._memo.values())  # the search filled the caches
    dumps: Callable[[Any], bytes] = cloudpickle.dumps  # untyped in pyspark
    copy = pickle.loads(dumps(m))
    assert not copy._memo
    assert not copy._encoder._brokers  # nor the encoder's bytes
    after = explore(copy, CheckOptions())
    assert (after.distinct_states, after.generated_states, after.diameter) == (
        before.distinct_states, before.generated_states, before.diameter)
