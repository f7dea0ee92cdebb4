/* SPDX-License-Identifier: Apache-2.0
 *
 * Unit tests for the shared accept loop (core/loop/listener.c) on the real
 * glib main loop: connections on a loopback listener are handed over, with
 * their peer's address, DDM_ACCEPT_BATCH a wake-up, and trouble is never
 * called; an accept error pauses the watch (a readable pipe, on which
 * accept4 fails with ENOTSOCK, is reported once over 100 iterations, not
 * once an iteration, unless the iterations outlasted the pause) and the
 * pause ends by itself, twice as long the next
 * time, and from the start again once a connection was accepted or the
 * try at the end of a pause found none pending; out of
 * descriptors a connection is shed without a pause; the
 * listener may be freed from its callbacks (the pause's try's too) and
 * while paused. No timed
 * assertions: waits are blocking iterations until something happened.
 */
#define _GNU_SOURCE 1 /* pipe2 */

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <netinet/in.h>
#include <arpa/inet.h>
#include <sys/socket.h>
#include <unistd.h>

#include "core/loop/listener.h"
#include "tests/harness/fd-limit.h"

typedef struct Seen {
    DdmListener *l;
    GArray *fds;             /* accepted, owned until the test closes them */
    GArray *peer_ports;      /* guint16 each, 0 when not AF_INET */
    guint n_trouble;
    DdmAcceptResult last_r;
    int last_err;
    guint last_paused_ms;
    guint paused_ms[8];      /* each trouble's pause, the first 8 */
    gboolean free_on_accept, free_on_trouble;
    int shut_on_accept;      /* >= 0: shutdown(SHUT_RD) this fd at the first accept */
} Seen;

static void on_accept(int fd, const struct sockaddr *addr, socklen_t addrlen, gpointer ud)
{
    Seen *s = ud;
    g_array_append_val(s->fds, fd);
    guint16 port = 0;
    if (addrlen >= sizeof(struct sockaddr_in) && addr->sa_family == AF_INET)
        port = ntohs(((const struct sockaddr_in *)addr)->sin_port);
    g_array_append_val(s->peer_ports, port);
    if (s->shut_on_accept >= 0) {
        /* the batch's next accept fails at once: no EAGAIN in between */
        assert_int_equal(shutdown(s->shut_on_accept, SHUT_RD), 0);
        s->shut_on_accept = -1;
    }
    if (s->free_on_accept)
        g_clear_pointer(&s->l, ddm_listener_free);
}

static void on_trouble(DdmAcceptResult r, int err, guint paused_ms, gpointer ud)
{
    Seen *s = ud;
    s->n_trouble++;
    s->last_r = r;
    s->last_err = err;
    s->last_paused_ms = paused_ms;
    if (s->n_trouble <= G_N_ELEMENTS(s->paused_ms))
        s->paused_ms[s->n_trouble - 1] = paused_ms;
    if (s->free_on_trouble)
        g_clear_pointer(&s->l, ddm_listener_free);
}

static const DdmListenerOps ops = {on_accept, on_trouble};

/* The test's: file-scope, so that the teardown frees what a failed test
 * left (a listener still watching would call a later test's callbacks). */
static Seen seen;

static void seen_init(Seen *s)
{
    memset(s, 0, sizeof *s);
    s->fds = g_array_new(FALSE, FALSE, sizeof(int));
    s->peer_ports = g_array_new(FALSE, FALSE, sizeof(guint16));
    s->shut_on_accept = -1;
}

static void seen_clear(Seen *s)
{
    g_clear_pointer(&s->l, ddm_listener_free);
    for (guint i = 0; s->fds != NULL && i < s->fds->len; i++)
        close(g_array_index(s->fds, int, i));
    g_clear_pointer(&s->fds, g_array_unref);
    g_clear_pointer(&s->peer_ports, g_array_unref);
}

static int teardown(void **state)
{
    (void)state;
    seen_clear(&seen);
    return 0;
}

/* A pipe whose read end stays readable (a byte in it): accept4 on it fails
 * with ENOTSOCK, an error that leaves the "listener" readable. */
static void readable_pipe(int p[2])
{
    assert_int_equal(pipe2(p, O_CLOEXEC | O_NONBLOCK), 0);
    assert_int_equal(write(p[1], "x", 1), 1);
}

static guint16 local_port(int fd)
{
    struct sockaddr_in a;
    socklen_t l = sizeof a;
    assert_int_equal(getsockname(fd, (struct sockaddr *)&a, &l), 0);
    return ntohs(a.sin_port);
}

