"""Output files written safely (issue 34, item 1): whatever an output path names is written,
never replaced by something else, and a path that could not be written is refused before
any work, in one line with exit 2.

A symbolic link is followed to its target (the link stays); a device, a FIFO or
``/dev/stdout`` is written directly (never replaced by a regular file); a regular file is
replaced atomically and a new one gets the mode the umask gives (``0o666 & ~umask``, as the
shell's ``>``)."""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import IO

import pytest
from click.testing import CliRunner
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from isrlab.checker.atomic import OutputError, write_text_atomically
from isrlab.cli import cli
from isrlab.cli_support import BadInput, check_outputs

ROOT = Path(__file__).resolve().parents[1]


def _isrlab(*args: str, stdout: int | IO[str] = subprocess.PIPE,
            ) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "isrlab", *args], cwd=ROOT, text=True,
                          stdout=stdout, stderr=subprocess.PIPE, timeout=300, check=False)


def _one_line(err: str, *words: str) -> None:
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("isrlab: error: "), err
    for word in words:
        assert word in lines[0], (word, lines[0])


# -- /dev/stdout, a symlink, a FIFO as --json -------------------------------------------------

def test_json_to_dev_stdout_writes_the_report_after_the_summary() -> None:
    assert os.path.islink("/dev/stdout")
    done = _isrlab("check", "--model", "toy-counter", "-p", "bad=2", "--no-progress",
                   "--json", "/dev/stdout")
    assert done.returncode == 1, done.stderr
    summary, _, report = done.stdout.partition("\n{")
    assert "VIOLATION" in summary
    assert json.loads("{" + report)["violation"]["length"] == 3
    assert os.path.islink("/dev/stdout")  # the system's link, not replaced by a file


def test_json_to_dev_stdout_redirected_to_a_file_keeps_the_summary(tmp_path: Path) -> None:
    captured = tmp_path / "out.txt"
    with open(captured, "w", encoding="utf-8") as handle:
        done = _isrlab("check", "--model", "toy-counter", "--no-progress",
                       "--json", "/dev/stdout", stdout=handle)
    assert done.returncode == 0, done.stderr
    text = captured.read_text(encoding="utf-8")
    summary, _, report = text.partition("\n{")
    assert "OK: every invariant holds" in summary, text
    assert json.loads("{" + report)["ok"] is True


def test_json_to_a_symlink_writes_its_target_and_keeps_the_link(tmp_path: Path) -> None:
    real = tmp_path / "real.json"
    real.write_text("old\n")
    link = tmp_path / "link.json"
    link.symlink_to(real)
    result = CliRunner().invoke(cli, ["check", "--model", "toy-counter", "--no-progress",
                                      "--json", str(link)])
    assert result.exit_code == 0, result.output
    assert link.is_symlink() and os.readlink(link) == str(real)
    assert json.loads(real.read_text())["ok"] is True
    assert sorted(p.name for p in tmp_path.iterdir()) == ["link.json", "real.json"]


@contextmanager
def _fifo_reader(fifo: Path) -> Iterator[list[bytes]]:
    got: list[bytes] = []

    def read() -> None:
        with open(fifo, "rb") as handle:
            got.append(handle.read())

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    try:
        yield got
    finally:
        if reader.is_alive():  # unblock a reader nobody wrote to
            with open(fifo, "wb"):
                pass
        reader.join(timeout=30)


def test_json_to_a_fifo_is_written_through_it(tmp_path: Path) -> None:
    fifo = tmp_path / "report.fifo"
    os.mkfifo(fifo)
    with _fifo_reader(fifo) as got:
        done = _isrlab("check", "--model", "toy-counter", "--no-progress",
                       "--json", str(fifo))
    assert done.returncode == 0, done.stderr
    assert json.loads(got[0])["ok"] is True
    assert stat.S_ISFIFO(os.stat(fifo).st_mode)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["report.fifo"]


def test_json_to_dev_full_is_one_line_and_the_device_stays() -> None:
    if not os.path.exists("/dev/full"):
        pytest.skip("no /dev/full")
    done = _isrlab("check", "--model", "toy-counter", "--no-progress", "--json", "/dev/full")
    assert done.returncode == 2, (done.stdout, done.stderr)
    _one_line(done.stderr, "/dev/full", "No space left on device")
    assert stat.S_ISCHR(os.stat("/dev/full").st_mode)


# -- refused before any work -------------------------------------------------------------------

@pytest.mark.parametrize("path", ["/proc/nope.json", "/proc/self/nope/x.json",
                                  "/sys/nope.json"])
def test_an_unwritable_location_is_refused_before_the_run(path: str) -> None:
    result = CliRunner().invoke(cli, ["check", "--model", "toy-counter", "--json", path])
    assert result.exit_code == 2, result.output
    assert result.stdout == ""  # refused before the check ran
    _one_line(result.stderr, "--json", path)


def test_a_read_only_directory_is_refused_before_the_run(tmp_path: Path) -> None:
    locked = tmp_path / "locked"
    locked.mkdir()
    locked.chmod(0o500)
    try:
        if os.access(locked, os.W_OK) and os.geteuid() == 0:
            # root writes anywhere a mode forbids; a read-only location for root: /proc
            path = "/proc/report.json"
        else:
            path = str(locked / "report.json")
        result = CliRunner().invoke(cli, ["simulate", "--model", "toy-counter",
                                          "--json", path])
    finally:
        locked.chmod(0o700)
    assert result.exit_code == 2 and result.stdout == "", result.output
    _one_line(result.stderr, "--json")


