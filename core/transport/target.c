/* SPDX-License-Identifier: Apache-2.0
 *
 * Transports (see target.h): DdmTarget reference counting and the TCP
 * target. A TCP connect is a non-blocking connect(2) watched for G_IO_OUT,
 * bounded by a timer and a DdmConnectCancel; numeric addresses connect at once,
 * host names are resolved first with GResolver (asynchronously). The done
 * callback runs exactly once and never from inside ops->connect (nor from
 * inside ddm_connect_cancel): even an immediate failure or a cancellation
 * is reported from a zero-delay timer. Watches and timers are core/loop's:
 * a connect in flight adds no GSource. A connection whose
 * local address is its peer's (a TCP self-connect: a port in the kernel's
 * ephemeral range with nobody listening can be "connected" to itself by
 * simultaneous open) is closed and reported as a failure, never handed on.
 * Non-goals: retries and backoff (the monitor's), the session protocol.
 */
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <arpa/inet.h>
#include <gio/gio.h>
#include <glib-unix.h>

#include "core/loop/timer.h"
#include "core/loop/watch.h"
#include "core/transport/target.h"

DdmTarget *ddm_target_ref(DdmTarget *t)
{
    g_return_val_if_fail(t != NULL, NULL);
    g_atomic_int_inc(&t->ref_count);
    return t;
}

void ddm_target_unref(DdmTarget *t)
{
    if (!t)
        return;
    if (!g_atomic_int_dec_and_test(&t->ref_count))
        return;
    if (t->ops && t->ops->destroy)
        t->ops->destroy(t);
    g_free(t->key);
    g_free(t->device);
    g_free(t->origin);
    g_free(t);
}

void ddm_socket_nodelay(int fd)
{
    int one = 1;

    /* TCP_NODELAY fails on UNIX sockets (socketpairs in tests, adb over
     * UNIX): harmless, packets are small and latency matters for TCP only. */
    if (fd >= 0)
        (void)setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
}

/* ------------------------------------------------------------ TCP target */

typedef struct TcpTarget {
    char *host;
    guint16 port;
} TcpTarget;

/* One connect in flight. Owns a target reference until done() has run. */
typedef struct TcpConnect {
    DdmTarget *target;
    DdmTargetConnectedFn done;
    gpointer ud;
    int fd;
    DdmWatch *fd_watch;   /* G_IO_OUT while connect(2) is in progress */
    DdmTimer timer;       /* connect timeout */
    DdmTimer soon;        /* deferred completion: tc->error, or the cancellation */
    DdmConnectCancel *cancel; /* caller's (kept until done), armed: arms `soon` */
    GCancellable *resolve_cancel;
    GList *addrs;         /* resolved addresses not tried yet (GInetAddress*, owned) */
    struct sockaddr_storage dest; /* the address fd connects to (dest_len bytes) */
    socklen_t dest_len;
    unsigned timeout_ms;
    GError *error;        /* completion to deliver from the idle */
} TcpConnect;

static void tcp_finish(TcpConnect *tc, int fd, GError *error /* transfer full */)
{
    DdmTarget *target = tc->target;

    ddm_watch_remove(tc->fd_watch);
    ddm_timer_cancel(&tc->timer);
    ddm_timer_cancel(&tc->soon);
    if (tc->cancel) /* never from inside the handler: `soon` runs later */
        ddm_connect_cancel_disarm(tc->cancel);
    if (tc->resolve_cancel) {
        g_cancellable_cancel(tc->resolve_cancel); /* the resolver callback frees nothing of ours */
        g_object_unref(tc->resolve_cancel);
    }
    if (tc->fd >= 0 && tc->fd != fd)
        close(tc->fd);
    g_list_free_full(tc->addrs, g_object_unref);
    g_clear_error(&tc->error);
    tc->done(target, fd, error, tc->ud);
    if (error)
        g_error_free(error);
    ddm_target_unref(target);
    g_free(tc);
}

static void tcp_soon_cb(DdmTimer *t, gpointer ud)
{
    TcpConnect *tc = ud;
    GError *e = tc->error;
    (void)t;

    tc->error = NULL;
    if (!e)
        e = g_error_new(G_IO_ERROR, G_IO_ERROR_CANCELLED, "%s: connect cancelled",
                        tc->target->key);
    tcp_finish(tc, -1, e);
}

/* Report @error later (never from inside connect()). */
static void tcp_fail_later(TcpConnect *tc, GError *error /* transfer full */)
{
    if (tc->error) { /* already failing */
        g_error_free(error);
        return;
    }
    tc->error = error;
    ddm_watch_remove(tc->fd_watch);
    tc->fd_watch = NULL;
    ddm_timer_arm(&tc->soon, 0);
}

