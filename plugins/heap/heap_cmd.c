/* SPDX-License-Identifier: Apache-2.0
 *
 * heap_cmd: the heap plugin's commands.
 *
 *  ddmon heap-bitmap PID FILE [--width N] [--heap ID] [--raw]
 *      Writes the heap bitmap of the last published update as a PNG (one
 *      pixel per allocation unit, heap.bitmap_width pixels wide by default)
 *      framed by a caption with the figures, a legend of the kind colours
 *      and an address scale (bitmap_page.h), or bare with --raw, and
 *      reports its size. A relative FILE is relative to the working
 *      directory of the client that gave the command (host->cmd_cwd).
 *      FILE a device, FIFO, directory or symlink is refused at once.
 *      Without segments of that heap yet (nobody watched the VM's heap
 *      views at its last GC) it holds collection on (heap_watch.c), sends
 *      HPGC and finishes at the HPEN of the heap (heap 1 by default), or
 *      with whatever came: at the GC's timeout or failure, or
 *      HEAP_BITMAP_REPLY_GRACE_MS after its answer (a VM may answer HPGC
 *      before the GC's segments reach us, as on a fresh VM's first GC).
 *  ddmon heap-info PID
 *      Sends HPIF(when 1, "now") and finishes with the heap summary when
 *      the VM's HPIF event arrives (real VMs send it before the empty
 *      reply or none), when the reply is the HPIF chunk (the 2007 draft's
 *      form), or fails HEAP_INFO_REPLY_GRACE_MS after an empty reply
 *      without the event (some VMs send it just after).
 *
 * Both answer at once, with no request and no per-VM state created, for a
 * VM that is not a ready DDM VM (a plain JVM, or one still connecting):
 * it could not be asked anyway, and heap_vm_get would make empty views for
 * it that live until it disconnects.
 *
 * A heap-info command in flight is a heap_info_ticket, a heap-bitmap
 * waiting for a GC a heap_bitmap_ticket: each is owned by its request's
 * reply callback (called exactly once) and, when that callback starts a
 * grace period, by the grace timer (its ud_free frees it); shared with the
 * per-VM state so the HPIF or HPEN event can finish the command first.
 */
#include "heap.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../common/cmdutil.h"
#include "../common/partfile.h"
#include "bitmap_png.h"

static int parse_u32(const char *s, uint32_t *out)
{
    char *end;
    unsigned long v;
    if (!s || !*s || *s == '-')
        return -1;
    errno = 0;
    v = strtoul(s, &end, 0);
    if (errno || *end || v > UINT32_MAX)
        return -1;
    *out = (uint32_t)v;
    return 0;
}

typedef struct find_ready {
    ddm_vm *vm;
    int found;
} find_ready;

static int visit_find(ddm_plugin *self, ddm_vm *vm, void *ud)
{
    find_ready *f = ud;
    (void)self;
    f->found = vm == f->vm;
    return f->found;
}

/* The VM @vmspec names, or NULL with @cmd finished by the core's own
 * message (no VM, or the several a pid matches: cmd_find_vm, 1.2), as
 * every other command says it. */
static ddm_vm *find_vm_or_fail(heap_plugin *hp, ddm_cmd *cmd, const char *vmspec)
{
    const ddm_host *h = hp->host;
    ddm_vm *vm;
    char msg[256];

    if (DDM_HOST_HAS(h, cmd_find_vm))
        return h->cmd_find_vm(cmd, vmspec);
    if (!(vm = h->find_vm(hp->self, vmspec))) {
        snprintf(msg, sizeof msg, "no VM matches '%.200s' (try 'ddmon vms')", vmspec);
        h->cmd_finish(cmd, DDM_CMD_NOT_FOUND, msg);
    }
    return vm;
}

/* @vm's state if it is a ready DDM VM (DDM_VM_READY seen, not gone), else
 * NULL after finishing @cmd with why. Creates per-VM state only for a
 * ready VM that had none yet (views declared, 1.6: state comes with the
 * first use), found among the ready VMs (a walk, for a command only). */
