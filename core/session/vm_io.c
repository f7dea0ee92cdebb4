/* SPDX-License-Identifier: Apache-2.0
 *
 * One VM's socket I/O (the session as a whole: vm.c): the write queue and
 * the read path. What the JDWP reader yields goes to the handshake
 * (vm_handshake.c) or, packet by packet, to vm_classify.c. The fast path:
 * while the reader holds nothing (and its last packet was not a long one,
 * streamed), a read goes to a buffer on the stack and the whole packets
 * there are classified in place (handle_in_place); only the rest goes
 * through the reader; a read that is one whole reply to a debugger goes
 * straight to the relay (reply_alone: the fused path, issue 16). A reply
 * cut-through to a debugger whose bytes are
 * all still in the socket may be moved socket to socket by the relay
 * (splice_reply), never entering ddmon's memory. The session's requests
 * of one event may be gathered in the write queue and sent in one write
 * (ddm_vm_io_gather_begin/_end).
 *
 * Invariants: the write queue is bounded (max_write_queue) and a G_IO_OUT
 * watch exists only while bytes wait (bytes also wait without one during
 * a gathering, whose end writes them); queueing never closes synchronously
 * and never calls anyone. Reading takes a bounded amount per wakeup
 * (fairness between VMs) and nothing while input is paused.
 */
#include <errno.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <glib-unix.h>

#include "core/session/logctx.h"
#include "core/session/monitor-private.h"
#include "core/session/vm-private.h"

#define READ_CHUNK ((size_t)64 << 10)
/* While a long packet streams through (a reply cut-through to a debugger,
 * a DDM stream to disk) and a read filled its buffer, the reads grow to
 * this (about half the syscalls a MiB: bench/relay.sh, bulk counts). The
 * reader keeps that buffer only while the reads keep filling it: a short
 * read (the socket empty), EAGAIN or the end of a wakeup's share hands it
 * back (ddm_jdwp_reader_release_empty: the budget's one spare, until its
 * trim), so a VM that trickles a long packet holds none of it between
 * wakeups. It is asked for only while the shared budget has room for it
 * (else READ_CHUNK). */
#define STREAM_READ_CHUNK DDM_JDWP_STREAM_READ_SIZE /* the budget's spare is of this size */
/* The in-place path's read (on the stack): a VM's replies and events to a
 * debugger are mostly a few dozen bytes. */
#define IN_PLACE_READ 4096u
/* fairness between VMs: at most this many reads and bytes per wakeup */
#define READS_PER_WAKEUP 16
#define READ_BYTES_PER_WAKEUP ((size_t)1 << 20)

static void report_output_drained(DdmVm *vm)
{
    gpointer ud;
    const DdmSessionEvents *ev = ddm_monitor_events(vm->monitor, &ud);
    if (ev->output_drained)
        ev->output_drained(ud, vm);
}

/* ---------------------------------------------------------------- write */

/* Bytes waiting in the write queue (ddm_vm_out_queued without its check). */
static inline gsize out_queued(const DdmVm *vm)
{
    return vm->out ? vm->out->len - vm->out_pos : 0;
}

static gboolean on_writable(gint fd, GIOCondition cond, gpointer ud);

static ssize_t send_some(int fd, const uint8_t *p, size_t n)
{
    ssize_t w = send(fd, p, n, MSG_NOSIGNAL | MSG_DONTWAIT);
    if (w < 0 && errno == ENOTSOCK)
        w = write(fd, p, n);
    return w;
}

/* Write what the kernel takes. 0, or -errno on a write error (not closed here). */
static int flush_out(DdmVm *vm)
{
    if (!vm->out) {
        if (vm->out_watch) {
            ddm_watch_remove(vm->out_watch);
            vm->out_watch = NULL;
        }
        return 0;
    }
    while (vm->out_pos < vm->out->len) {
        ssize_t w = send_some(vm->fd, vm->out->data + vm->out_pos, vm->out->len - vm->out_pos);
        if (w < 0) {
            if (errno == EINTR)
                continue;
            if (errno == EAGAIN || errno == EWOULDBLOCK)
                break;
            return -errno;
        }
        vm->out_pos += (gsize)w;
        vm->bytes_out += (guint64)w;
    }
    if (vm->out_pos == vm->out->len) {
        /* drained: the queue's buffer goes (an idle VM holds none; it
         * comes back with the next write the socket does not take) */
        g_clear_pointer(&vm->out, g_byte_array_unref);
        vm->out_pos = 0;
        if (vm->out_watch) {
            ddm_watch_remove(vm->out_watch);
            vm->out_watch = NULL;
        }
    } else {
        if (vm->out_pos > (vm->out->len / 2)) {
            g_byte_array_remove_range(vm->out, 0, (guint)vm->out_pos);
            vm->out_pos = 0;
        }
        if (!vm->out_watch)
            vm->out_watch = ddm_watch_add(vm->fd, G_IO_OUT, on_writable, vm);
    }
    return 0;
}

