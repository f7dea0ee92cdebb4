/* SPDX-License-Identifier: Apache-2.0
 *
 * Rate-limited log lines (core/session/ratelog.c): the burst per key and
 * window, the count of suppressed lines and its summary, the bound on
 * keys, the process-wide logger under a flood (issue 15, fault 6), and
 * the wording of a listener's shed and accept error.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <errno.h>
#include <string.h>

#include <cmocka.h>
#include <glib.h>

#include "core/session/ratelog.h"

#define MS 1000 /* microseconds */

/* Per key: burst lines, then suppressed ones, counted; the next window
 * reports the count once and allows a burst again. Keys are independent. */
static void test_ratelog_burst_and_window(void **state)
{
    DdmRateLog *rl = ddm_ratelog_new(3, 1000, 16);
    guint supp = 99, printed = 0;
    (void)state;

    for (int i = 0; i < 10; i++) {
        if (ddm_ratelog_check(rl, "vm1 bad", 100 * MS + i, &supp))
            printed++;
        assert_int_equal(supp, 0);
    }
    assert_int_equal(printed, 3);
    assert_true(ddm_ratelog_check(rl, "vm2 bad", 100 * MS, &supp)); /* another key */
    /* still inside the window */
    assert_false(ddm_ratelog_check(rl, "vm1 bad", 1099 * MS, &supp));
    assert_int_equal(supp, 0);
    /* the next window: the 8 suppressed are reported once */
    assert_true(ddm_ratelog_check(rl, "vm1 bad", 1100 * MS, &supp));
    assert_int_equal(supp, 8);
    assert_true(ddm_ratelog_check(rl, "vm1 bad", 1101 * MS, &supp));
    assert_int_equal(supp, 0);
    ddm_ratelog_free(rl);
}

static guint summaries, summarized;
static char last_key[64];

static void on_summary(const char *key, guint count, GLogLevelFlags level, gpointer ud)
{
    (void)ud;
    assert_int_equal(level, G_LOG_LEVEL_WARNING);
    summaries++;
    summarized += count;
    g_strlcpy(last_key, key, sizeof last_key);
}

/* expire() reports the windows that ended with lines suppressed and
 * forgets every key whose window ended. */
static void test_ratelog_expire_summaries(void **state)
{
    DdmRateLog *rl = ddm_ratelog_new(2, 1000, 16);
    (void)state;

    summaries = summarized = 0;
    for (int i = 0; i < 7; i++)
        if (!ddm_ratelog_check(rl, "flooder", 0, NULL))
            ddm_ratelog_note_level(rl, "flooder", G_LOG_LEVEL_WARNING);
    ddm_ratelog_check(rl, "quiet", 0, NULL);
    assert_int_equal(ddm_ratelog_keys(rl), 2);
    assert_int_equal(ddm_ratelog_expire(rl, 500 * MS, on_summary, NULL), 2); /* not yet */
    assert_int_equal(summaries, 0);
    assert_int_equal(ddm_ratelog_expire(rl, 1000 * MS, on_summary, NULL), 0);
    assert_int_equal(summaries, 1);
    assert_int_equal(summarized, 5);
    assert_string_equal(last_key, "flooder");
    ddm_ratelog_free(rl);
}

/* However many keys are logged, at most max_keys (+ the overflow key) are
 * kept; lines of new keys beyond that share the overflow key's budget. */
static void test_ratelog_keys_bounded(void **state)
{
    DdmRateLog *rl = ddm_ratelog_new(1, 1000, 8);
    guint printed = 0;
    char key[32];
    (void)state;

    for (int i = 0; i < 10000; i++) {
        g_snprintf(key, sizeof key, "peer %d", i);
        if (ddm_ratelog_check(rl, key, 0, NULL))
            printed++;
    }
    assert_true(ddm_ratelog_keys(rl) <= 9);
    assert_int_equal(printed, 8 + 1); /* 8 keys and the overflow key, one line each */
    /* once their windows ended, new keys are tracked again */
    assert_true(ddm_ratelog_check(rl, "late", 2000 * MS, NULL));
    ddm_ratelog_free(rl);
}

/* A full table is walked for keys to forget once per window's end, not
 * once per new key: a port scan's refused connects each log under a key
 * of their own (issue 16: 65,535 ports walked 1,024 keys each). What a
 * walk forgets stays the same. */
