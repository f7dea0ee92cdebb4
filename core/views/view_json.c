/* SPDX-License-Identifier: Apache-2.0
 *
 * The JSON form of a view (ddm_view_to_json): what frontends are sent and
 * what the text renderer (render.c) works from. A blob's bytes come only
 * when asked, except an application/json blob's (json_blob.h).
 */
#include <math.h>

#include "core/views/json_blob.h"
#include "core/views/views-private.h"

const char *ddm_views_type_name(ddm_value_type t)
{
    switch (t) {
    case DDM_VAL_STR: return "str";
    case DDM_VAL_INT: return "int";
    case DDM_VAL_DOUBLE: return "double";
    case DDM_VAL_BOOL: return "bool";
    }
    return "str";
}

static const char *kind_name(ddm_view_kind k)
{
    switch (k) {
    case DDM_VIEW_TABLE: return "table";
    case DDM_VIEW_RECORD: return "record";
    case DDM_VIEW_BLOB: return "blob";
    }
    return "table";
}

static void add_cell_value(JsonBuilder *b, const Cell *cell)
{
    switch (cell->type) {
    case DDM_VAL_STR: json_builder_add_string_value(b, cell->u.s); break;
    case DDM_VAL_INT: json_builder_add_int_value(b, cell->u.i); break;
    case DDM_VAL_DOUBLE:
        /* JSON has no NaN or infinity. */
        if (isfinite(cell->u.d))
            json_builder_add_double_value(b, cell->u.d);
        else
            json_builder_add_null_value(b);
        break;
    case DDM_VAL_BOOL: json_builder_add_boolean_value(b, cell->u.b); break;
    default: json_builder_add_null_value(b); break;
    }
}

JsonNode *ddm_view_to_json(const ddm_view *v, gboolean with_blob_data)
{
    JsonBuilder *b;
    JsonNode *root;
    const Content *c;

    g_return_val_if_fail(ddm_view_is_valid(v), NULL);
    c = v->committed;
    b = json_builder_new();
    json_builder_begin_object(b);
    json_builder_set_member_name(b, "name");
    json_builder_add_string_value(b, v->desc->name);
    json_builder_set_member_name(b, "vm");
    if (v->vm_key)
        json_builder_add_string_value(b, v->vm_key);
    else
        json_builder_add_null_value(b);
    json_builder_set_member_name(b, "owner");
    json_builder_add_string_value(b, v->desc->owner);
    json_builder_set_member_name(b, "title");
    json_builder_add_string_value(b, v->desc->title);
    json_builder_set_member_name(b, "kind");
    json_builder_add_string_value(b, kind_name(v->desc->kind));
    json_builder_set_member_name(b, "version");
    json_builder_add_int_value(b, (gint64)v->version);

    if (v->desc->kind == DDM_VIEW_TABLE) {
        guint ncols = c->columns.n;
        json_builder_set_member_name(b, "columns");
        json_builder_begin_array(b);
        for (guint i = 0; i < ncols; i++) {
            const Column *col = &c->columns.cols[i];
            json_builder_begin_object(b);
            json_builder_set_member_name(b, "name");
            json_builder_add_string_value(b, col->name);
            json_builder_set_member_name(b, "type");
            json_builder_add_string_value(b, ddm_views_type_name(col->type));
            json_builder_set_member_name(b, "unit");
            if (col->unit)
                json_builder_add_string_value(b, col->unit);
            else
                json_builder_add_null_value(b);
            json_builder_end_object(b);
        }
        json_builder_end_array(b);
        json_builder_set_member_name(b, "rows");
        json_builder_begin_array(b);
        for (guint r = 0; r < c->n_rows && ncols > 0; r++) {
            json_builder_begin_array(b);
            for (guint k = 0; k < ncols; k++) {
                Cell cell = ddm_views_content_cell(c, (gsize)r * ncols + k);
                add_cell_value(b, &cell);
            }
            json_builder_end_array(b);
        }
        json_builder_end_array(b);
    } else if (v->desc->kind == DDM_VIEW_RECORD) {
        json_builder_set_member_name(b, "fields");
        json_builder_begin_array(b);
        for (guint i = 0; i < ddm_views_content_n_fields(c); i++) {
            const Field *f = &c->fields[i];
            json_builder_begin_object(b);
            json_builder_set_member_name(b, "key");
            json_builder_add_string_value(b, f->key);
            json_builder_set_member_name(b, "type");
            json_builder_add_string_value(b, ddm_views_type_name(f->type));
            json_builder_set_member_name(b, "value");
            Cell value = ddm_views_field_value(f);
            add_cell_value(b, &value);
            json_builder_end_object(b);
        }
        json_builder_end_array(b);
    } else {
        json_builder_set_member_name(b, "media_type");
        if (c->media_type)
            json_builder_add_string_value(b, c->media_type);
        else
            json_builder_add_null_value(b);
        json_builder_set_member_name(b, "size");
        json_builder_add_int_value(b, (gint64)c->blob_len);
        /* A JSON blob is structured data, not opaque bytes: it comes
         * whole (within the cap frontends parse) even unasked. */
        if (with_blob_data || (ddm_json_blob_type(c->media_type) && c->blob_len <= DDM_JSON_BLOB_MAX)) {
            char *b64 = g_base64_encode(c->blob ? c->blob : (const guchar *)"", c->blob_len);
            json_builder_set_member_name(b, "data_base64");
            json_builder_add_string_value(b, b64);
            g_free(b64);
        }
    }
    json_builder_end_object(b);
    root = json_builder_get_root(b);
    g_object_unref(b);
    return root;
}
