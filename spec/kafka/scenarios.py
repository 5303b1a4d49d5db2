"""The known Kafka replication bugs as ``kafka`` model parameters (see docs/scenarios.md).

Each ``Scenario`` names the general invariant the bug breaks, the parameters of the
buggy protocol version and those of the fixing version: the two differ only in the
protocol parameters the fix changed, so the fix is checked in exactly the same bounds.
``python -m spec.kafka.scenarios`` runs them all and prints each command and verdict.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass

from checker.bfs import CheckOptions, explore
from checker.report import CheckResult


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
        """The ``key=value`` parameters of the buggy or the fixed run."""
        return (*self.bounds, *(self.fix if fixed else self.bug),
                f"invariants={self.invariant}")

    def command(self, fixed: bool) -> str:
        """The ``isrlab check`` command line of the buggy or the fixed run."""
        return "isrlab check --model kafka " + " ".join(f"-p {p}" for p in self.params(fixed))


SCENARIOS = (
    Scenario(
        "kip101-1", "KIP-101 scenario 1: truncate to HW, then election",
        "NoCommittedRecordLost",
        ("max_records=1", "max_leader_epoch=1", "isr_shrink=false", "lost_requests=false",
         "fetch_fencing=false", "expand_rule=hw"),
        ("truncation=hw",), ("truncation=kip101",),
    ),
    Scenario(
        "kip101-2", "KIP-101 scenario 2: power loss, divergent logs",
        "LogMatching",
        ("crashes=unclean", "max_records=3", "max_leader_epoch=1", "isr_shrink=false",
         "lost_requests=false", "fetch_fencing=true", "expand_rule=hw"),
        ("truncation=hw",), ("truncation=kip279",),
    ),
    Scenario(
        "kip279", "KIP-279: fast leader fail-over",
        "LogMatching",
        ("max_records=3", "max_leader_epoch=2", "isr_shrink=false", "lost_requests=false",
         "crashes=none", "reassignment=true", "max_controller_epoch=1", "fetch_fencing=true",
         "expand_rule=hw"),
        ("truncation=kip101",), ("truncation=kip279",),
    ),
    Scenario(
        "kip320", "KIP-320: a follower on a stale epoch counts toward the HW",
        "WeakIsr",
        ("brokers=3", "max_records=1", "max_leader_epoch=1", "isr_shrink=false",
         "crashes=none", "lost_requests=false", "reassignment=true", "truncation=kip279",
         "expand_rule=epoch-start"),
        ("fetch_fencing=false",), ("fetch_fencing=true",),
    ),
    Scenario(
        "jepsen", "Jepsen 2013: ISR shrinks to the leader, unclean election",
        "AcknowledgedWritesDurable",
        ("max_records=1", "max_leader_epoch=2", "lost_requests=false", "acks=all"),
        ("unclean_election=true", "min_isr=1"), ("unclean_election=false", "min_isr=2"),
    ),
    Scenario(
        "acks1", "acks=1 loss",
        "AcknowledgedWritesDurable",
        ("max_records=1", "max_leader_epoch=2", "lost_requests=false"),
        ("acks=1",), ("acks=all",),
    ),
    Scenario(
        "kafka7128", "KAFKA-7128: a follower joins the ISR against a new leader's lagging HW",
        "NoCommittedRecordLost",
        ("brokers=3", "initial_isr=2", "max_records=1", "max_leader_epoch=2",
         "isr_shrink=false", "crashes=none", "lost_requests=false", "reassignment=true",
         "fetch=split", "truncation=kip279", "fetch_fencing=true"),
        ("expand_rule=hw",), ("expand_rule=epoch-start",),
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
        ("max_records=1", "max_leader_epoch=1", "isr_shrink=false", "hw_checkpoint=true",
         "truncation=hw", "fetch_fencing=false", "expand_rule=hw", "kafka_4485=false",
         "kafka_7414=false"),
        ("unavailable_leader=skip",), ("unavailable_leader=create-log",),
    ),
)
"""The scenarios of docs/scenarios.md, in its order."""

BY_KEY = {s.key: s for s in SCENARIOS}


def run(scenario: Scenario, fixed: bool) -> CheckResult:
    """Explore the scenario's buggy or fixed version (stops at the first violation)."""
    from isrlab.models import registry

    reg = registry()
    entry = reg.get("kafka").unwrap()
    params = reg.parse_params(entry, scenario.params(fixed)).unwrap()
    return explore(entry.build(params), CheckOptions(params=params))


def main() -> int:
    """Run every scenario, buggy and fixed, and print a line per run."""
    for s in SCENARIOS:
        for fixed in (False, True):
            r = run(s, fixed)
            verdict = (f"{r.violation.invariant} violated, trace {len(r.violation.trace)}"
                       if r.violation else "no violation")
            print(f"{s.key:9} {'fix' if fixed else 'bug'}: {verdict}; "
                  f"{r.distinct_states} distinct; {r.elapsed_s:.1f} s\n    {s.command(fixed)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
