/* SPDX-License-Identifier: Apache-2.0
 *
 * The pending-request table of one VM connection (see correlate.h).
 *
 * One block holds every pending entry: a binary min-heap of the entries
 * ordered by (deadline, insertion order), for timeouts, and an
 * open-addressing index (id -> heap position, linear probing), for replies:
 * the index is expected O(1) a lookup, the heap O(log n), so insert, take
 * and expire cost expected O(log n) and next_deadline O(1). The index's
 * hash is multiply-shift with a random odd multiplier drawn for each table
 * (a VM that answers some ids and not others cannot pile the rest into one
 * probe run, as it could with a fixed hash); the worst case, every id in
 * one run, is bounded by the table's cap (max_pending). Every
 * entry leaves exactly once, through take, expire or drain; the table never
 * calls anything. Ids that timed out are remembered in a small ring
 * (DDM_EXPIRED_MEMORY) so a late reply can be told from a foreign one in
 * the logs.
 * Memory: the block exists only while an entry is pending (made at the
 * first insert with room for DDM_PENDING_FIRST_ROOM entries, doubled when
 * full up to the cap, halved when a removal leaves it a quarter full, so a
 * table that never empties does not keep its peak, and freed when the last
 * entry leaves) and the ring only
 * after the first timeout, so the table of an idle VM is one small struct
 * and a burst of requests allocates and frees one block, not a hash table,
 * a sequence and a block per entry (whose short lives among the VM's
 * long-lived blocks left the heap's pages holed: doc/memory.md). The
 * insertion counter lives in the block too (it orders only entries pending
 * together) and the ring's counts in the ring, so the table itself is 24
 * bytes (glibc's smallest block; issue 16: one table a VM).
 * Non-goals: time keeping and callbacks (vm.c does both).
 */
#include "core/session/correlate.h"

#include <string.h>

#include <ddmon/plugin.h> /* DDM_REQUEST_MAX_PENDING */

#define DDM_EXPIRED_MEMORY 64
#define DDM_PENDING_FIRST_ROOM 4u   /* a handshake's burst: HELO, FEAT and a plugin's first asks */
#define DDM_PENDING_ROOM_MAX 32768u /* heap positions + 1 fit the index's 16 bits */

typedef struct Entry {
    DdmPending p;
    guint64 seq;          /* insertion order: ties on deadline keep FIFO */
    guint32 slot;         /* this entry's slot in the index */
} Entry;

/* The one block: header, then room entries (the heap, positions 0..n-1),
 * then 2 * room index slots, each 0 (free) or heap position + 1. */
typedef struct DdmCorrelatePending {
    guint room;           /* entries the block holds, a power of two */
    guint n;              /* entries pending */
    guint32 hash_mult;    /* the table's odd multiplier (DdmCorrelate's) */
    guint64 next_seq;     /* the next insertion's seq (restarts with each new block) */
    guint16 *index;       /* into this block, after the entries */
    Entry heap[];
} Pending;

/* The ids that timed out last: a ring of cap ids (4 at the first timeout,
 * doubling up to DDM_EXPIRED_MEMORY), n of them valid, pos the next to
 * overwrite. */
typedef struct DdmCorrelateExpired {
    guint16 cap, n, pos;
    uint32_t ids[];
} Expired;

/* An idle VM's table: glibc's smallest block (24 bytes of payload). */
G_STATIC_ASSERT(sizeof(struct DdmCorrelate) <= 24);

static gboolean entry_before(const Entry *x, const Entry *y)
{
    if (x->p.deadline_us != y->p.deadline_us)
        return x->p.deadline_us < y->p.deadline_us;
    return x->seq < y->seq;
}

static guint index_mask(const Pending *t)
{
    return 2 * t->room - 1;
}

/* Multiply-shift: the top log2(slots) bits of id * hash_mult (slots >= 8). */
static guint index_home(const Pending *t, uint32_t id)
{
    return (guint)((guint32)(id * t->hash_mult) >> (32 - g_bit_storage(index_mask(t))));
}

