/* SPDX-License-Identifier: Apache-2.0
 *
 * TEMPORARY stand-ins for the parts of the core the plugin host calls but
 * does not own (config.c, views.c, vm.c, monitor.c), linked only into
 * test-loader and test-registry until the real files land; then this file
 * is deleted and the tests link core/libddmcore.la.
 *
 * The view store here keeps names, owners and kinds only (no content);
 * ddm_vm_request records the last call and answers 0 without sending.
 */
#include <config.h>

#include <errno.h>
#include <string.h>

#include "../../core/config.h"
#include "../../core/monitor.h"
#include "../../core/views.h"
#include "../../core/vm.h"
#include "pluginhost-stubs.h"

/* ---------------------------------------------------------------- config */

DdmConfig *ddm_config_new(void)
{
    DdmConfig *c = g_new0(DdmConfig, 1);
    c->use_env_plugin_path = TRUE;
    c->plugin_dirs = g_ptr_array_new_with_free_func(g_free);
    c->plugins_only = g_ptr_array_new_with_free_func(g_free);
    c->plugins_disabled = g_ptr_array_new_with_free_func(g_free);
    c->plugin_opts = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, g_free);
    c->request_timeout_ms = 10000;
    return c;
}

void ddm_config_free(DdmConfig *c)
{
    if (!c)
        return;
    g_ptr_array_unref(c->plugin_dirs);
    g_ptr_array_unref(c->plugins_only);
    g_ptr_array_unref(c->plugins_disabled);
    if (c->chunks)
        g_ptr_array_unref(c->chunks);
    g_hash_table_unref(c->plugin_opts);
    g_free(c->installed_plugin_dir);
    g_free(c);
}

/* ----------------------------------------------------------------- views */

struct ddm_view {
    uint32_t magic;
    char *owner, *vm_key, *name, *title;
    ddm_view_kind kind;
    gboolean detached;
};

struct DdmViews {
    GPtrArray *views;
};

static void stub_view_free(ddm_view *v)
{
    v->magic = 0;
    g_free(v->owner);
    g_free(v->vm_key);
    g_free(v->name);
    g_free(v->title);
    g_free(v);
}

DdmViews *ddm_views_new(void)
{
    DdmViews *s = g_new0(DdmViews, 1);
    s->views = g_ptr_array_new_with_free_func((GDestroyNotify)stub_view_free);
    return s;
}

void ddm_views_free(DdmViews *store)
{
    if (!store)
        return;
    g_ptr_array_unref(store->views);
    g_free(store);
}

ddm_view *ddm_views_lookup(DdmViews *store, const char *name, const char *vm_key)
{
    for (guint i = 0; i < store->views->len; i++) {
        ddm_view *v = g_ptr_array_index(store->views, i);
        if (strcmp(v->name, name) == 0 && g_strcmp0(v->vm_key, vm_key) == 0)
            return v;
    }
    return NULL;
}

static ddm_view *stub_view_new(const char *owner, const char *vm_key, const char *name,
                               ddm_view_kind kind, const char *title)
{
    ddm_view *v = g_new0(ddm_view, 1);
    v->magic = DDM_VIEW_MAGIC;
    v->owner = g_strdup(owner);
    v->vm_key = g_strdup(vm_key);
    v->name = g_strdup(name);
    v->title = g_strdup(title);
    v->kind = kind;
    return v;
}

ddm_view *ddm_views_create(DdmViews *store, const char *owner, const char *vm_key,
                           const char *name, ddm_view_kind kind, const char *title)
{
    if (ddm_views_lookup(store, name, vm_key))
        return NULL;
    ddm_view *v = stub_view_new(owner, vm_key, name, kind, title);
    g_ptr_array_add(store->views, v);
    return v;
}

ddm_view *ddm_view_new_detached(const char *owner, const char *name, ddm_view_kind kind,
                                const char *title)
{
    ddm_view *v = stub_view_new(owner, NULL, name, kind, title);
    v->detached = TRUE;
    return v;
}

void ddm_view_free_detached(ddm_view *view)
{
    g_assert(view->detached);
    stub_view_free(view);
}

void ddm_views_destroy(DdmViews *store, ddm_view *view)
{
    g_assert(g_ptr_array_remove(store->views, view));
}

