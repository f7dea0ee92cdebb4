/* SPDX-License-Identifier: Apache-2.0
 *
 * The view store (see views.h): named tables, records and blobs published
 * by plugins and the core, per VM or global.
 *
 * Storage: content is kept as compact tagged cells (no JsonNode per cell);
 * strings live in a few doubling blocks per content, so dropping a 5000-row
 * table is a handful of frees. JSON is produced on demand by
 * ddm_view_to_json.
 *
 * Invariants:
 *  - A view always has committed content (empty at creation). Between
 *    begin and commit a second, "building" content exists; frontends only
 *    ever see the committed one. Commit swaps them, bumps the version and
 *    tells listeners CHANGED. A failed commit drops the building content.
 *  - Table columns: set_columns between begin and commit applies to the
 *    content being built (its rows are cleared); outside, it publishes an
 *    empty table with the new columns at once (version++, CHANGED) unless
 *    the columns are unchanged. Rows need exactly one cell per column, of
 *    the column's type (INT is accepted into DOUBLE, NULL strings are null
 *    cells of any type); a wrong type, an extra cell or a short row makes
 *    commit fail with -EINVAL (logged once per view at warning level).
 *  - Every string stored is valid UTF-8 without embedded NULs, at most
 *    DDM_VIEW_MAX_STRING bytes (longer ones are cut at a character
 *    boundary). Rows, fields, string bytes and blob size are capped so a
 *    misbehaving plugin cannot exhaust memory.
 *  - Listeners may add/remove listeners and destroy views (even the one
 *    being notified) from inside a notification: removed listeners are
 *    only marked until the outermost notification ends, and a view
 *    destroyed while being notified is freed when its notification ends.
 *
 * Non-goals: persistence, diffs between versions (frontends re-read the
 * whole view), thread safety (main-loop thread only).
 *
 * This file owns the store (create, destroy, lookup, list), the accessors,
 * listeners and watches. Content storage is in view_content.c, the builders
 * in view_build.c, the JSON form in view_json.c (views-private.h).
 */
#include <string.h>

#include "core/views/views-private.h"
#include "core/wire/seeded_hash.h"

/* ---------------------------------------------------------- the store */

/* The store is hashed by (VM key, name) in two steps: by_name maps a
 * name to the set of its views, hashed by VM key. The view is its own key
 * in that set, so a view carries no key string of its own (lookups hash a
 * key view on the stack). The views of one name (one per VM for a
 * headline view) are then found without looking at the others: a request
 * for them sorted every view of the server, 14% of its CPU at 10,000 VMs
 * (issue 16). Both steps hash with the process's seeded hash: VM keys
 * come partly from the wire. */
static guint view_vm_hash(gconstpointer p)
{
    const ddm_view *v = p;
    return v->vm_key ? ddm_str_hash(v->vm_key) : 0;
}

static gboolean view_vm_equal(gconstpointer a, gconstpointer b)
{
    const ddm_view *va = a, *vb = b;
    return !va->vm_key == !vb->vm_key && (!va->vm_key || strcmp(va->vm_key, vb->vm_key) == 0);
}

/* The watches may match otherwise: the generation moves, and the hook
 * (the registry: sleeping plugin timers wake) hears of it. */
static void watch_gen_bump(DdmViews *store)
{
    store->watch_gen++;
    if (store->gen_moved)
        store->gen_moved(store, store->gen_moved_ud);
}

/* The set of the views named @name, or NULL when there is none. (transfer none) */
static GHashTable *views_of_name(DdmViews *s, const char *name)
{
    return g_hash_table_lookup(s->by_name, name);
}

static gboolean valid_ident(const char *s)
{
    if (!s || !*s || !g_utf8_validate(s, -1, NULL))
        return FALSE;
    for (const char *p = s; *p; p++) {
        if ((guchar)*p < 0x20 || *p == 0x7f)
            return FALSE;
    }
    return TRUE;
}

static void view_desc_release(const ViewDesc *desc);

