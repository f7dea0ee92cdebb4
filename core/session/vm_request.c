/* SPDX-License-Identifier: Apache-2.0
 *
 * One VM's request API and reply correlation (the session as a whole:
 * vm.c): our packet ids, the pending table, and each reply to one of our
 * ids handed to its callback (pending table -> its callback, exactly once).
 *
 * Invariants: every accepted request's callback runs exactly once (reply,
 * JDWP error, timeout, VM gone) and never from inside ddm_vm_request.
 * Non-goals: chunk semantics beyond FAIL/ZLIB framing.
 */
#include <errno.h>
#include <string.h>

#include "core/wire/ddm.h"
#include "core/session/quietlog.h"
#include "core/session/vm-private.h"

static void report_tap_chunk(DdmVm *vm, const ddm_chunk_info *ci, const uint8_t *data, size_t len)
{
    gpointer ud;
    const DdmSessionEvents *ev = ddm_monitor_events(vm->monitor, &ud);
    if (ev->tap_chunk)
        ev->tap_chunk(ud, vm, ci, data, len);
}

static void deliver(DdmVm *vm, const DdmPending *p, const ddm_reply *r)
{
    ddm_reply_fn fn = (ddm_reply_fn)(void (*)(void))p->callback;

    if (fn)
        fn(p->owner, vm, r, p->ud);
}

static void deliver_jdwp(DdmVm *vm, const DdmPending *p, const ddm_jdwp_reply *r)
{
    ddm_jdwp_reply_fn fn = (ddm_jdwp_reply_fn)(void (*)(void))p->callback;

    if (fn)
        fn(p->owner, vm, r, p->ud);
}

void ddm_vm_req_deliver_status(DdmVm *vm, const DdmPending *p, ddm_reply_status st)
{
    if (p->jdwp) {
        ddm_jdwp_reply jr = {.status = st};
        deliver_jdwp(vm, p, &jr);
        return;
    }
    ddm_reply r = {.status = st};
    deliver(vm, p, &r);
}

/* ------------------------------------------------------------- requests */

uint32_t ddm_vm_alloc_id(DdmVm *vm)
{
    uint32_t id;

    g_return_val_if_fail(vm != NULL, 0);
    do {
        id = vm->next_id;
        vm->next_id = id >= DDM_ID_LAST ? DDM_ID_FIRST : id + 1;
    } while (ddm_correlate_contains(vm->pending, id));
    return id;
}

/* The fence's answer: its id is now vm->answered_id; the content is FEAT's
 * (vm_handshake.c read it already). */
static void fence_reply(ddm_plugin *self, ddm_vm *vm, const ddm_reply *r, void *ud)
{
    (void)self;
    (void)r;
    (void)ud;
    if (ddm_vm_is_valid(vm))
        vm->fence_id = 0;
}

gboolean ddm_vm_requests_settled(DdmVm *vm)
{
    g_return_val_if_fail(ddm_vm_is_valid(vm), TRUE);
    if (vm->pending == NULL || ddm_correlate_count(vm->pending) == 0)
        return TRUE;
    /* A plain JVM answers every JDWP command (the plugins' polls, their
     * follow-ups sent from the reply before): settled once none of ours
     * is in flight. Never a DDM fence: a vendor command set can crash an
     * OpenJDK (vm_handshake.c, VirtualMachine.Version). */
    if (vm->state == DDM_VM_STATE_PLAIN)
        return FALSE;
    if (vm->state != DDM_VM_STATE_READY)
        return TRUE;
    if (vm->answered_id > ddm_correlate_newest_id(vm->pending))
        return TRUE;
    if (vm->fence_id == 0) {
        uint32_t id = 0;
        if (ddm_vm_req_send(vm, NULL, DDM_CHUNK_FEAT, NULL, 0, 0, fence_reply, NULL, &id) == 0)
            vm->fence_id = id;
    }
    return FALSE;
}

/* Send a request in any connected state (the core's HELO/FEAT go out in
 * HANDSHAKE, with the handshake, or in HELO after the probe). */
