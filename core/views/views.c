/* SPDX-License-Identifier: Apache-2.0
 *
 * The view store (see views.h): named tables, records and blobs published
 * by plugins and the core, per VM or global.
 *
 * Storage: content is kept as compact tagged cells (no JsonNode per cell);
 * strings live in one GStringChunk per content, so dropping a 5000-row
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
 */
#include <errno.h>
#include <math.h>
#include <string.h>

#include "core/views/views.h"

/* ------------------------------------------------------------- storage */

typedef struct Cell {
    guint8 type; /* 0 = null, else ddm_value_type */
    union {
        const char *s; /* in the content's string chunk */
        gint64 i;
        double d;
        gboolean b;
    } u;
} Cell;

typedef struct Field {
    const char *key; /* in the content's string chunk */
    ddm_value_type type; /* declared type, also when the value is null */
    Cell value;
} Field;

typedef struct Column {
    char *name;
    ddm_value_type type;
    char *unit; /* NULL = none */
} Column;

typedef struct Columns {
    Column *cols;
    guint n;
} Columns;

typedef struct Content {
    GStringChunk *strings; /* created lazily */
    gsize string_bytes;    /* bytes stored in strings, for the cap */
    /* table */
    Columns columns;
    GArray *cells;     /* Cell, n_rows * columns.n (the current row may be partial) */
    guint n_rows;
    guint cur_col;     /* cells given for the current row */
    gboolean in_row;   /* a row was started and accepted */
    gboolean row_dropped; /* the current row was refused (row cap): its cells are ignored */
    gboolean bad;      /* a builder error: commit refuses this content */
    const char *bad_reason;
    gboolean rows_capped;
    /* record */
    GArray *fields;    /* Field */
    GHashTable *field_index; /* key (in strings) -> index + 1 */
    /* blob */
    guint8 *blob;
    gsize blob_len;
    char *media_type;
} Content;

struct ddm_view {
    guint32 magic;
    DdmViews *store; /* NULL for detached views */
    char *hkey;      /* key in store->by_key */
    char *owner;
    char *vm_key;    /* NULL = global */
    char *name;
    char *title;
    ddm_view_kind kind;
    guint64 version;
    Columns schema;     /* table: columns the next begin starts with */
    Content *committed; /* never NULL */
    Content *building;  /* NULL when not between begin and commit */
    gboolean warned;    /* a failed commit was logged at warning level */
    gboolean warned_cap; /* the row cap was logged at warning level */
    gboolean unpublished;
    guint busy;         /* notifications in progress for this view */
};

typedef struct Listener {
    guint id;
    DdmViewListenerFn fn; /* NULL once removed */
    gpointer ud;
} Listener;

typedef struct Watch {
    guint id;
    char *name;   /* NULL = every view */
    char *vm_key; /* NULL = every VM (and global views) */
} Watch;

struct DdmViews {
    GHashTable *by_key; /* hkey -> ddm_view* (owned) */
    GArray *listeners;  /* Listener */
    guint next_listener_id;
    guint notifying;    /* nesting depth of notifications */
    gboolean listeners_dirty;
    GList *watches;     /* Watch* */
    guint next_watch_id;
};

static void columns_clear(Columns *c)
{
    for (guint i = 0; i < c->n; i++) {
        g_free(c->cols[i].name);
        g_free(c->cols[i].unit);
    }
    g_free(c->cols);
    c->cols = NULL;
    c->n = 0;
}

static void columns_copy(Columns *dst, const Columns *src)
{
    columns_clear(dst);
    if (src->n == 0)
        return;
    dst->cols = g_new0(Column, src->n);
    dst->n = src->n;
    for (guint i = 0; i < src->n; i++) {
        dst->cols[i].name = g_strdup(src->cols[i].name);
        dst->cols[i].type = src->cols[i].type;
        dst->cols[i].unit = g_strdup(src->cols[i].unit);
    }
}

static gboolean columns_equal(const Columns *a, const Columns *b)
{
    if (a->n != b->n)
        return FALSE;
    for (guint i = 0; i < a->n; i++) {
        if (a->cols[i].type != b->cols[i].type || g_strcmp0(a->cols[i].name, b->cols[i].name) != 0 ||
            g_strcmp0(a->cols[i].unit, b->cols[i].unit) != 0)
            return FALSE;
    }
    return TRUE;
}

