/* SPDX-License-Identifier: Apache-2.0
 *
 * Views plugins declare and the core makes on demand (plugin ABI 1.6,
 * ddm_host.vm_view_declare): a plugin names the per-VM views it makes, and
 * makes one for a VM only when it has something to show or when somebody
 * asks for it. This file keeps the declarations and is the view store's
 * maker (ddm_views_set_maker): before the store answers a lookup, a list or
 * a watch, it asks here, and the declaring plugins' make callbacks make the
 * views asked for that are not made yet. A VM that becomes ready while a
 * watch would count one of its declared views gets that view at once, so
 * the plugin sees its watcher at its next look.
 *
 * Why: an idle VM nobody looks at held some fifteen plugin views (a handle,
 * a store slot, a content and its strings each), about 3 KB of its heap
 * (doc/memory.md, issue 16).
 *
 * The core's own per-VM "metrics" view (registry_metrics.c) and
 * "headline" view (registry_headline.c) are made the same way: from the
 * VM's samples or figures, when somebody asks for it.
 *
 * Invariants: a declaration belongs to one plugin and goes with it (its
 * ud_free runs in ddm_registry_drop_declared_views_of, before dlclose); the
 * maker calls a plugin only while it is loaded, and only for a DDM VM in
 * state READY whose view of that name does not exist.
 */
#undef G_LOG_DOMAIN
#define G_LOG_DOMAIN "ddmon-registry"

#include <errno.h>
#include <string.h>

#include "core/pluginhost/registry-private.h"
#include "core/session/monitor.h"
#include "core/session/vm.h"
#include "core/views/views.h"

typedef struct DdmViewDecl {
    ddm_plugin *plugin;
    char *name;
    ddm_view_make_fn make;
    void *ud;
    ddm_free_fn ud_free;
} DdmViewDecl;

static void decl_free(DdmViewDecl *d)
{
    if (d->ud_free)
        d->ud_free(d->ud);
    g_free(d->name);
    g_free(d);
}

/* Make @d's view of @vm unless it exists or nobody may make it now. */
static void make_one(DdmViews *store, DdmViewDecl *d, DdmVm *vm)
{
    if (!ddm_vm_is_valid(vm) || vm->state != DDM_VM_STATE_READY || !vm->info.key)
        return;
    if (d->plugin->status != DDM_PLUGIN_LOADED || !d->make)
        return;
    if (ddm_views_lookup_made(store, d->name, vm->info.key))
        return;
    d->make(d->plugin, vm, d->name, d->ud);
}

/* The store's maker: the declared views named @name (NULL: all) of VM
 * @vm_key (NULL: all), and the core's own "metrics" view of a VM
 * (registry_metrics.c) and "headline" view (registry_headline.c). */
void ddm_registry_make_views(DdmViews *store, const char *name, const char *vm_key, gpointer ud)
{
    DdmRegistry *reg = ud;
    g_autoptr(GPtrArray) decls = g_ptr_array_new();
    g_autoptr(GPtrArray) vms = NULL;
    gboolean metrics = !name || strcmp(name, DDM_METRICS_VM_VIEW) == 0;
    gboolean headline = !name || strcmp(name, DDM_HEADLINE_VIEW) == 0;

    if (!reg->monitor)
        return;
    for (guint i = 0; reg->declared_views && i < reg->declared_views->len; i++) {
        DdmViewDecl *d = g_ptr_array_index(reg->declared_views, i);
        if (!name || strcmp(d->name, name) == 0)
            g_ptr_array_add(decls, d);
    }
    if (decls->len == 0 && !metrics && !headline)
        return; /* a name nobody declared (the core's other views): nothing per VM */
    if (vm_key) {
        DdmVm *vm = ddm_monitor_find_vm(reg->monitor, vm_key);
        if (!vm)
            return;
        vms = g_ptr_array_new_with_free_func((GDestroyNotify)ddm_vm_unref);
        g_ptr_array_add(vms, ddm_vm_ref(vm));
    } else {
        vms = ddm_registry_list_vms(reg); /* a reference each: a make may close a VM */
    }
    for (guint i = 0; i < vms->len; i++) {
        for (guint j = 0; j < decls->len; j++)
            make_one(store, g_ptr_array_index(decls, j), g_ptr_array_index(vms, i));
        if (metrics)
            ddm_registry_metrics_make_view(reg, g_ptr_array_index(vms, i));
        if (headline)
            ddm_registry_headline_make_view(reg, g_ptr_array_index(vms, i));
    }
}

/* Would make_one make @d's view of @vm (made or not)? */
static gboolean would_make(const DdmViewDecl *d, DdmVm *vm)
{
    if (d->plugin->status != DDM_PLUGIN_LOADED || !d->make)
        return FALSE;
    return !vm || (ddm_vm_is_valid(vm) && vm->state == DDM_VM_STATE_READY && vm->info.key);
}

