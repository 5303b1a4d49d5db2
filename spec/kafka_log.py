"""Kafka broker logs of one partition as a partial trace of the ``kafka`` model.

``read_broker_logs(files, partition=..., brokers=...)`` reads the log files of a cluster as
they were written to disk (server.log, state-change.log, one or several per broker, any
prefix before the ``[timestamp]``: a docker-compose ``kafka1  | `` or a log4j/logback
pattern with thread and logger names), merges their entries by timestamp, and turns the
lines that bear on one partition's replication into JSON Lines steps of ``isrlab.checker.validate``
(see docs/oracle.md, which has the table of every line, the Kafka versions that write it,
its level and logger, and the step and values it becomes).

The line formats are those of Kafka's own format strings from 0.10 to 4.x:
``kafka.cluster.Partition`` (ISR shrink/expand, "ISR updated", leader/follower start, high
watermark, log loaded), ``kafka.server.ReplicaManager`` through the ``state.change.logger``
(LeaderAndIsr received / completed / ignored), ``Log``/``UnifiedLog`` truncation,
``AbstractFetcherThread`` truncation below the HW and the broker's start-up line.

Modelling shortcuts:

* brokers are renamed to the model's ``0..n-1``: with ``brokers="1,2,3"`` broker 1 is the
  model's broker 0; by default the leader of leader epoch 0 first, the others ascending;
* the log starts at topic creation: the lines of leader epoch 0 are the model's initial
  state (an ``Init`` step); a log starting later is not covered;
* the model has no ZooKeeper version / partition epoch: that figure is read and checked to
  grow along the log, not matched against the model;
* controller lines (``kafka.controller``, KRaft's ``QuorumController``) are not read: the
  controller's steps (elections, ISR removal of dead brokers) are always allowed to be
  hidden, and the trace lists the controller lines it did not read
  (``KafkaLogTrace.controller_lines``), so that no verdict rests on them unsaid; KRaft
  brokers' ``Leader/Follower ... starts at`` lines map to the model's
  LeaderAndIsr delivery, as the KRaft broker applies a PartitionChangeRecord exactly where a
  ZooKeeper broker handles a LeaderAndIsr request.

Hidden steps (``hidden_rule``): a step may go unlogged only if no log given would have shown
it, given which brokers' logs are present (from their first line on), and at which level
(``level``, else the most verbose level of each source's lines).
"""

from __future__ import annotations

import gzip
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import IO, Any

from isrlab.checker.validate import LENGTH_KEY, HiddenRule, TraceFormatError
from isrlab.spec.kafka.labels import (
    KINDS,
    Step,
    actions_from,
    any_request_pattern,
    broker_pattern,
    broker_step,
    parse,
    request_pattern,
)
from isrlab.spec.kafka.state import LEADER_AND_ISR

DEFAULT_HIDDEN = 4
"""Unobserved model steps allowed before each logged step (fetches, produces, ticks...)."""

LEVELS = ("TRACE", "DEBUG", "INFO", "WARN", "ERROR", "FATAL")
"""log4j levels, most verbose first."""

# ---------------------------------------------------------------------------- files
_GZIP_MAGIC = b"\x1f\x8b"


def open_text(path: Path, errors: str = "strict") -> IO[str]:
    """A log file opened for reading as UTF-8 text, decompressed when it is gzip'd (a log
    rotated by logrotate: ``server.log.1.gz``); ``errors`` as for ``open``."""
    with path.open("rb") as probe:
        packed = probe.read(2) == _GZIP_MAGIC
    if packed:
        return gzip.open(path, "rt", encoding="utf-8-sig", errors=errors)
    return path.open(encoding="utf-8-sig", errors=errors)


# ---------------------------------------------------------------------------- entries
_TS = re.compile(r"(?:(\d{4}-\d\d-\d\d)|\b(\d\d)/(0[1-9]|1[0-2])/(0[1-9]|[12]\d|3[01]))[ T]"
                 r"(\d\d:\d\d:\d\d)(?:[,.](\d{1,9}))?")
"""A log4j/logback timestamp: ``yyyy-MM-dd HH:mm:ss[,SSS]`` (Kafka's ``[%d]``, ISO ``T``), or
``yy/MM/dd HH:mm:ss`` (the ``%d{yy/MM/dd HH:mm:ss}`` pattern of Spark's and other embedding
applications' log4j configurations; a two-digit year is 20yy)."""


def stamp(m: re.Match[str]) -> str:
    """The sortable time (``yyyy-MM-dd HH:mm:ss.SSS``) of a ``_TS`` match."""
    date = m.group(1) or f"20{m.group(2)}-{m.group(3)}-{m.group(4)}"
    millis = (m.group(6) or "0").ljust(3, "0")[:3]
    return f"{date} {m.group(5)}.{millis}"
_LEVEL = re.compile(r"\b(TRACE|DEBUG|INFO|WARN|WARNING|ERROR|FATAL)\b")
_COMPOSE = re.compile(r"^\s*(?P<service>[\w.-]+)\s+\|\s?")
_PREFIX_MAX = 160
"""How far into a line its timestamp may start (the prefix of a logback/log4j pattern)."""


@dataclass(slots=True)
class Entry:
    """One log entry (a line with a timestamp, plus its continuation lines)."""

    source: str
    line: int
    time: str
    level: str
    text: str
    last: int = 0
    """The last line of the entry when continuation lines follow its first (0: none)."""


def split_entries(text: str, name: str) -> list[Entry]:
    """The entries of one log file: each line with a timestamp in its first characters
    starts one (whatever precedes it); a line without one continues the previous entry
    (a multi-line message, a stack trace).  A docker-compose prefix names the source
    (``name:service``), so one file of several containers makes several sources.  A file
    with no timestamp at all (lines pasted from a log) has one entry per line, in order,
    except that an indented line without a level of its own continues the line above (a
    stack trace, or a line wrapped by the page it was pasted from)."""
    out: list[Entry] = []
    for number, raw in enumerate(text.splitlines(), start=1):
        compose = _COMPOSE.match(raw)
        body = raw[compose.end():] if compose else raw
        source = f"{name}:{compose['service']}" if compose else name
        m = _TS.search(body[:_PREFIX_MAX])
        if m is None:
            if out and out[-1].source == source and body.strip():
                out[-1].text += " " + body.strip()
            continue
        rest = body[m.end():]
        level = _LEVEL.search(body[:m.start()] + " " + rest[:40])
        found = level.group(1) if level else "INFO"
        out.append(Entry(source, number, stamp(m),
                         "WARN" if found == "WARNING" else found, body))
    if not out:  # lines pasted without their timestamps: each line an entry, in file order
        for number, raw in enumerate(text.splitlines(), start=1):
            if not raw.strip() or raw.startswith("#"):
                continue
            if out and raw[:1].isspace() and not _LEVEL.search(raw[:40]):
                out[-1].text += " " + raw.strip()  # wrapped by the page it was pasted from
                continue
            level = _LEVEL.search(raw)
            out.append(Entry(name, number, "", level.group(1) if level else "INFO", raw))
    return out


def merge_entries(files: Sequence[tuple[str, str]]) -> list[Entry]:
    """Every entry of every file, in timestamp order (ties: file order, then line)."""
    keyed = []
    for index, (name, text) in enumerate(files):
        for entry in split_entries(text, name):
            keyed.append(((entry.time, index, entry.line), entry))
    keyed.sort(key=lambda k: k[0])
    return [e for _, e in keyed]


def looks_like_kafka_log(text: str) -> bool:
    """Whether a text reads as a Kafka (log4j/logback) log: a timestamp near the start of
    one of its first non-blank lines (``#`` comment lines skipped), and a level."""
    lines = [ln for ln in text.splitlines()[:200] if ln.strip() and not ln.startswith("#")]
    for raw in lines[:5]:
        compose = _COMPOSE.match(raw)
        body = raw[compose.end():] if compose else raw
        if body.lstrip().startswith("{"):
            return False
        m = _TS.search(body[:_PREFIX_MAX])
        if m and _LEVEL.search(body):
            return True
    return False


# ---------------------------------------------------------------------------- line formats
_OLD_TP = r"\[(?P<topic>[^,\]\s]+),(?P<part>\d+)\]"
_IDS = r"[\d,\s]*"
_WRITER = re.compile(
    r"Partition \[[^\]]+\] on broker (\d+):|\[Partition \S+ broker=(\d+)[^\]]*\]|\[Broker id=(\d+)"
    r"|Broker (\d+) (?:received|completed|ignoring|handling)|\[KafkaServer id=(\d+)\]"
    r"|\[Kafka Server (\d+)\]|\[ReplicaFetcher replicaId=(\d+)|\[ReplicaManager broker=(\d+)\]"
    r"|\[BrokerServer id=(\d+)\]|\[KafkaRaftServer nodeId=(\d+)\]"
    r"|\[BrokerLifecycleManager id=(\d+)"
)
"""The broker that wrote a line, from any of Kafka's log prefixes."""


