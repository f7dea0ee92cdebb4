/* SPDX-License-Identifier: Apache-2.0
 *
 * TuiTable: one view's JSON as rows of display text and numbers, the row
 * identity, and the change tracking that highlights a row whose state
 * changed. Pure: no ncurses, no I/O, the clock handed in. See model.h.
 */
#include <build-config.h>

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "tui/model.h"
#include "core/wire/ctlproto.h"

char *tui_fmt_bytes(double bytes)
{
    static const char *const units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
    guint u = 0;
    if (bytes < 0)
        bytes = 0;
    while (bytes >= 1024.0 && u + 1 < G_N_ELEMENTS(units)) {
        bytes /= 1024.0;
        u++;
    }
    return u == 0 ? g_strdup_printf("%.0f B", bytes) : g_strdup_printf("%.1f %s", bytes, units[u]);
}

char *tui_fmt_age(gint64 age_us)
{
    gint64 s = MAX(age_us, 0) / G_USEC_PER_SEC;
    if (s < 120)
        return g_strdup_printf("%" G_GINT64_FORMAT "s", s);
    if (s < 2 * 3600)
        return g_strdup_printf("%" G_GINT64_FORMAT "m", s / 60);
    return g_strdup_printf("%" G_GINT64_FORMAT "h", s / 3600);
}

static void column_free(gpointer p)
{
    TuiColumn *c = p;
    g_free(c->name);
    g_free(c->type);
    g_free(c->unit);
    g_free(c);
}

static void row_free(gpointer p)
{
    TuiRow *r = p;
    g_strfreev(r->cells);
    g_free(r->nums);
    g_free(r->is_num);
    g_free(r->id);
    g_free(r);
}

void tui_table_free(TuiTable *t)
{
    if (t == NULL)
        return;
    g_free(t->name);
    g_free(t->vm);
    g_free(t->title);
    g_free(t->media_type);
    g_ptr_array_unref(t->columns);
    g_ptr_array_unref(t->rows);
    g_free(t);
}

int tui_table_column(const TuiTable *t, const char *name)
{
    for (guint i = 0; t != NULL && i < t->columns->len; i++)
        if (g_strcmp0(((TuiColumn *)g_ptr_array_index(t->columns, i))->name, name) == 0)
            return (int)i;
    return -1;
}

/* The display text of one cell, its number in *@num. */
static char *cell_text(JsonNode *n, const TuiColumn *col, double *num, gboolean *is_num)
{
    *num = 0;
    *is_num = FALSE;
    if (n == NULL || JSON_NODE_HOLDS_NULL(n))
        return g_strdup("-");
    if (!JSON_NODE_HOLDS_VALUE(n))
        return g_strdup("?");
    GType vt = json_node_get_value_type(n);
    const char *unit = col != NULL ? col->unit : NULL;
    if (vt == G_TYPE_STRING)
        return g_strdup(json_node_get_string(n));
    if (vt == G_TYPE_BOOLEAN)
        return g_strdup(json_node_get_boolean(n) ? "yes" : "no");
    if (vt == G_TYPE_INT64) {
        gint64 x = json_node_get_int(n);
        *num = (double)x;
        *is_num = TRUE;
        if (g_strcmp0(unit, "B") == 0)
            return tui_fmt_bytes((double)x);
        if (g_strcmp0(unit, "addr") == 0)
            return g_strdup_printf("0x%" G_GINT64_MODIFIER "x", x);
        if (g_strcmp0(unit, "epoch_ms") == 0 && x >= 0 && x <= G_GINT64_CONSTANT(253402300799999)) {
            /* a point in time: the local date and time (sorted by the number);
             * core/views/render.c spells it the same, but the module calls
             * nothing of the core (tests/integration/tui-module.sh) */
            g_autoptr(GDateTime) dt = g_date_time_new_from_unix_local(x / 1000);
            if (dt != NULL)
                return g_date_time_format(dt, "%Y-%m-%d %H:%M:%S");
        }
        return g_strdup_printf("%" G_GINT64_FORMAT, x);
    }
    if (vt == G_TYPE_DOUBLE) {
        double x = json_node_get_double(n);
        *num = x;
        *is_num = TRUE;
        if (g_strcmp0(unit, "%") == 0)
            return g_strdup_printf("%.1f%%", x);
        return g_strdup_printf("%.2f", x);
    }
    return g_strdup("?");
}

char *tui_middle_ellipsis(const char *s, int width)
{
    glong n = g_utf8_strlen(s, -1);
    if (n <= width || width < 3)
        return g_strdup(s);
    glong head = (width - 1) / 2, tail = width - 1 - head;
    const char *h_end = g_utf8_offset_to_pointer(s, head);
    const char *t_start = g_utf8_offset_to_pointer(s, n - tail);
    return g_strdup_printf("%.*s~%s", (int)(h_end - s), s, t_start);
}

