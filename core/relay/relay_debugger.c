/* SPDX-License-Identifier: Apache-2.0
 *
 * One debugger connection (relay-private.h): reading its handshake (closed
 * if it is not in within the handshake timeout) and its packets, sending
 * its commands to the VM with ids remapped (idmap.h) and answering vendor
 * command sets for plain JVMs itself, writing what the VM
 * sends to it, backpressure both ways (doc/architecture.md), and closing
 * it (relay_leave.c then puts its VM back). Whatever it relays tells the
 * loop an answer is near (ddm_watch_expect_more: the socket round,
 * core/loop/watch.h). The fast path: while its reader holds nothing, a
 * read goes to a buffer on the stack and the whole packets there are
 * relayed in place, their header parsed and their id rewritten there
 * (relay_in_place); only the rest goes through the reader. The fused
 * paths (issue 16) take a read that is one whole packet alone: a command
 * to the VM (on_debugger_in's first read, before its rounds), a reply
 * from the VM (ddm_relay_reply_alone, called by the VM's session), each
 * with the general path's rules (the helpers both call). A long reply's
 * body goes from the VM's socket to the debugger's through a pipe
 * (splice(2)), never through ddmon's memory (ddm_relay_debugger_splice).
 */
#define _GNU_SOURCE 1 /* splice, pipe2, F_SETPIPE_SZ */
#include "core/relay/relay-private.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <unistd.h>

#include <glib-unix.h>

#include <ddmon/bytes.h>

#include "core/session/monitor.h"

#define READ_CHUNK (64u * 1024u)
#define TO_VM_BATCH (64u * 1024u)     /* debugger packets gathered into one write to the VM */
#define FLUSH_AT (64u * 1024u)        /* VM packets queued for a debugger: write now from here */
/* Backpressure: once this much waits for a slow side (the debugger, or the
 * VM), ddmon stops reading from the other side until it has all been
 * written, as the kernel would on a direct connection. Far below
 * max_write_queue, which only catches what ddmon itself adds. */
#define BACKPRESSURE_AT (2u << 20)
/* The splice pipe's size asked for at most (the kernel may give less: 64
 * KiB by default; an unprivileged process gets at most
 * /proc/sys/fs/pipe-max-size, 1 MiB by default): a long reply moves in
 * pieces of up to this much. The pipe is made as large as the long replies
 * it carries (splice_pipe), so a debugger that only ever gets replies of
 * some hundred KiB does not take 1 MiB of its user's pipe allowance
 * (pipe-user-pages-soft). 1 MiB rather than 256 KiB: 21 syscalls a MiB
 * instead of 28 (bench/relay.sh, bulk counts; minrelay: 24) and some 5%
 * less of the relay's CPU a MiB (doc/benchmarks.md). */
#define SPLICE_PIPE_MAX (1024u * 1024u)

static inline void debugger_to_vm_flush(Debugger *d);
static inline __attribute__((always_inline)) void send_to_vm(Debugger *d, const guint8 *p, gsize n);

/* ------------------------------------------------------------ to the debugger */

static gboolean on_debugger_out(gint fd, GIOCondition cond, gpointer ud);

/* Backpressure from the debugger to its VM (BACKPRESSURE_AT). */
static void set_vm_paused(Debugger *d, gboolean paused)
{
    d->vm_paused = paused;
    if (d->rvm && ddm_vm_is_valid(d->rvm->vm)) {
        g_debug("relay: debugger %s reads %s; %s reading from VM %s", d->peer,
                paused ? "slowly" : "again", paused ? "pausing" : "resuming", vm_label(d->rvm->vm));
        ddm_vm_pause_input(d->rvm->vm, paused);
    }
}

/* Bytes wait for the debugger's socket to take them (@blocked): its
 * out-watch wants G_IO_OUT; or no longer: the watch is dormant. The watch is
 * made the first time and then only changes what it wants (one epoll_ctl). */
static void set_out_blocked(Debugger *d, gboolean blocked)
{
    if (d->out_blocked == blocked)
        return;
    d->out_blocked = blocked;
    if (!d->out_watch)
        d->out_watch = ddm_watch_add(d->fd, G_IO_OUT, on_debugger_out, d);
    else
        ddm_watch_set_cond(d->out_watch, blocked ? G_IO_OUT : 0);
}

/* The debugger's socket took all that waited: the out-watch sleeps; the VM,
 * paused for this debugger, is read again. */
static inline void debugger_out_drained(Debugger *d)
{
    if (d->out->len) /* every packet passes here: no call when nothing waited */
        g_byte_array_set_size(d->out, 0);
    d->out_pos = 0;
    if (d->out_blocked)
        set_out_blocked(d, FALSE);
    if (ddm_timer_armed(&d->flush_timer))
        ddm_timer_cancel(&d->flush_timer);
    if (d->vm_paused)
        set_vm_paused(d, FALSE);
}

/* What waits in the splice pipe goes to the debugger's socket: 0 when all
 * of it went or the socket is full (d->pipe_left says which), else the
 * negative errno of the write. */
static int pipe_to_debugger(Debugger *d)
{
    while (d->pipe_left) {
        ssize_t n = splice(d->pipe_r, NULL, d->fd, NULL, d->pipe_left,
                           SPLICE_F_MOVE | SPLICE_F_NONBLOCK);
        if (n > 0) {
            d->pipe_left -= (guint32)n;
            continue;
        }
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
            return 0;
        return n < 0 ? -errno : -EPIPE;
    }
    return 0;
}

