"""Kafka broker logs of one partition as a partial trace of the ``kafka`` model.

``read_broker_log(text, partition=..., brokers=...)`` reads the lines Kafka writes when the
ISR or the leadership of a partition changes, and returns JSON Lines steps (dictionaries in
the format of ``checker.validate``, see docs/oracle.md) for ``isrlab validate --model kafka``.
Both the formats of Kafka 0.10/0.11 (``kafka.cluster.Partition`` and the
``state.change.logger``) and the newer ones (2.x) are recognised:

* ``Shrinking ISR for partition [t,0] from 1,2,3 to 1,2`` (logged by the leader,
  ``Partition [t,0] on broker 1: ...``), newer ``[Partition t-0 broker=1] Shrinking ISR from
  1,2,3 to 1,2. ...``: the leader's ``isr-expiration`` task: a ``ShrinkIsr(leader)`` step
  after which the leader's ISR is the new one;
* ``Expanding ISR for partition [t,0] from 1,2 to 1,2,3`` (newer: ``Expanding ISR from ...``):
  ``maybeExpandIsr`` during the fetch of the added follower: a ``Fetch(follower)`` step after
  which the leader's ISR is the new one;
* ``Broker 2 received LeaderAndIsr request PartitionState(controllerEpoch=1, leader=1,
  leaderEpoch=1, isr=[1, 2], ...) correlation id 7 from controller 0 epoch 1 for partition
  [t,0]`` (newer: ``[Broker id=2] Received LeaderAndIsr request LeaderAndIsrPartitionState(
  ..., leader=1, leaderEpoch=1, isr=[1, 2], ...)``): a ``Deliver`` step of that request to
  that broker; the ``completed LeaderAndIsr request correlationId 7 ... for the become-leader
  (become-follower) transition`` line of the same broker and correlation id adds what the
  broker then is (leader, leader epoch); an ``ignoring LeaderAndIsr request ... with
  correlation id 7`` line adds nothing (the request was stale).

Every other line is skipped.  Brokers are renamed to the model's ``0..n-1``: with
``brokers="1,2,3"`` broker 1 is the model's broker 0, and so on; by default the leader of
leader epoch 0 (the model's initial leader) is 0 and the others follow in ascending order.
Requests of leader epoch 0 (topic creation) are the model's initial state: the first of
them becomes an ``Init`` step observing ZooKeeper's leader, epoch and ISR.

Modelling shortcuts: a log does not show every step (fetches, produce requests, clock ticks,
the other brokers' steps when only one broker's log is read), so each step allows
``hidden`` unobserved model steps before it; the controller epoch of a request is not
compared (the model's controller epochs start at 0, a real cluster's need not); the "from"
ISR of a change is not observed (an observation constrains the state after a step).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from checker.validate import TraceFormatError

DEFAULT_HIDDEN = 4
"""Unobserved model steps allowed before each logged step (fetches, produces, ticks...)."""

_OLD_TP = r"\[(?P<topic>[^,\]\s]+),(?P<part>\d+)\]"
_SHRINK_OLD = re.compile(
    r"(?:on broker (?P<broker>\d+): )?Shrinking ISR for partition " + _OLD_TP
    + r" from (?P<old>[\d,\s]*) to (?P<new>[\d,\s]*\d)"
)
_EXPAND_OLD = re.compile(
    r"(?:on broker (?P<broker>\d+): )?Expanding ISR for partition " + _OLD_TP
    + r" from (?P<old>[\d,\s]*) to (?P<new>[\d,\s]*\d)"
)
_NEW_PREFIX = r"\[Partition (?P<tp>\S+) broker=(?P<broker>\d+)\] "
_SHRINK_NEW = re.compile(
    _NEW_PREFIX + r"Shrinking ISR from (?P<old>[\d,\s]*?) to (?P<new>\d+(?:,\s?\d+)*)"
)
_EXPAND_NEW = re.compile(
    _NEW_PREFIX + r"Expanding ISR from (?P<old>[\d,\s]*?) to (?P<new>\d+(?:,\s?\d+)*)"
)
_RECEIVED = re.compile(
    r"Broker (?:id=)?(?P<broker>\d+)\]? [Rr]eceived LeaderAndIsr request "
    r"(?P<state>\w*PartitionState\(.*?\)) correlation id (?P<cid>\d+)"
    r"(?: from controller (?P<controller>\d+) epoch (?P<cepoch>\d+))?"
    r"(?: for partition (?P<tp>\S+))?"
)
_FIELD = re.compile(r"(\w+)=(\[[^\]]*\]|'[^']*'|[^,)\s]+)")
_COMPLETED = re.compile(
    r"Broker (?:id=)?(?P<broker>\d+)\]? completed LeaderAndIsr request correlationId "
    r"(?P<cid>\d+).*?for the become-(?P<role>leader|follower) transition"
    r"(?: for partition (?P<tp>\S+))?"
)
_IGNORING = re.compile(
    r"Broker (?:id=)?(?P<broker>\d+)\]? ignoring LeaderAndIsr request from controller \d+ "
    r"with correlation id (?P<cid>\d+)"
)


@dataclass(frozen=True, slots=True)
class LogEvent:
    """One recognised log line: its kind (``shrink``, ``expand``, ``leader_and_isr``,
    ``completed``, ``ignoring``), the broker that wrote it, its partition and fields."""

    line: int
    text: str
    kind: str
    broker: int
    partition: str | None
    fields: dict[str, Any]


def _ids(text: str) -> tuple[int, ...]:
    """Broker ids of ``1,2,3`` or ``[1, 2, 3]``."""
    return tuple(int(x) for x in re.findall(r"\d+", text))


def _tp(topic_partition: str | None) -> str | None:
    """``t-0`` for ``[t,0]``, ``t-0`` or ``None``."""
    if topic_partition is None:
        return None
    match = re.fullmatch(_OLD_TP, topic_partition)
    if match:
        return f"{match['topic']}-{match['part']}"
    return topic_partition.rstrip(".,")


def _partition_state(text: str) -> tuple[dict[str, Any], str | None]:
    """The leader, leader epoch, ISR, replicas of a ``PartitionState(...)`` text, and the
    partition it names (newer formats carry topicName/partitionIndex)."""
    values = dict(_FIELD.findall(text))
    fields: dict[str, Any] = {}
    for key in ("leader", "leaderEpoch", "controllerEpoch"):
        if key in values:
            fields[key] = int(values[key])
    for key in ("isr", "replicas"):
        if key in values:
            fields[key] = _ids(values[key])
    tp = None
    if "topicName" in values and "partitionIndex" in values:
        tp = f"{values['topicName'].strip(chr(39))}-{values['partitionIndex']}"
    return fields, tp


def parse_line(number: int, line: str) -> LogEvent | None:
    """The event of one log line, or ``None`` for a line of no interest."""
    for pattern, kind in ((_SHRINK_OLD, "shrink"), (_EXPAND_OLD, "expand")):
        m = pattern.search(line)
        if m:
            broker = m["broker"] or _broker_of_old_prefix(line)
            return LogEvent(number, line, kind, int(broker) if broker else -1,
                            f"{m['topic']}-{m['part']}",
                            {"old": _ids(m["old"]), "new": _ids(m["new"])})
    for pattern, kind in ((_SHRINK_NEW, "shrink"), (_EXPAND_NEW, "expand")):
        m = pattern.search(line)
        if m:
            return LogEvent(number, line, kind, int(m["broker"]), _tp(m["tp"]),
                            {"old": _ids(m["old"]), "new": _ids(m["new"])})
    m = _RECEIVED.search(line)
    if m:
        fields, tp = _partition_state(m["state"])
        fields["cid"] = int(m["cid"])
        return LogEvent(number, line, "leader_and_isr", int(m["broker"]),
                        tp or _tp(m["tp"]), fields)
    m = _COMPLETED.search(line)
    if m:
        return LogEvent(number, line, "completed", int(m["broker"]), _tp(m["tp"]),
                        {"cid": int(m["cid"]), "role": m["role"]})
    m = _IGNORING.search(line)
    if m:
        return LogEvent(number, line, "ignoring", int(m["broker"]), None, {"cid": int(m["cid"])})
    return None


def _broker_of_old_prefix(line: str) -> str | None:
    m = re.search(r"on broker (\d+):", line)
    return m.group(1) if m else None


def _broker_order(events: Sequence[LogEvent], brokers: str | None) -> dict[int, int]:
    """Kafka broker id -> model broker index (see the module docstring)."""
    if brokers is not None:
        try:
            ids = [int(x) for x in brokers.split(",") if x.strip()]
        except ValueError as error:
            raise TraceFormatError("--brokers", f"expects broker ids like 1,2,3, got "
                                   f"{brokers!r}") from error
        if not ids or len(set(ids)) != len(ids):
            raise TraceFormatError("--brokers", f"expects distinct broker ids, got {brokers!r}")
        return {b: i for i, b in enumerate(ids)}
    seen: set[int] = set()
    first_leader: int | None = None
    for e in events:
        if e.broker >= 0:
            seen.add(e.broker)
        if e.kind == "leader_and_isr":
            seen.update(e.fields.get("replicas", ()))
            seen.update(e.fields.get("isr", ()))
            if "leader" in e.fields and e.fields["leader"] >= 0:
                seen.add(e.fields["leader"])
                if first_leader is None and e.fields.get("leaderEpoch") == 0:
                    first_leader = e.fields["leader"]
        if e.kind in ("shrink", "expand"):
            seen.update(e.fields["old"])
            seen.update(e.fields["new"])
            if first_leader is None:
                first_leader = e.broker
    order = sorted(seen)
    if first_leader is not None:
        order.remove(first_leader)
        order.insert(0, first_leader)
    return {b: i for i, b in enumerate(order)}


def _choose_partition(events: Sequence[LogEvent], partition: str | None) -> str:
    names = sorted({e.partition for e in events if e.partition is not None})
    if partition is not None:
        wanted = _tp(partition) or partition
        if wanted not in names:
            raise TraceFormatError("--partition", f"no line of partition {partition!r} in the "
                                   f"log (partitions: {', '.join(names) or 'none'})")
        return wanted
    if len(names) > 1:
        raise TraceFormatError("--partition", f"the log has several partitions "
                               f"({', '.join(names)}): choose one")
    if not names:
        raise TraceFormatError("line 1", "no ISR or LeaderAndIsr line in the log")
    return names[0]


def read_broker_log(
    text: str, *, partition: str | None = None, brokers: str | None = None,
    hidden: int = DEFAULT_HIDDEN,
) -> list[dict[str, Any]]:
    """The JSON Lines steps (``checker.validate`` format) of one partition's ISR and
    LeaderAndIsr lines in a broker log (one broker's, or several merged in time order).

    Each step carries ``#line`` (its source line) and ``#log`` (the line itself), ignored by
    the validator but shown in its reports.  ``TraceFormatError`` for an unusable log.
    """
    events = [e for n, raw in enumerate(text.splitlines(), start=1)
              if (e := parse_line(n, raw)) is not None]
    tp = _choose_partition(events, partition)
    ours = [e for e in events if e.partition in (tp, None)]
    ids = _broker_order(ours, brokers)

    def model_id(b: int, line: int) -> int:
        if b not in ids:
            raise TraceFormatError(f"line {line}", f"broker {b} is not among the brokers "
                                   f"{','.join(map(str, ids))}")
        return ids[b]

    steps: list[dict[str, Any]] = []
    pending: dict[tuple[int, int], dict[str, Any]] = {}
    for e in ours:
        if e.kind in ("shrink", "expand"):
            if e.broker < 0:
                raise TraceFormatError(f"line {e.line}", "cannot tell which broker wrote this "
                                       "ISR change (no 'on broker N' or 'broker=N')")
            leader = model_id(e.broker, e.line)
            new = sorted(model_id(b, e.line) for b in e.fields["new"])
            step: dict[str, Any] = {"#line": e.line, "#log": e.text.strip()}
            if e.kind == "shrink":
                step.update(action="ShrinkIsr", args=[leader])
            else:
                added = sorted(set(e.fields["new"]) - set(e.fields["old"]))
                if len(added) != 1:
                    raise TraceFormatError(f"line {e.line}", "an ISR expansion adds exactly "
                                           "one follower")
                step.update(action="Fetch", args=[model_id(added[0], e.line)])
            step[f"broker{leader}"] = {"leader": leader, "isr": new}
            step["hidden"] = hidden
            steps.append(step)
        elif e.kind == "leader_and_isr":
            request = _leader_and_isr_step(e, model_id, hidden, first=not steps)
            if request is not None:
                steps.append(request)
                pending[(e.broker, e.fields["cid"])] = request
        elif e.kind == "completed":
            target = pending.pop((e.broker, e.fields["cid"]), None)
            if target is not None and target.get("label"):
                b = model_id(e.broker, e.line)
                epoch, leader = target["#epoch"], target["#leader"]
                target[f"broker{b}"] = {"leader": b if e.fields["role"] == "leader" else leader,
                                        "leader_epoch": epoch}
        elif e.kind == "ignoring":
            pending.pop((e.broker, e.fields["cid"]), None)
    return steps


def _leader_and_isr_step(
    e: LogEvent, model_id: Callable[[int, int], int], hidden: int, *, first: bool
) -> dict[str, Any] | None:
    """The step of a received LeaderAndIsr request (``Init`` for leader epoch 0)."""
    f = e.fields
    for key in ("leader", "leaderEpoch", "isr"):
        if key not in f:
            raise TraceFormatError(f"line {e.line}", f"LeaderAndIsr request without {key}")
    leader = model_id(f["leader"], e.line) if f["leader"] >= 0 else -1
    isr = sorted(model_id(b, e.line) for b in f["isr"])
    epoch = f["leaderEpoch"]
    if epoch == 0:
        if not first:
            return None  # the initial request reaching another broker: already in Init
        return {"#line": e.line, "#log": e.text.strip(), "action": "Init",
                "zk": {"leader": leader, "leader_epoch": 0, "isr": isr}}
    dest = model_id(e.broker, e.line)
    isr_text = "(" + ", ".join(map(str, isr)) + ("," if len(isr) == 1 else "") + ")"
    label = (f"Deliver(LeaderAndIsr(to={dest},cepoch=*,leader={leader},epoch={epoch},"
             f"isr={isr_text}))")
    return {"#line": e.line, "#log": e.text.strip(), "label": label, "hidden": hidden,
            "#epoch": epoch, "#leader": leader}
