"""Judging a cluster's log files: read them as a stream, judge each partition, one verdict each.

``judge_logs(files, ...)`` reads the files twice, line by line (memory does not grow with
the log): first for what the judge needs to know of the logs as a whole (which brokers each
source holds, from when, at which level; the mode; the logging era; the partitions), then
merged by timestamp for the judges (``isrlab.spec.oracle.judge``), one per partition.
"""

from __future__ import annotations

import heapq
import re
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime
from pathlib import Path
from typing import Any

from isrlab.checker.validate import TraceFormatError
from isrlab.spec.kafka_log import (
    _COMPOSE,
    _LEVEL,
    _PREFIX_MAX,
    _TS,
    LEVELS,
    Entry,
    LogEvent,
    Source,
    _parse_brokers,
    _tp,
    category_of,
    open_text,
    parse_line,
    stamp,
    writer_of,
)
from isrlab.spec.oracle.judge import JudgeOptions, PartitionJudge, Rejection


@dataclass(frozen=True, slots=True)
class Prefix:
    """The first ``size`` bytes of a file still being written (``--follow``), read as the
    follower reads them: lines split at ``\n``, decoded as UTF-8."""

    path: Path
    size: int


LogFile = tuple[str, "str | Path | Prefix"]
"""A log file: its name and its text, or the path to read it from (or its first bytes)."""

EXIT = {"accepted": 0, "rejected": 1, "breaks-invariant": 3, "not-covered": 4}
"""The exit status of each verdict (bad input is 2)."""

WORST = ("accepted", "not-covered", "breaks-invariant", "rejected")
"""Verdicts from best to worst (``--partition all`` exits with the worst).  A rejection
ranks above a breach: it says the oracle's account of Kafka's code does not fit the logs,
and every verdict, a breach included, rests on that account."""

_EVIDENCE = re.compile(r"Shrinking ISR|Expanding ISR|ISR updated|starts at [Ll]eader [Ee]poch|"
                       r"High watermark updated|Truncating|truncation is not allowed|"
                       r"partition change for")
"""Phrases of the lines that carry evidence: such a line the oracle cannot read makes the
rest of its partition's log not covered."""
_ISR_WRITE_FAILED = re.compile(r"scheduled task 'isr-expiration'|Partition\.updateIsr|"
                               r"conditionalUpdatePath")
"""An ERROR of the ISR's ZooKeeper write (0.10-2.6): the proposed change was not applied."""
_NAMED_TP = re.compile(r"\[Partition (\S+) broker=|"
                       r"(?:Leader|Follower) (\S+) (?:with topic id|starts at)|"
                       r"[Pp]artition (?!epoch\b)(\[[^\]]+\]|\S+?)(?=[,:]|\.?(?:\s|$))")
"""The partition a line names: ``[Partition t-0 broker=1]``, 2.7+'s state-change ``Leader
t-0 with topic id ...`` / ``Follower t-0 starts at ...``, ``partition t-0`` (never the
``partition epoch 2`` those lines also carry)."""

_ZOOKEEPER = re.compile(r"zkVersion|zookeeper|ZooKeeper|\[KafkaServer id=|\[Kafka Server \d+\]|"
                        r"LeaderAndIsr request|Partition \[[^\]]+\] on broker \d+:|"
                        r"starts at Leader Epoch \d+ from offset|"
                        r"\[ReplicaFetcherThread-\d+-\d+\](?:, |: (?!Starting|Stopped|"
                        r"Shutting down|Shutdown completed))")
"""Lines only ZooKeeper-mode brokers write, or formats older than KRaft (2.8): 0.10-0.11's
``Partition [t,0] on broker 1:``, 0.11-2.6's ``starts at Leader Epoch``, 0.8-0.11's fetcher
logIdent ``[ReplicaFetcherThread-F-L], `` / ``]: ``.  Not the thread's start and stop lines
(``[ReplicaFetcherThread-0-1]: Starting``, ``Stopped``, ``Shutting down``, ``Shutdown
completed``): ``ShutdownableThread`` writes them in that form in every release, KRaft 4.0
included."""
_LOG_IDENT_1_0 = re.compile(r"\[Partition \S+ broker=\d+")
"""``Partition``'s log prefix from 1.0 on (0.10-0.11: ``Partition [t,0] on broker 1:``)."""
_FROM_2_7 = re.compile(r"UnifiedLog|org\.apache\.kafka\.|offset=\d+, segment|TruncationState|"
                       r"Recorded replica|topic id|AlterIsr|AlterPartition|lastCaughtUpTimeMs|"
                       r"partition epoch|(?<!zkVersion )updated to \d+\s*$|and version updated")
