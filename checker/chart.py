"""Message sequence charts of traces, drawn as plain SVG.  Knows nothing of Kafka.

A ``Chart`` is what a model family's adapter (``isrlab.spec.charts``) makes of a trace: the
lifelines (processes), and per state of the trace one ``Row`` with the action that produced
it, the messages it delivered (``Arrow``s, horizontal: drawn at the step where the message
takes effect) and the changes of each lifeline's local state (``Note``s).  ``generic_chart``
is the adapter of last resort: one lifeline, the changed variables as its notes.

``render_svg`` lays the chart out on a grid without overlaps: lifelines are as wide as
their widest note, each row as tall as its arrows plus its tallest note, arrow labels sit
on a white band above their arrow.  Given a ``width`` the natural layout exceeds (the
explorer's panel), the lifelines share that width instead: the narrow ones keep theirs, the
widest are cut to one common width, their notes' lines wrapped to it, arrow labels kept
inside the chart, the left margin narrower.  Text is monospace so its width is known without a
font library (0.6 em per character, DejaVu Sans Mono's advance).  The violating state is
framed in red with the violated property's name and its words.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any
from xml.sax.saxutils import escape

from isrlab.checker.report import TraceStep

FONT = 12
"""Font size (px) of notes and labels."""

CHAR_W = FONT * 0.6
LINE_H = FONT + 4


@dataclass(frozen=True, slots=True)
class Arrow:
    """A message from one lifeline to another; ``kind`` picks its colour (see ``Chart.kinds``).

    ``lost`` ends the arrow in a cross: the message was dropped."""

    source: str
    target: str
    label: str
    kind: str
    lost: bool = False


@dataclass(frozen=True, slots=True)
class Note:
    """Lines of text on a lifeline: what changed in that process's state at this step."""

    lifeline: str
    lines: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class Row:
    """One state of the trace: its 1-based number, its action, arrows and notes.

    ``down`` names the lifelines that are not running in this state (drawn dashed);
    ``caption`` is a shorter text of the action for the left margin (default: the action)."""

    number: int
    action: str
    arrows: tuple[Arrow, ...] = ()
    notes: tuple[Note, ...] = ()
    down: frozenset[str] = frozenset()
    caption: str = ""


@dataclass(frozen=True, slots=True)
class Chart:
    """A whole chart: title, lifelines left to right, rows top to bottom, the legend.

    ``kinds`` maps an arrow kind to its (colour, legend text); ``glossary`` are extra legend
    lines (notation); ``violation`` is ``(name, words)`` of the property the last state
    breaks, or ``None``."""

    title: str
    lifelines: tuple[str, ...]
    rows: tuple[Row, ...]
    kinds: Mapping[str, tuple[str, str]] = field(default_factory=dict)
    glossary: tuple[str, ...] = ()
    violation: tuple[str, str] | None = None


def plain_text(value: Any, quote: bool = False) -> str:
    """A compact text of a plain state value: sets sorted as ``{...}`` (the empty set
    ``set()``, as the text traces write it), maps as ``{k: v}``, sequences as ``[...]``;
    strings quoted only when ``quote``."""
    if isinstance(value, frozenset | set):
        if not value:
            return "set()"
        return "{" + ", ".join(sorted(plain_text(v, quote) for v in value)) + "}"
    if isinstance(value, Mapping):
        return "{" + ", ".join(
            f"{plain_text(k, quote)}: {plain_text(v, quote)}" for k, v in value.items()) + "}"
    if isinstance(value, list | tuple):
        return "[" + ", ".join(plain_text(v, quote) for v in value) + "]"
    return repr(value) if quote and isinstance(value, str) else str(value)


def generic_chart(
    trace: Sequence[TraceStep], title: str, violation: tuple[str, str] | None = None
) -> Chart:
    """The chart of any trace: a single lifeline ``state`` noting each changed variable.

    Shortcut: no processes or messages are recognised; model families give better charts
    through their own adapters."""
    rows: list[Row] = []
    previous: Mapping[str, Any] = {}
    for number, step in enumerate(trace, start=1):
        lines = tuple(
            f"{name} = {plain_text(value)}" for name, value in step.state.items()
            if number == 1 or previous.get(name) != value
        )
        rows.append(Row(number, step.action, notes=(Note("state", lines or ("(no change)",)),)))
        previous = step.state
    return Chart(title, ("state",), tuple(rows), violation=violation)


