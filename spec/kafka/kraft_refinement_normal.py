"""The tracked port states of the KRaft refinement check (``isrlab.spec.kafka.kraft_refinement``)
in normal form: ``normalised`` maps a ``tla-kraft-*`` state to a representative of the
states the port's steps cannot tell apart from it (stale messages dropped, partition and
leader epochs renumbered from their smallest), so the set of port states tracked along a
``kafka`` behaviour stays small.  A bisimulation of the port's steps, used only there."""

from __future__ import annotations

from typing import Any

from isrlab.spec.tla_kraft import layout as kl

Abstract = tuple[Any, ...]
"""A port state as ``KraftModel.unpack`` gives it (a tuple of the spec's 23 variables)."""


# ---- normalising the tracked port states ---------------------------------------------------
def _pe_of_message(m: tuple[Any, ...]) -> list[int]:
    """The partition epochs a message carries."""
    if m[0] == kl.AP_REQ:
        return [m[5]]
    if m[0] == kl.AP_RESP:
        return [m[6], m[7][5]] if m[1] == kl.ERR_NONE else [m[2][5]]
    return []


def _shift_message(m: tuple[Any, ...], d: int) -> tuple[Any, ...]:
    if m[0] == kl.AP_REQ:
        return (*m[:5], m[5] - d, *m[6:])
    if m[0] == kl.AP_RESP:
        if m[1] == kl.ERR_NONE:
            return (*m[:6], m[6] - d, _shift_message(m[7], d), *m[8:])
        return (m[0], m[1], _shift_message(m[2], d), *m[3:])
    return m


def _stale(m: tuple[Any, ...], md: tuple[Any, ...]) -> bool:
    """Whether message ``m`` is an AlterPartition request, or an answer to one, carrying a
    partition epoch below its sender's: the controller refuses it (a broker's partition
    epoch never passes the controller's) and its sender, whose pending request it can no
    longer be (a pending request carries the sender's partition epoch, which never
    decreases without shutdowns), ignores the answer."""
    if m[0] == kl.AP_REQ:
        return bool(m[5] < md[m[3] - 1][5])
    if m[0] == kl.AP_RESP:
        request = m[7] if m[1] == kl.ERR_NONE else m[2]
        return bool(request[5] < md[request[3] - 1][5])
    return False


def normalised(s: Abstract) -> Abstract:
    """``s`` with partition epochs shifted so that the least is 1 (0 stays the blank), the
    metadata log's prefix every broker has read dropped but its last record (which a
    registering broker replays) and their offsets shifted, broker epochs and incarnation
    ids renumbered (``_renumbered``), the
    counters zeroed, the stale AlterPartition messages (``_stale``) dropped, and of the
    discarded messages only the AlterPartition requests their sender could send again
    kept (``__AvoidCycle`` reads them; nothing reads the others).  Each is a bisimulation
    of the port with clean shutdowns: the dropped parts are read by no step, or only by
    steps that change nothing observable and nothing read later (the log is not cut while
    a registration, which carries the log's length, is in flight)."""
    md = s[kl.P_MD]
    msgs = tuple(m for m in s[kl.MESSAGES] if not _stale(m, md))
    keep = tuple(m for m in s[kl.MESSAGES_DISCARD]
                 if m[0] == kl.AP_REQ and not _stale(m, md))
    pes = [s[kl.CON_PM][6], *(r[6] for r in s[kl.CON_LOG])]
    pes += [m[5] for m in md if m[5]]
    pes += [p[0] for p in s[kl.P_PENDING_AP] if p[0]]
    for m in msgs:
        pes += _pe_of_message(m)
    d = min(pes) - 1
    t = list(s)
    registering = any(m[0] in (kl.REG_REQ, kl.REG_RESP) for m in s[kl.MESSAGES])
    # a registering broker replays the last record (ReceiveBrokerRegResponse): keep it
    cut = 0 if registering else min(*s[kl.BROKER_MD_LOG], len(s[kl.CON_LOG]) - 1)
    if cut:
        t[kl.CON_LOG] = s[kl.CON_LOG][cut:]
        t[kl.BROKER_MD_LOG] = tuple(n - cut for n in s[kl.BROKER_MD_LOG])
    t[kl.AUX_CTRS] = (s[kl.AUX_CTRS][0], 0, 0, 0, 0, 0)
    t[kl.MESSAGES] = msgs
    t[kl.MESSAGES_DISCARD] = keep
    if d:
        con = s[kl.CON_PM]
        t[kl.CON_PM] = (*con[:6], con[6] - d, *con[7:])
        t[kl.CON_LOG] = tuple((*r[:6], r[6] - d, *r[7:]) for r in t[kl.CON_LOG])
        t[kl.P_MD] = tuple((*m[:5], m[5] - d) if m[5] else m for m in md)
        t[kl.P_PENDING_AP] = tuple((p[0] - d, _shift_message(p[1], d)) if p[0] else p
                                   for p in s[kl.P_PENDING_AP])
        t[kl.MESSAGES] = tuple(sorted(_shift_message(m, d) for m in msgs))
        t[kl.MESSAGES_DISCARD] = tuple(sorted(_shift_message(m, d) for m in keep))
    return _renumbered(tuple(t))


