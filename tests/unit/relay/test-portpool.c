/* SPDX-License-Identifier: Apache-2.0
 *
 * Unit tests for the relay's debugger port pool (core/relay/portpool.c):
 * the lowest free port against a plain reference (a bool per port scanned
 * from the base) over a random sequence of takes, releases and failed
 * binds; foreign marks forgotten after their TTL; the range cut at 65535
 * and at DDM_PORTPOOL_SPAN; an empty pool (base 0). Also the port index of
 * the remembered ports (portmap.c): "taken by another" answers the same as
 * a walk of the map after random sets.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <string.h>

#include "core/relay/portmap.h"
#include "core/relay/portpool.h"

static void test_portpool_lowest_free(void **state)
{
    (void)state;
    DdmPortPool pool;
    ddm_portpool_init(&pool, 8600, 4096);
    assert_int_equal(ddm_portpool_next_free(&pool, 0, 1), 8600);
    ddm_portpool_set_ours(&pool, 8600, TRUE);
    ddm_portpool_set_ours(&pool, 8601, TRUE);
    assert_int_equal(ddm_portpool_next_free(&pool, 8600, 1), 8602);
    ddm_portpool_set_foreign(&pool, 8602, 1);
    assert_int_equal(ddm_portpool_next_free(&pool, 8600, 2), 8603);
    assert_int_equal(ddm_portpool_next_free(&pool, 8700, 2), 8700);
    ddm_portpool_set_ours(&pool, 8600, FALSE);
    assert_int_equal(ddm_portpool_next_free(&pool, 8600, 2), 8600);
    /* the foreign mark goes after its TTL */
    ddm_portpool_set_ours(&pool, 8600, TRUE);
    assert_int_equal(ddm_portpool_next_free(&pool, 8600, 1 + DDM_PORTPOOL_FOREIGN_TTL_US), 8602);
    /* taking a foreign port clears the mark */
    ddm_portpool_set_foreign(&pool, 8602, 5);
    ddm_portpool_set_ours(&pool, 8602, TRUE);
    ddm_portpool_set_ours(&pool, 8602, FALSE);
    assert_int_equal(ddm_portpool_next_free(&pool, 8600, 6), 8602);
    /* outside the pool: ignored, and no port past the end */
    ddm_portpool_set_ours(&pool, 8599, TRUE);
    ddm_portpool_set_ours(&pool, 8600 + 4096, TRUE);
    assert_int_equal(ddm_portpool_next_free(&pool, 8600 + 4096, 6), 0);
    assert_int_equal(ddm_portpool_next_free(&pool, 8600 + 4095, 6), 8600 + 4095);
}

static void test_portpool_full_and_edges(void **state)
{
    (void)state;
    DdmPortPool pool;
    ddm_portpool_init(&pool, 65500, 4096); /* cut at 65535: 36 ports */
    assert_int_equal(pool.span, 36);
    for (guint p = 65500; p <= 65535; p++) {
        assert_int_equal(ddm_portpool_next_free(&pool, 65500, 1), p);
        ddm_portpool_set_ours(&pool, p, TRUE);
    }
    assert_int_equal(ddm_portpool_next_free(&pool, 65500, 1), 0);
    ddm_portpool_init(&pool, 1000, 100000);
    assert_int_equal(pool.span, DDM_PORTPOOL_SPAN);
    for (guint p = 1000; p < 1000 + DDM_PORTPOOL_SPAN; p++)
        ddm_portpool_set_ours(&pool, p, TRUE);
    assert_int_equal(ddm_portpool_next_free(&pool, 0, 1), 0);
    ddm_portpool_set_ours(&pool, 1000 + DDM_PORTPOOL_SPAN - 1, FALSE);
    assert_int_equal(ddm_portpool_next_free(&pool, 0, 1), 1000 + DDM_PORTPOOL_SPAN - 1);
    ddm_portpool_init(&pool, 0, 4096);
    assert_false(ddm_portpool_contains(&pool, 0));
    assert_int_equal(ddm_portpool_next_free(&pool, 0, 1), 0);
}

