/* SPDX-License-Identifier: Apache-2.0
 *
 * Unit tests for plugins/common/segdecode.c: piece header parsing, run
 * decoding, partial-run merging, the draft's reject rule (doc/protocol.md,
 * "Heap segments") and the statistics (per class, histogram, largest
 * free extent). Table-driven
 * where the cases are byte strings. The fast decoder is also compared
 * with a simple reference decoder (segdecode_ref.h) on random and
 * adversarial pieces, on partial runs at every place of its eight-pair
 * windows, on pieces past its 16-bit counters' fold point, and through
 * the collector (segcollect.c) over whole updates. No host needed.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "plugins/common/segcollect.h"
#include "plugins/common/segdecode.h"
#include "tests/unit/plugins/segdecode_ref.h"

/* Build a piece: header then @npairs (state, count-1) pairs from @pairs. */
static size_t make_piece(uint8_t *buf, uint32_t heap, uint8_t unit, uint32_t start,
                         uint32_t offset, uint32_t units, const uint8_t *pairs, size_t pair_bytes)
{
    size_t i = 0;
    buf[i++] = (uint8_t)(heap >> 24); buf[i++] = (uint8_t)(heap >> 16);
    buf[i++] = (uint8_t)(heap >> 8); buf[i++] = (uint8_t)heap;
    buf[i++] = unit;
    buf[i++] = (uint8_t)(start >> 24); buf[i++] = (uint8_t)(start >> 16);
    buf[i++] = (uint8_t)(start >> 8); buf[i++] = (uint8_t)start;
    buf[i++] = (uint8_t)(offset >> 24); buf[i++] = (uint8_t)(offset >> 16);
    buf[i++] = (uint8_t)(offset >> 8); buf[i++] = (uint8_t)offset;
    buf[i++] = (uint8_t)(units >> 24); buf[i++] = (uint8_t)(units >> 16);
    buf[i++] = (uint8_t)(units >> 8); buf[i++] = (uint8_t)units;
    if (pair_bytes)
        memcpy(buf + i, pairs, pair_bytes);
    return i + pair_bytes;
}

#define ST(kind, sol) ((uint8_t)(((kind) << 3) | (sol)))
#define P 0x80

static void test_parse_header(void **state)
{
    uint8_t buf[64];
    static const uint8_t pairs[] = { ST(0, 1), 3 };
    seg_piece p;
    size_t n = make_piece(buf, 7, 8, 0x12345678, 0x100, 4, pairs, sizeof pairs);
    (void)state;
    assert_int_equal(seg_piece_parse(buf, n, &p), SEG_OK);
    assert_int_equal(p.heap_id, 7);
    assert_int_equal(p.unit_size, 8);
    assert_int_equal(p.start, 0x12345678);
    assert_int_equal(p.offset, 0x100);
    assert_int_equal(p.length_units, 4);
    assert_int_equal(p.runs_len, 2);
    assert_ptr_equal(p.runs, buf + 17);
}

static void test_parse_truncated(void **state)
{
    uint8_t buf[64];
    seg_piece p;
    size_t n = make_piece(buf, 1, 8, 0, 0, 0, NULL, 0);
    size_t cut;
    (void)state;
    for (cut = 0; cut < n; cut++)
        assert_int_equal(seg_piece_parse(buf, cut, &p), SEG_ERR_SHORT_HEADER);
    assert_int_equal(seg_piece_parse(buf, n, &p), SEG_OK);
    assert_int_equal(seg_piece_parse(NULL, 0, &p), SEG_ERR_SHORT_HEADER);
    buf[4] = 0;
    assert_int_equal(seg_piece_parse(buf, n, &p), SEG_ERR_UNIT_ZERO);
}

typedef struct decode_case {
    const char *name;
    uint32_t units;
    uint8_t pairs[16];
    size_t pair_bytes;
    seg_error want;
    size_t want_offset; /* for errors: byte offset of the offending pair */
} decode_case;

