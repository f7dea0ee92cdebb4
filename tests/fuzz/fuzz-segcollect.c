/* SPDX-License-Identifier: Apache-2.0
 *
 * Fuzz target: the heap segment collector (plugins/common/segcollect.c)
 * driven by a sequence of chunks as the heap and nativeheap plugins see
 * them: HPST/NHST (start), HPSG/HPSO/NHSG (pieces), HPEN/NHEN (publish),
 * for several heaps at once, with pieces kept for the bitmap under a cap.
 *
 * Input: u1 cap selector (kept bytes cap = 32 << (k % 12)), then records:
 * u1 op (low 2 bits: 0 start, 1 piece, 2 objects piece, 3 end; high 6
 * bits: the heap id of a start or end), and for a piece u1 length then
 * that many payload bytes. Invariants: the kept bytes never pass the cap
 * and add up over heaps; at most SEG_MAX_HEAPS heaps; a published update's
 * pieces are sorted by address and count no more than its accepted ones,
 * all of them when the bitmap is complete; an update's statistics grow by
 * exactly what the simple reference decoder (tests/unit/plugins/
 * segdecode_ref.h) makes of each accepted piece, and not at all for a
 * rejected one.
 */
#include <errno.h>
#include <string.h>

#include "plugins/common/segcollect.h"
#include "tests/fuzz/fuzz.h"
#include "tests/unit/plugins/segdecode_ref.h"

static size_t gen_kept(const seg_gen *g)
{
    size_t sum = 0;
    FUZZ_CHECK(g->n_pieces <= g->accepted);
    if (g->bitmap_complete)
        FUZZ_CHECK(g->n_pieces == g->accepted);
    for (size_t i = 0; i < g->n_pieces; i++) {
        const seg_kept *k = g->pieces[i];
        FUZZ_CHECK(k->unit_size > 0 && k->runs_len % 2 == 0);
        sum += sizeof *k + k->runs_len;
    }
    return sum;
}

static void check_published(const seg_heap *h)
{
    const seg_gen *g = &h->current;
    FUZZ_CHECK(h->have_current);
    for (size_t i = 1; i < g->n_pieces; i++)
        FUZZ_CHECK(g->pieces[i - 1]->addr <= g->pieces[i]->addr);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    FuzzIn in = fuzz_in(data, size);
    size_t cap = (size_t)32 << (fuzz_u8(&in) % 12);
    seg_collector c;

    seg_collector_init(&c, 1, cap);
    while (in.n > 0) {
        uint8_t op = fuzz_u8(&in);
        uint32_t heap = op >> 2;
        const seg_heap *out = NULL;
        int rc;

        switch (op & 3) {
        case 0:
            rc = seg_collector_start(&c, heap);
            FUZZ_CHECK(rc == 0 || rc == 1 || rc == -ENOSPC);
            break;
        case 1:
        case 2: {
            const uint8_t *p;
            size_t n = fuzz_take(&in, fuzz_u8(&in), &p);
            uint8_t *piece = fuzz_dup(p, n);
            seg_piece_report rep;
            seg_piece parsed;
            const seg_heap *before;
            /* the update's statistics before the piece (empty if it starts one) */
            seg_stats *want = malloc(sizeof *want);
            FUZZ_CHECK(want != NULL);
            seg_stats_reset(want);
            if (seg_piece_parse(piece, n, &parsed) == SEG_OK &&
                (before = seg_collector_heap(&c, parsed.heap_id)) && before->collecting)
                *want = before->pending.stats;
            rc = seg_collector_piece(&c, piece, n, (op & 3) == 2, &rep);
            FUZZ_CHECK(rc == 0 || rc == -EINVAL || rc == -ENOSPC);
            FUZZ_CHECK((rc == -EINVAL) == (rep.error != SEG_OK));
            if (rc != -ENOSPC && rep.error != SEG_ERR_SHORT_HEADER && rep.error != SEG_ERR_UNIT_ZERO) {
                /* what the reference decoder adds; a rejected piece adds nothing */
                const seg_heap *h = seg_collector_heap(&c, rep.piece.heap_id);
                size_t off = 0;
                uint64_t seen = 0;
                FUZZ_CHECK(h != NULL && h->collecting);
                FUZZ_CHECK(ref_decode(&rep.piece, want, &off, &seen) == rep.error);
                FUZZ_CHECK(ref_stats_equal(&h->pending.stats, want));
            }
            free(want);
            free(piece);
            break;
        }
        default:
            rc = seg_collector_end(&c, heap, &out);
            FUZZ_CHECK(rc == 0 || rc == -ENOENT);
            if (rc == 0)
                check_published(out);
            break;
        }

        FUZZ_CHECK(c.n_heaps <= SEG_MAX_HEAPS);
        FUZZ_CHECK(c.kept_bytes <= c.keep_max_bytes);
        {
            size_t kept = 0;
            for (size_t i = 0; i < c.n_heaps; i++) {
                const seg_heap *h = c.heaps[i];
                if (i)
                    FUZZ_CHECK(c.heaps[i - 1]->id < h->id);
                FUZZ_CHECK(seg_collector_heap(&c, h->id) == h);
                kept += h->pending.kept_bytes + h->current.kept_bytes;
                FUZZ_CHECK(gen_kept(&h->pending) == h->pending.kept_bytes);
                FUZZ_CHECK(gen_kept(&h->current) == h->current.kept_bytes);
            }
            FUZZ_CHECK(kept == c.kept_bytes);
        }
    }
    seg_collector_clear(&c);
    return 0;
}
