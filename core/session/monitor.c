/* SPDX-License-Identifier: Apache-2.0
 *
 * The monitor (see monitor.h): the VM table (key -> session, one reference
 * each) and per-key reconnect backoff; sessions' reports are passed up
 * through the DdmSessionEvents table.
 *
 * Invariants: at most one session per key; a key whose session failed
 * before HELO is not retried before its backoff (1 s doubling to 30 s,
 * reset by a successful HELO; a port scan's refused connects are free,
 * the scan period paces them); a key whose VM broke the protocol
 * (vm->violated, in any state) backs off 2 s doubling to 5 min, reset
 * only by a session that ends without a violation; vm_closed is reported
 * while the VM is still in the table, then it leaves it. The VM table's
 * keys are borrowed from vm->target->key (one session per key, a session
 * starts only when its key is absent, vm->target is never reassigned);
 * a backoff entry exists only once a session's outcome (or the relay's
 * fast retry) made one, never for an offer or a live VM past a clean HELO. The monitor also
 * holds what all sessions share: the packet buffers' memory budget and the
 * TCP ports ddmon itself listens on (never to be scanned), and tells its
 * key watchers (the port scan) as each key gets its session (DDM_KEY_HELD),
 * as that session gets past its handshake (DDM_KEY_ANSWERED) and as the key
 * loses it (DDM_KEY_LOST). A named target whose failed session says
 * another debugger holds the VM (session_says_held) is listed "busy" and
 * still retried; for a one-shot look (report_held: the in-process
 * snapshot) a port scan's too. When the server stops it writes out what the
 * VMs' queues hold, bounded in time (ddm_monitor_flush_output), before
 * it closes them.
 * Non-goals: how VMs are found (core/discovery), how they are spoken to
 * (vm*.c), what is done with what they say (the events' receiver).
 */
#include <errno.h>
#include <poll.h>
#include <string.h>

#include "core/loop/heaptrim.h"
#include "core/loop/timer.h"
#include "core/session/quietlog.h"
#include "core/session/monitor-private.h"
#include "core/transport/local_proc.h"

#define BACKOFF_FIRST_MS 1000u
#define BACKOFF_MAX_MS 30000u
/* A VM that broke the protocol: the next tries wait this long, doubling. */
#define VIOLATION_BACKOFF_FIRST_MS DDM_MONITOR_VIOLATION_BACKOFF_FIRST_MS
#define VIOLATION_BACKOFF_MAX_MS DDM_MONITOR_VIOLATION_BACKOFF_MAX_MS
#define FAST_RETRY_FIRST_MS 20u
#define FAST_RETRY_MAX_MS 1000u
#define FAST_RETRY_WINDOW_MS 15000u

/* Per-key reconnect state, made by a session's outcome (note_outcome:
 * a failure, a violation, or a good session's end) with that session's
 * target, or by the relay's fast retry; never by an offer, and a live VM
 * past a clean HELO has none (its session holds the target). It keeps the
 * key's target so the relay's fast retry and the "retrying" row find it. */
typedef struct DdmBackoff {
    DdmMonitor *mon;
    char *key;
    DdmTarget *target;      /* the ending session's, or a later offer's (ref); every
                             * path that makes an entry sets it at once, so it is
                             * not NULL (the !b->target checks are defensive) */
    gint64 not_before_us;   /* no new session before this */
    guint delay_ms;         /* the next failure's delay; 0 = no failure yet */
    guint violations;       /* sessions in a row that broke the protocol */
    gint64 fast_until_us;   /* fast-retry mode (relay) while now < this */
    guint fast_delay_ms;
    DdmTimer fast_timer;    /* core/loop: armed while a fast retry is due */
    char *last_error;       /* why the last session failed; NULL after a good HELO */
    gboolean held;          /* the peer closed that session during the JDWP handshake
                             * (vm->refused_handshake): another debugger holds the VM? */
} DdmBackoff;

static void backoff_free(gpointer p)
{
    DdmBackoff *b = p;
    ddm_timer_cancel(&b->fast_timer);
    ddm_target_unref(b->target);
    g_free(b->last_error);
    g_free(b->key);
    g_free(b);
}

static DdmBackoff *backoff_get(DdmMonitor *mon, const char *key)
{
    DdmBackoff *b = g_hash_table_lookup(mon->backoff, key);
    if (!b) {
        b = g_new0(DdmBackoff, 1);
        b->mon = mon;
        b->key = g_strdup(key);
        g_hash_table_insert(mon->backoff, b->key, b);
    }
    return b;
}

typedef struct DdmKeyWatcher {
    DdmMonitorKeyFn fn;
    gpointer ud;
} DdmKeyWatcher;

/* @target's key got its session, the session got past its handshake, or
 * the key lost it (@change): tell the watchers. */
static void keys_changed(DdmMonitor *mon, const DdmTarget *target, DdmKeyChange change)
{
    for (guint i = 0; mon->key_watchers && i < mon->key_watchers->len; i++) {
        const DdmKeyWatcher *w = &g_array_index(mon->key_watchers, DdmKeyWatcher, i);
        w->fn(w->ud, target, change);
    }
}

