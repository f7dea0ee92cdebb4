/* SPDX-License-Identifier: Apache-2.0
 *
 * The command table: every command ddmon knows, with its handler, its
 * line in the usage text, how many arguments it takes, whether it takes
 * --vm and what it does with a server. main() dispatches through it and
 * the usage text (`ddmon help`, `ddmon --help`) is made from it, so the
 * two cannot disagree. Adding a command is adding a row.
 */
#include <string.h>

#include "cli/cli.h"

/* The usage text's left column is this wide; a longer usage gets a line
 * of its own and its summary goes on the next. */
#define USAGE_WIDTH 22

static const DdmCliCommand commands[] = {
    {"watch", ddm_cli_cmd_watch, "watch", "live view of the VMs (the default)", 0, 0, NULL,
     DDM_CLI_SERVER_NEEDED, DDM_CLI_CMD_DEFAULT},
    {"vms", ddm_cli_cmd_vms, "vms", "the VM list", 0, 0, NULL, DDM_CLI_SERVER_NEEDED, 0},
    {"view", ddm_cli_cmd_view, "view NAME [--vm VM]", "one view (of one VM, or of every VM)", 1, 1,
     "usage: ddmon view NAME [--vm PID|KEY|APP]", DDM_CLI_SERVER_NEEDED, DDM_CLI_CMD_VM},
    {"views", ddm_cli_cmd_views, "views [--vm VM]", "the names of the views, per VM", 0, 0, NULL,
     DDM_CLI_SERVER_NEEDED, DDM_CLI_CMD_VM},
    {"plugins", ddm_cli_cmd_plugins, "plugins", "the plugin list", 0, 0, NULL,
     DDM_CLI_SERVER_NEEDED, 0},
    {"snapshot", ddm_cli_cmd_snapshot, "snapshot [--wait MS] [--out-dir DIR] [--in-process] [--gc] [--hprof]",
     "discover, wait until views settle, print all, exit", 0, 0, NULL, DDM_CLI_SERVER_IF_RUNNING,
     0},
    {"scan", ddm_cli_cmd_scan, "scan MODES", "switch discovery modes of the running server", 1, 1,
     "usage: ddmon scan local,adb|local|adb|none", DDM_CLI_SERVER_NEEDED, 0},
    {"select", ddm_cli_cmd_select, "select [PID|APP|none]",
     "the VM the selected debugger port (8700) reaches", 0, 1, "usage: ddmon select [PID|APP|none]",
     DDM_CLI_SERVER_NEEDED, 0},
    {"start-server", ddm_cli_cmd_start_server, "start-server", "start a background server if none runs",
     0, 0, NULL, DDM_CLI_SERVER_MANAGES, 0},
    {"kill-server", ddm_cli_cmd_kill_server, "kill-server", "stop the server", 0, 0, NULL,
     DDM_CLI_SERVER_MANAGES, 0},
    {"server", ddm_cli_cmd_server, "server [--foreground] [--replace]",
     "run the server; --replace stops the running one first",
     0, 0, NULL, DDM_CLI_SERVER_MANAGES, 0},
    {"web-url", ddm_cli_cmd_web_url, "web-url",
     "the web dashboard's URL with its token (server --http)", 0, 0, NULL,
     DDM_CLI_SERVER_NEEDED, 0},
    {"help", ddm_cli_cmd_help, "help [COMMAND]",
     "this text, with the commands plugins add; or one command's usage", 0, 1,
     "usage: ddmon help [COMMAND]", DDM_CLI_SERVER_IF_RUNNING, 0},
    /* Also --version. */
    {"version", ddm_cli_cmd_version, "version", "this ddmon's version, and the running server's",
     0, -1, NULL, DDM_CLI_SERVER_NONE, DDM_CLI_CMD_FIRST},
    /* Last: any other word is a plugin's command, run by the server. */
    {NULL, ddm_cli_cmd_plugin, "COMMAND ARGS...", "a command registered by a plugin (e.g. gc PID)",
     0, -1, NULL, DDM_CLI_SERVER_NEEDED, 0},
};

/* After the table in the usage text. */
static const char commands_help_tail[] =
    "Every command takes --json; a failure is then one JSON object too:\n"
    "{\"ok\":false,\"error\":...,\"code\":STATUS,\"kind\":...}. Exit status: 0 ok,\n"
    "1 failed, 2 usage, 3 VM or view not found, 4 no server and none could be\n"
    "started.";

const DdmCliCommand *ddm_cli_commands(guint *n)
{
    if (n != NULL)
        *n = G_N_ELEMENTS(commands);
    return commands;
}

const DdmCliCommand *ddm_cli_command_find(const char *name)
{
    for (gsize i = 0; name != NULL && i < G_N_ELEMENTS(commands); i++)
        if (commands[i].name != NULL && strcmp(commands[i].name, name) == 0)
            return &commands[i];
    return NULL;
}

const DdmCliCommand *ddm_cli_command_default(void)
{
    for (gsize i = 0; i < G_N_ELEMENTS(commands); i++)
        if (commands[i].flags & DDM_CLI_CMD_DEFAULT)
            return &commands[i];
    g_return_val_if_reached(NULL);
}

const DdmCliCommand *ddm_cli_command_plugin(void)
{
    return &commands[G_N_ELEMENTS(commands) - 1];
}

char *ddm_cli_commands_taking_vm(void)
{
    GPtrArray *names = g_ptr_array_new_with_free_func(g_free);
    for (gsize i = 0; i < G_N_ELEMENTS(commands); i++)
        if (commands[i].flags & DDM_CLI_CMD_VM)
            g_ptr_array_add(names, g_strdup_printf("'%s'", commands[i].name));
    GString *s = g_string_new(NULL);
    for (guint i = 0; i < names->len; i++) {
        if (i > 0)
            g_string_append(s, i + 1 == names->len ? " and " : ", ");
        g_string_append(s, g_ptr_array_index(names, i));
    }
    g_ptr_array_unref(names);
    return g_string_free(s, FALSE);
}

char *ddm_cli_commands_help(void)
{
    GString *s = g_string_new("Commands:\n");
    for (gsize i = 0; i < G_N_ELEMENTS(commands); i++) {
        const DdmCliCommand *c = &commands[i];
        if (c->usage == NULL)
            continue;
        if (strlen(c->usage) > USAGE_WIDTH)
            g_string_append_printf(s, "  %s\n  %-*s %s\n", c->usage, USAGE_WIDTH, "", c->summary);
        else
            g_string_append_printf(s, "  %-*s %s\n", USAGE_WIDTH, c->usage, c->summary);
    }
    g_string_append(s, commands_help_tail);
    return g_string_free(s, FALSE);
}
