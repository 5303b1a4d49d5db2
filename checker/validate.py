"""Trace validation: does some behaviour of a model match an observed, partial trace?

The approach of Cirstea, Kuppe, Loillier and Merz ("Validating Traces of Distributed Programs
Against TLA+ Specifications", 2024), as a constrained breadth-first search over any ``Model``:

* a trace is a sequence of ``Observation``s.  Each constrains one step of the model: the
  step's label (an action name, its arguments, an exact label or a glob pattern) and/or the
  values of any subset of the variables of ``Model.variables`` *after* the step;
* the *frontier* is the set of model states consistent with the trace so far; the next
  frontier is the set of successors that match the next observation.  Unobserved variables
  and unobserved arguments are existentially quantified: the trace is accepted when the
  frontier never becomes empty, i.e. when some behaviour of the model matches every step;
* an observation may allow ``hidden`` unobserved model steps before the observed one (a log
  that does not record every step); ``hidden`` bounds their number;
* an optional first observation with ``initial=True`` constrains the initial states; without
  it the search starts from every initial state;
* every invariant is checked on every frontier state: a step at which *every* consistent
  state breaks an invariant is a certain violation (the trace is rejected), a step at which
  only some do is reported as a possible one.

On rejection the result names the step and lists the *closest* candidate states: the
successors the model allowed there, ranked by how many observed values (and the label) they
miss, with the mismatches spelt out.

Matching (``value_matches``): an observed dictionary matches when each of *its* entries
matches (a partial map: entries not mentioned are not observed; keys compare as strings, so
JSON can name integer keys); an observed list matches a tuple or list of the same length
element by element, and a set (``frozenset``) as a set; booleans only match booleans;
anything else by equality.  The module knows nothing of Kafka.
"""

from __future__ import annotations

import fnmatch
import json
import time
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Generic, TypeVar

from isrlab.checker.model import Model
from isrlab.checker.report import INIT_ACTION, TraceStep, Violation
from isrlab.checker.trace import from_itf_value, value_text

S = TypeVar("S")

_VIEWS = 200_000
"""How many variable views the search memoises (states repeat along long traces)."""

ANY_STEPS = -1
"""``Observation.hidden`` value documented as "any number", capped by ``ValidateOptions``."""


HiddenRule = Callable[[str, Any, Any], "str | None"]
"""Whether a hidden step ``(label, state, successor)`` may go unobserved: ``None``, or why
not (see ``Observation.hidden_ok``)."""

LENGTH_KEY = "#len"
"""An observed value ``{"#len": n}`` matches any tuple or list of length ``n``."""


@dataclass(frozen=True, slots=True)
class Observation:
    """One observed step: a label constraint and/or partial variable values after the step.

    ``action`` is the label's name (the part before its first ``(``); ``args`` its
    comma-separated arguments (compared as stripped strings); ``label`` an exact label or, when
    it contains ``*`` or ``?``, a glob pattern (``fnmatch``).  ``variables`` maps variable
    names of ``Model.variables`` to observed (possibly partial) values.  ``hidden`` allows up
    to that many unobserved steps before this one.  ``line`` and ``text`` locate the step in
    its source for reports; ``initial`` marks an observation of the initial state.

    ``before`` observes (partial) variable values of the state the observed step starts
    from; ``stutter`` lets the observation hold without a step of its own (the change it
    reports may have been the previous observed step's); ``report`` makes it a report of
    the state: it has no step of its own, only the hidden ones before it; ``hidden_ok``
    restricts the hidden steps: called with ``(label, state, successor)`` of a candidate
    hidden step, it returns ``None`` when that step may go unobserved, else why it would
    have been observed.
    """

    line: int
    action: str | None = None
    args: tuple[str, ...] | None = None
    label: str | None = None
    variables: Mapping[str, Any] = field(default_factory=dict)
    hidden: int = 0
    initial: bool = False
    text: str = ""
    place: str = ""
    before: Mapping[str, Any] = field(default_factory=dict)
    stutter: bool = False
    report: bool = False
    hidden_ok: HiddenRule | None = field(default=None, compare=False)

    @property
    def where(self) -> str:
        """Where the step is in its source: ``place`` if given, else ``line N``."""
        return self.place or f"line {self.line}"

    def describe(self, before: Mapping[str, Any] | None = None,
                 after: Mapping[str, Any] | None = None) -> str:
        """The observation in one line: label constraint and observed variables, their
        values written as text traces write them (``value_text``); given the model states
        ``before`` and ``after`` a step (a candidate's), in their notation
        (``in_notation_of``: ``<<0, 1>>`` for a JSON list where the model has a tuple), as
        the mismatch lines are."""
        parts = []
        if self.label is not None:
            parts.append(f"label {self.label}")
        elif self.action is not None:
            args = "" if self.args is None else "(" + ", ".join(self.args) + ")"
            parts.append(f"action {self.action}{args}")
        if self.before:
            parts.append(f"before the step {_values_text(self.before, before)}")
        if self.variables:
            shown = _values_text(self.variables, after)
            parts.append(shown if not self.before else f"after it {shown}")
        if self.stutter:
            parts.append("possibly without a step of its own")
        if self.report:
            parts.append("a state, reached by hidden steps only")
        if self.hidden:
            parts.append(f"after up to {self.hidden} unobserved steps")
        return "; ".join(parts) or "nothing"


