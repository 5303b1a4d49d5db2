"""The work Spark's Python workers do: the model's own pure functions over Arrow tables.

A level is one Spark job of one task per core (``share_task``), each doing the work of its
share of the *buckets* in turn (``bucket_task``); Spark only schedules the tasks and retries
the failed ones.  The data never passes through the JVM: every task reads and writes Arrow
IPC files in the run directory, which the driver and every executor share (as they already
must for the side files below).  The model travels once per run as a
broadcast; states travel as ``model.encode`` bytes.

* Level 1's candidates (every initial state once) are written by the driver
  (``write_initial``).
* The work of bucket ``b`` of level ``k`` (``bucket_task``)

  1. reads the candidates addressed to it (``candidates/level-<k>/to-<b>/from-*.arrow``, one
     file per bucket of level ``k - 1`` that sent any) and settles them: one row per
     fingerprint, the smallest ``(parent, label)`` (the local checker's order-independent
     rule), vectorised in Arrow (sort, first of each run);
  2. drops the fingerprints already visited: this bucket's sorted keys of every earlier
     level, which the previous level's work of the bucket left in
     ``visited/level-<k-1>/bucket-<b>.seen`` (bucket ``b`` of every level holds the
     fingerprints ``f`` with ``f mod buckets = b``), and leaves them with its own new keys
     merged in for the next level;
  3. checks each new state (invariants, pending ``sometimes``, ``within_boundary``) and, in
     the same pass over the decoded state, expands it with ``next_states``: its successors,
     deduplicated within the bucket, are level ``k + 1``'s candidates, which it writes straight
     into the folders of their buckets (``candidates/level-<k+1>/to-<c>/from-<b>.arrow``);
  4. writes its settled states with their links and verdicts
     (``levels/level-<k>/states-<b>.arrow``), its new keys (``bucket-<b>.fp``) and its
     counters (new, frontier, coverage, violations, reached ``sometimes``, generated,
     deadlock, and the state of smallest key whose next step raised the model's own
     ``EvaluationError``, with the error) beside the ``.seen`` file.

Everything the work of a bucket writes is a function of its input *set* (the candidates of
the bucket, read in file-name order), whichever task does it, so a retried or duplicated
attempt (a lost executor, a killed worker) writes the very same files; each is replaced
atomically.  The counters are therefore exact under task retries, unlike Spark
accumulators.

Fingerprints are stored *shifted*: ``key = fingerprint - 2**63``, a signed 64-bit value whose
signed order is the unsigned order of the fingerprint, so Arrow's ordering of ``int64`` picks
the same parent as the local checker's ``min`` over Python ints.
"""

from __future__ import annotations

import json
import os
import pickle
import sys
import uuid
from array import array
from collections import _count_elements as count_labels  # type: ignore[attr-defined]  # C helper behind Counter.update
from collections.abc import Callable
from dataclasses import dataclass
from operator import itemgetter
from pathlib import Path
from typing import Any, Generic, TypeVar

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from isrlab.checker.fingerprint import compiled_columns, fingerprint
from isrlab.checker.fingerprint import xxh3_64 as _xxh3
from isrlab.checker.model import EvaluationError, Model
from isrlab.checker.registry import USER_MODULE_PREFIX
from isrlab.checker.report import INIT_ACTION
from isrlab.spark_explore.session import context_of

S = TypeVar("S")

OFFSET = 1 << 63
"""``key = fingerprint - OFFSET``: the unsigned fingerprint as an order-preserving long."""

_CANDIDATE_TYPE = pa.schema([
    ("fp", pa.int64()), ("parent", pa.int64()), ("label", pa.string()), ("state", pa.binary()),
    ("order", pa.binary()),
])
"""Candidate rows: a successor's key, the smallest parent key and label seen, its encoding,
and, for a model with a view (TLC's VIEW), its discovery key (empty otherwise): the parent's
followed by its index among the parent's successors, TLC's one-worker queue order."""

ORDER_BYTES = 4
"""The bytes of one successor index in a discovery key (``isrlab.checker.bfs.KEY_BYTES``)."""


def _view_of(model: Model[S]) -> Callable[[S], bytes] | None:
    view: Callable[[S], bytes] | None = getattr(model, "view", None)
    return view

