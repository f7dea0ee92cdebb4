/* SPDX-License-Identifier: Apache-2.0
 *
 * Unit tests of ddmon-simvm's simulated Android device (tools/simvm/adb_device.c)
 * driven as the adb server drives it: a TCP client on the device's port
 * speaking the transport protocol, the main context iterated by hand.
 * Covers the CNXN exchange, refusing anything before CNXN and malformed
 * messages, track-jdwp (initial list, one WRTE in flight until OKAY, the
 * latest list after a change), jdwp:PID bridged to a VM (handshake and a
 * JDWP reply through WRTE/OKAY, second client dropped, CLSE frees the VM),
 * unknown pids and services, getprop, track-app at API 31, and pids dealt
 * round-robin over two devices.
 */
#define _GNU_SOURCE 1 /* memmem */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include <errno.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <unistd.h>

#include "adb_device.h"
#include "adb_msg.h"
#include "simvm.h"

#define WAIT_MS 10000 /* positive waits end as soon as the answer is there */

typedef struct Fixture {
    SimConfig cfg;
    SimWorld *w;
    SimAdbSetup *adb;
    uint32_t pids[3];
    guint n_pids;
} Fixture;

typedef struct Client {
    int fd;
    GByteArray *in;
    gboolean eof;
} Client;

typedef struct Msg {
    SimAdbHeader h;
    GByteArray *data;
} Msg;

static void pump(int ms)
{
    gint64 end = g_get_monotonic_time() + (gint64)ms * 1000;

    while (g_get_monotonic_time() < end)
        if (!g_main_context_iteration(NULL, FALSE))
            g_usleep(500);
}

static Fixture *fixture_n(unsigned n_vms, unsigned n_devices)
{
    Fixture *f = g_new0(Fixture, 1);
    GError *err = NULL;
    GArray *pids;
    unsigned i;

    sim_config_init(&f->cfg);
    f->cfg.vms = n_vms;
    f->cfg.no_tcp = TRUE;
    f->cfg.thread_activity_ms = 0;
    f->w = sim_world_new(&f->cfg);
    assert_true(sim_world_start(f->w, &err));
    f->adb = sim_adb_setup_new();
    for (i = 0; i < n_devices; i++)
        sim_adb_setup_add_device(f->adb, 0, NULL);
    assert_true(sim_adb_setup_start(f->adb, f->w, &err));
    assert_int_equal(sim_adb_setup_n_devices(f->adb), n_devices);
    pids = sim_world_list_pids(f->w);
    f->n_pids = MIN(pids->len, G_N_ELEMENTS(f->pids));
    for (i = 0; i < f->n_pids; i++)
        f->pids[i] = g_array_index(pids, uint32_t, i);
    g_array_unref(pids);
    return f;
}

static int setup(void **state)
{
    *state = fixture_n(2, 1);
    return 0;
}

static int teardown(void **state)
{
    Fixture *f = *state;

    sim_adb_setup_free(f->adb);
    pump(20);
    sim_world_free(f->w);
    sim_config_clear(&f->cfg);
    g_free(f);
    return 0;
}

static Client *client_new(Fixture *f, guint device)
{
    Client *c = g_new0(Client, 1);
    struct sockaddr_in sa;

    memset(&sa, 0, sizeof sa);
    sa.sin_family = AF_INET;
    sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    sa.sin_port = htons(sim_adb_setup_device_port(f->adb, device));
    c->fd = socket(AF_INET, SOCK_STREAM, 0);
    assert_true(c->fd >= 0);
    assert_int_equal(connect(c->fd, (struct sockaddr *)&sa, sizeof sa), 0);
    c->in = g_byte_array_new();
    pump(10);
    return c;
}

static void client_free(Client *c)
{
    close(c->fd);
    g_byte_array_unref(c->in);
    g_free(c);
    pump(10);
}

static void send_raw(Client *c, const void *p, size_t n)
{
    assert_int_equal(send(c->fd, p, n, MSG_NOSIGNAL), (ssize_t)n);
}

static void send_msg(Client *c, uint32_t cmd, uint32_t a0, uint32_t a1, const void *data, size_t len)
{
    GByteArray *b = g_byte_array_new();

    sim_adb_msg_append(b, cmd, a0, a1, data, len);
    send_raw(c, b->data, b->len);
    g_byte_array_unref(b);
}

