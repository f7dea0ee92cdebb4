/* SPDX-License-Identifier: Apache-2.0
 *
 * The "vms" view's rows between publications (vms_rows.h): a GTree keyed by
 * the group digit followed by the key, so one strcmp orders groups, then
 * keys; each row a small array of typed cells.
 */
#include "core/daemon/vms_rows.h"

#include <string.h>

typedef enum { CELL_NULL, CELL_STR, CELL_INT, CELL_BOOL } CellType;

typedef struct {
    CellType type;
    gint64 i;  /* CELL_INT, CELL_BOOL */
    char *s;   /* CELL_STR (owned) */
} RowCell;

struct DdmVmsRow {
    guint n;        /* cells given */
    guint width;    /* the set's n_cols: cells past it are dropped */
    RowCell *cells; /* width of them */
};

struct DdmVmsRows {
    guint n_cols;
    GTree *rows; /* "G" + key (owned) -> DdmVmsRow* (owned) */
};

static void row_clear(DdmVmsRow *row)
{
    for (guint i = 0; i < row->n; i++)
        g_free(row->cells[i].s);
    row->n = 0;
}

static void row_free(gpointer p)
{
    DdmVmsRow *row = p;
    row_clear(row);
    g_free(row->cells);
    g_free(row);
}

static gint cmp_keys(gconstpointer a, gconstpointer b, gpointer ud)
{
    (void)ud;
    return strcmp(a, b);
}

DdmVmsRows *ddm_vms_rows_new(guint n_cols)
{
    DdmVmsRows *rows = g_new0(DdmVmsRows, 1);
    rows->n_cols = n_cols;
    rows->rows = g_tree_new_full(cmp_keys, NULL, g_free, row_free);
    return rows;
}

void ddm_vms_rows_free(DdmVmsRows *rows)
{
    if (!rows)
        return;
    g_tree_destroy(rows->rows);
    g_free(rows);
}

guint ddm_vms_rows_count(const DdmVmsRows *rows)
{
    return (guint)g_tree_nnodes(rows->rows);
}

static char *tree_key(guint group, const char *key)
{
    return g_strdup_printf("%c%s", group ? '1' : '0', key);
}

DdmVmsRow *ddm_vms_rows_set(DdmVmsRows *rows, guint group, const char *key)
{
    char *k = tree_key(group, key);
    DdmVmsRow *row = g_tree_lookup(rows->rows, k);
    if (row) {
        g_free(k);
        row_clear(row);
        return row;
    }
    row = g_new0(DdmVmsRow, 1);
    row->width = rows->n_cols;
    row->cells = g_new0(RowCell, rows->n_cols);
    g_tree_insert(rows->rows, k, row);
    return row;
}

gboolean ddm_vms_rows_remove(DdmVmsRows *rows, guint group, const char *key)
{
    g_autofree char *k = tree_key(group, key);
    return g_tree_remove(rows->rows, k);
}

void ddm_vms_rows_clear(DdmVmsRows *rows)
{
    g_tree_destroy(rows->rows);
    rows->rows = g_tree_new_full(cmp_keys, NULL, g_free, row_free);
}

/* The next cell, or NULL past the last column (dropped: a caller's bug). */
static RowCell *take_cell(DdmVmsRow *row)
{
    RowCell *c;
    if (row->n >= row->width)
        return NULL;
    c = &row->cells[row->n++];
    memset(c, 0, sizeof *c);
    return c;
}

void ddm_vms_row_str(DdmVmsRow *row, const char *s)
{
    RowCell *c = take_cell(row);
    if (!c)
        return;
    c->type = s ? CELL_STR : CELL_NULL;
    c->s = g_strdup(s);
}

void ddm_vms_row_int(DdmVmsRow *row, gint64 i)
{
    RowCell *c = take_cell(row);
    if (!c)
        return;
    c->type = CELL_INT;
    c->i = i;
}

void ddm_vms_row_bool(DdmVmsRow *row, gboolean b)
{
    RowCell *c = take_cell(row);
    if (!c)
        return;
    c->type = CELL_BOOL;
    c->i = b != 0;
}

typedef struct {
    ddm_view *view;
    guint n_cols;
    int rc;
} PublishCtx;

static gboolean publish_row(gpointer key, gpointer value, gpointer ud)
{
    PublishCtx *p = ud;
    DdmVmsRow *row = value;
    int rc = ddm_view_row(p->view);
    (void)key;
    for (guint i = 0; rc == 0 && i < p->n_cols; i++) {
        const RowCell *c = &row->cells[i];
        if (i >= row->n || c->type == CELL_NULL)
            rc = ddm_view_cell_str(p->view, NULL);
        else if (c->type == CELL_STR)
            rc = ddm_view_cell_str(p->view, c->s);
        else if (c->type == CELL_INT)
            rc = ddm_view_cell_int(p->view, c->i);
        else
            rc = ddm_view_cell_bool(p->view, (int)c->i);
    }
    p->rc = rc;
    return rc != 0; /* stop at the first refusal */
}

int ddm_vms_rows_publish(DdmVmsRows *rows, ddm_view *view)
{
    PublishCtx p = {view, rows->n_cols, 0};
    int rc = ddm_view_begin(view);
    if (rc)
        return rc;
    g_tree_foreach(rows->rows, publish_row, &p);
    rc = ddm_view_commit(view);
    return p.rc ? p.rc : rc;
}