static heap_vm *ready_vm_or_fail(heap_plugin *hp, ddm_cmd *cmd, ddm_vm *vm, const char *vmspec,
                                 const char *what)
{
    const ddm_host *h = hp->host;
    heap_vm *hv = h->vm_get_data(hp->self, vm);
    const ddm_vm_info *vi = h->vm_info(vm);
    const char *state;
    char msg[256];

    if ((!hv || !hv->ready) && hp->lazy_views && vi && vi->ddm) {
        find_ready f = {vm, 0};
        h->foreach_vm(hp->self, visit_find, &f);
        if (f.found && (hv = heap_vm_get(hp, vm)))
            hv->ready = 1; /* among the ready VMs */
    }
    if (hv && hv->ready && vi && vi->ddm)
        return hv;
    /* a plain JVM: the one message every DDM command gives (cmdutil.h) */
    if (vi && plugin_refuse_plain_jvm(h, hp->self, cmd, vm, vmspec, what))
        return NULL; /* not vi->ddm alone: 0 on the way up too */
    state = vi ? "not ready: the DDM handshake has not finished" : "unknown";
    snprintf(msg, sizeof msg, "VM %s is not a ready DDM VM (state: %s)", vmspec, state);
    h->cmd_finish(cmd, DDM_CMD_FAILED, msg);
    return NULL;
}

/* The heap to draw: @heap_id if given, else the default. NULL if none has data. */
static const seg_heap *bitmap_heap(const heap_vm *hv, int have_heap, uint32_t heap_id)
{
    const seg_heap *sh;
    if (!hv)
        return NULL;
    sh = have_heap ? seg_collector_heap(&hv->coll, heap_id) : heap_default_bitmap_heap(hv);
    return sh && sh->have_current ? sh : NULL;
}

/* 1 if some heap of @hv has a published update (bitmap or not). */
static int has_segments(const heap_vm *hv)
{
    size_t i;
    for (i = 0; i < hv->coll.n_heaps; i++)
        if (hv->coll.heaps[i]->have_current)
            return 1;
    return 0;
}

/* The caption of @sh's page: the VM, when the update came, HPIF figures. */
static void bitmap_caption(heap_plugin *hp, const heap_vm *hv, const seg_heap *sh, bm_caption *cap,
                           char *who, size_t wholen)
{
    const ddm_vm_info *vi = hp->host->vm_info(hv->vm);
    size_t i;

    memset(cap, 0, sizeof(*cap));
    cap->heap_id = sh->id;
    if (vi) {
        const char *app = vi->app_name && *vi->app_name ? vi->app_name : NULL;
        if (app)
            snprintf(who, wholen, "%s (pid %u, %s)", app, vi->pid, vi->key ? vi->key : "?");
        else
            snprintf(who, wholen, "pid %u (%s)", vi->pid, vi->key ? vi->key : "?");
        cap->vm = who;
    }
    cap->captured_ms = heap_published_ms(hv, sh->id);
    for (i = 0; hv->have_info && i < hv->info->n; i++) {
        if (hv->info->heaps[i].heap_id == sh->id) {
            cap->have_hpif = 1;
            cap->hpif_objects = hv->info->heaps[i].allocated_objects;
            cap->hpif_max_bytes = hv->info->heaps[i].max_bytes;
        }
    }
}

/* Write the PNG of @sh to @file (@raw: the bare bitmap, else with caption,
 * legend and scale) and finish @cmd with the result. */
static void write_bitmap(heap_plugin *hp, ddm_cmd *cmd, const heap_vm *hv, const seg_heap *sh,
                         const char *file, uint32_t width, int raw)
{
    const ddm_host *h = hp->host;
    bm_page page;
    bm_caption cap;
    ddm_view *res;
    char err[256], msg[512], who[256];

    bitmap_caption(hp, hv, sh, &cap, who, sizeof who);
    if (bm_png_write_page_file(&sh->current, width, raw ? NULL : &cap, file, &page, err, sizeof err)) {
        snprintf(msg, sizeof msg, "heap %" PRIu32 ": %s", sh->id, err);
        h->cmd_finish(cmd, DDM_CMD_FAILED, msg);
        return;
    }
    res = h->cmd_result(cmd, DDM_VIEW_RECORD, "Heap bitmap");
    if (res) {
        h->view_begin(res);
        h->view_field_str(res, "file", file);
        h->view_field_int(res, "heap", sh->id);
        h->view_field_int(res, "width", page.width);
        h->view_field_int(res, "height", page.height);
        h->view_field_int(res, "bitmap_width", page.bm.width);
        h->view_field_int(res, "bitmap_height", page.bm.height);
        h->view_field_int(res, "units", (int64_t)sh->current.stats.total_units);
        h->view_field_int(res, "unit", sh->current.unit_size);
        h->view_commit(res);
    }
    snprintf(msg, sizeof msg, "wrote %s (%" PRIu32 "x%" PRIu32 ", heap %" PRIu32 ")", file,
             page.width, page.height, sh->id);
    h->cmd_finish(cmd, DDM_CMD_OK, msg);
}