"""Phrases only 2.7+ brokers write (where leader transitions moved to the state-change log)."""
_CLUSTER_ID = re.compile(r"Cluster ID = (\S+)|Incarnation \S+ of broker \d+ in cluster (\S+) "
                         r"is now")
"""The cluster a broker belongs to: ``KafkaServer``'s ``Cluster ID = X`` (ZooKeeper mode,
0.10.1-3.x) and ``BrokerLifecycleManager``'s ``Incarnation I of broker N in cluster X is now
STARTING`` (KRaft 3.x-4.x)."""
_KRAFT = re.compile(r"BrokerServer|KafkaRaftServer|QuorumController|PartitionChangeRecord|"
                    r"\[Controller \d+\] |partition change for \S+ with topic ID|"
                    r"PartitionRegistration|BrokerLifecycleManager|MetadataLoader|"
                    r"raft\.|KRaft")


BROKER_KINDS = frozenset({"ctl_fencing", "ctl_broker", "ctl_register", "ctl_fenced",
                          "ctl_unfence_granted", "ctl_shutdown_granted", "ctl_shutdown_now",
                          "ctl_still_fenced", "ctl_in_shutdown", "ctl_renounce",
                          "lifecycle_registered",
                          "lifecycle_unfenced"})
"""Lines about a broker's registration, not a partition: every partition's judge reads them."""


def partition_named(text: str) -> str | None:
    """The partition a line names (``[Partition t-0 broker=1]``, ``partition t-0``), if any."""
    named = _NAMED_TP.search(text)
    return _tp(next(g for g in named.groups() if g)) if named else None


# ---------------------------------------------------------------------------- reading
def _lines(source: str | Path | Prefix) -> Iterator[str]:
    if isinstance(source, Prefix):
        left = source.size
        with source.path.open("rb") as handle:
            for data in handle:
                if left <= 0:
                    return
                chunk, left = data[:left], left - len(data)
                yield chunk.decode("utf-8", errors="replace").rstrip("\r\n")
        return
    if isinstance(source, Path):
        with open_text(source, errors="replace") as handle:
            for raw in handle:
                yield raw.rstrip("\r\n")
    else:
        yield from source.splitlines()


def file_entries(name: str, source: str | Path | Prefix, *,
                 timestamps: bool = True) -> Iterator[Entry]:
    """The entries of one file, streamed (``isrlab.spec.kafka_log.split_entries``'s rules):
    a line with a timestamp in its first characters starts one, a line without continues
    it; ``timestamps=False`` (a file with none): each non-blank line is an entry, but an
    indented line without a level of its own continues the one above (a stack trace, or a
    line wrapped by the page it was pasted from)."""
    held: Entry | None = None
    if not timestamps:
        for number, raw in enumerate(_lines(source), start=1):
            if not raw.strip() or raw.startswith("#"):
                continue
            if held is not None and raw[:1].isspace() and not _LEVEL.search(raw[:40]):
                held.text += " " + raw.strip()
                held.last = number
                continue
            if held is not None:
                yield held
            level = _LEVEL.search(raw)
            held = Entry(name, number, "", level.group(1) if level else "INFO", raw)
        if held is not None:
            yield held
        return
    for number, raw in enumerate(_lines(source), start=1):
        compose = _COMPOSE.match(raw)
        body = raw[compose.end():] if compose else raw
        src = f"{name}:{compose['service']}" if compose else name
        m = _TS.search(body[:_PREFIX_MAX])
        if m is None:
            if held is not None and held.source == src and body.strip():
                held.text += " " + body.strip()
                held.last = number
            continue
        if held is not None:
            yield held
        rest = body[m.end():]
        level = _LEVEL.search(body[:m.start()] + " " + rest[:40])
        found = level.group(1) if level else "INFO"
        held = Entry(src, number, stamp(m),
                     "WARN" if found == "WARNING" else found, body)
    if held is not None:
        yield held