@dataclass(frozen=True, slots=True)
class Format:
    """One line format: its kind, the pattern, the Kafka versions and level that write it."""

    kind: str
    pattern: re.Pattern[str]
    versions: str
    level: str
    logger: str
    needles: tuple[str, ...] = ()
    """Words one of which every line of the format holds (tested before the pattern)."""


def _f(kind: str, pattern: str, versions: str, level: str, logger: str) -> Format:
    """A ``Format`` with its pattern compiled."""
    return Format(kind, re.compile(pattern), versions, level, logger)


FORMATS: tuple[Format, ...] = (
    _f("shrink", r"Partition " + _OLD_TP + r" on broker (?P<broker>\d+): Shrinking ISR for "
       r"partition (?:\[[^\]]+\]|\S+) from (?P<old>" + _IDS + r") to (?P<new>" + _IDS + r"\d)",
       "0.10", "INFO", "kafka.cluster.Partition"),
    _f("expand", r"Partition " + _OLD_TP + r" on broker (?P<broker>\d+): Expanding ISR for "
       r"partition (?:\[[^\]]+\]|\S+) from (?P<old>" + _IDS + r") to (?P<new>" + _IDS + r"\d)",
       "0.10", "INFO", "kafka.cluster.Partition"),
    _f("shrink", r"(?:Partition " + _OLD_TP + r" on broker (?P<broker>\d+):|\[Partition "
       r"(?P<tp>\S+) broker=(?P<broker2>\d+)[^\]]*\]) Shrinking ISR from (?P<old>" + _IDS
       + r") to (?P<new>\d+(?:,\d+)*)(?:\. Leader: \(highWatermark: (?P<hw>\d+), endOffset: "
       r"(?P<leo>\d+)\)\. Out of sync replicas: (?P<oos>.*?)\.?\s*(?:\(kafka|$))?",
       "0.11-4.x", "INFO", "kafka.cluster.Partition"),
    _f("expand", r"(?:Partition " + _OLD_TP + r" on broker (?P<broker>\d+):|\[Partition "
       r"(?P<tp>\S+) broker=(?P<broker2>\d+)[^\]]*\]) Expanding ISR from (?P<old>" + _IDS
       + r") to (?P<new>\d+(?:,\d+)*)", "0.11-4.x", "INFO", "kafka.cluster.Partition"),
    _f("isr_updated", r"(?:Partition " + _OLD_TP + r" on broker (?P<broker>\d+):|\[Partition "
       r"(?P<tp>\S+) broker=(?P<broker2>\d+)[^\]]*\]) ISR updated (?:from AlterIsr )?to \[?"
       r"(?P<isr>\d+(?:,\d+)*)\]?\s*(?:\(under-min-isr\)\s*)?and (?:zkVersion|version) "
       r"updated to \[?(?P<version>\d+)\]?",
       "0.10-2.3 TRACE, 2.4-4.x INFO (2.7: 'from AlterIsr')", "INFO", "kafka.cluster.Partition"),
    _f("leader_start", r"(?:Partition " + _OLD_TP + r" on broker (?P<broker>\d+):|\[Partition "
       r"(?P<tp>\S+) broker=(?P<broker2>\d+)[^\]]*\]) \S+ starts at Leader Epoch (?P<epoch>\d+) "
       r"from offset (?P<offset>\d+)\. Previous Leader Epoch was: (?P<prev>-?\d+)",
       "0.11-2.6", "INFO", "kafka.cluster.Partition"),
    _f("leader_start", r"\[Broker id=(?P<broker>\d+)\] Leader (?P<tp>\S+?)(?: with topic id "
       r"\S+)? starts at leader epoch (?P<epoch>\d+) from offset (?P<offset>\d+) with "
       r"(?:partition epoch (?P<version>\d+), )?high watermark (?P<hw>\d+),? ISR "
       r"\[(?P<isr>[\d,\s]*)\].*?[Pp]revious leader (?:(?:Some\((?P<prevleader>-?\d+)\)|None|"
       r"(?P<prevleader2>-?\d+)) and previous leader )?epoch was (?P<prev>-?\d+)",
       "2.7-4.x", "INFO", "state.change.logger"),
    _f("follower_start", r"\[Broker id=(?P<broker>\d+)\] Follower (?P<tp>\S+?)(?: with topic "
       r"id \S+)? starts at leader epoch (?P<epoch>\d+) from offset (?P<offset>\d+) with "
       r"(?:partition epoch (?P<version>\d+) and )?high watermark (?P<hw>\d+)\."
       r"(?: Current leader is (?P<leader>-?\d+)\.)?(?:.*?[Pp]revious leader (?:(?:Some\("
       r"(?P<prevleader>-?\d+)\)|None|(?P<prevleader2>-?\d+)) and previous leader )?epoch was "
       r"(?P<prev>-?\d+))?", "2.7-4.x", "INFO", "state.change.logger"),
    _f("leader_and_isr", r"(?:Broker (?P<broker>\d+) received|\[Broker id=(?P<broker2>\d+)"
       r"\] Received) LeaderAndIsr request (?P<state>\w*PartitionState\(.*?\)) correlation id "
       r"(?P<cid>\d+)(?: from controller \d+ epoch \d+)?(?: for partition (?P<tp>\S+))?",
       "0.10-3.x (ZooKeeper mode)", "TRACE", "state.change.logger"),
    _f("completed", r"(?:Broker (?P<broker>\d+) completed|\[Broker id=(?P<broker2>\d+)\] "
       r"Completed) LeaderAndIsr request correlationId (?P<cid>\d+).*?for the "
       r"become-(?P<role>leader|follower) transition(?: for partition (?P<tp>\S+))?",
       "0.10-2.x", "TRACE", "state.change.logger"),
    _f("ignoring", r"(?:Broker (?P<broker>\d+) ignoring|\[Broker id=(?P<broker2>\d+)\] "
       r"Ignoring) LeaderAndIsr request from controller \d+ with correlation id (?P<cid>\d+)"
       r"(?:.*?for partition (?P<tp>\S+?)(?: since| as|$))?",
       "0.10-3.x (ZooKeeper mode)", "WARN", "state.change.logger"),
    _f("hw", r"(?:Partition " + _OLD_TP + r" on broker (?P<broker>\d+):|\[Partition "
       r"(?P<tp>\S+) broker=(?P<broker2>\d+)[^\]]*\]) High watermark (?:for partition \S+ )?"
       r"updated (?:from \(?(?:offset=)?(?P<hwfrom>\d+)\S*(?: segment=\S+)? )?to \(?(?:offset=)?"
       r"(?P<hw>\d+)",
       "0.10-4.x", "DEBUG", "kafka.cluster.Partition"),
    _f("log_loaded", r"\[Partition (?P<tp>\S+) broker=(?P<broker>\d+)\] Log loaded for "
       r"partition \S+ with initial high watermark (?P<hw>\d+)",
       "2.4-4.x", "INFO", "kafka.cluster.Partition"),
    _f("no_checkpoint", r"(?:Partition " + _OLD_TP + r" on broker (?P<broker>\d+):|\[Partition "
       r"(?P<tp>\S+) broker=(?P<broker2>\d+)[^\]]*\]) No checkpointed highwatermark is found for "
       r"partition", "0.10-4.x", "INFO", "kafka.cluster.Partition"),
    _f("truncate", r"Truncating log (?P<tp>\S+) to offset (?P<offset>\d+)\.",
       "0.10-1.0", "INFO", "kafka.log.Log"),
    _f("truncate", r"\[(?:Unified)?Log partition=(?P<tp>[^,\s\]]+)(?:, dir=[^\]]*)?\] "
       r"Truncating to "
       r"offset (?P<offset>\d+)", "1.1-3.0 Log, 3.1-4.x UnifiedLog", "INFO",
       "kafka.log.Log / kafka.log.UnifiedLog"),
    _f("truncate", r"(?:\[ReplicaFetcher replicaId=(?P<broker>\d+), leaderId=\d+"
       r"(?:, fetcherId=\d+)?\] )?Truncating (?P<tp>\S+) to offset (?P<offset>\d+) below high "
       r"watermark (?P<hw>\d+)",
       "2.4-4.x", "WARN", "kafka.server.ReplicaFetcherThread"),
    _f("zk_refused", r"(?:Partition " + _OLD_TP + r" on broker (?P<broker>\d+):|\[Partition "
       r"(?P<tp>\S+) broker=(?P<broker2>\d+)[^\]]*\]) Cached zkVersion \[?(?P<version>\d+)\]? not "
       r"equal to that in zookeeper, skip updating ISR", "0.10-2.6 (ZooKeeper ISR write)",
       "INFO", "kafka.cluster.Partition"),
    _f("fatal_truncation", r"(?:\[ReplicaFetcher replicaId=(?P<broker2>\d+), leaderId="
       r"(?P<leader2>\d+)[^\]]*\] )?(?:Exiting|Halting) because log truncation is not allowed for "
       r"(?:partition |topic )(?P<tp>\[[^\]]+\]|[^\s,]+),\s*[Cc]urrent leader(?: "
       r"(?P<leader>\d+))?'s latest offset (?P<leaderleo>\d+) is less than replica(?: "
       r"(?P<broker>\d+))?'s latest offset (?P<leo>\d+)",
       "0.8-2.0 (ReplicaFetcherThread.handleOffsetOutOfRange)", "FATAL",
       "kafka.server.ReplicaFetcherThread"),
    _f("truncate", r"\[ReplicaFetcher replicaId=(?P<broker>\d+), leaderId=\d+(?:, fetcherId=\d+)?\]"
       r" Truncating partition (?P<tp>\S+) (?:to local high watermark (?P<offset>\d+)|with "
       r"TruncationState\(offset=(?P<offset2>\d+), completed=\w+\))",
       "2.0-4.x (AbstractFetcherThread)", "INFO", "kafka.server.ReplicaFetcherThread"),
    _f("reset_offset", r"(?:\[ReplicaFetcherThread-\d+-(?P<leader2>\d+)\][,:] )?Replica "
       r"(?P<broker>\d+) for partition (?P<tp>\[[^\]]+\]|\S+) reset its fetch offset from "
       r"(?P<from>\d+) to current leader (?P<leader>\d+)'s (?P<which>latest|start) offset "
       r"(?P<offset>\d+)",
       "0.8-0.11 (ReplicaFetcherThread.handleOffsetOutOfRange; '[ReplicaFetcherThread-F-L], ' "
       "0.8-0.10, ']: ' 0.11)", "WARN", "kafka.server.ReplicaFetcherThread"),
    _f("reset_offset", r"(?:\[ReplicaFetcher replicaId=(?P<broker>\d+), leaderId=(?P<leader>\d+)"
       r"[^\]]*\] )?Reset fetch offset for partition (?P<tp>\S+) from (?P<from>\d+) to current "
       r"leader's (?P<which>latest|start) offset (?P<offset>\d+)",
       "1.0-3.x (ReplicaFetcherThread / AbstractFetcherThread.handleOutOfRangeError)", "WARN",
       "kafka.server.ReplicaFetcherThread"),
    _f("epoch_no_truncation", r"(?:\[ReplicaFetcher(?:Thread-\d+-\d+\]: | replicaId=(?P<broker>\d+)"
       r"[^\]]*\] ))?Based on follower's leader epoch, leader replied with an offset "
       r"(?P<offset>\d+) >= the follower's log end offset (?P<leo>\d+) in (?P<tp>\S+?)\. No "
       r"truncation needed",
       "0.11-1.1 (ReplicaFetcherThread.maybeTruncate, KIP-101)", "INFO",
       "kafka.server.ReplicaFetcherThread"),
    _f("truncate_noop", r"(?:\[(?:Unified)?Log partition=(?P<tp>[^,\s\]]+)(?:, dir=[^\]]*)?\] "
       r"Truncating|"
       r"Truncating (?P<tp2>\S+)) to (?:offset )?(?P<offset>\d+) has no effect as the largest "
       r"offset in the log is (?P<last>-?\d+)", "0.11-4.x (Log/UnifiedLog.truncateTo)", "INFO",
       "kafka.log.Log / kafka.log.UnifiedLog"),
    _f("registration", r"(?:\[Broker id=(?P<broker>\d+)\] )?Skipped the become-(?:leader|follower) "
       r"state change for (?P<tp>\S+?)"
       r"(?: with topic id \S+)? and partition state (?P<state>\w*PartitionState\(.*?\))",
       "3.x-4.x (Partition.makeLeader / makeFollower, same leader epoch)", "INFO",
       "state.change.logger"),
    _f("registration", r"Sending become-(?:leader|follower) LeaderAndIsr request (?P<state>\w*"
       r"PartitionState\(.*?\)) to broker \d+(?: for partition (?P<tp>\S+))?",
       "2.4-3.x ZooKeeper (ControllerChannelManager)", "TRACE", "state.change.logger"),
    _f("registration", r"Changed partition (?P<tp>\S+) from \w+ to \w+ with state "
       r"(?P<state>LeaderAndIsr\((?:[^()]|\([^()]*\))*\))",
       "1.1-3.x ZooKeeper (PartitionStateMachine)", "INFO", "state.change.logger"),
    _f("registration", r"Partition (?P<tp>\S+) state changed to \(Leader:(?P<leader>-?\d+),ISR:"
       r"(?P<isr>[\d,]*),LeaderEpoch:(?P<epoch>\d+)", "1.1-3.x ZooKeeper (ReplicaStateMachine)",
       "INFO", "state.change.logger"),
    _f("registration", r"Changed partition (?P<tp>\S+) state from NonExistentPartition to "
       r"NewPartition with assigned replicas (?P<replicas>\d+(?:,\d+)*)",
       "1.1-3.x ZooKeeper (PartitionStateMachine)", "INFO", "state.change.logger"),
    _f("ctl_change", r"(?P<unclean>UNCLEAN )?partition change for (?P<tp>[^\s:]+)(?: with topic "
       r"ID \S+)?: "
       r"(?P<diff>.*?)\s*(?:\(org\.apache|$)",
       "KRaft 3.3-4.x (PartitionRegistration.maybeLogPartitionChange: UNCLEAN at INFO, else DEBUG)",
       "DEBUG", "org.apache.kafka.controller.ReplicationControlManager"),
    _f("ctl_partition", r"(?:Replayed PartitionRecord for (?P<how>new|existing) partition|Created "
       r"partition) (?P<tp>\S+)(?: with topic ID \S+)? and "
       r"(?P<state>PartitionRegistration\(.*?\))",
       "KRaft 3.3-3.5 'Created partition', 3.6-4.x 'Replayed PartitionRecord for new/existing "
       "partition' (ReplicationControlManager.replay)", "INFO",
       "org.apache.kafka.controller.ReplicationControlManager"),
    _f("ctl_record", r"Replayed partition (?:assignment )?change PartitionChangeRecord\("
       r"(?P<state>[^()]*)\) for topic (?P<topic2>\S+)",
       "KRaft 3.3-3.5 TRACE, 3.6-4.x DEBUG (ReplicationControlManager.replay)", "DEBUG",
       "org.apache.kafka.controller.ReplicationControlManager"),
    _f("ctl_altered", r"Node (?P<broker>\d+) has altered ISR for (?P<tp>\S+) to "
       r"\[(?P<isr>[\d,\s]*)\]",
       "KRaft 3.3-4.x (ReplicationControlManager.alterPartition)", "DEBUG",
       "org.apache.kafka.controller.ReplicationControlManager"),
    _f("ctl_alter_rejected", r"Rejecting AlterPartition request from node (?P<broker>\d+) for "
       r"(?P<tp>\S+) because (?P<why>.*)",
       "KRaft 3.3-4.x (ReplicationControlManager.alterPartition: INFO, an epoch ahead DEBUG)",
       "INFO", "org.apache.kafka.controller.ReplicationControlManager"),
    _f("ctl_fencing", r"Fencing broker (?P<broker>\d+)(?: at epoch (?P<bepoch>\d+))? because its "
       r"session has timed out",
       "KRaft 3.0-4.x (ReplicationControlManager.maybeFenceOneStaleBroker)",
       "INFO", "org.apache.kafka.controller.ReplicationControlManager"),
    _f("ctl_broker", r"Replayed (?P<rec>BrokerRegistrationChangeRecord|FenceBrokerRecord|"
       r"UnfenceBrokerRecord) modifying the registration for broker (?P<broker>\d+): \w+\("
       r"(?P<state>[^)]*)\)", "KRaft 3.6-4.x (ClusterControlManager.replayRegistrationChange)",
       "INFO", "org.apache.kafka.controller.ClusterControlManager"),
    _f("ctl_register", r"(?:Replayed (?P<how>initial RegisterBrokerRecord for|RegisterBrokerRecord "
       r"establishing a new incarnation of|RegisterBrokerRecord modifying the registration for) "
       r"broker \d+: |(?P<how2>Registered new broker|Re-registered broker incarnation|"
       r"Re-registered broker id \d+): )RegisterBrokerRecord\(brokerId=(?P<broker>\d+).*?"
       r"brokerEpoch=(?P<bepoch>\d+)(?:.*?fenced=(?P<fenced>true|false))?"
       r"(?:, inControlledShutdown=(?P<shutdown>true|false))?",
       "KRaft 3.3-3.5 'Registered new broker', 3.6-4.x 'Replayed ... RegisterBrokerRecord' "
       "(ClusterControlManager.replay)", "INFO",
       "org.apache.kafka.controller.ClusterControlManager"),
    _f("ctl_fenced", r"(?P<what>Added new fenced|Added new unfenced|Fenced|Unfenced) broker: "
       r"(?P<broker>\d+)", "KRaft 3.0-3.3 (ClusterControlManager.updateMetrics)", "INFO",
       "org.apache.kafka.controller.ClusterControlManager"),
    _f("ctl_unfence_granted",
       r"The request from broker (?P<broker>\d+) to unfence has been granted",
       "KRaft 3.0-4.x (BrokerHeartbeatManager.calculateNextBrokerState)", "INFO",
       "org.apache.kafka.controller.BrokerHeartbeatManager"),
    _f("ctl_shutdown_granted", r"Unfenced broker (?P<broker>\d+) has requested and been granted a "
       r"controlled shutdown", "KRaft 3.0-4.x (BrokerHeartbeatManager.calculateNextBrokerState)",
       "INFO", "org.apache.kafka.controller.BrokerHeartbeatManager"),
    _f("ctl_shutdown_now", r"(?:The request from broker (?P<broker>\d+) to shut down has been "
       r"granted since the lowest active offset \d+ is now greater than the broker's (?:controlled "
       r")?shutdown offset \d+|(?:Unfenced|Fenced) broker (?P<broker2>\d+) has requested and been "
       r"granted (?:an immediate shutdown|fencing))",
       "KRaft 3.0-4.x (BrokerHeartbeatManager.calculateNextBrokerState: SHUTDOWN_NOW or FENCED, "
       "then ReplicationControlManager.handleBrokerFenced)", "INFO",
       "org.apache.kafka.controller.BrokerHeartbeatManager"),
    _f("ctl_still_fenced", r"The request from broker (?P<broker>\d+) to unfence cannot yet be "
       r"granted because it has not caught up",
       "KRaft 3.0-4.x (BrokerHeartbeatManager.calculateNextBrokerState: still FENCED)", "DEBUG",
       "org.apache.kafka.controller.BrokerHeartbeatManager"),
    _f("ctl_in_shutdown", r"(?:The request from broker (?P<broker>\d+) to shut down can not yet "
       r"be granted because|Broker (?P<broker2>\d+) is in controlled shutdown state, but can not "
       r"shut down because)",
       "KRaft 3.0-4.x (BrokerHeartbeatManager.calculateNextBrokerState: still CONTROLLED_SHUTDOWN)",
       "DEBUG", "org.apache.kafka.controller.BrokerHeartbeatManager"),
    _f("ctl_renounce", r"Renouncing leadership and reverting to the last committed offset "
       r"(?P<offset>\d+)",
       "KRaft 3.3-4.x (QuorumController: EventHandlerExceptionInfo.failureMessage, then "
       "renounce)", "INFO", "org.apache.kafka.controller.QuorumController"),
    _f("lifecycle_registered", r"Successfully registered broker (?P<broker>\d+) with broker epoch "
       r"(?P<bepoch>\d+)", "KRaft 3.0-4.x (BrokerLifecycleManager)", "INFO",
       "kafka.server.BrokerLifecycleManager"),
    _f("lifecycle_unfenced", r"\[BrokerLifecycleManager id=(?P<broker>\d+)[^\]]*\] The broker has "
       r"been unfenced", "KRaft 3.0-4.x (BrokerLifecycleManager)", "INFO",
       "kafka.server.BrokerLifecycleManager"),
    _f("registration", r"(?:PartitionRegistration|PartitionChangeRecord|PartitionRecord)\("
       r"(?P<state>[^()]*(?:\([^()]*\)[^()]*)*)\)", "KRaft 3.x-4.x (controller)", "DEBUG",
       "kafka.controller"),
    _f("leos", r"\[Partition (?P<tp>\S+) broker=(?P<broker>\d+)[^\]]*\] (?:Skipping update high "
       r"watermark since new hw .*? is not larger than old value\. All current LEOs are |Progress "
       r"awaiting ISR acks for offset \d+: acked: |Recorded replica (?P<replica>\d+) log end "
       r"offset \(LEO\) position (?P<replicaleo>\d+))(?P<leotext>.*)",
       "TRACE/DEBUG 2.4-4.x (maybeIncrementLeaderHW, checkEnoughReplicasReachOffset, "
       "updateFollowerFetchState)", "TRACE", "kafka.cluster.Partition"),
    _f("log_deleted", r"Deleted log for partition (?P<tp>\S+?)\.? in |Log for partition "
       r"(?P<tp2>\S+) is renamed to \S+ and is scheduled for deletion",
       "1.0-4.x (LogManager)", "INFO", "kafka.log.LogManager"),
    _f("started", r"(?:\[KafkaServer id=(?P<broker>\d+)\] started|\[Kafka Server "
       r"(?P<broker2>\d+)\], started|\[BrokerServer id=(?P<broker3>\d+)\] Transition from "
       r"STARTING to STARTED)", "0.10-0.11, 1.0-3.x, KRaft 3.x-4.x", "INFO",
       "kafka.server.KafkaServer / BrokerServer"),
)
"""Every line format read (docs/oracle.md has the table)."""