void ddm_relay_debugger_flush(Debugger *d)
{
    if (G_UNLIKELY(d->pipe_left)) { /* the spliced bytes go before what is queued */
        int rc = pipe_to_debugger(d);
        if (rc < 0) {
            ddm_relay_debugger_close(d, g_strerror(-rc));
            return;
        }
        if (d->pipe_left) {
            set_out_blocked(d, TRUE);
            return;
        }
    }
    while (d->out_pos < d->out->len) {
        ssize_t n = send(d->fd, d->out->data + d->out_pos, d->out->len - d->out_pos,
                         MSG_NOSIGNAL | MSG_DONTWAIT);
        if (n > 0) {
            d->out_pos += (gsize)n;
            continue;
        }
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
            set_out_blocked(d, TRUE);
            return;
        }
        ddm_relay_debugger_close(d, n < 0 ? g_strerror(errno) : "write failed");
        return;
    }
    debugger_out_drained(d);
}

static gboolean on_debugger_out(gint fd, GIOCondition cond, gpointer ud)
{
    Debugger *d = ud;
    (void)fd;
    (void)cond;
    ddm_relay_debugger_flush(d); /* the watch sleeps once all is written */
    return G_SOURCE_CONTINUE;
}

static void on_flush_timer(DdmTimer *t, gpointer ud)
{
    (void)t;
    ddm_relay_debugger_flush(ud);
}

/* Append @n bytes to the write queue (after what waits). */
static void out_append(Debugger *d, const guint8 *p, gsize n)
{
    if (d->out_pos > 0 && d->out_pos == d->out->len) {
        g_byte_array_set_size(d->out, 0);
        d->out_pos = 0;
    }
    g_byte_array_append(d->out, p, (guint)n);
}

/* Whether @n more bytes for the debugger fit: with what waits in the write
 * queue and what is held behind a cut-through reply (out_has_room; @waiting
 * for out_room_past), at most max_write_queue. If not, the debugger is
 * closed (it reads too slowly). Inline: it is on the path of every packet. */
static inline gboolean out_room_past(Debugger *d, gsize waiting, gsize n)
{
    if (G_LIKELY(waiting + n <= d->relay->cfg->max_write_queue))
        return TRUE;
    ddm_relay_debugger_close(d, "it reads too slowly (write queue full)");
    return FALSE;
}
static inline gboolean out_has_room(Debugger *d, gsize n)
{
    gsize queued = d->out->len - d->out_pos;
    gsize held = d->held ? d->held->len : 0; /* (held only while from_vm_parts) */
    return out_room_past(d, queued + held, n);
}

/* The debugger's socket is full and much waits: stop reading from the VM
 * until the queue is empty (debugger_out_drained resumes it). */
static void pause_vm_if_backed_up(Debugger *d)
{
    if (d->state == DBG_ATTACHED && d->out_blocked && !d->vm_paused &&
        d->out->len - d->out_pos + d->pipe_left >= BACKPRESSURE_AT)
        set_vm_paused(d, TRUE);
}

/* Write what waits and then @p (@n bytes) with one sendmsg; whatever the
 * socket does not take joins the queue, written when it drains
 * (out-watch). Never closes the debugger from in here (callers are inside
 * the VM's read path): after a write error the out-watch fires at once and
 * ddm_relay_debugger_flush() closes it. */
static inline void write_now(Debugger *d, const guint8 *p, gsize n)
{
    struct iovec iov[2];
    int k = 0;
    gsize queued = d->out->len - d->out_pos;
    if (queued)
        iov[k++] = (struct iovec){d->out->data + d->out_pos, queued};
    if (n)
        iov[k++] = (struct iovec){(void *)p, n};
    struct msghdr msg = {.msg_iov = iov, .msg_iovlen = (size_t)k};
    ssize_t w;
    do
        w = sendmsg(d->fd, &msg, MSG_NOSIGNAL | MSG_DONTWAIT);
    while (w < 0 && errno == EINTR);
    gsize done = w > 0 ? (gsize)w : 0;
    if (done == queued + n) {
        debugger_out_drained(d);
        return;
    }
    /* Keep the unsent rest, in order: the queue's tail, then @p's. */
    gsize from_queue = MIN(done, queued);
    d->out_pos += from_queue;
    done -= from_queue;
    if (done < n)
        out_append(d, p + done, n - done);
    ddm_timer_cancel(&d->flush_timer);
    set_out_blocked(d, TRUE);
}

/* One whole packet @p/@n for the debugger, nothing waiting before it and
 * its socket not known full: one send(); what the socket does not take is
 * queued, as write_now() does (and, like it, never closes from in here). */
static inline void send_whole(Debugger *d, const guint8 *p, gsize n)
{
    ssize_t w;
    do
        w = send(d->fd, p, n, MSG_NOSIGNAL | MSG_DONTWAIT);
    while (w < 0 && errno == EINTR);
    if (G_LIKELY(w == (ssize_t)n)) {
        /* debugger_out_drained(), called only when it has work */
        if (d->out->len || ddm_timer_armed(&d->flush_timer) || d->vm_paused)
            debugger_out_drained(d);
        return;
    }
    gsize done = w > 0 ? (gsize)w : 0;
    out_append(d, p + done, n - done);
    ddm_timer_cancel(&d->flush_timer);
    set_out_blocked(d, TRUE);
}

/* Nothing waits for the debugger's socket, nor is known to fill it, and no
 * long reply is going out: a whole packet may go alone, at once
 * (send_alone). */
static inline gboolean debugger_sends_alone(const Debugger *d)
{
    return d->out->len == d->out_pos && !d->out_blocked && !d->from_vm_parts;
}

/* A reply or an event alone (debugger_sends_alone, and no other whole
 * packet for the debugger read with it): one send() straight from @p. */
