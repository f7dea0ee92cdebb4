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
 * Every view of a declared name that has an unmake (vm_view_unmake), made
 * by whatever path (the maker, or the plugin itself when data came), is
 * taken back once nobody has watched it for the linger
 * (DDM_VIEW_UNMAKE_LINGER_MS): the plugin's unmake frees it and the state
 * kept for it, so one snapshot or listing does not bring every VM back to
 * the old cost for good. The store's listener sees every such view ADDED
 * and REMOVED, so a queue entry lives exactly as long as its view: it is
 * keyed by the view, never outlives it, and cannot stand for a newer view
 * made at the same address. The entries wait in a FIFO queue (one linger
 * for all, so FIFO is deadline order) and one GLib timeout runs at the
 * head's deadline, taking at most MADE_DUE_BATCH entries a dispatch (then
 * it runs again at once): a view still watched waits one more linger; one
 * whose watch of that very view ended lately was put at the tail then (the
 * store's unwatch hook, one index lookup); for wider watches (a name of
 * every VM, a VM's every view, everything) the hook only notes when such a
 * watch ended, and a due entry waits on until a linger after the latest
 * that counted it (two hash lookups); nothing walks the queue or every
 * view. An unmake the plugin declines (the view is still there) is asked
 * again later and later: 2, 4, 8... lingers after, at most
 * 2^MADE_BACKOFF_LEVELS lingers apart (5 min 20 s with the linger of 10 s),
 * for as long as the view lives; the end of a watch of that very view asks
 * again a linger later. The entry stays, so a wider watch's end counts for
 * it too. Each delay has its own FIFO queue (one delay for all its entries:
 * FIFO is deadline order), MADE_BACKOFF_LEVELS + 1 queues in all.
 *
 * Invariants: a declaration belongs to one plugin and goes with it (its
 * ud_free runs in ddm_registry_drop_declared_views_of, before dlclose, and
 * its queued views leave the queue then); the maker calls a plugin only
 * while it is loaded, and only for a DDM VM in state READY whose view of
 * that name does not exist; unmake only for a VM still READY.
 */
#undef G_LOG_DOMAIN
#define G_LOG_DOMAIN "ddmon-registry"

#include <errno.h>
#include <string.h>

#include "core/pluginhost/registry-private.h"
#include "core/session/monitor.h"
#include "core/session/vm.h"
#include "core/views/views.h"

/* Entries one dispatch of the queue's timer looks at, at most: ~100,000
 * views made by one 'ddmon views' at 10,000 VMs go in batches, the loop
 * serving everything else in between. */
#define MADE_DUE_BATCH 256u
/* An unmake the plugin declined n times in a row is asked again
 * 2^min(n, MADE_BACKOFF_LEVELS) lingers later: a plugin that keeps its view
 * is asked every 5 min 20 s at most, not every 10 s, and never given up on
 * while the view lives. */
#define MADE_BACKOFF_LEVELS 5u

typedef struct DdmViewDecl {
    ddm_plugin *plugin;
    char *name;
    ddm_view_make_fn make;
    ddm_view_unmake_fn unmake; /* vm_view_unmake's, or NULL: never taken back */
    void *ud;
    ddm_free_fn ud_free;
} DdmViewDecl;

/* A view of a declared name with an unmake, waiting for its linger to end. */
typedef struct MadeView {
    DdmViewDecl *decl; /* borrowed: leaves the queue with it */
    ddm_view *view;    /* the index's key: the entry goes at its REMOVED */
    GList link;        /* in a queue, or unlinked while its unmake runs */
    gint64 deadline;   /* monotonic us */
    guint declines;    /* unmakes the plugin declined in a row */
    guint level;       /* its queue: 0 a linger, n 2^n lingers (a declined unmake's) */
} MadeView;

/* The queue of made views (registry->made_views). */
struct DdmMadeViews {
    GQueue queue[MADE_BACKOFF_LEVELS + 1]; /* MadeView* (their own links) waiting
                            2^level lingers; each FIFO = deadline order */
    guint queued;        /* entries in all the queues */
    GHashTable *index;   /* ddm_view* -> MadeView* (owned): one entry a view */
    GHashTable *name_ends; /* name (owned) -> gint64* (owned): when a watch of that name
                              of every VM last ended; declared names with an unmake only */
    GHashTable *vm_ends; /* VM key (owned) -> gint64*: a watch of a VM's every view */
    gint64 all_end;      /* when a watch of every view last ended, 0: none */
    guint vm_ends_prune_at; /* vm_ends' size that makes a dispatch drop the stale */
    MadeView *asking;    /* whose unmake runs now; NULL once its view went */
    guint listener;      /* the store's listener id */
    guint timer;         /* GLib source at the head's deadline, 0: none */
    gint64 timer_deadline; /* the deadline it was set for (monotonic us) */
    guint linger_ms;
    gint64 (*now)(void); /* g_get_monotonic_time; tests set their own */
};

static void made_listen(ddm_view *view, DdmViewChange change, gpointer ud);

/* The registry's queue, made at the first vm_view_unmake. */
static struct DdmMadeViews *made_views_of(DdmRegistry *reg)
{
    if (!reg->made_views) {
        struct DdmMadeViews *mv = g_new0(struct DdmMadeViews, 1);
        for (guint i = 0; i <= MADE_BACKOFF_LEVELS; i++)
            g_queue_init(&mv->queue[i]);
        mv->index = g_hash_table_new_full(g_direct_hash, g_direct_equal, NULL, g_free);
        mv->name_ends = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, g_free);
        mv->vm_ends = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, g_free);
        mv->vm_ends_prune_at = 64;
        mv->linger_ms = DDM_VIEW_UNMAKE_LINGER_MS;
        mv->now = g_get_monotonic_time;
        reg->made_views = mv;
        if (reg->views)
            mv->listener = ddm_views_add_listener(reg->views, made_listen, reg);
    }
    return reg->made_views;
}

