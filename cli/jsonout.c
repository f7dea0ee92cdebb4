/* SPDX-License-Identifier: Apache-2.0
 *
 * View JSON (the server's) to the JSON scripts get (--json): one converter
 * for every printer. See jsonout.h; doc/json.md is the user's side.
 */
#include <string.h>

#include "cli/jsonout.h"
#include "core/pluginhost/registry.h" /* DDM_HEADLINE_VIEW */
#include "core/wire/ctlproto.h"

/* ------------------------------------------------------------- helpers */

/* Every member of @from into @to, in @from's order (an iterator's order is
 * the hash table's). */
static void copy_all(JsonObject *to, JsonObject *from, const char *skip)
{
    GList *names = json_object_get_members(from);
    for (GList *l = names; l != NULL; l = l->next)
        if (skip == NULL || strcmp(l->data, skip) != 0)
            json_object_set_member(to, l->data, json_node_copy(json_object_get_member(from, l->data)));
    g_list_free(names);
}

static void add_schema(JsonObject *o)
{
    json_object_set_int_member(o, "schema", DDM_JSON_SCHEMA);
}

/* ------------------------------------------------------ headline figures */

static gboolean is_headline(JsonObject *v)
{
    return g_strcmp0(ddm_json_get_string(v, "name"), DDM_HEADLINE_VIEW) == 0 &&
           g_strcmp0(ddm_json_get_string(v, "owner"), "ddmon") == 0 && ddm_json_get_string(v, "vm") != NULL;
}

/* VM key -> the converted "fields" object of its headline view (owned nodes). */
static void note_headline(GHashTable *figures, JsonNode *view)
{
    JsonObject *v = ddm_json_node_object(view);
    if (v == NULL || !is_headline(v))
        return;
    g_autoptr(JsonNode) conv = ddm_jq_view(view, FALSE);
    JsonNode *fields = json_object_get_member(json_node_get_object(conv), "fields");
    if (fields != NULL && JSON_NODE_HOLDS_OBJECT(fields))
        g_hash_table_replace(figures, g_strdup(ddm_json_get_string(v, "vm")), json_node_copy(fields));
}

static GHashTable *figures_new(void)
{
    return g_hash_table_new_full(g_str_hash, g_str_equal, g_free, (GDestroyNotify)json_node_unref);
}

/* The figures of @key into @o, members @o has already left alone. */
static void add_figures(JsonObject *o, GHashTable *figures, const char *key)
{
    JsonNode *f = key != NULL ? g_hash_table_lookup(figures, key) : NULL;
    if (f == NULL)
        return;
    JsonObject *fo = json_node_get_object(f);
    GList *names = json_object_get_members(fo);
    for (GList *l = names; l != NULL; l = l->next)
        if (!json_object_has_member(o, l->data))
            json_object_set_member(o, l->data, json_node_copy(json_object_get_member(fo, l->data)));
    g_list_free(names);
}

JsonNode *ddm_jq_vms(JsonNode *vms, JsonNode *headlines, gboolean schema)
{
    JsonNode *out = ddm_jq_view(vms, schema);
    g_autoptr(GHashTable) figures = figures_new();
    if (headlines != NULL && JSON_NODE_HOLDS_ARRAY(headlines)) {
        JsonArray *a = json_node_get_array(headlines);
        for (guint i = 0; i < json_array_get_length(a); i++)
            note_headline(figures, json_array_get_element(a, i));
    } else if (headlines != NULL) {
        note_headline(figures, headlines);
    }
    JsonArray *rows = ddm_json_get_array(ddm_json_node_object(out), "rows");
    for (guint i = 0; rows != NULL && i < json_array_get_length(rows); i++) {
        JsonObject *r = ddm_json_node_object(json_array_get_element(rows, i));
        if (r != NULL)
            add_figures(r, figures, ddm_json_get_string(r, "key"));
    }
    return out;
}

/* ------------------------------------------------------------- grouping */

