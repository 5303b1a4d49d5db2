/* isrlab.checker._fpset: a set of 64-bit fingerprints, compiled.
 *
 * The breadth-first checker's visited set (isrlab.checker.bfs) holds one fingerprint per
 * distinct state.  A Python set of ints costs about 100 bytes per entry and boxes every
 * fingerprint it is fed from an array('Q'); this one stores the raw 64-bit values in an
 * open-addressing table (linear probing, at most 5/8 full: 13 to 26 bytes per entry) and
 * reads arrays through the buffer protocol.  It offers exactly what bfs.py uses of a set:
 * ``fp in s``, ``s.update(iterable)`` (an array('Q') or any iterable of ints) and
 * ``len(s)``.  When this module is not built, bfs.py uses a Python set: same answers.
 *
 * ``scan`` and ``expand`` are level_worker.py's per-successor loop and its loop over a
 * frontier slice, transcribed, for every model without a view: a model's ``encode`` is
 * called through vectorcall (not at all for a model whose states are bytes and their own
 * encoding), the encoding fingerprinted by the XXH3-64 of checker/_xxh3.h, and a Python
 * int made only for a successor not seen before.  level_worker.py keeps the Python loops,
 * used when this is not built or ISRLAB_PURE_PYTHON=1.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <string.h>

#include "_xxh3.h"

static PyTypeObject FpSetType;

/* A new (parent, label) link: untracked by the cyclic collector when the label is an
 * atomic object (a str: the tuple cannot be part of a cycle), as CPython itself would do at
 * the tuple's first collection, after scanning it. */
static PyObject *
new_link(PyObject *parent, PyObject *label)
{
    PyObject *link = PyTuple_Pack(2, parent, label);
    if (link != NULL && !PyObject_GC_IsTracked(parent) && !PyObject_GC_IsTracked(label))
        PyObject_GC_UnTrack(link);
    return link;
}

/* ``*out`` = an int in 0 .. 2**64 - 1; -1 (an exception set) for anything else. */
static int
as_u64(PyObject *value, uint64_t *out)
{
    *out = PyLong_AsUnsignedLongLong(value);
    return (*out == (uint64_t)-1 && PyErr_Occurred()) ? -1 : 0;
}

typedef struct {
    PyObject_HEAD
    uint64_t *table;  /* 0 marks an empty slot; the fingerprint 0 is kept in has_zero */
    size_t mask;      /* capacity - 1 (capacity a power of two) */
    size_t used;      /* non-zero fingerprints stored */
    int has_zero;
} FpSet;

static inline size_t
slot_of(uint64_t fp, size_t mask)
{
    /* Fingerprints are xxh3 digests, already uniform; mixing keeps other inputs fair. */
    return (size_t)((fp * 0x9E3779B97F4A7C15ULL) >> 17) & mask;
}

static int
grow(FpSet *s)
{
    size_t capacity = (s->mask + 1) * 2;
    uint64_t *table = PyMem_Calloc(capacity, sizeof(uint64_t));
    if (table == NULL) {
        PyErr_NoMemory();
        return -1;
    }
    size_t mask = capacity - 1;
    for (size_t i = 0; i <= s->mask; i++) {
        uint64_t fp = s->table[i];
        if (fp == 0)
            continue;
        size_t j = slot_of(fp, mask);
        while (table[j] != 0)
            j = (j + 1) & mask;
        table[j] = fp;
    }
    PyMem_Free(s->table);
    s->table = table;
    s->mask = mask;
    return 0;
}

static inline int
contains(const FpSet *s, uint64_t fp)
{
    if (fp == 0)
        return s->has_zero;
    size_t j = slot_of(fp, s->mask);
    for (;;) {
        uint64_t v = s->table[j];
        if (v == fp)
            return 1;
        if (v == 0)
            return 0;
        j = (j + 1) & s->mask;
    }
}

static inline int
add(FpSet *s, uint64_t fp)
{
    if (fp == 0) {
        s->has_zero = 1;
        return 0;
    }
    if ((s->used + 1) * 8 > (s->mask + 1) * 5 && grow(s) < 0)
        return -1;
    size_t j = slot_of(fp, s->mask);
    for (;;) {
        uint64_t v = s->table[j];
        if (v == fp)
            return 0;
        if (v == 0) {
            s->table[j] = fp;
            s->used++;
            return 0;
        }
        j = (j + 1) & s->mask;
    }
}

static PyObject *
FpSet_new(PyTypeObject *type, PyObject *args, PyObject *kwds)
{
    if (!PyArg_ParseTuple(args, ":FpSet"))
        return NULL;
    FpSet *s = (FpSet *)type->tp_alloc(type, 0);
    if (s == NULL)
        return NULL;
    s->mask = 1023;
    s->table = PyMem_Calloc(s->mask + 1, sizeof(uint64_t));
    if (s->table == NULL) {
        Py_DECREF(s);
        return PyErr_NoMemory();
    }
    return (PyObject *)s;
}

static void
FpSet_dealloc(FpSet *s)
{
    PyMem_Free(s->table);
    Py_TYPE(s)->tp_free((PyObject *)s);
}

static int
FpSet_contains(FpSet *s, PyObject *key)
{
    if (!PyLong_Check(key))
        return 0;
    uint64_t fp = PyLong_AsUnsignedLongLong(key);
    if (fp == (uint64_t)-1 && PyErr_Occurred()) {
        PyErr_Clear();  /* negative or too large: never a fingerprint */
        return 0;
    }
    return contains(s, fp);
}

static Py_ssize_t
FpSet_len(FpSet *s)
{
    return (Py_ssize_t)(s->used + (size_t)s->has_zero);
}

static PyObject *
FpSet_update(FpSet *s, PyObject *items)
{
    if (PyObject_CheckBuffer(items)) {
        Py_buffer view;
        if (PyObject_GetBuffer(items, &view, PyBUF_FORMAT | PyBUF_C_CONTIGUOUS) == 0) {
            int ok = view.itemsize == 8 && view.format != NULL
                     && (strcmp(view.format, "Q") == 0 || strcmp(view.format, "L") == 0
                         || strcmp(view.format, "K") == 0);
            if (ok) {
                const uint64_t *fps = (const uint64_t *)view.buf;
                Py_ssize_t count = view.len / 8;
                for (Py_ssize_t i = 0; i < count; i++) {
                    if (add(s, fps[i]) < 0) {
                        PyBuffer_Release(&view);
                        return NULL;
                    }
                }
                PyBuffer_Release(&view);
                Py_RETURN_NONE;
            }
            PyBuffer_Release(&view);
        }
        else {
            PyErr_Clear();
        }
    }
    PyObject *iterator = PyObject_GetIter(items);
    if (iterator == NULL)
        return NULL;
    PyObject *item;
    while ((item = PyIter_Next(iterator)) != NULL) {
        uint64_t fp = PyLong_AsUnsignedLongLong(item);
        Py_DECREF(item);
        if ((fp == (uint64_t)-1 && PyErr_Occurred()) || add(s, fp) < 0) {
            Py_DECREF(iterator);
            return NULL;
        }
    }
    Py_DECREF(iterator);
    if (PyErr_Occurred())
        return NULL;
    Py_RETURN_NONE;
}

static PyObject *
FpSet_sizeof(FpSet *s, PyObject *unused)
{
    return PyLong_FromSize_t(sizeof(FpSet) + (s->mask + 1) * sizeof(uint64_t));
}

/* -- the checker's per-successor loop -------------------------------------------------------- */

/* cov[label] += 1, as collections.Counter.update does for a dict. */
static int
count_label(PyObject *cov, PyObject *label)
{
    PyObject *old = PyDict_GetItemWithError(cov, label);
    if (old == NULL && PyErr_Occurred())
        return -1;
    PyObject *one = PyLong_FromLong(1);
    PyObject *new = old == NULL ? one : PyNumber_Add(old, one);
    if (old != NULL)
        Py_XDECREF(one);
    if (new == NULL)
        return -1;
    int rc = PyDict_SetItem(cov, label, new);
    Py_DECREF(new);
    return rc;
}

