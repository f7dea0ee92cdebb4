/* SPDX-License-Identifier: Apache-2.0
 *
 * Unit tests for core/views/render.c: the exact text of small tables (units,
 * nulls, booleans, doubles, wide characters), records and blobs (a JSON
 * blob as an outline), width
 * limits, hostile strings, and malformed JSON.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <string.h>
#include <time.h>

#include "core/views/views.h"

static char *render_view(const ddm_view *v, const DdmRenderOptions *opts)
{
    JsonNode *n = ddm_view_to_json(v, FALSE);
    char *text = ddm_view_json_to_text_full(n, opts);
    json_node_unref(n);
    return text;
}

static char *render_json(const char *json, const DdmRenderOptions *opts)
{
    JsonParser *p = json_parser_new();
    char *text;

    assert_true(json_parser_load_from_data(p, json, -1, NULL));
    text = ddm_view_json_to_text_full(json_parser_get_root(p), opts);
    g_object_unref(p);
    return text;
}

static void assert_text(char *got, const char *expect)
{
    if (strcmp(got, expect) != 0)
        fail_msg("rendered:\n%s\nexpected:\n%s", got, expect);
    g_free(got);
}

static const ddm_column demo_cols[] = {
    {"pid", DDM_VAL_INT, NULL},      {"name", DDM_VAL_STR, NULL}, {"size", DDM_VAL_INT, "B"},
    {"cpu", DDM_VAL_DOUBLE, "%"},    {"ddm", DDM_VAL_BOOL, NULL}, {"note", DDM_VAL_STR, ""},
    {"load", DDM_VAL_DOUBLE, NULL},
};

static ddm_view *demo_table(void)
{
    ddm_view *v = ddm_view_new_detached("core", "vms", DDM_VIEW_TABLE, "VMs");

    assert_int_equal(ddm_view_set_columns(v, demo_cols, G_N_ELEMENTS(demo_cols)), 0);
    assert_int_equal(ddm_view_begin(v), 0);
    assert_int_equal(ddm_view_row(v), 0);
    assert_int_equal(ddm_view_cell_int(v, 1234), 0);
    assert_int_equal(ddm_view_cell_str(v, "com.example.app"), 0);
    assert_int_equal(ddm_view_cell_int(v, 1048576), 0);
    assert_int_equal(ddm_view_cell_double(v, 12.34), 0);
    assert_int_equal(ddm_view_cell_bool(v, 1), 0);
    assert_int_equal(ddm_view_cell_str(v, NULL), 0);
    assert_int_equal(ddm_view_cell_int(v, 3), 0); /* int into double */
    assert_int_equal(ddm_view_row(v), 0);
    assert_int_equal(ddm_view_cell_int(v, 7), 0);
    assert_int_equal(ddm_view_cell_str(v, "\xe6\x97\xa5\xe6\x9c\xac\xe8\xaa\x9e"), 0); /* 日本語: 6 cells */
    assert_int_equal(ddm_view_cell_str(v, NULL), 0);                                /* null int */
    assert_int_equal(ddm_view_cell_double(v, -0.04), 0);                             /* not "-0.0" */
    assert_int_equal(ddm_view_cell_bool(v, 0), 0);
    assert_int_equal(ddm_view_cell_str(v, "x"), 0);
    assert_int_equal(ddm_view_cell_double(v, 0.126), 0);
    assert_int_equal(ddm_view_commit(v), 0);
    return v;
}

static void test_render_table(void **state)
{
    ddm_view *v = demo_table();

    assert_text(render_view(v, NULL),
                " PID  NAME             SIZE (B)  CPU (%)  DDM  NOTE  LOAD\n"
                "1234  com.example.app   1048576     12.3  yes  -     3.00\n"
                "   7  \xe6\x97\xa5\xe6\x9c\xac\xe8\xaa\x9e                  -      0.0  no   x     0.13\n");
    /* ddm_view_json_to_text is the default options */
    {
        JsonNode *n = ddm_view_to_json(v, FALSE);
        char *a = ddm_view_json_to_text(n);
        char *b = ddm_view_json_to_text_full(n, NULL);
        assert_string_equal(a, b);
        g_free(a);
        g_free(b);
        json_node_unref(n);
    }
    ddm_view_free_detached(v);
}

