/* SPDX-License-Identifier: Apache-2.0
 *
 * Unit tests for the snapshot's per-VM commands (cli/snapshot_cmds.c,
 * --gc and --hprof) with a fake source: which VMs are asked (DDM-aware
 * and ready, once each, not after the cap), the command lines, what keeps
 * the snapshot waiting (a heap dump outlasts the max_ms cap, a GC does
 * not), the JSON members, the exit status, and a collector run whose cap
 * comes while a dump is in flight.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <string.h>

#include "cli/snapshot-private.h"
#include "core/views/views.h"

/* The fake source: remembers what was sent. */
static GPtrArray *sent; /* DdmSnapshotCall*, borrowed */

static void fake_send(DdmSnapshotCollector *col, DdmSnapshotCall *call)
{
    (void)col;
    g_ptr_array_add(sent, call);
}

static gboolean has_all(const char *name, gpointer ud)
{
    (void)name;
    (void)ud;
    return TRUE;
}

static gboolean has_gc_only(const char *name, gpointer ud)
{
    (void)ud;
    return strcmp(name, "gc") == 0;
}

static JsonNode *parse(const char *text)
{
    JsonNode *node = json_from_string(text, NULL);
    assert_non_null(node);
    return node;
}

/* A VM list: @rows as JSON rows of [key, ddm, state]. */
static void feed_vms(DdmSnapshotCollector *col, const char *rows, gint64 version)
{
    g_autofree char *text = g_strdup_printf(
        "{\"name\":\"vms\",\"kind\":\"table\",\"version\":%" G_GINT64_FORMAT ","
        "\"columns\":[{\"name\":\"key\",\"type\":\"str\"},{\"name\":\"ddm\",\"type\":\"bool\"},"
        "{\"name\":\"state\",\"type\":\"str\"}],\"rows\":%s}",
        version, rows);
    g_autoptr(JsonNode) vms = parse(text);
    ddm_snapshot_note_change(col, FALSE, NULL, "vms", version, vms);
}

static DdmSnapshotCmd *cmd_named(DdmSnapshotCollector *col, const char *name)
{
    for (guint i = 0; i < col->cmds->len; i++) {
        DdmSnapshotCmd *cmd = g_ptr_array_index(col->cmds, i);
        if (strcmp(cmd->kind->name, name) == 0)
            return cmd;
    }
    return NULL;
}

static DdmSnapshotCall *sent_call(const char *kind, const char *vm)
{
    for (guint i = 0; i < sent->len; i++) {
        DdmSnapshotCall *call = g_ptr_array_index(sent, i);
        if (strcmp(call->cmd->kind->name, kind) == 0 && strcmp(call->vm_key, vm) == 0)
            return call;
    }
    return NULL;
}

/* The collector's per-VM members as one JSON object. (transfer full) */
static JsonObject *cmds_json(DdmSnapshotCollector *col)
{
    g_autoptr(JsonBuilder) b = json_builder_new();
    json_builder_begin_object(b);
    ddm_snapshot_add_cmds_json(b, col);
    json_builder_end_object(b);
    g_autoptr(JsonNode) root = json_builder_get_root(b);
    return json_object_ref(json_node_get_object(root));
}

static int setup(void **state)
{
    (void)state;
    sent = g_ptr_array_new();
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    g_ptr_array_unref(sent);
    return 0;
}

static const char hprof_ok_result[] =
    "{\"name\":\"result\",\"kind\":\"record\",\"fields\":["
    "{\"key\":\"vm\",\"type\":\"str\",\"value\":\"127.0.0.1:8000\"},"
    "{\"key\":\"pid\",\"type\":\"int\",\"value\":42},"
    "{\"key\":\"via\",\"type\":\"str\",\"value\":\"stream\"},"
    "{\"key\":\"path\",\"type\":\"str\",\"value\":\"/d/app-42.hprof\"},"
    "{\"key\":\"bytes\",\"type\":\"int\",\"value\":3000000},"
    "{\"key\":\"sha256\",\"type\":\"str\",\"value\":\"ab12\"},"
    "{\"key\":\"seconds\",\"type\":\"double\",\"value\":1.5}]}";

