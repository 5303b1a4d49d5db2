"""The work Spark's Python workers do: the model's own pure functions over Arrow batches.

Two ``mapInArrow`` functions, each built from a model and shipped to the executors (the model
travels once per run as a broadcast; states travel as ``model.encode`` bytes):

* ``init_rows`` -- the initial states, as candidate rows of level 1;
* ``level_rows`` -- one *bucket* of level ``k``: every candidate row whose fingerprint falls in
  the bucket (Spark's shuffle put them together).  In one Python pass the task

  1. settles the candidates: one row per fingerprint, the smallest ``(parent, label)`` (the
     local checker's order-independent rule), vectorised in Arrow (sort, first of each run);
  2. drops the fingerprints already visited: this bucket's fingerprints of every earlier
     level, read from the small ``visited/level-*/bucket-*.fp`` files earlier tasks wrote
     (the visited set never travels through a shuffle: bucket ``b`` of every level holds the
     same fingerprints' range of Spark's hash partitioner);
  3. checks each new state (invariants, pending ``sometimes``, ``within_boundary``) and, in
     the same pass over the decoded state, expands it with ``next_states``: its successors,
     deduplicated within the task, are the candidate rows of level ``k + 1``;
  4. writes this bucket's new fingerprints and its counters (new, frontier, coverage,
     violations, reached ``sometimes``, generated, deadlock) as two side files, then emits the
     level's rows (settled states and next candidates) for Spark to write as Parquet.

Everything a task writes is a function of its input *set* (the candidates of its bucket), so
a retried or duplicated attempt (a lost executor, a killed worker) writes the very same side
files; they are replaced atomically.  The counters are therefore exact under task retries,
unlike Spark accumulators.

Fingerprints are stored *shifted*: ``key = fingerprint - 2**63``, a signed 64-bit value whose
signed order is the unsigned order of the fingerprint, so Arrow's and Spark's ordering of
``long`` picks the same parent as the local checker's ``min`` over Python ints.
"""

from __future__ import annotations

import json
import os
import pickle
import uuid
from array import array
from collections import _count_elements as count_labels  # type: ignore[attr-defined]  # C helper behind Counter.update
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from operator import itemgetter
from pathlib import Path
from typing import Any, Generic, TypeVar

import pyarrow as pa
import pyarrow.compute as pc

from isrlab.checker.fingerprint import compiled_expand, fingerprint, fingerprint_set
from isrlab.checker.fingerprint import xxh3_64 as _xxh3
from isrlab.checker.model import Model
from isrlab.checker.report import INIT_ACTION

S = TypeVar("S")

OFFSET = 1 << 63
"""``key = fingerprint - OFFSET``: the unsigned fingerprint as an order-preserving long."""

STATE, CANDIDATE = 0, 1
"""Row kinds of a level's Parquet files: a settled state of the level, a candidate of the next."""

CANDIDATE_SCHEMA = "fp long, parent long, label string, state binary"
"""Candidate rows: a successor's key, the smallest parent key and label seen, its encoding."""

LEVEL_SCHEMA = (
    "kind byte, fp long, parent long, label string, state binary, "
    "expand boolean, violated long, reached long"
)
"""Rows of a level's Parquet files.  ``STATE`` rows: the level's states (key, link, verdicts;
no encoding: it is in the previous level's candidate row).  ``CANDIDATE`` rows: the next
level's candidates with their encodings (verdict columns null)."""

_CANDIDATE_TYPE = pa.schema([
    ("fp", pa.int64()), ("parent", pa.int64()), ("label", pa.string()), ("state", pa.binary()),
])
_LEVEL_TYPE = pa.schema([
    ("kind", pa.int8()), *_CANDIDATE_TYPE,
    ("expand", pa.bool_()), ("violated", pa.int64()), ("reached", pa.int64()),
])

VISITED = "visited"
"""The run directory's folder of per-level, per-bucket side files."""

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


def _signed(mask: int) -> int:
    """A 64-bit mask as Spark's signed ``long``."""
    return mask - (1 << 64) if mask >> 63 else mask


def bits(mask: int) -> list[int]:
    """The indices of the bits set in a 64-bit mask (maybe stored negative)."""
    mask &= (1 << 64) - 1
    return [i for i in range(64) if mask >> i & 1]


