/* SPDX-License-Identifier: Apache-2.0
 *
 * The .trace push parser (plugins/profile/trace_decode.c): traces built
 * here byte by byte (versions 1-3, single and dual clock) with known
 * figures, fed whole and in every split; and the refusals (bad magic,
 * unknown version, bad offset, bad record size, truncation anywhere,
 * caps) with their messages.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "plugins/profile/trace_decode.h"

typedef struct buf {
    uint8_t *p;
    size_t n, cap;
} buf;

static void put(buf *b, const void *d, size_t n)
{
    if (b->n + n > b->cap) {
        b->cap = (b->n + n) * 2 + 64;
        b->p = realloc(b->p, b->cap);
        assert_non_null(b->p);
    }
    memcpy(b->p + b->n, d, n);
    b->n += n;
}

static void puts_(buf *b, const char *s)
{
    put(b, s, strlen(s));
}

static void le(buf *b, uint64_t v, unsigned n)
{
    uint8_t x[8];
    for (unsigned i = 0; i < n; i++)
        x[i] = (uint8_t)(v >> (8 * i));
    put(b, x, n);
}

#define A_ID 0x100u
#define B_ID 0x104u
#define C_ID 0x108u

static void header(buf *b, int version, const char *clock)
{
    char s[256];
    snprintf(s, sizeof s,
             "*version\n%d\ndata-file-overflow=false\nclock=%s\nelapsed-time-usec=999\n"
             "num-method-calls=10\nclock-call-overhead-nsec=7\nvm=art\npid=4242\n"
             "*threads\n1\tmain\n2\tworker\n*methods\n",
             version, clock);
    puts_(b, s);
    puts_(b, "0x100\tcom.a.A\trun\t()V\tA.java\t12\n");
    puts_(b, "0x104\tcom.a.B\tfib\t(I)I\tB.java\n");
    puts_(b, "0x108\tcom.a.C\n");
    puts_(b, "*end\n");
}

static void slow(buf *b, unsigned version, unsigned offset, unsigned record_size)
{
    size_t start = b->n;
    le(b, TRACE_MAGIC, 4);
    le(b, version, 2);
    le(b, offset, 2);
    le(b, 1700000000000000ull, 8);
    if (version == 3)
        le(b, record_size, 2);
    while (b->n - start < offset)
        le(b, 0, 1);
}

static void rec(buf *b, unsigned version, unsigned rs, uint32_t tid, uint32_t val, uint32_t t,
                uint32_t wall)
{
    size_t start = b->n;
    le(b, tid, version == 1 ? 1 : 2);
    le(b, val, 4);
    le(b, t, 4);
    if (version == 3 && rs >= 14)
        le(b, wall, 4);
    while (b->n - start < rs)
        le(b, 0xee, 1);
}

/* Thread 1: A enters at 0, B at 10, B (recursive) at 20, exits at 25 and
 * 40, C enters at 45, exits 50, A exits 100. Thread 2: B 5..15. */
static void body(buf *b, unsigned v, unsigned rs)
{
    rec(b, v, rs, 1, A_ID, 0, 1000);
    rec(b, v, rs, 2, B_ID, 5, 1001);
    rec(b, v, rs, 1, B_ID, 10, 1002);
    rec(b, v, rs, 2, B_ID | 1, 15, 1003);
    rec(b, v, rs, 1, B_ID, 20, 1004);
    rec(b, v, rs, 1, B_ID | 1, 25, 1005);
    rec(b, v, rs, 1, B_ID | 1, 40, 1006);
    rec(b, v, rs, 1, C_ID, 45, 1007);
    rec(b, v, rs, 1, C_ID | 1, 50, 1008);
    rec(b, v, rs, 1, A_ID | 1, 100, 1999);
}

static buf make(unsigned v, unsigned rs, const char *clock)
{
    buf b = {0};
    header(&b, v == 3 ? 3 : 2, clock);
    slow(&b, v, 32, rs);
    body(&b, v, rs);
    return b;
}

