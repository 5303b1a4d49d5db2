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
result is immutable (it is shared by every caller).  Keys are in-process ``dict`` keys,
never reduced to ``hash()`` alone: a tuple argument by the address of the object equal to
it that the model's ``Interner`` keeps (equal values are one object there, kept alive), any
other argument itself; the methods the compiled model calls most use an ``IdCache`` of
their own instead of the wrapper.  Each model instance has its own
caches, in its ``_memo`` attribute (``KafkaModel`` instances differ in configuration; an
attribute declared by the class, not the instance's ``__dict__``, which the model compiled
by mypyc has not: docs/kafka-model.md); a cache is emptied when it
reaches ``CACHE_LIMIT`` entries, which bounds memory on large searches.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any, Concatenate, Final, ParamSpec, Protocol, TypeVar, cast

P = ParamSpec("P")
R = TypeVar("R")
M = TypeVar("M", bound="Memoising")
K = TypeVar("K")
V = TypeVar("V")

CACHE_LIMIT = 1 << 20
"""Entries of one memoised method's cache (per model instance) before it is emptied."""

INTERN_LIMIT = 1 << 21
"""Objects an ``Interner`` holds before the model empties it (and the caches keyed on it)."""

_MISSING: Final = object()

FRONT_SLOTS: Final = 512
"""The slots of a front (``Interner.front``, ``IdCache.front``): what was met last, by
address (direct-mapped), asked before the large dict behind it, whose look-ups are mostly
cache misses."""
_FRONT_MASK: Final = FRONT_SLOTS - 1


class Interner:
    """Equal components made identical: ``canon`` returns, for any hashable value, the one
    object of its class equal to it that the table keeps (the first met), so that the
    caches keyed on ``key_of`` find an equal component by its address alone.

    The table keeps its objects alive, so the address of an object it holds names that
    object only, for as long as the table holds it; every cache keyed on addresses is
    registered (``register``) and emptied with the table (``clear``), which ``limit_reached``
    asks for once the table holds ``INTERN_LIMIT`` objects.  One table per model instance."""

    def __init__(self) -> None:
        self.by_id: dict[int, object] = {}
        """The address of each object the table holds, to it."""
        self.by_value: dict[type, dict[object, object]] = {}
        """Per class (equal tuples of two classes are not interchangeable): each value to
        the object kept for it."""
        self.caches: list[dict[Any, Any]] = []
        """The caches keyed on addresses of objects held here, emptied with the table."""
        self.fronts: list[list[Any]] = []
        """The fronts of the caches (``IdCache.front``), emptied with the table."""
        self.front: list[object] = [None] * FRONT_SLOTS
        """Objects the table holds, met last, by address (direct-mapped): ``canon`` finds
        them here without a look-up in ``by_id``, a large table."""
        self.fronts.append(self.front)

    def canon(self, value: V) -> V:
        """The object the table keeps for ``value`` (``value`` itself the first time)."""
        slot = id(value) >> 4 & _FRONT_MASK
        front = self.front
        if front[slot] is value:
            return value
        if self.by_id.get(id(value)) is value:
            front[slot] = value
            return value
        cls = type(value)
        table = self.by_value.get(cls)
        if table is None:
            table = self.by_value[cls] = {}
        found = table.get(value, _MISSING)
        if found is _MISSING:
            table[value] = value
            self.by_id[id(value)] = value
            return value
        return cast(V, found)

    def key_of(self, value: object) -> object:
        """``value``'s key in a cache keyed on addresses: a tuple's by the address of its
        object in the table, any other value (an int, a string, ``None``, a frozen
        dataclass) itself.  Within one argument position of one method the values are of
        one kind (the methods are typed), so an address never meets an int argument."""
        if isinstance(value, tuple):
            return id(self.canon(value))
        return value

    def canon_result(self, value: V) -> V:
        """A memoised method's result with the components it holds made the table's
        objects: a tuple of a named class (a component) itself, a plain tuple's items that
        are tuples (a component and its ``Partition``, say), anything else as it is; so
        that a step built from cached results holds the table's objects already.  A plain
        tuple the table holds (a method returning the requests in flight makes its result
        the table's) is kept as it is."""
        if not isinstance(value, tuple):
            return value
        if type(value) is not tuple or self.by_id.get(id(value)) is value:
            return self.canon(value)
        items = [self.canon(item) if isinstance(item, tuple) else item for item in value]
        return cast(V, tuple(items))

    def register(self, cache: dict[Any, Any]) -> None:
        """Empty ``cache`` whenever the table is emptied (it is keyed on addresses)."""
        self.caches.append(cache)

    def limit_reached(self) -> bool:
        """Whether the table holds ``INTERN_LIMIT`` objects (the model then calls
        ``clear`` between two steps, never inside one)."""
        return len(self.by_id) >= INTERN_LIMIT

    def clear(self) -> None:
        """Empty the table and every registered cache."""
        self.by_id.clear()
        self.by_value.clear()
        for cache in self.caches:
            cache.clear()
        for front in self.fronts:
            for i in range(len(front)):
                front[i] = None