/* @key: the target whose row may have changed, or NULL for any. */
static void list_changed(DdmMonitor *mon, const char *key)
{
    if (!mon->stopping && mon->events && mon->events->list_changed)
        mon->events->list_changed(mon->ud, key);
}

static gint cmp_vm_key(gconstpointer a, gconstpointer b)
{
    const DdmVm *x = *(DdmVm *const *)a, *y = *(DdmVm *const *)b;
    return g_strcmp0(x->target->key, y->target->key);
}

static gint cmp_backoff_key(gconstpointer a, gconstpointer b)
{
    const DdmBackoff *x = *(DdmBackoff *const *)a, *y = *(DdmBackoff *const *)b;
    return g_strcmp0(x->key, y->key);
}

/* A "retrying" row: a known VM whose last session failed, not up again;
 * with report_held also a scanned port whose peer closed its last session
 * during the handshake (a "busy" row). */
static gboolean backoff_listed(DdmMonitor *mon, const DdmBackoff *b)
{
    DdmVm *vm;
    if (!b->last_error || !b->target)
        return FALSE;
    if (b->target->speculative && !(mon->report_held && b->held))
        return FALSE;
    vm = g_hash_table_lookup(mon->vms, b->key);
    return !(vm && vm->state >= DDM_VM_STATE_HELO); /* else listed as a session */
}

void ddm_monitor_report_held(DdmMonitor *mon, gboolean on)
{
    g_return_if_fail(mon != NULL);
    if (mon->report_held == on)
        return;
    mon->report_held = on;
    list_changed(mon, NULL);
}

gboolean ddm_monitor_reports_held(const DdmMonitor *mon)
{
    return mon != NULL && mon->report_held;
}

gboolean ddm_monitor_held(DdmMonitor *mon, const char *key)
{
    const DdmBackoff *b;
    g_return_val_if_fail(mon != NULL && key != NULL, FALSE);
    b = g_hash_table_lookup(mon->backoff, key);
    return b && b->held && backoff_listed(mon, b);
}

gboolean ddm_monitor_retrying(DdmMonitor *mon, const char *key, const DdmTarget **target,
                              const char **last_error)
{
    const DdmBackoff *b;
    g_return_val_if_fail(mon != NULL && key != NULL, FALSE);
    b = g_hash_table_lookup(mon->backoff, key);
    if (!b || !backoff_listed(mon, b))
        return FALSE;
    *target = b->target;
    *last_error = b->last_error;
    return TRUE;
}

void ddm_monitor_foreach_retrying(DdmMonitor *mon,
                                  void (*fn)(const DdmTarget *target, const char *last_error,
                                             gpointer ud),
                                  gpointer ud)
{
    GPtrArray *rows;
    GHashTableIter it;
    gpointer k, v;

    g_return_if_fail(mon != NULL && fn != NULL);
    rows = g_ptr_array_new();
    g_hash_table_iter_init(&it, mon->backoff);
    while (g_hash_table_iter_next(&it, &k, &v)) {
        DdmBackoff *b = v;
        if (backoff_listed(mon, b))
            g_ptr_array_add(rows, b);
    }
    g_ptr_array_sort(rows, cmp_backoff_key);
    for (guint i = 0; i < rows->len; i++) {
        DdmBackoff *b = g_ptr_array_index(rows, i);
        fn(b->target, b->last_error, ud);
    }
    g_ptr_array_unref(rows);
}

GPtrArray *ddm_monitor_listed_vms(DdmMonitor *mon)
{
    GPtrArray *vms = g_ptr_array_new_with_free_func((GDestroyNotify)ddm_vm_unref);
    GHashTableIter it;
    gpointer k, v;

    g_return_val_if_fail(mon != NULL, vms);
    /* A slow connect must not hide a VM the user named. A scanned port in
     * CONNECTING or HANDSHAKE is not known to be a VM yet (and would
     * flicker in a live list); a target retrying after an error has its
     * "retrying" row instead. */
    g_hash_table_iter_init(&it, mon->vms);
    while (g_hash_table_iter_next(&it, &k, &v))
        if (ddm_monitor_vm_listed(mon, v))
            g_ptr_array_add(vms, ddm_vm_ref(v));
    g_ptr_array_sort(vms, cmp_vm_key);
    return vms;
}

gboolean ddm_monitor_vm_listed(DdmMonitor *mon, DdmVm *vm)
{
    DdmVmState st;
    g_return_val_if_fail(mon != NULL && vm != NULL, FALSE);
    st = vm->state;
    if (st == DDM_VM_STATE_HELO || st == DDM_VM_STATE_READY || st == DDM_VM_STATE_PLAIN)
        return TRUE;
    if ((st == DDM_VM_STATE_CONNECTING || st == DDM_VM_STATE_HANDSHAKE) &&
        !vm->target->speculative) {
        DdmBackoff *b = g_hash_table_lookup(mon->backoff, vm->target->key);
        return b == NULL || b->last_error == NULL;
    }
    return FALSE;
}