static void test_ratelog_full_table_walked_once(void **state)
{
    DdmRateLog *rl = ddm_ratelog_new(1, 1000, 8);
    char key[32];
    (void)state;

    for (int i = 0; i < 8; i++) {
        g_snprintf(key, sizeof key, "early %d", i);
        assert_true(ddm_ratelog_check(rl, key, 10 * MS, NULL));
    }
    for (int i = 0; i < 5000; i++) { /* full of keys whose windows run until 1,010 ms */
        g_snprintf(key, sizeof key, "peer %d", i);
        (void)ddm_ratelog_check(rl, key, 20 * MS + i, NULL);
    }
    assert_int_equal(ddm_ratelog_sweeps(rl), 1);
    assert_true(ddm_ratelog_keys(rl) <= 9);
    /* one of the early keys is busy: it has a line to report, so it stays */
    assert_false(ddm_ratelog_check(rl, "early 3", 30 * MS, NULL));
    /* the early windows end: the next new key walks once and is tracked */
    assert_true(ddm_ratelog_check(rl, "late", 1010 * MS, NULL));
    assert_int_equal(ddm_ratelog_sweeps(rl), 2);
    assert_true(ddm_ratelog_check(rl, "later", 1011 * MS, NULL));
    assert_int_equal(ddm_ratelog_sweeps(rl), 2); /* the table has room now */
    {
        guint supp = 0;
        /* the busy key was kept with its count */
        assert_true(ddm_ratelog_check(rl, "early 3", 1012 * MS, &supp));
        assert_int_equal(supp, 1);
    }
    ddm_ratelog_free(rl);
}

/* A key longer than DDM_RATELOG_KEY_MAX is cut (same prefix, same key). */
static void test_ratelog_long_key(void **state)
{
    DdmRateLog *rl = ddm_ratelog_new(1, 1000, 8);
    char *a = g_strnfill(10000, 'a');
    char *b = g_strnfill(20000, 'a');
    (void)state;

    assert_true(ddm_ratelog_check(rl, a, 0, NULL));
    assert_false(ddm_ratelog_check(rl, b, 0, NULL));
    assert_int_equal(ddm_ratelog_keys(rl), 1);
    g_free(a);
    g_free(b);
    ddm_ratelog_free(rl);
}

static guint lines_logged;
static char *last_line; /* the last line's MESSAGE */

static GLogWriterOutput count_writer(GLogLevelFlags level, const GLogField *fields, gsize n,
                                     gpointer ud)
{
    (void)level;
    (void)ud;
    lines_logged++;
    for (gsize i = 0; i < n; i++)
        if (strcmp(fields[i].key, "MESSAGE") == 0) {
            g_free(last_line);
            last_line = g_strdup(fields[i].value);
        }
    return G_LOG_WRITER_HANDLED;
}

/* The process-wide logger: 10,000 lines about one peer print the burst
 * and nothing more inside the window; 10,000 lines about 10,000 peers
 * print a bounded number of lines too. */
static void test_ratelog_flood_bounded(void **state)
{
    (void)state;
    ddm_ratelog_reset();
    lines_logged = 0;
    for (int i = 0; i < 10000; i++)
        ddm_ratelog("debugger port 8600", G_LOG_LEVEL_MESSAGE, "relay: debugger %d closed", i);
    assert_int_equal(lines_logged, DDM_RATELOG_BURST);
    ddm_ratelog_reset();
    lines_logged = 0;
    for (int i = 0; i < 10000; i++) {
        char key[32];
        g_snprintf(key, sizeof key, "debugger port %d", 10000 + i);
        ddm_ratelog(key, G_LOG_LEVEL_MESSAGE, "relay: debugger on port %d closed", 10000 + i);
    }
    assert_true(lines_logged <= (DDM_RATELOG_MAX_KEYS + 1) * DDM_RATELOG_BURST);
    ddm_ratelog_reset();
}

/* A listener's trouble as every accept loop logs it: the shed line (quoted
 * in NEWS) and the error line with its pause, with and without a place. */
static void test_ratelog_accept_lines(void **state)
{
    (void)state;
    ddm_ratelog_reset();
    ddm_ratelog_accept("relay", "on port 8600", DDM_ACCEPT_SHED, EMFILE, 0);
    g_autofree char *shed =
        g_strdup_printf("relay: out of descriptors (%s): refused a connection on port 8600",
                        g_strerror(EMFILE));
    assert_string_equal(last_line, shed);
    ddm_ratelog_accept("--http", NULL, DDM_ACCEPT_ERROR, ENOBUFS, 200);
    g_autofree char *error =
        g_strdup_printf("--http: accept: %s (paused 200 ms)", g_strerror(ENOBUFS));
    assert_string_equal(last_line, error);
    /* rate-limited per listener */
    lines_logged = 0;
    for (int i = 0; i < 100; i++)
        ddm_ratelog_accept("control", "on the control socket", DDM_ACCEPT_ERROR, ENOMEM, 2000);
    assert_int_equal(lines_logged, DDM_RATELOG_BURST);
    ddm_ratelog_reset();
    g_clear_pointer(&last_line, g_free);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_ratelog_burst_and_window),
        cmocka_unit_test(test_ratelog_expire_summaries),
        cmocka_unit_test(test_ratelog_keys_bounded),
        cmocka_unit_test(test_ratelog_full_table_walked_once),
        cmocka_unit_test(test_ratelog_long_key),
        cmocka_unit_test(test_ratelog_flood_bounded),
        cmocka_unit_test(test_ratelog_accept_lines),
    };
    g_log_set_writer_func(count_writer, NULL, NULL);
    return cmocka_run_group_tests(tests, NULL, NULL);
}
