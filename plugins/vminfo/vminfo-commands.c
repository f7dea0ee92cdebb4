/* SPDX-License-Identifier: Apache-2.0
 *
 * vminfo commands:
 *   ddmon exit PID [STATUS]  send EXIT (u4 status, default 1 as ddmlib's
 *                            Client.kill); the VM halts and drops the
 *                            connection without replying, so the command
 *                            finishes as soon as the request is sent.
 *   ddmon gc PID             send HPGC and wait for its end: an empty or a
 *                            chunk reply (Dalvik), the heap chunks the GC
 *                            sends while the heap plugin has them on, the
 *                            answer to a REAQ fence when nothing else can
 *                            show the GC (ART never replies), or the
 *                            timeout mean OK, the message says which; a
 *                            JDWP error or a FAIL chunk mean FAILED.
 * A VM is named as host->cmd_find_vm understands it ("PID", "SERIAL:PID",
 * key, app name or a unique suffix of one), with the core's message.
 * Ownership: a gc_call is counted: one reference for the HPGC reply
 * callback, one for the REAQ fence's, one for the deferred-finish timer
 * (dropped by its ud_free); the host calls each exactly once. It sits in
 * pl->gcs until its command is finished (exactly once, gc_finish); the
 * ddm_cmd stays valid until then.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <ddmon/bytes.h>
#include <ddmon/plugin.h>

#include "../common/cmdutil.h"
#include "vminfo.h"

/* Resolve argv[1] or finish @cmd with NOT_FOUND (the core's message) and
 * return NULL; a plain JVM (no DDM: no EXIT, no HPGC) is refused as one
 * (FAILED, cmdutil.h's message) for command @what. */
static ddm_vm *resolve_vm(vminfo_plugin *pl, ddm_cmd *cmd, const char *spec, const char *what)
{
    ddm_vm *vm = pl->host->cmd_find_vm(cmd, spec);
    return vm && plugin_refuse_plain_jvm(pl->host, pl->self, cmd, vm, spec, what) ? NULL : vm;
}

/* A one-line reason for a failed request() call. */
static const char *request_error_text(int rc)
{
    switch (rc) {
    case -ENOTCONN: return "the VM is not ready for DDM requests";
    case -EPERM: return "that chunk type is disabled (--chunks)";
    case -ENOSPC: return "too many requests pending for that VM";
    default: return "the request could not be sent";
    }
}

/* --------------------------------------------------------------- exit */

static void exit_reply(ddm_plugin *self, ddm_vm *vm, const ddm_reply *reply, void *ud)
{
    vminfo_plugin *pl = ud;
    /* The command finished when EXIT was sent; this only ends the request. */
    pl->host->log(self, DDM_LOG_DEBUG, "EXIT request ended with status %d", (int)reply->status);
}

static int parse_status(const char *s, uint32_t *out)
{
    char *end;
    long long v;
    if (!s || !*s)
        return -1;
    v = strtoll(s, &end, 0);
    if (*end || v < INT32_MIN || v > (long long)UINT32_MAX)
        return -1;
    *out = (uint32_t)v; /* negative statuses wrap, as Java's int would */
    return 0;
}

static int cmd_exit(ddm_plugin *self, ddm_cmd *cmd, int argc, const char *const *argv, void *ud)
{
    vminfo_plugin *pl = ud;
    const ddm_host *h = pl->host;
    uint32_t status = 1;
    uint8_t payload[4];
    char msg[160];
    ddm_vm *vm;
    int rc;

    if (argc < 2 || argc > 3 || (argc == 3 && parse_status(argv[2], &status) != 0)) {
        h->cmd_finish(cmd, DDM_CMD_USAGE, "usage: exit PID [STATUS]");
        return 0;
    }
    if (!(vm = resolve_vm(pl, cmd, argv[1], "exit")))
        return 0;
    ddm_put_u4(payload, status);
    rc = h->request(self, vm, VMINFO_CHUNK_EXIT, payload, sizeof payload, VMINFO_EXIT_TIMEOUT_MS,
                    exit_reply, pl, NULL);
    if (rc != 0) {
        snprintf(msg, sizeof msg, "EXIT not sent: %s", request_error_text(rc));
        h->cmd_finish(cmd, DDM_CMD_FAILED, msg);
        return 0;
    }
    snprintf(msg, sizeof msg, "EXIT %" PRId32 " sent to %s (the VM halts without replying)",
             (int32_t)status, h->vm_info(vm)->key ? h->vm_info(vm)->key : argv[1]);
    h->log(self, DDM_LOG_MESSAGE, "%s", msg);
    h->cmd_finish(cmd, DDM_CMD_OK, msg);
    return 0;
}

