/* SPDX-License-Identifier: Apache-2.0
 *
 * The viewdebug plugin on the SDK's test kit: `ui VM windows|dump|theme|
 * capture` send the payloads DdmHandleViewDebug reads, turn the replies
 * into tables, files and (dump) a nested JSON document read back with
 * json-glib: escaping of odd names and values, typed values, depth; refuse VMs whose FEAT lacks view-hierarchy, show
 * a FAIL with the VM's message (code -2: not found), time out, reject bad
 * replies (broken indentation, a lying VULW count, a capture that is no
 * PNG) and leave no FILE.part behind on any failure.
 */
#include "build-config.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>
#include <json-glib/json-glib.h>
#include <ddmon/bytes.h>
#include <ddmon/testkit.h>

#include "rm-tree.h"
#include "viewdebug.h"
#include "vudecode.h" /* VD_MAX_DEPTH */

extern const ddm_plugin_desc ddm_plugin_descriptor;

static const char *const features[] = {"hprof-heap-dump", "view-hierarchy"};
static const char *const no_view_features[] = {"hprof-heap-dump"};

/* A 3x2 RGBA PNG. */
static const uint8_t png3x2[] = {
    0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0x00, 0x00, 0x00, 0x0d, 0x49, 0x48, 0x44, 0x52,
    0x00, 0x00, 0x00, 0x03, 0x00, 0x00, 0x00, 0x02, 0x08, 0x06, 0x00, 0x00, 0x00, 0x9d, 0x74, 0x66,
    0x1a, 0x00, 0x00, 0x00, 0x1b, 0x49, 0x44, 0x41, 0x54, 0x78, 0x9c, 0x63, 0x60, 0x60, 0xa8, 0xf8,
    0xaf, 0x01, 0xc4, 0x01, 0x40, 0xcc, 0xc0, 0x10, 0x00, 0xe4, 0x00, 0x71, 0x00, 0x10, 0x03, 0x00,
    0x79, 0xa5, 0x0a, 0xab, 0x0e, 0x99, 0x0f, 0x6a, 0x00, 0x00, 0x00, 0x00, 0x49, 0x45, 0x4e, 0x44,
    0xae, 0x42, 0x60, 0x82,
};

#define WINDOW "com.example.app/com.example.app.MainActivity/android.view.ViewRootImpl@5d2c6f1"

typedef struct fx {
    fake_host *fh;
    ddm_vm *vm;
    char dir[64];
} fx;

static fx *fx_new(const char *const *feats, size_t n)
{
    fx *f = calloc(1, sizeof *f);
    f->fh = fake_host_new();
    assert_int_equal(fake_host_load(f->fh, &ddm_plugin_descriptor), 0);
    f->vm = fake_host_add_vm(f->fh, &(ddm_vm_info){.pid = 4242, .ddm = 1, .app_name = "com.example.app",
                                                     .n_features = n, .features = feats});
    fake_host_vm_event(f->fh, f->vm, DDM_VM_READY);
    snprintf(f->dir, sizeof f->dir, "/tmp/test-viewdebug-XXXXXX");
    assert_non_null(mkdtemp(f->dir));
    fake_host_set_client_cwd(f->fh, f->dir);
    return f;
}

static void fx_free(fx *f)
{
    fake_host_free(f->fh);
    assert_int_equal(test_rm_tree(f->dir), 0);
    free(f);
}

static ddm_cmd *run(fx *f, int argc, const char *const *argv)
{
    ddm_cmd *cmd = fake_host_run_command(f->fh, argc, argv);
    assert_non_null(cmd);
    return cmd;
}

/* The one pending request of @type; its index. */
static size_t pending(fx *f, uint32_t type)
{
    int idx = fake_host_find_request(f->fh, f->vm, type, 0);
    while (idx >= 0 && fake_host_request(f->fh, (size_t)idx)->completed)
        idx = fake_host_find_request(f->fh, f->vm, type, (size_t)idx + 1);
    assert_true(idx >= 0);
    assert_int_equal(fake_host_n_pending(f->fh, f->vm, type), 1);
    return (size_t)idx;
}

static void expect_lstr(ddm_reader *r, const char *s)
{
    char *got = ddm_read_lstr(r);
    assert_non_null(got);
    assert_string_equal(got, s);
    free(got);
}

static int exists(const char *dir, const char *name)
{
    char p[256];
    snprintf(p, sizeof p, "%s/%s", dir, name);
    return access(p, F_OK) == 0;
}

static void test_registers(void **state)
{
    fx *f = fx_new(features, 2);
    (void)state;
    assert_true(fake_host_has_command(f->fh, "ui"));
    assert_true(fake_host_owns(f->fh, VD_CHUNK_VULW));
    assert_true(fake_host_owns(f->fh, VD_CHUNK_VURT));
    assert_true(fake_host_owns(f->fh, VD_CHUNK_VUOP));
    fx_free(f);
}

