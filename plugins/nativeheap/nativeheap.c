/* SPDX-License-Identifier: Apache-2.0
 *
 * nativeheap plugin: native heap segments (NHSG/NHST/NHEN, decoded by the
 * heap plugin's segment decoder compiled in here) and the NHGT native
 * allocation dump on request.
 *
 * NHSG makes an old Dalvik VM walk its native heap at every GC, so it is
 * asked for only while someone looks, as the heap plugin does with HPSG:
 * nh_poll.c's tick sends NHSG(when 1, what 0) to a ready VM while its
 * nativeheap.segments view is watched (at DDM_VM_READY too when it already
 * is: a snapshot) and NHSG(0, 1) nativeheap.grace_ms after the last look. A
 * failed switch is retried at the next tick. `ddmon native-heap PID` sends
 * an empty NHGT (a plain JVM is refused as one: it has no native heap
 * view); the reply is parsed (nhgt.h) into the views. ddmlib
 * follows NHGT with NHSG(0, 1) to switch segment updates off; this plugin
 * sends that too, but only when segments are not on, so a watched native
 * segment view keeps updating. While someone watches one of the NHGT
 * views, nh_poll.c sends NHGT by itself: when the watch begins, then every
 * nativeheap.interval ms. Only replies to those requests are processed: an
 * NHGT that arrives unasked is ignored (logged, rate-limited).
 *
 * Options (nativeheap.KEY): segments 0|1 (1: NHSG while watched; 0: never),
 * grace_ms (10000: NHSG(0, 1) this long after the segments view was last
 * watched), always 0|1 (0; 1: NHSG(1, 0) at READY, never off), max_rows
 * (500), frames (8), timeout_ms (0 = host default), interval (10000: NHGT
 * period in ms while nativeheap.summary, .allocations or .backtraces is
 * watched, at least 1000; 0 = NHGT only on `ddmon native-heap`).
 * Non-goals: symbol names (only library+offset), leak detection.
 */
#include "nativeheap.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <ddmon/bytes.h>

#include "../common/cmdutil.h"

const char *nh_vm_label(nh_plugin *np, ddm_vm *vm, char *buf, size_t len)
{
    const ddm_vm_info *vi = np->host->vm_info(vm);
    snprintf(buf, len, "%s (pid %u)", vi && vi->key ? vi->key : "?", vi ? vi->pid : 0);
    return buf;
}

static void nh_vm_free(void *p)
{
    nh_vm *nv = p;
    if (!nv)
        return;
    if (nv->coll) {
        seg_collector_clear(nv->coll);
        free(nv->coll);
    }
    free(nv);
}

void nh_vm_release_if_idle(nh_vm *nv)
{
    nh_plugin *np = nv->np;
    if (!np->lazy_views || np->opts.always || nv->segments || nv->summary || nv->allocations || nv->backtraces ||
        nv->segments_on)
        return;
    for (size_t i = 0; nv->coll && i < nv->coll->n_heaps; i++)
        if (nv->coll->heaps[i]->collecting)
            return; /* an update in progress (NHST came, NHEN not yet) */
    if (nv->nhgt_in_flight || nv->headline_nhgt) {
        /* the struct stays (the NHGT's reply, its headline); the segment
         * updates nobody shows go */
        if (nv->coll) {
            seg_collector_clear(nv->coll);
            free(nv->coll);
            nv->coll = NULL;
        }
        nh_poll_data_shed(np, nv);
        return;
    }
    nh_poll_forget(np, nv);
    np->host->vm_set_data(np->self, nv->vm, NULL, NULL); /* frees nv */
}

void nh_vm_drop_stalled(nh_vm *nv)
{
    nh_plugin *np = nv->np;
    double quiet_ms;
    char label[128];
    size_t i, n;
    if (!nv->coll)
        return;
    quiet_ms = (np->now() - nv->piece_at) * 1000.0;
    if (quiet_ms < (double)NH_UPDATE_STALL_MS)
        return;
    for (i = 0; i < nv->coll->n_heaps && !nv->coll->heaps[i]->collecting; i++)
        ;
    if (i == nv->coll->n_heaps)
        return; /* no update in progress */
    n = seg_collector_abandon(nv->coll);
    /* one line per stalled update: at most one per NH_UPDATE_STALL_MS a VM */
    np->host->log(np->self, DDM_LOG_WARNING,
                  "VM %s: no NHEN and no piece for %.0f ms (limit %u ms) in an update of %zu native "
                  "heap(s); dropped it",
                  nh_vm_label(np, nv->vm, label, sizeof label), quiet_ms, NH_UPDATE_STALL_MS, n);
    nv->rejects_logged = 0;
}

