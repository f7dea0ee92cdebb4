/* SPDX-License-Identifier: Apache-2.0
 *
 * The jq form of a table view, with records' fields merged into its rows,
 * written as text from the store (jq_text.h).
 */
#include <math.h>
#include <string.h>

#include "core/views/jq.h"
#include "core/views/jq_text.h"
#include "core/views/views-private.h"

void ddm_json_text_string(GString *out, const char *s)
{
    if (s == NULL) {
        g_string_append(out, "null");
        return;
    }
    g_string_append_c(out, '"');
    const char *run = s;
    for (const char *p = s; *p != '\0'; p++) {
        unsigned char c = (unsigned char)*p;
        if (c != '"' && c != '\\' && c > 0x1f && c != 0x7f)
            continue; /* RFC 8259 wants 0x00-0x1f escaped: json-glib 1.6 leaves 0x1f raw, ddm_ctl_encode escapes it */
        g_string_append_len(out, run, p - run);
        run = p + 1;
        switch (c) {
        case '"': g_string_append(out, "\\\""); break;
        case '\\': g_string_append(out, "\\\\"); break;
        case '\b': g_string_append(out, "\\b"); break;
        case '\f': g_string_append(out, "\\f"); break;
        case '\n': g_string_append(out, "\\n"); break;
        case '\r': g_string_append(out, "\\r"); break;
        case '\t': g_string_append(out, "\\t"); break;
        default: g_string_append_printf(out, "\\u00%02x", c); break;
        }
    }
    g_string_append(out, run);
    g_string_append_c(out, '"');
}

void ddm_json_text_double(GString *out, double d)
{
    if (!isfinite(d)) {
        g_string_append(out, "null");
        return;
    }
    /* As json-glib 1.6 writes a double (%.17g, then ".0" when there is no
     * '.'), except that it also appends ".0" after an exponent: 1e17 would
     * be "1e+17.0", which no strict parser reads. */
    char buf[G_ASCII_DTOSTR_BUF_SIZE];
    g_ascii_dtostr(buf, sizeof buf, d);
    g_string_append(out, buf);
    if (strpbrk(buf, ".eE") == NULL)
        g_string_append(out, ".0");
}

void ddm_json_text_int(GString *out, gint64 i)
{
    char buf[24];
    char *p = buf + sizeof buf;
    guint64 u = i < 0 ? 0 - (guint64)i : (guint64)i;
    do {
        *--p = (char)('0' + u % 10);
        u /= 10;
    } while (u != 0);
    if (i < 0)
        *--p = '-';
    g_string_append_len(out, p, buf + sizeof buf - p);
}

/* As view_json.c's add_cell_value. */
static void write_cell(GString *out, const Cell *cell)
{
    switch (cell->type) {
    case DDM_VAL_STR: ddm_json_text_string(out, cell->u.s); break;
    case DDM_VAL_INT: ddm_json_text_int(out, cell->u.i); break;
    case DDM_VAL_DOUBLE: ddm_json_text_double(out, cell->u.d); break;
    case DDM_VAL_BOOL: g_string_append(out, cell->u.b ? "true" : "false"); break;
    default: g_string_append(out, "null"); break;
    }
}

/* "," then "KEY": (a key is escaped like any string). */
static void write_member(GString *out, gboolean first, const char *key)
{
    if (!first)
        g_string_append_c(out, ',');
    ddm_json_text_string(out, key);
    g_string_append_c(out, ':');
}

/* VM key -> the figures of its record as members (",\"k\":v..."), those
 * the table's rows have already left out. (transfer full) */