int ddm_vm_req_send(DdmVm *vm, gpointer owner, uint32_t type, const void *data, size_t len,
                    unsigned timeout_ms, ddm_reply_fn fn, gpointer ud, uint32_t *id_out)
{
    DdmPending p = {0};
    uint8_t *pkt;
    size_t plen = 0;
    int r;
    char name[5];

    if (len > vm_cfg(vm)->max_packet || len > (size_t)G_MAXUINT32 - 64 ||
        DDM_JDWP_HEADER_LEN + DDM_CHUNK_HEADER_LEN + len > vm_cfg(vm)->max_packet)
        return -EMSGSIZE;
    if (len && !data)
        return -EINVAL;
    if (ddm_correlate_count(vm->pending) >= vm_cfg(vm)->max_pending)
        return -ENOSPC;
    if (timeout_ms == 0)
        timeout_ms = vm_request_timeout_ms(vm);

    p.id = ddm_vm_alloc_id(vm);
    p.type = type;
    p.deadline_us = g_get_monotonic_time() + (gint64)timeout_ms * 1000;
    p.owner = owner;
    p.callback = (gpointer)(void (*)(void))fn;
    p.ud = ud;
    if (!ddm_correlate_insert(vm->pending, &p))
        return -ENOSPC;

    pkt = ddm_chunk_build_packet(p.id, type, data, len, &plen);
    r = ddm_vm_io_queue(vm, pkt, plen);
    g_free(pkt);
    if (r < 0) {
        DdmPending back;
        ddm_correlate_take(vm->pending, p.id, &back); /* not accepted: no callback */
        if (r == -ENOBUFS)
            ddm_vm_close_later(vm, g_strdup_printf("write queue over %" G_GSIZE_FORMAT
                                                   " bytes: the VM is not reading",
                                                   vm_cfg(vm)->max_write_queue));
        return r;
    }
    {
        /* with the handshake: its time counts from the echo (vm_handshake.c) */
        const unsigned wait_ms = MIN(vm_handshake_left_ms(vm), timeout_ms);
        DDM_DEBUG("%s: request %s id 0x%08x (%zu bytes, timeout %u ms%s)", vm_key(vm),
                  ddm_chunk_name(type, name), p.id, len, timeout_ms - wait_ms,
                  wait_ms ? " from the handshake's echo" : "");
    }
    {
        ddm_chunk_info ci = {.type = type, .packet_id = p.id, .origin = DDM_ORIGIN_REQUEST};
        report_tap_chunk(vm, &ci, data, len);
    }
    ddm_vm_rearm(vm);
    if (id_out)
        *id_out = p.id;
    return 0;
}

int ddm_vm_request(DdmVm *vm, gpointer owner, uint32_t type, const void *data, size_t len,
                   unsigned timeout_ms, ddm_reply_fn fn, gpointer ud, uint32_t *id_out)
{
    g_return_val_if_fail(ddm_vm_is_valid(vm), -EINVAL);
    if (vm->state != DDM_VM_STATE_READY)
        return -ENOTCONN;
    return ddm_vm_req_send(vm, owner, type, data, len, timeout_ms, fn, ud, id_out);
}

/* ------------------------------------------------ plain JDWP requests */

static gboolean is_cmd(uint32_t type, uint8_t cmdset, uint8_t cmd)
{
    return type == ((uint32_t)cmdset << 8 | cmd);
}

static void release_suspend(DdmVm *vm)
{
    if (!vm->rare)
        return;
    vm->rare->jdwp_suspend_owner = NULL;
    g_clear_pointer(&vm->rare->jdwp_suspend_thread, g_bytes_unref);
}

