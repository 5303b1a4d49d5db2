"""Sequence-chart adapters: what a trace of each model family means as processes and messages.

``isrlab.checker.chart`` draws charts but knows nothing of Kafka; this module reads a trace's
action labels and variables and says which process acted, which Kafka requests went where
(LeaderAndIsr and UpdateMetadata from the controller, Fetch round trips between follower and
leader, the leader's ISR write to ZooKeeper before KIP-497, ``Partition.maybeShrinkIsr`` /
``maybeExpandIsr`` then ``zkClient.conditionalUpdatePath``, and from KIP-497 its
AlterIsr/AlterPartition round trip with the controller) and what changed in each broker's
log, LEO, HW, epoch and ISR.

Modelling shortcuts: a request is drawn at the step it takes effect (``Deliver(...)`` in the
``kafka`` model; ``BecomeLeader``/``BecomeFollower*`` in the TLA+ models, which read the
controller's request list directly), its sending is a note on the controller; a fetch that
is one atomic step in a model is drawn as request and response in the same row.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any

from isrlab.checker.chart import Arrow, Chart, Note, Row, generic_chart
from isrlab.checker.report import TraceStep
from isrlab.spec.kafka import labels
from isrlab.spec.kafka.labels import Step
from isrlab.spec.tla_kraft.layout import VALUE_NAMES

KINDS: dict[str, tuple[str, str]] = {
    "leader_and_isr": ("#1f5fbf", "LeaderAndIsr: controller tells a broker its leader, "
                                  "epoch and ISR"),
    "update_metadata": ("#7b3fb0", "UpdateMetadata: controller refreshes a broker's "
                                   "metadata cache"),
    "fetch": ("#1e8449", "Fetch request (follower -> leader) and its response "
                         "(records, leader's HW)"),
    "isr_write": ("#d35400", "ISR write: the leader writes a new ISR to ZooKeeper itself "
                             "(Partition.updateIsr, before KIP-497)"),
    "alter_isr": ("#d35400", "AlterPartition: the leader proposes an ISR, the controller "
                             "answers (KIP-497; AlterIsr before 3.2)"),
    "client": ("#555555", "produce / acknowledge / consume between a client and a broker"),
}

KRAFT_KINDS: dict[str, tuple[str, str]] = {
    "metadata": ("#7b3fb0", "HandleCommit: a broker publishes committed metadata batches "
                            "(MetadataLoader.handleCommit)"),
    **{k: v for k, v in KINDS.items() if k in ("fetch", "alter_isr", "client")},
}
"""The arrow kinds of a ``controller=kraft`` trace (no controller requests: the brokers read
the metadata log)."""

_CONTROLLER_STEPS = {
    "FenceBroker": "fences b{}: its session expired",
    "UnfenceBroker": "unfences b{}: its heartbeat caught up",
    "RegisterBroker": "registers b{}: a new incarnation, fenced",
    "ShutdownNow": "grants b{} its controlled shutdown (SHUTDOWN_NOW): fenced, it stops",
}
"""KRaft's controller steps on a broker, as the note on the controller."""

_NOT_ISR_WRITES = ("Restart", "Crash", "PowerLoss", "ControlledShutdown", "HandleCommit",
                   "ReplaceDisk", *_CONTROLLER_STEPS)
"""Broker steps that may change the ISR without the broker writing it."""

GLOSSARY = (
    "Notation: mI@E = record I written in leader epoch E; LEO = log end offset (records in "
    "the log); HW = high watermark (records below it are committed); ISR = in-sync replicas; "
    "'epoch E: leader' = the broker leads epoch E, 'follows bN' = it follows broker N.",
)

KRAFT_NOTE = (
    "KRaft: metadata applied, partition epochs and broker epochs are kept relative (the "
    "metadata every live broker has published is folded away), so a step may lower them on "
    "a process it does not touch (docs/glossary.md).")
"""The ``controller=kraft`` charts' extra notation line."""

TLA_GLOSSARY = (GLOSSARY[0].replace("'follows bN' = it follows broker N",
                                    "'follows rN' = it follows replica rN"),)
"""The ``tla-*`` charts' notation: their replicas are ``r1``, ``r2``, ..."""

_LABEL = re.compile(r"^(\w+)(?:\((.*)\))?$")


def _split(label: str) -> tuple[str, str]:
    """A ``tla-*`` model's ``Name(args)`` as ``(Name, args)``."""
    match = _LABEL.match(label)
    return (match.group(1), match.group(2) or "") if match else (label, "")


def _kafka_step(label: str) -> Step:
    """The ``kafka`` model's step a label names (``isrlab.spec.kafka.labels``); a label no
    step of the model has (a hand-made trace) as an action without arguments."""
    try:
        return labels.parse(label)
    except ValueError:
        return Step(label.partition("(")[0])


def _request(text: str) -> labels.RequestLabel | None:
    """A controller request of the ``requests`` variable (``None``: not one)."""
    try:
        return labels.parse_request(text)
    except ValueError:
        return None


