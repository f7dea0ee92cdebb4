/* SPDX-License-Identifier: Apache-2.0
 *
 * ddm_snapshot_run_client() (snapshot.h): the snapshot through a running
 * server, its watch stream feeding the collector and --gc sent as control
 * commands (on connections of their own when the socket path is known).
 */
#include <build-config.h>

#include <glib-unix.h>

#include "cli/snapshot-private.h"
#include "core/views/views.h"

/* What the next response answers: responses come in request order. */
typedef enum { EXPECT_WATCH, EXPECT_COMMANDS, EXPECT_GC } ExpectKind;

typedef struct Expected {
    ExpectKind kind;
    DdmSnapshotGcCall *call; /* EXPECT_GC: borrowed from col.gc_calls */
} Expected;

typedef struct ServerCollector {
    DdmSnapshotCollector col;
    DdmClient *client;
    gboolean failed;
    GQueue expected;   /* Expected*, owned */
    GPtrArray *gc_conns; /* GcConn*, owned: GC commands in flight */
    GQueue gc_waiting; /* DdmSnapshotGcCall* (borrowed) waiting for a free connection */
} ServerCollector;

/* One GC command on a connection of its own: a server answers one
 * client's requests one at a time, and a GC may wait for its timeout. */
typedef struct GcConn {
    ServerCollector *sc;
    DdmSnapshotGcCall *call;
    DdmClient *client;
    guint source;
} GcConn;

static void gc_conn_free(gpointer p)
{
    GcConn *gcc = p;
    if (gcc->source != 0)
        g_source_remove(gcc->source);
    ddm_client_free(gcc->client);
    g_free(gcc);
}

static gboolean server_send(ServerCollector *sc, const DdmCtlRequest *req, ExpectKind kind,
                            DdmSnapshotGcCall *call, GError **error)
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

static void gc_conn_start_next(ServerCollector *sc);

/* The answer on a GC connection: the call ends, the connection closes. */
static gboolean on_gc_conn_data(gint fd, GIOCondition cond, gpointer data)
{
    (void)fd;
    (void)cond;
    GcConn *gcc = data;
    ServerCollector *sc = gcc->sc;
    g_autoptr(GError) error = NULL;
    gboolean alive = ddm_client_read_some(gcc->client, &error);
    g_autoptr(GError) perr = NULL;
    g_autoptr(JsonNode) msg = ddm_client_next(gcc->client, &perr);
    if (msg != NULL) {
        JsonObject *o = json_node_get_object(msg);
        gboolean ok = ddm_json_get_bool(o, "ok", FALSE);
        const char *err = ddm_json_get_string(o, "error");
        ddm_snapshot_gc_call_done(gcc->call, ok,
                                  ok            ? ddm_json_get_string(o, "message")
                                  : err != NULL ? err
                                                : "GC failed");
    } else if (perr != NULL || !alive) {
        g_autofree char *why = g_strdup_printf(
            "no answer from the server (%s)",
            perr != NULL ? perr->message : error != NULL ? error->message : "closed");
        ddm_snapshot_gc_call_done(gcc->call, FALSE, why);
    } else {
        return G_SOURCE_CONTINUE;
    }
    gcc->source = 0; /* removed by returning G_SOURCE_REMOVE */
    g_ptr_array_remove(sc->gc_conns, gcc);
    gc_conn_start_next(sc);
    return G_SOURCE_REMOVE;
}

/* Start waiting calls while connections are free. */
static void gc_conn_start_next(ServerCollector *sc)
{
    while (sc->gc_conns->len < DDM_SNAPSHOT_GC_CONNS && !sc->col.finished) {
        DdmSnapshotGcCall *call = g_queue_pop_head(&sc->gc_waiting);
        if (call == NULL)
            return;
        g_autoptr(GError) error = NULL;
        DdmClient *client = ddm_client_connect(sc->col.opt->socket_path, &error);
        char *argv[] = {(char *)"gc", call->vm_key, NULL};
        DdmCtlRequest req = {0};
        req.op = DDM_CTL_OP_COMMAND;
        req.argv = argv;
        if (client == NULL || !ddm_client_send(client, &req, &error)) {
            g_autofree char *why = g_strdup_printf("cannot ask the server: %s", error->message);
            if (client != NULL)
                ddm_client_free(client);
            ddm_snapshot_gc_call_done(call, FALSE, why);
            continue;
        }
        GcConn *gcc = g_new0(GcConn, 1);
        gcc->sc = sc;
        gcc->call = call;
        gcc->client = client;
        gcc->source = g_unix_fd_add(ddm_client_fd(client), G_IO_IN | G_IO_HUP | G_IO_ERR,
                                    on_gc_conn_data, gcc);
        g_ptr_array_add(sc->gc_conns, gcc);
    }
}