_NEEDLES: tuple[tuple[str, ...], ...] = (
    ("Shrinking ISR",), ("Expanding ISR",), ("Shrinking ISR",), ("Expanding ISR",),
    ("ISR updated",), ("starts at Leader Epoch",), ("starts at leader epoch",),
    ("starts at leader epoch",), ("LeaderAndIsr request",), ("LeaderAndIsr request",),
    ("LeaderAndIsr request",), ("High watermark",), ("Log loaded",), ("No checkpointed",),
    ("Truncating log",), ("Truncating to offset",), ("below high watermark",),
    ("Cached zkVersion",), ("truncation is not allowed",), ("Truncating partition",),
    ("Replica ",), ("Reset fetch offset for partition",), ("No truncation needed",),
    ("has no effect",), ("Skipped the become",), ("Sending become",),
    ("with state LeaderAndIsr(",), ("state changed to (Leader:",), ("with assigned replicas",),
    ("Epoch: ",), ("PartitionRecord for", "Created partition"),
    ("PartitionChangeRecord(",), ("ISR for ",), ("Rejecting AlterPartition",), ("Fencing broker",),
    ("BrokerRegistrationChangeRecord(", "FenceBrokerRecord(", "UnfenceBrokerRecord("),
    ("RegisterBrokerRecord", "Registered new broker", "Re-registered broker"),
    ("Fenced broker: ", "Unfenced broker: ", "Added new "), ("The request from broker",),
    ("Unfenced broker ",), ("to shut down has been granted", "has requested and been granted"),
    ("to unfence cannot yet",), ("to shut down can not yet", "but can not shut down"),
    ("Renouncing leadership",), ("Successfully registered broker",),
    ("The broker has been unfenced",),
    ("Registration(", "PartitionChangeRecord(", "ChangeRecord(", "PartitionRecord("),
    ("Skipping update high watermark", "acks for offset", "Recorded replica"),
    ("Deleted log for partition", "scheduled for deletion"),
    ("started", "STARTED"),
)
"""``Format.needles`` of each format of ``FORMATS``, in order."""
FORMATS = tuple(Format(f.kind, f.pattern, f.versions, f.level, f.logger, needles)
                for f, needles in zip(FORMATS, _NEEDLES, strict=True))


