"""The compiled successor function of the tla-* models (spec/tla/_native.c) against the
pure Python reference (isrlab.spec.tla.model and isrlab.spec.variants): on every reachable
state of small configurations of every KafkaReplication variant, the same (label,
successor) list in the same order, the same WeakIsr and StrongIsr verdicts and the same
orbit representative (symmetry); and a whole search gives the same counts, coverage and
counterexample either way, with and without symmetry.

Skipped when the extension is not built (``python setup.py build_ext --inplace``, or the
README's ``./run`` install); the pure Python then runs everywhere, so nothing differs.
"""

from __future__ import annotations

import pickle
from collections import deque
from collections.abc import Callable
from typing import Any

import pytest

from isrlab.checker.bfs import CheckOptions, explore
from isrlab.checker.fingerprint import PURE_PYTHON_ENV
from isrlab.spec.tla import VERSIONS, TlaModel
from isrlab.spec.tla import model as tla_model

pytestmark = pytest.mark.skipif(
    not tla_model.NATIVE_BUILT, reason="isrlab.spec.tla._native is not built"
)

CONFIGS = [(2, 2, 2, 2), (3, 2, 2, 1), (3, 1, 2, 2), (1, 2, 2, 1), (2, 3, 3, 1), (4, 1, 1, 1)]
"""(replicas, log_size, max_records, max_leader_epoch): small, yet every action fires."""
LIMIT = 40_000
"""States compared per variant and configuration (breadth first from Init)."""


def pair(name: str, config: tuple[int, int, int, int]) -> tuple[TlaModel, TlaModel]:
    invariants = ("WeakIsr", "StrongIsr", "LeaderInIsr", "TypeOk")
    return (TlaModel(VERSIONS[name], *config, invariants, compiled=False),
            TlaModel(VERSIONS[name], *config, invariants, compiled=True))


@pytest.mark.parametrize("config", CONFIGS)
@pytest.mark.parametrize("name", sorted(VERSIONS))
def test_same_successors_and_verdicts(name: str, config: tuple[int, int, int, int]) -> None:
    pure, fast = pair(name, config)
    assert fast._native is not None and pure._native is None
    start = pure.layout.initial()
    seen, queue = {start}, deque([start])
    while queue and len(seen) < LIMIT:
        s = queue.popleft()
        expected = list(pure.next_states(s))
        assert fast.next_states(s) == expected, pure.variables(s)
        assert fast.weak_isr(s) == pure.weak_isr(s)
        assert fast.strong_isr(s) == pure.strong_isr(s)
        assert fast.canonical(s) == pure.canonical(s)
        for _, t in expected:
            if t not in seen:
                seen.add(t)
                queue.append(t)


@pytest.mark.parametrize("symmetry", [False, True])
@pytest.mark.parametrize("name", ["tla-kip101", "tla-kip320", "tla-kip320-first-try"])
def test_same_search(name: str, symmetry: bool) -> None:
    """Counts, diameter, coverage and the shortest counterexample agree."""
    pure, fast = pair(name, (3, 2, 2, 1))
    options = CheckOptions(stop_at_first=False, symmetry=symmetry)
    a, b = explore(pure, options), explore(fast, options)
    assert (a.distinct_states, a.generated_states, a.diameter) == (
        b.distinct_states, b.generated_states, b.diameter)
    assert a.coverage == b.coverage
    assert a.violations == b.violations


def test_pickles_and_falls_back(monkeypatch: pytest.MonkeyPatch) -> None:
    """A model pickled as the Spark engine ships it (cloudpickle) rebuilds its compiled
    part; with ISRLAB_PURE_PYTHON=1 (or the extension missing) a model runs the pure
    Python."""
    from pyspark import cloudpickle

    monkeypatch.delenv(PURE_PYTHON_ENV, raising=False)
    fast = TlaModel(VERSIONS["tla-kip320"], 2, 2, 2, 2)
    assert fast.compiled
    dumps: Callable[[Any], bytes] = cloudpickle.dumps
    again = pickle.loads(dumps(fast))
    s = fast.layout.initial()
    assert again._native is not None and again.next_states(s) == fast.next_states(s)
    monkeypatch.setenv(PURE_PYTHON_ENV, "1")
    assert not TlaModel(VERSIONS["tla-kip320"], 2, 2, 2, 2).compiled
    monkeypatch.delenv(PURE_PYTHON_ENV)
    monkeypatch.setattr(tla_model, "_compiled", None)
    assert not TlaModel(VERSIONS["tla-kip320"], 2, 2, 2, 2).compiled
