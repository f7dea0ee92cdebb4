/* SPDX-License-Identifier: Apache-2.0
 *
 * The test kit's view store, plugin side: creating views, the builder
 * (columns, rows, cells, fields, blob) with the core's caps, commit, free
 * and watchers. The test side that reads them is kit_view_inspect.c.
 */
#include "kit-private.h"

static void cell_clear(fh_cell *c)
{
    free(c->s);
    free(c->text);
    memset(c, 0, sizeof *c);
}

static void content_clear(ddm_view *v, fh_content *c)
{
    size_t i, j;
    for (i = 0; i < c->rows.n; i++) {
        fh_cell *row = c->rows.v[i];
        for (j = 0; j < v->n_cols; j++)
            cell_clear(&row[j]);
        free(row);
    }
    vec_clear(&c->rows);
    for (i = 0; i < c->fields.n; i++) {
        fh_field *f = c->fields.v[i];
        free(f->key);
        cell_clear(&f->cell);
        free(f);
    }
    vec_clear(&c->fields);
    free(c->media_type);
    free(c->blob);
    memset(c, 0, sizeof *c);
}

static void cols_free(ddm_view *v)
{
    size_t i;
    for (i = 0; i < v->n_cols; i++) {
        free((char *)v->cols[i].name);
        free((char *)v->cols[i].unit);
    }
    free(v->cols);
    v->cols = NULL;
    v->n_cols = 0;
}

void fh_view_destroy(ddm_view *v)
{
    if (v->watchers > 0 && v->fh)
        v->fh->watched_views--;
    content_clear(v, &v->committed);
    content_clear(v, &v->building);
    cols_free(v);
    free(v->name);
    free(v->title);
    free(v);
}

ddm_view *fh_view_alloc(fake_host *fh, ddm_vm *vm, const char *name, ddm_view_kind kind,
                        const char *title)
{
    ddm_view *v = xcalloc(1, sizeof *v);
    v->fh = fh;
    v->vm = vm;
    v->name = xstrdup(name);
    v->title = xstrdup(title);
    v->kind = kind;
    v->watchers = -1;
    /* as the core: a new view may be watched; the sleeping timers wake
     * only if some watch exists (the core moves its generation only then) */
    fh_watch_gen_bump(fh, fh->default_watchers > 0 || fh->vm_list_watchers > 0 ||
                              fh->watched_views > 0);
    return v;
}

int fh_view_error(ddm_view *v, int err, const char *what)
{
    v->fh->view_errors++;
    fh_logf(v->fh, DDM_LOG_WARNING, "fake-host: view '%s': %s", v->name ? v->name : "?", what);
    return err;
}

/* A copy of @s as the core keeps it: at most DDM_VIEW_MAX_STRING bytes, cut
 * at a UTF-8 character boundary (*@rc = -E2BIG, the value kept), within
 * the content's DDM_VIEW_MAX_STRING_BYTES (NULL and -E2BIG past it). */
static char *view_string(fh_content *c, const char *s, int *rc)
{
    size_t len = strlen(s);
    size_t n = ddm_utf8_cut(s, len, DDM_VIEW_MAX_STRING);
    char *out;
    if (n < len)
        *rc = -E2BIG;
    if (c->string_bytes + n + 1 > DDM_VIEW_MAX_STRING_BYTES) {
        *rc = -E2BIG;
        return NULL;
    }
    c->string_bytes += n + 1;
    out = xcalloc(n + 1, 1);
    memcpy(out, s, n);
    return out;
}

ddm_view *fh_view_new(ddm_plugin *self, ddm_vm *vm, const char *name, ddm_view_kind kind,
                      const char *title)
{
    fake_host *fh = host_of(self);
    ddm_view *v;
    assert_non_null(name);
    if (kind != DDM_VIEW_TABLE && kind != DDM_VIEW_RECORD && kind != DDM_VIEW_BLOB)
        return NULL;
    if (vm && vm->gone)
        return NULL;
    if (fake_view_find_made(fh, vm, name) || fh->views.n >= FH_MAX_ITEMS)
        return NULL;
    v = fh_view_alloc(fh, vm, name, kind, title);
    vec_push(&fh->views, v);
    return v;
}

