"""Refinement of ``kafka -p controller=kraft`` to ``tla-kraft-3.5`` / ``tla-kraft-kip966``
(``isrlab.spec.kafka.kraft_refinement``) on small configurations."""

from __future__ import annotations

import os
from typing import Any

import pytest

from isrlab.spec.kafka import kraft_refinement
from isrlab.spec.kafka.kraft_model import KRaftModel
from isrlab.spec.kafka.kraft_refinement import (
    VERSIONS,
    check_refinement,
    initial_pairs,
    matching_config,
    observe,
    project,
    random_walks,
    tla_for,
)
from isrlab.spec.kafka.kraft_refinement_gaps import GAP_STEPS

MIN_ISR = {"tla-kraft-3.5": 1, "tla-kraft-kip966": 2}
"""min ISR 2 for kip-966, so that the ELR and the HW gate act on two brokers."""


def small(version: str, epochs: int = 1, **changes: Any) -> KRaftModel:
    """2 brokers, leader epochs 0..``epochs``, metadata lag 1 (complete: a few seconds)."""
    return KRaftModel(matching_config(version, 2, epochs, 1, MIN_ISR[version], **changes), ())


def plain_bfs(m: KRaftModel) -> tuple[int, int, set[str]]:
    """The kafka state space walked independently of the refinement checker: states,
    transitions, and the actions of its steps."""
    seen: set[Any] = set(m.init_states())
    queue = list(seen)
    edges = 0
    actions: set[str] = set()
    while queue:
        s = queue.pop()
        for label, t in m.next_states(s):
            edges += 1
            actions.add(label.split("(")[0])
            if t not in seen:
                seen.add(t)
                queue.append(t)
    return len(seen), edges, actions


def transitions_by_plain_bfs(m: KRaftModel) -> tuple[int, int]:
    """``plain_bfs``'s states and transitions."""
    return plain_bfs(m)[:2]


@pytest.mark.parametrize("version", VERSIONS)
def test_every_transition_refines_with_the_named_gap_steps(version: str) -> None:
    m = small(version)
    result = check_refinement(m, tla_for(m), gaps=GAP_STEPS)
    assert result.ok, result.failures
    assert (result.states, result.transitions) == transitions_by_plain_bfs(m)
    assert result.max_steps >= 3  # a fetch is the spec's request, its handling, its response
    # two brokers need only the steps of one follower
    assert set(result.gap_kinds) <= {"LeaderIncHwOnWrite", "LeaderAwaitsMetadataOnFencedError",
                                     "LeaderResendsRefusedAlterPartition"}


# Each two-broker gap step, the version and the kafka step that fails without it.
NEEDED = [
    ("tla-kraft-3.5", "LeaderIncHwOnWrite", "Produce"),
    ("tla-kraft-3.5", "LeaderAwaitsMetadataOnFencedError", "AlterPartitionResponse"),
    ("tla-kraft-3.5", "LeaderResendsRefusedAlterPartition", "Fetch"),
    ("tla-kraft-kip966", "LeaderAwaitsMetadataOnFencedError", "AlterPartitionResponse"),
    ("tla-kraft-kip966", "LeaderResendsRefusedAlterPartition", "Fetch"),
]


@pytest.mark.parametrize(("version", "gap", "kafka_step"), NEEDED)
def test_each_two_broker_gap_step_is_needed(version: str, gap: str, kafka_step: str) -> None:
    m = small(version)
    result = check_refinement(m, tla_for(m), gaps=set(GAP_STEPS) - {gap})
    assert not result.ok
    assert set(result.failed_kinds) == {kafka_step}


@pytest.mark.parametrize("version", VERSIONS)
def test_make_leader_applying_an_equal_epoch_is_a_gap(version: str) -> None:
    # Partition.makeLeader (3.7.0) skips only an older partition epoch; the spec's
    # ReceiveMetadataUpdate treats a not-newer one as MetadataNoOp: with apply, a leader
    # replaying its own accepted change drops its pending expansion, which no port step does.
    m = small(version, make_leader_equal_epoch="apply")
    result = check_refinement(m, tla_for(m), gaps=GAP_STEPS)
    assert not result.ok
    assert set(result.failed_kinds) == {"HandleCommit"}


