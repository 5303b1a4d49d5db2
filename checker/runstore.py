"""A run directory: the completed BFS levels of one check, so a stopped run can resume.

Layout (all files written atomically: a temporary name, then ``os.replace``):

* ``meta.json`` -- what the run explores (model, parameters, symmetry, deadlock checking);
  a run directory whose ``meta.json`` differs is refused, never overwritten;
* ``links-LLLL-W.bin`` -- for level ``L`` and worker ``W``: the fingerprints first found at
  that level and the fingerprint of each one's chosen parent (two arrays of unsigned 64-bit);
* ``frontier-LLLL-W.bin`` -- the encodings of that level's states still to be expanded (only
  the last committed level's are kept);
* ``commit.json`` -- written last, after every worker has written its level files: the level
  it commits and every counter at that point.  A run killed at any moment resumes from the
  level named here; files of a later, uncommitted level are ignored and rewritten;
* ``lock`` -- the process id of the run using the directory, locked with ``flock`` while it
  runs (see ``RunStore.open``).

Every file carries a checksum written with it (the ``.bin`` files end with a 24-byte trailer:
a magic word and the XXH3-128 digest of what precedes it; ``commit.json`` holds the digest of
its other fields under ``checksum``), verified whenever the file is read back: a truncated,
missing or corrupted file is reported in one line (``RunDirError``) and never read as fewer
states.  A write that fails (the disk is full) is reported likewise and leaves the last
commit and its files intact, so the run resumes from there once there is room.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import json
import os
import pickle
from array import array
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import xxhash

FORMAT = 2
"""2: every file checksummed (1 had no checksums; its directories are refused)."""

MAGIC = b"isrlab\x02\x00"
"""The first 8 bytes of a ``.bin`` file's trailer; the 16 after them are the digest."""
TRAILER = len(MAGIC) + 16
LOCK = "lock"


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

    def write_commit(self, record: Mapping[str, Any]) -> None:
        """Commit a level: written after every worker has written that level's files."""
        sealed = {**record, "checksum": _record_digest(record)}
        _write_atomically(self.root / "commit.json", json.dumps(sealed).encode())
        level = int(record["level"])
        for old in self.root.glob("frontier-*.bin"):
            if int(old.name.split("-")[1]) < level:
                old.unlink(missing_ok=True)

    def _links(self, level: int, worker: int) -> Path:
        return self.root / f"links-{level:04d}-{worker}.bin"

    def _frontier(self, level: int, worker: int) -> Path:
        return self.root / f"frontier-{level:04d}-{worker}.bin"

    def write_level(
        self, level: int, worker: int, fps: array[int], parents: array[int],
        frontier_fps: array[int], frontier: list[bytes],
    ) -> None:
        """Persist one worker's share of a level: its links and its frontier encodings."""
        _write_sealed(self._links(level, worker), fps.tobytes() + parents.tobytes())
        payload = pickle.dumps((frontier_fps.tobytes(), frontier), protocol=5)
        _write_sealed(self._frontier(level, worker), payload)

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

    def read_frontier(self, level: int, worker: int) -> tuple[array[int], list[bytes]]:
        """One worker's frontier of a committed level: fingerprints and state encodings."""
        raw_fps, encodings = pickle.loads(self._read_sealed(self._frontier(level, worker)))
        fps = array("Q")
        fps.frombytes(raw_fps)
        return fps, list(encodings)


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