gboolean ddm_monitor_sessions_settled(DdmMonitor *mon)
{
    GHashTableIter it;
    gpointer k, v;

    g_return_val_if_fail(mon != NULL, TRUE);
    g_hash_table_iter_init(&it, mon->vms);
    while (g_hash_table_iter_next(&it, &k, &v)) {
        DdmVmState st = ((DdmVm *)v)->state;
        if (st == DDM_VM_STATE_CONNECTING || st == DDM_VM_STATE_HANDSHAKE || st == DDM_VM_STATE_HELO)
            return FALSE;
    }
    return TRUE;
}

/* ------------------------------------------------------------ life cycle */

/* The VMs that sent nothing for a whole round give their read buffer back,
 * and the round asks for a malloc_trim (core/loop/heaptrim.h says when it
 * comes): with VMs coming and going, the heap's free pages between live blocks would
 * otherwise stay resident (a few milliseconds every round at most). */
void ddm_monitor_trim_round(DdmMonitor *mon)
{
    GHashTableIter it;
    gpointer k, v;
    guint freed = 0;

    g_hash_table_iter_init(&it, mon->vms);
    while (g_hash_table_iter_next(&it, &k, &v))
        if (((DdmVm *)v)->reader && ddm_jdwp_reader_trim(((DdmVm *)v)->reader))
            freed++;
    if (freed)
        g_debug("%u idle VMs gave their read buffers back", freed);
    ddm_jdwp_budget_trim(mon->read_budget); /* the spare a streamed packet left (jdwp.h) */
    ddm_heap_trim_soon();
}

static gboolean trim_idle_readers(gpointer ud)
{
    ddm_monitor_trim_round(ud);
    return G_SOURCE_CONTINUE;
}

/* A monitor made without events has this table: none of them. */
static const DdmSessionEvents no_events;

DdmMonitor *ddm_monitor_new(const DdmConfig *config, const DdmSessionEvents *events, gpointer ud)
{
    DdmMonitor *mon;

    g_return_val_if_fail(config != NULL, NULL);
    mon = g_new0(DdmMonitor, 1);
    mon->config = config;
    mon->events = events ? events : &no_events; /* never NULL (ddm_monitor_events) */
    mon->ud = ud;
    /* keyed by the VM's own target->key (borrowed: it lives as long as the VM) */
    mon->vms = g_hash_table_new_full(g_str_hash, g_str_equal, NULL,
                                     (GDestroyNotify)ddm_vm_unref);
    mon->backoff = g_hash_table_new_full(g_str_hash, g_str_equal, NULL, backoff_free);
    mon->known_ddm = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
    mon->read_budget = ddm_jdwp_budget_new(config->max_buffers);
    mon->trim_timer = g_timeout_add_seconds(DDM_MONITOR_TRIM_S, trim_idle_readers, mon);
    return mon;
}

DdmJdwpBudget *ddm_monitor_read_budget(DdmMonitor *mon)
{
    g_return_val_if_fail(mon != NULL, NULL);
    return mon->read_budget;
}

void ddm_monitor_own_port(DdmMonitor *mon, guint16 port, gboolean listening)
{
    g_return_if_fail(mon != NULL && port != 0);
    if (listening)
        ddm_portset_add(&mon->own_ports, port);
    else
        ddm_portset_remove(&mon->own_ports, port);
}

gboolean ddm_monitor_is_own_port(const DdmMonitor *mon, guint16 port)
{
    g_return_val_if_fail(mon != NULL, FALSE);
    return ddm_portset_contains(&mon->own_ports, port);
}

const DdmConfig *ddm_monitor_config(const DdmMonitor *mon)
{
    g_return_val_if_fail(mon != NULL, NULL);
    return mon->config;
}

gboolean ddm_monitor_stopping(const DdmMonitor *mon)
{
    return mon == NULL || mon->stopping;
}

/* The sessions' every reply to a debugger asks (vm_io.c): no tests. @mon is
 * a VM's (ddm_vm_new refuses none); its table is never NULL (ddm_monitor_new). */
const DdmSessionEvents *ddm_monitor_events(DdmMonitor *mon, gpointer *ud)
{
    *ud = mon->ud;
    return mon->events;
}

GPtrArray *ddm_monitor_list_vms(DdmMonitor *mon)
{
    GPtrArray *out = g_ptr_array_new_with_free_func((GDestroyNotify)ddm_vm_unref);
    GHashTableIter it;
    gpointer k, v;

    g_return_val_if_fail(mon != NULL, out);
    g_hash_table_iter_init(&it, mon->vms);
    while (g_hash_table_iter_next(&it, &k, &v))
        g_ptr_array_add(out, ddm_vm_ref(v));
    return out;
}