def _renumbered(s: Abstract) -> Abstract:
    """``s`` with broker epochs renumbered 1, 2, ... in their order and incarnation ids
    likewise (0 and Nil kept: "none"), and the two counters that issue them set to the
    largest: the spec compares both only for equality (and epochs for order), so this is
    a bisimulation; without it every restart would make new port states."""
    regs, brokers = s[kl.CON_BROKER_REG], s[kl.BROKER_STATE]
    epochs = {r[1] for r in regs} | {x[1] for x in brokers}
    incarns = {r[2] for r in regs} | {x[2] for x in brokers}
    for row in s[kl.P_REPLICA_STATE]:
        epochs |= {e for _leo, e in row}
    for m in (*s[kl.MESSAGES], *s[kl.MESSAGES_DISCARD], *(p[1] for p in s[kl.P_PENDING_AP]
                                                           if p[1])):
        epochs |= set(_message_epochs(m))
        if m[0] in (kl.REG_REQ, kl.REG_RESP):
            incarns.add(m[2])
    ep = {e: i for i, e in enumerate(sorted(epochs - {0, kl.NIL}), 1)}
    inc = {i: j for j, i in enumerate(sorted(incarns - {0, kl.NIL}), 1)}
    ep[0], ep[kl.NIL], inc[0], inc[kl.NIL] = 0, kl.NIL, 0, kl.NIL
    if all(k == v for k, v in ep.items()) and all(k == v for k, v in inc.items()) and (
            s[kl.AUX_BROKER_EPOCH] == max(ep.values()) and s[kl.AUX_CTRS][0] == max(
                inc.values()) + 1):
        return s
    t = list(s)
    t[kl.CON_BROKER_REG] = tuple((r[0], ep[r[1]], inc[r[2]]) for r in regs)
    t[kl.BROKER_STATE] = tuple((x[0], ep[x[1]], inc[x[2]], x[3]) for x in brokers)
    t[kl.P_REPLICA_STATE] = tuple(tuple((leo, ep[e]) for leo, e in row)
                                  for row in s[kl.P_REPLICA_STATE])
    t[kl.MESSAGES] = tuple(sorted(_message_renumbered(m, ep, inc) for m in s[kl.MESSAGES]))
    t[kl.MESSAGES_DISCARD] = tuple(sorted(_message_renumbered(m, ep, inc)
                                          for m in s[kl.MESSAGES_DISCARD]))
    t[kl.P_PENDING_AP] = tuple((p[0], _message_renumbered(p[1], ep, inc)) if p[1] else p
                               for p in s[kl.P_PENDING_AP])
    t[kl.AUX_BROKER_EPOCH] = max(ep.values())
    t[kl.AUX_CTRS] = (max(inc.values()) + 1, *s[kl.AUX_CTRS][1:])
    return tuple(t)


def _message_epochs(m: tuple[Any, ...]) -> list[int]:
    """The broker epochs message ``m`` carries."""
    if m[0] == kl.AP_REQ:
        return [m[6], *(e for _b, e in m[2])]
    if m[0] == kl.AP_RESP:
        return _message_epochs(m[7] if m[1] == kl.ERR_NONE else m[2])
    if m[0] == kl.FETCH_REQ:
        return [m[3]]
    if m[0] == kl.REG_REQ:
        return [m[3]]
    if m[0] == kl.REG_RESP:
        return [m[1]]
    return []


def _message_renumbered(m: tuple[Any, ...], ep: dict[int, int],
                        inc: dict[int, int]) -> tuple[Any, ...]:
    if m[0] == kl.AP_REQ:
        return (*m[:2], tuple((b, ep[e]) for b, e in m[2]), *m[3:6], ep[m[6]], *m[7:])
    if m[0] == kl.AP_RESP:
        if m[1] == kl.ERR_NONE:
            return (*m[:7], _message_renumbered(m[7], ep, inc), *m[8:])
        return (m[0], m[1], _message_renumbered(m[2], ep, inc), *m[3:])
    if m[0] == kl.FETCH_REQ:
        return (*m[:3], ep[m[3]], *m[4:])
    if m[0] == kl.REG_REQ:
        return (m[0], m[1], inc[m[2]], ep[m[3]])
    if m[0] == kl.REG_RESP:
        return (m[0], ep[m[1]], inc[m[2]], *m[3:])
    return m
