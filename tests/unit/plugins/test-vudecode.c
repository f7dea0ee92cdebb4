/* SPDX-License-Identifier: Apache-2.0
 *
 * Unit tests for plugins/viewdebug/vudecode.c: VULW window lists (a huge
 * count bounded by the bytes present), the VURT op 1 text tree
 * (indentation, properties with their UTF-16 lengths, bounds, caps and
 * the errors of broken input) and the op 3 theme dump. No host needed.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "plugins/viewdebug/vudecode.h"

static size_t put_u4(uint8_t *p, uint32_t v)
{
    p[0] = (uint8_t)(v >> 24);
    p[1] = (uint8_t)(v >> 16);
    p[2] = (uint8_t)(v >> 8);
    p[3] = (uint8_t)v;
    return 4;
}

/* An lstr of ASCII @s. */
static size_t put_lstr(uint8_t *p, const char *s)
{
    size_t n = strlen(s), i, o = put_u4(p, (uint32_t)n);
    for (i = 0; i < n; i++) {
        p[o++] = 0;
        p[o++] = (uint8_t)s[i];
    }
    return o;
}

static int parse_tree_str(const char *s, vd_tree *t, char *why, size_t n)
{
    return vd_parse_tree((const uint8_t *)s, strlen(s), t, why, n);
}

static void test_vulw_two(void **state)
{
    uint8_t buf[256];
    size_t n = 0;
    vd_windows w;
    char why[128] = "";
    (void)state;
    n += put_u4(buf, 2);
    n += put_lstr(buf + n, "com.example.app/com.example.app.MainActivity/android.view.ViewRootImpl@1a2b");
    n += put_lstr(buf + n, "Toast/android.view.ViewRootImpl@3c");
    assert_int_equal(vd_parse_vulw(buf, n, &w, why, sizeof why), 0);
    assert_int_equal(w.n, 2);
    assert_string_equal(w.names[0], "com.example.app/com.example.app.MainActivity/android.view.ViewRootImpl@1a2b");
    assert_string_equal(w.names[1], "Toast/android.view.ViewRootImpl@3c");
    vd_windows_clear(&w);
    assert_null(w.names);
    vd_windows_clear(&w); /* twice is fine */
}

static void test_vulw_empty_and_truncated(void **state)
{
    uint8_t buf[64];
    size_t n;
    vd_windows w;
    char why[128] = "";
    (void)state;
    put_u4(buf, 0);
    assert_int_equal(vd_parse_vulw(buf, 4, &w, why, sizeof why), 0);
    assert_int_equal(w.n, 0);
    vd_windows_clear(&w);
    assert_int_equal(vd_parse_vulw(buf, 3, &w, why, sizeof why), -1);
    assert_non_null(strstr(why, "no window count"));
    /* a name cut short */
    n = put_u4(buf, 1);
    n += put_lstr(buf + n, "abc");
    assert_int_equal(vd_parse_vulw(buf, n - 1, &w, why, sizeof why), -1);
    assert_non_null(strstr(why, "does not fit"));
    assert_null(w.names);
}

static void test_vulw_huge_count(void **state)
{
    uint8_t buf[16];
    vd_windows w;
    char why[128] = "";
    (void)state;
    /* 4 billion windows in 12 bytes: refused from the bytes present,
     * before any allocation (ASan would flag a 32 GiB calloc) */
    put_u4(buf, 0xFFFFFFFFu);
    put_u4(buf + 4, 0);
    put_u4(buf + 8, 0);
    assert_int_equal(vd_parse_vulw(buf, 12, &w, why, sizeof why), -1);
    assert_non_null(strstr(why, "4294967295 windows"));
    assert_non_null(strstr(why, "only 8 bytes"));
    assert_null(w.names);
}

