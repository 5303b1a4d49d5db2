"""Liveness checking: temporal properties under weak and strong fairness, as TLC checks them.

Entry point: ``check_liveness(model) -> LivenessResult`` for a model with a ``liveness()``
method (``isrlab.checker.model.HasLiveness``).

What a behaviour is (TLA+'s ``Init /\\ [][Next]_vars /\\ Fairness``): an infinite sequence of
states, each step one of ``next_states``' steps or a *stuttering* step that changes nothing.
Stuttering is allowed everywhere, so a behaviour may stop in any state and stutter forever,
unless fairness forbids it: stuttering forever in ``s`` is fair when no fair action is
enabled in ``s`` (a deadlock state always stutters).  A fair action is enabled in ``s`` when
one of ``s``'s steps with one of its labels leads to another state; it is *taken* by such a
step (a step from ``s`` back to ``s`` is neither, as ``<<A>>_vars``).  An infinite path that
ends in a cycle through the set of states ``C`` (every state of ``C`` visited infinitely
often) satisfies weak fairness of ``A`` when ``A`` is taken in ``C`` or disabled in some state
of ``C``, strong fairness when ``A`` is taken in ``C`` or disabled in every state of ``C``.

Each property is a conjunction of clauses; a clause's violation is a *lasso*: a prefix from
an initial state and a fair cycle (or stuttering) whose states meet the clause's pattern:

* ``[]<>P``: a fair cycle of states where ``P`` is false;
* ``<>[]P``: a fair cycle through a state where ``P`` is false;
* ``<>P``: a fair cycle reached from an initial state, ``P`` false on the whole lasso;
* ``P ~> Q``: a state where ``P`` holds and ``Q`` does not, then ``Q`` false forever;
* ``[]<>P => []<>Q``: a fair cycle of states where ``Q`` is false through one where ``P``
  holds.

The search (the usual one, e.g. Emerson-Lei for fairness; no Büchi product is needed for
these forms): build the reachable graph once (every state, every step, by the checker's
fingerprints), evaluate every predicate once per state; per clause, a breadth-first search
over (state, phase) finds the shortest prefixes (phase 1: the clause's trigger has held and
the path stays in its region), Tarjan's algorithm splits the region reachable in phase 1
into strongly connected components (with stuttering every component, a single state too,
has a cycle), and each component is checked for fairness: it fails outright when a weakly
fair action is enabled in all its states and taken in none; a strongly fair action enabled
in some state and taken in none removes the states where it is enabled, and the rest is
split again.  A component that passes (and meets the clause's "through" condition) holds a
violation.  The lasso reported is the shortest found: the shortest prefix to a state of such
a component, then either stuttering (when no fair action is enabled there) or a cycle built
greedily, by breadth-first searches inside the component, through one step of each fair
action it must take and one state where each other weakly fair action is disabled.

Modelling shortcuts: states outside ``within_boundary`` (TLC's CONSTRAINT) are not in the
behaviour graph (a step into one is left out; it still makes its action enabled); symmetry
reduction is not applied (TLC's liveness under SYMMETRY is unsound in general); the whole
graph is held in memory (about 120 bytes per state and 12 per step, plus one byte per state
and predicate).
"""

from __future__ import annotations

import time
from array import array
from collections import defaultdict, deque
from collections.abc import Callable, Iterator, Mapping, MutableSequence, Sequence
from dataclasses import dataclass, field
from itertools import pairwise
from typing import Any, TypeVar

from isrlab.checker.fingerprint import fingerprint
from isrlab.checker.model import (
    AlwaysEventually,
    Clause,
    Eventually,
    EventuallyAlways,
    Fairness,
    HasLiveness,
    LeadsTo,
    Liveness,
    Model,
    action_name,
)
from isrlab.checker.report import INIT_ACTION, TraceStep, json_value
from isrlab.checker.trace import text_trace

S = TypeVar("S")

DENSE_ROOTS = 8
"""Tarjan's numbers go in arrays when ``DENSE_ROOTS`` times the roots reach the graph's
size, else in dictionaries (the same components either way)."""

STUTTERING = "Stuttering"
"""The ``loop_action`` of a lasso that ends by stuttering forever in its last state."""

