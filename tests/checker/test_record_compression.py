"""Compressed record files (checker/runstore.py): what is written reads back record for
record; a format-3 run directory (uncompressed record files) resumes to the counts and the
trace of a search that was never stopped; a damaged compressed block is one line, exit 2.

Reference figures are closed forms or TLC's: ``toy-symmetric`` with ``procs`` processes of
``values`` values reaches ``values ** procs`` states, ``1 + procs * values ** procs``
generated, and its shortest trace to the sum ``s`` has ``s`` increments (``s + 1``
states); ``tla-kraft-3.5`` with 2 brokers, RF 2, min ISR 1, ISR 2 and one fencing has 1,260
distinct / 3,436 generated states, depth 21, under the published view (TLC 2.15,
docs/conformance.md).
"""

from __future__ import annotations

import functools
import json
import random
import struct
from collections.abc import Callable
from pathlib import Path

import pytest
import xxhash
from click.testing import CliRunner

from isrlab.checker import diskbfs
from isrlab.checker.bfs import CheckOptions, explore
from isrlab.checker.runstore import (
    _PACKED,
    _TAIL,
    PACKED_MAGIC,
    RECORDS_MAGIC,
    RecordWriter,
    RunDirError,
    RunStore,
    _digest,
)
from isrlab.checker.toys import Symmetric
from isrlab.cli import cli
from isrlab.cli_support import resolve_model


def _magic(path: Path) -> bytes:
    return path.read_bytes()[-_TAIL.size:][:8]


def _records(count: int) -> list[tuple[int, int, int, bytes, bytes]]:
    rng = random.Random(3)
    return [(rng.getrandbits(64), rng.getrandbits(64), rng.randrange(40),
             rng.randbytes(rng.randrange(0, 9)),
             bytes(rng.choice(b"\x00\x01\x02") for _ in range(rng.randrange(200, 400))))
            for _ in range(count)]


@pytest.mark.parametrize("compress", [True, False])
def test_records_read_back_as_written_over_several_blocks(tmp_path: Path, compress: bool) -> None:
    records = _records(12000)  # about 3.6 MB: four blocks
    writer = RecordWriter(tmp_path / "f.bin", compress=compress)
    for record in records:
        writer.add(*record)
    assert writer.close() == len(records) and writer.blocks >= 3
    path = tmp_path / "f.bin"
    assert _magic(path) == (PACKED_MAGIC if compress else RECORDS_MAGIC)
    assert list(RunStore(tmp_path).records(path)) == records
    raw = sum(32 + len(k) + len(e) for *_, k, e in records)
    assert (path.stat().st_size < raw / 2) is compress


def _format_3_prefix(monkeypatch: pytest.MonkeyPatch, run: Callable[[], object]) -> None:
    """Run ``run()`` writing record files as format 3 did, then mark the directory format 3."""
    with monkeypatch.context() as patch:
        patch.setattr(diskbfs, "RecordWriter", functools.partial(RecordWriter, compress=False))
        run()


def _as_format_3(run_dir: Path) -> None:
    meta = json.loads((run_dir / "meta.json").read_text())
    assert meta["format"] == 4
    (run_dir / "meta.json").write_text(json.dumps({**meta, "format": 3}, indent=1))
    frontiers = list(run_dir.glob("frontier-*.bin"))
    assert frontiers and all(_magic(f) == RECORDS_MAGIC for f in frontiers)


def test_a_format_3_run_directory_resumes_to_the_same_counts_and_trace(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
) -> None:
    run_dir = tmp_path / "run"
    model, params = Symmetric(4, 5, bad_sum=12), {"procs": 4, "values": 5, "bad_sum": 12}
    _format_3_prefix(monkeypatch, lambda: explore(
        model, CheckOptions(run_dir=run_dir, params=params, max_depth=7)))
    _as_format_3(run_dir)
    resumed = explore(model, CheckOptions(run_dir=run_dir, params=params))
    assert json.loads((run_dir / "meta.json").read_text())["format"] == 4
    assert all(_magic(f) == PACKED_MAGIC for f in run_dir.glob("frontier-*.bin"))
    in_memory = explore(model, CheckOptions())
    assert resumed.violation is not None and in_memory.violation is not None
    assert len(resumed.violation.trace) == 12 + 1
    assert [s.action for s in resumed.violation.trace] == [
        s.action for s in in_memory.violation.trace]
    assert (resumed.distinct_states, resumed.generated_states, resumed.diameter) == (
        in_memory.distinct_states, in_memory.generated_states, in_memory.diameter)


