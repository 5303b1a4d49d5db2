"""The variables of Vanlightly/kafka-tlaplus's KRaft modules as ``tla-kraft-*`` keeps them:
the indices of a state's 23 variables, the spec's constants, the packed encoding and the
fair actions; shared by the model (``model.py``) and its liveness declarations
(``liveness.py``)."""

from __future__ import annotations

from io import BytesIO
from operator import itemgetter
from pickle import Pickler
from typing import Any

State = tuple[Any, ...]
Packed = bytes
"""A state as the checker holds it (``KraftModel.pack``)."""
Draft = list[Any]

# -- variables (indices into a state) ----------------------------------------------------------
CON_UNFENCED, CON_BROKER_REG, CON_PM, CON_LOG = 0, 1, 2, 3
BROKER_STATE, BROKER_FETCHERS, BROKER_MD_LOG = 4, 5, 6
P_STATUS, P_MD, P_DATA, P_LESO, P_REPLICA_STATE, P_PENDING_AP = 7, 8, 9, 10, 11, 12
MESSAGES, MESSAGES_DISCARD = 13, 14
AUX_BROKER_EPOCH, AUX_CTRS, AUX_FLO = 15, 16, 17
INV_SENT, INV_POS_ACKED, INV_NEG_ACKED, INV_TRUE_HWM, INV_CONSUMED = 18, 19, 20, 21, 22
VARIABLES = (
    "con_unfenced", "con_broker_reg", "con_partition_metadata", "con_metadata_log",
    "broker_state", "broker_fetchers", "broker_metadata_log", "partition_status",
    "partition_metadata", "partition_data", "partition_leso", "partition_replica_state",
    "partition_pending_ap", "messages", "messages_discard", "aux_broker_epoch", "aux_ctrs",
    "aux_flo", "inv_sent", "inv_pos_acked", "inv_neg_acked", "inv_true_hwm", "inv_consumed",
)
NOT_IN_VIEW = (MESSAGES_DISCARD, AUX_BROKER_EPOCH, AUX_CTRS, AUX_FLO)
_VIEW_PART = itemgetter(*(i for i in range(len(VARIABLES)) if i not in NOT_IN_VIEW))
_REST_PART = itemgetter(*NOT_IN_VIEW)


def _dumps(value: tuple[Any, ...]) -> bytes:
    """``value``'s pickle (protocol 2) without the memo: equal values give equal bytes."""
    out = BytesIO()
    pickler = Pickler(out, 2)
    pickler.fast = True  # no memo: no back-references that depend on object identity
    pickler.dump(value)
    return out.getvalue()

# -- constants ------------------------------------------------------------------------------
NIL = -1
INT_MAX = 10000  # the spec's IntMax
NO_LEADER = 0
OFFLINE_CLEAN, OFFLINE_DIRTY, STARTING, RUNNING = 0, 1, 2, 3
STATUS_NAMES = ("OFFLINE_CLEAN", "OFFLINE_DIRTY", "STARTING", "RUNNING")
FENCED, UNFENCED = 0, 1
ROLE_NIL, LEADER, FOLLOWER = 0, 1, 2
ROLE_NAMES = ("Nil", "Leader", "Follower")
# message types (first field of a message tuple)
REG_REQ, REG_RESP, AP_REQ, AP_RESP, FETCH_REQ, FETCH_RESP = 0, 1, 2, 3, 4, 5
# errors
ERR_NONE, ERR_FENCED_LEADER_EPOCH, ERR_INELIGIBLE_REPLICA = 0, 1, 2
ERR_NOT_LEADER_OR_FOLLOWER, ERR_UNKNOWN_LEADER_EPOCH = 3, 4
ERROR_NAMES = ("Nil", "FencedLeaderEpoch", "IneligibleReplica", "NotLeaderOrFollower",
               "UnknownLeaderEpoch")
# aux_ctrs fields
C_INCARN, C_CLEAN, C_UNCLEAN, C_FENCE, C_SHRINK, C_REASSIGN = 0, 1, 2, 3, 4, 5
# partition metadata (broker side):
# replicas, isr, maximal_isr, leader, leader_epoch, partition_epoch
BLANK_MD = (0, 0, 0, NO_LEADER, 0, 0)
# controller metadata and metadata records:
# replicas, isr, elr, last_known_elr, leader, leader_epoch, partition_epoch, adding, removing
# (adding = removing = -1: the initial record, which has no such fields)
BLANK_FETCH = ((), False)
BLANK_REPLICA_STATE = (NIL, 0)
VALUE_A = 1  # the cfgs' Values = {A}; a model with KraftConfig.values = k writes 1..k
VALUE_NAMES = ("A", "B", "C", "D")
"""The names of values 1, 2, ...: value v is bit v - 1 of the ``inv_*`` value sets."""

INVARIANTS_V35 = (
    "LeaderCompletenessProperty", "LeaderCandidateCompletenessProperty",
    "ReplicationQuorumSupersetProperty", "LogMatchingProperty",
    "MetadataLogMatchingProperty", "ConsistentReadProperty", "NoCommittedRecordLostGlobally",
)
"""The INVARIANTs of kafka_replication_v3_5.cfg, in its order."""
INVARIANTS_KIP966 = (*INVARIANTS_V35[:6], "MinIsrRecoveryQuorum",
                     "NoCommittedRecordLostGlobally")
"""The INVARIANTs of kafka_replication_kip_966.cfg, in its order."""
FAIR_ACTIONS = (
    "BrokerStart", "ReceiveBrokerRegResponse", "ReceiveMetadataUpdate",
    "SendAlterPartitionRequest", "ReceiveAlterPartitionResponse", "SendFetchRequest",
    "ReceiveFetchRequest", "ReceiveFetchResponse", "ReceiveBrokerRegRequest",
    "ReceiveAlterPartitionRequest", "UnfenceBroker",
)
"""The actions of both modules' ``Liveness``, in its order (each weakly fair per broker)."""