static inline void send_alone(Debugger *d, const guint8 *p, gsize n)
{
    ddm_watch_expect_more(); /* the debugger's next command (watch.h) */
    send_whole(d, p, n);
    if (G_UNLIKELY(d->out_blocked))
        pause_vm_if_backed_up(d);
}

/* Bytes for the debugger (one whole packet, @p/@n, as it is to go out: a
 * reply's id is already the debugger's; borrowed for the call, copied only
 * into the queue); FALSE (and the debugger closed) past the cap. They are
 * written at once, straight from @p, after what waited (a lone packet with
 * one send(), else one sendmsg), unless the socket is full
 * (then they wait for the out-watch) or @more says another whole packet for
 * the debugger is already read (then they wait for it, or for the flush
 * at the end of this loop round, so a burst costs one write). */
gboolean ddm_relay_debugger_queue(Debugger *d, const guint8 *p, gsize n, gboolean more)
{
    if (!out_has_room(d, n))
        return FALSE;
    gsize queued = d->out->len - d->out_pos;
    g_return_val_if_fail(n >= DDM_JDWP_HEADER_LEN, FALSE);
    if (!more && debugger_sends_alone(d)) {
        send_alone(d, p, n); /* the common case */
        return TRUE;
    }
    if (d->from_vm_parts) {
        /* A long reply is going out as it arrives: this one goes after it. */
        if (!d->held)
            d->held = g_byte_array_new();
        g_byte_array_append(d->held, p, (guint)n);
        return TRUE;
    }
    ddm_watch_expect_more(); /* the debugger's next command (watch.h) */
    if (d->out_blocked || (more && queued + n < FLUSH_AT)) {
        out_append(d, p, n);
        if (!d->out_blocked && !ddm_timer_armed(&d->flush_timer)) {
            ddm_timer_init(&d->flush_timer, on_flush_timer, d);
            ddm_timer_arm(&d->flush_timer, 0);
        }
    } else {
        write_now(d, p, n);
    }
    pause_vm_if_backed_up(d);
    return TRUE;
}

gboolean ddm_relay_reply_alone(gpointer unused, DdmVm *vm, uint8_t *bytes, size_t len)
{
    RelayVm *r = vm->relay;
    Debugger *d = r ? relay_attached_debugger(r) : NULL;
    (void)unused;
    if (!d || !r->ids || !debugger_sends_alone(d))
        return FALSE; /* the general path (ddm_relay_reply_from_vm) */
    gpointer client = NULL;
    uint32_t be, client_id = 0;
    memcpy(&be, bytes + 4, sizeof be);
    if (!ddm_idmap_take(r->ids, GUINT32_FROM_BE(be), &client, &client_id))
        return FALSE; /* none of its debugger's (a miss changes nothing): the general path */
    if (client != d) /* relay_reply_debugger(r, client) != d, d being r's attached one */
        return TRUE; /* one sent on a debugger's behalf: dropped */
    ddm_put_u4(bytes + 4, client_id); /* ddm_jdwp_set_id, inline */
    /* out_has_room: debugger_sends_alone, so nothing is queued, nor held
     * (only while from_vm_parts) */
    if (out_room_past(d, 0, len))
        send_alone(d, bytes, len);
    return TRUE;
}

/* Raw bytes of a reply forwarded cut-through: written now, or queued
 * behind what waits; the cap and backpressure as for whole packets. */
static void part_bytes(Debugger *d, const guint8 *p, gsize n)
{
    if (d->state == DBG_CLOSED || !out_has_room(d, n))
        return;
    ddm_watch_expect_more(); /* the reply's next bytes (watch.h) */
    if (d->out_blocked)
        out_append(d, p, n);
    else
        write_now(d, p, n);
    pause_vm_if_backed_up(d);
}

void ddm_relay_debugger_part_begin(Debugger *d, const guint8 *head, uint32_t id)
{
    guint8 hdr[DDM_JDWP_HEADER_LEN];
    memcpy(hdr, head, sizeof hdr);
    ddm_jdwp_set_id(hdr, id);
    DdmJdwpHeader h;
    ddm_jdwp_parse_header(hdr, sizeof hdr, &h);
    g_debug("relay: reply of %u bytes from VM to debugger %s cut-through", h.length, d->peer);
    part_bytes(d, hdr, sizeof hdr);
    d->from_vm_parts = TRUE;
    d->reply_spliced = 0;
    d->pipe_refused = 0; /* a new reply may ask again (splice_pipe) */
}

void ddm_relay_debugger_part(Debugger *d, const guint8 *p, gsize n)
{
    part_bytes(d, p, n);
}

void ddm_relay_debugger_part_end(Debugger *d)
{
    g_debug("relay: reply to debugger %s complete, %" G_GUINT64_FORMAT " bytes of it spliced "
            "(socket to socket)", d->peer, d->reply_spliced);
    d->from_vm_parts = FALSE;
    GByteArray *held = d->held;
    d->held = NULL;
    if (held && held->len)
        part_bytes(d, held->data, held->len); /* what waited behind the reply */
    if (held)
        g_byte_array_unref(held);
}

/* The splice pipe, made at the first long reply; FALSE (and never again)
 * when the kernel refuses it. Empty, it grows towards @want (what is left
 * of the reply now going out), up to SPLICE_PIPE_MAX: best effort (over
 * its user's allowance the kernel refuses, and the pipe keeps its size;
 * the refused size is remembered in pipe_refused, so the rest of that
 * reply, whose want only shrinks, asks no more: a later reply (part_begin
 * clears it) or a larger want asks again, one fcntl). Called only with
 * the pipe empty (ddm_relay_debugger_splice checks pipe_left first), as a
 * resize needs. */
