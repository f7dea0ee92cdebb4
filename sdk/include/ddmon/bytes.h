/* SPDX-License-Identifier: Apache-2.0
 *
 * Bounds-checked big-endian reader and growable, capped writer for DDM and
 * JDWP payloads, plus UTF-16BE <-> UTF-8 conversion. Header-only so that
 * plugins use exactly the code the core uses without linking to it.
 *
 * Reader contract: every read checks the remaining length first. A read
 * past the end returns 0 (or NULL), does not move the position, and sets
 * r->overrun, which stays set: decode a whole structure, then check
 * ddm_reader_ok() once. Nothing here ever reads outside [data, data+len).
 *
 * Strings on the DDM wire are UTF-16BE code units ("str16"); an "lstr" is a
 * u4 count of code units followed by the units. Conversions never trust
 * the input: lone surrogates, a trailing odd byte and U+0000 become U+FFFD,
 * so the UTF-8 produced is always valid and NUL-free.
 *
 * Ownership: strings returned by the *_dup / ddm_read_str16 / ddm_read_lstr
 * functions are malloc()ed and belong to the caller (free()). The writer
 * owns its buffer until ddm_writer_take() hands it over.
 */
#ifndef DDMON_BYTES_H
#define DDMON_BYTES_H

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ------------------------------------------------------------------ reader */

/** A cursor over borrowed bytes. Since: 1.0 */
typedef struct ddm_reader {
    const uint8_t *data; /**< borrowed, never written */
    size_t len;          /**< bytes in data */
    size_t pos;          /**< next byte to read */
    int overrun;         /**< set by the first read that did not fit; sticky */
} ddm_reader;

/** Start reading @len bytes at @data (borrowed). Since: 1.0 */
static inline void ddm_reader_init(ddm_reader *r, const void *data, size_t len)
{
    /* never keep NULL: NULL + 0 is undefined behaviour in C */
    r->data = data ? (const uint8_t *)data : (const uint8_t *)"";
    r->len = data ? len : 0;
    r->pos = 0;
    r->overrun = 0;
}

/** Bytes left to read. Since: 1.0 */
static inline size_t ddm_reader_remaining(const ddm_reader *r)
{
    return r->len - r->pos;
}

/** 1 when no read has overrun so far. Since: 1.0 */
static inline int ddm_reader_ok(const ddm_reader *r)
{
    return !r->overrun;
}

/* Reserve @n bytes; returns a pointer to them or NULL (and sets overrun). */
static inline const uint8_t *ddm_internal_reader_take(ddm_reader *r, size_t n)
{
    const uint8_t *p;
    if (r->overrun || n > r->len - r->pos) {
        r->overrun = 1;
        return NULL;
    }
    p = r->data + r->pos;
    r->pos += n;
    return p;
}

/** Read a u1. Since: 1.0 */
static inline uint8_t ddm_read_u1(ddm_reader *r)
{
    const uint8_t *p = ddm_internal_reader_take(r, 1);
    return p ? p[0] : 0;
}

/** Read a big-endian u2. Since: 1.0 */
static inline uint16_t ddm_read_u2(ddm_reader *r)
{
    const uint8_t *p = ddm_internal_reader_take(r, 2);
    return p ? (uint16_t)((p[0] << 8) | p[1]) : 0;
}

/** Read a big-endian u4. Since: 1.0 */
static inline uint32_t ddm_read_u4(ddm_reader *r)
{
    const uint8_t *p = ddm_internal_reader_take(r, 4);
    return p ? ((uint32_t)p[0] << 24) | ((uint32_t)p[1] << 16) | ((uint32_t)p[2] << 8) | p[3] : 0;
}

/** Read a big-endian u8. Since: 1.0 */
static inline uint64_t ddm_read_u8(ddm_reader *r)
{
    const uint8_t *p = ddm_internal_reader_take(r, 8);
    uint64_t v = 0;
    int i;
    if (!p)
        return 0;
    for (i = 0; i < 8; i++)
        v = (v << 8) | p[i];
    return v;
}

