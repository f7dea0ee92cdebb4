/* SPDX-License-Identifier: Apache-2.0
 *
 * Unit tests of the relay's fixed debugger ports (--connect
 * HOST:PORT=DEBUGPORT, core/relay/relay_ports.c): the port is kept under
 * the key discovery gives that VM (ddm_target_tcp_key: an IPv6 literal in
 * brackets, the port without leading zeros), not under the spec as typed,
 * so the VM finds its port; a spec discovery ignores gets no port. And
 * the handshake deadline of a debugger connection (relay_debugger.c): one
 * that has not sent its whole handshake in time is closed, one that has
 * (held for its VM) is not, also when it came in two reads or still waits
 * unread in the socket when the deadline runs; a connection that leaves
 * before its deadline takes the deadline's timer with it. A real relay
 * (ddm_relay_new) on loopback ports the kernel said were free.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cmocka.h>

#include "core/config/config.h"
#include "core/loop/timer.h"
#include "core/loop/watch.h"
#include "core/relay/relay-private.h"
#include "core/session/monitor.h"
#include "core/transport/target.h"
#include "core/wire/jdwp.h"
#include "tests/harness/fd-limit.h" /* test_loopback_client */

/* @n loopback ports free at once (bound together, then closed). */
static void free_ports(guint16 *ports, int n)
{
    int fds[8];
    assert_true(n <= 8);
    for (int i = 0; i < n; i++) {
        struct sockaddr_in sa = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
        socklen_t salen = sizeof sa;
        fds[i] = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
        assert_true(fds[i] >= 0);
        assert_int_equal(bind(fds[i], (struct sockaddr *)&sa, sizeof sa), 0);
        assert_int_equal(getsockname(fds[i], (struct sockaddr *)&sa, &salen), 0);
        ports[i] = ntohs(sa.sin_port);
    }
    for (int i = 0; i < n; i++)
        close(fds[i]);
}

static void test_fixed_port_under_discovery_key(void **state)
{
    (void)state;
    guint16 p[3];
    free_ports(p, 3);
    DdmConfig *cfg = ddm_config_new();
    DdmSessionEvents events = {0};
    g_autofree char *v6 = g_strdup_printf("::1:8000=%u", p[0]);
    g_autofree char *zeros = g_strdup_printf("127.0.0.1:08001=%u", p[1]);
    g_autofree char *no_host = g_strdup_printf(":8002=%u", p[2]); /* discovery ignores it */
    assert_true(ddm_config_add_connect(cfg, v6, NULL));
    assert_true(ddm_config_add_connect(cfg, zeros, NULL));
    assert_true(ddm_config_add_connect(cfg, no_host, NULL));
    DdmMonitor *mon = ddm_monitor_new(cfg, &events, NULL);
    DdmRelay *relay = ddm_relay_new(mon, NULL);
    g_autofree char *k6 = ddm_target_tcp_key("::1", 8000);
    g_autofree char *k4 = ddm_target_tcp_key("127.0.0.1", 8001);

    assert_string_equal(k6, "[::1]:8000");
    assert_string_equal(k4, "127.0.0.1:8001");
    Endpoint *e6 = g_hash_table_lookup(relay->fixed_by_key, k6);
    Endpoint *e4 = g_hash_table_lookup(relay->fixed_by_key, k4);
    assert_non_null(e6);
    assert_non_null(e4);
    assert_int_equal(e6->port, p[0]);
    assert_int_equal(e4->port, p[1]);
    assert_string_equal(e6->key, k6);
    assert_string_equal(e4->key, k4);
    assert_int_equal(g_hash_table_size(relay->fixed_by_key), 2);

    ddm_relay_free(relay);
    ddm_monitor_free(mon);
    ddm_config_free(cfg);
}

/* TRUE once the relay closed @fd's connection (end of stream or reset);
 * FALSE while it is open and has sent nothing (no echo before attach). */
static gboolean closed_by_relay(int fd)
{
    guint8 buf[64];
    ssize_t n = recv(fd, buf, sizeof buf, MSG_DONTWAIT);
    if (n == 0 || (n < 0 && errno == ECONNRESET))
        return TRUE;
    assert_true(n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK));
    return FALSE;
}

/* Debuggers of @relay in @state. */
static guint count_in(DdmRelay *relay, DebuggerState state)
{
    guint n = 0;
    for (guint i = 0; i < relay->debuggers->len; i++)
        n += ((Debugger *)relay->debuggers->pdata[i])->state == state;
    return n;
}

