/* SPDX-License-Identifier: Apache-2.0
 *
 * A view's JSON for people with jq (doc/json.md): the server's form
 * (ddm_view_to_json) with columns and fields keyed by their snake_case
 * names and table rows as objects. The one converter of a single view,
 * shared by the CLI's --json (cli/jsonout.c) and the web API (web/api.c).
 */
#include <string.h>

#include "core/views/jq.h"
#include "core/views/json_blob.h"
#include "core/wire/ctlproto.h" /* ddm_json_get_* member helpers */

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

static void add_schema(JsonObject *o)
{
    json_object_set_int_member(o, "schema", DDM_JSON_SCHEMA);
}

/* A cell of a "list" column (a str column of comma-separated names, e.g.
 * the plugins view's chunks "REAL,REAQ") as a JSON array of its names; a
 * null or empty cell is the empty list. Other cells as they are. */
static JsonNode *list_cell(JsonNode *cell)
{
    JsonArray *a = json_array_new();
    if (cell != NULL && JSON_NODE_HOLDS_VALUE(cell) && json_node_get_value_type(cell) == G_TYPE_STRING) {
        g_auto(GStrv) parts = g_strsplit(json_node_get_string(cell), ",", -1);
        for (char **p = parts; *p != NULL; p++)
            if (**p != '\0')
                json_array_add_string_element(a, *p);
    } else if (cell != NULL && !JSON_NODE_HOLDS_NULL(cell)) {
        json_array_unref(a);
        return json_node_copy(cell);
    }
    JsonNode *n = json_node_new(JSON_NODE_ARRAY);
    json_node_take_array(n, a);
    return n;
}

static gboolean is_list_column(JsonObject *c)
{
    return c != NULL && g_strcmp0(ddm_json_get_string(c, "type"), "str") == 0 &&
           g_strcmp0(ddm_json_get_string(c, "unit"), "list") == 0;
}

static void convert_table(JsonObject *out, JsonObject *in)
{
    JsonArray *cols = ddm_json_get_array(in, "columns");
    JsonArray *rows = ddm_json_get_array(in, "rows");
    if (cols == NULL && rows == NULL)
        return; /* a removed view's metadata */
    guint n = cols != NULL ? json_array_get_length(cols) : 0;
    const char **names = g_new0(const char *, n + 1);
    for (guint i = 0; i < n; i++) {
        const char *nm = ddm_json_get_string(ddm_json_node_object(json_array_get_element(cols, i)), "name");
        names[i] = nm != NULL ? nm : "";
    }
    char **keys = ddm_jq_keys(names, n);
    gboolean *list = g_new0(gboolean, n + 1);
    for (guint i = 0; i < n; i++)
        list[i] = is_list_column(ddm_json_node_object(json_array_get_element(cols, i)));
    JsonObject *co = json_object_new();
    for (guint i = 0; i < n; i++) {
        JsonObject *c = ddm_json_node_object(json_array_get_element(cols, i));
        JsonObject *d = json_object_new();
        json_object_set_string_member(d, "name", names[i]);
        if (c != NULL) {
            ddm_json_copy_member(d, c, "type", NULL);
            ddm_json_copy_member(d, c, "unit", NULL);
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
            if (list[i])
                json_object_set_member(o, keys[i], list_cell(cell));
            else if (cell != NULL)
                json_object_set_member(o, keys[i], json_node_copy(cell));
            else
                json_object_set_null_member(o, keys[i]);
        }
        json_array_add_object_element(ro, o);
    }
    json_object_set_array_member(out, "rows", ro);
    g_free(list);
    g_strfreev(keys);
    g_free(names);
}

static void convert_record(JsonObject *out, JsonObject *in)
{
    JsonArray *fields = ddm_json_get_array(in, "fields");
    if (fields == NULL)
        return;
    guint n = json_array_get_length(fields);
    const char **names = g_new0(const char *, n + 1);
    for (guint i = 0; i < n; i++) {
        const char *k = ddm_json_get_string(ddm_json_node_object(json_array_get_element(fields, i)), "key");
        names[i] = k != NULL ? k : "";
    }
    char **keys = ddm_jq_keys(names, n);
    JsonObject *fo = json_object_new();
    for (guint i = 0; i < n; i++) {
        JsonObject *f = ddm_json_node_object(json_array_get_element(fields, i));
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

/* A JSON blob's document as "data", parsed; "data": null and
 * "data_error" when it cannot be read; nothing when it came without. */
static void embed_json_blob(JsonObject *out, JsonObject *in)
{
    g_autoptr(GError) error = NULL;
    JsonNode *doc = ddm_json_blob_of_view(in, &error);
    if (doc != NULL) {
        json_object_set_member(out, "data", doc);
    } else if (error != NULL) {
        json_object_set_null_member(out, "data");
        json_object_set_string_member(out, "data_error", error->message);
    }
}

JsonNode *ddm_jq_view(JsonNode *view, gboolean schema)
{
    JsonObject *in = ddm_json_node_object(view);
    if (in == NULL || !json_object_has_member(in, "kind") || !json_object_has_member(in, "name"))
        return view != NULL ? json_node_copy(view) : json_node_init_null(json_node_alloc());
    JsonObject *out = json_object_new();
    if (schema)
        add_schema(out);
    static const char *const meta[] = {"name", "vm", "owner", "title", "kind", "version"};
    for (gsize i = 0; i < G_N_ELEMENTS(meta); i++)
        ddm_json_copy_member(out, in, meta[i], NULL);
    const char *kind = ddm_json_get_string(in, "kind");
    if (g_strcmp0(kind, "table") == 0) {
        convert_table(out, in);
    } else if (g_strcmp0(kind, "record") == 0) {
        convert_record(out, in);
    } else if (g_strcmp0(kind, "blob") == 0) {
        ddm_json_copy_member(out, in, "media_type", NULL);
        ddm_json_copy_member(out, in, "size", "size_bytes");
        ddm_json_copy_member(out, in, "file", NULL);
        if (ddm_json_blob_type(ddm_json_get_string(in, "media_type")))
            embed_json_blob(out, in);
        else
            ddm_json_copy_member(out, in, "data_base64", NULL);
    }
    return ddm_json_object_node(out);
}