def _values_text(observed: Mapping[str, Any], model: Mapping[str, Any] | None) -> str:
    """``name = value, ...`` of observed variables, in the notation of ``model``'s values
    when given."""
    shown = observed if model is None else in_notation_of(observed, model)
    return ", ".join(f"{k} = {value_text(v)}" for k, v in shown.items())


class _Absent:
    """The model's side of a mismatch whose observed path the model state does not have."""

    __slots__ = ()

    def __repr__(self) -> str:
        return "(absent)"


ABSENT = _Absent()
"""``Mismatch.actual`` when the model state has no such variable or entry: ``(absent)``."""


@dataclass(frozen=True, slots=True)
class Mismatch:
    """One observed value a candidate state does not have: where, observed, actual."""

    path: str
    observed: Any
    actual: Any

    def text(self) -> str:
        """``path: observed X, model has Y``, both written as text traces write values
        (``value_text``, docs/glossary.md): a JSON list observed where the model has a
        tuple is written ``<<a, b>>``, where it has a set ``{a, b}``, as the model's value
        is, so the line shows how the values differ, not how JSON spells them."""
        observed = value_text(in_notation_of(self.observed, self.actual))
        return f"{self.path}: observed {observed}, model has {value_text(self.actual)}"


def in_notation_of(observed: Any, actual: Any) -> Any:
    """``observed`` (a value read from JSON) with its lists made the model value
    ``actual``'s tuples or sets and its keys the model's (``1`` for an observed ``"1"``),
    element by element where ``actual`` has the same shape; anything else as it is."""
    if isinstance(observed, list) and isinstance(actual, tuple | list | frozenset | set):
        guides = list(actual) if isinstance(actual, tuple | list) else sorted(actual, key=repr)
        spare = guides[0] if guides else None
        items = [in_notation_of(o, guides[i] if i < len(guides) else spare)
                 for i, o in enumerate(observed)]
        if isinstance(actual, tuple):
            return tuple(items)
        if isinstance(actual, frozenset | set):
            try:
                return frozenset(items)
            except TypeError:  # an element JSON can only write as a list or object
                return items
        return items
    if isinstance(observed, Mapping) and isinstance(actual, Mapping):
        out = {}
        for key, value in observed.items():
            found, sub = _lookup(actual, key)
            model_key = next((k for k in actual if k == key or str(k) == str(key)), key)
            out[model_key if found else key] = in_notation_of(value, sub) if found else value
        return out
    return observed


@dataclass(frozen=True, slots=True)
class NearMiss:
    """A candidate successor at the rejected step and what it fails to match."""

    label: str
    state: Mapping[str, Any]
    mismatches: tuple[Mismatch, ...]
    before: Mapping[str, Any] | None = None
    """The model state before the step (when the observation constrains it)."""


@dataclass(frozen=True, slots=True)
class ValidateOptions:
    """Bounds: how many closest states to report, the cap of ``ANY_STEPS`` hidden steps, and
    a frontier size beyond which the search gives up (``max_frontier``; 0 = unbounded)."""

    closest: int = 3
    any_steps_cap: int = 50
    max_frontier: int = 0