static void test_windows(void **state)
{
    fx *f = fx_new(features, 2);
    const char *argv[] = {"ui", "4242", "windows"};
    ddm_cmd *cmd = run(f, 3, argv);
    size_t idx = pending(f, VD_CHUNK_VULW);
    const fake_request *rq = fake_host_request(f->fh, idx);
    ddm_writer w;
    uint8_t *p;
    size_t len;
    ddm_view *res;
    (void)state;
    assert_int_equal(rq->len, 4); /* u4 1, as ddmlib */
    assert_false(fake_cmd_finished(cmd));
    ddm_writer_init(&w, 4096);
    ddm_write_u4(&w, 2);
    ddm_write_lstr(&w, WINDOW);
    ddm_write_lstr(&w, "PopupWindow:1a2b/android.view.ViewRootImpl@77");
    p = ddm_writer_take(&w, &len);
    fake_host_complete_chunk(f->fh, idx, VD_CHUNK_VULW, p, len);
    free(p);
    assert_true(fake_cmd_finished(cmd));
    assert_int_equal(fake_cmd_status(cmd), DDM_CMD_OK);
    assert_string_equal(fake_cmd_message(cmd), "pid 4242: 2 windows");
    res = fake_cmd_result(cmd);
    assert_int_equal(fake_view_n_rows(res), 2);
    assert_string_equal(fake_view_cell_str(res, 0, "window"), WINDOW);
    assert_int_equal(fake_view_cell_int(res, 1, "index"), 1);
    fx_free(f);
}

static void test_windows_huge_count(void **state)
{
    fx *f = fx_new(features, 2);
    const char *argv[] = {"ui", "4242", "windows"};
    ddm_cmd *cmd = run(f, 3, argv);
    static const uint8_t lie[] = {0xff, 0xff, 0xff, 0xff, 0, 0, 0, 1, 0, 'a'};
    (void)state;
    fake_host_complete_chunk(f->fh, pending(f, VD_CHUNK_VULW), VD_CHUNK_VULW, lie, sizeof lie);
    assert_int_equal(fake_cmd_status(cmd), DDM_CMD_FAILED);
    assert_non_null(strstr(fake_cmd_message(cmd), "4294967295 windows but carries only 6 bytes"));
    assert_true(fake_host_log_contains(f->fh, "VULW"));
    fx_free(f);
}

static void test_no_feature(void **state)
{
    fx *f = fx_new(no_view_features, 1);
    const char *argv[] = {"ui", "4242", "windows"};
    ddm_cmd *cmd = run(f, 3, argv);
    (void)state;
    assert_int_equal(fake_cmd_status(cmd), DDM_CMD_FAILED);
    assert_non_null(strstr(fake_cmd_message(cmd), "view-hierarchy"));
    assert_int_equal(fake_host_n_requests(f->fh), 0);
    fx_free(f);
}

static void test_usage(void **state)
{
    fx *f = fx_new(features, 2);
    const char *a1[] = {"ui", "4242"};
    const char *a2[] = {"ui", "4242", "dump"};
    const char *a3[] = {"ui", "4242", "dump", WINDOW, "--everything"};
    const char *a4[] = {"ui", "4242", "explode", "x"};
    const char *a5[] = {"ui", "999", "windows"};
    (void)state;
    assert_int_equal(fake_cmd_status(run(f, 2, a1)), DDM_CMD_USAGE);
    assert_int_equal(fake_cmd_status(run(f, 3, a2)), DDM_CMD_USAGE);
    assert_int_equal(fake_cmd_status(run(f, 5, a3)), DDM_CMD_USAGE);
    assert_int_equal(fake_cmd_status(run(f, 4, a4)), DDM_CMD_USAGE);
    assert_int_equal(fake_cmd_status(run(f, 3, a5)), DDM_CMD_NOT_FOUND);
    assert_int_equal(fake_host_n_requests(f->fh), 0);
    fx_free(f);
}

static const char dump_text[] =
    "com.android.internal.policy.DecorView@a1 mID=5,NO_ID layout:mLeft=1,0 layout:mTop=1,0 "
    "layout:mRight=4,1080 layout:mBottom=4,2400 \n"
    " android.widget.LinearLayout@b2 mID=10,id/content \n"
    "  android.widget.TextView@c3 mID=8,id/title mLeft=2,42 mTop=1,7 mRight=3,300 mBottom=2,99 "
    "text:mText=8,Hi, a=b! \n"
    " android.view.View@d4 \n"
    "DONE.\n";

/* The command's result: an application/json blob, read back with
 * json-glib (a reader independent of the plugin's writer). */
