/* SPDX-License-Identifier: Apache-2.0
 *
 * The live stream of view changes as server-sent events (stream.h): the
 * clients, their queues, the views listener that fans changes out to
 * them, the ping.
 *
 * Memory: a StreamClient lives in st->clients from start until its
 * message finishes (the peer went, or we dropped it); it holds a
 * reference on its message. An event's text is made once per change and
 * shared by every client that wants it.
 */
#include "web/stream.h"

#include <string.h>

#include "core/wire/ctlproto.h" /* ddm_ctl_encode: json-glib's text, made strict */
#include "web/http_server.h"
#include "web/view_json.h"

typedef struct StreamClient {
    DdmWebStream *st;
    SoupServerMessage *msg;
    char *vm;            /* NULL: global views only */
    guint watch_id;      /* the VM's views, or the VM list ("vms") without a VM */
    gsize queued;        /* bytes appended and not yet written */
    gulong wrote_id, finished_id;
    gboolean gone;
} StreamClient;

struct DdmWebStream {
    DdmViews *views;
    GList *clients;      /* StreamClient* */
    guint n_clients;
    guint listener;
    guint ping;
};

static void client_free(StreamClient *c)
{
    if (c->wrote_id != 0)
        g_signal_handler_disconnect(c->msg, c->wrote_id);
    if (c->finished_id != 0)
        g_signal_handler_disconnect(c->msg, c->finished_id);
    if (c->watch_id != 0)
        ddm_views_unwatch(c->st->views, c->watch_id);
    g_object_unref(c->msg);
    g_free(c->vm);
    g_free(c);
}

static void client_remove(StreamClient *c)
{
    DdmWebStream *st = c->st;
    st->clients = g_list_remove(st->clients, c);
    st->n_clients--;
    client_free(c);
}

static void on_wrote(SoupServerMessage *msg, guint chunk_size, gpointer ud)
{
    StreamClient *c = ud;
    c->queued = chunk_size <= c->queued ? c->queued - chunk_size : 0;
}

static void on_finished(SoupServerMessage *msg, gpointer ud)
{
    StreamClient *c = ud;
    g_debug("web: a stream client went away");
    client_remove(c);
}

/* Drop a client that does not read: close its connection under libsoup. */
static void client_drop(StreamClient *c, const char *why)
{
    g_message("web: dropping a stream client (%s; %zu bytes queued)", why, c->queued);
    SoupServerMessage *msg = g_object_ref(c->msg);
    client_remove(c); /* disconnects our handlers: "finished" no longer reaches us */
    GIOStream *io = soup_server_message_steal_connection(msg);
    if (io != NULL) {
        g_io_stream_close(io, NULL, NULL);
        g_object_unref(io);
    }
    g_object_unref(msg);
}

/* Queue @text (@len bytes, shared) to @c. FALSE if @c was dropped. */
static gboolean client_send(StreamClient *c, GBytes *text)
{
    gsize len = g_bytes_get_size(text);
    if (c->queued + len > DDM_WEB_STREAM_MAX_QUEUE) {
        client_drop(c, "it does not read");
        return FALSE;
    }
    SoupMessageBody *body = soup_server_message_get_response_body(c->msg);
    soup_message_body_append_bytes(body, text);
    c->queued += len;
    soup_server_message_unpause(c->msg);
    return TRUE;
}

static gboolean client_wants(const StreamClient *c, ddm_view *v)
{
    const char *key = ddm_view_vm_key(v);
    return key == NULL || (c->vm != NULL && strcmp(c->vm, key) == 0);
}

/* "data: {...}\n\n" for @change of @v. (transfer full) */
static GBytes *event_text(ddm_view *v, DdmViewChange change)
{
    const char *event = change == DDM_VIEW_ADDED     ? "added"
                        : change == DDM_VIEW_CHANGED ? "changed"
                                                     : "removed";
    JsonObject *o = json_object_new();
    json_object_set_int_member(o, "schema", DDM_WEB_API_SCHEMA);
    json_object_set_string_member(o, "event", event);
    if (ddm_view_vm_key(v) != NULL)
        json_object_set_string_member(o, "vm", ddm_view_vm_key(v));
    else
        json_object_set_null_member(o, "vm");
    json_object_set_string_member(o, "name", ddm_view_name(v));
    json_object_set_int_member(o, "version", (gint64)ddm_view_version(v));
    g_autofree char *path = ddm_web_view_path(v);
    json_object_set_string_member(o, "url", path);
    /* A JSON document of many MiB is not even built at every change. */
    if (change != DDM_VIEW_REMOVED && ddm_web_view_json_over(v, DDM_WEB_STREAM_MAX_EVENT))
        json_object_set_boolean_member(o, "too_big", TRUE);
    else if (change != DDM_VIEW_REMOVED)
        json_object_set_member(o, "view", ddm_web_view_json(v, FALSE));
    g_autoptr(JsonNode) root = json_node_init_object(json_node_alloc(), o);
    json_object_unref(o);
    gsize len = 0;
    g_autofree char *json = ddm_ctl_encode(root, &len);
    len--; /* its "\n" */
    if (len > DDM_WEB_STREAM_MAX_EVENT) {
        /* Too big to push to every client at every change: say that it
         * changed; a client that shows it GETs "url". */
        json_object_remove_member(o, "view");
        json_object_set_boolean_member(o, "too_big", TRUE);
        g_free(json);
        json = ddm_ctl_encode(root, &len);
        len--;
    }
    GString *s = g_string_sized_new(len + 10);
    g_string_append(s, "data: ");
    g_string_append_len(s, json, (gssize)len); /* JSON has no raw newline */
    g_string_append(s, "\n\n");
    gsize n = s->len;
    return g_bytes_new_take(g_string_free(s, FALSE), n);
}