static gint64 linger_us(const struct DdmMadeViews *mv)
{
    return (gint64)mv->linger_ms * 1000;
}

static void made_arm(DdmRegistry *reg);

/* The wide watches' notes matter only to entries queued before they were
 * made (a later entry's deadline is later anyway): none without entries. */
static void made_forget_ends(struct DdmMadeViews *mv)
{
    g_hash_table_remove_all(mv->name_ends);
    g_hash_table_remove_all(mv->vm_ends);
    mv->all_end = 0;
    mv->vm_ends_prune_at = 64;
}

/* Drop entry @m (queued, or unlinked while its unmake runs). */
static void made_drop(struct DdmMadeViews *mv, MadeView *m)
{
    if (m->link.data) { /* queued */
        g_queue_unlink(&mv->queue[m->level], &m->link);
        mv->queued--;
    }
    if (mv->asking == m)
        mv->asking = NULL;
    g_hash_table_remove(mv->index, m->view); /* frees m */
    if (mv->queued == 0 && !mv->asking)
        made_forget_ends(mv);
}

/* Take @m out of its queue (its unmake runs, or it moves); made_push puts
 * it back. */
static void made_unlink(struct DdmMadeViews *mv, MadeView *m)
{
    g_queue_unlink(&mv->queue[m->level], &m->link);
    m->link.data = NULL;
    mv->queued--;
}

/* Put @m at the tail of queue @level, due at @deadline (never before the
 * tail's: each queue stays in deadline order). The caller gives a deadline
 * of now + that queue's delay, or earlier. */
static void made_push(struct DdmMadeViews *mv, MadeView *m, guint level, gint64 deadline)
{
    MadeView *tail;
    if (m->link.data)
        made_unlink(mv, m);
    m->level = level;
    tail = g_queue_peek_tail(&mv->queue[level]);
    m->deadline = tail && tail->deadline > deadline ? tail->deadline : deadline;
    m->link.data = m;
    g_queue_push_tail_link(&mv->queue[level], &m->link);
    mv->queued++;
}

/* The queued entry due first, or NULL. */
static MadeView *made_head(struct DdmMadeViews *mv)
{
    MadeView *best = NULL;
    for (guint i = 0; i <= MADE_BACKOFF_LEVELS; i++) {
        MadeView *h = g_queue_peek_head(&mv->queue[i]);
        if (h && (!best || h->deadline < best->deadline))
            best = h;
    }
    return best;
}

