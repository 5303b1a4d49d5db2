"""The kafka model's truncation rules come from one registry
(isrlab.spec.kafka.truncation_versions)."""

from __future__ import annotations

from click.testing import CliRunner

from isrlab.cli import cli
from isrlab.core.partition import truncate_by_leader_epoch_kip101, truncate_to_high_watermark
from isrlab.spec.kafka.config import KafkaConfig
from isrlab.spec.kafka.model import KafkaModel
from isrlab.spec.kafka.registration import PARAMS
from isrlab.spec.kafka.truncation_versions import BY_PARAM, TRUNCATION_RULES, TRUNCATION_VERSIONS
from isrlab.spec.symbolic import core_kafka


def test_the_parameter_offers_the_four_kafka_rules_oldest_first() -> None:
    param = next(p for p in PARAMS if p.name == "truncation")
    assert param.choices == ("hw", "kip101", "kip279-2.0", "kip279")
    assert param.default == "kip279"
    for version in TRUNCATION_VERSIONS:
        assert f"{version.param} ({version.help})" in param.doc


def test_every_table_is_derived_from_the_registry() -> None:
    names = [v.name for v in TRUNCATION_VERSIONS]
    assert names == ["truncate-to-hw", "kip101", "kip279-2.0", "kip279"]
    assert list(TRUNCATION_RULES) == names
    assert list(core_kafka.RULES) == names
    assert core_kafka.RULES["kip101"] is core_kafka.kip101_rule
    assert TRUNCATION_RULES["truncate-to-hw"] is truncate_to_high_watermark


def test_the_model_truncates_with_the_chosen_versions_rule() -> None:
    zk = "zookeeper"
    assert KafkaModel(KafkaConfig(controller=zk, truncation="hw")).rule is (
        truncate_to_high_watermark)
    assert KafkaModel(KafkaConfig(controller=zk, truncation="kip101")).rule is (
        truncate_by_leader_epoch_kip101)
    assert BY_PARAM["kip279-2.0"].explicit is TRUNCATION_RULES["kip279-2.0"]


def test_an_unknown_truncation_is_one_line_naming_the_choices() -> None:
    result = CliRunner().invoke(cli, ["check", "--model", "kafka", "-p", "truncation=kip999"])
    assert result.exit_code == 2
    assert "kip279-2.0" in result.output and "Traceback" not in result.output