static void tcp_timeout_cb(DdmTimer *t, gpointer ud)
{
    TcpConnect *tc = ud;
    (void)t;

    tcp_finish(tc, -1,
               g_error_new(G_IO_ERROR, G_IO_ERROR_TIMED_OUT, "%s: connect timed out after %u ms",
                           tc->target->key, tc->timeout_ms));
}

/* From inside ddm_connect_cancel() (or ddm_connect_cancel_arm() when
 * already cancelled): report at the next iteration, never from here. */
static void tcp_cancelled_cb(gpointer ud)
{
    TcpConnect *tc = ud;
    if (!tc->error)
        ddm_timer_arm(&tc->soon, 0);
}

static void tcp_connect_next(TcpConnect *tc);

/* 0.0.0.0, ::, ::ffff:0.0.0.0: connect() to one of these reaches this
 * host's loopback, so the peer the kernel reports is not the address
 * given. */
static gboolean addr_is_unspecified(const struct sockaddr *sa, socklen_t len)
{
    if (sa->sa_family == AF_INET && len >= sizeof(struct sockaddr_in))
        return ((const struct sockaddr_in *)sa)->sin_addr.s_addr == htonl(INADDR_ANY);
    if (sa->sa_family == AF_INET6 && len >= sizeof(struct sockaddr_in6)) {
        const struct in6_addr *a = &((const struct sockaddr_in6 *)sa)->sin6_addr;
        static const uint8_t zero4[4];
        return IN6_IS_ADDR_UNSPECIFIED(a) ||
               (IN6_IS_ADDR_V4MAPPED(a) && memcmp(a->s6_addr + 12, zero4, 4) == 0);
    }
    return FALSE;
}

gboolean ddm_socket_is_self_connected(int fd, const struct sockaddr *peer_in, socklen_t peer_len)
{
    struct sockaddr_storage local, peer;
    socklen_t ll = sizeof local, pl = sizeof peer;

    memset(&local, 0, sizeof local);
    memset(&peer, 0, sizeof peer);
    if (peer_in && addr_is_unspecified(peer_in, peer_len))
        peer_in = NULL; /* connected to loopback instead: ask the kernel */
    if (peer_in) {
        if (peer_len > sizeof peer)
            return FALSE;
        memcpy(&peer, peer_in, peer_len);
        pl = peer_len;
    }
    if (getsockname(fd, (struct sockaddr *)&local, &ll) != 0 ||
        (!peer_in && getpeername(fd, (struct sockaddr *)&peer, &pl) != 0) || ll != pl)
        return FALSE;
    if (local.ss_family == AF_INET && peer.ss_family == AF_INET) {
        const struct sockaddr_in *a = (const void *)&local, *b = (const void *)&peer;
        return a->sin_port == b->sin_port && a->sin_addr.s_addr == b->sin_addr.s_addr;
    }
    if (local.ss_family == AF_INET6 && peer.ss_family == AF_INET6) {
        const struct sockaddr_in6 *a = (const void *)&local, *b = (const void *)&peer;
        return a->sin6_port == b->sin6_port &&
               memcmp(&a->sin6_addr, &b->sin6_addr, sizeof a->sin6_addr) == 0;
    }
    return FALSE;
}

static gboolean tcp_writable_cb(gint fd, GIOCondition cond, gpointer ud)
{
    TcpConnect *tc = ud;
    int err = 0;
    socklen_t len = sizeof err;
    (void)cond;

    ddm_watch_remove(tc->fd_watch); /* returning G_SOURCE_REMOVE would too, but tcp_finish looks */
    tc->fd_watch = NULL;
    if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len) < 0)
        err = errno;
    if (err != 0 && tc->addrs) {
        /* A name with several addresses (localhost: ::1 and 127.0.0.1): next one. */
        close(tc->fd);
        tc->fd = -1;
        tcp_connect_next(tc);
    } else if (err != 0) {
        tcp_finish(tc, -1,
                   g_error_new(G_IO_ERROR, g_io_error_from_errno(err), "%s: connect: %s",
                               tc->target->key, g_strerror(err)));
    } else if (ddm_socket_is_self_connected(
                   fd, tc->dest_len ? (const struct sockaddr *)&tc->dest : NULL, tc->dest_len)) {
        /* Nobody listens there: the kernel picked the very port as our
         * local one and the SYNs met. Not a VM, and it holds the port a
         * real VM may want: close it at once. */
        tcp_finish(tc, -1,
                   g_error_new(G_IO_ERROR, G_IO_ERROR_CONNECTION_REFUSED,
                               "%s: connected to itself (TCP self-connect: nobody listens on "
                               "the port, which is in the kernel's ephemeral range)",
                               tc->target->key));
    } else {
        tc->fd = -1; /* handed over */
        tcp_finish(tc, fd, NULL);
    }
    return G_SOURCE_REMOVE;
}