/* ----------------------------------------------------------------- gc */

/* How a gc ends (doc/protocol.md "HPIF and HPGC"): Dalvik replies to HPGC,
 * ART never does. What shows the GC's effect is what the VM sends after
 * it, but only while someone switched that on (the heap plugin, while a
 * heap view is watched): heap segments (HPST, HPSG/HPSO pieces, HPEN;
 * HPSG or HPSO requested "every GC") or the heap information (HPIF
 * requested at the next or every GC). vminfo taps those requests, whoever
 * sends them, and those events, and ends a pending gc:
 *  - at the HPEN that closes every HPST seen after the HPGC went out, when
 *    segments are on; else at an HPIF event of reason 2 or 3;
 *    deferred by a 1 ms timer, so the chunk's owner (taps run first) has
 *    handled it before the command ends (snapshot --gc reads the views then);
 *  - when nothing can follow the GC: at the answer to a REAQ sent right
 *    after the HPGC (a query every VM answers, and answers in order), so
 *    ART ends as soon as the VM got past the GC;
 *  - at the HPGC reply (Dalvik: "GC done") or, failing all, at the timeout.
 * Whatever ended it is said in the message. */
typedef struct gc_call {
    vminfo_plugin *pl;
    ddm_cmd *cmd;
    ddm_vm *vm;
    struct gc_call *next; /* in pl->gcs until finished */
    int refs;             /* the HPGC reply, the REAQ reply, the deferred finish */
    int finished;
    int open;             /* HPST seen since the HPGC, not yet closed by an HPEN */
    uint32_t timer;       /* the deferred finish, 0 if none */
    char done_msg[160];   /* its message */
    char answered_msg[96]; /* its message if HPGC's answer comes first (Dalvik answers) */
} gc_call;

static void gc_unref(gc_call *call)
{
    if (--call->refs == 0)
        free(call);
}

static void gc_finish(gc_call *call, ddm_cmd_status status, const char *msg)
{
    gc_call **pp;
    if (call->finished)
        return;
    call->finished = 1;
    for (pp = &call->pl->gcs; *pp; pp = &(*pp)->next)
        if (*pp == call) {
            *pp = call->next;
            break;
        }
    call->pl->host->cmd_finish(call->cmd, status, msg);
}

static int gc_timer_fire(ddm_plugin *self, void *ud)
{
    gc_call *call = ud;
    (void)self;
    gc_finish(call, DDM_CMD_OK, call->done_msg);
    return 0;
}

static void gc_timer_drop(void *ud)
{
    gc_call *call = ud;
    call->timer = 0;
    gc_unref(call);
}

/* The GC's effect was seen: finish once the chunk's owner had it. */
static void gc_schedule_done(gc_call *call, const char *msg, const char *answered)
{
    const ddm_host *h = call->pl->host;
    if (call->timer || call->finished)
        return;
    snprintf(call->done_msg, sizeof call->done_msg, "%s", msg);
    snprintf(call->answered_msg, sizeof call->answered_msg, "%s", answered);
    call->refs++;
    call->timer = h->timer_add(call->pl->self, 1, gc_timer_fire, call, gc_timer_drop);
    if (!call->timer) /* gc_timer_drop ran */
        gc_finish(call, DDM_CMD_OK, msg);
}

/* Can anything the VM sends show a GC's effect (see above)? */
static int gc_effect_follows(const vminfo_vm *st)
{
    return st && (st->hpif_when >= 2 || st->hpsg_on || st->hpso_on);
}

