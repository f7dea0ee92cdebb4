/* SPDX-License-Identifier: Apache-2.0
 *
 * Unit tests of the SDK's sdk/include/ddmon/bytes.h (reader, writer,
 * UTF-16BE <-> UTF-8, lstr) and chunk.h (type names): overrun at every
 * position for every read width, writer caps, string edge cases, buffers
 * too small for the output.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>
#include <glib.h>

#include <ddmon/bytes.h>
#include <ddmon/chunk.h>

#include "test-util.h"

static const uint8_t seq[16] = { 0x01, 0x82, 0x03, 0x84, 0x05, 0x86, 0x07, 0x88,
                                 0x09, 0x8A, 0x0B, 0x8C, 0x0D, 0x8E, 0x0F, 0x90 };

/* Big-endian value of seq[pos..pos+width). */
static uint64_t be_at(size_t pos, unsigned width)
{
    uint64_t v = 0;
    unsigned i;
    for (i = 0; i < width; i++)
        v = (v << 8) | seq[pos + i];
    return v;
}

static uint64_t le_at(size_t pos, unsigned width)
{
    uint64_t v = 0;
    unsigned i;
    for (i = width; i > 0; i--)
        v = (v << 8) | seq[pos + i - 1];
    return v;
}

/* ------------------------------------------------------------- reader */

typedef enum { R_U1, R_U2, R_U4, R_U8, R_I4, R_LE, R_BYTES, R_SKIP } ReadKind;

typedef struct {
    const char *name;
    ReadKind kind;
    unsigned width;
} ReadOp;

static const ReadOp read_ops[] = {
    { "u1", R_U1, 1 },       { "u2", R_U2, 2 },       { "u4", R_U4, 4 },
    { "u8", R_U8, 8 },       { "i4", R_I4, 4 },       { "le1", R_LE, 1 },
    { "le2", R_LE, 2 },      { "le3", R_LE, 3 },      { "le4", R_LE, 4 },
    { "le5", R_LE, 5 },      { "le6", R_LE, 6 },      { "le7", R_LE, 7 },
    { "le8", R_LE, 8 },      { "bytes0", R_BYTES, 0 }, { "bytes3", R_BYTES, 3 },
    { "bytes16", R_BYTES, 16 }, { "skip1", R_SKIP, 1 }, { "skip5", R_SKIP, 5 },
};

/* Do one read; returns the value (bytes: 1 if non-NULL) and whether it
 * reported success in *ok (pointer/skip results). */
static uint64_t do_read(ddm_reader *r, const ReadOp *op, int *ok)
{
    const uint8_t *p;
    uint64_t v = 0;

    switch (op->kind) {
    case R_U1:
        v = ddm_read_u1(r);
        break;
    case R_U2:
        v = ddm_read_u2(r);
        break;
    case R_U4:
        v = ddm_read_u4(r);
        break;
    case R_U8:
        v = ddm_read_u8(r);
        break;
    case R_I4:
        v = (uint32_t)ddm_read_i4(r);
        break;
    case R_LE:
        v = ddm_read_le(r, op->width);
        break;
    case R_BYTES:
        p = ddm_read_bytes(r, op->width);
        *ok = p != NULL;
        if (p)
            assert_ptr_equal(p, r->data + r->pos - op->width);
        return p != NULL;
    case R_SKIP:
        *ok = ddm_read_skip(r, op->width) == 0;
        return *ok;
    }
    /* integers say nothing themselves: success is "no overrun" */
    *ok = ddm_reader_ok(r);
    return v;
}

static uint64_t expected_value(const ReadOp *op, size_t pos)
{
    switch (op->kind) {
    case R_LE:
        return le_at(pos, op->width);
    case R_BYTES:
    case R_SKIP:
        return 1;
    default:
        return be_at(pos, op->width);
    }
}

/* For every buffer length, every start position and every read: a read
 * that fits returns the value and advances; one that does not returns 0,
 * does not move, and leaves overrun set for good. */
