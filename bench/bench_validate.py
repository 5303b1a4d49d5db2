"""Benchmark trace validation (``isrlab validate``) on 10,000-step traces and the log oracle
on Kafka logs of up to 100,000 lines.

    .venv/bin/python bench/bench_validate.py [--steps 10000] [--seed 1] [--limit 10]
    .venv/bin/python bench/bench_validate.py --log-only [--log-lines 100000] [--log-limit 30]
                                             [--follow-chunk 1000]

**Kafka logs** (``--log-lines``, ``--log-only`` for these alone): a log of one partition
written as a 4.x KRaft broker writes it at TRACE (``isrlab.spec.oracle`` reads each line):
the leader's ``Skipping update high watermark ... All current LEOs`` and ``High watermark
updated`` lines as its two followers fetch, an ISR shrink and expansion (with their ``ISR
updated`` confirmations) every 1,000 lines, and a failover (the broker follows another
leader for a while, then leads a new epoch) every 20,000 lines; offsets in the millions.
Judged from the file (read as a stream) at 10 %, 50 % and 100 % of the length: wall and CPU
time, and the peak of Python's allocations during the judging (``tracemalloc``, a second
run: it slows Python) — flat in the log's length.  Exits 1 if the whole log takes more than
``--log-limit`` wall seconds (the issue's bar: 30 s) or is not accepted.  With
``--follow-chunk N`` the same logs (10 % and 100 %) are also followed as ``isrlab validate
--follow`` reads them (``LogFollower``), growing N lines per poll.

Two real behaviours of 10,000 steps are generated, written as ITF files and validated
through the CLI's reading path (parse + type checks + constrained BFS), each with several
amounts of observation:

* ``tla-kip279`` (replicas=3, log_size=4, max_records=6, max_leader_epoch=8): the bounds of
  the TLA+ models end every uniform random walk within ~40 steps, so this walk *prefers the
  ISR steps* (LeaderShrinkIsr / LeaderExpandIsr) whenever one is enabled and is uniform
  otherwise: once a follower lags between the leader's HW and its LEO the leader's ISR
  flaps, a behaviour of unbounded length (the ISR flapping real clusters show);
* ``kafka`` (brokers=2): a seeded walk that prefers states it has not visited yet (uniform
  among them, else uniform), through ticks, fetches, crashes, restarts and requests.

Observation levels: ``full`` (every variable and the label, as ``isrlab check --itf`` and the
random walks give), ``labels`` (only the labels), ``state`` (every variable, no label),
``partial`` (one variable, no label, on the first ``--partial-steps`` steps only: with so
little observed the frontier holds thousands of states, e.g. 5,805 for ``quorumState`` of
``tla-kip279``, and each step expands all of them).  Prints, per trace and level, the
largest frontier, the successors computed, and the wall and CPU time (the machine may be
shared: CPU time does not depend on the other processes).  Exits 1 if a full-observation
validation takes more than ``--limit`` wall seconds (the issue's bar: 10 s) or a trace is
rejected.
"""

from __future__ import annotations

import argparse
import random
import sys
import tempfile
import time
import tracemalloc
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from isrlab.checker.model import Model  # noqa: E402
from isrlab.checker.report import INIT_ACTION, TraceStep  # noqa: E402
from isrlab.checker.trace import write_itf  # noqa: E402
from isrlab.checker.validate import (  # noqa: E402
    Observation,
    action_name,
    observations_of_trace,
    validate,
)
from isrlab.cli_support import resolve_model  # noqa: E402
from isrlab.services.traces import (  # noqa: E402
    LogFollower,
    check_against_model,
    judge_kafka_logs,
    read_observations,
)

TLA_PARAMS = ["replicas=3", "log_size=4", "max_records=6", "max_leader_epoch=8",
              "invariants=WeakIsr,StrongIsr"]
KAFKA_PARAMS = ["controller=zookeeper", "brokers=2"]
PARTIAL = {"tla-kip279": "quorumState", "kafka": "zk"}


def isr_flapping_walk(m: Model[Any], steps: int, seed: int) -> list[TraceStep]:
    """A seeded walk preferring ISR shrink/expand steps (see the module docstring)."""
    rng = random.Random(seed)
    state = next(iter(m.init_states()))
    trace = [TraceStep(INIT_ACTION, m.variables(state))]
    prefer = {"LeaderShrinkIsr", "LeaderExpandIsr"}
    for _ in range(steps):
        successors = list(m.next_states(state))
        if not successors:
            break
        isr = [s for s in successors if action_name(s[0]) in prefer]
        label, state = rng.choice(isr or successors)
        trace.append(TraceStep(label, m.variables(state)))
    return trace