# -- side files ---------------------------------------------------------------------------------


def side_dir(root: str | Path, level: int) -> Path:
    """The folder of level ``level``'s per-bucket side files."""
    return Path(root) / VISITED / f"level-{level:04d}"


def _replace(path: Path, data: bytes) -> None:
    """Write ``data`` to ``path`` atomically (a retried task rewrites the same bytes)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    temporary = path.with_name(f".{path.name}.{uuid.uuid4().hex}")
    temporary.write_bytes(data)
    os.replace(temporary, path)


def read_summary(root: str | Path, level: int, bucket: int) -> dict[str, Any]:
    """The counters bucket ``bucket`` of level ``level`` recorded (see ``level_rows``)."""
    path = side_dir(root, level) / f"bucket-{bucket:05d}.json"
    try:
        record: dict[str, Any] = json.loads(path.read_bytes())
    except FileNotFoundError as error:
        raise RuntimeError(
            f"{path} is missing: the executors and the driver must share the run directory"
        ) from error
    return record


def _visited(root: str, level: int, bucket: int) -> list[Any]:
    """Bucket ``bucket``'s keys of levels ``1 .. level - 1`` (Arrow arrays, one per level)."""
    arrays = []
    for earlier in range(1, level):
        data = (side_dir(root, earlier) / f"bucket-{bucket:05d}.fp").read_bytes()
        if data:
            arrays.append(pa.Array.from_buffers(
                pa.int64(), len(data) // 8, [None, pa.py_buffer(data)]
            ))
    return arrays


# -- level 1 ----------------------------------------------------------------------------------


def _candidate_batches(best: dict[int, tuple[int, str, bytes]]) -> Iterator[Any]:
    """Arrow batches of deduplicated candidates (``CANDIDATE_SCHEMA``)."""
    items = list(best.items())
    best.clear()
    for start in range(0, len(items), _CHUNK):
        chunk = items[start : start + _CHUNK]
        yield pa.RecordBatch.from_arrays(
            [
                pa.array([key for key, _ in chunk], pa.int64()),
                pa.array([link[0] for _, link in chunk], pa.int64()),
                pa.array([link[1] for _, link in chunk], pa.string()),
                pa.array([link[2] for _, link in chunk], pa.binary()),
            ],
            schema=_CANDIDATE_TYPE,
        )


def init_rows(ref: ModelRef[S], symmetry: bool) -> ArrowMap:
    """Level 1's candidates: every initial state once (all share the link ``Init``).

    Runs on a one-row seed partition; partitions without a row produce nothing, so the
    initial states are generated exactly once however Spark splits the seed.
    """

    def run(batches: Iterator[Any]) -> Iterator[Any]:
        if sum(batch.num_rows for batch in batches) == 0:
            return
        model = ref.get()
        best: dict[int, tuple[int, str, bytes]] = {}
        root = to_key(0)
        for state in model.init_states():
            representative = model.canonical(state) if symmetry else state
            encoding = model.encode(representative)
            key = to_key(fingerprint(encoding))
            if key not in best:
                best[key] = (root, INIT_ACTION, encoding)
        yield from _candidate_batches(best)

    return run


# -- level k ----------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class LevelPlan:
    """What the tasks of one level need besides the model.

    ``pending_sometimes`` masks the ``sometimes`` properties not reached before this level
    (the others are not evaluated again); ``expand`` is false for a level the search will
    not go beyond (``--max-depth``).
    """

    root: str
    level: int
    pending_sometimes: int
    expand: bool
    symmetry: bool
    check_deadlock: bool


def settle(table: Any, visited: list[Any]) -> Any:
    """One row per fingerprint with the smallest ``(parent, label)``, minus visited keys.

    ``table`` holds candidate rows (``CANDIDATE_SCHEMA``); the result is sorted by key.
    Arrow compares strings by their UTF-8 bytes, which is Python's code-point order.
    """
    if table.num_rows == 0:
        return table
    order = pc.sort_indices(
        table.select(["fp", "parent", "label"]),
        sort_keys=[("fp", "ascending"), ("parent", "ascending"), ("label", "ascending")],
    )
    keys = table.column("fp").take(order).combine_chunks()
    size = len(keys)
    if size > 1:
        first = pa.concat_arrays([
            pa.array([True]), pc.not_equal(keys.slice(1), keys.slice(0, size - 1)),
        ])
        order, keys = order.filter(first), keys.filter(first)
    if visited:
        seen = pa.chunked_array(visited, pa.int64())
        hits = seen.filter(pc.is_in(seen, value_set=keys))
        if len(hits):
            fresh = pc.invert(pc.is_in(keys, value_set=hits.combine_chunks()))
            order = order.filter(fresh)
    return table.take(order)


