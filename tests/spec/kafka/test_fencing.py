"""``fetch_fencing`` in the ``kafka`` model: none (<= 2.0), KIP-320's first design (never
released), final (2.1+, the default).

Trace lengths are asserted only where the story is counted by hand in the comments.
"""

from __future__ import annotations

from typing import Any

import pytest

from isrlab.checker.bfs import CheckOptions, explore
from isrlab.checker.report import CheckResult
from isrlab.models import registry
from isrlab.spec.invariants import INVARIANT_NAMES
from isrlab.spec.kafka.config import KafkaConfig
from isrlab.spec.kafka.model import KafkaModel
from isrlab.spec.kafka.scenarios import BY_KEY
from isrlab.spec.kafka.state import KafkaState

State = KafkaState


def model(**kw: Any) -> KafkaModel:
    return KafkaModel(KafkaConfig(controller="zookeeper", **kw))


def step(m: KafkaModel, s: State, label: str) -> State:
    found = [t for lab, t in m.next_states(s) if lab == label]
    assert found, f"{label} not enabled; enabled: {[lab for lab, _ in m.next_states(s)]}"
    return found[0]


def check(*params: str) -> CheckResult:
    """The ``kafka`` model's search with ``params``, in ZooKeeper mode unless they name the
    controller (KIP-320 is Kafka 2.1's)."""
    reg = registry()
    entry = reg.get("kafka").unwrap()
    if not any(p.startswith("controller=") for p in params):
        params = ("controller=zookeeper", *params)
    parsed = reg.parse_params(entry, params).unwrap()
    return explore(entry.build(parsed), CheckOptions(params=parsed))


def broken(m: KafkaModel, s: State) -> list[str]:
    return [p.name for p in m.invariants() if not p.holds(s)]


# -- the parameter --------------------------------------------------------------------------

def test_fetch_fencing_is_a_choice_whose_old_boolean_spellings_still_parse() -> None:
    reg = registry()
    entry = reg.get("kafka").unwrap()
    param = next(p for p in entry.params if p.name == "fetch_fencing")
    assert param.default == "final" and param.choices == ("none", "first-design", "final")
    for text, value in (("true", "final"), ("false", "none"), ("first-design", "first-design"),
                        ("none", "none"), ("final", "final")):
        parsed = reg.parse_params(entry, [f"fetch_fencing={text}"]).unwrap()
        assert parsed["fetch_fencing"] == value
    from isrlab.api import model as api_model  # keyword booleans go through the same text

    zk = "zookeeper"  # the older spellings name ZooKeeper-mode versions
    assert [api_model("kafka", controller=zk, fetch_fencing=v).cfg.fetch_fencing  # type: ignore[attr-defined]
            for v in (True, False)] == ["final", "none"]
    error = reg.parse_params(entry, ["fetch_fencing=yes"]).failure()
    assert "\n" not in error and "first-design" in error and "'yes'" in error
    assert KafkaConfig(controller="zookeeper", fetch_fencing="first-design",
                       fetch="split").problems() == []
    assert KafkaConfig(controller="zookeeper", fetch_fencing="maybe").problems() == [
        "fetch_fencing must be one of none, first-design, final"]
    assert "never released" in param.doc and "2.1+" in param.doc and "<= 2.0" in param.doc


# -- KIP-320's first design, step by step ----------------------------------------------------

DIVERGE = ("Produce(0)", "Fetch(1)", "Produce(0)", "Reassign(10)",
           "Deliver(LeaderAndIsr(to=1,cepoch=0,leader=1,epoch=1,isr=(0, 1)))", "Produce(1)",
           "Deliver(LeaderAndIsr(to=0,cepoch=0,leader=1,epoch=1,isr=(0, 1)))")
