"""``isrlab explore``: step through a model by hand in the browser (Stateright's Explorer, TLA+'s
trace explorer).

A ``Session`` holds one path through the model: a list of (action, state) from an initial
state, and a cursor.  From the state under the cursor the page lists every enabled action
(``Model.next_states``, labels as the checker prints them); taking one cuts the path after
the cursor and appends the successor; Back and Forward move the cursor.  A counterexample
(ITF, as ``isrlab check --itf`` writes it) is loaded by replaying it through the model: each
step must be a successor with the same label and variables, so the loaded path can be
explored further.  A bounded check runs the ordinary BFS (``isrlab.services.runs.check``) from
the state under the cursor, and its counterexample can be appended to the path.

The web layer is Flask (``create_app``); it serves one page (``isrlab.explorer_page``) and a
small JSON API.  It is a local, single-user tool: ``serve`` binds 127.0.0.1 only.
"""

from __future__ import annotations

import json
import socket
import threading
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from flask import Flask, Response, jsonify, request

from isrlab.api import Extended
from isrlab.checker.bfs import CheckOptions
from isrlab.checker.model import EvaluationError, Model
from isrlab.checker.report import TraceStep
from isrlab.checker.trace import entry_text, itf_document, parse_itf, value_text
from isrlab.explorer_page import PAGE
from isrlab.services import runs
from isrlab.services.rendering import explanation_words, invariant_words, trace_svg

MAX_CHECK_STATES = 200_000
"""A bounded check from the page stops after the level that reaches this many states."""


@dataclass(frozen=True)
class _StartingAt(Extended):
    """The model with a single initial state: the one under the explorer's cursor."""

    start: Any = None

    def init_states(self) -> Iterable[Any]:
        """The state under the cursor."""
        return (self.start,)


class TraceMismatch(Exception):
    """A trace step that no successor of the model matches (label and variables)."""


def flatten(variables: Mapping[str, Any]) -> list[tuple[str, str]]:
    """The state as table rows: one per variable, one per entry of a dictionary variable;
    names and values in the notation of the text traces (``broker0['log']``, ``<<0, 1>>``,
    docs/glossary.md)."""
    rows: list[tuple[str, str]] = []
    for name, value in variables.items():
        if isinstance(value, Mapping) and value:
            rows.extend((entry_text(name, k), value_text(v)) for k, v in value.items())
        else:
            rows.append((name, value_text(value)))
    return rows


def _members(mask: int) -> str:
    return "{" + ", ".join(str(i) for i in range(mask.bit_length()) if mask >> i & 1) + "}"


def _ticks(n: int) -> str:
    return f"{n} tick" if n == 1 else f"{n} ticks"


def _record(r: Sequence[Any]) -> str:
    from isrlab.spec.charts import value_name

    return f"{value_name(r[2])}@{r[0]}"


def kraft_spec_words(name: str, value: Any) -> str:
    """A ``tla-kraft-*`` variable the spec keeps as nested tuples, in Kafka's words (``""``
    for the others): each broker's log (offsets from 0, as in Kafka; the spec's start at 1),
    its fetchers and the messages in flight."""
    from isrlab.spec.charts import kraft_message_arrow

    if not isinstance(value, Sequence) or isinstance(value, str):
        return ""
    try:
        if name == "partition_data":
            return "; ".join(
                f"broker {b}: log [{', '.join(_record(r) for r in log)}], LEO {leo - 1}, "
                f"HW {hw - 1}" for b, (log, hw, leo) in enumerate(value, 1))
        if name == "broker_fetchers":
            return "; ".join(
                f"broker {b} fetches from broker {leader} at offset {part[0] - 1} (last "
                f"fetched epoch {part[1]}{', delayed' if part[2] else ''})"
                + (", a request in flight" if pending else "")
                for b, row in enumerate(value, 1)
                for leader, (part, pending) in enumerate(row, 1) if part) or "no fetcher"
        if name in ("messages", "messages_discard"):
            arrows = [kraft_message_arrow(m) for m in value]
            return "; ".join(f"{a.label}: {a.source} -> {a.target}" for a in arrows
                             if a is not None) or "none"
    except (TypeError, ValueError, IndexError, KeyError):
        return ""  # not the spec's shape (a user's model with a variable of that name)
    return ""