/* @plugin's declaration of @name with an unmake, or NULL. */
static DdmViewDecl *decl_to_unmake(DdmRegistry *reg, const char *owner, const char *name)
{
    for (guint i = 0; reg->declared_views && i < reg->declared_views->len; i++) {
        DdmViewDecl *d = g_ptr_array_index(reg->declared_views, i);
        if (d->unmake && strcmp(d->name, name) == 0 && strcmp(d->plugin->name, owner) == 0)
            return d;
    }
    return NULL;
}

/* Is @name declared with an unmake (by any plugin)? */
static gboolean name_has_unmake(DdmRegistry *reg, const char *name)
{
    for (guint i = 0; reg->declared_views && i < reg->declared_views->len; i++) {
        const DdmViewDecl *d = g_ptr_array_index(reg->declared_views, i);
        if (d->unmake && strcmp(d->name, name) == 0)
            return TRUE;
    }
    return FALSE;
}

/* Queue @view of @d, a linger from now (again, if it is queued). */
static void made_track(DdmRegistry *reg, DdmViewDecl *d, ddm_view *view)
{
    struct DdmMadeViews *mv = made_views_of(reg);
    MadeView *m = g_hash_table_lookup(mv->index, view);

    if (!m) {
        m = g_new0(MadeView, 1);
        m->decl = d;
        m->view = view;
        g_hash_table_insert(mv->index, view, m);
    }
    m->declines = 0;
    made_push(mv, m, 0, mv->now() + linger_us(mv));
    made_arm(reg);
}

/* The store's listener: a plugin's view of a declared name with an unmake
 * is queued when it is made, however it is made, and leaves the queue when
 * it goes, however it goes (view_free, its VM's end, its plugin's). */
static void made_listen(ddm_view *view, DdmViewChange change, gpointer ud)
{
    DdmRegistry *reg = ud;
    struct DdmMadeViews *mv = reg->made_views;

    if (change == DDM_VIEW_CHANGED || !mv)
        return;
    if (change == DDM_VIEW_REMOVED) {
        MadeView *m = g_hash_table_lookup(mv->index, view);
        if (m)
            made_drop(mv, m);
        return;
    }
    const char *vm_key = ddm_view_vm_key(view);
    DdmViewDecl *d = vm_key ? decl_to_unmake(reg, ddm_view_owner(view), ddm_view_name(view)) : NULL;
    if (d)
        made_track(reg, d, view);
}

/* The latest end of a wider watch (of the name, of the VM, of everything)
 * that counted @m's view, 0 if none. */
static gint64 made_last_wide_end(struct DdmMadeViews *mv, const MadeView *m)
{
    const gint64 *by_name = g_hash_table_lookup(mv->name_ends, m->decl->name);
    const gint64 *by_vm = g_hash_table_lookup(mv->vm_ends, ddm_view_vm_key(m->view));
    gint64 last = mv->all_end;
    if (by_name && *by_name > last)
        last = *by_name;
    if (by_vm && *by_vm > last)
        last = *by_vm;
    return last;
}

/* Drop the notes of VM-wide watches that ended a linger ago or more, once
 * they are twice as many as after the last time: amortised O(1) a note.
 * (At most DDM_MADE_VM_ENDS_MAX are kept: see the unwatch hook.) */
static void made_prune_vm_ends(struct DdmMadeViews *mv, gint64 now)
{
    GHashTableIter it;
    gpointer v;

    if (g_hash_table_size(mv->vm_ends) < mv->vm_ends_prune_at)
        return;
    g_hash_table_iter_init(&it, mv->vm_ends);
    while (g_hash_table_iter_next(&it, NULL, &v))
        if (*(gint64 *)v + linger_us(mv) <= now)
            g_hash_table_iter_remove(&it);
    mv->vm_ends_prune_at = 2 * g_hash_table_size(mv->vm_ends) + 64;
}

/* Ask @m's plugin to take its view back; if the plugin keeps it, ask again
 * 2^declines lingers later (at most 2^MADE_BACKOFF_LEVELS). */
