/* SPDX-License-Identifier: Apache-2.0
 *
 * One debugger connection (relay-private.h): reading its handshake and
 * packets, sending its commands to the VM with ids remapped (idmap.h) and
 * answering vendor command sets for plain JVMs itself, writing what the VM
 * sends to it, backpressure both ways (doc/architecture.md), and closing
 * it (relay_leave.c then puts its VM back).
 */
#include "core/relay/relay-private.h"

#include <errno.h>
#include <unistd.h>

#include <glib-unix.h>

#include "core/session/monitor.h"

#define READ_CHUNK (64u * 1024u)
#define TO_VM_BATCH (64u * 1024u)     /* debugger packets gathered into one write to the VM */
#define FLUSH_AT (64u * 1024u)        /* VM packets queued for a debugger: write now from here */
/* Backpressure: once this much waits for a slow side (the debugger, or the
 * VM), ddmon stops reading from the other side until it has all been
 * written, as the kernel would on a direct connection. Far below
 * max_write_queue, which only catches what ddmon itself adds. */
#define BACKPRESSURE_AT (2u << 20)

static void debugger_to_vm_flush(Debugger *d);

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

void ddm_relay_debugger_flush(Debugger *d)
{
    while (d->out_pos < d->out->len) {
        ssize_t n = write(d->fd, d->out->data + d->out_pos, d->out->len - d->out_pos);
        if (n > 0) {
            d->out_pos += (gsize)n;
            continue;
        }
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
            if (!d->out_watch)
                d->out_watch = ddm_watch_add(d->fd, G_IO_OUT, on_debugger_out, d);
            return;
        }
        ddm_relay_debugger_close(d, n < 0 ? g_strerror(errno) : "write failed");
        return;
    }
    g_byte_array_set_size(d->out, 0);
    d->out_pos = 0;
    if (d->out_watch) {
        ddm_watch_remove(d->out_watch);
        d->out_watch = NULL;
    }
    if (d->vm_paused)
        set_vm_paused(d, FALSE);
}

static gboolean on_debugger_out(gint fd, GIOCondition cond, gpointer ud)
{
    Debugger *d = ud;
    (void)fd;
    (void)cond;
    ddm_relay_debugger_flush(d); /* removes this watch once all is written */
    return G_SOURCE_CONTINUE;
}

static void on_flush_timer(DdmTimer *t, gpointer ud)
{
    (void)t;
    ddm_relay_debugger_flush(ud);
}

/* Queue bytes for the debugger; FALSE (and the debugger closed) past the cap.
 * The write happens once per main-loop round (a high-priority idle runs right
 * after the VM's read batch), so a burst of packets costs one write. */
gboolean ddm_relay_debugger_queue(Debugger *d, const guint8 *p, gsize n, gboolean set_id, uint32_t id)
{
    const DdmConfig *cfg = ddm_monitor_config(d->relay->mon);
    if (d->out->len - d->out_pos + n > cfg->max_write_queue) {
        ddm_relay_debugger_close(d, "it reads too slowly (write queue full)");
        return FALSE;
    }
    if (d->out_pos > 0 && d->out_pos == d->out->len) {
        g_byte_array_set_size(d->out, 0);
        d->out_pos = 0;
    }
    gsize at = d->out->len;
    g_byte_array_append(d->out, p, (guint)n);
    if (set_id)
        ddm_jdwp_set_id(d->out->data + at, id);
    if (!d->out_watch) {
        if (d->out->len - d->out_pos >= FLUSH_AT) /* a big burst streams on */
            ddm_relay_debugger_flush(d);
        else if (!ddm_timer_armed(&d->flush_timer)) {
            ddm_timer_init(&d->flush_timer, on_flush_timer, d);
            ddm_timer_arm(&d->flush_timer, 0);
        }
    }
    /* The debugger's socket is full and much waits: stop reading from the
     * VM until the queue is empty (ddm_relay_debugger_flush resumes it). */
    if (d->state == DBG_ATTACHED && d->out_watch && !d->vm_paused &&
        d->out->len - d->out_pos >= BACKPRESSURE_AT)
        set_vm_paused(d, TRUE);
    return TRUE;
}

gboolean ddm_relay_debugger_send(Debugger *d, const guint8 *p, gsize n)
{
    return ddm_relay_debugger_queue(d, p, n, FALSE, 0);
}

/* ------------------------------------------------------------ from the debugger */

/* One packet from the debugger, going to its VM. */
static void debugger_packet(Debugger *d, const DdmJdwpPacket *pkt)
{
    RelayVm *r = d->rvm;
    DdmVm *vm = r->vm;
    if (!ddm_jdwp_is_reply(&pkt->header) && pkt->header.cmdset >= 128 &&
        vm->state == DDM_VM_STATE_PLAIN) {
        /* A vendor command set can crash OpenJDK's agent (JDK-8382537): a
         * VM known not to be Dalvik/ART never gets one. Answer what a
         * healthy JVM answers, NOT_IMPLEMENTED (after sending what was
         * gathered before it, so commands reach the VM in order). */
        gsize n;
        g_autofree guint8 *reply = ddm_jdwp_build_reply(pkt->header.id, DDM_JDWP_ERROR_NOT_IMPLEMENTED,
                                                        NULL, 0, &n);
        g_debug("relay: command set %u from the debugger of plain JVM %s answered by ddmon",
                pkt->header.cmdset, vm_label(vm));
        debugger_to_vm_flush(d);
        ddm_relay_debugger_send(d, reply, n);
        return;
    }
    guint at = d->to_vm->len;
    g_byte_array_append(d->to_vm, pkt->bytes, (guint)pkt->len);
    if (!ddm_jdwp_is_reply(&pkt->header)) {
        uint32_t vm_id;
        if (!ddm_idmap_map(r->ids, d, pkt->header.id, &vm_id)) {
            g_byte_array_set_size(d->to_vm, at);
            debugger_to_vm_flush(d);
            ddm_relay_debugger_close(d, "too many commands in flight");
            return;
        }
        ddm_jdwp_set_id(d->to_vm->data + at, vm_id);
        if (pkt->header.cmdset == DDM_JDWP_CMDSET_VM && pkt->header.cmd == DDM_JDWP_CMD_VM_DISPOSE)
            d->sent_dispose = TRUE;
    }
    if (d->to_vm->len >= TO_VM_BATCH)
        debugger_to_vm_flush(d);
}

