/* SPDX-License-Identifier: Apache-2.0
 *
 * View JSON (the server's) to the JSON scripts get (--json): one converter
 * for every printer. See jsonout.h; doc/json.md is the user's side.
 */
#include <string.h>

#include "cli/jsonout.h"
#include "core/pluginhost/registry.h" /* DDM_HEADLINE_VIEW */
#include "core/wire/ctlproto.h"

/* ---------------------------------------------------------------- keys */

char *ddm_jq_key(const char *name)
{
    GString *s = g_string_new(NULL);
    gboolean gap = FALSE;   /* a separator is due before the next word character */
    char prev = '\0';       /* the previous ASCII letter or digit kept, '\0' after a gap */
    for (const char *p = name != NULL ? name : ""; *p != '\0'; p++) {
        char c = *p;
        if (c == '%') {
            if (s->len > 0)
                g_string_append_c(s, '_');
            g_string_append(s, "percent");
            gap = TRUE;
            prev = '\0';
            continue;
        }
        if (!g_ascii_isalnum(c)) { /* space, punctuation, a byte of a non-ASCII character */
            gap = TRUE;
            prev = '\0';
            continue;
        }
        if (g_ascii_isupper(c) && prev != '\0' && (g_ascii_islower(prev) || g_ascii_isdigit(prev)))
            gap = TRUE; /* camelCase */
        if (gap && s->len > 0)
            g_string_append_c(s, '_');
        gap = FALSE;
        g_string_append_c(s, g_ascii_tolower(c));
        prev = c;
    }
    if (s->len == 0)
        g_string_append(s, "value");
    else if (g_ascii_isdigit(s->str[0]))
        g_string_prepend_c(s, '_');
    return g_string_free(s, FALSE);
}

char **ddm_jq_keys(const char *const *names, guint n)
{
    char **keys = g_new0(char *, n + 1);
    g_autoptr(GHashTable) used = g_hash_table_new(g_str_hash, g_str_equal);
    /* First the keys as they come, so "x_2" given by a column itself keeps
     * its name and a later duplicate "x" skips it. */
    char **plain = g_new0(char *, n + 1);
    for (guint i = 0; i < n; i++)
        plain[i] = ddm_jq_key(names[i]);
    g_autoptr(GHashTable) wanted = g_hash_table_new(g_str_hash, g_str_equal);
    for (guint i = 0; i < n; i++)
        g_hash_table_add(wanted, plain[i]);
    for (guint i = 0; i < n; i++) {
        if (!g_hash_table_contains(used, plain[i])) {
            keys[i] = g_strdup(plain[i]);
        } else {
            for (guint k = 2;; k++) {
                char *cand = g_strdup_printf("%s_%u", plain[i], k);
                if (!g_hash_table_contains(used, cand) && !g_hash_table_contains(wanted, cand)) {
                    keys[i] = cand;
                    break;
                }
                g_free(cand);
            }
        }
        g_hash_table_add(used, keys[i]);
    }
    g_strfreev(plain);
    return keys;
}

/* --------------------------------------------------------------- views */

static const char *str_member(JsonObject *o, const char *name)
{
    return o != NULL ? ddm_json_get_string(o, name) : NULL;
}

static JsonArray *array_member(JsonObject *o, const char *name)
{
    JsonNode *n = o != NULL ? json_object_get_member(o, name) : NULL;
    return n != NULL && JSON_NODE_HOLDS_ARRAY(n) ? json_node_get_array(n) : NULL;
}

static JsonObject *object_of(JsonNode *n)
{
    return n != NULL && JSON_NODE_HOLDS_OBJECT(n) ? json_node_get_object(n) : NULL;
}

static void copy_member(JsonObject *to, JsonObject *from, const char *name, const char *as)
{
    JsonNode *n = json_object_get_member(from, name);
    if (n != NULL)
        json_object_set_member(to, as != NULL ? as : name, json_node_copy(n));
}

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

static JsonNode *object_node(JsonObject *o /* taken */)
{
    JsonNode *n = json_node_init_object(json_node_alloc(), o);
    json_object_unref(o);
    return n;
}

static void add_schema(JsonObject *o)
{
    json_object_set_int_member(o, "schema", DDM_JSON_SCHEMA);
}

