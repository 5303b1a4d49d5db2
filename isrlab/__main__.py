"""The ``isrlab`` command: ``python -m isrlab`` and the installed ``isrlab`` script.

Ctrl-C at any moment after Python's start-up prints ``isrlab: interrupted`` and exits 130:
while isrlab's modules load, while a command runs (``isrlab.cli_support.OneLineErrors``),
and while the process ends.  The end is the delicate part.  Left to itself, Python runs
``atexit`` callbacks (where a ``KeyboardInterrupt`` is printed as an ignored exception and
the exit status stays the run's), then gives SIGINT back its default action and tears the
interpreter down, so a Ctrl-C in that last stretch killed the process (status -2) without a
word.  So ``main`` ends the process itself: Ctrl-C from then on runs ``_interrupted``, which
says so and exits 130 at once; standard output is flushed, threads joined and ``atexit``
callbacks run (multiprocessing's clean-up among them), and ``os._exit`` ends the process
without the teardown, whose work (freeing memory, clearing modules) the operating system
does anyway.
"""

import atexit
import contextlib
import os
import signal
import sys
import threading
from types import FrameType
from typing import NoReturn

INTERRUPTED = 130
"""The exit status after Ctrl-C (128 + SIGINT), as ``isrlab.cli_support.INTERRUPTED``."""

BROKEN_PIPE = 141
"""The exit status when standard output's reader stopped reading, as
``isrlab.cli_support.BROKEN_PIPE``."""

_INTERRUPTED_LINE = b"isrlab: interrupted\n"


def main() -> None:
    """Run ``isrlab.cli.main`` and end the process with its exit status, 130 after Ctrl-C.
    The import is here, not in ``isrlab/__init__.py``, so the root package imports no
    isrlab module (tests/test_layers.py)."""
    status, interrupt = 0, None
    try:
        status = _run()
    except KeyboardInterrupt as error:
        interrupt = error
    # Python raises KeyboardInterrupt on returning from a call (or on a loop's jump back), and
    # there is none from here to the handler's installation but that one: a Ctrl-C just
    # before it raises there.
    while True:
        try:
            signal.signal(signal.SIGINT, _interrupted)
            break
        except KeyboardInterrupt as error:
            if interrupt is None:
                interrupt = error
    if interrupt is not None:
        sys.unraisablehook = _ignore_unraisable  # as isrlab.cli_support._say_interrupted
        if not _pressed_again(interrupt):  # else isrlab.cli_support has said it
            _interrupted(signal.SIGINT, None)
        status = INTERRUPTED
    _exit(status)


def _run() -> int:
    """The exit status of the command line (``SystemExit``'s code; a text code is printed,
    status 1, as Python does)."""
    try:
        from isrlab.cli import main as run

        run()
    except SystemExit as done:
        if done.code is None or isinstance(done.code, int):
            return done.code or 0
        sys.stderr.write(f"{done.code}\n")
        return 1
    return 0


def _pressed_again(error: BaseException) -> bool:
    """Whether ``error`` interrupted the handling of an earlier Ctrl-C: one raised while a
    ``KeyboardInterrupt`` (or click's ``Abort``, which click raises from one) or the
    ``SystemExit(130)`` that reports it was on its way."""
    seen = error.__context__
    while seen is not None:
        if (isinstance(seen, KeyboardInterrupt) or isinstance(seen.__cause__, KeyboardInterrupt)
                or (isinstance(seen, SystemExit) and seen.code == INTERRUPTED)):
            return True
        seen = seen.__context__
    return False


def _ignore_unraisable(_unraisable: object) -> None:
    """``sys.unraisablehook`` after Ctrl-C: a half-built object's failing ``__del__`` is not
    reported."""


def _interrupted(signum: int, frame: FrameType | None) -> NoReturn:
    """The SIGINT handler while the process ends: one line, exit 130, now."""
    # no standard error (closed, or None when the shell closed it): the status says it
    with contextlib.suppress(OSError, ValueError, AttributeError):
        os.write(sys.stderr.fileno(), _INTERRUPTED_LINE)
    os._exit(INTERRUPTED)


def _exit(status: int) -> None:
    """End the process with ``status`` as Python's own exit would, short of the interpreter's
    teardown: output flushed, non-daemon threads joined, ``atexit`` callbacks run."""
    status = _flushed(status)
    for thread in threading.enumerate():
        if thread is not threading.current_thread() and not thread.daemon:
            thread.join()
    atexit._run_exitfuncs()
    os._exit(_flushed(status))


def _flushed(status: int) -> int:
    """``status`` once standard output and error are flushed; ``BROKEN_PIPE``, silently, if
    standard output's reader stopped reading, else 120 (Python's status when it cannot
    flush them at exit) if standard output could not be written, said in one line.  A stream
    Python has none of (``None``: the shell closed it, ``isrlab ... >&-``) is skipped."""
    out, err = sys.stdout, sys.stderr
    try:
        if out is not None:
            out.flush()
    except BrokenPipeError:
        status = BROKEN_PIPE
    except (OSError, ValueError) as error:
        status = status or 120
        with contextlib.suppress(OSError, ValueError, AttributeError):
            err.write(f"isrlab: error: cannot write the standard output: {error}\n")
    with contextlib.suppress(OSError, ValueError, AttributeError):
        err.flush()
    return status


if __name__ == "__main__":
    main()
