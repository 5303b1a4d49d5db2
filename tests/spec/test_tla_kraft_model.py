"""``tla-kraft-*``: the spec's action names as labels (the raw material of fairness), the
VIEW's variables, the ASSUMEs as one-line errors."""

from __future__ import annotations

import pytest
from click.testing import CliRunner

from isrlab.cli import cli
from isrlab.cli_support import resolve_model
from isrlab.spec.tla_kraft import build_v35
from isrlab.spec.tla_kraft.layout import AUX_CTRS, MESSAGES_DISCARD, P_DATA, VARIABLES
from isrlab.spec.tla_kraft.model import KraftModel, SpecError

NEXT_V35 = {
    "BrokerStart", "ReceiveBrokerRegResponse", "ReceiveMetadataUpdate",
    "SendAlterPartitionRequest", "ReceiveAlterPartitionResponse", "SendFetchRequest",
    "ReceiveFetchRequest", "ReceiveFetchResponse", "WriteRecordToLeader", "UncleanShutdown",
    "CleanShutdown", "ReceiveBrokerRegRequest", "ReceiveAlterPartitionRequest", "FenceBroker",
    "UnfenceBroker", "PerformPartitionReassignment",
}
NEXT_KIP966 = NEXT_V35 - {"UncleanShutdown", "CleanShutdown"} | {
    "DataLossShutdown", "NoDataLossShutdown"}


def _labels(name: str, params: list[str]) -> set[str]:
    """Every label of every state reachable within 7 steps."""
    _, _, model = resolve_model(name, params)
    frontier, seen, labels = list(model.init_states()), set(), set()
    for _ in range(7):
        following = []
        for state in frontier:
            for label, successor in model.next_states(state):
                labels.add(label)
                if successor not in seen:
                    seen.add(successor)
                    following.append(successor)
        frontier = following
    return labels


def test_labels_are_the_next_disjuncts_with_their_broker() -> None:
    every = ["fence_broker_limit=1", "reassignment_limit=1", "leader_shrink_isr_limit=1",
             "view=none"]
    v35 = _labels("tla-kraft-3.5", [*every, "clean_shutdown_limit=1",
                                    "unclean_shutdown_limit=1"])
    kip966 = _labels("tla-kraft-kip966", [*every, "no_data_loss_shutdown_limit=1",
                                          "data_loss_shutdown_limit=1"])
    for labels, names in ((v35, NEXT_V35), (kip966, NEXT_KIP966)):
        assert {label.partition("(")[0] for label in labels} == names
        assert all(label == "PerformPartitionReassignment" or label.endswith(("(1)", "(2)"))
                   for label in labels)


def test_the_view_leaves_out_discarded_messages_and_the_aux_variables() -> None:
    model = build_v35(resolve_model("tla-kraft-3.5", [])[1])
    packed = next(iter(model.init_states()))
    state = model.unpack(packed)
    changed = list(state)
    changed[MESSAGES_DISCARD] = ((9,),)
    changed[AUX_CTRS] = (0, 0, 0, 1, 0, 0)
    assert model.view(model.pack(tuple(changed))) == model.view(packed)
    assert model.pack(tuple(changed)) != packed
    changed[P_DATA] = ((), 2, 1)
    assert model.view(model.pack(tuple(changed))) != model.view(packed)
    assert len(VARIABLES) == len(state) == 23


def test_a_packed_state_unpacks_to_itself() -> None:
    model = build_v35(resolve_model("tla-kraft-3.5", ["fence_broker_limit=1"])[1])
    frontier = list(model.init_states())
    for _ in range(6):
        frontier = [t for s in frontier for _, t in model.next_states(s)]
    for packed in frontier:
        state = model.unpack(packed)
        model.unpack(frontier[0])  # another state in between: no stale cache
        assert model.pack(model.unpack(bytes(packed))) == packed and model.unpack(packed) == state


def test_an_assume_that_fails_is_a_one_line_error() -> None:
    result = CliRunner().invoke(cli, ["check", "--model", "tla-kraft-kip966", "-p", "min_isr=3",
                                      "--no-progress"])
    assert result.exit_code == 2
    assert result.output.strip().splitlines() == [
        "isrlab: error: model 'tla-kraft-kip966': ASSUME MinISR <= InitIsrSize <= "
        "InitReplicationFactor fails"]


def test_values_is_a_constant_whose_cfg_value_is_one() -> None:
    _, _, one = resolve_model("tla-kraft-kip966", [])
    _, _, two = resolve_model("tla-kraft-kip966", ["values=2"])
    assert isinstance(one, KraftModel) and isinstance(two, KraftModel)
    assert one.values == (1,) and two.values == (1, 2)
    # with {A, B} a leader writes each value once: two writes in all
    s = two.unpack(next(iter(two.init_states())))
    first = two.write_record_to_leader(s, 1)
    assert [t[P_DATA][0][0][0][2] for t in first] == [1, 2]
    second = [u for t in first for u in two.write_record_to_leader(t, 1)]
    assert sorted(u[P_DATA][0][0][1][2] for u in second) == [1, 2]
    assert all(not two.write_record_to_leader(u, 1) for u in second)


def test_a_write_that_commits_its_own_record_stops_the_spec() -> None:
    # WriteRecordToLeader hands the new HW to UpdateHwmInvariantVars, whose
    # SubSeq(LogOf(b), inv_true_hwm, new_hwm - 1) reads the log before the append: with two
    # values a leader alone in its ISR commits its second record on the write and TLC stops
    # with an evaluation error (with Values = {A} the first write never commits).
    _, _, model = resolve_model("tla-kraft-3.5", [
        "brokers=1", "replication_factor=1", "init_isr_size=1", "values=2"])
    assert isinstance(model, KraftModel)
    s = model.unpack(next(iter(model.init_states())))
    (t, _) = model.write_record_to_leader(s, 1)
    assert t[P_DATA][0][1] == 1  # the first record is not committed on the write
    with pytest.raises(SpecError, match=r"SubSeq\(1 elements, 1, 2\)"):
        model.write_record_to_leader(t, 1)


def test_the_z3_encoding_refuses_two_values_in_one_line() -> None:
    result = CliRunner().invoke(cli, ["bmc", "--model", "tla-kraft-3.5", "-p", "values=2",
                                      "--depth", "1"])
    assert result.exit_code == 2
    assert result.output.strip().splitlines() == [
        "isrlab: error: model 'tla-kraft-3.5': the KRaft encoding holds one value "
        "(Values = {A}): values=2"]
