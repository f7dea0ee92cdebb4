/* SPDX-License-Identifier: Apache-2.0
 *
 * Unit tests for the HTTP listener's accepting (web/http_server.c) with
 * the process exactly at its descriptor limit (RLIMIT_NOFILE lowered,
 * every number below it taken): a connection made before is shed by
 * ddm_accept() (the client sees it closed, ddm_accept_n_shed() grows, the
 * loop no longer finds the listener readable), where GIO's GSocketService
 * logged "fail: ..." and retried at once. With the limit back, a request
 * is answered. A route removed answers 404; a server that stopped
 * accepting refuses a connection. Loopback only, no timing.
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
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#include "core/loop/accept.h"
#include "tests/harness/fd-limit.h"
#include "web/http_server.h"

static void on_ping(SoupServerMessage *msg, const char *path, gpointer ud)
{
    (void)path;
    (void)ud;
    ddm_http_reply(msg, SOUP_STATUS_OK, "text/plain", "pong", 4);
}

static DdmHttpServer *server_new(void)
{
    DdmHttpOptions opts = {.listen = "127.0.0.1:0", .option = "--http"};
    g_autoptr(GError) error = NULL;
    DdmHttpServer *srv = ddm_http_server_new(&opts, &error);
    assert_non_null(srv);
    assert_true(ddm_http_server_port(srv) != 0);
    ddm_http_server_add_route(srv, "/ping", DDM_HTTP_PUBLIC, on_ping, NULL);
    return srv;
}

/* GET /ping on a new connection, the loop run until the answer is in:
 * the answer's text. (transfer full) */
static char *get_ping(DdmHttpServer *srv)
{
    guint port = ddm_http_server_port(srv);
    int fd = test_loopback_client(port);
    g_autofree char *req = g_strdup_printf(
        "GET /ping HTTP/1.1\r\nHost: 127.0.0.1:%u\r\nConnection: close\r\n\r\n", port);
    assert_int_equal(send(fd, req, strlen(req), 0), (ssize_t)strlen(req));
    GString *answer = g_string_new(NULL);
    for (;;) {
        while (!test_fd_readable(fd))
            g_main_context_iteration(NULL, TRUE);
        char buf[512];
        ssize_t n = recv(fd, buf, sizeof buf, 0);
        assert_true(n >= 0);
        if (n == 0)
            break;
        g_string_append_len(answer, buf, n);
    }
    close(fd);
    return g_string_free(answer, FALSE);
}

static void test_shed_at_limit(void **state)
{
    (void)state;
    DdmHttpServer *srv = server_new();
    int cl = test_loopback_client(ddm_http_server_port(srv)); /* made before the limit */
    guint64 shed0 = ddm_accept_n_shed();

    TestFdLimit l;
    test_fd_limit_enter(&l);
    /* The listener is readable: the first iterations take the connection
     * (a bound only so that a listener that never sheds fails here). */
    for (int i = 0; i < 8 && ddm_accept_n_shed() == shed0; i++)
        g_main_context_iteration(NULL, FALSE);
    guint64 shed = ddm_accept_n_shed();
    /* Nothing left to do: a few more iterations take nothing. */
    for (int i = 0; i < 4; i++)
        g_main_context_iteration(NULL, FALSE);
    guint64 shed_after = ddm_accept_n_shed();
    test_fd_limit_leave(&l);

    assert_int_equal(shed, shed0 + 1);
    assert_int_equal(shed_after, shed);
    assert_int_equal(ddm_http_server_n_connections(srv), 0);
    test_assert_closed_by_peer(cl);
    close(cl);

    /* The limit restored: a request is answered. */
    g_autofree char *answer = get_ping(srv);
    assert_true(g_str_has_prefix(answer, "HTTP/1.1 200"));
    assert_non_null(strstr(answer, "\r\n\r\npong"));
    ddm_http_server_free(srv);
}

/* A plain request, and a listener that goes away with its server. */
static void test_serves_and_frees(void **state)
{
    (void)state;
    DdmHttpServer *srv = server_new();
    guint port = ddm_http_server_port(srv);
    g_autofree char *answer = get_ping(srv);
    assert_true(g_str_has_prefix(answer, "HTTP/1.1 200"));
    ddm_http_server_free(srv);
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons((guint16)port),
                            .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    assert_int_equal(connect(fd, (struct sockaddr *)&a, sizeof a), -1);
    assert_int_equal(errno, ECONNREFUSED);
    close(fd);
}

/* What a stopping server does (web.c, metrics_http.c): a route whose
 * owner went answers 404; once it stops accepting, a connection is
 * refused, and freeing it after that is fine. */
static void test_remove_route_stop_accepting(void **state)
{
    (void)state;
    DdmHttpServer *srv = server_new();
    guint port = ddm_http_server_port(srv);
    ddm_http_server_remove_route(srv, "/ping", srv); /* not its owner: stays */
    g_autofree char *kept = get_ping(srv);
    assert_true(g_str_has_prefix(kept, "HTTP/1.1 200"));
    ddm_http_server_remove_route(srv, "/ping", NULL);
    g_autofree char *gone = get_ping(srv);
    assert_true(g_str_has_prefix(gone, "HTTP/1.1 404"));
    ddm_http_server_stop_accepting(srv);
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons((guint16)port),
                            .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    assert_int_equal(connect(fd, (struct sockaddr *)&a, sizeof a), -1);
    assert_int_equal(errno, ECONNREFUSED);
    close(fd);
    ddm_http_server_free(srv);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_shed_at_limit),
        cmocka_unit_test(test_serves_and_frees),
        cmocka_unit_test(test_remove_route_stop_accepting),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
