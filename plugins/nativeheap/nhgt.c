/* SPDX-License-Identifier: Apache-2.0
 *
 * nhgt: NHGT reply parsing and record access; see nhgt.h.
 */
#include "nhgt.h"

#include <endian.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include <ddmon/bytes.h>

static uint64_t le(const uint8_t *p, unsigned width)
{
    uint64_t v = 0;
    unsigned i;
    if (width == 8) { /* the common widths in one load (every record of a big table) */
        uint64_t w;
        memcpy(&w, p, 8);
        return le64toh(w);
    }
    if (width == 4) {
        uint32_t w;
        memcpy(&w, p, 4);
        return le32toh(w);
    }
    for (i = width; i > 0; i--)
        v = (v << 8) | p[i - 1];
    return v;
}

int nhgt_parse(const uint8_t *data, size_t len, nhgt_info *out, char *err, size_t errlen)
{
    ddm_reader r;
    uint64_t min_info, rest;
    unsigned w;

    memset(out, 0, sizeof(*out));
    ddm_reader_init(&r, data, len);
    if (len >= 4 && le(data, 4) == NHGT_SIGNATURE) {
        unsigned version;
        ddm_read_skip(&r, 4);
        version = (unsigned)ddm_read_le(&r, 2);
        out->ptr_size = (unsigned)ddm_read_le(&r, 2);
        if (!ddm_reader_ok(&r)) {
            snprintf(err, errlen, "v2 header cut short (%zu bytes)", len);
            return -EINVAL;
        }
        if (version != 2) {
            snprintf(err, errlen, "unknown header version %u", version);
            return -EINVAL;
        }
        if (out->ptr_size != 4 && out->ptr_size != 8) {
            snprintf(err, errlen, "bad pointer size %u (want 4 or 8)", out->ptr_size);
            return -EINVAL;
        }
        out->version = 2;
        w = out->ptr_size;
    } else {
        out->version = 1;
        out->ptr_size = 4;
        w = 4;
    }
    out->map_size = ddm_read_le(&r, w);
    out->alloc_size = ddm_read_le(&r, w);
    out->alloc_info_size = ddm_read_le(&r, w);
    out->total_memory = ddm_read_le(&r, w);
    out->backtrace_size = ddm_read_le(&r, w);
    if (!ddm_reader_ok(&r)) {
        snprintf(err, errlen, "v%d header cut short (%zu bytes)", out->version, len);
        return -EINVAL;
    }
    if (out->backtrace_size > NHGT_MAX_BACKTRACE) {
        snprintf(err, errlen, "backtrace size %" PRIu64 " is over %d", out->backtrace_size,
                 NHGT_MAX_BACKTRACE);
        return -EINVAL;
    }
    if (out->version == 1 && out->alloc_info_size != (2 + out->backtrace_size) * 4 &&
        out->alloc_info_size == (2 + out->backtrace_size) * 8)
        out->ptr_size = 8; /* v1 from a 64-bit process: only this stride fits */
    rest = ddm_reader_remaining(&r);
    if (out->map_size > rest) {
        snprintf(err, errlen, "maps (%" PRIu64 " bytes) go past the end (%" PRIu64 " left)",
                 out->map_size, rest);
        return -EINVAL;
    }
    out->maps = (const char *)ddm_read_bytes(&r, (size_t)out->map_size);
    if (out->alloc_info_size == 0) /* malloc debug off: only totalMemory is valid */
        return 0;
    min_info = (2 + out->backtrace_size) * out->ptr_size;
    if (out->alloc_info_size < min_info) {
        snprintf(err, errlen,
                 "record size %" PRIu64 " is below %" PRIu64 " (2 + %" PRIu64 " pointers of %u bytes)",
                 out->alloc_info_size, min_info, out->backtrace_size, out->ptr_size);
        return -EINVAL;
    }
    rest = ddm_reader_remaining(&r);
    if (out->alloc_size > rest) {
        snprintf(err, errlen, "allocations (%" PRIu64 " bytes) go past the end (%" PRIu64 " left)",
                 out->alloc_size, rest);
        return -EINVAL;
    }
    out->stride = (size_t)out->alloc_info_size;
    out->n_records = (size_t)(out->alloc_size / out->alloc_info_size);
    out->ragged = out->alloc_size % out->alloc_info_size != 0;
    out->records = ddm_read_bytes(&r, (size_t)out->alloc_size);
    return 0;
}

void nhgt_record_at(const nhgt_info *in, size_t i, nhgt_record *out)
{
    const uint8_t *p = in->records + i * in->stride;
    const unsigned w = in->ptr_size;
    const uint64_t top = (uint64_t)1 << (8 * w - 1);
    uint64_t raw = le(p, w);
    out->zygote = (raw & top) != 0;
    out->size = raw & ~top;
    out->count = le(p + w, w);
    out->frames = p + 2 * w;
}

uint64_t nhgt_frame(const nhgt_info *in, const nhgt_record *r, size_t k)
{
    return le(r->frames + k * in->ptr_size, in->ptr_size);
}