static gboolean splice_pipe(Debugger *d, size_t want)
{
    int p[2];
    if (d->pipe_r < 0) {
        if (d->splice_off)
            return FALSE;
        if (pipe2(p, O_NONBLOCK | O_CLOEXEC) < 0) {
            g_debug("relay: no splice pipe for debugger %s (%s): long replies are copied", d->peer,
                    g_strerror(errno));
            d->splice_off = TRUE;
            return FALSE;
        }
        int size = fcntl(p[1], F_GETPIPE_SZ);
        d->pipe_r = p[0];
        d->pipe_w = p[1];
        d->pipe_size = size > 0 ? (guint32)size : 65536u;
    }
    size_t ask = MIN(want, (size_t)SPLICE_PIPE_MAX);
    if (ask > d->pipe_size && ask > d->pipe_refused) {
        /* (the kernel rounds up to a power of two pages) */
        int size = fcntl(d->pipe_w, F_SETPIPE_SZ, (int)ask);
        if (size > 0)
            d->pipe_size = (guint32)size;
        else
            d->pipe_refused = (guint32)ask;
    }
    return TRUE;
}

static void splice_pipe_close(Debugger *d)
{
    if (d->pipe_r >= 0) {
        close(d->pipe_r);
        close(d->pipe_w);
    }
    d->pipe_r = d->pipe_w = -1;
    d->pipe_left = 0;
}

gssize ddm_relay_debugger_splice(Debugger *d, int from, size_t max, gboolean *socket_empty)
{
    /* Only with nothing waiting for the debugger: the bytes keep their order. */
    if (d->state != DBG_ATTACHED || d->out_blocked || d->out_pos != d->out->len || d->pipe_left ||
        !splice_pipe(d, max))
        return -ENOTSUP;
    size_t want = MIN(max, (size_t)d->pipe_size);
    ssize_t n;
    do
        n = splice(from, NULL, d->pipe_w, NULL, want, SPLICE_F_MOVE | SPLICE_F_NONBLOCK);
    while (n < 0 && errno == EINTR);
    if (n < 0) {
        int e = errno;
        if (e == EAGAIN || e == EWOULDBLOCK)
            return -EAGAIN; /* (the pipe is empty: it is the socket) */
        if (e == EINVAL || e == ENOSYS || e == EPERM || e == EOPNOTSUPP) {
            g_debug("relay: splice to debugger %s refused (%s): long replies are copied", d->peer,
                    g_strerror(e));
            d->splice_off = TRUE;
            return -ENOTSUP;
        }
        return -e;
    }
    if (n == 0)
        return 0;
    /* Short: the socket is likely empty (no splice just to see EAGAIN).
     * A splice the pipe's slots cut short (one a page or a segment: small
     * segments) still moves over a quarter of its size, and the next round
     * goes on; a misjudged one only costs a wake-up (level-triggered). */
    *socket_empty = (size_t)n < want && (size_t)n < d->pipe_size / 4;
    d->pipe_left = (guint32)n;
    d->reply_spliced += (guint64)n;
    ddm_watch_expect_more(); /* the reply's next bytes (watch.h) */
    int rc = pipe_to_debugger(d);
    if (rc < 0 || d->pipe_left) {
        /* The socket is full (or failed: the out-watch fires at once and the
         * flush closes it; never closed from in here, inside the VM's read
         * path): the rest waits in the pipe and goes first. Meanwhile no
         * splice starts; the reply's next bytes are read and queue behind
         * it as before, the VM paused at the same backlog (pipe included). */
        ddm_timer_cancel(&d->flush_timer);
        set_out_blocked(d, TRUE);
        pause_vm_if_backed_up(d);
    }
    return n;
}

gboolean ddm_relay_debugger_send(Debugger *d, const guint8 *p, gsize n)
{
    return ddm_relay_debugger_queue(d, p, n, FALSE);
}

/* ------------------------------------------------------------ from the debugger */

/* A vendor command set can crash OpenJDK's agent (JDK-8382537): a VM
 * known not to be Dalvik/ART never gets one (ddmon answers a whole such
 * command itself, debugger_packet, and never forwards one cut-through). */
static inline gboolean vm_spared_cmdset(const DdmVm *vm, guint8 cmdset)
{
    return cmdset >= 128 && vm->state == DDM_VM_STATE_PLAIN;
}

/* The command at @bytes (whole, its header the debugger's): its id becomes
 * one of the VM's (mapped, written there), and a VirtualMachine.Dispose is
 * noted. FALSE: the map is full, and the debugger was closed (after what
 * was gathered for the VM went). One copy for the general path and the
 * fused one (on_debugger_in); the header's fields are read from @bytes,
 * where both have them. */
static inline __attribute__((always_inline)) gboolean command_id_to_vm(Debugger *d, guint8 *bytes)
{
    uint32_t be, vm_id;
    memcpy(&be, bytes + 4, sizeof be);
    if (G_UNLIKELY(!ddm_idmap_map(d->rvm->ids, d, GUINT32_FROM_BE(be), &vm_id))) {
        debugger_to_vm_flush(d);
        ddm_relay_debugger_close(d, "too many commands in flight");
        return FALSE;
    }
    ddm_put_u4(bytes + 4, vm_id); /* ddm_jdwp_set_id, inline */
    if (G_UNLIKELY(bytes[9] == DDM_JDWP_CMDSET_VM && bytes[10] == DDM_JDWP_CMD_VM_DISPOSE))
        d->sent_dispose = TRUE;
    return TRUE;
}

/* One packet from the debugger, going to its VM (@more: another whole
 * packet from it is already read). */