/* The bytes a state is fingerprinted by (a new reference): ``encode(state)``, or the state
 * itself when ``encode`` is None (a model whose states are their own encoding). */
static PyObject *
encoding_of(PyObject *state, PyObject *encode)
{
    if (encode == Py_None) {
        Py_INCREF(state);
        return state;
    }
    return PyObject_CallOneArg(encode, state);
}

/* ``*fp`` = the fingerprint of ``bytes``: ``digest(bytes)``, or when ``digest`` is None the
 * XXH3-64 of checker/_xxh3.h (the same number, without a call into Python). */
static int
digest_of(PyObject *bytes, PyObject *digest, uint64_t *fp)
{
    if (digest == Py_None) {
        if (!PyBytes_Check(bytes)) {
            PyErr_Format(PyExc_TypeError, "a state's encoding must be bytes, not %.100s",
                         Py_TYPE(bytes)->tp_name);
            return -1;
        }
        *fp = xxh3((const unsigned char *)PyBytes_AS_STRING(bytes),
                   (size_t)PyBytes_GET_SIZE(bytes));
        return 0;
    }
    PyObject *value = PyObject_CallOneArg(digest, bytes);
    if (value == NULL)
        return -1;
    *fp = PyLong_AsUnsignedLongLong(value);
    Py_DECREF(value);
    return (*fp == (uint64_t)-1 && PyErr_Occurred()) ? -1 : 0;
}

/* ``*fp`` = the fingerprint of ``*successor`` (a reference the caller owns): that of its
 * encoding (``encoding_of``); with symmetry (``orbit_of`` not None) that of its orbit's
 * representative, from ``orbit_of`` (raw fingerprint -> representative's, as ints) or, on a
 * miss, from ``canonical(successor)``, which then replaces ``*successor``.  When
 * ``encoding`` is not NULL, ``*encoding`` receives the encoding fingerprinted last (a new
 * reference; on an orbit cache hit the raw successor's: the state is then seen or linked,
 * never a candidate).  -1 on error (``*successor`` may then be NULL). */
static int
fingerprint_of(PyObject **successor, PyObject **encoding, uint64_t *fp, PyObject *digest,
               PyObject *orbit_of, PyObject *canonical, PyObject *encode)
{
    PyObject *bytes = encoding_of(*successor, encode);
    int rc = bytes == NULL ? -1 : digest_of(bytes, digest, fp);
    if (rc == 0 && orbit_of != Py_None) {
        PyObject *raw = PyLong_FromUnsignedLongLong(*fp);
        PyObject *known = raw ? PyDict_GetItemWithError(orbit_of, raw) : NULL;
        if (known != NULL) {
            *fp = PyLong_AsUnsignedLongLong(known);
            rc = (*fp == (uint64_t)-1 && PyErr_Occurred()) ? -1 : 0;
        }
        else if (raw == NULL || PyErr_Occurred()) {
            rc = -1;
        }
        else {
            PyObject *representative = PyObject_CallOneArg(canonical, *successor);
            Py_DECREF(*successor);
            *successor = representative;
            Py_CLEAR(bytes);
            bytes = representative ? encoding_of(representative, encode) : NULL;
            rc = bytes == NULL ? -1 : digest_of(bytes, digest, fp);
            PyObject *value = rc == 0 ? PyLong_FromUnsignedLongLong(*fp) : NULL;
            if (value == NULL || PyDict_SetItem(orbit_of, raw, value) < 0)
                rc = -1;
            Py_XDECREF(value);
        }
        Py_XDECREF(raw);
    }
    if (rc == 0 && encoding != NULL)
        *encoding = bytes;
    else
        Py_XDECREF(bytes);
    return rc;
}

/* Whether the link (parent, label) sorts before ``old`` (a (parent, label) tuple), as
 * tuples compare; -1 on error. */
static int
link_less(PyObject *parent, PyObject *label, PyObject *old)
{
    if (!PyTuple_CheckExact(old) || PyTuple_GET_SIZE(old) != 2) {
        PyErr_SetString(PyExc_TypeError, "scan(): a link must be (parent, label)");
        return -1;
    }
    PyObject *old_parent = PyTuple_GET_ITEM(old, 0), *old_label = PyTuple_GET_ITEM(old, 1);
    int same = PyObject_RichCompareBool(parent, old_parent, Py_EQ);
    if (same < 0)
        return -1;
    if (!same)
        return PyObject_RichCompareBool(parent, old_parent, Py_LT);
    return PyObject_RichCompareBool(label, old_label, Py_LT);
}

#define LABEL_SLOTS 256
#define LABEL_ROWS 128

/* The loop's fixed arguments, and its label counts not yet added to ``cov``: label
 * objects (strong references) in first-seen order with their counts, found by address. */
typedef struct {
    PyObject *seen, *links, *candidates, *digest, *orbit_of, *canonical, *encode;
    PyObject *encodings;  /* a list, or NULL: no encodings kept */
    PyObject *cov;        /* a dict, or NULL: labels not counted here */
    FpSet *fpset;         /* ``seen`` when it is an FpSet, else NULL */
    PyObject *label[LABEL_ROWS];
    Py_ssize_t count[LABEL_ROWS];
    int rows;
    unsigned char slot[LABEL_SLOTS];  /* row + 1; 0 marks an empty slot */
} Scan;

/* Add the pending label counts to ``cov`` (cov[label] += count, in first-seen order) and
 * drop them; an exception already set is kept (the counts are added all the same). */
static int
labels_flush(Scan *a)
{
    PyObject *type, *value, *traceback;
    PyErr_Fetch(&type, &value, &traceback);
    int rc = 0;
    for (int row = 0; row < a->rows; row++) {
        PyObject *label = a->label[row];
        PyObject *old = rc == 0 ? PyDict_GetItemWithError(a->cov, label) : NULL;
        PyObject *add = rc == 0 && (old != NULL || !PyErr_Occurred())
                        ? PyLong_FromSsize_t(a->count[row]) : NULL;
        PyObject *sum = add == NULL ? NULL : old == NULL ? (Py_INCREF(add), add)
                        : PyNumber_Add(old, add);
        if (sum == NULL || PyDict_SetItem(a->cov, label, sum) < 0)
            rc = -1;
        Py_XDECREF(add);
        Py_XDECREF(sum);
        Py_DECREF(label);
    }
    a->rows = 0;
    memset(a->slot, 0, sizeof a->slot);
    if (type != NULL)
        PyErr_Restore(type, value, traceback);
    return type != NULL ? -1 : rc;
}

/* One more successor by ``label``: counted by the label object's address (models build
 * their labels once), added to ``cov`` by ``labels_flush``. */
static int
labels_count(Scan *a, PyObject *label)
{
    size_t j = ((uintptr_t)label >> 4) & (LABEL_SLOTS - 1);
    for (; a->slot[j] != 0; j = (j + 1) & (LABEL_SLOTS - 1)) {
        if (a->label[a->slot[j] - 1] == label) {
            a->count[a->slot[j] - 1]++;
            return 0;
        }
    }
    if (a->rows == LABEL_ROWS) {
        if (labels_flush(a) < 0)
            return -1;
        j = ((uintptr_t)label >> 4) & (LABEL_SLOTS - 1);
    }
    Py_INCREF(label);
    a->label[a->rows] = label;
    a->count[a->rows] = 1;
    a->slot[j] = (unsigned char)++a->rows;
    return 0;
}

/* Whether the visited set holds ``fp`` (1, 0, or -1 on error). */
static int
seen_holds(const Scan *a, uint64_t fp)
{
    if (a->fpset != NULL)
        return contains(a->fpset, fp);
    PyObject *key = PyLong_FromUnsignedLongLong(fp);
    int known = key ? PySequence_Contains(a->seen, key) : -1;
    Py_XDECREF(key);
    return known;
}

/* A fingerprinted successor (``state`` and ``encoding``: borrowed, ``encoding`` NULL when
 * no encodings are kept) of the state of fingerprint ``pfp`` by ``label``: skipped when
 * seen, else linked (the smallest link kept) and, when new, made a candidate. */