static trace_decoder *decode(const buf *b, size_t piece)
{
    trace_decoder *d = trace_decoder_new();
    assert_non_null(d);
    for (size_t off = 0; off < b->n; off += piece) {
        size_t n = b->n - off < piece ? b->n - off : piece;
        if (trace_decoder_feed(d, b->p + off, n) != 0)
            return d;
    }
    trace_decoder_finish(d);
    return d;
}

static void check_figures(trace_decoder *d)
{
    const trace_method *a, *bm, *c;
    assert_null(trace_decoder_error(d));
    a = trace_decoder_find(d, A_ID);
    bm = trace_decoder_find(d, B_ID | 1);
    c = trace_decoder_find(d, C_ID);
    assert_non_null(a);
    assert_non_null(bm);
    assert_non_null(c);
    assert_string_equal(a->class_name, "com.a.A");
    assert_string_equal(a->name, "run");
    assert_string_equal(a->file, "A.java");
    assert_int_equal(a->line, 12);
    assert_null(c->file);
    assert_string_equal(c->name, "");
    assert_int_equal(a->calls, 1);
    assert_int_equal(bm->calls, 3);
    assert_int_equal(c->calls, 1);
    /* A: 0..100 inclusive; exclusive 0-10, 40-45, 50-100 */
    assert_int_equal(a->inclusive_usec, 100);
    assert_int_equal(a->exclusive_usec, 10 + 5 + 50);
    /* B: outer frame 10..40 on thread 1 (the nested one not again), 5..15 on thread 2 */
    assert_int_equal(bm->inclusive_usec, 30 + 10);
    assert_int_equal(bm->exclusive_usec, 30 + 10);
    assert_int_equal(c->inclusive_usec, 5);
    assert_int_equal(c->exclusive_usec, 5);

    const trace_info *in = trace_decoder_info(d);
    assert_int_equal(in->records, 10);
    assert_int_equal(in->elapsed_usec, 999);
    assert_int_equal(in->num_method_calls, 10);
    assert_int_equal(in->pid, 4242);
    assert_int_equal(in->clock_overhead_nsec, 7);
    assert_string_equal(in->vm, "art");
    assert_int_equal(in->methods_listed, 3);
    assert_int_equal(in->threads_listed, 2);
    assert_int_equal(in->unknown_records, 0);
    assert_int_equal(in->unmatched_exits, 0);
    assert_int_equal(in->total_usec, 100 + 10);
    assert_int_equal(in->start_usec, 1700000000000000ull);

    assert_int_equal(trace_decoder_n_threads(d), 2);
    const trace_thread *t1 = trace_decoder_thread(d, 0), *t2 = trace_decoder_thread(d, 1);
    assert_int_equal(t1->tid, 1);
    assert_string_equal(t1->name, "main");
    assert_int_equal(t1->records, 8);
    assert_int_equal(t1->calls, 4);
    assert_int_equal(t1->usec, 100);
    assert_int_equal(t1->max_depth, 3);
    assert_int_equal(t2->tid, 2);
    assert_string_equal(t2->name, "worker");
    assert_int_equal(t2->calls, 1);

    const trace_method *top[8];
    size_t n = trace_decoder_top(d, TRACE_BY_INCLUSIVE, top, 8);
    assert_int_equal(n, 3);
    assert_ptr_equal(top[0], a);
    assert_ptr_equal(top[1], bm);
    assert_ptr_equal(top[2], c);
    n = trace_decoder_top(d, TRACE_BY_EXCLUSIVE, top, 1);
    assert_int_equal(n, 1);
    assert_ptr_equal(top[0], a);
    n = trace_decoder_top(d, TRACE_BY_CALLS, top, 8);
    assert_ptr_equal(top[0], bm);
}