static void debugger_packet(Debugger *d, const DdmJdwpPacket *pkt, gboolean more)
{
    RelayVm *r = d->rvm;
    DdmVm *vm = r->vm;
    if (!ddm_jdwp_is_reply(&pkt->header) && vm_spared_cmdset(vm, pkt->header.cmdset)) {
        /* Answer what a healthy JVM answers, NOT_IMPLEMENTED (after
         * sending what was gathered before it, so commands reach the VM
         * in order). */
        gsize n;
        g_autofree guint8 *reply = ddm_jdwp_build_reply(pkt->header.id, DDM_JDWP_ERROR_NOT_IMPLEMENTED,
                                                        NULL, 0, &n);
        g_debug("relay: command set %u from the debugger of plain JVM %s answered by ddmon",
                pkt->header.cmdset, vm_label(vm));
        debugger_to_vm_flush(d);
        ddm_relay_debugger_send(d, reply, n);
        return;
    }
    /* The packet's bytes are d's own reader's (consumed, valid until its
     * next call) or, from relay_in_place, on_debugger_in's stack buffer
     * (valid until that callback returns): either way nothing may keep a
     * pointer into them past this call. The id is rewritten there. The last whole packet of a read
     * goes to the VM from there (after what was gathered before it); only
     * packets followed by more are gathered, for one write. */
    guint8 *bytes = (guint8 *)pkt->bytes;
    if (!ddm_jdwp_is_reply(&pkt->header) && !command_id_to_vm(d, bytes))
        return;
    if (!more && !d->to_vm->len) {
        send_to_vm(d, bytes, pkt->len);
        return;
    }
    g_byte_array_append(d->to_vm, bytes, (guint)pkt->len);
    if (!more || d->to_vm->len >= TO_VM_BATCH)
        debugger_to_vm_flush(d);
}

/* A send to the VM failed with @rc (a negative errno): the debugger's
 * bytes are dropped. */
static void log_vm_refused(DdmVm *vm, int rc)
{
    g_message("relay: VM %s cannot take the debugger's packets (%s)", vm_label(vm), g_strerror(-rc));
}

static inline __attribute__((always_inline)) void send_to_vm(Debugger *d, const guint8 *p, gsize n)
{
    if (!d->rvm)
        return;
    /* (inline: every command; the VM is valid while d->rvm is set) */
    int rc = ddm_vm_send_packet_now(d->rvm->vm, p, n, d->relay->cfg->max_write_queue);
    if (G_UNLIKELY(rc < 0))
        log_vm_refused(d->rvm->vm, rc);
}

/* One write to the VM for the packets gathered from one read. */
static void debugger_to_vm_send(Debugger *d)
{
    send_to_vm(d, d->to_vm->data, d->to_vm->len);
    if (d->to_vm->len > 4 * TO_VM_BATCH) { /* do not keep a big packet's buffer */
        g_byte_array_unref(d->to_vm);
        d->to_vm = g_byte_array_new();
    } else {
        g_byte_array_set_size(d->to_vm, 0);
    }
}

/* Inline: every read from the debugger ends here, mostly with nothing gathered. */
static inline void debugger_to_vm_flush(Debugger *d)
{
    if (d->to_vm->len)
        debugger_to_vm_send(d);
}

/* The head of a command from the debugger that has not arrived whole (the
 * reader shows each such head once). A long one goes to the VM cut-through:
 * its header now, id mapped, and its body as the bytes arrive (the reader
 * streams it, never holding it whole; ddm_vm_send_part keeps ddmon's own
 * packets for the VM behind it). Others are read whole, as before: short
 * ones, ones past --max-packet (refused as before), and vendor commands for
 * a plain JVM (answered by ddmon). */
static void debugger_head(Debugger *d, const DdmJdwpPacket *head)
{
    RelayVm *r = d->rvm;
    DdmVm *vm = r->vm;
    if (head->len < DDM_RELAY_CUT_THROUGH_AT || head->len > ddm_jdwp_reader_max_packet(d->reader) ||
        vm_spared_cmdset(vm, head->header.cmdset))
        return;
    debugger_to_vm_flush(d); /* commands reach the VM in order */
    uint32_t vm_id;
    if (!ddm_idmap_map(r->ids, d, head->header.id, &vm_id)) {
        ddm_relay_debugger_close(d, "too many commands in flight");
        return;
    }
    guint8 hdr[DDM_JDWP_HEADER_LEN];
    memcpy(hdr, head->bytes, DDM_JDWP_HEADER_LEN);
    ddm_jdwp_set_id(hdr, vm_id);
    if (head->header.cmdset == DDM_JDWP_CMDSET_VM && head->header.cmd == DDM_JDWP_CMD_VM_DISPOSE)
        d->sent_dispose = TRUE;
    int rc = ddm_vm_send_part_begin(vm, hdr, sizeof hdr, head->len);
    if (rc < 0)
        log_vm_refused(vm, rc);
    /* Its bytes are read on either way (and dropped if the VM cannot take them). */
    ddm_jdwp_reader_stream(d->reader, 0);
    d->to_vm_parts = rc == 0;
    g_debug("relay: command %u/%u of %zu bytes from debugger %s to VM %s cut-through",
            head->header.cmdset, head->header.cmd, head->len, d->peer, vm_label(vm));
}

/* The next bytes of the command going to the VM cut-through. */
static void debugger_part(Debugger *d, const DdmJdwpPacket *piece)
{
    if (!d->to_vm_parts || !d->rvm)
        return;
    int rc = ddm_vm_send_part(d->rvm->vm, piece->data, piece->data_len);
    if (rc < 0) {
        log_vm_refused(d->rvm->vm, rc);
        ddm_vm_send_part_abort(d->rvm->vm);
        d->to_vm_parts = FALSE;
    }
}

/* Handle what the reader holds. Stops while the debugger is held (its
 * packets wait in the reader until it attaches) or once it is closed. */