static const decode_case decode_cases[] = {
    { "one run", 4, { ST(0, 1), 3 }, 2, SEG_OK, 0 },
    { "empty piece", 0, { 0 }, 0, SEG_OK, 0 },
    { "empty runs, units declared", 3, { 0 }, 0, SEG_ERR_RUNS_SHORT, 0 },
    { "runs end early", 10, { ST(0, 1), 3, ST(0, 0), 1 }, 4, SEG_ERR_RUNS_SHORT, 4 },
    { "runs go past", 5, { ST(0, 1), 3, ST(0, 0), 1 }, 4, SEG_ERR_RUNS_LONG, 2 },
    { "extra pair after the units", 4, { ST(0, 1), 3, ST(0, 0), 0 }, 4, SEG_ERR_RUNS_LONG, 2 },
    { "odd byte", 4, { ST(0, 1), 3, ST(0, 0) }, 3, SEG_ERR_ODD_RUNS, 2 },
    { "partial merge", 300, { P | ST(2, 1), 255, ST(2, 1), 43 }, 4, SEG_OK, 0 },
    { "partial state change", 300, { P | ST(2, 1), 255, ST(3, 1), 43 }, 4, SEG_ERR_PARTIAL_CHANGE, 2 },
    { "partial solidity change", 300, { P | ST(2, 1), 255, ST(2, 0), 43 }, 4, SEG_ERR_PARTIAL_CHANGE, 2 },
    { "open partial at end", 256, { P | ST(0, 1), 255 }, 2, SEG_OK, 0 },
};

static void test_decode_table(void **state)
{
    size_t i;
    (void)state;
    for (i = 0; i < sizeof decode_cases / sizeof decode_cases[0]; i++) {
        const decode_case *c = &decode_cases[i];
        uint8_t buf[64];
        seg_piece p;
        seg_stats st;
        seg_error_at at = { 99, 99 };
        seg_error e;
        size_t n = make_piece(buf, 1, 8, 0x1000, 0, c->units, c->pairs, c->pair_bytes);
        print_message("case: %s\n", c->name);
        assert_int_equal(seg_piece_parse(buf, n, &p), SEG_OK);
        seg_stats_reset(&st);
        e = seg_piece_decode(&p, &st, &at);
        assert_int_equal(e, c->want);
        if (e != SEG_OK) {
            assert_int_equal(at.run_offset, c->want_offset);
            assert_non_null(strstr(seg_error_str(e), " "));
        } else {
            assert_int_equal(st.total_units, c->units);
            assert_int_equal(st.pieces, 1);
        }
    }
}

static void test_partial_merge_stats(void **state)
{
    /* 1000-unit byte array in partial runs (3*256 + 232), then 2 free units,
     * then two 1-unit objects, then a 5-unit class object. */
    static const uint8_t pairs[] = {
        P | ST(2, 1), 255, P | ST(2, 1), 255, P | ST(2, 1), 255, ST(2, 1), 231,
        ST(0, 0), 1, ST(0, 1), 0, ST(0, 1), 0, ST(1, 1), 4,
    };
    uint8_t buf[64];
    seg_piece p;
    seg_stats st;
    size_t n = make_piece(buf, 1, 8, 0, 0, 1000 + 2 + 2 + 5, pairs, sizeof pairs);
    (void)state;
    assert_int_equal(seg_piece_parse(buf, n, &p), SEG_OK);
    seg_stats_reset(&st);
    assert_int_equal(seg_piece_decode(&p, &st, NULL), SEG_OK);
    assert_int_equal(st.cls[1 + SEG_KIND_ARRAY1].count, 1);
    assert_int_equal(st.cls[1 + SEG_KIND_ARRAY1].bytes, 8000);
    assert_int_equal(st.cls[1 + SEG_KIND_ARRAY1].min_bytes, 8000);
    assert_int_equal(st.cls[1 + SEG_KIND_OBJECT].count, 2);
    assert_int_equal(st.cls[1 + SEG_KIND_OBJECT].bytes, 16);
    assert_int_equal(st.cls[1 + SEG_KIND_CLASS].count, 1);
    assert_int_equal(st.cls[1 + SEG_KIND_CLASS].bytes, 40);
    assert_int_equal(st.cls[SEG_CLASS_FREE].count, 1);
    assert_int_equal(st.cls[SEG_CLASS_FREE].bytes, 16);
    assert_int_equal(st.largest_free_bytes, 16);
    assert_int_equal(st.runs, 8);
    assert_int_equal(st.total_bytes, 1009 * 8);
    /* 8000 bytes: bucket 12 (4096..8191) */
    assert_int_equal(st.hist_count[1 + SEG_KIND_ARRAY1][12], 1);
    assert_int_equal(st.hist_bytes[1 + SEG_KIND_ARRAY1][12], 8000);
    assert_int_equal(st.hist_count[1 + SEG_KIND_OBJECT][3], 2);
}