def novelty_walk(m: Model[Any], steps: int, seed: int) -> list[TraceStep]:
    """A seeded walk preferring successors not visited yet."""
    rng = random.Random(seed)
    state = next(iter(m.init_states()))
    seen = {m.encode(state)}
    trace = [TraceStep(INIT_ACTION, m.variables(state))]
    for _ in range(steps):
        successors = list(m.next_states(state))
        if not successors:
            break
        fresh = [s for s in successors if m.encode(s[1]) not in seen]
        label, state = rng.choice(fresh or successors)
        seen.add(m.encode(state))
        trace.append(TraceStep(label, m.variables(state)))
    return trace


def timed(m: Model[Any], observations: list[Observation]) -> tuple[float, str, bool]:
    """Type checks and validation: wall seconds, figures (with CPU seconds), verdict."""
    started, cpu = time.perf_counter(), time.process_time()
    check_against_model(m, observations)
    result = validate(m, observations)
    elapsed = time.perf_counter() - started
    return elapsed, (f"CPU {time.process_time() - cpu:.2f} s, frontier <= "
                     f"{result.max_frontier:,}, {result.generated:,} successors"), result.accepted


def write_kafka_log(path: Path, lines: int) -> None:
    """A one-partition 4.x leader log of ``lines`` lines (see the module docstring)."""
    seg = "segment=[16:76938]"
    p = "[Partition orders-0 broker=1]"
    hw, epoch, version, second = 5_000_000, 7, 40, 0
    written = 0
    with path.open("w", encoding="utf-8") as out:
        def emit(level: str, text: str, logger: str = "kafka.cluster.Partition") -> None:
            nonlocal written, second
            written += 1
            second += 1
            stamp = time.strftime("%Y-%m-%d %H:%M:%S", time.gmtime(1_700_000_000 + second))
            out.write(f"[{stamp},{written % 1000:03d}] {level} {text} ({logger})\n")

        while written < lines:
            if written % 20_000 == 19_990:  # a failover: follow broker 2, then lead again
                epoch += 1
                version += 1
                emit("INFO", f"[Broker id=1] Follower orders-0 with topic id Some(abc) starts at "
                     f"leader epoch {epoch} from offset {hw} with partition epoch {version} "
                     f"and high watermark {hw}. Current leader is 2. Previous leader Some(1) "
                     f"and previous leader epoch was {epoch - 1}.", "state.change.logger")
                epoch += 1
                version += 1
                emit("INFO", f"[Broker id=1] Leader orders-0 with topic id Some(abc) starts at "
                     f"leader epoch {epoch} from offset {hw} with partition epoch {version}, "
                     f"high watermark {hw}, ISR [1,2,3], adding replicas [] and removing "
                     f"replicas [] . Previous leader Some(2) and previous leader epoch was "
                     f"{epoch - 1}.", "state.change.logger")
            elif written % 1_000 == 500:  # the ISR flaps: 3 lags, is dropped, catches up
                version += 1
                emit("INFO", f"{p} Shrinking ISR from 1,2,3 to 1,2. Leader: (highWatermark: "
                     f"{hw}, endOffset: {hw + 1}). Out of sync replicas: (brokerId: 3, "
                     f"endOffset: {hw}, lastCaughtUpTimeMs: 1700000000000).")
                emit("INFO", f"{p} ISR updated to 1,2 and version updated to {version}")
                version += 1
                emit("INFO", f"{p} Expanding ISR from 1,2 to 1,2,3")
                emit("INFO", f"{p} ISR updated to 1,2,3 and version updated to {version}")
            else:
                emit("TRACE", f"{p} Skipping update high watermark since new hw (offset={hw}, "
                     f"{seg}) is not larger than old value. All current LEOs are Set(replica "
                     f"2: (offset={hw + 1}, {seg}), replica 3: (offset={hw}, {seg}), replica "
                     f"1: (offset={hw + 1}, {seg}))")
                emit("DEBUG", f"{p} High watermark updated from (offset={hw}, {seg}) to "
                     f"(offset={hw + 1}, {seg})")
                hw += 1