void ddm_relay_debugger_drain(Debugger *d)
{
    while (d->state == DBG_HANDSHAKE || d->state == DBG_ATTACHED) {
        DdmJdwpPacket pkt;
        DdmJdwpResult res = ddm_jdwp_reader_next(d->reader, &pkt);
        if (res == DDM_JDWP_NEED_MORE)
            break;
        if (res == DDM_JDWP_HANDSHAKE_OK && d->state == DBG_HANDSHAKE) {
            ddm_timer_cancel(&d->handshake_timer); /* in: held or attached, no deadline of it */
            ddm_relay_route(d);
            continue;
        }
        if (res == DDM_JDWP_PACKET && d->state == DBG_ATTACHED) {
            debugger_packet(d, &pkt, ddm_jdwp_reader_has_packet(d->reader));
            continue;
        }
        if (res == DDM_JDWP_PACKET_HEAD && d->state == DBG_ATTACHED) {
            debugger_head(d, &pkt);
            continue;
        }
        if (res == DDM_JDWP_STREAM_DATA && d->state == DBG_ATTACHED) {
            debugger_part(d, &pkt);
            continue;
        }
        if (res == DDM_JDWP_STREAM_END) {
            d->to_vm_parts = FALSE;
            continue;
        }
        g_autofree char *why = NULL;
        if (res == DDM_JDWP_ERR_SHORT || res == DDM_JDWP_ERR_TOO_BIG)
            why = g_strdup_printf("protocol error: %s (declared length %zu, cap %zu)",
                                  ddm_jdwp_result_str(res), ddm_jdwp_reader_claimed_len(d->reader),
                                  ddm_jdwp_reader_max_packet(d->reader)); /* the cap it applied */
        else if (res == DDM_JDWP_ERR_BUDGET)
            why = g_strdup_printf("refused: a buffer of %zu bytes would take all peers' buffers "
                                  "past the budget of %zu bytes (--max-buffers)",
                                  ddm_jdwp_reader_refused_len(d->reader),
                                  ddm_jdwp_budget_limit(ddm_monitor_read_budget(d->relay->mon)));
        else
            why = g_strdup_printf("protocol error: %s",
                                  res == DDM_JDWP_DISCARDED ? "a packet before the handshake"
                                                            : ddm_jdwp_result_str(res));
        debugger_to_vm_flush(d);
        ddm_relay_debugger_close(d, why);
    }
    /* Held until its VM is up (up to HOLD_MS): the reader stopped short of
     * NEED_MORE, so it would keep the scratch every VM reads into. Its
     * bytes wait in a buffer of its own instead (a budget refusal fails
     * the reader, and the drain at attach closes it with the reason). */
    if (d->state == DBG_HELD)
        (void)ddm_jdwp_reader_release_scratch(d->reader);
    debugger_to_vm_flush(d);
}

/* The fast path (the reader idle, the debugger attached): @n bytes read
 * into @buf, not through the reader. The whole packets at its start are
 * relayed in place (the 11-byte header parsed there, the id rewritten
 * there); the rest (a packet not yet whole, or one the reader must judge)
 * is fed to the reader, which then sees the stream as if it had read it,
 * and drained as before. */
static void relay_in_place(Debugger *d, guint8 *buf, gsize n)
{
    gsize max = ddm_jdwp_reader_max_packet(d->reader); /* the cap the reader would apply */
    gsize off = 0;
    gsize len = ddm_jdwp_whole_packet_len(buf, n, max);
    while (len && d->state == DBG_ATTACHED) {
        DdmJdwpPacket pkt;
        ddm_jdwp_packet_in_place(&pkt, buf + off, len);
        off += len;
        len = ddm_jdwp_whole_packet_len(buf + off, n - off, max);
        debugger_packet(d, &pkt, len != 0);
    }
    if (d->state != DBG_ATTACHED)
        return;
    if (off < n) {
        ddm_jdwp_reader_feed(d->reader, buf + off, n - off);
        ddm_relay_debugger_drain(d);
    } else {
        debugger_to_vm_flush(d);
    }
}

/* What the fast path reads at most at once (on the stack). */
#define IN_PLACE_READ 4096u

/* The VM takes less than the debugger sends (its queue is past
 * BACKPRESSURE_AT and it will say when it drained): stop reading from the
 * debugger until then (ddm_relay_vm_output_drained reads again). TRUE if
 * reading stopped: the watch is to go (G_SOURCE_REMOVE). */
static gboolean pause_reading_if_backed_up(Debugger *d, DdmVm *vm)
{
    if (ddm_vm_out_queued(vm) < BACKPRESSURE_AT || !ddm_vm_notify_when_drained(vm))
        return FALSE;
    g_debug("relay: VM %s reads slowly; pausing reading from debugger %s", vm_label(vm), d->peer);
    d->reading_paused = TRUE;
    d->in_watch = NULL;
    return TRUE;
}

/* The rounds of on_debugger_in: up to 16 reads while the debugger is in
 * its handshake or attached, each relayed in place (the reader idle, the
 * debugger attached: relay_in_place) or through the reader (drain). When
 * @first, round 0's read was made already, into @in_place (the fast
 * path's, in on_debugger_in): its result is @first_n, errno with it. */