seg_collector *nh_vm_collector(nh_vm *nv)
{
    if (!nv->coll) {
        nv->coll = malloc(sizeof *nv->coll);
        if (!nv->coll)
            return NULL;
        seg_collector_init(nv->coll, 0, 0);
    }
    return nv->coll;
}

nh_vm *nh_vm_get(nh_plugin *np, ddm_vm *vm)
{
    nh_vm *nv = np->host->vm_get_data(np->self, vm);
    if (nv)
        return nv;
    nv = calloc(1, sizeof(*nv));
    if (!nv)
        return NULL;
    nv->np = np;
    nv->vm = vm;
    if (np->host->vm_set_data(np->self, vm, nv, nh_vm_free) != 0)
        return NULL; /* the host freed it */
    if (!np->lazy_views)
        nh_views_create(nv); /* else when asked for (the make) */
    /* ready only where the VM is known READY: DDM_VM_READY, the make
     * callback, a tick's walk of the ready VMs; state made by data may be
     * a VM's that is not ready yet */
    return nv;
}

void nh_on_request_reply(ddm_plugin *self, ddm_vm *vm, const ddm_reply *reply, void *ud)
{
    nh_plugin *np = ud;
    char label[128];
    (void)self;
    if (reply->status == DDM_REPLY_CHUNK && reply->type == DDM_CHUNK_FAIL)
        np->host->log(np->self, DDM_LOG_INFO, "VM %s refused an NHSG request: %s",
                      nh_vm_label(np, vm, label, sizeof label),
                      reply->fail_msg ? reply->fail_msg : "no message");
}

static void on_vm_event(ddm_plugin *self, ddm_vm *vm, ddm_vm_event event, void *ud)
{
    nh_plugin *np = ud;
    nh_vm *nv;
    (void)self;
    if (event == DDM_VM_GONE) {
        nv = np->host->vm_get_data(np->self, vm);
        if (nv) {
            nv->ready = 0;
            nh_poll_forget(np, nv);
        }
        return;
    }
    if (event != DDM_VM_READY)
        return;
    /* Views made when asked (1.6): a VM nobody looks at needs no state
     * until its first use; one whose views a watch made just before has
     * it. nativeheap.always switches segments on for every VM. */
    nv = np->lazy_views && !np->opts.always ? np->host->vm_get_data(np->self, vm)
                                            : nh_vm_get(np, vm);
    if (!nv)
        return;
    nv->ready = 1;
    nh_poll_vm(np, vm); /* someone may watch already (a snapshot); NHSG with always=1 */
}

/* ----------------------------------------------------------- segment chunks */

static int read_heap_id(nh_plugin *np, ddm_vm *vm, uint32_t type, const uint8_t *data,
                        size_t len, uint32_t *id)
{
    ddm_reader r;
    char label[128], name[5];
    ddm_reader_init(&r, data, len);
    *id = ddm_read_u4(&r);
    if (ddm_reader_ok(&r))
        return 0;
    np->host->log(np->self, DDM_LOG_WARNING, "VM %s sent a %s of %zu bytes: too short",
                  nh_vm_label(np, vm, label, sizeof label), ddm_chunk_name(type, name), len);
    return -EINVAL;
}

static int on_nhst(ddm_plugin *self, ddm_vm *vm, const ddm_chunk_info *ci, const uint8_t *data,
                   size_t len, void *ud)
{
    nh_plugin *np = ud;
    nh_vm *nv;
    uint32_t id;
    char label[128];
    int rc;
    (void)self;
    if (read_heap_id(np, vm, ci->type, data, len, &id))
        return -EINVAL;
    nv = nh_vm_get(np, vm);
    if (!nv || !nh_vm_collector(nv))
        return -ENOMEM;
    nh_poll_data_came(np, nv);
    nv->piece_at = np->now();
    rc = seg_collector_start(nv->coll, id);
    if (rc < 0) {
        np->host->log(np->self, DDM_LOG_WARNING, "VM %s: native heap %" PRIu32 " is one heap too many; ignored",
                      nh_vm_label(np, vm, label, sizeof label), id);
        return rc;
    }
    if (rc > 0)
        np->host->log(np->self, DDM_LOG_INFO,
                      "VM %s: NHST for heap %" PRIu32 " before the previous update ended (no NHEN); dropped it",
                      nh_vm_label(np, vm, label, sizeof label), id);
    nv->rejects_logged = 0;
    return DDM_OK;
}

