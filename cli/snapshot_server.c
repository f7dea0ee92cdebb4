/* SPDX-License-Identifier: Apache-2.0
 *
 * ddm_snapshot_run_client() (snapshot.h): the snapshot through a running
 * server, its watch stream feeding the collector and the per-VM commands
 * (--gc, --hprof) sent as control commands (on connections of their own
 * when the socket path is known). Right after the watch, and again while
 * the answer is no or a structural change came after it, it asks
 * {"op":"version"}, whose "settled" member says whether the server's
 * discovery has nothing more to say (ddm_daemon_look_settled_since the
 * watch began, as for the server's looks: a session begun after it is
 * not waited for, except the first discovery round's; a late VM, one
 * that left what a look found in flight unanswered for 1.2 s, is not
 * waited for; the in-process snapshot's
 * ddm_daemon_settled still waits for a hung VM): against a warm server
 * the snapshot is its current state, answered at once. When the
 * watch made views watched that nobody watched, the server holds that
 * answer until the plugins' polls the watch woke are answered (ABI 1.5;
 * server/control_ops.c, first_look_done), at most 1.2 s.
 */
#include <build-config.h>

#include <glib-unix.h>

#include "cli/snapshot-private.h"
#include "core/views/views.h"

/* What the next response answers: responses come in request order. */
typedef enum { EXPECT_WATCH, EXPECT_COMMANDS, EXPECT_CMD, EXPECT_SETTLED } ExpectKind;

typedef struct Expected {
    ExpectKind kind;
    DdmSnapshotCall *call; /* EXPECT_CMD: borrowed from a DdmSnapshotCmd's calls */
} Expected;

typedef struct ServerCollector {
    DdmSnapshotCollector col;
    DdmClient *client;
    gboolean failed;
    GQueue expected; /* Expected*, owned */
    GPtrArray *conns; /* CmdConn*, owned: per-VM commands in flight */
    GQueue waiting;  /* DdmSnapshotCall* (borrowed) waiting for a free connection */
    gboolean settled_asked; /* a {"op":"version"} is in flight for its "settled" */
    gint64 settled_us;      /* when the last answer said settled (0: none did yet) */
} ServerCollector;

/* One per-VM command on a connection of its own: a server answers one
 * client's requests one at a time, a GC may wait for its timeout and a
 * heap dump takes seconds. */
typedef struct CmdConn {
    ServerCollector *sc;
    DdmSnapshotCall *call;
    DdmClient *client;
    guint source;
} CmdConn;

static void cmd_conn_free(gpointer p)
{
    CmdConn *cc = p;
    if (cc->source != 0)
        g_source_remove(cc->source);
    ddm_client_free(cc->client);
    g_free(cc);
}

static gboolean server_send(ServerCollector *sc, const DdmCtlRequest *req, ExpectKind kind,
                            DdmSnapshotCall *call, GError **error)
{
    if (!ddm_client_send(sc->client, req, error))
        return FALSE;
    Expected *ex = g_new0(Expected, 1);
    ex->kind = kind;
    ex->call = call;
    g_queue_push_tail(&sc->expected, ex);
    return TRUE;
}

static void expected_clear(ServerCollector *sc)
{
    Expected *ex;
    while ((ex = g_queue_pop_head(&sc->expected)) != NULL)
        g_free(ex);
}

/* A command's progress line ({"progress":{...}}), sent before its answer. */
static gboolean is_progress(JsonObject *o)
{
    JsonNode *p = json_object_get_member(o, "progress");
    return p != NULL && JSON_NODE_HOLDS_OBJECT(p);
}

/* The command's answer {"ok","message"|"error","result"} ends @call. */
static void call_answered(DdmSnapshotCall *call, JsonObject *o)
{
    gboolean ok = ddm_json_get_bool(o, "ok", FALSE);
    const char *err = ddm_json_get_string(o, "error");
    const char *msg = ddm_json_get_string(o, "message");
    ddm_snapshot_call_done(call, ok, ok || err == NULL ? msg : err,
                           json_object_get_member(o, "result"));
}

static void cmd_conn_start_next(ServerCollector *sc);

/* What came on a command's connection: progress lines are skipped; the
 * answer ends the call and the connection closes. */
static gboolean on_cmd_conn_data(gint fd, GIOCondition cond, gpointer data)
{
    (void)fd;
    (void)cond;
    CmdConn *cc = data;
    ServerCollector *sc = cc->sc;
    g_autoptr(GError) error = NULL;
    gboolean alive = ddm_client_read_some(cc->client, &error);
    for (;;) {
        g_autoptr(GError) perr = NULL;
        g_autoptr(JsonNode) msg = ddm_client_next(cc->client, &perr);
        if (msg != NULL && is_progress(json_node_get_object(msg)))
            continue;
        if (msg != NULL) {
            call_answered(cc->call, json_node_get_object(msg));
        } else if (perr != NULL || !alive) {
            g_autofree char *why = g_strdup_printf(
                "no answer from the server (%s)",
                perr != NULL ? perr->message : error != NULL ? error->message : "closed");
            ddm_snapshot_call_done(cc->call, FALSE, why, NULL);
        } else {
            return G_SOURCE_CONTINUE;
        }
        break;
    }
    cc->source = 0; /* removed by returning G_SOURCE_REMOVE */
    g_ptr_array_remove(sc->conns, cc);
    cmd_conn_start_next(sc);
    return G_SOURCE_REMOVE;
}

