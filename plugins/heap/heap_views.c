/* SPDX-License-Identifier: Apache-2.0
 *
 * heap_views: the heap plugin's per-VM views, built from the parsed HPIF
 * data and the published segment updates.
 *
 *  heap.summary       table: per heap id max, size, allocated, free, % used,
 *                     objects, reason and time of the last HPIF (as DDMS).
 *                     Headline "heap": "41% of 64.0 MiB" over all heaps.
 *  heap.segments      table: per heap and kind (free, data object, class
 *                     object, 1/2/4/8-byte arrays, unknown, non-Java) the
 *                     count of allocations, total, smallest, largest and
 *                     average bytes (DDMS's "Stats" table; no median).
 *  heap.histogram     table: per heap, kind and power-of-two size bucket
 *                     [from, to] the count and bytes; non-empty rows only.
 *                     With HPSG (merged) data a counted allocation is a
 *                     run, which may hold several objects; with HPSO it is
 *                     one object (the "counts" column says which).
 *  heap.fragmentation table: per heap total free, largest free extent,
 *                     free runs, fragmentation % = 100 * (1 - largest /
 *                     free), heap bytes, unit size, pieces, rejected pieces,
 *                     updates and whether a bitmap is available.
 *  heap.bitmap        blob image/png of the default heap, built at HPEN
 *                     while someone watches it and, for a watcher that came
 *                     after that update, at the next tick (only with libpng), at
 *                     most once per heap.blob_interval_ms (later updates are
 *                     built by a one-shot timer) and only up to 32 M units.
 *  heap.map           table: the default heap's address ranges by kind, at
 *                     most HEAP_MAP_MAX_ROWS rows (see heap_map.c).
 *
 * Views exist only for enabled chunk types (HPIF -> summary; HPSG/HPSO ->
 * the rest), so disabling a type removes its views.
 */
#include "heap.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "bitmap_png.h"
#include "../common/lazyviews.h"

const char *heap_fmt_bytes(uint64_t bytes, char *buf, size_t len)
{
    static const char *const units[] = { "B", "KiB", "MiB", "GiB", "TiB" };
    double v = (double)bytes;
    unsigned u = 0;
    if (bytes < 1024) {
        snprintf(buf, len, "%" PRIu64 " B", bytes);
        return buf;
    }
    while (v >= 1024.0 && u < 4) {
        v /= 1024.0;
        u++;
    }
    snprintf(buf, len, "%.1f %s", v, units[u]);
    return buf;
}

static void fill_summary(heap_vm *hv);
static void heap_views_for_data(heap_vm *hv);
static void fill_segments(heap_vm *hv);
static void fill_histogram(heap_vm *hv);
static void fill_frag(heap_vm *hv);

/* vm_view_declare's make (1.6): somebody asks for one of @vm's views. The
 * views made here show what the plugin holds already (the last HPIF, the
 * last published segment update), as the views taken back showed it;
 * heap.map and heap.bitmap are built for a watcher (the tick, the next
 * update), as ever. */
static void make_views(ddm_plugin *self, ddm_vm *vm, const char *name, void *ud)
{
    heap_vm *hv = heap_vm_get(ud, vm);
    ddm_view *summary, *segments, *histogram, *frag;
    (void)self;
    (void)name;
    if (!hv)
        return;
    hv->ready = 1; /* the core makes views of READY VMs only */
    summary = hv->summary, segments = hv->segments, histogram = hv->histogram, frag = hv->frag;
    heap_views_ensure(hv); /* all of them, as at DDM_VM_READY before */
    if (!summary && hv->summary && hv->have_info)
        fill_summary(hv);
    for (size_t i = 0; i < hv->coll.n_heaps; i++) {
        if (!hv->coll.heaps[i]->have_current)
            continue; /* a published update to show */
        if (!segments && hv->segments)
            fill_segments(hv);
        if (!histogram && hv->histogram)
            fill_histogram(hv);
        if (!frag && hv->frag)
            fill_frag(hv);
        break;
    }
}

/* A VM's views, in one order: their names here, their pointers in unmake_view. */
static const char *const view_names[] = { "heap.summary", "heap.segments", "heap.histogram",
                                          "heap.fragmentation", "heap.map", "heap.bitmap" };

/* vm_view_unmake's (1.6): view @name of @vm has not been watched for the
 * core's linger: it goes; with the last of them the VM's state too unless
 * it still holds something (heap_vm_release_if_idle), so an idle VM
 * somebody looked at once costs again what it did before. */
