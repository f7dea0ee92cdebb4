/* SPDX-License-Identifier: Apache-2.0
 *
 * nh_views: the nativeheap plugin's per-VM views.
 *
 *  nativeheap.segments     table (NHSG): per heap free and native bytes and
 *                          counts, largest free extent, total, pieces,
 *                          rejected pieces, updates.
 *  nativeheap.summary      record (NHGT): total memory, records,
 *                          allocations, allocated bytes, zygote bytes,
 *                          header version, pointer size, backtrace depth,
 *                          malloc debugging on/off, ungrouped records (past
 *                          the NH_GROUPS_MAX groups a table keeps, or past
 *                          the NH_GROUP_RECORDS_MAX records grouped).
 *  nativeheap.allocations  table (NHGT): grouped by (size, zygote): size,
 *                          zygote, count, total bytes, records; biggest
 *                          total first, at most nativeheap.max_rows rows.
 *  nativeheap.backtraces   table (NHGT): grouped by the whole backtrace:
 *                          its top nativeheap.frames frames as
 *                          "lib.so+0xOFF" (or a hex address when no mapping
 *                          holds it), count, total bytes, records; biggest
 *                          total first, at most max_rows rows.
 *
 * Headline "native": "12.3 MiB", the bytes malloc has handed out (NHGT's
 * allocations, size x count) once an NHGT came; before that the native
 * bytes of the last NHSG update (all heaps). Figures: bytes (and
 * allocations from NHGT). None until either came.
 *
 * Totals saturate at INT64_MAX instead of wrapping on absurd input. The
 * records are read once, grouped as they go in bounded tables (nh_group.h):
 * memory does not grow with the record count.
 */
#include "nativeheap.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nh_group.h"
#include "nhmaps.h"
#include "../common/lazyviews.h"

static uint64_t sat_add(uint64_t a, uint64_t b)
{
    return a + b < a ? UINT64_MAX : a + b;
}

static uint64_t sat_mul(uint64_t a, uint64_t b)
{
    return b && a > UINT64_MAX / b ? UINT64_MAX : a * b;
}

static int64_t clamp64(uint64_t v)
{
    return v > INT64_MAX ? INT64_MAX : (int64_t)v;
}

/* The "native" headline: @bytes as "12.3 MiB"; @allocations < 0: none (NHSG). */
static void set_headline(nh_vm *nv, uint64_t bytes, int64_t allocations)
{
    static const char *const units[] = { "B", "KiB", "MiB", "GiB", "TiB" };
    const ddm_host *h = nv->np->host;
    double v = (double)bytes;
    unsigned u = 0;
    char text[32];
    while (v >= 1024.0 && u < 4) {
        v /= 1024.0;
        u++;
    }
    if (u == 0)
        snprintf(text, sizeof text, "%llu B", (unsigned long long)bytes);
    else
        snprintf(text, sizeof text, "%.1f %s", v, units[u]);
    h->vm_headline(nv->np->self, nv->vm, "native", text);
    if (DDM_HOST_HAS(h, vm_headline_figures)) { /* the same figures, typed (1.2) */
        ddm_headline_figure figs[2] = {
            { "bytes", DDM_VAL_INT, clamp64(bytes), 0 },
            { "allocations", DDM_VAL_INT, allocations, 0 } };
        h->vm_headline_figures(nv->np->self, nv->vm, "native", figs, allocations >= 0 ? 2 : 1);
    }
    nh_metrics_publish(nv, bytes, allocations);
}

/* vm_view_declare's make (1.6): somebody asks for one of @vm's views. A
 * segments view made again shows the last update the plugin holds; the
 * NHGT views wait for the next NHGT (the plugin keeps no copy of one),
 * which a watch asks for at once. */
static void make_views(ddm_plugin *self, ddm_vm *vm, const char *name, void *ud)
{
    nh_vm *nv = nh_vm_get(ud, vm);
    (void)self;
    (void)name;
    if (!nv)
        return;
    nv->ready = 1; /* the core makes views of READY VMs only */
    nh_views_make(nv);
}

void nh_views_make(nh_vm *nv)
{
    ddm_view *segments = nv->segments;
    nh_views_ensure(nv); /* all of them, as at DDM_VM_READY before */
    for (size_t i = 0; !segments && nv->segments && nv->coll && i < nv->coll->n_heaps; i++)
        if (nv->coll->heaps[i]->have_current) {
            nh_views_segments(nv);
            break;
        }
}

