/* SPDX-License-Identifier: Apache-2.0
 *
 * Unit tests for the timer heap (core/loop/timer.c), run on the real glib
 * main loop: deadline order with ties in arming order, cancel, re-arm, a
 * callback that arms, cancels and re-arms (itself and others), zero-delay
 * re-arms that wait for the next iteration, one GSource for any number of
 * timers, 100,000 random operations checked against a plain model, a
 * re-arm into the past that holds back no other due timer, arming that
 * does not wake the context, and the earliest deadline (ddm_timer_next_due),
 * also across dispatch and in the random run.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "core/loop/census.h"
#include "core/loop/timer.h"

/* Deadlines well in the past: due at once, in a known order, no waiting. */
#define PAST(k) (g_get_monotonic_time() - (gint64)G_USEC_PER_SEC * 1000 + (gint64)(k))

static GArray *fired; /* guint: the tags of fired timers, in order */

typedef struct Tagged {
    DdmTimer t;
    guint tag;
} Tagged;

static void record(DdmTimer *t, gpointer ud)
{
    Tagged *x = ud;
    assert_ptr_equal(&x->t, t);
    assert_false(ddm_timer_armed(t)); /* disarmed before its callback */
    g_array_append_val(fired, x->tag);
}

/* Bounded: a test that failed leaves its timers armed (on its stack, by
 * then), and the next test must fail, not spin. */
static void run_pending(void)
{
    for (int i = 0; i < 8; i++)
        for (int k = 0; k < 100000 && g_main_context_iteration(NULL, FALSE); k++)
            ;
}

static int setup(void **state)
{
    (void)state;
    fired = g_array_new(FALSE, FALSE, sizeof(guint));
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    g_array_free(fired, TRUE);
    assert_int_equal(ddm_timer_count(), 0);
    return 0;
}

static void assert_fired(const guint *want, guint n)
{
    assert_int_equal(fired->len, n);
    for (guint i = 0; i < n; i++)
        assert_int_equal(g_array_index(fired, guint, i), want[i]);
}

static void test_order_and_ties(void **state)
{
    Tagged x[6];
    gint64 base = PAST(0);
    static const gint64 due[6] = { 30, 10, 20, 10, 0, 20 };
    (void)state;

    for (guint i = 0; i < 6; i++) {
        x[i].tag = i;
        ddm_timer_init(&x[i].t, record, &x[i]);
        ddm_timer_arm_at(&x[i].t, base + due[i]);
        assert_true(ddm_timer_armed(&x[i].t));
        assert_int_equal(ddm_timer_due(&x[i].t), base + due[i]);
    }
    assert_int_equal(ddm_timer_count(), 6);
    run_pending();
    static const guint want[6] = { 4, 1, 3, 2, 5, 0 };
    assert_fired(want, 6);
    assert_int_equal(ddm_timer_due(&x[0].t), G_MAXINT64);
}

static void test_cancel_and_rearm(void **state)
{
    Tagged x[4];
    gint64 base = PAST(0);
    (void)state;

    for (guint i = 0; i < 4; i++) {
        x[i].tag = i;
        ddm_timer_init(&x[i].t, record, &x[i]);
        ddm_timer_arm_at(&x[i].t, base + i);
    }
    ddm_timer_cancel(&x[1].t);
    ddm_timer_cancel(&x[1].t); /* twice: a no-op */
    assert_false(ddm_timer_armed(&x[1].t));
    ddm_timer_arm_at(&x[0].t, base + 10); /* moves behind the others */
    ddm_timer_arm(&x[3].t, 60 * 1000);    /* into the future: does not fire */
    run_pending();
    static const guint want[2] = { 2, 0 };
    assert_fired(want, 2);
    assert_true(ddm_timer_armed(&x[3].t));
    ddm_timer_cancel(&x[3].t);
    ddm_timer_cancel(NULL);
}

static void test_real_delay(void **state)
{
    Tagged x = { .tag = 7 };
    gint64 t0 = g_get_monotonic_time();
    (void)state;

    ddm_timer_init(&x.t, record, &x);
    ddm_timer_arm(&x.t, 30);
    while (fired->len == 0)
        g_main_context_iteration(NULL, TRUE);
    assert_true(g_get_monotonic_time() - t0 >= 30 * 1000);
    assert_int_equal(g_array_index(fired, guint, 0), 7);
}

/* A callback that works on the heap while it runs. */
typedef struct Busy {
    DdmTimer self, victim, child, later;
    guint self_runs, victim_runs, child_runs;
    guint64 child_iteration;
} Busy;

static guint64 iteration;

static void victim_cb(DdmTimer *t, gpointer ud)
{
    (void)t;
    ((Busy *)ud)->victim_runs++;
}

