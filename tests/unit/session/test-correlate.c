/* SPDX-License-Identifier: Apache-2.0
 *
 * Unit tests for the pending-request table (core/session/correlate.c): reply,
 * error, timeout with explicit times, drain on disconnect, duplicate and
 * unknown ids, late replies after a timeout, the cap, deadline ordering.
 * Every test checks that each inserted entry leaves exactly once.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "core/session/correlate.h"

/* Book-keeping for the exactly-once property: how often each id left. */
#define MAX_IDS 4096
static guint left_count[MAX_IDS];
static guint inserted[MAX_IDS];

static int setup(void **state)
{
    (void)state;
    memset(left_count, 0, sizeof left_count);
    memset(inserted, 0, sizeof inserted);
    return 0;
}

static gboolean insert(DdmCorrelate *c, uint32_t id, gint64 deadline)
{
    DdmPending p = {.id = id, .type = 0x54455354, .deadline_us = deadline,
                    .callback = GUINT_TO_POINTER(id + 1), .ud = GUINT_TO_POINTER(id + 2)};
    gboolean ok = ddm_correlate_insert(c, &p);
    if (ok)
        inserted[id % MAX_IDS]++;
    return ok;
}

static void left(const DdmPending *p)
{
    assert_true(p->id < MAX_IDS);
    /* The copy carries what was inserted. */
    assert_ptr_equal(p->callback, GUINT_TO_POINTER(p->id + 1));
    assert_ptr_equal(p->ud, GUINT_TO_POINTER(p->id + 2));
    left_count[p->id]++;
}

static void left_all(GArray *a)
{
    guint i;
    for (i = 0; i < a->len; i++)
        left(&g_array_index(a, DdmPending, i));
    g_array_unref(a);
}

/* @a (taken) holds exactly the ids @ids (@n of them), in that order;
 * they left the table. */
static void left_in_order(GArray *a, const uint32_t *ids, guint n)
{
    assert_int_equal(a->len, n);
    for (guint i = 0; i < n; i++)
        assert_int_equal(g_array_index(a, DdmPending, i).id, ids[i]);
    left_all(a);
}

static void assert_exactly_once(void)
{
    guint i;
    for (i = 0; i < MAX_IDS; i++)
        assert_int_equal(left_count[i], inserted[i]);
}

static void finish(DdmCorrelate *c)
{
    left_all(ddm_correlate_drain(c));
    assert_int_equal(ddm_correlate_count(c), 0);
    assert_exactly_once();
    ddm_correlate_free(c);
}

static void test_correlate_reply(void **state)
{
    DdmCorrelate *c = ddm_correlate_new(16);
    DdmPending out;
    (void)state;

    assert_true(insert(c, 1, 1000));
    assert_true(insert(c, 2, 2000));
    assert_int_equal(ddm_correlate_count(c), 2);
    assert_true(ddm_correlate_contains(c, 2));
    assert_true(ddm_correlate_take(c, 2, &out));
    assert_int_equal(out.id, 2);
    assert_int_equal(out.deadline_us, 2000);
    assert_int_equal(out.type, 0x54455354);
    left(&out);
    assert_false(ddm_correlate_contains(c, 2));
    /* A second reply with the same id is unknown now, and not "late". */
    assert_false(ddm_correlate_take(c, 2, &out));
    assert_false(ddm_correlate_was_expired(c, 2));
    assert_int_equal(ddm_correlate_count(c), 1);
    finish(c);
}

/* The newest pending id follows inserts and takes (0 when empty). */
static void test_correlate_newest_id(void **state)
{
    DdmCorrelate *c = ddm_correlate_new(16);
    DdmPending out;
    (void)state;

    assert_int_equal(ddm_correlate_newest_id(c), 0);
    assert_true(insert(c, 7, 1000));
    assert_true(insert(c, 3, 1000));
    assert_true(insert(c, 5, 1000));
    assert_int_equal(ddm_correlate_newest_id(c), 7);
    assert_true(ddm_correlate_take(c, 7, &out));
    left(&out);
    assert_int_equal(ddm_correlate_newest_id(c), 5);
    left_all(ddm_correlate_expire(c, 1000));
    assert_int_equal(ddm_correlate_newest_id(c), 0);
    finish(c);
}

