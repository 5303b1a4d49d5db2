"""A run directory: the completed BFS levels of one check, so a stopped run can resume.

With a run directory the checker keeps every state on disk (the *on-disk level store*,
checker/diskbfs.py): in memory only the fingerprints of the states seen so far (a compact
set) and, for the level being built, each new state's fingerprint and link.

Layout (every file written under a temporary name, then ``os.replace``):

* ``meta.json`` -- what the run explores (model, parameters, symmetry, deadlock checking);
  a run directory whose ``meta.json`` differs is refused, never overwritten;
* ``links-LLLL-W.bin`` -- for level ``L`` and worker ``W``: the fingerprints first found at
  that level and the fingerprint of each one's chosen parent (two arrays of unsigned 64-bit);
* ``frontier-LLLL-W.bin`` -- worker ``W``'s states of level ``L`` to be expanded, as a
  *record file* (below; only the last committed level's are kept);
* ``build-LLLL-S-O.bin`` / ``.links`` -- the level being built: the new states worker ``S``
  found that worker ``O`` owns, written as they are found (a record file), and their links
  (``.links``: fingerprints, parents and label codes, with several workers); removed once
  merged, and ignored and rewritten after a kill;
* ``commit.json`` -- written last, after every worker has written its level files: the level
  it commits, the number of workers that wrote each level (``parts``) and every counter at
  that point.  A run killed at any moment resumes from the level named here; files of a
  later, uncommitted level are removed when it resumes;
* ``lock`` -- the process id of the run using the directory, locked with ``flock`` while it
  runs (see ``RunStore.open``).

A record file is a sequence of blocks, each about 1 MiB of records compressed with zlib
(level ``ZLIB_LEVEL``; a header: stored bytes, records and uncompressed bytes; the stored
bytes; the XXH3-128 digest of the header and the stored bytes), then a 40-byte trailer (a
magic word, the record and block counts, the digest of the blocks' digests).  A record is a
fingerprint, a parent fingerprint and a label code, the lengths of a discovery key and of
an encoding, then the key and the encoding: a reader streams it one block at a time.  The
trailer's magic word says how the blocks are stored: ``PACKED_MAGIC`` compressed, or
``RECORDS_MAGIC`` as format 3 wrote them (a header of payload bytes and records, the
payload, its digest), which is read as it is.

Every file carries a checksum written with it (the other ``.bin`` files end with a 24-byte
trailer: a magic word and the XXH3-128 digest of what precedes it; ``commit.json`` holds the
digest of its other fields under ``checksum``), verified whenever the file is read back: a
truncated, missing or corrupted file is reported in one line (``RunDirError``) and never
read as fewer states.  A write that fails (the disk is full) is reported likewise and
leaves the last commit and its files intact, so the run resumes from there once there is
room.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import json
import os
import pickle
import struct
import zlib
from array import array
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import xxhash

FORMAT = 4
"""4: record files compressed block by block.  3 (record files uncompressed) and 2 (every
file checksummed, frontiers one pickle) are upgraded in place when a run resumes: their
files are read as they are (each record file names its layout in its trailer), the new
levels are written compressed; 1 (no checksums) is refused."""
UPGRADABLE = (2, 3)

MAGIC = b"isrlab\x02\x00"
"""The first 8 bytes of a ``.bin`` file's trailer; the 16 after them are the digest."""
TRAILER = len(MAGIC) + 16
LOCK = "lock"

RECORDS_MAGIC = b"isrlab\x03\x00"
"""The first 8 bytes of an uncompressed record file's trailer (format 3's)."""
PACKED_MAGIC = b"isrlab\x04\x00"
"""The first 8 bytes of a compressed record file's trailer."""
ZLIB_LEVEL = 3
"""zlib's level for record blocks: on the kip-966 port's states 19 times smaller at about
400 MB/s a core (level 6: 24 times at 165 MB/s; docs/checker.md)."""
_RECORD = struct.Struct("<QQIHI")  # fingerprint, parent, label code, key and encoding lengths
_BLOCK = struct.Struct("<II")  # payload bytes, records (an uncompressed block)
_PACKED = struct.Struct("<III")  # stored bytes, records, uncompressed bytes
_TAIL = struct.Struct("<8sQQ16s")  # magic, records, blocks, digest of the block digests
BLOCK_BYTES = 1 << 20
Record = tuple[int, int, int, bytes, bytes]
"""(fingerprint, parent fingerprint, label code, discovery key, encoding)."""


