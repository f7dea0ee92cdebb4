/* SPDX-License-Identifier: Apache-2.0
 *
 * The simulator's method-trace generator (tools/simvm/trace_gen.c), read
 * back by the plugin's decoder (plugins/profile/trace_decode.c, which
 * knows nothing of the generator): the calls per method and per thread
 * equal its ground truth, the header's figures equal what follows, the
 * bytes do not depend on how they are read, and the size follows the
 * byte target.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "plugins/profile/trace_decode.h"
#include "trace_gen.h"

static trace_gen_params params(int sampling, int dual, uint64_t bytes)
{
    trace_gen_params p;
    memset(&p, 0, sizeof p);
    p.sampling = sampling;
    p.dual = dual;
    p.seed = 99;
    p.bytes = bytes;
    p.interval_us = 250;
    p.pid = 4321;
    p.start_usec = 1700000000123456ull;
    return p;
}

/* Read everything in steps of @step; decode as it comes. */
static trace_decoder *read_all(trace_gen *g, size_t step, uint8_t **copy, size_t *len)
{
    trace_decoder *d = trace_decoder_new();
    uint8_t *buf = malloc(step);
    size_t n;
    *len = 0;
    *copy = NULL;
    size_t cap = 0;
    while ((n = trace_gen_read(g, buf, step)) > 0) {
        if (*len + n > cap) {
            cap = (*len + n) * 2;
            *copy = realloc(*copy, cap);
        }
        memcpy(*copy + *len, buf, n);
        *len += n;
        assert_int_equal(trace_decoder_feed(d, buf, n), 0);
    }
    free(buf);
    assert_int_equal(trace_decoder_finish(d), 0);
    return d;
}

static void check_truth(int sampling, int dual, uint64_t bytes)
{
    trace_gen_params p = params(sampling, dual, bytes);
    trace_gen *g = trace_gen_new(&p);
    uint8_t *a;
    size_t alen;
    assert_non_null(g);
    const trace_gen_truth *t = trace_gen_truth_of(g);
    trace_decoder *d = read_all(g, 4093, &a, &alen);
    const trace_info *in = trace_decoder_info(d);

    assert_int_equal(alen, t->size);
    assert_true(t->records * (dual ? 14u : 10u) >= bytes);
    assert_int_equal(in->records, t->records);
    assert_int_equal(in->num_method_calls, (int64_t)t->records);
    assert_int_equal(in->elapsed_usec, (int64_t)t->elapsed_usec);
    assert_int_equal(in->data_version, dual ? 3 : 2);
    assert_int_equal(in->record_size, dual ? 14 : 10);
    assert_int_equal(in->dual, dual);
    assert_int_equal(in->clock, dual ? TRACE_CLOCK_DUAL : TRACE_CLOCK_THREAD_CPU);
    assert_int_equal(in->pid, 4321);
    assert_int_equal(in->start_usec, 1700000000123456ull);
    assert_int_equal(in->unknown_records, 0);
    assert_int_equal(in->unmatched_exits, 0);
    if (dual)
        assert_int_equal(in->last_wall_usec, t->elapsed_usec);
    for (unsigned i = 0; i < TRACE_GEN_METHODS; i++) {
        const trace_method *m = trace_decoder_find(d, trace_gen_method_id(i));
        assert_non_null(m);
        assert_string_equal(m->class_name, trace_gen_method_class(i));
        assert_string_equal(m->name, trace_gen_method_name(i));
        assert_string_equal(m->signature, trace_gen_method_signature(i));
        assert_int_equal(m->calls, t->calls[i]);
    }
    assert_int_equal(t->calls[0], 1); /* Looper.loop: once, open all along */
    assert_int_equal(t->calls[7], 2); /* Thread.run: once per worker */
    assert_int_equal(trace_decoder_n_threads(d), TRACE_GEN_THREADS);
    for (unsigned i = 0; i < TRACE_GEN_THREADS; i++) {
        const trace_thread *th = trace_decoder_thread(d, i);
        assert_int_equal(th->tid, trace_gen_thread_tid(i));
        assert_string_equal(th->name, trace_gen_thread_name(i));
        assert_int_equal(th->calls, t->thread_calls[i]);
    }
    /* the roots span their threads: inclusive = the thread's time */
    assert_int_equal(trace_decoder_find(d, trace_gen_method_id(0))->inclusive_usec,
                     trace_decoder_thread(d, 0)->usec);
    if (sampling) /* every thread-clock step is one or two intervals */
        assert_int_equal(trace_decoder_thread(d, 0)->usec % 250, 0);

    /* the same bytes, read in pieces of another size (one at a time when small) */
    trace_gen *g2 = trace_gen_new(&p);
    uint8_t *b;
    size_t blen;
    trace_decoder *d2 = read_all(g2, alen < 200000 ? 1 : 997, &b, &blen);
    assert_int_equal(alen, blen);
    assert_memory_equal(a, b, alen);
    assert_int_equal(trace_gen_read(g2, b, 1), 0);
    trace_decoder_free(d2);
    trace_gen_free(g2);
    free(b);
    free(a);
    trace_decoder_free(d);
    trace_gen_free(g);
}