static void send_str(Client *c, uint32_t cmd, uint32_t a0, uint32_t a1, const char *s)
{
    send_msg(c, cmd, a0, a1, s, strlen(s) + 1);
}

/* Read what is there without blocking. */
static void client_poll(Client *c)
{
    uint8_t buf[8192];

    for (;;) {
        ssize_t n = recv(c->fd, buf, sizeof buf, MSG_DONTWAIT);
        if (n > 0) {
            g_byte_array_append(c->in, buf, (guint)n);
            continue;
        }
        if (n == 0 || (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR))
            c->eof = TRUE;
        return;
    }
}

/* The next message within @ms, or FALSE. */
static gboolean recv_msg(Client *c, Msg *m, int ms)
{
    gint64 end = g_get_monotonic_time() + (gint64)ms * 1000;

    for (;;) {
        const uint8_t *data;
        size_t used;
        SimAdbMsgStatus st;

        client_poll(c);
        st = sim_adb_msg_take(c->in->data, c->in->len, SIM_ADB_MAX_PAYLOAD_ACCEPTED, &m->h, &data, &used);
        assert_true(st == SIM_ADB_MSG_OK || st == SIM_ADB_MSG_NEED_MORE);
        if (st == SIM_ADB_MSG_OK) {
            m->data = g_byte_array_new();
            g_byte_array_append(m->data, data, m->h.data_length);
            g_byte_array_remove_range(c->in, 0, (guint)used);
            return TRUE;
        }
        if (c->eof || g_get_monotonic_time() >= end)
            return FALSE;
        if (!g_main_context_iteration(NULL, FALSE))
            g_usleep(500);
    }
}

static void msg_clear(Msg *m)
{
    if (m->data)
        g_byte_array_unref(m->data);
    m->data = NULL;
}

static void expect(Client *c, Msg *m, uint32_t cmd)
{
    assert_true(recv_msg(c, m, WAIT_MS));
    if (m->h.command != cmd)
        print_message("got %s, wanted %s\n", sim_adb_command_name(m->h.command), sim_adb_command_name(cmd));
    assert_int_equal(m->h.command, cmd);
}

/* TRUE once the device closed the connection (within @ms). */
static gboolean closed_within(Client *c, int ms)
{
    gint64 end = g_get_monotonic_time() + (gint64)ms * 1000;

    while (g_get_monotonic_time() < end) {
        client_poll(c);
        if (c->eof)
            return TRUE;
        if (!g_main_context_iteration(NULL, FALSE))
            g_usleep(500);
    }
    return FALSE;
}

static gboolean vm_idle_within(SimVm *vm, int ms)
{
    gint64 end = g_get_monotonic_time() + (gint64)ms * 1000;

    while (sim_vm_is_busy(vm)) {
        if (g_get_monotonic_time() >= end)
            return FALSE;
        if (!g_main_context_iteration(NULL, FALSE))
            g_usleep(500);
    }
    return TRUE;
}

static void handshake(Client *c)
{
    Msg m = { 0 };
    static const char host_banner[] = "host::features=shell_v2,cmd";

    send_msg(c, SIM_ADB_CNXN, 0x01000001, 1024 * 1024, host_banner, sizeof host_banner - 1);
    expect(c, &m, SIM_ADB_CNXN);
    assert_int_equal(m.h.arg0, SIM_ADB_VERSION);
    assert_int_equal(m.h.arg1, SIM_ADB_DEVICE_MAX_PAYLOAD);
    g_byte_array_append(m.data, (const guint8 *)"", 1);
    assert_true(g_str_has_prefix((const char *)m.data->data, "device::"));
    assert_non_null(strstr((const char *)m.data->data, "ro.product.model=ddmon-simvm"));
    msg_clear(&m);
}