class RunDirError(Exception):
    """A run directory that cannot be used for this check (one-line message)."""


def _digest(data: bytes) -> bytes:
    return bytes(xxhash.xxh3_128_digest(data))


def _record_digest(record: Mapping[str, Any]) -> str:
    body = {k: v for k, v in record.items() if k != "checksum"}
    return _digest(json.dumps(body, sort_keys=True).encode()).hex()


def _write_atomically(path: Path, *chunks: bytes) -> None:
    """Write ``chunks`` to ``path`` whole or not at all; an ``OSError`` (a full disk) leaves
    the former file as it was and no temporary file behind, and becomes a ``RunDirError``."""
    temporary = path.with_name(path.name + ".tmp")
    try:
        with open(temporary, "wb") as handle:
            for chunk in chunks:
                handle.write(chunk)
        os.replace(temporary, path)
    except OSError as error:
        temporary.unlink(missing_ok=True)
        raise RunDirError(
            f"run directory {str(path.parent)!r}: cannot write {path.name} "
            f"({error.strerror or error}); the run can resume from its last committed level "
            "once this is fixed"
        ) from error


@dataclass(slots=True)
class RunStore:
    """The files of one run directory."""

    root: Path
    lock_fd: int | None = field(default=None, compare=False, repr=False)

    def open(self, identity: Mapping[str, Any]) -> None:
        """Create the directory for ``identity``, or check that it already belongs to it,
        and lock it for this run (``close`` unlocks it).

        The lock is ``flock`` on the file ``lock``, which holds the locking process's id: a
        second run on the directory finds it locked and is refused, naming that process.
        The kernel drops the lock when its holder dies, however it dies, so a ``lock`` file
        left by a killed run (a dead process id) is simply locked again and overwritten
        with the new id.  On a file system without ``flock`` the run goes on unlocked."""
        if self.root.exists() and not self.root.is_dir():
            raise RunDirError(f"run directory {str(self.root)!r} is not a directory")
        meta_path = self.root / "meta.json"
        if not meta_path.exists() and self.root.exists() and any(
            p.name != LOCK for p in self.root.iterdir()
        ):
            raise RunDirError(
                f"run directory {str(self.root)!r} is not empty and is not an isrlab run; "
                "refusing to write into it"
            )
        try:
            self.root.mkdir(parents=True, exist_ok=True)
        except OSError as error:
            raise RunDirError(
                f"cannot create run directory {str(self.root)!r} ({error.strerror or error})"
            ) from error
        self._lock()
        try:
            self._check_meta(identity)
        except BaseException:
            self.close()
            raise

    def _lock(self) -> None:
        path = self.root / LOCK
        try:
            fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
        except OSError as error:
            raise RunDirError(
                f"run directory {str(self.root)!r}: cannot open its lock file "
                f"({error.strerror or error})"
            ) from error
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError as error:
            if error.errno not in (errno.EWOULDBLOCK, errno.EAGAIN, errno.EACCES):
                os.close(fd)  # no flock on this file system: run unlocked
                return
            holder = os.pread(fd, 32, 0).decode(errors="replace").strip() or "?"
            os.close(fd)
            if _dead(holder):  # its forked workers hold the lock until they notice
                raise RunDirError(
                    f"run directory {str(self.root)!r} is still locked by the worker "
                    f"processes of a run that died (process {holder}, lock file "
                    f"{str(path)!r}); they exit within seconds: try again"
                ) from None
            raise RunDirError(
                f"run directory {str(self.root)!r} is in use by another run (process "
                f"{holder}, lock file {str(path)!r}); refusing to run two checks on it at once"
            ) from None
        os.ftruncate(fd, 0)
        os.pwrite(fd, f"{os.getpid()}\n".encode(), 0)
        self.lock_fd = fd

    def close(self) -> None:
        """Unlock the directory (the ``lock`` file stays, emptied: removing it would let a
        run that opened it just before lock a file no later run sees)."""
        fd, self.lock_fd = self.lock_fd, None
        if fd is None:
            return
        with contextlib.suppress(OSError):
            os.ftruncate(fd, 0)
        os.close(fd)  # closing the descriptor releases the flock

    def _check_meta(self, identity: Mapping[str, Any]) -> None:
        meta_path = self.root / "meta.json"
        wanted = {"format": FORMAT, **identity}
        if meta_path.exists():
            try:
                found = json.loads(meta_path.read_text(encoding="utf-8"))
            except (OSError, ValueError) as error:
                raise RunDirError(
                    f"run directory {str(self.root)!r} has an unreadable meta.json ({error})"
                ) from error
            if not isinstance(found, dict):
                raise RunDirError(
                    f"run directory {str(self.root)!r} has an unreadable meta.json (not an "
                    "object)"
                )
            old = found.get("format")
            if old in UPGRADABLE and found == json.loads(json.dumps({**wanted, "format": old})):
                # A directory of this check in an earlier format: its files are read as they
                # are (format 2's last frontier one pickle, format 3's record files
                # uncompressed), the levels written from now on are format 4's.
                if old == 2:
                    self._record_parts_of_format_2()
                _write_atomically(meta_path, json.dumps(wanted, indent=1).encode())
                return
            if found.get("format") != FORMAT:
                raise RunDirError(
                    f"run directory {str(self.root)!r} was written by another version of "
                    f"isrlab (run directory format {found.get('format')!r}, this one writes "
                    f"{FORMAT}); refusing to reuse it"
                )
            if found != json.loads(json.dumps(wanted)):
                raise RunDirError(
                    f"run directory {str(self.root)!r} belongs to another check "
                    f"(model {found.get('model')!r}, params {found.get('params')}); "
                    "refusing to reuse it"
                )
            return
        _write_atomically(meta_path, json.dumps(wanted, indent=1).encode())

    def _damaged(self, name: str, what: str) -> RunDirError:
        return RunDirError(
            f"run directory {str(self.root)!r}: {name} is {what}; its states cannot be "
            "trusted: remove the run directory (or give another) to start the check again"
        )

    def commit(self) -> dict[str, Any] | None:
        """The last commit record (its checksum verified), or ``None`` for a fresh run."""
        path = self.root / "commit.json"
        if not path.exists():
            return None
        try:
            record = json.loads(path.read_bytes())
        except OSError as error:
            raise self._damaged("commit.json", f"unreadable ({error.strerror})") from error
        except ValueError as error:
            raise self._damaged("commit.json", "truncated or corrupted (not JSON)") from error
        if not isinstance(record, dict) or record.get("checksum") != _record_digest(record):
            raise self._damaged("commit.json", "corrupted (checksum mismatch)")
        del record["checksum"]
        return record

    def _record_parts_of_format_2(self) -> None:
        """Write into a format-2 commit how many workers wrote each level, counted from its
        ``links-LLLL-W.bin`` files.  A format-2 commit names only the worker count of its last
        run, and a run resumed with another count (two workers to level 20, one for level 21)
        wrote the earlier levels with more files than that count: reading only that many would
        leave states out of the visited set, and the search would find them again as new."""
        commit = self.commit()
        if commit is None or "parts" in commit:
            return
        level = int(commit["level"])
        counts = [0] * level
        for path in self.root.glob("links-*.bin"):
            with contextlib.suppress(ValueError, IndexError):
                lv, worker = int(path.name[6:10]), int(path.stem.split("-")[2])
                if 1 <= lv <= level:
                    counts[lv - 1] = max(counts[lv - 1], worker + 1)
        workers = int(commit["workers"])
        self.write_commit({**commit, "parts": [c or workers for c in counts]})

    def write_commit(self, record: Mapping[str, Any]) -> None:
        """Commit a level: written after every worker has written that level's files."""
        sealed = {**record, "checksum": _record_digest(record)}
        _write_atomically(self.root / "commit.json", json.dumps(sealed).encode())
        level = int(record["level"])
        for old in self.root.glob("frontier-*.bin"):
            if int(old.name.split("-")[1]) < level:
                old.unlink(missing_ok=True)

    def clear_uncommitted(self, level: int) -> None:
        """Remove the files of the levels after ``level`` (the last commit) and of every level
        being built: what a killed run left behind, never read."""
        for path in self.root.iterdir():
            name = path.name
            if name.startswith("build-") or name.endswith(".tmp"):
                path.unlink(missing_ok=True)
            elif name.startswith(("links-", "frontier-")) and name.endswith(".bin"):
                with contextlib.suppress(ValueError, IndexError):
                    if int(name.split("-")[1]) > level:
                        path.unlink(missing_ok=True)

    def frontier_path(self, level: int, worker: int) -> Path:
        """Worker ``worker``'s record file of level ``level``'s states to expand."""
        return self._frontier(level, worker)

    def build_path(self, level: int, sender: int, owner: int, suffix: str = "bin") -> Path:
        """The new states of level ``level`` found by ``sender`` and owned by ``owner``."""
        return self.root / f"build-{level:04d}-{sender}-{owner}.{suffix}"

    def write_links(self, level: int, worker: int, fps: array[int], parents: array[int]) -> None:
        """Persist one worker's links of a level."""
        _write_sealed(self._links(level, worker), fps.tobytes() + parents.tobytes())

    def write_pickle(self, path: Path, value: Any) -> None:
        """A sealed pickle (the links a worker hands another while a level is built)."""
        _write_sealed(path, pickle.dumps(value, protocol=5))

    def read_pickle(self, path: Path) -> Any:
        """The inverse of ``write_pickle``, its checksum verified."""
        return pickle.loads(self._read_sealed(path))

    def records(self, path: Path) -> Iterator[Record]:
        """The records of a record file, one block at a time, each block's digest checked
        before its records are handed out and the trailer's counts at the end."""
        return read_records(path, self._damaged)

    def frontier_records(self, level: int, worker: int, *, keyed: bool) -> Iterator[Record]:
        """One worker's frontier of a committed level, streamed; a format-2 frontier (one
        pickle, the key joined to each encoding under a view) is read whole."""
        path = self._frontier(level, worker)
        if _is_record_file(path):
            return self.records(path)
        return self._legacy_frontier(path, keyed=keyed)

    def _legacy_frontier(self, path: Path, *, keyed: bool) -> Iterator[Record]:
        raw_fps, encodings = pickle.loads(self._read_sealed(path))
        fps = array("Q")
        fps.frombytes(raw_fps)
        for fp, encoding in zip(fps, encodings, strict=True):
            if keyed:
                size = int.from_bytes(encoding[:2], "big")
                yield fp, 0, 0, encoding[2:2 + size], encoding[2 + size:]
            else:
                yield fp, 0, 0, b"", encoding

    def parent_of(self, level: int, workers: int, fp: int) -> int:
        """The linked parent of ``fp``, a state of ``level`` (written by ``workers``)."""
        for worker in range(workers):
            fps, parents = self.read_links(level, worker)
            with contextlib.suppress(ValueError):
                return int(parents[fps.index(fp)])
        raise self._damaged(f"links-{level:04d}-*.bin", f"missing the state {fp:#x}")

    def _links(self, level: int, worker: int) -> Path:
        return self.root / f"links-{level:04d}-{worker}.bin"

    def _frontier(self, level: int, worker: int) -> Path:
        return self.root / f"frontier-{level:04d}-{worker}.bin"

    def _read_sealed(self, path: Path) -> bytes:
        """A ``.bin`` file's payload, its trailer checked (``RunDirError`` if it fails)."""
        try:
            data = path.read_bytes()
        except FileNotFoundError:
            raise self._damaged(path.name, "missing") from None
        except OSError as error:
            raise self._damaged(path.name, f"unreadable ({error.strerror})") from error
        payload, trailer = data[:-TRAILER], data[-TRAILER:]
        if len(data) < TRAILER or trailer != MAGIC + _digest(payload):
            raise self._damaged(path.name, "truncated or corrupted (checksum mismatch)")
        return payload

    def read_links(self, level: int, worker: int) -> tuple[array[int], array[int]]:
        """One worker's links of a committed level: (fingerprints, parent fingerprints)."""
        data = self._read_sealed(self._links(level, worker))
        half = len(data) // 2
        fps, parents = array("Q"), array("Q")
        fps.frombytes(data[:half])
        parents.frombytes(data[half:])
        return fps, parents


