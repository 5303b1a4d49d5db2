"""A local Kafka 4.x KRaft cluster (one controller, three brokers) for isrlab's manual runs.

``--kafka-home`` is a Kafka 4.x binary distribution as Apache publishes it
(https://kafka.apache.org/downloads, ``kafka_2.13-4.0.0.tgz`` unpacked); this script writes
the configurations into ``--work``, formats the storage, starts and stops the JVMs, and
drives the scenarios with Kafka's own command-line tools.  Node ids: brokers 0, 1, 2 and
the controller 3.  Nothing here is needed by the test suite.

    python -m tools.real_cluster.cluster --kafka-home K --work W configure [--proxy]
    python -m tools.real_cluster.cluster --kafka-home K --work W format
    python -m tools.real_cluster.cluster --kafka-home K --work W start all
    python -m tools.real_cluster.cluster --kafka-home K --work W stop 0   # controlled shutdown
    python -m tools.real_cluster.cluster --kafka-home K --work W kill 0   # kill -9
    python -m tools.real_cluster.cluster --kafka-home K --work W down
    python -m tools.real_cluster.cluster --kafka-home K --work W scenario oracle

See tools/real_cluster/README.md.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path

BROKERS = (0, 1, 2)
CONTROLLER = 3
NODES = (*BROKERS, CONTROLLER)


@dataclass(frozen=True, slots=True)
class Layout:
    """Ports and settings of one cluster; saved as ``W/cluster.json`` by ``configure``."""

    base_port: int = 29000
    lag_ms: int = 3000
    session_ms: int = 9000
    heap: str = "-Xmx256m -Xms64m"
    proxy: bool = False
    partition_debug: bool = True

    def broker_port(self, broker: int) -> int:
        """The port broker ``broker`` listens on (PLAINTEXT: clients and replication)."""
        return self.base_port + broker

    @property
    def controller_port(self) -> int:
        """The controller's CONTROLLER listener."""
        return self.base_port + 93

    @property
    def controller_proxy_port(self) -> int:
        """The proxy's port in front of the controller (with ``proxy``)."""
        return self.base_port + 193

    @property
    def broker0_proxy_port(self) -> int:
        """The proxy's port in front of broker 0, which broker 0 advertises (with ``proxy``)."""
        return self.base_port + 100

    def controller_endpoint(self) -> int:
        """The controller port every node is told (the proxy's when there is one)."""
        return self.controller_proxy_port if self.proxy else self.controller_port

    def advertised_port(self, broker: int) -> int:
        """The port broker ``broker`` advertises to clients and other brokers."""
        if self.proxy and broker == 0:
            return self.broker0_proxy_port
        return self.broker_port(broker)

    def bootstrap(self) -> str:
        """A bootstrap-server list for the CLI tools."""
        return ",".join(f"localhost:{self.broker_port(b)}" for b in BROKERS)


def properties(layout: Layout, node: int, work: Path) -> str:
    """The ``server.properties`` of ``node``: KRaft, static quorum of the one controller.

    Settings chosen for the scenarios: ``replica.lag.time.max.ms`` (the ISR-shrink delay)
    and ``broker.session.timeout.ms`` from the layout, unclean election off, one partition
    and replication factor 3 for the internal topics' defaults reduced to one partition
    (so their lines stay few).
    """
    common = {
        "node.id": str(node),
        "controller.quorum.voters": f"{CONTROLLER}@localhost:{layout.controller_endpoint()}",
        "controller.listener.names": "CONTROLLER",
        "log.dirs": str(work / "data" / str(node)),
    }
    if node == CONTROLLER:
        specific = {
            "process.roles": "controller",
            "listeners": f"CONTROLLER://localhost:{layout.controller_port}",
            "listener.security.protocol.map": "CONTROLLER:PLAINTEXT",
            "broker.session.timeout.ms": str(layout.session_ms),
            "unclean.leader.election.enable": "false",
        }
        if layout.proxy:
            specific["advertised.listeners"] = (
                f"CONTROLLER://localhost:{layout.controller_proxy_port}"
            )
    else:
        specific = {
            "process.roles": "broker",
            "listeners": f"PLAINTEXT://localhost:{layout.broker_port(node)}",
            "advertised.listeners": f"PLAINTEXT://localhost:{layout.advertised_port(node)}",
            "inter.broker.listener.name": "PLAINTEXT",
            "listener.security.protocol.map": "PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT",
            "replica.lag.time.max.ms": str(layout.lag_ms),
            "unclean.leader.election.enable": "false",
            "num.partitions": "1",
            "default.replication.factor": "3",
            "offsets.topic.num.partitions": "1",
            "offsets.topic.replication.factor": "3",
            "transaction.state.log.num.partitions": "1",
            "transaction.state.log.replication.factor": "3",
            "transaction.state.log.min.isr": "2",
            "share.coordinator.state.topic.num.partitions": "1",
            "group.initial.rebalance.delay.ms": "0",
            "auto.create.topics.enable": "false",
        }
    lines = [f"{key}={value}" for key, value in {**common, **specific}.items()]
    return "\n".join(lines) + "\n"


