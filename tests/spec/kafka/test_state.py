"""The state's encoding, derived from ``LAYOUT_TABLE``: which fields each configuration
encodes (docs/kafka-model.md, "State"), decoding as the inverse, and the layout's version in
a run directory's metadata."""

from __future__ import annotations

import itertools
import json
from pathlib import Path

import pytest

from isrlab.checker.bfs import CheckOptions, explore
from isrlab.checker.runstore import RunDirError
from isrlab.spec.kafka.config import KafkaConfig
from isrlab.spec.kafka.model import KafkaModel
from isrlab.spec.kafka.state import (
    ALTER,
    EXTENDED,
    FETCH_ERROR,
    LAYOUT_TABLE,
    PREVIOUS_FETCH,
    BrokerPartition,
    FetchResponse,
    KafkaState,
    Layout,
    RemoteReplicaView,
    Request,
)
from tests.spec.walks import walk

ALL_FLAGS = [sum(c) for n in range(5)
             for c in itertools.combinations((PREVIOUS_FETCH, EXTENDED, ALTER, FETCH_ERROR), n)]


@pytest.mark.parametrize("flags", ALL_FLAGS)
def test_each_flag_adds_exactly_its_fields(flags: int) -> None:
    layout = Layout(flags)
    # the untyped model's layout, then each mechanism's fields at the end of their tuples
    assert layout.ctrl == (8 if flags & EXTENDED else 6)
    assert layout.request == (8 if flags & EXTENDED else 7)
    assert layout.remote == (4 if flags & PREVIOUS_FETCH else 2)
    assert layout.fetch == (7 if flags & FETCH_ERROR else 6)
    assert layout.broker == (17 if flags & ALTER else 15 if flags & EXTENDED else 12)
    assert layout.version == Layout(0).version


def test_the_table_lists_every_field_of_every_class_in_order() -> None:
    fields = {"BrokerPartition": BrokerPartition._fields,
              "FetchResponse": FetchResponse._fields,
              "RemoteReplicaView": RemoteReplicaView._fields, "Request": Request._fields}
    for name, names in fields.items():
        assert tuple(f for f, _ in LAYOUT_TABLE[name]) == names


def test_a_field_left_out_decodes_as_its_default() -> None:
    m = KafkaModel(KafkaConfig(controller="zookeeper", fetch="split", max_records=1,
                               isr_changes="zookeeper", elr=False, unavailable_leader="follow"))
    s = walk(m, "Produce(0)", "FetchRequest(1)")
    assert s.brokers[1].fetch_in_flight
    plain = m.layout.plain(s)
    broker = plain[1][1]  # type: ignore[index]
    assert isinstance(broker, tuple) and len(broker) == 12 and len(broker[11]) == 6
    assert m.layout.from_plain(plain) == s == m.decode(m.encode(s))


def test_the_run_directory_records_the_layout_and_refuses_another(tmp_path: Path) -> None:
    params = {"max_records": 1, "max_leader_epoch": 1}
    m = KafkaModel(KafkaConfig(controller="zookeeper", **params))  # type: ignore[arg-type]  # the test's parameters
    options = CheckOptions(params=params, run_dir=tmp_path / "run")
    explore(m, options)
    meta = json.loads((tmp_path / "run" / "meta.json").read_text())
    assert meta["state_layout"] == m.state_layout
    assert m.state_layout.startswith("kafka-state 1:")
    other = KafkaModel(KafkaConfig(controller="zookeeper", **params))  # type: ignore[arg-type]
    other.state_layout = "kafka-state 0:another"
    with pytest.raises(RunDirError, match="belongs to another check"):
        explore(other, options)


def test_states_of_every_layout_round_trip() -> None:
    configs = [{}, {"isr_changes": "zookeeper", "elr": False, "unavailable_leader": "follow",
                    "kafka_4485": False},
               {"fetch": "split", "fetch_fencing": "first-design", "max_records": 1}]
    for params in configs:
        m = KafkaModel(KafkaConfig(controller="zookeeper", **params))  # type: ignore[arg-type]
        frontier: list[KafkaState] = list(m.init_states())
        for _ in range(4):
            frontier = [t for s in frontier for _, t in m.next_states(s)][:200]
            for s in frontier:
                assert m.decode(m.encode(s)) == s