static void test_free_extent_and_kinds(void **state)
{
    /* free runs of different kinds are all free; adjacent free runs form one extent */
    static const uint8_t pairs[] = {
        ST(0, 0), 9, ST(7, 0), 4, ST(7, 1), 0, ST(0, 0), 2,
        ST(3, 2), 0, ST(4, 3), 0, ST(5, 4), 0, ST(6, 5), 0, ST(7, 6), 0,
    };
    uint8_t buf[64];
    seg_piece p;
    seg_stats st;
    unsigned c;
    size_t n = make_piece(buf, 1, 16, 0, 0, 10 + 5 + 1 + 3 + 5, pairs, sizeof pairs);
    (void)state;
    assert_int_equal(seg_piece_parse(buf, n, &p), SEG_OK);
    seg_stats_reset(&st);
    assert_int_equal(seg_piece_decode(&p, &st, NULL), SEG_OK);
    assert_int_equal(st.cls[SEG_CLASS_FREE].count, 3);
    assert_int_equal(st.cls[SEG_CLASS_FREE].bytes, (10 + 5 + 3) * 16);
    assert_int_equal(st.largest_free_bytes, 15 * 16);
    assert_int_equal(st.cls[SEG_CLASS_FREE].max_bytes, 160);
    assert_int_equal(st.cls[SEG_CLASS_FREE].min_bytes, 48);
    for (c = 1 + SEG_KIND_ARRAY2; c < 1 + SEG_KIND_NATIVE; c++)
        assert_int_equal(st.cls[c].count, 1);
    assert_int_equal(st.cls[1 + SEG_KIND_NATIVE].count, 2);
    assert_string_equal(seg_class_name(1 + SEG_KIND_NATIVE), "non-Java object");
    assert_string_equal(seg_class_name(SEG_CLASS_FREE), "free");
    assert_string_equal(seg_class_name(99), "?");
}

static void test_stats_add(void **state)
{
    static const uint8_t a_pairs[] = { ST(0, 1), 1, ST(0, 0), 7 };
    static const uint8_t b_pairs[] = { ST(0, 1), 3, ST(0, 0), 2 };
    uint8_t buf[64];
    seg_piece p;
    seg_stats a, b, sum;
    size_t n;
    (void)state;
    seg_stats_reset(&a);
    seg_stats_reset(&b);
    seg_stats_reset(&sum);
    n = make_piece(buf, 1, 8, 0, 0, 10, a_pairs, sizeof a_pairs);
    assert_int_equal(seg_piece_parse(buf, n, &p), SEG_OK);
    assert_int_equal(seg_piece_decode(&p, &a, NULL), SEG_OK);
    n = make_piece(buf, 1, 8, 0, 0, 7, b_pairs, sizeof b_pairs);
    assert_int_equal(seg_piece_parse(buf, n, &p), SEG_OK);
    assert_int_equal(seg_piece_decode(&p, &b, NULL), SEG_OK);
    seg_stats_add(&sum, &a);
    seg_stats_add(&sum, &b);
    assert_int_equal(sum.cls[1].count, 2);
    assert_int_equal(sum.cls[1].min_bytes, 16);
    assert_int_equal(sum.cls[1].max_bytes, 32);
    assert_int_equal(sum.largest_free_bytes, 64);
    assert_int_equal(sum.pieces, 2);
    assert_int_equal(sum.total_units, 17);
}

static void test_bucket(void **state)
{
    (void)state;
    assert_int_equal(seg_bucket(0), 0);
    assert_int_equal(seg_bucket(1), 0);
    assert_int_equal(seg_bucket(8), 3);
    assert_int_equal(seg_bucket(15), 3);
    assert_int_equal(seg_bucket(16), 4);
    assert_int_equal(seg_bucket(UINT64_MAX), SEG_NBUCKETS - 1);
}

static void test_max_run_lengths(void **state)
{
    /* 255 unit size, 256-unit runs: no overflow, exact byte counts */
    uint8_t pairs[2 * 64];
    uint8_t buf[17 + sizeof pairs];
    seg_piece p;
    seg_stats st;
    size_t i, n;
    (void)state;
    for (i = 0; i < 64; i++) {
        pairs[2 * i] = (uint8_t)((i < 63 ? P : 0) | ST(5, 1));
        pairs[2 * i + 1] = 255;
    }
    n = make_piece(buf, 1, 255, 0xffffffffu, 0xffffffffu, 64 * 256, pairs, sizeof pairs);
    assert_int_equal(seg_piece_parse(buf, n, &p), SEG_OK);
    seg_stats_reset(&st);
    assert_int_equal(seg_piece_decode(&p, &st, NULL), SEG_OK);
    assert_int_equal(st.cls[1 + SEG_KIND_ARRAY8].count, 1);
    assert_int_equal(st.cls[1 + SEG_KIND_ARRAY8].bytes, (uint64_t)64 * 256 * 255);
}

/* xorshift64*: a fixed sequence, so a failure is reproducible */
static uint64_t rnd_next(uint64_t *x)
{
    *x ^= *x >> 12;
    *x ^= *x << 25;
    *x ^= *x >> 27;
    return *x * 2685821657736338717ull;
}