int fh_view_set_columns(ddm_view *v, const ddm_column *cols, size_t n_cols)
{
    size_t i;
    assert_non_null(v);
    if (v->kind != DDM_VIEW_TABLE)
        return fh_view_error(v, -EINVAL, "set_columns on a non-table");
    if (n_cols && !cols)
        return fh_view_error(v, -EINVAL, "set_columns without columns");
    if (n_cols > DDM_VIEW_MAX_COLUMNS) { /* a limit, not misuse: the old columns stay */
        fh_logf(v->fh, DDM_LOG_DEBUG, "fake-host: view '%s': more than %u columns refused",
                v->name, DDM_VIEW_MAX_COLUMNS);
        return -EINVAL;
    }
    content_clear(v, &v->committed);
    content_clear(v, &v->building);
    v->building_open = 0;
    cols_free(v);
    v->cols = xcalloc(n_cols, sizeof *v->cols);
    v->n_cols = n_cols;
    for (i = 0; i < n_cols; i++) {
        if (!cols[i].name)
            return fh_view_error(v, -EINVAL, "column without a name");
        v->cols[i].name = xstrdup(cols[i].name);
        v->cols[i].type = cols[i].type;
        v->cols[i].unit = xstrdup(cols[i].unit);
    }
    return 0;
}

int fh_view_begin(ddm_view *v)
{
    assert_non_null(v);
    content_clear(v, &v->building);
    v->building_open = 1;
    v->cur_cells = 0;
    v->row_dropped = 0;
    return 0;
}

static int row_complete(ddm_view *v)
{
    if (v->building.rows.n && v->cur_cells != v->n_cols)
        return fh_view_error(v, -EINVAL, "row has fewer cells than columns");
    return 0;
}

int fh_view_row(ddm_view *v)
{
    assert_non_null(v);
    if (!v->building_open)
        return fh_view_error(v, -EPROTO, "row without begin");
    if (v->kind != DDM_VIEW_TABLE || v->n_cols == 0)
        return fh_view_error(v, -EINVAL, "row on a non-table or a table without columns");
    if (row_complete(v))
        return -EINVAL;
    if (v->building.rows.n >= DDM_VIEW_MAX_ROWS ||
        (v->building.rows.n + 1) * v->n_cols > DDM_VIEW_MAX_CELLS) {
        v->row_dropped = 1; /* as the core: dropped, and so are its cells */
        return -E2BIG;
    }
    v->row_dropped = 0;
    vec_push(&v->building.rows, xcalloc(v->n_cols, sizeof(fh_cell)));
    v->cur_cells = 0;
    return 0;
}

static fh_cell *next_cell(ddm_view *v, ddm_value_type type, int is_null, int *err)
{
    fh_cell *row;
    *err = 0;
    if (!v->building_open) {
        *err = fh_view_error(v, -EPROTO, "cell without begin");
        return NULL;
    }
    if (v->row_dropped) {
        *err = -E2BIG;
        return NULL;
    }
    if (v->kind != DDM_VIEW_TABLE || !v->building.rows.n) {
        *err = fh_view_error(v, -EINVAL, "cell without a row");
        return NULL;
    }
    if (v->cur_cells >= v->n_cols) {
        *err = fh_view_error(v, -EINVAL, "more cells than columns");
        return NULL;
    }
    if (!is_null && v->cols[v->cur_cells].type != type &&
        !(type == DDM_VAL_INT && v->cols[v->cur_cells].type == DDM_VAL_DOUBLE)) {
        char buf[160];
        snprintf(buf, sizeof buf, "cell type %d for column '%s' of type %d", (int)type,
                 v->cols[v->cur_cells].name, (int)v->cols[v->cur_cells].type);
        *err = fh_view_error(v, -EINVAL, buf);
        return NULL;
    }
    row = v->building.rows.v[v->building.rows.n - 1];
    row[v->cur_cells].type = v->cols[v->cur_cells].type;
    row[v->cur_cells].is_null = is_null;
    return &row[v->cur_cells++];
}

int fh_view_str(ddm_view *v, const char *value)
{
    int err;
    fh_cell *c = next_cell(v, DDM_VAL_STR, value == NULL, &err);
    if (c && value) {
        c->s = view_string(&v->building, value, &err);
        c->is_null = c->s == NULL;
    }
    return err;
}

int fh_view_int(ddm_view *v, int64_t value)
{
    int err;
    fh_cell *c = next_cell(v, DDM_VAL_INT, 0, &err);
    if (c && c->type == DDM_VAL_DOUBLE)
        c->d = (double)value; /* as the core: an int in a double column is converted */
    else if (c)
        c->i = value;
    return err;
}

int fh_view_double(ddm_view *v, double value)
{
    int err;
    fh_cell *c = next_cell(v, DDM_VAL_DOUBLE, 0, &err);
    if (c)
        c->d = value;
    return err;
}

