"""Z3 machinery for symbolic transition systems: BMC, induction, successor enumeration.

Generic: it knows nothing of Kafka.  A model family supplies a ``SymbolicSystem`` (state
variables, Init, labelled actions, invariants, decode/pin between Z3 models and concrete
states); this package unrolls it (``bmc``), states and discharges inductive obligations
(``prove_inductive``) and answers concrete queries (``admits``, ``successors``).
"""

from isrlab.checker.z3.bmc import BmcResult, DepthOutcome, Unrolling, bmc
from isrlab.checker.z3.induction import (
    PROVED,
    REFUTED,
    UNKNOWN,
    Magnitudes,
    Obligation,
    Outcome,
    StepProperty,
    all_proved,
    ind_init,
    ind_next,
    prove_inductive,
    step_obligation,
)
from isrlab.checker.z3.successors import (
    admits,
    initial_states,
    property_holds,
    satisfies,
    successors,
)
from isrlab.checker.z3.system import (
    ActionInstance,
    Frame,
    Fresh,
    SymbolicProperty,
    SymbolicSystem,
    Transition,
    families,
    family_relation,
    invariant_named,
    make_frame,
)

__all__ = [
    "PROVED",
    "REFUTED",
    "UNKNOWN",
    "ActionInstance",
    "BmcResult",
    "DepthOutcome",
    "Frame",
    "Fresh",
    "Magnitudes",
    "Obligation",
    "Outcome",
    "StepProperty",
    "SymbolicProperty",
    "SymbolicSystem",
    "Transition",
    "Unrolling",
    "admits",
    "all_proved",
    "bmc",
    "families",
    "family_relation",
    "ind_init",
    "ind_next",
    "initial_states",
    "invariant_named",
    "make_frame",
    "property_holds",
    "prove_inductive",
    "satisfies",
    "step_obligation",
    "successors",
]