/* Room for @room entries and their index, empty. */
static Pending *pending_new(guint room, guint32 hash_mult)
{
    gsize head = G_STRUCT_OFFSET(Pending, heap) + room * sizeof(Entry);
    Pending *t = g_malloc(head + 2 * room * sizeof(guint16));

    t->room = room;
    t->n = 0;
    t->hash_mult = hash_mult;
    t->next_seq = 0;
    /* Just past the entries: an Entry's alignment covers a guint16's. */
    t->index = (guint16 *)&t->heap[room];
    memset(t->index, 0, 2 * room * sizeof(guint16));
    return t;
}

/* The index slot holding @id, or -1. */
static gint index_find(const Pending *t, uint32_t id)
{
    guint mask = index_mask(t);
    guint s;

    for (s = index_home(t, id); t->index[s] != 0; s = (s + 1) & mask)
        if (t->heap[t->index[s] - 1].p.id == id)
            return (gint)s;
    return -1;
}

static void index_put(Pending *t, guint pos)
{
    guint mask = index_mask(t);
    guint s = index_home(t, t->heap[pos].p.id);

    while (t->index[s] != 0)
        s = (s + 1) & mask;
    t->index[s] = (guint16)(pos + 1);
    t->heap[pos].slot = s;
}

/* Free slot @s, shifting back the entries after it that probed past it
 * (linear probing's deletion: no tombstones, so lookups stay short). */
static void index_delete(Pending *t, guint s)
{
    guint mask = index_mask(t);
    guint hole = s, i = s;

    t->index[hole] = 0;
    for (;;) {
        guint home;

        i = (i + 1) & mask;
        if (t->index[i] == 0)
            return;
        home = index_home(t, t->heap[t->index[i] - 1].p.id);
        /* the entry at i may move to the hole unless its home lies
         * cyclically in (hole, i] */
        if (((i - home) & mask) >= ((i - hole) & mask)) {
            t->index[hole] = t->index[i];
            t->heap[t->index[hole] - 1].slot = hole;
            t->index[i] = 0;
            hole = i;
        }
    }
}

/* Put @e at heap position @pos and point its index slot at it. */
static void heap_set(Pending *t, guint pos, const Entry *e)
{
    t->heap[pos] = *e;
    t->index[e->slot] = (guint16)(pos + 1);
}

static void sift_up(Pending *t, guint pos)
{
    Entry e = t->heap[pos];

    while (pos > 0) {
        guint parent = (pos - 1) / 2;

        if (!entry_before(&e, &t->heap[parent]))
            break;
        heap_set(t, pos, &t->heap[parent]);
        pos = parent;
    }
    heap_set(t, pos, &e);
}

static void sift_down(Pending *t, guint pos)
{
    Entry e = t->heap[pos];

    for (;;) {
        guint child = 2 * pos + 1;

        if (child >= t->n)
            break;
        if (child + 1 < t->n && entry_before(&t->heap[child + 1], &t->heap[child]))
            child++;
        if (!entry_before(&t->heap[child], &e))
            break;
        heap_set(t, pos, &t->heap[child]);
        pos = child;
    }
    heap_set(t, pos, &e);
}

/* The same entries, in the same heap order, in a block of @room (>= n). */
static Pending *pending_resize(Pending *t, guint room)
{
    Pending *other = pending_new(room, t->hash_mult);
    guint i;

    for (i = 0; i < t->n; i++) {
        other->heap[i] = t->heap[i];
        index_put(other, i);
    }
    other->n = t->n;
    other->next_seq = t->next_seq;
    g_free(t);
    return other;
}

DdmCorrelate *ddm_correlate_new(guint max_pending)
{
    DdmCorrelate *c = g_new0(DdmCorrelate, 1);
    c->max_pending = max_pending ? max_pending : DDM_REQUEST_MAX_PENDING;
    c->max_pending = MIN(c->max_pending, DDM_PENDING_ROOM_MAX);
    c->hash_mult = g_random_int() | 1u;
    return c;
}