#if GLIB_SIZEOF_VOID_P == 8
G_STATIC_ASSERT(sizeof(ddm_view) == 64); /* see views-private.h */
G_STATIC_ASSERT(sizeof(Content) == 120);
G_STATIC_ASSERT(sizeof(Field) == 24);
#endif

static void view_free(ddm_view *v)
{
    Columns schema = ddm_views_columns_of(v->schema);
    v->magic = 0;
    ddm_views_columns_clear(&schema);
    ddm_views_content_free(v->committed);
    ddm_views_content_free(v->building);
    view_desc_release(v->desc);
    if (v->vm_key)
        g_ref_string_release(v->vm_key);
    g_free(v);
}

static void watch_free(gpointer p)
{
    Watch *w = p;
    g_free(w->name);
    g_free(w->vm_key);
    g_free(w);
}

DdmViews *ddm_views_new(void)
{
    DdmViews *s = g_new0(DdmViews, 1);
    s->by_name = g_hash_table_new_full(ddm_str_hash, g_str_equal, g_free,
                                       (GDestroyNotify)g_hash_table_unref);
    s->listeners = g_array_new(FALSE, FALSE, sizeof(Listener));
    s->next_listener_id = 1;
    s->next_watch_id = 1;
    return s;
}

void ddm_views_free(DdmViews *store)
{
    GHashTableIter names, it;
    gpointer set, val;

    if (!store)
        return;
    g_hash_table_iter_init(&names, store->by_name);
    while (g_hash_table_iter_next(&names, NULL, &set)) {
        g_hash_table_iter_init(&it, set);
        while (g_hash_table_iter_next(&it, NULL, &val)) {
            ddm_view *v = val;
            g_hash_table_iter_remove(&it);
            v->store = NULL;
            view_free(v);
        }
    }
    g_hash_table_destroy(store->by_name);
    g_array_free(store->listeners, TRUE);
    g_list_free_full(store->watches, watch_free);
    g_free(store);
}

static void listeners_compact(DdmViews *s)
{
    guint j = 0;
    for (guint i = 0; i < s->listeners->len; i++) {
        Listener *l = &g_array_index(s->listeners, Listener, i);
        if (l->fn)
            g_array_index(s->listeners, Listener, j++) = *l;
    }
    g_array_set_size(s->listeners, j);
    s->listeners_dirty = FALSE;
}

/* Tell every listener. @v may be destroyed by a listener: it is then freed
 * here, after the last listener; callers must not touch @v afterwards
 * unless they hold their own busy reference. */
void ddm_views_notify(DdmViews *s, ddm_view *v, DdmViewChange change)
{
    guint n = s->listeners->len; /* listeners added meanwhile wait for the next change */

    s->notifying++;
    v->busy++;
    for (guint i = 0; i < n && i < s->listeners->len; i++) {
        Listener l = g_array_index(s->listeners, Listener, i);
        if (l.fn)
            l.fn(v, change, l.ud);
    }
    v->busy--;
    s->notifying--;
    if (s->notifying == 0 && s->listeners_dirty)
        listeners_compact(s);
    if (v->busy == 0 && v->unpublished)
        view_free(v);
}

/* An interned reference-counted copy of @s, made valid UTF-8. */
static char *intern_valid(const char *s)
{
    char *valid, *out;

    if (g_utf8_validate(s, -1, NULL))
        return g_ref_string_new_intern(s);
    valid = g_utf8_make_valid(s, -1);
    out = g_ref_string_new_intern(valid);
    g_free(valid);
    return out;
}

/* Descriptions, hashed and compared by owner, name, title and kind (a set,
 * borrowed: one leaves with its last view). A lookup formats no key and
 * interns no string: a printf'd key per view created was 3% of a server's
 * instructions naming 1,000 VMs (issue 16). Views live on the main loop
 * only. */
static GHashTable *interned_descs;

static guint view_desc_hash(gconstpointer p)
{
    const ViewDesc *d = p;
    guint h = ddm_str_hash(d->owner);
    h = h * 31u + ddm_str_hash(d->name);
    h = h * 31u + ddm_str_hash(d->title);
    return h * 31u + (guint)d->kind;
}

