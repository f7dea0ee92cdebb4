/* SPDX-License-Identifier: Apache-2.0
 *
 * Non-blocking adb server conversations and update streams (adb_conn.h).
 * A conversation: connect (TCP or UNIX, non-blocking) -> for each request:
 * write "%04x" + text, read OKAY or FAIL -> hand over the fd. The status
 * reader keeps at most a FAIL frame (4 + 4 + 0xFFFF bytes) buffered.
 * A conversation has one core/loop watch for its whole life (its conditions
 * change from OUT to IN and back) and one timer; a stream has one watch.
 */
#include "core/transport/adb_conn.h"

#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <glib-unix.h>

#include "core/loop/timer.h"
#include "core/loop/watch.h"
#include "core/transport/target.h"

G_DEFINE_QUARK(ddm-adb-error-quark, ddm_adb_error)

struct DdmAdbConn {
    int fd;
    DdmWatch *io_watch;       /* lives as long as the conversation */
    DdmTimer timer;           /* the timeout; at once when the socket could not be opened */
    char **requests;
    guint next_request;
    gboolean awaiting_status;
    GString *out;
    gsize out_pos;
    GByteArray *in;
    int open_errno;           /* the socket could not even be opened */
    DdmAdbConnDone done;
    gpointer ud;
};

static void conn_free(DdmAdbConn *c)
{
    ddm_watch_remove(c->io_watch);
    ddm_timer_cancel(&c->timer);
    if (c->fd >= 0)
        close(c->fd);
    g_strfreev(c->requests);
    g_string_free(c->out, TRUE);
    g_byte_array_unref(c->in);
    g_free(c);
}

static void conn_finish(DdmAdbConn *c, int code, const char *fmt, ...) G_GNUC_PRINTF(3, 4);

static void conn_finish(DdmAdbConn *c, int code, const char *fmt, ...)
{
    DdmAdbConnDone done = c->done;
    gpointer ud = c->ud;
    if (code < 0) { /* success: hand over fd and the bytes after the last OKAY */
        int fd = c->fd;
        c->fd = -1;
        GBytes *extra = g_bytes_new(c->in->data, c->in->len);
        conn_free(c);
        done(fd, extra, NULL, ud);
        g_bytes_unref(extra);
        return;
    }
    va_list ap;
    va_start(ap, fmt);
    char *msg = g_strdup_vprintf(fmt, ap);
    va_end(ap);
    GError *err = g_error_new_literal(DDM_ADB_ERROR, code, msg);
    g_free(msg);
    conn_free(c);
    done(-1, NULL, err, ud);
    g_error_free(err);
}

static gboolean on_conn_io(gint fd, GIOCondition cond, gpointer ud);

static void conn_watch(DdmAdbConn *c, GIOCondition cond)
{
    if (c->io_watch)
        ddm_watch_set_cond(c->io_watch, cond);
    else
        c->io_watch = ddm_watch_add(c->fd, cond, on_conn_io, c);
}

static void conn_next_request(DdmAdbConn *c)
{
    const char *req = c->requests[c->next_request];
    if (!req) {
        conn_finish(c, -1, NULL);
        return;
    }
    c->next_request++;
    g_string_truncate(c->out, 0);
    c->out_pos = 0;
    if (!ddm_adb_format_request(c->out, req)) {
        conn_finish(c, DDM_ADB_ERROR_PROTOCOL, "adb request too long");
        return;
    }
    c->awaiting_status = FALSE;
    conn_watch(c, G_IO_OUT);
}

/* Returns FALSE when the conversation ended (c freed). */
static gboolean conn_parse_status(DdmAdbConn *c)
{
    size_t used = 0;
    char *reason = NULL;
    switch (ddm_adb_parse_status(c->in->data, c->in->len, &used, &reason)) {
    case DDM_ADB_NEED_MORE:
        return TRUE;
    case DDM_ADB_ERR_PROTOCOL: {
        g_autofree char *head = g_strndup((const char *)c->in->data, MIN(c->in->len, 8));
        g_autofree char *shown = g_strescape(head, NULL);
        g_autofree char *req = g_strdup(c->requests[c->next_request - 1]);
        conn_finish(c, DDM_ADB_ERROR_PROTOCOL, "adb server answered '%s' to %s: neither OKAY nor FAIL",
                    shown, req);
        return FALSE;
    }
    case DDM_ADB_FAIL:
        conn_finish(c, DDM_ADB_ERROR_FAIL, "%s", reason);
        g_free(reason);
        return FALSE;
    case DDM_ADB_OKAY:
        g_byte_array_remove_range(c->in, 0, (guint)used);
        conn_next_request(c);
        return FALSE; /* a new watch (or the end) took over */
    }
    return TRUE;
}

