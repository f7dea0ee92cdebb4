/* SPDX-License-Identifier: Apache-2.0
 *
 * Unit tests of the relay's command path from a debugger to its VM
 * (on_debugger_in, core/relay/relay_debugger.c), through the debugger's
 * watch on socketpairs: a read that is one whole command (the fused path)
 * and every other read (the rounds: several packets, a command cut across
 * reads, a read that fills the fast path's buffer, a reply) reach the VM
 * with the same rules: each command's id mapped (the map gives the
 * debugger's back), a VirtualMachine.Dispose noted, a vendor command set
 * for a plain JVM answered by ddmon and never forwarded, a full id map
 * closing the debugger, the VM's backlog pausing the debugger's reads
 * (BACKPRESSURE_AT) and the queue's cap refusing a command, as the rounds
 * do. The debugger and its VM are bare structs of relay-private.h
 * and vm.h (attached; the VM's socket empty, so every packet goes out with
 * one send()): nothing in this path looks further.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cmocka.h>

#include "core/config/config.h"
#include "core/relay/relay-private.h"
#include "core/session/monitor.h"
#include "core/session/vm.h"
#include "core/wire/jdwp.h"

typedef struct Fx {
    DdmConfig *config;
    DdmSessionEvents events;
    DdmRelay relay;
    Debugger *d;           /* freed by the fixture (a close leaves it in relay.dead) */
    DdmVm *vm;
    RelayVm r;
    int peer;              /* the debugger's end */
    int vm_peer;           /* the VM's end */
    GByteArray *vm_in;     /* what the VM read */
    GByteArray *dbg_in;    /* what the debugger read */
} Fx;

static int setup(void **state)
{
    Fx *fx = g_new0(Fx, 1);
    int sv[2], vv[2];
    assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0, sv), 0);
    assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0, vv), 0);
    fx->config = ddm_config_new();
    fx->relay.mon = ddm_monitor_new(fx->config, &fx->events, NULL);
    fx->relay.cfg = fx->config;
    fx->relay.debuggers = g_ptr_array_new();
    fx->relay.dead = g_ptr_array_new(); /* (no free function: the fixture frees d) */
    fx->relay.shutting_down = TRUE;     /* a close asks nothing of the bare VM */

    fx->vm = g_new0(DdmVm, 1);
    fx->vm->magic = DDM_VM_MAGIC;
    fx->vm->fd = vv[0];
    fx->vm->state = DDM_VM_STATE_READY;
    fx->vm->relay = &fx->r;
    fx->r.vm = fx->vm;
    fx->r.ids = ddm_idmap_new(DDM_RELAY_MAX_MAPPED);

    Debugger *d = fx->d = g_new0(Debugger, 1);
    d->relay = &fx->relay;
    d->fd = sv[0];
    d->state = DBG_ATTACHED;
    d->reader = ddm_jdwp_reader_new(fx->config->max_packet);
    /* as ddm_relay_debugger_new makes it: the fused path's reads */
    d->in_place_max = (guint32)MIN(MIN(ddm_jdwp_reader_max_packet(d->reader), 4095),
                                   fx->config->max_write_queue);
    d->out = g_byte_array_new();
    d->to_vm = g_byte_array_new();
    d->peer = g_strdup("test");
    d->pipe_r = d->pipe_w = -1; /* as ddm_relay_debugger_new makes it */
    d->rvm = &fx->r;
    fx->r.debugger = d;
    g_ptr_array_add(fx->relay.debuggers, d);
    ddm_relay_debugger_read(d);

    fx->peer = sv[1];
    fx->vm_peer = vv[1];
    fx->vm_in = g_byte_array_new();
    fx->dbg_in = g_byte_array_new();
    *state = fx;
    return 0;
}

static int teardown(void **state)
{
    Fx *fx = *state;
    Debugger *d = fx->d;
    if (d->state != DBG_CLOSED) {
        ddm_watch_remove(d->in_watch);
        ddm_watch_remove(d->out_watch);
        ddm_timer_cancel(&d->flush_timer);
        close(d->fd);
    }
    ddm_timer_cancel(&fx->relay.reap_timer);
    ddm_jdwp_reader_free(d->reader);
    g_byte_array_unref(d->out);
    g_byte_array_unref(d->to_vm);
    g_free(d->peer);
    g_free(d);
    g_ptr_array_unref(fx->relay.debuggers);
    g_ptr_array_unref(fx->relay.dead);
    ddm_idmap_free(fx->r.ids);
    close(fx->vm->fd);
    g_free(fx->vm);
    close(fx->peer);
    close(fx->vm_peer);
    g_byte_array_unref(fx->vm_in);
    g_byte_array_unref(fx->dbg_in);
    ddm_monitor_free(fx->relay.mon);
    ddm_config_free(fx->config);
    g_free(fx);
    return 0;
}