__all__ = [
    "STUTTERING", "BehaviourGraph", "Lasso", "LivenessResult", "LivenessViolation",
    "build_graph", "check_liveness", "clause_formula", "declared_liveness",
]


# -- results ------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Lasso:
    """An infinite behaviour: ``trace`` (prefix then cycle), after whose last state comes
    ``trace[loop]`` again by a step labelled ``loop_action`` (``STUTTERING`` when
    ``loop`` is the last index and the behaviour stutters there forever)."""

    trace: tuple[TraceStep, ...]
    loop: int
    loop_action: str

    @property
    def stutters(self) -> bool:
        """Whether the behaviour ends by stuttering forever in its last state."""
        return self.loop_action == STUTTERING


@dataclass(frozen=True, slots=True)
class LivenessViolation:
    """A temporal property that fails: its name, the failing clause and a lasso."""

    property: str
    clause: int  # index into the property's clauses
    formula: str  # the clause's form, e.g. "P ~> Q"
    lasso: Lasso

    def text(self) -> str:
        """A heading, the readable trace, and where the behaviour loops."""
        lasso = self.lasso
        heading = (f"{self.property} is violated (clause {self.clause + 1}: {self.formula}); "
                   f"lasso of {len(lasso.trace)} states, then "
                   + ("stuttering:" if lasso.stutters else f"back to state {lasso.loop + 1}:"))
        ending = (f"State {len(lasso.trace) + 1}: {STUTTERING}" if lasso.stutters
                  else f"Back to state {lasso.loop + 1}: {lasso.loop_action}")
        return "\n".join((heading, text_trace(lasso.trace), ending))

    def to_json(self) -> dict[str, Any]:
        """The violation as plain JSON values."""
        return {
            "property": self.property, "clause": self.clause, "formula": self.formula,
            "length": len(self.lasso.trace), "loop": self.lasso.loop,
            "loop_action": self.lasso.loop_action,
            "trace": [{"action": s.action, "state": json_value(dict(s.state))}
                      for s in self.lasso.trace],
        }


@dataclass(frozen=True, slots=True)
class LivenessResult:
    """What a liveness check found: the graph's size, each property's verdict, the times."""

    model: str
    states: int  # states of the behaviour graph (within the boundary)
    edges: int  # steps between them, self-loops included
    properties: tuple[str, ...]
    violations: tuple[LivenessViolation, ...]
    fairness: tuple[str, ...]
    graph_s: float
    search_s: float
    finitely_often: tuple[str, ...] = ()

    @property
    def ok(self) -> bool:
        """Whether every property holds."""
        return not self.violations

    def summary_line(self) -> str:
        """One line: the verdict per property, the graph's size and the times."""
        broken = {v.property for v in self.violations}
        verdicts = ", ".join(f"{p} {'VIOLATED' if p in broken else 'holds'}"
                             for p in self.properties)
        head = "OK: every temporal property holds" if self.ok else "LIVENESS VIOLATION"
        finite = (f", {', '.join(self.finitely_often)} finitely often"
                  if self.finitely_often else "")
        return (f"{self.model} [liveness]: {head} ({verdicts}); under "
                f"{', '.join(self.fairness) or 'no fairness'}{finite}; graph of "
                f"{self.states:,} states / {self.edges:,} steps built in {self.graph_s:.1f} s, "
                f"searched in {self.search_s:.1f} s")

    def text(self) -> str:
        """The summary line and every violation's lasso."""
        return "\n".join([self.summary_line(), *(v.text() for v in self.violations)])

    def to_json(self) -> dict[str, Any]:
        """The result as plain JSON values (``isrlab check --json`` puts it under
        ``liveness``)."""
        return {
            "ok": self.ok, "states": self.states, "edges": self.edges,
            "properties": list(self.properties), "fairness": list(self.fairness),
            "finitely_often": list(self.finitely_often),
            "violations": [v.to_json() for v in self.violations],
            "graph_s": round(self.graph_s, 3), "search_s": round(self.search_s, 3),
        }


# -- the behaviour graph ------------------------------------------------------------------------