static JsonNode *result_doc(ddm_cmd *cmd)
{
    ddm_view *res = fake_cmd_result(cmd);
    const char *mt = NULL;
    size_t len = 0;
    const uint8_t *data;
    JsonParser *p = json_parser_new();
    GError *err = NULL;
    JsonNode *root;

    assert_non_null(res);
    assert_int_equal(fake_view_kind(res), DDM_VIEW_BLOB);
    data = fake_view_blob(res, &len, &mt);
    assert_non_null(data);
    assert_string_equal(mt, "application/json");
    assert_true(g_utf8_validate((const char *)data, (gssize)len, NULL));
    if (!json_parser_load_from_data(p, (const char *)data, (gssize)len, &err))
        fail_msg("not JSON: %s\n%.*s", err->message, (int)(len > 400 ? 400 : len), data);
    root = json_node_copy(json_parser_get_root(p));
    g_object_unref(p);
    return root;
}

static JsonObject *child(JsonObject *view, guint i)
{
    JsonArray *kids = json_object_get_array_member(view, "children");
    assert_true(i < json_array_get_length(kids));
    return json_array_get_object_element(kids, i);
}

static guint n_children(JsonObject *view)
{
    return json_array_get_length(json_object_get_array_member(view, "children"));
}

static void expect_view(JsonObject *v, const char *cls, const char *hash, guint kids)
{
    assert_string_equal(json_object_get_string_member(v, "class"), cls);
    assert_string_equal(json_object_get_string_member(v, "hash"), hash);
    assert_int_equal(n_children(v), kids);
}

static void expect_bounds(JsonObject *v, gint64 l, gint64 t, gint64 r, gint64 b)
{
    JsonObject *o = json_object_get_object_member(v, "bounds");
    assert_non_null(o);
    assert_int_equal(json_object_get_int_member(o, "left"), l);
    assert_int_equal(json_object_get_int_member(o, "top"), t);
    assert_int_equal(json_object_get_int_member(o, "right"), r);
    assert_int_equal(json_object_get_int_member(o, "bottom"), b);
}

static void test_dump(void **state)
{
    fx *f = fx_new(features, 2);
    const char *argv[] = {"ui", "4242", "dump", WINDOW};
    ddm_cmd *cmd = run(f, 4, argv);
    size_t idx = pending(f, VD_CHUNK_VURT);
    const fake_request *rq = fake_host_request(f->fh, idx);
    ddm_reader r;
    JsonNode *doc;
    JsonObject *o, *root, *kid;
    static const char plain[] = "a.Root@1 \n b.Kid@2 \n  c.Grand@3 \n b.Kid@4 \nDONE.\n";
    (void)state;
    ddm_reader_init(&r, rq->data, rq->len);
    assert_int_equal(ddm_read_u4(&r), 1);
    expect_lstr(&r, WINDOW);
    assert_int_equal(ddm_read_u4(&r), 0); /* skipChildren */
    assert_int_equal(ddm_read_u4(&r), 0); /* includeProperties */
    assert_int_equal(ddm_read_u4(&r), 0); /* useV2 */
    assert_true(ddm_reader_ok(&r));
    assert_int_equal(ddm_reader_remaining(&r), 0);
    fake_host_complete_chunk(f->fh, idx, VD_CHUNK_VURT, plain, sizeof plain - 1);
    assert_int_equal(fake_cmd_status(cmd), DDM_CMD_OK);
    doc = result_doc(cmd);
    o = json_node_get_object(doc);
    assert_int_equal(json_object_get_int_member(o, "schema"), 1);
    assert_string_equal(json_object_get_string_member(o, "window"), WINDOW);
    assert_int_equal(json_object_get_int_member(o, "views"), 4);
    assert_false(json_object_get_boolean_member(o, "properties"));
    root = json_object_get_object_member(o, "root");
    expect_view(root, "a.Root", "1", 2);
    kid = child(root, 0);
    expect_view(kid, "b.Kid", "2", 1);
    expect_view(child(kid, 0), "c.Grand", "3", 0);
    expect_view(child(root, 1), "b.Kid", "4", 0);
    /* without --properties: no id, no bounds, no properties member */
    assert_true(json_object_get_null_member(kid, "id"));
    assert_true(json_object_get_null_member(kid, "bounds"));
    assert_false(json_object_has_member(kid, "properties"));
    assert_non_null(strstr(fake_cmd_message(cmd), "4 views in " WINDOW));
    json_node_unref(doc);
    fx_free(f);
}

