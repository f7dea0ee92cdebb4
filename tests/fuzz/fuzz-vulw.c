/* SPDX-License-Identifier: Apache-2.0
 *
 * Fuzz target: the VULW window-list decoder (plugins/viewdebug/vudecode.c).
 *
 * Input: a VULW payload. Invariants: the windows fit in the payload (each
 * costs at least its u4 length) and in VD_MAX_WINDOWS; every name is a
 * string; a failure gives a reason and leaves nothing allocated.
 */
#include <string.h>

#include "plugins/viewdebug/vudecode.h"
#include "tests/fuzz/fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    vd_windows w;
    char why[256] = "";

    if (vd_parse_vulw(data, size, &w, why, sizeof why) != 0) {
        FUZZ_CHECK(why[0] != 0);
        FUZZ_CHECK(w.names == NULL && w.n == 0);
        return 0;
    }
    FUZZ_CHECK(w.n <= VD_MAX_WINDOWS);
    FUZZ_CHECK(4 + (uint64_t)w.n * 4 <= size);
    for (size_t i = 0; i < w.n; i++)
        FUZZ_CHECK(w.names[i] != NULL && strlen(w.names[i]) <= 3 * (size_t)VD_MAX_NAME_UNITS);
    vd_windows_clear(&w);
    return 0;
}
