/* isrlab.spec.tla._native: the compiled successor function of the tla-* models.
 *
 * A C transcription of the actions of isrlab/spec/tla/model.py and
 * isrlab/spec/variants/kip320.py on the byte layout of isrlab/spec/tla/layout.py.  The pure
 * Python there is the reference: every action here mirrors one Python function line by
 * line and emits the same (label, successor) pairs in the same order; the differential test
 * tests/spec/test_tla_native.py compares both on every state of several configurations.
 * TlaModel uses this module when it imports (ISRLAB_PURE_PYTHON=1 turns it off) and falls
 * back to the pure Python otherwise, with identical results.
 *
 * A Native object holds the constants of one TlaModel and the list of its Next disjuncts:
 * each is either an action known here (a code, its label table and, for the truncations,
 * the memo dictionary and the Python function computing a missing entry) or a Python
 * callable ``action(state, out, presumed)`` run as is (actions not transcribed here).
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <string.h>

#include "../../checker/_successors.h"

#define HW 0
#define EPOCH 1
#define LEADER 2
#define ISR 3
#define END 4
#define LOG 5
#define RQ 3
#define MAXN 6

enum {
    A_PYTHON = 0,
    A_ELECT = 1,          /* ControllerElectLeader */
    A_CSHRINK = 2,        /* ControllerShrinkIsr */
    A_BECOME_LEADER = 3,  /* BecomeLeader */
    A_EXPAND = 4,         /* LeaderExpandIsr */
    A_SHRINK = 5,         /* LeaderShrinkIsr */
    A_WRITE = 6,          /* LeaderWrite */
    A_INC_HW = 7,         /* LeaderIncHighWatermark */
    A_REPLICATE = 8,      /* FollowerReplicate */
    A_TRUNCATE = 9,       /* become_follower_and_truncate(rule, twice) */
    A_F_FETCH = 10,       /* Kip320 FencedFollowerFetch */
    A_F_INC_HW = 11,      /* Kip320 FencedLeaderIncHighWatermark */
    A_F_SHRINK = 12,      /* Kip320 FencedLeaderShrinkIsr */
    A_F_EXPAND = 13,      /* Kip320 FencedLeaderExpandIsr */
    A_F_TRUNCATE = 14,    /* Kip320 FencedBecomeFollowerAndTruncate */
    A_LAST = 14
};

typedef struct {
    int code;
    PyObject *labels;    /* nested tuples of str, shaped as TlaModel.labels gives them */
    PyObject *memo;      /* truncations: dict key -> new replica block */
    PyObject *rule;      /* truncations: the rule, passed to ``truncated`` on a miss */
    PyObject *callable;  /* A_PYTHON: action(state, out, presumed) */
    int twice;
    int inline_rule;     /* truncations: 0 the memo and ``truncated``, else a RULE_* below */
} ActionEntry;

enum {
    RULE_MEMO = 0,
    RULE_KIP279 = 1,  /* FirstNonMatchingOffsetFromTail (kip279_truncation_offset) */
    RULE_TO_HW = 2,   /* the follower's own high watermark (truncate_to_high_watermark) */
    RULE_LAST = 2
};

typedef struct {
    PyObject_HEAD
    int n, L, R, E, header, block, size, lb, none, ib;
    int bases[MAXN];
    unsigned char nmembers[256];
    unsigned char members[256][MAXN];
    signed char epoch_of[256];
    unsigned char *fetched_hw;  /* (L + 1) x (L + 1): follower HW after a fetch */
    PyObject *truncated;        /* TlaModel.truncated, bound */
    PyObject *presuming;        /* TlaModel._presuming, bound (for Python actions) */
    int has_python;
    Py_ssize_t nactions;
    ActionEntry *actions;
    int nperms;                 /* symmetry: the replica permutations (Layout.permutations) */
    unsigned char *perm_tables; /* nperms x 256: the byte renaming of each (Layout) */
    unsigned char *perm_inverse;/* nperms x n: the replica whose block goes to position t */
    unsigned char *scratch;     /* 2 x size */
} Native;

/* -- helpers ---------------------------------------------------------------------------- */

static inline PyObject *
label1(PyObject *t, int i)
{
    return PyTuple_GET_ITEM(t, i);
}

static inline PyObject *
label2(PyObject *t, int i, int j)
{
    return PyTuple_GET_ITEM(PyTuple_GET_ITEM(t, i), j);
}

static inline PyObject *
label3(PyObject *t, int e, int i, int j)
{
    return PyTuple_GET_ITEM(PyTuple_GET_ITEM(PyTuple_GET_ITEM(t, e), i), j);
}

/* Where the successors go: appended as (label, bytes) pairs to ``list`` (the Python
 * ``next_states``), or handed to ``emit`` (the checker's C interface, checker/_successors.h:
 * no Python object is created).  ``w`` is the successor being built (size bytes). */
typedef struct {
    PyObject *list;
    isrlab_emit_fn emit;
    void *ctx;
    unsigned char *w;
} Out;

/* Start a successor as a copy of the state, to patch. */
static inline unsigned char *
copy_state(const Native *m, Out *o, const unsigned char *s)
{
    memcpy(o->w, s, m->size);
    return o->w;
}

