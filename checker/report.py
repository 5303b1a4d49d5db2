"""The outcome of a check, shared by every engine (BFS, multi-process BFS, Spark, Z3 BMC).

``CheckResult`` is a frozen record; ``to_json`` turns it into the JSON report of
``isrlab check --json`` and ``summary_line`` into its one-line summary.  A counterexample is a
``Violation``: the violated property's name and a ``trace`` of ``TraceStep``s whose first step
is an initial state (action ``"Init"``), so ``len(trace)`` counts states exactly as TLC's
counterexamples do (9 states = 8 steps).

States in traces are *variables* mappings (``Model.variables``) of plain values: ``int``,
``bool``, ``str``, ``None``, ``tuple``, ``list``, ``frozenset``/``set``, ``dict``.  The JSON
report writes sets as sorted lists and dictionaries with non-string keys as ``[key, value]``
pairs; the ITF trace (``isrlab.checker.trace``) keeps every type exactly.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from isrlab.checker.atomic import write_text_atomically
from isrlab.checker.model import Property

INIT_ACTION = "Init"
"""The action name of a trace's first step (an initial state)."""

DEADLOCK = "Deadlock"
"""The pseudo-invariant a deadlock (a state without successors) violates when checked."""

EVALUATION_ERROR = "EvaluationError"
"""The pseudo-invariant a state violates when the model cannot evaluate its next step
(``checker.model.EvaluationError``); the violation's ``explanation`` is the error (action:
message) and its trace ends in the state being expanded."""

JsonValue = Any


@dataclass(frozen=True, slots=True)
class TraceStep:
    """One state of a trace and the action that produced it (``"Init"`` for the first)."""

    action: str
    state: Mapping[str, Any]


@dataclass(frozen=True, slots=True)
class Violation:
    """A property that failed, with a shortest trace from an initial state to the bad state;
    ``explanation`` says why the last state breaks it (the property's ``explain``, ``""``
    when it has none; ``explained`` fills it in)."""

    invariant: str
    trace: tuple[TraceStep, ...]
    explanation: str = ""

    @property
    def length(self) -> int:
        """The number of states in the trace, the initial state included (TLC's count)."""
        return len(self.trace)


@dataclass(frozen=True, slots=True)
class ActionCoverage:
    """How often one action (label up to its first ``(``) fired: generated and new states."""

    action: str
    generated: int
    distinct: int


@dataclass(frozen=True, slots=True)
class SometimesResult:
    """Whether a ``sometimes`` property held in some explored state, and at which BFS level."""

    name: str
    reached: bool
    level: int | None = None


@dataclass(frozen=True, slots=True)
class CheckResult:
    """What a check found.

    ``diameter`` is TLC's "depth of the complete state graph search": the number of BFS levels
    explored, the initial states being level 1.  ``generated_states`` counts the initial states
    plus every ``(label, successor)`` pair a model returned (TLC's "states generated").
    ``violation`` is the first violation (by the engine's deterministic order) or ``None``;
    ``violations`` holds one shortest trace per violated property when the engine was asked to
    continue past the first.  ``complete`` is false when a bound (depth, states) or a stop at a
    violation cut the search short.  ``collision_probability`` is TLC's optimistic estimate
    ``n·(g−n)/2^64`` of a fingerprint collision having merged two distinct states.
    """

    model: str
    params: Mapping[str, Any]
    engine: str
    distinct_states: int
    generated_states: int
    diameter: int
    elapsed_s: float
    violation: Violation | None = None
    violations: tuple[Violation, ...] = ()
    complete: bool = True
    symmetry: bool = False
    workers: int = 1
    queue_left: int = 0
    coverage: tuple[ActionCoverage, ...] = ()
    sometimes: tuple[SometimesResult, ...] = ()
    collision_probability: float | None = None
    extra: Mapping[str, Any] = field(default_factory=dict)

    @property
    def ok(self) -> bool:
        """Whether every checked property held (the CLI's exit code 0)."""
        return self.violation is None and not self.violations

    @property
    def evaluation_error(self) -> bool:
        """Whether the search stopped at the model's own evaluation error (exit 3), not at
        a violation."""
        return self.violation is not None and self.violation.invariant == EVALUATION_ERROR

    def summary_line(self) -> str:
        """One line: verdict, counts, diameter, time and throughput."""
        rate = self.generated_states / self.elapsed_s if self.elapsed_s > 0 else 0.0
        if self.evaluation_error:
            assert self.violation is not None
            verdict = (
                f"ERROR: the spec's next step cannot be evaluated: "
                f"{self.violation.explanation} (trace of {self.violation.length} states)"
            )
        elif self.violation is not None:
            verdict = (
                f"VIOLATION of {self.violation.invariant} "
                f"(trace of {self.violation.length} states)"
            )
        elif self.complete:
            verdict = "OK: every invariant holds"
        else:
            verdict = "INCOMPLETE: no violation within the bounds"
        return (
            f"{self.model} [{self.engine}]: {verdict}; {self.distinct_states:,} distinct / "
            f"{self.generated_states:,} generated states, diameter {self.diameter}, "
            f"{self.elapsed_s:.1f} s ({rate:,.0f} generated/s)"
        )

    def coverage_text(self, declared: Sequence[str] | None = None) -> str:
        """Action coverage as TLC prints it at the end of a run: one line per action with
        its generated and new (distinct) states; with ``declared`` (the model's own list of
        actions, when it has one) in that order, each action that never fired flagged
        ``never enabled``.  ``""`` when the run kept no coverage."""
        fired = {c.action: c for c in self.coverage}
        if not fired and not declared:
            return ""
        order = [a for a in fired if a == INIT_ACTION]
        order += [a for a in (declared or ()) if a not in order]
        order += [a for a in sorted(fired) if a not in order]
        width = max(len(a) for a in order)
        lines = ["coverage (action: generated states, new states):"]
        for action in order:
            c = fired.get(action)
            if c is None:
                lines.append(f"  {action.ljust(width)}  {0:>12,}  {0:>12,}  never enabled")
            else:
                lines.append(f"  {action.ljust(width)}  {c.generated:>12,}  {c.distinct:>12,}")
        return "\n".join(lines)

    def to_json(self) -> dict[str, JsonValue]:
        """The JSON report as a dictionary of plain JSON values."""
        return {
            "model": self.model,
            "params": json_value(dict(self.params)),
            "engine": self.engine,
            "ok": self.ok,
            "complete": self.complete,
            "distinct_states": self.distinct_states,
            "generated_states": self.generated_states,
            "diameter": self.diameter,
            "elapsed_s": round(self.elapsed_s, 3),
            "symmetry": self.symmetry,
            "workers": self.workers,
            "queue_left": self.queue_left,
            "violation": None if self.violation is None else violation_json(self.violation),
            "violations": [violation_json(v) for v in self.violations],
            "coverage": [
                {"action": c.action, "generated": c.generated, "distinct": c.distinct}
                for c in self.coverage
            ],
            "sometimes": [
                {"name": s.name, "reached": s.reached, "level": s.level} for s in self.sometimes
            ],
            "collision_probability": self.collision_probability,
            **{k: json_value(v) for k, v in self.extra.items()},
        }

    def write_json(self, path: str | Path) -> None:
        """Write the JSON report to ``path`` (the file the user asked for)."""
        write_text_atomically(path, json.dumps(self.to_json(), indent=2) + "\n")


