/* SPDX-License-Identifier: Apache-2.0
 *
 * Fuzz target: the /proc/self/maps reader of an NHGT reply
 * (plugins/nativeheap/nhmaps.c) and the symbolizer on addresses in and
 * around each mapping.
 *
 * Input: the maps text. Invariants: at most NH_MAPS_MAX entries, sorted by
 * start, each with start < end and a non-empty name inside the text; a
 * symbolized address is a NUL-terminated string within the buffer, even a
 * small one.
 */
#include <string.h>

#include "plugins/nativeheap/nhmaps.h"
#include "tests/fuzz/fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *text = (const char *)data;
    nh_maps m;

    memset(&m, 0, sizeof m);
    if (nh_maps_parse(&m, text, size) != 0)
        return 0;
    FUZZ_CHECK(m.n <= NH_MAPS_MAX);
    for (size_t i = 0; i < m.n; i++) {
        const nh_map_entry *e = &m.e[i];
        uint64_t probes[4] = {e->start, e->end - 1, e->end, e->start - 1};
        FUZZ_CHECK(e->start < e->end);
        FUZZ_CHECK(e->name_len > 0 && e->name >= text && e->name + e->name_len <= text + size);
        if (i)
            FUZZ_CHECK(m.e[i - 1].start <= e->start);
        if (i < 64) {
            for (unsigned k = 0; k < 4; k++) {
                char big[512], tiny[8];
                nh_maps_symbolize(&m, probes[k], big, sizeof big);
                nh_maps_symbolize(&m, probes[k], tiny, sizeof tiny);
                FUZZ_CHECK(memchr(big, 0, sizeof big) && memchr(tiny, 0, sizeof tiny));
            }
        }
    }
    nh_maps_free(&m);
    return 0;
}
