"""The namespace: the top-level folders are ``isrlab.core``, ``isrlab.spec``, ... everywhere.

A wheel installs core/, spec/, checker/, spark_explore/ and proofs/ under ``isrlab``
(setup.py's package-dir mapping); a source checkout reaches them through the links
isrlab/core -> core/, ...  ``.ci/wheel_check.py`` checks the installed wheel itself.
"""

from __future__ import annotations

import ast
import os
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
FOLDERS = ("core", "spec", "checker", "spark_explore", "proofs")
SOURCES = (*FOLDERS, "isrlab", "tests", "bench")


def test_each_folder_is_linked_into_the_isrlab_package() -> None:
    for folder in FOLDERS:
        link = ROOT / "isrlab" / folder
        assert link.is_symlink(), link
        assert os.readlink(link) == f"..{os.sep}{folder}"


def test_isrlab_core_is_this_checkouts_core() -> None:
    # A second worktree sharing a virtualenv whose editable install is another checkout
    # must still import its own folders: isrlab.core is found beside isrlab itself.
    import isrlab.core
    import isrlab.spec

    here = Path(isrlab.__file__).resolve().parent.parent
    assert Path(isrlab.core.__file__).resolve() == here / "core" / "__init__.py"
    assert Path(isrlab.spec.__file__).resolve() == here / "spec" / "__init__.py"


def _top_level_imports(path: Path) -> set[str]:
    """The first component of every absolute import in ``path``."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found.update(alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            found.add(node.module.split(".")[0])
    return found


def test_no_module_imports_a_folder_by_its_top_level_name() -> None:
    # From a checkout `import core` would work (the root is on sys.path); installed, there
    # is no top-level core: every import of our code goes through isrlab.
    offenders = []
    for source in SOURCES:
        for path in sorted((ROOT / source).rglob("*.py")):
            if path.relative_to(ROOT).parts[:2] in {("isrlab", f) for f in FOLDERS}:
                continue  # the same files again, through the links
            bad = _top_level_imports(path) & set(FOLDERS)
            if bad:
                offenders.append(f"{path.relative_to(ROOT)}: {sorted(bad)}")
    assert offenders == []


def test_an_editable_build_drops_setuptools_note_about_the_package_folder_only() -> None:
    # pip (>= 25, local directory) prints a build backend's warnings even with --quiet: the
    # first ./run demo showed setuptools' 10-line "Editable installation ... folders ... with
    # the same name as your package" note, which this layout means (setup.py).  Measured in
    # a fresh venv (pip install --quiet --no-deps -e .): 10 lines on stderr before, none
    # after.  Here: setup.py's filter, as pip's in-process hook runs it, drops that note and
    # lets any other setuptools note through.
    import subprocess
    import sys

    code = (
        "import runpy, sys, warnings\n"
        "sys.argv = ['setup.py', '--name']\n"
        "with warnings.catch_warnings(record=True) as seen:\n"
        "    runpy.run_path('setup.py')\n"
        "    from setuptools.warnings import InformationOnly\n"
        "    InformationOnly.emit('Editable installation.', 'Please be careful with folders')\n"
        "    InformationOnly.emit('Another note.', 'still shown')\n"
        "print([str(w.message).splitlines()[0] for w in seen])\n")
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True,
                          text=True, timeout=120, check=True)
    assert done.stdout.splitlines()[-1] == "['Another note.']", done.stdout + done.stderr