static int
record(const Scan *a, PyObject *pfp, PyObject *label, PyObject *state, PyObject *encoding,
       uint64_t fp)
{
    int known = seen_holds(a, fp);
    if (known != 0)
        return known < 0 ? -1 : 0;
    PyObject *key = PyLong_FromUnsignedLongLong(fp);
    if (key == NULL)
        return -1;
    int rc;
    PyObject *old = PyDict_GetItemWithError(a->links, key);
    if (old != NULL) {
        int less = link_less(pfp, label, old);
        if (less > 0) {
            PyObject *link = new_link(pfp, label);
            rc = (link == NULL || PyDict_SetItem(a->links, key, link) < 0) ? -1 : 0;
            Py_XDECREF(link);
        }
        else {
            rc = less;
        }
    }
    else if (PyErr_Occurred()) {
        rc = -1;
    }
    else {
        PyObject *link = new_link(pfp, label);
        rc = (link == NULL || PyDict_SetItem(a->links, key, link) < 0
              || PyList_Append(a->candidates, state) < 0
              || (a->encodings != NULL && PyList_Append(a->encodings, encoding) < 0)) ? -1 : 0;
        Py_XDECREF(link);
    }
    Py_DECREF(key);
    return rc;
}

#define BATCH 32

/* The (label, successor) pairs of the list ``successors`` of the state of fingerprint
 * ``pfp``, in batches: each successor's label counted (when ``cov`` is given) and its
 * fingerprint computed, the visited set's slot for it fetched ahead into the cache, then
 * each recorded in order (``record``).  The same results as one successor at a time: the
 * orbit cache and ``canonical`` are used in the same order, and neither depends on
 * ``links`` or on the visited set, which does not change during a level's expansion. */
static int
scan_list(Scan *a, PyObject *successors, PyObject *pfp)
{
    Py_ssize_t count = PyList_GET_SIZE(successors);
    struct { PyObject *label, *state, *encoding; uint64_t fp; } batch[BATCH];
    for (Py_ssize_t start = 0; start < count; start += BATCH) {
        Py_ssize_t size = count - start < BATCH ? count - start : BATCH, filled = 0;
        int rc = 0;
        for (Py_ssize_t k = 0; k < size; k++) {
            PyObject *pair = PyList_GET_ITEM(successors, start + k);
            if (!PyTuple_CheckExact(pair) || PyTuple_GET_SIZE(pair) != 2) {
                PyErr_SetString(PyExc_TypeError,
                                "scan(): successors must be (label, state) pairs");
                rc = -1;
                break;
            }
            PyObject *label = PyTuple_GET_ITEM(pair, 0), *state = PyTuple_GET_ITEM(pair, 1);
            if (a->cov != NULL && labels_count(a, label) < 0) {
                rc = -1;
                break;
            }
            PyObject *encoding = NULL;
            uint64_t fp;
            Py_INCREF(state);
            if (fingerprint_of(&state, a->encodings ? &encoding : NULL, &fp, a->digest,
                               a->orbit_of, a->canonical, a->encode) < 0) {
                Py_XDECREF(state);
                rc = -1;
                break;
            }
            if (a->fpset != NULL && fp != 0)
                __builtin_prefetch(&a->fpset->table[slot_of(fp, a->fpset->mask)]);
            batch[k].label = label;
            batch[k].state = state;
            batch[k].encoding = encoding;
            batch[k].fp = fp;
            filled++;
        }
        for (Py_ssize_t k = 0; k < filled; k++) {
            if (rc == 0)
                rc = record(a, pfp, batch[k].label, batch[k].state, batch[k].encoding,
                            batch[k].fp);
            Py_DECREF(batch[k].state);
            Py_XDECREF(batch[k].encoding);
        }
        if (rc < 0)
            return -1;
    }
    return 0;
}

/* The Scan of the arguments seen, links, candidates, digest, orbit_of, canonical, encode,
 * encodings (``args[0..7]``) and ``cov``; -1 (an exception set) when one is wrong. */
static int
scan_args(Scan *a, PyObject *const *args, PyObject *cov)
{
    a->seen = args[0];
    a->links = args[1];
    a->candidates = args[2];
    a->digest = args[3];
    a->orbit_of = args[4];
    a->canonical = args[5];
    a->encode = args[6];
    a->encodings = args[7] == Py_None ? NULL : args[7];
    a->cov = cov;
    a->fpset = PyObject_TypeCheck(a->seen, &FpSetType) ? (FpSet *)a->seen : NULL;
    a->rows = 0;
    memset(a->slot, 0, sizeof a->slot);
    if (!PyDict_CheckExact(a->links) || !PyList_CheckExact(a->candidates)
        || (a->encodings != NULL && !PyList_CheckExact(a->encodings))) {
        PyErr_SetString(PyExc_TypeError,
                        "scan(): links, candidates and encodings must be a dict, a list and "
                        "a list or None");
        return -1;
    }
    if (a->orbit_of != Py_None && !PyDict_CheckExact(a->orbit_of)) {
        PyErr_SetString(PyExc_TypeError, "scan(): orbit_of must be a dict or None");
        return -1;
    }
    return 0;
}

/* scan(successors, pfp, seen, links, candidates, digest, orbit_of, canonical, encode,
 *      encodings) -> None
 *
 * The inner loop of isrlab.checker.level_worker._Worker.expand (``_scan_python``),
 * transcribed: for each (label, successor) of ``successors`` (a list), its fingerprint:
 * ``digest`` (None: the XXH3-64 of checker/_xxh3.h) of its encoding, ``encode(successor)``
 * (``encode`` None: the successor is bytes, its own encoding); with symmetry ``orbit_of``
 * maps the raw fingerprint to the representative's, ``canonical`` gives a representative
 * on a miss.  Skipped when in ``seen``; else linked in ``links`` (fingerprint -> (parent,
 * label), the smallest link kept) and, when new there, appended to ``candidates`` and its
 * encoding to ``encodings`` (unless None). */
static PyObject *
scan(PyObject *module, PyObject *const *args, Py_ssize_t nargs)
{
    if (nargs != 10) {
        PyErr_SetString(PyExc_TypeError, "scan() takes 10 arguments");
        return NULL;
    }
    if (!PyList_CheckExact(args[0])) {
        PyErr_SetString(PyExc_TypeError, "scan(): successors must be a list");
        return NULL;
    }
    Scan a;
    if (scan_args(&a, args + 2, NULL) < 0 || scan_list(&a, args[0], args[1]) < 0)
        return NULL;
    Py_RETURN_NONE;
}

/* expand(fps, states, next_states, cov, seen, links, candidates, digest, orbit_of,
 *        canonical, encode, encodings) -> (generated, deadlocked)
 *
 * level_worker._Worker.expand's loop over (a slice of) the frontier: ``next_states`` of each
 * state, every successor's label counted in ``cov`` (as collections.Counter.update, the
 * counts added at the end, or when ``next_states`` raises), then
 * ``scan`` of its successors with the state's fingerprint as parent.  Returns the number of
 * successors and the list of fingerprints of the states that had none. */
static PyObject *
expand(PyObject *module, PyObject *const *args, Py_ssize_t nargs)
{
    if (nargs != 12) {
        PyErr_SetString(PyExc_TypeError, "expand() takes 12 arguments");
        return NULL;
    }
    PyObject *fps = args[0], *states = args[1], *next_states = args[2], *cov = args[3];
    if (!PyList_CheckExact(fps) || !PyList_CheckExact(states) || !PyDict_CheckExact(cov)
        || PyList_GET_SIZE(fps) != PyList_GET_SIZE(states)) {
        PyErr_SetString(PyExc_TypeError, "expand(): fps and states: lists of one length");
        return NULL;
    }
    Scan a;
    if (scan_args(&a, args + 4, cov) < 0)
        return NULL;
    PyObject *deadlocked = PyList_New(0);
    if (deadlocked == NULL)
        return NULL;
    Py_ssize_t generated = 0;
    for (Py_ssize_t i = 0; i < PyList_GET_SIZE(states); i++) {
        PyObject *pfp = PyList_GET_ITEM(fps, i);
        PyObject *successors = PyObject_CallOneArg(next_states, PyList_GET_ITEM(states, i));
        if (successors != NULL && !PyList_CheckExact(successors)) {
            PyObject *as_list = PySequence_List(successors);
            Py_DECREF(successors);
            successors = as_list;
        }
        if (successors == NULL) {
            labels_flush(&a);
            Py_DECREF(deadlocked);
            return NULL;
        }
        Py_ssize_t count = PyList_GET_SIZE(successors);
        int rc = scan_list(&a, successors, pfp);
        Py_DECREF(successors);
        if (rc < 0 || (count == 0 && PyList_Append(deadlocked, pfp) < 0)) {
            labels_flush(&a);
            Py_DECREF(deadlocked);
            return NULL;
        }
        generated += count;
    }
    if (labels_flush(&a) < 0) {
        Py_DECREF(deadlocked);
        return NULL;
    }
    return Py_BuildValue("(nN)", generated, deadlocked);
}