static Content *content_new(ddm_view_kind kind, const Columns *schema)
{
    Content *c = g_new0(Content, 1);
    if (kind == DDM_VIEW_TABLE) {
        c->cells = g_array_new(FALSE, FALSE, sizeof(Cell));
        if (schema)
            columns_copy(&c->columns, schema);
    } else if (kind == DDM_VIEW_RECORD) {
        c->fields = g_array_new(FALSE, FALSE, sizeof(Field));
        c->field_index = g_hash_table_new(g_str_hash, g_str_equal);
    }
    return c;
}

static void content_free(Content *c)
{
    if (!c)
        return;
    if (c->strings)
        g_string_chunk_free(c->strings);
    columns_clear(&c->columns);
    if (c->cells)
        g_array_free(c->cells, TRUE);
    if (c->fields)
        g_array_free(c->fields, TRUE);
    if (c->field_index)
        g_hash_table_destroy(c->field_index);
    g_free(c->blob);
    g_free(c->media_type);
    g_free(c);
}

/* Copy @s into @c's string chunk as valid UTF-8 of at most
 * DDM_VIEW_MAX_STRING bytes. *@truncated tells whether it was cut.
 * NULL when the content's string budget is spent. */
static const char *content_intern(Content *c, const char *s, gboolean *truncated)
{
    gsize n = strnlen(s, DDM_VIEW_MAX_STRING + 1);
    const char *end = NULL;
    const char *out;

    *truncated = FALSE;
    if (n > DDM_VIEW_MAX_STRING) {
        *truncated = TRUE;
        n = DDM_VIEW_MAX_STRING;
        /* Back off to the start of the character s[n] continues, if any. */
        for (int k = 0; k < 3 && n > 0 && ((guchar)s[n] & 0xC0) == 0x80; k++)
            n--;
    }
    if (c->string_bytes + n + 1 > DDM_VIEW_MAX_STRING_BYTES)
        return NULL;
    if (!c->strings)
        c->strings = g_string_chunk_new(4096);
    if (g_utf8_validate(s, (gssize)n, &end)) {
        out = g_string_chunk_insert_len(c->strings, s, (gssize)n);
        c->string_bytes += n + 1;
    } else {
        char *valid = g_utf8_make_valid(s, (gssize)n);
        gsize vn = strlen(valid);
        if (vn > DDM_VIEW_MAX_STRING) {
            /* Replacement characters made it longer: cut again. */
            vn = DDM_VIEW_MAX_STRING;
            while (vn > 0 && ((guchar)valid[vn] & 0xC0) == 0x80)
                vn--;
            *truncated = TRUE;
        }
        if (c->string_bytes + vn + 1 > DDM_VIEW_MAX_STRING_BYTES) {
            g_free(valid);
            return NULL;
        }
        out = g_string_chunk_insert_len(c->strings, valid, (gssize)vn);
        c->string_bytes += vn + 1;
        g_free(valid);
    }
    return out;
}

/* ---------------------------------------------------------- the store */

