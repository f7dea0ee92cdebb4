/* SPDX-License-Identifier: Apache-2.0
 *
 * heap plugin: HPIF heap summaries and HPSG/HPSO heap segments.
 *
 * While someone watches a VM's heap views (heap_watch.c) it asks that VM
 * for HPIF "now" and with heap.hpif_when (default 3, every GC) if HPIF is
 * enabled, and for segments with HPSG(when 1, what heap.what) if HPSG (and
 * HPSO for what 1) are enabled; heap.grace_ms after the last look it
 * switches both off again (heap.always=1: on from DDM_VM_READY, for every
 * VM, never off). It owns the event types HPIF, HPST, HPSG, HPSO and HPEN.
 * HPIF data updates heap.summary; HPEN publishes the statistics of the
 * update (heap_views.c). Bad input is logged and dropped; see segcollect.h
 * for the update rules.
 *
 * Options (heap.KEY): hpif_when 0..3, what 0|1, segments 0|1,
 * bitmap_width 1..65536 (512), bitmap_max_mb (64), blob_max_mb (16),
 * blob_interval_ms (2000), always 0|1 (0: collect only while a heap view
 * of the VM is watched), grace_ms (10000: how long collection stays on
 * after the last look).
 * Non-goals: heap dumps (HPDU/HPDS), allocation tracking (REAx), GC (vminfo).
 */
#include "heap.h"

#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <ddmon/bytes.h>

#include "bitmap.h"

const char *heap_vm_label(heap_plugin *hp, ddm_vm *vm, char *buf, size_t len)
{
    const ddm_vm_info *vi = hp->host->vm_info(vm);
    snprintf(buf, len, "%s (pid %u)", vi && vi->key ? vi->key : "?", vi ? vi->pid : 0);
    return buf;
}

const seg_heap *heap_default_bitmap_heap(const heap_vm *hv)
{
    const seg_heap *h = seg_collector_heap(&hv->coll, 1);
    size_t i;
    if (h && h->have_current && h->current.bitmap_complete && h->current.n_pieces)
        return h;
    for (i = 0; i < hv->coll.n_heaps; i++) {
        h = hv->coll.heaps[i];
        if (h->have_current && h->current.bitmap_complete && h->current.n_pieces)
            return h;
    }
    return NULL;
}

int64_t heap_published_ms(const heap_vm *hv, uint32_t heap_id)
{
    size_t i;
    for (i = 0; i < hv->n_published; i++)
        if (hv->published[i].heap_id == heap_id)
            return hv->published[i].wall_ms;
    return 0;
}

static void note_published(heap_vm *hv, uint32_t heap_id)
{
    size_t i;
    if (!hv->published) {
        hv->published = calloc(SEG_MAX_HEAPS, sizeof *hv->published);
        if (!hv->published)
            return; /* heap_published_ms says 0: unknown */
    }
    for (i = 0; i < hv->n_published; i++)
        if (hv->published[i].heap_id == heap_id)
            break;
    if (i == SEG_MAX_HEAPS)
        return; /* cannot happen: the collector holds at most as many heaps */
    if (i == hv->n_published) {
        hv->published[i].heap_id = heap_id;
        hv->n_published++;
    }
    hv->published[i].wall_ms = hv->hp->wall_ms();
}

/* ------------------------------------------------------------------ options */

static void read_options(heap_plugin *hp)
{
    heap_opts *o = &hp->opts;
    o->hpif_when = (unsigned)ddm_config_uint(hp->host, hp->self, "hpif_when", 0, 3, 3);
    o->what = (unsigned)ddm_config_uint(hp->host, hp->self, "what", 0, 1, 0);
    o->segments = (int)ddm_config_uint(hp->host, hp->self, "segments", 0, 1, 1);
    o->bitmap_width = (uint32_t)ddm_config_uint(hp->host, hp->self, "bitmap_width", 1, BM_MAX_WIDTH, 512);
    o->bitmap_max_bytes = (size_t)ddm_config_uint(hp->host, hp->self, "bitmap_max_mb", 0, 4096, 64) << 20;
    o->blob_max_bytes = (size_t)ddm_config_uint(hp->host, hp->self, "blob_max_mb", 1, 1024, 16) << 20;
    o->blob_interval_ms = (unsigned)ddm_config_uint(hp->host, hp->self, "blob_interval_ms", 0, 3600000, 2000);
    o->always = (int)ddm_config_uint(hp->host, hp->self, "always", 0, 1, 0);
    o->grace_ms = (unsigned)ddm_config_uint(hp->host, hp->self, "grace_ms", 0, 3600000,
                                            HEAP_DEFAULT_GRACE_MS);
}

