"""The byte layout of a ``tla-*`` state, and its readable view.

A state of the specification (replicaLog, replicaState, nextRecordId, nextLeaderEpoch,
leaderAndIsrRequests, quorumState) is stored as one immutable ``bytes`` object, so that the
checker's ``encode`` is the identity and a successor is a few slices glued together.

Why this is exact (a bijection on reachable states):

* every ``ControllerUpdateIsr`` takes the epoch ``nextLeaderEpoch`` and increments it, so the
  request set holds exactly one request per epoch ``0 .. nextLeaderEpoch-1``: it is stored as
  an array indexed by epoch (slots at and above ``nextLeaderEpoch`` are zero);
* ``quorumState`` is always the newest request except for its ISR (the leader's
  ``QuorumUpdateLeaderAndIsr`` rewrites only the ISR): only the quorum ISR is stored; its
  epoch is ``nextLeaderEpoch - 1`` (``Nil`` = -1 when no request exists) and its leader is
  the newest request's (``None`` when none exists);
* a log slot past the end offset is ``Nil`` in the spec and ``0`` here.

Byte positions (``n`` replicas, ``L`` = LogSize, ``E`` = MaxLeaderEpoch)::

    0                nextRecordId
    1                nextLeaderEpoch
    2                quorumState.isr                   (ISR code)
    3 + 2e, 4 + 2e   request of epoch e: leader, isr   (leader code, ISR code), e in 0..E
    H + iB + 0       replicaState[i].hw
    H + iB + 1       replicaState[i].leaderEpoch + 1   (0 = Nil)
    H + iB + 2       replicaState[i].leader            (leader code)
    H + iB + 3       replicaState[i].isr               (ISR code)
    H + iB + 4       end offset of replicaLog[i]
    H + iB + 5 + o   record at offset o                (record code, 0 = Nil)

with ``H = 3 + 2(E + 1)`` and ``B = 5 + L``.  Codes: a record ``[id, epoch]`` is
``1 + id·(E + 1) + epoch``; replica ``i`` as a leader is ``LB + i`` and ``None`` is
``LB + n``; an ISR (bit ``i`` = replica ``i``) is ``IB + mask``, with ``IB = 256 - 2^n`` and
``LB = IB - n - 1``.  Replica-valued codes thus occupy the top of the byte range and every
other byte lies below ``LB``: renaming replicas is one ``bytes.translate`` plus a reordering
of the replica blocks (see ``Layout.canonical``).
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass

from isrlab.core.truncation import NO_EPOCH, Log, Record

HW, EPOCH, LEADER, ISR, END, LOG = 0, 1, 2, 3, 4, 5
"""Field positions inside a replica block."""

RQ = 3
"""Position of the request of epoch 0."""


@dataclass(frozen=True, slots=True)
class ReplicaView:
    """One replica's ``replicaState`` entry and its log, in the specification's terms."""

    hw: int
    leader_epoch: int  # -1 is Nil
    leader: int | None  # a replica index, None is the spec's None
    isr: frozenset[int]
    log: Log


@dataclass(frozen=True, slots=True)
class StateView:
    """A whole state in the specification's terms (replicas are indices ``0 .. n-1``).

    ``requests[e]`` is the LeaderAndIsr request of epoch ``e`` as ``(leader, isr)``; the
    quorum state is the newest request with ``quorum_isr`` as its ISR.
    """

    replicas: tuple[ReplicaView, ...]
    next_record_id: int
    next_leader_epoch: int
    requests: tuple[tuple[int | None, frozenset[int]], ...]
    quorum_isr: frozenset[int]

    @property
    def quorum_leader(self) -> int | None:
        """quorumState.leader: the newest request's leader (None before any request)."""
        return self.requests[-1][0] if self.requests else None

    @property
    def quorum_epoch(self) -> int:
        """quorumState.leaderEpoch: the newest request's epoch (Nil = -1 before any)."""
        return len(self.requests) - 1


MAX_REPLICAS = 6
"""The most replicas the byte layout holds (an ISR is one byte code among 2^n)."""