static void unmake_view(ddm_plugin *self, ddm_vm *vm, const char *name, void *ud)
{
    heap_plugin *hp = ud;
    heap_vm *hv = hp->host->vm_get_data(self, vm);
    ddm_view **slot;
    if (!hv)
        return;
    ddm_view **const slots[] = { &hv->summary, &hv->segments, &hv->histogram,
                                 &hv->frag,    &hv->map,      &hv->bitmap };
    _Static_assert(LAZY_VIEWS_N(slots) == LAZY_VIEWS_N(view_names), "one slot a view name");
    slot = lazy_views_slot(view_names, slots, LAZY_VIEWS_N(slots), name);
    if (!slot || !*slot || (slot == &hv->bitmap && hv->bm_ticket))
        return; /* kept: the core asks again later */
    if (slot == &hv->bitmap) {
        heap_views_bitmap_cancel(hv);
        hv->blob_heap = 0, hv->blob_updates = 0; /* a new view gets the current bitmap */
    }
    if (slot == &hv->map)
        hv->map_heap = 0, hv->map_updates = 0; /* a new map view gets the current map */
    lazy_views_free(hp->host, slot);
    hv->views_made = 0; /* the next make makes those missing */
    heap_vm_release_if_idle(hv);
}

int heap_views_declare(heap_plugin *hp)
{
    const ddm_host *h = hp->host;
    const char *names[6];
    size_t n = 0;
    int rc;

    /* The names heap_views_create makes, under the same conditions. */
    if (h->chunk_enabled(hp->self, HEAP_CHUNK_HPIF))
        names[n++] = view_names[0];
    if (h->chunk_enabled(hp->self, HEAP_CHUNK_HPSG) || h->chunk_enabled(hp->self, HEAP_CHUNK_HPSO)) {
        names[n++] = view_names[1];
        names[n++] = view_names[2];
        names[n++] = view_names[3];
        names[n++] = view_names[4];
        if (bm_png_available())
            names[n++] = view_names[5];
    }
    rc = lazy_views_declare(h, hp->self, names, n, make_views, unmake_view, hp);
    if (rc < 0)
        return rc;
    hp->lazy_views = rc;
    return 0;
}

void heap_views_ensure(heap_vm *hv)
{
    if (!hv->views_made)
        heap_views_create(hv);
}

/* Data came (HPIF, a published update): the views to fill. Made on demand
 * (1.6), only those that exist: a view taken back is made again when
 * somebody asks for it, and its make fills it from what the plugin holds;
 * made here, every missing sibling of one watched view would come back at
 * each HPIF, be taken back a linger later, and so on for ever, each an
 * ADDED and a REMOVED. Before 1.6, all of them, as ever. */
static void heap_views_for_data(heap_vm *hv)
{
    if (!hv->hp->lazy_views)
        heap_views_ensure(hv);
}

