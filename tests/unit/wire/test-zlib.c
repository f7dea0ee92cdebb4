/* SPDX-License-Identifier: Apache-2.0
 *
 * Unit tests of core/wire/zlibchunk.c: round trips, zlib-wrapped and raw
 * deflate, wrong declared sizes, zip bombs over the cap, garbage and
 * truncated data, short payloads.
 *
 * zlibchunk.c is compiled into this program (#include below) with its
 * g_malloc/g_realloc counted, so the tests can prove that a bomb never
 * makes it allocate past min(declared size, cap).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>
#include <glib.h>
#include <zlib.h>

#include "test-util.h"

/* ------------------------------------------------ counted allocations */

static size_t largest_alloc;

static gpointer counted_malloc(gsize n)
{
    largest_alloc = MAX(largest_alloc, n);
    return g_malloc(n);
}

static gpointer counted_realloc(gpointer p, gsize n)
{
    largest_alloc = MAX(largest_alloc, n);
    return g_realloc(p, n);
}

#define g_malloc counted_malloc
#define g_realloc counted_realloc
#include "core/wire/zlibchunk.c"
#undef g_malloc
#undef g_realloc

/* ---------------------------------------------------------- helpers */

/* Deterministic bytes that compress somewhat (text-like). */
static uint8_t *sample(size_t n)
{
    uint8_t *p = g_malloc(n ? n : 1);
    uint32_t x = 12345;
    size_t i;
    for (i = 0; i < n; i++) {
        x = x * 1103515245u + 12345u;
        p[i] = (uint8_t)("abcdefgh ijklmnop\n"[(x >> 16) % 18]);
    }
    return p;
}

/* A ZLIB chunk payload with any declared size, compressed with @window_bits
 * (15 zlib, -15 raw deflate). (g_free) */
static uint8_t *make_payload(uint32_t type, uint32_t declared, const uint8_t *data, size_t len,
                             int window_bits, size_t *out_len)
{
    z_stream zs;
    size_t bound;
    uint8_t *p;

    memset(&zs, 0, sizeof zs);
    assert_int_equal(deflateInit2(&zs, 9, Z_DEFLATED, window_bits, 8, Z_DEFAULT_STRATEGY), Z_OK);
    bound = deflateBound(&zs, (uLong)len);
    p = g_malloc(8 + bound);
    ddm_put_u4(p, type);
    ddm_put_u4(p + 4, declared);
    zs.next_in = (Bytef *)data;
    zs.avail_in = (uInt)len;
    zs.next_out = p + 8;
    zs.avail_out = (uInt)bound;
    assert_int_equal(deflate(&zs, Z_FINISH), Z_STREAM_END);
    *out_len = 8 + zs.total_out;
    deflateEnd(&zs);
    return p;
}

#define TYPE_HPDS DDM_CHUNK('H', 'P', 'D', 'S')
#define MiB ((size_t)1 << 20)

/* ------------------------------------------------------------ tests */

static void test_zlib_round_trip(void **state)
{
    static const size_t sizes[] = { 0, 1, 7, 100, 4096, 65535, 65536, 65537, 300000 };
    size_t i;
    (void)state;

    for (i = 0; i < G_N_ELEMENTS(sizes); i++) {
        uint8_t *data = sample(sizes[i]);
        size_t plen, out_len = 99;
        uint8_t *payload = ddm_zlib_deflate(TYPE_HPDS, data, sizes[i], &plen);
        uint8_t *out = NULL;
        uint32_t type = 0;

        assert_non_null(payload);
        assert_true(plen >= 8);
        assert_int_equal(ddm_zlib_inflate(payload, plen, MiB, &type, &out, &out_len), DDM_ZLIB_OK);
        assert_int_equal(type, TYPE_HPDS);
        assert_non_null(out);
        assert_bytes_equal(out, out_len, data, sizes[i]);

        /* the cap may equal the size exactly */
        g_free(out);
        out = NULL;
        assert_int_equal(ddm_zlib_inflate(payload, plen, sizes[i], &type, &out, &out_len),
                         DDM_ZLIB_OK);
        assert_bytes_equal(out, out_len, data, sizes[i]);
        g_free(out);
        g_free(payload);
        g_free(data);
    }
}

