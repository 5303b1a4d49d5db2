"""Scheduling of the whole suite on parallel workers (``./run test`` runs pytest-xdist with
``--dist loadgroup``; see README.md, "Tests").

Two rules, both about where a test runs, never about what it checks:

* tests that share an expensive per-process result go to one worker, so that it is computed
  once: every Spark test (one JVM and one ``local[2]`` session, the ``spark_session``
  fixture), and the tests listed in ``SHARED_RESULTS`` (they reuse one ``functools.cache``d
  search of their module; a test's other parametrisations and modules run anywhere);
* the long tests are collected first, so that the workers start on them and the short tests
  fill in behind (the last test to finish is a short one): those of ``LONGEST`` in its order,
  then the other ``heavy`` and ``slow`` ones.  (xdist hands out its groups before single tests.)

Without xdist (a plain ``pytest`` run) the marks are inert and only the order changes.
"""

from __future__ import annotations

import pytest

# Per module, the test functions that reuse one cached search (see the ``@cache`` in each):
# the bug runs of the scenarios (each story test replays one), and the expected result of the
# resumed runs.  Each module's listed tests form one group.
SHARED_RESULTS = {
    "tests/spec/test_kafka_scenarios.py": (
        "test_the_buggy_version_breaks_the_scenarios_invariant",
        "test_kip101_scenario_1_is_the_ten_state_story",
        "test_jepsen_loss_is_the_seven_state_story",
        "test_acks1_loss_is_the_five_state_story",
        "test_kafka7128_is_the_eleven_state_story",
    ),
    "tests/checker/test_resume.py": ("test_a_killed_run_resumes_to_the_same_result",),
}


# The longest single tests of `./run test --durations` (seconds on an idle 2-core machine before
# xdist), longest first.  Only an order: a renamed test falls back to its marks.
LONGEST = (
    "tests/z3/test_tla_bmc.py::test_kip279_strong_isr_needs_11_states_in_configuration_b",  # 166
    "tests/z3/test_tla_bmc.py::test_kip101_strong_isr_needs_11_states_in_configuration_b",  # 145
    "tests/spec/test_kafka_scenarios.py::"
    "test_the_fixing_version_finds_nothing_in_the_same_bounds[kafka7128]",  # 50
    "tests/z3/test_tla_bmc.py::test_kip101_breaks_an_isr_invariant_in_12_states_in_configuration_a",
)


def _rank(item: pytest.Item) -> tuple[int, int]:
    """The sort key: ``LONGEST`` in its order, then heavy, slow and the rest (a stable sort keeps
    the collection order within each)."""
    if item.nodeid in LONGEST:
        return (0, LONGEST.index(item.nodeid))
    if item.get_closest_marker("heavy"):
        return (1, 0)
    return (2, 0) if item.get_closest_marker("slow") else (3, 0)


@pytest.hookimpl(tryfirst=True)  # before xdist's own hook reads the xdist_group marks
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Group the tests that share a cached result and put the long ones first."""
    for item in items:
        if item.get_closest_marker("spark"):
            item.add_marker(pytest.mark.xdist_group("spark"))
            continue
        module = item.nodeid.split("::", 1)[0]
        if getattr(item, "originalname", item.name) in SHARED_RESULTS.get(module, ()):
            item.add_marker(pytest.mark.xdist_group(module))
    items.sort(key=_rank)
