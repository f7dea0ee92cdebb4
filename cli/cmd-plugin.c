/* SPDX-License-Identifier: Apache-2.0
 *
 * A plugin's command (`ddmon gc PID`, `ddmon heap-bitmap ...`): any word
 * that is none of ddmon's own commands, sent with its arguments to the
 * server, which runs it through the plugin registry. Blob results are
 * written with --out-dir. An application/json result (a plugin's nested
 * document, core/views/json_blob.h) is shown as an outline, embedded as
 * "data" with --json, and fails the command when it cannot be read. A
 * server started for a word it does not know is stopped again.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "cli/cli.h"
#include "cli/jsonout.h"
#include "cli/snapshot.h"
#include "core/views/json_blob.h"

/* Progress on a terminal: one line on stderr, rewritten in place. */
typedef struct Progress {
    gint64 start_us;
    gboolean shown;
} Progress;

static void format_size(guint64 n, char *buf, gsize len)
{
    g_autofree char *s = g_format_size_full(n, G_FORMAT_SIZE_IEC_UNITS);
    g_strlcpy(buf, s, len);
}

static void show_progress(guint64 done, guint64 total, const char *unit, gpointer ud)
{
    Progress *p = ud;
    double secs = (double)(g_get_monotonic_time() - p->start_us) / 1e6;
    gboolean bytes = unit != NULL && strcmp(unit, "B") == 0;
    char d[32], t[32], r[32];

    if (bytes) {
        format_size(done, d, sizeof d);
        format_size(total, t, sizeof t);
        format_size(secs > 0.05 ? (guint64)((double)done / secs) : 0, r, sizeof r);
        if (total > 0)
            fprintf(stderr, "\r\033[K%s of %s (%.0f%%)  %s/s  %.1f s", d, t,
                    100.0 * (double)done / (double)total, r, secs);
        else
            fprintf(stderr, "\r\033[K%s  %s/s  %.1f s", d, r, secs);
    } else {
        fprintf(stderr, "\r\033[K%" G_GUINT64_FORMAT " of %" G_GUINT64_FORMAT "  %.1f s", done,
                total, secs);
    }
    fflush(stderr);
    p->shown = TRUE;
}

/* The reason the answer's JSON result (json_blob.h) cannot be read, or
 * NULL: a plugin that hands over a broken document gets no half-shown one.
 * (transfer full) */
static char *json_result_error(JsonObject *answer, const char *command)
{
    JsonNode *result = json_object_get_member(answer, "result");
    if (result == NULL || !JSON_NODE_HOLDS_OBJECT(result))
        return NULL;
    g_autoptr(GError) error = NULL;
    g_autoptr(JsonNode) doc = ddm_json_blob_of_view(json_node_get_object(result), &error);
    if (doc != NULL || error == NULL) /* a document, or no JSON blob at all */
        return NULL;
    return g_strdup_printf("the result of '%.64s' cannot be read: %s", command, error->message);
}

/* The server said @word is no command: a server started for it alone is
 * stopped again (it would connect to every VM and hold debugger ports for
 * a typo), and `--http 99999`'s "99999" gets the hint it needs. */
static void forget_unknown_command(DdmCli *cli, JsonObject *o, const char *word)
{
    const char *eq = cli->bare_hint != NULL ? strchr(cli->bare_hint, '=') : NULL;
    if (eq != NULL && strcmp(eq + 1, word) == 0) {
        g_autofree char *err = g_strdup_printf("%s; did you mean %s? (an optional value "
                                               "needs '=')",
                                               ddm_json_get_string(o, "error"), cli->bare_hint);
        json_object_set_string_member(o, "error", err);
    }
    if (!cli->started_server)
        return;
    g_autofree char *path = ddm_cli_socket_path(cli);
    g_autoptr(GError) error = NULL;
    if (ddm_client_kill_server(path, NULL, &error))
        g_printerr("* ddmon server stopped again: it was started for this command, "
                   "which it does not know *\n");
    else
        g_printerr("ddmon: cannot stop the server started for this command: %s\n",
                   error->message);
}

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
    /* --out-dir is already absolute (main.c); plugins that write files
     * (hprof) put them there (host.cmd_out_dir). */
    req.out_dir = cli->out_dir != NULL && strlen(cli->out_dir) <= DDM_CTL_MAX_STRING ? cli->out_dir
                                                                                    : NULL;
    int status = 0;
    DdmClient *client = ddm_cli_client(cli, &status);
    if (client == NULL)
        return status;
    Progress progress = {g_get_monotonic_time(), FALSE};
    if (!cli->json && isatty(STDERR_FILENO))
        ddm_client_on_progress(client, show_progress, &progress);
    g_autoptr(GError) call_error = NULL;
    g_autoptr(JsonNode) resp = ddm_client_call(client, &req, -1, &call_error);
    ddm_client_free(client);
    if (progress.shown)
        fputs("\r\033[K", stderr);
    if (resp == NULL) {
        g_printerr("ddmon: %s\n", call_error->message);
        return DDM_EXIT_FAILED;
    }
    JsonObject *o = json_node_get_object(resp);
    gboolean ok = ddm_json_get_bool(o, "ok", FALSE);
    if (!ok && ddm_json_get_string(o, "unknown_command") != NULL) {
        json_object_remove_member(o, "unknown_command");
        forget_unknown_command(cli, o, args[0]);
    }
    gint64 st = ddm_json_get_int(o, "status", ddm_json_get_int(o, "code", DDM_EXIT_FAILED));
    int code = ok ? DDM_EXIT_OK
                  : (st >= DDM_EXIT_FAILED && st <= DDM_EXIT_NOT_FOUND ? (int)st : DDM_EXIT_FAILED);
    g_autofree char *unreadable = ok ? json_result_error(o, args[0]) : NULL;
    if (unreadable != NULL) {
        ok = FALSE;
        code = DDM_EXIT_FAILED;
        json_object_set_string_member(o, "error", unreadable);
    }
    if (cli->json) {
        if (!ok) {
            const char *err = ddm_json_get_string(o, "error");
            g_autofree char *line =
                g_strdup_printf("ddmon: %s\n", err != NULL ? err : "command failed");
            g_printerr("%s", line);
            /* The object every --json failure prints, nothing more: the
             * server's "status" is its "code". */
            g_autofree char *msg = ddm_ctl_failure_message(line);
            json_object_remove_member(o, "status");
            ddm_ctl_failure_set(o, code, msg);
            ddm_cli_failure.object_printed = TRUE;
        }
        g_autoptr(JsonNode) doc = ddm_jq_command_answer(resp); /* the result as every view */
        ddm_cli_print_json(doc);
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
        /* A document that cannot be read is not shown; its bytes are still
         * written above. */
        if (unreadable == NULL)
            ddm_cli_print_view_text(result, FALSE);
    }
    return code;
}
