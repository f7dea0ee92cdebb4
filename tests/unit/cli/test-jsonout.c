/* SPDX-License-Identifier: Apache-2.0
 *
 * The --json converter (cli/jsonout.c): snake_case keys and their
 * collisions, each view kind with units and nulls, the VM list with its
 * headline figures, views grouped per VM, watch events, command answers,
 * JSON blobs embedded as "data" (valid, invalid, too deep, too large) and
 * the "schema" member. Views are built by the real view store and
 * ddm_view_to_json, so the input is what the server sends.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <string.h>

#include "cli/jsonout.h"
#include "core/views/json_blob.h"
#include "core/views/views.h"
#include "core/wire/ctlproto.h"

static char *encode(JsonNode *node)
{
    gsize len = 0;
    char *s = ddm_ctl_encode(node, &len);
    if (len > 0 && s[len - 1] == '\n')
        s[len - 1] = '\0';
    return s;
}

static JsonNode *parse(const char *text)
{
    g_autoptr(JsonParser) p = json_parser_new();
    assert_true(json_parser_load_from_data(p, text, -1, NULL));
    return json_node_copy(json_parser_get_root(p));
}

static void assert_json(JsonNode *node, const char *want)
{
    g_autofree char *got = encode(node);
    if (strcmp(got, want) != 0)
        fail_msg("got  %s\nwant %s", got, want);
}

static void test_keys(void **state)
{
    static const struct {
        const char *name, *key;
    } cases[] = {
        {"debug port", "debug_port"}, {"CPU %", "cpu_percent"},   {"cpu", "cpu"},
        {"%", "percent"},             {"used%", "used_percent"}, {"heapSize", "heap_size"},
        {"HPIF", "hpif"},             {"vm ident", "vm_ident"},  {"  a  b  ", "a_b"},
        {"heap.summary", "heap_summary"}, {"user-id", "user_id"}, {"already_snake", "already_snake"},
        {"2nd", "_2nd"},              {"", "value"},              {"---", "value"},
        {"caf\xc3\xa9 au lait", "caf_au_lait"}, {"a/b (ms)", "a_b_ms"}, {"x2Y", "x2_y"},
    };
    (void)state;
    for (gsize i = 0; i < G_N_ELEMENTS(cases); i++) {
        g_autofree char *k = ddm_jq_key(cases[i].name);
        if (strcmp(k, cases[i].key) != 0)
            fail_msg("%s -> %s, want %s", cases[i].name, k, cases[i].key);
    }
    g_autofree char *k = ddm_jq_key(NULL);
    assert_string_equal(k, "value");
}

static void test_key_collisions(void **state)
{
    (void)state;
    const char *names[] = {"CPU %", "cpu percent", "cpu_percent", "x", "x_2", "X", "", "?"};
    g_auto(GStrv) keys = ddm_jq_keys(names, G_N_ELEMENTS(names));
    const char *want[] = {"cpu_percent", "cpu_percent_2", "cpu_percent_3", "x", "x_2", "x_3",
                          "value", "value_2"};
    assert_int_equal(g_strv_length(keys), G_N_ELEMENTS(want));
    for (gsize i = 0; i < G_N_ELEMENTS(want); i++)
        assert_string_equal(keys[i], want[i]);
    g_auto(GStrv) none = ddm_jq_keys(NULL, 0);
    assert_null(none[0]);
}

/* A table with units, a null, a double, a bool, a non-finite double and
 * two columns whose keys collide. */