"""Broker 0 leads epoch 0 and writes m0, which broker 1 fetches, then m1, which broker 1
never fetches; leadership moves to broker 1 (epoch 1, ISR {0, 1}), which writes m2 at
offset 1; broker 0 then follows broker 1 in epoch 1.  Broker 0's m1@0 and broker 1's m2@1
diverge at offset 1."""


def diverged(fencing: str) -> tuple[KafkaModel, State]:
    m = model(max_records=3, max_leader_epoch=1, reassignment=True, crashes="none",
              isr_shrink=False, fetch_fencing=fencing)
    s = next(iter(m.init_states()))
    for label in DIVERGE:
        s = step(m, s, label)
    return m, s


def test_under_the_first_design_a_stale_epoch_follower_counts_toward_the_hw() -> None:
    m, s = diverged("first-design")
    c = m.codec
    # make_follower truncated nothing: broker 0 still has m1 of epoch 0 at offset 1
    assert s.brokers[0].log == (c.code(0, 0), c.code(1, 0))
    assert s.brokers[1].log == (c.code(0, 0), c.code(2, 1))
    assert (s.brokers[1].high_watermark, s.ghost.committed[2]) == (0, -1)
    # its fetch at offset 2 expects epoch 0 there, the leader has epoch 1: an error
    assert [lab for lab, _ in m.next_states(s) if "(0)" in lab and "Fetch" in lab] == [
        "FetchError(0)"]
    t = step(m, s, "FetchError(0)")
    # the leader recorded the fetch first: broker 0's LEO 2 raised its HW to 2 (m2
    # committed in epoch 1) ...
    assert t.brokers[1].remotes[0].log_end_offset == 2
    assert t.brokers[1].high_watermark == 2 and t.ghost.committed[2] == 1
    # ... then broker 0 truncated lazily, on the error, after offset 0 where both logs
    # agree (kip279 against the leader's log), and took no records from the answer
    assert t.brokers[0].log == (c.code(0, 0),) and t.brokers[0].high_watermark == 0
    # a record below the leader's HW is missing on an ISR member
    assert {"WeakIsr", "StrongIsr"} <= set(broken(m, t))


@pytest.mark.parametrize("fencing", ["final", "none"])
def test_final_and_none_truncate_when_becoming_follower(fencing: str) -> None:
    m, s = diverged(fencing)
    c = m.codec
    assert s.brokers[0].log == (c.code(0, 0),)  # make_follower truncated m1 at once
    t = step(m, s, "Fetch(0)")
    assert t.brokers[0].log == (c.code(0, 0), c.code(2, 1))
    assert t.brokers[1].high_watermark == 1 and broken(m, t) == []


def test_under_the_first_design_a_follower_whose_log_matches_fetches_as_usual() -> None:
    m = model(fetch_fencing="first-design")
    s = step(m, next(iter(m.init_states())), "Produce(0)")
    s = step(m, s, "Fetch(1)")
    s = step(m, s, "Fetch(1)")  # expects epoch 0 at offset 1, the leader's m0 is epoch 0
    assert s.brokers[0].high_watermark == 1 and s.brokers[1].log == s.brokers[0].log


def test_with_split_fetches_the_error_rides_in_the_response_and_the_follower_truncates_on_it(
) -> None:
    m = model(fetch_fencing="first-design", fetch="split", isr_changes="zookeeper")
    s = next(iter(m.init_states()))
    # the first seven states of the eight-state WeakIsr story below
    for label in ("Produce(0)", "Crash(0)", "Restart(0)",
                  "Deliver(LeaderAndIsr(to=1,cepoch=0,leader=1,epoch=1,isr=(1,)))", "Produce(1)",
                  "Deliver(LeaderAndIsr(to=0,cepoch=0,leader=1,epoch=1,isr=(1,)))"):
        s = step(m, s, label)
    c = m.codec
    assert s.brokers[0].log == (c.code(0, 0),) and s.brokers[1].log == (c.code(1, 1),)
    s = step(m, s, "FetchRequest(0)")
    r = s.brokers[0].fetch_in_flight
    assert r and (r.error, r.records) == (1, ())
    # recorded before the comparison: broker 0's LEO 1 puts it in the ISR
    assert s.brokers[1].remotes[0].log_end_offset == 1 and s.brokers[1].in_sync_replica_ids == 3
    assert s.brokers[0].log == (c.code(0, 0),) and "WeakIsr" in broken(m, s)
    assert m.decode(m.encode(s)) == s
    t = step(m, s, "FetchResponse(0)")
    assert t.brokers[0].log == () and t.brokers[0].fetch_in_flight == ()


