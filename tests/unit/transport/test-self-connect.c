/* SPDX-License-Identifier: Apache-2.0
 *
 * TCP self-connections (core/transport/target.c, issue 15 fault 4): a
 * socket bound to a port and connected to that same address is connected
 * to itself (the kernel's simultaneous open), as a scan of a port in the
 * ephemeral range can be when nobody listens there. The check must say so
 * for such a socket and never for a real connection, in IPv4 and IPv6.
 * Also the TCP target's connect (a numeric address without GIO's
 * GInetAddress) and its cancel switch (DdmConnectCancel): done runs exactly
 * once, never from inside connect or cancel, with CANCELLED once cancelled.
 * And the one parser of --connect's HOST:PORT (ddm_target_parse_host_port),
 * which discovery and the relay's fixed ports share, with the key it leads
 * to (ddm_target_tcp_key).
 */
#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cmocka.h>

#include "core/transport/target.h"

/* A listener on @family's loopback (port in *@port), or -1. */
static int listener(int family, guint16 *port)
{
    struct sockaddr_storage ss;
    socklen_t len = family == AF_INET ? sizeof(struct sockaddr_in) : sizeof(struct sockaddr_in6);
    int fd = socket(family, SOCK_STREAM | SOCK_CLOEXEC, 0);

    if (fd < 0)
        return -1;
    memset(&ss, 0, sizeof ss);
    ss.ss_family = (sa_family_t)family;
    if (family == AF_INET)
        ((struct sockaddr_in *)&ss)->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    else
        ((struct sockaddr_in6 *)&ss)->sin6_addr = in6addr_loopback;
    if (bind(fd, (struct sockaddr *)&ss, len) != 0 || listen(fd, 4) != 0 ||
        getsockname(fd, (struct sockaddr *)&ss, &len) != 0) {
        close(fd);
        return -1;
    }
    *port = ntohs(family == AF_INET ? ((struct sockaddr_in *)&ss)->sin_port
                                    : ((struct sockaddr_in6 *)&ss)->sin6_port);
    return fd;
}

typedef struct {
    int calls;
    int fd;
    GError *error;
} ConnectResult;

static void on_connected(DdmTarget *target, int fd, const GError *error, gpointer ud)
{
    ConnectResult *r = ud;
    (void)target;
    r->calls++;
    r->fd = fd;
    g_clear_error(&r->error);
    r->error = error ? g_error_copy(error) : NULL;
}

/* Iterate the default context until @r was reported (at most ~5 s), then
 * a few more times: a second report would show. */
static void wait_reported(ConnectResult *r)
{
    for (int i = 0; i < 5000 && r->calls == 0; i++)
        if (!g_main_context_iteration(NULL, FALSE))
            g_usleep(1000);
    for (int i = 0; i < 20; i++)
        g_main_context_iteration(NULL, FALSE);
}

/* A numeric address connects (IPv4; IPv6 where there is a loopback), and
 * reports from the loop, never from inside connect. */
static void test_tcp_connect_numeric(void **state)
{
    (void)state;
    for (int family = AF_INET; family != -1; family = family == AF_INET ? AF_INET6 : -1) {
        guint16 port = 0;
        int lfd = listener(family, &port);
        if (lfd < 0 && family == AF_INET6)
            continue; /* no IPv6 loopback in some containers */
        assert_true(lfd >= 0);
        DdmTarget *t = ddm_target_tcp_new(family == AF_INET ? "127.0.0.1" : "::1", port, "test");
        DdmConnectCancel cancel = {0};
        ConnectResult r = {.fd = -1};
        t->ops->connect(t, 3000, &cancel, on_connected, &r);
        assert_int_equal(r.calls, 0);
        wait_reported(&r);
        assert_int_equal(r.calls, 1);
        assert_null(r.error);
        assert_true(r.fd >= 0);
        {
            /* as target.h promises: the session sets none of them */
            int nodelay = 0;
            socklen_t nl = sizeof nodelay;
            assert_true(fcntl(r.fd, F_GETFL) & O_NONBLOCK);
            assert_true(fcntl(r.fd, F_GETFD) & FD_CLOEXEC);
            assert_int_equal(getsockopt(r.fd, IPPROTO_TCP, TCP_NODELAY, &nodelay, &nl), 0);
            assert_true(nodelay);
        }
        assert_null(cancel.fn); /* disarmed before done */
        struct sockaddr_storage peer;
        socklen_t len = sizeof peer;
        assert_int_equal(getpeername(r.fd, (struct sockaddr *)&peer, &len), 0);
        assert_int_equal(peer.ss_family, family);
        close(r.fd);
        close(lfd);
        ddm_target_unref(t);
    }
    /* A numeric connect goes through no GIO address class and no
     * GCancellable: neither type was ever registered in this process (the
     * tests before this one connect no target; review rM 6). */
    assert_int_equal(g_type_from_name("GInetAddress"), 0);
    assert_int_equal(g_type_from_name("GCancellable"), 0);
}

