/* SPDX-License-Identifier: Apache-2.0
 *
 * Unit tests for core/views/jq_text.c: the VM list's jq document written
 * as text from the store must be, byte for byte, what the two-step way
 * gives: the server's JSON of the views (ddm_view_to_json, serialised and
 * parsed again, as between server and client), converted by the CLI's
 * ddm_jq_vms (cli/jsonout.c) and serialised by json-glib. Strings with
 * every escaped byte, UTF-8, nulls, doubles, figures that collide with
 * columns or each other, rows without figures, figures without rows, a
 * content changed after a first text, and random tables.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <float.h>
#include <math.h>
#include <string.h>

#include "cli/jsonout.h"
#include "core/views/jq_text.h"
#include "core/views/views.h"
#include "core/wire/ctlproto.h"
#include "tests/fuzz/json_number.h"

/* ------------------------------------------------------------ helpers */

/* @v's JSON as a client has it: serialised and parsed again. */
static JsonNode *as_client_sees(ddm_view *v)
{
    g_autoptr(JsonNode) n = ddm_view_to_json(v, FALSE);
    gsize len = 0;
    g_autofree char *line = ddm_ctl_encode(n, &len);
    g_autoptr(GError) error = NULL;
    JsonNode *back = ddm_ctl_parse_object(line, len - 1, &error);
    assert_non_null(back);
    return back;
}

/* The old way: ddm_jq_vms over the views' JSON, serialised (no newline). */
static char *two_step(ddm_view *table, GPtrArray *records)
{
    g_autoptr(JsonNode) t = as_client_sees(table);
    JsonArray *a = json_array_new();
    for (guint i = 0; records != NULL && i < records->len; i++)
        json_array_add_element(a, as_client_sees(g_ptr_array_index(records, i)));
    g_autoptr(JsonNode) heads = json_node_init_array(json_node_alloc(), a);
    json_array_unref(a);
    g_autoptr(JsonNode) doc = ddm_jq_vms(t, heads, TRUE);
    gsize len = 0;
    char *line = ddm_ctl_encode(doc, &len);
    line[len - 1] = '\0';
    return line;
}

static char *direct(ddm_view *table, GPtrArray *records)
{
    GString *s = g_string_new(NULL);
    ddm_jq_table_with_figures_text(s, table, records);
    return g_string_free(s, FALSE);
}

static void assert_same(ddm_view *table, GPtrArray *records)
{
    g_autofree char *want = two_step(table, records);
    g_autofree char *got = direct(table, records);
    if (strcmp(want, got) != 0) {
        gsize i = 0;
        while (want[i] != '\0' && want[i] == got[i])
            i++;
        print_error("differ at byte %" G_GSIZE_FORMAT ":\n want ...%.80s\n  got ...%.80s\n", i,
                    want + (i > 20 ? i - 20 : 0), got + (i > 20 ? i - 20 : 0));
        fail();
    }
    /* and json-glib reads it */
    g_autoptr(GError) error = NULL;
    g_autoptr(JsonNode) parsed = ddm_ctl_parse_object(got, strlen(got), &error);
    assert_non_null(parsed);
}

static const ddm_column vms_cols[] = {
    {"key", DDM_VAL_STR, NULL},   {"pid", DDM_VAL_INT, NULL},        {"app", DDM_VAL_STR, NULL},
    {"ddm", DDM_VAL_BOOL, NULL},  {"debug port", DDM_VAL_INT, NULL}, {"load", DDM_VAL_DOUBLE, "%"},
    {"info", DDM_VAL_STR, NULL},
};

static ddm_view *vms_view(DdmViews *store)
{
    ddm_view *v = ddm_views_create(store, "ddmon", NULL, "vms", DDM_VIEW_TABLE, "Virtual machines");
    assert_non_null(v);
    assert_int_equal(ddm_view_set_columns(v, vms_cols, G_N_ELEMENTS(vms_cols)), 0);
    return v;
}

static void row(ddm_view *v, const char *key, gint64 pid, const char *app, double load)
{
    assert_int_equal(ddm_view_row(v), 0);
    ddm_view_cell_str(v, key);
    if (pid)
        ddm_view_cell_int(v, pid);
    else
        ddm_view_cell_str(v, NULL);
    ddm_view_cell_str(v, app);
    ddm_view_cell_bool(v, pid % 2 == 0);
    ddm_view_cell_str(v, NULL);
    ddm_view_cell_double(v, load);
    ddm_view_cell_str(v, "heap: 50%, threads: 3");
}

