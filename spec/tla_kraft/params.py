"""Registry parameters of ``tla-kraft-3.5`` and ``tla-kraft-kip966``: the modules' constants
under snake-case names, the INVARIANTs, the removable mechanism checks and TLC's VIEW.

Defaults: 2 brokers, replication factor 2, min ISR 1, ISR 2, every limit 0 (the smallest
public configuration of docs/conformance.md), the cfg's invariants and ``view=published``.
"""

from __future__ import annotations

from collections.abc import Mapping

from isrlab.checker.registry import Param, ParamValue
from isrlab.spec.tla_kraft.layout import INVARIANTS_KIP966, INVARIANTS_V35
from isrlab.spec.tla_kraft.model import KraftConfig, KraftModel

_SIZES = (
    Param("brokers", int, 2, "BrokerCount: brokers 1..n", minimum=1, maximum=8),
    Param("replication_factor", int, 2, "InitReplicationFactor (<= brokers)", minimum=1,
          maximum=8),
    Param("min_isr", int, 1, "MinISR (<= init_isr_size)", minimum=0, maximum=8),
    Param("init_isr_size", int, 2, "InitIsrSize (<= replication_factor); brokers outside the "
          "initial ISR start fenced and stale", minimum=1, maximum=8),
    Param("values", int, 1, "|Values|: the values A, B, ... leaders write, each once (the "
          "cfgs' Values = {A}: 1)", minimum=1, maximum=4),
)
_LIMITS = (
    Param("fence_broker_limit", int, 0, "FenceBrokerLimit: FenceBroker steps allowed",
          minimum=0, maximum=99),
    Param("leader_shrink_isr_limit", int, 0, "LeaderShrinkIsrLimit: AlterPartition requests "
          "that may time out ISR members", minimum=0, maximum=99),
    Param("reassignment_limit", int, 0, "ReassignmentLimit: PerformPartitionReassignment steps",
          minimum=0, maximum=99),
)
_CHECKS = (
    Param("incarnation_check", bool, True, "[fault] false: ReceiveBrokerRegResponse ignores the "
          "incarnation id", fault=True),
    Param("fetcher_epoch_check", bool, True, "[fault] false: AddPartitionToFetcher re-adds the "
          "partition only when not added (not on a new leader epoch)", fault=True),
    Param("reset_follower_state", bool, True, "[fault] false: a re-elected leader keeps the "
          "follower state of replicas outside the new ISR", fault=True),
    Param("isr_fetched_check", bool, True, "[fault] false: a replica that never fetched may "
          "join the ISR (FollowerIsCaughtUp's leo # Nil)", fault=True),
    Param("isr_hwm_check", bool, True, "[fault] false: joining the ISR needs no fetch offset "
          ">= HW", fault=True),
    Param("isr_leso_check", bool, True, "[fault] false: joining the ISR needs no fetch offset "
          ">= the leader epoch start offset", fault=True),
    Param("fetch_response_check", bool, True, "[fault] false: a fetch response is used even "
          "when its fetch offset or leader epoch no longer match", fault=True),
    Param("kip903_check", bool, True, "[fault] false: AlterPartition ignores the broker epochs "
          "of proposed ISR members (KIP-903 removed)", fault=True),
    Param("partition_epoch_check", bool, True, "[fault] false: AlterPartition ignores a stale "
          "partition epoch", fault=True),
)
_UNFAIR = Param("unfair", str, "", "comma-separated actions of the spec's Liveness whose weak "
                "fairness --liveness drops (e.g. UnfenceBroker); empty: all eleven fair")
_VIEW = Param("view", str, "published", "published: TLC's VIEW view of the cfg (states "
              "identified without messages_discard and the aux variables; the first state "
              "found for a view is expanded); none: every variable", choices=("published", "none"))

PARAMS_V35 = (
    *_SIZES,
    Param("clean_shutdown_limit", int, 0, "CleanShutdownLimit", minimum=0, maximum=99),
    Param("unclean_shutdown_limit", int, 0, "UncleanShutdownLimit", minimum=0, maximum=99),
    *_LIMITS,
    Param("avoid_last_replica_standing", bool, True, "AvoidLastReplicaStanding: TRUE keeps the "
          "last ISR member from shutting down uncleanly (FALSE exposes the flaw)"),
    Param("invariants", str, ",".join(INVARIANTS_V35), "comma-separated INVARIANTs among "
          + ", ".join(INVARIANTS_V35) + "; or none"),
    _VIEW, _UNFAIR, *_CHECKS,
)
PARAMS_KIP966 = (
    *_SIZES,
    Param("no_data_loss_shutdown_limit", int, 0, "NoDataLossShutdownLimit", minimum=0,
          maximum=99),
    Param("data_loss_shutdown_limit", int, 0, "DataLossShutdownLimit", minimum=0, maximum=99),
    *_LIMITS,
    Param("invariants", str, ",".join(INVARIANTS_KIP966), "comma-separated INVARIANTs among "
          + ", ".join(INVARIANTS_KIP966) + ", ValidControllerIsrAndElr; or none"),
    _VIEW, _UNFAIR, *_CHECKS,
    Param("hw_min_isr_gate", bool, True, "[fault] false: the HW advances with an ISR below "
          "MinISR (KIP-966's SafeToAdvanceHwm removed)", fault=True),
)


def _invariants(text: str) -> tuple[str, ...]:
    names = tuple(part.strip() for part in text.split(",") if part.strip())
    return () if names == ("none",) else names


def _config(kip966: bool, p: Mapping[str, ParamValue]) -> KraftConfig:
    checks = {param.name: bool(p[param.name]) for param in _CHECKS}
    if kip966:
        checks["hw_min_isr_gate"] = bool(p["hw_min_isr_gate"])
    return KraftConfig(
        kip966=kip966, brokers=int(p["brokers"]),
        replication_factor=int(p["replication_factor"]), min_isr=int(p["min_isr"]),
        init_isr_size=int(p["init_isr_size"]),
        clean_limit=int(p["no_data_loss_shutdown_limit" if kip966 else "clean_shutdown_limit"]),
        unclean_limit=int(p["data_loss_shutdown_limit" if kip966 else "unclean_shutdown_limit"]),
        fence_broker_limit=int(p["fence_broker_limit"]),
        leader_shrink_isr_limit=int(p["leader_shrink_isr_limit"]),
        reassignment_limit=int(p["reassignment_limit"]),
        avoid_last_replica_standing=bool(p.get("avoid_last_replica_standing", True)),
        invariants=_invariants(str(p["invariants"])), view=p["view"] == "published",
        unfair=tuple(a.strip() for a in str(p["unfair"]).split(",") if a.strip()),
        values=int(p["values"]), **checks,
    )


def kraft_config(kip966: bool, params: Mapping[str, ParamValue]) -> KraftConfig:
    """The ``KraftConfig`` of parsed parameters (for the model's Z3 encoding,
    ``isrlab.spec.symbolic.tla_kraft``)."""
    return _config(kip966, params)


def build_v35(params: Mapping[str, ParamValue]) -> KraftModel:
    """``tla-kraft-3.5`` for parsed parameters (ValueError when the ASSUMEs fail)."""
    return KraftModel(_config(False, params))


def build_kip966(params: Mapping[str, ParamValue]) -> KraftModel:
    """``tla-kraft-kip966`` for parsed parameters (ValueError when the ASSUMEs fail)."""
    return KraftModel(_config(True, params))