/* Cancelled while in flight, or before the connect started: done runs once,
 * later, with CANCELLED and no fd; cancelling again does nothing. */
static void test_tcp_connect_cancelled(void **state)
{
    (void)state;
    for (int before = 0; before <= 1; before++) {
        guint16 port = 0;
        int lfd = listener(AF_INET, &port);
        assert_true(lfd >= 0);
        DdmTarget *t = ddm_target_tcp_new("127.0.0.1", port, "test");
        DdmConnectCancel cancel = {0};
        ConnectResult r = {.fd = -1};
        if (before)
            ddm_connect_cancel(&cancel);
        t->ops->connect(t, 3000, &cancel, on_connected, &r);
        assert_int_equal(r.calls, 0);
        if (!before) {
            assert_non_null(cancel.fn); /* armed while in flight */
            ddm_connect_cancel(&cancel);
            assert_int_equal(r.calls, 0); /* never from inside the cancel */
        }
        ddm_connect_cancel(&cancel);
        wait_reported(&r);
        assert_int_equal(r.calls, 1);
        assert_int_equal(r.fd, -1);
        assert_true(g_error_matches(r.error, G_IO_ERROR, G_IO_ERROR_CANCELLED));
        assert_null(cancel.fn);
        g_clear_error(&r.error);
        close(lfd);
        ddm_target_unref(t);
    }
}

/* A socket connected to itself on @family's loopback (AF_INET6: ::1, or
 * with @mapped ::ffff:127.0.0.1), or -1 if the address family cannot bind
 * to loopback here (no IPv6); a connect that fails after that fails the
 * test. @wildcard: connect to the unspecified address (0.0.0.0, ::,
 * ::ffff:0.0.0.0) and the port, which the kernel takes as loopback:
 * *@dest gets the address connected to. */
static int self_connected_mapped(int family, gboolean mapped, gboolean wildcard,
                                 struct sockaddr_storage *dest, socklen_t *dest_len)
{
    struct sockaddr_storage ss;
    socklen_t len = family == AF_INET ? sizeof(struct sockaddr_in) : sizeof(struct sockaddr_in6);
    int fd = socket(family, SOCK_STREAM | SOCK_CLOEXEC, 0);

    if (fd < 0)
        return -1;
    memset(&ss, 0, sizeof ss);
    ss.ss_family = (sa_family_t)family;
    if (family == AF_INET)
        ((struct sockaddr_in *)&ss)->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    else if (!mapped)
        ((struct sockaddr_in6 *)&ss)->sin6_addr = in6addr_loopback;
    else
        assert_int_equal(inet_pton(AF_INET6, "::ffff:127.0.0.1",
                                   &((struct sockaddr_in6 *)&ss)->sin6_addr), 1);
    if (bind(fd, (struct sockaddr *)&ss, len) != 0 ||
        getsockname(fd, (struct sockaddr *)&ss, &len) != 0) {
        close(fd);
        return -1;
    }
    if (wildcard) {
        if (family == AF_INET)
            ((struct sockaddr_in *)&ss)->sin_addr.s_addr = htonl(INADDR_ANY);
        else if (!mapped)
            ((struct sockaddr_in6 *)&ss)->sin6_addr = in6addr_any;
        else
            assert_int_equal(inet_pton(AF_INET6, "::ffff:0.0.0.0",
                                       &((struct sockaddr_in6 *)&ss)->sin6_addr), 1);
    }
    assert_int_equal(connect(fd, (struct sockaddr *)&ss, len), 0);
    if (dest) {
        *dest = ss;
        *dest_len = len;
    }
    return fd;
}