int ddm_vm_jdwp_request(DdmVm *vm, gpointer owner, uint8_t cmdset, uint8_t cmd, const void *data,
                        size_t len, unsigned timeout_ms, ddm_jdwp_reply_fn fn, gpointer ud)
{
    DdmPending p = {0};
    uint8_t *pkt;
    size_t plen = 0;
    int r;

    g_return_val_if_fail(ddm_vm_is_valid(vm), -EINVAL);
    if (vm->state != DDM_VM_STATE_PLAIN)
        return -ENOTCONN;
    if (len > vm_cfg(vm)->max_packet || DDM_JDWP_HEADER_LEN + len > vm_cfg(vm)->max_packet)
        return -EMSGSIZE;
    if (ddm_correlate_count(vm->pending) >= vm_cfg(vm)->max_pending)
        return -ENOSPC;
    if (timeout_ms == 0)
        timeout_ms = vm_request_timeout_ms(vm);
    p.id = ddm_vm_alloc_id(vm);
    p.type = (uint32_t)cmdset << 8 | cmd;
    p.deadline_us = g_get_monotonic_time() + (gint64)timeout_ms * 1000;
    p.owner = owner;
    p.callback = (gpointer)(void (*)(void))fn;
    p.ud = ud;
    p.jdwp = TRUE;
    if (!ddm_correlate_insert(vm->pending, &p))
        return -ENOSPC;
    pkt = ddm_jdwp_build_command(p.id, cmdset, cmd, data, len, &plen);
    r = ddm_vm_io_queue(vm, pkt, plen);
    g_free(pkt);
    if (r < 0) {
        DdmPending back;
        ddm_correlate_take(vm->pending, p.id, &back);
        if (r == -ENOBUFS)
            ddm_vm_close_later(vm, g_strdup_printf("write queue over %" G_GSIZE_FORMAT
                                                   " bytes: the VM is not reading",
                                                   vm_cfg(vm)->max_write_queue));
        return r;
    }
    if (cmdset == DDM_JDWP_CMDSET_THREAD && cmd == DDM_JDWP_CMD_THREAD_SUSPEND) {
        release_suspend(vm);
        ddm_vm_rare(vm)->jdwp_suspend_owner = owner;
        vm->rare->jdwp_suspend_thread = g_bytes_new(data, len);
    } else if (cmdset == DDM_JDWP_CMDSET_THREAD && cmd == DDM_JDWP_CMD_THREAD_RESUME) {
        release_suspend(vm);
    }
    DDM_DEBUG("%s: JDWP %u/%u id 0x%08x (%zu bytes, timeout %u ms)", vm_key(vm), cmdset, cmd, p.id,
            len, timeout_ms);
    ddm_vm_rearm(vm);
    return 0;
}

void ddm_vm_req_handle_jdwp_reply(DdmVm *vm, const DdmPending *p, const DdmJdwpPacket *pkt)
{
    ddm_jdwp_reply r = {0};

    if (pkt->header.error != 0) {
        r.status = DDM_REPLY_ERROR;
        r.jdwp_error = pkt->header.error;
        /* A Suspend that failed holds nothing. */
        if (is_cmd(p->type, DDM_JDWP_CMDSET_THREAD, DDM_JDWP_CMD_THREAD_SUSPEND) &&
            ddm_vm_suspend_owner(vm) == p->owner)
            release_suspend(vm);
    } else {
        r.status = DDM_REPLY_CHUNK;
        r.data = pkt->data;
        r.len = pkt->data_len;
    }
    deliver_jdwp(vm, p, &r);
}

/* A plugin going away with a thread of this VM suspended: resume it (the
 * reply, to an id nobody waits for, is dropped). */
static void resume_left_suspended(DdmVm *vm, gpointer owner)
{
    uint8_t *pkt;
    size_t plen = 0, n = 0;
    const void *tid;

    if (!ddm_vm_suspend_owner(vm) || ddm_vm_suspend_owner(vm) != owner)
        return;
    tid = g_bytes_get_data(ddm_vm_suspend_thread(vm), &n);
    pkt = ddm_jdwp_build_command(ddm_vm_alloc_id(vm), DDM_JDWP_CMDSET_THREAD,
                                 DDM_JDWP_CMD_THREAD_RESUME, tid, n, &plen);
    if (vm->state == DDM_VM_STATE_PLAIN && ddm_vm_io_queue(vm, pkt, plen) == 0)
        g_message("%s: a thread its plugin left suspended is resumed", vm_key(vm));
    g_free(pkt);
    release_suspend(vm);
}

void ddm_vm_cancel_owner(DdmVm *vm, gpointer owner)
{
    GArray *all, *mine;

    g_return_if_fail(ddm_vm_is_valid(vm));
    all = ddm_correlate_drain(vm->pending);
    mine = g_array_new(FALSE, FALSE, sizeof(DdmPending));
    for (guint i = 0; i < all->len; i++) {
        DdmPending *p = &g_array_index(all, DdmPending, i);
        if (p->owner == owner)
            g_array_append_val(mine, *p);
        else
            ddm_correlate_insert(vm->pending, p); /* room: the table was just emptied */
    }
    g_array_unref(all);
    ddm_vm_ref(vm);
    for (guint i = 0; i < mine->len; i++)
        ddm_vm_req_deliver_status(vm, &g_array_index(mine, DdmPending, i), DDM_REPLY_VM_GONE);
    g_array_unref(mine);
    if (vm->state != DDM_VM_STATE_CLOSED)
        resume_left_suspended(vm, owner);
    if (vm->state != DDM_VM_STATE_CLOSED)
        ddm_vm_rearm(vm);
    ddm_vm_unref(vm);
}

