/* SPDX-License-Identifier: Apache-2.0
 *
 * Where each packet from one VM goes (the session as a whole: vm.c). Each
 * packet is classified once: a reply to one of our ids (vm_request.c; the
 * Version probe's to vm_handshake.c), a DDM command from the VM (0xC7/1 ->
 * each chunk to the monitor as an event), a reply to an id we do not know
 * (the relay's, or late), or other JDWP traffic (the monitor's).
 */
#include "core/wire/ddm.h"
#include "core/session/vm-private.h"

/* What the session reports goes straight to the events table the monitor
 * was given (core/session/monitor.h): one call, no hops. */
void ddm_vm_report_ddm_chunk(DdmVm *vm, const ddm_chunk_info *ci, const uint8_t *data, size_t len)
{
    gpointer ud;
    const DdmSessionEvents *ev = ddm_monitor_events(vm->monitor, &ud);
    if (ev->ddm_chunk)
        ev->ddm_chunk(ud, vm, ci, data, len);
}

static void report_jdwp_command(DdmVm *vm, const DdmJdwpPacket *pkt)
{
    gpointer ud;
    const DdmSessionEvents *ev = ddm_monitor_events(vm->monitor, &ud);
    if (ev->jdwp_command) {
        ev->jdwp_command(ud, vm, pkt);
        return;
    }
    vm->jdwp_dropped++;
    g_debug("%s: JDWP command %u/%u from the VM dropped (no relay)", vm->target->key,
            pkt->header.cmdset, pkt->header.cmd);
}

static gboolean report_foreign_reply(DdmVm *vm, const DdmJdwpPacket *pkt)
{
    gpointer ud;
    const DdmSessionEvents *ev = ddm_monitor_events(vm->monitor, &ud);
    return ev->foreign_reply ? ev->foreign_reply(ud, vm, pkt) : FALSE;
}

/* Hand the chunks of @pkt from the @skip+1-th on to their owners (and
 * taps), ZLIB inflated, as @origin (an event's chunks; a reply's after the
 * first, which went to the request's callback). Stops if the VM closes. */
void ddm_vm_classify_chunks(DdmVm *vm, const DdmJdwpPacket *pkt, unsigned skip,
                            ddm_chunk_origin origin, uint32_t request_type)
{
    DdmChunkIter it;
    DdmChunk ch;
    DdmChunkResult cr;
    const char *what = origin == DDM_ORIGIN_EVENT ? "event" : "reply";

    ddm_chunk_iter_init(&it, pkt->data, pkt->data_len);
    while (vm->state != DDM_VM_STATE_CLOSED && (cr = ddm_chunk_iter_next(&it, &ch)) == DDM_CHUNK_OK) {
        ddm_chunk_info ci = {.type = ch.type, .packet_id = pkt->header.id, .origin = origin,
                             .request_type = request_type};
        if (skip > 0) {
            skip--;
            continue;
        }
        if (ch.type == DDM_CHUNK_ZLIB) {
            uint8_t *out = NULL;
            size_t out_len = 0;
            uint32_t inner = 0;
            DdmZlibResult zr = ddm_zlib_inflate(ch.data, ch.len, vm_cfg(vm)->max_inflate, &inner,
                                                &out, &out_len);
            if (zr != DDM_ZLIB_OK) {
                g_warning("%s: bad ZLIB chunk in %s 0x%08x dropped: %s", vm_key(vm), what,
                          pkt->header.id, ddm_zlib_result_str(zr));
                continue;
            }
            ci.type = inner;
            ddm_vm_report_ddm_chunk(vm, &ci, out, out_len);
            g_free(out);
        } else {
            ddm_vm_report_ddm_chunk(vm, &ci, ch.data, ch.len);
        }
    }
    if (vm->state == DDM_VM_STATE_CLOSED)
        return;
    if (cr == DDM_CHUNK_ERR_OVERRUN)
        g_warning("%s: DDM %s 0x%08x: a chunk runs past the packet; rest dropped", vm_key(vm), what,
                  pkt->header.id);
    else if (ddm_chunk_iter_trailing(&it))
        g_debug("%s: DDM %s 0x%08x: %zu trailing bytes ignored", vm_key(vm), what, pkt->header.id,
                ddm_chunk_iter_trailing(&it));
}

/* The head of a reply not yet whole: its claimer (the relay, for a
 * debugger's reply) may take the rest as it arrives. */
void ddm_vm_reply_head(DdmVm *vm, const DdmJdwpPacket *head)
{
    gpointer ud;
    const DdmSessionEvents *ev = ddm_monitor_events(vm->monitor, &ud);
    if (vm->stream || vm->reply_streaming || !ev->reply_head || !ev->reply_part)
        return; /* read whole as usual */
    if (ev->reply_head(ud, vm, head)) {
        ddm_jdwp_reader_stream(vm->reader, 0); /* right after the head: cannot fail */
        vm->reply_streaming = TRUE;
    }
}

void ddm_vm_reply_part(DdmVm *vm, const uint8_t *data, size_t len, gboolean last)
{
    gpointer ud;
    const DdmSessionEvents *ev = ddm_monitor_events(vm->monitor, &ud);
    ev->reply_part(ud, vm, data, len, last);
}

static void handle_ddm_event(DdmVm *vm, const DdmJdwpPacket *pkt)
{
    if (vm->state != DDM_VM_STATE_HELO && vm->state != DDM_VM_STATE_READY) {
        g_debug("%s: DDM packet in state %s dropped", vm_key(vm), ddm_vm_state_name(vm->state));
        return;
    }
    ddm_vm_classify_chunks(vm, pkt, 0, DDM_ORIGIN_EVENT, 0);
}

void ddm_vm_classify_packet(DdmVm *vm, const DdmJdwpPacket *pkt)
{
    vm->packets_in++;
    if (ddm_jdwp_is_reply(&pkt->header)) {
        DdmPending p;
        if (ddm_correlate_take(vm->pending, pkt->header.id, &p)) {
            if (p.id > vm->answered_id)
                vm->answered_id = p.id;
            if (ddm_vm_handshake_is_probe(&p))
                ddm_vm_handshake_probe_answered(vm, pkt);
            else if (p.jdwp)
                ddm_vm_req_handle_jdwp_reply(vm, &p, pkt);
            else
                ddm_vm_req_handle_reply(vm, &p, pkt);
            if (vm->state != DDM_VM_STATE_CLOSED)
                ddm_vm_rearm(vm);
        } else if (vm_reply_is_late_helo(vm, pkt->header.id)) {
            ddm_vm_handshake_late_helo(vm, pkt);
        } else if (!report_foreign_reply(vm, pkt)) {
            if (ddm_correlate_was_expired(vm->pending, pkt->header.id))
                g_debug("%s: late reply id 0x%08x after its timeout dropped", vm_key(vm),
                        pkt->header.id);
            else
                g_debug("%s: reply with unknown id 0x%08x dropped", vm_key(vm), pkt->header.id);
        }
        return;
    }
    if (pkt->header.cmdset == DDM_JDWP_CMDSET && pkt->header.cmd == DDM_JDWP_CMD) {
        handle_ddm_event(vm, pkt);
        return;
    }
    report_jdwp_command(vm, pkt);
}