/* ddm_zlib_deflate writes a zlib stream (checked with zlib's own uncompress). */
static void test_zlib_deflate_is_zlib_wrapped(void **state)
{
    uint8_t *data = sample(5000);
    size_t plen;
    uint8_t *payload = ddm_zlib_deflate(DDM_CHUNK_HELO, data, 5000, &plen);
    uint8_t back[5000];
    uLongf back_len = sizeof back;
    (void)state;

    assert_int_equal(payload[0] << 24 | payload[1] << 16 | payload[2] << 8 | payload[3],
                     DDM_CHUNK_HELO);
    assert_int_equal(payload[4] << 24 | payload[5] << 16 | payload[6] << 8 | payload[7], 5000);
    assert_int_equal((payload[8] & 0x0F), 8); /* CM = deflate */
    assert_int_equal(((payload[8] << 8) | payload[9]) % 31, 0);
    assert_int_equal(uncompress(back, &back_len, payload + 8, (uLong)(plen - 8)), Z_OK);
    assert_bytes_equal(back, back_len, data, 5000);
    g_free(payload);
    g_free(data);
}

static void test_zlib_raw_deflate_accepted(void **state)
{
    static const size_t sizes[] = { 0, 1, 1000, 200000 };
    size_t i;
    (void)state;

    for (i = 0; i < G_N_ELEMENTS(sizes); i++) {
        uint8_t *data = sample(sizes[i]);
        size_t plen, out_len;
        uint8_t *payload = make_payload(TYPE_HPDS, (uint32_t)sizes[i], data, sizes[i], -15, &plen);
        uint8_t *out = NULL;
        uint32_t type = 0;

        assert_int_equal(ddm_zlib_inflate(payload, plen, MiB, &type, &out, &out_len), DDM_ZLIB_OK);
        assert_int_equal(type, TYPE_HPDS);
        assert_bytes_equal(out, out_len, data, sizes[i]);
        g_free(out);
        g_free(payload);
        g_free(data);
    }
}

typedef struct {
    const char *what;
    size_t actual;
    uint64_t declared;
    size_t cap;
    DdmZlibResult expect;
} SizeCase;

static const SizeCase size_cases[] = {
    { "declared one smaller", 1000, 999, MiB, DDM_ZLIB_ERR_SIZE },
    { "declared much smaller", 100000, 10, MiB, DDM_ZLIB_ERR_SIZE },
    { "declared 0, data 1 byte", 1, 0, MiB, DDM_ZLIB_ERR_SIZE },
    { "declared one larger", 1000, 1001, MiB, DDM_ZLIB_ERR_SIZE },
    { "declared much larger", 1000, 500000, MiB, DDM_ZLIB_ERR_SIZE },
    { "declared 1, data empty", 0, 1, MiB, DDM_ZLIB_ERR_SIZE },
    { "declared == cap, data smaller", 1000, 4096, 4096, DDM_ZLIB_ERR_SIZE },
    { "declared over the cap", 1000, 1001, 1000, DDM_ZLIB_ERR_TOO_BIG },
    { "declared 0xFFFFFFFF", 1000, 0xFFFFFFFFu, MiB, DDM_ZLIB_ERR_TOO_BIG },
    { "declared small, data over the cap", 5000, 10, 4096, DDM_ZLIB_ERR_SIZE },
    { "declared == cap, data over the cap", 5000, 4096, 4096, DDM_ZLIB_ERR_SIZE },
    { "declared fine, data one over the cap", 4097, 4096, 4096, DDM_ZLIB_ERR_SIZE },
};

static void test_zlib_wrong_declared_size(void **state)
{
    size_t i;
    (void)state;

    for (i = 0; i < G_N_ELEMENTS(size_cases); i++) {
        const SizeCase *c = &size_cases[i];
        int wb;

        print_message("# case: %s\n", c->what);
        for (wb = -15; wb <= 15; wb += 30) {
            uint8_t *data = sample(c->actual);
            size_t plen, out_len = 77;
            uint8_t *payload =
                make_payload(TYPE_HPDS, (uint32_t)c->declared, data, c->actual, wb, &plen);
            uint8_t *out = (uint8_t *)"untouched";

            largest_alloc = 0;
            assert_int_equal(ddm_zlib_inflate(payload, plen, c->cap, NULL, &out, &out_len),
                             c->expect);
            assert_null(out);
            assert_int_equal(out_len, 0);
            assert_true(largest_alloc <= MIN(c->declared, (uint64_t)c->cap) ||
                        largest_alloc <= 1);
            g_free(payload);
            g_free(data);
        }
    }
}

