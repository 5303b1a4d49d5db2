"""The compiled fingerprint set (checker/_fpset.c) against a Python set: the same
membership answers and sizes after the same updates (arrays and plain iterables, the
fingerprint 0 and 2**64-1 included, across many table growths); the compiled loops against
plain Python loops (``columns``, the Spark engine's expansion, against a plain loop on random
graphs of bytes states)."""

from __future__ import annotations

from array import array
from collections.abc import Callable
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from isrlab.checker import fingerprint

pytestmark = pytest.mark.skipif(
    fingerprint.COMPILED_SET is None, reason="isrlab.checker._fpset is not built"
)

FPS = st.integers(min_value=0, max_value=2**64 - 1)


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(st.booleans(), st.lists(FPS, max_size=300)), max_size=8),
       st.lists(FPS, max_size=50))
def test_same_as_a_python_set(batches: list[tuple[bool, list[int]]], probes: list[int]) -> None:
    assert fingerprint.COMPILED_SET is not None
    compiled, reference = fingerprint.COMPILED_SET(), set[int]()
    for as_array, fps in batches:
        compiled.update(array("Q", fps) if as_array else iter(fps))
        reference.update(fps)
        assert len(compiled) == len(reference)
    for fp in [*probes, *reference, 0, 2**64 - 1]:
        assert (fp in compiled) == (fp in reference)
    assert -1 not in compiled and 2**64 not in compiled and "x" not in compiled


def test_many_and_the_choice(monkeypatch: pytest.MonkeyPatch) -> None:
    assert fingerprint.COMPILED_SET is not None
    monkeypatch.delenv(fingerprint.PURE_PYTHON_ENV, raising=False)
    fps = array("Q", ((i * 0x9E3779B97F4A7C15 + 12345) % 2**64 for i in range(200_000)))
    compiled = fingerprint.COMPILED_SET()
    compiled.update(fps)
    compiled.update(fps[:1000])
    reference = set(fps)
    assert len(compiled) == len(reference)
    assert all(fp in compiled for fp in fps[::97])
    assert [fp + 1 in compiled for fp in fps[::97]] == [fp + 1 in reference for fp in fps[::97]]
    assert isinstance(fingerprint.fingerprint_set(), fingerprint.COMPILED_SET)
    monkeypatch.setenv(fingerprint.PURE_PYTHON_ENV, "1")
    assert isinstance(fingerprint.fingerprint_set(), set)


@pytest.mark.parametrize(("workers", "symmetry"), [(1, False), (1, True), (2, False), (2, True)])
def test_compiled_scan_same_search(
    monkeypatch: pytest.MonkeyPatch, workers: int, symmetry: bool,
) -> None:
    """bfs's loops over the frontier and its exchange between workers compiled
    (checker/_fpset.c: expand, scan, split, merge) or in Python (``_Worker.expand``,
    ``_scan_python``, ``_publish``, ``merge``): the same counts, coverage and
    counterexamples (deadlocks included)."""
    from isrlab.checker import bfs, level_worker
    from isrlab.spec.tla import VERSIONS, TlaModel

    assert fingerprint.COMPILED_SCAN is not None
    monkeypatch.delenv(fingerprint.PURE_PYTHON_ENV, raising=False)
    model = TlaModel(VERSIONS["tla-kip101"], 3, 2, 2, 1)
    options = bfs.CheckOptions(workers=workers, symmetry=symmetry, stop_at_first=False,
                               check_deadlock=True)
    monkeypatch.setattr(bfs, "compiled_engine", lambda: None)  # tests/checker/test_engine.py
    compiled = bfs.explore(model, options)
    monkeypatch.setattr(level_worker, "compiled_scan", lambda: None)
    monkeypatch.setattr(level_worker, "compiled_expand", lambda: None)
    monkeypatch.setattr(level_worker, "compiled_exchange", lambda: None)
    monkeypatch.setattr(level_worker, "compiled_failures", lambda: None)
    monkeypatch.setattr(level_worker, "compiled_link_columns", lambda: None)
    python = bfs.explore(model, options)
    assert (compiled.distinct_states, compiled.generated_states, compiled.diameter) == (
        python.distinct_states, python.generated_states, python.diameter)
    assert compiled.coverage == python.coverage
    assert compiled.violations == python.violations and compiled.violations