static void test_versions_and_splits(void **state)
{
    static const struct {
        unsigned v, rs;
        const char *clock;
        int dual;
    } cases[] = {{1, 9, "thread-cpu", 0}, {2, 10, "wall", 0}, {3, 14, "dual", 1},
                 {3, 10, "thread-cpu", 0}, {3, 20, "dual", 1}};
    (void)state;
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        buf b = make(cases[i].v, cases[i].rs, cases[i].clock);
        for (size_t piece = 1; piece <= b.n; piece = piece < 20 ? piece + 1 : piece * 3) {
            trace_decoder *d = decode(&b, piece);
            check_figures(d);
            assert_int_equal(trace_decoder_info(d)->data_version, cases[i].v);
            assert_int_equal(trace_decoder_info(d)->record_size, cases[i].rs);
            assert_int_equal(trace_decoder_info(d)->dual, cases[i].dual);
            if (cases[i].dual)
                assert_int_equal(trace_decoder_info(d)->last_wall_usec, 1999);
            trace_decoder_free(d);
        }
        trace_decoder_free(decode(&b, b.n));
        free(b.p);
    }
}

static void test_larger_offset_skipped(void **state)
{
    buf b = {0};
    (void)state;
    header(&b, 3, "dual");
    slow(&b, 3, 100, 14); /* 82 bytes of padding */
    body(&b, 3, 14);
    trace_decoder *d = decode(&b, 7);
    check_figures(d);
    assert_int_equal(trace_decoder_info(d)->data_offset, 100);
    trace_decoder_free(d);
    free(b.p);
}

static void expect_error(const buf *b, const char *needle)
{
    for (size_t piece = 1; piece <= b->n + 1; piece = piece * 2 + 1) {
        trace_decoder *d = decode(b, piece);
        const char *e = trace_decoder_error(d);
        assert_non_null(e);
        if (!strstr(e, needle))
            fail_msg("error '%s' does not say '%s'", e, needle);
        /* sticky */
        assert_int_equal(trace_decoder_feed(d, (const uint8_t *)"x", 1), -EPROTO);
        assert_int_equal(trace_decoder_finish(d), -EPROTO);
        trace_decoder_free(d);
    }
}

static void test_bad_data_header(void **state)
{
    buf b = {0};
    (void)state;
    header(&b, 3, "dual");
    puts_(&b, "JUNKJUNKJUNKJUNKJUNK");
    expect_error(&b, "no SLOW data header");
    free(b.p);

    memset(&b, 0, sizeof b);
    header(&b, 3, "dual");
    slow(&b, 4, 32, 14);
    expect_error(&b, "unknown trace data version 4");
    free(b.p);

    memset(&b, 0, sizeof b);
    header(&b, 3, "dual");
    slow(&b, 0, 32, 14);
    expect_error(&b, "unknown trace data version 0");
    free(b.p);

    memset(&b, 0, sizeof b);
    header(&b, 2, "wall");
    slow(&b, 2, 8, 10); /* an offset inside the header itself */
    expect_error(&b, "bad data offset 8");
    free(b.p);

    memset(&b, 0, sizeof b);
    header(&b, 3, "dual");
    slow(&b, 3, 16, 14); /* v3 needs 18 */
    expect_error(&b, "bad data offset 16");
    free(b.p);

    memset(&b, 0, sizeof b);
    header(&b, 3, "dual");
    slow(&b, 3, 32, 6);
    expect_error(&b, "bad record size 6");
    free(b.p);

    memset(&b, 0, sizeof b);
    header(&b, 3, "dual");
    slow(&b, 3, 32, 65000);
    expect_error(&b, "bad record size 65000");
    free(b.p);
}

static void test_truncated(void **state)
{
    buf b = make(3, 14, "dual");
    (void)state;
    size_t full = b.n;
    b.n = full - 5; /* inside the last record */
    expect_error(&b, "9 bytes into a 14-byte record");
    b.n = 40; /* inside the text header */
    expect_error(&b, "without *end");
    b.n = full - 10 * 14 - 20; /* inside the SLOW header */
    expect_error(&b, "inside the SLOW data header");
    free(b.p);
}