void ddm_views_destroy_vm(DdmViews *store, const char *vm_key)
{
    for (guint i = store->views->len; i > 0; i--) {
        ddm_view *v = g_ptr_array_index(store->views, i - 1);
        if (g_strcmp0(v->vm_key, vm_key) == 0)
            g_ptr_array_remove_index(store->views, i - 1);
    }
}

void ddm_views_destroy_owner(DdmViews *store, const char *owner)
{
    for (guint i = store->views->len; i > 0; i--) {
        ddm_view *v = g_ptr_array_index(store->views, i - 1);
        if (g_strcmp0(v->owner, owner) == 0)
            g_ptr_array_remove_index(store->views, i - 1);
    }
}

GPtrArray *ddm_views_list(DdmViews *store)
{
    GPtrArray *out = g_ptr_array_new();
    for (guint i = 0; i < store->views->len; i++)
        g_ptr_array_add(out, g_ptr_array_index(store->views, i));
    return out;
}

const char *ddm_view_name(const ddm_view *v)
{
    return v->name;
}

const char *ddm_view_vm_key(const ddm_view *v)
{
    return v->vm_key;
}

const char *ddm_view_owner(const ddm_view *v)
{
    return v->owner;
}

ddm_view_kind ddm_view_kind_of(const ddm_view *v)
{
    return v->kind;
}

gboolean ddm_view_is_valid(const ddm_view *v)
{
    return v != NULL && v->magic == DDM_VIEW_MAGIC;
}

int ddm_view_watchers(const ddm_view *v)
{
    return 0;
}

int ddm_view_set_columns(ddm_view *v, const ddm_column *cols, size_t n)
{
    return v->kind == DDM_VIEW_TABLE ? 0 : -EINVAL;
}

int ddm_view_begin(ddm_view *v)
{
    return 0;
}

int ddm_view_row(ddm_view *v)
{
    return v->kind == DDM_VIEW_TABLE ? 0 : -EINVAL;
}

int ddm_view_cell_str(ddm_view *v, const char *s)
{
    return 0;
}

int ddm_view_cell_int(ddm_view *v, int64_t x)
{
    return 0;
}

int ddm_view_cell_double(ddm_view *v, double x)
{
    return 0;
}

int ddm_view_cell_bool(ddm_view *v, int b)
{
    return 0;
}

int ddm_view_field_str(ddm_view *v, const char *key, const char *s)
{
    return v->kind == DDM_VIEW_RECORD ? 0 : -EINVAL;
}

int ddm_view_field_int(ddm_view *v, const char *key, int64_t x)
{
    return v->kind == DDM_VIEW_RECORD ? 0 : -EINVAL;
}

int ddm_view_field_double(ddm_view *v, const char *key, double x)
{
    return v->kind == DDM_VIEW_RECORD ? 0 : -EINVAL;
}

int ddm_view_field_bool(ddm_view *v, const char *key, int b)
{
    return v->kind == DDM_VIEW_RECORD ? 0 : -EINVAL;
}

int ddm_view_blob(ddm_view *v, const char *media_type, const void *data, size_t len)
{
    return v->kind == DDM_VIEW_BLOB ? 0 : -EINVAL;
}

int ddm_view_commit(ddm_view *v)
{
    return 0;
}

/* -------------------------------------------------------------------- vm */

DdmStubRequest ddm_stub_last_request;

int ddm_vm_request(DdmVm *vm, gpointer owner, uint32_t type, const void *data, size_t len,
                   unsigned timeout_ms, ddm_reply_fn fn, gpointer ud, uint32_t *id_out)
{
    ddm_stub_last_request.calls++;
    ddm_stub_last_request.owner = owner;
    ddm_stub_last_request.type = type;
    if (id_out)
        *id_out = 0x40000000u + ddm_stub_last_request.calls;
    return 0;
}

void ddm_vm_set_name(DdmVm *vm, const char *app_name, const char *package_name, int32_t user_id)
{
}

void ddm_vm_cancel_owner(DdmVm *vm, gpointer owner)
{
    ddm_stub_last_request.cancelled++;
}

/* --------------------------------------------------------------- monitor */

guint ddm_stub_headline_changes;

DdmVm *ddm_monitor_resolve_vm(DdmMonitor *mon, const char *spec)
{
    return mon->vms ? g_hash_table_lookup(mon->vms, spec) : NULL;
}

void ddm_monitor_vm_headline_changed(DdmMonitor *mon, DdmVm *vm)
{
    ddm_stub_headline_changes++;
}