static gboolean view_desc_equal(gconstpointer pa, gconstpointer pb)
{
    const ViewDesc *a = pa, *b = pb;
    return a->kind == b->kind && strcmp(a->name, b->name) == 0 &&
           strcmp(a->owner, b->owner) == 0 && strcmp(a->title, b->title) == 0;
}

static const ViewDesc *view_desc_get(const char *owner, const char *name, const char *title,
                                     ddm_view_kind kind)
{
    /* Owner and title as they are kept: made valid UTF-8 (copies only when not). */
    char *owner_valid = g_utf8_validate(owner, -1, NULL) ? NULL : g_utf8_make_valid(owner, -1);
    char *title_valid = g_utf8_validate(title, -1, NULL) ? NULL : g_utf8_make_valid(title, -1);
    ViewDesc probe = {.owner = owner_valid ? owner_valid : (char *)owner,
                      .name = (char *)name,
                      .title = title_valid ? title_valid : (char *)title,
                      .kind = kind};
    ViewDesc *d;

    if (!interned_descs)
        interned_descs = g_hash_table_new(view_desc_hash, view_desc_equal);
    d = g_hash_table_lookup(interned_descs, &probe);
    if (d) {
        d->refs++;
    } else {
        d = g_new0(ViewDesc, 1);
        d->owner = intern_valid(probe.owner);
        d->name = g_ref_string_new_intern(name);
        d->title = intern_valid(probe.title);
        d->kind = kind;
        d->refs = 1;
        g_hash_table_add(interned_descs, d);
    }
    g_free(owner_valid);
    g_free(title_valid);
    return d;
}

static void view_desc_release(const ViewDesc *desc)
{
    ViewDesc *d = (ViewDesc *)desc; /* interned here: ours to count */

    Columns columns = ddm_views_columns_of(d->columns);

    if (--d->refs > 0)
        return;
    g_hash_table_remove(interned_descs, d);
    ddm_views_columns_clear(&columns);
    g_ref_string_release(d->owner);
    g_ref_string_release(d->name);
    g_ref_string_release(d->title);
    g_free(d);
}

static ddm_view *view_alloc(const char *owner, const char *vm_key, const char *name,
                            ddm_view_kind kind, const char *title)
{
    ddm_view *v = g_new0(ddm_view, 1);
    v->magic = DDM_VIEW_MAGIC;
    /* Owner, name, title and kind are the same in every VM's copy of a
     * view: one description for all; the VM key is interned too. */
    v->desc = view_desc_get(owner ? owner : "", name, title && *title ? title : name, kind);
    v->vm_key = vm_key ? g_ref_string_new_intern(vm_key) : NULL;
    v->committed = ddm_views_content_empty();
    return v;
}

static gboolean valid_kind(ddm_view_kind kind)
{
    return kind == DDM_VIEW_TABLE || kind == DDM_VIEW_RECORD || kind == DDM_VIEW_BLOB;
}

ddm_view *ddm_views_create(DdmViews *store, const char *owner, const char *vm_key,
                           const char *name, ddm_view_kind kind, const char *title)
{
    ddm_view *v;
    GHashTable *set;

    g_return_val_if_fail(store != NULL, NULL);
    if (!valid_ident(name) || (vm_key && !valid_ident(vm_key)) || !valid_kind(kind))
        return NULL;
    if (ddm_views_lookup_made(store, name, vm_key))
        return NULL;
    v = view_alloc(owner, vm_key, name, kind, title);
    v->store = store;
    set = views_of_name(store, name);
    if (!set) {
        set = g_hash_table_new(view_vm_hash, view_vm_equal);
        g_hash_table_insert(store->by_name, g_strdup(name), set);
    }
    g_hash_table_add(set, v);
    store->n_views++;
    if (store->watches)
        watch_gen_bump(store); /* a watch may match the new view */
    /* A listener may destroy it at once: hold it until we know. */
    v->busy++;
    ddm_views_notify(store, v, DDM_VIEW_ADDED);
    if (--v->busy == 0 && v->unpublished) {
        view_free(v);
        return NULL;
    }
    return v;
}