void ddm_monitor_flush_output(DdmMonitor *mon, guint budget_ms)
{
    GPtrArray *vms;
    GArray *fds;
    const gint64 deadline = g_get_monotonic_time() + (gint64)budget_ms * 1000;

    if (!mon || mon->stopping)
        return;
    vms = ddm_monitor_list_vms(mon);
    fds = g_array_new(FALSE, FALSE, sizeof(struct pollfd));
    for (;;) {
        /* each round writes what every socket takes now; the VMs whose
         * queues are left are waited for together */
        g_array_set_size(fds, 0);
        for (guint i = 0; i < vms->len; i++) {
            DdmVm *vm = g_ptr_array_index(vms, i);
            if (ddm_vm_flush_now(vm)) {
                struct pollfd p = {.fd = vm->fd, .events = POLLOUT};
                g_array_append_val(fds, p);
            }
        }
        const gint64 left_us = deadline - g_get_monotonic_time();
        if (fds->len == 0 || left_us <= 0)
            break;
        if (poll((struct pollfd *)(void *)fds->data, fds->len, (int)((left_us + 999) / 1000)) < 0 &&
            errno != EINTR)
            break;
    }
    if (fds->len > 0)
        g_message("ddmon is stopping: %u VM%s did not take the last requests within %u ms",
                  fds->len, fds->len == 1 ? "" : "s", budget_ms);
    g_array_unref(fds);
    g_ptr_array_unref(vms);
}

void ddm_monitor_refuse_new(DdmMonitor *mon)
{
    g_return_if_fail(mon != NULL);
    mon->refuse_new = TRUE;
}

void ddm_monitor_stop(DdmMonitor *mon, const char *reason)
{
    GPtrArray *vms;

    if (!mon || mon->stopping)
        return;
    mon->stopping = TRUE;
    /* Every VM (the receiver sees each close), then the table. */
    vms = ddm_monitor_list_vms(mon);
    for (guint i = 0; i < vms->len; i++)
        ddm_vm_close(g_ptr_array_index(vms, i), reason ? reason : "ddmon is stopping");
    g_ptr_array_unref(vms);
    g_hash_table_remove_all(mon->vms);
    g_hash_table_remove_all(mon->backoff);
}

void ddm_monitor_free(DdmMonitor *mon)
{
    if (!mon)
        return;
    ddm_monitor_stop(mon, NULL);
    g_hash_table_destroy(mon->backoff);
    g_hash_table_destroy(mon->known_ddm);
    g_hash_table_destroy(mon->vms);
    ddm_portset_clear(&mon->own_ports);
    if (mon->trim_timer)
        g_source_remove(mon->trim_timer);
    /* a watcher left would be called by nobody, and its owner may think
     * it still is: each is removed by whoever added it (review rD 6) */
    g_warn_if_fail(!mon->key_watchers || mon->key_watchers->len == 0);
    if (mon->key_watchers)
        g_array_free(mon->key_watchers, TRUE);
    ddm_jdwp_budget_free(mon->read_budget);
    g_free(mon);
}

/* --------------------------------------------------------------- targets */

static void start_session(DdmMonitor *mon, DdmTarget *target)
{
    DdmVm *vm;
    if (mon->refuse_new) /* the server stops (every caller checks stopping) */
        return;
    vm = ddm_vm_new(mon, target);
    if (!vm)
        return;
    vm->started_us = g_get_monotonic_time();
    g_hash_table_insert(mon->vms, (gpointer)vm->target->key, vm);
    keys_changed(mon, target, DDM_KEY_HELD);
    DDM_DEBUG("%s: connecting (%s)", target->key, target->origin ? target->origin : "?");
    if (!target->speculative)
        list_changed(mon, target->key); /* listed while connecting (vms_view.c) */
}

gboolean ddm_monitor_offer_target(DdmMonitor *mon, DdmTarget *target)
{
    DdmBackoff *b;

    g_return_val_if_fail(mon != NULL && target != NULL && target->key != NULL, FALSE);
    if (mon->stopping || mon->refuse_new || g_hash_table_contains(mon->vms, target->key))
        return FALSE;
    /* No entry is made for an offer (review rD 2: a wide scan kept one,
     * with a reference to its target, for every port it offered, ~0.5 KiB
     * each for good); a session's outcome makes one when there is
     * something to keep (note_outcome). */
    b = g_hash_table_lookup(mon->backoff, target->key);
    if (b && b->target != target) {
        ddm_target_ref(target);
        ddm_target_unref(b->target);
        b->target = target;
        if (b->last_error)
            list_changed(mon, target->key); /* its "retrying" row shows the target */
    }
    if (b && ddm_timer_armed(&b->fast_timer))
        return FALSE; /* a fast retry is due soon anyway */
    if (b && g_get_monotonic_time() < b->not_before_us)
        return FALSE;
    start_session(mon, target);
    return TRUE;
}

DdmVm *ddm_monitor_find_vm(DdmMonitor *mon, const char *key)
{
    g_return_val_if_fail(mon != NULL, NULL);
    return key ? g_hash_table_lookup(mon->vms, key) : NULL;
}