STATE_TYPE = pa.schema([
    ("fp", pa.int64()), ("parent", pa.int64()), ("label", pa.string()),
    ("expand", pa.bool_()), ("violated", pa.int64()), ("reached", pa.int64()),
])
"""Rows of a level's state files: the key, its link (parent key, label) and its verdicts
(within the boundary; the masks of violated invariants and reached ``sometimes``)."""

VISITED = "visited"
"""The run directory's folder of per-level, per-bucket side files."""
LEVELS = "levels"
"""The run directory's folder of per-level state files."""
CANDIDATES = "candidates"
"""The run directory's folder of the candidates each bucket of a level is sent."""

BucketTask = Callable[[int], int]

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
        """Broadcast ``model`` (pickled with cloudpickle, as Spark pickles closures).

        A model from a user's file (``--model path/file.py:NAME``) lives in a module only
        this process has imported, under a private name: such modules are pickled by value,
        so the Python workers need neither the file nor the module."""
        from pyspark import cloudpickle

        by_value: Callable[[Any], None] = cloudpickle.register_pickle_by_value
        for name, module in list(sys.modules.items()):
            if name.startswith(USER_MODULE_PREFIX):
                by_value(module)
        dumps: Callable[[Any], bytes] = cloudpickle.dumps
        return ModelRef(context_of(session).broadcast(dumps(model)), uuid.uuid4().hex)


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


def states_file(root: str | Path, level: int, bucket: int) -> Path:
    """Where bucket ``bucket`` of level ``level`` keeps its settled states (``STATE_TYPE``)."""
    return Path(root) / LEVELS / f"level-{level:04d}" / f"states-{bucket:05d}.arrow"


def candidates_dir(root: str | Path, level: int) -> Path:
    """The folder of the candidates of level ``level`` (one sub-folder per bucket)."""
    return Path(root) / CANDIDATES / f"level-{level:04d}"


def bucket_of(keys: Any, buckets: int) -> Any:
    """The bucket of each key (a numpy ``int64`` array): its unsigned fingerprint modulo
    ``buckets``, so a fingerprint lands in the same bucket at every level."""
    fingerprints = keys.view(np.uint64) ^ np.uint64(OFFSET)
    return fingerprints % np.uint64(buckets)


def _replace(path: Path, data: bytes) -> None:
    """Write ``data`` to ``path`` atomically (a retried task rewrites the same bytes)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    temporary = path.with_name(f".{path.name}.{uuid.uuid4().hex}")
    temporary.write_bytes(data)
    os.replace(temporary, path)


def _write_table(path: Path, table: Any) -> None:
    """Write ``table`` to ``path`` as an Arrow IPC file, atomically."""
    path.parent.mkdir(parents=True, exist_ok=True)
    temporary = path.with_name(f".{path.name}.{uuid.uuid4().hex}")
    with pa.OSFile(str(temporary), "wb") as sink, pa.ipc.new_file(sink, table.schema) as out:
        out.write_table(table)
    os.replace(temporary, path)


def read_table(path: Path) -> Any:
    """An Arrow IPC file written by ``_write_table`` (memory-mapped)."""
    with pa.memory_map(str(path)) as source:
        return pa.ipc.open_file(source).read_all()


def by_bucket(table: Any, buckets: int) -> list[Any]:
    """``table``'s candidate rows split by the bucket of their key (``None`` for a bucket
    that gets none), each part in ``table``'s order."""
    if table.num_rows == 0:
        return [None] * buckets
    targets = bucket_of(table.column("fp").to_numpy(), buckets)
    order = np.argsort(targets, kind="stable")
    table = table.take(pa.array(order))
    counts = np.bincount(targets.astype(np.int64), minlength=buckets)
    parts: list[Any] = []
    start = 0
    for count in counts.tolist():
        parts.append(table.slice(start, count) if count else None)
        start += count
    return parts


def send_parts(root: str | Path, level: int, sender: int, parts: list[Any]) -> None:
    """Write ``parts[c]`` (candidate rows, or ``None``) as level ``level``'s candidates for
    bucket ``c``, one file in its folder named after the ``sender`` task."""
    folder = candidates_dir(root, level)
    for target, part in enumerate(parts):
        if part is not None:
            _write_table(folder / f"to-{target:05d}" / f"from-{sender:05d}.arrow", part)