static void child_cb(DdmTimer *t, gpointer ud)
{
    Busy *b = ud;
    (void)t;
    b->child_runs++;
    b->child_iteration = iteration;
}

static void self_cb(DdmTimer *t, gpointer ud)
{
    Busy *b = ud;
    b->self_runs++;
    if (b->self_runs == 1) {
        ddm_timer_cancel(&b->victim);         /* due in this same dispatch */
        ddm_timer_arm(&b->child, 0);          /* next iteration, not this one */
        ddm_timer_arm(&b->later, 3600 * 1000); /* far away */
        ddm_timer_cancel(&b->later);
    }
    if (b->self_runs < 5)
        ddm_timer_arm(t, 0); /* again, at the next iteration */
}

static void test_callback_arms_and_cancels(void **state)
{
    Busy b;
    gint64 base = PAST(0);
    (void)state;

    memset(&b, 0, sizeof b);
    ddm_timer_init(&b.self, self_cb, &b);
    ddm_timer_init(&b.victim, victim_cb, &b);
    ddm_timer_init(&b.child, child_cb, &b);
    ddm_timer_init(&b.later, victim_cb, &b);
    ddm_timer_arm_at(&b.self, base);
    ddm_timer_arm_at(&b.victim, base + 1);

    iteration = 1;
    g_main_context_iteration(NULL, FALSE);
    /* One dispatch: self ran once; its zero-delay re-arm and the child wait. */
    assert_int_equal(b.self_runs, 1);
    assert_int_equal(b.victim_runs, 0);
    assert_int_equal(b.child_runs, 0);
    for (iteration = 2; iteration < 10; iteration++)
        g_main_context_iteration(NULL, FALSE);
    assert_int_equal(b.self_runs, 5);
    assert_int_equal(b.child_runs, 1);
    assert_int_equal(b.child_iteration, 2);
    assert_int_equal(b.victim_runs, 0);
    assert_false(ddm_timer_armed(&b.later));
}

/* A callback may free the memory its timer lives in. */
static void free_self(DdmTimer *t, gpointer ud)
{
    (void)ud;
    g_free(t);
    g_array_append_val(fired, (guint){ 99 });
}

static void test_callback_frees_owner(void **state)
{
    DdmTimer *t = g_new0(DdmTimer, 1);
    (void)state;
    ddm_timer_init(t, free_self, NULL);
    ddm_timer_arm_at(t, PAST(0));
    run_pending();
    static const guint want[1] = { 99 };
    assert_fired(want, 1);
}

/* Any number of timers: one GSource, attached once. */
static void test_one_source(void **state)
{
    enum { N = 500 };
    Tagged *x = g_new0(Tagged, N);
    guint mark;
    (void)state;

    ddm_timer_init(&x[0].t, record, &x[0]);
    ddm_timer_arm(&x[0].t, 1000); /* the source exists from here on */
    mark = ddm_census_mark(NULL);
    for (guint i = 1; i < N; i++) {
        x[i].tag = i;
        ddm_timer_init(&x[i].t, record, &x[i]);
        ddm_timer_arm(&x[i].t, 1000 + i);
    }
    assert_int_equal(ddm_timer_count(), N);
    assert_int_equal(ddm_census_live_since(NULL, mark), 0);
    for (guint i = 0; i < N; i++)
        ddm_timer_cancel(&x[i].t);
    g_free(x);
}

/* ------------------------------------------------- random vs a model */

#define NT 1000
#define OPS 100000

typedef struct Model {
    gboolean armed;
    gint64 due;
    guint64 seq;
} Model;

static Model model[NT];
static Tagged rt[NT];

static gint by_due_seq(gconstpointer a, gconstpointer b)
{
    const Model *x = &model[*(const guint *)a], *y = &model[*(const guint *)b];
    if (x->due != y->due)
        return x->due < y->due ? -1 : 1;
    return x->seq < y->seq ? -1 : x->seq > y->seq;
}

/* A callback that re-arms itself into the past (arm_at 0) during a
 * dispatch: the other due timers still fire in that dispatch, and the
 * re-armed one at the next iteration, once, not in a loop. */
static Tagged past_x[3];
static guint past_rearms;

static void rearm_into_past(DdmTimer *t, gpointer ud)
{
    record(t, ud);
    if (past_rearms++ == 0)
        ddm_timer_arm_at(t, 0);
}

