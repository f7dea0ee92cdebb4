/* SPDX-License-Identifier: Apache-2.0
 *
 * Short interests in views (interest.h): a table of watches, each with its
 * expiry timer on the default main context. When the table is full, a new
 * note takes the place of the one noted longest ago (an O(max) walk, only
 * then); a kept note (ddm_view_interest_note_kept) is never taken and is
 * not counted against the cap.
 */
#include "core/views/interest.h"

struct DdmViewInterest {
    DdmViews *store;  /* borrowed */
    guint seconds, max;
    guint n_kept;     /* notes in live that are kept (not counted against max) */
    GHashTable *live; /* "VM\nNAME" (owned by the Note) -> Note* */
};

typedef struct Note {
    DdmViewInterest *in;
    char *id;
    guint watch_id;
    guint expiry;
    gint64 noted_us; /* its last note (monotonic): the oldest gives way when full */
    gboolean kept;   /* never taken for room */
} Note;

static char *note_id(const char *name, const char *vm_key)
{
    return g_strdup_printf("%s\n%s", vm_key != NULL ? vm_key : "", name);
}

static void note_free(gpointer p)
{
    Note *n = p;
    if (n->kept)
        n->in->n_kept--;
    ddm_views_unwatch(n->in->store, n->watch_id);
    if (n->expiry != 0)
        g_source_remove(n->expiry);
    g_free(n->id);
    g_free(n);
}

static gboolean note_expired(gpointer ud)
{
    Note *n = ud;
    n->expiry = 0;
    g_hash_table_remove(n->in->live, n->id); /* frees it */
    return G_SOURCE_REMOVE;
}

DdmViewInterest *ddm_view_interest_new(DdmViews *store, guint seconds, guint max)
{
    DdmViewInterest *in = g_new0(DdmViewInterest, 1);
    in->store = store;
    in->seconds = seconds;
    in->max = max;
    in->live = g_hash_table_new_full(g_str_hash, g_str_equal, NULL, note_free);
    return in;
}

void ddm_view_interest_free(DdmViewInterest *in)
{
    if (in == NULL)
        return;
    g_hash_table_destroy(in->live);
    g_free(in);
}

/* Drop the note (not kept) noted longest ago; FALSE if there is none. */
static gboolean drop_oldest(DdmViewInterest *in)
{
    GHashTableIter it;
    gpointer value;
    Note *oldest = NULL;
    g_hash_table_iter_init(&it, in->live);
    while (g_hash_table_iter_next(&it, NULL, &value)) {
        Note *n = value;
        if (!n->kept && (oldest == NULL || n->noted_us < oldest->noted_us))
            oldest = n;
    }
    if (oldest == NULL)
        return FALSE;
    g_hash_table_remove(in->live, oldest->id); /* frees it */
    return TRUE;
}

static gboolean note(DdmViewInterest *in, const char *name, const char *vm_key, gboolean kept)
{
    g_autofree char *id = note_id(name, vm_key);
    Note *n = g_hash_table_lookup(in->live, id);
    gboolean started = FALSE;
    if (n == NULL) {
        if (!kept && g_hash_table_size(in->live) - in->n_kept >= in->max && !drop_oldest(in))
            return FALSE; /* max is 0 */
        n = g_new0(Note, 1);
        n->in = in;
        n->id = g_steal_pointer(&id);
        n->watch_id = ddm_views_watch(in->store, name, vm_key);
        g_hash_table_insert(in->live, n->id, n);
        started = TRUE;
    } else {
        g_source_remove(n->expiry);
    }
    if (kept && !n->kept) {
        n->kept = TRUE;
        in->n_kept++;
    }
    n->noted_us = g_get_monotonic_time();
    n->expiry = g_timeout_add_seconds(in->seconds, note_expired, n);
    return started;
}

gboolean ddm_view_interest_note(DdmViewInterest *in, const char *name, const char *vm_key)
{
    return note(in, name, vm_key, FALSE);
}

gboolean ddm_view_interest_note_kept(DdmViewInterest *in, const char *name, const char *vm_key)
{
    return note(in, name, vm_key, TRUE);
}

gboolean ddm_view_interest_has(const DdmViewInterest *in, const char *name, const char *vm_key)
{
    g_autofree char *id = note_id(name, vm_key);
    return g_hash_table_contains(in->live, id);
}

guint ddm_view_interest_count(const DdmViewInterest *in)
{
    return g_hash_table_size(in->live);
}