static void test_table(void **state)
{
    (void)state;
    DdmViews *store = ddm_views_new();
    ddm_view *v = ddm_views_create(store, "threads", "emu:7", "threads", DDM_VIEW_TABLE, "Threads");
    static const ddm_column cols[] = {{"id", DDM_VAL_INT, NULL},     {"CPU %", DDM_VAL_DOUBLE, "%"},
                                      {"utime", DDM_VAL_INT, "ms"},  {"daemon", DDM_VAL_BOOL, NULL},
                                      {"name", DDM_VAL_STR, NULL},   {"cpu percent", DDM_VAL_INT, NULL}};
    assert_int_equal(ddm_view_set_columns(v, cols, G_N_ELEMENTS(cols)), 0);
    ddm_view_begin(v);
    ddm_view_row(v);
    ddm_view_cell_int(v, 1);
    ddm_view_cell_double(v, 12.5);
    ddm_view_cell_int(v, 340);
    ddm_view_cell_bool(v, 1);
    ddm_view_cell_str(v, "main");
    ddm_view_cell_int(v, 3);
    ddm_view_row(v);
    ddm_view_cell_int(v, 2);
    ddm_view_cell_double(v, 0.0 / 0.0); /* NaN: null */
    ddm_view_cell_str(v, NULL);
    ddm_view_cell_str(v, NULL);
    ddm_view_cell_str(v, NULL);
    ddm_view_cell_str(v, NULL);
    assert_int_equal(ddm_view_commit(v), 0);
    g_autoptr(JsonNode) in = ddm_view_to_json(v, FALSE);
    g_autoptr(JsonNode) out = ddm_jq_view(in, TRUE);
    assert_json(out,
                "{\"schema\":1,\"name\":\"threads\",\"vm\":\"emu:7\",\"owner\":\"threads\","
                "\"title\":\"Threads\",\"kind\":\"table\",\"version\":2,\"columns\":{"
                "\"id\":{\"name\":\"id\",\"type\":\"int\",\"unit\":null},"
                "\"cpu_percent\":{\"name\":\"CPU %\",\"type\":\"double\",\"unit\":\"%\"},"
                "\"utime\":{\"name\":\"utime\",\"type\":\"int\",\"unit\":\"ms\"},"
                "\"daemon\":{\"name\":\"daemon\",\"type\":\"bool\",\"unit\":null},"
                "\"name\":{\"name\":\"name\",\"type\":\"str\",\"unit\":null},"
                "\"cpu_percent_2\":{\"name\":\"cpu percent\",\"type\":\"int\",\"unit\":null}},"
                "\"rows\":[{\"id\":1,\"cpu_percent\":12.5,\"utime\":340,\"daemon\":true,"
                "\"name\":\"main\",\"cpu_percent_2\":3},"
                "{\"id\":2,\"cpu_percent\":null,\"utime\":null,\"daemon\":null,\"name\":null,"
                "\"cpu_percent_2\":null}]}");
    /* nested (in a snapshot): no schema of its own */
    g_autoptr(JsonNode) nested = ddm_jq_view(in, FALSE);
    assert_false(json_object_has_member(json_node_get_object(nested), "schema"));
    ddm_views_free(store);
}

