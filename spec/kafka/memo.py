"""Memoisation of the ``kafka`` model's pure helpers (issue 19: exploration speed).

A state is a tuple of a few components (the controller, one ``BrokerPartition`` per broker,
the requests in flight, the ghost), and each component takes few values over a whole
search: ZooKeeper mode's default space with ``kafka_7152=false`` (54,928 states) holds 1,881
distinct ``BrokerPartition`` values.
So the work a step does on one or two brokers (rebuilding the ``core`` ``Partition``,
running ``become_leader_or_follower``, a fetch, an ISR shrink) repeats across states, and
``memoised`` keeps its result, keyed on the arguments the result depends on.

Rules for a memoised method: its result depends only on its positional arguments and on
the model's configuration (fixed per instance), never on anything else; the arguments are
immutable hashable values (named tuples of ints, frozen dataclasses, ints, strings); the
result is immutable (it is shared by every caller).  Keys are compared by equality (an
in-process ``dict``), never reduced to ``hash()`` alone.  Each model instance has its own
caches, in its ``_memo`` attribute (``KafkaModel`` instances differ in configuration; an
attribute declared by the class, not the instance's ``__dict__``, which the model compiled
by mypyc has not: docs/kafka-model.md); a cache is emptied when it
reaches ``CACHE_LIMIT`` entries, which bounds memory on large searches.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any, Concatenate, ParamSpec, Protocol, TypeVar, cast


class Memoising(Protocol):
    """An object whose memoised methods keep their caches in ``_memo`` (method name to cache)."""

    _memo: dict[str, dict[object, object]]


P = ParamSpec("P")
R = TypeVar("R")
M = TypeVar("M", bound=Memoising)
K = TypeVar("K")
V = TypeVar("V")

CACHE_LIMIT = 1 << 20
"""Entries of one memoised method's cache (per model instance) before it is emptied."""

_MISSING = object()


def remember(cache: dict[K, V], key: K, value: V) -> V:
    """Store ``value`` under ``key`` in ``cache``, emptying the cache first when it holds
    ``CACHE_LIMIT`` entries; return ``value``.  Every cache of the model goes through it."""
    if len(cache) >= CACHE_LIMIT:
        cache.clear()
    cache[key] = value
    return value


def memoised(method: Callable[Concatenate[M, P], R]) -> Callable[Concatenate[M, P], R]:
    """``method`` of a model, cached per instance on its positional arguments (see the
    module docstring for the rules; keyword arguments are not allowed)."""
    attribute = method.__name__

    def wrapper(self: M, /, *args: Any) -> Any:
        # no **kwargs: a call with keywords fails (TypeError), and none builds a dict
        caches = self._memo
        cache = caches.get(attribute)
        if cache is None:
            cache = caches[attribute] = {}
        result = cache.get(args, _MISSING)
        if result is _MISSING:
            result = remember(cache, args, method(self, *args))  # type: ignore[call-arg]  # P's positional arguments, as the caller passed them
        return result

    functools.update_wrapper(wrapper, method)
    return cast(Callable[Concatenate[M, P], R], wrapper)