static void iterate_nonblocking(guint n)
{
    for (guint i = 0; i < n; i++)
        g_main_context_iteration(NULL, FALSE);
}

/* After iterations that began at @since_us (monotonic), before a pause of
 * @pause_ms started: @n errors so far. No timed assertion: when the
 * iterations took less than the pause, the pause cannot have ended, so
 * exactly @n; when the process was descheduled past it, one more error a
 * pause at most (without a pause 100 iterations see 100 either way). */
static void assert_troubles_within_pause(guint n, gint64 since_us, guint pause_ms)
{
    gint64 elapsed_us = g_get_monotonic_time() - since_us;
    gint64 pause_us = (gint64)pause_ms * 1000;
    if (elapsed_us < pause_us) {
        assert_int_equal(seen.n_trouble, n);
        assert_true(ddm_listener_paused(seen.l));
    } else
        assert_in_range(seen.n_trouble, n, n + elapsed_us / pause_us);
}

/* (a) Every pending connection is handed over with its peer's address, at
 * most DDM_ACCEPT_BATCH a wake-up; no trouble. The listener made the
 * reserve descriptor (this test runs first: there was none before). */
static void test_accepts_and_hands_over(void **state)
{
    (void)state;
    guint16 port;
    int lfd = test_loopback_listener(&port);
    seen_init(&seen);
    assert_int_equal(ddm_accept_reserve_fd(), -1); /* the first test: none yet */
    seen.l = ddm_listener_new(lfd, &ops, &seen);
    assert_true(ddm_accept_reserve_fd() >= 0); /* made with the listener (no caller's call) */
    const guint n = DDM_ACCEPT_BATCH + 4;
    int clients[DDM_ACCEPT_BATCH + 4];
    for (guint i = 0; i < n; i++)
        clients[i] = test_loopback_client(port); /* queued before the first wake-up */
    while (seen.fds->len == 0)
        g_main_context_iteration(NULL, TRUE);
    assert_int_equal(seen.fds->len, DDM_ACCEPT_BATCH); /* one batch, the rest wait */
    while (seen.fds->len < n)
        g_main_context_iteration(NULL, TRUE);
    assert_int_equal(seen.fds->len, n);
    assert_int_equal(seen.n_trouble, 0);
    assert_false(ddm_listener_paused(seen.l));
    /* in order, each the client's own connection */
    for (guint i = 0; i < n; i++) {
        int fd = g_array_index(seen.fds, int, i);
        assert_int_equal(g_array_index(seen.peer_ports, guint16, i), local_port(clients[i]));
        assert_true(fcntl(fd, F_GETFL) & O_NONBLOCK);
        assert_int_equal(send(clients[i], "x", 1, 0), 1);
        char b = 0;
        struct pollfd p = {.fd = fd, .events = POLLIN};
        assert_int_equal(poll(&p, 1, -1), 1);
        assert_int_equal(recv(fd, &b, 1, 0), 1);
        assert_int_equal(b, 'x');
        close(clients[i]);
    }
    seen_clear(&seen);
    close(lfd);
}

/* (b) An accept error that leaves the fd readable (ENOTSOCK on a pipe with
 * data: what ENOBUFS or ENOMEM do to a listener) pauses the watch: 100
 * iterations see one error, not 100 (more only if they took longer than
 * the pause: assert_troubles_within_pause). The pause ends by itself and the next
 * error pauses twice as long. */
static void test_error_pauses(void **state)
{
    (void)state;
    int p[2];
    readable_pipe(p);
    seen_init(&seen);
    seen.l = ddm_listener_new(p[0], &ops, &seen);

    gint64 t = g_get_monotonic_time(); /* the first pause starts after this */
    iterate_nonblocking(100);
    assert_troubles_within_pause(1, t, DDM_LISTENER_PAUSE_MIN_MS); /* no pause: 100 */
    assert_int_equal(seen.last_r, DDM_ACCEPT_ERROR);
    assert_int_equal(seen.last_err, ENOTSOCK);
    assert_int_equal(seen.paused_ms[0], DDM_LISTENER_PAUSE_MIN_MS);

    while (seen.n_trouble < 2) { /* the pause ends: tried again */
        t = g_get_monotonic_time(); /* before the iteration that pauses again */
        g_main_context_iteration(NULL, TRUE);
    }
    assert_int_equal(seen.last_r, DDM_ACCEPT_ERROR);
    assert_int_equal(seen.paused_ms[1], 2 * DDM_LISTENER_PAUSE_MIN_MS);
    iterate_nonblocking(100);
    assert_troubles_within_pause(2, t, 2 * DDM_LISTENER_PAUSE_MIN_MS);
    while (seen.n_trouble < 3)
        g_main_context_iteration(NULL, TRUE);
    assert_int_equal(seen.paused_ms[2], 4 * DDM_LISTENER_PAUSE_MIN_MS);
    assert_int_equal(seen.fds->len, 0);

    /* freed while paused: its timer goes with it (ASan: no use after free) */
    while (!ddm_listener_paused(seen.l)) /* paused now, unless descheduled past it */
        g_main_context_iteration(NULL, TRUE);
    guint n = seen.n_trouble;
    g_clear_pointer(&seen.l, ddm_listener_free);
    iterate_nonblocking(100);
    assert_int_equal(seen.n_trouble, n);
    seen_clear(&seen);
    close(p[0]);
    close(p[1]);
}

