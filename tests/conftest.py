"""Scheduling of the whole suite on parallel workers (``./run test`` runs pytest-xdist with
``--dist loadgroup``; see README.md, "Tests").

Two rules, both about where and when a test runs, never about what it checks:

* tests that share an expensive per-process result go to one worker, so that it is computed
  once: every Spark test (``tests/spark/``: one JVM and one ``local[2]`` session, the
  ``spark_context`` fixture, and one standalone cluster per module), and the tests listed in
  ``SHARED_RESULTS`` (they reuse one ``functools.cache``d search of their module);
* the long tests are collected first, so that the workers start on them and the short tests
  fill in behind (the last test to finish is a short one): those of ``LONGEST`` in that order
  (the Spark group among them), then the other ``heavy`` and ``slow`` ones (``./run test``
  passes ``--no-loadscope-reorder``, so xdist hands out the work in this order; a group's
  place is that of its first test).

The groups are computed from test ids by ``GroupScheduling``, not with ``xdist_group`` marks:
pytest 9.2 builds node ids in a way that xdist 3.8's mark handling no longer changes, so the
marks were silently ignored.  Without xdist (a plain ``pytest`` run) only the order changes.
"""

from __future__ import annotations

from typing import Any

import pytest

SPARK_TESTS = "tests/spark/"

# Per module, the test functions that reuse one cached search (see the ``@cache`` in each):
# the bug runs of the scenarios (each story test replays one), the expected result of the
# resumed runs, and the pure-Python reports the compiled kafka model is compared with (a
# module fixture: one child process).  Each module's listed tests form one group; its other
# tests run anywhere.
SHARED_RESULTS = {
    "tests/spec/kafka/test_scenarios.py": (
        "test_the_buggy_version_breaks_the_scenarios_invariant",
        "test_kip101_scenario_1_is_the_ten_state_story",
        "test_jepsen_loss_is_the_seven_state_story",
        "test_acks1_loss_is_the_five_state_story",
        "test_kafka7128_is_the_eleven_state_story",
    ),
    "tests/checker/test_resume.py": ("test_a_killed_run_resumes_to_the_same_result",),
    "tests/spec/kafka/test_compiled.py": (
        "test_the_compiled_model_reports_what_the_source_reports",),
}

# The longest work units of `./run test --durations` (seconds with Yices on an idle 2-core
# machine, alone), longest first; SPARK_TESTS stands for the Spark group (all of tests/spark,
# about 110 s alone since the engine exchanges files).  The group comes after the two
# 11-state BMC runs: handed out first, its JVM ran beside them and slowed them threefold, and
# handed out with the other slow tests, it started late and ran on alone at the end
# (docs/testing.md).  Only an order: a renamed test falls back to its marks.
LONGEST = (
    "tests/z3/test_tla_bmc.py::test_kip101_strong_isr_needs_11_states_in_configuration_b",  # 73
    "tests/z3/test_tla_bmc.py::test_kip279_strong_isr_needs_11_states_in_configuration_b",  # 51
    SPARK_TESTS,
    "tests/spec/kafka/test_controller_channel.py::"
    "test_scenario_7s_skipped_epoch_loss_is_gone_with_a_lagging_metadata_cache",  # 28-42
    "tests/z3/test_tla_bmc.py::test_kip101_breaks_an_isr_invariant_in_12_states_in_configuration_a",
)


def group_of(nodeid: str) -> str:
    """The xdist work unit of a test: its group's name, or the test's own id."""
    if nodeid.startswith(SPARK_TESTS):
        return "spark"
    module, _, rest = nodeid.partition("::")
    function = rest.split("[", 1)[0]
    return module if function in SHARED_RESULTS.get(module, ()) else nodeid


def _rank(item: pytest.Item) -> tuple[int, int]:
    """The sort key: ``LONGEST`` in its order (the Spark group at ``SPARK_TESTS``'s place), then
    heavy, slow and the rest (a stable sort keeps the collection order within each)."""
    if item.nodeid.startswith(SPARK_TESTS):  # the whole group, in its collection order
        return (0, LONGEST.index(SPARK_TESTS))
    if item.nodeid in LONGEST:
        return (0, LONGEST.index(item.nodeid))
    if item.get_closest_marker("heavy"):
        return (1, 0)
    return (2, 0) if item.get_closest_marker("slow") else (3, 0)


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Put the long tests first (every xdist worker sorts its identical collection alike)."""
    items.sort(key=_rank)


@pytest.hookimpl(optionalhook=True)  # a pytest-xdist hook: absent without the plugin
def pytest_xdist_make_scheduler(config: pytest.Config, log: Any) -> Any:
    """For ``--dist loadgroup``: xdist's group scheduling with the groups of ``group_of``."""
    if config.getvalue("dist") != "loadgroup":
        return None
    from xdist.scheduler import LoadGroupScheduling

    class GroupScheduling(LoadGroupScheduling):  # type: ignore[misc]  # xdist ships no types
        """Work units by ``group_of`` (an ``@name`` suffix, if xdist added one, still wins)."""

        def _split_scope(self, nodeid: str) -> str:
            if nodeid.rfind("@") > nodeid.rfind("]"):
                return str(super()._split_scope(nodeid))
            return group_of(nodeid)

    return GroupScheduling(config, log)
