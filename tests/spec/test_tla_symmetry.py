"""Properties of the tla-* byte layout: round trips, and symmetry under renaming replicas.

States are drawn as arbitrary type-correct values of the specification's variables (not
necessarily reachable): the layout and the symmetry must be right on all of them.
"""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from isrlab.core.truncation import Record
from isrlab.spec.tla import VERSIONS, TlaModel
from isrlab.spec.tla.layout import ReplicaView, StateView

MODELS = {
    (name, n): TlaModel(VERSIONS[name], n, 2, 2, 3, ("WeakIsr", "StrongIsr"))
    for name in VERSIONS for n in (1, 2, 3)
}
E, L, R = 3, 2, 2


@st.composite
def views(draw: st.DrawFn, n: int) -> StateView:
    """A type-correct state of ``n`` replicas (LogSize 2, MaxRecords 2, MaxLeaderEpoch 3)."""
    replica_ids = st.integers(0, n - 1)
    leaders = st.one_of(st.none(), replica_ids)
    sets = st.frozensets(replica_ids)
    records = st.builds(Record, st.integers(0, R - 1), st.integers(0, E))

    def replica() -> ReplicaView:
        return ReplicaView(
            draw(st.integers(0, L)), draw(st.integers(-1, E)), draw(leaders), draw(sets),
            tuple(draw(st.lists(records, max_size=L))),
        )

    requests = draw(st.lists(st.tuples(leaders, sets), max_size=E + 1))
    return StateView(
        tuple(replica() for _ in range(n)), draw(st.integers(0, R)), len(requests),
        tuple(requests), draw(sets),
    )


def rename(view: StateView, perm: tuple[int, ...]) -> StateView:
    """The view with replica ``i`` renamed ``perm[i]`` (computed on the readable form)."""

    def who(i: int | None) -> int | None:
        return None if i is None else perm[i]

    def group(isr: frozenset[int]) -> frozenset[int]:
        return frozenset(perm[i] for i in isr)

    moved = [view.replicas[0]] * len(perm)
    for i, r in enumerate(view.replicas):
        moved[perm[i]] = ReplicaView(r.hw, r.leader_epoch, who(r.leader), group(r.isr), r.log)
    return StateView(
        tuple(moved), view.next_record_id, view.next_leader_epoch,
        tuple((who(leader), group(isr)) for leader, isr in view.requests),
        group(view.quorum_isr),
    )


@st.composite
def cases(draw: st.DrawFn) -> tuple[TlaModel, StateView, int]:
    name = draw(st.sampled_from(sorted(VERSIONS)))
    n = draw(st.integers(1, 3))
    model = MODELS[(name, n)]
    return model, draw(views(n)), draw(st.integers(0, len(model.layout.permutations) - 1))


@given(cases())
def test_pack_and_unpack_are_inverse(case: tuple[TlaModel, StateView, int]) -> None:
    model, view, _ = case
    s = model.layout.pack(view)
    assert model.layout.unpack(s) == view
    assert model.decode(model.encode(s)) == s
    assert model.type_ok(s)


@given(cases())
def test_byte_renaming_agrees_with_renaming_the_variables(
    case: tuple[TlaModel, StateView, int],
) -> None:
    model, view, p = case
    perm = model.layout.permutations[p]
    assert model.layout.permute(model.layout.pack(view), p) == model.layout.pack(
        rename(view, perm)
    )


@given(cases())
def test_canonical_form_is_the_same_for_every_renaming(
    case: tuple[TlaModel, StateView, int],
) -> None:
    model, view, p = case
    s = model.layout.pack(view)
    renamed = model.layout.permute(s, p)
    assert model.canonical(renamed) == model.canonical(s)
    orbit = {model.layout.permute(s, q) for q in range(len(model.layout.permutations))}
    assert model.canonical(s) == min(orbit)


@settings(max_examples=200)
@given(cases())
def test_successors_and_invariants_commute_with_renaming(
    case: tuple[TlaModel, StateView, int],
) -> None:
    model, view, p = case
    s = model.layout.pack(view)
    renamed = model.layout.permute(s, p)

    def canonical_successors(state: bytes) -> list[bytes]:
        return sorted(model.canonical(t) for _, t in model.next_states(state))

    assert canonical_successors(renamed) == canonical_successors(s)
    for prop in model.invariants():
        assert prop.holds(renamed) == prop.holds(s)