/* --------------------------------------------------- replies to our ids */

/* Turn a raw reply chunk into a ddm_reply (inflating ZLIB). @r->data may
 * point into *@inflated (g_free after use). FALSE: BAD, @why says why. */
static gboolean decode_reply_chunk(DdmVm *vm, const DdmJdwpPacket *pkt, ddm_reply *r,
                                   uint8_t **inflated, char **fail_msg, const char **why)
{
    DdmChunkIter it;
    DdmChunk ch;
    DdmChunkResult cr;

    ddm_chunk_iter_init(&it, pkt->data, pkt->data_len);
    cr = ddm_chunk_iter_next(&it, &ch);
    if (cr != DDM_CHUNK_OK) {
        *why = cr == DDM_CHUNK_END ? "reply too short for a chunk header"
                                   : "reply chunk length runs past the packet";
        return FALSE;
    }
    r->status = DDM_REPLY_CHUNK;
    r->type = ch.type;
    r->data = ch.data;
    r->len = ch.len;
    if (ch.type == DDM_CHUNK_ZLIB) {
        uint32_t inner;
        size_t out_len = 0;
        DdmZlibResult zr = ddm_zlib_inflate(ch.data, ch.len, vm_cfg(vm)->max_inflate, &inner,
                                            inflated, &out_len);
        if (zr != DDM_ZLIB_OK) {
            *why = ddm_zlib_result_str(zr);
            return FALSE;
        }
        r->type = inner;
        r->data = *inflated;
        r->len = out_len;
    }
    if (r->type == DDM_CHUNK_FAIL) {
        if (!ddm_fail_parse(r->data, r->len, &r->fail_code, fail_msg))
            g_debug("%s: malformed FAIL chunk (%zu bytes)", vm_key(vm), r->len);
        r->fail_msg = *fail_msg;
    }
    return TRUE;
}

void ddm_vm_req_handle_reply(DdmVm *vm, const DdmPending *p, const DdmJdwpPacket *pkt)
{
    ddm_reply r = {0};
    uint8_t *inflated = NULL;
    char *fail_msg = NULL;
    const char *why = NULL;
    char name[5];

    if (pkt->header.error != 0) {
        r.status = DDM_REPLY_ERROR;
        r.jdwp_error = pkt->header.error;
    } else if (pkt->data_len == 0) {
        r.status = DDM_REPLY_EMPTY;
    } else if (!decode_reply_chunk(vm, pkt, &r, &inflated, &fail_msg, &why)) {
        g_warning("%s: bad reply to %s id 0x%08x: %s", vm_key(vm), ddm_chunk_name(p->type, name),
                  p->id, why);
        memset(&r, 0, sizeof r);
        r.status = DDM_REPLY_BAD;
    }

    if (r.status == DDM_REPLY_CHUNK) {
        ddm_chunk_info ci = {.type = r.type, .packet_id = p->id, .origin = DDM_ORIGIN_REPLY,
                             .request_type = p->type};
        if (p->callback) {
            report_tap_chunk(vm, &ci, r.data, r.len);
            deliver(vm, p, &r);
        } else {
            /* No callback: the reply goes to the type's owner (and taps). */
            ddm_vm_report_ddm_chunk(vm, &ci, r.data, r.len);
        }
    } else if (p->callback) {
        deliver(vm, p, &r);
    } else {
        g_debug("%s: reply to %s id 0x%08x (status %d) has no taker", vm_key(vm),
                ddm_chunk_name(p->type, name), p->id, r.status);
    }
    g_free(inflated);
    g_free(fail_msg);
    /* The draft lets a reply carry several chunks; real VMs send one. The
     * first answered the request; the others go to their owners. */
    if (r.status == DDM_REPLY_CHUNK && vm->state != DDM_VM_STATE_CLOSED)
        ddm_vm_classify_chunks(vm, pkt, 1, DDM_ORIGIN_REPLY, p->type);
}