/* The command of @t ends: with the bitmap if there is one now, else with
 * @why; the VM's collection hold is released (the grace period starts). */
static void bitmap_ticket_finish(heap_bitmap_ticket *t, const char *why)
{
    heap_vm *hv = t->hv;
    const seg_heap *sh = bitmap_heap(hv, t->have_heap, t->heap_id);
    char msg[256];
    if (!t->cmd)
        return;
    if (sh) {
        write_bitmap(t->hp, t->cmd, hv, sh, t->file, t->width, t->raw);
    } else {
        char have[80] = "";
        size_t off = 0, n = 0;
        /* the heaps that do have segments: the --heap the user may have meant */
        for (size_t i = 0; hv && i < hv->coll.n_heaps && off + 16 < sizeof have; i++)
            if (hv->coll.heaps[i]->have_current)
                off += (size_t)snprintf(have + off, sizeof have - off, "%s%" PRIu32,
                                        n++ ? ", " : "", hv->coll.heaps[i]->id);
        if (t->have_heap && n)
            snprintf(msg, sizeof msg,
                     "no segments for heap %" PRIu32 " after a GC: %s; the VM sent segments of "
                     "heap%s %s (--heap)",
                     t->heap_id, why, n > 1 ? "s" : "", have);
        else if (t->have_heap)
            snprintf(msg, sizeof msg, "no segments for heap %" PRIu32 " after a GC: %s", t->heap_id, why);
        else
            snprintf(msg, sizeof msg, "no heap segments after a GC: %s", why);
        t->hp->host->cmd_finish(t->cmd, DDM_CMD_FAILED, msg);
    }
    t->cmd = NULL;
    if (hv) {
        if (hv->bm_ticket == t)
            hv->bm_ticket = NULL;
        heap_watch_release(hv);
        t->hv = NULL; /* done with it: the VM may go before the GC's reply */
    }
}

void heap_cmd_segments_arrived(heap_vm *hv, uint32_t heap_id)
{
    heap_bitmap_ticket *t = hv->bm_ticket;
    /* The wanted heap, or heap 1 (the default's first choice); other heaps
     * wait for the GC's reply (ART sends none: then its timeout). */
    if (t && t->cmd && heap_id == (t->have_heap ? t->heap_id : 1))
        bitmap_ticket_finish(t, "");
}

/* The grace timer's ud_free. A timer that could not be added frees at once:
 * the command then ends with what there is. */
static void bitmap_ticket_free(void *p)
{
    heap_bitmap_ticket *t = p;
    if (!t->grace_timer && t->cmd)
        bitmap_ticket_finish(t, "the VM sent none");
    if (t->hv && t->hv->bm_ticket == t)
        t->hv->bm_ticket = NULL;
    free(t->file);
    free(t);
}

static int on_bitmap_grace_end(ddm_plugin *self, void *ud)
{
    heap_bitmap_ticket *t = ud;
    char why[96];
    (void)self;
    if (t->cmd) {
        snprintf(why, sizeof why, "none came within %u ms of the VM's answer to HPGC",
                 HEAP_BITMAP_REPLY_GRACE_MS);
        bitmap_ticket_finish(t, why);
    }
    return 0;
}

