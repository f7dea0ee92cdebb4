/* SPDX-License-Identifier: Apache-2.0
 *
 * Internals shared by the files of one VM's session (core/session/vm*.c):
 * vm.c (life cycle, state, identity, close, the deadline timer), vm_io.c
 * (write queue, socket I/O), vm_request.c (requests, replies to our ids),
 * vm_handshake.c (handshake echo, Version probe, HELO, FEAT) and
 * vm_classify.c (where each packet from the VM goes). Nothing else
 * includes this header; the rest of the core uses vm.h.
 */
#ifndef DDM_VM_PRIVATE_H
#define DDM_VM_PRIVATE_H

#include "core/session/monitor.h"
#include "core/session/vm.h"

/* Our packet ids: 0x40000000 + n, like ddmlib; wraps back to the first. */
#define DDM_ID_FIRST 0x40000000u
#define DDM_ID_LAST 0x7fffffffu

/** The VM's key for log lines ("?" before it has a target). */
static inline const char *vm_key(const DdmVm *vm)
{
    return vm->target ? vm->target->key : "?";
}

/** The configuration of the VM's monitor. */
static inline const DdmConfig *vm_cfg(const DdmVm *vm)
{
    return ddm_monitor_config(vm->monitor);
}

/** A request's timeout when its sender gives none (0): --request-timeout,
 *  or DDM_REQUEST_TIMEOUT_DEFAULT_MS when that is 0. */
static inline unsigned vm_request_timeout_ms(const DdmVm *vm)
{
    return vm_cfg(vm)->request_timeout_ms ? vm_cfg(vm)->request_timeout_ms
                                          : DDM_REQUEST_TIMEOUT_DEFAULT_MS;
}

/* In HANDSHAKE, the handshake's time left in whole ms, rounded up: what a
 * first request sent with the handshake gets on top of its own time, its
 * deadline moving back by what is left at the echo (vm_handshake.c); 0 in
 * any other state or once the deadline passed. */
static inline unsigned vm_handshake_left_ms(const DdmVm *vm)
{
    if (vm->state != DDM_VM_STATE_HANDSHAKE || vm->handshake_deadline_us == G_MAXINT64)
        return 0;
    const gint64 left_us = vm->handshake_deadline_us - g_get_monotonic_time();
    return left_us <= 0 ? 0 : (unsigned)MIN((left_us + 999) / 1000, (gint64)G_MAXUINT / 2);
}

/* A reply with @id that ddm_correlate_take did not claim answers our HELO
 * after its timeout (the VM went PLAIN): vm_handshake.c takes it. One rule
 * for the general path (vm_classify.c) and the relay's fused path
 * (vm_io.c, reply_alone). */
static inline gboolean vm_reply_is_late_helo(const DdmVm *vm, uint32_t id)
{
    return vm->state == DDM_VM_STATE_PLAIN && vm->helo_id != 0 && id == vm->helo_id;
}

/* vm.c: life cycle and state */
/** Longest name a VM may give itself (app, package), in bytes: longer ones
 *  are cut at a character boundary, so a hostile VM cannot make ddmon keep
 *  (and list, and remember) megabytes of name. */
#define DDM_VM_NAME_MAX 256u
/** Longest other identity text (VM ident, ABI, JVM flags), in bytes. */
#define DDM_VM_TEXT_MAX 4096u
/** A copy of @s (NULL: NULL) cut to at most @max bytes at a UTF-8 character
 *  boundary. (transfer full) */
char *ddm_vm_clip(const char *s, gsize max);
/* vm_ident.c: identity text shared by the VMs that send the same */
/** @s clipped to @max bytes (ddm_vm_clip) as a shared interned string
 *  (NULL: NULL); give it back with ddm_vm_text_release. */
char *ddm_vm_text_share(const char *s, gsize max);
void ddm_vm_text_release(char *s);
/** Most FEAT names a VM's list keeps (each cut to DDM_VM_NAME_MAX bytes). */
#define DDM_VM_FEATURES_MAX 256u
/** The FEAT list @features (taken: freed here), cut to the caps above, as
 *  a shared, read-only NULL-terminated vector, the same block for every VM
 *  with an equal list (NULL: NULL); give it back with
 *  ddm_vm_features_release. */
char **ddm_vm_features_share(char **features);
/** TRUE if ddm_vm_features_share will cut @features; @n_out gets its
 *  count, @longest_out its longest name's bytes (for the log line). */
gboolean ddm_vm_features_over_cap(char *const *features, guint *n_out, gsize *longest_out);
void ddm_vm_features_release(char **shared);
/** Distinct FEAT lists held now (tests). */
guint ddm_vm_features_shared_count(void);
/** The hash of a FEAT list's text (@len bytes, the names with their NULs)
 *  in the shared set: seeded FNV-1a, with the process's random seed, or
 *  with @seed (tests). */
guint ddm_vm_features_hash(const char *text, gsize len);
guint ddm_vm_features_hash_seeded(guint32 seed, const char *text, gsize len);
/** Point vm->info at the target's key, transport and device again and
 *  recount its features (after any identity change). */
void ddm_vm_sync_info(DdmVm *vm);
/** Enter state @s (no-op if already there) and tell the monitor. */
void ddm_vm_set_state(DdmVm *vm, DdmVmState s);
/** Arm the one timer at the earliest pending or handshake deadline. */
void ddm_vm_rearm(DdmVm *vm);
/** Close a VM that broke the protocol, with one warning naming the fault. */
void ddm_vm_close_bad(DdmVm *vm, const char *fmt, ...) G_GNUC_PRINTF(2, 3);
/** Close from an idle, where no callback may run; takes @why (transfer full). */
void ddm_vm_close_later(DdmVm *vm, char *why);