static void test_dump_properties(void **state)
{
    fx *f = fx_new(features, 2);
    const char *argv[] = {"ui", "4242", "dump", WINDOW, "--properties"};
    ddm_cmd *cmd = run(f, 5, argv);
    size_t idx = pending(f, VD_CHUNK_VURT);
    const fake_request *rq = fake_host_request(f->fh, idx);
    JsonNode *doc;
    JsonObject *root, *lin, *text, *props;
    (void)state;
    assert_int_equal(rq->data[rq->len - 5], 1); /* includeProperties */
    fake_host_complete_chunk(f->fh, idx, VD_CHUNK_VURT, dump_text, sizeof dump_text - 1);
    assert_int_equal(fake_cmd_status(cmd), DDM_CMD_OK);
    doc = result_doc(cmd);
    assert_true(json_object_get_boolean_member(json_node_get_object(doc), "properties"));
    root = json_object_get_object_member(json_node_get_object(doc), "root");
    expect_view(root, "com.android.internal.policy.DecorView", "a1", 2);
    assert_string_equal(json_object_get_string_member(root, "id"), "NO_ID");
    expect_bounds(root, 0, 0, 1080, 2400);
    props = json_object_get_object_member(root, "properties");
    assert_int_equal(json_object_get_size(props), 5);
    assert_string_equal(json_object_get_string_member(props, "mID"), "NO_ID");
    assert_int_equal(json_object_get_int_member(props, "layout:mRight"), 1080);
    lin = child(root, 0);
    expect_view(lin, "android.widget.LinearLayout", "b2", 1);
    assert_string_equal(json_object_get_string_member(lin, "id"), "id/content");
    assert_true(json_object_get_null_member(lin, "bounds")); /* none sent */
    text = child(lin, 0);
    expect_view(text, "android.widget.TextView", "c3", 0);
    assert_string_equal(json_object_get_string_member(text, "id"), "id/title");
    expect_bounds(text, 42, 7, 300, 99);
    props = json_object_get_object_member(text, "properties");
    assert_int_equal(json_object_get_size(props), 6);
    assert_string_equal(json_object_get_string_member(props, "text:mText"), "Hi, a=b!");
    /* a view without properties: an empty object, id null */
    assert_int_equal(json_object_get_size(json_object_get_object_member(child(root, 1), "properties")), 0);
    assert_true(json_object_get_null_member(child(root, 1), "id"));
    json_node_unref(doc);
    fx_free(f);
}

/* Odd class names and property values: escaped, typed by their form,
 * bytes that are not UTF-8 replaced; a repeated name keeps its first value. */
static void test_dump_json_escaping(void **state)
{
    fx *f = fx_new(features, 2);
    const char *argv[] = {"ui", "4242", "dump", "W\"in\\dow\x01/x", "--properties"};
    ddm_cmd *cmd = run(f, 5, argv);
    static const char odd[] =
        "a\"b\\c\x01\x1f\x7f\xff\xed\xa0\x80$\xc3\xa9@ff "
        "t=4,true f=5,false i=3,-12 z=3,007 d=3,1.5 big=19,9223372036854775808 "
        "min=20,-9223372036854775808 max=19,9223372036854775807 e=3,1e5 hex=4,0x1f "
        "empty=0, neg=1,- dot=2,1. q=6,\"x\\y\"z emoji=3,\xf0\x9f\x98\x80! t=5,false "
        "nul=4,null sp=3,a b \n"
        "DONE.\n";
    JsonNode *doc;
    JsonObject *root, *p;
    (void)state;
    fake_host_complete_chunk(f->fh, pending(f, VD_CHUNK_VURT), VD_CHUNK_VURT, odd, sizeof odd - 1);
    assert_int_equal(fake_cmd_status(cmd), DDM_CMD_OK);
    doc = result_doc(cmd);
    assert_string_equal(json_object_get_string_member(json_node_get_object(doc), "window"),
                        "W\"in\\dow\x01/x");
    root = json_object_get_object_member(json_node_get_object(doc), "root");
    /* control characters escaped (json-glib reads them back), DEL kept,
     * 0xff and a UTF-16 surrogate in CESU-8 each U+FFFD, é kept */
    assert_string_equal(json_object_get_string_member(root, "class"),
                        "a\"b\\c\x01\x1f\x7f\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd$\xc3\xa9");
    assert_string_equal(json_object_get_string_member(root, "hash"), "ff");
    p = json_object_get_object_member(root, "properties");
    assert_int_equal(json_object_get_size(p), 17); /* 18 sent, "t" twice */
    assert_true(json_object_get_boolean_member(p, "t")); /* the first of two */
    assert_false(json_object_get_boolean_member(p, "f"));
    assert_int_equal(json_node_get_value_type(json_object_get_member(p, "i")), G_TYPE_INT64);
    assert_int_equal(json_object_get_int_member(p, "i"), -12);
    assert_string_equal(json_object_get_string_member(p, "z"), "007");
    assert_int_equal(json_node_get_value_type(json_object_get_member(p, "d")), G_TYPE_DOUBLE);
    assert_true(json_object_get_double_member(p, "d") == 1.5);
    assert_string_equal(json_object_get_string_member(p, "big"), "9223372036854775808");
    assert_int_equal(json_object_get_int_member(p, "min"), INT64_MIN);
    assert_int_equal(json_object_get_int_member(p, "max"), INT64_MAX);
    assert_string_equal(json_object_get_string_member(p, "e"), "1e5");
    assert_string_equal(json_object_get_string_member(p, "hex"), "0x1f");
    assert_string_equal(json_object_get_string_member(p, "empty"), "");
    assert_string_equal(json_object_get_string_member(p, "neg"), "-");
    assert_string_equal(json_object_get_string_member(p, "dot"), "1.");
    assert_string_equal(json_object_get_string_member(p, "q"), "\"x\\y\"z");
    assert_string_equal(json_object_get_string_member(p, "emoji"), "\xf0\x9f\x98\x80!");
    assert_string_equal(json_object_get_string_member(p, "nul"), "null");
    assert_string_equal(json_object_get_string_member(p, "sp"), "a b");
    json_node_unref(doc);
    fx_free(f);
}