double heap_monotonic_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

int64_t heap_wall_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* ------------------------------------------------------------- per-VM state */

const hpif_data heap_no_info;

static void heap_vm_free(void *p)
{
    heap_vm *hv = p;
    if (!hv)
        return;
    if (hv->ticket)
        hv->ticket->hv = NULL;
    if (hv->bm_ticket)
        hv->bm_ticket->hv = NULL;
    seg_collector_clear(&hv->coll);
    if (hv->info != &heap_no_info)
        free((hpif_data *)hv->info);
    free(hv->published);
    free(hv);
}

/* Does @hv hold anything but data for views (made again on demand) and
 * its GC count? A view, collection on or to switch off, a command, a
 * deferred bitmap, an update coming. */
static int heap_vm_busy(const heap_vm *hv)
{
    if (hv->summary || hv->segments || hv->histogram || hv->frag || hv->map || hv->bitmap ||
        hv->collecting || hv->hpif_on || hv->segments_on || hv->holds || hv->ticket ||
        hv->bm_ticket || hv->blob_timer)
        return 1;
    for (size_t i = 0; i < hv->coll.n_heaps; i++)
        if (hv->coll.heaps[i]->collecting)
            return 1; /* an update in progress (HPST came, HPEN not yet) */
    return 0;
}

/* @hv's data for views goes (the segment updates with their pieces, up to
 * heap.bitmap_max_mb, the HPIF table, when each update came); the struct
 * stays, as for a VM whose data has not come yet. */
static void heap_vm_shed_data(heap_vm *hv)
{
    heap_plugin *hp = hv->hp;
    seg_collector_clear(&hv->coll);
    seg_collector_init(&hv->coll, hp->opts.bitmap_max_bytes > 0, hp->opts.bitmap_max_bytes);
    if (hv->info != &heap_no_info)
        free((hpif_data *)hv->info);
    hv->info = &heap_no_info;
    hv->have_info = 0;
    free(hv->published);
    hv->published = NULL;
    hv->n_published = 0;
    hv->map_heap = 0, hv->map_updates = 0;
    hv->blob_heap = 0, hv->blob_updates = 0;
}

void heap_vm_release_if_idle(heap_vm *hv)
{
    heap_plugin *hp = hv->hp;
    if (!hp->lazy_views || hp->opts.always || heap_vm_busy(hv))
        return; /* heap.always: every VM's state, collecting or retrying */
    if (hv->gcs > 0) {
        /* ddmon_heap_gcs_total must never go back: the small struct stays
         * with its count, the data for views goes */
        heap_vm_shed_data(hv);
        heap_watch_data_shed(hv);
        return;
    }
    heap_watch_forget(hv);
    hp->host->vm_set_data(hp->self, hv->vm, NULL, NULL); /* frees hv */
}

void heap_vm_drop_stalled(heap_vm *hv)
{
    heap_plugin *hp = hv->hp;
    double quiet_ms = (hp->now() - hv->piece_at) * 1000.0;
    char label[128];
    size_t i, n;
    if (quiet_ms < (double)HEAP_UPDATE_STALL_MS)
        return;
    for (i = 0; i < hv->coll.n_heaps && !hv->coll.heaps[i]->collecting; i++)
        ;
    if (i == hv->coll.n_heaps)
        return; /* no update in progress */
    n = seg_collector_abandon(&hv->coll);
    /* one line per stalled update: at most one per HEAP_UPDATE_STALL_MS a VM */
    hp->host->log(hp->self, DDM_LOG_WARNING,
                  "VM %s: no HPEN and no piece for %.0f ms (limit %u ms) in an update of %zu heap(s); "
                  "dropped it",
                  heap_vm_label(hp, hv->vm, label, sizeof label), quiet_ms, HEAP_UPDATE_STALL_MS, n);
    hv->rejects_logged = hv->rejects_quiet = 0;
}