@dataclass(slots=True)
class BehaviourGraph:
    """Every reachable state (node ``i``, in breadth-first order) and step.

    The steps of node ``i`` are ``target[start[i]:start[i + 1]]`` with labels
    ``labels[label[...]]``; ``inside[i]`` is 0 for a state outside the model's boundary
    (never expanded, not part of any behaviour); ``truth[k][i]`` is predicate ``k`` on
    node ``i``."""

    fps: array[int] = field(default_factory=lambda: array("Q"))
    initial: list[int] = field(default_factory=list)
    start: array[int] = field(default_factory=lambda: array("q"))
    target: array[int] = field(default_factory=lambda: array("q"))
    label: array[int] = field(default_factory=lambda: array("l"))
    labels: list[str] = field(default_factory=list)
    inside: bytearray = field(default_factory=bytearray)
    truth: list[bytearray] = field(default_factory=list)

    @property
    def size(self) -> int:
        """The number of nodes (states outside the boundary included)."""
        return len(self.fps)

    def succ(self, node: int) -> range:
        """The indices of ``node``'s steps in ``target`` and ``label``."""
        return range(self.start[node], self.start[node + 1])


def build_graph(
    model: Model[S], predicates: Sequence[Callable[[S], bool]],
    progress: Callable[[int, int, float], None] | None = None,
) -> BehaviourGraph:
    """Explore every reachable state breadth-first (one process, no symmetry), keeping every
    step and the value of every predicate on every state.  ``progress(states, steps,
    seconds)`` is called about once a second."""
    graph = BehaviourGraph(truth=[bytearray() for _ in predicates])
    index: dict[int, int] = {}
    labels: dict[str, int] = {}
    queue: deque[S] = deque()
    encode, fps, inside, truth = model.encode, graph.fps, graph.inside, graph.truth
    checks = list(zip(truth, predicates, strict=True))

    def add(state: S) -> int:
        fp = fingerprint(encode(state))
        node = index.get(fp)
        if node is None:
            node = index[fp] = len(fps)
            fps.append(fp)
            queue.append(state)
            inside.append(1 if model.within_boundary(state) else 0)
            for values, holds in checks:
                values.append(1 if holds(state) else 0)
        return node

    initial: set[int] = set()
    for state in model.init_states():
        node = add(state)
        if node not in initial:
            initial.add(node)
            graph.initial.append(node)
    started = last = time.monotonic()
    target, label, start = graph.target, graph.label, graph.start
    node = 0
    while queue:
        state = queue.popleft()
        start.append(len(target))
        if inside[node]:
            for name, successor in model.next_states(state):
                lid = labels.get(name)
                if lid is None:
                    lid = labels[name] = len(graph.labels)
                    graph.labels.append(name)
                target.append(add(successor))
                label.append(lid)
        node += 1
        if progress is not None and node % 1024 == 0 and time.monotonic() - last >= 1.0:
            last = time.monotonic()
            progress(len(fps), len(target), last - started)
    start.append(len(target))
    return graph


# -- fairness -----------------------------------------------------------------------------------


class _Fair:
    """The fair actions of a graph: per label, the ids of the fair actions it belongs to;
    ``finite[label]`` is 1 for a label of an action taken only finitely often (never on a
    lasso's cycle)."""

    def __init__(self, graph: BehaviourGraph, fairness: Sequence[Fairness],
                 finitely_often: Sequence[str] = ()) -> None:
        finite = frozenset(finitely_often)
        self.finite = bytearray(1 if action_name(name) in finite else 0
                                for name in graph.labels)
        ids: dict[tuple[int, str], int] = {}
        self.strong: list[bool] = []
        self.of_label: list[tuple[int, ...]] = []
        for name in graph.labels:
            keys = []
            for d, decl in enumerate(fairness):
                instance = decl.instance(name)
                if instance is None:
                    continue
                key = ids.get((d, instance))
                if key is None:
                    key = ids[(d, instance)] = len(self.strong)
                    self.strong.append(decl.kind == "strong")
                keys.append(key)
            self.of_label.append(tuple(keys))
        self.graph = graph
        # Each node's enabled fair actions, as an index into interned sets (-1: not yet).
        self._set_of = array("l", [-1]) * graph.size
        self._sets: list[frozenset[int]] = []
        self._interned: dict[frozenset[int], int] = {}

    def enabled(self, node: int) -> frozenset[int]:
        """The fair actions enabled in ``node``: a step with their label to another state."""
        which = self._set_of[node]
        if which < 0:
            g, keys = self.graph, set[int]()
            for e in g.succ(node):
                if g.target[e] != node:
                    keys.update(self.of_label[g.label[e]])
            frozen = frozenset(keys)
            which = self._interned.get(frozen, -1)
            if which < 0:
                which = self._interned[frozen] = len(self._sets)
                self._sets.append(frozen)
            self._set_of[node] = which
        return self._sets[which]


