/* SPDX-License-Identifier: Apache-2.0
 *
 * Unit tests for the relay's packet-id map (core/relay/idmap.c): ids a debugger
 * picks never collide with ddmon's own, replies get the debugger's id
 * back, two debuggers using the same ids stay apart, a debugger that left
 * gets nothing, the map is bounded, the cursor wraps and skips ids in use,
 * and random operations checked against a plain model of the allocation
 * rule (the inline fast path and the slow path give the same ids).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "core/relay/idmap.h"

static int client_a, client_b;

static void test_idmap_roundtrip_and_own_range(void **state)
{
    DdmIdMap *m = ddm_idmap_new(16);
    /* A debugger deliberately using ddmon's own ids (0x40000000...). */
    uint32_t ours[] = {0x40000000u, 0x40000001u, 1, 0xFFFFFFFFu, 0};
    uint32_t vm_ids[G_N_ELEMENTS(ours)];
    for (size_t i = 0; i < G_N_ELEMENTS(ours); i++) {
        assert_true(ddm_idmap_map(m, &client_a, ours[i], &vm_ids[i]));
        assert_true(ddm_idmap_in_range(vm_ids[i]));
        assert_true(vm_ids[i] < 0x40000000u); /* never in ddmon's range */
        for (size_t j = 0; j < i; j++)
            assert_int_not_equal(vm_ids[i], vm_ids[j]);
    }
    assert_int_equal(ddm_idmap_count(m), G_N_ELEMENTS(ours));
    /* replies in another order */
    for (size_t k = G_N_ELEMENTS(ours); k-- > 0;) {
        gpointer client = NULL;
        uint32_t cid = 123;
        assert_true(ddm_idmap_take(m, vm_ids[k], &client, &cid));
        assert_ptr_equal(client, &client_a);
        assert_int_equal(cid, ours[k]);
        assert_false(ddm_idmap_take(m, vm_ids[k], &client, &cid)); /* exactly once */
    }
    assert_int_equal(ddm_idmap_count(m), 0);
    assert_false(ddm_idmap_in_range(0x40000000u));
    ddm_idmap_free(m);
}

static void test_idmap_two_clients_same_ids(void **state)
{
    DdmIdMap *m = ddm_idmap_new(16);
    uint32_t va, vb;
    assert_true(ddm_idmap_map(m, &client_a, 7, &va));
    assert_true(ddm_idmap_map(m, &client_b, 7, &vb));
    assert_int_not_equal(va, vb);
    gpointer c;
    uint32_t id;
    assert_true(ddm_idmap_take(m, vb, &c, &id));
    assert_ptr_equal(c, &client_b);
    assert_int_equal(id, 7);
    assert_true(ddm_idmap_take(m, va, &c, &id));
    assert_ptr_equal(c, &client_a);
    ddm_idmap_free(m);
}

static void test_idmap_forget_client(void **state)
{
    DdmIdMap *m = ddm_idmap_new(16);
    uint32_t a1, a2, b1;
    assert_true(ddm_idmap_map(m, &client_a, 1, &a1));
    assert_true(ddm_idmap_map(m, &client_a, 2, &a2));
    assert_true(ddm_idmap_map(m, &client_b, 1, &b1));
    assert_int_equal(ddm_idmap_forget_client(m, &client_a), 2);
    assert_false(ddm_idmap_take(m, a1, NULL, NULL)); /* late reply: not routed */
    assert_false(ddm_idmap_take(m, a2, NULL, NULL));
    assert_true(ddm_idmap_take(m, b1, NULL, NULL));
    ddm_idmap_free(m);
}

static void test_idmap_bounded_and_reserved(void **state)
{
    DdmIdMap *m = ddm_idmap_new(3);
    uint32_t v[4];
    assert_true(ddm_idmap_map(m, &client_a, 1, &v[0]));
    assert_true(ddm_idmap_reserve(m, &v[1]));
    assert_true(ddm_idmap_map(m, &client_a, 3, &v[2]));
    assert_false(ddm_idmap_map(m, &client_a, 4, &v[3])); /* full */
    gpointer c = &client_b;
    uint32_t id = 99;
    assert_true(ddm_idmap_take(m, v[1], &c, &id));
    assert_null(c); /* reserved: no client */
    assert_true(ddm_idmap_map(m, &client_a, 4, &v[3]));
    ddm_idmap_free(m);
}

