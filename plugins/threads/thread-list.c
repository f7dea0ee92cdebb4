/* SPDX-License-Identifier: Apache-2.0
 *
 * threads: the per-VM thread list. A dense array of threads, never longer
 * than l->max (THREADS_MAX), with a hashed index by VM thread id (open
 * addressing, linear probing, at most half full, hashed with a per-list
 * random seed so a VM cannot pick ids that collide): finding, adding and
 * removing a thread cost O(1) expected, whatever order the ids come in
 * (a THST of 65,535 threads in descending id order once cost O(n^2)
 * memmoves). The array is in id order when it is published
 * (thread_list_sort: O(n log n), only when an insert or a removal broke the
 * order). l->ops counts the work (index probes, element moves, sort
 * comparisons) so a test can bound it without a clock. THCR/THNM name
 * threads ("announced"); THST tables bring state, tid, CPU ticks and the
 * daemon flag. CPU % of one thread = delta(utime + stime) / hz /
 * delta(wall) × 100 between two consecutive tables that both list it; the
 * first table, a tick counter that went backwards (tid reuse) or a zero
 * time step give no figure. Owns the index (malloc'd) and its threads'
 * references to their names, which are shared by every list of the plugin
 * (interned below: the apps of one device name their threads alike, so
 * 1,000 VMs hold "main", "Signal Catcher"... once, not 1,000 times). No
 * host calls.
 */
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>

#include "threads.h"

/* Every VM holds a list of these: keep the layout without holes. */
_Static_assert(sizeof(thread_info) <= 32, "thread_info grew: reorder its members");

/* ------------------------------------------------------------ names */

/* One interned name: its reference count and chain link, then the text.
 * A chain longer than NAME_CHAIN_MAX (names that collide, by chance or
 * chosen by a VM) takes no more: such a name stays private to its thread
 * (refs 0: never in the table), so an insert costs at most that many
 * compares. The table doubles at one name a bucket; it goes when empty. */
typedef struct shared_name {
    struct shared_name *next;
    uint32_t refs; /* 0: private (not in the table) */
    uint32_t hash;
    char s[];
} shared_name;

#define NAME_CHAIN_MAX 8

static struct {
    shared_name **buckets;
    size_t mask; /* buckets - 1 */
    size_t count;
    uint32_t seed;
} names;

static shared_name *name_of(char *s)
{
    return (shared_name *)(void *)(s - offsetof(shared_name, s));
}

static uint32_t name_hash(const char *s)
{
    uint32_t h = 2166136261u ^ names.seed; /* FNV-1a, seeded per process */
    for (; *s; s++)
        h = (h ^ (uint8_t)*s) * 16777619u;
    return h ^ (h >> 15);
}

static void names_grow(void)
{
    size_t n = names.buckets ? (names.mask + 1) * 2 : 64, i;
    shared_name **b = calloc(n, sizeof *b);
    if (!b)
        return; /* chains just get longer (capped) */
    for (i = 0; names.buckets && i <= names.mask; i++) {
        shared_name *e = names.buckets[i], *next;
        for (; e; e = next) {
            next = e->next;
            e->next = b[e->hash & (n - 1)];
            b[e->hash & (n - 1)] = e;
        }
    }
    free(names.buckets);
    names.buckets = b;
    names.mask = n - 1;
}

/* @name (malloc'd, taken) as a shared name: the interned copy when there is
 * one, else a new one; NULL when out of memory (then @name is freed). */
static char *name_intern(char *name)
{
    size_t len = strlen(name), chain = 0;
    uint32_t h;
    shared_name *e, *n;

    if (!names.buckets) {
        if (getrandom(&names.seed, sizeof names.seed, GRND_NONBLOCK) != sizeof names.seed)
            names.seed = (uint32_t)(uintptr_t)&names ^ 0x9E3779B9u;
        names_grow();
    }
    h = name_hash(name);
    for (e = names.buckets ? names.buckets[h & names.mask] : NULL; e; e = e->next, chain++)
        if (e->hash == h && strcmp(e->s, name) == 0) {
            e->refs++;
            free(name);
            return e->s;
        }
    n = malloc(sizeof *n + len + 1);
    if (!n) {
        free(name);
        return NULL;
    }
    memcpy(n->s, name, len + 1);
    free(name);
    n->hash = h;
    n->refs = 0;
    n->next = NULL;
    if (!names.buckets || chain >= NAME_CHAIN_MAX)
        return n->s; /* private */
    n->refs = 1;
    n->next = names.buckets[h & names.mask];
    names.buckets[h & names.mask] = n;
    if (++names.count > names.mask + 1)
        names_grow();
    return n->s;
}

