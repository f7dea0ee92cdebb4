/* SPDX-License-Identifier: Apache-2.0
 *
 * The monitor hub (see monitor.h): the VM table (key -> session, one
 * reference each), per-key reconnect backoff, the core's views "vms" and
 * "plugins", the discovery modules, and the wiring between sessions, the
 * plugin registry, the view store and the debugger relay.
 *
 * Invariants: at most one session per key; a key whose session failed
 * before HELO is not retried before its backoff (1 s doubling to 30 s,
 * reset by a successful HELO; a port scan's refused connects are free,
 * the scan period paces them); plugins get DDM_VM_GONE only for a VM they
 * saw READY, before its views go; the "vms" view is rebuilt in a coalesced
 * low-priority source, at most every VMS_VIEW_MIN_INTERVAL_MS.
 * Non-goals: how VMs are found (discovery modules), how they are spoken to
 * (vm.c), what plugins do.
 */
#include <errno.h>
#include <string.h>

#include "core/pluginhost/loader.h"
#include "core/session/monitor.h"
#include "core/relay/relay.h"

#define BACKOFF_FIRST_MS 1000u
#define BACKOFF_MAX_MS 30000u
#define FAST_RETRY_FIRST_MS 20u
#define FAST_RETRY_MAX_MS 1000u
#define FAST_RETRY_WINDOW_MS 15000u
#define VMS_VIEW_MIN_INTERVAL_MS 100

/* Per-key reconnect state; also remembers the last target offered for the
 * key so the relay can ask for a fast retry. */
typedef struct DdmBackoff {
    DdmMonitor *mon;
    char *key;
    DdmTarget *target;      /* last offered (ref), or NULL */
    gint64 not_before_us;   /* no new session before this */
    guint delay_ms;         /* the next failure's delay; 0 = no failure yet */
    gint64 fast_until_us;   /* fast-retry mode (relay) while now < this */
    guint fast_delay_ms;
    guint fast_timer;
    char *last_error;       /* why the last session failed; NULL after a good HELO */
} DdmBackoff;