static char *make_hkey(const char *vm_key, const char *name)
{
    return g_strconcat(vm_key ? "v" : "g", vm_key ? vm_key : "", "\x1f", name, NULL);
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

static void view_free(ddm_view *v)
{
    v->magic = 0;
    columns_clear(&v->schema);
    content_free(v->committed);
    content_free(v->building);
    g_free(v->hkey);
    g_free(v->owner);
    g_free(v->vm_key);
    g_free(v->name);
    g_free(v->title);
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
    s->by_key = g_hash_table_new_full(g_str_hash, g_str_equal, NULL, NULL);
    s->listeners = g_array_new(FALSE, FALSE, sizeof(Listener));
    s->next_listener_id = 1;
    s->next_watch_id = 1;
    return s;
}

void ddm_views_free(DdmViews *store)
{
    GHashTableIter it;
    gpointer val;

    if (!store)
        return;
    g_hash_table_iter_init(&it, store->by_key);
    while (g_hash_table_iter_next(&it, NULL, &val)) {
        ddm_view *v = val;
        g_hash_table_iter_remove(&it);
        v->store = NULL;
        view_free(v);
    }
    g_hash_table_destroy(store->by_key);
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
static void notify(DdmViews *s, ddm_view *v, DdmViewChange change)
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

static ddm_view *view_alloc(const char *owner, const char *vm_key, const char *name,
                            ddm_view_kind kind, const char *title)
{
    ddm_view *v = g_new0(ddm_view, 1);
    v->magic = DDM_VIEW_MAGIC;
    v->owner = owner && !g_utf8_validate(owner, -1, NULL) ? g_utf8_make_valid(owner, -1)
                                                          : g_strdup(owner ? owner : "");
    v->vm_key = g_strdup(vm_key);
    v->name = g_strdup(name);
    v->title = g_strdup(title && *title ? title : name);
    if (!g_utf8_validate(v->title, -1, NULL)) {
        char *t = g_utf8_make_valid(v->title, -1);
        g_free(v->title);
        v->title = t;
    }
    v->kind = kind;
    v->committed = content_new(kind, NULL);
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
    char *hkey;

    g_return_val_if_fail(store != NULL, NULL);
    if (!valid_ident(name) || (vm_key && !valid_ident(vm_key)) || !valid_kind(kind))
        return NULL;
    hkey = make_hkey(vm_key, name);
    if (g_hash_table_contains(store->by_key, hkey)) {
        g_free(hkey);
        return NULL;
    }
    v = view_alloc(owner, vm_key, name, kind, title);
    v->store = store;
    v->hkey = hkey;
    g_hash_table_insert(store->by_key, v->hkey, v);
    /* A listener may destroy it at once: hold it until we know. */
    v->busy++;
    notify(store, v, DDM_VIEW_ADDED);
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
    g_return_if_fail(store != NULL);
    if (!view || !ddm_view_is_valid(view) || view->unpublished)
        return;
    g_return_if_fail(view->store == store);
    g_hash_table_remove(store->by_key, view->hkey);
    view->unpublished = TRUE; /* lookups no longer find it; freed after REMOVED */
    notify(store, view, DDM_VIEW_REMOVED);
}

static void destroy_matching(DdmViews *store, const char *vm_key, const char *owner)
{
    GPtrArray *victims = g_ptr_array_new();
    GHashTableIter it;
    gpointer val;

    g_hash_table_iter_init(&it, store->by_key);
    while (g_hash_table_iter_next(&it, NULL, &val)) {
        ddm_view *v = val;
        if ((vm_key && g_strcmp0(v->vm_key, vm_key) == 0) || (owner && g_strcmp0(v->owner, owner) == 0))
            g_ptr_array_add(victims, v);
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

ddm_view *ddm_views_lookup(DdmViews *store, const char *name, const char *vm_key)
{
    char *hkey;
    ddm_view *v;

    g_return_val_if_fail(store != NULL, NULL);
    if (!name)
        return NULL;
    hkey = make_hkey(vm_key, name);
    v = g_hash_table_lookup(store->by_key, hkey);
    g_free(hkey);
    return v;
}

static gint view_order(gconstpointer a, gconstpointer b)
{
    const ddm_view *va = *(const ddm_view *const *)a;
    const ddm_view *vb = *(const ddm_view *const *)b;
    int r;

    if (!va->vm_key != !vb->vm_key)
        return va->vm_key ? 1 : -1; /* global views first */
    r = g_strcmp0(va->vm_key, vb->vm_key);
    return r ? r : strcmp(va->name, vb->name);
}

GPtrArray *ddm_views_list(DdmViews *store)
{
    GPtrArray *a;
    GHashTableIter it;
    gpointer val;

    g_return_val_if_fail(store != NULL, NULL);
    a = g_ptr_array_sized_new(g_hash_table_size(store->by_key));
    g_hash_table_iter_init(&it, store->by_key);
    while (g_hash_table_iter_next(&it, NULL, &val))
        g_ptr_array_add(a, val);
    g_ptr_array_sort(a, view_order);
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
    return v->name;
}

const char *ddm_view_vm_key(const ddm_view *v)
{
    g_return_val_if_fail(ddm_view_is_valid(v), NULL);
    return v->vm_key;
}

const char *ddm_view_owner(const ddm_view *v)
{
    g_return_val_if_fail(ddm_view_is_valid(v), NULL);
    return v->owner;
}

const char *ddm_view_title(const ddm_view *v)
{
    g_return_val_if_fail(ddm_view_is_valid(v), NULL);
    return v->title;
}

ddm_view_kind ddm_view_kind_of(const ddm_view *v)
{
    g_return_val_if_fail(ddm_view_is_valid(v), 0);
    return v->kind;
}

guint64 ddm_view_version(const ddm_view *v)
{
    g_return_val_if_fail(ddm_view_is_valid(v), 0);
    return v->version;
}

/* ----------------------------------------------------------- builders */

#define CHECK_VIEW(v)                    \
    do {                                 \
        if (!ddm_view_is_valid(v))       \
            return -EINVAL;              \
    } while (0)

static void mark_bad(Content *c, const char *reason)
{
    if (!c->bad) {
        c->bad = TRUE;
        c->bad_reason = reason;
    }
}

int ddm_view_set_columns(ddm_view *v, const ddm_column *cols, size_t n)
{
    Columns fresh = {NULL, 0};

    CHECK_VIEW(v);
    if (v->kind != DDM_VIEW_TABLE || (n > 0 && !cols) || n > DDM_VIEW_MAX_COLUMNS)
        return -EINVAL;
    for (size_t i = 0; i < n; i++) {
        if (!cols[i].name || cols[i].type < DDM_VAL_STR || cols[i].type > DDM_VAL_BOOL)
            return -EINVAL;
    }
    if (n > 0) {
        /* Names and units go through the same UTF-8/length rules as cells. */
        Content *tmp = content_new(DDM_VIEW_BLOB, NULL);
        gboolean tr;
        fresh.cols = g_new0(Column, n);
        fresh.n = (guint)n;
        for (size_t i = 0; i < n; i++) {
            const char *name = content_intern(tmp, cols[i].name, &tr);
            const char *unit = cols[i].unit && *cols[i].unit ? content_intern(tmp, cols[i].unit, &tr) : NULL;
            fresh.cols[i].name = g_strdup(name ? name : "");
            fresh.cols[i].type = cols[i].type;
            fresh.cols[i].unit = g_strdup(unit);
        }
        content_free(tmp);
    }
    if (v->building) {
        /* Rows built so far are cleared, as are the row state and errors. */
        Content *c = content_new(DDM_VIEW_TABLE, &fresh);
        content_free(v->building);
        v->building = c;
    } else if (!columns_equal(&fresh, &v->committed->columns)) {
        /* Outside begin/commit the new (empty) table is published at once. */
        Content *c = content_new(DDM_VIEW_TABLE, &fresh);
        content_free(v->committed);
        v->committed = c;
        v->version++;
        columns_copy(&v->schema, &fresh);
        columns_clear(&fresh);
        if (v->store && !v->unpublished)
            notify(v->store, v, DDM_VIEW_CHANGED);
        return 0;
    }
    columns_copy(&v->schema, &fresh);
    columns_clear(&fresh);
    return 0;
}

int ddm_view_begin(ddm_view *v)
{
    CHECK_VIEW(v);
    content_free(v->building);
    v->building = content_new(v->kind, &v->schema);
    return 0;
}

/* Close the current row: a row with fewer cells than columns is an error. */
static void finish_row(Content *c)
{
    if (c->in_row && c->cur_col < c->columns.n) {
        /* Pad so the cell array stays rectangular; the content is refused anyway. */
        Cell null_cell = {0};
        while (c->cur_col < c->columns.n) {
            g_array_append_val(c->cells, null_cell);
            c->cur_col++;
        }
        mark_bad(c, "a row has fewer cells than the table has columns");
    }
    c->in_row = FALSE;
}

int ddm_view_row(ddm_view *v)
{
    Content *c;
    gboolean was_short;

    CHECK_VIEW(v);
    if (v->kind != DDM_VIEW_TABLE)
        return -EINVAL;
    if (!v->building)
        return -EPROTO;
    c = v->building;
    if (c->columns.n == 0) {
        mark_bad(c, "a row was added to a table without columns");
        return -EINVAL;
    }
    was_short = c->in_row && c->cur_col < c->columns.n;
    finish_row(c);
    if (c->n_rows >= DDM_VIEW_MAX_ROWS || (gsize)(c->n_rows + 1) * c->columns.n > DDM_VIEW_MAX_CELLS) {
        c->rows_capped = TRUE;
        c->row_dropped = TRUE;
        return -E2BIG;
    }
    c->row_dropped = FALSE;
    c->in_row = TRUE;
    c->cur_col = 0;
    c->n_rows++;
    return was_short ? -EINVAL : 0;
}

/* Append @cell to the current row after checking it against its column. */
static int add_cell(ddm_view *v, Cell cell, const char *str)
{
    Content *c;
    const Column *col;
    int rc = 0;

    CHECK_VIEW(v);
    if (v->kind != DDM_VIEW_TABLE)
        return -EINVAL;
    if (!v->building)
        return -EPROTO;
    c = v->building;
    if (c->row_dropped)
        return -E2BIG;
    if (!c->in_row) {
        mark_bad(c, "a cell was given before any row");
        return -EPROTO;
    }
    if (c->cur_col >= c->columns.n) {
        mark_bad(c, "a row has more cells than the table has columns");
        return -EINVAL;
    }
    col = &c->columns.cols[c->cur_col];
    if (cell.type == DDM_VAL_INT && col->type == DDM_VAL_DOUBLE) {
        cell.type = DDM_VAL_DOUBLE;
        cell.u.d = (double)cell.u.i;
    }
    if (cell.type != 0 && cell.type != col->type) {
        mark_bad(c, "a cell's type does not match its column");
        cell.type = 0;
        rc = -EINVAL;
    } else if (cell.type == DDM_VAL_STR) {
        gboolean truncated;
        cell.u.s = content_intern(c, str, &truncated);
        if (!cell.u.s) {
            cell.type = 0;
            rc = -E2BIG;
        } else if (truncated) {
            rc = -E2BIG;
        }
    }
    g_array_append_val(c->cells, cell);
    c->cur_col++;
    return rc;
}

int ddm_view_cell_str(ddm_view *v, const char *s)
{
    Cell cell = {.type = s ? DDM_VAL_STR : 0};
    return add_cell(v, cell, s);
}

int ddm_view_cell_int(ddm_view *v, int64_t x)
{
    Cell cell = {.type = DDM_VAL_INT, .u.i = x};
    return add_cell(v, cell, NULL);
}

int ddm_view_cell_double(ddm_view *v, double x)
{
    Cell cell = {.type = DDM_VAL_DOUBLE, .u.d = x};
    return add_cell(v, cell, NULL);
}

int ddm_view_cell_bool(ddm_view *v, int b)
{
    Cell cell = {.type = DDM_VAL_BOOL, .u.b = b != 0};
    return add_cell(v, cell, NULL);
}

static int set_field(ddm_view *v, const char *key, ddm_value_type type, Cell cell, const char *str)
{
    Content *c;
    gboolean truncated = FALSE, key_truncated = FALSE;
    gpointer idx;
    int rc = 0;

    CHECK_VIEW(v);
    if (v->kind != DDM_VIEW_RECORD || !key)
        return -EINVAL;
    if (!v->building)
        return -EPROTO;
    c = v->building;
    if (cell.type == DDM_VAL_STR) {
        cell.u.s = content_intern(c, str, &truncated);
        if (!cell.u.s)
            return -E2BIG;
        if (truncated)
            rc = -E2BIG;
    }
    idx = g_hash_table_lookup(c->field_index, key);
    if (idx) {
        Field *old = &g_array_index(c->fields, Field, GPOINTER_TO_UINT(idx) - 1);
        old->type = type;
        old->value = cell;
        return rc;
    }
    if (c->fields->len >= DDM_VIEW_MAX_FIELDS)
        return -E2BIG;
    {
        Field f;
        f.key = content_intern(c, key, &key_truncated);
        if (!f.key)
            return -E2BIG;
        /* A cut or repaired key may now equal an existing one. */
        idx = g_hash_table_lookup(c->field_index, f.key);
        if (idx) {
            Field *old = &g_array_index(c->fields, Field, GPOINTER_TO_UINT(idx) - 1);
            old->type = type;
            old->value = cell;
            return key_truncated ? -E2BIG : rc;
        }
        f.type = type;
        f.value = cell;
        g_array_append_val(c->fields, f);
        g_hash_table_insert(c->field_index, (gpointer)f.key, GUINT_TO_POINTER(c->fields->len));
    }
    return key_truncated ? -E2BIG : rc;
}

int ddm_view_field_str(ddm_view *v, const char *key, const char *s)
{
    Cell cell = {.type = s ? DDM_VAL_STR : 0};
    return set_field(v, key, DDM_VAL_STR, cell, s);
}

int ddm_view_field_int(ddm_view *v, const char *key, int64_t x)
{
    Cell cell = {.type = DDM_VAL_INT, .u.i = x};
    return set_field(v, key, DDM_VAL_INT, cell, NULL);
}

int ddm_view_field_double(ddm_view *v, const char *key, double x)
{
    Cell cell = {.type = DDM_VAL_DOUBLE, .u.d = x};
    return set_field(v, key, DDM_VAL_DOUBLE, cell, NULL);
}

int ddm_view_field_bool(ddm_view *v, const char *key, int b)
{
    Cell cell = {.type = DDM_VAL_BOOL, .u.b = b != 0};
    return set_field(v, key, DDM_VAL_BOOL, cell, NULL);
}

int ddm_view_blob(ddm_view *v, const char *media_type, const void *data, size_t len)
{
    Content *c;

    CHECK_VIEW(v);
    if (v->kind != DDM_VIEW_BLOB || (len > 0 && !data))
        return -EINVAL;
    if (!v->building)
        return -EPROTO;
    if (len > DDM_VIEW_MAX_BLOB)
        return -EFBIG;
    c = v->building;
    g_free(c->blob);
    g_free(c->media_type);
    c->blob = NULL;
    c->blob_len = 0;
    if (len > 0) {
        c->blob = g_malloc(len);
        memcpy(c->blob, data, len);
        c->blob_len = len;
    }
    if (media_type && *media_type && strlen(media_type) <= 255 && g_utf8_validate(media_type, -1, NULL))
        c->media_type = g_strdup(media_type);
    else
        c->media_type = g_strdup("application/octet-stream");
    return 0;
}

int ddm_view_commit(ddm_view *v)
{
    Content *c;

    CHECK_VIEW(v);
    if (!v->building)
        return -EPROTO;
    c = v->building;
    v->building = NULL;
    if (v->kind == DDM_VIEW_TABLE)
        finish_row(c);
    if (c->bad) {
        if (!v->warned)
            g_warning("view \"%s\"%s%s of %s not updated: %s", v->name, v->vm_key ? " of VM " : "",
                      v->vm_key ? v->vm_key : "", v->owner, c->bad_reason);
        else
            g_debug("view \"%s\" of %s not updated: %s", v->name, v->owner, c->bad_reason);
        v->warned = TRUE;
        content_free(c);
        return -EINVAL;
    }
    if (c->rows_capped && !v->warned_cap) {
        g_warning("view \"%s\" of %s: more than %u rows or %u cells, the rest were dropped", v->name,
                  v->owner, (unsigned)DDM_VIEW_MAX_ROWS, (unsigned)DDM_VIEW_MAX_CELLS);
        v->warned_cap = TRUE;
    }
    content_free(v->committed);
    v->committed = c;
    v->version++;
    if (v->store && !v->unpublished)
        notify(v->store, v, DDM_VIEW_CHANGED);
    return 0;
}

const guint8 *ddm_view_blob_data(const ddm_view *v, gsize *len, const char **media_type)
{
    if (len)
        *len = 0;
    if (media_type)
        *media_type = NULL;
    if (!ddm_view_is_valid(v) || v->kind != DDM_VIEW_BLOB || !v->committed->media_type)
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
    w = g_new0(Watch, 1);
    w->id = store->next_watch_id++;
    if (store->next_watch_id == 0)
        store->next_watch_id = 1;
    w->name = g_strdup(name);
    w->vm_key = g_strdup(vm_key);
    store->watches = g_list_prepend(store->watches, w);
    return w->id;
}

void ddm_views_unwatch(DdmViews *store, guint watch_id)
{
    g_return_if_fail(store != NULL);
    for (GList *l = store->watches; l; l = l->next) {
        Watch *w = l->data;
        if (w->id == watch_id) {
            store->watches = g_list_delete_link(store->watches, l);
            watch_free(w);
            return;
        }
    }
}

int ddm_view_watchers(const ddm_view *v)
{
    int n = 0;

    if (!ddm_view_is_valid(v) || !v->store || v->unpublished)
        return 0;
    for (GList *l = v->store->watches; l; l = l->next) {
        const Watch *w = l->data;
        if (w->name && strcmp(w->name, v->name) != 0)
            continue;
        if (w->vm_key && g_strcmp0(w->vm_key, v->vm_key) != 0)
            continue;
        n++;
    }
    return n;
}

/* --------------------------------------------------------------- JSON */

static const char *type_name(ddm_value_type t)
{
    switch (t) {
    case DDM_VAL_STR: return "str";
    case DDM_VAL_INT: return "int";
    case DDM_VAL_DOUBLE: return "double";
    case DDM_VAL_BOOL: return "bool";
    }
    return "str";
}

static const char *kind_name(ddm_view_kind k)
{
    switch (k) {
    case DDM_VIEW_TABLE: return "table";
    case DDM_VIEW_RECORD: return "record";
    case DDM_VIEW_BLOB: return "blob";
    }
    return "table";
}

static void add_cell_value(JsonBuilder *b, const Cell *cell)
{
    switch (cell->type) {
    case DDM_VAL_STR: json_builder_add_string_value(b, cell->u.s); break;
    case DDM_VAL_INT: json_builder_add_int_value(b, cell->u.i); break;
    case DDM_VAL_DOUBLE:
        /* JSON has no NaN or infinity. */
        if (isfinite(cell->u.d))
            json_builder_add_double_value(b, cell->u.d);
        else
            json_builder_add_null_value(b);
        break;
    case DDM_VAL_BOOL: json_builder_add_boolean_value(b, cell->u.b); break;
    default: json_builder_add_null_value(b); break;
    }
}

JsonNode *ddm_view_to_json(const ddm_view *v, gboolean with_blob_data)
{
    JsonBuilder *b;
    JsonNode *root;
    const Content *c;

    g_return_val_if_fail(ddm_view_is_valid(v), NULL);
    c = v->committed;
    b = json_builder_new();
    json_builder_begin_object(b);
    json_builder_set_member_name(b, "name");
    json_builder_add_string_value(b, v->name);
    json_builder_set_member_name(b, "vm");
    if (v->vm_key)
        json_builder_add_string_value(b, v->vm_key);
    else
        json_builder_add_null_value(b);
    json_builder_set_member_name(b, "owner");
    json_builder_add_string_value(b, v->owner);
    json_builder_set_member_name(b, "title");
    json_builder_add_string_value(b, v->title);
    json_builder_set_member_name(b, "kind");
    json_builder_add_string_value(b, kind_name(v->kind));
    json_builder_set_member_name(b, "version");
    json_builder_add_int_value(b, (gint64)v->version);

    if (v->kind == DDM_VIEW_TABLE) {
        guint ncols = c->columns.n;
        json_builder_set_member_name(b, "columns");
        json_builder_begin_array(b);
        for (guint i = 0; i < ncols; i++) {
            const Column *col = &c->columns.cols[i];
            json_builder_begin_object(b);
            json_builder_set_member_name(b, "name");
            json_builder_add_string_value(b, col->name);
            json_builder_set_member_name(b, "type");
            json_builder_add_string_value(b, type_name(col->type));
            json_builder_set_member_name(b, "unit");
            if (col->unit)
                json_builder_add_string_value(b, col->unit);
            else
                json_builder_add_null_value(b);
            json_builder_end_object(b);
        }
        json_builder_end_array(b);
        json_builder_set_member_name(b, "rows");
        json_builder_begin_array(b);
        for (guint r = 0; r < c->n_rows && ncols > 0; r++) {
            json_builder_begin_array(b);
            for (guint k = 0; k < ncols; k++)
                add_cell_value(b, &g_array_index(c->cells, Cell, (gsize)r * ncols + k));
            json_builder_end_array(b);
        }
        json_builder_end_array(b);
    } else if (v->kind == DDM_VIEW_RECORD) {
        json_builder_set_member_name(b, "fields");
        json_builder_begin_array(b);
        for (guint i = 0; i < c->fields->len; i++) {
            const Field *f = &g_array_index(c->fields, Field, i);
            json_builder_begin_object(b);
            json_builder_set_member_name(b, "key");
            json_builder_add_string_value(b, f->key);
            json_builder_set_member_name(b, "type");
            json_builder_add_string_value(b, type_name(f->type));
            json_builder_set_member_name(b, "value");
            add_cell_value(b, &f->value);
            json_builder_end_object(b);
        }
        json_builder_end_array(b);
    } else {
        json_builder_set_member_name(b, "media_type");
        if (c->media_type)
            json_builder_add_string_value(b, c->media_type);
        else
            json_builder_add_null_value(b);
        json_builder_set_member_name(b, "size");
        json_builder_add_int_value(b, (gint64)c->blob_len);
        if (with_blob_data) {
            char *b64 = g_base64_encode(c->blob ? c->blob : (const guchar *)"", c->blob_len);
            json_builder_set_member_name(b, "data_base64");
            json_builder_add_string_value(b, b64);
            g_free(b64);
        }
    }
    json_builder_end_object(b);
    root = json_builder_get_root(b);
    g_object_unref(b);
    return root;
}