def _received(root: str, level: int, bucket: int) -> Any:
    """The candidates sent to bucket ``bucket`` of level ``level``, in file-name order."""
    folder = candidates_dir(root, level) / f"to-{bucket:05d}"
    paths = sorted(folder.glob("from-*.arrow")) if folder.exists() else []
    if not paths:
        return _CANDIDATE_TYPE.empty_table()
    return pa.concat_tables([read_table(path) for path in paths])


def read_summary(root: str | Path, level: int, bucket: int) -> dict[str, Any]:
    """The counters bucket ``bucket`` of level ``level`` recorded (see ``bucket_task``)."""
    path = side_dir(root, level) / f"bucket-{bucket:05d}.json"
    try:
        record: dict[str, Any] = json.loads(path.read_bytes())
    except FileNotFoundError as error:
        raise RuntimeError(
            f"{path} is missing: the executors and the driver must share the run directory"
        ) from error
    return record


def seen_file(root: str | Path, level: int, bucket: int) -> Path:
    """Bucket ``bucket``'s keys of levels ``1 .. level``, ascending (one ``int64`` array)."""
    return side_dir(root, level) / f"bucket-{bucket:05d}.seen"


def _seen(root: str, level: int, bucket: int) -> Any:
    """The keys bucket ``bucket`` visited before level ``level`` (ascending, memory-mapped)."""
    if level == 1:
        return np.empty(0, np.int64)
    path = seen_file(root, level - 1, bucket)
    if path.stat().st_size == 0:
        return np.empty(0, np.int64)
    return np.memmap(path, np.int64, mode="r")


def _remember(root: str, level: int, bucket: int, seen: Any, keys: Any) -> None:
    """Write the keys visited up to level ``level``: ``seen`` and the new ``keys`` merged."""
    merged = np.insert(seen, np.searchsorted(seen, keys), keys)
    _replace(seen_file(root, level, bucket), merged.tobytes())


# -- level 1 ----------------------------------------------------------------------------------


def write_initial(model: Model[S], root: str | Path, symmetry: bool, buckets: int) -> None:
    """Level 1's candidates, written by the driver: every initial state once (all share the
    link ``Init``)."""
    best: dict[int, tuple[int, str, bytes, bytes]] = {}
    origin = to_key(0)
    view = _view_of(model)
    for number, state in enumerate(model.init_states()):
        representative = model.canonical(state) if symmetry else state
        encoding = model.encode(representative)
        key = to_key(fingerprint(encoding if view is None else view(representative)))
        if key not in best:
            order = b"" if view is None else number.to_bytes(ORDER_BYTES, "big")
            best[key] = (origin, INIT_ACTION, encoding, order)
    send_parts(root, 1, 0, by_bucket(_best_table(best), buckets))


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
    buckets: int
    pending_sometimes: int
    expand: bool
    symmetry: bool
    check_deadlock: bool


def settle(table: Any, seen: Any) -> Any:
    """One row per fingerprint with the smallest ``(order, parent, label)`` (the order is
    empty but for a model with a view, whose state found first in TLC's order is kept),
    minus the keys of ``seen`` (ascending).

    ``table`` holds candidate rows; the result is sorted by key.  Arrow compares strings by
    their UTF-8 bytes, which is Python's code-point order.
    """
    if table.num_rows == 0:
        return table
    order = pc.sort_indices(
        table.select(["fp", "order", "parent", "label"]),
        sort_keys=[("fp", "ascending"), ("order", "ascending"), ("parent", "ascending"),
                   ("label", "ascending")],
    )
    keys = table.column("fp").take(order).to_numpy()
    first = np.empty(len(keys), np.bool_)
    first[0] = True
    np.not_equal(keys[1:], keys[:-1], out=first[1:])
    if len(seen):
        at = np.minimum(np.searchsorted(seen, keys), len(seen) - 1)
        first &= seen[at] != keys
    return table.take(order.filter(pa.array(first)))