/* A connection that sends nothing, and one that sends part of the
 * handshake, are closed once the handshake timeout passes; a debugger
 * whose handshake is in (held: its VM is not up, for up to 10 s) stays.
 * No clock in the test: the loop blocks until the relay closes the two.
 * The held one connected first, so a deadline of its own still armed
 * would have fired by then; and without any deadline the loop goes on
 * until its 10 s hold closes it, which fails the test. */
static void test_handshake_deadline(void **state)
{
    (void)state;
    guint16 p[1];
    free_ports(p, 1);
    DdmConfig *cfg = ddm_config_new();
    DdmSessionEvents events = {0};
    cfg->selected_port = 0;
    cfg->handshake_timeout_ms = 100;
    g_autofree char *spec = g_strdup_printf("127.0.0.1:8000=%u", p[0]);
    assert_true(ddm_config_add_connect(cfg, spec, NULL));
    DdmMonitor *mon = ddm_monitor_new(cfg, &events, NULL);
    DdmRelay *relay = ddm_relay_new(mon, NULL);
    assert_non_null(relay);

    int good = test_loopback_client(p[0]);
    assert_int_equal(send(good, DDM_JDWP_HANDSHAKE, DDM_JDWP_HANDSHAKE_LEN, MSG_NOSIGNAL),
                     DDM_JDWP_HANDSHAKE_LEN);
    while (count_in(relay, DBG_HELD) == 0)
        g_main_context_iteration(NULL, TRUE);
    Debugger *held = relay->debuggers->pdata[0];
    assert_false(ddm_timer_armed(&held->handshake_timer));
    assert_true(ddm_timer_armed(&held->hold_timer));

    int silent = test_loopback_client(p[0]);
    int partial = test_loopback_client(p[0]);
    assert_int_equal(send(partial, DDM_JDWP_HANDSHAKE, 9, MSG_NOSIGNAL), 9);
    gboolean silent_closed = FALSE, partial_closed = FALSE;
    while (!silent_closed || !partial_closed) {
        g_main_context_iteration(NULL, TRUE);
        assert_false(closed_by_relay(good)); /* before the other two: see above */
        silent_closed = silent_closed || closed_by_relay(silent);
        partial_closed = partial_closed || closed_by_relay(partial);
    }
    assert_int_equal(relay->debuggers->len, 1);
    assert_int_equal(count_in(relay, DBG_HELD), 1);

    close(good);
    close(silent);
    close(partial);
    ddm_relay_free(relay);
    ddm_monitor_free(mon);
    ddm_config_free(cfg);
}

/* A relay whose one fixed debugger port (*port) reaches a --connect
 * target that is never up, with a handshake timeout of @timeout_ms. */
typedef struct {
    DdmConfig *cfg;
    DdmMonitor *mon;
    DdmRelay *relay;
    guint16 port;
} DeadlineRelay;

static void deadline_relay(DeadlineRelay *t, guint timeout_ms)
{
    static DdmSessionEvents events;
    free_ports(&t->port, 1);
    t->cfg = ddm_config_new();
    t->cfg->selected_port = 0;
    t->cfg->handshake_timeout_ms = timeout_ms;
    g_autofree char *spec = g_strdup_printf("127.0.0.1:8000=%u", t->port);
    assert_true(ddm_config_add_connect(t->cfg, spec, NULL));
    t->mon = ddm_monitor_new(t->cfg, &events, NULL);
    t->relay = ddm_relay_new(t->mon, NULL);
    assert_non_null(t->relay);
}

static void deadline_relay_free(DeadlineRelay *t)
{
    ddm_relay_free(t->relay);
    ddm_monitor_free(t->mon);
    ddm_config_free(t->cfg);
}

/* The loop runs until @relay has @n debuggers. */
static void until_debuggers(DdmRelay *relay, guint n)
{
    while (relay->debuggers->len != n)
        g_main_context_iteration(NULL, TRUE);
}

/* Connections that leave before their deadline (one closes, one sends
 * something else than the handshake) take their deadline's timer with
 * them: once they are freed, as many timers are armed as before they
 * came. Without the cancel in ddm_relay_debugger_close the freed
 * Debuggers' timers stay in the heap (and would fire into freed memory).
 * The deadline is far off: it never fires here. */
