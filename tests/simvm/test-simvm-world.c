/* SPDX-License-Identifier: Apache-2.0
 *
 * Unit tests of ddmon-simvm's world, VM and connection state machine,
 * driven the way the simulated adb device drives them: sim_vm_serve_fd()
 * on one end of a socketpair, the main context iterated by hand. Covers
 * the VM-side handshake (ART wants all 14 bytes at once, Dalvik waits),
 * HELO, the APNM race, malformed framing, a hostile length, a second
 * client while one is served, Dispose, EXIT and the pid watchers.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include <errno.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include "core/wire/ddm.h"
#include "simvm-private.h"

typedef struct Fixture {
    SimConfig cfg;
    SimWorld *w;
    int fd;            /* our end */
    DdmJdwpReader *r;
    guint watch;
    int gone, born;
    uint32_t last_gone;
} Fixture;

static void pump(int ms)
{
    gint64 end = g_get_monotonic_time() + (gint64)ms * 1000;

    while (g_get_monotonic_time() < end)
        if (!g_main_context_iteration(NULL, FALSE))
            g_usleep(1000);
}

static void on_pid(SimWorld *w, uint32_t pid, gboolean alive, void *ud)
{
    Fixture *f = ud;

    (void)w;
    if (alive) {
        f->born++;
    } else {
        f->gone++;
        f->last_gone = pid;
    }
}

static Fixture *fixture(SimMode mode, gboolean apnm_race)
{
    Fixture *f = g_new0(Fixture, 1);
    GError *err = NULL;

    sim_config_init(&f->cfg);
    f->cfg.vms = 2;
    f->cfg.no_tcp = TRUE;
    f->cfg.mode = mode;
    f->cfg.apnm_before_echo = apnm_race;
    f->cfg.thread_activity_ms = 0;
    f->w = sim_world_new(&f->cfg);
    f->watch = sim_world_watch_pids(f->w, on_pid, f);
    assert_true(sim_world_start(f->w, &err));
    assert_int_equal(f->born, 2);
    f->fd = -1;
    return f;
}

static void fixture_free(Fixture *f)
{
    if (f->fd >= 0)
        close(f->fd);
    ddm_jdwp_reader_free(f->r);
    sim_world_unwatch_pids(f->w, f->watch);
    sim_world_free(f->w);
    sim_config_clear(&f->cfg);
    pump(5);
    g_free(f);
}

static SimVm *first_vm(Fixture *f)
{
    GArray *pids = sim_world_list_pids(f->w);
    SimVm *vm;

    assert_int_equal(pids->len, 2);
    vm = sim_world_find_pid(f->w, g_array_index(pids, uint32_t, 0));
    g_array_unref(pids);
    assert_non_null(vm);
    return vm;
}

/* Connect our end to @vm; the reader expects the echo first. */
static void connect_vm(Fixture *f, SimVm *vm)
{
    int sv[2];

    assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv), 0);
    f->fd = sv[0];
    sim_vm_serve_fd(vm, sv[1]);
    ddm_jdwp_reader_free(f->r);
    f->r = ddm_jdwp_reader_new(0);
    ddm_jdwp_reader_expect_handshake(f->r);
}

static void send_bytes(Fixture *f, const void *p, size_t n)
{
    assert_int_equal(write(f->fd, p, n), (ssize_t)n);
}

static void send_chunk(Fixture *f, uint32_t id, uint32_t type, const void *data, size_t len)
{
    size_t plen;
    uint8_t *pkt = ddm_chunk_build_packet(id, type, data, len, &plen);

    send_bytes(f, pkt, plen);
    g_free(pkt);
}

/* Read what the VM sent within @ms; returns FALSE on EOF. */
static gboolean drain(Fixture *f, int ms)
{
    gint64 end = g_get_monotonic_time() + (gint64)ms * 1000;

    while (g_get_monotonic_time() < end) {
        struct pollfd p = { f->fd, POLLIN, 0 };
        g_main_context_iteration(NULL, FALSE);
        if (poll(&p, 1, 1) == 1) {
            size_t avail;
            uint8_t *space = ddm_jdwp_reader_space(f->r, 65536, &avail);
            ssize_t n = read(f->fd, space, avail);
            if (n <= 0)
                return FALSE;
            ddm_jdwp_reader_commit(f->r, (size_t)n);
        }
    }
    return TRUE;
}

typedef struct Seen {
    int handshake, discarded, replies, empty, events;
    uint32_t reply_type, reply_id, event_type;
    uint16_t error;
    uint8_t reply_data[512];
    size_t reply_len;
} Seen;

