"""The work Spark's Python workers do: the model's own pure functions over Arrow batches.

Three ``mapInArrow`` functions, each built from a model and shipped to the executors (the
model object travels pickled; states travel as ``model.encode`` bytes):

* ``init_rows`` -- level 1: the model's initial states, as candidate rows;
* ``expand_rows`` -- one frontier partition's successors as candidate rows, deduplicated
  *within the partition* to the smallest ``(parent, label)`` per fingerprint (the same
  order-independent rule as the local checker, so the global minimum is the minimum of the
  partition minima), plus one coverage row per action label (how many successors it
  generated) and one deadlock row (the smallest deadlocked parent) when asked;
* ``check_rows`` -- each new state's invariants, ``sometimes`` properties and boundary.

Fingerprints are stored *shifted*: ``key = fingerprint - 2**63``, a signed 64-bit value whose
signed order is the unsigned order of the fingerprint, so Spark's ``min`` over ``long`` picks
the same parent as the local checker's ``min`` over Python ints.
"""

from __future__ import annotations

import pickle
import uuid
from collections.abc import Callable, Iterator, Sequence
from typing import Any, Generic, TypeVar

import pyarrow as pa

from checker.fingerprint import fingerprint
from checker.model import Model
from checker.report import INIT_ACTION

S = TypeVar("S")

OFFSET = 1 << 63
"""``key = fingerprint - OFFSET``: the unsigned fingerprint as an order-preserving long."""

STATE, COVERAGE, DEADLOCK_ROW = 0, 1, 2
"""Row kinds: a (candidate) state, a coverage count, a deadlocked parent."""

CANDIDATE_SCHEMA = (
    "kind byte, fp long, parent long, label string, state binary, count long"
)
"""Rows leaving ``init_rows`` / ``expand_rows``; ``fp`` is null for non-state rows."""

LEVEL_SCHEMA = CANDIDATE_SCHEMA + ", expand boolean, violated long, reached long"
"""Rows of a level's Parquet files: candidate columns plus the verdicts of ``check_rows``."""

_CANDIDATE_TYPE = pa.schema([
    ("kind", pa.int8()), ("fp", pa.int64()), ("parent", pa.int64()), ("label", pa.string()),
    ("state", pa.binary()), ("count", pa.int64()),
])

_CHUNK = 32_768

ArrowMap = Callable[[Iterator[Any]], Iterator[Any]]

_LOADED: dict[str, Any] = {}
"""Models already unpickled in this Python worker, by run token (workers are reused)."""


class ModelRef(Generic[S]):
    """A model shipped once per run as a Spark broadcast of its pickled bytes.

    Each Python worker unpickles it once and keeps it for every later task of the run, so
    whatever the model memoises (e.g. per-header successor tables) survives across levels,
    and the driver's own copy (with whatever it cached) never travels with each task.
    """

    def __init__(self, broadcast: Any, token: str) -> None:
        self.broadcast = broadcast
        self.token = token

    def get(self) -> Model[S]:
        """The worker's copy of the model."""
        model = _LOADED.get(self.token)
        if model is None:
            _LOADED.clear()  # a new run: forget the previous run's model and its memos
            model = _LOADED[self.token] = pickle.loads(self.broadcast.value)
        return model  # type: ignore[no-any-return]  # unpickled: typed by the broadcast

    @staticmethod
    def share(session: Any, model: Model[S]) -> ModelRef[S]:
        """Broadcast ``model`` (pickled with cloudpickle, as Spark pickles closures)."""
        from pyspark import cloudpickle

        dumps: Callable[[Any], bytes] = cloudpickle.dumps
        return ModelRef(session.sparkContext.broadcast(dumps(model)), uuid.uuid4().hex)


def to_key(fp: int) -> int:
    """The stored (signed, order-preserving) form of an unsigned 64-bit fingerprint."""
    return fp - OFFSET


def from_key(key: int) -> int:
    """The unsigned fingerprint of a stored key."""
    return key + OFFSET


