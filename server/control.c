/* SPDX-License-Identifier: Apache-2.0
 *
 * Control server connections: accepting clients on the UNIX socket, their
 * input line buffers and bounded output queues, flushing, closing and
 * reaping, handing each parsed request line to its op (control_ops.c),
 * fanning view changes out to watching clients, and which replies ask
 * for a malloc_trim (client_send_reply). See control.h; the shared
 * structs and their memory rules are in control-private.h.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE 1 /* struct ucred */
#endif
#include <build-config.h>

#include "server/control-private.h"

#include <errno.h>
#include <sys/socket.h>
#include <sys/types.h>
#include <unistd.h>

#include <glib-unix.h>

#include "core/loop/accept.h"
#include "core/loop/heaptrim.h"
#include "core/pluginhost/registry.h"
#include "core/session/ratelog.h"
#include "core/views/json_blob.h"

/* A JSON blob's data goes to every client unasked, base64 on one line
 * (core/views/json_blob.h): that line must fit a client's queue. */
G_STATIC_ASSERT((DDM_JSON_BLOB_MAX + 2) / 3 * 4 + 1024 * 1024 < DDM_CTL_MAX_QUEUE);

#define READ_CHUNK 65536
/* A reply this long (the VM list of ~300 VMs and more) was built from
 * as many bytes again of JSON nodes and strings, freed among the server's
 * long-lived blocks once it is sent: their pages stay resident until a
 * malloc_trim gives them back. The monitor's round asks for one every
 * 10 s; a large reply to a request asks too, so a server answering
 * `ddmon vms` gives the pages back soon (core/loop/heaptrim.h says when:
 * a burst or a stream of requests costs one trim per gap at most).
 * View-change events to watchers (each carries a whole view, republished
 * ~10 times a second when a large view changes) never ask (a watch's first
 * "added" events, the reply to its request, do): before the gap they made
 * the trims run several times a second (review rM 2), and with it they
 * would still add one every gap for as long as a client watches a large
 * view. A trim costs a few ms with 1,000 VMs (issue 16, doc/memory.md). */
#define DDM_CTL_TRIM_BYTES (64 * 1024)
#define DDM_CTL_READ_PAUSE (1024 * 1024) /* stop reading requests above this backlog */

static void client_update_watch(Client *c);
static void client_close(Client *c, const char *why);
static void client_process(Client *c);
static void resume_cb(DdmTimer *t, gpointer data);

/* ------------------------------------------------------------- output */

static gsize client_queued(const Client *c)
{
    return c->out->len - c->out_pos;
}

/* Write what the socket takes now. FALSE if the client broke. */
static gboolean client_flush(Client *c)
{
    while (client_queued(c) > 0) {
        ssize_t n = send(c->fd, c->out->data + c->out_pos, client_queued(c),
                         MSG_NOSIGNAL | MSG_DONTWAIT);
        if (n < 0) {
            if (errno == EINTR)
                continue;
            if (errno == EAGAIN || errno == EWOULDBLOCK)
                break;
            g_debug("control: client %" G_GUINT64_FORMAT ": write: %s", c->serial,
                    g_strerror(errno));
            return FALSE;
        }
        c->out_pos += (gsize)n;
    }
    if (c->out_pos == c->out->len) {
        g_byte_array_set_size(c->out, 0);
        c->out_pos = 0;
    } else if (c->out_pos > 1024 * 1024) {
        g_byte_array_remove_range(c->out, 0, (guint)c->out_pos);
        c->out_pos = 0;
    }
    return TRUE;
}

static void client_send_line(Client *c, const char *line, gsize len)
{
    if (c->dead)
        return;
    if (client_queued(c) + len > DDM_CTL_MAX_QUEUE) {
        g_message("control: dropping client %" G_GUINT64_FORMAT
                  ": it does not read (%" G_GSIZE_FORMAT " bytes queued, cap %d)",
                  c->serial, client_queued(c), DDM_CTL_MAX_QUEUE);
        client_close(c, NULL);
        return;
    }
    gboolean was_empty = client_queued(c) == 0;
    g_byte_array_append(c->out, (const guint8 *)line, (guint)len);
    if (was_empty && !client_flush(c)) {
        client_close(c, NULL);
        return;
    }
    client_update_watch(c);
}

/* A reply to @c's request: a large one asks for a trim (view-change events
 * go straight to client_send_line and never do; DDM_CTL_TRIM_BYTES says
 * why). */