def _set(items: Any) -> str:
    """An ISR or replica set as ``{b0, b1}`` (numbers) or ``{r1, r2}`` (names)."""
    names = sorted(f"b{i}" if isinstance(i, int) else str(i) for i in items)
    return "{" + ", ".join(names) + "}"


def chart_for(
    trace: Sequence[TraceStep], title: str, violation: tuple[str, str] | None = None
) -> Chart:
    """The chart of a trace of any model: the Kafka or TLA+ adapter when its variables say
    which family wrote it, else ``isrlab.checker.chart.generic_chart``."""
    if not trace:
        return generic_chart(trace, title, violation)
    first = trace[0].state
    try:
        if "zk" in first and "broker0" in first:
            return _KafkaChart(trace).chart(title, violation)
        if "controller" in first and "metadata_log" in first and "broker0" in first:
            return _KafkaChart(trace, kraft=True).chart(title, violation)
        if "replicaLog" in first and "replicaState" in first:
            return _TlaChart(trace).chart(title, violation)
        if "partition_data" in first and "con_partition_metadata" in first:
            return _KraftTlaChart(trace).chart(title, violation)
    except (KeyError, TypeError, ValueError, IndexError, AttributeError):
        pass  # a hand-made trace that lacks what the adapter reads: the generic chart
    return generic_chart(trace, title, violation)


class _Changes:
    """Note lines collected per lifeline for one row."""

    def __init__(self) -> None:
        self.lines: dict[str, list[str]] = {}

    def add(self, lane: str, line: str) -> None:
        self.lines.setdefault(lane, []).append(line)

    def notes(self, order: Sequence[str]) -> tuple[Note, ...]:
        return tuple(Note(n, tuple(self.lines[n])) for n in order if self.lines.get(n))


def _replica_lines(
    before: Mapping[str, Any] | None, after: Mapping[str, Any], name: str, log: tuple[str, ...],
    old_log: tuple[str, ...] | None,
) -> list[str]:
    """The changed log/LEO, HW, epoch/leader and ISR of one replica, as note lines."""
    out: list[str] = []
    if old_log is None or old_log != log:
        text = "[" + ", ".join(log) + "]"
        if old_log is not None and log[: len(old_log)] != old_log:
            out.append(f"TRUNCATED to LEO {sum(1 for _ in _common(old_log, log))}")
        out.append(f"log {text}  LEO {len(log)}")
    if before is None or before.get("hw") != after.get("hw"):
        out.append(f"HW {after.get('hw')}")
    epoch_key = "leader_epoch" if "leader_epoch" in after else "leaderEpoch"
    if (before is None or before.get(epoch_key) != after.get(epoch_key)
            or before.get("leader") != after.get("leader")):
        leader = after.get("leader")
        if leader in (None, -1):
            role = "no leader"
        elif leader == name or (isinstance(leader, int) and f"broker{leader}" == name):
            role = "leader"
        else:
            role = f"follows {leader if isinstance(leader, str) else f'b{leader}'}"
        out.append(f"epoch {after.get(epoch_key)}: {role}")
    if "isr" in after and (before is None or before.get("isr") != after.get("isr")):
        out.append(f"ISR {_set(after['isr'])}")
    return out


def _mask(mask: int) -> str:
    """A broker bit mask as ``{b0, b1}``."""
    return _set(b for b in range(mask.bit_length()) if mask >> b & 1)


def _extra_lines(key: str, value: Any) -> list[str]:
    """Note lines for the ``kafka`` model's optional broker variables."""
    if key == "metadata" and isinstance(value, tuple) and len(value) == 4:
        alive, leader, epoch, isr = value
        who = f"b{leader}" if leader >= 0 else "none"
        return [f"metadata cache: leader {who}, epoch {epoch}",
                f"  ISR {_mask(isr)}", f"  alive {_mask(alive)}"]
    if key == "fetch_response":
        return [f"fetch response in flight: {value}"] if value else []
    if key == "pending_isr":
        return [f"pending ISR {_set(value)}"]
    if key == "alter_partition":
        # "sent": the proposal leaves the leader; any other value is the controller's answer
        # on its way back, which the leader has not handled yet
        return ["sends AlterPartition" if value == "sent" else f"answer in flight: {value}"]
    if key == "remote_age":
        ages = ", ".join(f"b{k}={v}" for k, v in sorted(value.items()))
        return [f"ticks since caught up {ages}"]
    if key == "remote_last_fetch" and isinstance(value, Mapping):
        # KAFKA-4485: Replica.lastFetchLeaderLogEndOffset and lastFetchTimeMs, per follower
        return [f"b{k} last fetch: leader LEO {v['leader_leo']}, {_ticks(v['age'])} ago"
                for k, v in sorted(value.items())]
    return [f"{key.replace('_', ' ')} {value}"]


_REMOVED = {
    "pending_isr": "no pending ISR",
    "alter_partition": "no AlterPartition in flight",
    "fetch_response": "no fetch response in flight",
}
"""A ``kafka`` model broker variable a step removed (its absence is its "none"), in words."""