def bucket_task(ref: ModelRef[S], plan: LevelPlan) -> BucketTask:
    """The task of one bucket of a level: settle, drop visited, check and expand in one pass,
    send the successors to their buckets, write the states and side files (see above); it
    returns the number of new states.

    Each ``(label, successor)`` pair counts as one generated state (TLC's count); a successor
    found several times in the task keeps the smallest ``(parent key, label)``.
    """

    def run(bucket: int) -> int:
        model = ref.get()
        seen = _seen(plan.root, plan.level, bucket)
        new = settle(_received(plan.root, plan.level, bucket), seen)
        _remember(plan.root, plan.level, bucket, seen, new.column("fp").to_numpy())
        del seen
        keys: list[int] = new.column("fp").to_pylist()
        outcome = _check_and_expand(model, plan, keys, new.column("state").to_pylist(),
                                    new.column("order").to_pylist())
        summary = outcome.summary(new)
        send_parts(plan.root, plan.level + 1, bucket, outcome.following)
        outcome.following = []
        _write_table(states_file(plan.root, plan.level, bucket), _states(new, outcome))
        folder = side_dir(plan.root, plan.level)
        _replace(folder / f"bucket-{bucket:05d}.fp", array("q", keys).tobytes())
        _replace(folder / f"bucket-{bucket:05d}.json", json.dumps(summary).encode())
        return len(keys)

    return run


def share_task(ref: ModelRef[S], plan: LevelPlan, tasks: int) -> BucketTask:
    """The task of one of ``tasks`` shares of a level: ``bucket_task`` of the buckets ``task``,
    ``task + tasks``, ``task + 2 * tasks`` ...; it returns their number of new states.

    Each bucket's files are the same whatever the grouping, so the number of tasks only
    changes speed: Spark's own cost is about 30 ms a task (measured in local mode), so a
    level is one task per core rather than one per bucket.
    """
    one = bucket_task(ref, plan)

    def run(task: int) -> int:
        return sum(one(bucket) for bucket in range(task, plan.buckets, tasks))

    return run


@dataclass(slots=True)
class _Outcome:
    """What one bucket's pass found (verdict columns, next candidates, counters)."""

    expand: list[bool]
    violated: list[int]
    reached: list[int]
    following: list[Any]  # the next level's candidates (``_CANDIDATE_TYPE``) by bucket
    coverage: dict[str, int]
    smallest: dict[int, int]  # invariant index -> smallest violating key
    reached_mask: int
    frontier: int
    generated: int
    deadlock: int | None
    evaluation: list[Any] | None = None  # [smallest key, message, action] of an EvaluationError

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
            "evaluation": self.evaluation,
        }


def _check_and_expand(
    model: Model[S], plan: LevelPlan, keys: list[int], encodings: list[bytes],
    orders: list[bytes],
) -> _Outcome:
    """Verdicts of each new state and its successors; ``keys`` ascend, so do the parents."""
    identity = bool(getattr(model, "identity_encoding", False))
    states: list[S] = encodings if identity else list(map(model.decode, encodings))  # type: ignore[assignment]  # identity: states are their bytes
    out = _Outcome([], [], [], [None] * plan.buckets, {}, {}, 0, 0, 0, None)
    if getattr(model, "has_boundary", True):
        growing_keys, growing = _check_one_by_one(model, plan, keys, states, out)
        growing_orders = [o for o, inside in zip(orders, out.expand, strict=True) if inside]
    else:
        _check_column_by_column(model, plan, keys, states, out)
        growing_keys, growing, growing_orders = keys, states, orders
    if not plan.expand:
        growing_keys, growing, growing_orders = [], [], []
    columns = compiled_columns() if identity and _view_of(model) is None else None
    try:
        if columns is not None:
            _expand_compiled(columns, model, plan, growing_keys, growing, out)
        else:
            _expand_python(model, plan, growing_keys, growing, growing_orders, out)
    except EvaluationError:
        out.evaluation = _first_evaluation_error(model, growing_keys, growing)
        out.following = [None] * plan.buckets
    return out


def _first_evaluation_error(model: Model[S], keys: list[int], states: list[S]) -> list[Any]:
    """``[key, message, action]`` of the model's own ``EvaluationError`` raised by the
    next step of the state of smallest key among ``states`` (keys ascending) whose next step
    raises one: the state the local engine reports (``isrlab.services.runs``).  Only after
    an expansion stopped at such an error: the level is not committed, nor its successors
    used (the search stops there), so they are not kept."""
    for key, state in zip(keys, states, strict=True):
        try:
            model.next_states(state)
        except EvaluationError as error:
            return [key, str(error.args[0]), error.action]
    raise RuntimeError("the model's EvaluationError did not recur when its states were expanded "
                       "again")


