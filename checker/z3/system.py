"""Symbolic transition systems: what the Z3 machinery needs from a model.  Knows nothing of Kafka.

A symbolic system describes the same transition system as an explicit
``isrlab.checker.model.Model``,
but as formulas over Z3 terms:

* a *signature*: the state variables, each a name and a Z3 sort.  One copy of these
  variables for step ``k`` is a ``Frame``; unrolling ``K`` steps creates ``K + 1`` frames;
* ``init(s)``: the initial-state predicate Init(s);
* ``actions()``: the transition relation as a list of ``ActionInstance``.  Each instance is one
  disjunct of Next, T_a(s, s'), with a label (``"BecomeLeader(r1)"``) and a *family*
  (``"BecomeLeader"``); inductive obligations are stated per family.  An instance's relation may
  introduce existentially quantified parameters (an offset, an epoch) through ``Fresh``, which
  names them uniquely per step so that several unrolled steps never share a parameter;
* ``invariants()``: named state predicates;
* ``decode(model, s)``: the concrete state a Z3 model assigns to frame ``s`` (any hashable value
  the system chooses, typically the explicit model's variables view, frozen);
* ``pin(s, c)``: the formula "frame ``s`` is the concrete state ``c``".  Its negation is the
  blocking clause of successor enumeration, and it must constrain exactly what ``decode``
  reads: two models that ``decode`` to the same value must both satisfy ``pin``.

Modelling shortcut: the machinery never looks inside a state; it only conjoins the formulas
a system gives it, so the meaning of "state" (and of "same state") is entirely the system's.
"""

from __future__ import annotations

import signal
import threading
from collections.abc import Callable, Hashable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from types import FrameType
from typing import Generic, Protocol, TypeVar

import z3

C = TypeVar("C", bound=Hashable)


@dataclass(frozen=True, slots=True)
class Frame(Mapping[str, z3.ExprRef]):
    """One copy of the state variables: the Z3 constants of step ``step``, by variable name."""

    step: int
    terms: Mapping[str, z3.ExprRef]

    def __getitem__(self, name: str) -> z3.ExprRef:
        return self.terms[name]

    def __iter__(self) -> Iterator[str]:
        return iter(self.terms)

    def __len__(self) -> int:
        return len(self.terms)


def make_frame(signature: Sequence[tuple[str, z3.SortRef]], step: int, tag: str = "") -> Frame:
    """Fresh Z3 constants for every state variable, named ``name@step`` (``name@tag.step``)."""
    suffix = f"{tag}.{step}" if tag else str(step)
    return Frame(step, {name: z3.Const(f"{name}@{suffix}", sort) for name, sort in signature})


@dataclass(slots=True)
class Fresh:
    """A factory of existentially quantified action parameters, unique to one step."""

    prefix: str
    made: list[z3.ExprRef] = field(default_factory=list)

    def int(self, name: str) -> z3.ArithRef:
        """A fresh integer parameter ``prefix.name``."""
        term = z3.Int(f"{self.prefix}.{name}.{len(self.made)}")
        self.made.append(term)
        return term

    def const(self, name: str, sort: z3.SortRef) -> z3.ExprRef:
        """A fresh parameter of any sort."""
        term = z3.Const(f"{self.prefix}.{name}.{len(self.made)}", sort)
        self.made.append(term)
        return term


Relation = Callable[[Frame, Frame, Fresh], z3.BoolRef]
Predicate = Callable[[Frame], z3.BoolRef]
Factored = Callable[[Frame, Frame, Fresh], tuple[z3.BoolRef, frozenset[str]]]
"""A relation without its frame conditions: ``(U, W)`` with
``T(s, s′) ≡ U ∧ ⋀_{v ∉ W} s′.v = s.v``."""


@dataclass(frozen=True, slots=True)
class ActionInstance:
    """One disjunct of the next-state relation: T(s, s') for one label.

    ``factored`` (optional) is the same relation split as ``(U, W)``: ``W`` names the
    variables the action may write and ``U`` constrains the next state only on them, so that
    ``relation(s, t, p) ≡ U ∧ ⋀_{v ∉ W} t.v = s.v``.  ``bmc`` then states each variable's
    frame condition once per step for all actions (``Unrolling``) instead of once per action."""

    family: str
    label: str
    relation: Relation
    factored: Factored | None = None