/* A JDWP error reply leaves the table the same way as a reply: take. */
static void test_correlate_error_reply(void **state)
{
    DdmCorrelate *c = ddm_correlate_new(16);
    DdmPending out;
    (void)state;

    assert_true(insert(c, 7, 500));
    assert_true(ddm_correlate_take(c, 7, &out));
    left(&out);
    /* Expiring later finds nothing. */
    GArray *a = ddm_correlate_expire(c, 10000);
    assert_int_equal(a->len, 0);
    left_all(a);
    finish(c);
}

static void test_correlate_timeout(void **state)
{
    DdmCorrelate *c = ddm_correlate_new(16);
    GArray *a;
    (void)state;

    assert_true(insert(c, 1, 100));
    assert_true(insert(c, 2, 200));
    assert_true(insert(c, 3, 300));
    a = ddm_correlate_expire(c, 99);
    assert_int_equal(a->len, 0);
    left_all(a);

    a = ddm_correlate_expire(c, 200); /* deadline <= now expires */
    assert_int_equal(a->len, 2);
    assert_int_equal(g_array_index(a, DdmPending, 0).id, 1);
    assert_int_equal(g_array_index(a, DdmPending, 1).id, 2);
    left_all(a);
    assert_int_equal(ddm_correlate_count(c), 1);
    assert_int_equal(ddm_correlate_next_deadline(c), 300);
    finish(c);
}

static void test_correlate_drain(void **state)
{
    DdmCorrelate *c = ddm_correlate_new(16);
    GArray *a;
    (void)state;

    for (uint32_t i = 10; i < 20; i++)
        assert_true(insert(c, i, 1000 - i));
    a = ddm_correlate_drain(c);
    assert_int_equal(a->len, 10);
    left_all(a);
    assert_int_equal(ddm_correlate_count(c), 0);
    assert_int_equal(ddm_correlate_next_deadline(c), G_MAXINT64);
    a = ddm_correlate_drain(c);
    assert_int_equal(a->len, 0);
    left_all(a);
    finish(c);
}

static void test_correlate_duplicate(void **state)
{
    DdmCorrelate *c = ddm_correlate_new(16);
    DdmPending out;
    (void)state;

    assert_true(insert(c, 5, 100));
    assert_false(insert(c, 5, 200)); /* already pending */
    assert_int_equal(ddm_correlate_count(c), 1);
    assert_true(ddm_correlate_take(c, 5, &out));
    assert_int_equal(out.deadline_us, 100); /* the first one stays */
    left(&out);
    /* Once gone, the id may be reused. */
    assert_true(insert(c, 5, 300));
    finish(c);
}

static void test_correlate_unknown(void **state)
{
    DdmCorrelate *c = ddm_correlate_new(16);
    DdmPending out = {0};
    (void)state;

    assert_false(ddm_correlate_take(c, 42, &out));
    assert_false(ddm_correlate_contains(c, 42));
    assert_false(ddm_correlate_was_expired(c, 42));
    assert_true(insert(c, 1, 100));
    assert_false(ddm_correlate_take(c, 42, &out));
    assert_int_equal(ddm_correlate_count(c), 1);
    finish(c);
}

static void test_correlate_late_after_timeout(void **state)
{
    DdmCorrelate *c = ddm_correlate_new(16);
    DdmPending out;
    (void)state;

    assert_true(insert(c, 9, 100));
    left_all(ddm_correlate_expire(c, 150));
    assert_true(ddm_correlate_was_expired(c, 9));
    /* The late reply finds nothing to take: no second exit. */
    assert_false(ddm_correlate_take(c, 9, &out));
    assert_false(ddm_correlate_was_expired(c, 10));
    finish(c);
}

