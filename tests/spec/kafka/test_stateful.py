"""Random walks through the ``kafka`` model of the newest protocol (KIP-279 truncation,
KIP-320 fencing, KAFKA-7128's ISR rule, clean elections, acks=all) with every feature on:
after every step, every invariant of the catalogue must hold, and every state must survive
the byte encoding unchanged.  A second walk splits every fetch into request and response
(``fetch=split``), with lost responses; a third adds KIP-966 (``elr``) and power losses."""

from __future__ import annotations

from dataclasses import replace

from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, invariant, rule

from isrlab.spec.invariants import INVARIANT_NAMES
from isrlab.spec.kafka.config import KafkaConfig
from isrlab.spec.kafka.model import KafkaModel
from isrlab.spec.kafka.state import KafkaState

MODEL = KafkaModel(KafkaConfig(
    controller="zookeeper",
    brokers=3, max_records=3, max_leader_epoch=4, lag_ticks=1, hw_checkpoint=True,
    duplicate_requests=True, controlled_shutdown=True, preferred_election=True,
    reassignment=True, max_controller_epoch=1, metadata=True, consumers=True, min_isr=2,
))
SPLIT_MODEL = KafkaModel(replace(MODEL.cfg, fetch="split"))


class KafkaWalk(RuleBasedStateMachine):
    """One random run of the newest protocol, checked after every step."""

    model = MODEL

    def __init__(self) -> None:
        super().__init__()
        self.state: KafkaState = next(iter(self.model.init_states()))
        self.path: list[str] = []

    @rule(data=st.data())
    def step(self, data: st.DataObject) -> None:
        successors = list(self.model.next_states(self.state))
        if not successors:
            return
        label, self.state = data.draw(st.sampled_from(successors), label="step")
        self.path.append(label)

    @invariant()
    def every_invariant_holds(self) -> None:
        for prop in self.model.invariants():
            assert prop.holds(self.state), f"{prop.name} after {self.path}"

    @invariant()
    def the_state_round_trips_through_its_encoding(self) -> None:
        assert self.model.decode(self.model.encode(self.state)) == self.state


KafkaWalk.TestCase.settings = settings(
    max_examples=200, stateful_step_count=40, deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)
TestKafkaWalk = KafkaWalk.TestCase


class KafkaSplitFetchWalk(KafkaWalk):
    """The same walk with fetches split into request and response steps."""

    model = SPLIT_MODEL


KafkaSplitFetchWalk.TestCase.settings = settings(
    max_examples=100, stateful_step_count=40, deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)
TestKafkaSplitFetchWalk = KafkaSplitFetchWalk.TestCase


ELR_MODEL = KafkaModel(
    replace(MODEL.cfg, elr=True, unavailable_leader="fetcher", crashes="unclean",
            crash_loss="tail"),
    [name for name in INVARIANT_NAMES if name not in ("WeakIsr", "StrongIsr")],
)
"""KIP-966 (``elr``) with power losses that keep any prefix of the unflushed tail and a
follower's pending truncation: every invariant but ``WeakIsr`` / ``StrongIsr``, which any
power loss of an ISR follower breaks (Kafka acknowledges before fsync)."""


class KafkaElrWalk(KafkaWalk):
    """The same walk with KIP-966's ELR, unclean crashes and the fetcher's truncation."""

    model = ELR_MODEL


KafkaElrWalk.TestCase.settings = settings(
    max_examples=100, stateful_step_count=40, deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)
TestKafkaElrWalk = KafkaElrWalk.TestCase
