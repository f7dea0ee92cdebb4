/* SPDX-License-Identifier: Apache-2.0
 *
 * Unit tests for accepting with a reserve descriptor (core/loop/accept.c):
 * with the process exactly at its descriptor limit (RLIMIT_NOFILE lowered,
 * every number below it taken), ddm_accept() sheds the pending connection
 * (the listener is no longer readable, the client sees the connection
 * closed) and keeps its reserve; one call sheds one connection; with the
 * limit back a normal accept works. Also: nothing pending is AGAIN, and
 * the reserve is close-on-exec. The network errors accept(2) says to
 * retry (ENETDOWN, EHOSTUNREACH...) are passed over like ECONNABORTED: the
 * kernel cannot be made to give them on loopback, so this file's accept4()
 * (found before libc's) fails once with the errno a test asks for. Loopback
 * only, no timing.
 */
#define _GNU_SOURCE 1 /* RTLD_NEXT */

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <dlfcn.h>
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

/* Set by a test: the next accept4() fails with it (once, or every time
 * while inject_sticky), before the real one is called; 0: accept4 is
 * libc's. inject_calls counts the failures injected. */
static int inject_errno;
static gboolean inject_sticky;
static unsigned inject_calls;

int accept4(int fd, struct sockaddr *addr, socklen_t *addrlen, int flags)
{
    static int (*real_accept4)(int, struct sockaddr *, socklen_t *, int);
    if (real_accept4 == NULL)
        real_accept4 = (int (*)(int, struct sockaddr *, socklen_t *, int))dlsym(RTLD_NEXT, "accept4");
    if (inject_errno != 0) {
        errno = inject_errno;
        if (!inject_sticky)
            inject_errno = 0;
        inject_calls++;
        return -1;
    }
    return real_accept4(fd, addr, addrlen, flags);
}

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

/* A network error pending on the new connection (accept(2), Linux: "treat
 * them like EAGAIN by retrying") is no DDM_ACCEPT_ERROR, which would pause
 * the listener: ddm_accept goes on to the next connection. */
static void test_pending_network_error_passed_over(void **state)
{
    (void)state;
    static const int errs[] = {
        ENETDOWN, ENOPROTOOPT, EHOSTDOWN, ENONET, EHOSTUNREACH, EOPNOTSUPP, ENETUNREACH,
        ECONNABORTED, EPROTO, EINTR,
    };
    guint16 port;
    int lfd = test_loopback_listener(&port);
    for (guint i = 0; i < G_N_ELEMENTS(errs); i++) {
        int cl = test_loopback_client(port);
        inject_errno = errs[i];
        int fd = -1;
        DdmAcceptResult r = ddm_accept(lfd, NULL, NULL, &fd);
        if (r != DDM_ACCEPT_OK)
            print_error("errno %d (%s): result %d\n", errs[i], g_strerror(errs[i]), r);
        assert_int_equal(r, DDM_ACCEPT_OK); /* the failed one passed over, the next taken */
        assert_int_equal(inject_errno, 0);
        assert_true(fd >= 0);
        close(fd);
        close(cl);
    }
    close(lfd);
}

/* An error passed over that takes nothing off the queue (EOPNOTSUPP, as
 * for a socket that is not SOCK_STREAM) ends the call as an error after a
 * bounded number of tries, instead of looping forever. */
static void test_passed_over_error_is_bounded(void **state)
{
    (void)state;
    guint16 port;
    int lfd = test_loopback_listener(&port);
    int cl = test_loopback_client(port);
    int fd = 5;
    inject_errno = EOPNOTSUPP;
    inject_sticky = TRUE;
    inject_calls = 0;
    DdmAcceptResult r = ddm_accept(lfd, NULL, NULL, &fd);
    int err = errno;
    inject_sticky = FALSE;
    inject_errno = 0;
    assert_int_equal(r, DDM_ACCEPT_ERROR);
    assert_int_equal(err, EOPNOTSUPP);
    assert_int_equal(fd, -1);
    assert_in_range(inject_calls, 2, 1000);
    close(cl);
    close(lfd);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_nothing_pending),
        cmocka_unit_test(test_reserve_cloexec),
        cmocka_unit_test(test_shed_at_limit),
        cmocka_unit_test(test_shed_one_per_call),
        cmocka_unit_test(test_pending_network_error_passed_over),
        cmocka_unit_test(test_passed_over_error_is_bounded),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
