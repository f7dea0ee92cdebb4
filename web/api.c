/* SPDX-License-Identifier: Apache-2.0
 *
 * The JSON API under /api/ (api.h; doc/web-api.md): one handler per
 * route, the short "interest" that keeps a view fetched once watched for
 * a while (producers poll only while someone looks), and commands run for
 * the web with their files in a run directory.
 */
#define _GNU_SOURCE 1 /* POLLRDHUP */
#include "web/api.h"

#include <errno.h>
#include <poll.h>
#include <string.h>
#include <sys/socket.h>

#include "core/views/interest.h"
#include "core/wire/ctlproto.h" /* ddm_json_object_node */
#include "web/view_json.h"

/* A view fetched by GET stays watched this long, so the next GET sees
 * fresh data (the control socket's one-shot views do the same). */
#define INTEREST_SECONDS 30
#define MAX_INTERESTS 256

struct DdmWebApi {
    DdmHttpServer *srv;
    DdmDaemon *daemon;
    DdmWebStream *stream;
    DdmWebHistory *history;
    DdmWebDownloads *downloads;
    DdmViewInterest *interest; /* views fetched lately, kept watched */
    GList *commands;       /* RunningCommand* */
    guint n_commands;
    gboolean stopping;     /* ddm_web_api_stop: no new command */
};

typedef struct RunningCommand {
    DdmWebApi *api;        /* NULL once the API is gone */
    SoupServerMessage *msg; /* NULL once the client went away */
    gulong finished_id;
    GSource *gone_watch;    /* the client's socket, watched for its end */
    char *run_id;
    char *run_dir; /* absolute; never shown to the client (scrub_paths) */
} RunningCommand;

/* -------------------------------------------------------------- helpers */

static DdmViews *views_of(DdmWebApi *api)
{
    return ddm_daemon_views(api->daemon);
}

static const char *vm_key(DdmVm *vm)
{
    return vm->info.key != NULL ? vm->info.key : vm->target->key;
}

static JsonObject *doc_new(void)
{
    JsonObject *o = json_object_new();
    json_object_set_int_member(o, "schema", DDM_WEB_API_SCHEMA);
    return o;
}

/* The VM named by a path segment (a key, pid or app name, as anywhere in
 * ddmon); NULL after answering 404. */
static DdmVm *find_vm_or_404(DdmWebApi *api, SoupServerMessage *msg, const char *spec)
{
    g_autofree char *error = NULL;
    DdmVm *vm = ddm_monitor_resolve_vm_or_error(ddm_daemon_monitor(api->daemon), spec, &error);
    if (vm == NULL)
        ddm_http_reply_error(msg, SOUP_STATUS_NOT_FOUND, "%s", error ? error : "no such VM");
    return vm;
}


/* The views' {NAME: {"kind","title","owner","version","url","made"}},
 * grouped by VM key ("" for the global views), in one walk: a GHashTable of
 * key -> JsonObject (owned by the table). @only_vm: that VM's views (its
 * declared ones made, no other VM's); @global: the global views; neither:
 * every view made, none made here (vms_object adds the declared ones by
 * name: listing the VMs must not make every VM's views). */
static GHashTable *views_by_vm(DdmWebApi *api, const char *only_vm, gboolean global)
{
    GHashTable *by_vm = g_hash_table_new_full(g_str_hash, g_str_equal, g_free,
                                              (GDestroyNotify)json_object_unref);
    g_autoptr(GPtrArray) all = only_vm != NULL || global ? ddm_views_list_vm(views_of(api), only_vm)
                                                         : ddm_views_list_made(views_of(api));
    static const char *const kinds[] = {"?", "table", "record", "blob"};
    for (guint i = 0; i < all->len; i++) {
        ddm_view *v = all->pdata[i];
        const char *key = ddm_view_vm_key(v) != NULL ? ddm_view_vm_key(v) : "";
        JsonObject *vo = g_hash_table_lookup(by_vm, key);
        if (vo == NULL) {
            vo = json_object_new();
            g_hash_table_insert(by_vm, g_strdup(key), vo);
        }
        JsonObject *m = json_object_new();
        ddm_view_kind k = ddm_view_kind_of(v);
        json_object_set_string_member(m, "kind", (guint)k < G_N_ELEMENTS(kinds) ? kinds[k] : "?");
        json_object_set_string_member(m, "title", ddm_view_title(v));
        json_object_set_string_member(m, "owner", ddm_view_owner(v));
        json_object_set_int_member(m, "version", (gint64)ddm_view_version(v));
        g_autofree char *url = ddm_web_view_path(v);
        json_object_set_string_member(m, "url", url);
        json_object_set_boolean_member(m, "made", TRUE);
        json_object_set_object_member(vo, ddm_view_name(v), m);
    }
    return by_vm;
}

