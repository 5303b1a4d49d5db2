"""The explored state graph of a small run as Graphviz DOT (TLC's ``-dump dot``).

``state_graph`` repeats the checker's breadth-first search on one process, keeping every
distinct state (by the same fingerprint as ``isrlab.checker.bfs``) and every edge; it gives up as
soon as the graph would exceed ``limit`` states, so it is only for small runs.  Under a
model's view (TLC's VIEW) states sharing a view are one node, the first one found.
``dot_text`` writes nodes labelled with what changed from the state each was first reached
from (initial states, or every state if asked, with all their variables), edges with action
labels; initial states have a double border, states breaking an invariant are red, states
outside the model's boundary (TLC's CONSTRAINT: checked but not expanded) grey.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, TypeVar

from isrlab.checker.chart import plain_text
from isrlab.checker.fingerprint import fingerprint
from isrlab.checker.model import EvaluationError, Model
from isrlab.checker.report import EVALUATION_ERROR
from isrlab.checker.trace import changed_entries

S = TypeVar("S")

DOT_LIMIT = 2000
"""The default largest number of states ``--dot`` draws."""


class GraphTooLarge(Exception):
    """The state graph has more states than the limit."""


@dataclass(frozen=True, slots=True)
class StateGraph:
    """Distinct states (variables, in BFS order), edges ``(from, label, to)`` by index;
    ``parents``: each state but the initial ones -> the state it was first reached from."""

    states: tuple[Mapping[str, Any], ...]
    initial: frozenset[int]
    edges: tuple[tuple[int, str, int], ...]
    violated: Mapping[int, tuple[str, ...]]
    boundary: frozenset[int]
    parents: Mapping[int, int] = field(default_factory=dict)


def state_graph(
    model: Model[S], limit: int = DOT_LIMIT, max_depth: int | None = None,
    symmetry: bool = False, stop_at_first: bool = True, max_states: int | None = None,
) -> StateGraph:
    """The states and edges ``isrlab.checker.bfs`` explores (``GraphTooLarge`` past ``limit``).

    As the checker, it stops after the BFS level in which an invariant first fails (unless
    ``stop_at_first`` is false) or the distinct count reaches ``max_states``, and
    ``max_depth`` counts levels, the initial states being level 1.  A state whose next step
    the model cannot evaluate (its ``EvaluationError``) stops the graph after its level, as
    it stops the check, and is marked as violating ``EvaluationError (the error)``."""
    index: dict[int, int] = {}
    raw: list[S] = []
    initial: set[int] = set()
    edges: list[tuple[int, str, int]] = []
    parents: dict[int, int] = {}
    view: Callable[[S], bytes] | None = getattr(model, "view", None)

    def add(state: S) -> int:  # under a view, the state kept is the first one found
        key = model.canonical(state) if symmetry else state
        fp = fingerprint(model.encode(key) if view is None else view(key))
        if fp not in index:
            if len(raw) >= limit:
                raise GraphTooLarge(f"more than {limit} states")
            index[fp] = len(raw)
            raw.append(key)
        return index[fp]

    invariants = model.invariants()
    errors: dict[int, str] = {}

    def unevaluable(indices: list[int]) -> bool:
        """Whether the next step of a state of ``indices`` raises the model's own
        ``EvaluationError`` (kept in ``errors``): the check stops at that level too."""
        for i in indices:
            if model.within_boundary(raw[i]):
                try:
                    model.next_states(raw[i])
                except EvaluationError as error:
                    errors[i] = str(error)
        return any(i in errors for i in indices)

    def bad(indices: list[int]) -> bool:
        violating = any(not p.holds(raw[i]) for i in indices for p in invariants)
        return (stop_at_first and violating) or unevaluable(indices)

    for s in model.init_states():
        initial.add(add(s))
    frontier, level = sorted(initial), 1
    while (frontier and (max_depth is None or level < max_depth) and not bad(frontier)
           and (max_states is None or len(raw) < max_states)):
        following: list[int] = []
        for i in frontier:
            if not model.within_boundary(raw[i]):
                continue
            for label, succ in model.next_states(raw[i]):
                before = len(raw)
                j = add(succ)
                edges.append((i, label, j))
                if j == before:
                    following.append(j)
                    parents[j] = i
        frontier, level = following, level + 1
    violated = {
        i: names for i, s in enumerate(raw)
        if (names := tuple(p.name for p in invariants if not p.holds(s))
            + ((f"{EVALUATION_ERROR} ({errors[i]})",) if i in errors else ()))
    }
    boundary = frozenset(i for i, s in enumerate(raw) if not model.within_boundary(s))
    return StateGraph(tuple(model.variables(s) for s in raw), frozenset(initial),
                      tuple(edges), violated, boundary, parents)


def _quote(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\l") + '"'


def node_label(graph: StateGraph, i: int, full: bool = False) -> list[str]:
    """State ``i``'s label lines: its name (``s7``); then, for an initial state or with
    ``full``, every variable; else only what changed from the state it was first reached
    from (``from s3:``; entries of dictionary variables as the text traces write them)."""
    variables = graph.states[i]
    parent = graph.parents.get(i)
    if full or parent is None:
        head = f"s{i} (initial)" if i in graph.initial else f"s{i}"
        return [head, *(f"{k} = {plain_text(v)}" for k, v in variables.items())]
    before = graph.states[parent]
    lines = [f"s{i}, from s{parent}:"]
    for k, v in variables.items():
        if k not in before:
            lines.append(f"{k} = {plain_text(v)} (added)")
        elif before[k] != v:
            lines.extend(changed_entries(k, before[k], v, plain_text))
    lines.extend(f"{k} removed" for k in before if k not in variables)
    return lines if len(lines) > 1 else [*lines, "(no variable changed)"]


def dot_text(graph: StateGraph, name: str, full: bool = False) -> str:
    """The graph in Graphviz DOT: ``dot -Tsvg`` draws it; each node labelled by
    ``node_label`` (``full``: every variable of every state)."""
    lines = [f"digraph {_quote(name)} {{",
             '  node [shape=box, fontname="monospace", fontsize=10];',
             '  edge [fontname="monospace", fontsize=9];']
    for i in range(len(graph.states)):
        text = "\n".join(node_label(graph, i, full)) + "\n"
        attrs = [f"label={_quote(text)}"]
        if i in graph.initial:
            attrs.append("peripheries=2")
        if i in graph.violated:
            attrs.append('color=red, style=filled, fillcolor="#fdecea"')
            attrs.append(f"xlabel={_quote('violates ' + ', '.join(graph.violated[i]))}")
        elif i in graph.boundary:
            attrs.append('style=filled, fillcolor="#eeeeee"')
        lines.append(f"  s{i} [{', '.join(attrs)}];")
    for a, label, b in graph.edges:
        lines.append(f"  s{a} -> s{b} [label={_quote(label)}];")
    lines.append("}")
    return "\n".join(lines) + "\n"