LOG4J2 = """Configuration:
  Properties:
    Property:
      - name: "logPattern"
        value: "[%d] %p %m (%c)%n"
  Appenders:
    RollingFile:
      - name: KafkaAppender
        fileName: "{dir}/server.log"
        filePattern: "{dir}/server.log.%i"
        PatternLayout:
          pattern: "${{logPattern}}"
        SizeBasedTriggeringPolicy:
          size: "100MB"
      - name: StateChangeAppender
        fileName: "{dir}/state-change.log"
        filePattern: "{dir}/state-change.log.%i"
        PatternLayout:
          pattern: "${{logPattern}}"
        SizeBasedTriggeringPolicy:
          size: "100MB"
      - name: ControllerAppender
        fileName: "{dir}/controller.log"
        filePattern: "{dir}/controller.log.%i"
        PatternLayout:
          pattern: "${{logPattern}}"
        SizeBasedTriggeringPolicy:
          size: "100MB"
  Loggers:
    Root:
      level: INFO
      AppenderRef:
        - ref: KafkaAppender
    Logger:
      - name: kafka.cluster.Partition
        level: {partition_level}
      - name: org.apache.kafka.controller
        level: INFO
        additivity: false
        AppenderRef:
          ref: ControllerAppender
      - name: state.change.logger
        level: INFO
        additivity: false
        AppenderRef:
          ref: StateChangeAppender
"""


def log4j2(layout: Layout, log_dir: Path) -> str:
    """The log4j2 configuration of one node: Kafka's files (``server.log``,
    ``state-change.log``, ``controller.log``) in ``log_dir``, with ``kafka.cluster.Partition``
    at DEBUG when the layout asks (its "Submitting ISR state change" and "Ignoring failed
    ISR update" lines are DEBUG)."""
    level = "DEBUG" if layout.partition_debug else "INFO"
    return LOG4J2.format(dir=log_dir, partition_level=level)


