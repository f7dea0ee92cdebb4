/* SPDX-License-Identifier: Apache-2.0
 *
 * Unit tests for ddmon-simvm's heap-dump generator (tools/simvm/hprof_gen.c):
 * exact sizes (edges of the minimum and of the filler segment size
 * included), determinism, reads in odd-sized pieces equal one whole read,
 * and well-formedness, checked by a small walker written here from the
 * hprof format (not from the generator): header, records, every heap-dump
 * sub-record's length, the Android sub-tags present, segments within the
 * cap, HEAP_DUMP_END last and exactly at the end; and that the heap looks
 * like an app's (hundreds of classes, mostly small instances whose
 * references point at dumped objects, object arrays, primitive arrays
 * mostly small with some big ones, the three heaps, Android roots at a
 * real rate, a small final filler).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "hprof_gen.h"

#define ID 4u

typedef struct Walk {
    unsigned records, segments, strings, classes_loaded, stack_traces;
    unsigned sub_count[256];
    size_t largest_segment, last_segment;
    unsigned heaps[256];                  /* HEAP_DUMP_INFO by heap id (low byte) */
    unsigned small_instances;             /* INSTANCE_DUMP of 16..200 bytes */
    unsigned small_prim_arrays, big_prim_arrays; /* <= 256 bytes, >= 64 KiB */
    unsigned refs, refs_null;             /* object fields of instances and arrays */
    uint32_t lowest_ref, highest_ref;
    uint32_t highest_object;              /* the highest INSTANCE/ARRAY id */
    int ended;
} Walk;

/* A reference in an object array. */
static void note_ref(Walk *w, uint32_t ref)
{
    w->refs++;
    if (ref == 0) {
        w->refs_null++;
        return;
    }
    if (w->lowest_ref == 0 || ref < w->lowest_ref)
        w->lowest_ref = ref;
    if (ref > w->highest_ref)
        w->highest_ref = ref;
}

/* Statistics of one sub-record at @p of length @n. */
static void note_sub(Walk *w, const uint8_t *p, size_t n)
{
    uint32_t id = n >= 5 ? ((uint32_t)p[1] << 24 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 8 | p[4]) : 0;
    size_t i;

    switch (p[0]) {
    case 0xfe:
        w->heaps[p[4]]++;
        break;
    case 0x21:
        if (n >= 16 && n <= 200)
            w->small_instances++;
        if (id > w->highest_object)
            w->highest_object = id;
        break;
    case 0x22:
        for (i = 1 + ID + 8 + ID; i + ID <= n; i += ID)
            note_ref(w, (uint32_t)p[i] << 24 | (uint32_t)p[i + 1] << 16 | (uint32_t)p[i + 2] << 8 | p[i + 3]);
        if (id > w->highest_object)
            w->highest_object = id;
        break;
    case 0x23:
        if (n <= 256)
            w->small_prim_arrays++;
        if (n >= 65536)
            w->big_prim_arrays++;
        break;
    default:
        break;
    }
}

static uint32_t be4(const uint8_t *p)
{
    return ((uint32_t)p[0] << 24) | ((uint32_t)p[1] << 16) | ((uint32_t)p[2] << 8) | p[3];
}

static uint16_t be2(const uint8_t *p)
{
    return (uint16_t)((p[0] << 8) | p[1]);
}

/* Size of a basic type's value, from the hprof format (4-byte ids). */
static size_t value_size(uint8_t t)
{
    static const size_t sizes[12] = { 0, 0, ID, 0, 1, 2, 4, 8, 1, 2, 4, 8 };
    return t < 12 ? sizes[t] : 0;
}

