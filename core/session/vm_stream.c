/* SPDX-License-Identifier: Apache-2.0
 *
 * Streamed DDM events of one VM (the session as a whole: vm.c): a DDM
 * event packet too large to hold (a heap dump, a method trace) goes to
 * its chunk type's stream owner piece by piece as it arrives, instead of
 * being buffered whole and capped at max_packet.
 *
 * The reader (core/wire/jdwp.c) shows the head of every DDM command packet
 * that has not arrived whole; if the first chunk's type has a stream owner
 * (asked through DdmSessionEvents.stream_begin), the rest of the packet is
 * streamed: at most `declared` payload bytes go to the owner, bytes the
 * packet carries past the chunk are skipped, and the owner gets exactly one
 * stream_end: 0 complete, -EPROTO the packet ended before the declared
 * length, -EPIPE the VM went away mid-stream, -EFBIG past max_stream (its
 * bytes are skipped, the VM stays connected), or the owner's own error.
 *
 * While a stream runs, no reply from the VM can arrive (it queues behind
 * the packet on the same socket), so request deadlines do not fire; when it
 * ends, deadlines already past get DDM_STREAM_REPLY_GRACE_MS more. A VM
 * that stops sending in the middle of a streamed packet for the request
 * timeout (--request-timeout) has lied about its length or hung: nothing
 * else can come on that connection, so it is closed (the owner hears
 * -ETIMEDOUT, with what arrived). Time in which ddmon itself does not read
 * (ddm_vm_pause_input: the relay's backpressure) does not count.
 *
 * Memory: one small DdmVmStream while streaming, none otherwise; the reader
 * holds no buffer of the packet's size: its reads of a long one take up to
 * 256 KiB while the socket keeps them full (vm_io.c, counted in the read
 * budget) and give that buffer back when the socket is empty. Only events (VM-initiated commands) stream;
 * chunks of a streamed type that arrive whole go to the owner through the
 * normal chunk path (the plugin host turns them into begin/data/end).
 */
#include <errno.h>

#include "core/wire/ddm.h"
#include "core/session/vm-private.h"

/* The JDWP header and the first chunk's header: what a head must show. */
#define STREAM_HEAD_LEN (DDM_JDWP_HEADER_LEN + DDM_CHUNK_HEADER_LEN)

typedef struct DdmVmStream {
    ddm_chunk_info ci;     /* the streamed chunk: type, the event's packet id */
    guint64 declared;      /* payload length the chunk header declared */
    guint64 carried;       /* payload bytes the packet carries (JDWP length - 19) */
    guint64 seen;          /* payload bytes read so far (delivered or skipped) */
    guint64 delivered;     /* handed to the owner */
    gboolean to_owner;     /* FALSE: skipping (refused, over the cap, or ended early) */
    gboolean ended;        /* stream_end reported */
    gint64 started_us;
    gint64 last_bytes_us;  /* when bytes last arrived */
} DdmVmStream;

static uint32_t be32(const uint8_t *p)
{
    return ((uint32_t)p[0] << 24) | ((uint32_t)p[1] << 16) | ((uint32_t)p[2] << 8) | p[3];
}

static const DdmSessionEvents *events(DdmVm *vm, gpointer *ud)
{
    return ddm_monitor_events(vm->monitor, ud);
}

static void report_end(DdmVm *vm, DdmVmStream *s, int status)
{
    gpointer ud;
    const DdmSessionEvents *ev = events(vm, &ud);
    char name[5];

    if (s->ended)
        return;
    s->ended = TRUE;
    s->to_owner = FALSE;
    if (status == 0)
        g_info("%s: streamed %s event complete: %" G_GUINT64_FORMAT " bytes in %.1f s", vm_key(vm),
               ddm_chunk_name(s->ci.type, name), s->delivered,
               (double)(g_get_monotonic_time() - s->started_us) / 1e6);
    if (ev->stream_end)
        ev->stream_end(ud, vm, &s->ci, status, s->delivered);
}