void heap_views_create(heap_vm *hv)
{
    heap_plugin *hp = hv->hp;
    const ddm_host *h = hp->host;
    static const ddm_column summary_cols[] = {
        { "heap", DDM_VAL_INT, NULL },        { "max", DDM_VAL_INT, "B" },
        { "size", DDM_VAL_INT, "B" },         { "allocated", DDM_VAL_INT, "B" },
        { "free", DDM_VAL_INT, "B" },         { "used", DDM_VAL_DOUBLE, "%" },
        { "objects", DDM_VAL_INT, NULL },     { "reason", DDM_VAL_STR, NULL },
        { "timestamp", DDM_VAL_INT, "epoch_ms" },
    };
    static const ddm_column seg_cols[] = {
        { "heap", DDM_VAL_INT, NULL },        { "kind", DDM_VAL_STR, NULL },
        { "count", DDM_VAL_INT, NULL },       { "bytes", DDM_VAL_INT, "B" },
        { "smallest", DDM_VAL_INT, "B" },     { "largest", DDM_VAL_INT, "B" },
        { "average", DDM_VAL_INT, "B" },
    };
    static const ddm_column hist_cols[] = {
        { "heap", DDM_VAL_INT, NULL },        { "kind", DDM_VAL_STR, NULL },
        { "from", DDM_VAL_INT, "B" },         { "to", DDM_VAL_INT, "B" },
        { "count", DDM_VAL_INT, NULL },       { "bytes", DDM_VAL_INT, "B" },
        { "counts", DDM_VAL_STR, NULL },
    };
    static const ddm_column frag_cols[] = {
        { "heap", DDM_VAL_INT, NULL },          { "free", DDM_VAL_INT, "B" },
        { "largest_free", DDM_VAL_INT, "B" },   { "free_runs", DDM_VAL_INT, NULL },
        { "fragmentation", DDM_VAL_DOUBLE, "%" }, { "heap_bytes", DDM_VAL_INT, "B" },
        { "unit", DDM_VAL_INT, "B" },           { "pieces", DDM_VAL_INT, NULL },
        { "rejected", DDM_VAL_INT, NULL },      { "updates", DDM_VAL_INT, NULL },
        { "bitmap", DDM_VAL_BOOL, NULL },
    };
    static const ddm_column map_cols[] = {
        { "heap", DDM_VAL_INT, NULL },     { "addr", DDM_VAL_INT, "addr" },
        { "length", DDM_VAL_INT, "B" },    { "kind", DDM_VAL_STR, NULL },
        { "color", DDM_VAL_STR, NULL },
    };

    hv->views_made = 1;
    if (h->chunk_enabled(hp->self, HEAP_CHUNK_HPIF)) {
        if (!hv->summary && (hv->summary = h->view_new(hp->self, hv->vm, "heap.summary",
                                                         DDM_VIEW_TABLE, "Heap summary")))
            h->view_set_columns(hv->summary, summary_cols, sizeof summary_cols / sizeof summary_cols[0]);
    }
    if (h->chunk_enabled(hp->self, HEAP_CHUNK_HPSG) || h->chunk_enabled(hp->self, HEAP_CHUNK_HPSO)) {
        if (!hv->segments && (hv->segments = h->view_new(hp->self, hv->vm, "heap.segments",
                                                           DDM_VIEW_TABLE, "Heap segments by kind")))
            h->view_set_columns(hv->segments, seg_cols, sizeof seg_cols / sizeof seg_cols[0]);
        if (!hv->histogram && (hv->histogram = h->view_new(hp->self, hv->vm, "heap.histogram",
                                                             DDM_VIEW_TABLE, "Heap allocation sizes")))
            h->view_set_columns(hv->histogram, hist_cols, sizeof hist_cols / sizeof hist_cols[0]);
        if (!hv->frag && (hv->frag = h->view_new(hp->self, hv->vm, "heap.fragmentation",
                                                   DDM_VIEW_TABLE, "Heap fragmentation")))
            h->view_set_columns(hv->frag, frag_cols, sizeof frag_cols / sizeof frag_cols[0]);
        if (!hv->map && (hv->map = h->view_new(hp->self, hv->vm, "heap.map", DDM_VIEW_TABLE,
                                                 "Heap map")))
            h->view_set_columns(hv->map, map_cols, sizeof map_cols / sizeof map_cols[0]);
        if (bm_png_available() && !hv->bitmap)
            hv->bitmap = h->view_new(hp->self, hv->vm, "heap.bitmap", DDM_VIEW_BLOB, "Heap bitmap");
    }
}

/* heap.summary from hv->info. */
static void fill_summary(heap_vm *hv)
{
    const ddm_host *h = hv->hp->host;
    size_t i;

    h->view_begin(hv->summary);
    for (i = 0; i < hv->info->n; i++) {
        const hpif_entry *e = &hv->info->heaps[i];
        h->view_row(hv->summary);
        h->view_int(hv->summary, e->heap_id);
        h->view_int(hv->summary, e->max_bytes);
        h->view_int(hv->summary, e->size_bytes);
        h->view_int(hv->summary, e->allocated_bytes);
        h->view_int(hv->summary, (int64_t)e->size_bytes - (int64_t)e->allocated_bytes);
        h->view_double(hv->summary, e->size_bytes ? 100.0 * e->allocated_bytes / e->size_bytes : 0.0);
        h->view_int(hv->summary, e->allocated_objects);
        h->view_str(hv->summary, hpif_when_name(e->reason));
        h->view_int(hv->summary, e->timestamp_ms > INT64_MAX ? INT64_MAX : (int64_t)e->timestamp_ms);
    }
    h->view_commit(hv->summary);
}