/* The expired-id memory is bounded: very old timeouts are forgotten. */
static void test_correlate_expired_memory_bounded(void **state)
{
    DdmCorrelate *c = ddm_correlate_new(2048);
    (void)state;

    for (uint32_t i = 0; i < 1000; i++)
        assert_true(insert(c, i, i));
    left_all(ddm_correlate_expire(c, 1000));
    assert_true(ddm_correlate_was_expired(c, 999));
    assert_false(ddm_correlate_was_expired(c, 0));
    finish(c);
}

/* The ring grows with the timeouts (4, 8, ... 64 ids) and, once full,
 * remembers exactly the last 64, whatever the growth steps were. */
static void test_correlate_expired_memory_grows(void **state)
{
    DdmCorrelate *c = ddm_correlate_new(2048);
    (void)state;

    for (uint32_t i = 0; i < 200; i++) {
        assert_true(insert(c, 1000 + i, i));
        left_all(ddm_correlate_expire(c, i));
        for (uint32_t j = 0; j <= i; j++) {
            gboolean kept = i - j < 64;
            assert_int_equal(ddm_correlate_was_expired(c, 1000 + j), kept);
        }
    }
    finish(c);
}

/* Equal deadlines leave in insertion order (the insertion counter lives in
 * the pending block since issue 16): across the block's growth, its
 * shrinking, and its freeing when empty and remaking at the next insert. */
static void test_correlate_ties_fifo_across_blocks(void **state)
{
    DdmCorrelate *c = ddm_correlate_new(2048);
    DdmPending p;
    GArray *a;
    (void)state;

    for (uint32_t round = 0; round < 2; round++) {
        /* 64 entries (the block grows 4 -> 64), then 56 taken (it halves
         * twice), then 8 more: 16 left, in the order 56..63, 100..107 */
        for (uint32_t i = 0; i < 64; i++)
            assert_true(insert(c, i, 50));
        for (uint32_t i = 0; i < 56; i++) {
            assert_true(ddm_correlate_take(c, i, &p));
            left(&p);
        }
        assert_true(ddm_correlate_room(c) < 64);
        for (uint32_t i = 100; i < 108; i++)
            assert_true(insert(c, i, 50));
        a = ddm_correlate_expire(c, 50);
        assert_int_equal(a->len, 16);
        for (guint i = 0; i < a->len; i++)
            assert_int_equal(g_array_index(a, DdmPending, i).id, i < 8 ? 56 + i : 100 + i - 8);
        left_all(a);
        assert_int_equal(ddm_correlate_room(c), 0); /* empty: the block is gone */
    }
    finish(c);
}

static void test_correlate_cap(void **state)
{
    DdmCorrelate *c = ddm_correlate_new(3);
    DdmPending out;
    (void)state;

    assert_true(insert(c, 1, 10));
    assert_true(insert(c, 2, 10));
    assert_true(insert(c, 3, 10));
    assert_false(insert(c, 4, 10));
    assert_int_equal(ddm_correlate_count(c), 3);
    assert_true(ddm_correlate_take(c, 1, &out));
    left(&out);
    assert_true(insert(c, 4, 10)); /* room again */
    finish(c);
}