heap_vm *heap_vm_get(heap_plugin *hp, ddm_vm *vm)
{
    heap_vm *hv = hp->host->vm_get_data(hp->self, vm);
    if (hv)
        return hv;
    hv = calloc(1, sizeof(*hv));
    if (!hv)
        return NULL;
    hv->hp = hp;
    hv->vm = vm;
    hv->info = &heap_no_info;
    seg_collector_init(&hv->coll, hp->opts.bitmap_max_bytes > 0, hp->opts.bitmap_max_bytes);
    if (hp->host->vm_set_data(hp->self, vm, hv, heap_vm_free) != 0)
        return NULL; /* the host freed it */
    if (!hp->lazy_views)
        heap_views_create(hv); /* else when asked for (the make) */
    /* ready only where the VM is known READY: DDM_VM_READY, the make
     * callback, a walk of the ready VMs (a command's, a tick's); state made
     * by data may be a VM's that is not ready yet */
    return hv;
}

/* ----------------------------------------------------------------- requests */

void heap_on_request_reply(ddm_plugin *self, ddm_vm *vm, const ddm_reply *reply, void *ud)
{
    heap_plugin *hp = ud;
    char label[128];
    (void)self;
    /* The 2007 draft's VM answers HPIF with the data in the reply. */
    if (reply->status == DDM_REPLY_CHUNK && reply->type == HEAP_CHUNK_HPIF)
        (void)heap_info_update(hp, vm, reply->data, reply->len);
    else if (reply->status == DDM_REPLY_CHUNK && reply->type == DDM_CHUNK_FAIL)
        hp->host->log(hp->self, DDM_LOG_INFO, "VM %s refused a heap request: %s (code %u)",
                      heap_vm_label(hp, vm, label, sizeof label),
                      reply->fail_msg ? reply->fail_msg : "no message", reply->fail_code);
    else if (reply->status == DDM_REPLY_ERROR)
        hp->host->log(hp->self, DDM_LOG_INFO, "VM %s answered a heap request with JDWP error %u",
                      heap_vm_label(hp, vm, label, sizeof label), reply->jdwp_error);
}

static void on_vm_event(ddm_plugin *self, ddm_vm *vm, ddm_vm_event event, void *ud)
{
    heap_plugin *hp = ud;
    heap_vm *hv;
    (void)self;
    if (event == DDM_VM_READY) {
        /* Views made when asked (1.6): a VM nobody looks at needs no state
         * (nothing to switch on) until its first use; one whose views a
         * watch made just before has it. heap.always collects on every VM. */
        hv = hp->lazy_views && !hp->opts.always ? hp->host->vm_get_data(hp->self, vm)
                                                : heap_vm_get(hp, vm);
        if (hv)
            heap_watch_ready(hv);
    } else if (event == DDM_VM_GONE) {
        hv = hp->host->vm_get_data(hp->self, vm);
        if (hv)
            heap_cmd_vm_gone(hv);
        if (hv) {
            hv->ready = 0;
            heap_watch_forget(hv);
            heap_views_bitmap_cancel(hv);
        }
    }
}

/* ------------------------------------------------------------------- chunks */

int heap_info_update(heap_plugin *hp, ddm_vm *vm, const uint8_t *data, size_t len)
{
    heap_vm *hv;
    hpif_data info;
    char label[128];
    int rc;

    rc = hpif_parse(data, len, &info);
    if (rc < 0) {
        hp->host->log(hp->self, DDM_LOG_WARNING, "VM %s sent an HPIF of %zu bytes: too short",
                      heap_vm_label(hp, vm, label, sizeof label), len);
        return -EINVAL;
    }
    if (rc > 0)
        hp->host->log(hp->self, DDM_LOG_WARNING,
                      "VM %s sent an HPIF declaring %" PRIu32 " heaps in %zu bytes; read %zu",
                      heap_vm_label(hp, vm, label, sizeof label), info.declared, len, info.n);
    hv = heap_vm_get(hp, vm);
    if (!hv)
        return -ENOMEM;
    heap_watch_data_came(hv);
    if (hv->info == &heap_no_info) {
        hpif_data *own = malloc(sizeof *own);
        if (!own)
            return -ENOMEM;
        hv->info = own;
    }
    *(hpif_data *)hv->info = info; /* malloc'd above: ours to write */
    hv->have_info = 1;
    if (info.n > 0 && (info.heaps[0].reason == 2 || info.heaps[0].reason == 3))
        hv->gcs++; /* sent at a GC ("next GC", "every GC") */
    heap_views_summary(hv);
    heap_cmd_info_arrived(hv);
    return DDM_OK;
}

