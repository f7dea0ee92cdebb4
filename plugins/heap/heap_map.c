/* SPDX-License-Identifier: Apache-2.0
 *
 * heap_map: the heap.map view, the default heap's address ranges by kind,
 * for a terminal to draw as DDMS drew its heap bitmap (tui/blockmap.c
 * draws a table with an "addr" column, a "B" length and a "kind").
 *
 *  heap.map  table: heap, addr (unit "addr"), length (B), kind (the PNG
 *            legend's names, seg_class_name) and color ("#rrggbb", the
 *            PNG palette's colour of that kind, bitmap.h), in address
 *            order. Runs of one kind that touch are merged into one row.
 *            Bounded: when the merged ranges would be more than
 *            HEAP_MAP_MAX_ROWS, the heap's span is cut into that many
 *            equal granules, each given the kind with most bytes in it,
 *            and touching granules of one kind merged (so a row is then
 *            approximate: it covers whole granules). Gaps between pieces
 *            (no heap there) have no rows.
 *
 * Built from the same published update as heap.bitmap (the default heap,
 * heap_default_bitmap_heap), and only while someone watches the view: at
 * HPEN, or at the watch tick when a watcher came after the update.
 */
#include "heap.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bitmap.h"

typedef void (*range_fn)(void *ud, uint64_t addr, uint64_t len, unsigned cls);

/* Feed every run of @g (pieces in address order) to @fn, runs of one class
 * that touch merged. Returns the number of ranges fed. */
static size_t merged_ranges(const seg_gen *g, range_fn fn, void *ud)
{
    uint64_t r_addr = 0, r_len = 0;
    unsigned r_cls = 0;
    size_t n = 0, i, j;

    for (i = 0; i < g->n_pieces; i++) {
        const seg_kept *k = g->pieces[i];
        uint64_t addr = k->addr;
        for (j = 0; j + 1 < k->runs_len; j += 2) {
            unsigned cls = seg_state_class(k->runs[j]);
            uint64_t len = ((uint64_t)k->runs[j + 1] + 1) * k->unit_size;
            if (r_len && cls == r_cls && addr == r_addr + r_len) {
                r_len += len;
            } else {
                if (r_len && fn)
                    fn(ud, r_addr, r_len, r_cls);
                if (r_len)
                    n++;
                r_addr = addr;
                r_len = len;
                r_cls = cls;
            }
            addr += len;
        }
    }
    if (r_len && fn)
        fn(ud, r_addr, r_len, r_cls);
    return n + (r_len ? 1 : 0);
}

typedef struct granules {
    uint64_t lo, size;     /* first address, bytes per granule */
    size_t n;
    uint64_t *bytes;       /* n * SEG_NCLASS */
} granules;

static void add_to_granules(void *ud, uint64_t addr, uint64_t len, unsigned cls)
{
    granules *gr = ud;
    uint64_t a = addr - gr->lo, end = a + len;
    size_t i;
    for (i = (size_t)(a / gr->size); i < gr->n && (uint64_t)i * gr->size < end; i++) {
        uint64_t from = a > (uint64_t)i * gr->size ? a : (uint64_t)i * gr->size;
        uint64_t to = end < (uint64_t)(i + 1) * gr->size ? end : (uint64_t)(i + 1) * gr->size;
        gr->bytes[i * SEG_NCLASS + cls] += to - from;
    }
}

typedef struct emit_ctx {
    const ddm_host *h;
    ddm_view *v;
    uint32_t heap_id;
} emit_ctx;

static void emit_row(void *ud, uint64_t addr, uint64_t len, unsigned cls)
{
    emit_ctx *e = ud;
    const uint8_t *rgb = bm_palette[cls == SEG_CLASS_FREE ? BM_PIX_FREE : BM_PIX_KIND(cls - 1)];
    char color[8];
    snprintf(color, sizeof color, "#%02x%02x%02x", rgb[0], rgb[1], rgb[2]);
    e->h->view_row(e->v);
    e->h->view_int(e->v, e->heap_id);
    e->h->view_int(e->v, addr > INT64_MAX ? INT64_MAX : (int64_t)addr);
    e->h->view_int(e->v, len > INT64_MAX ? INT64_MAX : (int64_t)len);
    e->h->view_str(e->v, seg_class_name(cls));
    e->h->view_str(e->v, color);
}

/* The coarse form: at most HEAP_MAP_MAX_ROWS granules over [lo, hi).
 * Returns -1 when out of memory. */
static int coarse_rows(const seg_gen *g, emit_ctx *e)
{
    uint64_t lo = UINT64_MAX, hi = 0, cur_addr = 0, cur_len = 0;
    unsigned cur_cls = 0;
    granules gr;
    size_t i;

    for (i = 0; i < g->n_pieces; i++) {
        const seg_kept *k = g->pieces[i];
        uint64_t end = k->addr + k->units * k->unit_size;
        if (k->addr < lo)
            lo = k->addr;
        if (end > hi)
            hi = end;
    }
    if (hi <= lo)
        return 0;
    gr.lo = lo;
    gr.size = (hi - lo + HEAP_MAP_MAX_ROWS - 1) / HEAP_MAP_MAX_ROWS;
    if (gr.size == 0)
        gr.size = 1;
    gr.n = (size_t)((hi - lo + gr.size - 1) / gr.size);
    gr.bytes = calloc(gr.n * SEG_NCLASS, sizeof(uint64_t));
    if (!gr.bytes)
        return -1;
    merged_ranges(g, add_to_granules, &gr);
    for (i = 0; i < gr.n; i++) {
        uint64_t best = 0;
        unsigned c, cls = 0;
        for (c = 0; c < SEG_NCLASS; c++)
            if (gr.bytes[i * SEG_NCLASS + c] > best) {
                best = gr.bytes[i * SEG_NCLASS + c];
                cls = c;
            }
        if (best == 0) { /* no heap here */
            if (cur_len)
                emit_row(e, cur_addr, cur_len, cur_cls);
            cur_len = 0;
            continue;
        }
        uint64_t addr = lo + (uint64_t)i * gr.size;
        uint64_t len = addr + gr.size > hi ? hi - addr : gr.size;
        if (cur_len && cls == cur_cls) {
            cur_len += len;
            continue;
        }
        if (cur_len)
            emit_row(e, cur_addr, cur_len, cur_cls);
        cur_addr = addr;
        cur_len = len;
        cur_cls = cls;
    }
    if (cur_len)
        emit_row(e, cur_addr, cur_len, cur_cls);
    free(gr.bytes);
    return 0;
}

void heap_views_map(heap_vm *hv, int force)
{
    heap_plugin *hp = hv->hp;
    const ddm_host *h = hp->host;
    const seg_heap *sh;
    emit_ctx e;

    if (!hv->map || h->view_watchers(hv->map) <= 0)
        return;
    sh = heap_default_bitmap_heap(hv);
    if (!sh)
        return;
    if (!force && hv->map_heap == sh->id && hv->map_updates == sh->updates)
        return; /* this update is on the view already */
    e.h = h;
    e.v = hv->map;
    e.heap_id = sh->id;
    h->view_begin(hv->map);
    if (merged_ranges(&sh->current, NULL, NULL) <= HEAP_MAP_MAX_ROWS)
        merged_ranges(&sh->current, emit_row, &e);
    else if (coarse_rows(&sh->current, &e) != 0)
        h->log(hp->self, DDM_LOG_WARNING, "out of memory for the heap.map view");
    h->view_commit(hv->map);
    hv->map_heap = sh->id;
    hv->map_updates = sh->updates;
}
