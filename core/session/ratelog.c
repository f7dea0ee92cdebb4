/* SPDX-License-Identifier: Apache-2.0
 *
 * Rate-limited log lines (ratelog.h): a hash of keys, each with its current
 * window (start, lines printed, lines suppressed), and the process-wide
 * table with the main-loop timer that prints the summaries.
 */
#include "core/session/ratelog.h"

#include <string.h>

typedef struct {
    char *key;
    gint64 window_start_us;
    guint printed;
    guint suppressed;
    GLogLevelFlags level; /* of the last suppressed line */
} Entry;

struct DdmRateLog {
    guint burst;
    gint64 window_us;
    guint max_keys;
    GHashTable *keys; /* key (owned by the entry) -> Entry* (owned) */
    /* No key's window ends before this: a full table is not walked again
     * before then (every new key of a port scan's misses would walk it). */
    gint64 next_sweep_us;
    guint sweeps;     /* walks of a full table (ddm_ratelog_sweeps) */
};

static void entry_free(gpointer p)
{
    Entry *e = p;
    g_free(e->key);
    g_free(e);
}

DdmRateLog *ddm_ratelog_new(guint burst, guint window_ms, guint max_keys)
{
    DdmRateLog *rl = g_new0(DdmRateLog, 1);
    rl->burst = MAX(burst, 1u);
    rl->window_us = (gint64)MAX(window_ms, 1u) * 1000;
    rl->max_keys = MAX(max_keys, 1u);
    rl->keys = g_hash_table_new_full(g_str_hash, g_str_equal, NULL, entry_free);
    return rl;
}

void ddm_ratelog_free(DdmRateLog *rl)
{
    if (!rl)
        return;
    g_hash_table_destroy(rl->keys);
    g_free(rl);
}

guint ddm_ratelog_keys(const DdmRateLog *rl)
{
    return g_hash_table_size(rl->keys);
}

/* @key cut to DDM_RATELOG_KEY_MAX bytes (a character may be cut: keys are
 * only compared and printed in the log). (transfer full) */
static char *cut_key(const char *key)
{
    return g_strndup(key ? key : "?", DDM_RATELOG_KEY_MAX);
}

/* A window starts at @now_us: it ends no sooner than a window later. */
static void window_started(DdmRateLog *rl, gint64 now_us)
{
    rl->next_sweep_us = MIN(rl->next_sweep_us, now_us + rl->window_us);
}

/* Forget the keys whose window ended and that have nothing to report; not
 * again before the first window of those kept can end. */
static void forget_quiet(DdmRateLog *rl, gint64 now_us)
{
    GHashTableIter it;
    gpointer k, v;
    gint64 next = G_MAXINT64;

    if (now_us < rl->next_sweep_us)
        return;
    rl->sweeps++;
    g_hash_table_iter_init(&it, rl->keys);
    while (g_hash_table_iter_next(&it, &k, &v)) {
        Entry *e = v;
        if (now_us - e->window_start_us >= rl->window_us && e->suppressed == 0)
            g_hash_table_iter_remove(&it);
        else if (now_us - e->window_start_us < rl->window_us)
            next = MIN(next, e->window_start_us + rl->window_us);
        /* else: lines to report; only a new window (window_started) or
         * ddm_ratelog_expire ends it */
    }
    rl->next_sweep_us = next;
}

guint ddm_ratelog_sweeps(const DdmRateLog *rl)
{
    return rl->sweeps;
}

static Entry *entry_for(DdmRateLog *rl, const char *key, gint64 now_us)
{
    g_autofree char *k = cut_key(key);
    Entry *e = g_hash_table_lookup(rl->keys, k);
    if (e)
        return e;
    if (g_hash_table_size(rl->keys) >= rl->max_keys)
        forget_quiet(rl, now_us);
    if (g_hash_table_size(rl->keys) >= rl->max_keys) {
        /* full of busy keys: new ones share the overflow key (one more entry) */
        g_free(k);
        k = g_strdup(DDM_RATELOG_OVERFLOW_KEY);
        e = g_hash_table_lookup(rl->keys, k);
        if (e)
            return e;
    }
    e = g_new0(Entry, 1);
    e->key = g_steal_pointer(&k);
    e->window_start_us = now_us;
    window_started(rl, now_us);
    e->level = G_LOG_LEVEL_MESSAGE;
    g_hash_table_insert(rl->keys, e->key, e);
    return e;
}