/* Length of the sub-record at @p (tag included), or 0 if malformed or past @left. */
static size_t sub_len(const uint8_t *p, size_t left)
{
    size_t n, i, count;

#define NEED(x) do { if ((x) > left) return 0; } while (0)
    NEED(1);
    switch (p[0]) {
    case 0xff: case 0x89: case 0x8a: case 0x8b: case 0x8d: case 0x05: case 0x07:
        n = 1 + ID;
        break;
    case 0x01: case 0xfe:
        n = 1 + ID + 4;
        break;
    case 0x02: case 0x03: case 0x08: case 0x8e:
        n = 1 + ID + 8;
        break;
    case 0x04: case 0x06:
        n = 1 + ID + 4;
        break;
    case 0x20: /* CLASS_DUMP */
        n = 1 + ID + 4 + 6 * ID + 4;
        NEED(n + 2);
        count = be2(p + n);
        n += 2;
        for (i = 0; i < count; i++) { /* constant pool: u2 index, u1 type, value */
            NEED(n + 3);
            if (!value_size(p[n + 2]))
                return 0;
            n += 3 + value_size(p[n + 2]);
        }
        NEED(n + 2);
        count = be2(p + n);
        n += 2;
        for (i = 0; i < count; i++) { /* statics: id name, u1 type, value */
            NEED(n + ID + 1);
            if (!value_size(p[n + ID]))
                return 0;
            n += ID + 1 + value_size(p[n + ID]);
        }
        NEED(n + 2);
        count = be2(p + n);
        n += 2;
        for (i = 0; i < count; i++) {
            NEED(n + ID + 1);
            if (!value_size(p[n + ID]))
                return 0;
            n += ID + 1;
        }
        break;
    case 0x21: /* INSTANCE_DUMP: id, u4 stack, id class, u4 n, bytes */
        NEED(1 + ID + 4 + ID + 4);
        n = 1 + ID + 4 + ID + 4 + be4(p + 1 + ID + 4 + ID);
        break;
    case 0x22: /* OBJECT_ARRAY_DUMP: id, u4 stack, u4 n, id class, ids */
        NEED(1 + ID + 8 + ID);
        n = 1 + ID + 8 + ID + (size_t)be4(p + 1 + ID + 4) * ID;
        break;
    case 0x23: /* PRIMITIVE_ARRAY_DUMP: id, u4 stack, u4 n, u1 type, data */
        NEED(1 + ID + 9);
        if (!value_size(p[1 + ID + 8]) || p[1 + ID + 8] == 2)
            return 0;
        n = 1 + ID + 9 + (size_t)be4(p + 1 + ID + 4) * value_size(p[1 + ID + 8]);
        break;
    case 0xc3: /* PRIMITIVE_ARRAY_NODATA: no data */
        n = 1 + ID + 9;
        break;
    default:
        return 0;
    }
    NEED(n);
#undef NEED
    return n;
}

/* Walk a whole dump; fails the test on any malformation. */
static void walk(const uint8_t *d, size_t len, Walk *w)
{
    static const char magic[] = "JAVA PROFILE 1.0.3";
    size_t pos;

    memset(w, 0, sizeof *w);
    assert_true(len >= sizeof magic + 12);
    assert_memory_equal(d, magic, sizeof magic);
    assert_int_equal(be4(d + sizeof magic), ID);
    pos = sizeof magic + 12;
    while (pos < len) {
        uint8_t tag;
        uint32_t rlen;

        assert_false(w->ended); /* nothing after HEAP_DUMP_END */
        assert_true(len - pos >= 9);
        tag = d[pos];
        rlen = be4(d + pos + 5);
        assert_true(rlen <= len - pos - 9);
        w->records++;
        switch (tag) {
        case 0x01:
            assert_true(rlen >= ID);
            w->strings++;
            break;
        case 0x02:
            assert_int_equal(rlen, 8 + 2 * ID);
            w->classes_loaded++;
            break;
        case 0x05:
            assert_true(rlen >= 12);
            assert_int_equal(rlen, 12 + be4(d + pos + 9 + 8) * ID);
            w->stack_traces++;
            break;
        case 0x0c:
        case 0x1c: {
            size_t at = pos + 9, end = at + rlen;
            w->segments++;
            if (9 + (size_t)rlen > w->largest_segment)
                w->largest_segment = 9 + rlen;
            w->last_segment = 9 + rlen;
            while (at < end) {
                size_t n = sub_len(d + at, end - at);
                if (n == 0)
                    fail_msg("bad sub-record 0x%02x at offset %zu", d[at], at);
                w->sub_count[d[at]]++;
                note_sub(w, d + at, n);
                at += n;
            }
            assert_int_equal(at, end);
            break;
        }
        case 0x2c:
            assert_int_equal(rlen, 0);
            w->ended = 1;
            break;
        default:
            fail_msg("unexpected record tag 0x%02x at %zu", tag, pos);
        }
        pos += 9 + rlen;
    }
    assert_int_equal(pos, len);
    assert_true(w->ended);
}

