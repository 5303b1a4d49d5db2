"""The ``kafka`` model's step labels: one grammar, its constructors and its parser.

A label names a step as traces, charts and coverage show it: an action, then its arguments
in parentheses.  The grammar (every label the model builds comes from a constructor here,
and ``parse`` reads every one back: ``tests/spec/kafka/test_labels.py``)::

    label   := ACTION
             | BROKER_ACTION "(" broker ")"
             | "PowerLoss(" broker ["," kept] [",empty-hw-file"] ")"
             | "Reassign(" broker+ ")"
             | REQUEST_ACTION "(" request ")"
    request := KIND "(to=" broker ",cepoch=" int ",leader=" int ",epoch=" int
               ",isr=" tuple ")"

``ACTION`` (a step of the controller or the clock), ``BROKER_ACTION``, ``REQUEST_ACTION`` and
``KIND`` are the names below; ``Reassign``'s argument is the new preference order, one digit
per broker; ``tuple`` is a Python tuple of broker ids as ``repr`` writes it (``()``,
``(1,)``, ``(0, 1)``).
"""

from __future__ import annotations

import re
from typing import Final, NamedTuple

TICK = "Tick"
ELECT_LEADER = "ElectLeader"
REMOVE_DEAD_FROM_ISR = "RemoveDeadFromIsr"
PREFERRED_ELECTION = "PreferredElection"
CONTROLLER_FAILOVER = "ControllerFailover"
PROPAGATE_ISR_CHANGES = "PropagateIsrChanges"
ACTIONS = (TICK, ELECT_LEADER, REMOVE_DEAD_FROM_ISR, PREFERRED_ELECTION, CONTROLLER_FAILOVER,
           PROPAGATE_ISR_CHANGES)
"""The steps without an argument (each label is its action)."""

BROKER_ACTIONS = ("Produce", "Fetch", "FetchRequest", "FetchError", "FencedFetch", "Truncate",
                  "FetchResponse", "LoseFetchResponse", "ShrinkIsr", "AlterPartition",
                  "AlterPartitionResponse", "ControlledShutdown", "Crash", "Restart", "Flush",
                  "CheckpointHw", "Consume", "FenceBroker", "UnfenceBroker", "RegisterBroker",
                  "ReplaceDisk", "ShutdownNow")
"""The steps of one broker (the broker the step acts on: a leader, a follower, or the broker
that crashes, restarts, ...)."""

REQUEST_ACTIONS = ("Deliver", "DeliverCopy", "Lose")
"""The steps of one controller request in flight."""

KINDS = ("LeaderAndIsr", "UpdateMetadata")
"""A request's kind, by ``isrlab.spec.kafka.state.LEADER_AND_ISR`` / ``UPDATE_METADATA``."""

EMPTY_HW_FILE = "empty-hw-file"


class RequestLabel(NamedTuple):
    """A controller request as a label shows it."""

    kind: str
    dest: int
    controller_epoch: int
    leader: int
    leader_epoch: int
    isr: tuple[int, ...]


class Step(NamedTuple):
    """A parsed label: the action and the arguments it has (``None`` / empty otherwise)."""

    action: str
    broker: int | None = None
    kept: int | None = None
    """``PowerLoss``: the records the power loss left (``None``: the flushed prefix)."""
    empty_hw_file: bool = False
    """``PowerLoss``: the HW checkpoint file was found empty."""
    order: tuple[int, ...] = ()
    """``Reassign``: the new preference order."""
    request: RequestLabel | None = None
    """``Deliver``, ``DeliverCopy``, ``Lose``: the request."""
    batches: int = 1
    """``HandleCommit``: the committed metadata batches published as one delta."""


def broker_step(action: str, broker: int) -> str:
    """``action(broker)`` for a step of ``BROKER_ACTIONS``: one string object per label
    (kept in ``_BROKER_STEPS``; the checker counts labels by their objects)."""
    row = _BROKER_STEPS.get(action)
    if row is None:
        row = _BROKER_STEPS[action] = []
    while len(row) <= broker:
        row.append(f"{action}({len(row)})")
    return row[broker]


_BROKER_STEPS: Final[dict[str, list[str]]] = {}
"""Each action's labels ``action(b)``, by broker ``b``."""


def handle_commit(broker: int, batches: int) -> str:
    """``HandleCommit(b)`` (KRaft: broker ``b`` publishes the next committed batch) or
    ``HandleCommit(b,j)`` (the next ``j`` batches as one delta, ``MetadataLoader.handleCommit``)."""
    return f"HandleCommit({broker})" if batches == 1 else f"HandleCommit({broker},{batches})"


def power_loss(broker: int, kept: int | None, empty_hw_file: bool) -> str:
    """``PowerLoss(b)``, ``PowerLoss(b,k)``, with ``,empty-hw-file`` when the checkpoint file
    was found empty."""
    arg = str(broker) if kept is None else f"{broker},{kept}"
    if empty_hw_file:
        arg += "," + EMPTY_HW_FILE
    return f"PowerLoss({arg})"


def reassign(order: tuple[int, ...]) -> str:
    """``Reassign(order)``: the new preference order, one digit per broker."""
    return f"Reassign({''.join(map(str, order))})"