@dataclass(frozen=True, slots=True)
class SymbolicProperty:
    """A named state predicate over one frame."""

    name: str
    holds: Predicate
    doc: str = ""


class SymbolicSystem(Protocol[C]):
    """What the Z3 machinery needs from a model; see the module docstring for each member."""

    @property
    def name(self) -> str: ...

    def signature(self) -> Sequence[tuple[str, z3.SortRef]]: ...

    def init(self, s: Frame) -> z3.BoolRef: ...

    def actions(self) -> Sequence[ActionInstance]: ...

    def invariants(self) -> Sequence[SymbolicProperty]: ...

    def decode(self, model: z3.ModelRef, s: Frame) -> C: ...

    def pin(self, s: Frame, state: C) -> z3.BoolRef: ...


def families(system: SymbolicSystem[C]) -> list[str]:
    """The action families of ``system`` in first-appearance order."""
    seen: dict[str, None] = {}
    for action in system.actions():
        seen.setdefault(action.family, None)
    return list(seen)


def family_relation(
    system: SymbolicSystem[C], family: str | None, s: Frame, t: Frame, fresh: Fresh
) -> z3.BoolRef:
    """The disjunction of the instances of ``family`` (of every family when ``None``)."""
    chosen = [a for a in system.actions() if family is None or a.family == family]
    if not chosen:
        raise ValueError(f"system {system.name!r} has no action family {family!r}")
    return z3.Or([a.relation(s, t, fresh) for a in chosen])


def invariant_named(system: SymbolicSystem[C], name: str) -> SymbolicProperty:
    """The invariant called ``name``; an unknown name is a programming error."""
    for prop in system.invariants():
        if prop.name == name:
            return prop
    known = ", ".join(p.name for p in system.invariants())
    raise ValueError(f"system {system.name!r} has no invariant {name!r} (known: {known})")


@dataclass(frozen=True, slots=True)
class Transition(Generic[C]):
    """A labelled step between two concrete states."""

    label: str
    state: C


CTRL_C = threading.Event()
"""Set by Ctrl-C.  Python raises ``KeyboardInterrupt`` wherever the main thread is, and
when that is a ``__del__`` (z3's ``AstRef.__del__`` runs constantly while formulas are
built) the exception is printed and dropped; ``check`` then still sees the flag."""


def _on_ctrl_c(signum: int, frame: FrameType | None) -> None:
    CTRL_C.set()
    raise KeyboardInterrupt


def remember_ctrl_c() -> None:
    """Install ``_on_ctrl_c`` in place of Python's default SIGINT handler (main thread only;
    a handler the program chose itself is left alone)."""
    if (threading.current_thread() is threading.main_thread()
            and signal.getsignal(signal.SIGINT) is signal.default_int_handler):
        signal.signal(signal.SIGINT, _on_ctrl_c)


def check(solver: z3.Solver) -> z3.CheckSatResult:
    """``solver.check()`` that Ctrl-C interrupts with ``KeyboardInterrupt``.

    Left to itself Z3 catches SIGINT and answers ``unknown`` ("canceled"), which reads like
    a timeout.  Here Z3's own handler is off (``ctrl_c``), the solver runs in a helper thread
    and the main thread, where Python delivers SIGINT, waits for it; on Ctrl-C it interrupts
    the solver (``Z3_interrupt``), waits for the thread and re-raises."""
    remember_ctrl_c()
    if CTRL_C.is_set():  # a Ctrl-C whose KeyboardInterrupt was swallowed (see below)
        raise KeyboardInterrupt
    solver.set("ctrl_c", False)
    answers: list[z3.CheckSatResult] = []
    errors: list[BaseException] = []

    def solve() -> None:
        try:
            answers.append(solver.check())
        except BaseException as error:  # re-raised in the caller's thread below
            errors.append(error)

    worker = threading.Thread(target=solve, name="z3-check", daemon=True)
    worker.start()
    try:
        while worker.is_alive():
            worker.join(0.1)
            if CTRL_C.is_set():
                raise KeyboardInterrupt
    except KeyboardInterrupt:
        solver.ctx.interrupt()
        worker.join()
        raise
    if errors:
        raise errors[0]
    return answers[0]