void ddm_monitor_watch_keys(DdmMonitor *mon, DdmMonitorKeyFn fn, gpointer ud)
{
    DdmKeyWatcher w = {fn, ud};

    g_return_if_fail(mon != NULL && fn != NULL);
    if (!mon->key_watchers)
        mon->key_watchers = g_array_new(FALSE, FALSE, sizeof(DdmKeyWatcher));
    g_array_append_val(mon->key_watchers, w);
}

void ddm_monitor_unwatch_keys(DdmMonitor *mon, DdmMonitorKeyFn fn, gpointer ud)
{
    g_return_if_fail(mon != NULL);
    for (guint i = 0; mon->key_watchers && i < mon->key_watchers->len; i++) {
        const DdmKeyWatcher *w = &g_array_index(mon->key_watchers, DdmKeyWatcher, i);
        if (w->fn == fn && w->ud == ud) {
            g_array_remove_index(mon->key_watchers, i);
            return;
        }
    }
}

gint64 ddm_monitor_backoff_until(DdmMonitor *mon, const char *key)
{
    const DdmBackoff *b;

    g_return_val_if_fail(mon != NULL && key != NULL, 0);
    b = g_hash_table_lookup(mon->backoff, key);
    if (!b || ddm_timer_armed(&b->fast_timer))
        return 0;
    return b->not_before_us;
}

void ddm_monitor_forget_target(DdmMonitor *mon, const char *key, const char *reason)
{
    DdmVm *vm;

    g_return_if_fail(mon != NULL && key != NULL);
    vm = g_hash_table_lookup(mon->vms, key);
    if (vm)
        ddm_vm_close(vm, reason ? reason : "target gone");
    /* a gone target (an adb pid) never comes back: nothing of it stays */
    g_hash_table_remove(mon->known_ddm, key);
    if (g_hash_table_remove(mon->backoff, key))
        list_changed(mon, key); /* its "retrying" row, if any, goes */
}

void ddm_monitor_forget_origin(DdmMonitor *mon, const char *origin)
{
    GPtrArray *vms;
    GHashTableIter it;
    gpointer k, v;

    g_return_if_fail(mon != NULL && origin != NULL);
    vms = ddm_monitor_list_vms(mon);
    for (guint i = 0; i < vms->len; i++) {
        DdmVm *vm = g_ptr_array_index(vms, i);
        if (g_strcmp0(vm->target->origin, origin) == 0) {
            char *why = mon->stopping ? g_strdup("ddmon is stopping")
                                      : g_strdup_printf("discovery \"%s\" switched off", origin);
            ddm_vm_close(vm, why);
            g_free(why);
        }
    }
    g_ptr_array_unref(vms);
    g_hash_table_iter_init(&it, mon->backoff);
    while (g_hash_table_iter_next(&it, &k, &v)) {
        DdmBackoff *b = v;
        if (b->target && g_strcmp0(b->target->origin, origin) == 0)
            g_hash_table_iter_remove(&it);
    }
    list_changed(mon, NULL);
}

static void fast_retry_cb(DdmTimer *t, gpointer ud)
{
    DdmBackoff *b = ud;
    DdmMonitor *mon = b->mon;
    (void)t;

    if (!mon->stopping && b->target && !g_hash_table_contains(mon->vms, b->key))
        start_session(mon, b->target);
}

static void schedule_fast_retry(DdmBackoff *b)
{
    if (ddm_timer_armed(&b->fast_timer) || !b->target)
        return;
    b->fast_delay_ms = b->fast_delay_ms ? MIN(b->fast_delay_ms * 2, FAST_RETRY_MAX_MS)
                                        : FAST_RETRY_FIRST_MS;
    ddm_timer_init(&b->fast_timer, fast_retry_cb, b);
    ddm_timer_arm(&b->fast_timer, b->fast_delay_ms);
}

gboolean ddm_monitor_known_ddm(DdmMonitor *mon, const char *key)
{
    return mon->known_ddm && key && g_hash_table_contains(mon->known_ddm, key);
}

void ddm_monitor_note_ddm(DdmMonitor *mon, const char *key)
{
    /* Bounded by the number of distinct VM keys seen; keys are small. */
    if (mon->known_ddm && key && g_hash_table_size(mon->known_ddm) < 65536)
        g_hash_table_add(mon->known_ddm, g_strdup(key));
}

void ddm_monitor_retry_fast(DdmMonitor *mon, const char *key)
{
    DdmBackoff *b;
    DdmVm *vm;

    g_return_if_fail(mon != NULL && key != NULL);
    if (mon->stopping || mon->refuse_new)
        return;
    /* A key neither in the table nor remembered by an entry with its
     * target is none of ours: it gets no entry. */
    b = g_hash_table_lookup(mon->backoff, key);
    vm = g_hash_table_lookup(mon->vms, key);
    if (!vm && !(b && b->target)) {
        g_debug("%s: fast retry asked for an unknown target", key);
        return;
    }
    b = backoff_get(mon, key);
    if (!b->target)
        b->target = ddm_target_ref(vm->target);
    b->fast_until_us = g_get_monotonic_time() + (gint64)FAST_RETRY_WINDOW_MS * 1000;
    b->fast_delay_ms = 0;
    b->not_before_us = 0;
    if (!vm)
        schedule_fast_retry(b);
    /* else: a session is up or on its way; if it fails, the window applies */
}