static void test_reader_overrun_every_position(void **state)
{
    size_t len, pos, k;
    (void)state;

    for (k = 0; k < G_N_ELEMENTS(read_ops); k++) {
        const ReadOp *op = &read_ops[k];
        for (len = 0; len <= sizeof seq; len++) {
            for (pos = 0; pos <= len; pos++) {
                ddm_reader r;
                uint64_t v;
                int ok;

                ddm_reader_init(&r, seq, len);
                assert_int_equal(ddm_read_skip(&r, pos), 0);
                assert_int_equal(r.pos, pos);
                assert_int_equal(ddm_reader_remaining(&r), len - pos);
                v = do_read(&r, op, &ok);
                if (pos + op->width <= len) {
                    assert_true(ok);
                    assert_int_equal(v, expected_value(op, pos));
                    assert_int_equal(r.pos, pos + op->width);
                    assert_true(ddm_reader_ok(&r));
                } else {
                    assert_false(ok);
                    assert_int_equal(v, 0);
                    assert_int_equal(r.pos, pos);
                    assert_false(ddm_reader_ok(&r));
                    /* sticky: even a read that would fit now fails */
                    assert_int_equal(ddm_read_u1(&r), 0);
                    assert_null(ddm_read_bytes(&r, 0));
                    assert_int_equal(r.pos, pos);
                    assert_false(ddm_reader_ok(&r));
                }
            }
        }
    }
}

/* Read the whole buffer in steps of each width: overrun exactly at the end. */
static void test_reader_sequential(void **state)
{
    size_t k, len;
    (void)state;

    for (k = 0; k < G_N_ELEMENTS(read_ops); k++) {
        const ReadOp *op = &read_ops[k];
        if (op->width == 0)
            continue;
        for (len = 0; len <= sizeof seq; len++) {
            ddm_reader r;
            size_t reads = 0;
            int ok = 1;

            ddm_reader_init(&r, seq, len);
            while (ddm_reader_ok(&r)) {
                size_t before = r.pos;
                uint64_t v = do_read(&r, op, &ok);
                if (ok && ddm_reader_ok(&r)) {
                    assert_int_equal(v, expected_value(op, before));
                    reads++;
                } else {
                    assert_int_equal(r.pos, before);
                }
            }
            assert_int_equal(reads, len / op->width);
            assert_int_equal(r.pos, reads * op->width);
        }
    }
}

static void test_reader_values(void **state)
{
    static const uint8_t b[] = { 0xFF, 0xFF, 0xFF, 0xFF, 0x80, 0, 0, 0, 0x7F, 0xFF, 0xFF, 0xFF };
    ddm_reader r;
    (void)state;

    ddm_reader_init(&r, b, sizeof b);
    assert_int_equal(ddm_read_i4(&r), -1);
    assert_int_equal(ddm_read_i4(&r), INT32_MIN);
    assert_int_equal(ddm_read_i4(&r), INT32_MAX);
    assert_true(ddm_reader_ok(&r));

    ddm_reader_init(&r, b, sizeof b);
    assert_true(ddm_read_u8(&r) == 0xFFFFFFFF80000000ull);
    ddm_reader_init(&r, b + 4, 4);
    assert_int_equal(ddm_read_le(&r, 4), 0x80);

    /* NHGT-style little-endian widths */
    ddm_reader_init(&r, seq, sizeof seq);
    assert_true(ddm_read_le(&r, 8) == 0x8807860584038201ull);
    assert_int_equal(ddm_read_le(&r, 2), 0x8A09);
    assert_true(ddm_reader_ok(&r));
}

static void test_reader_le_bad_width(void **state)
{
    static const unsigned widths[] = { 0, 9, 16, 1000 };
    size_t i;
    (void)state;

    for (i = 0; i < G_N_ELEMENTS(widths); i++) {
        ddm_reader r;
        ddm_reader_init(&r, seq, sizeof seq);
        assert_int_equal(ddm_read_le(&r, widths[i]), 0);
        assert_false(ddm_reader_ok(&r));
        assert_int_equal(r.pos, 0);
    }
}

static void test_reader_null_and_huge(void **state)
{
    ddm_reader r;
    (void)state;

    ddm_reader_init(&r, NULL, 100);
    assert_int_equal(ddm_reader_remaining(&r), 0);
    assert_int_equal(ddm_read_u1(&r), 0);
    assert_false(ddm_reader_ok(&r));

    /* a skip or borrow so large that pos + n would wrap */
    ddm_reader_init(&r, seq, sizeof seq);
    (void)ddm_read_u1(&r);
    assert_int_equal(ddm_read_skip(&r, SIZE_MAX), -1);
    assert_int_equal(r.pos, 1);
    ddm_reader_init(&r, seq, sizeof seq);
    (void)ddm_read_u1(&r);
    assert_null(ddm_read_bytes(&r, SIZE_MAX - 0));
    assert_int_equal(r.pos, 1);
}

