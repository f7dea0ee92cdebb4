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
 * A view the maker made (not one the plugin made itself) whose
 * declaration has an unmake (vm_view_unmake) is taken back once nobody
 * has watched it for the linger (DDM_VIEW_UNMAKE_LINGER_MS): the plugin's
 * unmake frees it and the state kept for it, so one snapshot or listing
 * does not bring every VM back to the old cost for good. The made views
 * wait in a FIFO queue (one linger for all, so FIFO is deadline order) and
 * one GLib timeout runs at the head's deadline: a view still watched waits
 * one more linger, and a watch that ends puts the views it counted at the
 * queue's tail (the store's unwatch hook: an index lookup for a watch of
 * one view, a walk of the queue for a wider one), so a view goes a linger
 * after its last watcher; nothing walks every view.
 *
 * Invariants: a declaration belongs to one plugin and goes with it (its
 * ud_free runs in ddm_registry_drop_declared_views_of, before dlclose, and
 * its queued views leave the queue then); the maker calls a plugin only
 * while it is loaded, and only for a DDM VM in state READY whose view of
 * that name does not exist; unmake only for a VM still READY whose view is
 * the one the maker made.
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
    ddm_view_unmake_fn unmake; /* vm_view_unmake's, or NULL: never taken back */
    void *ud;
    ddm_free_fn ud_free;
} DdmViewDecl;

/* A view the maker made, waiting for its linger to end. */
typedef struct MadeView {
    DdmViewDecl *decl; /* borrowed: leaves the queue with it */
    char *vm_key;      /* owned */
    ddm_view *view;    /* compared only: the one the maker made */
    gint64 deadline;   /* monotonic us */
} MadeView;

/* The queue of made views (registry->made_views). */
struct DdmMadeViews {
    GQueue queue;       /* MadeView*, FIFO = deadline order */
    GHashTable *index;  /* "name\nkey" (owned) -> its GList link: one entry a view */
    guint timer;        /* GLib source at the head's deadline, 0: none */
    guint linger_ms;
};

/* The registry's queue, made at the first use. */
static struct DdmMadeViews *made_views_of(DdmRegistry *reg)
{
    if (!reg->made_views) {
        reg->made_views = g_new0(struct DdmMadeViews, 1);
        g_queue_init(&reg->made_views->queue);
        reg->made_views->index = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
        reg->made_views->linger_ms = DDM_VIEW_UNMAKE_LINGER_MS;
    }
    return reg->made_views;
}

static char *made_key(const char *name, const char *vm_key)
{
    return g_strconcat(name, "\n", vm_key, NULL);
}

static void made_free(MadeView *m)
{
    g_free(m->vm_key);
    g_free(m);
}

static void made_arm(DdmRegistry *reg);

/* Drop queued view @link (its index entry too). */
static void made_drop_link(struct DdmMadeViews *mv, GList *link)
{
    MadeView *m = link->data;
    g_autofree char *k = made_key(m->decl->name, m->vm_key);
    g_hash_table_remove(mv->index, k);
    g_queue_delete_link(&mv->queue, link);
    made_free(m);
}

/* Queue @view (of @d, VM @vm_key), made by the maker just now. */
static void made_track(DdmRegistry *reg, DdmViewDecl *d, const char *vm_key, ddm_view *view)
{
    struct DdmMadeViews *mv;
    char *k;
    MadeView *m;

    if (!d->unmake)
        return;
    mv = made_views_of(reg);
    k = made_key(d->name, vm_key);
    if (g_hash_table_contains(mv->index, k)) {
        g_free(k);
        return;
    }
    m = g_new0(MadeView, 1);
    m->decl = d;
    m->vm_key = g_strdup(vm_key);
    m->view = view;
    m->deadline = g_get_monotonic_time() + (gint64)mv->linger_ms * 1000;
    g_queue_push_tail(&mv->queue, m);
    g_hash_table_insert(mv->index, k, g_queue_peek_tail_link(&mv->queue));
    made_arm(reg);
}

/* The linger of the views at the queue's head is over: take back those
 * nobody watches (and nobody watched lately), the rest wait once more. */
static gboolean made_due(gpointer ud)
{
    DdmRegistry *reg = ud;
    struct DdmMadeViews *mv = reg->made_views;
    gint64 now = g_get_monotonic_time();
    gint64 linger_us = (gint64)mv->linger_ms * 1000;
    GList *link;

    mv->timer = 0;
    while ((link = g_queue_peek_head_link(&mv->queue)) &&
           ((MadeView *)link->data)->deadline <= now) {
        MadeView *m = link->data;
        DdmViewDecl *d = m->decl;
        DdmVm *vm;
        if (!reg->views || ddm_views_lookup_made(reg->views, d->name, m->vm_key) != m->view ||
            d->plugin->status != DDM_PLUGIN_LOADED || !reg->monitor ||
            !(vm = ddm_monitor_find_vm(reg->monitor, m->vm_key)) || vm->state != DDM_VM_STATE_READY) {
            made_drop_link(mv, link); /* freed already, or nobody to ask */
            continue;
        }
        if (ddm_views_watches_matching(reg->views, d->name, m->vm_key) > 0) {
            m->deadline = now + linger_us; /* watched: once more */
            g_queue_unlink(&mv->queue, link);
            g_queue_push_tail_link(&mv->queue, link);
            continue;
        }
        made_drop_link(mv, link);
        ddm_vm_ref(vm);
        d->unmake(d->plugin, vm, d->name, d->ud); /* may free the view, make others */
        ddm_vm_unref(vm);
    }
    made_arm(reg);
    return G_SOURCE_REMOVE;
}

