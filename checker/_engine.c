/* isrlab.checker._engine: the breadth-first search's levels in C, on several threads.
 *
 * For a model that offers its successor function through the checker's C interface
 * (checker/_successors.h: fixed-size byte states, their own encoding), an Engine runs each
 * level of isrlab.checker.bfs's search without creating a Python object per successor:
 *
 *   1. expand: threads take slices of the frontier, call the model's ``next`` on each
 *      state, fingerprint every successor (its orbit representative's under symmetry) with
 *      XXH3-64 (the digest of checker/fingerprint.py, from checker/_xxh3.h) and append a
 *      row (fingerprint, parent, label code, state) to one of PARTS buffers chosen by the
 *      fingerprint's top bits: sequential writes, no random access;
 *   2. finish: threads take partitions; each drops the rows whose fingerprint is in its
 *      part of the visited set, keeps one row per new fingerprint with the smallest
 *      (parent, label) link (labels ranked in Python's str order), adds the new
 *      fingerprints to its part of the visited set and evaluates the model's C invariants.
 *      A partition's tables are a sixty-fourth of the whole, so most probes hit the cache.
 *
 * The new states become the frontier in partition order.  Counts, links and violations do
 * not depend on the number of threads or on their scheduling: a state is new or not, its
 * link is the smallest, and bfs.py reports the smallest violations.  bfs.py's Python loops
 * stay the reference and the path for every other model.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <pthread.h>
#include <stdint.h>
#include <string.h>
#include <time.h>

#include "_successors.h"
#include "_xxh3.h"

#define PART_BITS 6
#define PARTS (1 << PART_BITS)
#define MAX_THREADS 64
#define SLICE 256
#define MAX_STATE 240
#define SMALL_EXPAND 2048   /* frontier states expanded on one thread */
#define SMALL_FINISH 16384  /* rows finished on one thread */


/* -- growable arrays and fingerprint tables ------------------------------------------------ */

typedef struct {
    uint64_t *data;
    size_t len, cap;  /* in uint64 words */
} Buf;

static int
buf_room(Buf *b, size_t words)
{
    if (b->len + words <= b->cap)
        return 0;
    size_t cap = b->cap ? b->cap * 2 : 4096;
    while (cap < b->len + words)
        cap *= 2;
    uint64_t *data = realloc(b->data, cap * sizeof(uint64_t));
    if (data == NULL)
        return -1;
    b->data = data;
    b->cap = cap;
    return 0;
}

/* A set of non-zero 64-bit fingerprints (open addressing, linear probing, <= 5/8 full); the
 * fingerprint 0 is kept in has_zero. */
typedef struct {
    uint64_t *table;
    size_t mask, used;
    int has_zero;
} Set;

static inline size_t
slot_of(uint64_t fp, size_t mask)
{
    return (size_t)((fp * 0x9E3779B97F4A7C15ULL) >> 17) & mask;
}

static int
set_contains(const Set *s, uint64_t fp)
{
    if (fp == 0)
        return s->has_zero;
    if (s->table == NULL)
        return 0;
    for (size_t j = slot_of(fp, s->mask);; j = (j + 1) & s->mask) {
        uint64_t v = s->table[j];
        if (v == fp)
            return 1;
        if (v == 0)
            return 0;
    }
}

/* Room for ``more`` fingerprints. */
static int
set_reserve(Set *s, size_t more)
{
    size_t capacity = s->table ? s->mask + 1 : 0;
    if ((s->used + more) * 8 <= capacity * 5)
        return 0;
    size_t size = capacity ? capacity : 1024;
    while ((s->used + more) * 8 > size * 5)
        size *= 2;
    uint64_t *table = calloc(size, sizeof(uint64_t));
    if (table == NULL)
        return -1;
    for (size_t i = 0; i < capacity; i++) {
        uint64_t fp = s->table[i];
        if (fp == 0)
            continue;
        size_t j = slot_of(fp, size - 1);
        while (table[j] != 0)
            j = (j + 1) & (size - 1);
        table[j] = fp;
    }
    free(s->table);
    s->table = table;
    s->mask = size - 1;
    return 0;
}