/* link_columns(links, cov, inside) -> (fps, parents, frontier_fps)
 *
 * level_worker._Worker._finish_level's columns of a level's links (fingerprint ->
 * (parent, label)), in one pass: the fingerprints and the parents as native uint64 bytes,
 * and for the states within the boundary (``inside[i]`` true, or every state when
 * ``inside`` is None) the fingerprints as a list of ints, each label counted in ``cov``
 * (as collections.Counter.update: labels in first-seen order). */
static PyObject *
link_columns(PyObject *module, PyObject *const *args, Py_ssize_t nargs)
{
    if (nargs != 3 || !PyDict_CheckExact(args[0]) || !PyDict_CheckExact(args[1])
        || (args[2] != Py_None && (!PyList_CheckExact(args[2])
                                   || PyList_GET_SIZE(args[2]) != PyDict_GET_SIZE(args[0])))) {
        PyErr_SetString(PyExc_TypeError,
                        "link_columns(links: dict, cov: dict, inside: list (one per link) "
                        "or None)");
        return NULL;
    }
    PyObject *links = args[0], *cov = args[1], *inside = args[2];
    Py_ssize_t count = PyDict_GET_SIZE(links);
    PyObject *fps = PyBytes_FromStringAndSize(NULL, count * 8);
    PyObject *parents = PyBytes_FromStringAndSize(NULL, count * 8);
    PyObject *frontier = PyList_New(0);
    if (fps == NULL || parents == NULL || frontier == NULL)
        goto fail;
    char *fp_bytes = PyBytes_AS_STRING(fps), *parent_bytes = PyBytes_AS_STRING(parents);
    Py_ssize_t pos = 0, i = 0;
    PyObject *key, *link;
    while (PyDict_Next(links, &pos, &key, &link)) {
        if (!PyTuple_CheckExact(link) || PyTuple_GET_SIZE(link) != 2) {
            PyErr_SetString(PyExc_TypeError, "link_columns(): a link must be (parent, label)");
            goto fail;
        }
        uint64_t fp, parent;
        if (as_u64(key, &fp) < 0 || as_u64(PyTuple_GET_ITEM(link, 0), &parent) < 0)
            goto fail;
        memcpy(fp_bytes + 8 * i, &fp, 8);
        memcpy(parent_bytes + 8 * i, &parent, 8);
        int within = inside == Py_None ? 1 : PyObject_IsTrue(PyList_GET_ITEM(inside, i));
        if (within < 0 || (within && (count_label(cov, PyTuple_GET_ITEM(link, 1)) < 0
                                      || PyList_Append(frontier, key) < 0)))
            goto fail;
        i++;
    }
    return Py_BuildValue("(NNN)", fps, parents, frontier);
fail:
    Py_XDECREF(fps);
    Py_XDECREF(parents);
    Py_XDECREF(frontier);
    return NULL;
}

/* failures(states, predicates) -> [(predicate index, state index), ...]
 *
 * level_worker._Worker._finish_level's check of a level's new states: every predicate
 * (an invariant's ``holds``) on every state, state by state (a state's objects stay in the
 * cache while its predicates run), each called through vectorcall; the pairs for which it
 * is false, in that order.  An exception a predicate raises is raised. */
static PyObject *
failures(PyObject *module, PyObject *const *args, Py_ssize_t nargs)
{
    if (nargs != 2 || !PyList_CheckExact(args[0]) || !PyTuple_CheckExact(args[1])) {
        PyErr_SetString(PyExc_TypeError, "failures(states: list, predicates: tuple)");
        return NULL;
    }
    PyObject *states = args[0], *predicates = args[1];
    Py_ssize_t count = PyTuple_GET_SIZE(predicates);
    PyObject *found = PyList_New(0);
    if (found == NULL)
        return NULL;
    for (Py_ssize_t i = 0; i < PyList_GET_SIZE(states); i++) {
        PyObject *state = PyList_GET_ITEM(states, i);
        Py_INCREF(state);
        for (Py_ssize_t j = 0; j < count; j++) {
            PyObject *verdict = PyObject_CallOneArg(PyTuple_GET_ITEM(predicates, j), state);
            int holds = verdict == NULL ? -1
                        : verdict == Py_True ? 1 : verdict == Py_False ? 0
                        : PyObject_IsTrue(verdict);
            Py_XDECREF(verdict);
            PyObject *pair = holds == 0 ? Py_BuildValue("(nn)", j, i) : NULL;
            if (holds < 0 || (holds == 0 && (pair == NULL || PyList_Append(found, pair) < 0))) {
                Py_XDECREF(pair);
                Py_DECREF(state);
                Py_DECREF(found);
                return NULL;
            }
            Py_XDECREF(pair);
        }
        Py_DECREF(state);
    }
    return found;
}



/* split(links, candidates, workers, me) -> (own_links, own_candidates, parts, every)
 *
 * bfs._Worker._publish's partition of a level's candidates by owner (fingerprint %
 * workers), in one pass: this worker's own links (a dict) and candidates (a list), and for
 * every worker a part (fingerprints as array('Q') bytes, parents likewise, labels, states),
 * None at ``me``; and every candidate's fingerprint (array('Q') bytes).  ``links``
 * (fingerprint -> (parent, label)) and ``candidates`` are in the same order. */