static void test_idmap_wraps_and_skips_in_use(void **state)
{
    DdmIdMap *m = ddm_idmap_new(8);
    uint32_t busy, v1, v2;
    ddm_idmap_set_cursor(m, DDM_IDMAP_FIRST);
    assert_true(ddm_idmap_map(m, &client_a, 1, &busy));
    assert_int_equal(busy, DDM_IDMAP_FIRST);
    ddm_idmap_set_cursor(m, DDM_IDMAP_LAST);
    assert_true(ddm_idmap_map(m, &client_a, 2, &v1));
    assert_int_equal(v1, DDM_IDMAP_LAST);
    assert_true(ddm_idmap_map(m, &client_a, 3, &v2));
    assert_int_equal(v2, DDM_IDMAP_FIRST + 1); /* wrapped, skipped the busy id */
    ddm_idmap_free(m);
}

/* Many ids in flight (the table grows), a long-lived one among thousands of
 * round trips (its slot is skipped, never reused), and everything back. */
static void test_idmap_grows_and_keeps_long_lived(void **state)
{
    (void)state;
    DdmIdMap *m = ddm_idmap_new(5000);
    int a, b;
    uint32_t vm_ids[3000], old, id, cid;
    gpointer who;
    for (uint32_t i = 0; i < 3000; i++)
        assert_true(ddm_idmap_map(m, &a, i, &vm_ids[i]));
    assert_int_equal(ddm_idmap_count(m), 3000);
    for (uint32_t i = 0; i < 3000; i++)
        for (uint32_t j = i + 1; j < i + 4 && j < 3000; j++)
            assert_int_not_equal(vm_ids[i], vm_ids[j]);
    for (uint32_t i = 0; i < 3000; i++) {
        assert_true(ddm_idmap_take(m, vm_ids[i], &who, &cid));
        assert_ptr_equal(who, &a);
        assert_int_equal(cid, i);
    }
    assert_int_equal(ddm_idmap_count(m), 0);
    assert_false(ddm_idmap_take(m, vm_ids[0], NULL, NULL)); /* taken once only */

    assert_true(ddm_idmap_map(m, &b, 7, &old));
    for (uint32_t i = 0; i < 10000; i++) {
        assert_true(ddm_idmap_map(m, &a, i, &id));
        assert_int_not_equal(id, old);
        assert_true(ddm_idmap_take(m, id, &who, &cid));
        assert_int_equal(cid, i);
    }
    assert_true(ddm_idmap_take(m, old, &who, &cid));
    assert_ptr_equal(who, &b);
    assert_int_equal(cid, 7);
    assert_int_equal(ddm_idmap_count(m), 0);
    ddm_idmap_free(m);
}

/* ------------------------------------------------- random vs a model
 * A plain reference of idmap.c's allocation rule, with no fast path: the
 * cursor walks FIRST..LAST and wraps to FIRST; an id is skipped while an
 * entry in use shares its slot (id & (cap - 1)); the table starts at 16
 * slots, doubles when an allocation finds it half full, and is dropped
 * when it empties above 64 slots; nothing is allocated at max_entries.
 * ddm_idmap_map (the inline fast path) and ddm_idmap_reserve (always the
 * slow path) must both give the model's id. */
#define MODEL_MAX 40

typedef struct {
    uint32_t vm_id, client_id;
    gpointer client;
} ModelEntry;

typedef struct {
    ModelEntry e[MODEL_MAX];
    guint count, cap, max_entries;
    uint32_t next;
} ModelMap;

static gboolean model_slot_taken(const ModelMap *mm, uint32_t id)
{
    for (guint k = 0; k < mm->count; k++)
        if ((mm->e[k].vm_id & (mm->cap - 1)) == (id & (mm->cap - 1)))
            return TRUE;
    return FALSE;
}

static gboolean model_alloc(ModelMap *mm, gpointer client, uint32_t client_id, uint32_t *vm_id)
{
    if (mm->count >= mm->max_entries)
        return FALSE;
    if (mm->cap == 0)
        mm->cap = 16;
    else if (mm->count >= mm->cap / 2)
        mm->cap *= 2;
    for (;;) {
        uint32_t id = mm->next;
        mm->next = id == DDM_IDMAP_LAST ? DDM_IDMAP_FIRST : id + 1;
        if (!model_slot_taken(mm, id)) {
            mm->e[mm->count++] = (ModelEntry){ id, client_id, client };
            *vm_id = id;
            return TRUE;
        }
    }
}

static void model_remove(ModelMap *mm, guint k)
{
    mm->e[k] = mm->e[--mm->count];
    if (mm->count == 0 && mm->cap > 64)
        mm->cap = 0;
}