class RecordWriter:
    """A record file written as records come (one block of about 1 MiB in memory, compressed
    when flushed), under a temporary name until ``close``; an ``OSError`` becomes a one-line
    ``RunDirError``.  ``compress=False`` writes format 3's uncompressed blocks (tests of
    the upgrade write format-3 directories with it)."""

    def __init__(self, path: Path, *, compress: bool = True) -> None:
        self.path = path
        self.compress = compress
        self.temporary = path.with_name(path.name + ".tmp")
        self.buffer = bytearray()
        self.count = self.pending = self.blocks = 0
        self.digests = xxhash.xxh3_128()
        self.handle = self._guard(lambda: open(self.temporary, "wb"))  # noqa: SIM115

    def _guard(self, action: Any) -> Any:
        try:
            return action()
        except OSError as error:
            with contextlib.suppress(OSError):
                self.temporary.unlink(missing_ok=True)
            raise RunDirError(
                f"run directory {str(self.path.parent)!r}: cannot write {self.path.name} "
                f"({error.strerror or error}); the run can resume from its last committed "
                "level once this is fixed"
            ) from error

    def add(self, fp: int, parent: int, code: int, key: bytes, encoding: bytes) -> None:
        """Append one record."""
        buffer = self.buffer
        buffer += _RECORD.pack(fp, parent, code, len(key), len(encoding))
        buffer += key
        buffer += encoding
        self.pending += 1
        if len(buffer) >= BLOCK_BYTES:
            self._flush()

    def _flush(self) -> None:
        if not self.pending:
            return
        if self.compress:
            stored = zlib.compress(self.buffer, ZLIB_LEVEL)
            header = _PACKED.pack(len(stored), self.pending, len(self.buffer))
            digest = _digest(header + stored)
        else:
            stored = bytes(self.buffer)
            header = _BLOCK.pack(len(stored), self.pending)
            digest = _digest(stored)
        self._guard(lambda: self.handle.write(header + stored + digest))
        self.digests.update(digest)
        self.count += self.pending
        self.blocks += 1
        self.pending = 0
        self.buffer = bytearray()

    def close(self) -> int:
        """Seal the file and give it its name; the number of records."""
        self._flush()
        magic = PACKED_MAGIC if self.compress else RECORDS_MAGIC
        tail = _TAIL.pack(magic, self.count, self.blocks, self.digests.digest())

        def finish() -> None:
            self.handle.write(tail)
            self.handle.close()
            os.replace(self.temporary, self.path)

        self._guard(finish)
        return self.count

    def abort(self) -> None:
        """Drop the file (a search that failed)."""
        with contextlib.suppress(OSError):
            self.handle.close()
            self.temporary.unlink(missing_ok=True)