# -- strongly connected components --------------------------------------------------------------


def _minus_one() -> int:
    return -1


def _components(graph: BehaviourGraph, roots: Sequence[int], member: bytearray,
                skip: bytearray | None = None) -> list[list[int]]:
    """Tarjan's strongly connected components of the subgraph of nodes with ``member[i]``
    reachable from ``roots``, without the steps whose label has ``skip[label]`` set
    (iterative; components in the order Tarjan closes them).

    Its per-node numbers live in arrays (16 bytes per node of the graph) when the roots are
    a large part of it, else in dictionaries (the refinement's small components)."""
    start, target, label = graph.start, graph.target, graph.label
    index: MutableSequence[int] | defaultdict[int, int]
    low: MutableSequence[int] | defaultdict[int, int]
    on_stack: MutableSequence[int] | defaultdict[int, int]
    if DENSE_ROOTS * len(roots) >= graph.size:
        index, low = array("q", [-1]) * graph.size, array("q", [-1]) * graph.size
        on_stack = bytearray(graph.size)
    else:
        index, low, on_stack = defaultdict(_minus_one), defaultdict(_minus_one), defaultdict(int)
    stack: list[int] = []
    found: list[list[int]] = []
    counter = 0
    for root in roots:
        if index[root] >= 0 or not member[root]:
            continue
        index[root] = low[root] = counter
        counter += 1
        stack.append(root)
        on_stack[root] = 1
        work = [(root, start[root])]
        while work:
            v, e = work[-1]
            end = start[v + 1]
            descended = False
            while e < end:
                w = target[e]
                e += 1
                if not member[w] or (skip is not None and skip[label[e - 1]]):
                    continue
                if index[w] < 0:
                    work[-1] = (v, e)
                    index[w] = low[w] = counter
                    counter += 1
                    stack.append(w)
                    on_stack[w] = 1
                    work.append((w, start[w]))
                    descended = True
                    break
                if on_stack[w] and index[w] < low[v]:
                    low[v] = index[w]
            if descended:
                continue
            work.pop()
            if work:
                u = work[-1][0]
                if low[v] < low[u]:
                    low[u] = low[v]
            if low[v] == index[v]:
                component = []
                while True:
                    w = stack.pop()
                    on_stack[w] = 0
                    component.append(w)
                    if w == v:
                        break
                found.append(component)
    return found


@dataclass(frozen=True, slots=True)
class _Component:
    """A set of states in which a fair cycle exists (with the fair actions it needs)."""

    nodes: tuple[int, ...]
    must_take: frozenset[int]  # fair actions the cycle must take
    disable_or_take: frozenset[int]  # weakly fair actions: pass a state without it, or take it


def _fair_components(
    graph: BehaviourGraph, fair: _Fair, nodes: list[int], scratch: bytearray,
) -> Iterator[_Component]:
    """The maximal parts of the strongly connected ``nodes`` that hold a fair cycle
    (Emerson-Lei: strong fairness refines, weak fairness only accepts or rejects)."""
    for v in nodes:
        scratch[v] = 1
    try:
        taken: set[int] = set()
        for v in nodes:
            for e in graph.succ(v):
                w = graph.target[e]
                if w != v and scratch[w] and not fair.finite[graph.label[e]]:
                    taken.update(fair.of_label[graph.label[e]])
        everywhere: set[int] | None = None
        somewhere: set[int] = set()
        for v in nodes:
            enabled = fair.enabled(v)
            somewhere |= enabled
            everywhere = set(enabled) if everywhere is None else everywhere & enabled
        everywhere = everywhere or set()
        if any(not fair.strong[k] and k not in taken for k in everywhere):
            return
        strong_untaken = {k for k in somewhere if fair.strong[k] and k not in taken}
        if not strong_untaken:
            yield _Component(
                tuple(nodes),
                frozenset(k for k in somewhere if fair.strong[k])
                | frozenset(k for k in everywhere if not fair.strong[k]),
                frozenset(k for k in somewhere - everywhere if not fair.strong[k]),
            )
            return
        keep = [v for v in nodes if not fair.enabled(v) & strong_untaken]
    finally:
        for v in nodes:
            scratch[v] = 0
    for v in keep:
        scratch[v] = 1
    parts = _components(graph, keep, scratch, fair.finite)
    for v in keep:
        scratch[v] = 0
    for part in parts:
        yield from _fair_components(graph, fair, part, scratch)


