"""Seeded random walks for state spaces too large to exhaust (TLC's ``-simulate``).

``simulate(model, SimulateOptions(seed, walks, depth))`` draws every choice from one
``random.Random(seed)``: the same model, options and seed give the same walks, so a
counterexample is reproduced exactly by rerunning with the same seed.  Each walk starts at a
uniformly chosen initial state and takes at most ``depth - 1`` uniformly chosen steps (a walk
has at most ``depth`` states, as TLC's ``-depth``); it ends early at a deadlock or at a state
outside the model's boundary.  Every invariant is checked on every visited state.
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, TypeVar

from isrlab.checker.fingerprint import fingerprint
from isrlab.checker.model import EvaluationError, Model
from isrlab.checker.report import (
    DEADLOCK,
    EVALUATION_ERROR,
    INIT_ACTION,
    ActionCoverage,
    CheckResult,
    SometimesResult,
    TraceStep,
    Violation,
)

S = TypeVar("S")


@dataclass(frozen=True, slots=True)
class SimulateOptions:
    """How many walks, how long, from which seed; ``params`` only labels the report."""

    seed: int = 0
    walks: int = 100
    depth: int = 100
    check_deadlock: bool = False
    params: Mapping[str, Any] = field(default_factory=dict)
    progress: Callable[[int, int], None] | None = None  # (walks done, states visited)


def _first_broken(model: Model[S], state: S) -> str | None:
    for prop in model.invariants():
        if not prop.holds(state):
            return prop.name
    return None


def simulate(model: Model[S], options: SimulateOptions) -> CheckResult:
    """Check every invariant along ``options.walks`` seeded random walks.

    The report's ``distinct_states`` counts distinct fingerprints visited, ``generated_states``
    every visited state, ``diameter`` the longest walk (in states); ``extra`` names the seed
    and the walk that found the violation.  Modelling shortcut: a walk is uniform over the
    enabled ``(label, successor)`` pairs, so actions with many bindings are chosen more often.
    """
    started = time.monotonic()
    rng = random.Random(options.seed)
    initial = list(model.init_states())
    sometimes = list(model.sometimes())
    reached: dict[str, int] = {}
    seen: set[int] = set()
    coverage: dict[str, int] = {}
    visited = longest = 0
    violation: Violation | None = None
    bad_walk: int | None = None
    for walk in range(options.walks):
        state = initial[rng.randrange(len(initial))] if initial else None
        if state is None:
            break
        walked: list[tuple[str, S]] = [(INIT_ACTION, state)]
        label = INIT_ACTION
        while True:
            visited += 1
            coverage[label.split("(", 1)[0]] = coverage.get(label.split("(", 1)[0], 0) + 1
            seen.add(fingerprint(model.encode(state)))
            for prop in sometimes:
                if prop.name not in reached and prop.holds(state):
                    reached[prop.name] = len(walked)
            broken, why = _first_broken(model, state), ""
            if broken is None and len(walked) < options.depth and model.within_boundary(state):
                try:
                    successors = list(model.next_states(state))
                except EvaluationError as error:
                    successors, broken, why = [], EVALUATION_ERROR, str(error)
                if successors:
                    label, state = successors[rng.randrange(len(successors))]
                    walked.append((label, state))
                    continue
                if broken is None and options.check_deadlock:
                    broken = DEADLOCK
            if broken is not None:
                trace = tuple(TraceStep(a, model.variables(s)) for a, s in walked)
                violation, bad_walk = Violation(broken, trace, why), walk
            break
        longest = max(longest, len(walked))
        if options.progress is not None:
            options.progress(walk + 1, visited)
        if violation is not None:
            break
    return CheckResult(
        model=model.name,
        params=dict(options.params),
        engine="simulate",
        distinct_states=len(seen),
        generated_states=visited,
        diameter=longest,
        elapsed_s=time.monotonic() - started,
        violation=violation,
        complete=False,
        coverage=tuple(ActionCoverage(a, n, 0) for a, n in sorted(coverage.items())),
        sometimes=tuple(
            SometimesResult(p.name, p.name in reached, reached.get(p.name)) for p in sometimes
        ),
        extra={
            "seed": options.seed, "walks": options.walks, "depth": options.depth,
            "violating_walk": bad_walk,
        },
    )
