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
        /* No server reached (its directory is unsafe, say): as for every
         * other command, exit status 4; 1 when one did not stop. */
        return was_running ? DDM_EXIT_FAILED : DDM_EXIT_NO_SERVER;
    }
    return ddm_cli_print_ok_json(cli, DDM_EXIT_OK, "was_running", was_running);
}

/* The running server's dashboard URL (the version op's "web_url"), NULL
 * when it has none. (transfer full) */
static char *server_web_url(DdmCli *cli, int *status)
{
    DdmCtlRequest req = {0};
    req.op = DDM_CTL_OP_VERSION;
    g_autoptr(JsonNode) resp = NULL;
    *status = ddm_cli_request_ok(cli, &req, DDM_CLI_CALL_TIMEOUT_MS, &resp);
    if (*status != DDM_EXIT_OK)
        return NULL;
    return g_strdup(ddm_json_get_string(json_node_get_object(resp), "web_url"));
}

/* After starting a server with --http: its URL, as Jupyter prints it
 * (straight from the new server: `server` itself needs none). */
static void print_web_url(DdmCli *cli)
{
    if (cli->config == NULL || cli->config->http_listen == NULL)
        return;
    g_autofree char *path = ddm_cli_socket_path(cli);
    DdmClient *c = ddm_client_connect_answered(path, NULL);
    g_autoptr(JsonNode) resp = NULL;
    if (c != NULL) {
        DdmCtlRequest req = {0};
        req.op = DDM_CTL_OP_VERSION;
        resp = ddm_client_call(c, &req, 5000, NULL);
        ddm_client_free(c);
    }
    const char *url = resp != NULL && JSON_NODE_HOLDS_OBJECT(resp)
                          ? ddm_json_get_string(json_node_get_object(resp), "web_url")
                          : NULL;
    if (url != NULL) {
        printf("web dashboard: %s\n", url);
    } else {
        g_autofree char *log = ddm_server_log_path(path);
        g_printerr("ddmon: the server has no web dashboard; its log says why: %s\n", log);
    }
}

int ddm_cli_cmd_web_url(DdmCli *cli, char **args)
{
    (void)args;
    int status = 0;
    g_autofree char *url = server_web_url(cli, &status);
    if (status != DDM_EXIT_OK)
        return status;
    if (url == NULL) {
        g_printerr("ddmon: the server has no web dashboard "
                   "(start one with: ddmon server --replace --http)\n");
        return DDM_EXIT_NOT_FOUND;
    }
    if (cli->json) {
        JsonObject *o = json_object_new();
        json_object_set_string_member(o, "web_url", url);
        g_autoptr(JsonNode) n = json_node_init_object(json_node_alloc(), o);
        json_object_unref(o);
        ddm_cli_print_json(n);
    } else {
        printf("%s\n", url);
    }
    return DDM_EXIT_OK;
}

/* Start a background server unless one runs; @announce: the line before
 * it starts (client.h). A running one is compared with the server options
 * given, as every command does (ddm_client_connect_or_start). */
static int start_background(DdmCli *cli, const char *announce)
{
    g_autofree char *path = ddm_cli_socket_path(cli);
    g_ptr_array_add(cli->server_args, NULL);
    char **server_args = (char **)cli->server_args->pdata;
    /* Answered, not just connected: a stopping server's backlog accepts a
     * connect in its last milliseconds, then resets it (it is waited for
     * below, by the start). */
    g_autoptr(GError) error = NULL;
    DdmClient *c = ddm_client_connect_answered(path, &error);
    if (c == NULL && !ddm_client_error_no_server(error)) {
        g_ptr_array_remove_index(cli->server_args, cli->server_args->len - 1);
        if (g_error_matches(error, G_IO_ERROR, G_IO_ERROR_BUSY)) /* too many clients: it runs */
            return ddm_cli_print_ok_json(cli, DDM_EXIT_OK, "started", FALSE);
        g_printerr("ddmon: %s\n", error->message);
        return DDM_EXIT_NO_SERVER;
    }
    g_clear_error(&error);
    if (c != NULL) {
        ddm_client_free(c);
        if (server_args[0] != NULL) {
            /* The hint when the options differ; never a start or a kill. */
            c = ddm_client_connect_or_start(path, server_args, FALSE, NULL, NULL);
            if (c != NULL)
                ddm_client_free(c);
        }
        g_ptr_array_remove_index(cli->server_args, cli->server_args->len - 1);
        return ddm_cli_print_ok_json(cli, DDM_EXIT_OK, "started", FALSE);
    }
    gboolean ok = ddm_client_start_server(path, server_args, announce, &error);
    g_ptr_array_remove_index(cli->server_args, cli->server_args->len - 1);
    if (!ok) {
        g_printerr("ddmon: cannot start a server: %s\n", error->message);
        return DDM_EXIT_NO_SERVER;
    }
    if (!cli->json)
        print_web_url(cli);
    return ddm_cli_print_ok_json(cli, DDM_EXIT_OK, "started", TRUE);
}

int ddm_cli_cmd_server(DdmCli *cli, char **args)
{
    (void)args;
    const char *announce = DDM_CLIENT_STARTING;
    if (cli->replace) {
        /* Server options reach only a server that starts: stop the one
         * that runs (waiting until it let go of its socket and lock). */
        g_autofree char *path = ddm_cli_socket_path(cli);
        g_autoptr(GError) error = NULL;
        gboolean was_running = FALSE;
        if (!ddm_client_kill_server(path, &was_running, &error)) {
            g_printerr("ddmon: cannot stop the running server: %s\n", error->message);
            return was_running ? DDM_EXIT_FAILED : DDM_EXIT_NO_SERVER;
        }
        if (was_running)
            announce = "ddmon server stopped; starting one with the options given";
        if (was_running && cli->foreground)
            g_printerr("* %s *\n", announce); /* as a background start says it */
    }
    if (!cli->foreground)
        return start_background(cli, announce);
    {
        /* One still stopping holds the lock this server needs. */
        g_autofree char *path = ddm_cli_socket_path(cli);
        g_autoptr(GError) error = NULL;
        if (!ddm_client_wait_stopping_server(path, TRUE, &error)) {
            g_printerr("ddmon: %s\n", error->message);
            return DDM_EXIT_FAILED;
        }
    }
    DdmConfig *config = cli->config;
    cli->config = NULL;
    /* What the version op reports: the options as a client passes them. */
    config->server_args = g_ptr_array_new_with_free_func(g_free);
    for (guint i = 0; i < cli->server_args->len; i++)
        g_ptr_array_add(config->server_args, g_strdup(cli->server_args->pdata[i]));
    return ddm_server_run(config);
}

/* start-server --replace or --foreground is `server` with them: neither is
 * ignored. */
int ddm_cli_cmd_start_server(DdmCli *cli, char **args)
{
    if (cli->replace || cli->foreground)
        return ddm_cli_cmd_server(cli, args);
    return start_background(cli, DDM_CLIENT_STARTING);
}
