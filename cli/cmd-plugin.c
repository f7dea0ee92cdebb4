/* SPDX-License-Identifier: Apache-2.0
 *
 * A plugin's command (`ddmon gc PID`, `ddmon heap-bitmap ...`): any word
 * that is none of ddmon's own commands, sent with its arguments to the
 * server, which runs it through the plugin registry. Blob results are
 * written with --out-dir.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "cli/cli.h"
#include "cli/snapshot.h"

/* @args: the command word, then its arguments. */
int ddm_cli_cmd_plugin(DdmCli *cli, char **args)
{
    for (char **a = args; *a != NULL; a++)
        if (strlen(*a) > DDM_CTL_MAX_STRING)
            return ddm_cli_usage_error("argument too long");
    if (g_strv_length(args) > DDM_CTL_MAX_ARGS)
        return ddm_cli_usage_error("too many arguments");
    DdmCtlRequest req = {0};
    req.op = DDM_CTL_OP_COMMAND;
    req.argv = args;
    req.blobs = cli->out_dir != NULL;
    /* Paths the user typed (heap-bitmap FILE) are relative to here, not
     * to the server's directory. */
    g_autofree char *cwd = g_get_current_dir();
    req.cwd = strlen(cwd) <= DDM_CTL_MAX_STRING ? cwd : NULL;
    int status = 0;
    g_autoptr(JsonNode) resp = ddm_cli_call(cli, &req, -1, &status);
    if (resp == NULL)
        return status;
    JsonObject *o = json_node_get_object(resp);
    gboolean ok = ddm_json_get_bool(o, "ok", FALSE);
    gint64 st = ddm_json_get_int(o, "status", ddm_json_get_int(o, "code", DDM_EXIT_FAILED));
    int code = ok ? DDM_EXIT_OK
                  : (st >= DDM_EXIT_FAILED && st <= DDM_EXIT_NOT_FOUND ? (int)st : DDM_EXIT_FAILED);
    if (cli->json) {
        if (!ok) {
            const char *err = ddm_json_get_string(o, "error");
            g_autofree char *line =
                g_strdup_printf("ddmon: %s\n", err != NULL ? err : "command failed");
            g_printerr("%s", line);
            /* The server's object (status, message, result) with the
             * failure members every --json failure has. */
            g_autofree char *msg = ddm_ctl_failure_message(line);
            ddm_ctl_failure_set(o, code, msg);
            ddm_cli_failure.object_printed = TRUE;
        }
        ddm_cli_print_json(resp);
        return code;
    }
    if (!ok) {
        const char *err = ddm_json_get_string(o, "error");
        g_printerr("ddmon: %s\n", err != NULL ? err : "command failed");
    } else {
        const char *msg = ddm_json_get_string(o, "message");
        if (msg != NULL && *msg != '\0')
            printf("%s\n", msg);
    }
    JsonNode *result = json_object_get_member(o, "result");
    if (result != NULL && JSON_NODE_HOLDS_OBJECT(result)) {
        JsonObject *ro = json_node_get_object(result);
        const char *b64 = ddm_json_get_string(ro, "data_base64");
        if (b64 != NULL && cli->out_dir != NULL) {
            g_autofree char *name = ddm_snapshot_blob_filename(
                ddm_json_get_string(ro, "vm"), ddm_json_get_string(ro, "name"),
                ddm_json_get_string(ro, "media_type"));
            g_autofree char *path = g_build_filename(cli->out_dir, name, NULL);
            gsize len = 0;
            g_autofree guchar *data = g_base64_decode(b64, &len);
            g_autoptr(GError) error = NULL;
            if (g_mkdir_with_parents(cli->out_dir, 0700) != 0 ||
                !g_file_set_contents(path, (const char *)data, (gssize)len, &error)) {
                g_printerr("ddmon: cannot write %s: %s\n", path,
                           error != NULL ? error->message : g_strerror(errno));
                code = DDM_EXIT_FAILED;
            } else {
                printf("written to %s\n", path);
            }
        }
        ddm_cli_print_view_text(result, FALSE);
    }
    return code;
}