static void test_record_and_blob(void **state)
{
    (void)state;
    DdmViews *store = ddm_views_new();
    ddm_view *r = ddm_views_create(store, "vminfo", "emu:7", "vminfo", DDM_VIEW_RECORD, "VM");
    ddm_view_begin(r);
    ddm_view_field_int(r, "pid", 7);
    ddm_view_field_str(r, "vm ident", "Dalvik");
    ddm_view_field_str(r, "jvm flags", NULL);
    ddm_view_field_double(r, "Heap %", 77.25);
    ddm_view_field_bool(r, "waiting", 0);
    ddm_view_field_str(r, "heap_percent", "clash");
    assert_int_equal(ddm_view_commit(r), 0);
    g_autoptr(JsonNode) rin = ddm_view_to_json(r, FALSE);
    g_autoptr(JsonNode) rout = ddm_jq_view(rin, TRUE);
    assert_json(rout, "{\"schema\":1,\"name\":\"vminfo\",\"vm\":\"emu:7\",\"owner\":\"vminfo\","
                      "\"title\":\"VM\",\"kind\":\"record\",\"version\":1,\"fields\":{\"pid\":7,"
                      "\"vm_ident\":\"Dalvik\",\"jvm_flags\":null,\"heap_percent\":77.25,"
                      "\"waiting\":false,\"heap_percent_2\":\"clash\"}}");

    ddm_view *b = ddm_views_create(store, "heap", NULL, "bitmap", DDM_VIEW_BLOB, "Bitmap");
    ddm_view_begin(b);
    ddm_view_blob(b, "image/png", "abc", 3);
    ddm_view_commit(b);
    g_autoptr(JsonNode) bin = ddm_view_to_json(b, TRUE);
    g_autoptr(JsonNode) bout = ddm_jq_view(bin, TRUE);
    assert_json(bout, "{\"schema\":1,\"name\":\"bitmap\",\"vm\":null,\"owner\":\"heap\","
                      "\"title\":\"Bitmap\",\"kind\":\"blob\",\"version\":1,"
                      "\"media_type\":\"image/png\",\"size_bytes\":3,\"data_base64\":\"YWJj\"}");
    /* written to a file (--out-dir): the path instead of the data */
    json_object_remove_member(json_node_get_object(bin), "data_base64");
    json_object_set_string_member(json_node_get_object(bin), "file", "/tmp/x.png");
    g_autoptr(JsonNode) fout = ddm_jq_view(bin, FALSE);
    assert_string_equal(ddm_json_get_string(json_node_get_object(fout), "file"), "/tmp/x.png");
    assert_false(json_object_has_member(json_node_get_object(fout), "data_base64"));

    /* a removed view's metadata: no columns or rows made up */
    g_autoptr(JsonNode) meta = parse("{\"name\":\"t\",\"vm\":null,\"owner\":\"o\",\"title\":\"T\","
                                     "\"kind\":\"table\",\"version\":3}");
    g_autoptr(JsonNode) mout = ddm_jq_view(meta, FALSE);
    assert_json(mout, "{\"name\":\"t\",\"vm\":null,\"owner\":\"o\",\"title\":\"T\",\"kind\":\"table\","
                      "\"version\":3}");
    /* no view: copied */
    g_autoptr(JsonNode) other = parse("[1,2]");
    g_autoptr(JsonNode) oout = ddm_jq_view(other, TRUE);
    assert_json(oout, "[1,2]");
    ddm_views_free(store);
}

/* The VM list as the daemon has it, and two VMs' headline views. */
static const char vms_json[] =
    "{\"name\":\"vms\",\"vm\":null,\"owner\":\"ddmon\",\"title\":\"Virtual machines\",\"kind\":"
    "\"table\",\"version\":4,\"columns\":[{\"name\":\"key\",\"type\":\"str\",\"unit\":null},"
    "{\"name\":\"pid\",\"type\":\"int\",\"unit\":null},{\"name\":\"app\",\"type\":\"str\",\"unit\":null},"
    "{\"name\":\"device\",\"type\":\"str\",\"unit\":null},"
    "{\"name\":\"debug port\",\"type\":\"int\",\"unit\":null},"
    "{\"name\":\"info\",\"type\":\"str\",\"unit\":null}],"
    "\"rows\":[[\"emu:7\",7,\"com.a\",\"emu\",8600,\"heap: 50% of 2.0 KiB, threads: 3\"],"
    "[\"emu:8\",8,\"com.b\",\"emu\",null,null]]}";

static const char heads_json[] =
    "[{\"name\":\"headline\",\"vm\":\"emu:7\",\"owner\":\"ddmon\",\"title\":\"Headline figures\","
    "\"kind\":\"record\",\"version\":2,\"fields\":["
    "{\"key\":\"heap_used_percent\",\"type\":\"double\",\"value\":50.0},"
    "{\"key\":\"heap_used_bytes\",\"type\":\"int\",\"value\":1024},"
    "{\"key\":\"threads_count\",\"type\":\"int\",\"value\":3},"
    "{\"key\":\"pid\",\"type\":\"int\",\"value\":99}]},"
    /* a plugin's own view named headline: not figures */
    "{\"name\":\"headline\",\"vm\":\"emu:8\",\"owner\":\"someplugin\",\"title\":\"x\","
    "\"kind\":\"record\",\"version\":1,\"fields\":[{\"key\":\"zzz\",\"type\":\"int\",\"value\":1}]}]";