/* To @vo (VM @key's views) the views it would have when asked that are not
 * made: {"url", "made": false} each, named by their declarations, none made. */
static void add_declared_views(DdmWebApi *api, JsonObject *vo, const char *key)
{
    g_autoptr(GHashTable) names = ddm_views_names(views_of(api), key);
    GHashTableIter it;
    gpointer name;
    g_autofree char *k = g_uri_escape_string(key, NULL, FALSE);
    g_hash_table_iter_init(&it, names);
    while (g_hash_table_iter_next(&it, &name, NULL)) {
        if (json_object_has_member(vo, name))
            continue;
        g_autofree char *n = g_uri_escape_string(name, NULL, FALSE);
        g_autofree char *url = g_strdup_printf("/api/vms/%s/views/%s", k, n);
        JsonObject *m = json_object_new();
        json_object_set_string_member(m, "url", url);
        json_object_set_boolean_member(m, "made", FALSE);
        json_object_set_object_member(vo, name, m);
    }
}

/* The views of @key (NULL: the global ones) from views_by_vm. (transfer full) */
static JsonObject *views_of_key(GHashTable *by_vm, const char *key)
{
    JsonObject *vo = g_hash_table_lookup(by_vm, key != NULL ? key : "");
    return vo != NULL ? json_object_ref(vo) : json_object_new();
}

/* The rows of the "vms" view keyed by VM key (@only_vm: that VM's row),
 * each with its views. */
static JsonObject *vms_object(DdmWebApi *api, const char *only_vm)
{
    JsonObject *out = json_object_new();
    ddm_daemon_vm_list_fresh(api->daemon); /* its rebuild is coalesced (300 ms with 10,000 rows) */
    ddm_view *vms = ddm_views_lookup(views_of(api), "vms", NULL);
    if (vms == NULL)
        return out;
    g_autoptr(JsonNode) view = ddm_web_view_json(vms, FALSE);
    g_autoptr(GHashTable) by_vm = views_by_vm(api, only_vm, FALSE); /* once, not once per VM */
    JsonObject *vo = json_node_get_object(view);
    JsonArray *rows = json_object_has_member(vo, "rows") ? json_object_get_array_member(vo, "rows")
                                                        : NULL;
    for (guint i = 0; rows != NULL && i < json_array_get_length(rows); i++) {
        JsonObject *row = json_array_get_object_element(rows, i);
        const char *key = row != NULL && json_object_has_member(row, "key")
                              ? json_object_get_string_member(row, "key")
                              : NULL;
        if (key == NULL || (only_vm != NULL && strcmp(key, only_vm) != 0))
            continue;
        JsonObject *vm = json_object_new();
        GList *names = json_object_get_members(row);
        for (GList *l = names; l != NULL; l = l->next)
            json_object_set_member(vm, l->data, json_node_copy(json_object_get_member(row, l->data)));
        g_list_free(names);
        JsonObject *views = views_of_key(by_vm, key);
        if (only_vm == NULL)
            add_declared_views(api, views, key);
        json_object_set_object_member(vm, "views", views);
        json_object_set_object_member(out, key, vm);
    }
    return out;
}

/* --------------------------------------------------------------- routes */

static void route_vms(SoupServerMessage *msg, const char *path, gpointer ud)
{
    DdmWebApi *api = ud;
    JsonObject *o = doc_new();
    json_object_set_object_member(o, "vms", vms_object(api, NULL));
    ddm_http_reply_json(msg, SOUP_STATUS_OK, ddm_json_object_node(o));
}