/* OPEN @service as stream @remote; returns the device's local id (0 on CLSE). */
static uint32_t open_stream(Client *c, uint32_t remote, const char *service)
{
    Msg m = { 0 };
    uint32_t local;

    send_str(c, SIM_ADB_OPEN, remote, 0, service);
    assert_true(recv_msg(c, &m, WAIT_MS));
    assert_int_equal(m.h.arg1, remote);
    if (m.h.command == SIM_ADB_CLSE) {
        assert_int_equal(m.h.arg0, 0);
        msg_clear(&m);
        return 0;
    }
    assert_int_equal(m.h.command, SIM_ADB_OKAY);
    local = m.h.arg0;
    assert_int_not_equal(local, 0);
    msg_clear(&m);
    return local;
}

static char *pid_list(const uint32_t *pids, guint n)
{
    GByteArray *b = g_byte_array_new();
    char *s;

    sim_adb_append_pid_frame(b, pids, n);
    g_byte_array_append(b, (const guint8 *)"", 1);
    s = g_strdup((const char *)b->data);
    g_byte_array_unref(b);
    return s;
}

/* Binary-safe substring test (protobuf data holds NULs). */
static gboolean has_text(const GByteArray *b, const char *text)
{
    return memmem(b->data, b->len, text, strlen(text)) != NULL;
}

static void assert_wrte_text(const Msg *m, uint32_t local, uint32_t remote, const char *text)
{
    assert_int_equal(m->h.command, SIM_ADB_WRTE);
    assert_int_equal(m->h.arg0, local);
    assert_int_equal(m->h.arg1, remote);
    assert_int_equal(m->data->len, strlen(text));
    assert_memory_equal(m->data->data, text, strlen(text));
}

/* ------------------------------------------------------------------ tests */

static void test_cnxn(void **state)
{
    Client *c = client_new(*state, 0);

    handshake(c);
    /* a second CNXN resets the transport and is answered again */
    handshake(c);
    client_free(c);
}

static void test_open_before_cnxn_closes(void **state)
{
    Client *c = client_new(*state, 0);

    send_str(c, SIM_ADB_OPEN, 1, 0, "track-jdwp");
    assert_true(closed_within(c, WAIT_MS));
    client_free(c);
    /* the device still accepts the next server */
    c = client_new(*state, 0);
    handshake(c);
    client_free(c);
}

static void test_malformed_closes(void **state)
{
    static const struct {
        const char *name;
        size_t offset;
        uint8_t value;
    } table[] = {
        { "magic", 20, 0x00 },
        { "length above 1 MiB", 15, 0x7f },
        { "checksum", 16, 0x01 },
    };
    size_t i;

    for (i = 0; i < G_N_ELEMENTS(table); i++) {
        Client *c = client_new(*state, 0);
        GByteArray *b = g_byte_array_new();

        print_message("malformed: %s\n", table[i].name);
        handshake(c);
        sim_adb_msg_append(b, SIM_ADB_OPEN, 5, 0, (const uint8_t *)"track-jdwp", 11);
        b->data[table[i].offset] = table[i].value;
        send_raw(c, b->data, b->len);
        assert_true(closed_within(c, WAIT_MS));
        g_byte_array_unref(b);
        client_free(c);
    }
}

static void test_truncated_then_gone(void **state)
{
    Client *c = client_new(*state, 0);
    GByteArray *b = g_byte_array_new();

    handshake(c);
    sim_adb_msg_append(b, SIM_ADB_OPEN, 5, 0, (const uint8_t *)"track-jdwp", 11);
    send_raw(c, b->data, 30); /* header and a bit */
    assert_false(closed_within(c, 100)); /* the device waits for the rest */
    g_byte_array_unref(b);
    client_free(c); /* the device drops the half message (ASan checks the rest) */
}

static void test_track_jdwp_flow_control(void **state)
{
    Fixture *f = *state;
    Client *c = client_new(f, 0);
    Msg m = { 0 };
    uint32_t local;
    char *want;

    handshake(c);
    local = open_stream(c, 7, "track-jdwp");
    expect(c, &m, SIM_ADB_WRTE);
    want = pid_list(f->pids, 2);
    assert_wrte_text(&m, local, 7, want);
    g_free(want);
    msg_clear(&m);

    /* a VM goes while our OKAY is still owed: nothing may be sent yet */
    sim_vm_exit(sim_world_find_pid(f->w, f->pids[0]), 0);
    assert_false(recv_msg(c, &m, 200));
    send_msg(c, SIM_ADB_OKAY, 7, local, NULL, 0);
    expect(c, &m, SIM_ADB_WRTE);
    want = pid_list(&f->pids[1], 1);
    assert_wrte_text(&m, local, 7, want);
    g_free(want);
    msg_clear(&m);
    send_msg(c, SIM_ADB_OKAY, 7, local, NULL, 0);
    assert_false(recv_msg(c, &m, 100));

    /* our CLSE ends it quietly */
    send_msg(c, SIM_ADB_CLSE, 7, local, NULL, 0);
    assert_false(recv_msg(c, &m, 100));
    client_free(c);
}

