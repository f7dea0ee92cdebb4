/* SPDX-License-Identifier: Apache-2.0
 *
 * The ddmon commands' way to the server: the socket path, a connection
 * (starting a server with the remembered server options unless
 * --no-autostart), one request and its answer, and an error answer's exit
 * status. Only commands whose row says DDM_CLI_SERVER_NEEDED connect this
 * way; the others look for a running server with ddm_client_connect().
 */
#include "cli/cli.h"
#include "server/server.h"

char *ddm_cli_socket_path(const DdmCli *cli)
{
    return ddm_server_socket_path(cli->config);
}

DdmClient *ddm_cli_client(DdmCli *cli, int *status)
{
    if (cli->command != NULL && cli->command->server != DDM_CLI_SERVER_NEEDED) {
        g_critical("'%s' is not marked as needing a server in the command table",
                   cli->command->name);
        *status = DDM_EXIT_FAILED;
        return NULL;
    }
    g_autofree char *path = ddm_cli_socket_path(cli);
    g_autoptr(GError) error = NULL;
    g_ptr_array_add(cli->server_args, NULL);
    gboolean started = FALSE;
    DdmClient *c = ddm_client_connect_or_start(path, (char **)cli->server_args->pdata,
                                               !cli->no_autostart, &started, &error);
    cli->started_server |= started;
    g_ptr_array_remove_index(cli->server_args, cli->server_args->len - 1);
    if (c == NULL) {
        g_printerr("ddmon: %s\n", error->message);
        *status = DDM_EXIT_NO_SERVER;
    }
    return c;
}

int ddm_cli_response_status(JsonNode *resp)
{
    JsonObject *o = json_node_get_object(resp);
    if (ddm_json_get_bool(o, "ok", FALSE))
        return DDM_EXIT_OK;
    const char *err = ddm_json_get_string(o, "error");
    g_printerr("ddmon: %s\n", err != NULL ? err : "the server said no");
    gint64 code = ddm_json_get_int(o, "code", DDM_EXIT_FAILED);
    return code >= DDM_EXIT_FAILED && code <= DDM_EXIT_NOT_FOUND ? (int)code : DDM_EXIT_FAILED;
}

JsonNode *ddm_cli_call(DdmCli *cli, const DdmCtlRequest *req, int timeout_ms, int *status)
{
    DdmClient *c = ddm_cli_client(cli, status);
    if (c == NULL)
        return NULL;
    g_autoptr(GError) error = NULL;
    JsonNode *resp = ddm_client_call(c, req, timeout_ms, &error);
    ddm_client_free(c);
    if (resp == NULL) {
        g_printerr("ddmon: %s\n", error->message);
        *status = DDM_EXIT_FAILED;
        return NULL;
    }
    return resp;
}

int ddm_cli_request_ok(DdmCli *cli, const DdmCtlRequest *req, int timeout_ms, JsonNode **out)
{
    int status = 0;
    *out = ddm_cli_call(cli, req, timeout_ms, &status);
    if (*out == NULL)
        return status;
    if ((status = ddm_cli_response_status(*out)) != DDM_EXIT_OK)
        g_clear_pointer(out, json_node_unref);
    return status;
}