static gboolean on_writable(gint fd, GIOCondition cond, gpointer ud)
{
    DdmVm *vm = ud;
    int r;
    (void)fd;
    (void)cond;

    const char *before = ddm_logctx_enter(vm_key(vm));
    r = flush_out(vm);
    ddm_logctx_leave(before);
    if (r < 0) {
        /* vm->out_watch stays set: ddm_vm_close() removes this watch before
         * it closes the fd (a socket reusing the number must not inherit it) */
        if (r == -EPIPE || r == -ECONNRESET) {
            vm->refused_handshake = vm->state == DDM_VM_STATE_HANDSHAKE;
            ddm_vm_close(vm, "connection closed by the VM (write)");
        } else {
            char *why = g_strdup_printf("write error: %s", g_strerror(-r));
            ddm_vm_close(vm, why);
            g_free(why);
        }
        return G_SOURCE_REMOVE;
    }
    if (vm->out_watch)
        return G_SOURCE_CONTINUE;
    /* Drained: flush_out() already removed this watch and cleared the id. */
    if (vm->notify_drained) {
        vm->notify_drained = FALSE;
        report_output_drained(vm);
    }
    return G_SOURCE_REMOVE;
}

/* Write what the queue holds now (no write watch yet): the rest waits for
 * one. Never closes synchronously and never calls anyone: a write error
 * schedules the close. */
static void flush_queued(DdmVm *vm)
{
    int r = flush_out(vm);
    if (r == -EPIPE || r == -ECONNRESET) {
        /* The VM went away: the write watch (next iteration) closes it as
         * a normal disconnect; no callback may run from in here. */
        if (!vm->out_watch)
            vm->out_watch = ddm_watch_add(vm->fd, G_IO_OUT, on_writable, vm);
    } else if (r < 0) {
        ddm_vm_close_later(vm, g_strdup_printf("write error: %s", g_strerror(-r)));
    }
}

/* Queue bytes and try to write them (@whole: they are a packet, counted).
 * Never closes synchronously and never calls anyone: a write error
 * schedules the close. -ENOBUFS over the cap. While the session gathers
 * (ddm_vm_io_gather_begin) the bytes only join the queue. */
static int queue_now(DdmVm *vm, const uint8_t *p, size_t n, gboolean whole)
{
    if (vm->fd < 0)
        return -ENOTCONN;
    gsize queued = out_queued(vm); /* (every relayed command comes here: no calls) */
    if (queued + n > vm_cfg(vm)->max_write_queue || n > G_MAXUINT - queued)
        return -ENOBUFS;
    if (!vm->out_watch && queued == 0 && !vm->out_gathering) {
        /* Nothing waits: send from the caller's bytes and queue only what
         * the socket does not take (a relayed packet is not copied). After
         * an error all of it is queued: flush_out() below meets the error. */
        ssize_t w;
        do
            w = send_some(vm->fd, p, n);
        while (w < 0 && errno == EINTR);
        if (w > 0) {
            vm->bytes_out += (guint64)w;
            p += w;
            n -= (size_t)w;
        }
        if (n == 0) {
            vm->packets_out += whole;
            return 0;
        }
    }
    if (!vm->out)
        vm->out = g_byte_array_sized_new((guint)n);
    g_byte_array_append(vm->out, p, (guint)n);
    vm->packets_out += whole;
    if (vm->out_watch || vm->out_gathering)
        return 0; /* the watch writes when the socket drains; a gathering, at its end */
    flush_queued(vm);
    return 0;
}

