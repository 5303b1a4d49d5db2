"""The bridge between an explicit ``tla-*`` model and its symbolic twin.

Both sides meet on the TLA+ variables view (``Model.variables``): ``concrete`` turns an
explicit state into the ``KState`` the symbolic system decodes and pins, through that view
only, so the bridge does not depend on the explicit model's internal layout.  ``replay``
follows a symbolic trace through the explicit model, so that a BMC counterexample carries the
explicit model's own labels and variables (exactly what ``isrlab check`` prints), and fails
loudly if the explicit model cannot take a step the symbolic one took.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from isrlab.checker.model import Model
from isrlab.checker.report import INIT_ACTION, TraceStep
from isrlab.checker.z3 import Transition
from isrlab.spec.symbolic.state import KState, from_variables, replica_name


class DriftError(RuntimeError):
    """The explicit and the symbolic model disagree on a step (an encoding bug)."""


def replica_names(replicas: int) -> list[str]:
    """``r1 … rn``, the replica names of the variables view."""
    return [replica_name(i) for i in range(replicas)]


def concrete(model: Model[Any], state: Any, replicas: int) -> KState:
    """The ``KState`` of an explicit state, read through ``model.variables``."""
    return from_variables(model.variables(state), replica_names(replicas))


def replay(model: Model[Any], trace: Sequence[Transition[Any]], replicas: int,
           view: Callable[[Mapping[str, Any]], Any] | None = None,
           ) -> tuple[TraceStep, ...]:
    """The explicit model's own trace through the states of a symbolic trace.  The two meet
    on ``view`` of the explicit variables (default: the ``KState`` of the ``tla-*`` models
    of KafkaReplication); a symbolic system of another module passes its own."""

    def same(state: Any, symbolic: Any) -> bool:
        if view is not None:
            return bool(view(model.variables(state)) == symbolic)
        return bool(concrete(model, state, replicas) == symbolic)

    starts = [s for s in model.init_states() if same(s, trace[0].state)]
    if not starts:
        raise DriftError("no initial state of the explicit model matches the symbolic one")
    current = starts[0]
    steps = [TraceStep(INIT_ACTION, model.variables(current))]
    for index, step in enumerate(trace[1:], start=1):
        chosen = next(((label, succ) for label, succ in model.next_states(current)
                       if same(succ, step.state)), None)
        if chosen is None:
            raise DriftError(
                f"step {index} ({step.label}) of the symbolic trace is not a step of the "
                f"explicit model {model.name}"
            )
        label, current = chosen
        steps.append(TraceStep(label, model.variables(current)))
    return tuple(steps)