static int self_connected_to(int family, gboolean wildcard, struct sockaddr_storage *dest,
                             socklen_t *dest_len)
{
    return self_connected_mapped(family, FALSE, wildcard, dest, dest_len);
}

static int self_connected(int family)
{
    return self_connected_to(family, FALSE, NULL, NULL);
}

/* ddm_socket_is_self_connected both ways: asking the kernel for the peer
 * (NULL), and told the address @fd connected to (@peer, as the TCP target
 * does), which must give the same answer. */
static gboolean is_self(int fd, const struct sockaddr *peer, socklen_t peer_len)
{
    gboolean asked = ddm_socket_is_self_connected(fd, NULL, 0);
    assert_int_equal(ddm_socket_is_self_connected(fd, peer, peer_len), asked);
    return asked;
}

static void test_self_connect_detected(void **state)
{
    struct sockaddr_storage peer;
    socklen_t pl;
    (void)state;
    int fd = self_connected(AF_INET);
    assert_true(fd >= 0);
    pl = sizeof peer;
    assert_int_equal(getpeername(fd, (struct sockaddr *)&peer, &pl), 0);
    assert_true(is_self(fd, (struct sockaddr *)&peer, pl));
    close(fd);
    fd = self_connected(AF_INET6);
    if (fd >= 0) { /* no IPv6 loopback in some containers */
        pl = sizeof peer;
        assert_int_equal(getpeername(fd, (struct sockaddr *)&peer, &pl), 0);
        assert_true(is_self(fd, (struct sockaddr *)&peer, pl));
        close(fd);
    }
}

/* Connected to 0.0.0.0:P (as `--connect 0.0.0.0:P` would): the kernel
 * makes it 127.0.0.1:P, so the address given is not the peer's, and the
 * check must not take it for one. The same for :: (::1) and for the
 * v4-mapped ::ffff:0.0.0.0 (::ffff:127.0.0.1), where IPv6 loopback exists. */
static void test_self_connect_via_wildcard(void **state)
{
    struct sockaddr_storage dest;
    socklen_t dl = 0;
    (void)state;
    int fd = self_connected_to(AF_INET, TRUE, &dest, &dl);
    assert_true(fd >= 0);
    assert_true(ddm_socket_is_self_connected(fd, (struct sockaddr *)&dest, dl));
    close(fd);
    fd = self_connected_to(AF_INET6, TRUE, &dest, &dl); /* :: */
    if (fd >= 0) {
        assert_true(ddm_socket_is_self_connected(fd, (struct sockaddr *)&dest, dl));
        close(fd);
    }
    fd = self_connected_mapped(AF_INET6, TRUE, TRUE, &dest, &dl); /* ::ffff:0.0.0.0 */
    if (fd >= 0) {
        assert_true(ddm_socket_is_self_connected(fd, (struct sockaddr *)&dest, dl));
        close(fd);
    }
}

