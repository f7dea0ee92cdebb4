/* SPDX-License-Identifier: Apache-2.0
 *
 * Fuzz target: the THST decoder (plugins/threads/thst.c, both layouts) and
 * what the threads plugin does with a table (thread-list.c): apply it to
 * the thread list twice, a second later, for CPU % between the two.
 *
 * Input: a THST payload. Invariants: the entries fit in the payload (6
 * bytes each in the draft form, 18 in the real one) and in THREADS_MAX; a
 * failure gives a reason; the thread list's index finds every thread the
 * table added, sorted the list is unique and within its cap, and a CPU %
 * is finite and not negative.
 */
#include <errno.h>
#include <math.h>
#include <string.h>

#include "plugins/threads/threads.h"
#include "tests/fuzz/fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    thst_table t;
    char why[256] = "";
    thread_list l;

    memset(&t, 0, sizeof t);
    if (threads_parse_thst(data, size, &t, why, sizeof why) != 0) {
        FUZZ_CHECK(why[0] != 0);
        threads_thst_clear(&t);
        return 0;
    }
    FUZZ_CHECK(t.form == THST_FORM_REAL || t.form == THST_FORM_DRAFT);
    FUZZ_CHECK(t.n <= THREADS_MAX);
    FUZZ_CHECK(t.n * (t.form == THST_FORM_DRAFT ? 6 : 18) <= size);
    for (size_t i = 0; i < t.n; i++) {
        char buf[16];
        FUZZ_CHECK(threads_state_name(t.e[i].status, buf) != NULL);
    }

    thread_list_init(&l);
    l.max = 64; /* a small cap, so a table can overflow it */
    for (int round = 0; round < 2; round++) {
        size_t dropped = thread_list_apply_thst(&l, &t, 100.0 + round, 100);
        FUZZ_CHECK(dropped <= t.n && l.n <= l.max);
        for (size_t i = 0; i < t.n; i++) /* the index finds what the table kept */
            FUZZ_CHECK(thread_list_find(&l, t.e[i].id) != NULL || dropped > 0);
        thread_list_sort(&l); /* as before publishing */
        for (size_t i = 0; i < l.n; i++) {
            if (i)
                FUZZ_CHECK(l.v[i - 1].id < l.v[i].id);
            if (l.v[i].has_cpu)
                FUZZ_CHECK(l.v[i].stats && isfinite(l.v[i].stats->cpu) && l.v[i].stats->cpu >= 0);
        }
    }
    thread_list_clear(&l);
    threads_thst_clear(&t);
    return 0;
}