static void route_vm(SoupServerMessage *msg, const char *path, gpointer ud)
{
    DdmWebApi *api = ud;
    g_auto(GStrv) seg = ddm_http_path_segments(path);
    if (seg == NULL || g_strv_length(seg) != 3) {
        ddm_http_reply_error(msg, SOUP_STATUS_BAD_REQUEST, "bad path");
        return;
    }
    DdmVm *vm = find_vm_or_404(api, msg, seg[2]);
    if (vm == NULL)
        return;
    g_autoptr(JsonObject) all = vms_object(api, vm_key(vm));
    JsonObject *o = doc_new();
    json_object_set_string_member(o, "key", vm_key(vm));
    if (json_object_has_member(all, vm_key(vm)))
        json_object_set_object_member(o, "vm",
                                      json_object_ref(json_object_get_object_member(all, vm_key(vm))));
    else
        json_object_set_null_member(o, "vm");
    ddm_http_reply_json(msg, SOUP_STATUS_OK, ddm_json_object_node(o));
}

/* /api/vms/KEY/views/NAME[/data] and /api/views/NAME[/data]. */
static void route_view(SoupServerMessage *msg, const char *path, gpointer ud)
{
    DdmWebApi *api = ud;
    g_auto(GStrv) seg = ddm_http_path_segments(path);
    guint n = seg != NULL ? g_strv_length(seg) : 0;
    gboolean global = n >= 2 && strcmp(seg[1], "views") == 0;
    const char *name = global ? seg[2] : (n >= 5 ? seg[4] : NULL);
    gboolean data = n == (global ? 4u : 6u);
    if (name == NULL) {
        ddm_http_reply_error(msg, SOUP_STATUS_BAD_REQUEST, "bad path");
        return;
    }
    const char *key = NULL;
    if (!global) {
        DdmVm *vm = find_vm_or_404(api, msg, seg[2]);
        if (vm == NULL)
            return;
        key = vm_key(vm);
    }
    ddm_view *v = ddm_views_lookup(views_of(api), name, key);
    if (v == NULL) {
        ddm_http_reply_error(msg, SOUP_STATUS_NOT_FOUND, "no view '%s'%s%s", name,
                             key ? " of VM " : "", key ? key : "");
        return;
    }
    /* noted only once it exists (as the control socket does): a bogus
     * name takes no place in the shared, capped interest table */
    ddm_view_interest_note(api->interest, name, key);
    if (!data) {
        ddm_http_reply_json(msg, SOUP_STATUS_OK, ddm_web_view_json(v, TRUE));
        return;
    }
    gsize len = 0;
    const char *media = NULL;
    const guint8 *bytes = ddm_view_blob_data(v, &len, &media);
    if (bytes == NULL) {
        ddm_http_reply_error(msg, SOUP_STATUS_NOT_FOUND, "view '%s' has no data yet", name);
        return;
    }
    ddm_http_reply(msg, SOUP_STATUS_OK, media ? media : "application/octet-stream",
                   (const char *)bytes, len);
    /* Its URL names the version ("data_url": ...?v=N): the same URL is the
     * same bytes, so the browser may keep them. */
    g_autofree char *asked = ddm_http_query_param(msg, "v");
    g_autofree char *have = g_strdup_printf("%" G_GUINT64_FORMAT, ddm_view_version(v));
    if (asked != NULL && strcmp(asked, have) == 0)
        soup_message_headers_replace(soup_server_message_get_response_headers(msg),
                                     "Cache-Control", "private, max-age=600");
}

/* /api/vms/KEY/views/NAME/history */
static void route_history(SoupServerMessage *msg, const char *path, gpointer ud)
{
    DdmWebApi *api = ud;
    g_auto(GStrv) seg = ddm_http_path_segments(path);
    if (seg == NULL || g_strv_length(seg) != 6) {
        ddm_http_reply_error(msg, SOUP_STATUS_BAD_REQUEST, "bad path");
        return;
    }
    DdmVm *vm = find_vm_or_404(api, msg, seg[2]);
    if (vm == NULL)
        return;
    /* As GET of the view: a declared view is made, and stays watched a
     * while. A record made only when asked (vminfo) has no history until
     * somebody asks, and loses it when it goes unwatched (history.h). */
    ddm_view *v = ddm_views_lookup(views_of(api), seg[4], vm_key(vm));
    if (v == NULL) {
        ddm_http_reply_error(msg, SOUP_STATUS_NOT_FOUND, "no view '%s' of VM %s", seg[4],
                             vm_key(vm));
        return;
    }
    if (ddm_view_kind_of(v) != DDM_VIEW_RECORD) {
        ddm_http_reply_error(msg, SOUP_STATUS_NOT_FOUND,
                             "'%s' is not a record: only records have a history", seg[4]);
        return;
    }
    ddm_view_interest_note(api->interest, seg[4], vm_key(vm));
    JsonNode *n = ddm_web_history_json(api->history, vm_key(vm), seg[4]);
    if (n == NULL) {
        ddm_http_reply_error(msg, SOUP_STATUS_NOT_FOUND,
                             "no history of '%s' of VM %s yet (it has not changed since it "
                             "was made, or the server keeps as many as it may)",
                             seg[4], vm_key(vm));
        return;
    }
    ddm_http_reply_json(msg, SOUP_STATUS_OK, n);
}