@dataclass(frozen=True, slots=True)
class LogEvent:
    """One recognised log line: its kind (``FORMATS``), the broker that wrote it, its
    partition (``None``: not said), its fields, and where it comes from."""

    line: int
    text: str
    kind: str
    broker: int
    partition: str | None
    fields: dict[str, Any]
    time: str = ""
    source: str = ""
    level: str = "INFO"
    era: str = ""
    last: int = 0
    """The entry's last line when it spans several (a line wrapped where it was pasted)."""


def _ids(text: str | None) -> tuple[int, ...]:
    """Broker ids of ``1,2,3`` or ``[1, 2, 3]``."""
    return tuple(int(x) for x in re.findall(r"\d+", text or ""))


def _tp(topic_partition: str | None) -> str | None:
    """``t-0`` for ``[t,0]``, ``t-0`` or ``None``."""
    if topic_partition is None:
        return None
    match = re.fullmatch(_OLD_TP, topic_partition)
    if match:
        return f"{match['topic']}-{match['part']}"
    return topic_partition.rstrip(".,")


_FIELD = re.compile(r"(\w+)=(\[[^\]]*\]|'[^']*'|[^,)\s]+)")


def _partition_state(text: str) -> tuple[dict[str, Any], str | None]:
    """The leader, leader epoch, ISR, replicas, version of a ``PartitionState(...)`` text,
    and the partition it names (newer formats carry topicName/partitionIndex)."""
    text = re.sub(r"List\(([^)]*)\)", r"[\1]", text)  # the controller's Scala lists
    text = re.sub(r"\b(isr|replicas)=(\d+(?:,\d+)*)", r"\1=[\2]", text)  # 0.11: no brackets
    values = dict(_FIELD.findall(text))
    fields: dict[str, Any] = {}
    for key in ("leader", "leaderEpoch", "controllerEpoch", "zkVersion", "partitionEpoch"):
        if key in values and re.fullmatch(r"-?\d+", values[key]):
            fields[key] = int(values[key])
    for key in ("isr", "replicas"):
        if key in values:
            fields[key] = _ids(values[key])
    tp = None
    if "topicName" in values and "partitionIndex" in values:
        tp = f"{values['topicName'].strip(chr(39))}-{values['partitionIndex']}"
    return fields, tp