def _has_timestamps(source: str | Path | Prefix) -> bool:
    return any(_TS.search(raw[:_PREFIX_MAX] if raw else "") for raw in _lines(source))


def merged(files: Sequence[LogFile], stamped: Sequence[bool]) -> Iterator[Entry]:
    """Every entry of every file in timestamp order (ties: file order, then line); each
    file is taken to be in its own time order, as a log is written."""
    streams = [((e.time, index, e.line, e) for e in file_entries(name, src, timestamps=ts))
               for index, ((name, src), ts) in enumerate(zip(files, stamped, strict=True))]
    for _, _, _, entry in heapq.merge(*streams, key=lambda k: k[:3]):
        yield entry


# ---------------------------------------------------------------------------- the logs as a whole
@dataclass(slots=True)
class Survey:
    """What the first pass learns: the sources, the mode, the logging era, the partitions,
    which files have timestamps, how many entries."""

    sources: dict[str, Source] = field(default_factory=dict)
    zookeeper: bool = False
    kraft: bool = False
    kinds: set[tuple[str, str]] = field(default_factory=set)
    partitions: dict[str, int] = field(default_factory=dict)
    ident_1_0: bool = False
    from_2_7: bool = False
    stamped: list[bool] = field(default_factory=list)
    entries: int = 0
    last: dict[str, str] = field(default_factory=dict)
    backwards: str | None = None
    """Where a file first goes back in time by more than a second (a note of the verdict)."""
    broker_lines: int = 0
    """Lines about a broker's registration (``BROKER_KINDS``): judged on their own ("-") when
    no line names a partition."""
    controller_debug: set[str] = field(default_factory=set)
    """The sources with a KRaft controller line at DEBUG or TRACE."""
    cluster: tuple[str, str] | None = None
    """The first cluster ID the logs name, and where."""

    @property
    def mode(self) -> str:
        """``zookeeper``, ``kraft`` or ``unknown`` (from the lines only one mode writes)."""
        if self.zookeeper and not self.kraft:
            return "zookeeper"
        if self.kraft and not self.zookeeper:
            return "kraft"
        return "unknown"

    @property
    def family(self) -> str:
        """The logging era (``isrlab.spec.kafka_log._family``'s rule)."""
        kinds = self.kinds
        if any(k == "follower_start" or (k == "leader_start" and v == "2.7-4.x")
               for k, v in kinds):
            return "2.7+"
        if any(k == "leader_start" for k, _ in kinds):
            return "0.11+"
        if self.ident_1_0 and not self.from_2_7 and not self.kraft:
            return "0.11+"  # 1.0-2.6: 'starts at Leader Epoch' would be in this server log
        return "0.10"

    def _check_order(self, entry: Entry) -> None:
        """Note the first line dated more than a second before the line above it in its
        file (log4j writes in time order; an asynchronous appender within milliseconds)."""
        before = self.last.get(entry.source)
        if entry.time:
            self.last[entry.source] = entry.time
        if self.backwards is not None or not before or not entry.time:
            return
        try:
            gap = datetime.fromisoformat(before) - datetime.fromisoformat(entry.time)
        except ValueError:  # a timestamp-shaped text that is no date (month 13): no order
            return
        if gap.total_seconds() > 1:
            self.backwards = (f"{entry.source}:{entry.line} is dated {entry.time}, before the "
                              f"line above it ({before}): the file is not in time order, "
                              "and its lines are judged in file order")

    def _check_cluster(self, entry: Entry) -> None:
        """Two cluster IDs in one input are two clusters' logs: bad input (one cluster's
        history is judged at a time; mixed, its epochs and leaders would seem to clash)."""
        if "luster" not in entry.text:
            return
        named = _CLUSTER_ID.search(entry.text)
        if named is None:
            return
        cluster = next(g for g in named.groups() if g).rstrip(".,")
        where = f"{entry.source}:{entry.line}"
        if self.cluster is None:
            self.cluster = (cluster, where)
        elif self.cluster[0] != cluster:
            raise TraceFormatError(where, f"two clusters' logs in one input: cluster ID {cluster} "
                                   f"here, {self.cluster[0]} at {self.cluster[1]}; judge each "
                                   "cluster's files on their own")

    def add(self, entry: Entry) -> LogEvent | None:
        """Take one entry into account; its event, if any."""
        self.entries += 1
        src = self.sources.get(entry.source)
        if src is None:
            src = self.sources[entry.source] = Source(entry.source, first=entry.time)
        src.first = min(src.first, entry.time)
        self._check_order(entry)
        cat = category_of(entry.text)
        level = entry.level if entry.level in LEVELS else "INFO"
        known = src.levels.get(cat, "FATAL")
        if LEVELS.index(level) < LEVELS.index(known):
            src.levels[cat] = level
        writer = writer_of(entry.text)
        if writer is not None:
            src.brokers.add(writer)
        text = entry.text
        self._check_cluster(entry)
        if not self.zookeeper and _ZOOKEEPER.search(text):
            self.zookeeper = True
        if not self.kraft and _KRAFT.search(text):
            self.kraft = True
        if not self.ident_1_0 and _LOG_IDENT_1_0.search(text):
            self.ident_1_0 = True
        if not self.from_2_7 and _FROM_2_7.search(text):
            self.from_2_7 = True
        event = parse_line(entry.line, text, entry)
        tp = event.partition if event is not None else None
        if event is not None:
            self.kinds.add((event.kind, event.era))
            if event.kind in BROKER_KINDS:
                self.broker_lines += 1
            if event.kind.startswith("ctl_") and level in ("DEBUG", "TRACE"):
                self.controller_debug.add(entry.source)
        elif _EVIDENCE.search(text):
            tp = partition_named(text)
        if tp is not None:
            self.partitions[tp] = self.partitions.get(tp, 0) + 1
        return event