/* The store's namer: the names of the views the maker makes for VM
 * @vm_key (NULL: any VM), from the declarations, none made: an error
 * message's list of a mistyped name's alternatives costs no view. The
 * core's "metrics" and "headline" views are named where the VM has them
 * (its samples or figures). */
void ddm_registry_name_views(DdmViews *store, const char *vm_key, GHashTable *names, gpointer ud)
{
    DdmRegistry *reg = ud;
    DdmVm *vm = NULL;

    (void)store;
    if (!reg->monitor)
        return;
    if (vm_key && !(vm = ddm_monitor_find_vm(reg->monitor, vm_key)))
        return;
    for (guint i = 0; reg->declared_views && i < reg->declared_views->len; i++) {
        DdmViewDecl *d = g_ptr_array_index(reg->declared_views, i);
        if (would_make(d, vm))
            g_hash_table_add(names, g_strdup(d->name));
    }
    if (vm && vm->state != DDM_VM_STATE_CLOSED && vm->target) {
        if (vm->metrics_set)
            g_hash_table_add(names, g_strdup(DDM_METRICS_VM_VIEW));
        if (vm->headline_set)
            g_hash_table_add(names, g_strdup(DDM_HEADLINE_VIEW));
    }
}

int ddm_registry_vm_view_declare(ddm_plugin *self, const char *name, ddm_view_make_fn make,
                                 void *ud, ddm_free_fn ud_free)
{
    DdmRegistry *reg;
    DdmViewDecl *d;

    if (!ddm_plugin_is_valid(self) || !self->registry) {
        if (ud_free)
            ud_free(ud); /* rule 3: the ud is the core's from the call on */
        return -EINVAL;
    }
    reg = self->registry;
    /* As every register_* call: bad arguments -EINVAL, outside init -EPERM. */
    if (!make || !name || !*name || strlen(name) > DDM_VIEW_MAX_STRING ||
        !g_utf8_validate(name, -1, NULL)) {
        if (ud_free)
            ud_free(ud);
        return -EINVAL;
    }
    if (!ddm_registry_may_register(self, "vm_view_declare")) {
        if (ud_free)
            ud_free(ud);
        return -EPERM;
    }
    for (guint i = 0; reg->declared_views && i < reg->declared_views->len; i++) {
        DdmViewDecl *o = g_ptr_array_index(reg->declared_views, i);
        if (o->plugin == self && strcmp(o->name, name) == 0) {
            if (ud_free)
                ud_free(ud);
            return -EEXIST;
        }
    }
    d = g_new0(DdmViewDecl, 1);
    d->plugin = self;
    d->name = g_strdup(name);
    d->make = make;
    d->ud = ud;
    d->ud_free = ud_free;
    if (!reg->declared_views)
        reg->declared_views = g_ptr_array_new();
    g_ptr_array_add(reg->declared_views, d);
    return 0;
}

void ddm_registry_declared_views_ready(DdmRegistry *reg, DdmVm *vm)
{
    if (!reg->declared_views || !reg->views || !ddm_vm_is_valid(vm) || !vm->info.key)
        return;
    for (guint i = 0; i < reg->declared_views->len; i++) {
        DdmViewDecl *d = g_ptr_array_index(reg->declared_views, i);
        if (ddm_views_watches_matching(reg->views, d->name, vm->info.key) > 0)
            make_one(reg->views, d, vm);
    }
}

guint ddm_registry_count_declared_views(DdmRegistry *reg, ddm_plugin *p)
{
    guint n = 0;
    for (guint i = 0; reg->declared_views && i < reg->declared_views->len; i++)
        n += ((DdmViewDecl *)g_ptr_array_index(reg->declared_views, i))->plugin == p;
    return n;
}

void ddm_registry_drop_declared_views_of(DdmRegistry *reg, ddm_plugin *p)
{
    for (guint i = 0; reg->declared_views && i < reg->declared_views->len;) {
        DdmViewDecl *d = g_ptr_array_index(reg->declared_views, i);
        if (d->plugin == p) {
            g_ptr_array_remove_index(reg->declared_views, i);
            decl_free(d);
        } else {
            i++;
        }
    }
}

void ddm_registry_declared_views_free(DdmRegistry *reg)
{
    if (reg->views)
        ddm_views_remove_maker(reg->views, reg);
    if (!reg->declared_views)
        return;
    g_assert(reg->declared_views->len == 0); /* every plugin unloaded first */
    g_ptr_array_unref(reg->declared_views);
    reg->declared_views = NULL;
}