static void test_not_a_trace(void **state)
{
    buf b = {0};
    (void)state;
    puts_(&b, "JAVA PROFILE 1.0.3\n");
    expect_error(&b, "not a method trace");
    free(b.p);

    memset(&b, 0, sizeof b);
    puts_(&b, "*version\n3\n*bogus\n");
    expect_error(&b, "unknown section");
    free(b.p);

    memset(&b, 0, sizeof b);
    puts_(&b, "*version\n3\n*methods\nzzz\tcom.X\n*end\n");
    expect_error(&b, "bad method line");
    free(b.p);

    memset(&b, 0, sizeof b);
    puts_(&b, "*version\n3\n*methods\n0x10\ta\n0x11\tb\n*end\n"); /* the same id, action bits aside */
    expect_error(&b, "listed twice");
    free(b.p);

    memset(&b, 0, sizeof b);
    puts_(&b, "*version\n3\n*threads\nx\tmain\n");
    expect_error(&b, "bad thread id");
    free(b.p);
}

static void test_line_cap(void **state)
{
    buf b = {0};
    (void)state;
    puts_(&b, "*version\n3\n*methods\n0x10\t");
    for (unsigned i = 0; i < TRACE_MAX_LINE; i++)
        puts_(&b, "a");
    puts_(&b, "\n*end\n");
    expect_error(&b, "header line longer than");
    free(b.p);
}

static void test_depth_cap(void **state)
{
    buf b = {0};
    (void)state;
    header(&b, 2, "wall");
    slow(&b, 2, 16, 10);
    for (unsigned i = 0; i <= TRACE_MAX_DEPTH; i++)
        rec(&b, 2, 10, 1, B_ID, i, 0);
    expect_error(&b, "calls deep");
    free(b.p);
}

/* dmtracedump reads 10000 calls deep: a valid trace 5000 deep decodes,
 * with exact inclusive times (each frame i is open from i to 2N-1-i). */
static void test_deep_trace(void **state)
{
    enum { N = 5000 };
    buf b = {0};
    (void)state;
    header(&b, 2, "wall");
    slow(&b, 2, 16, 10);
    for (unsigned i = 0; i < N; i++)
        rec(&b, 2, 10, 1, i == 0 ? A_ID : B_ID, i, 0);
    for (unsigned i = N; i-- > 0;)
        rec(&b, 2, 10, 1, (i == 0 ? A_ID : B_ID) | 1, 2 * N - 1 - i, 0);
    trace_decoder *d = decode(&b, 4096);
    assert_null(trace_decoder_error(d));
    assert_int_equal(trace_decoder_thread(d, 0)->max_depth, N);
    assert_int_equal(trace_decoder_find(d, A_ID)->inclusive_usec, 2 * N - 1);
    assert_int_equal(trace_decoder_find(d, B_ID)->calls, N - 1);
    /* B recursive: only its outermost frame counts (1 .. 2N-2) */
    assert_int_equal(trace_decoder_find(d, B_ID)->inclusive_usec, 2 * N - 3);
    trace_decoder_free(d);
    free(b.p);
}

/* The frames of all threads together have one cap. */
static void test_frames_cap(void **state)
{
    buf b = {0};
    (void)state;
    header(&b, 2, "wall");
    slow(&b, 2, 16, 10);
    for (unsigned tid = 1; tid <= TRACE_MAX_FRAMES / TRACE_MAX_DEPTH + 1; tid++)
        for (unsigned i = 0; i < TRACE_MAX_DEPTH; i++)
            rec(&b, 2, 10, tid, B_ID, i, 0);
    trace_decoder *d = decode(&b, 1 << 16);
    assert_non_null(trace_decoder_error(d));
    assert_non_null(strstr(trace_decoder_error(d), "open calls across the threads"));
    assert_true(trace_decoder_state_bytes(d) < 64u << 20);
    trace_decoder_free(d);
    free(b.p);
}

