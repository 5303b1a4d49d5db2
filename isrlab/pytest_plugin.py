"""isrlab's pytest plugin (entry point ``pytest11``: pytest loads it wherever isrlab is
installed): check a model from a test and fail the test with the counterexample's readable
trace.

* the marker ``@pytest.mark.isrlab(MODEL, params={...}, expect_violation=None,
  fail_on_incomplete=False, **options)`` checks ``MODEL`` (a model spec as ``--model`` takes
  it, or a ``ModelEntry``/``Model`` object) before the test body runs; ``options`` are
  ``isrlab.api.check``'s (``max_depth``, ``max_states``, ``workers``, ``symmetry``,
  ``deadlock``, ``keep_going``).  The test fails with the summary and the trace when an
  invariant is violated (or, with ``expect_violation="Name"``, when that invariant is *not*
  the one violated), and with ``fail_on_incomplete`` when a bound cut the search short;
* the fixture ``isrlab_result`` gives a marked test the ``CheckResult``;
* the fixture ``isrlab_check`` is the same check as a function:
  ``isrlab_check(MODEL, params, expect_violation=None, fail_on_incomplete=False, **options)``.

See docs/api.md.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

import pytest

if TYPE_CHECKING:
    from isrlab.checker.report import CheckResult

# isrlab itself is imported on first use: pytest loads this plugin in every run of every
# project where isrlab is installed, before coverage measurement starts.

__all__ = ["failure_text", "isrlab_check", "isrlab_result", "run_check"]

MARKER = "isrlab"
_RESULT = pytest.StashKey["CheckResult"]()
_MARKER_HELP = (
    "isrlab(model, params=None, expect_violation=None, fail_on_incomplete=False, **options): "
    "check an isrlab model before the test body; fail with the counterexample's trace"
)


def pytest_configure(config: pytest.Config) -> None:
    """Register the ``isrlab`` marker (so ``--strict-markers`` accepts it)."""
    config.addinivalue_line("markers", _MARKER_HELP)


def failure_text(result: CheckResult) -> str:
    """The summary line and every counterexample, as ``isrlab check`` prints them."""
    from isrlab.checker.trace import result_text

    return result_text(result)


def _explore(spec: Any, params: Mapping[str, Any] | None, options: Mapping[str, Any]
             ) -> CheckResult:
    from isrlab import api

    try:
        return api.check(spec, params, **options)
    except api.ModelError as error:
        pytest.fail(f"isrlab: {error}", pytrace=False)


def _judge(result: CheckResult, expect_violation: str | None,
           fail_on_incomplete: bool) -> None:
    """Fail the running test unless ``result`` is what was expected."""
    if expect_violation is None:
        if not result.ok:
            pytest.fail(failure_text(result), pytrace=False)
    elif result.violation is None or result.violation.invariant != expect_violation:
        pytest.fail(f"expected a violation of {expect_violation}, got:\n"
                    f"{failure_text(result)}", pytrace=False)
    if fail_on_incomplete and result.ok and not result.complete:
        pytest.fail(f"the search was cut short by a bound:\n{failure_text(result)}",
                    pytrace=False)


def run_check(
    spec: Any, params: Mapping[str, Any] | None = None, *,
    expect_violation: str | None = None, fail_on_incomplete: bool = False, **options: Any,
) -> CheckResult:
    """Check a model and fail the running test with the readable trace (module doc)."""
    result = _explore(spec, params, options)
    _judge(result, expect_violation, fail_on_incomplete)
    return result


def _marked(item: pytest.Item) -> pytest.Mark | None:
    return item.get_closest_marker(MARKER)


def _run_marker(mark: pytest.Mark) -> CheckResult:
    if len(mark.args) != 1:
        pytest.fail("@pytest.mark.isrlab takes one positional argument, the model",
                    pytrace=False)
    options = {k: v for k, v in mark.kwargs.items()
               if k not in ("params", "expect_violation", "fail_on_incomplete")}
    return _explore(mark.args[0], mark.kwargs.get("params"), options)


@pytest.fixture
def isrlab_check() -> Callable[..., CheckResult]:
    """``run_check``: check a model, failing the test with the trace on a violation."""
    return run_check


@pytest.fixture
def isrlab_result(request: pytest.FixtureRequest) -> CheckResult:
    """The ``CheckResult`` of the test's ``@pytest.mark.isrlab`` check."""
    mark = _marked(request.node)
    if mark is None:
        pytest.fail("the isrlab_result fixture needs @pytest.mark.isrlab(MODEL, ...)",
                    pytrace=False)
    result = _run_marker(mark)
    request.node.stash[_RESULT] = result
    return result


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_call(item: pytest.Item) -> None:
    """Before a marked test's body: run its check (unless ``isrlab_result`` did) and judge
    it, so that a violation fails the test in its call phase with the trace."""
    mark = _marked(item)
    if mark is None:
        return
    result = item.stash.get(_RESULT, None)
    if result is None:
        result = _run_marker(mark)
        item.stash[_RESULT] = result
    _judge(result, mark.kwargs.get("expect_violation"),
           bool(mark.kwargs.get("fail_on_incomplete", False)))