static __attribute__((noinline)) gboolean debugger_in_rounds(Debugger *d, guint8 *in_place,
                                                             gboolean first, ssize_t first_n)
{
    for (int rounds = 0; rounds < 16 && (d->state == DBG_HANDSHAKE || d->state == DBG_ATTACHED);
         rounds++) {
        size_t avail = IN_PLACE_READ;
        gboolean direct = TRUE;
        ssize_t n = first_n;
        if (!first) {
            direct = d->state == DBG_ATTACHED && ddm_jdwp_reader_idle(d->reader);
            uint8_t *space = in_place;
            if (!direct)
                space = ddm_jdwp_reader_space(d->reader, READ_CHUNK, &avail);
            if (!space) { /* over the budget: drain() reports and closes */
                ddm_relay_debugger_drain(d);
                break;
            }
            n = read(d->fd, space, avail);
        }
        first = FALSE;
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
            break;
        if (n <= 0) {
            /* d->in_watch stays set: the close removes this watch before it
             * closes the fd (a socket reusing the number must not inherit it) */
            ddm_relay_debugger_close(d, n == 0 ? (d->state == DBG_HANDSHAKE ? "closed before the handshake"
                                                                             : NULL)
                                               : g_strerror(errno));
            return G_SOURCE_REMOVE;
        }
        if (direct) {
            relay_in_place(d, in_place, (gsize)n);
        } else {
            ddm_jdwp_reader_commit(d->reader, (size_t)n);
            ddm_relay_debugger_drain(d);
        }
        if (d->state == DBG_ATTACHED) { /* (tested once: the calls below change no state) */
            ddm_watch_expect_more(); /* the VM's reply: wait for it in this round (watch.h) */
            if (pause_reading_if_backed_up(d, d->rvm->vm))
                return G_SOURCE_REMOVE;
        }
        if ((size_t)n < avail)
            break; /* the socket is empty for now: no read just to see EAGAIN */
    }
    if (d->state == DBG_CLOSED || d->state == DBG_HELD) {
        /* Held: read nothing more until attached (attach() reads again),
         * so a held debugger cannot make ddmon buffer what it sends. */
        d->in_watch = NULL;
        return G_SOURCE_REMOVE;
    }
    return G_SOURCE_CONTINUE;
}

/* The debugger's socket is readable. The fused path of a command (issue
 * 16) first: the debugger attached, its reader idle and nothing gathered
 * for the VM, one read into a buffer on the stack that holds one whole
 * command and nothing else, not a vendor command set for a plain JVM
 * (vm_spared_cmdset): its id is mapped there (command_id_to_vm's rules:
 * idmap.h, Dispose noted) and it goes to the VM at once from there. Then
 * the socket is empty (the read was short): the watch's call is over,
 * without the rounds' loop and debugger_packet's cases, and with what the
 * read proved not tested again. Anything else (a reply, several packets,
 * part of one, a full buffer, EOF or an error, a debugger in its handshake
 * or held) goes to the rounds (debugger_in_rounds), the read made handed
 * on. */
static gboolean on_debugger_in(gint fd, GIOCondition cond, gpointer ud)
{
    Debugger *d = ud;
    guint8 in_place[IN_PLACE_READ];
    (void)fd;
    (void)cond;
    if (d->state != DBG_ATTACHED || !ddm_jdwp_reader_idle(d->reader) || d->to_vm->len)
        return debugger_in_rounds(d, in_place, FALSE, 0);
    ssize_t n = read(d->fd, in_place, sizeof in_place);
    /* (in_place_max: a read that filled the buffer, or a packet the reader
     * would refuse, goes to the rounds; the VM's queue cap is then met) */
    if (n <= 0 || !ddm_jdwp_is_alone(in_place, (size_t)n, d->in_place_max, 0))
        return debugger_in_rounds(d, in_place, TRUE, n);
    RelayVm *r = d->rvm; /* (attached: set) */
    DdmVm *vm = r->vm;
    if (vm_spared_cmdset(vm, in_place[9]))
        return debugger_in_rounds(d, in_place, TRUE, n);
    if (G_UNLIKELY(!command_id_to_vm(d, in_place))) {
        d->in_watch = NULL; /* (closed: as the rounds end) */
        return G_SOURCE_REMOVE;
    }
    /* (n is within max_write_queue: in_place_max; so no cap, G_MAXSIZE, to test again) */
    int rc = ddm_vm_send_packet_now(vm, in_place, (size_t)n, G_MAXSIZE);
    if (G_UNLIKELY(rc < 0))
        log_vm_refused(vm, rc);
    ddm_watch_expect_more(); /* the VM's reply: wait for it in this round (watch.h) */
    /* (a send never closes anything from in here: d is attached still) */
    if (G_UNLIKELY(vm->out) && pause_reading_if_backed_up(d, vm))
        return G_SOURCE_REMOVE;
    return G_SOURCE_CONTINUE; /* (the read was short: the socket is empty for now) */
}

void ddm_relay_debugger_read(Debugger *d)
{
    if (!d->in_watch)
        d->in_watch = ddm_watch_add(d->fd, G_IO_IN, on_debugger_in, d);
}

/* ------------------------------------------------------------ life */

/* The handshake's deadline, counted from the accept, is the VM side's
 * (ddm_config_handshake_timeout_ms). Real debuggers (jdb, IntelliJ,
 * VS Code) send it at once; a connection that never does would hold a
 * descriptor for good, and enough of them starve the process of
 * descriptors, so every real debugger is then shed. */
