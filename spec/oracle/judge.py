"""The log oracle's engine: one partition's log lines judged against an abstract cluster state.

The state is what the protocol reads of each replica, with unbounded integers: per broker
the leader epoch it applied and whether it leads, its log end offset (LEO), its high
watermark (HW), the leader-epoch cache entries ``(epoch, start offset)`` its transitions
show; per partition the controller's leader of each epoch, the assigned replicas and the
ISR.  Nothing is known before a line says it (a log that starts mid-history is taken "as
found"); each fact is then either exact or a lower bound, because the steps a log does not
show (a produce, a fetch, an HW increment: ``isrlab.spec.oracle.cluster``'s jumps) only
raise offsets, and the steps that lower them or change leaders and ISRs are logged by a
broker whose log covers the time.  Each line is checked against ``isrlab.spec.oracle.rules``
before it updates the state, so a rejection names the line, the rule, and the values.

Which changes could go unseen is decided per broker by the logs given (the sources: which
brokers' server and state-change logs cover the time since a fact was learnt, at which
level), and by the mode (ZooKeeper: the controller's ISR changes bump the leader epoch and
reach the leader as a logged transition; KRaft or unknown: the controller may shrink an ISR
without a line in the broker's log).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, TypeVar

from isrlab.spec.oracle.rules import RULES, Rule

Ids = tuple[int, ...] | frozenset[int]
"""Broker ids as a line gives them or as a set."""

Covers = Callable[[int, str, str, str], bool]
"""``covers(broker, category, level, since)``: whether that broker's log of that category
(``server`` / ``state-change``) at that level or more verbose covers the time since ``since``."""


@dataclass(frozen=True, slots=True)
class JudgeOptions:
    """What the judge assumes of the cluster: the ``kafka`` model's parameters it uses
    (``unclean_election``, ``truncation``, ``crashes``) and the mode of the logs
    (``zookeeper``, ``kraft``, or ``unknown``)."""

    unclean_election: bool = False
    truncation: str = "kip279"
    crashes: str = "clean"
    mode: str = "unknown"
    family: str = "0.10"
    controller_debug: frozenset[str] = frozenset()
    """The sources whose KRaft controller lines are at DEBUG (every partition change logged)."""


@dataclass(slots=True)
class Broker:
    """What is known of one broker's replica (``None``: nothing yet)."""

    epoch: int | None = None
    epoch_line: str = ""
    leads: bool = False
    leo: int | None = None
    leo_time: str = ""
    leo_line: str = ""
    hw: int | None = None
    hw_epoch: int | None = None
    hw_line: str = ""
    hw_time: str = ""
    entries: list[tuple[int, int]] = field(default_factory=list)
    restarted: bool = False
    leads_time: str = ""
    leads_line: str = ""
    version: int | None = None
    version_line: str = ""


@dataclass(slots=True)
class Isr:
    """The ISR as far as it is known: every member of ``must`` is in it and every member is
    in ``may`` (``None``: anyone), learnt at ``time`` for leader ``leader`` of ``epoch``."""

    must: frozenset[int] = frozenset()
    may: frozenset[int] | None = None
    time: str = ""
    leader: int | None = None
    epoch: int | None = None
    line: str = ""
    removed: frozenset[int] = frozenset()
    restarted: bool = False


@dataclass(slots=True)
class ControllerView:
    """One KRaft controller's view of the partition, from the records it replayed and
    logged (``None``: not known)."""

    leader: int | None = None
    leader_epoch: int | None = None
    partition_epoch: int | None = None
    isr: tuple[int, ...] | None = None
    elr: tuple[int, ...] | None = None
    replicas: tuple[int, ...] | None = None
    source: str = ""
    line: str = ""


@dataclass(slots=True)
class Registrations:
    """One KRaft controller's view of the brokers' registrations: the fenced ones, those in
    controlled shutdown, each broker's epoch (with the line that said so)."""

    fenced: dict[int, str] = field(default_factory=dict)
    shutdown: dict[int, str] = field(default_factory=dict)
    epochs: dict[int, tuple[int, str]] = field(default_factory=dict)

    def inactive(self, b: int) -> str | None:
        """Why broker ``b`` is no acceptable leader or ISR member (``None``: it may be)."""
        if b in self.fenced:
            return f"fenced since {self.fenced[b]}"
        if b in self.shutdown:
            return f"in controlled shutdown since {self.shutdown[b]}"
        return None


_PE_STATES = 4096
"""Partition epochs whose state the judge remembers (memory flat in the log's length)."""


@dataclass(frozen=True, slots=True)
class Rejection:
    """A line that breaks a rule: the rule and the values that break it."""

    line: int
    where: str
    text: str
    rule: Rule
    detail: str


class Rejected(Exception):
    """Raised inside the judge when a line breaks a rule (caught by ``PartitionJudge.feed``)."""

    def __init__(self, rule: str, detail: str) -> None:
        super().__init__(detail)
        self.rule = RULES[rule]
        self.detail = detail


_FETCHER = re.compile(r"\[ReplicaFetcher replicaId=(\d+), leaderId=(\d+)")


def _ids(values: frozenset[int] | set[int] | tuple[int, ...]) -> str:
    return ",".join(str(x) for x in sorted(values))


T = TypeVar("T")


def _of_writer(table: dict[int, T], e: Any, empty: Callable[[], T]) -> T:
    """``table``'s entry for the controller that wrote ``e`` (``empty()`` put there first
    when it has none: a controller's view is as the judge finds it)."""
    c = e.fields.get("controller", -1)
    known = table.get(c)
    if known is None:
        known = table[c] = empty()
    return known