# -- one clause ---------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class _Pattern:
    """A clause's violation pattern: after a state in ``trigger`` (``None``: any state; at
    an initial state only when ``at_init``), stay in ``region`` forever on a fair cycle
    through a state of ``through`` (``None``: no such condition)."""

    trigger: bytearray | None
    region: bytearray
    through: bytearray | None
    at_init: bool = False


def _and(a: bytearray, b: bytearray) -> bytearray:
    return bytearray((int.from_bytes(a, "little") & int.from_bytes(b, "little"))
                     .to_bytes(len(a), "little"))


_NOT = bytes.maketrans(b"\x00\x01", b"\x01\x00")


def _not(a: bytearray) -> bytearray:
    return bytearray(a.translate(_NOT))


def _pattern(clause: Clause[Any], graph: BehaviourGraph,
             truth: Callable[[Callable[[Any], bool]], bytearray]) -> _Pattern:
    inside = graph.inside
    if isinstance(clause, AlwaysEventually):
        return _Pattern(None, _and(_not(truth(clause.holds)), inside), None)
    if isinstance(clause, EventuallyAlways):
        return _Pattern(None, bytearray(inside), _not(truth(clause.holds)))
    if isinstance(clause, Eventually):
        return _Pattern(None, _and(_not(truth(clause.holds)), inside), None, at_init=True)
    if isinstance(clause, LeadsTo):
        return _Pattern(truth(clause.premise), _and(_not(truth(clause.goal)), inside), None)
    return _Pattern(None, _and(_not(truth(clause.goal)), inside), truth(clause.premise))


def clause_formula(clause: Clause[Any]) -> str:
    """The clause's form in TLA+ notation over ``P`` and ``Q``."""
    if isinstance(clause, AlwaysEventually):
        return "[]<>P"
    if isinstance(clause, EventuallyAlways):
        return "<>[]P"
    if isinstance(clause, Eventually):
        return "<>P"
    if isinstance(clause, LeadsTo):
        return "P ~> Q"
    return "[]<>P => []<>Q"


def _prefixes(graph: BehaviourGraph, pattern: _Pattern) -> tuple[array[int], array[int]]:
    """Breadth-first over (node, phase): distances and parents of the phase-1 nodes.

    A product node is ``2·node + phase``; its parent is another product node, or -1 at an
    initial state; the phase switch (at a trigger state in the region) costs no step."""
    n = graph.size
    dist, parent = array("q", [-1]) * (2 * n), array("q", [-1]) * (2 * n)
    region, trigger, inside = pattern.region, pattern.trigger, graph.inside
    queue: list[int] = []

    def visit(product: int, distance: int, via: int) -> None:
        if dist[product] >= 0:
            return
        dist[product], parent[product] = distance, via
        queue.append(product)
        node = product >> 1
        if not product & 1 and region[node] and (trigger is None or trigger[node]):
            visit(product | 1, distance, product)

    for node in graph.initial:
        if pattern.at_init:
            if region[node]:
                visit(2 * node + 1, 0, -1)
        elif inside[node]:
            visit(2 * node, 0, -1)
    head = 0
    while head < len(queue):
        product = queue[head]
        head += 1
        node, phase, distance = product >> 1, product & 1, dist[product] + 1
        allowed = region if phase else inside
        for e in graph.succ(node):
            w = graph.target[e]
            if allowed[w]:
                visit(2 * w + phase, distance, product)
    return dist, parent