static void route_global_views(SoupServerMessage *msg, const char *path, gpointer ud)
{
    DdmWebApi *api = ud;
    JsonObject *o = doc_new();
    g_autoptr(GHashTable) by_vm = views_by_vm(api, NULL, TRUE);
    json_object_set_object_member(o, "views", views_of_key(by_vm, NULL));
    ddm_http_reply_json(msg, SOUP_STATUS_OK, ddm_json_object_node(o));
}

static void route_commands(SoupServerMessage *msg, const char *path, gpointer ud)
{
    DdmWebApi *api = ud;
    g_autoptr(GArray) cmds = ddm_registry_commands(ddm_daemon_registry(api->daemon));
    JsonObject *co = json_object_new();
    for (guint i = 0; cmds != NULL && i < cmds->len; i++) {
        const DdmCommandInfo *ci = &g_array_index(cmds, DdmCommandInfo, i);
        JsonObject *c = json_object_new();
        json_object_set_string_member(c, "usage", ci->usage);
        json_object_set_string_member(c, "summary", ci->summary);
        json_object_set_string_member(c, "plugin", ci->plugin);
        json_object_set_boolean_member(c, "takes_vm", ddm_command_usage_takes_vm(ci->name, ci->usage));
        json_object_set_object_member(co, ci->name, c);
    }
    JsonObject *o = doc_new();
    json_object_set_object_member(o, "commands", co);
    ddm_http_reply_json(msg, SOUP_STATUS_OK, ddm_json_object_node(o));
}

static void route_stream(SoupServerMessage *msg, const char *path, gpointer ud)
{
    DdmWebApi *api = ud;
    g_autofree char *spec = ddm_http_query_param(msg, "vm");
    const char *key = NULL;
    if (spec != NULL) {
        DdmVm *vm = find_vm_or_404(api, msg, spec);
        if (vm == NULL)
            return;
        key = vm_key(vm);
    }
    ddm_web_stream_start(api->stream, msg, key);
}

static void route_download(SoupServerMessage *msg, const char *path, gpointer ud)
{
    DdmWebApi *api = ud;
    g_auto(GStrv) seg = ddm_http_path_segments(path);
    /* /api/downloads/RUN/NAME or /api/downloads/RUN/SUB.../NAME */
    if (seg == NULL || g_strv_length(seg) < 4 || strcmp(seg[1], "downloads") != 0) {
        ddm_http_reply_error(msg, SOUP_STATUS_NOT_FOUND, "no such download");
        return;
    }
    ddm_web_downloads_serve(api->downloads, msg, seg[2], (const char *const *)seg + 3);
}

/* ------------------------------------------------------------- commands */

static void running_free(RunningCommand *rc)
{
    if (rc->gone_watch != NULL) {
        g_source_destroy(rc->gone_watch);
        g_source_unref(rc->gone_watch);
    }
    if (rc->msg != NULL) {
        g_signal_handler_disconnect(rc->msg, rc->finished_id);
        g_object_unref(rc->msg);
    }
    g_free(rc->run_id);
    g_free(rc->run_dir);
    g_free(rc);
}

/* The client went away before the answer: let a long command stop early. */
static void on_command_client_gone(SoupServerMessage *msg, gpointer ud)
{
    RunningCommand *rc = ud;
    g_signal_handler_disconnect(rc->msg, rc->finished_id);
    g_clear_object(&rc->msg);
    if (rc->api != NULL)
        ddm_registry_cancel_commands_of(ddm_daemon_registry(rc->api->daemon), rc);
}

/* The client left after sending more (a pipelined request): the peer's
 * end of the stream is seen by poll(2) as POLLRDHUP (Linux) whatever
 * bytes wait before it, so a readable socket does not hide it. */
