/* SPDX-License-Identifier: Apache-2.0
 *
 * The server's log lines (server/log.c): the time (ISO 8601, local,
 * milliseconds), the level words, the component from the glib domain,
 * newlines in a message, and the client's reading of a warning line.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <string.h>

#include "server/log.h"

static GDateTime *at(int hour, int minute, double seconds)
{
    g_autoptr(GTimeZone) tz = g_time_zone_new_offset(3600);
    return g_date_time_new(tz, 2026, 11, 25, hour, minute, seconds);
}

static void test_line(void **state)
{
    (void)state;
    g_autoptr(GDateTime) t = at(12, 0, 1.1234);
    g_autofree char *line = ddm_log_format_line(t, G_LOG_LEVEL_WARNING, "ddmon-loader", NULL,
                                                "refused /x/y.so: not ours");
    assert_string_equal(line, "2026-11-25T12:00:01.123 warning loader: refused /x/y.so: not ours\n");
    g_autoptr(GDateTime) t2 = at(9, 5, 7.0);
    g_autofree char *l2 = ddm_log_format_line(t2, G_LOG_LEVEL_MESSAGE, "ddmon", NULL, "listening");
    assert_string_equal(l2, "2026-11-25T09:05:07.000 message core: listening\n");
}

static void test_levels(void **state)
{
    (void)state;
    assert_string_equal(ddm_log_level_word(G_LOG_LEVEL_ERROR | G_LOG_FLAG_FATAL), "error");
    assert_string_equal(ddm_log_level_word(G_LOG_LEVEL_CRITICAL), "critical");
    assert_string_equal(ddm_log_level_word(G_LOG_LEVEL_WARNING), "warning");
    assert_string_equal(ddm_log_level_word(G_LOG_LEVEL_MESSAGE), "message");
    assert_string_equal(ddm_log_level_word(G_LOG_LEVEL_INFO), "info");
    assert_string_equal(ddm_log_level_word(G_LOG_LEVEL_DEBUG), "debug");
}

static void test_components(void **state)
{
    (void)state;
    g_autoptr(GDateTime) t = at(0, 0, 0.0);
    static const struct {
        const char *domain, *component;
    } cases[] = {
        {"ddmon", "core"},          {NULL, "core"},       {"", "core"},
        {"ddmon-loader", "loader"}, {"ddmon-plugin-heap", "plugin-heap"},
        {"GLib-GIO", "glib-gio"},   {"ddmonx", "ddmonx"},
    };
    for (gsize i = 0; i < G_N_ELEMENTS(cases); i++) {
        g_autofree char *line = ddm_log_format_line(t, G_LOG_LEVEL_INFO, cases[i].domain, NULL, "m");
        g_autofree char *want = g_strdup_printf("2026-11-25T00:00:00.000 info %s: m\n",
                                                cases[i].component);
        assert_string_equal(line, want);
    }
}

static void test_one_line(void **state)
{
    (void)state;
    g_autoptr(GDateTime) t = at(23, 59, 59.999);
    g_autofree char *line = ddm_log_format_line(t, G_LOG_LEVEL_CRITICAL, "ddmon-plugin-heap", NULL,
                                                "first\nsecond\r\nthird\n");
    assert_string_equal(line,
                        "2026-11-25T23:59:59.999 critical plugin-heap: first second  third\n");
    g_autofree char *empty = ddm_log_format_line(t, G_LOG_LEVEL_DEBUG, "ddmon-relay", NULL, NULL);
    assert_string_equal(empty, "2026-11-25T23:59:59.999 debug relay: \n");
    assert_null(strstr(line, "**"));
}

static void test_warning_message(void **state)
{
    (void)state;
    g_autoptr(GDateTime) t = at(12, 0, 1.0);
    g_autofree char *line = ddm_log_format_line(
        t, G_LOG_LEVEL_WARNING, "ddmon", NULL, "--plugin-opt threads.x: plugin threads has no option 'x'");
    line[strlen(line) - 1] = '\0';
    assert_string_equal(ddm_log_line_warning_message(line),
                        "--plugin-opt threads.x: plugin threads has no option 'x'");
    assert_null(ddm_log_line_warning_message(
        "2026-11-25T12:00:01.000 message core: a warning: not one"));
    assert_null(ddm_log_line_warning_message("(ddmon:1): ddmon-WARNING **: 12:00:01.123: old"));
    assert_null(ddm_log_line_warning_message("2026-11-25T12:00:01.000 warning"));
    assert_null(ddm_log_line_warning_message(""));
    /* with the VM field */
    assert_string_equal(ddm_log_line_warning_message(
                            "2026-11-25T12:00:01.000 warning core [127.0.0.1:8000]: bad HELO"),
                        "bad HELO");
    assert_null(ddm_log_line_warning_message(
        "2026-11-25T12:00:01.000 warning core [a b]: no spaces in a key"));
}

/* The VM a line is about is a field after the component: " [KEY]", any
 * space or ']' in a key made '_' so the field stays one word. */
static void test_vm_field(void **state)
{
    (void)state;
    g_autoptr(GDateTime) t = at(12, 0, 1.0);
    g_autofree char *line =
        ddm_log_format_line(t, G_LOG_LEVEL_MESSAGE, "ddmon", "127.0.0.1:8000", "session closed");
    g_autofree char *odd =
        ddm_log_format_line(t, G_LOG_LEVEL_INFO, "ddmon-relay", "emu 5554]x", "m");
    g_autofree char *none = ddm_log_format_line(t, G_LOG_LEVEL_INFO, "ddmon", "", "m");
    assert_non_null(strstr(line, " message core [127.0.0.1:8000]: session closed\n"));
    assert_non_null(strstr(odd, " info relay [emu_5554_x]: m\n"));
    assert_non_null(strstr(none, " info core: m\n"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_line),       cmocka_unit_test(test_levels),
        cmocka_unit_test(test_components), cmocka_unit_test(test_one_line),
        cmocka_unit_test(test_warning_message), cmocka_unit_test(test_vm_field),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
