/* SPDX-License-Identifier: Apache-2.0
 *
 * Unit tests for the relay's packet-id map (core/relay/idmap.c): ids a debugger
 * picks never collide with ddmon's own, replies get the debugger's id
 * back, two debuggers using the same ids stay apart, a debugger that left
 * gets nothing, the map is bounded, the cursor wraps and skips ids in use.
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

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_idmap_roundtrip_and_own_range),
        cmocka_unit_test(test_idmap_two_clients_same_ids),
        cmocka_unit_test(test_idmap_forget_client),
        cmocka_unit_test(test_idmap_bounded_and_reserved),
        cmocka_unit_test(test_idmap_wraps_and_skips_in_use),
        cmocka_unit_test(test_idmap_grows_and_keeps_long_lived),
    };
    return cmocka_run_group_tests_name("idmap", tests, NULL, NULL);
}