@pytest.mark.parametrize("version", VERSIONS)
def test_controlled_shutdown_refines_with_the_spec_own_steps(version: str) -> None:
    # ControlledShutdown(b) is the spec's FenceBroker (b out of the ISR and of the leader
    # candidates, still running) or, leading nothing, its CleanShutdown / NoDataLossShutdown;
    # ShutdownNow(b) is the latter: no gap step beyond the two-broker ones.
    m = small(version, controlled_shutdown=True)
    result = check_refinement(m, tla_for(m), gaps=GAP_STEPS)
    assert result.ok, result.failures
    states, transitions, actions = plain_bfs(m)
    assert (result.states, result.transitions) == (states, transitions)
    assert {"ControlledShutdown", "ShutdownNow"} <= actions
    assert set(result.gap_kinds) <= {"LeaderIncHwOnWrite", "LeaderAwaitsMetadataOnFencedError",
                                     "LeaderResendsRefusedAlterPartition"}


def test_controlled_shutdown_needs_fencing_and_the_shutting_down_observation(
        monkeypatch: pytest.MonkeyPatch) -> None:
    m = small("tla-kraft-3.5", controlled_shutdown=True)
    # a broker in controlled shutdown observed as unfenced: the spec has no such state
    with monkeypatch.context() as patch:
        patch.setattr(kraft_refinement, "SHUTTING_DOWN", 0)
        result = check_refinement(m, tla_for(m), gaps=GAP_STEPS)
    assert not result.ok and "ControlledShutdown" in result.failed_kinds
    # the in-controlled-shutdown batch without the spec's FenceBroker
    alphabet = {**kraft_refinement.ALPHABET, "ControlledShutdown": (("CleanShutdown", True),)}
    monkeypatch.setattr(kraft_refinement, "ALPHABET", alphabet)
    result = check_refinement(m, tla_for(m), gaps=GAP_STEPS)
    assert set(result.failed_kinds) == {"ControlledShutdown"}


# The controller operations, each on the small space (preferred elections need a third
# leader epoch: the preferred replica loses leadership, then gets it back), with the gap
# steps each needs beyond the two-broker ones.
OPERATIONS = [
    ({"preferred_election": True, "epochs": 2},
     {"PreferredLeaderElection", "LeaderAnswersWithHwBeforeUpdate"}),
    ({"controller_failover": True}, {"ControllerFailoverResends"}),
    ({"unclean_election": True}, {"UncleanLeaderElection", "FollowerTruncationCapsHw"}),
]
TWO_BROKER_GAPS = {"LeaderIncHwOnWrite", "LeaderAwaitsMetadataOnFencedError",
                   "LeaderResendsRefusedAlterPartition"}


@pytest.mark.parametrize("version", VERSIONS)
@pytest.mark.parametrize(("changes", "gaps"), OPERATIONS)
def test_controller_operations_refine_with_their_gap_steps(
        version: str, changes: dict[str, Any], gaps: set[str]) -> None:
    m = small(version, **changes)
    result = check_refinement(m, tla_for(m), gaps=GAP_STEPS)
    assert result.ok, result.failures
    assert (result.states, result.transitions) == transitions_by_plain_bfs(m)
    assert set(result.gap_kinds) <= TWO_BROKER_GAPS | gaps


# Each new gap step, the small space (tla-kraft-3.5) it is needed on, and the kafka steps
# that fail without it.
OPERATION_GAPS_NEEDED = [
    ({"preferred_election": True, "epochs": 2}, "PreferredLeaderElection",
     {"PreferredElection"}),
    # the preferred replica leads again with the HW not yet learnt; the old leader, in the
    # ISR with a higher HW, takes the HW the leader read before the fetch raised it
    ({"preferred_election": True, "epochs": 2}, "LeaderAnswersWithHwBeforeUpdate", {"Fetch"}),
    ({"controller_failover": True}, "ControllerFailoverResends", {"ControllerFailover"}),
    ({"unclean_election": True}, "UncleanLeaderElection", {"FenceBroker"}),
    # after the unclean election the old leader truncates its committed record
    ({"unclean_election": True}, "FollowerTruncationCapsHw", {"Truncate"}),
]


@pytest.mark.parametrize(("changes", "gap", "kafka_steps"), OPERATION_GAPS_NEEDED)
def test_each_controller_operation_gap_step_is_needed(
        changes: dict[str, Any], gap: str, kafka_steps: set[str]) -> None:
    m = small("tla-kraft-3.5", **changes)
    with_it = check_refinement(m, tla_for(m), gaps=GAP_STEPS)
    assert with_it.ok and with_it.gap_kinds.get(gap, 0) >= 1
    without = check_refinement(m, tla_for(m), gaps=set(GAP_STEPS) - {gap})
    assert set(without.failed_kinds) == kafka_steps


