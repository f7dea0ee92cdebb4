/* SPDX-License-Identifier: Apache-2.0
 *
 * The plugin registry's records and their life cycle (registry-private.h):
 * creating and freeing the registry, plugin records, init, unload and the
 * rollback of everything a plugin registered, the timer table and the link
 * from a view back to its registry. The other concepts live beside it:
 * the chunk filter and dispatch (registry_dispatch.c), user commands
 * (registry_commands.c), plugin options (registry_options.c) and listing
 * plugins (registry_list.c).
 *
 * Invariants:
 *  - Every registration names its plugin; ddm_registry_init_plugin undoes
 *    all of them when init fails or a chunk type conflicts, before dlclose
 *    (each ud_free is plugin code).
 *  - A plugin's commands in flight end (as FAILED) when it is unloaded.
 * Non-goals: finding or validating plugin files (loader.c), the host table
 * itself (host.c), sending anything to a VM (core/session).
 */
#include "build-config.h" /* autoconf; core/config/config.h is the runtime DdmConfig */

/* One library, several components: each file names its own log domain. */
#undef G_LOG_DOMAIN
#define G_LOG_DOMAIN "ddmon-registry"

#include <string.h>
#include <dlfcn.h>

#include "core/pluginhost/loader.h"
#include "core/session/monitor.h"
#include "core/pluginhost/registry-private.h"
#include "core/views/views.h"

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

/* The views store's watch generation moved. */
static void registry_watch_gen_moved(DdmViews *store, gpointer ud)
{
    (void)store;
    (void)ddm_registry_wake_sleeping_timers(ud);
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
    reg->stoppers = g_ptr_array_new();
    reg->commands = g_ptr_array_new();
    reg->timers = g_hash_table_new(g_direct_hash, g_direct_equal);
    reg->cmds = g_hash_table_new(g_direct_hash, g_direct_equal);
    ddm_host_init(&reg->host);
    if (views) { /* registry_views.c: views made when somebody asks for them */
        ddm_views_set_maker(views, ddm_registry_make_views, reg);
        ddm_views_set_namer(views, ddm_registry_name_views, reg);
        ddm_views_set_unwatched(views, ddm_registry_views_unwatched, reg);
        /* host.c: the timers that sleep (ABI 1.7) wake when the watches move */
        ddm_views_set_watch_gen_hook(views, registry_watch_gen_moved, reg);
    }
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
    g_assert(reg->stoppers->len == 0);
    g_assert(g_hash_table_size(reg->timers) == 0 && g_hash_table_size(reg->cmds) == 0);
    live_registries = g_slist_remove(live_registries, reg);
    g_hash_table_unref(reg->owners);
    g_ptr_array_unref(reg->taps);
    g_ptr_array_unref(reg->listeners);
    g_ptr_array_unref(reg->stoppers);
    g_ptr_array_unref(reg->commands);
    g_hash_table_unref(reg->timers);
    g_hash_table_unref(reg->cmds);
    ddm_registry_metrics_free(reg);
    ddm_registry_declared_views_free(reg);
    ddm_registry_first_look_free(reg);
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
        DdmVmPluginData *d = ddm_vm_plugin_data_take(vm, p);
        if (!d)
            continue;
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
    /* 4. Timers (their ud_free runs now, or after their running callback). */
    {
        GList *timers = g_hash_table_get_values(reg->timers);
        for (GList *l = timers; l; l = l->next) {
            DdmTimerReg *t = l->data;
            if (t->plugin == p)
                ddm_registry_timer_drop(t);
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
    for (guint i = 0; i < reg->stoppers->len;) {
        DdmListenerReg *r = g_ptr_array_index(reg->stoppers, i);
        if (r->plugin == p) {
            g_ptr_array_remove_index(reg->stoppers, i);
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
    ddm_registry_drop_metrics_of(reg, p);
    ddm_registry_drop_declared_views_of(reg, p); /* before its views: none is made again */
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
    for (guint i = 0; i < reg->stoppers->len; i++)
        n += ((DdmListenerReg *)g_ptr_array_index(reg->stoppers, i))->plugin == p;
    for (guint i = 0; i < reg->commands->len; i++)
        n += ((DdmCommandReg *)g_ptr_array_index(reg->commands, i))->plugin == p;
    g_hash_table_iter_init(&it, reg->timers);
    while (g_hash_table_iter_next(&it, &key, &value))
        n += ((DdmTimerReg *)value)->plugin == p;
    g_hash_table_iter_init(&it, reg->cmds);
    while (g_hash_table_iter_next(&it, &key, &value))
        n += ((ddm_cmd *)value)->plugin == p;
    if (ddm_registry_views(reg)) {
        /* what exists: counting makes no declared view */
        g_autoptr(GPtrArray) views = ddm_views_list_made(ddm_registry_views(reg));
        for (guint i = 0; i < views->len; i++) {
            const char *owner = ddm_view_owner(g_ptr_array_index(views, i));
            n += owner && strcmp(owner, p->name) == 0;
        }
    }
    g_autoptr(GPtrArray) vms = ddm_registry_list_vms(reg);
    for (guint i = 0; i < vms->len; i++) {
        DdmVm *vm = g_ptr_array_index(vms, i);
        n += ddm_vm_plugin_data_find(vm, p) != NULL;
    }
    n += p->data != NULL;
    n += ddm_registry_count_declared_views(reg, p);
    return n;
}

gboolean ddm_registry_may_register(ddm_plugin *p, const char *what)
{
    if (p->in_init)
        return TRUE;
    g_warning("plugin %s: %s outside init refused (register everything in init)", p->name, what);
    return FALSE;
}

/* --------------------------------------------------------------- timers */

void ddm_registry_timer_drop(DdmTimerReg *t)
{
    ddm_registry_timer_forget_wake(t);
    if (t->reg)
        g_hash_table_remove(t->reg->timers, GUINT_TO_POINTER(t->id));
    t->reg = NULL;
    ddm_timer_cancel(&t->timer);
    if (t->firing) {
        t->dropped = TRUE; /* host.c's timer_fire frees it */
        return;
    }
    if (t->ud_free)
        t->ud_free(t->ud);
    g_free(t);
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
