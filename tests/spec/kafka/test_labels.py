"""Step labels: every label the model builds is read back by ``labels.parse`` and written
again the same by ``format_step``, over every step of ZooKeeper mode's default space and of
small spaces holding the rest of the grammar (PowerLoss's forms, Reassign, the controller's
steps, split fetches, lost and copied requests, UpdateMetadata, KIP-320's first design, KRaft's
steps)."""

from __future__ import annotations

from functools import cache
from typing import Any

import pytest

from isrlab.spec.kafka import labels
from isrlab.spec.kafka.config import KafkaConfig
from isrlab.spec.kafka.kraft_model import KRaftModel
from isrlab.spec.kafka.labels import RequestLabel, Step, format_step, parse
from isrlab.spec.kafka.model import KafkaModel

SMALL = {"max_records": 1, "max_leader_epoch": 1, "isr_shrink": False,
         "controller": "zookeeper"}
SPACES: dict[str, dict[str, Any]] = {
    "default": {"controller": "zookeeper"},
    "power loss": {**SMALL, "crashes": "unclean", "crash_loss": "tail", "hw_checkpoint": True,
                   "hw_checkpoint_file": "no-fsync", "consumers": True},
    "controller": {**SMALL, "max_leader_epoch": 2, "reassignment": True,
                   "preferred_election": True, "controlled_shutdown": True,
                   "max_controller_epoch": 1},
    "channels": {**SMALL, "isr_shrink": True, "fetch": "split", "lost_requests": True,
                 "duplicate_requests": True, "metadata": True, "isr_changes": "zookeeper",
                 "elr": False, "crashes": "none"},
    "kip-320": {"fetch_fencing": "first-design", "isr_changes": "zookeeper",
                "controller": "zookeeper"},
    "kraft": {**SMALL, "controller": "kraft", "isr_shrink": True, "empty_disk": True,
              "kip903": False},
    "kraft operations": {**SMALL, "controller": "kraft", "isr_shrink": True,
                         "controlled_shutdown": True, "preferred_election": True,
                         "controller_failover": True},
}
"""ZooKeeper mode's default space, and small ones holding the rest of the grammar (every
space names its controller)."""


SPACES_GROUP = "kafka-label-spaces"
"""The tests that call ``labels_of`` run on one xdist worker (tests/conftest.py), so that each
space is searched once in the suite, not once per worker that gets one of them."""


@cache
def labels_of(name: str) -> frozenset[str]:
    """Every label of every step of the space ``name`` (a breadth-first search)."""
    config = KafkaConfig(**SPACES[name])
    model = KRaftModel(config) if config.controller == "kraft" else KafkaModel(config)
    seen = {model.encode(s) for s in model.init_states()}
    frontier = list(model.init_states())
    found: set[str] = set()
    while frontier:
        following = []
        for state in frontier:
            for label, successor in model.next_states(state):
                found.add(label)
                key = model.encode(successor)
                if key not in seen:
                    seen.add(key)
                    following.append(successor)
        frontier = following
    return frozenset(found)


@pytest.mark.same_worker(SPACES_GROUP)
@pytest.mark.parametrize("name", SPACES)
def test_every_label_of_the_space_round_trips(name: str) -> None:
    found = labels_of(name)
    for label in found:
        assert format_step(parse(label)) == label
    actions = {parse(label).action for label in found}
    assert actions <= {*labels.ACTIONS, *labels.BROKER_ACTIONS, *labels.REQUEST_ACTIONS,
                       "PowerLoss", "Reassign", "HandleCommit"}


@pytest.mark.same_worker(SPACES_GROUP)
def test_the_spaces_cover_every_action() -> None:
    actions = {parse(label).action for name in SPACES for label in labels_of(name)}
    assert actions == {*labels.ACTIONS, *labels.BROKER_ACTIONS, *labels.REQUEST_ACTIONS,
                       "PowerLoss", "Reassign", "HandleCommit"}