static void name_release(char *s)
{
    shared_name *n, **at;
    if (!s)
        return;
    n = name_of(s);
    if (n->refs == 0) { /* private */
        free(n);
        return;
    }
    if (--n->refs > 0)
        return;
    for (at = &names.buckets[n->hash & names.mask]; *at != n; at = &(*at)->next)
        ;
    *at = n->next;
    free(n);
    if (--names.count == 0) {
        free(names.buckets);
        names.buckets = NULL;
        names.mask = 0;
    }
}

size_t thread_names_shared(void)
{
    return names.count;
}

static void thread_free(thread_info *t)
{
    name_release(t->name);
    free(t->stats);
}

void thread_list_init(thread_list *l)
{
    memset(l, 0, sizeof *l);
    l->max = THREADS_MAX;
    l->sorted = 1;
    if (getrandom(&l->seed, sizeof l->seed, GRND_NONBLOCK) != sizeof l->seed)
        l->seed = (uint32_t)(uintptr_t)l ^ 0x9E3779B9u;
}

void thread_list_clear(thread_list *l)
{
    size_t i;
    for (i = 0; i < l->n; i++)
        thread_free(&l->v[i]);
    free(l->v);
    free(l->index);
    l->v = NULL;
    l->index = NULL;
    l->n = l->cap = l->index_mask = 0;
    l->sorted = 1;
}

/* Home slot of @id (murmur3's finalizer over the seeded id). */
static size_t home(const thread_list *l, uint32_t id)
{
    uint32_t h = id ^ l->seed;
    h ^= h >> 16;
    h *= 0x85EBCA6Bu;
    h ^= h >> 13;
    h *= 0xC2B2AE35u;
    h ^= h >> 16;
    return h & l->index_mask;
}

/* The slot holding @id, or the empty slot where it would go (*found says
 * which). The index must exist. */
static size_t slot_of(thread_list *l, uint32_t id, int *found)
{
    size_t s = home(l, id);
    for (;;) {
        uint32_t at = l->index[s];
        l->ops++;
        if (!at) {
            *found = 0;
            return s;
        }
        if (l->v[at - 1].id == id) {
            *found = 1;
            return s;
        }
        s = (s + 1) & l->index_mask;
    }
}

/* A new index of @slots (a power of two) slots over v[0..n). 0 or -1. */
static int index_rebuild(thread_list *l, size_t slots)
{
    uint32_t *ni = calloc(slots, sizeof *ni);
    size_t i;
    int found;
    if (!ni)
        return -1;
    free(l->index);
    l->index = ni;
    l->index_mask = slots - 1;
    for (i = 0; i < l->n; i++)
        l->index[slot_of(l, l->v[i].id, &found)] = (uint32_t)(i + 1);
    return 0;
}

/* Re-index v[0..n) in the index as it is (after the array moved): no allocation. */
static void index_refill(thread_list *l)
{
    size_t i;
    int found;
    memset(l->index, 0, (l->index_mask + 1) * sizeof *l->index);
    for (i = 0; i < l->n; i++)
        l->index[slot_of(l, l->v[i].id, &found)] = (uint32_t)(i + 1);
}

/* Empty slot @s (linear probing's backward shift: no tombstones). */
static void index_delete(thread_list *l, size_t s)
{
    size_t i = s, j = s;
    for (;;) {
        size_t k;
        j = (j + 1) & l->index_mask;
        l->ops++;
        if (!l->index[j])
            break;
        k = home(l, l->v[l->index[j] - 1].id);
        /* the entry at j may move to i unless its home lies cyclically in (i, j] */
        if ((i <= j) ? (i < k && k <= j) : (i < k || k <= j))
            continue;
        l->index[i] = l->index[j];
        i = j;
    }
    l->index[i] = 0;
}

thread_info *thread_list_find(thread_list *l, uint32_t id)
{
    int found;
    size_t s;
    if (!l->n)
        return NULL;
    s = slot_of(l, id, &found);
    return found ? &l->v[l->index[s] - 1] : NULL;
}

thread_info *thread_list_get(thread_list *l, uint32_t id)
{
    int found = 0;
    size_t s = 0;
    thread_info *t;
    if (l->index) {
        s = slot_of(l, id, &found);
        if (found)
            return &l->v[l->index[s] - 1];
    }
    if (l->n >= l->max)
        return NULL;
    if (l->n == l->cap) {
        size_t ncap = l->cap ? l->cap * 2 : 16;
        thread_info *nv;
        if (ncap > l->max)
            ncap = l->max;
        nv = realloc(l->v, ncap * sizeof *nv);
        if (!nv)
            return NULL;
        l->v = nv;
        l->cap = ncap;
    }
    if (!l->index || l->index_mask + 1 < 2 * l->cap) {
        size_t slots = 32;
        while (slots < 2 * l->cap)
            slots *= 2;
        if (index_rebuild(l, slots) != 0)
            return NULL;
        s = slot_of(l, id, &found);
    }
    t = &l->v[l->n];
    memset(t, 0, sizeof *t);
    t->id = id;
    if (l->n > 0 && l->v[l->n - 1].id > id)
        l->sorted = 0;
    l->index[s] = (uint32_t)(l->n + 1);
    l->n++;
    return t;
}

