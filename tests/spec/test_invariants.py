"""The invariant catalogue on hand-built ``kafka`` states: each holds initially and fails on
the one broken state it describes (so none can be vacuous)."""

from __future__ import annotations

from typing import Any

import pytest

from isrlab.spec import invariants as inv
from isrlab.spec.kafka.config import KafkaConfig
from isrlab.spec.kafka.model import KafkaModel
from isrlab.spec.kafka.state import (
    F_EPOCH_REGRESSED,
    F_TWO_LEADERS,
    F_UNCLEAN,
    KafkaState,
)
from tests.spec.walks import space

State = KafkaState
MODEL = KafkaModel(KafkaConfig(controller="zookeeper", brokers=2, max_records=2,
                               max_leader_epoch=2))
INIT: State = next(iter(MODEL.init_states()))
PROPS = {p.name: p for p in MODEL.invariants()}
C = MODEL.codec


def with_broker(s: State, b: int, **fields: Any) -> State:
    names = {"log": "log", "hw": "high_watermark", "isr": "in_sync_replica_ids"}
    br = s.brokers[b]._replace(**{names[k]: v for k, v in fields.items()})
    return s._replace(brokers=(*s.brokers[:b], br, *s.brokers[b + 1:]))


def with_ghost(s: State, field: str, v: Any) -> State:
    return s._replace(ghost=s.ghost._replace(**{field: v}))


def with_ctrl(s: State, field: str, v: Any) -> State:
    return s._replace(controller=s.controller._replace(**{field: v}))


def m(rid: int, epoch: int) -> int:
    return C.code(rid, epoch)


@pytest.mark.parametrize("name", inv.INVARIANT_NAMES)
def test_every_invariant_holds_in_the_initial_state(name: str) -> None:
    assert PROPS[name].holds(INIT)


def test_every_invariant_has_a_docstring_saying_what_a_violation_means() -> None:
    for p in MODEL.invariants():
        assert p.doc


def test_a_high_watermark_above_the_log_end_breaks_hw_le_leo() -> None:
    assert not inv.hw_le_leo(with_broker(INIT, 1, hw=1))


def test_a_leader_outside_its_zookeeper_isr_breaks_leader_in_isr() -> None:
    assert not inv.leader_in_isr_subset_ar(with_ctrl(INIT, "isr", 0b10))


def test_an_empty_zookeeper_isr_breaks_isr_non_empty() -> None:
    assert not inv.isr_non_empty(with_ctrl(with_ctrl(INIT, "isr", 0), "leader", -1))


def test_the_regression_flag_breaks_epochs_never_decrease() -> None:
    assert not inv.epochs_never_decrease(with_ghost(INIT, "flags", F_EPOCH_REGRESSED))


def test_two_leaders_of_one_epoch_break_one_leader_per_epoch() -> None:
    assert not inv.one_leader_per_epoch(with_ghost(INIT, "flags", F_TWO_LEADERS))


def test_a_committed_record_missing_on_an_isr_follower_breaks_weak_and_strong_isr() -> None:
    s = with_broker(INIT, 0, log=(m(0, 0),), hw=1)
    assert not inv.weak_isr(s) and not inv.strong_isr(s)
    s = with_broker(s, 1, log=(m(0, 0),))
    assert inv.weak_isr(s) and inv.strong_isr(s)


def test_strong_isr_follows_zookeepers_isr_and_weak_isr_the_leaders() -> None:
    s = with_broker(INIT, 0, log=(m(0, 0),), hw=1, isr=0b01)
    assert inv.weak_isr(s) and not inv.strong_isr(s)


def test_different_records_below_both_hws_break_log_matching() -> None:
    s = with_broker(INIT, 0, log=(m(0, 0),), hw=1)
    s = with_broker(s, 1, log=(m(1, 1),), hw=1)
    assert not inv.log_matching(s)
    assert inv.log_matching(with_broker(s, 1, hw=0))


