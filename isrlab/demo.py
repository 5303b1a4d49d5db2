"""``isrlab demo``: drive ``core`` through the worked examples of docs/protocol.md and say
what happens.

``run_worked_examples()`` is the reusable part: it returns one ``Example`` per worked
example (title, narration lines, and whether core's figures match the expected ones), so a later
model-checking demo can run it first.  ``demo_command`` prints them.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TypeVar

import click
from returns.result import Result

from isrlab.checker.trace import violation_text
from isrlab.core.errors import ElectionFailed, InvalidInput
from isrlab.core.isr import (
    isr_expiration_period_ms,
    max_time_in_isr_without_catching_up_ms,
    maybe_shrink_isr,
    read_from_local_log,
    update_follower_fetch,
)
from isrlab.core.metadata_cache import Broker, MetadataSnapshot
from isrlab.core.partition import (
    follower_high_watermark,
    make_follower,
    make_leader,
)
from isrlab.core.produce import ACKS_LEADER, append_records_to_leader
from isrlab.core.propagation import IsrChangeState, maybe_propagate_isr_changes, record_isr_change
from isrlab.core.replica_manager import (
    LeaderAndIsrRequest,
    ReplicaManager,
    become_leader_or_follower,
)
from isrlab.core.selectors import (
    Election,
    controlled_shutdown_leader_selector,
    offline_partition_leader_selector,
)
from isrlab.core.state import LeaderAndIsr, Partition, PartitionState, TopicPartition, records
from isrlab.services.reading import renumbering_note
from isrlab.spec.kafka.scenarios import BY_KEY, DEFAULT_KEY, SCENARIOS, run
from isrlab.spec.kafka.truncation_versions import TRUNCATION_RULES

TP = TopicPartition("orders", 0)
T = TypeVar("T")


@dataclass(frozen=True, slots=True)
class Example:
    """One worked example: what it shows, what happened, whether it matches the expected figures."""

    title: str
    lines: tuple[str, ...]
    matches_seed: bool


def _ok(result: Result[T, InvalidInput]) -> T:
    return result.unwrap()


def _leader(replicas: tuple[int, ...], now_ms: int = 0) -> Partition:
    state = PartitionState(1, replicas[0], 1, replicas, 1, replicas)
    return make_leader(Partition(TP, replicas[0]), state, now_ms).unwrap().partition


def _append(p: Partition, count: int, first_id: int = 0) -> Partition:
    ids = tuple(range(first_id, first_id + count))
    return append_records_to_leader(p, ids, ACKS_LEADER).unwrap().partition


def _fetch(p: Partition, follower: int, offset: int, now_ms: int, limit: int | None = None
           ) -> Partition:
    read = read_from_local_log(p, offset, 0, now_ms, limit).unwrap()
    return update_follower_fetch(p, follower, read).unwrap().partition


def hw_is_the_smallest_isr_leo() -> Example:
    """leader LEO 9, followers 7 and 6 -> HW 6; drop the second follower -> HW 7."""
    p = _fetch(_append(_leader((0, 1, 2)), 6), 2, 6, now_ms=0)
    p = _fetch(_append(p, 1, 6), 1, 7, now_ms=5_000)
    p = _append(p, 2, 7)
    before = p.high_watermark
    shrunk = maybe_shrink_isr(p, 10_001, 10_000).unwrap().partition
    return Example(
        "HW is the smallest LEO in the ISR",
        (
            f"LEOs leader={len(p.log)} f1={p.remotes[0].log_end_offset} "
            f"f2={p.remotes[1].log_end_offset}, ISR {sorted(p.isr)} -> HW {before}",
            f"f2 last caught up at 0 ms; maybeShrinkIsr at 10001 ms (lag 10000) -> "
            f"ISR {sorted(shrunk.isr)}, HW {shrunk.high_watermark}",
        ),
        before == 6 and shrunk.high_watermark == 7,
    )


def two_messages_sync() -> Example:
    """LEO/HW 3 everywhere; messages 3, 4 -> HW 4 while f2 has only 3, then 5."""
    p = _append(_leader((0, 1, 2)), 3)
    p = _fetch(_fetch(p, 1, 3, 0), 2, 3, 0)
    start = p.high_watermark
    p = _append(p, 2, 3)
    p = _fetch(_fetch(p, 1, 3, 10), 2, 3, 10, limit=1)
    p = _fetch(_fetch(p, 1, 5, 20), 2, 4, 20)
    middle = p.high_watermark
    follower_hw = follower_high_watermark(middle, 4)
    p = _fetch(p, 2, 5, 30)
    return Example(
        "Followers sync messages 3 and 4",
        (
            f"HW {start}; leader and f1 at LEO 5, f2 at LEO 4 -> HW {middle} "
            f"(f2's HW = min({middle}, 4) = {follower_hw})",
            f"f2 fetches message 4 -> HW {p.high_watermark}",
        ),
        (start, middle, follower_hw, p.high_watermark) == (3, 4, 4, 5),
    )


def one_and_a_half_lags() -> Example:
    """a half-period isr-expiration schedule tolerates up to 1.5 x the lag."""
    lag = 10_000
    period = isr_expiration_period_ms(lag)
    worst = 0
    for caught_up in range(0, 2 * lag, 500):
        p = _fetch(_append(_leader((0, 1)), 1), 1, 1, now_ms=caught_up)
        check = period
        while check < caught_up or not maybe_shrink_isr(p, check, lag).unwrap().isr_changed:
            check += period
        worst = max(worst, check - caught_up)
    bound = max_time_in_isr_without_catching_up_ms(lag)
    return Example(
        "A stuck follower may stay in the ISR for 1.5 x replicaLagTimeMaxMs",
        (f"lag {lag} ms, check every {period} ms -> longest stay {worst} ms (bound {bound})",),
        worst == bound == 15_000,
    )


def propagation_timings() -> Example:
    """2500 ms polls, 5 s blackout, 60 s maximum interval."""

    def first_write(changes: Callable[[int], bool]) -> int:
        """The first poll that writes a notification, ISR changes at times ``changes``."""
        state = IsrChangeState()
        for now in range(0, 200_001, 500):
            if changes(now):
                state = record_isr_change(state, TP, now)
            if now and now % 2_500 == 0:
                outcome = maybe_propagate_isr_changes(state, now)
                if outcome.notification is not None:
                    return now
                state = outcome.state
        return -1

    once = first_write(lambda now: now == 1_000)
    steady = first_write(lambda now: now % 1_000 == 0 and now > 0)
    return Example(
        "ISR changes reach the controller in bounded time (ZooKeeper's "
        "/isr_change_notification, before KIP-497's AlterIsr in 2.7)",
        (
            f"one change at 1000 ms -> notification at {once} ms (first poll after 5 s quiet)",
            f"a change every second -> first notification at {steady} ms (60 s cap)",
        ),
        (once, steady) == (7_500, 62_500),
    )


def selectors() -> Example:
    """offline (clean/unclean) and controlled-shutdown selectors."""
    current = LeaderAndIsr(1, 4, (1, 2), 10)
    ar = (1, 2, 3)

    def show(result: Result[Election, ElectionFailed | InvalidInput]) -> str:
        """One line for an election: the new leader/ISR/epoch, or why it failed."""
        election = result.value_or(None)
        if election is None:
            failure = result.failure()
            return failure.error.value if isinstance(failure, ElectionFailed) else str(failure)
        e = election.leader_and_isr
        return f"leader {e.leader}, ISR {list(e.isr)}, epoch {e.leader_epoch}"

    clean = offline_partition_leader_selector(current, ar, frozenset({2, 3}))
    none = offline_partition_leader_selector(current, ar, frozenset({3}))
    unclean = offline_partition_leader_selector(current, ar, frozenset({3}), True)
    shutdown = controlled_shutdown_leader_selector(current, ar, frozenset(ar), frozenset({1}))
    return Example(
        "Leader selectors (leader 1, ISR [1, 2], AR [1, 2, 3], epoch 4)",
        (
            f"broker 1 dies: {show(clean)}",
            f"1 and 2 die, clean: {show(none)}; unclean: {show(unclean)}",
            f"broker 1 shuts down: {show(shutdown)}",
        ),
        show(clean) == "leader 2, ISR [2], epoch 5"
        and show(none) == "NoReplicaOnlineException"
        and show(unclean) == "leader 3, ISR [3], epoch 5",
    )


def become_leader_or_follower_outcomes() -> Example:
    """the outcomes of a LeaderAndIsr request."""
    alive = MetadataSnapshot(alive_brokers=(Broker(0, ()), Broker(1, ())))
    other = TopicPartition("orders", 1)
    lead = PartitionState(2, 0, 1, (0, 1), 1, (0, 1))
    follow = PartitionState(2, 1, 1, (1, 0), 1, (0, 1))
    first = _ok(become_leader_or_follower(
        ReplicaManager(0), LeaderAndIsrRequest(9, 2, ((TP, lead), (other, follow))), alive, 0))
    stale = _ok(become_leader_or_follower(
        first.manager, LeaderAndIsrRequest(9, 1, ((TP, lead),)), alive, 0))
    repeat = _ok(become_leader_or_follower(
        first.manager, LeaderAndIsrRequest(9, 2, ((TP, lead),)), alive, 0))
    errors = ", ".join(f"{tp}: {e.name}" for tp, e in first.response.partition_errors)
    return Example(
        "becomeLeaderOrFollower",
        (
            f"new request -> {errors}; leader of {[str(t) for t in first.became_leaders]}, "
            f"follower of {[str(t) for t in first.became_followers]}",
            f"request from an older controller -> {stale.response.error.name}",
            f"same leader epoch again -> {repeat.response.partition_errors[0][1].name} (ignored)",
        ),
        stale.response.error.name == "STALE_CONTROLLER_EPOCH"
        and repeat.response.partition_errors[0][1].name == "STALE_CONTROLLER_EPOCH",
    )


def truncation_rules() -> Example:
    """truncate-to-HW drops a committed record that leader-epoch truncation keeps."""
    leader_log = records((10, 11), 1)
    restart = PartitionState(1, 0, 2, (0, 1), 2, (0, 1))
    kept = {}
    for name, rule in TRUNCATION_RULES.items():
        fresh = Partition(TP, 1, log=leader_log, log_created=True, high_watermark=1)
        kept[name] = len(_ok(make_follower(fresh, restart, rule, leader_log)).partition.log)
    return Example(
        "Becoming follower after a restart (follower LEO 2, its HW 1, leader HW 2)",
        (
            *(f"{name}: keeps {n} record(s)" for name, n in kept.items()),
            "truncate-to-hw loses committed offset 1 if the leader now dies (KIP-101)",
        ),
        kept == {"truncate-to-hw": 1, "kip101": 2, "kip279-2.0": 2, "kip279": 2},
    )


def run_worked_examples() -> tuple[Example, ...]:
    """Every worked example of docs/protocol.md, run through ``core``."""
    return (
        hw_is_the_smallest_isr_leo(),
        two_messages_sync(),
        one_and_a_half_lags(),
        propagation_timings(),
        selectors(),
        become_leader_or_follower_outcomes(),
        truncation_rules(),
    )


def check_scenario(key: str) -> bool:
    """Model-check one known bug of ``isrlab.spec.kafka.scenarios``: buggy version, then the fix.

    Prints each command, its summary line and the buggy version's shortest counterexample;
    true when the bug is found and the fixing version holds in the same bounds.
    """
    scenario = BY_KEY[key]
    click.echo(f"\n== {scenario.title}: the buggy protocol version "
               f"({_version(scenario.bug)})")
    click.echo(f"$ {current_spelling(scenario.command(fixed=False))}")
    bug = run(scenario, fixed=False)
    click.echo(bug.summary_line())
    if bug.violation is not None:
        click.echo(violation_text(bug.violation))
        note = renumbering_note(bug.violation)
        if note:
            click.echo(note)
    click.echo(f"\n== the fixing version, same bounds ({_version(scenario.fix)})")
    click.echo(f"$ {current_spelling(scenario.command(fixed=True))}")
    fix = run(scenario, fixed=True)
    click.echo(fix.summary_line())
    click.echo(f"\n{next_steps(key)}")
    return bug.violation is not None and fix.violation is None and fix.complete


def _version(assignments: tuple[str, ...]) -> str:
    """The parameters that make a scenario's buggy or fixing version (the rest of the two
    commands is the same), as ``-p key=value``."""
    return current_spelling(" ".join(f"-p {a}" for a in assignments))


def next_steps(key: str) -> str:
    """What to run after the demo of scenario ``key``: its run file (when the checkout's
    ``scenarios/`` is here), its chart, the other bugs, the kafka model's default."""
    run_file = Path("scenarios") / f"{key}.toml"
    again = (f"isrlab check --config {run_file}" if run_file.is_file()
             else "(the buggy command above)")
    return "\n".join((
        "Next:",
        f"  {again} --svg {key}.svg",
        "      the counterexample as a sequence chart (docs/pictures.md)",
        f"  {again} --itf {key}.itf.json; isrlab explore --trace {key}.itf.json",
        "      step through it in the browser",
        "  isrlab demo --scenario list",
        "      the other known bugs (docs/scenarios.md)",
        "  isrlab check --model kafka",
        "      the KRaft default: a finding of the model, "
        "docs/findings/kraft-equal-epoch-delta.md",
    ))


