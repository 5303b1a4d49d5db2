"""CI: isrlab as a user gets it, from its wheel in a fresh virtualenv.

    python .ci/wheel_check.py [--keep DIR]

Builds the wheel (pip, build isolation), installs it in a new virtualenv with nothing but
its runtime dependencies (pip resolves them from pyproject.toml), then checks, outside the
repository (so nothing of the checkout is importable):

* the isrlab distribution puts nothing at the top of site-packages but ``isrlab`` and its
  dist-info (and the ``isrlab`` console script in bin/); no ``core``, ``spec``, ``checker``,
  ``spark_explore`` or ``proofs`` package there;
* every module of the installed package imports with the runtime dependencies alone (the
  pytest plugin excepted: pytest loads it, so pytest is there when it is imported);
* ``isrlab check`` of configuration A of the public spec's Kip320 module finds TLC's 5,973
  distinct states, docs/api.md's ``my_checks.py:KIP320_HW`` checks a user's own invariant
  from a file, and ``isrlab demo`` finds the 10-state KIP-101 counterexample (README);
* the ``kafka`` model's modules run as compiled by mypyc (setup.py), and check a small space
  of ZooKeeper mode; its default, KRaft, exits 1 with ReplicationQuorumSuperset violated in
  8 states (docs/findings/kraft-equal-epoch-delta.md).

Prints each step; exits 1 at the first failed check (naming it), 0 when all hold.  Needs
network access to PyPI (or pip's cache) for the build backend and the dependencies.
"""

from __future__ import annotations

import argparse
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
FOLDERS = ("core", "spec", "checker", "spark_explore", "proofs")

IMPORT_EVERY_MODULE = """
import importlib, pkgutil, sys
import isrlab
failed = []
for info in pkgutil.walk_packages(isrlab.__path__, "isrlab."):
    if info.name == "isrlab.pytest_plugin" or info.name.endswith(".__main__"):
        continue
    try:
        importlib.import_module(info.name)
    except Exception as error:
        failed.append(f"{info.name}: {type(error).__name__}: {error}")
print("\\n".join(failed) or "every module imported")
sys.exit(1 if failed else 0)
"""

TOP_LEVEL = """
import json, sys
from importlib.metadata import distribution
files = distribution("isrlab").files or []
tops = sorted({f.parts[0] for f in files if f.parts[0] != ".."})
scripts = sorted(str(f) for f in files if f.parts[0] == "..")
print(json.dumps({"tops": tops, "scripts": scripts, "site": sys.path}))
"""

KAFKA_COMPILED = """
import importlib
from isrlab.spec import _compiled
print(_compiled.use_compiled() and all(
    _compiled.running_compiled(importlib.import_module(name)) for name in _compiled.COMPILED))
"""


class CheckFailed(Exception):
    """One check of the installed wheel failed (its message says which)."""


def run(argv: list[str], cwd: Path, expect: int = 0) -> str:
    """Run ``argv`` in ``cwd``; its output, or CheckFailed when its status is not ``expect``."""
    print("$ " + " ".join(argv), flush=True)
    done = subprocess.run(argv, cwd=cwd, capture_output=True, text=True)
    if done.returncode != expect:
        raise CheckFailed(f"{' '.join(argv)} exited {done.returncode}, expected {expect}:\n"
                          f"{done.stdout[-3000:]}{done.stderr[-3000:]}")
    return done.stdout


def build_wheel(work: Path) -> Path:
    """The wheel pip builds from the checkout (into ``work/dist``)."""
    dist = work / "dist"
    run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--disable-pip-version-check",
         "-q", "-w", str(dist), str(ROOT)], cwd=work)
    wheels = sorted(dist.glob("isrlab-*.whl"))
    if len(wheels) != 1:
        raise CheckFailed(f"expected one isrlab wheel in {dist}, found {wheels}")
    return wheels[0]


def fresh_venv(work: Path, wheel: Path) -> Path:
    """A new virtualenv with the wheel and its runtime dependencies; its bin directory."""
    venv = work / "venv"
    base = getattr(sys, "_base_executable", sys.executable)
    run([base, "-m", "venv", str(venv)], cwd=work)
    bin_dir = venv / "bin"
    run([str(bin_dir / "python"), "-m", "pip", "install", "--disable-pip-version-check", "-q",
         str(wheel)], cwd=work)
    return bin_dir