def _removed_lines(old: Mapping[str, Any], new: Mapping[str, Any], answered: bool
                   ) -> list[str]:
    """Note lines for the in-flight broker variables of ``_REMOVED`` that ``old`` had and
    ``new`` lacks (a pending ISR a makeLeader dropped, say); none when ``answered``: the
    step handled the AlterPartition answer, which its arrow shows."""
    out = []
    for key, words in _REMOVED.items():
        if key not in old or key in new or answered:
            continue
        was = _set(old[key]) if key == "pending_isr" else old[key]
        out.append(f"{words} (was {was})")
    return out


def _ticks(n: int) -> str:
    """``n`` ticks of the model's clock, in words."""
    return f"{n} tick" if n == 1 else f"{n} ticks"


def _overlap(old: Sequence[str], new: Sequence[str]) -> int:
    """How many batches at the start of ``new`` are the end of ``old`` (the metadata log
    before and after a step that may fold applied batches away and commit new ones)."""
    for k in range(min(len(old), len(new)), 0, -1):
        if tuple(old[len(old) - k:]) == tuple(new[:k]):
            return k
    return 0


def _common(a: Sequence[str], b: Sequence[str]) -> list[str]:
    """The common prefix of two logs."""
    out = []
    for x, y in zip(a, b, strict=False):
        if x != y:
            break
        out.append(x)
    return out


