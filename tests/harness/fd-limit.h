/* SPDX-License-Identifier: Apache-2.0
 *
 * For tests of accepting out of descriptors (tests/unit/loop/test-accept.c,
 * tests/unit/loop/test-listener.c, tests/unit/web/test-web-accept.c): the
 * process put exactly at its descriptor limit and back, a loopback
 * listener and client, and the checks on them. The loopback client
 * (test_loopback_client) alone serves tests/unit/relay/test-relay-ports.c.
 * Header-only, after <cmocka.h> (it asserts); loopback only, no timing.
 */
#ifndef DDM_TEST_FD_LIMIT_H
#define DDM_TEST_FD_LIMIT_H

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#include <glib.h>

/* The process at its descriptor limit (test_fd_limit_enter) and what
 * undoes it (test_fd_limit_leave): the soft limit as it was, and the
 * descriptors (/dev/null) that took every free number below the lowered
 * limit (owned until leave). */
typedef struct TestFdLimit {
    struct rlimit saved;
    GArray *fill;
} TestFdLimit;

/* Lower the soft limit to just above the highest number open, then take
 * every free number below it. */
static inline void test_fd_limit_enter(TestFdLimit *l)
{
    assert_int_equal(getrlimit(RLIMIT_NOFILE, &l->saved), 0);
    int top = open("/dev/null", O_RDONLY | O_CLOEXEC);
    assert_true(top >= 0);
    close(top); /* the lowest free number; the limit a few above it */
    struct rlimit low = l->saved;
    low.rlim_cur = (rlim_t)top + 8;
    for (int fd = top; fd < top + 64; fd++) /* any open above: the limit above those */
        if (fcntl(fd, F_GETFD) >= 0)
            low.rlim_cur = (rlim_t)fd + 8;
    assert_true(low.rlim_cur <= l->saved.rlim_cur);
    assert_int_equal(setrlimit(RLIMIT_NOFILE, &low), 0);
    l->fill = g_array_new(FALSE, FALSE, sizeof(int));
    for (;;) {
        int fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
        if (fd < 0) {
            assert_int_equal(errno, EMFILE);
            break;
        }
        g_array_append_val(l->fill, fd);
    }
    assert_true(l->fill->len > 0);
}

static inline void test_fd_limit_leave(TestFdLimit *l)
{
    for (guint i = 0; i < l->fill->len; i++)
        close(g_array_index(l->fill, int, i));
    g_array_free(l->fill, TRUE);
    assert_int_equal(setrlimit(RLIMIT_NOFILE, &l->saved), 0);
}

/* A listening TCP socket on 127.0.0.1 (non-blocking, close-on-exec), the
 * kernel's port in *@port. (transfer full) */
static inline int test_loopback_listener(guint16 *port)
{
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    assert_true(fd >= 0);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    assert_int_equal(bind(fd, (struct sockaddr *)&a, sizeof a), 0);
    assert_int_equal(listen(fd, 64), 0);
    socklen_t l = sizeof a;
    assert_int_equal(getsockname(fd, (struct sockaddr *)&a, &l), 0);
    *port = ntohs(a.sin_port);
    return fd;
}

/* A client connected to 127.0.0.1:@port (blocking; on loopback the connect
 * completes into the listener's queue without an accept). (transfer full) */
static inline int test_loopback_client(guint port)
{
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    assert_true(fd >= 0);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons((guint16)port),
                            .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    assert_int_equal(connect(fd, (struct sockaddr *)&a, sizeof a), 0);
    return fd;
}

/* 1 if @fd is readable now, else 0. */
static inline int test_fd_readable(int fd)
{
    struct pollfd p = {.fd = fd, .events = POLLIN};
    return poll(&p, 1, 0) == 1;
}

/* The client's end @fd sees the connection closed: EOF or a reset. */
static inline void test_assert_closed_by_peer(int fd)
{
    char b;
    ssize_t n = recv(fd, &b, 1, 0); /* blocks until the FIN (already sent) */
    assert_true(n == 0 || (n < 0 && errno == ECONNRESET));
}

#endif /* DDM_TEST_FD_LIMIT_H */
