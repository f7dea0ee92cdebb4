/* SPDX-License-Identifier: Apache-2.0
 *
 * Unit tests for accepting with a reserve descriptor (core/loop/accept.c):
 * with the process exactly at its descriptor limit (RLIMIT_NOFILE lowered,
 * every number below it taken), ddm_accept() sheds the pending connection
 * (the listener is no longer readable, the client sees the connection
 * closed) and keeps its reserve; one call sheds one connection; with the
 * limit back a normal accept works. Also: nothing pending is AGAIN, and
 * the reserve is close-on-exec. Loopback only, no timing.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <arpa/inet.h>
#include <poll.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#include "core/loop/accept.h"

/* A listening TCP socket on 127.0.0.1, the kernel's port in *@port. */
static int listener(guint16 *port)
{
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    assert_true(fd >= 0);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    assert_int_equal(bind(fd, (struct sockaddr *)&a, sizeof a), 0);
    assert_int_equal(listen(fd, 16), 0);
    socklen_t l = sizeof a;
    assert_int_equal(getsockname(fd, (struct sockaddr *)&a, &l), 0);
    *port = ntohs(a.sin_port);
    return fd;
}

/* A client connected to @port (blocking; on loopback the connect completes
 * into the listener's queue without an accept). */
static int client(guint16 port)
{
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    assert_true(fd >= 0);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons(port),
                            .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    assert_int_equal(connect(fd, (struct sockaddr *)&a, sizeof a), 0);
    return fd;
}

static int readable(int fd)
{
    struct pollfd p = {.fd = fd, .events = POLLIN};
    return poll(&p, 1, 0);
}

/* The client's end sees the connection closed: EOF or a reset. */
static void assert_closed_by_peer(int fd)
{
    char b;
    ssize_t n = recv(fd, &b, 1, 0); /* blocks until the FIN (already sent) */
    assert_true(n == 0 || (n < 0 && errno == ECONNRESET));
}

/* The process at its descriptor limit: the soft limit lowered to just above
 * the highest number open, then every free number below it taken. */
typedef struct {
    struct rlimit saved;
    GArray *fill;
} AtLimit;

static void at_limit_enter(AtLimit *al)
{
    assert_int_equal(getrlimit(RLIMIT_NOFILE, &al->saved), 0);
    int top = open("/dev/null", O_RDONLY | O_CLOEXEC);
    assert_true(top >= 0);
    close(top); /* the lowest free number; the limit a few above it */
    struct rlimit low = al->saved;
    low.rlim_cur = (rlim_t)top + 8;
    for (int fd = top; fd < top + 64; fd++) /* any open above: the limit above those */
        if (fcntl(fd, F_GETFD) >= 0)
            low.rlim_cur = (rlim_t)fd + 8;
    assert_true(low.rlim_cur <= al->saved.rlim_cur);
    assert_int_equal(setrlimit(RLIMIT_NOFILE, &low), 0);
    al->fill = g_array_new(FALSE, FALSE, sizeof(int));
    for (;;) {
        int fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
        if (fd < 0) {
            assert_int_equal(errno, EMFILE);
            break;
        }
        g_array_append_val(al->fill, fd);
    }
    assert_true(al->fill->len > 0);
}

static void at_limit_leave(AtLimit *al)
{
    for (guint i = 0; i < al->fill->len; i++)
        close(g_array_index(al->fill, int, i));
    g_array_free(al->fill, TRUE);
    assert_int_equal(setrlimit(RLIMIT_NOFILE, &al->saved), 0);
}