# -- the mode the umask gives ------------------------------------------------------------------

@pytest.mark.parametrize(("umask", "mode"), [(0o022, 0o644), (0o077, 0o600), (0o002, 0o664)])
def test_a_new_output_gets_the_mode_the_umask_gives(tmp_path: Path, umask: int,
                                                    mode: int) -> None:
    old = os.umask(umask)
    try:
        write_text_atomically(tmp_path / "r.json", "{}\n")
    finally:
        os.umask(old)
    assert stat.S_IMODE(os.stat(tmp_path / "r.json").st_mode) == mode


def test_an_existing_output_keeps_its_mode(tmp_path: Path) -> None:
    target = tmp_path / "r.json"
    target.write_text("old\n")
    target.chmod(0o640)
    write_text_atomically(target, "new\n")
    assert target.read_text() == "new\n"
    assert stat.S_IMODE(os.stat(target).st_mode) == 0o640


# -- every kind of path (hypothesis) -----------------------------------------------------------

def _regular(d: Path) -> Path:
    (d / "old.json").write_text("old\n")
    return d / "old.json"


def _new(d: Path) -> Path:
    return d / "new.json"


def _link_to_regular(d: Path) -> Path:
    (d / "target.json").write_text("old\n")
    (d / "link.json").symlink_to(d / "target.json")
    return d / "link.json"


def _link_chain(d: Path) -> Path:
    (d / "target.json").write_text("old\n")
    (d / "l1").symlink_to(d / "target.json")
    (d / "l2").symlink_to(d / "l1")
    return d / "l2"


def _dangling_link(d: Path) -> Path:
    (d / "link.json").symlink_to(d / "later.json")
    return d / "link.json"


def _link_into_missing_dir(d: Path) -> Path:
    (d / "link.json").symlink_to(d / "missing" / "x.json")
    return d / "link.json"


def _relative_link(d: Path) -> Path:
    (d / "sub").mkdir()
    (d / "target.json").write_text("old\n")
    (d / "sub" / "link.json").symlink_to(Path("..") / "target.json")
    return d / "sub" / "link.json"


def _fifo(d: Path) -> Path:
    os.mkfifo(d / "p.fifo")
    return d / "p.fifo"


def _directory(d: Path) -> Path:
    (d / "dir.json").mkdir()
    return d / "dir.json"


def _missing_dir(d: Path) -> Path:
    return d / "missing" / "x.json"


def _dev_null(d: Path) -> Path:
    return Path("/dev/null")


def _proc(d: Path) -> Path:
    return Path("/proc/nope.json")


def _link_to_dev_null(d: Path) -> Path:
    (d / "null.json").symlink_to("/dev/null")
    return d / "null.json"


KINDS: dict[str, Callable[[Path], Path]] = {f.__name__.strip("_"): f for f in (
    _regular, _new, _link_to_regular, _link_chain, _dangling_link, _link_into_missing_dir,
    _relative_link, _fifo, _directory, _missing_dir, _dev_null, _proc, _link_to_dev_null)}
REFUSED = {"directory", "missing_dir", "proc", "link_into_missing_dir"}


def _snapshot(d: Path) -> dict[str, tuple[int, str]]:
    """Every entry under ``d``: its file type and (for links) where it points."""
    out = {}
    for p in sorted(d.rglob("*")):
        mode = os.lstat(p).st_mode
        out[str(p.relative_to(d))] = (stat.S_IFMT(mode),
                                      os.readlink(p) if p.is_symlink() else "")
    return out


@settings(max_examples=60, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(kind=st.sampled_from(sorted(KINDS)), umask=st.sampled_from([0o022, 0o077, 0o002]),
       text=st.text(max_size=200))
def test_every_kind_of_path_is_written_or_refused_but_never_replaced(
    tmp_path_factory: pytest.TempPathFactory, kind: str, umask: int, text: str
) -> None:
    d = tmp_path_factory.mktemp(kind)
    path = KINDS[kind](d)
    before = _snapshot(d)
    if kind in REFUSED:
        with pytest.raises(BadInput):
            check_outputs({"--json": path})
        assert _snapshot(d) == before
        return
    check_outputs({"--json": path})
    old = os.umask(umask)
    try:
        with _fifo_reader(path) if kind == "fifo" else _nothing() as got:
            write_text_atomically(path, text)
    finally:
        os.umask(old)
    after = _snapshot(d)
    new_names = set(after) - set(before)
    assert {k: after[k] for k in before} == before  # every link, FIFO, file is still what it was
    if kind == "fifo":
        assert got[0].decode("utf-8") == text
    elif path != Path("/dev/null") and kind != "link_to_dev_null":
        real = Path(os.path.realpath(path))
        assert real.read_text(encoding="utf-8") == text
        if kind in ("new", "dangling_link"):
            assert new_names == {str(real.relative_to(d))}
            assert stat.S_IMODE(os.stat(real).st_mode) == 0o666 & ~umask
    if kind not in ("new", "dangling_link"):
        assert new_names == set()  # no temporary file left, nothing created
    assert not [p for p in d.rglob(".*.tmp")]


@contextmanager
def _nothing() -> Iterator[list[bytes]]:
    yield []


def test_a_failed_write_is_an_output_error_naming_the_path() -> None:
    if not os.path.exists("/dev/full"):
        pytest.skip("no /dev/full")
    with pytest.raises(OutputError, match="'/dev/full': No space left on device"):
        write_text_atomically("/dev/full", "x" * 10_000)