/* The deepest tree the decoder takes nests as deep in the JSON, each view
 * inside its parent's children; a wide level keeps its order. */
static void test_dump_json_depth(void **state)
{
    fx *f = fx_new(features, 2);
    const char *argv[] = {"ui", "4242", "dump", WINDOW};
    ddm_cmd *cmd = run(f, 4, argv);
    size_t cap = (size_t)VD_MAX_DEPTH * (VD_MAX_DEPTH + 32) + 64 * 32, n = 0;
    char *dump = malloc(cap);
    JsonNode *doc;
    JsonObject *v;
    unsigned depth = 0;
    (void)state;
    assert_non_null(dump);
    for (unsigned d = 0; d <= VD_MAX_DEPTH; d++) {
        memset(dump + n, ' ', d);
        n += d;
        n += (size_t)sprintf(dump + n, "v.D%u@%x \n", d, d + 1);
    }
    for (unsigned i = 0; i < 64; i++) /* 64 children of the root, after the chain */
        n += (size_t)sprintf(dump + n, " w.W%u@%x \n", i, i);
    n += (size_t)sprintf(dump + n, "DONE.\n");
    assert_true(n < cap);
    fake_host_complete_chunk(f->fh, pending(f, VD_CHUNK_VURT), VD_CHUNK_VURT, dump, n);
    free(dump);
    assert_int_equal(fake_cmd_status(cmd), DDM_CMD_OK);
    doc = result_doc(cmd);
    assert_int_equal(json_object_get_int_member(json_node_get_object(doc), "views"), VD_MAX_DEPTH + 1 + 64);
    v = json_object_get_object_member(json_node_get_object(doc), "root");
    assert_int_equal(n_children(v), 65);
    for (unsigned i = 0; i < 64; i++) {
        char cls[32];
        snprintf(cls, sizeof cls, "w.W%u", i);
        assert_string_equal(json_object_get_string_member(child(v, i + 1), "class"), cls);
    }
    for (;;) {
        char cls[32];
        snprintf(cls, sizeof cls, "v.D%u", depth);
        assert_string_equal(json_object_get_string_member(v, "class"), cls);
        if (n_children(v) == 0)
            break;
        v = child(v, 0);
        depth++;
    }
    assert_int_equal(depth, VD_MAX_DEPTH);
    json_node_unref(doc);
    fx_free(f);
}

static void test_dump_broken(void **state)
{
    fx *f = fx_new(features, 2);
    const char *argv[] = {"ui", "4242", "dump", WINDOW};
    ddm_cmd *cmd = run(f, 4, argv);
    static const char bad[] = "a.Root@1 \n   b.Kid@2 \nDONE.\n";
    static const uint8_t v2[] = {0, 1, 'I', 0, 0, 0, 0};
    (void)state;
    fake_host_complete_chunk(f->fh, pending(f, VD_CHUNK_VURT), VD_CHUNK_VURT, bad, sizeof bad - 1);
    assert_int_equal(fake_cmd_status(cmd), DDM_CMD_FAILED);
    assert_non_null(strstr(fake_cmd_message(cmd), "line 2: indentation jumps from 0 to 3 spaces"));
    assert_true(fake_host_log_count(f->fh, DDM_LOG_WARNING) >= 1);
    cmd = run(f, 4, argv);
    fake_host_complete_chunk(f->fh, pending(f, VD_CHUNK_VURT), VD_CHUNK_VURT, v2, sizeof v2);
    assert_non_null(strstr(fake_cmd_message(cmd), "encoded (v2)"));
    fx_free(f);
}

