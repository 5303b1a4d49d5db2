"""Z3 encoding of ``make_leader``'s remote-replica reset and the ``StaleLeo`` transition system
(docs/findings/stale-leo-failover.md).

Encoded function (differentially tested against ``isrlab.core.partition.make_leader`` in
``tests/z3/test_leader_state_reset_encoding.py``):

* ``remote_leo_after_make_leader`` -- the LEO ``make_leader`` leaves a remote replica with:
  unknown (-1) when it resets (a new leader, or with ``reset_on_epoch`` a new leader epoch),
  else the LEO the leader had recorded.

System ``StaleLeo`` (``n`` replicas; broker ``0`` is the leader whose tenure it follows,
brokers ``1..n-1`` its followers; offsets and epochs unbounded Ints):

* variables: the leader's epoch ``le`` and LEO ``leo0``, its HW ``hw``, the newest epoch
  the controller wrote ``ce``; per follower ``i`` its LEO ``leo<i>``, its epoch ``fe<i>``,
  the LEO the leader recorded for it ``r<i>`` (-1: unknown) and the leader epoch of that
  record ``re<i>``, and its ISR bit ``isr<i>`` (the ISR of the leader's last LeaderAndIsr);
  a ghost ``stale``: once the HW rose counting an LEO recorded in an earlier epoch;
* ``Append`` -- the leader appends;
* ``Fetch[i]`` -- a follower in the leader's epoch fetches (KIP-320: the leader takes a
  fetch of its own epoch only): the leader records the fetch offset, the follower's LEO,
  in its epoch, and the follower copies any part of the leader's log past it;
* ``RaiseHw`` -- ``maybeIncrementLeaderHW``: the minimum of the leader's LEO and the ISR's
  recorded LEOs, if larger;
* ``Elect`` -- the controller writes a new leader epoch (who leads it is not tracked);
* ``FollowerEpoch[i]`` -- a follower learns a newer written epoch and may truncate (it
  follows whoever leads that epoch: any truncation, an over-approximation);
* ``LeaderEpoch`` -- ``makeLeader`` on broker 0 for a newer written epoch while it still
  leads (``isNewLeader`` false, any number of epochs skipped), with the controller's ISR:
  the recorded LEOs are kept (Kafka, ``reset_on_epoch=False``) or reset (the fix).

Target ``NoEarlierEpochLeoCounted``: ``not stale``.  With the fix it is inductive together
with ``RecordedThisEpoch`` (a known record is of the leader's epoch), ``RecordedWhileFollowing``
(a record's epoch is at most the follower's), ``HeldInRecordedEpoch`` (a follower still in
the epoch of its record holds what the leader recorded) and ``HwNonNegative``;
``CountedLeoHeld`` is the consequence the loss breaks: an ISR follower in the leader's epoch
holds every offset the leader counts for it.  Without the fix the BMC finds Kafka's trace:
a fetch, an election the leader never hears of, ``makeLeader`` for the epoch after it, HW.

Shortcuts: broker 0's tenure only (a broker that stops leading loses its remote state, and
``makeLeader`` after following resets it in both versions: ``isNewLeader``); logs are their
lengths; ``makeLeader``'s own ``maybeIncrementLeaderHW`` is the next ``RaiseHw`` step.
"""

from __future__ import annotations

import z3

from isrlab.spec.symbolic.core_mechanisms import (
    Action,
    Bool,
    Int,
    State,
    System,
    _bool,
    _int,
    _same,
    raised_hw,
)

TARGET = "NoEarlierEpochLeoCounted"


def remote_leo_after_make_leader(recorded: Int, is_new_leader: Bool, epoch_changed: Bool,
                                 reset_on_epoch: bool) -> Int:
    """``make_leader``'s remote LEO: -1 when it resets (``_reset_remote``), else ``recorded``."""
    reset = z3.Or(is_new_leader, z3.And(z3.BoolVal(reset_on_epoch), epoch_changed))
    return z3.If(reset, z3.IntVal(-1), recorded)


def _variables(n: int) -> tuple[tuple[str, str], ...]:
    out = [("le", "int"), ("ce", "int"), ("leo0", "int"), ("hw", "int"), ("stale", "bool")]
    for i in range(1, n):
        out += [(f"leo{i}", "int"), (f"fe{i}", "int"), (f"r{i}", "int"), (f"re{i}", "int"),
                (f"isr{i}", "bool")]
    return tuple(out)


def _keep(n: int, *changed: str) -> tuple[str, ...]:
    return tuple(v for v, _ in _variables(n) if v not in changed)