static void test_one_shot_jdwp(void **state)
{
    Fixture *f = *state;
    Client *c = client_new(f, 0);
    Msg m = { 0 };
    uint32_t local;
    char *want = g_strdup_printf("%u\n%u\n", f->pids[0], f->pids[1]);

    handshake(c);
    local = open_stream(c, 3, "jdwp");
    expect(c, &m, SIM_ADB_WRTE);
    assert_wrte_text(&m, local, 3, want);
    msg_clear(&m);
    send_msg(c, SIM_ADB_OKAY, 3, local, NULL, 0);
    expect(c, &m, SIM_ADB_CLSE);
    assert_int_equal(m.h.arg0, local);
    assert_int_equal(m.h.arg1, 3);
    msg_clear(&m);
    g_free(want);
    client_free(c);
}

static void test_jdwp_bridge(void **state)
{
    Fixture *f = *state;
    Client *c = client_new(f, 0);
    Msg m = { 0 };
    uint32_t local, local2;
    char *svc = g_strdup_printf("jdwp:%u", f->pids[1]);
    /* VirtualMachine.Version, id 0x77 */
    static const uint8_t version_cmd[] = { 0, 0, 0, 11, 0, 0, 0, 0x77, 0, 1, 1 };
    GByteArray *reply = g_byte_array_new();
    SimVm *vm = sim_world_find_pid(f->w, f->pids[1]);

    handshake(c);
    local = open_stream(c, 11, svc);
    pump(20);
    assert_true(sim_vm_is_busy(vm));
    send_msg(c, SIM_ADB_WRTE, 11, local, "JDWP-Handshake", 14);
    expect(c, &m, SIM_ADB_OKAY); /* our data reached the VM */
    assert_int_equal(m.h.arg0, local);
    msg_clear(&m);
    expect(c, &m, SIM_ADB_WRTE);
    assert_wrte_text(&m, local, 11, "JDWP-Handshake");
    msg_clear(&m);
    send_msg(c, SIM_ADB_OKAY, 11, local, NULL, 0);

    send_msg(c, SIM_ADB_WRTE, 11, local, version_cmd, sizeof version_cmd);
    expect(c, &m, SIM_ADB_OKAY);
    msg_clear(&m);
    /* the reply may come in several WRTEs, each needing our OKAY */
    while (reply->len < 11 || reply->len < ((uint32_t)reply->data[0] << 24 | (uint32_t)reply->data[1] << 16 |
                                            (uint32_t)reply->data[2] << 8 | reply->data[3])) {
        expect(c, &m, SIM_ADB_WRTE);
        assert_true(m.data->len <= SIM_ADB_DEVICE_MAX_PAYLOAD);
        g_byte_array_append(reply, m.data->data, m.data->len);
        msg_clear(&m);
        send_msg(c, SIM_ADB_OKAY, 11, local, NULL, 0);
    }
    assert_int_equal(reply->data[7], 0x77);
    assert_int_equal(reply->data[8], 0x80); /* reply flag */
    assert_int_equal(reply->data[9], 0);    /* no error */
    assert_int_equal(reply->data[10], 0);

    /* a second jdwp:PID on the same VM: accepted, then dropped by the VM (as ART) */
    local2 = open_stream(c, 12, svc);
    assert_int_not_equal(local2, 0);
    expect(c, &m, SIM_ADB_CLSE);
    assert_int_equal(m.h.arg0, local2);
    assert_int_equal(m.h.arg1, 12);
    msg_clear(&m);
    assert_true(sim_vm_is_busy(vm));

    /* our CLSE ends the VM's connection */
    send_msg(c, SIM_ADB_CLSE, 11, local, NULL, 0);
    assert_true(vm_idle_within(vm, WAIT_MS));
    g_byte_array_unref(reply);
    g_free(svc);
    client_free(c);
}