static void test_render_table_title_and_empty(void **state)
{
    ddm_view *v = ddm_view_new_detached("p", "t", DDM_VIEW_TABLE, "Threads");
    const ddm_column cols[] = {{"tid", DDM_VAL_INT, NULL}, {"name", DDM_VAL_STR, NULL}};
    DdmRenderOptions titled = {0, TRUE};

    assert_text(render_view(v, NULL), "(no columns)\n");
    assert_int_equal(ddm_view_set_columns(v, cols, 2), 0);
    assert_text(render_view(v, NULL), "TID  NAME\n");
    assert_text(render_view(v, &titled), "Threads\nTID  NAME\n");
    assert_text(render_json("{\"kind\":\"table\",\"title\":\"Threads\",\"vm\":\"127.0.0.1:8000\","
                            "\"columns\":[{\"name\":\"tid\",\"type\":\"int\",\"unit\":null}],\"rows\":[[1]]}",
                            &titled),
                "Threads (127.0.0.1:8000)\nTID\n  1\n");
    ddm_view_free_detached(v);
}

static void test_render_table_max_width(void **state)
{
    ddm_view *v = demo_table();
    DdmRenderOptions narrow = {48, FALSE};
    DdmRenderOptions tiny = {20, FALSE};
    DdmRenderOptions wide = {200, FALSE};
    char *text;

    /* NAME shrinks from 15 to 8 cells (its floor), then lines are cut */
    text = render_view(v, &narrow);
    assert_text(g_strdup(text),
                " PID  NAME      SIZE (B)  CPU (%)  DDM  NOTE  L\xe2\x80\xa6\n"
                "1234  com.exa\xe2\x80\xa6   1048576     12.3  yes  -     3\xe2\x80\xa6\n"
                "   7  \xe6\x97\xa5\xe6\x9c\xac\xe8\xaa\x9e           -      0.0  no   x     0\xe2\x80\xa6\n");
    g_free(text);
    text = render_view(v, &tiny);
    {
        char **lines = g_strsplit(text, "\n", -1);
        for (char **l = lines; *l; l++)
            assert_true(g_utf8_strlen(*l, -1) <= 20);
        g_strfreev(lines);
    }
    g_free(text);
    /* wide enough: as without a limit */
    {
        char *a = render_view(v, &wide);
        char *b = render_view(v, NULL);
        assert_string_equal(a, b);
        g_free(a);
        g_free(b);
    }
    ddm_view_free_detached(v);
}

static void test_render_record(void **state)
{
    ddm_view *v = ddm_view_new_detached("vminfo", "info", DDM_VIEW_RECORD, "VM");
    DdmRenderOptions narrow = {20, FALSE};

    assert_text(render_view(v, NULL), "(empty)\n");
    assert_int_equal(ddm_view_begin(v), 0);
    assert_int_equal(ddm_view_field_int(v, "pid", 42), 0);
    assert_int_equal(ddm_view_field_str(v, "app name", "com.example"), 0);
    assert_int_equal(ddm_view_field_double(v, "load", 0.5), 0);
    assert_int_equal(ddm_view_field_double(v, "uptime", 3), 0);
    assert_int_equal(ddm_view_field_bool(v, "debuggable", 1), 0);
    assert_int_equal(ddm_view_field_str(v, "abi", NULL), 0);
    assert_int_equal(ddm_view_field_str(v, "flags", "a\x1b[2Jb\r\n\xc2\x9b"), 0);
    assert_int_equal(ddm_view_commit(v), 0);
    assert_text(render_view(v, NULL),
                "pid:        42\n"
                "app name:   com.example\n"
                "load:       0.5\n"
                "uptime:     3\n"
                "debuggable: yes\n"
                "abi:        -\n"
                "flags:      a?[2Jb???\n");
    assert_text(render_view(v, &narrow),
                "pid:        42\n"
                "app name:   com.exa\xe2\x80\xa6\n"
                "load:       0.5\n"
                "uptime:     3\n"
                "debuggable: yes\n"
                "abi:        -\n"
                "flags:      a?[2Jb?\xe2\x80\xa6\n");
    ddm_view_free_detached(v);
}

static void test_render_blob(void **state)
{
    ddm_view *v = ddm_view_new_detached("screen", "shot", DDM_VIEW_BLOB, NULL);
    static const guint8 png[] = {0x89, 'P', 'N', 'G', 0, 1, 2};

    assert_text(render_view(v, NULL), "<application/octet-stream, 0 bytes>\n");
    assert_int_equal(ddm_view_begin(v), 0);
    assert_int_equal(ddm_view_blob(v, "image/png", png, sizeof png), 0);
    assert_int_equal(ddm_view_commit(v), 0);
    assert_text(render_view(v, NULL), "<image/png, 7 bytes>\n");
    assert_int_equal(ddm_view_begin(v), 0);
    assert_int_equal(ddm_view_blob(v, "text/plain", "x", 1), 0);
    assert_int_equal(ddm_view_commit(v), 0);
    assert_text(render_view(v, NULL), "<text/plain, 1 byte>\n");
    ddm_view_free_detached(v);
}