static void test_rearm_into_past(void **state)
{
    gint64 base = PAST(0);
    (void)state;

    past_rearms = 0;
    for (guint i = 0; i < 3; i++) {
        past_x[i].tag = i;
        ddm_timer_init(&past_x[i].t, i == 0 ? rearm_into_past : record, &past_x[i]);
        ddm_timer_arm_at(&past_x[i].t, base + i);
    }
    g_main_context_iteration(NULL, FALSE);
    static const guint first[] = { 0, 1, 2 };
    assert_fired(first, 3); /* 1 and 2 not held back behind the re-armed 0 */
    assert_true(ddm_timer_armed(&past_x[0].t));
    run_pending();
    static const guint then[] = { 0, 1, 2, 0 };
    assert_fired(then, 4);
}

/* Arming never wakes the context (no eventfd write): a blocking iteration
 * after arming a near timer sleeps until it is due and dispatches it, where
 * g_source_set_ready_time() would have woken the poll at once for nothing. */
static void test_arming_does_not_wake(void **state)
{
    Tagged x = { .tag = 7 };
    Tagged warm = { .tag = 8 };
    (void)state;

    ddm_timer_init(&warm.t, record, &warm);
    ddm_timer_arm(&warm.t, 0); /* the source exists and the wake-up is drained */
    run_pending();
    g_array_set_size(fired, 0);
    ddm_timer_init(&x.t, record, &x);
    ddm_timer_arm(&x.t, 30);
    gint64 t0 = g_get_monotonic_time();
    assert_true(g_main_context_iteration(NULL, TRUE)); /* one iteration: it fired */
    assert_true(g_get_monotonic_time() - t0 >= 30 * 1000);
    static const guint want[] = { 7 };
    assert_fired(want, 1);
}

/* The model's earliest armed deadline, G_MAXINT64 when none is armed: what
 * ddm_timer_next_due() must say. */
static gint64 model_next_due(void)
{
    gint64 m = G_MAXINT64;
    for (guint k = 0; k < NT; k++)
        if (model[k].armed && model[k].due < m)
            m = model[k].due;
    return m;
}

static void test_random_against_model(void **state)
{
    GRand *r = g_rand_new_with_seed(16);
    guint64 seq = 0;
    gint64 past = PAST(0), future = g_get_monotonic_time() + (gint64)3600 * G_USEC_PER_SEC;
    guint fires = 0;
    (void)state;

    memset(model, 0, sizeof model);
    for (guint i = 0; i < NT; i++) {
        rt[i].tag = i;
        ddm_timer_init(&rt[i].t, record, &rt[i]);
    }
    for (guint op = 0; op < OPS; op++) {
        guint i = (guint)g_rand_int_range(r, 0, NT);
        guint what = (guint)g_rand_int_range(r, 0, 10);
        if (what < 6) {
            /* few distinct deadlines: many ties */
            gint64 due = (what < 4 ? past : future) + g_rand_int_range(r, 0, 50);
            ddm_timer_arm_at(&rt[i].t, due);
            model[i] = (Model){ TRUE, due, seq++ };
        } else {
            ddm_timer_cancel(&rt[i].t);
            model[i].armed = FALSE;
        }
        assert_int_equal(ddm_timer_armed(&rt[i].t), model[i].armed);
        assert_int_equal(ddm_timer_due(&rt[i].t), model[i].armed ? model[i].due : G_MAXINT64);
        assert_true(ddm_timer_next_due() == model_next_due());

        if (op % 997 == 0 || op == OPS - 1) {
            GArray *want = g_array_new(FALSE, FALSE, sizeof(guint));
            guint armed = 0;
            for (guint k = 0; k < NT; k++) {
                armed += model[k].armed;
                if (model[k].armed && model[k].due < future)
                    g_array_append_val(want, k);
            }
            assert_int_equal(ddm_timer_count(), armed);
            g_array_sort(want, by_due_seq);
            g_array_set_size(fired, 0);
            g_main_context_iteration(NULL, FALSE);
            assert_fired((const guint *)(void *)want->data, want->len);
            for (guint k = 0; k < want->len; k++)
                model[g_array_index(want, guint, k)].armed = FALSE;
            fires += want->len;
            g_array_free(want, TRUE);
            /* the kept top after firing: the earliest of the future ones,
             * or none */
            assert_true(ddm_timer_next_due() == model_next_due());
        }
    }
    assert_true(fires > 1000); /* the check did compare real firings */
    for (guint i = 0; i < NT; i++)
        ddm_timer_cancel(&rt[i].t);
    g_rand_free(r);
}

/* ddm_timer_next_due: the earliest armed deadline, G_MAXINT64 when none is
 * armed; it follows arming, re-arming and cancelling. */