def committed_m0(s: State, index: str) -> State:
    s = with_ghost(s, "origin", (0, -1))
    return with_ghost(s, index, (0, -1))


@pytest.mark.parametrize(
    ("name", "index"),
    [("NoCommittedRecordLost", "committed"), ("ConsumedRecordsStay", "consumed"),
     ("AckedAllSurvivesCleanElection", "acked"), ("AcknowledgedWritesDurable", "acked")],
)
def test_a_leader_without_a_recorded_record_breaks_the_loss_properties(
    name: str, index: str
) -> None:
    s = committed_m0(INIT, index)
    assert not PROPS[name].holds(s)
    assert PROPS[name].holds(with_broker(s, 0, log=(m(0, 0),)))


def test_an_unclean_election_makes_the_clean_election_promises_vacuous() -> None:
    s = with_ghost(committed_m0(INIT, "committed"), "acked", (0, -1))
    s = with_ghost(s, "flags", F_UNCLEAN)
    assert PROPS["NoCommittedRecordLost"].holds(s)
    assert PROPS["AckedAllSurvivesCleanElection"].holds(s)
    assert not PROPS["AcknowledgedWritesDurable"].holds(s)


def test_an_offline_partition_with_an_elr_may_have_an_empty_isr() -> None:
    # KIP-966: the last ISR member fenced while the ISR is below min.insync.replicas goes
    # into the ELR and the ISR empties; the same ISR with no ELR still breaks the property.
    offline = with_ctrl(with_ctrl(INIT, "isr", 0), "leader", -1)
    assert inv.isr_non_empty(with_ctrl(offline, "elr", 0b01))
    assert inv.isr_non_empty(with_ctrl(offline, "last_known_elr", 0b10))
    assert not inv.isr_non_empty(with_ctrl(with_ctrl(offline, "elr", 0b01), "leader", 0))


def test_an_elr_member_without_a_committed_record_breaks_elr_holds_committed() -> None:
    # m0 committed at offset 0; broker 1 in the ELR with an empty log.
    s = with_ghost(with_ghost(with_ctrl(INIT, "elr", 0b10), "origin", (0, -1)),
                   "committed", (0, -1))
    s = s._replace(brokers=(s.brokers[0]._replace(log=(m(0, 0),)), s.brokers[1]))
    assert not inv.elr_holds_committed(MODEL, s)
    # the same replica back from a power loss is not counted (it leaves the ELR on return)
    gone = s._replace(brokers=(s.brokers[0], s.brokers[1]._replace(unclean_shutdown=1)))
    assert inv.elr_holds_committed(MODEL, gone)
    # holding m0 at its offset satisfies it
    held = s._replace(brokers=(s.brokers[0], s.brokers[1]._replace(log=(m(0, 0),))))
    assert inv.elr_holds_committed(MODEL, held)


def test_each_invariant_has_its_own_bit_in_catalogue_order() -> None:
    assert [inv.BITS[name] for name in inv.INVARIANT_NAMES] == [
        1 << i for i in range(len(inv.INVARIANT_NAMES))]


@pytest.mark.parametrize("params", [{}, {"unclean_election": True, "acks": "1"}])
def test_the_catalogue_answers_as_each_invariant_function(params: dict[str, Any]) -> None:
    model = KafkaModel(KafkaConfig(controller="zookeeper", **params))
    props = model.invariants()
    functions = [inv._PLAIN.get(p.name) for p in props]
    states = space(model, 4000)
    expected = [[f(s) if f is not None else inv._WITH_MODEL[p.name](model, s)
                 for p, f in zip(props, functions, strict=True)] for s in states]
    # state by state (the compiled checker's order), then invariant by invariant (its
    # Python loop's)
    assert [[p.holds(s) for p in props] for s in states] == expected
    by_invariant = [[p.holds(s) for s in states] for p in props]
    assert [list(row) for row in zip(*by_invariant, strict=True)] == expected
    assert any(not ok for row in expected for ok in row) or not params  # some break
