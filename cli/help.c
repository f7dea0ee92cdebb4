/* SPDX-License-Identifier: Apache-2.0
 *
 * `ddmon help`: the usage text (the option parser's, whose description is
 * the command table's text, commands.c), then the commands plugins add:
 * the running server's, else those of the plugins this ddmon would load.
 * With --json only the plugins' commands, as {"commands":[...]}.
 */
#include <stdio.h>

#include "cli/cli.h"
#include "core/daemon/daemon.h"
#include "core/pluginhost/registry.h"

static void add_command_json(JsonArray *arr, const char *name, const char *usage,
                             const char *summary, const char *plugin)
{
    JsonObject *o = json_object_new();
    json_object_set_string_member(o, "name", name != NULL ? name : "?");
    /* Plugins write usage with or without the command's name: show it with. */
    g_autofree char *full = usage == NULL                        ? g_strdup(name)
                            : name != NULL && g_str_has_prefix(usage, name) ? g_strdup(usage)
                                                                 : g_strdup_printf("%s %s", name, usage);
    json_object_set_string_member(o, "usage", full != NULL ? full : "");
    json_object_set_string_member(o, "summary", summary != NULL ? summary : "");
    if (plugin != NULL)
        json_object_set_string_member(o, "plugin", plugin);
    else
        json_object_set_null_member(o, "plugin");
    json_array_add_object_element(arr, o);
}

int ddm_cli_cmd_help(DdmCli *cli, char **args)
{
    (void)args;
    /* Plugin commands: from the running server, else from the plugins here. */
    JsonArray *cmds = json_array_new();
    g_autofree char *path = ddm_cli_socket_path(cli);
    DdmClient *c = ddm_client_connect(path, NULL);
    g_autoptr(JsonNode) resp = NULL;
    if (c != NULL) {
        DdmCtlRequest req = {0};
        req.op = DDM_CTL_OP_COMMANDS;
        resp = ddm_client_call(c, &req, DDM_CLI_CALL_TIMEOUT_MS, NULL);
        ddm_client_free(c);
    }
    JsonNode *list = resp != NULL ? json_object_get_member(json_node_get_object(resp), "commands")
                                  : NULL;
    if (list != NULL && JSON_NODE_HOLDS_ARRAY(list)) {
        JsonArray *a = json_node_get_array(list);
        for (guint i = 0; i < json_array_get_length(a); i++) {
            JsonObject *o = json_array_get_object_element(a, i);
            add_command_json(cmds, ddm_json_get_string(o, "name"), ddm_json_get_string(o, "usage"),
                             ddm_json_get_string(o, "summary"), ddm_json_get_string(o, "plugin"));
        }
    } else if (cli->config != NULL) {
        DdmConfig *config = cli->config;
        cli->config = NULL;
        /* Only to list the plugins' commands: no debugger ports, no discovery. */
        config->relay = FALSE;
        config->scan_local = FALSE;
        config->scan_adb = FALSE;
        DdmDaemon *daemon = ddm_daemon_new(config, NULL);
        if (daemon != NULL) {
            g_autoptr(GArray) infos = ddm_registry_commands(ddm_daemon_registry(daemon));
            for (guint i = 0; infos != NULL && i < infos->len; i++) {
                const DdmCommandInfo *ci = &g_array_index(infos, DdmCommandInfo, i);
                add_command_json(cmds, ci->name, ci->usage, ci->summary, ci->plugin);
            }
            ddm_daemon_free(daemon);
        }
    }
    if (cli->json) {
        JsonObject *o = json_object_new();
        json_object_set_array_member(o, "commands", cmds);
        JsonNode *root = json_node_init_object(json_node_alloc(), o);
        ddm_cli_print_json(root);
        json_node_unref(root);
        json_object_unref(o);
        return DDM_EXIT_OK;
    }
    g_autofree char *help = g_option_context_get_help(cli->ctx, FALSE, NULL);
    fputs(help, stdout);
    if (json_array_get_length(cmds) > 0)
        printf("\nCommands from plugins:\n");
    for (guint i = 0; i < json_array_get_length(cmds); i++) {
        JsonObject *o = json_array_get_object_element(cmds, i);
        const char *plugin = ddm_json_get_string(o, "plugin");
        printf("  %-30s %s [%s]\n", ddm_json_get_string(o, "usage"),
               ddm_json_get_string(o, "summary"), plugin != NULL ? plugin : "?");
    }
    json_array_unref(cmds);
    printf("\nSee ddmon(1) for details.\n");
    return DDM_EXIT_OK;
}
