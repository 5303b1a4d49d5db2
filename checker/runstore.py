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
  level named here; files of a later, uncommitted level are ignored and rewritten.
"""

from __future__ import annotations

import json
import os
import pickle
from array import array
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

FORMAT = 1


class RunDirError(Exception):
    """A run directory that cannot be used for this check (one-line message)."""


def _write_atomically(path: Path, data: bytes) -> None:
    temporary = path.with_name(path.name + ".tmp")
    with open(temporary, "wb") as handle:
        handle.write(data)
    os.replace(temporary, path)


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
            try:
                found = json.loads(meta_path.read_text(encoding="utf-8"))
            except (OSError, ValueError) as error:
                raise RunDirError(
                    f"run directory {str(self.root)!r} has an unreadable meta.json ({error})"
                ) from error
            if found != json.loads(json.dumps(wanted)):
                raise RunDirError(
                    f"run directory {str(self.root)!r} belongs to another check "
                    f"(model {found.get('model')!r}, params {found.get('params')}); "
                    "refusing to reuse it"
                )
            return
        if self.root.exists() and any(self.root.iterdir()):
            raise RunDirError(
                f"run directory {str(self.root)!r} is not empty and is not an isrlab run; "
                "refusing to write into it"
            )
        self.root.mkdir(parents=True, exist_ok=True)
        _write_atomically(meta_path, json.dumps(wanted, indent=1).encode())

    def commit(self) -> dict[str, Any] | None:
        """The last commit record, or ``None`` for a fresh run."""
        path = self.root / "commit.json"
        if not path.exists():
            return None
        record: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
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
        _write_atomically(self._links(level, worker), fps.tobytes() + parents.tobytes())
        payload = pickle.dumps((frontier_fps.tobytes(), frontier), protocol=5)
        _write_atomically(self._frontier(level, worker), payload)

    def read_links(self, level: int, worker: int) -> tuple[array[int], array[int]]:
        """One worker's links of a committed level: (fingerprints, parent fingerprints)."""
        data = self._links(level, worker).read_bytes()
        half = len(data) // 2
        fps, parents = array("Q"), array("Q")
        fps.frombytes(data[:half])
        parents.frombytes(data[half:])
        return fps, parents

    def read_frontier(self, level: int, worker: int) -> tuple[array[int], list[bytes]]:
        """One worker's frontier of a committed level: fingerprints and state encodings."""
        raw_fps, encodings = pickle.loads(self._frontier(level, worker).read_bytes())
        fps = array("Q")
        fps.frombytes(raw_fps)
        return fps, list(encodings)