/* Start waiting calls while connections are free. */
static void cmd_conn_start_next(ServerCollector *sc)
{
    while (sc->conns->len < DDM_SNAPSHOT_CMD_CONNS && !sc->col.finished) {
        DdmSnapshotCall *call = g_queue_pop_head(&sc->waiting);
        if (call == NULL)
            return;
        g_autoptr(GError) error = NULL;
        DdmClient *client = ddm_client_connect(sc->col.opt->socket_path, &error);
        DdmCtlRequest req = {0};
        req.op = DDM_CTL_OP_COMMAND;
        req.argv = call->argv;
        if (client == NULL || !ddm_client_send(client, &req, &error)) {
            g_autofree char *why = g_strdup_printf("cannot ask the server: %s", error->message);
            if (client != NULL)
                ddm_client_free(client);
            ddm_snapshot_call_done(call, FALSE, why, NULL);
            continue;
        }
        CmdConn *cc = g_new0(CmdConn, 1);
        cc->sc = sc;
        cc->call = call;
        cc->client = client;
        cc->source = g_unix_fd_add(ddm_client_fd(client), G_IO_IN | G_IO_HUP | G_IO_ERR,
                                   on_cmd_conn_data, cc);
        g_ptr_array_add(sc->conns, cc);
    }
}

/* {"op":"command","argv":["gc",KEY]} (or hprof's): the server runs it as
 * it runs `ddmon gc KEY`. On connections of their own when the socket
 * path is known, else one after the other on the watch connection. */
static void server_send_cmd(DdmSnapshotCollector *col, DdmSnapshotCall *call)
{
    ServerCollector *sc = col->source;
    if (col->opt->socket_path != NULL) {
        g_queue_push_tail(&sc->waiting, call);
        cmd_conn_start_next(sc);
        return;
    }
    DdmCtlRequest req = {0};
    req.op = DDM_CTL_OP_COMMAND;
    req.argv = call->argv;
    g_autoptr(GError) error = NULL;
    if (!server_send(sc, &req, EXPECT_CMD, call, &error))
        ddm_snapshot_call_done(call, FALSE, error->message, NULL);
}

/* Is @name in the answer to {"op":"commands"}? */
static gboolean list_has_command(const char *name, gpointer ud)
{
    JsonArray *a = ud;
    for (guint i = 0; i < json_array_get_length(a); i++) {
        JsonNode *e = json_array_get_element(a, i);
        if (JSON_NODE_HOLDS_OBJECT(e) &&
            g_strcmp0(ddm_json_get_string(json_node_get_object(e), "name"), name) == 0)
            return TRUE;
    }
    return FALSE;
}

/* The answer to {"op":"commands"}: which of the per-VM commands are there? */
static void server_commands_answered(ServerCollector *sc, JsonObject *o)
{
    JsonNode *list = json_object_get_member(o, "commands");
    if (!ddm_json_get_bool(o, "ok", FALSE) || list == NULL || !JSON_NODE_HOLDS_ARRAY(list)) {
        const char *err = ddm_json_get_string(o, "error");
        g_autofree char *why = g_strdup_printf("the server did not list its commands (%s)",
                                               err != NULL ? err : "no list");
        for (guint i = 0; i < sc->col.cmds->len; i++)
            ddm_snapshot_cmd_unavailable(g_ptr_array_index(sc->col.cmds, i), why);
        return;
    }
    ddm_snapshot_cmds_available(&sc->col, list_has_command, json_node_get_array(list),
                                " of the server");
}

/* A response (not an event). FALSE if it ends the snapshot. */
static gboolean server_response(ServerCollector *sc, JsonObject *o)
{
    if (is_progress(o))
        return TRUE; /* a command's on the watch connection: its answer follows */
    Expected *ex = g_queue_pop_head(&sc->expected);
    ExpectKind kind = ex != NULL ? ex->kind : EXPECT_WATCH;
    DdmSnapshotCall *call = ex != NULL ? ex->call : NULL;
    g_free(ex);
    gboolean ok = ddm_json_get_bool(o, "ok", FALSE);
    const char *err = ddm_json_get_string(o, "error");
    switch (kind) {
    case EXPECT_COMMANDS:
        server_commands_answered(sc, o);
        return TRUE;
    case EXPECT_SETTLED:
        /* Everything the server sent before this answer has been seen:
         * the snapshot may be complete now. A server without the member
         * never says settled: then --wait is waited for, as before. */
        sc->settled_asked = FALSE;
        if (ok && ddm_json_get_bool(o, "settled", FALSE)) {
            sc->settled_us = g_get_monotonic_time();
            ddm_snapshot_collector_check(&sc->col);
        }
        return TRUE;
    case EXPECT_CMD:
        call_answered(call, o);
        return TRUE;
    case EXPECT_WATCH:
        break;
    }
    if (!ok) {
        g_printerr("ddmon: %s\n", err != NULL ? err : "the server refused");
        return FALSE;
    }
    return TRUE;
}