static uint8_t *generate(uint64_t total, uint32_t seed, const char *package)
{
    hprof_gen *g = hprof_gen_new(total, seed, package);
    uint8_t *d, extra;
    size_t n;

    assert_non_null(g);
    assert_int_equal(hprof_gen_total(g), total);
    d = malloc((size_t)total);
    assert_non_null(d);
    n = hprof_gen_read(g, d, (size_t)total);
    assert_int_equal(n, total);
    assert_int_equal(hprof_gen_read(g, &extra, 1), 0);
    assert_int_equal(hprof_gen_offset(g), total);
    hprof_gen_free(g);
    return d;
}

static void test_exact_sizes_and_well_formed(void **state)
{
    const uint64_t seg = HPROF_GEN_SEGMENT_MAX;
    const uint64_t sizes[] = {
        HPROF_GEN_MIN_TOTAL, HPROF_GEN_MIN_TOTAL + 1, HPROF_GEN_MIN_TOTAL + 2, HPROF_GEN_MIN_TOTAL + 7,
        HPROF_GEN_MIN_TOTAL + 31, HPROF_GEN_MIN_TOTAL + 32, HPROF_GEN_MIN_TOTAL + 33, 5000, 8191, 65536,
        100003, seg - 1, seg, seg + 1, seg + 4096, 2 * seg - 1, 2 * seg, 2 * seg + 1, 3 * seg + 12345,
    };
    size_t i;
    (void)state;

    for (i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
        Walk w;
        uint8_t *d = generate(sizes[i], (uint32_t)i + 1, "com.example.test");
        walk(d, (size_t)sizes[i], &w);
        assert_true(w.largest_segment <= HPROF_GEN_SEGMENT_MAX);
        assert_true(w.strings > 10);
        assert_true(w.classes_loaded > 8);
        assert_int_equal(w.stack_traces, 1);
        free(d);
    }
}

static void test_sub_records_present(void **state)
{
    static const uint8_t wanted[] = { 0xfe, 0xff, 0x01, 0x03, 0x08, 0x89, 0x8a, 0x8b, 0x8d, 0x8e,
                                      0x20, 0x21, 0x22, 0x23, 0xc3 };
    Walk w;
    uint8_t *d = generate(3u << 20, 42, NULL);
    size_t i;
    (void)state;

    walk(d, 3u << 20, &w);
    for (i = 0; i < sizeof wanted; i++)
        if (w.sub_count[wanted[i]] == 0)
            fail_msg("no sub-record 0x%02x", wanted[i]);
    assert_true(w.sub_count[0xfe] >= 3 + 3); /* three heaps, then one per filler segment */
    free(d);
}

static void test_deterministic(void **state)
{
    uint8_t *a = generate(200000, 7, "com.example.a"), *b = generate(200000, 7, "com.example.a");
    uint8_t *c = generate(200000, 8, "com.example.a"), *e = generate(200000, 7, "com.example.b");
    (void)state;

    assert_memory_equal(a, b, 200000);
    assert_true(memcmp(a, c, 200000) != 0);
    assert_true(memcmp(a, e, 200000) != 0);
    free(a);
    free(b);
    free(c);
    free(e);
}

static void test_odd_pieces(void **state)
{
    static const size_t pieces[] = { 1, 2, 3, 5, 7, 8, 9, 13, 31, 32, 33, 4095, 65537, 1 << 20 };
    const uint64_t total = (2u << 20) + 777;
    uint8_t *whole = generate(total, 3, NULL), *got = malloc((size_t)total);
    hprof_gen *g = hprof_gen_new(total, 3, NULL);
    size_t at = 0, k = 0, n;
    (void)state;

    assert_non_null(got);
    while ((n = hprof_gen_read(g, got + at, pieces[k++ % (sizeof pieces / sizeof pieces[0])])) > 0) {
        at += n;
        assert_true(at <= total);
    }
    assert_int_equal(at, total);
    assert_memory_equal(whole, got, (size_t)total);
    assert_int_equal(hprof_gen_read(g, got, 0), 0);
    hprof_gen_free(g);
    free(whole);
    free(got);
}