_NEEDLE = re.compile("|".join(sorted({re.escape(n) for f in FORMATS for n in f.needles},
                                      key=len, reverse=True)))
"""Every format's words: the formats a line may be are those whose words it holds."""
_BY_NEEDLE: dict[str, tuple[int, ...]] = {}
for _index, _fmt in enumerate(FORMATS):
    for _needle in _fmt.needles:
        _BY_NEEDLE[_needle] = (*_BY_NEEDLE.get(_needle, ()), _index)


def _candidates(line: str) -> list[Format]:
    """The formats whose words ``line`` holds, in ``FORMATS`` order (no word of a format
    overlaps another's, so one scan finds them all)."""
    found = set(_NEEDLE.findall(line))
    if not found:
        return []
    return [FORMATS[i] for i in sorted({i for needle in found for i in _BY_NEEDLE[needle]})]


def parse_line(number: int, line: str, entry: Entry | None = None) -> LogEvent | None:
    """The event of one log line (or entry), or ``None`` for a line of no interest (one
    scan for the formats' words: ``_candidates``)."""
    for fmt in _candidates(line):
        m = fmt.pattern.search(line)
        if m is None:
            continue
        groups = {k: v for k, v in m.groupdict().items() if v is not None}
        broker_text = groups.get("broker") or groups.get("broker2") or groups.get("broker3")
        tp = _tp(groups.get("tp") or groups.get("tp2"))
        if tp is None and "topic" in groups:
            tp = f"{m['topic']}-{m['part']}"
        fields = _fields(fmt.kind, groups)
        if fmt.kind.startswith("ctl_") or fmt.kind.startswith("lifecycle_"):
            tp = _controller_fields(fmt.kind, groups, line, fields) or tp
        elif fmt.kind in ("leader_and_isr", "registration") and "state" in groups:
            state, named = _partition_state(m["state"])
            fields.update(state)
            tp = named or tp
            if tp is None and fmt.kind == "registration":
                said = re.search(r"(?:for (?:new )?partition|topicPartition=?) ?(\S+?)[ ,.:]", line)
                tp = _tp(said.group(1)) if said else None
        era = fmt.versions
        return LogEvent(number, line, fmt.kind, int(broker_text) if broker_text else -1, tp,
                        fields, entry.time if entry else "", entry.source if entry else "",
                        entry.level if entry else fmt.level, era, entry.last if entry else 0)
    return None


_CONTROLLER = re.compile(r"\[QuorumController id=(\d+)\]|\[Controller (\d+)\] ")
"""The KRaft controller that wrote a line: ``[Controller N]`` (3.0-3.4), ``[QuorumController
id=N]`` (3.5-4.x)."""
_DIFF = re.compile(r"(\w+): (\[[^\]]*\]|[^,\s]+) -> (\[[^\]]*\]|[^,\s]+)")
_NULLABLE = re.compile(r"(\w+)=(\[[^\]]*\]|null|-?\d+|[\w-]+)")


def _value(text: str) -> int | tuple[int, ...] | str | None:
    """A figure of a controller line: an int, a list of broker ids, ``None`` for ``null``, or
    the text (``RECOVERED``)."""
    if text == "null":
        return None
    if text.startswith("["):
        return _ids(text)
    if re.fullmatch(r"-?\d+", text):
        return int(text)
    return text


def _controller_fields(kind: str, groups: dict[str, str], line: str,
                       fields: dict[str, Any]) -> str | None:
    """The figures of a KRaft controller's or broker lifecycle line (into ``fields``) and the
    partition it names: ``controller`` (the writer, -1 unsaid), a partition change's
    ``diff`` (name -> (before, after), the fields ``PartitionRegistration.diff`` prints),
    a record's values (``null``: unchanged), a broker's ``bepoch``, ``fenced`` (1 fence, -1
    unfence, 0 unchanged), ``shutdown``."""
    writer = _CONTROLLER.search(line)
    fields["controller"] = int(next(g for g in writer.groups() if g)) if writer else -1
    if "bepoch" in groups:
        fields["bepoch"] = int(groups["bepoch"])
    tp: str | None = None
    if kind == "ctl_alter_rejected":
        fields["why"] = groups["why"]
    elif kind == "ctl_change":
        fields["unclean"] = "unclean" in groups
        fields["diff"] = {k: (_value(a), _value(b)) for k, a, b in _DIFF.findall(groups["diff"])}
    elif kind == "ctl_partition":
        state = dict(_NULLABLE.findall(groups["state"]))
        fields["record"] = {k: _value(v) for k, v in state.items()}
        fields["created"] = groups.get("how", "new") == "new"
    elif kind == "ctl_record":
        state = {k: _value(v) for k, v in _NULLABLE.findall(groups["state"])}
        fields["record"] = state
        if isinstance(state.get("partitionId"), int):
            tp = f"{groups['topic2']}-{state['partitionId']}"
    elif kind == "ctl_broker":
        state = {k: _value(v) for k, v in _NULLABLE.findall(groups["state"])}
        rec = groups["rec"]
        fields["bepoch"] = state.get("brokerEpoch", state.get("epoch"))
        fields["fenced"] = {"FenceBrokerRecord": 1, "UnfenceBrokerRecord": -1}.get(
            rec, state.get("fenced", 0))
        fields["shutdown"] = state.get("inControlledShutdown", 0) == 1
    elif kind == "ctl_register":
        how = groups.get("how") or groups.get("how2") or ""
        fields["initial"] = how.startswith(("initial", "Registered new"))
        fields["incarnation"] = not how.startswith(("RegisterBrokerRecord modifying",
                                                    "Re-registered broker incarnation"))
        fields["fenced"] = 1 if groups.get("fenced", "true") == "true" else -1
        fields["shutdown"] = groups.get("shutdown") == "true"
    elif kind == "ctl_fenced":
        fields["fenced"] = 1 if groups["what"] in ("Fenced", "Added new fenced") else -1
    return tp


_INTS = {"epoch": "epoch", "offset": "offset", "offset2": "offset", "prev": "prev", "hw": "hw",
         "leo": "leo", "version": "version", "cid": "cid", "leader": "leader",
         "leader2": "leader", "leaderleo": "leaderleo", "last": "last",
         "prevleader": "prevleader", "prevleader2": "prevleader", "hwfrom": "hwfrom",
         "from": "from"}
"""The groups that carry an integer, and the field each becomes."""


def _fields(kind: str, groups: dict[str, str]) -> dict[str, Any]:
    """The figures a matched line carries (its groups that matched), as ints and tuples of
    broker ids."""
    out: dict[str, Any] = {}
    for key, value in groups.items():
        field_name = _INTS.get(key)
        if field_name is not None:
            out[field_name] = int(value)
        elif key in ("old", "new", "isr", "replicas"):
            out[key] = _ids(value)
    if "role" in groups:
        out["role"] = groups["role"]
    if "which" in groups:
        out["which"] = groups["which"]
    if kind == "leos":
        leos = [(int(b), int(o)) for b, o in re.findall(
            r"(?:replica|broker) (\d+): \(?(?:offset=)?(\d+)", groups.get("leotext", ""))]
        if "replica" in groups:
            leos.append((int(groups["replica"]), int(groups["replicaleo"])))
        out["leos"] = tuple(leos)
    oos = groups.get("oos")
    if oos:
        out["out_of_sync"] = tuple(
            (int(b), None if leo == "unknown" else int(leo))
            for b, leo in re.findall(r"brokerId: (\d+), endOffset: (-?\d+|unknown)", oos))
    return out


def writer_of(text: str) -> int | None:
    """The broker that wrote a line, from its prefix (``None``: not said)."""
    m = _WRITER.search(text)
    if m is None:
        return None
    return int(next(g for g in m.groups() if g is not None))


# ---------------------------------------------------------------------------- sources
STATE, SERVER = "state-change", "server"
"""The two logs of a broker: ``state.change.logger`` lines (state-change.log by default)
and every other logger's (server.log)."""


def category_of(text: str) -> str:
    """``state-change`` for a line of the ``state.change.logger`` (named at its end, or
    prefixed ``[Broker id=N]`` / ``[Controller id=N]`` or in the old ``Broker N received``
    form), else ``server``."""
    if "state.change.logger" in text or re.search(
            r"\[(?:Broker|Controller) id=\d+|Broker \d+ (?:received|completed|ignoring) "
            r"LeaderAndIsr", text):
        return STATE
    return SERVER


@dataclass(slots=True)
class Source:
    """One log source (a file, or one container of a docker-compose file): the brokers
    whose lines it holds, its first timestamp, and per category of lines present (``STATE``,
    ``SERVER``) the most verbose level of those lines."""

    name: str
    brokers: set[int] = field(default_factory=set)
    first: str = ""
    levels: dict[str, str] = field(default_factory=dict)