/* Decode @pairs/@npb as one piece with both decoders, starting from the
 * same statistics @start, and insist on the same verdict, stop point and
 * statistics. */
static void check_same(const seg_stats *start, uint8_t unit, uint32_t units, const uint8_t *pairs,
                       size_t npb, seg_stats *out)
{
    uint8_t *buf = malloc(17 + npb + 1);
    seg_piece p;
    seg_stats fast = *start, ref = *start;
    seg_error_at at = { 12345, 12345 };
    size_t ref_off = 0;
    uint64_t ref_units = 0;
    seg_error ef, er;
    size_t n;

    assert_non_null(buf);
    n = make_piece(buf, 1, unit, 0x12c00000u, 0, units, pairs, npb);
    assert_int_equal(seg_piece_parse(buf, n, &p), SEG_OK);
    ef = seg_piece_decode(&p, &fast, &at);
    er = ref_decode(&p, &ref, &ref_off, &ref_units);
    if (ef != er)
        print_message("unit %u units %u pair bytes %zu: fast %s, reference %s\n", unit, units, npb,
                      seg_error_str(ef), seg_error_str(er));
    assert_int_equal(ef, er);
    if (er != SEG_OK) {
        assert_int_equal(at.run_offset, ref_off);
        assert_int_equal(at.units_seen, ref_units);
    } else {
        assert_true(ref_stats_equal(&fast, &ref));
        if (out)
            *out = fast;
    }
    free(buf);
}

/* Sum of the units of the pairs (what a correct piece declares). */
static uint64_t pair_units(const uint8_t *pairs, size_t npb)
{
    uint64_t u = 0;
    size_t i;
    for (i = 0; i + 1 < npb; i += 2)
        u += (uint64_t)pairs[i + 1] + 1;
    return u;
}

/* seg_stats_reset_used on statistics a decode (accepted or rejected, on
 * either decoder's path) or an add left must give what seg_stats_reset
 * gives: random pieces of 1..2,000 pairs, runs of every length (the
 * histogram's buckets up to 256 units of 255 bytes), some declaring a
 * wrong unit count or changing state inside a partial run. */
static void test_stats_reset_used(void **state)
{
    static const uint8_t units_sizes[] = { 1, 8, 255 };
    uint8_t *pairs = malloc(2 * 2000), *buf = malloc(17 + 2 * 2000);
    uint64_t x = 0x2545F4914F6CDD1Dull;
    seg_stats clean, st, sum;
    unsigned iter, accepted = 0, rejected = 0, written = 0;
    (void)state;
    assert_non_null(pairs);
    assert_non_null(buf);
    seg_stats_reset(&clean);
    seg_stats_reset(&sum);
    for (iter = 0; iter < 400; iter++) {
        const size_t np = 1 + (size_t)(rnd_next(&x) % 2000);
        const unsigned how = (unsigned)(rnd_next(&x) % 4);
        seg_piece p;
        uint64_t units;
        size_t i, n;
        for (i = 0; i < np; i++) {
            const uint64_t r = rnd_next(&x);
            pairs[2 * i] = (uint8_t)(r % 8 == 0 ? ST((r >> 3) % 8, 0) : ST((r >> 3) % 8, 1));
            pairs[2 * i + 1] = (uint8_t)(r >> 8);
        }
        if (how == 3 && np > 2) { /* a partial sequence that changes state, at the end */
            pairs[2 * (np - 2)] = (uint8_t)(ST(2, 1) | P);
            pairs[2 * (np - 1)] = ST(3, 1);
        }
        units = pair_units(pairs, 2 * np) + (how == 2 ? 1 : 0);
        n = make_piece(buf, 1, units_sizes[iter % 3], 0, 0, (uint32_t)units, pairs, 2 * np);
        assert_int_equal(seg_piece_parse(buf, n, &p), SEG_OK);
        seg_stats_reset(&st);
        if (seg_piece_decode(&p, &st, NULL) == SEG_OK) {
            accepted++;
            seg_stats_add(&sum, &st);
        } else {
            rejected++;
        }
        written += memcmp(&st, &clean, sizeof st) != 0;
        seg_stats_reset_used(&st);
        assert_memory_equal(&st, &clean, sizeof st);
    }
    print_message("reset_used: %u accepted, %u rejected, %u written\n", accepted, rejected, written);
    assert_true(accepted > 100 && rejected > 100 && written > 390);
    seg_stats_reset_used(&sum);
    assert_memory_equal(&sum, &clean, sizeof sum);
    free(pairs);
    free(buf);
}