def _cycle(graph: BehaviourGraph, fair: _Fair, part: _Component, entry: int,
           through: bytearray | None) -> list[tuple[int, int]]:
    """A cycle from ``entry`` back to it inside ``part`` meeting its fairness obligations
    (and passing ``through``), as (step index, node) pairs; empty when stuttering in
    ``entry`` is fair."""
    members = set(part.nodes)
    take = set(part.must_take)
    either = set(part.disable_or_take)
    need_through = through is not None

    def settle_node(v: int) -> None:
        nonlocal need_through
        either.difference_update([k for k in either if k not in fair.enabled(v)])
        if need_through and through is not None and through[v]:
            need_through = False

    def settle_step(e: int) -> None:
        keys = fair.of_label[graph.label[e]]
        take.difference_update(keys)
        either.difference_update(keys)

    def useful(e: int, w: int) -> bool:
        keys = fair.of_label[graph.label[e]]
        if any(k in take or k in either for k in keys):
            return True
        if need_through and through is not None and through[w]:
            return True
        return any(k not in fair.enabled(w) for k in either)

    def path(source: int, goal: Callable[[int, int], bool]) -> list[tuple[int, int]]:
        parent: dict[int, tuple[int, int]] = {source: (-1, -1)}
        queue = [source]
        for v in queue:
            for e in graph.succ(v):
                w = graph.target[e]
                if w == v or w not in members or fair.finite[graph.label[e]]:
                    continue
                if goal(e, w):
                    steps = [(e, w)]
                    while v != source:
                        e, v = parent[v][0], parent[v][1]
                        steps.append((e, graph.target[e]))
                    # steps hold (step, its target) from the goal back to source's successor
                    return steps[::-1]
                if w not in parent:
                    parent[w] = (e, v)
                    queue.append(w)
        raise RuntimeError("liveness: a fair component's obligation is unreachable")

    settle_node(entry)
    steps: list[tuple[int, int]] = []
    current = entry
    while take or either or need_through:
        leg = path(current, useful)
        for e, w in leg:
            settle_step(e)
            settle_node(w)
        steps.extend(leg)
        current = steps[-1][1]
    if current != entry:
        steps.extend(path(current, lambda _e, w: w == entry))
    return steps


def _chain(parent: array[int], product: int) -> list[int]:
    """The nodes of the breadth-first path to ``product``, phase switches merged."""
    nodes: list[int] = []
    while product >= 0:
        node = product >> 1
        if not nodes or nodes[-1] != node:
            nodes.append(node)
        product = parent[product]
    return nodes[::-1]


def _prefix_steps(graph: BehaviourGraph, nodes: list[int]) -> list[tuple[int, int]]:
    """The steps along a node path (the first step of each pair with the smallest label)."""
    steps = []
    for u, w in pairwise(nodes):
        best = min((graph.labels[graph.label[e]], e) for e in graph.succ(u)
                   if graph.target[e] == w)
        steps.append((best[1], w))
    return steps


def _violation(graph: BehaviourGraph, fair: _Fair, pattern: _Pattern
               ) -> tuple[int, list[tuple[int, int]], list[tuple[int, int]]] | None:
    """The shortest lasso found for the pattern: (first node, prefix steps, cycle steps)."""
    dist, parent = _prefixes(graph, pattern)
    reached = bytearray(graph.size)
    roots = []
    for node in range(graph.size):
        if dist[2 * node + 1] >= 0:
            reached[node] = 1
            roots.append(node)
    scratch = bytearray(graph.size)
    through = pattern.through
    best: tuple[int, int, int, list[tuple[int, int]]] | None = None  # (states, tie, entry, cycle)
    candidates: list[tuple[int, int, _Component]] = []
    for component in _components(graph, roots, reached, fair.finite):
        for part in _fair_components(graph, fair, component, scratch):
            if through is not None and not any(through[v] for v in part.nodes):
                continue
            for v in part.nodes:  # stuttering forever where no fair action is enabled
                if not fair.enabled(v) and (through is None or through[v]):
                    key: tuple[int, int, int, list[tuple[int, int]]] = (
                        dist[2 * v + 1] + 1, 0, v, [])
                    if best is None or key[:3] < best[:3]:
                        best = key
            entry = min(part.nodes, key=lambda v: (dist[2 * v + 1], v))
            candidates.append((dist[2 * entry + 1], entry, part))
    for distance, entry, part in sorted(candidates, key=lambda c: (c[0], c[1])):
        if best is not None and distance + 2 > best[0]:
            break
        cycle = _cycle(graph, fair, part, entry, through)
        if not cycle:  # stuttering in entry is fair: already a candidate above
            continue
        key = (distance + len(cycle), 1, entry, cycle)
        if best is None or key[:3] < best[:3]:
            best = key
    if best is None:
        return None
    entry, cycle = best[2], best[3]
    nodes = _chain(parent, 2 * entry + 1)
    return nodes[0], _prefix_steps(graph, nodes), cycle