class _KafkaChart:
    """The adapter of the ``kafka`` model: variables ``zk``, ``brokerN``, ``requests``."""

    _KNOWN = frozenset({"alive", "log", "hw", "leader", "leader_epoch", "isr"})

    def __init__(self, trace: Sequence[TraceStep], kraft: bool = False) -> None:
        self.trace = trace
        self.kraft = kraft
        self.ctrl = "controller" if kraft else "zk"
        first = trace[0].state
        self.n = sum(1 for k in first if re.fullmatch(r"broker\d+", k))
        self.brokers = tuple(f"broker{b}" for b in range(self.n))
        self.lanes = ("client", *self.brokers, "controller")

    def chart(self, title: str, violation: tuple[str, str] | None) -> Chart:
        """Every row of the trace (the violating last state noted in full)."""
        last = len(self.trace) - 1 if violation is not None else -1
        rows = [self._row(i, i == last) for i in range(len(self.trace))]
        kinds = KRAFT_KINDS if self.kraft else KINDS
        glossary = (*GLOSSARY, KRAFT_NOTE) if self.kraft else GLOSSARY
        return Chart(title, self.lanes, tuple(rows), kinds, glossary, violation)

    def _broker_arg(self, step: Step) -> bool:
        """Whether the step acts on one of the chart's brokers."""
        return step.broker is not None and 0 <= step.broker < self.n

    def _leader_of(self, state: Mapping[str, Any], b: int) -> str:
        leader = state[f"broker{b}"].get("leader", -1)
        return f"broker{leader}" if isinstance(leader, int) and 0 <= leader < self.n else ""

    def _row(self, i: int, full: bool) -> Row:
        step = self.trace[i]
        after = step.state
        before = self.trace[i - 1].state if i else None
        notes = _Changes()
        arrows: list[Arrow] = []
        parsed = _kafka_step(step.action)
        for lane in self.brokers:
            if full and before is not None and before[lane].get("alive") != after[lane].get(
                    "alive"):
                notes.add(lane, "CRASHED" if not after[lane].get("alive") else "restarted")
            self._broker_notes(notes, lane, None if full else before, after)
            if before is not None:
                handled = parsed.action == "AlterPartitionResponse" and lane == (
                    f"broker{parsed.broker}")  # the answer's arrow says it
                for line in _removed_lines(before[lane], after[lane], handled):
                    notes.add(lane, line)
            if full and not after[lane].get("alive", True):
                notes.add(lane, "(down)")
        self._controller_notes(notes, None if full else before, after)
        if parsed.action in _CONTROLLER_STEPS and parsed.broker is not None:
            notes.add("controller", _CONTROLLER_STEPS[parsed.action].format(parsed.broker))
        if parsed.action == "AlterPartition" and self._broker_arg(parsed):
            answer = after[f"broker{parsed.broker}"].get("alter_partition")
            notes.add("controller", f"answers b{parsed.broker}: {answer}")
        if before is not None:
            arrows.extend(self._arrows(parsed, before, after))
            for key in ("acknowledged", "committed", "consumed"):
                new = sorted(set(after.get(key, {})) - set(before.get(key, {})))
                if new:
                    notes.add("client", f"{key}: {', '.join(new)}")
                leader = before[self.ctrl].get("leader", -1)
                if key == "acknowledged" and new and 0 <= leader < self.n:
                    arrows.append(Arrow(f"broker{leader}", "client",
                                        f"ProduceResponse: acked {', '.join(new)}", "client"))
            if after.get("unclean_election_happened") and not before.get(
                    "unclean_election_happened"):
                notes.add("controller", "UNCLEAN election")
        down = frozenset(b for b in self.brokers if not after[b].get("alive", True))
        caption = step.action
        if parsed.request is not None:
            caption = f"{parsed.action} {parsed.request.kind} to b{parsed.request.dest}"
        return Row(i + 1, step.action, tuple(arrows), notes.notes(self.lanes), down, caption)

    def _broker_notes(
        self, notes: _Changes, lane: str, before: Mapping[str, Any] | None,
        after: Mapping[str, Any],
    ) -> None:
        new = after[lane]
        old = before[lane] if before is not None else None
        if old is not None and old.get("alive") != new.get("alive"):
            notes.add(lane, "CRASHED" if not new.get("alive") else "restarted")
        for line in _replica_lines(old, new, lane, tuple(new.get("log", ())),
                                   tuple(old.get("log", ())) if old is not None else None):
            notes.add(lane, line)
        if "remote_leo" in new and (old is None or old.get("remote_leo") != new["remote_leo"]):
            leos = ", ".join(f"b{k}={v}" for k, v in sorted(new["remote_leo"].items()))
            notes.add(lane, f"follower LEO {leos}")
        for key, value in new.items():
            if key in self._KNOWN or key == "remote_leo":
                continue
            if old is None or old.get(key) != value:
                if old is not None and key == "alter_partition" and value != "sent":
                    continue  # the controller's answer: its sending is the controller's note
                for line in _extra_lines(key, value):
                    notes.add(lane, line)

    def _controller_notes(
        self, notes: _Changes, before: Mapping[str, Any] | None, after: Mapping[str, Any],
    ) -> None:
        zk, old = after[self.ctrl], before[self.ctrl] if before is not None else None
        if self.kraft:
            self._kraft_notes(notes, before, after)
        elif old is None or old != zk:
            notes.add("controller", f"ZK: leader b{zk['leader']}, epoch {zk['leader_epoch']}")
            notes.add("controller", f"    ISR {_set(zk['isr'])}")
        if old is None or old.get("replicas") != zk.get("replicas"):
            notes.add("controller", f"replicas {list(zk.get('replicas', ()))}")
        if before is not None:
            if before.get("controller_epoch") != after.get("controller_epoch"):
                notes.add("controller", f"controller epoch {after['controller_epoch']}")
            sent = list(after.get("requests", ()))
            for m in before.get("requests", ()):
                if m in sent:
                    sent.remove(m)
            for m in sent:
                request = _request(m)
                if request is not None:
                    notes.add("controller", f"sends {request.kind} -> b{request.dest}")

    def _kraft_notes(
        self, notes: _Changes, before: Mapping[str, Any] | None, after: Mapping[str, Any],
    ) -> None:
        """The active controller's partition registration, broker registrations and the
        batches it commits to the metadata log."""
        now = after["controller"]
        old = before["controller"] if before is not None else None
        if old is None or any(old.get(k) != now.get(k) for k in
                              ("leader", "leader_epoch", "partition_epoch", "isr")):
            notes.add("controller", f"leader b{now['leader']}, epoch {now['leader_epoch']}, "
                                    f"partition epoch {now.get('partition_epoch')}")
            notes.add("controller", f"    ISR {_set(now['isr'])}")
        for b, reg in sorted(now.get("brokers", {}).items()):
            was = (old or {}).get("brokers", {}).get(b)
            if was != reg:
                state = "fenced" if reg.get("fenced") else "unfenced"
                if reg.get("controlled_shutdown"):
                    state += ", in controlled shutdown"
                notes.add("controller", f"b{b}: broker epoch {reg.get('epoch')}, {state}")
        log = tuple(after.get("metadata_log", ()))
        if before is not None:
            old_log = tuple(before.get("metadata_log", ()))
            # batches every live broker applied are folded away; new ones follow the rest
            # (shortcut: a batch text equal to one folded away in the same step is missed)
            for batch in log[_overlap(old_log, log):]:
                notes.add("controller", f"commits {batch}")

    def _metadata_arrow(self, step: Step, before: Mapping[str, Any]) -> Arrow | None:
        """``HandleCommit(b[,j])``: broker ``b`` publishes the next ``j`` committed batches
        (drawn as the metadata reaching it from the controller)."""
        if step.broker is None or not self._broker_arg(step):
            return None
        lane = f"broker{step.broker}"
        start = before[lane].get("metadata_applied", 0)
        batches = tuple(before.get("metadata_log", ()))[start:start + step.batches]
        text = " ".join(batches) if batches else f"{step.batches} batch(es)"
        return Arrow("controller", lane, f"HandleCommit: {text}", "metadata")

    def _arrows(
        self, step: Step, before: Mapping[str, Any], after: Mapping[str, Any],
    ) -> list[Arrow]:
        out: list[Arrow] = []
        if step.action == "HandleCommit":
            arrow = self._metadata_arrow(step, before)
            return [arrow] if arrow is not None else []
        name, r = step.action, step.request
        if r is not None:
            label = (f"{r.kind}(leader b{r.leader}, epoch {r.leader_epoch}, ISR {_set(r.isr)})"
                     + (" copy" if name == "DeliverCopy" else ""))
            out.append(Arrow("controller", f"broker{r.dest}", label,
                             "leader_and_isr" if r.kind == "LeaderAndIsr"
                             else "update_metadata", lost=name == "Lose"))
        elif step.broker is not None and self._broker_arg(step):
            b = step.broker
            lane, leader = f"broker{b}", self._leader_of(before, b)
            if name == "Produce":
                new = after[lane]["log"][len(before[lane]["log"]):]
                out.append(Arrow("client", lane, f"Produce {', '.join(new)}", "client"))
            elif name == "Consume":
                out.append(Arrow(lane, "client", "records (consume)", "client"))
            elif name in ("Fetch", "FetchRequest") and leader:
                offset = len(before[lane]["log"])
                out.append(Arrow(lane, leader, f"Fetch(offset {offset}, epoch "
                                 f"{before[lane].get('leader_epoch')})", "fetch"))
            if name in ("Fetch", "FetchResponse", "LoseFetchResponse") and leader:
                old_log, new_log = before[lane]["log"], after[lane]["log"]
                records = new_log[len(_common(old_log, new_log)):]
                text = (f"FetchResponse([{', '.join(records)}], HW {after[lane]['hw']})"
                        if name != "LoseFetchResponse" else "FetchResponse")
                out.append(Arrow(leader, lane, text, "fetch", lost=name == "LoseFetchResponse"))
        out.extend(self._alter_partition_arrows(step, before, after))
        if name in ("AlterPartition", "AlterPartitionResponse"):
            return out
        isr = after[self.ctrl].get("isr")
        if (before[self.ctrl].get("isr") != isr and step.broker is not None
                and self._broker_arg(step)):
            writer = (self._leader_of(before, step.broker) if name.startswith("Fetch")
                      else f"broker{step.broker}")
            if writer and name not in _NOT_ISR_WRITES:
                out.append(Arrow(writer, "controller", f"write ISR {_set(isr)} to ZK",
                                 "isr_write"))
        return out

    def _alter_partition_arrows(
        self, step: Step, before: Mapping[str, Any], after: Mapping[str, Any],
    ) -> list[Arrow]:
        """``isr_changes=alter-partition``: a leader's proposal (drawn where the controller
        handles it, ``AlterPartition(b)``; its sending, when the round trip becomes ``sent``,
        is a note on the leader) and the controller's answer (drawn where the leader handles
        it, ``AlterPartitionResponse(b)``; its sending is a note on the controller)."""
        if not self._broker_arg(step):
            return []
        lane = f"broker{step.broker}"
        if step.action == "AlterPartition":
            return [Arrow(lane, "controller",
                          f"AlterPartition(ISR {_set(before[lane].get('pending_isr', ()))})",
                          "alter_isr")]
        if step.action == "AlterPartitionResponse":
            answer = before[lane].get("alter_partition")
            return [Arrow("controller", lane, f"AlterPartitionResponse: {answer}",
                          "alter_isr")]
        return []


