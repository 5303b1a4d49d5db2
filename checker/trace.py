"""Counterexample traces: the ITF format of Apalache and Quint, and a readable text form.

ITF (Informal Trace Format, Apalache ADR-015) is JSON: ``{"#meta": {...}, "vars": [...],
"states": [{"#meta": {"index": i}, var: value, ...}, ...]}`` with values encoded as

* integers as ``{"#bigint": "42"}`` (always, as Quint does, so no precision is ever lost);
* booleans and strings as themselves;
* tuples as ``{"#tup": [...]}``, lists (sequences) as JSON arrays;
* sets as ``{"#set": [...]}`` (elements in a canonical order);
* dictionaries (functions, maps) as ``{"#map": [[key, value], ...]}``;
* ``None`` as the variant ``{"tag": "None", "value": {"#tup": []}}`` (Quint's ``None``).

Each state's ``#meta`` also carries the ``action`` that produced it (``"Init"`` for the
first), so ``read_itf`` gives back the very ``TraceStep``s that ``write_itf`` was handed.

A lasso (a liveness counterexample, an infinite behaviour) is written with ITF's ``loop``:
the index of the state that follows the last one; the top-level ``#meta`` then also names
the ``loop_action``, the label of that closing step, or ``"Stuttering"`` when ``loop`` is
the last index and the behaviour stays there forever.  ``read_lasso`` reads both back.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from isrlab.checker.atomic import write_text_atomically
from isrlab.checker.report import EVALUATION_ERROR, CheckResult, TraceStep, Violation

ITF_FORMAT_DESCRIPTION = "https://apalache-mc.org/docs/adr/015adr-trace.html"

_NONE = {"tag": "None", "value": {"#tup": []}}


def _order_key(encoded: Any) -> str:
    return json.dumps(encoded, sort_keys=True)


def itf_value(value: Any) -> Any:
    """The ITF encoding of one plain state value."""
    if value is None:
        return dict(_NONE)
    if isinstance(value, bool | str):
        return value
    if isinstance(value, int):
        return {"#bigint": str(value)}
    if isinstance(value, tuple):
        return {"#tup": [itf_value(v) for v in value]}
    if isinstance(value, list):
        return [itf_value(v) for v in value]
    if isinstance(value, frozenset | set):
        return {"#set": sorted((itf_value(v) for v in value), key=_order_key)}
    if isinstance(value, Mapping):
        pairs = [[itf_value(k), itf_value(v)] for k, v in value.items()]
        return {"#map": sorted(pairs, key=_order_key)}
    raise TypeError(f"cannot encode a {type(value).__name__} in ITF: {value!r}")


def _freeze(value: Any) -> Any:
    """A hashable form of a decoded value, for set elements and map keys."""
    if isinstance(value, list):
        return tuple(_freeze(v) for v in value)
    if isinstance(value, dict):
        return tuple(sorted((_freeze(k), _freeze(v)) for k, v in value.items()))
    return value


MAX_ITF_DEPTH = 100
"""How deeply an ITF value may nest (a state of the ``kafka`` model nests 6 deep): a deeper
value is refused (``ValueError``) rather than exhausting Python's stack."""


def _bigint(text: Any) -> int:
    """``#bigint``'s integer: a decimal string (or, leniently, a JSON integer)."""
    if isinstance(text, int) and not isinstance(text, bool):
        return text
    if not isinstance(text, str):
        raise ValueError(f"'#bigint' must be a decimal string, got {text!r}")
    return int(text)


def from_itf_value(encoded: Any, depth: int = 0) -> Any:
    """The plain value of one ITF-encoded value (the inverse of ``itf_value``); ``ValueError``
    (or ``TypeError``, ``KeyError``) for what is not one, including a value nested deeper
    than ``MAX_ITF_DEPTH``."""
    if isinstance(encoded, bool | str):
        return encoded
    if isinstance(encoded, int):
        return encoded
    if depth >= MAX_ITF_DEPTH:
        raise ValueError(f"the value nests deeper than {MAX_ITF_DEPTH} levels")
    inner = depth + 1
    if isinstance(encoded, list):
        return [from_itf_value(v, inner) for v in encoded]
    if isinstance(encoded, dict):
        if "#bigint" in encoded:
            return _bigint(encoded["#bigint"])
        if "#tup" in encoded:
            return tuple(from_itf_value(v, inner) for v in encoded["#tup"])
        if "#set" in encoded:
            return frozenset(_freeze(from_itf_value(v, inner)) for v in encoded["#set"])
        if "#map" in encoded:
            return {_freeze(from_itf_value(k, inner)): from_itf_value(v, inner)
                    for k, v in encoded["#map"]}
        if encoded.get("tag") == "None" and set(encoded) == {"tag", "value"}:
            return None
        return {k: from_itf_value(v, inner) for k, v in encoded.items()}
    raise ValueError(f"not an ITF value: {encoded!r}")