static gboolean on_command_peer_closed(GSocket *sock, GIOCondition cond, gpointer ud)
{
    RunningCommand *rc = ud;
    (void)sock;
    g_clear_pointer(&rc->gone_watch, g_source_unref); /* removed as we return */
    g_debug("web: a command's client went away after a pipelined request (events 0x%x)", (unsigned)cond);
    if (rc->api != NULL)
        ddm_registry_cancel_commands_of(ddm_daemon_registry(rc->api->daemon), rc);
    return G_SOURCE_REMOVE;
}

/* The paused message's socket became readable. libsoup reads nothing while
 * a message is paused, so it would see neither a close nor emit
 * "finished"/"disconnected" until the answer is written: we look (a peek,
 * so nothing is taken from libsoup). The end of the stream or an error:
 * the client left; the command is cancelled and, once it ends, its answer
 * finds the connection closed (libsoup finishes the message). Bytes (a
 * pipelined request): the client is still there, and the socket stays
 * readable, so from then on only its peer's end is watched (POLLRDHUP;
 * where poll(2) has none, nothing is). */
static gboolean on_command_socket_ready(GSocket *sock, GIOCondition cond, gpointer ud)
{
    RunningCommand *rc = ud;
    char byte;
    int fd = g_socket_get_fd(sock);
    ssize_t n = recv(fd, &byte, 1, MSG_PEEK | MSG_DONTWAIT);
    int e = errno;
    (void)cond;
    if (n < 0 && (e == EAGAIN || e == EWOULDBLOCK || e == EINTR))
        return G_SOURCE_CONTINUE;
    g_clear_pointer(&rc->gone_watch, g_source_unref); /* removed as we return */
    if (n > 0) {
#ifdef POLLRDHUP
        /* a socket source, as the first watch: it holds the GSocket */
        rc->gone_watch = g_socket_create_source(sock, (GIOCondition)(POLLRDHUP | G_IO_HUP | G_IO_ERR), NULL);
        g_source_set_callback(rc->gone_watch, (GSourceFunc)(void (*)(void))on_command_peer_closed, rc, NULL);
        g_source_attach(rc->gone_watch, NULL);
#endif
        return G_SOURCE_REMOVE;
    }
    g_debug("web: a command's client went away (%s)", n == 0 ? "end of stream" : g_strerror(e));
    if (rc->api != NULL)
        ddm_registry_cancel_commands_of(ddm_daemon_registry(rc->api->daemon), rc);
    return G_SOURCE_REMOVE;
}

/* @text with the run directory's absolute path replaced by the run's
 * name: a reply never shows where the server keeps its files.
 * (transfer full) */
static char *scrub_path(const char *text, const RunningCommand *rc)
{
    g_autoptr(GString) out = g_string_new(text);
    g_autofree char *with_slash = g_strconcat(rc->run_dir, "/", NULL);
    g_string_replace(out, with_slash, "", 0);
    g_string_replace(out, rc->run_dir, rc->run_id, 0);
    return g_string_free(g_steal_pointer(&out), FALSE);
}

/* scrub_path on every string of @node, in place. */
static void scrub_node(JsonNode *node, const RunningCommand *rc)
{
    if (JSON_NODE_HOLDS_OBJECT(node)) {
        JsonObjectIter it;
        JsonNode *member;
        json_object_iter_init(&it, json_node_get_object(node));
        while (json_object_iter_next(&it, NULL, &member))
            scrub_node(member, rc);
    } else if (JSON_NODE_HOLDS_ARRAY(node)) {
        JsonArray *a = json_node_get_array(node);
        for (guint i = 0; i < json_array_get_length(a); i++)
            scrub_node(json_array_get_element(a, i), rc);
    } else if (JSON_NODE_HOLDS_VALUE(node) && json_node_get_value_type(node) == G_TYPE_STRING) {
        const char *v = json_node_get_string(node);
        gsize id_len = strlen(rc->run_id);
        if (strstr(v, rc->run_dir) != NULL) {
            g_autofree char *clean = scrub_path(v, rc);
            json_node_set_string(node, clean);
        } else if (strncmp(v, rc->run_id, id_len) == 0 && v[id_len] == '/') {
            /* a view's form (ddm_web_view_json hid the downloads directory:
             * RUN/NAME): a result names the file as its message does */
            g_autofree char *name = g_strdup(v + id_len + 1);
            json_node_set_string(node, name);
        }
    }
}