static void test_jdwp_bad_pids(void **state)
{
    Fixture *f = *state;
    Client *c = client_new(f, 0);
    static const char *const bad[] = { "jdwp:", "jdwp:0", "jdwp:abc", "jdwp:-5", "jdwp:99999999999", "jdwp:4000001" };
    size_t i;

    handshake(c);
    for (i = 0; i < G_N_ELEMENTS(bad); i++) {
        print_message("%s\n", bad[i]);
        assert_int_equal(open_stream(c, 20 + (uint32_t)i, bad[i]), 0);
    }
    /* a pid that exited is refused too */
    sim_vm_exit(sim_world_find_pid(f->w, f->pids[0]), 0);
    pump(20);
    {
        char *svc = g_strdup_printf("jdwp:%u", f->pids[0]);
        assert_int_equal(open_stream(c, 40, svc), 0);
        g_free(svc);
    }
    client_free(c);
}

static void test_services(void **state)
{
    Client *c = client_new(*state, 0);
    Msg m = { 0 };
    uint32_t local;
    static const char *const refused[] = { "track-app", "sync:", "shell:", "reboot:", "framebuffer:", "tcpip:5555" };
    size_t i;

    handshake(c);
    local = open_stream(c, 30, "shell:getprop ro.build.version.sdk");
    expect(c, &m, SIM_ADB_WRTE);
    assert_wrte_text(&m, local, 30, "30\n");
    msg_clear(&m);
    send_msg(c, SIM_ADB_OKAY, 30, local, NULL, 0);
    expect(c, &m, SIM_ADB_CLSE);
    msg_clear(&m);

    local = open_stream(c, 31, "exec:getprop ro.product.cpu.abi");
    expect(c, &m, SIM_ADB_WRTE);
    assert_wrte_text(&m, local, 31, "x86_64\n");
    msg_clear(&m);
    /* the server may close first: no CLSE back for a stream it closed */
    send_msg(c, SIM_ADB_CLSE, 31, local, NULL, 0);
    assert_false(recv_msg(c, &m, 100));

    for (i = 0; i < G_N_ELEMENTS(refused); i++) {
        print_message("%s\n", refused[i]);
        assert_int_equal(open_stream(c, 50 + (uint32_t)i, refused[i]), 0);
    }
    /* OPEN without a name or with remote id 0 */
    send_msg(c, SIM_ADB_OPEN, 60, 0, "\0", 1);
    expect(c, &m, SIM_ADB_CLSE);
    assert_int_equal(m.h.arg1, 60);
    msg_clear(&m);
    send_str(c, SIM_ADB_OPEN, 0, 0, "track-jdwp");
    assert_false(recv_msg(c, &m, 100));
    /* messages for unknown streams are ignored */
    send_msg(c, SIM_ADB_WRTE, 70, 999, "x", 1);
    send_msg(c, SIM_ADB_OKAY, 70, 999, NULL, 0);
    send_msg(c, SIM_ADB_CLSE, 70, 999, NULL, 0);
    assert_false(recv_msg(c, &m, 100));
    assert_false(c->eof);
    client_free(c);
}

