/* SPDX-License-Identifier: Apache-2.0
 *
 * Fuzz target: the heap segment piece parser and run-length decoder
 * (plugins/common/segdecode.c) on one HPSG/HPSO/NHSG chunk payload, as the
 * collector decodes it: into scratch statistics, added only on success.
 *
 * Invariants: a piece is accepted only if its runs cover exactly its
 * declared units; the runs decoded never exceed the run pairs present;
 * the per-class totals add up to the piece's totals (units and bytes);
 * every allocation lies between its class's min and max and in its size
 * bucket; a rejected piece says where it stopped, inside the runs; and
 * the fast decoder agrees with the simple reference decoder
 * (tests/unit/plugins/segdecode_ref.h) on the verdict, the stop point and
 * every statistic.
 */
#include <string.h>

#include "plugins/common/segdecode.h"
#include "tests/fuzz/fuzz.h"
#include "tests/unit/plugins/segdecode_ref.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    seg_piece p;
    seg_stats st, total;
    seg_error_at at = {0, 0};
    seg_error e = seg_piece_parse(data, size, &p);
    uint64_t units = 0, bytes = 0, count = 0;

    FUZZ_CHECK(seg_error_str(e) != NULL);
    if (e != SEG_OK) {
        FUZZ_CHECK(size < SEG_PIECE_HEADER_LEN || e == SEG_ERR_UNIT_ZERO || e == SEG_ERR_ODD_RUNS);
        return 0;
    }
    FUZZ_CHECK(p.runs == data + SEG_PIECE_HEADER_LEN && p.runs_len == size - SEG_PIECE_HEADER_LEN);
    seg_stats_reset(&st);
    e = seg_piece_decode(&p, &st, &at);
    {
        seg_stats ref;
        size_t ref_off = 0;
        uint64_t ref_units = 0;
        seg_stats_reset(&ref);
        FUZZ_CHECK(ref_decode(&p, &ref, &ref_off, &ref_units) == e);
        if (e != SEG_OK)
            FUZZ_CHECK(at.run_offset == ref_off && at.units_seen == ref_units);
        else
            FUZZ_CHECK(ref_stats_equal(&st, &ref));
    }
    if (e != SEG_OK) {
        FUZZ_CHECK(at.run_offset <= p.runs_len);
        FUZZ_CHECK(at.units_seen <= (uint64_t)256 * (p.runs_len / 2));
        return 0;
    }
    FUZZ_CHECK(st.total_units == p.length_units);
    FUZZ_CHECK(st.total_bytes == st.total_units * p.unit_size);
    FUZZ_CHECK(st.runs == p.runs_len / 2);
    FUZZ_CHECK(st.largest_free_bytes <= st.total_bytes);
    for (unsigned c = 0; c < SEG_NCLASS; c++) {
        const seg_class_stats *cs = &st.cls[c];
        uint64_t hc = 0, hb = 0;
        FUZZ_CHECK(seg_class_name(c) != NULL);
        units += cs->units;
        bytes += cs->bytes;
        count += cs->count;
        FUZZ_CHECK(cs->bytes == cs->units * p.unit_size);
        if (cs->count) {
            FUZZ_CHECK(cs->min_bytes <= cs->max_bytes && cs->max_bytes <= cs->bytes);
            FUZZ_CHECK(cs->min_bytes * cs->count <= cs->bytes);
        }
        for (unsigned b = 0; b < SEG_NBUCKETS; b++) {
            hc += st.hist_count[c][b];
            hb += st.hist_bytes[c][b];
            if (st.hist_count[c][b])
                FUZZ_CHECK(b >= seg_bucket(cs->min_bytes) && b <= seg_bucket(cs->max_bytes));
        }
        FUZZ_CHECK(hc == cs->count && hb == cs->bytes);
    }
    FUZZ_CHECK(units == st.total_units && bytes == st.total_bytes);
    FUZZ_CHECK(count <= st.runs);

    /* adding to empty totals gives the same totals */
    seg_stats_reset(&total);
    seg_stats_add(&total, &st);
    FUZZ_CHECK(total.total_units == st.total_units && total.runs == st.runs);
    return 0;
}