/* Emit the successor built in o->w ``times`` times.  0 ok, -1 error. */
static int
emit(const Native *m, Out *o, PyObject *label, int times)
{
    if (o->list == NULL) {
        o->emit(o->ctx, label, o->w, times);
        return 0;
    }
    PyObject *succ = PyBytes_FromStringAndSize((const char *)o->w, m->size);
    if (succ == NULL)
        return -1;
    PyObject *pair = PyTuple_New(2);
    if (pair == NULL) {
        Py_DECREF(succ);
        return -1;
    }
    Py_INCREF(label);
    PyTuple_SET_ITEM(pair, 0, label);
    PyTuple_SET_ITEM(pair, 1, succ);
    /* A str and a bytes cannot form a cycle: keep the pair out of the cyclic collector's
     * lists (CPython would untrack it at its first collection, after scanning it). */
    if (!PyObject_GC_IsTracked(label))
        PyObject_GC_UnTrack(pair);
    int rc = 0;
    for (int k = 0; k < times && rc == 0; k++)
        rc = PyList_Append(o->list, pair);
    Py_DECREF(pair);
    return rc;
}

static inline int
quorum_leader(const Native *m, const unsigned char *s)
{
    int nle = s[1];
    return nle ? s[RQ + 2 * nle - 2] : m->none;
}

typedef struct {
    int count;
    int idx[MAXN];      /* presumed leaders, ascending */
    int nf[MAXN];       /* number of followers of each */
    int fol[MAXN][MAXN];
} Pres;

/* TlaModel._presuming: replicas with replicaState[i].leader = i and their followers. */
static inline void
presuming(const Native *m, const unsigned char *s, Pres *p)
{
    int codes[MAXN];
    p->count = 0;
    for (int i = 0; i < m->n; i++)
        codes[i] = s[m->bases[i] + LEADER];
    for (int i = 0; i < m->n; i++) {
        if (codes[i] != m->lb + i)
            continue;
        int k = p->count++;
        p->idx[k] = i;
        p->nf[k] = 0;
        for (int j = 0; j < m->n; j++)
            if (codes[j] == codes[i] && j != i)
                p->fol[k][p->nf[k]++] = j;
    }
}

/* -- the controller ------------------------------------------------------------------------ */

static void
update_isr(const Native *m, Out *o, const unsigned char *s, int leader_code, int isr_code)
{
    unsigned char *w = copy_state(m, o, s);
    int nle = s[1], k = RQ + 2 * nle;
    w[1] = (unsigned char)(nle + 1);
    w[2] = (unsigned char)isr_code;
    w[k] = (unsigned char)leader_code;
    w[k + 1] = (unsigned char)isr_code;
}

static int
elect(const Native *m, const ActionEntry *a, const unsigned char *s, Out *o)
{
    if (s[1] > m->E)
        return 0;
    int qisr = s[2], qleader = quorum_leader(m, s);
    for (int k = 0; k < m->nmembers[qisr]; k++) {
        int i = m->members[qisr][k];
        if (m->lb + i == qleader)
            continue;
        update_isr(m, o, s, m->lb + i, qisr);
        if (emit(m, o, label1(a->labels, i), 1) < 0)
            return -1;
    }
    return 0;
}

static int
cshrink(const Native *m, const ActionEntry *a, const unsigned char *s, Out *o)
{
    if (s[1] > m->E)
        return 0;
    int qisr = s[2], qleader = quorum_leader(m, s);
    int mask = qisr - m->ib;
    for (int i = 0; i < m->n; i++) {
        int bit = 1 << i;
        if (qleader == m->lb + i) {
            int new_isr = mask == bit ? qisr : m->ib + (mask & ~bit);
            update_isr(m, o, s, m->none, new_isr);
        }
        else if (mask & bit) {
            update_isr(m, o, s, qleader, m->ib + (mask & ~bit));
        }
        else {
            continue;
        }
        if (emit(m, o, label1(a->labels, i), 1) < 0)
            return -1;
    }
    return 0;
}

/* -- leaders ------------------------------------------------------------------------------- */

static int
become_leader(const Native *m, const ActionEntry *a, const unsigned char *s, Out *o)
{
    for (int e = 0; e < s[1]; e++) {
        int code = s[RQ + 2 * e];
        if (code == m->none)
            continue;
        int i = code - m->lb, b = m->bases[i];
        if (e + 1 > s[b + EPOCH]) {
            unsigned char *w = copy_state(m, o, s);
            w[b + EPOCH] = (unsigned char)(e + 1);
            w[b + LEADER] = (unsigned char)code;
            w[b + ISR] = s[RQ + 2 * e + 1];
            if (emit(m, o, label2(a->labels, e, i), 1) < 0)
                return -1;
        }
    }
    return 0;
}

static int
leader_write(const Native *m, const ActionEntry *a, const unsigned char *s, Out *o,
             const Pres *p)
{
    int rid = s[0];
    if (rid >= m->R)
        return 0;
    int first = rid * (m->E + 1);
    for (int k = 0; k < p->count; k++) {
        int i = p->idx[k], b = m->bases[i];
        int end = s[b + END];
        if (end >= m->L)
            continue;
        unsigned char *w = copy_state(m, o, s);
        w[0] = (unsigned char)(rid + 1);
        w[b + END] = (unsigned char)(end + 1);
        w[b + LOG + end] = (unsigned char)(first + s[b + EPOCH]);
        if (emit(m, o, label1(a->labels, i), 1) < 0)
            return -1;
    }
    return 0;
}

static void
set_isr(const Native *m, Out *o, const unsigned char *s, int b, int isr_code)
{
    unsigned char *w = copy_state(m, o, s);
    w[2] = (unsigned char)isr_code;
    w[b + ISR] = (unsigned char)isr_code;
}

static void
inc_hw(const Native *m, Out *o, const unsigned char *s, int b)
{
    unsigned char *w = copy_state(m, o, s);
    w[b + HW] = (unsigned char)(s[b + HW] + 1);
}