/* Always G_SOURCE_CONTINUE: the watch ends with the conversation (conn_free). */
static gboolean on_conn_io(gint fd, GIOCondition cond, gpointer ud)
{
    DdmAdbConn *c = ud;
    (void)cond;
    if (!c->awaiting_status) {
        /* First write also completes the non-blocking connect. */
        int soerr = 0;
        socklen_t sl = sizeof(soerr);
        if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &soerr, &sl) == 0 && soerr != 0) {
            conn_finish(c, soerr == ECONNREFUSED || soerr == ENOENT ? DDM_ADB_ERROR_NO_SERVER : DDM_ADB_ERROR_IO,
                        "cannot reach the adb server: %s", g_strerror(soerr));
            return G_SOURCE_CONTINUE;
        }
        while (c->out_pos < c->out->len) {
            ssize_t n = write(fd, c->out->str + c->out_pos, c->out->len - c->out_pos);
            if (n > 0) {
                c->out_pos += (gsize)n;
            } else if (n < 0 && errno == EINTR) {
                continue;
            } else if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
                return G_SOURCE_CONTINUE;
            } else {
                conn_finish(c, errno == ECONNREFUSED ? DDM_ADB_ERROR_NO_SERVER : DDM_ADB_ERROR_IO,
                            "writing to the adb server: %s", g_strerror(errno));
                return G_SOURCE_CONTINUE;
            }
        }
        /* The server answers a request only after it has it all, so
         * nothing can be buffered yet: wait for the status. */
        c->awaiting_status = TRUE;
        conn_watch(c, G_IO_IN);
        return G_SOURCE_CONTINUE;
    }
    guint8 buf[4096];
    for (;;) {
        ssize_t n = read(fd, buf, sizeof(buf));
        if (n > 0) {
            if (c->in->len + (gsize)n > 8 + DDM_ADB_MAX_FRAME + sizeof(buf)) {
                conn_finish(c, DDM_ADB_ERROR_PROTOCOL, "adb server sent too much before its status");
                return G_SOURCE_CONTINUE;
            }
            g_byte_array_append(c->in, buf, (guint)n);
            if (!conn_parse_status(c))
                return G_SOURCE_CONTINUE;
            continue;
        }
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
            return G_SOURCE_CONTINUE;
        conn_finish(c, n == 0 ? DDM_ADB_ERROR_IO : (errno == ECONNREFUSED ? DDM_ADB_ERROR_NO_SERVER : DDM_ADB_ERROR_IO),
                    "adb server closed the connection during %s%s%s", c->requests[c->next_request - 1],
                    n < 0 ? ": " : "", n < 0 ? g_strerror(errno) : "");
        return G_SOURCE_CONTINUE;
    }
}

static void on_conn_timer(DdmTimer *t, gpointer ud)
{
    DdmAdbConn *c = ud;
    (void)t;
    if (c->open_errno) /* armed at once by open: never call back from inside open */
        conn_finish(c, DDM_ADB_ERROR_NO_SERVER, "cannot reach the adb server: %s",
                    g_strerror(c->open_errno));
    else
        conn_finish(c, DDM_ADB_ERROR_TIMEOUT, "the adb server did not answer %s in time",
                    c->next_request ? c->requests[c->next_request - 1] : "the connection");
}

static int open_socket(const DdmAdbServerAddr *addr, int *err)
{
    int fd = -1;
    if (addr->unix_path) {
        struct sockaddr_un un;
        memset(&un, 0, sizeof(un));
        un.sun_family = AF_UNIX;
        size_t n = strlen(addr->unix_path);
        if (n + (addr->abstract ? 1 : 0) >= sizeof(un.sun_path)) {
            *err = ENAMETOOLONG;
            return -1;
        }
        socklen_t len;
        if (addr->abstract) {
            memcpy(un.sun_path + 1, addr->unix_path, n);
            len = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + 1 + n);
        } else {
            memcpy(un.sun_path, addr->unix_path, n);
            len = (socklen_t)sizeof(un);
        }
        fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
        if (fd >= 0 && connect(fd, (struct sockaddr *)&un, len) < 0 && errno != EINPROGRESS && errno != EAGAIN) {
            *err = errno;
            close(fd);
            return -1;
        }
        return fd;
    }
    struct addrinfo hints, *res = NULL;
    memset(&hints, 0, sizeof(hints));
    hints.ai_socktype = SOCK_STREAM;
    /* Numeric only (adb_proto.c checks): a name lookup would block the loop. */
    hints.ai_flags = AI_NUMERICSERV | AI_NUMERICHOST;
    char port[8];
    g_snprintf(port, sizeof(port), "%u", addr->port);
    if (getaddrinfo(addr->host, port, &hints, &res) != 0 || !res) {
        *err = EHOSTUNREACH;
        return -1;
    }
    fd = socket(res->ai_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd >= 0 && connect(fd, res->ai_addr, res->ai_addrlen) < 0 && errno != EINPROGRESS) {
        *err = errno;
        close(fd);
        fd = -1;
    }
    freeaddrinfo(res);
    if (fd >= 0)
        ddm_socket_nodelay(fd); /* made non-blocking and close-on-exec above */
    return fd;
}