static int on_nhsg(ddm_plugin *self, ddm_vm *vm, const ddm_chunk_info *ci, const uint8_t *data,
                   size_t len, void *ud)
{
    nh_plugin *np = ud;
    nh_vm *nv;
    seg_piece_report rep;
    char label[128];
    int rc;
    (void)self, (void)ci;
    nv = nh_vm_get(np, vm);
    if (!nv || !nh_vm_collector(nv))
        return -ENOMEM;
    nh_poll_data_came(np, nv);
    nv->piece_at = np->now();
    rc = seg_collector_piece(nv->coll, data, len, 0, &rep);
    if (rep.implicit_start)
        np->host->log(np->self, DDM_LOG_INFO,
                      "VM %s: NHSG for heap %" PRIu32 " without NHST; collecting it anyway",
                      nh_vm_label(np, vm, label, sizeof label), rep.piece.heap_id);
    if (rc == -EINVAL) {
        if (rep.error == SEG_ERR_SHORT_HEADER)
            np->host->log(np->self, DDM_LOG_WARNING, "VM %s sent an NHSG of %zu bytes: too short",
                          nh_vm_label(np, vm, label, sizeof label), len);
        else if (nv->rejects_logged++ < 5)
            np->host->log(np->self, DDM_LOG_WARNING,
                          "VM %s: rejected NHSG piece of heap %" PRIu32 " at 0x%08" PRIx32
                          " offset %" PRIu32 " (%" PRIu32 " units declared): %s at run byte %zu;"
                          " the rest of the heap is kept",
                          nh_vm_label(np, vm, label, sizeof label), rep.piece.heap_id,
                          rep.piece.start, rep.piece.offset, rep.piece.length_units,
                          seg_error_str(rep.error), rep.at.run_offset);
        return -EINVAL;
    }
    if (rc == -ENOSPC)
        np->host->log(np->self, DDM_LOG_WARNING, "VM %s: native heap %" PRIu32 " is one heap too many; ignored",
                      nh_vm_label(np, vm, label, sizeof label), rep.piece.heap_id);
    return rc < 0 ? rc : DDM_OK;
}

static int on_nhen(ddm_plugin *self, ddm_vm *vm, const ddm_chunk_info *ci, const uint8_t *data,
                   size_t len, void *ud)
{
    nh_plugin *np = ud;
    nh_vm *nv;
    uint32_t id;
    char label[128];
    (void)self;
    if (read_heap_id(np, vm, ci->type, data, len, &id))
        return -EINVAL;
    nv = nh_vm_get(np, vm);
    if (!nv)
        return -ENOMEM;
    nh_poll_data_came(np, nv);
    if (!nv->coll || seg_collector_end(nv->coll, id, NULL) != 0) {
        np->host->log(np->self, DDM_LOG_INFO,
                      "VM %s: NHEN for heap %" PRIu32 " without NHST or pieces; ignored",
                      nh_vm_label(np, vm, label, sizeof label), id);
        return DDM_OK;
    }
    nh_views_segments(nv);
    return DDM_OK;
}

/* ------------------------------------------------------- native-heap (NHGT) */

typedef struct nhgt_ticket {
    nh_plugin *np;
    ddm_cmd *cmd;
} nhgt_ticket;

/* The command's NHGT fills its views, made first if a look has not made
 * them (review rU3 2): with nativeheap.interval=0 nothing else asks NHGT,
 * and the plugin keeps no copy for a later look. Views made here are taken
 * back after the core's linger, like a look's. */
static int fill_made_views(nh_vm *nv, const nhgt_info *in, uint64_t *allocs, uint64_t *bytes)
{
    nh_views_make(nv);
    return nh_views_nhgt(nv, in, allocs, bytes);
}