static ddm_view *headline(DdmViews *store, const char *key)
{
    ddm_view *h = ddm_views_create(store, "ddmon", key, "headline", DDM_VIEW_RECORD, "Headline figures");
    assert_non_null(h);
    return h;
}

/* ------------------------------------------------------------- tests */

/* What ddm_ctl_encode writes for @n, without the newline. (transfer full) */
static char *encoded(JsonNode *n)
{
    gsize len = 0;
    char *line = ddm_ctl_encode(n, &len);
    line[len - 1] = '\0';
    return line;
}

static void test_strings_escaped_as_ctl_encode(void **state)
{
    (void)state;
    /* every byte 1..127 alone, then some UTF-8 */
    for (int c = 1; c < 0x80; c++) {
        char s[2] = {(char)c, 0};
        JsonNode *n = json_node_init_string(json_node_alloc(), s);
        g_autofree char *want = encoded(n);
        json_node_unref(n);
        g_autoptr(GString) got = g_string_new(NULL);
        ddm_json_text_string(got, s);
        assert_string_equal(got->str, want);
        for (const char *p = got->str; *p != '\0'; p++) /* RFC 8259: no raw byte below 0x20 */
            assert_true((unsigned char)*p >= 0x20);
    }
    const char *more[] = {"", "a\"b\\c", "\xc3\xa9t\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80",
                          "tab\there\nnl\x1f\x1e\x7f", "\xc2\x80\xc2\x9f", "ctl\x1fname\x1f"};
    for (gsize i = 0; i < G_N_ELEMENTS(more); i++) {
        JsonNode *n = json_node_init_string(json_node_alloc(), more[i]);
        g_autofree char *want = encoded(n);
        json_node_unref(n);
        g_autoptr(GString) got = g_string_new(NULL);
        ddm_json_text_string(got, more[i]);
        assert_string_equal(got->str, want);
    }
    /* json-glib 1.6 leaves 0x1f raw; both escape it */
    g_autoptr(GString) us = g_string_new(NULL);
    ddm_json_text_string(us, "ctl\x1fname");
    assert_string_equal(us->str, "\"ctl\\u001fname\"");
    JsonNode *n = json_node_init_string(json_node_alloc(), "\x1f\x1f");
    g_autofree char *line = ddm_ctl_encode(n, NULL);
    json_node_unref(n);
    assert_string_equal(line, "\"\\u001f\\u001f\"\n");
    g_autoptr(GString) null = g_string_new(NULL);
    ddm_json_text_string(null, NULL);
    assert_string_equal(null->str, "null");
}

static void test_doubles_as_json_glib(void **state)
{
    (void)state;
    /* Where json-glib writes valid JSON, the same bytes. */
    const double ds[] = {0.0, -0.0, 0.1, 1.0, 50.0, 123456789.125, 1.0 / 3, -2.5e-7, 1e300, 5e-324, DBL_MAX, 1e16};
    for (gsize i = 0; i < G_N_ELEMENTS(ds); i++) {
        JsonNode *n = json_node_init_double(json_node_alloc(), ds[i]);
        g_autofree char *want = json_to_string(n, FALSE);
        json_node_unref(n);
        g_autoptr(GString) got = g_string_new(NULL);
        ddm_json_text_double(got, ds[i]);
        assert_true(json_number_is_strict(want, strlen(want)));
        assert_string_equal(got->str, want);
    }
    /* Where it does not (an exponent and no '.': "1e+17.0"), valid JSON
     * that reads back as the same double. */
    const struct {
        double d;
        const char *text;
    } exact[] = {
        {3e17, "3e+17"},
        {1e17, "1e+17"},
        {-1e300, "-1.0000000000000001e+300"},
        {1e300, "1.0000000000000001e+300"},
        {-0.0, "-0.0"},
        {5e-324, "4.9406564584124654e-324"},
        {DBL_MAX, "1.7976931348623157e+308"},
        {-DBL_MAX, "-1.7976931348623157e+308"},
        {1e-7, "9.9999999999999995e-08"},
        {2e22, "2e+22"},
    };
    for (gsize i = 0; i < G_N_ELEMENTS(exact); i++) {
        g_autoptr(GString) got = g_string_new(NULL);
        ddm_json_text_double(got, exact[i].d);
        assert_string_equal(got->str, exact[i].text);
        assert_true(json_number_is_strict(got->str, got->len));
        assert_true(g_ascii_strtod(got->str, NULL) == exact[i].d);
        /* and ddm_ctl_encode (every answer, every --json print) writes the same */
        JsonNode *n = json_node_init_double(json_node_alloc(), exact[i].d);
        g_autofree char *line = encoded(n);
        json_node_unref(n);
        assert_string_equal(line, exact[i].text);
    }
    /* ddm_ctl_encode leaves strings that look like json-glib's form alone */
    JsonObject *o = json_object_new();
    json_object_set_string_member(o, "s", "1e+17.0 \"2E-5.0\" 3e9.0");
    json_object_set_double_member(o, "1e+17.0", 1e17);
    json_object_set_double_member(o, "d", 2.5e-300);
    json_object_set_double_member(o, "f", 50.0);
    JsonNode *on = json_node_init_object(json_node_alloc(), o);
    json_object_unref(o);
    g_autofree char *obj = encoded(on);
    json_node_unref(on);
    assert_string_equal(obj, "{\"s\":\"1e+17.0 \\\"2E-5.0\\\" 3e9.0\",\"1e+17.0\":1e+17,\"d\":2.5e-300,\"f\":50.0}");
    g_autoptr(GString) s = g_string_new(NULL);
    ddm_json_text_double(s, NAN);
    g_string_append_c(s, ' ');
    ddm_json_text_double(s, -INFINITY);
    assert_string_equal(s->str, "null null");
}