char *tui_column_header(const TuiColumn *col)
{
    const char *u = col->unit;
    if (u == NULL || u[0] == '\0' || strcmp(u, "B") == 0 || strcmp(u, "%") == 0 || strcmp(u, "addr") == 0 ||
        strcmp(u, "epoch_ms") == 0)
        return g_strdup(col->name);
    return g_strdup_printf("%s (%s)", col->name, u);
}

/* What cutting the columns of @w marked in @may (@n of them) down to
 * @level takes off in all. */
static gint64 cut_to(const int *w, const gboolean *may, guint n, int level)
{
    gint64 cut = 0;
    for (guint c = 0; c < n; c++)
        if (may[c] && w[c] > level)
            cut += w[c] - level;
    return cut;
}

void tui_table_cut_widths(int *w, const gboolean *may, guint n, gint64 *excess, int floor)
{
    int top = floor;
    for (guint c = 0; c < n; c++)
        if (may[c])
            top = MAX(top, w[c]);
    if (*excess <= 0 || top <= floor)
        return;
    if (cut_to(w, may, n, floor) <= *excess) { /* all of them down to the floor */
        *excess -= cut_to(w, may, n, floor);
        for (guint c = 0; c < n; c++)
            if (may[c] && w[c] > floor)
                w[c] = floor;
        return;
    }
    /* The highest level whose cut covers the excess (binary search: the cut
     * grows as the level falls), so the columns above level + 1 go down to
     * it and the rest of the excess comes off the first columns at level +
     * 1, as taking one off the widest (the first of equals) at a time
     * would leave them. */
    int lo = floor, hi = top; /* cut(lo) > excess, cut(hi) = 0 */
    while (hi - lo > 1) {
        int mid = lo + (hi - lo) / 2;
        if (cut_to(w, may, n, mid) >= *excess)
            lo = mid;
        else
            hi = mid;
    }
    int level = lo; /* cut(level) >= excess > cut(level + 1) */
    gint64 rest = *excess - cut_to(w, may, n, level + 1);
    for (guint c = 0; c < n; c++) {
        if (!may[c] || w[c] <= level)
            continue;
        w[c] = level + 1;
        if (rest > 0) {
            w[c] = level;
            rest--;
        }
    }
    *excess = 0;
}

void tui_table_widths(const TuiTable *t, guint from, guint to, int width, int *w)
{
    guint n = t->columns->len;
    gint64 total = 0;
    g_autofree gboolean *may = g_new0(gboolean, MAX(n, 1u));
    for (guint c = 0; c < n; c++) {
        g_autofree char *head = tui_column_header(g_ptr_array_index(t->columns, c));
        w[c] = (int)g_utf8_strlen(head, -1);
        for (guint r = from; r < to && r < t->rows->len; r++) {
            const TuiRow *row = g_ptr_array_index(t->rows, r);
            w[c] = MAX(w[c], (int)g_utf8_strlen(row->cells[c], -1));
        }
        total += w[c] + 2;
    }
    /* too wide: the widest text columns give way first, then numbers; in
     * O(columns x log(width)), however wide a cell (a VM's string) is */
    gint64 excess = total - width;
    for (int pass = 0; pass < 2 && excess > 0; pass++) {
        for (guint c = 0; c < n; c++) {
            const TuiColumn *col = g_ptr_array_index(t->columns, c);
            gboolean number = g_strcmp0(col->type, "int") == 0 || g_strcmp0(col->type, "double") == 0;
            may[c] = pass == 1 || !number;
        }
        tui_table_cut_widths(w, may, n, &excess, TUI_COLUMN_MIN);
    }
}

static TuiColumn *column_new(const char *name, const char *type, const char *unit)
{
    TuiColumn *c = g_new0(TuiColumn, 1);
    c->name = g_strdup(name != NULL ? name : "");
    c->type = g_strdup(type != NULL ? type : "str");
    c->unit = g_strdup(unit);
    return c;
}

static TuiRow *row_new(guint n)
{
    TuiRow *r = g_new0(TuiRow, 1);
    r->cells = g_new0(char *, n + 1);
    r->nums = g_new0(double, n);
    r->is_num = g_new0(gboolean, n);
    return r;
}