gboolean ddm_vm_io_gather_begin(DdmVm *vm)
{
    if (vm->out_gathering || vm->fd < 0)
        return FALSE;
    vm->out_gathering = TRUE;
    return TRUE;
}

void ddm_vm_io_gather_end(DdmVm *vm, gboolean began)
{
    if (!began)
        return;
    vm->out_gathering = FALSE;
    /* (a close meanwhile dropped the queue and the fd) */
    if (vm->fd >= 0 && !vm->out_watch && out_queued(vm) > 0)
        flush_queued(vm);
    /* asked meanwhile and all written now: the drain is told from the
     * loop, as ddm_vm_notify_when_drained promises (the watch finds the
     * queue empty and reports it) */
    if (vm->fd >= 0 && vm->notify_drained && !vm->out_watch)
        vm->out_watch = ddm_watch_add(vm->fd, G_IO_OUT, on_writable, vm);
}

/* A packet sent in parts is complete: what waited behind it goes now. */
static void release_held(DdmVm *vm)
{
    GByteArray *held = vm->out_held;
    if (!held)
        return;
    vm->out_held = NULL;
    /* counted when held; admitted against the cap then, but the parts sent
     * since may have filled the queue: never drop requests silently */
    int r = queue_now(vm, held->data, held->len, FALSE);
    if (r < 0 && r != -ENOTCONN)
        ddm_vm_close_later(vm, g_strdup_printf("write queue full (%u bytes held behind a "
                                               "debugger's long command): %s",
                                               held->len, g_strerror(-r)));
    g_byte_array_unref(held);
}

int ddm_vm_io_queue(DdmVm *vm, const uint8_t *p, size_t n)
{
    if (vm->fd >= 0 && vm->out_part_left > 0) {
        /* A packet sent in parts is on the wire: this one goes after it. */
        gsize held = vm->out_held ? vm->out_held->len : 0;
        if (out_queued(vm) + held + n > vm_cfg(vm)->max_write_queue)
            return -ENOBUFS;
        if (!vm->out_held)
            vm->out_held = g_byte_array_new();
        g_byte_array_append(vm->out_held, p, (guint)n);
        vm->packets_out++;
        return 0;
    }
    return queue_now(vm, p, n, TRUE);
}


int ddm_vm_send_part_begin(DdmVm *vm, const uint8_t *head, size_t len, guint64 total)
{
    g_return_val_if_fail(ddm_vm_is_valid(vm), -EINVAL);
    g_return_val_if_fail(head != NULL && len >= DDM_JDWP_HEADER_LEN && len <= total, -EINVAL);
    if (!ddm_vm_can_send(vm) || vm->fd < 0)
        return -ENOTCONN;
    if (vm->out_part_left > 0)
        return -EBUSY;
    int r = queue_now(vm, head, len, TRUE);
    if (r < 0)
        return r;
    vm->out_part_left = total - len;
    return 0;
}

int ddm_vm_send_part(DdmVm *vm, const uint8_t *p, size_t len)
{
    g_return_val_if_fail(ddm_vm_is_valid(vm), -EINVAL);
    if (vm->fd < 0)
        return -ENOTCONN;
    g_return_val_if_fail(len <= vm->out_part_left, -EINVAL);
    int r = queue_now(vm, p, len, FALSE);
    if (r < 0)
        return r;
    vm->out_part_left -= len;
    if (vm->out_part_left == 0)
        release_held(vm);
    return 0;
}

void ddm_vm_send_part_abort(DdmVm *vm)
{
    g_return_if_fail(ddm_vm_is_valid(vm));
    if (vm->out_part_left == 0 || vm->fd < 0)
        return;
    /* The VM has part of a packet and waits for the rest: this connection
     * can carry nothing more. Closed from the loop, never from in here. */
    ddm_vm_close_later(vm, g_strdup_printf("a relayed packet was cut short (%" G_GUINT64_FORMAT
                                           " bytes missing): its debugger left in its middle",
                                           vm->out_part_left));
}

