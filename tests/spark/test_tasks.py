"""The buckets' file exchange (``spark_explore.tasks``), without a JVM: which bucket a key goes
to, how candidates are settled against visited keys, and that a bucket's task run twice
writes the same files (what makes Spark's task retries harmless)."""

from __future__ import annotations

from pathlib import Path
from typing import Any, ClassVar

import numpy as np
import pyarrow as pa
import pytest

from isrlab.checker import toys
from isrlab.checker.fingerprint import PURE_PYTHON_ENV, compiled_columns, fingerprint
from isrlab.checker.model import Model
from isrlab.cli_support import resolve_model
from isrlab.spark_explore.tasks import (
    OFFSET,
    LevelPlan,
    ModelRef,
    bucket_of,
    bucket_task,
    by_bucket,
    candidate_table,
    candidates_dir,
    read_summary,
    read_table,
    send_parts,
    settle,
    share_task,
    side_dir,
    states_file,
    write_initial,
)


class _Here(ModelRef[int]):
    """A model reference without Spark: the model itself."""

    def __init__(self, model: Model[int]) -> None:
        super().__init__(None, "here")
        self.model = model

    def get(self) -> Model[int]:
        return self.model


def test_a_key_goes_to_its_fingerprint_modulo_the_bucket_count() -> None:
    fingerprints = [0, 1, 5, 2**63, 2**64 - 1, 12345678901234567890]
    keys = np.array([fp - OFFSET for fp in fingerprints], np.int64)
    assert bucket_of(keys, 3).tolist() == [fp % 3 for fp in fingerprints]


def test_settle_keeps_the_smallest_link_of_each_key_and_drops_visited_keys() -> None:
    table = candidate_table(
        [7, 3, 7, 7, 9, 3], [5, 2, 4, 4, 1, 2], ["b", "x", "z", "a", "c", "w"],
        [b"7", b"3", b"7", b"7", b"9", b"3"],
    )
    settled = settle(table, np.array([1, 9], np.int64))  # 9 was visited at an earlier level
    assert settled.column("fp").to_pylist() == [3, 7]
    # key 3: parents 2 and 2, labels "w" < "x"; key 7: parent 4 < 5, then label "a" < "z"
    assert settled.column("parent").to_pylist() == [2, 4]
    assert settled.column("label").to_pylist() == ["w", "a"]


def test_candidates_reach_the_folder_of_their_bucket(tmp_path: Path) -> None:
    keys = [fp - OFFSET for fp in range(10)]
    send_parts(tmp_path, 2, 1, by_bucket(candidate_table(
        keys, keys, ["l"] * 10, [bytes([i]) for i in range(10)]), 4))
    for bucket in range(4):
        path = candidates_dir(tmp_path, 2) / f"to-{bucket:05d}" / "from-00001.arrow"
        with pa.memory_map(str(path)) as source:
            got = pa.ipc.open_file(source).read_all().column("fp").to_pylist()
        assert sorted(k + OFFSET for k in got) == [fp for fp in range(10) if fp % 4 == bucket]


def _level_files(root: Path, level: int, bucket: int) -> dict[str, bytes]:
    """What bucket ``bucket``'s task of level ``level`` wrote, by path."""
    paths = [states_file(root, level, bucket),
             *side_dir(root, level).glob(f"bucket-{bucket:05d}.*"),
             *candidates_dir(root, level + 1).glob(f"to-*/from-{bucket:05d}.arrow")]
    return {str(path.relative_to(root)): path.read_bytes() for path in paths}


def test_a_task_run_twice_writes_the_same_files(tmp_path: Path) -> None:
    model = toys.Counter(6)
    buckets = 2
    write_initial(model, tmp_path, False, buckets)
    for level in (1, 2):
        plan = LevelPlan(root=str(tmp_path), level=level, buckets=buckets, pending_sometimes=0,
                         expand=True, symmetry=False, check_deadlock=False)
        for bucket in range(buckets):
            task = bucket_task(_Here(model), plan)
            first_new = task(bucket)
            first = _level_files(tmp_path, level, bucket)
            assert task(bucket) == first_new  # a retried attempt
            assert _level_files(tmp_path, level, bucket) == first
    assert sum(bucket_task(_Here(model), LevelPlan(
        root=str(tmp_path), level=3, buckets=buckets, pending_sometimes=0, expand=True,
        symmetry=False, check_deadlock=False))(b) for b in range(buckets)) == 1  # counter 2


