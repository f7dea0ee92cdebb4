/* SPDX-License-Identifier: Apache-2.0
 *
 * alloc: the REAL decoder (doc/protocol.md, "REAE, REAQ, REAL").
 *   header  u1 headerLen, u1 entryHeaderLen, u1 frameLen, u2 entryCount,
 *           u4 stringTableOffset (from the start of the payload),
 *           u2 nClassNames, u2 nMethodNames, u2 nFileNames, then
 *           headerLen - 15 unknown bytes (skipped);
 *   entry   u4 size, u2 threadId, u2 classIdx, u1 depth, entryHeaderLen - 9
 *           unknown bytes, then depth frames;
 *   frame   u2 classIdx, u2 methodIdx, u2 fileIdx, i2 line, frameLen - 8
 *           unknown bytes;
 *   strings at stringTableOffset: class, method, then file names, each an
 *           lstr (u4 UTF-16 units, then the units).
 * Bounds: the entries lie between the header and the string table; a first
 * pass checks every entry and counts frames inside that region before
 * anything is allocated, so the allocations are bounded by the chunk's
 * length (entries <= region / entryHeaderLen, frames <= region /
 * frameLen, strings <= rest / 4). Indices are checked once the tables are
 * known. Linear in the chunk's length.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <ddmon/bytes.h>

#include "alloc.h"

static int bad(char *why, size_t whylen, const char *fmt, ...) DDM_PRINTF(3, 4);
static int bad(char *why, size_t whylen, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(why, whylen, fmt, ap);
    va_end(ap);
    return -EBADMSG;
}

static void free_strings(char **v, uint32_t n)
{
    uint32_t i;
    if (!v)
        return;
    for (i = 0; i < n; i++)
        free(v[i]);
    free(v);
}

void alloc_real_clear(alloc_table *t)
{
    free(t->e);
    free(t->f);
    free_strings(t->classes, t->n_classes);
    free_strings(t->methods, t->n_methods);
    free_strings(t->files, t->n_files);
    memset(t, 0, sizeof *t);
}

/* Read @n lstrs into a new array; -EBADMSG past the end, -ENOMEM. */
static int read_strings(ddm_reader *r, uint32_t n, char ***out, const char *what, char *why,
                        size_t whylen)
{
    char **v;
    uint32_t i;

    *out = NULL;
    if (!n)
        return 0;
    v = calloc(n, sizeof *v);
    if (!v)
        return -ENOMEM;
    *out = v;
    for (i = 0; i < n; i++) {
        size_t at = r->pos;
        uint32_t units = ddm_read_u4(r), keep;
        if (!ddm_reader_ok(r) || (uint64_t)units * 2 > ddm_reader_remaining(r))
            return bad(why, whylen, "%s name %u of %u at offset %zu runs past the end", what,
                       (unsigned)i, (unsigned)n, at);
        keep = units < ALLOC_NAME_MAX_UNITS ? units : ALLOC_NAME_MAX_UNITS;
        v[i] = ddm_read_str16(r, keep);
        if (!v[i])
            return -ENOMEM;
        ddm_read_skip(r, (size_t)(units - keep) * 2);
    }
    return 0;
}