# ---------------------------------------------------------------------------- layout
_MARGIN = 16
_GUTTER_MIN = 150
_HEAD_H = 30
_ARROW_BAND = LINE_H + 10
_NOTE_PAD = 4
_ROW_GAP = 10
_COL_MIN = 130
_COL_FIT_MIN = 92
"""Narrowest lifeline column when fitting a width (a 10-character name and its box)."""
_GUTTER_FIT = 130
"""Widest left margin when fitting a width (captions wrap to three lines)."""
_LEAST_W = 720.0
"""Narrowest chart ``render`` draws (a fitted one may be narrower)."""
_BG = "#ffffff"


def _text_w(text: str) -> float:
    return len(text) * CHAR_W


_JOINTS = re.compile(r"(?<=[a-z0-9)\]'])(?=[A-Z(\[])|(?<=[_,/=@-])(?=.)")
"""Where a word too long for its line may be broken: where an identifier's parts meet
(``AlterPartition|Response``, ``Fetch|(1)``, ``[0]|[1]``), after ``_ , / = @ -``."""


def _pieces(word: str) -> list[str]:
    """``word`` cut at its joints (``_JOINTS``); never inside a part."""
    return [part for part in _JOINTS.split(word) if part]


def wrap_words(text: str, chars: int, indent: str = "") -> list[str]:
    """``text`` in lines of at most ``chars`` characters, broken at spaces; a word longer
    than a whole line is broken at its joints (``_JOINTS``: never mid-word, no hyphen
    added), its first parts filling the line it starts on; a part longer than a line runs
    past it.  Lines after the first start with ``indent`` when their first word or part
    fits with it."""
    lines: list[str] = []
    line = ""
    for word in text.split():
        parts = [word] if len(indent + word) <= chars else _pieces(word)
        for k, part in enumerate(parts):
            gap = " " if line and k == 0 else ""
            if line and len(line + gap + part) > chars:
                lines.append(line)
                line = indent + part if len(indent + part) <= chars else part
            elif not line and lines and len(indent + part) <= chars:
                line = indent + part
            else:
                line += gap + part
    if line:
        lines.append(line)
    return lines


def _widest_piece(lines: Sequence[str]) -> float:
    """The width of the longest part (``_pieces``) of any word of ``lines``: the narrowest
    column they wrap into without a part running past it."""
    return max((_text_w(p) for line in lines for w in line.split() for p in _pieces(w)),
               default=0.0)


@dataclass(slots=True)
class _Layout:
    """Computed positions: lifeline x centres, row tops and heights, the total size."""

    x: dict[str, float]
    gutter: float
    tops: list[float]
    heights: list[float]
    width: float
    body_bottom: float
    half: Mapping[str, float] = field(default_factory=dict)


def _note_w(note: Note) -> float:
    return max((_text_w(line) for line in note.lines), default=0.0) + 2 * _NOTE_PAD + 4


def _row_height(row: Row, gutter: float) -> float:
    note_h = max((len(n.lines) * LINE_H + 2 * _NOTE_PAD for n in row.notes), default=0.0)
    caption = min(3, len(_caption(row, gutter - 8)))
    return max(LINE_H + len(row.arrows) * _ARROW_BAND + note_h, caption * LINE_H) + _ROW_GAP


def _natural_halves(chart: Chart, least: float = _COL_MIN) -> dict[str, float]:
    """Half the width of each lifeline's column: its widest note, its name, ``least``."""
    half = {name: max(least, _text_w(name) + 24) / 2 for name in chart.lifelines}
    for row in chart.rows:
        for note in row.notes:
            half[note.lifeline] = max(half[note.lifeline], _note_w(note) / 2 + 6)
    return half


