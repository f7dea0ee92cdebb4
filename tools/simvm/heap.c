/* SPDX-License-Identifier: Apache-2.0
 *
 * Heap generator and segment encoder (see heap.h). The generator lays out
 * clusters of live objects separated by free gaps whose size follows the
 * generation's fill target, with a few big holes (fragmentation) and some
 * large arrays (runs over 256 units, so partial runs appear on the wire).
 */
#include "heap.h"

#include <stdlib.h>
#include <string.h>

#include "rng.h"

static const char *const kind_names[SIM_KIND_COUNT] = {
    "object", "class", "array1", "array2", "array4", "array8", "unknown", "native",
};

const char *sim_kind_name(unsigned kind)
{
    return kind < SIM_KIND_COUNT ? kind_names[kind] : "?";
}

void sim_heap_init(SimHeap *h, uint32_t heap_id, uint64_t seed, uint32_t size_bytes,
                   uint32_t max_bytes, int native)
{
    SimRng r;

    memset(h, 0, sizeof *h);
    h->seed = seed;
    h->heap_id = heap_id;
    h->native = native ? 1 : 0;
    if (max_bytes < size_bytes)
        max_bytes = size_bytes;
    h->max_units = max_bytes / SIM_HEAP_UNIT;
    h->size_units = size_bytes / SIM_HEAP_UNIT;
    if (h->size_units < 64)
        h->size_units = 64;
    if (h->max_units < h->size_units)
        h->max_units = h->size_units;
    sim_rng_seed(&r, seed);
    /* page-aligned, below 4 GiB, like the low bits ART keeps */
    h->base_addr = native ? 0x70000000u + (sim_rng_below(&r, 0x400) << 16)
                          : 0x12c00000u + (sim_rng_below(&r, 0x100) << 20);
    h->fill_permille = (uint16_t)sim_rng_range(&r, 500, 800);
}

void sim_heap_gc(SimHeap *h)
{
    SimRng r;
    uint32_t min_units = h->max_units / 8, delta;

    sim_rng_seed(&r, sim_rng_mix(h->seed, 0x6763ULL + h->generation));
    h->generation++;
    /* the footprint breathes by up to 12% either way */
    delta = sim_rng_below(&r, h->size_units / 8 + 1);
    if (sim_rng_chance(&r, 0.5))
        h->size_units += delta;
    else
        h->size_units = h->size_units > delta ? h->size_units - delta : h->size_units;
    if (min_units < 64)
        min_units = 64;
    if (h->size_units < min_units)
        h->size_units = min_units;
    if (h->size_units > h->max_units)
        h->size_units = h->max_units;
    h->fill_permille = (uint16_t)sim_rng_range(&r, 450, 850);
    h->stats_valid = 0;
}

/* Draw one live object's kind and size (units). */
static void draw_object(SimRng *r, int native, unsigned *kind, uint32_t *units)
{
    uint32_t k = sim_rng_below(r, 1000);

    if (native) {
        *kind = SIM_KIND_NATIVE;
        *units = sim_rng_chance(r, 0.01) ? sim_rng_range(r, 100, 4000) : sim_rng_range(r, 1, 32);
        return;
    }
    /* most objects are small; a few large arrays (bitmaps, buffers) and
     * class objects span more than 256 units and so become partial runs */
    if (k < 550) {
        *kind = SIM_KIND_OBJECT;
        *units = sim_rng_range(r, 2, 6);
    } else if (k < 565) {
        *kind = SIM_KIND_CLASS;
        *units = sim_rng_range(r, 16, 300);
    } else if (k < 685) {
        *kind = SIM_KIND_ARRAY1;
        *units = sim_rng_chance(r, 0.003) ? sim_rng_range(r, 100, 5000) : sim_rng_range(r, 2, 16);
    } else if (k < 805) {
        *kind = SIM_KIND_ARRAY2;
        *units = sim_rng_chance(r, 0.002) ? sim_rng_range(r, 300, 1200) : sim_rng_range(r, 2, 24);
    } else if (k < 905) {
        *kind = SIM_KIND_ARRAY4;
        *units = sim_rng_chance(r, 0.003) ? sim_rng_range(r, 257, 2048) : sim_rng_range(r, 2, 16);
    } else if (k < 955) {
        *kind = SIM_KIND_ARRAY8;
        *units = sim_rng_range(r, 2, 8);
    } else {
        *kind = SIM_KIND_UNKNOWN;
        *units = sim_rng_range(r, 1, 8);
    }
}

void sim_heap_walk(const SimHeap *h, SimRunFn fn, void *ud)
{
    SimRng r;
    uint32_t pos = 0, size = h->size_units;
    double fill = h->fill_permille / 1000.0;

    sim_rng_seed(&r, sim_rng_mix(h->seed, 0x77616c6bULL ^ ((uint64_t)h->generation << 20)));
    while (pos < size) {
        uint32_t objects = sim_rng_range(&r, 1, 40), cluster = 0, i, gap;
        double mean;

        /* a cluster of live objects (never empty, so free runs never touch) */
        for (i = 0; i < objects && pos < size; i++) {
            unsigned kind;
            uint32_t units;
            draw_object(&r, h->native, &kind, &units);
            if (units > size - pos)
                units = size - pos;
            fn(SIM_SEG_STATE(1, kind), units, ud);
            pos += units;
            cluster += units;
        }
        if (pos >= size)
            break;
        /* then a free gap sized to reach the fill target on average */
        mean = (double)cluster * (1.0 - fill) / fill;
        if (sim_rng_chance(&r, 0.02))
            mean *= 20.0; /* a big hole: fragmentation */
        gap = (uint32_t)(mean * (0.1 + 1.8 * sim_rng_unit(&r)));
        if (gap < 1)
            gap = 1;
        if (gap > SIM_RUN_MAX_UNITS)
            gap = SIM_RUN_MAX_UNITS;
        if (gap > size - pos)
            gap = size - pos;
        fn(SIM_SEG_STATE(0, 0), gap, ud);
        pos += gap;
    }
}