static GHashTable *figures_of(const GPtrArray *records, GHashTable *row_keys)
{
    GHashTable *figures = g_hash_table_new_full(g_str_hash, g_str_equal, NULL, g_free);
    /* Most VMs' records have the same field names in the same order: their
     * jq keys are made once (the previous record's, when its names match). */
    GPtrArray *names = g_ptr_array_new();
    g_auto(GStrv) keys = NULL;
    for (guint r = 0; records != NULL && r < records->len; r++) {
        const ddm_view *v = g_ptr_array_index(records, r);
        if (!ddm_view_is_valid(v) || v->desc->kind != DDM_VIEW_RECORD || v->vm_key == NULL)
            continue;
        const Content *c = v->committed;
        guint n = ddm_views_content_n_fields(c);
        gboolean same = keys != NULL && names->len == n;
        for (guint i = 0; same && i < n; i++)
            same = strcmp(names->pdata[i], c->fields[i].key != NULL ? c->fields[i].key : "") == 0;
        if (!same) {
            g_ptr_array_set_size(names, 0);
            for (guint i = 0; i < n; i++)
                g_ptr_array_add(names, (gpointer)(c->fields[i].key != NULL ? c->fields[i].key : ""));
            g_ptr_array_add(names, NULL);
            g_strfreev(keys);
            keys = ddm_jq_keys((const char *const *)names->pdata, n);
            g_ptr_array_set_size(names, n);
        }
        GString *s = g_string_new(NULL);
        for (guint i = 0; i < n; i++) {
            if (g_hash_table_contains(row_keys, keys[i]))
                continue; /* the row's own member wins */
            write_member(s, FALSE, keys[i]);
            Cell value = ddm_views_field_value(&c->fields[i]);
            write_cell(s, &value);
        }
        /* the key is the view's interned string: it lives as long as @records */
        g_hash_table_replace(figures, v->vm_key, g_string_free(s, FALSE));
    }
    g_ptr_array_unref(names);
    return figures;
}

void ddm_jq_table_with_figures_text(GString *out, const ddm_view *table, const GPtrArray *records)
{
    ddm_jq_table_with_figures_more_text(out, table, records, NULL, NULL);
}

void ddm_jq_table_with_figures_more_text(GString *out, const ddm_view *table,
                                         const GPtrArray *records, DdmJqMoreFiguresFn more,
                                         gpointer ud)
{
    g_return_if_fail(ddm_view_is_valid(table) && table->desc->kind == DDM_VIEW_TABLE);
    const Content *c = table->committed;
    guint ncols = c->columns.n;

    g_string_append(out, "{\"schema\":");
    ddm_json_text_int(out, DDM_JSON_SCHEMA);
    g_string_append(out, ",\"name\":");
    ddm_json_text_string(out, table->desc->name);
    g_string_append(out, ",\"vm\":");
    ddm_json_text_string(out, table->vm_key);
    g_string_append(out, ",\"owner\":");
    ddm_json_text_string(out, table->desc->owner);
    g_string_append(out, ",\"title\":");
    ddm_json_text_string(out, table->desc->title);
    g_string_append(out, ",\"kind\":\"table\",\"version\":");
    ddm_json_text_int(out, (gint64)table->version);

    const char **names = g_new0(const char *, ncols + 1);
    for (guint i = 0; i < ncols; i++)
        names[i] = c->columns.cols[i].name != NULL ? c->columns.cols[i].name : "";
    g_auto(GStrv) keys = ddm_jq_keys(names, ncols);
    g_autoptr(GHashTable) row_keys = g_hash_table_new(g_str_hash, g_str_equal);
    int key_col = -1;
    g_string_append(out, ",\"columns\":{");
    for (guint i = 0; i < ncols; i++) {
        const Column *col = &c->columns.cols[i];
        g_hash_table_add(row_keys, keys[i]);
        if (key_col < 0 && strcmp(keys[i], "key") == 0)
            key_col = (int)i;
        write_member(out, i == 0, keys[i]);
        g_string_append(out, "{\"name\":");
        ddm_json_text_string(out, names[i]);
        g_string_append(out, ",\"type\":\"");
        g_string_append(out, ddm_views_type_name(col->type));
        g_string_append(out, "\",\"unit\":");
        ddm_json_text_string(out, col->unit);
        g_string_append_c(out, '}');
    }
    g_free(names);
    g_autoptr(GHashTable) figures = figures_of(records, row_keys);
    if (more != NULL)
        more(figures, row_keys, ud);

    g_string_append(out, "},\"rows\":[");
    for (guint r = 0; r < c->n_rows && ncols > 0; r++) {
        if (r > 0)
            g_string_append_c(out, ',');
        g_string_append_c(out, '{');
        const char *row_key = NULL;
        for (guint k = 0; k < ncols; k++) {
            Cell cell = ddm_views_content_cell(c, (gsize)r * ncols + k);
            if ((int)k == key_col && cell.type == DDM_VAL_STR)
                row_key = cell.u.s;
            write_member(out, k == 0, keys[k]);
            write_cell(out, &cell);
        }
        const char *figs = row_key != NULL ? g_hash_table_lookup(figures, row_key) : NULL;
        if (figs != NULL)
            g_string_append(out, figs);
        g_string_append_c(out, '}');
    }
    g_string_append(out, "]}");
}
