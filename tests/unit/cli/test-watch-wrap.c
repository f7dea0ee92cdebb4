/* SPDX-License-Identifier: Apache-2.0
 *
 * Unit tests for ddm_watch_wrap() (cli/watch.c), which lays the note under
 * the live view's headline (why the terminal UI did not load) over the
 * lines it needs: every line within the width in terminal cells, breaks
 * after words, never inside a UTF-8 character, the whole text kept unless
 * the line cap cuts it (then "…"). tests/integration/tui-module.sh checks
 * the real screen in an 80-column tmux pane.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <string.h>

#include "cli/watch.h"

/* Terminal cells of @s (valid UTF-8), as the wrap counts them. */
static guint cells(const char *s)
{
    guint w = 0;
    for (const char *p = s; *p; p = g_utf8_next_char(p)) {
        gunichar c = g_utf8_get_char(p);
        w += g_unichar_iszerowidth(c) ? 0 : g_unichar_iswide(c) ? 2 : 1;
    }
    return w;
}

static void test_note_at_80_columns(void **state)
{
    (void)state;
    const char *note = "terminal UI not loaded: cannot load /usr/local/lib/ddmon/ddmon-tui.so: "
                       "cannot open directory /usr/local/lib/ddmon: No such file or directory";
    g_auto(GStrv) lines = ddm_watch_wrap(note, 80, 3);
    assert_int_equal(g_strv_length(lines), 2);
    for (guint i = 0; lines[i] != NULL; i++)
        assert_true(cells(lines[i]) <= 80);
    /* Broken at a space, which the join puts back: the whole text. */
    g_autofree char *joined = g_strjoinv(" ", lines);
    assert_string_equal(joined, note);
    assert_non_null(strstr(joined, "No such file or directory"));
    assert_string_equal(lines[0],
                        "terminal UI not loaded: cannot load /usr/local/lib/ddmon/ddmon-tui.so: cannot");
}

static void test_short_text_one_line(void **state)
{
    (void)state;
    g_auto(GStrv) lines = ddm_watch_wrap("short", 80, 3);
    assert_int_equal(g_strv_length(lines), 1);
    assert_string_equal(lines[0], "short");
    g_auto(GStrv) exact = ddm_watch_wrap("12345", 5, 1);
    assert_int_equal(g_strv_length(exact), 1);
    assert_string_equal(exact[0], "12345");
}

static void test_nothing(void **state)
{
    (void)state;
    g_auto(GStrv) a = ddm_watch_wrap(NULL, 80, 3);
    g_auto(GStrv) b = ddm_watch_wrap("", 80, 3);
    g_auto(GStrv) c = ddm_watch_wrap("text", 0, 3);
    g_auto(GStrv) d = ddm_watch_wrap("text", 80, 0);
    assert_null(a[0]);
    assert_null(b[0]);
    assert_null(c[0]);
    assert_null(d[0]);
}

/* A word longer than the width (a path): cut between characters, never
 * inside a multi-byte one, by cells (the two-byte "é" is one cell, the
 * three-byte "日" two). */
static void test_utf8_cut_by_cells(void **state)
{
    (void)state;
    /* /home/été/日本/ddmon-tui.so */
    const char *path = "/home/\xc3\xa9t\xc3\xa9/\xe6\x97\xa5\xe6\x9c\xac/ddmon-tui.so";
    for (guint cols = 1; cols <= 30; cols++) {
        g_auto(GStrv) lines = ddm_watch_wrap(path, cols, 40);
        GString *joined = g_string_new(NULL);
        for (guint i = 0; lines[i] != NULL; i++) {
            assert_true(g_utf8_validate(lines[i], -1, NULL));
            /* a wide character alone may overflow a 1-column line */
            assert_true(cells(lines[i]) <= MAX(cols, 2u));
            if (lines[i + 1] != NULL && cols >= 2)
                assert_true(cells(lines[i]) + 2 > cols); /* full, short only of a wide char */
            g_string_append(joined, lines[i]);
        }
        assert_string_equal(joined->str, path);
        g_string_free(joined, TRUE);
    }
    g_auto(GStrv) two = ddm_watch_wrap(path, 8, 40);
    assert_string_equal(two[0], "/home/\xc3\xa9t"); /* 8 cells, 9 bytes */
}

static void test_line_cap_ends_in_ellipsis(void **state)
{
    (void)state;
    g_auto(GStrv) lines = ddm_watch_wrap("aaaa bbbb cccc dddd eeee", 9, 2);
    assert_int_equal(g_strv_length(lines), 2);
    assert_string_equal(lines[0], "aaaa bbbb");
    assert_string_equal(lines[1], "cccc ddd\xe2\x80\xa6");
    assert_int_equal(cells(lines[1]), 9);
    /* the cut is by character too: "日" is not split for the "…" */
    g_auto(GStrv) wide = ddm_watch_wrap("\xe6\x97\xa5\xe6\x97\xa5\xe6\x97\xa5", 4, 1);
    assert_string_equal(wide[0], "\xe6\x97\xa5\xe2\x80\xa6");
}

static void test_control_and_invalid_bytes(void **state)
{
    (void)state;
    g_auto(GStrv) lines = ddm_watch_wrap("a\033[2Jb\nc\xff", 80, 3);
    assert_int_equal(g_strv_length(lines), 1);
    assert_null(strchr(lines[0], '\033'));
    assert_null(strchr(lines[0], '\n'));
    assert_true(g_utf8_validate(lines[0], -1, NULL));
    assert_true(g_str_has_prefix(lines[0], "a?[2Jb?c"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_note_at_80_columns),
        cmocka_unit_test(test_short_text_one_line),
        cmocka_unit_test(test_nothing),
        cmocka_unit_test(test_utf8_cut_by_cells),
        cmocka_unit_test(test_line_cap_ends_in_ellipsis),
        cmocka_unit_test(test_control_and_invalid_bytes),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
