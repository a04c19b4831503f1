/* The BPE merge loop of `tokviz.training.bpe`, compiled: the same steps, the same merges.
 *
 * `bpe.BpeTrainer` lays the distinct chunks end to end (token ids `tok`, a doubly linked list
 * `nxt`/`prv` over the live positions, each position's chunk count `fr`; the sentinel position's
 * token is DEAD) and counts and indexes the byte pairs. `Loop(tok, nxt, prv, fr, counts, index,
 * min_frequency)` takes those arrays (it writes to them) and the pair table; `run(n, first_id)`
 * learns at most `n` merges, the first numbered `first_id`, and returns them as
 * `(left, right, count, replaced)`. The caller reports progress and checks for a cancel between
 * calls; the GIL is released while the merges run.
 *
 * The rules are bpe.py's, which its docstring explains: the pair with the highest count is merged,
 * ties going to the smallest (left, right); an occurrence is replaced left to right; the pairs an
 * occurrence makes are counted where it is made, and the pair each one breaks loses the same
 * count; a pair whose count falls below `min_frequency` is dropped. Each pair's positions are
 * kept ascending (as they were when the pair was made), so the merges happen in the same order as
 * in `BpeTrainer._merge_each`, which the tests hold this module to.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define ID_BITS 21
#define ID_MASK ((UINT64_C(1) << ID_BITS) - 1)
#define DEAD (-1)
#define NO_SLOT UINT64_MAX

typedef struct {
    int32_t *at;
    Py_ssize_t len, cap;
} Positions;

/* A pair: its count (0 once merged or dropped) and the positions that held it when it was made. */
typedef struct {
    uint64_t key;
    int64_t count;
    Positions pos;
} Pair;

/* A pair made by the merge running now: its count so far, the pair it breaks, its positions. */
typedef struct {
    uint64_t key, lost;
    int64_t count;
    Positions pos;
    Py_ssize_t slot;  /* its slot in made_table, to empty it after the merge */
} Made;

/* Open addressing from a pair key to an index in an array of records; a key is never removed. */
typedef struct {
    uint64_t *keys;
    Py_ssize_t *values;
    Py_ssize_t size, mask;
} Table;

typedef struct {
    int64_t count;
    uint64_t key;
} HeapItem;

typedef struct {
    PyObject_HEAD
    Py_buffer tok_view, nxt_view, prv_view, fr_view;
    int views;                 /* how many of the four views are held */
    int broken;                /* out of memory in the middle of a merge: the arrays are unusable */
    int32_t *tok, *nxt, *prv;
    int32_t *fr32;             /* one of fr32 / fr64 is set (the chunk counts' width) */
    int64_t *fr64;
    int64_t floor;
    Table table;               /* pair key -> index in pairs */
    Pair *pairs;
    Py_ssize_t npairs, pairs_cap;
    HeapItem *heap;
    Py_ssize_t nheap, heap_cap;
    Table made_table;          /* per merge: pair key -> index in made */
    Made *made;
    Py_ssize_t nmade, made_cap;
} Loop;

/* MurmurHash3's 64-bit finalizer: every bit of both ids reaches the low bits the table uses. */
static inline uint64_t hash_key(uint64_t key) {
    key ^= key >> 33;
    key *= UINT64_C(0xFF51AFD7ED558CCD);
    key ^= key >> 33;
    key *= UINT64_C(0xC4CEB9FE1A85EC53);
    return key ^ (key >> 33);
}

static int table_init(Table *t, Py_ssize_t size) {
    t->keys = malloc(sizeof(uint64_t) * size);
    t->values = malloc(sizeof(Py_ssize_t) * size);
    if (!t->keys || !t->values) return -1;
    memset(t->keys, 0xFF, sizeof(uint64_t) * size);
    t->size = 0;
    t->mask = size - 1;
    return 0;
}

static void table_free(Table *t) {
    free(t->keys);
    free(t->values);
    t->keys = NULL;
    t->values = NULL;
}

/* The slot holding `key`, or the empty slot where it would go. */
static inline Py_ssize_t table_slot(const Table *t, uint64_t key) {
    Py_ssize_t i = (Py_ssize_t)(hash_key(key) & (uint64_t)t->mask);
    while (t->keys[i] != key && t->keys[i] != NO_SLOT) i = (i + 1) & t->mask;
    return i;
}