ddm_view *ddm_view_new_detached(const char *owner, const char *name, ddm_view_kind kind,
                                const char *title)
{
    if (!valid_ident(name) || !valid_kind(kind))
        return NULL;
    return view_alloc(owner, NULL, name, kind, title);
}

ddm_view *ddm_view_new_detached_vm(const char *owner, const char *vm_key, const char *name,
                                   ddm_view_kind kind, const char *title)
{
    if (!valid_ident(name) || (vm_key && !valid_ident(vm_key)) || !valid_kind(kind))
        return NULL;
    return view_alloc(owner, vm_key, name, kind, title);
}

void ddm_view_set_detached_vm(ddm_view *view, const char *vm_key)
{
    g_return_if_fail(ddm_view_is_valid(view));
    g_return_if_fail(view->store == NULL);
    if (vm_key && !valid_ident(vm_key))
        return;
    g_clear_pointer(&view->vm_key, g_ref_string_release);
    view->vm_key = vm_key ? g_ref_string_new_intern(vm_key) : NULL;
}

void ddm_view_free_detached(ddm_view *view)
{
    if (!view)
        return;
    g_return_if_fail(ddm_view_is_valid(view));
    g_return_if_fail(view->store == NULL);
    view_free(view);
}

void ddm_views_destroy(DdmViews *store, ddm_view *view)
{
    GHashTable *set;

    g_return_if_fail(store != NULL);
    if (!view || !ddm_view_is_valid(view) || view->unpublished)
        return;
    g_return_if_fail(view->store == store);
    set = views_of_name(store, view->desc->name);
    g_hash_table_remove(set, view);
    store->n_views--;
    if (g_hash_table_size(set) == 0) /* a name leaves with its last view */
        g_hash_table_remove(store->by_name, view->desc->name);
    view->unpublished = TRUE; /* lookups no longer find it; freed after REMOVED */
    ddm_views_notify(store, view, DDM_VIEW_REMOVED);
}

static void destroy_matching(DdmViews *store, const char *vm_key, const char *owner)
{
    GPtrArray *victims = g_ptr_array_new();
    GHashTableIter names, it;
    gpointer set, val;

    g_hash_table_iter_init(&names, store->by_name);
    while (g_hash_table_iter_next(&names, NULL, &set)) {
        if (vm_key && !owner) {
            /* A VM's views: one lookup per name (a few dozen), not a walk
             * over every view of every VM, so a VM that goes away costs
             * the same with ten VMs or ten thousand (stopping a server
             * with 10,000 VMs took ~90 s of CPU). */
            ddm_view key = {.vm_key = (char *)vm_key};
            ddm_view *v = g_hash_table_lookup(set, &key);
            if (v)
                g_ptr_array_add(victims, v);
            continue;
        }
        g_hash_table_iter_init(&it, set);
        while (g_hash_table_iter_next(&it, NULL, &val)) {
            ddm_view *v = val;
            if ((vm_key && g_strcmp0(v->vm_key, vm_key) == 0) ||
                (owner && g_strcmp0(v->desc->owner, owner) == 0))
                g_ptr_array_add(victims, v);
        }
    }
    /* Listeners may destroy views meanwhile: a busy reference keeps each
     * victim allocated until we are done with it. */
    for (guint i = 0; i < victims->len; i++)
        ((ddm_view *)g_ptr_array_index(victims, i))->busy++;
    for (guint i = 0; i < victims->len; i++)
        ddm_views_destroy(store, g_ptr_array_index(victims, i));
    for (guint i = 0; i < victims->len; i++) {
        ddm_view *v = g_ptr_array_index(victims, i);
        if (--v->busy == 0 && v->unpublished)
            view_free(v);
    }
    g_ptr_array_free(victims, TRUE);
}

void ddm_views_destroy_vm(DdmViews *store, const char *vm_key)
{
    g_return_if_fail(store != NULL);
    if (vm_key)
        destroy_matching(store, vm_key, NULL);
}