@pytest.mark.parametrize("version", VERSIONS)
def test_a_power_loss_needs_its_gap_step(version: str) -> None:
    # One walk (2 brokers, power losses, 20 steps, seed 1): its first PowerLoss(0) refines
    # only with BrokerLosesPowerBeforeFencing; Flush is a stutter.
    m = small(version, crashes="unclean")
    tla = tla_for(m)
    gaps = set(GAP_STEPS) - {"BrokerLosesPowerBeforeFencing"}
    without = random_walks(m, tla, 1, 20, 1, gaps=gaps)
    assert without.failed == 1 and without.failures[0].startswith("PowerLoss(0)")
    with_it = random_walks(m, tla, 1, 20, 1, gaps=GAP_STEPS)
    assert with_it.ok, with_it.failures
    assert with_it.gap_kinds.get("BrokerLosesPowerBeforeFencing", 0) >= 1


def test_a_replaced_disk_is_its_gap_step_never_a_stutter(
        monkeypatch: pytest.MonkeyPatch) -> None:
    # One walk (2 brokers, clean crashes, empty disks, 30 steps, seed 3) replaces the disk of
    # a down broker whose log is already empty: nothing observed changes, but the next
    # registration is unclean (KIP-966: broker 0 leaves the ELR).  Matched by a stutter the
    # walk fails at that RegisterBroker(0); by DiskReplacedWhileDown it refines.
    m = small("tla-kraft-kip966", crashes="clean", empty_disk=True)
    tla = tla_for(m)
    with_it = random_walks(m, tla, 1, 30, 3, gaps=GAP_STEPS)
    assert with_it.ok, with_it.failures
    assert with_it.gap_kinds.get("DiskReplacedWhileDown", 0) >= 1
    monkeypatch.setattr(kraft_refinement, "FORCED", {})
    stutter = random_walks(m, tla, 1, 30, 3, gaps=GAP_STEPS)
    assert stutter.failed == 1 and stutter.failures[0].startswith("RegisterBroker(0)")


def test_the_last_known_leader_election_is_its_gap_step() -> None:
    # One walk (3 brokers, epochs 0..2, lag 2, power losses, replaced disks, 30 steps, seed 3):
    # broker 1, the only ELR member (ISR empty), registers uncleanly after a replaced disk;
    # PartitionChangeBuilder.electAnyLeader's canElectLastKnownLeader then elects the
    # last-known leader, broker 0, outside the ISR and the ELR (leader epoch 2, ISR {0}).  The
    # spec's MaybeUpdatePartitionOnBrokerChange leaves the partition leaderless: without
    # LastKnownLeaderElection the walk fails there; with it the walk refines.
    m = KRaftModel(matching_config("tla-kraft-kip966", 3, 2, 2, 2, crashes="unclean",
                                   empty_disk=True), ())
    tla = tla_for(m)
    without = random_walks(m, tla, 1, 30, 3, gaps=set(GAP_STEPS) - {"LastKnownLeaderElection"})
    assert without.failed == 1
    assert without.failures[0].startswith("RegisterBroker(1): from (-1, 1, 0, 2, 1,")
    assert " to (0, 2, 1, 0, " in without.failures[0]
    with_it = random_walks(m, tla, 1, 30, 3, gaps=GAP_STEPS)
    assert with_it.ok, with_it.failures
    assert with_it.gap_kinds.get("LastKnownLeaderElection", 0) == 1


def test_the_last_known_leader_is_observed(monkeypatch: pytest.MonkeyPatch) -> None:
    # The history variable the check keeps for the port (the last leader before the ISR
    # emptied) is compared with the kafka controller's last-known ELR at every step: a rule
    # that never records it fails the same walk where the ISR first empties (FenceBroker), not
    # only where Kafka elects it.
    m = KRaftModel(matching_config("tla-kraft-kip966", 3, 2, 2, 2, crashes="unclean",
                                   empty_disk=True), ())
    monkeypatch.setattr(kraft_refinement, "stepped", lambda _u, v: v)
    walk = random_walks(m, tla_for(m), 1, 30, 3, gaps=GAP_STEPS)
    assert walk.failed == 1 and walk.failures[0].startswith("FenceBroker(")


def test_kip903_off_maps_to_the_port_without_its_check() -> None:
    # kip903=false (Kafka 3.3-3.4: AlterPartition carries no broker epochs) is the port with
    # kip903_check=false; walks with restarts and replaced disks refine.  (No walk found so
    # far where the check decides: a leader learns a restarted follower's new broker epoch
    # from its fetch before it proposes it.)
    m = small("tla-kraft-kip966", kip903=False, crashes="clean", empty_disk=True)
    tla = tla_for(m)
    assert not tla.config.kip903_check
    walks = random_walks(m, tla, 10, 30, 1, gaps=GAP_STEPS)
    assert walks.ok, walks.failures