static inline Py_ssize_t table_get(const Table *t, uint64_t key) {
    Py_ssize_t i = table_slot(t, key);
    return t->keys[i] == key ? t->values[i] : -1;
}

static int table_put(Table *t, uint64_t key, Py_ssize_t value) {
    if (2 * (t->size + 1) > t->mask + 1) {  /* at most half full */
        Table bigger;
        if (table_init(&bigger, 2 * (t->mask + 1)) < 0) {
            table_free(&bigger);
            return -1;
        }
        for (Py_ssize_t i = 0; i <= t->mask; i++) {
            if (t->keys[i] != NO_SLOT) {
                Py_ssize_t j = table_slot(&bigger, t->keys[i]);
                bigger.keys[j] = t->keys[i];
                bigger.values[j] = t->values[i];
            }
        }
        bigger.size = t->size;
        table_free(t);
        *t = bigger;
    }
    Py_ssize_t i = table_slot(t, key);
    if (t->keys[i] == NO_SLOT) t->size++;
    t->keys[i] = key;
    t->values[i] = value;
    return 0;
}

/* Room for one more item in a growing array (`len` used of `*cap`); -1 when out of memory. */
static int reserve(void **items, Py_ssize_t len, Py_ssize_t *cap, size_t size, Py_ssize_t first) {
    if (len < *cap) return 0;
    Py_ssize_t bigger = *cap ? 2 * *cap : first;
    void *grown = realloc(*items, size * bigger);
    if (!grown) return -1;
    *items = grown;
    *cap = bigger;
    return 0;
}

static int positions_push(Positions *p, int32_t at) {
    if (reserve((void **)&p->at, p->len, &p->cap, sizeof(int32_t), 4) < 0) return -1;
    p->at[p->len++] = at;
    return 0;
}

static void positions_free(Positions *p) {
    free(p->at);
    p->at = NULL;
    p->len = p->cap = 0;
}

/* Heap order: the higher count first, then the smaller key. */
static inline int heap_before(HeapItem x, HeapItem y) {
    return x.count > y.count || (x.count == y.count && x.key < y.key);
}

static int heap_push(Loop *s, int64_t count, uint64_t key) {
    if (reserve((void **)&s->heap, s->nheap, &s->heap_cap, sizeof(HeapItem), 1024) < 0) return -1;
    HeapItem item = {count, key};
    Py_ssize_t i = s->nheap++;
    while (i > 0) {
        Py_ssize_t parent = (i - 1) / 2;
        if (!heap_before(item, s->heap[parent])) break;
        s->heap[i] = s->heap[parent];
        i = parent;
    }
    s->heap[i] = item;
    return 0;
}

static HeapItem heap_pop(Loop *s) {
    HeapItem top = s->heap[0], last = s->heap[--s->nheap];
    Py_ssize_t i = 0, n = s->nheap;
    for (;;) {
        Py_ssize_t child = 2 * i + 1;
        if (child >= n) break;
        if (child + 1 < n && heap_before(s->heap[child + 1], s->heap[child])) child++;
        if (!heap_before(s->heap[child], last)) break;
        s->heap[i] = s->heap[child];
        i = child;
    }
    if (n) s->heap[i] = last;
    return top;
}

static inline int64_t weight(const Loop *s, int32_t at) {
    return s->fr32 ? (int64_t)s->fr32[at] : s->fr64[at];
}

static inline Pair *find_pair(Loop *s, uint64_t key) {
    Py_ssize_t i = table_get(&s->table, key);
    return i < 0 ? NULL : &s->pairs[i];
}

/* Add a pair to the table (count at the floor or above) and push it. */
static int add_pair(Loop *s, uint64_t key, int64_t count, Positions pos) {
    if (reserve((void **)&s->pairs, s->npairs, &s->pairs_cap, sizeof(Pair), 1024) < 0) return -1;
    if (table_put(&s->table, key, s->npairs) < 0) return -1;
    Pair *p = &s->pairs[s->npairs++];
    p->key = key;
    p->count = count;
    p->pos = pos;
    return heap_push(s, count, key);
}