/* API 31+: track-app is offered (and announced), a protobuf list re-sent on change. */
static void test_track_app(void **state)
{
    Fixture *f = g_new0(Fixture, 1);
    GError *err = NULL;
    GArray *pids;
    Client *c;
    Msg m = { 0 };
    uint32_t local;
    char head[5];
    char *gone, *kept;

    (void)state;
    sim_config_init(&f->cfg);
    f->cfg.vms = 2;
    f->cfg.no_tcp = TRUE;
    f->cfg.thread_activity_ms = 0;
    f->w = sim_world_new(&f->cfg);
    assert_true(sim_world_start(f->w, &err));
    f->adb = sim_adb_setup_new();
    sim_adb_setup_add_device(f->adb, 0, "sdk31");
    sim_adb_setup_set_sdk(f->adb, 31);
    assert_true(sim_adb_setup_start(f->adb, f->w, &err));
    pids = sim_world_list_pids(f->w);
    f->pids[0] = g_array_index(pids, uint32_t, 0);
    f->pids[1] = g_array_index(pids, uint32_t, 1);
    g_array_unref(pids);

    c = client_new(f, 0);
    send_msg(c, SIM_ADB_CNXN, 0x01000001, 4096, "host::", 6);
    expect(c, &m, SIM_ADB_CNXN);
    g_byte_array_append(m.data, (const guint8 *)"", 1);
    assert_non_null(strstr((const char *)m.data->data, "features=track_app"));
    msg_clear(&m);

    local = open_stream(c, 9, "track-app");
    assert_int_not_equal(local, 0);
    expect(c, &m, SIM_ADB_WRTE);
    memcpy(head, m.data->data, 4);
    head[4] = 0;
    assert_int_equal(strtoul(head, NULL, 16), m.data->len - 4);
    /* two ProcessEntry messages (field 1, length-delimited) */
    assert_int_equal(m.data->data[4], 0x0a);
    assert_true(has_text(m.data, sim_vm_app_name(sim_world_find_pid(f->w, f->pids[1]))));
    assert_true(has_text(m.data, "x86_64"));
    msg_clear(&m);
    send_msg(c, SIM_ADB_OKAY, 9, local, NULL, 0);
    /* nothing changed: the periodic re-check sends nothing */
    assert_false(recv_msg(c, &m, 1300));
    gone = g_strdup(sim_vm_app_name(sim_world_find_pid(f->w, f->pids[1])));
    kept = g_strdup(sim_vm_app_name(sim_world_find_pid(f->w, f->pids[0])));
    sim_vm_exit(sim_world_find_pid(f->w, f->pids[1]), 0);
    expect(c, &m, SIM_ADB_WRTE);
    assert_false(has_text(m.data, gone));
    assert_true(has_text(m.data, kept));
    msg_clear(&m);
    g_free(gone);
    g_free(kept);
    client_free(c);
    teardown((void **)&f);
}

static void test_two_devices_round_robin(void **state)
{
    Fixture *f = fixture_n(3, 2);
    Client *c0, *c1;
    Msg m = { 0 };
    uint32_t l0, l1, even[2];
    char *want;

    (void)state;
    c0 = client_new(f, 0);
    c1 = client_new(f, 1);
    handshake(c0);
    handshake(c1);
    l0 = open_stream(c0, 1, "track-jdwp");
    l1 = open_stream(c1, 1, "track-jdwp");
    expect(c0, &m, SIM_ADB_WRTE);
    even[0] = f->pids[0];
    even[1] = f->pids[2];
    want = pid_list(even, 2);
    assert_wrte_text(&m, l0, 1, want);
    g_free(want);
    msg_clear(&m);
    expect(c1, &m, SIM_ADB_WRTE);
    want = pid_list(&f->pids[1], 1);
    assert_wrte_text(&m, l1, 1, want);
    g_free(want);
    msg_clear(&m);
    /* device 1 does not offer device 0's VMs */
    want = g_strdup_printf("jdwp:%u", f->pids[0]);
    assert_int_equal(open_stream(c1, 2, want), 0);
    g_free(want);
    client_free(c0);
    client_free(c1);
    teardown((void **)&f);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_cnxn, setup, teardown),
        cmocka_unit_test_setup_teardown(test_open_before_cnxn_closes, setup, teardown),
        cmocka_unit_test_setup_teardown(test_malformed_closes, setup, teardown),
        cmocka_unit_test_setup_teardown(test_truncated_then_gone, setup, teardown),
        cmocka_unit_test_setup_teardown(test_track_jdwp_flow_control, setup, teardown),
        cmocka_unit_test_setup_teardown(test_one_shot_jdwp, setup, teardown),
        cmocka_unit_test_setup_teardown(test_jdwp_bridge, setup, teardown),
        cmocka_unit_test_setup_teardown(test_jdwp_bad_pids, setup, teardown),
        cmocka_unit_test_setup_teardown(test_services, setup, teardown),
        cmocka_unit_test(test_track_app),
        cmocka_unit_test(test_two_devices_round_robin),
    };
    g_log_set_always_fatal(G_LOG_LEVEL_CRITICAL);
    return cmocka_run_group_tests_name("adbdevice", tests, NULL, NULL);
}
