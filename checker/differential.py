"""Differential testing of another implementation against a model, by seeded random walks.

A user wraps their implementation (a broker, a simulator, a replicated log...) in an
``Adapter``: how to build its initial state from the model's initial variables, how to apply
one model step (by its label) to it, and how to read its state as (a subset of) the model's
variables.  ``differential_test`` then drives random walks over the *model* (each walk a list
of choices drawn from ``random.Random(seed)``: which initial state, which enabled step at
each state),
applies every step to the implementation too, and compares the implementation's view with
the model's variables after every step (``isrlab.checker.validate.value_matches``: the view may
omit variables or dictionary entries it does not track).  A divergence, or an exception
raised by the implementation, fails the walk; ``shrink_choices`` then shrinks the failing walk to a
minimal one (fewest steps, earliest choices), and ``minimise`` then drops every step whose
removal keeps the divergence (replaying the walk by its labels: the choices are
indices, so deleting one shifts the meaning of the next); the result holds that walk.

Modelling shortcut: the walk is driven by the model, so the test finds steps the model
allows and the implementation gets wrong (or refuses), not steps the implementation takes
that the model forbids (validate the implementation's own traces with ``isrlab.checker.validate``
for that).  The module knows nothing of Kafka.
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

from isrlab.checker.model import Model
from isrlab.checker.report import INIT_ACTION, TraceStep
from isrlab.checker.trace import value_text
from isrlab.checker.validate import Mismatch, mismatches, value_matches

S = TypeVar("S")
I = TypeVar("I")  # noqa: E741  (the implementation's state type)

_CHOICE = 2**16 - 1


@dataclass(frozen=True, slots=True)
class Adapter(Generic[I]):
    """The user's implementation, seen through the model's eyes.

    ``init(variables)`` builds the implementation's state from an initial state's variables;
    ``step(state, label)`` applies the model step named by ``label`` and returns the new
    state (it may mutate and return the same object); ``view(state)`` gives the
    implementation's state as model variables (a subset is fine).
    """

    name: str
    init: Callable[[Mapping[str, Any]], I]
    step: Callable[[I, str], I]
    view: Callable[[I], Mapping[str, Any]]


@dataclass(frozen=True, slots=True)
class Divergence:
    """Where a walk's implementation left the model: after step ``step`` (0 = the initial
    state) taken by ``label``; the mismatching variables (``path``, the implementation's
    value as ``observed``, the model's as ``actual``), or the exception it raised; and the
    model's walk up to there (``walk[0]`` is the initial state)."""

    step: int
    label: str
    mismatches: tuple[Mismatch, ...]
    walk: tuple[TraceStep, ...]
    error: str = ""

    def text(self) -> str:
        """A readable account: the walk's labels, then what differs (values written as
        text traces write them, ``value_text``)."""
        lines = [f"the implementation diverges after step {self.step} ({self.label}); walk:"]
        lines.extend(f"  {i}. {s.action}" for i, s in enumerate(self.walk))
        if self.error:
            lines.append(f"  it raised {self.error}")
        for m in self.mismatches:
            lines.append(f"  {m.path}: implementation has {value_text(m.observed)}, "
                         f"model has {value_text(m.actual)}")
        return "\n".join(lines)


@dataclass(frozen=True, slots=True)
class DifferentialResult:
    """The outcome: walks and steps compared, and the (shrunk) divergence, if any."""

    adapter: str
    model: str
    walks: int
    steps: int
    divergence: Divergence | None
    elapsed_s: float

    @property
    def ok(self) -> bool:
        """Whether no walk diverged."""
        return self.divergence is None

    def summary_line(self) -> str:
        """One line: verdict, walks, steps, time (and the minimal walk's length)."""
        head = f"{self.adapter} vs {self.model}: "
        if self.divergence is None:
            return head + (f"OK: {self.walks:,} walks, {self.steps:,} steps agree "
                           f"({self.elapsed_s:.1f} s)")
        return head + (f"DIVERGES after step {self.divergence.step} of a minimal walk "
                       f"({self.walks:,} walks tried, {self.elapsed_s:.1f} s)")


Chooser = Callable[[int, list[tuple[str, Any]]], int | None]


def _drive(
    model: Model[S], adapter: Adapter[I], state: S, steps: int, choose: Chooser,
) -> tuple[Divergence | None, int]:
    """Walk from ``state`` for at most ``steps`` steps, ``choose(number, successors)`` giving
    the index of the next step (``None``: the walk cannot go on); compare after each."""
    variables = model.variables(state)
    walk = [TraceStep(INIT_ACTION, variables)]
    try:
        impl = adapter.init(variables)
    except Exception as error:  # the implementation's failure is a finding
        return Divergence(0, INIT_ACTION, (), tuple(walk), f"{type(error).__name__}: {error}"), 0
    found = _compare(adapter, impl, variables, 0, INIT_ACTION, walk)
    if found is not None:
        return found, 0
    for number in range(1, steps + 1):
        successors = list(model.next_states(state))
        index = choose(number, successors) if successors else None
        if index is None:
            return None, number - 1
        label, state = successors[index]
        variables = model.variables(state)
        walk.append(TraceStep(label, variables))
        try:
            impl = adapter.step(impl, label)
        except Exception as error:  # the implementation's failure is a finding
            return Divergence(number, label, (), tuple(walk),
                              f"{type(error).__name__}: {error}"), number
        found = _compare(adapter, impl, variables, number, label, walk)
        if found is not None:
            return found, number
    return None, steps


def run_walk(
    model: Model[S], adapter: Adapter[I], choices: Sequence[int], initial: Sequence[S],
) -> tuple[Divergence | None, int]:
    """Replay one walk: ``choices[0]`` picks the initial state, each next choice one enabled
    step (modulo their number); compare after every step.  Returns the divergence (or
    ``None``) and the number of steps taken."""
    if not initial:
        return None, 0
    state = initial[choices[0] % len(initial) if choices else 0]
    return _drive(model, adapter, state, max(len(choices) - 1, 0),
                  lambda number, succ: choices[number] % len(succ))


def replay_labels(
    model: Model[S], adapter: Adapter[I], initial: S, labels: Sequence[str],
) -> Divergence | None:
    """Replay a walk given by its labels (the first successor with each label); ``None``
    when it agrees throughout or when a label is not enabled where it is needed."""

    def choose(number: int, successors: list[tuple[str, Any]]) -> int | None:
        wanted = labels[number - 1]
        for index, (label, _) in enumerate(successors):
            if label == wanted:
                return index
        return None

    return _drive(model, adapter, initial, len(labels), choose)[0]


def minimise(
    model: Model[S], adapter: Adapter[I], initial: S, divergence: Divergence,
) -> Divergence:
    """Drop steps of a diverging walk while it still diverges (replayed by labels), until no
    single step can go: a walk from which no step can be removed (1-minimal)."""
    best = divergence
    shrinking = True
    while shrinking:
        shrinking = False
        labels = [s.action for s in best.walk[1:]]
        for i in range(len(labels)):
            found = replay_labels(model, adapter, initial, labels[:i] + labels[i + 1:])
            if found is not None and found.step < best.step:
                best, shrinking = found, True
                break
    return best


def _compare(
    adapter: Adapter[I], impl: I, variables: Mapping[str, Any], number: int, label: str,
    walk: list[TraceStep],
) -> Divergence | None:
    try:
        view = adapter.view(impl)
    except Exception as error:  # the implementation's failure is a finding
        return Divergence(number, label, (), tuple(walk), f"{type(error).__name__}: {error}")
    if all(k in variables and value_matches(v, variables[k]) for k, v in view.items()):
        return None
    missing = mismatches(view, variables)
    if missing:
        return Divergence(number, label, tuple(missing), tuple(walk))
    return None


def shrink_choices(choices: list[int], fails: Callable[[list[int]], bool]) -> list[int]:
    """A failing choice list made smaller while ``fails`` holds: drop the tail after the
    shortest failing prefix, then repeatedly delete one choice or lower one to 0 or to its
    half, first change that still fails kept, until none does (a fixed order: the result
    depends on ``choices`` alone)."""
    current = next((choices[:n] for n in range(1, len(choices) + 1) if fails(choices[:n])),
                   choices)
    changed = True
    while changed:
        changed = False
        for i in range(len(current)):
            candidates = [current[:i] + current[i + 1:]] if len(current) > 1 else []
            candidates += [[*current[:i], v, *current[i + 1:]]
                           for v in (0, current[i] // 2) if v < current[i]]
            found = next((c for c in candidates if fails(c)), None)
            if found is not None:
                current, changed = found, True
                break
    return current


def differential_test(
    model: Model[S], adapter: Adapter[I], *, walks: int = 1000, depth: int = 12,
    seed: int = 0,
) -> DifferentialResult:
    """Run up to ``walks`` random walks of at most ``depth`` steps over ``model``, comparing
    ``adapter`` after every step; shrink the first divergence to a minimal walk.

    Deterministic for a given ``seed``: the walks' choices come from ``random.Random(seed)``
    alone (not from hypothesis, whose draws also depend on the literals of every module the
    process has imported), and the shrinking (``shrink_choices``) is a fixed order of
    deletions and lowerings.  Modelling shortcut: a walk shorter than ``depth`` ends where
    the model deadlocks; ``DifferentialResult.walks`` says how many ran.
    """
    started = time.monotonic()
    initial = list(model.init_states())
    counters = {"walks": 0, "steps": 0}

    def diverges(choices: list[int]) -> bool:
        counters["walks"] += 1
        found, steps = run_walk(model, adapter, choices, initial)
        counters["steps"] += steps
        return found is not None

    rng = random.Random(seed)
    minimal: list[int] | None = None
    for _ in range(walks):
        choices = [rng.randint(0, _CHOICE) for _ in range(rng.randint(1, depth + 1))]
        if diverges(choices):
            minimal = shrink_choices(choices, diverges)
            break
    divergence: Divergence | None = None
    if minimal is not None:
        divergence, _ = run_walk(model, adapter, minimal, initial)
        if divergence is not None:
            start = initial[minimal[0] % len(initial)]
            divergence = minimise(model, adapter, start, divergence)
    return DifferentialResult(
        adapter=adapter.name, model=model.name, walks=counters["walks"],
        steps=counters["steps"], divergence=divergence,
        elapsed_s=time.monotonic() - started,
    )
