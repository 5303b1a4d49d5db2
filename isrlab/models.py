"""Every model the ``isrlab`` command knows, by name.

Each family registers itself through one ``register(registry)`` call below; the checker's
toy models come from ``checker``, the Kafka models from ``spec``.
"""

from __future__ import annotations

from functools import cache

import spec.kafka
import spec.tla
from checker import toys
from checker.registry import Registry


@cache
def registry() -> Registry:
    """The registry of every model, built once per process."""
    reg = Registry()
    # Each model family adds one line here: ``family.register(reg)``.
    toys.register(reg)
    spec.tla.register(reg)
    spec.kafka.register(reg)
    return reg