def _is_record_file(path: Path) -> bool:
    """Whether ``path`` is a record file rather than a format-2 sealed pickle (a file that
    is neither counts as a record file, and is reported damaged when read)."""
    try:
        with open(path, "rb") as handle:
            size = os.fstat(handle.fileno()).st_size
            handle.seek(max(0, size - _TAIL.size))
            tail = handle.read()
    except OSError:
        return True
    return tail[:len(RECORDS_MAGIC)] in (RECORDS_MAGIC, PACKED_MAGIC) or tail[-TRAILER:-16] != MAGIC


def read_records(path: Path, damaged: Any) -> Iterator[Record]:
    """The records of the record file ``path``, compressed or not (see the module's
    docstring); ``damaged(name, what)`` makes the error raised for a missing, truncated or
    corrupted file."""
    try:
        handle = open(path, "rb")  # noqa: SIM115
    except FileNotFoundError:
        raise damaged(path.name, "missing") from None
    except OSError as error:
        raise damaged(path.name, f"unreadable ({error.strerror})") from error
    corrupted = "truncated or corrupted (checksum mismatch)"
    with handle:
        end = os.fstat(handle.fileno()).st_size - _TAIL.size
        if end < 0:
            raise damaged(path.name, corrupted)
        handle.seek(end)
        magic, count, blocks, total = _TAIL.unpack(handle.read(_TAIL.size))
        if magic not in (RECORDS_MAGIC, PACKED_MAGIC):
            raise damaged(path.name, corrupted)
        handle.seek(0)
        next_block = _packed_blocks if magic == PACKED_MAGIC else _plain_blocks
        digests = xxhash.xxh3_128()
        found = read_blocks = 0
        unpack = _RECORD.unpack_from
        head = _RECORD.size
        for records, payload, digest in next_block(handle, end):
            if records < 0:
                raise damaged(path.name, corrupted if records == -1 else
                              "corrupted (a compressed block does not decompress)")
            digests.update(digest)
            read_blocks += 1
            offset = 0
            try:
                for _ in range(records):
                    fp, parent, code, key_size, size = unpack(payload, offset)
                    offset += head
                    key = payload[offset:offset + key_size]
                    offset += key_size
                    yield fp, parent, code, key, payload[offset:offset + size]
                    offset += size
            except struct.error:
                raise damaged(path.name, corrupted) from None
            found += records
            if offset != len(payload):
                raise damaged(path.name, corrupted)
        if found != count or read_blocks != blocks or digests.digest() != total:
            raise damaged(path.name, corrupted)