static void tcp_start_connect(TcpConnect *tc, const struct sockaddr *sa, socklen_t salen)
{
    int fd = socket(sa->sa_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    int r;

    if (fd < 0) {
        int e = errno;
        tcp_fail_later(tc, g_error_new(G_IO_ERROR, g_io_error_from_errno(e), "%s: socket: %s",
                                       tc->target->key, g_strerror(e)));
        return;
    }
    tc->fd = fd;
    /* the session relies on it (target.h); set before connect, it holds after */
    ddm_socket_nodelay(fd);
    tc->dest_len = (size_t)salen <= sizeof tc->dest ? salen : 0;
    if (tc->dest_len)
        memcpy(&tc->dest, sa, salen);
    do
        r = connect(fd, sa, salen);
    while (r < 0 && errno == EINTR);
    if (r == 0 || errno == EINPROGRESS) {
        /* Even an immediate success goes through the watch: done() must
         * not run from inside ops->connect. */
        tc->fd_watch = ddm_watch_add(fd, G_IO_OUT, tcp_writable_cb, tc);
        return;
    }
    {
        int e = errno;
        if (tc->addrs) {
            close(fd);
            tc->fd = -1;
            tcp_connect_next(tc);
            return;
        }
        tcp_fail_later(tc, g_error_new(G_IO_ERROR, g_io_error_from_errno(e), "%s: connect: %s",
                                       tc->target->key, g_strerror(e)));
    }
}

static void tcp_connect_address(TcpConnect *tc, GInetAddress *addr, guint16 port)
{
    GSocketAddress *sa = g_inet_socket_address_new(addr, port);
    struct sockaddr_storage ss;
    GError *err = NULL;

    if (!g_socket_address_to_native(sa, &ss, sizeof ss, &err)) {
        tcp_fail_later(tc, err);
    } else {
        tcp_start_connect(tc, (struct sockaddr *)&ss,
                          (socklen_t)g_socket_address_get_native_size(sa));
    }
    g_object_unref(sa);
}

static void tcp_resolved_cb(GObject *src, GAsyncResult *res, gpointer ud)
{
    GError *err = NULL;
    GList *addrs = g_resolver_lookup_by_name_finish(G_RESOLVER(src), res, &err);
    TcpConnect *tc = ud;

    if (g_error_matches(err, G_IO_ERROR, G_IO_ERROR_CANCELLED)) {
        /* tcp_finish already ran (it cancels the lookup): @tc is gone. */
        g_error_free(err);
        return;
    }
    g_clear_object(&tc->resolve_cancel);
    if (!addrs) {
        tcp_fail_later(tc, err ? err
                               : g_error_new(G_IO_ERROR, G_IO_ERROR_NOT_FOUND, "%s: no address",
                                             tc->target->key));
        return;
    }
    tc->addrs = addrs; /* owned; tcp_connect_next takes them one by one */
    tcp_connect_next(tc);
}

/* Connect to the next resolved address (there is at least one). */
static void tcp_connect_next(TcpConnect *tc)
{
    GInetAddress *addr = tc->addrs->data;

    tc->addrs = g_list_delete_link(tc->addrs, tc->addrs);
    tcp_connect_address(tc, addr, ((TcpTarget *)tc->target->priv)->port);
    g_object_unref(addr);
}

/* Connect to @host if it is an IPv4 or IPv6 literal (inet_pton's forms);
 * FALSE, having done nothing, otherwise. */
static gboolean tcp_connect_numeric(TcpConnect *tc, const char *host, guint16 port)
{
    struct sockaddr_in sin = {.sin_family = AF_INET, .sin_port = htons(port)};
    struct sockaddr_in6 sin6 = {.sin6_family = AF_INET6, .sin6_port = htons(port)};

    if (inet_pton(AF_INET, host, &sin.sin_addr) == 1) {
        tcp_start_connect(tc, (struct sockaddr *)&sin, sizeof sin);
        return TRUE;
    }
    if (inet_pton(AF_INET6, host, &sin6.sin6_addr) == 1) {
        tcp_start_connect(tc, (struct sockaddr *)&sin6, sizeof sin6);
        return TRUE;
    }
    return FALSE;
}

static void tcp_connect(DdmTarget *target, unsigned timeout_ms, DdmConnectCancel *cancel,
                        DdmTargetConnectedFn done, gpointer ud)
{
    TcpTarget *tt = target->priv;
    TcpConnect *tc = g_new0(TcpConnect, 1);
    GInetAddress *addr;

    tc->target = ddm_target_ref(target);
    tc->done = done;
    tc->ud = ud;
    tc->fd = -1;
    tc->timeout_ms = timeout_ms ? timeout_ms : 3000;
    ddm_timer_init(&tc->timer, tcp_timeout_cb, tc);
    ddm_timer_init(&tc->soon, tcp_soon_cb, tc);
    ddm_timer_arm(&tc->timer, tc->timeout_ms);
    if (cancel) {
        tc->cancel = cancel;
        ddm_connect_cancel_arm(cancel, tcp_cancelled_cb, tc);
    }

    /* A numeric address (the scanner's and most users' 127.0.0.1) becomes
     * a sockaddr with inet_pton, as GInetAddress would parse it, without
     * GLib's GInetAddress and GSocketAddress classes: their code and type
     * data are ~0.4 MB of libgio a server otherwise never touches
     * (doc/memory.md). Anything else (a name, a scope id) goes the GIO way. */
    if (tcp_connect_numeric(tc, tt->host, tt->port))
        return;
    addr = g_inet_address_new_from_string(tt->host);
    if (addr) {
        tcp_connect_address(tc, addr, tt->port);
        g_object_unref(addr);
    } else {
        GResolver *resolver = g_resolver_get_default();
        tc->resolve_cancel = g_cancellable_new();
        g_resolver_lookup_by_name_async(resolver, tt->host, tc->resolve_cancel, tcp_resolved_cb,
                                        tc);
        g_object_unref(resolver);
    }
}

static void tcp_destroy(DdmTarget *target)
{
    TcpTarget *tt = target->priv;

    if (tt) {
        g_free(tt->host);
        g_free(tt);
    }
    target->priv = NULL;
}

static const DdmTargetOps tcp_ops = {
    .transport = "tcp",
    .caps = DDM_TARGET_CAP_ANY_JVM,
    .connect = tcp_connect,
    .destroy = tcp_destroy,
};

char *ddm_target_tcp_key(const char *host, guint16 port)
{
    g_return_val_if_fail(host != NULL, NULL);
    /* IPv6 literals get brackets so the key stays "host:port"-parsable. */
    if (strchr(host, ':'))
        return g_strdup_printf("[%s]:%u", host, port);
    return g_strdup_printf("%s:%u", host, port);
}

gboolean ddm_target_parse_host_port(const char *spec, gsize len, char **host, guint16 *port)
{
    g_return_val_if_fail(spec != NULL && host != NULL && port != NULL, FALSE);
    g_autofree char *s = g_strndup(spec, len);
    char *colon = strrchr(s, ':');
    guint64 p;
    if (!colon || colon == s || !g_ascii_string_to_unsigned(colon + 1, 10, 1, 65535, &p, NULL))
        return FALSE;
    *colon = '\0';
    const char *h = s;
    if (s[0] == '[' && colon[-1] == ']') {
        colon[-1] = '\0';
        h = s + 1;
    }
    if (*h == '\0')
        return FALSE;
    *host = g_strdup(h);
    *port = (guint16)p;
    return TRUE;
}

DdmTarget *ddm_target_tcp_new(const char *host, guint16 port, const char *origin)
{
    DdmTarget *t;
    TcpTarget *tt;

    g_return_val_if_fail(host != NULL && *host != '\0', NULL);
    t = g_new0(DdmTarget, 1);
    tt = g_new0(TcpTarget, 1);
    tt->host = g_strdup(host);
    tt->port = port;
    t->ops = &tcp_ops;
    t->ref_count = 1;
    t->key = ddm_target_tcp_key(host, port);
    t->origin = g_strdup(origin);
    t->priv = tt;
    return t;
}

const char *ddm_target_tcp_host(const DdmTarget *t)
{
    if (!t || t->ops != &tcp_ops || !t->priv)
        return NULL;
    return ((const TcpTarget *)t->priv)->host;
}

guint16 ddm_target_tcp_port(const DdmTarget *t)
{
    if (!t || t->ops != &tcp_ops || !t->priv)
        return 0;
    return ((const TcpTarget *)t->priv)->port;
}