def itf_document(
    trace: Sequence[TraceStep], *, source: str = "", description: str = "",
    parameters: Mapping[str, Any] | None = None, loop: int | None = None,
    loop_meta: Mapping[str, Any] | None = None, explanation: str = "",
) -> dict[str, Any]:
    """The ITF JSON document of a trace; ``#meta`` names the model (``source``) and, when
    given, the parameters it was built with (``isrlab validate`` rebuilds it from them).
    A lasso gives ``loop`` (ITF's field) and ``loop_meta`` (merged into ``#meta``: at least
    its ``loop_action``).  ``explanation``, when given, is why the last state breaks the
    violated property (``#meta.explanation``)."""
    variables: list[str] = []
    for step in trace:
        for name in step.state:
            if name not in variables:
                variables.append(name)
    states = []
    for index, step in enumerate(trace):
        encoded: dict[str, Any] = {"#meta": {"index": index, "action": step.action}}
        for name, value in step.state.items():
            encoded[name] = itf_value(value)
        states.append(encoded)
    meta: dict[str, Any] = {
        "format": "ITF",
        "format-description": ITF_FORMAT_DESCRIPTION,
        "source": source,
        "description": description,
    }
    if explanation:
        meta["explanation"] = explanation
    if parameters is not None:
        meta["model"] = source
        meta["parameters"] = {k: parameters[k] for k in sorted(parameters)}
    if loop is None:
        return {"#meta": meta, "vars": variables, "states": states}
    if not 0 <= loop < len(states):
        raise ValueError(f"loop index {loop} is outside the trace of {len(states)} states")
    meta.update(loop_meta or {})
    return {"#meta": meta, "vars": variables, "states": states, "loop": loop}


def write_itf(
    path: str | Path, trace: Sequence[TraceStep], *, source: str = "", description: str = "",
    parameters: Mapping[str, Any] | None = None, loop: int | None = None,
    loop_meta: Mapping[str, Any] | None = None, explanation: str = "",
) -> None:
    """Write a trace as an ITF JSON file (``parameters``, ``loop``, ``explanation``: see
    ``itf_document``)."""
    document = itf_document(trace, source=source, description=description,
                            parameters=parameters, loop=loop, loop_meta=loop_meta,
                            explanation=explanation)
    write_text_atomically(path, json.dumps(document, indent=1) + "\n")


def parse_itf(document: Any) -> tuple[TraceStep, ...]:
    """The trace of an ITF document (actions from each state's ``#meta``, else ``""``);
    ``ValueError`` saying what is wrong (and where: ``ITF state 2: variable 'x': ...``) for a
    document that is not one."""
    states = document.get("states") if isinstance(document, Mapping) else None
    if not isinstance(states, list):
        raise ValueError("an ITF trace is an object with a 'states' array")
    steps = []
    for index, encoded in enumerate(states):
        if not isinstance(encoded, Mapping):
            raise ValueError(f"ITF state {index}: a state must be an object")
        meta = encoded.get("#meta", {})
        action = str(meta.get("action", "")) if isinstance(meta, Mapping) else ""
        state = {}
        for name, value in encoded.items():
            if name == "#meta":
                continue
            try:
                state[name] = from_itf_value(value)
            except (ValueError, TypeError, KeyError) as error:
                raise ValueError(f"ITF state {index}: variable {name!r}: "
                                 f"not an ITF value ({error})") from error
        steps.append(TraceStep(action=action, state=state))
    return tuple(steps)


def read_itf(path: str | Path) -> tuple[TraceStep, ...]:
    """Read a trace written by ``write_itf`` (or any ITF trace); ``ValueError`` for text that
    is not one (JSON nested too deeply for Python's parser included)."""
    text = Path(path).read_text(encoding="utf-8-sig")
    try:
        document = json.loads(text)
    except RecursionError:
        raise ValueError("malformed JSON: nested too deeply") from None
    return parse_itf(document)



def value_text(value: Any) -> str:
    """A value as every text trace prints it (docs/glossary.md): a tuple ``<<a, b>>``, a
    list ``[a, b]``, a set ``{a, b}`` (sorted; the empty set ``set()``, as ``{}`` is an
    empty mapping), a mapping ``{k: v}``, a string quoted."""
    return _show(value)


