/* SPDX-License-Identifier: Apache-2.0
 *
 * Unit tests of the relay's write path to a debugger
 * (ddm_relay_debugger_queue, core/relay/relay_debugger.c) on a socketpair:
 * a whole packet with nothing waiting goes out in one send() straight from
 * the caller's bytes; once the socket takes a packet only in part, the
 * rest waits in the write queue and goes out when the socket drains (the
 * out-watch), and the debugger reads every packet whole, in order and once.
 * A long reply spliced from a VM socket keeps its place before what is
 * queued after it, through a pipe as large as the replies it carries
 * (a refused grow not asked again within the reply). The fused path of a
 * reply (ddm_relay_reply_alone) sends it at once or leaves it untouched.
 * The debugger here is a bare struct of relay-private.h (attached, no
 * VM): nothing in this path looks further.
 */
#define _GNU_SOURCE 1 /* pipe2, F_GETPIPE_SZ, F_SETPIPE_SZ */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cmocka.h>

#include "core/config/config.h"
#include "core/relay/relay-private.h"
#include "core/session/monitor.h"
#include "core/wire/jdwp.h"

typedef struct Fx {
    DdmConfig *config;
    DdmSessionEvents events;
    DdmRelay relay;
    Debugger d;
    int peer;              /* the debugger's end */
    GByteArray *in;        /* what the debugger read */
} Fx;

static int setup(void **state)
{
    Fx *fx = g_new0(Fx, 1);
    int sv[2];
    assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0, sv), 0);
    fx->config = ddm_config_new();
    fx->relay.mon = ddm_monitor_new(fx->config, &fx->events, NULL);
    fx->relay.cfg = fx->config;
    fx->d.relay = &fx->relay;
    fx->d.fd = sv[0];
    fx->d.state = DBG_ATTACHED;
    fx->d.out = g_byte_array_new();
    fx->d.peer = g_strdup("test");
    fx->d.pipe_r = fx->d.pipe_w = -1; /* as ddm_relay_debugger_new makes it */
    fx->peer = sv[1];
    fx->in = g_byte_array_new();
    *state = fx;
    return 0;
}

static int teardown(void **state)
{
    Fx *fx = *state;
    ddm_watch_remove(fx->d.out_watch);
    ddm_timer_cancel(&fx->d.flush_timer);
    g_byte_array_unref(fx->d.out);
    g_free(fx->d.peer);
    if (fx->d.pipe_r >= 0) {
        close(fx->d.pipe_r);
        close(fx->d.pipe_w);
    }
    close(fx->d.fd);
    close(fx->peer);
    g_byte_array_unref(fx->in);
    ddm_monitor_free(fx->relay.mon);
    ddm_config_free(fx->config);
    g_free(fx);
    return 0;
}

/* A reply of @body_len bytes with id @id (its body a pattern of @id). */
static guint8 *packet(uint32_t id, size_t body_len, size_t *len)
{
    guint8 *body = g_malloc(body_len ? body_len : 1);
    for (size_t k = 0; k < body_len; k++)
        body[k] = (guint8)(k * 7 + id);
    guint8 *p = ddm_jdwp_build_reply(id, 0, body, body_len, len);
    g_free(body);
    return p;
}

/* The debugger reads until it holds @n bytes, the loop running (the
 * out-watch). The deadline only ends a hang (a packet lost for good): 60 s
 * is far above what a loaded machine takes, so it times nothing. */
static void peer_read_until(Fx *fx, size_t n)
{
    gint64 end = g_get_monotonic_time() + 60 * G_USEC_PER_SEC;
    while (fx->in->len < n) {
        guint8 buf[65536];
        g_main_context_iteration(NULL, FALSE);
        ssize_t got = read(fx->peer, buf, sizeof buf);
        if (got > 0)
            g_byte_array_append(fx->in, buf, (guint)got);
        else
            assert_true(got < 0 && errno == EAGAIN);
        assert_true(g_get_monotonic_time() < end);
    }
}

/* The debugger reads what its socket holds now, until EAGAIN, the loop not
 * running: what ddmon wrote without a flush or an out-watch. */