static void test_dump_fail_and_timeout(void **state)
{
    fx *f = fx_new(features, 2);
    const char *argv[] = {"ui", "4242", "dump", "no.such/window"};
    ddm_cmd *cmd = run(f, 4, argv);
    (void)state;
    fake_host_complete_fail(f->fh, pending(f, VD_CHUNK_VURT), (uint32_t)-2, "Invalid View Root");
    assert_int_equal(fake_cmd_status(cmd), DDM_CMD_NOT_FOUND);
    assert_string_equal(fake_cmd_message(cmd),
                        "pid 4242: the VM said: Invalid View Root (code -2: no such window or view)");
    cmd = run(f, 4, argv);
    fake_host_complete_status(f->fh, pending(f, VD_CHUNK_VURT), DDM_REPLY_TIMEOUT);
    assert_int_equal(fake_cmd_status(cmd), DDM_CMD_FAILED);
    assert_non_null(strstr(fake_cmd_message(cmd), "timeout"));
    /* the user's timeout reaches the request */
    fx_free(f);
}

static void test_timeout_option(void **state)
{
    fake_host *fh = fake_host_new();
    const char *argv[] = {"ui", "7", "windows"};
    ddm_vm *vm;
    (void)state;
    fake_host_set_config(fh, "viewdebug.timeout_ms", "2500");
    assert_int_equal(fake_host_load(fh, &ddm_plugin_descriptor), 0);
    vm = fake_host_add_vm(fh, &(ddm_vm_info){.pid = 7, .ddm = 1, .n_features = 2, .features = features});
    fake_host_vm_event(fh, vm, DDM_VM_READY);
    fake_host_run_command(fh, 3, argv);
    assert_int_equal(fake_host_request(fh, 0)->timeout_ms, 2500);
    fake_host_complete_status(fh, 0, DDM_REPLY_VM_GONE);
    fake_host_free(fh);
}

static void test_theme(void **state)
{
    fx *f = fx_new(features, 2);
    const char *argv[] = {"ui", "4242", "theme", WINDOW};
    ddm_cmd *cmd = run(f, 4, argv);
    size_t idx = pending(f, VD_CHUNK_VURT);
    const fake_request *rq = fake_host_request(f->fh, idx);
    ddm_reader r;
    static const char theme[] = "android:attr/colorPrimary\n#ff6200ee\nandroid:attr/textSize\n14.0sp\nDONE.\n";
    ddm_view *res;
    (void)state;
    ddm_reader_init(&r, rq->data, rq->len);
    assert_int_equal(ddm_read_u4(&r), 3);
    expect_lstr(&r, WINDOW);
    assert_int_equal(ddm_reader_remaining(&r), 0);
    fake_host_complete_chunk(f->fh, idx, VD_CHUNK_VURT, theme, sizeof theme - 1);
    assert_int_equal(fake_cmd_status(cmd), DDM_CMD_OK);
    res = fake_cmd_result(cmd);
    assert_int_equal(fake_view_n_rows(res), 2);
    assert_string_equal(fake_view_cell_str(res, 1, "attribute"), "android:attr/textSize");
    assert_string_equal(fake_view_cell_str(res, 1, "value"), "14.0sp");
    fx_free(f);
}

static void test_capture(void **state)
{
    fx *f = fx_new(features, 2);
    const char *argv[] = {"ui", "4242", "capture", WINDOW, "android.widget.Button@e5", "shot.png"};
    ddm_cmd *cmd = run(f, 6, argv);
    size_t idx = pending(f, VD_CHUNK_VUOP);
    const fake_request *rq = fake_host_request(f->fh, idx);
    ddm_reader r;
    ddm_view *res;
    char path[256];
    uint8_t back[sizeof png3x2 + 1];
    FILE *fp;
    (void)state;
    ddm_reader_init(&r, rq->data, rq->len);
    assert_int_equal(ddm_read_u4(&r), 1);
    expect_lstr(&r, WINDOW);
    expect_lstr(&r, "android.widget.Button@e5");
    assert_int_equal(ddm_reader_remaining(&r), 0);
    assert_true(exists(f->dir, "shot.png.part")); /* opened before the VM works */
    assert_false(exists(f->dir, "shot.png"));
    fake_host_complete_chunk(f->fh, idx, VD_CHUNK_VUOP, png3x2, sizeof png3x2);
    assert_int_equal(fake_cmd_status(cmd), DDM_CMD_OK);
    assert_false(exists(f->dir, "shot.png.part"));
    snprintf(path, sizeof path, "%s/shot.png", f->dir);
    fp = fopen(path, "rb");
    assert_non_null(fp);
    assert_int_equal(fread(back, 1, sizeof back, fp), sizeof png3x2);
    fclose(fp);
    assert_memory_equal(back, png3x2, sizeof png3x2);
    res = fake_cmd_result(cmd);
    assert_string_equal(fake_view_field_str(res, "file"), path);
    assert_int_equal(fake_view_field_int(res, "width"), 3);
    assert_int_equal(fake_view_field_int(res, "height"), 2);
    assert_int_equal(fake_view_field_int(res, "size_bytes"), sizeof png3x2);
    fx_free(f);
}