def stale_leo_system(n: int, reset_on_epoch: bool) -> System:
    """``StaleLeo`` for ``n`` replicas; ``reset_on_epoch``: the fix, else Kafka's reset."""
    followers = range(1, n)

    def f(s: State, name: str) -> tuple[Int, ...]:
        return tuple(_int(s, f"{name}{i}") for i in followers)

    def isr(s: State) -> tuple[Bool, ...]:
        return (z3.BoolVal(True), *[_bool(s, f"isr{i}") for i in followers])

    def init(s: State) -> Bool:
        return z3.And(_int(s, "le") == 0, _int(s, "ce") == 0, _int(s, "hw") == 0,
                      _int(s, "leo0") >= 0, z3.Not(_bool(s, "stale")),
                      *[z3.And(_int(s, f"leo{i}") >= 0, _int(s, f"leo{i}") <= _int(s, "leo0"),
                               _int(s, f"fe{i}") == 0, _int(s, f"r{i}") == -1,
                               _int(s, f"re{i}") == 0) for i in followers])

    def append(s: State, t: State) -> Bool:
        return z3.And(_int(t, "leo0") == _int(s, "leo0") + 1, _same(s, t, _keep(n, "leo0")))

    def fetch(i: int) -> Action:
        def act(s: State, t: State) -> Bool:
            leo, new = _int(s, f"leo{i}"), _int(t, f"leo{i}")
            return z3.And(_int(s, f"fe{i}") == _int(s, "le"),
                          _int(t, f"r{i}") == leo, _int(t, f"re{i}") == _int(s, "le"),
                          new >= leo, new <= _int(s, "leo0"),
                          _same(s, t, _keep(n, f"leo{i}", f"r{i}", f"re{i}")))
        return act

    def raise_hw(s: State, t: State) -> Bool:
        leos = (_int(s, "leo0"), *f(s, "r"))
        new = raised_hw(_int(s, "hw"), leos, isr(s))
        earlier = z3.Or(False, *[z3.And(_bool(s, f"isr{i}"), _int(s, f"re{i}") < _int(s, "le"))
                                 for i in followers])
        return z3.And(_int(t, "hw") == new,
                      _bool(t, "stale") == z3.Or(_bool(s, "stale"),
                                                 z3.And(new > _int(s, "hw"), earlier)),
                      _same(s, t, _keep(n, "hw", "stale")))

    def elect(s: State, t: State) -> Bool:
        return z3.And(_int(t, "ce") == _int(s, "ce") + 1, _same(s, t, _keep(n, "ce")))

    def follower_epoch(i: int) -> Action:
        def act(s: State, t: State) -> Bool:
            fe = _int(t, f"fe{i}")
            leo = _int(t, f"leo{i}")
            return z3.And(fe > _int(s, f"fe{i}"), fe <= _int(s, "ce"),
                          leo >= 0, leo <= _int(s, f"leo{i}"),
                          _same(s, t, _keep(n, f"fe{i}", f"leo{i}")))
        return act

    def leader_epoch(s: State, t: State) -> Bool:
        le = _int(t, "le")
        changed = le != _int(s, "le")
        remotes = [_int(t, f"r{i}") == remote_leo_after_make_leader(
            _int(s, f"r{i}"), z3.BoolVal(False), changed, reset_on_epoch) for i in followers]
        kept = ["le", *[f"r{i}" for i in followers], *[f"isr{i}" for i in followers]]
        return z3.And(le > _int(s, "le"), le <= _int(s, "ce"), *remotes,
                      _same(s, t, _keep(n, *kept)))

    def recorded_this_epoch(s: State) -> Bool:
        return z3.And(True, *[z3.Implies(_int(s, f"r{i}") >= 0, _int(s, f"re{i}") == _int(s, "le"))
                              for i in followers])

    def recorded_while_following(s: State) -> Bool:
        return z3.And(True, *[z3.Implies(_int(s, f"r{i}") >= 0,
                                         _int(s, f"re{i}") <= _int(s, f"fe{i}"))
                              for i in followers])

    def held_in_recorded_epoch(s: State) -> Bool:
        return z3.And(True, *[z3.Implies(z3.And(_int(s, f"r{i}") >= 0,
                                                _int(s, f"fe{i}") == _int(s, f"re{i}")),
                                         _int(s, f"r{i}") <= _int(s, f"leo{i}"))
                              for i in followers])

    def counted_leo_held(s: State) -> Bool:
        return z3.And(True, *[z3.Implies(z3.And(_bool(s, f"isr{i}"), _int(s, f"r{i}") >= 0,
                                                _int(s, f"fe{i}") == _int(s, "le")),
                                         _int(s, f"r{i}") <= _int(s, f"leo{i}"))
                              for i in followers])

    def hw_non_negative(s: State) -> Bool:
        return _int(s, "hw") >= 0

    def no_earlier_epoch_leo_counted(s: State) -> Bool:
        return z3.Not(_bool(s, "stale"))

    actions: list[tuple[str, Action]] = [("Append", append)]
    actions += [(f"Fetch[{i}]", fetch(i)) for i in followers]
    actions += [("RaiseHw", raise_hw), ("Elect", elect)]
    actions += [(f"FollowerEpoch[{i}]", follower_epoch(i)) for i in followers]
    actions += [("LeaderEpoch", leader_epoch)]
    invariants = (
        (TARGET, no_earlier_epoch_leo_counted),
        ("CountedLeoHeld", counted_leo_held),
        ("RecordedThisEpoch", recorded_this_epoch),
        ("RecordedWhileFollowing", recorded_while_following),
        ("HeldInRecordedEpoch", held_in_recorded_epoch),
        ("HwNonNegative", hw_non_negative),
    )
    name = "stale-leo-" + ("on-epoch" if reset_on_epoch else "on-leadership")
    return System(name, _variables(n), init, tuple(actions), invariants, TARGET)