static const char hprof_bad_result[] =
    "{\"name\":\"result\",\"kind\":\"record\",\"fields\":["
    "{\"key\":\"vm\",\"type\":\"str\",\"value\":\"127.0.0.1:8001\"},"
    "{\"key\":\"via\",\"type\":\"str\",\"value\":\"stream\"},"
    "{\"key\":\"path\",\"type\":\"str\",\"value\":\"/d/b-43.hprof\"},"
    "{\"key\":\"bytes\",\"type\":\"int\",\"value\":0},"
    "{\"key\":\"sha256\",\"type\":\"str\",\"value\":null},"
    "{\"key\":\"error\",\"type\":\"str\",\"value\":\"the VM said no\"}]}";

/* Only DDM-aware ready VMs are asked, each once per kind, with the kind's
 * command line; a VM that becomes ready later is asked then. */
static void test_who_is_asked(void **state)
{
    (void)state;
    DdmSnapshotOptions opt = {.wait_ms = 0, .settle_ms = 0, .max_ms = 1000,
                              .out_dir = "/d", .gc = TRUE, .hprof = TRUE};
    DdmSnapshotCollector col;
    ddm_snapshot_collector_init(&col, &opt);
    col.send = fake_send;
    assert_int_equal(col.cmds->len, 2);
    /* Not known yet: nothing asked, the snapshot waits. */
    feed_vms(&col, "[[\"127.0.0.1:8000\",true,\"ready\"],[\"127.0.0.1:8001\",true,\"connecting\"],"
                   "[\"127.0.0.1:8002\",false,\"ready\"]]", 1);
    ddm_snapshot_request_cmds(&col);
    assert_int_equal(sent->len, 0);
    assert_ptr_equal(ddm_snapshot_cmds_busy(&col, FALSE), &ddm_snapshot_cmd_gc);

    ddm_snapshot_cmds_available(&col, has_all, NULL, "");
    ddm_snapshot_request_cmds(&col);
    assert_int_equal(sent->len, 2);
    DdmSnapshotCall *gc = sent_call("gc", "127.0.0.1:8000");
    DdmSnapshotCall *hp = sent_call("hprof", "127.0.0.1:8000");
    assert_non_null(gc);
    assert_non_null(hp);
    assert_int_equal(g_strv_length(gc->argv), 2);
    assert_string_equal(gc->argv[0], "gc");
    assert_string_equal(gc->argv[1], "127.0.0.1:8000");
    assert_int_equal(g_strv_length(hp->argv), 3);
    assert_string_equal(hp->argv[0], "hprof");
    assert_string_equal(hp->argv[1], "--out-dir=/d");
    assert_string_equal(hp->argv[2], "127.0.0.1:8000");

    /* The same list again: nobody asked twice. */
    feed_vms(&col, "[[\"127.0.0.1:8000\",true,\"ready\"],[\"127.0.0.1:8001\",true,\"connecting\"]]", 2);
    ddm_snapshot_request_cmds(&col);
    assert_int_equal(sent->len, 2);
    /* 8001 is ready now. */
    feed_vms(&col, "[[\"127.0.0.1:8000\",true,\"ready\"],[\"127.0.0.1:8001\",true,\"ready\"]]", 3);
    ddm_snapshot_request_cmds(&col);
    assert_int_equal(sent->len, 4);
    assert_non_null(sent_call("hprof", "127.0.0.1:8001"));
    assert_int_equal(cmd_named(&col, "hprof")->pending, 2);
    assert_int_equal(cmd_named(&col, "gc")->pending, 2);

    /* After the cap no VM is asked any more. */
    col.capped = TRUE;
    feed_vms(&col, "[[\"127.0.0.1:8000\",true,\"ready\"],[\"127.0.0.1:8001\",true,\"ready\"],"
                   "[\"127.0.0.1:8003\",true,\"ready\"]]", 4);
    ddm_snapshot_request_cmds(&col);
    assert_int_equal(sent->len, 4);
    col.finished = TRUE;
    ddm_snapshot_collector_clear(&col);
}

/* In flight: a GC keeps the snapshot from settling until the cap; a heap
 * dump also after it. */