/* Note an occurrence of the new pair `key` at `at`, which breaks one of `lost`. */
static int note(Loop *s, uint64_t key, uint64_t lost, int32_t at, int64_t w) {
    Py_ssize_t i = table_get(&s->made_table, key);
    if (i < 0) {
        if (reserve((void **)&s->made, s->nmade, &s->made_cap, sizeof(Made), 256) < 0) return -1;
        i = s->nmade++;
        Made *m = &s->made[i];
        m->key = key;
        m->lost = lost;
        m->count = 0;
        m->pos = (Positions){NULL, 0, 0};
        if (table_put(&s->made_table, key, i) < 0) return -1;
    }
    s->made[i].count += w;
    return positions_push(&s->made[i].pos, at);
}

/* Replace the pair by `new` everywhere; count, index and push the pairs made. Returns -1 when
 * out of memory, else 0 with the tokens removed in *replaced. */
static int merge(Loop *s, Pair *pair, int32_t new, int64_t *replaced) {
    int32_t *tok = s->tok, *nxt = s->nxt, *prv = s->prv;
    const int32_t a = (int32_t)(pair->key >> ID_BITS), b = (int32_t)(pair->key & ID_MASK);
    const uint64_t new_key = (uint64_t)new;
    Positions held = pair->pos;
    pair->pos = (Positions){NULL, 0, 0};
    pair->count = 0;  /* merged: the pairs broken below never count it again */
    int64_t removed = 0;
    int failed = 0;
    s->nmade = 0;
    for (Py_ssize_t k = 0; k < held.len && !failed; k++) {
        int32_t p = held.at[k];
        if (tok[p] != a) continue;  /* stale: an earlier merge took this position */
        int32_t q = nxt[p];
        if (tok[q] != b) continue;  /* stale, or the right half was just taken (`aa`) */
        int32_t r = nxt[q];
        tok[p] = new;
        tok[q] = DEAD;
        nxt[p] = r;
        prv[r] = p;
        int64_t w = weight(s, p);
        removed += w;
        int32_t left = prv[p];
        int32_t c = tok[left];
        if (c != DEAD) {  /* (c, new) breaks (c, a); (new, new) breaks (b, a) */
            uint64_t lost = c != new ? ((uint64_t)c << ID_BITS | (uint64_t)a) : ((uint64_t)b << ID_BITS | (uint64_t)a);
            failed |= note(s, (uint64_t)c << ID_BITS | new_key, lost, left, w) < 0;
        }
        c = tok[r];
        if (c != DEAD && !(c == a && tok[nxt[r]] == b)) {  /* else `r` merges next: (new, new) */
            failed |= note(s, new_key << ID_BITS | (uint64_t)c, (uint64_t)b << ID_BITS | (uint64_t)c, p, w) < 0;
        }
    }
    positions_free(&held);
    for (Py_ssize_t i = 0; i < s->nmade; i++) {
        Made *m = &s->made[i];
        Pair *lost = failed ? NULL : find_pair(s, m->lost);
        if (lost != NULL && lost->count) {
            lost->count -= m->count;
            if (lost->count < s->floor) {  /* it can never be merged now: dropped */
                lost->count = 0;
                positions_free(&lost->pos);
            }
        }
        if (!failed && m->count >= s->floor) {
            failed |= add_pair(s, m->key, m->count, m->pos) < 0;
        } else {
            positions_free(&m->pos);
        }
    }
    /* empty the slots used (found first: emptying one may cut another's probe chain) */
    for (Py_ssize_t i = 0; i < s->nmade; i++) s->made[i].slot = table_slot(&s->made_table, s->made[i].key);
    for (Py_ssize_t i = 0; i < s->nmade; i++) s->made_table.keys[s->made[i].slot] = NO_SLOT;
    s->made_table.size = 0;
    *replaced = removed;
    return failed ? -1 : 0;
}