@dataclass(frozen=True, slots=True)
class ValidationResult:
    """The verdict of a validation.

    ``verdict``: accepted, breaks-invariant (``matched`` with a certain ``violation``) or
    rejected. ``steps`` counts the observations matched; ``failed_index`` (0-based) and
    ``failed`` the first observation no behaviour matches (``None`` when accepted);
    ``closest`` the nearest candidate states there; ``violation`` an invariant broken by
    *every* state consistent with the trace up to some step (with a witness behaviour),
    ``possible_violations`` the invariants broken by *some* consistent state (name -> first
    step index); ``witness`` a behaviour of the model matching the whole trace
    (``TraceStep``s from an initial state, hidden steps included); ``max_frontier`` the
    largest frontier; ``generated`` every successor computed; ``blocked`` a hidden step the
    rejected step would have needed and why the trace's source would have recorded it.
    """

    accepted: bool
    steps: int
    observations: int
    failed_index: int | None = None
    failed: Observation | None = None
    closest: tuple[NearMiss, ...] = ()
    candidates: int = 0
    violation: Violation | None = None
    violation_index: int | None = None
    possible_violations: Mapping[str, int] = field(default_factory=dict)
    witness: tuple[TraceStep, ...] = ()
    max_frontier: int = 0
    generated: int = 0
    elapsed_s: float = 0.0
    gave_up: str = ""
    matched: bool = False
    violation_step: Observation | None = None
    blocked: str = ""
    not_covered: str = ""
    """Why the verdict would rest on a part of the trace the search did not read (then
    ``verdict`` is ``not-covered``, whatever the search found)."""

    @property
    def verdict(self) -> str:
        """``accepted`` (a behaviour, every invariant holds), ``breaks-invariant`` (a
        behaviour of the model, and every behaviour matching it breaks an invariant),
        ``rejected`` (no behaviour matches) or ``not-covered`` (``not_covered``)."""
        if self.not_covered:
            return "not-covered"
        if self.accepted:
            return "accepted"
        return "breaks-invariant" if self.matched else "rejected"

    def to_json(self, model: str) -> dict[str, Any]:
        """The verdict as a JSON-able object: verdict, matched length, where a rejection is,
        the invariant broken and at which step."""
        out: dict[str, Any] = {
            "model": model, "verdict": self.verdict, "observations": self.observations,
            "matched_steps": self.steps, "matched_behaviour_length": len(self.witness),
            "max_frontier": self.max_frontier, "generated": self.generated,
            "possible_violations": {k: v + 1 for k, v in sorted(
                self.possible_violations.items())},
        }
        if self.not_covered:
            out["reason"] = self.not_covered
            return out
        if self.violation is not None and self.violation_index is not None:
            step = self.violation_step
            out["invariant"] = {
                "name": self.violation.invariant, "step": self.violation_index + 1,
                "where": step.where if step is not None else "",
                "action": self.violation.trace[-1].action if self.violation.trace else "",
            }
        if not self.matched and self.failed is not None:
            out["rejected"] = {
                "step": (self.failed_index or 0) + 1, "where": self.failed.where,
                "line": self.failed.line, "text": self.failed.text,
                "observed": self.observed_text(), "reason": self.gave_up or
                "no behaviour of the model matches",
                "hidden_step_that_would_be_logged": self.blocked or None,
                "closest": [{"label": n.label, "mismatches": [m.text() for m in n.mismatches]}
                            for n in self.closest],
            }
        return out

    def observed_text(self) -> str:
        """The rejected observation in one line (``Observation.describe``), its values in
        the notation of the closest candidate's states, as its mismatch lines are."""
        if self.failed is None:
            return ""
        near = self.closest[0] if self.closest else None
        return self.failed.describe(near.before if near else None, near.state if near else None)

    def summary_line(self, model: str) -> str:
        """One line: verdict, steps, frontier, time."""
        if self.not_covered:
            return (f"{model}: NOT COVERED: {self.not_covered} ({self.steps} of "
                    f"{self.observations} steps matched, {self.elapsed_s:.2f} s)")
        if self.matched and self.violation is not None:
            step = (self.violation_index or 0) + 1
            action = self.violation.trace[-1].action if self.violation.trace else ""
            return (
                f"{model}: BREAKS {self.violation.invariant}: the {self.observations} steps "
                f"match a behaviour of the model, and every behaviour matching steps 1..{step} "
                f"breaks {self.violation.invariant} (at step {step}: {action}) "
                f"({self.elapsed_s:.2f} s)"
            )
        if not self.accepted:
            where = "" if self.failed is None else f" ({self.failed.where})"
            return (
                f"{model}: REJECTED at step {(self.failed_index or 0) + 1}{where} of "
                f"{self.observations}: {self.gave_up or 'no behaviour of the model matches'}"
            )
        possible = ""
        if self.possible_violations:
            names = ", ".join(
                f"{k} from step {v + 1}" for k, v in sorted(self.possible_violations.items())
            )
            possible = f"; some matching behaviours break {names}"
        return (
            f"{model}: ACCEPTED: {self.observations} steps match a behaviour of the model "
            f"(largest frontier {self.max_frontier:,}, {self.generated:,} successors, "
            f"{self.elapsed_s:.2f} s){possible}"
        )


# ---------------------------------------------------------------------------- matching
def _hashable(value: Any) -> Any:
    """A hashable, order-insensitive-where-it-should-be form for set comparison."""
    if isinstance(value, list | tuple):
        return tuple(_hashable(v) for v in value)
    if isinstance(value, frozenset | set):
        return frozenset(_hashable(v) for v in value)
    if isinstance(value, Mapping):
        return frozenset((str(k), _hashable(v)) for k, v in value.items())
    return value


def _lookup(actual: Mapping[Any, Any], key: Any) -> tuple[bool, Any]:
    """The entry of ``actual`` named ``key`` (also by its string form)."""
    if key in actual:
        return True, actual[key]
    text = str(key)
    for k, v in actual.items():
        if str(k) == text:
            return True, v
    return False, None


def observed_length(observed: Any) -> int | None:
    """``n`` for an observed ``{"#len": n}`` (a length constraint), else ``None``."""
    if isinstance(observed, Mapping) and len(observed) == 1 and LENGTH_KEY in observed:
        value = observed[LENGTH_KEY]
        return value if isinstance(value, int) and not isinstance(value, bool) else None
    return None


def value_matches(observed: Any, actual: Any) -> bool:
    """Whether an observed (possibly partial) value matches a model value (module doc)."""
    if type(observed) is type(actual) and observed == actual:
        return True  # the common case of a full observation: one C-level comparison
    length = observed_length(observed)
    if length is not None:
        return isinstance(actual, list | tuple) and len(actual) == length
    if isinstance(observed, Mapping):
        if not isinstance(actual, Mapping):
            return False
        for key, value in observed.items():
            found, sub = _lookup(actual, key)
            if not found or not value_matches(value, sub):
                return False
        return True
    if isinstance(actual, frozenset | set):
        if not isinstance(observed, list | tuple | set | frozenset):
            return False
        return bool(frozenset(_hashable(v) for v in observed) == _hashable(actual))
    if isinstance(observed, list | tuple):
        if not isinstance(actual, list | tuple) or len(observed) != len(actual):
            return False
        return all(value_matches(o, a) for o, a in zip(observed, actual, strict=True))
    if isinstance(observed, bool) != isinstance(actual, bool):
        return False
    if isinstance(observed, frozenset | set):
        return False
    return bool(observed == actual)