DdmAdbConn *ddm_adb_conn_open(const DdmAdbServerAddr *addr, const char *const *requests,
                              unsigned timeout_ms, DdmAdbConnDone done, gpointer ud)
{
    DdmAdbConn *c = g_new0(DdmAdbConn, 1);
    c->requests = g_strdupv((char **)requests);
    c->out = g_string_new(NULL);
    c->in = g_byte_array_new();
    c->done = done;
    c->ud = ud;
    int err = 0;
    c->fd = open_socket(addr, &err);
    if (c->fd < 0) {
        c->open_errno = err ? err : ECONNREFUSED;
        ddm_timer_init(&c->timer, on_conn_timer, c);
        ddm_timer_arm(&c->timer, 0); /* never call back from inside open */
        return c;
    }
    ddm_timer_init(&c->timer, on_conn_timer, c);
    ddm_timer_arm(&c->timer, timeout_ms ? timeout_ms : 5000);
    conn_next_request(c);
    return c;
}

void ddm_adb_conn_cancel(DdmAdbConn *c)
{
    if (c)
        conn_free(c);
}

/* ------------------------------------------------------------------ streams */

struct DdmAdbStream {
    int fd;
    DdmWatch *watch;
    DdmTimer initial;         /* zero-delay: frames that came with the OKAY */
    size_t max_frame;
    GByteArray *in;
    DdmAdbFrameFn on_frame;
    DdmAdbClosedFn on_closed;
    gpointer ud;
    gboolean closed;
};

static void stream_closed(DdmAdbStream *s, const char *reason)
{
    if (s->closed)
        return;
    s->closed = TRUE;
    ddm_watch_remove(s->watch);
    s->watch = NULL;
    s->on_closed(reason, s->ud);
}

/* Deliver complete frames; FALSE if the stream closed. */
static gboolean stream_parse(DdmAdbStream *s)
{
    size_t pos = 0;
    while (!s->closed) {
        size_t used, plen;
        const uint8_t *p;
        DdmAdbFrameResult r = ddm_adb_next_frame(s->in->data + pos, s->in->len - pos, s->max_frame, &used, &p, &plen);
        if (r == DDM_ADB_FRAME_NEED_MORE)
            break;
        if (r == DDM_ADB_FRAME_ERR) {
            stream_closed(s, "malformed update from the adb server");
            return FALSE;
        }
        pos += used;
        s->on_frame((const char *)p, plen, s->ud);
    }
    if (!s->closed && pos)
        g_byte_array_remove_range(s->in, 0, (guint)pos);
    return !s->closed;
}

static gboolean on_stream_in(gint fd, GIOCondition cond, gpointer ud)
{
    DdmAdbStream *s = ud;
    guint8 buf[4096];
    for (;;) {
        ssize_t n = read(fd, buf, sizeof(buf));
        if (n > 0) {
            g_byte_array_append(s->in, buf, (guint)n);
            if (!stream_parse(s))
                return G_SOURCE_REMOVE;
            continue;
        }
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
            return G_SOURCE_CONTINUE;
        stream_closed(s, n == 0 ? "the adb server closed the stream" : g_strerror(errno));
        return G_SOURCE_REMOVE;
    }
}

static void on_stream_initial(DdmTimer *t, gpointer ud)
{
    DdmAdbStream *s = ud;
    (void)t;
    if (stream_parse(s))
        s->watch = ddm_watch_add(s->fd, G_IO_IN, on_stream_in, s);
}

DdmAdbStream *ddm_adb_stream_new(int fd, GBytes *initial, size_t max_frame, DdmAdbFrameFn on_frame,
                                 DdmAdbClosedFn on_closed, gpointer ud)
{
    DdmAdbStream *s = g_new0(DdmAdbStream, 1);
    s->fd = fd;
    s->max_frame = max_frame;
    s->in = g_byte_array_new();
    s->on_frame = on_frame;
    s->on_closed = on_closed;
    s->ud = ud;
    if (initial && g_bytes_get_size(initial)) {
        gsize n;
        const guint8 *p = g_bytes_get_data(initial, &n);
        g_byte_array_append(s->in, p, (guint)n);
        ddm_timer_init(&s->initial, on_stream_initial, s);
        ddm_timer_arm(&s->initial, 0);
    } else {
        s->watch = ddm_watch_add(fd, G_IO_IN, on_stream_in, s);
    }
    return s;
}

void ddm_adb_stream_close(DdmAdbStream *s)
{
    if (!s)
        return;
    s->closed = TRUE;
    ddm_watch_remove(s->watch);
    s->watch = NULL;
    ddm_timer_cancel(&s->initial);
}

void ddm_adb_stream_free(DdmAdbStream *s)
{
    if (!s)
        return;
    ddm_watch_remove(s->watch);
    ddm_timer_cancel(&s->initial);
    close(s->fd);
    g_byte_array_unref(s->in);
    g_free(s);
}