/** Read a big-endian i4 (two's complement). Since: 1.0 */
static inline int32_t ddm_read_i4(ddm_reader *r)
{
    uint32_t u = ddm_read_u4(r);
    return u <= 0x7fffffffu ? (int32_t)u : (int32_t)(u - 0x80000000u) - 0x7fffffff - 1;
}

/** Read a little-endian unsigned integer of @width bytes (1..8); for NHGT. Since: 1.0 */
static inline uint64_t ddm_read_le(ddm_reader *r, unsigned width)
{
    const uint8_t *p;
    uint64_t v = 0;
    unsigned i;
    if (width == 0 || width > 8) {
        r->overrun = 1;
        return 0;
    }
    p = ddm_internal_reader_take(r, width);
    if (!p)
        return 0;
    for (i = width; i > 0; i--)
        v = (v << 8) | p[i - 1];
    return v;
}

/** Borrow @n bytes (valid as long as the underlying data); NULL on overrun. Since: 1.0 */
static inline const uint8_t *ddm_read_bytes(ddm_reader *r, size_t n)
{
    return ddm_internal_reader_take(r, n);
}

/** Skip @n bytes; returns 0, or -1 on overrun. Since: 1.0 */
static inline int ddm_read_skip(ddm_reader *r, size_t n)
{
    (void)ddm_internal_reader_take(r, n);
    return r->overrun ? -1 : 0;
}

/* ----------------------------------------------------------------- strings */

/* Append code point @cp as UTF-8 to dst (bounded by cap), counting in *len. */
static inline void ddm_internal_put_utf8(uint32_t cp, char *dst, size_t cap, size_t *len)
{
    unsigned char b[4];
    size_t n, i;
    if (cp < 0x80) {
        b[0] = (unsigned char)cp;
        n = 1;
    } else if (cp < 0x800) {
        b[0] = (unsigned char)(0xC0 | (cp >> 6));
        b[1] = (unsigned char)(0x80 | (cp & 0x3F));
        n = 2;
    } else if (cp < 0x10000) {
        b[0] = (unsigned char)(0xE0 | (cp >> 12));
        b[1] = (unsigned char)(0x80 | ((cp >> 6) & 0x3F));
        b[2] = (unsigned char)(0x80 | (cp & 0x3F));
        n = 3;
    } else {
        b[0] = (unsigned char)(0xF0 | (cp >> 18));
        b[1] = (unsigned char)(0x80 | ((cp >> 12) & 0x3F));
        b[2] = (unsigned char)(0x80 | ((cp >> 6) & 0x3F));
        b[3] = (unsigned char)(0x80 | (cp & 0x3F));
        n = 4;
    }
    for (i = 0; i < n; i++, (*len)++)
        if (dst && *len + 1 < cap)
            dst[*len] = (char)b[i];
}

#define DDM_REPLACEMENT_CHAR 0xFFFDu

/**
 * Convert @nbytes of UTF-16BE at @src to UTF-8 in @dst (capacity @cap,
 * always NUL-terminated when cap > 0; output is cut at a byte boundary if
 * it does not fit, so size @cap from the return value). Returns the length
 * the full conversion needs, excluding the NUL. Lone surrogates, a final
 * odd byte and U+0000 become U+FFFD. Since: 1.0
 */