static void test_vms_with_figures(void **state)
{
    (void)state;
    DdmViews *store = ddm_views_new();
    ddm_view *v = vms_view(store);
    ddm_view_begin(v);
    row(v, "emu:7", 7, "com.a \"quoted\"\n", 12.5);
    row(v, "emu:8", 8, NULL, NAN);
    row(v, "emu:9", 0, "\xe2\x82\xac app\x01", 0.1);
    assert_int_equal(ddm_view_commit(v), 0);

    ddm_view *h7 = headline(store, "emu:7");
    ddm_view_begin(h7);
    ddm_view_field_double(h7, "heap_used_percent", 50.0);
    ddm_view_field_int(h7, "threads_count", 3);
    ddm_view_field_int(h7, "pid", 99);          /* the row's own pid wins */
    ddm_view_field_int(h7, "debug port", 1);    /* debug_port too */
    ddm_view_field_int(h7, "a b", 1);           /* a_b */
    ddm_view_field_int(h7, "a_b", 2);           /* a_b_2 */
    ddm_view_field_str(h7, "note", "x\ty");
    ddm_view_field_double(h7, "nan", NAN);
    ddm_view_field_int(h7, "min", G_MININT64);
    ddm_view_field_int(h7, "max", G_MAXINT64);
    ddm_view_field_int(h7, "neg", -7);
    assert_int_equal(ddm_view_commit(h7), 0);
    ddm_view *h9 = headline(store, "emu:9");    /* empty record */
    ddm_view_begin(h9);
    ddm_view_commit(h9);
    ddm_view *h5 = headline(store, "emu:5");    /* no such row */
    ddm_view_begin(h5);
    ddm_view_field_int(h5, "x", 1);
    ddm_view_commit(h5);

    g_autoptr(GPtrArray) heads = ddm_views_list_named(store, "headline");
    assert_int_equal(heads->len, 3);
    assert_same(v, heads);
    assert_same(v, NULL);

    /* the figures really are there, after the row's members */
    g_autofree char *got = direct(v, heads);
    assert_non_null(strstr(got, "\"info\":\"heap: 50%, threads: 3\",\"heap_used_percent\":50.0,"
                                "\"threads_count\":3,\"a_b\":1,\"a_b_2\":2,\"note\":\"x\\ty\",\"nan\":null,"
                                "\"min\":-9223372036854775808,\"max\":9223372036854775807,\"neg\":-7}"));

    /* a content changed after a first text: the next text is the new one */
    ddm_view_begin(h7);
    ddm_view_field_int(h7, "threads_count", 4);
    ddm_view_commit(h7);
    ddm_view_begin(v);
    row(v, "emu:7", 7, "com.a renamed", 1.0);
    ddm_view_commit(v);
    assert_same(v, heads);
    g_autofree char *again = direct(v, heads);
    assert_non_null(strstr(again, "\"app\":\"com.a renamed\""));
    assert_non_null(strstr(again, "\"threads_count\":4}"));
    assert_null(strstr(again, "emu:8"));
    ddm_views_free(store);
}