static void on_bitmap_gc_reply(ddm_plugin *self, ddm_vm *vm, const ddm_reply *reply, void *ud)
{
    heap_bitmap_ticket *t = ud;
    (void)vm;
    if (t->cmd) {
        const char *why = "the VM sent none";
        int gc_ran = reply->status == DDM_REPLY_EMPTY ||
                     (reply->status == DDM_REPLY_CHUNK && reply->type != DDM_CHUNK_FAIL);
        if (reply->status == DDM_REPLY_CHUNK && reply->type == DDM_CHUNK_FAIL)
            why = "the VM refused HPGC";
        else if (reply->status == DDM_REPLY_ERROR)
            why = "the VM answered HPGC with a JDWP error";
        else if (reply->status == DDM_REPLY_TIMEOUT)
            why = "none came in time";
        else if (reply->status == DDM_REPLY_VM_GONE)
            why = "the VM went away";
        if (reply->status == DDM_REPLY_VM_GONE && t->hv) {
            /* no bitmap of a VM that is gone */
            t->hv->bm_ticket = NULL;
            heap_watch_release(t->hv);
            t->hv = NULL;
        }
        if (gc_ran && t->hv) {
            /* The VM answered: the GC's segments may still be on their way
             * (a VM may reply before they reach us). Wait a little for
             * them; the timer owns the ticket from here on. */
            uint32_t id = t->hp->host->timer_add(self, HEAP_BITMAP_REPLY_GRACE_MS,
                                                 on_bitmap_grace_end, t, bitmap_ticket_free);
            if (id) /* 0: bitmap_ticket_free already finished and freed t */
                t->grace_timer = id;
            return;
        }
        bitmap_ticket_finish(t, why);
    }
    if (t->hv && t->hv->bm_ticket == t)
        t->hv->bm_ticket = NULL;
    free(t->file);
    free(t);
}

/* No segments yet: switch collection on for this command, ask for a GC and
 * finish when its segments have come (or the GC's answer without them). */
static int bitmap_after_gc(heap_plugin *hp, ddm_cmd *cmd, ddm_vm *vm, const char *vmspec,
                           const char *file, uint32_t width, int raw, int have_heap, uint32_t heap_id)
{
    const ddm_host *h = hp->host;
    heap_bitmap_ticket *t;
    heap_vm *hv;
    char msg[512];
    int rc;

    if (!hp->opts.bitmap_max_bytes) {
        h->cmd_finish(cmd, DDM_CMD_FAILED, "heap.bitmap_max_mb is 0: no heap is kept for a bitmap");
        return 0;
    }
    if (!heap_watch_can_segments(hp) || !h->chunk_enabled(hp->self, HEAP_CHUNK_HPGC)) {
        snprintf(msg, sizeof msg, "VM %s has sent no heap segments and cannot be asked for them "
                 "(HPSG, HPGC or heap.segments is off)", vmspec);
        h->cmd_finish(cmd, DDM_CMD_FAILED, msg);
        return 0;
    }
    hv = heap_vm_get(hp, vm);
    if (!hv)
        return -ENOMEM;
    if (hv->bm_ticket) {
        h->cmd_finish(cmd, DDM_CMD_FAILED, "a heap-bitmap for this VM is already waiting for a GC");
        return 0;
    }
    t = calloc(1, sizeof(*t));
    if (!t || !(t->file = strdup(file))) {
        free(t);
        return -ENOMEM;
    }
    t->hp = hp;
    t->cmd = cmd;
    t->hv = hv;
    t->width = width;
    t->raw = raw;
    t->have_heap = have_heap;
    t->heap_id = heap_id;
    heap_watch_hold(hv); /* HPSG(1) goes out before the HPGC */
    rc = h->request(hp->self, vm, HEAP_CHUNK_HPGC, NULL, 0, HEAP_BITMAP_GC_TIMEOUT_MS,
                    on_bitmap_gc_reply, t, NULL);
    if (rc) {
        heap_watch_release(hv);
        free(t->file);
        free(t);
        snprintf(msg, sizeof msg, "VM %s has sent no heap segments and HPGC cannot be sent: %s",
                 vmspec, strerror(-rc));
        h->cmd_finish(cmd, DDM_CMD_FAILED, msg);
        return 0;
    }
    hv->bm_ticket = t;
    return 0;
}