def mismatches(observed: Mapping[str, Any], actual: Mapping[str, Any]) -> list[Mismatch]:
    """Every observed leaf a model state misses, with its path (``a.b.c``)."""
    out: list[Mismatch] = []

    def walk(path: str, obs: Any, act: Any, present: bool) -> None:
        if not present:
            out.append(Mismatch(path, obs, ABSENT))
        elif observed_length(obs) is not None:
            if not value_matches(obs, act):
                out.append(Mismatch(f"{path} length", observed_length(obs),
                                    len(act) if isinstance(act, list | tuple) else act))
        elif isinstance(obs, Mapping) and isinstance(act, Mapping):
            for key, value in obs.items():
                found, sub = _lookup(act, key)
                walk(f"{path}.{key}", value, sub, found)
        elif not value_matches(obs, act):
            out.append(Mismatch(path, obs, act))

    for name, value in observed.items():
        walk(name, value, actual.get(name), name in actual)
    return out


def observation_mismatches(obs: Observation, before: Mapping[str, Any] | None,
                           after: Mapping[str, Any]) -> list[Mismatch]:
    """The observed values of ``obs`` a step from ``before`` to ``after`` misses (values
    observed before the step are named ``before: ...``)."""
    out = []
    if obs.before and before is not None:
        out = [Mismatch(f"before: {m.path}", m.observed, m.actual)
               for m in mismatches(obs.before, before)]
    return out + mismatches(obs.variables, after)


def split_label(label: str) -> tuple[str, tuple[str, ...]]:
    """A label's action name and its top-level comma-separated arguments, stripped."""
    name, paren, rest = label.partition("(")
    if not paren:
        return label, ()
    inner = rest[:-1] if rest.endswith(")") else rest
    args: list[str] = []
    depth, start = 0, 0
    for i, ch in enumerate(inner):
        if ch in "([{":
            depth += 1
        elif ch in ")]}":
            depth -= 1
        elif ch == "," and depth == 0:
            args.append(inner[start:i].strip())
            start = i + 1
    tail = inner[start:].strip()
    if tail or args:
        args.append(tail)
    return name, tuple(args)


class _LabelFilter:
    """An observation's label constraint, compiled; label splits are cached per label."""

    def __init__(self, obs: Observation, cache: dict[str, tuple[str, tuple[str, ...]]]) -> None:
        self.obs = obs
        self.cache = cache
        self.glob = obs.label is not None and ("*" in obs.label or "?" in obs.label)
        self.trivial = obs.label is None and obs.action is None

    def __call__(self, label: str) -> bool:
        obs = self.obs
        if self.trivial:
            return True
        if obs.label is not None:
            if self.glob:
                return fnmatch.fnmatchcase(label, obs.label)
            return label == obs.label
        parts = self.cache.get(label)
        if parts is None:
            parts = self.cache[label] = split_label(label)
        if parts[0] != obs.action:
            return False
        return obs.args is None or parts[1] == obs.args


def action_name(label: str) -> str:
    """The action of a label: its text up to the first ``(``."""
    return label.split("(", 1)[0]


# ---------------------------------------------------------------------------- the search
@dataclass(slots=True)
class _Node(Generic[S]):
    """A state of the search: the state, its parent's key, the label that led here, and
    how many steps after the previous frontier it lies (0 for frontier states)."""

    state: S
    parent: bytes | None
    label: str
    depth: int