/* Replies that come after their request timed out are logged once per VM,
 * whatever their type and however many: a VM cannot flood the log. */
static void test_late_logged_once(void **state)
{
    static const uint8_t junk[8] = {0};
    fx *f = fx_new(NULL, 0);
    const uint32_t types[] = {VD_CHUNK_VULW, VD_CHUNK_VURT, VD_CHUNK_VUOP};
    (void)state;
    for (int round = 0; round < 20; round++)
        for (size_t i = 0; i < 3; i++)
            fake_host_deliver(f->fh, f->vm, types[i], DDM_ORIGIN_EVENT, junk, sizeof junk);
    const char *log = fake_host_log_text(f->fh);
    int n = 0;
    for (const char *p = log; (p = strstr(p, "after its request timed out")); p++)
        n++;
    assert_int_equal(n, 1);
    assert_non_null(strstr(log, "logged once"));
    fx_free(f);
}

static void test_capture_failures(void **state)
{
    fx *f = fx_new(features, 2);
    const char *argv[] = {"ui", "4242", "capture", WINDOW, "android.view.View@1", "x.png"};
    const char *bad_dir[] = {"ui", "4242", "capture", WINDOW, "android.view.View@1", "/nonexistent/dir/x.png"};
    const char *no_file[] = {"ui", "4242", "capture", WINDOW, "android.view.View@1"};
    ddm_cmd *cmd;
    uint8_t broken[sizeof png3x2];
    (void)state;
    /* the VM's FAIL */
    cmd = run(f, 6, argv);
    fake_host_complete_fail(f->fh, pending(f, VD_CHUNK_VUOP), (uint32_t)-2, "Invalid target view");
    assert_int_equal(fake_cmd_status(cmd), DDM_CMD_NOT_FOUND);
    assert_non_null(strstr(fake_cmd_message(cmd), "the VM said: Invalid target view (code -2"));
    assert_false(exists(f->dir, "x.png.part"));
    assert_false(exists(f->dir, "x.png"));
    /* not a PNG */
    cmd = run(f, 6, argv);
    fake_host_complete_chunk(f->fh, pending(f, VD_CHUNK_VUOP), VD_CHUNK_VUOP, "GIF89a", 6);
    assert_int_equal(fake_cmd_status(cmd), DDM_CMD_FAILED);
    assert_non_null(strstr(fake_cmd_message(cmd), "no PNG signature"));
    assert_false(exists(f->dir, "x.png.part"));
    assert_false(exists(f->dir, "x.png"));
    /* a PNG whose IHDR is damaged (its CRC no longer matches, its width is 0) */
    memcpy(broken, png3x2, sizeof broken);
    memset(broken + 16, 0, 4);
    cmd = run(f, 6, argv);
    fake_host_complete_chunk(f->fh, pending(f, VD_CHUNK_VUOP), VD_CHUNK_VUOP, broken, sizeof broken);
    assert_int_equal(fake_cmd_status(cmd), DDM_CMD_FAILED);
    assert_non_null(strstr(fake_cmd_message(cmd), "not a valid PNG"));
    assert_false(exists(f->dir, "x.png.part"));
    /* the VM goes away */
    cmd = run(f, 6, argv);
    fake_host_complete_status(f->fh, pending(f, VD_CHUNK_VUOP), DDM_REPLY_VM_GONE);
    assert_int_equal(fake_cmd_status(cmd), DDM_CMD_FAILED);
    assert_false(exists(f->dir, "x.png.part"));
    /* an unwritable place: refused before any request */
    cmd = run(f, 6, bad_dir);
    assert_int_equal(fake_cmd_status(cmd), DDM_CMD_FAILED);
    assert_non_null(strstr(fake_cmd_message(cmd), "cannot write /nonexistent/dir/x.png.part"));
    assert_int_equal(fake_host_n_pending(f->fh, f->vm, 0), 0);
    /* no FILE and no --out-dir */
    cmd = run(f, 5, no_file);
    assert_int_equal(fake_cmd_status(cmd), DDM_CMD_USAGE);
    /* no FILE, --out-dir: a name from the view */
    fake_host_set_client_out_dir(f->fh, f->dir);
    cmd = run(f, 5, no_file);
    fake_host_complete_chunk(f->fh, pending(f, VD_CHUNK_VUOP), VD_CHUNK_VUOP, png3x2, sizeof png3x2);
    assert_int_equal(fake_cmd_status(cmd), DDM_CMD_OK);
    assert_true(exists(f->dir, "android.view.View@1.png"));
    fx_free(f);
}