/* A JSON blob: its document as an outline (top members one a line; an
 * object's scalars on one line; lists as "- " items two spaces in),
 * control characters shown as '?'; one that cannot be read: the reason. */
static void test_render_json_blob(void **state)
{
    ddm_view *v = ddm_view_new_detached("ui", "tree", DDM_VIEW_BLOB, NULL);
    static const char doc[] =
        "{\"schema\":1,\"window\":\"w\\u001b[2J\",\"root\":{\"class\":\"a.Root\",\"hash\":\"1\","
        "\"bounds\":{\"left\":0,\"right\":10},\"id\":null,\"children\":[{\"class\":\"b.Kid\","
        "\"hash\":\"2\",\"ok\":true,\"x\":1.5,\"children\":[]},{\"class\":\"c\",\"hash\":\"3\","
        "\"children\":[{\"class\":\"d\",\"children\":[],\"tags\":[\"t1\",[]]}]}]},\"empty\":{}}";
    static const char bad[] = "{\"a\":";
    (void)state;
    assert_int_equal(ddm_view_begin(v), 0);
    assert_int_equal(ddm_view_blob(v, "application/json", doc, sizeof doc - 1), 0);
    assert_int_equal(ddm_view_commit(v), 0);
    assert_text(render_view(v, NULL), "schema: 1\n"
                                      "window: w?[2J\n"
                                      "root: class=a.Root hash=1 id=-\n"
                                      "  bounds: left=0 right=10\n"
                                      "  children:\n"
                                      "    - class=b.Kid hash=2 ok=yes x=1.5 children=[]\n"
                                      "    - class=c hash=3\n"
                                      "      children:\n"
                                      "        - class=d children=[]\n"
                                      "          tags:\n"
                                      "            - t1\n"
                                      "            - []\n"
                                      "empty: {}\n");
    assert_int_equal(ddm_view_begin(v), 0);
    assert_int_equal(ddm_view_blob(v, "application/json", bad, sizeof bad - 1), 0);
    assert_int_equal(ddm_view_commit(v), 0);
    {
        char *t = render_view(v, NULL);
        assert_non_null(strstr(t, "<application/json, 5 bytes: not JSON: "));
        g_free(t);
    }
    ddm_view_free_detached(v);
}

/* The outline stays linear in the document: indentation stops at 128
 * columns, and a document whose outline would pass 64 MiB (here 600 000
 * empty lists at the bottom of 70 levels, 44 bytes of text a byte) is cut,
 * saying so. */
static void test_render_json_blob_bounds(void **state)
{
    ddm_view *v = ddm_view_new_detached("ui", "big", DDM_VIEW_BLOB, NULL);
    GString *doc = g_string_new("{\"d\":");
    char *text, *line, *last;
    gsize n;
    (void)state;
    for (int i = 0; i < 70; i++)
        g_string_append(doc, "[");
    g_string_append(doc, "1");
    for (int i = 0; i < 600000; i++)
        g_string_append(doc, ",[]");
    for (int i = 0; i < 70; i++)
        g_string_append(doc, "]");
    g_string_append(doc, "}");
    assert_int_equal(ddm_view_begin(v), 0);
    assert_int_equal(ddm_view_blob(v, "application/json", doc->str, doc->len), 0);
    assert_int_equal(ddm_view_commit(v), 0);
    g_string_free(doc, TRUE);
    text = render_view(v, NULL);
    n = strlen(text);
    assert_true(n > ((gsize)64 << 20) && n < ((gsize)64 << 20) + 1024);
    /* the deepest items: 128 columns in, then "- " */
    line = strstr(text, "\n- 1\n");
    assert_null(line);
    line = g_strdup_printf("\n%*s- 1\n", 128, "");
    assert_non_null(strstr(text, line));
    g_free(line);
    last = strrchr(text, '\n');
    *last = '\0';
    last = strrchr(text, '\n');
    assert_string_equal(last + 1,
                        "(the outline stops at 64 MiB; --json or --out-dir give the whole document)");
    g_free(text);
    ddm_view_free_detached(v);
}

static void test_render_wide_and_combining(void **state)
{
    /* "é" as e + combining acute (1 cell), "中" (2 cells) */
    assert_text(render_json("{\"kind\":\"table\",\"columns\":[{\"name\":\"n\",\"type\":\"str\"},"
                            "{\"name\":\"v\",\"type\":\"int\"}],"
                            "\"rows\":[[\"e\\u0301\",1],[\"\\u4e2d\\u4e2d\",22],[\"abc\",333]]}",
                            NULL),
                "N       V\n"
                "e\xcc\x81       1\n"
                "\xe4\xb8\xad\xe4\xb8\xad   22\n"
                "abc   333\n");
}