static int
leader_inc_hw(const Native *m, const ActionEntry *a, const unsigned char *s, Out *o,
              const Pres *p)
{
    for (int k = 0; k < p->count; k++) {
        int i = p->idx[k], b = m->bases[i], code = m->lb + i;
        int hw = s[b + HW];
        if (hw >= m->L)
            continue;
        int isr = s[b + ISR], ok = 1;
        for (int q = 0; q < m->nmembers[isr]; q++) {
            int c = m->bases[m->members[isr][q]];
            if (s[c + LEADER] != code || s[c + END] <= hw) {
                ok = 0;
                break;
            }
        }
        if (ok) {
            inc_hw(m, o, s, b);
            if (emit(m, o, label1(a->labels, i), 1) < 0)
                return -1;
        }
    }
    return 0;
}

/* TlaModel.true_leaders: the presumed leaders (indices into p) the quorum names, in the
 * quorum's epoch. */
static inline int
true_leaders(const Native *m, const unsigned char *s, const Pres *p, int *found)
{
    int qleader = quorum_leader(m, s), epoch = s[1], count = 0;
    for (int k = 0; k < p->count; k++) {
        int i = p->idx[k];
        if (m->lb + i == qleader && s[m->bases[i] + EPOCH] == epoch)
            found[count++] = k;
    }
    return count;
}

static inline int
caught_up(const unsigned char *s, int a, int b, int code, int offset)
{
    if (s[b + LEADER] != code)
        return 0;
    return offset == 0 || (offset - 1 < s[a + END] && offset - 1 < s[b + END]);
}

static int
leader_shrink(const Native *m, const ActionEntry *a_, const unsigned char *s, Out *o,
              const Pres *p)
{
    int tl[MAXN], count = true_leaders(m, s, p, tl);
    for (int t = 0; t < count; t++) {
        int i = p->idx[tl[t]], a = m->bases[i], code = m->lb + i;
        int isr = s[a + ISR], end = s[a + END];
        for (int q = 0; q < m->nmembers[isr]; q++) {
            int j = m->members[isr][q];
            if (j != i && !caught_up(s, a, m->bases[j], code, end)) {
                set_isr(m, o, s, a, isr - (1 << j));
                if (emit(m, o, label2(a_->labels, i, j), 1) < 0)
                    return -1;
            }
        }
    }
    return 0;
}

static int
leader_expand(const Native *m, const ActionEntry *a_, const unsigned char *s, Out *o,
              const Pres *p)
{
    int tl[MAXN], count = true_leaders(m, s, p, tl);
    for (int t = 0; t < count; t++) {
        int i = p->idx[tl[t]], a = m->bases[i], code = m->lb + i;
        int isr = s[a + ISR], hw = s[a + HW], mask = isr - m->ib;
        for (int j = 0; j < m->n; j++) {
            if (!((mask >> j) & 1) && caught_up(s, a, m->bases[j], code, hw)) {
                set_isr(m, o, s, a, isr + (1 << j));
                if (emit(m, o, label2(a_->labels, i, j), 1) < 0)
                    return -1;
            }
        }
    }
    return 0;
}

/* -- followers ----------------------------------------------------------------------------- */

/* TlaModel.truncated computed here for the rules known in C: the new replica block into
 * ``block`` (m->block bytes); 0 when the offset lies beyond the follower's end (no block). */
static int
truncation_inline(const Native *m, const ActionEntry *a, const unsigned char *s,
                  int leader_log, int b, int e1, int code, int isr, unsigned char *w)
{
    int L = m->L, end = s[b + END], hw = s[b + HW], offset = 0;
    if (a->inline_rule == RULE_KIP279) {
        int leader_len = 0;  /* as TlaModel.truncated: the leader's non-Nil slots */
        for (int o = 0; o < L; o++)
            leader_len += s[leader_log + o] != 0;
        int top = leader_len < end ? leader_len : end;
        for (int o = top - 1; o >= 0; o--) {
            if (s[leader_log + o] == s[b + LOG + o]) {
                offset = o + 1;
                break;
            }
        }
    }
    else {
        offset = hw;
    }
    if (offset > end)
        return 0;
    w[HW] = (unsigned char)(offset < hw ? offset : hw);
    w[EPOCH] = (unsigned char)e1;
    w[LEADER] = (unsigned char)code;
    w[ISR] = (unsigned char)isr;
    w[END] = (unsigned char)offset;
    memmove(w + LOG, s + b + LOG, offset);
    memset(w + LOG + offset, 0, L - offset);
    return 1;
}

/* The new replica block for the truncation key (TlaModel.truncated, memoised) into
 * ``block``: 1, or 0 when there is none (the truncation offset lies beyond the follower's
 * end), or -1 with an exception set.  Only the memo (RULE_MEMO) calls into Python. */