/* The backoff goes back to its start once a connection is accepted. A
 * listening TCP socket shut down for reading stops listening (accept4:
 * EINVAL) and stays readable (HUP, IN); listen() again makes it a listener
 * (on another port: the kernel chose the first). The client connects while
 * the listener is paused, so the pause's try accepts it, and the accept
 * callback shuts the socket down again: the batch's next accept fails
 * without an empty queue (EAGAIN, the other reset) in between, and its
 * pause is the first one's again only because of the accept. */
static void test_backoff_resets_after_accept(void **state)
{
    (void)state;
    guint16 port;
    int lfd = test_loopback_listener(&port);
    seen_init(&seen);
    seen.l = ddm_listener_new(lfd, &ops, &seen);
    assert_int_equal(shutdown(lfd, SHUT_RD), 0);
    while (seen.n_trouble < 2)
        g_main_context_iteration(NULL, TRUE);
    assert_int_equal(seen.last_err, EINVAL);
    assert_int_equal(seen.last_paused_ms, 2 * DDM_LISTENER_PAUSE_MIN_MS);

    /* Listening again with a connection pending before the pause's try (or,
     * if descheduled past the pause, that try found none: then the
     * connection wakes the watch, and there is no way to tell; the
     * troubles' count below then says so). */
    assert_int_equal(listen(lfd, 64), 0);
    port = local_port(lfd);
    seen.shut_on_accept = lfd;
    int cl = test_loopback_client(port);
    while (seen.n_trouble < 3)
        g_main_context_iteration(NULL, TRUE);
    assert_int_equal(seen.fds->len, 1);
    assert_int_equal(seen.last_r, DDM_ACCEPT_ERROR);
    assert_int_equal(seen.last_err, EINVAL);
    /* from the start again (without the reset: four times the first) */
    assert_int_equal(seen.last_paused_ms, DDM_LISTENER_PAUSE_MIN_MS);
    close(cl);
    seen_clear(&seen);
    close(lfd);
}

/* The accept callback of the pause's own try frees the listener: the
 * timer that ran the try is freed with it while its callback runs (ASan:
 * no use after free), and nothing more is taken or reported. */
static void test_free_from_pause_try(void **state)
{
    (void)state;
    guint16 port;
    int lfd = test_loopback_listener(&port);
    seen_init(&seen);
    seen.l = ddm_listener_new(lfd, &ops, &seen);
    assert_int_equal(shutdown(lfd, SHUT_RD), 0);
    while (seen.n_trouble < 1)
        g_main_context_iteration(NULL, TRUE);
    assert_true(ddm_listener_paused(seen.l) || seen.n_trouble > 1);
    guint troubles = seen.n_trouble;
    assert_int_equal(listen(lfd, 64), 0);
    port = local_port(lfd);
    seen.free_on_accept = TRUE;
    int c1 = test_loopback_client(port), c2 = test_loopback_client(port);
    while (seen.l != NULL)
        g_main_context_iteration(NULL, TRUE);
    iterate_nonblocking(100);
    assert_int_equal(seen.fds->len, 1);
    assert_int_equal(seen.n_trouble, troubles);
    assert_int_equal(test_fd_readable(lfd), 1); /* the second still queued */
    seen_clear(&seen);
    close(c1);
    close(c2);
    close(lfd);
}

/* The backoff also goes back to its start once the errors are over though
 * nothing connects: the try at the end of a pause finds the queue empty
 * (EAGAIN), so an error later pauses 100 ms, not twice the last pause.
 * (Without that try no wake-up comes while nothing connects.) */
