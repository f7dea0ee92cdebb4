/* SPDX-License-Identifier: Apache-2.0
 *
 * What ddmon answers in this process, without a server: `version`
 * (--version; with the running server's version, pid and server options
 * when one answers), --list-plugins and --check-plugin FILE.
 */
#include <build-config.h>

#include <stdio.h>

#include "cli/cli.h"
#include "core/pluginhost/loader.h"
#include "core/pluginhost/registry.h"

/* The running server's answer to "version" (its version, pid and the
 * server options it was started with), or NULL when none runs (a
 * connection a stopping server reset counts as none; one reset as another
 * server took over is made again: ddm_client_connect_answered). */
static JsonNode *running_server(DdmCli *cli)
{
    if (cli->config == NULL)
        return NULL;
    g_autofree char *path = ddm_cli_socket_path(cli);
    DdmClient *c = ddm_client_connect_answered(path, NULL);
    if (c == NULL)
        return NULL;
    DdmCtlRequest req = {0};
    req.op = DDM_CTL_OP_VERSION;
    JsonNode *resp = ddm_client_call(c, &req, 5000, NULL);
    ddm_client_free(c);
    if (resp != NULL && !ddm_json_get_bool(json_node_get_object(resp), "ok", FALSE))
        g_clear_pointer(&resp, json_node_unref);
    return resp;
}

int ddm_cli_cmd_version(DdmCli *cli, char **args)
{
    (void)args;
    g_autofree char *abi = g_strdup_printf("%d.%d", DDM_CORE_ABI_MAJOR, DDM_CORE_ABI_MINOR);
    g_autoptr(JsonNode) server = running_server(cli);
    JsonObject *so = server != NULL ? json_node_get_object(server) : NULL;
    if (cli->json) {
        JsonBuilder *b = ddm_ctl_ok_begin();
        json_builder_set_member_name(b, "version");
        json_builder_add_string_value(b, PACKAGE_VERSION);
        json_builder_set_member_name(b, "abi");
        json_builder_add_string_value(b, abi);
        if (so != NULL) {
            /* {"version", "abi", "pid", "options": ["--name=value", ...]} */
            json_object_remove_member(so, "ok");
            /* The dashboard's token is for `ddmon web-url`, not for
             * version output people paste into bug reports. */
            json_object_remove_member(so, "web_url");
            json_builder_set_member_name(b, "server");
            json_builder_add_value(b, json_node_copy(server));
        }
        g_autoptr(JsonNode) root = ddm_ctl_ok_end(b);
        ddm_cli_print_json(root);
    } else {
        printf("ddmon %s (plugin ABI %s)\n", PACKAGE_VERSION, abi);
        if (so != NULL) {
            printf("server: ddmon %s (pid %" G_GINT64_FORMAT ")",
                   ddm_json_get_string(so, "version") ? ddm_json_get_string(so, "version") : "?",
                   ddm_json_get_int(so, "pid", 0));
            JsonNode *opts = json_object_get_member(so, "options");
            if (opts != NULL && JSON_NODE_HOLDS_ARRAY(opts)) {
                JsonArray *a = json_node_get_array(opts);
                printf(", options:");
                if (json_array_get_length(a) == 0)
                    printf(" (none)");
                for (guint i = 0; i < json_array_get_length(a); i++) {
                    JsonNode *e = json_array_get_element(a, i);
                    if (JSON_NODE_HOLDS_VALUE(e) && json_node_get_value_type(e) == G_TYPE_STRING)
                        printf(" %s", json_node_get_string(e));
                }
            }
            printf("\n");
        }
    }
    return DDM_EXIT_OK;
}

/* --json: the loader's list keyed by plugin name (doc/json.md: lists with
 * natural names are objects), each record keeping its "name". A file a
 * plugin of the same name shadows (or that was refused as a duplicate)
 * comes later: it gets NAME_2, NAME_3, ... as columns do. Takes @list. */