/* Does @name end with "." @spec (a unique-suffix candidate: "notes" for
 * "com.example.notes")? */
static gboolean name_has_dot_suffix(const char *name, const char *spec)
{
    gsize n = name ? strlen(name) : 0, m = strlen(spec);
    return n > m && name[n - m - 1] == '.' && memcmp(name + n - m, spec, m) == 0;
}

/* The VMs @spec names, sorted by key (borrowed; transfer container): its
 * key; "PID" or "SERIAL:PID"; an app or package name; else the VMs whose
 * names end with "." @spec (one VM: a unique suffix). */
static GPtrArray *resolve_matches(DdmMonitor *mon, const char *spec)
{
    GPtrArray *out = g_ptr_array_new();
    GHashTableIter it;
    gpointer k, v;
    guint64 pid = 0;
    g_autofree char *serial = NULL;
    gboolean by_pid;
    DdmVm *vm;

    if (!spec || !*spec)
        return out;
    if ((vm = g_hash_table_lookup(mon->vms, spec))) {
        g_ptr_array_add(out, vm);
        return out;
    }
    by_pid = g_ascii_string_to_unsigned(spec, 10, 1, G_MAXUINT32, &pid, NULL);
    if (!by_pid) {
        const char *colon = strrchr(spec, ':');
        if (colon && g_ascii_string_to_unsigned(colon + 1, 10, 1, G_MAXUINT32, &pid, NULL)) {
            serial = g_strndup(spec, (gsize)(colon - spec));
            by_pid = TRUE;
        }
    }
    g_hash_table_iter_init(&it, mon->vms);
    while (g_hash_table_iter_next(&it, &k, &v)) {
        vm = v;
        if (by_pid ? vm->info.pid == pid && (!serial || g_strcmp0(serial, vm->info.device) == 0)
                   : g_strcmp0(spec, vm->info.app_name) == 0 ||
                         g_strcmp0(spec, vm->info.package_name) == 0)
            g_ptr_array_add(out, vm);
    }
    if (out->len == 0 && !by_pid) {
        /* A suffix names a VM only when it is unique: com.a.notes and
         * com.b.notes both match "notes", which is then ambiguous. */
        g_hash_table_iter_init(&it, mon->vms);
        while (g_hash_table_iter_next(&it, &k, &v)) {
            vm = v;
            if (name_has_dot_suffix(vm->info.app_name, spec) ||
                name_has_dot_suffix(vm->info.package_name, spec))
                g_ptr_array_add(out, vm);
        }
    }
    g_ptr_array_sort(out, cmp_vm_key);
    return out;
}

DdmVm *ddm_monitor_resolve_vm(DdmMonitor *mon, const char *spec)
{
    return ddm_monitor_resolve_vm_or_error(mon, spec, NULL);
}

DdmVm *ddm_monitor_resolve_vm_or_error(DdmMonitor *mon, const char *spec, char **error)
{
    if (error)
        *error = NULL;
    g_return_val_if_fail(mon != NULL, NULL);
    g_autoptr(GPtrArray) m = resolve_matches(mon, spec);
    if (m->len == 1)
        return g_ptr_array_index(m, 0);
    if (!error)
        return NULL;
    if (m->len == 0) {
        *error = g_strdup_printf("no VM matches '%s' (try 'ddmon vms')", spec ? spec : "");
        return NULL;
    }
    /* Ambiguous: list them (bounded), so the user can name one. */
    GString *s = g_string_new(NULL);
    g_string_append_printf(s, "'%s' matches %u VMs: ", spec, m->len);
    for (guint i = 0; i < m->len && i < DDM_MONITOR_RESOLVE_LIST_MAX; i++) {
        DdmVm *vm = g_ptr_array_index(m, i);
        const char *app = vm->info.app_name ? vm->info.app_name : vm->info.package_name;
        g_string_append_printf(s, "%s%s (%s, pid %u)", i ? ", " : "", vm->target->key,
                               app ? app : "no name", (unsigned)vm->info.pid);
    }
    if (m->len > DDM_MONITOR_RESOLVE_LIST_MAX)
        g_string_append_printf(s, ", and %u more", m->len - DDM_MONITOR_RESOLVE_LIST_MAX);
    /* Two VMs of one process (or of two devices) can share a pid, and a
     * VM whose pid is not known yet has none: then only a key names one. */
    gboolean pids_tell = TRUE;
    for (guint i = 0; i < m->len && pids_tell; i++) {
        DdmVm *a = g_ptr_array_index(m, i);
        pids_tell = a->info.pid != 0;
        for (guint j = i + 1; j < m->len && pids_tell; j++)
            pids_tell = ((DdmVm *)g_ptr_array_index(m, j))->info.pid != a->info.pid;
    }
    g_string_append(s, pids_tell ? "; name one by pid or key"
                                 : "; their pids do not tell them apart: name one by key");
    *error = g_string_free(s, FALSE);
    return NULL;
}