/* ------------------------------------------------------------- writer */

static void test_writer_values(void **state)
{
    ddm_writer w;
    size_t len, want_len;
    uint8_t *p;
    uint8_t *want = test_util_unhex("ab | 01 02 | 01 02 03 04 | 01 02 03 04 05 06 07 08 |"
                                    "08 07 06 | 78 56 34 12 00 00 00 00 | 61 62",
                                    &want_len);
    (void)state;

    ddm_writer_init(&w, 0);
    assert_int_equal(w.max, DDM_WRITER_DEFAULT_MAX);
    ddm_write_u1(&w, 0xAB);
    ddm_write_u2(&w, 0x0102);
    ddm_write_u4(&w, 0x01020304u);
    ddm_write_u8(&w, 0x0102030405060708ull);
    ddm_write_le(&w, 0x060708, 3);
    ddm_write_le(&w, 0x12345678, 8);
    ddm_write_bytes(&w, "ab", 2);
    ddm_write_bytes(&w, NULL, 0);
    p = ddm_writer_take(&w, &len);
    assert_non_null(p);
    assert_bytes_equal(p, len, want, want_len);
    free(p);
    g_free(want);

    /* the writer is reusable after take */
    assert_null(w.data);
    assert_int_equal(w.len, 0);
    ddm_write_u1(&w, 1);
    p = ddm_writer_take(&w, &len);
    assert_int_equal(len, 1);
    free(p);
}

/* A writer capped at every size from 0 to 20 receiving 20 bytes in writes
 * of each width: error exactly when a write does not fit; sticky; take NULL. */
static void test_writer_cap(void **state)
{
    static const unsigned widths[] = { 1, 2, 3, 4, 8 };
    size_t max, wi;
    (void)state;

    for (wi = 0; wi < G_N_ELEMENTS(widths); wi++) {
        unsigned width = widths[wi];
        for (max = 1; max <= 20; max++) {
            ddm_writer w;
            size_t written = 0, len = 99;
            uint8_t *p;

            ddm_writer_init(&w, max);
            while (written + width <= 24) {
                switch (width) {
                case 1: ddm_write_u1(&w, 1); break;
                case 2: ddm_write_u2(&w, 1); break;
                case 4: ddm_write_u4(&w, 1); break;
                case 8: ddm_write_u8(&w, 1); break;
                default: ddm_write_le(&w, 1, width); break;
                }
                if (written + width <= max) {
                    assert_false(w.error);
                    written += width;
                    assert_int_equal(w.len, written);
                } else {
                    assert_true(w.error);
                    break;
                }
            }
            assert_true(w.error);
            /* sticky: a byte that would fit is refused too */
            ddm_write_bytes(&w, "", 0);
            assert_null(ddm_writer_reserve(&w, 0));
            assert_true(w.error);
            p = ddm_writer_take(&w, &len);
            assert_null(p);
            assert_int_equal(len, 0);
            /* take resets the error */
            assert_false(w.error);
            ddm_write_u1(&w, 7);
            p = ddm_writer_take(&w, &len);
            assert_non_null(p);
            assert_int_equal(len, 1);
            free(p);
        }
    }
}

static void test_writer_le_bad_width_and_reset(void **state)
{
    ddm_writer w;
    size_t len;
    (void)state;

    ddm_writer_init(&w, 100);
    ddm_write_u4(&w, 1);
    ddm_write_le(&w, 1, 0);
    assert_true(w.error);
    assert_null(ddm_writer_take(&w, &len));

    ddm_writer_init(&w, 100);
    ddm_write_le(&w, 1, 9);
    assert_true(w.error);
    ddm_writer_reset(&w);
    assert_false(w.error);
    assert_null(w.data);
    ddm_write_u2(&w, 0x4142);
    assert_int_equal(w.len, 2);
    ddm_writer_reset(&w);
}