void ddm_views_destroy_owner(DdmViews *store, const char *owner)
{
    g_return_if_fail(store != NULL);
    if (owner)
        destroy_matching(store, NULL, owner);
}

/* ------------------------------------------------- views made on demand */

void ddm_views_set_maker(DdmViews *store, DdmViewsMakeFn fn, gpointer ud)
{
    g_return_if_fail(store != NULL);
    store->maker = fn;
    store->maker_ud = fn ? ud : NULL;
}

void ddm_views_remove_maker(DdmViews *store, gpointer ud)
{
    g_return_if_fail(store != NULL);
    if (store->maker && store->maker_ud == ud) {
        store->maker = NULL;
        store->maker_ud = NULL;
    }
    if (store->namer && store->namer_ud == ud) {
        store->namer = NULL;
        store->namer_ud = NULL;
    }
    if (store->unwatched && store->unwatched_ud == ud) {
        store->unwatched = NULL;
        store->unwatched_ud = NULL;
    }
    if (store->gen_moved && store->gen_moved_ud == ud) {
        store->gen_moved = NULL;
        store->gen_moved_ud = NULL;
    }
}

void ddm_views_set_watch_gen_hook(DdmViews *store, DdmViewsWatchGenFn fn, gpointer ud)
{
    g_return_if_fail(store != NULL);
    store->gen_moved = fn;
    store->gen_moved_ud = fn ? ud : NULL;
}

void ddm_views_set_unwatched(DdmViews *store, DdmViewsUnwatchedFn fn, gpointer ud)
{
    g_return_if_fail(store != NULL);
    store->unwatched = fn;
    store->unwatched_ud = fn ? ud : NULL;
}

static void make_declared(DdmViews *s, const char *name, const char *vm_key);
static gint view_order(gconstpointer a, gconstpointer b);

void ddm_views_set_namer(DdmViews *store, DdmViewsNamesFn fn, gpointer ud)
{
    g_return_if_fail(store != NULL);
    store->namer = fn;
    store->namer_ud = fn ? ud : NULL;
}

GHashTable *ddm_views_names(DdmViews *store, const char *vm_key)
{
    GHashTable *names = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
    GHashTableIter it;
    gpointer name, set;
    ddm_view key = {.vm_key = (char *)vm_key};

    g_return_val_if_fail(store != NULL, names);
    /* O(names): one lookup in each name's set for a VM, a non-empty check for any */
    g_hash_table_iter_init(&it, store->by_name);
    while (g_hash_table_iter_next(&it, &name, &set))
        if (vm_key ? g_hash_table_contains(set, &key) : g_hash_table_size(set) > 0)
            g_hash_table_add(names, g_strdup(name));
    if (store->namer)
        store->namer(store, vm_key, names, store->namer_ud);
    return names;
}

GPtrArray *ddm_views_list_vm(DdmViews *store, const char *vm_key)
{
    GPtrArray *a = g_ptr_array_new();
    GHashTableIter it;
    gpointer set, v;
    ddm_view key = {.vm_key = (char *)vm_key};

    g_return_val_if_fail(store != NULL, a);
    if (vm_key)
        make_declared(store, NULL, vm_key);
    /* O(names): one lookup in each name's set, no other VM's views looked at */
    g_hash_table_iter_init(&it, store->by_name);
    while (g_hash_table_iter_next(&it, NULL, &set))
        if ((v = g_hash_table_lookup(set, &key)))
            g_ptr_array_add(a, v);
    g_ptr_array_sort(a, view_order);
    return a;
}

/* Ask the maker for the declared views named @name (NULL: all) of VM
 * @vm_key (NULL: all) not made yet; never from inside the maker. */
static void make_declared(DdmViews *s, const char *name, const char *vm_key)
{
    if (!s->maker || s->making)
        return;
    s->making++;
    s->maker(s, name, vm_key, s->maker_ud);
    s->making--;
}

