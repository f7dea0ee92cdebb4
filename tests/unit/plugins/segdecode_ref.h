/* SPDX-License-Identifier: Apache-2.0
 *
 * segdecode_ref: a deliberately simple reference decoder for heap segment
 * pieces, written from the rule in doc/protocol.md ("Heap segments"), not
 * from plugins/common/segdecode.c. The unit test and the fuzz target
 * compare the fast decoder against it: the same verdict, the same stop
 * offset on a rejected piece, and field for field the same statistics on
 * an accepted one. Slow on purpose: it first lists the allocations, then
 * accounts them one by one, with the size bucket found by halving.
 *
 * Header-only (static functions) so that both test programs can include
 * it without another library.
 */
#ifndef DDM_TESTS_SEGDECODE_REF_H
#define DDM_TESTS_SEGDECODE_REF_H

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include "plugins/common/segdecode.h"

static unsigned ref_bucket(uint64_t bytes)
{
    unsigned b = 0;
    while (bytes > 1) {
        bytes /= 2;
        b++;
    }
    return b < SEG_NBUCKETS ? b : SEG_NBUCKETS - 1;
}

static unsigned ref_class(uint8_t state)
{
    unsigned solidity = state & 7, kind = (state >> 3) & 7;
    return solidity == 0 ? SEG_CLASS_FREE : 1 + kind;
}

typedef struct ref_alloc {
    uint8_t state;      /* without the P bit */
    uint64_t units;
} ref_alloc;

/*
 * Decode @p into @st (added to what is there). Returns the verdict; on a
 * rejected piece @st is untouched and *@stop_offset is the byte offset in
 * the runs of the pair where it stopped (for SEG_ERR_ODD_RUNS, the odd
 * byte; for SEG_ERR_RUNS_SHORT, the end of the runs), *@stop_units the
 * units decoded before it.
 */
static seg_error ref_decode(const seg_piece *p, seg_stats *st, size_t *stop_offset,
                            uint64_t *stop_units)
{
    size_t npairs = p->runs_len / 2, i, n = 0;
    ref_alloc *allocs;
    uint64_t seen = 0, extent = 0;
    int open = 0;

    *stop_offset = 0;
    *stop_units = 0;
    if (p->unit_size == 0)
        return SEG_ERR_UNIT_ZERO;
    if (p->runs_len % 2 == 1) {
        *stop_offset = p->runs_len - 1;
        return SEG_ERR_ODD_RUNS;
    }
    allocs = calloc(npairs ? npairs : 1, sizeof *allocs);
    if (!allocs)
        abort();
    for (i = 0; i < npairs; i++) {
        uint8_t s = p->runs[2 * i];
        uint64_t units = (uint64_t)p->runs[2 * i + 1] + 1;
        if (seen + units > p->length_units) {
            *stop_offset = 2 * i;
            *stop_units = seen;
            free(allocs);
            return SEG_ERR_RUNS_LONG;
        }
        if (open && (s & 0x7f) != allocs[n - 1].state) {
            *stop_offset = 2 * i;
            *stop_units = seen;
            free(allocs);
            return SEG_ERR_PARTIAL_CHANGE;
        }
        if (open) {
            allocs[n - 1].units += units;
        } else {
            allocs[n].state = s & 0x7f;
            allocs[n].units = units;
            n++;
        }
        open = (s & 0x80) != 0;
        seen += units;
    }
    if (seen != p->length_units) {
        *stop_offset = p->runs_len;
        *stop_units = seen;
        free(allocs);
        return SEG_ERR_RUNS_SHORT;
    }
    for (i = 0; i < n; i++) {
        unsigned c = ref_class(allocs[i].state);
        uint64_t bytes = allocs[i].units * p->unit_size;
        seg_class_stats *cs = &st->cls[c];
        cs->count += 1;
        cs->units += allocs[i].units;
        cs->bytes += bytes;
        if (bytes < cs->min_bytes)
            cs->min_bytes = bytes;
        if (bytes > cs->max_bytes)
            cs->max_bytes = bytes;
        st->hist_count[c][ref_bucket(bytes)] += 1;
        st->hist_bytes[c][ref_bucket(bytes)] += bytes;
        if (c == SEG_CLASS_FREE)
            extent += bytes;
        else
            extent = 0;
        if (extent > st->largest_free_bytes)
            st->largest_free_bytes = extent;
    }
    st->total_units += seen;
    st->total_bytes += seen * p->unit_size;
    st->runs += npairs;
    st->pieces += 1;
    free(allocs);
    return SEG_OK;
}

/* 1 if @a and @b hold the same statistics, field by field. */
static int ref_stats_equal(const seg_stats *a, const seg_stats *b)
{
    unsigned c, k;
    for (c = 0; c < SEG_NCLASS; c++) {
        if (a->cls[c].count != b->cls[c].count || a->cls[c].units != b->cls[c].units ||
            a->cls[c].bytes != b->cls[c].bytes || a->cls[c].min_bytes != b->cls[c].min_bytes ||
            a->cls[c].max_bytes != b->cls[c].max_bytes)
            return 0;
        for (k = 0; k < SEG_NBUCKETS; k++)
            if (a->hist_count[c][k] != b->hist_count[c][k] ||
                a->hist_bytes[c][k] != b->hist_bytes[c][k])
                return 0;
    }
    return a->total_units == b->total_units && a->total_bytes == b->total_bytes &&
           a->largest_free_bytes == b->largest_free_bytes && a->runs == b->runs &&
           a->pieces == b->pieces;
}

#endif /* DDM_TESTS_SEGDECODE_REF_H */
