/* SPDX-License-Identifier: Apache-2.0
 *
 * The view builders (see views.h): set_columns, begin, row, cell_*,
 * field_*, blob and commit, with their refusals at the caps
 * (DDM_VIEW_MAX_ROWS, _COLUMNS, _CELLS, _FIELDS, _BLOB) and the checks that
 * make commit refuse a badly built content.
 */
#include <errno.h>
#include <string.h>

#include "core/views/views-private.h"

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

/* @v's schema becomes (a reference to) @cols. */
static void set_schema(ddm_view *v, const Columns *cols)
{
    Columns schema = ddm_views_columns_of(v->schema);
    ddm_views_columns_copy(&schema, cols);
    v->schema = schema.cols;
}

/* TRUE if @cols (as a plugin gives them) are the columns of @set: then
 * they would make that set again (names and units already valid and
 * short, an empty unit is none). */
static gboolean columns_given_are(const Columns *set, const ddm_column *cols, size_t n)
{
    if (!set->cols || set->n != n)
        return FALSE;
    for (size_t i = 0; i < n; i++) {
        const Column *c = &set->cols[i];
        if (c->type != cols[i].type || strcmp(c->name, cols[i].name) != 0 ||
            strcmp(c->unit ? c->unit : "", cols[i].unit ? cols[i].unit : "") != 0)
            return FALSE;
    }
    return TRUE;
}

/* Remember @set as the one @v's description's views were last given. */
static void desc_remember_columns(ddm_view *v, const Columns *set)
{
    ViewDesc *desc = (ViewDesc *)v->desc; /* interned by views.c, shared by its views */
    Columns remembered = ddm_views_columns_of(desc->columns);
    ddm_views_columns_copy(&remembered, set);
    desc->columns = remembered.cols;
}

int ddm_view_set_columns(ddm_view *v, const ddm_column *cols, size_t n)
{
    Columns fresh = {NULL, 0};

    CHECK_VIEW(v);
    if (v->desc->kind != DDM_VIEW_TABLE || (n > 0 && !cols) || n > DDM_VIEW_MAX_COLUMNS)
        return -EINVAL;
    for (size_t i = 0; i < n; i++) {
        if (!cols[i].name || cols[i].type < DDM_VAL_STR || cols[i].type > DDM_VAL_BOOL)
            return -EINVAL;
    }
    if (n > 0) {
        /* The same view of every VM gets the same columns: the set its
         * description's views were last given is shared as it is, without
         * making and interning a new one (issue 16). */
        Columns last = ddm_views_columns_of(v->desc->columns);
        if (columns_given_are(&last, cols, n))
            ddm_views_columns_copy(&fresh, &last);
    }
    if (n > 0 && !fresh.cols) {
        /* Names and units go through the same UTF-8/length rules as cells. */
        Content *tmp = ddm_views_content_new(DDM_VIEW_BLOB, NULL);
        gboolean tr;
        ddm_views_columns_alloc(&fresh, (guint)n);
        for (size_t i = 0; i < n; i++) {
            const char *name = ddm_views_content_intern(tmp, cols[i].name, &tr);
            const char *unit = cols[i].unit && *cols[i].unit ? ddm_views_content_intern(tmp, cols[i].unit, &tr) : NULL;
            fresh.cols[i].name = g_strdup(name ? name : "");
            fresh.cols[i].type = cols[i].type;
            fresh.cols[i].unit = g_strdup(unit);
        }
        ddm_views_content_free(tmp);
        ddm_views_columns_intern(&fresh);
        desc_remember_columns(v, &fresh);
    }
    if (v->building) {
        /* Rows built so far are cleared, as are the row state and errors. */
        Content *c = ddm_views_content_new(DDM_VIEW_TABLE, &fresh);
        ddm_views_content_free(v->building);
        v->building = c;
    } else if (!ddm_views_columns_equal(&fresh, &v->committed->columns)) {
        /* Outside begin/commit the new (empty) table is published at once. */
        Content *c = ddm_views_content_share_empty(ddm_views_content_new(DDM_VIEW_TABLE, &fresh));
        ddm_views_content_free(v->committed);
        v->committed = c;
        v->version++;
        set_schema(v, &fresh);
        ddm_views_columns_clear(&fresh);
        if (v->store && !v->unpublished)
            ddm_views_notify(v->store, v, DDM_VIEW_CHANGED);
        return 0;
    }
    set_schema(v, &fresh);
    ddm_views_columns_clear(&fresh);
    return 0;
}

int ddm_view_begin(ddm_view *v)
{
    CHECK_VIEW(v);
    ddm_views_content_free(v->building);
    Columns schema = ddm_views_columns_of(v->schema);
    v->building = ddm_views_content_new(v->desc->kind, &schema);
    return 0;
}

/* Close the current row: a row with fewer cells than columns is an error. */
static void finish_row(Content *c)
{
    if (c->in_row && c->cur_col < c->columns.n) {
        /* Pad so the cell array stays rectangular; the content is refused anyway. */
        Cell null_cell = {0};
        while (c->cur_col < c->columns.n) {
            ddm_views_content_cell_add(c, &null_cell);
            c->cur_col++;
        }
        mark_bad(c, "a row has fewer cells than the table has columns");
    }
    c->in_row = FALSE;
}

/* The content table @v is building, in @c: 0, -EINVAL (not a valid view,
 * not a table) or -EPROTO (no begin). */
static int table_building(ddm_view *v, Content **c)
{
    CHECK_VIEW(v);
    if (v->desc->kind != DDM_VIEW_TABLE)
        return -EINVAL;
    if (!v->building)
        return -EPROTO;
    *c = v->building;
    return 0;
}