static int on_hpif(ddm_plugin *self, ddm_vm *vm, const ddm_chunk_info *ci,
                   const uint8_t *data, size_t len, void *ud)
{
    (void)self, (void)ci;
    return heap_info_update(ud, vm, data, len);
}

static int on_hpst(ddm_plugin *self, ddm_vm *vm, const ddm_chunk_info *ci,
                   const uint8_t *data, size_t len, void *ud)
{
    heap_plugin *hp = ud;
    heap_vm *hv;
    ddm_reader r;
    uint32_t id;
    char label[128], name[5];
    int rc;
    (void)self;

    ddm_reader_init(&r, data, len);
    id = ddm_read_u4(&r);
    if (!ddm_reader_ok(&r)) {
        hp->host->log(hp->self, DDM_LOG_WARNING, "VM %s sent a %s of %zu bytes: too short",
                      heap_vm_label(hp, vm, label, sizeof label), ddm_chunk_name(ci->type, name),
                      len);
        return -EINVAL;
    }
    hv = heap_vm_get(hp, vm);
    if (!hv)
        return -ENOMEM;
    heap_watch_data_came(hv);
    hv->piece_at = hp->now();
    rc = seg_collector_start(&hv->coll, id);
    if (rc < 0) {
        hp->host->log(hp->self, DDM_LOG_WARNING, "VM %s: heap %" PRIu32 " is one heap too many (max %d); ignored",
                      heap_vm_label(hp, vm, label, sizeof label), id, SEG_MAX_HEAPS);
        return rc;
    }
    if (rc > 0)
        hp->host->log(hp->self, DDM_LOG_INFO,
                      "VM %s: HPST for heap %" PRIu32 " before the previous update ended (no HPEN); dropped it",
                      heap_vm_label(hp, vm, label, sizeof label), id);
    hv->rejects_logged = hv->rejects_quiet = 0;
    return DDM_OK;
}

static int on_piece(ddm_plugin *self, ddm_vm *vm, const ddm_chunk_info *ci,
                    const uint8_t *data, size_t len, void *ud)
{
    heap_plugin *hp = ud;
    heap_vm *hv;
    seg_piece_report rep;
    char label[128], name[5];
    int rc;
    (void)self;

    hv = heap_vm_get(hp, vm);
    if (!hv)
        return -ENOMEM;
    heap_watch_data_came(hv);
    hv->piece_at = hp->now();
    rc = seg_collector_piece(&hv->coll, data, len, ci->type == HEAP_CHUNK_HPSO, &rep);
    ddm_chunk_name(ci->type, name);
    if (rep.implicit_start)
        hp->host->log(hp->self, DDM_LOG_INFO,
                      "VM %s: %s for heap %" PRIu32 " without HPST; collecting it anyway",
                      heap_vm_label(hp, vm, label, sizeof label), name, rep.piece.heap_id);
    if (rc == -EINVAL) {
        if (rep.error == SEG_ERR_SHORT_HEADER) {
            hp->host->log(hp->self, DDM_LOG_WARNING, "VM %s sent a %s of %zu bytes: too short",
                          heap_vm_label(hp, vm, label, sizeof label), name, len);
        } else if (hv->rejects_logged < HEAP_REJECT_LOG_MAX) {
            hv->rejects_logged++;
            hp->host->log(hp->self, DDM_LOG_WARNING,
                          "VM %s: rejected %s piece of heap %" PRIu32 " at 0x%08" PRIx32
                          " offset %" PRIu32 " (%" PRIu32 " units declared): %s at run byte %zu"
                          " after %" PRIu64 " units; the rest of the heap is kept",
                          heap_vm_label(hp, vm, label, sizeof label), name, rep.piece.heap_id,
                          rep.piece.start, rep.piece.offset, rep.piece.length_units,
                          seg_error_str(rep.error), rep.at.run_offset, rep.at.units_seen);
        } else {
            hv->rejects_quiet++;
        }
        return -EINVAL;
    }
    if (rc == -ENOSPC) {
        hp->host->log(hp->self, DDM_LOG_WARNING, "VM %s: heap %" PRIu32 " is one heap too many (max %d); ignored",
                      heap_vm_label(hp, vm, label, sizeof label), rep.piece.heap_id, SEG_MAX_HEAPS);
        return rc;
    }
    if (rc < 0)
        return rc;
    if (rep.not_kept)
        hp->host->log(hp->self, DDM_LOG_WARNING,
                      "VM %s: heap %" PRIu32 " is too big to keep for a bitmap (cap heap.bitmap_max_mb=%zu, %" PRIu64 " units max); statistics only",
                      heap_vm_label(hp, vm, label, sizeof label), rep.piece.heap_id,
                      hp->opts.bitmap_max_bytes >> 20, (uint64_t)SEG_MAX_BITMAP_UNITS);
    return DDM_OK;
}