static int
truncation(const Native *m, const ActionEntry *a, const unsigned char *s, int leader_log,
           int b, int e1, int code, int isr, unsigned char *block)
{
    if (a->inline_rule != RULE_MEMO)
        return truncation_inline(m, a, s, leader_log, b, e1, code, isr, block);
    int L = m->L, B = m->block;
    PyObject *key = PyBytes_FromStringAndSize(NULL, L + B + 3);
    if (key == NULL)
        return -1;
    unsigned char *k = (unsigned char *)PyBytes_AS_STRING(key);
    memcpy(k, s + leader_log, L);
    memcpy(k + L, s + b, B);
    k[L + B] = (unsigned char)e1;
    k[L + B + 1] = (unsigned char)code;
    k[L + B + 2] = (unsigned char)isr;
    PyObject *found = PyDict_GetItemWithError(a->memo, key);
    if (found != NULL) {
        Py_INCREF(found);
    }
    else if (!PyErr_Occurred()) {
        found = PyObject_CallFunctionObjArgs(m->truncated, a->rule, key, NULL);
    }
    Py_DECREF(key);
    if (found == NULL)
        return -1;
    if (!PyBytes_CheckExact(found)) {
        Py_DECREF(found);
        PyErr_SetString(PyExc_TypeError, "truncated() must return bytes");
        return -1;
    }
    Py_ssize_t size = PyBytes_GET_SIZE(found);
    if (size != 0 && size != B) {
        Py_DECREF(found);
        PyErr_SetString(PyExc_RuntimeError, "native: a truncation block of the wrong size");
        return -1;
    }
    if (size != 0)
        memcpy(block, PyBytes_AS_STRING(found), B);
    Py_DECREF(found);
    return size != 0;
}

static int
become_follower_truncate(const Native *m, const ActionEntry *a, const unsigned char *s,
                         Out *o)
{
    unsigned char block[m->block];
    for (int e = 0; e < s[1]; e++) {
        int kk = RQ + 2 * e;
        if (s[kk] == m->none)
            continue;
        int leader = s[kk] - m->lb;
        int leader_log = m->bases[leader] + LOG;
        for (int j = 0; j < m->n; j++) {
            int b = m->bases[j];
            if (j == leader || e + 1 <= s[b + EPOCH])
                continue;
            int found = truncation(m, a, s, leader_log, b, e + 1, s[kk], s[kk + 1], block);
            if (found < 0)
                return -1;
            if (found == 0)
                continue;
            memcpy(copy_state(m, o, s) + b, block, m->block);
            int times = (a->twice && s[b + END] == 0) ? 2 : 1;
            if (emit(m, o, label3(a->labels, e, leader, j), times) < 0)
                return -1;
        }
    }
    return 0;
}

static int
fetch(const Native *m, const unsigned char *s, Out *o, PyObject *label, int a, int b)
{
    int end = s[b + END];
    if (end >= s[a + END] || end >= m->L)
        return 0;
    unsigned char *w = copy_state(m, o, s);
    w[b + HW] = m->fetched_hw[s[a + HW] * (m->L + 1) + end + 1];
    w[b + END] = (unsigned char)(end + 1);
    w[b + LOG + end] = s[a + LOG + end];
    return emit(m, o, label, 1);
}

static int
follower_replicate(const Native *m, const ActionEntry *a_, const unsigned char *s,
                   Out *o, const Pres *p, int fenced)
{
    for (int k = 0; k < p->count; k++) {
        int i = p->idx[k], a = m->bases[i], epoch = s[a + EPOCH];
        for (int q = 0; q < p->nf[k]; q++) {
            int j = p->fol[k][q], b = m->bases[j];
            if (fenced && s[b + EPOCH] != epoch)
                continue;
            if (fetch(m, s, o, label2(a_->labels, i, j), a, b) < 0)
                return -1;
        }
    }
    return 0;
}

/* -- Kip320 ------------------------------------------------------------------------------- */

static int
fenced_inc_hw(const Native *m, const ActionEntry *a_, const unsigned char *s, Out *o)
{
    for (int i = 0; i < m->n; i++) {
        int a = m->bases[i], hw = s[a + HW];
        if (hw >= s[a + END])
            continue;
        int code = m->lb + i, epoch = s[a + EPOCH], isr = s[a + ISR];
        int count = m->nmembers[isr];
        if (count && s[a + LEADER] != code)
            continue;
        int ok = 1;
        for (int q = 0; q < count; q++) {
            int b = m->bases[m->members[isr][q]];
            if (s[b + LEADER] != code || s[b + EPOCH] != epoch || s[b + END] <= hw) {
                ok = 0;
                break;
            }
        }
        if (ok) {
            inc_hw(m, o, s, a);
            if (emit(m, o, label1(a_->labels, i), 1) < 0)
                return -1;
        }
    }
    return 0;
}

static int
fenced_shrink(const Native *m, const ActionEntry *a_, const unsigned char *s, Out *o,
              const Pres *p)
{
    int tl[MAXN], count = true_leaders(m, s, p, tl);
    for (int t = 0; t < count; t++) {
        int i = p->idx[tl[t]], a = m->bases[i], code = m->lb + i;
        int epoch = s[a + EPOCH], isr = s[a + ISR], end = s[a + END];
        for (int q = 0; q < m->nmembers[isr]; q++) {
            int j = m->members[isr][q];
            if (j == i)
                continue;
            int b = m->bases[j];
            int off_epoch = s[b + LEADER] != code || s[b + EPOCH] != epoch;
            int reasons = off_epoch + (s[b + END] < end);
            if (reasons) {
                set_isr(m, o, s, a, isr - (1 << j));
                if (emit(m, o, label2(a_->labels, i, j), reasons) < 0)
                    return -1;
            }
        }
    }
    return 0;
}

static inline int
hw_reached_current_epoch(const Native *m, const unsigned char *s, int a)
{
    int hw = s[a + HW], end = s[a + END];
    return hw == end || (hw < end && m->epoch_of[s[a + LOG + hw]] == s[a + EPOCH] - 1);
}

