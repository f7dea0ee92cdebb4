/* SPDX-License-Identifier: Apache-2.0
 *
 * Fuzz target: the HELO, FEAT and FAIL payload parsers (core/wire/helo.c),
 * the chunks the session itself reads from every VM.
 *
 * Input: u1 selector (0 HELO, 1 FEAT, 2 FAIL, else all three), then the
 * chunk payload. Invariants: every string parsed is valid UTF-8 (views and
 * JSON need it), unknown tails are counted within the payload, a failed
 * parse leaves nothing allocated.
 */
#include <string.h>

#include "core/wire/ddm.h"
#include "tests/fuzz/fuzz.h"

static void check_str(const char *s)
{
    if (s)
        FUZZ_CHECK(g_utf8_validate(s, -1, NULL));
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    FuzzIn in = fuzz_in(data, size);
    uint8_t sel = fuzz_u8(&in);
    uint8_t *p = fuzz_dup(in.p, in.n); /* exactly the payload: ASan sees overreads */

    if (sel == 0 || sel > 2) {
        DdmHelo h;
        memset(&h, 0, sizeof h);
        if (ddm_helo_parse(p, in.n, &h)) {
            FUZZ_CHECK(h.vm_ident != NULL && h.app_name != NULL);
            check_str(h.vm_ident);
            check_str(h.app_name);
            check_str(h.abi);
            check_str(h.jvm_flags);
            check_str(h.package_name);
            FUZZ_CHECK(h.trailing <= in.n);
        }
        ddm_helo_clear(&h);
    }
    if (sel == 1 || sel > 2) {
        char **feat = ddm_feat_parse(p, in.n);
        for (size_t i = 0; feat && feat[i]; i++) {
            check_str(feat[i]);
            FUZZ_CHECK(i < in.n / 4); /* each name costs at least its u4 length */
            FUZZ_CHECK(i < DDM_FEAT_NAMES_MAX);
            FUZZ_CHECK(strlen(feat[i]) <= DDM_FEAT_UNITS_MAX * 3);
        }
        g_strfreev(feat);
    }
    if (sel == 2 || sel > 2) {
        uint32_t code = 0;
        char *msg = NULL;
        if (ddm_fail_parse(p, in.n, &code, &msg)) {
            FUZZ_CHECK(msg != NULL);
            check_str(msg);
        } else {
            FUZZ_CHECK(msg == NULL);
        }
        g_free(msg);
    }
    free(p);
    return 0;
}