int ddm_vm_send_rest_(DdmVm *vm, const uint8_t *packet, size_t len, ssize_t w, int err)
{
    if (w > 0 || err == EAGAIN || err == EWOULDBLOCK) {
        /* The socket is full (it took part of the packet, or none): the
         * rest waits for the out-watch. Not queue_now(): with nothing
         * queued and no watch it would send() again at once, a call the
         * full socket refuses. */
        if (w > 0) {
            vm->bytes_out += (guint64)w;
            packet += w;
            len -= (size_t)w;
        }
        if (!vm->out)
            vm->out = g_byte_array_sized_new((guint)len);
        g_byte_array_append(vm->out, packet, (guint)len);
        vm->packets_out++;
        vm->out_watch = ddm_watch_add(vm->fd, G_IO_OUT, on_writable, vm);
        return 0;
    }
    /* An error (queue_now() meets it again and schedules the close), or a
     * socket that is no socket (ENOTSOCK: send_some() writes it). */
    return ddm_vm_io_queue(vm, packet, len);
}

int ddm_vm_send_packet(DdmVm *vm, const uint8_t *packet, size_t len)
{
    g_return_val_if_fail(ddm_vm_is_valid(vm), -EINVAL);
    g_return_val_if_fail(packet != NULL && len >= DDM_JDWP_HEADER_LEN, -EINVAL);
    if (!ddm_vm_can_send(vm))
        return -ENOTCONN;
    /* Nothing waits (every relayed command): one send() from the caller's
     * bytes, as queue_now() would, without its calls. */
    if (G_LIKELY(ddm_vm_sends_now(vm, len, vm_cfg(vm)->max_write_queue)))
        return ddm_vm_send_whole_(vm, packet, len);
    return ddm_vm_io_queue(vm, packet, len);
}

gboolean ddm_vm_flush_now(DdmVm *vm)
{
    g_return_val_if_fail(ddm_vm_is_valid(vm), FALSE);
    if (vm->fd < 0 || vm->state == DDM_VM_STATE_CLOSED || out_queued(vm) == 0)
        return FALSE;
    if (flush_out(vm) < 0)
        return FALSE; /* the VM went: nothing more can reach it */
    return out_queued(vm) > 0;
}

gboolean ddm_vm_notify_when_drained(DdmVm *vm)
{
    g_return_val_if_fail(ddm_vm_is_valid(vm), FALSE);
    if (!vm->out_watch && !(vm->out_gathering && out_queued(vm) > 0))
        return FALSE; /* nothing waits for the socket (nor for a gathering's end) */
    vm->notify_drained = TRUE;
    return TRUE;
}

void ddm_vm_pause_input(DdmVm *vm, gboolean paused)
{
    g_return_if_fail(ddm_vm_is_valid(vm));
    if (vm->input_paused == paused)
        return;
    vm->input_paused = paused != 0;
    if (vm->state == DDM_VM_STATE_CLOSED || vm->fd < 0)
        return;
    if (paused && vm->io_watch) {
        ddm_watch_remove(vm->io_watch);
        vm->io_watch = NULL;
    } else if (!paused && !vm->io_watch) {
        vm->io_watch = ddm_watch_add(vm->fd, G_IO_IN, ddm_vm_io_on_readable, vm);
    }
    g_debug("%s: %s reading from the VM", vm_key(vm), paused ? "paused" : "resumed");
}

/* ----------------------------------------------------------- read path */

/* Take every complete unit out of the reader. FALSE once the VM is closed.
 * A packet's bytes, consumed from the reader, are lent writable to
 * foreign_reply (the relay writes a debugger's id into the reply there,
 * monitor.h); nothing here reads a packet's bytes after handing it on. */