@pytest.mark.parametrize("workers", [1, 2])
def test_bytes_states_resume_from_a_run_directory(tmp_path: Any, workers: int) -> None:
    """A tla-* search (bytes states: the compiled paths) stopped after level 6 and resumed
    from its run directory ends as the uninterrupted search does."""
    from isrlab.checker import bfs
    from isrlab.spec.tla import VERSIONS, TlaModel

    model = TlaModel(VERSIONS["tla-kip101"], 3, 2, 2, 1)
    whole = bfs.explore(model, bfs.CheckOptions(workers=workers, stop_at_first=False))
    partial = bfs.CheckOptions(workers=workers, stop_at_first=False, max_depth=6,
                               run_dir=tmp_path / "run")
    assert not bfs.explore(model, partial).complete
    resumed = bfs.explore(model, bfs.CheckOptions(workers=3 - workers, stop_at_first=False,
                                                  run_dir=tmp_path / "run"))
    assert (resumed.distinct_states, resumed.generated_states, resumed.diameter) == (
        whole.distinct_states, whole.generated_states, whole.diameter)
    assert resumed.violations == whole.violations


STATES = st.binary(max_size=3).map(lambda b: bytes(x % 3 for x in b))  # few, so repeats
LABELS = st.sampled_from(["A", "B", "Go", "Go(1)", "Z"])


def _columns_reference(
    parents: list[int], states: list[bytes], edges: dict[bytes, list[tuple[str, bytes]]],
    symmetric: bool,
) -> tuple[list[tuple[int, int, str, bytes]], dict[str, int], list[int]]:
    """What ``columns`` must return, written plainly: rows (fingerprint, parent, label,
    state) in first-seen order with the smallest (parent, label) kept, the generated count
    per label in first-seen order, and the parents without successors."""
    rows: dict[int, list[Any]] = {}
    counts: dict[str, int] = {}
    dead = []
    for parent, state in zip(parents, states, strict=True):
        if not edges[state]:
            dead.append(parent)
        for label, successor in edges[state]:
            counts[label] = counts.get(label, 0) + 1
            representative = bytes(sorted(successor)) if symmetric else successor
            fp = fingerprint.fingerprint(representative)
            if fp not in rows:
                rows[fp] = [parent, label, representative]
            elif rows[fp][0] == parent and label < rows[fp][1]:
                rows[fp][1] = label
    return [(fp, *row) for fp, row in rows.items()], counts, dead


@settings(max_examples=200, deadline=None)
@given(st.dictionaries(STATES, st.lists(st.tuples(LABELS, STATES), max_size=6), max_size=12),
       st.lists(st.integers(0, 2**64 - 1), max_size=12, unique=True), st.booleans())
def test_columns_is_the_plain_loop(
    edges: dict[bytes, list[tuple[str, bytes]]], parent_fps: list[int], symmetric: bool,
) -> None:
    from isrlab.checker._fpset import columns  # the C function itself, ISRLAB_PURE_PYTHON or not

    states = list(edges)[:len(parent_fps)]
    parents = sorted(parent_fps)[:len(states)]
    fps, links, label_codes, names, offsets, data, counts, dead = columns(
        array("Q", parents).tobytes(), states, edges.__getitem__, fingerprint.xxh3_64,
        {} if symmetric else None, (lambda s: bytes(sorted(s))) if symmetric else None)
    rows, expected_counts, expected_dead = _columns_reference(parents, states, edges, symmetric)
    ends = array("i", offsets)
    got = [(fp, parent, names[code], data[ends[i]:ends[i + 1]])
           for i, (fp, parent, code) in enumerate(zip(
               array("Q", fps), array("Q", links), array("i", label_codes), strict=True))]
    assert got == rows
    assert dict(zip(names, array("q", counts), strict=True)) == expected_counts
    assert names == list(expected_counts)  # labels by code, in first-seen order
    assert list(array("Q", dead)) == expected_dead


def _scan_both(
    rounds: list[tuple[int, list[tuple[str, tuple[int, ...]]]]], seen_fps: list[int],
    symmetric: bool, keep: bool,
) -> tuple[Any, Any]:
    """The same successor lists through ``_Worker._scan_python`` and the compiled ``scan``
    (a model with an ``encode``: tuples of small ints as bytes), from the same visited set:
    each side's links, candidates, encodings and orbit cache."""
    from isrlab.checker import _fpset, level_worker
    from isrlab.checker.bfs import CheckOptions
    from isrlab.checker.toys import Symmetric

    model = Symmetric(procs=3, values=3)
    worker = level_worker._Worker(model, CheckOptions(), 0, 1, None, None, None)
    canonical = model.canonical if symmetric else None
    sides = []
    for compiled in (False, True):
        seen = fingerprint.fingerprint_set()
        seen.update(seen_fps)
        links: dict[int, tuple[int, str]] = {}
        candidates: list[tuple[int, ...]] = []
        encodings: list[bytes] = []
        orbit: dict[int, int] = {}
        for pfp, successors in rounds:
            if compiled:
                _fpset.scan(
                    successors, pfp, seen, links, candidates, None,
                    orbit if symmetric else None, canonical, model.encode,
                    encodings if keep else None)
            else:
                worker._scan_python(successors, pfp, seen, links, orbit, canonical,
                                    candidates.append, encodings.append if keep else None)
        sides.append((list(links.items()), candidates, encodings, list(orbit.items())))
    return sides[0], sides[1]