def _gutter(chart: Chart, least: float = _GUTTER_MIN, most: float = 310.0) -> float:
    """The left margin's width: the longest caption, within ``least``..``most`` px."""
    return min(most, max(
        least,
        *(_text_w(f"{r.number}. {r.caption or r.action}") + 12 for r in chart.rows),
    ))


def _label_gaps(chart: Chart, half: Mapping[str, float]) -> list[float]:
    """Distances between neighbouring lifelines: their half columns, widened so that every
    arrow label fits the span of its arrow."""
    lanes = chart.lifelines
    gaps = [half[a] + half[b] for a, b in itertools.pairwise(lanes)]
    index = {name: i for i, name in enumerate(lanes)}
    for row in chart.rows:
        for arrow in row.arrows:
            i, j = sorted((index[arrow.source], index[arrow.target]))
            if i == j:
                continue
            need = _text_w(arrow.label) + 24
            have = sum(gaps[i:j])
            if need > have:
                extra = (need - have) / (j - i)
                for k in range(i, j):
                    gaps[k] += extra
    return gaps


def _shared_halves(
    half: Mapping[str, float], room: float, least: Mapping[str, float] | None = None
) -> dict[str, float]:
    """Half columns whose widths add up to ``room`` (or their minimum: the name's box, and
    ``least`` px if given): every column wider than a common cap is cut to it, the narrower
    keep their width (water-filling)."""
    floor = {name: max(_COL_FIT_MIN, _text_w(name) + 24, (least or {}).get(name, 0.0)) / 2
             for name in half}
    if sum(2 * h for h in floor.values()) >= room:
        return floor
    low, high = 0.0, max(half.values())
    for _ in range(40):  # bisection on the cap; 40 halvings: far below a pixel
        cap = (low + high) / 2
        if sum(2 * max(floor[n], min(h, cap)) for n, h in half.items()) > room:
            high = cap
        else:
            low = cap
    return {name: max(floor[name], min(h, low)) for name, h in half.items()}


def _wrap_note(note: Note, width_px: float) -> Note:
    """``note`` with each line wrapped to ``width_px`` (continuations indented by 2)."""
    chars = max(8, int((width_px - 2 * _NOTE_PAD - 4) / CHAR_W))
    lines: list[str] = []
    for line in note.lines:
        lines.extend(wrap_words(line, chars, "  ") or [""])
    return Note(note.lifeline, tuple(lines))


def _unbroken(chart: Chart) -> dict[str, float]:
    """Per lifeline, the column width its notes' longest part (``_pieces``) needs in a
    wrapped note, so that no part runs past it."""
    out: dict[str, float] = {}
    for row in chart.rows:
        for note in row.notes:
            need = _widest_piece(note.lines) + 2 * _NOTE_PAD + 4 + 12 + 1
            out[note.lifeline] = max(out.get(note.lifeline, 0.0), need)
    return out


def fit_chart(
    chart: Chart, width: float
) -> tuple[Chart, tuple[dict[str, float], float] | None]:
    """``chart`` with notes wrapped so that its lifelines share ``width`` px, with their half
    columns and the left margin; the chart unchanged and ``None`` when its natural layout
    fits."""
    half, gutter = _natural_halves(chart), _gutter(chart)
    lanes = chart.lifelines
    natural = max(_LEAST_W, 2 * _MARGIN + gutter + half[lanes[0]]
                  + sum(_label_gaps(chart, half)) + half[lanes[-1]])
    if natural <= width:
        return chart, None
    gutter = _gutter(chart, 90.0, _GUTTER_FIT)
    half = _shared_halves(_natural_halves(chart, _COL_FIT_MIN), width - 2 * _MARGIN - gutter,
                          _unbroken(chart))
    rows = tuple(
        Row(r.number, r.action, r.arrows,
            tuple(_wrap_note(n, 2 * half[n.lifeline] - 12) for n in r.notes), r.down, r.caption)
        for r in chart.rows)
    return (Chart(chart.title, lanes, rows, chart.kinds, chart.glossary, chart.violation),
            (half, gutter))