int thread_list_remove(thread_list *l, uint32_t id)
{
    int found;
    size_t s, pos, last;
    if (!l->n)
        return 0;
    s = slot_of(l, id, &found);
    if (!found)
        return 0;
    pos = l->index[s] - 1;
    last = l->n - 1;
    thread_free(&l->v[pos]);
    index_delete(l, s);
    if (pos != last) { /* the last thread fills the hole */
        l->v[pos] = l->v[last];
        l->index[slot_of(l, l->v[pos].id, &found)] = (uint32_t)(pos + 1);
        l->sorted = 0;
        l->ops++;
    }
    l->n--;
    return 1;
}

static uint64_t sort_compares; /* thread_list_sort's comparisons (one plugin thread) */

static int cmp_id(const void *a, const void *b)
{
    const thread_info *x = a, *y = b;
    sort_compares++;
    return x->id < y->id ? -1 : x->id > y->id;
}

void thread_list_sort(thread_list *l)
{
    if (l->sorted)
        return;
    sort_compares = 0;
    qsort(l->v, l->n, sizeof *l->v, cmp_id);
    l->ops += sort_compares;
    if (l->index)
        index_refill(l);
    l->sorted = 1;
}

thread_info *thread_list_name(thread_list *l, uint32_t id, char *name)
{
    thread_info *t = thread_list_get(l, id);
    if (!t) {
        free(name);
        return NULL;
    }
    name = name_intern(name);
    if (!name)
        return NULL;
    name_release(t->name);
    t->name = name;
    t->announced = 1;
    return t;
}

/* CPU % from the previous sample of @t to (@ticks, @now). */
static void update_cpu(thread_info *t, uint64_t ticks, double now, unsigned hz)
{
    thread_stats *s = t->stats;
    double dt = now - s->prev_wall;
    t->has_cpu = 0;
    if (t->has_prev && ticks >= s->prev_ticks && dt > 0 && hz > 0) {
        s->cpu = (double)(ticks - s->prev_ticks) / (double)hz / dt * 100.0;
        s->delta_ticks = ticks - s->prev_ticks;
        t->has_cpu = 1;
    }
    t->has_prev = 1;
    s->prev_ticks = ticks;
    s->prev_wall = now;
}

size_t thread_list_apply_thst(thread_list *l, const thst_table *t, double now, unsigned hz)
{
    size_t i, out, dropped = 0;

    for (i = 0; i < l->n; i++)
        l->v[i].has_stats = -1; /* mark: not yet seen in this table (set to 1 when seen) */
    for (i = 0; i < t->n; i++) {
        const thst_entry *e = &t->e[i];
        thread_info *ti = thread_list_get(l, e->id);
        if (ti && t->form == THST_FORM_REAL && !ti->stats)
            ti->stats = calloc(1, sizeof *ti->stats);
        if (!ti || (t->form == THST_FORM_REAL && !ti->stats)) {
            dropped++; /* the list is full (or out of memory) */
            continue;
        }
        ti->has_stats = 1;
        ti->form = t->form;
        ti->status = e->status;
        ti->suspended = e->suspended;
        if (t->form == THST_FORM_REAL) {
            ti->stats->tid = e->tid;
            ti->stats->utime = e->utime;
            ti->stats->stime = e->stime;
            ti->daemon = e->daemon;
            update_cpu(ti, (uint64_t)e->utime + e->stime, now, hz);
        } else {
            ti->has_prev = ti->has_cpu = 0;
        }
    }
    /* threads this table did not list: kept without stats when announced,
     * otherwise dropped, in one pass that keeps the order */
    for (i = 0, out = 0; i < l->n; i++) {
        thread_info *ti = &l->v[i];
        if (ti->has_stats != 1 && !ti->announced) {
            thread_free(ti);
            continue;
        }
        if (ti->has_stats != 1) {
            ti->has_stats = 0;
            ti->has_prev = ti->has_cpu = 0;
        }
        if (out != i) {
            l->v[out] = *ti;
            l->ops++;
        }
        out++;
    }
    if (out != l->n) {
        l->n = out;
        if (l->index)
            index_refill(l);
    }
    return dropped;
}