static gboolean drain_reader(DdmVm *vm)
{
    for (;;) {
        DdmJdwpPacket pkt;
        DdmJdwpResult res;

        if (vm->state == DDM_VM_STATE_CLOSED)
            return FALSE;
        res = ddm_jdwp_reader_next(vm->reader, &pkt);
        switch (res) {
        case DDM_JDWP_NEED_MORE:
            return TRUE;
        case DDM_JDWP_HANDSHAKE_OK:
            ddm_vm_handshake_echoed(vm);
            break;
        case DDM_JDWP_DISCARDED:
            g_debug("%s: packet before the handshake echo discarded", vm_key(vm));
            break;
        case DDM_JDWP_PACKET:
            ddm_vm_classify_packet(vm, &pkt);
            break;
        case DDM_JDWP_PACKET_HEAD:
            if (ddm_jdwp_is_reply(&pkt.header))
                ddm_vm_reply_head(vm, &pkt);
            else
                ddm_vm_stream_offer(vm, &pkt);
            break;
        case DDM_JDWP_STREAM_DATA:
            if (vm->reply_streaming) {
                ddm_vm_reply_part(vm, pkt.data, pkt.data_len, FALSE);
            } else {
                vm->bytes_streamed += pkt.data_len;
                ddm_vm_stream_data(vm, pkt.data, pkt.data_len);
            }
            break;
        case DDM_JDWP_STREAM_END:
            vm->packets_in++;
            if (vm->reply_streaming) {
                vm->reply_streaming = FALSE;
                ddm_vm_reply_part(vm, NULL, 0, TRUE);
            } else {
                ddm_vm_stream_end(vm);
            }
            break;
        case DDM_JDWP_ERR_HANDSHAKE:
            ddm_vm_close_bad(vm, "bad handshake reply (not \"%s\")", DDM_JDWP_HANDSHAKE);
            return FALSE;
        case DDM_JDWP_ERR_SHORT:
            ddm_vm_close_bad(vm, "bad JDWP packet: declared length %zu is below 11",
                             ddm_jdwp_reader_claimed_len(vm->reader));
            return FALSE;
        case DDM_JDWP_ERR_TOO_BIG:
            ddm_vm_close_bad(vm, "bad JDWP packet: declared length %zu is over the cap of %zu "
                             "bytes (--max-packet)",
                             ddm_jdwp_reader_claimed_len(vm->reader), vm_cfg(vm)->max_packet);
            return FALSE;
        case DDM_JDWP_ERR_BUDGET: {
            const DdmJdwpBudget *b = ddm_monitor_read_budget(vm->monitor);
            ddm_vm_close_bad(vm, "refused: a buffer of %zu bytes for its packet would take all "
                             "peers' buffers past the budget (%zu of %zu bytes in use, "
                             "--max-buffers)",
                             ddm_jdwp_reader_refused_len(vm->reader), ddm_jdwp_budget_used(b),
                             ddm_jdwp_budget_limit(b));
            return FALSE;
        }
        default:
            ddm_vm_close_bad(vm, "bad JDWP packet: %s", ddm_jdwp_result_str(res));
            return FALSE;
        }
    }
}

/* The in-place path (the reader idle: it holds no byte, no handshake is
 * awaited, nothing streams): @n bytes read into @buf, not through the
 * reader. The whole packets at its start are classified where they are
 * (the 11-byte header parsed there), exactly as the reader would hand them
 * out (ddm_jdwp_whole_packet_len is nonzero exactly for those), the reader
 * saying meanwhile whether more follow (ddm_jdwp_reader_set_more_outside:
 * the relay batches its writes on it); the rest (a packet not yet whole, or
 * one the reader must judge: too short, past the cap, bad flags) is fed to
 * the reader, which then sees the stream as if it had read it all, and
 * drained as before. Nothing may keep a pointer into @buf (the relay
 * writes a debugger's id into a reply there, relay.h; as into the reader's
 * consumed packets, drain_reader). FALSE once the VM is closed. */
static gboolean handle_in_place(DdmVm *vm, uint8_t *buf, size_t n)
{
    size_t max = ddm_jdwp_reader_max_packet(vm->reader); /* the cap the reader would apply */
    size_t off = 0;
    size_t len = ddm_jdwp_whole_packet_len(buf, n, max);
    gboolean more = FALSE; /* what the reader was told */
    while (len) {
        DdmJdwpPacket pkt;
        ddm_jdwp_packet_in_place(&pkt, buf + off, len);
        off += len;
        len = ddm_jdwp_whole_packet_len(buf + off, n - off, max);
        if (more != (len != 0)) /* (a lone packet: no call) */
            ddm_jdwp_reader_set_more_outside(vm->reader, more = len != 0);
        ddm_vm_classify_packet(vm, &pkt);
        if (vm->state == DDM_VM_STATE_CLOSED) {
            if (more) /* (the reader lives as long as the VM: not saying "more") */
                ddm_jdwp_reader_set_more_outside(vm->reader, FALSE);
            return FALSE; /* (the rest is dropped with the connection) */
        }
    }
    if (off == n)
        return TRUE;
    ddm_jdwp_reader_feed(vm->reader, buf + off, n - off);
    return drain_reader(vm);
}