def _layout(chart: Chart, fitted: tuple[dict[str, float], float] | None = None) -> _Layout:
    """Place lifelines so every note fits its column and every arrow label its span;
    ``fitted``: the half columns and left margin of ``fit_chart`` (labels may then run past
    their span, never past the chart)."""
    lanes = chart.lifelines
    if fitted is None:
        half, gutter = _natural_halves(chart), _gutter(chart)
        gaps = _label_gaps(chart, half)
    else:
        half, gutter = fitted
        gaps = [half[a] + half[b] for a, b in itertools.pairwise(lanes)]
    x: dict[str, float] = {}
    pos = _MARGIN + gutter + half[lanes[0]]
    for k, name in enumerate(lanes):
        x[name] = pos
        if k < len(gaps):
            pos += gaps[k]
    width = pos + half[lanes[-1]] + _MARGIN
    tops: list[float] = []
    heights: list[float] = []
    y: float = _MARGIN + 22 + _HEAD_H + 12
    for row in chart.rows:
        tops.append(y)
        heights.append(_row_height(row, gutter))
        y += heights[-1]
    least = _LEAST_W if fitted is None else 0.0
    return _Layout(x, gutter, tops, heights, max(width, least), y, half)


def _svg_text(x: float, y: float, text: str, **attrs: str) -> str:
    extra = "".join(f' {k.rstrip("_").replace("_", "-")}="{escape(v)}"' for k, v in attrs.items())
    return f'<text x="{x:.1f}" y="{y:.1f}"{extra}>{escape(text)}</text>'


def _arrow_svg(arrow: Arrow, lay: _Layout, y: float, colour: str) -> list[str]:
    """One arrow: its label on a white band, the line, and its head (or a cross if lost)."""
    x1, x2 = lay.x[arrow.source], lay.x[arrow.target]
    out: list[str] = []
    label_w = _text_w(arrow.label)
    if x1 == x2:  # a message to itself: a small loop
        out.append(f'<path d="M{x1:.1f},{y - 4:.1f} h28 v10 h-26" fill="none" '
                   f'stroke="{colour}" stroke-width="1.6" marker-end="url(#head-{colour[1:]})"/>')
        lx = x1 + 34
    else:
        end = x2 - 8 if x2 > x1 else x2 + 8
        dash = ' stroke-dasharray="5,3"' if arrow.lost else ""
        marker = "" if arrow.lost else f' marker-end="url(#head-{colour[1:]})"'
        out.append(f'<line x1="{x1:.1f}" y1="{y:.1f}" x2="{end if arrow.lost else x2:.1f}" '
                   f'y2="{y:.1f}" stroke="{colour}" stroke-width="1.6"{dash}{marker}/>')
        if arrow.lost:  # a cross on the line, three quarters of the way, below the label
            cx = x1 + (x2 - x1) * 0.75
            out.append(f'<path d="M{cx - 5:.1f},{y - 4:.1f} l10,10 M{cx - 5:.1f},{y + 6:.1f} '
                       f'l10,-10" stroke="#c0392b" stroke-width="2.2"/>')
        lx = (x1 + x2) / 2 - label_w / 2
    # a label wider than the chart's right part starts at the left margin's edge; one
    # running past the right edge is moved back inside
    lx = max(min(lx, lay.width - _MARGIN - label_w), _MARGIN + lay.gutter)
    ly = y - 6
    label = [f'<rect x="{lx - 3:.1f}" y="{ly - FONT + 1:.1f}" width="{label_w + 6:.1f}" '
             f'height="{FONT + 3}" fill="{_BG}" opacity="0.92"/>',
             _svg_text(lx, ly, arrow.label, fill=colour, class_="label")]
    return label + out  # the line and its head (or cross) on top of the label's band


def _note_svg(note: Note, lay: _Layout, top: float, highlight: bool) -> list[str]:
    w = _note_w(note)
    h = len(note.lines) * LINE_H + 2 * _NOTE_PAD
    x = lay.x[note.lifeline] - w / 2
    fill = "#fdecea" if highlight else "#fffbe6"
    stroke = "#c0392b" if highlight else "#b59b3b"
    out = [f'<rect x="{x:.1f}" y="{top:.1f}" width="{w:.1f}" height="{h:.1f}" rx="3" '
           f'fill="{fill}" stroke="{stroke}" stroke-width="0.8"/>']
    for k, line in enumerate(note.lines):
        out.append(_svg_text(x + _NOTE_PAD + 2, top + _NOTE_PAD + (k + 1) * LINE_H - 4, line))
    return out