static inline size_t ddm_utf16be_to_utf8(const uint8_t *src, size_t nbytes, char *dst, size_t cap)
{
    size_t i = 0, len = 0;
    while (i + 1 < nbytes) {
        uint32_t u;
        /* U+0001..U+007F, most of what VMs send (names, FEAT's feature
         * names): one byte each, without the general path's branches */
        if (src[i] == 0 && (uint8_t)(src[i + 1] - 1u) < 0x7Fu) {
            if (dst && len + 1 < cap)
                dst[len] = (char)src[i + 1];
            len++;
            i += 2;
            continue;
        }
        u = ((uint32_t)src[i] << 8) | src[i + 1];
        i += 2;
        if (u >= 0xD800 && u <= 0xDBFF) {
            uint32_t lo = i + 1 < nbytes ? (((uint32_t)src[i] << 8) | src[i + 1]) : 0;
            if (lo >= 0xDC00 && lo <= 0xDFFF) {
                i += 2;
                u = 0x10000 + ((u - 0xD800) << 10) + (lo - 0xDC00);
            } else {
                u = DDM_REPLACEMENT_CHAR;
            }
        } else if ((u >= 0xDC00 && u <= 0xDFFF) || u == 0) {
            u = DDM_REPLACEMENT_CHAR;
        }
        ddm_internal_put_utf8(u, dst, cap, &len);
    }
    if (i < nbytes)
        ddm_internal_put_utf8(DDM_REPLACEMENT_CHAR, dst, cap, &len);
    if (dst && cap > 0)
        dst[len < cap ? len : cap - 1] = '\0';
    return len;
}

/** UTF-16BE bytes to a new UTF-8 string (caller frees); NULL only if out of memory. Since: 1.0 */
static inline char *ddm_utf16be_dup(const uint8_t *src, size_t nbytes)
{
    size_t need = ddm_utf16be_to_utf8(src, nbytes, NULL, 0);
    char *s = (char *)malloc(need + 1);
    if (s)
        ddm_utf16be_to_utf8(src, nbytes, s, need + 1);
    return s;
}

/* Decode one code point from UTF-8 at s[*i] (n bytes); invalid -> U+FFFD. */
static inline uint32_t ddm_internal_utf8_next(const unsigned char *s, size_t n, size_t *i)
{
    unsigned char c = s[*i];
    uint32_t cp, min;
    size_t k, extra;
    if (c < 0x80) {
        (*i)++;
        return c;
    } else if (c >= 0xC2 && c <= 0xDF) {
        extra = 1; cp = c & 0x1F; min = 0x80;
    } else if (c >= 0xE0 && c <= 0xEF) {
        extra = 2; cp = c & 0x0F; min = 0x800;
    } else if (c >= 0xF0 && c <= 0xF4) {
        extra = 3; cp = c & 0x07; min = 0x10000;
    } else {
        (*i)++;
        return DDM_REPLACEMENT_CHAR;
    }
    for (k = 1; k <= extra; k++) {
        if (*i + k >= n || (s[*i + k] & 0xC0) != 0x80) {
            *i += k;
            return DDM_REPLACEMENT_CHAR;
        }
        cp = (cp << 6) | (s[*i + k] & 0x3F);
    }
    *i += extra + 1;
    if (cp < min || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF))
        return DDM_REPLACEMENT_CHAR;
    return cp;
}

/**
 * Convert NUL-terminated UTF-8 @s to UTF-16BE in @dst (capacity @cap bytes;
 * may be NULL to measure). Invalid UTF-8 becomes U+FFFD. Returns the number
 * of UTF-16 code units the full conversion needs. Since: 1.0
 */
static inline size_t ddm_utf8_to_utf16be(const char *s, uint8_t *dst, size_t cap)
{
    const unsigned char *u = (const unsigned char *)s;
    size_t n = strlen(s), i = 0, units = 0;
    while (i < n) {
        uint32_t cp = ddm_internal_utf8_next(u, n, &i);
        uint32_t w[2];
        int k, cnt = 1;
        if (cp >= 0x10000) {
            w[0] = 0xD800 + ((cp - 0x10000) >> 10);
            w[1] = 0xDC00 + ((cp - 0x10000) & 0x3FF);
            cnt = 2;
        } else {
            w[0] = cp;
        }
        for (k = 0; k < cnt; k++, units++) {
            if (dst && units * 2 + 1 < cap) {
                dst[units * 2] = (uint8_t)(w[k] >> 8);
                dst[units * 2 + 1] = (uint8_t)w[k];
            }
        }
    }
    return units;
}