static void on_handshake_timeout(DdmTimer *t, gpointer ud)
{
    Debugger *d = ud;
    (void)t;
    /* After a stall of the loop the handshake may wait unread in the socket,
     * its watch not yet run in this iteration: read what waits first, as the
     * watch would (vm.c's deadline does the same), so a debugger that sent
     * it in time is not closed. The read may route it (held, attached,
     * refused) or close it; a closed Debugger is freed by the reap timer
     * (reap_dead), never within this call, so d may still be looked at. A
     * watch that dropped its handle (held, or reading paused) is removed
     * here, as its G_SOURCE_REMOVE would have; a close removed it already. */
    DdmWatch *w = d->in_watch;
    if (d->state == DBG_HANDSHAKE && w &&
        on_debugger_in(d->fd, G_IO_IN, d) == G_SOURCE_REMOVE && d->state != DBG_CLOSED)
        ddm_watch_remove(w);
    if (d->state != DBG_HANDSHAKE)
        return; /* in (or closed) after all */
    relay_debugger_log(d->port, "no handshake",
                       "relay: debugger %s on port %u sent no whole handshake within %u ms (%zu "
                       "bytes read); closing",
                       d->peer, d->port, ddm_config_handshake_timeout_ms(d->relay->cfg),
                       ddm_jdwp_reader_pending(d->reader));
    ddm_relay_debugger_close(d, NULL);
}

Debugger *ddm_relay_debugger_new(Endpoint *ep, int fd, char *peer)
{
    DdmRelay *relay = ep->relay;
    Debugger *d = g_new0(Debugger, 1);
    d->relay = relay;
    d->endpoint = ep;
    d->port = ep->port;
    d->fd = fd;
    d->state = DBG_HANDSHAKE;
    d->reader = ddm_jdwp_reader_new(relay->cfg->max_packet);
    d->in_place_max = (guint32)MIN(MIN(ddm_jdwp_reader_max_packet(d->reader), IN_PLACE_READ - 1),
                                   relay->cfg->max_write_queue);
    ddm_jdwp_reader_set_budget(d->reader, ddm_monitor_read_budget(relay->mon));
    ddm_jdwp_reader_expect_handshake(d->reader);
    ddm_jdwp_reader_offer_heads(d->reader, DDM_JDWP_HEADER_LEN); /* cut-through: debugger_head() */
    d->out = g_byte_array_new();
    d->to_vm = g_byte_array_new();
    d->peer = peer;
    d->pipe_r = d->pipe_w = -1;
    ddm_timer_init(&d->handshake_timer, on_handshake_timeout, d);
    ddm_timer_arm(&d->handshake_timer, ddm_config_handshake_timeout_ms(relay->cfg));
    g_ptr_array_add(relay->debuggers, d);
    ddm_relay_debugger_read(d);
    return d;
}

void ddm_relay_debugger_free(gpointer p)
{
    Debugger *d = p;
    splice_pipe_close(d); /* (closed already unless it never was) */
    ddm_jdwp_reader_free(d->reader);
    if (d->held)
        g_byte_array_unref(d->held);
    g_byte_array_unref(d->out);
    g_byte_array_unref(d->to_vm);
    g_free(d->held_key);
    g_free(d->peer);
    g_free(d);
}

static void reap_dead(DdmTimer *t, gpointer ud)
{
    DdmRelay *relay = ud;
    (void)t;
    g_ptr_array_set_size(relay->dead, 0);
}

void ddm_relay_debugger_close(Debugger *d, const char *why)
{
    if (d->state == DBG_CLOSED)
        return;
    DebuggerState old = d->state;
    d->state = DBG_CLOSED;
    /* name the VM it reached or waited for, when there is one */
    const char *vm_name = d->rvm && ddm_vm_is_valid(d->rvm->vm) ? vm_label(d->rvm->vm)
                          : d->held_key                        ? d->held_key
                          : d->endpoint && d->endpoint->key    ? d->endpoint->key
                                                               : NULL;
    if (why)
        relay_debugger_log(d->port, "closed", "relay: debugger %s of VM %s on port %u closed: %s",
                           d->peer,
                           vm_name ? vm_name : "(none)", d->port, why);
    else if (old == DBG_ATTACHED) /* the end of a real session, as "attached" */
        g_message("relay: debugger %s of VM %s on port %u left", d->peer,
                  vm_name ? vm_name : "(none)", d->port);
    ddm_watch_remove(d->in_watch);
    ddm_watch_remove(d->out_watch);
    d->in_watch = d->out_watch = NULL;
    ddm_timer_cancel(&d->handshake_timer);
    ddm_timer_cancel(&d->hold_timer);
    ddm_timer_cancel(&d->flush_timer);
    close(d->fd);
    splice_pipe_close(d); /* (what it held for the debugger goes with it) */
    ddm_jdwp_reader_set_budget(d->reader, NULL); /* nothing more is read */
    if (d->vm_paused)
        set_vm_paused(d, FALSE); /* before the cleanup: DBGD's answer must be read */
    if (d->to_vm_parts && d->rvm && ddm_vm_is_valid(d->rvm->vm))
        ddm_vm_send_part_abort(d->rvm->vm); /* it left in the middle of a command */
    d->to_vm_parts = FALSE;
    if (d->rvm && d->rvm->reply_to == d)
        d->rvm->reply_to = NULL; /* the rest of a reply going to it is dropped */
    RelayVm *r = d->rvm;
    d->rvm = NULL;
    if (r && r->debugger == d) {
        r->debugger = NULL;
        if (ddm_vm_is_valid(r->vm))
            r->vm->info.debugger = 0;
        if (!d->relay->shutting_down) {
            ddm_relay_after_debugger_left(r, d);
            if (ddm_vm_is_valid(r->vm) && r->vm->state != DDM_VM_STATE_CLOSED)
                ddm_monitor_vm_identity_changed(d->relay->mon, r->vm);
        }
    }
    DdmRelay *relay = d->relay;
    g_ptr_array_remove_fast(relay->debuggers, d);
    /* Freed at the next iteration (reap_timer): callers may still look at d->state. */
    g_ptr_array_add(relay->dead, d);
    if (!ddm_timer_armed(&relay->reap_timer)) {
        ddm_timer_init(&relay->reap_timer, reap_dead, relay);
        ddm_timer_arm(&relay->reap_timer, 0);
    }
}