def _defs(colours: Sequence[str]) -> str:
    heads = "".join(
        f'<marker id="head-{c[1:]}" viewBox="0 0 10 10" refX="9" refY="5" markerWidth="8" '
        f'markerHeight="8" orient="auto-start-reverse"><path d="M0,0 L10,5 L0,10 z" '
        f'fill="{c}"/></marker>'
        for c in sorted(set(colours))
    )
    style = (f"text{{font-family:'DejaVu Sans Mono',Menlo,Consolas,monospace;"
             f"font-size:{FONT}px;fill:#222;white-space:pre}} .head{{font-weight:bold}} "
             ".title{font-size:15px;font-weight:bold} .label{font-weight:bold}")
    return f"<defs>{heads}<style>{style}</style></defs>"


def _wrap(text: str, width_px: float) -> list[str]:
    return wrap_words(text, max(20, int(width_px / CHAR_W))) or [""]


def _caption(row: Row, width_px: float) -> list[str]:
    """The row's number and action for the left margin, wrapped at spaces and, in a long
    label, where its parts meet (``AlterPartition`` / ``Response(0)``)."""
    return _wrap(f"{row.number}. {row.caption or row.action}", width_px)


def _legend(chart: Chart, lay: _Layout, y: float) -> tuple[list[str], float]:
    """The legend below the chart: one sample arrow per kind used, then the glossary."""
    out = [_svg_text(_MARGIN, y + LINE_H, "Legend", class_="head")]
    y += LINE_H + 8
    used = {a.kind for r in chart.rows for a in r.arrows}
    for kind, (colour, text) in chart.kinds.items():
        if kind not in used:
            continue
        out.append(f'<line x1="{_MARGIN:.1f}" y1="{y + 6:.1f}" x2="{_MARGIN + 40:.1f}" '
                   f'y2="{y + 6:.1f}" stroke="{colour}" stroke-width="1.6" '
                   f'marker-end="url(#head-{colour[1:]})"/>')
        out.append(_svg_text(_MARGIN + 52, y + 10, text))
        y += LINE_H + 2
    if any(a.lost for r in chart.rows for a in r.arrows):
        out.append(_svg_text(_MARGIN + 14, y + 10, "x", fill="#c0392b", class_="label"))
        out.append(_svg_text(_MARGIN + 52, y + 10, "a message lost on the way"))
        y += LINE_H + 2
    if any(r.down for r in chart.rows):
        out.append(f'<line x1="{_MARGIN + 20:.1f}" y1="{y:.1f}" x2="{_MARGIN + 20:.1f}" '
                   f'y2="{y + 14:.1f}" stroke="#bbb" stroke-width="2" stroke-dasharray="3,3"/>')
        out.append(_svg_text(_MARGIN + 52, y + 10, "dashed lifeline: the process is down"))
        y += LINE_H + 2
    out.append(f'<rect x="{_MARGIN + 8:.1f}" y="{y + 1:.1f}" width="24" height="12" '
               f'fill="#fffbe6" stroke="#b59b3b" stroke-width="0.8"/>')
    out.append(_svg_text(_MARGIN + 52, y + 10, "what changed in that process's state at the step"))
    y += LINE_H + 2
    for line in chart.glossary:
        for part in _wrap(line, lay.width - 2 * _MARGIN):
            out.append(_svg_text(_MARGIN, y + 10, part))
            y += LINE_H
    return out, y + _MARGIN