class PartitionJudge:
    """Judges one partition's events (``isrlab.spec.kafka_log.LogEvent``) in log order."""

    def __init__(self, partition: str, options: JudgeOptions, covers: Covers) -> None:
        self.partition = partition
        self.options = options
        self.covers = covers
        self.brokers: dict[int, Broker] = {}
        self.leaders: dict[int, tuple[int, str]] = {}
        self.replicas: frozenset[int] | None = None
        self.replicas_ever: frozenset[int] = frozenset()
        """Every replica of every assignment the log names (a reassignment moves replicas)."""
        self.replicas_line = ""
        self.named: set[int] = set()
        self.isr = Isr()
        self.latest_epoch: int | None = None
        self.committed = (0, -1, "")  # the highest HW seen: value, epoch, line
        self.pending: dict[int, tuple[tuple[int, ...], tuple[int, ...], str]] = {}
        self.pending_cid: dict[tuple[int, int], int] = {}
        self.observations = 0
        self.rejection: Rejection | None = None
        self.breach: Rejection | None = None
        """The first line breaking an invariant (``Rule.invariant``, or ``NoFatalExit``'s
        FATAL exit): judging goes on after it (a later line may still break a step)."""
        self.breaches = 0
        """How many lines broke an invariant (the first is ``breach``)."""
        self.uncovered: tuple[int, str, str] | None = None
        self.notes: list[str] = []
        self.notes_topic_only = False
        self.time = ""
        self.views: dict[int, ControllerView] = {}
        self.registrations: dict[int, Registrations] = {}
        self.pe_states: dict[int, tuple[int, int, tuple[int, ...] | None, str]] = {}
        self.writers: dict[tuple[str, int], int] = {}
        """The controller whose line first gave a fact (``("pe", P)``: partition epoch P's
        state, ``("leader", E)``: leader epoch E's leader, ``("isr", 0)``: the ISR known),
        so that a controller renouncing leadership takes back what it had not committed."""
        self.own_epochs: dict[int, tuple[int, str]] = {}
        self.unclean_elected = False
        """An ``UNCLEAN partition change`` line was read: committed records may be lost since."""

    @property
    def unclean(self) -> bool:
        """Whether unclean elections are allowed (``-p unclean_election=true``) or happened (a
        controller logged one): the truncation rules that need clean elections are off."""
        return self.options.unclean_election or self.unclean_elected

    # ------------------------------------------------------------------ entry points
    def feed(self, e: Any) -> bool:
        """Judge one event; ``False`` once judging has stopped (a rejection, or a line the
        oracle cannot read after which nothing can be judged)."""
        if self.rejection is not None or self.uncovered is not None:
            return False
        handler = getattr(self, f"_{e.kind}", None)
        if handler is None:
            return True
        self.time = e.time
        self._name(e)
        self._settle(e)
        try:
            if handler(e) is not False:
                self.observations += 1
        except Rejected as broken:
            self.observations += 1
            self.rejection = Rejection(e.line, _where(e), e.text.strip(), broken.rule,
                                       broken.detail)
            return False
        return True

    def breaks(self, e: Any, rule: str, detail: str) -> None:
        """A line breaking ``rule``, a safety property a real cluster breaks through a bug of
        Kafka's code (``Rule.invariant``): the first is the verdict, judging goes on."""
        if self.breach is not None and self.breach.detail == detail:
            return  # the same truncation told twice (the fetcher's line, then the log's)
        self.breaches += 1
        if self.breach is None:
            self.breach = Rejection(e.line, _where(e), e.text.strip(), RULES[rule], detail)
        elif self.breaches == 2:
            self.notes.append(f"line {_where(e)} breaks {rule} too")

    @property
    def invariant(self) -> str | None:
        """The invariant the first breach breaks (``None``: none broken)."""
        if self.breach is None:
            return None
        return self.breach.rule.invariant or "NoFatalExit"

    def not_covered(self, e: Any, why: str) -> None:
        """A line of this partition that carries evidence the oracle does not read: nothing
        after it can be judged (unless a rule was already broken)."""
        if self.rejection is None and self.uncovered is None:
            self.uncovered = (e.line, _where(e), f"{why}: {e.text.strip()}")

    # ------------------------------------------------------------------ helpers
    def broker(self, b: int) -> Broker:
        """The knowledge of broker ``b`` (created empty: as found)."""
        known = self.brokers.get(b)
        if known is None:
            known = self.brokers[b] = Broker()
        return known

    def _name(self, e: Any) -> None:
        """Every broker id a line names (the cluster's size when no replicas are given)."""
        if e.broker >= 0 and e.kind not in ("started",):
            self.named.add(e.broker)
        f = e.fields
        for key in ("replicas", "isr", "old", "new"):
            self.named.update(f.get(key, ()))
        for b, _ in (*f.get("out_of_sync", ()), *f.get("leos", ())):
            self.named.add(b)
        fetcher = _FETCHER.search(e.text)
        if fetcher:
            self.named.update(int(x) for x in fetcher.groups())
        if f.get("leader", -1) >= 0:
            self.named.add(f["leader"])
        for key, value in (*f.get("diff", {}).items(), *f.get("record", {}).items()):
            if key in ("leader", "isr", "replicas", "elr"):
                for each in value if isinstance(value, tuple) else (value,):
                    self._name_id(each)

    def _name_id(self, value: Any) -> None:
        """Every broker id of a controller line's values (a pair before -> after, a list,
        an int; -1 and -2 are no leader / no change)."""
        if isinstance(value, tuple):
            for each in value:
                self._name_id(each)
        elif isinstance(value, int) and value >= 0:
            self.named.add(value)

    def _transitions_logged(self, b: int, since: str) -> bool:
        """Whether broker ``b``'s leader/follower transitions since ``since`` would show."""
        family = self.options.family
        return (self.covers(b, "state-change", "TRACE", since)
                or (family == "2.7+" and self.covers(b, "state-change", "INFO", since))
                or (family == "0.11+" and self.covers(b, "server", "INFO", since)))

    def _loss_of_leadership_logged(self, b: int, since: str) -> bool:
        """Whether broker ``b`` becoming a follower since ``since`` would show (2.7+:
        ``Follower ... starts at`` at INFO; any version: LeaderAndIsr received at TRACE;
        0.11-2.6 write only a new leader's line at INFO)."""
        return (self.covers(b, "state-change", "TRACE", since)
                or (self.options.family == "2.7+"
                    and self.covers(b, "state-change", "INFO", since)))

    def current_isr(self, asker: int | None = None) -> Isr:
        """The ISR knowledge aged to now: changes that could have gone unseen since it was
        learnt widen it (the leader's own, when its server log does not cover the time; the
        controller's, when the mode lets it change an ISR without a logged transition).
        Asked by broker ``asker`` about its own ISR, knowledge of another leader's is none
        (its leadership began unseen)."""
        isr = self.isr
        leader = isr.leader
        if leader is None or (asker is not None and (asker != leader or isr.restarted)):
            return Isr(may=None)
        keep = frozenset({leader})
        if not self.covers(leader, "server", "INFO", isr.time):
            isr = Isr(isr.must & keep, None, isr.time, leader, isr.epoch, isr.line, isr.removed)
        controller_silent = (self.options.mode != "zookeeper"
                             or not self._transitions_logged(leader, isr.time))
        if controller_silent:
            isr = Isr(isr.must & keep, isr.may, isr.time, leader, isr.epoch, isr.line,
                      isr.removed)
        return isr

    def set_isr(self, e: Any, leader: int, epoch: int | None, must: Ids, may: Ids | None,
                removed: frozenset[int] = frozenset()) -> None:
        """New ISR knowledge from line ``e`` (members outside the replicas are rejected)."""
        members = frozenset(may) if may is not None else frozenset(must)
        if self.replicas is not None and not members <= self.replicas:
            outside = members - self.replicas
            raise Rejected("isr-subset-replicas",
                           f"ISR {_ids(members)} holds broker(s) {_ids(outside)}, not among "
                           f"the replicas {_ids(self.replicas)} ({self.replicas_line})")
        self.isr = Isr(frozenset(must), None if may is None else frozenset(may), e.time,
                       leader, epoch, _where(e), removed)
        self._wrote(e, "isr", 0)

    def set_replicas(self, e: Any, replicas: tuple[int, ...]) -> None:
        """The assigned replicas a line names (the ISR known must lie within them)."""
        if not replicas:
            return
        self.replicas = frozenset(replicas)
        self.replicas_ever |= self.replicas
        self.replicas_line = _where(e)
        isr = self.isr
        members = isr.may if isr.may is not None else isr.must
        if not members <= self.replicas:
            raise Rejected("isr-subset-replicas",
                           f"the ISR {_ids(members)} ({isr.line}) holds broker(s) "
                           f"{_ids(members - self.replicas)}, not among the replicas "
                           f"{_ids(self.replicas)}")

    def check_from(self, e: Any, old: tuple[int, ...]) -> None:
        """``isr-change-from-current``: the ISR a change starts from is the leader's current one."""
        isr = self.current_isr(e.broker)
        start = frozenset(old)
        if not isr.must <= start:
            raise Rejected("isr-change-from-current",
                           f"the change starts from ISR {_ids(start)}, but "
                           f"{_ids(isr.must - start)} is in the ISR since {isr.line} and "
                           f"no logged change removed it")
        if isr.may is not None and not start <= isr.may:
            raise Rejected("isr-change-from-current",
                           f"the change starts from ISR {_ids(start)}, but "
                           f"{_ids(start - isr.may)} is not in the ISR since {isr.line} "
                           f"({_ids(isr.may)}) and no logged change added it")

    def leader_of(self, e: Any, epoch: int, leader: int, how: str) -> None:
        """``one-leader-per-epoch``: record ``leader`` as epoch ``epoch``'s."""
        if epoch < 0 or leader < 0:
            return
        known = self.leaders.get(epoch)
        if known is not None and known[0] != leader:
            raise Rejected("one-leader-per-epoch",
                           f"{how} names broker {leader} leader of epoch {epoch}, but "
                           f"{known[1]} names broker {known[0]}")
        if known is None:
            self.leaders[epoch] = (leader, _where(e))
            self._wrote(e, "leader", epoch)

    def set_leo(self, e: Any, b: int, leo: int, *, truncation: bool = False) -> None:
        """Broker ``b``'s LEO is ``leo`` (``log-shrinks-by-truncation`` unless the line is a
        truncation, a restart intervened with unclean crashes, or its log did not cover)."""
        known = self.broker(b)
        if (not truncation and known.leo is not None and leo < known.leo
                and self.options.crashes != "unclean"
                and self.covers(b, "server", "INFO", known.leo_time)):
            raise Rejected("log-shrinks-by-truncation",
                           f"broker {b}'s log end offset is {leo}, below {known.leo} "
                           f"({known.leo_line}), and its log shows no truncation")
        known.leo, known.leo_time, known.leo_line = leo, e.time, _where(e)

    def raise_leo(self, e: Any, b: int, at_least: int) -> None:
        """Broker ``b``'s LEO is at least ``at_least`` (a fetch offset, an HW)."""
        known = self.broker(b)
        if known.leo is None or known.leo < at_least:
            known.leo, known.leo_time, known.leo_line = at_least, e.time, _where(e)

    def set_hw(self, e: Any, b: int, hw: int, *, leader: bool) -> None:
        """Broker ``b``'s HW is ``hw``: ``hw-monotonic`` for a leader in one epoch."""
        known = self.broker(b)
        same_leadership = known.leads and known.hw_epoch == known.epoch and (
            known.epoch is not None or self._transitions_logged(b, known.hw_time))
        if leader and known.hw is not None and same_leadership and hw < known.hw:
            raise Rejected("hw-monotonic",
                           f"leader {b}'s high watermark is {hw:,}, below {known.hw:,} "
                           f"({known.hw_line}) while it leads the same leader epoch")
        known.hw, known.hw_epoch, known.hw_line = hw, known.epoch, _where(e)
        known.hw_time = e.time
        if hw > self.committed[0]:
            self.committed = (hw, known.epoch if known.epoch is not None else -1, _where(e))
        self.raise_leo(e, b, hw)

    def lead(self, e: Any, b: int, leads: bool = True) -> None:
        """Broker ``b`` leads (or follows) as of line ``e``."""
        known = self.broker(b)
        known.leads = leads
        if leads:
            known.leads_time, known.leads_line = e.time, _where(e)

    # ------------------------------------------------------------------ transitions
    def new_epoch(self, e: Any, b: int, epoch: int, prev: int | None) -> None:
        """Broker ``b`` applies leader epoch ``epoch`` (``epoch-monotonic``)."""
        known = self.broker(b)
        if known.epoch is not None and epoch < known.epoch:
            raise Rejected("epoch-monotonic",
                           f"broker {b} applies leader epoch {epoch} after epoch {known.epoch} "
                           f"({known.epoch_line}): the controller never issues a lower one")
        if prev is not None and prev >= 0 and known.epoch is not None and prev < known.epoch \
                and not known.restarted:
            raise Rejected("epoch-monotonic",
                           f"broker {b} says its previous leader epoch was {prev}, but it "
                           f"applied epoch {known.epoch} at line {known.epoch_line}")
        known.epoch, known.epoch_line, known.restarted = epoch, _where(e), False

    @staticmethod
    def check_previous(b: int, epoch: int, prev: int | None, *, strictly: bool) -> None:
        """A transition's epoch against the previous one it names: never lower
        (``epoch-monotonic``), and higher for a leader (``new-epoch-higher``)."""
        if prev is None:
            return
        if epoch < prev:
            raise Rejected("epoch-monotonic",
                           f"broker {b} goes from leader epoch {prev} down to {epoch}")
        if strictly and epoch == prev:
            raise Rejected("new-epoch-higher",
                           f"broker {b} starts leader epoch {epoch} while it holds epoch {prev}")

    def election(self, e: Any, leader: int, epoch: int, start: int | None) -> None:
        """A leader of a new epoch: ``leader-from-isr`` and ``elected-has-committed``."""
        if self.latest_epoch is not None and epoch <= self.latest_epoch:
            return
        isr = self.current_isr()
        if isr.epoch is None or epoch != isr.epoch + 1:
            isr = Isr(may=None)  # epochs between unseen: their leaders may have changed it
        eligible = isr.may
        if eligible is not None and self.options.mode != "zookeeper":
            eligible = eligible | isr.removed  # KRaft 4.x: the ELR
        clean = eligible is None or leader in eligible
        if not clean:
            if not self.unclean:
                raise Rejected("leader-from-isr",
                               f"broker {leader} leads epoch {epoch}, but the ISR is "
                               f"{_ids(eligible or frozenset())} since {isr.line} and no "
                               f"logged change added it")
            self.notes.append(f"line {_where(e)}: an unclean election (broker {leader} was not "
                              f"in the ISR): allowed by unclean.leader.election.enable=true; "
                              f"committed records may be lost")
        hw, hw_epoch, hw_line = self.committed
        if (clean and start is not None and start < hw and hw_epoch < epoch
                and self.options.truncation == "kip279" and self.options.crashes != "unclean"
                and not self.unclean):
            lost, verb, _ = _span(start, hw)
            self.breaks(e, "elected-has-committed",
                        f"broker {leader}, elected cleanly, starts leader epoch {epoch} from "
                        f"offset {start:,}, below the high watermark {hw:,} of epoch {hw_epoch} "
                        f"({hw_line}): {lost} {verb} not in the new leader's log, so lost "
                        f"to every consumer of epoch {epoch}{_UNLOGGED_UNCLEAN}")
        self.latest_epoch = epoch

    def storage_lost(self, e: Any, b: int, epoch: int, start: int, prev: int | None) -> bool:
        """Whether broker ``b`` came back from a restart (``Previous leader epoch was -1``:
        a new ``Partition`` object) with a log shorter than it had and no truncation: the
        data on its disk was lost (a wiped log directory, a power failure without fsync),
        which the model has only with ``crashes=unclean``; the partition is not covered
        from this line on (``set_leo`` lets the LEO fall with ``crashes=unclean``).  Only
        for an epoch not below every one seen: a lower one is for the epoch rules."""
        known = self.brokers.get(b)
        if (prev != -1 or known is None or known.leo is None or start >= known.leo
                or self.options.crashes == "unclean"
                or (self.latest_epoch is not None and epoch < self.latest_epoch)):
            return False  # an epoch that does not move on is the epoch rules' business
        self.not_covered(e, f"broker {b} restarted with log end offset {start:,}, below the "
                            f"{known.leo:,} it had ({known.leo_line}) and with no truncation: "
                            "its disk lost data (a wiped log directory, a power failure "
                            "without fsync), which the oracle judges only with "
                            "-p crashes=unclean")
        return True

    def _starts_judged(self, e: Any) -> bool:
        """What a ``Leader`` or ``Follower ... starts at leader epoch`` line is checked for
        first: ``False`` when the broker lost its storage (``storage_lost``: the partition
        is not covered from this line on), else the previous epoch's leader the line names
        (``Previous leader``) checked against the one known."""
        f = e.fields
        prev = f.get("prev")
        if self.storage_lost(e, e.broker, f["epoch"], f["offset"], prev):
            return False
        if "prevleader" in f and prev is not None:
            self.leader_of(e, prev, f["prevleader"], "'Previous leader'")
        return True

    @staticmethod
    def _hw_within_start(e: Any) -> None:
        """``hw-le-leo`` on a start line: the high watermark it gives is not above the log
        end offset the broker starts from."""
        f = e.fields
        if "hw" in f and f["hw"] > f["offset"]:
            raise Rejected("hw-le-leo", f"broker {e.broker}'s high watermark {f['hw']} is "
                                        f"above its log end offset {f['offset']}")

    def _leader_start(self, e: Any) -> Any:
        """``Leader ... starts at leader epoch E from offset O [with high watermark H ISR
        [...]]. Previous leader epoch was P`` (``Partition.makeLeader``)."""
        f, b = e.fields, e.broker
        epoch, start, prev = f["epoch"], f["offset"], f.get("prev")
        if not self._starts_judged(e):
            return False
        self.leader_of(e, epoch, b, "the line")
        self.broker_pe_state(e, f.get("version"), epoch, b, f.get("isr") or None,
                             f"broker {b}'s transition")
        self.check_previous(b, epoch, prev, strictly=True)
        self._hw_within_start(e)
        self.check_version(e, b)
        self.election(e, b, epoch, start)
        self.new_epoch(e, b, epoch, prev)
        self.set_leo(e, b, start)
        known = self.broker(b)
        self.lead(e, b)
        known.entries.append((epoch, start))
        if "hw" in f:
            self.set_hw(e, b, f["hw"], leader=True)
        if f.get("isr"):
            self.set_isr(e, b, epoch, f["isr"], f["isr"])
        else:
            self.isr = Isr(frozenset({b}), None, e.time, b, epoch, _where(e))

    def _follower_start(self, e: Any) -> Any:
        """``Follower ... starts at leader epoch E from offset O with high watermark H.
        [Current leader is L.] Previous leader epoch was P`` (``Partition.makeFollower``)."""
        f, b = e.fields, e.broker
        epoch, start, prev = f["epoch"], f["offset"], f.get("prev")
        if not self._starts_judged(e):
            return False
        leader = f.get("leader", -1)
        self.leader_of(e, epoch, leader, "the line")
        self.broker_pe_state(e, f.get("version"), epoch, leader, None,
                             f"broker {b}'s transition")
        self.check_previous(b, epoch, prev, strictly=False)
        self._hw_within_start(e)
        self.check_version(e, b)
        if leader >= 0 and leader != b:
            self.election(e, leader, epoch, None)
            if self.isr.epoch != epoch:
                self.isr = Isr(frozenset({leader}), None, e.time, leader, epoch, _where(e))
        self.new_epoch(e, b, epoch, prev)
        self.set_leo(e, b, start)
        self.lead(e, b, False)
        if "hw" in f:
            self.set_hw(e, b, f["hw"], leader=False)

    def _leader_and_isr(self, e: Any) -> None:
        """A LeaderAndIsr request received (TRACE): the controller's leader, epoch, ISR and
        replicas (the broker applies it when it completes it)."""
        f = e.fields
        epoch, leader = f.get("leaderEpoch", -1), f.get("leader", -1)
        self.set_replicas(e, f.get("replicas", ()))
        self.leader_of(e, epoch, leader, "the LeaderAndIsr request")
        if leader >= 0:
            self.election(e, leader, epoch, None)
        if f.get("isr") and (self.isr.epoch is None or epoch >= self.isr.epoch):
            self.set_isr(e, leader, epoch, f["isr"], f["isr"])
        self.pending_cid[(e.broker, f.get("cid", -1))] = epoch

    def _completed(self, e: Any) -> bool | None:
        """The broker completed a LeaderAndIsr request: it now holds that epoch."""
        epoch = self.pending_cid.pop((e.broker, e.fields.get("cid", -1)), None)
        if epoch is None or e.broker < 0:
            return False  # no evidence: not counted
        self.new_epoch(e, e.broker, epoch, None)
        self.lead(e, e.broker, e.fields.get("role") == "leader")
        return None

    def _ignoring(self, e: Any) -> bool | None:
        """A stale request ignored: nothing changes."""
        return False

    def _registration(self, e: Any) -> None:
        """A KRaft controller's partition record: replicas, ISR, leader, epoch."""
        f = e.fields
        self.set_replicas(e, f.get("replicas", ()))
        epoch, leader = f.get("leaderEpoch", f.get("epoch", -1)), f.get("leader", -1)
        self.leader_of(e, epoch, leader, "the partition record")
        self.broker_pe_state(e, f.get("partitionEpoch"), epoch, leader, f.get("isr") or None,
                             "the partition state")
        if leader >= 0 and epoch >= 0:
            self.election(e, leader, epoch, None)
        if f.get("isr") and leader >= 0:
            self.set_isr(e, leader, epoch if epoch >= 0 else self.isr.epoch, f["isr"], f["isr"])

    # ------------------------------------------------------------------ KRaft controller lines
    def view(self, e: Any) -> ControllerView:
        """The view of the controller that wrote ``e`` (created empty: as found)."""
        return _of_writer(self.views, e, ControllerView)

    def registrations_of(self, e: Any) -> Registrations:
        """The registrations as the controller that wrote ``e`` knows them."""
        return _of_writer(self.registrations, e, Registrations)

    def check_active(self, e: Any, leader: int | None, added: Ids, how: str) -> None:
        """``elected-is-active`` for a new leader, ``fenced-not-added-to-isr`` for ISR members
        added, by the writing controller's view of the registrations."""
        regs = self.registrations_of(e)
        if leader is not None and leader >= 0:
            why = regs.inactive(leader)
            if why is not None:
                raise Rejected("elected-is-active",
                               f"{how} makes broker {leader} leader, but it is {why}")
        for b in sorted(added):
            why = regs.inactive(b)
            if why is not None:
                raise Rejected("fenced-not-added-to-isr",
                               f"{how} adds broker {b} to the ISR, but it is {why}")

    def check_pe_state(self, e: Any, pe: int | None, epoch: int | None, leader: int | None,
                       isr: tuple[int, ...] | None, how: str) -> None:
        """``one-state-per-partition-epoch``: the state a line gives partition epoch ``pe``
        is the one the controller's lines gave it (only KRaft controller lines record one)."""
        if pe is None or pe < 0:
            return
        known = self.pe_states.get(pe)
        if known is None:
            return
        k_epoch, k_leader, k_isr, k_line = known
        clash = []
        if epoch is not None and epoch >= 0 and epoch != k_epoch:
            clash.append(f"leader epoch {epoch}, not {k_epoch}")
        if leader is not None and leader >= 0 and k_leader >= 0 and leader != k_leader:
            clash.append(f"leader {leader}, not {k_leader}")
        if isr is not None and k_isr is not None and frozenset(isr) != frozenset(k_isr):
            clash.append(f"ISR {_ids(frozenset(isr))}, not {_ids(frozenset(k_isr))}")
        if clash:
            raise Rejected("one-state-per-partition-epoch",
                           f"{how} gives partition epoch {pe} {'; '.join(clash)} ({k_line})")

    def record_pe_state(self, e: Any, view: ControllerView) -> None:
        """The controller's state at its partition epoch (checked against any earlier one)."""
        pe, epoch, leader = view.partition_epoch, view.leader_epoch, view.leader
        if pe is None or epoch is None or leader is None:
            return
        self.note_pe_state(e, pe, epoch, leader, view.isr, "the controller's record")

    def note_pe_state(self, e: Any, pe: int | None, epoch: int | None, leader: int | None,
                      isr: tuple[int, ...] | None, how: str) -> None:
        """``one-state-per-partition-epoch`` for a line's state at partition epoch ``pe``,
        then remembered (with an ISR it lacked) for the lines after it, whichever comes
        first: a controller's record or a broker's transition (KRaft brokers' lines only:
        the metadata log's partition epoch)."""
        if pe is None or pe < 0 or epoch is None or epoch < 0:
            return
        self.check_pe_state(e, pe, epoch, leader, isr, how)
        known = self.pe_states.get(pe)
        if known is None:
            if len(self.pe_states) >= _PE_STATES:
                oldest = min(self.pe_states)
                del self.pe_states[oldest]
                self.writers.pop(("pe", oldest), None)
            self.pe_states[pe] = (epoch, leader if leader is not None else -1, isr, _where(e))
            self._wrote(e, "pe", pe)
        elif known[2] is None and isr is not None:
            self.pe_states[pe] = (known[0], known[1], isr, known[3])

    def broker_pe_state(self, e: Any, pe: Any, epoch: int, leader: int | None,
                        isr: tuple[int, ...] | None, how: str) -> None:
        """A broker's transition at a partition epoch: checked against the states known, and
        remembered in KRaft mode (in ZooKeeper mode the figure is the znode's version, which
        no controller line of the oracle's gives)."""
        if self.options.mode == "kraft" and isinstance(pe, int):
            self.note_pe_state(e, pe, epoch, leader, isr, how)
        else:
            self.check_pe_state(e, pe, epoch, leader, isr, how)

    def controller_isr(self, e: Any, leader: int | None, epoch: int | None,
                       isr: tuple[int, ...] | None) -> None:
        """The ISR a controller's record gives becomes the partition's ISR knowledge (unless
        brokers' lines already know a later leader epoch)."""
        if isr is None or leader is None or leader < 0:
            return
        if self.isr.epoch is not None and epoch is not None and epoch < self.isr.epoch:
            return
        self.set_isr(e, leader, epoch, isr, isr)

    def _ctl_partition(self, e: Any) -> None:
        """``Replayed PartitionRecord for new|existing partition T-P ... and
        PartitionRegistration(...)`` (3.6+; ``Created partition`` 3.3-3.5): a whole state."""
        rec, c = e.fields["record"], e.fields.get("controller", -1)
        known = self.views.get(c)
        if e.fields.get("created") and known is not None and known.partition_epoch is not None:
            self.views.pop(c)  # a new partition it already knew: the controller replays from
            self.registrations.pop(c, None)  # the start (a restart), its view rebuilt
        view = self.view(e)
        replicas = rec.get("replicas")
        if isinstance(replicas, tuple):
            self.set_replicas(e, replicas)
            view.replicas = replicas
        leader, epoch, pe = rec.get("leader"), rec.get("leaderEpoch"), rec.get("partitionEpoch")
        isr, elr = rec.get("isr"), rec.get("elr")
        if e.fields.get("created") and isinstance(isr, tuple) and pe == 0:
            # a creation (a snapshot's record of an older partition may keep a fenced last
            # ISR member): the ISR is the active replicas (KIP-841), the leader one of them
            self.check_active(e, leader if isinstance(leader, int) else None, isr,
                              "the new partition's record")
        view.leader = leader if isinstance(leader, int) else None
        view.leader_epoch = epoch if isinstance(epoch, int) else None
        view.partition_epoch = pe if isinstance(pe, int) else None
        view.isr = isr if isinstance(isr, tuple) else None
        view.elr = elr if isinstance(elr, tuple) else None
        view.source, view.line = e.source, _where(e)
        if view.leader is not None and view.leader_epoch is not None:
            self.leader_of(e, view.leader_epoch, view.leader, "the controller's record")
            self.latest_epoch = max(self.latest_epoch or 0, view.leader_epoch)
        self.record_pe_state(e, view)
        self.controller_isr(e, view.leader, view.leader_epoch, view.isr)

    def _ctl_change(self, e: Any) -> None:
        """``[UNCLEAN ]partition change for T-P with topic ID X: isr: A -> B, leader: x -> y,
        leaderEpoch: e -> f, partitionEpoch: p -> q`` (``maybeLogPartitionChange``: the fields
        that changed, a PartitionChangeRecord replayed)."""
        diff, view = e.fields["diff"], self.view(e)
        self._ctl_epochs(e, diff, view)
        replicas = diff.get("replicas", (None, view.replicas))[1]
        before_replicas = diff.get("replicas", (None,))[0]
        if isinstance(before_replicas, tuple):
            self.replicas_ever |= frozenset(before_replicas)
        if isinstance(replicas, tuple):
            self.set_replicas(e, replicas)
        pe = diff.get("partitionEpoch", (None, None))[0]
        current = self.view_is_current(e, view, pe)
        before_isr = diff["isr"][0] if "isr" in diff else (view.isr if current else None)
        after_isr = diff["isr"][1] if "isr" in diff else view.isr
        before_elr = diff["elr"][0] if "elr" in diff else (view.elr if current else None)
        leader = diff["leader"][1] if "leader" in diff else view.leader
        epoch = diff["leaderEpoch"][1] if "leaderEpoch" in diff else view.leader_epoch
        if "leader" in diff and isinstance(leader, int):
            self._ctl_election(e, leader, epoch, before_isr, before_elr)
        if "isr" in diff and isinstance(after_isr, tuple):
            added = frozenset(after_isr) - frozenset(before_isr or ())
            self.check_active(e, None, added, "the partition change")
        if "isr" in diff and isinstance(after_isr, tuple) and self.replicas is not None:
            outside = frozenset(after_isr) - self.replicas
            if outside:
                raise Rejected("isr-subset-replicas",
                               f"the partition change's ISR {_ids(frozenset(after_isr))} holds "
                               f"broker(s) {_ids(outside)}, not among the replicas "
                               f"{_ids(self.replicas)} ({self.replicas_line})")
        view.leader = leader if isinstance(leader, int) else view.leader
        view.leader_epoch = epoch if isinstance(epoch, int) else view.leader_epoch
        if "partitionEpoch" in diff and isinstance(diff["partitionEpoch"][1], int):
            view.partition_epoch = diff["partitionEpoch"][1]
        view.isr = after_isr if isinstance(after_isr, tuple) else view.isr
        if "elr" in diff and isinstance(diff["elr"][1], tuple):
            view.elr = diff["elr"][1]
        view.replicas = replicas if isinstance(replicas, tuple) else view.replicas
        view.source, view.line = e.source, _where(e)
        self.record_pe_state(e, view)
        self.controller_isr(e, view.leader, view.leader_epoch, view.isr)

    def _ctl_epochs(self, e: Any, diff: dict[str, Any], view: ControllerView) -> None:
        """``partition-epoch-plus-one`` and ``leader-epoch-on-leader-change`` on a change."""
        pe = diff.get("partitionEpoch")
        if pe is not None and isinstance(pe[0], int) and isinstance(pe[1], int):
            if pe[1] != pe[0] + 1:
                raise Rejected("partition-epoch-plus-one",
                               f"the partition epoch goes from {pe[0]} to {pe[1]}")
            known = view.partition_epoch
            if known is not None and pe[0] < known:
                raise Rejected("partition-epoch-plus-one",
                               f"the change starts from partition epoch {pe[0]}, but this "
                               f"controller replayed partition epoch {known} at {view.line}")
            if (known is not None and pe[0] != known and e.source in self.options.controller_debug
                    and view.source == e.source):
                raise Rejected("partition-epoch-plus-one",
                               f"the change starts from partition epoch {pe[0]}, but this "
                               f"controller's last change ({view.line}) ends at {known}, and "
                               f"its log at DEBUG shows every change it replays")
        le = diff.get("leaderEpoch")
        if "leader" in diff and le is None:
            raise Rejected("leader-epoch-on-leader-change",
                           f"the leader changes ({diff['leader'][0]} -> {diff['leader'][1]}) "
                           f"with no new leader epoch")
        if le is not None and isinstance(le[0], int) and isinstance(le[1], int):
            if le[1] != le[0] + 1:
                raise Rejected("leader-epoch-on-leader-change",
                               f"the leader epoch goes from {le[0]} to {le[1]}")
            if view.leader_epoch is not None and le[0] < view.leader_epoch:
                raise Rejected("leader-epoch-on-leader-change",
                               f"the change starts from leader epoch {le[0]}, but this "
                               f"controller replayed leader epoch {view.leader_epoch} at "
                               f"{view.line}")

    def _ctl_election(self, e: Any, leader: int, epoch: Any, isr: Any, elr: Any) -> None:
        """A leader the controller's change elects: active, one per epoch, and from the ISR
        unless the line says UNCLEAN (or, KIP-966, from the ELR)."""
        self.check_active(e, leader, (), "the partition change")
        if isinstance(epoch, int):
            self.leader_of(e, epoch, leader, "the controller's change")
            self.latest_epoch = max(self.latest_epoch or 0, epoch)
        if leader < 0:
            return
        in_isr = isinstance(isr, tuple) and leader in isr
        in_elr = isinstance(elr, tuple) and leader in elr
        if e.fields.get("unclean"):
            if in_elr:
                self.notes.append(f"line {_where(e)}: broker {leader} elected from the ELR "
                                  f"(KIP-966); the controller logs it UNCLEAN because "
                                  f"electionWasClean looks at the ISR only")
                return
            self.unclean_elected = True
            self.notes.append(f"line {_where(e)}: the controller logs an unclean election of "
                              f"broker {leader} (unclean.leader.election.enable, or an "
                              f"UNCLEAN ElectLeaders request): committed records may be lost, "
                              f"and the truncation rules are off from here")
        elif isinstance(isr, tuple) and not in_isr and not in_elr:
            raise Rejected("leader-from-isr",
                           f"the controller's change elects broker {leader}, not in the ISR "
                           f"{_ids(frozenset(isr))}, and does not log it UNCLEAN "
                           f"(PartitionRegistration.electionWasClean)")

    def view_is_current(self, e: Any, view: ControllerView, pe_before: Any = None) -> bool:
        """Whether the controller's view is its state just before line ``e``: the line says
        it changes the partition epoch the view has, or the controller's lines are at DEBUG
        in this file (every change it replays is logged)."""
        if isinstance(pe_before, int) and view.partition_epoch == pe_before:
            return True
        return view.source == e.source and e.source in self.options.controller_debug

    def _ctl_record(self, e: Any) -> None:
        """``Replayed partition change PartitionChangeRecord(..., isr=[..], leader=L, ...)``:
        the new values only (``null`` / -2: unchanged; no epochs)."""
        rec, view = e.fields["record"], self.view(e)
        isr, leader = rec.get("isr"), rec.get("leader")
        if isinstance(leader, int) and leader >= 0 and leader != view.leader:
            self.check_active(e, leader, (), "the partition change record")
        if isinstance(isr, tuple):
            added = frozenset(isr) - frozenset(view.isr or ())
            if view.isr is not None and self.view_is_current(e, view):
                self.check_active(e, None, added, "the partition change record")
            view.isr = isr
        if isinstance(leader, int) and leader != -2:
            view.leader = leader

    def _ctl_altered(self, e: Any) -> None:
        """``Node N has altered ISR for T-P to [..]``: an AlterPartition accepted."""
        view = self.view(e)
        new = e.fields["isr"]
        if view.isr is not None and self.view_is_current(e, view):
            self.check_active(e, None, frozenset(new) - frozenset(view.isr),
                              f"broker {e.broker}'s AlterPartition")
        if self.isr.leader == e.broker:  # the leader's proposal, applied
            self.pending.pop(e.broker, None)
            self.set_isr(e, e.broker, self.isr.epoch, new, new, self.isr.removed)

    def _ctl_alter_rejected(self, e: Any) -> None:
        """``Rejecting AlterPartition request from node N for T-P because ...``: leader N's
        proposed ISR change is not applied.  For an ineligible replica (KIP-841) or the
        leader recovery state the controller's ISR is the one the leader sent it from; for a
        stale epoch (the leader's view is behind) it is the controller's, not said here."""
        b, why = e.broker, e.fields["why"]
        proposal = self.pending.pop(b, None)
        if proposal is None or "epoch is" in why or "current leader is" in why:
            return
        old = proposal[0]
        self.set_isr(e, b, self.isr.epoch, old, old, self.isr.removed)

    def _ctl_fencing(self, e: Any) -> None:
        """``Fencing broker N because its session has timed out``."""
        self.registrations_of(e).fenced[e.broker] = _where(e)

    def _ctl_broker(self, e: Any) -> None:
        """``Replayed BrokerRegistrationChangeRecord|FenceBrokerRecord|UnfenceBrokerRecord
        modifying the registration for broker N: ...(brokerEpoch=E, fenced=F,
        inControlledShutdown=S)``."""
        regs, b, f = self.registrations_of(e), e.broker, e.fields
        known = regs.epochs.get(b)
        epoch = f.get("bepoch")
        if known is not None and isinstance(epoch, int) and epoch != known[0]:
            raise Rejected("broker-epoch-increases",
                           f"the record names broker {b}'s epoch {epoch}, but its registration "
                           f"has epoch {known[0]} ({known[1]})")
        self._fence(regs, b, f.get("fenced", 0), e)
        if f.get("shutdown"):
            regs.shutdown[b] = _where(e)

    @staticmethod
    def _fence(regs: Registrations, b: int, fenced: Any, e: Any) -> None:
        """A record's fencing change (1: fence, -1: unfence, 0: none) in one view."""
        if fenced == 1:
            regs.fenced[b] = _where(e)
        elif fenced == -1:
            regs.fenced.pop(b, None)

    def _ctl_register(self, e: Any) -> None:
        """A RegisterBrokerRecord replayed: a new incarnation (epoch above the last), the
        same one re-registered (not below), or the initial one (a controller that already
        had it replays from the start)."""
        regs, b, f = self.registrations_of(e), e.broker, e.fields
        epoch, known = f["bepoch"], regs.epochs.get(b)
        if f.get("initial") and known is not None:
            c = f.get("controller", -1)
            self.registrations.pop(c, None)
            self.views.pop(c, None)
            regs, known = self.registrations_of(e), None
        if known is not None and (epoch < known[0] or (f.get("incarnation") and epoch == known[0])):
            raise Rejected("broker-epoch-increases",
                           f"broker {b} registers with broker epoch {epoch}, "
                           f"{'not above' if f.get('incarnation') else 'below'} {known[0]} "
                           f"({known[1]})")
        regs.epochs[b] = (epoch, _where(e))
        self._fence(regs, b, f.get("fenced", 1), e)
        if f.get("shutdown"):
            regs.shutdown[b] = _where(e)
        else:
            regs.shutdown.pop(b, None)

    def _ctl_fenced(self, e: Any) -> None:
        """``Fenced broker: N`` / ``Unfenced broker: N`` (3.0-3.3)."""
        self._fence(self.registrations_of(e), e.broker, e.fields["fenced"], e)

    def _unfenced_everywhere(self, b: int) -> None:
        """Broker ``b`` unfenced in every controller's view (a grant, or the broker's word)."""
        for regs in self.registrations.values():
            regs.fenced.pop(b, None)

    def _ctl_unfence_granted(self, e: Any) -> None:
        """``The request from broker N to unfence has been granted``: unfenced next."""
        self._unfenced_everywhere(e.broker)

    def _ctl_shutdown_granted(self, e: Any) -> None:
        """``Unfenced broker N has requested and been granted a controlled shutdown``."""
        self.registrations_of(e).shutdown[e.broker] = _where(e)

    def _wrote(self, e: Any, what: str, key: int) -> None:
        """Remember which controller's line gave a fact (-1: a broker's line)."""
        writer = e.fields.get("controller", -1) if e.kind.startswith("ctl_") else -1
        if writer >= 0:
            self.writers[(what, key)] = writer
        else:
            self.writers.pop((what, key), None)

    def _ctl_renounce(self, e: Any) -> bool:
        """``... Renouncing leadership and reverting to the last committed offset N``
        (``EventHandlerExceptionInfo``, 3.3-4.x): the active controller reverts its state to
        its last committed offset (``SnapshotRegistry.revertToSnapshot``), undoing records it
        had replayed but not committed, which the next active controller may write otherwise.
        So its view and registrations start again, and what only its lines said of the
        partition (a partition epoch's state, a leader epoch's leader, the ISR) is forgotten:
        the log names no offset of those records.  Not an observation."""
        c = e.fields.get("controller", -1)
        self.views.pop(c, None)
        self.registrations.pop(c, None)
        for what, key in [k for k, w in self.writers.items() if w == c]:
            del self.writers[(what, key)]
            if what == "pe":
                self.pe_states.pop(key, None)
            elif what == "leader":
                self.leaders.pop(key, None)
            else:
                self.isr = Isr()
        return False

    def _ctl_shutdown_now(self, e: Any) -> None:
        """``The request from broker N to shut down has been granted ...``, ``... broker N has
        requested and been granted an immediate shutdown`` / ``fencing``: the active
        controller fences N (SHUTDOWN_NOW and FENCED both run handleBrokerFenced) in its own
        view; the other controllers only when they replay the record, which they log."""
        self.registrations_of(e).fenced[e.broker] = _where(e)

    def _ctl_still_fenced(self, e: Any) -> None:
        """``The request from broker N to unfence cannot yet be granted ...`` (DEBUG): N is
        fenced in the active controller's view."""
        self.registrations_of(e).fenced[e.broker] = _where(e)

    def _ctl_in_shutdown(self, e: Any) -> None:
        """``The request from broker N to shut down can not yet be granted ...`` / ``Broker N
        is in controlled shutdown state, but can not shut down ...`` (DEBUG): N is in
        controlled shutdown in the active controller's view."""
        self.registrations_of(e).shutdown[e.broker] = _where(e)

    def _lifecycle_registered(self, e: Any) -> None:
        """``Successfully registered broker N with broker epoch E`` (the broker's own line)."""
        b, epoch = e.broker, e.fields["bepoch"]
        known = self.own_epochs.get(b)
        if known is not None and epoch < known[0]:
            raise Rejected("broker-epoch-increases",
                           f"broker {b} registers with broker epoch {epoch}, below {known[0]} "
                           f"({known[1]})")
        self.own_epochs[b] = (epoch, _where(e))

    def _lifecycle_unfenced(self, e: Any) -> None:
        """``The broker has been unfenced`` (the broker's own line)."""
        self._unfenced_everywhere(e.broker)

    # ------------------------------------------------------------------ ISR changes
    def _shrink(self, e: Any) -> None:
        """``Shrinking ISR from F to T[. Leader: (highWatermark: H, endOffset: L). Out of
        sync replicas: (brokerId: r, endOffset: o)...]`` (``Partition.maybeShrinkIsr``)."""
        f, b = e.fields, e.broker
        old, new = f["old"], f["new"]
        if "hw" in f and "leo" in f and f["hw"] > f["leo"]:
            raise Rejected("hw-le-leo", f"leader {b}'s high watermark {f['hw']} is above its "
                                        f"log end offset {f['leo']}")
        for r, leo in f.get("out_of_sync", ()):
            if leo is None:
                continue
            if ("hw" in f and r in old and f["hw"] > leo
                    and self.options.crashes != "unclean"):
                raise Rejected("hw-le-isr-leo",
                               f"leader {b}'s high watermark {f['hw']:,} is above the log end "
                               f"offset {leo:,} of broker {r}, a member of the ISR "
                               f"{_ids(frozenset(old))} it is removing")
            if "leo" in f and leo > f["leo"]:
                raise Rejected("fetch-le-leader-leo",
                               f"broker {r}'s log end offset {leo:,} as leader {b} records it "
                               f"is above the leader's own {f['leo']:,}")
        self._change(e, b, old, new)
        if "leo" in f:
            self.set_leo(e, b, f["leo"])
        if "hw" in f:
            self.set_hw(e, b, f["hw"], leader=True)
        for r, leo in f.get("out_of_sync", ()):
            if leo is not None:
                self.raise_leo(e, r, leo)

    def _expand(self, e: Any) -> None:
        """``Expanding ISR from F to T`` (``Partition.maybeExpandIsr``)."""
        self._change(e, e.broker, e.fields["old"], e.fields["new"])

    def _change(self, e: Any, b: int, old: tuple[int, ...], new: tuple[int, ...]) -> None:
        """A proposed ISR change of leader ``b``: until confirmed, the ISR is either."""
        self.check_from(e, old)
        if self.replicas is not None and not frozenset(new) <= self.replicas:
            outside = frozenset(new) - self.replicas
            raise Rejected("isr-subset-replicas",
                           f"leader {b} adds broker(s) {_ids(outside)} to the ISR, not among "
                           f"the replicas {_ids(self.replicas)} ({self.replicas_line})")
        known = self.broker(b)
        self.lead(e, b)
        epoch = self.isr.epoch if self.isr.leader == b else known.epoch
        removed = self.isr.removed | (frozenset(old) - frozenset(new))
        self.set_isr(e, b, epoch, frozenset(old) & frozenset(new),
                     frozenset(old) | frozenset(new), removed)
        self.pending[b] = (old, new, _where(e))

    def _isr_updated(self, e: Any) -> None:
        """``ISR updated to I and zkVersion/version updated to V``: the change is applied."""
        b = e.broker
        self.check_version(e, b)
        self.pending.pop(b, None)
        known = self.broker(b)
        epoch = self.isr.epoch if self.isr.leader == b else known.epoch
        self.set_isr(e, b, epoch, e.fields["isr"], e.fields["isr"], self.isr.removed)

    def _settle(self, e: Any) -> None:
        """A ZooKeeper ISR write (0.10-2.6) succeeds or fails at once: a pending change is
        applied when its broker's next line is neither its refusal nor its error."""
        if e.kind not in ("zk_refused", "isr_write_failed", "isr_updated"):
            self.settle(e.broker)

    def settle(self, b: int) -> None:
        """Broker ``b`` wrote another line after its ISR write (ZooKeeper mode before 2.7,
        where the write is synchronous): its pending change was applied."""
        if (b not in self.pending or self.options.mode != "zookeeper"
                or self.options.family == "2.7+"):
            return
        _, new, _ = self.pending.pop(b)
        e_broker = b
        if self.isr.leader == e_broker:
            self.isr = Isr(frozenset(new), frozenset(new), self.isr.time, e_broker,
                           self.isr.epoch, self.isr.line, self.isr.removed)

    def _isr_write_failed(self, e: Any) -> bool | None:
        """An ERROR of the ISR's ZooKeeper write (``Partition.updateIsr`` threw): the
        proposed change of that broker is not applied."""
        if e.broker not in self.pending:
            return False
        self._zk_refused(e)
        return None

    def _zk_refused(self, e: Any) -> None:
        """``Cached zkVersion [V] not equal to that in zookeeper, skip updating ISR``
        (``Partition.updateIsr``, 0.10-2.6): the proposed change is not applied."""
        b = e.broker
        proposal = self.pending.pop(b, None)
        if proposal is None:
            return
        old = proposal[0]
        self.set_isr(e, b, self.isr.epoch, old, old, self.isr.removed)

    def check_version(self, e: Any, b: int) -> None:
        """``partition-epoch-monotonic``: the version a broker logs never decreases."""
        version = e.fields.get("version")
        if version is None or b < 0:
            return
        known = self.broker(b)
        if known.version is not None and version < known.version and not known.restarted:
            raise Rejected("partition-epoch-monotonic",
                           f"broker {b} logs partition epoch (ZooKeeper version) {version} "
                           f"after {known.version} ({known.version_line})")
        known.version, known.version_line = version, _where(e)

    # ------------------------------------------------------------------ offsets
    def _hw(self, e: Any) -> None:
        """``High watermark updated [from X] to H`` (leader, ``maybeIncrementLeaderHW``)."""
        f = e.fields
        self.lead(e, e.broker)
        if "hwfrom" in f and f["hw"] < f["hwfrom"]:
            raise Rejected("hw-monotonic", f"leader {e.broker}'s high watermark goes from "
                                           f"{f['hwfrom']:,} down to {f['hw']:,}")
        if "hwfrom" in f:
            self.set_hw(e, e.broker, f["hwfrom"], leader=True)
        self.set_hw(e, e.broker, f["hw"], leader=True)

    def _leos(self, e: Any) -> None:
        """Followers' log end offsets as the leader records them (TRACE/DEBUG lines of
        ``maybeIncrementLeaderHW``, ``checkEnoughReplicasReachOffset``,
        ``updateFollowerFetchState``): each is a lower bound of that replica's LEO."""
        for r, leo in e.fields.get("leos", ()):
            self.raise_leo(e, r, leo)

    def _log_loaded(self, e: Any) -> None:
        """``Log loaded ... with initial high watermark H``: the checkpointed HW."""
        self.set_hw(e, e.broker, e.fields["hw"], leader=False)

    def _no_checkpoint(self, e: Any) -> None:
        """No HW checkpoint: the HW starts at 0."""
        self.broker(e.broker).hw = 0

    def _truncate(self, e: Any) -> None:
        """A truncation to offset ``k`` (``Log.truncateTo`` or the fetcher's line)."""
        b, k = e.broker, e.fields["offset"]
        known = self.broker(b)
        if known.leads and self._loss_of_leadership_logged(b, known.leads_time):
            raise Rejected("leader-no-truncate",
                           f"broker {b} truncates its log to {k} while it leads ("
                           f"{known.leads_line}; no logged transition since)")
        self._below_own_hw(e, b, k)
        self._isr_member_truncation(e, b, k)
        fetcher = "ReplicaFetcher" in e.text and "below high watermark" not in e.text
        if not fetcher or (known.leo is not None and known.leo > k):
            self.set_leo(e, b, k, truncation=True)  # the fetcher's target: the LEO is at most k

    def _below_own_hw(self, e: Any, b: int, k: int) -> None:
        """``leader-no-truncate-below-hw``: no truncation below the HW the replica held
        (unless an unclean election or a power loss could have lost committed records)."""
        known = self.broker(b)
        if (self.unclean or self.options.crashes == "unclean"
                or known.hw is None or k >= known.hw):
            return
        role = "leading" if known.leads else "holding"
        leader = self.leaders.get(known.epoch) if known.epoch is not None else None
        whose = (f"its leader's (broker {leader[0]}, leader epoch {known.epoch})" if leader
                 else "its leader's")
        lost, verb, pronoun = _span(k, known.hw)
        self.breaks(e, "leader-no-truncate-below-hw",
                    f"broker {b} truncates its log to {k:,}, below the high watermark "
                    f"{known.hw:,} it was {role} ({known.hw_line}): {lost} {verb} gone from "
                    f"broker {b}, and, as a replica truncates only where its log differs from "
                    f"{whose}, {pronoun} {verb} not in that leader's log either"
                    f"{_UNLOGGED_UNCLEAN}")

    def _isr_member_truncation(self, e: Any, b: int, k: int) -> None:
        """``isr-member-no-truncate-below-hw`` (KIP-279 with KAFKA-7415, 2.1+)."""
        if (self.options.truncation != "kip279" or self.options.crashes == "unclean"
                or self.unclean):
            return
        isr = self.current_isr()
        leader = isr.leader
        if leader is None or leader == b or b not in isr.must:
            return
        lead = self.broker(leader)
        mine = self.broker(b)
        if (isr.epoch is None or lead.hw is None or lead.hw_epoch != isr.epoch
                or mine.epoch != isr.epoch):
            return
        if k < lead.hw:
            self.breaks(e, "isr-member-no-truncate-below-hw",
                        f"broker {b}, in leader {leader}'s ISR {_ids(isr.must)} since line "
                        f"{isr.line}, truncates to {k:,}, below the leader's high watermark "
                        f"{lead.hw:,} ({lead.hw_line}): {' '.join(_span(k, lead.hw)[:2])} "
                        f"not on broker {b}, a member of the ISR, "
                        f"which a clean election may choose next{_UNLOGGED_UNCLEAN}")

    def forget_leos(self) -> None:
        """A truncation whose broker the log does not say (a ``Log`` line in a file of
        several brokers): every LEO known may have fallen."""
        for known in self.brokers.values():
            known.leo = None

    def _reset_offset(self, e: Any) -> None:
        """``Replica N for partition P reset its fetch offset from A to current leader L's
        latest|start offset B`` (0.8-0.11) / ``Reset fetch offset for partition P from A to
        current leader's latest|start offset B`` (1.0-3.x): the follower's fetch offset was
        out of range.  ``latest``: its log (LEO A) is past the leader's (B) and is truncated
        to B; before 2.1 (KAFKA-7414) only a topic with unclean.leader.election.enable=true
        truncates here (else the FATAL exit), so 0.8-0.11's wording is noted as unclean.
        0.8 logs after truncating (A is then B: the LEO before is not said), 0.9+ before.
        ``start``: the leader's log starts at B; a follower below it restarts there, unless
        the truncation fails (KAFKA-3123): the LEO after is not known."""
        f, b = e.fields, e.broker
        if f["from"] != f["offset"]:
            self.set_leo(e, b, f["from"])  # 0.9+ log before resetting (0.8: after, from = to)
        if f["which"] == "latest" and f.get("leader", -1) >= 0:
            self.set_leo(e, f["leader"], f["offset"])  # the leader's log end offset then
        if f["which"] == "start":
            # the log restarts at the leader's start offset if it was below it (and the
            # truncation may fail: KAFKA-3123 loops on this line): the LEO is not known
            self.broker(b).leo = None
            return
        if f["offset"] > f["from"]:
            return
        if e.era.startswith("0.8") and not self.unclean:
            self.unclean_elected = True
            self.notes.append(f"line {_where(e)}: broker {b} truncates to its leader's log end "
                              f"offset {f['offset']:,} (from {f['from']:,}), which 0.8-2.0 do "
                              "only with unclean.leader.election.enable=true (the 0.8-0.10 "
                              "default): committed records may be lost, and the truncation "
                              "rules are off from here")
        known = self.broker(b)
        if known.leads and self._loss_of_leadership_logged(b, known.leads_time):
            raise Rejected("leader-no-truncate",
                           f"broker {b} truncates its log to {f['offset']} while it leads ("
                           f"{known.leads_line}; no logged transition since)")
        self._below_own_hw(e, b, f["offset"])
        self._isr_member_truncation(e, b, f["offset"])
        self.set_leo(e, b, f["offset"], truncation=True)

    def _epoch_no_truncation(self, e: Any) -> None:
        """``Based on follower's leader epoch, leader replied with an offset X >= the
        follower's log end offset Y in P. No truncation needed`` (0.11-1.1): the LEO is Y."""
        self.set_leo(e, e.broker, e.fields["leo"])

    def _truncate_noop(self, e: Any) -> None:
        """``Truncating to N has no effect as the largest offset in the log is M``: the
        LEO is M + 1 (at most N)."""
        self.set_leo(e, e.broker, e.fields["last"] + 1)

    def _fatal_truncation(self, e: Any) -> None:
        """``Exiting because log truncation is not allowed ... current leader L's latest
        offset N is less than replica R's latest offset M`` (FATAL, 0.8-2.0)."""
        f, b = e.fields, e.broker
        if self.options.unclean_election:
            raise Rejected("fatal-truncation",
                           f"broker {b} exits rather than truncate, which it does only with "
                           f"unclean.leader.election.enable=false (given: true)")
        self.set_leo(e, b, f["leo"])
        self.set_leo(e, f["leader"], f["leaderleo"])
        if " for topic " in e.text and not self.notes_topic_only:
            self.notes_topic_only = True
            self.notes.append(f"line {_where(e)}: 0.8-0.9's FATAL names topic {self.partition}, "
                              "not the partition: which of its partitions halted the broker "
                              "the line does not say")
        self.breaks(e, "fatal-truncation", f"broker {b} (LEO {f['leo']:,}) exits: its leader "
                                           f"{f['leader']}'s LEO is {f['leaderleo']:,}")

    def _log_deleted(self, e: Any) -> None:
        """The partition's log deleted (the topic deleted, or the replica moved away): what
        was known of the partition no longer holds (a topic of the same name may be
        created again, from leader epoch 0)."""
        self.brokers.clear()
        self.leaders.clear()
        self.replicas, self.isr, self.latest_epoch = None, Isr(), None
        self.committed = (0, -1, "")
        self.pending.clear()
        self.pending_cid.clear()

    def _started(self, e: Any) -> None:
        """A broker start-up: its in-memory leader epoch is gone (the log is kept)."""
        known = self.broker(e.broker)
        known.restarted = True
        known.leads = False
        known.version = None
        if self.isr.leader == e.broker:
            self.isr.restarted = True  # its own view of the ISR is gone with the crash


_UNLOGGED_UNCLEAN = (" (no unclean election is logged; an unlogged one would lose committed "
                     "records by design: -p unclean_election=true)")


def _span(start: int, end: int) -> tuple[str, str, str]:
    """The committed records at offsets ``start`` to ``end - 1``, in words: the subject, its
    verb ``is``/``are``, its pronoun ``it``/``they``."""
    if end - start == 1:
        return f"the committed record at offset {start:,}", "is", "it"
    return (f"the committed records at offsets {start:,} to {end - 1:,} ({end - start:,} "
            "records)", "are", "they")


def _where(e: Any) -> str:
    """``FILE:LINE`` of an event (``FILE:FIRST-LAST`` for an entry over several lines: a
    line wrapped where it was pasted, a message with continuation lines)."""
    lines = f"{e.line}-{e.last}" if getattr(e, "last", 0) > e.line else str(e.line)
    return f"{e.source}:{lines}" if e.source else f"line {lines}"