def check_top_level(bin_dir: Path, work: Path) -> None:
    """Only ``isrlab`` (and its dist-info, its console script) at the top of site-packages."""
    import json

    info = json.loads(run([str(bin_dir / "python"), "-c", TOP_LEVEL], cwd=work))
    tops = set(info["tops"])
    allowed = {"isrlab"} | {t for t in tops if re.fullmatch(r"isrlab-[^/]+\.dist-info", t)}
    if tops - allowed or "isrlab" not in tops:
        raise CheckFailed(f"the isrlab distribution installs at the top: {sorted(tops)}")
    if info["scripts"] != ["../../../bin/isrlab"]:
        raise CheckFailed(f"unexpected files outside site-packages: {info['scripts']}")
    site = next(Path(p) for p in info["site"] if p.endswith("site-packages"))
    listing = sorted(p.name for p in site.iterdir())
    print(f"site-packages top level ({len(listing)} entries): {' '.join(listing)}")
    clashes = [name for name in FOLDERS if (site / name).exists()]
    if clashes:
        raise CheckFailed(f"top-level packages in site-packages: {clashes}")
    print(f"isrlab's distribution at the top of site-packages: {sorted(tops)}")


def check_commands(bin_dir: Path, work: Path) -> None:
    """Every module imports; check, a user's file and demo answer as the docs say."""
    print(run([str(bin_dir / "python"), "-c", IMPORT_EVERY_MODULE], cwd=work).strip())
    isrlab = str(bin_dir / "isrlab")
    out = run([isrlab, "check", "--model", "tla-kip320", "-p", "replicas=2", "-p", "log_size=2",
               "-p", "max_records=2", "-p", "max_leader_epoch=2", "--no-progress"], cwd=work)
    if "5,973 distinct" not in out:
        raise CheckFailed(f"isrlab check: no '5,973 distinct' in:\n{out}")
    print(out.strip().splitlines()[0])
    api_doc = (ROOT / "docs" / "api.md").read_text(encoding="utf-8")
    user_file = re.search(r"<!-- file: my_checks.py -->\n```python\n(.*?)```", api_doc,
                          re.DOTALL)
    if user_file is None:
        raise CheckFailed("docs/api.md has no my_checks.py block")
    (work / "my_checks.py").write_text(user_file.group(1), encoding="utf-8")
    out = run([isrlab, "check", "--model", "my_checks.py:KIP320_HW", "--no-progress"], cwd=work)
    if "5,973 distinct" not in out:
        raise CheckFailed(f"isrlab check of my_checks.py: no '5,973 distinct' in:\n{out}")
    print(out.strip().splitlines()[0])
    out = run([isrlab, "demo"], cwd=work)
    if "VIOLATION of NoCommittedRecordLost (trace of 10 states)" not in out:
        raise CheckFailed(f"isrlab demo: no 10-state counterexample in:\n{out[-3000:]}")
    print("isrlab demo: the 10-state KIP-101 counterexample")
    compiled = run([str(bin_dir / "python"), "-c", KAFKA_COMPILED], cwd=work).strip()
    if compiled != "True":
        raise CheckFailed(f"the kafka model does not run compiled from the wheel: {compiled}")
    out = run([isrlab, "check", "--model", "kafka", "-p", "controller=zookeeper", "-p",
               "max_records=1", "-p", "max_leader_epoch=1", "--no-progress"], cwd=work)
    if "OK: every invariant holds" not in out:
        raise CheckFailed(f"isrlab check --model kafka: not OK:\n{out}")
    print("the kafka model runs compiled: " + out.strip().splitlines()[0])
    out = run([isrlab, "check", "--model", "kafka", "--no-progress"], cwd=work, expect=1)
    if "VIOLATION of ReplicationQuorumSuperset (trace of 8 states)" not in out:
        raise CheckFailed(f"isrlab check --model kafka (KRaft defaults): not the 8-state "
                          f"ReplicationQuorumSuperset violation:\n{out[-3000:]}")
    print("the kafka model's KRaft defaults: " + out.strip().splitlines()[0])


def main() -> int:
    """Build, install, check; 0 when every check holds."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--keep", type=Path, help="work in DIR and keep it (default: a "
                        "temporary directory, removed afterwards)")
    args = parser.parse_args()
    work = args.keep or Path(tempfile.mkdtemp(prefix="isrlab-wheel-"))
    work.mkdir(parents=True, exist_ok=True)
    try:
        wheel = build_wheel(work)
        print(f"built {wheel.name}")
        bin_dir = fresh_venv(work, wheel)
        check_top_level(bin_dir, work)
        check_commands(bin_dir, work)
    except CheckFailed as failure:
        print(f"wheel check FAILED: {failure}", file=sys.stderr)
        return 1
    finally:
        if args.keep is None:
            shutil.rmtree(work, ignore_errors=True)
    print("wheel check: OK")
    return 0


if __name__ == "__main__":
    sys.exit(main())