static void test_fast_matches_reference_random(void **state)
{
    static const uint8_t units_sizes[] = { 1, 2, 8, 8, 8, 16, 24, 255 };
    uint8_t *pairs = malloc(2 * 4096 + 1);
    uint64_t x = 0x9E3779B97F4A7C15ull;
    seg_stats acc;
    unsigned iter, accepted = 0, rejected = 0;
    (void)state;
    assert_non_null(pairs);
    seg_stats_reset(&acc);
    for (iter = 0; iter < 20000; iter++) {
        uint64_t r = rnd_next(&x);
        unsigned mode = (unsigned)(r % 6);
        size_t np = (size_t)(rnd_next(&x) % ((r >> 8) % 8 == 0 ? 4096 : 300));
        uint8_t unit = (r >> 16) % 4 == 0 ? (uint8_t)(1 + (r >> 20) % 255)
                                          : units_sizes[(r >> 24) % sizeof units_sizes];
        size_t i, npb = 2 * np;
        uint64_t u;
        uint32_t declared;
        for (i = 0; i < np; i++) {
            uint64_t q = rnd_next(&x);
            uint8_t st, len;
            switch (mode) {
            case 0: /* random bytes */
                st = (uint8_t)q;
                len = (uint8_t)(q >> 8);
                break;
            case 1: /* no partial runs, few states: many equal runs in a row */
                st = ST((q >> 3) % 2, (q >> 5) % 2);
                len = (uint8_t)((q >> 8) % 4);
                break;
            case 2: /* long partial sequences of one state, sometimes changing */
                st = (uint8_t)(((q % 8) != 0 ? P : 0) | ST(2, 1));
                if ((q >> 20) % 97 == 0)
                    st = (uint8_t)(st ^ 0x08);
                len = 255;
                break;
            case 3: /* every (class, length) cell */
                st = (uint8_t)(i % 128);
                len = (uint8_t)(i * 7);
                break;
            case 4: /* realistic: small objects, free runs, rare large arrays */
                if (q % 50 == 0) {
                    st = (uint8_t)(P | ST(3 + (q >> 8) % 3, 1));
                    len = 255;
                } else if (i > 0 && (pairs[2 * i - 2] & P)) {
                    st = pairs[2 * i - 2];
                    if ((q >> 12) % 4 == 0)
                        st = (uint8_t)(st & 0x7f);
                    len = (uint8_t)(q >> 16);
                } else {
                    st = (q >> 8) % 5 == 0 ? ST(0, 0) : ST((q >> 12) % 8, 1 + (q >> 16) % 7);
                    len = (uint8_t)((q >> 20) % 16);
                }
                break;
            default: /* free/in-use alternation: free extents of every length */
                st = (q % 3 == 0) ? ST(q >> 4 & 7, 1) : ST(q >> 4 & 7, 0);
                len = (uint8_t)(q >> 8);
                break;
            }
            pairs[2 * i] = st;
            pairs[2 * i + 1] = len;
        }
        u = pair_units(pairs, npb);
        switch ((r >> 32) % 10) {
        case 0:
            declared = (uint32_t)(u + 1 + (r >> 40) % 300);
            break;
        case 1:
            declared = u ? (uint32_t)(u - 1 - (r >> 40) % (u < 300 ? u : 300)) : 1;
            break;
        case 2:
            declared = (uint32_t)(r >> 40);
            break;
        default:
            declared = (uint32_t)u;
            break;
        }
        if ((r >> 48) % 25 == 0)
            pairs[npb++] = (uint8_t)(r >> 56); /* half a pair at the end */
        {
            seg_stats before = acc, after;
            seg_stats_reset(&after);
            /* start from accumulated statistics now and then, to check adding */
            check_same((r >> 52) % 2 ? &before : &after, unit, declared, pairs, npb, &after);
            if (after.pieces) {
                if ((r >> 52) % 2)
                    acc = after;
                accepted++;
            } else {
                rejected++;
            }
        }
    }
    print_message("reference check: %u accepted, %u rejected pieces\n", accepted, rejected);
    assert_true(accepted > 1000 && rejected > 1000);
    free(pairs);
}

