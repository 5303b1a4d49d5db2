"""The ``kafka`` cluster model family: one partition on a few brokers, composed of ``core``.

``register(reg)`` adds the model ``kafka``; every feature and protocol version is a
parameter (``PARAMS``), so a researcher keeps the state space as small as the question.
The defaults are the newest behaviour the model covers: KRaft's controller
(``controller=kraft``, Kafka 3.3+ and the only mode of 4.0; ``controller=zookeeper`` is
ZooKeeper mode), the broker rules of Kafka 2.1 and later (KIP-279 truncation with
KAFKA-7415, KIP-320's final fencing, KAFKA-7128's ISR rule, KAFKA-4485's lag rules,
KAFKA-7414's out-of-range truncation; unchanged through 4.0), the fetcher's truncation only
once a down leader answers (0.11+), KIP-497's AlterPartition and KIP-966's ELR (Kafka 4.0),
with clean elections and acks=all, on two brokers;
each known bug of ``docs/scenarios.md`` is found by turning one of them back to an older
version.  Each version parameter's help names the Kafka versions of each of its values.
The model itself is ``isrlab.spec.kafka.model``; its properties are ``isrlab.spec.invariants``.
"""

from __future__ import annotations

from collections.abc import Mapping

from isrlab.checker.registry import ModelEntry, Param, ParamValue, Registry
from isrlab.spec.invariants import INVARIANT_NAMES
from isrlab.spec.kafka.config import config_of, declarations
from isrlab.spec.kafka.kraft_model import KRaftModel
from isrlab.spec.kafka.liveness import check_unfair
from isrlab.spec.kafka.model import KafkaModel
from isrlab.spec.kafka.params import ParamInfo


def _param(name: str, kind: type, default: object, info: ParamInfo) -> Param:
    """The registry's ``Param`` of one ``KafkaConfig`` field's declaration."""
    assert kind is int or kind is bool or kind is str
    assert isinstance(default, int | str)
    return Param(name, kind, default, info.help, minimum=info.minimum, choices=info.choices,
                 maximum=info.maximum, fault=info.fault, aliases=info.aliases)


PARAMS = (
    *(_param(*declared) for declared in declarations()),
    Param("invariants", str, "all",
          "comma-separated invariants to check (see isrlab.spec.invariants), all, or none"),
    Param("unfair", str, "",
          "comma-separated actions whose weak fairness --liveness drops "
          "(isrlab.spec.kafka.liveness.FAIR_ACTIONS)"),
)
"""The ``kafka`` model's parameters: every ``KafkaConfig`` field as declared there, the
invariants to check and the actions ``--liveness`` takes as unfair (the model's, not the
configuration's)."""


def build(params: Mapping[str, ParamValue]) -> KafkaModel:
    """The ``kafka`` model for parsed parameters (``ValueError`` when unusable)."""
    values = {p.name: params.get(p.name, p.default) for p in PARAMS}
    text = str(values.pop("invariants"))
    unfair = tuple(a.strip() for a in str(values.pop("unfair")).split(",") if a.strip())
    check_unfair(unfair)
    names: tuple[str, ...] | None = tuple(
        part.strip() for part in text.split(",") if part.strip()
    )
    kraft = values["controller"] == "kraft"
    if names == ("all",):
        names = None if kraft else INVARIANT_NAMES
    elif names == ("none",):
        names = ()
    config = config_of(values)
    if kraft:
        return KRaftModel(config, names, unfair)
    return KafkaModel(config, names, unfair)


def register(reg: Registry) -> None:
    """Add the ``kafka`` model to the registry."""
    reg.register(ModelEntry(
        name="kafka",
        doc="Kafka cluster at the broker-code level: controller, brokers, producers, consumers "
            "(composed of core/); protocol versions and features are parameters",
        params=PARAMS, build=build,
    ))