static void command_done(ddm_cmd_status status, const char *message, ddm_view *result,
                         gpointer ud)
{
    RunningCommand *rc = ud;
    DdmWebApi *api = rc->api;
    if (api != NULL) {
        api->commands = g_list_remove(api->commands, rc);
        api->n_commands--;
    }
    if (rc->msg != NULL) {
        JsonObject *o = doc_new();
        json_object_set_boolean_member(o, "ok", status == DDM_CMD_OK);
        json_object_set_int_member(o, "status", status);
        g_autofree char *clean = message != NULL ? scrub_path(message, rc) : NULL;
        if (status != DDM_CMD_OK)
            json_object_set_string_member(o, "error",
                                          clean != NULL && *clean ? clean : "command failed");
        else
            json_object_set_string_member(o, "message", clean);
        if (result != NULL) {
            JsonNode *rn = ddm_web_view_json(result, FALSE);
            scrub_node(rn, rc);
            json_object_set_member(o, "result", rn);
        } else
            json_object_set_null_member(o, "result");
        json_object_set_member(o, "files", api != NULL ? ddm_web_downloads_files(api->downloads,
                                                                                 rc->run_id)
                                                       : ddm_json_object_node(json_object_new()));
        /* 200 whatever the command said: the request itself worked; "ok"
         * and "status" say how the command went. */
        ddm_http_reply_json(rc->msg, SOUP_STATUS_OK, ddm_json_object_node(o));
        soup_server_message_unpause(rc->msg);
    }
    running_free(rc);
}

/* {"args":["--x","y"]} (optional) -> the extra arguments; NULL after a 400. */
static GPtrArray *command_args(SoupServerMessage *msg)
{
    GPtrArray *args = g_ptr_array_new_with_free_func(g_free);
    SoupMessageBody *body = soup_server_message_get_request_body(msg);
    g_autoptr(GBytes) bytes = body != NULL ? soup_message_body_flatten(body) : NULL;
    if (bytes == NULL || g_bytes_get_size(bytes) == 0)
        return args;
    g_autoptr(JsonParser) p = json_parser_new();
    gsize len = 0;
    const char *text = g_bytes_get_data(bytes, &len);
    JsonObject *o = NULL;
    if (json_parser_load_from_data(p, text, (gssize)len, NULL) &&
        JSON_NODE_HOLDS_OBJECT(json_parser_get_root(p)))
        o = json_node_get_object(json_parser_get_root(p));
    JsonNode *an = o != NULL ? json_object_get_member(o, "args") : NULL;
    if (o == NULL || (an != NULL && !JSON_NODE_HOLDS_ARRAY(an) && !JSON_NODE_HOLDS_NULL(an))) {
        ddm_http_reply_error(msg, SOUP_STATUS_BAD_REQUEST,
                             "the body is a JSON object {\"args\":[\"...\"]} or empty");
        g_ptr_array_unref(args);
        return NULL;
    }
    JsonArray *a = an != NULL && JSON_NODE_HOLDS_ARRAY(an) ? json_node_get_array(an) : NULL;
    for (guint i = 0; a != NULL && i < json_array_get_length(a); i++) {
        JsonNode *e = json_array_get_element(a, i);
        if (!JSON_NODE_HOLDS_VALUE(e) || json_node_get_value_type(e) != G_TYPE_STRING ||
            i >= 64) {
            ddm_http_reply_error(msg, SOUP_STATUS_BAD_REQUEST,
                                 "\"args\" holds at most 64 strings");
            g_ptr_array_unref(args);
            return NULL;
        }
        g_ptr_array_add(args, g_strdup(json_node_get_string(e)));
    }
    return args;
}