static PyObject *Loop_run(Loop *s, PyObject *args) {
    Py_ssize_t limit, first_id;
    if (!PyArg_ParseTuple(args, "nn", &limit, &first_id)) return NULL;
    if (s->broken) {
        PyErr_SetString(PyExc_RuntimeError, "the merge loop ran out of memory earlier and cannot go on");
        return NULL;
    }
    int64_t *learned = malloc(sizeof(int64_t) * 4 * (limit > 0 ? limit : 1));
    if (!learned) return PyErr_NoMemory();
    Py_ssize_t n = 0;
    int failed = 0;
    Py_BEGIN_ALLOW_THREADS
    while (n < limit && s->nheap) {
        HeapItem top = heap_pop(s);
        Pair *pair = find_pair(s, top.key);
        int64_t current = pair ? pair->count : 0;
        if (current != top.count) {  /* stale: the count has fallen since it was pushed */
            if (current && heap_push(s, current, top.key) < 0) {
                failed = 1;
                break;
            }
            continue;
        }
        if (current < s->floor) break;
        int64_t replaced;
        if (merge(s, pair, (int32_t)(first_id + n), &replaced) < 0) {
            failed = 1;
            break;
        }
        learned[4 * n] = (int64_t)(top.key >> ID_BITS);
        learned[4 * n + 1] = (int64_t)(top.key & ID_MASK);
        learned[4 * n + 2] = top.count;
        learned[4 * n + 3] = replaced;
        n++;
    }
    Py_END_ALLOW_THREADS
    if (failed) {
        s->broken = 1;
        free(learned);
        return PyErr_NoMemory();
    }
    PyObject *out = PyList_New(n);
    for (Py_ssize_t i = 0; out && i < n; i++) {
        PyObject *item = Py_BuildValue("(LLLL)", (long long)learned[4 * i], (long long)learned[4 * i + 1],
                                       (long long)learned[4 * i + 2], (long long)learned[4 * i + 3]);
        if (!item) {
            Py_CLEAR(out);
            break;
        }
        PyList_SET_ITEM(out, i, item);
    }
    free(learned);
    return out;
}

static int get_view(PyObject *obj, Py_buffer *view, const char *name, Py_ssize_t itemsize, Py_ssize_t len) {
    if (PyObject_GetBuffer(obj, view, PyBUF_WRITABLE | PyBUF_C_CONTIGUOUS | PyBUF_FORMAT) < 0) return -1;
    if (view->itemsize != itemsize || view->len != itemsize * len) {
        PyErr_Format(PyExc_ValueError, "%s: expected %zd items of %zd bytes", name, len, itemsize);
        PyBuffer_Release(view);
        return -1;
    }
    return 0;
}

/* The positions of one pair, from any buffer of int32 values. */
static int read_positions(PyObject *obj, Positions *out, Py_ssize_t end) {
    Py_buffer view;
    if (PyObject_GetBuffer(obj, &view, PyBUF_C_CONTIGUOUS | PyBUF_FORMAT) < 0) return -1;
    if (view.itemsize != 4) {
        PyErr_SetString(PyExc_ValueError, "positions must be 32-bit integers");
        PyBuffer_Release(&view);
        return -1;
    }
    Py_ssize_t n = view.len / 4;
    out->at = malloc(sizeof(int32_t) * (n ? n : 1));
    out->len = out->cap = n;
    if (!out->at) {
        PyBuffer_Release(&view);
        PyErr_NoMemory();
        return -1;
    }
    memcpy(out->at, view.buf, sizeof(int32_t) * n);
    PyBuffer_Release(&view);
    for (Py_ssize_t i = 0; i < n; i++) {
        if (out->at[i] < 0 || out->at[i] >= end) {
            positions_free(out);
            PyErr_SetString(PyExc_ValueError, "a position lies outside the arrays");
            return -1;
        }
    }
    return 0;
}

static void Loop_dealloc(Loop *s) {
    Py_buffer *views[] = {&s->tok_view, &s->nxt_view, &s->prv_view, &s->fr_view};
    for (int i = 0; i < s->views; i++) PyBuffer_Release(views[i]);
    for (Py_ssize_t i = 0; i < s->npairs; i++) positions_free(&s->pairs[i].pos);
    free(s->pairs);
    free(s->heap);
    free(s->made);
    table_free(&s->table);
    table_free(&s->made_table);
    Py_TYPE(s)->tp_free((PyObject *)s);
}