static void test_backoff_resets_when_quiet(void **state)
{
    (void)state;
    guint16 port;
    int lfd = test_loopback_listener(&port);
    seen_init(&seen);
    seen.l = ddm_listener_new(lfd, &ops, &seen);
    assert_int_equal(shutdown(lfd, SHUT_RD), 0);
    while (seen.n_trouble < 2)
        g_main_context_iteration(NULL, TRUE);
    assert_int_equal(seen.paused_ms[1], 2 * DDM_LISTENER_PAUSE_MIN_MS);

    assert_int_equal(listen(lfd, 64), 0); /* listening again, nothing pending */
    while (ddm_listener_paused(seen.l)) /* the pause ends: its try finds none */
        g_main_context_iteration(NULL, TRUE);
    assert_int_equal(seen.n_trouble, 2);
    assert_int_equal(seen.fds->len, 0);

    assert_int_equal(shutdown(lfd, SHUT_RD), 0); /* an error later */
    while (seen.n_trouble < 3)
        g_main_context_iteration(NULL, TRUE);
    assert_int_equal(seen.last_err, EINVAL);
    assert_int_equal(seen.paused_ms[2], DDM_LISTENER_PAUSE_MIN_MS); /* not 400 */
    seen_clear(&seen);
    close(lfd);
}

/* The trouble callback frees the listener: the batch ends there and the
 * pause's timer is gone with it. */
static void test_free_from_trouble(void **state)
{
    (void)state;
    int p[2];
    readable_pipe(p);
    seen_init(&seen);
    seen.free_on_trouble = TRUE;
    seen.l = ddm_listener_new(p[0], &ops, &seen);
    while (seen.n_trouble == 0)
        g_main_context_iteration(NULL, TRUE);
    assert_null(seen.l);
    iterate_nonblocking(100);
    assert_int_equal(seen.n_trouble, 1);
    seen_clear(&seen);
    close(p[0]);
    close(p[1]);
}

/* The accept callback frees the listener with more connections pending:
 * none more is taken. */
static void test_free_from_accept(void **state)
{
    (void)state;
    guint16 port;
    int lfd = test_loopback_listener(&port);
    seen_init(&seen);
    seen.free_on_accept = TRUE;
    seen.l = ddm_listener_new(lfd, &ops, &seen);
    int c1 = test_loopback_client(port), c2 = test_loopback_client(port);
    while (seen.fds->len == 0)
        g_main_context_iteration(NULL, TRUE);
    assert_null(seen.l);
    iterate_nonblocking(100);
    assert_int_equal(seen.fds->len, 1);
    assert_int_equal(test_fd_readable(lfd), 1); /* the second still queued */
    seen_clear(&seen);
    close(c1);
    close(c2);
    close(lfd);
}

/* (c) Out of descriptors the pending connection is shed (trouble says so,
 * no pause), the client sees it closed, and with descriptors back the
 * next one is accepted. */
static void test_shed_no_pause(void **state)
{
    (void)state;
    guint16 port;
    int lfd = test_loopback_listener(&port);
    assert_true(ddm_accept_reserve());
    seen_init(&seen);
    seen.l = ddm_listener_new(lfd, &ops, &seen);
    iterate_nonblocking(2); /* the loop's own descriptors made before the limit */
    int cl = test_loopback_client(port);

    TestFdLimit al;
    test_fd_limit_enter(&al);
    while (seen.n_trouble == 0)
        g_main_context_iteration(NULL, TRUE);
    test_fd_limit_leave(&al);

    assert_int_equal(seen.n_trouble, 1);
    assert_int_equal(seen.last_r, DDM_ACCEPT_SHED);
    assert_int_equal(seen.last_err, EMFILE);
    assert_int_equal(seen.last_paused_ms, 0);
    assert_false(ddm_listener_paused(seen.l));
    assert_int_equal(seen.fds->len, 0);
    test_assert_closed_by_peer(cl);

    int cl2 = test_loopback_client(port);
    while (seen.fds->len == 0)
        g_main_context_iteration(NULL, TRUE);
    assert_int_equal(seen.fds->len, 1);
    assert_int_equal(g_array_index(seen.peer_ports, guint16, 0), local_port(cl2));
    assert_int_equal(seen.n_trouble, 1);
    close(cl2);
    close(cl);
    seen_clear(&seen);
    close(lfd);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_teardown(test_accepts_and_hands_over, teardown),
        cmocka_unit_test_teardown(test_error_pauses, teardown),
        cmocka_unit_test_teardown(test_backoff_resets_after_accept, teardown),
        cmocka_unit_test_teardown(test_backoff_resets_when_quiet, teardown),
        cmocka_unit_test_teardown(test_free_from_trouble, teardown),
        cmocka_unit_test_teardown(test_free_from_accept, teardown),
        cmocka_unit_test_teardown(test_free_from_pause_try, teardown),
        cmocka_unit_test_teardown(test_shed_no_pause, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