static void test_vms_with_figures(void **state)
{
    (void)state;
    g_autoptr(JsonNode) vms = parse(vms_json);
    g_autoptr(JsonNode) heads = parse(heads_json);
    g_autoptr(JsonNode) out = ddm_jq_vms(vms, heads, TRUE);
    JsonObject *o = json_node_get_object(out);
    JsonArray *rows = json_object_get_array_member(o, "rows");
    assert_int_equal(json_array_get_length(rows), 2);
    g_autoptr(JsonNode) r0 = json_node_copy(json_array_get_element(rows, 0));
    /* the row's own pid wins over a figure of that name */
    assert_json(r0, "{\"key\":\"emu:7\",\"pid\":7,\"app\":\"com.a\",\"device\":\"emu\","
                    "\"debug_port\":8600,\"info\":\"heap: 50% of 2.0 KiB, threads: 3\","
                    "\"heap_used_percent\":50.0,\"heap_used_bytes\":1024,\"threads_count\":3}");
    g_autoptr(JsonNode) r1 = json_node_copy(json_array_get_element(rows, 1));
    assert_json(r1, "{\"key\":\"emu:8\",\"pid\":8,\"app\":\"com.b\",\"device\":\"emu\","
                    "\"debug_port\":null,\"info\":null}");
    /* no headline views at all */
    g_autoptr(JsonNode) bare = ddm_jq_vms(vms, NULL, TRUE);
    assert_int_equal(json_array_get_length(json_object_get_array_member(json_node_get_object(bare), "rows")), 2);
}

static void test_group(void **state)
{
    (void)state;
    g_autoptr(JsonNode) vms = parse(vms_json);
    g_autoptr(JsonNode) heads = parse(heads_json);
    g_autoptr(JsonNode) threads = parse(
        "{\"name\":\"threads\",\"vm\":\"emu:7\",\"owner\":\"threads\",\"title\":\"Threads\","
        "\"kind\":\"table\",\"version\":1,\"columns\":[{\"name\":\"cpu\",\"type\":\"double\","
        "\"unit\":\"%\"}],\"rows\":[[12.5],[null]]}");
    g_autoptr(JsonNode) orphan = parse("{\"name\":\"vminfo\",\"vm\":\"emu:9\",\"owner\":\"vminfo\","
                                       "\"title\":\"VM\",\"kind\":\"record\",\"version\":1,"
                                       "\"fields\":[]}");
    g_autoptr(GPtrArray) views = g_ptr_array_new();
    g_ptr_array_add(views, vms);
    g_ptr_array_add(views, threads);
    g_ptr_array_add(views, json_array_get_element(json_node_get_array(heads), 0));
    g_ptr_array_add(views, orphan);
    JsonObject *root = json_object_new();
    ddm_jq_group_views(root, vms, views);
    g_autoptr(JsonNode) doc = json_node_init_object(json_node_alloc(), root);
    json_object_unref(root);
    JsonObject *vmo = json_object_get_object_member(json_node_get_object(doc), "vms");
    assert_int_equal(json_object_get_size(vmo), 3);
    JsonObject *a = json_object_get_object_member(vmo, "emu:7");
    assert_int_equal(json_object_get_int_member(a, "pid"), 7);
    assert_string_equal(json_object_get_string_member(a, "app"), "com.a");
    assert_string_equal(json_object_get_string_member(a, "device"), "emu");
    assert_int_equal(json_object_get_int_member(a, "debug_port"), 8600);
    assert_true(json_object_get_double_member(a, "heap_used_percent") == 50.0);
    JsonObject *av = json_object_get_object_member(a, "views");
    assert_true(json_object_has_member(av, "threads"));
    assert_true(json_object_has_member(av, "headline"));
    JsonObject *t = json_object_get_object_member(av, "threads");
    assert_false(json_object_has_member(t, "schema"));
    JsonArray *trows = json_object_get_array_member(t, "rows");
    assert_true(json_object_get_double_member(json_array_get_object_element(trows, 0), "cpu") == 12.5);
    assert_true(json_object_get_null_member(json_array_get_object_element(trows, 1), "cpu"));
    /* a VM in the list without views, and one with views but no row */
    JsonObject *b = json_object_get_object_member(vmo, "emu:8");
    assert_int_equal(json_object_get_size(json_object_get_object_member(b, "views")), 0);
    JsonObject *c = json_object_get_object_member(vmo, "emu:9");
    assert_true(json_object_get_null_member(c, "pid"));
    assert_true(json_object_get_null_member(c, "app"));
    assert_true(json_object_get_null_member(c, "device"));
    assert_true(json_object_has_member(json_object_get_object_member(c, "views"), "vminfo"));
    JsonObject *g = json_object_get_object_member(root, "global");
    assert_int_equal(json_object_get_size(g), 1);
    assert_true(json_object_has_member(g, "vms"));
}