static PyObject *
split(PyObject *module, PyObject *const *args, Py_ssize_t nargs)
{
    if (nargs != 4 || !PyDict_CheckExact(args[0]) || !PyList_CheckExact(args[1])) {
        PyErr_SetString(PyExc_TypeError, "split(links: dict, candidates: list, workers, me)");
        return NULL;
    }
    PyObject *links = args[0], *candidates = args[1];
    long workers = PyLong_AsLong(args[2]), me = PyLong_AsLong(args[3]);
    if (PyErr_Occurred())
        return NULL;
    Py_ssize_t total = PyDict_GET_SIZE(links);
    if (workers < 1 || me < 0 || me >= workers || PyList_GET_SIZE(candidates) != total) {
        PyErr_SetString(PyExc_ValueError, "split(): inconsistent arguments");
        return NULL;
    }
    PyObject *own_links = PyDict_New(), *own = PyList_New(0);
    PyObject *parts = PyList_New(workers);
    uint64_t **fps = PyMem_Calloc(workers, sizeof(uint64_t *));
    uint64_t **parents = PyMem_Calloc(workers, sizeof(uint64_t *));
    Py_ssize_t *counts = PyMem_Calloc(workers, sizeof(Py_ssize_t));
    PyObject **labels = PyMem_Calloc(workers, sizeof(PyObject *));
    PyObject **states = PyMem_Calloc(workers, sizeof(PyObject *));
    uint64_t *all = PyMem_Malloc(sizeof(uint64_t) * (total ? total : 1));
    PyObject *result = NULL, *every = NULL;
    if (own_links == NULL || own == NULL || parts == NULL || fps == NULL || parents == NULL
        || counts == NULL || labels == NULL || states == NULL || all == NULL) {
        PyErr_NoMemory();
        goto done;
    }
    for (long w = 0; w < workers; w++) {
        if (w == me)
            continue;
        fps[w] = PyMem_Malloc(sizeof(uint64_t) * (total ? total : 1));
        parents[w] = PyMem_Malloc(sizeof(uint64_t) * (total ? total : 1));
        labels[w] = PyList_New(0);
        states[w] = PyList_New(0);
        if (fps[w] == NULL || parents[w] == NULL || labels[w] == NULL || states[w] == NULL) {
            PyErr_NoMemory();
            goto done;
        }
    }
    Py_ssize_t pos = 0, index = 0;
    PyObject *key, *link;
    while (PyDict_Next(links, &pos, &key, &link)) {
        uint64_t fp = PyLong_AsUnsignedLongLong(key);
        if (fp == (uint64_t)-1 && PyErr_Occurred())
            goto done;
        all[index] = fp;
        PyObject *state = PyList_GET_ITEM(candidates, index++);
        long owner = (long)(fp % (uint64_t)workers);
        if (owner == me) {
            if (PyDict_SetItem(own_links, key, link) < 0 || PyList_Append(own, state) < 0)
                goto done;
            continue;
        }
        if (!PyTuple_CheckExact(link) || PyTuple_GET_SIZE(link) != 2) {
            PyErr_SetString(PyExc_TypeError, "split(): a link must be (parent, label)");
            goto done;
        }
        uint64_t parent = PyLong_AsUnsignedLongLong(PyTuple_GET_ITEM(link, 0));
        if (parent == (uint64_t)-1 && PyErr_Occurred())
            goto done;
        fps[owner][counts[owner]] = fp;
        parents[owner][counts[owner]] = parent;
        counts[owner]++;
        if (PyList_Append(labels[owner], PyTuple_GET_ITEM(link, 1)) < 0
            || PyList_Append(states[owner], state) < 0)
            goto done;
    }
    for (long w = 0; w < workers; w++) {
        PyObject *part;
        if (w == me) {
            Py_INCREF(Py_None);
            part = Py_None;
        }
        else {
            part = Py_BuildValue(
                "(y#y#OO)", (const char *)fps[w], (Py_ssize_t)(counts[w] * 8),
                (const char *)parents[w], (Py_ssize_t)(counts[w] * 8), labels[w], states[w]);
            if (part == NULL)
                goto done;
        }
        PyList_SET_ITEM(parts, w, part);
    }
    every = PyBytes_FromStringAndSize(NULL, total * 8);
    if (every == NULL)
        goto done;
    memcpy(PyBytes_AS_STRING(every), all, total * 8);
    result = PyTuple_Pack(4, own_links, own, parts, every);
done:
    for (long w = 0; w < workers && fps != NULL; w++) {
        PyMem_Free(fps[w]);
        PyMem_Free(parents[w]);
        Py_XDECREF(labels[w]);
        Py_XDECREF(states[w]);
    }
    PyMem_Free(fps);
    PyMem_Free(parents);
    PyMem_Free(all);
    Py_XDECREF(every);
    PyMem_Free(counts);
    PyMem_Free(labels);
    PyMem_Free(states);
    Py_XDECREF(own_links);
    Py_XDECREF(own);
    Py_XDECREF(parts);
    return result;
}

/* merge(links, states, fps, parents, labels, received) -> None
 *
 * bfs._Worker.merge's intake of another worker's part: for each record (fingerprint and
 * parent from the array('Q') bytes ``fps`` and ``parents``, ``labels[i]``,
 * ``received[i]``), a fingerprint not in ``links`` is linked and its state appended to
 * ``states``; one already there keeps the smaller (parent, label) link and its state. */
static PyObject *
merge(PyObject *module, PyObject *const *args, Py_ssize_t nargs)
{
    if (nargs != 6 || !PyDict_CheckExact(args[0]) || !PyList_CheckExact(args[1])
        || !PyBytes_Check(args[2]) || !PyBytes_Check(args[3]) || !PyList_CheckExact(args[4])
        || !PyList_CheckExact(args[5])) {
        PyErr_SetString(PyExc_TypeError,
                        "merge(links: dict, states: list, fps: bytes, parents: bytes, "
                        "labels: list, received: list)");
        return NULL;
    }
    PyObject *links = args[0], *states = args[1], *labels = args[4], *received = args[5];
    Py_ssize_t count = PyBytes_GET_SIZE(args[2]) / 8;
    if (PyBytes_GET_SIZE(args[2]) != count * 8 || PyBytes_GET_SIZE(args[3]) != count * 8
        || PyList_GET_SIZE(labels) != count || PyList_GET_SIZE(received) != count) {
        PyErr_SetString(PyExc_ValueError, "merge(): columns of different lengths");
        return NULL;
    }
    const char *fps = PyBytes_AS_STRING(args[2]), *parents = PyBytes_AS_STRING(args[3]);
    for (Py_ssize_t i = 0; i < count; i++) {
        uint64_t fp, parent;
        memcpy(&fp, fps + 8 * i, 8);
        memcpy(&parent, parents + 8 * i, 8);
        PyObject *key = PyLong_FromUnsignedLongLong(fp);
        PyObject *p = PyLong_FromUnsignedLongLong(parent);
        PyObject *link = (key && p) ? new_link(p, PyList_GET_ITEM(labels, i)) : NULL;
        Py_XDECREF(p);
        PyObject *old = link ? PyDict_GetItemWithError(links, key) : NULL;
        int rc = 0;
        if (link == NULL || (old == NULL && PyErr_Occurred())) {
            rc = -1;
        }
        else if (old == NULL) {
            if (PyDict_SetItem(links, key, link) < 0
                || PyList_Append(states, PyList_GET_ITEM(received, i)) < 0)
                rc = -1;
        }
        else {
            int less = PyObject_RichCompareBool(link, old, Py_LT);
            if (less < 0 || (less && PyDict_SetItem(links, key, link) < 0))
                rc = -1;
        }
        Py_XDECREF(key);
        Py_XDECREF(link);
        if (rc < 0)
            return NULL;
    }
    Py_RETURN_NONE;
}

/* -- the Spark engine's expansion into columns ------------------------------------------------ */

/* The successors of one bucket, deduplicated, as growing columns: unsigned fingerprints,
 * parents and label codes (one each per row) and the states' bytes (Arrow's binary layout:
 * ``offsets[row] .. offsets[row + 1]`` of ``data``); ``slots`` finds a fingerprint's row
 * (row + 1 in an open-addressing table, 0 for an empty slot). */
typedef struct {
    uint64_t *fps, *parents;
    int32_t *codes, *offsets;
    char *data;
    Py_ssize_t rows, capacity;
    size_t used, room;
    Py_ssize_t *slots;
    size_t mask;
    int64_t *counts;  /* generated successors per label code */
    PyObject *by_label;  /* label -> code (a dict) */
    PyObject *names;  /* code -> label (a list): the number of codes is its length */
} Columns;

static void
columns_free(Columns *c)
{
    PyMem_Free(c->fps);
    PyMem_Free(c->parents);
    PyMem_Free(c->codes);
    PyMem_Free(c->offsets);
    PyMem_Free(c->data);
    PyMem_Free(c->slots);
    PyMem_Free(c->counts);
    Py_XDECREF(c->by_label);
    Py_XDECREF(c->names);
}

/* Room for one more row (and its slot at most 1/2 full). */
static int
columns_reserve(Columns *c)
{
    if (c->rows + 1 >= c->capacity) {
        Py_ssize_t capacity = c->capacity ? c->capacity * 2 : 4096;
        uint64_t *fps = PyMem_Realloc(c->fps, capacity * sizeof(uint64_t));
        if (fps != NULL) c->fps = fps;
        uint64_t *parents = fps ? PyMem_Realloc(c->parents, capacity * sizeof(uint64_t)) : NULL;
        if (parents != NULL) c->parents = parents;
        int32_t *codes = parents ? PyMem_Realloc(c->codes, capacity * sizeof(int32_t)) : NULL;
        if (codes != NULL) c->codes = codes;
        int32_t *offsets = codes ? PyMem_Realloc(c->offsets, (capacity + 1) * sizeof(int32_t))
                                 : NULL;
        if (offsets == NULL) {
            PyErr_NoMemory();
            return -1;
        }
        c->offsets = offsets;
        c->capacity = capacity;
    }
    if ((size_t)(c->rows + 1) * 2 > c->mask + 1 || c->slots == NULL) {
        size_t size = c->slots ? (c->mask + 1) * 2 : 8192;
        Py_ssize_t *slots = PyMem_Calloc(size, sizeof(Py_ssize_t));
        if (slots == NULL) {
            PyErr_NoMemory();
            return -1;
        }
        for (Py_ssize_t row = 0; row < c->rows; row++) {
            size_t j = slot_of(c->fps[row], size - 1);
            while (slots[j] != 0)
                j = (j + 1) & (size - 1);
            slots[j] = row + 1;
        }
        PyMem_Free(c->slots);
        c->slots = slots;
        c->mask = size - 1;
    }
    return 0;
}

