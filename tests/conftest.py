"""Scheduling of the whole suite on parallel workers (``./run test`` runs pytest-xdist with
``--dist loadgroup``; docs/testing.md), keyed on markers (registered in pyproject.toml).

Two rules, both about where and when a test runs, never about what it checks:

* tests that share an expensive per-process result run on one worker, so that it is computed
  once: every test marked ``spark`` (one JVM and one ``local[2]`` session, the
  ``spark_context`` fixture, and one standalone cluster per module) and the tests marked
  ``same_worker(name)`` with the same name (they reuse one ``functools.cache``d search);
* the long tests are collected first, so that the workers start on them and the short tests
  fill in behind (the last test to finish is a short one): those marked ``start_first(place)``
  in the order of their places (the Spark group at ``SPARK_PLACE``), then the other ``heavy``
  and ``slow`` ones (``./run test`` passes ``--no-loadscope-reorder``, so xdist hands out the
  work in this order; a group's place is that of its first test).

xdist's scheduler runs in the controller process, which collects no test and so sees no
marker: each worker writes the groups of its collection (node id -> group) to a file in a
directory the controller names in its ``workerinput``, and the scheduler reads them when it
splits the work.  (xdist's own ``xdist_group`` marks are not used: pytest 9.2 builds node ids
in a way that xdist 3.8's handling of them no longer changes, so they were silently ignored.)
Without xdist (a plain ``pytest`` run) only the order changes.
"""

from __future__ import annotations

import json
import shutil
import tempfile
from pathlib import Path
from typing import Any

import pytest

SPARK_GROUP = "spark"
SPARK_PLACE = 3
"""The Spark group's place among the ``start_first`` tests: after the two 11-state BMC runs
(places 1 and 2).  Handed out first, its JVM ran beside them and slowed them threefold;
handed out with the other slow tests, it started late and ran on alone at the end
(docs/testing.md)."""

_GROUP_DIR = pytest.StashKey[Path]()
_WORKERINPUT_KEY = "isrlab_group_dir"


def group_of(item: pytest.Item) -> str | None:
    """The name of the group a test runs in, if it has one."""
    if item.get_closest_marker("spark") is not None:
        return SPARK_GROUP
    mark = item.get_closest_marker("same_worker")
    return None if mark is None else str(mark.args[0])


def _rank(item: pytest.Item) -> tuple[int, int]:
    """The sort key: ``start_first`` tests by place (the Spark group at ``SPARK_PLACE``), then
    heavy, slow and the rest (a stable sort keeps the collection order within each)."""
    if group_of(item) == SPARK_GROUP:
        return (0, SPARK_PLACE)
    first = item.get_closest_marker("start_first")
    if first is not None:
        return (0, int(first.args[0]))
    if item.get_closest_marker("heavy"):
        return (1, 0)
    return (2, 0) if item.get_closest_marker("slow") else (3, 0)


def pytest_configure(config: pytest.Config) -> None:
    """In the controller of a ``--dist loadgroup`` run: the directory of the groups files."""
    if not hasattr(config, "workerinput") and config.getoption("dist", "no") == "loadgroup":
        config.stash[_GROUP_DIR] = Path(tempfile.mkdtemp(prefix="isrlab-test-groups-"))


def pytest_unconfigure(config: pytest.Config) -> None:
    """Remove the groups files."""
    where = config.stash.get(_GROUP_DIR, None)
    if where is not None:
        shutil.rmtree(where, ignore_errors=True)


@pytest.hookimpl(optionalhook=True)  # a pytest-xdist hook: absent without the plugin
def pytest_configure_node(node: Any) -> None:
    """Tell each worker where to write the groups of its collection."""
    where = node.config.stash.get(_GROUP_DIR, None)
    if where is not None:
        node.workerinput[_WORKERINPUT_KEY] = str(where)


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Put the long tests first (every xdist worker sorts its identical collection alike);
    on a worker, write the groups for the controller's scheduler."""
    items.sort(key=_rank)
    workerinput = getattr(config, "workerinput", None)
    if workerinput is None or _WORKERINPUT_KEY not in workerinput:
        return
    groups = {item.nodeid: group for item in items if (group := group_of(item)) is not None}
    target = Path(workerinput[_WORKERINPUT_KEY]) / f"{workerinput['workerid']}.json"
    partial = target.with_suffix(".partial")
    partial.write_text(json.dumps(groups), encoding="utf-8")
    partial.replace(target)  # whole or absent: the controller reads it after collection


def read_groups(where: Path) -> dict[str, str]:
    """The groups every worker wrote (node id -> group name)."""
    groups: dict[str, str] = {}
    for path in sorted(where.glob("*.json")):
        groups.update(json.loads(path.read_text(encoding="utf-8")))
    return groups


@pytest.hookimpl(optionalhook=True)  # a pytest-xdist hook: absent without the plugin
def pytest_xdist_make_scheduler(config: pytest.Config, log: Any) -> Any:
    """For ``--dist loadgroup``: xdist's group scheduling with the groups of ``group_of``."""
    if config.getvalue("dist") != "loadgroup":
        return None
    from xdist.scheduler import LoadGroupScheduling

    where = config.stash[_GROUP_DIR]

    class GroupScheduling(LoadGroupScheduling):  # type: ignore[misc]  # xdist ships no types
        """Work units by ``group_of`` (an ``@name`` suffix, if xdist added one, still wins);
        a test of no group is a work unit of its own."""

        groups: dict[str, str] | None = None

        def _split_scope(self, nodeid: str) -> str:
            if nodeid.rfind("@") > nodeid.rfind("]"):
                return str(super()._split_scope(nodeid))
            if self.groups is None:  # every worker has collected when the work is split
                self.groups = read_groups(where)
            group = self.groups.get(nodeid)
            return nodeid if group is None else f"group:{group}"

    return GroupScheduling(config, log)
