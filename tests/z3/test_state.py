"""The KState mapping reads the explicit models' TLA+ variables view, and only well-formed ones."""

from __future__ import annotations

import pytest

from isrlab.spec.symbolic.state import NIL_EPOCH, NONE_REPLICA, ViewError, describe, from_variables
from tests.z3.conftest import build_pair


def test_the_initial_view_maps_to_empty_logs_nil_epochs_and_a_full_quorum_isr() -> None:
    model, _ = build_pair("tla-kip320", replicas=3, max_leader_epoch=3)
    state = from_variables(model.variables(next(iter(model.init_states()))), ["r1", "r2", "r3"])
    assert state.logs == ((), (), ())
    assert all(st.leader == NONE_REPLICA and st.leader_epoch == NIL_EPOCH
               for st in state.replica_state)
    assert state.quorum.isr == frozenset({0, 1, 2})
    assert state.requests == ()
    assert "quorum epoch -1 leader - isr {r1,r2,r3}" in describe(state)


def test_a_view_whose_requests_skip_an_epoch_is_rejected() -> None:
    model, _ = build_pair("tla-truncate-to-hw")
    view = dict(model.variables(next(iter(model.init_states()))))
    view["nextLeaderEpoch"] = 1  # one epoch handed out, but no request for it
    with pytest.raises(ViewError, match=r"exactly the epochs 0\.\.0"):
        from_variables(view, ["r1", "r2"])


def test_an_unknown_replica_name_is_rejected() -> None:
    model, _ = build_pair("tla-truncate-to-hw")
    view = dict(model.variables(next(iter(model.init_states()))))
    view["quorumState"] = {"leaderEpoch": -1, "leader": "r9", "isr": frozenset()}
    with pytest.raises(ViewError, match="not a replica"):
        from_variables(view, ["r1", "r2"])