/* A VM's views, in one order: their names here, their pointers in unmake_view. */
static const char *const view_names[] = { "nativeheap.segments", "nativeheap.summary",
                                          "nativeheap.allocations", "nativeheap.backtraces" };

/* vm_view_unmake's (1.6): view @name of @vm has not been watched for the
 * core's linger: it goes; with the last of them the VM's state too unless
 * it still holds something (nh_vm_release_if_idle). */
static void unmake_view(ddm_plugin *self, ddm_vm *vm, const char *name, void *ud)
{
    nh_plugin *np = ud;
    nh_vm *nv = np->host->vm_get_data(self, vm);
    if (!nv)
        return;
    ddm_view **const slots[] = { &nv->segments, &nv->summary, &nv->allocations, &nv->backtraces };
    _Static_assert(LAZY_VIEWS_N(slots) == LAZY_VIEWS_N(view_names), "one slot a view name");
    if (!lazy_views_free(np->host, lazy_views_slot(view_names, slots, LAZY_VIEWS_N(slots), name)))
        return;
    nv->views_made = 0; /* the next make makes those missing */
    nh_vm_release_if_idle(nv);
}

int nh_views_declare(nh_plugin *np)
{
    const ddm_host *h = np->host;
    size_t first = h->chunk_enabled(np->self, NH_CHUNK_NHSG) ? 0 : 1;
    size_t last = h->chunk_enabled(np->self, NH_CHUNK_NHGT) ? 4 : 1;
    int rc;

    /* The names nh_views_create makes, under the same conditions. */
    rc = lazy_views_declare(h, np->self, view_names + first, last > first ? last - first : 0,
                            make_views, unmake_view, np);
    if (rc < 0)
        return rc;
    np->lazy_views = rc;
    return 0;
}

void nh_views_ensure(nh_vm *nv)
{
    if (!nv->views_made)
        nh_views_create(nv);
}

/* Data came (NHSG's update, an NHGT): the views to fill. Made on demand
 * (1.6), only those that exist: one taken back is made again when somebody
 * asks for it (its make fills segments from the update held; the NHGT
 * views wait for the next NHGT); made here, every missing sibling of one
 * watched view would come back at each update and be taken back a linger
 * later, for ever. Before 1.6, all of them, as ever. */
static void nh_views_for_data(nh_vm *nv)
{
    if (!nv->np->lazy_views)
        nh_views_ensure(nv);
}

void nh_views_create(nh_vm *nv)
{
    nh_plugin *np = nv->np;
    const ddm_host *h = np->host;
    static const ddm_column seg_cols[] = {
        { "heap", DDM_VAL_INT, NULL },        { "free", DDM_VAL_INT, "B" },
        { "free_count", DDM_VAL_INT, NULL },  { "native", DDM_VAL_INT, "B" },
        { "native_count", DDM_VAL_INT, NULL }, { "other", DDM_VAL_INT, "B" },
        { "largest_free", DDM_VAL_INT, "B" }, { "total", DDM_VAL_INT, "B" },
        { "pieces", DDM_VAL_INT, NULL },      { "rejected", DDM_VAL_INT, NULL },
        { "updates", DDM_VAL_INT, NULL },
    };
    static const ddm_column alloc_cols[] = {
        { "size", DDM_VAL_INT, "B" },      { "zygote", DDM_VAL_BOOL, NULL },
        { "count", DDM_VAL_INT, NULL },    { "total", DDM_VAL_INT, "B" },
        { "records", DDM_VAL_INT, NULL },
    };
    static const ddm_column bt_cols[] = {
        { "frames", DDM_VAL_STR, NULL },   { "count", DDM_VAL_INT, NULL },
        { "total", DDM_VAL_INT, "B" },     { "records", DDM_VAL_INT, NULL },
    };

    nv->views_made = 1;
    if (h->chunk_enabled(np->self, NH_CHUNK_NHSG)) {
        if (!nv->segments && (nv->segments = h->view_new(np->self, nv->vm, "nativeheap.segments",
                                                           DDM_VIEW_TABLE, "Native heap segments")))
            h->view_set_columns(nv->segments, seg_cols, sizeof seg_cols / sizeof seg_cols[0]);
    }
    if (h->chunk_enabled(np->self, NH_CHUNK_NHGT)) {
        if (!nv->summary)
            nv->summary = h->view_new(np->self, nv->vm, "nativeheap.summary", DDM_VIEW_RECORD,
                                      "Native heap summary");
        if (!nv->allocations &&
            (nv->allocations = h->view_new(np->self, nv->vm, "nativeheap.allocations",
                                           DDM_VIEW_TABLE, "Native allocations by size")))
            h->view_set_columns(nv->allocations, alloc_cols, sizeof alloc_cols / sizeof alloc_cols[0]);
        if (!nv->backtraces &&
            (nv->backtraces = h->view_new(np->self, nv->vm, "nativeheap.backtraces",
                                          DDM_VIEW_TABLE, "Native allocations by backtrace")))
            h->view_set_columns(nv->backtraces, bt_cols, sizeof bt_cols / sizeof bt_cols[0]);
    }
}

