/* SPDX-License-Identifier: Apache-2.0
 *
 * The counted set of ports ddmon listens on (core/session/portset.c): the
 * ports in it and only them, counts (a port added twice stays until removed
 * twice), a page made only where a port was added, and random adds and
 * removes against a plain array of counts.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "core/session/portset.h"

static void test_portset_range(void **state)
{
    (void)state;
    DdmPortSet s = {0};
    assert_false(ddm_portset_contains(&s, 10000));
    assert_int_equal(ddm_portset_pages(&s), 0);
    for (guint p = 10000; p < 11000; p++)
        ddm_portset_add(&s, (guint16)p);
    for (guint p = 10000; p < 11000; p++)
        assert_true(ddm_portset_contains(&s, (guint16)p));
    assert_false(ddm_portset_contains(&s, 9999));
    assert_false(ddm_portset_contains(&s, 11000));
    assert_false(ddm_portset_contains(&s, 10000 + 4096));
    assert_int_equal(ddm_portset_pages(&s), 1); /* 1,000 ports in one 512-byte page */
    ddm_portset_add(&s, 1);
    ddm_portset_add(&s, 65535);
    assert_true(ddm_portset_contains(&s, 1));
    assert_true(ddm_portset_contains(&s, 65535));
    assert_false(ddm_portset_contains(&s, 0));
    assert_false(ddm_portset_contains(&s, 65534));
    assert_int_equal(ddm_portset_pages(&s), 3);
    for (guint p = 10000; p < 11000; p++)
        ddm_portset_remove(&s, (guint16)p);
    for (guint p = 10000; p < 11000; p++)
        assert_false(ddm_portset_contains(&s, (guint16)p));
    assert_true(ddm_portset_contains(&s, 1));
    ddm_portset_clear(&s);
    assert_false(ddm_portset_contains(&s, 1));
    assert_int_equal(ddm_portset_pages(&s), 0);
}

static void test_portset_counts(void **state)
{
    (void)state;
    DdmPortSet s = {0};
    ddm_portset_add(&s, 8700);
    ddm_portset_add(&s, 8700);
    ddm_portset_add(&s, 8701);
    ddm_portset_remove(&s, 8700);
    assert_true(ddm_portset_contains(&s, 8700)); /* added twice, removed once */
    ddm_portset_remove(&s, 8700);
    assert_false(ddm_portset_contains(&s, 8700));
    ddm_portset_remove(&s, 8700); /* not in the set: ignored */
    assert_int_equal(ddm_portset_pages(&s), 1); /* 8700 and 8701: page 2 */
    ddm_portset_remove(&s, 40000); /* page 9, never touched: ignored, makes none */
    assert_false(ddm_portset_contains(&s, 40000));
    assert_false(ddm_portset_contains(&s, 8700));
    assert_true(ddm_portset_contains(&s, 8701));
    assert_int_equal(ddm_portset_pages(&s), 1);
    ddm_portset_add(&s, 8700); /* back once: one removal takes it out */
    ddm_portset_remove(&s, 8700);
    assert_false(ddm_portset_contains(&s, 8700));
    ddm_portset_clear(&s);
}

static void test_portset_against_counts(void **state)
{
    (void)state;
    DdmPortSet s = {0};
    static guint counts[65536];
    GRand *r = g_rand_new_with_seed(65536);
    for (guint step = 0; step < 200000; step++) {
        /* few ports, so that they are added and removed many times over */
        guint16 port = (guint16)(g_rand_boolean(r) ? g_rand_int_range(r, 1, 64)
                                                   : g_rand_int_range(r, 1, 65536));
        if (g_rand_int_range(r, 0, 3)) {
            ddm_portset_add(&s, port);
            counts[port]++;
        } else {
            ddm_portset_remove(&s, port);
            if (counts[port])
                counts[port]--;
        }
        assert_int_equal(ddm_portset_contains(&s, port), counts[port] > 0);
    }
    for (guint p = 1; p < 65536; p++)
        assert_int_equal(ddm_portset_contains(&s, (guint16)p), counts[p] > 0);
    ddm_portset_clear(&s);
    g_rand_free(r);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_portset_range),
        cmocka_unit_test(test_portset_counts),
        cmocka_unit_test(test_portset_against_counts),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