void ddm_correlate_set_hash_multiplier(DdmCorrelate *c, guint32 odd)
{
    g_return_if_fail(c != NULL && (odd & 1u) && c->pending == NULL);
    c->hash_mult = odd;
}

guint ddm_correlate_room(const DdmCorrelate *c)
{
    g_return_val_if_fail(c != NULL, 0);
    return c->pending ? c->pending->room : 0;
}

void ddm_correlate_free(DdmCorrelate *c)
{
    if (!c)
        return;
    if (c->pending) {
        if (c->pending->n != 0)
            g_warning("pending table freed with %u entries (their callbacks never ran)",
                      c->pending->n);
        g_free(c->pending);
    }
    g_free(c->expired);
    g_free(c);
}

gboolean ddm_correlate_insert(DdmCorrelate *c, const DdmPending *p)
{
    Pending *t;
    guint pos;

    g_return_val_if_fail(c != NULL && p != NULL, FALSE);
    t = c->pending;
    if (t && t->n >= c->max_pending)
        return FALSE;
    if (t && index_find(t, p->id) >= 0)
        return FALSE;
    if (!t)
        t = c->pending = pending_new(DDM_PENDING_FIRST_ROOM, c->hash_mult);
    else if (t->n == t->room)
        t = c->pending = pending_resize(t, t->room * 2);
    pos = t->n++;
    t->heap[pos].p = *p;
    t->heap[pos].seq = t->next_seq++;
    index_put(t, pos);
    sift_up(t, pos);
    return TRUE;
}

/* Remove the entry at heap position @pos, copying it out; the block halves
 * when a quarter full (amortised O(1): it must fill to half again, or empty
 * to an eighth, before the next resize) and goes with the last entry. */
static void remove_at(DdmCorrelate *c, guint pos, DdmPending *out)
{
    Pending *t = c->pending;
    guint last;

    if (out)
        *out = t->heap[pos].p;
    index_delete(t, t->heap[pos].slot);
    last = --t->n;
    if (pos != last) {
        heap_set(t, pos, &t->heap[last]);
        /* the moved entry may belong above or below @pos */
        if (pos > 0 && entry_before(&t->heap[pos], &t->heap[(pos - 1) / 2]))
            sift_up(t, pos);
        else
            sift_down(t, pos);
    }
    if (t->n == 0) { /* idle: the block goes until the next insert */
        g_free(t);
        c->pending = NULL;
    } else if (t->room > DDM_PENDING_FIRST_ROOM && t->n <= t->room / 4) {
        c->pending = pending_resize(t, t->room / 2);
    }
}

/* The entry with the earliest deadline, or NULL when none is pending. */
static const Entry *first_entry(const DdmCorrelate *c)
{
    return c->pending ? &c->pending->heap[0] : NULL;
}

gboolean ddm_correlate_take_(DdmCorrelate *c, uint32_t id, DdmPending *out)
{
    gint s = index_find(c->pending, id);
    if (s < 0)
        return FALSE;
    remove_at(c, c->pending->index[s] - 1u, out);
    return TRUE;
}

gboolean ddm_correlate_contains(const DdmCorrelate *c, uint32_t id)
{
    g_return_val_if_fail(c != NULL, FALSE);
    return c->pending && index_find(c->pending, id) >= 0;
}

