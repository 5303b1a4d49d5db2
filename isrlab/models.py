"""Every model the ``isrlab`` command knows, by name.

Each family registers itself through one ``register(registry)`` call below; the checker's
toy models come from ``checker``, the Kafka models from ``spec``.  Installed packages add
their own through the entry-point group ``isrlab.models``: each entry point names either a
``register(registry)`` function or a ``ModelEntry``, e.g. in the package's pyproject.toml::

    [project.entry-points."isrlab.models"]
    mymodels = "mypackage.models:register"

A plugin that fails to load (or registers a name already taken) is reported as one
``isrlab: warning: ...`` line on stderr and skipped; the other models stay usable.
"""

from __future__ import annotations

import sys
from functools import cache
from importlib.metadata import entry_points

import isrlab.spec.kafka.registration
import isrlab.spec.tla
from isrlab.checker import toys
from isrlab.checker.registry import ModelEntry, Registry

ENTRY_POINT_GROUP = "isrlab.models"


@cache
def registry() -> Registry:
    """The registry of every model, built once per process."""
    reg = Registry()
    # Each model family adds one line here: ``family.register(reg)``.
    toys.register(reg)
    isrlab.spec.tla.register(reg)
    isrlab.spec.kafka.registration.register(reg)
    for problem in register_plugins(reg):
        print(f"isrlab: warning: {problem}", file=sys.stderr)
    return reg


def register_plugins(reg: Registry) -> list[str]:
    """Register the models of every installed ``isrlab.models`` entry point, in name order;
    the one-line problems of those that could not be."""
    problems = []
    for point in sorted(entry_points(group=ENTRY_POINT_GROUP), key=lambda p: p.name):
        try:
            loaded = point.load()
            if isinstance(loaded, ModelEntry):
                reg.register(loaded)
            elif callable(loaded):
                loaded(reg)
            else:
                raise TypeError(f"{type(loaded).__name__} is neither a ModelEntry nor a "
                                "register(registry) function")
        except Exception as error:
            problems.append(f"model plugin {point.name!r} ({point.value}) skipped: "
                            f"{type(error).__name__}: {error}")
    return problems