static void collect(Fixture *f, Seen *s)
{
    DdmJdwpPacket pkt;
    DdmJdwpResult res;

    memset(s, 0, sizeof *s);
    while ((res = ddm_jdwp_reader_next(f->r, &pkt)) != DDM_JDWP_NEED_MORE) {
        assert_true(res > 0);
        if (res == DDM_JDWP_HANDSHAKE_OK) {
            s->handshake++;
        } else if (res == DDM_JDWP_DISCARDED) {
            s->discarded++;
        } else if (ddm_jdwp_is_reply(&pkt.header)) {
            s->replies++;
            s->reply_id = pkt.header.id;
            s->error = pkt.header.error;
            if (pkt.data_len == 0) {
                s->empty++;
            } else if (pkt.data_len >= 8) {
                s->reply_type = (uint32_t)pkt.data[0] << 24 | (uint32_t)pkt.data[1] << 16 |
                                (uint32_t)pkt.data[2] << 8 | pkt.data[3];
                s->reply_len = MIN(pkt.data_len - 8, sizeof s->reply_data);
                memcpy(s->reply_data, pkt.data + 8, s->reply_len);
            }
        } else {
            s->events++;
            if (pkt.data_len >= 4)
                s->event_type = (uint32_t)pkt.data[0] << 24 | (uint32_t)pkt.data[1] << 16 |
                                (uint32_t)pkt.data[2] << 8 | pkt.data[3];
            assert_true(pkt.header.id & 0x80000000u); /* ART event ids */
        }
    }
}

static void handshake(Fixture *f)
{
    Seen s;

    send_bytes(f, DDM_JDWP_HANDSHAKE, DDM_JDWP_HANDSHAKE_LEN);
    assert_true(drain(f, 30));
    collect(f, &s);
    assert_int_equal(s.handshake, 1);
}

static void test_simvm_world_helo_over_fd(void **state)
{
    Fixture *f = fixture(SIM_MODE_ART, FALSE);
    SimVm *vm = first_vm(f);
    uint8_t ver[4];
    DdmHelo h;
    Seen s;

    (void)state;
    connect_vm(f, vm);
    assert_true(sim_vm_is_busy(vm));
    handshake(f);
    ddm_helo_request(ver, 1);
    send_chunk(f, 0x40000001, DDM_CHUNK_HELO, ver, 4);
    assert_true(drain(f, 30));
    collect(f, &s);
    assert_int_equal(s.replies, 1);
    assert_int_equal(s.reply_id, 0x40000001);
    assert_int_equal(s.reply_type, DDM_CHUNK_HELO);
    assert_true(ddm_helo_parse(s.reply_data, s.reply_len, &h));
    assert_int_equal(h.pid, sim_vm_pid(vm));
    assert_string_equal(h.app_name, sim_vm_app_name(vm));
    assert_string_equal(h.vm_ident, "ART v2.1.0");
    assert_string_equal(h.abi, "64-bit (x86_64)");
    assert_string_equal(h.package_name, sim_vm_package_name(vm));
    assert_int_equal(h.native_debuggable, 0);
    ddm_helo_clear(&h);
    fixture_free(f);
}

static void test_simvm_world_art_partial_handshake_closes(void **state)
{
    Fixture *f = fixture(SIM_MODE_ART, FALSE);
    SimVm *vm = first_vm(f);

    (void)state;
    connect_vm(f, vm);
    send_bytes(f, "JDWP-", 5);
    assert_false(drain(f, 50)); /* "Closing connection to broken client" */
    assert_false(sim_vm_is_busy(vm));
    /* the VM serves the next client */
    close(f->fd);
    connect_vm(f, vm);
    handshake(f);
    fixture_free(f);
}

static void test_simvm_world_dalvik_waits_for_handshake(void **state)
{
    Fixture *f = fixture(SIM_MODE_DALVIK, FALSE);
    SimVm *vm = first_vm(f);
    Seen s;

    (void)state;
    connect_vm(f, vm);
    send_bytes(f, "JDWP-", 5);
    assert_true(drain(f, 30));
    send_bytes(f, "Handshake", 9);
    assert_true(drain(f, 30));
    collect(f, &s);
    assert_int_equal(s.handshake, 1);
    fixture_free(f);
}

static void test_simvm_world_bad_handshake_closes(void **state)
{
    Fixture *f = fixture(SIM_MODE_ART, FALSE);

    (void)state;
    connect_vm(f, first_vm(f));
    send_bytes(f, "GET / HTTP/1.1", 14);
    assert_false(drain(f, 50));
    fixture_free(f);
}

static void test_simvm_world_apnm_before_echo(void **state)
{
    Fixture *f = fixture(SIM_MODE_ART, TRUE);
    Seen s;

    (void)state;
    connect_vm(f, first_vm(f));
    send_bytes(f, DDM_JDWP_HANDSHAKE, DDM_JDWP_HANDSHAKE_LEN);
    assert_true(drain(f, 30));
    collect(f, &s);
    assert_int_equal(s.discarded, 1); /* the APNM raced ahead of the echo */
    assert_int_equal(s.handshake, 1);
    fixture_free(f);
}