static void gc_reply(ddm_plugin *self, ddm_vm *vm, const ddm_reply *reply, void *ud)
{
    gc_call *call = ud;
    const ddm_host *h = call->pl->host;
    char msg[512];

    if (call->finished) {
        gc_unref(call);
        return;
    }
    if (call->timer) { /* the effect was seen; the reply or its end comes after */
        /* A VM that answers HPGC (Dalvik) is no ART that does not: say only
         * what ended it. */
        gc_finish(call, DDM_CMD_OK,
                  reply->status == DDM_REPLY_EMPTY ||
                          (reply->status == DDM_REPLY_CHUNK && reply->type != DDM_CHUNK_FAIL)
                      ? call->answered_msg
                      : call->done_msg);
        gc_unref(call);
        return;
    }
    switch (reply->status) {
    case DDM_REPLY_EMPTY:
        gc_finish(call, DDM_CMD_OK, "GC done");
        break;
    case DDM_REPLY_CHUNK:
        if (reply->type == DDM_CHUNK_FAIL) {
            snprintf(msg, sizeof msg, "GC failed: the VM said: %s (code %" PRIu32 ")",
                     reply->fail_msg && *reply->fail_msg ? reply->fail_msg : "no message",
                     reply->fail_code);
            gc_finish(call, DDM_CMD_FAILED, msg);
        } else {
            gc_finish(call, DDM_CMD_OK, "GC done");
        }
        break;
    case DDM_REPLY_TIMEOUT:
        snprintf(msg, sizeof msg,
                 gc_effect_follows(h->vm_get_data(self, vm))
                     ? "GC requested (ended at the %u ms timeout: ART does not answer HPGC, "
                       "and no heap information followed)"
                     : "GC requested (ended at the %u ms timeout: ART does not answer HPGC, "
                       "and no heap information was switched on to show the GC)",
                 call->pl->gc_timeout_ms);
        gc_finish(call, DDM_CMD_OK, msg);
        break;
    case DDM_REPLY_ERROR:
        snprintf(msg, sizeof msg, "GC failed: JDWP error %u", (unsigned)reply->jdwp_error);
        gc_finish(call, DDM_CMD_FAILED, msg);
        break;
    case DDM_REPLY_VM_GONE:
        gc_finish(call, DDM_CMD_FAILED, "GC failed: the VM went away");
        break;
    default:
        gc_finish(call, DDM_CMD_FAILED, "GC failed: the VM's reply was malformed");
        break;
    }
    gc_unref(call);
}

/* The REAQ sent after an HPGC nothing else would answer: an answer means
 * the VM is past the GC (a Dalvik VM's HPGC reply came first). */
static void gc_fence_reply(ddm_plugin *self, ddm_vm *vm, const ddm_reply *reply, void *ud)
{
    gc_call *call = ud;
    (void)self, (void)vm;
    if (!call->finished && !call->timer &&
        (reply->status == DDM_REPLY_CHUNK || reply->status == DDM_REPLY_EMPTY))
        gc_finish(call, DDM_CMD_OK,
                  "GC requested (ART does not answer HPGC and no heap information was switched "
                  "on: ended when the VM answered the REAQ sent after it)");
    gc_unref(call);
}

/* The reason byte of an HPIF event's first heap (doc/protocol.md), -1 if cut short. */
static int hpif_reason(const uint8_t *data, size_t len)
{
    ddm_reader r;
    ddm_reader_init(&r, data, len);
    if (len < 4 + 29 || ddm_read_u4(&r) == 0)
        return -1;
    return data[4 + 4 + 8];
}

/* Tap on HPIF, HPSG, HPSO (requests: what follows a GC) and HPIF, HPST,
 * HPEN (events: what did). */