static void test_odd_tables(void **state)
{
    (void)state;
    DdmViews *store = ddm_views_new();
    /* no columns at all */
    ddm_view *none = ddm_views_create(store, "p\"lug", "vm\\1", "t", DDM_VIEW_TABLE, "T\\itle \"\xc3\xa9\"");
    assert_non_null(none);
    ddm_view_begin(none);
    ddm_view_commit(none);
    assert_same(none, NULL);
    /* columns whose keys collide, and no "key" column: no figures */
    static const ddm_column cols[] = {{"Key", DDM_VAL_INT, "B"}, {"key", DDM_VAL_STR, NULL},
                                      {"CPU %", DDM_VAL_DOUBLE, "%"}, {"9lives", DDM_VAL_BOOL, NULL}};
    ddm_view *t = ddm_views_create(store, "ddmon", NULL, "vms", DDM_VIEW_TABLE, "VMs");
    ddm_view_set_columns(t, cols, G_N_ELEMENTS(cols));
    ddm_view_begin(t);
    ddm_view_row(t);
    ddm_view_cell_int(t, 5);
    ddm_view_cell_str(t, "emu:1");
    ddm_view_cell_double(t, 99.5);
    ddm_view_cell_bool(t, 1);
    ddm_view_row(t);
    ddm_view_cell_str(t, NULL);
    ddm_view_cell_str(t, NULL);
    ddm_view_cell_str(t, NULL);
    ddm_view_cell_str(t, NULL);
    ddm_view_commit(t);
    ddm_view *h = headline(store, "emu:1");
    ddm_view_begin(h);
    ddm_view_field_int(h, "key", 1); /* the row has "key" (and "key_2") */
    ddm_view_field_int(h, "cpu %", 2);
    ddm_view_field_int(h, "fresh", 3);
    ddm_view_commit(h);
    g_autoptr(GPtrArray) heads = ddm_views_list_named(store, "headline");
    assert_same(t, heads);
    ddm_views_free(store);
}

/* Random strings (every byte; the store makes them valid UTF-8), numbers
 * and nulls in a vms table with a headline for most rows. */
static void test_random_tables(void **state)
{
    (void)state;
    GRand *rand = g_rand_new_with_seed(16);
    for (int round = 0; round < 40; round++) {
        DdmViews *store = ddm_views_new();
        ddm_view *v = vms_view(store);
        ddm_view_begin(v);
        guint nrows = (guint)g_rand_int_range(rand, 0, 30);
        for (guint r = 0; r < nrows; r++) {
            char key[32], app[24];
            g_snprintf(key, sizeof key, "emu:%u", r);
            gsize alen = (gsize)g_rand_int_range(rand, 0, (gint32)sizeof app);
            for (gsize i = 0; i < alen; i++)
                app[i] = (char)g_rand_int_range(rand, 1, 256);
            app[alen] = '\0';
            double load = g_rand_int_range(rand, -100000, 100000) / (double)g_rand_int_range(rand, 1, 1000);
            row(v, key, g_rand_int_range(rand, 0, 5) == 0 ? 0 : g_rand_int(rand), app, load);
            if (g_rand_int_range(rand, 0, 4) != 0) {
                ddm_view *h = headline(store, key);
                ddm_view_begin(h);
                ddm_view_field_int(h, "threads_count", g_rand_int(rand));
                ddm_view_field_double(h, "heap_used_percent", g_rand_double_range(rand, 0, 100));
                ddm_view_field_str(h, "app", app); /* the row's own */
                ddm_view_commit(h);
            }
        }
        ddm_view_commit(v);
        g_autoptr(GPtrArray) heads = ddm_views_list_named(store, "headline");
        assert_same(v, heads);
        ddm_views_free(store);
    }
    g_rand_free(rand);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_strings_escaped_as_ctl_encode),
        cmocka_unit_test(test_doubles_as_json_glib),
        cmocka_unit_test(test_vms_with_figures),
        cmocka_unit_test(test_odd_tables),
        cmocka_unit_test(test_random_tables),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