static void test_fast_matches_reference_adversarial(void **state)
{
    size_t np = 70000, i;
    uint8_t *pairs = malloc(2 * np);
    seg_stats st;
    (void)state;
    assert_non_null(pairs);
    seg_stats_reset(&st);
    /* one allocation of 70000 partial runs of 256 units (17.9 M units) */
    for (i = 0; i < np; i++) {
        pairs[2 * i] = (uint8_t)((i + 1 < np ? P : 0) | ST(5, 1));
        pairs[2 * i + 1] = 255;
    }
    check_same(&st, 255, (uint32_t)(np * 256), pairs, 2 * np, NULL);
    /* the same, still open at the end */
    pairs[2 * np - 2] |= P;
    check_same(&st, 255, (uint32_t)(np * 256), pairs, 2 * np, NULL);
    /* a state change in its very last pair */
    pairs[2 * np - 2] = ST(4, 1);
    check_same(&st, 255, (uint32_t)(np * 256), pairs, 2 * np, NULL);
    /* units declared one short, and one long */
    pairs[2 * np - 2] = ST(5, 1);
    check_same(&st, 255, (uint32_t)(np * 256 - 1), pairs, 2 * np, NULL);
    check_same(&st, 255, (uint32_t)(np * 256 + 1), pairs, 2 * np, NULL);
    /* 70000 one-unit runs of one cell: a counter far past a byte */
    for (i = 0; i < np; i++) {
        pairs[2 * i] = ST(0, 1);
        pairs[2 * i + 1] = 0;
    }
    check_same(&st, 1, (uint32_t)np, pairs, 2 * np, NULL);
    /* all free, alternating kinds: one extent over the whole piece */
    for (i = 0; i < np; i++) {
        pairs[2 * i] = ST(i % 8, 0);
        pairs[2 * i + 1] = (uint8_t)i;
    }
    check_same(&st, 200, (uint32_t)pair_units(pairs, 2 * np), pairs, 2 * np, NULL);
    /* the largest run that fits the 32-bit unit count: 2^32-1 units would
     * need 16 M pairs; a declared count past what the pairs hold is short */
    check_same(&st, 8, UINT32_MAX, pairs, 2 * np, NULL);
    free(pairs);
}

/* The fast decoder takes eight pairs a step and tests their P bits with
 * one mask: put a partial sequence (of 1 to 3 pairs, or still open at the
 * end) at every position of every window of pieces of 1 to 40 pairs,
 * among free and in-use runs (free extents that cross windows), and
 * insist on what the reference decoder says. Also a state change at each
 * such place, which must be rejected at the same pair. Each piece starts
 * with PAD pairs of one-unit objects (a whole number of windows), so that
 * it is long enough for the fast decoder (SEG_FAST_MIN_PAIRS). */
#define PAD ((SEG_FAST_MIN_PAIRS + 7) / 8 * 8)
static void test_fast_matches_reference_windows(void **state)
{
    static const uint8_t units_sizes[] = { 1, 8, 24 };
    uint8_t padded[2 * (PAD + 48)], *pairs = padded + 2 * PAD;
    seg_stats st;
    unsigned np, at, len, pattern, u, cases = 0;
    (void)state;
    seg_stats_reset(&st);
    for (at = 0; at < PAD; at++) {
        padded[2 * at] = ST(0, 1);
        padded[2 * at + 1] = 0;
    }
    for (np = 1; np <= 40; np++)
        for (at = 0; at < np; at++)
            for (len = 1; len <= 3 && at + len <= np + 1; len++)
                for (pattern = 0; pattern < 4; pattern++)
                    for (u = 0; u < sizeof units_sizes; u++) {
                        unsigned i, change;
                        for (i = 0; i < np; i++) {
                            /* pattern 0: all in use; 1: all free; 2, 3: mixed, runs of free */
                            int free_run = pattern == 1 || (pattern >= 2 && (i * 7 + pattern) % 5 < 2);
                            pairs[2 * i] = free_run ? ST(i % 8, 0) : ST(i % 6, 1 + i % 7);
                            pairs[2 * i + 1] = (uint8_t)((i * 37 + np) % 256);
                        }
                        /* the partial sequence: pairs at..at+len-1, the last without P
                         * (or open at the piece's end when it runs past it) */
                        for (i = at; i < at + len && i < np; i++) {
                            pairs[2 * i] = (uint8_t)(ST(3, pattern == 1 ? 0 : 1) |
                                                     (i + 1 < at + len ? P : 0));
                            pairs[2 * i + 1] = 255;
                        }
                        check_same(&st, units_sizes[u],
                                   (uint32_t)pair_units(padded, 2 * (PAD + np)), padded,
                                   2 * (PAD + np), NULL);
                        cases++;
                        if (len < 2)
                            continue;
                        for (change = at + 1; change < at + len && change < np; change++) {
                            uint8_t keep = pairs[2 * change];
                            pairs[2 * change] = (uint8_t)(keep ^ 0x08);
                            check_same(&st, units_sizes[u],
                                       (uint32_t)pair_units(padded, 2 * (PAD + np)), padded,
                                       2 * (PAD + np), NULL);
                            pairs[2 * change] = keep;
                            cases++;
                        }
                    }
    print_message("window cases: %u\n", cases);
    assert_true(cases > 10000);
}
#undef PAD