def collision_probability(distinct: int, generated: int) -> float:
    """TLC's optimistic fingerprint-collision estimate for 64-bit fingerprints."""
    return distinct * max(generated - distinct, 0) / math.ldexp(1.0, 64)


def violation_json(violation: Violation) -> dict[str, JsonValue]:
    """A violation as JSON: the property, its ``explanation`` (only when it has one) and its
    trace of ``{"action", "state"}`` steps."""
    out: dict[str, JsonValue] = {"invariant": violation.invariant, "length": violation.length}
    if violation.explanation:
        out["explanation"] = violation.explanation
    out["trace"] = [
        {"action": step.action, "state": json_value(dict(step.state))}
        for step in violation.trace
    ]
    return out


def explanation_of(prop: Property[Any], state: Mapping[str, Any]) -> str:
    """What ``prop.explain`` says of the variables ``state`` (``""`` without an ``explain``);
    an ``explain`` that fails says so in the text rather than losing the counterexample."""
    if prop.explain is None:
        return ""
    try:
        return prop.explain(state)
    except Exception as error:  # the counterexample matters more than its explanation
        return f"(no explanation: {prop.name}'s explain raised {type(error).__name__}: {error})"


def explained(violation: Violation, properties: Sequence[Property[Any]]) -> Violation:
    """``violation`` with its ``explanation`` filled from the property of its name among
    ``properties`` (unchanged when none has an ``explain`` or it is already filled)."""
    if violation.explanation or not violation.trace:
        return violation
    for prop in properties:
        if prop.name == violation.invariant:
            text = explanation_of(prop, violation.trace[-1].state)
            return replace(violation, explanation=text) if text else violation
    return violation


def explained_result(result: CheckResult, properties: Sequence[Property[Any]]) -> CheckResult:
    """``result`` with every counterexample ``explained`` by ``properties``."""
    if result.violation is None and not result.violations:
        return result
    return replace(
        result,
        violation=None if result.violation is None else explained(result.violation, properties),
        violations=tuple(explained(v, properties) for v in result.violations),
    )


def _sort_key(value: JsonValue) -> tuple[str, str]:
    return (type(value).__name__, json.dumps(value, sort_keys=True))


def json_value(value: Any) -> JsonValue:
    """A plain JSON value for a state value: sets sorted, tuples as lists, odd keys as pairs."""
    if value is None or isinstance(value, bool | int | float | str):
        return value
    if isinstance(value, Mapping):
        if all(isinstance(k, str) for k in value):
            return {k: json_value(v) for k, v in value.items()}
        pairs = [[json_value(k), json_value(v)] for k, v in value.items()]
        return sorted(pairs, key=_sort_key)
    if isinstance(value, frozenset | set):
        return sorted((json_value(v) for v in value), key=_sort_key)
    if isinstance(value, tuple | list):
        return [json_value(v) for v in value]
    return str(value)