static void test_idmap_random_against_model(void **state)
{
    (void)state;
    static int clients[3];
    GRand *r = g_rand_new_with_seed(16);
    ModelMap mm = { .max_entries = MODEL_MAX, .next = DDM_IDMAP_FIRST };
    DdmIdMap *m = ddm_idmap_new(MODEL_MAX);
    guint fast_maps = 0, wraps = 0, full = 0, emptied = 0;

    for (guint op = 0; op < 200000; op++) {
        /* phases that fill the map (it grows, and meets its bound) and
         * drain it (it empties, and drops its grown table) */
        gboolean filling = (op / 500) % 2 == 0;
        guint cap_before = mm.cap;
        guint what = (guint)g_rand_int_range(r, 0, 100);
        guint maps = filling ? 60 : 15;
        if (what < maps) {
            /* map (the fast path when it can) or reserve (the slow path) */
            gboolean reserve = what < 3;
            gpointer c = reserve ? NULL : &clients[g_rand_int_range(r, 0, 3)];
            uint32_t cid = reserve ? 0 : g_rand_int(r), want = 0, got = 0; /* reserved: 0 */
            uint32_t before = mm.next;
            gboolean ok_want = model_alloc(&mm, c, cid, &want);
            gboolean ok = reserve ? ddm_idmap_reserve(m, &got) : ddm_idmap_map(m, c, cid, &got);
            assert_int_equal(ok, ok_want);
            if (ok) {
                assert_int_equal(got, want);
                fast_maps += !reserve && want == before;
                wraps += want < before;
            } else {
                full++;
            }
        } else if (what < 88) {
            /* take: mostly an id in use, else one that is not */
            uint32_t id;
            guint k = mm.count;
            if (mm.count && g_rand_int_range(r, 0, 4) != 0) {
                k = (guint)g_rand_int_range(r, 0, (gint32)mm.count);
                id = mm.e[k].vm_id;
            } else {
                id = mm.next + (uint32_t)g_rand_int_range(r, -100, 100);
                for (guint j = 0; j < mm.count; j++)
                    if (mm.e[j].vm_id == id)
                        k = j;
            }
            gpointer c = &clients[0];
            uint32_t cid = 0;
            assert_int_equal(ddm_idmap_take(m, id, &c, &cid), k < mm.count);
            if (k < mm.count) {
                assert_ptr_equal(c, mm.e[k].client);
                assert_int_equal(cid, mm.e[k].client_id);
                model_remove(&mm, k);
            }
        } else if (what < 90) {
            gpointer c = &clients[g_rand_int_range(r, 0, 3)];
            guint n = 0;
            for (guint k = mm.count; k-- > 0;)
                if (mm.e[k].client == c) {
                    model_remove(&mm, k);
                    n++;
                }
            assert_int_equal(ddm_idmap_forget_client(m, c), n);
        } else if (what < 94) {
            /* the cursor near the wrap, at a random spot, or out of range */
            uint32_t to;
            switch (g_rand_int_range(r, 0, 3)) {
            case 0: to = DDM_IDMAP_LAST - (uint32_t)g_rand_int_range(r, 0, 40); break;
            case 1: to = (uint32_t)g_rand_int_range(r, (gint32)DDM_IDMAP_FIRST, (gint32)DDM_IDMAP_LAST); break;
            default: to = g_rand_boolean(r) ? 0 : 0x40000000u; break;
            }
            ddm_idmap_set_cursor(m, to);
            mm.next = ddm_idmap_in_range(to) ? to : DDM_IDMAP_FIRST;
        }
        assert_int_equal(ddm_idmap_count(m), mm.count);
        emptied += cap_before > 64 && mm.cap == 0;
    }
    /* the run did exercise what it is for */
    assert_true(fast_maps > 10000);
    assert_true(wraps > 100);
    assert_true(full > 100);
    assert_true(emptied > 20); /* the grown table was dropped, and grew again */
    ddm_idmap_free(m);
    g_rand_free(r);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_idmap_roundtrip_and_own_range),
        cmocka_unit_test(test_idmap_two_clients_same_ids),
        cmocka_unit_test(test_idmap_forget_client),
        cmocka_unit_test(test_idmap_bounded_and_reserved),
        cmocka_unit_test(test_idmap_wraps_and_skips_in_use),
        cmocka_unit_test(test_idmap_grows_and_keeps_long_lived),
        cmocka_unit_test(test_idmap_random_against_model),
    };
    return cmocka_run_group_tests_name("idmap", tests, NULL, NULL);
}