static void on_nhgt_reply(ddm_plugin *self, ddm_vm *vm, const ddm_reply *reply, void *ud)
{
    nhgt_ticket *t = ud;
    nh_plugin *np = t->np;
    const ddm_host *h = np->host;
    nh_vm *nv;
    nhgt_info in;
    uint64_t allocs = 0, bytes = 0;
    char err[256], msg[320], label[128];
    (void)self;

    if (reply->status != DDM_REPLY_CHUNK) {
        snprintf(msg, sizeof msg, "%s",
                 reply->status == DDM_REPLY_TIMEOUT ? "VM sent no NHGT reply in time"
                 : reply->status == DDM_REPLY_VM_GONE ? "VM went away"
                 : reply->status == DDM_REPLY_EMPTY ? "VM sent an empty NHGT reply (not supported?)"
                 : reply->status == DDM_REPLY_ERROR ? "VM answered NHGT with a JDWP error"
                 : "bad reply to NHGT");
        h->cmd_finish(t->cmd, DDM_CMD_FAILED, msg);
    } else if (reply->type == DDM_CHUNK_FAIL) {
        snprintf(msg, sizeof msg, "VM refused NHGT: %s", reply->fail_msg ? reply->fail_msg : "no message");
        h->cmd_finish(t->cmd, DDM_CMD_FAILED, msg);
    } else if (reply->type != NH_CHUNK_NHGT) {
        char name[5];
        snprintf(msg, sizeof msg, "VM answered NHGT with %s", ddm_chunk_name(reply->type, name));
        h->cmd_finish(t->cmd, DDM_CMD_FAILED, msg);
    } else if (nhgt_parse(reply->data, reply->len, &in, err, sizeof err) != 0) {
        h->log(np->self, DDM_LOG_WARNING, "VM %s sent a bad NHGT reply (%zu bytes): %s",
               nh_vm_label(np, vm, label, sizeof label), reply->len, err);
        snprintf(msg, sizeof msg, "bad NHGT reply: %s", err);
        h->cmd_finish(t->cmd, DDM_CMD_FAILED, msg);
    } else if (!(nv = nh_vm_get(np, vm)) || fill_made_views(nv, &in, &allocs, &bytes) != 0) {
        h->cmd_finish(t->cmd, DDM_CMD_FAILED, "out of memory");
    } else {
        if (in.ragged)
            h->log(np->self, DDM_LOG_INFO,
                   "VM %s: NHGT allocation bytes are not a whole number of records; tail ignored",
                   nh_vm_label(np, vm, label, sizeof label));
        if (in.alloc_info_size == 0)
            snprintf(msg, sizeof msg, "total native memory %" PRIu64 " bytes (malloc debugging is off: no allocation records)",
                     in.total_memory);
        else
            snprintf(msg, sizeof msg, "%zu records, %" PRIu64 " allocations, %" PRIu64 " bytes",
                     in.n_records, allocs, bytes);
        h->cmd_finish(t->cmd, DDM_CMD_OK, msg);
    }
    free(t);
}

/* An NHGT that nobody waits for (unsolicited, or a reply after its
 * request timed out) is not looked at: only what ddmon asked for is
 * processed (a VM could otherwise make it group a 64 MiB table at will,
 * issue 15). One log line naming the VM, then at most one a minute saying
 * how many more were ignored. */
#define NH_UNASKED_LOG_PERIOD_S 60.0

static int on_nhgt_event(ddm_plugin *self, ddm_vm *vm, const ddm_chunk_info *ci,
                         const uint8_t *data, size_t len, void *ud)
{
    nh_plugin *np = ud;
    nh_vm *nv = nh_vm_get(np, vm);
    char label[128];
    double now = np->now();
    (void)self, (void)ci, (void)data;
    if (!nv)
        return -ENOMEM;
    if (nv->unasked_logged_at > 0 && now - nv->unasked_logged_at < NH_UNASKED_LOG_PERIOD_S) {
        nv->unasked_quiet++;
        return DDM_OK;
    }
    np->host->log(np->self, DDM_LOG_WARNING,
                  "VM %s sent an NHGT of %zu bytes that ddmon did not ask for; ignored%s",
                  nh_vm_label(np, vm, label, sizeof label), len,
                  nv->unasked_quiet ? " (more were ignored since the last such line)" : "");
    nv->unasked_logged_at = now > 0 ? now : 1e-9;
    nv->unasked_quiet = 0;
    return DDM_OK;
}