static int cmd_heap_bitmap(ddm_plugin *self, ddm_cmd *cmd, int argc, const char *const *argv,
                           void *ud)
{
    heap_plugin *hp = ud;
    const ddm_host *h = hp->host;
    uint32_t width = hp->opts.bitmap_width, heap_id = 0;
    int have_heap = 0, raw = 0, i, rc;
    const char *file = NULL, *vmspec = NULL;
    ddm_vm *vm;
    heap_vm *hv;
    const seg_heap *sh;
    char msg[512];
    (void)self;

    for (i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--width") && i + 1 < argc) {
            if (parse_u32(argv[++i], &width) || width == 0 || width > BM_MAX_WIDTH) {
                h->cmd_finish(cmd, DDM_CMD_USAGE, "--width takes 1..65536");
                return 0;
            }
        } else if (!strcmp(argv[i], "--heap") && i + 1 < argc) {
            if (parse_u32(argv[++i], &heap_id)) {
                h->cmd_finish(cmd, DDM_CMD_USAGE, "--heap takes a heap id");
                return 0;
            }
            have_heap = 1;
        } else if (!strcmp(argv[i], "--raw")) {
            raw = 1;
        } else if (!vmspec) {
            vmspec = argv[i];
        } else if (!file) {
            file = argv[i];
        } else {
            h->cmd_finish(cmd, DDM_CMD_USAGE, "usage: heap-bitmap PID FILE [--width N] [--heap ID] [--raw]");
            return 0;
        }
    }
    if (!vmspec || !file) {
        h->cmd_finish(cmd, DDM_CMD_USAGE, "usage: heap-bitmap PID FILE [--width N] [--heap ID] [--raw]");
        return 0;
    }
    if (bm_png_ready(msg, sizeof msg) != 0) { /* before a GC is asked for nothing */
        h->cmd_finish(cmd, DDM_CMD_FAILED, msg);
        return 0;
    }
    if (!(vm = find_vm_or_fail(hp, cmd, vmspec)))
        return 0;
    hv = ready_vm_or_fail(hp, cmd, vm, vmspec, "heap-bitmap");
    if (!hv)
        return 0;
    /* The monitor writes the file; resolve a relative name against the
     * client's directory, as the user meant it. */
    const char *cwd = file[0] != '/' ? h->cmd_cwd(cmd) : NULL;
    size_t plen = cwd ? strlen(cwd) + 1 + strlen(file) + 1 : 0;
    char *full = plen ? malloc(plen) : NULL;
    if (full) {
        snprintf(full, plen, "%s/%s", cwd, file);
        file = full;
    }
    /* FILE a device, FIFO or symlink: refused before a GC is asked for */
    rc = part_check_target(file);
    if (rc != 0) {
        snprintf(msg, sizeof msg, "cannot write %.400s: %s", file, part_strerror(rc));
        h->cmd_finish(cmd, DDM_CMD_FAILED, msg);
        free(full);
        return 0;
    }
    sh = bitmap_heap(hv, have_heap, heap_id);
    if (sh) {
        write_bitmap(hp, cmd, hv, sh, file, width, raw);
        rc = 0;
    } else if (!have_heap && hv && has_segments(hv)) {
        /* A GC would not help: the heaps are too big to keep. */
        h->cmd_finish(cmd, DDM_CMD_FAILED, "no heap of this VM is small enough to keep for a bitmap "
                      "(see heap.bitmap_max_mb)");
        rc = 0;
    } else {
        /* No segments yet (nobody watched the VM's heap views at its last
         * GC): ask for them. */
        rc = bitmap_after_gc(hp, cmd, vm, vmspec, file, width, raw, have_heap, heap_id);
    }
    free(full);
    return rc;
}

/* --------------------------------------------------------------- heap-info */