/* `ddmon view NAME --json` without --vm: only the VMs with that view
 * (a plain JVM has no heap.summary), each with its row and its figures
 * from the headline views fetched beside. */
static void test_group_named(void **state)
{
    (void)state;
    g_autoptr(JsonNode) vms = parse(vms_json);
    g_autoptr(JsonNode) heads = parse(heads_json);
    g_autoptr(JsonNode) threads = parse(
        "{\"name\":\"threads\",\"vm\":\"emu:7\",\"owner\":\"threads\",\"title\":\"Threads\","
        "\"kind\":\"table\",\"version\":1,\"columns\":[{\"name\":\"cpu\",\"type\":\"double\","
        "\"unit\":\"%\"}],\"rows\":[[12.5]]}");
    g_autoptr(GPtrArray) views = g_ptr_array_new();
    g_ptr_array_add(views, threads);
    JsonObject *root = json_object_new();
    ddm_jq_group_views_named(root, vms, views, heads);
    g_autoptr(JsonNode) doc = json_node_init_object(json_node_alloc(), root);
    json_object_unref(root);
    JsonObject *vmo = json_object_get_object_member(json_node_get_object(doc), "vms");
    /* emu:8 is in the VM list but has no threads view: left out */
    assert_int_equal(json_object_get_size(vmo), 1);
    JsonObject *a = json_object_get_object_member(vmo, "emu:7");
    assert_non_null(a);
    assert_int_equal(json_object_get_int_member(a, "pid"), 7);
    assert_true(json_object_get_double_member(a, "heap_used_percent") == 50.0);
    JsonObject *av = json_object_get_object_member(a, "views");
    assert_int_equal(json_object_get_size(av), 1); /* the headline is only figures here */
    assert_true(json_object_has_member(av, "threads"));
}

/* A "list" column (str, comma-separated names) is an array in --json. */
static void test_list_column(void **state)
{
    (void)state;
    DdmViews *store = ddm_views_new();
    ddm_view *v = ddm_views_create(store, "ddmon", NULL, "plugins", DDM_VIEW_TABLE, "Plugins");
    static const ddm_column cols[] = {{"name", DDM_VAL_STR, NULL}, {"chunks", DDM_VAL_STR, "list"}};
    assert_int_equal(ddm_view_set_columns(v, cols, G_N_ELEMENTS(cols)), 0);
    ddm_view_begin(v);
    ddm_view_row(v);
    ddm_view_cell_str(v, "alloc");
    ddm_view_cell_str(v, "REAL,REAQ");
    ddm_view_row(v);
    ddm_view_cell_str(v, "jvm");
    ddm_view_cell_str(v, NULL);
    assert_int_equal(ddm_view_commit(v), 0);
    g_autoptr(JsonNode) in = ddm_view_to_json(v, FALSE);
    g_autoptr(JsonNode) out = ddm_jq_view(in, FALSE);
    JsonArray *rows = json_object_get_array_member(json_node_get_object(out), "rows");
    g_autoptr(JsonNode) r0 = json_node_copy(json_array_get_element(rows, 0));
    assert_json(r0, "{\"name\":\"alloc\",\"chunks\":[\"REAL\",\"REAQ\"]}");
    g_autoptr(JsonNode) r1 = json_node_copy(json_array_get_element(rows, 1));
    assert_json(r1, "{\"name\":\"jvm\",\"chunks\":[]}");
    ddm_views_free(store);
}