def _sources(entries: Sequence[Entry]) -> dict[str, Source]:
    """The sources of the entries: a merged file of several brokers covers every broker
    of its lines from its first line on."""
    out: dict[str, Source] = {}
    for e in entries:
        src = out.setdefault(e.source, Source(e.source, first=e.time))
        src.first = min(src.first, e.time)
        cat = category_of(e.text)
        known = src.levels.get(cat, "FATAL")
        if LEVELS.index(e.level) < LEVELS.index(known):
            src.levels[cat] = e.level
        writer = writer_of(e.text)
        if writer is not None:
            src.brokers.add(writer)
    return out


def _family(events: Sequence[LogEvent]) -> str:
    """The logging era of the cluster: ``2.7+`` when a ``Leader/Follower ... starts at
    leader epoch`` line is present, ``0.11+`` with ``starts at Leader Epoch``, else
    ``0.10`` (the least logging: every transition is only at TRACE)."""
    kinds = {(e.kind, e.era) for e in events}
    if any(k == "follower_start" or (k == "leader_start" and v == "2.7-4.x") for k, v in kinds):
        return "2.7+"
    if any(k == "leader_start" for k, _ in kinds):
        return "0.11+"
    return "0.10"


# ---------------------------------------------------------------------------- broker ids
def _parse_brokers(brokers: str) -> list[int]:
    try:
        ids = [int(x) for x in brokers.split(",") if x.strip()]
    except ValueError as error:
        raise TraceFormatError("--brokers", f"expects broker ids like 1,2,3, got "
                               f"{brokers!r}") from error
    if not ids or len(set(ids)) != len(ids):
        raise TraceFormatError("--brokers", f"expects distinct broker ids, got {brokers!r}")
    return ids


def _broker_order(events: Sequence[LogEvent], brokers: str | None) -> dict[int, int]:
    """Kafka broker id -> model broker index (see the module docstring)."""
    seen: set[int] = set()
    creation_leader: int | None = None
    guess: int | None = None  # without topic creation: the first broker changing an ISR
    for e in events:
        if e.broker >= 0 and e.kind != "started":
            seen.add(e.broker)
        f = e.fields
        for key in ("replicas", "isr", "old", "new"):
            seen.update(f.get(key, ()))
        leader = f.get("leader", -1)
        if e.kind in ("leader_and_isr", "follower_start") and leader >= 0:
            seen.add(leader)
        epoch = f.get("leaderEpoch", f.get("epoch"))
        if creation_leader is None and epoch == 0:
            if e.kind == "leader_and_isr" and leader >= 0:
                creation_leader = leader
            elif e.kind == "leader_start":
                creation_leader = e.broker
            elif e.kind == "follower_start" and leader >= 0:
                creation_leader = leader
        if guess is None and e.kind in ("shrink", "expand", "isr_updated"):
            guess = e.broker
    if brokers is not None:
        ids = _parse_brokers(brokers)
        missing = sorted(seen - set(ids))
        if missing:
            raise TraceFormatError("--brokers", f"the log names broker(s) "
                                   f"{','.join(map(str, missing))}, not in --brokers {brokers}")
        if creation_leader is not None and ids[0] != creation_leader:
            raise TraceFormatError("--brokers", f"--brokers {brokers} puts broker {ids[0]} "
                                   f"first, but broker {creation_leader} leads leader epoch 0 "
                                   f"(the model's broker 0 is the first leader)")
        return {b: i for i, b in enumerate(ids)}
    first_leader = creation_leader if creation_leader is not None else guess
    order = sorted(seen)
    if first_leader is not None and first_leader in order:
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
        raise TraceFormatError("line 1", "no line about a partition's replication (ISR "
                               "change, leader/follower start, LeaderAndIsr) in the log")
    return names[0]


# ---------------------------------------------------------------------------- the trace
@dataclass
class KafkaLogTrace:
    """The steps derived from a cluster's logs, with what the rule of hidden steps needs:
    the model index of each Kafka broker id, the logging era, and per step which model
    brokers' logs cover the time before it, of which category, at which level."""

    steps: list[dict[str, Any]]
    ids: dict[int, int]
    family: str
    covered: list[dict[int, dict[str, str]]]
    controller_lines: list[LogEvent] = field(default_factory=list)
    """The partition's controller lines (``CONTROLLER_KINDS``), which the model's search
    does not read: a verdict after the first of them is "not covered"."""


CONTROLLER_KINDS = ("ctl_", "lifecycle_", "registration")
"""The kinds of lines (prefixes) that give the controller's view: the KRaft controller's
records, fencing and registrations, a broker's registration lifecycle, the ZooKeeper
controller's partition states and a KRaft broker's skipped transitions (``registration``).
The log oracle reads them; the bounded model's search does not."""


def controller_lines(events: Sequence[LogEvent], tp: str) -> list[LogEvent]:
    """The controller lines of partition ``tp`` among ``events`` (those naming no partition,
    a fencing or registration, bear on every partition)."""
    return [e for e in events if e.kind.startswith(CONTROLLER_KINDS)
            and e.partition in (tp, None)]


def read_broker_log(
    text: str, *, partition: str | None = None, brokers: str | None = None,
    hidden: int = DEFAULT_HIDDEN,
) -> list[dict[str, Any]]:
    """The JSON Lines steps of one log file's text (``read_broker_logs`` of that one file)."""
    return read_broker_logs([("log", text)], partition=partition, brokers=brokers,
                            hidden=hidden).steps


def read_broker_logs(
    files: Sequence[tuple[str, str]], *, partition: str | None = None,
    brokers: str | None = None, hidden: int = DEFAULT_HIDDEN, level: str | None = None,
) -> KafkaLogTrace:
    """The JSON Lines steps (``isrlab.checker.validate`` format) of one partition in the logs
    ``files`` (``(name, text)`` pairs), merged by timestamp.

    Each step carries ``#line``, ``#file``, ``#time`` and ``#log`` (ignored by the validator,
    shown in its reports).  ``TraceFormatError`` for unusable logs.
    """
    entries = merge_entries(files)
    if not entries:
        raise TraceFormatError("line 1", "not a Kafka log: no line")
    events = [e for entry in entries
              if (e := parse_line(entry.line, entry.text, entry)) is not None]
    sources = _sources(entries)
    # lines naming no broker (Log truncation) belong to the one broker of their source
    events = [_attribute(e, sources) for e in events]
    tp = _choose_partition(events, partition)
    ours = [e for e in events if e.partition == tp
            or (e.partition is None and e.kind in ("ignoring", "started"))]
    ids = _broker_order(ours, brokers)
    builder = _Builder(ids, hidden, multi=len(files) > 1)
    builder.confirming = confirming_brokers(ours)
    for e in ours:
        builder.add(e)
    steps = builder.finish()
    family = _family(ours)
    covered = [_coverage(step, sources, level, ids) for step in steps]
    return KafkaLogTrace(steps, ids, family, covered, controller_lines(events, tp))


def _attribute(e: LogEvent, sources: Mapping[str, Source]) -> LogEvent:
    """A line naming no broker (``Log`` truncation) belongs to its source's one broker."""
    if e.broker >= 0:
        return e
    owners = sources[e.source].brokers if e.source in sources else set()
    if len(owners) == 1:
        return LogEvent(e.line, e.text, e.kind, next(iter(owners)), e.partition, e.fields,
                        e.time, e.source, e.level, e.era, e.last)
    return e


def _coverage(step: Mapping[str, Any], sources: Mapping[str, Source], level: str | None,
              ids: Mapping[int, int]) -> dict[int, dict[str, str]]:
    """The model brokers whose logs cover the time before ``step`` (their source began
    before the previous step), per category with the most verbose level of their sources
    (``level`` instead, when given)."""
    since = step.get("#since", step.get("#time", ""))
    out: dict[int, dict[str, str]] = {}
    for src in sources.values():
        if src.first > since:
            continue
        for b in src.brokers:
            if b not in ids:
                continue
            mine = out.setdefault(ids[b], {})
            for cat, lvl in src.levels.items():
                lvl = level or lvl
                if cat not in mine or LEVELS.index(lvl) < LEVELS.index(mine[cat]):
                    mine[cat] = lvl
    return out