void heap_views_summary(heap_vm *hv)
{
    heap_plugin *hp = hv->hp;
    const ddm_host *h = hp->host;
    uint64_t size = 0, alloc = 0;
    char head[64], sz[32];
    size_t i;

    heap_views_for_data(hv);

    for (i = 0; i < hv->info->n; i++) {
        size += hv->info->heaps[i].size_bytes;
        alloc += hv->info->heaps[i].allocated_bytes;
    }
    if (hv->summary)
        fill_summary(hv);
    if (hv->info->n) {
        snprintf(head, sizeof head, "%.0f%% of %s", size ? 100.0 * (double)alloc / (double)size : 0.0,
                 heap_fmt_bytes(size, sz, sizeof sz));
        h->vm_headline(hp->self, hv->vm, "heap", head);
        if (DDM_HOST_HAS(h, vm_headline_figures)) { /* the same figures, typed (1.2) */
            ddm_headline_figure figs[3] = {
                {"used_percent", DDM_VAL_DOUBLE, 0, size ? 100.0 * (double)alloc / (double)size : 0.0},
                {"used_bytes", DDM_VAL_INT, alloc > INT64_MAX ? INT64_MAX : (int64_t)alloc, 0},
                {"size_bytes", DDM_VAL_INT, size > INT64_MAX ? INT64_MAX : (int64_t)size, 0}};
            h->vm_headline_figures(hp->self, hv->vm, "heap", figs, 3);
        }
        heap_metrics_publish(hv);
    }
}

static int64_t clamp64(uint64_t v)
{
    return v > INT64_MAX ? INT64_MAX : (int64_t)v;
}

/* heap.segments from the published updates: per heap and kind. */
static void fill_segments(heap_vm *hv)
{
    const ddm_host *h = hv->hp->host;
    size_t i;
    unsigned c;

    h->view_begin(hv->segments);
    for (i = 0; i < hv->coll.n_heaps; i++) {
        const seg_heap *sh = hv->coll.heaps[i];
        if (!sh->have_current)
            continue;
        for (c = 0; c < SEG_NCLASS; c++) {
            const seg_class_stats *cs = &sh->current.stats.cls[c];
            h->view_row(hv->segments);
            h->view_int(hv->segments, sh->id);
            h->view_str(hv->segments, seg_class_name(c));
            h->view_int(hv->segments, clamp64(cs->count));
            h->view_int(hv->segments, clamp64(cs->bytes));
            h->view_int(hv->segments, cs->count ? clamp64(cs->min_bytes) : 0);
            h->view_int(hv->segments, clamp64(cs->max_bytes));
            h->view_int(hv->segments, cs->count ? clamp64(cs->bytes / cs->count) : 0);
        }
    }
    h->view_commit(hv->segments);
}

/* heap.histogram: per heap, kind and size bucket, non-empty rows only. */
static void fill_histogram(heap_vm *hv)
{
    const ddm_host *h = hv->hp->host;
    size_t i;
    unsigned c, b;

    h->view_begin(hv->histogram);
    for (i = 0; i < hv->coll.n_heaps; i++) {
        const seg_heap *sh = hv->coll.heaps[i];
        if (!sh->have_current)
            continue;
        for (c = 0; c < SEG_NCLASS; c++) {
            for (b = 0; b < SEG_NBUCKETS; b++) {
                uint64_t n = sh->current.stats.hist_count[c][b];
                if (!n)
                    continue;
                h->view_row(hv->histogram);
                h->view_int(hv->histogram, sh->id);
                h->view_str(hv->histogram, seg_class_name(c));
                h->view_int(hv->histogram, (int64_t)1 << b);
                h->view_int(hv->histogram, b + 1 < SEG_NBUCKETS ? ((int64_t)1 << (b + 1)) - 1 : INT64_MAX);
                h->view_int(hv->histogram, clamp64(n));
                h->view_int(hv->histogram, clamp64(sh->current.stats.hist_bytes[c][b]));
                h->view_str(hv->histogram, sh->current.objects_mode ? "objects" : "runs");
            }
        }
    }
    h->view_commit(hv->histogram);
}