static void test_views_list_event_answer(void **state)
{
    (void)state;
    g_autoptr(JsonNode) resp = parse(
        "{\"ok\":true,\"views\":[{\"name\":\"vms\",\"vm\":null,\"kind\":\"table\"},"
        "{\"name\":\"threads\",\"vm\":\"emu:7\",\"kind\":\"table\"}],"
        "\"vms\":[{\"key\":\"emu:7\",\"pid\":7,\"app\":\"com.a\",\"state\":\"ready\"}]}");
    g_autoptr(JsonNode) list = ddm_jq_views_list(resp);
    assert_json(list, "{\"schema\":1,\"vms\":{\"emu:7\":{\"key\":\"emu:7\",\"pid\":7,\"app\":\"com.a\","
                      "\"state\":\"ready\",\"views\":{\"threads\":{\"name\":\"threads\",\"vm\":"
                      "\"emu:7\",\"kind\":\"table\"}}}},\"global\":{\"vms\":{\"name\":\"vms\","
                      "\"vm\":null,\"kind\":\"table\"}}}");

    g_autoptr(JsonNode) ev = parse("{\"event\":\"changed\",\"view\":{\"name\":\"t\",\"vm\":\"emu:7\","
                                   "\"owner\":\"o\",\"title\":\"T\",\"kind\":\"table\",\"version\":2,"
                                   "\"columns\":[{\"name\":\"debug port\",\"type\":\"int\","
                                   "\"unit\":null}],\"rows\":[[8600]]}}");
    g_autoptr(JsonNode) eout = ddm_jq_event(ev);
    assert_json(eout, "{\"schema\":1,\"event\":\"changed\",\"vm\":\"emu:7\",\"name\":\"t\",\"view\":"
                      "{\"name\":\"t\",\"vm\":\"emu:7\",\"owner\":\"o\",\"title\":\"T\",\"kind\":"
                      "\"table\",\"version\":2,\"columns\":{\"debug_port\":{\"name\":\"debug port\","
                      "\"type\":\"int\",\"unit\":null}},\"rows\":[{\"debug_port\":8600}]}}");

    g_autoptr(JsonNode) ans = parse("{\"ok\":true,\"message\":\"done\",\"result\":{\"name\":\"gc\","
                                    "\"vm\":null,\"owner\":\"vminfo\",\"title\":\"GC\",\"kind\":"
                                    "\"record\",\"version\":1,\"fields\":[{\"key\":\"freed bytes\","
                                    "\"type\":\"int\",\"value\":4096}]}}");
    g_autoptr(JsonNode) aout = ddm_jq_command_answer(ans);
    assert_json(aout, "{\"schema\":1,\"ok\":true,\"message\":\"done\",\"result\":{\"name\":\"gc\","
                     "\"vm\":null,\"owner\":\"vminfo\",\"title\":\"GC\",\"kind\":\"record\","
                     "\"version\":1,\"fields\":{\"freed_bytes\":4096}}}");
}

/* A JSON blob view holding @len bytes of @data, in the server's form. */
static JsonNode *json_blob_view(DdmViews *store, const char *name, const char *media_type,
                                const char *data, gsize len)
{
    ddm_view *v = ddm_views_create(store, "p", "emu:7", name, DDM_VIEW_BLOB, "Tree");
    ddm_view_begin(v);
    assert_int_equal(ddm_view_blob(v, media_type, data, len), 0);
    assert_int_equal(ddm_view_commit(v), 0);
    return ddm_view_to_json(v, FALSE); /* unasked: a JSON blob's data comes anyway */
}

static const char *data_error(JsonNode *jq)
{
    JsonObject *o = json_node_get_object(jq);
    assert_true(json_object_has_member(o, "data"));
    assert_true(json_object_get_null_member(o, "data"));
    assert_false(json_object_has_member(o, "data_base64"));
    return json_object_get_string_member(o, "data_error");
}

