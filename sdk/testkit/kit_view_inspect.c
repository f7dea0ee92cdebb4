/* SPDX-License-Identifier: Apache-2.0
 *
 * The test kit's view store, test side: finding views, setting watchers and
 * the expected builder errors, and reading committed content (rows, cells,
 * fields, blob). The plugin side that builds them is kit_views.c.
 */
#include "kit-private.h"

static ddm_view *view_find_made(fake_host *fh, ddm_vm *vm, const char *name)
{
    size_t i;
    for (i = 0; i < fh->views.n; i++) {
        ddm_view *v = fh->views.v[i];
        if (v->vm == vm && strcmp(v->name, name) == 0)
            return v;
    }
    return NULL;
}

/* As a frontend's look at the core: a declared view not made yet is made
 * first (1.6). */
ddm_view *fake_view_find(fake_host *fh, ddm_vm *vm, const char *name)
{
    ddm_view *v = view_find_made(fh, vm, name);
    if (v || !vm)
        return v;
    fh_make_declared(fh, vm, name);
    return view_find_made(fh, vm, name);
}

ddm_view *fake_view_find_made(fake_host *fh, ddm_vm *vm, const char *name)
{
    return view_find_made(fh, vm, name);
}

int fake_host_n_views_made(fake_host *fh, ddm_vm *vm)
{
    size_t i;
    int n = 0;
    for (i = 0; i < fh->views.n; i++)
        if (((ddm_view *)fh->views.v[i])->vm == vm)
            n++;
    return n;
}

int fake_host_n_views(fake_host *fh, ddm_vm *vm)
{
    size_t i;
    int n = 0;
    if (vm)
        fh_make_declared(fh, vm, NULL); /* a listing of the VM's views makes them all */
    for (i = 0; i < fh->views.n; i++)
        if (((ddm_view *)fh->views.v[i])->vm == vm)
            n++;
    return n;
}

ddm_view_kind fake_view_kind(ddm_view *v)
{
    assert_non_null(v);
    return v->kind;
}

const char *fake_view_title(ddm_view *v)
{
    assert_non_null(v);
    return v->title;
}

unsigned fake_view_version(ddm_view *v)
{
    assert_non_null(v);
    return v->version;
}

void fake_view_set_watchers(ddm_view *v, int n)
{
    assert_non_null(v);
    if ((v->watchers > 0) != (n > 0))
        v->fh->watched_views += n > 0 ? 1 : -1;
    v->watchers = n;
    fh_watch_gen_bump(v->fh, 1);
}

unsigned long fake_host_watcher_queries(fake_host *fh)
{
    return fh->watcher_queries;
}

void fake_host_set_vm_list_watchers(fake_host *fh, int n)
{
    fh->vm_list_watchers = n;
    fh_watch_gen_bump(fh, 1); /* as the core: a watch began or ended */
}

void fake_host_set_default_watchers(fake_host *fh, int n)
{
    fh->default_watchers = n;
    fh_watch_gen_bump(fh, 1);
    if (n > 0)
        fh_make_declared(fh, NULL, NULL); /* as a watch of every view: they exist */
}

void fake_host_expect_view_errors(fake_host *fh)
{
    fh->expect_view_errors = 1;
}

int fake_host_view_errors(fake_host *fh)
{
    return fh->view_errors;
}

int fake_view_n_rows(ddm_view *v)
{
    assert_non_null(v);
    return (int)v->committed.rows.n;
}

int fake_view_n_cols(ddm_view *v)
{
    assert_non_null(v);
    return (int)v->n_cols;
}

int fake_view_col(ddm_view *v, const char *name)
{
    size_t i;
    assert_non_null(v);
    for (i = 0; i < v->n_cols; i++)
        if (strcmp(v->cols[i].name, name) == 0)
            return (int)i;
    return -1;
}

const char *fake_view_col_unit(ddm_view *v, const char *name)
{
    int c = fake_view_col(v, name);
    return c < 0 ? NULL : v->cols[c].unit;
}

ddm_value_type fake_view_col_type(ddm_view *v, const char *name)
{
    int c = fake_view_col(v, name);
    return c < 0 ? (ddm_value_type)0 : v->cols[c].type;
}

