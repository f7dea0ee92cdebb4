/* SPDX-License-Identifier: Apache-2.0
 *
 * threads: STKL reply decoder (doc/protocol.md, "STKL"): u4 reserved,
 * u4 thread id, u4 frame count, then per frame lstr class, lstr method,
 * lstr file (0 units = unknown), i4 line (-2 native, -1 unknown).
 * The frame count is checked against the bytes left (a frame takes at
 * least 16) and capped at THREADS_STKL_MAX_FRAMES before anything is
 * allocated. Trailing bytes are ignored. No I/O, no host.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <ddmon/bytes.h>

#include "threads.h"

#define MIN_FRAME_BYTES 16u

void threads_stkl_clear(stkl_trace *t)
{
    uint32_t i;
    for (i = 0; t->frames && i < t->n; i++) {
        free(t->frames[i].class_name);
        free(t->frames[i].method);
        free(t->frames[i].file);
    }
    free(t->frames);
    t->frames = NULL;
    t->n = 0;
}

const char *threads_line_text(int32_t line, char buf[16])
{
    if (line == -2)
        return "native";
    if (line < 0)
        return "unknown";
    snprintf(buf, 16, "%d", (int)line);
    return buf;
}

int threads_parse_stkl(const uint8_t *data, size_t len, stkl_trace *out, char *why,
                       size_t whylen)
{
    ddm_reader r;
    uint32_t count, i;

    memset(out, 0, sizeof *out);
    ddm_reader_init(&r, data, len);
    (void)ddm_read_u4(&r); /* reserved */
    out->thread_id = ddm_read_u4(&r);
    count = ddm_read_u4(&r);
    if (!ddm_reader_ok(&r)) {
        snprintf(why, whylen, "%zu bytes: shorter than the 12-byte header", len);
        return -EBADMSG;
    }
    if (count > THREADS_STKL_MAX_FRAMES || count > ddm_reader_remaining(&r) / MIN_FRAME_BYTES) {
        snprintf(why, whylen, "frame count %u does not fit in the %zu bytes left", (unsigned)count,
                 ddm_reader_remaining(&r));
        return -EBADMSG;
    }
    out->frames = calloc(count ? count : 1, sizeof *out->frames);
    if (!out->frames)
        return -ENOMEM;
    for (i = 0; i < count; i++) {
        stkl_frame *f = &out->frames[i];
        out->n = i + 1; /* so that clear frees what was read */
        f->class_name = ddm_read_lstr(&r);
        f->method = ddm_read_lstr(&r);
        f->file = ddm_read_lstr(&r);
        f->line = ddm_read_i4(&r);
        if (!ddm_reader_ok(&r) || !f->class_name || !f->method || !f->file) {
            snprintf(why, whylen, "frame %u of %u is truncated", (unsigned)i, (unsigned)count);
            threads_stkl_clear(out);
            return -EBADMSG;
        }
        if (!f->file[0]) {
            free(f->file);
            f->file = NULL;
        }
    }
    out->n = count;
    return 0;
}