static void test_writer_patch_u4(void **state)
{
    ddm_writer w;
    size_t len;
    uint8_t *p;
    (void)state;

    ddm_writer_init(&w, 0);
    ddm_write_u4(&w, 0);          /* length placeholder */
    ddm_write_bytes(&w, "xyz", 3);
    ddm_writer_patch_u4(&w, 0, (uint32_t)w.len - 4);
    ddm_writer_patch_u4(&w, 3, 0x61626364u); /* last 4 bytes: fits exactly */
    assert_false(w.error);
    p = ddm_writer_take(&w, &len);
    assert_bytes_equal(p, len, "\x00\x00\x00\x61\x62\x63\x64", 7);
    free(p);

    static const size_t bad[] = { 4, 5, 7, 100, SIZE_MAX };
    size_t i;
    for (i = 0; i < G_N_ELEMENTS(bad); i++) {
        ddm_writer_init(&w, 0);
        ddm_write_bytes(&w, "1234567", 7);
        ddm_writer_patch_u4(&w, bad[i], 1);
        assert_true(w.error);
        assert_null(ddm_writer_take(&w, &len));
    }

    /* patching an empty writer */
    ddm_writer_init(&w, 0);
    ddm_writer_patch_u4(&w, 0, 1);
    assert_true(w.error);
    ddm_writer_reset(&w);
}

/* ----------------------------------------------------------- UTF-16 */

typedef struct {
    const char *what;
    const char *utf16_hex;
    const char *utf8;
} Utf16Case;

static const Utf16Case utf16_cases[] = {
    { "empty", "", "" },
    { "ASCII", "00 41 00 42", "AB" },
    { "ASCII's edges, then U+0080", "00 01 00 7f 00 80", "\x01\x7F\xC2\x80" },
    { "ASCII after Latin-1", "00 e9 00 41", "\xC3\xA9" "A" },
    { "Latin-1", "00 e9", "\xC3\xA9" },
    { "BMP (euro)", "20 ac", "\xE2\x82\xAC" },
    { "last BMP before surrogates", "d7 ff", "\xED\x9F\xBF" },
    { "first after surrogates", "e0 00", "\xEE\x80\x80" },
    { "U+FFFF", "ff ff", "\xEF\xBF\xBF" },
    { "surrogate pair U+1F600", "d8 3d de 00", "\xF0\x9F\x98\x80" },
    { "surrogate pair U+10000", "d8 00 dc 00", "\xF0\x90\x80\x80" },
    { "surrogate pair U+10FFFF", "db ff df ff", "\xF4\x8F\xBF\xBF" },
    { "lone high surrogate", "d8 3d 00 41", "\xEF\xBF\xBD" "A" },
    { "lone low surrogate", "de 00 00 41", "\xEF\xBF\xBD" "A" },
    { "high at end", "00 41 d8 3d", "A\xEF\xBF\xBD" },
    { "high, high, low", "d8 3d d8 3d de 00", "\xEF\xBF\xBD\xF0\x9F\x98\x80" },
    { "low, high", "dc 00 d8 00", "\xEF\xBF\xBD\xEF\xBF\xBD" },
    { "odd byte count", "00 41 00", "A\xEF\xBF\xBD" },
    { "single byte", "41", "\xEF\xBF\xBD" },
    { "high then odd byte", "d8 3d de", "\xEF\xBF\xBD\xEF\xBF\xBD" },
    { "U+0000", "00 00", "\xEF\xBF\xBD" },
    { "U+0000 in the middle", "00 61 00 00 00 62", "a\xEF\xBF\xBD" "b" },
};

static void test_utf16_to_utf8(void **state)
{
    size_t i;
    (void)state;

    for (i = 0; i < G_N_ELEMENTS(utf16_cases); i++) {
        const Utf16Case *c = &utf16_cases[i];
        size_t n, need;
        uint8_t *u16 = test_util_unhex(c->utf16_hex, &n);
        char buf[64];
        char *dup;

        print_message("# case: %s\n", c->what);
        need = ddm_utf16be_to_utf8(u16, n, NULL, 0);
        assert_int_equal(need, strlen(c->utf8));
        assert_int_equal(ddm_utf16be_to_utf8(u16, n, buf, sizeof buf), need);
        assert_string_equal(buf, c->utf8);
        assert_true(g_utf8_validate(buf, -1, NULL));
        dup = ddm_utf16be_dup(u16, n);
        assert_string_equal(dup, c->utf8);
        free(dup);
        g_free(u16);
    }
}