static void peer_read_now(Fx *fx)
{
    for (;;) {
        guint8 buf[65536];
        ssize_t got = read(fx->peer, buf, sizeof buf);
        if (got <= 0) {
            assert_true(got < 0 && errno == EAGAIN);
            return;
        }
        g_byte_array_append(fx->in, buf, (guint)got);
    }
}

/* Every packet the debugger read is the one sent, in order, once. */
static void check_stream(Fx *fx, guint npackets, size_t body_len)
{
    size_t at = 0;
    for (guint i = 0; i < npackets; i++) {
        size_t len;
        g_autofree guint8 *want = packet(i + 1, body_len, &len);
        assert_true(at + len <= fx->in->len);
        assert_memory_equal(fx->in->data + at, want, len);
        at += len;
    }
    assert_int_equal(at, fx->in->len);
}

/* Nothing waits: the packet goes out at once, nothing is queued, no watch. */
static void test_send_whole_at_once(void **state)
{
    Fx *fx = *state;
    size_t len;
    g_autofree guint8 *p = packet(1, 40, &len);
    assert_true(ddm_relay_debugger_queue(&fx->d, p, len, FALSE));
    assert_int_equal(fx->d.out->len - fx->d.out_pos, 0);
    assert_false(fx->d.out_blocked);
    assert_null(fx->d.out_watch);
    peer_read_until(fx, len);
    check_stream(fx, 1, 40);
}

/* The fused path of a reply (ddm_relay_reply_alone): a reply to the
 * debugger's command goes out at once with the debugger's id; anything
 * else is either left untouched for the general path (FALSE, the id map
 * unchanged: an id not mapped, bytes waiting for the debugger) or dropped
 * as the general path drops it (a command sent on a debugger's behalf). */
static void test_reply_alone(void **state)
{
    Fx *fx = *state;
    DdmVm *vm = g_new0(DdmVm, 1); /* (only vm->relay is looked at) */
    RelayVm r = {.vm = vm, .debugger = &fx->d, .ids = ddm_idmap_new(DDM_RELAY_MAX_MAPPED)};
    vm->relay = &r;
    fx->d.rvm = &r;
    uint32_t vm_id, own_id;
    assert_true(ddm_idmap_map(r.ids, &fx->d, 1, &vm_id));
    size_t len;

    /* not mapped: nothing done, nothing sent */
    g_autofree guint8 *other = packet(vm_id + 1, 8, &len);
    assert_false(ddm_relay_reply_alone(NULL, vm, other, len));
    /* bytes wait for the debugger: the general path keeps their order */
    g_byte_array_append(fx->d.out, (const guint8 *)"x", 1);
    g_autofree guint8 *p = packet(1, 40, &len); /* the debugger's, as it reads it */
    ddm_jdwp_set_id(p, vm_id);                   /* as the VM sends it */
    assert_false(ddm_relay_reply_alone(NULL, vm, p, len));
    g_byte_array_set_size(fx->d.out, 0);
    peer_read_now(fx);
    assert_int_equal(fx->in->len, 0);
    /* its id still mapped: now the reply goes out with the debugger's id */
    assert_true(ddm_relay_reply_alone(NULL, vm, p, len));
    assert_int_equal(ddm_idmap_count(r.ids), 0);
    peer_read_until(fx, len);
    check_stream(fx, 1, 40);
    /* a reply to ddmon's command on the debugger's behalf: claimed, dropped */
    assert_true(ddm_idmap_reserve(r.ids, &own_id));
    g_autofree guint8 *own = packet(own_id, 8, &len);
    assert_true(ddm_relay_reply_alone(NULL, vm, own, len));
    assert_int_equal(ddm_idmap_count(r.ids), 0);
    peer_read_now(fx);
    check_stream(fx, 1, 40);
    /* no debugger attached: nothing done */
    assert_true(ddm_idmap_map(r.ids, &fx->d, 2, &vm_id));
    g_autofree guint8 *late = packet(vm_id, 8, &len);
    fx->d.state = DBG_HELD;
    assert_false(ddm_relay_reply_alone(NULL, vm, late, len));
    assert_int_equal(ddm_idmap_count(r.ids), 1);
    fx->d.state = DBG_ATTACHED;

    fx->d.rvm = NULL;
    ddm_idmap_free(r.ids);
    g_free(vm);
}