def kafka_words(name: str, value: Any) -> str:
    """A value in Kafka's words where its printed form hides them (``""`` elsewhere): a
    MetadataCache entry's bit masks as broker sets, a leader of -1 as none, a remote LEO of
    -1 as unknown, a follower's age and last fetch (KAFKA-4485) per broker, a log as its
    records' offsets and epochs, a down broker as down."""
    field_names = getattr(value, "_fields", None)
    if field_names == ("alive_brokers", "leader", "leader_epoch", "isr"):
        alive, leader, epoch, isr = value
        chosen = "no leader" if leader < 0 else f"leader {leader}"
        return (f"MetadataCache: alive brokers {_members(alive)}; {chosen}, leader epoch "
                f"{epoch}; ISR {_members(isr)}")
    key = name.rsplit("[", 1)[-1].strip("]'\"")
    if key == "leader" and value == -1:
        return "no leader known"
    if key == "alive" and value is False:
        return "down"
    if key == "remote_leo" and isinstance(value, Mapping):
        return "; ".join(f"broker {b}: LEO {'unknown' if leo < 0 else leo}"
                         for b, leo in value.items())
    if key == "remote_age" and isinstance(value, Mapping):
        return "; ".join(f"broker {b}: caught up {_ticks(age)} ago" for b, age in value.items())
    if key == "remote_last_fetch" and isinstance(value, Mapping):
        return "; ".join(f"broker {b}: last fetched at leader LEO {v['leader_leo']}, "
                         f"{_ticks(v['age'])} ago" for b, v in value.items()
                         if isinstance(v, Mapping))
    if name in ("partition_data", "broker_fetchers", "messages", "messages_discard"):
        return kraft_spec_words(name, value)
    if key == "log" and isinstance(value, tuple) and value and all(
            isinstance(r, str) and "@" in r for r in value):
        return ", ".join(f"offset {i}: {r.split('@')[0]} (epoch {r.split('@')[1]})"
                         for i, r in enumerate(value))
    return ""


def state_rows(variables: Mapping[str, Any]) -> list[tuple[str, str, str]]:
    """``flatten``'s rows, each with its value in Kafka's words (``kafka_words``)."""
    rows: list[tuple[str, str, str]] = []
    for name, value in variables.items():
        if isinstance(value, Mapping) and value:
            for k, v in value.items():
                entry = entry_text(name, k)
                rows.append((entry, value_text(v), kafka_words(entry, v)))
        else:
            rows.append((name, value_text(value), kafka_words(name, value)))
    return rows


REMOVED = "(removed)"
"""The value of a table row whose variable or entry the step removed."""


def with_removed(table: list[dict[str, Any]], before: Mapping[str, str]
                 ) -> list[dict[str, Any]]:
    """``table`` with a changed row for each entry of ``before`` (the previous state's rows)
    the state no longer has (a leader's ``pending_isr`` that a makeLeader dropped), placed
    after the row that preceded it there."""
    present = {row["name"] for row in table}
    after: dict[str | None, list[dict[str, Any]]] = {}
    previous: str | None = None
    for name, value in before.items():
        if name in present:
            previous = name
            continue
        after.setdefault(previous, []).append(
            {"name": name, "value": REMOVED, "words": "the step removed it", "changed": True,
             "before": value})
    if not after:
        return table
    out = list(after.get(None, ()))
    for row in table:
        out.append(row)
        out.extend(after.get(row["name"], ()))
    return out


