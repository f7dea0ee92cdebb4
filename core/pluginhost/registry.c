/* SPDX-License-Identifier: Apache-2.0
 *
 * The plugin registry: plugin records, every registration they made, the
 * --chunks filter, dispatch of chunks and VM events, and user commands.
 *
 * Invariants:
 *  - Every registration names its plugin; ddm_registry_init_plugin undoes
 *    all of them when init fails or a chunk type conflicts, before dlclose
 *    (each ud_free is plugin code).
 *  - One owner per chunk type; taps and listeners run in registration order.
 *  - A user command's done callback runs exactly once: at cmd_finish, when
 *    the handler fails, or when its plugin is unloaded.
 *  - Unknown chunk types are logged once per type per VM (bounded set).
 * Non-goals: finding or validating plugin files (loader.c), the host table
 * itself (host.c), sending anything to a VM (core/session).
 */
#include "build-config.h" /* autoconf; core/config/config.h is the runtime DdmConfig */

/* One library, several components: each file names its own log domain. */
#undef G_LOG_DOMAIN
#define G_LOG_DOMAIN "ddmon-registry"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <dlfcn.h>

#include <json-glib/json-glib.h>

#include "core/pluginhost/loader.h"
#include "core/session/monitor.h"
#include "core/pluginhost/registry-private.h"
#include "core/views/views.h"

/* A hostile VM could send every possible type; remember only this many. */
#define UNKNOWN_LOGGED_MAX 256
/* Failed handler calls: log the first few per owner, then every 1000th. */
#define ERROR_LOG_FIRST 5
#define ERROR_LOG_EVERY 1000

/* Names the core's own client commands use (frontend). */
static const char *const reserved_commands[] = {
    "vms", "view", "views", "plugins", "watch", "snapshot", "server", "start-server",
    "kill-server", "help", "version", "connect", "disconnect", "scan", NULL,
};

/* Live registries, main thread only: view_free gets a bare ddm_view and must
 * find the store that holds it. Usually one entry (two during --check-plugin). */
static GSList *live_registries;

static void chunk_reg_free(DdmChunkReg *r)
{
    if (r->ud_free)
        r->ud_free(r->ud);
    g_free(r);
}

static void listener_reg_free(DdmListenerReg *r)
{
    if (r->ud_free)
        r->ud_free(r->ud);
    g_free(r);
}

static void command_reg_free(DdmCommandReg *r)
{
    if (r->ud_free)
        r->ud_free(r->ud);
    g_free(r->name);
    g_free(r->usage);
    g_free(r->summary);
    g_free(r);
}

static void plugin_record_free(ddm_plugin *p)
{
    p->magic = 0;
    g_free(p->name);
    g_free(p->path);
    g_free(p->version);
    g_free(p->license);
    g_free(p->summary);
    g_free(p->reason);
    if (p->options_read)
        g_hash_table_unref(p->options_read);
    g_free(p);
}

DdmRegistry *ddm_registry_new(DdmMonitor *monitor, DdmViews *views, const DdmConfig *config)
{
    DdmRegistry *reg = g_new0(DdmRegistry, 1);
    reg->monitor = monitor;
    reg->views = views;
    reg->config = config;
    reg->plugins = g_ptr_array_new_with_free_func((GDestroyNotify)plugin_record_free);
    reg->owners = g_hash_table_new(g_direct_hash, g_direct_equal);
    reg->taps = g_ptr_array_new();
    reg->listeners = g_ptr_array_new();
    reg->commands = g_ptr_array_new();
    reg->timers = g_hash_table_new(g_direct_hash, g_direct_equal);
    reg->cmds = g_hash_table_new(g_direct_hash, g_direct_equal);
    ddm_host_init(&reg->host);
    live_registries = g_slist_prepend(live_registries, reg);
    return reg;
}

void ddm_registry_free(DdmRegistry *reg)
{
    if (!reg)
        return;
    /* Unload in reverse load order: later plugins may use earlier ones' views. */
    for (guint i = reg->plugins->len; i > 0; i--) {
        ddm_plugin *p = g_ptr_array_index(reg->plugins, i - 1);
        if (p->status == DDM_PLUGIN_LOADED)
            ddm_registry_unload(reg, p);
    }
    g_assert(g_hash_table_size(reg->owners) == 0);
    g_assert(reg->taps->len == 0 && reg->listeners->len == 0 && reg->commands->len == 0);
    g_assert(g_hash_table_size(reg->timers) == 0 && g_hash_table_size(reg->cmds) == 0);
    live_registries = g_slist_remove(live_registries, reg);
    g_hash_table_unref(reg->owners);
    g_ptr_array_unref(reg->taps);
    g_ptr_array_unref(reg->listeners);
    g_ptr_array_unref(reg->commands);
    g_hash_table_unref(reg->timers);
    g_hash_table_unref(reg->cmds);
    if (reg->chunk_filter)
        g_hash_table_unref(reg->chunk_filter);
    g_ptr_array_unref(reg->plugins);
    g_free(reg->conflict_msg);
    g_free(reg);
}