static void test_vulw_over_cap(void **state)
{
    size_t count = VD_MAX_WINDOWS + 1, n = 4 + count * 4;
    uint8_t *buf = calloc(1, n);
    vd_windows w;
    char why[128] = "";
    (void)state;
    put_u4(buf, (uint32_t)count); /* that many empty names: fits, but over the cap */
    assert_int_equal(vd_parse_vulw(buf, n, &w, why, sizeof why), -1);
    assert_non_null(strstr(why, "more than 4096"));
    put_u4(buf, VD_MAX_WINDOWS);
    assert_int_equal(vd_parse_vulw(buf, n - 4, &w, why, sizeof why), 0);
    assert_int_equal(w.n, VD_MAX_WINDOWS);
    assert_string_equal(w.names[0], "");
    vd_windows_clear(&w);
    free(buf);
}

static const char plain_dump[] =
    "com.android.internal.policy.DecorView@a1 \n"
    " android.widget.LinearLayout@b2 \n"
    "  android.widget.FrameLayout@c3 \n"
    "   android.widget.TextView@d4 \n"
    "   android.widget.Button@e5 \n"
    "  android.view.View@f6 \n"
    " android.view.View@7 \n"
    "DONE.\n";

static void test_tree_structure(void **state)
{
    vd_tree t;
    char why[160] = "";
    (void)state;
    assert_int_equal(parse_tree_str(plain_dump, &t, why, sizeof why), 0);
    assert_int_equal(t.n_views, 7);
    assert_int_equal(t.lines, 8);
    assert_string_equal(t.views[0].cls, "com.android.internal.policy.DecorView");
    assert_string_equal(t.views[0].hash, "a1");
    assert_int_equal(t.views[0].parent, -1);
    assert_int_equal(t.views[0].children, 2);
    assert_int_equal(t.views[1].parent, 0);
    assert_int_equal(t.views[1].children, 2);
    assert_int_equal(t.views[2].children, 2);
    assert_int_equal(t.views[3].parent, 2);
    assert_int_equal(t.views[3].depth, 3);
    assert_int_equal(t.views[4].parent, 2);
    assert_int_equal(t.views[5].parent, 1);
    assert_int_equal(t.views[6].parent, 0);
    assert_int_equal(t.views[6].depth, 1);
    assert_null(t.views[3].id);
    assert_true(t.views[3].left == VD_NO_VALUE);
    assert_int_equal(t.views[3].n_props, 0);
    vd_tree_clear(&t);
    vd_tree_clear(&t);
}

static void test_tree_crlf_and_empty(void **state)
{
    vd_tree t;
    char why[160] = "";
    (void)state;
    assert_int_equal(parse_tree_str("a.B@1 \r\n c.D@2\r\nDONE.\r\n", &t, why, sizeof why), 0);
    assert_int_equal(t.n_views, 2);
    assert_string_equal(t.views[1].cls, "c.D");
    vd_tree_clear(&t);
    /* a root that is no ViewGroup: nothing but DONE. */
    assert_int_equal(parse_tree_str("DONE.\n", &t, why, sizeof why), 0);
    assert_int_equal(t.n_views, 0);
    vd_tree_clear(&t);
}

static void test_tree_properties(void **state)
{
    vd_tree t;
    char why[160] = "";
    /* values with spaces, '=' and ',' inside, a 4-byte character (two
     * UTF-16 units) and an empty value */
    static const char dump[] =
        "android.widget.LinearLayout@1f layout:mLeft=1,0 layout:mTop=2,63 layout:mRight=4,1080 "
        "layout:mBottom=4,2274 mID=12,id/content_x \n"
        " android.widget.TextView@2e mID=8,id/title text:mText=11,Hi, a=b c d "
        "emoji=3,\xF0\x9F\x98\x80x mLeft=2,42 mTop=1,7 mRight=3,300 mBottom=2,99 empty=0, \n"
        "DONE.\n";
    (void)state;
    assert_int_equal(parse_tree_str(dump, &t, why, sizeof why), 0);
    assert_int_equal(t.n_views, 2);
    assert_int_equal(t.views[0].left, 0);
    assert_int_equal(t.views[0].top, 63);
    assert_int_equal(t.views[0].right, 1080);
    assert_int_equal(t.views[0].bottom, 2274);
    assert_string_equal(t.views[0].id, "id/content_x");
    assert_int_equal(t.views[0].n_props, 5);
    assert_string_equal(t.views[1].id, "id/title");
    assert_string_equal(vd_view_prop(&t, &t.views[1], "text:mText"), "Hi, a=b c d");
    assert_string_equal(vd_view_prop(&t, &t.views[1], "emoji"), "\xF0\x9F\x98\x80x");
    assert_string_equal(vd_view_prop(&t, &t.views[1], "empty"), "");
    assert_int_equal(t.views[1].left, 42);
    assert_int_equal(t.views[1].top, 7);
    assert_int_equal(t.views[1].right, 300);
    assert_int_equal(t.views[1].bottom, 99);
    assert_null(vd_view_prop(&t, &t.views[1], "nothing"));
    vd_tree_clear(&t);
}

