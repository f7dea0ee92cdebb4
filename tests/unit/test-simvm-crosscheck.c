/* SPDX-License-Identifier: Apache-2.0
 *
 * Cross-check of two independent implementations of the heap segment
 * format: ddmon-simvm's encoder (tools/simvm/heap.c) against the heap
 * plugin's decoder (plugins/heap/segdecode.c). Every piece simvm sends
 * must be accepted, and the decoder's statistics must equal the ground
 * truth simvm writes to its state file (counts and bytes per kind, free
 * bytes and count, largest free run, total units). If this fails, one of
 * the two has misread the wire reference.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "heap.h"
#include "plugins/heap/segdecode.h"

typedef struct Acc {
    seg_stats total;
    int rejected;
    size_t max_len;
} Acc;

static void piece_cb(const uint8_t *piece, size_t len, void *ud)
{
    Acc *a = ud;
    seg_piece p;
    seg_stats one;
    seg_error_at at;
    seg_error e;

    if (len > a->max_len)
        a->max_len = len;
    e = seg_piece_parse(piece, len, &p);
    if (e == SEG_OK) {
        seg_stats_reset(&one);
        e = seg_piece_decode(&p, &one, &at);
    }
    if (e != SEG_OK) {
        print_error("piece rejected: %s at run byte %zu\n", seg_error_str(e), at.run_offset);
        a->rejected++;
        return;
    }
    seg_stats_add(&a->total, &one);
}

static void check(uint64_t seed, uint32_t size, int native, size_t max_chunk, int gcs)
{
    SimHeap h;
    SimSegStats truth;
    Acc a;
    unsigned k;
    int g;

    sim_heap_init(&h, 1, seed, size, size * 4, native);
    for (g = 0; g < gcs; g++)
        sim_heap_gc(&h);
    memset(&a, 0, sizeof a);
    seg_stats_reset(&a.total);
    sim_heap_encode_segments(&h, max_chunk, piece_cb, &a, &truth);
    assert_int_equal(a.rejected, 0);
    assert_int_equal(a.total.pieces, truth.pieces);
    assert_int_equal(a.total.total_units, truth.total_units);
    assert_int_equal(a.total.cls[SEG_CLASS_FREE].bytes, truth.free_bytes);
    assert_int_equal(a.total.cls[SEG_CLASS_FREE].count, truth.free_count);
    assert_int_equal(a.total.largest_free_bytes, truth.largest_free);
    for (k = 0; k < SIM_KIND_COUNT; k++) {
        assert_int_equal(a.total.cls[1 + k].bytes, truth.bytes[k]);
        assert_int_equal(a.total.cls[1 + k].count, truth.count[k]);
    }
}

static void test_simvm_crosscheck_managed(void **state)
{
    (void)state;
    check(1, 8 << 20, 0, SIM_SEG_ART_MAX_CHUNK, 0);
    check(2, 8 << 20, 0, SIM_SEG_ART_MAX_CHUNK, 3);
    check(3, 1 << 20, 0, SIM_SEG_MIN_CHUNK, 1);
}

static void test_simvm_crosscheck_native(void **state)
{
    (void)state;
    check(4, 4 << 20, 1, SIM_SEG_ART_MAX_CHUNK, 0);
    check(5, 4 << 20, 1, 2048, 2);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_simvm_crosscheck_managed),
        cmocka_unit_test(test_simvm_crosscheck_native),
    };
    return cmocka_run_group_tests_name("simvm-crosscheck", tests, NULL, NULL);
}
