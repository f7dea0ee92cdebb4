/* SPDX-License-Identifier: Apache-2.0
 *
 * `snapshot`: through a running server, else in this process
 * (snapshot.c does the work; a server still stopping is waited for first), with --wait, --out-dir, --in-process (which
 * never connects to the server, but names the one holding the socket's
 * lock, if any, when VMs are busy),
 * --gc and --hprof (which needs --out-dir); and, with --json, its output held back so that a late failure is
 * still one object.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <unistd.h>

#include "cli/cli.h"
#include "cli/snapshot.h"
#include "server/server.h"

static int run_snapshot(DdmCli *cli)
{
    DdmSnapshotOptions opt = {
        .wait_ms = cli->wait_ms >= 0 ? (guint)cli->wait_ms : DDM_SNAPSHOT_DEFAULT_WAIT_MS,
        .settle_ms = DDM_SNAPSHOT_SETTLE_MS,
        .max_ms = DDM_SNAPSHOT_MAX_MS,
        .json = cli->json,
        .out_dir = cli->out_dir,
        .gc = cli->gc,
        .hprof = cli->hprof,
    };
    if (opt.max_ms < opt.wait_ms + opt.settle_ms)
        opt.max_ms = opt.wait_ms + opt.settle_ms;
    g_autofree char *path = ddm_cli_socket_path(cli);
    if (!cli->in_process) {
        /* Answered, not just connected: a stopping server's backlog takes
         * a connect in its last milliseconds, then resets it. */
        g_autoptr(GError) error = NULL;
        DdmClient *c = ddm_client_connect_answered(path, &error);
        if (c != NULL) {
            opt.socket_path = path; /* --gc's, --hprof's commands use connections of their own */
            int status = ddm_snapshot_run_client(c, &opt);
            ddm_client_free(c);
            return status;
        }
        /* A server that runs but will not serve us (too many clients):
         * its VMs are its own, so no snapshot in this process either. */
        if (!ddm_client_error_no_server(error)) {
            g_printerr("ddmon: %s\n", error->message);
            return DDM_EXIT_NO_SERVER;
        }
        g_clear_error(&error);
        /* In this process, as with no server; one still stopping holds
         * its VMs until it has exited: waited for first (bounded). */
        if (!ddm_client_wait_stopping_server(path, TRUE, &error)) {
            g_printerr("ddmon: %s\n", error->message);
            return DDM_EXIT_NO_SERVER;
        }
    } else if (ddm_server_running_pid(path) != 0) {
        /* --in-process next to a server: allowed (it may scan other VMs),
         * but the VMs they share are the server's (one debugger a VM):
         * named with the way out if the snapshot finds them busy. Found
         * through the server's lock, not a connection: one would block on
         * a wedged server's full backlog, and be logged by a live one. */
        opt.server_socket = path;
    }
    DdmConfig *config = cli->config;
    cli->config = NULL;
    return ddm_snapshot_run_local(config, &opt);
}

/* Everything written to @fd from its start. (transfer full) */
static GByteArray *read_back(int fd)
{
    GByteArray *data = g_byte_array_new();
    if (lseek(fd, 0, SEEK_SET) != 0)
        return data;
    guint8 buf[65536];
    for (;;) {
        ssize_t n = read(fd, buf, sizeof(buf));
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            break;
        g_byte_array_append(data, buf, (guint)n);
    }
    return data;
}

/* A snapshot prints its object before it knows whether every blob could
 * be written. With --json its stdout goes to a temporary file first, so
 * that a failure is still one object: the snapshot's, with the failure
 * members added. */
int ddm_cli_cmd_snapshot(DdmCli *cli, char **args)
{
    (void)args;
    if (cli->hprof && cli->out_dir == NULL)
        return ddm_cli_usage_error("snapshot --hprof needs --out-dir=DIR: where the heap dumps go");
    if (!cli->json)
        return run_snapshot(cli);
    fflush(stdout);
    FILE *tmp = tmpfile();
    int saved = tmp != NULL ? fcntl(STDOUT_FILENO, F_DUPFD_CLOEXEC, 3) : -1;
    if (saved < 0 || dup2(fileno(tmp), STDOUT_FILENO) < 0) {
        if (saved >= 0)
            close(saved);
        if (tmp != NULL)
            fclose(tmp);
        return run_snapshot(cli); /* not captured: a late failure adds a second object */
    }
    int status = run_snapshot(cli);
    fflush(stdout);
    dup2(saved, STDOUT_FILENO);
    close(saved);
    g_autoptr(GByteArray) out = read_back(fileno(tmp));
    fclose(tmp);
    if (status != DDM_EXIT_OK && out->len > 0) {
        g_autoptr(JsonNode) doc = ddm_ctl_parse_object((const char *)out->data, out->len, NULL);
        if (doc != NULL) {
            ddm_ctl_failure_set(json_node_get_object(doc), status, ddm_cli_failure.message);
            ddm_cli_failure.object_printed = TRUE;
            ddm_cli_print_json(doc);
            return status;
        }
    }
    if (out->len > 0 && fwrite(out->data, 1, out->len, stdout) != out->len) {
        g_printerr("ddmon: cannot write the snapshot: %s\n", g_strerror(errno));
        if (status == DDM_EXIT_OK)
            status = DDM_EXIT_FAILED;
    }
    return status;
}