/* Packets larger than half a socket buffer (the kernel cuts them) until one
 * is taken only in part: the rest waits (out_blocked), later packets queue
 * behind it, and all reach the debugger whole, in order and once. */
static void test_send_whole_cut_by_full_socket(void **state)
{
    Fx *fx = *state;
    enum { BODY = 300001 };
    size_t len = 0, total = 0;
    guint n = 0;
    while (!fx->d.out_blocked && n < 200) {
        g_autofree guint8 *p = packet(n + 1, BODY, &len);
        assert_true(ddm_relay_debugger_queue(&fx->d, p, len, FALSE));
        total += len;
        n++;
    }
    assert_true(fx->d.out_blocked);
    gsize queued = fx->d.out->len - fx->d.out_pos;
    assert_true(queued > 0 && queued < len); /* the last one was cut: its rest waits */
    for (guint k = 0; k < 2; k++, n++) { /* behind it */
        g_autofree guint8 *p = packet(n + 1, BODY, &len);
        assert_true(ddm_relay_debugger_queue(&fx->d, p, len, FALSE));
        total += len;
    }
    peer_read_until(fx, total);
    assert_false(fx->d.out_blocked); /* drained: the out-watch sleeps */
    /* drained, the next packet alone takes the one-send() path again */
    g_autofree guint8 *p = packet(n + 1, BODY, &len);
    assert_true(ddm_relay_debugger_queue(&fx->d, p, len, FALSE));
    total += len;
    n++;
    peer_read_until(fx, total);
    check_stream(fx, n, BODY);
    assert_int_equal(fx->d.out->len - fx->d.out_pos, 0);
}

/* A packet "with more behind it" waits for the flush (one write for a
 * burst); the next one alone sends both. */
static void test_send_more_waits_for_the_burst(void **state)
{
    Fx *fx = *state;
    size_t len1, len2;
    g_autofree guint8 *p1 = packet(1, 20, &len1);
    g_autofree guint8 *p2 = packet(2, 20, &len2);
    guint8 b;
    assert_true(ddm_relay_debugger_queue(&fx->d, p1, len1, TRUE));
    assert_int_equal(fx->d.out->len - fx->d.out_pos, len1);
    assert_true(read(fx->peer, &b, 1) < 0 && errno == EAGAIN);
    assert_true(ddm_relay_debugger_queue(&fx->d, p2, len2, FALSE));
    assert_int_equal(fx->d.out->len - fx->d.out_pos, 0);
    /* both are on the socket now, the first first (no loop round needed) */
    peer_read_now(fx);
    check_stream(fx, 2, 20);
    assert_false(ddm_timer_armed(&fx->d.flush_timer));
}

/* Packets wait in the queue while the socket has room (a burst, not a full
 * socket: out_blocked stays FALSE): a packet alone after them, through
 * either entry, goes out behind them, never before or instead of them. */
static void test_send_behind_queued_not_blocked(void **state)
{
    Fx *fx = *state;
    size_t len, total = 0;
    for (guint i = 0; i < 3; i++) {
        g_autofree guint8 *p = packet(i + 1, 30 + i, &len);
        assert_true(ddm_relay_debugger_queue(&fx->d, p, len, TRUE));
        total += len;
    }
    assert_false(fx->d.out_blocked);
    assert_int_equal(fx->d.out->len - fx->d.out_pos, total);
    g_autofree guint8 *last = packet(4, 33, &len);
    assert_true(ddm_relay_debugger_send(&fx->d, last, len)); /* more = FALSE */
    total += len;
    peer_read_now(fx);
    assert_int_equal(fx->in->len, total);
    size_t at = 0;
    for (guint i = 0; i < 4; i++) {
        size_t n;
        g_autofree guint8 *want = packet(i + 1, 30 + i, &n);
        assert_memory_equal(fx->in->data + at, want, n);
        at += n;
    }
    assert_int_equal(fx->d.out->len - fx->d.out_pos, 0);
    assert_false(ddm_timer_armed(&fx->d.flush_timer));
    assert_false(fx->d.out_blocked);
}