static void test_handshake_deadline_goes_with_close(void **state)
{
    (void)state;
    DeadlineRelay t;
    deadline_relay(&t, 600000);
    guint before = ddm_timer_count();

    int gone = test_loopback_client(t.port);
    int wrong = test_loopback_client(t.port);
    until_debuggers(t.relay, 2);
    assert_int_equal(ddm_timer_count(), before + 2); /* their deadlines */
    close(gone);
    static const char http[] = "GET / HTTP/1.1\r\n\r\n";
    assert_int_equal(send(wrong, http, sizeof http - 1, MSG_NOSIGNAL), (ssize_t)(sizeof http - 1));
    until_debuggers(t.relay, 0);
    /* Closed, not yet freed: only the reap timer is new. (Checked before
     * the free: a timer left in the heap is read from freed memory at the
     * next dispatch.) */
    assert_int_equal(ddm_timer_count(), before + ddm_timer_armed(&t.relay->reap_timer));
    while (t.relay->dead->len) /* freed at the next iteration (reap_dead) */
        g_main_context_iteration(NULL, TRUE);
    assert_int_equal(ddm_timer_count(), before);

    close(wrong);
    deadline_relay_free(&t);
}

/* A handshake that comes in two reads (9 bytes, then the other 5) is in:
 * the debugger is held for its VM (not up) and its deadline is off.
 * Without the cancel where the handshake completes, the deadline stays
 * armed. */
static void test_handshake_in_two_reads(void **state)
{
    (void)state;
    DeadlineRelay t;
    deadline_relay(&t, 600000);

    int fd = test_loopback_client(t.port);
    assert_int_equal(send(fd, DDM_JDWP_HANDSHAKE, 9, MSG_NOSIGNAL), 9);
    until_debuggers(t.relay, 1);
    Debugger *d = t.relay->debuggers->pdata[0];
    while (ddm_jdwp_reader_pending(d->reader) < 9)
        g_main_context_iteration(NULL, TRUE);
    assert_int_equal(d->state, DBG_HANDSHAKE);
    assert_true(ddm_timer_armed(&d->handshake_timer));
    assert_int_equal(send(fd, DDM_JDWP_HANDSHAKE + 9, DDM_JDWP_HANDSHAKE_LEN - 9, MSG_NOSIGNAL),
                     DDM_JDWP_HANDSHAKE_LEN - 9);
    while (d->state == DBG_HANDSHAKE)
        g_main_context_iteration(NULL, TRUE);
    assert_int_equal(d->state, DBG_HELD);
    assert_false(ddm_timer_armed(&d->handshake_timer));
    assert_true(ddm_timer_armed(&d->hold_timer));
    assert_false(closed_by_relay(fd));

    close(fd);
    deadline_relay_free(&t);
}

/* The deadline runs while the whole handshake waits unread in the socket
 * (a stalled loop sees both in one iteration, and the timer may run
 * before the watch): the handshake is read first, and the debugger is
 * held, not closed; its watch is gone as a held debugger's is (nothing
 * more is read until it attaches). The deadline's callback is run here by
 * hand, as the timer's dispatch runs it (disarmed first), so the order
 * does not depend on GLib's. Without the read in on_handshake_timeout the
 * debugger is closed. */
static void test_handshake_read_at_deadline(void **state)
{
    (void)state;
    DeadlineRelay t;
    deadline_relay(&t, 600000);
    guint live_before;
    ddm_watch_stats(&live_before, NULL, NULL);

    int fd = test_loopback_client(t.port);
    until_debuggers(t.relay, 1);
    Debugger *d = t.relay->debuggers->pdata[0];
    assert_int_equal(send(fd, DDM_JDWP_HANDSHAKE, DDM_JDWP_HANDSHAKE_LEN, MSG_NOSIGNAL),
                     DDM_JDWP_HANDSHAKE_LEN);
    struct pollfd pfd = {.fd = d->fd, .events = POLLIN};
    assert_int_equal(poll(&pfd, 1, -1), 1); /* it waits in the socket; the loop did not run */
    assert_int_equal(ddm_jdwp_reader_pending(d->reader), 0);
    assert_true(ddm_timer_armed(&d->handshake_timer));
    ddm_timer_cancel(&d->handshake_timer);
    d->handshake_timer.fn(&d->handshake_timer, d->handshake_timer.ud);

    assert_int_equal(d->state, DBG_HELD);
    assert_int_equal(t.relay->debuggers->len, 1);
    assert_true(ddm_timer_armed(&d->hold_timer));
    assert_null(d->in_watch);
    guint live;
    ddm_watch_stats(&live, NULL, NULL);
    assert_int_equal(live, live_before);
    g_main_context_iteration(NULL, FALSE);
    assert_false(closed_by_relay(fd));

    close(fd);
    deadline_relay_free(&t);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_fixed_port_under_discovery_key),
        cmocka_unit_test(test_handshake_deadline),
        cmocka_unit_test(test_handshake_deadline_goes_with_close),
        cmocka_unit_test(test_handshake_in_two_reads),
        cmocka_unit_test(test_handshake_read_at_deadline),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