static void route_run_command(SoupServerMessage *msg, const char *path, gpointer ud)
{
    DdmWebApi *api = ud;
    g_auto(GStrv) seg = ddm_http_path_segments(path);
    if (seg == NULL || g_strv_length(seg) != 5) {
        ddm_http_reply_error(msg, SOUP_STATUS_BAD_REQUEST, "bad path");
        return;
    }
    DdmVm *vm = find_vm_or_404(api, msg, seg[2]);
    if (vm == NULL)
        return;
    const char *name = seg[4];
    g_autoptr(GArray) cmds = ddm_registry_commands(ddm_daemon_registry(api->daemon));
    const DdmCommandInfo *info = NULL;
    for (guint i = 0; cmds != NULL && i < cmds->len && info == NULL; i++)
        if (strcmp(g_array_index(cmds, DdmCommandInfo, i).name, name) == 0)
            info = &g_array_index(cmds, DdmCommandInfo, i);
    if (info == NULL) {
        ddm_http_reply_error(msg, SOUP_STATUS_NOT_FOUND, "no command '%s'", name);
        return;
    }
    if (!ddm_command_usage_takes_vm(info->name, info->usage)) {
        ddm_http_reply_error(msg, SOUP_STATUS_BAD_REQUEST,
                             "'%s' does not take a VM (usage: %s)", name, info->usage);
        return;
    }
    if (api->stopping) { /* a request on a connection kept open, while the answers flush */
        ddm_http_reply_error(msg, SOUP_STATUS_SERVICE_UNAVAILABLE, "the server stops");
        return;
    }
    if (api->n_commands >= DDM_WEB_API_MAX_COMMANDS) {
        ddm_http_reply_error(msg, 429 /* Too Many Requests */,
                             "%d commands are running; try again when one is done",
                             DDM_WEB_API_MAX_COMMANDS);
        return;
    }
    g_autoptr(GPtrArray) extra = command_args(msg);
    if (extra == NULL)
        return;
    g_autoptr(GError) error = NULL;
    g_autofree char *run_id = NULL;
    g_autofree char *out_dir = ddm_web_downloads_new_run(api->downloads, name, &run_id, &error);
    if (out_dir == NULL) {
        ddm_http_reply_error(msg, SOUP_STATUS_INTERNAL_SERVER_ERROR, "%s", error->message);
        return;
    }
    /* As the command line would say it: NAME VM ARGS... */
    g_autoptr(GPtrArray) argv = g_ptr_array_new();
    g_ptr_array_add(argv, (gpointer)name);
    g_ptr_array_add(argv, (gpointer)vm_key(vm));
    for (guint i = 0; i < extra->len; i++)
        g_ptr_array_add(argv, extra->pdata[i]);
    g_ptr_array_add(argv, NULL);

    RunningCommand *rc = g_new0(RunningCommand, 1);
    rc->api = api;
    rc->msg = g_object_ref(msg);
    rc->run_id = g_steal_pointer(&run_id);
    rc->finished_id = g_signal_connect(msg, "finished", G_CALLBACK(on_command_client_gone), rc);
    api->commands = g_list_prepend(api->commands, rc);
    api->n_commands++;
    rc->run_dir = g_steal_pointer(&out_dir);
    soup_server_message_pause(msg);
    GSocket *sock = ddm_http_server_message_socket(api->srv, msg);
    if (sock != NULL) {
        rc->gone_watch = g_socket_create_source(sock, G_IO_IN | G_IO_HUP | G_IO_ERR, NULL);
        g_source_set_callback(rc->gone_watch, (GSourceFunc)(void (*)(void))on_command_socket_ready, rc, NULL);
        g_source_attach(rc->gone_watch, NULL);
    }
    g_message("web: running '%s' on %s", name, vm_key(vm));
    /* Every file the command writes stays in its run directory: the core
     * refuses arguments that could name one elsewhere. The command may
     * finish before this returns (command_done frees rc). */
    if (!ddm_registry_run_command_confined(ddm_daemon_registry(api->daemon), (int)argv->len - 1,
                                           (const char *const *)argv->pdata, rc->run_dir,
                                           command_done, NULL, rc, &error))
        command_done(DDM_CMD_USAGE, error->message, NULL, rc);
}

/* ------------------------------------------------------------- lifetime */

DdmWebApi *ddm_web_api_new(DdmHttpServer *srv, DdmDaemon *daemon, DdmWebStream *stream,
                           DdmWebHistory *history, DdmWebDownloads *downloads)
{
    DdmWebApi *api = g_new0(DdmWebApi, 1);
    api->srv = srv;
    api->daemon = daemon;
    api->stream = stream;
    api->history = history;
    api->downloads = downloads;
    api->interest = ddm_view_interest_new(views_of(api), INTEREST_SECONDS, MAX_INTERESTS);
    ddm_http_server_add_route(srv, "/api/vms", DDM_HTTP_GET, route_vms, api);
    ddm_http_server_add_route(srv, "/api/vms/*", DDM_HTTP_GET, route_vm, api);
    ddm_http_server_add_route(srv, "/api/vms/*/views/*", DDM_HTTP_GET, route_view, api);
    ddm_http_server_add_route(srv, "/api/vms/*/views/*/data", DDM_HTTP_GET, route_view, api);
    ddm_http_server_add_route(srv, "/api/vms/*/views/*/history", DDM_HTTP_GET, route_history, api);
    ddm_http_server_add_route(srv, "/api/vms/*/commands/*", DDM_HTTP_POST, route_run_command, api);
    ddm_http_server_add_route(srv, "/api/views", DDM_HTTP_GET, route_global_views, api);
    ddm_http_server_add_route(srv, "/api/views/*", DDM_HTTP_GET, route_view, api);
    ddm_http_server_add_route(srv, "/api/views/*/data", DDM_HTTP_GET, route_view, api);
    ddm_http_server_add_route(srv, "/api/commands", DDM_HTTP_GET, route_commands, api);
    ddm_http_server_add_route(srv, "/api/stream", DDM_HTTP_GET, route_stream, api);
    ddm_http_server_add_route(srv, "/api/downloads/", DDM_HTTP_GET | DDM_HTTP_PREFIX,
                              route_download, api);
    return api;
}

