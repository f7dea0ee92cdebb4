/* SPDX-License-Identifier: Apache-2.0
 *
 * TCP self-connections (core/transport/target.c, issue 15 fault 4): a
 * socket bound to a port and connected to that same address is connected
 * to itself (the kernel's simultaneous open), as a scan of a port in the
 * ephemeral range can be when nobody listens there. The check must say so
 * for such a socket and never for a real connection, in IPv4 and IPv6.
 */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cmocka.h>

#include "core/transport/target.h"

/* A socket connected to itself on @family's loopback, or -1 if the
 * address family is not available here. */
static int self_connected(int family)
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
    if (bind(fd, (struct sockaddr *)&ss, len) != 0 ||
        getsockname(fd, (struct sockaddr *)&ss, &len) != 0 ||
        connect(fd, (struct sockaddr *)&ss, len) != 0) {
        close(fd);
        return -1;
    }
    return fd;
}

static void test_self_connect_detected(void **state)
{
    (void)state;
    int fd = self_connected(AF_INET);
    assert_true(fd >= 0);
    assert_true(ddm_socket_is_self_connected(fd));
    close(fd);
    fd = self_connected(AF_INET6);
    if (fd >= 0) { /* no IPv6 loopback in some containers */
        assert_true(ddm_socket_is_self_connected(fd));
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
    assert_false(ddm_socket_is_self_connected(cfd));
    assert_false(ddm_socket_is_self_connected(afd));
    /* not a connected socket at all */
    assert_false(ddm_socket_is_self_connected(lfd));
    assert_false(ddm_socket_is_self_connected(-1));
    close(afd);
    close(cfd);
    close(lfd);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_self_connect_detected),
        cmocka_unit_test(test_real_connection_is_not_self),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