/* Pieces past the 16-bit counters' reach (the fast decoder folds its
 * counts every 32,760 pairs, reading them as signed; it folded every
 * 65,528 before): one (class, length) cell counted 200,000 times, and
 * one counted over 32,767 times a block beside other lengths of its size
 * bucket (the vector fold's signed reading); a
 * partial sequence and a free extent that span each pair count around
 * 32,760, 32,768, 65,528 and 65,536 (the first also with units of 1 and
 * 255 bytes); rejected at the very end. */
static void test_fast_matches_reference_long_pieces(void **state)
{
    const size_t np = 200000;
    static const size_t spans[] = { 32752, 32759, 32760, 32761, 32767, 32768, 65520, 65527,
                                    65528, 65529, 65535, 65536, 131056, 131064 };
    uint8_t *pairs = malloc(2 * np);
    seg_stats st, out;
    size_t i, k;
    (void)state;
    assert_non_null(pairs);
    seg_stats_reset(&st);
    for (i = 0; i < np; i++) {
        pairs[2 * i] = ST(0, 1);
        pairs[2 * i + 1] = 2;
    }
    seg_stats_reset(&out);
    check_same(&st, 8, (uint32_t)(3 * np), pairs, 2 * np, &out);
    assert_int_equal(out.cls[1 + SEG_KIND_OBJECT].count, np);
    /* one length counted past 32,767 in a block (14 pairs in 16 of 200
     * units) beside other lengths of its size bucket (136 and 251 units:
     * 1,024..2,047 bytes with units of 8), so that the row's first and
     * last counters differ and the vector fold reads that counter: with
     * blocks of 65,528 pairs it would read it as negative */
    for (i = 0; i < np; i++) {
        pairs[2 * i] = ST(0, 1);
        pairs[2 * i + 1] = (uint8_t)(i % 16 == 5 ? 135 : i % 16 == 11 ? 250 : 199);
    }
    seg_stats_reset(&out);
    check_same(&st, 8, (uint32_t)pair_units(pairs, 2 * np), pairs, 2 * np, &out);
    assert_int_equal(out.cls[1 + SEG_KIND_OBJECT].count, np);
    assert_int_equal(out.cls[1 + SEG_KIND_OBJECT].bytes, pair_units(pairs, 2 * np) * 8);
    for (k = 0; k < sizeof spans / sizeof spans[0]; k++) {
        size_t mid = spans[k];
        for (i = 0; i < np; i++) {
            pairs[2 * i] = i % 3 ? ST(1, 1) : ST(0, 1);
            pairs[2 * i + 1] = (uint8_t)(i % 11);
        }
        /* a partial sequence over mid - 5 .. mid + 4 */
        for (i = mid - 5; i < mid + 5; i++) {
            pairs[2 * i] = (uint8_t)(ST(4, 1) | (i + 1 < mid + 5 ? P : 0));
            pairs[2 * i + 1] = 255;
        }
        /* a free extent of 300 runs that ends at mid + 150 */
        for (i = mid - 150; i < mid + 150; i++) {
            if (i >= mid - 5 && i < mid + 5)
                continue;
            pairs[2 * i] = ST(i % 8, 0);
            pairs[2 * i + 1] = 200;
        }
        seg_stats_reset(&out);
        check_same(&st, 8, (uint32_t)pair_units(pairs, 2 * np), pairs, 2 * np, &out);
        assert_true(out.largest_free_bytes >= (uint64_t)145 * 201 * 8);
        if (k == 0 || k == 6) { /* the extreme unit sizes: the buckets of a fold differ */
            check_same(&st, 1, (uint32_t)pair_units(pairs, 2 * np), pairs, 2 * np, &out);
            assert_true(out.largest_free_bytes >= (uint64_t)145 * 201);
            check_same(&st, 255, (uint32_t)pair_units(pairs, 2 * np), pairs, 2 * np, &out);
            assert_true(out.largest_free_bytes >= (uint64_t)145 * 201 * 255);
        }
        /* the same piece declaring one unit too few and too many */
        check_same(&st, 8, (uint32_t)pair_units(pairs, 2 * np) - 1, pairs, 2 * np, NULL);
        check_same(&st, 8, (uint32_t)pair_units(pairs, 2 * np) + 1, pairs, 2 * np, NULL);
        /* and a state change in the partial sequence past the fold point */
        pairs[2 * (mid + 2)] = (uint8_t)(ST(5, 1) | P);
        check_same(&st, 8, (uint32_t)pair_units(pairs, 2 * np), pairs, 2 * np, NULL);
    }
    free(pairs);
}

