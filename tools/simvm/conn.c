/* SPDX-License-Identifier: Apache-2.0
 *
 * One JDWP connection of a simulated VM: non-blocking reads, the VM-side
 * handshake (read 14 bytes, echo them), a lean packet parser (no buffer
 * while idle: 5000 connections must stay cheap), and a capped
 * output queue. Handlers never free a connection: they set `closing` and
 * the I/O callback destroys it after they return.
 *
 * Output is a byte queue, optionally fed by one producer at a time (a heap
 * dump streamed as the socket drains: sim_conn_start_producer); what is
 * sent while a producer runs waits in `later`, in order, so a producer's
 * packet is never interleaved with others.
 *
 * ART's adbconnection wants the whole handshake in the first read; in ART
 * mode a client that sends fewer than 14 bytes at first is dropped
 * ("Closing connection to broken client"). Dalvik and JVM modes wait.
 */
#include "simvm-private.h"

#include <errno.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "core/wire/ddm.h"
#include "jdwp_model.h"

#define READ_BUDGET ((size_t)1 << 20) /* per callback, so one client cannot starve others */
#define IN_KEEP ((size_t)16 << 10)      /* input buffer kept between packets */
#define OUT_KEEP ((size_t)64 << 10)     /* output buffer kept once flushed */
#define PRODUCE_BUDGET ((size_t)4 << 20) /* produced per flush, so one dump cannot starve others */

struct SimProducer {
    SimProduceFn fn;
    SimProducerFreeFn free_fn;
    void *ud;
    gboolean stalled;       /* STALL: nothing more, ever */
    gboolean close_when_sent; /* CLOSE: drop the connection once its bytes are out */
};
typedef struct SimProducer SimProducer;

/* One entry of SimConn.later: bytes, or a producer to start in turn. */
typedef struct SimOutItem {
    GByteArray *bytes;
    SimProducer *producer;
} SimOutItem;

static void producer_free(SimProducer *p)
{
    if (!p)
        return;
    if (p->free_fn)
        p->free_fn(p->ud);
    g_free(p);
}

static void out_item_free(gpointer data)
{
    SimOutItem *it = data;

    if (it->bytes)
        g_byte_array_unref(it->bytes);
    producer_free(it->producer);
    g_free(it);
}

static void conn_io(void *ud, unsigned events);

/* Stop all I/O now; the struct itself is freed later (sim_conn_free). */
static void teardown(SimConn *c)
{
    SimVm *vm = c->vm;

    sim_reactor_remove(vm->world->reactor, c->io);
    c->io = NULL;
    close(c->fd);
    c->fd = -1;
    if (vm->conn == c)
        vm->conn = NULL;
    sim_world_state_changed(vm->world);
}

void sim_conn_free(SimConn *c)
{
    sim_jdwp_model_free(c->jdwp);
    producer_free(c->producer);
    if (c->later)
        g_queue_free_full(c->later, out_item_free);
    if (c->in)
        g_byte_array_unref(c->in);
    g_byte_array_unref(c->out);
    g_free(c);
}

SimConn *sim_conn_new(SimVm *vm, int fd)
{
    SimConn *c = g_new0(SimConn, 1);

    c->vm = vm;
    c->fd = fd;
    c->out = g_byte_array_new();
    c->io = sim_reactor_add(vm->world->reactor, fd, SIM_IO_IN, conn_io, c);
    if (!c->io) {
        g_warning("pid %u: cannot watch fd %d: %s", vm->pid, fd, g_strerror(errno));
        close(fd);
        g_byte_array_unref(c->out);
        g_free(c);
        return NULL;
    }
    vm->conn = c;
    vm->connections++;
    sim_world_state_changed(vm->world);
    g_debug("pid %u: client connected (fd %d)", vm->pid, fd);
    return c;
}

void sim_conn_close(SimConn *c, const char *why)
{
    if (c->closing)
        return;
    c->closing = TRUE;
    g_debug("pid %u: closing connection: %s", c->vm->pid, why);
    teardown(c);
    /* callers up the stack may still hold @c: free it when they are done */
    if (!c->in_callback)
        sim_world_defer_free_conn(c->vm->world, c);
}

static gboolean later_empty(const SimConn *c)
{
    return !c->later || g_queue_is_empty(c->later);
}

/* TRUE while output may come without any input: bytes queued, or a
 * producer that has more to say. */
static gboolean output_pending(const SimConn *c)
{
    return c->out_off < c->out->len || !later_empty(c) ||
           (c->producer && !c->producer->stalled);
}