static void backoff_free(gpointer p)
{
    DdmBackoff *b = p;
    if (b->fast_timer)
        g_source_remove(b->fast_timer);
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

static void schedule_vms_view(DdmMonitor *mon);

/* ---------------------------------------------------------------- views */

static const ddm_column vms_columns[] = {
    {"key", DDM_VAL_STR, NULL},
    {"pid", DDM_VAL_INT, NULL},
    {"app", DDM_VAL_STR, NULL},
    {"vm", DDM_VAL_STR, NULL},
    {"ddm", DDM_VAL_BOOL, NULL},
    {"transport", DDM_VAL_STR, NULL},
    {"device", DDM_VAL_STR, NULL},
    {"state", DDM_VAL_STR, NULL},
    {"debug port", DDM_VAL_INT, NULL},
    {"info", DDM_VAL_STR, NULL},
};

static const ddm_column plugins_columns[] = {
    {"name", DDM_VAL_STR, NULL},
    {"version", DDM_VAL_STR, NULL},
    {"abi", DDM_VAL_STR, NULL},
    {"status", DDM_VAL_STR, NULL},
    {"reason", DDM_VAL_STR, NULL},
    {"file", DDM_VAL_STR, NULL},
    {"chunks", DDM_VAL_STR, NULL},
};

static gint cmp_vm_key(gconstpointer a, gconstpointer b)
{
    const DdmVm *x = *(DdmVm *const *)a, *y = *(DdmVm *const *)b;
    return g_strcmp0(x->target->key, y->target->key);
}

/* "label: text" of every headline, sorted by label so the column is stable. (transfer full) */
static char *headline_text(DdmVm *vm)
{
    GString *s;
    GList *labels, *l;

    if (!vm->headlines || g_hash_table_size(vm->headlines) == 0)
        return NULL;
    s = g_string_new(NULL);
    labels = g_list_sort(g_hash_table_get_keys(vm->headlines), (GCompareFunc)g_strcmp0);
    for (l = labels; l; l = l->next) {
        if (s->len)
            g_string_append(s, ", ");
        g_string_append_printf(s, "%s: %s", (const char *)l->data,
                               (const char *)g_hash_table_lookup(vm->headlines, l->data));
    }
    g_list_free(labels);
    return g_string_free(s, FALSE);
}

static gint cmp_backoff_key(gconstpointer a, gconstpointer b)
{
    const DdmBackoff *x = *(DdmBackoff *const *)a, *y = *(DdmBackoff *const *)b;
    return g_strcmp0(x->key, y->key);
}

/* Targets known to be VMs (adb pids, --connect) whose last session failed
 * and that are waiting for a retry: one row each, the reason in "info", so
 * the user sees why a VM is missing. Port-scan misses are not VMs: never. */
static void add_retrying_rows(DdmMonitor *mon, ddm_view *view)
{
    GPtrArray *rows = g_ptr_array_new();
    GHashTableIter it;
    gpointer k, v;

    g_hash_table_iter_init(&it, mon->backoff);
    while (g_hash_table_iter_next(&it, &k, &v)) {
        DdmBackoff *b = v;
        DdmVm *vm = g_hash_table_lookup(mon->vms, b->key);
        if (!b->last_error || !b->target || g_strcmp0(b->target->origin, "local") == 0)
            continue;
        if (vm && vm->state >= DDM_VM_STATE_HELO)
            continue; /* listed as a session */
        g_ptr_array_add(rows, b);
    }
    g_ptr_array_sort(rows, cmp_backoff_key);
    for (guint i = 0; i < rows->len; i++) {
        DdmBackoff *b = g_ptr_array_index(rows, i);
        ddm_view_row(view);
        ddm_view_cell_str(view, b->key);
        if (b->target->pid_hint)
            ddm_view_cell_int(view, b->target->pid_hint);
        else
            ddm_view_cell_str(view, NULL);
        ddm_view_cell_str(view, NULL);  /* app */
        ddm_view_cell_str(view, NULL);  /* vm */
        ddm_view_cell_str(view, NULL);  /* ddm: unknown */
        ddm_view_cell_str(view, b->target->ops->transport);
        ddm_view_cell_str(view, b->target->device);
        ddm_view_cell_str(view, "retrying");
        ddm_view_cell_str(view, NULL);  /* debug port */
        ddm_view_cell_str(view, b->last_error);
    }
    g_ptr_array_unref(rows);
}

static void rebuild_vms_view(DdmMonitor *mon)
{
    GPtrArray *vms = g_ptr_array_new();
    GHashTableIter it;
    gpointer k, v;
    ddm_view *view = mon->vms_view;

    if (!view)
        return;
    /* JDWP peers, and targets known to be VMs (adb pids, --connect) while
     * their first connection is in flight: a slow connect must not hide a
     * VM the user named. A scanned port in CONNECTING or HANDSHAKE is not
     * known to be a VM yet (and would flicker in `ddmon watch`); a target
     * retrying after an error has its "retrying" row instead. */
    g_hash_table_iter_init(&it, mon->vms);
    while (g_hash_table_iter_next(&it, &k, &v)) {
        DdmVm *vm = v;
        DdmVmState st = vm->state;
        if (st == DDM_VM_STATE_HELO || st == DDM_VM_STATE_READY || st == DDM_VM_STATE_PLAIN) {
            g_ptr_array_add(vms, vm);
        } else if ((st == DDM_VM_STATE_CONNECTING || st == DDM_VM_STATE_HANDSHAKE) &&
                   g_strcmp0(vm->target->origin, "local") != 0) {
            DdmBackoff *b = g_hash_table_lookup(mon->backoff, vm->target->key);
            if (b == NULL || b->last_error == NULL)
                g_ptr_array_add(vms, vm);
        }
    }
    g_ptr_array_sort(vms, cmp_vm_key);

    ddm_view_begin(view);
    add_retrying_rows(mon, view);
    for (guint i = 0; i < vms->len; i++) {
        DdmVm *vm = g_ptr_array_index(vms, i);
        guint16 port = mon->relay ? ddm_relay_port_of(mon->relay, vm) : 0;
        gboolean known = vm->state == DDM_VM_STATE_READY || vm->state == DDM_VM_STATE_PLAIN;
        char *info = headline_text(vm);

        ddm_view_row(view);
        ddm_view_cell_str(view, vm->target->key);
        if (vm->info.pid)
            ddm_view_cell_int(view, vm->info.pid);
        else
            ddm_view_cell_str(view, NULL);
        ddm_view_cell_str(view, vm->info.app_name);
        ddm_view_cell_str(view, vm->info.vm_ident);
        if (known)
            ddm_view_cell_bool(view, vm->info.ddm);
        else
            ddm_view_cell_str(view, NULL);
        ddm_view_cell_str(view, vm->info.transport);
        ddm_view_cell_str(view, vm->info.device);
        ddm_view_cell_str(view, ddm_vm_state_name(vm->state));
        if (port)
            ddm_view_cell_int(view, port);
        else
            ddm_view_cell_str(view, NULL);
        ddm_view_cell_str(view, info);
        g_free(info);
    }
    ddm_view_commit(view);
    g_ptr_array_unref(vms);
}

static gboolean vms_view_cb(gpointer ud)
{
    DdmMonitor *mon = ud;
    mon->vms_view_idle = 0;
    mon->vms_view_refreshed_us = g_get_monotonic_time();
    rebuild_vms_view(mon);
    return G_SOURCE_REMOVE;
}

/* Coalesce VM list changes: one rebuild per burst, at most every 100 ms. */
static void schedule_vms_view(DdmMonitor *mon)
{
    gint64 since_ms;
    guint delay;

    if (mon->vms_view_idle || mon->stopping || !mon->vms_view)
        return;
    since_ms = (g_get_monotonic_time() - mon->vms_view_refreshed_us) / 1000;
    delay = since_ms >= VMS_VIEW_MIN_INTERVAL_MS ? 0 : (guint)(VMS_VIEW_MIN_INTERVAL_MS - since_ms);
    /* Default priority: at a lower one, a VM whose socket never runs dry
     * (a flood of events) would starve the list, and a VM that went away
     * would stay listed until the flood stopped. The rate limit above keeps
     * rebuilds cheap. */
    mon->vms_view_idle = g_timeout_add(delay, vms_view_cb, mon);
}

void ddm_monitor_refresh_plugins_view(DdmMonitor *mon)
{
    GPtrArray *plugins;
    ddm_view *view;

    g_return_if_fail(mon != NULL);
    view = mon->plugins_view;
    if (!view || !mon->registry)
        return;
    plugins = ddm_registry_plugins(mon->registry);
    ddm_view_begin(view);
    for (guint i = 0; plugins && i < plugins->len; i++) {
        ddm_plugin *p = g_ptr_array_index(plugins, i);
        GArray *types = ddm_registry_owned_types(mon->registry, p);
        GString *chunks = g_string_new(NULL);
        char abi[16], name[5];

        for (guint j = 0; types && j < types->len; j++) {
            if (chunks->len)
                g_string_append_c(chunks, ',');
            g_string_append(chunks, ddm_chunk_name(g_array_index(types, uint32_t, j), name));
        }
        if (types)
            g_array_unref(types);
        g_snprintf(abi, sizeof abi, "%u.%u", p->abi_major, p->abi_minor);
        ddm_view_row(view);
        ddm_view_cell_str(view, p->name);
        ddm_view_cell_str(view, p->version);
        ddm_view_cell_str(view, p->abi_major || p->abi_minor ? abi : NULL);
        ddm_view_cell_str(view, ddm_registry_plugin_status_name(p->status));
        ddm_view_cell_str(view, p->reason);
        ddm_view_cell_str(view, p->path);
        ddm_view_cell_str(view, chunks->len ? chunks->str : NULL);
        g_string_free(chunks, TRUE);
    }
    ddm_view_commit(view);
}

static ddm_view *core_table(DdmMonitor *mon, const char *name, const char *title,
                            const ddm_column *cols, size_t n)
{
    ddm_view *v = ddm_views_create(mon->views, "ddmon", NULL, name, DDM_VIEW_TABLE, title);
    if (!v)
        return NULL;
    ddm_view_set_columns(v, cols, n);
    ddm_view_begin(v);
    ddm_view_commit(v);
    return v;
}

/* ------------------------------------------------------------ discovery */

static DdmDiscovery *discovery_find(DdmMonitor *mon, const char *name)
{
    for (guint i = 0; i < mon->discovery->len; i++) {
        DdmDiscovery *d = g_ptr_array_index(mon->discovery, i);
        if (g_strcmp0(d->ops->name, name) == 0)
            return d;
    }
    return NULL;
}

/* Modules keep d->running themselves (start sets it, stop clears it). */
static void discovery_destroy(gpointer p)
{
    DdmDiscovery *d = p;
    if (d->running && d->ops->stop)
        d->ops->stop(d);
    if (d->ops->free)
        d->ops->free(d);
}

static void discovery_add(DdmMonitor *mon, DdmDiscovery *d, gboolean start)
{
    if (!d)
        return;
    g_ptr_array_add(mon->discovery, d);
    if (start && !d->running && d->ops->start)
        d->ops->start(d);
}

/* Bring the discovery modules in line with the config. */
static void reconcile_discovery(DdmMonitor *mon, gboolean start)
{
    DdmConfig *c = mon->config;
    DdmDiscovery *d;

    d = discovery_find(mon, "local");
    if (c->scan_local && !d)
        discovery_add(mon, ddm_discovery_local_new(mon), start);
    else if (!c->scan_local && d)
        g_ptr_array_remove(mon->discovery, d);

    d = discovery_find(mon, "adb");
    if (c->scan_adb && !d) {
        discovery_add(mon, ddm_discovery_adb_new(mon), start);
    } else if (!c->scan_adb && d) {
        g_ptr_array_remove(mon->discovery, d);
    }

    if (c->connect && c->connect->len && !discovery_find(mon, "connect"))
        discovery_add(mon, ddm_discovery_connect_new(mon), start);
}

gboolean ddm_monitor_set_scan(DdmMonitor *mon, const char *spec, GError **error)
{
    g_return_val_if_fail(mon != NULL && spec != NULL, FALSE);
    if (!ddm_config_set_scan(mon->config, spec, error))
        return FALSE;
    reconcile_discovery(mon, TRUE);
    return TRUE;
}

/* ------------------------------------------------------------ life cycle */

DdmMonitor *ddm_monitor_new(DdmConfig *config, GError **error)
{
    DdmMonitor *mon;
    GError *err = NULL;

    g_return_val_if_fail(config != NULL, NULL);
    mon = g_new0(DdmMonitor, 1);
    mon->config = config;
    mon->vms = g_hash_table_new_full(g_str_hash, g_str_equal, g_free,
                                     (GDestroyNotify)ddm_vm_unref);
    mon->backoff = g_hash_table_new_full(g_str_hash, g_str_equal, NULL, backoff_free);
    mon->known_ddm = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
    mon->discovery = g_ptr_array_new_with_free_func(discovery_destroy);
    mon->views = ddm_views_new();
    mon->vms_view = core_table(mon, "vms", "Virtual machines", vms_columns,
                               G_N_ELEMENTS(vms_columns));
    mon->plugins_view = core_table(mon, "plugins", "Plugins", plugins_columns,
                                   G_N_ELEMENTS(plugins_columns));
    mon->registry = ddm_registry_new(mon);
    if (!ddm_loader_load_all(mon->registry, config, &err)) {
        g_propagate_error(error, err);
        ddm_monitor_free(mon);
        return NULL;
    }
    ddm_monitor_refresh_plugins_view(mon);
    mon->relay = config->relay ? ddm_relay_new(mon, &err) : NULL;
    if (config->relay && !mon->relay && err) {
        g_propagate_error(error, err);
        ddm_monitor_free(mon);
        return NULL;
    }
    reconcile_discovery(mon, FALSE);
    return mon;
}

void ddm_monitor_start(DdmMonitor *mon)
{
    g_return_if_fail(mon != NULL);
    for (guint i = 0; i < mon->discovery->len; i++) {
        DdmDiscovery *d = g_ptr_array_index(mon->discovery, i);
        if (!d->running && d->ops->start)
            d->ops->start(d);
    }
}

GPtrArray *ddm_monitor_list_vms(DdmMonitor *mon)
{
    GPtrArray *out = g_ptr_array_new_with_free_func((GDestroyNotify)ddm_vm_unref);
    GHashTableIter it;
    gpointer k, v;

    g_hash_table_iter_init(&it, mon->vms);
    while (g_hash_table_iter_next(&it, &k, &v))
        g_ptr_array_add(out, ddm_vm_ref(v));
    return out;
}

void ddm_monitor_free(DdmMonitor *mon)
{
    GPtrArray *vms;

    if (!mon)
        return;
    mon->stopping = TRUE;
    if (mon->vms_view_idle) {
        g_source_remove(mon->vms_view_idle);
        mon->vms_view_idle = 0;
    }
    /* Discovery first (no new sessions), then every VM (plugins see GONE). */
    g_ptr_array_set_size(mon->discovery, 0);
    vms = ddm_monitor_list_vms(mon);
    for (guint i = 0; i < vms->len; i++)
        ddm_vm_close(g_ptr_array_index(vms, i), "ddmon is stopping");
    g_ptr_array_unref(vms);
    g_hash_table_remove_all(mon->vms);
    if (mon->relay) {
        ddm_relay_free(mon->relay);
        mon->relay = NULL;
    }
    if (mon->registry) {
        ddm_registry_free(mon->registry);
        mon->registry = NULL;
    }
    mon->vms_view = mon->plugins_view = NULL;
    ddm_views_free(mon->views);
    g_ptr_array_unref(mon->discovery);
    g_hash_table_destroy(mon->backoff);
    g_hash_table_destroy(mon->known_ddm);
    g_hash_table_destroy(mon->vms);
    ddm_config_free(mon->config);
    g_free(mon);
}

/* --------------------------------------------------------------- targets */

static void start_session(DdmMonitor *mon, DdmTarget *target)
{
    DdmVm *vm = ddm_vm_new(mon, target);
    if (!vm)
        return;
    g_hash_table_insert(mon->vms, g_strdup(target->key), vm);
    g_debug("%s: connecting (%s)", target->key, target->origin ? target->origin : "?");
    if (g_strcmp0(target->origin, "local") != 0)
        schedule_vms_view(mon); /* listed while connecting (rebuild_vms_view) */
}

gboolean ddm_monitor_offer_target(DdmMonitor *mon, DdmTarget *target)
{
    DdmBackoff *b;

    g_return_val_if_fail(mon != NULL && target != NULL && target->key != NULL, FALSE);
    if (mon->stopping || g_hash_table_contains(mon->vms, target->key))
        return FALSE;
    b = backoff_get(mon, target->key);
    if (b->target != target) {
        ddm_target_ref(target);
        ddm_target_unref(b->target);
        b->target = target;
    }
    if (b->fast_timer)
        return FALSE; /* a fast retry is due soon anyway */
    if (g_get_monotonic_time() < b->not_before_us)
        return FALSE;
    start_session(mon, target);
    return TRUE;
}

DdmVm *ddm_monitor_find_vm(DdmMonitor *mon, const char *key)
{
    g_return_val_if_fail(mon != NULL, NULL);
    return key ? g_hash_table_lookup(mon->vms, key) : NULL;
}

void ddm_monitor_forget_target(DdmMonitor *mon, const char *key, const char *reason)
{
    DdmVm *vm;

    g_return_if_fail(mon != NULL && key != NULL);
    vm = g_hash_table_lookup(mon->vms, key);
    if (vm)
        ddm_vm_close(vm, reason ? reason : "target gone");
    if (g_hash_table_remove(mon->backoff, key))
        schedule_vms_view(mon); /* its "retrying" row, if any, goes */
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
    schedule_vms_view(mon);
}

static gboolean fast_retry_cb(gpointer ud)
{
    DdmBackoff *b = ud;
    DdmMonitor *mon = b->mon;

    b->fast_timer = 0;
    if (!mon->stopping && b->target && !g_hash_table_contains(mon->vms, b->key))
        start_session(mon, b->target);
    return G_SOURCE_REMOVE;
}

static void schedule_fast_retry(DdmBackoff *b)
{
    if (b->fast_timer || !b->target)
        return;
    b->fast_delay_ms = b->fast_delay_ms ? MIN(b->fast_delay_ms * 2, FAST_RETRY_MAX_MS)
                                        : FAST_RETRY_FIRST_MS;
    b->fast_timer = g_timeout_add(b->fast_delay_ms, fast_retry_cb, b);
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
    if (mon->stopping)
        return;
    b = backoff_get(mon, key);
    vm = g_hash_table_lookup(mon->vms, key);
    if (!b->target && vm)
        b->target = ddm_target_ref(vm->target);
    if (!b->target) {
        g_debug("%s: fast retry asked for an unknown target", key);
        return;
    }
    b->fast_until_us = g_get_monotonic_time() + (gint64)FAST_RETRY_WINDOW_MS * 1000;
    b->fast_delay_ms = 0;
    b->not_before_us = 0;
    if (!vm)
        schedule_fast_retry(b);
    /* else: a session is up or on its way; if it fails, the window applies */
}

DdmVm *ddm_monitor_resolve_vm(DdmMonitor *mon, const char *spec)
{
    guint n = 0;
    DdmVm *vm = ddm_monitor_resolve_vm_newest(mon, spec, &n);
    return n == 1 ? vm : NULL;
}

DdmVm *ddm_monitor_resolve_vm_newest(DdmMonitor *mon, const char *spec, guint *n_matches)
{
    GHashTableIter it;
    gpointer k, v;
    DdmVm *found = NULL;
    guint64 pid = 0;
    char *serial = NULL;
    gboolean by_pid;
    guint matches = 0;

    if (n_matches)
        *n_matches = 0;
    g_return_val_if_fail(mon != NULL, NULL);
    if (!spec || !*spec)
        return NULL;
    if ((found = g_hash_table_lookup(mon->vms, spec))) {
        if (n_matches)
            *n_matches = 1;
        return found;
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
        DdmVm *vm = v;
        gboolean match;
        if (by_pid)
            match = vm->info.pid == pid &&
                    (!serial || g_strcmp0(serial, vm->info.device) == 0);
        else
            match = g_strcmp0(spec, vm->info.app_name) == 0 ||
                    g_strcmp0(spec, vm->info.package_name) == 0;
        if (match) {
            if (!found || vm->connected_at_us > found->connected_at_us ||
                (vm->connected_at_us == found->connected_at_us &&
                 g_strcmp0(vm->target->key, found->target->key) > 0))
                found = vm;
            matches++;
        }
    }
    g_free(serial);
    if (n_matches)
        *n_matches = matches;
    return found;
}

/* ----------------------------------------------------- session callbacks */

/* Session outcome for the key's backoff. */
static void note_outcome(DdmMonitor *mon, DdmVm *vm, DdmVmState old_state)
{
    DdmBackoff *b = g_hash_table_lookup(mon->backoff, vm->target->key);
    gint64 now = g_get_monotonic_time();

    if (vm->state == DDM_VM_STATE_READY || vm->state == DDM_VM_STATE_PLAIN) {
        if (b) { /* a good HELO answer: forget past failures */
            b->delay_ms = 0;
            b->not_before_us = 0;
            b->fast_until_us = 0;
            b->fast_delay_ms = 0;
            g_clear_pointer(&b->last_error, g_free);
        }
        return;
    }
    if (vm->state != DDM_VM_STATE_CLOSED || mon->stopping)
        return;
    if (old_state == DDM_VM_STATE_READY || old_state == DDM_VM_STATE_PLAIN)
        return; /* a VM that went away normally: the next scan may find its successor */
    if (!b)
        b = backoff_get(mon, vm->target->key);
    if (g_strcmp0(b->last_error, vm->close_reason) != 0) {
        g_free(b->last_error);
        b->last_error = g_strdup(vm->close_reason);
        if (g_strcmp0(vm->target->origin, "local") != 0)
            schedule_vms_view(mon); /* a "retrying" row appears or changes */
    }
    if (now < b->fast_until_us) {
        schedule_fast_retry(b);
        return;
    }
    /* A refused connect during a port scan is the normal case: the scan paces it. */
    if (!vm->was_connected && g_strcmp0(vm->target->origin, "local") == 0)
        return;
    b->delay_ms = b->delay_ms ? MIN(b->delay_ms * 2, BACKOFF_MAX_MS) : BACKOFF_FIRST_MS;
    b->not_before_us = now + (gint64)b->delay_ms * 1000;
    g_debug("%s: session failed (%s); next attempt in %u ms", vm->target->key,
            vm->close_reason ? vm->close_reason : "?", b->delay_ms);
}

void ddm_monitor_vm_state_changed(DdmMonitor *mon, DdmVm *vm, DdmVmState old_state)
{
    g_return_if_fail(mon != NULL && vm != NULL);
    note_outcome(mon, vm, old_state);
    /* The view lists HELO, READY and PLAIN, and known VMs still connecting. */
    if (vm->state >= DDM_VM_STATE_HELO || old_state >= DDM_VM_STATE_HELO ||
        g_strcmp0(vm->target->origin, "local") != 0)
        schedule_vms_view(mon);
    switch (vm->state) {
    case DDM_VM_STATE_READY:
        if (mon->relay)
            ddm_relay_vm_up(mon->relay, vm);
        if (mon->registry)
            ddm_registry_vm_event(mon->registry, vm, DDM_VM_READY);
        break;
    case DDM_VM_STATE_PLAIN:
        if (mon->relay)
            ddm_relay_vm_up(mon->relay, vm);
        break;
    default:
        break;
    }
}

void ddm_monitor_vm_identity_changed(DdmMonitor *mon, DdmVm *vm)
{
    g_return_if_fail(mon != NULL && vm != NULL);
    schedule_vms_view(mon);
    if (vm->state != DDM_VM_STATE_READY && vm->state != DDM_VM_STATE_PLAIN)
        return;
    if (mon->relay)
        ddm_relay_vm_changed(mon->relay, vm);
    if (vm->state == DDM_VM_STATE_READY && mon->registry)
        ddm_registry_vm_event(mon->registry, vm, DDM_VM_CHANGED);
}

void ddm_monitor_vm_closed(DdmMonitor *mon, DdmVm *vm)
{
    gboolean reconnect = FALSE;
    char *key;

    g_return_if_fail(mon != NULL && vm != NULL);
    key = g_strdup(vm->target->key);
    if (vm->was_ready && mon->registry)
        ddm_registry_vm_event(mon->registry, vm, DDM_VM_GONE);
    if (mon->relay)
        reconnect = ddm_relay_vm_closed(mon->relay, vm);
    ddm_views_destroy_vm(mon->views, key);
    if (g_hash_table_lookup(mon->vms, key) == vm)
        g_hash_table_remove(mon->vms, key); /* drops the table's reference */
    /* (the view was scheduled by the state change to CLOSED, if it listed the VM) */
    if (reconnect && !mon->stopping)
        ddm_monitor_retry_fast(mon, key);
    g_free(key);
}

void ddm_monitor_ddm_chunk(DdmMonitor *mon, DdmVm *vm, const ddm_chunk_info *ci,
                           const uint8_t *data, size_t len)
{
    g_return_if_fail(mon != NULL && vm != NULL && ci != NULL);
    if (mon->registry)
        ddm_registry_dispatch(mon->registry, vm, ci, data, len);
}

void ddm_monitor_tap_chunk(DdmMonitor *mon, DdmVm *vm, const ddm_chunk_info *ci,
                           const uint8_t *data, size_t len)
{
    g_return_if_fail(mon != NULL && vm != NULL && ci != NULL);
    if (mon->registry)
        ddm_registry_tap_request(mon->registry, vm, ci, data, len);
}

void ddm_monitor_jdwp_from_vm(DdmMonitor *mon, DdmVm *vm, const DdmJdwpPacket *pkt)
{
    g_return_if_fail(mon != NULL && vm != NULL && pkt != NULL);
    if (mon->relay) {
        ddm_relay_command_from_vm(mon->relay, vm, pkt);
        return;
    }
    vm->jdwp_dropped++;
    g_debug("%s: JDWP command %u/%u from the VM dropped (no relay)", vm->target->key,
            pkt->header.cmdset, pkt->header.cmd);
}

void ddm_monitor_vm_output_drained(DdmMonitor *mon, DdmVm *vm)
{
    g_return_if_fail(mon != NULL && vm != NULL);
    if (mon->relay)
        ddm_relay_vm_output_drained(mon->relay, vm);
}

gboolean ddm_monitor_foreign_reply(DdmMonitor *mon, DdmVm *vm, const DdmJdwpPacket *pkt)
{
    g_return_val_if_fail(mon != NULL && vm != NULL && pkt != NULL, FALSE);
    return mon->relay ? ddm_relay_reply_from_vm(mon->relay, vm, pkt) : FALSE;
}

void ddm_monitor_vm_headline_changed(DdmMonitor *mon, DdmVm *vm)
{
    g_return_if_fail(mon != NULL);
    (void)vm;
    schedule_vms_view(mon);
}