static void client_send_reply(Client *c, const char *line, gsize len)
{
    if (!c->dead && len >= DDM_CTL_TRIM_BYTES)
        ddm_heap_trim_soon();
    client_send_line(c, line, len);
}

/* Send @node (taken over). */
void ddm_control_send(Client *c, JsonNode *node)
{
    gsize len = 0;
    g_autofree char *line = ddm_ctl_encode(node, &len);
    json_node_unref(node);
    client_send_reply(c, line, len);
}

/* Send @len bytes of @line, one whole line ending in "\n" (copied). */
void ddm_control_send_text(Client *c, const char *line, gsize len)
{
    client_send_reply(c, line, len);
}

/* ------------------------------------------------------------ lifetime */

static void reap_dead(DdmControl *ctl)
{
    GList *l = ctl->clients;
    while (l != NULL) {
        GList *next = l->next;
        Client *c = l->data;
        if (c->dead) {
            ctl->clients = g_list_delete_link(ctl->clients, l);
            ddm_line_framer_free(c->in);
            g_byte_array_unref(c->out);
            g_free(c->watch_name);
            g_free(c->watch_vm);
            g_free(c);
        }
        l = next;
    }
}

static void reap_later(DdmTimer *t, gpointer data)
{
    (void)t;
    reap_dead(data);
}

static void client_close(Client *c, const char *why)
{
    if (c->dead)
        return;
    DdmControl *ctl = c->ctl;
    c->dead = TRUE;
    ctl->n_live--;
    if (why != NULL)
        g_debug("control: client %" G_GUINT64_FORMAT " closed: %s", c->serial, why);
    ddm_watch_remove(c->source);
    c->source = NULL;
    ddm_timer_cancel(&c->process_timer);
    if (c->watching) {
        ddm_views_unwatch(ddm_daemon_views(ctl->daemon), c->watch_id);
        c->watching = FALSE;
    }
    if (c->cmd != NULL) {
        /* Nobody waits for the answer: long commands may stop early. */
        ddm_registry_cancel_commands_of(ddm_daemon_registry(ctl->daemon), c->cmd);
        c->cmd->client = NULL;
        c->cmd = NULL;
    }
    if (c->fd >= 0) {
        close(c->fd);
        c->fd = -1;
    }
    if (!ddm_timer_armed(&ctl->reap_timer)) {
        ddm_timer_init(&ctl->reap_timer, reap_later, ctl);
        ddm_timer_arm(&ctl->reap_timer, 0);
    }
}

static gboolean on_client_io(gint fd, GIOCondition cond, gpointer data);

static void client_update_watch(Client *c)
{
    if (c->dead)
        return;
    GIOCondition want = 0;
    /* Backpressure: a client that sends requests faster than it reads the
     * answers is not read from until it catches up. Watchers, whose events
     * the server produces by itself, are dropped at DDM_CTL_MAX_QUEUE. */
    if (!c->eof && c->cmd == NULL && !c->close_after_flush &&
        client_queued(c) < DDM_CTL_READ_PAUSE)
        want |= G_IO_IN;
    if (client_queued(c) > 0)
        want |= G_IO_OUT;
    if (c->close_after_flush && client_queued(c) == 0) {
        client_close(c, "done");
        return;
    }
    if (c->eof && client_queued(c) == 0 && c->cmd == NULL) {
        client_close(c, "end of input");
        return;
    }
    /* Without G_IO_IN the watch still wants HUP/ERR, so a client that leaves
     * while its command runs is noticed. */
    if (c->source != NULL && ddm_watch_get_cond(c->source) == (want | G_IO_HUP | G_IO_ERR))
        return;
    if (c->source != NULL)
        ddm_watch_set_cond(c->source, want | G_IO_HUP | G_IO_ERR);
    else
        c->source = ddm_watch_add(c->fd, want | G_IO_HUP | G_IO_ERR, on_client_io, c);
}

/* ------------------------------------------------------------ requests */