def test_parse_reads_the_arguments() -> None:
    assert parse("Produce(0)") == Step("Produce", 0)
    assert parse("PowerLoss(1,2,empty-hw-file)") == Step("PowerLoss", 1, 2, True)
    assert parse("PowerLoss(1)") == Step("PowerLoss", 1)
    assert parse("Reassign(102)") == Step("Reassign", order=(1, 0, 2))
    assert parse("Deliver(LeaderAndIsr(to=1,cepoch=0,leader=-1,epoch=2,isr=(1,)))") == Step(
        "Deliver", request=RequestLabel("LeaderAndIsr", 1, 0, -1, 2, (1,)))
    assert parse("Tick") == Step("Tick")
    assert parse("HandleCommit(1,3)") == Step("HandleCommit", 1, batches=3)
    assert parse("HandleCommit(1)") == Step("HandleCommit", 1)


@pytest.mark.parametrize("label", ["Tock", "Produce(x)", "Produce(1", "Tick(1)",
                                   "Deliver(LeaderAndIsr(to=1))", "PowerLoss(1,empty)"])
def test_parse_refuses_what_is_not_a_label(label: str) -> None:
    with pytest.raises(ValueError, match="not a kafka step label"):
        parse(label)


def test_request_patterns_match_exactly_their_requests() -> None:
    # the patterns kafka_log writes, matched as isrlab.checker.validate matches them
    from fnmatch import fnmatchcase

    from isrlab.spec.kafka.state import LEADER_AND_ISR

    found = labels_of("channels")
    requests = [(label, parse(label)) for label in found if parse(label).request]
    assert any(s.request and s.request.kind == "UpdateMetadata" for _, s in requests)
    for label, step in requests:
        r = step.request
        assert r is not None
        kind = labels.KINDS.index(r.kind)
        assert labels.parse_request(label[len(step.action) + 1:-1]) == r
        exact = labels.request_pattern(step.action, kind, r.dest,
                                       controller_epoch=r.controller_epoch, leader=r.leader,
                                       leader_epoch=r.leader_epoch, isr=r.isr)
        assert exact == label
        for other, o in requests:
            assert o.request is not None
            to_same = o.request.dest == r.dest and o.request.kind == "LeaderAndIsr"
            delivered = o.action.startswith("Deliver")
            pattern = labels.any_request_pattern(labels.actions_from("Deliver"), LEADER_AND_ISR,
                                                 r.dest)
            assert fnmatchcase(other, pattern) == (to_same and delivered)
            loose = labels.request_pattern("Deliver", LEADER_AND_ISR, r.dest,
                                           leader_epoch=r.leader_epoch)
            assert fnmatchcase(other, loose) == (
                to_same and o.action == "Deliver" and o.request.leader_epoch == r.leader_epoch)


def test_broker_patterns_match_the_actions_of_a_prefix() -> None:
    from fnmatch import fnmatchcase

    found = labels_of("channels")
    pattern = labels.broker_pattern(labels.actions_from("Fetch"), 1)
    matched = {label for label in found if fnmatchcase(label, pattern)}
    assert matched == {label for label in found
                       if parse(label).action.startswith("Fetch") and parse(label).broker == 1}
    assert "FetchRequest(1)" in matched and "FetchResponse(1)" in matched


def test_parse_request_refuses_what_is_not_a_request() -> None:
    with pytest.raises(ValueError, match="not a kafka controller request"):
        labels.parse_request("LeaderAndIsr(to=1,cepoch=0)")


@pytest.mark.same_worker(SPACES_GROUP)
@pytest.mark.parametrize("name", SPACES)
def test_coverage_groups_labels_by_their_parsed_action(name: str) -> None:
    # checker/ stays domain-free: coverage (checker.bfs.action_coverage, checker.simulate)
    # groups a label by the generic name before its first '('; for every kafka label that
    # name is the action labels.parse reads, so coverage's rows are the grammar's actions
    from isrlab.checker.model import action_name

    for label in labels_of(name):
        assert action_name(label) == parse(label).action
