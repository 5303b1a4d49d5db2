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

Two C extensions, ``isrlab.spec.tla._native`` (spec/tla/_native.c: the compiled successor
function of the ``tla-*`` models) and ``isrlab.checker._fpset`` (checker/_fpset.c: the
checker's set of fingerprints), are built by ``pip install`` (``./run`` uses ``pip install
-e``, which builds them in place) when a C compiler and Python's headers are there.  They
are optional: when they cannot be built the installation goes on and the pure Python runs,
with identical results (tests/spec/test_tla_native.py and tests/checker/test_fpset.py
compare the two; ``ISRLAB_PURE_PYTHON=1`` turns them off).  In a checkout,
``pip install --no-deps -e .`` (re)builds them (``python setup.py build_ext --inplace`` too,
with setuptools >= 77; a virtualenv's own setuptools may be older).
"""

from setuptools import Extension, find_packages, setup

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
    ext_modules=[
        Extension("isrlab.spec.tla._native", ["spec/tla/_native.c"], optional=True),
        Extension("isrlab.checker._fpset", ["checker/_fpset.c"], optional=True),
    ],
)