MISSING: Final[object] = _MISSING
"""What ``IdCache.find`` answers when it has nothing."""

SMALL_BITS: Final = 20
"""The bits of ``IdCache``'s small-int argument (``0 <= small < 2 ** SMALL_BITS``)."""


class IdCache:
    """The cache of one memoised method of a component and a small int (``broker_partition
    (br, b)``), called natively by the compiled model: keyed on the component's address
    (its interner object's) and the int, each entry keeping the component alive (so that
    its address names it while the entry lives); the method's result made the interner's
    (``Interner.canon_result``).  Cheaper than ``memoised``'s wrapper, which the compiled
    model reaches through a Python attribute, a bound method and a tuple of arguments."""

    def __init__(self, interner: Interner) -> None:
        self.interner = interner
        self.entries: dict[int, tuple[object, object]] = {}
        interner.register(self.entries)
        self.front: list[tuple[object, int, object] | None] = [None] * FRONT_SLOTS
        """The entries found last, by ``_slot`` (each holding its argument alive, so that
        its address names it), so that a hit is mostly answered without the dict, whose
        look-ups in a large table are cache misses."""
        interner.fronts.append(self.front)

    def find(self, arg: object, small: int) -> object:
        """The result kept for ``arg`` (or an equal component) and ``small``, ``MISSING``
        when there is none."""
        slot = (id(arg) >> 4 ^ small * 40503) & _FRONT_MASK
        front = self.front
        seen = front[slot]
        if seen is not None and seen[0] is arg and seen[1] == small:
            return seen[2]
        entries = self.entries
        entry = entries.get(id(arg) << SMALL_BITS | small)
        if entry is not None and entry[0] is arg:
            front[slot] = (arg, small, entry[1])
            return entry[1]
        canonical = self.interner.canon(arg)
        if canonical is not arg:
            entry = entries.get(id(canonical) << SMALL_BITS | small)
            if entry is not None and entry[0] is canonical:
                return entry[1]
        return _MISSING

    def keep(self, arg: object, small: int, value: V) -> V:
        """Keep ``value`` (made the interner's) as the result for ``arg`` and ``small``;
        return it.  Emptied at ``CACHE_LIMIT`` entries, as ``remember``."""
        interner = self.interner
        canonical = interner.canon(arg)
        value = interner.canon_result(value)
        remember(self.entries, id(canonical) << SMALL_BITS | small, (canonical, value))
        if canonical is arg:
            self.front[(id(arg) >> 4 ^ small * 40503) & _FRONT_MASK] = (arg, small, value)
        return value