/* The relay's fused path for a debugger's reply (issue 16): a read that
 * holds one whole reply and nothing else, none of ddmon's (its pending
 * requests first, then the late HELO: ddm_vm_classify_packet's checks, in
 * its order), goes straight to the relay's reply_alone, which sends it on
 * from @buf, without the general path's layers (the in-place loop, the
 * classification, the daemon's hop). FALSE: nothing was done (anything
 * else, or the relay declined): the general path handles the read. Only
 * for a VM with relay state: the others pay one test. Inlined into its
 * callers (take_in_place's: read_first, read_first_rest, read_input_from),
 * whose frames hold what it needs (out of line: a frame of its own, ~11 Ir a reply). */
static inline __attribute__((always_inline)) gboolean reply_alone(DdmVm *vm, const DdmJdwpReader *rd,
                                                                    uint8_t *buf, size_t n)
{
    if (!ddm_jdwp_is_alone(buf, n, ddm_jdwp_reader_max_packet(rd), DDM_JDWP_FLAG_REPLY))
        return FALSE;
    uint32_t be;
    memcpy(&be, buf + 4, sizeof be);
    uint32_t id = GUINT32_FROM_BE(be);
    if (ddm_correlate_holds(vm->pending, id) || vm_reply_is_late_helo(vm, id))
        return FALSE;
    /* ddm_monitor_events, inline (monitor-private.h: a call a reply less) */
    const DdmMonitor *mon = vm->monitor;
    gboolean (*hook)(gpointer, DdmVm *, uint8_t *, size_t) = mon->events->reply_alone;
    if (!hook || !hook(mon->ud, vm, buf, n))
        return FALSE;
    vm->packets_in++; /* (as ddm_vm_classify_packet counts it) */
    return TRUE;
}

/* A read of @n bytes into a buffer on the stack, the reader idle: the
 * relay's fused reply path if it takes it, else handle_in_place. FALSE:
 * the VM closed or paused its input (stop reading). One step for the
 * three places that read in place (read_first, read_first_rest,
 * read_input_from). */
static inline __attribute__((always_inline)) gboolean take_in_place(DdmVm *vm,
                                                                    const DdmJdwpReader *rd,
                                                                    uint8_t *buf, size_t n)
{
    return (vm->relay && reply_alone(vm, rd, buf, n)) || handle_in_place(vm, buf, n);
}

/* How much the next read may take: STREAM_READ_CHUNK while a long packet
 * streams and the last read filled its buffer (or the reader still holds
 * the large buffer of the previous reads of this wakeup, or a wakeup's
 * first read can take the budget's spare), if the budget shared by every
 * reader has room for it; READ_CHUNK otherwise. */
static size_t read_want(const DdmVm *vm, gboolean filled)
{
    uint64_t left = ddm_jdwp_reader_stream_left(vm->reader);
    if (left > 0 && ddm_jdwp_reader_buffer_size(vm->reader) >= STREAM_READ_CHUNK)
        return STREAM_READ_CHUNK; /* (asking less would shrink it: jdwp.c) */
    if (left <= READ_CHUNK)
        return READ_CHUNK;
    const DdmJdwpBudget *b = ddm_monitor_read_budget(vm->monitor);
    if (!filled && (!b || ddm_jdwp_budget_spare_size(b) < STREAM_READ_CHUNK))
        return READ_CHUNK; /* a trickle's first read: no fresh 256 KiB for it */
    if (b && ddm_jdwp_budget_used(b) + STREAM_READ_CHUNK > ddm_jdwp_budget_limit(b))
        return READ_CHUNK;
    return STREAM_READ_CHUNK;
}

/* A read (or a splice, which reads) of the VM's socket ended the wakeup:
 * @err 0 is the end of file, EAGAIN an empty socket (the reader's large
 * buffer goes back, ddm_jdwp_reader_release_empty), any other errno a
 * read error; both of those close the VM. */
static void read_ended(DdmVm *vm, int err)
{
    if (err == EAGAIN || err == EWOULDBLOCK) {
        ddm_jdwp_reader_release_empty(vm->reader);
    } else if (err == 0) {
        vm->refused_handshake = vm->state == DDM_VM_STATE_HANDSHAKE;
        ddm_vm_close(vm, vm->state == DDM_VM_STATE_HANDSHAKE
                             ? "connection closed by the peer during the handshake"
                             : "connection closed by the VM");
    } else {
        vm->refused_handshake = vm->state == DDM_VM_STATE_HANDSHAKE && err == ECONNRESET;
        char *why = g_strdup_printf("read error: %s", g_strerror(err));
        ddm_vm_close(vm, why);
        g_free(why);
    }
}