/* 65,536 listed threads, each making one call (a 1.7 MB file): the state
 * grows with that one call per thread, not with big first allocations
 * (it was 32 frames and 64 table slots per thread, ~91 MB). */
static void test_many_threads_bounded(void **state)
{
    buf b = {0};
    char line[64];
    (void)state;
    puts_(&b, "*version\n2\nclock=wall\n*threads\n");
    for (unsigned tid = 0; tid < TRACE_MAX_THREADS; tid++) {
        snprintf(line, sizeof line, "%u\tt%u\n", tid, tid);
        puts_(&b, line);
    }
    puts_(&b, "*methods\n0x100\tcom.a.A\trun\t()V\n*end\n");
    slow(&b, 2, 16, 10);
    for (unsigned tid = TRACE_MAX_THREADS; tid-- > 0;) {
        rec(&b, 2, 10, tid, A_ID, 0, 0);
        rec(&b, 2, 10, tid, A_ID | 1, 1, 0);
    }
    trace_decoder *d = decode(&b, 4096);
    assert_null(trace_decoder_error(d));
    assert_int_equal(trace_decoder_n_threads(d), TRACE_MAX_THREADS);
    assert_string_equal(trace_decoder_thread(d, 0)->name, "t65535");
    size_t per_thread = (trace_decoder_state_bytes(d) - 65536 * sizeof(int32_t)) / TRACE_MAX_THREADS;
    print_message("state: %zu bytes, %zu per thread\n", trace_decoder_state_bytes(d), per_thread);
    assert_true(per_thread <= 320);
    trace_decoder_free(d);
    free(b.p);
}

static void test_header_version(void **state)
{
    buf b = {0};
    (void)state;
    puts_(&b, "*version\n7\n*end\n");
    expect_error(&b, "unknown trace version 7 (1 to 3 are known)");
    free(b.p);
    b = (buf){0};
    puts_(&b, "*version\n0\n*end\n");
    expect_error(&b, "unknown trace version 0");
    free(b.p);
}

static void test_unknown_and_unmatched(void **state)
{
    buf b = {0};
    (void)state;
    header(&b, 2, "thread-cpu");
    slow(&b, 2, 16, 10);
    rec(&b, 2, 10, 7, 0x9990, 0, 0);       /* unlisted method */
    rec(&b, 2, 10, 7, A_ID | 1, 3, 0);     /* exit of A that never entered */
    rec(&b, 2, 10, 7, 0x9990 | 1, 10, 0);
    rec(&b, 2, 10, 7, C_ID | 2, 12, 0);    /* unroll with an empty stack */
    trace_decoder *d = decode(&b, 3);
    assert_null(trace_decoder_error(d));
    const trace_info *in = trace_decoder_info(d);
    assert_int_equal(in->unknown_records, 2);
    assert_int_equal(in->unmatched_exits, 2);
    assert_int_equal(trace_decoder_n_methods(d), 4);
    const trace_method *u = trace_decoder_method(d, 3);
    assert_string_equal(u->class_name, "(unknown)");
    assert_int_equal(u->calls, 1);
    assert_int_equal(u->inclusive_usec, 10);
    assert_null(trace_decoder_thread(d, 0)->name); /* tid 7 is not listed */
    trace_decoder_free(d);
    free(b.p);
}

