/* SPDX-License-Identifier: Apache-2.0
 *
 * threads: THST decoder, the real table and the 2007 draft's form
 * (doc/protocol.md, "THST").
 *
 * Real VMs (Dalvik, ART) send `u1 headerLen, u1 bytesPerEntry, u2 count`,
 * headerLen - 4 more header bytes, then count entries of bytesPerEntry
 * bytes, of which the first 18 are u4 id, u1 status, u4 tid, u4 utime,
 * u4 stime, u1 daemon. Both length bytes are honoured so that a newer VM
 * can append fields; values below 4 and 18 cannot be a real table.
 *
 * The draft's form is `u4 count` then count × (u4 id, u1 state, u1
 * suspended). How the two are told apart, unambiguously:
 *  - the draft's first byte is the top byte of its count, 0 for any count
 *    below 2^24 (and we cap counts at THREADS_MAX), so a draft table always
 *    has an invalid real header (headerLen 0 < 4): a table whose real
 *    header is valid is never read as draft;
 *  - a payload whose real header is invalid is read as draft only if its
 *    length is exactly 4 + 6 × count; anything else is rejected.
 * Trailing bytes after a real table are ignored: a newer VM may append
 * fields (doc/protocol.md, "DDM").
 * No I/O, no host: pure bytes in, struct out.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <ddmon/bytes.h>

#include "threads.h"

#define REAL_MIN_HEADER 4u
#define REAL_MIN_ENTRY 18u
#define DRAFT_ENTRY 6u

void threads_thst_clear(thst_table *t)
{
    free(t->e);
    t->e = NULL;
    t->n = 0;
}

/* The draft form, or -EBADMSG when @len does not match it exactly. */
static int parse_draft(const uint8_t *data, size_t len, thst_table *out)
{
    ddm_reader r;
    uint32_t count, i;
    ddm_reader_init(&r, data, len);
    count = ddm_read_u4(&r);
    if (!ddm_reader_ok(&r) || count > THREADS_MAX ||
        (uint64_t)count * DRAFT_ENTRY != ddm_reader_remaining(&r))
        return -EBADMSG;
    out->form = THST_FORM_DRAFT;
    out->e = calloc(count ? count : 1, sizeof *out->e);
    if (!out->e)
        return -ENOMEM;
    for (i = 0; i < count; i++) {
        out->e[i].id = ddm_read_u4(&r);
        out->e[i].status = ddm_read_u1(&r);
        out->e[i].suspended = ddm_read_u1(&r);
    }
    out->n = count;
    return ddm_reader_ok(&r) ? 0 : -EBADMSG;
}

int threads_parse_thst(const uint8_t *data, size_t len, thst_table *out, char *why, size_t whylen)
{
    ddm_reader r;
    unsigned header_len, entry_len, count, i;
    int rc;

    memset(out, 0, sizeof *out);
    snprintf(why, whylen, "%s", "");
    if (len < REAL_MIN_HEADER) {
        snprintf(why, whylen, "%zu bytes: shorter than the %u-byte header", len, REAL_MIN_HEADER);
        return -EBADMSG;
    }
    ddm_reader_init(&r, data, len);
    header_len = ddm_read_u1(&r);
    entry_len = ddm_read_u1(&r);
    count = ddm_read_u2(&r);

    if (header_len < REAL_MIN_HEADER || entry_len < REAL_MIN_ENTRY) {
        rc = parse_draft(data, len, out);
        if (rc == 0 || rc == -ENOMEM) {
            if (rc)
                threads_thst_clear(out);
            return rc;
        }
        threads_thst_clear(out);
        if (header_len < REAL_MIN_HEADER)
            snprintf(why, whylen, "header length %u < %u (and not the draft's form)", header_len,
                     REAL_MIN_HEADER);
        else
            snprintf(why, whylen, "entry length %u < %u (and not the draft's form)", entry_len,
                     REAL_MIN_ENTRY);
        return -EBADMSG;
    }
    if (ddm_read_skip(&r, header_len - REAL_MIN_HEADER) != 0) {
        snprintf(why, whylen, "header length %u runs past the end (%zu bytes)", header_len, len);
        return -EBADMSG;
    }
    if ((size_t)count * entry_len > ddm_reader_remaining(&r)) {
        snprintf(why, whylen, "count says %u entries of %u bytes but only %zu bytes follow", count,
                 entry_len, ddm_reader_remaining(&r));
        return -EBADMSG;
    }
    out->form = THST_FORM_REAL;
    out->e = calloc(count ? count : 1, sizeof *out->e);
    if (!out->e)
        return -ENOMEM;
    for (i = 0; i < count; i++) {
        thst_entry *e = &out->e[i];
        e->id = ddm_read_u4(&r);
        e->status = ddm_read_u1(&r);
        e->tid = ddm_read_u4(&r);
        e->utime = ddm_read_u4(&r);
        e->stime = ddm_read_u4(&r);
        e->daemon = ddm_read_u1(&r);
        ddm_read_skip(&r, entry_len - REAL_MIN_ENTRY);
    }
    out->n = count;
    if (!ddm_reader_ok(&r)) { /* cannot happen after the size check; keep it safe */
        threads_thst_clear(out);
        snprintf(why, whylen, "truncated entry");
        return -EBADMSG;
    }
    return 0;
}
