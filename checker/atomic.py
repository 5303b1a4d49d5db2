"""Safe file output: a file a user asked for is either the old one or the whole new one, and
whatever the path names is written, never replaced by something else.

Every report, trace and chart is first written whole to a temporary file; what happens then
depends on what the user's path names (``output_kind``):

* a regular file, or a new name: the temporary file sits in the target's directory and is
  renamed over it (``os.replace``, atomic on POSIX) only when complete.  A new file gets the
  mode the umask gives (``0o666 & ~umask``, as the shell's ``>`` does), an existing one keeps
  its mode;
* a symbolic link: followed to its target, which is written as above; the link stays;
* a device, a FIFO or a socket (``/dev/null``, ``/dev/full``, a named pipe): opened and
  written directly, never replaced;
* one of this process's open descriptors (``/dev/stdout``, ``/dev/stderr``, ``/dev/fd/N``,
  ``/proc/self/fd/N``): written to that descriptor at its current offset, after what the
  command already printed there.

An exception or a Ctrl-C while writing removes the temporary file and leaves no partial output.
A failed write raises ``OutputError``: an ``OSError`` whose message names the path in one line.
``writable_problem`` says, before any work, why a path could not be written (or ``None``).
"""

from __future__ import annotations

import contextlib
import enum
import fcntl
import os
import re
import shutil
import stat
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

__all__ = ["OutputError", "OutputKind", "atomic_output", "output_kind", "writable_problem",
           "write_text_atomically"]


class OutputError(OSError):
    """An output file that could not be written; ``str()`` is one line naming the path."""

    def __str__(self) -> str:
        return str(self.args[0]) if self.args else "cannot write an output file"


class OutputKind(enum.Enum):
    """What an output path names, which decides how it is written."""

    FILE = "file"            # a regular file or a new name: replaced atomically
    DIRECT = "direct"        # a device, FIFO or socket: opened and written, never replaced
    DESCRIPTOR = "descriptor"  # /dev/stdout and kin: this process's open descriptor


_DESCRIPTOR_PATHS = {"/dev/stdin": 0, "/dev/stdout": 1, "/dev/stderr": 2}
_FD_PATH = re.compile(r"^(?:/dev/fd|/proc/self/fd|/proc/(\d+)/fd)/(\d+)$")


def descriptor_of(path: str | Path) -> int | None:
    """The open descriptor of this process that ``path`` names (``/dev/stdout`` -> 1,
    ``/dev/fd/5`` -> 5), or ``None``.  Only the path's text is read: on Linux these are
    ``/proc`` links whose target is no file name one could rename over."""
    text = os.path.normpath(os.path.abspath(os.fspath(path)))
    if text in _DESCRIPTOR_PATHS:
        return _DESCRIPTOR_PATHS[text]
    match = _FD_PATH.match(text)
    if match is None or (match.group(1) is not None and int(match.group(1)) != os.getpid()):
        return None
    return int(match.group(2))


def output_kind(path: str | Path) -> OutputKind:
    """How ``path`` is written: ``DESCRIPTOR`` for one of this process's descriptors,
    ``DIRECT`` for an existing non-regular file (symlinks followed), else ``FILE``."""
    if descriptor_of(path) is not None:
        return OutputKind.DESCRIPTOR
    try:
        mode = os.stat(path).st_mode
    except OSError:
        return OutputKind.FILE
    if stat.S_ISREG(mode) or stat.S_ISDIR(mode):
        return OutputKind.FILE
    return OutputKind.DIRECT


def resolved_target(path: str | Path) -> Path:
    """The file a ``FILE`` output really writes: ``path`` with every symbolic link followed
    (a dangling link: the name it points to)."""
    target = Path(path)
    return Path(os.path.realpath(target)) if os.path.islink(target) else target


def _umask() -> int:
    """The process's umask (read without changing it where /proc allows)."""
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("Umask:"):
                return int(line.split()[1], 8)
    except (OSError, ValueError, IndexError):
        pass
    old = os.umask(0o022)
    os.umask(old)
    return old


def _new_mode(target: Path) -> int:
    """The mode ``target`` gets: its own when it exists, else what the umask gives."""
    try:
        return stat.S_IMODE(os.stat(target).st_mode)
    except OSError:
        return 0o666 & ~_umask()


def _why(error: OSError) -> str:
    return error.strerror or str(error)


def writable_problem(path: str | Path) -> str | None:
    """Why ``path`` could not be written, in a few words, or ``None`` when it can: found out
    before any work by what the write will do (a temporary file created and removed in the
    target's directory; a descriptor's access mode; a device's write permission)."""
    fd = descriptor_of(path)
    if fd is not None:
        try:
            flags = fcntl.fcntl(fd, fcntl.F_GETFL)
        except OSError:
            return f"descriptor {fd} is not open"
        if flags & os.O_ACCMODE == os.O_RDONLY:
            return f"descriptor {fd} is open for reading only"
        return None
    if output_kind(path) is OutputKind.DIRECT:
        return None if os.access(path, os.W_OK) else "permission denied"
    target = resolved_target(path)
    if target.is_dir():
        return "it is a directory"
    parent = target.parent
    if not parent.is_dir():
        return f"directory {str(parent)!r} does not exist"
    try:
        handle, name = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=parent)
    except OSError as error:
        return f"cannot write into directory {str(parent)!r} ({_why(error)})"
    os.close(handle)
    os.unlink(name)
    return None


@contextlib.contextmanager
def _failing_as_output_error(path: str | Path) -> Iterator[None]:
    try:
        yield
    except OutputError:
        raise
    except OSError as error:
        raise OutputError(f"cannot write {str(path)!r}: {_why(error)}") from error


@contextlib.contextmanager
def atomic_output(path: str | Path) -> Iterator[Path]:
    """A temporary path to write ``path``'s whole content into; when the block ends normally
    the content goes where ``path`` says (see the module docstring), when it raises
    (``KeyboardInterrupt`` included) the temporary file is removed and nothing is written.
    ``OutputError`` (an ``OSError``) when the output cannot be written."""
    kind = output_kind(path)
    target = resolved_target(path)
    with _failing_as_output_error(path):
        directory = target.parent if kind is OutputKind.FILE else None
        handle, name = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp",
                                        dir=directory)
        os.close(handle)
    temporary = Path(name)
    try:
        yield temporary
        with _failing_as_output_error(path):
            if kind is OutputKind.FILE:
                os.chmod(temporary, _new_mode(target))
                os.replace(temporary, target)
            else:
                _copy_into(temporary, path, kind)
    finally:
        temporary.unlink(missing_ok=True)


def _copy_into(source: Path, path: str | Path, kind: OutputKind) -> None:
    """Write ``source``'s bytes into the device, FIFO or descriptor ``path`` names."""
    with open(source, "rb") as data:
        if kind is OutputKind.DESCRIPTOR:
            fd = descriptor_of(path)
            assert fd is not None
            for stream in (sys.stdout, sys.stderr):
                with contextlib.suppress(Exception):
                    stream.flush()
            with os.fdopen(os.dup(fd), "wb") as out:
                shutil.copyfileobj(data, out)
        else:
            with open(path, "wb") as out:
                shutil.copyfileobj(data, out)


def write_text_atomically(path: str | Path, text: str) -> None:
    """Write ``text`` (UTF-8) to ``path`` safely (see ``atomic_output``)."""
    with atomic_output(path) as temporary:
        temporary.write_text(text, encoding="utf-8")
