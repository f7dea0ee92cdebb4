/* SPDX-License-Identifier: Apache-2.0
 *
 * Unit tests for ddmon-simvm's heap generator and segment encoder
 * (tools/simvm/heap.c). Pieces are decoded back by a tiny decoder written
 * here from doc/protocol.md, "Heap segments" (not from the plugin's), and
 * must give the same runs, kinds and statistics as the model: partial runs
 * merged, pieces sorted by address, each piece within its cap, runs and
 * declared units ending together.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "heap.h"

typedef struct Run {
    uint8_t state;
    uint32_t units;
} Run;

typedef struct Runs {
    Run *v;
    size_t n, cap;
} Runs;

static void runs_add(Runs *r, uint8_t state, uint32_t units)
{
    if (r->n == r->cap) {
        r->cap = r->cap ? r->cap * 2 : 1024;
        r->v = realloc(r->v, r->cap * sizeof *r->v);
        assert_non_null(r->v);
    }
    r->v[r->n].state = state;
    r->v[r->n].units = units;
    r->n++;
}

/* Field by field: Run has padding, memcmp would compare garbage. */
static int runs_equal(const Runs *a, const Runs *b)
{
    size_t i;

    if (a->n != b->n)
        return 0;
    for (i = 0; i < a->n; i++)
        if (a->v[i].state != b->v[i].state || a->v[i].units != b->v[i].units)
            return 0;
    return 1;
}

static void walk_cb(uint8_t state, uint32_t units, void *ud)
{
    runs_add(ud, state, units);
}

typedef struct Piece {
    uint8_t *data;
    size_t len;
} Piece;

typedef struct Pieces {
    Piece v[4096];
    size_t n;
    size_t max_len;
} Pieces;

static void piece_cb(const uint8_t *piece, size_t len, void *ud)
{
    Pieces *p = ud;

    assert_true(p->n < 4096);
    p->v[p->n].data = malloc(len);
    assert_non_null(p->v[p->n].data);
    memcpy(p->v[p->n].data, piece, len);
    p->v[p->n].len = len;
    if (len > p->max_len)
        p->max_len = len;
    p->n++;
}

static void pieces_free(Pieces *p)
{
    size_t i;

    for (i = 0; i < p->n; i++)
        free(p->v[i].data);
    p->n = 0;
}

static uint32_t be32(const uint8_t *p)
{
    return ((uint32_t)p[0] << 24) | ((uint32_t)p[1] << 16) | ((uint32_t)p[2] << 8) | p[3];
}

static int cmp_addr(const void *a, const void *b)
{
    uint32_t x = be32(((const Piece *)a)->data + 5), y = be32(((const Piece *)b)->data + 5);
    return x < y ? -1 : x > y;
}

/* Independent decoder: header, then (state, n-1) pairs; P=0x80 continues. */
static void decode_pieces(Pieces *p, uint32_t heap_id, uint32_t base, Runs *out)
{
    size_t i, k;
    uint32_t expect_addr = base;

    qsort(p->v, p->n, sizeof p->v[0], cmp_addr);
    for (i = 0; i < p->n; i++) {
        const uint8_t *d = p->v[i].data;
        size_t len = p->v[i].len;
        uint32_t declared, sum = 0, partial = 0;
        int in_partial = 0;
        uint8_t pstate = 0;

        assert_true(len >= 17);
        assert_int_equal(be32(d), heap_id);
        assert_int_equal(d[4], 8);
        assert_int_equal(be32(d + 5), expect_addr); /* contiguous, nothing lost */
        assert_int_equal(be32(d + 9), 0);
        declared = be32(d + 13);
        assert_true((len - 17) % 2 == 0);
        for (k = 17; k < len; k += 2) {
            uint8_t st = d[k], n = d[k + 1];
            if (in_partial)
                assert_int_equal(st & 0x7f, pstate); /* no state change inside a partial sequence */
            if (st & 0x80) {
                in_partial = 1;
                pstate = st & 0x7f;
                partial += (uint32_t)n + 1;
            } else {
                runs_add(out, st, partial + n + 1);
                sum += partial + n + 1;
                partial = 0;
                in_partial = 0;
            }
        }
        assert_false(in_partial); /* a run never straddles two pieces */
        assert_int_equal(sum, declared);
        expect_addr += declared * 8;
    }
}