void sim_seg_stats_add_run(SimSegStats *s, uint8_t state, uint32_t units)
{
    uint64_t bytes = (uint64_t)units * SIM_HEAP_UNIT;

    s->total_units += units;
    if (SIM_SEG_SOLIDITY(state) == 0) {
        s->free_bytes += bytes;
        s->free_count++;
        if (bytes > s->largest_free)
            s->largest_free = bytes;
    } else {
        s->bytes[SIM_SEG_KIND(state)] += bytes;
        s->count[SIM_SEG_KIND(state)]++;
    }
}

static void stats_cb(uint8_t state, uint32_t units, void *ud)
{
    sim_seg_stats_add_run(ud, state, units);
}

const SimSegStats *sim_heap_stats(SimHeap *h)
{
    if (!h->stats_valid) {
        memset(&h->stats, 0, sizeof h->stats);
        sim_heap_walk(h, stats_cb, &h->stats);
        h->stats_valid = 1;
    }
    return &h->stats;
}

size_t sim_seg_put_run(uint8_t *out, uint8_t state, uint32_t units)
{
    size_t n = 0;

    state &= (uint8_t)~SIM_SEG_PARTIAL;
    while (units > 256) {
        out[n++] = (uint8_t)(state | SIM_SEG_PARTIAL);
        out[n++] = 255;
        units -= 256;
    }
    out[n++] = state;
    out[n++] = (uint8_t)(units - 1);
    return n;
}

typedef struct Encoder {
    const SimHeap *heap;
    uint8_t *buf;
    size_t max, len;
    uint32_t piece_start, piece_units, cursor, pieces;
    SimPieceFn fn;
    void *ud;
    SimSegStats *stats;
} Encoder;

static void flush_piece(Encoder *e)
{
    uint32_t addr;

    if (e->piece_units == 0)
        return;
    addr = e->heap->base_addr + e->piece_start * SIM_HEAP_UNIT; /* wraps like ART's (u4) cast */
    ddm_put_u4(e->buf, e->heap->heap_id);
    e->buf[4] = SIM_HEAP_UNIT;
    ddm_put_u4(e->buf + 5, addr);
    ddm_put_u4(e->buf + 9, 0);
    ddm_put_u4(e->buf + 13, e->piece_units);
    e->fn(e->buf, e->len, e->ud);
    e->pieces++;
    e->piece_start = e->cursor;
    e->piece_units = 0;
    e->len = SIM_SEG_HEADER_LEN;
}

static void encode_cb(uint8_t state, uint32_t units, void *ud)
{
    Encoder *e = ud;
    size_t need = 2u * sim_seg_run_pairs(units);

    if (e->len + need > e->max)
        flush_piece(e);
    e->len += sim_seg_put_run(e->buf + e->len, state, units);
    e->piece_units += units;
    e->cursor += units;
    if (e->stats)
        sim_seg_stats_add_run(e->stats, state, units);
}

uint32_t sim_heap_encode_segments(const SimHeap *h, size_t max_chunk, SimPieceFn fn, void *ud,
                                  SimSegStats *stats)
{
    Encoder e;

    if (max_chunk < SIM_SEG_MIN_CHUNK)
        max_chunk = SIM_SEG_MIN_CHUNK;
    if (max_chunk > SIM_SEG_ART_MAX_CHUNK)
        max_chunk = SIM_SEG_ART_MAX_CHUNK;
    memset(&e, 0, sizeof e);
    e.heap = h;
    e.max = max_chunk;
    e.buf = malloc(max_chunk);
    if (!e.buf)
        return 0;
    e.len = SIM_SEG_HEADER_LEN;
    e.fn = fn;
    e.ud = ud;
    e.stats = stats;
    if (stats)
        memset(stats, 0, sizeof *stats);
    sim_heap_walk(h, encode_cb, &e);
    flush_piece(&e);
    free(e.buf);
    if (stats)
        stats->pieces = e.pieces;
    return e.pieces;
}

void sim_heap_write_hpif(ddm_writer *w, SimHeap *h, uint64_t timestamp_ms, uint8_t reason)
{
    const SimSegStats *s = sim_heap_stats(h);
    uint64_t alloc = 0, objects = 0, max = (uint64_t)h->max_units * SIM_HEAP_UNIT,
             size = (uint64_t)h->size_units * SIM_HEAP_UNIT;
    unsigned k;

    for (k = 0; k < SIM_KIND_COUNT; k++) {
        alloc += s->bytes[k];
        objects += s->count[k];
    }
    ddm_write_u4(w, h->heap_id);
    ddm_write_u8(w, timestamp_ms);
    ddm_write_u1(w, reason);
    ddm_write_u4(w, max > UINT32_MAX ? UINT32_MAX : (uint32_t)max);
    ddm_write_u4(w, size > UINT32_MAX ? UINT32_MAX : (uint32_t)size);
    ddm_write_u4(w, alloc > UINT32_MAX ? UINT32_MAX : (uint32_t)alloc);
    ddm_write_u4(w, objects > UINT32_MAX ? UINT32_MAX : (uint32_t)objects);
}