class _Builder:
    """Turns one partition's events, in time order, into steps (docs/oracle.md's table)."""

    def __init__(self, ids: Mapping[int, int], hidden: int, *, multi: bool) -> None:
        self.ids = ids
        self.hidden = hidden
        self.multi = multi
        self.steps: list[dict[str, Any]] = []
        self.init: dict[str, Any] | None = None
        self.in_init = True
        self.pending_cid: dict[tuple[int, int], dict[str, Any]] = {}
        self.last_transition: dict[int, dict[str, Any]] = {}
        self.proposal: dict[int, LogEvent] = {}
        self.confirming: set[int] = set()
        self.isr: dict[int, tuple[int, ...]] = {}
        self.versions: dict[int, tuple[int, int]] = {}
        self.init_transitions: set[tuple[int, str]] = set()
        self.init_started: set[int] = set()

    def model(self, b: int, e: LogEvent) -> int:
        """The model index of Kafka broker ``b`` (``TraceFormatError`` if unknown)."""
        if b not in self.ids:
            raise TraceFormatError(f"line {e.line}", f"broker {b} is not among the brokers "
                                   f"{','.join(map(str, self.ids))}")
        return self.ids[b]

    def step(self, e: LogEvent, **values: Any) -> dict[str, Any]:
        """A new step of event ``e`` with ``values`` (its source and time kept)."""
        where = f"{e.source}:{e.line}" if self.multi and e.source else None
        step: dict[str, Any] = {"#line": e.line, "#log": e.text.strip(), "#time": e.time}
        if where:
            step["#file"] = where
        step.update(values)
        if "action" not in values or values["action"] != "Init":
            step.setdefault("hidden", self.hidden)
        step["#since"] = self.steps[-1]["#time"] if self.steps else e.time
        self.steps.append(step)
        return step

    def check_version(self, e: LogEvent) -> None:
        """The ZooKeeper version / partition epoch a broker logs never decreases (each
        broker's lines are in its own clock's order; the model does not store it)."""
        version = e.fields.get("version")
        if version is None:
            return
        last, line = self.versions.get(e.broker, (-1, 0))
        if version < last:
            raise TraceFormatError(
                f"line {e.line}", f"broker {e.broker} logs partition epoch (ZooKeeper version) "
                f"{version} after {last} (line {line}): not the log of one run")
        self.versions[e.broker] = (version, e.line)

    # -- the kinds ------------------------------------------------------------------
    def add(self, e: LogEvent) -> None:
        """One event: a step, or values added to a step, or nothing (docs/oracle.md)."""
        handler: Callable[[LogEvent], None] | None = getattr(self, f"_{e.kind}", None)
        if handler is None:
            return  # read by the oracle (isrlab.spec.oracle) only
        if e.broker < 0 and e.kind not in ("ignoring",):
            if e.kind in ("truncate",):
                return  # a Log line in a file of several brokers: cannot tell whose
            raise TraceFormatError(f"line {e.line}", "cannot tell which broker wrote this "
                                   "line (no 'on broker N', 'broker=N' or 'Broker id=N')")
        self.check_version(e)
        if self.in_init and not self._initial(e):
            self.in_init = False
        handler(e)

    def _initial(self, e: LogEvent) -> bool:
        """Whether ``e`` still belongs to topic creation: each broker's first start-up and
        first transition in leader epoch 0, HW 0 (a second one, or anything else, ends it)."""
        epoch = e.fields.get("leaderEpoch", e.fields.get("epoch"))
        if e.kind in ("leader_and_isr", "leader_start", "follower_start"):
            seen = (e.broker, "request" if e.kind == "leader_and_isr" else "start")
            if epoch != 0 or seen in self.init_transitions:
                return False
            self.init_transitions.add(seen)
            return True
        if e.kind == "started":
            if e.broker in self.init_started or any(
                    b == e.broker for b, _ in self.init_transitions):
                return False
            self.init_started.add(e.broker)
            return True
        if e.kind in ("hw", "log_loaded"):
            return bool(e.fields.get("hw") == 0)
        if e.kind == "no_checkpoint":
            return True
        return e.kind == "completed"

    def _started(self, e: LogEvent) -> None:
        """A start-up after creation: ``Restart(b)``."""
        if self.in_init:
            return
        b = self.model(e.broker, e)
        self.last_transition.pop(b, None)
        self.step(e, action="Restart", args=[b])

    def _init(self, e: LogEvent, leader: int, isr: Sequence[int] | None) -> None:
        """The ``Init`` step of topic creation (ZooKeeper's leader, epoch 0, ISR)."""
        zk: dict[str, Any] = {"leader": self.model(leader, e), "leader_epoch": 0}
        if isr:
            zk["isr"] = sorted(self.model(x, e) for x in isr)
        if self.init is None:
            self.init = self.step(e, action="Init", zk=zk)
        elif "isr" not in self.init["zk"] and "isr" in zk:
            self.init["zk"]["isr"] = zk["isr"]

    def _leader_and_isr(self, e: LogEvent) -> None:
        """A received LeaderAndIsr request: its ``Deliver`` step (``Init`` at creation)."""
        f = e.fields
        for key in ("leader", "leaderEpoch", "isr"):
            if key not in f:
                raise TraceFormatError(f"line {e.line}", f"LeaderAndIsr request without {key}")
        if self.in_init:
            self._init(e, f["leader"], f["isr"])
            return
        dest = self.model(e.broker, e)
        leader = self.model(f["leader"], e) if f["leader"] >= 0 else -1
        isr = sorted(self.model(b, e) for b in f["isr"])
        epoch = f["leaderEpoch"]
        label = request_pattern("Deliver", LEADER_AND_ISR, dest, leader=leader,
                                leader_epoch=epoch, isr=tuple(isr))
        step = self.step(e, label=label, **{"#epoch": epoch, "#leader": leader})
        self.pending_cid[(e.broker, f["cid"])] = step
        self.last_transition[dest] = step

    def _completed(self, e: LogEvent) -> None:
        """A completed transition: the broker's leader and epoch after its step."""
        target = self.pending_cid.pop((e.broker, e.fields["cid"]), None)
        if target is None or "label" not in target:
            return
        b = self.model(e.broker, e)
        leader = b if e.fields["role"] == "leader" else target["#leader"]
        target.setdefault(f"broker{b}", {}).update(leader=leader,
                                                   leader_epoch=target["#epoch"])

    def _ignoring(self, e: LogEvent) -> None:
        """An ignored (stale) request: a stutter step that may be its delivery to the
        broker (the request handled and changing nothing) or nothing."""
        self.pending_cid.pop((e.broker, e.fields["cid"]), None)
        if self.in_init or e.broker < 0:
            return
        b = self.model(e.broker, e)
        self.step(e, label=any_request_pattern(actions_from("Deliver"), LEADER_AND_ISR, b),
                  stutter=True)

    def _transition(self, e: LogEvent, leader: int | None) -> None:
        """A ``Leader/Follower ... starts at leader epoch`` line: the Deliver step of that
        transition (merged into the TRACE ``received`` step of the same epoch if there)."""
        f = e.fields
        b = self.model(e.broker, e)
        epoch = f["epoch"]
        if self.in_init:
            if e.kind == "leader_start":
                self._init(e, e.broker, f.get("isr"))
            elif leader is not None and leader >= 0:
                self._init(e, leader, None)
            return
        mine: dict[str, Any] = {"leader_epoch": epoch}
        if leader is not None:
            mine["leader"] = self.model(leader, e) if leader >= 0 else -1
        if e.kind == "leader_start" and f.get("isr"):
            mine["isr"] = sorted(self.model(x, e) for x in f["isr"])
        before: dict[str, Any] = {"log": {LENGTH_KEY: f["offset"]}}
        if "prev" in f:  # a pasted line may be cut before 'Previous leader epoch was'
            before["leader_epoch"] = f["prev"]
        if "hw" in f:
            before["hw"] = f["hw"]
        previous = self.last_transition.get(b)
        if previous is not None and previous.get("#epoch") == epoch:
            target = previous  # the TRACE 'received' line of the same transition
        else:
            label = request_pattern(
                "Deliver", LEADER_AND_ISR, b, leader=None if leader is None else mine["leader"],
                leader_epoch=epoch, isr=tuple(mine["isr"]) if "isr" in mine else None)
            target = self.step(e, label=label, **{"#epoch": epoch})
            self.last_transition[b] = target
        target.setdefault(f"broker{b}", {}).update(mine)
        target.setdefault("before", {}).setdefault(f"broker{b}", {}).update(before)

    def _leader_start(self, e: LogEvent) -> None:
        """``... starts at leader epoch`` of a new leader."""
        self._transition(e, e.broker)

    def _follower_start(self, e: LogEvent) -> None:
        """``Follower ... starts at leader epoch`` (the leader when the line names it)."""
        self._transition(e, e.fields.get("leader"))

    def _isr_change(self, e: LogEvent, old: Sequence[int], new: Sequence[int],
                    before: dict[str, Any]) -> None:
        """An ISR change of leader ``e.broker``: ``ShrinkIsr`` or ``Fetch*`` of the one
        follower added (no label when neither), the new ISR after it, ``before`` before."""
        leader = self.model(e.broker, e)
        newm = sorted(self.model(x, e) for x in new)
        added = sorted(set(new) - set(old))
        if len(added) == 1 and not set(old) - set(new):
            label = broker_pattern(actions_from("Fetch"), self.model(added[0], e))
        elif not added and set(old) - set(new):
            label = broker_step("ShrinkIsr", leader)
        else:
            label = ""
        values: dict[str, Any] = {f"broker{leader}": {"leader": leader, "isr": newm}}
        if label:
            values["label"] = label
        if before:
            values["before"] = {f"broker{leader}": before}
        self.step(e, **values)
        self.isr[e.broker] = tuple(new)

    def _proposal_values(self, e: LogEvent) -> dict[str, Any]:
        """The leader's values a shrink line shows: ISR, HW, LEO, followers' LEOs."""
        f = e.fields
        out: dict[str, Any] = {"isr": sorted(self.model(x, e) for x in f["old"])}
        if "hw" in f:
            out["hw"] = f["hw"]
        if "leo" in f:
            out["log"] = {LENGTH_KEY: f["leo"]}
        remote = {str(self.model(b, e)): leo for b, leo in f.get("out_of_sync", ())
                  if leo is not None}
        if remote:
            out["remote_leo"] = remote
        return out

    def _shrink(self, e: LogEvent) -> None:
        """``Shrinking ISR``: the step, or its figures when an ``ISR updated`` confirms."""
        if e.broker in self.confirming:
            # AlterIsr / a confirmed ZooKeeper write: the values now, the change when the
            # "ISR updated" line confirms it
            self.proposal[e.broker] = e
            b = self.model(e.broker, e)
            self.step(e, report=True, **{f"broker{b}": self._proposal_values(e)})
            return
        self._isr_change(e, e.fields["old"], e.fields["new"], self._proposal_values(e))

    def _expand(self, e: LogEvent) -> None:
        """``Expanding ISR``: the step, or pending when an ``ISR updated`` confirms."""
        if e.broker in self.confirming:
            self.proposal[e.broker] = e
            return
        before = {"isr": sorted(self.model(x, e) for x in e.fields["old"])}
        self._isr_change(e, e.fields["old"], e.fields["new"], before)

    def _isr_updated(self, e: LogEvent) -> None:
        """``ISR updated to ...``: the ISR change it confirms."""
        proposal = self.proposal.pop(e.broker, None)
        old = proposal.fields["old"] if proposal is not None else self.isr.get(e.broker, ())
        before = {"isr": sorted(self.model(x, e) for x in old)} if old else {}
        self._isr_change(e, old, e.fields["isr"], before)

    def _hw(self, e: LogEvent) -> None:
        """``High watermark updated``: a stutter observation of the leader's HW."""
        if self.in_init:
            return
        b = self.model(e.broker, e)
        self.step(e, stutter=True, **{f"broker{b}": {"hw": e.fields["hw"]}})

    def _log_loaded(self, e: LogEvent) -> None:
        """``Log loaded ... with initial high watermark``: a report of the HW."""
        if self.in_init:
            return
        b = self.model(e.broker, e)
        self.step(e, report=True, **{f"broker{b}": {"hw": e.fields["hw"]}})

    def _no_checkpoint(self, e: LogEvent) -> None:
        """No HW checkpoint for the partition: its HW starts at 0 (a *report*)."""
        if self.in_init:
            return
        b = self.model(e.broker, e)
        self.step(e, report=True, **{f"broker{b}": {"hw": 0}})

    def _truncate(self, e: LogEvent) -> None:
        """``Truncating ... to offset``: a report of the replica's log length."""
        if self.in_init:
            return
        b = self.model(e.broker, e)
        self.step(e, report=True, **{f"broker{b}": {"log": {LENGTH_KEY: e.fields["offset"]}}})

    def finish(self) -> list[dict[str, Any]]:
        """The steps, every ``#`` helper key but the documented ones dropped."""
        for step in self.steps:
            for key in ("#epoch", "#leader"):
                step.pop(key, None)
            if step.get("label") == "":
                step.pop("label")
        return self.steps