/* The code of ``label`` (its index in ``names``), a new one for a label not seen before;
 * its generated count goes up by one.  -1 on error. */
static Py_ssize_t
columns_count(Columns *c, PyObject *label)
{
    PyObject *known = PyDict_GetItemWithError(c->by_label, label);
    Py_ssize_t code;
    if (known != NULL) {
        code = PyLong_AsSsize_t(known);
    }
    else {
        if (PyErr_Occurred())
            return -1;
        code = PyList_GET_SIZE(c->names);
        if (code >= INT32_MAX) {
            PyErr_SetString(PyExc_OverflowError, "columns(): too many labels");
            return -1;
        }
        int64_t *counts = PyMem_Realloc(c->counts, (code + 1) * sizeof(int64_t));
        PyObject *value = counts ? PyLong_FromSsize_t(code) : NULL;
        if (counts != NULL)
            c->counts = counts;
        if (value == NULL || PyDict_SetItem(c->by_label, label, value) < 0
            || PyList_Append(c->names, label) < 0) {
            Py_XDECREF(value);
            if (!PyErr_Occurred())
                PyErr_NoMemory();
            return -1;
        }
        Py_DECREF(value);
        c->counts[code] = 0;
    }
    c->counts[code]++;
    return code;
}

/* Add a successor (fingerprint ``fp``, bytes ``state``) of ``parent`` by the label of code
 * ``code``; a fingerprint already there keeps the smaller (parent, label): parents ascend,
 * so only a same-parent link with a smaller label replaces the old one. */
static int
columns_add(Columns *c, uint64_t fp, uint64_t parent, Py_ssize_t code, PyObject *state)
{
    if (columns_reserve(c) < 0)
        return -1;
    size_t j = slot_of(fp, c->mask);
    for (; c->slots[j] != 0; j = (j + 1) & c->mask) {
        Py_ssize_t row = c->slots[j] - 1;
        if (c->fps[row] != fp)
            continue;
        if (c->parents[row] == parent && code != c->codes[row]) {
            int less = PyObject_RichCompareBool(PyList_GET_ITEM(c->names, code),
                                                PyList_GET_ITEM(c->names, c->codes[row]), Py_LT);
            if (less < 0)
                return -1;
            if (less)
                c->codes[row] = (int32_t)code;
        }
        return 0;
    }
    char *bytes;
    Py_ssize_t size;
    if (PyBytes_AsStringAndSize(state, &bytes, &size) < 0)
        return -1;
    if (c->used + (size_t)size > INT32_MAX) {
        PyErr_SetString(PyExc_OverflowError,
                        "columns(): a bucket's successors exceed 2 GiB (use more buckets)");
        return -1;
    }
    if (c->used + (size_t)size > c->room) {
        size_t room = c->room ? c->room * 2 : 1 << 16;
        while (room < c->used + (size_t)size)
            room *= 2;
        char *data = PyMem_Realloc(c->data, room);
        if (data == NULL) {
            PyErr_NoMemory();
            return -1;
        }
        c->data = data;
        c->room = room;
    }
    memcpy(c->data + c->used, bytes, (size_t)size);
    Py_ssize_t row = c->rows++;
    c->slots[j] = row + 1;
    c->fps[row] = fp;
    c->parents[row] = parent;
    c->codes[row] = (int32_t)code;
    c->offsets[row] = (int32_t)c->used;
    c->used += (size_t)size;
    return 0;
}

/* The successors of one state (``next_states``' list of (label, bytes) pairs) added. */
static int
columns_scan(Columns *c, PyObject *successors, uint64_t parent, PyObject *digest,
             PyObject *orbit_of, PyObject *canonical)
{
    for (Py_ssize_t x = 0; x < PyList_GET_SIZE(successors); x++) {
        PyObject *pair = PyList_GET_ITEM(successors, x);
        if (!PyTuple_CheckExact(pair) || PyTuple_GET_SIZE(pair) != 2) {
            PyErr_SetString(PyExc_TypeError, "columns(): successors must be (label, state) pairs");
            return -1;
        }
        Py_ssize_t code = columns_count(c, PyTuple_GET_ITEM(pair, 0));
        if (code < 0)
            return -1;
        PyObject *successor = PyTuple_GET_ITEM(pair, 1);
        Py_INCREF(successor);
        uint64_t value;
        int rc = fingerprint_of(&successor, NULL, &value, digest, orbit_of, canonical, Py_None);
        if (rc == 0)
            rc = columns_add(c, value, parent, code, successor);
        Py_XDECREF(successor);
        if (rc < 0)
            return -1;
    }
    return 0;
}

/* columns(parents, states, next_states, digest, orbit_of, canonical)
 *   -> (fps, links, label_codes, labels, offsets, data, counts, deadlocked)
 *
 * The Spark engine's expansion of one bucket (spark_explore/tasks.py): ``next_states`` of
 * each state of ``states`` (bytes, their own encoding) whose unsigned fingerprint is
 * ``parents[i]`` (native uint64 bytes, ascending); every successor fingerprinted as ``scan``
 * does and kept once, with the smallest (parent, label).  Returns the rows as native bytes:
 * fingerprints and parents (uint64) and label codes (int32), with the list of labels by
 * code (in first-seen order); the states as Arrow binary offsets (int32, rows + 1) and data;
 * the generated successors per label code (int64); and the parents that had no successor
 * (uint64). */
static PyObject *
columns(PyObject *module, PyObject *const *args, Py_ssize_t nargs)
{
    if (nargs != 6 || !PyBytes_Check(args[0]) || !PyList_CheckExact(args[1])
        || (args[4] != Py_None && !PyDict_CheckExact(args[4]))) {
        PyErr_SetString(PyExc_TypeError,
                        "columns(parents: bytes, states: list, next_states, digest, orbit_of, "
                        "canonical)");
        return NULL;
    }
    Py_ssize_t count = PyList_GET_SIZE(args[1]);
    if (PyBytes_GET_SIZE(args[0]) != count * 8) {
        PyErr_SetString(PyExc_ValueError, "columns(): one parent per state");
        return NULL;
    }
    Columns c = {0};
    c.by_label = PyDict_New();
    c.names = PyList_New(0);
    c.counts = PyMem_Malloc(sizeof(int64_t));
    uint64_t *dead = PyMem_Malloc(sizeof(uint64_t) * (count ? count : 1));
    Py_ssize_t deadlocked = 0;
    PyObject *result = NULL;
    if (c.by_label == NULL || c.names == NULL || c.counts == NULL || dead == NULL
        || columns_reserve(&c) < 0) {
        if (!PyErr_Occurred())
            PyErr_NoMemory();
        goto done;
    }
    const char *parents = PyBytes_AS_STRING(args[0]);
    for (Py_ssize_t i = 0; i < count; i++) {
        uint64_t parent;
        memcpy(&parent, parents + 8 * i, 8);
        PyObject *successors = PyObject_CallOneArg(args[2], PyList_GET_ITEM(args[1], i));
        if (successors != NULL && !PyList_CheckExact(successors)) {
            PyObject *as_list = PySequence_List(successors);
            Py_DECREF(successors);
            successors = as_list;
        }
        if (successors == NULL)
            goto done;
        if (PyList_GET_SIZE(successors) == 0)
            dead[deadlocked++] = parent;
        int rc = columns_scan(&c, successors, parent, args[3], args[4], args[5]);
        Py_DECREF(successors);
        if (rc < 0)
            goto done;
    }
    c.offsets[c.rows] = (int32_t)c.used;
    result = Py_BuildValue(
        "(y#y#y#Oy#y#y#y#)", (const char *)c.fps, c.rows * 8, (const char *)c.parents,
        c.rows * 8, (const char *)c.codes, c.rows * 4, c.names, (const char *)c.offsets,
        (c.rows + 1) * 4, c.data ? c.data : "", (Py_ssize_t)c.used, (const char *)c.counts,
        PyList_GET_SIZE(c.names) * 8, (const char *)dead, deadlocked * 8);
done:
    columns_free(&c);
    PyMem_Free(dead);
    return result;
}