/* The collector adds each accepted piece's statistics into the update
 * and publishes them at HPEN: random pieces (accepted and rejected, of
 * several unit sizes) through HPST..HPEN must give what the reference
 * decoder gives for the accepted ones, added up. */
static void test_collector_matches_reference(void **state)
{
    uint8_t *pairs = malloc(2 * 2048 + 1), *buf = malloc(17 + 2 * 2048 + 1);
    uint64_t x = 0xD1B54A32D192ED03ull;
    unsigned update, accepted = 0, rejected = 0;
    (void)state;
    assert_non_null(pairs);
    assert_non_null(buf);
    for (update = 0; update < 40; update++) {
        seg_collector c;
        const seg_heap *h = NULL;
        seg_stats ref;
        unsigned piece;
        seg_collector_init(&c, (int)(update % 2), (size_t)1 << 24);
        seg_stats_reset(&ref);
        assert_int_equal(seg_collector_start(&c, 1), 0);
        for (piece = 0; piece < 30; piece++) {
            uint64_t r = rnd_next(&x);
            size_t np = (size_t)(rnd_next(&x) % 2048), i, n, npb;
            uint8_t unit = (r >> 8) % 3 == 0 ? 16 : 8;
            seg_piece_report rep;
            seg_piece pc;
            seg_error e;
            size_t off;
            uint64_t u;
            uint32_t declared;
            for (i = 0; i < np; i++) {
                uint64_t q = rnd_next(&x);
                if (i > 0 && (pairs[2 * i - 2] & P)) {
                    pairs[2 * i] = (q >> 10) % 3 ? pairs[2 * i - 2] : (uint8_t)(pairs[2 * i - 2] & 0x7f);
                    if ((q >> 20) % 200 == 0)
                        pairs[2 * i] ^= 0x08; /* a state change: rejected */
                    pairs[2 * i + 1] = (uint8_t)(q >> 24);
                } else if (q % 40 == 0) {
                    pairs[2 * i] = (uint8_t)(P | ST(2 + (q >> 8) % 4, 1));
                    pairs[2 * i + 1] = 255;
                } else {
                    pairs[2 * i] = (q >> 8) % 5 == 0 ? ST((q >> 12) % 8, 0)
                                                     : ST((q >> 12) % 8, 1 + (q >> 16) % 7);
                    pairs[2 * i + 1] = (uint8_t)((q >> 20) % ((q >> 28) % 8 == 0 ? 256 : 20));
                }
            }
            npb = 2 * np;
            u = pair_units(pairs, npb);
            declared = (r >> 16) % 12 == 0 ? (uint32_t)(u + 1) : (uint32_t)u;
            n = make_piece(buf, 1, unit, 0x12c00000u, (uint32_t)(piece * 0x10000), declared, pairs,
                           npb);
            assert_int_equal(seg_piece_parse(buf, n, &pc), SEG_OK);
            e = ref_decode(&pc, &ref, &off, &u);
            assert_int_equal(seg_collector_piece(&c, buf, n, 0, &rep), e == SEG_OK ? 0 : -EINVAL);
            assert_int_equal(rep.error, e);
            if (e == SEG_OK)
                accepted++;
            else
                rejected++;
        }
        assert_int_equal(seg_collector_end(&c, 1, &h), 0);
        assert_non_null(h);
        assert_true(ref_stats_equal(&h->current.stats, &ref));
        seg_collector_clear(&c);
    }
    print_message("collector check: %u accepted, %u rejected pieces\n", accepted, rejected);
    assert_true(accepted > 500 && rejected > 50);
    free(pairs);
    free(buf);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_parse_header),
        cmocka_unit_test(test_parse_truncated),
        cmocka_unit_test(test_decode_table),
        cmocka_unit_test(test_partial_merge_stats),
        cmocka_unit_test(test_free_extent_and_kinds),
        cmocka_unit_test(test_stats_add),
        cmocka_unit_test(test_stats_reset_used),
        cmocka_unit_test(test_bucket),
        cmocka_unit_test(test_max_run_lengths),
        cmocka_unit_test(test_fast_matches_reference_random),
        cmocka_unit_test(test_fast_matches_reference_adversarial),
        cmocka_unit_test(test_fast_matches_reference_windows),
        cmocka_unit_test(test_fast_matches_reference_long_pieces),
        cmocka_unit_test(test_collector_matches_reference),
    };
    return cmocka_run_group_tests_name("segdecode", tests, NULL, NULL);
}