static void test_busy_and_cap(void **state)
{
    (void)state;
    DdmSnapshotOptions opt = {.max_ms = 1000, .out_dir = "/d", .gc = TRUE, .hprof = TRUE};
    DdmSnapshotCollector col;
    ddm_snapshot_collector_init(&col, &opt);
    col.send = fake_send;
    ddm_snapshot_cmds_available(&col, has_all, NULL, "");
    feed_vms(&col, "[[\"127.0.0.1:8000\",true,\"ready\"]]", 1);
    ddm_snapshot_request_cmds(&col);
    assert_int_equal(sent->len, 2);
    assert_ptr_equal(ddm_snapshot_cmds_busy(&col, FALSE), &ddm_snapshot_cmd_gc);
    assert_ptr_equal(ddm_snapshot_cmds_busy(&col, TRUE), &ddm_snapshot_cmd_hprof);

    ddm_snapshot_call_done(sent_call("hprof", "127.0.0.1:8000"), TRUE, "done", NULL);
    assert_ptr_equal(ddm_snapshot_cmds_busy(&col, FALSE), &ddm_snapshot_cmd_gc);
    assert_null(ddm_snapshot_cmds_busy(&col, TRUE));
    assert_true(col.long_done_us > 0);

    gint64 before = col.last_change_us;
    g_usleep(2000);
    ddm_snapshot_call_done(sent_call("gc", "127.0.0.1:8000"), TRUE, "GC done", NULL);
    assert_true(col.last_change_us > before); /* the quiet period starts again */
    assert_null(ddm_snapshot_cmds_busy(&col, FALSE));
    /* A second answer is ignored. */
    ddm_snapshot_call_done(sent_call("gc", "127.0.0.1:8000"), FALSE, "late", NULL);
    assert_int_equal(cmd_named(&col, "gc")->pending, 0);
    assert_true(sent_call("gc", "127.0.0.1:8000")->ok);
    ddm_snapshot_collector_clear(&col);
}

/* "hprof": keyed by VM, the result view's fields; "gc": the list; a failed
 * dump fails the snapshot, a failed GC does not. */