/* Zip bombs: a few KiB that inflate to 64 MiB. A declared size over the cap
 * is TOO_BIG before anything inflates; under it, inflate stops one byte past
 * the declared size (SIZE); no allocation exceeds min(declared, cap). */
static void test_zlib_bomb(void **state)
{
    const size_t bomb = 64 * MiB;
    static const uint32_t declared[] = { 0, 100, 4096, 65536, 1u << 20, 64u << 20, 0xFFFFFFFFu };
    const size_t cap = MiB;
    uint8_t *zeros = g_malloc0(bomb);
    size_t plen, i;
    uint8_t *payload = make_payload(TYPE_HPDS, 0, zeros, bomb, 15, &plen);
    (void)state;

    g_free(zeros);
    assert_true(plen < 100000); /* it is a bomb: tiny in, huge out */
    for (i = 0; i < G_N_ELEMENTS(declared); i++) {
        uint8_t *out = NULL;
        size_t out_len;

        ddm_put_u4(payload + 4, declared[i]);
        largest_alloc = 0;
        assert_int_equal(ddm_zlib_inflate(payload, plen, cap, NULL, &out, &out_len),
                         declared[i] > cap ? DDM_ZLIB_ERR_TOO_BIG : DDM_ZLIB_ERR_SIZE);
        assert_null(out);
        assert_true(largest_alloc <= MIN((size_t)declared[i], cap));
    }
    g_free(payload);
}

/* A big declared size on a few bytes of data: the output buffer grows with
 * what inflates (from 64 KiB), not with what the peer claims. */
static void test_zlib_declared_size_not_trusted(void **state)
{
    uint8_t *data = sample(10);
    size_t plen, out_len;
    uint8_t *payload = make_payload(TYPE_HPDS, 4 * MiB, data, 10, 15, &plen);
    uint8_t *out = NULL;
    (void)state;

    largest_alloc = 0;
    assert_int_equal(ddm_zlib_inflate(payload, plen, 4 * MiB, NULL, &out, &out_len),
                     DDM_ZLIB_ERR_SIZE);
    assert_null(out);
    assert_true(largest_alloc <= 64 * 1024);
    g_free(payload);
    g_free(data);
}

/* The work is bounded by the declared size, not by the cap: a stream that
 * inflates 256 KiB of zeros and then turns to garbage, under a claim of 16
 * bytes, is a size mismatch found at byte 17; inflating on (up to the cap)
 * would reach the garbage and call it bad data. */
static void test_zlib_stops_past_declared(void **state)
{
    const size_t good = 256 * 1024;
    uint8_t *zeros = g_malloc0(good);
    uint8_t deflated[4096];
    uint8_t payload[8 + sizeof deflated + 16];
    z_stream zs;
    uint8_t *out = NULL;
    size_t out_len, dlen;
    (void)state;

    memset(&zs, 0, sizeof zs);
    assert_int_equal(deflateInit(&zs, 9), Z_OK);
    zs.next_in = zeros;
    zs.avail_in = (uInt)good;
    zs.next_out = deflated;
    zs.avail_out = sizeof deflated;
    assert_int_equal(deflate(&zs, Z_FULL_FLUSH), Z_OK); /* no end: the garbage follows */
    assert_int_equal(zs.avail_in, 0);
    dlen = sizeof deflated - zs.avail_out;
    deflateEnd(&zs);
    g_free(zeros);

    ddm_put_u4(payload, TYPE_HPDS);
    memcpy(payload + 8, deflated, dlen);
    memset(payload + 8 + dlen, 0xff, 16); /* an invalid block type */
    ddm_put_u4(payload + 4, 16);
    assert_int_equal(ddm_zlib_inflate(payload, 8 + dlen + 16, 64 * MiB, NULL, &out, &out_len),
                     DDM_ZLIB_ERR_SIZE);
    assert_null(out);
    /* The same bytes claiming the whole 256 KiB reach the garbage. */
    ddm_put_u4(payload + 4, (uint32_t)good);
    assert_int_equal(ddm_zlib_inflate(payload, 8 + dlen + 16, 64 * MiB, NULL, &out, &out_len),
                     DDM_ZLIB_ERR_DATA);
    assert_null(out);
}