ddm_view *ddm_views_lookup_made(DdmViews *store, const char *name, const char *vm_key)
{
    ddm_view key = {.vm_key = (char *)vm_key};
    GHashTable *set;

    g_return_val_if_fail(store != NULL, NULL);
    if (!name || !(set = views_of_name(store, name)))
        return NULL;
    return g_hash_table_lookup(set, &key);
}

ddm_view *ddm_views_lookup(DdmViews *store, const char *name, const char *vm_key)
{
    ddm_view *v;

    g_return_val_if_fail(store != NULL, NULL);
    v = ddm_views_lookup_made(store, name, vm_key);
    if (v || !name || !vm_key || !store->maker || store->making)
        return v; /* declared views are a VM's, never global */
    make_declared(store, name, vm_key);
    return ddm_views_lookup_made(store, name, vm_key);
}

static gint view_order(gconstpointer a, gconstpointer b)
{
    const ddm_view *va = *(const ddm_view *const *)a;
    const ddm_view *vb = *(const ddm_view *const *)b;
    int r;

    if (!va->vm_key != !vb->vm_key)
        return va->vm_key ? 1 : -1; /* global views first */
    r = g_strcmp0(va->vm_key, vb->vm_key);
    return r ? r : strcmp(va->desc->name, vb->desc->name);
}

GPtrArray *ddm_views_list(DdmViews *store)
{
    g_return_val_if_fail(store != NULL, NULL);
    make_declared(store, NULL, NULL);
    return ddm_views_list_made(store);
}

GPtrArray *ddm_views_list_made(DdmViews *store)
{
    GPtrArray *a;
    GHashTableIter names, it;
    gpointer set, val;

    g_return_val_if_fail(store != NULL, NULL);
    a = g_ptr_array_sized_new(store->n_views);
    g_hash_table_iter_init(&names, store->by_name);
    while (g_hash_table_iter_next(&names, NULL, &set)) {
        g_hash_table_iter_init(&it, set);
        while (g_hash_table_iter_next(&it, NULL, &val))
            g_ptr_array_add(a, val);
    }
    g_ptr_array_sort(a, view_order);
    return a;
}

GPtrArray *ddm_views_list_named(DdmViews *store, const char *name)
{
    GPtrArray *a;
    GHashTable *set;
    GHashTableIter it;
    gpointer val;

    g_return_val_if_fail(store != NULL, NULL);
    if (name)
        make_declared(store, name, NULL);
    set = name ? views_of_name(store, name) : NULL;
    a = g_ptr_array_sized_new(set ? g_hash_table_size(set) : 0);
    if (!set)
        return a;
    g_hash_table_iter_init(&it, set);
    while (g_hash_table_iter_next(&it, NULL, &val))
        g_ptr_array_add(a, val);
    g_ptr_array_sort(a, view_order); /* the order of ddm_views_list */
    return a;
}

/* ---------------------------------------------------------- accessors */

gboolean ddm_view_is_valid(const ddm_view *v)
{
    return v != NULL && v->magic == DDM_VIEW_MAGIC;
}

const char *ddm_view_name(const ddm_view *v)
{
    g_return_val_if_fail(ddm_view_is_valid(v), NULL);
    return v->desc->name;
}

const char *ddm_view_vm_key(const ddm_view *v)
{
    g_return_val_if_fail(ddm_view_is_valid(v), NULL);
    return v->vm_key;
}

const char *ddm_view_owner(const ddm_view *v)
{
    g_return_val_if_fail(ddm_view_is_valid(v), NULL);
    return v->desc->owner;
}

const char *ddm_view_title(const ddm_view *v)
{
    g_return_val_if_fail(ddm_view_is_valid(v), NULL);
    return v->desc->title;
}

ddm_view_kind ddm_view_kind_of(const ddm_view *v)
{
    g_return_val_if_fail(ddm_view_is_valid(v), 0);
    return v->desc->kind;
}

guint64 ddm_view_version(const ddm_view *v)
{
    g_return_val_if_fail(ddm_view_is_valid(v), 0);
    return v->version;
}

guint ddm_view_n_rows(const ddm_view *v)
{
    g_return_val_if_fail(ddm_view_is_valid(v), 0);
    return v->desc->kind == DDM_VIEW_TABLE ? v->committed->n_rows : 0;
}