static fh_cell *cell_at(ddm_view *v, int row, const char *col)
{
    int c = fake_view_col(v, col);
    if (c < 0) {
        fail_msg("fake-host: view '%s' has no column '%s'", v->name, col);
        return NULL;
    }
    if (row < 0 || (size_t)row >= v->committed.rows.n)
        return NULL;
    return &((fh_cell *)v->committed.rows.v[row])[c];
}

static const char *cell_text(fh_cell *c)
{
    char buf[64];
    if (!c || c->is_null)
        return NULL;
    if (c->type == DDM_VAL_STR)
        return c->s ? c->s : "";
    if (!c->text) {
        if (c->type == DDM_VAL_INT)
            snprintf(buf, sizeof buf, "%" PRId64, c->i);
        else if (c->type == DDM_VAL_BOOL)
            snprintf(buf, sizeof buf, "%s", c->i ? "true" : "false");
        else
            snprintf(buf, sizeof buf, "%g", c->d);
        c->text = xstrdup(buf);
    }
    return c->text;
}

static int64_t cell_int(fh_cell *c)
{
    if (!c || c->is_null)
        return 0;
    if (c->type != DDM_VAL_INT && c->type != DDM_VAL_BOOL)
        fail_msg("fake-host: cell is not an int (type %d)", (int)c->type);
    return c->i;
}

static double cell_double(fh_cell *c)
{
    if (!c || c->is_null)
        return 0;
    if (c->type == DDM_VAL_INT || c->type == DDM_VAL_BOOL)
        return (double)c->i;
    if (c->type != DDM_VAL_DOUBLE)
        fail_msg("fake-host: cell is not a number (type %d)", (int)c->type);
    return c->d;
}

int fake_view_cell_is_null(ddm_view *v, int row, const char *col)
{
    fh_cell *c = cell_at(v, row, col);
    return !c || c->is_null;
}

const char *fake_view_cell_str(ddm_view *v, int row, const char *col)
{
    return cell_text(cell_at(v, row, col));
}

int64_t fake_view_cell_int(ddm_view *v, int row, const char *col)
{
    return cell_int(cell_at(v, row, col));
}

double fake_view_cell_double(ddm_view *v, int row, const char *col)
{
    return cell_double(cell_at(v, row, col));
}

int fake_view_find_row(ddm_view *v, const char *col, const char *text)
{
    int r;
    for (r = 0; r < fake_view_n_rows(v); r++) {
        const char *t = fake_view_cell_str(v, r, col);
        if (t && strcmp(t, text) == 0)
            return r;
    }
    return -1;
}

static fh_field *field_at(ddm_view *v, const char *key)
{
    size_t i;
    assert_non_null(v);
    for (i = 0; i < v->committed.fields.n; i++) {
        fh_field *f = v->committed.fields.v[i];
        if (strcmp(f->key, key) == 0)
            return f;
    }
    return NULL;
}

int fake_view_n_fields(ddm_view *v)
{
    assert_non_null(v);
    return (int)v->committed.fields.n;
}

int fake_view_has_field(ddm_view *v, const char *key)
{
    return field_at(v, key) != NULL;
}

const char *fake_view_field_str(ddm_view *v, const char *key)
{
    fh_field *f = field_at(v, key);
    return f ? cell_text(&f->cell) : NULL;
}

int64_t fake_view_field_int(ddm_view *v, const char *key)
{
    fh_field *f = field_at(v, key);
    return f ? cell_int(&f->cell) : 0;
}

double fake_view_field_double(ddm_view *v, const char *key)
{
    fh_field *f = field_at(v, key);
    return f ? cell_double(&f->cell) : 0;
}

ddm_value_type fake_view_field_type(ddm_view *v, const char *key)
{
    fh_field *f = field_at(v, key);
    return f ? f->cell.type : (ddm_value_type)0;
}

const uint8_t *fake_view_blob(ddm_view *v, size_t *len, const char **media_type)
{
    assert_non_null(v);
    if (len)
        *len = v->committed.blob_len;
    if (media_type)
        *media_type = v->committed.media_type;
    return v->committed.has_blob ? (v->committed.blob ? v->committed.blob : (const uint8_t *)"")
                                 : NULL;
}