static void test_correlate_next_deadline_order(void **state)
{
    DdmCorrelate *c = ddm_correlate_new(64);
    DdmPending out;
    (void)state;

    assert_int_equal(ddm_correlate_next_deadline(c), G_MAXINT64);
    assert_true(insert(c, 1, 500));
    assert_int_equal(ddm_correlate_next_deadline(c), 500);
    assert_true(insert(c, 2, 300));
    assert_int_equal(ddm_correlate_next_deadline(c), 300);
    assert_true(insert(c, 3, 900));
    assert_true(insert(c, 4, 300)); /* tie: FIFO after id 2 */
    assert_int_equal(ddm_correlate_next_deadline(c), 300);
    assert_true(ddm_correlate_take(c, 2, &out));
    left(&out);
    assert_int_equal(ddm_correlate_next_deadline(c), 300);
    assert_true(ddm_correlate_take(c, 4, &out));
    left(&out);
    assert_int_equal(ddm_correlate_next_deadline(c), 500);

    assert_true(insert(c, 5, 100));
    assert_true(insert(c, 6, 100));
    left_in_order(ddm_correlate_expire(c, 600), (const uint32_t[]){5, 6, 1}, 3);
    assert_int_equal(ddm_correlate_next_deadline(c), 900);
    finish(c);
}

/* A pseudo-random mix of operations; the exactly-once property must hold. */
static void test_correlate_random_mix(void **state)
{
    DdmCorrelate *c = ddm_correlate_new(200);
    GRand *rnd = g_rand_new_with_seed(1234);
    gint64 now = 0;
    (void)state;

    for (int step = 0; step < 20000; step++) {
        guint op = g_rand_int_range(rnd, 0, 10);
        uint32_t id = (uint32_t)g_rand_int_range(rnd, 0, MAX_IDS);
        DdmPending out;

        if (op < 5) {
            gboolean was = ddm_correlate_contains(c, id);
            guint n = ddm_correlate_count(c);
            gboolean ok = insert(c, id, now + g_rand_int_range(rnd, 0, 1000));
            assert_int_equal(ok, !was && n < 200);
        } else if (op < 8) {
            gboolean was = ddm_correlate_contains(c, id);
            assert_int_equal(ddm_correlate_take(c, id, &out), was);
            if (was) {
                assert_int_equal(out.id, id);
                left(&out);
            }
        } else {
            gint64 next = ddm_correlate_next_deadline(c);
            GArray *a;
            now += g_rand_int_range(rnd, 0, 300);
            a = ddm_correlate_expire(c, now);
            for (guint i = 0; i < a->len; i++) {
                assert_true(g_array_index(a, DdmPending, i).deadline_us <= now);
                assert_true(g_array_index(a, DdmPending, i).deadline_us >= next);
            }
            left_all(a);
            assert_true(ddm_correlate_next_deadline(c) > now);
        }
    }
    g_rand_free(rnd);
    finish(c);
}

/* An idle table holds no index (they go with the last entry and come back
 * with the next insert; correlate.c): every operation behaves the same
 * across empty -> busy -> empty, again and again, and the timed-out ids
 * are still known after the table emptied. */
static void test_correlate_empty_again(void **state)
{
    DdmCorrelate *c = ddm_correlate_new(8);
    DdmPending p;
    GArray *a;
    (void)state;

    /* empty from the start */
    assert_int_equal(ddm_correlate_count(c), 0);
    assert_false(ddm_correlate_take(c, 1, &p));
    assert_false(ddm_correlate_contains(c, 1));
    assert_true(ddm_correlate_next_deadline(c) == G_MAXINT64);
    ddm_correlate_postpone(c, 100);
    a = ddm_correlate_expire(c, 1000);
    assert_int_equal(a->len, 0);
    g_array_unref(a);
    a = ddm_correlate_drain(c);
    assert_int_equal(a->len, 0);
    g_array_unref(a);
    for (uint32_t round = 0; round < 3; round++) {
        uint32_t base = 10 + round * 10;
        assert_true(insert(c, base, 500));
        assert_true(insert(c, base + 1, 300));
        assert_false(insert(c, base + 1, 300)); /* still pending: a duplicate */
        assert_int_equal(ddm_correlate_count(c), 2);
        assert_true(ddm_correlate_next_deadline(c) == 300);
        assert_true(ddm_correlate_take(c, base, &p));
        left(&p);
        a = ddm_correlate_expire(c, 400); /* base + 1 times out: the table empties */
        assert_int_equal(a->len, 1);
        left_all(a);
        assert_int_equal(ddm_correlate_count(c), 0);
        assert_true(ddm_correlate_next_deadline(c) == G_MAXINT64);
        assert_true(ddm_correlate_was_expired(c, base + 1));
        assert_false(ddm_correlate_was_expired(c, base));
        assert_false(ddm_correlate_contains(c, base + 1));
    }
    /* busy at the end: drain takes everything, and free after that is quiet */
    assert_true(insert(c, 99, 50));
    ddm_correlate_postpone(c, 60);
    assert_true(ddm_correlate_next_deadline(c) == 60);
    a = ddm_correlate_drain(c);
    assert_int_equal(a->len, 1);
    left_all(a);
    ddm_correlate_free(c);
    for (guint i = 0; i < MAX_IDS; i++)
        assert_int_equal(left_count[i], inserted[i]);
}