@dataclass
class Session:
    """One user's path through the model and the cursor on it (see the module docstring)."""

    model: Model[Any]
    title: str
    params: Mapping[str, Any] = field(default_factory=dict)
    settings: str = ""
    """The parameters that differ from the model's defaults, as ``key=value`` words (the
    page's header shows them beside the title)."""
    path: list[tuple[str, Any]] = field(default_factory=list)
    cursor: int = 0
    check: dict[str, Any] = field(default_factory=dict)
    pending: list[tuple[str, Any]] = field(default_factory=list)
    init_index: int = 0
    lock: threading.Lock = field(default_factory=threading.Lock)

    def __post_init__(self) -> None:
        self.inits = list(self.model.init_states())
        self.start(0)

    # -- moves ----------
    def start(self, k: int) -> None:
        """Begin a new path at initial state ``k``."""
        self.path, self.cursor, self.check = [("Init", self.inits[k])], 0, {}
        self.init_index = k

    def restore(self, k: int, labels: Sequence[str], cursor: int) -> None:
        """The path an address names (``view()["address"]``): initial state ``k``, then the
        enabled step with each label in turn (the first, if several share a label), the
        cursor on state ``cursor``; ``TraceMismatch`` when a label is not enabled."""
        if not 0 <= k < len(self.inits):
            raise TraceMismatch(f"no initial state {k + 1}")
        path = [("Init", self.inits[k])]
        for number, label in enumerate(labels, start=2):
            found = [step for step in self.model.next_states(path[-1][1]) if step[0] == label]
            if not found:
                raise TraceMismatch(f"state {number}: {label!r} is not enabled in state "
                                    f"{number - 1}")
            path.append(found[0])
        self.path, self.init_index, self.check = path, k, {}
        self.goto(cursor)

    def enabled(self) -> list[tuple[str, Any]]:
        """Every enabled step from the state under the cursor; none when the model cannot
        evaluate its next step (``evaluation_error`` says why)."""
        try:
            return list(self.model.next_states(self.path[self.cursor][1]))
        except EvaluationError:
            return []

    def evaluation_error(self) -> str:
        """The model's own error evaluating the next step of the state under the cursor
        (``ACTION: message``, TLC's evaluation error), or ``""``."""
        try:
            self.model.next_states(self.path[self.cursor][1])
        except EvaluationError as error:
            return str(error)
        return ""

    def take(self, i: int) -> None:
        """Take enabled step ``i``: the path after the cursor is replaced by its successor."""
        step = self.enabled()[i]
        del self.path[self.cursor + 1:]
        self.path.append(step)
        self.cursor += 1

    def goto(self, n: int) -> None:
        """Put the cursor on state ``n`` (0-based) of the path."""
        self.cursor = max(0, min(n, len(self.path) - 1))

    # -- traces ----------
    def _match(self, start: Any, steps: Sequence[TraceStep], first: int) -> list[tuple[str, Any]]:
        """Replay ``steps`` from ``start`` through the model (``TraceMismatch`` on a step no
        successor matches: same label and variables)."""
        out, state = [], start
        for number, step in enumerate(steps, start=first):
            wanted = dict(step.state)
            for label, succ in self.model.next_states(state):
                if label == step.action and dict(self.model.variables(succ)) == wanted:
                    out.append((label, succ))
                    state = succ
                    break
            else:
                raise TraceMismatch(f"state {number} ({step.action}) is no successor the model "
                                    f"allows from state {number - 1}")
        return out

    def load(self, steps: Sequence[TraceStep]) -> None:
        """Make the trace the path (its first state must be an initial state of the model)."""
        if not steps:
            raise TraceMismatch("the trace has no states")
        wanted = dict(steps[0].state)
        starts = [s for s in self.inits if dict(self.model.variables(s)) == wanted]
        if not starts:
            raise TraceMismatch("state 1 is no initial state of this model (other parameters?)")
        self.path = [("Init", starts[0]), *self._match(starts[0], steps[1:], 2)]
        self.cursor, self.check = 0, {}
        self.init_index = next(i for i, s in enumerate(self.inits) if s is starts[0])

    def bounded_check(self, depth: int) -> None:
        """Breadth-first search of ``depth`` levels from the state under the cursor."""
        start = self.path[self.cursor][1]
        result = runs.check(_StartingAt(self.model, self.model.name, start=start),
                            CheckOptions(max_depth=depth, max_states=MAX_CHECK_STATES))
        violation = result.violation  # explained: why its last state breaks the invariant
        self.pending = [] if violation is None else self._match(start, violation.trace[1:], 2)
        self.check = {
            "summary": result.summary_line(),
            "violation": violation.invariant if violation else None,
            "explanation": violation.explanation if violation else "",
            "steps": [s.action for s in violation.trace[1:]] if violation else [],
        }

    def append_counterexample(self) -> None:
        """Append the bounded check's counterexample after the cursor."""
        if self.pending:
            del self.path[self.cursor + 1:]
            self.path.extend(self.pending)
            self.pending, self.check = [], {}

    # -- views ----------
    def violated(self, state: Any) -> list[str]:
        """The invariants ``state`` breaks."""
        return [p.name for p in self.model.invariants() if not p.holds(state)]

    def view(self) -> dict[str, Any]:
        """Everything the page shows, as JSON: each changed row carries its value before the
        step (``before``), each row its value in Kafka's words when they differ."""
        state = self.path[self.cursor][1]
        rows = state_rows(self.model.variables(state))
        before = dict(flatten(self.model.variables(self.path[self.cursor - 1][1]))) if (
            self.cursor) else {}
        table = [{"name": n, "value": v, "words": w,
                  "changed": bool(before) and before.get(n) != v,
                  "before": before.get(n) if before and before.get(n) != v else None}
                 for n, v, w in rows]
        broken = self.violated(state)
        return {
            "title": self.title,
            "settings": self.settings,
            "inits": len(self.inits),
            "init": self.init_index,
            "cursor": self.cursor,
            "path": [label for label, _ in self.path],
            "enabled": [label for label, _ in self.enabled()],
            "evaluation_error": self.evaluation_error(),
            "table": with_removed(table, before),
            "violated": [{"name": n, "words": invariant_words(self.model, n),
                          "why": explanation_words(self.model, n, self.model.variables(state))}
                         for n in broken],
            "check": self.check,
        }

    def chart(self, width: float | None = None) -> str:
        """The path as a sequence chart, the state under the cursor shaded, its lifelines
        sharing ``width`` px if given (the page's chart panel)."""
        trace = [TraceStep(label, self.model.variables(s)) for label, s in self.path]
        last = self.violated(self.path[-1][1])
        return trace_svg(trace, self.title, self.model, last[0] if last else None,
                         self.cursor + 1, width)