def _check_one_by_one(
    model: Model[S], plan: LevelPlan, keys: list[int], states: list[S], out: _Outcome,
) -> tuple[list[int], list[S]]:
    """The verdicts of each state in turn (``within_boundary`` first); the states to expand."""
    within = model.within_boundary
    invariants = list(enumerate(p.holds for p in model.invariants()))
    wanted = [
        (i, p.holds) for i, p in enumerate(model.sometimes()) if plan.pending_sometimes >> i & 1
    ]
    growing_keys: list[int] = []
    growing: list[S] = []
    for parent, state in zip(keys, states, strict=True):
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
            growing_keys.append(parent)
            growing.append(state)
    return growing_keys, growing


def _check_column_by_column(
    model: Model[S], plan: LevelPlan, keys: list[int], states: list[S], out: _Outcome,
) -> None:
    """``_check_one_by_one`` for a model without a boundary: one pass per property over the
    whole column of states (at C speed when it holds everywhere), the same verdicts."""
    size = len(states)
    out.expand = [True] * size
    out.frontier = size
    out.violated = _masks(keys, states, [(i, p.holds) for i, p in enumerate(model.invariants())],
                          out.smallest, expected=True)
    found: dict[int, int] = {}
    wanted = [
        (i, p.holds) for i, p in enumerate(model.sometimes()) if plan.pending_sometimes >> i & 1
    ]
    out.reached = _masks(keys, states, wanted, found, expected=False)
    for index in found:
        out.reached_mask |= 1 << index


def _masks(
    keys: list[int], states: list[S], properties: list[tuple[int, Callable[[S], bool]]],
    smallest: dict[int, int], expected: bool,
) -> list[int]:
    """Per state, the mask (as a signed long) of the properties whose verdict is not
    ``expected``; ``smallest`` gets the first such key of each property (keys ascend)."""
    masks: list[int] | None = None
    for index, holds in properties:
        verdicts = list(map(bool, map(holds, states)))
        if all(verdicts) if expected else not any(verdicts):
            continue
        if masks is None:
            masks = [0] * len(states)
        for position, verdict in enumerate(verdicts):
            if verdict is not expected:
                masks[position] |= 1 << index
                smallest.setdefault(index, keys[position])
    return [0] * len(states) if masks is None else [_signed(mask) for mask in masks]


def _expand_python(
    model: Model[S], plan: LevelPlan, keys: list[int], states: list[S], orders: list[bytes],
    out: _Outcome,
) -> None:
    """The successors of ``states`` (parents ``keys``, ascending) into ``out.following``,
    with their coverage, count and the smallest deadlocked parent.  Under a view a
    successor's fingerprint is its view's and the one of smallest discovery key is kept."""
    next_states, encode = model.next_states, model.encode
    canonical = model.canonical if plan.symmetry else None
    view = _view_of(model)
    if view is not None:
        _expand_view(view, model, plan, keys, states, orders, out)
        return
    best: dict[int, tuple[int, str, bytes, bytes]] = {}
    coverage = out.coverage
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
                best[key] = (parent, label, encoding, b"")
    out.following = by_bucket(_best_table(best), plan.buckets)


def _expand_view(
    view: Callable[[S], bytes], model: Model[S], plan: LevelPlan, keys: list[int],
    states: list[S], orders: list[bytes], out: _Outcome,
) -> None:
    """``_expand_python`` for a model with a view."""
    canonical = model.canonical if plan.symmetry else None
    best: dict[int, tuple[int, str, bytes, bytes]] = {}
    coverage = out.coverage
    first = itemgetter(0)
    for parent, state, parent_order in zip(keys, states, orders, strict=True):
        successors = list(model.next_states(state))
        count_labels(coverage, map(first, successors))
        out.generated += len(successors)
        if not successors and plan.check_deadlock and out.deadlock is None:
            out.deadlock = parent
        for index, (label, successor) in enumerate(successors):
            if canonical is not None:
                successor = canonical(successor)
            key = _xxh3(view(successor)) - OFFSET
            order = parent_order + index.to_bytes(ORDER_BYTES, "big")
            old = best.get(key)
            if old is None or order < old[3]:
                best[key] = (parent, label, model.encode(successor), order)
    out.following = by_bucket(_best_table(best), plan.buckets)