def entry_text(name: str, key: Any) -> str:
    """An entry of a mapping-valued variable as a text trace names it: ``broker0['log']``."""
    return f"{name}[{_show(key)}]"


def read_lasso(path: str | Path) -> tuple[tuple[TraceStep, ...], int | None, str | None]:
    """A trace, its ITF ``loop`` index and ``#meta.loop_action`` (``None`` for a finite
    trace)."""
    document = json.loads(Path(path).read_text(encoding="utf-8"))
    loop = document.get("loop")
    action = document.get("#meta", {}).get("loop_action")
    return (parse_itf(document), None if loop is None else int(loop),
            None if action is None else str(action))


def _show(value: Any) -> str:
    if isinstance(value, frozenset | set):
        inner = ", ".join(sorted(_show(v) for v in value))
        return "{" + inner + "}" if inner else "set()"
    if isinstance(value, Mapping):
        inner = ", ".join(f"{_show(k)}: {_show(v)}" for k, v in value.items())
        return "{" + inner + "}"
    if isinstance(value, list):
        return "[" + ", ".join(_show(v) for v in value) + "]"
    if isinstance(value, tuple):
        return "<<" + ", ".join(_show(v) for v in value) + ">>"
    return repr(value) if isinstance(value, str) else str(value)


def changed_entries(
    name: str, before: Any, after: Any, show: Callable[[Any], str] = value_text,
    nested: int = 1,
) -> list[str]:
    """What a step changed in variable ``name``, one line each: the changed entries of a
    dictionary-valued variable (``name[key] = value``; an entry the step added marked
    ``(added)``, one it removed written ``removed (was OLD)``; an entry that is itself a
    dictionary on both sides by its own changed entries, ``name[key][key2] = value``, down
    ``nested`` levels), else the whole new value; values written by ``show``."""
    if not (isinstance(before, Mapping) and isinstance(after, Mapping)):
        return [f"{name} = {show(after)}"]
    lines = []
    for key, value in after.items():
        if key not in before:
            lines.append(f"{entry_text(name, key)} = {show(value)} (added)")
        elif before[key] != value and nested > 0:
            lines.extend(changed_entries(entry_text(name, key), before[key], value, show,
                                         nested - 1))
        elif before[key] != value:
            lines.append(f"{entry_text(name, key)} = {show(value)}")
    lines.extend(f"{entry_text(name, key)} removed (was {show(value)})"
                 for key, value in before.items() if key not in after)
    return lines


def text_trace(trace: Sequence[TraceStep]) -> str:
    """A readable trace: the first state in full, then per step its action and what changed."""
    lines: list[str] = []
    previous: Mapping[str, Any] = {}
    for index, step in enumerate(trace):
        lines.append(f"State {index + 1}: {step.action}")
        for name, value in step.state.items():
            if index == 0 or name not in previous:
                lines.append(f"  {name} = {_show(value)}")
            elif previous[name] != value:
                lines.extend("  " + line for line in changed_entries(name, previous[name], value))
        if index > 0 and all(previous.get(k) == v for k, v in step.state.items()):
            lines.append("  (no variable changed)")
        previous = step.state
    return "\n".join(lines)


def violation_text(violation: Violation) -> str:
    """A violation's heading, its readable trace and, when the property explains itself,
    why the last state breaks it (for the model's evaluation error: the error, then the
    trace to the state whose next step it could not evaluate)."""
    if violation.invariant == EVALUATION_ERROR:
        return (f"evaluating the next step of State {violation.length} fails "
                f"({violation.explanation}); trace of {violation.length} states:\n"
                + text_trace(violation.trace))
    heading = f"{violation.invariant} is violated; trace of {violation.length} states:"
    text = heading + "\n" + text_trace(violation.trace)
    if violation.explanation:
        text += f"\nWhy State {violation.length} breaks {violation.invariant}: "
        text += violation.explanation
    return text


def result_text(result: CheckResult) -> str:
    """What ``isrlab check`` prints for a result: the summary line, every counterexample
    and the ``sometimes`` properties never reached."""
    lines = [result.summary_line()]
    for violation in (result.violation, *result.violations[1:]):
        if violation is not None:
            lines.append(violation_text(violation))
    unreached = [s.name for s in result.sometimes if not s.reached]
    if unreached:
        lines.append(f"never reached (sometimes): {', '.join(unreached)}")
    return "\n".join(lines)