def test_a_format_3_view_search_resumes_to_tlcs_counts(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
) -> None:
    _entry, values, model = resolve_model("tla-kraft-3.5", [
        "brokers=2", "replication_factor=2", "min_isr=1", "init_isr_size=2",
        "fence_broker_limit=1"])
    run_dir = tmp_path / "run"
    _format_3_prefix(monkeypatch, lambda: explore(
        model, CheckOptions(run_dir=run_dir, params=values, max_depth=9)))
    _as_format_3(run_dir)
    done = explore(model, CheckOptions(run_dir=run_dir, params=values))
    assert (done.distinct_states, done.generated_states, done.diameter, done.complete) == (
        1260, 3436, 21, True)


def _stopped_cli_run(run_dir: Path) -> list[str]:
    args = ["check", "--model", "toy-symmetric", "-p", "procs=4", "-p", "values=5",
            "--run-dir", str(run_dir), "--no-progress"]
    assert CliRunner().invoke(cli, [*args, "--max-depth", "8"]).exit_code == 0
    return args


def _one_line_exit_2(args: list[str], *words: str) -> None:
    result = CliRunner().invoke(cli, args)
    assert result.exit_code == 2, (result.exit_code, result.output)
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("isrlab: error: "), result.stderr
    for word in words:
        assert word in lines[0], (word, lines[0])


def test_a_corrupted_compressed_block_is_one_line_and_exit_2(tmp_path: Path) -> None:
    run_dir = tmp_path / "run"
    args = _stopped_cli_run(run_dir)
    frontier = run_dir / "frontier-0008-0.bin"
    assert _magic(frontier) == PACKED_MAGIC
    data = bytearray(frontier.read_bytes())
    data[_PACKED.size + 20] ^= 0x40  # a byte of the first block's compressed bytes
    frontier.write_bytes(bytes(data))
    _one_line_exit_2(args, "frontier-0008-0.bin", "corrupted", "remove the run directory")


def test_a_sealed_block_that_does_not_decompress_is_one_line_and_exit_2(tmp_path: Path) -> None:
    # A block whose digest matches but whose bytes are not zlib's (a writer's bug, or
    # damage that the digest missed): reported like any damage, never a traceback.
    run_dir = tmp_path / "run"
    args = _stopped_cli_run(run_dir)
    frontier = run_dir / "frontier-0008-0.bin"
    data = frontier.read_bytes()
    size, records, raw = _PACKED.unpack_from(data, 0)
    first_end = _PACKED.size + size + 16
    header = _PACKED.pack(size, records, raw)
    garbage = bytes(range(256)) * (size // 256 + 1)
    stored = garbage[:size]
    digest = _digest(header + stored)
    rest = data[first_end:-_TAIL.size]
    magic, count, blocks, _total = _TAIL.unpack(data[-_TAIL.size:])
    digests = [digest]
    position = 0
    while position < len(rest):  # the other blocks' digests, as they are
        s, _r, _w = _PACKED.unpack_from(rest, position)
        position += _PACKED.size + s + 16
        digests.append(rest[position - 16:position])
    total = xxhash.xxh3_128()
    for d in digests:
        total.update(d)
    frontier.write_bytes(header + stored + digest + rest
                         + _TAIL.pack(magic, count, blocks, total.digest()))
    with pytest.raises(RunDirError, match="does not decompress"):
        list(RunStore(run_dir).records(frontier))
    _one_line_exit_2(args, "frontier-0008-0.bin", "does not decompress")


def test_a_truncated_compressed_file_is_damaged(tmp_path: Path) -> None:
    path = tmp_path / "f.bin"
    writer = RecordWriter(path)
    for record in _records(5000):
        writer.add(*record)
    writer.close()
    data = path.read_bytes()
    for cut in (len(data) - 1, len(data) // 2, _PACKED.size + 3, 3):
        path.write_bytes(data[:cut])
        with pytest.raises(RunDirError, match="truncated or corrupted"):
            list(RunStore(tmp_path).records(path))


def test_a_block_header_is_covered_by_its_digest(tmp_path: Path) -> None:
    path = tmp_path / "f.bin"
    writer = RecordWriter(path)
    for record in _records(100):
        writer.add(*record)
    writer.close()
    data = bytearray(path.read_bytes())
    struct.pack_into("<I", data, 4, 101)  # the first block's record count, off by one
    path.write_bytes(bytes(data))
    with pytest.raises(RunDirError, match="corrupted"):
        list(RunStore(tmp_path).records(path))