void nh_views_segments(nh_vm *nv)
{
    const ddm_host *h = nv->np->host;
    size_t i;
    unsigned c;
    uint64_t native = 0;
    int any = 0;

    nh_views_for_data(nv);
    size_t n_heaps = nv->coll ? nv->coll->n_heaps : 0;
    for (i = 0; i < n_heaps; i++)
        if (nv->coll->heaps[i]->have_current) {
            native = sat_add(native, nv->coll->heaps[i]->current.stats.cls[1 + SEG_KIND_NATIVE].bytes);
            any = 1;
        }
    if (any && !nv->headline_nhgt) /* NHGT's figure is the better one */
        set_headline(nv, native, -1);
    if (!nv->segments)
        return;
    h->view_begin(nv->segments);
    for (i = 0; i < n_heaps; i++) {
        const seg_heap *sh = nv->coll->heaps[i];
        const seg_stats *st = &sh->current.stats;
        uint64_t other = 0;
        if (!sh->have_current)
            continue;
        for (c = 1; c < SEG_NCLASS; c++)
            if (c != 1 + SEG_KIND_NATIVE)
                other += st->cls[c].bytes;
        h->view_row(nv->segments);
        h->view_int(nv->segments, sh->id);
        h->view_int(nv->segments, clamp64(st->cls[SEG_CLASS_FREE].bytes));
        h->view_int(nv->segments, clamp64(st->cls[SEG_CLASS_FREE].count));
        h->view_int(nv->segments, clamp64(st->cls[1 + SEG_KIND_NATIVE].bytes));
        h->view_int(nv->segments, clamp64(st->cls[1 + SEG_KIND_NATIVE].count));
        h->view_int(nv->segments, clamp64(other));
        h->view_int(nv->segments, clamp64(st->largest_free_bytes));
        h->view_int(nv->segments, clamp64(st->total_bytes));
        h->view_int(nv->segments, sh->current.accepted);
        h->view_int(nv->segments, sh->current.rejected);
        h->view_int(nv->segments, clamp64(sh->updates));
    }
    h->view_commit(nv->segments);
}

/* "lib+0x1 <- lib+0x2 ..." of the first @max non-zero frames. */
static void format_frames(const nhgt_info *in, const nhgt_record *r, const nh_maps *maps,
                          unsigned max, char *buf, size_t len)
{
    size_t k, pos = 0;
    unsigned shown = 0;
    buf[0] = '\0';
    for (k = 0; k < in->backtrace_size && shown < max && pos + 1 < len; k++) {
        char one[256];
        uint64_t a = nhgt_frame(in, r, k);
        int n;
        if (!a)
            continue;
        nh_maps_symbolize(maps, a, one, sizeof one);
        n = snprintf(buf + pos, len - pos, "%s%s", shown ? " <- " : "", one);
        if (n < 0)
            break;
        pos += (size_t)n < len - pos ? (size_t)n : len - pos - 1;
        shown++;
    }
    if (!shown)
        snprintf(buf, len, "(no backtrace)");
}

