/* SPDX-License-Identifier: Apache-2.0
 *
 * A view as the web API shows it (view_json.h).
 */
#include "web/view_json.h"

#include "core/views/jq.h"
#include "core/views/json_blob.h"

gboolean ddm_web_view_json_over(ddm_view *v, gsize limit)
{
    if (ddm_view_kind_of(v) != DDM_VIEW_BLOB)
        return FALSE;
    gsize len = 0;
    const char *type = NULL;
    return ddm_view_blob_data(v, &len, &type) != NULL && ddm_json_blob_type(type) && len > limit;
}

char *ddm_web_view_path(ddm_view *v)
{
    g_autofree char *name = g_uri_escape_string(ddm_view_name(v), NULL, FALSE);
    const char *key = ddm_view_vm_key(v);
    if (key == NULL)
        return g_strdup_printf("/api/views/%s", name);
    g_autofree char *k = g_uri_escape_string(key, NULL, FALSE);
    return g_strdup_printf("/api/vms/%s/views/%s", k, name);
}

JsonNode *ddm_web_view_json(ddm_view *v, gboolean schema)
{
    g_autoptr(JsonNode) server_form = ddm_view_to_json(v, FALSE);
    JsonNode *out = ddm_jq_view(server_form, FALSE);
    JsonObject *o = json_node_get_object(out);
    if (schema) {
        /* "schema" first, as every document of doc/json.md has it. */
        JsonObject *s = json_object_new();
        json_object_set_int_member(s, "schema", DDM_WEB_API_SCHEMA);
        GList *names = json_object_get_members(o);
        for (GList *l = names; l != NULL; l = l->next)
            json_object_set_member(s, l->data, json_node_copy(json_object_get_member(o, l->data)));
        g_list_free(names);
        json_node_unref(out);
        out = json_node_init_object(json_node_alloc(), s);
        json_object_unref(s);
        o = s;
    }
    if (ddm_view_kind_of(v) == DDM_VIEW_BLOB) {
        g_autofree char *path = ddm_web_view_path(v);
        g_autofree char *url = g_strdup_printf("%s/data?v=%" G_GUINT64_FORMAT, path,
                                               ddm_view_version(v));
        json_object_set_string_member(o, "data_url", url);
    }
    return out;
}