/* One write to the VM for the packets gathered from one read. */
static void debugger_to_vm_flush(Debugger *d)
{
    if (!d->to_vm->len)
        return;
    if (d->rvm) {
        DdmVm *vm = d->rvm->vm;
        int rc = ddm_vm_send_packet(vm, d->to_vm->data, d->to_vm->len);
        if (rc < 0)
            g_message("relay: VM %s cannot take the debugger's packets (%s)", vm_label(vm), g_strerror(-rc));
    }
    if (d->to_vm->len > 4 * TO_VM_BATCH) { /* do not keep a big packet's buffer */
        g_byte_array_unref(d->to_vm);
        d->to_vm = g_byte_array_new();
    } else {
        g_byte_array_set_size(d->to_vm, 0);
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
            ddm_relay_route(d);
            continue;
        }
        if (res == DDM_JDWP_PACKET && d->state == DBG_ATTACHED) {
            debugger_packet(d, &pkt);
            continue;
        }
        g_autofree char *why = NULL;
        if (res == DDM_JDWP_ERR_SHORT || res == DDM_JDWP_ERR_TOO_BIG)
            why = g_strdup_printf("protocol error: %s (declared length %zu, cap %zu)",
                                  ddm_jdwp_result_str(res), ddm_jdwp_reader_claimed_len(d->reader),
                                  ddm_monitor_config(d->relay->mon)->max_packet);
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
    debugger_to_vm_flush(d);
}

static gboolean on_debugger_in(gint fd, GIOCondition cond, gpointer ud)
{
    Debugger *d = ud;
    for (int rounds = 0; rounds < 16 && (d->state == DBG_HANDSHAKE || d->state == DBG_ATTACHED);
         rounds++) {
        size_t avail;
        uint8_t *space = ddm_jdwp_reader_space(d->reader, READ_CHUNK, &avail);
        if (!space) { /* over the budget: drain() reports and closes */
            ddm_relay_debugger_drain(d);
            break;
        }
        ssize_t n = read(d->fd, space, avail);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
            break;
        if (n <= 0) {
            d->in_watch = NULL; /* removed by returning G_SOURCE_REMOVE */
            ddm_relay_debugger_close(d, n == 0 ? (d->state == DBG_HANDSHAKE ? "closed before the handshake"
                                                                             : NULL)
                                               : g_strerror(errno));
            return G_SOURCE_REMOVE;
        }
        ddm_jdwp_reader_commit(d->reader, (size_t)n);
        ddm_relay_debugger_drain(d);
        if (d->state == DBG_ATTACHED && ddm_vm_out_queued(d->rvm->vm) >= BACKPRESSURE_AT &&
            ddm_vm_notify_when_drained(d->rvm->vm)) {
            /* The VM takes less than the debugger sends: read on once all
             * of it is written (ddm_relay_vm_output_drained). */
            g_debug("relay: VM %s reads slowly; pausing reading from debugger %s",
                    vm_label(d->rvm->vm), d->peer);
            d->reading_paused = TRUE;
            d->in_watch = NULL;
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

void ddm_relay_debugger_read(Debugger *d)
{
    if (!d->in_watch)
        d->in_watch = ddm_watch_add(d->fd, G_IO_IN, on_debugger_in, d);
}

/* ------------------------------------------------------------ life */

Debugger *ddm_relay_debugger_new(Endpoint *ep, int fd, char *peer)
{
    DdmRelay *relay = ep->relay;
    Debugger *d = g_new0(Debugger, 1);
    d->relay = relay;
    d->endpoint = ep;
    d->port = ep->port;
    d->fd = fd;
    d->state = DBG_HANDSHAKE;
    d->reader = ddm_jdwp_reader_new(ddm_monitor_config(relay->mon)->max_packet);
    ddm_jdwp_reader_set_budget(d->reader, ddm_monitor_read_budget(relay->mon));
    ddm_jdwp_reader_expect_handshake(d->reader);
    d->out = g_byte_array_new();
    d->to_vm = g_byte_array_new();
    d->peer = peer;
    g_ptr_array_add(relay->debuggers, d);
    ddm_relay_debugger_read(d);
    return d;
}

void ddm_relay_debugger_free(gpointer p)
{
    Debugger *d = p;
    ddm_jdwp_reader_free(d->reader);
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
    ddm_timer_cancel(&d->hold_timer);
    ddm_timer_cancel(&d->flush_timer);
    close(d->fd);
    ddm_jdwp_reader_set_budget(d->reader, NULL); /* nothing more is read */
    if (d->vm_paused)
        set_vm_paused(d, FALSE); /* before the cleanup: DBGD's answer must be read */
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
    /* Freed from an idle: callers up the stack may still look at d->state. */
    g_ptr_array_add(relay->dead, d);
    if (!ddm_timer_armed(&relay->reap_timer)) {
        ddm_timer_init(&relay->reap_timer, reap_dead, relay);
        ddm_timer_arm(&relay->reap_timer, 0);
    }
}