/* The output buffer is empty: refill it from the producer or the next
 * queued item. FALSE when there is nothing to send now. */
static gboolean refill(SimConn *c)
{
    SimProducer *p = c->producer;

    if (p) {
        SimProduceStatus st;
        size_t len = 0;

        if (p->stalled)
            return FALSE;
        if (p->close_when_sent) {
            sim_conn_close(c, "the producer ended the connection");
            return FALSE;
        }
        g_byte_array_set_size(c->out, (guint)SIM_PRODUCE_STEP);
        c->out_off = 0;
        st = p->fn(c, p->ud, c->out->data, SIM_PRODUCE_STEP, &len);
        g_byte_array_set_size(c->out, (guint)MIN(len, SIM_PRODUCE_STEP));
        switch (st) {
        case SIM_PRODUCE_MORE:
            if (len == 0) /* a producer must make progress; treat as finished */
                g_warning("pid %u: producer returned no bytes; ending it", c->vm->pid);
            else
                return TRUE;
            /* fall through */
        case SIM_PRODUCE_DONE:
            c->producer = NULL;
            producer_free(p);
            return TRUE; /* its last bytes, or the next item */
        case SIM_PRODUCE_STALL:
            p->stalled = TRUE;
            return len > 0;
        case SIM_PRODUCE_CLOSE:
            p->close_when_sent = TRUE;
            if (len == 0) {
                sim_conn_close(c, "the producer ended the connection");
                return FALSE;
            }
            return TRUE;
        }
        return FALSE;
    }
    if (!later_empty(c)) {
        SimOutItem *it = g_queue_pop_head(c->later);
        if (it->bytes) {
            c->later_bytes -= it->bytes->len;
            g_byte_array_unref(c->out);
            c->out = g_steal_pointer(&it->bytes);
            c->out_off = 0;
        } else {
            c->producer = g_steal_pointer(&it->producer);
        }
        out_item_free(it);
        return TRUE;
    }
    return FALSE;
}

/* Write what we can (and what producers make, up to a budget); watch for
 * writability while output remains. */
static void flush(SimConn *c)
{
    size_t produced = 0;

    for (;;) {
        while (c->out_off < c->out->len) {
            ssize_t n = send(c->fd, c->out->data + c->out_off, c->out->len - c->out_off, MSG_NOSIGNAL);
            if (n > 0) {
                c->out_off += (size_t)n;
                continue;
            }
            if (n < 0 && errno == EINTR)
                continue;
            if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
                goto wait;
            sim_conn_close(c, n < 0 ? g_strerror(errno) : "write returned 0");
            return;
        }
        produced += c->out->len;
        if (c->out->len > OUT_KEEP && !c->producer) {
            /* after a large reply: do not keep it per idle connection */
            g_byte_array_unref(c->out);
            c->out = g_byte_array_new();
        } else {
            g_byte_array_set_size(c->out, 0);
        }
        c->out_off = 0;
        if (produced >= PRODUCE_BUDGET && output_pending(c))
            goto wait; /* writable again at the next dispatch */
        if (!refill(c)) {
            if (c->closing)
                return;
            break;
        }
    }
    if (c->close_after_flush && !output_pending(c)) {
        sim_conn_close(c, "closed after the last reply (Dispose)");
        return;
    }
wait:
    if (c->out_off > (1u << 20)) {
        g_byte_array_remove_range(c->out, 0, (guint)c->out_off);
        c->out_off = 0;
    }
    sim_reactor_modify(c->vm->world->reactor, c->io, SIM_IO_IN | (output_pending(c) ? SIM_IO_OUT : 0));
}

void sim_conn_flush(SimConn *c)
{
    if (!c->closing)
        flush(c);
}

void sim_conn_send_raw(SimConn *c, const uint8_t *bytes, size_t len)
{
    if (c->closing || !bytes)
        return;
    if (c->out->len - c->out_off + c->later_bytes + len > SIM_OUT_MAX) {
        g_warning("pid %u: client does not read (%zu bytes queued); dropping it", c->vm->pid,
                  (size_t)(c->out->len - c->out_off + c->later_bytes));
        sim_conn_close(c, "output queue over its cap");
        return;
    }
    if (c->producer || !later_empty(c)) {
        /* behind the packet being streamed */
        SimOutItem *tail = c->later ? g_queue_peek_tail(c->later) : NULL;
        if (!tail || !tail->bytes) {
            tail = g_new0(SimOutItem, 1);
            tail->bytes = g_byte_array_new();
            if (!c->later)
                c->later = g_queue_new();
            g_queue_push_tail(c->later, tail);
        }
        g_byte_array_append(tail->bytes, bytes, (guint)len);
        c->later_bytes += len;
        return;
    }
    g_byte_array_append(c->out, bytes, (guint)len);
    if (!c->in_callback)
        flush(c);
}

