"""The HW checkpoint file across a restart, by Kafka version (``hw_checkpoint_file``).

Every release writes ``replication-offset-checkpoint`` on its thread and again in a clean
shutdown (``ReplicaManager.shutdown(checkpointHW = true)``); 0.8.2 fsyncs it before the
rename (KAFKA-1539), so only 0.8.0/0.8.1 may find it empty after a power loss; a partition
missing from the file reads back as HW 0.  ``periodic`` is the model before the shutdown
write (no release).  The expected values are read off the steps by hand (see comments).
"""

from __future__ import annotations

from typing import Any

import pytest

from isrlab.checker.bfs import CheckOptions, explore
from isrlab.spec.kafka.config import KafkaConfig
from isrlab.spec.kafka.model import KafkaModel
from isrlab.spec.kafka.state import F_CHECKPOINT_LOST, KafkaState

State = KafkaState


def model(**kw: Any) -> KafkaModel:
    return KafkaModel(KafkaConfig(controller="zookeeper", hw_checkpoint=True, **kw))


def step(m: KafkaModel, s: State, label: str) -> State:
    found = [t for lab, t in m.next_states(s) if lab == label]
    assert found, f"{label} not enabled; enabled: {[lab for lab, _ in m.next_states(s)]}"
    return found[0]


def labels(m: KafkaModel, s: State) -> list[str]:
    return [lab for lab, _ in m.next_states(s)]


def committed_on_both(m: KafkaModel) -> State:
    """m0 produced and fetched twice: the leader's HW is 1, no checkpoint written yet."""
    s = next(iter(m.init_states()))
    for label in ("Produce(0)", "Fetch(1)", "Fetch(1)"):
        s = step(m, s, label)
    assert s.brokers[0].high_watermark == 1 and s.brokers[0].hw_checkpoint == 0
    return s


@pytest.mark.parametrize("version, hw", [("fsync", 1), ("no-fsync", 1), ("periodic", 0)])
def test_a_clean_shutdown_writes_the_final_hw_in_every_release(version: str, hw: int) -> None:
    # The thread never ran: the file holds 0 until ReplicaManager.shutdown writes HW 1
    # (every release); periodic keeps the thread's last write, nothing.
    m = model(hw_checkpoint_file=version)
    down = step(m, committed_on_both(m), "Crash(0)").brokers[0]
    assert (down.high_watermark, down.hw_checkpoint) == (hw, hw)
    up = step(m, step(m, committed_on_both(m), "Crash(0)"), "Restart(0)").brokers[0]
    assert up.high_watermark == hw


@pytest.mark.parametrize("version", ["fsync", "no-fsync"])
def test_a_power_loss_reads_the_threads_last_write(version: str) -> None:
    m = model(hw_checkpoint_file=version, crashes="unclean")
    s = step(m, committed_on_both(m), "Flush(0)")  # m0 on disk: a power loss keeps it
    # No write yet: a power loss finds HW 0 where Crash(0) would have written 1, so it is
    # a step of its own even with the whole log flushed.
    assert step(m, s, "PowerLoss(0)").brokers[0].high_watermark == 0
    s = step(m, s, "CheckpointHw(0)")
    assert s.brokers[0].hw_checkpoint == 1
    # now it would restart as Crash(0) does (HW 1): no step of its own
    assert "PowerLoss(0)" not in labels(m, s)
    assert ("PowerLoss(0,empty-hw-file)" in labels(m, s)) == (version == "no-fsync")
    # m1 committed (leader HW 2) and flushed after the write: the power loss reads 1
    for label in ("Produce(0)", "Fetch(1)", "Fetch(1)", "Flush(0)"):
        s = step(m, s, label)
    assert s.brokers[0].high_watermark == 2 and s.brokers[0].hw_checkpoint == 1
    assert step(m, s, "PowerLoss(0)").brokers[0].high_watermark == 1
    assert step(m, s, "Crash(0)").brokers[0].high_watermark == 2


def test_before_0_8_2_a_power_loss_may_find_the_file_empty() -> None:
    # KAFKA-1539: 0.8.0/0.8.1 renamed the new file without an fsync; an empty file reads
    # as no partition, HW 0, though the thread had written 1 and the log kept m0.
    m = model(hw_checkpoint_file="no-fsync", crashes="unclean")
    s = step(m, step(m, committed_on_both(m), "Flush(0)"), "CheckpointHw(0)")
    down = step(m, s, "PowerLoss(0,empty-hw-file)").brokers[0]
    assert (len(down.log), down.high_watermark, down.hw_checkpoint) == (1, 0, 0)
    m = model(hw_checkpoint_file="no-fsync", crashes="unclean", crash_loss="tail")
    s = step(m, step(m, committed_on_both(m), "Flush(0)"), "CheckpointHw(0)")
    assert [lab for lab in labels(m, s) if lab.startswith("PowerLoss(0")] == [
        "PowerLoss(0,1,empty-hw-file)"]  # PowerLoss(0,1) with the file is Crash(0)'s restart