def create_app(session: Session) -> Flask:
    """The Flask application serving ``session``: the page and its JSON API."""
    app = Flask("isrlab.explorer")

    def done() -> Response:
        return jsonify(session.view())

    def fail(message: str) -> tuple[Response, int]:
        return jsonify({"error": message}), 400

    @app.before_request
    def local_only() -> tuple[Response, int] | None:
        # Another web site open in the same browser must not drive the explorer: a changing
        # request must carry a header a cross-site form cannot set, and the Host must be
        # this machine (no DNS rebinding).
        host = request.host.rsplit(":", 1)[0]
        if host not in ("127.0.0.1", "localhost"):
            return jsonify({"error": f"refused: host {host}"}), 403
        if request.method == "POST" and request.headers.get("X-Isrlab") != "1":
            return jsonify({"error": "refused: a POST without the X-Isrlab header"}), 403
        return None

    @app.get("/")
    def page() -> Response:
        return Response(PAGE, mimetype="text/html")

    @app.get("/api/view")
    def view() -> Response:
        with session.lock:
            return done()

    @app.get("/api/chart.svg")
    def chart() -> Response | tuple[Response, int]:
        width = request.args.get("width")
        if width is not None and not (width.isdigit() and 200 <= int(width) <= 100_000):
            return fail(f"width must be a number of pixels, 200..100000: {width!r}")
        with session.lock:
            return Response(session.chart(None if width is None else int(width)),
                            mimetype="image/svg+xml")

    @app.get("/api/path.itf.json")
    def path_itf() -> Response:
        with session.lock:
            trace = [TraceStep(label, session.model.variables(s)) for label, s in session.path]
            document = itf_document(trace, source=session.model.name,
                                    description=f"a path explored by hand ({session.title})",
                                    parameters=session.params or None)
        return Response(json.dumps(document, indent=1) + "\n", mimetype="application/json",
                        headers={"Content-Disposition": "attachment; filename=path.itf.json"})

    @app.post("/api/init/<int:k>")
    def init(k: int) -> Response | tuple[Response, int]:
        with session.lock:
            if not 0 <= k < len(session.inits):
                return fail(f"no initial state {k}")
            session.start(k)
            return done()

    @app.post("/api/step/<int:i>")
    def step(i: int) -> Response | tuple[Response, int]:
        with session.lock:
            if not 0 <= i < len(session.enabled()):
                return fail(f"no enabled action {i}")
            session.take(i)
            return done()

    @app.post("/api/goto/<int:n>")
    def goto(n: int) -> Response:
        with session.lock:
            session.goto(n)
            return done()

    @app.post("/api/trace")
    def trace() -> Response | tuple[Response, int]:
        try:
            steps = parse_itf(request.get_json(force=True))
        except ValueError as error:  # parse_itf says what is wrong
            return fail(str(error))
        except Exception as error:  # JSON the request could not parse: one message
            return fail(f"not an ITF trace: {error}")
        with session.lock:
            try:
                session.load(steps)
            except TraceMismatch as error:
                return fail(str(error))
            return done()

    @app.post("/api/restore")
    def restore() -> Response | tuple[Response, int]:
        body = request.get_json(force=True, silent=True)
        if not isinstance(body, dict):
            return fail("an address is {init, path, cursor}")
        init, labels, cursor = body.get("init"), body.get("path"), body.get("cursor")
        if not (isinstance(init, int) and isinstance(cursor, int) and isinstance(labels, list)
                and all(isinstance(label, str) for label in labels)):
            return fail("an address is {init: int, path: [labels], cursor: int}")
        with session.lock:
            try:
                session.restore(init, labels, cursor)
            except TraceMismatch as error:
                return fail(f"this address names no path of this model: {error}")
            return done()

    @app.post("/api/check/<int:depth>")
    def check(depth: int) -> Response | tuple[Response, int]:
        if not 1 <= depth <= 100:
            return fail("depth must be in 1..100")
        with session.lock:
            session.bounded_check(depth)
            return done()

    @app.post("/api/append")
    def append() -> Response:
        with session.lock:
            session.append_counterexample()
            return done()

    return app


def serve(app: Flask, port: int, ready: Any = None) -> None:
    """Serve ``app`` on 127.0.0.1:``port`` until interrupted (``ready(url)`` once listening);
    ``OSError`` when the port cannot be bound.  No access-log line per request; Ctrl-C
    raises ``KeyboardInterrupt`` (werkzeug's own loop swallows it, which made the command
    exit 0)."""
    import socketserver

    from werkzeug.serving import WSGIRequestHandler, make_server

    class Quiet(WSGIRequestHandler):
        def log_request(self, code: int | str = "-", size: int | str = "-") -> None:
            """Nothing: a local tool's page is no web site with an access log."""

    if port:  # werkzeug reports a busy port in two lines and exits 1: find out first
        with socket.socket() as probe:
            probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            probe.bind(("127.0.0.1", port))
    server = make_server("127.0.0.1", port, app, threaded=True, request_handler=Quiet)
    url = f"http://127.0.0.1:{server.server_port}/"
    if ready is not None:
        ready(url)
    try:
        socketserver.BaseServer.serve_forever(server)
    finally:
        server.server_close()
