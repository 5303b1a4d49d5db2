/* isrlab's C interface between a model's compiled successor function and the checker.
 *
 * A model whose states are fixed-size byte strings and their own encoding may offer, from
 * ``native_successors()``, a PyCapsule named ISRLAB_SUCCESSORS_CAPSULE holding an
 * ``isrlab_successors``.  The checker (checker/_fpset.c: Engine) then runs a whole level of
 * the breadth-first search in C, on several threads, without creating a Python object per
 * successor.  Every function here is called WITHOUT the GIL, from any thread at once, so it
 * must touch no Python object except to pass a label (an immutable str the capsule lists
 * in ``labels``) back through ``emit``.  The pure Python ``next_states`` stays the
 * reference: the same (label, successor) pairs in the same order.
 */
#ifndef ISRLAB_SUCCESSORS_H
#define ISRLAB_SUCCESSORS_H

#define ISRLAB_SUCCESSORS_CAPSULE "isrlab.checker.successors.v1"

/* One successor of the state being expanded: ``label`` one of the capsule's labels, the
 * successor's ``size`` bytes at ``state`` (valid only during the call), emitted ``times``
 * times (a disjunct enabled twice for one binding counts twice, as TLC counts it). */
typedef void (*isrlab_emit_fn)(void *ctx, PyObject *label, const unsigned char *state,
                               int times);

typedef struct {
    int size;     /* bytes of every state */
    void *model;  /* passed back to the functions below */
    /* Every successor of ``state`` through ``emit``; 0, or -1 when the model cannot
     * (the checker then fails the search with a one-line error). */
    int (*next)(void *model, const unsigned char *state, isrlab_emit_fn emit, void *ctx);
    /* The orbit representative of ``state`` (model.canonical) into ``out`` (size bytes),
     * ``scratch`` size bytes of working room; NULL when the model has no symmetry. */
    void (*canonical)(void *model, const unsigned char *state, unsigned char *out,
                      unsigned char *scratch);
    /* Whether model.invariants()[index] holds on ``state`` (1) or not (0), for every
     * index < ninvariants; ninvariants < 0 when some invariant has no C version. */
    int ninvariants;
    int (*holds)(void *model, int index, const unsigned char *state);
} isrlab_successors;

#endif