static void handle_line(Client *c, const char *line, gsize len)
{
    DdmCtlRequest req;
    g_autoptr(GError) error = NULL;
    if (!ddm_ctl_request_parse(line, len, &req, &error)) {
        g_debug("control: client %" G_GUINT64_FORMAT ": bad request: %s", c->serial,
                error->message);
        ddm_control_send(c, ddm_ctl_error_new(DDM_EXIT_USAGE, "bad request: %s", error->message));
        return;
    }
    g_debug("control: client %" G_GUINT64_FORMAT ": op %s", c->serial, ddm_ctl_op_name(req.op));
    DdmControlOpFn op = ddm_control_op_find(req.op);
    if (op != NULL)
        op(c, &req);
    ddm_ctl_request_clear(&req);
}

/* Answer buffered requests until one is in flight or none is left. */
static void client_process(Client *c)
{
    while (!c->dead && c->cmd == NULL && !c->close_after_flush &&
           client_queued(c) < DDM_CTL_READ_PAUSE) {
        gsize len = 0;
        gboolean overflow = FALSE;
        g_autofree char *line = ddm_line_framer_next(c->in, &len, &overflow);
        if (overflow) {
            g_message("control: client %" G_GUINT64_FORMAT ": request longer than %d bytes",
                      c->serial, DDM_CTL_MAX_REQUEST);
            ddm_control_send(c, ddm_ctl_error_new(DDM_EXIT_USAGE,
                                                  "request line longer than %d bytes",
                                                  DDM_CTL_MAX_REQUEST));
            c->close_after_flush = TRUE;
            break;
        }
        if (line == NULL)
            break;
        handle_line(c, line, len);
    }
    client_update_watch(c);
}

static void resume_cb(DdmTimer *t, gpointer data)
{
    (void)t;
    client_process(data);
}

void ddm_control_resume(Client *c)
{
    if (!c->dead && !ddm_timer_armed(&c->process_timer)) {
        ddm_timer_init(&c->process_timer, resume_cb, c);
        ddm_timer_arm(&c->process_timer, 0);
    }
}

static gboolean on_client_io(gint fd, GIOCondition cond, gpointer data)
{
    Client *c = data;
    if (c->dead)
        return G_SOURCE_REMOVE;
    if (cond & G_IO_OUT) {
        if (!client_flush(c)) {
            client_close(c, "write failed");
            return G_SOURCE_REMOVE;
        }
        /* Caught up: answer requests held back by the backpressure. */
        if (!(cond & G_IO_IN) && ddm_line_framer_pending(c->in) > 0)
            client_process(c);
        else
            client_update_watch(c);
        if (c->dead) {
            return G_SOURCE_REMOVE; /* client_close removed the watch */
        }
    }
    if ((cond & G_IO_IN) || ((cond & (G_IO_HUP | G_IO_ERR)) && !c->eof)) {
        guint8 buf[READ_CHUNK];
        ssize_t n = recv(c->fd, buf, sizeof(buf), MSG_DONTWAIT);
        if (n > 0) {
            ddm_line_framer_push(c->in, buf, (gsize)n);
        } else if (n == 0 || (errno != EAGAIN && errno != EINTR && errno != EWOULDBLOCK)) {
            c->eof = TRUE;
            if (n < 0 || c->watching || c->cmd != NULL) {
                /* Nobody to answer: a watcher or an impatient client left. */
                client_close(c, n < 0 ? g_strerror(errno) : "client left");
                return G_SOURCE_REMOVE;
            }
        }
        client_process(c);
    }
    if (c->dead) {
        return G_SOURCE_REMOVE; /* client_close removed the watch */
    }
    /* client_update_watch changed this watch's conditions in place. */
    return G_SOURCE_CONTINUE;
}

/* --------------------------------------------------------------- views */

static void on_view_change(ddm_view *v, DdmViewChange change, gpointer ud)
{
    DdmControl *ctl = ud;
    char *lines[2] = {NULL, NULL}; /* without / with blob data, built lazily */
    gsize lens[2] = {0, 0};
    for (GList *l = ctl->clients; l != NULL; l = l->next) {
        Client *c = l->data;
        if (c->dead || !c->watching || !ddm_control_watch_matches(c, v))
            continue;
        int which = c->watch_blobs ? 1 : 0;
        if (lines[which] == NULL) {
            JsonNode *ev = ddm_control_change_event(v, change, which == 1);
            lines[which] = ddm_ctl_encode(ev, &lens[which]);
            json_node_unref(ev);
        }
        client_send_line(c, lines[which], lens[which]);
    }
    g_free(lines[0]);
    g_free(lines[1]);
}

/* -------------------------------------------------------------- accept */