/* A valid stream of exactly the cap is fine, and allocates just that. */
static void test_zlib_exactly_cap_allocates_only_cap(void **state)
{
    uint8_t *zeros = g_malloc0(4 * MiB);
    size_t plen, out_len;
    uint8_t *payload = make_payload(TYPE_HPDS, 4 * MiB, zeros, 4 * MiB, 15, &plen);
    uint8_t *out = NULL;
    (void)state;

    largest_alloc = 0;
    assert_int_equal(ddm_zlib_inflate(payload, plen, 4 * MiB, NULL, &out, &out_len), DDM_ZLIB_OK);
    assert_int_equal(out_len, 4 * MiB);
    assert_int_equal(largest_alloc, 4 * MiB);
    assert_bytes_equal(out, out_len, zeros, 4 * MiB);
    g_free(out);
    g_free(payload);
    g_free(zeros);
}

static void test_zlib_garbage(void **state)
{
    static const char *const garbage[] = {
        "",                                /* no deflate data at all */
        "00",                              /* stored block header cut short */
        "ff ff ff ff ff ff ff ff ff ff",   /* invalid block type */
        "78 9c",                           /* zlib header, nothing else */
        "78 9c ff ff ff ff",               /* zlib header, bad data */
        "1f 8b 08 00 00 00 00 00 00 03",   /* a gzip header */
        "68 65 6c 6c 6f 20 77 6f 72 6c 64", /* "hello world" */
    };
    size_t i;
    (void)state;

    for (i = 0; i < G_N_ELEMENTS(garbage); i++) {
        size_t glen, out_len;
        uint8_t *g = test_util_unhex(garbage[i], &glen);
        uint8_t *payload = g_malloc(8 + glen);
        uint8_t *out = NULL;

        print_message("# garbage: %s\n", garbage[i]);
        ddm_put_u4(payload, TYPE_HPDS);
        ddm_put_u4(payload + 4, 11);
        memcpy(payload + 8, g, glen);
        assert_int_equal(ddm_zlib_inflate(payload, 8 + glen, MiB, NULL, &out, &out_len),
                         DDM_ZLIB_ERR_DATA);
        assert_null(out);
        g_free(payload);
        g_free(g);
    }
}

/* Random bytes, many seeds: never OK by accident with a wrong size, never a crash. */
static void test_zlib_random_garbage(void **state)
{
    uint32_t seed;
    (void)state;

    for (seed = 1; seed <= 500; seed++) {
        uint8_t payload[8 + 64];
        uint32_t x = seed;
        size_t i, out_len;
        uint8_t *out = NULL;
        DdmZlibResult res;

        for (i = 0; i < sizeof payload; i++) {
            x = x * 1664525u + 1013904223u;
            payload[i] = (uint8_t)(x >> 24);
        }
        ddm_put_u4(payload + 4, 1000);
        res = ddm_zlib_inflate(payload, sizeof payload, 4096, NULL, &out, &out_len);
        assert_true(res == DDM_ZLIB_ERR_DATA || res == DDM_ZLIB_ERR_SIZE ||
                    res == DDM_ZLIB_ERR_TOO_BIG || res == DDM_ZLIB_OK);
        if (res == DDM_ZLIB_OK) {
            assert_int_equal(out_len, 1000);
            g_free(out);
        } else {
            assert_null(out);
        }
    }
}

/* A stream cut at every byte is an error, never OK. */
static void test_zlib_truncated_every_offset(void **state)
{
    uint8_t *data = sample(3000);
    size_t plen, cut;
    uint8_t *payload = ddm_zlib_deflate(TYPE_HPDS, data, 3000, &plen);
    (void)state;

    for (cut = 8; cut < plen; cut++) {
        uint8_t *copy = g_malloc(cut);
        uint8_t *out = NULL;
        size_t out_len;
        DdmZlibResult res;

        memcpy(copy, payload, cut);
        res = ddm_zlib_inflate(copy, cut, MiB, NULL, &out, &out_len);
        assert_int_not_equal(res, DDM_ZLIB_OK);
        assert_null(out);
        g_free(copy);
    }
    g_free(payload);
    g_free(data);
}