def _run_levels(model: Model[bytes], root: Path, buckets: int, symmetry: bool) -> int:
    """Every level of ``model`` through the bucket tasks, without Spark; the distinct count."""
    write_initial(model, root, symmetry, buckets)
    total, level, new = 0, 1, 1
    while new:
        plan = LevelPlan(root=str(root), level=level, buckets=buckets, pending_sometimes=1,
                         expand=True, symmetry=symmetry, check_deadlock=True)
        task = share_task(_Here(model), plan, 2)  # type: ignore[arg-type]  # a bytes model
        new = task(0) + task(1)
        total, level = total + new, level + 1
    return total


@pytest.mark.parametrize("symmetry", [False, True])
def test_the_compiled_expansion_writes_the_files_of_the_python_one(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, symmetry: bool,
) -> None:
    if compiled_columns() is None:
        pytest.skip("checker/_fpset.c is not built")
    _, _, model = resolve_model("tla-kip320", ["max_leader_epoch=2"])
    totals = []
    for pure in ("0", "1"):
        monkeypatch.setenv(PURE_PYTHON_ENV, pure)
        totals.append(_run_levels(model, tmp_path / pure, 3, symmetry))
    assert totals[0] == totals[1] > 1000
    compiled = sorted(p.relative_to(tmp_path / "0") for p in (tmp_path / "0").rglob("*.*"))
    assert compiled == sorted(p.relative_to(tmp_path / "1") for p in (tmp_path / "1").rglob("*.*"))
    for path in compiled:
        ours, reference = tmp_path / "0" / path, tmp_path / "1" / path
        if path.suffix == ".arrow":
            assert read_table(ours).equals(read_table(reference)), path
        else:
            assert ours.read_bytes() == reference.read_bytes(), path


class _BytesGraph:
    """A model whose states are their own bytes: ``a`` reaches ``b`` by two labels (``Z``
    first), ``b`` and ``c`` reach ``d``, ``d`` and ``e`` have no successor (deadlocks)."""

    name = "bytes-graph"
    identity_encoding = True
    has_boundary = False
    edges: ClassVar[dict[bytes, list[tuple[str, bytes]]]] = {
        b"a": [("Z", b"b"), ("A", b"b"), ("Go", b"c"), ("Go", b"e")],
        b"b": [("Go", b"d")], b"c": [("Go", b"d")], b"d": [], b"e": [],
    }

    def init_states(self) -> list[bytes]:
        return [b"a"]

    def next_states(self, state: bytes) -> list[tuple[str, bytes]]:
        return self.edges[state]

    def invariants(self) -> list[Any]:
        return []

    def sometimes(self) -> list[Any]:
        return []

    def within_boundary(self, state: bytes) -> bool:
        return True

    def canonical(self, state: bytes) -> bytes:
        return state

    def encode(self, state: bytes) -> bytes:
        return state

    def decode(self, data: bytes) -> bytes:
        return data


def test_the_compiled_expansion_keeps_the_smallest_label_and_finds_deadlocks(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
) -> None:
    if compiled_columns() is None:
        pytest.skip("checker/_fpset.c is not built")
    for pure in ("0", "1"):
        monkeypatch.setenv(PURE_PYTHON_ENV, pure)
        assert _run_levels(_BytesGraph(), tmp_path / pure, 3, False) == 5  # type: ignore[arg-type]  # a model by protocol
    labels: dict[int, str] = {}
    for path in (tmp_path / "0" / "levels").rglob("*.arrow"):
        table = read_table(path)
        labels.update(zip(table.column("fp").to_pylist(), table.column("label").to_pylist(),
                          strict=True))
    assert labels[fingerprint(b"b") - OFFSET] == "A"  # "A" < "Z", both from a
    for pure in ("0", "1"):  # e (level 2) and d (level 3) have no successor
        found = {(level, read_summary(tmp_path / pure, level, bucket)["deadlock"])
                 for level in (1, 2, 3, 4) for bucket in range(3)}
        assert found - {(level, None) for level in (1, 2, 3, 4)} == {
            (2, fingerprint(b"e") - OFFSET), (3, fingerprint(b"d") - OFFSET)}
    for path in sorted((tmp_path / "0").rglob("*.*")):
        reference = tmp_path / "1" / path.relative_to(tmp_path / "0")
        if path.suffix == ".arrow":
            assert read_table(path).equals(read_table(reference)), path
        else:
            assert path.read_bytes() == reference.read_bytes(), path
