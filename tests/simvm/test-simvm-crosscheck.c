/* SPDX-License-Identifier: Apache-2.0
 *
 * Cross-check of two independent implementations of the same formats:
 * ddmon-simvm's encoders against the plugins' decoders. Heap segments
 * (plugins/common/segdecode.c): every piece simvm sends must be accepted and
 * the decoder's statistics must equal the ground truth simvm writes to its
 * state file (counts and bytes per kind, free bytes and count, largest
 * free run, total units). THST and STKL (plugins/threads) and NHGT v1/v2
 * (plugins/nativeheap): parsed back to the model. If this fails, one of
 * the two sides has misread the format (doc/protocol.md, "Heap segments",
 * "THST", "STKL", "NHGT").
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "heap.h"
#include "native.h"
#include "plugins/common/segdecode.h"
#include "plugins/nativeheap/nhgt.h"
#include "plugins/threads/threads.h"
#include "threads.h"

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

static void test_simvm_crosscheck_thst_stkl(void **state)
{
    SimThreads ts;
    ddm_writer w;
    thst_table t;
    stkl_trace st;
    char why[128];
    uint32_t i;
    uint8_t *p;
    size_t len;

    (void)state;
    sim_threads_init(&ts, 3000, 8, 20, 1);
    sim_threads_step(&ts, 2000, 0.0, NULL, NULL);
    ddm_writer_init(&w, 0);
    sim_threads_write_thst(&ts, &w);
    p = ddm_writer_take(&w, &len);
    assert_int_equal(threads_parse_thst(p, len, &t, why, sizeof why), 0);
    assert_int_equal(t.n, ts.n);
    for (i = 0; i < ts.n; i++) {
        assert_int_equal(t.e[i].id, ts.v[i].id);
        assert_int_equal(t.e[i].status, sim_thread_wire_status(&ts, &ts.v[i]));
        assert_int_equal(t.e[i].tid, ts.v[i].tid);
        assert_int_equal(t.e[i].utime, ts.v[i].utime_milli / 1000);
        assert_int_equal(t.e[i].stime, ts.v[i].stime_milli / 1000);
        assert_int_equal(t.e[i].daemon, ts.v[i].daemon);
    }
    threads_thst_clear(&t);
    free(p);
    for (i = 0; i < ts.n; i++) {
        assert_int_equal(sim_threads_write_stkl(&ts, ts.v[i].id, &w), 0);
        p = ddm_writer_take(&w, &len);
        assert_int_equal(threads_parse_stkl(p, len, &st, why, sizeof why), 0);
        assert_int_equal(st.thread_id, ts.v[i].id);
        threads_stkl_clear(&st);
        free(p);
    }
    sim_threads_clear(&ts);
}

static void test_simvm_crosscheck_nhgt(void **state)
{
    static const unsigned forms[][2] = { { 1, 4 }, { 2, 4 }, { 2, 8 } };
    unsigned f;

    (void)state;
    for (f = 0; f < 3; f++) {
        ddm_writer w;
        SimNhgtStats s;
        nhgt_info in;
        char err[128];
        uint64_t total = 0, zygote = 0;
        size_t i;

        ddm_writer_init(&w, 0);
        sim_native_write_nhgt(&w, 77, f, forms[f][0], forms[f][1], &s);
        assert_int_equal(nhgt_parse(w.data, w.len, &in, err, sizeof err), 0);
        assert_int_equal(in.version, (int)forms[f][0]);
        assert_int_equal(in.ptr_size, forms[f][1]);
        assert_int_equal(in.n_records, s.records);
        assert_int_equal(in.map_size, s.map_bytes);
        assert_int_equal(in.total_memory, s.total_memory);
        assert_int_equal(in.backtrace_size, s.backtrace_size);
        assert_false(in.ragged);
        for (i = 0; i < in.n_records; i++) {
            nhgt_record r;
            nhgt_record_at(&in, i, &r);
            total += r.size * r.count;
            if (r.zygote)
                zygote += r.size * r.count;
            assert_true(nhgt_frame(&in, &r, 0) != 0);
        }
        assert_int_equal(total, s.total_memory);
        assert_int_equal(zygote, s.zygote_bytes);
        ddm_writer_reset(&w);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_simvm_crosscheck_managed),
        cmocka_unit_test(test_simvm_crosscheck_native),
        cmocka_unit_test(test_simvm_crosscheck_thst_stkl),
        cmocka_unit_test(test_simvm_crosscheck_nhgt),
    };
    return cmocka_run_group_tests_name("simvm-crosscheck", tests, NULL, NULL);
}