class Cluster:
    """The cluster in ``work`` run from the distribution in ``kafka_home``."""

    def __init__(self, kafka_home: Path, work: Path) -> None:
        self.home = kafka_home
        self.work = work

    # -- files -------------------------------------------------------------------------
    def layout(self) -> Layout:
        """The layout ``configure`` saved."""
        saved = json.loads((self.work / "cluster.json").read_text(encoding="utf-8"))
        return Layout(**saved)

    def config(self, node: int) -> Path:
        """The properties file of ``node``."""
        return self.work / "config" / f"node-{node}.properties"

    def log_dir(self, node: int) -> Path:
        """Where ``node`` writes its logs."""
        return self.work / "logs" / str(node)

    def pid_file(self, node: int) -> Path:
        """Where the JVM's process id of ``node`` is kept while it runs."""
        return self.work / "pids" / f"node-{node}.pid"

    def configure(self, layout: Layout) -> None:
        """Write ``cluster.json``, every node's properties and log4j2 configuration."""
        for sub in ("config", "logs", "pids", "data"):
            (self.work / sub).mkdir(parents=True, exist_ok=True)
        (self.work / "cluster.json").write_text(json.dumps(asdict(layout), indent=1) + "\n")
        for node in NODES:
            self.config(node).write_text(properties(layout, node, self.work))
            self.log_dir(node).mkdir(parents=True, exist_ok=True)
            (self.work / "config" / f"log4j2-{node}.yaml").write_text(
                log4j2(layout, self.log_dir(node))
            )

    # -- processes ---------------------------------------------------------------------
    def env(self, node: int | None) -> dict[str, str]:
        """The environment of a Kafka script: small heap, this node's log4j2 and log dir."""
        env = dict(os.environ)
        layout = self.layout()
        env["KAFKA_HEAP_OPTS"] = layout.heap if node is not None else "-Xmx128m"
        env["KAFKA_JVM_PERFORMANCE_OPTS"] = "-XX:+UseSerialGC -XX:TieredStopAtLevel=1 -Xss512k"
        if node is not None:
            env["LOG_DIR"] = str(self.log_dir(node))
            env["KAFKA_LOG4J_OPTS"] = (
                f"-Dlog4j2.configurationFile={self.work / 'config' / f'log4j2-{node}.yaml'}"
            )
        return env

    def tool(self, name: str, *args: str, timeout: float = 120.0, stdin: str | None = None) -> str:
        """Run ``bin/NAME`` of the distribution; return its standard output and error."""
        done = subprocess.run(
            [str(self.home / "bin" / name), *args],
            env=self.env(None),
            input=stdin,
            capture_output=True,
            text=True,
            timeout=timeout,
            check=False,
        )
        if done.returncode != 0:
            raise RuntimeError(f"{name} {' '.join(args)} exited {done.returncode}: {done.stderr}")
        return done.stdout + done.stderr

    def format(self) -> str:
        """``kafka-storage.sh format`` every node with one cluster id (the data is wiped)."""
        cluster_id = self.tool("kafka-storage.sh", "random-uuid").strip()
        for node in NODES:
            data = self.work / "data" / str(node)
            if data.exists():
                subprocess.run(["rm", "-rf", str(data)], check=True)
            self.tool(
                "kafka-storage.sh", "format", "-t", cluster_id, "-c", str(self.config(node))
            )
        return cluster_id

    def pid(self, node: int) -> int | None:
        """The running JVM of ``node``, if any."""
        try:
            pid = int(self.pid_file(node).read_text())
        except (FileNotFoundError, ValueError):
            return None
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return None
        return pid

    def start(self, node: int) -> int:
        """Start ``node`` (``kafka-server-start.sh``, which execs the JVM); return its pid."""
        running = self.pid(node)
        if running is not None:
            return running
        out = (self.log_dir(node) / "stdout.log").open("a")
        process = subprocess.Popen(
            [str(self.home / "bin" / "kafka-server-start.sh"), str(self.config(node))],
            env=self.env(node),
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        self.pid_file(node).write_text(str(process.pid))
        return process.pid

    def signal(self, node: int, sig: signal.Signals) -> bool:
        """Send ``sig`` to ``node``'s JVM; False when it is not running."""
        pid = self.pid(node)
        if pid is None:
            return False
        os.kill(pid, sig)
        return True

    def wait_gone(self, node: int, timeout: float = 60.0) -> bool:
        """Wait until ``node``'s JVM has exited."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            pid = self.pid(node)
            if pid is None:
                return True
            with contextlib.suppress(ChildProcessError):
                os.waitpid(pid, os.WNOHANG)  # reap it when this process started it
            time.sleep(0.2)
        return False

    def stop(self, node: int) -> None:
        """SIGTERM: a broker does a controlled shutdown (KIP-631's ``wantShutDown``)."""
        if self.signal(node, signal.SIGTERM):
            self.wait_gone(node)

    def kill(self, node: int) -> None:
        """SIGKILL (``kill -9``): no controlled shutdown, the session must time out."""
        if self.signal(node, signal.SIGKILL):
            self.wait_gone(node, 10.0)

    def down(self) -> None:
        """Stop every node, brokers first; kill what has not exited after a minute."""
        for node in (*BROKERS, CONTROLLER):
            self.signal(node, signal.SIGTERM)
        for node in NODES:
            if not self.wait_gone(node):
                self.kill(node)

    # -- observation -------------------------------------------------------------------
    def log_text(self, node: int, name: str = "state-change.log") -> str:
        """The text of one of ``node``'s log files (empty when missing)."""
        path = self.log_dir(node) / name
        return path.read_text(errors="replace") if path.exists() else ""

    def wait_for_log(
        self, node: int, name: str, needle: str, timeout: float = 60.0, after: int = 0
    ) -> str:
        """Wait until ``needle`` appears in ``node``'s ``name`` past character ``after``;
        return the line."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            text = self.log_text(node, name)[after:]
            for line in text.splitlines():
                if needle in line:
                    return line
            time.sleep(0.2)
        raise TimeoutError(f"node {node} {name}: no line with {needle!r} in {timeout:.0f} s")

    def describe(self, topic: str) -> str:
        """``kafka-topics.sh --describe`` of ``topic``."""
        layout = self.layout()
        return self.tool(
            "kafka-topics.sh", "--bootstrap-server", layout.bootstrap(), "--describe",
            "--topic", topic,
        )

    def create_topic(self, topic: str, min_isr: int = 2, replicas: str = "0:1:2") -> str:
        """Create ``topic``: one partition, ``replicas`` (``--replica-assignment``),
        ``min.insync.replicas``."""
        layout = self.layout()
        return self.tool(
            "kafka-topics.sh", "--bootstrap-server", layout.bootstrap(), "--create",
            "--topic", topic, "--replica-assignment", replicas,
            "--config", f"min.insync.replicas={min_isr}",
        )

    def produce(self, topic: str, values: Sequence[str], timeout_ms: int = 20000) -> str:
        """``kafka-console-producer.sh`` with ``acks=all``: one record per value.  The tool
        exits 0 even when a send fails, so its "Error when sending message" (logged to the
        standard error) raises ``RuntimeError``: a return means every record was acknowledged.
        """
        layout = self.layout()
        out = self.tool(
            "kafka-console-producer.sh", "--bootstrap-server", layout.bootstrap(),
            "--topic", topic, "--producer-property", "acks=all",
            "--producer-property", f"delivery.timeout.ms={timeout_ms}",
            "--producer-property", f"request.timeout.ms={min(timeout_ms, 10000)}",
            "--producer-property", "enable.idempotence=false",
            stdin="\n".join(values) + "\n",
        )
        if "Error when sending message" in out:
            raise RuntimeError(f"a record of {values} was not acknowledged: {out.strip()}")
        return out

    def consume(self, topic: str, timeout_ms: int = 8000) -> list[str]:
        """Every record of partition 0 from the beginning (``kafka-console-consumer.sh``
        with ``--partition 0 --offset earliest``, no consumer group), as ``offset:value``."""
        layout = self.layout()
        out = self.tool(
            "kafka-console-consumer.sh", "--bootstrap-server", layout.bootstrap(),
            "--topic", topic, "--partition", "0", "--offset", "earliest",
            "--timeout-ms", str(timeout_ms), "--property", "print.offset=true",
            timeout=timeout_ms / 1000 + 60,
        )
        return [line for line in out.splitlines() if line.startswith("Offset:")]

    def offsets(self, topic: str) -> str:
        """``kafka-get-offsets.sh`` (the latest offset: the HW for a plain consumer)."""
        layout = self.layout()
        return self.tool(
            "kafka-get-offsets.sh", "--bootstrap-server", layout.bootstrap(), "--topic", topic
        ).strip()


def _listening(port: int) -> bool:
    """Whether something accepts connections on ``localhost:port``."""
    with socket.socket() as probe:
        probe.settimeout(1.0)
        return probe.connect_ex(("127.0.0.1", port)) == 0


def say(text: str) -> None:
    """Print one timestamped progress line."""
    print(time.strftime("%H:%M:%S", time.gmtime()) + " " + text, flush=True)


def wait_until(check: Callable[[], bool], timeout: float, what: str) -> None:
    """Poll ``check`` every half second until it holds; ``TimeoutError`` naming ``what``."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if check():
            return
        time.sleep(0.5)
    raise TimeoutError(f"{what}: not within {timeout:.0f} s")


def isr_of(description: str) -> str:
    """The ``Isr:`` field of partition 0 in a ``kafka-topics.sh --describe`` output."""
    for line in description.splitlines():
        if "Partition: 0" in line and "Isr:" in line:
            return line.split("Isr:")[1].split()[0]
    return ""


def scenario_oracle(cluster: Cluster, topic: str = "oracle") -> None:
    """The oracle fixture's history on a running cluster: create ``topic`` (replicas
    [0, 1, 2], ``min.insync.replicas=2``); produce; SIGSTOP follower 2 until the ISR
    shrinks, SIGCONT it until it is back; produce; controlled shutdown of the leader (0) and
    its restart; produce; ``kill -9`` of the new leader and its restart; consume."""
    lag = cluster.layout().lag_ms / 1000
    say(cluster.create_topic(topic).strip())
    wait_until(lambda: isr_of(cluster.describe(topic)) == "0,1,2", 60, "ISR 0,1,2")
    say("describe: " + cluster.describe(topic).strip().splitlines()[-1])
    cluster.produce(topic, ["m0", "m1", "m2"])
    say("produced m0-m2: " + cluster.offsets(topic))
    cluster.signal(2, signal.SIGSTOP)
    say("SIGSTOP broker 2")
    wait_until(lambda: isr_of(cluster.describe(topic)) == "0,1", 4 * lag + 30, "ISR 0,1")
    say("describe: " + cluster.describe(topic).strip().splitlines()[-1])
    cluster.produce(topic, ["m3", "m4"])
    say("produced m3-m4 with broker 2 stopped: " + cluster.offsets(topic))
    cluster.signal(2, signal.SIGCONT)
    say("SIGCONT broker 2")
    wait_until(lambda: isr_of(cluster.describe(topic)) == "0,1,2", 60, "ISR 0,1,2 again")
    say("describe: " + cluster.describe(topic).strip().splitlines()[-1])
    cluster.stop(0)
    say("controlled shutdown of broker 0 done")
    wait_until(lambda: "Leader: 0" not in cluster.describe(topic), 60, "a new leader")
    say("describe: " + cluster.describe(topic).strip().splitlines()[-1])
    cluster.produce(topic, ["m5", "m6"])
    say("produced m5-m6: " + cluster.offsets(topic))
    cluster.start(0)
    wait_until(lambda: isr_of(cluster.describe(topic)) == "0,1,2"
               or isr_of(cluster.describe(topic)) == "1,2,0", 120, "broker 0 back in the ISR")
    say("broker 0 restarted: " + cluster.describe(topic).strip().splitlines()[-1])
    leader = int(cluster.describe(topic).split("Leader:")[1].split()[0])
    cluster.kill(leader)
    say(f"kill -9 broker {leader}")
    wait_until(lambda: f"Leader: {leader}" not in cluster.describe(topic), 120,
               "a leader after the kill")
    say("describe: " + cluster.describe(topic).strip().splitlines()[-1])
    cluster.produce(topic, ["m7"])
    say("produced m7: " + cluster.offsets(topic))
    cluster.start(leader)
    wait_until(lambda: len(isr_of(cluster.describe(topic)).split(",")) == 3, 120,
               f"broker {leader} back in the ISR")
    say("describe: " + cluster.describe(topic).strip().splitlines()[-1])
    say("consumed: " + " ".join(cluster.consume(topic)))


class Rules:
    """The proxy's hold-rules file (``W/rules``, read by ``kafka_proxy``)."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.active: list[str] = []

    def _write(self) -> None:
        self.path.write_text("".join(f"{rule}\n" for rule in self.active))
        time.sleep(0.2)  # the proxy re-reads the file every 50 ms

    def hold(self, rule: str) -> None:
        """Add ``rule`` (``hold API_KEY CLIENT_PREFIX``)."""
        self.active.append(rule)
        self._write()
        say(f"proxy: + {rule}")

    def release(self, rule: str) -> None:
        """Remove ``rule``: what it held is forwarded."""
        self.active.remove(rule)
        self._write()
        say(f"proxy: - {rule}")


HOLD_METADATA = "hold 1 raft-client-0"
"""Broker 0's metadata-log fetches (its Raft client's FETCH to the controller)."""
HOLD_ALTER_PARTITION = "hold 56 0"
"""Broker 0's AlterPartition requests (its channel's client id is the broker id)."""
HOLD_FOLLOWER = "hold 1 broker-1-fetcher"
"""Broker 1's replication fetches from broker 0."""