void sim_conn_start_producer(SimConn *c, SimProduceFn fn, SimProducerFreeFn free_fn, void *ud)
{
    SimProducer *p = g_new0(SimProducer, 1);

    p->fn = fn;
    p->free_fn = free_fn;
    p->ud = ud;
    if (c->closing) {
        producer_free(p);
        return;
    }
    if (c->producer || !later_empty(c)) {
        SimOutItem *it = g_new0(SimOutItem, 1);
        it->producer = p;
        if (!c->later)
            c->later = g_queue_new();
        g_queue_push_tail(c->later, it);
    } else {
        c->producer = p;
    }
    if (!c->in_callback)
        flush(c);
}

/* Types the --zlib option compresses: the large tables and segments. */
static gboolean zlib_wanted(SimConn *c, uint32_t type, size_t len)
{
    if (!c->vm->world->cfg.zlib || len < 64)
        return FALSE;
    return type == DDM_CHUNK('T', 'H', 'S', 'T') || type == DDM_CHUNK('H', 'P', 'S', 'G') ||
           type == DDM_CHUNK('H', 'P', 'S', 'O') || type == DDM_CHUNK('N', 'H', 'S', 'G') ||
           type == DDM_CHUNK('S', 'T', 'K', 'L') || type == DDM_CHUNK('N', 'H', 'G', 'T');
}

static void send_chunk(SimConn *c, gboolean reply, uint32_t id, uint32_t type, const uint8_t *data,
                       size_t len)
{
    uint8_t *pkt, *z = NULL;
    size_t pkt_len, zlen = 0;

    if (zlib_wanted(c, type, len)) {
        z = ddm_zlib_deflate(type, data, len, &zlen);
        if (z) {
            type = DDM_CHUNK_ZLIB;
            data = z;
            len = zlen;
        }
    }
    pkt = reply ? ddm_chunk_build_reply(id, type, data, len, &pkt_len)
                : ddm_chunk_build_packet(id, type, data, len, &pkt_len);
    sim_conn_send_raw(c, pkt, pkt_len);
    g_free(pkt);
    g_free(z);
}

void sim_conn_send_event(SimConn *c, uint32_t type, const uint8_t *data, size_t len)
{
    send_chunk(c, FALSE, sim_vm_next_event_id(c->vm), type, data, len);
}

void sim_conn_send_reply(SimConn *c, uint32_t id, uint32_t type, const uint8_t *data, size_t len)
{
    send_chunk(c, TRUE, id, type, data, len);
}

void sim_conn_send_jdwp_reply(SimConn *c, uint32_t id, uint16_t error, const uint8_t *data, size_t len)
{
    size_t pkt_len;
    uint8_t *pkt = ddm_jdwp_build_reply(id, error, data, len, &pkt_len);

    sim_conn_send_raw(c, pkt, pkt_len);
    g_free(pkt);
}

void sim_conn_reply_nothing(SimConn *c, uint32_t id)
{
    if (c->vm->mode == SIM_MODE_DALVIK)
        sim_conn_send_jdwp_reply(c, id, 0, NULL, 0);
}

void sim_conn_send_fail(SimConn *c, uint32_t id, uint32_t code, const char *msg)
{
    ddm_writer w;
    uint8_t *p;
    size_t len;

    ddm_writer_init(&w, 4096);
    ddm_write_u4(&w, code);
    ddm_write_lstr(&w, msg);
    p = ddm_writer_take(&w, &len);
    sim_conn_send_reply(c, id, DDM_CHUNK_FAIL, p, len);
    free(p);
}

