/* SPDX-License-Identifier: Apache-2.0
 *
 * The dashboard's history of records (web/history.c) on a real view
 * store: what is sampled (records of a VM, numeric fields), the rate limit,
 * the caps on fields and views, and the history going with the VM. Also
 * view_json.c's size check that spares the stream building a huge JSON
 * document's event (ddm_web_view_json_over).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <string.h>

#include "web/history.h"
#include "web/view_json.h"

static void commit_record(ddm_view *v, int n_fields, gint64 value)
{
    assert_int_equal(ddm_view_begin(v), 0);
    for (int i = 0; i < n_fields; i++) {
        g_autofree char *key = g_strdup_printf("f%02d_bytes", i);
        assert_int_equal(ddm_view_field_int(v, key, value + i), 0);
    }
    assert_int_equal(ddm_view_field_str(v, "label", "text is not sampled"), 0);
    assert_int_equal(ddm_view_commit(v), 0);
}

static JsonObject *fields_of(JsonNode *n)
{
    return json_object_get_object_member(json_node_get_object(n), "fields");
}

static void test_samples(void **state)
{
    (void)state;
    DdmViews *views = ddm_views_new();
    DdmWebHistory *h = ddm_web_history_new(views);
    ddm_view *rec = ddm_views_create(views, "p", "vm1", "summary", DDM_VIEW_RECORD, NULL);
    ddm_view *global = ddm_views_create(views, "p", NULL, "global", DDM_VIEW_RECORD, NULL);
    ddm_view *table = ddm_views_create(views, "p", "vm1", "rows", DDM_VIEW_TABLE, NULL);
    assert_null(ddm_web_history_json(h, "vm1", "summary")); /* added, never committed */

    commit_record(rec, 2, 100);
    commit_record(rec, 2, 200); /* within a second: not sampled */
    commit_record(global, 1, 1);
    assert_int_equal(ddm_view_begin(table), 0);
    assert_int_equal(ddm_view_commit(table), 0);

    g_autoptr(JsonNode) n = ddm_web_history_json(h, "vm1", "summary");
    assert_non_null(n);
    JsonObject *o = json_node_get_object(n);
    assert_int_equal(json_object_get_int_member(o, "schema"), 1);
    assert_string_equal(json_object_get_string_member(o, "vm"), "vm1");
    assert_int_equal(json_array_get_length(json_object_get_array_member(o, "t")), 1);
    JsonObject *f = fields_of(n);
    assert_int_equal(json_object_get_size(f), 2); /* the text field is not there */
    JsonArray *a = json_object_get_array_member(f, "f01_bytes");
    assert_int_equal(json_array_get_length(a), 1);
    assert_int_equal(json_array_get_int_element(a, 0), 101);
    assert_null(ddm_web_history_json(h, "vm1", "rows"));   /* a table */
    assert_null(ddm_web_history_json(h, "", "global"));    /* no VM */
    assert_null(ddm_web_history_json(h, "vm2", "summary"));

    /* The VM goes: its history goes. */
    ddm_views_destroy_vm(views, "vm1");
    assert_null(ddm_web_history_json(h, "vm1", "summary"));
    ddm_web_history_free(h);
    ddm_views_free(views);
}

static void test_caps(void **state)
{
    (void)state;
    DdmViews *views = ddm_views_new();
    DdmWebHistory *h = ddm_web_history_new(views);
    ddm_view *wide = ddm_views_create(views, "p", "vm1", "wide", DDM_VIEW_RECORD, NULL);
    commit_record(wide, DDM_WEB_HISTORY_MAX_FIELDS + 5, 0);
    g_autoptr(JsonNode) n = ddm_web_history_json(h, "vm1", "wide");
    assert_int_equal(json_object_get_size(fields_of(n)), DDM_WEB_HISTORY_MAX_FIELDS);

    for (int i = 1; i < DDM_WEB_HISTORY_MAX_VIEWS + 10; i++) {
        g_autofree char *vm = g_strdup_printf("vm-%d", i);
        commit_record(ddm_views_create(views, "p", vm, "r", DDM_VIEW_RECORD, NULL), 1, i);
    }
    int kept = 0;
    for (int i = 1; i < DDM_WEB_HISTORY_MAX_VIEWS + 10; i++) {
        g_autofree char *vm = g_strdup_printf("vm-%d", i);
        JsonNode *x = ddm_web_history_json(h, vm, "r");
        kept += x != NULL;
        if (x != NULL)
            json_node_unref(x);
    }
    assert_int_equal(kept, DDM_WEB_HISTORY_MAX_VIEWS - 1); /* "wide" holds one place */
    ddm_web_history_free(h);
    ddm_views_free(views);
}

static gint64 fake_now_us;
static gint64 fake_clock(void)
{
    return fake_now_us;
}

static gboolean kept(DdmWebHistory *h, const char *vm, const char *name)
{
    JsonNode *x = ddm_web_history_json(h, vm, name); /* counts as a look */
    if (x != NULL)
        json_node_unref(x);
    return x != NULL;
}

/* One VM cannot take every place; when all are taken, a new VM's record
 * replaces the least recently viewed one, once nobody looked at it for
 * DDM_WEB_HISTORY_KEEP_S. */