def survey(files: Sequence[LogFile]) -> Survey:
    """The first pass over the files."""
    out = Survey()
    for name, src in files:
        stamped = _has_timestamps(src)
        out.stamped.append(stamped)
        for entry in file_entries(name, src, timestamps=stamped):
            out.add(entry)
    return out


# ---------------------------------------------------------------------------- verdicts
@dataclass(slots=True)
class Verdict:
    """One partition's verdict: ``accepted``, ``rejected`` (the line, the rule, the values),
    ``breaks-invariant`` (a behaviour of Kafka that breaks one: ``NoFatalExit``'s FATAL exit,
    or a line breaking a rule that is a safety property, ``Rule.invariant``), or
    ``not-covered`` (why), with the observations it rests on and what it assumed."""

    partition: str
    verdict: str
    observations: int
    brokers: int
    brokers_how: str
    mode: str
    rejection: Rejection | None = None
    invariant: str | None = None
    reason: str = ""
    notes: list[str] = field(default_factory=list)

    @property
    def accepted(self) -> bool:
        """Whether every rule holds (the verdict is ``accepted``)."""
        return self.verdict == "accepted"

    @property
    def exit_code(self) -> int:
        """The exit status of this verdict (``EXIT``)."""
        return EXIT[self.verdict]

    def assumed(self) -> str:
        """What the verdict assumed: brokers, mode."""
        noun = "broker" if self.brokers == 1 else "brokers"
        return f"assumed: {self.brokers} {noun}, from {self.brokers_how}; {self.mode} mode"

    def summary(self, name: str = "kafka") -> str:
        """One line: the verdict, its line and rule, what it rests on and assumed."""
        head = f"{name}: {self.partition}: "
        if self.verdict == "accepted":
            return (f"{head}ACCEPTED: {self.observations} line(s) judged, every rule holds "
                    f"({self.assumed()})")
        if self.verdict == "not-covered":
            return f"{head}NOT COVERED: {self.reason} ({self.assumed()})"
        r = self.rejection
        assert r is not None
        if self.verdict == "breaks-invariant" and r.rule.invariant:
            return (f"{head}BREAKS {self.invariant} at {r.where}: {r.detail}; breaks "
                    f"{r.rule.id}, a safety property Kafka {r.rule.versions} intends "
                    f"({r.rule.method}) and only a bug of its code breaks ({self.assumed()})")
        if self.verdict == "breaks-invariant":
            return (f"{head}BREAKS {self.invariant} at {r.where}: {r.detail}; a behaviour of "
                    f"Kafka {r.rule.versions} ({r.rule.method}) ({self.assumed()})")
        return (f"{head}REJECTED at {r.where}: breaks {r.rule.id}: {r.detail} "
                f"({self.assumed()})")

    def report(self) -> list[str]:
        """The lines after the summary: the log line, the rule in Kafka's terms, notes."""
        out: list[str] = []
        r = self.rejection
        if r is not None:
            out.append(f"{r.where}: {r.text}")
            out.append(f"rule {r.rule.id}: {r.rule.cite()}")
        out.extend(f"note: {n}" for n in self.notes)
        return out

    def to_json(self) -> dict[str, Any]:
        """The verdict as a JSON object."""
        out: dict[str, Any] = {
            "partition": self.partition, "verdict": self.verdict,
            "observations": self.observations, "brokers": self.brokers,
            "brokers_from": self.brokers_how, "mode": self.mode, "notes": self.notes,
        }
        r = self.rejection
        if r is not None:
            out["rejected" if self.verdict == "rejected" else "at"] = {
                "line": r.line, "where": r.where, "text": r.text, "rule": r.rule.id,
                "method": r.rule.method, "versions": r.rule.versions,
                "statement": r.rule.statement, "detail": r.detail}
        if self.invariant:
            out["invariant"] = self.invariant
        if self.verdict == "not-covered":
            out["reason"] = self.reason
        return out