def log_size(cluster: Cluster, node: int, name: str) -> int:
    """The current length of one of ``node``'s logs (to wait for lines written after it)."""
    return len(cluster.log_text(node, name))


def scenario_equal_epoch(cluster: Cluster, topic: str = "t", two_replicas: bool = False) -> None:
    """docs/findings/kraft-equal-epoch-delta.md on a running cluster (``configure --proxy``,
    ``kafka_proxy`` running with ``--rules W/rules``): leader 0, ISR {0,1,2}; broker 1's
    fetches are held until broker 0 shrinks the ISR to {0,2} (learnt from the AlterPartition
    answer while broker 0's metadata fetches are held); broker 1 catches up, broker 0
    proposes {0,1,2} (the AlterPartition held in the proxy); broker 1's fetches are held
    again; broker 0 publishes the shrink's record; its metadata is held again and the
    expansion released (the controller accepts it); after ``replica.lag.time.max.ms`` a
    record is produced with ``acks=all``; broker 0 is killed; the controller elects broker 1;
    a consumer reads the partition.  ``two_replicas``: the findings' two-broker form, replicas
    [0, 1] and ``min.insync.replicas=1`` (the reduced ISR is {0})."""
    rules = Rules(cluster.work / "rules")
    rules.path.write_text("")
    try:
        _equal_epoch_steps(cluster, rules, topic, two_replicas)
    finally:
        rules.path.write_text("")