static void test_render_doubles(void **state)
{
    assert_text(render_json("{\"kind\":\"table\",\"columns\":[{\"name\":\"x\",\"type\":\"double\",\"unit\":\"ms\"}],"
                            "\"rows\":[[1.005],[-2.5],[0],[1e300],[-0.001],[12345.678]]}",
                            NULL),
                "    X (ms)\n"
                "      1.00\n"
                "     -2.50\n"
                "      0.00\n"
                "1.000e+300\n"
                "      0.00\n"
                "  12345.68\n");
}

static void test_render_malformed(void **state)
{
    assert_text(ddm_view_json_to_text(NULL), "(not a view)\n");
    assert_text(render_json("[1,2]", NULL), "(not a view)\n");
    assert_text(render_json("{}", NULL), "(unknown view kind \"\")\n");
    assert_text(render_json("{\"kind\":\"pie\\u001b\"}", NULL), "(unknown view kind \"pie?\")\n");
    assert_text(render_json("{\"kind\":\"table\"}", NULL), "(no columns)\n");
    assert_text(render_json("{\"kind\":\"table\",\"columns\":5}", NULL), "(no columns)\n");
    /* short, long and non-array rows; odd column entries; values of the wrong type */
    assert_text(render_json("{\"kind\":\"table\",\"columns\":[{\"name\":\"a\",\"type\":\"int\"},7,"
                            "{\"type\":\"bool\"}],"
                            "\"rows\":[[1,2,3,4],\"x\",[],[\"s\",[1],{\"k\":true}],null]}",
                            NULL),
                "A  ?    ?\n"
                "1  2    3\n"
                "-  -    -\n"
                "-  -    -\n"
                "s  [1]  {\"k\":true}\n"
                "-  -    -\n");
    assert_text(render_json("{\"kind\":\"record\",\"fields\":[{\"key\":\"a\"},3,{\"value\":1}]}", NULL),
                "a: -\n"
                "?: -\n"
                "?: 1\n");
    assert_text(render_json("{\"kind\":\"blob\",\"size\":\"big\"}", NULL),
                "<application/octet-stream, 0 bytes>\n");
}

/* An int column of unit "epoch_ms" shows dates (local time: TZ=UTC here),
 * left-aligned as text, its header no unit; a value no date has stays a
 * number, null stays "-". */
static void test_render_epoch_ms(void **state)
{
    (void)state;
    g_setenv("TZ", "UTC", TRUE);
    tzset();
    assert_text(render_json("{\"kind\":\"table\",\"columns\":[{\"name\":\"heap\",\"type\":\"int\",\"unit\":null},"
                            "{\"name\":\"timestamp\",\"type\":\"int\",\"unit\":\"epoch_ms\"}],"
                            "\"rows\":[[1,1795792241818],[2,-5],[3,null],[4,0]]}",
                            NULL),
                "HEAP  TIMESTAMP\n"
                "   1  2026-11-27 15:10:41\n"
                "   2  -5\n"
                "   3  -\n"
                "   4  1970-01-01 00:00:00\n");
}

/* An int column of unit "addr" shows hex addresses, as the terminal UI
 * does (heap.map), left-aligned, its header no unit; null stays "-". */
static void test_render_addr(void **state)
{
    (void)state;
    assert_text(render_json("{\"kind\":\"table\",\"columns\":[{\"name\":\"heap\",\"type\":\"int\",\"unit\":null},"
                            "{\"name\":\"addr\",\"type\":\"int\",\"unit\":\"addr\"},"
                            "{\"name\":\"length\",\"type\":\"int\",\"unit\":\"B\"}],"
                            "\"rows\":[[1,385875968,3053],[1,null,8]]}",
                            NULL),
                "HEAP  ADDR        LENGTH (B)\n"
                "   1  0x17000000        3053\n"
                "   1  -                    8\n");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_render_table),
        cmocka_unit_test(test_render_table_title_and_empty),
        cmocka_unit_test(test_render_table_max_width),
        cmocka_unit_test(test_render_record),
        cmocka_unit_test(test_render_blob),
        cmocka_unit_test(test_render_json_blob),
        cmocka_unit_test(test_render_json_blob_bounds),
        cmocka_unit_test(test_render_wide_and_combining),
        cmocka_unit_test(test_render_doubles),
        cmocka_unit_test(test_render_epoch_ms),
        cmocka_unit_test(test_render_addr),
        cmocka_unit_test(test_render_malformed),
    };
    return cmocka_run_group_tests_name("render", tests, NULL, NULL);
}