TUPLES = st.tuples(*[st.integers(0, 2)] * 3)


@settings(max_examples=300, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 3), st.lists(st.tuples(LABELS, TUPLES), max_size=6)),
                max_size=8),
       st.lists(TUPLES, max_size=6), st.booleans(), st.booleans())
def test_scan_with_encode_is_the_python_loop(
    rounds: list[tuple[int, list[tuple[str, tuple[int, ...]]]]],
    seen_states: list[tuple[int, ...]], symmetric: bool, keep: bool,
) -> None:
    """The compiled ``scan`` given a model's ``encode`` (checker/_fpset.c) does what
    ``_scan_python`` does: the same links in the same order (the smallest (parent, label)
    kept, parents repeating so that labels decide), the same candidates (representatives
    under symmetry) with their encodings, the same orbit cache."""
    seen_fps = [fingerprint.fingerprint(bytes(state)) for state in seen_states]
    python, compiled = _scan_both(rounds, seen_fps, symmetric, keep)
    assert compiled == python


def _search_summary(result: Any) -> tuple[Any, ...]:
    return (result.distinct_states, result.generated_states, result.diameter,
            result.coverage, result.sometimes, result.violations, result.violation)


@pytest.mark.parametrize(("name", "workers", "symmetry"), [
    ("kafka", 1, False), ("kafka", 2, False), ("symmetric", 1, True),
    ("symmetric", 2, True), ("counter", 1, False), ("counter", 2, False),
])
def test_encoded_models_compiled_same_search(
    monkeypatch: pytest.MonkeyPatch, name: str, workers: int, symmetry: bool,
) -> None:
    """Models whose states are not bytes (``encode`` called by the compiled loops): the
    search with checker/_fpset.c's ``expand``, ``scan``, ``failures`` and ``link_columns``
    and with the Python loops gives the same counts, coverage, witnesses and
    counterexamples with their traces: the ``kafka`` model (ZooKeeper mode, 2 brokers, one
    record, to depth 12), interchangeable processes under symmetry, a counter with a
    boundary and a deadlock."""
    from isrlab.checker import bfs, level_worker
    from isrlab.checker.toys import Counter, Symmetric
    from isrlab.spec.kafka.config import KafkaConfig
    from isrlab.spec.kafka.model import KafkaModel

    monkeypatch.delenv(fingerprint.PURE_PYTHON_ENV, raising=False)
    model: Any
    if name == "kafka":
        model = KafkaModel(KafkaConfig(max_records=1))
    elif name == "symmetric":
        model = Symmetric(procs=4, values=3, bad_sum=7)
    else:
        model = Counter(limit=9, bad=7, bound=8)
    options = bfs.CheckOptions(workers=workers, symmetry=symmetry, stop_at_first=False,
                               check_deadlock=name == "counter",
                               max_depth=12 if name == "kafka" else None)
    compiled = bfs.explore(model, options)
    monkeypatch.setattr(level_worker, "compiled_scan", lambda: None)
    monkeypatch.setattr(level_worker, "compiled_expand", lambda: None)
    monkeypatch.setattr(level_worker, "compiled_failures", lambda: None)
    monkeypatch.setattr(level_worker, "compiled_link_columns", lambda: None)
    python = bfs.explore(model, options)
    assert _search_summary(compiled) == _search_summary(python)
    assert compiled.generated_states > 0 and (name == "kafka" or compiled.violations)


def test_its_digest_is_xxh3_64_on_every_length() -> None:
    """checker/_xxh3.h as ``scan`` uses it: the xxhash package's XXH3-64 on the short
    paths' lengths, the long path's first blocks, and kafka-sized encodings."""
    from isrlab.checker import _fpset

    for size in [*range(1100), 2047, 2048, 2049, 70_000]:
        data = bytes((31 * i + size) % 251 for i in range(size))
        assert _fpset.xxh3_64(data) == fingerprint.fingerprint(data), size


@settings(max_examples=200, deadline=None)
@given(st.lists(st.integers(0, 20), max_size=30), st.lists(st.integers(1, 7), max_size=5))
def test_failures_is_the_plain_loop(states: list[int], divisors: list[int]) -> None:
    """``failures`` (the new states' check) returns, state by state, every (predicate,
    state) whose predicate is false, as a plain double loop does; a predicate's exception
    is raised."""
    from isrlab.checker import _fpset

    def not_multiple_of(d: int) -> Callable[[int], bool]:
        return lambda x: x % d != 0

    predicates = tuple(map(not_multiple_of, divisors))
    expected = [(j, i) for i, state in enumerate(states)
                for j, holds in enumerate(predicates) if not holds(state)]
    assert _fpset.failures(states, predicates) == expected
    with pytest.raises(ZeroDivisionError):
        _fpset.failures([*states, 0], (lambda x: 1 // x > -1,))