class _TlaChart:
    """The adapter of the ``tla-*`` models: ``replicaLog``, ``replicaState``, ``quorumState``,
    ``leaderAndIsrRequests`` (the public TLA+ specification's variables)."""

    def __init__(self, trace: Sequence[TraceStep]) -> None:
        self.trace = trace
        self.replicas = tuple(sorted(trace[0].state["replicaLog"]))
        self.lanes = ("client", *self.replicas, "controller")

    def chart(self, title: str, violation: tuple[str, str] | None) -> Chart:
        """Every row of the trace (the violating last state noted in full)."""
        last = len(self.trace) - 1 if violation is not None else -1
        rows = [self._row(i, i == last) for i in range(len(self.trace))]
        return Chart(title, self.lanes, tuple(rows), KINDS, TLA_GLOSSARY, violation)

    @staticmethod
    def _log(state: Mapping[str, Any], r: str) -> tuple[str, ...]:
        return tuple(f"m{rec['id']}@{rec['epoch']}" for rec in state["replicaLog"][r])

    def _row(self, i: int, full: bool) -> Row:
        step = self.trace[i]
        after = step.state
        before = self.trace[i - 1].state if i else None
        notes = _Changes()
        for r in self.replicas:
            old = before["replicaState"][r] if before is not None and not full else None
            old_log = self._log(before, r) if before is not None and not full else None
            for line in _replica_lines(old, after["replicaState"][r], r, self._log(after, r),
                                       old_log):
                notes.add(r, line)
        q = after["quorumState"]
        if before is None or full or before["quorumState"] != q:
            leader = q["leader"] if q["leader"] is not None else "none"
            notes.add("controller", f"quorum: leader {leader}, epoch {q['leaderEpoch']}")
            notes.add("controller", f"    ISR {_set(q['isr'])}")
        arrows: list[Arrow] = []
        if before is not None:
            sent = after["leaderAndIsrRequests"][len(before["leaderAndIsrRequests"]):]
            for request in sent:
                notes.add("controller", f"queues LeaderAndIsr epoch {request['leaderEpoch']}")
            arrows = self._arrows(step.action, before, after)
        return Row(i + 1, step.action, tuple(arrows), notes.notes(self.lanes))

    def _arrows(
        self, label: str, before: Mapping[str, Any], after: Mapping[str, Any]
    ) -> list[Arrow]:
        name, arg = _split(label)
        names = re.findall(r"r\d+", arg)
        epoch = re.search(r"epoch (\d+)", arg)
        if (name.startswith("Become") or "BecomeFollower" in name) and names and epoch:
            e = int(epoch.group(1))
            request = next((q for q in before["leaderAndIsrRequests"]
                            if q["leaderEpoch"] == e), None)
            isr = f", ISR {_set(request['isr'])}" if request else ""
            leader = request["leader"] if request else "?"
            return [Arrow("controller", names[0],
                          f"LeaderAndIsr(leader {leader}, epoch {e}{isr})", "leader_and_isr")]
        if name == "LeaderWrite" and names:
            new = self._log(after, names[0])[len(self._log(before, names[0])):]
            return [Arrow("client", names[0], f"write {', '.join(new)}", "client")]
        if name in ("FollowerReplicate", "FencedFollowerFetch", "FollowerFetch") and len(
                names) == 2:
            follower, leader = names
            old, new = self._log(before, follower), self._log(after, follower)
            records = new[len(_common(old, new)):]
            hw = after["replicaState"][follower]["hw"]
            # KIP-320's fetch carries the follower's leader epoch, which the leader checks
            fenced = (f", epoch {before['replicaState'][follower]['leaderEpoch']}"
                      if name.startswith("Fenced") else "")
            return [Arrow(follower, leader, f"Fetch(offset {len(old)}{fenced})", "fetch"),
                    Arrow(leader, follower, f"FetchResponse([{', '.join(records)}], HW {hw})",
                          "fetch")]
        # LeaderShrinkIsr, FencedLeaderExpandIsr, LeaderShrinkIsrBetterFencing, ...
        if re.search(r"Leader(Shrink|Expand)Isr", name) and names:
            isr = _set(after["quorumState"]["isr"])
            return [Arrow(names[0], "controller", f"write ISR {isr} to ZK", "isr_write")]
        return []


