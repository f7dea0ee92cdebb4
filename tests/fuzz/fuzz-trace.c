/* SPDX-License-Identifier: Apache-2.0
 *
 * Fuzz target: the .trace push parser (plugins/profile/trace_decode.c),
 * fed the same input twice, in pieces of two different sizes.
 *
 * Input: one control byte (bits 0-6: the first run's piece size - 1;
 * the second run takes the input in pieces of 1, 2, 3, ... bytes), then
 * the trace. Invariants: both runs give the same verdict, message and
 * figures (records, calls, times, threads); a refusal is -EPROTO with a
 * message and is sticky; on success every byte went to the header or to a
 * whole record; the calls of the threads add up to the calls of the
 * methods, no method's exclusive time exceeds the threads' total, and no
 * thread is deeper than the cap.
 */
#include <errno.h>
#include <string.h>

#include "plugins/profile/trace_decode.h"
#include "tests/fuzz/fuzz.h"

static trace_decoder *run(const uint8_t *data, size_t size, size_t piece, int growing, int *rc)
{
    trace_decoder *d = trace_decoder_new();
    size_t off = 0;
    if (!d)
        abort();
    *rc = 0;
    while (off < size && *rc == 0) {
        size_t n = piece;
        if (n > size - off)
            n = size - off;
        *rc = trace_decoder_feed(d, data + off, n);
        off += n;
        if (growing)
            piece++;
    }
    if (*rc == 0)
        *rc = trace_decoder_finish(d);
    return d;
}

static void check_one(trace_decoder *d, int rc, size_t size)
{
    if (rc != 0) {
        FUZZ_CHECK(rc == -EPROTO);
        FUZZ_CHECK(trace_decoder_error(d) != NULL && trace_decoder_error(d)[0] != '\0');
        FUZZ_CHECK(trace_decoder_feed(d, (const uint8_t *)"x", 1) == rc);
        FUZZ_CHECK(trace_decoder_finish(d) == rc);
        return;
    }
    const trace_info *in = trace_decoder_info(d);
    uint64_t method_calls = 0, thread_calls = 0;
    FUZZ_CHECK(trace_decoder_error(d) == NULL);
    FUZZ_CHECK(trace_decoder_bytes(d) == size);
    FUZZ_CHECK(in->record_size >= 9 && in->record_size <= TRACE_MAX_RECORD);
    FUZZ_CHECK(in->header_bytes + in->records * in->record_size == size);
    for (size_t i = 0; i < trace_decoder_n_methods(d); i++) {
        const trace_method *m = trace_decoder_method(d, i);
        FUZZ_CHECK(m != NULL && m->class_name != NULL);
        FUZZ_CHECK(m->exclusive_usec <= in->total_usec);
        FUZZ_CHECK(m->inclusive_usec <= in->total_usec);
        method_calls += m->calls;
    }
    for (size_t i = 0; i < trace_decoder_n_threads(d); i++) {
        const trace_thread *t = trace_decoder_thread(d, i);
        FUZZ_CHECK(t->max_depth <= TRACE_MAX_DEPTH);
        thread_calls += t->calls;
    }
    FUZZ_CHECK(method_calls == thread_calls);
    const trace_method *top[4];
    size_t n = trace_decoder_top(d, TRACE_BY_INCLUSIVE, top, 4);
    for (size_t i = 1; i < n; i++)
        FUZZ_CHECK(top[i - 1]->inclusive_usec >= top[i]->inclusive_usec);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    int rc1, rc2;
    if (size < 1)
        return 0;
    size_t piece = (size_t)(data[0] & 0x7f) + 1;
    trace_decoder *a = run(data + 1, size - 1, piece, 0, &rc1);
    trace_decoder *b = run(data + 1, size - 1, 1, 1, &rc2);
    check_one(a, rc1, size - 1);
    check_one(b, rc2, size - 1);
    FUZZ_CHECK(rc1 == rc2);
    if (rc1 != 0) {
        FUZZ_CHECK(strcmp(trace_decoder_error(a), trace_decoder_error(b)) == 0);
    } else {
        const trace_info *x = trace_decoder_info(a), *y = trace_decoder_info(b);
        FUZZ_CHECK(x->records == y->records && x->total_usec == y->total_usec);
        FUZZ_CHECK(x->unknown_records == y->unknown_records);
        FUZZ_CHECK(x->unmatched_exits == y->unmatched_exits);
        FUZZ_CHECK(trace_decoder_n_methods(a) == trace_decoder_n_methods(b));
        for (size_t i = 0; i < trace_decoder_n_methods(a); i++) {
            const trace_method *m = trace_decoder_method(a, i), *n = trace_decoder_method(b, i);
            FUZZ_CHECK(m->id == n->id && m->calls == n->calls);
            FUZZ_CHECK(m->inclusive_usec == n->inclusive_usec);
            FUZZ_CHECK(m->exclusive_usec == n->exclusive_usec);
        }
        FUZZ_CHECK(trace_decoder_n_threads(a) == trace_decoder_n_threads(b));
    }
    trace_decoder_free(a);
    trace_decoder_free(b);
    return 0;
}