/* The VM object for @key in @vms_obj, made if need be. */
static JsonObject *vm_object(JsonObject *vms_obj, const char *key)
{
    JsonNode *n = json_object_get_member(vms_obj, key);
    if (n != NULL)
        return json_node_get_object(n);
    JsonObject *o = json_object_new();
    json_object_set_string_member(o, "key", key);
    json_object_set_null_member(o, "pid");
    json_object_set_null_member(o, "app");
    json_object_set_null_member(o, "device");
    json_object_set_object_member(vms_obj, key, o);
    return o;
}

static JsonObject *views_object(JsonObject *vm)
{
    JsonNode *n = json_object_get_member(vm, "views");
    if (n == NULL) {
        json_object_set_object_member(vm, "views", json_object_new());
        n = json_object_get_member(vm, "views");
    }
    return json_node_get_object(n);
}

/* ddm_jq_group_views(), with figures also from @headlines and, when
 * @only_with_views, no object for a VM none of @views belongs to. */
static void group_views(JsonObject *into, JsonNode *vms_list, GPtrArray *views, JsonNode *headlines,
                        gboolean only_with_views)
{
    JsonObject *vms_obj = json_object_new();
    JsonObject *global = json_object_new();
    g_autoptr(GHashTable) figures = figures_new();
    for (guint i = 0; views != NULL && i < views->len; i++)
        note_headline(figures, g_ptr_array_index(views, i));
    JsonArray *ha = headlines != NULL && JSON_NODE_HOLDS_ARRAY(headlines) ? json_node_get_array(headlines) : NULL;
    for (guint i = 0; ha != NULL && i < json_array_get_length(ha); i++)
        note_headline(figures, json_array_get_element(ha, i));
    g_autoptr(GHashTable) with_views = g_hash_table_new(g_str_hash, g_str_equal);
    for (guint i = 0; only_with_views && views != NULL && i < views->len; i++) {
        const char *key = ddm_json_get_string(ddm_json_node_object(g_ptr_array_index(views, i)), "vm");
        if (key != NULL)
            g_hash_table_add(with_views, (gpointer)key);
    }
    if (vms_list != NULL) {
        g_autoptr(JsonNode) list = ddm_jq_view(vms_list, FALSE);
        JsonArray *rows = ddm_json_get_array(ddm_json_node_object(list), "rows");
        for (guint i = 0; rows != NULL && i < json_array_get_length(rows); i++) {
            JsonObject *r = ddm_json_node_object(json_array_get_element(rows, i));
            const char *key = ddm_json_get_string(r, "key");
            if (key == NULL || json_object_has_member(vms_obj, key) ||
                (only_with_views && !g_hash_table_contains(with_views, key)))
                continue;
            JsonObject *o = json_object_new();
            copy_all(o, r, NULL);
            add_figures(o, figures, key);
            json_object_set_object_member(o, "views", json_object_new());
            json_object_set_object_member(vms_obj, key, o);
        }
    }
    for (guint i = 0; views != NULL && i < views->len; i++) {
        JsonNode *v = g_ptr_array_index(views, i);
        JsonObject *vo = ddm_json_node_object(v);
        const char *name = ddm_json_get_string(vo, "name");
        if (name == NULL)
            continue;
        const char *key = ddm_json_get_string(vo, "vm");
        JsonObject *dst = global;
        if (key != NULL) {
            JsonObject *vm = vm_object(vms_obj, key);
            add_figures(vm, figures, key);
            dst = views_object(vm);
        }
        json_object_set_member(dst, name, ddm_jq_view(v, FALSE));
    }
    json_object_set_object_member(into, "vms", vms_obj);
    json_object_set_object_member(into, "global", global);
}

void ddm_jq_group_views(JsonObject *into, JsonNode *vms_list, GPtrArray *views)
{
    group_views(into, vms_list, views, NULL, FALSE);
}

void ddm_jq_group_views_named(JsonObject *into, JsonNode *vms_list, GPtrArray *views,
                              JsonNode *headlines)
{
    group_views(into, vms_list, views, headlines, TRUE);
}