static int
fenced_expand(const Native *m, const ActionEntry *a_, const unsigned char *s, Out *o,
              const Pres *p)
{
    int tl[MAXN], count = true_leaders(m, s, p, tl);
    for (int t = 0; t < count; t++) {
        int i = p->idx[tl[t]], a = m->bases[i], code = m->lb + i;
        if (!hw_reached_current_epoch(m, s, a))
            continue;
        int epoch = s[a + EPOCH], hw = s[a + HW], isr = s[a + ISR], mask = isr - m->ib;
        for (int j = 0; j < m->n; j++) {
            int b = m->bases[j];
            if (((mask >> j) & 1) || s[b + LEADER] != code || s[b + EPOCH] != epoch)
                continue;
            if (hw == 0 || hw - 1 < s[b + END]) {
                set_isr(m, o, s, a, isr + (1 << j));
                if (emit(m, o, label2(a_->labels, i, j), 1) < 0)
                    return -1;
            }
        }
    }
    return 0;
}

static int
fenced_truncate(const Native *m, const ActionEntry *a_, const unsigned char *s, Out *o,
                const Pres *p)
{
    unsigned char block[m->block];
    int nle = s[1];
    for (int k = 0; k < p->count; k++) {
        int i = p->idx[k], a = m->bases[i], code = m->lb + i;
        int epoch = s[a + EPOCH];
        if (!(0 < epoch && epoch <= nle))
            continue;
        int kk = RQ + 2 * epoch - 2;
        if (s[kk] != code)
            continue;
        for (int j = 0; j < m->n; j++) {
            int b = m->bases[j];
            if (j == i || epoch <= s[b + EPOCH])
                continue;
            int found = truncation(m, a_, s, a + LOG, b, epoch, s[kk], s[kk + 1], block);
            if (found < 0)
                return -1;
            if (found == 0) {  /* the Python reference has no such case */
                if (o->list != NULL)
                    PyErr_SetString(PyExc_RuntimeError,
                                    "native: a truncation block of the wrong size");
                return -1;
            }
            memcpy(copy_state(m, o, s) + b, block, m->block);
            if (emit(m, o, label3(a_->labels, epoch - 1, i, j), 1) < 0)
                return -1;
        }
    }
    return 0;
}

/* -- the object --------------------------------------------------------------------------- */

/* Next's disjuncts known in C on ``s``; the others (A_PYTHON) only in the Python mode
 * (``state`` the bytes object, o->list the list). */
static int
run_actions(Native *m, PyObject *state, const unsigned char *s, Out *o)
{
    Pres p;
    presuming(m, s, &p);
    PyObject *pres = NULL;
    int rc = 0;
    for (Py_ssize_t x = 0; x < m->nactions && rc == 0; x++) {
        const ActionEntry *a = &m->actions[x];
        switch (a->code) {
        case A_ELECT: rc = elect(m, a, s, o); break;
        case A_CSHRINK: rc = cshrink(m, a, s, o); break;
        case A_BECOME_LEADER: rc = become_leader(m, a, s, o); break;
        case A_EXPAND: rc = leader_expand(m, a, s, o, &p); break;
        case A_SHRINK: rc = leader_shrink(m, a, s, o, &p); break;
        case A_WRITE: rc = leader_write(m, a, s, o, &p); break;
        case A_INC_HW: rc = leader_inc_hw(m, a, s, o, &p); break;
        case A_REPLICATE: rc = follower_replicate(m, a, s, o, &p, 0); break;
        case A_TRUNCATE: rc = become_follower_truncate(m, a, s, o); break;
        case A_F_FETCH: rc = follower_replicate(m, a, s, o, &p, 1); break;
        case A_F_INC_HW: rc = fenced_inc_hw(m, a, s, o); break;
        case A_F_SHRINK: rc = fenced_shrink(m, a, s, o, &p); break;
        case A_F_EXPAND: rc = fenced_expand(m, a, s, o, &p); break;
        case A_F_TRUNCATE: rc = fenced_truncate(m, a, s, o, &p); break;
        default: {
            if (o->list == NULL) {
                rc = -1;
                break;
            }
            if (pres == NULL) {
                pres = PyObject_CallOneArg(m->presuming, state);
                if (pres == NULL) {
                    rc = -1;
                    break;
                }
            }
            PyObject *r = PyObject_CallFunctionObjArgs(a->callable, state, o->list, pres, NULL);
            if (r == NULL)
                rc = -1;
            else
                Py_DECREF(r);
        }
        }
    }
    Py_XDECREF(pres);
    return rc;
}

static const unsigned char *
state_bytes(Native *m, PyObject *state)
{
    if (!PyBytes_CheckExact(state)) {
        PyErr_SetString(PyExc_TypeError, "a tla state must be bytes");
        return NULL;
    }
    if (PyBytes_GET_SIZE(state) != m->size) {
        PyErr_Format(PyExc_ValueError, "a tla state of %zd bytes, expected %d",
                     PyBytes_GET_SIZE(state), m->size);
        return NULL;
    }
    return (const unsigned char *)PyBytes_AS_STRING(state);
}

static PyObject *
Native_next_states(Native *m, PyObject *state)
{
    const unsigned char *s = state_bytes(m, state);
    if (s == NULL)
        return NULL;
    PyObject *out = PyList_New(0);
    if (out == NULL)
        return NULL;
    unsigned char w[m->size];
    Out o = {out, NULL, NULL, w};
    if (run_actions(m, state, s, &o) < 0) {
        Py_DECREF(out);
        return NULL;
    }
    return out;
}