/* heap.fragmentation: per heap. */
static void fill_frag(heap_vm *hv)
{
    const ddm_host *h = hv->hp->host;
    size_t i;

    h->view_begin(hv->frag);
    for (i = 0; i < hv->coll.n_heaps; i++) {
        const seg_heap *sh = hv->coll.heaps[i];
        const seg_stats *st = &sh->current.stats;
        uint64_t fr = st->cls[SEG_CLASS_FREE].bytes;
        if (!sh->have_current)
            continue;
        h->view_row(hv->frag);
        h->view_int(hv->frag, sh->id);
        h->view_int(hv->frag, clamp64(fr));
        h->view_int(hv->frag, clamp64(st->largest_free_bytes));
        h->view_int(hv->frag, clamp64(st->cls[SEG_CLASS_FREE].count));
        h->view_double(hv->frag, fr ? 100.0 * (1.0 - (double)st->largest_free_bytes / (double)fr) : 0.0);
        h->view_int(hv->frag, clamp64(st->total_bytes));
        h->view_int(hv->frag, sh->current.unit_size);
        h->view_int(hv->frag, sh->current.accepted);
        h->view_int(hv->frag, sh->current.rejected);
        h->view_int(hv->frag, clamp64(sh->updates));
        h->view_bool(hv->frag, sh->current.bitmap_complete && sh->current.n_pieces > 0);
    }
    h->view_commit(hv->frag);
}

void heap_views_segments(heap_vm *hv)
{
    heap_views_for_data(hv);
    if (hv->segments)
        fill_segments(hv);
    if (hv->histogram)
        fill_histogram(hv);
    if (hv->frag)
        fill_frag(hv);
}

/* Most pixels a heap.bitmap view is built for (the command has no limit). */
#define HEAP_BLOB_MAX_PIXELS ((uint64_t)32 << 20)

static uint64_t now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

static void build_bitmap(heap_vm *hv)
{
    heap_plugin *hp = hv->hp;
    const ddm_host *h = hp->host;
    const seg_heap *sh;
    uint8_t *png = NULL;
    size_t len = 0;
    bm_layout lay;
    char err[200], label[128];

    if (h->view_watchers(hv->bitmap) <= 0 || !bm_png_available())
        return; /* nobody looks, or libpng failed to load (logged once, below) */
    sh = heap_default_bitmap_heap(hv);
    if (!sh)
        return;
    hv->blob_last_ms = now_ms();
    hv->blob_heap = sh->id, hv->blob_updates = sh->updates;
    if (bm_layout_compute(&sh->current, hp->opts.bitmap_width, &lay) == 0 &&
        lay.pixels > HEAP_BLOB_MAX_PIXELS) {
        if (!hv->blob_too_big_logged++)
            h->log(hp->self, DDM_LOG_INFO,
                   "VM %s: heap %" PRIu32 " has %" PRIu64 " units, too many for the heap.bitmap view; use heap-bitmap",
                   heap_vm_label(hp, hv->vm, label, sizeof label), sh->id, lay.pixels);
        return;
    }
    if (bm_png_write_mem(&sh->current, hp->opts.bitmap_width, hp->opts.blob_max_bytes, &png, &len,
                         &lay, err, sizeof err) != 0) {
        h->log(hp->self, DDM_LOG_INFO, "VM %s: no heap.bitmap for heap %" PRIu32 ": %s",
               heap_vm_label(hp, hv->vm, label, sizeof label), sh->id, err);
        return;
    }
    h->view_begin(hv->bitmap);
    h->view_blob(hv->bitmap, "image/png", png, len);
    h->view_commit(hv->bitmap);
    free(png);
}

static int on_blob_timer(ddm_plugin *self, void *ud)
{
    heap_vm *hv = ud;
    (void)self;
    hv->blob_timer = 0;
    build_bitmap(hv);
    return 0;
}

void heap_views_bitmap(heap_vm *hv, int force)
{
    heap_plugin *hp = hv->hp;
    const seg_heap *sh;
    uint64_t now, since;

    if (!hv->bitmap || hp->host->view_watchers(hv->bitmap) <= 0 || hv->blob_timer)
        return;
    if (!force && (!(sh = heap_default_bitmap_heap(hv)) ||
                   (hv->blob_heap == sh->id && hv->blob_updates == sh->updates)))
        return; /* nothing to show, or this update is on the view already */
    now = now_ms();
    since = now - hv->blob_last_ms;
    if (hv->blob_last_ms && since < hp->opts.blob_interval_ms) {
        hv->blob_timer = hp->host->timer_add(hp->self, (unsigned)(hp->opts.blob_interval_ms - since),
                                             on_blob_timer, hv, NULL);
        return;
    }
    build_bitmap(hv);
}

void heap_views_bitmap_cancel(heap_vm *hv)
{
    if (hv->blob_timer) {
        hv->hp->host->timer_remove(hv->hp->self, hv->blob_timer);
        hv->blob_timer = 0;
    }
}
