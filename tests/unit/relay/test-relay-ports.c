/* SPDX-License-Identifier: Apache-2.0
 *
 * Unit tests of the relay's fixed debugger ports (--connect
 * HOST:PORT=DEBUGPORT, core/relay/relay_ports.c): the port is kept under
 * the key discovery gives that VM (ddm_target_tcp_key: an IPv6 literal in
 * brackets, the port without leading zeros), not under the spec as typed,
 * so the VM finds its port; a spec discovery ignores gets no port. A real
 * relay (ddm_relay_new) on loopback ports the kernel said were free.
 */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cmocka.h>

#include "core/config/config.h"
#include "core/relay/relay-private.h"
#include "core/session/monitor.h"
#include "core/transport/target.h"

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

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_fixed_port_under_discovery_key),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