/* Add after set_reserve. */
static void
set_add(Set *s, uint64_t fp)
{
    if (fp == 0) {
        s->has_zero = 1;
        return;
    }
    for (size_t j = slot_of(fp, s->mask);; j = (j + 1) & s->mask) {
        uint64_t v = s->table[j];
        if (v == fp)
            return;
        if (v == 0) {
            s->table[j] = fp;
            s->used++;
            return;
        }
    }
}

/* -- the engine ------------------------------------------------------------------------------ */

typedef struct Engine Engine;

/* One thread's share of a phase. */
typedef struct {
    Engine *e;
    int index;
    Buf parts[PARTS];   /* expand: rows by the fingerprint's top bits */
    Buf deadlocked;     /* expand: parents without successors */
    Buf violations;     /* finish: (invariant index, fingerprint) pairs */
    int64_t *generated_by;  /* per label code */
    int64_t *distinct_by;   /* per label code */
    int64_t generated;
    uint32_t *slots;    /* finish: a partition's table of row numbers + 1 */
    size_t nslots;
    /* the state being expanded */
    uint64_t parent;
    int64_t emitted;
    int failed;         /* 1 out of memory, 2 an unknown label, 3 the model's next failed */
    unsigned char *canon, *scratch;
    double cpu;         /* this thread's CPU seconds in the current phase call */
} Worker;

struct Engine {
    PyObject_HEAD
    PyObject *capsule;
    const isrlab_successors *abi;
    int size, words, threads, symmetry;
    PyObject *labels;          /* code -> label (sorted) */
    Py_ssize_t nlabels;
    PyObject **label_keys;     /* pointer table: label object -> code */
    int32_t *label_codes;
    size_t label_mask;
    Set seen[PARTS];
    Buf news[PARTS];           /* finish: each partition's new rows */
    Buf frontier;              /* rows: fingerprint, parent, code, state */
    size_t frontier_rows;
    Worker *workers;
    /* the phase being run */
    size_t next_item, end_item;
    pthread_mutex_t lock;
    /* CPU seconds: of all threads in the phases, and of the busiest thread of each phase
     * call summed (the phases' share of the time on as many free cores as threads) */
    double phase_cpu, critical_cpu;
};