/* vm_io.c: write queue and socket I/O */
/** Queue bytes and try to write them; never closes at once nor calls anyone
 *  (0, -ENOTCONN without an fd, -ENOBUFS over max_write_queue). */
int ddm_vm_io_queue(DdmVm *vm, const uint8_t *p, size_t n);
/** Gather what the session queues from now on in the write queue, unsent,
 *  until ddm_vm_io_gather_end sends it in one write: the requests one
 *  event sends (HELO and FEAT; every plugin's first ones and the fence at
 *  READY) leave in one segment and one send() instead of one each. TRUE if
 *  this call began the gathering (FALSE: one is already going on, or the
 *  VM has no socket); pass that to ddm_vm_io_gather_end. Spans one
 *  synchronous stretch of the caller's, never a return to the loop. The
 *  write queue's cap (max_write_queue) counts all that is gathered, none
 *  of it having gone to the socket yet. */
gboolean ddm_vm_io_gather_begin(DdmVm *vm);
/** End the gathering @began (ddm_vm_io_gather_begin's answer; FALSE: no-op)
 *  and write what it gathered. Never closes at once nor calls anyone, as
 *  ddm_vm_io_queue. */
void ddm_vm_io_gather_end(DdmVm *vm, gboolean began);
/** The fd's read watch callback (G_IO_IN | G_IO_HUP | G_IO_ERR, @ud the VM). */
gboolean ddm_vm_io_on_readable(gint fd, GIOCondition cond, gpointer ud);
/** Read what the socket holds now and handle it; the caller holds a reference. */
void ddm_vm_io_read_input(DdmVm *vm);

/* vm_request.c: the request API and reply correlation */
/** Send a request in any connected state (the core's HELO/FEAT go out in HELO). */
int ddm_vm_req_send(DdmVm *vm, gpointer owner, uint32_t type, const void *data, size_t len,
                    unsigned timeout_ms, ddm_reply_fn fn, gpointer ud, uint32_t *id_out);
/** End a request taken from the pending table with status @st (no chunk). */
void ddm_vm_req_deliver_status(DdmVm *vm, const DdmPending *p, ddm_reply_status st);
/** Hand @pkt, the reply to our request @p (taken from the table), to its taker. */
void ddm_vm_req_handle_reply(DdmVm *vm, const DdmPending *p, const DdmJdwpPacket *pkt);
/** The same for a plain JDWP request (p->jdwp). */
void ddm_vm_req_handle_jdwp_reply(DdmVm *vm, const DdmPending *p, const DdmJdwpPacket *pkt);

/* vm_handshake.c: handshake, Version probe, HELO, FEAT */
/** The handshake is queued (in a gathering): queue the first requests
 *  behind it, the Version probe or HELO and FEAT. */
void ddm_vm_handshake_sent(DdmVm *vm);
/** The VM echoed the handshake: state HELO; the first requests' time
 *  starts. */
void ddm_vm_handshake_echoed(DdmVm *vm);
/** TRUE if @p is our VirtualMachine.Version probe. */
gboolean ddm_vm_handshake_is_probe(const DdmPending *p);
/** The answer to the Version probe: HELO for Dalvik/ART, PLAIN for others. */
void ddm_vm_handshake_probe_answered(DdmVm *vm, const DdmJdwpPacket *pkt);
/** The answer to a HELO that timed out (state PLAIN, id vm->helo_id). */
void ddm_vm_handshake_late_helo(DdmVm *vm, const DdmJdwpPacket *pkt);

/* vm_stream.c: streamed DDM events */
/** Replies held back behind a streamed packet get this long once it ends. */
#define DDM_STREAM_REPLY_GRACE_MS 5000
/** The head of a DDM command packet not yet whole: stream it if an owner wants it. */
void ddm_vm_stream_offer(DdmVm *vm, const DdmJdwpPacket *head);
/** The next bytes of the streamed packet. */
void ddm_vm_stream_data(DdmVm *vm, const uint8_t *data, size_t len);
/** The streamed packet is complete. */
void ddm_vm_stream_end(DdmVm *vm);
/** The VM is closing mid-stream: the owner hears -EPIPE. No-op without a stream. */
void ddm_vm_stream_abort(DdmVm *vm);
/** TRUE while a packet is being streamed (request deadlines wait). */
gboolean ddm_vm_streaming(const DdmVm *vm);
/** A stream with no bytes for the request timeout: close the VM (TRUE). */
gboolean ddm_vm_stream_check_stall(DdmVm *vm, gint64 now_us);

/* vm_classify.c: packet classification */
/** Handle one packet from the VM: a reply, a DDM event or debugger traffic. */
void ddm_vm_classify_packet(DdmVm *vm, const DdmJdwpPacket *pkt);
/** The head of a reply not yet whole: offered to DdmSessionEvents.reply_head
 *  (vm_classify.c); then its bytes go to reply_part (@last at its end). */
void ddm_vm_reply_head(DdmVm *vm, const DdmJdwpPacket *head);
void ddm_vm_reply_part(DdmVm *vm, const uint8_t *data, size_t len, gboolean last);
/** Hand the chunks of @pkt after the first @skip to their owners, as @origin. */
void ddm_vm_classify_chunks(DdmVm *vm, const DdmJdwpPacket *pkt, unsigned skip,
                            ddm_chunk_origin origin, uint32_t request_type);
/** Report one chunk to the monitor's events (its owner and the taps). */
void ddm_vm_report_ddm_chunk(DdmVm *vm, const ddm_chunk_info *ci, const uint8_t *data, size_t len);

#endif /* DDM_VM_PRIVATE_H */
