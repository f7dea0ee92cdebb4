/* SPDX-License-Identifier: Apache-2.0
 *
 * Fuzz target: the HPIF heap info decoder (plugins/heap/heapinfo.c).
 *
 * Input: an HPIF payload. Invariants: the entries read fit in the bytes
 * present (4 + 29 each) and in HPIF_MAX_HEAPS; "complete" (0) only when
 * every declared heap was read; reason names exist for any value.
 */
#include <errno.h>

#include "plugins/heap/heapinfo.h"
#include "tests/fuzz/fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    hpif_data d;
    int rc = hpif_parse(data, size, &d);

    if (rc == -EINVAL) {
        FUZZ_CHECK(size < 4);
        return 0;
    }
    FUZZ_CHECK(rc == 0 || rc == 1);
    FUZZ_CHECK(d.n <= HPIF_MAX_HEAPS && d.n <= d.declared);
    FUZZ_CHECK(4 + d.n * HPIF_ENTRY_LEN <= size);
    FUZZ_CHECK((rc == 0) == (d.n == d.declared));
    for (size_t i = 0; i < d.n; i++)
        FUZZ_CHECK(hpif_when_name(d.heaps[i].reason) != NULL);
    return 0;
}