class _Search(Generic[S]):
    """The constrained BFS of ``validate`` (see the module docstring)."""

    def __init__(self, model: Model[S], options: ValidateOptions) -> None:
        self.model = model
        self.options = options
        self.label_cache: dict[str, tuple[str, tuple[str, ...]]] = {}
        self.views: dict[bytes, Mapping[str, Any]] = {}
        self.generated = 0
        self.levels: list[tuple[dict[bytes, _Node[S]], dict[bytes, _Node[S]]]] = []
        self.invariants = list(model.invariants())
        self.parents: dict[tuple[str, bytes], tuple[bytes, S]] = {}

    def view(self, key: bytes, state: S) -> Mapping[str, Any]:
        """``model.variables(state)``, memoised by encoding (at most ``_VIEWS`` entries)."""
        found = self.views.get(key)
        if found is None:
            if len(self.views) >= _VIEWS:
                self.views = {}
            found = self.views[key] = self.model.variables(state)
        return found

    def initial(self, obs: Observation | None) -> dict[bytes, _Node[S]]:
        """The initial states matching ``obs`` (all of them without one)."""
        frontier: dict[bytes, _Node[S]] = {}
        for state in self.model.init_states():
            key = self.model.encode(state)
            if key in frontier:
                continue
            if obs is not None and not self.state_matches(obs, key, state):
                continue
            frontier[key] = _Node(state, None, INIT_ACTION, 0)
        self.levels.append(({}, frontier))
        return frontier

    def state_matches(self, obs: Observation, key: bytes, state: S) -> bool:
        """Whether a state has every observed variable value."""
        return self.values_match(obs.variables, key, state)

    def values_match(self, values: Mapping[str, Any], key: bytes, state: S) -> bool:
        """Whether a state has every value of ``values`` (partial, see ``value_matches``)."""
        if not values:
            return True
        view = self.view(key, state)
        for name, value in values.items():
            if name not in view or not value_matches(value, view[name]):
                return False
        return True

    def step(self, frontier: dict[bytes, _Node[S]], obs: Observation,
             restrict: bool = True) -> dict[bytes, _Node[S]]:
        """The next frontier for ``obs``: the successors reached within ``hidden + 1`` steps
        whose last step's label, whose variables and whose predecessor's ``before`` values
        match (and, for a ``stutter`` observation, the frontier states that match already).
        Hidden steps are those ``obs.hidden_ok`` allows (every step when ``restrict`` is
        off)."""
        hidden = obs.hidden if obs.hidden >= 0 else self.options.any_steps_cap
        label_ok = _LabelFilter(obs, self.label_cache)
        encode, next_states = self.model.encode, self.model.next_states
        matches = self.state_matches
        rule = obs.hidden_ok if restrict else None
        before = obs.before
        nxt: dict[bytes, _Node[S]] = {}
        inner: dict[bytes, _Node[S]] = {}
        layer: list[tuple[bytes, S]] = [(k, n.state) for k, n in frontier.items()]
        if obs.stutter or obs.report:
            for key, state in layer:  # no step: no label to match
                if matches(obs, key, state) and (
                        not before or self.values_match(before, key, state)):
                    nxt[key] = _Node(state, key, "", 0)
        generated = 0
        own = not obs.report
        for depth in range(1, hidden + 2):
            new_layer: list[tuple[bytes, S]] = []
            for key, state in layer:
                before_ok: bool | None = None
                for label, succ in next_states(state):
                    generated += 1
                    skey = encode(succ)
                    if own and skey not in nxt and label_ok(label) and matches(obs, skey, succ):
                        if before_ok is None:
                            before_ok = self.values_match(before, key, state)
                        if before_ok:
                            nxt[skey] = _Node(succ, key, label, depth)
                    if depth <= hidden and skey not in inner and skey not in frontier and (
                            rule is None or rule(label, state, succ) is None):
                        inner[skey] = _Node(succ, key, label, depth)
                        new_layer.append((skey, succ))
                        if not own and skey not in nxt and matches(obs, skey, succ):
                            nxt[skey] = _Node(succ, key, label, depth)
            layer = new_layer
            if not layer:
                break
        self.generated += generated
        self.levels.append((inner, nxt))
        return nxt

    def blocked_hidden_step(self, frontier: dict[bytes, _Node[S]],
                            obs: Observation) -> str | None:
        """Why ``obs`` was rejected when only its hidden-step rule stood in the way: the
        first hidden step of a behaviour that would match without the rule, and why it
        would have been observed; ``None`` when lifting the rule does not help."""
        rule = obs.hidden_ok
        if rule is None:
            return None
        found = self.step(frontier, obs, restrict=False)
        inner, _ = self.levels.pop()
        for key in sorted(found):
            node = found[key]
            chain: list[tuple[str, S, S]] = []
            parent, state = node.parent, node.state
            depth = node.depth
            while depth > 1 and parent is not None:
                prev = inner[parent]
                chain.append((node.label, prev.state, state))
                node, parent, state, depth = prev, prev.parent, prev.state, prev.depth
            if parent is not None and depth == 1:
                chain.append((node.label, frontier[parent].state, state))
            chain.reverse()
            for label, state_before, state_after in (chain if obs.report else chain[:-1]):
                reason = rule(label, state_before, state_after)
                if reason is not None:
                    return f"{label}: {reason}"
        return None

    def candidates(
        self, frontier: dict[bytes, _Node[S]], obs: Observation
    ) -> list[tuple[str, bytes, S]]:
        """Every ``(label, key, state)`` the model allowed at ``obs`` (ignoring what was
        observed, hidden steps as ``obs.hidden_ok`` allows them), for explaining a rejection;
        at most ``100_000``.  The predecessor of each is remembered in ``self.parents``."""
        hidden = obs.hidden if obs.hidden >= 0 else self.options.any_steps_cap
        rule = obs.hidden_ok
        out: list[tuple[str, bytes, S]] = []
        seen = set(frontier)
        layer = [(k, n.state) for k, n in frontier.items()]
        if obs.stutter:
            out.extend(("(no step)", k, st) for k, st in layer)
        for depth in range(hidden + 1):
            new_layer: list[tuple[bytes, S]] = []
            for key, state in layer:
                for label, succ in self.model.next_states(state):
                    skey = self.model.encode(succ)
                    out.append((label, skey, succ))
                    self.parents.setdefault((label, skey), (key, state))
                    if skey not in seen and depth < hidden and (
                            rule is None or rule(label, state, succ) is None):
                        seen.add(skey)
                        new_layer.append((skey, succ))
                    if len(out) >= 100_000:
                        return out
            layer = new_layer
        return out

    def closest(self, obs: Observation, candidates: list[tuple[str, bytes, S]]) -> list[NearMiss]:
        """The candidates nearest to ``obs``: first those whose label matches, then those of
        the observed action with other arguments, then the rest; within each, the fewest
        mismatching observed values.  Candidates that would read the same are shown once."""
        label_ok = _LabelFilter(obs, self.label_cache)
        wanted_name = obs.action if obs.action is not None else (
            action_name(obs.label) if obs.label is not None else None)
        wanted = obs.label if obs.label is not None else obs.describe().split(";")[0]
        ranked: list[tuple[int, int, str, bytes, NearMiss]] = []
        shown: set[tuple[str, tuple[str, ...]]] = set()
        for label, key, state in candidates:
            view = self.view(key, state)
            parent = self.parents.get((label, key))
            before = self.view(*parent) if parent is not None and obs.before else None
            missing = observation_mismatches(obs, before, view)
            tier = 0
            if not label_ok(label):
                tier = 1 if action_name(label) == wanted_name else 2
                missing.insert(0, Mismatch("label", wanted, label))
            signature = (label, tuple(m.text() for m in missing))
            if signature in shown:
                continue
            shown.add(signature)
            near = NearMiss(label, view, tuple(missing), before)
            ranked.append((tier, len(missing), label, key, near))
        ranked.sort(key=lambda r: (r[0], r[1], r[2], r[3]))
        return [r[4] for r in ranked[: self.options.closest]]

    def witness(self, key: bytes) -> tuple[TraceStep, ...]:
        """The behaviour leading to frontier state ``key`` of the last level."""
        steps: list[TraceStep] = []
        level = len(self.levels) - 1
        inner, frontier = self.levels[level]
        node = frontier[key]
        while True:
            parent = node.parent
            if node.depth > 0 or parent is None:  # depth 0 with a parent: a stutter
                steps.append(TraceStep(node.label, self.model.variables(node.state)))
            if parent is None:
                break
            if node.depth > 1:
                node = inner[parent]
            else:
                level -= 1
                inner, frontier = self.levels[level]
                node = frontier[parent]
        steps.reverse()
        return tuple(steps)

    def broken(self, frontier: dict[bytes, _Node[S]]) -> tuple[set[str], str | None, bytes]:
        """The invariants some frontier state breaks, and one every state breaks (with a
        state breaking it), if any."""
        some: set[str] = set()
        every: dict[str, bytes] | None = None
        for key, node in frontier.items():
            bad = {p.name: key for p in self.invariants if not p.holds(node.state)}
            some.update(bad)
            every = bad if every is None else {k: v for k, v in every.items() if k in bad}
        if every:
            name = sorted(every)[0]
            return some, name, every[name]
        return some, None, b""