def test_without_hw_checkpoint_the_file_behaviour_changes_nothing() -> None:
    counts = set()
    for version in ("fsync", "no-fsync", "periodic"):
        m = KafkaModel(KafkaConfig(controller="zookeeper", hw_checkpoint_file=version,
                                   crashes="unclean", max_records=1, max_leader_epoch=1))
        frontier = {m.encode(s) for s in m.init_states()}
        seen = set(frontier)
        for _ in range(6):
            frontier = {m.encode(t) for x in frontier for _, t in m.next_states(m.decode(x))}
            frontier -= seen
            seen |= frontier
        counts.add(frozenset(seen))
    assert len(counts) == 1


KAFKA_081: dict[str, Any] = dict(
    max_records=1, max_leader_epoch=1, isr_shrink=False, truncation="hw", fetch_fencing="none",
    expand_rule="hw", kafka_4485=False, kafka_7414=False, elr=False, unavailable_leader="skip",
    isr_changes="zookeeper")


def test_0_8_1_a_partition_left_out_of_the_file_reads_back_hw_0() -> None:
    # KAFKA-1647 with the shutdown write (counted by hand):
    #  1 Init   2 Produce m0 on 0   3 broker 1 fetches m0   4 again: 0's HW 1
    #  5 broker 0 shuts down cleanly: its file holds HW 1 (ReplicaManager.shutdown)
    #  6 broker 1 is elected (epoch 1, ISR {1})   7 broker 1 shuts down
    #  8 broker 0 restarts: "follow 1", which is down, is queued to it
    #  9 it handles the request: 0.8.1 creates no replica; the checkpoint thread starts
    # 10 the thread writes the file without the partition: getOrCreateReplica will read 0.
    m = model(hw_checkpoint_file="no-fsync", **KAFKA_081)
    s = committed_on_both(m)
    s = step(m, s, "Crash(0)")
    assert s.brokers[0].hw_checkpoint == 1
    for label in ("ElectLeader", "Crash(1)", "Restart(0)"):
        s = step(m, s, label)
    (deliver,) = [lab for lab in labels(m, s) if lab.startswith("Deliver")]
    s = step(m, s, deliver)
    assert s.brokers[0].hw_checkpoint == 1 and s.brokers[0].high_watermark == 1
    lost = step(m, s, "CheckpointHw(0)")
    assert lost.ghost.flags & F_CHECKPOINT_LOST
    assert (lost.brokers[0].hw_checkpoint, lost.brokers[0].high_watermark) == (0, 0)
    # periodic (the model before): the file loses the partition, the HW-to-be stays 1
    m = model(hw_checkpoint_file="periodic", **KAFKA_081)
    s = step(m, step(m, committed_on_both(m), "CheckpointHw(0)"), "Crash(0)")
    for label in ("ElectLeader", "Crash(1)", "Restart(0)"):
        s = step(m, s, label)
    (deliver,) = [lab for lab in labels(m, s) if lab.startswith("Deliver")]
    kept = step(m, step(m, s, deliver), "CheckpointHw(0)").brokers[0]
    assert (kept.hw_checkpoint, kept.high_watermark) == (0, 1)


def test_0_8_1_a_clean_shutdown_before_the_first_leader_and_isr_writes_nothing() -> None:
    # From a restart to its first LeaderAndIsr a 0.8.1 broker hosts no partition, so its
    # shutdown finds no log to checkpoint and leaves the file as it was; after a request
    # that created no replica, the shutdown's write leaves the partition out.
    m = model(hw_checkpoint_file="no-fsync", **KAFKA_081)
    s = step(m, committed_on_both(m), "Crash(0)")
    for label in ("ElectLeader", "Crash(1)", "Restart(0)"):
        s = step(m, s, label)
    assert step(m, s, "Crash(0)").brokers[0].high_watermark == 1
    (deliver,) = [lab for lab in labels(m, s) if lab.startswith("Deliver")]
    down = step(m, step(m, s, deliver), "Crash(0)")
    assert down.brokers[0].high_watermark == 0 and down.ghost.flags & F_CHECKPOINT_LOST


@pytest.mark.parametrize("version, states", [("no-fsync", 10), ("fsync", 10),
                                             ("periodic", 11)])
def test_the_shutdown_write_shortens_kafka_1647_by_one_step(version: str, states: int) -> None:
    # The 10 states of the test above; fewer is impossible: 3 steps to a nonzero HW, one
    # write, a crash and a restart of that broker, a down leader named to it (its own
    # restart elects it unless another was elected and went down: 2 steps), the
    # request, the thread's write.  periodic needs scenario 12's 11 (docs/scenarios.md).
    config = KafkaConfig(controller="zookeeper", hw_checkpoint=True, hw_checkpoint_file=version,
                         **KAFKA_081)
    m = KafkaModel(config, ("NoHwCheckpointLost",))
    result = explore(m, CheckOptions())
    assert result.violation is not None
    assert len(result.violation.trace) == states
