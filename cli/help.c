/* SPDX-License-Identifier: Apache-2.0
 *
 * `ddmon help`: the usage text (the option parser's, whose description is
 * the command table's text, commands.c), then the commands plugins add:
 * the running server's, else those of the plugins this ddmon would load.
 * With --json only the plugins' commands, as {"commands":{NAME:{...}}}.
 * `ddmon help CMD`: that command's usage and summary only (ddmon's own or
 * a plugin's; --json: the one-member object).
 */
#include <stdio.h>
#include <string.h>

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

/* --json: {"commands": {NAME: {"name", "usage", "summary", "plugin"}}},
 * keyed by name as every list with natural names (doc/json.md). */
static void print_commands_json(JsonArray *cmds)
{
    JsonObject *by_name = json_object_new();
    for (guint i = 0; i < json_array_get_length(cmds); i++) {
        JsonObject *c = json_array_get_object_element(cmds, i);
        const char *name = ddm_json_get_string(c, "name");
        if (name != NULL && !json_object_has_member(by_name, name))
            json_object_set_object_member(by_name, name, json_object_ref(c));
    }
    JsonObject *o = json_object_new();
    json_object_set_object_member(o, "commands", by_name);
    JsonNode *root = json_node_init_object(json_node_alloc(), o);
    ddm_cli_print_json(root);
    json_node_unref(root);
    json_object_unref(o);
}

/* `ddmon help CMD`: @cmds (plugins' commands) owned by the caller. */
static int help_one(DdmCli *cli, const char *name, JsonArray *cmds)
{
    JsonArray *one = json_array_new();
    const DdmCliCommand *own = ddm_cli_command_find(name);
    if (own != NULL && own->usage != NULL) {
        add_command_json(one, own->name, own->usage, own->summary, NULL);
    } else {
        for (guint i = 0; i < json_array_get_length(cmds); i++) {
            JsonObject *o = json_array_get_object_element(cmds, i);
            if (g_strcmp0(ddm_json_get_string(o, "name"), name) == 0) {
                json_array_add_object_element(one, json_object_ref(o));
                break;
            }
        }
    }
    if (json_array_get_length(one) == 0) {
        json_array_unref(one);
        return ddm_cli_usage_error("no command '%s'", name);
    }
    if (cli->json) {
        print_commands_json(one);
        json_array_unref(one);
        return DDM_EXIT_OK;
    }
    JsonObject *o = json_array_get_object_element(one, 0);
    const char *plugin = ddm_json_get_string(o, "plugin");
    printf("usage: ddmon %s\n  %s", ddm_json_get_string(o, "usage"), ddm_json_get_string(o, "summary"));
    if (plugin != NULL)
        printf(" [plugin %s]", plugin);
    printf("\n");
    json_array_unref(one);
    return DDM_EXIT_OK;
}

int ddm_cli_cmd_help(DdmCli *cli, char **args)
{
    /* Plugin commands: from the running server, else from the plugins here. */
    JsonArray *cmds = json_array_new();
    g_autofree char *path = ddm_cli_socket_path(cli);
    DdmClient *c = ddm_client_connect_answered(path, NULL);
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
    if (args != NULL && args[0] != NULL) {
        if (args[1] != NULL) {
            json_array_unref(cmds);
            return ddm_cli_usage_error("usage: ddmon help [COMMAND]");
        }
        int rc = help_one(cli, args[0], cmds);
        json_array_unref(cmds);
        return rc;
    }
    if (cli->json) {
        print_commands_json(cmds);
        json_array_unref(cmds);
        return DDM_EXIT_OK;
    }
    g_autofree char *help = g_option_context_get_help(cli->ctx, FALSE, NULL);
    fputs(help, stdout);
    if (json_array_get_length(cmds) > 0)
        printf("\nCommands from plugins:\n");
    for (guint i = 0; i < json_array_get_length(cmds); i++) {
        JsonObject *o = json_array_get_object_element(cmds, i);
        const char *plugin = ddm_json_get_string(o, "plugin");
        const char *usage = ddm_json_get_string(o, "usage");
        const char *summary = ddm_json_get_string(o, "summary");
        if (usage == NULL)
            usage = "?";
        if (summary == NULL)
            summary = "";
        /* As ddmon's own commands: a usage wider than its column gets a
         * line of its own, the summary the next one (not glued to it). */
        if (strlen(usage) > 30)
            printf("  %s\n  %-30s %s [%s]\n", usage, "", summary, plugin != NULL ? plugin : "?");
        else
            printf("  %-30s %s [%s]\n", usage, summary, plugin != NULL ? plugin : "?");
    }
    json_array_unref(cmds);
    printf("\nSee ddmon(1) for details.\n");
    return DDM_EXIT_OK;
}