def validate(
    model: Model[S], observations: Sequence[Observation],
    options: ValidateOptions | None = None,
) -> ValidationResult:
    """Validate a trace of observations against ``model`` by constrained BFS (module doc).

    A step at which every consistent state breaks an invariant is remembered (with a
    witness behaviour) and the search goes on: when the whole trace then matches, the verdict
    is a behaviour that breaks that invariant; when a later step matches nothing, the trace
    is rejected there.  Modelling shortcut: invariants are checked on the states consistent
    with the observed steps, not on the states traversed by hidden steps.
    """
    options = options or ValidateOptions()
    started = time.monotonic()
    search = _Search(model, options)
    first = observations[0] if observations and observations[0].initial else None
    rest = observations[1:] if first is not None else observations
    offset = 1 if first is not None else 0
    frontier = search.initial(first)
    possible: dict[str, int] = {}
    biggest = len(frontier)
    certain: dict[str, Any] = {}

    def result(**kw: Any) -> ValidationResult:
        return ValidationResult(
            observations=len(observations), max_frontier=biggest,
            generated=search.generated, elapsed_s=time.monotonic() - started,
            possible_violations=dict(possible), **certain, **kw,
        )

    if not frontier:
        near: list[NearMiss] = []
        if first is not None:
            cands = [(INIT_ACTION, model.encode(s), s) for s in model.init_states()]
            near = search.closest(first, cands)
        return result(accepted=False, steps=0, failed_index=0, failed=first,
                      closest=tuple(near), candidates=len(near))
    for index in range(-1, len(rest)):
        if index >= 0:
            obs = rest[index]
            previous = frontier
            frontier = search.step(frontier, obs)
            biggest = max(biggest, len(frontier))
            if not frontier:
                blocked = search.blocked_hidden_step(previous, obs)
                candidates = search.candidates(previous, obs)
                near = search.closest(obs, candidates)
                return result(accepted=False, steps=index + offset,
                              failed_index=index + offset, failed=obs, closest=tuple(near),
                              candidates=len({k for _, k, _ in candidates}),
                              blocked=blocked or "")
            if options.max_frontier and len(frontier) > options.max_frontier:
                return result(accepted=False, steps=index + offset,
                              failed_index=index + offset, failed=obs,
                              gave_up=f"frontier of {len(frontier):,} states exceeds "
                                      f"{options.max_frontier:,}")
        some, every, bad_key = search.broken(frontier)
        step_index = max(index + offset, 0)
        for name in some:
            possible.setdefault(name, step_index)
        if every is not None and not certain:
            certain.update(violation=Violation(every, search.witness(bad_key)),
                           violation_index=step_index,
                           violation_step=rest[index] if index >= 0 else first)
    witness = search.witness(min(frontier))
    return result(accepted="violation" not in certain, matched=True,
                  steps=len(observations), witness=witness)