const char *ddm_view_row_str(const ddm_view *v, guint row, guint col)
{
    const Content *c;
    Cell cell;

    g_return_val_if_fail(ddm_view_is_valid(v), NULL);
    c = v->committed;
    if (v->desc->kind != DDM_VIEW_TABLE || row >= c->n_rows || col >= c->columns.n)
        return NULL;
    cell = ddm_views_content_cell(c, (gsize)row * c->columns.n + col);
    return cell.type == DDM_VAL_STR ? cell.u.s : NULL;
}


const guint8 *ddm_view_blob_data(const ddm_view *v, gsize *len, const char **media_type)
{
    if (len)
        *len = 0;
    if (media_type)
        *media_type = NULL;
    if (!ddm_view_is_valid(v) || v->desc->kind != DDM_VIEW_BLOB || !v->committed->media_type)
        return NULL;
    if (len)
        *len = v->committed->blob_len;
    if (media_type)
        *media_type = v->committed->media_type;
    return v->committed->blob ? v->committed->blob : (const guint8 *)"";
}

/* ------------------------------------------------ listeners, watches */

guint ddm_views_add_listener(DdmViews *store, DdmViewListenerFn fn, gpointer ud)
{
    Listener l;

    g_return_val_if_fail(store != NULL && fn != NULL, 0);
    l.id = store->next_listener_id++;
    l.fn = fn;
    l.ud = ud;
    g_array_append_val(store->listeners, l);
    return l.id;
}

void ddm_views_remove_listener(DdmViews *store, guint id)
{
    g_return_if_fail(store != NULL);
    for (guint i = 0; i < store->listeners->len; i++) {
        Listener *l = &g_array_index(store->listeners, Listener, i);
        if (l->id == id && l->fn) {
            l->fn = NULL;
            if (store->notifying)
                store->listeners_dirty = TRUE;
            else
                g_array_remove_index(store->listeners, i);
            return;
        }
    }
}

guint ddm_views_watch(DdmViews *store, const char *name, const char *vm_key)
{
    Watch *w;

    g_return_val_if_fail(store != NULL, 0);
    /* What the watch will count exists before it counts: a plugin that
     * polls only watched views sees its view watched at the next look. */
    make_declared(store, name, vm_key);
    w = g_new0(Watch, 1);
    w->id = store->next_watch_id++;
    if (store->next_watch_id == 0)
        store->next_watch_id = 1;
    w->name = g_strdup(name);
    w->vm_key = g_strdup(vm_key);
    store->watches = g_list_prepend(store->watches, w);
    watch_gen_bump(store);
    return w->id;
}

guint64 ddm_views_watch_generation(const DdmViews *store)
{
    g_return_val_if_fail(store != NULL, 0);
    return store->watch_gen;
}

void ddm_views_unwatch(DdmViews *store, guint watch_id)
{
    g_return_if_fail(store != NULL);
    for (GList *l = store->watches; l; l = l->next) {
        Watch *w = l->data;
        if (w->id == watch_id) {
            store->watches = g_list_delete_link(store->watches, l);
            watch_gen_bump(store);
            if (store->unwatched)
                store->unwatched(store, w->name, w->vm_key, store->unwatched_ud);
            watch_free(w);
            return;
        }
    }
}

int ddm_views_watches_matching(const DdmViews *store, const char *name, const char *vm_key)
{
    int n = 0;

    g_return_val_if_fail(store != NULL && name != NULL, 0);
    for (GList *l = store->watches; l; l = l->next) {
        const Watch *w = l->data;
        if (w->name && strcmp(w->name, name) != 0)
            continue;
        if (w->vm_key && g_strcmp0(w->vm_key, vm_key) != 0)
            continue;
        n++;
    }
    return n;
}

int ddm_view_watchers(const ddm_view *v)
{
    if (!ddm_view_is_valid(v) || !v->store || v->unpublished)
        return 0;
    return ddm_views_watches_matching(v->store, v->desc->name, v->vm_key);
}