/* A timeout at the head's deadline, unless one is set or nothing waits. */
static void made_arm(DdmRegistry *reg)
{
    struct DdmMadeViews *mv = reg->made_views;
    MadeView *head;
    gint64 wait_us;

    if (!mv || mv->timer || !(head = g_queue_peek_head(&mv->queue)))
        return;
    wait_us = head->deadline - g_get_monotonic_time();
    mv->timer = g_timeout_add(wait_us > 0 ? (guint)((wait_us + 999) / 1000) : 0, made_due, reg);
}

/* The store's unwatch hook: a watch of @name (NULL: all) of @vm_key (NULL:
 * all) ended; the queued views it counted wait a whole linger from now. */
void ddm_registry_views_unwatched(DdmViews *store, const char *name, const char *vm_key,
                                  gpointer ud)
{
    DdmRegistry *reg = ud;
    struct DdmMadeViews *mv = reg->made_views;
    gint64 deadline = g_get_monotonic_time() + (gint64)(mv ? mv->linger_ms : 0) * 1000;
    (void)store;
    if (!mv || !mv->queue.head)
        return;
    if (name && vm_key) { /* one view: its entry, if queued */
        g_autofree char *k = made_key(name, vm_key);
        GList *link = g_hash_table_lookup(mv->index, k);
        if (link) {
            ((MadeView *)link->data)->deadline = deadline;
            g_queue_unlink(&mv->queue, link);
            g_queue_push_tail_link(&mv->queue, link);
        }
        return;
    }
    /* a wider watch (a name of every VM, a VM's every view, everything):
     * one walk of the queue, in order, each match to the tail once */
    GList *tail = mv->queue.tail;
    for (GList *l = mv->queue.head, *next; l; l = next) {
        MadeView *m = l->data;
        gboolean last = l == tail;
        next = l->next;
        if ((!name || strcmp(name, m->decl->name) == 0) &&
            (!vm_key || strcmp(vm_key, m->vm_key) == 0)) {
            m->deadline = deadline;
            g_queue_unlink(&mv->queue, l);
            g_queue_push_tail_link(&mv->queue, l);
        }
        if (last)
            break;
    }
}

void ddm_registry_set_view_linger_ms(DdmRegistry *reg, guint ms)
{
    made_views_of(reg)->linger_ms = ms; /* views queued before keep their deadlines */
}

void ddm_registry_made_views_vm_gone(DdmRegistry *reg, const char *vm_key)
{
    struct DdmMadeViews *mv = reg->made_views;
    /* one lookup per declaration (a few dozen), not a walk of the queue */
    for (guint i = 0; mv && vm_key && reg->declared_views && i < reg->declared_views->len; i++) {
        DdmViewDecl *d = g_ptr_array_index(reg->declared_views, i);
        g_autofree char *k = made_key(d->name, vm_key);
        GList *link = g_hash_table_lookup(mv->index, k);
        if (link)
            made_drop_link(mv, link);
    }
}

guint ddm_registry_n_made_views(DdmRegistry *reg)
{
    return reg->made_views ? reg->made_views->queue.length : 0;
}

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
    DdmRegistry *reg = d->plugin->registry;
    /* The plugin's declared views of @vm not made yet: a make may make
     * several (heap makes all six), and each is the maker's to take back. */
    g_autoptr(GPtrArray) before = g_ptr_array_new();
    for (guint i = 0; reg && reg->declared_views && i < reg->declared_views->len; i++) {
        DdmViewDecl *o = g_ptr_array_index(reg->declared_views, i);
        if (o->plugin == d->plugin && o->unmake &&
            !ddm_views_lookup_made(store, o->name, vm->info.key))
            g_ptr_array_add(before, o);
    }
    d->make(d->plugin, vm, d->name, d->ud);
    for (guint i = 0; i < before->len; i++) {
        DdmViewDecl *o = g_ptr_array_index(before, i);
        ddm_view *v = ddm_views_lookup_made(store, o->name, vm->info.key);
        if (v)
            made_track(reg, o, vm->info.key, v);
    }
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

int ddm_registry_vm_view_unmake(ddm_plugin *self, const char *name, ddm_view_unmake_fn unmake)
{
    DdmRegistry *reg;

    if (!ddm_plugin_is_valid(self) || !self->registry)
        return -EINVAL;
    reg = self->registry;
    if (!unmake || !name)
        return -EINVAL;
    if (!ddm_registry_may_register(self, "vm_view_unmake"))
        return -EPERM;
    for (guint i = 0; reg->declared_views && i < reg->declared_views->len; i++) {
        DdmViewDecl *d = g_ptr_array_index(reg->declared_views, i);
        if (d->plugin == self && strcmp(d->name, name) == 0) {
            if (d->unmake)
                return -EEXIST;
            d->unmake = unmake;
            return 0;
        }
    }
    return -EINVAL; /* not declared by this plugin */
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
    /* its queued views first (a plugin unloads rarely: one walk) */
    for (GList *l = reg->made_views ? reg->made_views->queue.head : NULL, *next; l; l = next) {
        next = l->next;
        if (((MadeView *)l->data)->decl->plugin == p)
            made_drop_link(reg->made_views, l);
    }
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
    if (reg->made_views) {
        struct DdmMadeViews *mv = reg->made_views;
        while (mv->queue.head)
            made_drop_link(mv, mv->queue.head);
        if (mv->timer)
            g_source_remove(mv->timer);
        g_hash_table_unref(mv->index);
        g_free(mv);
        reg->made_views = NULL;
    }
    if (!reg->declared_views)
        return;
    g_assert(reg->declared_views->len == 0); /* every plugin unloaded first */
    g_ptr_array_unref(reg->declared_views);
    reg->declared_views = NULL;
}
