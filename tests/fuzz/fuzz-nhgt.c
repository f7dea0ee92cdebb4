/* SPDX-License-Identifier: Apache-2.0
 *
 * Fuzz target: the NHGT native heap dump (plugins/nativeheap/nhgt.c) and
 * what the plugin does with it: parse its maps text (nhmaps.c), walk the
 * records and symbolize their frames, group every record by size and by
 * backtrace in bounded tables (nh_group.c, cap lowered to 16), keep the 4
 * biggest.
 *
 * Input: an NHGT payload. Invariants: the maps text and the records lie
 * inside the payload; records x stride fit; a record's declared fields fit
 * its stride; the frames of a record are inside the payload; a failure
 * gives a reason; the groups never pass their cap, and grouped plus
 * ungrouped records add up to the records; the groups kept are in
 * descending order of total.
 */
#include <errno.h>
#include <string.h>

#include "plugins/nativeheap/nh_group.h"
#include "plugins/nativeheap/nhgt.h"
#include "plugins/nativeheap/nhmaps.h"
#include "tests/fuzz/fuzz.h"

#define WALK_MAX 4096 /* records and frames looked at per input (time, not safety) */

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    nhgt_info info;
    char err[256] = "";
    nh_maps maps;
    size_t walked = 0;

    memset(&info, 0, sizeof info);
    if (nhgt_parse(data, size, &info, err, sizeof err) != 0) {
        FUZZ_CHECK(err[0] != 0);
        return 0;
    }
    FUZZ_CHECK(info.version == 1 || info.version == 2);
    FUZZ_CHECK(info.ptr_size == 4 || info.ptr_size == 8);
    FUZZ_CHECK(info.backtrace_size <= NHGT_MAX_BACKTRACE);
    FUZZ_CHECK(info.map_size <= size);
    FUZZ_CHECK(!info.map_size || ((const uint8_t *)info.maps >= data &&
                                  (const uint8_t *)info.maps + info.map_size <= data + size));
    if (info.n_records) {
        FUZZ_CHECK(info.stride >= (2 + info.backtrace_size) * info.ptr_size);
        FUZZ_CHECK(info.records >= data);
        FUZZ_CHECK((uint64_t)info.n_records * info.stride <= (uint64_t)(data + size - info.records));
    }

    memset(&maps, 0, sizeof maps);
    if (nh_maps_parse(&maps, info.maps ? info.maps : "", (size_t)info.map_size) != 0)
        return 0;
    for (size_t i = 0; i < info.n_records && walked < WALK_MAX; i++) {
        nhgt_record rec;
        nhgt_record_at(&info, i, &rec);
        FUZZ_CHECK(rec.frames >= data && rec.frames + info.backtrace_size * info.ptr_size <= data + size);
        for (size_t k = 0; k < info.backtrace_size && walked < WALK_MAX; k++, walked++) {
            char sym[256];
            uint64_t pc = nhgt_frame(&info, &rec, k);
            nh_maps_symbolize(&maps, pc, sym, sizeof sym);
            FUZZ_CHECK(memchr(sym, 0, sizeof sym) != NULL);
        }
        walked++;
    }
    for (int by_bt = 0; by_bt < 2; by_bt++) {
        nh_grouper g;
        uint64_t records = 0;
        nh_grouper_init(&g, by_bt, (size_t)info.backtrace_size * info.ptr_size, 16);
        for (size_t i = 0; i < info.n_records && i < 4 * WALK_MAX; i++) {
            nhgt_record rec;
            nhgt_record_at(&info, i, &rec);
            FUZZ_CHECK(nh_grouper_add(&g, &rec, rec.size) == 0);
            records++;
        }
        FUZZ_CHECK(g.n <= 16);
        for (size_t i = 0; i < g.n; i++)
            records -= g.g[i].records;
        FUZZ_CHECK(records == g.ungrouped);
        {
            uint64_t totals[16]; /* the groups kept are the biggest, in order */
            size_t n_before = g.n;
            for (size_t i = 0; i < g.n; i++)
                totals[i] = g.g[i].total;
            for (size_t i = 1; i < n_before; i++) /* insertion sort, descending */
                for (size_t j = i; j > 0 && totals[j - 1] < totals[j]; j--) {
                    uint64_t x = totals[j];
                    totals[j] = totals[j - 1];
                    totals[j - 1] = x;
                }
            nh_grouper_top_by_total(&g, 4);
            FUZZ_CHECK(g.n == (n_before < 4 ? n_before : 4));
            for (size_t i = 0; i < g.n; i++)
                FUZZ_CHECK(g.g[i].total == totals[i]);
        }
        nh_grouper_free(&g);
    }
    nh_maps_free(&maps);
    return 0;
}