DdmMonitor *ddm_registry_monitor(DdmRegistry *reg)
{
    g_return_val_if_fail(reg != NULL, NULL);
    return reg->monitor;
}

ddm_plugin *ddm_registry_add(DdmRegistry *reg, const char *name, const char *path)
{
    g_return_val_if_fail(reg != NULL && name != NULL, NULL);
    ddm_plugin *p = g_new0(ddm_plugin, 1);
    p->magic = DDM_PLUGIN_HANDLE_MAGIC;
    p->registry = reg;
    p->name = g_strdup(name);
    p->path = g_strdup(path);
    p->status = DDM_PLUGIN_DISABLED;
    g_ptr_array_add(reg->plugins, p);
    return p;
}

ddm_plugin *ddm_registry_find_plugin(DdmRegistry *reg, const char *name)
{
    g_return_val_if_fail(reg != NULL && name != NULL, NULL);
    ddm_plugin *first = NULL;
    for (guint i = 0; i < reg->plugins->len; i++) {
        ddm_plugin *p = g_ptr_array_index(reg->plugins, i);
        if (strcmp(p->name, name) != 0)
            continue;
        if (p->status == DDM_PLUGIN_LOADED)
            return p;
        if (!first)
            first = p;
    }
    return first;
}

GPtrArray *ddm_registry_plugins(DdmRegistry *reg)
{
    g_return_val_if_fail(reg != NULL, NULL);
    return reg->plugins;
}

const char *ddm_registry_plugin_status_name(DdmPluginStatus s)
{
    switch (s) {
    case DDM_PLUGIN_LOADED:
        return "loaded";
    case DDM_PLUGIN_DISABLED:
        return "disabled";
    case DDM_PLUGIN_REFUSED:
        return "refused";
    }
    return "unknown";
}

/* ------------------------------------------------------------ rollback */

GPtrArray *ddm_registry_list_vms(DdmRegistry *reg)
{
    return reg->monitor ? ddm_monitor_list_vms(reg->monitor)
                        : g_ptr_array_new_with_free_func((GDestroyNotify)ddm_vm_unref);
}

void ddm_registry_count_observers(DdmRegistry *reg, ddm_plugin *p, guint *taps, guint *listeners)
{
    guint t = 0, l = 0;
    g_return_if_fail(reg != NULL);
    for (guint i = 0; i < reg->taps->len; i++)
        t += ((DdmChunkReg *)g_ptr_array_index(reg->taps, i))->plugin == p;
    for (guint i = 0; i < reg->listeners->len; i++)
        l += ((DdmListenerReg *)g_ptr_array_index(reg->listeners, i))->plugin == p;
    if (taps)
        *taps = t;
    if (listeners)
        *listeners = l;
}

DdmViews *ddm_registry_views(DdmRegistry *reg)
{
    g_return_val_if_fail(reg != NULL, NULL);
    return reg->views;
}

const DdmConfig *ddm_registry_config(DdmRegistry *reg)
{
    g_return_val_if_fail(reg != NULL, NULL);
    return reg->config;
}

void ddm_registry_drop_vm_data_of(DdmRegistry *reg, ddm_plugin *p)
{
    g_autoptr(GPtrArray) vms = ddm_registry_list_vms(reg);
    for (guint i = 0; i < vms->len; i++) {
        DdmVm *vm = g_ptr_array_index(vms, i);
        if (!vm->plugin_data)
            continue;
        DdmVmPluginData *d = g_hash_table_lookup(vm->plugin_data, p);
        if (!d)
            continue;
        g_hash_table_steal(vm->plugin_data, p);
        if (d->data_free)
            d->data_free(d->data);
        g_free(d);
    }
}

static void remove_chunk_regs(GPtrArray *arr, ddm_plugin *p)
{
    for (guint i = 0; i < arr->len;) {
        DdmChunkReg *r = g_ptr_array_index(arr, i);
        if (r->plugin == p) {
            g_ptr_array_remove_index(arr, i);
            chunk_reg_free(r);
        } else {
            i++;
        }
    }
}