KRAFT_TLA_KINDS: dict[str, tuple[str, str]] = {
    "metadata": ("#7b3fb0", "metadata: a broker replays the metadata log up to a partition "
                            "record (ReceiveMetadataUpdate)"),
    "registration": ("#1f5fbf", "broker registration (KIP-631) and the controller's answer: "
                                "a new broker epoch"),
    "fetch": KINDS["fetch"],
    "alter_isr": ("#d35400", "AlterPartition: the leader proposes an ISR, the controller "
                             "commits or refuses it (KIP-903: with broker epochs)"),
    "client": KINDS["client"],
}
"""The arrow kinds of a ``tla-kraft-*`` trace."""

KRAFT_TLA_GLOSSARY = (
    "Notation: A@E = value A written in leader epoch E; LEO = log end offset (records in "
    "the log) and HW = high watermark (records below it are committed), counted from 0 as "
    "in Kafka (the spec's offsets start at 1: its LEO and HW are one more); ISR = in-sync "
    "replicas; 'epoch E: leader' = the broker leads epoch E, 'follows bN' = it follows "
    "broker N. A message is drawn at the step that receives it; its sending is a note.",
)

_KRAFT_ERRORS = ("", "FENCED_LEADER_EPOCH", "INELIGIBLE_REPLICA", "NOT_LEADER_OR_FOLLOWER",
                 "UNKNOWN_LEADER_EPOCH")
"""The spec's error codes by number (``tla_kraft.layout.ERROR_NAMES``), in Kafka's words."""
_REG_REQ, _REG_RESP, _AP_REQ, _AP_RESP, _FETCH_REQ, _FETCH_RESP = range(6)
"""The first field of a message of the spec's ``messages`` (``tla_kraft.layout``)."""
_RECEIVER = ("ReceiveBrokerRegRequest", "ReceiveBrokerRegResponse",
             "ReceiveAlterPartitionRequest", "ReceiveAlterPartitionResponse",
             "ReceiveFetchRequest", "ReceiveFetchResponse")
"""The action that receives each kind of message (any other step that consumes one drops
it, as a shutdown drops its broker's fetch sessions)."""


def value_name(v: int) -> str:
    """A ``tla-kraft-*`` record's value as the spec's cfg names it (1: ``A``, 2: ``B``, ...:
    ``tla_kraft.layout.VALUE_NAMES``, as its ``inv_*`` sets print), else the number."""
    return VALUE_NAMES[v - 1] if isinstance(v, int) and 1 <= v <= len(VALUE_NAMES) else str(v)


def _bits(mask: int) -> str:
    """A ``tla-kraft`` broker mask (bit b-1 for broker b) as ``{b1, b2}``."""
    return _set(b + 1 for b in range(mask.bit_length()) if mask >> b & 1)


def _frozen(value: Any) -> Any:
    """``value`` with lists as tuples (a message read back from an ITF file), hashable."""
    if isinstance(value, list | tuple):
        return tuple(_frozen(v) for v in value)
    return value