def _replay(model: Model[S], graph: BehaviourGraph, first: int,
            steps: Sequence[tuple[int, int]]) -> tuple[list[TraceStep], list[S]]:
    """The concrete states along the steps, replayed through ``next_states``."""
    encode = model.encode
    state = next(s for s in model.init_states() if fingerprint(encode(s)) == graph.fps[first])
    trace, states = [TraceStep(INIT_ACTION, model.variables(state))], [state]
    for e, w in steps:
        name, fp = graph.labels[graph.label[e]], graph.fps[w]
        following = next((t for label, t in model.next_states(state)
                          if label == name and fingerprint(encode(t)) == fp), None)
        if following is None:
            raise RuntimeError("lasso replay failed: next_states is not deterministic")
        state = following
        trace.append(TraceStep(name, model.variables(state)))
        states.append(state)
    return trace, states


def _lasso(model: Model[S], graph: BehaviourGraph, found: tuple[
        int, list[tuple[int, int]], list[tuple[int, int]]]) -> Lasso:
    first, prefix, cycle = found
    trace, _ = _replay(model, graph, first, [*prefix, *cycle])
    loop = len(prefix)
    if not cycle:
        return Lasso(tuple(trace), loop, STUTTERING)
    closing = trace.pop()
    return Lasso(tuple(trace), loop, closing.action)


# -- the check ----------------------------------------------------------------------------------


def declared_liveness(model: object) -> Liveness[Any] | None:
    """The model's declared liveness (``liveness()``), or ``None`` when it declares none."""
    if not isinstance(model, HasLiveness):
        return None
    declared = model.liveness()
    return declared if declared.properties else None


def _predicates(liveness: Liveness[S]) -> list[Callable[[S], bool]]:
    found: list[Callable[[S], bool]] = []
    for prop in liveness.properties:
        for clause in prop.clauses:
            pair = ((clause.holds,) if isinstance(clause, AlwaysEventually | EventuallyAlways
                                                  | Eventually)
                    else (clause.premise, clause.goal))
            for predicate in pair:
                if not any(predicate is p for p in found):
                    found.append(predicate)
    return found


def check_liveness(
    model: Model[S], liveness: Liveness[S] | None = None,
    progress: Callable[[int, int, float], None] | None = None,
    graph: BehaviourGraph | None = None,
) -> LivenessResult:
    """Check every declared temporal property of ``model`` under its declared fairness.

    Every property is checked; each violated one gets the shortest lasso found (its first
    violated clause).  Raises ``ValueError`` when the model declares no property."""
    declared = liveness if liveness is not None else declared_liveness(model)
    if declared is None:
        raise ValueError(f"model {model.name!r} declares no liveness properties")
    predicates = _predicates(declared)
    started = time.monotonic()
    if graph is None:
        graph = build_graph(model, predicates, progress)
    built = time.monotonic()
    position = {id(p): i for i, p in enumerate(predicates)}

    def truth(predicate: Callable[[Any], bool]) -> bytearray:
        return graph.truth[position[id(predicate)]]

    fair = _Fair(graph, declared.fairness, declared.finitely_often)
    violations = []
    for prop in declared.properties:
        for number, clause in enumerate(prop.clauses):
            found = _violation(graph, fair, _pattern(clause, graph, truth))
            if found is not None:
                violations.append(LivenessViolation(
                    prop.name, number, clause_formula(clause), _lasso(model, graph, found)))
                break
    return LivenessResult(
        model=model.name, states=sum(graph.inside), edges=len(graph.target),
        properties=tuple(p.name for p in declared.properties),
        violations=tuple(violations),
        fairness=tuple(f.name for f in declared.fairness),
        finitely_often=tuple(declared.finitely_often),
        graph_s=built - started, search_s=time.monotonic() - built,
    )


def lasso_itf_meta(violation: LivenessViolation) -> Mapping[str, Any]:
    """What an ITF file's ``#meta`` says of a lasso besides the ``loop`` index."""
    return {"loop_action": violation.lasso.loop_action, "property": violation.property,
            "clause": violation.clause, "formula": violation.formula}