class IdCache2:
    """``IdCache`` for a method of two components and a small int (``_ghost_after_leader_step
    (br, b, ghost)``): keyed on both addresses and the int, each entry keeping both alive."""

    def __init__(self, interner: Interner) -> None:
        self.interner = interner
        self.entries: dict[int, tuple[object, object, object]] = {}
        interner.register(self.entries)
        self.front: list[tuple[object, object, int, object] | None] = [None] * FRONT_SLOTS
        """As ``IdCache.front``."""
        interner.fronts.append(self.front)

    def find(self, first: object, second: object, small: int) -> object:
        """The result kept for ``first``, ``second`` (or equal components) and ``small``,
        ``MISSING`` when there is none."""
        slot = (id(first) >> 4 ^ id(second) >> 7 ^ small * 40503) & _FRONT_MASK
        front = self.front
        seen = front[slot]
        if seen is not None and seen[0] is first and seen[1] is second and seen[2] == small:
            return seen[3]
        entries = self.entries
        entry = entries.get((id(first) << 64 | id(second)) << SMALL_BITS | small)
        if entry is not None and entry[0] is first and entry[1] is second:
            front[slot] = (first, second, small, entry[2])
            return entry[2]
        canon = self.interner.canon
        one, two = canon(first), canon(second)
        if one is not first or two is not second:
            entry = entries.get((id(one) << 64 | id(two)) << SMALL_BITS | small)
            if entry is not None and entry[0] is one and entry[1] is two:
                return entry[2]
        return _MISSING

    def keep(self, first: object, second: object, small: int, value: V) -> V:
        """Keep ``value`` (made the interner's) as the result for ``first``, ``second`` and
        ``small``; return it.  Emptied at ``CACHE_LIMIT`` entries, as ``remember``."""
        interner = self.interner
        one, two = interner.canon(first), interner.canon(second)
        value = interner.canon_result(value)
        remember(self.entries, (id(one) << 64 | id(two)) << SMALL_BITS | small, (one, two, value))
        if one is first and two is second:
            slot = (id(first) >> 4 ^ id(second) >> 7 ^ small * 40503) & _FRONT_MASK
            self.front[slot] = (first, second, small, value)
        return value


class IdCache3:
    """``IdCache`` for a method of three components and a small int (``_leader_and_isr(m,
    br, leader_log, ...)``): keyed on the three addresses and the int, each entry keeping
    the three alive."""

    def __init__(self, interner: Interner) -> None:
        self.interner = interner
        self.entries: dict[int, tuple[object, object, object, object]] = {}
        interner.register(self.entries)
        self.front: list[tuple[object, object, object, int, object] | None] = (
            [None] * FRONT_SLOTS)
        """As ``IdCache.front``."""
        interner.fronts.append(self.front)

    def find(self, first: object, second: object, third: object, small: int) -> object:
        """The result kept for ``first``, ``second``, ``third`` (or equal components) and
        ``small``, ``MISSING`` when there is none."""
        slot = (id(first) >> 4 ^ id(second) >> 7 ^ id(third) >> 10 ^ small * 40503) & _FRONT_MASK
        front = self.front
        seen = front[slot]
        if (seen is not None and seen[0] is first and seen[1] is second and seen[2] is third
                and seen[3] == small):
            return seen[4]
        canon = self.interner.canon
        one, two, three = canon(first), canon(second), canon(third)
        entry = self.entries.get(((id(one) << 64 | id(two)) << 64 | id(three)) << SMALL_BITS
                                 | small)
        if entry is not None and entry[0] is one and entry[1] is two and entry[2] is three:
            if one is first and two is second and three is third:
                front[slot] = (first, second, third, small, entry[3])
            return entry[3]
        return _MISSING

    def keep(self, first: object, second: object, third: object, small: int, value: V) -> V:
        """Keep ``value`` (made the interner's) as the result for ``first``, ``second``,
        ``third`` and ``small``; return it.  Emptied at ``CACHE_LIMIT`` entries, as
        ``remember``."""
        interner = self.interner
        one, two, three = interner.canon(first), interner.canon(second), interner.canon(third)
        value = interner.canon_result(value)
        remember(self.entries, ((id(one) << 64 | id(two)) << 64 | id(three)) << SMALL_BITS
                 | small, (one, two, three, value))
        if one is first and two is second and three is third:
            slot = (id(first) >> 4 ^ id(second) >> 7 ^ id(third) >> 10 ^ small * 40503
                    ) & _FRONT_MASK
            self.front[slot] = (first, second, third, small, value)
        return value


class Memoising(Protocol):
    """An object whose memoised methods keep their caches in ``_memo`` (method name to
    cache), keyed on the addresses of ``_interner``'s objects."""

    _memo: dict[str, dict[object, object]]
    _interner: Interner


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
        interner = self._interner
        key: object
        if len(args) == 1:
            key = interner.key_of(args[0])
        elif len(args) == 2:
            key = (interner.key_of(args[0]), interner.key_of(args[1]))
        else:
            key = tuple([interner.key_of(a) for a in args])
        result = cache.get(key, _MISSING)
        if result is _MISSING:
            result = remember(cache, key, interner.canon_result(method(self, *args)))  # type: ignore[call-arg]  # P's positional arguments, as the caller passed them
        return result

    functools.update_wrapper(wrapper, method)
    return cast(Callable[Concatenate[M, P], R], wrapper)