/* A queued packet with nothing after it leaves with the flush at the end of
 * the loop round; the next one alone then takes the one-send() path. */
static void test_send_queued_then_flushed(void **state)
{
    Fx *fx = *state;
    size_t len1, len2;
    g_autofree guint8 *p1 = packet(1, 20, &len1);
    g_autofree guint8 *p2 = packet(2, 20, &len2);
    assert_true(ddm_relay_debugger_queue(&fx->d, p1, len1, TRUE));
    assert_true(ddm_timer_armed(&fx->d.flush_timer));
    peer_read_now(fx);
    assert_int_equal(fx->in->len, 0); /* it waits for the flush */
    peer_read_until(fx, len1); /* the loop runs: the flush timer fires */
    assert_false(ddm_timer_armed(&fx->d.flush_timer));
    assert_true(ddm_relay_debugger_queue(&fx->d, p2, len2, FALSE));
    assert_int_equal(fx->d.out->len - fx->d.out_pos, 0);
    peer_read_now(fx);
    check_stream(fx, 2, 20);
}

/* A long reply's body spliced from the VM's socket (a socketpair here):
 * what the debugger's socket takes at once goes straight through; what it
 * does not stays in the pipe (the debugger blocked; the VM is not paused
 * for so little: the same 2 MiB backlog as the write queue's), no further
 * splice starts until it is out, and a packet queued meanwhile goes after
 * it: the debugger reads the body whole, then the packet. */
static void test_splice_keeps_order(void **state)
{
    Fx *fx = *state;
    int vm[2];
    gboolean empty = FALSE;
    size_t len, total = 0;
    enum { FIRST = 50000, SECOND = 200000 };
    GByteArray *body = g_byte_array_new();
    assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0, vm), 0);
    int small = 16384; /* the debugger's socket takes little at a time */
    assert_int_equal(setsockopt(fx->d.fd, SOL_SOCKET, SO_SNDBUF, &small, sizeof small), 0);
    for (size_t k = 0; k < FIRST + SECOND; k++) {
        guint8 b = (guint8)(k * 13 + k / 251);
        g_byte_array_append(body, &b, 1);
    }

    /* the socket takes all of the first piece (the debugger reads it) */
    assert_int_equal(write(vm[1], body->data, FIRST), FIRST);
    gssize moved = ddm_relay_debugger_splice(&fx->d, vm[0], 1 << 20, &empty);
    if (moved == -ENOTSUP) { /* no pipe or splice here: the relay copies instead */
        g_byte_array_unref(body);
        close(vm[0]);
        close(vm[1]);
        skip();
    }
    while (moved > 0 && moved < FIRST) { /* (a socket taking it in parts) */
        peer_read_now(fx);
        ddm_relay_debugger_flush(&fx->d);
        gssize more = ddm_relay_debugger_splice(&fx->d, vm[0], 1 << 20, &empty);
        if (more > 0)
            moved += more;
    }
    assert_int_equal(moved, FIRST);
    peer_read_until(fx, FIRST);
    assert_int_equal(fx->d.reply_spliced, FIRST);
    assert_false(fx->d.vm_paused);

    /* the second: more than the debugger's socket takes while it does not read */
    gsize in_vm = 0;
    while (in_vm < SECOND) {
        ssize_t w = write(vm[1], body->data + FIRST + in_vm, SECOND - in_vm);
        if (w <= 0)
            break;
        in_vm += (gsize)w;
    }
    assert_true(in_vm > 0);
    moved = ddm_relay_debugger_splice(&fx->d, vm[0], 1 << 20, &empty);
    assert_true(moved > 0);
    assert_true(fx->d.pipe_left > 0); /* the rest waits in the pipe */
    assert_true(fx->d.out_blocked);
    assert_false(fx->d.vm_paused); /* far below BACKPRESSURE_AT */
    assert_int_equal(ddm_relay_debugger_splice(&fx->d, vm[0], 1 << 20, &empty), -ENOTSUP);
    g_autofree guint8 *p = packet(9, 30, &len);
    assert_true(ddm_relay_debugger_queue(&fx->d, p, len, FALSE)); /* behind the pipe */
    assert_int_equal(fx->d.out->len - fx->d.out_pos, len);
    total = FIRST + (size_t)moved;
    peer_read_until(fx, total + len); /* the out-watch drains the pipe, then the queue */
    assert_int_equal(fx->in->len, total + len);
    assert_memory_equal(fx->in->data, body->data, total);
    assert_memory_equal(fx->in->data + total, p, len);
    assert_int_equal(fx->d.pipe_left, 0);
    assert_false(fx->d.out_blocked);
    /* drained: the next splice starts again */
    assert_int_equal(write(vm[1], body->data, 1000), 1000);
    assert_int_equal(ddm_relay_debugger_splice(&fx->d, vm[0], 1 << 20, &empty), 1000);
    assert_true(empty); /* short: the socket is empty */
    peer_read_until(fx, total + len + 1000);
    assert_memory_equal(fx->in->data + total + len, body->data, 1000);
    g_byte_array_unref(body);
    close(vm[0]);
    close(vm[1]);
}