def verdict_of(judge: PartitionJudge, brokers: int, how: str) -> Verdict:
    """The verdict of a judge that has seen its lines."""
    mode = judge.options.mode
    base = Verdict(judge.partition, "accepted", judge.observations, brokers, how, mode,
                   notes=list(judge.notes))
    breach, uncovered = judge.breach, judge.uncovered
    if judge.rejection is not None:
        base.verdict, base.rejection = "rejected", judge.rejection
        if breach is not None:
            base.notes.append(f"{breach.where} broke {judge.invariant} ({breach.rule.id}) "
                              "before this line")
    elif breach is not None and (uncovered is None or breach.line <= uncovered[0]):
        base.verdict, base.rejection = "breaks-invariant", breach
        base.invariant = judge.invariant
        if judge.breaches > 2:
            base.notes.append(f"{judge.breaches - 1} later lines break an invariant too (the "
                              "first is the verdict)")
    elif uncovered is not None:
        base.verdict = "not-covered"
        base.reason = (f"{uncovered[1]}: a line the oracle does not read ({uncovered[2]})"
                       if uncovered[2].startswith("not read by the oracle")
                       else f"{uncovered[1]}: {uncovered[2]}")
    elif judge.observations == 0:
        base.verdict = "not-covered"
        base.reason = (f"no line of partition {judge.partition} carries evidence the oracle "
                       f"reads (0 observations)")
    return base


# ---------------------------------------------------------------------------- the run
@dataclass(frozen=True, slots=True)
class OracleOptions:
    """The user's choices: the partition (``None``: the only one; ``"all"``), the Kafka
    broker ids (``--brokers``), the ``kafka`` model's parameters the oracle uses."""

    partition: str | None = None
    brokers: str | None = None
    params: Mapping[str, Any] = field(default_factory=dict)


def choose_partitions(partitions: Iterable[str], wanted: str | None) -> list[str]:
    """The partitions to judge (``TraceFormatError`` when the choice does not fit)."""
    names = sorted(partitions)
    if wanted == "all":
        if not names:
            raise TraceFormatError("line 1", "no line about a partition's replication in the log")
        return names
    if wanted is not None:
        tp = _tp(wanted) or wanted
        if tp not in names:
            raise TraceFormatError("--partition", f"no line of partition {wanted!r} in the log "
                                   f"(partitions: {', '.join(names) or 'none'})")
        return [tp]
    if len(names) > 1:
        raise TraceFormatError("--partition", f"the log has several partitions "
                               f"({', '.join(names)}): choose one, or all")
    if not names:
        raise TraceFormatError("line 1", "no line about a partition's replication (ISR "
                               "change, leader/follower start, high watermark, truncation) "
                               "in the log")
    return names