class Layout:
    """The codes and positions for given constants; converts between bytes and views."""

    def __init__(self, replicas: int, log_size: int, max_records: int, max_epoch: int) -> None:
        if not 1 <= replicas <= MAX_REPLICAS:
            raise ValueError(f"replicas must be in 1..{MAX_REPLICAS}, got {replicas}")
        self.n, self.log_size = replicas, log_size
        self.max_records, self.max_epoch = max_records, max_epoch
        self.isr_base = 256 - (1 << replicas)
        self.leader_base = self.isr_base - replicas - 1
        self.none = self.leader_base + replicas
        self.header = RQ + 2 * (max_epoch + 1)
        self.block = LOG + log_size
        self.size = self.header + replicas * self.block
        self.bases = tuple(self.header + i * self.block for i in range(replicas))
        largest_plain = max(1 + max_records * (max_epoch + 1), log_size, max_epoch + 2)
        if largest_plain >= self.leader_base:
            raise ValueError(
                f"constants too large for the byte layout: with {replicas} replicas, "
                f"1+max_records*(max_leader_epoch+1), log_size and max_leader_epoch+2 must "
                f"each be below {self.leader_base}"
            )
        self.permutations = tuple(itertools.permutations(range(replicas)))
        self._perm_tables = tuple(self._translation(p) for p in self.permutations)
        self.perm_tables = self._perm_tables  # the byte renaming of each permutation
        self._perm_orders = tuple(self._block_order(p) for p in self.permutations)

    # -- codes ----------------------------------------------------------------------------
    def record_code(self, record: Record) -> int:
        """The byte of a record ``[id, epoch]``."""
        return 1 + record.id * (self.max_epoch + 1) + record.epoch

    def record_of(self, code: int) -> Record:
        """The record a (non-zero) record byte stands for."""
        return Record(*divmod(code - 1, self.max_epoch + 1))

    def leader_code(self, leader: int | None) -> int:
        """The byte of a replica index or of None."""
        return self.none if leader is None else self.leader_base + leader

    def leader_of(self, code: int) -> int | None:
        """The replica index (or None) a leader byte stands for."""
        return None if code == self.none else code - self.leader_base

    def isr_code(self, isr: frozenset[int]) -> int:
        """The byte of a set of replicas."""
        return self.isr_base + sum(1 << i for i in isr)

    def isr_of(self, code: int) -> frozenset[int]:
        """The set of replicas an ISR byte stands for."""
        mask = code - self.isr_base
        return frozenset(i for i in range(self.n) if mask >> i & 1)

    # -- views --------------------------------------------------------------------------------
    def pack(self, view: StateView) -> bytes:
        """The bytes of a readable state (the inverse of ``unpack``)."""
        out = bytearray(self.size)
        out[0], out[1] = view.next_record_id, view.next_leader_epoch
        out[2] = self.isr_code(view.quorum_isr)
        for e, (leader, isr) in enumerate(view.requests):
            out[RQ + 2 * e] = self.leader_code(leader)
            out[RQ + 2 * e + 1] = self.isr_code(isr)
        for base, replica in zip(self.bases, view.replicas, strict=True):
            out[base + HW] = replica.hw
            out[base + EPOCH] = replica.leader_epoch + 1
            out[base + LEADER] = self.leader_code(replica.leader)
            out[base + ISR] = self.isr_code(replica.isr)
            out[base + END] = len(replica.log)
            for offset, record in enumerate(replica.log):
                out[base + LOG + offset] = self.record_code(record)
        return bytes(out)

    def unpack(self, state: bytes) -> StateView:
        """The readable form of a state's bytes."""
        replicas = []
        for base in self.bases:
            end = state[base + END]
            replicas.append(ReplicaView(
                hw=state[base + HW],
                leader_epoch=state[base + EPOCH] - 1,
                leader=self.leader_of(state[base + LEADER]),
                isr=self.isr_of(state[base + ISR]),
                log=tuple(self.record_of(c) for c in state[base + LOG:base + LOG + end]),
            ))
        requests = tuple(
            (self.leader_of(state[RQ + 2 * e]), self.isr_of(state[RQ + 2 * e + 1]))
            for e in range(state[1])
        )
        return StateView(tuple(replicas), state[0], state[1], requests, self.isr_of(state[2]))

    def log_of(self, state: bytes, replica: int) -> Log:
        """replicaLog[replica] as a tuple of records."""
        return self.unpack(state).replicas[replica].log

    def initial(self) -> bytes:
        """Init: empty logs, hw 0, Nil epochs, no leader, empty replica ISRs, no requests,
        quorum ISR = all replicas."""
        nobody = ReplicaView(0, NO_EPOCH, None, frozenset(), ())
        return self.pack(StateView(
            (nobody,) * self.n, 0, 0, (), frozenset(range(self.n)),
        ))

    # -- symmetry --------------------------------------------------------------------------------
    def _translation(self, perm: tuple[int, ...]) -> bytes:
        """The byte map renaming replica ``i`` to ``perm[i]`` in every replica-valued code."""
        table = list(range(256))
        for i in range(self.n):
            table[self.leader_base + i] = self.leader_base + perm[i]
        for mask in range(1 << self.n):
            renamed = sum(1 << perm[i] for i in range(self.n) if mask >> i & 1)
            table[self.isr_base + mask] = self.isr_base + renamed
        return bytes(table)

    def _block_order(self, perm: tuple[int, ...]) -> tuple[slice, ...]:
        """The slices that rebuild a state with replica ``i``'s block at position ``perm[i]``."""
        inverse = [0] * self.n
        for i, target in enumerate(perm):
            inverse[target] = i
        return (slice(0, self.header), *(
            slice(self.bases[i], self.bases[i] + self.block) for i in inverse
        ))

    def permute(self, state: bytes, index: int) -> bytes:
        """The state with replicas renamed by ``self.permutations[index]``."""
        renamed = state.translate(self._perm_tables[index])
        return b"".join([renamed[part] for part in self._perm_orders[index]])

    def canonical(self, state: bytes) -> bytes:
        """The smallest renaming of ``state`` over all replica permutations (its orbit's
        representative: TLC's SYMMETRY on Replicas).

        The header (counters, quorum ISR, requests) has a fixed length and comes first, so
        only the permutations giving the smallest renamed header can give the smallest state:
        the replica blocks are renamed and reordered for those alone."""
        head = state[:self.header]
        best_head = head
        ties = [0]
        tables = self._perm_tables
        for index in range(1, len(tables)):
            renamed = head.translate(tables[index])
            if renamed < best_head:
                best_head, ties = renamed, [index]
            elif renamed == best_head:
                ties.append(index)
        best = self.permute(state, ties[0])
        for index in ties[1:]:
            candidate = self.permute(state, index)
            if candidate < best:
                best = candidate
        return best