# -- what the first design allows that the final one does not (default bounds) --------------
# KIP-320 was designed for Kafka 2.0/2.1, whose leaders write their ISR to ZooKeeper
# themselves: the stories below run with isr_changes=zookeeper (with AlterPartition the
# joining fetch only proposes, and the controller's answer is one more step).
ZK = "isr_changes=zookeeper"

def test_the_first_design_breaks_weak_isr_in_eight_states() -> None:
    # Counted by hand (defaults: 2 brokers, 2 records, epochs 0..2, clean crashes):
    #  1 Init   2 Produce m0@0 on 0 (not fetched)   3 Crash(0)
    #  4 Restart(0): broker 1 is elected (epoch 1, ISR {1})   5 broker 1 handles it
    #  6 Produce m1@1 on 1: HW 1 with an ISR of one, m1 committed
    #  7 broker 0 follows 1 in epoch 1 and truncates nothing (first design)
    #  8 FetchError(0): broker 1 records broker 0's LEO 1 before comparing epochs, so
    #    broker 0 joins the ISR; then it truncates m0@0: ISR member 0 lacks committed m1.
    result = check("fetch_fencing=first-design", ZK, "invariants=WeakIsr")
    assert result.violation is not None and result.violation.invariant == "WeakIsr"
    actions = [s.action for s in result.violation.trace]
    assert len(actions) == 8 and actions[-1] == "FetchError(0)"


def test_the_first_design_loses_a_committed_record_in_eleven_states() -> None:
    # The eight states above, then 9 Crash(1)  10 ElectLeader: broker 0, in the ISR, is
    # elected cleanly (epoch 2)  11 it handles its LeaderAndIsr and leads without m1,
    # committed and acknowledged in epoch 1.
    for invariant in ("NoCommittedRecordLost", "AcknowledgedWritesDurable"):
        result = check("fetch_fencing=first-design", ZK, f"invariants={invariant}")
        assert result.violation is not None and result.violation.invariant == invariant
        actions = [s.action for s in result.violation.trace]
        assert len(actions) == 11 and "FetchError(0)" in actions


def test_the_final_design_holds_every_invariant_in_the_same_bounds() -> None:
    result = check("fetch_fencing=final", ZK, "invariants=all")
    assert result.violation is None and result.complete


def test_the_first_design_keeps_the_kip320_scenarios_bounds_safe() -> None:
    # KAFKA-6880's story needs broker 1 to truncate m0 when it becomes a follower; the
    # first design never truncates there, so scenario 4's bounds find nothing either.
    scenario = BY_KEY["kip320"]
    params = [p for p in scenario.params(False) if not p.startswith("fetch_fencing=")
              and not p.startswith("invariants=")]
    result = check(*params, "fetch_fencing=first-design",
                   f"invariants={','.join(INVARIANT_NAMES)}")
    assert result.violation is None and result.complete


def test_without_invariants_the_first_designs_space_is_complete_and_truncates() -> None:
    # the lazy truncation is reached (SomeTruncation), as are commits, acks, elections
    result = check("fetch_fencing=first-design", "invariants=none")
    assert result.violation is None and result.complete
    assert {s.name for s in result.sometimes if s.reached} == {
        "SomeRecordCommitted", "SomeWriteAcknowledged", "LeaderChanged", "SomeTruncation"}
