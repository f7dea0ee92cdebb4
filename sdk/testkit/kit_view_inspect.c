/* SPDX-License-Identifier: Apache-2.0
 *
 * The test kit's view store, test side: finding views, setting watchers and
 * the expected builder errors, and reading committed content (rows, cells,
 * fields, blob). The plugin side that builds them is kit_views.c.
 * A reader handed a NULL view fails the test with a message naming the
 * reader, the column or field asked for and the last lookup that found
 * nothing (which view, of which VM, and the views that VM has).
 */
#include "kit-private.h"

/* The last view lookup that returned NULL, said in words ("" after one that
 * found its view): what a reader given that NULL reports. The kit serves
 * one test at a time (cmocka runs them one after the other). */
static char last_miss[512];

static void note_miss(fake_host *fh, ddm_vm *vm, const char *name)
{
    size_t i, n;
    int any = 0;
    if (vm && vm->info.key)
        n = (size_t)snprintf(last_miss, sizeof last_miss, "no view '%s' of VM %s (pid %d)",
                             name, vm->info.key, (int)vm->info.pid);
    else if (vm)
        n = (size_t)snprintf(last_miss, sizeof last_miss, "no view '%s' of VM pid %d", name,
                             (int)vm->info.pid);
    else
        n = (size_t)snprintf(last_miss, sizeof last_miss, "no global view '%s'", name);
    for (i = 0; i < fh->views.n && n < sizeof last_miss; i++) {
        ddm_view *v = fh->views.v[i];
        if (v->vm != vm || v->is_cmd_result)
            continue;
        n += (size_t)snprintf(last_miss + n, sizeof last_miss - n, "%s'%s'",
                              any ? ", " : (vm ? "; that VM has " : "; there are "), v->name);
        any = 1;
    }
    if (!any && n < sizeof last_miss)
        snprintf(last_miss + n, sizeof last_miss - n, "; %s", vm ? "that VM has none" : "none");
}

void fh_note_view_miss(const char *what)
{
    snprintf(last_miss, sizeof last_miss, "%s", what);
}

/* A reader's check of its view: a NULL one fails the test, saying why. */
static void need_view(const ddm_view *v, const char *reader, const char *key)
{
    if (v)
        return;
    fail_msg("fake-host: %s(NULL%s%s%s): the view is NULL (%s)", reader, key ? ", \"" : "",
             key ? key : "", key ? "\"" : "",
             last_miss[0] ? last_miss : "it was never found: check the lookup that gave it");
}

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

/* A lookup's result, remembered for the readers' message if NULL. */
static ddm_view *noted(fake_host *fh, ddm_vm *vm, const char *name, ddm_view *v)
{
    if (v)
        last_miss[0] = '\0';
    else
        note_miss(fh, vm, name);
    return v;
}

/* As a frontend's look at the core: a declared view not made yet is made
 * first (1.6). */
ddm_view *fake_view_find(fake_host *fh, ddm_vm *vm, const char *name)
{
    ddm_view *v = view_find_made(fh, vm, name);
    if (v || !vm)
        return noted(fh, vm, name, v);
    fh_make_declared(fh, vm, name);
    return noted(fh, vm, name, view_find_made(fh, vm, name));
}

ddm_view *fake_view_find_made(fake_host *fh, ddm_vm *vm, const char *name)
{
    return noted(fh, vm, name, view_find_made(fh, vm, name));
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
    need_view(v, __func__, NULL);
    return v->kind;
}

const char *fake_view_title(ddm_view *v)
{
    need_view(v, __func__, NULL);
    return v->title;
}

unsigned fake_view_version(ddm_view *v)
{
    need_view(v, __func__, NULL);
    return v->version;
}

void fake_view_set_watchers(ddm_view *v, int n)
{
    need_view(v, __func__, NULL);
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
    need_view(v, __func__, NULL);
    return (int)v->committed.rows.n;
}

int fake_view_n_cols(ddm_view *v)
{
    need_view(v, __func__, NULL);
    return (int)v->n_cols;
}

int fake_view_col(ddm_view *v, const char *name)
{
    size_t i;
    need_view(v, __func__, name);
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

static fh_cell *cell_at(ddm_view *v, int row, const char *col, const char *reader)
{
    int c;
    need_view(v, reader, col);
    c = fake_view_col(v, col);
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
    fh_cell *c = cell_at(v, row, col, __func__);
    return !c || c->is_null;
}

const char *fake_view_cell_str(ddm_view *v, int row, const char *col)
{
    return cell_text(cell_at(v, row, col, __func__));
}

int64_t fake_view_cell_int(ddm_view *v, int row, const char *col)
{
    return cell_int(cell_at(v, row, col, __func__));
}

double fake_view_cell_double(ddm_view *v, int row, const char *col)
{
    return cell_double(cell_at(v, row, col, __func__));
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

static fh_field *field_at(ddm_view *v, const char *key, const char *reader)
{
    size_t i;
    need_view(v, reader, key);
    for (i = 0; i < v->committed.fields.n; i++) {
        fh_field *f = v->committed.fields.v[i];
        if (strcmp(f->key, key) == 0)
            return f;
    }
    return NULL;
}

int fake_view_n_fields(ddm_view *v)
{
    need_view(v, __func__, NULL);
    return (int)v->committed.fields.n;
}

int fake_view_has_field(ddm_view *v, const char *key)
{
    return field_at(v, key, __func__) != NULL;
}

const char *fake_view_field_str(ddm_view *v, const char *key)
{
    fh_field *f = field_at(v, key, __func__);
    return f ? cell_text(&f->cell) : NULL;
}

int64_t fake_view_field_int(ddm_view *v, const char *key)
{
    fh_field *f = field_at(v, key, __func__);
    return f ? cell_int(&f->cell) : 0;
}

double fake_view_field_double(ddm_view *v, const char *key)
{
    fh_field *f = field_at(v, key, __func__);
    return f ? cell_double(&f->cell) : 0;
}

ddm_value_type fake_view_field_type(ddm_view *v, const char *key)
{
    fh_field *f = field_at(v, key, __func__);
    return f ? f->cell.type : (ddm_value_type)0;
}

const uint8_t *fake_view_blob(ddm_view *v, size_t *len, const char **media_type)
{
    need_view(v, __func__, NULL);
    if (len)
        *len = v->committed.blob_len;
    if (media_type)
        *media_type = v->committed.media_type;
    return v->committed.has_blob ? (v->committed.blob ? v->committed.blob : (const uint8_t *)"")
                                 : NULL;
}