class Oracle:
    """The judges of a set of partitions, fed one entry at a time (``judge_logs``, and
    ``isrlab validate --follow`` as lines arrive)."""

    def __init__(self, survey: Survey, partitions: Sequence[str], options: OracleOptions) -> None:
        self.survey = survey
        params = options.params
        self.options = JudgeOptions(
            unclean_election=bool(params.get("unclean_election", False)),
            truncation=str(params.get("truncation", "kip279")),
            crashes=str(params.get("crashes", "clean")),
            mode=survey.mode, family=survey.family,
            controller_debug=frozenset(survey.controller_debug))
        self.ids = _parse_brokers(options.brokers) if options.brokers else None
        self.count = params.get("brokers")
        self.judges: dict[str, PartitionJudge] = {}
        self.proposals: dict[int, str] = {}
        """Each broker's latest ISR change line's partition (an ERROR of the write is its)."""
        for tp in partitions:
            self.add_judge(tp)

    def add_judge(self, tp: str) -> PartitionJudge:
        """A judge for partition ``tp`` (its replicas those of ``--brokers`` when given)."""
        judge = self.judges[tp] = PartitionJudge(tp, self.options, self.covers)
        if self.survey.backwards is not None:
            judge.notes.append(self.survey.backwards)
        if self.ids is not None:
            judge.replicas = frozenset(self.ids)
        return judge

    def covers(self, broker: int, category: str, level: str, since: str) -> bool:
        """Whether a source holding ``broker``'s lines of ``category`` at ``level`` (or more
        verbose) began before ``since`` (a file covers from its first line to its end)."""
        for src in self.survey.sources.values():
            if broker not in src.brokers or src.first > since:
                continue
            have = src.levels.get(category)
            if have is not None and LEVELS.index(have) <= LEVELS.index(level):
                return True
        return False

    def feed(self, entry: Entry) -> None:
        """One entry: its event goes to its partition's judge (a start-up to every one)."""
        event = parse_line(entry.line, entry.text, entry)
        if event is None and entry.level in ("ERROR", "FATAL") and \
                _ISR_WRITE_FAILED.search(entry.text):
            event = LogEvent(entry.line, entry.text, "isr_write_failed", -1, None, {},
                             entry.time, entry.source, entry.level, last=entry.last)
        if event is None:
            if _EVIDENCE.search(entry.text):
                self._unread(entry)
            return
        if event.broker < 0 and event.kind not in ("registration", "ignoring", "log_deleted") \
                and not event.kind.startswith("ctl_"):
            owners = self.survey.sources.get(entry.source)
            if owners is None or len(owners.brokers) != 1:
                if event.kind in ("truncate", "truncate_noop") and event.partition in self.judges:
                    self.judges[event.partition].forget_leos()  # whose log? any broker's
                return  # a line naming no broker in a file of several: cannot tell whose
            event = replace(event, broker=next(iter(owners.brokers)))
        self._settle_others(event)
        if event.kind in ("shrink", "expand") and event.partition is not None:
            self.proposals[event.broker] = event.partition
        if event.kind == "isr_write_failed":  # the write of the broker's latest proposal
            event = replace(event, partition=self.proposals.get(event.broker))
        if event.partition is None:
            if event.kind == "started" or event.kind in BROKER_KINDS:
                for each in self.judges.values():
                    each.feed(event)
            return
        judge = self.judges.get(event.partition)
        if judge is not None:
            judge.feed(event)

    def _settle_others(self, event: LogEvent) -> None:
        """A broker's line settles its ISR writes pending in other partitions (a ZooKeeper
        write before 2.7 is synchronous: the next line comes after it), except the one an
        ERROR of the write is about (its latest proposal's)."""
        if event.broker < 0:
            return
        mine = (self.proposals.get(event.broker) if event.kind == "isr_write_failed"
                else event.partition)
        for tp, judge in self.judges.items():
            if tp != mine:
                judge.settle(event.broker)

    def _unread(self, entry: Entry) -> None:
        """An evidence line no format reads: its partition is not covered from there on."""
        tp = partition_named(entry.text)
        if tp is None and len(self.judges) == 1:
            tp = next(iter(self.judges))
        found = self.judges.get(tp or "")
        if found is not None:
            found.not_covered(LogEvent(entry.line, entry.text, "unread", -1, tp, {},
                                       entry.time, entry.source, entry.level, last=entry.last),
                              "not read by the oracle")

    def brokers_of(self, judge: PartitionJudge) -> tuple[int, str]:
        """The cluster size the verdict assumes, and where it comes from."""
        named = sorted(judge.named)
        if self.count is not None and int(self.count) < len(named):
            raise TraceFormatError("-p brokers", f"brokers={self.count}, but the log names "
                                   f"{len(named)} brokers ({_join(named)})")
        if self.ids is not None:
            missing = sorted(set(named) - set(self.ids))
            if missing:
                raise TraceFormatError("--brokers", f"the log names broker(s) {_join(missing)}, "
                                       f"not in --brokers {_join(self.ids)}")
            return len(self.ids), f"--brokers {_join(self.ids)}"
        if judge.replicas is not None:
            ever = judge.replicas_ever | judge.replicas
            return len(ever), f"the replicas the log names ({_join(sorted(ever))})"
        if self.count is not None:
            return int(self.count), f"-p brokers={self.count}"
        return len(named), (f"the brokers the log names ({_join(named)})" if named
                            else "the log, which names none")

    def verdicts(self) -> list[Verdict]:
        """One verdict per partition, in name order."""
        out = []
        for tp in sorted(self.judges):
            judge = self.judges[tp]
            count, how = self.brokers_of(judge)
            out.append(verdict_of(judge, count, how))
        return out