int nh_views_nhgt(nh_vm *nv, const nhgt_info *in, uint64_t *allocations, uint64_t *bytes)
{
    nh_plugin *np = nv->np;
    const ddm_host *h = np->host;
    nh_grouper by_size, by_bt;
    nh_maps maps;
    uint64_t allocs = 0, total = 0, zyg = 0;
    size_t i, budget = np->group_records_max ? np->group_records_max : NH_GROUP_RECORDS_MAX;
    uint64_t unbudgeted = in->n_records > budget ? in->n_records - budget : 0;
    int rc = 0;

    nh_views_for_data(nv);
    if (nh_maps_parse(&maps, in->maps, (size_t)in->map_size) != 0)
        return -ENOMEM;
    /* one pass: totals of every record, and both groupings (of the first
     * @budget records: the main loop's time) in bounded tables */
    nh_grouper_init(&by_size, 0, 0, np->group_max);
    nh_grouper_init(&by_bt, 1, (size_t)in->backtrace_size * in->ptr_size, np->group_max);
    for (i = 0; i < in->n_records && rc == 0; i++) {
        nhgt_record r;
        uint64_t t;
        nhgt_record_at(in, i, &r);
        t = sat_mul(r.size, r.count);
        allocs = sat_add(allocs, r.count);
        total = sat_add(total, t);
        if (r.zygote)
            zyg = sat_add(zyg, t);
        if (i >= budget)
            continue;
        if (nv->allocations)
            rc = nh_grouper_add(&by_size, &r, t);
        if (rc == 0 && nv->backtraces)
            rc = nh_grouper_add(&by_bt, &r, t);
    }
    if (rc != 0) {
        nh_grouper_free(&by_size);
        nh_grouper_free(&by_bt);
        nh_maps_free(&maps);
        return rc;
    }
    *allocations = allocs;
    *bytes = total;
    nv->headline_nhgt = 1;
    set_headline(nv, total, clamp64(allocs));

    if (nv->summary) {
        h->view_begin(nv->summary);
        h->view_field_int(nv->summary, "total_memory", clamp64(in->total_memory));
        h->view_field_int(nv->summary, "records", (int64_t)in->n_records);
        h->view_field_int(nv->summary, "allocations", clamp64(allocs));
        h->view_field_int(nv->summary, "allocated", clamp64(total));
        h->view_field_int(nv->summary, "zygote", clamp64(zyg));
        h->view_field_int(nv->summary, "header_version", in->version);
        h->view_field_int(nv->summary, "pointer_size", in->ptr_size);
        h->view_field_int(nv->summary, "backtrace_depth", clamp64(in->backtrace_size));
        h->view_field_int(nv->summary, "mappings", (int64_t)maps.n);
        h->view_field_bool(nv->summary, "malloc_debug", in->alloc_info_size != 0);
        h->view_field_int(nv->summary, "ungrouped", /* records past either cap */
                          clamp64(unbudgeted + (by_size.ungrouped > by_bt.ungrouped
                                                    ? by_size.ungrouped : by_bt.ungrouped)));
        h->view_commit(nv->summary);
    }

    if (nv->backtraces) {
        char frames[2048];
        nh_grouper_top_by_total(&by_bt, np->opts.max_rows);
        h->view_begin(nv->backtraces);
        for (i = 0; i < by_bt.n && i < np->opts.max_rows; i++) {
            const nh_group *g = &by_bt.g[i];
            nhgt_record r;
            r.frames = g->frames;
            format_frames(in, &r, &maps, np->opts.frames, frames, sizeof frames);
            h->view_row(nv->backtraces);
            h->view_str(nv->backtraces, frames);
            h->view_int(nv->backtraces, clamp64(g->count));
            h->view_int(nv->backtraces, clamp64(g->total));
            h->view_int(nv->backtraces, clamp64(g->records));
        }
        h->view_commit(nv->backtraces);
    }
    if (nv->allocations) {
        nh_grouper_top_by_total(&by_size, np->opts.max_rows);
        h->view_begin(nv->allocations);
        for (i = 0; i < by_size.n && i < np->opts.max_rows; i++) {
            const nh_group *g = &by_size.g[i];
            h->view_row(nv->allocations);
            h->view_int(nv->allocations, clamp64(g->size));
            h->view_bool(nv->allocations, g->zygote);
            h->view_int(nv->allocations, clamp64(g->count));
            h->view_int(nv->allocations, clamp64(g->total));
            h->view_int(nv->allocations, clamp64(g->records));
        }
        h->view_commit(nv->allocations);
    }
    np->last_group_ops = by_size.ops + by_bt.ops;
    nh_grouper_free(&by_size);
    nh_grouper_free(&by_bt);
    nh_maps_free(&maps);
    return 0;
}
