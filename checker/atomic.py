"""Atomic file output: a file a user asked for is either the old one or the whole new one.

Every report, trace and chart is written to a temporary file in the target's directory and
renamed over the target (``os.replace``, atomic on POSIX) only when it is complete; an
exception or a Ctrl-C while writing removes the temporary file and leaves no partial output.
"""

from __future__ import annotations

import contextlib
import os
import tempfile
from collections.abc import Iterator
from pathlib import Path


@contextlib.contextmanager
def atomic_output(path: str | Path) -> Iterator[Path]:
    """A temporary path beside ``path``; renamed to ``path`` when the block ends normally,
    removed when it raises (``KeyboardInterrupt`` included)."""
    target = Path(path)
    handle, name = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp",
                                    dir=target.parent)
    os.close(handle)
    temporary = Path(name)
    try:
        yield temporary
        os.replace(temporary, target)
    except BaseException:
        temporary.unlink(missing_ok=True)
        raise


def write_text_atomically(path: str | Path, text: str) -> None:
    """Write ``text`` (UTF-8) to ``path`` atomically (see ``atomic_output``)."""
    with atomic_output(path) as temporary:
        temporary.write_text(text, encoding="utf-8")