/* TlaModel._replicated_below_hw (WeakIsr: quorum = 0, StrongIsr: quorum = 1). */
static int
replicated_below_hw_c(const Native *m, const unsigned char *s, int quorum)
{
    for (int i = 0; i < m->n; i++) {
        int a = m->bases[i];
        if (s[a + LEADER] != m->lb + i)
            continue;
        int hw = s[a + HW];
        if (hw == 0)
            continue;
        int isr = quorum ? s[2] : s[a + ISR];
        if (m->nmembers[isr] == 0)
            continue;
        if (s[a + END] < hw)
            return 0;
        for (int q = 0; q < m->nmembers[isr]; q++) {
            int b = m->bases[m->members[isr][q]] + LOG;
            if (memcmp(s + a + LOG, s + b, hw) != 0)
                return 0;
        }
    }
    return 1;
}

static PyObject *
replicated_below_hw(Native *m, PyObject *state, int quorum)
{
    const unsigned char *s = state_bytes(m, state);
    if (s == NULL)
        return NULL;
    return PyBool_FromLong(replicated_below_hw_c(m, s, quorum));
}

/* Layout.canonical: the smallest renaming of the state over all replica permutations.  The
 * header comes first and has a fixed length, so only the permutations giving the smallest
 * renamed header are applied to the replica blocks. */
static void
canonical_into(const Native *m, const unsigned char *s, unsigned char *best,
               unsigned char *cand)
{
    int h = m->header, size = m->size, B = m->block;
    /* 1. the smallest renamed header, and the first permutation giving it */
    int first = 0;
    const unsigned char *t0 = m->perm_tables;
    for (int x = 0; x < h; x++)
        best[x] = t0[s[x]];
    for (int p = 1; p < m->nperms; p++) {
        const unsigned char *t = m->perm_tables + 256 * p;
        for (int x = 0; x < h; x++) {
            int c = t[s[x]];
            if (c != best[x]) {
                if (c < best[x]) {
                    first = p;
                    for (int y = x; y < h; y++)
                        best[y] = t[s[y]];
                }
                break;
            }
        }
    }
    /* 2. among the permutations with that header, the smallest whole state */
    int have = 0;
    for (int p = first; p < m->nperms; p++) {
        const unsigned char *t = m->perm_tables + 256 * p;
        unsigned char *out = have ? cand : best;
        int x = 0;
        if (p != first) {
            for (; x < h; x++)
                if ((unsigned char)t[s[x]] != best[x])
                    break;
            if (x < h)
                continue;  /* another header: not a tie */
        }
        else {
            for (; x < h; x++)
                out[x] = t[s[x]];
        }
        if (have)
            memcpy(out, best, h);
        const unsigned char *inverse = m->perm_inverse + m->n * p;
        for (int pos = 0; pos < m->n; pos++) {
            const unsigned char *src = s + m->bases[inverse[pos]];
            unsigned char *dst = out + h + pos * B;
            for (int y = 0; y < B; y++)
                dst[y] = t[src[y]];
        }
        if (!have)
            have = 1;
        else if (memcmp(cand + h, best + h, size - h) < 0)
            memcpy(best + h, cand + h, size - h);
    }
}

static PyObject *
Native_canonical(Native *m, PyObject *state)
{
    const unsigned char *s = state_bytes(m, state);
    if (s == NULL)
        return NULL;
    canonical_into(m, s, m->scratch, m->scratch + m->size);
    return PyBytes_FromStringAndSize((const char *)m->scratch, m->size);
}

/* -- the checker's C interface (checker/_successors.h) ------------------------------------- */

typedef struct {
    isrlab_successors abi;  /* abi.model points back to this struct */
    Native *m;              /* kept alive by the capsule's context */
    unsigned char quorum[16];  /* per invariant: 0 WeakIsr, 1 StrongIsr */
} NativeAbi;

static int
abi_next(void *model, const unsigned char *s, isrlab_emit_fn emit_fn, void *ctx)
{
    Native *m = ((NativeAbi *)model)->m;
    unsigned char w[m->size];
    Out o = {NULL, emit_fn, ctx, w};
    return run_actions(m, NULL, s, &o);
}

static void
abi_canonical(void *model, const unsigned char *s, unsigned char *out, unsigned char *scratch)
{
    canonical_into(((NativeAbi *)model)->m, s, out, scratch);
}

static int
abi_holds(void *model, int index, const unsigned char *s)
{
    const NativeAbi *x = model;
    return replicated_below_hw_c(x->m, s, x->quorum[index]);
}

static void
abi_free(PyObject *capsule)
{
    NativeAbi *x = PyCapsule_GetPointer(capsule, ISRLAB_SUCCESSORS_CAPSULE);
    PyMem_Free(x);
    Py_XDECREF((PyObject *)PyCapsule_GetContext(capsule));
}

/* Native.successors(invariants) -> capsule or None
 *
 * This object's Next, canonical form and ISR invariants through the checker's C interface
 * (checker/_successors.h), or None when some disjunct or truncation rule runs in Python.
 * ``invariants``: one code per invariant of the model (0 WeakIsr, 1 StrongIsr), or None
 * when some invariant has no C version. */