static void test_shed_at_limit(void **state)
{
    (void)state;
    guint16 port;
    int lfd = listener(&port);
    assert_true(ddm_accept_reserve());
    int reserve = ddm_accept_reserve_fd();
    int cl = client(port); /* made before the limit */
    assert_int_equal(readable(lfd), 1);
    guint64 shed0 = ddm_accept_n_shed();

    AtLimit al;
    at_limit_enter(&al);
    int fd = 123;
    DdmAcceptResult r = ddm_accept(lfd, NULL, NULL, &fd);
    int err = errno;
    at_limit_leave(&al);

    assert_int_equal(r, DDM_ACCEPT_SHED);
    assert_int_equal(err, EMFILE);
    assert_int_equal(fd, -1);
    assert_int_equal(ddm_accept_n_shed(), shed0 + 1);
    assert_int_equal(readable(lfd), 0); /* no longer readable: no spin */
    assert_closed_by_peer(cl);
    /* the reserve is back, on the number it had (the one it freed) */
    assert_int_equal(ddm_accept_reserve_fd(), reserve);
    assert_true(fcntl(reserve, F_GETFD) >= 0);

    /* the limit restored: a normal accept */
    int cl2 = client(port);
    struct sockaddr_storage ss;
    socklen_t sl = sizeof ss;
    r = ddm_accept(lfd, (struct sockaddr *)&ss, &sl, &fd);
    assert_int_equal(r, DDM_ACCEPT_OK);
    assert_true(fd >= 0);
    assert_int_equal(ss.ss_family, AF_INET);
    assert_true(fcntl(fd, F_GETFL) & O_NONBLOCK);
    assert_true(fcntl(fd, F_GETFD) & FD_CLOEXEC);
    assert_int_equal(send(cl2, "x", 1, 0), 1);
    char b = 0;
    assert_int_equal(recv(fd, &b, 1, MSG_WAITALL), 1);
    assert_int_equal(b, 'x');
    close(fd);
    close(cl2);
    close(cl);
    close(lfd);
}

/* Two pending at the limit: one call sheds one (the caller's loop stops
 * there), the listener stays readable for the next call, which sheds the
 * other. */
static void test_shed_one_per_call(void **state)
{
    (void)state;
    guint16 port;
    int lfd = listener(&port);
    assert_true(ddm_accept_reserve());
    int c1 = client(port), c2 = client(port);
    guint64 shed0 = ddm_accept_n_shed();

    AtLimit al;
    at_limit_enter(&al);
    int fd;
    DdmAcceptResult r1 = ddm_accept(lfd, NULL, NULL, &fd);
    int between = readable(lfd);
    DdmAcceptResult r2 = ddm_accept(lfd, NULL, NULL, &fd);
    DdmAcceptResult r3 = ddm_accept(lfd, NULL, NULL, &fd);
    at_limit_leave(&al);

    assert_int_equal(r1, DDM_ACCEPT_SHED);
    assert_int_equal(between, 1);
    assert_int_equal(r2, DDM_ACCEPT_SHED);
    assert_int_equal(r3, DDM_ACCEPT_AGAIN);
    assert_int_equal(ddm_accept_n_shed(), shed0 + 2);
    assert_int_equal(readable(lfd), 0);
    assert_closed_by_peer(c1);
    assert_closed_by_peer(c2);
    close(c1);
    close(c2);
    close(lfd);
}

static void test_nothing_pending(void **state)
{
    (void)state;
    guint16 port;
    int lfd = listener(&port);
    int fd = 5;
    assert_int_equal(ddm_accept(lfd, NULL, NULL, &fd), DDM_ACCEPT_AGAIN);
    assert_int_equal(fd, -1);
    close(lfd);
}

/* The reserve exists after the first call and no exec'd child inherits it. */
static void test_reserve_cloexec(void **state)
{
    (void)state;
    assert_true(ddm_accept_reserve());
    int r = ddm_accept_reserve_fd();
    assert_true(r >= 0);
    assert_true(fcntl(r, F_GETFD) & FD_CLOEXEC);
    assert_true(ddm_accept_reserve()); /* idempotent: the same one */
    assert_int_equal(ddm_accept_reserve_fd(), r);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_nothing_pending),
        cmocka_unit_test(test_reserve_cloexec),
        cmocka_unit_test(test_shed_at_limit),
        cmocka_unit_test(test_shed_one_per_call),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