static void test_json_and_status(void **state)
{
    (void)state;
    DdmSnapshotOptions opt = {.max_ms = 1000, .out_dir = "/d", .gc = TRUE, .hprof = TRUE};
    DdmSnapshotCollector col;
    ddm_snapshot_collector_init(&col, &opt);
    col.send = fake_send;
    ddm_snapshot_cmds_available(&col, has_all, NULL, "");
    feed_vms(&col, "[[\"127.0.0.1:8000\",true,\"ready\"],[\"127.0.0.1:8001\",true,\"ready\"]]", 1);
    ddm_snapshot_request_cmds(&col);
    assert_int_equal(sent->len, 4);
    g_autoptr(JsonNode) good = parse(hprof_ok_result);
    g_autoptr(JsonNode) bad = parse(hprof_bad_result);
    ddm_snapshot_call_done(sent_call("hprof", "127.0.0.1:8000"), TRUE, "written", good);
    ddm_snapshot_call_done(sent_call("gc", "127.0.0.1:8000"), TRUE, NULL, NULL);
    ddm_snapshot_call_done(sent_call("gc", "127.0.0.1:8001"), FALSE, "no", NULL);
    /* 8001's dump unanswered so far */
    g_autoptr(JsonObject) o = cmds_json(&col);
    JsonObject *hprof = json_object_get_object_member(o, "hprof");
    assert_non_null(hprof);
    JsonObject *a = json_object_get_object_member(hprof, "127.0.0.1:8000");
    assert_true(json_object_get_boolean_member(a, "ok"));
    assert_string_equal(json_object_get_string_member(a, "path"), "/d/app-42.hprof");
    assert_string_equal(json_object_get_string_member(a, "sha256"), "ab12");
    assert_string_equal(json_object_get_string_member(a, "via"), "stream");
    assert_int_equal(json_object_get_int_member(a, "bytes"), 3000000);
    assert_true(json_object_get_double_member(a, "seconds") == 1.5);
    assert_false(json_object_has_member(a, "vm"));
    assert_false(json_object_has_member(a, "error"));
    JsonObject *b = json_object_get_object_member(hprof, "127.0.0.1:8001");
    assert_false(json_object_get_boolean_member(b, "ok"));
    assert_non_null(json_object_get_string_member(b, "error"));
    JsonArray *gc = json_object_get_array_member(o, "gc");
    assert_int_equal(json_array_get_length(gc), 2);
    JsonObject *g0 = json_array_get_object_element(gc, 0);
    assert_true(json_object_get_boolean_member(g0, "ok"));
    assert_string_equal(json_object_get_string_member(g0, "message"), "GC done");
    assert_false(json_object_get_boolean_member(json_array_get_object_element(gc, 1), "ok"));

    assert_int_equal(ddm_snapshot_cmds_status(&col), DDM_EXIT_FAILED);
    ddm_snapshot_call_done(sent_call("hprof", "127.0.0.1:8001"), FALSE, "heap dump failed", bad);
    g_autoptr(JsonObject) o2 = cmds_json(&col);
    b = json_object_get_object_member(json_object_get_object_member(o2, "hprof"),
                                      "127.0.0.1:8001");
    assert_string_equal(json_object_get_string_member(b, "error"), "the VM said no");
    assert_false(json_object_has_member(b, "sha256")); /* null fields left out */
    assert_int_equal(ddm_snapshot_cmds_status(&col), DDM_EXIT_FAILED);
    ddm_snapshot_collector_clear(&col);

    /* Every dump landed: a failed GC alone leaves the status alone. */
    g_ptr_array_set_size(sent, 0);
    ddm_snapshot_collector_init(&col, &opt);
    col.send = fake_send;
    ddm_snapshot_cmds_available(&col, has_all, NULL, "");
    feed_vms(&col, "[[\"127.0.0.1:8000\",true,\"ready\"]]", 1);
    ddm_snapshot_request_cmds(&col);
    ddm_snapshot_call_done(sent_call("hprof", "127.0.0.1:8000"), TRUE, "written", good);
    ddm_snapshot_call_done(sent_call("gc", "127.0.0.1:8000"), FALSE, "no", NULL);
    assert_int_equal(ddm_snapshot_cmds_status(&col), DDM_EXIT_OK);
    ddm_snapshot_collector_clear(&col);
}

/* No plugin provides "hprof": null, nobody asked, not waited for, no
 * failure. */
static void test_unavailable(void **state)
{
    (void)state;
    DdmSnapshotOptions opt = {.max_ms = 1000, .out_dir = "/d", .gc = TRUE, .hprof = TRUE};
    DdmSnapshotCollector col;
    ddm_snapshot_collector_init(&col, &opt);
    col.send = fake_send;
    ddm_snapshot_cmds_available(&col, has_gc_only, NULL, "");
    assert_int_equal(cmd_named(&col, "hprof")->available, 0);
    assert_int_equal(cmd_named(&col, "gc")->available, 1);
    feed_vms(&col, "[[\"127.0.0.1:8000\",true,\"ready\"]]", 1);
    ddm_snapshot_request_cmds(&col);
    assert_int_equal(sent->len, 1);
    assert_non_null(sent_call("gc", "127.0.0.1:8000"));
    ddm_snapshot_call_done(sent_call("gc", "127.0.0.1:8000"), TRUE, NULL, NULL);
    assert_null(ddm_snapshot_cmds_busy(&col, FALSE));
    g_autoptr(JsonObject) o = cmds_json(&col);
    assert_true(json_object_has_member(o, "hprof"));
    assert_true(json_object_get_null_member(o, "hprof"));
    assert_int_equal(ddm_snapshot_cmds_status(&col), DDM_EXIT_OK);
    ddm_snapshot_collector_clear(&col);

    /* Without the options, no members at all. */
    DdmSnapshotOptions none = {.max_ms = 1000};
    ddm_snapshot_collector_init(&col, &none);
    assert_int_equal(col.cmds->len, 0);
    g_autoptr(JsonObject) empty = cmds_json(&col);
    assert_int_equal(json_object_get_size(empty), 0);
    ddm_snapshot_collector_clear(&col);
}

