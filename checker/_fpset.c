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
 * ``scan`` is bfs.py's per-successor loop for models whose states are bytes and their own
 * encoding, transcribed (bfs.py keeps the Python loop, used when this is not built).
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <string.h>

static PyTypeObject FpSetType;

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

/* scan(successors, pfp, seen, links, candidates, digest, orbit_of, canonical) -> None
 *
 * The inner loop of isrlab.checker.bfs._Worker.expand for a model whose states are bytes
 * and their own encoding, transcribed: for each (label, successor) of ``successors`` (a
 * list), its fingerprint ``digest(successor)`` (with symmetry: ``orbit_of`` maps the raw
 * fingerprint to the representative's, ``canonical`` gives a representative on a miss);
 * skipped when in ``seen``; else linked in ``links`` (fingerprint -> (parent, label), the
 * smallest link kept) and, when new there, appended to ``candidates``. */
static PyObject *
scan(PyObject *module, PyObject *const *args, Py_ssize_t nargs)
{
    if (nargs != 8) {
        PyErr_SetString(PyExc_TypeError, "scan() takes 8 arguments");
        return NULL;
    }
    PyObject *successors = args[0], *pfp = args[1], *seen = args[2], *links = args[3];
    PyObject *candidates = args[4], *digest = args[5], *orbit_of = args[6];
    PyObject *canonical = args[7];
    if (!PyList_CheckExact(successors) || !PyDict_CheckExact(links)
        || !PyList_CheckExact(candidates)) {
        PyErr_SetString(PyExc_TypeError, "scan(): successors, links, candidates: list, dict, list");
        return NULL;
    }
    int symmetric = orbit_of != Py_None;
    if (symmetric && !PyDict_CheckExact(orbit_of)) {
        PyErr_SetString(PyExc_TypeError, "scan(): orbit_of must be a dict or None");
        return NULL;
    }
    FpSet *fpset = PyObject_TypeCheck(seen, &FpSetType) ? (FpSet *)seen : NULL;
    Py_ssize_t count = PyList_GET_SIZE(successors);
    for (Py_ssize_t x = 0; x < count; x++) {
        PyObject *pair = PyList_GET_ITEM(successors, x);
        if (!PyTuple_CheckExact(pair) || PyTuple_GET_SIZE(pair) != 2) {
            PyErr_SetString(PyExc_TypeError, "scan(): successors must be (label, state) pairs");
            return NULL;
        }
        PyObject *label = PyTuple_GET_ITEM(pair, 0);
        PyObject *successor = PyTuple_GET_ITEM(pair, 1);
        PyObject *fp;  /* a new reference */
        Py_INCREF(successor);
        if (!symmetric) {
            fp = PyObject_CallOneArg(digest, successor);
        }
        else {
            PyObject *raw = PyObject_CallOneArg(digest, successor);
            if (raw == NULL) {
                Py_DECREF(successor);
                return NULL;
            }
            fp = PyDict_GetItemWithError(orbit_of, raw);
            if (fp != NULL) {
                Py_INCREF(fp);
            }
            else if (!PyErr_Occurred()) {
                PyObject *representative = PyObject_CallOneArg(canonical, successor);
                Py_DECREF(successor);
                successor = representative;
                fp = representative ? PyObject_CallOneArg(digest, representative) : NULL;
                if (fp != NULL && PyDict_SetItem(orbit_of, raw, fp) < 0)
                    Py_CLEAR(fp);
            }
            Py_DECREF(raw);
        }
        if (fp == NULL) {
            Py_XDECREF(successor);
            return NULL;
        }
        int known;
        if (fpset != NULL) {
            uint64_t value = PyLong_AsUnsignedLongLong(fp);
            known = (value == (uint64_t)-1 && PyErr_Occurred()) ? -1 : contains(fpset, value);
        }
        else {
            known = PySequence_Contains(seen, fp);
        }
        if (known != 0) {
            Py_DECREF(fp);
            Py_DECREF(successor);
            if (known < 0)
                return NULL;
            continue;
        }
        PyObject *link = PyTuple_Pack(2, pfp, label);
        PyObject *old = link ? PyDict_GetItemWithError(links, fp) : NULL;
        int rc = 0;
        if (link == NULL || (old == NULL && PyErr_Occurred())) {
            rc = -1;
        }
        else if (old != NULL) {
            int less = PyObject_RichCompareBool(link, old, Py_LT);
            if (less < 0 || (less && PyDict_SetItem(links, fp, link) < 0))
                rc = -1;
        }
        else if (PyDict_SetItem(links, fp, link) < 0 || PyList_Append(candidates, successor) < 0) {
            rc = -1;
        }
        Py_XDECREF(link);
        Py_DECREF(fp);
        Py_DECREF(successor);
        if (rc < 0)
            return NULL;
    }
    Py_RETURN_NONE;
}

static PyMethodDef module_methods[] = {
    {"scan", (PyCFunction)(void (*)(void))scan, METH_FASTCALL,
     "scan(successors, pfp, seen, links, candidates, digest, orbit_of, canonical): the "
     "checker's per-successor loop for bytes states (see checker/_fpset.c)."},
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
    if (PyType_Ready(&FpSetType) < 0)
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
    return mod;
}