/* shift moves every deadline by the same amount, either way: the order
 * (deadline, then insertion) is kept, expiry follows the new deadlines,
 * and a shift past gint64's ends clamps there without breaking the heap. */
static void test_correlate_shift(void **state)
{
    DdmCorrelate *c = ddm_correlate_new(16);
    (void)state;

    ddm_correlate_shift(c, -100); /* empty: nothing to do */
    for (uint32_t id = 1; id <= 9; id++)
        assert_true(insert(c, id, 1000 + 100 * (gint64)(id % 3)));
    ddm_correlate_shift(c, -900);
    assert_true(ddm_correlate_next_deadline(c) == 100);
    /* ids 3, 6, 9: deadline 100 */
    left_in_order(ddm_correlate_expire(c, 199), (const uint32_t[]){3, 6, 9}, 3);
    ddm_correlate_shift(c, 1000);
    assert_true(ddm_correlate_next_deadline(c) == 1200);
    /* 1, 4, 7 (1200), not 2, 5, 8 (1300) */
    left_in_order(ddm_correlate_expire(c, 1299), (const uint32_t[]){1, 4, 7}, 3);

    /* clamped at the top: 2, 5, 8 and the later 10 and 11 all end at
     * G_MAXINT64, and leave in insertion order (11, the earliest before,
     * no longer first: the heap is built again) */
    assert_true(insert(c, 10, 5000));
    assert_true(insert(c, 11, 1001));
    ddm_correlate_shift(c, G_MAXINT64 - 1000);
    assert_true(ddm_correlate_next_deadline(c) == G_MAXINT64);
    ddm_correlate_shift(c, G_MININT64); /* all at -1 */
    assert_true(ddm_correlate_next_deadline(c) == -1);
    ddm_correlate_shift(c, G_MININT64); /* and clamped at the bottom */
    assert_true(ddm_correlate_next_deadline(c) == G_MININT64);
    left_in_order(ddm_correlate_expire(c, G_MININT64), (const uint32_t[]){2, 5, 8, 10, 11}, 5);
    assert_int_equal(ddm_correlate_count(c), 0);
    ddm_correlate_free(c);
    assert_exactly_once();
}

/* The table against a model (a plain list kept in (deadline, insertion)
 * order): random inserts, takes, postpones and expiries, up to the cap and
 * back to empty, again and again (the one block grows, halves when a
 * quarter full, and goes with its last entry; correlate.c). Every expiry
 * and the final drain must return exactly the model's entries in the
 * model's order, count and next_deadline must agree at every step, and
 * contains must find every id of the model every @check_every steps (a
 * backward shift that loses an entry shows there). With @hash_mult 0 the
 * table keeps its random multiplier; with 0xFFFFFFFF every id but 0 (below
 * 2^16) has its home in the index's last slot (-id >> shift), so every
 * entry sits in one run that crosses the index's end and every deletion
 * shifts across it. */
typedef struct ModelEntry {
    uint32_t id;
    gint64 deadline;
    guint64 seq;
} ModelEntry;