def _candidate_batches(
    best: dict[int, tuple[int, str, bytes]], coverage: dict[str, int], deadlock: int | None,
) -> Iterator[Any]:
    """Arrow batches of deduplicated candidates, then coverage and deadlock rows."""
    items = list(best.items())
    best.clear()
    for start in range(0, len(items), _CHUNK):
        chunk = items[start : start + _CHUNK]
        yield pa.RecordBatch.from_arrays(
            [
                pa.array([STATE] * len(chunk), pa.int8()),
                pa.array([fp for fp, _ in chunk], pa.int64()),
                pa.array([link[0] for _, link in chunk], pa.int64()),
                pa.array([link[1] for _, link in chunk], pa.string()),
                pa.array([link[2] for _, link in chunk], pa.binary()),
                pa.array([None] * len(chunk), pa.int64()),
            ],
            schema=_CANDIDATE_TYPE,
        )
    labels = sorted(coverage)
    kinds = [COVERAGE] * len(labels)
    parents: list[int | None] = [None] * len(labels)
    counts: list[int | None] = [coverage[label] for label in labels]
    names: list[str | None] = list(labels)
    if deadlock is not None:
        kinds.append(DEADLOCK_ROW)
        parents.append(deadlock)
        counts.append(None)
        names.append(None)
    if kinds:
        yield pa.RecordBatch.from_arrays(
            [
                pa.array(kinds, pa.int8()),
                pa.array([None] * len(kinds), pa.int64()),
                pa.array(parents, pa.int64()),
                pa.array(names, pa.string()),
                pa.array([None] * len(kinds), pa.binary()),
                pa.array(counts, pa.int64()),
            ],
            schema=_CANDIDATE_TYPE,
        )


def init_rows(ref: ModelRef[S], symmetry: bool) -> ArrowMap:
    """Level 1: every initial state once (first found wins: all share the link ``Init``).

    Runs on a one-row seed partition; partitions without a row produce nothing, so the
    initial states are generated exactly once however Spark splits the seed.
    """

    def run(batches: Iterator[Any]) -> Iterator[Any]:
        if sum(batch.num_rows for batch in batches) == 0:
            return
        model = ref.get()
        best: dict[int, tuple[int, str, bytes]] = {}
        generated = 0
        root = to_key(0)
        for state in model.init_states():
            generated += 1
            representative = model.canonical(state) if symmetry else state
            encoding = model.encode(representative)
            key = to_key(fingerprint(encoding))
            if key not in best:
                best[key] = (root, INIT_ACTION, encoding)
        yield from _candidate_batches(best, {INIT_ACTION: generated}, None)

    return run


def expand_rows(ref: ModelRef[S], symmetry: bool, check_deadlock: bool) -> ArrowMap:
    """Successors of one frontier partition (rows ``fp, state``), deduplicated per partition.

    Each ``(label, successor)`` pair counts as one generated state (TLC's count); a state
    reached from several parents keeps the smallest ``(parent key, label)``.
    """

    def run(batches: Iterator[Any]) -> Iterator[Any]:
        model = ref.get()
        decode, next_states, encode = model.decode, model.next_states, model.encode
        canonical = model.canonical if symmetry else None
        best: dict[int, tuple[int, str, bytes]] = {}
        coverage: dict[str, int] = {}
        deadlock: int | None = None
        for batch in batches:
            parents = batch.column("fp").to_pylist()
            encodings = batch.column("state").to_pylist()
            for parent, data in zip(parents, encodings, strict=True):
                count = 0
                for label, successor in next_states(decode(data)):
                    count += 1
                    coverage[label] = coverage.get(label, 0) + 1
                    if canonical is not None:
                        successor = canonical(successor)
                    encoding = encode(successor)
                    key = fingerprint(encoding) - OFFSET
                    old = best.get(key)
                    if (
                        old is None
                        or parent < old[0]
                        or (parent == old[0] and label < old[1])
                    ):
                        best[key] = (parent, label, encoding)
                if count == 0 and check_deadlock and (deadlock is None or parent < deadlock):
                    deadlock = parent
        yield from _candidate_batches(best, coverage, deadlock)

    return run


def _violated(invariants: Sequence[Callable[[S], bool]], state: S) -> int:
    """The bit mask of the invariants that do not hold in ``state``."""
    mask = 0
    for index, holds in enumerate(invariants):
        if not holds(state):
            mask |= 1 << index
    return mask


