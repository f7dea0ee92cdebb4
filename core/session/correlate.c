/* SPDX-License-Identifier: Apache-2.0
 *
 * The pending-request table of one VM connection (see correlate.h).
 *
 * Two indexes over the same entries: a hash (id -> entry) for replies and a
 * GSequence ordered by (deadline, insertion order) for timeouts, so take,
 * expire and next_deadline are all O(log n). Every entry leaves exactly
 * once, through take, expire or drain; the table never calls anything.
 * Ids that timed out are remembered in a small ring (DDM_EXPIRED_MEMORY) so
 * a late reply can be told from a foreign one in the logs.
 * Memory: both indexes exist only while an entry is pending (made at the
 * first insert, freed when the last entry leaves) and the ring only after
 * the first timeout, so the table of an idle VM is one small struct.
 * Non-goals: time keeping and callbacks (vm.c does both).
 */
#include "core/session/correlate.h"

#include <ddmon/plugin.h> /* DDM_REQUEST_MAX_PENDING */

#define DDM_EXPIRED_MEMORY 64

typedef struct Entry {
    DdmPending p;
    guint64 seq;          /* insertion order: ties on deadline keep FIFO */
    GSequenceIter *iter;  /* position in by_deadline */
} Entry;

struct DdmCorrelate {
    guint max_pending;
    GHashTable *by_id;         /* GUINT_TO_POINTER(id) -> Entry* (owned) */
    GSequence *by_deadline;    /* Entry* (borrowed), ordered */
    guint64 next_seq;
    uint32_t *expired;         /* expired_cap ids, NULL before the first timeout */
    guint expired_cap;         /* 4 at the first timeout, doubling up to DDM_EXPIRED_MEMORY */
    guint n_expired;           /* valid slots in expired[] */
    guint expired_pos;         /* next slot to overwrite */
};

static gint entry_cmp(gconstpointer a, gconstpointer b, gpointer ud)
{
    const Entry *x = a, *y = b;
    (void)ud;
    if (x->p.deadline_us != y->p.deadline_us)
        return x->p.deadline_us < y->p.deadline_us ? -1 : 1;
    if (x->seq != y->seq)
        return x->seq < y->seq ? -1 : 1;
    return 0;
}

DdmCorrelate *ddm_correlate_new(guint max_pending)
{
    DdmCorrelate *c = g_new0(DdmCorrelate, 1);
    c->max_pending = max_pending ? max_pending : DDM_REQUEST_MAX_PENDING;
    return c;
}

void ddm_correlate_free(DdmCorrelate *c)
{
    if (!c)
        return;
    if (c->by_id) {
        if (g_hash_table_size(c->by_id) != 0)
            g_warning("pending table freed with %u entries (their callbacks never ran)",
                      g_hash_table_size(c->by_id));
        g_sequence_free(c->by_deadline);
        g_hash_table_destroy(c->by_id);
    }
    g_free(c->expired);
    g_free(c);
}

gboolean ddm_correlate_insert(DdmCorrelate *c, const DdmPending *p)
{
    Entry *e;

    g_return_val_if_fail(c != NULL && p != NULL, FALSE);
    if (!c->by_id) {
        c->by_id = g_hash_table_new_full(g_direct_hash, g_direct_equal, NULL, g_free);
        c->by_deadline = g_sequence_new(NULL);
    }
    if (g_hash_table_size(c->by_id) >= c->max_pending)
        return FALSE;
    if (g_hash_table_contains(c->by_id, GUINT_TO_POINTER(p->id)))
        return FALSE;
    e = g_new0(Entry, 1);
    e->p = *p;
    e->seq = c->next_seq++;
    e->iter = g_sequence_insert_sorted(c->by_deadline, e, entry_cmp, NULL);
    g_hash_table_insert(c->by_id, GUINT_TO_POINTER(p->id), e);
    return TRUE;
}

/* Unlink @e from both indexes, copy it out and free it. */
static void remove_entry(DdmCorrelate *c, Entry *e, DdmPending *out)
{
    if (out)
        *out = e->p;
    g_sequence_remove(e->iter);
    g_hash_table_remove(c->by_id, GUINT_TO_POINTER(e->p.id)); /* frees e */
    if (g_hash_table_size(c->by_id) == 0) { /* idle: the indexes go until the next insert */
        g_sequence_free(c->by_deadline);
        g_hash_table_destroy(c->by_id);
        c->by_deadline = NULL;
        c->by_id = NULL;
    }
}

