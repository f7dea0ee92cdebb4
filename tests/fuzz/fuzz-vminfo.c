/* SPDX-License-Identifier: Apache-2.0
 *
 * Fuzz target: the vminfo plugin's decoders (plugins/vminfo/vminfo-parse.c):
 * APNM, WAIT and STAG payloads.
 *
 * Input: u1 selector (0 APNM, 1 WAIT, 2 STAG, else all), then the payload.
 * Invariants: a parsed APNM has an app name; its strings are NUL-free
 * within the payload's size; WAIT gives -1 or a byte; STAG needs 4 bytes.
 */
#include <errno.h>
#include <string.h>

#include "plugins/vminfo/vminfo.h"
#include "tests/fuzz/fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    FuzzIn in = fuzz_in(data, size);
    uint8_t sel = fuzz_u8(&in);
    uint8_t *p = fuzz_dup(in.p, in.n);

    if (sel == 0 || sel > 2) {
        vminfo_apnm a;
        const char *note = NULL;
        memset(&a, 0, sizeof a);
        if (vminfo_parse_apnm(p, in.n, &a, &note) == 0) {
            FUZZ_CHECK(a.app_name != NULL);
            /* UTF-16 to UTF-8 at most triples a string's bytes */
            FUZZ_CHECK(strlen(a.app_name) <= in.n * 3 / 2);
        }
        vminfo_apnm_clear(&a);
    }
    if (sel == 1 || sel > 2) {
        int w = vminfo_parse_wait(p, in.n);
        FUZZ_CHECK(w >= -1 && w <= 255);
    }
    if (sel == 2 || sel > 2) {
        uint32_t stage = 0;
        if (vminfo_parse_stag(p, in.n, &stage) == 0)
            FUZZ_CHECK(in.n >= 4);
    }
    free(p);
    return 0;
}