/* Append what @fd holds now (until EAGAIN, or the end: ddmon closed the
 * debugger) to @to. */
static void read_now(int fd, GByteArray *to)
{
    for (;;) {
        guint8 buf[65536];
        ssize_t got = read(fd, buf, sizeof buf);
        if (got <= 0) {
            assert_true(got == 0 || errno == EAGAIN);
            return;
        }
        g_byte_array_append(to, buf, (guint)got);
    }
}

/* The loop runs (the debugger's watch) until the VM holds @vm_n bytes and
 * the debugger @dbg_n, or until the debugger is closed. The deadline only
 * ends a hang (a packet lost for good): 60 s is far above what a loaded
 * machine takes, so it times nothing. Then a few more iterations: nothing
 * more may come. */
static void run_until(Fx *fx, size_t vm_n, size_t dbg_n)
{
    gint64 end = g_get_monotonic_time() + 60 * G_USEC_PER_SEC;
    while ((fx->vm_in->len < vm_n || fx->dbg_in->len < dbg_n) && fx->d->state != DBG_CLOSED) {
        g_main_context_iteration(NULL, FALSE);
        read_now(fx->vm_peer, fx->vm_in);
        read_now(fx->peer, fx->dbg_in);
        assert_true(g_get_monotonic_time() < end);
    }
    for (int i = 0; i < 4; i++)
        g_main_context_iteration(NULL, FALSE);
    read_now(fx->vm_peer, fx->vm_in);
    read_now(fx->peer, fx->dbg_in);
    assert_int_equal(fx->vm_in->len, vm_n);
    assert_int_equal(fx->dbg_in->len, dbg_n);
}

/* A command @cmdset/@cmd with id @id and a body of @body_len bytes. */
static guint8 *command(uint32_t id, guint8 cmdset, guint8 cmd, size_t body_len, size_t *len)
{
    guint8 *body = g_malloc(body_len ? body_len : 1);
    for (size_t k = 0; k < body_len; k++)
        body[k] = (guint8)(k * 7 + id);
    guint8 *p = ddm_jdwp_build_command(id, cmdset, cmd, body, body_len, len);
    g_free(body);
    return p;
}