static void info_result(heap_plugin *hp, ddm_cmd *cmd, const heap_vm *hv)
{
    const ddm_host *h = hp->host;
    static const ddm_column cols[] = {
        { "heap", DDM_VAL_INT, NULL },    { "max", DDM_VAL_INT, "B" },
        { "size", DDM_VAL_INT, "B" },     { "allocated", DDM_VAL_INT, "B" },
        { "free", DDM_VAL_INT, "B" },     { "used", DDM_VAL_DOUBLE, "%" },
        { "objects", DDM_VAL_INT, NULL },
    };
    ddm_view *res = h->cmd_result(cmd, DDM_VIEW_TABLE, "Heap info");
    size_t i;
    if (!res)
        return;
    h->view_set_columns(res, cols, sizeof cols / sizeof cols[0]);
    h->view_begin(res);
    for (i = 0; i < hv->info->n; i++) {
        const hpif_entry *e = &hv->info->heaps[i];
        h->view_row(res);
        h->view_int(res, e->heap_id);
        h->view_int(res, e->max_bytes);
        h->view_int(res, e->size_bytes);
        h->view_int(res, e->allocated_bytes);
        h->view_int(res, (int64_t)e->size_bytes - (int64_t)e->allocated_bytes);
        h->view_double(res, e->size_bytes ? 100.0 * e->allocated_bytes / e->size_bytes : 0.0);
        h->view_int(res, e->allocated_objects);
    }
    h->view_commit(res);
}

void heap_cmd_info_arrived(heap_vm *hv)
{
    heap_info_ticket *t = hv->ticket;
    char msg[128];
    if (!t || !t->cmd)
        return;
    info_result(hv->hp, t->cmd, hv);
    snprintf(msg, sizeof msg, "%zu heap%s", hv->info->n, hv->info->n == 1 ? "" : "s");
    hv->hp->host->cmd_finish(t->cmd, DDM_CMD_OK, msg);
    t->cmd = NULL;
    /* done: the next heap-info need not wait for this one's reply or timer */
    hv->ticket = NULL;
    t->hv = NULL;
}

void heap_cmd_vm_gone(heap_vm *hv)
{
    heap_info_ticket *it = hv->ticket;
    heap_bitmap_ticket *bt = hv->bm_ticket;

    hv->ticket = NULL;
    hv->bm_ticket = NULL;
    if (it) {
        it->hv = NULL;
        /* waiting for the request's reply: that callback finishes it */
        if (it->grace_timer && it->cmd) {
            hv->hp->host->cmd_finish(it->cmd, DDM_CMD_FAILED, "VM went away");
            it->cmd = NULL;
        }
    }
    if (bt) {
        if (bt->grace_timer && bt->cmd) {
            heap_watch_release(hv);
            bt->hv = NULL; /* no bitmap of a VM that is gone */
            bitmap_ticket_finish(bt, "the VM went away");
        }
        bt->hv = NULL;
    }
}

/* The grace timer's ud_free. A timer that could not be added frees at once:
 * the command then fails as if the grace period had passed. */
static void info_ticket_free(void *p)
{
    heap_info_ticket *t = p;
    if (!t->grace_timer && t->cmd)
        t->hp->host->cmd_finish(t->cmd, DDM_CMD_FAILED, "VM answered but sent no heap info");
    if (t->hv && t->hv->ticket == t)
        t->hv->ticket = NULL;
    free(t);
}

static int on_info_grace_end(ddm_plugin *self, void *ud)
{
    heap_info_ticket *t = ud;
    char msg[128];
    (void)self;
    if (t->cmd) {
        snprintf(msg, sizeof msg, "VM answered but sent no heap info (none within %u ms)",
                 HEAP_INFO_REPLY_GRACE_MS);
        t->hp->host->cmd_finish(t->cmd, DDM_CMD_FAILED, msg);
        t->cmd = NULL;
    }
    if (t->hv && t->hv->ticket == t)
        t->hv->ticket = NULL;
    t->hv = NULL;
    return 0;
}