static void made_unmake(DdmRegistry *reg, MadeView *m, DdmVm *vm, gint64 now)
{
    struct DdmMadeViews *mv = reg->made_views;
    DdmViewDecl *d = m->decl;

    made_unlink(mv, m);
    mv->asking = m;
    ddm_vm_ref(vm);
    d->unmake(d->plugin, vm, d->name, d->ud); /* may free the view, make others */
    ddm_vm_unref(vm);
    if (mv->asking != m)
        return; /* its view went (made_drop freed m) */
    mv->asking = NULL;
    if (m->declines < G_MAXUINT)
        m->declines++;
    guint level = MIN(m->declines, MADE_BACKOFF_LEVELS);
    if (m->declines == MADE_BACKOFF_LEVELS)
        g_debug("plugin %s keeps view %s of VM %s after %u unmakes; asked every %u lingers",
                d->plugin->name, d->name, ddm_view_vm_key(m->view), m->declines, 1u << level);
    made_push(mv, m, level, now + (linger_us(mv) << level));
}

guint ddm_registry_made_views_dispatch(DdmRegistry *reg)
{
    struct DdmMadeViews *mv = reg->made_views;
    gint64 now;
    guint looked = 0;
    MadeView *m;

    if (!mv)
        return 0;
    now = mv->now();
    made_prune_vm_ends(mv, now);
    while (looked < MADE_DUE_BATCH && (m = made_head(mv)) && m->deadline <= now) {
        DdmViewDecl *d = m->decl;
        DdmVm *vm;
        gint64 wide;

        looked++;
        vm = reg->monitor ? ddm_monitor_find_vm(reg->monitor, ddm_view_vm_key(m->view)) : NULL;
        if (d->plugin->status != DDM_PLUGIN_LOADED || !vm || vm->state == DDM_VM_STATE_CLOSED) {
            made_drop(mv, m); /* nobody to ask: the view goes with its VM or plugin */
            continue;
        }
        if (vm->state != DDM_VM_STATE_READY || ddm_view_watchers(m->view) > 0) {
            made_push(mv, m, 0, now + linger_us(mv)); /* not ready yet, or watched: once more */
            continue;
        }
        wide = made_last_wide_end(mv, m);
        if (wide && wide + linger_us(mv) > now) {
            made_push(mv, m, 0, wide + linger_us(mv)); /* a wide watch of it ended lately */
            continue;
        }
        made_unmake(reg, m, vm, now);
    }
    if (mv->queued == 0 && !mv->asking)
        made_forget_ends(mv);
    return looked;
}

static gboolean made_due(gpointer ud)
{
    DdmRegistry *reg = ud;
    reg->made_views->timer = 0;
    ddm_registry_made_views_dispatch(reg);
    made_arm(reg);
    return G_SOURCE_REMOVE;
}

/* A timeout at the earliest head's deadline (at once when a batch left some
 * due), unless nothing waits. A timeout already set for that deadline or an
 * earlier one stays; one set later (for a declined view's 2^n lingers, say)
 * is moved to the new head's: a view queued at one linger must not wait for
 * a timer armed up to 2^MADE_BACKOFF_LEVELS lingers away (review rU3 1). */
static void made_arm(DdmRegistry *reg)
{
    struct DdmMadeViews *mv = reg->made_views;
    MadeView *head;
    gint64 wait_us;

    if (!mv || !(head = made_head(mv)))
        return;
    if (mv->timer) {
        if (mv->timer_deadline <= head->deadline)
            return;
        g_source_remove(mv->timer);
        mv->timer = 0;
    }
    wait_us = head->deadline - mv->now();
    mv->timer_deadline = head->deadline;
    mv->timer = g_timeout_add(wait_us > 0 ? (guint)((wait_us + 999) / 1000) : 0, made_due, reg);
}

/* The store's unwatch hook: a watch of @name (NULL: all) of @vm_key (NULL:
 * all) ended; the views it counted wait a whole linger from now. */