/* An application/json blob is embedded parsed as "data" (a command's
 * result too); one that cannot be read gets "data": null and the reason. */
static void test_json_blob(void **state)
{
    (void)state;
    assert_true(ddm_json_blob_type("application/json"));
    assert_true(ddm_json_blob_type("Application/JSON; charset=utf-8"));
    assert_false(ddm_json_blob_type("application/jsonl"));
    assert_false(ddm_json_blob_type("text/plain"));
    assert_false(ddm_json_blob_type(NULL));

    DdmViews *store = ddm_views_new();
    static const char doc[] = "{\"schema\":1,\"root\":{\"class\":\"a\\\"b\",\"children\":[{\"class\":"
                              "\"c\",\"children\":[]}]},\"n\":1.5}";
    g_autoptr(JsonNode) in = json_blob_view(store, "tree", "application/json", doc, sizeof doc - 1);
    assert_non_null(ddm_json_get_string(json_node_get_object(in), "data_base64"));
    g_autoptr(JsonNode) out = ddm_jq_view(in, FALSE);
    assert_json(out, "{\"name\":\"tree\",\"vm\":\"emu:7\",\"owner\":\"p\",\"title\":\"Tree\",\"kind\":"
                     "\"blob\",\"version\":1,\"media_type\":\"application/json\",\"size_bytes\":85,"
                     "\"data\":{\"schema\":1,\"root\":{\"class\":\"a\\\"b\",\"children\":[{\"class\":"
                     "\"c\",\"children\":[]}]},\"n\":1.5}}");
    /* as a command's result */
    g_autoptr(JsonNode) ans = json_node_init_object(json_node_alloc(), json_object_new());
    json_object_set_boolean_member(json_node_get_object(ans), "ok", TRUE);
    json_object_set_member(json_node_get_object(ans), "result", json_node_copy(in));
    g_autoptr(JsonNode) aout = ddm_jq_command_answer(ans);
    JsonObject *res = json_object_get_object_member(json_node_get_object(aout), "result");
    assert_string_equal(json_object_get_string_member(
                            json_object_get_object_member(json_object_get_object_member(res, "data"), "root"),
                            "class"),
                        "a\"b");

    /* invalid: cut short, trailing garbage, not UTF-8, no value, no ':';
     * then nested too deep */
    static const char *const bad[] = {"{\"a\":", "{} x", "\"\xff\"", "[1,,2]", "nul", "{\"a\" 1}"};
    for (gsize i = 0; i < G_N_ELEMENTS(bad); i++) {
        g_autofree char *name = g_strdup_printf("bad%zu", i);
        g_autoptr(JsonNode) bin = json_blob_view(store, name, "application/json", bad[i], strlen(bad[i]));
        g_autoptr(JsonNode) bout = ddm_jq_view(bin, FALSE);
        const char *why = data_error(bout);
        if (why == NULL || strncmp(why, "not JSON", 8) != 0)
            fail_msg("%s: %s", bad[i], why ? why : "(no error)");
        g_autoptr(GError) err = NULL;
        assert_null(ddm_json_blob_of_view(json_node_get_object(bin), &err));
        assert_non_null(err);
    }
    GString *deep = g_string_new(NULL);
    for (guint i = 0; i <= DDM_JSON_BLOB_MAX_DEPTH; i++)
        g_string_append(deep, "[");
    for (guint i = 0; i <= DDM_JSON_BLOB_MAX_DEPTH; i++)
        g_string_append(deep, "]");
    g_autoptr(JsonNode) din = json_blob_view(store, "deep", "application/json", deep->str, deep->len);
    g_autoptr(JsonNode) dout = ddm_jq_view(din, FALSE);
    assert_non_null(strstr(data_error(dout), "nested deeper than the 2048 levels ddmon reads"));
    /* as deep as allowed: read */
    g_string_erase(deep, 0, 1);
    g_string_truncate(deep, deep->len - 1);
    g_autoptr(JsonNode) okin = json_blob_view(store, "deep2", "application/json", deep->str, deep->len);
    g_autoptr(JsonNode) okout = ddm_jq_view(okin, FALSE);
    assert_true(JSON_NODE_HOLDS_ARRAY(json_object_get_member(json_node_get_object(okout), "data")));
    g_string_free(deep, TRUE);

    /* oversized: the server sends no data past the cap, and the reason is said */
    gsize big = DDM_JSON_BLOB_MAX + 1;
    char *spaces = g_malloc(big);
    memset(spaces, ' ', big);
    spaces[0] = '1';
    DdmViews *big_store = ddm_views_new(); /* freed at once: 32 MiB */
    g_autoptr(JsonNode) bigin = json_blob_view(big_store, "big", "application/json", spaces, big);
    g_free(spaces);
    ddm_views_free(big_store);
    assert_false(json_object_has_member(json_node_get_object(bigin), "data_base64"));
    g_autoptr(JsonNode) bigout = ddm_jq_view(bigin, FALSE);
    assert_non_null(strstr(data_error(bigout), "33554433 bytes is larger than the 32 MiB"));
    /* ... nor a base64 string longer than the cap allows, whatever "size" says */
    g_autoptr(JsonNode) lie = parse("{\"name\":\"x\",\"vm\":null,\"owner\":\"o\",\"title\":\"X\","
                                    "\"kind\":\"blob\",\"version\":1,\"media_type\":\"application/json\","
                                    "\"size\":2,\"data_base64\":\"e30=\"}");
    g_autofree char *long_b64 = g_malloc((DDM_JSON_BLOB_MAX + 2) / 3 * 4 + 5);
    memset(long_b64, 'A', (DDM_JSON_BLOB_MAX + 2) / 3 * 4 + 4);
    long_b64[(DDM_JSON_BLOB_MAX + 2) / 3 * 4 + 4] = '\0';
    g_autoptr(JsonNode) lout = ddm_jq_view(lie, FALSE);
    assert_json(json_object_get_member(json_node_get_object(lout), "data"), "{}");
    json_object_set_string_member(json_node_get_object(lie), "data_base64", long_b64);
    g_autoptr(JsonNode) lout2 = ddm_jq_view(lie, FALSE);
    assert_non_null(strstr(data_error(lout2), "larger than the 32 MiB"));

    /* other blobs keep their base64 (with --out-dir), no "data" */
    g_autoptr(JsonNode) pin = json_blob_view(store, "png", "image/png", "{}", 2);
    assert_false(json_object_has_member(json_node_get_object(pin), "data_base64"));
    ddm_views_free(store);
}