def kraft_message_arrow(m: Sequence[Any]) -> Arrow | None:
    """The arrow of a ``tla-kraft-*`` message ``m`` (an entry of the spec's ``messages``):
    sender, receiver and its text in Kafka's words; ``None`` for an unknown kind."""
    kind = m[0]
    if kind == _FETCH_REQ:
        _k, leader, follower, _epoch, leader_epoch, offset, last_epoch = m
        return Arrow(f"broker{follower}", f"broker{leader}",
                     f"Fetch(offset {offset - 1}, epoch {leader_epoch}, last fetched "
                     f"epoch {last_epoch})", "fetch")
    if kind == _FETCH_RESP:
        _k, follower, leader, error, _le, _offset, hw, diverging, records = m
        if error:
            text = f"FetchResponse({_KRAFT_ERRORS[error]})"
        elif diverging:
            text = (f"FetchResponse(diverging epoch {diverging[0]}, end offset "
                    f"{diverging[1] - 1})")
        else:
            values = ", ".join(f"{value_name(r[2])}@{r[0]}" for r in records)
            text = f"FetchResponse([{values}], HW {hw - 1})"
        return Arrow(f"broker{leader}", f"broker{follower}", text, "fetch")
    if kind == _AP_REQ:
        return Arrow(f"broker{m[3]}", "controller",
                     f"AlterPartition(ISR {_bits(m[1])}, partition epoch {m[5]})",
                     "alter_isr")
    if kind == _AP_RESP:
        if m[1]:
            return Arrow("controller", f"broker{m[3]}",
                         f"AlterPartition response: {_KRAFT_ERRORS[m[1]]}", "alter_isr")
        return Arrow("controller", f"broker{m[8]}",
                     f"AlterPartition response: ISR {_bits(m[3])}, partition epoch "
                     f"{m[6]}", "alter_isr")
    if kind == _REG_REQ:
        return Arrow(f"broker{m[1]}", "controller",
                     f"BrokerRegistration(incarnation {m[2]})", "registration")
    if kind == _REG_RESP:
        return Arrow("controller", f"broker{m[4]}",
                     f"registered: broker epoch {m[1]}", "registration")
    return None


