/* SPDX-License-Identifier: Apache-2.0
 *
 * Unit tests for the process's malloc_trim (core/loop/heaptrim.c), on the
 * real glib main loop and timer heap: a trim comes DDM_HEAP_TRIM_QUIET_MS
 * after the last ask (each ask moves it on, two asks give one trim), never
 * sooner than DDM_HEAP_TRIM_GAP_S after the previous trim whoever asked for
 * it, never put off past DDM_HEAP_TRIM_LATEST_MS by asks that keep coming,
 * and reset cancels and forgets. No assertion depends on how fast the
 * machine is: each checks the pending trim's deadline against the clock
 * read just before and after the ask, and the loop runs until the trim
 * fires (checked by count and order, not by time).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "core/loop/heaptrim.h"
#include "core/loop/timer.h"

#define QUIET_US ((gint64)DDM_HEAP_TRIM_QUIET_MS * 1000)
#define GAP_US ((gint64)DDM_HEAP_TRIM_GAP_S * G_USEC_PER_SEC)

/* Run the loop until @n trims were made (a guard of 60 s against a trim
 * that never comes: that fails, whatever the machine's load). */
static void run_until_trims(guint64 n)
{
    gint64 guard = g_get_monotonic_time() + 60 * G_USEC_PER_SEC;
    while (ddm_heap_trim_count() < n) {
        assert_true(g_get_monotonic_time() < guard);
        g_main_context_iteration(NULL, TRUE); /* the trim's timer wakes it */
    }
}

/* Ask, and check the deadline against the clock around the ask: it is
 * QUIET from the ask, unless the gap's end is later; the gap ends between
 * @gap_lo and @gap_hi (the last trim ran between two clock readings), 0
 * for both when there was no trim. */
static gint64 ask(gint64 gap_lo, gint64 gap_hi)
{
    gint64 before = g_get_monotonic_time();
    ddm_heap_trim_soon();
    gint64 after = g_get_monotonic_time();
    gint64 due = ddm_heap_trim_due();
    assert_true(due >= MAX(before + QUIET_US, gap_lo));
    assert_true(due <= MAX(after + QUIET_US, gap_hi));
    return due;
}

static int setup(void **state)
{
    (void)state;
    ddm_heap_trim_reset();
    assert_int_equal(ddm_heap_trim_count(), 0);
    assert_true(ddm_heap_trim_due() == G_MAXINT64);
    assert_int_equal(ddm_timer_count(), 0);
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    ddm_heap_trim_reset();
    assert_int_equal(ddm_timer_count(), 0);
    return 0;
}

/* Two asks: the trim moves on to QUIET after the second, and there is
 * one trim for both, not before its deadline; then nothing is pending. */
static void test_one_trim_after_the_last_ask(void **state)
{
    (void)state;
    gint64 d1 = ask(0, 0);
    assert_int_equal(ddm_timer_count(), 1); /* one timer, whoever asks */
    g_usleep(2000);
    gint64 d2 = ask(0, 0);
    assert_true(d2 > d1); /* moved on */
    assert_int_equal(ddm_timer_count(), 1);
    assert_int_equal(ddm_heap_trim_count(), 0); /* asking does not trim */
    run_until_trims(1);
    assert_true(g_get_monotonic_time() >= d2);
    assert_int_equal(ddm_heap_trim_count(), 1);
    assert_true(ddm_heap_trim_due() == G_MAXINT64); /* no second one coming */
    assert_int_equal(ddm_timer_count(), 0);
}

/* A trim one asker asked for (a large control reply) holds back the next
 * ask of any asker (the monitor's round) to GAP after it: the trim ran at
 * its deadline d1 or later, so the next is due at d1 + GAP or later, and
 * more asks within the gap never bring it nearer. */
static void test_gap_whoever_asked(void **state)
{
    (void)state;
    gint64 d1 = ask(0, 0);
    run_until_trims(1);
    gint64 ran_by = g_get_monotonic_time(); /* the trim ran in [d1, ran_by] */
    gint64 d2 = ask(d1 + GAP_US, ran_by + GAP_US);
    gint64 d3 = ask(d1 + GAP_US, ran_by + GAP_US);
    assert_true(d3 >= d2);
    assert_int_equal(ddm_heap_trim_count(), 1);
    assert_int_equal(ddm_timer_count(), 1);
}

/* Asks that keep coming less than QUIET apart (a client polling a large
 * reply, the monitor's round among them) never put the trim off past
 * LATEST after the first of them: each ask's deadline is checked against
 * that bound, and the trim comes while the asks go on. */
static void test_asks_do_not_starve(void **state)
{
    (void)state;
    gint64 first_after = 0, guard = g_get_monotonic_time() + 30 * G_USEC_PER_SEC;
    while (ddm_heap_trim_count() == 0) {
        assert_true(g_get_monotonic_time() < guard); /* (never, with the bound) */
        ddm_heap_trim_soon();
        if (!first_after)
            first_after = g_get_monotonic_time();
        assert_true(ddm_heap_trim_due() <= first_after + (gint64)DDM_HEAP_TRIM_LATEST_MS * 1000);
        g_usleep(QUIET_US / 4);
        while (g_main_context_iteration(NULL, FALSE))
            ;
    }
    assert_int_equal(ddm_heap_trim_count(), 1);
}

/* Reset cancels the pending trim and forgets the last one: the next ask
 * waits QUIET only, no gap. */
static void test_reset(void **state)
{
    (void)state;
    ask(0, 0);
    run_until_trims(1);
    ddm_heap_trim_soon(); /* pending, at the gap's end */
    ddm_heap_trim_reset();
    assert_true(ddm_heap_trim_due() == G_MAXINT64);
    assert_int_equal(ddm_timer_count(), 0);
    assert_int_equal(ddm_heap_trim_count(), 0);
    ask(0, 0);
    run_until_trims(1);
    assert_int_equal(ddm_heap_trim_count(), 1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_one_trim_after_the_last_ask, setup, teardown),
        cmocka_unit_test_setup_teardown(test_gap_whoever_asked, setup, teardown),
        cmocka_unit_test_setup_teardown(test_asks_do_not_starve, setup, teardown),
        cmocka_unit_test_setup_teardown(test_reset, setup, teardown),
    };
    return cmocka_run_group_tests_name("heaptrim", tests, NULL, NULL);
}