static void on_view_change(ddm_view *v, DdmViewChange change, gpointer ud)
{
    DdmWebStream *st = ud;
    g_autoptr(GBytes) text = NULL;
    for (GList *l = st->clients; l != NULL;) {
        StreamClient *c = l->data;
        l = l->next; /* @c may be dropped */
        if (!client_wants(c, v))
            continue;
        if (text == NULL)
            text = event_text(v, change);
        client_send(c, text);
    }
}

static gboolean ping_cb(gpointer ud)
{
    DdmWebStream *st = ud;
    g_autoptr(GBytes) ping = g_bytes_new_static(": ping\n\n", 8);
    for (GList *l = st->clients; l != NULL;) {
        StreamClient *c = l->data;
        l = l->next;
        client_send(c, ping);
    }
    return G_SOURCE_CONTINUE;
}

DdmWebStream *ddm_web_stream_new(DdmViews *views)
{
    DdmWebStream *st = g_new0(DdmWebStream, 1);
    st->views = views;
    st->listener = ddm_views_add_listener(views, on_view_change, st);
    st->ping = g_timeout_add_seconds(DDM_WEB_STREAM_PING_S, ping_cb, st);
    return st;
}

void ddm_web_stream_free(DdmWebStream *st)
{
    if (st == NULL)
        return;
    ddm_views_remove_listener(st->views, st->listener);
    g_source_remove(st->ping);
    while (st->clients != NULL)
        client_drop(st->clients->data, "the server stops");
    g_free(st);
}

guint ddm_web_stream_n_clients(const DdmWebStream *st)
{
    return st->n_clients;
}

void ddm_web_stream_start(DdmWebStream *st, SoupServerMessage *msg, const char *vm_key)
{
    if (st->n_clients >= DDM_WEB_STREAM_MAX_CLIENTS) {
        soup_message_headers_replace(soup_server_message_get_response_headers(msg), "Retry-After",
                                     "10");
        ddm_http_reply_error(msg, SOUP_STATUS_SERVICE_UNAVAILABLE,
                             "%d live streams already; try again later",
                             DDM_WEB_STREAM_MAX_CLIENTS);
        return;
    }
    StreamClient *c = g_new0(StreamClient, 1);
    c->st = st;
    c->msg = g_object_ref(msg);
    c->vm = g_strdup(vm_key);
    if (vm_key != NULL)
        c->watch_id = ddm_views_watch(st->views, NULL, vm_key);
    else /* the overview shows the VM list: plugins keep its figures fresh while it is watched */
        c->watch_id = ddm_views_watch(st->views, "vms", NULL);
    st->clients = g_list_prepend(st->clients, c);
    st->n_clients++;

    SoupMessageHeaders *h = soup_server_message_get_response_headers(msg);
    soup_message_headers_set_encoding(h, SOUP_ENCODING_CHUNKED);
    soup_message_headers_set_content_type(h, "text/event-stream", NULL);
    soup_message_headers_replace(h, "X-Accel-Buffering", "no");
    soup_server_message_set_status(msg, SOUP_STATUS_OK, NULL);
    soup_message_body_set_accumulate(soup_server_message_get_response_body(msg), FALSE);
    c->wrote_id = g_signal_connect(msg, "wrote-body-data", G_CALLBACK(on_wrote), c);
    c->finished_id = g_signal_connect(msg, "finished", G_CALLBACK(on_finished), c);

    g_autoptr(GBytes) hello = g_bytes_new_static("retry: 2000\n\n", 13);
    if (!client_send(c, hello))
        return;
    /* What exists now, as "added" events, so the client starts complete. */
    g_autoptr(GPtrArray) all = ddm_views_list_made(st->views); /* the watch made what it matches */
    for (guint i = 0; i < all->len; i++) {
        ddm_view *v = all->pdata[i];
        if (!client_wants(c, v))
            continue;
        g_autoptr(GBytes) text = event_text(v, DDM_VIEW_ADDED);
        if (!client_send(c, text))
            return;
    }
}