class _KraftTlaChart:
    """The adapter of the ``tla-kraft-*`` models (Vanlightly's KRaft specification): brokers
    ``1..N``, the spec's ``messages`` bag of registration, AlterPartition and fetch messages,
    and the controller's metadata log the brokers replay.

    Modelling shortcut: a message is an arrow at the step that consumes it (the spec's
    ``messages_discard`` grows, or a request is answered), from its sender to its receiver;
    the step that sent it notes "sends ..." on the sender.  A value's record ``(epoch,
    offset, value)`` is drawn ``A@epoch``."""

    def __init__(self, trace: Sequence[TraceStep]) -> None:
        self.trace = trace
        self.n = len(trace[0].state["partition_data"])
        self.lanes = ("client", *(f"broker{b}" for b in range(1, self.n + 1)), "controller")

    def chart(self, title: str, violation: tuple[str, str] | None) -> Chart:
        """Every row of the trace (the violating last state noted in full)."""
        last = len(self.trace) - 1 if violation is not None else -1
        rows = [self._row(i, i == last) for i in range(len(self.trace))]
        return Chart(title, self.lanes, tuple(rows), KRAFT_TLA_KINDS, KRAFT_TLA_GLOSSARY,
                     violation)

    def _row(self, i: int, full: bool) -> Row:
        step = self.trace[i]
        after = step.state
        before = self.trace[i - 1].state if i else None
        shown = None if full else before
        notes = _Changes()
        for b in range(1, self.n + 1):
            self._broker_notes(notes, b, shown, after)
        self._controller_notes(notes, shown, after)
        arrows: list[Arrow] = []
        if before is not None:
            arrows = self._arrows(step.action, before, after, notes)
        down = frozenset(f"broker{b}" for b in range(1, self.n + 1)
                         if str(after["broker_state"][b - 1]["status"]).startswith("OFFLINE"))
        return Row(i + 1, step.action, tuple(arrows), notes.notes(self.lanes), down)

    @staticmethod
    def _log(state: Mapping[str, Any], b: int) -> tuple[str, ...]:
        return tuple(f"{value_name(record[2])}@{record[0]}"
                     for record in state["partition_data"][b - 1][0])

    def _broker_notes(
        self, notes: _Changes, b: int, before: Mapping[str, Any] | None,
        after: Mapping[str, Any],
    ) -> None:
        lane = f"broker{b}"
        now = after["broker_state"][b - 1]
        was = before["broker_state"][b - 1] if before is not None else None
        if was is None or was.get("status") != now.get("status"):
            notes.add(lane, {"OFFLINE_DIRTY": "DOWN, its log lost (unclean)",
                             "OFFLINE_CLEAN": "DOWN (clean shutdown)"}.get(
                                 str(now.get("status")), str(now.get("status"))))
        if was is None or was.get("broker_epoch") != now.get("broker_epoch"):
            notes.add(lane, f"broker epoch {now.get('broker_epoch')}")
        data, old = after["partition_data"][b - 1], (
            before["partition_data"][b - 1] if before is not None else None)
        log, old_log = self._log(after, b), self._log(before, b) if before else None
        if old_log is None or old_log != log:
            lost = now.get("status") == "OFFLINE_DIRTY" and was is not None and (
                was.get("status") != "OFFLINE_DIRTY")
            if old_log is not None and log[:len(old_log)] != old_log and not lost:
                notes.add(lane, f"TRUNCATED to LEO {len(_common(old_log, log))}")
            notes.add(lane, f"log [{', '.join(log)}]  LEO {data[2] - 1}")
        if old is None or old[1] != data[1]:
            notes.add(lane, f"HW {data[1] - 1}")
        md = after["partition_metadata"][b - 1]
        role = after["partition_status"][b - 1]
        old_md = before["partition_metadata"][b - 1] if before is not None else None
        old_role = before["partition_status"][b - 1] if before is not None else None
        if (old_md is None or old_role != role or old_md["leader_epoch"] != md["leader_epoch"]
                or old_md["leader"] != md["leader"]):
            who = ("leader" if role == "Leader" else f"follows b{md['leader']}"
                   if role == "Follower" and md["leader"] else "no role")
            notes.add(lane, f"epoch {md['leader_epoch']}: {who}")
        if old_md is None or old_md["isr"] != md["isr"]:
            notes.add(lane, f"ISR {_set(md['isr'])}")
        if (old_md is None or old_md["maximal_isr"] != md["maximal_isr"]) and (
                md["maximal_isr"] != md["isr"]):
            notes.add(lane, f"maximal ISR {_set(md['maximal_isr'])}")

    def _controller_notes(
        self, notes: _Changes, before: Mapping[str, Any] | None, after: Mapping[str, Any],
    ) -> None:
        pm = after["con_partition_metadata"]
        old = before["con_partition_metadata"] if before is not None else None
        if old is None or old != pm:
            leader = f"b{pm['leader']}" if pm["leader"] else "none"
            notes.add("controller", f"leader {leader}, epoch {pm['leader_epoch']}, "
                                    f"partition epoch {pm['partition_epoch']}")
            notes.add("controller", f"    ISR {_set(pm['isr'])}"
                      + (f", ELR {_set(pm['elr'])}" if pm.get("elr") else ""))
        for b, reg in enumerate(after["con_broker_reg"], 1):
            was = before["con_broker_reg"][b - 1] if before is not None else None
            if was != reg:
                notes.add("controller", f"b{b}: broker epoch {reg['broker_epoch']}, "
                                        f"{str(reg['status']).lower()}")

    def _arrows(
        self, label: str, before: Mapping[str, Any], after: Mapping[str, Any], notes: _Changes,
    ) -> list[Arrow]:
        old_msgs = {_frozen(m) for m in before["messages"]}
        new_msgs = {_frozen(m) for m in after["messages"]}
        done = ({_frozen(m) for m in after["messages_discard"]}
                - {_frozen(m) for m in before["messages_discard"]})
        name, arg = _split(label)
        out = []
        for m in sorted(done, key=repr):
            arrow = kraft_message_arrow(m)
            if arrow is not None and _RECEIVER[m[0]] != name:  # dropped: its receiver stopped
                arrow = replace(arrow, label=f"{arrow.label} (dropped)", lost=True)
            if arrow is not None:
                out.append(arrow)
        for m in sorted(new_msgs - old_msgs, key=repr):
            sender, text = self._sent(m)
            if sender:
                notes.add(sender, text)
        if name == "ReceiveMetadataUpdate" and arg.isdigit():
            b = int(arg)
            start = self._replayed(before, b)
            records = list(after["con_metadata_log"])[start:self._replayed(after, b)]
            if records:
                r = records[-1]
                leader = f"b{r['leader']}" if r["leader"] else "none"
                out.append(Arrow("controller", f"broker{b}",
                                 f"metadata: leader {leader}, epoch {r['leader_epoch']}, "
                                 f"ISR {_set(r['isr'])}", "metadata"))
        if name == "WriteRecordToLeader" and arg.isdigit():
            new = self._log(after, int(arg))[len(self._log(before, int(arg))):]
            out.append(Arrow("client", f"broker{arg}", f"Produce {', '.join(new)}", "client"))
        acked = sorted(set(after["inv_pos_acked"]) - set(before["inv_pos_acked"]))
        if acked and arg.isdigit():
            out.append(Arrow(f"broker{arg}", "client", f"acked {', '.join(acked)}", "client"))
        return out

    @staticmethod
    def _replayed(state: Mapping[str, Any], b: int) -> int:
        """How many records of the controller's metadata log broker ``b`` has replayed."""
        text = str(state["broker_metadata_log"][b - 1])
        match = re.search(r"\.\.(\d+)\]", text)
        return int(match.group(1)) if match else 0

    @staticmethod
    def _sent(m: tuple[Any, ...]) -> tuple[str, str]:
        """The lane that sent message ``m`` and its note (``""``: a reply, drawn when
        received)."""
        kind = m[0]
        if kind == _FETCH_REQ:
            return f"broker{m[2]}", f"sends Fetch -> b{m[1]}"
        if kind == _AP_REQ:
            return f"broker{m[3]}", f"sends AlterPartition(ISR {_bits(m[1])})"
        if kind == _REG_REQ:
            return f"broker{m[1]}", "sends BrokerRegistration"
        return "", ""