@pytest.mark.parametrize("version", VERSIONS)
def test_the_leader_epoch_bump_on_isr_shrink_is_not_mapped(version: str) -> None:
    # kraft_epoch_bump=isr-shrink (3.0-3.5, metadata.version < 3.6-IV0: KAFKA-15021): a
    # record that shrinks the ISR bumps the leader epoch (triggerLeaderEpochBumpIfNeeded);
    # both ports keep it, as 3.6+ does: the shrinks fail, at a fencing and an AlterPartition.
    m = small(version, kraft_epoch_bump="isr-shrink")
    result = check_refinement(m, tla_for(m), gaps=GAP_STEPS)
    assert set(result.failed_kinds) == {"AlterPartition", "FenceBroker"}


@pytest.mark.heavy
@pytest.mark.skipif(bool(os.environ.get("ISRLAB_SKIP_HEAVY")), reason="about 30 s")
def test_power_losses_refine() -> None:
    m = small("tla-kraft-3.5", crashes="unclean")
    result = check_refinement(m, tla_for(m), gaps=GAP_STEPS)
    assert result.ok, result.failures
    assert (result.states, result.transitions) == transitions_by_plain_bfs(m)
    assert result.gap_kinds.get("BrokerLosesPowerBeforeFencing", 0) >= 1


def test_the_initial_states_agree() -> None:
    for version in VERSIONS:
        m = small(version)
        tla = tla_for(m)
        ((s0, ts),) = initial_pairs(m, tla)
        assert len(ts) == 1
        (t0,) = ts
        # broker 0 leads epoch 0 with every broker in its ISR, nothing written
        assert project(m, s0) == observe(tla, t0)
        assert project(m, s0)[:3] == (0, 0, 0b11)


def test_a_step_without_a_declared_counterpart_is_refused() -> None:
    # Reassign: the kafka model has no reassignment in KRaft mode; a label of it is refused
    m = small("tla-kraft-3.5")
    matcher = kraft_refinement.Matcher(m, tla_for(m), 5, GAP_STEPS)
    with pytest.raises(ValueError, match="no port counterpart declared"):
        matcher.steps("Reassign(10)")


def test_a_configuration_outside_the_mapping_is_refused() -> None:
    # the ports' Values hold at most four values (A..D)
    with pytest.raises(ValueError, match="max_records=5"):
        tla_for(small("tla-kraft-3.5", max_records=5))


TWO_RECORD_GAPS = {"LeaderAnswersWithEveryRecord", "LeaderAnswersWithHwBeforeUpdate",
                   "LeaderAppendsWhereTheSpecStops"}
"""The gap steps two records need beyond the two-broker ones."""


@pytest.mark.parametrize("version", VERSIONS)
def test_two_records_refine(version: str) -> None:
    # max_records=2 against the port with Values = {A, B} (leader epoch 0 only: a few
    # seconds); a follower two records behind gets both in one fetch
    m = small(version, epochs=0, max_records=2)
    tla = tla_for(m)
    assert tla.values == (1, 2)
    result = check_refinement(m, tla, gaps=GAP_STEPS)
    assert result.ok, result.failures
    assert (result.states, result.transitions) == transitions_by_plain_bfs(m)
    assert "LeaderAnswersWithEveryRecord" in result.gap_kinds
    assert set(result.gap_kinds) <= TWO_BROKER_GAPS | TWO_RECORD_GAPS


# Each two-record gap step, the version, and the kafka steps that fail without it (with min
# ISR 1 a leader alone commits its second record on the write, where the spec stops).
TWO_RECORD_NEEDED = [
    ("tla-kraft-3.5", "LeaderAnswersWithEveryRecord", {"Fetch"}),
    ("tla-kraft-3.5", "LeaderAppendsWhereTheSpecStops", {"Produce"}),
    ("tla-kraft-kip966", "LeaderAnswersWithEveryRecord", {"Fetch"}),
]


def test_a_power_loss_keeps_the_flushed_prefix() -> None:
    # One walk (2 brokers, two records, power losses, 30 steps, seed 20): broker 1 loses
    # power with its first record flushed and its second not; the spec's shutdowns lose the
    # whole log or none of it, so without BrokerLosesUnflushedTailBeforeFencing the walk
    # fails at that PowerLoss(1).
    m = small("tla-kraft-3.5", max_records=2, crashes="unclean")
    tla = tla_for(m)
    gaps = set(GAP_STEPS) - {"BrokerLosesUnflushedTailBeforeFencing"}
    without = random_walks(m, tla, 1, 30, 20, gaps=gaps)
    assert without.failed == 1 and without.failures[0].startswith("PowerLoss(1)")
    with_it = random_walks(m, tla, 1, 30, 20, gaps=GAP_STEPS)
    assert with_it.ok, with_it.failures
    assert with_it.gap_kinds.get("BrokerLosesUnflushedTailBeforeFencing", 0) == 1