static void on_info_reply(ddm_plugin *self, ddm_vm *vm, const ddm_reply *reply, void *ud)
{
    heap_info_ticket *t = ud;
    const ddm_host *h = t->hp->host;
    char msg[256];
    int wait = 0;

    if (t->cmd) {
        switch (reply->status) {
        case DDM_REPLY_CHUNK:
            if (reply->type == DDM_CHUNK_FAIL) {
                snprintf(msg, sizeof msg, "VM refused HPIF: %s",
                         reply->fail_msg ? reply->fail_msg : "no message");
            } else if (reply->type == HEAP_CHUNK_HPIF) {
                /* the 2007 draft's form: the data is the reply */
                if (t->hv)
                    (void)heap_info_update(t->hp, vm, reply->data, reply->len);
                snprintf(msg, sizeof msg, "VM answered with an HPIF of %zu bytes: too short",
                         reply->len);
            } else {
                snprintf(msg, sizeof msg, "VM answered but sent no heap info");
                wait = 1;
            }
            break;
        case DDM_REPLY_EMPTY:
            /* the HPIF event may still follow the reply */
            snprintf(msg, sizeof msg, "VM answered but sent no heap info");
            wait = 1;
            break;
        case DDM_REPLY_ERROR:
            snprintf(msg, sizeof msg, "VM answered HPIF with JDWP error %u", reply->jdwp_error);
            break;
        case DDM_REPLY_TIMEOUT:
            snprintf(msg, sizeof msg, "VM sent no heap info in time");
            break;
        case DDM_REPLY_VM_GONE:
            snprintf(msg, sizeof msg, "VM went away");
            break;
        default:
            snprintf(msg, sizeof msg, "bad reply to HPIF");
            break;
        }
        if (t->cmd && wait && t->hv) {
            /* the timer owns the ticket from here on (or freed it, failing the command) */
            uint32_t id = h->timer_add(self, HEAP_INFO_REPLY_GRACE_MS, on_info_grace_end, t,
                                       info_ticket_free);
            if (id) /* 0: info_ticket_free already finished and freed t */
                t->grace_timer = id;
            return;
        }
        if (t->cmd) {
            h->cmd_finish(t->cmd, DDM_CMD_FAILED, msg);
            t->cmd = NULL;
        }
    }
    if (t->hv && t->hv->ticket == t)
        t->hv->ticket = NULL;
    free(t);
}

static int cmd_heap_info(ddm_plugin *self, ddm_cmd *cmd, int argc, const char *const *argv,
                         void *ud)
{
    heap_plugin *hp = ud;
    const ddm_host *h = hp->host;
    heap_info_ticket *t;
    heap_vm *hv;
    ddm_vm *vm;
    uint8_t when = 1;
    char msg[256];
    int rc;
    (void)self;

    if (argc != 2) {
        h->cmd_finish(cmd, DDM_CMD_USAGE, "usage: heap-info PID");
        return 0;
    }
    if (!(vm = find_vm_or_fail(hp, cmd, argv[1])))
        return 0;
    if (!h->chunk_enabled(hp->self, HEAP_CHUNK_HPIF)) {
        h->cmd_finish(cmd, DDM_CMD_FAILED, "chunk type HPIF is disabled");
        return 0;
    }
    hv = ready_vm_or_fail(hp, cmd, vm, argv[1], "heap-info");
    if (!hv)
        return 0;
    if (hv->ticket) {
        h->cmd_finish(cmd, DDM_CMD_FAILED, "a heap-info for this VM is already running");
        return 0;
    }
    t = calloc(1, sizeof(*t));
    if (!t)
        return -ENOMEM;
    t->hp = hp;
    t->cmd = cmd;
    t->hv = hv;
    rc = h->request(hp->self, vm, HEAP_CHUNK_HPIF, &when, 1, 0, on_info_reply, t, NULL);
    if (rc) {
        free(t);
        snprintf(msg, sizeof msg, "cannot send HPIF: %s", strerror(-rc));
        h->cmd_finish(cmd, DDM_CMD_FAILED, msg);
        return 0;
    }
    hv->ticket = t;
    return 0;
}

int heap_cmd_register(heap_plugin *hp)
{
    const ddm_host *h = hp->host;
    int rc = h->register_command(hp->self, "heap-bitmap", "PID FILE [--width N] [--heap ID] [--raw]",
                                 "write the heap bitmap as a PNG, with legend and scale; "
                                 "--width: units a row, 1..65536",
                                 cmd_heap_bitmap, hp, NULL);
    if (!rc)
        rc = h->register_command(hp->self, "heap-info", "PID",
                                 "ask the VM for its heap summary now", cmd_heap_info, hp, NULL);
    return rc;
}