static void fill_table(TuiTable *t, JsonObject *o)
{
    JsonNode *cn = json_object_get_member(o, "columns");
    JsonNode *rn = json_object_get_member(o, "rows");
    if (cn != NULL && JSON_NODE_HOLDS_ARRAY(cn)) {
        JsonArray *cols = json_node_get_array(cn);
        for (guint i = 0; i < json_array_get_length(cols); i++) {
            JsonNode *c = json_array_get_element(cols, i);
            JsonObject *co = JSON_NODE_HOLDS_OBJECT(c) ? json_node_get_object(c) : NULL;
            g_ptr_array_add(t->columns,
                            column_new(co ? ddm_json_get_string(co, "name") : NULL,
                                       co ? ddm_json_get_string(co, "type") : NULL,
                                       co ? ddm_json_get_string(co, "unit") : NULL));
        }
    }
    guint ncols = t->columns->len;
    int id_col = tui_table_column(t, "id");
    if (id_col < 0)
        id_col = tui_table_column(t, "key");
    if (id_col < 0 && ncols > 0)
        id_col = 0;
    if (rn == NULL || !JSON_NODE_HOLDS_ARRAY(rn))
        return;
    JsonArray *rows = json_node_get_array(rn);
    for (guint r = 0; r < json_array_get_length(rows); r++) {
        JsonNode *rowj = json_array_get_element(rows, r);
        JsonArray *cells = JSON_NODE_HOLDS_ARRAY(rowj) ? json_node_get_array(rowj) : NULL;
        TuiRow *row = row_new(ncols);
        for (guint c = 0; c < ncols; c++) {
            JsonNode *cell = cells != NULL && c < json_array_get_length(cells)
                                 ? json_array_get_element(cells, c)
                                 : NULL;
            row->cells[c] = cell_text(cell, g_ptr_array_index(t->columns, c), &row->nums[c],
                                      &row->is_num[c]);
        }
        row->id = g_strdup(id_col >= 0 ? row->cells[id_col] : "");
        g_ptr_array_add(t->rows, row);
    }
}

static void fill_record(TuiTable *t, JsonObject *o)
{
    g_ptr_array_add(t->columns, column_new("key", "str", NULL));
    g_ptr_array_add(t->columns, column_new("value", "str", NULL));
    JsonNode *fn = json_object_get_member(o, "fields");
    if (fn == NULL || !JSON_NODE_HOLDS_ARRAY(fn))
        return;
    JsonArray *fields = json_node_get_array(fn);
    for (guint i = 0; i < json_array_get_length(fields); i++) {
        JsonNode *f = json_array_get_element(fields, i);
        if (!JSON_NODE_HOLDS_OBJECT(f))
            continue;
        JsonObject *fo = json_node_get_object(f);
        const char *key = ddm_json_get_string(fo, "key");
        TuiColumn vc = {(char *)key, NULL, (char *)ddm_json_get_string(fo, "unit")};
        TuiRow *row = row_new(2);
        row->cells[0] = g_strdup(key != NULL ? key : "");
        row->cells[1] = cell_text(json_object_get_member(fo, "value"), &vc, &row->nums[1], &row->is_num[1]);
        row->id = g_strdup(row->cells[0]);
        g_ptr_array_add(t->rows, row);
    }
}

TuiTable *tui_table_from_json(JsonNode *view, gint64 now_us)
{
    if (view == NULL || !JSON_NODE_HOLDS_OBJECT(view))
        return NULL;
    JsonObject *o = json_node_get_object(view);
    const char *name = ddm_json_get_string(o, "name");
    const char *kind = ddm_json_get_string(o, "kind");
    if (name == NULL)
        return NULL;
    TuiTable *t = g_new0(TuiTable, 1);
    t->name = g_strdup(name);
    t->vm = g_strdup(ddm_json_get_string(o, "vm"));
    t->title = g_strdup(ddm_json_get_string(o, "title"));
    t->version = (guint64)MAX(ddm_json_get_int(o, "version", 0), 0);
    t->received_us = now_us;
    t->columns = g_ptr_array_new_with_free_func(column_free);
    t->rows = g_ptr_array_new_with_free_func(row_free);
    if (g_strcmp0(kind, "record") == 0) {
        t->kind = TUI_KIND_RECORD;
        fill_record(t, o);
    } else if (g_strcmp0(kind, "blob") == 0) {
        t->kind = TUI_KIND_BLOB;
        t->media_type = g_strdup(ddm_json_get_string(o, "media_type"));
        t->size = ddm_json_get_int(o, "size", 0);
    } else {
        t->kind = TUI_KIND_TABLE;
        fill_table(t, o);
    }
    t->state_col = tui_table_column(t, "state");
    return t;
}

void tui_table_track(TuiTable *t, const TuiTable *old, gint64 now_us)
{
    if (t == NULL || old == NULL || g_strcmp0(t->name, old->name) != 0 ||
        g_strcmp0(t->vm, old->vm) != 0)
        return;
    GHashTable *before = g_hash_table_new(g_str_hash, g_str_equal);
    for (guint i = 0; i < old->rows->len; i++) {
        TuiRow *r = g_ptr_array_index(old->rows, i);
        g_hash_table_insert(before, r->id, r);
    }
    for (guint i = 0; i < t->rows->len; i++) {
        TuiRow *r = g_ptr_array_index(t->rows, i);
        TuiRow *was = g_hash_table_lookup(before, r->id);
        if (was == NULL) {
            r->changed_us = now_us; /* a new row */
        } else if (t->state_col >= 0 && old->state_col == t->state_col &&
                   g_strcmp0(was->cells[t->state_col], r->cells[t->state_col]) != 0) {
            r->changed_us = now_us;
        } else {
            r->changed_us = was->changed_us;
        }
    }
    g_hash_table_unref(before);
}

gboolean tui_row_hot(const TuiRow *row, gint64 now_us)
{
    return row != NULL && row->changed_us != 0 && now_us - row->changed_us < TUI_HOT_US;
}