JsonNode *ddm_jq_views_list(JsonNode *resp)
{
    JsonObject *in = ddm_json_node_object(resp);
    JsonObject *out = json_object_new();
    add_schema(out);
    JsonObject *vms_obj = json_object_new();
    JsonObject *global = json_object_new();
    JsonArray *vms = ddm_json_get_array(in, "vms");
    for (guint i = 0; vms != NULL && i < json_array_get_length(vms); i++) {
        JsonObject *v = ddm_json_node_object(json_array_get_element(vms, i));
        const char *key = ddm_json_get_string(v, "key");
        if (key == NULL || json_object_has_member(vms_obj, key))
            continue;
        JsonObject *o = json_object_new();
        copy_all(o, v, NULL);
        json_object_set_object_member(o, "views", json_object_new());
        json_object_set_object_member(vms_obj, key, o);
    }
    JsonArray *views = ddm_json_get_array(in, "views");
    for (guint i = 0; views != NULL && i < json_array_get_length(views); i++) {
        JsonNode *v = json_array_get_element(views, i);
        JsonObject *vo = ddm_json_node_object(v);
        const char *name = ddm_json_get_string(vo, "name");
        if (name == NULL)
            continue;
        const char *key = ddm_json_get_string(vo, "vm");
        JsonObject *dst = key != NULL ? views_object(vm_object(vms_obj, key)) : global;
        json_object_set_member(dst, name, json_node_copy(v));
    }
    json_object_set_object_member(out, "vms", vms_obj);
    json_object_set_object_member(out, "global", global);
    return ddm_json_object_node(out);
}

/* ------------------------------------------------------ events, answers */

JsonNode *ddm_jq_event(JsonNode *msg)
{
    JsonObject *in = ddm_json_node_object(msg);
    JsonObject *out = json_object_new();
    add_schema(out);
    if (in == NULL)
        return ddm_json_object_node(out);
    JsonNode *view = json_object_get_member(in, "view");
    JsonObject *vo = ddm_json_node_object(view);
    GList *names = json_object_get_members(in);
    for (GList *l = names; l != NULL; l = l->next) {
        const char *name = l->data;
        JsonNode *value = json_object_get_member(in, name);
        if (strcmp(name, "view") == 0) {
            if (vo != NULL) {
                ddm_json_copy_member(out, vo, "vm", NULL);
                ddm_json_copy_member(out, vo, "name", NULL);
            }
            json_object_set_member(out, "view", ddm_jq_view(value, FALSE));
        } else if (strcmp(name, "schema") != 0) {
            json_object_set_member(out, name, json_node_copy(value));
        }
    }
    g_list_free(names);
    return ddm_json_object_node(out);
}

JsonNode *ddm_jq_command_answer(JsonNode *resp)
{
    JsonObject *in = ddm_json_node_object(resp);
    if (in == NULL)
        return json_node_copy(resp);
    JsonObject *out = json_object_new();
    add_schema(out);
    GList *names = json_object_get_members(in);
    for (GList *l = names; l != NULL; l = l->next) {
        JsonNode *value = json_object_get_member(in, l->data);
        if (strcmp(l->data, "result") == 0 && JSON_NODE_HOLDS_OBJECT(value))
            json_object_set_member(out, l->data, ddm_jq_view(value, FALSE));
        else if (strcmp(l->data, "schema") != 0)
            json_object_set_member(out, l->data, json_node_copy(value));
    }
    g_list_free(names);
    return ddm_json_object_node(out);
}

JsonNode *ddm_jq_stamped(JsonNode *doc)
{
    JsonObject *in = ddm_json_node_object(doc);
    if (in == NULL || json_object_has_member(in, "schema"))
        return json_node_ref(doc);
    JsonObject *out = json_object_new();
    add_schema(out);
    copy_all(out, in, NULL);
    return ddm_json_object_node(out);
}
