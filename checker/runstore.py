"""A run directory: the completed BFS levels of one check, so a stopped run can resume.

Layout (all files written atomically: a temporary name, then ``os.replace``; each level file
ends with the SHA-256 of its content, checked when it is read back, so a truncated or
corrupted file is reported, never read as fewer states):

* ``meta.json`` -- what the run explores (model, parameters, symmetry, deadlock checking);
  a run directory whose ``meta.json`` differs is refused, never overwritten;
* ``links-LLLL-W.bin`` -- for level ``L`` and worker ``W``: the fingerprints first found at
  that level and the fingerprint of each one's chosen parent (two arrays of unsigned 64-bit);
* ``frontier-LLLL-W.bin`` -- the encodings of that level's states still to be expanded (only
  the last committed level's are kept);
* ``commit.json`` -- written last, after every worker has written its level files: the level
  it commits and every counter at that point.  A run killed at any moment resumes from the
  level named here; files of a later, uncommitted level are ignored and rewritten;
* ``lock`` -- held (``flock``) by the run using the directory: a second run on it at the same
  time is refused in one line.

A write that fails (the disk full) removes its temporary file and raises ``RunDirError``:
the committed levels are untouched and the same command resumes once space is freed.
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import os
import pickle
from array import array
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

FORMAT = 2
"""2: level files end with their SHA-256 (format 1 had none)."""

DIGEST = 32
"""Bytes of the SHA-256 trailer of a level file."""

_LOCKS: dict[Path, int] = {}
"""The run directories this process holds the lock of (root -> the lock file's descriptor),
kept until the process ends: a resumed run in the same process takes them again freely."""


class RunDirError(Exception):
    """A run directory that cannot be used for this check (one-line message)."""


def _write_atomically(path: Path, data: bytes) -> None:
    """``data`` to ``path`` (a temporary file, then ``os.replace``); ``RunDirError`` when it
    cannot be written (its temporary file removed, the old file untouched)."""
    temporary = path.with_name(path.name + ".tmp")
    try:
        with open(temporary, "wb") as handle:
            handle.write(data)
        os.replace(temporary, path)
    except OSError as error:
        temporary.unlink(missing_ok=True)
        raise RunDirError(
            f"run directory {str(path.parent)!r}: cannot write {path.name} "
            f"({error.strerror or error}); the committed levels are intact: free space and "
            "run the same command again to resume") from error


def _sealed(payload: bytes) -> bytes:
    return payload + hashlib.sha256(payload).digest()


def _unsealed(path: Path) -> bytes:
    """A level file's content, its SHA-256 trailer checked (``RunDirError`` when the file
    is missing, truncated or corrupted)."""
    try:
        data = path.read_bytes()
    except OSError as error:
        raise RunDirError(f"run directory {str(path.parent)!r}: cannot read {path.name} "
                          f"({error.strerror or error})") from error
    payload, digest = data[:-DIGEST], data[-DIGEST:]
    if len(data) < DIGEST or hashlib.sha256(payload).digest() != digest:
        raise RunDirError(
            f"run directory {str(path.parent)!r}: {path.name} is damaged (truncated or "
            "corrupted: its checksum does not match); delete the directory to start over")
    return payload


def _read_json(path: Path) -> Any:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError) as error:
        raise RunDirError(f"run directory {str(path.parent)!r} has an unreadable "
                          f"{path.name} ({error})") from error


def _lock(root: Path) -> None:
    """Hold ``root``'s lock for this process, or ``RunDirError`` when another run holds it."""
    key = root.resolve()
    if key in _LOCKS:
        return
    fd = os.open(root / "lock", os.O_RDWR | os.O_CREAT, 0o644)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError as error:
        os.close(fd)
        raise RunDirError(f"run directory {str(root)!r} is in use by another isrlab run; "
                          "wait for it to end or use another directory") from error
    _LOCKS[key] = fd


@dataclass(frozen=True, slots=True)
class RunStore:
    """The files of one run directory."""

    root: Path

    def open(self, identity: Mapping[str, Any]) -> None:
        """Create the directory for ``identity``, or check that it already belongs to it."""
        meta_path = self.root / "meta.json"
        wanted = {"format": FORMAT, **identity}
        if self.root.exists() and not self.root.is_dir():
            raise RunDirError(f"run directory {str(self.root)!r} is not a directory")
        if meta_path.exists():
            found = _read_json(meta_path)
            if not isinstance(found, dict):
                raise RunDirError(f"run directory {str(self.root)!r} has an unreadable "
                                  "meta.json (not a JSON object)")
            if found != json.loads(json.dumps(wanted)):
                raise RunDirError(
                    f"run directory {str(self.root)!r} belongs to another check "
                    f"(model {found.get('model')!r}, params {found.get('params')}); "
                    "refusing to reuse it"
                )
            _lock(self.root)
            return
        if self.root.exists() and any(p.name != "lock" for p in self.root.iterdir()):
            raise RunDirError(
                f"run directory {str(self.root)!r} is not empty and is not an isrlab run; "
                "refusing to write into it"
            )
        try:
            self.root.mkdir(parents=True, exist_ok=True)
        except OSError as error:
            raise RunDirError(f"cannot create run directory {str(self.root)!r} "
                              f"({error.strerror or error})") from error
        _lock(self.root)
        _write_atomically(meta_path, json.dumps(wanted, indent=1).encode())

    def commit(self) -> dict[str, Any] | None:
        """The last commit record, or ``None`` for a fresh run."""
        path = self.root / "commit.json"
        if not path.exists():
            return None
        record = _read_json(path)
        if not isinstance(record, dict) or not isinstance(record.get("level"), int):
            raise RunDirError(f"run directory {str(self.root)!r} has an unreadable "
                              "commit.json (no level)")
        return record

    def write_commit(self, record: Mapping[str, Any]) -> None:
        """Commit a level: written after every worker has written that level's files."""
        _write_atomically(self.root / "commit.json", json.dumps(record).encode())
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
        _write_atomically(self._links(level, worker),
                          _sealed(fps.tobytes() + parents.tobytes()))
        payload = pickle.dumps((frontier_fps.tobytes(), frontier), protocol=5)
        _write_atomically(self._frontier(level, worker), _sealed(payload))

    def read_links(self, level: int, worker: int) -> tuple[array[int], array[int]]:
        """One worker's links of a committed level: (fingerprints, parent fingerprints)."""
        data = _unsealed(self._links(level, worker))
        half = len(data) // 2
        fps, parents = array("Q"), array("Q")
        fps.frombytes(data[:half])
        parents.frombytes(data[half:])
        return fps, parents

    def read_frontier(self, level: int, worker: int) -> tuple[array[int], list[bytes]]:
        """One worker's frontier of a committed level: fingerprints and state encodings."""
        raw_fps, encodings = pickle.loads(_unsealed(self._frontier(level, worker)))
        fps = array("Q")
        fps.frombytes(raw_fps)
        return fps, list(encodings)
