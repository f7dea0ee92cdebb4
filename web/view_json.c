/* SPDX-License-Identifier: Apache-2.0
 *
 * A view as the web API shows it (view_json.h), and the one directory it
 * hides.
 */
#include "web/view_json.h"

#include "core/views/jq.h"
#include "core/views/json_blob.h"

#include <string.h>

/* The downloads directory (ddm_web_view_json_hide_dir), and with a '/'. */
static char *hidden_dir, *hidden_prefix;

void ddm_web_view_json_hide_dir(const char *dir)
{
    g_clear_pointer(&hidden_dir, g_free);
    g_clear_pointer(&hidden_prefix, g_free);
    if (dir != NULL && *dir != '\0') {
        hidden_dir = g_strdup(dir);
        hidden_prefix = g_strconcat(dir, "/", NULL);
    }
}

/* Every string of @node with the hidden directory taken out, in place. */
static void hide_in(JsonNode *node)
{
    if (JSON_NODE_HOLDS_OBJECT(node)) {
        JsonObjectIter it;
        JsonNode *member;
        json_object_iter_init(&it, json_node_get_object(node));
        while (json_object_iter_next(&it, NULL, &member))
            hide_in(member);
    } else if (JSON_NODE_HOLDS_ARRAY(node)) {
        JsonArray *a = json_node_get_array(node);
        for (guint i = 0; i < json_array_get_length(a); i++)
            hide_in(json_array_get_element(a, i));
    } else if (JSON_NODE_HOLDS_VALUE(node) && json_node_get_value_type(node) == G_TYPE_STRING &&
               strstr(json_node_get_string(node), hidden_dir) != NULL) {
        g_autoptr(GString) s = g_string_new(json_node_get_string(node));
        g_string_replace(s, hidden_prefix, "", 0);
        g_string_replace(s, hidden_dir, "ddmon.downloads", 0);
        json_node_set_string(node, s->str);
    }
}

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
    if (hidden_dir != NULL)
        hide_in(out);
    if (ddm_view_kind_of(v) == DDM_VIEW_BLOB) {
        g_autofree char *path = ddm_web_view_path(v);
        g_autofree char *url = g_strdup_printf("%s/data?v=%" G_GUINT64_FORMAT, path,
                                               ddm_view_version(v));
        json_object_set_string_member(o, "data_url", url);
    }
    return out;
}