typedef enum { SPLICE_NONE, SPLICE_MOVED, SPLICE_STOP } SpliceOutcome;

/* A reply going to its claimer as it arrives, none of its remaining bytes
 * read yet: the claimer may move them from the socket itself
 * (DdmSessionEvents.reply_splice), counted here as read. SPLICE_NONE: read
 * as usual; SPLICE_MOVED: bytes moved (*@empty: the socket had no more);
 * SPLICE_STOP: nothing more this wakeup (the socket is empty, or the VM
 * was closed). */
static SpliceOutcome splice_reply(DdmVm *vm, size_t *taken, gboolean *empty)
{
    uint64_t unread = ddm_jdwp_reader_stream_unread(vm->reader);
    const DdmSessionEvents *ev;
    gpointer ud;
    gssize moved;

    if (!unread)
        return SPLICE_NONE;
    ev = ddm_monitor_events(vm->monitor, &ud);
    if (!ev->reply_splice)
        return SPLICE_NONE;
    *empty = FALSE;
    size_t max = (size_t)MIN(unread, (uint64_t)(READ_BYTES_PER_WAKEUP - *taken));
    moved = ev->reply_splice(ud, vm, vm->fd, max, empty);
    if (moved > 0) {
        vm->bytes_in += (guint64)moved;
        *taken += (size_t)moved;
        ddm_jdwp_reader_stream_moved(vm->reader, (uint64_t)moved);
        /* at its last byte: STREAM_END, and the claimer hears the end */
        if (ddm_jdwp_reader_stream_left(vm->reader) == 0 && !drain_reader(vm))
            return SPLICE_STOP;
        return SPLICE_MOVED;
    }
    if (moved == -ENOTSUP)
        return SPLICE_NONE;
    read_ended(vm, (int)-moved);
    return SPLICE_STOP;
}

/* Read what the socket holds now (bounded per call, for fairness between
 * VMs) and handle every complete packet. Closes the VM on EOF, a read error
 * or bad input; the caller holds a reference. @n0 reads of @taken0 bytes
 * were made already this wakeup (@filled0: the last took all it asked
 * for): ddm_vm_io_on_readable's first read (read_first). */
static void read_input_from(DdmVm *vm, int n0, size_t taken0, gboolean filled0)
{
    gboolean filled = filled0; /* the last read took all it asked for */
    size_t taken = taken0;
    for (int n = n0; n < READS_PER_WAKEUP && taken < READ_BYTES_PER_WAKEUP &&
                    vm->state != DDM_VM_STATE_CLOSED && !vm->input_paused;
         n++) {
        if (G_UNLIKELY(vm->reply_streaming)) {
            gboolean empty = FALSE;
            SpliceOutcome o = splice_reply(vm, &taken, &empty);
            if (o == SPLICE_STOP)
                return;
            if (o == SPLICE_MOVED && empty) { /* no read just to see EAGAIN */
                if (vm->state != DDM_VM_STATE_CLOSED)
                    ddm_jdwp_reader_release_empty(vm->reader);
                return;
            }
            if (o == SPLICE_MOVED)
                continue;
        }
        uint8_t in_place[IN_PLACE_READ];
        /* (not after a streamed packet: the next is likely long too; a
         * larger buffer a stream left, without a budget to take it back,
         * shrinks at the reader's next read, as before) */
        gboolean direct = ddm_jdwp_reader_in_place_ok(vm->reader, READ_CHUNK);
        size_t avail = 0, want;
        uint8_t *space = in_place;
        ssize_t got;

        if (direct) {
            want = MIN(sizeof in_place, READ_BYTES_PER_WAKEUP - taken);
        } else {
            want = read_want(vm, filled);
            space = ddm_jdwp_reader_space(vm->reader, want, &avail);
            if (!space) { /* over the budget: the reader says so */
                drain_reader(vm);
                return;
            }
            want = MIN(MIN(avail, want), READ_BYTES_PER_WAKEUP - taken);
        }
        got = read(vm->fd, space, want);

        if (got < 0 && errno == EINTR)
            continue;
        if (got <= 0) {
            read_ended(vm, got < 0 ? errno : 0);
            return;
        }
        vm->bytes_in += (guint64)got;
        taken += (size_t)got;
        if (direct) {
            if (!take_in_place(vm, vm->reader, in_place, (size_t)got))
                return;
        } else {
            ddm_jdwp_reader_commit(vm->reader, (size_t)got);
            if (!drain_reader(vm))
                return;
        }
        if ((size_t)got < want) {
            /* the socket is empty for now: a streamed packet's large buffer
             * is not held until its next bytes (a VM may trickle them) */
            ddm_jdwp_reader_release_empty(vm->reader);
            return;
        }
        filled = TRUE;
    }
    /* the wakeup's share is taken: its next one starts from the spare */
    if (vm->state != DDM_VM_STATE_CLOSED)
        ddm_jdwp_reader_release_empty(vm->reader);
}

