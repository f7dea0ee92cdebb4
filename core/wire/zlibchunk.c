/* SPDX-License-Identifier: Apache-2.0
 *
 * ZLIB chunks (ddm.h): inflate a ZLIB chunk payload (`u4 original type,
 * u4 uncompressed length, zlib or raw deflate data`) and build one.
 *
 * Invariants: the declared size is checked against the cap before
 * anything is allocated (over it: ERR_TOO_BIG, nothing inflated); output is
 * allocated incrementally as inflate produces it, never beyond
 * min(declared, cap); inflate stops at the first byte past the declared
 * size (ERR_SIZE), so a chunk that declares 16 bytes costs 16 bytes of
 * inflating, not the cap's worth: the work is bounded by what the peer
 * declared, which the caller bounds by the cap. A zlib
 * header is tried first; a stream that is not valid zlib is retried as
 * raw deflate. Bytes after the end of the deflate stream are ignored.
 *
 * Non-goals: no streaming of huge chunks (callers cap them), no I/O.
 */
#include "core/wire/ddm.h"

#include <string.h>
#include <zlib.h>

#include <ddmon/bytes.h>

#define OUT_STEP ((size_t)64 << 10)
#define ZLIB_INNER_HEADER 8

/* Inflate @in into a buffer of exactly @declared bytes (the caller has
 * checked @declared against its cap). */
static DdmZlibResult inflate_declared(const uint8_t *in, size_t in_len, int window_bits,
                                      size_t declared, uint8_t **out)
{
    z_stream zs;
    uint8_t *buf = NULL;
    size_t alloc = 0, produced = 0;
    uint8_t scratch[1];
    DdmZlibResult res = DDM_ZLIB_ERR_DATA;
    int zr;

    memset(&zs, 0, sizeof zs);
    if (inflateInit2(&zs, window_bits) != Z_OK)
        return DDM_ZLIB_ERR_DATA;

    for (;;) {
        size_t out_room;
        uint8_t *dst;
        uInt in_chunk = (uInt)MIN(in_len, (size_t)G_MAXUINT32);

        zs.next_in = (Bytef *)in;
        zs.avail_in = in_chunk;
        if (produced < declared) {
            if (produced == alloc) {
                alloc = MIN(declared, alloc ? alloc * 2 : MIN(declared, OUT_STEP));
                buf = g_realloc(buf, alloc);
            }
            dst = buf + produced;
            out_room = alloc - produced;
        } else {
            /* past the declared size: one byte tells a mismatch */
            dst = scratch;
            out_room = 1;
        }
        out_room = MIN(out_room, (size_t)G_MAXUINT32);
        zs.next_out = dst;
        zs.avail_out = (uInt)out_room;
        zr = inflate(&zs, Z_NO_FLUSH);
        in_len -= in_chunk - zs.avail_in;
        in += in_chunk - zs.avail_in;
        produced += out_room - zs.avail_out;

        if (produced > declared) {
            res = DDM_ZLIB_ERR_SIZE; /* more than declared: stop, whatever remains */
            break;
        }
        if (zr == Z_STREAM_END) {
            res = produced == declared ? DDM_ZLIB_OK : DDM_ZLIB_ERR_SIZE;
            break;
        }
        if (zr == Z_BUF_ERROR && in_len == 0) {
            res = DDM_ZLIB_ERR_DATA; /* truncated stream */
            break;
        }
        if (zr != Z_OK && zr != Z_BUF_ERROR) {
            res = DDM_ZLIB_ERR_DATA;
            break;
        }
    }
    inflateEnd(&zs);
    if (res != DDM_ZLIB_OK) {
        g_free(buf);
        return res;
    }
    *out = buf ? buf : g_malloc(1);
    return DDM_ZLIB_OK;
}

DdmZlibResult ddm_zlib_inflate(const uint8_t *payload, size_t len, size_t cap,
                               uint32_t *orig_type, uint8_t **out, size_t *out_len)
{
    ddm_reader r;
    uint32_t type, declared;
    DdmZlibResult res;
    uint8_t *buf = NULL;

    g_return_val_if_fail(out != NULL, DDM_ZLIB_ERR_DATA);
    *out = NULL;
    if (out_len)
        *out_len = 0;
    ddm_reader_init(&r, payload, len);
    type = ddm_read_u4(&r);
    declared = ddm_read_u4(&r);
    if (!ddm_reader_ok(&r))
        return DDM_ZLIB_ERR_SHORT;
    if (orig_type)
        *orig_type = type;
    if ((uint64_t)declared > (uint64_t)cap)
        return DDM_ZLIB_ERR_TOO_BIG;

    res = inflate_declared(payload + ZLIB_INNER_HEADER, len - ZLIB_INNER_HEADER, 15, declared, &buf);
    if (res == DDM_ZLIB_ERR_DATA)
        res = inflate_declared(payload + ZLIB_INNER_HEADER, len - ZLIB_INNER_HEADER, -15, declared,
                               &buf);
    if (res != DDM_ZLIB_OK) {
        g_debug("ZLIB chunk: %s", ddm_zlib_result_str(res));
        return res;
    }
    *out = buf;
    if (out_len)
        *out_len = declared;
    return DDM_ZLIB_OK;
}

uint8_t *ddm_zlib_deflate(uint32_t type, const void *data, size_t len, size_t *out_len)
{
    uLongf bound;
    uint8_t *p;

    g_return_val_if_fail(len <= G_MAXUINT32, NULL);
    g_return_val_if_fail(len == 0 || data != NULL, NULL);
    bound = compressBound((uLong)len);
    p = g_malloc(ZLIB_INNER_HEADER + bound);
    ddm_put_u4(p, type);
    ddm_put_u4(p + 4, (uint32_t)len);
    if (compress2(p + ZLIB_INNER_HEADER, &bound, len ? (const Bytef *)data : (const Bytef *)"",
                  (uLong)len, Z_DEFAULT_COMPRESSION) != Z_OK) {
        g_free(p);
        return NULL;
    }
    if (out_len)
        *out_len = ZLIB_INNER_HEADER + bound;
    return p;
}

const char *ddm_zlib_result_str(DdmZlibResult r)
{
    switch (r) {
    case DDM_ZLIB_OK:
        return "ok";
    case DDM_ZLIB_ERR_SHORT:
        return "ZLIB payload shorter than its 8-byte header";
    case DDM_ZLIB_ERR_TOO_BIG:
        return "ZLIB data over the size cap";
    case DDM_ZLIB_ERR_SIZE:
        return "ZLIB data does not match its declared size";
    case DDM_ZLIB_ERR_DATA:
        return "ZLIB data is not a valid deflate stream";
    }
    return "unknown ZLIB result";
}