static void convert_table(JsonObject *out, JsonObject *in)
{
    JsonArray *cols = array_member(in, "columns");
    JsonArray *rows = array_member(in, "rows");
    if (cols == NULL && rows == NULL)
        return; /* a removed view's metadata */
    guint n = cols != NULL ? json_array_get_length(cols) : 0;
    const char **names = g_new0(const char *, n + 1);
    for (guint i = 0; i < n; i++) {
        const char *nm = str_member(object_of(json_array_get_element(cols, i)), "name");
        names[i] = nm != NULL ? nm : "";
    }
    char **keys = ddm_jq_keys(names, n);
    JsonObject *co = json_object_new();
    for (guint i = 0; i < n; i++) {
        JsonObject *c = object_of(json_array_get_element(cols, i));
        JsonObject *d = json_object_new();
        json_object_set_string_member(d, "name", names[i]);
        if (c != NULL) {
            copy_member(d, c, "type", NULL);
            copy_member(d, c, "unit", NULL);
        }
        if (!json_object_has_member(d, "unit"))
            json_object_set_null_member(d, "unit");
        json_object_set_object_member(co, keys[i], d);
    }
    json_object_set_object_member(out, "columns", co);
    JsonArray *ro = json_array_new();
    for (guint r = 0; rows != NULL && r < json_array_get_length(rows); r++) {
        JsonNode *row = json_array_get_element(rows, r);
        if (!JSON_NODE_HOLDS_ARRAY(row))
            continue;
        JsonArray *cells = json_node_get_array(row);
        JsonObject *o = json_object_new();
        for (guint i = 0; i < n; i++) {
            JsonNode *cell = i < json_array_get_length(cells) ? json_array_get_element(cells, i) : NULL;
            if (cell != NULL)
                json_object_set_member(o, keys[i], json_node_copy(cell));
            else
                json_object_set_null_member(o, keys[i]);
        }
        json_array_add_object_element(ro, o);
    }
    json_object_set_array_member(out, "rows", ro);
    g_strfreev(keys);
    g_free(names);
}

static void convert_record(JsonObject *out, JsonObject *in)
{
    JsonArray *fields = array_member(in, "fields");
    if (fields == NULL)
        return;
    guint n = json_array_get_length(fields);
    const char **names = g_new0(const char *, n + 1);
    for (guint i = 0; i < n; i++) {
        const char *k = str_member(object_of(json_array_get_element(fields, i)), "key");
        names[i] = k != NULL ? k : "";
    }
    char **keys = ddm_jq_keys(names, n);
    JsonObject *fo = json_object_new();
    for (guint i = 0; i < n; i++) {
        JsonObject *f = object_of(json_array_get_element(fields, i));
        JsonNode *v = f != NULL ? json_object_get_member(f, "value") : NULL;
        if (v != NULL)
            json_object_set_member(fo, keys[i], json_node_copy(v));
        else
            json_object_set_null_member(fo, keys[i]);
    }
    json_object_set_object_member(out, "fields", fo);
    g_strfreev(keys);
    g_free(names);
}

JsonNode *ddm_jq_view(JsonNode *view, gboolean schema)
{
    JsonObject *in = object_of(view);
    if (in == NULL || !json_object_has_member(in, "kind") || !json_object_has_member(in, "name"))
        return view != NULL ? json_node_copy(view) : json_node_init_null(json_node_alloc());
    JsonObject *out = json_object_new();
    if (schema)
        add_schema(out);
    static const char *const meta[] = {"name", "vm", "owner", "title", "kind", "version"};
    for (gsize i = 0; i < G_N_ELEMENTS(meta); i++)
        copy_member(out, in, meta[i], NULL);
    const char *kind = str_member(in, "kind");
    if (g_strcmp0(kind, "table") == 0) {
        convert_table(out, in);
    } else if (g_strcmp0(kind, "record") == 0) {
        convert_record(out, in);
    } else if (g_strcmp0(kind, "blob") == 0) {
        copy_member(out, in, "media_type", NULL);
        copy_member(out, in, "size", "size_bytes");
        copy_member(out, in, "file", NULL);
        copy_member(out, in, "data_base64", NULL);
    }
    return object_node(out);
}

/* ------------------------------------------------------ headline figures */

static gboolean is_headline(JsonObject *v)
{
    return g_strcmp0(str_member(v, "name"), DDM_HEADLINE_VIEW) == 0 &&
           g_strcmp0(str_member(v, "owner"), "ddmon") == 0 && str_member(v, "vm") != NULL;
}

