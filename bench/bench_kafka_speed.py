"""The ``kafka`` model's cost per generated state, two checkouts side by side in one run.

    .venv/bin/python bench/bench_kafka_speed.py --before /path/to/other/checkout \\
        [--after .] [--rounds 2] [--space zookeeper] [--space kraft-skip] ...

``--before`` (or ``--after``) may also name a commit of this repository: the script then
checks it out in a temporary git worktree, builds its extensions there (``setup.py
build_ext --inplace``, about a minute of CPU) and removes the worktree at the end.

Each search runs in a fresh child process started in a checkout's root (so that it imports
that checkout's ``isrlab``, compiled or not: the line says which), one worker, the
checkouts alternating round after round (or, ``--parallel``, both searches of a round at
the same time) so that both see the same load on a shared machine.  The child measures its
own CPU time around ``explore`` only (imports and the model's construction left out) and
prints the counts, the diameter and the length of the first counterexample (when a search
stops at one).  The table gives, per space and per checkout, CPU-µs per generated state and
generated states per CPU-second (the issue's "states per second per core"), and the load
average at the start of each run.  A script, not a timed test; ``ISRLAB_PURE_PYTHON=1`` in
the environment runs both from their sources.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

SPACES: dict[str, list[str]] = {
    "kraft": ["controller=kraft"],
    "kraft-skip": ["controller=kraft", "make_leader_equal_epoch=skip"],
    "zookeeper": ["controller=zookeeper"],
    "zookeeper-3": ["controller=zookeeper", "brokers=3", "max_records=1",
                    "max_leader_epoch=1", "lag_ticks=2"],
    "zookeeper-3-kafka7152-off": ["controller=zookeeper", "brokers=3", "max_records=1",
                                  "max_leader_epoch=1", "lag_ticks=2", "kafka_7152=false"],
    "zookeeper-3-lag0": ["controller=zookeeper", "brokers=3", "max_records=1",
                         "max_leader_epoch=1", "lag_ticks=0"],
}
"""The spaces of docs/kafka-model.md "Exploration speed", by name: the KRaft default (it
stops at ReplicationQuorumSuperset), the KRaft default with the candidate fix (explored
fully), the ZooKeeper-mode default, and the 3-broker space (with KAFKA-7152 and without it,
as it was first measured; and a smaller variant)."""

CHILD = r"""
import json, resource, sys
sys.path.insert(0, ".")
from isrlab.checker.bfs import CheckOptions, explore
from isrlab.cli_support import resolve_model
from isrlab.spec._compiled import running_compiled
from isrlab.spec.kafka import model as kafka_model
_, params, model = resolve_model("kafka", sys.argv[1:])
def cpu():
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime
start = cpu()
result = explore(model, CheckOptions(workers=1, params=params))
spent = cpu() - start
traces = [] if result.violation is None else [result.violation.length]
print(json.dumps({"distinct": result.distinct_states, "generated": result.generated_states,
                  "diameter": result.diameter, "cpu": spent, "traces": traces,
                  "compiled": running_compiled(kafka_model),
                  "rss_mib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}))
"""


def start(checkout: Path, params: list[str]) -> subprocess.Popen[str]:
    """One search in a child process started in ``checkout``."""
    args = [sys.executable, "-c", CHILD, *params]
    return subprocess.Popen(args, cwd=checkout, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)


def figures_of(child: subprocess.Popen[str], checkout: Path) -> dict[str, object]:
    """The figures a child of ``start`` printed, once it ended."""
    out, err = child.communicate()
    if child.returncode != 0:
        raise SystemExit(f"bench: the search in {checkout} failed: "
                         f"{err.strip().splitlines()[-1:]}")
    figures: dict[str, object] = json.loads(out.strip().splitlines()[-1])
    return figures


def line(name: str, label: str, f: dict[str, object], load: float) -> str:
    """One row of the table."""
    generated = int(str(f["generated"]))
    cpu = float(str(f["cpu"]))
    per = cpu / generated * 1e6
    return (f"| {name} | {label} | {f['distinct']:,} / {generated:,} / {f['diameter']} "
            f"| {f['traces'] or '-'} | {cpu:.1f} | **{per:.2f}** | {generated / cpu:,.0f} "
            f"| {float(str(f['rss_mib'])):,.0f} | {'compiled' if f['compiled'] else 'source'} "
            f"| {load:.1f} |")


@contextlib.contextmanager
def checkout_of(spec: Path) -> Iterator[Path]:
    """``spec`` itself when it is a directory, else a temporary worktree of the commit it
    names, built, removed on exit."""
    if spec.is_dir():
        yield spec.resolve()
        return
    commit = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "--verify", "--quiet",
                             f"{spec}^{{commit}}"], capture_output=True, text=True)
    if commit.returncode != 0:
        print(f"bench: {spec} is neither a directory nor a commit", file=sys.stderr)
        raise SystemExit(2)
    scratch = Path(tempfile.mkdtemp(prefix="bench-kafka-"))
    tree = scratch / str(spec).replace("/", "-")
    try:
        subprocess.run(["git", "-C", str(ROOT), "worktree", "add", "--detach", str(tree),
                        commit.stdout.strip()], check=True, capture_output=True)
        subprocess.run([sys.executable, "setup.py", "build_ext", "--inplace"], cwd=tree,
                       check=True, capture_output=True)
        yield tree
    finally:
        subprocess.run(["git", "-C", str(ROOT), "worktree", "remove", "--force", str(tree)],
                       capture_output=True)
        shutil.rmtree(scratch, ignore_errors=True)
        subprocess.run(["git", "-C", str(ROOT), "worktree", "prune"], capture_output=True)


def main() -> int:
    """Run the spaces for both checkouts, alternating, and print the table."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--before", type=Path, required=True)
    parser.add_argument("--after", type=Path, default=ROOT)
    parser.add_argument("--space", action="append", choices=sorted(SPACES))
    parser.add_argument("--rounds", type=int, default=1)
    parser.add_argument("--parallel", action="store_true",
                        help="run each round's two searches at the same time (one core each)")
    args = parser.parse_args()
    with checkout_of(args.before) as before, checkout_of(args.after) as after:
        return run(before, after, args.space or ["zookeeper", "kraft", "kraft-skip"],
                   args.rounds, args.parallel)


def run(before: Path, after: Path, spaces: list[str], rounds: int, parallel: bool) -> int:
    """Each space's searches in both checkouts, round after round; the table."""
    print("| space | checkout | distinct / generated / diameter | counterexample states "
          "| CPU s | CPU-µs per generated | generated per CPU-s | peak RSS MiB | build "
          "| load |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for name in spaces:
        seen: dict[str, tuple[object, ...]] = {}
        for _ in range(rounds):
            pairs = (("before", before), ("after", after))
            if parallel:
                load = os.getloadavg()[0]
                children = [(label, checkout, start(checkout, SPACES[name]))
                            for label, checkout in pairs]
                done = [(label, figures_of(child, checkout), load)
                        for label, checkout, child in children]
            else:
                done = []
                for label, checkout in pairs:
                    load = os.getloadavg()[0]
                    done.append((label, figures_of(start(checkout, SPACES[name]), checkout),
                                 load))
            for label, f, load in done:
                print(line(name, label, f, load), flush=True)
                key = (f["distinct"], f["generated"], f["diameter"], str(f["traces"]))
                if seen.setdefault(label, key) != key:
                    print(f"bench: {label} gave different counts on {name}", file=sys.stderr)
                    return 1
        if len(set(seen.values())) != 1:
            print(f"bench: before and after differ on {name}: {seen}", file=sys.stderr)
            return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