GPtrArray *ddm_monitor_resolve_vm_all(DdmMonitor *mon, const char *spec)
{
    g_return_val_if_fail(mon != NULL, NULL);
    return resolve_matches(mon, spec);
}

DdmVm *ddm_monitor_resolve_vm_newest(DdmMonitor *mon, const char *spec, guint *n_matches)
{
    DdmVm *found = NULL;

    if (n_matches)
        *n_matches = 0;
    g_return_val_if_fail(mon != NULL, NULL);
    g_autoptr(GPtrArray) m = resolve_matches(mon, spec);
    for (guint i = 0; i < m->len; i++) {
        DdmVm *vm = g_ptr_array_index(m, i);
        if (!found || vm->connected_at_us > found->connected_at_us ||
            (vm->connected_at_us == found->connected_at_us &&
             g_strcmp0(vm->target->key, found->target->key) > 0))
            found = vm;
    }
    if (n_matches)
        *n_matches = m->len;
    return found;
}

/* ----------------------------------------------------- session callbacks */

/* @vm's key's entry, made with @vm's target (the fast retry's, the
 * "retrying" row's, discovery's forget_origin's) when it has none. */
static DdmBackoff *backoff_get_for(DdmMonitor *mon, DdmVm *vm)
{
    DdmBackoff *b = backoff_get(mon, vm->target->key);
    if (!b->target)
        b->target = ddm_target_ref(vm->target);
    return b;
}

/* Whether the failed session @vm says another debugger holds its VM (a VM
 * serves one JDWP connection). What the VM did: its peer closed or reset
 * the connection during the handshake, having sent nothing but a part of
 * the handshake (ART and ddmon-simvm drop a second connection so; other
 * bytes close the session as a violation before), or refused a named
 * target's connect (OpenJDK's jdwp agent stops listening while a debugger
 * is attached). And evidence that a VM is held, not a port that is no VM
 * (a service that accepts and closes at once): for a TCP target, a
 * connection to its port that is established on this host (the other
 * debugger's: ddm_local_host_port_connected, a read of /proc/net/tcp{,6}
 * made only here, on a failure); for an adb target (no such evidence: the
 * VM is on the device), a named one; a key that spoke DDM before is a VM
 * too. A remote port's debugger is not seen: such a target stays
 * "retrying" with the plain reason. */
static gboolean session_says_held(DdmMonitor *mon, const DdmVm *vm)
{
    const DdmTarget *t = vm->target;
    guint16 port = ddm_target_tcp_port(t);

    if (!vm->refused_handshake && (!vm->refused_connect || t->speculative || !port))
        return FALSE;
    if (vm->refused_handshake && ddm_monitor_known_ddm(mon, t->key))
        return TRUE;
    if (port)
        return ddm_local_host_port_connected(ddm_target_tcp_host(t), port, "/proc");
    return !t->speculative;
}

/* Session outcome for the key's backoff. */
static void note_outcome(DdmMonitor *mon, DdmVm *vm, DdmVmState old_state)
{
    DdmBackoff *b = g_hash_table_lookup(mon->backoff, vm->target->key);
    gint64 now = g_get_monotonic_time();

    if (vm->state == DDM_VM_STATE_READY || vm->state == DDM_VM_STATE_PLAIN) {
        if (b && !b->violations) {
            /* A good HELO answer: past failures are forgotten, and so is
             * the entry (~150 bytes a VM with its key): the session holds
             * the target while it lives, and its end makes a new entry
             * (below). A violator's entry stays: its delay waits for a
             * good session's end. */
            g_hash_table_remove(mon->backoff, vm->target->key);
        } else if (b) {
            b->not_before_us = 0;
            b->fast_until_us = 0;
            b->fast_delay_ms = 0;
            b->held = FALSE;
            g_clear_pointer(&b->last_error, g_free);
        }
        return;
    }
    if (vm->state != DDM_VM_STATE_CLOSED || mon->stopping)
        return;
    if (vm->violated) {
        /* It broke the protocol: wait longer each time, whatever state it
         * reached (a scanned port would otherwise be tried every scan). */
        if (!b)
            b = backoff_get_for(mon, vm);
        b->violations++;
        b->delay_ms = b->violations > 1 && b->delay_ms >= VIOLATION_BACKOFF_FIRST_MS
                          ? MIN(b->delay_ms * 2, VIOLATION_BACKOFF_MAX_MS)
                          : VIOLATION_BACKOFF_FIRST_MS;
        b->not_before_us = now + (gint64)b->delay_ms * 1000;
        b->fast_until_us = 0;
        ddm_timer_cancel(&b->fast_timer);
        gboolean was_held = b->held;
        b->held = FALSE;
        if (g_strcmp0(b->last_error, vm->close_reason) != 0 || was_held) {
            g_free(b->last_error);
            b->last_error = g_strdup(vm->close_reason);
            if (!vm->target->speculative || (was_held && mon->report_held))
                list_changed(mon, vm->target->key);
        }
        g_debug("%s: broke the protocol (%u in a row); next attempt in %u ms", vm->target->key,
                b->violations, b->delay_ms);
        return;
    }
    if (old_state == DDM_VM_STATE_READY || old_state == DDM_VM_STATE_PLAIN) {
        if (b) { /* a good session ended: a past violator starts afresh */
            b->violations = 0;
            b->delay_ms = 0;
        } else { /* remember its target, for a fast retry the relay may ask */
            b = backoff_get(mon, vm->target->key);
            b->target = ddm_target_ref(vm->target);
        }
        return; /* a VM that went away normally: the next scan may find its successor */
    }
    /* A refused connect during a port scan is the normal case, and the
     * scan paces it: nothing to keep for it (review rD 2). */
    if (!b && !vm->was_connected && vm->target->speculative)
        return;
    if (!b)
        b = backoff_get_for(mon, vm);
    gboolean held = session_says_held(mon, vm), was_held = b->held;
    b->held = held;
    if (g_strcmp0(b->last_error, vm->close_reason) != 0 || held != was_held) {
        g_free(b->last_error);
        b->last_error = g_strdup(vm->close_reason);
        /* a "retrying" row appears or changes (with report_held, a
         * scanned port's "busy" row too) */
        if (!vm->target->speculative || (mon->report_held && (held || was_held)))
            list_changed(mon, vm->target->key);
    }
    if (now < b->fast_until_us && !b->violations) {
        schedule_fast_retry(b);
        return;
    }
    /* A refused connect during a port scan is the normal case: the scan paces it. */
    if (!vm->was_connected && vm->target->speculative)
        return;
    b->delay_ms = b->delay_ms ? MIN(b->delay_ms * 2, b->violations ? VIOLATION_BACKOFF_MAX_MS
                                                                    : BACKOFF_MAX_MS)
                              : BACKOFF_FIRST_MS;
    b->not_before_us = now + (gint64)b->delay_ms * 1000;
    g_debug("%s: session failed (%s); next attempt in %u ms", vm->target->key,
            vm->close_reason ? vm->close_reason : "?", b->delay_ms);
}