def _join(ids: Iterable[int]) -> str:
    return ",".join(map(str, ids))


def judge_logs(files: Sequence[LogFile], options: OracleOptions | None = None) -> list[Verdict]:
    """The verdict of every chosen partition of a cluster's log files (``TraceFormatError``
    for unusable input).  Memory: the judges' state, not the logs' length."""
    options = options or OracleOptions()
    if not files:
        raise TraceFormatError("arguments", "no log file")
    found = survey(files)
    if found.entries == 0:
        raise TraceFormatError("line 1", "not a Kafka log: no line")
    if not found.partitions and options.partition in (None, "all") and not found.broker_lines:
        return [nothing_read(found)]
    chosen = (["-"] if not found.partitions and options.partition in (None, "all")
              else choose_partitions(found.partitions, options.partition))
    oracle = Oracle(found, chosen, options)
    for entry in merged(files, found.stamped):
        oracle.feed(entry)
    return oracle.verdicts()


def live_partitions(found: Survey, wanted: str | None) -> list[str]:
    """The partitions a live log's judges are for, as ``judge_logs`` chooses them from the
    lines so far (several without ``--partition``: each; one not written yet: none)."""
    names = sorted(found.partitions)
    if wanted not in (None, "all"):
        tp = _tp(wanted) or wanted
        return [tp] if tp in names else []
    if not names:
        return ["-"] if found.broker_lines else []
    return names


def judge_prefix(files: Sequence[LogFile], options: OracleOptions) -> tuple[Survey, Oracle]:
    """The survey and the judges of the files as written so far, judged as ``judge_logs``
    judges them (``isrlab validate --follow`` starts again here whenever what the logs say
    as a whole changes: the mode, the era, a source's brokers or levels, the partitions)."""
    found = survey(files)
    oracle = Oracle(found, live_partitions(found, options.partition), options)
    for entry in merged(files, found.stamped):
        oracle.feed(entry)
    return found, oracle


def survey_signature(found: Survey, wanted: str | None) -> tuple[Any, ...]:
    """What of the survey the judges read (the options they are built with, the sources'
    coverage, the notes, the partitions judged): lines that leave it unchanged can be judged
    one by one after the others, with the same verdicts as a judge of the whole."""
    sources = tuple(sorted((name, src.first, frozenset(src.brokers),
                            tuple(sorted(src.levels.items())))
                           for name, src in found.sources.items()))
    return (found.mode, found.family, frozenset(found.controller_debug), found.backwards,
            sources, tuple(live_partitions(found, wanted)))


def nothing_read(found: Survey) -> Verdict:
    """The verdict of logs with no line about a partition's replication: not covered."""
    brokers = sorted({b for src in found.sources.values() for b in src.brokers})
    how = (f"the brokers the log names ({_join(brokers)})" if brokers
           else "the log, which names none")
    return Verdict("-", "not-covered", 0, len(brokers), how, found.mode,
                   reason=f"none of the {found.entries:,} log entries is about a partition's "
                          f"replication in a form the oracle reads (0 observations)")


def worst(verdicts: Sequence[Verdict]) -> Verdict:
    """The worst of several verdicts (``WORST``'s order; the first of equals)."""
    return max(verdicts, key=lambda v: WORST.index(v.verdict))