/* {"op":"command","argv":["gc",KEY]}: the server runs it as it runs
 * `ddmon gc KEY`. On connections of their own when the socket path is
 * known, else one after the other on the watch connection. */
static void server_send_gc(DdmSnapshotCollector *col, DdmSnapshotGcCall *call)
{
    ServerCollector *sc = col->source;
    if (col->opt->socket_path != NULL) {
        g_queue_push_tail(&sc->gc_waiting, call);
        gc_conn_start_next(sc);
        return;
    }
    char *argv[] = {(char *)"gc", call->vm_key, NULL};
    DdmCtlRequest req = {0};
    req.op = DDM_CTL_OP_COMMAND;
    req.argv = argv;
    g_autoptr(GError) error = NULL;
    if (!server_send(sc, &req, EXPECT_GC, call, &error))
        ddm_snapshot_gc_call_done(call, FALSE, error->message);
}

/* The answer to {"op":"commands"}: is there a "gc"? */
static void server_commands_answered(ServerCollector *sc, JsonObject *o)
{
    JsonNode *list = json_object_get_member(o, "commands");
    if (!ddm_json_get_bool(o, "ok", FALSE) || list == NULL || !JSON_NODE_HOLDS_ARRAY(list)) {
        const char *err = ddm_json_get_string(o, "error");
        g_autofree char *why = g_strdup_printf("the server did not list its commands (%s)",
                                               err != NULL ? err : "no list");
        ddm_snapshot_gc_unavailable(&sc->col, why);
        return;
    }
    JsonArray *a = json_node_get_array(list);
    for (guint i = 0; i < json_array_get_length(a); i++) {
        JsonNode *e = json_array_get_element(a, i);
        if (JSON_NODE_HOLDS_OBJECT(e) &&
            g_strcmp0(ddm_json_get_string(json_node_get_object(e), "name"), "gc") == 0) {
            sc->col.gc_available = 1;
            sc->col.vms_dirty = TRUE; /* look at the VM list we have */
            return;
        }
    }
    ddm_snapshot_gc_unavailable(&sc->col, "no plugin of the server provides a 'gc' command");
}

/* A response (not an event). FALSE if it ends the snapshot. */
static gboolean server_response(ServerCollector *sc, JsonObject *o)
{
    Expected *ex = g_queue_pop_head(&sc->expected);
    ExpectKind kind = ex != NULL ? ex->kind : EXPECT_WATCH;
    DdmSnapshotGcCall *call = ex != NULL ? ex->call : NULL;
    g_free(ex);
    gboolean ok = ddm_json_get_bool(o, "ok", FALSE);
    const char *err = ddm_json_get_string(o, "error");
    switch (kind) {
    case EXPECT_COMMANDS:
        server_commands_answered(sc, o);
        return TRUE;
    case EXPECT_GC:
        ddm_snapshot_gc_call_done(
            call, ok, ok ? ddm_json_get_string(o, "message") : err != NULL ? err : "GC failed");
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

int ddm_snapshot_run_client(DdmClient *client, const DdmSnapshotOptions *opt)
{
    ServerCollector sc = {0};
    sc.client = client;
    g_queue_init(&sc.expected);
    g_queue_init(&sc.gc_waiting);
    sc.gc_conns = g_ptr_array_new_with_free_func(gc_conn_free);
    ddm_snapshot_collector_init(&sc.col, opt);
    sc.col.source = &sc;
    sc.col.send_gc = server_send_gc;
    DdmCtlRequest req = {0};
    req.op = DDM_CTL_OP_WATCH;
    req.blobs = opt->out_dir != NULL;
    DdmCtlRequest commands = {0};
    commands.op = DDM_CTL_OP_COMMANDS;
    g_autoptr(GError) error = NULL;
    if (!server_send(&sc, &req, EXPECT_WATCH, NULL, &error) ||
        (opt->gc && !server_send(&sc, &commands, EXPECT_COMMANDS, NULL, &error))) {
        g_printerr("ddmon: %s\n", error->message);
        expected_clear(&sc);
        g_ptr_array_unref(sc.gc_conns);
        ddm_snapshot_collector_clear(&sc.col);
        return DDM_EXIT_FAILED;
    }
    guint src = g_unix_fd_add(ddm_client_fd(client), G_IO_IN | G_IO_HUP | G_IO_ERR,
                              on_server_data, &sc);
    ddm_snapshot_collector_run(&sc.col);
    if (!sc.failed)
        g_source_remove(src);
    int status = sc.failed          ? DDM_EXIT_FAILED
                 : sc.col.status != 0 ? sc.col.status
                                      : ddm_snapshot_print_views(&sc.col);
    expected_clear(&sc);
    g_ptr_array_unref(sc.gc_conns);
    g_queue_clear(&sc.gc_waiting);
    ddm_snapshot_collector_clear(&sc.col);
    return status;
}