# ---------------------------------------------------------------------------- helpers
def observations_of_trace(
    trace: Sequence[TraceStep], *, labels: bool = True, variables: Collection[str] | None = None,
) -> list[Observation]:
    """Observations of a full trace (e.g. an ITF counterexample or a random walk): the first
    step observes the initial state, each later one its label (``labels``) and the chosen
    ``variables`` (all of them by default)."""
    out = []
    for index, step in enumerate(trace):
        values = {k: v for k, v in step.state.items() if variables is None or k in variables}
        initial = index == 0 and step.action == INIT_ACTION
        label = step.action if labels and not initial and step.action else None
        out.append(Observation(line=index + 1, label=label, variables=values, initial=initial))
    return out


def discover_action_names(
    model: Model[S], *, max_states: int = 5_000, extra: Iterable[str] = ()
) -> frozenset[str]:
    """The action names of ``model``: ``model.action_names()`` when it has one; otherwise the
    names of the labels met in a breadth-first search of at most ``max_states`` states.

    Modelling shortcut of the fallback: an action first enabled beyond that bound is missed,
    so callers treat the result as "known to exist", not as the complete list.
    """
    declared = getattr(model, "action_names", None)
    if callable(declared):
        return frozenset(declared()) | frozenset(extra)
    names = set(extra)
    seen: set[bytes] = set()
    queue = [s for s in model.init_states()]
    for s in queue:
        seen.add(model.encode(s))
    head = 0
    while head < len(queue) and len(seen) < max_states:
        state = queue[head]
        head += 1
        for label, succ in model.next_states(state):
            names.add(action_name(label))
            key = model.encode(succ)
            if key not in seen:
                seen.add(key)
                queue.append(succ)
    return frozenset(names)



# ---------------------------------------------------------------------------- reading traces
class TraceFormatError(ValueError):
    """A trace file that cannot be read: where (``where``, e.g. ``line 3``) and why."""

    def __init__(self, where: str, message: str) -> None:
        super().__init__(f"{where}: {message}")
        self.where = where
        self.message = message


RESERVED_KEYS = ("action", "args", "label", "hidden", "before", "stutter", "report")
"""The keys of a JSON Lines step that are not variables (keys starting with ``#`` are
comments/metadata and are ignored)."""


def _json_type(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int | float):
        return "a number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, list):
        return "an array"
    return "an object"


def _plain(value: Any) -> Any:
    """A JSON value as a plain state value; ITF encodings (``#bigint``, ``#set``, ``#tup``,
    ``#map``, the ``None`` variant) are decoded too."""
    return from_itf_value(value)


def observation_of_json(
    step: Any, line: int, *, first: bool, text: str = "", where: str | None = None
) -> Observation:
    """One JSON Lines step as an ``Observation`` (``TraceFormatError`` when ill-formed)."""
    at = where or f"line {line}"
    if not isinstance(step, dict):
        raise TraceFormatError(at, f"a step must be a JSON object, got {_json_type(step)}")
    for key in ("action", "label"):
        if key in step and (not isinstance(step[key], str) or not step[key]):
            raise TraceFormatError(
                at, f"'{key}' must be a non-empty string, got {_json_type(step[key])}"
            )
    action: str | None = step.get("action")
    label: str | None = step.get("label")
    if action is not None and label is not None:
        raise TraceFormatError(at, "give either 'action' (with 'args') or 'label', not both")
    args: tuple[str, ...] | None = None
    if "args" in step:
        raw = step["args"]
        if action is None:
            raise TraceFormatError(at, "'args' given without 'action'")
        if not isinstance(raw, list) or any(
            isinstance(a, dict | list) or a is None for a in raw
        ):
            raise TraceFormatError(at, "'args' must be an array of strings or numbers")
        args = tuple(str(a).lower() if isinstance(a, bool) else str(a) for a in raw)
    hidden = 0
    if "hidden" in step:
        raw = step["hidden"]
        if raw == "*":
            hidden = ANY_STEPS
        elif isinstance(raw, bool) or not isinstance(raw, int) or raw < 0:
            raise TraceFormatError(at, "'hidden' must be a non-negative integer or \"*\"")
        else:
            hidden = raw
    variables = _variables_of(step, at)
    before: dict[str, Any] = {}
    if "before" in step:
        if not isinstance(step["before"], dict):
            raise TraceFormatError(at, "'before' must be an object of variables")
        before = _variables_of(step["before"], at)
    stutter = step.get("stutter", False)
    report = step.get("report", False)
    if not isinstance(stutter, bool) or not isinstance(report, bool):
        raise TraceFormatError(at, "'stutter' and 'report' must be true or false")
    initial = action == INIT_ACTION
    if initial:
        if not first:
            raise TraceFormatError(at, "'Init' may only be the first step")
        if args is not None or hidden:
            raise TraceFormatError(at, "the 'Init' step takes no 'args' or 'hidden'")
        action = None
    if action is None and label is None and not variables and not before and not initial:
        raise TraceFormatError(
            at, "the step observes nothing: give 'action', 'label' or some variable"
        )
    return Observation(line=line, action=action, args=args, label=label,
                       variables=variables, hidden=hidden, initial=initial, text=text,
                       before=before, stutter=stutter, report=report)


