"""A TCP proxy that understands Kafka's request framing and can hold chosen requests.

Each listening port forwards to one upstream address.  In the client-to-server direction the
proxy cuts the byte stream into Kafka frames (a 4-byte big-endian size, then the request:
``api_key`` int16, ``api_version`` int16, ``correlation_id`` int32, ``client_id`` nullable
string, as in every request header version from 1; ``ControlledShutdown`` v0's header v0
has no client id) and forwards them one by one.  A request matching an active *hold rule*
(an API key and a client-id prefix) waits in the proxy, and every later request of the same
connection waits behind it, so the order Kafka relies on (one connection's responses come
back in request order) is kept.  Responses are passed through unchanged (and logged with
the API of their request).

The rules live in a text file that the proxy re-reads every 50 ms, one rule a line::

    hold 1 raft-client-0        # FETCH requests of broker 0's metadata (Raft) client
    hold 56 broker-0            # AlterPartition requests of broker 0's channels
    hold 1 broker-1-fetcher     # broker 1's replication fetches

Removing a line releases what it held.  Every frame is logged (time, port, connection,
direction, API name, correlation id, client id, held or forwarded), which is the proxy's
evidence for what reached the controller and when.

Usage::

    python -m tools.real_cluster.kafka_proxy --rules FILE --log FILE \\
        --route 29193=localhost:29093 --route 29100=localhost:29000
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import functools
import struct
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TextIO

API_NAMES: dict[int, str] = {
    0: "Produce",
    1: "Fetch",
    2: "ListOffsets",
    3: "Metadata",
    7: "ControlledShutdown",
    18: "ApiVersions",
    19: "CreateTopics",
    52: "Vote",
    53: "BeginQuorumEpoch",
    54: "EndQuorumEpoch",
    55: "DescribeQuorum",
    56: "AlterPartition",
    62: "BrokerRegistration",
    63: "BrokerHeartbeat",
    67: "AllocateProducerIds",
    74: "Envelope",
    80: "AddRaftVoter",
}
"""The names of the API keys this proxy is likely to see (Kafka's ``ApiKeys``)."""

MAX_FRAME = 100 * 1024 * 1024
"""Kafka's default ``socket.request.max.bytes`` is 100 MiB; a larger size is not Kafka."""


class FramingError(ValueError):
    """The byte stream is not Kafka's request framing."""


@dataclass(frozen=True, slots=True)
class RequestHeader:
    """The fields of a Kafka request header the proxy uses (``RequestHeader.java``)."""

    api_key: int
    api_version: int
    correlation_id: int
    client_id: str | None


def parse_request_header(frame: bytes) -> RequestHeader:
    """Read the header of one request frame (the bytes after the 4-byte size).

    The header is ``api_key`` int16, ``api_version`` int16, ``correlation_id`` int32 and,
    in header versions 1 and 2 (every request but ControlledShutdown v0), ``client_id`` as
    a nullable string (int16 length, -1 for null; header v2 keeps this non-compact form and
    adds tagged fields after it, which the proxy does not need).
    """
    if len(frame) < 8:
        raise FramingError(f"request of {len(frame)} bytes is shorter than a header (8)")
    api_key, api_version, correlation_id = struct.unpack_from(">hhi", frame, 0)
    if api_key == 7 and api_version == 0:
        return RequestHeader(api_key, api_version, correlation_id, None)
    if len(frame) < 10:
        return RequestHeader(api_key, api_version, correlation_id, None)
    (length,) = struct.unpack_from(">h", frame, 8)
    if length < 0:
        return RequestHeader(api_key, api_version, correlation_id, None)
    if 10 + length > len(frame):
        raise FramingError(f"client id of {length} bytes runs past the request's end")
    client_id = frame[10 : 10 + length].decode("utf-8", errors="replace")
    return RequestHeader(api_key, api_version, correlation_id, client_id)


class FrameBuffer:
    """Cuts a byte stream into Kafka frames (4-byte big-endian size, then that many bytes)."""

    def __init__(self) -> None:
        self._data = bytearray()

    def feed(self, chunk: bytes) -> list[bytes]:
        """Add bytes; return every frame now complete (each without its size prefix)."""
        self._data.extend(chunk)
        frames: list[bytes] = []
        while len(self._data) >= 4:
            (size,) = struct.unpack_from(">i", self._data, 0)
            if size < 0 or size > MAX_FRAME:
                raise FramingError(f"frame size {size} is not Kafka's (0..{MAX_FRAME})")
            if len(self._data) < 4 + size:
                break
            frames.append(bytes(self._data[4 : 4 + size]))
            del self._data[: 4 + size]
        return frames

    @property
    def pending(self) -> int:
        """Bytes received but not yet part of a complete frame."""
        return len(self._data)


@dataclass(frozen=True, slots=True)
class HoldRule:
    """Hold requests of ``api_key`` whose client id starts with ``client_prefix``."""

    api_key: int
    client_prefix: str

    def matches(self, header: RequestHeader) -> bool:
        """Whether this rule holds the request with ``header``."""
        return header.api_key == self.api_key and (header.client_id or "").startswith(
            self.client_prefix
        )


def parse_rules(text: str) -> list[HoldRule]:
    """Read a rules file: ``hold API_KEY CLIENT_ID_PREFIX`` a line; ``#`` starts a comment.

    A prefix of ``*`` matches every client.  Raises ``ValueError`` naming the line on
    anything else.
    """
    rules: list[HoldRule] = []
    for number, raw in enumerate(text.splitlines(), start=1):
        line = raw.split("#", 1)[0].strip()
        if not line:
            continue
        words = line.split()
        if len(words) != 3 or words[0] != "hold" or not words[1].isdigit():
            raise ValueError(f"rules line {number}: expected 'hold API_KEY PREFIX', got {raw!r}")
        prefix = "" if words[2] == "*" else words[2]
        rules.append(HoldRule(int(words[1]), prefix))
    return rules


def parse_response_correlation(frame: bytes) -> int:
    """The correlation id of one response frame (the first int32 of every response header
    version)."""
    if len(frame) < 4:
        raise FramingError(f"response of {len(frame)} bytes is shorter than a header (4)")
    (correlation_id,) = struct.unpack_from(">i", frame, 0)
    return int(correlation_id)


def frame_bytes(payload: bytes) -> bytes:
    """The wire form of one frame: its 4-byte size, then ``payload``."""
    return struct.pack(">i", len(payload)) + payload


class RuleFile:
    """The current hold rules, re-read when the file's modification time changes."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.rules: list[HoldRule] = []
        self._stamp: float | None = None

    def refresh(self) -> None:
        """Re-read the file if it changed; a missing file means no rules."""
        try:
            stamp = self.path.stat().st_mtime
        except FileNotFoundError:
            self.rules, self._stamp = [], None
            return
        if stamp != self._stamp:
            self.rules = parse_rules(self.path.read_text(encoding="utf-8"))
            self._stamp = stamp

    def holds(self, header: RequestHeader) -> bool:
        """Whether some rule holds this request."""
        return any(rule.matches(header) for rule in self.rules)


class Proxy:
    """The running proxy: listening ports, their upstreams, the rules and the log."""

    def __init__(self, routes: dict[int, tuple[str, int]], rules: RuleFile, log: TextIO) -> None:
        self.routes = routes
        self.rules = rules
        self.log = log
        self._next_connection = 0
        self._servers: list[asyncio.Server] = []

    def note(self, port: int, connection: int, text: str) -> None:
        """Write one log line (UTC time with milliseconds)."""
        now = time.time()
        millis = int(now * 1000) % 1000
        stamp = time.strftime("%Y-%m-%d %H:%M:%S", time.gmtime(now)) + f",{millis:03d}"
        self.log.write(f"[{stamp}] port={port} conn={connection} {text}\n")
        self.log.flush()

    async def serve(self) -> None:
        """Listen on every route's port until cancelled."""
        self._servers = [
            await asyncio.start_server(functools.partial(self._connection, port), "127.0.0.1", port)
            for port in self.routes
        ]
        while True:
            self.rules.refresh()
            await asyncio.sleep(0.05)

    async def _connection(
        self, port: int, client_r: asyncio.StreamReader, client_w: asyncio.StreamWriter
    ) -> None:
        self._next_connection += 1
        connection = self._next_connection
        host, upstream_port = self.routes[port]
        try:
            server_r, server_w = await asyncio.open_connection(host, upstream_port)
        except OSError as error:
            self.note(port, connection, f"upstream {host}:{upstream_port} refused: {error}")
            client_w.close()
            return
        self.note(port, connection, "open")
        pending: dict[int, str] = {}
        up = asyncio.create_task(self._requests(port, connection, client_r, server_w, pending))
        down = asyncio.create_task(self._responses(port, connection, client_w, server_r, pending))
        await asyncio.wait({up, down}, return_when=asyncio.FIRST_COMPLETED)
        for task in (up, down):
            task.cancel()
        for writer in (client_w, server_w):
            writer.close()
        self.note(port, connection, "closed")

    async def _requests(
        self,
        port: int,
        connection: int,
        reader: asyncio.StreamReader,
        writer: asyncio.StreamWriter,
        pending: dict[int, str],
    ) -> None:
        frames = FrameBuffer()
        while chunk := await reader.read(65536):
            for frame in frames.feed(chunk):
                header = parse_request_header(frame)
                name = API_NAMES.get(header.api_key, str(header.api_key))
                what = (
                    f"{name} v{header.api_version} corr={header.correlation_id} "
                    f"client={header.client_id}"
                )
                if self.rules.holds(header):
                    self.note(port, connection, f"HOLD {what}")
                    while self.rules.holds(header):
                        await asyncio.sleep(0.05)
                    self.note(port, connection, f"RELEASE {what}")
                else:
                    self.note(port, connection, f"pass {what}")
                pending[header.correlation_id] = name
                writer.write(frame_bytes(frame))
                await writer.drain()

    async def _responses(
        self,
        port: int,
        connection: int,
        writer: asyncio.StreamWriter,
        reader: asyncio.StreamReader,
        pending: dict[int, str],
    ) -> None:
        frames = FrameBuffer()
        while chunk := await reader.read(65536):
            for frame in frames.feed(chunk):
                correlation_id = parse_response_correlation(frame)
                name = pending.pop(correlation_id, "?")
                self.note(port, connection, f"response {name} corr={correlation_id} {len(frame)}B")
                writer.write(frame_bytes(frame))
            await writer.drain()


def parse_route(text: str) -> tuple[int, tuple[str, int]]:
    """``LISTEN_PORT=HOST:PORT`` to ``(LISTEN_PORT, (HOST, PORT))``; ``ValueError`` otherwise."""
    listen, _, upstream = text.partition("=")
    host, _, port = upstream.rpartition(":")
    if not (listen.isdigit() and host and port.isdigit()):
        raise ValueError(f"route {text!r} is not LISTEN_PORT=HOST:PORT")
    return int(listen), (host, int(port))


def main(argv: Sequence[str] | None = None) -> int:
    """Run the proxy until interrupted; bad arguments print one line and exit 2."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--route", action="append", required=True, help="LISTEN=HOST:PORT")
    parser.add_argument("--rules", type=Path, required=True, help="the hold-rules file")
    parser.add_argument("--log", type=Path, required=True, help="where to log every frame")
    args = parser.parse_args(argv)
    try:
        routes = dict(parse_route(text) for text in args.route)
        rules = RuleFile(args.rules)
        rules.refresh()
    except (ValueError, OSError) as error:
        print(f"kafka_proxy: error: {error}", file=sys.stderr)
        return 2
    with args.log.open("a", encoding="utf-8") as log, contextlib.suppress(KeyboardInterrupt):
        asyncio.run(Proxy(routes, rules, log).serve())
    return 0


if __name__ == "__main__":
    sys.exit(main())
