/* SPDX-License-Identifier: Apache-2.0
 *
 * Listing plugins (registry.h): every plugin record as JSON (for the
 * plugins view and --list-plugins) and that JSON as a text table.
 */
#include "build-config.h" /* autoconf; core/config/config.h is the runtime DdmConfig */

/* One library, several components: each file names its own log domain. */
#undef G_LOG_DOMAIN
#define G_LOG_DOMAIN "ddmon-registry"

#include <string.h>

#include <json-glib/json-glib.h>

#include "core/pluginhost/registry-private.h"

static char *abi_string(const ddm_plugin *p)
{
    if (p->abi_major == 0 && p->abi_minor == 0)
        return NULL;
    return g_strdup_printf("%u.%u", p->abi_major, p->abi_minor);
}

JsonNode *ddm_registry_plugins_to_json(DdmRegistry *reg)
{
    g_return_val_if_fail(reg != NULL, NULL);
    g_autoptr(JsonBuilder) b = json_builder_new();
    json_builder_begin_array(b);
    for (guint i = 0; i < reg->plugins->len; i++) {
        ddm_plugin *p = g_ptr_array_index(reg->plugins, i);
        g_autofree char *abi = abi_string(p);
        json_builder_begin_object(b);
        json_builder_set_member_name(b, "name");
        json_builder_add_string_value(b, p->name);
        json_builder_set_member_name(b, "version");
        json_builder_add_string_value(b, p->version);
        json_builder_set_member_name(b, "abi");
        json_builder_add_string_value(b, abi);
        json_builder_set_member_name(b, "license");
        json_builder_add_string_value(b, p->license);
        json_builder_set_member_name(b, "summary");
        json_builder_add_string_value(b, p->summary);
        json_builder_set_member_name(b, "file");
        json_builder_add_string_value(b, p->path);
        json_builder_set_member_name(b, "status");
        json_builder_add_string_value(b, ddm_registry_plugin_status_name(p->status));
        json_builder_set_member_name(b, "reason");
        json_builder_add_string_value(b, p->reason);
        json_builder_set_member_name(b, "required");
        json_builder_add_boolean_value(b, p->required);
        json_builder_set_member_name(b, "chunks");
        json_builder_begin_array(b);
        g_autoptr(GArray) types = ddm_registry_owned_types(reg, p);
        for (guint j = 0; j < types->len; j++) {
            char name[5];
            json_builder_add_string_value(b, ddm_chunk_name(g_array_index(types, uint32_t, j), name));
        }
        json_builder_end_array(b);
        json_builder_set_member_name(b, "commands");
        json_builder_begin_array(b);
        for (guint j = 0; j < reg->commands->len; j++) {
            DdmCommandReg *c = g_ptr_array_index(reg->commands, j);
            if (c->plugin == p)
                json_builder_add_string_value(b, c->name);
        }
        json_builder_end_array(b);
        json_builder_set_member_name(b, "options");
        json_builder_begin_array(b);
        g_auto(GStrv) options = ddm_registry_options_read(p);
        for (char **o = options; *o; o++)
            json_builder_add_string_value(b, *o);
        json_builder_end_array(b);
        json_builder_end_object(b);
    }
    json_builder_end_array(b);
    return json_builder_get_root(b);
}

static const char *member_str(JsonObject *o, const char *name)
{
    JsonNode *n = json_object_get_member(o, name);
    if (!n || JSON_NODE_HOLDS_NULL(n) || json_node_get_value_type(n) != G_TYPE_STRING)
        return NULL;
    return json_node_get_string(n);
}

char *ddm_registry_plugins_json_to_text(JsonNode *plugins)
{
    g_return_val_if_fail(plugins != NULL, NULL);
    GString *out = g_string_new(NULL);
    if (!JSON_NODE_HOLDS_ARRAY(plugins))
        return g_string_free(out, FALSE);
    JsonArray *arr = json_node_get_array(plugins);
    guint n = json_array_get_length(arr);
    if (n == 0) {
        g_string_append(out, "no plugins found\n");
        return g_string_free(out, FALSE);
    }
    int w_name = 4, w_ver = 7;
    for (guint i = 0; i < n; i++) {
        JsonObject *o = json_array_get_object_element(arr, i);
        if (!o)
            continue;
        const char *name = member_str(o, "name"), *ver = member_str(o, "version");
        w_name = MAX(w_name, name ? (int)strlen(name) : 0);
        w_ver = MAX(w_ver, ver ? (int)strlen(ver) : 0);
    }
    g_string_append_printf(out, "%-*s  %-*s  %-4s  %-12s  %-8s  %s\n", w_name, "NAME", w_ver,
                           "VERSION", "ABI", "LICENSE", "STATUS", "FILE");
    for (guint i = 0; i < n; i++) {
        JsonObject *o = json_array_get_object_element(arr, i);
        if (!o)
            continue;
        const char *name = member_str(o, "name"), *ver = member_str(o, "version");
        const char *abi = member_str(o, "abi"), *lic = member_str(o, "license");
        const char *st = member_str(o, "status"), *file = member_str(o, "file");
        const char *reason = member_str(o, "reason");
        g_string_append_printf(out, "%-*s  %-*s  %-4s  %-12s  %-8s  %s\n", w_name,
                               name ? name : "?", w_ver, ver ? ver : "-", abi ? abi : "-",
                               lic ? lic : "-", st ? st : "?", file ? file : "-");
        if (reason && *reason)
            g_string_append_printf(out, "%*s  why: %s\n", w_name, "", reason);
        JsonNode *opts_node = json_object_get_member(o, "options");
        JsonArray *opts = opts_node && JSON_NODE_HOLDS_ARRAY(opts_node)
                              ? json_node_get_array(opts_node)
                              : NULL;
        if (opts && json_array_get_length(opts) > 0) {
            GString *line = g_string_new(NULL);
            for (guint j = 0; j < json_array_get_length(opts); j++) {
                JsonNode *e = json_array_get_element(opts, j);
                if (JSON_NODE_HOLDS_VALUE(e) && json_node_get_value_type(e) == G_TYPE_STRING)
                    g_string_append_printf(line, "%s%s", line->len ? ", " : "",
                                           json_node_get_string(e));
            }
            g_string_append_printf(out, "%*s  options: %s\n", w_name, "", line->str);
            g_string_free(line, TRUE);
        }
    }
    return g_string_free(out, FALSE);
}