/* The 503s ddm_web_api_stop queued, until libsoup has written them. */
typedef struct StopFlush {
    guint unwritten;  /* answers not yet "finished" */
    gboolean timed_out;
} StopFlush;

static void on_stop_answer_finished(SoupServerMessage *msg, gpointer ud)
{
    StopFlush *f = ud;
    (void)msg;
    if (f->unwritten > 0)
        f->unwritten--;
}

static gboolean on_stop_flush_timeout(gpointer ud)
{
    StopFlush *f = ud;
    f->timed_out = TRUE;
    return G_SOURCE_REMOVE;
}

void ddm_web_api_stop(DdmWebApi *api, guint flush_ms)
{
    if (api == NULL || api->stopping)
        return;
    api->stopping = TRUE;
    StopFlush flush = {0, FALSE};
    g_autoptr(GPtrArray) answered = g_ptr_array_new_with_free_func(g_object_unref);
    g_autoptr(GArray) handlers = g_array_new(FALSE, FALSE, sizeof(gulong));
    for (GList *l = api->commands; l != NULL; l = l->next) {
        RunningCommand *rc = l->data;
        rc->api = NULL; /* its done callback still comes, from the registry's teardown */
        if (rc->msg != NULL) {
            ddm_http_reply_error(rc->msg, SOUP_STATUS_SERVICE_UNAVAILABLE, "the server stops");
            /* the connection closes after it: nothing else is served now */
            soup_message_headers_replace(soup_server_message_get_response_headers(rc->msg),
                                         "Connection", "close");
            /* answered: its done callback, later, must not answer again
             * (libsoup has let the message go by then) */
            g_signal_handler_disconnect(rc->msg, rc->finished_id);
            gulong id = g_signal_connect(rc->msg, "finished",
                                         G_CALLBACK(on_stop_answer_finished), &flush);
            g_array_append_val(handlers, id);
            g_ptr_array_add(answered, g_steal_pointer(&rc->msg));
            flush.unwritten++;
            soup_server_message_unpause(g_ptr_array_index(answered, answered->len - 1));
        }
        if (rc->gone_watch != NULL) {
            g_source_destroy(rc->gone_watch);
            g_clear_pointer(&rc->gone_watch, g_source_unref);
        }
    }
    g_clear_pointer(&api->commands, g_list_free);
    api->n_commands = 0;
    /* libsoup writes an unpaused answer from the loop: let it run until
     * they are written (a few rounds: a 503 fits any socket buffer) or
     * @flush_ms passed (a client that reads nothing), as the daemon's
     * stop lets it run for the VMs' answers. */
    if (flush.unwritten > 0 && flush_ms > 0) {
        guint timer = g_timeout_add(flush_ms, on_stop_flush_timeout, &flush);
        while (flush.unwritten > 0 && !flush.timed_out)
            g_main_context_iteration(NULL, TRUE);
        if (!flush.timed_out)
            g_source_remove(timer);
        if (flush.unwritten > 0)
            g_message("web: %u command answer(s) not written within %u ms as the server stops",
                      flush.unwritten, flush_ms);
    }
    for (guint i = 0; i < answered->len; i++)
        g_signal_handler_disconnect(g_ptr_array_index(answered, i),
                                    g_array_index(handlers, gulong, i));
}

void ddm_web_api_free(DdmWebApi *api)
{
    if (api == NULL)
        return;
    ddm_web_api_stop(api, 0);
    ddm_view_interest_free(api->interest);
    g_free(api);
}