static void expect_tree_error(const char *dump, const char *needle)
{
    vd_tree t;
    char why[200] = "";
    assert_int_equal(parse_tree_str(dump, &t, why, sizeof why), -1);
    if (!strstr(why, needle))
        fail_msg("'%s' does not say '%s'", why, needle);
    assert_null(t.views);
    assert_null(t.text);
}

static void test_tree_errors(void **state)
{
    (void)state;
    expect_tree_error("a.B@1 \n   c.D@2 \nDONE.\n", "line 2: indentation jumps from 0 to 3");
    expect_tree_error(" a.B@1 \nDONE.\n", "line 1: the first view is indented");
    expect_tree_error("a.B@1 \nc.D@2 \nDONE.\n", "line 2: a second root");
    expect_tree_error("a.B@1 \n", "no DONE. line");
    expect_tree_error("a.B@1 \n c.D@2 ", "no DONE. line");
    expect_tree_error("a.B \nDONE.\n", "is not CLASS@HASH");
    expect_tree_error("a.B@xyz \nDONE.\n", "not a hexadecimal hash");
    expect_tree_error("a.B@1 \n\nDONE.\n", "line 2: empty line");
    expect_tree_error("a.B@1 mLeft=5,12 \nDONE.\n", "says 5 characters but the line ends");
    expect_tree_error("a.B@1 mLeft=1,12 \nDONE.\n", "no space after its 1 characters");
    expect_tree_error("a.B@1 mLeft \nDONE.\n", "has no '='");
    expect_tree_error("a.B@1 mLeft=x \nDONE.\n", "has no length");
    expect_tree_error("a.B@1 mLeft=2 \nDONE.\n", "',' expected");
    expect_tree_error("a.B@1 mLeft=99999999999999999999,1 \nDONE.\n", "huge length");
    {
        /* past the first 64 bytes (so not taken for a v2 dump): a NUL in a class name */
        static const char nul[] = "com.android.internal.policy.DecorView@a1 layout:mLeft=1,0 mTop=1,0 \n"
                                  " \0c.D@2 \nDONE.\n";
        vd_tree t;
        char why[160] = "";
        assert_int_equal(vd_parse_tree((const uint8_t *)nul, sizeof nul - 1, &t, why, sizeof why), -1);
        assert_non_null(strstr(why, "line 2: a NUL byte in CLASS@HASH"));
    }
    /* v2: binary, starts with a u2 property id */
    {
        static const uint8_t v2[] = {0, 1, 'I', 0, 0, 0, 0, 0, 2, 'I', 0, 0, 0, 0, 'M'};
        vd_tree t;
        char why[160] = "";
        assert_true(vd_dump_is_encoded(v2, sizeof v2));
        assert_int_equal(vd_parse_tree(v2, sizeof v2, &t, why, sizeof why), -1);
        assert_non_null(strstr(why, "encoded (v2)"));
    }
    assert_false(vd_dump_is_encoded((const uint8_t *)plain_dump, strlen(plain_dump)));
}