/* The 14-byte handshake, VM side. Returns FALSE when the connection goes. */
static gboolean read_handshake(SimConn *c)
{
    gboolean art = c->vm->mode == SIM_MODE_ART;
    ssize_t n;

    do
        n = recv(c->fd, c->hs + c->hs_len, sizeof c->hs - c->hs_len, MSG_DONTWAIT);
    while (n < 0 && errno == EINTR);
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
        return TRUE;
    if (n <= 0) {
        sim_conn_close(c, n == 0 ? "EOF before the handshake" : g_strerror(errno));
        return FALSE;
    }
    c->hs_len += (size_t)n;
    if (memcmp(c->hs, DDM_JDWP_HANDSHAKE, c->hs_len) != 0) {
        g_message("pid %u: bad JDWP handshake from client; closing", c->vm->pid);
        sim_conn_close(c, "bad handshake");
        return FALSE;
    }
    if (c->hs_len < sizeof c->hs) {
        if (art) {
            /* adbconnection.cc: all 14 bytes must be there at the first read */
            g_message("pid %u: Closing connection to broken client (partial handshake)", c->vm->pid);
            sim_conn_close(c, "partial handshake");
            return FALSE;
        }
        return TRUE;
    }
    c->handshaken = TRUE;
    if (c->vm->world->cfg.apnm_before_echo && c->vm->mode != SIM_MODE_JVM)
        sim_conn_send_apnm(c); /* the race real devices show: ddmon must discard it */
    sim_conn_send_raw(c, (const uint8_t *)DDM_JDWP_HANDSHAKE, DDM_JDWP_HANDSHAKE_LEN);
    g_debug("pid %u: handshake done", c->vm->pid);
    return TRUE;
}

/* Hand every complete packet in c->in to the handlers; FALSE on a bad one.
 * Lengths are checked from the first 4 bytes before anything grows. */
static gboolean parse_packets(SimConn *c)
{
    size_t pos = 0;
    const guint8 *d = c->in->data;
    gboolean ok = TRUE;

    while (!c->closing && c->in->len - pos >= 4) {
        uint32_t len = ((uint32_t)d[pos] << 24) | ((uint32_t)d[pos + 1] << 16) |
                       ((uint32_t)d[pos + 2] << 8) | d[pos + 3];
        DdmJdwpPacket pkt;

        if (len < DDM_JDWP_HEADER_LEN || len > c->vm->world->cfg.max_request) {
            g_message("pid %u: client sent a packet length of %u (allowed %u..%u); closing that connection",
                      c->vm->pid, len, DDM_JDWP_HEADER_LEN, c->vm->world->cfg.max_request);
            ok = FALSE;
            break;
        }
        if (c->in->len - pos >= 9 && d[pos + 8] != 0 && d[pos + 8] != DDM_JDWP_FLAG_REPLY) {
            g_message("pid %u: client sent JDWP flags 0x%02x; closing that connection", c->vm->pid,
                      d[pos + 8]);
            ok = FALSE;
            break;
        }
        if (c->in->len - pos < len)
            break;
        memset(&pkt, 0, sizeof pkt);
        pkt.bytes = d + pos;
        pkt.len = len;
        ddm_jdwp_parse_header(pkt.bytes, len, &pkt.header);
        pkt.data = pkt.bytes + DDM_JDWP_HEADER_LEN;
        pkt.data_len = len - DDM_JDWP_HEADER_LEN;
        pos += len;
        sim_handle_packet(c, &pkt);
    }
    if (!ok || (pos == c->in->len && c->in->len > IN_KEEP)) {
        /* a large request has gone (or the connection goes): give the memory back */
        g_byte_array_unref(c->in);
        c->in = NULL;
    } else if (pos > 0) {
        g_byte_array_remove_range(c->in, 0, (guint)pos);
    }
    return ok;
}

static void read_packets(SimConn *c)
{
    size_t budget = READ_BUDGET;
    uint8_t buf[16384];

    while (!c->closing && budget > 0) {
        ssize_t n;

        do
            n = recv(c->fd, buf, sizeof buf, MSG_DONTWAIT);
        while (n < 0 && errno == EINTR);
        if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
            return;
        if (n <= 0) {
            sim_conn_close(c, n == 0 ? "client closed the connection" : g_strerror(errno));
            return;
        }
        budget = budget > (size_t)n ? budget - (size_t)n : 0;
        if (!c->in)
            c->in = g_byte_array_new();
        g_byte_array_append(c->in, buf, (guint)n);
        if (!parse_packets(c)) {
            sim_conn_close(c, "bad packet");
            return;
        }
    }
}

static void conn_io(void *ud, unsigned events)
{
    SimConn *c = ud;

    c->in_callback = TRUE;
    if (events & SIM_IO_IN) {
        if (!c->handshaken)
            read_handshake(c);
        if (!c->closing && c->handshaken)
            read_packets(c);
    }
    /* still "in the callback": a close during this flush must not also
     * queue @c for the reaper, we free it right here */
    if (!c->closing)
        flush(c);
    c->in_callback = FALSE;
    if (c->closing)
        sim_conn_free(c);
}