def render_svg(chart: Chart, current: int | None = None, width: float | None = None) -> str:
    """The chart as a standalone SVG document (``current``: 1-based row to shade, if any);
    with ``width``, no wider than that if its lifelines fit at their narrowest
    (``fit_chart``)."""
    fitted = None
    if width is not None:
        chart, fitted = fit_chart(chart, width)
    lay = _layout(chart, fitted)
    colours = [c for c, _ in chart.kinds.values()] + ["#555555"]
    body: list[str] = [_svg_text(_MARGIN, _MARGIN + 14, chart.title, class_="title")]
    head_y = _MARGIN + 22
    for name in chart.lifelines:
        w = max(_COL_MIN - 20, _text_w(name) + 20)
        if lay.half:
            w = max(_text_w(name) + 12, min(w, 2 * lay.half[name] - 8))
        cx = lay.x[name]
        body.append(f'<rect class="lane" x="{cx - w / 2:.1f}" y="{head_y:.1f}" '
                    f'width="{w:.1f}" height="{_HEAD_H}" rx="4" fill="#e8eef7" '
                    f'stroke="#3d5a80"/>')
        body.append(_svg_text(cx, head_y + 20, name, text_anchor="middle",
                              class_="head lane"))
    last = len(chart.rows)
    rows_svg: list[str] = []
    for k, row in enumerate(chart.rows):
        top, h = lay.tops[k], lay.heights[k]
        bad = chart.violation is not None and row.number == last
        if row.number == current:
            body.append(f'<rect id="current-row" x="2" y="{top - 4:.1f}" '
                        f'width="{lay.width - 4:.1f}" height="{h:.1f}" fill="#dbeafe"/>')
        elif k % 2:
            body.append(f'<rect x="2" y="{top - 4:.1f}" width="{lay.width - 4:.1f}" '
                        f'height="{h:.1f}" fill="#f6f7f9"/>')
        for name in chart.lifelines:  # lifeline segment of this row
            style = ('stroke="#bbb" stroke-width="2" stroke-dasharray="3,3"'
                     if name in row.down else 'stroke="#3d5a80" stroke-width="1.2"')
            rows_svg.append(f'<line x1="{lay.x[name]:.1f}" y1="{top - 4:.1f}" '
                            f'x2="{lay.x[name]:.1f}" y2="{top + h - 4:.1f}" {style}/>')
        for j, part in enumerate(_caption(row, lay.gutter - 8)[:3]):
            rows_svg.append(_svg_text(_MARGIN, top + (j + 1) * LINE_H - 2, part, class_="head"))
        y = top + LINE_H
        for arrow in row.arrows:
            colour = chart.kinds.get(arrow.kind, ("#555555", ""))[0]
            rows_svg.extend(_arrow_svg(arrow, lay, y + _ARROW_BAND - 6, colour))
            y += _ARROW_BAND
        for note in row.notes:
            rows_svg.extend(_note_svg(note, lay, y + 2, bad))
        if bad:
            rows_svg.append(f'<rect x="4" y="{top - 4:.1f}" width="{lay.width - 8:.1f}" '
                            f'height="{h:.1f}" fill="none" stroke="#c0392b" stroke-width="2.5"/>')
    y = lay.body_bottom
    if chart.violation is not None:
        name, words = chart.violation
        words = words.removeprefix(f"{name}:").strip()
        text = [f"VIOLATED in state {last}: {name}"]
        for paragraph in words.split("\n"):  # the property's words, then why (if known)
            text.extend(_wrap(paragraph, lay.width - 2 * _MARGIN - 16) if paragraph else [])
        h = len(text) * LINE_H + 12
        box_w = lay.width - 2 * _MARGIN
        rows_svg.append(f'<rect x="{_MARGIN:.1f}" y="{y:.1f}" width="{box_w:.1f}" '
                        f'height="{h:.1f}" fill="#fdecea" stroke="#c0392b" stroke-width="1.5"/>')
        for j, part in enumerate(text):
            rows_svg.append(_svg_text(_MARGIN + 8, y + 6 + (j + 1) * LINE_H - 3, part,
                                      fill="#8e1b10", class_="head" if j == 0 else "x"))
        y += h + 10
    legend, height = _legend(chart, lay, y)
    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{lay.width:.0f}" height="{height:.0f}" '
        f'viewBox="0 0 {lay.width:.0f} {height:.0f}">',
        _defs(colours),
        f'<rect width="100%" height="100%" fill="{_BG}"/>',
        *body, *rows_svg, *legend, "</svg>",
    ]
    return "\n".join(parts) + "\n"