def _equal_epoch_steps(cluster: Cluster, rules: Rules, topic: str, two_replicas: bool) -> None:
    layout = cluster.layout()
    replicas, full, reduced = ("0:1", "0,1", "0") if two_replicas else ("0:1:2", "0,1,2", "0,2")
    say(cluster.create_topic(topic, min_isr=1 if two_replicas else 2, replicas=replicas).strip())
    wait_until(lambda: isr_of(cluster.describe(topic)) == full, 60, f"ISR {full}")
    say("describe: " + cluster.describe(topic).strip().splitlines()[-1])
    time.sleep(2)
    server0 = log_size(cluster, 0, "server.log")
    rules.hold(HOLD_METADATA)
    rules.hold(HOLD_FOLLOWER)
    # A follower at the leader's LEO is in sync however long it is silent: write a record.
    say("produce r0 (acks=all): " + cluster.produce(topic, ["r0"]).strip())
    say(cluster.wait_for_log(0, "server.log", f"ISR updated to {reduced} ", 60, server0))
    rules.hold(HOLD_ALTER_PARTITION)
    server0 = log_size(cluster, 0, "server.log")
    rules.release(HOLD_FOLLOWER)
    say(cluster.wait_for_log(0, "server.log", "Submitting ISR state change PendingExpandIsr",
                             30, server0))
    rules.hold(HOLD_FOLLOWER)
    change0 = log_size(cluster, 0, "state-change.log")
    rules.release(HOLD_METADATA)
    say(cluster.wait_for_log(0, "state-change.log", "Skipped the become-leader", 30, change0))
    rules.hold(HOLD_METADATA)
    # A metadata fetch forwarded before the hold may be parked at the controller (a long
    # poll) and would carry the expansion's record: let it be answered first.
    time.sleep(2)
    server0 = log_size(cluster, 0, "server.log")
    rules.release(HOLD_ALTER_PARTITION)
    say(cluster.wait_for_log(0, "server.log", "Ignoring failed ISR update", 30, server0))
    time.sleep(layout.lag_ms / 1000 + 2)
    say("produce m0 (acks=all): " + cluster.produce(topic, ["m0"]).strip())
    say("offsets: " + cluster.offsets(topic))
    cluster.kill(0)
    say("kill -9 broker 0")
    wait_until(lambda: "Leader: 0" not in cluster.describe(topic), 120, "a new leader")
    say("describe: " + cluster.describe(topic).strip().splitlines()[-1])
    rules.release(HOLD_FOLLOWER)
    rules.release(HOLD_METADATA)
    say("offsets: " + cluster.offsets(topic))
    say("consumed: " + " ".join(cluster.consume(topic)))


