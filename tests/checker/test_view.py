"""TLC's VIEW: a model's ``view(state)`` identifies states, and the first state found for a
view (in TLC's one-worker breadth-first order) is the one expanded.  Counts by hand."""

from __future__ import annotations

import ast
from collections.abc import Mapping, Sequence
from typing import Any

import pytest

from isrlab.checker.model import Property
from tests.checker.conftest import run

State = tuple[int, int]


class Tagged:
    """States ``(x, tag)`` seen through the view ``x``; ``edges`` maps a state to its
    successors in generation order."""

    name = "tagged"

    def __init__(self, edges: Mapping[State, Sequence[tuple[str, State]]], bad: int = -1,
                 view: bool = True) -> None:
        self.edges, self.bad = edges, bad
        if not view:
            self.view = None  # type: ignore[assignment]  # the same model without its view

    def view(self, state: State) -> bytes:
        return repr(state[0]).encode()

    def init_states(self) -> list[State]:
        return [(0, 0)]

    def next_states(self, state: State) -> list[tuple[str, State]]:
        return list(self.edges.get(state, ()))

    def invariants(self) -> Sequence[Property[State]]:
        return (Property("NotBad", lambda s: s[0] != self.bad),)

    def sometimes(self) -> Sequence[Property[State]]:
        return ()

    def within_boundary(self, state: State) -> bool:
        return True

    def canonical(self, state: State) -> State:
        return state

    def encode(self, state: State) -> bytes:
        return repr(state).encode()

    def decode(self, data: bytes) -> State:
        x, tag = ast.literal_eval(data.decode())
        return (x, tag)

    def variables(self, state: State) -> Mapping[str, Any]:
        return {"x": state[0], "tag": state[1]}


# (0,0) -> Z (1,5), A (1,1): the first found, (1,5), is kept although its label is larger;
# (1,5) -> (2,0) only, while (1,1) would also reach (9,0).
SIBLINGS = {(0, 0): [("Z", (1, 5)), ("A", (1, 1))],
            (1, 5): [("Inc", (2, 0))],
            (1, 1): [("Inc", (2, 0)), ("Jump", (9, 0))]}
# (3,7) from (1,0) is found before (3,8) from (2,0): it is kept, and it has no successor.
COUSINS = {(0, 0): [("A", (1, 0)), ("B", (2, 0))],
           (1, 0): [("C", (3, 7))],
           (2, 0): [("C", (3, 8))],
           (3, 8): [("D", (4, 0))]}


@pytest.mark.parametrize("workers", [1, 2, 3])
def test_the_first_sibling_found_for_a_view_is_the_one_expanded(workers: int) -> None:
    result = run(Tagged(SIBLINGS), workers=workers)
    # x = 0, 1, 2; generated: the initial state, two siblings, one Inc.
    assert (result.distinct_states, result.generated_states, result.diameter) == (3, 4, 3)


@pytest.mark.parametrize("workers", [1, 2, 3])
def test_the_state_of_the_earlier_parent_is_kept_whichever_worker_finds_it(
        workers: int) -> None:
    result = run(Tagged(COUSINS), workers=workers)
    # x = 0, 1, 2, 3; (3,8) is never expanded, so x = 4 is never reached.
    assert (result.distinct_states, result.generated_states, result.diameter) == (4, 5, 3)


def test_without_the_view_every_state_is_distinct() -> None:
    result = run(Tagged(SIBLINGS, view=False))
    # (0,0), (1,5), (1,1), (2,0), (9,0); generated 1 + 2 + 1 + 2.
    assert (result.distinct_states, result.generated_states, result.diameter) == (5, 6, 3)


@pytest.mark.parametrize("workers", [1, 2])
def test_a_trace_under_a_view_replays_the_states_kept(workers: int) -> None:
    result = run(Tagged(SIBLINGS, bad=2), workers=workers)
    assert result.violation is not None
    steps = result.violation.trace
    assert [s.action for s in steps][1:] == ["Z", "Inc"]
    assert [s.state["tag"] for s in steps] == [0, 5, 0]


@pytest.mark.parametrize("workers", [1, 2])
def test_a_run_under_a_view_resumes_with_the_states_kept(tmp_path: Any, workers: int) -> None:
    # Stopped after level 2 (x = 1, 2), the resumed run still keeps (3,7), found from the
    # earlier parent: the discovery order survives in the run directory.
    first = run(Tagged(COUSINS), workers=workers, run_dir=str(tmp_path), max_depth=2)
    assert not first.complete
    resumed = run(Tagged(COUSINS), workers=workers, run_dir=str(tmp_path))
    assert (resumed.distinct_states, resumed.generated_states, resumed.diameter) == (4, 5, 3)


class PackedTagged:
    """``Tagged`` with states that are their own encoding (``identity_encoding``: ``bytes``
    states ``b"x,tag"``, as the tla-kraft ports' packed states are)."""

    name = "packed-tagged"
    identity_encoding = True

    def __init__(self, edges: Mapping[State, Sequence[tuple[str, State]]]) -> None:
        self.tagged = Tagged(edges)

    @staticmethod
    def pack(state: State) -> bytes:
        return f"{state[0]},{state[1]}".encode()

    @staticmethod
    def unpack(data: bytes) -> State:
        x, tag = data.split(b",")
        return (int(x), int(tag))

    def view(self, state: bytes) -> bytes:
        return state.split(b",")[0]

    def init_states(self) -> list[bytes]:
        return [self.pack(s) for s in self.tagged.init_states()]

    def next_states(self, state: bytes) -> list[tuple[str, bytes]]:
        return [(a, self.pack(t)) for a, t in self.tagged.next_states(self.unpack(state))]

    def invariants(self) -> Sequence[Property[bytes]]:
        return ()

    def sometimes(self) -> Sequence[Property[bytes]]:
        return ()

    def within_boundary(self, state: bytes) -> bool:
        return True

    def canonical(self, state: bytes) -> bytes:
        return state

    def encode(self, state: bytes) -> bytes:
        return state

    def decode(self, data: bytes) -> bytes:
        return data

    def variables(self, state: bytes) -> Mapping[str, Any]:
        return self.tagged.variables(self.unpack(state))


@pytest.mark.parametrize("workers", [1, 2, 3])
def test_states_that_are_their_own_encoding_under_a_view_on_several_workers(
        tmp_path: Any, workers: int) -> None:
    # The same counts as Tagged's: the workers' merge under a view takes a bytes state as
    # its own encoding (it kept no encodings beside such states).
    for edges, counts in ((SIBLINGS, (3, 4, 3)), (COUSINS, (4, 5, 3))):
        result = run(PackedTagged(edges), workers=workers)
        assert (result.distinct_states, result.generated_states, result.diameter) == counts
    first = run(PackedTagged(COUSINS), workers=workers, run_dir=str(tmp_path), max_depth=2)
    assert not first.complete
    resumed = run(PackedTagged(COUSINS), workers=workers, run_dir=str(tmp_path))
    assert (resumed.distinct_states, resumed.generated_states, resumed.diameter) == (4, 5, 3)
