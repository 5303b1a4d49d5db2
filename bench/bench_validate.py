"""Benchmark trace validation (``isrlab validate``) on 10,000-step traces.

    .venv/bin/python bench/bench_validate.py [--steps 10000] [--seed 1] [--limit 10]

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
from isrlab.services.traces import check_against_model, read_observations  # noqa: E402

TLA_PARAMS = ["replicas=3", "log_size=4", "max_records=6", "max_leader_epoch=8",
              "invariants=WeakIsr,StrongIsr"]
KAFKA_PARAMS = ["brokers=2"]
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


def main() -> int:
    """Generate, write, read back and validate the traces; print the figures."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--steps", type=int, default=10_000)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--limit", type=float, default=10.0)
    parser.add_argument("--partial-steps", type=int, default=200,
                        help="steps of the one-variable validation (its frontier is large)")
    args = parser.parse_args()
    failed = False
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