/* The reverse direction for the valid cases gives the same UTF-16 back. */
static void test_utf8_to_utf16_valid(void **state)
{
    size_t i;
    (void)state;

    for (i = 0; i < G_N_ELEMENTS(utf16_cases); i++) {
        const Utf16Case *c = &utf16_cases[i];
        size_t n;
        uint8_t *u16 = test_util_unhex(c->utf16_hex, &n);
        uint8_t buf[64];
        size_t units;

        if (strstr(c->utf8, "\xEF\xBF\xBD")) { /* replaced: not reversible */
            g_free(u16);
            continue;
        }
        units = ddm_utf8_to_utf16be(c->utf8, NULL, 0);
        assert_int_equal(units * 2, n);
        assert_int_equal(ddm_utf8_to_utf16be(c->utf8, buf, sizeof buf), units);
        assert_bytes_equal(buf, units * 2, u16, n);
        g_free(u16);
    }
}

typedef struct {
    const char *what;
    const char *utf8;
    const char *utf16_hex;
} Utf8Case;

static const Utf8Case utf8_cases[] = {
    { "overlong NUL (C0 80)", "\xC0\x80", "ff fd ff fd" },
    { "overlong 3-byte '/'", "\xE0\x80\xAF", "ff fd" },
    { "overlong 4-byte euro", "\xF0\x82\x82\xAC", "ff fd" },
    { "truncated 3-byte at end", "a\xE2\x82", "00 61 ff fd" },
    { "truncated 3-byte then ASCII", "\xE2\x82" "b", "ff fd 00 62" },
    { "truncated 4-byte at end", "\xF0\x9F\x98", "ff fd" },
    { "above U+10FFFF (F4 90 80 80)", "\xF4\x90\x80\x80", "ff fd" },
    { "lead F5", "\xF5" "a", "ff fd 00 61" },
    { "lead FF", "\xFF", "ff fd" },
    { "encoded high surrogate", "\xED\xA0\x80", "ff fd" },
    { "encoded low surrogate", "\xED\xBF\xBF", "ff fd" },
    { "lone continuation", "\x80" "a", "ff fd 00 61" },
    { "valid around invalid", "\xC3\xA9\xC0\xC3\xA9", "00 e9 ff fd 00 e9" },
    { "4-byte", "\xF0\x9F\x98\x80", "d8 3d de 00" },
};

static void test_utf8_to_utf16_invalid(void **state)
{
    size_t i;
    (void)state;

    for (i = 0; i < G_N_ELEMENTS(utf8_cases); i++) {
        const Utf8Case *c = &utf8_cases[i];
        size_t n, units;
        uint8_t *want = test_util_unhex(c->utf16_hex, &n);
        uint8_t buf[64];

        print_message("# case: %s\n", c->what);
        units = ddm_utf8_to_utf16be(c->utf8, NULL, 0);
        assert_int_equal(units * 2, n);
        assert_int_equal(ddm_utf8_to_utf16be(c->utf8, buf, sizeof buf), units);
        assert_bytes_equal(buf, units * 2, want, n);
        g_free(want);
    }
}

/* Every destination size, with a canary after it: the result is the full
 * length, nothing is written past the size, the output is a prefix. */
static void test_utf16_to_utf8_small_dst(void **state)
{
    size_t n, need, cap;
    uint8_t *u16 = test_util_unhex("00 41 00 e9 20 ac d8 3d de 00 00 42", &n);
    char full[64];
    (void)state;

    need = ddm_utf16be_to_utf8(u16, n, full, sizeof full);
    assert_int_equal(need, 1 + 2 + 3 + 4 + 1);
    for (cap = 0; cap <= need + 2; cap++) {
        char buf[64];
        memset(buf, '#', sizeof buf);
        assert_int_equal(ddm_utf16be_to_utf8(u16, n, buf, cap), need);
        if (cap > 0) {
            size_t got = MIN(need, cap - 1);
            assert_int_equal(buf[got], '\0');
            assert_memory_equal(buf, full, got);
        }
        for (size_t k = cap; k < sizeof buf; k++)
            assert_int_equal(buf[k], '#');
    }
    g_free(u16);
}