static double
thread_cpu(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

typedef struct {
    void *(*body)(void *);
    Worker *w;
} Timed;

static void *
timed(void *arg)
{
    Timed *x = arg;
    double start = thread_cpu();
    x->body(x->w);
    x->w->cpu = thread_cpu() - start;
    return NULL;
}

static inline size_t
row_words(const Engine *e)
{
    return 3 + (size_t)e->words;
}

static inline Py_ssize_t
label_code(const Engine *e, PyObject *label)
{
    for (size_t j = ((uintptr_t)label >> 4) & e->label_mask;; j = (j + 1) & e->label_mask) {
        if (e->label_keys[j] == label)
            return e->label_codes[j];
        if (e->label_keys[j] == NULL)
            return -1;
    }
}

/* The model's emit: one successor of w->parent. */
static void
on_successor(void *ctx, PyObject *label, const unsigned char *state, int times)
{
    Worker *w = ctx;
    Engine *e = w->e;
    Py_ssize_t code = label_code(e, label);
    if (code < 0) {
        w->failed = 2;
        return;
    }
    w->emitted += times;
    w->generated_by[code] += times;
    if (e->symmetry) {
        e->abi->canonical(e->abi->model, state, w->canon, w->scratch);
        state = w->canon;
    }
    uint64_t fp = xxh3_short(state, (size_t)e->size);  /* states of at most 240 bytes */
    Buf *b = &w->parts[fp >> (64 - PART_BITS)];
    size_t n = row_words(e);
    if (buf_room(b, n) < 0) {
        w->failed = 1;
        return;
    }
    uint64_t *row = b->data + b->len;
    row[0] = fp;
    row[1] = w->parent;
    row[2] = (uint64_t)code;
    row[2 + e->words] = 0;
    memcpy(row + 3, state, (size_t)e->size);
    b->len += n;
}

/* Take the next ``SLICE`` items of the phase: [*first, *last); 0 when none is left. */
static int
take(Engine *e, size_t step, size_t *first, size_t *last)
{
    pthread_mutex_lock(&e->lock);
    *first = e->next_item;
    *last = *first + step < e->end_item ? *first + step : e->end_item;
    e->next_item = *last;
    pthread_mutex_unlock(&e->lock);
    return *first < *last;
}

static void *
expand_worker(void *arg)
{
    Worker *w = arg;
    Engine *e = w->e;
    size_t first, last, n = row_words(e);
    while (!w->failed && take(e, SLICE, &first, &last)) {
        for (size_t i = first; i < last && !w->failed; i++) {
            const uint64_t *row = e->frontier.data + i * n;
            w->parent = row[0];
            w->emitted = 0;
            if (e->abi->next(e->abi->model, (const unsigned char *)(row + 3), on_successor, w) < 0)
                w->failed = 3;
            w->generated += w->emitted;
            if (w->emitted == 0) {
                if (buf_room(&w->deadlocked, 1) < 0)
                    w->failed = 1;
                else
                    w->deadlocked.data[w->deadlocked.len++] = row[0];
            }
        }
    }
    return NULL;
}

/* Partition ``p``: the new rows (smallest link per fingerprint) into e->news[p], added to
 * the visited set, their invariants evaluated. */
static void
finish_part(Worker *w, int p)
{
    Engine *e = w->e;
    size_t n = row_words(e), total = 0;
    for (int t = 0; t < e->threads; t++)
        total += e->workers[t].parts[p].len / n;
    Buf *out = &e->news[p];
    out->len = 0;
    if (total == 0)
        return;
    size_t want = 16;
    while (want < 2 * total)
        want *= 2;
    if (want > w->nslots) {
        free(w->slots);
        w->slots = malloc(want * sizeof(uint32_t));
        if (w->slots == NULL) {
            w->nslots = 0;
            w->failed = 1;
            return;
        }
        w->nslots = want;
    }
    uint32_t *slots = w->slots;
    size_t mask = want - 1;
    memset(slots, 0, want * sizeof(uint32_t));
    Set *seen = &e->seen[p];
    size_t rows = 0;
    for (int t = 0; t < e->threads; t++) {
        const Buf *b = &e->workers[t].parts[p];
        for (size_t r = 0; r < b->len; r += n) {
            const uint64_t *row = b->data + r;
            uint64_t fp = row[0];
            if (set_contains(seen, fp))
                continue;
            size_t j = slot_of(fp, mask);
            for (; slots[j] != 0; j = (j + 1) & mask) {
                uint64_t *old = out->data + (size_t)(slots[j] - 1) * n;
                if (old[0] != fp)
                    continue;
                if (row[1] < old[1] || (row[1] == old[1] && row[2] < old[2])) {
                    old[1] = row[1];
                    old[2] = row[2];
                }
                break;
            }
            if (slots[j] != 0)
                continue;
            if (buf_room(out, n) < 0) {
                w->failed = 1;
                return;
            }
            memcpy(out->data + out->len, row, n * sizeof(uint64_t));
            out->len += n;
            slots[j] = (uint32_t)++rows;
        }
    }
    if (set_reserve(seen, rows) < 0) {
        w->failed = 1;
        return;
    }
    int checks = e->abi->ninvariants;
    for (size_t r = 0; r < rows; r++) {
        const uint64_t *row = out->data + r * n;
        set_add(seen, row[0]);
        w->distinct_by[row[2]]++;
        for (int k = 0; k < checks; k++) {
            if (!e->abi->holds(e->abi->model, k, (const unsigned char *)(row + 3))) {
                if (buf_room(&w->violations, 2) < 0) {
                    w->failed = 1;
                    return;
                }
                w->violations.data[w->violations.len++] = (uint64_t)k;
                w->violations.data[w->violations.len++] = row[0];
            }
        }
    }
}

static void *
finish_worker(void *arg)
{
    Worker *w = arg;
    size_t first, last;
    while (!w->failed && take(w->e, 1, &first, &last))
        finish_part(w, (int)first);
    return NULL;
}

/* Run ``body`` on ``threads`` workers (at most the engine's), the calling thread being
 * worker 0, without the GIL.  A small phase runs on the calling thread alone: on a busy
 * machine every thread joined is a wait for the scheduler. */
static int
run_threads(Engine *e, void *(*body)(void *), size_t items, int threads)
{
    pthread_t ids[MAX_THREADS];
    Timed jobs[MAX_THREADS];
    int started = 0, failed = 0;
    e->next_item = 0;
    e->end_item = items;
    if (threads > e->threads)
        threads = e->threads;
    for (int t = 0; t < e->threads; t++) {
        jobs[t].body = body;
        jobs[t].w = &e->workers[t];
        e->workers[t].cpu = 0.0;
    }
    Py_BEGIN_ALLOW_THREADS
    for (int t = 1; t < threads; t++) {
        if (pthread_create(&ids[t], NULL, timed, &jobs[t]) != 0)
            break;
        started = t;
    }
    timed(&jobs[0]);
    for (int t = 1; t <= started; t++)
        pthread_join(ids[t], NULL);
    Py_END_ALLOW_THREADS
    double busiest = 0.0;
    for (int t = 0; t < e->threads; t++) {
        e->phase_cpu += e->workers[t].cpu;
        if (e->workers[t].cpu > busiest)
            busiest = e->workers[t].cpu;
    }
    e->critical_cpu += busiest;
    for (int t = 0; t < e->threads; t++)
        if (e->workers[t].failed && !failed)
            failed = e->workers[t].failed;
    if (failed == 1) {
        PyErr_NoMemory();
        return -1;
    }
    if (failed == 2) {
        PyErr_SetString(PyExc_RuntimeError, "engine: the model emitted a label it did not list");
        return -1;
    }
    if (failed == 3) {
        PyErr_SetString(PyExc_RuntimeError, "engine: the model's compiled next failed");
        return -1;
    }
    return 0;
}

static void
Engine_dealloc(Engine *e)
{
    for (int p = 0; p < PARTS; p++) {
        free(e->seen[p].table);
        free(e->news[p].data);
    }
    free(e->frontier.data);
    if (e->workers != NULL) {
        for (int t = 0; t < e->threads; t++) {
            Worker *w = &e->workers[t];
            for (int p = 0; p < PARTS; p++)
                free(w->parts[p].data);
            free(w->deadlocked.data);
            free(w->violations.data);
            free(w->generated_by);
            free(w->distinct_by);
            free(w->slots);
            free(w->canon);
        }
        free(e->workers);
    }
    free(e->label_keys);
    free(e->label_codes);
    pthread_mutex_destroy(&e->lock);
    Py_XDECREF(e->labels);
    Py_XDECREF(e->capsule);
    Py_TYPE(e)->tp_free((PyObject *)e);
}

/* Engine(capsule, labels, threads, symmetry)
 *
 * ``capsule`` from the model's ``native_successors()``, ``labels`` every label object the
 * model can emit (repeats allowed), ``threads`` >= 1, ``symmetry`` whether successors are
 * replaced by their orbit representatives. */
static PyObject *
Engine_new(PyTypeObject *type, PyObject *args, PyObject *kwds)
{
    PyObject *capsule, *labels;
    int threads, symmetry;
    if (!PyArg_ParseTuple(args, "OO!ip:Engine", &capsule, &PyTuple_Type, &labels, &threads,
                          &symmetry))
        return NULL;
    const isrlab_successors *abi = PyCapsule_GetPointer(capsule, ISRLAB_SUCCESSORS_CAPSULE);
    if (abi == NULL)
        return NULL;
    if (abi->size < 1 || abi->size > MAX_STATE || threads < 1 || threads > MAX_THREADS
        || (symmetry && abi->canonical == NULL)) {
        PyErr_SetString(PyExc_ValueError,
                        "Engine(): states of 1 to 240 bytes, 1 to 64 threads, a canonical "
                        "form under symmetry");
        return NULL;
    }
    Engine *e = (Engine *)type->tp_alloc(type, 0);
    if (e == NULL)
        return NULL;
    pthread_mutex_init(&e->lock, NULL);
    Py_INCREF(capsule);
    e->capsule = capsule;
    e->abi = abi;
    e->size = abi->size;
    e->words = (abi->size + 7) / 8;
    e->threads = threads;
    e->symmetry = symmetry;
    /* the distinct labels in str order: a label's code is its rank */
    PyObject *unique = PySet_New(labels);
    e->labels = unique ? PySequence_List(unique) : NULL;
    Py_XDECREF(unique);
    if (e->labels == NULL || PyList_Sort(e->labels) < 0) {
        Py_DECREF(e);
        return NULL;
    }
    e->nlabels = PyList_GET_SIZE(e->labels);
    Py_ssize_t count = PyTuple_GET_SIZE(labels);
    size_t size = 16;
    while (size < 2 * (size_t)count + 2)
        size *= 2;
    e->label_mask = size - 1;
    e->label_keys = calloc(size, sizeof(PyObject *));
    e->label_codes = calloc(size, sizeof(int32_t));
    e->workers = calloc((size_t)threads, sizeof(Worker));
    if (e->label_keys == NULL || e->label_codes == NULL || e->workers == NULL) {
        Py_DECREF(e);
        return PyErr_NoMemory();
    }
    for (Py_ssize_t i = 0; i < count; i++) {
        PyObject *label = PyTuple_GET_ITEM(labels, i);
        if (!PyUnicode_CheckExact(label)) {
            PyErr_SetString(PyExc_TypeError, "Engine(): labels must be str");
            Py_DECREF(e);
            return NULL;
        }
        Py_ssize_t code = PySequence_Index(e->labels, label);
        if (code < 0) {
            Py_DECREF(e);
            return NULL;
        }
        size_t j = ((uintptr_t)label >> 4) & e->label_mask;
        while (e->label_keys[j] != NULL && e->label_keys[j] != label)
            j = (j + 1) & e->label_mask;
        e->label_keys[j] = label;
        e->label_codes[j] = (int32_t)code;
    }
    for (int t = 0; t < threads; t++) {
        Worker *w = &e->workers[t];
        w->e = e;
        w->index = t;
        w->generated_by = calloc((size_t)e->nlabels + 1, sizeof(int64_t));
        w->distinct_by = calloc((size_t)e->nlabels + 1, sizeof(int64_t));
        w->canon = malloc(2 * (size_t)e->size);
        if (w->generated_by == NULL || w->distinct_by == NULL || w->canon == NULL) {
            Py_DECREF(e);
            return PyErr_NoMemory();
        }
        w->scratch = w->canon + e->size;
    }
    return (PyObject *)e;
}

/* set_frontier(fps: bytes, states: bytes): the level to expand next (native uint64
 * fingerprints, the states' bytes one after the other); its fingerprints join the visited
 * set. */
static PyObject *
Engine_set_frontier(Engine *e, PyObject *args)
{
    Py_buffer fps, states;
    if (!PyArg_ParseTuple(args, "y*y*:set_frontier", &fps, &states))
        return NULL;
    size_t rows = (size_t)fps.len / 8, n = row_words(e);
    PyObject *result = NULL;
    if ((size_t)fps.len != rows * 8 || (size_t)states.len != rows * (size_t)e->size) {
        PyErr_SetString(PyExc_ValueError, "set_frontier(): one state of the model's size per fingerprint");
        goto done;
    }
    e->frontier.len = 0;
    if (buf_room(&e->frontier, rows * n) < 0) {
        PyErr_NoMemory();
        goto done;
    }
    for (size_t r = 0; r < rows; r++) {
        uint64_t *row = e->frontier.data + r * n, fp;
        memcpy(&fp, (const char *)fps.buf + 8 * r, 8);
        row[0] = fp;
        row[1] = row[2] = row[2 + e->words] = 0;
        memcpy(row + 3, (const char *)states.buf + r * (size_t)e->size, (size_t)e->size);
        Set *seen = &e->seen[fp >> (64 - PART_BITS)];
        if (set_reserve(seen, 1) < 0) {
            PyErr_NoMemory();
            goto done;
        }
        set_add(seen, fp);
    }
    e->frontier.len = rows * n;
    e->frontier_rows = rows;
    result = Py_NewRef(Py_None);
done:
    PyBuffer_Release(&fps);
    PyBuffer_Release(&states);
    return result;
}

/* expand(start, stop) -> generated so far in this level: the successors of frontier states
 * start .. stop - 1, on the engine's threads. */
static PyObject *
Engine_expand(Engine *e, PyObject *args)
{
    Py_ssize_t start, stop;
    if (!PyArg_ParseTuple(args, "nn:expand", &start, &stop))
        return NULL;
    if (start < 0 || stop < start || (size_t)stop > e->frontier_rows) {
        PyErr_SetString(PyExc_IndexError, "expand(): a range of the frontier");
        return NULL;
    }
    /* the threads take slices of [start, stop): shift the frontier view */
    Buf whole = e->frontier;
    size_t n = row_words(e);
    e->frontier.data = whole.data + (size_t)start * n;
    int rc = run_threads(e, expand_worker, (size_t)(stop - start),
                         stop - start < SMALL_EXPAND ? 1 : e->threads);
    e->frontier = whole;
    if (rc < 0)
        return NULL;
    int64_t generated = 0;
    for (int t = 0; t < e->threads; t++)
        generated += e->workers[t].generated;
    return PyLong_FromLongLong(generated);
}

static PyObject *
counts_of(Engine *e, int distinct)
{
    PyObject *counts = PyDict_New();
    if (counts == NULL)
        return NULL;
    for (Py_ssize_t c = 0; c < e->nlabels; c++) {
        int64_t total = 0;
        for (int t = 0; t < e->threads; t++) {
            int64_t *by = distinct ? e->workers[t].distinct_by : e->workers[t].generated_by;
            total += by[c];
            by[c] = 0;
        }
        if (total == 0)
            continue;
        PyObject *value = PyLong_FromLongLong(total);
        if (value == NULL || PyDict_SetItem(counts, PyList_GET_ITEM(e->labels, c), value) < 0) {
            Py_XDECREF(value);
            Py_DECREF(counts);
            return NULL;
        }
        Py_DECREF(value);
    }
    return counts;
}

/* finish() -> (generated, cov_generated, deadlocked, fps, parents, cov_distinct, violations)
 *
 * The level's end: its new states (the smallest link each) become the frontier.  Returns
 * the successors generated, per label (a dict), the fingerprints of the states without
 * successors (uint64 bytes), the new states' fingerprints and parents (uint64 bytes, in
 * the new frontier's order), the new states per label of their link (a dict), and the
 * violated invariants as (index, fingerprint) pairs (a list; only when every invariant has
 * a C version). */
static PyObject *
Engine_finish(Engine *e, PyObject *unused)
{
    size_t n = row_words(e), rows = 0, found = 0;
    for (int t = 0; t < e->threads; t++)
        for (int p = 0; p < PARTS; p++)
            found += e->workers[t].parts[p].len / n;
    if (run_threads(e, finish_worker, PARTS, found < SMALL_FINISH ? 1 : e->threads) < 0)
        return NULL;
    for (int p = 0; p < PARTS; p++)
        rows += e->news[p].len / n;
    PyObject *fps = PyBytes_FromStringAndSize(NULL, (Py_ssize_t)(rows * 8));
    PyObject *parents = PyBytes_FromStringAndSize(NULL, (Py_ssize_t)(rows * 8));
    PyObject *violations = PyList_New(0);
    if (fps == NULL || parents == NULL || violations == NULL)
        goto fail;
    e->frontier.len = 0;
    if (buf_room(&e->frontier, rows * n) < 0) {
        PyErr_NoMemory();
        goto fail;
    }
    char *f = PyBytes_AS_STRING(fps), *q = PyBytes_AS_STRING(parents);
    size_t r = 0;
    for (int p = 0; p < PARTS; p++) {
        Buf *b = &e->news[p];
        memcpy(e->frontier.data + e->frontier.len, b->data, b->len * sizeof(uint64_t));
        e->frontier.len += b->len;
        for (size_t x = 0; x < b->len; x += n, r++) {
            memcpy(f + 8 * r, &b->data[x], 8);
            memcpy(q + 8 * r, &b->data[x + 1], 8);
        }
        b->len = 0;
    }
    e->frontier_rows = rows;
    int64_t generated = 0;
    Py_ssize_t dead = 0;
    for (int t = 0; t < e->threads; t++)
        dead += (Py_ssize_t)e->workers[t].deadlocked.len;
    PyObject *deadlocked = PyBytes_FromStringAndSize(NULL, dead * 8);
    if (deadlocked == NULL)
        goto fail;
    char *d = PyBytes_AS_STRING(deadlocked);
    for (int t = 0; t < e->threads; t++) {
        Worker *w = &e->workers[t];
        generated += w->generated;
        w->generated = 0;
        memcpy(d, w->deadlocked.data, w->deadlocked.len * 8);
        d += w->deadlocked.len * 8;
        w->deadlocked.len = 0;
        for (size_t v = 0; v < w->violations.len; v += 2) {
            PyObject *pair = Py_BuildValue("(iK)", (int)w->violations.data[v],
                                           (unsigned long long)w->violations.data[v + 1]);
            if (pair == NULL || PyList_Append(violations, pair) < 0) {
                Py_XDECREF(pair);
                Py_DECREF(deadlocked);
                goto fail;
            }
            Py_DECREF(pair);
        }
        w->violations.len = 0;
        for (int p = 0; p < PARTS; p++)
            w->parts[p].len = 0;
    }
    PyObject *cov_generated = counts_of(e, 0);
    PyObject *cov_distinct = cov_generated ? counts_of(e, 1) : NULL;
    if (cov_distinct == NULL) {
        Py_XDECREF(cov_generated);
        Py_DECREF(deadlocked);
        goto fail;
    }
    return Py_BuildValue("(LNNNNNN)", (long long)generated, cov_generated, deadlocked, fps,
                         parents, cov_distinct, violations);
fail:
    Py_XDECREF(fps);
    Py_XDECREF(parents);
    Py_XDECREF(violations);
    return NULL;
}

/* states() -> list of bytes: the frontier's states, in the order of finish()'s fps. */
static PyObject *
Engine_states(Engine *e, PyObject *unused)
{
    PyObject *out = PyList_New((Py_ssize_t)e->frontier_rows);
    if (out == NULL)
        return NULL;
    size_t n = row_words(e);
    for (size_t r = 0; r < e->frontier_rows; r++) {
        PyObject *state = PyBytes_FromStringAndSize(
            (const char *)(e->frontier.data + r * n + 3), e->size);
        if (state == NULL) {
            Py_DECREF(out);
            return NULL;
        }
        PyList_SET_ITEM(out, (Py_ssize_t)r, state);
    }
    return out;
}

static PyObject *
Engine_frontier_size(Engine *e, PyObject *unused)
{
    return PyLong_FromSize_t(e->frontier_rows);
}

static PyObject *
Engine_seen_size(Engine *e, PyObject *unused)
{
    size_t total = 0;
    for (int p = 0; p < PARTS; p++)
        total += e->seen[p].used + (size_t)e->seen[p].has_zero;
    return PyLong_FromSize_t(total);
}

static PyObject *
Engine_compiled_invariants(Engine *e, PyObject *unused)
{
    return PyLong_FromLong(e->abi->ninvariants);
}

/* phase_cpu() -> (all threads, busiest thread per call): CPU seconds in expand and finish. */
static PyObject *
Engine_phase_cpu(Engine *e, PyObject *unused)
{
    return Py_BuildValue("(dd)", e->phase_cpu, e->critical_cpu);
}

static PyMethodDef Engine_methods[] = {
    {"phase_cpu", (PyCFunction)Engine_phase_cpu, METH_NOARGS,
     "(CPU seconds of all threads in expand and finish, of the busiest thread of each call "
     "summed)."},
    {"compiled_invariants", (PyCFunction)Engine_compiled_invariants, METH_NOARGS,
     "How many of the model's invariants finish() evaluates (-1: none, bfs.py does)."},
    {"set_frontier", (PyCFunction)Engine_set_frontier, METH_VARARGS,
     "set_frontier(fps, states): the level to expand next; its fingerprints are seen."},
    {"expand", (PyCFunction)Engine_expand, METH_VARARGS,
     "expand(start, stop) -> generated: expand frontier states start .. stop - 1."},
    {"finish", (PyCFunction)Engine_finish, METH_NOARGS,
     "finish() -> (generated, cov_generated, deadlocked, fps, parents, cov_distinct, "
     "violations): the level's new states become the frontier."},
    {"states", (PyCFunction)Engine_states, METH_NOARGS,
     "states() -> the frontier's states as bytes, in finish()'s order."},
    {"frontier_size", (PyCFunction)Engine_frontier_size, METH_NOARGS,
     "The number of frontier states."},
    {"seen_size", (PyCFunction)Engine_seen_size, METH_NOARGS,
     "The number of fingerprints in the visited set."},
    {NULL, NULL, 0, NULL},
};

static PyTypeObject EngineType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "isrlab.checker._engine.Engine",
    .tp_basicsize = sizeof(Engine),
    .tp_dealloc = (destructor)Engine_dealloc,
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "The levels of a breadth-first search in C (see the module's source).",
    .tp_methods = Engine_methods,
    .tp_new = Engine_new,
};

static PyMethodDef module_methods[] = {
    {"xxh3_64", (PyCFunction)py_xxh3, METH_O,
     "xxh3_64(data) -> int: XXH3-64 of bytes, as xxhash.xxh3_64_intdigest."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT, "isrlab.checker._engine",
    "The breadth-first search's levels in C for models with a compiled successor function.",
    -1, module_methods,
};

PyMODINIT_FUNC
PyInit__engine(void)
{
    if (PyType_Ready(&EngineType) < 0)
        return NULL;
    PyObject *mod = PyModule_Create(&module);
    if (mod == NULL)
        return NULL;
    Py_INCREF(&EngineType);
    if (PyModule_AddObject(mod, "Engine", (PyObject *)&EngineType) < 0) {
        Py_DECREF(&EngineType);
        Py_DECREF(mod);
        return NULL;
    }
    if (PyModule_AddIntConstant(mod, "PARTS", PARTS) < 0) {
        Py_DECREF(mod);
        return NULL;
    }
    return mod;
}