def _variables_of(step: Mapping[str, Any], at: str) -> dict[str, Any]:
    """The variables a JSON step observes (every key but the reserved and ``#`` ones)."""
    variables = {}
    for key, value in step.items():
        if key in RESERVED_KEYS or key.startswith("#"):
            continue
        try:
            variables[key] = _plain(value)
        except (ValueError, TypeError, KeyError) as error:
            raise TraceFormatError(at, f"variable {key!r}: {error}") from error
    return variables


def parse_jsonl(text: str) -> list[Observation]:
    """The observations of a JSON Lines trace: one JSON object per line; blank lines and
    lines starting with ``#`` are skipped (``TraceFormatError`` names the bad line)."""
    out: list[Observation] = []
    for number, raw in enumerate(text.splitlines(), start=1):
        stripped = raw.strip()
        if not stripped or stripped.startswith("#"):
            continue
        try:
            step = json.loads(stripped)
        except json.JSONDecodeError as error:
            raise TraceFormatError(f"line {number}", f"malformed JSON: {error.msg} "
                                   f"(column {error.colno})") from error
        except RecursionError:
            raise TraceFormatError(f"line {number}", "malformed JSON: nested too deeply") from None
        out.append(observation_of_json(step, number, first=not out, text=stripped))
    if not out:
        raise TraceFormatError("line 1", "the trace is empty (no step)")
    return out


def parse_itf_observations(document: Any) -> list[Observation]:
    """The observations of an ITF document: state 0 observes the initial state when its
    ``#meta.action`` is ``Init``; a later state's ``#meta.action`` is its exact label when it
    has arguments (``Name(...)``), else its action name; every variable is observed."""
    if not isinstance(document, dict) or not isinstance(document.get("states"), list):
        raise TraceFormatError("ITF", "an ITF trace is an object with a 'states' array")
    states = document["states"]
    if not states:
        raise TraceFormatError("ITF", "the trace is empty (no state)")
    out: list[Observation] = []
    previous: dict[str, tuple[Any, Any]] = {}
    for index, encoded in enumerate(states):
        where = f"ITF state {index}"
        if not isinstance(encoded, dict):
            raise TraceFormatError(where, f"a state must be an object, got {_json_type(encoded)}")
        meta = encoded.get("#meta", {})
        action = meta.get("action", "") if isinstance(meta, dict) else ""
        if not isinstance(action, str):
            raise TraceFormatError(where, "'#meta.action' must be a string")
        values = {}
        for key, value in encoded.items():
            if key == "#meta":
                continue
            last = previous.get(key)
            if last is not None and last[0] == value:
                values[key] = last[1]  # unchanged since the previous state: decoded once
                continue
            try:
                values[key] = _plain(value)
            except (ValueError, TypeError, KeyError) as error:
                raise TraceFormatError(where, f"variable {key!r}: {error}") from error
            previous[key] = (value, values[key])
        initial = index == 0 and action in (INIT_ACTION, "")
        label = action if action and "(" in action and not initial else None
        name = action if action and "(" not in action and not initial else None
        out.append(Observation(line=index, action=name, label=label, variables=values,
                               initial=initial, text=json.dumps(encoded.get("#meta", {})),
                               place=where))
    return out


def _kind(value: Any) -> str | None:
    if value is None:
        return None
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int):
        return "an integer"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, Mapping):
        return "an object"
    if isinstance(value, list | tuple | set | frozenset):
        return "an array"
    return type(value).__name__


def check_observation(
    obs: Observation, reference: Mapping[str, Any], where: str,
    checked: dict[tuple[str, int], Any] | None = None,
) -> None:
    """Raise ``TraceFormatError`` for an unknown variable or an observed value whose type
    differs from the model's (``reference``: an initial state's variables); ``checked``
    remembers the value objects already checked across calls.  Modelling
    shortcut: types are taken from that one state; entries it lacks or holds as ``None`` are
    not checked."""
    for name, value in (*obs.variables.items(), *obs.before.items()):
        if name not in reference:
            known = ", ".join(sorted(reference))
            raise TraceFormatError(where, f"unknown variable {name!r} (variables: {known})")
        if checked is not None:
            if (name, id(value)) in checked:
                continue  # the very object already checked (an unchanged ITF value)
            checked[(name, id(value))] = value  # keeps the object alive: ids stay unique
        _check_type(name, value, reference[name], where)


def _check_type(path: str, observed: Any, actual: Any, where: str) -> None:
    if observed_length(observed) is not None:
        if _kind(actual) not in (None, "an array"):
            raise TraceFormatError(where, f"{path} has no length (it is {_kind(actual)})")
        return
    want, got = _kind(actual), _kind(observed)
    if want is None or got is None:
        return
    if want != got:
        raise TraceFormatError(where, f"{path} must be {want}, got {got}")
    if isinstance(observed, Mapping) and isinstance(actual, Mapping):
        for key, value in observed.items():
            found, sub = _lookup(actual, key)
            if found:
                _check_type(f"{path}.{key}", value, sub, where)