static void test_bounds(void **state)
{
    char long_package[600];
    hprof_gen *g;
    uint8_t buf[4096];
    Walk w;
    uint32_t seed;
    (void)state;

    assert_null(hprof_gen_new(HPROF_GEN_MIN_TOTAL - 1, 1, NULL));
    assert_null(hprof_gen_new(0, 1, NULL));
    assert_null(hprof_gen_new(HPROF_GEN_MAX_TOTAL + 1, 1, NULL));
    g = hprof_gen_new(HPROF_GEN_MAX_TOTAL, 1, NULL); /* 4 GiB - 20: not read here */
    assert_non_null(g);
    assert_int_equal(hprof_gen_total(g), HPROF_GEN_MAX_TOTAL);
    assert_int_equal(hprof_gen_read(g, buf, sizeof buf), sizeof buf);
    hprof_gen_free(g);
    /* the longest package names still fit the minimum, for any seed */
    memset(long_package, 'p', sizeof long_package - 1);
    long_package[sizeof long_package - 1] = '\0';
    for (seed = 0; seed < 300; seed++) {
        uint8_t *d = generate(HPROF_GEN_MIN_TOTAL, seed, long_package);
        walk(d, HPROF_GEN_MIN_TOTAL, &w);
        free(d);
    }
}

static void test_realistic_heap(void **state)
{
    const size_t total = 12u << 20;
    Walk w;
    uint8_t *d = generate(total, 11, "com.example.shop");
    unsigned instances, prims, objects, android;
    (void)state;

    walk(d, total, &w);
    instances = w.sub_count[0x21];
    prims = w.sub_count[0x23];
    objects = instances + w.sub_count[0x22] + prims;
    print_message("# %u classes, %u strings, %u instances, %u object arrays, %u primitive arrays (%u >= 64 KiB), "
                  "%u segments, HEAP_DUMP_INFO A/I/Z %u/%u/%u, last segment %zu bytes\n",
                  w.classes_loaded, w.strings, instances, w.sub_count[0x22], prims, w.big_prim_arrays, w.segments,
                  w.heaps['A'], w.heaps['I'], w.heaps['Z'], w.last_segment);
    /* hundreds of classes, each with a CLASS_DUMP; their names and field names as strings */
    assert_true(w.classes_loaded >= 300);
    assert_int_equal(w.sub_count[0x20], w.classes_loaded);
    assert_true(w.strings > w.classes_loaded + 30);
    /* many objects, mostly small instances */
    assert_true(objects > 50000);
    assert_true(instances > objects / 2);
    assert_true(w.small_instances > instances * 9 / 10);
    assert_true(w.sub_count[0x22] > objects / 50);
    /* primitive arrays: mostly small, a long tail of big ones (bitmaps) */
    assert_true(w.small_prim_arrays > prims * 3 / 4);
    assert_true(w.big_prim_arrays >= 2);
    /* references: some null, the rest to dumped objects */
    assert_true(w.refs > 1000 && w.refs_null > w.refs / 20 && w.refs_null < w.refs / 2);
    assert_true(w.lowest_ref >= 0x10000000u && w.highest_ref <= w.highest_object);
    /* ART's segments (4096 bytes or 128 objects), each opening with its heap;
     * all three heaps */
    assert_true(w.segments > total / 8192);
    assert_true(w.sub_count[0xfe] >= w.segments - 1);
    assert_true(w.heaps['A'] > 0 && w.heaps['I'] > 0 && w.heaps['Z'] > 0);
    /* Android roots at a real rate: every image and zygote object is VM_INTERNAL */
    android = w.sub_count[0x89] + w.sub_count[0x8a] + w.sub_count[0x8b] + w.sub_count[0x8d] + w.sub_count[0x8e];
    assert_true(android > objects / 10);
    assert_true(w.sub_count[0x08] >= 1 && w.sub_count[0x03] >= w.sub_count[0x08]);
    /* the final filler is small */
    assert_true(w.last_segment < 4096);
    free(d);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_exact_sizes_and_well_formed),
        cmocka_unit_test(test_sub_records_present),
        cmocka_unit_test(test_deterministic),
        cmocka_unit_test(test_odd_pieces),
        cmocka_unit_test(test_bounds),
        cmocka_unit_test(test_realistic_heap),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
