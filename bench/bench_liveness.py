"""What liveness checking costs against a plain check, on a `tla-*` model.

    .venv/bin/python bench/bench_liveness.py --model tla-kip320 [-p key=value ...]

Runs, each in a fresh child process (so each peak RSS is its own): the plain breadth-first
check (`explore`, one worker), then `check_liveness` on the same model wrapped with two
temporal properties in Kafka's terms, under weak fairness of every action (each label its
own fair action):

* `LeaderEventuallyElected`: `[]<>(the controller's quorum has a leader)`;
* `FollowerEventuallyCatchesUp`: `(some ISR member's log is shorter than the leader's) ~>
  (no ISR member's log is shorter than the leader's)`.

With ``--declared`` the liveness run checks the model's own ``liveness()`` declaration
instead (the ``kafka`` model's, ``isrlab.spec.kafka.liveness``):

    .venv/bin/python bench/bench_liveness.py --declared --model kafka -p controller=kraft ...

Prints each run's distinct states, wall and CPU seconds and peak RSS, the liveness run's
split (graph build, search), each property's verdict, and the ratios.  The predicates read
`model.variables(state)` (once per state), as a user's predicates would.  A script, not a
timed test.
"""

from __future__ import annotations

import argparse
import multiprocessing
import resource
import sys
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from isrlab.checker.bfs import CheckOptions, explore  # noqa: E402
from isrlab.checker.liveness import check_liveness  # noqa: E402
from isrlab.checker.model import (  # noqa: E402
    AlwaysEventually,
    Delegating,
    Fairness,
    LeadsTo,
    Liveness,
    Model,
    TemporalProperty,
)
from isrlab.cli_support import resolve_model  # noqa: E402


class WithLiveness(Delegating[Any]):
    """``base`` with two liveness properties and weak fairness of every action."""

    def __init__(self, base: Model[Any]) -> None:
        self.base = base
        self.name = base.name
        self._last: tuple[Any, Mapping[str, Any]] | None = None

    def _variables(self, state: Any) -> Mapping[str, Any]:
        """``variables(state)``, computed once for the state the predicates look at."""
        if self._last is None or self._last[0] is not state:
            self._last = (state, self.base.variables(state))
        return self._last[1]

    def __getattr__(self, attribute: str) -> Any:  # identity_encoding, has_boundary, ...
        return getattr(self.base, attribute)

    def _has_leader(self, state: Any) -> bool:
        return self._variables(state)["quorumState"]["leader"] is not None

    def _lagging(self, state: Any) -> bool:
        v = self._variables(state)
        leader = v["quorumState"]["leader"]
        if leader is None:
            return False
        logs = v["replicaLog"]
        return any(len(logs[r]) < len(logs[leader]) for r in v["quorumState"]["isr"])

    def liveness(self) -> Liveness[Any]:
        return Liveness(
            (TemporalProperty("LeaderEventuallyElected", (AlwaysEventually(self._has_leader),)),
             TemporalProperty("FollowerEventuallyCatchesUp", (
                 LeadsTo(self._lagging, lambda s: not self._lagging(s)),))),
            (Fairness("weak", "WF(every action)", lambda label: label),),
        )


def _cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def _plain(name: str, params: list[str], out: Any) -> None:
    _, _, model = resolve_model(name, params)
    started, cpu = time.monotonic(), _cpu()
    result = explore(model, CheckOptions())
    out.send({"distinct": result.distinct_states, "generated": result.generated_states,
              "wall": time.monotonic() - started, "cpu": _cpu() - cpu,
              "rss": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0})


def _live(name: str, params: list[str], out: Any) -> None:
    _measure_liveness(name, params, out, declared=False)


def _live_declared(name: str, params: list[str], out: Any) -> None:
    _measure_liveness(name, params, out, declared=True)


def _measure_liveness(name: str, params: list[str], out: Any, declared: bool) -> None:
    _, _, model = resolve_model(name, params)
    started, cpu = time.monotonic(), _cpu()
    result = check_liveness(model if declared else WithLiveness(model))
    broken = {v.property: len(v.lasso.trace) for v in result.violations}
    out.send({"states": result.states, "edges": result.edges, "graph_s": result.graph_s,
              "search_s": result.search_s, "wall": time.monotonic() - started,
              "cpu": _cpu() - cpu,
              "rss": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0,
              "verdicts": {p: (f"violated, lasso of {broken[p]}" if p in broken else "holds")
                           for p in result.properties}})


def _in_child(target: Any, name: str, params: list[str]) -> dict[str, Any]:
    context = multiprocessing.get_context("spawn")
    mine, theirs = context.Pipe()
    process = context.Process(target=target, args=(name, params, theirs))
    process.start()
    answer: dict[str, Any] = mine.recv()
    process.join()
    return answer


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--model", default="tla-kip320")
    parser.add_argument("-p", "--param", action="append", default=[])
    parser.add_argument("--declared", action="store_true",
                        help="check the model's own liveness() declaration")
    args = parser.parse_args()
    plain = _in_child(_plain, args.model, args.param)
    live = _in_child(_live_declared if args.declared else _live, args.model, args.param)
    print(f"{args.model} {' '.join(args.param)}")
    print(f"plain check: {plain['distinct']:,} distinct / {plain['generated']:,} generated, "
          f"{plain['wall']:.2f} s wall, {plain['cpu']:.2f} s CPU, peak RSS "
          f"{plain['rss']:.0f} MiB")
    print(f"liveness:    {live['states']:,} states / {live['edges']:,} steps, "
          f"{live['wall']:.2f} s wall ({live['graph_s']:.2f} s graph, {live['search_s']:.2f} s "
          f"search), {live['cpu']:.2f} s CPU, peak RSS {live['rss']:.0f} MiB")
    for prop, verdict in live["verdicts"].items():
        print(f"  {prop}: {verdict}")
    print(f"ratio liveness / plain: wall {live['wall'] / plain['wall']:.1f}x, CPU "
          f"{live['cpu'] / plain['cpu']:.1f}x, peak RSS "
          f"{live['rss'] / plain['rss']:.1f}x")


if __name__ == "__main__":
    main()