/* Undo everything @p registered or owns; run fini when @call_fini; dlclose. */
static void drop_plugin(DdmRegistry *reg, ddm_plugin *p, gboolean call_fini, const char *why)
{
    /* 1. Requests in flight: their callbacks (plugin code) get VM_GONE now. */
    {
        g_autoptr(GPtrArray) vms = ddm_registry_list_vms(reg);
        for (guint i = 0; i < vms->len; i++) {
            DdmVm *vm = g_ptr_array_index(vms, i);
            if (ddm_vm_is_valid(vm))
                ddm_vm_cancel_owner(vm, p);
        }
    }
    /* 2. Commands still running end as FAILED: the client must get an answer. */
    {
        GList *cmds = g_hash_table_get_values(reg->cmds);
        for (GList *l = cmds; l; l = l->next) {
            ddm_cmd *cmd = l->data;
            if (cmd->plugin == p) {
                g_autofree char *msg = g_strdup_printf("plugin %s %s before finishing the command",
                                                       p->name, why);
                ddm_registry_cmd_finish(cmd, DDM_CMD_FAILED, msg);
            }
        }
        g_list_free(cmds);
    }
    /* 3. The plugin's own last word. */
    if (call_fini && p->desc && p->desc->fini)
        p->desc->fini(p);
    /* 4. Timers (their ud_free runs from the source's destroy notify). */
    {
        GList *timers = g_hash_table_get_values(reg->timers);
        for (GList *l = timers; l; l = l->next) {
            DdmTimerReg *t = l->data;
            if (t->plugin == p) {
                guint id = t->id;
                ddm_registry_timer_forget(t);
                g_source_remove(id);
            }
        }
        g_list_free(timers);
    }
    /* 5. Registrations. */
    {
        GHashTableIter it;
        gpointer key, value;
        GSList *owned = NULL;
        g_hash_table_iter_init(&it, reg->owners);
        while (g_hash_table_iter_next(&it, &key, &value)) {
            DdmChunkReg *r = value;
            if (r->plugin == p) {
                g_hash_table_iter_remove(&it);
                owned = g_slist_prepend(owned, r);
            }
        }
        g_slist_free_full(owned, (GDestroyNotify)chunk_reg_free);
    }
    remove_chunk_regs(reg->taps, p);
    for (guint i = 0; i < reg->listeners->len;) {
        DdmListenerReg *r = g_ptr_array_index(reg->listeners, i);
        if (r->plugin == p) {
            g_ptr_array_remove_index(reg->listeners, i);
            listener_reg_free(r);
        } else {
            i++;
        }
    }
    for (guint i = 0; i < reg->commands->len;) {
        DdmCommandReg *r = g_ptr_array_index(reg->commands, i);
        if (r->plugin == p) {
            g_ptr_array_remove_index(reg->commands, i);
            command_reg_free(r);
        } else {
            i++;
        }
    }
    /* 6. Views it published. */
    if (ddm_registry_views(reg))
        ddm_views_destroy_owner(ddm_registry_views(reg), p->name);
    /* 7. Per-VM and plugin-wide data. */
    ddm_registry_drop_vm_data_of(reg, p);
    if (p->data_free && p->data)
        p->data_free(p->data);
    p->data = NULL;
    p->data_free = NULL;
    /* 8. No plugin code is referenced any more. */
    p->desc = NULL;
    if (p->dl) {
        dlclose(p->dl);
        p->dl = NULL;
    }
}

gboolean ddm_registry_init_plugin(DdmRegistry *reg, ddm_plugin *p, GError **error)
{
    g_return_val_if_fail(reg != NULL && ddm_plugin_is_valid(p), FALSE);
    g_return_val_if_fail(p->registry == reg && p->desc != NULL && p->desc->init != NULL, FALSE);
    g_return_val_if_fail(p->status != DDM_PLUGIN_LOADED, FALSE);

    const ddm_plugin_desc *desc = p->desc;
    if (!p->version)
        p->version = g_strdup(desc->version);
    if (!p->license)
        p->license = g_strdup(desc->license);
    if (!p->summary)
        p->summary = g_strdup(desc->summary);
    p->abi_major = desc->abi_major;
    p->abi_minor = desc->abi_minor;

    g_clear_pointer(&reg->conflict_msg, g_free);
    reg->conflicted = NULL;
    p->in_init = TRUE;
    int rc = desc->init(p, &reg->host);
    p->in_init = FALSE;

    gboolean conflict = reg->conflicted == p;
    if (rc >= 0 && !conflict) {
        p->status = DDM_PLUGIN_LOADED;
        g_clear_pointer(&p->reason, g_free);
        g_debug("plugin %s %s loaded from %s", p->name, p->version ? p->version : "",
                p->path ? p->path : "(built in)");
        return TRUE;
    }

    g_autofree char *reason = NULL;
    int code;
    if (conflict) {
        code = DDM_LOADER_ERROR_CHUNK_CONFLICT;
        reason = g_strdup(reg->conflict_msg);
    } else {
        code = DDM_LOADER_ERROR_INIT_FAILED;
        reason = g_strdup_printf("init failed: %s (%d)", g_strerror(-rc), rc);
    }
    /* fini only when init itself succeeded (plugin.h: not after a failed init). */
    drop_plugin(reg, p, rc >= 0, "was refused");
    reg->conflicted = NULL;
    g_clear_pointer(&reg->conflict_msg, g_free);
    p->status = DDM_PLUGIN_REFUSED;
    g_free(p->reason);
    p->reason = g_strdup(reason);
    g_set_error(error, DDM_LOADER_ERROR, code, "plugin %s refused: %s; file %s", p->name, reason,
                p->path ? p->path : "(none)");
    return FALSE;
}