static void test_tracing_dual(void **state)
{
    (void)state;
    check_truth(0, 1, 0);
    check_truth(0, 1, 5000);
    check_truth(0, 1, 1 << 20);
}

static void test_tracing_single(void **state)
{
    (void)state;
    check_truth(0, 0, 30000);
}

static void test_sampling(void **state)
{
    (void)state;
    check_truth(1, 1, 100000);
    check_truth(1, 0, 777);
}

/* A trace of duration_usec: its clocks span about that long (a 2 s
 * sampling trace read 12.8 s of main-thread time before), and one cut to
 * the buffer says data-file-overflow=true. */
static void test_duration_and_overflow(void **state)
{
    (void)state;
    for (int sampling = 0; sampling <= 1; sampling++) {
        trace_gen_params p = params(sampling, 1, 400000);
        p.duration_usec = 2000000;
        p.overflow = sampling;
        trace_gen *g = trace_gen_new(&p);
        uint8_t *a;
        size_t alen;
        assert_non_null(g);
        trace_decoder *d = read_all(g, 65536, &a, &alen);
        const trace_info *in = trace_decoder_info(d);
        assert_true(in->elapsed_usec >= 1000000 && in->elapsed_usec <= 3000000);
        assert_true(in->last_wall_usec >= 1000000 && in->last_wall_usec <= 3000000);
        for (unsigned i = 0; i < TRACE_GEN_THREADS; i++)
            assert_true(trace_decoder_thread(d, i)->usec <= (uint64_t)in->last_wall_usec);
        assert_int_equal(in->overflow, sampling);
        free(a);
        trace_decoder_free(d);
        trace_gen_free(g);
    }
}

static void test_seeds_differ_and_sizes_grow(void **state)
{
    trace_gen_params p = params(0, 1, 20000);
    trace_gen *a = trace_gen_new(&p);
    p.seed++;
    trace_gen *b = trace_gen_new(&p);
    p.bytes *= 10;
    trace_gen *c = trace_gen_new(&p);
    (void)state;
    assert_true(memcmp(trace_gen_truth_of(a)->calls, trace_gen_truth_of(b)->calls,
                       sizeof trace_gen_truth_of(a)->calls) != 0);
    assert_true(trace_gen_truth_of(c)->size > 9 * trace_gen_truth_of(b)->size);
    p.bytes = TRACE_GEN_MAX_BYTES + 1;
    assert_null(trace_gen_new(&p));
    trace_gen_free(a);
    trace_gen_free(b);
    trace_gen_free(c);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_tracing_dual),
        cmocka_unit_test(test_tracing_single),
        cmocka_unit_test(test_sampling),
        cmocka_unit_test(test_duration_and_overflow),
        cmocka_unit_test(test_seeds_differ_and_sizes_grow),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