static void test_simvm_heap_walk_invariants(void **state)
{
    SimHeap h;
    Runs r = { 0 };
    uint64_t total = 0;
    size_t i;
    int g;

    (void)state;
    sim_heap_init(&h, 1, 42, 8 << 20, 32 << 20, 0);
    for (g = 0; g < 5; g++) {
        r.n = 0;
        total = 0;
        sim_heap_walk(&h, walk_cb, &r);
        assert_true(r.n > 1000);
        for (i = 0; i < r.n; i++) {
            assert_true(r.v[i].units >= 1);
            assert_true(r.v[i].units <= SIM_RUN_MAX_UNITS);
            assert_int_equal(r.v[i].state & 0x80, 0);
            if (i > 0)
                assert_false(SIM_SEG_SOLIDITY(r.v[i].state) == 0 && SIM_SEG_SOLIDITY(r.v[i - 1].state) == 0);
            total += r.v[i].units;
        }
        assert_int_equal(total, h.size_units);
        assert_true(h.size_units <= h.max_units);
        sim_heap_gc(&h);
    }
    free(r.v);
}

static void test_simvm_heap_deterministic_and_changes(void **state)
{
    SimHeap a, b;
    Runs ra = { 0 }, rb = { 0 };

    (void)state;
    sim_heap_init(&a, 1, 7, 1 << 20, 4 << 20, 0);
    sim_heap_init(&b, 1, 7, 1 << 20, 4 << 20, 0);
    sim_heap_walk(&a, walk_cb, &ra);
    sim_heap_walk(&b, walk_cb, &rb);
    assert_int_equal(ra.n, rb.n);
    assert_true(runs_equal(&ra, &rb));
    /* a GC changes the heap */
    sim_heap_gc(&b);
    rb.n = 0;
    sim_heap_walk(&b, walk_cb, &rb);
    assert_false(runs_equal(&ra, &rb));
    free(ra.v);
    free(rb.v);
}

static void check_roundtrip(uint32_t heap_id, int native, size_t max_chunk, uint32_t size)
{
    SimHeap h;
    Runs model = { 0 }, decoded = { 0 };
    Pieces *p = calloc(1, sizeof *p);
    SimSegStats enc, dec = { 0 };
    const SimSegStats *cached;
    size_t i;
    uint32_t npieces;
    int has_partial = 0;

    assert_non_null(p);
    sim_heap_init(&h, heap_id, 99 + heap_id, size, size * 2, native);
    sim_heap_gc(&h);
    sim_heap_walk(&h, walk_cb, &model);
    npieces = sim_heap_encode_segments(&h, max_chunk, piece_cb, p, &enc);
    assert_int_equal(npieces, p->n);
    assert_int_equal(enc.pieces, p->n);
    assert_true(p->max_len <= (max_chunk < SIM_SEG_MIN_CHUNK ? SIM_SEG_MIN_CHUNK : max_chunk));
    assert_true(p->max_len <= SIM_SEG_ART_MAX_CHUNK);
    for (i = 0; i < p->n; i++)
        for (size_t k = 17; k < p->v[i].len; k += 2)
            has_partial |= (p->v[i].data[k] & 0x80) != 0;
    /* decode out of order: reverse the pieces first */
    for (i = 0; i < p->n / 2; i++) {
        Piece t = p->v[i];
        p->v[i] = p->v[p->n - 1 - i];
        p->v[p->n - 1 - i] = t;
    }
    decode_pieces(p, heap_id, h.base_addr, &decoded);
    assert_int_equal(decoded.n, model.n);
    assert_true(runs_equal(&decoded, &model));
    for (i = 0; i < decoded.n; i++) {
        sim_seg_stats_add_run(&dec, decoded.v[i].state, decoded.v[i].units);
        if (native)
            assert_true(decoded.v[i].state == 0 || decoded.v[i].state == SIM_SEG_STATE(1, SIM_KIND_NATIVE));
    }
    dec.pieces = enc.pieces;
    assert_int_equal(dec.total_units, enc.total_units);
    assert_int_equal(dec.free_bytes, enc.free_bytes);
    assert_int_equal(dec.free_count, enc.free_count);
    assert_int_equal(dec.largest_free, enc.largest_free);
    assert_memory_equal(dec.bytes, enc.bytes, sizeof enc.bytes);
    assert_memory_equal(dec.count, enc.count, sizeof enc.count);
    cached = sim_heap_stats(&h);
    assert_int_equal(cached->total_units, enc.total_units);
    assert_int_equal(cached->free_bytes, enc.free_bytes);
    assert_int_equal(cached->largest_free, enc.largest_free);
    assert_memory_equal(cached->bytes, enc.bytes, sizeof enc.bytes);
    assert_memory_equal(cached->count, enc.count, sizeof enc.count);
    assert_true(has_partial); /* long runs are on the wire as partial sequences */
    pieces_free(p);
    free(p);
    free(model.v);
    free(decoded.v);
}