void ddm_vm_io_read_input(DdmVm *vm)
{
    read_input_from(vm, 0, 0, FALSE);
}

/* read_first's read did not end the wakeup (@got: EINTR, the end of file, a
 * read error, or a full buffer, @buf): what read_input_from's first round
 * does after its read, then its next rounds. Out of line: rare. */
static G_GNUC_NO_INLINE void read_first_rest(DdmVm *vm, uint8_t *buf, ssize_t got, int err)
{
    if (got < 0 && err == EINTR) {
        read_input_from(vm, 1, 0, FALSE);
        return;
    }
    if (got <= 0) {
        read_ended(vm, got < 0 ? err : 0);
        return;
    }
    vm->bytes_in += (guint64)got; /* (a full buffer: IN_PLACE_READ bytes) */
    if (!take_in_place(vm, vm->reader, buf, (size_t)got))
        return;
    read_input_from(vm, 1, (size_t)got, TRUE);
}

/* The watch's first read, when read_input_from's first round would read in
 * place (the caller checked: the VM open, reading, no reply streaming, the
 * reader idle, ddm_jdwp_reader_in_place_ok): that round, without its loop,
 * for what nearly every wakeup is, a read that empties the socket (a reply
 * to a debugger, an event, a DDM chunk). @fd is the VM's (its read watch's).
 * Inline in the watch's callback: every packet from a VM comes here. */
static inline __attribute__((always_inline)) void read_first(DdmVm *vm, DdmJdwpReader *rd, int fd)
{
    uint8_t in_place[IN_PLACE_READ];
    ssize_t got = read(fd, in_place, sizeof in_place);
    if (G_UNLIKELY(got <= 0 || (size_t)got == sizeof in_place)) {
        read_first_rest(vm, in_place, got, got < 0 ? errno : 0);
        return;
    }
    vm->bytes_in += (guint64)got;
    if (take_in_place(vm, rd, in_place, (size_t)got))
        ddm_jdwp_reader_release_empty(rd); /* the socket is empty for now */
}

gboolean ddm_vm_io_on_readable(gint fd, GIOCondition cond, gpointer ud)
{
    DdmVm *vm = ud;
    gboolean keep;
    (void)cond;

    vm->ref_count++; /* ddm_vm_ref(), inline: every packet comes here */
    const char *before = ddm_logctx_enter(vm_key(vm));
    DdmJdwpReader *rd = vm->reader; /* (never NULL while the VM lives) */
    if (G_LIKELY(vm->state != DDM_VM_STATE_CLOSED && !vm->input_paused && !vm->reply_streaming &&
                 ddm_jdwp_reader_in_place_ok(rd, READ_CHUNK)))
        read_first(vm, rd, fd);
    else
        read_input_from(vm, 0, 0, FALSE);
    ddm_logctx_leave(before);
    /* A close or a pause removed this watch already (and cleared io_watch;
     * a resume from in here added a new one). */
    keep = vm->state != DDM_VM_STATE_CLOSED && !vm->input_paused;
    if (G_LIKELY(vm->ref_count > 1))
        vm->ref_count--; /* not the last: ddm_vm_unref() would only do this */
    else
        ddm_vm_unref(vm);
    return keep ? G_SOURCE_CONTINUE : G_SOURCE_REMOVE;
}