/* TRUE, the content marked capped and its row dropped, if one more row
 * would pass the row or cell cap. */
static gboolean row_capped(Content *c)
{
    if (c->n_rows < DDM_VIEW_MAX_ROWS && (gsize)(c->n_rows + 1) * c->columns.n <= DDM_VIEW_MAX_CELLS)
        return FALSE;
    c->rows_capped = TRUE;
    c->row_dropped = TRUE;
    return TRUE;
}

int ddm_view_row(ddm_view *v)
{
    Content *c = NULL;
    gboolean was_short;
    int rc = table_building(v, &c);

    if (rc)
        return rc;
    if (c->columns.n == 0) {
        mark_bad(c, "a row was added to a table without columns");
        return -EINVAL;
    }
    was_short = c->in_row && c->cur_col < c->columns.n;
    finish_row(c);
    if (row_capped(c))
        return -E2BIG;
    c->row_dropped = FALSE;
    c->in_row = TRUE;
    c->cur_col = 0;
    c->n_rows++;
    return was_short ? -EINVAL : 0;
}

int ddm_view_copy_rows(ddm_view *v, guint first, guint n)
{
    Content *c = NULL;
    const Content *from;
    int rc = table_building(v, &c);

    if (rc)
        return rc;
    from = v->committed;
    if (first > from->n_rows || n > from->n_rows - first)
        return -EINVAL;
    if (n == 0)
        return 0;
    if (!ddm_views_columns_equal(&c->columns, &from->columns))
        return -EINVAL;
    finish_row(c);
    for (guint r = first; r < first + n; r++) {
        if (row_capped(c))
            return -E2BIG;
        c->n_rows++;
        for (guint col = 0; col < c->columns.n; col++) {
            /* the committed cell is of its column's type or null, its string valid and short */
            Cell cell = ddm_views_content_cell(from, (gsize)r * from->columns.n + col);
            if (cell.type == DDM_VAL_STR) {
                const char *above = ddm_views_content_str_above(c);
                cell.u.s = above && strcmp(above, cell.u.s) == 0 ? above
                                                                 : ddm_views_content_copy_string(c, cell.u.s);
                if (!cell.u.s) {
                    cell.type = 0;
                    rc = -E2BIG;
                }
            }
            ddm_views_content_cell_add(c, &cell);
        }
    }
    c->row_dropped = FALSE;
    return rc;
}

/* Append @cell to the current row after checking it against its column. */
static int add_cell(ddm_view *v, Cell cell, const char *str)
{
    Content *c = NULL;
    const Column *col;
    int rc = table_building(v, &c);

    if (rc)
        return rc;
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
        gboolean truncated = FALSE;
        const char *above = ddm_views_content_str_above(c);
        /* equal to a stored string: valid and short, so stored as it is */
        cell.u.s = above && strcmp(above, str) == 0 ? above : ddm_views_content_intern(c, str, &truncated);
        if (!cell.u.s) {
            cell.type = 0;
            rc = -E2BIG;
        } else if (truncated) {
            rc = -E2BIG;
        }
    }
    ddm_views_content_cell_add(c, &cell);
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
    Field *old;
    int rc = 0;

    CHECK_VIEW(v);
    if (v->desc->kind != DDM_VIEW_RECORD || !key)
        return -EINVAL;
    if (!v->building)
        return -EPROTO;
    c = v->building;
    if (cell.type == DDM_VAL_STR) {
        cell.u.s = ddm_views_content_intern(c, str, &truncated);
        if (!cell.u.s)
            return -E2BIG;
        if (truncated)
            rc = -E2BIG;
    }
    old = ddm_views_content_field_find(c, key);
    if (old) {
        old->type = type;
        ddm_views_field_set_value(old, &cell);
        return rc;
    }
    if (ddm_views_content_n_fields(c) >= DDM_VIEW_MAX_FIELDS)
        return -E2BIG;
    {
        Field f;
        f.key = ddm_views_content_intern(c, key, &key_truncated);
        if (!f.key)
            return -E2BIG;
        /* A cut or repaired key may now equal an existing one. */
        old = ddm_views_content_field_find(c, f.key);
        if (old) {
            old->type = type;
            ddm_views_field_set_value(old, &cell);
            return key_truncated ? -E2BIG : rc;
        }
        f.type = type;
        ddm_views_field_set_value(&f, &cell);
        ddm_views_content_field_add(c, &f);
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
    if (v->desc->kind != DDM_VIEW_BLOB || (len > 0 && !data))
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
    if (v->desc->kind == DDM_VIEW_TABLE)
        finish_row(c);
    if (c->bad) {
        if (!v->warned)
            g_warning("view \"%s\"%s%s of %s not updated: %s", v->desc->name, v->vm_key ? " of VM " : "",
                      v->vm_key ? v->vm_key : "", v->desc->owner, c->bad_reason);
        else
            g_debug("view \"%s\" of %s not updated: %s", v->desc->name, v->desc->owner, c->bad_reason);
        v->warned = TRUE;
        ddm_views_content_free(c);
        return -EINVAL;
    }
    if (c->rows_capped && !v->warned_cap) {
        g_warning("view \"%s\" of %s: more than %u rows or %u cells, the rest were dropped", v->desc->name,
                  v->desc->owner, (unsigned)DDM_VIEW_MAX_ROWS, (unsigned)DDM_VIEW_MAX_CELLS);
        v->warned_cap = TRUE;
    }
    ddm_views_content_seal(c);
    c = ddm_views_content_share_empty(c);
    ddm_views_content_free(v->committed);
    v->committed = c;
    v->version++;
    if (v->store && !v->unpublished)
        ddm_views_notify(v->store, v, DDM_VIEW_CHANGED);
    return 0;
}