/* A flipped bit in the zlib trailer (Adler-32) is caught. */
static void test_zlib_bad_checksum(void **state)
{
    uint8_t *data = sample(3000);
    size_t plen, out_len;
    uint8_t *payload = ddm_zlib_deflate(TYPE_HPDS, data, 3000, &plen);
    uint8_t *out = NULL;
    (void)state;

    payload[plen - 1] ^= 0x01;
    assert_int_equal(ddm_zlib_inflate(payload, plen, MiB, NULL, &out, &out_len),
                     DDM_ZLIB_ERR_DATA);
    assert_null(out);
    g_free(payload);
    g_free(data);
}

/* Bytes after the end of the deflate stream are ignored. */
static void test_zlib_trailing_bytes_ignored(void **state)
{
    uint8_t *data = sample(100);
    size_t plen, out_len;
    uint8_t *payload = ddm_zlib_deflate(TYPE_HPDS, data, 100, &plen);
    uint8_t *longer = g_malloc0(plen + 5);
    uint8_t *out = NULL;
    (void)state;

    memcpy(longer, payload, plen);
    assert_int_equal(ddm_zlib_inflate(longer, plen + 5, MiB, NULL, &out, &out_len), DDM_ZLIB_OK);
    assert_bytes_equal(out, out_len, data, 100);
    g_free(out);
    g_free(longer);
    g_free(payload);
    g_free(data);
}

static void test_zlib_short_payload(void **state)
{
    static const uint8_t p[8] = { 'H', 'P', 'D', 'S', 0, 0, 0, 0 };
    size_t len;
    (void)state;

    for (len = 0; len < 8; len++) {
        uint8_t *out = (uint8_t *)"x";
        size_t out_len = 5;
        uint32_t type = 42;
        assert_int_equal(ddm_zlib_inflate(p, len, MiB, &type, &out, &out_len),
                         DDM_ZLIB_ERR_SHORT);
        assert_null(out);
        assert_int_equal(out_len, 0);
        assert_int_equal(type, 42);
    }
    {
        uint8_t *out = NULL;
        size_t out_len;
        assert_int_equal(ddm_zlib_inflate(NULL, 0, MiB, NULL, &out, &out_len),
                         DDM_ZLIB_ERR_SHORT);
    }
}

static void test_zlib_result_str(void **state)
{
    static const DdmZlibResult all[] = { DDM_ZLIB_OK, DDM_ZLIB_ERR_SHORT, DDM_ZLIB_ERR_TOO_BIG,
                                         DDM_ZLIB_ERR_SIZE, DDM_ZLIB_ERR_DATA };
    size_t i, j;
    (void)state;

    for (i = 0; i < G_N_ELEMENTS(all); i++)
        for (j = 0; j < i; j++)
            assert_string_not_equal(ddm_zlib_result_str(all[i]), ddm_zlib_result_str(all[j]));
    assert_string_equal(ddm_zlib_result_str((DdmZlibResult)99), "unknown ZLIB result");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_zlib_round_trip),
        cmocka_unit_test(test_zlib_deflate_is_zlib_wrapped),
        cmocka_unit_test(test_zlib_raw_deflate_accepted),
        cmocka_unit_test(test_zlib_wrong_declared_size),
        cmocka_unit_test(test_zlib_bomb),
        cmocka_unit_test(test_zlib_declared_size_not_trusted),
        cmocka_unit_test(test_zlib_stops_past_declared),
        cmocka_unit_test(test_zlib_exactly_cap_allocates_only_cap),
        cmocka_unit_test(test_zlib_garbage),
        cmocka_unit_test(test_zlib_random_garbage),
        cmocka_unit_test(test_zlib_truncated_every_offset),
        cmocka_unit_test(test_zlib_bad_checksum),
        cmocka_unit_test(test_zlib_trailing_bytes_ignored),
        cmocka_unit_test(test_zlib_short_payload),
        cmocka_unit_test(test_zlib_result_str),
    };
    return cmocka_run_group_tests_name("zlib", tests, NULL, NULL);
}
