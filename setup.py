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

Three C extensions, ``isrlab.spec.tla._native`` (spec/tla/_native.c: the compiled successor
function of the ``tla-*`` models), ``isrlab.checker._fpset`` (checker/_fpset.c: the
checker's set of fingerprints) and ``isrlab.checker._engine`` (checker/_engine.c: the
search's levels in C on several threads, for models with a compiled successor function
behind checker/_successors.h), are built by ``pip install`` (``./run`` uses ``pip install
-e``, which builds them in place) when a C compiler and Python's headers are there.  They
are optional: when they cannot be built the installation goes on and the pure Python runs,
with identical results (tests/spec/test_tla_native.py and tests/checker/test_fpset.py
compare the two; ``ISRLAB_PURE_PYTHON=1`` turns them off).  In a checkout,
``pip install --no-deps -e .`` (re)builds them (``python setup.py build_ext --inplace`` too,
with setuptools >= 77; a virtualenv's own setuptools may be older).

mypyc compiles the ``kafka`` model's hot modules (``KAFKA_COMPILED``) and ``core``'s modules
(``CORE_COMPILED``, a group of its own) the same way: optional, built when mypy (a build
requirement in pyproject.toml) accepts them and a C compiler is there, the Python source
the reference (tests/spec/kafka/test_compiled.py compares whole searches; tests/core runs
the source).  The build records the digest of each source it compiled; at run time
``isrlab.spec._compiled`` and ``isrlab.core._compiled`` import the sources of their group
instead when its record is missing, a source has changed since, or ``ISRLAB_PURE_PYTHON=1``.
"""

import hashlib
import json
import os
import sys
import warnings

from setuptools import Extension, find_packages, setup
from setuptools.command.build_ext import build_ext
from setuptools.warnings import InformationOnly

# An editable install (``pip install -e .``, what ./run does) of a package-dir mapping like
# the one below is served by setuptools' meta path finder, which ends every such build with
# an InformationOnly note (11 lines, which pip >= 25 prints even with --quiet for a local
# directory): folders of the working directory named like the package may take precedence
# over the installation.  Here they are the package: a checkout's isrlab/ (with its links)
# is what the finder maps, and tests/test_packaging.py relies on a worktree's own isrlab/
# taking precedence.  The note says nothing a user can act on, so this build drops that one
# note and no other warning.
warnings.filterwarnings("ignore", message=r"Editable installation\.", category=InformationOnly)

FOLDERS = ("core", "spec", "checker", "spark_explore", "proofs")
"""The top-level folders installed as subpackages of ``isrlab``."""

packages = find_packages(include=["isrlab", "isrlab.*"],
                         exclude=[f"isrlab.{f}" for f in FOLDERS]
                         + [f"isrlab.{f}.*" for f in FOLDERS])
for folder in FOLDERS:
    packages += [f"isrlab.{name}" for name in find_packages(include=[folder, f"{folder}.*"])]

KAFKA_COMPILED = {
    "isrlab.spec.kafka.config": "spec/kafka/config.py",
    "isrlab.spec.kafka.partition": "spec/kafka/partition.py",
    "isrlab.spec.kafka.ghost": "spec/kafka/ghost.py",
    "isrlab.spec.kafka.replica_manager": "spec/kafka/replica_manager.py",
    "isrlab.spec.kafka.controller_channel": "spec/kafka/controller_channel.py",
    "isrlab.spec.kafka.controller": "spec/kafka/controller.py",
    "isrlab.spec.kafka.alter_partition": "spec/kafka/alter_partition.py",
    "isrlab.spec.kafka.lifecycle": "spec/kafka/lifecycle.py",
    "isrlab.spec.kafka.fetcher": "spec/kafka/fetcher.py",
    "isrlab.spec.kafka.leader": "spec/kafka/leader.py",
    "isrlab.spec.kafka.labels": "spec/kafka/labels.py",
    "isrlab.spec.kafka.model": "spec/kafka/model.py",
    "isrlab.spec.kafka.state": "spec/kafka/state.py",
    "isrlab.spec.kafka.codes": "spec/kafka/codes.py",
    "isrlab.spec.kafka.memo": "spec/kafka/memo.py",
    "isrlab.spec.kafka.kraft_state": "spec/kafka/kraft_state.py",
    "isrlab.spec.kafka.kraft_invariants": "spec/kafka/kraft_invariants.py",
    "isrlab.spec.kafka.metadata_loader": "spec/kafka/metadata_loader.py",
    "isrlab.spec.kafka.broker_lifecycle": "spec/kafka/broker_lifecycle.py",
    "isrlab.spec.kafka.quorum_controller": "spec/kafka/quorum_controller.py",
    "isrlab.spec.kafka.kraft_model": "spec/kafka/kraft_model.py",
    "isrlab.spec.invariants": "spec/invariants.py",
}
"""The ``kafka`` model's hot modules compiled by mypyc (isrlab.spec._compiled.COMPILED)."""

KAFKA_GROUP = "isrlab.spec._kafka"
"""mypyc's group: the shared extension ``isrlab.spec._kafka__mypyc``, inside the package."""

SOURCES_FILE = "_kafka_sources.json"
"""Written next to ``isrlab.spec``'s modules by a build that compiled every module of
``KAFKA_COMPILED``: module name to the SHA-256 of its source (isrlab.spec._compiled)."""

CORE_COMPILED = {
    "isrlab.core.alter_partition": "core/alter_partition.py",
    "isrlab.core.broker_heartbeat": "core/broker_heartbeat.py",
    "isrlab.core.coordinator": "core/coordinator.py",
    "isrlab.core.elr": "core/elr.py",
    "isrlab.core.errors": "core/errors.py",
    "isrlab.core.fencing": "core/fencing.py",
    "isrlab.core.invariants": "core/invariants.py",
    "isrlab.core.isr": "core/isr.py",
    "isrlab.core.kraft_alter_partition": "core/kraft_alter_partition.py",
    "isrlab.core.kraft_metadata": "core/kraft_metadata.py",
    "isrlab.core.log_recovery": "core/log_recovery.py",
    "isrlab.core.metadata_cache": "core/metadata_cache.py",
    "isrlab.core.partition": "core/partition.py",
    "isrlab.core.partition_change_builder": "core/partition_change_builder.py",
    "isrlab.core.produce": "core/produce.py",
    "isrlab.core.propagation": "core/propagation.py",
    "isrlab.core.replica_manager": "core/replica_manager.py",
    "isrlab.core.replication_control": "core/replication_control.py",
    "isrlab.core.selectors": "core/selectors.py",
    "isrlab.core.state": "core/state.py",
    "isrlab.core.truncation": "core/truncation.py",
}
"""``core``'s modules compiled by mypyc (isrlab.core._compiled.COMPILED), a group of their
own: the kafka model's group calls them as Python modules, so either group may run from its
source while the other runs compiled."""

CORE_GROUP = "isrlab.core._core"
"""mypyc's group of ``CORE_COMPILED``: the shared extension ``isrlab.core._core__mypyc``."""

CORE_SOURCES_FILE = "_core_sources.json"
"""Written next to ``isrlab.core``'s modules by a build that compiled every module of
``CORE_COMPILED`` (isrlab.core._compiled)."""

GROUPS = ((KAFKA_GROUP, KAFKA_COMPILED, SOURCES_FILE),
          (CORE_GROUP, CORE_COMPILED, CORE_SOURCES_FILE))
"""Each mypyc group: its name, its modules and the record of their sources."""


def _warn(group: str, message: str) -> None:
    print(f"isrlab setup: {message}; {group}'s modules run as pure Python", file=sys.stderr)


COMPILED_FROM: dict[str, dict[str, str]] = {}
"""Per group, the SHA-256 of each source that mypyc compiled, once it has."""


def mypyc_extensions(group: str, modules: dict[str, str]) -> list[Extension]:
    """mypyc's extensions of one group of ``GROUPS`` (optional, like the C extensions), or
    none when mypyc is missing or refuses the code; fills ``COMPILED_FROM[group]``."""
    try:
        from mypyc.build import mypycify
    except ImportError:
        _warn(group, "mypyc is not installed")
        return []
    digests = {name: _sha256(path) for name, path in modules.items()}
    # through the links isrlab/spec -> spec/ (and core), so that the modules get their
    # isrlab.* names
    paths = [os.path.join("isrlab", path) for path in modules.values()]
    try:
        extensions = mypycify(paths, opt_level="3", group_name=group)
    except (Exception, SystemExit) as error:  # mypy's type errors end in SystemExit
        _warn(group, f"mypyc failed ({error})")
        return []
    for extension in extensions:
        extension.optional = True
    COMPILED_FROM[group] = digests
    return extensions


class BuildExt(build_ext):
    """``build_ext`` that adds the compiled ``kafka`` model and ``core`` (mypyc runs only when
    extensions are built, not for pip's metadata steps) and records the sources of a group
    when every one of its extensions was built (and removes the record otherwise: the
    sources then run)."""

    def finalize_options(self) -> None:
        if not COMPILED_FROM:
            self.distribution.ext_modules = [*(self.distribution.ext_modules or []),
                                             *(e for group, modules, _ in GROUPS
                                               for e in mypyc_extensions(group, modules))]
        super().finalize_options()

    def run(self) -> None:
        self._built: set[str] = set()
        records = {group: os.path.join(
            os.path.dirname(self.get_ext_fullpath(f"{group.rpartition('.')[0]}.x")),
            record) for group, _, record in GROUPS}
        for record in records.values():
            if os.path.exists(record):
                os.remove(record)
        super().run()
        for group, modules, _ in GROUPS:
            if group in COMPILED_FROM and set(modules) | {f"{group}__mypyc"} <= self._built:
                with open(records[group], "w") as out:
                    json.dump(COMPILED_FROM[group], out, indent=1, sort_keys=True)

    def build_extension(self, ext: Extension) -> None:
        super().build_extension(ext)
        self._built.add(ext.name)  # not reached when an optional extension fails


def _sha256(path: str) -> str:
    with open(path, "rb") as source:
        return hashlib.sha256(source.read()).hexdigest()


setup(
    packages=sorted(packages),
    package_dir={"isrlab": "isrlab", **{f"isrlab.{f}": f for f in FOLDERS}},
    ext_modules=[
        Extension("isrlab.spec.tla._native", ["spec/tla/_native.c"], optional=True,
                  depends=["checker/_successors.h"]),
        Extension("isrlab.checker._fpset", ["checker/_fpset.c"], optional=True,
                  depends=["checker/_xxh3.h"]),
        Extension("isrlab.checker._engine", ["checker/_engine.c"], optional=True,
                  depends=["checker/_successors.h", "checker/_xxh3.h"],
                  extra_compile_args=["-pthread"],
                  extra_link_args=["-pthread"]),
    ],  # and the kafka model's, added by BuildExt
    cmdclass={"build_ext": BuildExt},
)