/* VM key -> the converted "fields" object of its headline view (owned nodes). */
static void note_headline(GHashTable *figures, JsonNode *view)
{
    JsonObject *v = object_of(view);
    if (v == NULL || !is_headline(v))
        return;
    g_autoptr(JsonNode) conv = ddm_jq_view(view, FALSE);
    JsonNode *fields = json_object_get_member(json_node_get_object(conv), "fields");
    if (fields != NULL && JSON_NODE_HOLDS_OBJECT(fields))
        g_hash_table_replace(figures, g_strdup(str_member(v, "vm")), json_node_copy(fields));
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
    JsonArray *rows = array_member(object_of(out), "rows");
    for (guint i = 0; rows != NULL && i < json_array_get_length(rows); i++) {
        JsonObject *r = object_of(json_array_get_element(rows, i));
        if (r != NULL)
            add_figures(r, figures, str_member(r, "key"));
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

void ddm_jq_group_views(JsonObject *into, JsonNode *vms_list, GPtrArray *views)
{
    JsonObject *vms_obj = json_object_new();
    JsonObject *global = json_object_new();
    g_autoptr(GHashTable) figures = figures_new();
    for (guint i = 0; views != NULL && i < views->len; i++)
        note_headline(figures, g_ptr_array_index(views, i));
    if (vms_list != NULL) {
        g_autoptr(JsonNode) list = ddm_jq_view(vms_list, FALSE);
        JsonArray *rows = array_member(object_of(list), "rows");
        for (guint i = 0; rows != NULL && i < json_array_get_length(rows); i++) {
            JsonObject *r = object_of(json_array_get_element(rows, i));
            const char *key = str_member(r, "key");
            if (key == NULL || json_object_has_member(vms_obj, key))
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
        JsonObject *vo = object_of(v);
        const char *name = str_member(vo, "name");
        if (name == NULL)
            continue;
        const char *key = str_member(vo, "vm");
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

JsonNode *ddm_jq_views_list(JsonNode *resp)
{
    JsonObject *in = object_of(resp);
    JsonObject *out = json_object_new();
    add_schema(out);
    JsonObject *vms_obj = json_object_new();
    JsonObject *global = json_object_new();
    JsonArray *vms = array_member(in, "vms");
    for (guint i = 0; vms != NULL && i < json_array_get_length(vms); i++) {
        JsonObject *v = object_of(json_array_get_element(vms, i));
        const char *key = str_member(v, "key");
        if (key == NULL || json_object_has_member(vms_obj, key))
            continue;
        JsonObject *o = json_object_new();
        copy_all(o, v, NULL);
        json_object_set_object_member(o, "views", json_object_new());
        json_object_set_object_member(vms_obj, key, o);
    }
    JsonArray *views = array_member(in, "views");
    for (guint i = 0; views != NULL && i < json_array_get_length(views); i++) {
        JsonNode *v = json_array_get_element(views, i);
        JsonObject *vo = object_of(v);
        const char *name = str_member(vo, "name");
        if (name == NULL)
            continue;
        const char *key = str_member(vo, "vm");
        JsonObject *dst = key != NULL ? views_object(vm_object(vms_obj, key)) : global;
        json_object_set_member(dst, name, json_node_copy(v));
    }
    json_object_set_object_member(out, "vms", vms_obj);
    json_object_set_object_member(out, "global", global);
    return object_node(out);
}

/* ------------------------------------------------------ events, answers */

JsonNode *ddm_jq_event(JsonNode *msg)
{
    JsonObject *in = object_of(msg);
    JsonObject *out = json_object_new();
    add_schema(out);
    if (in == NULL)
        return object_node(out);
    JsonNode *view = json_object_get_member(in, "view");
    JsonObject *vo = object_of(view);
    GList *names = json_object_get_members(in);
    for (GList *l = names; l != NULL; l = l->next) {
        const char *name = l->data;
        JsonNode *value = json_object_get_member(in, name);
        if (strcmp(name, "view") == 0) {
            if (vo != NULL) {
                copy_member(out, vo, "vm", NULL);
                copy_member(out, vo, "name", NULL);
            }
            json_object_set_member(out, "view", ddm_jq_view(value, FALSE));
        } else if (strcmp(name, "schema") != 0) {
            json_object_set_member(out, name, json_node_copy(value));
        }
    }
    g_list_free(names);
    return object_node(out);
}

JsonNode *ddm_jq_command_answer(JsonNode *resp)
{
    JsonObject *in = object_of(resp);
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
    return object_node(out);
}

JsonNode *ddm_jq_stamped(JsonNode *doc)
{
    JsonObject *in = object_of(doc);
    if (in == NULL || json_object_has_member(in, "schema"))
        return json_node_ref(doc);
    JsonObject *out = json_object_new();
    add_schema(out);
    copy_all(out, in, NULL);
    return object_node(out);
}