@pytest.mark.parametrize(("version", "gap", "kafka_steps"), TWO_RECORD_NEEDED)
def test_each_two_record_gap_step_is_needed(version: str, gap: str,
                                            kafka_steps: set[str]) -> None:
    m = small(version, epochs=0, max_records=2)
    result = check_refinement(m, tla_for(m), gaps=set(GAP_STEPS) - {gap})
    assert set(result.failed_kinds) == kafka_steps


def test_random_walks_are_deterministic() -> None:
    m = small("tla-kraft-3.5")
    a = random_walks(m, tla_for(m), walks=20, length=15, seed=7, gaps=GAP_STEPS)
    b = random_walks(m, tla_for(m), walks=20, length=15, seed=7, gaps=GAP_STEPS)
    assert a.ok and a.summary() == b.summary()


def large(version: str) -> KRaftModel:
    return KRaftModel(matching_config(version, 3, 2, 2, MIN_ISR[version]), ())


# One walk (3 brokers, epochs 0..2, metadata lag 2, 30 steps, the seed given) whose named
# kafka step refines only with the named gap step.
WITNESSES = [
    ("tla-kraft-3.5", 17, "LeaderExpandsIsrByOne", "Fetch(1)"),
    ("tla-kraft-3.5", 15, "LeaderShrinksIsrOnly", "ShrinkIsr(0)"),
]


@pytest.mark.parametrize(("version", "seed", "gap", "failing_step"), WITNESSES)
def test_each_three_broker_gap_step_is_needed(version: str, seed: int, gap: str,
                                              failing_step: str) -> None:
    m = large(version)
    tla = tla_for(m)
    without = random_walks(m, tla, 1, 30, seed, gaps=set(GAP_STEPS) - {gap})
    assert without.failed == 1
    assert without.failures[0].startswith(failing_step + ": from ")
    with_it = random_walks(m, tla, 1, 30, seed, gaps=GAP_STEPS)
    assert with_it.ok, with_it.failures
    assert with_it.gap_kinds.get(gap, 0) >= 1


# One walk (2 brokers, epochs 0..1, metadata lag 1, clean crashes, 20 steps, seed 1) whose
# named kafka step refines only with the named gap step.
CRASH_WITNESSES = [("BrokerStopsBeforeFencing", "Crash("),
                   ("RegistersFenced", "RegisterBroker(")]


@pytest.mark.parametrize(("gap", "failing_step"), CRASH_WITNESSES)
def test_each_restart_gap_step_is_needed(gap: str, failing_step: str) -> None:
    m = small("tla-kraft-3.5", crashes="clean")
    tla = tla_for(m)
    without = random_walks(m, tla, 1, 20, 1, gaps=set(GAP_STEPS) - {gap})
    assert without.failed == 1
    assert without.failures[0].startswith(failing_step)
    with_it = random_walks(m, tla, 1, 20, 1, gaps=GAP_STEPS)
    assert with_it.ok, with_it.failures
    assert with_it.gap_kinds.get(gap, 0) >= 1


@pytest.mark.heavy
@pytest.mark.skipif(bool(os.environ.get("ISRLAB_SKIP_HEAVY")), reason="about 15-20 s each")
@pytest.mark.parametrize("version", VERSIONS)
def test_clean_crashes_and_restarts_refine(version: str) -> None:
    m = small(version, crashes="clean")
    result = check_refinement(m, tla_for(m), gaps=GAP_STEPS)
    assert result.ok, result.failures
    assert (result.states, result.transitions) == transitions_by_plain_bfs(m)
    assert {"BrokerStopsBeforeFencing", "RegistersFenced"} <= set(result.gap_kinds)


@pytest.mark.heavy
@pytest.mark.skipif(bool(os.environ.get("ISRLAB_SKIP_HEAVY")), reason="about 5-15 s")
@pytest.mark.parametrize("version", VERSIONS)
def test_three_broker_random_walks_refine(version: str) -> None:
    m = large(version)
    walks = random_walks(m, tla_for(m), 100, 30, 1, gaps=GAP_STEPS)
    assert walks.ok, walks.failures
    assert walks.transitions > 100 * 25  # most walks run their 30 steps