static uint32_t get_u4(const guint8 *p)
{
    return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

static void peer_write(Fx *fx, const guint8 *p, size_t n)
{
    assert_int_equal(write(fx->peer, p, n), (ssize_t)n);
}

/* The packet at @at of what the VM read is @want but for its id, which the
 * id map gives back as the debugger's (and forgets). */
static void check_forwarded(Fx *fx, size_t at, const guint8 *want, size_t len)
{
    assert_true(at + len <= fx->vm_in->len);
    const guint8 *got = fx->vm_in->data + at;
    assert_memory_equal(got, want, 4);
    assert_memory_equal(got + 8, want + 8, len - 8);
    uint32_t vm_id = get_u4(got + 4), client_id = 0;
    gpointer client = NULL;
    assert_true(vm_id >= DDM_IDMAP_FIRST && vm_id <= DDM_IDMAP_LAST);
    assert_true(ddm_idmap_take(fx->r.ids, vm_id, &client, &client_id));
    assert_ptr_equal(client, fx->d);
    assert_int_equal(client_id, get_u4(want + 4));
}

/* One command a read (the fused path), then the next: each reaches the VM
 * at once, its id mapped; the map gives the debugger's back. */
static void test_command_alone(void **state)
{
    Fx *fx = *state;
    size_t len1, len2;
    g_autofree guint8 *c1 = command(1, 1, 1, 0, &len1);   /* VirtualMachine.Version */
    g_autofree guint8 *c2 = command(2, 11, 1, 16, &len2); /* ThreadReference.Name */
    peer_write(fx, c1, len1);
    run_until(fx, len1, 0);
    peer_write(fx, c2, len2);
    run_until(fx, len1 + len2, 0);
    check_forwarded(fx, 0, c1, len1);
    check_forwarded(fx, len1, c2, len2);
    assert_int_equal(ddm_idmap_count(fx->r.ids), 0);
    assert_false(fx->d->sent_dispose);
    assert_int_equal(fx->vm->packets_out, 2);
    assert_int_equal(fx->vm->bytes_out, len1 + len2);
    assert_int_equal(fx->d->state, DBG_ATTACHED);
}

/* A VirtualMachine.Dispose is noted (the relay then does not send one on
 * the debugger's behalf), alone (the fused path: after a first read, as
 * after a handshake) or behind another command in one read (the rounds). */
static void test_dispose_noted(void **state)
{
    Fx *fx = *state;
    size_t len1, len2;
    g_autofree guint8 *c1 = command(7, 1, 6, 0, &len1); /* VirtualMachine.Dispose */
    /* not Dispose: VirtualMachine.Suspend (1/8), and 6 of another set */
    g_autofree guint8 *c2 = command(8, 1, 8, 0, &len2);
    g_autofree guint8 *c3 = command(9, 2, 6, 0, &len2);
    peer_write(fx, c2, len2);
    run_until(fx, len2, 0);
    peer_write(fx, c3, len2);
    run_until(fx, 2 * len2, 0);
    assert_false(fx->d->sent_dispose);
    peer_write(fx, c1, len1);
    run_until(fx, 2 * len2 + len1, 0);
    check_forwarded(fx, 2 * len2, c1, len1);
    assert_true(fx->d->sent_dispose);
    /* in the rounds: behind another command of the same read */
    fx->d->sent_dispose = FALSE;
    guint8 both[64];
    memcpy(both, c2, len2);
    memcpy(both + len2, c1, len1);
    peer_write(fx, both, len1 + len2);
    run_until(fx, 2 * len1 + 3 * len2, 0);
    assert_true(fx->d->sent_dispose);
}

/* A command cut across reads: its head waits in the reader, and the read
 * of its rest (which the fused path must not take as a packet of its own,
 * even where that rest looks like one: its body ends with a whole command)
 * completes it; the next whole command goes as before. */
static void test_split_command(void **state)
{
    Fx *fx = *state;
    size_t l1, l2;
    g_autofree guint8 *c1 = command(1, 1, 1, 0, &l1);
    guint8 body[40] = {0};
    memcpy(body + sizeof body - l1, c1, l1);
    g_autofree guint8 *c2 = ddm_jdwp_build_command(2, 9, 1, body, sizeof body, &l2);
    peer_write(fx, c1, l1);
    run_until(fx, l1, 0);
    check_forwarded(fx, 0, c1, l1);
    const size_t cuts[] = {1, 5, 11, 12, 30, l2 - l1, l2 - 1};
    for (size_t k = 0; k < G_N_ELEMENTS(cuts); k++) {
        size_t cut = cuts[k];
        g_byte_array_set_size(fx->vm_in, 0);
        peer_write(fx, c2, cut);
        run_until(fx, 0, 0);
        peer_write(fx, c2 + cut, l2 - cut);
        run_until(fx, l2, 0);
        check_forwarded(fx, 0, c2, l2);
        g_byte_array_set_size(fx->vm_in, 0);
        peer_write(fx, c1, l1);
        run_until(fx, l1, 0);
        check_forwarded(fx, 0, c1, l1);
    }
    assert_int_equal(ddm_idmap_count(fx->r.ids), 0);
}

/* A vendor command set (128 and up) for a plain JVM: answered by ddmon
 * with NOT_IMPLEMENTED, its id the debugger's, and never forwarded; for a
 * DDM VM it goes as any other. */
static void test_vendor_cmdset(void **state)
{
    Fx *fx = *state;
    size_t len, rlen;
    g_autofree guint8 *c = command(5, 0xC7, 1, 8, &len);
    fx->vm->state = DDM_VM_STATE_PLAIN;
    peer_write(fx, c, len);
    g_autofree guint8 *reply = ddm_jdwp_build_reply(5, DDM_JDWP_ERROR_NOT_IMPLEMENTED, NULL, 0, &rlen);
    run_until(fx, 0, rlen);
    assert_memory_equal(fx->dbg_in->data, reply, rlen);
    assert_int_equal(ddm_idmap_count(fx->r.ids), 0);
    fx->vm->state = DDM_VM_STATE_READY;
    peer_write(fx, c, len);
    run_until(fx, len, rlen);
    check_forwarded(fx, 0, c, len);
}

/* Reads the fused path leaves to the rounds: several commands at once
 * (gathered into one write), a command that fills the fast path's 4096-byte
 * buffer, a reply from the debugger (forwarded as it is, its id not
 * mapped): all reach the VM in order. */
static void test_other_reads(void **state)
{
    Fx *fx = *state;
    size_t l1, l2, l3;
    g_autofree guint8 *c1 = command(1, 1, 1, 0, &l1);
    g_autofree guint8 *c2 = command(2, 15, 1, 30, &l2);
    g_autofree guint8 *big = command(3, 2, 5, 4096 - 11, &l3);
    assert_int_equal(l3, 4096);
    guint8 both[128];
    memcpy(both, c1, l1);
    memcpy(both + l1, c2, l2);
    peer_write(fx, both, l1 + l2);
    run_until(fx, l1 + l2, 0);
    check_forwarded(fx, 0, c1, l1);
    check_forwarded(fx, l1, c2, l2);
    peer_write(fx, big, l3);
    run_until(fx, l1 + l2 + l3, 0);
    check_forwarded(fx, l1 + l2, big, l3);
    size_t rl;
    g_autofree guint8 *reply = ddm_jdwp_build_reply(77, 0, "abc", 3, &rl);
    peer_write(fx, reply, rl);
    run_until(fx, l1 + l2 + l3 + rl, 0);
    assert_memory_equal(fx->vm_in->data + l1 + l2 + l3, reply, rl);
    assert_int_equal(ddm_idmap_count(fx->r.ids), 0);
    assert_int_equal(fx->d->state, DBG_ATTACHED);
}

/* The id map full: the debugger is closed, the command not forwarded. */
static void test_map_full(void **state)
{
    Fx *fx = *state;
    ddm_idmap_free(fx->r.ids);
    fx->r.ids = ddm_idmap_new(1);
    size_t len;
    g_autofree guint8 *c1 = command(1, 1, 1, 0, &len);
    g_autofree guint8 *c2 = command(2, 1, 1, 0, &len);
    peer_write(fx, c1, len);
    run_until(fx, len, 0);
    assert_int_equal(ddm_idmap_count(fx->r.ids), 1);
    peer_write(fx, c2, len);
    run_until(fx, len, 0);
    assert_int_equal(fx->d->state, DBG_CLOSED);
    assert_null(fx->d->in_watch);
    assert_int_equal(ddm_idmap_count(fx->r.ids), 1);
}

/* Lone commands through the fused path while the
 * VM's socket takes nothing: the queue grows past BACKPRESSURE_AT (2 MiB)
 * and reading from the debugger pauses (as the rounds did), every command
 * queued whole, in order. */
static void test_fused_backpressure(void **state)
{
    Fx *fx = *state;
    fx->vm->monitor = fx->relay.mon; /* (vm_cfg: the queue's cap) */
    size_t len;
    g_autofree guint8 *c = command(1, 11, 1, 4000 - 11, &len);
    assert_int_equal(len, 4000);
    guint64 sent = 0;
    for (int k = 0; k < 4000 && !fx->d->reading_paused; k++) {
        peer_write(fx, c, len);
        sent += len;
        for (int i = 0; i < 3; i++)
            g_main_context_iteration(NULL, FALSE);
        /* each read a lone command: the debugger's socket is empty again */
        int avail = -1;
        assert_int_equal(ioctl(fx->d->fd, FIONREAD, &avail), 0);
        if (!fx->d->reading_paused)
            assert_int_equal(avail, 0);
    }
    assert_true(fx->d->reading_paused);
    assert_null(fx->d->in_watch);
    assert_true(fx->vm->notify_drained);
    assert_true(ddm_vm_out_queued(fx->vm) >= (2u << 20));
    assert_int_equal(fx->vm->bytes_out + ddm_vm_out_queued(fx->vm), sent);
    assert_int_equal(fx->d->state, DBG_ATTACHED);
    /* what the VM gets, in order, each id mapped */
    read_now(fx->vm_peer, fx->vm_in);
    ddm_watch_remove(fx->vm->out_watch);
    fx->vm->out_watch = NULL;
    g_byte_array_append(fx->vm_in, fx->vm->out->data + fx->vm->out_pos,
                        fx->vm->out->len - fx->vm->out_pos);
    assert_int_equal(fx->vm_in->len, sent);
    g_byte_array_unref(fx->vm->out);
    fx->vm->out = NULL;
}

/* A write queue cap below the command: the fused
 * path leaves it to the rounds, which refuse it (not forwarded), as
 * before; one within the cap is forwarded. */
static void test_fused_queue_cap(void **state)
{
    Fx *fx = *state;
    fx->vm->monitor = fx->relay.mon;
    fx->config->max_write_queue = 64;
    fx->d->in_place_max = 64;
    size_t l1, l2;
    g_autofree guint8 *c1 = command(1, 11, 1, 50 - 11, &l1);
    g_autofree guint8 *c2 = command(2, 11, 1, 100 - 11, &l2);
    peer_write(fx, c1, l1);
    run_until(fx, l1, 0);
    check_forwarded(fx, 0, c1, l1);
    peer_write(fx, c2, l2);
    run_until(fx, l1, 0);
    assert_int_equal(fx->d->state, DBG_ATTACHED);
    peer_write(fx, c1, l1);
    run_until(fx, 2 * l1, 0);
    check_forwarded(fx, l1, c1, l1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_command_alone, setup, teardown),
        cmocka_unit_test_setup_teardown(test_dispose_noted, setup, teardown),
        cmocka_unit_test_setup_teardown(test_split_command, setup, teardown),
        cmocka_unit_test_setup_teardown(test_vendor_cmdset, setup, teardown),
        cmocka_unit_test_setup_teardown(test_other_reads, setup, teardown),
        cmocka_unit_test_setup_teardown(test_map_full, setup, teardown),
        cmocka_unit_test_setup_teardown(test_fused_backpressure, setup, teardown),
        cmocka_unit_test_setup_teardown(test_fused_queue_cap, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