static int gc_tap(ddm_plugin *self, ddm_vm *vm, const ddm_chunk_info *ci, const uint8_t *data,
                  size_t len, void *ud)
{
    vminfo_plugin *pl = ud;
    vminfo_vm *st;
    gc_call *call, *next;
    int reason = -1;
    (void)self;

    if (ci->origin == DDM_ORIGIN_REQUEST) {
        if (len < 1 || !(st = vminfo_vm_state(pl, vm)))
            return DDM_OK;
        if (ci->type == VMINFO_CHUNK_HPIF && data[0] != 1) /* "now" changes nothing */
            st->hpif_when = data[0];
        else if (ci->type == VMINFO_CHUNK_HPSG)
            st->hpsg_on = data[0] == 1;
        else if (ci->type == VMINFO_CHUNK_HPSO)
            st->hpso_on = data[0] == 1;
        return DDM_OK;
    }
    if (ci->origin != DDM_ORIGIN_EVENT)
        return DDM_OK;
    st = pl->host->vm_get_data(pl->self, vm);
    if (ci->type == VMINFO_CHUNK_HPIF)
        reason = hpif_reason(data, len);
    for (call = pl->gcs; call; call = next) {
        next = call->next;
        if (call->vm != vm || call->timer)
            continue;
        if (ci->type == VMINFO_CHUNK_HPST)
            call->open++;
        else if (ci->type == VMINFO_CHUNK_HPEN && call->open > 0 && --call->open == 0)
            gc_schedule_done(call, "GC done (its heap segments arrived: ART does not answer "
                                   "HPGC, the segments it sends at a GC show it ended)",
                             "GC done (its heap segments arrived)");
        else if (ci->type == VMINFO_CHUNK_HPIF && (reason == 2 || reason == 3) &&
                 !(st && (st->hpsg_on || st->hpso_on)) && call->open == 0)
            gc_schedule_done(call, "GC done (its heap information arrived: ART does not answer "
                                   "HPGC, the HPIF it sends at a GC shows it ended)",
                             "GC done (its heap information arrived)");
    }
    if (st && reason == 2 && st->hpif_when == 2)
        st->hpif_when = 0; /* "next GC" is once */
    return DDM_OK;
}

static int cmd_gc(ddm_plugin *self, ddm_cmd *cmd, int argc, const char *const *argv, void *ud)
{
    vminfo_plugin *pl = ud;
    const ddm_host *h = pl->host;
    gc_call *call;
    char msg[160];
    ddm_vm *vm;
    int rc;

    if (argc != 2) {
        h->cmd_finish(cmd, DDM_CMD_USAGE, "usage: gc PID");
        return 0;
    }
    if (!(vm = resolve_vm(pl, cmd, argv[1], "gc")))
        return 0;
    call = calloc(1, sizeof *call);
    if (!call)
        return -ENOMEM;
    call->pl = pl;
    call->cmd = cmd;
    call->vm = vm;
    call->refs = 1;
    /* Taps run inside request(): a heap plugin that switches segments on
     * when it sees the HPGC has done so when this returns. */
    rc = h->request(self, vm, VMINFO_CHUNK_HPGC, NULL, 0, pl->gc_timeout_ms, gc_reply, call, NULL);
    if (rc != 0) {
        free(call);
        snprintf(msg, sizeof msg, "HPGC not sent: %s", request_error_text(rc));
        h->cmd_finish(cmd, DDM_CMD_FAILED, msg);
        return 0;
    }
    call->next = pl->gcs;
    pl->gcs = call;
    if (!gc_effect_follows(h->vm_get_data(self, vm)) && h->chunk_enabled(self, VMINFO_CHUNK_REAQ)) {
        call->refs++;
        rc = h->request(self, vm, VMINFO_CHUNK_REAQ, NULL, 0, pl->gc_timeout_ms, gc_fence_reply,
                        call, NULL);
        if (rc != 0) {
            call->refs--;
            h->log(self, DDM_LOG_DEBUG, "no REAQ after HPGC (%d): the gc ends at its reply or "
                   "timeout", rc);
        }
    }
    return 0;
}

int vminfo_commands_register(vminfo_plugin *pl)
{
    int rc = pl->host->register_command(pl->self, "exit", "exit PID [STATUS]",
                                        "halt a VM (DDM EXIT; status defaults to 1)", cmd_exit,
                                        pl, NULL);
    static const uint32_t tapped[] = { VMINFO_CHUNK_HPIF, VMINFO_CHUNK_HPSG, VMINFO_CHUNK_HPSO,
                                       VMINFO_CHUNK_HPST, VMINFO_CHUNK_HPEN };
    size_t i;
    if (rc != 0)
        return rc;
    for (i = 0; i < sizeof tapped / sizeof tapped[0]; i++)
        if ((rc = pl->host->register_tap(pl->self, tapped[i], gc_tap, pl, NULL)) != 0)
            return rc;
    return pl->host->register_command(pl->self, "gc", "gc PID",
                                      "ask a VM to collect garbage (DDM HPGC)", cmd_gc, pl, NULL);
}