/* -- the level being built, compactly: LinkTable ----------------------------------------------- */

/* A run directory's search (isrlab.checker.diskbfs) writes each new state to disk when it is
 * found and keeps in memory only its fingerprint and its link: this table maps a fingerprint
 * to (parent fingerprint, label code), 20 bytes a row in insertion order plus a 4-byte slot
 * (open addressing, at most 1/2 full): 28 to 44 bytes a state of the level being built,
 * where a Python dict of (parent, label) tuples takes about 200.  ``names`` is the list of
 * labels by code (the caller appends new ones); with ``keep_first`` a row's link never
 * changes (TLC's VIEW: the first state found is kept, with its link), otherwise the smallest
 * (parent, label) wins, labels compared as strings.  ``claim`` marks a row taken (the top
 * bit of its code) and hands its link out once. */

#define CLAIMED 0x80000000u

typedef struct {
    PyObject_HEAD
    uint64_t *fps, *parents;
    uint32_t *codes;
    size_t rows, capacity;
    uint32_t *slots;  /* row + 1; 0 marks an empty slot */
    size_t mask;
    PyObject *names;
    int keep_first;
} LinkTable;

static int
table_reserve(LinkTable *t)
{
    if (t->rows + 1 > t->capacity) {
        size_t capacity = t->capacity ? t->capacity + t->capacity / 2 : 4096;
        if (capacity >= 0x7fffffffu) {
            PyErr_SetString(PyExc_OverflowError, "LinkTable: too many rows");
            return -1;
        }
        uint64_t *fps = PyMem_Realloc(t->fps, capacity * sizeof(uint64_t));
        if (fps != NULL) t->fps = fps;
        uint64_t *parents = fps ? PyMem_Realloc(t->parents, capacity * sizeof(uint64_t)) : NULL;
        if (parents != NULL) t->parents = parents;
        uint32_t *codes = parents ? PyMem_Realloc(t->codes, capacity * sizeof(uint32_t)) : NULL;
        if (codes == NULL) {
            PyErr_NoMemory();
            return -1;
        }
        t->codes = codes;
        t->capacity = capacity;
    }
    if ((t->rows + 1) * 2 > t->mask + 1) {
        size_t size = (t->mask + 1) * 2;
        uint32_t *slots = PyMem_Calloc(size, sizeof(uint32_t));
        if (slots == NULL) {
            PyErr_NoMemory();
            return -1;
        }
        for (size_t row = 0; row < t->rows; row++) {
            size_t j = slot_of(t->fps[row], size - 1);
            while (slots[j] != 0)
                j = (j + 1) & (size - 1);
            slots[j] = (uint32_t)(row + 1);
        }
        PyMem_Free(t->slots);
        t->slots = slots;
        t->mask = size - 1;
    }
    return 0;
}

/* The row of ``fp`` or -1; ``*slot`` is where it is or would go. */
static Py_ssize_t
table_find(const LinkTable *t, uint64_t fp, size_t *slot)
{
    size_t j = slot_of(fp, t->mask);
    for (; t->slots[j] != 0; j = (j + 1) & t->mask) {
        size_t row = t->slots[j] - 1;
        if (t->fps[row] == fp) {
            *slot = j;
            return (Py_ssize_t)row;
        }
    }
    *slot = j;
    return -1;
}

/* Whether label ``a`` sorts before label ``b`` (codes into ``names``); -1 on error. */
static int
label_less(LinkTable *t, uint32_t a, uint32_t b)
{
    Py_ssize_t n = PyList_GET_SIZE(t->names);
    if ((Py_ssize_t)a >= n || (Py_ssize_t)b >= n) {
        PyErr_SetString(PyExc_IndexError, "LinkTable: a label code without a name");
        return -1;
    }
    return PyObject_RichCompareBool(PyList_GET_ITEM(t->names, a),
                                    PyList_GET_ITEM(t->names, b), Py_LT);
}

/* Add or improve the link of ``fp``: 1 when the row is new, 0 when it was there, -1 on
 * error. */
static int
table_offer(LinkTable *t, uint64_t fp, uint64_t parent, uint32_t code)
{
    if (code & CLAIMED) {
        PyErr_SetString(PyExc_OverflowError, "LinkTable: label code too large");
        return -1;
    }
    if (table_reserve(t) < 0)
        return -1;
    size_t j;
    Py_ssize_t row = table_find(t, fp, &j);
    if (row >= 0) {
        if (t->keep_first)
            return 0;
        uint32_t old = t->codes[row] & ~CLAIMED;
        int less = parent < t->parents[row];
        if (parent == t->parents[row] && code != old) {
            less = label_less(t, code, old);
            if (less < 0)
                return -1;
        }
        if (less) {
            t->parents[row] = parent;
            t->codes[row] = code | (t->codes[row] & CLAIMED);
        }
        return 0;
    }
    row = (Py_ssize_t)t->rows++;
    t->fps[row] = fp;
    t->parents[row] = parent;
    t->codes[row] = code;
    t->slots[j] = (uint32_t)(row + 1);
    return 1;
}

static PyObject *
LinkTable_new(PyTypeObject *type, PyObject *args, PyObject *kwds)
{
    PyObject *names;
    int keep_first;
    if (!PyArg_ParseTuple(args, "O!p:LinkTable", &PyList_Type, &names, &keep_first))
        return NULL;
    LinkTable *t = (LinkTable *)type->tp_alloc(type, 0);
    if (t == NULL)
        return NULL;
    t->mask = 8191;
    t->slots = PyMem_Calloc(t->mask + 1, sizeof(uint32_t));
    if (t->slots == NULL) {
        Py_DECREF(t);
        return PyErr_NoMemory();
    }
    Py_INCREF(names);
    t->names = names;
    t->keep_first = keep_first;
    return (PyObject *)t;
}

static void
LinkTable_dealloc(LinkTable *t)
{
    PyMem_Free(t->fps);
    PyMem_Free(t->parents);
    PyMem_Free(t->codes);
    PyMem_Free(t->slots);
    Py_XDECREF(t->names);
    Py_TYPE(t)->tp_free((PyObject *)t);
}

/* offer(fp, parent, code) -> bool: whether fp is new in the table. */
static PyObject *
LinkTable_offer(LinkTable *t, PyObject *const *args, Py_ssize_t nargs)
{
    uint64_t fp, parent, code;
    if (nargs != 3) {
        PyErr_SetString(PyExc_TypeError, "offer(fp, parent, code)");
        return NULL;
    }
    if (as_u64(args[0], &fp) < 0 || as_u64(args[1], &parent) < 0 || as_u64(args[2], &code) < 0)
        return NULL;
    if (code > 0x7fffffffu) {
        PyErr_SetString(PyExc_OverflowError, "LinkTable: label code too large");
        return NULL;
    }
    int rc = table_offer(t, fp, parent, (uint32_t)code);
    if (rc < 0)
        return NULL;
    return PyBool_FromLong(rc);
}

/* offer_columns(fps, parents, codes): ``offer`` of every row of three native columns
 * (uint64, uint64, uint32 bytes). */
