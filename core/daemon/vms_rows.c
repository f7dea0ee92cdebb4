/* SPDX-License-Identifier: Apache-2.0
 *
 * The "vms" view's rows between publications (vms_rows.h): a GTree keyed by
 * the group digit followed by the key, so one strcmp orders groups, then
 * keys; each row one block of typed cells (and its key), its strings one
 * more.
 */
#include "core/daemon/vms_rows.h"

#include <string.h>

typedef enum { CELL_NULL, CELL_STR, CELL_INT, CELL_BOOL, CELL_INT64 } CellType;

/* A row is one block (every VM has one): the header, then width 32-bit
 * values, width type bytes and the tree key "G" + key; its strings are one
 * more block, `text`, each string NUL-terminated at the offset its value
 * holds, and so is an integer that does not fit in 32 bits (CELL_INT64:
 * its 8 bytes at that offset; the columns' pids and ports always fit).
 * (Before: a header, an array of 24-byte cells, one block a string and
 * the key: ~9 blocks and ~570 bytes a VM; then 2 blocks and ~250, with
 * 64-bit values ~48 bytes more: doc/memory.md.) */
struct DdmVmsRow {
    guint n;         /* cells given */
    guint width;     /* the set's n_cols: cells past it are dropped */
    char *text;      /* the strings of the cells, NULL while none */
    guint32 text_len;
    gint32 vals[];   /* CELL_INT, CELL_BOOL: the value; CELL_STR, CELL_INT64: the offset in text */
};

struct DdmVmsRows {
    guint n_cols;
    GTree *rows; /* row_key(row) (in the row) -> DdmVmsRow* (owned) */
};

static guint8 *row_types(DdmVmsRow *row)
{
    return (guint8 *)(row->vals + row->width);
}

static char *row_key(DdmVmsRow *row)
{
    return (char *)(row_types(row) + row->width);
}

static void row_clear(DdmVmsRow *row)
{
    row->n = 0;
    g_clear_pointer(&row->text, g_free);
    row->text_len = 0;
}

static void row_free(gpointer p)
{
    DdmVmsRow *row = p;
    row_clear(row);
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
    rows->rows = g_tree_new_full(cmp_keys, NULL, NULL, row_free);
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
    g_autofree char *k = tree_key(group, key);
    DdmVmsRow *row = g_tree_lookup(rows->rows, k);
    gsize klen;
    if (row) {
        row_clear(row);
        return row;
    }
    klen = strlen(k) + 1;
    row = g_malloc0(sizeof *row + rows->n_cols * (sizeof(gint32) + 1) + klen);
    row->width = rows->n_cols;
    memcpy(row_key(row), k, klen);
    g_tree_insert(rows->rows, row_key(row), row);
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
    rows->rows = g_tree_new_full(cmp_keys, NULL, NULL, row_free);
}

/* The index of the next cell, or -1 past the last column (dropped: a caller's bug). */
static int take_cell(DdmVmsRow *row, CellType type, gint32 val)
{
    if (row->n >= row->width)
        return -1;
    row->vals[row->n] = val;
    row_types(row)[row->n] = (guint8)type;
    return (int)row->n++;
}

/* The next cell of @type holding @len bytes at @p appended to the row's text. */
static void take_text_cell(DdmVmsRow *row, CellType type, const void *p, gsize len)
{
    if (row->n >= row->width || len > (gsize)G_MAXINT32 - row->text_len)
        return;
    /* the row's text grows to exactly what it holds (a row has ~6 short strings) */
    row->text = g_realloc(row->text, row->text_len + len);
    memcpy(row->text + row->text_len, p, len);
    take_cell(row, type, (gint32)row->text_len);
    row->text_len += (guint32)len;
}

void ddm_vms_row_str(DdmVmsRow *row, const char *s)
{
    if (!s)
        take_cell(row, CELL_NULL, 0);
    else
        take_text_cell(row, CELL_STR, s, strlen(s) + 1);
}

void ddm_vms_row_int(DdmVmsRow *row, gint64 i)
{
    if (i >= G_MININT32 && i <= G_MAXINT32)
        take_cell(row, CELL_INT, (gint32)i);
    else
        take_text_cell(row, CELL_INT64, &i, sizeof i);
}

void ddm_vms_row_bool(DdmVmsRow *row, gboolean b)
{
    take_cell(row, CELL_BOOL, b != 0);
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
        guint8 type = i < row->n ? row_types(row)[i] : CELL_NULL;
        gint32 v = i < row->n ? row->vals[i] : 0;
        gint64 wide;
        if (type == CELL_NULL) {
            rc = ddm_view_cell_str(p->view, NULL);
        } else if (type == CELL_STR) {
            rc = ddm_view_cell_str(p->view, row->text + v);
        } else if (type == CELL_INT) {
            rc = ddm_view_cell_int(p->view, v);
        } else if (type == CELL_INT64) {
            memcpy(&wide, row->text + v, sizeof wide);
            rc = ddm_view_cell_int(p->view, wide);
        } else {
            rc = ddm_view_cell_bool(p->view, (int)v);
        }
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
