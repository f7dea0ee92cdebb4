/* SPDX-License-Identifier: Apache-2.0
 *
 * DDM chunk framing (ddm.h): iterating over the `u4 type, u4 length, data`
 * chunks of a 0xC7/1 payload and building packets that carry one chunk.
 *
 * Invariants: a chunk is returned only when its whole data lies inside the
 * payload; an overrunning chunk stops the iteration at its header (every
 * later call reports the same error). Bytes too few for a chunk header at
 * the end are "trailing": tolerated and reported, never parsed.
 *
 * Non-goals: no interpretation of chunk types (that is helo.c and plugins).
 */
#include "core/wire/ddm.h"

#include <string.h>

#include <ddmon/bytes.h>

#include "core/wire/jdwp.h"

void ddm_chunk_iter_init(DdmChunkIter *it, const uint8_t *payload, size_t len)
{
    g_return_if_fail(it != NULL);
    it->payload = payload ? payload : (const uint8_t *)"";
    it->len = payload ? len : 0;
    it->pos = 0;
}

DdmChunkResult ddm_chunk_iter_next(DdmChunkIter *it, DdmChunk *out)
{
    ddm_reader r;
    uint32_t type, clen;

    g_return_val_if_fail(it != NULL, DDM_CHUNK_END);
    if (it->len - it->pos < DDM_CHUNK_HEADER_LEN)
        return DDM_CHUNK_END;
    ddm_reader_init(&r, it->payload + it->pos, it->len - it->pos);
    type = ddm_read_u4(&r);
    clen = ddm_read_u4(&r);
    if (clen > ddm_reader_remaining(&r)) {
        char name[5];
        g_debug("chunk %s declares %u bytes, only %zu left", ddm_chunk_name(type, name), clen,
                ddm_reader_remaining(&r));
        return DDM_CHUNK_ERR_OVERRUN;
    }
    if (out) {
        out->type = type;
        out->data = it->payload + it->pos + DDM_CHUNK_HEADER_LEN;
        out->len = clen;
    }
    it->pos += DDM_CHUNK_HEADER_LEN + (size_t)clen;
    return DDM_CHUNK_OK;
}

size_t ddm_chunk_iter_trailing(const DdmChunkIter *it)
{
    g_return_val_if_fail(it != NULL, 0);
    return it->len - it->pos;
}

void ddm_chunk_append(GByteArray *out, uint32_t type, const void *data, size_t len)
{
    uint8_t hdr[DDM_CHUNK_HEADER_LEN];

    g_return_if_fail(out != NULL);
    g_return_if_fail(len <= G_MAXUINT32);
    g_return_if_fail(len == 0 || data != NULL);
    ddm_put_u4(hdr, type);
    ddm_put_u4(hdr + 4, (uint32_t)len);
    g_byte_array_append(out, hdr, sizeof hdr);
    if (len)
        g_byte_array_append(out, data, (guint)len);
}

/* A packet with room for one chunk: header written, chunk header written. */
static uint8_t *build_chunk_packet(const DdmJdwpHeader *tmpl, uint32_t type, const void *data,
                                   size_t len, size_t *out_len)
{
    DdmJdwpHeader h = *tmpl;
    uint8_t *p;
    size_t total;

    g_return_val_if_fail(len <= G_MAXUINT32 - DDM_JDWP_HEADER_LEN - DDM_CHUNK_HEADER_LEN, NULL);
    g_return_val_if_fail(len == 0 || data != NULL, NULL);
    total = DDM_JDWP_HEADER_LEN + DDM_CHUNK_HEADER_LEN + len;
    h.length = (uint32_t)total;
    p = g_malloc(total);
    ddm_jdwp_write_header(p, &h);
    ddm_put_u4(p + DDM_JDWP_HEADER_LEN, type);
    ddm_put_u4(p + DDM_JDWP_HEADER_LEN + 4, (uint32_t)len);
    if (len)
        memcpy(p + DDM_JDWP_HEADER_LEN + DDM_CHUNK_HEADER_LEN, data, len);
    if (out_len)
        *out_len = total;
    return p;
}

uint8_t *ddm_chunk_build_packet(uint32_t id, uint32_t type, const void *data, size_t len,
                                size_t *out_len)
{
    DdmJdwpHeader h = { 0, id, 0, DDM_JDWP_CMDSET, DDM_JDWP_CMD, 0 };
    return build_chunk_packet(&h, type, data, len, out_len);
}

uint8_t *ddm_chunk_build_reply(uint32_t id, uint32_t type, const void *data, size_t len,
                               size_t *out_len)
{
    DdmJdwpHeader h = { 0, id, DDM_JDWP_FLAG_REPLY, 0, 0, 0 };
    if (type == 0)
        return ddm_jdwp_build_reply(id, 0, NULL, 0, out_len);
    return build_chunk_packet(&h, type, data, len, out_len);
}