static PyObject *Loop_new(PyTypeObject *type, PyObject *args, PyObject *kwargs) {
    PyObject *tok, *nxt, *prv, *fr, *counts, *index;
    long long floor;
    if (kwargs && PyDict_GET_SIZE(kwargs)) {
        PyErr_SetString(PyExc_TypeError, "Loop() takes no keyword arguments");
        return NULL;
    }
    if (!PyArg_ParseTuple(args, "OOOOO!O!L", &tok, &nxt, &prv, &fr, &PyDict_Type, &counts, &PyDict_Type, &index,
                          &floor))
        return NULL;
    Loop *s = (Loop *)type->tp_alloc(type, 0);
    if (!s) return NULL;
    s->floor = floor < 1 ? 1 : floor;
    if (table_init(&s->table, 1024) < 0 || table_init(&s->made_table, 256) < 0) {
        Py_DECREF(s);
        return PyErr_NoMemory();
    }
    Py_buffer probe;
    if (PyObject_GetBuffer(tok, &probe, PyBUF_C_CONTIGUOUS) < 0) goto fail;
    Py_ssize_t len = probe.len / 4;
    PyBuffer_Release(&probe);
    if (get_view(tok, &s->tok_view, "tok", 4, len) < 0) goto fail;
    s->views = 1;
    if (get_view(nxt, &s->nxt_view, "nxt", 4, len) < 0) goto fail;
    s->views = 2;
    if (get_view(prv, &s->prv_view, "prv", 4, len) < 0) goto fail;
    s->views = 3;
    if (PyObject_GetBuffer(fr, &s->fr_view, PyBUF_WRITABLE | PyBUF_C_CONTIGUOUS | PyBUF_FORMAT) < 0) goto fail;
    s->views = 4;
    if ((s->fr_view.itemsize != 4 && s->fr_view.itemsize != 8) || s->fr_view.len != s->fr_view.itemsize * len) {
        PyErr_SetString(PyExc_ValueError, "fr: expected one 32- or 64-bit count per position");
        goto fail;
    }
    s->tok = s->tok_view.buf;
    s->nxt = s->nxt_view.buf;
    s->prv = s->prv_view.buf;
    if (s->fr_view.itemsize == 4) s->fr32 = s->fr_view.buf; else s->fr64 = s->fr_view.buf;
    PyObject *key, *value;
    Py_ssize_t i = 0;
    while (PyDict_Next(counts, &i, &key, &value)) {
        unsigned long long k = PyLong_AsUnsignedLongLong(key);
        long long c = PyLong_AsLongLong(value);
        if (PyErr_Occurred()) goto fail;
        PyObject *held = PyDict_GetItemWithError(index, key);
        if (!held) {
            if (!PyErr_Occurred()) PyErr_SetString(PyExc_KeyError, "a counted pair has no positions");
            goto fail;
        }
        Positions pos;
        if (read_positions(held, &pos, len) < 0) goto fail;
        if (add_pair(s, (uint64_t)k, (int64_t)c, pos) < 0) {
            positions_free(&pos);
            PyErr_NoMemory();
            goto fail;
        }
    }
    return (PyObject *)s;
fail:
    Py_DECREF(s);
    return NULL;
}

static PyMethodDef Loop_methods[] = {
    {"run", (PyCFunction)Loop_run, METH_VARARGS,
     "run(limit, first_id) -> [(left, right, count, replaced)]: learn at most `limit` merges."},
    {NULL, NULL, 0, NULL},
};

static PyTypeObject LoopType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "tokviz.training._merge.Loop",
    .tp_doc = "Loop(tok, nxt, prv, fr, counts, index, min_frequency): the merge loop over these arrays.",
    .tp_basicsize = sizeof(Loop),
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_new = Loop_new,
    .tp_dealloc = (destructor)Loop_dealloc,
    .tp_methods = Loop_methods,
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT,
    .m_name = "_merge",
    .m_doc = "The BPE merge loop, compiled (see tokviz.training.bpe).",
    .m_size = -1,
};

PyMODINIT_FUNC PyInit__merge(void) {
    if (PyType_Ready(&LoopType) < 0) return NULL;
    PyObject *m = PyModule_Create(&module);
    if (!m) return NULL;
    Py_INCREF(&LoopType);
    if (PyModule_AddObject(m, "Loop", (PyObject *)&LoopType) < 0) {
        Py_DECREF(&LoopType);
        Py_DECREF(m);
        return NULL;
    }
    return m;
}
