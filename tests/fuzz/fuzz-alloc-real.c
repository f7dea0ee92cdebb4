/* SPDX-License-Identifier: Apache-2.0
 *
 * Fuzz target: the REAL decoder (plugins/alloc/real.c), then what the alloc
 * plugin does with a decoded table (plugins/alloc/group.c): rows with Java
 * names and site texts, grouped by class, site and thread.
 *
 * Input: a REAL payload. Invariants: nothing decoded is more than the
 * chunk's own length can hold (entries, frames, names); every index points
 * into its table; every entry's frames are in the frame table; a failure
 * gives a reason and leaves the table zeroed; the groups of each kind
 * account for every row and every byte.
 */
#include <errno.h>
#include <string.h>

#include "plugins/alloc/alloc.h"
#include "tests/fuzz/fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    alloc_table t;
    alloc_rows rows;
    char why[256];
    uint64_t total_bytes = 0;
    int rc = alloc_parse_real(data, size, &t, why, sizeof why);

    if (rc != 0) {
        static const alloc_table zero;
        FUZZ_CHECK(rc == -EBADMSG || rc == -ENOMEM);
        FUZZ_CHECK(rc != -EBADMSG || why[0] != 0);
        FUZZ_CHECK(memcmp(&t, &zero, sizeof t) == 0);
        return 0;
    }
    FUZZ_CHECK(t.header_len >= ALLOC_REAL_HEADER_MIN && t.entry_len >= ALLOC_REAL_ENTRY_MIN &&
               t.frame_len >= ALLOC_REAL_FRAME_MIN);
    FUZZ_CHECK(t.header_len + (uint64_t)t.n * t.entry_len + (uint64_t)t.n_frames * t.frame_len +
                   4ull * (t.n_classes + t.n_methods + t.n_files) <=
               size);
    for (uint32_t i = 0; i < t.n; i++) {
        const alloc_entry *e = &t.e[i];
        FUZZ_CHECK(e->cls < t.n_classes);
        FUZZ_CHECK((uint64_t)e->first + e->depth <= t.n_frames);
        for (unsigned d = 0; d < e->depth; d++) {
            const alloc_frame *f = &t.f[e->first + d];
            FUZZ_CHECK(f->cls < t.n_classes && f->method < t.n_methods && f->file < t.n_files);
        }
        total_bytes += e->size;
    }
    for (uint32_t i = 0; i < t.n_classes; i++)
        FUZZ_CHECK(t.classes[i] != NULL);

    if (alloc_rows_build(&t, &rows) == 0) {
        FUZZ_CHECK(rows.n == t.n);
        for (size_t i = 0; i < rows.n; i++)
            FUZZ_CHECK(rows.r[i].cls != NULL);
        for (alloc_by by = ALLOC_BY_CLASS; by <= ALLOC_BY_THREAD; by++) {
            alloc_group *g = NULL;
            long n = alloc_group_rows(&rows, by, &g);
            uint64_t count = 0, bytes = 0;
            FUZZ_CHECK(n >= 0 && (size_t)n <= rows.n);
            for (long i = 0; i < n; i++) {
                count += g[i].count;
                bytes += g[i].bytes;
                if (i)
                    FUZZ_CHECK(g[i - 1].bytes >= g[i].bytes);
            }
            FUZZ_CHECK(count == rows.n && bytes == total_bytes);
            free(g);
        }
        alloc_rows_clear(&rows);
    }
    alloc_real_clear(&t);
    return 0;
}