static void test_utf8_to_utf16_small_dst(void **state)
{
    const char *s = "A\xC3\xA9\xF0\x9F\x98\x80" "B"; /* A é 😀 B: 5 units */
    uint8_t full[16];
    size_t units, cap;
    (void)state;

    units = ddm_utf8_to_utf16be(s, full, sizeof full);
    assert_int_equal(units, 5);
    for (cap = 0; cap <= units * 2 + 2; cap++) {
        uint8_t buf[32];
        size_t whole = MIN(cap / 2, units);
        memset(buf, 0xEE, sizeof buf);
        assert_int_equal(ddm_utf8_to_utf16be(s, buf, cap), units);
        assert_memory_equal(buf, full, whole * 2);
        for (size_t k = whole * 2; k < sizeof buf; k++)
            assert_int_equal(buf[k], 0xEE);
    }
}

/* -------------------------------------------------------------- lstr */

static void test_lstr_round_trip(void **state)
{
    static const struct {
        const char *in;
        const char *out;
        uint32_t units;
    } cases[] = {
        { "", "", 0 },
        { "main", "main", 4 },
        { "Привет", "Привет", 6 },
        { "a\xF0\x9F\x98\x80z", "a\xF0\x9F\x98\x80z", 4 },
        { "bad\xC0\x80", "bad\xEF\xBF\xBD\xEF\xBF\xBD", 5 },
    };
    size_t i;
    (void)state;

    for (i = 0; i < G_N_ELEMENTS(cases); i++) {
        ddm_writer w;
        ddm_reader r;
        size_t len;
        uint8_t *p;
        char *s;

        ddm_writer_init(&w, 0);
        ddm_write_lstr(&w, cases[i].in);
        assert_int_equal(ddm_write_str16(&w, cases[i].in), cases[i].units);
        p = ddm_writer_take(&w, &len);
        assert_int_equal(len, 4 + 4 * cases[i].units);
        assert_int_equal(p[3], cases[i].units);

        ddm_reader_init(&r, p, len);
        s = ddm_read_lstr(&r);
        assert_non_null(s);
        assert_string_equal(s, cases[i].out);
        free(s);
        s = ddm_read_str16(&r, cases[i].units);
        assert_string_equal(s, cases[i].out);
        free(s);
        assert_int_equal(ddm_reader_remaining(&r), 0);
        assert_true(ddm_reader_ok(&r));
        free(p);
    }
}

static void test_lstr_overrun(void **state)
{
    static const char *const hex[] = {
        "",                            /* no count */
        "00 00 00",                    /* count cut */
        "00 00 00 02 00 41",           /* one unit short */
        "00 00 00 01 00",              /* half a unit */
        "ff ff ff ff 00 41",           /* huge */
        "80 00 00 00 00 41",           /* units * 2 wraps a u4 */
    };
    size_t i;
    (void)state;

    for (i = 0; i < G_N_ELEMENTS(hex); i++) {
        size_t len;
        uint8_t *p = test_util_unhex(hex[i], &len);
        ddm_reader r;

        ddm_reader_init(&r, p, len);
        assert_null(ddm_read_lstr(&r));
        assert_false(ddm_reader_ok(&r));
        assert_int_equal(r.pos, 0);
        g_free(p);
    }

    /* str16 counts that cannot fit */
    {
        ddm_reader r;
        ddm_reader_init(&r, seq, sizeof seq);
        assert_null(ddm_read_str16(&r, 9));
        assert_false(ddm_reader_ok(&r));
        ddm_reader_init(&r, seq, sizeof seq);
        assert_null(ddm_read_str16(&r, 0x80000000u));
        assert_null(ddm_read_str16(&r, 0xFFFFFFFFu));
        assert_int_equal(r.pos, 0);
        ddm_reader_init(&r, seq, sizeof seq);
        {
            char *s = ddm_read_str16(&r, 8);
            assert_non_null(s);
            assert_true(g_utf8_validate(s, -1, NULL));
            free(s);
        }
        assert_true(ddm_reader_ok(&r));
    }
}

/* Every cut of a mixed 1-4 byte string at every max keeps valid UTF-8 and
 * loses less than one character; the bound of 3 holds on invalid input. */
