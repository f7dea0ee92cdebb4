/* SPDX-License-Identifier: Apache-2.0
 *
 * Fuzz target: the ZLIB chunk inflater (core/wire/zlibchunk.c) under a cap,
 * as the session inflates a ZLIB chunk's payload.
 *
 * Input: u1 cap selector (cap = 64 << (k % 16) bytes), then the ZLIB
 * payload (u4 original type, u4 uncompressed length, zlib or raw deflate).
 * Invariants: OK only with exactly the declared size, never over the cap;
 * nothing is returned on an error; what ddm_zlib_deflate builds inflates
 * back to the same bytes.
 */
#include <string.h>

#include "core/wire/ddm.h"
#include "tests/fuzz/fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    FuzzIn in = fuzz_in(data, size);
    size_t cap = (size_t)64 << (fuzz_u8(&in) % 16);
    uint32_t orig = 0;
    uint8_t *out = NULL;
    size_t out_len = 0;
    DdmZlibResult res = ddm_zlib_inflate(in.p, in.n, cap, &orig, &out, &out_len);

    FUZZ_CHECK(ddm_zlib_result_str(res) != NULL);
    if (res == DDM_ZLIB_OK) {
        uint32_t declared = in.n >= 8 ? ((uint32_t)in.p[4] << 24) | ((uint32_t)in.p[5] << 16) |
                                            ((uint32_t)in.p[6] << 8) | in.p[7]
                                      : 0;
        FUZZ_CHECK(in.n >= 8);
        FUZZ_CHECK(out_len == declared && out_len <= cap);
        FUZZ_CHECK(out_len == 0 || out != NULL);
        if (out_len)
            FUZZ_CHECK(out[out_len - 1] == out[out_len - 1]); /* readable to its end */
    }
    g_free(out);

    /* round trip of the rest of the input, when it is small */
    if (in.n <= 4096) {
        size_t zlen = 0;
        uint8_t *z = ddm_zlib_deflate(0x41424344u, in.p, in.n, &zlen);
        out = NULL;
        FUZZ_CHECK(z != NULL);
        FUZZ_CHECK(ddm_zlib_inflate(z, zlen, 4096, &orig, &out, &out_len) == DDM_ZLIB_OK);
        FUZZ_CHECK(orig == 0x41424344u && out_len == in.n);
        FUZZ_CHECK(out_len == 0 || memcmp(out, in.p, out_len) == 0);
        g_free(out);
        g_free(z);
    }
    return 0;
}
