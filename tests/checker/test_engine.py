"""The compiled level engine (checker/_engine.c) against bfs.py's Python levels.

Its XXH3-64 (checker/_xxh3.h, shared with checker/_fpset.c) equals the xxhash package's
digest (checker/fingerprint.py); whole searches of tla-* models (bytes states, a compiled
successor function behind checker/_successors.h) give the same counts, diameter, coverage,
``sometimes`` levels and counterexamples, deadlocks included, with and without symmetry, on
1 to 3 threads, as the Python levels on the same model; the engine stays out of searches it
does not serve.
"""

from __future__ import annotations

from typing import Any

import pytest
import xxhash
from hypothesis import given, settings
from hypothesis import strategies as st

from isrlab.checker import bfs, fingerprint
from isrlab.spec.tla import VERSIONS, TlaModel

pytestmark = pytest.mark.skipif(
    fingerprint.compiled_engine() is None or TlaModel(VERSIONS["tla-kip320"], 2, 1, 1, 1)
    .native_successors() is None,
    reason="isrlab.checker._engine or isrlab.spec.tla._native is not built",
)


@settings(max_examples=300, deadline=None)
@given(st.binary(max_size=3000))
def test_its_digest_is_xxh3_64(data: bytes) -> None:
    from isrlab.checker import _engine

    assert _engine.xxh3_64(data) == xxhash.xxh3_64_intdigest(data)


def test_its_digest_on_every_length() -> None:
    """Every length of the short paths (0 to 240 bytes) and of the long path's first blocks
    (a block is 1,024 bytes), and a few long inputs (checker/_xxh3.h)."""
    from isrlab.checker import _engine

    for size in [*range(2100), 4095, 4096, 4097, 65_537]:
        data = bytes((7 * i + size + (i >> 8)) % 256 for i in range(size))
        assert _engine.xxh3_64(data) == xxhash.xxh3_64_intdigest(data), size
    with pytest.raises(TypeError):
        _engine.xxh3_64("not bytes")  # type: ignore[arg-type]  # the wrong type on purpose


def _summary(result: Any) -> tuple[Any, ...]:
    return (result.distinct_states, result.generated_states, result.diameter,
            result.coverage, result.sometimes, result.violations, result.violation,
            result.complete)


CASES = [
    ("tla-truncate-to-hw", (3, 2, 2, 1), ("WeakIsr", "StrongIsr")),
    ("tla-kip279", (3, 2, 2, 1), ("WeakIsr", "StrongIsr")),
    ("tla-kip320", (3, 2, 2, 2), ("WeakIsr", "StrongIsr")),
    ("tla-kip279", (2, 2, 2, 2), ("WeakIsr", "StrongIsr", "LeaderInIsr", "TypeOk")),
]


@pytest.mark.parametrize("threads", [1, 3])
@pytest.mark.parametrize("symmetry", [False, True])
@pytest.mark.parametrize(("name", "config", "invariants"), CASES)
def test_same_search_as_the_python_levels(
    monkeypatch: pytest.MonkeyPatch, name: str, config: tuple[int, int, int, int],
    invariants: tuple[str, ...], symmetry: bool, threads: int,
) -> None:
    """Every violated property's shortest trace (all of them: ``stop_at_first=False``),
    deadlocks included; with invariants the engine cannot evaluate (LeaderInIsr, TypeOk)
    bfs.py evaluates them on the engine's new states."""
    monkeypatch.delenv(fingerprint.PURE_PYTHON_ENV, raising=False)
    model = TlaModel(VERSIONS[name], *config, invariants)
    options = bfs.CheckOptions(workers=threads, symmetry=symmetry, stop_at_first=False,
                               check_deadlock=True)
    assert bfs._engine_for(model, options, threads) is not None
    fast = bfs.explore(model, options)
    monkeypatch.setattr(bfs, "compiled_engine", lambda: None)
    slow = bfs.explore(model, bfs.CheckOptions(workers=1, symmetry=symmetry,
                                               stop_at_first=False, check_deadlock=True))
    assert _summary(fast) == _summary(slow)
    assert fast.engine == ("bfs" if threads == 1 else f"bfs-{threads}thread")


def test_first_violation_and_bounds(monkeypatch: pytest.MonkeyPatch) -> None:
    """Stopping at the first violation, or after a depth or a state bound, ends where the
    Python levels end."""
    model = TlaModel(VERSIONS["tla-truncate-to-hw"], 3, 2, 2, 1)
    cases = [bfs.CheckOptions(workers=2), bfs.CheckOptions(workers=2, max_depth=5),
             bfs.CheckOptions(workers=2, max_states=3000, stop_at_first=False)]
    fast = [bfs.explore(model, options) for options in cases]
    monkeypatch.setattr(bfs, "compiled_engine", lambda: None)
    slow = [bfs.explore(model, options) for options in cases]
    assert [_summary(r) for r in fast] == [_summary(r) for r in slow]
    assert fast[0].violation is not None and not fast[1].complete


def test_not_for_a_run_directory_python_actions_or_pure_python(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Any,
) -> None:
    """A run directory, a variant with a disjunct or a truncation rule in Python
    (tla-kip320-first-try, tla-kip101's memoised rule) or ISRLAB_PURE_PYTHON=1: the Python
    levels."""
    for name in ("tla-kip320-first-try", "tla-kip101"):
        assert bfs._engine_for(TlaModel(VERSIONS[name], 2, 2, 2, 2), bfs.CheckOptions(),
                               1) is None
    model = TlaModel(VERSIONS["tla-kip320"], 2, 2, 2, 2)
    assert bfs._engine_for(model, bfs.CheckOptions(run_dir=tmp_path / "run"), 1) is None
    assert bfs._engine_for(model, bfs.CheckOptions(), 1) is not None
    monkeypatch.setenv(fingerprint.PURE_PYTHON_ENV, "1")
    assert bfs._engine_for(model, bfs.CheckOptions(), 1) is None
