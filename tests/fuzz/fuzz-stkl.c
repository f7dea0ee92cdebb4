/* SPDX-License-Identifier: Apache-2.0
 *
 * Fuzz target: the STKL stack trace decoder (plugins/threads/stkl.c), and
 * the line texts the stack view shows.
 *
 * Input: an STKL payload. Invariants: the frames fit in the payload (each
 * costs at least its three string lengths and its line) and in
 * THREADS_STKL_MAX_FRAMES; every frame has a class and a method; a failure
 * gives a reason.
 */
#include <errno.h>
#include <string.h>

#include "plugins/threads/threads.h"
#include "tests/fuzz/fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    stkl_trace t;
    char why[256] = "";

    memset(&t, 0, sizeof t);
    if (threads_parse_stkl(data, size, &t, why, sizeof why) != 0) {
        FUZZ_CHECK(why[0] != 0);
        threads_stkl_clear(&t);
        return 0;
    }
    FUZZ_CHECK(t.n <= THREADS_STKL_MAX_FRAMES);
    FUZZ_CHECK(12 + (uint64_t)t.n * 16 <= size); /* three lstr lengths and a line each */
    for (uint32_t i = 0; i < t.n; i++) {
        char buf[16];
        FUZZ_CHECK(t.frames[i].class_name != NULL && t.frames[i].method != NULL);
        FUZZ_CHECK(threads_line_text(t.frames[i].line, buf) != NULL);
    }
    threads_stkl_clear(&t);
    return 0;
}
