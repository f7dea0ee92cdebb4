/* SPDX-License-Identifier: Apache-2.0
 *
 * The block map: a table of address ranges (an int column with unit
 * "addr", an int column with unit "B" and a string column "kind", as the
 * heap plugin's heap.map) laid out on a grid of cells, each showing the
 * kind that covers most of its bytes, as DDMS drew its heap bitmap. Pure:
 * the drawing (colours, legend, address scale) is draw.c's. See model.h.
 */
#include <build-config.h>

#include <string.h>

#include "tui/model.h"

#define MAX_KINDS 15

static int find_col(const TuiTable *t, const char *type, const char *unit, const char *name)
{
    for (guint i = 0; i < t->columns->len; i++) {
        const TuiColumn *c = g_ptr_array_index(t->columns, i);
        if (type != NULL && g_strcmp0(c->type, type) != 0)
            continue;
        if (unit != NULL && g_strcmp0(c->unit, unit) != 0)
            continue;
        if (name != NULL && g_strcmp0(c->name, name) != 0)
            continue;
        return (int)i;
    }
    return -1;
}

gboolean tui_blockmap_fits(const TuiTable *t)
{
    return t != NULL && t->kind == TUI_KIND_TABLE && find_col(t, "int", "addr", NULL) >= 0 &&
           find_col(t, "int", "B", NULL) >= 0 && find_col(t, "str", NULL, "kind") >= 0;
}

void tui_blockmap_free(TuiBlockMap *m)
{
    if (m == NULL)
        return;
    g_free(m->cells);
    g_ptr_array_unref(m->kinds);
    g_free(m->rgb);
    g_free(m);
}

/* 0xRRGGBB of "#rrggbb", or -1. */
static gint32 parse_rgb(const char *s)
{
    if (s == NULL || s[0] != '#' || strlen(s) != 7)
        return -1;
    gint32 v = 0;
    for (int i = 1; i < 7; i++) {
        int d = g_ascii_xdigit_value(s[i]);
        if (d < 0)
            return -1;
        v = v * 16 + d;
    }
    return v;
}

static guint kind_index(GPtrArray *kinds, const char *name)
{
    for (guint i = 0; i < kinds->len; i++)
        if (strcmp(g_ptr_array_index(kinds, i), name) == 0)
            return i + 1;
    if (kinds->len >= MAX_KINDS)
        return kinds->len; /* the last one stands for the rest */
    g_ptr_array_add(kinds, g_strdup(name));
    return kinds->len;
}

TuiBlockMap *tui_blockmap_new(const TuiTable *t, guint cols, guint max_rows)
{
    if (!tui_blockmap_fits(t) || cols == 0 || max_rows == 0 || t->rows->len == 0)
        return NULL;
    int c_addr = find_col(t, "int", "addr", NULL);
    int c_len = find_col(t, "int", "B", NULL);
    int c_kind = find_col(t, "str", NULL, "kind");
    int c_color = find_col(t, "str", NULL, "color");
    guint64 lo = G_MAXUINT64, hi = 0;
    for (guint i = 0; i < t->rows->len; i++) {
        const TuiRow *r = g_ptr_array_index(t->rows, i);
        if (r->nums[c_addr] < 0 || r->nums[c_len] <= 0)
            continue;
        guint64 a = (guint64)r->nums[c_addr], n = (guint64)r->nums[c_len];
        lo = MIN(lo, a);
        hi = MAX(hi, a + n);
    }
    if (hi <= lo)
        return NULL;
    guint64 span = hi - lo;
    guint64 cells = (guint64)cols * max_rows;
    guint64 bpc = (span + cells - 1) / cells;
    if (bpc == 0)
        bpc = 1;
    TuiBlockMap *m = g_new0(TuiBlockMap, 1);
    m->cols = cols;
    m->rows = (guint)(((span + bpc - 1) / bpc + cols - 1) / cols);
    m->start = lo;
    m->end = hi;
    m->bytes_per_cell = bpc;
    m->kinds = g_ptr_array_new_with_free_func(g_free);
    m->rgb = g_new(gint32, MAX_KINDS);
    for (guint k = 0; k < MAX_KINDS; k++)
        m->rgb[k] = -1;
    guint ncells = m->cols * m->rows;
    m->cells = g_new0(guint8, ncells);
    double *weight = g_new0(double, (gsize)ncells * (MAX_KINDS + 1));
    for (guint i = 0; i < t->rows->len; i++) {
        const TuiRow *r = g_ptr_array_index(t->rows, i);
        if (r->nums[c_addr] < 0 || r->nums[c_len] <= 0)
            continue;
        guint k = kind_index(m->kinds, r->cells[c_kind]);
        if (c_color >= 0 && m->rgb[k - 1] < 0)
            m->rgb[k - 1] = parse_rgb(r->cells[c_color]);
        guint64 a = (guint64)r->nums[c_addr] - lo, end = a + (guint64)r->nums[c_len];
        for (guint64 cell = a / bpc; cell < ncells && cell * bpc < end; cell++) {
            guint64 from = MAX(a, cell * bpc), to = MIN(end, (cell + 1) * bpc);
            weight[cell * (MAX_KINDS + 1) + k] += (double)(to - from);
        }
    }
    for (guint cell = 0; cell < ncells; cell++) {
        double best = 0;
        for (guint k = 1; k <= MAX_KINDS; k++)
            if (weight[cell * (MAX_KINDS + 1) + k] > best) {
                best = weight[cell * (MAX_KINDS + 1) + k];
                m->cells[cell] = (guint8)k;
            }
    }
    g_free(weight);
    return m;
}