/**
 * Read @units UTF-16 code units as a new UTF-8 string (caller frees).
 * NULL on overrun (r->overrun set) or out of memory. Since: 1.0
 */
static inline char *ddm_read_str16(ddm_reader *r, uint32_t units)
{
    const uint8_t *p;
    if ((uint64_t)units * 2 > ddm_reader_remaining(r)) {
        r->overrun = 1;
        return NULL;
    }
    p = ddm_internal_reader_take(r, (size_t)units * 2);
    return p ? ddm_utf16be_dup(p, (size_t)units * 2) : NULL;
}

/** Read an lstr (u4 unit count, then units) as a new UTF-8 string (caller frees); NULL on overrun. Since: 1.0 */
static inline char *ddm_read_lstr(ddm_reader *r)
{
    size_t save = r->pos;
    uint32_t units = ddm_read_u4(r);
    char *s;
    if (r->overrun)
        return NULL;
    s = ddm_read_str16(r, units);
    if (!s)
        r->pos = save;
    return s;
}

/**
 * Where to cut @len bytes of UTF-8 at @s so that at most @max remain: @len
 * itself when it fits, else @max backed off to the start of the character
 * that s[max] continues (at most 3 bytes, the longest a valid sequence can
 * reach back; on invalid input with longer runs of continuation bytes the
 * cut is max - 3). Reads s[max] only when @len > @max. The cut never
 * splits a valid character, so a valid string stays valid; how the core and
 * the test kit cut view strings at DDM_VIEW_MAX_STRING. Since: 1.1
 */
static inline size_t ddm_utf8_cut(const char *s, size_t len, size_t max)
{
    size_t n = max, k;
    if (len <= max)
        return len;
    for (k = 0; k < 3 && n > 0 && ((unsigned char)s[n] & 0xC0) == 0x80; k++)
        n--;
    return n;
}

/* ------------------------------------------------------------------ writer */

/** Default and absolute cap of a writer's buffer when none is given. Since: 1.0 */
#define DDM_WRITER_DEFAULT_MAX ((size_t)64 << 20)

/** A growable output buffer with a hard cap. Since: 1.0 */
typedef struct ddm_writer {
    uint8_t *data; /**< owned until ddm_writer_take() */
    size_t len;    /**< bytes written */
    size_t cap;    /**< bytes allocated */
    size_t max;    /**< never grow past this */
    int error;     /**< set when a write did not fit the cap or memory; sticky */
} ddm_writer;

/** Start an empty writer that never grows past @max bytes (0 = DDM_WRITER_DEFAULT_MAX). Since: 1.0 */
static inline void ddm_writer_init(ddm_writer *w, size_t max)
{
    w->data = NULL;
    w->len = w->cap = 0;
    w->max = max ? max : DDM_WRITER_DEFAULT_MAX;
    w->error = 0;
}

/** Make room for @n more bytes; returns where they go, or NULL (sets error). Since: 1.0 */
static inline uint8_t *ddm_writer_reserve(ddm_writer *w, size_t n)
{
    uint8_t *p;
    if (w->error || n > w->max - w->len) {
        w->error = 1;
        return NULL;
    }
    if (w->len + n > w->cap) {
        size_t ncap = w->cap ? w->cap : (w->max < 64 ? w->max : 64);
        while (ncap < w->len + n)
            ncap = ncap > w->max / 2 ? w->max : ncap * 2;
        p = (uint8_t *)realloc(w->data, ncap);
        if (!p) {
            w->error = 1;
            return NULL;
        }
        w->data = p;
        w->cap = ncap;
    }
    p = w->data + w->len;
    w->len += n;
    return p;
}