void ddm_monitor_vm_state_changed(DdmMonitor *mon, DdmVm *vm, DdmVmState old_state)
{
    g_return_if_fail(mon != NULL && vm != NULL);
    note_outcome(mon, vm, old_state);
    /* past its handshake: no longer a connection attempt in flight (a
     * scan caps those: discovery_local.c) */
    if (old_state <= DDM_VM_STATE_HANDSHAKE && vm->state > DDM_VM_STATE_HANDSHAKE &&
        vm->state != DDM_VM_STATE_CLOSED && g_hash_table_lookup(mon->vms, vm->target->key) == vm)
        keys_changed(mon, vm->target, DDM_KEY_ANSWERED);
    /* A list shows HELO, READY and PLAIN, and known VMs still connecting. */
    if (vm->state >= DDM_VM_STATE_HELO || old_state >= DDM_VM_STATE_HELO ||
        !vm->target->speculative)
        list_changed(mon, vm->target->key);
    if ((vm->state == DDM_VM_STATE_READY || vm->state == DDM_VM_STATE_PLAIN) &&
        mon->events && mon->events->vm_up)
        mon->events->vm_up(mon->ud, vm);
}

void ddm_monitor_vm_identity_changed(DdmMonitor *mon, DdmVm *vm)
{
    g_return_if_fail(mon != NULL && vm != NULL);
    list_changed(mon, vm->target->key);
    if (vm->state != DDM_VM_STATE_READY && vm->state != DDM_VM_STATE_PLAIN)
        return;
    if (mon->events && mon->events->vm_changed)
        mon->events->vm_changed(mon->ud, vm);
}

void ddm_monitor_vm_closed(DdmMonitor *mon, DdmVm *vm)
{
    gboolean reconnect = FALSE;
    char *key;

    g_return_if_fail(mon != NULL && vm != NULL);
    key = g_strdup(vm->target->key);
    if (vm->info.ddm) /* it spoke DDM: its next session skips the JVM probe */
        ddm_monitor_note_ddm(mon, key);
    if (mon->events && mon->events->vm_closed)
        reconnect = mon->events->vm_closed(mon->ud, vm);
    if (g_hash_table_lookup(mon->vms, key) == vm) {
        DdmTarget *target = ddm_target_ref(vm->target);
        g_hash_table_remove(mon->vms, key); /* drops the table's reference */
        keys_changed(mon, target, DDM_KEY_LOST);
        ddm_target_unref(target);
    }
    /* (the list was told by the state change to CLOSED, if it showed the VM) */
    if (reconnect && !mon->stopping)
        ddm_monitor_retry_fast(mon, key);
    g_free(key);
}

void ddm_monitor_vm_headline_changed(DdmMonitor *mon, DdmVm *vm)
{
    g_return_if_fail(mon != NULL);
    /* a VM without a target yet (tests' fakes) has no row of its own: all rows */
    list_changed(mon, vm && vm->target ? vm->target->key : NULL);
}