def current_spelling(command: str) -> str:
    """``command`` with every ``-p key=value`` whose value is an older spelling (a
    parameter's ``aliases``: ``fetch_fencing=true``) written as the choice it stands for
    (``fetch_fencing=final``), so a printed command teaches no deprecated value."""
    from isrlab.models import registry

    params = {p.name: dict(p.aliases) for p in registry().entries["kafka"].params}

    def spell(match: re.Match[str]) -> str:
        key, value = match.group(1), match.group(2)
        return f"-p {key}={params.get(key, {}).get(value, value)}"

    return re.sub(r"-p (\w+)=(\S+)", spell, command)


def _scenario_keys() -> list[str]:
    return [*sorted(BY_KEY), "list"]


def _default_key() -> str:
    return DEFAULT_KEY


def list_scenarios() -> None:
    """Print each ``--scenario`` name with its title, in docs/scenarios.md's order."""
    width = max(len(s.key) for s in SCENARIOS)
    for s in SCENARIOS:
        click.echo(f"{s.key:{width}}  {s.title}")


@click.command("demo")
@click.option(
    "--scenario",
    type=click.Choice(_scenario_keys()),
    default=None,
    metavar="NAME",
    help="Which known Kafka bug (docs/scenarios.md) to find with the model checker, alone "
         f"(without it: the worked examples, then {_default_key()}); "
         "'list' prints every name with its title.",
)
def demo_command(scenario: str | None) -> None:
    """Run the worked examples of docs/protocol.md through the core, then find a known Kafka
    bug; with --scenario, only that bug."""
    if scenario == "list":
        list_scenarios()
        return
    matched = total = 0
    if scenario is None:
        examples = run_worked_examples()
        for example in examples:
            mark = "ok" if example.matches_seed else "MISMATCH"
            click.echo(f"[{mark}] {example.title}")
            for line in example.lines:
                click.echo(f"     {line}")
        matched, total = sum(e.matches_seed for e in examples), len(examples)
        click.echo(f"{matched}/{total} worked examples match docs/protocol.md")
    found = check_scenario(scenario or _default_key())
    if matched != total or not found:
        raise SystemExit(1)