static PyObject *
Native_successors(Native *m, PyObject *invariants)
{
    if (m->has_python)
        Py_RETURN_NONE;
    for (Py_ssize_t x = 0; x < m->nactions; x++) {
        int code = m->actions[x].code;
        if ((code == A_TRUNCATE || code == A_F_TRUNCATE) && m->actions[x].inline_rule == RULE_MEMO)
            Py_RETURN_NONE;
    }
    NativeAbi *x = PyMem_Calloc(1, sizeof(NativeAbi));
    if (x == NULL)
        return PyErr_NoMemory();
    x->m = m;
    x->abi.size = m->size;
    x->abi.model = x;
    x->abi.next = abi_next;
    x->abi.canonical = abi_canonical;
    x->abi.holds = abi_holds;
    x->abi.ninvariants = -1;
    if (invariants != Py_None) {
        if (!PyTuple_Check(invariants) || PyTuple_GET_SIZE(invariants) > 16) {
            PyMem_Free(x);
            PyErr_SetString(PyExc_TypeError, "successors(): a tuple of invariant codes or None");
            return NULL;
        }
        for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(invariants); i++) {
            long code = PyLong_AsLong(PyTuple_GET_ITEM(invariants, i));
            if (code != 0 && code != 1) {
                PyMem_Free(x);
                if (!PyErr_Occurred())
                    PyErr_SetString(PyExc_ValueError, "successors(): invariant codes are 0 or 1");
                return NULL;
            }
            x->quorum[i] = (unsigned char)code;
        }
        x->abi.ninvariants = (int)PyTuple_GET_SIZE(invariants);
    }
    PyObject *capsule = PyCapsule_New(x, ISRLAB_SUCCESSORS_CAPSULE, abi_free);
    if (capsule == NULL) {
        PyMem_Free(x);
        return NULL;
    }
    Py_INCREF(m);
    if (PyCapsule_SetContext(capsule, m) < 0) {
        Py_DECREF(m);
        Py_DECREF(capsule);
        return NULL;
    }
    return capsule;
}

static PyObject *
Native_weak_isr(Native *m, PyObject *state)
{
    return replicated_below_hw(m, state, 0);
}

static PyObject *
Native_strong_isr(Native *m, PyObject *state)
{
    return replicated_below_hw(m, state, 1);
}

static void
Native_dealloc(Native *m)
{
    if (m->actions != NULL) {
        for (Py_ssize_t x = 0; x < m->nactions; x++) {
            Py_XDECREF(m->actions[x].labels);
            Py_XDECREF(m->actions[x].memo);
            Py_XDECREF(m->actions[x].rule);
            Py_XDECREF(m->actions[x].callable);
        }
        PyMem_Free(m->actions);
    }
    PyMem_Free(m->fetched_hw);
    PyMem_Free(m->perm_tables);
    PyMem_Free(m->perm_inverse);
    PyMem_Free(m->scratch);
    Py_XDECREF(m->truncated);
    Py_XDECREF(m->presuming);
    Py_TYPE(m)->tp_free((PyObject *)m);
}

/* Native(constants, bases, fetched_hw, truncated, presuming, actions, permutations, tables)
 *   constants: (n, L, R, E, header, block, size, leader_base, none, isr_base)
 *   bases: tuple of n ints;  fetched_hw: bytes of (L+1)^2
 *   actions: sequence of (code, labels, memo, rule, callable, twice, inline_rule)
 *   permutations: Layout.permutations;  tables: Layout's byte renamings, one per permutation */
