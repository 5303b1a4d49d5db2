"""The known Kafka replication bugs as ``kafka`` model parameters (see docs/scenarios.md).

Each ``Scenario`` names the general invariant the bug breaks, the parameters of the
buggy protocol version and those of the fixing version: the two differ only in the
protocol parameters the fix changed, so the fix is checked in exactly the same bounds.
Every run also names each parameter of ``PINNED`` explicitly (the protocol-version
parameters and the restart's HW checkpoint), at the value given by the scenario or else at
Kafka 2.1's, so that a change of the model's defaults changes no scenario.
``python -m isrlab.spec.kafka.scenarios`` runs them all and prints each command and verdict.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass

from isrlab.checker.bfs import CheckOptions, explore
from isrlab.checker.registry import Registry
from isrlab.checker.report import CheckResult, explained_result
from isrlab.spec.kafka.registration import register


@dataclass(frozen=True, slots=True)
class Scenario:
    """One known bug: its story, invariant, bounds, and the buggy and fixed versions."""

    key: str
    title: str
    invariant: str
    bounds: tuple[str, ...]
    bug: tuple[str, ...]
    fix: tuple[str, ...]

    def params(self, fixed: bool) -> tuple[str, ...]:
        """The ``key=value`` parameters of the buggy or the fixed run: the bounds, every
        ``PINNED`` parameter the scenario does not name (at its ``PINNED`` value), the
        buggy or fixing version, the invariant."""
        version = self.fix if fixed else self.bug
        named = {p.split("=", 1)[0] for p in (*self.bounds, *self.bug, *self.fix)}
        pins = tuple(f"{k}={v}" for k, v in PINNED.items() if k not in named)
        return (*self.bounds, *pins, *version, f"invariants={self.invariant}")

    def command(self, fixed: bool) -> str:
        """The ``isrlab check`` command line of the buggy or the fixed run."""
        return "isrlab check --model kafka " + " ".join(f"-p {p}" for p in self.params(fixed))


PINNED: dict[str, str] = {
    "truncation": "kip279",
    "fetch_fencing": "true",
    "expand_rule": "epoch-start",
    "kafka_4485": "true",
    "kafka_7414": "true",
    "kafka_7152": "true",
    "hw_checkpoint": "false",
    "elr": "false",
    "unclean_recovery": "first-alive",
    "unavailable_leader": "follow",
    "crash_loss": "all-unflushed",
    "isr_changes": "zookeeper",
    "hw_checkpoint_file": "fsync",
    "controller": "zookeeper",
    "last_known_leader": "unchecked",
}
"""The parameters every scenario run names explicitly, with the value it takes when the
scenario does not choose one: Kafka 2.1's (the model's defaults when the figures of
docs/scenarios.md were measured).  A new version parameter of the model belongs here, at
the value that keeps every scenario's figures (``isr_changes=zookeeper``: Kafka 2.1 writes
its ISR itself); ``hw_checkpoint_file`` only matters with ``hw_checkpoint``, which only
scenario 12 has, and that scenario names its versions' own (0.8.1 wrote the file without
fsync, 0.8.2 with it)."""


KRAFT_BASE = ("controller=kraft", "isr_changes=alter-partition", "unavailable_leader=fetcher",
              "fetch_fencing=final")
"""What every KRaft scenario names: the KRaft mode and the broker rules it needs."""
KRAFT_3_4 = (*KRAFT_BASE, "elr=false", "unclean_detection=none", "kraft_epoch_bump=isr-shrink")
"""KRaft as Kafka 3.3-3.4 run it: no ELR, no unclean-shutdown detection, the leader epoch
bumped on every ISR shrink."""

SCENARIOS = (
    Scenario(
        "kip101-1", "KIP-101 scenario 1: truncate to HW, then election (KAFKA-1211, fixed in 0.11)",
        "NoCommittedRecordLost",
        ("kafka_7152=false",
         "max_records=1", "max_leader_epoch=1", "isr_shrink=false", "lost_requests=false",
         "fetch_fencing=false", "expand_rule=hw"),
        ("truncation=hw",), ("truncation=kip101",),
    ),
    Scenario(
        "kip101-2", "KIP-101 scenario 2: power loss, divergent logs",
        "LogMatching",
        ("kafka_7152=false",
         "crashes=unclean", "max_records=3", "max_leader_epoch=1", "isr_shrink=false",
         "lost_requests=false", "fetch_fencing=true", "expand_rule=hw"),
        ("truncation=hw",), ("truncation=kip279",),
    ),
    Scenario(
        "kip279", "KIP-279: fast leader fail-over (KAFKA-6361, fixed in 2.0)",
        "LogMatching",
        ("kafka_7152=false",
         "max_records=3", "max_leader_epoch=2", "isr_shrink=false", "lost_requests=false",
         "crashes=none", "reassignment=true", "max_controller_epoch=1", "fetch_fencing=true",
         "expand_rule=hw"),
        ("truncation=kip101",), ("truncation=kip279",),
    ),
    Scenario(
        "kip320", "KIP-320: a follower on a stale epoch counts toward the HW (KAFKA-6880, fixed in "
        "2.1)",
        "WeakIsr",
        ("kafka_7152=false",
         "brokers=3", "max_records=1", "max_leader_epoch=1", "isr_shrink=false",
         "crashes=none", "lost_requests=false", "reassignment=true", "truncation=kip279",
         "expand_rule=epoch-start"),
        ("fetch_fencing=false",), ("fetch_fencing=true",),
    ),
    Scenario(
        "jepsen", "Jepsen 2013: the ISR shrinks to the leader, then an unclean election (Kafka 0.8 "
        "beta)",
        "AcknowledgedWritesDurable",
        ("kafka_7152=false",
         "max_records=1", "max_leader_epoch=2", "lost_requests=false", "acks=all"),
        ("unclean_election=true", "min_isr=1"), ("unclean_election=false", "min_isr=2"),
    ),
    Scenario(
        "acks1", "an acks=1 write acknowledged, then lost",
        "AcknowledgedWritesDurable",
        ("max_records=1", "max_leader_epoch=2", "lost_requests=false"),
        ("acks=1",), ("acks=all",),
    ),
    Scenario(
        "kafka7128",
        "KAFKA-7128: a follower joins the ISR against a new leader's lagging HW (fixed in 2.1)",
        "NoCommittedRecordLost",
        ("kafka_7152=false",
         "brokers=3", "initial_isr=2", "max_records=1", "max_leader_epoch=2",
         "isr_shrink=false", "crashes=none", "lost_requests=false", "reassignment=true",
         "fetch=split", "truncation=kip279", "fetch_fencing=true"),
        ("expand_rule=hw",), ("expand_rule=epoch-start",),
    ),
    Scenario(
        "kafka7414", "KAFKA-7414: a follower past its leader's log end exits its broker (Kafka "
        "0.10.2 to 2.0, fixed in 2.1)",
        "NoFatalExit",
        ("kafka_7152=false",
         "crashes=unclean", "max_records=1", "max_leader_epoch=2", "isr_shrink=false",
         "lost_requests=false", "truncation=kip279-2.0", "fetch_fencing=false",
         "expand_rule=hw"),
        ("kafka_7414=false",), ("kafka_7414=true",),
    ),
    Scenario(
        "kip101-halt", "Truncate to HW, then a clean election: the old leader exits its broker "
        "(Kafka 0.10.2, fixed by KIP-101 in 0.11)",
        "NoFatalExit",
        ("kafka_7152=false",
         "max_records=1", "max_leader_epoch=1", "isr_shrink=false", "lost_requests=false",
         "fetch_fencing=false", "expand_rule=hw", "kafka_7414=false"),
        ("truncation=hw",), ("truncation=kip101",),
    ),
    Scenario(
        "kafka7415", "KAFKA-7415: a leader with no record in its epoch sends a follower back to "
        "its HW (Kafka 2.0, fixed in 2.1)",
        "NoCommittedRecordLost",
        ("kafka_7152=false",
         "max_records=2", "max_leader_epoch=3", "isr_shrink=false", "crashes=none",
         "lost_requests=false", "reassignment=true", "fetch_fencing=true",
         "expand_rule=epoch-start"),
        ("truncation=kip279-2.0",), ("truncation=kip279",),
    ),
    Scenario(
        "kip966", "KIP-966: the last ISR member loses acknowledged records in a power "
        "failure and is elected again (Kafka up to 3.6, fixed by ELR in 3.7+)",
        "AckedAllSurvivesCleanElection",
        ("crashes=unclean", "min_isr=2", "max_records=1", "max_leader_epoch=1",
         "unavailable_leader=fetcher"),
        ("elr=false",), ("elr=true",),
    ),
    Scenario(
        "kafka1647", "KAFKA-1647: a follower of a down leader loses its HW checkpoint (fixed "
        "in 0.8.2)",
        "NoHwCheckpointLost",
        ("kafka_7152=false",
         "max_records=1", "max_leader_epoch=1", "isr_shrink=false", "hw_checkpoint=true",
         "truncation=hw", "fetch_fencing=false", "expand_rule=hw", "kafka_4485=false",
         "kafka_7414=false"),
        ("unavailable_leader=skip", "hw_checkpoint_file=no-fsync"),
        ("unavailable_leader=create-log", "hw_checkpoint_file=fsync"),
    ),
    Scenario(
        "stale-leo-failover", "A leader re-elected across a controller failover skips an "
        "epoch and counts a follower's stale LEO (ZooKeeper mode, 2.1 to 3.9, not fixed)",
        "NoCommittedRecordLost",
        ("brokers=3", "initial_isr=2", "max_records=1", "max_leader_epoch=3",
         "isr_shrink=false", "crashes=none", "controlled_shutdown=true", "reassignment=true",
         "max_controller_epoch=1", "unavailable_leader=fetcher"),
        ("leader_state_reset=on-leadership",), ("leader_state_reset=on-epoch",),
    ),
    Scenario(
        "kafka14139", "KAFKA-14139: a broker back with an empty disk rejoins the ISR under its "
        "old identity, then is elected (KRaft 3.3-3.4, fixed by KIP-903 in 3.5)",
        "NoCommittedRecordLost",
        (*KRAFT_3_4, "make_leader_equal_epoch=apply", "initial_isr=1", "max_records=1",
         "max_leader_epoch=1", "isr_shrink=false", "empty_disk=true"),
        ("kip903=false",), ("kip903=true",),
    ),
    Scenario(
        "last-replica-standing", "KIP-966's last replica standing: the last ISR member loses "
        "its unflushed tail and is elected cleanly (KRaft up to 3.6, fixed by ELR and unclean "
        "detection, 3.8+)",
        "NoCommittedRecordLost",
        (*KRAFT_BASE, "kip903=true", "kraft_epoch_bump=leader-change",
         "make_leader_equal_epoch=apply", "crashes=unclean", "initial_isr=1", "max_records=1",
         "max_leader_epoch=2", "isr_shrink=false"),
        ("elr=false", "unclean_detection=none"), ("elr=true", "unclean_detection=previous-epoch"),
    ),
    Scenario(
        "equal-epoch-delta", "A KRaft leader replays the record of its own accepted ISR change "
        "after proposing the next one: makeLeader re-installs the older ISR (equal partition "
        "epoch), the HW rises over it and a clean election loses the record (every KRaft "
        "release, 3.3-4.0; a model finding, no JIRA; candidate fix in no release)",
        "NoCommittedRecordLost",
        (*KRAFT_BASE, "kip903=true", "kraft_epoch_bump=leader-change", "elr=true",
         "unclean_detection=new-incarnation", "max_records=1", "max_leader_epoch=1"),
        ("make_leader_equal_epoch=apply",), ("make_leader_equal_epoch=skip",),
    ),
    Scenario(
        "stale-leo-kraft", "A KRaft leader's metadata loader publishes a preferred election "
        "and a controlled shutdown as one delta: it skips an epoch and counts a follower's "
        "stale LEO (every KRaft release, 3.3-4.0; a model finding, no JIRA; not fixed)",
        "NoCommittedRecordLost",
        (*KRAFT_BASE, "kip903=true", "kraft_epoch_bump=leader-change", "elr=true",
         "unclean_detection=new-incarnation", "make_leader_equal_epoch=skip", "brokers=3",
         "initial_leader=1", "max_records=1", "max_leader_epoch=3", "isr_shrink=false",
         "crashes=none", "controlled_shutdown=true", "preferred_election=true"),
        ("leader_state_reset=on-leadership",), ("leader_state_reset=on-epoch",),
    ),
    Scenario(
        "last-known-leader", "KIP-966's last-known-leader election picks a broker back with "
        "an empty disk over a replica holding an acknowledged record, with unclean election "
        "off (KAFKA-15584; KRaft with ELR on, 3.9-4.0; KAFKA-19522 checks only that it is "
        "acceptable; candidate fix in no release)",
        "AcknowledgedWritesDurable",
        (*KRAFT_BASE, "kip903=true", "kraft_epoch_bump=leader-change", "elr=true",
         "unclean_detection=new-incarnation", "make_leader_equal_epoch=skip",
         "unclean_election=false", "min_isr=2", "max_records=1", "max_leader_epoch=2",
         "isr_shrink=false", "crashes=clean", "empty_disk=true"),
        ("last_known_leader=unchecked",), ("last_known_leader=forget-unclean",),
    ),
)
"""The scenarios of docs/scenarios.md, in its order."""

BY_KEY = {s.key: s for s in SCENARIOS}

DEFAULT_KEY = "kip101-1"
"""The scenario ``isrlab demo`` runs when given none."""


def readme_table() -> str:
    """The README's table of ``isrlab demo --scenario`` names and titles (a test keeps the
    README equal to it)."""
    rows = ["| `--scenario` | the known bug |", "|---|---|"]
    for s in SCENARIOS:
        default = " (default)" if s.key == DEFAULT_KEY else ""
        rows.append(f"| `{s.key}`{default} | {s.title} |")
    return "\n".join(rows) + "\n"


def run(scenario: Scenario, fixed: bool) -> CheckResult:
    """Explore the scenario's buggy or fixed version (stops at the first violation; the
    counterexample explained)."""
    reg = Registry()
    register(reg)
    entry = reg.get("kafka").unwrap()
    params = reg.parse_params(entry, scenario.params(fixed)).unwrap()
    model = entry.build(params)
    return explained_result(explore(model, CheckOptions(params=params)), model.invariants())


def main() -> int:
    """Run every scenario, buggy and fixed, and print a line per run."""
    for s in SCENARIOS:
        for fixed in (False, True):
            r = run(s, fixed)
            verdict = (f"{r.violation.invariant} violated, trace {len(r.violation.trace)}"
                       if r.violation else "no violation")
            print(f"{s.key:11} {'fix' if fixed else 'bug'}: {verdict}; "
                  f"{r.distinct_states} distinct; {r.elapsed_s:.1f} s\n    {s.command(fixed)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