void ddm_registry_unload(DdmRegistry *reg, ddm_plugin *p)
{
    g_return_if_fail(reg != NULL && ddm_plugin_is_valid(p) && p->registry == reg);
    if (p->status != DDM_PLUGIN_LOADED)
        return;
    /* Not active any more: callbacks run during the unload (VM_GONE replies,
     * fini) cannot start new requests, timers or views. */
    p->status = DDM_PLUGIN_DISABLED;
    g_free(p->reason);
    p->reason = g_strdup("unloaded");
    drop_plugin(reg, p, TRUE, "was unloaded");
}

guint ddm_registry_count_registrations(DdmRegistry *reg, ddm_plugin *p)
{
    g_return_val_if_fail(reg != NULL && p != NULL, 0);
    guint n = 0;
    GHashTableIter it;
    gpointer key, value;
    g_hash_table_iter_init(&it, reg->owners);
    while (g_hash_table_iter_next(&it, &key, &value))
        n += ((DdmChunkReg *)value)->plugin == p;
    for (guint i = 0; i < reg->taps->len; i++)
        n += ((DdmChunkReg *)g_ptr_array_index(reg->taps, i))->plugin == p;
    for (guint i = 0; i < reg->listeners->len; i++)
        n += ((DdmListenerReg *)g_ptr_array_index(reg->listeners, i))->plugin == p;
    for (guint i = 0; i < reg->commands->len; i++)
        n += ((DdmCommandReg *)g_ptr_array_index(reg->commands, i))->plugin == p;
    g_hash_table_iter_init(&it, reg->timers);
    while (g_hash_table_iter_next(&it, &key, &value))
        n += ((DdmTimerReg *)value)->plugin == p;
    g_hash_table_iter_init(&it, reg->cmds);
    while (g_hash_table_iter_next(&it, &key, &value))
        n += ((ddm_cmd *)value)->plugin == p;
    if (ddm_registry_views(reg)) {
        g_autoptr(GPtrArray) views = ddm_views_list(ddm_registry_views(reg));
        for (guint i = 0; i < views->len; i++) {
            const char *owner = ddm_view_owner(g_ptr_array_index(views, i));
            n += owner && strcmp(owner, p->name) == 0;
        }
    }
    g_autoptr(GPtrArray) vms = ddm_registry_list_vms(reg);
    for (guint i = 0; i < vms->len; i++) {
        DdmVm *vm = g_ptr_array_index(vms, i);
        n += vm->plugin_data && g_hash_table_contains(vm->plugin_data, p);
    }
    n += p->data != NULL;
    return n;
}

gboolean ddm_registry_may_register(ddm_plugin *p, const char *what)
{
    if (p->in_init)
        return TRUE;
    g_warning("plugin %s: %s outside init refused (register everything in init)", p->name, what);
    return FALSE;
}

/* --------------------------------------------------------- chunk filter */

void ddm_registry_set_chunk_filter(DdmRegistry *reg, GPtrArray *chunk_names)
{
    g_return_if_fail(reg != NULL);
    g_clear_pointer(&reg->chunk_filter, g_hash_table_unref);
    if (!chunk_names || chunk_names->len == 0)
        return;
    reg->chunk_filter = g_hash_table_new(g_direct_hash, g_direct_equal);
    for (guint i = 0; i < chunk_names->len; i++) {
        const char *name = g_ptr_array_index(chunk_names, i);
        uint32_t type = ddm_chunk_from_name(name);
        if (type == 0) {
            g_warning("--chunks: '%s' is not a chunk type (four characters, e.g. THCR)", name);
            continue;
        }
        g_hash_table_add(reg->chunk_filter, GUINT_TO_POINTER(type));
    }
}

gboolean ddm_registry_chunk_enabled(DdmRegistry *reg, uint32_t type)
{
    g_return_val_if_fail(reg != NULL, FALSE);
    return reg->chunk_filter == NULL ||
           g_hash_table_contains(reg->chunk_filter, GUINT_TO_POINTER(type));
}

gboolean ddm_registry_type_owned(DdmRegistry *reg, uint32_t type)
{
    g_return_val_if_fail(reg != NULL, FALSE);
    return g_hash_table_contains(reg->owners, GUINT_TO_POINTER(type));
}

static gint cmp_u32(gconstpointer a, gconstpointer b)
{
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return x < y ? -1 : x > y;
}

GArray *ddm_registry_owned_types(DdmRegistry *reg, ddm_plugin *p)
{
    g_return_val_if_fail(reg != NULL, NULL);
    GArray *out = g_array_new(FALSE, FALSE, sizeof(uint32_t));
    GHashTableIter it;
    gpointer key, value;
    g_hash_table_iter_init(&it, reg->owners);
    while (g_hash_table_iter_next(&it, &key, &value)) {
        DdmChunkReg *r = value;
        if (r->plugin == p)
            g_array_append_val(out, r->type);
    }
    g_array_sort(out, cmp_u32);
    return out;
}