/* The VULW reply with our two windows. */
static void answer_windows(fx *f, size_t idx)
{
    ddm_writer w;
    uint8_t *p;
    size_t len;
    ddm_writer_init(&w, 4096);
    ddm_write_u4(&w, 2);
    ddm_write_lstr(&w, WINDOW);
    ddm_write_lstr(&w, "PopupWindow:1a2b/android.view.ViewRootImpl@77");
    p = ddm_writer_take(&w, &len);
    fake_host_complete_chunk(f->fh, idx, VD_CHUNK_VULW, p, len);
    free(p);
}

/* The window name the op's own request carries. */
static void expect_window_sent(fx *f, uint32_t type, const char *window)
{
    const fake_request *rq = fake_host_request(f->fh, pending(f, type));
    ddm_reader r;
    ddm_reader_init(&r, rq->data, rq->len);
    (void)ddm_read_u4(&r);
    expect_lstr(&r, window);
}

static void test_window_selectors(void **state)
{
    fx *f = fx_new(features, 2);
    const char *by_index[] = {"ui", "4242", "theme", "1"};
    const char *by_part[] = {"ui", "4242", "dump", "MainActivity"};
    const char *none[] = {"ui", "4242", "dump", "Settings"};
    const char *several[] = {"ui", "4242", "dump", "ViewRootImpl"};
    const char *far[] = {"ui", "4242", "dump", "7"};
    const char *cap[] = {"ui", "4242", "capture", "Nothing", "a.B@1", "c.png"};
    ddm_cmd *cmd;
    (void)state;
    /* an index: VULW, then VURT op 3 on that window */
    cmd = run(f, 4, by_index);
    assert_int_equal(fake_host_n_pending(f->fh, f->vm, VD_CHUNK_VURT), 0);
    answer_windows(f, pending(f, VD_CHUNK_VULW));
    assert_false(fake_cmd_finished(cmd));
    expect_window_sent(f, VD_CHUNK_VURT, "PopupWindow:1a2b/android.view.ViewRootImpl@77");
    fake_host_complete_chunk(f->fh, pending(f, VD_CHUNK_VURT), VD_CHUNK_VURT, "DONE.\n", 6);
    assert_int_equal(fake_cmd_status(cmd), DDM_CMD_OK);
    /* a part of one name */
    cmd = run(f, 4, by_part);
    answer_windows(f, pending(f, VD_CHUNK_VULW));
    expect_window_sent(f, VD_CHUNK_VURT, WINDOW);
    fake_host_complete_status(f->fh, pending(f, VD_CHUNK_VURT), DDM_REPLY_TIMEOUT);
    assert_int_equal(fake_cmd_status(cmd), DDM_CMD_FAILED);
    /* no match, several, an index too large: not found, nothing more sent */
    cmd = run(f, 4, none);
    answer_windows(f, pending(f, VD_CHUNK_VULW));
    assert_int_equal(fake_cmd_status(cmd), DDM_CMD_NOT_FOUND);
    assert_string_equal(fake_cmd_message(cmd),
                        "pid 4242 has 2 windows, and none is 'Settings' (see: ui 4242 windows)");
    cmd = run(f, 4, several);
    answer_windows(f, pending(f, VD_CHUNK_VULW));
    assert_int_equal(fake_cmd_status(cmd), DDM_CMD_NOT_FOUND);
    assert_non_null(strstr(fake_cmd_message(cmd), "is part of 2 window names"));
    cmd = run(f, 4, far);
    answer_windows(f, pending(f, VD_CHUNK_VULW));
    assert_int_equal(fake_cmd_status(cmd), DDM_CMD_NOT_FOUND);
    assert_int_equal(fake_host_n_pending(f->fh, f->vm, VD_CHUNK_VURT), 0);
    /* a capture whose selector fails leaves no .part */
    cmd = run(f, 6, cap);
    assert_true(exists(f->dir, "c.png.part"));
    answer_windows(f, pending(f, VD_CHUNK_VULW));
    assert_int_equal(fake_cmd_status(cmd), DDM_CMD_NOT_FOUND);
    assert_false(exists(f->dir, "c.png.part"));
    assert_int_equal(fake_host_n_pending(f->fh, f->vm, VD_CHUNK_VUOP), 0);
    fx_free(f);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_registers),
        cmocka_unit_test(test_windows),
        cmocka_unit_test(test_windows_huge_count),
        cmocka_unit_test(test_no_feature),
        cmocka_unit_test(test_usage),
        cmocka_unit_test(test_dump),
        cmocka_unit_test(test_dump_properties),
        cmocka_unit_test(test_dump_json_escaping),
        cmocka_unit_test(test_dump_json_depth),
        cmocka_unit_test(test_dump_broken),
        cmocka_unit_test(test_dump_fail_and_timeout),
        cmocka_unit_test(test_timeout_option),
        cmocka_unit_test(test_theme),
        cmocka_unit_test(test_capture),
        cmocka_unit_test(test_capture_failures),
        cmocka_unit_test(test_window_selectors),
        cmocka_unit_test(test_late_logged_once),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