static int cmd_native_heap(ddm_plugin *self, ddm_cmd *cmd, int argc, const char *const *argv,
                           void *ud)
{
    nh_plugin *np = ud;
    const ddm_host *h = np->host;
    nhgt_ticket *t;
    nh_vm *nv;
    ddm_vm *vm;
    char msg[256], label[128];
    int rc;
    (void)self;

    if (argc != 2) {
        h->cmd_finish(cmd, DDM_CMD_USAGE, "usage: native-heap PID");
        return 0;
    }
    vm = h->cmd_find_vm(cmd, argv[1]);
    if (!vm)
        return 0; /* finished, with the core's message */
    /* a plain JVM has no native heap view (NHGT is DDM): said as such, not
     * as the request's "Transport endpoint is not connected" */
    if (plugin_refuse_plain_jvm(h, np->self, cmd, vm, argv[1], "native-heap"))
        return 0;
    if (!h->chunk_enabled(np->self, NH_CHUNK_NHGT)) {
        h->cmd_finish(cmd, DDM_CMD_FAILED, "chunk type NHGT is disabled");
        return 0;
    }
    nv = nh_vm_get(np, vm);
    if (!nv)
        return -ENOMEM;
    t = calloc(1, sizeof(*t));
    if (!t)
        return -ENOMEM;
    t->np = np;
    t->cmd = cmd;
    rc = h->request(np->self, vm, NH_CHUNK_NHGT, NULL, 0, np->opts.timeout_ms, on_nhgt_reply, t,
                    NULL);
    if (rc) {
        free(t);
        snprintf(msg, sizeof msg, "cannot send NHGT: %s", strerror(-rc));
        h->cmd_finish(cmd, DDM_CMD_FAILED, msg);
        return 0;
    }
    if (!nv->segments_on && h->chunk_enabled(np->self, NH_CHUNK_NHSG)) {
        static const uint8_t off[2] = { 0, 1 }; /* as ddmlib: NHSG(when 0, what 1) */
        rc = h->request(np->self, vm, NH_CHUNK_NHSG, off, 2, 0, nh_on_request_reply, np, NULL);
        if (rc)
            h->log(np->self, DDM_LOG_DEBUG, "cannot send NHSG(0,1) to VM %s: %s",
                   nh_vm_label(np, vm, label, sizeof label), strerror(-rc));
    }
    return 0;
}

/* ------------------------------------------------------------------ plugin */

static int nh_init(ddm_plugin *self, const ddm_host *host)
{
    nh_plugin *np = calloc(1, sizeof(*np));
    int rc;
    if (!np)
        return -ENOMEM;
    np->self = self;
    np->host = host;
    np->now = nh_monotonic_now;
    host->set_data(self, np, free);
    np->opts.segments = (int)ddm_config_uint(np->host, np->self, "segments", 0, 1, 1);
    np->opts.always = (int)ddm_config_uint(np->host, np->self, "always", 0, 1, 0);
    np->opts.grace_ms = (unsigned)ddm_config_uint(np->host, np->self, "grace_ms", 0, 3600000,
                                                  NH_DEFAULT_GRACE_MS);
    np->opts.max_rows = (unsigned)ddm_config_uint(np->host, np->self, "max_rows", 1, 100000, 500);
    np->opts.frames = (unsigned)ddm_config_uint(np->host, np->self, "frames", 1, NHGT_MAX_BACKTRACE, 8);
    np->opts.timeout_ms = (unsigned)ddm_config_uint(np->host, np->self, "timeout_ms", 0, 600000, 0);
    np->opts.interval_ms = (unsigned)ddm_config_uint(np->host, np->self, "interval", 0, 86400000,
                                                     NH_DEFAULT_INTERVAL_MS);
    if (np->opts.interval_ms && np->opts.interval_ms < NH_MIN_INTERVAL_MS) {
        host->log(self, DDM_LOG_WARNING, "option interval=%u is below %u ms; using %u",
                  np->opts.interval_ms, NH_MIN_INTERVAL_MS, NH_MIN_INTERVAL_MS);
        np->opts.interval_ms = NH_MIN_INTERVAL_MS;
    }

    rc = host->register_vm_listener(self, on_vm_event, np, NULL);
    if (!rc)
        rc = host->register_chunk(self, NH_CHUNK_NHGT, on_nhgt_event, np, NULL);
    if (!rc)
        rc = host->register_chunk(self, NH_CHUNK_NHST, on_nhst, np, NULL);
    if (!rc)
        rc = host->register_chunk(self, NH_CHUNK_NHSG, on_nhsg, np, NULL);
    if (!rc)
        rc = host->register_chunk(self, NH_CHUNK_NHEN, on_nhen, np, NULL);
    if (!rc)
        rc = host->register_command(self, "native-heap", "PID",
                                    "fetch the native allocations (NHGT; needs malloc debugging)",
                                    cmd_native_heap, np, NULL);
    if (!rc)
        rc = nh_poll_start(np);
    if (!rc)
        rc = nh_metrics_register(np);
    if (!rc)
        rc = nh_views_declare(np);
    return rc;
}

DDM_PLUGIN_DEFINE("nativeheap", "1.0", "Apache-2.0", "native heap segments and allocations",
                  nh_init, NULL);