static PyObject *
LinkTable_offer_columns(LinkTable *t, PyObject *const *args, Py_ssize_t nargs)
{
    if (nargs != 3 || !PyBytes_Check(args[0]) || !PyBytes_Check(args[1])
        || !PyBytes_Check(args[2])) {
        PyErr_SetString(PyExc_TypeError, "offer_columns(fps: bytes, parents: bytes, codes: bytes)");
        return NULL;
    }
    Py_ssize_t count = PyBytes_GET_SIZE(args[0]) / 8;
    if (PyBytes_GET_SIZE(args[0]) != count * 8 || PyBytes_GET_SIZE(args[1]) != count * 8
        || PyBytes_GET_SIZE(args[2]) != count * 4) {
        PyErr_SetString(PyExc_ValueError, "offer_columns(): columns of different lengths");
        return NULL;
    }
    const char *fps = PyBytes_AS_STRING(args[0]), *parents = PyBytes_AS_STRING(args[1]);
    const char *codes = PyBytes_AS_STRING(args[2]);
    for (Py_ssize_t i = 0; i < count; i++) {
        uint64_t fp, parent;
        uint32_t code;
        memcpy(&fp, fps + 8 * i, 8);
        memcpy(&parent, parents + 8 * i, 8);
        memcpy(&code, codes + 4 * i, 4);
        if (table_offer(t, fp, parent, code) < 0)
            return NULL;
    }
    Py_RETURN_NONE;
}

/* claim(fp) -> (parent, code) the first time for a row, else None (taken, or absent). */
static PyObject *
LinkTable_claim(LinkTable *t, PyObject *key)
{
    uint64_t fp;
    if (as_u64(key, &fp) < 0)
        return NULL;
    size_t j;
    Py_ssize_t row = table_find(t, fp, &j);
    if (row < 0 || (t->codes[row] & CLAIMED))
        Py_RETURN_NONE;
    t->codes[row] |= CLAIMED;
    return Py_BuildValue("(KI)", (unsigned long long)t->parents[row],
                         (unsigned int)(t->codes[row] & ~CLAIMED));
}

/* columns() -> (fps, parents, codes): every row in insertion order, as native bytes. */
static PyObject *
LinkTable_columns(LinkTable *t, PyObject *unused)
{
    uint32_t *codes = PyMem_Malloc((t->rows ? t->rows : 1) * sizeof(uint32_t));
    if (codes == NULL)
        return PyErr_NoMemory();
    for (size_t i = 0; i < t->rows; i++)
        codes[i] = t->codes[i] & ~CLAIMED;
    PyObject *result = Py_BuildValue(  /* an empty table has no arrays: "" (y# of NULL is None) */
        "(y#y#y#)", t->rows ? (const char *)t->fps : "", (Py_ssize_t)(t->rows * 8),
        t->rows ? (const char *)t->parents : "", (Py_ssize_t)(t->rows * 8), (const char *)codes,
        (Py_ssize_t)(t->rows * 4));
    PyMem_Free(codes);
    return result;
}

static Py_ssize_t
LinkTable_len(LinkTable *t)
{
    return (Py_ssize_t)t->rows;
}

static PyObject *
LinkTable_sizeof(LinkTable *t, PyObject *unused)
{
    return PyLong_FromSize_t(sizeof(LinkTable) + t->capacity * 20 + (t->mask + 1) * 4);
}

static PyMethodDef LinkTable_methods[] = {
    {"offer", (PyCFunction)(void (*)(void))LinkTable_offer, METH_FASTCALL,
     "offer(fp, parent, code) -> bool: add fp's link, or improve it (see the source)."},
    {"offer_columns", (PyCFunction)(void (*)(void))LinkTable_offer_columns, METH_FASTCALL,
     "offer_columns(fps, parents, codes): offer every row of native uint64/uint64/uint32 bytes."},
    {"claim", (PyCFunction)LinkTable_claim, METH_O,
     "claim(fp) -> (parent, code) once per row, else None."},
    {"columns", (PyCFunction)LinkTable_columns, METH_NOARGS,
     "columns() -> (fps, parents, codes) as native bytes, in insertion order."},
    {"__sizeof__", (PyCFunction)LinkTable_sizeof, METH_NOARGS, "Bytes used."},
    {NULL, NULL, 0, NULL},
};

static PySequenceMethods LinkTable_as_sequence = {
    .sq_length = (lenfunc)LinkTable_len,
};

static PyTypeObject LinkTableType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "isrlab.checker._fpset.LinkTable",
    .tp_basicsize = sizeof(LinkTable),
    .tp_dealloc = (destructor)LinkTable_dealloc,
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "LinkTable(names, keep_first): fingerprint -> (parent, label code), compactly.",
    .tp_as_sequence = &LinkTable_as_sequence,
    .tp_methods = LinkTable_methods,
    .tp_new = LinkTable_new,
};

static PyMethodDef module_methods[] = {
    {"expand", (PyCFunction)(void (*)(void))expand, METH_FASTCALL,
     "expand(fps, states, next_states, cov, seen, links, candidates, digest, orbit_of, "
     "canonical, encode, encodings): the checker's loop over a frontier slice (see the "
     "source)."},
    {"split", (PyCFunction)(void (*)(void))split, METH_FASTCALL,
     "split(links, candidates, workers, me): a level's candidates by owner (see the source)."},
    {"merge", (PyCFunction)(void (*)(void))merge, METH_FASTCALL,
     "merge(links, states, fps, parents, labels, received): another worker's part merged."},
    {"columns", (PyCFunction)(void (*)(void))columns, METH_FASTCALL,
     "columns(parents, states, next_states, digest, orbit_of, canonical): "
     "the Spark engine's expansion of a bucket into columns (see the source)."},
    {"scan", (PyCFunction)(void (*)(void))scan, METH_FASTCALL,
     "scan(successors, pfp, seen, links, candidates, digest, orbit_of, canonical, encode, "
     "encodings): the checker's per-successor loop (see checker/_fpset.c)."},
    {"link_columns", (PyCFunction)(void (*)(void))link_columns, METH_FASTCALL,
     "link_columns(links, cov, inside) -> (fps, parents, frontier_fps): a level's links "
     "as columns, labels counted (see the source)."},
    {"failures", (PyCFunction)(void (*)(void))failures, METH_FASTCALL,
     "failures(states, predicates) -> [(predicate index, state index), ...]: where a "
     "predicate is false, state by state."},
    {"xxh3_64", (PyCFunction)py_xxh3, METH_O,
     "xxh3_64(data) -> int: XXH3-64 of bytes, as xxhash.xxh3_64_intdigest."},
    {NULL, NULL, 0, NULL},
};

static PyMethodDef FpSet_methods[] = {
    {"update", (PyCFunction)FpSet_update, METH_O,
     "Add every fingerprint of an array('Q') (or any iterable of ints in 0 .. 2**64-1)."},
    {"__sizeof__", (PyCFunction)FpSet_sizeof, METH_NOARGS, "Bytes used."},
    {NULL, NULL, 0, NULL},
};

static PySequenceMethods FpSet_as_sequence = {
    .sq_length = (lenfunc)FpSet_len,
    .sq_contains = (objobjproc)FpSet_contains,
};

static PyTypeObject FpSetType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "isrlab.checker._fpset.FpSet",
    .tp_basicsize = sizeof(FpSet),
    .tp_dealloc = (destructor)FpSet_dealloc,
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "A set of 64-bit fingerprints: fp in s, s.update(array('Q')), len(s).",
    .tp_as_sequence = &FpSet_as_sequence,
    .tp_methods = FpSet_methods,
    .tp_new = FpSet_new,
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT, "isrlab.checker._fpset",
    "A compiled set of 64-bit fingerprints (fallback: a Python set).", -1, module_methods,
};

PyMODINIT_FUNC
PyInit__fpset(void)
{
    if (PyType_Ready(&FpSetType) < 0 || PyType_Ready(&LinkTableType) < 0)
        return NULL;
    PyObject *mod = PyModule_Create(&module);
    if (mod == NULL)
        return NULL;
    Py_INCREF(&FpSetType);
    if (PyModule_AddObject(mod, "FpSet", (PyObject *)&FpSetType) < 0) {
        Py_DECREF(&FpSetType);
        Py_DECREF(mod);
        return NULL;
    }
    Py_INCREF(&LinkTableType);
    if (PyModule_AddObject(mod, "LinkTable", (PyObject *)&LinkTableType) < 0) {
        Py_DECREF(&LinkTableType);
        Py_DECREF(mod);
        return NULL;
    }
    return mod;
}