/* A real connection (a listener and a client on loopback): never. */
static void test_real_connection_is_not_self(void **state)
{
    struct sockaddr_in sa = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    socklen_t len = sizeof sa;
    int lfd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0), cfd, afd;
    (void)state;

    assert_true(lfd >= 0);
    assert_int_equal(bind(lfd, (struct sockaddr *)&sa, sizeof sa), 0);
    assert_int_equal(listen(lfd, 1), 0);
    assert_int_equal(getsockname(lfd, (struct sockaddr *)&sa, &len), 0);
    cfd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    assert_int_equal(connect(cfd, (struct sockaddr *)&sa, sizeof sa), 0);
    afd = accept(lfd, NULL, NULL);
    assert_true(afd >= 0);
    /* the client, told the listener's address it connected to */
    assert_false(is_self(cfd, (struct sockaddr *)&sa, sizeof sa));
    assert_false(ddm_socket_is_self_connected(afd, NULL, 0));
    /* told its own address as the peer's: the comparison, not the kernel,
     * decides (so a wrong address passed in would show here) */
    {
        struct sockaddr_storage me;
        socklen_t ml = sizeof me;
        assert_int_equal(getsockname(cfd, (struct sockaddr *)&me, &ml), 0);
        assert_true(ddm_socket_is_self_connected(cfd, (struct sockaddr *)&me, ml));
    }
    /* not a connected socket at all */
    assert_false(ddm_socket_is_self_connected(lfd, NULL, 0));
    assert_false(ddm_socket_is_self_connected(-1, NULL, 0));
    close(afd);
    close(cfd);
    close(lfd);
}

/* HOST:PORT, [v6]:PORT, a bare v6 literal (the last colon is the port's),
 * the length bound (what follows "=" is not looked at), and refusals. */
static void test_parse_host_port(void **state)
{
    (void)state;
    static const struct {
        const char *spec;
        gsize len; /* G_MAXSIZE: strlen */
        const char *host, *key; /* NULL: refused */
        guint16 port;
    } cases[] = {
        { "127.0.0.1:8000", G_MAXSIZE, "127.0.0.1", "127.0.0.1:8000", 8000 },
        { "127.0.0.1:08001", G_MAXSIZE, "127.0.0.1", "127.0.0.1:8001", 8001 },
        { "[::1]:8002", G_MAXSIZE, "::1", "[::1]:8002", 8002 },
        { "::1:8003", G_MAXSIZE, "::1", "[::1]:8003", 8003 },
        { "example.org:8004=8700", 16, "example.org", "example.org:8004", 8004 },
        { "host:8005=x", 9, "host", "host:8005", 8005 },
        { ":8006", G_MAXSIZE, NULL, NULL, 0 },
        { "[]:8007", G_MAXSIZE, NULL, NULL, 0 },
        { "host", G_MAXSIZE, NULL, NULL, 0 },
        { "host:", G_MAXSIZE, NULL, NULL, 0 },
        { "host:0", G_MAXSIZE, NULL, NULL, 0 },
        { "host:65536", G_MAXSIZE, NULL, NULL, 0 },
        { "host:80x", G_MAXSIZE, NULL, NULL, 0 },
        { "host:8008", 5, NULL, NULL, 0 }, /* cut before the port: "host:" */
    };
    for (gsize i = 0; i < G_N_ELEMENTS(cases); i++) {
        char *host = (char *)"untouched";
        guint16 port = 0;
        gsize len = cases[i].len == G_MAXSIZE ? strlen(cases[i].spec) : cases[i].len;
        gboolean ok = ddm_target_parse_host_port(cases[i].spec, len, &host, &port);
        if (!cases[i].host) {
            if (ok)
                fail_msg("%s (%zu bytes) was taken as %s:%u", cases[i].spec, len, host, port);
            assert_string_equal(host, "untouched");
            continue;
        }
        if (!ok)
            fail_msg("%s (%zu bytes) was refused", cases[i].spec, len);
        assert_string_equal(host, cases[i].host);
        assert_int_equal(port, cases[i].port);
        char *key = ddm_target_tcp_key(host, port);
        assert_string_equal(key, cases[i].key);
        g_free(key);
        g_free(host);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_self_connect_detected),
        cmocka_unit_test(test_self_connect_via_wildcard),
        cmocka_unit_test(test_real_connection_is_not_self),
        cmocka_unit_test(test_tcp_connect_numeric),
        cmocka_unit_test(test_tcp_connect_cancelled),
        cmocka_unit_test(test_parse_host_port),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