static void test_simvm_heap_roundtrip_art_cap(void **state)
{
    (void)state;
    check_roundtrip(1, 0, SIM_SEG_ART_MAX_CHUNK, 8 << 20);
}

static void test_simvm_heap_roundtrip_small_pieces(void **state)
{
    (void)state;
    check_roundtrip(2, 0, 1024, 2 << 20);
}

static void test_simvm_heap_roundtrip_native(void **state)
{
    (void)state;
    check_roundtrip(1, 1, SIM_SEG_ART_MAX_CHUNK, 4 << 20);
}

static void test_simvm_heap_several_pieces(void **state)
{
    SimHeap h;
    Pieces *p = calloc(1, sizeof *p);

    (void)state;
    assert_non_null(p);
    sim_heap_init(&h, 1, 5, 8 << 20, 16 << 20, 0);
    assert_true(sim_heap_encode_segments(&h, 1 << 20 /* clamped to 16368 */, piece_cb, p, NULL) >= 2);
    assert_true(p->max_len <= 16368);
    assert_true(p->max_len > 16368 - 600); /* pieces are filled, as ART fills them */
    pieces_free(p);
    free(p);
}

static void test_simvm_heap_partial_split(void **state)
{
    static const struct {
        uint32_t units;
        size_t bytes;
        uint8_t last_count;
    } cases[] = {
        { 1, 2, 0 }, { 2, 2, 1 }, { 255, 2, 254 }, { 256, 2, 255 }, { 257, 4, 0 },
        { 512, 4, 255 }, { 513, 6, 0 }, { 1000, 8, 231 }, { 65536, 512, 255 },
    };
    uint8_t buf[1024];
    size_t i, k;

    (void)state;
    for (i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        size_t n = sim_seg_put_run(buf, SIM_SEG_STATE(1, SIM_KIND_ARRAY1) | 0x80 /* ignored */, cases[i].units);
        uint32_t sum = 0;
        assert_int_equal(n, cases[i].bytes);
        assert_int_equal(n, 2 * sim_seg_run_pairs(cases[i].units));
        for (k = 0; k + 2 < n; k += 2) {
            assert_int_equal(buf[k], SIM_SEG_STATE(1, SIM_KIND_ARRAY1) | 0x80);
            assert_int_equal(buf[k + 1], 255);
            sum += 256;
        }
        assert_int_equal(buf[n - 2], SIM_SEG_STATE(1, SIM_KIND_ARRAY1));
        assert_int_equal(buf[n - 1], cases[i].last_count);
        assert_int_equal(sum + buf[n - 1] + 1, cases[i].units);
    }
}

static void test_simvm_heap_hpif_entry(void **state)
{
    SimHeap h;
    ddm_writer w;
    ddm_reader r;
    const SimSegStats *s;
    uint64_t alloc = 0, objects = 0;
    unsigned k;

    (void)state;
    sim_heap_init(&h, 2, 3, 1 << 20, 4 << 20, 0);
    s = sim_heap_stats(&h);
    for (k = 0; k < SIM_KIND_COUNT; k++) {
        alloc += s->bytes[k];
        objects += s->count[k];
    }
    ddm_writer_init(&w, 0);
    sim_heap_write_hpif(&w, &h, 1700000000123ULL, 3);
    assert_int_equal(w.len, 29);
    ddm_reader_init(&r, w.data, w.len);
    assert_int_equal(ddm_read_u4(&r), 2);
    assert_int_equal(ddm_read_u8(&r), 1700000000123ULL);
    assert_int_equal(ddm_read_u1(&r), 3);
    assert_int_equal(ddm_read_u4(&r), h.max_units * 8);
    assert_int_equal(ddm_read_u4(&r), h.size_units * 8);
    assert_int_equal(ddm_read_u4(&r), alloc);
    assert_int_equal(ddm_read_u4(&r), objects);
    assert_true(ddm_reader_ok(&r));
    assert_int_equal(alloc + s->free_bytes, (uint64_t)h.size_units * 8);
    ddm_writer_reset(&w);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_simvm_heap_walk_invariants),
        cmocka_unit_test(test_simvm_heap_deterministic_and_changes),
        cmocka_unit_test(test_simvm_heap_roundtrip_art_cap),
        cmocka_unit_test(test_simvm_heap_roundtrip_small_pieces),
        cmocka_unit_test(test_simvm_heap_roundtrip_native),
        cmocka_unit_test(test_simvm_heap_several_pieces),
        cmocka_unit_test(test_simvm_heap_partial_split),
        cmocka_unit_test(test_simvm_heap_hpif_entry),
    };
    return cmocka_run_group_tests_name("simvm-heap", tests, NULL, NULL);
}