void ddm_registry_views_unwatched(DdmViews *store, const char *name, const char *vm_key,
                                  gpointer ud)
{
    DdmRegistry *reg = ud;
    struct DdmMadeViews *mv = reg->made_views;
    gint64 now, *end;

    if (!mv)
        return;
    if (name && vm_key) { /* one view: its entry to the tail, or queued again */
        ddm_view *v = ddm_views_lookup_made(store, name, vm_key);
        MadeView *m = v ? g_hash_table_lookup(mv->index, v) : NULL;
        DdmViewDecl *d = m ? m->decl : v ? decl_to_unmake(reg, ddm_view_owner(v), name) : NULL;
        if (d && (!m || m != mv->asking)) /* not while its unmake runs */
            made_track(reg, d, v);
        return;
    }
    if (mv->queued == 0)
        return; /* views queued from now on wait a linger from their making */
    /* a wider watch: a note, looked at when its views are due */
    now = mv->now();
    if (!name && !vm_key) {
        mv->all_end = now;
        return;
    }
    if (name && !name_has_unmake(reg, name))
        return; /* no view of it is queued: no note (one a name asked, e.g. `watch NAME`) */
    if (!name) {
        made_prune_vm_ends(mv, now);
        if (g_hash_table_size(mv->vm_ends) >= DDM_MADE_VM_ENDS_MAX &&
            !g_hash_table_contains(mv->vm_ends, vm_key)) {
            mv->all_end = now; /* full (watches of that many VMs within a linger): stands for all */
            return;
        }
    }
    end = g_new(gint64, 1);
    *end = now;
    g_hash_table_insert(name ? mv->name_ends : mv->vm_ends, g_strdup(name ? name : vm_key), end);
}

void ddm_registry_set_view_linger_ms(DdmRegistry *reg, guint ms)
{
    made_views_of(reg)->linger_ms = ms; /* views queued before keep their deadlines */
}

void ddm_registry_set_view_clock(DdmRegistry *reg, gint64 (*now)(void))
{
    made_views_of(reg)->now = now ? now : g_get_monotonic_time;
}

guint ddm_registry_n_made_views(DdmRegistry *reg)
{
    return reg->made_views ? reg->made_views->queued : 0;
}

guint ddm_registry_n_view_end_notes(DdmRegistry *reg)
{
    struct DdmMadeViews *mv = reg->made_views;
    return mv ? g_hash_table_size(mv->name_ends) + g_hash_table_size(mv->vm_ends) : 0;
}

static void decl_free(DdmViewDecl *d)
{
    if (d->ud_free)
        d->ud_free(d->ud);
    g_free(d->name);
    g_free(d);
}

/* Make @d's view of @vm unless it exists or nobody may make it now (the
 * store's listener queues what the make makes). */
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
            (void)made_views_of(reg); /* the store's listener queues its views from now */
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
    struct DdmMadeViews *mv = reg->made_views;
    /* its queued views first (a plugin unloads rarely: one walk) */
    if (mv) {
        g_autoptr(GPtrArray) gone = g_ptr_array_new();
        GHashTableIter it;
        gpointer val;
        g_hash_table_iter_init(&it, mv->index);
        while (g_hash_table_iter_next(&it, NULL, &val))
            if (((MadeView *)val)->decl->plugin == p)
                g_ptr_array_add(gone, val);
        for (guint i = 0; i < gone->len; i++)
            made_drop(mv, g_ptr_array_index(gone, i));
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
        if (reg->views && mv->listener)
            ddm_views_remove_listener(reg->views, mv->listener);
        for (guint i = 0; i <= MADE_BACKOFF_LEVELS; i++)
            g_queue_init(&mv->queue[i]); /* their links are the entries' own */
        g_hash_table_unref(mv->index);
        g_hash_table_unref(mv->name_ends);
        g_hash_table_unref(mv->vm_ends);
        if (mv->timer)
            g_source_remove(mv->timer);
        g_free(mv);
        reg->made_views = NULL;
    }
    if (!reg->declared_views)
        return;
    g_assert(reg->declared_views->len == 0); /* every plugin unloaded first */
    g_ptr_array_unref(reg->declared_views);
    reg->declared_views = NULL;
}