static JsonObject *plugins_by_name(JsonNode *list)
{
    JsonObject *by_name = json_object_new();
    JsonArray *a = JSON_NODE_HOLDS_ARRAY(list) ? json_node_get_array(list) : NULL;
    for (guint i = 0; a != NULL && i < json_array_get_length(a); i++) {
        JsonObject *p = json_array_get_object_element(a, i);
        const char *name = p != NULL ? ddm_json_get_string(p, "name") : NULL;
        if (name == NULL)
            continue;
        g_autofree char *key = g_strdup(name);
        for (guint k = 2; json_object_has_member(by_name, key); k++) {
            g_free(key);
            key = g_strdup_printf("%s_%u", name, k);
        }
        json_object_set_object_member(by_name, key, json_object_ref(p));
    }
    json_node_unref(list);
    return by_name;
}

int ddm_cli_list_plugins(DdmCli *cli)
{
    g_autoptr(GError) error = NULL;
    JsonNode *list = NULL;
    gboolean ok = ddm_loader_list_plugins(cli->config, &list, &error);
    if (list != NULL) {
        if (cli->json) {
            JsonObject *o = json_object_new();
            json_object_set_object_member(o, "plugins", plugins_by_name(list));
            g_auto(GStrv) path = ddm_loader_search_path(cli->config);
            JsonArray *dirs = json_array_new();
            for (char **d = path; d != NULL && *d != NULL; d++)
                json_array_add_string_element(dirs, *d);
            json_object_set_array_member(o, "search_path", dirs);
            if (!ok) {
                ddm_ctl_failure_set(o, DDM_EXIT_FAILED, error->message);
                ddm_cli_failure.object_printed = TRUE;
            }
            JsonNode *root = json_node_init_object(json_node_alloc(), o);
            ddm_cli_print_json(root);
            json_node_unref(root);
            json_object_unref(o);
        } else {
            if (JSON_NODE_HOLDS_ARRAY(list) && json_array_get_length(json_node_get_array(list)) == 0) {
                g_auto(GStrv) path = ddm_loader_search_path(cli->config);
                g_autofree char *joined = g_strjoinv(" ", path);
                printf("no plugins found; searched: %s\n", joined);
            } else {
                g_autofree char *text = ddm_registry_plugins_json_to_text(list);
                fputs(text, stdout);
                /* The search path, as ddmon(1) has it (and --json). */
                g_auto(GStrv) path = ddm_loader_search_path(cli->config);
                g_autofree char *joined = g_strjoinv(" ", path);
                printf("search path: %s\n", joined);
            }
            json_node_unref(list);
        }
    }
    if (!ok) {
        g_printerr("ddmon: %s\n", error->message);
        return DDM_EXIT_FAILED;
    }
    return DDM_EXIT_OK;
}

int ddm_cli_check_plugin(DdmCli *cli)
{
    g_autoptr(GError) error = NULL;
    g_autoptr(GString) report = g_string_new(NULL);
    /* --json: the report's figures as members too (name, version, abi, ...) */
    g_autoptr(JsonObject) members = json_object_new();
    gboolean ok = ddm_loader_check_file_json(cli->check_plugin, report, members, &error);
    if (cli->json) {
        JsonObject *o = json_object_new();
        json_object_set_boolean_member(o, "ok", ok);
        json_object_set_string_member(o, "file", cli->check_plugin);
        GList *names = json_object_get_members(members);
        for (GList *l = names; l != NULL; l = l->next)
            json_object_set_member(o, l->data, json_node_copy(json_object_get_member(members, l->data)));
        g_list_free(names);
        if (!ok) {
            ddm_ctl_failure_set(o, DDM_EXIT_FAILED, error->message);
            ddm_cli_failure.object_printed = TRUE;
        }
        json_object_set_string_member(o, "report", report->str);
        JsonNode *root = json_node_init_object(json_node_alloc(), o);
        ddm_cli_print_json(root);
        json_node_unref(root);
        json_object_unref(o);
    } else {
        fputs(report->str, stdout);
        if (report->len > 0 && report->str[report->len - 1] != '\n')
            putchar('\n');
    }
    if (!ok) {
        g_printerr("ddmon: %s: refused: %s\n", cli->check_plugin, error->message);
        return DDM_EXIT_FAILED;
    }
    return DDM_EXIT_OK;
}
