/* SPDX-License-Identifier: Apache-2.0
 *
 * segcollect: HPST/pieces/HPEN state per heap; see segcollect.h.
 */
#include "segcollect.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

static void gen_reset(seg_collector *c, seg_gen *g)
{
    size_t i;
    for (i = 0; i < g->n_pieces; i++)
        free(g->pieces[i]);
    free(g->pieces);
    c->kept_bytes -= g->kept_bytes;
    memset(g, 0, sizeof(*g));
    seg_stats_reset(&g->stats);
    g->bitmap_complete = 1;
}

void seg_collector_init(seg_collector *c, int keep_pieces, size_t keep_max_bytes)
{
    memset(c, 0, sizeof(*c));
    c->keep_pieces = keep_pieces;
    c->keep_max_bytes = keep_max_bytes;
}

void seg_collector_clear(seg_collector *c)
{
    size_t i;
    for (i = 0; i < c->n_heaps; i++) {
        gen_reset(c, &c->heaps[i]->pending);
        gen_reset(c, &c->heaps[i]->current);
        free(c->heaps[i]);
    }
    c->n_heaps = 0;
    c->kept_bytes = 0;
    free(c->scratch);
    c->scratch = NULL;
}

static seg_heap *find_heap(const seg_collector *c, uint32_t id)
{
    size_t i;
    for (i = 0; i < c->n_heaps; i++)
        if (c->heaps[i]->id == id)
            return c->heaps[i];
    return NULL;
}

const seg_heap *seg_collector_heap(const seg_collector *c, uint32_t heap_id)
{
    return find_heap(c, heap_id);
}

/* Find or add heap @id (kept sorted by id); NULL when full or out of memory. */
static seg_heap *get_heap(seg_collector *c, uint32_t id, int *err)
{
    seg_heap *h = find_heap(c, id);
    size_t pos;
    if (h)
        return h;
    if (c->n_heaps >= SEG_MAX_HEAPS) {
        *err = -ENOSPC;
        return NULL;
    }
    h = calloc(1, sizeof(*h));
    if (!h) {
        *err = -ENOMEM;
        return NULL;
    }
    h->id = id;
    seg_stats_reset(&h->pending.stats);
    seg_stats_reset(&h->current.stats);
    h->pending.bitmap_complete = h->current.bitmap_complete = 1;
    for (pos = c->n_heaps; pos > 0 && c->heaps[pos - 1]->id > id; pos--)
        c->heaps[pos] = c->heaps[pos - 1];
    c->heaps[pos] = h;
    c->n_heaps++;
    return h;
}

int seg_collector_start(seg_collector *c, uint32_t heap_id)
{
    int err = 0, dropped;
    seg_heap *h = get_heap(c, heap_id, &err);
    if (!h)
        return err;
    dropped = h->collecting && (h->pending.accepted || h->pending.rejected);
    gen_reset(c, &h->pending);
    h->collecting = 1;
    return dropped ? 1 : 0;
}

size_t seg_collector_abandon(seg_collector *c)
{
    size_t i, n = 0;
    for (i = 0; i < c->n_heaps; i++) {
        if (!c->heaps[i]->collecting)
            continue;
        gen_reset(c, &c->heaps[i]->pending);
        c->heaps[i]->collecting = 0;
        n++;
    }
    return n;
}

/* Keep a copy of an accepted piece in @g; 0, or -1 when over a cap. */
static int keep_piece(seg_collector *c, seg_gen *g, const seg_piece *p)
{
    seg_kept *k;
    size_t need = sizeof(*k) + p->runs_len;
    if (!g->bitmap_complete)
        return -1;
    if (need > c->keep_max_bytes - c->kept_bytes || c->kept_bytes > c->keep_max_bytes ||
        g->stats.total_units > SEG_MAX_BITMAP_UNITS)
        return -1;
    if (g->n_pieces == g->cap_pieces) {
        size_t ncap = g->cap_pieces ? g->cap_pieces * 2 : 16;
        seg_kept **np = realloc(g->pieces, ncap * sizeof(*np));
        if (!np)
            return -1;
        g->pieces = np;
        g->cap_pieces = ncap;
    }
    k = malloc(need);
    if (!k)
        return -1;
    k->addr = (uint64_t)p->start + p->offset;
    k->units = p->length_units;
    k->unit_size = p->unit_size;
    k->runs_len = p->runs_len;
    if (p->runs_len)
        memcpy(k->runs, p->runs, p->runs_len);
    g->pieces[g->n_pieces++] = k;
    g->kept_bytes += need;
    c->kept_bytes += need;
    return 0;
}

/* Drop the kept pieces of @g: its bitmap can no longer be complete. */
static void drop_kept(seg_collector *c, seg_gen *g)
{
    size_t i;
    for (i = 0; i < g->n_pieces; i++)
        free(g->pieces[i]);
    free(g->pieces);
    g->pieces = NULL;
    g->n_pieces = g->cap_pieces = 0;
    c->kept_bytes -= g->kept_bytes;
    g->kept_bytes = 0;
    g->bitmap_complete = 0;
}

int seg_collector_piece(seg_collector *c, const uint8_t *data, size_t len, int objects,
                        seg_piece_report *rep)
{
    seg_heap *h;
    seg_gen *g;
    int err = 0;

    memset(rep, 0, sizeof(*rep));
    rep->error = seg_piece_parse(data, len, &rep->piece);
    if (rep->error != SEG_OK)
        return -EINVAL;
    h = get_heap(c, rep->piece.heap_id, &err);
    if (!h)
        return err;
    if (!h->collecting) {
        gen_reset(c, &h->pending);
        h->collecting = 1;
        rep->implicit_start = 1;
    }
    g = &h->pending;
    if (c->scratch) {
        seg_stats_reset_used(c->scratch); /* only the previous piece's buckets */
    } else {
        if (!(c->scratch = malloc(sizeof(*c->scratch))))
            return -ENOMEM;
        seg_stats_reset(c->scratch);
    }
    rep->error = seg_piece_decode(&rep->piece, c->scratch, &rep->at);
    if (rep->error != SEG_OK) {
        g->rejected++;
        return -EINVAL;
    }
    seg_stats_add(&g->stats, c->scratch);
    if (!g->accepted)
        g->unit_size = rep->piece.unit_size;
    g->accepted++;
    if (objects)
        g->objects_mode = 1;
    if (c->keep_pieces && keep_piece(c, g, &rep->piece) != 0) {
        if (g->bitmap_complete)
            rep->not_kept = 1;
        drop_kept(c, g);
    }
    return 0;
}

static int cmp_kept(const void *a, const void *b)
{
    const seg_kept *x = *(const seg_kept *const *)a;
    const seg_kept *y = *(const seg_kept *const *)b;
    return x->addr < y->addr ? -1 : x->addr > y->addr;
}

int seg_collector_end(seg_collector *c, uint32_t heap_id, const seg_heap **out)
{
    seg_heap *h = find_heap(c, heap_id);
    if (!h || !h->collecting)
        return -ENOENT;
    gen_reset(c, &h->current);
    h->current = h->pending;
    if (!c->keep_pieces)
        h->current.bitmap_complete = 0;
    if (h->current.n_pieces > 1)
        qsort(h->current.pieces, h->current.n_pieces, sizeof(*h->current.pieces), cmp_kept);
    memset(&h->pending, 0, sizeof(h->pending));
    seg_stats_reset(&h->pending.stats);
    h->pending.bitmap_complete = 1;
    h->collecting = 0;
    h->have_current = 1;
    h->updates++;
    if (out)
        *out = h;
    return 0;
}
