/* SPDX-License-Identifier: Apache-2.0
 *
 * A non-blocking control-socket connection: a socket, an output buffer
 * written when the socket can take it, the line framer of ctlproto.h, and
 * a free that is safe from inside its own callbacks. See conn.h.
 */
#include <build-config.h>

#include "tui/conn.h"

#include <errno.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <glib-unix.h>

struct TuiConn {
    int fd;
    guint source;
    GString *out;
    DdmLineFramer *in;
    TuiConnMessageFn on_message;
    TuiConnClosedFn on_closed;
    gpointer ud;
    gpointer data;
    GDestroyNotify data_destroy;
    gboolean dispatching;
    gboolean free_pending;
    gboolean closed;
};

static void really_free(TuiConn *c)
{
    if (c->source != 0)
        g_source_remove(c->source);
    if (c->fd >= 0)
        close(c->fd);
    if (c->data_destroy != NULL && c->data != NULL)
        c->data_destroy(c->data);
    g_string_free(c->out, TRUE);
    ddm_line_framer_free(c->in);
    g_free(c);
}

void tui_conn_free(TuiConn *c)
{
    if (c == NULL)
        return;
    if (c->dispatching)
        c->free_pending = TRUE;
    else
        really_free(c);
}

void tui_conn_set_data(TuiConn *c, gpointer data, GDestroyNotify destroy)
{
    if (c->data_destroy != NULL && c->data != NULL)
        c->data_destroy(c->data);
    c->data = data;
    c->data_destroy = destroy;
}

gpointer tui_conn_get_data(TuiConn *c)
{
    return c->data;
}

static void close_with(TuiConn *c, const char *why)
{
    if (c->closed)
        return;
    c->closed = TRUE;
    if (c->source != 0) {
        g_source_remove(c->source);
        c->source = 0;
    }
    if (c->on_closed != NULL && !c->free_pending)
        c->on_closed(c, why, c->ud);
}

static gboolean flush_out(TuiConn *c)
{
    while (c->out->len > 0) {
        ssize_t n = send(c->fd, c->out->str, c->out->len, MSG_NOSIGNAL | MSG_DONTWAIT);
        if (n < 0) {
            if (errno == EINTR)
                continue;
            return errno == EAGAIN || errno == EWOULDBLOCK;
        }
        g_string_erase(c->out, 0, n);
    }
    return TRUE;
}

static gboolean on_io(gint fd, GIOCondition cond, gpointer data);

static void watch_fd(TuiConn *c)
{
    GIOCondition want = G_IO_IN | G_IO_HUP | G_IO_ERR | (c->out->len > 0 ? G_IO_OUT : 0);
    if (c->source != 0)
        g_source_remove(c->source);
    c->source = g_unix_fd_add(c->fd, want, on_io, c);
}

static gboolean on_io(gint fd, GIOCondition cond, gpointer data)
{
    TuiConn *c = data;
    char buf[65536];
    gboolean eof = FALSE;
    const char *why = NULL;
    gsize had_out = c->out->len;

    if (c->out->len > 0 && !flush_out(c))
        why = "the server went away";
    for (int rounds = 0; why == NULL && rounds < 64; rounds++) {
        ssize_t n = recv(fd, buf, sizeof buf, MSG_DONTWAIT);
        if (n > 0) {
            ddm_line_framer_push(c->in, buf, (gsize)n);
            continue;
        }
        if (n == 0)
            eof = TRUE;
        else if (errno == EINTR)
            continue;
        else if (errno != EAGAIN && errno != EWOULDBLOCK)
            why = "the server went away";
        break;
    }
    c->dispatching = TRUE;
    for (;;) {
        gsize len = 0;
        gboolean overflow = FALSE;
        g_autofree char *line = ddm_line_framer_next(c->in, &len, &overflow);
        if (overflow) {
            why = "a message from the server was too long";
            break;
        }
        if (line == NULL)
            break;
        g_autoptr(GError) error = NULL;
        JsonNode *msg = ddm_ctl_parse_object(line, len, &error);
        if (msg == NULL) {
            why = "garbage from the server";
            break;
        }
        if (c->on_message != NULL)
            c->on_message(c, msg, c->ud);
        json_node_unref(msg);
        if (c->free_pending || c->closed)
            break;
    }
    c->dispatching = FALSE;
    if (c->free_pending) {
        c->source = 0; /* returning REMOVE destroys it */
        really_free(c);
        return G_SOURCE_REMOVE;
    }
    if (c->closed)
        return G_SOURCE_REMOVE; /* close_with removed it */
    if (why == NULL && (eof || (cond & (G_IO_HUP | G_IO_ERR)) != 0))
        why = "the server closed the connection";
    if (why != NULL) {
        c->dispatching = TRUE;
        close_with(c, why);
        c->dispatching = FALSE;
        if (c->free_pending)
            really_free(c);
        return G_SOURCE_REMOVE;
    }
    if ((had_out > 0) != (c->out->len > 0)) {
        watch_fd(c); /* OUT no longer (or now) wanted */
        return G_SOURCE_REMOVE;
    }
    return G_SOURCE_CONTINUE;
}

TuiConn *tui_conn_new(const char *socket_path, const DdmCtlRequest *req, TuiConnMessageFn on_message,
                      TuiConnClosedFn on_closed, gpointer ud, GError **error)
{
    struct sockaddr_un addr = {0};
    addr.sun_family = AF_UNIX;
    if (strlen(socket_path) >= sizeof(addr.sun_path)) {
        g_set_error(error, G_IO_ERROR, G_IO_ERROR_FILENAME_TOO_LONG, "socket path too long");
        return NULL;
    }
    strcpy(addr.sun_path, socket_path);
    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    if (fd < 0 || connect(fd, (struct sockaddr *)&addr, sizeof(addr)) != 0) {
        int e = errno;
        g_set_error(error, G_IO_ERROR, g_io_error_from_errno(e), "cannot connect to %s: %s", socket_path,
                    g_strerror(e));
        if (fd >= 0)
            close(fd);
        return NULL;
    }
    TuiConn *c = g_new0(TuiConn, 1);
    c->fd = fd;
    c->out = g_string_new(NULL);
    c->in = ddm_line_framer_new(DDM_CTL_MAX_RESPONSE);
    c->on_message = on_message;
    c->on_closed = on_closed;
    c->ud = ud;
    JsonNode *node = ddm_ctl_request_to_json(req);
    gsize len = 0;
    g_autofree char *line = ddm_ctl_encode(node, &len);
    json_node_unref(node);
    g_string_append_len(c->out, line, (gssize)len);
    if (!flush_out(c)) {
        g_set_error(error, G_IO_ERROR, G_IO_ERROR_BROKEN_PIPE, "the server went away");
        really_free(c);
        return NULL;
    }
    watch_fd(c);
    return c;
}