/* The splice pipe is as large as the long replies it carries: a reply of
 * some hundred KiB leaves it far below the 1 MiB a reply of several MiB
 * makes it (relay_debugger.c, SPLICE_PIPE_MAX: fewer splices a MiB),
 * which the kernel gives only within its limits (pipe-max-size, the
 * user's pipe allowance): then it keeps the size it has. Either way every
 * byte goes through, in order. */
static void test_splice_pipe_fits_the_reply(void **state)
{
    Fx *fx = *state;
    int vm[2], probe[2];
    gboolean empty = FALSE;
    enum { SHORT = 100000, MIB = 1 << 20 };
    guint8 *body = g_malloc(SHORT);
    for (size_t k = 0; k < SHORT; k++)
        body[k] = (guint8)(k * 31 + k / 509);
    assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0, vm), 0);
    /* what a pipe is made with here, and whether 1 MiB may be asked for */
    assert_int_equal(pipe2(probe, O_CLOEXEC), 0);
    int fresh = fcntl(probe[1], F_GETPIPE_SZ);
    gboolean mib_ok = fcntl(probe[1], F_SETPIPE_SZ, MIB) == MIB;
    close(probe[0]);
    close(probe[1]);
    assert_true(fresh > 0);

    /* a reply of SHORT bytes still to come */
    assert_int_equal(write(vm[1], body, SHORT), SHORT);
    gssize moved = ddm_relay_debugger_splice(&fx->d, vm[0], SHORT, &empty);
    if (moved == -ENOTSUP) { /* no pipe or splice here: the relay copies instead */
        g_free(body);
        close(vm[0]);
        close(vm[1]);
        skip();
    }
    assert_true(moved > 0);
    guint32 after_short = fx->d.pipe_size;
    assert_true(after_short >= (guint32)MIN(fresh, SHORT));
    assert_true(after_short <= (guint32)MAX(fresh, 128 * 1024)); /* not 1 MiB for it */
    size_t total = (size_t)moved;
    while (total < SHORT) { /* (a socket taking it in parts) */
        peer_read_now(fx);
        ddm_relay_debugger_flush(&fx->d);
        moved = ddm_relay_debugger_splice(&fx->d, vm[0], SHORT - total, &empty);
        if (moved > 0)
            total += (size_t)moved;
    }
    peer_read_until(fx, SHORT);
    assert_memory_equal(fx->in->data, body, SHORT);

    /* a reply of several MiB: the empty pipe grows to 1 MiB where allowed */
    assert_int_equal(write(vm[1], body, 1000), 1000);
    assert_int_equal(ddm_relay_debugger_splice(&fx->d, vm[0], 4u << 20, &empty), 1000);
    if (mib_ok)
        assert_int_equal(fx->d.pipe_size, MIB);
    else
        assert_int_equal(fx->d.pipe_size, after_short);
    assert_int_equal(fcntl(fx->d.pipe_w, F_GETPIPE_SZ), (int)fx->d.pipe_size);
    peer_read_until(fx, SHORT + 1000);
    assert_memory_equal(fx->in->data + SHORT, body, 1000);
    g_free(body);
    close(vm[0]);
    close(vm[1]);
}