def confirming_brokers(events: Sequence[LogEvent]) -> set[int]:
    """Brokers whose ISR changes are confirmed by an ``ISR updated to`` line."""
    return {e.broker for e in events if e.kind == "isr_updated"}


# ---------------------------------------------------------------------------- hidden steps
_parse = cache(parse)
"""``labels.parse``, memoised (a space has few labels; the rule reads one per hidden step)."""


def _delivered_to(step: Step) -> int | None:
    """The broker a ``Deliver`` / ``DeliverCopy`` of a LeaderAndIsr request goes to."""
    r = step.request
    if step.action.startswith("Deliver") and r is not None and r.kind == KINDS[LEADER_AND_ISR]:
        return r.dest
    return None


def hidden_rule(
    variables: Callable[[Any], Mapping[str, Any]], covered: Mapping[int, Mapping[str, str]],
    family: str, names: Mapping[int, int] | None = None,
) -> HiddenRule:
    """Whether a hidden step of the ``kafka`` model could go unlogged, given the model
    brokers whose logs cover that time (``covered``: broker -> category -> level) and the
    logging era (``family``).

    A step is refused (with the line it would have written) when a covered broker, in a log
    of the category and level that shows it, would have logged: a change of its ISR while
    it leads (``Shrinking`` / ``Expanding ISR``, server log, INFO); its leadership or leader
    epoch changing (``starts at Leader Epoch``, server log, INFO, for a new leader from 0.11
    to 2.6; ``Leader/Follower ... starts at leader epoch``, state-change log, INFO, from
    2.7; ``received LeaderAndIsr``, state-change log, TRACE, always); a LeaderAndIsr request
    it ignores (state-change log, WARN); a start-up (server log, INFO); a truncation of its
    log (server log, INFO); a change of its HW while it leads (server log, DEBUG).
    Everything else (fetches that change no ISR, produce requests, ticks, crashes, lost
    requests, flushes, HW checkpoints, the controller's steps) may hide.  ``names`` gives the
    Kafka id of each model broker, for the messages.
    """
    kafka_id = {m: k for k, m in (names or {}).items()}

    def who(b: int) -> str:
        return f"broker {kafka_id[b]} (model broker {b})" if b in kafka_id else f"broker {b}"

    def shows(b: int, category: str, level: str) -> bool:
        have = covered.get(b, {}).get(category)
        return have is not None and LEVELS.index(have) <= LEVELS.index(level)

    def rule(label: str, state: Any, succ: Any) -> str | None:
        if not covered:
            return None
        step = _parse(label)
        if step.action == "Restart" and step.broker is not None:
            b = step.broker
            if shows(b, SERVER, "INFO"):
                return f"{who(b)} would have logged its start-up ('started') at INFO"
            return None
        before, after = variables(state), variables(succ)
        deliver = _delivered_to(step)
        for b in sorted(covered):
            old, new = before.get(f"broker{b}", {}), after.get(f"broker{b}", {})
            if not new.get("alive", True) or not old.get("alive", True):
                continue
            why = _logged(b, old, new, family, shows, kafka_id)
            if why:
                return f"{who(b)} would have logged {why}"
            if deliver == b:
                if shows(b, STATE, "TRACE"):
                    return (f"{who(b)} would have logged 'Received LeaderAndIsr request' "
                            f"at TRACE (state.change.logger)")
                if old == new and shows(b, STATE, "WARN"):
                    return (f"{who(b)} would have logged 'Ignoring LeaderAndIsr request' "
                            f"at WARN (state.change.logger)")
        return None

    return rule


def _logged(b: int, old: Mapping[str, Any], new: Mapping[str, Any], family: str,
            shows: Callable[[int, str, str], bool], kafka_id: Mapping[int, int]) -> str | None:
    """The line broker ``b`` would have written for the change ``old`` -> ``new`` (broker
    ids in it named by ``kafka_id``)."""

    def ids(isr: Sequence[int]) -> str:
        return ",".join(str(kafka_id.get(x, x)) for x in isr)

    leads = old.get("leader") == b and new.get("leader") == b
    same_epoch = old.get("leader_epoch") == new.get("leader_epoch")
    if leads and same_epoch and old.get("isr") != new.get("isr") and shows(b, SERVER, "INFO"):
        verb = "Shrinking" if len(new.get("isr", ())) < len(old.get("isr", ())) else "Expanding"
        return (f"'{verb} ISR from {ids(old.get('isr', ()))} to {ids(new.get('isr', ()))}' "
                f"at INFO (kafka.cluster.Partition)")
    if (old.get("leader") != new.get("leader") or not same_epoch) and \
            new.get("leader_epoch", -1) >= 0:
        becomes_leader = new.get("leader") == b
        role = "Leader" if becomes_leader else "Follower"
        line = (f"'{role} ... starts at leader epoch "
                f"{new.get('leader_epoch')}' at INFO")
        if family == "2.7+" and shows(b, STATE, "INFO"):
            return line + " (state.change.logger)"
        if family == "0.11+" and becomes_leader and shows(b, SERVER, "INFO"):
            return line + " (kafka.cluster.Partition)"
    if len(new.get("log", ())) < len(old.get("log", ())) and shows(b, SERVER, "INFO"):
        return (f"'Truncating to offset {len(new['log'])}' at "
                f"INFO (kafka.log.Log)")
    if new.get("leader") == b and old.get("hw") != new.get("hw") and shows(b, SERVER, "DEBUG"):
        return (f"'High watermark updated to {new.get('hw')}' "
                f"at DEBUG (kafka.cluster.Partition)")
    return None