/* The fake dump ends a while after the cap. */
static gboolean finish_dump(gpointer data)
{
    ddm_snapshot_call_done(data, TRUE, "written", NULL);
    return G_SOURCE_REMOVE;
}

static void send_slow_dump(DdmSnapshotCollector *col, DdmSnapshotCall *call)
{
    fake_send(col, call);
    if (strcmp(call->cmd->kind->name, "hprof") == 0)
        g_timeout_add(600, finish_dump, call); /* a GC is never answered */
}

/* A real run: max_ms comes while the dump streams; the snapshot waits
 * for it, but not for the GC that never answers. */
static void test_run_waits_for_dump_past_cap(void **state)
{
    (void)state;
    DdmSnapshotOptions opt = {.wait_ms = 0, .settle_ms = 50, .max_ms = 200, .out_dir = "/d",
                              .gc = TRUE, .hprof = TRUE};
    DdmSnapshotCollector col;
    ddm_snapshot_collector_init(&col, &opt);
    col.send = send_slow_dump;
    ddm_snapshot_cmds_available(&col, has_all, NULL, "");
    feed_vms(&col, "[[\"127.0.0.1:8000\",true,\"ready\"]]", 1);
    gint64 t0 = g_get_monotonic_time();
    ddm_snapshot_collector_run(&col);
    gint64 ms = (g_get_monotonic_time() - t0) / 1000;
    assert_true(ms >= 600);
    assert_true(ms < 5000);
    assert_true(col.capped);
    DdmSnapshotCall *dump = sent_call("hprof", "127.0.0.1:8000");
    assert_true(dump->answered && dump->ok);
    assert_false(sent_call("gc", "127.0.0.1:8000")->answered);
    /* The unanswered GC in the JSON, and no failure for it. */
    g_autoptr(JsonObject) o = cmds_json(&col);
    JsonObject *g0 = json_array_get_object_element(json_object_get_array_member(o, "gc"), 0);
    assert_false(json_object_get_boolean_member(g0, "ok"));
    assert_int_equal(ddm_snapshot_cmds_status(&col), DDM_EXIT_OK);
    ddm_snapshot_collector_clear(&col);
}

/* A source whose "settled" answer publishes the VM list (as
 * ddm_daemon_settled flushes a rebuild that was due). */
static gboolean settled_with_a_new_vm(DdmSnapshotCollector *col)
{
    feed_vms(col, "[[\"127.0.0.1:8000\",true,\"ready\"]]", 1);
    return TRUE;
}

/* The check that says settled may be what makes a VM known: its GC is asked
 * for and waited for, not skipped by a snapshot that ends at once. */
static void test_settled_check_publishes_a_vm(void **state)
{
    (void)state;
    DdmSnapshotOptions opt = {.max_ms = 1000, .gc = TRUE};
    DdmSnapshotCollector col;
    ddm_snapshot_collector_init(&col, &opt);
    col.send = fake_send;
    col.source_settled = settled_with_a_new_vm;
    ddm_snapshot_cmds_available(&col, has_all, NULL, "");
    ddm_snapshot_collector_check(&col);
    assert_int_equal(sent->len, 1);
    assert_non_null(sent_call("gc", "127.0.0.1:8000"));
    assert_false(col.settled); /* its GC is in flight */
    ddm_snapshot_call_done(sent_call("gc", "127.0.0.1:8000"), TRUE, "GC done", NULL);
    ddm_snapshot_collector_check(&col);
    assert_true(col.settled);
    ddm_snapshot_collector_clear(&col);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_who_is_asked, setup, teardown),
        cmocka_unit_test_setup_teardown(test_busy_and_cap, setup, teardown),
        cmocka_unit_test_setup_teardown(test_json_and_status, setup, teardown),
        cmocka_unit_test_setup_teardown(test_unavailable, setup, teardown),
        cmocka_unit_test_setup_teardown(test_run_waits_for_dump_past_cap, setup, teardown),
        cmocka_unit_test_setup_teardown(test_settled_check_publishes_a_vm, setup, teardown),
    };
    return cmocka_run_group_tests_name("cli-snapshot-cmds", tests, NULL, NULL);
}