gboolean ddm_ratelog_check(DdmRateLog *rl, const char *key, gint64 now_us, guint *suppressed)
{
    Entry *e;

    g_return_val_if_fail(rl != NULL, TRUE);
    if (suppressed)
        *suppressed = 0;
    e = entry_for(rl, key, now_us);
    if (now_us - e->window_start_us >= rl->window_us) {
        if (suppressed)
            *suppressed = e->suppressed;
        e->window_start_us = now_us;
        window_started(rl, now_us);
        e->printed = 0;
        e->suppressed = 0;
    }
    if (e->printed < rl->burst) {
        e->printed++;
        return TRUE;
    }
    e->suppressed++;
    return FALSE;
}

void ddm_ratelog_note_level(DdmRateLog *rl, const char *key, GLogLevelFlags level)
{
    g_autofree char *k = cut_key(key);
    Entry *e = g_hash_table_lookup(rl->keys, k);
    if (!e)
        e = g_hash_table_lookup(rl->keys, DDM_RATELOG_OVERFLOW_KEY);
    if (e)
        e->level = level;
}

guint ddm_ratelog_expire(DdmRateLog *rl, gint64 now_us,
                         void (*fn)(const char *key, guint count, GLogLevelFlags level,
                                    gpointer ud),
                         gpointer ud)
{
    GHashTableIter it;
    gpointer k, v;

    g_return_val_if_fail(rl != NULL, 0);
    g_hash_table_iter_init(&it, rl->keys);
    while (g_hash_table_iter_next(&it, &k, &v)) {
        Entry *e = v;
        if (now_us - e->window_start_us < rl->window_us)
            continue;
        if (e->suppressed && fn)
            fn(e->key, e->suppressed, e->level, ud);
        g_hash_table_iter_remove(&it);
    }
    return g_hash_table_size(rl->keys);
}

/* ------------------------------------------------------------ process-wide */

static DdmRateLog *global;
static guint global_timer;

static void log_summary(const char *key, guint count, GLogLevelFlags level, gpointer ud)
{
    (void)ud;
    g_log(G_LOG_DOMAIN, level, "%s: %u more such lines suppressed in the last %u s", key, count,
          DDM_RATELOG_WINDOW_MS / 1000);
}

static gboolean on_global_timer(gpointer ud)
{
    (void)ud;
    if (ddm_ratelog_expire(global, g_get_monotonic_time(), log_summary, NULL) > 0)
        return G_SOURCE_CONTINUE;
    global_timer = 0;
    return G_SOURCE_REMOVE;
}

void ddm_ratelog(const char *key, GLogLevelFlags level, const char *fmt, ...)
{
    va_list ap;
    guint suppressed = 0;
    gboolean ok;

    if (!global)
        global = ddm_ratelog_new(DDM_RATELOG_BURST, DDM_RATELOG_WINDOW_MS, DDM_RATELOG_MAX_KEYS);
    ok = ddm_ratelog_check(global, key, g_get_monotonic_time(), &suppressed);
    if (suppressed) {
        g_autofree char *k = cut_key(key);
        log_summary(k, suppressed, level, NULL);
    }
    if (!ok) {
        ddm_ratelog_note_level(global, key, level);
    } else {
        va_start(ap, fmt);
        g_logv(G_LOG_DOMAIN, level, fmt, ap);
        va_end(ap);
    }
    /* a timer forgets old keys and prints the summaries nobody else will */
    if (!global_timer)
        global_timer = g_timeout_add(DDM_RATELOG_WINDOW_MS, on_global_timer, NULL);
}

void ddm_ratelog_accept(const char *what, const char *where, DdmAcceptResult r, int err,
                        guint paused_ms)
{
    const char *sp = where != NULL ? " " : "";
    where = where != NULL ? where : "";
    g_autofree char *key = g_strdup_printf("%s accept%s%s", what, sp, where);
    if (r == DDM_ACCEPT_SHED)
        ddm_ratelog(key, G_LOG_LEVEL_WARNING,
                    "%s: out of descriptors (%s): refused a connection%s%s", what,
                    g_strerror(err), sp, where);
    else
        ddm_ratelog(key, G_LOG_LEVEL_WARNING, "%s: accept%s%s: %s (paused %u ms)", what, sp, where,
                    g_strerror(err), paused_ms);
}

void ddm_ratelog_reset(void)
{
    if (global)
        g_hash_table_remove_all(global->keys);
}
