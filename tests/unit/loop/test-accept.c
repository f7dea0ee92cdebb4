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
#include "tests/harness/fd-limit.h"

static void test_shed_at_limit(void **state)
{
    (void)state;
    guint16 port;
    int lfd = test_loopback_listener(&port);
    assert_true(ddm_accept_reserve());
    int reserve = ddm_accept_reserve_fd();
    int cl = test_loopback_client(port); /* made before the limit */
    assert_int_equal(test_fd_readable(lfd), 1);
    guint64 shed0 = ddm_accept_n_shed();

    TestFdLimit al;
    test_fd_limit_enter(&al);
    int fd = 123;
    DdmAcceptResult r = ddm_accept(lfd, NULL, NULL, &fd);
    int err = errno;
    test_fd_limit_leave(&al);

    assert_int_equal(r, DDM_ACCEPT_SHED);
    assert_int_equal(err, EMFILE);
    assert_int_equal(fd, -1);
    assert_int_equal(ddm_accept_n_shed(), shed0 + 1);
    assert_int_equal(test_fd_readable(lfd), 0); /* no longer readable: no spin */
    test_assert_closed_by_peer(cl);
    /* the reserve is back, on the number it had (the one it freed) */
    assert_int_equal(ddm_accept_reserve_fd(), reserve);
    assert_true(fcntl(reserve, F_GETFD) >= 0);

    /* the limit restored: a normal accept */
    int cl2 = test_loopback_client(port);
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
    int lfd = test_loopback_listener(&port);
    assert_true(ddm_accept_reserve());
    int c1 = test_loopback_client(port), c2 = test_loopback_client(port);
    guint64 shed0 = ddm_accept_n_shed();

    TestFdLimit al;
    test_fd_limit_enter(&al);
    int fd;
    DdmAcceptResult r1 = ddm_accept(lfd, NULL, NULL, &fd);
    int between = test_fd_readable(lfd);
    DdmAcceptResult r2 = ddm_accept(lfd, NULL, NULL, &fd);
    DdmAcceptResult r3 = ddm_accept(lfd, NULL, NULL, &fd);
    test_fd_limit_leave(&al);

    assert_int_equal(r1, DDM_ACCEPT_SHED);
    assert_int_equal(between, 1);
    assert_int_equal(r2, DDM_ACCEPT_SHED);
    assert_int_equal(r3, DDM_ACCEPT_AGAIN);
    assert_int_equal(ddm_accept_n_shed(), shed0 + 2);
    assert_int_equal(test_fd_readable(lfd), 0);
    test_assert_closed_by_peer(c1);
    test_assert_closed_by_peer(c2);
    close(c1);
    close(c2);
    close(lfd);
}

static void test_nothing_pending(void **state)
{
    (void)state;
    guint16 port;
    int lfd = test_loopback_listener(&port);
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