static void test_simvm_world_malformed_framing(void **state)
{
    /* chunk length past the packet: ART says nothing, Dalvik an empty reply */
    static const uint8_t bad[] = { 'H', 'P', 'G', 'C', 0, 0, 1, 0 };
    SimMode modes[2] = { SIM_MODE_ART, SIM_MODE_DALVIK };
    int m;

    (void)state;
    for (m = 0; m < 2; m++) {
        Fixture *f = fixture(modes[m], FALSE);
        size_t plen;
        uint8_t *pkt = ddm_jdwp_build_command(0x40000002, 0xC7, 1, bad, sizeof bad, &plen);
        Seen s;

        connect_vm(f, first_vm(f));
        handshake(f);
        send_bytes(f, pkt, plen);
        g_free(pkt);
        send_chunk(f, 0x40000003, DDM_CHUNK('S', 'T', 'K', 'L'), "\0", 1); /* short payload */
        assert_true(drain(f, 30));
        collect(f, &s);
        if (modes[m] == SIM_MODE_ART) {
            assert_int_equal(s.replies, 1); /* only the FAIL */
        } else {
            assert_int_equal(s.replies, 2);
            assert_int_equal(s.empty, 1);
        }
        assert_int_equal(s.reply_type, DDM_CHUNK_FAIL);
        fixture_free(f);
    }
}

static void test_simvm_world_hostile_length(void **state)
{
    static const uint8_t huge[] = { 0xff, 0xff, 0xff, 0xff, 0, 0, 0, 1, 0, 0xC7, 1 };
    Fixture *f = fixture(SIM_MODE_ART, FALSE);
    SimVm *vm = first_vm(f);

    (void)state;
    connect_vm(f, vm);
    handshake(f);
    send_bytes(f, huge, sizeof huge);
    assert_false(drain(f, 50));
    assert_false(sim_vm_is_busy(vm));
    assert_non_null(sim_world_find_pid(f->w, sim_vm_pid(vm))); /* the VM lives on */
    fixture_free(f);
}

static void test_simvm_world_second_client_dropped(void **state)
{
    Fixture *f = fixture(SIM_MODE_ART, FALSE);
    SimVm *vm = first_vm(f);
    int sv[2];
    char c;

    (void)state;
    connect_vm(f, vm);
    handshake(f);
    assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
    sim_vm_serve_fd(vm, sv[1]); /* accepted and closed at once */
    assert_int_equal(read(sv[0], &c, 1), 0);
    close(sv[0]);
    assert_int_equal(vm->refused, 1);
    assert_true(sim_vm_is_busy(vm)); /* the first client is still served */
    fixture_free(f);
}

static void test_simvm_world_dispose_closes_after_reply(void **state)
{
    Fixture *f = fixture(SIM_MODE_ART, FALSE);
    SimVm *vm = first_vm(f);
    size_t plen;
    uint8_t *pkt = ddm_jdwp_build_command(5, 1, 6, NULL, 0, &plen);
    Seen s;

    (void)state;
    connect_vm(f, vm);
    handshake(f);
    send_bytes(f, pkt, plen);
    g_free(pkt);
    assert_false(drain(f, 50));
    collect(f, &s);
    assert_int_equal(s.replies, 1);
    assert_int_equal(s.empty, 1);
    assert_int_equal(s.reply_id, 5);
    assert_true(vm->debugger_active);
    fixture_free(f);
}

static void test_simvm_world_exit_removes_vm(void **state)
{
    Fixture *f = fixture(SIM_MODE_ART, FALSE);
    SimVm *vm = first_vm(f);
    uint32_t pid = sim_vm_pid(vm);
    uint8_t status[4] = { 0, 0, 0, 1 };
    GArray *pids;

    (void)state;
    connect_vm(f, vm);
    handshake(f);
    send_chunk(f, 0x40000009, DDM_CHUNK('E', 'X', 'I', 'T'), status, 4);
    assert_false(drain(f, 50)); /* halt: the connection drops, no reply */
    assert_int_equal(f->gone, 1);
    assert_int_equal(f->last_gone, pid);
    assert_null(sim_world_find_pid(f->w, pid));
    pids = sim_world_list_pids(f->w);
    assert_int_equal(pids->len, 1);
    g_array_unref(pids);
    fixture_free(f);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_simvm_world_helo_over_fd),
        cmocka_unit_test(test_simvm_world_art_partial_handshake_closes),
        cmocka_unit_test(test_simvm_world_dalvik_waits_for_handshake),
        cmocka_unit_test(test_simvm_world_bad_handshake_closes),
        cmocka_unit_test(test_simvm_world_apnm_before_echo),
        cmocka_unit_test(test_simvm_world_malformed_framing),
        cmocka_unit_test(test_simvm_world_hostile_length),
        cmocka_unit_test(test_simvm_world_second_client_dropped),
        cmocka_unit_test(test_simvm_world_dispose_closes_after_reply),
        cmocka_unit_test(test_simvm_world_exit_removes_vm),
    };
    return cmocka_run_group_tests_name("simvm-world", tests, NULL, NULL);
}