/* Random takes, releases and failed binds against a bool per port. */
static void test_portpool_random_against_reference(void **state)
{
    (void)state;
    enum { BASE = 20000, SPAN = 700 };
    DdmPortPool pool;
    gboolean ours[SPAN], foreign[SPAN];
    GRand *r = g_rand_new_with_seed(16);
    gint64 now = 1, foreign_since = 0;
    memset(ours, 0, sizeof ours);
    memset(foreign, 0, sizeof foreign);
    ddm_portpool_init(&pool, BASE, SPAN);
    for (int step = 0; step < 20000; step++) {
        guint i = (guint)g_rand_int_range(r, 0, SPAN);
        int op = g_rand_int_range(r, 0, 10);
        now += g_rand_int_range(r, 0, 20000);
        if (op < 5) {
            ddm_portpool_set_ours(&pool, BASE + i, TRUE);
            ours[i] = TRUE;
            foreign[i] = FALSE;
        } else if (op < 8) {
            ddm_portpool_set_ours(&pool, BASE + i, FALSE);
            ours[i] = FALSE;
        } else {
            if (!foreign_since)
                foreign_since = now;
            ddm_portpool_set_foreign(&pool, BASE + i, now);
            foreign[i] = TRUE;
        }
        guint from = (guint)g_rand_int_range(r, BASE - 5, BASE + SPAN + 5);
        if (foreign_since && now - foreign_since >= DDM_PORTPOOL_FOREIGN_TTL_US) {
            memset(foreign, 0, sizeof foreign);
            foreign_since = 0;
        }
        guint want = 0;
        for (guint p = from < BASE ? BASE : from; p < BASE + SPAN; p++)
            if (!ours[p - BASE] && !foreign[p - BASE]) {
                want = p;
                break;
            }
        assert_int_equal(ddm_portpool_next_free(&pool, from, now), want);
    }
    g_rand_free(r);
}

/* portmap's port index against a walk of what was set. */
static void test_portmap_port_index_against_walk(void **state)
{
    (void)state;
    enum { APPS = 40, MAX = 16 };
    DdmPortMap *m = ddm_portmap_new(MAX);
    GRand *r = g_rand_new_with_seed(7);
    for (int step = 0; step < 5000; step++) {
        char app[16], other[16];
        g_snprintf(app, sizeof app, "app%d", g_rand_int_range(r, 0, APPS));
        guint16 port = (guint16)g_rand_int_range(r, 8600, 8630);
        assert_true(ddm_portmap_set(m, NULL, app, port, NULL));
        assert_int_equal(ddm_portmap_lookup(m, NULL, app), port);
        assert_true(ddm_portmap_count(m) <= MAX);
        /* the reference: a port is taken by another iff some other app is remembered with it */
        g_snprintf(other, sizeof other, "app%d", g_rand_int_range(r, 0, APPS));
        guint16 probe = (guint16)g_rand_int_range(r, 8600, 8630);
        gboolean want = FALSE;
        for (int a = 0; a < APPS; a++) {
            char name[16];
            g_snprintf(name, sizeof name, "app%d", a);
            if (strcmp(name, other) != 0 && ddm_portmap_lookup(m, NULL, name) == probe)
                want = TRUE;
        }
        assert_int_equal(ddm_portmap_port_taken_by_other(m, probe, NULL, other), want);
        /* one app a port */
        int holders = 0;
        for (int a = 0; a < APPS; a++) {
            char name[16];
            g_snprintf(name, sizeof name, "app%d", a);
            holders += ddm_portmap_lookup(m, NULL, name) == port;
        }
        assert_int_equal(holders, 1);
    }
    /* the index survives a file round trip */
    gsize len = 0;
    char *text = ddm_portmap_serialize(m, &len);
    DdmPortMap *m2 = ddm_portmap_new(MAX);
    assert_true(ddm_portmap_parse(m2, text, len, NULL));
    for (guint16 p = 8600; p < 8630; p++)
        assert_int_equal(ddm_portmap_port_taken_by_other(m2, p, NULL, "nobody"),
                         ddm_portmap_port_taken_by_other(m, p, NULL, "nobody"));
    g_free(text);
    ddm_portmap_free(m2);
    ddm_portmap_free(m);
    g_rand_free(r);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_portpool_lowest_free),
        cmocka_unit_test(test_portpool_full_and_edges),
        cmocka_unit_test(test_portpool_random_against_reference),
        cmocka_unit_test(test_portmap_port_index_against_walk),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