/* Failure objects and {"ok":true} get the schema too, once, first. */
static void test_stamp(void **state)
{
    (void)state;
    g_autoptr(JsonNode) fail = ddm_ctl_failure_new(DDM_EXIT_NOT_FOUND, "no VM matches 'x'");
    json_node_seal(fail); /* as the server's answers: left alone */
    g_autoptr(JsonNode) s1 = ddm_jq_stamped(fail);
    assert_json(s1, "{\"schema\":1,\"ok\":false,\"error\":\"no VM matches 'x'\",\"code\":3,"
                    "\"kind\":\"not-found\"}");
    assert_false(json_object_has_member(json_node_get_object(fail), "schema"));
    g_autoptr(JsonNode) s2 = ddm_jq_stamped(s1);
    assert_ptr_equal(s2, s1); /* has one already */
    g_autoptr(JsonNode) arr = parse("[]");
    g_autoptr(JsonNode) s3 = ddm_jq_stamped(arr);
    assert_json(s3, "[]");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_keys),
        cmocka_unit_test(test_key_collisions),
        cmocka_unit_test(test_table),
        cmocka_unit_test(test_record_and_blob),
        cmocka_unit_test(test_vms_with_figures),
        cmocka_unit_test(test_group),
        cmocka_unit_test(test_group_named),
        cmocka_unit_test(test_list_column),
        cmocka_unit_test(test_views_list_event_answer),
        cmocka_unit_test(test_json_blob),
        cmocka_unit_test(test_stamp),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