def level_rows(ref: ModelRef[S], plan: LevelPlan) -> ArrowMap:
    """One bucket of a level: settle, drop visited, check and expand in one pass (see above).

    Each ``(label, successor)`` pair counts as one generated state (TLC's count); a successor
    found several times in the task keeps the smallest ``(parent key, label)``.
    """

    def run(batches: Iterator[Any]) -> Iterator[Any]:
        from pyspark import TaskContext

        context = TaskContext.get()
        bucket = context.partitionId() if context is not None else 0
        model = ref.get()
        table = pa.Table.from_batches(list(batches), schema=_CANDIDATE_TYPE)
        new = settle(table, _visited(plan.root, plan.level, bucket))
        del table
        keys: list[int] = new.column("fp").to_pylist()
        outcome = _check_and_expand(model, plan, keys, new.column("state").to_pylist())
        summary = outcome.summary(new)
        folder = side_dir(plan.root, plan.level)
        _replace(folder / f"bucket-{bucket:05d}.fp", array("q", keys).tobytes())
        _replace(folder / f"bucket-{bucket:05d}.json", json.dumps(summary).encode())
        yield from _state_batches(new, outcome)
        yield from _next_batches(outcome.best)

    return run


@dataclass(slots=True)
class _Outcome:
    """What one bucket's pass found (verdict columns, next candidates, counters)."""

    expand: list[bool]
    violated: list[int]
    reached: list[int]
    best: dict[int, tuple[int, str, bytes]]
    coverage: dict[str, int]
    smallest: dict[int, int]  # invariant index -> smallest violating key
    reached_mask: int
    frontier: int
    generated: int
    deadlock: int | None

    def summary(self, new: Any) -> dict[str, Any]:
        """The JSON counters of the bucket (``new``: its settled states)."""
        inside = new.filter(pa.array(self.expand, pa.bool_())) if new.num_rows else new
        labels = pc.value_counts(inside.column("label")).to_pylist() if inside.num_rows else []
        return {
            "new": self.frontier,  # TLC's distinct count: states within the CONSTRAINT
            "frontier": self.frontier,
            "cov_distinct": {item["values"]: item["counts"] for item in labels},
            "violations": {str(i): key for i, key in self.smallest.items()},
            "reached": self.reached_mask,
            "generated": self.generated,
            "cov_generated": self.coverage,
            "deadlock": self.deadlock,
        }


def _check_and_expand(
    model: Model[S], plan: LevelPlan, keys: list[int], encodings: list[bytes],
) -> _Outcome:
    """Verdicts of each new state and its successors; ``keys`` ascend, so do the parents."""
    decode, within = model.decode, model.within_boundary
    invariants = list(enumerate(p.holds for p in model.invariants()))
    wanted = [
        (i, p.holds) for i, p in enumerate(model.sometimes()) if plan.pending_sometimes >> i & 1
    ]
    out = _Outcome([], [], [], {}, {}, {}, 0, 0, 0, None)
    growing_keys: list[int] = []
    growing: list[S] = []
    for parent, data in zip(keys, encodings, strict=True):
        state = decode(data)
        inside = bool(within(state))
        out.expand.append(inside)
        mask = 0
        for index, holds in invariants:
            if not holds(state):
                mask |= 1 << index
                out.smallest.setdefault(index, parent)  # keys ascend: the first is the smallest
        out.violated.append(_signed(mask))
        mask = 0
        for index, holds in wanted:
            if holds(state):
                mask |= 1 << index
        out.reached.append(_signed(mask))
        out.reached_mask |= mask
        if inside:
            out.frontier += 1
            if plan.expand:
                growing_keys.append(parent)
                growing.append(state)
    expand = compiled_expand() if getattr(model, "identity_encoding", False) else None
    if expand is not None:
        _expand_compiled(expand, model, plan, growing_keys, growing, out)
    else:
        _expand_python(model, plan, growing_keys, growing, out)
    return out