static int on_hpen(ddm_plugin *self, ddm_vm *vm, const ddm_chunk_info *ci,
                   const uint8_t *data, size_t len, void *ud)
{
    heap_plugin *hp = ud;
    heap_vm *hv;
    ddm_reader r;
    uint32_t id;
    const seg_heap *h = NULL;
    char label[128];
    (void)self, (void)ci;

    ddm_reader_init(&r, data, len);
    id = ddm_read_u4(&r);
    if (!ddm_reader_ok(&r)) {
        hp->host->log(hp->self, DDM_LOG_WARNING, "VM %s sent an HPEN of %zu bytes: too short",
                      heap_vm_label(hp, vm, label, sizeof label), len);
        return -EINVAL;
    }
    hv = heap_vm_get(hp, vm);
    if (!hv)
        return -ENOMEM;
    heap_watch_data_came(hv);
    if (seg_collector_end(&hv->coll, id, &h) != 0) {
        hp->host->log(hp->self, DDM_LOG_INFO,
                      "VM %s: HPEN for heap %" PRIu32 " without HPST or pieces; ignored",
                      heap_vm_label(hp, vm, label, sizeof label), id);
        return DDM_OK;
    }
    if (hv->rejects_quiet)
        hp->host->log(hp->self, DDM_LOG_WARNING, "VM %s: %u more pieces rejected in this update",
                      heap_vm_label(hp, vm, label, sizeof label), hv->rejects_quiet);
    hv->rejects_logged = hv->rejects_quiet = 0;
    note_published(hv, id);
    hp->host->log(hp->self, DDM_LOG_DEBUG,
                  "VM %s: heap %" PRIu32 " update: %" PRIu32 " pieces, %" PRIu32 " rejected, %" PRIu64 " units",
                  heap_vm_label(hp, vm, label, sizeof label), id, h->current.accepted,
                  h->current.rejected, h->current.stats.total_units);
    heap_views_segments(hv);
    heap_views_bitmap(hv, 1);
    heap_views_map(hv, 1);
    heap_cmd_segments_arrived(hv, id);
    return DDM_OK;
}

/* ------------------------------------------------------------------ plugin */

static int heap_init(ddm_plugin *self, const ddm_host *host)
{
    heap_plugin *hp = calloc(1, sizeof(*hp));
    static const uint32_t pieces[] = { HEAP_CHUNK_HPSG, HEAP_CHUNK_HPSO };
    size_t i;
    int rc;

    if (!hp)
        return -ENOMEM;
    hp->self = self;
    hp->host = host;
    hp->now = heap_monotonic_now;
    hp->wall_ms = heap_wall_ms;
    host->set_data(self, hp, free);
    read_options(hp);

    rc = host->register_vm_listener(self, on_vm_event, hp, NULL);
    if (!rc)
        rc = host->register_chunk(self, HEAP_CHUNK_HPIF, on_hpif, hp, NULL);
    if (!rc)
        rc = host->register_chunk(self, HEAP_CHUNK_HPST, on_hpst, hp, NULL);
    for (i = 0; !rc && i < sizeof pieces / sizeof pieces[0]; i++)
        rc = host->register_chunk(self, pieces[i], on_piece, hp, NULL);
    if (!rc)
        rc = host->register_chunk(self, HEAP_CHUNK_HPEN, on_hpen, hp, NULL);
    if (!rc)
        rc = heap_cmd_register(hp);
    if (!rc)
        rc = heap_watch_start(hp);
    if (!rc)
        rc = heap_metrics_register(hp);
    if (!rc)
        rc = heap_views_declare(hp);
    return rc;
}

DDM_PLUGIN_DEFINE("heap", "1.0", "Apache-2.0", "heap summary, segment statistics and bitmap",
                  heap_init, NULL);