def settle_rows(ref: ModelRef[S], pending_sometimes: int) -> ArrowMap:
    """A new level's rows: candidates merged per fingerprint, then checked.

    The rows arrive partitioned by fingerprint, so every candidate of one state is in this
    partition; it keeps the smallest ``(parent, label)``.  Each state then gets its verdicts:
    the bit mask of violated invariants, of newly reached ``sometimes`` properties
    (``pending_sometimes`` masks the ones not yet reached; the others are not evaluated
    again) and whether it lies within the boundary (is expanded).  Coverage and deadlock
    rows pass through with neutral verdicts.
    """

    def run(batches: Iterator[Any]) -> Iterator[Any]:
        model = ref.get()
        invariants = [p.holds for p in model.invariants()]
        sometimes = [p.holds for p in model.sometimes()]
        wanted = [(i, h) for i, h in enumerate(sometimes) if pending_sometimes >> i & 1]
        best: dict[int, tuple[int, str, bytes]] = {}
        others: list[tuple[int, int | None, str | None, int | None]] = []
        for batch in batches:
            columns = [batch.column(name).to_pylist() for name in _CANDIDATE_TYPE.names]
            for kind, key, parent, label, data, count in zip(*columns, strict=True):
                if kind != STATE:
                    others.append((kind, parent, label, count))
                    continue
                old = best.get(key)
                if old is None or parent < old[0] or (parent == old[0] and label < old[1]):
                    best[key] = (parent, label, data)
        yield from _verdict_batches(model, best, invariants, wanted)
        if others:
            yield _other_batch(others)

    return run


_LEVEL_TYPE = pa.schema([
    *_CANDIDATE_TYPE, ("expand", pa.bool_()), ("violated", pa.int64()), ("reached", pa.int64()),
])


def _verdict_batches(
    model: Model[S], best: dict[int, tuple[int, str, bytes]],
    invariants: Sequence[Callable[[S], bool]], wanted: Sequence[tuple[int, Callable[[S], bool]]],
) -> Iterator[Any]:
    """The settled states of a partition with their verdicts, as Arrow batches."""
    decode, within = model.decode, model.within_boundary
    items = list(best.items())
    best.clear()
    for start in range(0, len(items), _CHUNK):
        chunk = items[start : start + _CHUNK]
        expand: list[bool] = []
        violated: list[int] = []
        reached: list[int] = []
        for _, (_, _, data) in chunk:
            state = decode(data)
            expand.append(bool(within(state)))
            mask = 0
            for index, holds in enumerate(invariants):
                if not holds(state):
                    mask |= 1 << index
            violated.append(mask - (1 << 64) if mask >> 63 else mask)
            mask = 0
            for index, holds in wanted:
                if holds(state):
                    mask |= 1 << index
            reached.append(mask - (1 << 64) if mask >> 63 else mask)
        yield pa.RecordBatch.from_arrays(
            [
                pa.array([STATE] * len(chunk), pa.int8()),
                pa.array([key for key, _ in chunk], pa.int64()),
                pa.array([link[0] for _, link in chunk], pa.int64()),
                pa.array([link[1] for _, link in chunk], pa.string()),
                pa.array([link[2] for _, link in chunk], pa.binary()),
                pa.array([None] * len(chunk), pa.int64()),
                pa.array(expand, pa.bool_()),
                pa.array(violated, pa.int64()),
                pa.array(reached, pa.int64()),
            ],
            schema=_LEVEL_TYPE,
        )


def _other_batch(rows: Sequence[tuple[int, int | None, str | None, int | None]]) -> Any:
    """Coverage and deadlock rows with neutral verdicts."""
    size = len(rows)
    return pa.RecordBatch.from_arrays(
        [
            pa.array([row[0] for row in rows], pa.int8()),
            pa.array([None] * size, pa.int64()),
            pa.array([row[1] for row in rows], pa.int64()),
            pa.array([row[2] for row in rows], pa.string()),
            pa.array([None] * size, pa.binary()),
            pa.array([row[3] for row in rows], pa.int64()),
            pa.array([False] * size, pa.bool_()),
            pa.array([0] * size, pa.int64()),
            pa.array([0] * size, pa.int64()),
        ],
        schema=_LEVEL_TYPE,
    )


def bits(mask: int) -> list[int]:
    """The indices of the bits set in a 64-bit mask read back from Spark (maybe negative)."""
    mask &= (1 << 64) - 1
    return [i for i in range(64) if mask >> i & 1]