static gboolean on_server_data(gint fd, GIOCondition cond, gpointer data)
{
    ServerCollector *sc = data;
    g_autoptr(GError) error = NULL;
    gboolean alive = ddm_client_read_some(sc->client, &error);
    for (;;) {
        g_autoptr(GError) perr = NULL;
        g_autoptr(JsonNode) msg = ddm_client_next(sc->client, &perr);
        if (msg == NULL) {
            if (perr != NULL) {
                g_printerr("ddmon: %s\n", perr->message);
                sc->failed = TRUE;
                g_main_loop_quit(sc->col.loop);
                return G_SOURCE_REMOVE;
            }
            break;
        }
        JsonObject *o = json_node_get_object(msg);
        const char *event = ddm_json_get_string(o, "event");
        if (event != NULL) {
            ddm_snapshot_collect(&sc->col, event, json_object_get_member(o, "view"));
        } else if (!server_response(sc, o)) {
            sc->failed = TRUE;
            g_main_loop_quit(sc->col.loop);
            return G_SOURCE_REMOVE;
        }
    }
    if (!alive) {
        g_printerr("ddmon: the server went away (%s)\n", error->message);
        sc->failed = TRUE;
        g_main_loop_quit(sc->col.loop);
        return G_SOURCE_REMOVE;
    }
    return G_SOURCE_CONTINUE;
}

/* Ask whether the server is settled, unless a question is in flight. */
static void ask_settled(ServerCollector *sc)
{
    if (sc->settled_asked || sc->failed)
        return;
    DdmCtlRequest req = {0};
    req.op = DDM_CTL_OP_VERSION;
    g_autoptr(GError) error = NULL;
    if (server_send(sc, &req, EXPECT_SETTLED, NULL, &error))
        sc->settled_asked = TRUE;
    else
        g_debug("snapshot: cannot ask the server whether it is settled: %s", error->message);
}

/* Settled, and no structural change after the answer that said so. */
static gboolean server_settled(DdmSnapshotCollector *col)
{
    ServerCollector *sc = col->source;
    if (sc->settled_us > 0 && sc->settled_us >= col->last_change_us)
        return TRUE;
    ask_settled(sc);
    return FALSE;
}

int ddm_snapshot_run_client(DdmClient *client, const DdmSnapshotOptions *opt)
{
    ServerCollector sc = {0};
    sc.client = client;
    g_queue_init(&sc.expected);
    g_queue_init(&sc.waiting);
    sc.conns = g_ptr_array_new_with_free_func(cmd_conn_free);
    ddm_snapshot_collector_init(&sc.col, opt);
    sc.col.source = &sc;
    sc.col.send = server_send_cmd;
    sc.col.source_settled = server_settled;
    DdmCtlRequest req = {0};
    req.op = DDM_CTL_OP_WATCH;
    req.blobs = opt->out_dir != NULL;
    DdmCtlRequest commands = {0};
    commands.op = DDM_CTL_OP_COMMANDS;
    g_autoptr(GError) error = NULL;
    if (!server_send(&sc, &req, EXPECT_WATCH, NULL, &error) ||
        (sc.col.cmds->len > 0 &&
         !server_send(&sc, &commands, EXPECT_COMMANDS, NULL, &error))) {
        g_printerr("ddmon: %s\n", error->message);
        expected_clear(&sc);
        g_ptr_array_unref(sc.conns);
        ddm_snapshot_collector_clear(&sc.col);
        return DDM_EXIT_FAILED;
    }
    ask_settled(&sc); /* answered after the watch's first events */
    guint src = g_unix_fd_add(ddm_client_fd(client), G_IO_IN | G_IO_HUP | G_IO_ERR,
                              on_server_data, &sc);
    ddm_snapshot_collector_run(&sc.col);
    if (!sc.failed)
        g_source_remove(src);
    int status = sc.failed          ? DDM_EXIT_FAILED
                 : sc.col.status != 0 ? sc.col.status
                                      : ddm_snapshot_print_views(&sc.col);
    expected_clear(&sc);
    g_ptr_array_unref(sc.conns);
    g_queue_clear(&sc.waiting);
    ddm_snapshot_collector_clear(&sc.col);
    return status;
}