def _expand_python(
    model: Model[S], plan: LevelPlan, keys: list[int], states: list[S], out: _Outcome,
) -> None:
    """The successors of ``states`` (parents ``keys``, ascending) into ``out.best``, with
    their coverage, count and the smallest deadlocked parent."""
    next_states, encode = model.next_states, model.encode
    canonical = model.canonical if plan.symmetry else None
    best, coverage = out.best, out.coverage
    first = itemgetter(0)
    for parent, state in zip(keys, states, strict=True):
        successors = next_states(state)
        if not isinstance(successors, list):
            successors = list(successors)
        count_labels(coverage, map(first, successors))
        out.generated += len(successors)
        if not successors and plan.check_deadlock and out.deadlock is None:
            out.deadlock = parent  # keys ascend: the first deadlocked parent is the smallest
        for label, successor in successors:
            if canonical is not None:
                successor = canonical(successor)
            encoding = encode(successor)
            key = _xxh3(encoding) - OFFSET
            old = best.get(key)
            # Parents ascend, so an older link has a smaller or equal parent.
            if old is None or (old[0] == parent and label < old[1]):
                best[key] = (parent, label, encoding)


def _expand_compiled(
    expand: Any, model: Model[S], plan: LevelPlan, keys: list[int], states: list[S],
    out: _Outcome,
) -> None:
    """``_expand_python`` for a model whose states are their own encoding, through the local
    checker's compiled frontier loop (checker/_fpset.c ``expand``) with an empty visited set:
    it keeps the smallest ``(parent fingerprint, label)`` per successor fingerprint, the
    order ``_expand_python`` keeps on keys (``key = fingerprint - 2**63`` preserves it)."""
    links: dict[int, tuple[int, str]] = {}
    candidates: list[Any] = []
    orbit: dict[int, int] | None = {} if plan.symmetry else None
    canonical = model.canonical if plan.symmetry else None
    parents = [key + OFFSET for key in keys]
    nothing_seen = fingerprint_set()
    step = 1024
    for start in range(0, len(states), step):
        count, deadlocked = expand(
            parents[start:start + step], states[start:start + step], model.next_states,
            out.coverage, nothing_seen, links, candidates, _xxh3, orbit, canonical)
        out.generated += count
        if deadlocked and plan.check_deadlock and out.deadlock is None:
            out.deadlock = deadlocked[0] - OFFSET  # parents ascend: the first is the smallest
    best = out.best
    for (fp, (parent, label)), successor in zip(links.items(), candidates, strict=True):
        best[fp - OFFSET] = (parent - OFFSET, label, successor)


def _state_batches(new: Any, outcome: _Outcome) -> Iterator[Any]:
    """The settled states of the bucket with their verdicts (``STATE`` rows)."""
    size = new.num_rows
    if size == 0:
        return
    nulls = pa.nulls(size, pa.binary())
    yield pa.RecordBatch.from_arrays(
        [
            pa.array([STATE] * size, pa.int8()) if size else pa.array([], pa.int8()),
            new.column("fp").combine_chunks(),
            new.column("parent").combine_chunks(),
            new.column("label").combine_chunks(),
            nulls,
            pa.array(outcome.expand, pa.bool_()),
            pa.array(outcome.violated, pa.int64()),
            pa.array(outcome.reached, pa.int64()),
        ],
        schema=_LEVEL_TYPE,
    )


def _next_batches(best: dict[int, tuple[int, str, bytes]]) -> Iterator[Any]:
    """The next level's candidates of the bucket (``CANDIDATE`` rows)."""
    for batch in _candidate_batches(best):
        size = batch.num_rows
        yield pa.RecordBatch.from_arrays(
            [
                pa.array([CANDIDATE] * size, pa.int8()), *batch.columns,
                pa.nulls(size, pa.bool_()), pa.nulls(size, pa.int64()),
                pa.nulls(size, pa.int64()),
            ],
            schema=_LEVEL_TYPE,
        )