def request_text(kind: int, dest: int, controller_epoch: int, leader: int, leader_epoch: int,
                 isr: tuple[int, ...]) -> str:
    """A request as labels and ``KafkaModel.variables`` show it."""
    return (f"{KINDS[kind]}(to={dest},cepoch={controller_epoch},leader={leader},"
            f"epoch={leader_epoch},isr={isr})")


def request_step(action: str, text: str) -> str:
    """``action(request)`` for a step of ``REQUEST_ACTIONS``, ``text`` from ``request_text``."""
    return f"{action}({text})"


_INT = r"(-?\d+)"
_REQUEST = re.compile(rf"({'|'.join(KINDS)})\(to={_INT},cepoch={_INT},leader={_INT},"
                      rf"epoch={_INT},isr=\(((?:\d+(?:, \d+)*,?)?)\)\)")
_HANDLE_COMMIT = re.compile(rf"{_INT}(?:,{_INT})?")
_POWER_LOSS = re.compile(rf"{_INT}(?:,{_INT})?(,{EMPTY_HW_FILE})?")


def parse_request(text: str) -> RequestLabel:
    """The request ``request_text`` wrote (a label's argument, an entry of the ``requests``
    variable); ``ValueError`` naming the text when it is not one."""
    m = _REQUEST.fullmatch(text)
    if m is None:
        raise ValueError(f"not a kafka controller request: {text!r}")
    kind, dest, cepoch, leader, epoch, isr = m.groups()
    ids = tuple(int(i) for i in isr.replace(",", " ").split())
    return RequestLabel(kind, int(dest), int(cepoch), int(leader), int(epoch), ids)


def parse(label: str) -> Step:
    """The step a label names (``ValueError`` naming the label when it is not one)."""
    if label in ACTIONS:
        return Step(label)
    action, paren, rest = label.partition("(")
    if not paren or not rest.endswith(")"):
        raise ValueError(f"not a kafka step label: {label!r}")
    arg = rest[:-1]
    if action in BROKER_ACTIONS and arg.isdigit():
        return Step(action, int(arg))
    if action == "PowerLoss" and (m := _POWER_LOSS.fullmatch(arg)):
        kept = None if m.group(2) is None else int(m.group(2))
        return Step(action, int(m.group(1)), kept, m.group(3) is not None)
    if action == "HandleCommit" and (m := _HANDLE_COMMIT.fullmatch(arg)):
        return Step(action, int(m.group(1)), batches=int(m.group(2) or 1))
    if action == "Reassign" and arg.isdigit():
        return Step(action, order=tuple(int(c) for c in arg))
    if action in REQUEST_ACTIONS and _REQUEST.fullmatch(arg):
        return Step(action, request=parse_request(arg))
    raise ValueError(f"not a kafka step label: {label!r}")


def format_step(step: Step) -> str:
    """The label of a parsed step (``parse``'s inverse)."""
    if step.action in ACTIONS:
        return step.action
    if step.action == "PowerLoss" and step.broker is not None:
        return power_loss(step.broker, step.kept, step.empty_hw_file)
    if step.action == "Reassign":
        return reassign(step.order)
    if step.action == "HandleCommit" and step.broker is not None:
        return handle_commit(step.broker, step.batches)
    if step.request is not None:
        r = step.request
        return request_step(step.action, request_text(
            KINDS.index(r.kind), r.dest, r.controller_epoch, r.leader, r.leader_epoch, r.isr))
    if step.broker is None:
        raise ValueError(f"{step.action} needs a broker")
    return broker_step(step.action, step.broker)


# ---------------------------------------------------------------------------- patterns
ANY = "*"
"""In a label pattern (``isrlab.checker.validate`` matches an observed label that holds
``*`` with ``fnmatch``): any text."""


def actions_from(prefix: str) -> str:
    """A pattern of the actions whose names start with ``prefix`` (``Fetch*``: ``Fetch``,
    ``FetchRequest``, ``FetchResponse``, ...; ``Deliver*``: ``Deliver``, ``DeliverCopy``)."""
    return prefix + ANY


def broker_pattern(action: str, broker: int) -> str:
    """A pattern of ``broker_step`` labels (``action`` itself may be a pattern)."""
    return f"{action}({broker})"


def request_pattern(action: str, kind: int, dest: int, *, controller_epoch: int | None = None,
                    leader: int | None = None, leader_epoch: int | None = None,
                    isr: tuple[int, ...] | None = None) -> str:
    """A pattern of ``request_step`` labels: the request of ``kind`` (``state.LEADER_AND_ISR``
    / ``UPDATE_METADATA``) to ``dest``, an argument left ``None`` matching any value."""
    return (f"{action}({KINDS[kind]}(to={dest},cepoch={_value(controller_epoch)},"
            f"leader={_value(leader)},epoch={_value(leader_epoch)},isr={_value(isr)}))")


def _value(v: object) -> str:
    """A pattern's argument: ``*`` for ``None``, else as ``request_text`` writes it."""
    return ANY if v is None else str(v)


def any_request_pattern(action: str, kind: int, dest: int) -> str:
    """A pattern of every ``request_step`` label of a request of ``kind`` to ``dest``
    (``Deliver*(LeaderAndIsr(to=0,*``)."""
    return f"{action}({KINDS[kind]}(to={dest},{ANY}"