static PyObject *
Native_new(PyTypeObject *type, PyObject *args, PyObject *kwds)
{
    PyObject *bases, *fetched, *truncated, *presuming, *actions, *perms, *tables;
    int c[10];
    if (!PyArg_ParseTuple(args, "(iiiiiiiiii)O!O!OOOO!O!", &c[0], &c[1], &c[2], &c[3], &c[4],
                          &c[5], &c[6], &c[7], &c[8], &c[9], &PyTuple_Type, &bases,
                          &PyBytes_Type, &fetched, &truncated, &presuming, &actions,
                          &PyTuple_Type, &perms, &PyTuple_Type, &tables))
        return NULL;
    Native *m = (Native *)type->tp_alloc(type, 0);
    if (m == NULL)
        return NULL;
    m->n = c[0]; m->L = c[1]; m->R = c[2]; m->E = c[3]; m->header = c[4]; m->block = c[5];
    m->size = c[6]; m->lb = c[7]; m->none = c[8]; m->ib = c[9];
    if (m->n < 1 || m->n > MAXN || PyTuple_GET_SIZE(bases) != m->n
        || PyBytes_GET_SIZE(fetched) != (m->L + 1) * (m->L + 1) || m->ib < 0 || m->ib > 255) {
        PyErr_SetString(PyExc_ValueError, "native: inconsistent constants");
        Py_DECREF(m);
        return NULL;
    }
    for (int i = 0; i < m->n; i++) {
        m->bases[i] = (int)PyLong_AsLong(PyTuple_GET_ITEM(bases, i));
        if (PyErr_Occurred()) {
            Py_DECREF(m);
            return NULL;
        }
    }
    for (int code = 0; code < 256; code++) {
        m->nmembers[code] = 0;
        if (code >= m->ib)
            for (int i = 0; i < m->n; i++)
                if (((code - m->ib) >> i) & 1)
                    m->members[code][m->nmembers[code]++] = (unsigned char)i;
        m->epoch_of[code] = (signed char)(code ? (code - 1) % (m->E + 1) : -1);
    }
    m->fetched_hw = PyMem_Malloc(PyBytes_GET_SIZE(fetched));
    if (m->fetched_hw == NULL) {
        Py_DECREF(m);
        return PyErr_NoMemory();
    }
    memcpy(m->fetched_hw, PyBytes_AS_STRING(fetched), PyBytes_GET_SIZE(fetched));
    m->nperms = (int)PyTuple_GET_SIZE(perms);
    m->perm_tables = PyMem_Malloc(256 * (m->nperms ? m->nperms : 1));
    m->perm_inverse = PyMem_Malloc(MAXN * (m->nperms ? m->nperms : 1));
    m->scratch = PyMem_Malloc(2 * (size_t)m->size);
    if (m->perm_tables == NULL || m->perm_inverse == NULL || m->scratch == NULL) {
        Py_DECREF(m);
        return PyErr_NoMemory();
    }
    if (m->nperms < 1 || PyTuple_GET_SIZE(tables) != m->nperms || m->size < m->header
        || m->size != m->header + m->n * m->block) {
        PyErr_SetString(PyExc_ValueError, "native: inconsistent permutations");
        Py_DECREF(m);
        return NULL;
    }
    for (int p = 0; p < m->nperms; p++) {
        PyObject *table = PyTuple_GET_ITEM(tables, p), *perm = PyTuple_GET_ITEM(perms, p);
        if (!PyBytes_Check(table) || PyBytes_GET_SIZE(table) != 256 || !PyTuple_Check(perm)
            || PyTuple_GET_SIZE(perm) != m->n) {
            PyErr_SetString(PyExc_ValueError, "native: bad permutation");
            Py_DECREF(m);
            return NULL;
        }
        memcpy(m->perm_tables + 256 * p, PyBytes_AS_STRING(table), 256);
        for (int i = 0; i < m->n; i++) {
            long target = PyLong_AsLong(PyTuple_GET_ITEM(perm, i));
            if (target < 0 || target >= m->n) {
                if (!PyErr_Occurred())
                    PyErr_SetString(PyExc_ValueError, "native: bad permutation");
                Py_DECREF(m);
                return NULL;
            }
            m->perm_inverse[m->n * p + target] = (unsigned char)i;
        }
    }
    Py_INCREF(truncated);
    m->truncated = truncated;
    Py_INCREF(presuming);
    m->presuming = presuming;
    PyObject *seq = PySequence_Fast(actions, "actions must be a sequence");
    if (seq == NULL) {
        Py_DECREF(m);
        return NULL;
    }
    m->nactions = PySequence_Fast_GET_SIZE(seq);
    m->actions = PyMem_Calloc(m->nactions ? m->nactions : 1, sizeof(ActionEntry));
    if (m->actions == NULL) {
        Py_DECREF(seq);
        Py_DECREF(m);
        return PyErr_NoMemory();
    }
    for (Py_ssize_t x = 0; x < m->nactions; x++) {
        ActionEntry *a = &m->actions[x];
        PyObject *labels, *memo, *rule, *callable;
        if (!PyArg_ParseTuple(PySequence_Fast_GET_ITEM(seq, x), "iOOOOpi", &a->code, &labels,
                              &memo, &rule, &callable, &a->twice, &a->inline_rule)) {
            Py_DECREF(seq);
            Py_DECREF(m);
            return NULL;
        }
        Py_INCREF(labels); a->labels = labels;
        Py_INCREF(memo); a->memo = memo;
        Py_INCREF(rule); a->rule = rule;
        Py_INCREF(callable); a->callable = callable;
        if (a->code < 0 || a->code > A_LAST || a->inline_rule < 0 || a->inline_rule > RULE_LAST
            || (a->code != A_PYTHON && !PyTuple_Check(labels))
            || ((a->code == A_TRUNCATE || a->code == A_F_TRUNCATE) && !PyDict_CheckExact(memo))
            || (a->code == A_PYTHON && !PyCallable_Check(callable))) {
            PyErr_Format(PyExc_ValueError, "native: bad action entry %zd", x);
            Py_DECREF(seq);
            Py_DECREF(m);
            return NULL;
        }
        if (a->code == A_PYTHON)
            m->has_python = 1;
    }
    Py_DECREF(seq);
    return (PyObject *)m;
}

static PyMethodDef Native_methods[] = {
    {"next_states", (PyCFunction)Native_next_states, METH_O,
     "Every enabled (label, successor) of Next, as TlaModel.next_states."},
    {"weak_isr", (PyCFunction)Native_weak_isr, METH_O, "WeakIsr, as TlaModel.weak_isr."},
    {"canonical", (PyCFunction)Native_canonical, METH_O,
     "The orbit representative, as Layout.canonical."},
    {"strong_isr", (PyCFunction)Native_strong_isr, METH_O, "StrongIsr, as TlaModel.strong_isr."},
    {"successors", (PyCFunction)Native_successors, METH_O,
     "successors(invariant_codes): Next for the checker's C interface (see the source)."},
    {NULL, NULL, 0, NULL},
};

static PyTypeObject NativeType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "isrlab.spec.tla._native.Native",
    .tp_basicsize = sizeof(Native),
    .tp_dealloc = (destructor)Native_dealloc,
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "The compiled Next of one TlaModel (see the module's source).",
    .tp_methods = Native_methods,
    .tp_new = Native_new,
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT, "isrlab.spec.tla._native",
    "The compiled successor function of the tla-* models (pure Python: isrlab.spec.tla.model).",
    -1, NULL,
};

PyMODINIT_FUNC
PyInit__native(void)
{
    if (PyType_Ready(&NativeType) < 0)
        return NULL;
    PyObject *mod = PyModule_Create(&module);
    if (mod == NULL)
        return NULL;
    Py_INCREF(&NativeType);
    if (PyModule_AddObject(mod, "Native", (PyObject *)&NativeType) < 0) {
        Py_DECREF(&NativeType);
        Py_DECREF(mod);
        return NULL;
    }
    if (PyModule_AddIntConstant(mod, "ABI", 1) < 0) {
        Py_DECREF(mod);
        return NULL;
    }
    return mod;
}