static void test_tree_depth_cap(void **state)
{
    /* a chain of VD_MAX_DEPTH + 2 views, each one space deeper */
    size_t levels = VD_MAX_DEPTH + 2, cap = levels * (levels + 16) + 16, o = 0, i, j;
    char *s = malloc(cap);
    vd_tree t;
    char why[160] = "";
    (void)state;
    for (i = 0; i < levels; i++) {
        for (j = 0; j < i; j++)
            s[o++] = ' ';
        o += (size_t)sprintf(s + o, "v.V@%zx \n", i + 1);
    }
    o += (size_t)sprintf(s + o, "DONE.\n");
    assert_int_equal(vd_parse_tree((uint8_t *)s, o, &t, why, sizeof why), -1);
    assert_non_null(strstr(why, "nested deeper than 512"));
    free(s);
}

static void test_tree_long_line(void **state)
{
    size_t n = VD_MAX_LINE + 100;
    char *s = malloc(n + 16);
    vd_tree t;
    char why[160] = "";
    (void)state;
    memset(s, 'a', n);
    memcpy(s, "a.B@1 ", 6);
    memcpy(s + n, "\nDONE.\n", 7);
    assert_int_equal(vd_parse_tree((uint8_t *)s, n + 7, &t, why, sizeof why), -1);
    assert_non_null(strstr(why, "line 1: longer than"));
    free(s);
}

/* Wide and deep: 100000 views parse in one pass (no quadratic walk). */
static void test_tree_many_views(void **state)
{
    size_t n = 100000, cap = n * 40 + 16, o = 0, i;
    char *s = malloc(cap);
    vd_tree t;
    char why[160] = "";
    (void)state;
    o += (size_t)sprintf(s, "root.R@0 \n");
    for (i = 1; i < n; i++)
        o += (size_t)sprintf(s + o, "%s" "w.W@%zx mLeft=1,%zu \n", (i % 2) ? " " : "  ", i, i % 10);
    o += (size_t)sprintf(s + o, "DONE.\n");
    assert_int_equal(vd_parse_tree((uint8_t *)s, o, &t, why, sizeof why), 0);
    assert_int_equal(t.n_views, n);
    assert_int_equal(t.views[0].children, n / 2);
    assert_int_equal(t.views[2].parent, 1);
    assert_int_equal(t.views[3].left, 3);
    vd_tree_clear(&t);
    free(s);
}

static void test_theme(void **state)
{
    static const char dump[] = "android:attr/colorPrimary\n#ff6200ee\n"
                               "android:attr/windowBackground\nandroid:drawable/screen_background\n"
                               "android:attr/textColor\nnull\nDONE.\n";
    vd_theme th;
    char why[160] = "";
    (void)state;
    assert_int_equal(vd_parse_theme((const uint8_t *)dump, strlen(dump), &th, why, sizeof why), 0);
    assert_int_equal(th.n, 3);
    assert_string_equal(th.names[0], "android:attr/colorPrimary");
    assert_string_equal(th.values[0], "#ff6200ee");
    assert_string_equal(th.values[2], "null");
    vd_theme_clear(&th);
    assert_int_equal(vd_parse_theme((const uint8_t *)"DONE.\n", 6, &th, why, sizeof why), 0);
    assert_int_equal(th.n, 0);
    vd_theme_clear(&th);
    assert_int_equal(vd_parse_theme((const uint8_t *)"a\nb\nc\n", 6, &th, why, sizeof why), -1);
    assert_non_null(strstr(why, "an attribute without a value"));
    assert_null(th.names);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_vulw_two),
        cmocka_unit_test(test_vulw_empty_and_truncated),
        cmocka_unit_test(test_vulw_huge_count),
        cmocka_unit_test(test_vulw_over_cap),
        cmocka_unit_test(test_tree_structure),
        cmocka_unit_test(test_tree_crlf_and_empty),
        cmocka_unit_test(test_tree_properties),
        cmocka_unit_test(test_tree_errors),
        cmocka_unit_test(test_tree_depth_cap),
        cmocka_unit_test(test_tree_long_line),
        cmocka_unit_test(test_tree_many_views),
        cmocka_unit_test(test_theme),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