static void test_per_vm_and_eviction(void **state)
{
    (void)state;
    DdmViews *views = ddm_views_new();
    DdmWebHistory *h = ddm_web_history_new(views);
    fake_now_us = 1000 * G_USEC_PER_SEC;
    ddm_web_history_set_clock(h, fake_clock);
    for (int i = 0; i < DDM_WEB_HISTORY_MAX_PER_VM + 4; i++) {
        g_autofree char *name = g_strdup_printf("r%02d", i);
        commit_record(ddm_views_create(views, "p", "busy", name, DDM_VIEW_RECORD, NULL), 1, i);
    }
    int n_busy = 0;
    for (int i = 0; i < DDM_WEB_HISTORY_MAX_PER_VM + 4; i++) {
        g_autofree char *name = g_strdup_printf("r%02d", i);
        n_busy += kept(h, "busy", name);
    }
    assert_int_equal(n_busy, DDM_WEB_HISTORY_MAX_PER_VM);

    /* Fill every place: the rest with one record per VM. */
    int vms = DDM_WEB_HISTORY_MAX_VIEWS - DDM_WEB_HISTORY_MAX_PER_VM;
    for (int i = 0; i < vms; i++) {
        g_autofree char *vm = g_strdup_printf("vm-%d", i);
        commit_record(ddm_views_create(views, "p", vm, "r", DDM_VIEW_RECORD, NULL), 1, i);
    }
    ddm_view *late = ddm_views_create(views, "p", "late", "r", DDM_VIEW_RECORD, NULL);
    commit_record(late, 1, 1);
    assert_false(kept(h, "late", "r")); /* all looked at (created) just now */

    /* A second later every record is looked at but the busy VM's r05.
     * When r05 has been unwatched for the keep time (the others a second
     * less), the late VM's next sample takes its place, and only its. */
    gint64 t0 = fake_now_us;
    fake_now_us += G_USEC_PER_SEC;
    for (int i = 0; i < DDM_WEB_HISTORY_MAX_PER_VM; i++) {
        g_autofree char *name = g_strdup_printf("r%02d", i);
        if (i != 5)
            assert_true(kept(h, "busy", name));
    }
    for (int i = 0; i < vms; i++) {
        g_autofree char *vm = g_strdup_printf("vm-%d", i);
        assert_true(kept(h, vm, "r"));
    }
    fake_now_us = t0 + DDM_WEB_HISTORY_KEEP_S * G_USEC_PER_SEC;
    commit_record(late, 1, 2);
    ddm_view *late2 = ddm_views_create(views, "p", "late2", "r", DDM_VIEW_RECORD, NULL);
    commit_record(late2, 1, 2);
    assert_true(kept(h, "late", "r"));
    assert_false(kept(h, "busy", "r05"));
    assert_false(kept(h, "late2", "r")); /* the others were looked at 299 s ago */
    assert_true(kept(h, "busy", "r04"));
    assert_true(kept(h, "vm-0", "r"));
    /* A place made by a VM going is taken without eviction. */
    ddm_views_destroy_vm(views, "vm-1");
    ddm_view *later = ddm_views_create(views, "p", "later", "r", DDM_VIEW_RECORD, NULL);
    commit_record(later, 1, 3);
    assert_true(kept(h, "later", "r"));
    ddm_web_history_free(h);
    ddm_views_free(views);
}

/* view_json.c: a JSON-document blob over the stream's limit is known to be
 * too big from its size, before its JSON is built; other views are not. */
static void test_view_json_over(void **state)
{
    (void)state;
    DdmViews *views = ddm_views_new();
    ddm_view *doc = ddm_views_create(views, "p", "vm1", "doc", DDM_VIEW_BLOB, NULL);
    ddm_view *png = ddm_views_create(views, "p", "vm1", "png", DDM_VIEW_BLOB, NULL);
    ddm_view *rec = ddm_views_create(views, "p", "vm1", "rec", DDM_VIEW_RECORD, NULL);
    assert_false(ddm_web_view_json_over(doc, 10)); /* nothing committed */
    static const char small[] = "{\"a\":[1,2,3]}";
    assert_int_equal(ddm_view_begin(doc), 0);
    assert_int_equal(ddm_view_blob(doc, "application/json", small, sizeof small - 1), 0);
    assert_int_equal(ddm_view_commit(doc), 0);
    assert_false(ddm_web_view_json_over(doc, 1024));
    assert_true(ddm_web_view_json_over(doc, sizeof small - 2));
    g_autofree char *big = g_malloc(2 * 1024 * 1024);
    memset(big, ' ', 2 * 1024 * 1024);
    big[0] = '[';
    big[2 * 1024 * 1024 - 1] = ']';
    assert_int_equal(ddm_view_begin(doc), 0);
    assert_int_equal(ddm_view_blob(doc, "application/json", big, 2 * 1024 * 1024), 0);
    assert_int_equal(ddm_view_commit(doc), 0);
    assert_true(ddm_web_view_json_over(doc, 1024 * 1024));
    /* Not JSON: only a data_url, whatever its size. */
    assert_int_equal(ddm_view_begin(png), 0);
    assert_int_equal(ddm_view_blob(png, "image/png", big, 2 * 1024 * 1024), 0);
    assert_int_equal(ddm_view_commit(png), 0);
    assert_false(ddm_web_view_json_over(png, 1024 * 1024));
    assert_int_equal(ddm_view_begin(rec), 0);
    assert_int_equal(ddm_view_field_str(rec, "k", "v"), 0);
    assert_int_equal(ddm_view_commit(rec), 0);
    assert_false(ddm_web_view_json_over(rec, 0));
    ddm_views_free(views);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_samples),
        cmocka_unit_test(test_caps),
        cmocka_unit_test(test_view_json_over),
        cmocka_unit_test(test_per_vm_and_eviction),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