static gint model_cmp(gconstpointer a, gconstpointer b)
{
    const ModelEntry *x = a, *y = b;
    if (x->deadline != y->deadline)
        return x->deadline < y->deadline ? -1 : 1;
    return x->seq < y->seq ? -1 : (x->seq > y->seq);
}

static void run_model(guint32 hash_mult, guint check_every)
{
    const guint cap = 300;
    DdmCorrelate *c = (g_random_set_seed(7), ddm_correlate_new(cap)); /* a reproducible multiplier */
    GArray *model = g_array_new(FALSE, FALSE, sizeof(ModelEntry));
    GRand *rnd = g_rand_new_with_seed(99);
    guint64 seq = 0;
    gint64 now = 0;
    gboolean filled = FALSE, shrank = FALSE;
    guint peak_room = 0;

    if (hash_mult)
        ddm_correlate_set_hash_multiplier(c, hash_mult);
    for (int step = 0; step < 60000; step++) {
        guint op = g_rand_int_range(rnd, 0, 100);
        uint32_t id = (uint32_t)g_rand_int_range(rnd, 0, MAX_IDS);
        guint i, at = model->len;
        DdmPending out;
        /* phases: fill towards the cap, then drain towards empty */
        gboolean filling = (step / 5000) % 2 == 0;

        for (i = 0; i < model->len; i++)
            if (g_array_index(model, ModelEntry, i).id == id)
                at = i;
        if (op < (filling ? 70u : 20u)) {
            gint64 dl = now + g_rand_int_range(rnd, 0, 50) * 10; /* ties are common */
            gboolean ok = insert(c, id, dl);
            assert_int_equal(ok, at == model->len && model->len < cap);
            if (ok) {
                ModelEntry m = {id, dl, seq++};
                g_array_append_val(model, m);
                g_array_sort(model, model_cmp);
            } else if (at == model->len) {
                filled = TRUE;
            }
        } else if (op < 90) {
            assert_int_equal(ddm_correlate_take(c, id, &out), at < model->len);
            if (at < model->len) {
                assert_int_equal(out.id, id);
                assert_true(out.deadline_us == g_array_index(model, ModelEntry, at).deadline);
                left(&out);
                g_array_remove_index(model, at);
            }
        } else if (op < 95) {
            gint64 to = now + g_rand_int_range(rnd, 0, 200);
            ddm_correlate_postpone(c, to);
            for (i = 0; i < model->len; i++)
                if (g_array_index(model, ModelEntry, i).deadline < to)
                    g_array_index(model, ModelEntry, i).deadline = to;
            g_array_sort(model, model_cmp);
        } else {
            GArray *a;
            now += g_rand_int_range(rnd, 0, 100);
            a = ddm_correlate_expire(c, now);
            for (i = 0; i < a->len; i++) {
                const ModelEntry *m = &g_array_index(model, ModelEntry, i);
                assert_int_equal(g_array_index(a, DdmPending, i).id, m->id);
                assert_true(m->deadline <= now);
                if (a->len - i <= 64) /* the ring remembers the last 64 */
                    assert_true(ddm_correlate_was_expired(c, m->id));
            }
            assert_true(model->len == a->len || g_array_index(model, ModelEntry, a->len).deadline > now);
            g_array_remove_range(model, 0, a->len);
            left_all(a);
        }
        assert_int_equal(ddm_correlate_count(c), model->len);
        assert_true(ddm_correlate_next_deadline(c) ==
                    (model->len ? g_array_index(model, ModelEntry, 0).deadline : G_MAXINT64));
        at = model->len;
        for (i = 0; i < model->len; i++)
            if (g_array_index(model, ModelEntry, i).id == id)
                at = i;
        assert_int_equal(ddm_correlate_contains(c, id), at < model->len);
        if (step % check_every == 0)
            for (i = 0; i < model->len; i++)
                assert_true(ddm_correlate_contains(c, g_array_index(model, ModelEntry, i).id));
        /* the block has room for the entries and is never below a quarter full */
        assert_true(ddm_correlate_room(c) >= model->len);
        assert_true(model->len == 0 || ddm_correlate_room(c) <= 4 || model->len * 4 > ddm_correlate_room(c));
        if (ddm_correlate_room(c) < peak_room && model->len > 0)
            shrank = TRUE;
        peak_room = MAX(peak_room, ddm_correlate_room(c));
        if (model->len == 0)
            peak_room = 0;
    }
    assert_true(filled); /* the cap was reached */
    assert_true(shrank); /* and the block halved before it emptied */
    {
        GArray *a = ddm_correlate_drain(c);
        assert_int_equal(a->len, model->len);
        for (guint i = 0; i < a->len; i++)
            assert_int_equal(g_array_index(a, DdmPending, i).id, g_array_index(model, ModelEntry, i).id);
        left_all(a);
    }
    g_array_unref(model);
    g_rand_free(rnd);
    finish(c);
}