int fh_view_bool(ddm_view *v, int value)
{
    int err;
    fh_cell *c = next_cell(v, DDM_VAL_BOOL, 0, &err);
    if (c)
        c->i = value ? 1 : 0;
    return err;
}

static fh_cell *field_cell(ddm_view *v, const char *key, ddm_value_type type, int *err)
{
    size_t i;
    fh_field *f;
    *err = 0;
    if (!v->building_open) {
        *err = fh_view_error(v, -EPROTO, "field without begin");
        return NULL;
    }
    if (v->kind != DDM_VIEW_RECORD || !key) {
        *err = fh_view_error(v, -EINVAL, "field on a non-record or without a key");
        return NULL;
    }
    for (i = 0; i < v->building.fields.n; i++) {
        f = v->building.fields.v[i];
        if (strcmp(f->key, key) == 0) {
            cell_clear(&f->cell);
            f->cell.type = type;
            return &f->cell;
        }
    }
    if (v->building.fields.n >= DDM_VIEW_MAX_FIELDS) {
        *err = -E2BIG;
        return NULL;
    }
    f = xcalloc(1, sizeof *f);
    f->key = view_string(&v->building, key, err);
    if (!f->key) {
        free(f);
        return NULL;
    }
    f->cell.type = type;
    vec_push(&v->building.fields, f);
    return &f->cell;
}

int fh_view_field_str(ddm_view *v, const char *key, const char *value)
{
    int err;
    fh_cell *c = field_cell(v, key, DDM_VAL_STR, &err);
    if (c) {
        c->s = value ? view_string(&v->building, value, &err) : NULL;
        c->is_null = c->s == NULL;
    }
    return err;
}

int fh_view_field_int(ddm_view *v, const char *key, int64_t value)
{
    int err;
    fh_cell *c = field_cell(v, key, DDM_VAL_INT, &err);
    if (c)
        c->i = value;
    return err;
}

int fh_view_field_double(ddm_view *v, const char *key, double value)
{
    int err;
    fh_cell *c = field_cell(v, key, DDM_VAL_DOUBLE, &err);
    if (c)
        c->d = value;
    return err;
}

int fh_view_field_bool(ddm_view *v, const char *key, int value)
{
    int err;
    fh_cell *c = field_cell(v, key, DDM_VAL_BOOL, &err);
    if (c)
        c->i = value ? 1 : 0;
    return err;
}

int fh_view_blob(ddm_view *v, const char *media_type, const void *data, size_t len)
{
    assert_non_null(v);
    if (!v->building_open)
        return fh_view_error(v, -EPROTO, "blob without begin");
    if (v->kind != DDM_VIEW_BLOB || (len && !data))
        return fh_view_error(v, -EINVAL, "blob on a non-blob view or without data");
    if (len > DDM_VIEW_MAX_BLOB)
        return -EFBIG; /* refused, as by the core; the old blob stays */
    free(v->building.blob);
    free(v->building.media_type);
    v->building.blob = exact_copy(data, len);
    v->building.blob_len = len;
    v->building.media_type = xstrdup(media_type);
    v->building.has_blob = 1;
    return 0;
}

int fh_view_commit(ddm_view *v)
{
    assert_non_null(v);
    if (!v->building_open)
        return fh_view_error(v, -EPROTO, "commit without begin");
    if (row_complete(v))
        return -EINVAL;
    content_clear(v, &v->committed);
    v->committed = v->building;
    memset(&v->building, 0, sizeof v->building);
    v->building_open = 0;
    v->cur_cells = 0;
    v->version++;
    return 0;
}

void fh_view_free(ddm_view *v)
{
    fake_host *fh;
    size_t i;
    if (!v)
        return;
    fh = v->fh;
    if (v->is_cmd_result)
        fail_msg("fake-host: view_free on a command result");
    for (i = 0; i < fh->views.n; i++) {
        if (fh->views.v[i] == v) {
            vec_remove_at(&fh->views, i);
            fh_view_destroy(v);
            return;
        }
    }
    fail_msg("fake-host: view_free of an unknown view");
}

uint64_t fh_watch_generation(ddm_plugin *self)
{
    return self->fh->watch_gen;
}

int fh_vm_list_watchers(ddm_plugin *self)
{
    return self->fh->vm_list_watchers;
}

int fh_view_watchers(ddm_view *v)
{
    assert_non_null(v);
    v->fh->watcher_queries++;
    return v->watchers >= 0 ? v->watchers : v->fh->default_watchers;
}