void ddm_registry_handoff(DdmRegistry *reg)
{
    g_return_if_fail(reg != NULL);
    ddm_registry_check_plugin_opts(reg);
    if (!reg->chunk_filter)
        return;
    for (guint i = 0; i < reg->plugins->len; i++) {
        ddm_plugin *p = g_ptr_array_index(reg->plugins, i);
        if (p->status != DDM_PLUGIN_LOADED)
            continue;
        g_autoptr(GArray) types = ddm_registry_owned_types(reg, p);
        if (types->len == 0)
            continue;
        gboolean any = FALSE;
        for (guint j = 0; j < types->len && !any; j++)
            any = ddm_registry_chunk_enabled(reg, g_array_index(types, uint32_t, j));
        if (!any)
            g_message("plugin %s: all its chunk types are disabled (--chunks); it stays idle",
                      p->name);
    }
}

/* ------------------------------------------------------ plugin options */

static int cmp_str_ptr(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

char **ddm_registry_options_read(ddm_plugin *p)
{
    g_return_val_if_fail(p != NULL, NULL);
    if (!p->options_read)
        return g_new0(char *, 1);
    g_autofree char **keys = (char **)g_hash_table_get_keys_as_array(p->options_read, NULL);
    char **out = g_strdupv(keys);
    qsort(out, g_strv_length(out), sizeof *out, cmp_str_ptr);
    return out;
}

/* "a, b, c", or @none for an empty list. (transfer full) */
static char *join_or(char **items, const char *none)
{
    return items && *items ? g_strjoinv(", ", items) : g_strdup(none);
}

static char *loaded_plugin_names(DdmRegistry *reg)
{
    g_autoptr(GPtrArray) names = g_ptr_array_new();
    for (guint i = 0; i < reg->plugins->len; i++) {
        ddm_plugin *p = g_ptr_array_index(reg->plugins, i);
        if (p->status == DDM_PLUGIN_LOADED)
            g_ptr_array_add(names, p->name);
    }
    g_ptr_array_add(names, NULL);
    return join_or((char **)names->pdata, "none");
}

void ddm_registry_check_plugin_opts(DdmRegistry *reg)
{
    g_return_if_fail(reg != NULL);
    const DdmConfig *config = reg->config;
    if (!config || !config->plugin_opts || g_hash_table_size(config->plugin_opts) == 0)
        return;
    /* Sorted "name.key" strings: one pass groups them by plugin, and the
     * warnings come out in a stable order. */
    g_autofree const char **specs =
        (const char **)g_hash_table_get_keys_as_array(config->plugin_opts, NULL);
    guint n = g_strv_length((char **)specs);
    qsort(specs, n, sizeof *specs, cmp_str_ptr);
    g_autofree char *loaded = loaded_plugin_names(reg);
    g_autofree char *prev_name = NULL;
    for (guint i = 0; i < n; i++) {
        const char *dot = strchr(specs[i], '.');
        if (!dot) /* ddm_config_add_plugin_opt never stores one */
            continue;
        g_autofree char *name = g_strndup(specs[i], (gsize)(dot - specs[i]));
        const char *key = dot + 1;
        gboolean first_of_name = g_strcmp0(prev_name, name) != 0;
        g_free(prev_name);
        prev_name = g_strdup(name);
        ddm_plugin *p = ddm_registry_find_plugin(reg, name);
        if (!p) {
            if (first_of_name)
                g_warning("--plugin-opt: no plugin named '%s' is loaded (loaded: %s)", name,
                          loaded);
            continue;
        }
        if (p->status != DDM_PLUGIN_LOADED) {
            if (first_of_name)
                g_message("--plugin-opt: plugin %s is %s, its options are not used", name,
                          ddm_registry_plugin_status_name(p->status));
            continue;
        }
        if (p->options_read && g_hash_table_contains(p->options_read, key))
            continue;
        g_auto(GStrv) reads = ddm_registry_options_read(p);
        g_autofree char *list = join_or(reads, "none");
        g_warning("--plugin-opt %s: plugin %s has no option '%s' (it reads: %s)", specs[i], name,
                  key, list);
    }
}

/* ------------------------------------------------------------- dispatch */

static const char *vm_key(DdmVm *vm)
{
    return vm && vm->info.key ? vm->info.key : "?";
}

static void run_taps(DdmRegistry *reg, DdmVm *vm, const ddm_chunk_info *ci, const uint8_t *data,
                     size_t len)
{
    for (guint i = 0; i < reg->taps->len; i++) {
        DdmChunkReg *t = g_ptr_array_index(reg->taps, i);
        if (t->type == 0 || t->type == ci->type)
            (void)t->fn(t->plugin, vm, ci, data, len, t->ud);
    }
}

static void log_unknown_once(DdmVm *vm, uint32_t type)
{
    char name[5];
    ddm_chunk_name(type, name);
    if (!vm->unknown_logged)
        vm->unknown_logged = g_hash_table_new(g_direct_hash, g_direct_equal);
    if (g_hash_table_contains(vm->unknown_logged, GUINT_TO_POINTER(type))) {
        g_debug("vm %s: no plugin handles chunk %s (ignored)", vm_key(vm), name);
        return;
    }
    if (g_hash_table_size(vm->unknown_logged) >= UNKNOWN_LOGGED_MAX) {
        g_debug("vm %s: no plugin handles chunk %s (ignored; too many unknown types to log)",
                vm_key(vm), name);
        return;
    }
    g_hash_table_add(vm->unknown_logged, GUINT_TO_POINTER(type));
    g_message("vm %s: no plugin handles chunk %s (ignored)", vm_key(vm), name);
}

void ddm_registry_dispatch(DdmRegistry *reg, DdmVm *vm, const ddm_chunk_info *ci,
                           const uint8_t *data, size_t len)
{
    g_return_if_fail(reg != NULL && ddm_vm_is_valid(vm) && ci != NULL);
    g_return_if_fail(data != NULL || len == 0);
    char name[5];
    ddm_chunk_name(ci->type, name);
    if (!data)
        data = (const uint8_t *)""; /* plugins never see NULL */
    if (!ddm_registry_chunk_enabled(reg, ci->type)) {
        g_debug("vm %s: chunk %s disabled by --chunks (dropped)", vm_key(vm), name);
        return;
    }
    run_taps(reg, vm, ci, data, len);
    DdmChunkReg *owner = g_hash_table_lookup(reg->owners, GUINT_TO_POINTER(ci->type));
    if (!owner) {
        log_unknown_once(vm, ci->type);
        return;
    }
    int rc = owner->fn(owner->plugin, vm, ci, data, len, owner->ud);
    if (rc < 0) {
        /* A plugin failing on every chunk must not flood the log. */
        owner->errors++;
        if (owner->errors <= ERROR_LOG_FIRST || owner->errors % ERROR_LOG_EVERY == 0)
            g_message("plugin %s: handling chunk %s (%zu bytes) from vm %s failed: %s (%d)%s",
                      owner->plugin->name, name, len, vm_key(vm), g_strerror(-rc), rc,
                      owner->errors > ERROR_LOG_FIRST ? " (repeated; logging every 1000th)"
                                                      : "");
    }
    else if (rc == DDM_DECLINED)
        g_debug("plugin %s declined chunk %s from vm %s", owner->plugin->name, name, vm_key(vm));
}

void ddm_registry_tap_request(DdmRegistry *reg, DdmVm *vm, const ddm_chunk_info *ci,
                              const uint8_t *data, size_t len)
{
    g_return_if_fail(reg != NULL && ddm_vm_is_valid(vm) && ci != NULL);
    g_return_if_fail(data != NULL || len == 0);
    run_taps(reg, vm, ci, data ? data : (const uint8_t *)"", len);
}

void ddm_registry_vm_event(DdmRegistry *reg, DdmVm *vm, ddm_vm_event ev)
{
    g_return_if_fail(reg != NULL && vm != NULL);
    for (guint i = 0; i < reg->listeners->len; i++) {
        DdmListenerReg *l = g_ptr_array_index(reg->listeners, i);
        if (l->plugin->status == DDM_PLUGIN_LOADED)
            l->fn(l->plugin, vm, ev, l->ud);
    }
    if (ev != DDM_VM_GONE)
        return;
    /* Rule 5: per-VM data goes after every GONE listener has run. */
    if (vm->plugin_data) {
        GHashTableIter it;
        gpointer key, value;
        GSList *doomed = NULL;
        g_hash_table_iter_init(&it, vm->plugin_data);
        while (g_hash_table_iter_next(&it, &key, &value)) {
            g_hash_table_iter_steal(&it);
            doomed = g_slist_prepend(doomed, value);
        }
        for (GSList *l = doomed; l; l = l->next) {
            DdmVmPluginData *d = l->data;
            if (d->data_free)
                d->data_free(d->data);
            g_free(d);
        }
        g_slist_free(doomed);
    }
    if (vm->headlines)
        g_hash_table_remove_all(vm->headlines);
}

/* ------------------------------------------------------------- commands */

gboolean ddm_registry_command_reserved(const char *name)
{
    for (const char *const *r = reserved_commands; *r; r++)
        if (strcmp(*r, name) == 0)
            return TRUE;
    return FALSE;
}

DdmCommandReg *ddm_registry_find_command(DdmRegistry *reg, const char *name)
{
    for (guint i = 0; i < reg->commands->len; i++) {
        DdmCommandReg *c = g_ptr_array_index(reg->commands, i);
        if (strcmp(c->name, name) == 0)
            return c;
    }
    return NULL;
}

static gint cmp_command_info(gconstpointer a, gconstpointer b)
{
    return strcmp(((const DdmCommandInfo *)a)->name, ((const DdmCommandInfo *)b)->name);
}

GArray *ddm_registry_commands(DdmRegistry *reg)
{
    g_return_val_if_fail(reg != NULL, NULL);
    GArray *out = g_array_new(FALSE, TRUE, sizeof(DdmCommandInfo));
    for (guint i = 0; i < reg->commands->len; i++) {
        DdmCommandReg *c = g_ptr_array_index(reg->commands, i);
        DdmCommandInfo info = {c->name, c->usage, c->summary, c->plugin->name};
        g_array_append_val(out, info);
    }
    g_array_sort(out, cmp_command_info);
    return out;
}

gboolean ddm_registry_run_command(DdmRegistry *reg, int argc, const char *const *argv,
                                  DdmCommandDoneFn done, gpointer ud)
{
    return ddm_registry_run_command_in(reg, argc, argv, NULL, done, ud);
}

gboolean ddm_registry_run_command_in(DdmRegistry *reg, int argc, const char *const *argv,
                                     const char *cwd, DdmCommandDoneFn done, gpointer ud)
{
    g_return_val_if_fail(reg != NULL && argc > 0 && argv != NULL && argv[0] != NULL, FALSE);
    g_return_val_if_fail(done != NULL, FALSE);
    DdmCommandReg *c = ddm_registry_find_command(reg, argv[0]);
    if (!c || c->plugin->status != DDM_PLUGIN_LOADED)
        return FALSE;
    ddm_cmd *cmd = g_new0(ddm_cmd, 1);
    cmd->magic = DDM_CMD_MAGIC;
    cmd->serial = ++reg->next_cmd_serial;
    cmd->reg = reg;
    cmd->plugin = c->plugin;
    cmd->name = g_strdup(c->name);
    cmd->done = done;
    cmd->done_ud = ud;
    cmd->cwd = g_strdup(cwd);
    guint serial = cmd->serial;
    g_hash_table_insert(reg->cmds, GUINT_TO_POINTER(serial), cmd);
    int rc = c->fn(c->plugin, cmd, argc, argv, c->ud);
    /* The handler may have finished (and freed) it already. */
    cmd = g_hash_table_lookup(reg->cmds, GUINT_TO_POINTER(serial));
    if (rc < 0 && cmd) {
        g_autofree char *msg = g_strdup_printf("%s: %s", argv[0], g_strerror(-rc));
        ddm_registry_cmd_finish(cmd, DDM_CMD_FAILED, msg);
    } else if (rc < 0) {
        g_debug("plugin %s: command %s returned %d after finishing", c->plugin->name, argv[0], rc);
    }
    return TRUE;
}

void ddm_registry_cmd_finish(ddm_cmd *cmd, ddm_cmd_status status, const char *message)
{
    if (cmd->finished)
        return;
    cmd->finished = TRUE;
    cmd->magic = 0;
    g_hash_table_remove(cmd->reg->cmds, GUINT_TO_POINTER(cmd->serial));
    if (status > DDM_CMD_NOT_FOUND)
        status = DDM_CMD_FAILED;
    cmd->done(status, message, cmd->result, cmd->done_ud);
    if (cmd->result)
        ddm_view_free_detached(cmd->result);
    g_free(cmd->name);
    g_free(cmd->cwd);
    g_free(cmd);
}

/* --------------------------------------------------------------- timers */

void ddm_registry_timer_forget(DdmTimerReg *t)
{
    if (t->reg)
        g_hash_table_remove(t->reg->timers, GUINT_TO_POINTER(t->id));
    t->reg = NULL;
}

/* ---------------------------------------------------------------- views */

DdmRegistry *ddm_registry_for_view(ddm_view *view)
{
    const char *name = ddm_view_name(view);
    const char *key = ddm_view_vm_key(view);
    for (GSList *l = live_registries; l; l = l->next) {
        DdmRegistry *reg = l->data;
        DdmViews *store = ddm_registry_views(reg);
        if (store && ddm_views_lookup(store, name, key) == view)
            return reg;
    }
    return NULL;
}

/* ------------------------------------------------------------- listing */

static char *abi_string(const ddm_plugin *p)
{
    if (p->abi_major == 0 && p->abi_minor == 0)
        return NULL;
    return g_strdup_printf("%u.%u", p->abi_major, p->abi_minor);
}

JsonNode *ddm_registry_plugins_to_json(DdmRegistry *reg)
{
    g_return_val_if_fail(reg != NULL, NULL);
    g_autoptr(JsonBuilder) b = json_builder_new();
    json_builder_begin_array(b);
    for (guint i = 0; i < reg->plugins->len; i++) {
        ddm_plugin *p = g_ptr_array_index(reg->plugins, i);
        g_autofree char *abi = abi_string(p);
        json_builder_begin_object(b);
        json_builder_set_member_name(b, "name");
        json_builder_add_string_value(b, p->name);
        json_builder_set_member_name(b, "version");
        json_builder_add_string_value(b, p->version);
        json_builder_set_member_name(b, "abi");
        json_builder_add_string_value(b, abi);
        json_builder_set_member_name(b, "license");
        json_builder_add_string_value(b, p->license);
        json_builder_set_member_name(b, "summary");
        json_builder_add_string_value(b, p->summary);
        json_builder_set_member_name(b, "file");
        json_builder_add_string_value(b, p->path);
        json_builder_set_member_name(b, "status");
        json_builder_add_string_value(b, ddm_registry_plugin_status_name(p->status));
        json_builder_set_member_name(b, "reason");
        json_builder_add_string_value(b, p->reason);
        json_builder_set_member_name(b, "required");
        json_builder_add_boolean_value(b, p->required);
        json_builder_set_member_name(b, "chunks");
        json_builder_begin_array(b);
        g_autoptr(GArray) types = ddm_registry_owned_types(reg, p);
        for (guint j = 0; j < types->len; j++) {
            char name[5];
            json_builder_add_string_value(b, ddm_chunk_name(g_array_index(types, uint32_t, j), name));
        }
        json_builder_end_array(b);
        json_builder_set_member_name(b, "commands");
        json_builder_begin_array(b);
        for (guint j = 0; j < reg->commands->len; j++) {
            DdmCommandReg *c = g_ptr_array_index(reg->commands, j);
            if (c->plugin == p)
                json_builder_add_string_value(b, c->name);
        }
        json_builder_end_array(b);
        json_builder_set_member_name(b, "options");
        json_builder_begin_array(b);
        g_auto(GStrv) options = ddm_registry_options_read(p);
        for (char **o = options; *o; o++)
            json_builder_add_string_value(b, *o);
        json_builder_end_array(b);
        json_builder_end_object(b);
    }
    json_builder_end_array(b);
    return json_builder_get_root(b);
}

static const char *member_str(JsonObject *o, const char *name)
{
    JsonNode *n = json_object_get_member(o, name);
    if (!n || JSON_NODE_HOLDS_NULL(n) || json_node_get_value_type(n) != G_TYPE_STRING)
        return NULL;
    return json_node_get_string(n);
}

char *ddm_registry_plugins_json_to_text(JsonNode *plugins)
{
    g_return_val_if_fail(plugins != NULL, NULL);
    GString *out = g_string_new(NULL);
    if (!JSON_NODE_HOLDS_ARRAY(plugins))
        return g_string_free(out, FALSE);
    JsonArray *arr = json_node_get_array(plugins);
    guint n = json_array_get_length(arr);
    if (n == 0) {
        g_string_append(out, "no plugins found\n");
        return g_string_free(out, FALSE);
    }
    int w_name = 4, w_ver = 7;
    for (guint i = 0; i < n; i++) {
        JsonObject *o = json_array_get_object_element(arr, i);
        if (!o)
            continue;
        const char *name = member_str(o, "name"), *ver = member_str(o, "version");
        w_name = MAX(w_name, name ? (int)strlen(name) : 0);
        w_ver = MAX(w_ver, ver ? (int)strlen(ver) : 0);
    }
    g_string_append_printf(out, "%-*s  %-*s  %-4s  %-12s  %-8s  %s\n", w_name, "NAME", w_ver,
                           "VERSION", "ABI", "LICENSE", "STATUS", "FILE");
    for (guint i = 0; i < n; i++) {
        JsonObject *o = json_array_get_object_element(arr, i);
        if (!o)
            continue;
        const char *name = member_str(o, "name"), *ver = member_str(o, "version");
        const char *abi = member_str(o, "abi"), *lic = member_str(o, "license");
        const char *st = member_str(o, "status"), *file = member_str(o, "file");
        const char *reason = member_str(o, "reason");
        g_string_append_printf(out, "%-*s  %-*s  %-4s  %-12s  %-8s  %s\n", w_name,
                               name ? name : "?", w_ver, ver ? ver : "-", abi ? abi : "-",
                               lic ? lic : "-", st ? st : "?", file ? file : "-");
        if (reason && *reason)
            g_string_append_printf(out, "%*s  why: %s\n", w_name, "", reason);
        JsonNode *opts_node = json_object_get_member(o, "options");
        JsonArray *opts = opts_node && JSON_NODE_HOLDS_ARRAY(opts_node)
                              ? json_node_get_array(opts_node)
                              : NULL;
        if (opts && json_array_get_length(opts) > 0) {
            GString *line = g_string_new(NULL);
            for (guint j = 0; j < json_array_get_length(opts); j++) {
                JsonNode *e = json_array_get_element(opts, j);
                if (JSON_NODE_HOLDS_VALUE(e) && json_node_get_value_type(e) == G_TYPE_STRING)
                    g_string_append_printf(line, "%s%s", line->len ? ", " : "",
                                           json_node_get_string(e));
            }
            g_string_append_printf(out, "%*s  options: %s\n", w_name, "", line->str);
            g_string_free(line, TRUE);
        }
    }
    return g_string_free(out, FALSE);
}
