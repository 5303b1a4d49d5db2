"""isrlab's package layout: the repository's top-level folders installed under ``isrlab``.

The folders core/, spec/, checker/, spark_explore/ and proofs/ stay at the top of the
repository; a wheel installs them as ``isrlab.core``, ``isrlab.spec``, ``isrlab.checker``,
``isrlab.spark_explore`` and ``isrlab.proofs`` (a package-dir mapping), so ``isrlab`` is the
only package an installation puts at the top of site-packages.  Everything else (name,
version, dependencies, entry points) is in pyproject.toml.

In a source checkout, isrlab/core, isrlab/spec, ... are symbolic links to those folders, so
that ``python -m isrlab``, pytest, mypy and editors started at the repository's root see
the same ``isrlab.*`` modules as an installation.  The mapping below does not rely on the
links: the wheel is built from the folders themselves.
"""

from setuptools import find_packages, setup

FOLDERS = ("core", "spec", "checker", "spark_explore", "proofs")
"""The top-level folders installed as subpackages of ``isrlab``."""

packages = find_packages(include=["isrlab", "isrlab.*"],
                         exclude=[f"isrlab.{f}" for f in FOLDERS]
                         + [f"isrlab.{f}.*" for f in FOLDERS])
for folder in FOLDERS:
    packages += [f"isrlab.{name}" for name in find_packages(include=[folder, f"{folder}.*"])]

setup(
    packages=sorted(packages),
    package_dir={"isrlab": "isrlab", **{f"isrlab.{f}": f for f in FOLDERS}},
)