def _expand_compiled(
    expand: Any, model: Model[S], plan: LevelPlan, keys: list[int], states: list[S],
    out: _Outcome,
) -> None:
    """``_expand_python`` for a model whose states are their own encoding, through the
    compiled loop (checker/_fpset.c ``columns``): it keeps the smallest ``(parent
    fingerprint, label)`` per successor fingerprint, the order ``_expand_python`` keeps on
    keys (``key = fingerprint - 2**63`` preserves it), and returns the rows as columns, which
    become Arrow arrays without a Python object per row."""
    shift = np.uint64(OFFSET)
    parents = (np.array(keys, np.int64).view(np.uint64) ^ shift).tobytes()
    fps, links, label_codes, names, offsets, data, counts, deadlocked = expand(
        parents, states, model.next_states, _xxh3, {} if plan.symmetry else None,
        model.canonical if plan.symmetry else None)
    for name, count in zip(names, np.frombuffer(counts, np.int64).tolist(), strict=True):
        out.coverage[name] = out.coverage.get(name, 0) + count
        out.generated += count
    if deadlocked and plan.check_deadlock:
        out.deadlock = int(_keys(deadlocked)[0])  # parents ascend: the first is the smallest
    rows = len(fps) // 8
    labels = pa.DictionaryArray.from_arrays(
        pa.array(np.frombuffer(label_codes, np.int32)), pa.array(names, pa.string()))
    encodings = pa.Array.from_buffers(
        pa.binary(), rows, [None, pa.py_buffer(offsets), pa.py_buffer(data)])
    table = pa.Table.from_arrays(
        [pa.array(_keys(fps)), pa.array(_keys(links)), labels.cast(pa.string()), encodings,
         _empty_binaries(rows)],
        schema=_CANDIDATE_TYPE)
    out.following = by_bucket(table, plan.buckets)


def _keys(fingerprints: bytes) -> Any:
    """The keys (``int64``) of unsigned fingerprints given as native ``uint64`` bytes."""
    return (np.frombuffer(fingerprints, np.uint64) ^ np.uint64(OFFSET)).view(np.int64)


def _empty_binaries(rows: int) -> Any:
    """A binary column of ``rows`` empty values, built from buffers."""
    offsets = np.zeros(rows + 1, np.int32).tobytes()
    return pa.Array.from_buffers(pa.binary(), rows, [None, pa.py_buffer(offsets),
                                                     pa.py_buffer(b"")])


def _best_table(best: dict[int, tuple[int, str, bytes, bytes]]) -> Any:
    """Candidate rows from a dict of key -> (parent key, label, encoding, order)."""
    links = best.values()
    return candidate_table(list(best), [link[0] for link in links],
                           [link[1] for link in links], [link[2] for link in links],
                           [link[3] for link in links])


def candidate_table(keys: Any, parents: Any, labels: Any, encodings: Any,
                    orders: Any = None) -> Any:
    """Candidate rows (``_CANDIDATE_TYPE``) from five columns (lists or numpy arrays; no
    orders: all empty)."""
    return pa.Table.from_arrays(
        [pa.array(keys, pa.int64()), pa.array(parents, pa.int64()),
         pa.array(labels, pa.string()), pa.array(encodings, pa.binary()),
         _empty_binaries(len(keys)) if orders is None else pa.array(orders, pa.binary())],
        schema=_CANDIDATE_TYPE,
    )


def _states(new: Any, outcome: _Outcome) -> Any:
    """The settled states of the bucket with their links and verdicts (``STATE_TYPE``)."""
    return pa.Table.from_arrays(
        [
            new.column("fp"), new.column("parent"), new.column("label"),
            pa.array(outcome.expand, pa.bool_()),
            pa.array(outcome.violated, pa.int64()),
            pa.array(outcome.reached, pa.int64()),
        ],
        schema=STATE_TYPE,
    )