def main(argv: Sequence[str] | None = None) -> int:
    """The command line; errors print one line and exit 2."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--kafka-home", type=Path, required=True,
                        help="an unpacked Kafka 4.x distribution from Apache")
    parser.add_argument("--work", type=Path, required=True,
                        help="the cluster's directory (configs, data, logs)")
    sub = parser.add_subparsers(dest="command", required=True)
    configure = sub.add_parser("configure", help="write every node's configuration")
    configure.add_argument("--base-port", type=int, default=Layout().base_port)
    configure.add_argument("--lag-ms", type=int, default=Layout().lag_ms)
    configure.add_argument("--session-ms", type=int, default=Layout().session_ms)
    configure.add_argument("--proxy", action="store_true",
                           help="route the controller and broker 0 through kafka_proxy")
    sub.add_parser("format", help="format every node's storage (wipes the data)")
    for name in ("start", "stop", "kill", "pause", "resume"):
        cmd = sub.add_parser(name)
        cmd.add_argument("node", help="0, 1, 2 (brokers), 3 (controller) or all")
    sub.add_parser("down", help="stop every node")
    sub.add_parser("status", help="which nodes run")
    scenario = sub.add_parser("scenario", help="run a scripted history")
    scenario.add_argument("name", choices=["oracle", "equal-epoch"])
    scenario.add_argument("--topic", help="the topic to create (default: oracle / t)")
    scenario.add_argument(
        "--two-replicas",
        action="store_true",
        help="equal-epoch: replicas [0, 1] and min.insync.replicas=1 (the two-broker form)",
    )
    args = parser.parse_args(argv)
    if not (args.kafka_home / "bin" / "kafka-server-start.sh").is_file():
        print(f"cluster: error: {args.kafka_home}: no bin/kafka-server-start.sh (not a Kafka "
              "distribution)", file=sys.stderr)
        return 2
    cluster = Cluster(args.kafka_home.resolve(), args.work.resolve())
    if args.command == "configure":
        cluster.configure(Layout(base_port=args.base_port, lag_ms=args.lag_ms,
                                 session_ms=args.session_ms, proxy=args.proxy))
        return 0
    if not (cluster.work / "cluster.json").is_file():
        print(f"cluster: error: {cluster.work}: not configured (run configure first)",
              file=sys.stderr)
        return 2
    if args.command == "format":
        say("cluster id " + cluster.format())
    elif args.command in ("start", "stop", "kill", "pause", "resume"):
        nodes = (CONTROLLER, *BROKERS) if args.node == "all" else (int(args.node),)
        for node in nodes:
            if args.command == "start":
                say(f"node {node} pid {cluster.start(node)}")
            elif args.command == "stop":
                cluster.stop(node)
            elif args.command == "kill":
                cluster.kill(node)
            else:
                sig = signal.SIGSTOP if args.command == "pause" else signal.SIGCONT
                cluster.signal(node, sig)
    elif args.command == "down":
        cluster.down()
    elif args.command == "status":
        for node in NODES:
            print(f"node {node}: {cluster.pid(node) or 'down'}")
    elif args.command == "scenario" and args.name == "oracle":
        scenario_oracle(cluster, args.topic or "oracle")
    elif args.command == "scenario":
        layout = cluster.layout()
        if not layout.proxy or not _listening(layout.controller_proxy_port):
            print(
                f"cluster: error: scenario equal-epoch needs configure --proxy and kafka_proxy "
                f"listening on {layout.controller_proxy_port} (tools/real_cluster/README.md)",
                file=sys.stderr,
            )
            return 2
        scenario_equal_epoch(cluster, args.topic or "t", args.two_replicas)
    return 0


if __name__ == "__main__":
    sys.exit(main())
