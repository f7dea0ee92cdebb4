/* SPDX-License-Identifier: Apache-2.0
 *
 * Fuzz target: DDM chunk framing (core/wire/ddm.c) as the session reads a
 * 0xC7/1 payload: iterate the chunks, inflate ZLIB ones under a cap, and
 * hand HELO, FEAT and FAIL chunks to their parsers (core/wire/helo.c).
 *
 * Input: the JDWP payload. Invariants: every chunk lies inside the payload,
 * in order; at the end the chunks and the trailing bytes add up to the
 * payload; an overrun stops the iteration; an inflated chunk is never over
 * the cap.
 */
#include <string.h>

#include "core/wire/ddm.h"
#include "tests/fuzz/fuzz.h"

#define FUZZ_ZLIB_CAP ((size_t)1 << 20)

static void take_chunk(uint32_t type, const uint8_t *p, size_t len, int depth)
{
    if (type == DDM_CHUNK('Z', 'L', 'I', 'B') && depth == 0) {
        uint32_t orig = 0;
        uint8_t *out = NULL;
        size_t out_len = 0;
        if (ddm_zlib_inflate(p, len, FUZZ_ZLIB_CAP, &orig, &out, &out_len) == DDM_ZLIB_OK) {
            FUZZ_CHECK(out_len <= FUZZ_ZLIB_CAP);
            take_chunk(orig, out, out_len, depth + 1);
        }
        g_free(out);
    } else if (type == DDM_CHUNK('H', 'E', 'L', 'O')) {
        DdmHelo h;
        memset(&h, 0, sizeof h);
        if (ddm_helo_parse(p, len, &h))
            FUZZ_CHECK(h.trailing <= len);
        ddm_helo_clear(&h);
    } else if (type == DDM_CHUNK('F', 'E', 'A', 'T')) {
        g_strfreev(ddm_feat_parse(p, len));
    } else if (type == DDM_CHUNK('F', 'A', 'I', 'L')) {
        uint32_t code;
        char *msg = NULL;
        if (ddm_fail_parse(p, len, &code, &msg))
            FUZZ_CHECK(msg != NULL);
        g_free(msg);
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    DdmChunkIter it;
    DdmChunk c;
    DdmChunkResult res;
    size_t covered = 0;
    const uint8_t *last_end = data;

    ddm_chunk_iter_init(&it, data, size);
    while ((res = ddm_chunk_iter_next(&it, &c)) == DDM_CHUNK_OK) {
        FUZZ_CHECK(c.data >= last_end + 8 && c.data + c.len <= data + size);
        last_end = c.data + c.len;
        covered += 8 + c.len;
        take_chunk(c.type, c.data, c.len, 0);
    }
    if (res == DDM_CHUNK_END)
        FUZZ_CHECK(covered + ddm_chunk_iter_trailing(&it) == size);
    else
        FUZZ_CHECK(res == DDM_CHUNK_ERR_OVERRUN);
    FUZZ_CHECK(ddm_chunk_iter_next(&it, &c) != DDM_CHUNK_OK || res == DDM_CHUNK_OK);

    /* a chunk built from the input frames back to the same bytes */
    if (size >= 4) {
        uint32_t type = ((uint32_t)data[0] << 24) | ((uint32_t)data[1] << 16) |
                        ((uint32_t)data[2] << 8) | data[3];
        size_t plen = 0;
        uint8_t *pkt = ddm_chunk_build_packet(1, type, data + 4, size - 4, &plen);
        FUZZ_CHECK(plen == 11 + 8 + size - 4);
        ddm_chunk_iter_init(&it, pkt + 11, plen - 11);
        FUZZ_CHECK(ddm_chunk_iter_next(&it, &c) == DDM_CHUNK_OK);
        FUZZ_CHECK(c.type == type && c.len == size - 4 && memcmp(c.data, data + 4, c.len) == 0);
        FUZZ_CHECK(ddm_chunk_iter_next(&it, &c) == DDM_CHUNK_END);
        g_free(pkt);
    }
    return 0;
}