void ddm_vm_stream_offer(DdmVm *vm, const DdmJdwpPacket *head)
{
    gpointer ud;
    const DdmSessionEvents *ev = events(vm, &ud);
    DdmVmStream *s;
    uint32_t type, declared;
    int taken;
    char name[5];

    if (vm->stream || !ev->stream_begin || head->data_len < DDM_CHUNK_HEADER_LEN ||
        head->header.cmdset != DDM_JDWP_CMDSET || head->header.cmd != DDM_JDWP_CMD ||
        (vm->state != DDM_VM_STATE_HELO && vm->state != DDM_VM_STATE_READY))
        return; /* not a DDM event: read whole as usual */
    type = be32(head->data);
    declared = be32(head->data + 4);
    if (type == DDM_CHUNK_ZLIB)
        return; /* compressed: inflated whole, under max_inflate */

    s = g_new0(DdmVmStream, 1);
    s->ci.type = type;
    s->ci.packet_id = head->header.id;
    s->ci.origin = DDM_ORIGIN_EVENT;
    s->declared = declared;
    s->carried = (guint64)head->header.length - STREAM_HEAD_LEN;
    s->started_us = s->last_bytes_us = g_get_monotonic_time();

    taken = ev->stream_begin(ud, vm, &s->ci, s->declared);
    if (taken == 0 || vm->state == DDM_VM_STATE_CLOSED) {
        g_free(s);
        return;
    }
    if (!ddm_jdwp_reader_stream(vm->reader, DDM_CHUNK_HEADER_LEN)) {
        g_free(s); /* cannot happen: the head showed the chunk header */
        return;
    }
    vm->stream = s;
    s->to_owner = taken > 0;
    ddm_vm_rearm(vm); /* the stream is watched for stalls */
    if (taken < 0) {
        s->ended = TRUE; /* refused: the owner hears nothing more */
        g_debug("%s: streamed %s event refused by its owner (%s); %" G_GUINT64_FORMAT
                " bytes skipped", vm_key(vm), ddm_chunk_name(type, name), g_strerror(-taken),
                s->carried);
    } else if (s->declared > vm_cfg(vm)->max_stream) {
        g_warning("%s: %s event of %" G_GUINT64_FORMAT " bytes is past the cap of %" G_GUINT64_FORMAT
                  " (--max-stream); its bytes are skipped", vm_key(vm), ddm_chunk_name(type, name),
                  s->declared, vm_cfg(vm)->max_stream);
        report_end(vm, s, -EFBIG);
    } else {
        g_debug("%s: streaming %s event id 0x%08x: %" G_GUINT64_FORMAT " bytes declared, %"
                G_GUINT64_FORMAT " carried", vm_key(vm), ddm_chunk_name(type, name),
                s->ci.packet_id, s->declared, s->carried);
    }
}

void ddm_vm_stream_data(DdmVm *vm, const uint8_t *data, size_t len)
{
    DdmVmStream *s = vm->stream;
    gpointer ud;
    const DdmSessionEvents *ev = events(vm, &ud);

    if (!s)
        return;
    s->last_bytes_us = g_get_monotonic_time();
    if (s->to_owner && s->seen < s->declared) {
        size_t n = (guint64)len < s->declared - s->seen ? len : (size_t)(s->declared - s->seen);
        int r = ev->stream_data ? ev->stream_data(ud, vm, &s->ci, data, n) : 0;
        s->delivered += n;
        if (r < 0 && vm->state != DDM_VM_STATE_CLOSED)
            report_end(vm, s, r);
    }
    s->seen += len;
}

void ddm_vm_stream_end(DdmVm *vm)
{
    DdmVmStream *s = vm->stream;
    char name[5];

    if (!s)
        return;
    vm->stream = NULL;
    if (s->carried > s->declared)
        g_debug("%s: %s event: %" G_GUINT64_FORMAT " bytes past the chunk skipped", vm_key(vm),
                ddm_chunk_name(s->ci.type, name), s->carried - s->declared);
    if (!s->ended && s->delivered < s->declared)
        g_warning("%s: %s event declares %" G_GUINT64_FORMAT " bytes but its packet carries %"
                  G_GUINT64_FORMAT, vm_key(vm), ddm_chunk_name(s->ci.type, name), s->declared,
                  s->carried);
    report_end(vm, s, s->delivered < s->declared ? -EPROTO : 0);
    g_free(s);
    /* Replies held back behind the packet may arrive now: give them time. */
    ddm_correlate_postpone(vm->pending,
                           g_get_monotonic_time() + (gint64)DDM_STREAM_REPLY_GRACE_MS * 1000);
    if (vm->state != DDM_VM_STATE_CLOSED)
        ddm_vm_rearm(vm);
}

void ddm_vm_stream_abort(DdmVm *vm)
{
    DdmVmStream *s = vm->stream;

    if (!s)
        return;
    vm->stream = NULL;
    report_end(vm, s, -EPIPE);
    g_free(s);
}

gboolean ddm_vm_streaming(const DdmVm *vm)
{
    return vm->stream != NULL;
}

gboolean ddm_vm_stream_check_stall(DdmVm *vm, gint64 now_us)
{
    DdmVmStream *s = vm->stream;
    guint timeout_ms = vm_request_timeout_ms(vm);
    char name[5];

    if (s && vm->input_paused) {
        /* ddmon stopped reading (relay backpressure), not the VM sending:
         * the clock starts again from here (checked every second) */
        s->last_bytes_us = now_us;
        return FALSE;
    }
    if (!s || now_us - s->last_bytes_us < (gint64)timeout_ms * 1000)
        return FALSE;
    report_end(vm, s, -ETIMEDOUT); /* the owner hears why, then the VM closes */
    ddm_vm_close_bad(vm, "no bytes for %u ms in the middle of a %s event (%" G_GUINT64_FORMAT
                     " of %" G_GUINT64_FORMAT " bytes arrived)", timeout_ms,
                     ddm_chunk_name(s->ci.type, name), s->seen, s->carried);
    return TRUE;
}