int alloc_parse_real(const uint8_t *data, size_t len, alloc_table *out, char *why, size_t whylen)
{
    ddm_reader r;
    alloc_table t;
    uint32_t count, str_off, i, frames = 0, fi = 0;
    size_t region;
    int rc;

    memset(out, 0, sizeof *out);
    memset(&t, 0, sizeof t);
    if (whylen)
        why[0] = 0;
    ddm_reader_init(&r, data, len);
    t.header_len = ddm_read_u1(&r);
    t.entry_len = ddm_read_u1(&r);
    t.frame_len = ddm_read_u1(&r);
    if (!ddm_reader_ok(&r))
        return bad(why, whylen, "%zu bytes: too short for the three length bytes", len);
    if (t.header_len < ALLOC_REAL_HEADER_MIN || t.entry_len < ALLOC_REAL_ENTRY_MIN ||
        t.frame_len < ALLOC_REAL_FRAME_MIN)
        return bad(why, whylen,
                   "header, entry and frame lengths %u, %u, %u are below the known %u, %u, %u",
                   t.header_len, t.entry_len, t.frame_len, ALLOC_REAL_HEADER_MIN,
                   ALLOC_REAL_ENTRY_MIN, ALLOC_REAL_FRAME_MIN);
    if (len < t.header_len)
        return bad(why, whylen, "%zu bytes: shorter than its %u-byte header", len, t.header_len);
    count = ddm_read_u2(&r);
    str_off = ddm_read_u4(&r);
    t.n_classes = ddm_read_u2(&r);
    t.n_methods = ddm_read_u2(&r);
    t.n_files = ddm_read_u2(&r);
    ddm_read_skip(&r, t.header_len - ALLOC_REAL_HEADER_MIN);
    if (str_off < t.header_len || str_off > len)
        return bad(why, whylen, "string table offset %u outside %u..%zu", (unsigned)str_off,
                   t.header_len, len);
    region = str_off - t.header_len;
    if ((uint64_t)count * t.entry_len > region)
        return bad(why, whylen, "%u entries of at least %u bytes do not fit in the %zu bytes before the string table",
                   (unsigned)count, t.entry_len, region);
    if (((uint64_t)t.n_classes + t.n_methods + t.n_files) * 4 > len - str_off)
        return bad(why, whylen, "%u + %u + %u names do not fit in the %zu bytes after offset %u",
                   (unsigned)t.n_classes, (unsigned)t.n_methods, (unsigned)t.n_files,
                   len - str_off, (unsigned)str_off);

    /* Pass 1: every entry and its frames lie before the string table. */
    {
        ddm_reader e;
        ddm_reader_init(&e, data, str_off);
        ddm_read_skip(&e, t.header_len);
        for (i = 0; i < count; i++) {
            size_t at = e.pos;
            uint8_t depth;
            ddm_read_skip(&e, 8);
            depth = ddm_read_u1(&e);
            ddm_read_skip(&e, t.entry_len - ALLOC_REAL_ENTRY_MIN);
            ddm_read_skip(&e, (size_t)depth * t.frame_len);
            if (!ddm_reader_ok(&e))
                return bad(why, whylen,
                           "entry %u of %u at offset %zu (depth %u) runs past the string table at %u",
                           (unsigned)i, (unsigned)count, at, depth, (unsigned)str_off);
            frames += depth;
        }
    }
    t.n = count;
    t.n_frames = frames;
    if ((count && !(t.e = calloc(count, sizeof *t.e))) ||
        (frames && !(t.f = calloc(frames, sizeof *t.f)))) {
        alloc_real_clear(&t);
        return -ENOMEM;
    }

    /* The string tables (their indices are checked below). */
    {
        ddm_reader s;
        ddm_reader_init(&s, data, len);
        ddm_read_skip(&s, str_off);
        if ((rc = read_strings(&s, t.n_classes, &t.classes, "class", why, whylen)) != 0 ||
            (rc = read_strings(&s, t.n_methods, &t.methods, "method", why, whylen)) != 0 ||
            (rc = read_strings(&s, t.n_files, &t.files, "file", why, whylen)) != 0) {
            alloc_real_clear(&t);
            return rc;
        }
    }

    /* Pass 2: decode, with every index checked. */
    for (i = 0; i < count; i++) {
        alloc_entry *en = &t.e[i];
        unsigned d;
        en->size = ddm_read_u4(&r);
        en->tid = ddm_read_u2(&r);
        en->cls = ddm_read_u2(&r);
        en->depth = ddm_read_u1(&r);
        en->first = fi;
        ddm_read_skip(&r, t.entry_len - ALLOC_REAL_ENTRY_MIN);
        if (en->cls >= t.n_classes) {
            rc = bad(why, whylen, "entry %u: class index %u out of range (%u class names)",
                     (unsigned)i, en->cls, (unsigned)t.n_classes);
            goto fail;
        }
        for (d = 0; d < en->depth; d++, fi++) {
            alloc_frame *f = &t.f[fi];
            f->cls = ddm_read_u2(&r);
            f->method = ddm_read_u2(&r);
            f->file = ddm_read_u2(&r);
            f->line = (int16_t)ddm_read_u2(&r);
            ddm_read_skip(&r, t.frame_len - ALLOC_REAL_FRAME_MIN);
            if (f->cls >= t.n_classes || f->method >= t.n_methods || f->file >= t.n_files) {
                rc = bad(why, whylen,
                         "entry %u frame %u: string index out of range (class %u of %u, method %u of %u, file %u of %u)",
                         (unsigned)i, d, f->cls, (unsigned)t.n_classes, f->method,
                         (unsigned)t.n_methods, f->file, (unsigned)t.n_files);
                goto fail;
            }
        }
    }
    if (!ddm_reader_ok(&r)) { /* cannot happen after pass 1; never trust that */
        rc = bad(why, whylen, "entries run past the end");
        goto fail;
    }
    *out = t;
    return 0;
fail:
    alloc_real_clear(&t);
    return rc;
}

/* ------------------------------------------------------------- names */

static const char *primitive(char c)
{
    switch (c) {
    case 'Z': return "boolean";
    case 'B': return "byte";
    case 'C': return "char";
    case 'S': return "short";
    case 'I': return "int";
    case 'J': return "long";
    case 'F': return "float";
    case 'D': return "double";
    case 'V': return "void";
    default: return NULL;
    }
}

char *alloc_descriptor_to_name(const char *desc)
{
    size_t dims = 0, n, blen, i;
    const char *base = NULL, *p = desc;
    char *out;

    while (p[dims] == '[')
        dims++;
    p += dims;
    n = strlen(p);
    if (n >= 3 && p[0] == 'L' && p[n - 1] == ';') {
        base = p + 1;
        blen = n - 2;
    } else if (n == 1 && primitive(p[0]) && (dims || p[0] != 'V')) {
        base = primitive(p[0]);
        blen = strlen(base);
    } else {
        return strdup(desc); /* not a descriptor: as sent */
    }
    out = malloc(blen + dims * 2 + 1);
    if (!out)
        return NULL;
    for (i = 0; i < blen; i++)
        out[i] = base[i] == '/' ? '.' : base[i];
    for (i = 0; i < dims; i++) {
        out[blen + 2 * i] = '[';
        out[blen + 2 * i + 1] = ']';
    }
    out[blen + dims * 2] = 0;
    return out;
}

char *alloc_frame_text(const char *cls, const char *method, const char *file, int line)
{
    char where[64];
    const char *f = file && *file ? file : NULL;
    size_t n;
    char *out;

    if (line == -2)
        snprintf(where, sizeof where, "Native Method");
    else if (!f && line >= 0)
        snprintf(where, sizeof where, "Unknown Source:%d", line);
    else if (!f)
        snprintf(where, sizeof where, "Unknown Source");
    else if (line >= 0)
        snprintf(where, sizeof where, ":%d", line);
    else
        where[0] = 0;
    n = strlen(cls) + 1 + strlen(method) + 1 + (f && line != -2 ? strlen(f) : 0) + strlen(where) + 2;
    out = malloc(n);
    if (!out)
        return NULL;
    if (f && line != -2)
        snprintf(out, n, "%s.%s(%s%s)", cls, method, f, where);
    else
        snprintf(out, n, "%s.%s(%s)", cls, method, where);
    return out;
}