static inline void ddm_write_bytes(ddm_writer *w, const void *src, size_t n)
{
    uint8_t *p = ddm_writer_reserve(w, n);
    if (p && n)
        memcpy(p, src, n);
}

static inline void ddm_write_u1(ddm_writer *w, uint8_t v)
{
    uint8_t *p = ddm_writer_reserve(w, 1);
    if (p)
        p[0] = v;
}

static inline void ddm_write_u2(ddm_writer *w, uint16_t v)
{
    uint8_t *p = ddm_writer_reserve(w, 2);
    if (p) {
        p[0] = (uint8_t)(v >> 8);
        p[1] = (uint8_t)v;
    }
}

/* Store a big-endian u4 at p (4 bytes). */
static inline void ddm_put_u4(uint8_t *p, uint32_t v)
{
    p[0] = (uint8_t)(v >> 24);
    p[1] = (uint8_t)(v >> 16);
    p[2] = (uint8_t)(v >> 8);
    p[3] = (uint8_t)v;
}

static inline void ddm_write_u4(ddm_writer *w, uint32_t v)
{
    uint8_t *p = ddm_writer_reserve(w, 4);
    if (p)
        ddm_put_u4(p, v);
}

static inline void ddm_write_u8(ddm_writer *w, uint64_t v)
{
    ddm_write_u4(w, (uint32_t)(v >> 32));
    ddm_write_u4(w, (uint32_t)v);
}

/** Write @v as a little-endian integer of @width bytes (1..8); for NHGT. Since: 1.0 */
static inline void ddm_write_le(ddm_writer *w, uint64_t v, unsigned width)
{
    uint8_t *p;
    unsigned i;
    if (width == 0 || width > 8) {
        w->error = 1;
        return;
    }
    p = ddm_writer_reserve(w, width);
    if (p)
        for (i = 0; i < width; i++)
            p[i] = (uint8_t)(v >> (8 * i));
}

/** Overwrite a u4 written earlier at @offset (e.g. a length filled in last). Since: 1.0 */
static inline void ddm_writer_patch_u4(ddm_writer *w, size_t offset, uint32_t v)
{
    if (!w->error && offset <= w->len && w->len - offset >= 4)
        ddm_put_u4(w->data + offset, v);
    else
        w->error = 1;
}

/** Write UTF-8 @s as UTF-16BE units without a count; returns the unit count. Since: 1.0 */
static inline uint32_t ddm_write_str16(ddm_writer *w, const char *s)
{
    size_t units = ddm_utf8_to_utf16be(s, NULL, 0);
    uint8_t *p = ddm_writer_reserve(w, units * 2);
    if (p)
        ddm_utf8_to_utf16be(s, p, units * 2);
    return (uint32_t)units;
}

/** Write UTF-8 @s as an lstr (u4 unit count, then UTF-16BE units). Since: 1.0 */
static inline void ddm_write_lstr(ddm_writer *w, const char *s)
{
    ddm_write_u4(w, (uint32_t)ddm_utf8_to_utf16be(s, NULL, 0));
    ddm_write_str16(w, s);
}

/**
 * Hand the buffer over: returns the bytes (caller frees with free()) and
 * their count in *len, or NULL if an error occurred (the buffer is freed).
 * The writer is left empty and reusable. Since: 1.0
 */
static inline uint8_t *ddm_writer_take(ddm_writer *w, size_t *len)
{
    uint8_t *p = w->data;
    if (w->error) {
        free(p);
        p = NULL;
    }
    if (len)
        *len = p ? w->len : 0;
    w->data = NULL;
    w->len = w->cap = 0;
    w->error = 0;
    return p;
}

/** Free the buffer and reset the writer. Since: 1.0 */
static inline void ddm_writer_reset(ddm_writer *w)
{
    free(w->data);
    w->data = NULL;
    w->len = w->cap = 0;
    w->error = 0;
}

#ifdef __cplusplus
}
#endif

#endif /* DDMON_BYTES_H */