static void test_correlate_against_model(void **state)
{
    (void)state;
    run_model(0, 1);
}

static void test_correlate_against_model_one_run(void **state)
{
    (void)state;
    run_model(0xFFFFFFFFu, 16);
}

/* A table that never empties gives its peak block back: filled to 1,024,
 * then taken down to 2, the block halves each time
 * it is a quarter full, ending at the first block's room. */
static void test_correlate_block_shrinks(void **state)
{
    DdmCorrelate *c = ddm_correlate_new(2048);
    DdmPending out;
    guint id, room;
    (void)state;

    for (id = 1; id <= 1024; id++)
        assert_true(insert(c, id, id));
    assert_int_equal(ddm_correlate_room(c), 1024);
    for (id = 1024; id > 2; id--) {
        room = ddm_correlate_room(c);
        assert_true(ddm_correlate_take(c, id, &out));
        left(&out);
        /* halved exactly when a removal leaves a quarter or less */
        assert_int_equal(ddm_correlate_room(c), room > 4 && id - 1 <= room / 4 ? room / 2 : room);
        for (guint k = 1; k < id; k += 97)
            assert_true(ddm_correlate_contains(c, k));
    }
    assert_int_equal(ddm_correlate_count(c), 2);
    assert_int_equal(ddm_correlate_room(c), 4);
    assert_int_equal(ddm_correlate_next_deadline(c), 1);
    finish(c);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup(test_correlate_reply, setup),
        cmocka_unit_test_setup(test_correlate_newest_id, setup),
        cmocka_unit_test_setup(test_correlate_error_reply, setup),
        cmocka_unit_test_setup(test_correlate_timeout, setup),
        cmocka_unit_test_setup(test_correlate_drain, setup),
        cmocka_unit_test_setup(test_correlate_duplicate, setup),
        cmocka_unit_test_setup(test_correlate_unknown, setup),
        cmocka_unit_test_setup(test_correlate_late_after_timeout, setup),
        cmocka_unit_test_setup(test_correlate_expired_memory_bounded, setup),
        cmocka_unit_test_setup(test_correlate_expired_memory_grows, setup),
        cmocka_unit_test_setup(test_correlate_ties_fifo_across_blocks, setup),
        cmocka_unit_test_setup(test_correlate_cap, setup),
        cmocka_unit_test_setup(test_correlate_next_deadline_order, setup),
        cmocka_unit_test_setup(test_correlate_random_mix, setup),
        cmocka_unit_test_setup(test_correlate_empty_again, setup),
        cmocka_unit_test_setup(test_correlate_shift, setup),
        cmocka_unit_test_setup(test_correlate_against_model, setup),
        cmocka_unit_test_setup(test_correlate_against_model_one_run, setup),
        cmocka_unit_test_setup(test_correlate_block_shrinks, setup),
    };
    return cmocka_run_group_tests_name("correlate", tests, NULL, NULL);
}
