/* SPDX-License-Identifier: Apache-2.0
 *
 * The commands that manage the server: `server` (run it here with
 * --foreground, else start it in the background; --replace stops a running
 * one first, so that other server options apply), `start-server` and
 * `kill-server`. A server this client starts gets the server options
 * given to the client (DdmCli.server_args).
 */
#include "cli/cli.h"
#include "server/server.h"

int ddm_cli_cmd_kill_server(DdmCli *cli, char **args)
{
    (void)args;
    g_autofree char *path = ddm_cli_socket_path(cli);
    g_autoptr(GError) error = NULL;
    gboolean was_running = FALSE;
    if (!ddm_client_kill_server(path, &was_running, &error)) {
        g_printerr("ddmon: %s\n", error->message);
        return DDM_EXIT_FAILED;
    }
    return ddm_cli_print_ok_json(cli, DDM_EXIT_OK, "was_running", was_running);
}

int ddm_cli_cmd_start_server(DdmCli *cli, char **args)
{
    (void)args;
    g_autofree char *path = ddm_cli_socket_path(cli);
    DdmClient *c = ddm_client_connect(path, NULL);
    if (c != NULL) {
        ddm_client_free(c);
        return ddm_cli_print_ok_json(cli, DDM_EXIT_OK, "started", FALSE);
    }
    g_autoptr(GError) error = NULL;
    g_ptr_array_add(cli->server_args, NULL);
    gboolean ok = ddm_client_start_server(path, (char **)cli->server_args->pdata, FALSE, &error);
    g_ptr_array_remove_index(cli->server_args, cli->server_args->len - 1);
    if (!ok) {
        g_printerr("ddmon: cannot start a server: %s\n", error->message);
        return DDM_EXIT_NO_SERVER;
    }
    return ddm_cli_print_ok_json(cli, DDM_EXIT_OK, "started", TRUE);
}

int ddm_cli_cmd_server(DdmCli *cli, char **args)
{
    if (cli->replace) {
        /* Server options reach only a server that starts: stop the one
         * that runs (waiting until it let go of its socket and lock). */
        g_autofree char *path = ddm_cli_socket_path(cli);
        g_autoptr(GError) error = NULL;
        gboolean was_running = FALSE;
        if (!ddm_client_kill_server(path, &was_running, &error)) {
            g_printerr("ddmon: cannot stop the running server: %s\n", error->message);
            return DDM_EXIT_FAILED;
        }
        if (was_running && !cli->json)
            g_printerr("* ddmon server stopped; starting one with the options given *\n");
    }
    if (!cli->foreground)
        return ddm_cli_cmd_start_server(cli, args);
    DdmConfig *config = cli->config;
    cli->config = NULL;
    /* What the version op reports: the options as a client passes them. */
    config->server_args = g_ptr_array_new_with_free_func(g_free);
    for (guint i = 0; i < cli->server_args->len; i++)
        g_ptr_array_add(config->server_args, g_strdup(cli->server_args->pdata[i]));
    return ddm_server_run(config);
}
