/* SPDX-License-Identifier: Apache-2.0
 *
 * Storage of a view's content (see views-private.h): column sets, and the
 * Content that holds a table's cells, a record's fields or a blob, with
 * its strings in one GStringChunk under the DDM_VIEW_MAX_STRING and
 * DDM_VIEW_MAX_STRING_BYTES caps.
 */
#include <string.h>

#include <ddmon/bytes.h>

#include "core/views/views-private.h"

void ddm_views_columns_clear(Columns *c)
{
    for (guint i = 0; i < c->n; i++) {
        g_free(c->cols[i].name);
        g_free(c->cols[i].unit);
    }
    g_free(c->cols);
    c->cols = NULL;
    c->n = 0;
}

void ddm_views_columns_copy(Columns *dst, const Columns *src)
{
    ddm_views_columns_clear(dst);
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

gboolean ddm_views_columns_equal(const Columns *a, const Columns *b)
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

Content *ddm_views_content_new(ddm_view_kind kind, const Columns *schema)
{
    Content *c = g_new0(Content, 1);
    if (kind == DDM_VIEW_TABLE) {
        c->cells = g_array_new(FALSE, FALSE, sizeof(Cell));
        if (schema)
            ddm_views_columns_copy(&c->columns, schema);
    } else if (kind == DDM_VIEW_RECORD) {
        c->fields = g_array_new(FALSE, FALSE, sizeof(Field));
        c->field_index = g_hash_table_new(g_str_hash, g_str_equal);
    }
    return c;
}

void ddm_views_content_free(Content *c)
{
    if (!c)
        return;
    if (c->strings)
        g_string_chunk_free(c->strings);
    ddm_views_columns_clear(&c->columns);
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
const char *ddm_views_content_intern(Content *c, const char *s, gboolean *truncated)
{
    gsize n = strnlen(s, DDM_VIEW_MAX_STRING + 1);
    const char *end = NULL;
    const char *out;

    *truncated = FALSE;
    if (n > DDM_VIEW_MAX_STRING) {
        *truncated = TRUE;
        n = ddm_utf8_cut(s, n, DDM_VIEW_MAX_STRING);
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
            vn = ddm_utf8_cut(valid, vn, DDM_VIEW_MAX_STRING);
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