static void test_open_frames_closed_at_end(void **state)
{
    buf b = {0};
    (void)state;
    header(&b, 2, "thread-cpu");
    slow(&b, 2, 16, 10);
    rec(&b, 2, 10, 1, A_ID, 100, 0);
    rec(&b, 2, 10, 1, B_ID, 110, 0);
    rec(&b, 2, 10, 1, B_ID, 130, 0);
    rec(&b, 2, 10, 1, C_ID, 170, 0);
    trace_decoder *d = decode(&b, 5);
    assert_null(trace_decoder_error(d));
    assert_int_equal(trace_decoder_find(d, A_ID)->inclusive_usec, 70);
    assert_int_equal(trace_decoder_find(d, B_ID)->inclusive_usec, 60);
    assert_int_equal(trace_decoder_find(d, B_ID)->calls, 2);
    assert_int_equal(trace_decoder_find(d, C_ID)->inclusive_usec, 0);
    trace_decoder_free(d);
    free(b.p);
}

static void test_clock_wraps(void **state)
{
    buf b = {0};
    (void)state;
    header(&b, 2, "wall");
    slow(&b, 2, 16, 10);
    rec(&b, 2, 10, 1, A_ID, 0xfffffff0u, 0);
    rec(&b, 2, 10, 1, A_ID | 1, 0x10u, 0);      /* wrapped: 32 us later */
    rec(&b, 2, 10, 1, C_ID, 0x8u, 0);           /* backwards: no time */
    rec(&b, 2, 10, 1, C_ID | 1, 0x9u, 0);
    trace_decoder *d = decode(&b, 10);
    assert_null(trace_decoder_error(d));
    assert_int_equal(trace_decoder_find(d, A_ID)->inclusive_usec, 32);
    assert_int_equal(trace_decoder_find(d, C_ID)->inclusive_usec, 1);
    trace_decoder_free(d);
    free(b.p);
}

static void test_many_methods_recursion_table(void **state)
{
    /* deep mixed recursion exercises the open-method table's growth and
     * backward-shift deletion: every figure must still come out exact */
    buf b = {0};
    char line[64];
    (void)state;
    puts_(&b, "*version\n2\nclock=wall\n*threads\n*methods\n");
    for (unsigned i = 0; i < 500; i++) {
        snprintf(line, sizeof line, "%#x\tK%u\tm\t()V\n", 0x1000u + 4u * i, i);
        puts_(&b, line);
    }
    puts_(&b, "*end\n");
    slow(&b, 2, 16, 10);
    uint32_t t = 0;
    for (unsigned round = 0; round < 3; round++) {
        for (unsigned i = 0; i < 1000; i++)
            rec(&b, 2, 10, 1, 0x1000u + 4u * ((i * 7) % 500), t++, 0);
        for (unsigned i = 1000; i-- > 0;)
            rec(&b, 2, 10, 1, (0x1000u + 4u * ((i * 7) % 500)) | 1, t++, 0);
    }
    trace_decoder *d = decode(&b, 4096);
    assert_null(trace_decoder_error(d));
    assert_int_equal(trace_decoder_info(d)->unmatched_exits, 0);
    for (unsigned i = 0; i < 500; i++) {
        const trace_method *m = trace_decoder_find(d, 0x1000u + 4u * i);
        assert_int_equal(m->calls, 6);
    }
    /* the method of frame 0 is open for the whole round: 1999 us each */
    assert_int_equal(trace_decoder_find(d, 0x1000u)->inclusive_usec, 3 * 1999);
    trace_decoder_free(d);
    free(b.p);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_versions_and_splits),
        cmocka_unit_test(test_larger_offset_skipped),
        cmocka_unit_test(test_bad_data_header),
        cmocka_unit_test(test_truncated),
        cmocka_unit_test(test_not_a_trace),
        cmocka_unit_test(test_line_cap),
        cmocka_unit_test(test_depth_cap),
        cmocka_unit_test(test_deep_trace),
        cmocka_unit_test(test_frames_cap),
        cmocka_unit_test(test_many_threads_bounded),
        cmocka_unit_test(test_header_version),
        cmocka_unit_test(test_unknown_and_unmatched),
        cmocka_unit_test(test_open_frames_closed_at_end),
        cmocka_unit_test(test_clock_wraps),
        cmocka_unit_test(test_many_methods_recursion_table),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