/* The entry with the earliest deadline, or NULL when none is pending. */
static Entry *first_entry(const DdmCorrelate *c)
{
    GSequenceIter *it;

    if (!c->by_deadline)
        return NULL;
    it = g_sequence_get_begin_iter(c->by_deadline);
    return g_sequence_iter_is_end(it) ? NULL : g_sequence_get(it);
}

gboolean ddm_correlate_take(DdmCorrelate *c, uint32_t id, DdmPending *out)
{
    Entry *e;

    g_return_val_if_fail(c != NULL, FALSE);
    if (!c->by_id)
        return FALSE;
    e = g_hash_table_lookup(c->by_id, GUINT_TO_POINTER(id));
    if (!e)
        return FALSE;
    remove_entry(c, e, out);
    return TRUE;
}

gboolean ddm_correlate_contains(const DdmCorrelate *c, uint32_t id)
{
    g_return_val_if_fail(c != NULL, FALSE);
    return c->by_id && g_hash_table_contains(c->by_id, GUINT_TO_POINTER(id));
}

static void remember_expired(DdmCorrelate *c, uint32_t id)
{
    if (c->n_expired == c->expired_cap && c->expired_cap < DDM_EXPIRED_MEMORY) {
        /* Full but below the cap, so never wrapped: the ids lie in order
         * from slot 0 and the ring grows in place (a VM with one timeout
         * keeps 16 bytes, not 256). */
        c->expired_cap = c->expired_cap ? MIN(c->expired_cap * 2, DDM_EXPIRED_MEMORY) : 4;
        c->expired = g_renew(uint32_t, c->expired, c->expired_cap);
        c->expired_pos = c->n_expired;
    }
    c->expired[c->expired_pos] = id;
    c->expired_pos = (c->expired_pos + 1) % c->expired_cap;
    if (c->n_expired < c->expired_cap)
        c->n_expired++;
}

GArray *ddm_correlate_expire(DdmCorrelate *c, gint64 now_us)
{
    GArray *out = g_array_new(FALSE, FALSE, sizeof(DdmPending));

    g_return_val_if_fail(c != NULL, out);
    for (;;) {
        Entry *e = first_entry(c);
        DdmPending p;

        if (!e || e->p.deadline_us > now_us)
            break;
        remove_entry(c, e, &p);
        remember_expired(c, p.id);
        g_array_append_val(out, p);
    }
    return out;
}

void ddm_correlate_postpone(DdmCorrelate *c, gint64 deadline_us)
{
    g_return_if_fail(c != NULL);
    for (;;) {
        Entry *e = first_entry(c);

        if (!e || e->p.deadline_us >= deadline_us)
            return;
        /* the earliest moves behind every earlier-moved one of the same
         * deadline: seq keeps their order */
        e->p.deadline_us = deadline_us;
        g_sequence_sort_changed(e->iter, entry_cmp, NULL);
    }
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
    for (;;) {
        Entry *e = first_entry(c);
        DdmPending p;

        if (!e)
            break;
        remove_entry(c, e, &p);
        g_array_append_val(out, p);
    }
    return out;
}

guint ddm_correlate_count(const DdmCorrelate *c)
{
    g_return_val_if_fail(c != NULL, 0);
    return c->by_id ? g_hash_table_size(c->by_id) : 0;
}

uint32_t ddm_correlate_newest_id(const DdmCorrelate *c)
{
    GHashTableIter it;
    gpointer k, v;
    uint32_t newest = 0;
    g_return_val_if_fail(c != NULL, 0);
    if (!c->by_id)
        return 0;
    g_hash_table_iter_init(&it, c->by_id);
    while (g_hash_table_iter_next(&it, &k, &v)) {
        uint32_t id = GPOINTER_TO_UINT(k);
        if (id > newest)
            newest = id;
    }
    return newest;
}

gboolean ddm_correlate_was_expired(const DdmCorrelate *c, uint32_t id)
{
    guint i;

    g_return_val_if_fail(c != NULL, FALSE);
    for (i = 0; i < c->n_expired; i++)
        if (c->expired[i] == id)
            return TRUE;
    return FALSE;
}
