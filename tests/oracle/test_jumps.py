"""The log oracle against the ``kafka`` model on small bounds (2 brokers, 2 records, leader
epochs 0..1, ZooKeeper mode's default parameters: clean elections, clean crashes, KIP-279
truncation).

* Every abstract jump (``isrlab.spec.oracle.cluster``) from every reachable state is reached
  by a sequence of the model's own ``Produce``/``Fetch`` steps, and every ``Produce`` and
  ``Fetch`` step of the model is a jump (the two forms agree both ways).
* Only ``Produce`` and ``Fetch`` raise a log end offset (so the jumps are every unlogged
  growth), and a log shrinks only by a truncation of a follower (a logged step).
* Every rule of ``isrlab.spec.oracle.rules`` that speaks of one state holds in every
  reachable state, and every rule that speaks of a step holds on every step: the oracle
  rejects nothing the model allows.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from functools import cache
from typing import Any

import pytest

from isrlab import api
from isrlab.spec.oracle.cluster import Replica, catch_up, is_prefix, produce, replica_of

Vars = Mapping[str, Any]
BROKERS, RECORDS = 2, 2


@cache
def space() -> tuple[Any, dict[Any, list[tuple[str, Any]]]]:
    """The model and every reachable state with its successors (breadth-first)."""
    model = api.model("kafka", controller="zookeeper", brokers=BROKERS, max_records=RECORDS,
                      max_leader_epoch=1)
    graph: dict[Any, list[tuple[str, Any]]] = {}
    frontier = list(model.init_states())
    while frontier:
        nxt: list[Any] = []
        for state in frontier:
            if state in graph:
                continue
            graph[state] = list(model.next_states(state))
            nxt.extend(t for _, t in graph[state] if t not in graph)
        frontier = nxt
    return model, graph


def variables(state: Any) -> Vars:
    model, _ = space()
    return model.variables(state)  # type: ignore[no-any-return]  # the model's mapping


def leader_of(v: Vars) -> int | None:
    """The broker that leads in its own view, alive."""
    for b in range(BROKERS):
        mine = v[f"broker{b}"]
        if mine["alive"] and mine["leader"] == b:
            return b
    return None


def steps() -> Iterator[tuple[Vars, str, Vars]]:
    _, graph = space()
    for state, successors in graph.items():
        before = variables(state)
        for label, succ in successors:
            yield before, label, variables(succ)


def reach(state: Any, allowed: tuple[str, ...], depth: int) -> set[Any]:
    """Every state reached from ``state`` by at most ``depth`` steps of the labels given."""
    _, graph = space()
    seen = {state}
    frontier = [state]
    for _ in range(depth):
        frontier = [t for s in frontier for label, t in graph.get(s, ())
                    if label in allowed and t not in seen]
        seen.update(frontier)
    return seen


def test_the_space_is_small_and_has_every_step_kind() -> None:
    _, graph = space()
    kinds = {label.split("(")[0] for succ in graph.values() for label, _ in succ}
    assert {"Produce", "Fetch", "Truncate", "ShrinkIsr", "ElectLeader", "Crash"} <= kinds
    assert 1_000 < len(graph) < 100_000


def test_every_produce_jump_is_a_sequence_of_produce_steps() -> None:
    _, graph = space()
    checked = 0
    for state in graph:
        v = variables(state)
        lead = leader_of(v)
        if lead is None:
            continue
        epoch = v[f"broker{lead}"]["leader_epoch"]
        mine = replica_of(v, lead)
        reached = {replica_of(variables(t), lead)
                   for t in reach(state, (f"Produce({lead})",), RECORDS)}
        room = RECORDS - v["produced"]
        for n in range(room + 1):
            assert produce(mine, epoch, n) in reached, (v, n)
            checked += 1
        # and nothing else: every state Produce steps reach is a jump's
        assert reached <= {produce(mine, epoch, n) for n in range(room + 1)}
    assert checked > 100


def test_every_catch_up_jump_is_a_sequence_of_the_models_steps() -> None:
    _, graph = space()
    checked = 0
    for state in graph:
        v = variables(state)
        lead = leader_of(v)
        if lead is None:
            continue
        epoch = v[f"broker{lead}"]["leader_epoch"]
        for f in range(BROKERS):
            mine = v[f"broker{f}"]
            if f == lead or not mine["alive"] or mine["leader"] != lead or \
                    mine["leader_epoch"] != epoch:
                continue
            follower, leader = replica_of(v, f), replica_of(v, lead)
            if not is_prefix(follower, leader):
                continue
            # the fetcher's epoch handshake first (a truncation of nothing: the follower's
            # log is a prefix of the leader's)
            labels = (f"Produce({lead})", f"Fetch({f})", f"Truncate({f})")
            reached = {(replica_of(variables(t), f), replica_of(variables(t), lead))
                       for t in reach(state, labels, RECORDS + 2)}
            room = RECORDS - v["produced"]
            for n in range(room + 1):
                for j in range(n + 1):
                    assert catch_up(follower, leader, epoch, j, n) in reached, (v, j, n)
                    checked += 1
    assert checked > 50


def test_every_produce_and_fetch_step_of_the_model_is_a_jump() -> None:
    for before, label, after in steps():
        kind = label.split("(")[0]
        if kind not in ("Produce", "Fetch"):
            continue
        b = int(label[label.index("(") + 1:label.index(")")])
        lead = leader_of(before)
        if kind == "Produce":
            assert lead == b
            epoch = before[f"broker{b}"]["leader_epoch"]
            assert replica_of(after, b) == produce(replica_of(before, b), epoch, 1)
            continue
        mine = before[f"broker{b}"]
        source = mine["leader"]
        if source is None or source < 0 or source == b:
            continue
        follower, leader = replica_of(before, b), replica_of(before, source)
        got = replica_of(after, b)
        if is_prefix(follower, leader) and got.leo >= follower.leo:
            epoch = before[f"broker{source}"]["leader_epoch"]
            jumped, _ = catch_up(follower, leader, epoch, 0, 0)
            assert got in (follower, jumped), (label, before, after)


def test_only_produce_and_fetch_raise_a_log_end_offset() -> None:
    for before, label, after in steps():
        kind = label.split("(")[0]
        for b in range(BROKERS):
            old, new = before[f"broker{b}"]["log"], after[f"broker{b}"]["log"]
            if len(new) > len(old):
                assert kind in ("Produce", "Fetch"), label
            if len(new) < len(old):
                # log-shrinks-by-truncation, leader-no-truncate: a follower's truncation
                # (the fetcher's; the model's make_follower truncates at once, a shortcut)
                becomes_follower = kind == "Deliver" and after[f"broker{b}"]["leader"] != b
                assert kind in ("Truncate", "Fetch") or becomes_follower, label
                assert before[f"broker{b}"]["leader"] != b, label


# ---------------------------------------------------------------------------- the rules
def state_rules(v: Vars) -> Iterator[str]:
    """The rules a state breaks (none, for a reachable state)."""
    zk = v["zk"]
    if not set(zk["isr"]) <= set(zk["replicas"]):
        yield "isr-subset-replicas"
    for b in range(BROKERS):
        mine = v[f"broker{b}"]
        if not mine["alive"]:
            continue
        if mine["hw"] > len(mine["log"]):
            yield "hw-le-leo"
        if mine["leader"] != b:
            continue
        if not set(mine["isr"]) <= set(zk["replicas"]):
            yield "isr-subset-replicas"
        for r, leo in mine["remote_leo"].items():
            if leo < 0:
                continue  # unknown: "endOffset: unknown" in a shrink line
            if r in mine["isr"] and mine["hw"] > leo:
                yield "hw-le-isr-leo"
            if leo > len(mine["log"]):
                yield "fetch-le-leader-leo"
    claims: dict[int, set[int]] = {}
    for b in range(BROKERS):
        mine = v[f"broker{b}"]
        if mine["alive"] and mine["leader"] >= 0:
            claims.setdefault(mine["leader_epoch"], set()).add(mine["leader"])
    if zk["leader"] >= 0:
        claims.setdefault(zk["leader_epoch"], set()).add(zk["leader"])
    if any(len(leaders) > 1 for leaders in claims.values()):
        yield "one-leader-per-epoch"


def step_rules(before: Vars, label: str, after: Vars) -> Iterator[str]:
    """The rules a step breaks (none, for a step of the model)."""
    committed = max(before[f"broker{b}"]["hw"] for b in range(BROKERS))
    for b in range(BROKERS):
        old, new = before[f"broker{b}"], after[f"broker{b}"]
        if not (old["alive"] and new["alive"]):
            continue
        if old["leader"] == b and new["leader"] == b and \
                old["leader_epoch"] == new["leader_epoch"] and new["hw"] < old["hw"]:
            yield "hw-monotonic"
        if new["leader_epoch"] < old["leader_epoch"]:
            yield "epoch-monotonic"
        if new["leader"] == b and old["leader"] != b and new["leader_epoch"] <= old["leader_epoch"]:
            yield "new-epoch-higher"
        if len(new["log"]) < len(old["log"]) and len(new["log"]) < old["hw"]:
            yield "leader-no-truncate-below-hw"
        if new["leader"] == b and new["leader_epoch"] > old["leader_epoch"] and \
                len(new["log"]) < committed:
            yield "elected-has-committed"
        lead = old["leader"]
        if lead is not None and 0 <= lead != b and len(new["log"]) < len(old["log"]):
            theirs = before[f"broker{lead}"]
            if theirs["alive"] and theirs["leader"] == lead and b in theirs["isr"] and \
                    theirs["leader_epoch"] == old["leader_epoch"] and \
                    len(new["log"]) < theirs["hw"]:
                yield "isr-member-no-truncate-below-hw"


def test_every_state_rule_holds_in_every_reachable_state() -> None:
    _, graph = space()
    broken = {rule: v for state in graph
              for v in [variables(state)] for rule in state_rules(v)}
    assert not broken, broken


def test_every_step_rule_holds_on_every_step() -> None:
    broken = {rule: (label, before, after) for before, label, after in steps()
              for rule in step_rules(before, label, after)}
    assert not broken, broken


@pytest.mark.parametrize("params", [{"truncation": "hw"}, {"unclean_election": True}])
def test_the_rules_the_oracle_drops_for_older_versions_or_faults_are_broken_there(
        params: dict[str, Any]) -> None:
    """Under truncation to the HW (Kafka 0.10) or unclean elections the model breaks the
    truncation and election rules the oracle then does not apply: the check above can
    fail."""
    model = api.model("kafka", controller="zookeeper", brokers=BROKERS, max_records=RECORDS,
                      max_leader_epoch=1, **params)
    seen = set()
    frontier = list(model.init_states())
    broken: set[str] = set()
    while frontier and not broken & {"leader-no-truncate-below-hw", "elected-has-committed",
                                     "isr-member-no-truncate-below-hw"}:
        nxt = []
        for state in frontier:
            if state in seen:
                continue
            seen.add(state)
            before = model.variables(state)
            for label, succ in model.next_states(state):
                broken.update(step_rules(before, label, model.variables(succ)))
                nxt.append(succ)
        frontier = nxt
    assert broken & {"leader-no-truncate-below-hw", "elected-has-committed",
                     "isr-member-no-truncate-below-hw"}, broken


def test_a_replica_view_reads_the_epoch_cache_off_the_records() -> None:
    v: dict[str, Any] = {"broker0": {"log": ("m0@0", "m1@0", "m2@2")}}
    assert replica_of(v, 0) == Replica(((0, 0), (2, 2)), 3)
    assert produce(replica_of(v, 0), 3, 2) == Replica(((0, 0), (2, 2), (3, 3)), 5)