_Block = tuple[int, bytes, bytes]
"""(records, payload, digest) of one block; records -1 if the block is truncated or its
digest does not match, -2 if it does not decompress (the reader stops there)."""


def _plain_blocks(handle: Any, end: int) -> Iterator[_Block]:
    """Format 3's uncompressed blocks up to ``end``, each digest checked."""
    position = 0
    while position < end:
        header = handle.read(_BLOCK.size)
        if len(header) < _BLOCK.size:
            yield -1, b"", b""
            return
        size, records = _BLOCK.unpack(header)
        position += _BLOCK.size + size + 16
        if position > end:
            yield -1, b"", b""
            return
        payload = handle.read(size)
        digest = handle.read(16)
        if len(payload) != size or digest != _digest(payload):
            yield -1, b"", b""
            return
        yield records, payload, digest
    if position != end:
        yield -1, b"", b""


def _packed_blocks(handle: Any, end: int) -> Iterator[_Block]:
    """Compressed blocks up to ``end``, each digest (of header and stored bytes) checked
    before the block is decompressed."""
    position = 0
    while position < end:
        header = handle.read(_PACKED.size)
        if len(header) < _PACKED.size:
            yield -1, b"", b""
            return
        size, records, raw = _PACKED.unpack(header)
        position += _PACKED.size + size + 16
        if position > end:
            yield -1, b"", b""
            return
        stored = handle.read(size)
        digest = handle.read(16)
        if len(stored) != size or digest != _digest(header + stored):
            yield -1, b"", b""
            return
        try:
            payload = zlib.decompress(stored, bufsize=max(raw, 1))
        except zlib.error:
            payload = b""
        if len(payload) != raw:
            yield -2, b"", b""
            return
        yield records, payload, digest
    if position != end:
        yield -1, b"", b""


def parts_of(commit: Mapping[str, Any]) -> list[int]:
    """The number of workers that wrote each committed level (a format-2 commit, without
    ``parts``, was written by one worker count throughout)."""
    level = int(commit["level"])
    parts = commit.get("parts")
    if isinstance(parts, list) and len(parts) == level:
        return [int(p) for p in parts]
    return [int(commit["workers"])] * level


def _dead(pid: str) -> bool:
    """Whether ``pid`` (as the lock file holds it) names no living process."""
    try:
        os.kill(int(pid), 0)
    except ProcessLookupError:
        return True
    except (ValueError, OSError):
        return False
    return False


def _write_sealed(path: Path, payload: bytes) -> None:
    """Write ``payload`` and its checksum trailer atomically."""
    _write_atomically(path, payload, MAGIC, _digest(payload))