def bench_kafka_log(lines: int, limit: float) -> bool:
    """Judge logs of 10 %, 50 % and 100 % of ``lines`` lines; print the figures."""
    ok = True
    with tempfile.TemporaryDirectory() as tmp:
        for size in (lines // 10, lines // 2, lines):
            path = Path(tmp) / f"server-{size}.log"
            write_kafka_log(path, size)
            started, cpu = time.perf_counter(), time.process_time()
            verdicts = judge_kafka_logs([(path.name, path)])
            elapsed, used = time.perf_counter() - started, time.process_time() - cpu
            tracemalloc.start()
            judge_kafka_logs([(path.name, path)])
            _, peak = tracemalloc.get_traced_memory()
            tracemalloc.stop()
            verdict = verdicts[0]
            print(f"kafka log of {size:,} lines ({path.stat().st_size / 1e6:.1f} MB): "
                  f"{verdict.verdict.upper()} ({verdict.observations:,} lines judged) in "
                  f"{elapsed:.2f} s (CPU {used:.2f} s), {size / elapsed:,.0f} lines/s, peak "
                  f"allocations {peak / 1e6:.2f} MB", flush=True)
            ok &= verdict.accepted and (size < lines or elapsed <= limit)
    return ok


def follow_log(source: Path, target: Path, chunk: int) -> tuple[int, str]:
    """``source`` written to ``target`` ``chunk`` lines between two polls of a
    ``LogFollower`` (``isrlab validate --follow``'s reader) until it is read and quiet:
    the polls and the last verdict."""
    follower = LogFollower([target], partition="all")
    verdicts: list[Any] = []
    polls = quiet = 0
    with source.open("rb") as src, target.open("ab") as out:
        while quiet < 2:
            written, verdicts = follower.poll(flush=quiet > 0)
            polls += 1
            quiet = 0 if written else quiet + 1
            lines = [line for line in (src.readline() for _ in range(chunk)) if line]
            out.write(b"".join(lines))
            out.flush()
    return polls, verdicts[0].verdict if verdicts else "none"


def bench_follow(lines: int, chunk: int) -> bool:
    """``--follow`` on logs of 10 % and 100 % of ``lines`` lines growing ``chunk`` lines per
    poll: wall and CPU time, peak allocations (a second run); print the figures."""
    ok = True
    with tempfile.TemporaryDirectory() as tmp:
        for size in (lines // 10, lines):
            source = Path(tmp) / f"source-{size}.log"
            write_kafka_log(source, size)
            target = Path(tmp) / f"followed-{size}.log"
            target.write_bytes(b"")
            started, cpu = time.perf_counter(), time.process_time()
            polls, verdict = follow_log(source, target, chunk)
            elapsed, used = time.perf_counter() - started, time.process_time() - cpu
            again = Path(tmp) / f"again-{size}.log"
            again.write_bytes(b"")
            tracemalloc.start()
            follow_log(source, again, chunk)
            _, peak = tracemalloc.get_traced_memory()
            tracemalloc.stop()
            print(f"--follow of {size:,} lines, {chunk:,} per poll ({polls:,} polls): "
                  f"{verdict.upper()} in {elapsed:.2f} s (CPU {used:.2f} s), peak allocations "
                  f"{peak / 1e6:.2f} MB", flush=True)
            ok &= verdict == "accepted"
    return ok


def main() -> int:
    """Generate, write, read back and validate the traces; print the figures."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--steps", type=int, default=10_000)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--limit", type=float, default=10.0)
    parser.add_argument("--partial-steps", type=int, default=200,
                        help="steps of the one-variable validation (its frontier is large)")
    parser.add_argument("--log-lines", type=int, default=100_000)
    parser.add_argument("--log-limit", type=float, default=30.0)
    parser.add_argument("--log-only", action="store_true", help="only the Kafka-log benchmark")
    parser.add_argument("--follow-chunk", type=int, default=0,
                        help="also --follow the log growing this many lines per poll")
    args = parser.parse_args()
    failed = not bench_kafka_log(args.log_lines, args.log_limit)
    if args.follow_chunk:
        failed |= not bench_follow(args.log_lines, args.follow_chunk)
    if args.log_only:
        return 1 if failed else 0
    runs = (("tla-kip279", TLA_PARAMS, isr_flapping_walk),
            ("kafka", KAFKA_PARAMS, novelty_walk))
    with tempfile.TemporaryDirectory() as tmp:
        for name, params, make in runs:
            _, _, m = resolve_model(name, params)
            started = time.perf_counter()
            trace = make(m, args.steps, args.seed)
            made = time.perf_counter() - started
            distinct = len({repr(sorted(s.state.items())) for s in trace})
            print(f"{name} {' '.join(params)}: walk of {len(trace) - 1:,} steps "
                  f"({distinct:,} distinct states) generated in {made:.1f} s", flush=True)
            path = Path(tmp) / f"{name}.itf.json"
            write_itf(path, trace, source=name)
            started, cpu = time.perf_counter(), time.process_time()
            full = read_observations(path.read_text(encoding="utf-8"), "auto", None, None,
                                     None, None)
            parsed, parsed_cpu = time.perf_counter() - started, time.process_time() - cpu
            elapsed, figures, ok = timed(m, full)
            total = parsed + elapsed
            print(f"  full     ITF read {parsed:5.2f} s (CPU {parsed_cpu:.2f} s) + validate "
                  f"{elapsed:5.2f} s = {total:5.2f} s  ({figures}) "
                  f"{'ACCEPTED' if ok else 'REJECTED'}", flush=True)
            failed |= not ok or total > args.limit
            levels = {
                "labels": observations_of_trace(trace, variables=()),
                "state": observations_of_trace(trace, labels=False),
                "partial": observations_of_trace(trace[:args.partial_steps + 1], labels=False,
                                                 variables=[PARTIAL[name]]),
            }
            for level, observations in levels.items():
                elapsed, figures, ok = timed(m, observations)
                print(f"  {level:8} validate {elapsed:5.2f} s  ({figures}) "
                      f"{'ACCEPTED' if ok else 'REJECTED'}", flush=True)
                failed |= not ok
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