static void test_utf8_cut(void **state)
{
    /* a, e-acute (2), euro (3), U+1F600 (4), z */
    const char *s = "a\xC3\xA9\xE2\x82\xAC\xF0\x9F\x98\x80z";
    const char *junk = "ab\x80\x80\x80\x80\x80\x80";
    size_t len = strlen(s), max;
    (void)state;

    assert_int_equal(ddm_utf8_cut(s, len, len), len);
    assert_int_equal(ddm_utf8_cut(s, len, len + 5), len);
    assert_int_equal(ddm_utf8_cut("", 0, 0), 0);
    assert_int_equal(ddm_utf8_cut(s, len, 0), 0);
    assert_int_equal(ddm_utf8_cut(s, len, 1), 1);
    assert_int_equal(ddm_utf8_cut(s, len, 2), 1);  /* inside e-acute */
    assert_int_equal(ddm_utf8_cut(s, len, 3), 3);
    assert_int_equal(ddm_utf8_cut(s, len, 5), 3);  /* inside the euro */
    assert_int_equal(ddm_utf8_cut(s, len, 6), 6);
    assert_int_equal(ddm_utf8_cut(s, len, 9), 6);  /* 3 bytes back */
    assert_int_equal(ddm_utf8_cut(s, len, 10), 10);
    for (max = 0; max <= len; max++) {
        size_t n = ddm_utf8_cut(s, len, max);
        assert_true(n <= max);
        assert_true(max - n <= 3);
        assert_true(g_utf8_validate(s, (gssize)n, NULL));
    }
    /* invalid: a run of continuation bytes backs off 3 at most, and stops
     * at the first byte (b) that is not one */
    assert_int_equal(ddm_utf8_cut(junk, strlen(junk), 7), 4);
    assert_int_equal(ddm_utf8_cut(junk, strlen(junk), 4), 1);
    assert_int_equal(ddm_utf8_cut(junk, strlen(junk), 3), 1);
}

/* ------------------------------------------------------------ chunk.h */

static void test_chunk_names(void **state)
{
    char buf[5];
    (void)state;

    assert_int_equal(DDM_CHUNK_HELO, 0x48454C4Fu);
    assert_int_equal(DDM_CHUNK('Z', 'L', 'I', 'B'), DDM_CHUNK_ZLIB);
    assert_string_equal(ddm_chunk_name(DDM_CHUNK_FEAT, buf), "FEAT");
    assert_string_equal(ddm_chunk_name(0x00414243u, buf), "?ABC");
    assert_string_equal(ddm_chunk_name(0xFF7F1F20u, buf), "??? ");
    assert_int_equal(ddm_chunk_from_name("HELO"), DDM_CHUNK_HELO);
    assert_int_equal(ddm_chunk_from_name("A_GO"), DDM_CHUNK('A', '_', 'G', 'O'));
    {
        /* in a larger array: gcc's -Warray-bounds cannot see that a short
         * literal ends the loop before name[4] is read */
        char hel[8] = "HEL";
        assert_int_equal(ddm_chunk_from_name(hel), 0);
    }
    assert_int_equal(ddm_chunk_from_name("HELOX"), 0);
    assert_int_equal(ddm_chunk_from_name(""), 0);
    assert_int_equal(ddm_chunk_from_name(NULL), 0);
    assert_int_equal(ddm_chunk_from_name("\x01" "ABC"), 0);
    assert_int_equal(ddm_chunk_from_name("AB\x7F" "C"), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_reader_overrun_every_position),
        cmocka_unit_test(test_reader_sequential),
        cmocka_unit_test(test_reader_values),
        cmocka_unit_test(test_reader_le_bad_width),
        cmocka_unit_test(test_reader_null_and_huge),
        cmocka_unit_test(test_writer_values),
        cmocka_unit_test(test_writer_cap),
        cmocka_unit_test(test_writer_le_bad_width_and_reset),
        cmocka_unit_test(test_writer_patch_u4),
        cmocka_unit_test(test_utf16_to_utf8),
        cmocka_unit_test(test_utf8_to_utf16_valid),
        cmocka_unit_test(test_utf8_to_utf16_invalid),
        cmocka_unit_test(test_utf16_to_utf8_small_dst),
        cmocka_unit_test(test_utf8_to_utf16_small_dst),
        cmocka_unit_test(test_lstr_round_trip),
        cmocka_unit_test(test_lstr_overrun),
        cmocka_unit_test(test_utf8_cut),
        cmocka_unit_test(test_chunk_names),
    };
    return cmocka_run_group_tests_name("bytes", tests, NULL, NULL);
}