/* A client connected (core/loop/listener.h: DDM_ACCEPT_BATCH a wake-up). */
static void on_accept(int cfd, const struct sockaddr *addr, socklen_t addrlen, gpointer data)
{
    DdmControl *ctl = data;
    (void)addr;
    (void)addrlen;
    struct ucred cred;
    socklen_t cl = sizeof(cred);
    if (getsockopt(cfd, SOL_SOCKET, SO_PEERCRED, &cred, &cl) != 0 || cred.uid != geteuid()) {
        g_warning("control: refused a client of another user (uid %d)",
                  (int)(cl == sizeof(cred) ? (int)cred.uid : -1));
        close(cfd);
        return;
    }
    if (ctl->n_live >= DDM_CTL_MAX_CLIENTS) {
        g_message("control: refused a client: %d clients connected already",
                  DDM_CTL_MAX_CLIENTS);
        /* One line saying why (the client shows it); the socket is
         * fresh, so it fits, and a short write is simply dropped. */
        g_autoptr(JsonNode) err = ddm_ctl_error_new(
            DDM_EXIT_FAILED, "server busy: %d clients connected", DDM_CTL_MAX_CLIENTS);
        gsize len = 0;
        g_autofree char *line = ddm_ctl_encode(err, &len);
        (void)!send(cfd, line, len, MSG_NOSIGNAL | MSG_DONTWAIT);
        close(cfd);
        return;
    }
    Client *c = g_new0(Client, 1);
    c->ctl = ctl;
    c->serial = ++ctl->next_serial;
    c->fd = cfd;
    c->in = ddm_line_framer_new(DDM_CTL_MAX_REQUEST);
    c->out = g_byte_array_new();
    ctl->clients = g_list_prepend(ctl->clients, c);
    ctl->n_live++;
    g_debug("control: client %" G_GUINT64_FORMAT " connected (pid %d)", c->serial,
            (int)cred.pid);
    client_update_watch(c);
}

/* Shed (out of descriptors) or an accept error: one rate-limited line. */
static void on_accept_trouble(DdmAcceptResult r, int err, guint paused_ms, gpointer data)
{
    (void)data;
    ddm_ratelog_accept("control", "on the control socket", r, err, paused_ms);
}

static const DdmListenerOps accept_ops = {on_accept, on_accept_trouble};

DdmControl *ddm_control_new(DdmDaemon *daemon, int listen_fd, DdmControlStopFn stop, gpointer ud)
{
    g_return_val_if_fail(daemon != NULL && listen_fd >= 0, NULL);
    DdmControl *ctl = g_new0(DdmControl, 1);
    ctl->daemon = daemon;
    ddm_control_ops_init(ctl);
    ctl->listen_fd = listen_fd;
    ctl->stop = stop;
    ctl->stop_ud = ud;
    ctl->accepting = ddm_listener_new(listen_fd, &accept_ops, ctl);
    ctl->listener = ddm_views_add_listener(ddm_daemon_views(daemon), on_view_change, ctl);
    return ctl;
}

void ddm_control_stop_accepting(DdmControl *ctl)
{
    if (ctl == NULL)
        return;
    ddm_listener_free(ctl->accepting); /* before the close (core/loop/listener.h) */
    ctl->accepting = NULL;
    if (ctl->listen_fd >= 0)
        close(ctl->listen_fd);
    ctl->listen_fd = -1;
}

void ddm_control_free(DdmControl *ctl)
{
    if (ctl == NULL)
        return;
    ddm_control_stop_accepting(ctl);
    ddm_views_remove_listener(ddm_daemon_views(ctl->daemon), ctl->listener);
    ddm_control_ops_free(ctl);
    for (GList *l = ctl->clients; l != NULL; l = l->next) {
        Client *c = l->data;
        if (!c->dead && client_queued(c) > 0)
            (void)client_flush(c); /* best effort, never blocks */
        client_close(c, "server stopping");
    }
    ddm_timer_cancel(&ctl->reap_timer);
    reap_dead(ctl);
    ddm_timer_cancel(&ctl->stop_timer);
    g_free(ctl);
}

guint64 ddm_control_n_delays_capped(const DdmControl *ctl)
{
    g_return_val_if_fail(ctl != NULL, 0);
    return ctl->n_delays_capped;
}

guint ddm_control_n_clients(const DdmControl *ctl)
{
    return ctl->n_live;
}