/* A grow the kernel refused (pipe_refused: the user's pipe allowance used
 * up) is not asked for again in the same reply, whose want only shrinks
 * (else one failing fcntl a splice); the next reply asks again. A refusal
 * cannot be caused cleanly here (root may exceed the limits; the sysctls
 * are the machine's), so the test sets the remembered refusal itself and
 * checks that the pipe then keeps its size although the kernel would
 * grant it, and grows (where allowed) once a new reply begins. */
static void test_splice_pipe_refused_not_asked_again(void **state)
{
    Fx *fx = *state;
    int vm[2], probe[2];
    gboolean empty = FALSE;
    enum { MIB = 1 << 20 };
    guint8 body[1000];
    for (size_t k = 0; k < sizeof body; k++)
        body[k] = (guint8)(k * 7 + 3);
    assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0, vm), 0);
    assert_int_equal(pipe2(probe, O_CLOEXEC), 0);
    int fresh = fcntl(probe[1], F_GETPIPE_SZ);
    gboolean mib_ok = fcntl(probe[1], F_SETPIPE_SZ, MIB) == MIB;
    close(probe[0]);
    close(probe[1]);
    assert_true(fresh > 0 && fresh < MIB);

    fx->d.pipe_refused = MIB; /* as if 1 MiB was refused earlier in this reply */
    assert_int_equal(write(vm[1], body, sizeof body), (ssize_t)sizeof body);
    gssize moved = ddm_relay_debugger_splice(&fx->d, vm[0], 3u << 20, &empty);
    if (moved == -ENOTSUP) { /* no pipe or splice here: the relay copies instead */
        close(vm[0]);
        close(vm[1]);
        skip();
    }
    assert_int_equal(moved, (gssize)sizeof body);
    assert_int_equal(fx->d.pipe_size, (guint32)fresh); /* not asked again */
    assert_int_equal(fcntl(fx->d.pipe_w, F_GETPIPE_SZ), fresh);
    peer_read_until(fx, sizeof body);

    /* a new reply: asked again, granted where allowed */
    guint8 head[DDM_JDWP_HEADER_LEN] = { 0, 0, 0, DDM_JDWP_HEADER_LEN, 0, 0, 0, 1, 0x80, 0, 0 };
    ddm_relay_debugger_part_begin(&fx->d, head, 1);
    ddm_relay_debugger_part_end(&fx->d);
    peer_read_until(fx, sizeof body + DDM_JDWP_HEADER_LEN);
    assert_int_equal(write(vm[1], body, sizeof body), (ssize_t)sizeof body);
    assert_int_equal(ddm_relay_debugger_splice(&fx->d, vm[0], 3u << 20, &empty),
                     (gssize)sizeof body);
    if (mib_ok) {
        assert_int_equal(fx->d.pipe_size, MIB);
    } else {
        assert_int_equal(fx->d.pipe_size, (guint32)fresh);
        assert_int_equal(fx->d.pipe_refused, MIB); /* refused again, remembered */
    }
    peer_read_until(fx, 2 * sizeof body + DDM_JDWP_HEADER_LEN);
    assert_memory_equal(fx->in->data + sizeof body + DDM_JDWP_HEADER_LEN, body, sizeof body);
    close(vm[0]);
    close(vm[1]);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_send_whole_at_once, setup, teardown),
        cmocka_unit_test_setup_teardown(test_reply_alone, setup, teardown),
        cmocka_unit_test_setup_teardown(test_splice_keeps_order, setup, teardown),
        cmocka_unit_test_setup_teardown(test_splice_pipe_fits_the_reply, setup, teardown),
        cmocka_unit_test_setup_teardown(test_splice_pipe_refused_not_asked_again, setup, teardown),
        cmocka_unit_test_setup_teardown(test_send_whole_cut_by_full_socket, setup, teardown),
        cmocka_unit_test_setup_teardown(test_send_more_waits_for_the_burst, setup, teardown),
        cmocka_unit_test_setup_teardown(test_send_behind_queued_not_blocked, setup, teardown),
        cmocka_unit_test_setup_teardown(test_send_queued_then_flushed, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