static void remember_expired(DdmCorrelate *c, uint32_t id)
{
    Expired *x = c->expired;
    if (!x || (x->n == x->cap && x->cap < DDM_EXPIRED_MEMORY)) {
        /* Full but below the cap, so never wrapped: the ids lie in order
         * from slot 0 and the ring grows in place (a VM with one timeout
         * keeps 4 ids, not 64). */
        guint cap = x ? MIN(x->cap * 2u, DDM_EXPIRED_MEMORY) : 4u;
        x = g_realloc(x, G_STRUCT_OFFSET(Expired, ids) + cap * sizeof(uint32_t));
        if (!c->expired)
            x->n = 0;
        x->cap = (guint16)cap;
        x->pos = x->n;
        c->expired = x;
    }
    x->ids[x->pos] = id;
    x->pos = (guint16)((x->pos + 1u) % x->cap);
    if (x->n < x->cap)
        x->n++;
}

GArray *ddm_correlate_expire(DdmCorrelate *c, gint64 now_us)
{
    GArray *out = g_array_new(FALSE, FALSE, sizeof(DdmPending));

    g_return_val_if_fail(c != NULL, out);
    for (;;) {
        const Entry *e = first_entry(c);
        DdmPending p;

        if (!e || e->p.deadline_us > now_us)
            break;
        remove_at(c, 0, &p);
        remember_expired(c, p.id);
        g_array_append_val(out, p);
    }
    return out;
}

void ddm_correlate_postpone(DdmCorrelate *c, gint64 deadline_us)
{
    g_return_if_fail(c != NULL);
    for (;;) {
        const Entry *e = first_entry(c);

        if (!e || e->p.deadline_us >= deadline_us)
            return;
        /* the earliest moves behind every earlier-moved one of the same
         * deadline: seq keeps their order */
        c->pending->heap[0].p.deadline_us = deadline_us;
        sift_down(c->pending, 0);
    }
}

void ddm_correlate_shift(DdmCorrelate *c, gint64 by_us)
{
    gboolean clamped = FALSE;

    g_return_if_fail(c != NULL);
    if (!c->pending)
        return;
    /* the same amount for every entry keeps their order, and so the heap */
    for (guint i = 0; i < c->pending->n; i++) {
        gint64 *d = &c->pending->heap[i].p.deadline_us;
        if (by_us < 0 && *d < G_MININT64 - by_us) {
            *d = G_MININT64;
            clamped = TRUE;
        } else if (by_us > 0 && *d > G_MAXINT64 - by_us) {
            *d = G_MAXINT64;
            clamped = TRUE;
        } else {
            *d += by_us;
        }
    }
    /* a clamp can tie entries that were ordered: build the heap again */
    if (clamped)
        for (guint i = c->pending->n / 2; i-- > 0;)
            sift_down(c->pending, i);
}

gint64 ddm_correlate_next_deadline(const DdmCorrelate *c)
{
    const Entry *e;

    g_return_val_if_fail(c != NULL, G_MAXINT64);
    e = first_entry(c);
    return e ? e->p.deadline_us : G_MAXINT64;
}

GArray *ddm_correlate_drain(DdmCorrelate *c)
{
    GArray *out = g_array_new(FALSE, FALSE, sizeof(DdmPending));

    g_return_val_if_fail(c != NULL, out);
    /* In deadline order, so callers see a deterministic sequence. */
    while (c->pending) {
        DdmPending p;

        remove_at(c, 0, &p);
        g_array_append_val(out, p);
    }
    return out;
}

guint ddm_correlate_count(const DdmCorrelate *c)
{
    g_return_val_if_fail(c != NULL, 0);
    return c->pending ? c->pending->n : 0;
}

uint32_t ddm_correlate_newest_id(const DdmCorrelate *c)
{
    uint32_t newest = 0;
    guint i;

    g_return_val_if_fail(c != NULL, 0);
    for (i = 0; c->pending && i < c->pending->n; i++)
        newest = MAX(newest, c->pending->heap[i].p.id);
    return newest;
}

gboolean ddm_correlate_was_expired(const DdmCorrelate *c, uint32_t id)
{
    guint i;

    g_return_val_if_fail(c != NULL, FALSE);
    for (i = 0; c->expired && i < c->expired->n; i++)
        if (c->expired->ids[i] == id)
            return TRUE;
    return FALSE;
}