static void test_next_due(void **state)
{
    Tagged a = { .tag = 1 }, b = { .tag = 2 };
    (void)state;

    assert_true(ddm_timer_next_due() == G_MAXINT64);
    ddm_timer_init(&a.t, record, &a);
    ddm_timer_init(&b.t, record, &b);
    ddm_timer_arm_at(&a.t, 5000000000);
    ddm_timer_arm_at(&b.t, 7000000000);
    assert_true(ddm_timer_next_due() == 5000000000);
    ddm_timer_arm_at(&b.t, 3000000000);
    assert_true(ddm_timer_next_due() == 3000000000);
    ddm_timer_cancel(&b.t);
    assert_true(ddm_timer_next_due() == 5000000000);
    ddm_timer_cancel(&a.t);
    assert_true(ddm_timer_next_due() == G_MAXINT64);
}

/* ddm_timer_next_due across dispatch: the top removed by firing, re-armed
 * later, a callback that arms and cancels, a lone timer that fires. */
static Tagged nd_arm, nd_cancel;
static gint64 nd_seen_in_cb;

static void next_due_cb(DdmTimer *t, gpointer ud)
{
    record(t, ud);
    nd_seen_in_cb = ddm_timer_next_due(); /* the fired one is out already */
    ddm_timer_arm_at(&nd_arm.t, 4000000000000);
    ddm_timer_cancel(&nd_cancel.t);
}

static void test_next_due_dispatch(void **state)
{
    Tagged a = { .tag = 1 }, b = { .tag = 2 }, lone = { .tag = 3 };
    gint64 base = PAST(0), far = (gint64)9000000000000;
    (void)state;

    nd_arm.tag = 4;
    nd_cancel.tag = 5;
    ddm_timer_init(&a.t, record, &a);
    ddm_timer_init(&b.t, record, &b);
    ddm_timer_init(&lone.t, record, &lone);
    ddm_timer_init(&nd_arm.t, record, &nd_arm);
    ddm_timer_init(&nd_cancel.t, record, &nd_cancel);

    /* the top fires by dispatch: next due becomes the one behind it */
    ddm_timer_arm_at(&a.t, base);
    ddm_timer_arm_at(&b.t, far);
    assert_true(ddm_timer_next_due() == base);
    run_pending();
    static const guint w1[] = { 1 };
    assert_fired(w1, 1);
    assert_true(ddm_timer_next_due() == far);

    /* re-armed later than the others: the top moves to the other */
    ddm_timer_arm_at(&a.t, far - 1);
    assert_true(ddm_timer_next_due() == far - 1);
    ddm_timer_arm_at(&a.t, far + 1);
    assert_true(ddm_timer_next_due() == far);
    ddm_timer_cancel(&a.t);
    ddm_timer_cancel(&b.t);
    assert_true(ddm_timer_next_due() == G_MAXINT64);

    /* a callback arms one timer and cancels another (the earlier of the
     * two left): seen inside the callback and after the dispatch */
    g_array_set_size(fired, 0);
    ddm_timer_init(&a.t, next_due_cb, &a);
    ddm_timer_arm_at(&a.t, base);
    ddm_timer_arm_at(&nd_cancel.t, far - 5);
    ddm_timer_arm_at(&b.t, far);
    run_pending();
    assert_fired(w1, 1);
    assert_true(nd_seen_in_cb == far - 5);
    assert_true(ddm_timer_next_due() == 4000000000000);
    ddm_timer_cancel(&nd_arm.t);
    assert_true(ddm_timer_next_due() == far);
    ddm_timer_cancel(&b.t);

    /* a lone timer removed by firing leaves none */
    g_array_set_size(fired, 0);
    ddm_timer_arm_at(&lone.t, base);
    assert_true(ddm_timer_next_due() == base);
    run_pending();
    static const guint w3[] = { 3 };
    assert_fired(w3, 1);
    assert_true(ddm_timer_next_due() == G_MAXINT64);
    assert_int_equal(ddm_timer_count(), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_order_and_ties, setup, teardown),
        cmocka_unit_test_setup_teardown(test_cancel_and_rearm, setup, teardown),
        cmocka_unit_test_setup_teardown(test_real_delay, setup, teardown),
        cmocka_unit_test_setup_teardown(test_callback_arms_and_cancels, setup, teardown),
        cmocka_unit_test_setup_teardown(test_callback_frees_owner, setup, teardown),
        cmocka_unit_test_setup_teardown(test_one_source, setup, teardown),
        cmocka_unit_test_setup_teardown(test_random_against_model, setup, teardown),
        cmocka_unit_test_setup_teardown(test_rearm_into_past, setup, teardown),
        cmocka_unit_test_setup_teardown(test_arming_does_not_wake, setup, teardown),
        cmocka_unit_test_setup_teardown(test_next_due, setup, teardown),
        cmocka_unit_test_setup_teardown(test_next_due_dispatch, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
