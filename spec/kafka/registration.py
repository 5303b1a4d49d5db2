"""The ``kafka`` model's entry in the registry: its parameters (``PARAMS``: every
``KafkaConfig`` declaration, the invariants to check, the unfair actions), ``build`` and
``register``.  A module of its own, not the package's ``__init__``, so importing any module
of ``isrlab.spec.kafka`` (``isrlab.spec.invariants`` imports ``params`` and ``state``) does not
import the whole model."""

from __future__ import annotations

from collections.abc import Mapping

from isrlab.checker.registry import ModelEntry, Param, ParamValue, Registry
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
    if names == ("all",):
        names = None  # the model's whole catalogue (KRaft mode adds its own invariants)
    elif names == ("none",):
        names = ()
    config = config_of(values)
    if values["controller"] == "kraft":
        return KRaftModel(config, names, unfair)
    return KafkaModel(config, names, unfair)


def register(reg: Registry) -> None:
    """Add the ``kafka`` model to the registry."""
    reg.register(ModelEntry(
        name="kafka",
        doc="Kafka cluster at the broker-code level (controller, brokers, producers, "
            "consumers; composed of core/), versions and features as parameters.  Defaults: "
            "KRaft mode (controller=kraft, Kafka 3.3-4.x), whose check fails on purpose: "
            "ReplicationQuorumSuperset in 8 states, the equal-epoch finding "
            "(docs/findings/kraft-equal-epoch-delta.md; -p make_leader_equal_epoch=skip "
            "holds); -p controller=zookeeper: ZooKeeper mode",
        params=PARAMS, build=build,
    ))
